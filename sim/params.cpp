#include "sim/params.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>

#include "sim/error.h"

namespace dvfsim {

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
  if (ec != std::errc() || p != s.data() + s.size() || !std::isfinite(v))
    throw InputError(
        fmt::format("{}: parameter '{}': '{}' is not a finite number", owner_, key, s));
  return v;
}

double Params::number_or(const std::string& key, double fallback) const {
  return has(key) ? number(key) : fallback;
}

std::int32_t Params::integer(const std::string& key) const {
  const std::string s = str(key);
  std::int32_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size())
    throw InputError(fmt::format("{}: parameter '{}': '{}' is not an integer", owner_, key, s));
  return v;
}

std::string param_names(const std::vector<ParamSpec>& specs) {
  std::string out;
  for (const auto& p : specs) out += (out.empty() ? "" : ", ") + p.name;
  return out.empty() ? "none" : out;
}

}  // namespace dvfsim
