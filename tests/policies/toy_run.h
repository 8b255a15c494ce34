#pragma once
// One run of a registered policy on a toy GPU whose models a test writes, the
// way the runner makes it (the policy's solve reports and notes kept).
#include <map>
#include <string>
#include <vector>

#include "policies/registry.h"
#include "sim/engine.h"

namespace dvfsim::testing {

struct ToyGpu {
  const Workload* workload = nullptr;
  const Device* device = nullptr;
  const LatencyModel* latency = nullptr;
  const PowerModel* power = nullptr;
  const Governor* governor = nullptr;
  const std::vector<KernelCost>* costs = nullptr;
};

// `policy` replayed on the toy against `baseline` (may be nullptr);
// `latency_us` < 0: the device's own switch latencies.
inline RunResult replay_toy(const ToyGpu& gpu, Policy& policy, const RunResult* baseline,
                            double latency_us) {
  EngineInputs in;
  in.workload = gpu.workload;
  in.device = gpu.device;
  in.latency = gpu.latency;
  in.power = gpu.power;
  in.governor = gpu.governor;
  in.costs = gpu.costs;
  in.baseline = baseline;
  EngineConfig cfg;
  cfg.switch_latency_override_us = latency_us;
  return replay(in, policy, cfg);
}

inline RunResult run_toy(const ToyGpu& gpu, const std::string& policy,
                         const std::map<std::string, std::string>& params,
                         const RunResult* baseline, double latency_us) {
  const PolicyInfo& info = find_policy(policy);
  auto p = info.make(resolve_params(info, params));
  RunResult r = replay_toy(gpu, *p, baseline, latency_us);
  r.solver = p->solve_reports();
  r.policy_notes = p->notes();
  return r;
}

}  // namespace dvfsim::testing
