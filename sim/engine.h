#pragma once
// The discrete-event replay (DESIGN.md, "Semantics"). One GPU executes the
// workload's kernels one at a time in host launch order; kernels become ready at
// their host launch time shifted by the delay the simulated GPU imposed on the
// host through synchronising calls; clocks change only through the switch model
// (policy requests) and the firmware's power cap; energy is integrated exactly
// over piecewise-constant power.
#include <cstdint>
#include <string>
#include <vector>

#include "sim/models.h"
#include "sim/policy.h"
#include "sim/result.h"
#include "sim/workload.h"

namespace dvfsim {

struct EngineConfig {
  std::uint64_t seed = 1;
  bool record_timeline = true;
  // Replaces every switch latency of the device (both domains) when >= 0.
  double switch_latency_override_us = -1.0;
  // Replaces the device's memory-switch stall when >= 0. Either way a stall is
  // never longer than the switch's own latency (so zero latency means free
  // switches, stall included).
  double memory_stall_override_us = -1.0;
  // The firmware power cap; off only in tests that check the raw switch model.
  bool power_cap = true;
  // Start with the firmware cap at its steady state for the workload (as after
  // warm-up steps) rather than at the highest clock.
  bool warm_firmware = true;
};

struct EngineInputs {
  const Workload* workload = nullptr;
  const Device* device = nullptr;  // the simulated GPU
  const LatencyModel* latency = nullptr;
  const PowerModel* power = nullptr;
  const Governor* governor = nullptr;
  const std::vector<KernelCost>* costs = nullptr;  // latency->prepare(...) of the workload
  const RunResult* baseline = nullptr;
  std::string policy_name = "policy";  // names the policy in errors and results
};

RunResult replay(const EngineInputs& in, Policy& policy, const EngineConfig& cfg);

// Draws one switch latency in ns from a distribution.
class Rng;
double draw_latency_ns(const LatencyDistribution& d, Rng& rng);

}  // namespace dvfsim
