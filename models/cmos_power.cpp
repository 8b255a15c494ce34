#include "models/cmos_power.h"

namespace dvfsim {

CmosPower::CmosPower(const Device& d) : p_(d.power) {
  for (const auto f : d.core_clocks_mhz) {
    const double v = d.volts(f);
    const double v2f = v * v * f * 1e-3;
    core_.push_back({p_.const_w + p_.leak_w_per_v * v + p_.clock_w_per_v2ghz * v2f, v2f});
  }
  for (const auto f : d.memory_clocks_mhz) mem_ghz_.push_back(f * 1e-3);
}

}  // namespace dvfsim
