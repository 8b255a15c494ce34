#pragma once
// The policy registry: every policy registers itself by name with a
// description and its declared parameters (required, with a default, or
// optional; sim/params.h), in the style of Ramulator 2's interface + implementation registry.
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sim/params.h"
#include "sim/policy.h"

namespace dvfsim {

struct PolicyInfo {
  std::string name;
  std::string description;
  bool oracle = false;  // reads the future: results are upper bounds
  std::vector<ParamSpec> params;
  std::function<std::unique_ptr<Policy>(const Params&)> make;
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
