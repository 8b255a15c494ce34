#pragma once
// The firmware's own clock control when nobody sets clocks, and the power cap it
// keeps under locked clocks too: every period it takes the average activity of
// the last period, finds the highest core clock at which the power model puts
// that activity under target_fraction x the board power limit, and moves there —
// down at once, up by at most up_step_mhz per period (the H200 drops within one
// 100 ms sample under a GEMM and needs ~0.4 s to climb back).
//
// Its parameters are the keys of a device file's `governor: {model: native, ...}`
// section (declared in native_governor.cpp).
#include "sim/model_registry.h"

namespace dvfsim {

struct NativeGovernorParams {
  double period_ms = 100.0;
  double up_step_mhz = 120.0;     // at most this much up per period
  double target_fraction = 0.99;  // aim at this fraction of the limit
  // The device's `governor:` section; InputError when it uses another model.
  static NativeGovernorParams of(const Device& d);
};

class NativeGovernor final : public Governor {
 public:
  NativeGovernor(const Device& d, const PowerModel& power);
  std::int64_t period_ns() const override { return period_ns_; }
  std::int32_t cap_core_mhz(const Utilisation& last_period, const Clocks& current,
                            std::int32_t current_cap_mhz) const override;

 private:
  const Device& d_;
  const PowerModel& power_;
  NativeGovernorParams p_;
  std::int64_t period_ns_;
};

}  // namespace dvfsim
