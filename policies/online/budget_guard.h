#pragma once
// The budget guard of an online plan: while a plan is followed, it keeps the
// account of how much of the iteration's time budget the plan has used, from
// what the policy observes online, and trips when the iteration, as
// projected, would exceed the budget; the policy then re-plans the rest of the
// iteration to repay what it has used or, failing that, runs at the fastest
// clocks (fastest_hold_pair) until the account is repaid and then at the
// default ones, unless the plan's own rest ends nearer the budget
// (policies/online/learn_then_follow.h; docs/policies.md, "The budget guard").
//
// The account is kept on kernel durations: each completed kernel adds its
// measured duration minus what it would have taken under native, for the work
// it has now (NativeShadow, policies/online/rehearsal.h: the policy's own GPU
// model, firmware cap included, run at the default clocks on the kernels as
// they launch). A kernel that is costlier than the one learned is costlier
// under native too, so the account charges the plan only for the time its
// clocks cost. Idle gaps are left out: they move with the host (a kernel run
// faster leaves the GPU waiting for the next launch), and a slowdown a gap
// absorbs is counted as debt (the guard errs on the side of the budget).
//
// The projection is the account so far, plus what the plan's rehearsal
// (policies/online/rehearsal.h) has it use over the remaining positions
// against the default clocks' rehearsal, plus the idle and stall time the
// rehearsal has it add: on an iteration like the learned one the account
// follows the rehearsed path and the guard does not trip; on a costlier one,
// or one whose firmware cap bites harder, it falls behind and the guard trips
// as soon as the deviation would take the iteration past the budget.
#include <cstdint>
#include <vector>

#include "policies/planning/kernel_plan.h"
#include "policies/planning/segments.h"
#include "sim/policy.h"

namespace dvfsim::plan {

// A plan's and the default clocks' rehearsed kernel durations per position,
// and the time beyond them (gaps, stalls): Rehearsal::step_ns and time_ns of
// one of the rehearsal's iterations.
struct GuardPath {
  std::vector<double> planned_ns, reference_ns;
  double planned_time_ns = 0.0, reference_time_ns = 0.0;
};

class BudgetGuard {
 public:
  // `first`: the first followed iteration (it starts from the profiling
  // iteration's clocks); `later`: every later one. `allowance_ns`: the time
  // the budget allows over the reference iteration.
  void arm(const GuardPath& first, const GuardPath& later, double allowance_ns);
  bool armed() const { return !later_.planned_ns.empty(); }
  // No plan to guard (it was dropped): armed() is false until arm().
  void disarm() { *this = BudgetGuard(); }
  // A followed iteration begins: the account is reset and the path is the
  // plan's (the first path for the first iteration armed).
  void new_iteration();
  // A re-plan of the positions after `position`: their planned and default
  // durations from now on (the account is kept); `extra_ns`: the idle and
  // stall time the re-plan adds over the default clocks.
  void rearm_rest(int position, const std::vector<double>& planned_rest,
                  const std::vector<double>& reference_rest, double extra_ns);
  // The kernel at `position` ended after `measured_ns`; at the default
  // clocks it would have taken `native_ns`. Returns true when the account
  // plus the path's use of the later positions exceeds the allowance (then
  // once per path: re-arm with rearm_rest, or let the iteration end).
  bool on_end(int position, double measured_ns, double native_ns);
  // The path's use of `position` (planned - reference duration).
  double delta_ns(int position) const { return delta_[static_cast<std::size_t>(position)]; }
  // The default clocks' rehearsed duration of `position` in this iteration.
  double reference_ns(int position) const { return ref_[static_cast<std::size_t>(position)]; }
  double debt_ns() const { return debt_ns_; }
  // How far the account is behind the path's use of the same positions.
  double deviation_ns() const { return debt_ns_ - expected_ns_; }
  // The deviation so far carried over the rest of the iteration at the rate
  // it came (per ns of the default clocks' time). The policies' re-plans use
  // the same per phase (LearnThenFollow): the iteration-wide rate was
  // pessimistic where a deviation is confined to one phase.
  double expected_rest_deviation_ns() const;
  double projected_ns() const { return projected_ns_; }
  double allowance_ns() const { return allowance_ns_; }
  // Times the guard tripped, over the run.
  int trips() const { return trips_; }

 private:
  void set_path(const GuardPath& p);
  GuardPath first_, later_;
  bool first_done_ = false;
  std::vector<double> delta_;  // the path's use of each position (planned - reference)
  std::vector<double> after_;  // after_[i]: the path's use of positions > i
  std::vector<double> ref_;
  double ref_total_ns_ = 0.0;
  double ref_done_ns_ = 0.0;  // the reference durations of the positions accounted
  double expected_ns_ = 0.0;  // the path's use of the positions accounted
  double extra_ns_ = 0.0;     // the path's idle and stall time over the default clocks'
  double allowance_ns_ = 0.0;
  double debt_ns_ = 0.0;
  double projected_ns_ = 0.0;
  bool tripped_ = false;
  int trips_ = 0;
};

// What a re-plan of the rest of an iteration gives the guard.
struct RestPlanResult {
  bool have = false;
  std::vector<Clocks> pairs;
  std::vector<double> planned_ns, reference_ns;
  double extra_ns = 0.0;
};

// The firmware now, for a plan that starts now: the clocks in force, and the
// cap: the effective core clock when it is below the one asked for, else
// none seen (the top clock).
EmulationStart start_now(const PolicyContext& ctx, double stall_ns);

// The per-kernel knapsack (`base`: the plan's input) over `rest`, the
// learned items after the position that tripped the guard, starting now,
// with `repay_ns` taken off its budget (the default clocks' emulated time of
// the rest). No plan when none meets it.
RestPlanResult rest_by_knapsack(const PolicyContext& ctx, const KernelPlanInput& base,
                                std::vector<ItemSpec> rest, double repay_ns);
// The same with the segment DP (`base`: its input; the budget from the rest's
// default-clock emulation).
RestPlanResult rest_by_segments(const PolicyContext& ctx, const SegmentPlanInput& base,
                                std::vector<ItemSpec> rest, double repay_ns);

// The one pair that runs the rest (`base`'s learned items after `position`,
// where the guard tripped) fastest from now on the policy's own GPU model
// (`base.gpu`), firmware cap included: the top core clock with each memory clock
// (the highest core clock that memory clock allows), and the default pair.
// The top pair is not always the fastest: under a power cap its memory
// power can take more core clock than its memory clock gives (the RTX 3080
// Ti's capped GEMMs run slower at 9501 MHz memory than at 9251). The top pair
// on a tie. Its use is against the rest at the default clocks, already in
// force (as a re-plan's reference).
struct HoldPair {
  Clocks pair;
  // The rest's emulated time at `pair` less at the default clocks (what the
  // pair adds to the account over the rest; negative: it repays).
  double use_ns = 0.0;
};
HoldPair fastest_hold_pair(const PolicyContext& ctx, const KernelPlanInput& base, int position);

}  // namespace dvfsim::plan
