#include "sim/device.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "sim/error.h"

namespace dvfsim {

KernelGaps Device::kernel_gaps() const {
  return {std::llround(kernel_gap_ns), std::llround(graph_kernel_gap_ns)};
}

double Device::volts(std::int32_t core_mhz) const {
  const auto& c = voltage_curve;
  if (c.empty()) return 1.0;
  if (core_mhz <= c.front().core_mhz) return c.front().volts;
  if (core_mhz >= c.back().core_mhz) return c.back().volts;
  auto hi = std::upper_bound(c.begin(), c.end(), core_mhz,
                             [](std::int32_t f, const VoltagePoint& p) { return f < p.core_mhz; });
  auto lo = hi - 1;
  const double x = static_cast<double>(core_mhz - lo->core_mhz) / (hi->core_mhz - lo->core_mhz);
  return lo->volts + x * (hi->volts - lo->volts);
}

int Device::core_index(std::int32_t core_mhz) const {
  auto it = std::lower_bound(core_clocks_mhz.begin(), core_clocks_mhz.end(), core_mhz);
  if (it == core_clocks_mhz.end() || *it != core_mhz) return -1;
  return static_cast<int>(it - core_clocks_mhz.begin());
}

int Device::memory_index(std::int32_t memory_mhz) const {
  auto it = std::lower_bound(memory_clocks_mhz.begin(), memory_clocks_mhz.end(), memory_mhz);
  if (it == memory_clocks_mhz.end() || *it != memory_mhz) return -1;
  return static_cast<int>(it - memory_clocks_mhz.begin());
}

std::string Device::why_unsupported(std::int32_t core_mhz, std::int32_t memory_mhz) const {
  if (core_index(core_mhz) < 0)
    return fmt::format(
        "core clock {} MHz is not supported by {} (supported: {}..{} MHz, {} values)", core_mhz,
        name, core_clocks_mhz.front(), core_clocks_mhz.back(), core_clocks_mhz.size());
  if (memory_index(memory_mhz) < 0)
    return fmt::format("memory clock {} MHz is not supported by {} (supported: {} MHz)", memory_mhz,
                       name, fmt::join(memory_clocks_mhz, ", "));
  for (const auto& l : memory_core_limits)
    if (l.memory_mhz == memory_mhz && core_mhz > l.max_core_mhz)
      return fmt::format(
          "memory clock {} MHz is allowed only with core <= {} MHz on {} (asked {} MHz)",
          memory_mhz, l.max_core_mhz, name, core_mhz);
  return {};
}

bool Device::supports(std::int32_t core_mhz, std::int32_t memory_mhz) const {
  return why_unsupported(core_mhz, memory_mhz).empty();
}

double Device::tensor_flops_per_s(std::int32_t core_mhz) const {
  return tensor_flops_per_clock_per_sm * sm_count * core_mhz * 1e6;
}
double Device::fp32_flops_per_s(std::int32_t core_mhz) const {
  return fp32_flops_per_clock_per_sm * sm_count * core_mhz * 1e6;
}
double Device::issue_per_s(std::int32_t core_mhz) const {
  return static_cast<double>(warp_schedulers_per_sm) * sm_count * core_mhz * 1e6;
}
double Device::dram_bytes_per_s(std::int32_t memory_mhz) const {
  return dram_bandwidth_gbs * 1e9 * memory_mhz / dram_bandwidth_memory_mhz;
}

}  // namespace dvfsim
