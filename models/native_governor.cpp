#include "models/native_governor.h"

#include <cmath>

namespace dvfsim {

NativeGovernor::NativeGovernor(const Device& d, const PowerModel& power)
    : d_(d),
      power_(power),
      period_ns_(static_cast<std::int64_t>(std::llround(d.governor.period_ms * 1e6))) {}

std::int32_t NativeGovernor::cap_core_mhz(const Utilisation& u, const Clocks& current,
                                          std::int32_t current_cap_mhz) const {
  return firmware_cap_core_mhz(d_, power_, u, current, current_cap_mhz);
}

}  // namespace dvfsim
