#pragma once
// The discrete-event replay (docs/simulation.md, "Semantics"). The engine
// drives one simulated GPU (sim/gpu_timeline.h: clocks, switches, stalls,
// firmware cap, energy) with the workload's kernels in host launch order;
// kernels become ready at their host launch time shifted by the delay the
// simulated GPU imposed on the host through synchronising calls; clocks change
// only through the switch model (policy requests) and the firmware's power cap.
#include <cstdint>
#include <string>
#include <vector>

#include "sim/gpu_timeline.h"
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

}  // namespace dvfsim
