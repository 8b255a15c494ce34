#include "policies/registry.h"

#include <fmt/format.h>

#include <algorithm>

#include "sim/error.h"

namespace dvfsim {
namespace {
std::map<std::string, PolicyInfo>& registry() {
  static std::map<std::string, PolicyInfo> r;
  return r;
}
}  // namespace

bool register_policy(PolicyInfo info) {
  auto name = info.name;
  registry().emplace(std::move(name), std::move(info));
  return true;
}

std::vector<const PolicyInfo*> all_policies() {
  std::vector<const PolicyInfo*> out;
  for (const auto& [name, info] : registry()) out.push_back(&info);
  return out;
}

const PolicyInfo& find_policy(const std::string& name) {
  auto it = registry().find(name);
  if (it == registry().end()) {
    std::string known;
    for (const auto& [n, i] : registry()) known += (known.empty() ? "" : ", ") + n;
    throw InputError(fmt::format("unknown policy '{}' (known: {})", name, known));
  }
  return it->second;
}

Params resolve_params(const PolicyInfo& info, const std::map<std::string, std::string>& given) {
  std::map<std::string, std::string> values;
  const std::string declared = param_names(info.params);
  for (const auto& [key, value] : given) {
    const std::string& name = key;  // clang 14 cannot capture structured bindings
    const bool known = std::any_of(info.params.begin(), info.params.end(),
                                   [&](const ParamSpec& p) { return p.name == name; });
    if (!known)
      throw InputError(fmt::format("policy {}: unknown parameter '{}' (its parameters: {})",
                                   info.name, key, declared));
    values[key] = value;
  }
  for (const auto& p : info.params) {
    if (values.count(p.name)) continue;
    if (p.kind == ParamSpec::Kind::required)
      throw InputError(
          fmt::format("policy {}: parameter '{}' is required ({}); set it with --set {}=...",
                      info.name, p.name, p.description, p.name));
    if (p.kind == ParamSpec::Kind::defaulted) values[p.name] = p.default_value;
  }
  return Params("policy " + info.name, std::move(values));
}

}  // namespace dvfsim
