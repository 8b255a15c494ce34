// Concurrent streams (docs/design.md, "Concurrent streams"): kernels the
// capture shows overlapping run at once, their utilisations add and saturate
// at 1, static and idle power count once; stream order, event waits, host
// syncs and the capture's cross-stream order hold.
#include <gtest/gtest.h>

#include <string>

#include "policies/online/learner.h"
#include "sim/engine.h"
#include "sim/graph.h"
#include "tests/sim/fixtures.h"

namespace dvfsim::testing {
namespace {

// Duration: the compute part scaled by 2000/core (as ToyLatency); the
// utilisation is stated per kernel: compute = cost.flops, memory =
// cost.dram_bytes (the fields carry it).
class StatedLatency final : public ToyDurations {
 public:
  Utilisation utilisation(const KernelCost& k, const Clocks&, double) const override {
    return {1.0, k.flops, k.dram_bytes, 0.0};
  }
};

// 100 W idle, +100 W busy, +200 W x compute, +100 W x memory (linear).
class StatedPower final : public PowerModel {
 public:
  double power_w(const Utilisation& u, const Clocks&) const override {
    return 100.0 + 100.0 * u.busy + 200.0 * u.compute + 100.0 * u.memory;
  }
  double deep_idle_w() const override { return 50.0; }
};

struct Rig {
  Device device = toy_device();
  StatedLatency latency;
  StatedPower power;
  Workload w;
  std::vector<KernelCost> costs;
  void prepare() {
    std::vector<KernelCost> c = latency.prepare(w, device, device);
    for (std::size_t i = 0; i < c.size() && i < costs.size(); ++i) {
      c[i].flops = costs[i].flops;
      c[i].dram_bytes = costs[i].dram_bytes;
    }
    costs = c;
  }
  RunResult run(Policy& p) {
    prepare();
    EngineInputs in;
    in.workload = &w;
    in.device = &device;
    in.latency = &latency;
    in.power = &power;
    in.costs = &costs;
    EngineConfig cfg;
    cfg.power_cap = false;
    return replay(in, p, cfg);
  }
  RunResult run() {
    ScriptedPolicy p;
    return run(p);
  }
};

// Sets kernel i's stream, host launch and traced start (ms).
void place(Workload& w, std::size_t i, std::int32_t stream, double launch_ms, double start_ms) {
  w.kernels[i].stream = stream;
  w.kernels[i].host_launch_ns = static_cast<std::int64_t>(launch_ms * 1e6);
  w.kernels[i].traced_start_ns = static_cast<std::int64_t>(start_ms * 1e6);
}

// Two 10 ms kernels: A on stream 0 at 0 ms, B on stream 1 launched and traced
// at `offset_ms` (traced at 10 ms + offset, after A, when not
// `overlapped_in_capture`). A: compute 0.6, memory 0.3 (100 + 100 + 120 + 30
// = 350 W alone); B: compute 0.3, memory 0.5 (100 + 100 + 60 + 50 = 310 W).
Rig two_streams(double offset_ms, bool overlapped_in_capture = true) {
  Rig r;
  r.w = toy_workload({10, 10});
  place(r.w, 0, 0, 0, 0);
  place(r.w, 1, 1, offset_ms, overlapped_in_capture ? offset_ms : 10 + offset_ms);
  r.costs.resize(2);
  r.costs[0].flops = 0.6;
  r.costs[0].dram_bytes = 0.3;
  r.costs[1].flops = 0.3;
  r.costs[1].dram_bytes = 0.5;
  return r;
}

TEST(Streams, TwoOverlappingKernelsShareTheStaticPower) {
  // Together: busy min(1, 1 + 1) = 1, compute 0.9, memory 0.8:
  // 100 + 100 + 180 + 80 = 460 W for 10 ms = 4.6 J. One after the other
  // (below): 3.5 J + 3.1 J = 6.6 J in 20 ms; the 2 J between them are the idle
  // and busy power (200 W for 10 ms) counted once.
  Rig r = two_streams(0);
  const RunResult res = r.run();
  EXPECT_EQ(res.end_ns - res.begin_ns, 10'000'000);
  EXPECT_NEAR(res.energy_j, 4.6, 1e-9);
  EXPECT_EQ(res.kernels[1].start_ns, 0);
  EXPECT_EQ(res.kernels[1].duration_ns, 10'000'000);
  // Each is credited half of the shared 4.6 J.
  EXPECT_NEAR(res.kernels[0].energy_j, 2.3, 1e-9);
  EXPECT_NEAR(res.kernels[1].energy_j, 2.3, 1e-9);
  EXPECT_EQ(overlap_ns(traced_intervals(r.w)), 10'000'000);
}

TEST(Streams, KernelsTheCaptureSerialisedStaySerial) {
  // The trace shows B starting after A ended: B waits for A although no
  // stream, event or sync orders them: 3.5 J + 3.1 J in 20 ms.
  Rig r = two_streams(0, false);
  const RunResult res = r.run();
  EXPECT_EQ(res.kernels[1].start_ns, 10'000'000);
  EXPECT_EQ(res.end_ns - res.begin_ns, 20'000'000);
  EXPECT_NEAR(res.energy_j, 6.6, 1e-9);
}

TEST(Streams, PartialOverlap) {
  // B 5 ms after A: A alone 5 ms at 350 W (1.75 J), both 5 ms at 460 W
  // (2.3 J), B alone 5 ms at 310 W (1.55 J): 15 ms, 5.6 J. Each kernel gets
  // half of the shared 2.3 J: A 1.75 + 1.15 = 2.9 J, B 1.15 + 1.55 = 2.7 J.
  Rig r = two_streams(5);
  const RunResult res = r.run();
  EXPECT_EQ(res.end_ns - res.begin_ns, 15'000'000);
  EXPECT_NEAR(res.energy_j, 5.6, 1e-9);
  EXPECT_NEAR(res.kernels[0].energy_j, 2.9, 1e-9);
  EXPECT_NEAR(res.kernels[1].energy_j, 2.7, 1e-9);
  std::vector<Interval> replayed;
  for (const KernelResult& k : res.kernels)
    replayed.push_back({k.start_ns, k.start_ns + k.duration_ns});
  EXPECT_EQ(overlap_ns(replayed), 5'000'000);
}

TEST(Streams, UtilisationsSaturate) {
  // Compute 0.8 + 0.7 saturates at 1: 100 + 100 + 200 + 100 x 0.8 = 480 W for
  // 10 ms = 4.8 J (memory 0.3 + 0.5 = 0.8 does not saturate).
  Rig r = two_streams(0);
  r.costs[0].flops = 0.8;
  r.costs[1].flops = 0.7;
  const RunResult res = r.run();
  EXPECT_NEAR(res.energy_j, 4.8, 1e-9);
}

TEST(Streams, EventWaitOrdersAcrossStreams) {
  // The capture shows them overlapping, but B waits for A's event: serial.
  Rig r = two_streams(0);
  r.w.event_waits.push_back({1, 0});
  const RunResult res = r.run();
  EXPECT_EQ(res.kernels[1].start_ns, 10'000'000);
  EXPECT_EQ(res.end_ns - res.begin_ns, 20'000'000);
}

TEST(Streams, SlowerClocksStretchBothAndKeepTheOverlap) {
  // At 1000 MHz both take 20 ms, still side by side: 20 ms at 460 W = 9.2 J.
  Rig r = two_streams(0);
  ScriptedPolicy p;
  p.on_begin = [](PolicyContext& c) { c.request(1000, 1000); };
  const RunResult res = r.run(p);
  EXPECT_EQ(res.end_ns - res.begin_ns, 20'000'000);
  EXPECT_EQ(res.kernels[1].start_ns, 0);
  EXPECT_NEAR(res.energy_j, 9.2, 1e-9);
}

TEST(Streams, ALaterLaunchStartsBeforeAnEarlierOneQueuedOnItsStream) {
  // Stream 0: A1 (10 ms) then A2 (10 ms) queued behind it; stream 1: B (5 ms)
  // launched after A2 but traced running beside A1. B starts at 0, not after
  // A2 has started; the policy sees the starts in time order, A1, B, A2, and
  // the ends as they happen, B, A1, A2.
  Rig r;
  r.w = toy_workload({10, 10, 5});
  place(r.w, 0, 0, 0.0, 0);
  place(r.w, 1, 0, 0.1, 10);
  place(r.w, 2, 1, 0.2, 0.2);
  r.costs.resize(3);
  std::string order;
  ScriptedPolicy p;
  p.on_start = [&](PolicyContext&, std::uint32_t k) { order += "s" + std::to_string(k); };
  p.on_end = [&](PolicyContext&, std::uint32_t k) { order += "e" + std::to_string(k); };
  const RunResult res = r.run(p);
  EXPECT_EQ(res.kernels[2].start_ns, 200'000);
  EXPECT_EQ(res.kernels[1].start_ns, 10'000'000);
  EXPECT_EQ(res.end_ns, 20'000'000);
  EXPECT_EQ(order, "s0s2e2e0s1e1");
  // 5 ms of both at 200 W (utilisations 0 here: 100 + 100 busy), 15 ms of one
  // at 200 W: 20 ms x 200 W = 4 J (the idle 100 W and busy 100 W once).
  EXPECT_NEAR(res.energy_j, 4.0, 1e-9);
}

TEST(Streams, AKernelWaitsForALaterLaunchTheCaptureRanBeforeIt) {
  // A (stream 0) launched first but traced starting at 10 ms, after B
  // (stream 1, launched 0.1 ms later) ran 0..10 ms: the GPU ran B first
  // (A waited on something the trace does not show). A waits for B, so the
  // two stay serial, 20 ms, as captured; without the rule they ran side by
  // side in 10 ms.
  Rig r;
  r.w = toy_workload({10, 10});
  place(r.w, 0, 0, 0.0, 10);
  place(r.w, 1, 1, 0.1, 0);
  r.costs.resize(2);
  const Dependencies d = dependencies(r.w, true);
  EXPECT_EQ(std::vector<std::uint32_t>(d.preds.begin() + d.begin[0], d.preds.begin() + d.begin[1]),
            std::vector<std::uint32_t>{1});
  const RunResult res = r.run();
  EXPECT_EQ(res.kernels[1].start_ns, 100'000);
  EXPECT_EQ(res.kernels[0].start_ns, 10'100'000);
  EXPECT_EQ(res.end_ns, 20'100'000);
}

TEST(Streams, NoWaitForALaterLaunchAcrossAHostSync) {
  // As above, but a host sync lies between the two launches (B launched
  // after it): A cannot have waited for B, whatever the traced clocks say,
  // and the host could not launch B before the sync's work (A) ended.
  Workload w = toy_workload({10, 10});
  place(w, 0, 0, 0.0, 10);
  place(w, 1, 1, 0.2, 0);
  SyncPoint s;
  s.kind = SyncPoint::Kind::device;
  s.host_begin_ns = 100'000;
  s.traced_end_ns = 150'000;
  w.syncs.push_back(s);
  const Dependencies d = dependencies(w, true);
  EXPECT_EQ(d.begin[1] - d.begin[0], 0u);
}

TEST(Streams, TheDeviceGapFollowsEveryKernelWaitedFor) {
  // B (stream 1) waits for A (stream 0) by an event; with a 1 ms device gap
  // it starts 1 ms after A ends, as after a kernel of its own stream.
  Rig r = two_streams(0);
  r.device.kernel_gap_ns = 1e6;
  r.w.event_waits.push_back({1, 0});
  const RunResult res = r.run();
  EXPECT_EQ(res.kernels[1].start_ns, 11'000'000);
  EXPECT_EQ(res.end_ns - res.begin_ns, 21'000'000);
}

// Two overlapped streams (A 10 ms, B 20 ms, both at 0), a host sync from 1 ms
// to 20.5 ms (0.5 ms after the traced work ended), replayed at 1000 MHz
// (A 20 ms, B 40 ms).
Rig synced(std::int32_t sync_stream) {
  Rig r;
  r.w = toy_workload({10, 20});
  place(r.w, 0, 0, 0, 0);
  place(r.w, 1, 1, 0, 0);
  SyncPoint s;
  s.kind = sync_stream < 0 ? SyncPoint::Kind::device : SyncPoint::Kind::stream;
  s.stream = sync_stream;
  s.host_begin_ns = 1'000'000;
  s.traced_end_ns = 20'500'000;
  s.waits_until_kernel = 2;
  r.w.syncs.push_back(s);
  r.costs.resize(2);
  return r;
}

TEST(Streams, DeviceSyncWaitsForTheLatestStream) {
  // The host resumes 0.5 ms after B's simulated end (40 ms): 40.5 ms, 20 ms
  // after the traced 20.5 ms.
  Rig r = synced(-1);
  ScriptedPolicy p;
  p.on_begin = [](PolicyContext& c) { c.request(1000, 1000); };
  EXPECT_EQ(r.run(p).host_delay_ns, 20'000'000);
}

TEST(Streams, StreamSyncWaitsForItsStreamOnly) {
  // Waiting for stream 0 only: A ended at 10 ms in the trace, the host 10.5
  // ms later; simulated A ends at 20 ms, so the host resumes at 30.5 ms: 10 ms
  // after the traced 20.5 ms.
  Rig r = synced(0);
  ScriptedPolicy p;
  p.on_begin = [](PolicyContext& c) { c.request(1000, 1000); };
  EXPECT_EQ(r.run(p).host_delay_ns, 10'000'000);
}

TEST(Streams, BlockingCopyWaitsForItsOwnCopy) {
  // Kernel 1 is a 2 ms copy launched at 1 ms by a blocking cudaMemcpy that
  // returned at 3 ms (waits_until_kernel 2: the copy included); kernel 2 is
  // launched at 3 ms. At 1000 MHz the copy runs 2..6 ms (after kernel 0's
  // 2 ms), so the host returns at 6 ms and kernel 2 starts then, not at 3 ms.
  Workload w = toy_workload({1, 2, 1}, {0, 1, 3});
  w.kernels[1].cls = KernelClass::memcpy;
  SyncPoint s;
  s.kind = SyncPoint::Kind::copy;
  s.host_begin_ns = 1'000'000;
  s.traced_end_ns = 3'000'000;
  s.waits_until_kernel = 2;
  w.syncs.push_back(s);
  ToyRig rig(w);
  ScriptedPolicy p;
  p.on_begin = [](PolicyContext& c) { c.request(1000, 1000); };
  EngineConfig cfg;
  cfg.power_cap = false;
  const RunResult res = rig.run(p, cfg);
  EXPECT_EQ(res.kernels[1].start_ns, 2'000'000);
  EXPECT_EQ(res.kernels[2].start_ns, 6'000'000);
  EXPECT_EQ(res.host_delay_ns, 3'000'000);
}

TEST(Streams, SequenceLearnerRecordsKernelsThatEndOutOfOrder) {
  // The profiling iteration of the out-of-order case above: B (index 2, 5 ms)
  // starts second and ends first; each observed kernel keeps its own
  // duration, and A1, which ends after B started, leaves no gap.
  Rig r;
  r.w = toy_workload({10, 10, 5});
  place(r.w, 0, 0, 0.0, 0);
  place(r.w, 1, 0, 0.1, 10);
  place(r.w, 2, 1, 0.2, 0.2);
  r.costs.resize(3);
  struct Learn final : Policy {
    plan::SequenceLearner l;
    void on_kernel_start(PolicyContext& c, std::uint32_t k) override { l.on_start(c, k); }
    void on_kernel_end(PolicyContext& c, std::uint32_t k) override { l.on_end(c, k); }
  } p;
  r.run(p);
  const auto& seq = p.l.sequence();
  ASSERT_EQ(seq.size(), 3u);
  EXPECT_EQ(seq[0].measured_ns(), 10'000'000);  // A1
  EXPECT_EQ(seq[1].measured_ns(), 5'000'000);   // B
  EXPECT_EQ(seq[2].measured_ns(), 10'000'000);  // A2
  EXPECT_EQ(seq[0].gap_after_ns, 0.0);
  EXPECT_EQ(seq[1].gap_after_ns, 4'800'000.0);  // B ended at 5.2 ms, A2 started at 10 ms
}

TEST(Streams, OverlapCountsEachInstantOnce) {
  // [0,10) [5,15) [12,20): doubly covered 5..10 and 12..15 = 8; three copies
  // of [0,10) and a touching [10,11): 10.
  EXPECT_EQ(overlap_ns({{0, 10}, {5, 15}, {12, 20}}), 8);
  EXPECT_EQ(overlap_ns({{0, 10}, {0, 10}, {0, 10}, {10, 11}}), 10);
  EXPECT_EQ(overlap_ns({{0, 10}}), 0);
}

TEST(Streams, CaptureOrderDependencies) {
  // A1 0..10, A2 10..20 on stream 0; B 12..14 on stream 1: B depends on A1
  // (ended before B started), not A2 (running when B started).
  Workload w = toy_workload({10, 10, 2});
  place(w, 0, 0, 0, 0);
  place(w, 1, 0, 0.1, 10);
  place(w, 2, 1, 0.2, 12);
  EXPECT_TRUE(multi_stream(w));
  const Dependencies d = dependencies(w, true);
  ASSERT_EQ(d.begin.size(), 4u);
  EXPECT_EQ(std::vector<std::uint32_t>(d.preds.begin() + d.begin[2], d.preds.begin() + d.begin[3]),
            std::vector<std::uint32_t>{0});
  // Without the capture order B depends on nothing.
  const Dependencies plain = dependencies(w, false);
  EXPECT_EQ(plain.begin[3] - plain.begin[2], 0u);
}

}  // namespace
}  // namespace dvfsim::testing
