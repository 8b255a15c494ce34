// `latency-aware`: groups consecutive kernels into segments that amortise the
// clock-switch latency and picks one pair per segment by dynamic programming
// under the time budget. Online: like kernel-predictive it learns the kernel
// sequence in a profiling iteration at default clocks (observing only launched
// kernels and measured durations), plans once when the next iteration starts,
// and applies the plan to every later iteration, issuing each switch early by
// the expected latency.
//
// The DP (per iteration, positions 0..n): f[b][p] = least cost E + lambda T of
// the kernels before b with a segment of pair p ending at b. A segment must
// last at least L_min (so that the request for the next segment, issued
// L_min before it, comes after this one landed): L_min = the expected core
// switch latency when the memory clock is held (one DP per memory clock), or
// the larger of core and memory latencies when the memory clock may change
// (then every memory change also costs the GPU stall in time and idle
// energy). Bisection on lambda meets the budget (the Lagrangian dual bound is
// reported), the plan is emulated through the firmware and tightened if it
// misses. L -> 0 gives a per-kernel plan; large L gives a few long segments,
// like per-pass clocks.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include "policies/objective.h"
#include "policies/online/learn_then_follow.h"
#include "policies/planning/emulation.h"
#include "policies/planning/kernel_plan.h"
#include "policies/planning/lagrangian.h"
#include "policies/planning/report.h"
#include "policies/planning/solver.h"
#include "policies/registry.h"
#include "sim/error.h"

namespace dvfsim {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// The DP's bisection on lambda: each step is a full DP, so fewer and coarser
// steps than the knapsack's (40 halvings, relative width 1e-9).
constexpr int kBisectionSteps = 40;
constexpr double kBisectionTolerance = 1e-9;

struct DpResult {
  std::vector<std::int32_t> pair_of_pos;  // grid index
  double time = 0, energy = 0;            // kernels + stalls (no gaps)
  double lagr = 0;
  std::int64_t segments = 0;
};

struct Dp {
  const plan::Tables* tb = nullptr;
  std::vector<std::int32_t> cand;  // grid indices
  std::vector<double> gap;         // per position
  double lmin_ns = 0;
  plan::StallCharge stall;
  const Device* dev = nullptr;

  DpResult run(double lambda) const {
    const std::size_t n = gap.size(), P = cand.size();
    const plan::Tables& t = *tb;
    // Prefix sums per candidate.
    std::vector<double> S((n + 1) * P), D((n + 1) * P);
    for (std::size_t j = 0; j < P; ++j) {
      const auto p = static_cast<std::size_t>(cand[j]);
      double s = 0, d = 0;
      S[j] = D[j] = 0;
      for (std::size_t k = 0; k < n; ++k) {
        s += t.e(k, p) + lambda * t.t(k, p);
        d += t.t(k, p) + gap[k];
        S[(k + 1) * P + j] = s;
        D[(k + 1) * P + j] = d;
      }
    }
    const double sw_mem = lambda * stall.time_ns(1) + stall.energy_j(1);
    const double sw_core = 1e-12;  // prefer fewer switches on ties
    std::vector<double> f((n + 1) * P, kInf), g((n + 1) * P, kInf);
    std::vector<std::int32_t> arg_a((n + 1) * P, 0), arg_q((n + 1) * P, -1);
    std::vector<double> M(P, kInf);
    std::vector<std::int32_t> argM(P, 0);
    std::vector<std::size_t> ptr(P, 0);
    for (std::size_t j = 0; j < P; ++j) g[j] = 0;  // start: no previous segment
    const std::size_t nm = dev->memory_clocks_mhz.size(), nc = dev->core_clocks_mhz.size();
    std::vector<double> bm(nm), bc(nc);
    std::vector<std::int32_t> am(nm), ac(nc);
    for (std::size_t b = 1; b <= n; ++b) {
      for (std::size_t j = 0; j < P; ++j) {
        while (ptr[j] < b && D[b * P + j] - D[ptr[j] * P + j] >= lmin_ns) {
          const double v = g[ptr[j] * P + j] - S[ptr[j] * P + j];
          if (v < M[j]) {
            M[j] = v;
            argM[j] = static_cast<std::int32_t>(ptr[j]);
          }
          ++ptr[j];
        }
        double best = M[j];
        std::int32_t a = argM[j];
        if (b == n && g[j] - S[j] < best) {  // one segment for the whole iteration
          best = g[j] - S[j];
          a = 0;
        }
        if (best < kInf) {
          f[b * P + j] = best + S[b * P + j];
          arg_a[b * P + j] = a;
        }
      }
      if (b == n) break;
      // g[b][p] = min_q f[b][q] + switch(q, p).
      double A = kInf;
      std::int32_t aA = -1;
      std::fill(bm.begin(), bm.end(), kInf);
      std::fill(bc.begin(), bc.end(), kInf);
      for (std::size_t j = 0; j < P; ++j) {
        const double v = f[b * P + j];
        const Clocks& c = t.grid.pairs[static_cast<std::size_t>(cand[j])];
        if (v < A) {
          A = v;
          aA = static_cast<std::int32_t>(j);
        }
        if (v < bm[static_cast<std::size_t>(c.memory_idx)]) {
          bm[static_cast<std::size_t>(c.memory_idx)] = v;
          am[static_cast<std::size_t>(c.memory_idx)] = static_cast<std::int32_t>(j);
        }
        if (v < bc[static_cast<std::size_t>(c.core_idx)]) {
          bc[static_cast<std::size_t>(c.core_idx)] = v;
          ac[static_cast<std::size_t>(c.core_idx)] = static_cast<std::int32_t>(j);
        }
      }
      for (std::size_t j = 0; j < P; ++j) {
        const Clocks& c = t.grid.pairs[static_cast<std::size_t>(cand[j])];
        double v = f[b * P + j];
        std::int32_t q = static_cast<std::int32_t>(j);
        const double x1 = bm[static_cast<std::size_t>(c.memory_idx)] + sw_core;
        if (x1 < v) {
          v = x1;
          q = am[static_cast<std::size_t>(c.memory_idx)];
        }
        const double x2 = bc[static_cast<std::size_t>(c.core_idx)] + sw_mem;
        if (x2 < v) {
          v = x2;
          q = ac[static_cast<std::size_t>(c.core_idx)];
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

class LatencyAware final : public plan::LearnThenFollow {
 public:
  explicit LatencyAware(const Params& p)
      : objective_(parse_objective(p, "latency-aware")),
        max_candidates_(std::max(2, p.integer("candidates"))),
        margin_pct_(p.number("margin_pct")) {
    if (margin_pct_ < 0 || margin_pct_ >= 100)
      throw InputError(
          fmt::format("policy latency-aware: margin_pct={} must be in [0, 100)", margin_pct_));
  }

 private:
  void make_plan(PolicyContext& ctx) override {
    const auto started = std::chrono::steady_clock::now();
    const auto& seq = learner_.sequence();
    const Device& d = ctx.device();
    const std::size_t n = seq.size();
    std::vector<plan::ItemSpec> items = plan::items_from(seq);
    plan::EmulationStart start;
    start.cap_mhz = std::min(ctx.effective().core_mhz, d.max_core_mhz());
    start.from = ctx.effective();
    start.stall_ns = ctx.expected_memory_stall_ns();
    const Clocks def = make_clocks(d, d.default_core_mhz, d.default_memory_mhz);
    const plan::Emulation em0 =
        plan::emulate(plan::gpu_model(ctx), items, std::vector<Clocks>(n, def), start);
    // Switches whose latency is random land a random moment early or late:
    // hold back margin_pct of the budget for that (none when the latency is
    // fixed, e.g. --set switch_latency_us, or zero).
    const bool random_latency =
        ctx.core_switch_quantile_ns(0.9) > ctx.expected_core_switch_ns() * (1 + 1e-9) ||
        ctx.memory_switch_quantile_ns(0.9) > ctx.expected_memory_switch_ns() * (1 + 1e-9);
    const double budget =
        objective_.budget(em0.time_ns) - (random_latency ? margin_pct_ * 1e-2 * em0.time_ns : 0.0);
    double gaps = 0;
    for (std::size_t i = 0; i + 1 < n; ++i) gaps += items[i].gap_ns;
    for (std::size_t i = 0; i < n; ++i) items[i].max_core_mhz = em0.cap_mhz[i];
    const plan::Tables tb =
        plan::build_tables(d, ctx.latency(), ctx.power(), items, plan::default_table_options(d));
    // Segments must outlast the switch that starts them with a margin: plan
    // with the latency 90 % of switches land within, not the mean.
    const double lc = ctx.core_switch_quantile_ns(0.9), lm = ctx.memory_switch_quantile_ns(0.9);

    // Modes: memory held at each clock (core switches only), or free.
    struct Mode {
      std::string name;
      std::vector<char> mask;
      double lmin, stall;
    };
    std::vector<Mode> modes;
    for (plan::MemoryMask& mm : plan::memory_masks(tb.grid))
      modes.push_back(
          {fmt::format("memory held at {} MHz", mm.memory_mhz), std::move(mm.allowed), lc, 0.0});
    if (plan::memory_clock_count(tb.grid) > 1)
      modes.push_back({"memory switched", std::vector<char>(tb.pairs, 1), std::max(lc, lm),
                       ctx.expected_memory_stall_ns()});

    std::vector<Clocks> best_pairs(n, def);
    plan::Emulation best_em = em0;
    double best_score = objective_.score(em0.energy_j, em0.time_ns);
    plan::SolveReport rep;
    bool have = false;
    int rounds = 0;
    for (const Mode& mode : modes) {
      Dp dp;
      dp.tb = &tb;
      dp.dev = &d;
      dp.lmin_ns = mode.lmin;
      dp.stall = {mode.stall, plan::idle_power_w(ctx.power(), def)};
      dp.gap.resize(n);
      for (std::size_t i = 0; i < n; ++i) dp.gap[i] = items[i].gap_ns;
      // Candidates: the pairs most often on the positions' hulls.
      const plan::Hulls h = plan::lower_hulls(tb, &mode.mask);
      std::vector<std::int64_t> freq(tb.pairs, 0);
      for (auto p : h.pair) ++freq[static_cast<std::size_t>(p)];
      std::vector<std::int32_t> order;
      for (std::size_t p = 0; p < tb.pairs; ++p)
        if (freq[p] > 0) order.push_back(static_cast<std::int32_t>(p));
      std::stable_sort(order.begin(), order.end(), [&](std::int32_t a, std::int32_t b) {
        return freq[static_cast<std::size_t>(a)] > freq[static_cast<std::size_t>(b)];
      });
      if (order.size() > static_cast<std::size_t>(max_candidates_))
        order.resize(static_cast<std::size_t>(max_candidates_));
      const int dpi = tb.grid.find(def.core_mhz, def.memory_mhz);
      if (dpi >= 0 && mode.mask[static_cast<std::size_t>(dpi)] &&
          std::find(order.begin(), order.end(), dpi) == order.end())
        order.push_back(dpi);
      if (order.empty()) continue;
      dp.cand = order;

      double tighten = 0;
      for (int round = 0; round < plan::kTighteningRounds; ++round) {
        ++rounds;
        DpResult sol;
        double dual = -kInf, lam = 0;
        int iters = 0;
        if (objective_.kind == ObjectiveKind::waste) {
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
            iters = plan::bisect_multiplier(
                l, hi, kb, dual, kBisectionSteps, kBisectionTolerance,
                [&](double lambda) { return dp.run(lambda); }, [&](const DpResult& r) { hr = r; });
            sol = hr;
            lam = hi;
          }
        } else {
          // energy / edp / ed2p: scan lambda, keep the best score.
          double bs = kInf;
          for (double l = 0; l < 1e3; l = l == 0 ? 1e-9 : l * 2) {
            const DpResult r = dp.run(l);
            const double sc = objective_.score(r.energy, r.time + gaps);
            if (sc < bs) {
              bs = sc;
              sol = r;
              lam = l;
            }
            if (objective_.kind == ObjectiveKind::energy) break;
            ++iters;
          }
          dual = sol.energy;
        }
        std::vector<Clocks> pairs(n);
        for (std::size_t i = 0; i < n; ++i)
          pairs[i] = tb.grid.pairs[static_cast<std::size_t>(sol.pair_of_pos[i])];
        const plan::Emulation em = plan::emulate(plan::gpu_model(ctx), items, pairs, start);
        const bool feasible = !(em.time_ns > budget);
        const double score = objective_.score(em.energy_j, em.time_ns);
        if (feasible && score < best_score) {
          best_score = score;
          best_pairs = pairs;
          best_em = em;
          have = true;
          rep.what = fmt::format(
              "segment DP ({}, {}, L_min {:.3f} ms, {} candidate pairs, {} segments per iteration, "
              "lambda {:.3g} J/ns after {} steps)",
              mode.name, to_string(objective_.kind), mode.lmin * 1e-6, dp.cand.size(), sol.segments,
              lam, iters);
          rep.pairs = dp.cand.size();
          rep.energy_j = sol.energy;
          rep.dual_bound_j = std::min(dual, sol.energy);
          rep.gap_j = sol.energy - rep.dual_bound_j;
          rep.gap_pct = sol.energy > 0 ? 100.0 * rep.gap_j / sol.energy : 0.0;
        }
        if (feasible || !objective_.time_bounded()) break;
        tighten += plan::tightening_ns(em.time_ns - budget, budget);
      }
    }
    rep.policy = "latency-aware";
    if (!have) rep.what = "segment DP: no plan met the budget; kept the default clocks";
    rep.what +=
        fmt::format("; emulated {:.3f} ms, {:.4f} J vs default clocks {:.3f} ms, {:.4f} J",
                    best_em.time_ns * 1e-6, best_em.energy_j, em0.time_ns * 1e-6, em0.energy_j);
    rep.items = n;
    rep.copies = n;
    rep.budget_ns = budget;
    rep.time_ns = best_em.time_ns;
    rep.feasible = true;
    rep.rounds = rounds;
    rep.solve_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started)
            .count();
    report(rep);
    std::vector<plan::Switcher::Step> steps(n);
    for (std::size_t i = 0; i < n; ++i) {
      steps[i].pair = best_pairs[i];
      steps[i].duration_ns = best_em.time_of_step[i];
      steps[i].gap_ns = seq[i].gap_after_ns;
    }
    switcher_.set_plan(std::move(steps), true);
  }

  Objective objective_;
  int max_candidates_;
  double margin_pct_;
};

std::vector<ParamSpec> params() {
  std::vector<ParamSpec> v = objective_params();
  v.push_back({"candidates", ParamSpec::Kind::defaulted, "32",
               "pairs the DP considers per memory mode: those most often on the kernels' "
               "time-energy hulls (plus the default pair)"});
  v.push_back({"margin_pct", ParamSpec::Kind::defaulted, "0.1",
               "percent of the time budget held back for switch-timing uncertainty when the "
               "switch latency is random (it lands early or late); none for a fixed latency"});
  return v;
}

const bool registered = register_policy({
    "latency-aware",
    "Online: learns the kernel sequence in a profiling iteration at default clocks, groups "
    "consecutive kernels into segments that amortise the switch latency (and memory-switch "
    "stall) and picks one pair per segment by dynamic programming under the time budget; "
    "switches issued early by the expected latency.",
    false,
    params(),
    [](const Params& p) { return std::make_unique<LatencyAware>(p); },
});

}  // namespace
}  // namespace dvfsim
