// The policies on a toy GPU whose optimum can be computed by hand.
//
// Clocks: core 1000/2000 MHz x memory 500/1000 MHz. Kernel A is compute-bound
// (10 ms at 2000 MHz, time ~ 1/core), kernel B memory-bound (10 ms at 1000 MHz
// memory, time ~ 1/memory). Power: 50 W + busy x (150 W at 2000 MHz core, 40 W
// at 1000 MHz) + memory (20 W at 1000 MHz, 5 W at 500 MHz).
//   A at (2000, 1000): 10 ms x 220 W = 2.2 J      B at (2000, 1000): 2.2 J
//   A at (2000,  500): 10 ms x 205 W = 2.05 J     B at (1000, 1000): 10 ms x 110 W = 1.1 J
// Baseline (default 2000/1000): 20 ms, 4.4 J. Least energy at no slowdown:
// A at (2000, 500) and B at (1000, 1000): 20 ms, 3.15 J.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <string>
#include <utility>

#include "policies/online/learner.h"
#include "policies/online/rehearsal.h"
#include "policies/online/switcher.h"
#include "policies/planning/kernel_plan.h"
#include "policies/planning/replay.h"
#include "policies/registry.h"
#include "sim/engine.h"
#include "tests/policies/toy_run.h"

namespace dvfsim::testing {
namespace {

class TwoDomainLatency final : public LatencyModel {
 public:
  std::vector<KernelCost> prepare(const Workload& w, const Device&, const Device&) const override {
    std::vector<KernelCost> out(w.kernels.size());
    for (std::size_t i = 0; i < w.kernels.size(); ++i) {
      const double d = static_cast<double>(w.kernels[i].work.duration_ns);
      if (w.kernels[i].cls == KernelClass::gemm)
        out[i].compute_ns_mhz = d * 2000.0;
      else
        out[i].memory_ns_mhz = d * 1000.0;
    }
    return out;
  }
  double duration_ns(const KernelCost& k, const Clocks& c) const override {
    return std::max(k.compute_ns_mhz / c.core_mhz, k.memory_ns_mhz / c.memory_mhz);
  }
  Utilisation utilisation(const KernelCost&, const Clocks&, double) const override {
    return {1.0, 0.0, 0.0};
  }
};

class TwoDomainPower final : public PowerModel {
 public:
  double power_w(const Utilisation& u, const Clocks& c) const override {
    return 50.0 + u.busy * (c.core_mhz == 2000 ? 150.0 : 40.0) +
           (c.memory_mhz == 1000 ? 20.0 : 5.0) + (c.core_mhz == 2000 ? core_2000_w : 0.0);
  }
  double deep_idle_w() const override { return 10.0; }
  // Drawn at 2000 MHz core, busy or not (0 but where a test sets it).
  double core_2000_w = 0.0;
};

class NoCap final : public Governor {
 public:
  std::int64_t period_ns() const override { return 100'000'000; }
  std::int32_t cap_core_mhz(const Utilisation&, const Clocks&, std::int32_t) const override {
    return 2000;
  }
};

Device device() {
  Device d;
  d.name = "toy2";
  d.core_clocks_mhz = {1000, 2000};
  d.memory_clocks_mhz = {500, 1000};
  d.default_core_mhz = 2000;
  d.default_memory_mhz = 1000;
  d.voltage_curve = {{1000, 0.8}, {2000, 1.0}};
  d.power_limit_w = 1000;
  d.governor = {"native", Params("toy2 governor", {{"period_ms", "100"},
                                                   {"up_step_mhz", "120"},
                                                   {"target_fraction", "0.99"}})};
  return d;
}

// Kernels A (forward) and B (backward), back to back, `iterations` times.
Workload workload(int iterations) {
  Workload w;
  w.source_path = "toy2";
  w.capture.device = "toy2";
  w.intern("");
  const auto a = w.intern("A"), b = w.intern("B");
  std::int64_t t = 0;
  for (int it = 0; it < iterations; ++it) {
    w.iteration_begin.push_back(static_cast<std::uint32_t>(w.kernels.size()));
    for (int j = 0; j < 2; ++j) {
      Kernel k;
      k.name_id = j == 0 ? a : b;
      k.cls = j == 0 ? KernelClass::gemm : KernelClass::elementwise;
      k.phase = j == 0 ? Phase::forward : Phase::backward;
      k.iteration = it;
      k.host_launch_ns = 0;
      k.traced_start_ns = t;
      k.work.duration_ns = 10'000'000;
      t += k.work.duration_ns;
      w.kernels.push_back(k);
    }
  }
  w.iterations = iterations;
  w.iteration_begin.push_back(static_cast<std::uint32_t>(w.kernels.size()));
  return w;
}

struct Rig {
  Device dev = device();
  TwoDomainLatency lat;
  TwoDomainPower pow;
  NoCap gov;
  Workload w;
  std::vector<KernelCost> costs;
  RunResult base;
  explicit Rig(int iterations) : Rig(workload(iterations)) {}
  explicit Rig(Workload workload) : w(std::move(workload)) {
    costs = lat.prepare(w, dev, dev);
    base = run("native", {}, false);
  }
  // The toy GPU's parts, for run_toy and replay_toy.
  ToyGpu toy() { return {&w, &dev, &lat, &pow, &gov, &costs}; }
  RunResult run(const std::string& policy, const std::map<std::string, std::string>& params,
                bool with_baseline = true, double latency_us = 0.0) {
    return run_toy(toy(), policy, params, with_baseline ? &base : nullptr, latency_us);
  }
  // A replay on the toy whose policy only calls `at_begin` with its context
  // (a test's own rehearsals or oracle replays); `latency_us` < 0: the
  // device's own switch latencies.
  void replay_probe(double latency_us, std::function<void(PolicyContext&)> at_begin) {
    class Probe final : public Policy {
     public:
      explicit Probe(std::function<void(PolicyContext&)> f) : f_(std::move(f)) {}
      void begin(PolicyContext& ctx) override { f_(ctx); }

     private:
      std::function<void(PolicyContext&)> f_;
    };
    Probe probe(std::move(at_begin));
    replay_toy(toy(), probe, nullptr, latency_us);
  }
};

// plan::rehearse from the state every toy rehearsal below starts in: the
// firmware cap at 2000 MHz, the clocks at (2000, 1000).
plan::Rehearsal rehearse_toy(const PolicyContext& ctx, const std::vector<plan::ItemSpec>& items,
                             const std::vector<plan::Switcher::Step>* steps, bool early) {
  const plan::RehearsalStart st{2000, make_clocks(ctx.device(), 2000, 1000)};
  return plan::rehearse(ctx, items, steps, early, st);
}

double iteration_energy(const RunResult& r, int it) {
  return r.iteration_energy_j[static_cast<std::size_t>(it)];
}

TEST(ToyPolicies, BaselineIsHandComputed) {
  Rig rig(1);
  EXPECT_NEAR(rig.base.energy_j, 4.4, 1e-9);
  EXPECT_EQ(rig.base.end_ns - rig.base.begin_ns, 20'000'000);
}

TEST(ToyPolicies, KernelOracleFindsTheHandOptimum) {
  Rig rig(1);
  for (const char* agg : {"global", "local"}) {
    const RunResult r = rig.run("kernel-oracle", {{"aggregation", agg}});
    EXPECT_NEAR(r.energy_j, 3.15, 1e-9) << agg;
    EXPECT_EQ(r.end_ns - r.begin_ns, 20'000'000) << agg;
    EXPECT_EQ(r.kernels[0].requested_core_mhz, 2000);
    EXPECT_EQ(r.kernels[0].requested_memory_mhz, 500);
    EXPECT_EQ(r.kernels[1].requested_core_mhz, 1000);
    EXPECT_EQ(r.kernels[1].requested_memory_mhz, 1000);
  }
}

TEST(ToyPolicies, KernelOracleReportsItsSolve) {
  // One solve, optimal (gap 0): 3.15 J in the 20 ms budget, the caps a fixed
  // point after the first round.
  Rig rig(1);
  const RunResult r = rig.run("kernel-oracle", {});
  ASSERT_EQ(r.solver.size(), 1u);
  const SolveReport& s = r.solver[0];
  EXPECT_EQ(s.policy, "kernel-oracle");
  EXPECT_EQ(s.copies, 2u);
  EXPECT_EQ(s.pairs, 4u);
  EXPECT_NEAR(s.energy_j, 3.15, 1e-9);
  EXPECT_NEAR(s.dual_bound_j, 3.15, 1e-9);
  EXPECT_NEAR(s.gap_j, 0.0, 1e-12);
  EXPECT_NEAR(s.budget_ns, 20e6, 1e-3);
  EXPECT_NEAR(s.time_ns, 20e6, 1e-3);
  EXPECT_TRUE(s.feasible);
  EXPECT_EQ(s.rounds, 1);
  EXPECT_TRUE(r.policy_notes.empty());
}

TEST(ToyPolicies, KernelOracleWithoutBaselineUsesDefaultClocks) {
  Rig rig(1);
  const RunResult r = rig.run("kernel-oracle", {}, false);
  EXPECT_NEAR(r.energy_j, 3.15, 1e-9);
}

TEST(ToyPolicies, LargerBudgetSavesMore) {
  // With 50 % slowdown allowed (budget 30 ms): A at (1000, 500) takes 20 ms at
  // 95 W = 1.9 J and B at (1000, 1000) 1.1 J: 3.0 J in 30 ms.
  Rig rig(1);
  const RunResult r = rig.run("kernel-oracle", {{"max_slowdown", "50"}});
  EXPECT_NEAR(r.energy_j, 3.0, 1e-9);
  EXPECT_EQ(r.end_ns - r.begin_ns, 30'000'000);
  const RunResult e = rig.run("kernel-oracle", {{"objective", "energy"}});
  EXPECT_LE(e.energy_j, r.energy_j + 1e-12);
}

TEST(ToyPolicies, StaticBestPicksOnePair) {
  Rig rig(1);
  // No slowdown: only the default pair keeps 20 ms.
  EXPECT_NEAR(rig.run("static-best", {}).energy_j, 4.4, 1e-9);
  // 50 %: (1000, 1000): A 20 ms x 110 W + B 10 ms x 110 W = 3.3 J in 30 ms.
  const RunResult r = rig.run("static-best", {{"max_slowdown", "50"}});
  EXPECT_NEAR(r.energy_j, 3.3, 1e-9);
  EXPECT_EQ(r.kernels[0].requested_core_mhz, 1000);
}

TEST(ToyPolicies, OnlinePoliciesLearnIterationZeroThenApplyTheOptimum) {
  Rig rig(3);
  for (const char* p : {"kernel-predictive", "pass-level", "latency-aware"}) {
    const RunResult r = rig.run(p, {});
    EXPECT_NEAR(iteration_energy(r, 0), 4.4, 1e-9) << p << ": profiling at default clocks";
    EXPECT_NEAR(iteration_energy(r, 1), 3.15, 1e-9) << p;
    EXPECT_NEAR(iteration_energy(r, 2), 3.15, 1e-9) << p;
    EXPECT_EQ(r.end_ns - r.begin_ns, 60'000'000) << p;
  }
}

// Iterations of 10 ms kernels named by `names` (one string per iteration, a
// letter per kernel; A is compute-bound, every other letter memory-bound).
Workload sequences(const std::vector<std::string>& names) {
  Workload w;
  w.source_path = "toy2";
  w.capture.device = "toy2";
  w.intern("");
  std::int64_t t = 0;
  for (std::size_t it = 0; it < names.size(); ++it) {
    w.iteration_begin.push_back(static_cast<std::uint32_t>(w.kernels.size()));
    for (const char c : names[it]) {
      Kernel k;
      k.name_id = w.intern(std::string(1, c));
      k.cls = c == 'A' ? KernelClass::gemm : KernelClass::elementwise;
      k.phase = c == 'A' ? Phase::forward : Phase::backward;
      k.iteration = static_cast<std::int32_t>(it);
      k.traced_start_ns = t;
      k.work.duration_ns = 10'000'000;
      t += k.work.duration_ns;
      w.kernels.push_back(k);
    }
  }
  w.iterations = static_cast<std::int32_t>(names.size());
  w.iteration_begin.push_back(static_cast<std::uint32_t>(w.kernels.size()));
  return w;
}

// A first iteration unlike the rest (a warm-up kernel W before A and B): the
// iteration followed after it has 2 kernels of the 3 learned (a third off,
// over kRelearnShare), so the next one is profiled again at the default
// clocks and the plan made anew. Per iteration: 3 x 2.2 J profiling the
// warm-up; 3.15 J following its plan (A and B found at their positions);
// 4.4 J profiling again; 3.15 J after.
TEST(ToyPolicies, OnlinePoliciesLearnAgainWhenTheLearnedIterationDoesNotRepeat) {
  Rig rig(sequences({"WAB", "AB", "AB", "AB", "AB"}));
  for (const char* p : {"kernel-predictive", "latency-aware"}) {
    const RunResult r = rig.run(p, {});
    EXPECT_NEAR(iteration_energy(r, 0), 6.6, 1e-9) << p;
    EXPECT_NEAR(iteration_energy(r, 1), 3.15, 1e-9) << p;
    EXPECT_NEAR(iteration_energy(r, 2), 4.4, 1e-9) << p << ": profiled again";
    EXPECT_NEAR(iteration_energy(r, 3), 3.15, 1e-9) << p;
    EXPECT_NEAR(iteration_energy(r, 4), 3.15, 1e-9) << p;
    EXPECT_EQ(r.end_ns - r.begin_ns, 110'000'000) << p;
    ASSERT_FALSE(r.policy_notes.empty()) << p;
    EXPECT_NE(r.policy_notes[0].find("did not repeat the learned sequence"), std::string::npos)
        << r.policy_notes[0];
  }
  // Iterations that repeat are learned once.
  Rig same(sequences({"AB", "AB", "AB"}));
  EXPECT_TRUE(same.run("kernel-predictive", {}).policy_notes.empty());
}

// A kernel the learned sequence does not have (X, in the second iteration,
// between A and B) runs at the default clocks, not at the pair the plan asked
// for the kernel before it (A's (2000, 500), which would halve a
// memory-bound kernel's speed).
TEST(ToyPolicies, AKernelThePlanDoesNotKnowRunsAtTheDefaultClocks) {
  Rig rig(sequences({"AB", "AXB", "AB"}));
  const RunResult r = rig.run("kernel-predictive", {});
  ASSERT_EQ(r.kernels.size(), 7u);
  EXPECT_EQ(r.kernels[2].requested_memory_mhz, 500);  // A, as planned
  EXPECT_EQ(r.kernels[3].requested_core_mhz, 2000);   // X
  EXPECT_EQ(r.kernels[3].requested_memory_mhz, 1000);
  EXPECT_EQ(r.kernels[3].duration_ns, 10'000'000);
  EXPECT_EQ(r.kernels[4].requested_core_mhz, 1000);  // B, found again
}

TEST(ToyPolicies, KernelPredictiveIssuesSwitchesEarlySoTheyLandOnTime) {
  // 2 ms switches: requested 2 ms before the kernel they are for.
  Rig rig(3);
  const RunResult r = rig.run("kernel-predictive", {}, true, 2000.0);
  EXPECT_NEAR(iteration_energy(r, 2), 3.15, 1e-9);
  for (const auto& s : r.switches)
    if (s.domain != SwitchRecord::Domain::power_cap && s.request_ns >= 30'000'000) {
      EXPECT_EQ(s.land_ns % 10'000'000, 0) << "lands at a kernel boundary";
    }
}

// An online policy's rehearsal (plan::rehearse) of the learned iteration with
// 2 ms switches, no stall. The plan: A at (2000, 500), B at (1000, 1000).
//   Requested at each kernel's start: A runs 2 ms at (2000, 1000) (220 W) and
//   8 ms at (2000, 500) (205 W): 10 ms, 2.08 J; B runs 2 ms at (2000, 500),
//   half speed on memory, doing 1 ms of its work (205 W, 0.41 J), then 9 ms
//   at (1000, 1000) (110 W, 0.99 J): 21 ms, 3.48 J in all.
//   Followed early: A as above (the first request cannot be early), B's
//   request at 8 ms lands at 10 ms: 20 ms, 2.08 + 1.1 = 3.18 J.
// The second iteration of each rehearsal (Rehearsal::next_*), from the
// clocks the first left:
//   at start: A starts at B's (1000, 1000), half speed for 2 ms (1 ms of its
//   work, 110 W, 0.22 J), then 9 ms at (2000, 500) (1.845 J); B starts at
//   (2000, 500), 2 ms for 1 ms of work (0.41 J), then 9 ms (0.99 J): 22 ms,
//   3.465 J. Early: A's request for the next iteration goes out 2 ms before
//   B ends and lands as A starts: 20 ms, 2.05 + 1.1 = 3.15 J.
TEST(ToyPolicies, RehearsalRunsTheLearnedIterationWithTheSwitchLatency) {
  Rig rig(1);
  rig.dev.memory_switch_stall_us = 0.0;
  plan::Rehearsal none, at_start, early;
  rig.replay_probe(2000.0, [&](PolicyContext& ctx) {
    std::vector<plan::ItemSpec> items(2);
    std::vector<plan::Switcher::Step> steps(2);
    for (std::size_t i = 0; i < 2; ++i) {
      items[i].cost = ctx.costs()[i];
      steps[i].duration_ns = 10'000'000;
    }
    steps[0].pair = make_clocks(ctx.device(), 2000, 500);
    steps[1].pair = make_clocks(ctx.device(), 1000, 1000);
    none = rehearse_toy(ctx, items, nullptr, true);
    at_start = rehearse_toy(ctx, items, &steps, false);
    early = rehearse_toy(ctx, items, &steps, true);
  });
  EXPECT_NEAR(none.time_ns, 20e6, 1);
  EXPECT_NEAR(none.energy_j, 4.4, 1e-9);
  EXPECT_NEAR(at_start.time_ns, 21e6, 1);
  EXPECT_NEAR(at_start.energy_j, 3.48, 1e-9);
  EXPECT_NEAR(early.time_ns, 20e6, 1);
  EXPECT_NEAR(early.energy_j, 3.18, 1e-9);
  EXPECT_NEAR(none.next_time_ns, 20e6, 1);
  EXPECT_NEAR(none.next_energy_j, 4.4, 1e-9);
  EXPECT_NEAR(at_start.next_time_ns, 22e6, 1);
  EXPECT_NEAR(at_start.next_energy_j, 3.465, 1e-9);
  EXPECT_NEAR(early.next_time_ns, 20e6, 1);
  EXPECT_NEAR(early.next_energy_j, 3.15, 1e-9);
}

// A host that keeps launching absorbs a delay (ItemSpec::observed_start_ns).
// The learned iteration A, A, A (10 ms each at (2000, 1000)), each of the
// first two followed by a 5 ms wait for the host (floor 15 ms; observed
// starts 0, 15 and 30 ms); switches free. The plan runs the first A at
// (1000, 1000): 20 ms, past the second's launch at 15 ms. The second starts
// at 20 ms and ends at 30, when the third was launched: it starts then,
// 30-40 ms, the host's wait absorbing the delay. Without the observed starts
// the second A's floor counts from its own late start: the third at 35 ms,
// 45 ms in all.
TEST(ToyPolicies, RehearsalLetsTheHostsLaterWaitsAbsorbADelay) {
  Rig rig(1);
  plan::Rehearsal launched, relative;
  rig.replay_probe(0.0, [&](PolicyContext& ctx) {
    std::vector<plan::ItemSpec> items(3);
    std::vector<plan::Switcher::Step> steps(3);
    for (std::size_t i = 0; i < 3; ++i) {
      items[i].cost = ctx.costs()[0];
      items[i].floor_ns = i < 2 ? 15'000'000 : 0;
      items[i].observed_start_ns = 15'000'000.0 * static_cast<double>(i);
      steps[i].duration_ns = 10'000'000;
      steps[i].pair = make_clocks(ctx.device(), i == 0 ? 1000 : 2000, 1000);
    }
    launched = rehearse_toy(ctx, items, &steps, false);
    for (auto& it : items) it.observed_start_ns = -1.0;
    relative = rehearse_toy(ctx, items, &steps, false);
  });
  EXPECT_NEAR(launched.time_ns, 40e6, 1);
  EXPECT_NEAR(relative.time_ns, 45e6, 1);
}

// The host is delayed only where it waited for the GPU
// (ItemSpec::launched_after_sync), as in the engine. The learned iteration
// A, B, C (10 ms each at (2000, 1000)); B was launched while A ran (its start
// set by the GPU, observed at 10 ms), B is followed by a 10 ms wait for C's
// launch (floor 20 ms, C observed at 30 ms); switches free. The plan runs A
// at (1000, 1000): 20 ms. B then starts at 20 ms and ends at 30, when C was
// launched: C runs 30-40 ms, the host having kept its pace. Had B been
// launched after a host synchronisation, the host waits for A's late end and
// C's launch moves by the same 10 ms: 40-50 ms.
TEST(ToyPolicies, RehearsalDelaysTheHostOnlyWhereItWaitedForTheGpu) {
  Rig rig(1);
  plan::Rehearsal unsynced, synced;
  rig.replay_probe(0.0, [&](PolicyContext& ctx) {
    std::vector<plan::ItemSpec> items(3);
    std::vector<plan::Switcher::Step> steps(3);
    for (std::size_t i = 0; i < 3; ++i) {
      items[i].cost = ctx.costs()[0];
      steps[i].duration_ns = 10'000'000;
      steps[i].pair = make_clocks(ctx.device(), i == 0 ? 1000 : 2000, 1000);
    }
    items[0].observed_start_ns = 0;
    items[1].observed_start_ns = 10'000'000;
    items[1].floor_ns = 20'000'000;
    items[2].observed_start_ns = 30'000'000;
    unsynced = rehearse_toy(ctx, items, &steps, false);
    items[1].launched_after_sync = true;
    synced = rehearse_toy(ctx, items, &steps, false);
  });
  EXPECT_NEAR(unsynced.time_ns, 40e6, 1);
  EXPECT_NEAR(synced.time_ns, 50e6, 1);
}

// An early switch is timed from when the kernel before the gap ended, also
// when a timer wakes the switcher inside the gap. 15 ms switches; the learned
// iteration A (10 ms at (2000, 1000)), a 30 ms gap, then B, the plan A at
// (2000, 1000) and B at (1000, 1000) (20 ms there), followed early: B's
// switch is requested at 25 ms and lands at 40 ms as B starts, so B runs
// 20 ms at 1000 MHz and the iteration ends at 60 ms. (Predicting B's start
// from the timer's time, 25 + 30 ms, put the request off until B started:
// B ran at 2000 MHz, 10 ms, the switch landing after it.)
TEST(ToyPolicies, SwitcherTimesASwitchAcrossAGapFromTheKernelsEnd) {
  Rig rig(1);
  plan::Rehearsal early;
  rig.replay_probe(15000.0, [&](PolicyContext& ctx) {
    std::vector<plan::ItemSpec> items(2);
    std::vector<plan::Switcher::Step> steps(2);
    for (std::size_t i = 0; i < 2; ++i) {
      items[i].cost = ctx.costs()[0];
      steps[i].pair = make_clocks(ctx.device(), i == 0 ? 2000 : 1000, 1000);
      steps[i].duration_ns = i == 0 ? 10'000'000 : 20'000'000;
    }
    items[0].gap_ns = steps[0].gap_ns = 30'000'000;
    early = rehearse_toy(ctx, items, &steps, true);
  });
  EXPECT_NEAR(early.step_ns[1], 20e6, 1);
  EXPECT_NEAR(early.time_ns, 60e6, 1);
}

// A kernel the plan does not know runs at the default clocks, raised to the
// floor of the kernels in flight (the switch applies to them too). Default
// clocks (1000, 1000), the floor (2000, 1000): the Switcher asks for
// (2000, 1000) when the unknown kernel starts (before, the default pair,
// already in force: no request, and the kernels in flight at 1000 MHz).
TEST(ToyPolicies, SwitcherRaisesTheDefaultClocksOfAnUnknownKernelToTheFloor) {
  Rig rig(1);
  rig.dev.default_core_mhz = 1000;
  class Driver final : public Policy {
   public:
    void begin(PolicyContext& ctx) override {
      std::vector<plan::Switcher::Step> steps(2);
      for (auto& s : steps) s.pair = make_clocks(ctx.device(), 2000, 1000);
      sw_.set_plan(steps, false);
      sw_.set_floor(make_clocks(ctx.device(), 2000, 1000));
    }
    void on_kernel_start(PolicyContext& ctx, std::uint32_t) override { sw_.on_start(ctx, -1); }

   private:
    plan::Switcher sw_;
  };
  Driver driver;
  const RunResult r = replay_toy(rig.toy(), driver, nullptr, 0.0);
  for (int k = 0; k < 2; ++k) {
    EXPECT_EQ(r.kernels[static_cast<std::size_t>(k)].requested_core_mhz, 2000) << k;
    EXPECT_EQ(r.kernels[static_cast<std::size_t>(k)].requested_memory_mhz, 1000) << k;
  }
}

// The Switcher never retargets a switch still in flight. 15 ms switches,
// the learned iteration A, A, B (10 ms each at the default clocks), the plan
// A, A at (2000, 500) and B at (1000, 1000), followed early:
//   A's pair is requested as the first A starts and lands at 15 ms. B's
//   request, due at 5 ms (15 ms before B), waits until then and lands at
//   30 ms. So: A 0-10 ms and A 10-15 ms at (2000, 1000) (220 W: 2.2 + 1.1 J),
//   15-20 ms at (2000, 500) (205 W: 1.025 J); B 20-30 ms at (2000, 500), half
//   speed (5 ms of its work, 2.05 J), then 5 ms at (1000, 1000) (110 W:
//   0.55 J): 35 ms, 6.925 J. (Had B's request gone out at 5 ms it would have
//   retargeted A's pending switch to B's pair: A at 1000 MHz from 15 ms.)
TEST(ToyPolicies, SwitcherWaitsForTheSwitchInFlight) {
  Rig rig(1);
  rig.dev.memory_switch_stall_us = 0.0;
  plan::Rehearsal early;
  rig.replay_probe(15000.0, [&](PolicyContext& ctx) {
    std::vector<plan::ItemSpec> items(3);
    std::vector<plan::Switcher::Step> steps(3);
    for (std::size_t i = 0; i < 3; ++i) {
      items[i].cost = ctx.costs()[i < 2 ? 0 : 1];
      steps[i].duration_ns = 10'000'000;
      steps[i].pair = make_clocks(ctx.device(), i < 2 ? 2000 : 1000, i < 2 ? 500 : 1000);
    }
    early = rehearse_toy(ctx, items, &steps, true);
  });
  EXPECT_NEAR(early.time_ns, 35e6, 1);
  EXPECT_NEAR(early.energy_j, 6.925, 1e-9);
}

TEST(ToyPolicies, OnlinePoliciesHoldTheBudgetWhenTheirSwitchesWouldLandLate) {
  // 2 ms switches requested at kernel start (early=0): every per-kernel plan
  // that moves a clock makes B run late (21 ms for 20 ms, rehearsed above), so
  // kernel-predictive holds the default clocks: the baseline's 60 ms and
  // 4.4 J per iteration, and a note saying why.
  Rig rig(3);
  rig.dev.memory_switch_stall_us = 0.0;
  const RunResult r = rig.run("kernel-predictive", {{"early", "0"}}, true, 2000.0);
  EXPECT_EQ(r.end_ns - r.begin_ns, 60'000'000);
  for (int it = 0; it < 3; ++it) EXPECT_NEAR(iteration_energy(r, it), 4.4, 1e-9) << it;
  ASSERT_EQ(r.policy_notes.size(), 1u);
  EXPECT_NE(r.policy_notes[0].find("holding the default clocks"), std::string::npos);
  // Followed early, the same plan lands on time: 3.18 J in the iteration it
  // is made in (its first request is made at A's start), 3.15 J after.
  for (const char* p : {"kernel-predictive", "latency-aware"}) {
    const RunResult e = rig.run(p, {}, true, 2000.0);
    EXPECT_EQ(e.end_ns - e.begin_ns, 60'000'000) << p;
    EXPECT_NEAR(iteration_energy(e, 1), 3.18, 1e-9) << p;
    EXPECT_NEAR(iteration_energy(e, 2), 3.15, 1e-9) << p;
  }
}

TEST(ToyPolicies, LatencyOracleIsTheKernelOracleWithoutLatency) {
  // No switch latency: the per-kernel optimum, A at (2000, 500) and B at
  // (1000, 1000): 3.15 J in the baseline's 20 ms.
  Rig rig(1);
  const RunResult r = rig.run("latency-oracle", {});
  EXPECT_NEAR(r.energy_j, 3.15, 1e-9);
  EXPECT_EQ(r.end_ns - r.begin_ns, 20'000'000);
  ASSERT_EQ(r.solver.size(), 1u);
  EXPECT_EQ(r.solver[0].policy, "latency-oracle");
}

TEST(ToyPolicies, LatencyOracleNeverLosesToTheBaselineOrOnePair) {
  // 15 ms switches, longer than either 10 ms kernel: a switch requested when
  // the run starts lands inside B, so every per-kernel plan runs off target.
  // Whatever it picks, the oracle holds the 20 ms budget (as replayed) and
  // uses no more energy than the baseline (4.4 J) or static-best.
  Rig rig(1);
  const RunResult s = rig.run("static-best", {}, true, 15000.0);
  const RunResult r = rig.run("latency-oracle", {}, true, 15000.0);
  EXPECT_LE(r.end_ns - r.begin_ns, 20'000'000);
  EXPECT_LE(r.energy_j, 4.4 + 1e-9);
  EXPECT_LE(r.energy_j, s.energy_j + 1e-9);
}

// An oracle's replay (plan::replay_plan) switches each domain at its own
// expected latency: on a device whose core switches take 1 ms and memory
// switches 5 ms, a plan that moves both clocks at the first kernel's start
// lands the core switch at 1 ms and the memory switch at 5 ms (it used to
// replay both at the core's latency), each stall the run's own (none here).
TEST(ToyPolicies, OracleReplaySwitchesEachDomainAtItsOwnLatency) {
  Rig rig(1);
  rig.dev.core_switch.value_us = 1000.0;
  rig.dev.memory_switch.value_us = 5000.0;
  rig.dev.memory_switch_stall_us = 0.0;
  RunResult replayed;
  rig.replay_probe(-1.0, [&](PolicyContext& ctx) {
    const std::vector<Clocks> pairs(ctx.workload().kernels.size(),
                                    make_clocks(ctx.device(), 1000, 500));
    replayed = plan::replay_plan(ctx, &pairs);
  });
  int core = 0, memory = 0;
  for (const auto& s : replayed.switches) {
    if (s.domain == SwitchRecord::Domain::core) {
      ++core;
      EXPECT_EQ(s.land_ns - s.request_ns, 1'000'000);
    } else if (s.domain == SwitchRecord::Domain::memory) {
      ++memory;
      EXPECT_EQ(s.land_ns - s.request_ns, 5'000'000);
      EXPECT_EQ(s.stall_ns, 0);
    }
  }
  EXPECT_EQ(core, 1);
  EXPECT_EQ(memory, 1);
}

TEST(ToyPolicies, PassLevelHoldsTheDefaultClocksWhenPhasesEndBeforeTheirSwitchLands) {
  // 15 ms switches, 10 ms phases: each phase's switch would land in the next
  // phase, so pass-level keeps the default clocks: 4.4 J in every iteration,
  // no switch, and a note saying why.
  Rig rig(3);
  const RunResult r = rig.run("pass-level", {}, true, 15000.0);
  for (int it = 0; it < 3; ++it) EXPECT_NEAR(iteration_energy(r, it), 4.4, 1e-9) << it;
  EXPECT_EQ(r.end_ns - r.begin_ns, 60'000'000);
  ASSERT_EQ(r.policy_notes.size(), 1u);
  EXPECT_NE(r.policy_notes[0].find("2 of 2 phases are shorter"), std::string::npos);
  // 5 ms switches, each phase starting 5 ms on the previous phase's clocks
  // at half speed: A 2.5 ms of work at (1000, 1000) then 7.5 ms, B the same
  // at (2000, 500): 25 ms an iteration. The rehearsal (two iterations of the
  // learned sequence) shows it: over a 0 % budget the default clocks are
  // held; within 30 % (26 ms) the plan runs: its first iteration (A's switch
  // lands 5 ms in, no time lost: 5 ms x 220 W + 5 ms x 205 W = 2.125 J; B
  // 5 ms x 205 W + 7.5 ms x 110 W = 1.85 J) 3.975 J in 22.5 ms, the next
  // ones (A 5 ms x 110 W + 7.5 ms x 205 W = 2.0875 J) 3.9375 J in 25 ms.
  const RunResult f = rig.run("pass-level", {}, true, 5000.0);
  ASSERT_EQ(f.policy_notes.size(), 1u);
  EXPECT_NE(f.policy_notes[0].find("misses the budget in rehearsal"), std::string::npos);
  EXPECT_NEAR(iteration_energy(f, 2), 4.4, 1e-9);
  const RunResult g = rig.run("pass-level", {{"max_slowdown", "30"}}, true, 5000.0);
  EXPECT_TRUE(g.policy_notes.empty());
  EXPECT_NEAR(iteration_energy(g, 1), 3.975, 1e-9);
  EXPECT_NEAR(iteration_energy(g, 2), 3.9375, 1e-9);
  EXPECT_EQ(g.end_ns - g.begin_ns, 20'000'000 + 22'500'000 + 25'000'000);
}

// A then B each iteration (30 ms apart), B launched by the host 20 ms after A:
// A (10 ms at 2000 MHz) leaves the GPU waiting 10 ms for the host. With
// `sync`, the host waits for A to end before it goes on to launch B (a
// synchronisation between the two launches): the wait then moves with A.
// `launch_b_ms` (one entry per iteration, if given): when B is launched
// after A instead (10 or less: no wait, B queues behind A).
Workload host_gap_workload(int iterations, bool sync, std::vector<int> launch_b_ms = {}) {
  Workload w = workload(iterations);
  for (int it = 0; it < iterations; ++it) {
    const std::int64_t t0 = std::int64_t{30'000'000} * it;
    Kernel& a = w.kernels[static_cast<std::size_t>(2 * it)];
    Kernel& b = w.kernels[static_cast<std::size_t>(2 * it + 1)];
    const std::int64_t after_ms =
        launch_b_ms.empty() ? 20 : launch_b_ms[static_cast<std::size_t>(it)];
    a.host_launch_ns = a.traced_start_ns = t0;
    b.host_launch_ns = t0 + after_ms * 1'000'000;
    b.traced_start_ns = t0 + std::max<std::int64_t>(after_ms, 10) * 1'000'000;
    if (sync) {
      SyncPoint sp;
      sp.kind = SyncPoint::Kind::device;
      sp.host_begin_ns = t0 + 1'000'000;
      sp.traced_end_ns = t0 + 10'000'000;
      sp.waits_until_kernel = static_cast<std::uint32_t>(2 * it + 1);
      w.syncs.push_back(sp);
    }
  }
  return w;
}

TEST(ToyPolicies, OnlinePoliciesLetAKernelAbsorbAWaitForTheHost) {
  // host_slack=1. The profiling iteration shows A followed by a 10 ms wait for B's launch,
  // on one stream with no synchronisation between: A may take up to 20 ms
  // for free. A at (1000, 500) takes 20 ms at 95 W = 1.9 J and ends when B
  // is launched; B at (1000, 1000) 10 ms at 110 W = 1.1 J: 3.0 J per
  // iteration, no idle time, 30 ms as the baseline.
  Rig rig(host_gap_workload(3, false));
  ASSERT_EQ(rig.base.end_ns - rig.base.begin_ns, 90'000'000);
  for (const char* p : {"kernel-predictive", "latency-aware"}) {
    const RunResult r = rig.run(p, {{"host_slack", "1"}});
    EXPECT_EQ(r.end_ns - r.begin_ns, 90'000'000) << p;
    for (int it = 1; it < 3; ++it) {
      EXPECT_NEAR(iteration_energy(r, it), 3.0, 1e-9) << p << " iteration " << it;
      EXPECT_EQ(r.kernels[static_cast<std::size_t>(2 * it)].requested_core_mhz, 1000) << p;
      EXPECT_EQ(r.kernels[static_cast<std::size_t>(2 * it)].requested_memory_mhz, 500) << p;
    }
  }
  // With the host waiting for A before it launches B, a slower A delays B:
  // no slack, A keeps the core at 2000 MHz (its own hand optimum, 2.05 J at
  // (2000, 500)) and the run its 90 ms.
  Rig synced(host_gap_workload(3, true));
  for (const char* p : {"kernel-predictive", "latency-aware"}) {
    const RunResult r = synced.run(p, {{"host_slack", "1"}});
    EXPECT_LE(r.end_ns - r.begin_ns, synced.base.end_ns - synced.base.begin_ns) << p;
    EXPECT_EQ(r.kernels[4].requested_core_mhz, 2000) << p;
  }
  // Off, the wait is a fixed gap: A keeps 2000 MHz.
  for (const char* p : {"kernel-predictive", "latency-aware"})
    EXPECT_EQ(rig.run(p, {{"host_slack", "0"}}).kernels[4].requested_core_mhz, 2000) << p;
  // Switches of a random latency (lognormal, median 100 us): latency-aware
  // holds margin_pct (0.1 %) of the budget back, but only out of the slowdown
  // it is allowed: at 0 % the budget stays the default clocks' 30 ms, which
  // this host-bound iteration cannot beat, and A still absorbs the wait.
  Rig random = rig;
  random.dev.core_switch = {LatencyDistribution::Kind::lognormal, 100.0, 10.0, 1000.0, 0.5};
  random.dev.memory_switch = random.dev.core_switch;
  random.dev.memory_switch_stall_us = 0.0;
  const RunResult r = random.run("latency-aware", {{"host_slack", "1"}}, true, -1.0);
  for (int it = 1; it < 3; ++it) {
    EXPECT_EQ(r.kernels[static_cast<std::size_t>(2 * it)].requested_core_mhz, 1000) << it;
    EXPECT_EQ(r.kernels[static_cast<std::size_t>(2 * it)].requested_memory_mhz, 500) << it;
  }
  // 5.1 J in the profiling iteration, then about 3.0 J each (the switches
  // land a few tens of us off their boundaries).
  EXPECT_NEAR(r.energy_j, 5.1 + 2 * 3.0, 0.05);
}

// host_slack=recurring (the default): the plan made after the profiling
// iteration leaves its wait alone (A at (2000, 500), its own optimum: 2.05 J);
// the wait came back in the iteration after it, so from the third iteration
// on A absorbs it as with host_slack=1 (A at (1000, 500), 3.0 J an
// iteration, the baseline's 30 ms).
TEST(ToyPolicies, OnlinePoliciesUseAWaitForTheHostOnceItCameBack) {
  Rig rig(host_gap_workload(4, false));
  for (const char* p : {"kernel-predictive", "latency-aware"}) {
    const RunResult r = rig.run(p, {});
    EXPECT_EQ(r.end_ns - r.begin_ns, 120'000'000) << p;
    EXPECT_EQ(r.kernels[2].requested_core_mhz, 2000) << p;
    EXPECT_EQ(r.kernels[2].requested_memory_mhz, 500) << p;
    for (int it = 2; it < 4; ++it) {
      EXPECT_NEAR(iteration_energy(r, it), 3.0, 1e-9) << p << " iteration " << it;
      EXPECT_EQ(r.kernels[static_cast<std::size_t>(2 * it)].requested_core_mhz, 1000) << p;
      EXPECT_EQ(r.kernels[static_cast<std::size_t>(2 * it)].requested_memory_mhz, 500) << p;
    }
    bool noted = false;
    for (const std::string& n : r.policy_notes)
      noted = noted || n.find("1 of the 1 waits for the host of profiling iteration 0 came back") !=
                           std::string::npos;
    EXPECT_TRUE(noted) << p;
  }
  // The wait of the profiling iteration does not come back (B launched 5 ms
  // after A from then on, queued behind it): A keeps 2000 MHz throughout.
  Rig once(host_gap_workload(4, false, {20, 5, 5, 5}));
  for (const char* p : {"kernel-predictive", "latency-aware"}) {
    const RunResult r = once.run(p, {});
    for (int it = 1; it < 4; ++it)
      EXPECT_EQ(r.kernels[static_cast<std::size_t>(2 * it)].requested_core_mhz, 2000) << p;
    for (const std::string& n : r.policy_notes)
      EXPECT_EQ(n.find("host slack"), std::string::npos) << p << ": " << n;
  }
  // It comes back shorter (B launched 15 ms after A): A may take 15 ms, not
  // the 20 it would at 1000 MHz, so it keeps 2000 MHz.
  Rig shorter(host_gap_workload(4, false, {20, 15, 20, 20}));
  for (const char* p : {"kernel-predictive", "latency-aware"}) {
    const RunResult r = shorter.run(p, {});
    for (int it = 2; it < 4; ++it)
      EXPECT_EQ(r.kernels[static_cast<std::size_t>(2 * it)].requested_core_mhz, 2000) << p;
  }
}

// Where an idle GPU drops its clocks (plan::idle_drop), at 100 us switches.
// The toy's idle power: 50 W, plus 20 W of memory at 1000 MHz and 5 W at 500;
// its core clock draws nothing idle. From (1000, 1000), 70 W, (1000, 500)
// saves 15 W; its debt is the next kernel's half memory clock while the
// switch back lands, 0.5 x 100 us = 50 us, at the board's 1000 W: 50 mJ,
// which 15 W repays in 3.333 ms of idle. A 50 us memory retrain, on the way
// down and back, adds 100 us: 150 us x 1000 W / 15 W = 10 ms. From
// (2000, 500) no pair idles cheaper.
TEST(ToyPolicies, IdleDropWaitsUntilTheIdlePowerPaysForTheSwitchBack) {
  Rig rig(1);
  auto probe = [&](Rig& r, int core, int memory) {
    plan::IdleDrop q;
    r.replay_probe(100.0, [&](PolicyContext& ctx) {
      q = plan::idle_drop(ctx, make_clocks(ctx.device(), core, memory));
    });
    return q;
  };
  const plan::IdleDrop q = probe(rig, 1000, 1000);
  ASSERT_TRUE(q.have);
  EXPECT_EQ(q.pair.core_mhz, 1000);
  EXPECT_EQ(q.pair.memory_mhz, 500);
  EXPECT_NEAR(q.saved_w, 15.0, 1e-12);
  EXPECT_NEAR(q.wait_ns, 3'333'333.333, 1e-3);
  EXPECT_FALSE(probe(rig, 2000, 500).have);
  Rig stall(1);
  stall.dev.memory_switch_stall_us = 50.0;
  EXPECT_NEAR(probe(stall, 1000, 1000).wait_ns, 10'000'000.0, 1e-3);
}

// The toy as a context a test drives by hand: the time is set, requests
// land at once (wanted and effective alike), switches are expected to take
// `latency_ns` (no memory stall), and the last timer asked for is kept.
class HandContext final : public PolicyContext {
 public:
  HandContext(Rig& rig, double latency_ns) : rig_(rig), latency_ns_(latency_ns) {
    clocks_ = default_clocks(rig.dev);
  }
  std::int64_t now = 0;
  std::int64_t timer = -1;
  std::vector<Clocks> requests;
  std::int64_t now_ns() const override { return now; }
  void request(std::int32_t core_mhz, std::int32_t memory_mhz) override {
    clocks_ = make_clocks(rig_.dev, core_mhz, memory_mhz);
    requests.push_back(clocks_);
  }
  void set_timer(std::int64_t at_ns) override { timer = at_ns; }
  Clocks effective() const override { return clocks_; }
  Clocks wanted() const override { return clocks_; }
  double expected_core_switch_ns() const override { return latency_ns_; }
  double expected_memory_switch_ns() const override { return latency_ns_; }
  double core_switch_quantile_ns(double) const override { return latency_ns_; }
  double memory_switch_quantile_ns(double) const override { return latency_ns_; }
  double expected_memory_stall_ns() const override { return 0.0; }
  const Device& device() const override { return rig_.dev; }
  const Workload& workload() const override { return rig_.w; }
  const std::vector<KernelCost>& costs() const override { return rig_.costs; }
  const LatencyModel& latency() const override { return rig_.lat; }
  const PowerModel& power() const override { return rig_.pow; }
  const Governor* governor() const override { return &rig_.gov; }
  const RunResult* baseline() const override { return nullptr; }

 private:
  Rig& rig_;
  double latency_ns_;
  Clocks clocks_;
};

// The Switcher's idle drop by hand, at 100 us switches: A (2000, 500) for
// 10 ms, then B (1000, 1000) with no gap planned between them. A ends at
// 10 ms: B's pair is asked for at once, and the drop is due 3.333 ms later
// (from (1000, 1000): the first test above), to (1000, 500). A kernel on
// another stream that starts during the drop (end_drop) gets (1000, 1000)
// back; B, starting after it, then needs no request. Without idle drops no
// timer is set at A's end (nothing else changes before B).
TEST(ToyPolicies, SwitcherDropsPastThePlannedGapAndEndsTheDropForAnotherStream) {
  Rig rig(1);
  const Clocks a = make_clocks(rig.dev, 2000, 500), b = make_clocks(rig.dev, 1000, 1000);
  for (const bool on : {true, false}) {
    HandContext ctx(rig, 100'000.0);
    plan::Switcher sw;
    sw.set_plan({{a, 10e6, 0.0}, {b, 10e6, 10e6}}, true);
    sw.set_idle_drop(on);
    sw.on_start(ctx, 0);
    ctx.now = 10'000'000;
    ctx.timer = -1;  // B's early request, due at 9.9 ms, goes out at A's end instead
    sw.on_end(ctx);
    ASSERT_EQ(ctx.requests.size(), 2u);
    EXPECT_EQ(ctx.requests[1], b);
    if (!on) {
      EXPECT_EQ(ctx.timer, -1);
      continue;
    }
    EXPECT_EQ(ctx.timer, 13'333'334);
    ctx.now = ctx.timer;
    sw.on_timer(ctx);
    ASSERT_EQ(ctx.requests.size(), 3u);
    EXPECT_EQ(ctx.requests[2], make_clocks(rig.dev, 1000, 500));
    ASSERT_TRUE(sw.dropped_from().has_value());
    EXPECT_EQ(*sw.dropped_from(), b);
    EXPECT_EQ(sw.idle_drops(), 1);
    ctx.now = 15'000'000;
    sw.end_drop(ctx);
    ASSERT_EQ(ctx.requests.size(), 4u);
    EXPECT_EQ(ctx.requests[3], b);
    EXPECT_FALSE(sw.dropped_from().has_value());
    ctx.now = 20'000'000;
    sw.on_start(ctx, 1);
    EXPECT_EQ(ctx.requests.size(), 4u);
  }
}

// A host later than the plan's gap delays the positions after it: the
// Switcher predicts them from now, not as if they had run during the wait.
// Plan: three 1 ms kernels at A's pair, then one at B's, no gaps, 100 us
// switches. The first ends at 1 ms and the host then waits: by 2.9 ms the
// plan alone has B's kernel due at 3 ms, but none of the two before it has
// started. No request goes out in the wait (before, B's pair was asked for
// at 2.9 ms and held for the two kernels at A's pair); with the second
// kernel started at 5 ms, B's pair is asked for at 6.9 ms, 100 us before
// its kernel's predicted start.
TEST(ToyPolicies, SwitcherPredictsPositionsAfterALateHostFromNow) {
  Rig rig(1);
  const Clocks a = make_clocks(rig.dev, 2000, 500), b = make_clocks(rig.dev, 1000, 1000);
  HandContext ctx(rig, 100'000.0);
  plan::Switcher sw;
  sw.set_plan({{a, 1e6, 0.0}, {a, 1e6, 0.0}, {a, 1e6, 0.0}, {b, 1e6, 0.0}}, true);
  sw.on_start(ctx, 0);
  ctx.now = 1'000'000;
  sw.on_end(ctx);
  while (ctx.timer >= 0 && ctx.timer < 5'000'000) {
    ctx.now = ctx.timer;
    ctx.timer = -1;
    sw.on_timer(ctx);
  }
  ASSERT_EQ(ctx.requests.size(), 1u);
  ctx.now = 5'000'000;
  sw.on_start(ctx, 1);
  ctx.now = ctx.timer;  // a look again a horizon before the third kernel
  sw.on_timer(ctx);
  EXPECT_EQ(ctx.timer, 6'900'000);
  ctx.now = 6'000'000;
  sw.on_end(ctx);
  sw.on_start(ctx, 2);
  EXPECT_EQ(ctx.timer, 6'900'000);
  ctx.now = ctx.timer;
  sw.on_timer(ctx);
  ASSERT_EQ(ctx.requests.size(), 2u);
  EXPECT_EQ(ctx.requests[1], b);
}

// An online plan followed into a wait it never learned. B is launched 10 ms
// after A (queued behind it, no wait) until the last iteration, where it is
// launched 50 ms after: A ends at 100 ms with B's pair (1000, 1000) in force
// (requested early), and B starts at 140 ms. Past the plan's gap after A
// (none) by 3.333 ms (the test above) the memory drops to 500 MHz, landing
// 100 us later; B starts there and runs its first 100 us at half rate (at
// 95 W) until (1000, 1000) is back. The iteration's energy against the same
// plan without drops: 15 W less over 140 - 103.433 ms, -0.5485 J; B 0.1 ms
// at 95 W and 9.95 ms at 110 W, 4 mJ more than 10 ms at 110 W: -0.5445 J.
// The learned 10 ms gaps between iterations never reach their drop.
TEST(ToyPolicies, OnlinePoliciesDropTheirClocksInAWaitTheyNeverLearned) {
  Rig rig(host_gap_workload(4, false, {10, 10, 10, 50}));
  for (const char* p : {"kernel-predictive", "latency-aware"}) {
    const RunResult on = rig.run(p, {}, true, 100.0);
    const RunResult off = rig.run(p, {{"idle_drop", "0"}}, true, 100.0);
    EXPECT_EQ(off.kernels[7].start_ns, 140'000'000) << p;
    EXPECT_EQ(on.kernels[7].start_ns, 140'000'000) << p;
    EXPECT_EQ(on.kernels[7].duration_ns, 10'050'000) << p;
    EXPECT_EQ(on.kernels[7].requested_memory_mhz, 1000) << p;
    EXPECT_NEAR(iteration_energy(on, 3) - iteration_energy(off, 3), -0.5445, 1e-6) << p;
    for (int it = 0; it < 3; ++it)
      EXPECT_EQ(iteration_energy(on, it), iteration_energy(off, it)) << p << " iteration " << it;
    // In the wait (A's end to B's start): the drop alone, none without it.
    auto in_wait = [](const RunResult& r) {
      std::vector<SwitchRecord> out;
      for (const SwitchRecord& s : r.switches)
        if (s.request_ns > 100'000'000 && s.request_ns < 140'000'000) out.push_back(s);
      return out;
    };
    EXPECT_TRUE(in_wait(off).empty()) << p;
    const std::vector<SwitchRecord> drop = in_wait(on);
    ASSERT_EQ(drop.size(), 1u) << p;
    EXPECT_EQ(drop[0].domain, SwitchRecord::Domain::memory) << p;
    EXPECT_EQ(drop[0].to_mhz, 500) << p;
    EXPECT_EQ(drop[0].request_ns, 103'333'334) << p;
    EXPECT_EQ(drop[0].land_ns, 103'433'334) << p;
    bool noted = false;
    for (const std::string& n : on.policy_notes)
      noted = noted || n.find(
                           "idle drop at 103.333 ms: the GPU had idled 3.333 ms past the "
                           "plan's gap after position 0") != std::string::npos;
    EXPECT_TRUE(noted) << p;
  }
}

// A re-plan made as the kernel that ends an idle drop starts begins from the
// pair dropped from, not from the dropped one: the drop lasts until that
// kernel's request lands, once. The host-gap step of the recurring-slack
// test above (A, a 10 ms wait, B), with a 500 MHz core clock, 10 W drawn at
// 2000 MHz core busy or idle, and iterations 2 and 3 launched 50 ms late. At
// 100 us switches, the first followed iteration ends with A's (2000, 500)
// requested; from it (500, 500) idles 10 W cheaper, for a debt of A at a
// quarter rate for 100 us, 75 us x 1000 W / 10 W = 7.5 ms of idle: the core
// drops at 67.5 ms. The re-plan with the recurring wait is made when
// iteration 2's A starts at 500 MHz; from (2000, 500) it rehearses A at
// (1000, 500) absorbing the wait within the budget, as without the drop. Had
// it started from (500, 500), A's 50 us lost while its pair lands would put
// every plan with slack over the 0 % budget, and A would keep 2000 MHz
// (3.92 J an iteration instead of 3.0).
TEST(ToyPolicies, ARePlanStartsFromThePairAnIdleDropLeft) {
  Rig rig(host_gap_workload(4, false));
  rig.pow.core_2000_w = 10.0;
  rig.dev.core_clocks_mhz = {500, 1000, 2000};
  rig.dev.voltage_curve = {{500, 0.7}, {1000, 0.8}, {2000, 1.0}};
  for (std::size_t k = 4; k < rig.w.kernels.size(); ++k) {
    rig.w.kernels[k].host_launch_ns += 50'000'000;
    rig.w.kernels[k].traced_start_ns += 50'000'000;
  }
  rig.base = rig.run("native", {}, false);
  for (const char* p : {"kernel-predictive", "latency-aware"}) {
    const RunResult r = rig.run(p, {}, true, 100.0);
    int drops = 0;
    for (const SwitchRecord& s : r.switches)
      if (s.domain == SwitchRecord::Domain::core && s.to_mhz == 500) {
        ++drops;
        EXPECT_EQ(s.request_ns, 67'500'000) << p;
        EXPECT_EQ(s.from_mhz, 2000) << p;
      }
    EXPECT_EQ(drops, 1) << p;
    for (int it = 2; it < 4; ++it) {
      EXPECT_EQ(r.kernels[static_cast<std::size_t>(2 * it)].requested_core_mhz, 1000) << p;
      EXPECT_EQ(r.kernels[static_cast<std::size_t>(2 * it)].requested_memory_mhz, 500) << p;
    }
    EXPECT_NEAR(iteration_energy(r, 3), 3.0, 1e-9) << p;
    for (const std::string& n : r.policy_notes)
      EXPECT_EQ(n.find("no plan with them"), std::string::npos) << p << ": " << n;
  }
}

TEST(ToyPolicies, ObjectivesEdpAndEnergy) {
  Rig rig(1);
  // EDP per kernel with both free: A (2000,500) 2.05 J x 10 ms beats slower
  // ones; B (1000,1000) 1.1 J. Totals: 3.15 J, 20 ms -> EDP 0.063 J.s.
  const RunResult r = rig.run("kernel-oracle", {{"objective", "edp"}});
  EXPECT_LE(r.energy_j * r.time_s(), 3.15 * 0.02 + 1e-12);
}

// A sweep's runs share what their inputs share (plan::PlanMemo, installed by
// the sweep for every run): static-best's choice reads the kernels, the models
// and the objective, not the switch latency, nor the memory stall that
// follows it below the device's own (2 ms here: 10 us and 5 ms differ).
TEST(ToyPolicies, StaticBestChoosesOnceAcrossSwitchLatencies) {
  Rig rig(1);
  rig.dev.memory_switch_stall_us = 2000;
  const RunResult alone_10us = rig.run("static-best", {{"max_slowdown", "50"}}, true, 10.0);
  const RunResult alone_5ms = rig.run("static-best", {{"max_slowdown", "50"}}, true, 5000.0);
  plan::PlanMemo memo;
  memo.admit({&rig.dev, &rig.lat, &rig.pow, &rig.gov});
  const plan::PlanMemo::Scope scope(&memo);
  const RunResult at_10us = rig.run("static-best", {{"max_slowdown", "50"}}, true, 10.0);
  const RunResult at_5ms = rig.run("static-best", {{"max_slowdown", "50"}}, true, 5000.0);
  EXPECT_EQ(memo.misses(), 1u);
  EXPECT_EQ(memo.hits(), 1u);
  // (1000, 1000) either way (3.3 J without the switch's time), each run's
  // result the one it has alone, bit for bit.
  EXPECT_EQ(at_5ms.kernels[0].requested_core_mhz, 1000);
  EXPECT_EQ(at_10us.energy_j, alone_10us.energy_j);
  EXPECT_EQ(at_10us.end_ns, alone_10us.end_ns);
  EXPECT_EQ(at_5ms.energy_j, alone_5ms.energy_j);
  EXPECT_EQ(at_5ms.end_ns, alone_5ms.end_ns);
}

// latency-aware at 1 ms and 3 ms (no memory stall on this device): the best
// single pair of the learned iteration is chosen once, and the segment DP at
// 3 ms is the one the 1 ms run made at L_min x 3.
TEST(ToyPolicies, LatencyAwareSharesItsSinglePairAndSegmentPlansAcrossLatencies) {
  Rig rig(3);
  const RunResult alone_1ms = rig.run("latency-aware", {{"max_slowdown", "50"}}, true, 1000.0);
  const RunResult alone_3ms = rig.run("latency-aware", {{"max_slowdown", "50"}}, true, 3000.0);
  plan::PlanMemo memo;
  memo.admit({&rig.dev, &rig.lat, &rig.pow, &rig.gov});
  const plan::PlanMemo::Scope scope(&memo);
  const RunResult at_1ms = rig.run("latency-aware", {{"max_slowdown", "50"}}, true, 1000.0);
  const std::size_t hits_1ms = memo.hits(), misses_1ms = memo.misses();
  // At 1 ms: the single pair, the segment DP at 1 ms and at 3 ms (10 ms is
  // over a quarter of the 20 ms iteration), the per-kernel knapsack (asked
  // again to be followed at each kernel's start: the one hit), the per-phase
  // knapsack, a tightened knapsack (the rehearsal's overshoot) and the first
  // rung of the ladder below that tightening (plan::replan_until_met).
  EXPECT_EQ(misses_1ms, 7u);
  EXPECT_EQ(hits_1ms, 1u);
  const RunResult at_3ms = rig.run("latency-aware", {{"max_slowdown", "50"}}, true, 3000.0);
  // At 3 ms only the tightened knapsack and its ladder's rung are new; the
  // single pair, the segment DP at 3 ms, the per-kernel knapsack (twice) and
  // the per-phase one are reused.
  EXPECT_EQ(memo.misses() - misses_1ms, 2u);
  EXPECT_EQ(memo.hits() - hits_1ms, 5u);
  EXPECT_EQ(at_1ms.energy_j, alone_1ms.energy_j);
  EXPECT_EQ(at_1ms.end_ns, alone_1ms.end_ns);
  EXPECT_EQ(at_3ms.energy_j, alone_3ms.energy_j);
  EXPECT_EQ(at_3ms.end_ns, alone_3ms.end_ns);
  ASSERT_EQ(at_3ms.solver.size(), 1u);
  EXPECT_EQ(at_3ms.solver[0].what, alone_3ms.solver[0].what);
}

}  // namespace
}  // namespace dvfsim::testing
