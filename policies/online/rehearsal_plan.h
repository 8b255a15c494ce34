#pragma once
// Choosing among an online policy's candidate plans by rehearsal
// (policies/online/rehearsal.h): each candidate is rehearsed on the learned
// iteration, re-planned with a tighter budget while it misses (as an
// oracle's replay check does), and the best one under the objective whose
// rehearsed time meets the budget wins; none (the default clocks) when no
// candidate uses less energy than the default clocks' rehearsal.
#include <functional>
#include <string>
#include <vector>

#include "policies/objective.h"
#include "policies/online/learner.h"
#include "policies/online/rehearsal.h"
#include "policies/planning/emulation.h"

namespace dvfsim::plan {

// Re-plans of a candidate that missed its budget in rehearsal.
inline constexpr int kRehearsalChecks = 4;
// A candidate that misses by more than this fraction of the budget is not
// re-planned: on the shipped trace's switch-latency sweep, re-planning rescued
// candidates that had missed by up to 2.8 %, never by more; the misses above
// 10 % (switches landing on the wrong kernels) were 2 to 3 times the budget.
inline constexpr double kHopelessOvershoot = 0.1;
// The least relative energy saving (against the default clocks' rehearsal)
// a plan must show to be followed.
inline constexpr double kMinSaving = 1e-6;

struct Proposal {
  bool have = false;
  std::vector<Clocks> pairs;  // per position
  Emulation emulation;        // the plan's own (switches landing at once)
};

struct RehearsedCandidate {
  std::string name;
  std::vector<Switcher::Step> steps;
  bool early = true;
  Rehearsal rehearsal;
  bool feasible = false;
};

class CandidateSet {
 public:
  // `budget_ns`: on the rehearsed iteration time (objective.budget of the
  // default clocks' rehearsal, less any margin). A candidate must meet it in
  // both iterations of its rehearsal (the second, Rehearsal::next_time_ns,
  // against the default clocks' second shifted by the same amount), and is
  // scored on both: a plan is followed for every later iteration, and one
  // whose last segment is shorter than the switch latency pays for it at
  // the start of the next.
  CandidateSet(const PolicyContext& ctx, const std::vector<Observed>& seq,
               const std::vector<ItemSpec>& items, const RehearsalStart& start,
               const Objective& objective, double budget_ns);
  // Plans with `plan(extra_tighten_ns)`, rehearses, and re-plans tighter by
  // the overshoot while it misses the budget (plan::replan_until_met, with
  // kRehearsalChecks checks and kHopelessOvershoot).
  void consider(const std::string& name, bool early,
                const std::function<Proposal(double extra_tighten_ns)>& plan);
  // The best feasible candidate using less energy than `reference` (nullptr: none).
  const RehearsedCandidate* best(const Rehearsal& reference) const;
  const std::vector<RehearsedCandidate>& all() const { return cands_; }
  int rehearsals() const { return rehearsals_; }
  // One line: every candidate's rehearsed time and energy.
  std::string summary() const;

 private:
  const PolicyContext& ctx_;
  const std::vector<ItemSpec>& items_;
  RehearsalStart start_;
  Objective objective_;
  double budget_ns_;
  double next_budget_ns_;  // the budget of the rehearsal's second iteration
  std::vector<RehearsedCandidate> cands_;
  int rehearsals_ = 0;
};

}  // namespace dvfsim::plan
