#include "policies/objective.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "sim/error.h"

namespace dvfsim {

double Objective::budget(double reference) const {
  if (!time_bounded()) return std::numeric_limits<double>::infinity();
  return reference * (1.0 + max_slowdown_pct / 100.0);
}

double Objective::score(double energy_j, double time) const {
  switch (kind) {
    case ObjectiveKind::waste:
    case ObjectiveKind::energy:
      return energy_j;
    case ObjectiveKind::edp:
      return energy_j * time;
    case ObjectiveKind::ed2p:
      return energy_j * time * time;
  }
  return energy_j;
}

std::string_view to_string(ObjectiveKind k) {
  switch (k) {
    case ObjectiveKind::waste:
      return "waste";
    case ObjectiveKind::energy:
      return "energy";
    case ObjectiveKind::edp:
      return "edp";
    case ObjectiveKind::ed2p:
      return "ed2p";
  }
  return "?";
}

std::vector<ParamSpec> objective_params() {
  return {
      {"objective", ParamSpec::Kind::defaulted, "waste",
       "waste (least energy with slowdown <= max_slowdown against the baseline's time), energy "
       "(least energy, no time bound), edp (energy x delay) or ed2p (energy x delay^2)"},
      {"max_slowdown", ParamSpec::Kind::defaulted, "0",
       "objective=waste: allowed slowdown against the baseline's run time, in percent (>= 0)"},
  };
}

Objective parse_objective(const Params& p, const std::string& policy) {
  Objective o;
  const std::string k = p.str("objective");
  if (k == "waste")
    o.kind = ObjectiveKind::waste;
  else if (k == "energy")
    o.kind = ObjectiveKind::energy;
  else if (k == "edp")
    o.kind = ObjectiveKind::edp;
  else if (k == "ed2p")
    o.kind = ObjectiveKind::ed2p;
  else
    throw InputError(
        fmt::format("policy {}: parameter 'objective': '{}' is not one of waste, "
                    "energy, edp, ed2p",
                    policy, k));
  o.max_slowdown_pct = p.number("max_slowdown");
  if (!(o.max_slowdown_pct >= 0) || !std::isfinite(o.max_slowdown_pct))
    throw InputError(fmt::format("policy {}: parameter 'max_slowdown': {} is not a percentage >= 0",
                                 policy, o.max_slowdown_pct));
  return o;
}

}  // namespace dvfsim
