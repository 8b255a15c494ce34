#include "sim/models.h"

#include <fmt/format.h>

#include <algorithm>

#include "sim/error.h"

namespace dvfsim {

Clocks make_clocks(const Device& d, std::int32_t core_mhz, std::int32_t memory_mhz) {
  const int ci = d.core_index(core_mhz);
  const int mi = d.memory_index(memory_mhz);
  if (ci < 0 || mi < 0) throw InputError(d.why_unsupported(core_mhz, memory_mhz));
  return Clocks{core_mhz, memory_mhz, static_cast<std::int16_t>(ci), static_cast<std::int16_t>(mi)};
}

std::int32_t firmware_cap_core_mhz(const Device& d, const PowerModel& power, const Utilisation& u,
                                   const Clocks& current, std::int32_t current_cap_mhz) {
  const auto& clocks = d.core_clocks_mhz;
  const double target_w = d.power.limit_w * d.governor.target_fraction;
  // Highest clock whose predicted power fits; power rises with the clock.
  int best = 0;
  for (int i = static_cast<int>(clocks.size()) - 1; i >= 0; --i) {
    Clocks c = current;
    c.core_mhz = clocks[static_cast<std::size_t>(i)];
    c.core_idx = static_cast<std::int16_t>(i);
    if (power.power_w(u, c) <= target_w) {
      best = i;
      break;
    }
  }
  std::int32_t cap = clocks[static_cast<std::size_t>(best)];
  if (cap > current_cap_mhz) {
    const double limit = current_cap_mhz + d.governor.up_step_mhz;
    auto it = std::upper_bound(clocks.begin(), clocks.end(), static_cast<std::int32_t>(limit));
    cap = std::min(cap, *(it == clocks.begin() ? it : it - 1));
    cap = std::max(cap, current_cap_mhz);
  }
  return cap;
}

}  // namespace dvfsim
