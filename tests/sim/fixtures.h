#pragma once
// A toy GPU whose numbers can be checked by hand: core clocks 1000 and 2000 MHz,
// memory clocks 500 and 1000 MHz; a kernel's time is its compute part scaled by
// 2000/core; power is 100 W idle, 200 W busy at 2000 MHz, 150 W busy at 1000 MHz.
#include <functional>
#include <memory>
#include <vector>

#include "sim/engine.h"
#include "sim/policy.h"

namespace dvfsim::testing {

inline Device toy_device() {
  Device d;
  d.name = "toy";
  d.core_clocks_mhz = {1000, 2000};
  d.memory_clocks_mhz = {500, 1000};
  d.default_core_mhz = 2000;
  d.default_memory_mhz = 1000;
  d.deep_idle_core_mhz = 1000;
  d.voltage_curve = {{1000, 0.8}, {2000, 1.0}};
  d.power_limit_w = 1000;
  d.governor = {"native", Params("toy governor", {{"period_ms", "100"},
                                                  {"up_step_mhz", "120"},
                                                  {"target_fraction", "0.99"}})};
  return d;
}

// The toy's kernel durations: the traced duration at 2000 MHz, scaled by
// 2000/core. Test latency models derive from it and state the utilisation.
class ToyDurations : public LatencyModel {
 public:
  std::vector<KernelCost> prepare(const Workload& w, const Device&, const Device&) const override {
    std::vector<KernelCost> out(w.kernels.size());
    for (std::size_t i = 0; i < w.kernels.size(); ++i)
      out[i].compute_ns_mhz = static_cast<double>(w.kernels[i].work.duration_ns) * 2000.0;
    return out;
  }
  double duration_ns(const KernelCost& k, const Clocks& c) const override {
    return k.compute_ns_mhz / c.core_mhz;
  }
};

class ToyLatency final : public ToyDurations {
 public:
  Utilisation utilisation(const KernelCost&, const Clocks&, double) const override {
    return {1.0, 0.0, 0.0};
  }
};

class ToyPower final : public PowerModel {
 public:
  double power_w(const Utilisation& u, const Clocks& c) const override {
    const double busy = c.core_mhz == 2000 ? 100.0 : 50.0;
    return 100.0 + u.busy * busy;
  }
  double deep_idle_w() const override { return 50.0; }
};

// Caps the core clock at `cap` from the first period on.
class FixedCapGovernor final : public Governor {
 public:
  explicit FixedCapGovernor(std::int32_t cap) : cap_(cap) {}
  std::int64_t period_ns() const override { return 1'000'000; }
  std::int32_t cap_core_mhz(const Utilisation&, const Clocks&, std::int32_t) const override {
    return cap_;
  }

 private:
  std::int32_t cap_;
};

// Kernels back to back on stream 0, `durations_ms` at 2000 MHz, launched at
// `launch_ms` host times (default: all at 0), one iteration.
inline Workload toy_workload(const std::vector<double>& durations_ms,
                             const std::vector<double>& launch_ms = {}) {
  Workload w;
  w.source_path = "toy";
  w.capture.device = "toy";
  w.intern("");
  const auto kname = w.intern("k");
  std::int64_t t = 0;
  for (std::size_t i = 0; i < durations_ms.size(); ++i) {
    Kernel k;
    k.name_id = kname;
    k.host_launch_ns = launch_ms.empty() ? 0 : static_cast<std::int64_t>(launch_ms[i] * 1e6);
    k.work.duration_ns = static_cast<std::int64_t>(durations_ms[i] * 1e6);
    t = std::max(t, k.host_launch_ns);
    k.traced_start_ns = t;
    t += k.work.duration_ns;
    w.kernels.push_back(k);
  }
  w.iterations = 1;
  w.iteration_begin = {0, static_cast<std::uint32_t>(w.kernels.size())};
  return w;
}

// Runs a policy given as lambdas.
struct ScriptedPolicy final : public Policy {
  std::function<void(PolicyContext&)> on_begin;
  std::function<void(PolicyContext&, std::uint32_t)> on_start;
  std::function<void(PolicyContext&, std::uint32_t)> on_end;
  std::function<void(PolicyContext&)> on_timer_cb;
  void begin(PolicyContext& c) override {
    if (on_begin) on_begin(c);
  }
  void on_kernel_start(PolicyContext& c, std::uint32_t k) override {
    if (on_start) on_start(c, k);
  }
  void on_kernel_end(PolicyContext& c, std::uint32_t k) override {
    if (on_end) on_end(c, k);
  }
  void on_timer(PolicyContext& c) override {
    if (on_timer_cb) on_timer_cb(c);
  }
};

struct ToyRig {
  Device device = toy_device();
  ToyLatency latency;
  ToyPower power;
  FixedCapGovernor governor{2000};
  Workload workload;
  std::vector<KernelCost> costs;
  const WorkloadShape* shape = nullptr;  // EngineInputs::shape

  explicit ToyRig(Workload w) : workload(std::move(w)) {
    costs = latency.prepare(workload, device, device);
  }
  RunResult run(Policy& p, EngineConfig cfg = {}) {
    EngineInputs in;
    in.workload = &workload;
    in.device = &device;
    in.latency = &latency;
    in.power = &power;
    in.governor = &governor;
    in.costs = &costs;
    in.shape = shape;
    return replay(in, p, cfg);
  }
};

}  // namespace dvfsim::testing
