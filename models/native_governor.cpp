#include "models/native_governor.h"

#include <algorithm>
#include <cmath>

namespace dvfsim {
namespace {

constexpr const char* kName = "native";

const bool registered = register_model({
    .kind = ModelKind::governor,
    .name = kName,
    .description = "power-cap firmware: every period, the highest core clock whose predicted "
                   "power fits under target_fraction x the power limit; down at once, up in steps",
    .params =
        {
            {"period_ms", true, 0.01, 10000, "sampling period (ms)"},
            {"up_step_mhz", true, 1, 100000, "largest rise of the cap per period (MHz)"},
            {"target_fraction", true, 0.5, 1.0, "fraction of power.limit_w it aims at"},
        },
    .make_latency = {},
    .make_power = {},
    .make_governor = [](const Device& d, const PowerModel& power) -> std::unique_ptr<Governor> {
      return std::make_unique<NativeGovernor>(d, power);
    },
});

}  // namespace

NativeGovernorParams NativeGovernorParams::of(const Device& d) {
  const Params& p = model_params(d, ModelKind::governor, kName);
  return {p.number("period_ms"), p.number("up_step_mhz"), p.number("target_fraction")};
}

NativeGovernor::NativeGovernor(const Device& d, const PowerModel& power)
    : d_(d),
      power_(power),
      p_(NativeGovernorParams::of(d)),
      period_ns_(static_cast<std::int64_t>(std::llround(p_.period_ms * 1e6))) {}

std::int32_t NativeGovernor::cap_core_mhz(const Utilisation& u, const Clocks& current,
                                          std::int32_t current_cap_mhz) const {
  const auto& clocks = d_.core_clocks_mhz;
  const double target_w = d_.power_limit_w * p_.target_fraction;
  // Highest clock whose predicted power fits; power rises with the clock.
  int best = 0;
  for (int i = static_cast<int>(clocks.size()) - 1; i >= 0; --i) {
    Clocks c = current;
    c.core_mhz = clocks[static_cast<std::size_t>(i)];
    c.core_idx = static_cast<std::int16_t>(i);
    if (power_.power_w(u, c) <= target_w) {
      best = i;
      break;
    }
  }
  std::int32_t cap = clocks[static_cast<std::size_t>(best)];
  if (cap > current_cap_mhz) {
    const double limit = current_cap_mhz + p_.up_step_mhz;
    auto it = std::upper_bound(clocks.begin(), clocks.end(), static_cast<std::int32_t>(limit));
    cap = std::min(cap, *(it == clocks.begin() ? it : it - 1));
    cap = std::max(cap, current_cap_mhz);
  }
  return cap;
}

}  // namespace dvfsim
