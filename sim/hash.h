#pragma once
// The one hash of dvfsim: 64-bit FNV-1a. Used for content fingerprints of
// input files, sweep run ids and kernel launch keys; stable across runs,
// platforms and builds (results directories depend on it), not cryptographic.
#include <cstdint>
#include <string_view>

namespace dvfsim {

class Fnv1a {
 public:
  static constexpr std::uint64_t kOffset = 1469598103934665603ull;
  static constexpr std::uint64_t kPrime = 1099511628211ull;

  // One byte at a time (the FNV-1a definition).
  Fnv1a& bytes(std::string_view s) {
    for (const char c : s) word(static_cast<unsigned char>(c));
    return *this;
  }
  // A whole value as one step (faster; for in-memory keys, not files).
  Fnv1a& word(std::uint64_t v) {
    h_ ^= v;
    h_ *= kPrime;
    return *this;
  }
  std::uint64_t value() const { return h_; }

 private:
  std::uint64_t h_ = kOffset;
};

inline std::uint64_t fnv1a(std::string_view s) {
  return Fnv1a().bytes(s).value();
}

}  // namespace dvfsim
