// Kineto reader on small hand-written traces (tests/traces/data/mini_*.json).
#include "traces/kineto.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "tests/traces/test_util.h"
#include "traces/stats.h"
#include "traces/trace.h"

namespace dvfsim {
namespace {

using test::test_data;

class MiniOptimizerTrace : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { w_ = new Workload(read_kineto(test_data("mini_optimizer.json"))); }
  static void TearDownTestSuite() { delete w_; }
  static Workload* w_;
};
Workload* MiniOptimizerTrace::w_ = nullptr;

TEST_F(MiniOptimizerTrace, KernelsInHostLaunchOrderWithLaunchTimesFromCorrelation) {
  const Workload& w = *w_;
  ASSERT_EQ(w.kernels.size(), 7u);
  const std::int64_t expected_launch_ns[] = {105500, 131000, 140000, 310000,
                                             510000, 605000, 805000};
  for (std::size_t i = 0; i < 7; ++i)
    EXPECT_EQ(w.kernels[i].host_launch_ns, expected_launch_ns[i]) << "kernel " << i;
  const Kernel& k = w.kernels[0];
  EXPECT_EQ(w.name(k), "nvjet_sm90_tst_128x256_fwd");
  EXPECT_EQ(w.op(k), "aten::mm");
  EXPECT_EQ(k.traced_start_ns, 200000);
  EXPECT_EQ(k.work.duration_ns, 10000);
  EXPECT_EQ(k.stream, 7);
  EXPECT_EQ(k.launch.grid[0], 132u);
  EXPECT_EQ(k.launch.block[0], 384u);
  EXPECT_EQ(k.launch.registers_per_thread, 168u);
  // Interned: the same kernel name maps to the same id.
  EXPECT_EQ(w.kernels[0].name_id, w.kernels[5].name_id);
}

TEST_F(MiniOptimizerTrace, IterationsSplitAfterOptimizerStepAndZeroGrad) {
  const Workload& w = *w_;
  EXPECT_EQ(w.iterations, 2);
  EXPECT_EQ(w.iteration_begin, (std::vector<std::uint32_t>{0, 5, 7}));
  for (std::size_t i = 0; i < 7; ++i) EXPECT_EQ(w.kernels[i].iteration, i < 5 ? 0 : 1) << i;
}

TEST_F(MiniOptimizerTrace, PhaseAndClass) {
  const Workload& w = *w_;
  const Phase phases[] = {Phase::forward,   Phase::forward, Phase::forward,  Phase::backward,
                          Phase::optimizer, Phase::forward, Phase::optimizer};
  const KernelClass classes[] = {
      KernelClass::gemm,      KernelClass::elementwise, KernelClass::memset,   KernelClass::gemm,
      KernelClass::optimizer, KernelClass::gemm,        KernelClass::optimizer};
  for (std::size_t i = 0; i < 7; ++i) {
    EXPECT_EQ(w.kernels[i].phase, phases[i]) << "kernel " << i;
    EXPECT_EQ(w.kernels[i].cls, classes[i]) << "kernel " << i;
  }
}

TEST_F(MiniOptimizerTrace, WorkFromShapes) {
  const Workload& w = *w_;
  EXPECT_DOUBLE_EQ(w.kernels[0].work.flops, 2.0 * 64 * 128 * 256);  // 4,194,304
  EXPECT_DOUBLE_EQ(w.kernels[0].work.dram_bytes, (64 * 128 + 128 * 256 + 64 * 256) * 2.0);
  EXPECT_EQ(w.kernels[0].work.source, WorkSource::shapes);
  EXPECT_DOUBLE_EQ(w.kernels[3].work.flops, 2.0 * 256 * 64 * 128);
  // add of two float [64, 256]: read both, write one.
  EXPECT_DOUBLE_EQ(w.kernels[1].work.dram_bytes, 3.0 * 64 * 256 * 4);
  EXPECT_DOUBLE_EQ(w.kernels[1].work.flops, 64.0 * 256);
  // memset: args.bytes.
  EXPECT_DOUBLE_EQ(w.kernels[2].work.dram_bytes, 4096.0);
  EXPECT_EQ(w.kernels[2].work.source, WorkSource::shapes);
  // Fused AdamW: 3 chunks of 65,536 elements, 28 bytes each.
  EXPECT_DOUBLE_EQ(w.kernels[4].work.dram_bytes, 3.0 * 65536 * 28);
}

TEST_F(MiniOptimizerTrace, DeviceSynchronizeBecomesSyncPoint) {
  const Workload& w = *w_;
  ASSERT_EQ(w.syncs.size(), 1u);
  const SyncPoint& s = w.syncs[0];
  EXPECT_EQ(s.kind, SyncPoint::Kind::device);
  EXPECT_EQ(s.host_begin_ns, 620000);
  EXPECT_EQ(s.traced_end_ns, 720000);
  EXPECT_EQ(s.waits_until_kernel, 6u);
  EXPECT_EQ(s.stream, -1);
}

TEST_F(MiniOptimizerTrace, CaptureDeviceFromDeviceProperties) {
  EXPECT_EQ(w_->capture.device_name, "NVIDIA H200");
  EXPECT_EQ(w_->capture.device, "h200");
  EXPECT_EQ(w_->capture.core_mhz, 0);  // no sibling measurement files
  EXPECT_EQ(w_->capture.clocks_source, "none");
}

TEST(KinetoReader, ProfilerStepsStreamSyncAndBlockingCopy) {
  const Workload w = read_kineto(test_data("mini_profiler_steps.json"));
  ASSERT_EQ(w.kernels.size(), 5u);
  EXPECT_EQ(w.iterations, 2);
  EXPECT_EQ(w.iteration_begin, (std::vector<std::uint32_t>{0, 2, 5}));
  for (const Kernel& k : w.kernels) EXPECT_EQ(k.phase, Phase::forward);
  ASSERT_EQ(w.syncs.size(), 2u);
  EXPECT_EQ(w.syncs[0].kind, SyncPoint::Kind::stream);
  EXPECT_EQ(w.syncs[0].stream, 8);  // from the cuda_sync event
  EXPECT_EQ(w.syncs[0].waits_until_kernel, 2u);
  EXPECT_EQ(w.syncs[0].traced_end_ns, 155000);
  EXPECT_EQ(w.syncs[1].kind, SyncPoint::Kind::copy);
  EXPECT_EQ(w.syncs[1].waits_until_kernel, 5u);  // includes its own copy
  EXPECT_EQ(w.kernels[3].cls, KernelClass::memcpy);
  EXPECT_DOUBLE_EQ(w.kernels[3].work.dram_bytes, 2000.0);  // device to device: read + write
  EXPECT_DOUBLE_EQ(w.kernels[4].work.dram_bytes, 800.0);
  // No operator: fallback estimate.
  EXPECT_EQ(w.kernels[0].work.source, WorkSource::fallback);
  EXPECT_EQ(w.op(w.kernels[0]), "");
}

TEST(KinetoReader, CrossStreamEventWait) {
  const Workload w = read_kineto(test_data("mini_event_wait.json"));
  ASSERT_EQ(w.kernels.size(), 3u);
  EXPECT_EQ(w.iterations, 1);
  ASSERT_EQ(w.event_waits.size(), 1u);
  EXPECT_EQ(w.event_waits[0].kernel, 2u);  // consumer on stream 9
  EXPECT_EQ(w.event_waits[0].after, 0u);   // producer, recorded before the event
}

// Two copies of a 2x16x4x4 bf16 tensor: NCHW into a channels-last result,
// and NCHW into NCHW. The first reads across the result's innermost
// dimension (C) with stride 16: each element brings a 32-byte sector for its
// 2 bytes, 30 bytes beyond it, of which L2 sees 0.74: 512 x 30 x 0.74 =
// 11366.4 bytes. The second is a streaming copy: none.
TEST(KinetoReader, InputStridesGiveTheL2ExcessOfALayoutChange) {
  // `strides`: the profiler's Input Strides member, or "" (a profiler before 2.1).
  auto copy = [](int id, const std::string& strides) {
    const std::string ts = std::to_string(100 + 20 * id);
    return fmt::format(
        R"({{"ph": "X", "cat": "cpu_op", "name": "aten::copy_", "pid": 1, "tid": 1, "ts": {0},
            "dur": 10, "args": {{"External id": {1}, "Input Dims": [[2, 16, 4, 4], [2, 16, 4, 4], []],
            "Input type": ["c10::BFloat16", "c10::BFloat16", "Scalar"]{2}}}}},
          {{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
            "ts": {0}, "dur": 2, "args": {{"External id": {1}, "correlation": {1}}}}},
          {{"ph": "X", "cat": "kernel", "name": "void at::native::elementwise_kernel<128, 4>",
            "pid": 0, "tid": 7, "ts": {3}, "dur": 5, "args": {{"External id": {1}, "device": 0,
            "stream": 7, "correlation": {1}, "grid": [4, 1, 1], "block": [128, 1, 1]}}}})",
        ts, id, strides, std::to_string(500 + 20 * id));
  };
  const auto trace = [&](const std::string& first, const std::string& second) {
    return R"({"deviceProperties": [{"id": 0, "name": "NVIDIA H200", "numSms": 132}], "traceEvents": [)" +
           copy(1, first) + ",\n" + copy(2, second) + "]}";
  };
  const auto no_strides_note = [](const Workload& x) {
    return std::count_if(x.notes.begin(), x.notes.end(), [](const std::string& n) {
      return n.find("no strides") != std::string::npos;
    });
  };
  const Workload w =
      parse_kineto(trace(R"(, "Input Strides": [[256, 1, 64, 16], [256, 16, 4, 1], []])",
                         R"(, "Input Strides": [[256, 16, 4, 1], [256, 16, 4, 1], []])"),
                   "layouts.json");
  ASSERT_EQ(w.kernels.size(), 2u);
  EXPECT_EQ(w.kernels[0].work.source, WorkSource::shapes);
  EXPECT_DOUBLE_EQ(w.kernels[0].work.dram_bytes, 2048.0);  // 1 KiB read, 1 KiB written
  EXPECT_NEAR(w.kernels[0].work.l2_excess_bytes, 11366.4, 1e-6);
  EXPECT_EQ(w.kernels[1].work.l2_excess_bytes, 0.0);
  EXPECT_EQ(no_strides_note(w), 0);
  // `trace info`: one of two 5 us kernels changes the layout.
  const TraceStats st = compute_stats(w);
  EXPECT_DOUBLE_EQ(st.layout_change_share, 0.5);
  EXPECT_NEAR(st.total_l2_excess_bytes, 11366.4, 1e-6);
  // The same copies from a profiler that records no strides: no excess, and
  // a note that says why.
  const Workload legacy = parse_kineto(trace("", ""), "legacy.json");
  ASSERT_EQ(legacy.kernels.size(), 2u);
  EXPECT_EQ(legacy.kernels[0].work.l2_excess_bytes, 0.0);
  EXPECT_EQ(no_strides_note(legacy), 1);
}

// A ReLU network in two layers, as torchvision's VGG traces it: forward
// relu_, conv2d, relu_, max_pool2d, conv2d, relu_ on the main thread; the
// autograd thread runs each convolution's node (its Sequence number is the
// forward aten::convolution's) with a data- and a weight-gradient kernel.
// The first convolution reads a ReLU's output and feeds one; the second
// reads max pooling's (dense) and feeds a ReLU.
TEST(KinetoReader, OperandsZeroedByAReluFromTheOperatorSequence) {
  std::string ev;
  int corr = 0;
  auto op = [&](std::int64_t tid, const char* name, int ts, int dur, int seq) {
    ev += fmt::format(
        R"({{"ph": "X", "cat": "cpu_op", "name": "{}", "pid": 1, "tid": {}, "ts": {}, "dur": {},
            "args": {{"External id": {}{}}}}},)",
        name, tid, ts, dur, 1000 + ts,
        seq >= 0 ? fmt::format(R"(, "Sequence number": {})", seq) : std::string());
  };
  auto kernel = [&](std::int64_t tid, const char* name, int ts) {
    ++corr;
    ev += fmt::format(
        R"({{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": {0},
            "ts": {1}, "dur": 1, "args": {{"correlation": {2}}}}},
          {{"ph": "X", "cat": "kernel", "name": "{3}", "pid": 0, "tid": 7, "ts": {4}, "dur": 5,
            "args": {{"device": 0, "stream": 7, "correlation": {2}, "grid": [132, 1, 1],
            "block": [128, 1, 1]}}}},)",
        tid, ts, corr, name, 5000 + 10 * corr);
  };
  const char* fprop = "sm90_xmma_fprop_implicit_gemm_bf16bf16_bf16f32_f32_nhwckrsc_nhwc";
  const char* dgrad = "sm90_xmma_dgrad_implicit_gemm_bf16bf16_bf16f32_f32_nhwckrsc_nhwc";
  const char* wgrad = "sm90_xmma_wgrad_implicit_gemm_bf16bf16_bf16f32_f32_nhwckrsc_nhwc";
  op(1, "aten::relu_", 100, 10, 1);
  op(1, "aten::conv2d", 120, 20, 2);
  op(1, "aten::convolution", 122, 16, 3);
  kernel(1, fprop, 125);  // 0: input from relu_
  op(1, "aten::relu_", 150, 10, 4);
  op(1, "aten::max_pool2d", 170, 10, 5);
  op(1, "aten::conv2d", 190, 20, 6);
  op(1, "aten::convolution", 192, 16, 7);
  kernel(1, fprop, 195);  // 1: input from max pooling
  op(1, "aten::relu_", 220, 10, 8);
  op(2, "autograd::engine::evaluate_function: ConvolutionBackward0", 300, 30, 7);
  kernel(2, dgrad, 305);  // 2: gradient through relu_
  // 3: that gradient, and a pooled input (cuDNN spells some passes "Wgrad")
  kernel(2, "void cudnn::winograd_nonfused::winogradWgradData4x4<float, float>", 310);
  op(2, "autograd::engine::evaluate_function: ConvolutionBackward0", 400, 30, 3);
  kernel(2, dgrad, 405);  // 4: gradient through relu_
  kernel(2, wgrad, 410);  // 5: that gradient, and a ReLU's output
  auto parse = [&](const std::string& events) {
    return parse_kineto(
        R"({"deviceProperties": [{"id": 0, "name": "NVIDIA H200", "numSms": 132}], "traceEvents": [)" +
            events.substr(0, events.size() - 1) + "]}",
        "relu.json");
  };
  const Workload w = parse(ev);
  ASSERT_EQ(w.kernels.size(), 6u);
  const int expected[] = {1, 0, 1, 1, 1, 2};
  for (std::size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(w.kernels[i].cls, KernelClass::conv) << i;
    EXPECT_EQ(w.kernels[i].work.zeroed_operands, expected[i]) << i;
  }
  // `trace info`: six 5 us convolutions of equal (fallback) FLOPs, four with
  // one zeroed operand, one with two.
  ASSERT_GT(w.kernels[0].work.flops, 0.0);
  const TraceStats st = compute_stats(w);
  EXPECT_NEAR(st.matrix_flops, 6 * w.kernels[0].work.flops, 1e-6 * st.matrix_flops);
  EXPECT_NEAR(st.zeroed1_flops_share, 4.0 / 6.0, 1e-12);
  EXPECT_NEAR(st.zeroed2_flops_share, 1.0 / 6.0, 1e-12);
  // Sequence numbers count per forward thread: when a second one also used
  // 7, the first node names no operator and its kernels stay dense.
  op(3, "aten::convolution", 250, 10, 7);
  const Workload two = parse(ev);
  const int ambiguous[] = {1, 0, 0, 0, 1, 2};
  for (std::size_t i = 0; i < 6; ++i)
    EXPECT_EQ(two.kernels[i].work.zeroed_operands, ambiguous[i]) << i;
}

TEST(KinetoReader, ReadTraceDispatchesOnContent) {
  EXPECT_EQ(detect_trace_format(test_data("mini_event_wait.json")), TraceFormat::kineto);
  EXPECT_EQ(read_trace(test_data("mini_event_wait.json")).kernels.size(), 3u);
}

}  // namespace
}  // namespace dvfsim
