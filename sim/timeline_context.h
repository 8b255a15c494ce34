#pragma once
// What a policy driving one simulated GPU sees (sim/policy.h's PolicyContext),
// answered once for every driver of a GpuTimeline: the replay engine
// (sim/engine.cpp) and the pipeline replay (parallel/replay.cpp) derive from
// TimelineContext and add only how they feed kernels to the timeline.
#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "sim/engine.h"
#include "sim/error.h"
#include "sim/gpu_timeline.h"
#include "sim/policy.h"

namespace dvfsim {

// The timeline a replay under `cfg` runs on `d`: the device's switch-latency
// distributions and memory-switch stall, or the configuration's overrides.
TimelineConfig timeline_config(const Device& d, const EngineConfig& cfg, std::uint64_t seed,
                               bool record_segments);

// The run a policy may look at besides the GPU's state.
struct ContextInputs {
  const Device* device = nullptr;
  const Workload* workload = nullptr;
  const std::vector<KernelCost>* costs = nullptr;
  const LatencyModel* latency = nullptr;
  const PowerModel* power = nullptr;
  const Governor* governor = nullptr;  // the firmware cap in force; nullptr: off
  const RunResult* baseline = nullptr;
  WarmFirmwareCache* warm_cache = nullptr;  // EngineInputs::warm_cache
  std::string policy_name;                  // names the policy in errors
};

// The fields every driver's inputs share (sim/engine.h's EngineInputs,
// parallel/replay.h's ParallelInputs); the firmware cap only when it is on.
template <class Inputs>
ContextInputs shared_context_inputs(const Inputs& in, const EngineConfig& cfg) {
  ContextInputs c;
  c.device = in.device;
  c.workload = in.workload;
  c.costs = in.costs;
  c.latency = in.latency;
  c.power = in.power;
  c.governor = cfg.power_cap ? in.governor : nullptr;
  c.policy_name = in.policy_name;
  return c;
}

template <class Base>
class TimelineContext : public Base, private TimelineListener {
  static_assert(std::is_base_of_v<PolicyContext, Base>);

 public:
  // `policy` receives the timer callbacks; it must outlive the context.
  TimelineContext(ContextInputs in, Policy* policy, const TimelineConfig& tc)
      : ctx_(std::move(in)),
        timer_policy_(policy),
        tl_(GpuModel{ctx_.device, ctx_.latency, ctx_.power, ctx_.governor}, tc) {}

  std::int64_t now_ns() const final { return tl_.now(); }
  void request(std::int32_t core_mhz, std::int32_t memory_mhz) final {
    const std::string why = ctx_.device->why_unsupported(core_mhz, memory_mhz);
    if (!why.empty()) throw InputError(fmt::format("policy {}: {}", ctx_.policy_name, why));
    tl_.request(core_mhz, memory_mhz);
  }
  void set_timer(std::int64_t at_ns) final { tl_.set_wakeup(at_ns, this); }
  Clocks effective() const final { return tl_.effective(); }
  Clocks wanted() const final { return tl_.wanted(); }
  double expected_core_switch_ns() const final { return tl_.mean_core_switch_ns(); }
  double expected_memory_switch_ns() const final { return tl_.mean_memory_switch_ns(); }
  double core_switch_quantile_ns(double q) const final { return tl_.core_switch_quantile_ns(q); }
  double memory_switch_quantile_ns(double q) const final {
    return tl_.memory_switch_quantile_ns(q);
  }
  double expected_memory_stall_ns() const final { return tl_.expected_memory_stall_ns(); }
  const Device& device() const final { return *ctx_.device; }
  const Workload& workload() const final { return *ctx_.workload; }
  const std::vector<KernelCost>& costs() const final { return *ctx_.costs; }
  const LatencyModel& latency() const final { return *ctx_.latency; }
  const PowerModel& power() const final { return *ctx_.power; }
  const Governor* governor() const final { return ctx_.governor; }
  const RunResult* baseline() const final { return ctx_.baseline; }
  WarmFirmwareCache* warm_firmware_cache() const final { return ctx_.warm_cache; }

 protected:
  const ContextInputs& context_inputs() const { return ctx_; }

 private:
  void on_wakeup() final { timer_policy_->on_timer(*this); }

  ContextInputs ctx_;
  Policy* timer_policy_;

 protected:
  GpuTimeline tl_;
};

}  // namespace dvfsim
