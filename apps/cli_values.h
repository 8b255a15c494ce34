#pragma once
// Checks of numeric command-line values, applied to the text before CLI11
// converts it (a uint64 option would otherwise take "-1" as 2^64 - 1 and
// "2^64" as 2^64 - 1, and a double option takes "inf" and "nan"). A failed
// check is a usage error (exit 2) naming the option and the accepted range.
#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <string>

namespace dvfsim {

// The text as a whole decimal number in [0, max], else std::nullopt.
std::optional<std::uint64_t> parse_unsigned(const std::string& text,
                                            std::uint64_t max = UINT64_MAX);

// The text as a finite number in [lo, hi], else std::nullopt.
std::optional<double> parse_finite(const std::string& text, double lo, double hi);

// Validator: a whole decimal number in [min, max] (no sign, no exponent).
CLI::Validator unsigned_in(std::uint64_t min, std::uint64_t max);

// Validator: a finite number in [lo, hi].
CLI::Validator finite_in(double lo, double hi);

}  // namespace dvfsim
