#include "policies/planning/replay.h"

#include "sim/engine.h"

namespace dvfsim::plan {

namespace {

class PlanPolicy final : public Policy {
 public:
  explicit PlanPolicy(const std::vector<Clocks>* pairs) : pairs_(pairs) {}
  void on_kernel_start(PolicyContext& ctx, std::uint32_t k) override {
    if (!pairs_) return;
    const Clocks& c = (*pairs_)[k];
    if (!(ctx.wanted() == c)) ctx.request(c.core_mhz, c.memory_mhz);
  }

 private:
  const std::vector<Clocks>* pairs_;
};

}  // namespace

RunResult replay_plan(const PolicyContext& ctx, const std::vector<Clocks>* pairs) {
  PlanPolicy p(pairs);
  return replay_with(ctx, p);
}

RunResult replay_with(const PolicyContext& ctx, Policy& p) {
  // Each domain switches at its own expected latency (a copy of the device
  // with fixed distributions), so a memory switch is not replayed at the core
  // clock's latency; the stall is the one the run expects.
  Device dev = ctx.device();
  dev.core_switch = LatencyDistribution{};
  dev.core_switch.value_us = ctx.expected_core_switch_ns() * 1e-3;
  dev.memory_switch = LatencyDistribution{};
  dev.memory_switch.value_us = ctx.expected_memory_switch_ns() * 1e-3;
  EngineInputs in;
  in.workload = &ctx.workload();
  in.device = &dev;
  in.latency = &ctx.latency();
  in.power = &ctx.power();
  in.governor = ctx.governor();
  in.costs = &ctx.costs();
  in.warm_cache = ctx.warm_firmware_cache();
  EngineConfig cfg;
  cfg.record_timeline = false;
  cfg.power_cap = in.governor != nullptr;
  cfg.memory_stall_override_us = ctx.expected_memory_stall_ns() * 1e-3;
  return replay(in, p, cfg);
}

}  // namespace dvfsim::plan
