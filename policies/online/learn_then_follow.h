#pragma once
// The shape of every online planner: learn, plan once, follow.
#include <array>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "policies/online/budget_guard.h"
#include "policies/online/learner.h"
#include "policies/online/rehearsal.h"
#include "policies/online/rehearsal_plan.h"
#include "policies/online/switcher.h"
#include "sim/params.h"
#include "sim/policy.h"

namespace dvfsim::plan {

// The parameters of every learn-then-follow policy besides its objective's
// and its planner's: `host_slack` (items_from) and `guard` (the budget guard).
std::vector<ParamSpec> learn_then_follow_params();

// Which waits for the host a plan may fill with a slower kernel
// (items_from): none; those of the profiling iteration; those of the
// profiling iteration that came back in the first followed iteration (the
// plan is made without them, then again with them when they recurred).
enum class HostSlack { off, once, recurring };
// `host_slack` of `p`, for `policy`'s errors.
HostSlack parse_host_slack(const Params& p, const std::string& policy);

// Re-plans of the rest of one iteration after the budget guard tripped (a
// knapsack or a segment DP each; on the shipped trace the RTX 5090 at 100 and
// 300 us needs four: its step 2 keeps deviating through the forward pass).
inline constexpr int kGuardReplans = 8;

// An online policy that learns the kernel sequence during a profiling
// iteration (SequenceLearner), makes its plan once when the sequence is known,
// and follows it with a Switcher from then on.
//
// With a budget guard (follow() with the plan's rehearsed paths and a native
// shadow; policies/online/budget_guard.h), a followed iteration whose
// projected time would exceed the budget is re-planned from the kernel that
// tripped the guard (replan_rest: the rest made to repay the account, plus
// the deviation seen so far carried over the rest of its phase at its rate),
// up to kGuardReplans times an iteration. When no re-plan meets that, the rest of
// the iteration runs at the fastest clocks until the account is repaid, then
// at the default clocks. The plan resumes at the next iteration.
//
// With idle drops (`idle_drop`, Switcher::set_idle_drop), a wait the plan
// does not know (the GPU idle past the planned gap by the break-even time of
// plan::idle_drop) is idled at a low pair until the next kernel starts.
class LearnThenFollow : public Policy {
 public:
  void on_kernel_start(PolicyContext& ctx, std::uint32_t kernel) override;
  void on_kernel_end(PolicyContext& ctx, std::uint32_t kernel) override;
  void on_timer(PolicyContext& ctx) override;
  const BudgetGuard& guard() const { return guard_; }

 protected:
  using RestPlan = RestPlanResult;
  // Called when the learner has the sequence, and again when its waits for
  // the host recurred (host_slack=recurring; replanning() is then true);
  // calls follow() and returns true, or returns false having changed
  // nothing: no plan met the budget (made first, the default clocks are then
  // held; when re-planning, the plan in force is).
  virtual bool make_plan(PolicyContext& ctx) = 0;
  bool replanning() const { return replanning_; }
  // The learned sequence's items, with the host slack host_slack_ allows now.
  std::vector<ItemSpec> learned_items() const;
  // The firmware's core-clock cap when a plan is made: the effective core
  // clock where it is below the default one and the policy has set no
  // clocks yet; none (the top clock) when re-planning, whose clocks in force
  // are the plan's own.
  std::int32_t start_cap_mhz(const PolicyContext& ctx) const;
  // The clocks a plan starts from: those in force, or, while the switcher's
  // idle drop lasts (a plan made as the kernel that ends it starts), the
  // pair it dropped from: the drop ends with that kernel's request, and the
  // plan is rehearsed on the iteration, not on that one switch.
  Clocks start_clocks(const PolicyContext& ctx) const {
    return switcher_.dropped_from() ? *switcher_.dropped_from() : ctx.effective();
  }
  // Where the default clocks' rehearsal (the budget's reference, the guard's
  // native path) starts: where the plan starts (`plan_start`), except when
  // re-planning: then at the default clocks, as native runs, not at the
  // plan's clocks in force.
  RehearsalStart reference_start(const PolicyContext& ctx, const RehearsalStart& plan_start) const;
  // When re-planning: the plan in force, as planned (its pairs, followed as
  // it is), one more candidate of `cands` on the re-plan's `items`, so that
  // a re-plan never rehearses worse than keeping it.
  void consider_plan_in_force(CandidateSet& cands, const GpuModel& gpu,
                              const std::vector<ItemSpec>& items,
                              const EmulationStart& start) const;
  // Re-plans the positions after `position` so that they take `repay_ns`
  // less than at the default clocks (the budget guard tripped there); none
  // (have = false): no plan meets that.
  virtual RestPlan replan_rest(PolicyContext& /*ctx*/, int /*position*/, double /*repay_ns*/) {
    return {};
  }
  // The clocks held to repay the account when no re-plan does (switches
  // that land at once): the pair that runs the positions after `position`
  // fastest, and what it adds to the account over them (fastest_hold_pair);
  // the top pair, taken whatever it adds, where a policy cannot tell.
  virtual HoldPair catch_up_clocks(PolicyContext& ctx, int /*position*/) {
    const Device& d = ctx.device();
    return {make_clocks(d, d.max_core_mhz(), d.max_memory_mhz()),
            -std::numeric_limits<double>::infinity()};
  }
  // Follows `steps` (early: switches issued ahead by the expected latency).
  // Guarded when `first`, `later` (the plan's and the default clocks'
  // rehearsed paths, BudgetGuard::arm) and `native` are given, with
  // `allowance_ns` over the default clocks.
  void follow(std::vector<Switcher::Step> steps, bool early, const GuardPath* first = nullptr,
              const GuardPath* later = nullptr, double allowance_ns = 0.0,
              std::unique_ptr<NativeShadow> native = nullptr);
  // follow(), guarded on the paths of two rehearsals: the plan's (`plan`)
  // and the default clocks' (`ref`), both iterations of each.
  void follow_guarded(std::vector<Switcher::Step> steps, bool early, const Rehearsal& plan,
                      const Rehearsal& ref, double allowance_ns,
                      std::unique_ptr<NativeShadow> native);

  SequenceLearner learner_;
  Switcher switcher_;
  BudgetGuard guard_;
  HostSlack host_slack_ = HostSlack::off;

 private:
  // host_slack=recurring, the first followed iteration just ended: the plan
  // made again with the waits for the host that recurred in it, if any.
  void plan_with_recurring_waits(PolicyContext& ctx);
  // Stops following: no plan, no guard (the clocks as they are).
  void drop_plan();
  bool waits_confirmed_ = false;  // the recurring waits are slack
  bool replanning_ = false;
  void trip(PolicyContext& ctx, int position);
  // While catching up: back to the default clocks once the account, less
  // what it repays while that switch lands, is within the allowance.
  void catch_up(PolicyContext& ctx);
  // The kernels from position `from` to the iteration's end at `pair`.
  void hold(PolicyContext& ctx, int from, const Clocks& pair);
  // The first position after `position` that a switch requested now reaches
  // in time (its predicted start at least the expected latency away).
  int takeover(const PolicyContext& ctx, int position) const;
  struct Running {
    std::uint32_t kernel = 0;
    int position = -1;
    std::int64_t start_ns = 0;
  };
  // The kernels in flight under the plan and the pair each was planned at
  // (the default pair where the plan does not know it): the switcher's floor.
  std::vector<std::pair<std::uint32_t, Clocks>> in_flight_;
  void set_floor(PolicyContext& ctx, std::uint32_t except);
  std::unique_ptr<NativeShadow> native_;
  std::vector<Switcher::Step> plan_steps_;
  bool plan_early_ = true;
  bool off_plan_ = false;     // this iteration follows a re-plan or held clocks
  bool catching_up_ = false;  // at the fastest clocks until the account is repaid
  Clocks catch_up_pair_;
  // When the fastest clocks landed, and the account then (-1: not yet landed).
  std::int64_t catch_up_from_ns_ = -1;
  double catch_up_from_debt_ns_ = 0.0;
  int replans_ = 0;  // this iteration
  std::int32_t guard_iteration_ = -1;
  std::vector<Running> running_;  // kernels started under the guard, not ended yet
  // This iteration's deviation from the guard's path by phase: the sum of
  // (measured - native) - (planned - reference), and of the reference.
  std::array<double, kPhaseCount> phase_dev_ns_{}, phase_ref_ns_{};
  // What the kernels after `position` are expected to add to the account
  // beyond the path: each at its phase's deviation per reference ns this
  // iteration (a phase the iteration has not reached yet: none).
  double expected_rest_deviation_ns(int position) const;
};

}  // namespace dvfsim::plan
