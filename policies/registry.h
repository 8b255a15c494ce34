#pragma once
// The policy registry: every policy registers itself by name with a
// description and its declared parameters (required, with a default, or
// optional; sim/params.h), in the style of Ramulator 2's interface + implementation registry.
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "sim/params.h"
#include "sim/policy.h"

namespace dvfsim {

// What a policy that picks the board power limit before the run may do: try
// the run at a limit (time in s, energy in J), within the device's range.
struct PowerLimitProfiler {
  double min_w = 0.0;  // the device's allowed range (power.limit_min_w..limit_max_w)
  double max_w = 0.0;
  double default_w = 0.0;  // the device file's limit_w
  std::function<std::pair<double, double>(double limit_w)> time_energy_at;
  // Where the choice reports its solve (the runner adds it to the run's result).
  std::function<void(const SolveReport&)> report = [](const SolveReport&) {};
};

struct PolicyInfo {
  std::string name;
  std::string description;
  bool oracle = false;  // reads the future: results are upper bounds
  std::vector<ParamSpec> params;
  std::function<std::unique_ptr<Policy>(const Params&)> make;
  // Set by policies whose knob is the board power limit (power-limit): the
  // runner calls it before the run and replays the policy at the limit it
  // returns. Empty for clock policies.
  std::function<double(const Params&, const PowerLimitProfiler&)> choose_power_limit = {};
};

// Registers at static-initialisation time; returns true (for a static bool).
bool register_policy(PolicyInfo info);
// Every registered policy, sorted by name.
std::vector<const PolicyInfo*> all_policies();
// Throws InputError listing the known names when `name` is unknown.
const PolicyInfo& find_policy(const std::string& name);
// Checks `given` against the declared parameters (unknown keys, missing
// required ones, with the list of valid keys in the message) and fills defaults.
Params resolve_params(const PolicyInfo& info, const std::map<std::string, std::string>& given);

}  // namespace dvfsim
