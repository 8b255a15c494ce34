#include "policies/registry.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include "sim/error.h"

namespace dvfsim {
namespace {
std::map<std::string, PolicyInfo>& registry() {
  static std::map<std::string, PolicyInfo> r;
  return r;
}
}  // namespace

std::string Params::str(const std::string& key) const {
  auto it = values_.find(key);
  if (it == values_.end())
    throw InputError(fmt::format("{}: parameter '{}' is not set", owner_, key));
  return it->second;
}

double Params::number(const std::string& key) const {
  const std::string s = str(key);
  double v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size())
    throw InputError(fmt::format("{}: parameter '{}': '{}' is not a number", owner_, key, s));
  return v;
}

std::int32_t Params::integer(const std::string& key) const {
  const std::string s = str(key);
  std::int32_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size())
    throw InputError(fmt::format("{}: parameter '{}': '{}' is not an integer", owner_, key, s));
  return v;
}

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
  std::string declared;
  for (const auto& p : info.params) declared += (declared.empty() ? "" : ", ") + p.name;
  if (declared.empty()) declared = "none";
  for (const auto& [key, value] : given) {
    const bool known = std::any_of(info.params.begin(), info.params.end(),
                                   [&](const ParamSpec& p) { return p.name == key; });
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
