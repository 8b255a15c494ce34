#include "policies/online/budget_guard.h"

#include <algorithm>
#include <limits>
#include <numeric>

namespace dvfsim::plan {

void BudgetGuard::arm(const GuardPath& first, const GuardPath& later, double allowance_ns) {
  first_ = first;
  later_ = later;
  first_done_ = false;
  allowance_ns_ = allowance_ns;
  set_path(first_);
}

void BudgetGuard::set_path(const GuardPath& p) {
  const std::size_t n = std::min(p.planned_ns.size(), p.reference_ns.size());
  after_.assign(n, 0.0);
  delta_.assign(n, 0.0);
  ref_.assign(p.reference_ns.begin(), p.reference_ns.begin() + static_cast<std::ptrdiff_t>(n));
  double s = 0, busy_plan = 0, busy_ref = 0;
  for (std::size_t i = n; i-- > 0;) {
    after_[i] = s;
    delta_[i] = p.planned_ns[i] - p.reference_ns[i];
    s += delta_[i];
    busy_plan += p.planned_ns[i];
    busy_ref += p.reference_ns[i];
  }
  ref_total_ns_ = busy_ref;
  extra_ns_ = (p.planned_time_ns - busy_plan) - (p.reference_time_ns - busy_ref);
}

void BudgetGuard::new_iteration() {
  set_path(first_done_ ? later_ : first_);
  first_done_ = true;
  ref_done_ns_ = 0.0;
  expected_ns_ = 0.0;
  debt_ns_ = 0.0;
  projected_ns_ = 0.0;
  tripped_ = false;
}

void BudgetGuard::rearm_rest(int position, const std::vector<double>& planned_rest,
                             const std::vector<double>& reference_rest, double extra_ns) {
  const auto from = static_cast<std::size_t>(position + 1);
  double s = 0;
  for (std::size_t k = planned_rest.size(); k-- > 0;) {
    if (from + k >= after_.size()) continue;
    after_[from + k] = s;
    delta_[from + k] = planned_rest[k] - reference_rest[k];
    s += delta_[from + k];
  }
  if (position >= 0 && static_cast<std::size_t>(position) < after_.size())
    after_[static_cast<std::size_t>(position)] = s;
  extra_ns_ = extra_ns;
  tripped_ = false;
}

bool BudgetGuard::on_end(int position, double measured_ns, double native_ns) {
  if (position < 0 || position >= static_cast<int>(after_.size())) return false;
  debt_ns_ += measured_ns - native_ns;
  expected_ns_ += delta_[static_cast<std::size_t>(position)];
  ref_done_ns_ += ref_[static_cast<std::size_t>(position)];
  projected_ns_ = debt_ns_ + after_[static_cast<std::size_t>(position)] + extra_ns_;
  if (tripped_ || projected_ns_ <= allowance_ns_) return false;
  tripped_ = true;
  ++trips_;
  return true;
}

double BudgetGuard::expected_rest_deviation_ns() const {
  const double d = deviation_ns();
  if (d <= 0 || ref_done_ns_ <= 0) return 0.0;
  return d * std::max(0.0, ref_total_ns_ - ref_done_ns_) / ref_done_ns_;
}

}  // namespace dvfsim::plan

namespace dvfsim::plan {

EmulationStart start_now(const PolicyContext& ctx, double stall_ns) {
  EmulationStart s;
  const Device& d = ctx.device();
  const Clocks eff = ctx.effective();
  s.cap_mhz = eff.core_mhz < ctx.wanted().core_mhz ? eff.core_mhz : d.max_core_mhz();
  s.from = ctx.effective();
  s.stall_ns = stall_ns;
  return s;
}

namespace {
// The reference of a re-plan: the rest at the default clocks as the account
// has it, i.e. already at them (no switch back).
EmulationStart at_default(EmulationStart s, const Clocks& def) {
  s.from = def;
  return s;
}
// `reference_time_ns`: the time the plan was budgeted against (its default
// clocks' emulation), so that the guard's path uses what the plan claims.
RestPlanResult result_of(const std::vector<Clocks>& pairs, const Emulation& em,
                         const Emulation& def, const std::vector<Clocks>& def_pairs,
                         double reference_time_ns) {
  RestPlanResult r;
  if (pairs.empty() || pairs == def_pairs) return r;
  r.have = true;
  r.pairs = pairs;
  r.planned_ns = em.time_of_step;
  r.reference_ns = def.time_of_step;
  const double bp = std::accumulate(em.time_of_step.begin(), em.time_of_step.end(), 0.0);
  const double bd = std::accumulate(def.time_of_step.begin(), def.time_of_step.end(), 0.0);
  r.extra_ns = (em.time_ns - reference_time_ns) - (bp - bd);
  return r;
}
}  // namespace

RestPlanResult rest_by_knapsack(const PolicyContext& ctx, const KernelPlanInput& base,
                                std::vector<ItemSpec> rest, double repay_ns) {
  const Device& d = ctx.device();
  const Clocks def = default_clocks(d);
  KernelPlanInput k = base;
  k.kernels = std::move(rest);
  k.group_of_kernel.clear();
  k.groups = 0;
  k.start = start_now(ctx, base.start.stall_ns);
  k.plan.cyclic = false;
  k.extra_tighten_ns = 0.0;
  const std::vector<Clocks> dp(k.kernels.size(), def);
  const Emulation e0 = emulate(k.gpu, k.kernels, dp, at_default(k.start, def));
  if (!(e0.time_ns > 0)) return {};
  // The budget of the rest: its time at the default clocks less what it must
  // repay, as a negative slowdown (the knapsack then holds the default
  // clocks to it too, and takes the least-energy plan that meets it, even
  // one that uses more energy than they do).
  k.plan.objective.max_slowdown_pct = -100.0 * repay_ns / e0.time_ns;
  const KernelPlan p = plan_kernels(k);
  if (p.pairs == dp || p.emulation.time_ns > p.budget_ns) return {};
  return result_of(p.pairs, p.emulation, e0, dp, p.reference_ns);
}

RestPlanResult rest_by_segments(const PolicyContext& ctx, const SegmentPlanInput& base,
                                std::vector<ItemSpec> rest, double repay_ns) {
  const Device& d = ctx.device();
  const Clocks def = default_clocks(d);
  SegmentPlanInput s = base;
  s.kernels = std::move(rest);
  s.start = start_now(ctx, base.start.stall_ns);
  const std::vector<Clocks> dp(s.kernels.size(), def);
  const Emulation em0 = emulate(s.gpu, s.kernels, dp, at_default(s.start, def));
  for (std::size_t i = 0; i < s.kernels.size(); ++i) s.kernels[i].max_core_mhz = em0.cap_mhz[i];
  // What the rest may take: its time at the default clocks less what it
  // must repay (negative: the allowance the iteration has left).
  s.budget_ns = em0.time_ns - repay_ns;
  const double limit = s.budget_ns;
  double tighten = 0;
  for (int attempt = 0; attempt < kTighteningRounds; ++attempt) {
    s.extra_tighten_ns = tighten;
    const SegmentPlan sp = plan_segments(s, em0);
    if (!sp.have) return {};
    if (sp.emulation.time_ns <= limit)
      return result_of(sp.pairs, sp.emulation, em0, dp, em0.time_ns);
    tighten += tightening_ns(sp.emulation.time_ns - limit, limit);
  }
  return {};
}

HoldPair fastest_hold_pair(const PolicyContext& ctx, const KernelPlanInput& base, int position) {
  const std::vector<ItemSpec> rest(base.kernels.begin() + position + 1, base.kernels.end());
  const GpuModel& gpu = base.gpu;
  const Device& d = ctx.device();
  const Clocks top = make_clocks(d, d.max_core_mhz(), d.max_memory_mhz());
  if (rest.empty()) return {top, 0.0};
  std::vector<Clocks> candidates{top};
  for (auto m = d.memory_clocks_mhz.rbegin(); m != d.memory_clocks_mhz.rend(); ++m) {
    // The highest core clock this memory clock allows.
    for (auto c = d.core_clocks_mhz.rbegin(); c != d.core_clocks_mhz.rend(); ++c) {
      if (!d.supports(*c, *m)) continue;
      const Clocks pair = make_clocks(d, *c, *m);
      if (!(pair == top)) candidates.push_back(pair);
      break;
    }
  }
  const Clocks def = default_clocks(d);
  if (std::find(candidates.begin(), candidates.end(), def) == candidates.end())
    candidates.push_back(def);
  const EmulationStart start = start_now(ctx, base.start.stall_ns);
  HoldPair best{top, std::numeric_limits<double>::infinity()};
  for (const Clocks& pair : candidates) {
    const double t =
        emulate(gpu, rest, std::vector<Clocks>(rest.size(), pair), start, best.use_ns).time_ns;
    if (t < best.use_ns) best = {pair, t};
  }
  const double t_def =
      emulate(gpu, rest, std::vector<Clocks>(rest.size(), def), at_default(start, def)).time_ns;
  best.use_ns -= t_def;
  return best;
}

}  // namespace dvfsim::plan
