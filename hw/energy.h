#pragma once
// Energy of a time window from NVML samples. The board's energy counter
// (nvmlDeviceGetTotalEnergyConsumption) only refreshes every ~100 ms, so a raw
// difference of two readings covers the ticks, not the window. estimate_energy()
// finds the ticks (changes of the counter between consecutive samples) and bounds
// the window's energy from both sides:
//   lower = counter(last tick <= end) - counter(first tick >= start)
//   upper = counter(first tick >= end) - counter(last tick <= start)
// then adds the energy of the two unaligned edges from the power readings and
// reports the distance to the farther bound as the uncertainty.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dvfsim::hw {

struct EnergySample {
  int64_t t_ns = 0;    // any time base shared with the window bounds
  double power_w = 0;  // the best power reading at t (instantaneous if available)
  std::optional<unsigned long long> energy_mj;  // the energy counter, if readable
};

struct EnergyEstimate {
  double energy_j = 0;
  double uncertainty_j = 0;  // |true - estimate| <= this, given the counter's semantics
  double lower_bound_j = 0;
  double upper_bound_j = 0;
  // Median time between counter changes; nullopt with fewer than two ticks seen.
  std::optional<double> tick_period_s;
  int ticks_observed = 0;  // counter changes seen in all samples
  std::string method;      // "energy-counter" or "power-integral"
};

// `samples` sorted by time, covering [start_ns, end_ns] and, for the counter
// method, some time before and after it. Uses the counter when at least one sample
// has a counter value; otherwise integrates power (sample and hold) and reports
// (max - min power) x duration as the uncertainty.
EnergyEstimate estimate_energy(const std::vector<EnergySample>& samples, int64_t start_ns,
                               int64_t end_ns);

// True once the samples show a counter change that happened wholly after end_ns
// (needed for the upper bound), or when the samples have no counter.
bool has_tick_after(const std::vector<EnergySample>& samples, int64_t end_ns);

}  // namespace dvfsim::hw
