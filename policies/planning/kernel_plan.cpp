#include "policies/planning/kernel_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <type_traits>

#include "sim/error.h"

namespace dvfsim::plan {

bool replan_until_met(int checks, double budget_ns, double hopeless_ns,
                      const std::function<std::optional<double>(double)>& check) {
  double tighten = 0;
  double first_tightening = 0;  // of the first re-plan
  bool met = false;
  for (int a = 0; a < checks; ++a) {
    const std::optional<double> miss = check(tighten);
    if (!miss || *miss > hopeless_ns) break;  // no plan this tight: the ladder may have one
    if (*miss <= 0) {
      met = true;
      break;
    }
    if (a == 0) first_tightening = tightening_ns(*miss, budget_ns);
    tighten += tightening_ns(*miss, budget_ns);
  }
  if (first_tightening <= 0) return met;  // the first plan met the budget, or none to tighten
  for (const double f : kLadderFractions) {
    const std::optional<double> miss = check(f * first_tightening);
    if (miss && *miss <= 0) return true;
  }
  return met;
}

// ------------------------------------------------------------------ plans

std::vector<ParamSpec> memory_mode_params() {
  return {
      {"memory", ParamSpec::Kind::defaulted, "auto",
       "auto (the better of per-kernel and fixed, stalls charged), per-kernel (memory clock per "
       "kernel, switch stalls ignored by the solver) or fixed (one memory clock for the run)"}};
}

MemoryMode parse_memory_mode(const Params& p, const std::string& policy) {
  const std::string v = p.str("memory");
  if (v == "auto") return MemoryMode::automatic;
  if (v == "per-kernel") return MemoryMode::per_kernel;
  if (v == "fixed") return MemoryMode::fixed;
  throw InputError(fmt::format(
      "policy {}: parameter 'memory': '{}' is not one of auto, per-kernel, fixed", policy, v));
}

std::vector<ParamSpec> aggregation_params() {
  return {{"aggregation", ParamSpec::Kind::defaulted, "global",
           "global (one time budget for the whole run: multiple-choice knapsack) or local (every "
           "step within its own reference time x (1 + max_slowdown/100))"}};
}

Aggregation parse_aggregation(const Params& p, const std::string& policy) {
  const std::string v = p.str("aggregation");
  if (v == "global") return Aggregation::global;
  if (v == "local") return Aggregation::local;
  throw InputError(fmt::format(
      "policy {}: parameter 'aggregation': '{}' is not one of global, local", policy, v));
}

namespace {

double local_score(const Objective& o, double e, double t) {
  switch (o.kind) {
    case ObjectiveKind::edp:
      return e * t;
    case ObjectiveKind::ed2p:
      return e * t * t;
    default:
      return e;
  }
}

}  // namespace

Plan plan_steps(const PlanInput& in) {
  const auto started = std::chrono::steady_clock::now();
  const Tables& tb = *in.tables;
  const Device& d = *in.device;
  const Grid& g = tb.grid;
  const std::size_t steps = in.sequence.size();
  int defp = g.find(d.default_core_mhz, d.default_memory_mhz);
  if (defp < 0) defp = static_cast<int>(g.pairs.size()) - 1;
  const auto def = static_cast<std::size_t>(defp);
  double ref = in.reference_ns;
  if (ref < 0) {
    ref = in.time_offset_ns;
    for (auto i : in.sequence) ref += tb.t(i, def);
  }
  const double budget_total = in.objective.budget(ref);
  const StallCharge stall{
      in.memory_stall_ns >= 0 ? in.memory_stall_ns : d.memory_switch_stall_us * 1e3,
      idle_power_w(*in.power, g.pairs[def])};

  struct Mode {
    std::string name;
    std::vector<char> mask;  // empty: every pair
    std::size_t hull;        // index into the mode hulls (mode_hulls order)
  };
  std::vector<Mode> modes;
  const std::size_t mems = memory_clock_count(g);
  if (in.memory != MemoryMode::fixed || mems <= 1) modes.push_back({"per-kernel memory", {}, 0});
  if (in.memory != MemoryMode::per_kernel && mems > 1) {
    std::size_t k = 0;
    for (MemoryMask& mm : memory_masks(g))
      modes.push_back(
          {fmt::format("memory fixed at {} MHz", mm.memory_mhz), std::move(mm.allowed), 1 + k++});
  }
  // Every mode's hulls from each item's per-column hulls, computed once.
  std::vector<Hulls> own_hulls;
  const std::vector<Hulls>* hulls = in.hulls;
  Hulls own_scratch;
  Hulls& chain_hulls = in.scratch ? *in.scratch : own_scratch;  // the mode's, from in.chains
  if (in.aggregation == Aggregation::global && !hulls && !in.chains) {
    own_hulls = mode_hulls(tb);
    hulls = &own_hulls;
  }
  static const Hulls kNoHulls;

  // Each mode's plan (solved: whether it was), chosen among in mode order:
  // the first feasible one of least score, or when none is feasible the
  // first fastest. A fixed-memory mode that cannot meet the budget is passed
  // over (first pass) unless no mode meets it and its least time is not
  // above the fastest plan's (second pass): it could not be chosen.
  std::vector<Plan> plans(modes.size());
  std::vector<char> solved(modes.size(), 0), feasible_of(modes.size(), 0);
  std::vector<double> least_of(modes.size(), -HUGE_VAL);
  auto solve_mode = [&](std::size_t mi) {
    const Mode& mode = modes[mi];
    const std::vector<char>* mask = mode.mask.empty() ? nullptr : &mode.mask;
    const bool global = in.aggregation == Aggregation::global;
    if (global && !hulls) hulls_of_mode(g, *in.chains, mode.hull, chain_hulls);
    const Hulls& h = !global ? kNoHulls : hulls ? (*hulls)[mode.hull] : chain_hulls;
    double reserve = 0;
    Plan cand;
    Solution sol;
    for (int round = 0; round < kStallReserveRounds; ++round) {
      std::vector<std::int32_t> pairs(steps, defp);
      std::vector<double> times(steps, 0.0);
      double kt = 0, ke = 0;
      if (in.aggregation == Aggregation::global) {
        sol = solve_objective(tb, h, in.objective, ref, in.time_offset_ns + reserve, 0.0);
        std::vector<std::uint32_t> seen(tb.items, 0);
        for (std::size_t s = 0; s < steps; ++s) {
          const auto i = in.sequence[s];
          pairs[s] = sol.assignment.pair_of(i, seen[i]++);
        }
      } else {
        for (std::size_t s = 0; s < steps; ++s) {
          const auto i = in.sequence[s];
          const double r = s < in.step_reference_ns.size() ? in.step_reference_ns[s] : tb.t(i, def);
          const double bound = in.objective.time_bounded() ? in.objective.budget(r) : HUGE_VAL;
          std::int32_t bp = -1, fastest = -1;
          double bs = 0, bt = 0, ft = 0;
          for (std::size_t p = 0; p < tb.pairs; ++p) {
            if (mask && !(*mask)[p]) continue;
            const double t = tb.t(i, p), e = tb.e(i, p);
            if (fastest < 0 || t < ft) {
              fastest = static_cast<std::int32_t>(p);
              ft = t;
            }
            if (t > bound * (1 + 1e-12)) continue;
            const double sc = local_score(in.objective, e, t);
            if (bp < 0 || sc < bs || (sc == bs && t < bt)) {
              bp = static_cast<std::int32_t>(p);
              bs = sc;
              bt = t;
            }
          }
          pairs[s] = bp >= 0 ? bp : fastest;
        }
      }
      for (std::size_t s = 0; s < steps; ++s) {
        times[s] = tb.t(in.sequence[s], static_cast<std::size_t>(pairs[s]));
        kt += times[s];
        ke += tb.e(in.sequence[s], static_cast<std::size_t>(pairs[s]));
      }
      if (in.aggregation == Aggregation::local) {
        sol = Solution{};
        sol.time_ns = kt;
        sol.energy_j = sol.dual_bound_j = ke;
      }
      cand.pair_of_step = std::move(pairs);
      cand.time_of_step = std::move(times);
      cand.memory_switches =
          mode.mask.empty() ? memory_changes(g, cand.pair_of_step, in.cyclic) : 0;
      const double st = stall.time_ns(cand.memory_switches);
      cand.time_ns = in.time_offset_ns + kt + st;
      cand.energy_j = ke + stall.energy_j(cand.memory_switches);
      if (in.aggregation != Aggregation::global || !in.objective.time_bounded() ||
          cand.time_ns <= budget_total || st <= reserve)
        break;
      reserve = st;  // solve again with the stalls taken out of the budget
    }
    cand.budget_ns = budget_total;
    cand.mode = mode.name;
    cand.budget_ns = budget_total;
    cand.mode = mode.name;
    const bool feasible = !(cand.time_ns > budget_total * (1 + 1e-12));
    cand.report.policy = in.policy;
    cand.report.what = fmt::format("{} ({}, {} {}, {} memory switches)", in.what,
                                   in.aggregation == Aggregation::global ? "global" : "local",
                                   to_string(in.objective.kind), mode.name, cand.memory_switches);
    cand.report.items = tb.items;
    cand.report.copies = steps;
    cand.report.pairs =
        mask ? static_cast<std::size_t>(std::count(mask->begin(), mask->end(), 1)) : tb.pairs;
    cand.report.hull_vertices = h.pair.size();
    cand.report.budget_ns = budget_total;
    cand.report.time_ns = cand.time_ns;
    cand.report.energy_j = sol.energy_j;
    cand.report.dual_bound_j = sol.dual_bound_j;
    cand.report.gap_j = sol.gap_j();
    cand.report.gap_pct = sol.gap_pct();
    cand.report.feasible = feasible;
    plans[mi] = std::move(cand);
    solved[mi] = 1;
    feasible_of[mi] = feasible;
  };
  auto choose = [&]() {
    std::size_t bi = modes.size();
    double best_score = 0;
    for (std::size_t mi = 0; mi < modes.size(); ++mi) {
      if (!solved[mi]) continue;
      const Plan& cand = plans[mi];
      const bool feasible = feasible_of[mi];
      const double score = in.objective.score(cand.energy_j, cand.time_ns);
      const bool better = bi == modes.size() || (feasible && !feasible_of[bi]) ||
                          (feasible == static_cast<bool>(feasible_of[bi]) &&
                           (feasible ? score < best_score : cand.time_ns < plans[bi].time_ns));
      if (!better) continue;
      bi = mi;
      best_score = score;
    }
    return bi;
  };
  const bool may_pass =
      in.aggregation == Aggregation::global && !hulls && in.objective.time_bounded();
  for (std::size_t mi = 0; mi < modes.size(); ++mi) {
    if (may_pass && !modes[mi].mask.empty()) {
      // The plan's time is time_offset + the steps' times summed in step
      // order (no stalls with the memory clock held); rounding is monotone,
      // so the sum of each step's least time (its chain's first vertex) in
      // the same order is at most that: over the budget, the mode's plan is
      // infeasible.
      double least = 0;
      for (const auto i : in.sequence) {
        const std::vector<HullVertex>& c = (*(*in.chains)[i])[modes[mi].hull];
        least += c.empty() ? HUGE_VAL : c.front().t;
      }
      least_of[mi] = in.time_offset_ns + least;
      if (least_of[mi] > budget_total * (1 + 1e-12)) continue;
    }
    solve_mode(mi);
  }
  std::size_t bi = choose();
  if (bi == modes.size() || !feasible_of[bi]) {
    bool more = false;
    for (std::size_t mi = 0; mi < modes.size(); ++mi)
      if (!solved[mi] && (bi == modes.size() || !(least_of[mi] > plans[bi].time_ns))) {
        solve_mode(mi);
        more = true;
      }
    if (more) bi = choose();
  }
  Plan best = bi < modes.size() ? std::move(plans[bi]) : Plan{};
  best.report.solve_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  return best;
}

namespace {

KernelPlan compute_plan(const KernelPlanInput& in) {
  const auto started = std::chrono::steady_clock::now();
  const Device& d = *in.gpu.device;
  const std::size_t n = in.kernels.size();
  const bool grouped = !in.group_of_kernel.empty();
  KernelPlan best;
  const Clocks def = default_clocks(d);
  const std::vector<Clocks> defaults(n, def);
  const Emulation em0 = emulate(in.gpu, in.kernels, defaults, in.start);
  const Objective& obj = in.plan.objective;
  best.reference_ns = em0.time_ns;
  best.reference_energy_j = em0.energy_j;
  best.budget_ns = obj.budget(em0.time_ns);
  best.pairs = defaults;
  best.group_pairs.assign(in.groups, def);
  best.emulation = em0;
  // The default clocks are the plan to beat only when they meet the budget
  // (a budget below the reference, as a budget guard's re-plan of the rest
  // of an iteration has, takes any plan that meets it).
  double best_score = obj.time_bounded() && em0.time_ns > best.budget_ns
                          ? std::numeric_limits<double>::infinity()
                          : obj.score(em0.energy_j, em0.time_ns);
  bool have_plan = false;

  double gaps = 0;
  for (std::size_t i = 0; i + 1 < n; ++i) gaps += in.kernels[i].gap_ns;
  // Each step's reference time as the tables count it: the kernel with the
  // host wait it absorbs (ItemSpec::floor_ns).
  std::vector<double> step_ref;
  auto span = [&](std::size_t i) { return std::max(em0.time_of_step[i], in.kernels[i].floor_ns); };
  if (grouped) {
    step_ref.assign(in.groups, 0.0);
    for (std::size_t i = 0; i < n; ++i) step_ref[in.group_of_kernel[i]] += span(i);
  } else {
    step_ref.resize(n);
    for (std::size_t i = 0; i < n; ++i) step_ref[i] = span(i);
  }
  std::vector<std::int32_t> caps = em0.cap_mhz;
  double tighten = in.extra_tighten_ns;
  std::vector<ItemSpec> items = in.kernels;
  // Rows, and each distinct item's hulls, reused across rounds (a round
  // changes the caps of some kernels only) and, with the caller's cache,
  // across plans.
  std::optional<PlanCache> own;
  PlanCache& pc = in.cache && in.cache->serves(in.gpu) ? *in.cache : own.emplace(in.gpu);
  TableCache& cache = pc.tables();
  // The rounds' starting states (caps, tightening), to stop when one repeats.
  std::map<std::pair<std::vector<std::int32_t>, double>, int> seen;
  std::vector<const ModeChains*> item_chains;  // each item's, for plan_steps
  Hulls scratch;                               // plan_steps' hulls, reused
  int rounds = 0, since_better = 0;
  for (int round = 0; round < std::max(1, in.rounds); ++round) {
    if (!seen.emplace(std::make_pair(caps, tighten), round).second) break;  // a cycle
    rounds = round + 1;
    for (std::size_t i = 0; i < n; ++i) items[i].max_core_mhz = caps[i];
    Tables tb;
    PlanInput p = in.plan;
    p.memory_stall_ns = in.start.stall_ns;
    p.device = in.gpu.device;
    p.power = in.gpu.power;
    if (grouped) {
      // Phase sums of the kernels' cached rows (group_tables of build_tables).
      tb.grid = cache.grid();
      tb.items = in.groups;
      tb.pairs = tb.grid.pairs.size();
      tb.time_ns.assign(tb.items * tb.pairs, 0.0);
      tb.energy_j.assign(tb.items * tb.pairs, 0.0);
      tb.count.assign(tb.items, 1);
      for (std::size_t i = 0; i < n; ++i) {
        const TableCache::Row row = cache.row(items[i]);
        const double c = items[i].count;
        double* gt = &tb.time_ns[in.group_of_kernel[i] * tb.pairs];
        double* ge = &tb.energy_j[in.group_of_kernel[i] * tb.pairs];
        for (std::size_t q = 0; q < tb.pairs; ++q) {
          gt[q] += c * row.time_ns[q];
          ge[q] += c * row.energy_j[q];
        }
      }
      p.sequence.clear();
      for (std::uint32_t g = 0; g < in.groups; ++g) p.sequence.push_back(g);
    } else {
      const Grouping g = group_identical(items);
      std::vector<TableCache::Row> rows;
      tb = cache.view(g.items, &rows);
      p.sequence = g.item_of;
      if (p.aggregation == Aggregation::global) {
        item_chains.resize(g.items.size());
        for (std::size_t i = 0; i < g.items.size(); ++i) item_chains[i] = &pc.chains(rows[i]);
        p.chains = &item_chains;
        p.scratch = &scratch;
      }
    }
    p.tables = &tb;
    p.reference_ns = em0.time_ns;
    p.time_offset_ns = gaps + tighten;
    p.step_reference_ns = step_ref;
    if (tighten > 0 && best.budget_ns > 0 && std::isfinite(best.budget_ns)) {
      // Local shares shrink in proportion to the tightening.
      const double f = std::max(0.0, 1.0 - tighten / best.budget_ns);
      for (auto& r : p.step_reference_ns) r *= f;
    }
    const Plan pl = plan_steps(p);
    std::vector<Clocks> pairs(n);
    for (std::size_t i = 0; i < n; ++i)
      pairs[i] = tb.grid.pairs[static_cast<std::size_t>(
          pl.pair_of_step[grouped ? in.group_of_kernel[i] : i])];
    Emulation em = emulate(in.gpu, in.kernels, pairs, in.start);
    const bool feasible = !(em.time_ns > best.budget_ns);
    const double score = obj.score(em.energy_j, em.time_ns);
    ++since_better;
    if (feasible && score < best_score) {
      since_better = 0;
      best_score = score;
      best.pairs = pairs;
      if (grouped) {
        best.group_pairs.clear();
        for (std::size_t g = 0; g < in.groups; ++g)
          best.group_pairs.push_back(tb.grid.pairs[static_cast<std::size_t>(pl.pair_of_step[g])]);
      }
      best.emulation = em;
      best.report = pl.report;
      have_plan = true;
    } else if (!have_plan) {
      best.report = pl.report;
    }
    if (feasible) {
      if (em.cap_mhz == caps) break;  // fixed point: the next round would repeat this one
      caps = em.cap_mhz;
    } else {
      tighten += tightening_ns(em.time_ns - best.budget_ns, best.budget_ns);
      for (std::size_t i = 0; i < n; ++i) caps[i] = std::min(caps[i], em.cap_mhz[i]);
    }
    if (in.plateau_rounds > 0 && since_better >= in.plateau_rounds) break;
  }
  SolveReport& r = best.report;
  r.policy = in.plan.policy;
  r.budget_ns = best.budget_ns;
  r.time_ns = best.emulation.time_ns;
  r.feasible = have_plan || !obj.time_bounded();
  r.rounds = rounds;
  r.what += fmt::format("; emulated {:.3f} ms, {:.4f} J vs default clocks {:.3f} ms, {:.4f} J{}",
                        best.emulation.time_ns * 1e-6, best.emulation.energy_j, em0.time_ns * 1e-6,
                        em0.energy_j, have_plan ? "" : " (kept the default clocks)");
  r.solve_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  return best;
}

thread_local PlanMemo* t_memo = nullptr;

}  // namespace

void PlanMemo::admit(const GpuModel& m) {
  const std::lock_guard<std::mutex> lock(m_);
  admitted_.emplace(m.device, m.latency, m.power, m.governor);
}

bool PlanMemo::admits(const GpuModel& m) const {
  const std::lock_guard<std::mutex> lock(m_);
  return admitted_.count({m.device, m.latency, m.power, m.governor}) > 0;
}

std::size_t PlanMemo::hits() const {
  const std::lock_guard<std::mutex> lock(m_);
  return hits_;
}

std::size_t PlanMemo::misses() const {
  const std::lock_guard<std::mutex> lock(m_);
  return misses_;
}

PlanMemo::Scope::Scope(PlanMemo* memo) : previous_(t_memo) {
  t_memo = memo;
}
PlanMemo::Scope::~Scope() {
  t_memo = previous_;
}
PlanMemo* PlanMemo::current() {
  return t_memo;
}

PlanMemo::Key PlanMemo::key(const KernelPlanInput& in) {
  // Every field compute_plan reads (PlanInput's device, power, tables,
  // sequence, reference, offsets, step references and stall are its own).
  KeyBytes blob;
  for (const ItemSpec& it : in.kernels) {
    const KernelCost& k = it.cost;
    blob << k.fixed_ns << k.compute_ns_mhz << k.memory_ns_mhz << k.flops << k.dram_bytes
         << k.instructions << k.tensor << k.simt_matrix << k.fp16 << k.fp8 << k.zeroed_operands
         << k.l2_excess_bytes << k.sm_share << k.drain_ns << it.time_scale << it.gap_ns
         << it.floor_ns << it.max_core_mhz << it.count;
  }
  for (const std::uint32_t g : in.group_of_kernel) blob << g;
  KeyBytes rest;
  rest << in.gpu.device << in.gpu.latency << in.gpu.power << in.gpu.governor << in.kernels.size()
       << in.group_of_kernel.size() << in.groups << in.start.cap_mhz << in.start.warm_pair
       << in.start.first_tick_ns << in.start.from << in.start.stall_ns << in.plan.cyclic
       << in.plan.objective.kind << in.plan.objective.max_slowdown_pct << in.plan.aggregation
       << in.plan.memory << in.rounds << in.plateau_rounds << in.extra_tighten_ns;
  const std::lock_guard<std::mutex> lock(m_);
  const auto [it, fresh] = blobs_.emplace(std::move(blob.s), 0);
  if (fresh) it->second = static_cast<std::uint32_t>(blobs_.size() - 1);
  return {it->second, std::move(rest.s)};
}

template <class V>
std::shared_ptr<V> PlanMemo::find_in(std::map<Key, std::shared_ptr<V>>& map, const Key& k) {
  const std::lock_guard<std::mutex> lock(m_);
  const auto it = map.find(k);
  if (it == map.end()) {
    ++misses_;
    return nullptr;
  }
  ++hits_;
  return it->second;
}

template <class V>
void PlanMemo::insert_in(std::map<Key, std::shared_ptr<V>>& map, const Key& k,
                         std::shared_ptr<V> value) {
  const std::lock_guard<std::mutex> lock(m_);
  if (map.size() < kMaxPlans) map.emplace(k, std::move(value));
}

std::shared_ptr<const KernelPlan> PlanMemo::find(const Key& k) {
  return find_in(plans_, k);
}
void PlanMemo::insert(const Key& k, KernelPlan plan) {
  insert_in(plans_, k, std::make_shared<const KernelPlan>(std::move(plan)));
}
std::shared_ptr<const void> PlanMemo::find_other(const Key& k) {
  return find_in(others_, k);
}
void PlanMemo::insert_other(const Key& k, std::shared_ptr<const void> value) {
  insert_in(others_, k, std::move(value));
}

std::shared_ptr<PlanStore> PlanMemo::store(const GpuModel& m) {
  const std::lock_guard<std::mutex> lock(m_);
  const auto key =
      std::make_tuple(static_cast<const void*>(m.device), static_cast<const void*>(m.latency),
                      static_cast<const void*>(m.power));
  const auto [b, e] = stores_.equal_range(key);
  for (auto it = b; it != e; ++it) {
    // Held by the memo alone: no cache uses it, and none can take it but
    // through this lock.
    if (it->second.use_count() != 1) continue;
    if (it->second->bytes() > kMaxStoreBytes) it->second = std::make_shared<PlanStore>(m);
    return it->second;
  }
  return stores_.emplace(key, std::make_shared<PlanStore>(m))->second;
}

KernelPlan plan_kernels(const KernelPlanInput& in) {
  PlanMemo* memo = PlanMemo::current();
  if (!memo || in.plan.tables || in.plan.hulls || in.plan.chains || !memo->admits(in.gpu))
    return compute_plan(in);
  const auto started = std::chrono::steady_clock::now();
  const PlanMemo::Key key = memo->key(in);
  std::shared_ptr<const KernelPlan> plan = memo->find(key);
  KernelPlan out;
  if (plan) {
    out = *plan;
    out.report.solve_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started)
            .count();
  } else {
    // Planned without the caller's names, which only the report carries
    // (its description starts with plan.what).
    KernelPlanInput bare = in;
    bare.plan.policy.clear();
    bare.plan.what.clear();
    out = compute_plan(bare);
    memo->insert(key, out);
  }
  out.report.policy = in.plan.policy;
  out.report.what = in.plan.what + out.report.what;
  return out;
}

KernelPlanInput whole_run_input(const PolicyContext& ctx) {
  const Workload& w = ctx.workload();
  const std::size_t n = w.kernels.size();
  const RunResult* base = ctx.baseline();
  if (base && base->kernels.size() != n) base = nullptr;
  KernelPlanInput in;
  in.gpu = gpu_model(ctx);
  in.kernels.resize(n);
  // Host slack: on one stream a kernel starts when the host has launched it
  // and the kernel before has ended, so a gap in the baseline is a wait for
  // the host, which a slower kernel before it absorbs for free, unless the
  // host itself waited for the GPU (a sync between the two launches: then
  // the launch moves with the GPU). Several streams or event waits: none
  // (a gap may be a cross-stream wait), nor without a baseline replay.
  bool one_stream = w.event_waits.empty();
  for (const Kernel& k : w.kernels) one_stream = one_stream && k.stream == w.kernels[0].stream;
  const bool slack = base && one_stream;
  std::size_t next_sync = 0;
  for (std::size_t k = 0; k < n; ++k) {
    in.kernels[k].cost = ctx.costs()[k];
    double gap = 0;
    if (k + 1 < n) {
      if (base) {
        gap = static_cast<double>(base->kernels[k + 1].start_ns - base->kernels[k].start_ns -
                                  base->kernels[k].duration_ns);
      } else {
        const Kernel& a = w.kernels[k];
        gap = static_cast<double>(w.kernels[k + 1].traced_start_ns - a.traced_start_ns -
                                  a.work.duration_ns);
      }
    }
    in.kernels[k].gap_ns = std::max(0.0, gap);
    if (slack && k + 1 < n && gap > 0) {
      bool synced = false;
      while (next_sync < w.syncs.size() &&
             w.syncs[next_sync].host_begin_ns < w.kernels[k + 1].host_launch_ns) {
        synced = synced || w.syncs[next_sync].host_begin_ns >= w.kernels[k].host_launch_ns;
        ++next_sync;
      }
      if (!synced) {
        in.kernels[k].floor_ns = static_cast<double>(base->kernels[k].duration_ns) + gap;
        in.kernels[k].gap_ns = 0.0;
      }
    }
  }
  const Device& d = ctx.device();
  in.start.cap_mhz = 0;  // warm-up as the engine does it
  in.start.warm_pair = default_clocks(d);
  in.start.from = in.start.warm_pair;
  in.start.stall_ns = ctx.expected_memory_stall_ns();
  in.plan.cyclic = false;
  return in;
}

}  // namespace dvfsim::plan
