#include "policies/planning/segments.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <optional>

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
// Rounds of one memory mode (plan_segments): each re-solves with the caps the
// last round's plan met, and tightened after a plan that missed the budget.
constexpr int kSegmentRounds = 6;

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
  const Grid* grid = nullptr;
  std::vector<std::int32_t> cand;  // grid indices
  // Position-major (n x P): each kernel's time and energy at each candidate.
  std::vector<double> T, E;
  std::vector<double> gap;  // per position
  double lmin_ns = 0;
  StallCharge stall;

  // Position-major ((n + 1) x P): prefix sums of energy, time, time + gaps.
  std::vector<double> SE, ST;
  // lim[b * P + j]: the number of starts a < b with D[b] - D[a] >= lmin.
  std::vector<std::int32_t> lim;
  std::vector<std::int32_t> mem_of, core_of;  // per candidate
  // f: one row (position b's, then n's: only the last is kept). g: all rows,
  // each less the candidate's prefix cost there (g[a][p] - (SE[a][p] +
  // lambda ST[a][p]), what a segment starting at a is charged for its start:
  // computed once per (a, p), where its row of the prefix sums is read
  // anyway). cost_b: one row, position b's prefix cost.
  mutable std::vector<double> f, g, cost_b, M, bm, bc;
  mutable std::vector<std::int32_t> arg_a, arg_q, argM, am, ac;
  mutable std::vector<std::size_t> ptr;

  void prepare() {
    const std::size_t n = gap.size(), P = cand.size();
    SE.assign((n + 1) * P, 0.0);
    ST.assign((n + 1) * P, 0.0);
    lim.assign((n + 1) * P, 0);
    std::vector<double> D((n + 1) * P, 0.0);
    for (std::size_t j = 0; j < P; ++j) {
      double se = 0, st = 0, d = 0;
      for (std::size_t k = 0; k < n; ++k) {
        se += E[k * P + j];
        st += T[k * P + j];
        d += T[k * P + j] + gap[k];
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
    // The candidates' memory and core clocks numbered densely in order of
    // first appearance (a few of each, not the device's every clock), so that
    // each position's minima per clock reset only the clocks in use.
    mem_of.resize(P);
    core_of.resize(P);
    std::vector<std::int32_t> mems, cores;
    auto dense = [](std::vector<std::int32_t>& seen, std::int32_t v) {
      const auto it = std::find(seen.begin(), seen.end(), v);
      if (it != seen.end()) return static_cast<std::int32_t>(it - seen.begin());
      seen.push_back(v);
      return static_cast<std::int32_t>(seen.size() - 1);
    };
    for (std::size_t j = 0; j < P; ++j) {
      const Clocks& c = grid->pairs[static_cast<std::size_t>(cand[j])];
      mem_of[j] = dense(mems, c.memory_idx);
      core_of[j] = dense(cores, c.core_idx);
    }
    f.assign(P, kInf);
    cost_b.assign(P, 0.0);
    g.assign((n + 1) * P, kInf);
    arg_a.assign((n + 1) * P, 0);
    arg_q.assign((n + 1) * P, -1);
    bm.assign(mems.size(), kInf);
    bc.assign(cores.size(), kInf);
    am.assign(bm.size(), 0);
    ac.assign(bc.size(), 0);
  }

  // No plan run() returns takes less time than this (DpResult::time): the
  // least time of any sequence of candidates, one per position, with the
  // stall of every memory change between consecutive positions (the plans
  // run() may return are such sequences, its segment lengths a further
  // constraint this bound drops). Rounding: every time here and in run() is
  // a sum of at most 2n positive terms, within 2n x 2^-53 of its exact value
  // (relative), below 3e-10 for n up to a million; least_time() returns the
  // computed minimum less 1e-9 of it (0 for longer sequences).
  double least_time() const {
    const std::size_t n = gap.size(), P = cand.size();
    if (n > 1'000'000) return 0.0;
    const std::size_t mems = bm.size();
    std::vector<double> h(mems, 0.0), step(mems);
    for (std::size_t k = 0; k < n; ++k) {
      std::fill(step.begin(), step.end(), kInf);
      for (std::size_t j = 0; j < P; ++j) {
        const auto m = static_cast<std::size_t>(mem_of[j]);
        step[m] = std::min(step[m], T[k * P + j]);
      }
      double lo = kInf;
      for (const double v : h) lo = std::min(lo, v);
      const double sw = k > 0 ? lo + stall.time_ns(1) : lo;
      for (std::size_t m = 0; m < mems; ++m) h[m] = step[m] + std::min(h[m], sw);
    }
    double lo = kInf;
    for (const double v : h) lo = std::min(lo, v);
    return lo * (1 - 1e-9);
  }

  DpResult run(double lambda) const {
    const std::size_t n = gap.size(), P = cand.size();
    const double sw_mem = lambda * stall.time_ns(1) + stall.energy_j(1);
    const double sw_core = 1e-12;  // prefer fewer switches on ties
    M.assign(P, kInf);
    argM.assign(P, 0);
    ptr.assign(P, 0);
    // The arrays through local pointers: the members' stores would otherwise
    // make the compiler load every vector's data pointer again each step.
    const double* const se = SE.data();
    const double* const stt = ST.data();
    const std::int32_t* const limp = lim.data();
    const std::int32_t* const memp = mem_of.data();
    const std::int32_t* const corep = core_of.data();
    double* const fp = f.data();
    double* const gp = g.data();
    double* const cp = cost_b.data();
    double* const Mp = M.data();
    double* const bmp = bm.data();
    double* const bcp = bc.data();
    std::int32_t* const argMp = argM.data();
    std::int32_t* const aap = arg_a.data();
    std::int32_t* const aqp = arg_q.data();
    std::int32_t* const amp = am.data();
    std::int32_t* const acp = ac.data();
    std::size_t* const ptrp = ptr.data();
    const std::size_t nm = bm.size(), nc = bc.size();
    // Start: no previous segment (g 0).
    for (std::size_t j = 0; j < P; ++j) gp[j] = 0.0 - (se[j] + lambda * stt[j]);
    for (std::size_t b = 1; b <= n; ++b) {
      const std::int32_t* lb = limp + b * P;
      for (std::size_t j = 0; j < P; ++j) {
        const auto l = static_cast<std::size_t>(lb[j]);
        std::size_t pj = ptrp[j];
        double Mj = Mp[j];
        std::int32_t aj = argMp[j];
        for (; pj < l; ++pj) {
          const double v = gp[pj * P + j];
          if (v < Mj) {
            Mj = v;
            aj = static_cast<std::int32_t>(pj);
          }
        }
        ptrp[j] = pj;
        Mp[j] = Mj;
        argMp[j] = aj;
        double best = Mj;
        std::int32_t a = aj;
        if (b == n && gp[j] < best) {  // one segment for the whole iteration
          best = gp[j];
          a = 0;
        }
        const double cost = se[b * P + j] + lambda * stt[b * P + j];
        cp[j] = cost;
        fp[j] = best < kInf ? best + cost : kInf;
        aap[b * P + j] = a;
      }
      if (b == n) break;
      // g[b][p] = min_q f[b][q] + switch(q, p).
      double A = kInf;
      std::int32_t aA = -1;
      std::fill(bmp, bmp + nm, kInf);
      std::fill(bcp, bcp + nc, kInf);
      const double* fb = fp;
      for (std::size_t j = 0; j < P; ++j) {
        const double v = fb[j];
        const auto mi = static_cast<std::size_t>(memp[j]);
        const auto ci = static_cast<std::size_t>(corep[j]);
        if (v < A) {
          A = v;
          aA = static_cast<std::int32_t>(j);
        }
        if (v < bmp[mi]) {
          bmp[mi] = v;
          amp[mi] = static_cast<std::int32_t>(j);
        }
        if (v < bcp[ci]) {
          bcp[ci] = v;
          acp[ci] = static_cast<std::int32_t>(j);
        }
      }
      const double x3 = A + sw_core + sw_mem;
      double* gb = gp + b * P;
      std::int32_t* qb = aqp + b * P;
      for (std::size_t j = 0; j < P; ++j) {
        const auto mi = static_cast<std::size_t>(memp[j]);
        const auto ci = static_cast<std::size_t>(corep[j]);
        double v = fb[j];
        std::int32_t q = static_cast<std::int32_t>(j);
        const double x1 = bmp[mi] + sw_core;
        if (x1 < v) {
          v = x1;
          q = amp[mi];
        }
        const double x2 = bcp[ci] + sw_mem;
        if (x2 < v) {
          v = x2;
          q = acp[ci];
        }
        if (x3 < v) {
          v = x3;
          q = aA;
        }
        gb[j] = v - cp[j];
        qb[j] = q;
      }
    }
    DpResult r;
    r.pair_of_pos.assign(n, cand.empty() ? 0 : cand[0]);
    std::vector<std::size_t> j_of(n, 0);
    std::size_t bj = 0;
    for (std::size_t j = 1; j < P; ++j)
      if (f[j] < f[bj]) bj = j;
    r.lagr = f[bj];
    std::size_t b = n, j = bj;
    while (b > 0) {
      const auto a = static_cast<std::size_t>(arg_a[b * P + j]);
      for (std::size_t k = a; k < b; ++k) {
        r.pair_of_pos[k] = cand[j];
        j_of[k] = j;
      }
      ++r.segments;
      if (a == 0) break;
      j = static_cast<std::size_t>(arg_q[a * P + j]);
      b = a;
    }
    std::int64_t mem_sw = 0;
    for (std::size_t k = 0; k < n; ++k) {
      r.time += T[k * P + j_of[k]];
      r.energy += E[k * P + j_of[k]];
      if (k > 0 && mem_of[j_of[k]] != mem_of[j_of[k - 1]]) ++mem_sw;
    }
    r.time += stall.time_ns(mem_sw);
    r.energy += stall.energy_j(mem_sw);
    return r;
  }
};

// The DP's candidate pairs: those on the positions' lower hulls, weighted by
// the time of the positions they serve (so that a pair a few long GEMMs want
// is not crowded out by the many short kernels), the heaviest first; every
// memory clock on a hull keeps its heaviest few, so that a mode that may
// switch the memory clock has somewhere to switch to.
// `chains`: each position's hulls (row_hulls), of which mode `mode`'s.
std::vector<std::int32_t> candidate_pairs(const Grid& grid,
                                          const std::vector<const ModeChains*>& chains,
                                          std::size_t mode, int max_candidates) {
  const std::size_t pairs = grid.pairs.size();
  constexpr std::size_t kPerMemoryClock = 4;
  std::vector<double> weight(pairs, 0.0);
  for (const ModeChains* c : chains) {
    const std::vector<HullVertex>& hull = (*c)[mode];
    if (hull.empty()) continue;
    double t = kInf;
    for (const HullVertex& v : hull) t = std::min(t, v.t);
    for (const HullVertex& v : hull) weight[static_cast<std::size_t>(v.pair)] += t;
  }
  std::vector<std::int32_t> order;
  for (std::size_t p = 0; p < pairs; ++p)
    if (weight[p] > 0) order.push_back(static_cast<std::int32_t>(p));
  std::stable_sort(order.begin(), order.end(), [&](std::int32_t a, std::int32_t b) {
    return weight[static_cast<std::size_t>(a)] > weight[static_cast<std::size_t>(b)];
  });
  const auto cap = static_cast<std::size_t>(std::max(1, max_candidates));
  std::vector<std::int32_t> out;
  std::vector<char> taken(pairs, 0);
  std::map<std::int32_t, std::size_t> per_memory;
  for (std::int32_t p : order) {  // the heaviest few of every memory clock
    const std::int32_t m = grid.pairs[static_cast<std::size_t>(p)].memory_mhz;
    if (per_memory[m] < kPerMemoryClock) {
      ++per_memory[m];
      out.push_back(p);
      taken[static_cast<std::size_t>(p)] = 1;
    }
  }
  for (std::int32_t p : order) {
    if (out.size() >= cap) break;
    if (!taken[static_cast<std::size_t>(p)]) out.push_back(p);
  }
  return out;
}

// Each kernel's row at each memory clock, for the cap last looked up there:
// a round changes some kernels' caps only, so the rest keep their rows
// without a lookup (rows stay where the cache put them).
struct ColumnRows {
  std::vector<std::vector<std::int32_t>> cap;  // [memory clock][kernel]
  std::vector<std::vector<TableCache::Row>> row;
  bool have(std::size_t m, std::size_t i, std::int32_t c) const {
    return m < cap.size() && !cap[m].empty() && cap[m][i] == c && row[m][i].time_ns != nullptr;
  }
};

// The DP's columns: each kernel at each candidate, with the cap of the
// candidate's memory clock.
void load_columns(TableCache& cache, const std::vector<ItemSpec>& items,
                  const std::vector<std::vector<std::int32_t>>& caps,
                  const std::vector<std::size_t>& mem_of_pair, ColumnRows& rows, Dp& dp) {
  const std::size_t n = items.size(), P = dp.cand.size();
  dp.T.assign(n * P, 0.0);
  dp.E.assign(n * P, 0.0);
  std::vector<std::size_t> mems;  // the memory clocks of the candidates
  for (std::size_t j = 0; j < P; ++j) {
    const std::size_t m = mem_of_pair[static_cast<std::size_t>(dp.cand[j])];
    if (std::find(mems.begin(), mems.end(), m) == mems.end()) mems.push_back(m);
  }
  if (rows.cap.size() < caps.size()) {
    rows.cap.resize(caps.size());
    rows.row.resize(caps.size());
  }
  for (const std::size_t m : mems)
    if (rows.cap[m].empty()) {
      rows.cap[m].assign(n, 0);
      rows.row[m].assign(n, TableCache::Row{nullptr, nullptr, 0});
    }
  for (std::size_t i = 0; i < n; ++i) {
    for (const std::size_t m : mems) {
      if (!rows.have(m, i, caps[m][i])) {
        ItemSpec it = items[i];
        it.max_core_mhz = caps[m][i];
        rows.row[m][i] = cache.row(it);
        rows.cap[m][i] = caps[m][i];
      }
      const TableCache::Row& r = rows.row[m][i];
      for (std::size_t j = 0; j < P; ++j) {
        const auto q = static_cast<std::size_t>(dp.cand[j]);
        if (mem_of_pair[q] != m) continue;
        dp.T[i * P + j] = r.time_ns[q];
        dp.E[i * P + j] = r.energy_j[q];
      }
    }
  }
}
}  // namespace

namespace {

// plan_segments without the memo.
SegmentPlan compute_segments(const SegmentPlanInput& in, const Emulation& em0) {
  const Device& d = *in.gpu.device;
  const std::size_t n = in.kernels.size();
  const std::vector<ItemSpec>& items = in.kernels;
  const EmulationStart& start = in.start;
  const double budget = in.budget_ns;
  const Clocks def = default_clocks(d);
  double gaps = 0;
  for (std::size_t i = 0; i + 1 < n; ++i) gaps += items[i].gap_ns;
  const double lc = in.core_lmin_ns, lm = in.memory_lmin_ns;

  std::vector<Clocks> best_pairs(n, def);
  Emulation best_em = em0;
  double best_score = in.objective.score(em0.energy_j, em0.time_ns);
  SolveReport rep;
  bool have = false;
  int rounds = 0;
  double best_dp_energy = kInf;
  int pruned = 0;
  // Rows reused across modes and rounds: a round changes some kernels' caps.
  std::optional<PlanCache> own;
  PlanCache& pc = in.cache && in.cache->serves(in.gpu) ? *in.cache : own.emplace(in.gpu);
  TableCache& cache = pc.tables();
  const Grid& grid = cache.grid();
  // Modes: memory held at each clock (core switches only), or free.
  struct Mode {
    std::string name;
    std::vector<char> mask;
    double lmin, stall;
    std::size_t hulls;  // its index in row_hulls order
  };
  // The mode likeliest to win first, so that the others are pruned by its
  // plan: the memory clock switched, then held at the default clock, then
  // held at each other clock.
  std::vector<Mode> modes;
  if (memory_clock_count(grid) > 1)
    modes.push_back({"memory switched", std::vector<char>(grid.pairs.size(), 1), std::max(lc, lm),
                     in.memory_stall_ns, 0});
  std::size_t hull_index = 0;
  for (MemoryMask& mm : memory_masks(grid))
    modes.push_back({fmt::format("memory held at {} MHz", mm.memory_mhz), std::move(mm.allowed), lc,
                     0.0, ++hull_index});
  std::stable_partition(modes.begin(), modes.end(), [&](const Mode& m) {
    return m.name == "memory switched" ||
           m.name == fmt::format("memory held at {} MHz", def.memory_mhz);
  });

  // The firmware's cap depends on the memory clock (a lower memory clock
  // frees power for the core): each memory clock's columns of the tables take
  // the cap every kernel meets when the whole run is at that memory clock (and
  // the default core clock, or the highest below it the memory clock allows);
  // the default memory clock's are the caller's.
  const std::size_t mem_count = grid.mem_begin.size() - 1;
  std::vector<std::vector<std::int32_t>> caps0(mem_count);
  for (std::size_t m = 0; m < mem_count; ++m) {
    if (grid.mem_begin[m] == grid.mem_begin[m + 1]) continue;
    std::int32_t pick = -1;
    for (auto q = grid.mem_begin[m]; q < grid.mem_begin[m + 1]; ++q)
      if (grid.pairs[q].core_mhz <= def.core_mhz || pick < 0) pick = static_cast<std::int32_t>(q);
    const Clocks& c = grid.pairs[static_cast<std::size_t>(pick)];
    if (c.memory_mhz == def.memory_mhz) {
      caps0[m].resize(n);
      for (std::size_t i = 0; i < n; ++i) caps0[m][i] = items[i].max_core_mhz;
      continue;
    }
    EmulationStart st = start;
    st.warm_pair = c;
    st.from = c;
    caps0[m] = emulate(in.gpu, items, std::vector<Clocks>(n, c), st).cap_mhz;
  }
  std::vector<std::size_t> mem_of_pair(grid.pairs.size());
  for (std::size_t m = 0; m < mem_count; ++m)
    for (auto q = grid.mem_begin[m]; q < grid.mem_begin[m + 1]; ++q) mem_of_pair[q] = m;
  // The kernels' hulls in every mode, for the choice of candidates: one
  // chain set per distinct table row (at the caller's caps).
  ColumnRows column_rows;  // for every mode's rounds
  std::vector<const ModeChains*> item_chains(n);
  for (std::size_t i = 0; i < n; ++i) item_chains[i] = &pc.chains(cache.row(items[i]));

  for (const Mode& mode : modes) {
    // Rounds of one mode: the tables are built with the cap each kernel is
    // predicted to meet. The firmware's cap depends on the plan (a plan that
    // lowers the memory clock somewhere lifts the cap for its neighbours, one
    // that raises it lowers the cap), so every round's plan is emulated and
    // the next round's tables take its caps: all of them after a plan that
    // met the budget (until they repeat), the lower of the two after one that
    // missed it, which is also tightened by its overshoot (as plan_kernels).
    // Candidates: from the hulls of the first round's tables.
    std::vector<std::int32_t> order =
        candidate_pairs(grid, item_chains, mode.hulls, in.max_candidates);
    const int dpi = grid.find(def.core_mhz, def.memory_mhz);
    if (dpi >= 0 && mode.mask[static_cast<std::size_t>(dpi)] &&
        std::find(order.begin(), order.end(), dpi) == order.end())
      order.push_back(dpi);
    for (const Clocks& c : in.extra_candidates) {
      const int x = grid.find(c.core_mhz, c.memory_mhz);
      if (x >= 0 && mode.mask[static_cast<std::size_t>(x)] &&
          std::find(order.begin(), order.end(), x) == order.end())
        order.push_back(x);
    }
    if (order.empty()) continue;
    std::vector<std::vector<std::int32_t>> caps = caps0;
    double tighten = in.extra_tighten_ns;
    bool mode_pruned = false;
    // A round whose DP met its budget at no multiplier tried, and whose plan
    // missed the budget in emulation without lowering a cap, is repeated by
    // the next round: the same tables and a tighter budget, which every
    // multiplier tried misses too, so the next round's search tries the same
    // multipliers and returns the same plan, with the same emulation. Only
    // its dual bound (after kPruneSteps, for pruning) depends on the budget:
    // it is recomputed from the multipliers tried and their Lagrangians.
    struct Tried {
      double lambda, lagr;
    };
    bool repeats = false;
    double lo_lagr = 0, hi_lambda = 0, hi_lagr = 0, repeat_overshoot = 0;
    std::vector<Tried> tried;
    for (int round = 0; round < kSegmentRounds && !mode_pruned; ++round) {
      if (repeats) {
        ++rounds;
        if (have) {
          const double kb = budget - gaps - tighten;
          double dual = std::max(lo_lagr, hi_lagr - hi_lambda * kb);
          for (const Tried& t : tried) dual = std::max(dual, t.lagr - t.lambda * kb);
          if (dual > best_dp_energy * (1 + kPruneTolerance)) {
            ++pruned;
            mode_pruned = true;
            break;
          }
        }
        tighten += tightening_ns(repeat_overshoot, budget);
        continue;
      }
      Dp dp;
      dp.grid = &grid;
      dp.lmin_ns = mode.lmin;
      dp.stall = {mode.stall, idle_power_w(*in.gpu.power, def)};
      dp.gap.resize(n);
      for (std::size_t i = 0; i < n; ++i) dp.gap[i] = items[i].gap_ns;
      dp.cand = order;
      load_columns(cache, items, caps, mem_of_pair, column_rows, dp);
      dp.prepare();

      ++rounds;
      DpResult sol;
      double dual = -kInf, lam = 0;
      int iters = 0;
      bool dp_met = true;  // some multiplier tried met the DP's budget
      tried.clear();
      // This round's Lagrangians by multiplier, each DP run once (below: the
      // ones only the dual bound needs, computed when it is needed).
      std::vector<Tried> lagrs;
      auto lagr_at = [&](double lambda) {
        for (const Tried& t : lagrs)
          if (t.lambda == lambda) return t.lagr;
        const double v = dp.run(lambda).lagr;
        lagrs.push_back({lambda, v});
        return v;
      };
      // Set when the search's Lagrangians are not computed yet (the
      // multipliers are in `tried` and `later`).
      bool deferred = false;
      std::vector<double> later;
      double hr_lagr = 0, kb_used = 0;
      auto deferred_dual = [&](bool all) {
        double b = std::max(lagr_at(0.0), hr_lagr - lam * kb_used);
        for (Tried& t : tried) {
          t.lagr = lagr_at(t.lambda);
          b = std::max(b, t.lagr - t.lambda * kb_used);
        }
        if (all)
          for (const double l : later) b = std::max(b, lagr_at(l) - l * kb_used);
        return b;
      };
      if (in.objective.kind == ObjectiveKind::waste && dp.least_time() > budget - gaps - tighten) {
        // Every plan the DP may return misses its budget (least_time), so
        // the search below would raise hi to its limit and bisect towards it
        // without a feasible step, returning the plan at the limit. That
        // course is followed here without its other DPs: they only feed the
        // dual bound, whose Lagrangians are computed if the bound is used
        // (pruning, the report, a repeated round's pruning), each as the
        // search computes it, so the plan and its report are the same.
        const double kb = budget - gaps - tighten;
        double hi = 1e-6;
        while (hi < 1e3) hi *= 4;
        sol = dp.run(hi);
        lam = hi;
        hr_lagr = sol.lagr;
        kb_used = kb;
        deferred = true;
        dp_met = false;
        double l = 0;
        auto walk = [&](int steps, auto&& visit) {
          int k = 0;
          for (; k < steps && hi - l > kBisectionTolerance * hi; ++k) {
            l = 0.5 * (l + hi);
            visit(l);
          }
          return k;
        };
        iters = walk(kPruneSteps, [&](double m) { tried.push_back({m, 0.0}); });
        lo_lagr = 0;
        hi_lambda = hi;
        hi_lagr = sol.lagr;
        if (have) {
          dual = deferred_dual(false);
          lo_lagr = lagr_at(0.0);
          if (dual > best_dp_energy * (1 + kPruneTolerance)) {
            ++pruned;
            mode_pruned = true;
            break;
          }
        }
        iters += walk(kBisectionSteps - iters, [&](double m) { later.push_back(m); });
      } else if (in.objective.kind == ObjectiveKind::waste) {
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
          lo_lagr = lo.lagr;
          hi_lambda = hi;
          hi_lagr = hr.lagr;
          bool record = true;
          auto eval = [&](double lambda) {
            DpResult r = dp.run(lambda);
            if (record) tried.push_back({lambda, r.lagr});
            return r;
          };
          auto feasible_at = [&](const DpResult& r) { hr = r; };
          iters = bisect_multiplier(l, hi, kb, dual, kPruneSteps, kBisectionTolerance, eval,
                                    feasible_at);
          record = false;
          // No plan of this mode can use less (modelled) energy than the
          // dual bound: a mode whose bound is above the best plan's
          // energy so far is not solved further.
          if (have && dual > best_dp_energy * (1 + kPruneTolerance)) {
            ++pruned;
            mode_pruned = true;
            break;
          }
          iters += bisect_multiplier(l, hi, kb, dual, kBisectionSteps - iters, kBisectionTolerance,
                                     eval, feasible_at);
          sol = hr;
          lam = hi;
          dp_met = hr.time <= kb;
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
        pairs[i] = grid.pairs[static_cast<std::size_t>(sol.pair_of_pos[i])];
      const Emulation em = emulate(in.gpu, items, pairs, start);
      const bool feasible = !in.objective.time_bounded() || !(em.time_ns > budget);
      const double score = in.objective.score(em.energy_j, em.time_ns);
      if (feasible && score < best_score) {
        if (deferred) dual = deferred_dual(true);
        best_score = score;
        best_pairs = pairs;
        best_em = em;
        have = true;
        best_dp_energy = sol.energy;
        rep.what = fmt::format(
            "segment DP ({}, {}, L_min {:.3f} ms, {} candidate pairs, {} segments per iteration, "
            "lambda {:.3g} J/ns after {} steps, round {})",
            mode.name, to_string(in.objective.kind), mode.lmin * 1e-6, dp.cand.size(), sol.segments,
            lam, iters, round + 1);
        rep.pairs = dp.cand.size();
        rep.energy_j = sol.energy;
        rep.dual_bound_j = std::min(dual, sol.energy);
        rep.gap_j = sol.energy - rep.dual_bound_j;
        rep.gap_pct = sol.energy > 0 ? 100.0 * rep.gap_j / sol.energy : 0.0;
      }
      // The caps the plan met, in the columns of the memory clock each kernel
      // ran at.
      bool changed = false, lowered = false;
      for (std::size_t i = 0; i < n; ++i) {
        const std::size_t m = mem_of_pair[static_cast<std::size_t>(sol.pair_of_pos[i])];
        std::int32_t& c = caps[m][i];
        const std::int32_t met = em.cap_mhz[i];
        if (met == c || (!feasible && met > c)) continue;
        lowered = lowered || met < c;
        c = met;
        changed = true;
      }
      if (feasible) {
        if (!changed) break;  // a fixed point: the next round would repeat this one
      } else {
        // A miss the lower caps explain is re-solved with them first; one
        // they do not explain tightens the budget by the overshoot.
        if (!lowered) tighten += tightening_ns(em.time_ns - budget, budget);
        repeats = !dp_met && !changed;
        repeat_overshoot = em.time_ns - budget;
      }
    }
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

}  // namespace

SegmentPlan plan_segments(const SegmentPlanInput& in, const Emulation& em0) {
  // A deterministic function of every field of `in` but its report prefix
  // and cache, and of em0: remembered (plan::PlanMemo), so the runs of a
  // sweep whose latency-aware plans meet the same input (a segment length
  // one run tries at L_min x 3 another plans at L_min) make it once.
  KernelPlanInput key;
  key.gpu = in.gpu;
  key.kernels = in.kernels;
  key.start = in.start;
  PlanMemo::KeyBytes tag;
  tag << in.objective.kind << in.objective.max_slowdown_pct << in.budget_ns << in.core_lmin_ns
      << in.memory_lmin_ns << in.memory_stall_ns << in.max_candidates << in.extra_tighten_ns
      << in.extra_candidates.size();
  for (const Clocks& c : in.extra_candidates) tag << c;
  tag << em0.time_ns << em0.energy_j << em0.memory_switches << em0.cap_mhz.size();
  for (const std::int32_t c : em0.cap_mhz) tag << c;
  for (const double t : em0.time_of_step) tag << t;
  SegmentPlan out = PlanMemo::remember<SegmentPlan>(key, "segments" + tag.s, [&] {
    SegmentPlanInput bare = in;  // planned without the caller's prefix, which only the report has
    bare.what.clear();
    return compute_segments(bare, em0);
  });
  out.report.what = in.what + out.report.what;
  return out;
}

}  // namespace dvfsim::plan
