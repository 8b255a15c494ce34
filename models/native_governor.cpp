#include "models/native_governor.h"

#include <algorithm>
#include <cmath>

namespace dvfsim {

NativeGovernor::NativeGovernor(const Device& d, const PowerModel& power)
    : d_(d),
      power_(power),
      period_ns_(static_cast<std::int64_t>(std::llround(d.governor.period_ms * 1e6))),
      target_w_(d.power.limit_w * d.governor.target_fraction) {}

std::int32_t NativeGovernor::cap_core_mhz(const Utilisation& u, const Clocks& current,
                                          std::int32_t current_cap_mhz) const {
  const auto& clocks = d_.core_clocks_mhz;
  // Highest clock whose predicted power fits; power rises with the clock.
  int best = 0;
  for (int i = static_cast<int>(clocks.size()) - 1; i >= 0; --i) {
    Clocks c = current;
    c.core_mhz = clocks[static_cast<std::size_t>(i)];
    c.core_idx = static_cast<std::int16_t>(i);
    if (power_.power_w(u, c) <= target_w_) {
      best = i;
      break;
    }
  }
  std::int32_t cap = clocks[static_cast<std::size_t>(best)];
  if (cap > current_cap_mhz) {
    const double limit = current_cap_mhz + d_.governor.up_step_mhz;
    auto it = std::upper_bound(clocks.begin(), clocks.end(), static_cast<std::int32_t>(limit));
    cap = std::min(cap, *(it == clocks.begin() ? it : it - 1));
    cap = std::max(cap, current_cap_mhz);
  }
  return cap;
}

}  // namespace dvfsim
