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
  EngineInputs in;
  in.workload = &ctx.workload();
  in.device = &ctx.device();
  in.latency = &ctx.latency();
  in.power = &ctx.power();
  in.governor = ctx.governor();
  in.costs = &ctx.costs();
  EngineConfig cfg;
  cfg.record_timeline = false;
  cfg.power_cap = in.governor != nullptr;
  cfg.switch_latency_override_us = ctx.expected_core_switch_ns() * 1e-3;
  return replay(in, p, cfg);
}

}  // namespace dvfsim::plan
