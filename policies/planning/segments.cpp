#include "policies/planning/segments.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "policies/planning/kernel_plan.h"
#include "policies/planning/lagrangian.h"
#include "policies/planning/solver.h"

namespace dvfsim::plan {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// The DP's bisection on lambda: each step is a full DP, so fewer and coarser
// steps than the knapsack's (40 halvings, relative width 1e-9).
constexpr int kBisectionSteps = 24;
constexpr double kBisectionTolerance = 1e-5;
// After this many steps a memory mode whose dual bound is already above the
// best plan's modelled energy is dropped (kPruneTolerance: relative slack).
constexpr int kPruneSteps = 8;
constexpr double kPruneTolerance = 1e-4;
// Table rebuilds with the caps of the best plan so far (plan_segments).
constexpr int kSegmentCapRounds = 3;

struct DpResult {
  std::vector<std::int32_t> pair_of_pos;  // grid index
  double time = 0, energy = 0;            // kernels + stalls (no gaps)
  double lagr = 0;
  std::int64_t segments = 0;
};

// The DP over positions 0..n with candidate pairs cand. Everything that does
// not depend on lambda (per-candidate prefix sums of time, energy and time
// with gaps, and for every segment end b the earliest start a segment of at
// least lmin may have) is computed once in prepare(); run(lambda) only does
// the recurrence, on buffers kept between calls.
struct Dp {
  const Tables* tb = nullptr;
  std::vector<std::int32_t> cand;  // grid indices
  std::vector<double> gap;         // per position
  double lmin_ns = 0;
  StallCharge stall;
  const Device* dev = nullptr;

  // Position-major ((n + 1) x P): prefix sums of energy, time, time + gaps.
  std::vector<double> SE, ST;
  // lim[b * P + j]: the number of starts a < b with D[b] - D[a] >= lmin.
  std::vector<std::int32_t> lim;
  std::vector<std::int32_t> mem_of, core_of;  // per candidate
  mutable std::vector<double> f, g, M, bm, bc;
  mutable std::vector<std::int32_t> arg_a, arg_q, argM, am, ac;
  mutable std::vector<std::size_t> ptr;

  void prepare() {
    const std::size_t n = gap.size(), P = cand.size();
    const Tables& t = *tb;
    SE.assign((n + 1) * P, 0.0);
    ST.assign((n + 1) * P, 0.0);
    lim.assign((n + 1) * P, 0);
    std::vector<double> D((n + 1) * P, 0.0);
    for (std::size_t j = 0; j < P; ++j) {
      const auto p = static_cast<std::size_t>(cand[j]);
      double se = 0, st = 0, d = 0;
      for (std::size_t k = 0; k < n; ++k) {
        se += t.e(k, p);
        st += t.t(k, p);
        d += t.t(k, p) + gap[k];
        SE[(k + 1) * P + j] = se;
        ST[(k + 1) * P + j] = st;
        D[(k + 1) * P + j] = d;
      }
      std::size_t a = 0;
      for (std::size_t b = 1; b <= n; ++b) {
        while (a < b && D[b * P + j] - D[a * P + j] >= lmin_ns) ++a;
        lim[b * P + j] = static_cast<std::int32_t>(a);
      }
    }
    mem_of.resize(P);
    core_of.resize(P);
    for (std::size_t j = 0; j < P; ++j) {
      const Clocks& c = t.grid.pairs[static_cast<std::size_t>(cand[j])];
      mem_of[j] = c.memory_idx;
      core_of[j] = c.core_idx;
    }
    f.assign((n + 1) * P, kInf);
    g.assign((n + 1) * P, kInf);
    arg_a.assign((n + 1) * P, 0);
    arg_q.assign((n + 1) * P, -1);
    bm.assign(dev->memory_clocks_mhz.size(), kInf);
    bc.assign(dev->core_clocks_mhz.size(), kInf);
    am.assign(bm.size(), 0);
    ac.assign(bc.size(), 0);
  }

  DpResult run(double lambda) const {
    const std::size_t n = gap.size(), P = cand.size();
    const Tables& t = *tb;
    auto S = [&](std::size_t b, std::size_t j) { return SE[b * P + j] + lambda * ST[b * P + j]; };
    const double sw_mem = lambda * stall.time_ns(1) + stall.energy_j(1);
    const double sw_core = 1e-12;  // prefer fewer switches on ties
    M.assign(P, kInf);
    argM.assign(P, 0);
    ptr.assign(P, 0);
    for (std::size_t j = 0; j < P; ++j) g[j] = 0;  // start: no previous segment
    for (std::size_t b = 1; b <= n; ++b) {
      const std::int32_t* lb = &lim[b * P];
      for (std::size_t j = 0; j < P; ++j) {
        const auto l = static_cast<std::size_t>(lb[j]);
        while (ptr[j] < l) {
          const std::size_t a = ptr[j]++;
          const double v = g[a * P + j] - S(a, j);
          if (v < M[j]) {
            M[j] = v;
            argM[j] = static_cast<std::int32_t>(a);
          }
        }
        double best = M[j];
        std::int32_t a = argM[j];
        if (b == n && g[j] - S(0, j) < best) {  // one segment for the whole iteration
          best = g[j] - S(0, j);
          a = 0;
        }
        f[b * P + j] = best < kInf ? best + S(b, j) : kInf;
        arg_a[b * P + j] = a;
      }
      if (b == n) break;
      // g[b][p] = min_q f[b][q] + switch(q, p).
      double A = kInf;
      std::int32_t aA = -1;
      std::fill(bm.begin(), bm.end(), kInf);
      std::fill(bc.begin(), bc.end(), kInf);
      const double* fb = &f[b * P];
      for (std::size_t j = 0; j < P; ++j) {
        const double v = fb[j];
        const auto mi = static_cast<std::size_t>(mem_of[j]);
        const auto ci = static_cast<std::size_t>(core_of[j]);
        if (v < A) {
          A = v;
          aA = static_cast<std::int32_t>(j);
        }
        if (v < bm[mi]) {
          bm[mi] = v;
          am[mi] = static_cast<std::int32_t>(j);
        }
        if (v < bc[ci]) {
          bc[ci] = v;
          ac[ci] = static_cast<std::int32_t>(j);
        }
      }
      for (std::size_t j = 0; j < P; ++j) {
        const auto mi = static_cast<std::size_t>(mem_of[j]);
        const auto ci = static_cast<std::size_t>(core_of[j]);
        double v = fb[j];
        std::int32_t q = static_cast<std::int32_t>(j);
        const double x1 = bm[mi] + sw_core;
        if (x1 < v) {
          v = x1;
          q = am[mi];
        }
        const double x2 = bc[ci] + sw_mem;
        if (x2 < v) {
          v = x2;
          q = ac[ci];
        }
        const double x3 = A + sw_core + sw_mem;
        if (x3 < v) {
          v = x3;
          q = aA;
        }
        g[b * P + j] = v;
        arg_q[b * P + j] = q;
      }
    }
    DpResult r;
    r.pair_of_pos.assign(n, cand.empty() ? 0 : cand[0]);
    std::size_t bj = 0;
    for (std::size_t j = 1; j < P; ++j)
      if (f[n * P + j] < f[n * P + bj]) bj = j;
    r.lagr = f[n * P + bj];
    std::size_t b = n, j = bj;
    while (b > 0) {
      const auto a = static_cast<std::size_t>(arg_a[b * P + j]);
      for (std::size_t k = a; k < b; ++k) r.pair_of_pos[k] = cand[j];
      ++r.segments;
      if (a == 0) break;
      j = static_cast<std::size_t>(arg_q[a * P + j]);
      b = a;
    }
    std::int64_t mem_sw = 0;
    for (std::size_t k = 0; k < n; ++k) {
      const auto p = static_cast<std::size_t>(r.pair_of_pos[k]);
      r.time += t.t(k, p);
      r.energy += t.e(k, p);
      if (k > 0 && t.grid.pairs[p].memory_mhz !=
                       t.grid.pairs[static_cast<std::size_t>(r.pair_of_pos[k - 1])].memory_mhz)
        ++mem_sw;
    }
    r.time += stall.time_ns(mem_sw);
    r.energy += stall.energy_j(mem_sw);
    return r;
  }
};

}  // namespace

SegmentPlan plan_segments(const SegmentPlanInput& in, const Emulation& em0) {
  const Device& d = *in.gpu.device;
  const std::size_t n = in.kernels.size();
  const std::vector<ItemSpec>& items = in.kernels;
  const EmulationStart& start = in.start;
  const double budget = in.budget_ns;
  const Clocks def = make_clocks(d, d.default_core_mhz, d.default_memory_mhz);
  double gaps = 0;
  for (std::size_t i = 0; i + 1 < n; ++i) gaps += items[i].gap_ns;
  const double lc = in.core_lmin_ns, lm = in.memory_lmin_ns;

  std::vector<Clocks> best_pairs(n, def);
  Emulation best_em = em0;
  double best_score = in.objective.score(em0.energy_j, em0.time_ns);
  SolveReport rep;
  bool have = false;
  int rounds = 0;
  // Cap rounds: the tables are built with the cap each kernel met in the best
  // plan so far (at first: at the default clocks); a plan that lowers clocks
  // elsewhere raises the cap for the GEMMs, so the next round may do better.
  // Rounds stop when the best plan's caps are those its tables had.
  std::vector<ItemSpec> capped = items;
  std::string best_mode;
  double best_dp_energy = kInf;
  int pruned = 0;
  for (int cap_round = 0; cap_round < kSegmentCapRounds; ++cap_round) {
    const Tables tb =
        build_tables(d, *in.gpu.latency, *in.gpu.power, capped, default_table_options(d));
    // Modes: memory held at each clock (core switches only), or free.
    struct Mode {
      std::string name;
      std::vector<char> mask;
      double lmin, stall;
    };
    // The mode likeliest to win first, so that the others are pruned by its
    // plan: the memory clock switched, then held at the default clock, then
    // held at each other clock.
    std::vector<Mode> modes;
    if (memory_clock_count(tb.grid) > 1)
      modes.push_back({"memory switched", std::vector<char>(tb.pairs, 1), std::max(lc, lm),
                       in.memory_stall_ns});
    for (MemoryMask& mm : memory_masks(tb.grid))
      modes.push_back(
          {fmt::format("memory held at {} MHz", mm.memory_mhz), std::move(mm.allowed), lc, 0.0});
    std::stable_partition(modes.begin(), modes.end(), [&](const Mode& m) {
      return m.name == "memory switched" ||
             m.name == fmt::format("memory held at {} MHz", def.memory_mhz);
    });

    const bool had = have;
    const std::vector<Clocks> before = best_pairs;
    for (const Mode& mode : modes) {
      // After the first round only the mode of the best plan is solved again.
      if (cap_round > 0 && mode.name != best_mode) continue;
      Dp dp;
      dp.tb = &tb;
      dp.dev = &d;
      dp.lmin_ns = mode.lmin;
      dp.stall = {mode.stall, idle_power_w(*in.gpu.power, def)};
      dp.gap.resize(n);
      for (std::size_t i = 0; i < n; ++i) dp.gap[i] = items[i].gap_ns;
      // Candidates: the pairs most often on the positions' hulls.
      const Hulls h = lower_hulls(tb, &mode.mask);
      std::vector<std::int64_t> freq(tb.pairs, 0);
      for (auto p : h.pair) ++freq[static_cast<std::size_t>(p)];
      std::vector<std::int32_t> order;
      for (std::size_t p = 0; p < tb.pairs; ++p)
        if (freq[p] > 0) order.push_back(static_cast<std::int32_t>(p));
      std::stable_sort(order.begin(), order.end(), [&](std::int32_t a, std::int32_t b) {
        return freq[static_cast<std::size_t>(a)] > freq[static_cast<std::size_t>(b)];
      });
      if (order.size() > static_cast<std::size_t>(in.max_candidates))
        order.resize(static_cast<std::size_t>(in.max_candidates));
      const int dpi = tb.grid.find(def.core_mhz, def.memory_mhz);
      if (dpi >= 0 && mode.mask[static_cast<std::size_t>(dpi)] &&
          std::find(order.begin(), order.end(), dpi) == order.end())
        order.push_back(dpi);
      for (const Clocks& c : in.extra_candidates) {
        const int x = tb.grid.find(c.core_mhz, c.memory_mhz);
        if (x >= 0 && mode.mask[static_cast<std::size_t>(x)] &&
            std::find(order.begin(), order.end(), x) == order.end())
          order.push_back(x);
      }
      if (order.empty()) continue;
      dp.cand = order;
      dp.prepare();

      double tighten = in.extra_tighten_ns;
      for (int round = 0; round < kTighteningRounds; ++round) {
        ++rounds;
        DpResult sol;
        double dual = -kInf, lam = 0;
        int iters = 0;
        if (in.objective.kind == ObjectiveKind::waste) {
          const double kb = budget - gaps - tighten;
          DpResult lo = dp.run(0.0);
          if (lo.time <= kb) {
            sol = lo;
            dual = lo.energy;
          } else {
            double hi = 1e-6;
            DpResult hr = dp.run(hi);
            while (hr.time > kb && hi < 1e3) {
              hi *= 4;
              hr = dp.run(hi);
            }
            double l = 0;
            dual = std::max(lo.lagr, hr.lagr - hi * kb);
            auto eval = [&](double lambda) { return dp.run(lambda); };
            auto feasible_at = [&](const DpResult& r) { hr = r; };
            iters = bisect_multiplier(l, hi, kb, dual, kPruneSteps, kBisectionTolerance, eval,
                                      feasible_at);
            // No plan of this mode can use less (modelled) energy than the
            // dual bound: a mode whose bound is above the best plan's
            // energy so far is not solved further.
            if (have && dual > best_dp_energy * (1 + kPruneTolerance)) {
              ++pruned;
              break;
            }
            iters += bisect_multiplier(l, hi, kb, dual, kBisectionSteps - iters,
                                       kBisectionTolerance, eval, feasible_at);
            sol = hr;
            lam = hi;
          }
        } else {
          // energy / edp / ed2p: scan lambda, keep the best score.
          double bs = kInf;
          for (double l = 0; l < 1e3; l = l == 0 ? 1e-9 : l * 2) {
            const DpResult r = dp.run(l);
            const double sc = in.objective.score(r.energy, r.time + gaps);
            if (sc < bs) {
              bs = sc;
              sol = r;
              lam = l;
            }
            if (in.objective.kind == ObjectiveKind::energy) break;
            ++iters;
          }
          dual = sol.energy;
        }
        std::vector<Clocks> pairs(n);
        for (std::size_t i = 0; i < n; ++i)
          pairs[i] = tb.grid.pairs[static_cast<std::size_t>(sol.pair_of_pos[i])];
        const Emulation em = emulate(in.gpu, items, pairs, start);
        const bool feasible = !(em.time_ns > budget);
        const double score = in.objective.score(em.energy_j, em.time_ns);
        if (feasible && score < best_score) {
          best_score = score;
          best_pairs = pairs;
          best_em = em;
          have = true;
          best_mode = mode.name;
          best_dp_energy = sol.energy;
          rep.what = fmt::format(
              "segment DP ({}, {}, L_min {:.3f} ms, {} candidate pairs, {} segments per iteration, "
              "lambda {:.3g} J/ns after {} steps)",
              mode.name, to_string(in.objective.kind), mode.lmin * 1e-6, dp.cand.size(),
              sol.segments, lam, iters);
          rep.pairs = dp.cand.size();
          rep.energy_j = sol.energy;
          rep.dual_bound_j = std::min(dual, sol.energy);
          rep.gap_j = sol.energy - rep.dual_bound_j;
          rep.gap_pct = sol.energy > 0 ? 100.0 * rep.gap_j / sol.energy : 0.0;
        }
        if (feasible || !in.objective.time_bounded()) break;
        tighten += tightening_ns(em.time_ns - budget, budget);
      }
    }
    if (!have || (had && best_pairs == before)) break;
    bool same = true;
    for (std::size_t i = 0; i < n; ++i) {
      same = same && capped[i].max_core_mhz == best_em.cap_mhz[i];
      capped[i].max_core_mhz = best_em.cap_mhz[i];
    }
    if (same) break;
  }
  SegmentPlan out;
  rep.what = in.what + rep.what;
  if (!have) rep.what = in.what + "segment DP: no plan met the budget; kept the default clocks";
  rep.what +=
      fmt::format("; emulated {:.3f} ms, {:.4f} J vs default clocks {:.3f} ms, {:.4f} J",
                  best_em.time_ns * 1e-6, best_em.energy_j, em0.time_ns * 1e-6, em0.energy_j);
  if (pruned > 0) rep.what += fmt::format("; {} memory modes pruned by their dual bound", pruned);
  rep.items = n;
  rep.copies = n;
  rep.budget_ns = budget;
  rep.time_ns = best_em.time_ns;
  rep.feasible = true;
  rep.rounds = rounds;
  out.pairs = std::move(best_pairs);
  out.emulation = std::move(best_em);
  out.have = have;
  out.report = std::move(rep);
  return out;
}

}  // namespace dvfsim::plan
