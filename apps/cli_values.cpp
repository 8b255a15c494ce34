#include "apps/cli_values.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>

namespace dvfsim {

std::optional<std::uint64_t> parse_unsigned(const std::string& text, std::uint64_t max) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  std::uint64_t v = 0;
  const auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || p != text.data() + text.size() || v > max) return std::nullopt;
  return v;
}

std::optional<double> parse_finite(const std::string& text, double lo, double hi) {
  double v = 0;
  const auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || p != text.data() + text.size() || !std::isfinite(v) || v < lo || v > hi)
    return std::nullopt;
  return v;
}

CLI::Validator unsigned_in(std::uint64_t min, std::uint64_t max) {
  return CLI::Validator(
      [min, max](std::string& s) -> std::string {
        const auto v = parse_unsigned(s, max);
        if (!v || *v < min)
          return fmt::format("'{}' is not a whole number in [{}, {}]", s, min, max);
        return "";
      },
      fmt::format("INT in [{}, {}]", min, max));
}

CLI::Validator finite_in(double lo, double hi) {
  return CLI::Validator(
      [lo, hi](std::string& s) -> std::string {
        if (!parse_finite(s, lo, hi))
          return fmt::format("'{}' is not a number in [{}, {}]", s, lo, hi);
        return "";
      },
      fmt::format("NUMBER in [{}, {}]", lo, hi));
}

}  // namespace dvfsim
