#pragma once
// Objectives of the optimising policies (docs/design.md, "Policies"):
//   waste   least energy with slowdown <= max_slowdown % against the reference
//           time (the baseline's, or the time at default clocks) — Spaan et
//           al.'s "compute waste" objective; max_slowdown = 0 is their strict
//           variant, > 0 the relaxed one
//   energy  least energy, no time bound
//   edp     least energy x delay
//   ed2p    least energy x delay^2
// Every optimising policy declares the parameters `objective` and
// `max_slowdown` through objective_params().
#include <string>
#include <string_view>
#include <vector>

#include "policies/registry.h"

namespace dvfsim {

enum class ObjectiveKind { waste, energy, edp, ed2p };

struct Objective {
  ObjectiveKind kind = ObjectiveKind::waste;
  double max_slowdown_pct = 0.0;  // waste only: allowed slowdown in percent

  bool time_bounded() const { return kind == ObjectiveKind::waste; }
  // The time budget for a reference time: reference x (1 + max_slowdown/100),
  // or +infinity when the objective has no time bound.
  double budget(double reference) const;
  // Whether a replayed run of `time` meets `budget`: within ten parts per
  // million, so that a plan whose replay ties the reference up to the
  // engine's nanosecond rounding (a host-bound run that absorbs its host
  // slack exactly ends when the baseline does) is not rejected as slower.
  // Plans are made against the budget itself.
  bool replay_meets(double time, double budget) const {
    return !time_bounded() || time <= budget * (1.0 + kReplayTolerance);
  }
  static constexpr double kReplayTolerance = 1e-5;
  // The value to minimise for a run of `energy_j` joules and `time` (any unit);
  // for waste and energy it is the energy (the bound is handled by the solver).
  double score(double energy_j, double time) const;
};

std::string_view to_string(ObjectiveKind k);

// The declared parameters `objective` (default waste) and `max_slowdown`
// (default 0), to append to a policy's ParamSpec list.
std::vector<ParamSpec> objective_params();
// Reads them; throws InputError naming the policy on a bad value.
Objective parse_objective(const Params& p, const std::string& policy);

}  // namespace dvfsim
