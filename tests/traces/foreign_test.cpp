// The reader on excerpts of seven real Kineto traces from other projects
// (tests/traces/data/foreign/, cut with scripts/kineto_excerpt.py; README
// there). Every expected count was taken from the excerpt by an independent
// Python count of its events, not from dvfsim.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>

#include "sim/error.h"
#include "sim/graph.h"
#include "tests/traces/test_util.h"
#include "traces/trace.h"

namespace dvfsim {
namespace {

using test::test_data;

struct Counts {
  std::size_t kernels = 0, memsets = 0, memcpys = 0, streams = 0, communication = 0;
};

Counts count(const Workload& w) {
  Counts c;
  std::set<std::int32_t> streams;
  for (const Kernel& k : w.kernels) {
    streams.insert(k.stream);
    if (k.cls == KernelClass::memset)
      ++c.memsets;
    else if (k.cls == KernelClass::memcpy)
      ++c.memcpys;
    else
      ++c.kernels;
    if (k.cls == KernelClass::communication) ++c.communication;
  }
  c.streams = streams.size();
  return c;
}

bool has_note(const Workload& w, std::string_view needle) {
  return std::any_of(w.notes.begin(), w.notes.end(),
                     [&](const std::string& n) { return n.find(needle) != std::string::npos; });
}

// Every dependency points forward: the engine can replay it.
void expect_replayable(const Workload& w) {
  EXPECT_NO_THROW(check_launch_order(w, build_dependency_graph(w)));
}

std::string foreign(std::string_view name) {
  return test_data(std::string("foreign/") + std::string(name));
}

TEST(ForeignTraces, A100Pg509CnnDdp) {
  const Workload w = read_trace(foreign("a100pg509_cnn_excerpt.json.gz"));
  const Counts c = count(w);
  EXPECT_EQ(c.kernels, 142u);
  EXPECT_EQ(c.memsets, 10u);
  EXPECT_EQ(c.memcpys, 258u);
  EXPECT_EQ(c.streams, 2u);
  EXPECT_EQ(c.communication, 3u);  // ncclKernel_AllReduce / Broadcast on the second stream
  EXPECT_EQ(w.capture.device_name, "NVIDIA A100-PG509-200");
  EXPECT_EQ(w.capture.device, "a100-pg509-200");
  EXPECT_EQ(w.iterations, 2);  // ProfilerStep#4 (tail) and #5 (head)
  expect_replayable(w);
}

TEST(ForeignTraces, B200VllmInferenceIsOneCall) {
  const Workload w = read_trace(foreign("b200_vllm_excerpt.json.gz"));
  const Counts c = count(w);
  EXPECT_EQ(c.kernels, 768u);
  EXPECT_EQ(c.memcpys, 161u);
  EXPECT_EQ(c.streams, 1u);
  // 73 multimem all-reduce kernels (tensor parallel) + one NCCL all-gather.
  EXPECT_EQ(c.communication, 74u);
  EXPECT_EQ(w.capture.device, "b200");
  // No step markers; one execute_context annotation around every launch:
  // the 50-kernel repetition inside it is the model's layers.
  EXPECT_EQ(w.iterations, 1);
  EXPECT_TRUE(has_note(w, "execute_context_1")) << w.iteration_rule;
  // cuLaunchKernelEx launches (cuda_driver) give host launch times.
  const auto launched = std::count_if(w.kernels.begin(), w.kernels.end(), [](const Kernel& k) {
    return k.host_launch_ns < k.traced_start_ns;
  });
  EXPECT_EQ(static_cast<std::size_t>(launched), w.kernels.size());
  expect_replayable(w);
}

TEST(ForeignTraces, Rtx2080TiOptimizerStepsWithWarmup) {
  const Workload w = read_trace(foreign("rtx2080ti_resnet_excerpt.json.gz"));
  const Counts c = count(w);
  EXPECT_EQ(c.kernels, 827u);
  EXPECT_EQ(c.memsets, 30u);
  EXPECT_EQ(c.memcpys, 69u);
  EXPECT_EQ(c.streams, 3u);
  EXPECT_EQ(w.capture.device, "rtx2080ti");
  EXPECT_EQ(w.iterations, 3);  // three Optimizer.step#SGD.step ranges
  // Iteration 0 holds 4.8 s of start-up: not steady state.
  EXPECT_EQ(w.steady_iterations, (std::vector<std::int32_t>{1, 2}));
  expect_replayable(w);
}

TEST(ForeignTraces, V100DlrmLaunchesOutsideTheWindow) {
  const Workload w = read_trace(foreign("v100_dlrm_rank1_excerpt.json.gz"));
  const Counts c = count(w);
  EXPECT_EQ(c.kernels, 310u);
  EXPECT_EQ(c.memcpys, 16u);
  EXPECT_EQ(c.streams, 4u);
  EXPECT_EQ(c.communication, 8u);
  EXPECT_EQ(w.capture.device, "v100-sxm2");
  EXPECT_TRUE(has_note(w, "64 of 326 activities have no launch call"));
  expect_replayable(w);
}

TEST(ForeignTraces, TwoGpusAreRefusedWithoutGpuAndReadWithIt) {
  const std::string path = foreign("v100_dlrm_two_gpus.json.gz");
  try {
    read_trace(path);
    FAIL() << "a two-GPU file must not be merged";
  } catch (const InputError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("2 devices"), std::string::npos) << msg;
    EXPECT_NE(msg.find("0 (Tesla V100-SXM2-32GB, 261 activities)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("1 (Tesla V100-SXM2-32GB, 326 activities)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("--gpu N"), std::string::npos) << msg;
  }
  TraceOptions one;
  one.gpu = 1;
  const Workload w = read_trace(path, one);
  EXPECT_EQ(w.kernels.size(), 326u);
  for (const Kernel& k : w.kernels) EXPECT_EQ(k.device, 1);
  expect_replayable(w);
  one.gpu = 0;
  EXPECT_EQ(read_trace(path, one).kernels.size(), 261u);
  one.gpu = 3;
  EXPECT_THROW(read_trace(path, one), InputError);
}

TEST(ForeignTraces, V100RecsysGraphLaunchAndFourStreams) {
  const Workload w = read_trace(foreign("v100_recsys_excerpt.json.gz"));
  const Counts c = count(w);
  EXPECT_EQ(c.kernels, 901u);
  EXPECT_EQ(c.memsets, 88u);
  EXPECT_EQ(c.memcpys, 371u);
  EXPECT_EQ(c.streams, 4u);
  EXPECT_EQ(w.capture.device_name, "Tesla V100-SXM2-16GB");
  EXPECT_EQ(w.capture.device, "v100-sxm2");
  expect_replayable(w);
}

TEST(ForeignTraces, V100LegacySchemaOfPyTorch19) {
  const Workload w = read_trace(foreign("v100_resnet50_legacy_excerpt.json.gz"));
  const Counts c = count(w);
  EXPECT_EQ(c.kernels, 720u);  // category "Kernel"
  EXPECT_EQ(c.memsets, 20u);   // category "Memset"
  EXPECT_EQ(c.streams, 1u);
  EXPECT_EQ(w.capture.device, "v100-dgxs");
  // Operators linked through the lower-case "external id".
  const auto with_op = std::count_if(w.kernels.begin(), w.kernels.end(),
                                     [&](const Kernel& k) { return !w.op(k).empty(); });
  EXPECT_GT(with_op, 500);
  const auto conv = std::count_if(w.kernels.begin(), w.kernels.end(),
                                  [](const Kernel& k) { return k.cls == KernelClass::conv; });
  EXPECT_EQ(conv, 83);  // cuDNN scudnn / implicit-GEMM kernels (the class rule, not a Python count)
  expect_replayable(w);
}

}  // namespace
}  // namespace dvfsim
