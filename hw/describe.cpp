#include "hw/describe.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <utility>

namespace dvfsim::hw {
namespace {

struct ReasonName {
  unsigned long long bit;
  const char* name;
};

// NVML's nvmlClocksEventReasons bits.
constexpr std::array<ReasonName, 9> kReasonNames = {{
    {0x1, "GpuIdle"},
    {0x2, "AppClocks"},
    {0x4, "SwPowerCap"},
    {0x8, "HwSlowdown"},
    {0x10, "SyncBoost"},
    {0x20, "SwThermal"},
    {0x40, "HwThermal"},
    {0x80, "HwPowerBrake"},
    {0x100, "DisplayClock"},
}};

std::string join(const std::vector<std::string>& parts, const char* separator) {
  std::string out;
  for (const auto& part : parts) {
    if (!out.empty()) out += separator;
    out += part;
  }
  return out;
}

}  // namespace

std::string describe_clock_list(std::vector<unsigned> mhz) {
  std::sort(mhz.begin(), mhz.end());
  mhz.erase(std::unique(mhz.begin(), mhz.end()), mhz.end());
  if (mhz.empty()) return "none";
  std::vector<std::string> parts;
  bool single_run = false;
  size_t i = 0;
  while (i < mhz.size()) {
    size_t run_end = i + 1;  // one past the last value of the run starting at i
    if (i + 2 < mhz.size()) {
      unsigned step = mhz[i + 1] - mhz[i];
      run_end = i + 2;
      while (run_end < mhz.size() && mhz[run_end] - mhz[run_end - 1] == step) ++run_end;
      if (run_end - i >= 3) {
        single_run = (i == 0 && run_end == mhz.size());
        parts.push_back(fmt::format("{}–{} step {}", mhz[i], mhz[run_end - 1], step));
        i = run_end;
        continue;
      }
    }
    parts.push_back(fmt::format("{}", mhz[i]));
    ++i;
  }
  if (single_run) {
    // "345–1980 MHz step 15 (110 values)"
    unsigned step = mhz[1] - mhz[0];
    return fmt::format("{}–{} MHz step {} ({} values)", mhz.front(), mhz.back(), step, mhz.size());
  }
  return fmt::format("{} MHz ({} value{})", join(parts, ", "), mhz.size(),
                     mhz.size() == 1 ? "" : "s");
}

std::string clock_event_reason_names(unsigned long long bits) {
  if (bits == 0) return "none";
  std::vector<std::string> names;
  unsigned long long unknown = bits;
  for (const auto& reason : kReasonNames) {
    if ((bits & reason.bit) != 0) {
      names.emplace_back(reason.name);
      unknown &= ~reason.bit;
    }
  }
  if (unknown != 0) names.push_back(fmt::format("unknown 0x{:x}", unknown));
  return join(names, "|");
}

std::string describe_clock_event_reasons(unsigned long long bits) {
  std::string names = clock_event_reason_names(bits);
  std::replace(names.begin(), names.end(), '|', ',');
  std::string spaced;
  for (char c : names) {
    spaced += c;
    if (c == ',') spaced += ' ';
  }
  return fmt::format("0x{:x} ({})", bits, spaced);
}

}  // namespace dvfsim::hw
