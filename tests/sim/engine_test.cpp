// Engine tests whose expected joules and nanoseconds can be checked by hand.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <stdexcept>

#include "sim/error.h"
#include "sim/rng.h"
#include "tests/sim/fixtures.h"

namespace dvfsim::testing {
namespace {

EngineConfig no_cap() {
  EngineConfig c;
  c.power_cap = false;
  return c;
}

TEST(Engine, TenMillisecondKernelAt200WattIsTwoJoules) {
  ToyRig rig(toy_workload({10.0}));
  ScriptedPolicy p;
  const RunResult r = rig.run(p, no_cap());
  EXPECT_EQ(r.kernels[0].duration_ns, 10'000'000);
  EXPECT_DOUBLE_EQ(r.energy_j, 2.0);  // 200 W x 10 ms
  EXPECT_DOUBLE_EQ(r.kernels[0].energy_j, 2.0);
  EXPECT_EQ(r.end_ns - r.begin_ns, 10'000'000);
}

TEST(Engine, HostGapIsIdlePowerAtCurrentClocks) {
  // Kernel 0 (10 ms) launched at 0; kernel 1 (10 ms) launched at 15 ms: 5 ms idle at 100 W.
  ToyRig rig(toy_workload({10.0, 10.0}, {0.0, 15.0}));
  ScriptedPolicy p;
  const RunResult r = rig.run(p, no_cap());
  EXPECT_EQ(r.kernels[1].start_ns, 15'000'000);
  EXPECT_DOUBLE_EQ(r.energy_j, 2.0 + 0.5 + 2.0);
  EXPECT_EQ(r.iteration_time_ns[0], 25'000'000);
}

// The device gap (Device::kernel_gap_ns, graph_kernel_gap_ns): a kernel
// launched in time starts a gap after its predecessor on the stream ends, the
// shorter graph gap when both came from one CUDA-graph launch (one
// correlation id). Gaps of 1 ms and 0.25 ms so that the sums are by hand.
TEST(Engine, KernelsLaunchedInTimeStartTheDeviceGapAfterThePreviousOne) {
  Workload w = toy_workload({10.0, 10.0, 10.0});
  w.kernels[0].correlation = 3;
  w.kernels[1].correlation = 7;  // kernels 1 and 2: one graph launch
  w.kernels[2].correlation = 7;
  ToyRig rig(w);
  rig.device.kernel_gap_ns = 1e6;
  rig.device.graph_kernel_gap_ns = 0.25e6;
  ScriptedPolicy p;
  const RunResult r = rig.run(p, no_cap());
  EXPECT_EQ(r.kernels[1].start_ns, 11'000'000);  // 10 ms + the launch gap
  EXPECT_EQ(r.kernels[2].start_ns, 21'250'000);  // 21 ms + the graph gap
  EXPECT_EQ(r.end_ns - r.begin_ns, 31'250'000);
  // 3 x 200 W x 10 ms + 100 W idle x 1.25 ms.
  EXPECT_DOUBLE_EQ(r.energy_j, 6.0 + 0.125);
}

TEST(Engine, TheDeviceGapIsAMinimumNotAddedToAHostGap) {
  // Kernel 1 launched at 15 ms, after kernel 0 ended and the 1 ms gap passed:
  // it starts at its launch, as without a gap: 2 + 0.5 + 2 J.
  ToyRig rig(toy_workload({10.0, 10.0}, {0.0, 15.0}));
  rig.device.kernel_gap_ns = 1e6;
  ScriptedPolicy p;
  const RunResult r = rig.run(p, no_cap());
  EXPECT_EQ(r.kernels[1].start_ns, 15'000'000);
  EXPECT_DOUBLE_EQ(r.energy_j, 4.5);
}

TEST(Engine, TheDeviceGapHoldsPerStream) {
  // Kernel 0 (stream 0) and kernel 1 (stream 1) overlap in the trace and run
  // together (200 W: ToyPower's busy saturates); kernel 2 follows kernel 0 on
  // stream 0 a 1 ms gap after it: 2 J + 100 W x 1 ms + 2 J in 21 ms.
  Workload w = toy_workload({10.0, 10.0, 10.0});
  w.kernels[1].stream = 1;
  w.kernels[1].traced_start_ns = 0;
  w.kernels[2].traced_start_ns = 10'000'000;
  ToyRig rig(w);
  rig.device.kernel_gap_ns = 1e6;
  ScriptedPolicy p;
  const RunResult r = rig.run(p, no_cap());
  EXPECT_EQ(r.kernels[1].start_ns, 0);
  EXPECT_EQ(r.kernels[2].start_ns, 11'000'000);
  EXPECT_EQ(r.end_ns - r.begin_ns, 21'000'000);
  EXPECT_DOUBLE_EQ(r.energy_j, 4.1);
}

TEST(Engine, SwitchLandsAfterLatencyAndKernelRunsAtOldClocksMeanwhile) {
  // At the start of the 10 ms kernel the policy asks for 1000 MHz; the switch
  // takes 4 ms. 4 ms at 2000 MHz do 40 % of the work; the other 60 % take
  // 12 ms at 1000 MHz: 16 ms, 4 ms x 200 W + 12 ms x 150 W = 2.6 J.
  ToyRig rig(toy_workload({10.0}));
  ScriptedPolicy p;
  p.on_start = [](PolicyContext& c, std::uint32_t) { c.request(1000, 1000); };
  EngineConfig cfg = no_cap();
  cfg.switch_latency_override_us = 4000;
  const RunResult r = rig.run(p, cfg);
  EXPECT_EQ(r.kernels[0].duration_ns, 16'000'000);
  EXPECT_NEAR(r.energy_j, 2.6, 1e-12);
  ASSERT_EQ(r.switches.size(), 1u);
  EXPECT_EQ(r.switches[0].request_ns, 0);
  EXPECT_EQ(r.switches[0].land_ns, 4'000'000);
  EXPECT_EQ(r.clock_switches, 1);
  EXPECT_EQ(r.off_target_ns, 4'000'000);  // 4 ms at 2000 MHz while 1000 was wanted
  EXPECT_DOUBLE_EQ(r.kernels[0].core_mhz, (4.0 * 2000 + 12.0 * 1000) / 16.0);
}

TEST(Engine, ZeroLatencySwitchAppliesToTheStartingKernel) {
  ToyRig rig(toy_workload({10.0}));
  ScriptedPolicy p;
  p.on_start = [](PolicyContext& c, std::uint32_t) { c.request(1000, 1000); };
  EngineConfig cfg = no_cap();
  cfg.switch_latency_override_us = 0;
  const RunResult r = rig.run(p, cfg);
  EXPECT_EQ(r.kernels[0].duration_ns, 20'000'000);
  EXPECT_DOUBLE_EQ(r.energy_j, 3.0);  // 150 W x 20 ms
}

TEST(Engine, RequestDuringPendingSwitchReplacesItsTarget) {
  ToyRig rig(toy_workload({10.0, 10.0}));
  ScriptedPolicy p;
  p.on_start = [](PolicyContext& c, std::uint32_t k) {
    if (k == 0) c.request(1000, 1000);
    if (k == 1) c.request(2000, 1000);  // back to 2000 before the first switch landed
  };
  EngineConfig cfg = no_cap();
  cfg.switch_latency_override_us = 15000;
  const RunResult r = rig.run(p, cfg);
  EXPECT_EQ(r.coalesced_requests, 1);
  // The pending switch lands at 15 ms as a no-op (2000 -> 2000).
  EXPECT_EQ(r.switches.size(), 0u);
  EXPECT_EQ(r.clock_switches, 0);
  EXPECT_EQ(r.kernels[1].duration_ns, 10'000'000);
  EXPECT_EQ(r.off_target_ns, 10'000'000);  // kernel 0 ran at 2000 while 1000 was wanted
}

TEST(Engine, MemorySwitchStallsTheGpuAtIdlePower) {
  ToyRig rig(toy_workload({10.0}));
  rig.device.memory_switch_stall_us = 2000;
  ScriptedPolicy p;
  p.on_start = [](PolicyContext& c, std::uint32_t) { c.request(2000, 500); };
  EngineConfig cfg = no_cap();
  cfg.switch_latency_override_us = 3000;
  const RunResult r = rig.run(p, cfg);
  // 3 ms running, 2 ms stalled at 100 W, 7 ms running: 12 ms; 10 ms x 200 W + 2 ms x 100 W.
  EXPECT_EQ(r.kernels[0].duration_ns, 12'000'000);
  EXPECT_NEAR(r.energy_j, 2.2, 1e-12);
  EXPECT_EQ(r.switch_stall_ns, 2'000'000);
}

TEST(Engine, StallNeverOutlastsItsSwitchSoZeroLatencyIsFree) {
  ToyRig rig(toy_workload({10.0}));
  rig.device.memory_switch_stall_us = 2000;
  ScriptedPolicy p;
  p.on_start = [](PolicyContext& c, std::uint32_t) { c.request(2000, 500); };
  EngineConfig cfg = no_cap();
  cfg.switch_latency_override_us = 500;  // a 0.5 ms switch stalls at most 0.5 ms
  RunResult r = rig.run(p, cfg);
  EXPECT_EQ(r.switch_stall_ns, 500'000);
  EXPECT_EQ(r.kernels[0].duration_ns, 10'500'000);
  cfg.switch_latency_override_us = 0;
  r = rig.run(p, cfg);
  EXPECT_EQ(r.switch_stall_ns, 0);
  EXPECT_EQ(r.kernels[0].duration_ns, 10'000'000);
}

TEST(Engine, MemoryStallOverrideReplacesTheDevicesStall) {
  ToyRig rig(toy_workload({10.0}));
  rig.device.memory_switch_stall_us = 2000;
  ScriptedPolicy p;
  p.on_start = [](PolicyContext& c, std::uint32_t) { c.request(2000, 500); };
  EngineConfig cfg = no_cap();
  cfg.switch_latency_override_us = 3000;
  cfg.memory_stall_override_us = 1000;
  const RunResult r = rig.run(p, cfg);
  EXPECT_EQ(r.switch_stall_ns, 1'000'000);
  EXPECT_EQ(r.kernels[0].duration_ns, 11'000'000);
}

TEST(Engine, PowerCapLowersTheCoreClockUnderLockedClocks) {
  ToyRig rig(toy_workload({10.0}));
  rig.governor = FixedCapGovernor(1000);  // firmware allows 1000 MHz from the first tick (1 ms)
  ScriptedPolicy p;
  EngineConfig cfg;
  cfg.warm_firmware = false;
  const RunResult r = rig.run(p, cfg);
  // 1 ms at 2000 MHz (10 % of the work), then 18 ms at 1000 MHz.
  EXPECT_EQ(r.kernels[0].duration_ns, 19'000'000);
  EXPECT_NEAR(r.energy_j, 0.2 + 18e-3 * 150.0, 1e-12);
  EXPECT_EQ(r.power_capped_ns, 18'000'000);
  EXPECT_EQ(r.clock_switches, 0);  // the firmware's own changes are not policy switches
}

TEST(Engine, HostSyncShiftsLaterLaunchesBySimulatedDelay) {
  // Traced: kernel 0 (10 ms) runs 0..10 ms; host syncs from 1 ms to 10.5 ms
  // (0.5 ms after the GPU finished); kernel 1 launched at 11 ms.
  // Simulated at 1000 MHz kernel 0 takes 20 ms, so the host resumes at 20.5
  // ms and kernel 1 is launched at 21 ms.
  Workload w = toy_workload({10.0, 10.0}, {0.0, 11.0});
  SyncPoint s;
  s.kind = SyncPoint::Kind::device;
  s.host_begin_ns = 1'000'000;
  s.traced_end_ns = 10'500'000;
  s.waits_until_kernel = 1;
  w.syncs.push_back(s);
  ToyRig rig(std::move(w));
  ScriptedPolicy p;
  p.on_begin = [](PolicyContext& c) { c.request(1000, 1000); };
  const RunResult r = rig.run(p, no_cap());
  EXPECT_EQ(r.kernels[0].duration_ns, 20'000'000);
  EXPECT_EQ(r.kernels[1].start_ns, 21'000'000);
  EXPECT_EQ(r.host_delay_ns, 10'000'000);
}

// The workload's shape, taken once for all its replays (apps/runner.h
// Prepared), gives the replay a replay computing its own gives.
TEST(Engine, TheWorkloadShapeTakenOnceGivesTheSameReplay) {
  Workload w = toy_workload({10.0, 10.0}, {0.0, 11.0});
  SyncPoint s;
  s.host_begin_ns = 1'000'000;
  s.traced_end_ns = 10'500'000;
  s.waits_until_kernel = 1;
  w.syncs.push_back(s);
  ToyRig rig(std::move(w));
  const WorkloadShape shape = workload_shape(rig.workload);
  EXPECT_TRUE(shape.one_stream);
  // Traced: kernel 0 over 0..10 ms, kernel 1 over 11..21 ms.
  EXPECT_EQ(shape.ended_by, (std::vector<std::int64_t>{10'000'000, 21'000'000}));
  ScriptedPolicy p;
  p.on_begin = [](PolicyContext& c) { c.request(1000, 1000); };
  const RunResult own = rig.run(p, no_cap());
  rig.shape = &shape;
  const RunResult given = rig.run(p, no_cap());
  EXPECT_EQ(given.kernels[1].start_ns, 21'000'000);
  EXPECT_EQ(given.kernels[1].start_ns, own.kernels[1].start_ns);
  EXPECT_EQ(given.end_ns, own.end_ns);
  EXPECT_EQ(given.energy_j, own.energy_j);
  EXPECT_EQ(given.host_delay_ns, own.host_delay_ns);
  // Another workload's shape is refused, not read past its end.
  const WorkloadShape other = workload_shape(toy_workload({10.0}));
  rig.shape = &other;
  EXPECT_THROW(rig.run(p, no_cap()), std::logic_error);
}

TEST(Engine, FasterGpuShortensHostWaits) {
  // Traced at 2000 MHz with the host waiting; a GPU twice as fast (toy: the
  // workload's kernels take half) lets the host go on earlier.
  Workload w = toy_workload({10.0, 10.0}, {0.0, 11.0});
  SyncPoint s;
  s.host_begin_ns = 1'000'000;
  s.traced_end_ns = 10'500'000;
  s.waits_until_kernel = 1;
  w.syncs.push_back(s);
  ToyRig rig(std::move(w));
  for (auto& c : rig.costs) c.compute_ns_mhz /= 2;  // 5 ms kernels
  ScriptedPolicy p;
  const RunResult r = rig.run(p, no_cap());
  EXPECT_EQ(r.kernels[1].start_ns, 6'000'000);  // host resumes at 5.5 ms, launches 0.5 ms later
}

TEST(Engine, UnsupportedClockRequestIsAClearError) {
  ToyRig rig(toy_workload({1.0}));
  ScriptedPolicy p;
  p.on_begin = [](PolicyContext& c) { c.request(1500, 1000); };
  try {
    rig.run(p, no_cap());
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("1500 MHz"), std::string::npos) << e.what();
  }
}

TEST(Engine, MemoryClockAllowedOnlyWithLowCore) {
  Device d = toy_device();
  d.memory_core_limits.push_back({500, 1000});
  EXPECT_TRUE(d.supports(1000, 500));
  EXPECT_FALSE(d.supports(2000, 500));
  EXPECT_NE(d.why_unsupported(2000, 500).find("only with core <= 1000"), std::string::npos);
}

TEST(Engine, TimerCallsThePolicyAtTheAskedTime) {
  ToyRig rig(toy_workload({10.0}));
  ScriptedPolicy p;
  std::int64_t fired_at = -1;
  p.on_begin = [](PolicyContext& c) { c.set_timer(3'000'000); };
  p.on_timer_cb = [&](PolicyContext& c) { fired_at = c.now_ns(); };
  rig.run(p, no_cap());
  EXPECT_EQ(fired_at, 3'000'000);
}

TEST(Engine, SameSeedSameDrawsOtherSeedOtherDraws) {
  LatencyDistribution d;
  d.kind = LatencyDistribution::Kind::lognormal;
  d.value_us = 1000;
  d.sigma = 0.5;
  d.min_us = 10;
  d.max_us = 1e6;
  Rng a(7), b(7), c(8);
  const double x = draw_latency_ns(d, a);
  EXPECT_EQ(x, draw_latency_ns(d, b));
  EXPECT_NE(x, draw_latency_ns(d, c));
  // The median of many draws is near the distribution's median (1 ms).
  Rng r(1);
  std::vector<double> v;
  for (int i = 0; i < 4001; ++i) v.push_back(draw_latency_ns(d, r));
  std::nth_element(v.begin(), v.begin() + 2000, v.end());
  EXPECT_NEAR(v[2000], 1e6, 0.05e6);
}

// Lowers and raises the cap every 1 ms period: clock changes in the middle
// of kernels and of idle gaps.
class AlternatingCapGovernor final : public Governor {
 public:
  std::int64_t period_ns() const override { return 1'000'000; }
  std::int32_t cap_core_mhz(const Utilisation&, const Clocks&, std::int32_t cap) const override {
    return cap == 2000 ? 1000 : 2000;
  }
};

// A policy that does nothing per kernel, saying so, and counting the calls it gets.
struct QuietPolicy final : public Policy {
  std::int32_t core_mhz = 2000;
  int calls = 0;
  void begin(PolicyContext& c) override { c.request(core_mhz, 1000); }
  void on_kernel_start(PolicyContext&, std::uint32_t) override { ++calls; }
  void on_kernel_end(PolicyContext&, std::uint32_t) override { ++calls; }
  bool acts_per_kernel() const override { return false; }
};

// A policy that does nothing per kernel but is called for each (the engine's full path).
struct LoudPolicy final : public Policy {
  std::int32_t core_mhz = 2000;
  int calls = 0;
  void begin(PolicyContext& c) override { c.request(core_mhz, 1000); }
  void on_kernel_start(PolicyContext&, std::uint32_t) override { ++calls; }
  void on_kernel_end(PolicyContext&, std::uint32_t) override { ++calls; }
};

// The quick path of a policy that does nothing per kernel gives the numbers
// of the full path bit for bit: 300 kernels of 0.05..0.7 ms, some back to
// back, some after host gaps, two host syncs, three iterations, the cap
// changing every 1 ms (in kernels and in gaps), at both clocks.
TEST(Engine, PolicyWithoutPerKernelCallsGivesTheSameNumbers) {
  Rng rng(5);
  std::vector<double> dur, launch;
  double t = 0;
  for (int i = 0; i < 300; ++i) {
    dur.push_back(0.05 + 0.65 * rng.uniform());
    if (i % 4 == 0) t += 2.0 * rng.uniform();  // a host gap now and then
    launch.push_back(t);
  }
  Workload w = toy_workload(dur, launch);
  for (std::uint32_t k : {40u, 170u}) {
    SyncPoint s;
    s.host_begin_ns = static_cast<std::int64_t>(launch[k] * 1e6);
    s.traced_end_ns = w.kernels[k - 1].traced_start_ns + w.kernels[k - 1].work.duration_ns + 50'000;
    s.waits_until_kernel = k;
    w.syncs.push_back(s);
  }
  w.iterations = 3;
  w.iteration_begin = {0, 100, 200, 300};
  for (std::size_t i = 0; i < w.kernels.size(); ++i)
    w.kernels[i].iteration = static_cast<std::int32_t>(i / 100);
  ToyRig rig(std::move(w));
  AlternatingCapGovernor gov;
  for (const std::int32_t core : {2000, 1000}) {
    for (const bool timeline : {false, true}) {
      SCOPED_TRACE(core);
      EngineConfig cfg;
      cfg.record_timeline = timeline;
      cfg.switch_latency_override_us = 0;
      EngineInputs in;
      in.workload = &rig.workload;
      in.device = &rig.device;
      in.latency = &rig.latency;
      in.power = &rig.power;
      in.governor = &gov;
      in.costs = &rig.costs;
      QuietPolicy quiet;
      LoudPolicy loud;
      quiet.core_mhz = loud.core_mhz = core;
      const RunResult a = replay(in, quiet, cfg);
      const RunResult b = replay(in, loud, cfg);
      EXPECT_EQ(quiet.calls, 0);
      EXPECT_EQ(loud.calls, 600);
      ASSERT_EQ(a.kernels.size(), 300u);
      ASSERT_EQ(b.kernels.size(), 300u);
      for (std::size_t i = 0; i < a.kernels.size(); ++i) {
        const KernelResult& x = a.kernels[i];
        const KernelResult& y = b.kernels[i];
        ASSERT_EQ(x.start_ns, y.start_ns) << i;
        ASSERT_EQ(x.duration_ns, y.duration_ns) << i;
        ASSERT_EQ(x.core_mhz, y.core_mhz) << i;
        ASSERT_EQ(x.memory_mhz, y.memory_mhz) << i;
        ASSERT_EQ(x.requested_core_mhz, y.requested_core_mhz) << i;
        ASSERT_EQ(x.requested_memory_mhz, y.requested_memory_mhz) << i;
        ASSERT_EQ(x.energy_j, y.energy_j) << i;
      }
      EXPECT_EQ(a.energy_j, b.energy_j);
      EXPECT_EQ(a.begin_ns, b.begin_ns);
      EXPECT_EQ(a.end_ns, b.end_ns);
      EXPECT_EQ(a.iteration_time_ns, b.iteration_time_ns);
      EXPECT_EQ(a.iteration_energy_j, b.iteration_energy_j);
      EXPECT_EQ(a.power_capped_ns, b.power_capped_ns);
      EXPECT_EQ(a.off_target_ns, b.off_target_ns);
      EXPECT_EQ(a.host_delay_ns, b.host_delay_ns);
      EXPECT_EQ(a.switches.size(), b.switches.size());
      EXPECT_EQ(a.segments.size(), b.segments.size());
      for (std::size_t i = 0; i < std::min(a.segments.size(), b.segments.size()); ++i) {
        ASSERT_EQ(a.segments[i].start_ns, b.segments[i].start_ns) << i;
        ASSERT_EQ(a.segments[i].duration_ns, b.segments[i].duration_ns) << i;
        ASSERT_EQ(a.segments[i].power_w, b.segments[i].power_w) << i;
        ASSERT_EQ(a.segments[i].kernel, b.segments[i].kernel) << i;
      }
      // What the run went through: the cap changed often (holding 2000 MHz
      // down half of the time), the host waited for the slower GPU.
      EXPECT_GT(a.switches.size(), 100u);
      EXPECT_GT(a.host_delay_ns, 0);
      EXPECT_EQ(a.power_capped_ns > 0, core == 2000);
      EXPECT_GT(a.iteration_energy_j[2], 0.0);
      EXPECT_EQ(a.segments.empty(), !timeline);
    }
  }
}

}  // namespace
}  // namespace dvfsim::testing
