#pragma once
// The discrete-event replay (docs/design.md, "Semantics" and "Concurrent
// streams"). The engine drives one simulated GPU (sim/gpu_timeline.h: clocks,
// switches, stalls, firmware cap, energy) with the workload's kernels: the host
// launches them in order, each ready at its host launch time shifted by the
// delay the simulated GPU imposed on the host through synchronising calls;
// each starts when ready and when its dependencies have ended (stream order,
// event waits, host syncs and, across streams, the order the capture shows),
// so kernels on different streams run concurrently where the capture shows
// them overlapping. Clocks change only through the switch model (policy
// requests) and the firmware's power cap.
//
// Policy callbacks: on_kernel_start when a kernel starts, on_kernel_end when
// it ends, both in time order. On one stream kernels start and end in launch
// order; on several, a kernel may start before an earlier-launched one on
// another stream, and ends arrive in the order kernels finish.
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

// What a replay reads of the workload alone, the same for every replay of
// it: whether its kernels are on one stream, and the latest traced end
// among kernels 0..i (the host syncs' lookups and the firmware warm-up on one
// stream read it). A function of the kernels' streams and traced times.
struct WorkloadShape {
  bool one_stream = true;
  std::vector<std::int64_t> ended_by;  // per kernel, in launch order
};
WorkloadShape workload_shape(const Workload& w);

struct EngineInputs {
  const Workload* workload = nullptr;
  const Device* device = nullptr;  // the simulated GPU
  const LatencyModel* latency = nullptr;
  const PowerModel* power = nullptr;
  const Governor* governor = nullptr;
  const std::vector<KernelCost>* costs = nullptr;  // latency->prepare(...) of the workload
  const RunResult* baseline = nullptr;
  // Optional: the firmware warm-ups of earlier replays of this workload,
  // costs, device and models (baseline, policy, a planner's replays).
  WarmFirmwareCache* warm_cache = nullptr;
  // Optional: workload_shape(*workload), taken once for every replay of the
  // workload (apps/runner.h Prepared); computed by the replay when null.
  const WorkloadShape* shape = nullptr;
  std::string policy_name = "policy";  // names the policy in errors and results
};

RunResult replay(const EngineInputs& in, Policy& policy, const EngineConfig& cfg);

}  // namespace dvfsim
