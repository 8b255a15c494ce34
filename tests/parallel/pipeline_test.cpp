// Pipeline-parallel jobs on the toy GPU of tests/sim/fixtures.h (a kernel at
// 2000 MHz draws 200 W, idle 100 W): iteration times, bubbles, straggler
// stretch and joules computed by hand.
#include <gtest/gtest.h>

#include "parallel/dag.h"
#include "parallel/job.h"
#include "parallel/replay.h"
#include "sim/error.h"
#include "tests/sim/fixtures.h"

namespace dvfsim::testing {
namespace {

// A training step of `blocks` blocks: one forward kernel of fwd_ms and one
// backward kernel of bwd_ms per block (names "f" and "b"), plus an optional
// prologue/epilogue kernel and optimizer kernel.
Workload toy_training(int blocks, double fwd_ms, double bwd_ms, double opt_ms = 0.0) {
  std::vector<double> d;
  std::vector<Phase> ph;
  std::vector<std::string> names;
  for (int i = 0; i < blocks; ++i) {
    d.push_back(fwd_ms);
    ph.push_back(Phase::forward);
    names.push_back("f");
  }
  for (int i = 0; i < blocks; ++i) {
    d.push_back(bwd_ms);
    ph.push_back(Phase::backward);
    names.push_back("b");
  }
  if (opt_ms > 0) {
    d.push_back(opt_ms);
    ph.push_back(Phase::optimizer);
    names.push_back("adam");
  }
  Workload w = toy_workload(d);
  for (std::size_t i = 0; i < w.kernels.size(); ++i) {
    w.kernels[i].phase = ph[i];
    w.kernels[i].name_id = w.intern(names[i]);
  }
  return w;
}

struct PipeRig {
  ToyRig rig;
  PipelineJob job;
  PipelineGraph graph;
  PipeRig(Workload w, const std::string& parallel, const std::string& straggler = "")
      : rig(std::move(w)) {
    ParallelSpec sp = parse_parallel(parallel);
    if (!straggler.empty()) parse_straggler(straggler, sp);
    job = make_job(rig.workload, sp, "toy");
    graph = build_dag(job);
  }
  ParallelInputs inputs() const {
    ParallelInputs in;
    in.workload = &rig.workload;
    in.device = &rig.device;
    in.latency = &rig.latency;
    in.power = &rig.power;
    in.governor = &rig.governor;
    in.costs = &rig.costs;
    in.job = &job;
    in.graph = &graph;
    return in;
  }
  ParallelRun run() const {
    EngineConfig cfg;
    cfg.power_cap = false;
    return replay_parallel(
        inputs(), [] { return std::make_unique<ScriptedPolicy>(); }, cfg);
  }
};

TEST(Pipeline, OneFOneBOrderHasWarmupSteadyAndCooldown) {
  // Stage 0 of 2, 2 microbatches: F0 F1 B0 B1; stage 1: F0 B0 F1 B1.
  using K = InstrKind;
  const auto s0 = stage_order(PipelineSchedule::one_f_one_b, 0, 2, 2);
  const auto s1 = stage_order(PipelineSchedule::one_f_one_b, 1, 2, 2);
  const std::vector<std::pair<K, int>> e0 = {
      {K::forward, 0}, {K::forward, 1}, {K::backward, 0}, {K::backward, 1}};
  const std::vector<std::pair<K, int>> e1 = {
      {K::forward, 0}, {K::backward, 0}, {K::forward, 1}, {K::backward, 1}};
  EXPECT_EQ(s0, e0);
  EXPECT_EQ(s1, e1);
}

TEST(Pipeline, TwoStagesTwoMicrobatchesOneFOneBByHand) {
  // Each stage: forward 10 ms, backward 20 ms. 1F1B:
  //   s0 F0 [0,10]  s1 F0 [10,20]  s0 F1 [10,20]  s1 B0 [20,40]  s1 F1 [40,50]
  //   s0 B0 [40,60] s1 B1 [50,70]  s0 B1 [70,90]
  // Iteration 90 ms; each GPU is busy 2 x 30 = 60 ms and idle 30 ms (the
  // bubble, (S-1)(F+B) = 30 ms): 60 ms x 200 W + 30 ms x 100 W = 15 J each.
  PipeRig p(toy_training(2, 10, 20), "pp=2,microbatches=2");
  ASSERT_EQ(p.job.layers.layers, 2);
  const ParallelRun r = p.run();
  EXPECT_EQ(r.iteration_ns, 90'000'000);
  EXPECT_EQ(r.critical_path_ns, 90'000'000);
  ASSERT_EQ(r.gpus.size(), 2u);
  for (const GpuRun& g : r.gpus) {
    EXPECT_NEAR(g.busy_s, 0.060, 1e-12);
    EXPECT_NEAR(0.090 - g.busy_s, 0.030, 1e-12);  // the bubble
    EXPECT_NEAR(g.energy_j, 15.0, 1e-9);
  }
  EXPECT_NEAR(r.energy_j, 30.0, 1e-9);
}

TEST(Pipeline, GpipeTwoStagesByHand) {
  // s0 F0 [0,10] F1 [10,20]; s1 F0 [10,20] F1 [20,30] B0 [30,50] B1 [50,70];
  // s0 B0 [50,70] B1 [70,90]: 90 ms too, s0 idle 20..50.
  PipeRig p(toy_training(2, 10, 20), "pp=2,microbatches=2,schedule=gpipe");
  const ParallelRun r = p.run();
  EXPECT_EQ(r.iteration_ns, 90'000'000);
  EXPECT_NEAR(r.energy_j, 30.0, 1e-9);
}

TEST(Pipeline, StragglerOnTheCriticalStageStretchesByTheCriticalPath) {
  // Rank 1 (stage 1) +20 %: forward 12 ms, backward 24 ms. Critical path
  // s0 F0 -> s1 F0 -> s1 B0 -> s1 F1 -> s1 B1 -> s0 B1 = 10+12+24+12+24+20 =
  // 102 ms (+12 ms). Rank 1: 72 ms x 200 W + 30 ms x 100 W = 17.4 J; rank 0:
  // 60 ms x 200 W + 42 ms x 100 W = 16.2 J.
  PipeRig p(toy_training(2, 10, 20), "pp=2,microbatches=2", "1:20");
  const ParallelRun r = p.run();
  EXPECT_EQ(r.iteration_ns, 102'000'000);
  // The DAG with the straggler's durations says the same.
  std::vector<std::int64_t> dur(num_vertices(p.graph.g), 0);
  for (std::size_t v = 0; v < dur.size(); ++v) {
    const DagNode& n = p.graph.g[v];
    if (n.kind == InstrKind::optimizer) continue;
    const std::int64_t base = n.kind == InstrKind::forward ? 10'000'000 : 20'000'000;
    dur[v] = n.stage == 1 ? base * 12 / 10 : base;
  }
  EXPECT_EQ(critical_path_ns(p.graph, dur), 102'000'000);
  EXPECT_NEAR(r.gpus[1].energy_j, 17.4, 1e-9);
  EXPECT_NEAR(r.gpus[0].energy_j, 16.2, 1e-9);
}

TEST(Pipeline, DataParallelRingAllReduceThenOptimizer) {
  // dp=2 over nvlink3 (300 GB/s, 2 us): each stage holds half the 1 GB of
  // gradients (equal forward time); a ring of 2 sends 2(n-1)/n x 0.5 GB =
  // 0.5 GB: 1.6667 ms + 2 x 2 us. Then the optimizer (4 ms, half on each
  // stage: 2 ms). Stage 0 ends at 90 + 1.670667 + 2 ms.
  PipeRig p(toy_training(2, 10, 20, 4.0),
            "pp=2,dp=2,microbatches=2,link=nvlink3,gradient_bytes=1e9");
  const ParallelRun r = p.run();
  ASSERT_EQ(r.gpus.size(), 4u);
  EXPECT_EQ(p.graph.allreduce_ns, 1'666'667 + 4'000);
  EXPECT_EQ(r.iteration_ns, 90'000'000 + 1'670'667 + 2'000'000);
  // Every GPU: 60 ms + 2 ms busy at 200 W, the rest of 93.670667 ms at 100 W.
  const double t = 0.093670667;
  for (const GpuRun& g : r.gpus) EXPECT_NEAR(g.energy_j, 0.062 * 200 + (t - 0.062) * 100, 1e-6);
}

TEST(Pipeline, LayerDetectionFindsBlocksBetweenEmbeddingAndHead) {
  // embed, 3 x [ln, mm, act], head; backward: head', 3 x [act', mm', ln'], embed'.
  Workload w = toy_workload(std::vector<double>(22, 1.0));
  const std::vector<std::string> f = {"embed", "ln", "mm", "act", "ln",  "mm",
                                      "act",   "ln", "mm", "act", "head"};
  const std::vector<std::string> b = {"head'", "act'", "mm'", "ln'", "act'",  "mm'",
                                      "ln'",   "act'", "mm'", "ln'", "embed'"};
  for (std::size_t i = 0; i < 22; ++i) {
    w.kernels[i].name_id = w.intern(i < 11 ? f[i] : b[i - 11]);
    w.kernels[i].phase = i < 11 ? Phase::forward : Phase::backward;
  }
  const LayerStructure ls = detect_layers(w);
  EXPECT_EQ(ls.layers, 3);
  EXPECT_EQ(ls.forward[0], (std::vector<std::uint32_t>{0}));
  EXPECT_EQ(ls.forward[1], (std::vector<std::uint32_t>{1, 2, 3}));
  EXPECT_EQ(ls.forward[4], (std::vector<std::uint32_t>{10}));
  EXPECT_EQ(ls.backward[4], (std::vector<std::uint32_t>{11}));  // head's backward first
  EXPECT_EQ(ls.backward[3], (std::vector<std::uint32_t>{12, 13, 14}));
  EXPECT_EQ(ls.backward[0], (std::vector<std::uint32_t>{21}));
  // pp=2 even: units [0,2) and [2,5): embed + block 1 | blocks 2, 3 + head.
  const PipelineJob job = make_job(w, parse_parallel("pp=2"), "toy");
  EXPECT_EQ(job.stages[0].forward, (std::vector<std::uint32_t>{0, 1, 2, 3}));
  EXPECT_EQ(job.stages[1].backward.front(), 11u);
  const PipelineJob custom = make_job(w, parse_parallel("pp=2,partition=0,3,5"), "toy");
  EXPECT_EQ(custom.stages[1].forward, (std::vector<std::uint32_t>{7, 8, 9, 10}));
}

TEST(Pipeline, BadSpecsNameTheKey) {
  auto msg = [](const std::string& s) {
    try {
      parse_parallel(s);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(msg("dp=2").find("pp=S is required"), std::string::npos);
  EXPECT_NE(msg("pp=0").find("pp=0"), std::string::npos);
  EXPECT_NE(msg("pp=2,schedule=zb").find("schedule=zb"), std::string::npos);
  EXPECT_NE(msg("pp=2,partition=0,3").find("2 boundaries"), std::string::npos);
  EXPECT_NE(msg("pp=2,speed=3").find("unknown key 'speed'"), std::string::npos);
  ParallelSpec sp = parse_parallel("pp=2");
  EXPECT_THROW(parse_straggler("5:20", sp), InputError);
  EXPECT_THROW(parse_straggler("1", sp), InputError);
  Workload w = toy_training(2, 10, 20);
  EXPECT_THROW(make_job(w, parse_parallel("pp=3"), "toy"), InputError);
  EXPECT_THROW(make_job(w, parse_parallel("pp=2,partition=0,0,4"), "toy"), InputError);
}

}  // namespace
}  // namespace dvfsim::testing
