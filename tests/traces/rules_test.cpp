// One hand-written trace per reading rule: schemas since PyTorch 1.8, launch
// APIs, graph launches, launches outside the window, iterations, several
// GPUs, AMD refusal, kernel classes and work, capture-device resolution.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "models/capture_device.h"
#include "sim/error.h"
#include "sim/graph.h"
#include "traces/annotate.h"
#include "traces/classify.h"
#include "traces/iterations.h"
#include "traces/kineto.h"

namespace dvfsim {
namespace {

// Builds a Kineto trace; times in microseconds.
class Trace {
 public:
  explicit Trace(std::string gpu = "NVIDIA H200") { devices_.push_back({0, std::move(gpu)}); }
  Trace& device(int id, std::string name) {
    devices_.push_back({id, std::move(name)});
    return *this;
  }
  Trace& kernel(std::string name, double ts, double dur, long corr, int stream = 7, int device = 0,
                long ext = 0, std::string cat = "kernel", std::string ext_key = "External id") {
    events_.push_back(
        fmt::format(R"({{"ph":"X","cat":"{}","name":"{}","pid":0,"tid":{},"ts":{},"dur":{},)"
                    R"("args":{{"correlation":{},"{}":{},"stream":{},"device":{}}}}})",
                    cat, name, stream, ts, dur, corr, ext_key, ext, stream, device));
    return *this;
  }
  Trace& call(std::string name, double ts, double dur, long corr,
              std::string cat = "cuda_runtime") {
    events_.push_back(
        fmt::format(R"({{"ph":"X","cat":"{}","name":"{}","pid":1,"tid":1,"ts":{},"dur":{},)"
                    R"("args":{{"correlation":{}}}}})",
                    cat, name, ts, dur, corr));
    return *this;
  }
  Trace& range(std::string cat, std::string name, double ts, double dur, std::string args = "") {
    events_.push_back(fmt::format(
        R"({{"ph":"X","cat":"{}","name":"{}","pid":1,"tid":1,"ts":{},"dur":{},"args":{{{}}}}})",
        cat, name, ts, dur, args));
    return *this;
  }
  std::string json() const {
    std::string props, events;
    for (const auto& [id, name] : devices_)
      props += fmt::format(R"({}{{"id":{},"name":"{}"}})", props.empty() ? "" : ",", id, name);
    for (const auto& e : events_) events += (events.empty() ? "" : ",") + e;
    return fmt::format(R"({{"deviceProperties":[{}],"traceEvents":[{}]}})", props, events);
  }
  Workload read(const TraceOptions& o = {}) const { return parse_kineto(json(), "rules.json", o); }

 private:
  std::vector<std::pair<int, std::string>> devices_;
  std::vector<std::string> events_;
};

std::string error_of(const Trace& t, const TraceOptions& o = {}) {
  try {
    t.read(o);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

void expect_replayable(const Workload& w) {
  EXPECT_NO_THROW(check_launch_order(w, build_dependency_graph(w)));
}

// ---- schemas and launches --------------------------------------------------

TEST(Rules, PyTorch19SchemaCapitalisedCategoriesAndLowerCaseExternalId) {
  Trace t("Tesla V100-DGXS-32GB");
  t.range("Operator", "ProfilerStep#5", 0, 100).range("Operator", "ProfilerStep#6", 100, 100);
  t.range("Operator", "aten::add", 10, 5, R"("external id":11)");
  t.call("cudaLaunchKernel", 11, 2, 1, "Runtime");
  t.kernel("vectorized_elementwise_kernel", 20, 4, 1, 7, 0, 11, "Kernel", "external id");
  t.call("cudaMemsetAsync", 110, 2, 2, "Runtime");
  t.kernel("Memset (Device)", 120, 1, 2, 7, 0, 0, "Memset");
  t.call("cudaMemcpyAsync", 130, 2, 3, "Runtime");
  t.kernel("Memcpy DtoD (Device -> Device)", 140, 1, 3, 7, 0, 0, "Memcpy");
  const Workload w = t.read();
  ASSERT_EQ(w.kernels.size(), 3u);
  EXPECT_EQ(w.iterations, 2);  // ProfilerStep# under "Operator"
  EXPECT_EQ(w.op(w.kernels[0]), "aten::add");
  EXPECT_EQ(w.kernels[0].cls, KernelClass::elementwise);
  EXPECT_EQ(w.kernels[1].cls, KernelClass::memset);
  EXPECT_EQ(w.kernels[2].cls, KernelClass::memcpy);
  EXPECT_EQ(w.capture.device, "v100-dgxs");
}

TEST(Rules, DriverLaunchesGiveHostLaunchTimes) {
  Trace t;
  t.call("cuLaunchKernelEx", 10, 1, 1, "cuda_driver").kernel("a", 30, 5, 1);
  t.call("cuLaunchKernel", 12, 1, 2, "cuda_driver").kernel("b", 40, 5, 2);
  t.call("cudaLaunchKernelExC", 14, 1, 3).kernel("c", 50, 5, 3);
  const Workload w = t.read();
  ASSERT_EQ(w.kernels.size(), 3u);
  EXPECT_EQ(w.kernels[0].host_launch_ns, 10000);
  EXPECT_EQ(w.kernels[1].host_launch_ns, 12000);
  EXPECT_EQ(w.kernels[2].host_launch_ns, 14000);
  EXPECT_TRUE(w.notes.empty() || w.notes[0].find("no launch call") == std::string::npos);
}

TEST(Rules, GraphLaunchKernelsRunInStreamOrderFromTheLaunch) {
  // Three kernels share the graph launch's correlation; the file lists them
  // out of GPU order.
  Trace t;
  t.call("cudaGraphLaunch", 10, 3, 5);
  t.kernel("third", 60, 5, 5).kernel("first", 20, 5, 5).kernel("second", 40, 5, 5);
  const Workload w = t.read();
  ASSERT_EQ(w.kernels.size(), 3u);
  EXPECT_EQ(w.name(w.kernels[0]), "first");
  EXPECT_EQ(w.name(w.kernels[1]), "second");
  EXPECT_EQ(w.name(w.kernels[2]), "third");
  for (const Kernel& k : w.kernels) EXPECT_EQ(k.host_launch_ns, 10000);
  expect_replayable(w);
}

TEST(Rules, LaunchOutsideTheWindowIsPlacedBeforeLaterWorkOnItsStream) {
  // Kernel A has no launch call (launched before the window) and runs at
  // 500 us; B was launched at 100 us and runs after A on the same stream.
  Trace t;
  t.kernel("A", 500, 10, 1);
  t.call("cudaLaunchKernel", 100, 2, 2).kernel("B", 600, 10, 2);
  const Workload w = t.read();
  ASSERT_EQ(w.kernels.size(), 2u);
  EXPECT_EQ(w.name(w.kernels[0]), "A");
  EXPECT_LT(w.kernels[0].host_launch_ns, 100000);  // before B's launch
  EXPECT_EQ(w.kernels[0].phase, Phase::other);
  ASSERT_FALSE(w.notes.empty());
  EXPECT_NE(w.notes[0].find("1 of 2 activities have no launch call"), std::string::npos);
  expect_replayable(w);
}

TEST(Rules, BlockingCopyDoesNotDependOnItself) {
  Trace t;
  t.call("cudaLaunchKernel", 10, 1, 1).kernel("k", 20, 10, 1);
  t.call("cudaMemcpy", 15, 30, 2)
      .kernel("Memcpy DtoH (Device -> Pinned)", 31, 5, 2, 7, 0, 0, "gpu_memcpy");
  t.call("cudaLaunchKernel", 50, 1, 3).kernel("after", 60, 10, 3, 8);
  const Workload w = t.read();
  ASSERT_EQ(w.syncs.size(), 1u);
  EXPECT_EQ(w.syncs[0].waits_until_kernel, 2u);  // the kernel and its own copy
  expect_replayable(w);                          // "kernel 1 to earlier kernel 1" before
}

// ---- iterations ------------------------------------------------------------

Trace repeated(int times, bool inside_one_annotation) {
  Trace t;
  double ts = 0;
  long corr = 1;
  if (inside_one_annotation) t.range("user_annotation", "generate", 0, 1e6);
  for (int i = 0; i < times; ++i) {
    ts += 1000;  // the host pauses 1 ms before each repetition
    for (const char* name : {"embed", "gemm_a", "softmax", "gemm_b"}) {
      t.call("cudaLaunchKernel", ts, 1, corr).kernel(name, ts + 5, 3, corr);
      ts += 10;
      ++corr;
    }
  }
  return t;
}

TEST(Rules, RepeatedSequenceGivesIterationsWhenThereAreNoMarkers) {
  const Workload w = repeated(4, false).read();
  EXPECT_EQ(w.iterations, 4);
  EXPECT_EQ(w.iteration_begin, (std::vector<std::uint32_t>{0, 4, 8, 12, 16}));
  EXPECT_NE(w.iteration_rule.find("period 4"), std::string::npos) << w.iteration_rule;
  ASSERT_FALSE(w.notes.empty());
  EXPECT_NE(w.notes[0].find("4 iterations found"), std::string::npos);
}

TEST(Rules, RepetitionInsideOneAnnotationIsOneCall) {
  const Workload w = repeated(4, true).read();
  EXPECT_EQ(w.iterations, 1);
  EXPECT_NE(w.iteration_rule.find("'generate'"), std::string::npos) << w.iteration_rule;
}

TEST(Rules, IterationsOptionOverridesAndSplitsAtTheLongestPauses) {
  TraceOptions o;
  o.iterations = 2;
  const Workload w = repeated(4, false).read(o);
  EXPECT_EQ(w.iterations, 2);
  EXPECT_EQ(w.iteration_begin.size(), 3u);
  // Boundaries fall on repetition starts (after a 1 ms pause).
  EXPECT_EQ(w.iteration_begin[1] % 4, 0u);
  EXPECT_NE(w.iteration_rule.find("--iterations 2"), std::string::npos);
}

TEST(Rules, NothingRepeatsThenOneIterationWithANote) {
  Trace t;
  t.call("cudaLaunchKernel", 10, 1, 1).kernel("a", 20, 5, 1);
  t.call("cudaLaunchKernel", 30, 1, 2).kernel("b", 40, 5, 2);
  t.call("cudaLaunchKernel", 50, 1, 3).kernel("c", 60, 5, 3);
  const Workload w = t.read();
  EXPECT_EQ(w.iterations, 1);
  ASSERT_FALSE(w.notes.empty());
  EXPECT_NE(w.notes.back().find("read as one iteration"), std::string::npos);
}

TEST(Rules, SteadyStateDropsLeadingWarmup) {
  // 17x the median first: warm-up; a long step later is not dropped.
  const std::vector<std::int64_t> steps = {1700, 100, 98, 300, 102};
  EXPECT_EQ(steady_iterations(steps), (std::vector<std::int32_t>{1, 2, 3, 4}));
  const std::vector<std::int64_t> even = {100, 101};
  EXPECT_EQ(steady_iterations(even), (std::vector<std::int32_t>{0, 1}));
  const std::vector<std::int64_t> two = {1700, 100};
  EXPECT_EQ(steady_iterations(two), (std::vector<std::int32_t>{1}));
  const std::vector<std::int64_t> one = {5};
  EXPECT_EQ(steady_iterations(one), (std::vector<std::int32_t>{0}));
}

TEST(Rules, PeriodDetectionFindsTheWholeIterationNotTheLayer) {
  // An iteration: embed, 3 x (attn, mlp), head; repeated 3 times. The layer
  // (period 2) matches 4 of 7 positions per iteration, the iteration 100 %.
  std::vector<std::uint32_t> seq;
  std::vector<std::int64_t> t;
  for (int it = 0; it < 3; ++it)
    for (const std::uint32_t id : {0u, 1u, 2u, 1u, 2u, 1u, 2u, 3u}) {
      seq.push_back(id);
      t.push_back(static_cast<std::int64_t>(t.size()) * 10 + (id == 0 ? 1000 * it : 0));
    }
  std::sort(t.begin(), t.end());
  const auto fit = detect_period(seq, t);
  ASSERT_TRUE(fit.has_value());
  EXPECT_EQ(fit->period, 8u);
  EXPECT_DOUBLE_EQ(fit->match, 1.0);
}

// ---- several GPUs, AMD -------------------------------------------------------

TEST(Rules, KernelsOfTwoGpusAreNeverMerged) {
  Trace t("NVIDIA H200");
  t.device(1, "NVIDIA H200");
  t.call("cudaLaunchKernel", 10, 1, 1).kernel("a", 20, 5, 1, 7, 0);
  t.call("cudaLaunchKernel", 12, 1, 2).kernel("b", 22, 5, 2, 9, 1);
  t.call("cudaLaunchKernel", 14, 1, 3).kernel("c", 32, 5, 3, 9, 1);
  const std::string msg = error_of(t);
  EXPECT_NE(msg.find("rules.json: GPU activities of 2 devices: 0 (NVIDIA H200, 1 activities), 1 "
                     "(NVIDIA H200, 2 activities)"),
            std::string::npos)
      << msg;
  TraceOptions o;
  o.gpu = 1;
  const Workload w = t.read(o);
  ASSERT_EQ(w.kernels.size(), 2u);
  EXPECT_EQ(w.name(w.kernels[0]), "b");
  o.gpu = 2;
  EXPECT_NE(error_of(t, o).find("--gpu 2: the trace has no GPU activities on device 2"),
            std::string::npos);
}

TEST(Rules, AmdTracesAreRefusedClearly) {
  Trace by_name("AMD Instinct MI300X");
  by_name.call("hipLaunchKernel", 10, 1, 1).kernel("k", 20, 5, 1);
  EXPECT_NE(error_of(by_name).find("captured on an AMD GPU ('AMD Instinct MI300X')"),
            std::string::npos);
  Trace by_runtime("");
  by_runtime.call("hipLaunchKernel", 10, 1, 1).kernel("k", 20, 5, 1);
  EXPECT_NE(error_of(by_runtime).find("an AMD GPU trace (1 HIP runtime calls)"), std::string::npos);
}

TEST(Rules, UnknownGpuKeepsItsNameAndNoCaptureDevice) {
  Trace t("NVIDIA Quantum Q9000");
  t.call("cudaLaunchKernel", 10, 1, 1).kernel("k", 20, 5, 1);
  const Workload w = t.read();
  EXPECT_EQ(w.capture.device_name, "NVIDIA Quantum Q9000");
  EXPECT_EQ(w.capture.device, "");
  TraceOptions o;
  o.capture_device = "t4";
  EXPECT_EQ(t.read(o).capture.device, "t4");
  o.capture_device = "no-such-gpu";
  EXPECT_NE(error_of(t, o).find("--capture-device no-such-gpu: unknown capture device"),
            std::string::npos);
}

// ---- classes and work --------------------------------------------------------

KernelClass cls(std::string_view kernel, std::string_view op = "") {
  return classify_kernel(ActivityKind::kernel, op, kernel, Phase::forward);
}

TEST(Rules, KernelClassesOfModernStacks) {
  EXPECT_EQ(cls("ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)"),
            KernelClass::communication);
  EXPECT_EQ(cls("ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)"),
            KernelClass::communication);
  EXPECT_EQ(cls("void multimem_all_reduce_kernel<c10::BFloat16>(...)"), KernelClass::communication);
  EXPECT_EQ(cls("triton_poi_fused_add_mul_0"), KernelClass::elementwise);
  EXPECT_EQ(cls("triton_red_fused_native_layer_norm_1"), KernelClass::reduction);
  EXPECT_EQ(cls("triton_per_fused_softmax_2"), KernelClass::reduction);
  EXPECT_EQ(cls("triton_tem_fused_mm_3"), KernelClass::gemm);
  // CUTLASS's fmha and other fused attention kernels are attention, not GEMM.
  EXPECT_EQ(cls("fmha_cutlassF_bf16_aligned_64x128_rf_sm80"), KernelClass::attention);
  EXPECT_EQ(cls("fmha_cutlassB_bf16_aligned_64x64_k64_sm80"), KernelClass::attention);
  EXPECT_EQ(cls("fmhaSm100aKernel_QkvE4m3OBfloat16H64PagedKvCausalP16VarSeqQ128Kv128"),
            KernelClass::attention);
  EXPECT_EQ(cls("void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128>>"),
            KernelClass::attention);
  // cuDNN's SDPA kernels name their pass like a convolution's; they are attention.
  EXPECT_EQ(
      cls("cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_7_64x128x64_4x1x1_"
          "cga1x1x1_kernel0_0"),
      KernelClass::attention);
  EXPECT_EQ(
      cls("cudnn_generated_fort_native_sdpa_sm90_flash_bprop_wgmma_f16_knob_26_64x64x64_1x4x1_"
          "cga1x1x1_kernel0_0"),
      KernelClass::attention);
  EXPECT_EQ(cls("sm80_xmma_fprop_implicit_gemm_f16f16_f16f32_f32_nhwckrsc_nhwc"),
            KernelClass::conv);
  EXPECT_EQ(cls("sm86_xmma_dgrad_implicit_gemm_indexed_f16f16"), KernelClass::conv);
  EXPECT_EQ(cls("cudnn_volta_scudnn_128x64_stridedB_splitK_xregs_large_nn_v1"), KernelClass::conv);
  EXPECT_EQ(cls("volta_h884gemm_64x64_ldg8_nn"), KernelClass::gemm);
  EXPECT_EQ(cls("ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_nn"), KernelClass::gemm);
  EXPECT_EQ(cls("nvjet_tst_128x256_64x4_1x2_h_bz_coopA_NTN"), KernelClass::gemm);
  EXPECT_EQ(cls("bmm_Bfloat16_MxE2m1MxE4m3_Fp32_t128x16x256u2"), KernelClass::gemm);
  EXPECT_EQ(cls("void cudnn::bn_bw_1C11_kernel_new<float, float, float2, 512, true, 1>"),
            KernelClass::norm);
  // cuDNN's layout transforms run under their convolution but only copy.
  EXPECT_EQ(cls("void cudnn::engines_precompiled::nchwToNhwcKernel<__nv_bfloat16, __nv_bfloat16, "
                "float, false, true, (cudnnKernelDataType_t)0>",
                "aten::cudnn_convolution"),
            KernelClass::elementwise);
  EXPECT_EQ(cls("void cudnn::ops::nhwcToNchwKernel<float, float, float, true, false, "
                "(cudnnKernelDataType_t)0>",
                "aten::convolution_backward"),
            KernelClass::elementwise);
  EXPECT_EQ(cls("implicit_convolveNd_sgemm", "aten::cudnn_convolution"), KernelClass::conv);
  // Normalisation kernels without their operator (CUDA graphs, foreign traces).
  EXPECT_EQ(
      cls("void at::native::(anonymous namespace)::GammaBetaBackwardCUDAKernel<float, float>"),
      KernelClass::norm);
  EXPECT_EQ(
      cls("void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16>"),
      KernelClass::norm);
  EXPECT_EQ(cls("void at::native::(anonymous namespace)::RowwiseMomentsCUDAKernel<float>"),
            KernelClass::norm);
  // A scatter's functor is named ReduceAdd; the scatter is no reduction.
  const std::string_view index_add =
      "void at::native::indexFuncLargeIndex<float, long, unsigned int, 2, 2, -2, true, "
      "at::native::(anonymous namespace)::ReduceAdd>(...)";
  EXPECT_EQ(cls(index_add, "aten::index_add_"), KernelClass::other);
  EXPECT_EQ(cls(index_add), KernelClass::reduction);  // without its operator: the name decides
  EXPECT_EQ(
      cls("void at::native::_scatter_gather_elementwise_kernel<128, 8>", "aten::scatter_add_"),
      KernelClass::other);
}

OpInput tensor(std::vector<std::int64_t> shape, std::string type = "float") {
  return OpInput{{std::move(shape)}, std::move(type), "", {}};
}
OpInput scalar(std::string value) {
  return OpInput{{}, "ScalarList", std::move(value), {}};
}

TEST(Rules, ConvolutionFlopsFromShapesStridesPaddingAndGroups) {
  // 8x64x56x56 input, 128 3x3 filters, stride 2, padding 1: a 28x28 output.
  // FLOPs = 2 x 8 x 128 x (28 x 28) x 64 x (3 x 3) = 924,844,032.
  const OpCall conv("aten::convolution", {tensor({8, 64, 56, 56}), tensor({128, 64, 3, 3}),
                                          tensor({128}), scalar("[2, 2]"), scalar("[1, 1]"),
                                          scalar("[1, 1]"), OpInput{{}, "Scalar", "False", {}},
                                          scalar("[0, 0]"), OpInput{{}, "Scalar", "1", {}}});
  const auto w = estimate_op_work(conv);
  ASSERT_TRUE(w.has_value());
  EXPECT_DOUBLE_EQ(w->flops, 924844032.0);
  // Read input (8x64x56x56 x 4 B) and weight and bias, write 8x128x28x28 x 4 B.
  EXPECT_DOUBLE_EQ(w->dram_bytes,
                   4.0 * (8 * 64 * 56 * 56 + 128 * 64 * 9 + 128 + 8 * 128 * 28 * 28));
  // Depthwise 3x3 (groups 32), stride 1, padding 1 on 1x32x10x10:
  // 2 x 1 x 32 x 100 x 1 x 9 = 57,600.
  const OpCall dw("aten::conv2d",
                  {tensor({1, 32, 10, 10}), tensor({32, 1, 3, 3}), tensor({32}), scalar("[1, 1]"),
                   scalar("[1, 1]"), scalar("[1, 1]"), OpInput{{}, "Scalar", "32", {}}});
  ASSERT_TRUE(estimate_op_work(dw).has_value());
  EXPECT_DOUBLE_EQ(estimate_op_work(dw)->flops, 57600.0);
  // Backward with input and weight gradients: twice the forward's FLOPs.
  std::vector<OpInput> bw = {tensor({8, 128, 28, 28}), tensor({8, 64, 56, 56}),
                             tensor({128, 64, 3, 3})};
  bw.resize(10, OpInput{});
  bw.push_back(OpInput{{}, "ScalarList", "[True, True, False]", {}});
  const auto b = estimate_op_work(OpCall("aten::convolution_backward", bw));
  ASSERT_TRUE(b.has_value());
  EXPECT_DOUBLE_EQ(b->flops, 2 * 924844032.0);
  // The weight gradient alone: one forward's FLOPs; a mask the profiler did
  // not write as booleans says nothing, so both gradients are counted.
  bw.back().concrete = "[False, True, False]";
  EXPECT_DOUBLE_EQ(estimate_op_work(OpCall("aten::convolution_backward", bw))->flops, 924844032.0);
  for (const char* unread : {"[1, 0, 0]", "[]"}) {
    bw.back().concrete = unread;
    EXPECT_DOUBLE_EQ(estimate_op_work(OpCall("aten::convolution_backward", bw))->flops,
                     2 * 924844032.0)
        << unread;
  }
  // Only the depthwise convolution has a count from its shapes.
  EXPECT_LT(w->instructions, 0.0);
  EXPECT_LT(b->instructions, 0.0);
  // No strides recorded: not modelled (the roofline fallback takes it).
  EXPECT_FALSE(estimate_op_work(
                   OpCall("aten::convolution", {tensor({8, 64, 56, 56}), tensor({128, 64, 3, 3})}))
                   .has_value());
}

TEST(Rules, TransposedConvolutionFlopsCountTheInputsPositions) {
  // DCGAN's generator layer: ConvTranspose2d(512, 256, 4, stride 2, padding
  // 1) on 8x512x8x8: output (8 - 1) x 2 - 2 + 3 + 1 = 16 pixels a side. Every
  // input element meets 256 x 16 weights: FLOPs 2 x 8 x 64 x 512 x 256 x 16
  // = 2,147,483,648.
  const double flops = 2.0 * 8 * 64 * 512 * 256 * 16;
  const OpInput no{{}, "Scalar", "False", {}}, yes{{}, "Scalar", "True", {}};
  const OpInput one{{}, "Scalar", "1", {}};
  const OpCall conv("aten::convolution",
                    {tensor({8, 512, 8, 8}, "c10::BFloat16"),
                     tensor({512, 256, 4, 4}, "c10::BFloat16"), OpInput{}, scalar("[2, 2]"),
                     scalar("[1, 1]"), scalar("[1, 1]"), yes, scalar("[0, 0]"), one});
  const auto f = estimate_op_work(conv);
  ASSERT_TRUE(f.has_value());
  EXPECT_DOUBLE_EQ(f->flops, flops);
  // Read the input and the weight, write 8x256x16x16, all bf16.
  EXPECT_DOUBLE_EQ(f->dram_bytes, 2.0 * (8 * 512 * 64 + 512 * 256 * 16 + 8 * 256 * 256));
  // The adjoint convolution's geometry: output positions are the input's
  // 8 x 64, input positions the output's 8 x 256.
  ASSERT_TRUE(f->conv.has_value());
  EXPECT_DOUBLE_EQ(f->conv->out_positions, 512.0);
  EXPECT_DOUBLE_EQ(f->conv->in_positions, 2048.0);
  EXPECT_DOUBLE_EQ(f->conv->out_channels, 512.0);
  EXPECT_DOUBLE_EQ(f->conv->in_channels, 256.0);
  // The same through conv_transpose2d(input, weight, bias, stride, padding,
  // output_padding, groups, dilation) and cuDNN's (input, weight, padding,
  // output_padding, stride, dilation, groups), with an output_padding of 1:
  // 17 pixels a side, the same FLOPs.
  const OpCall aten("aten::conv_transpose2d",
                    {tensor({8, 512, 8, 8}), tensor({512, 256, 4, 4}), OpInput{}, scalar("[2, 2]"),
                     scalar("[1, 1]"), scalar("[1, 1]"), one, scalar("[1, 1]")});
  ASSERT_TRUE(estimate_op_work(aten).has_value());
  EXPECT_DOUBLE_EQ(estimate_op_work(aten)->flops, flops);
  EXPECT_DOUBLE_EQ(estimate_op_work(aten)->conv->in_positions, 8.0 * 17 * 17);
  const OpCall cudnn("aten::cudnn_convolution_transpose",
                     {tensor({8, 512, 8, 8}), tensor({512, 256, 4, 4}), scalar("[1, 1]"),
                      scalar("[0, 0]"), scalar("[2, 2]"), scalar("[1, 1]"), one});
  ASSERT_TRUE(estimate_op_work(cudnn).has_value());
  EXPECT_DOUBLE_EQ(estimate_op_work(cudnn)->flops, flops);
  // Backward (grad_output 8x256x16x16, input, weight; transposed True): each
  // gradient costs the forward's FLOPs, counted on the input's positions.
  std::vector<OpInput> bw = {tensor({8, 256, 16, 16}), tensor({8, 512, 8, 8}),
                             tensor({512, 256, 4, 4})};
  bw.resize(7, OpInput{});
  bw.push_back(yes);
  bw.push_back(scalar("[0, 0]"));
  bw.push_back(one);
  bw.push_back(OpInput{{}, "ScalarList", "[True, True, False]", {}});
  const auto b = estimate_op_work(OpCall("aten::convolution_backward", bw));
  ASSERT_TRUE(b.has_value());
  EXPECT_DOUBLE_EQ(b->flops, 2 * flops);
  EXPECT_DOUBLE_EQ(b->conv->out_positions, 512.0);
  EXPECT_DOUBLE_EQ(b->conv->in_positions, 2048.0);
  // Before the transposed flag was read, the forward convolution's rule
  // counted the gradient's positions and w[1] channels: 2 x 8 x 256 x 256 x
  // 256 x 16 per gradient, twice the FLOPs here. It still does when the flag
  // says False.
  bw[7] = no;
  EXPECT_DOUBLE_EQ(estimate_op_work(OpCall("aten::convolution_backward", bw))->flops,
                   2 * 2.0 * 8 * 256 * 256 * 256 * 16);
}

TEST(Rules, DepthwiseConvolutionInstructionsFromOutputsAndTaps) {
  // 1x32x10x10, 32 3x3 filters, groups 32: 3,200 outputs of 9 taps each.
  // Forward: 3,200 x (0.670 + 0.0546 x 9) = 3,716.48 warp instructions.
  const OpCall dw("aten::conv2d",
                  {tensor({1, 32, 10, 10}), tensor({32, 1, 3, 3}), tensor({32}), scalar("[1, 1]"),
                   scalar("[1, 1]"), scalar("[1, 1]"), OpInput{{}, "Scalar", "32", {}}});
  const auto f = estimate_op_work(dw);
  ASSERT_TRUE(f.has_value());
  EXPECT_NEAR(f->instructions, 3716.48, 1e-6);
  // Backward, both gradients: 3,200 x (1.240 + 0.1665 x 9 + 0.992 + 0.0497 x 9)
  // = 13,368.96; the data gradient alone 3,200 x 2.7385 = 8,763.2.
  auto backward = [&](const char* mask) {
    std::vector<OpInput> bw = {tensor({1, 32, 10, 10}), tensor({1, 32, 10, 10}),
                               tensor({32, 1, 3, 3})};
    bw.resize(9, OpInput{});
    bw.push_back(OpInput{{}, "Scalar", "32", {}});  // groups
    bw.push_back(OpInput{{}, "ScalarList", mask, {}});
    return estimate_op_work(OpCall("aten::convolution_backward", bw));
  };
  EXPECT_NEAR(backward("[True, True, False]")->instructions, 13368.96, 1e-6);
  EXPECT_NEAR(backward("[True, False, False]")->instructions, 8763.2, 1e-6);
  EXPECT_DOUBLE_EQ(backward("[True, False, False]")->flops, 57600.0);
  // A grouped convolution with several channels per group is no depthwise one.
  const OpCall grouped("aten::conv2d", {tensor({1, 32, 10, 10}), tensor({32, 2, 3, 3}),
                                        tensor({32}), scalar("[1, 1]"), scalar("[1, 1]"),
                                        scalar("[1, 1]"), OpInput{{}, "Scalar", "16", {}}});
  EXPECT_LT(estimate_op_work(grouped)->instructions, 0.0);
}

TEST(Rules, CollectiveBytesFromTheRecordedMessage) {
  // all-reduce of 1e6 floats among 2 ranks: read 4 MB, write 4 MB, stage
  // 2 x 1/2 x 4 MB through the ring buffers; 0.5e6 additions.
  OpCall op("record_param_comms (allreduce)", {});
  op.in_msg_elements = 1e6;
  op.out_msg_elements = 1e6;
  op.msg_dtype = "Float";
  op.group_size = 2;
  const auto w = estimate_op_work(op);
  ASSERT_TRUE(w.has_value());
  EXPECT_DOUBLE_EQ(w->dram_bytes, 12e6);
  EXPECT_DOUBLE_EQ(w->flops, 0.5e6);
}

TEST(Rules, IntegerAndComplexMatrixProducts) {
  // torch._int_mm: 8192x4096 int8 times 4096x16384 int8, int32 out.
  // FLOPs 2 x 8192 x 4096 x 16384 = 1.0995e12; bytes 8192 x 4096 + 4096 x
  // 16384 (1 B each) + 8192 x 16384 x 4 B.
  const OpCall i8("aten::_int_mm",
                  {tensor({8192, 4096}, "signed char"), tensor({4096, 16384}, "signed char")});
  const auto w = estimate_op_work(i8);
  ASSERT_TRUE(w.has_value());
  EXPECT_DOUBLE_EQ(w->flops, 2.0 * 8192 * 4096 * 16384);
  EXPECT_DOUBLE_EQ(w->dram_bytes, 8192.0 * 4096 + 4096.0 * 16384 + 4.0 * 8192 * 16384);
  // A batched complex product (an FNO's spectral weights as einsum runs
  // them): 256 batches of 64x64 times 64x64 complex<float>, 8 real FLOPs a
  // multiply-add: 8 x 256 x 64^3 = 536,870,912; 8-byte elements.
  const OpCall c("aten::bmm", {tensor({256, 64, 64}, "c10::complex<float>"),
                               tensor({256, 64, 64}, "c10::complex<float>")});
  ASSERT_TRUE(estimate_op_work(c).has_value());
  EXPECT_DOUBLE_EQ(estimate_op_work(c)->flops, 536870912.0);
  EXPECT_DOUBLE_EQ(estimate_op_work(c)->dram_bytes, 3.0 * 256 * 64 * 64 * 8);
}

TEST(Rules, SoftmaxRowsTooLongForSharedMemoryAreReadOncePerPass) {
  const OpInput dim1{{}, "Scalar", "1", {}};
  // Each tensor once: fp32 [16384, 32000] in and out, 2 x 2,097,152,000 B;
  // bf16 [8192, 50304] in, fp32 out (half_to_float): 6 B an element.
  const double n = 16384.0 * 32000, g = 8192.0 * 50304;
  const OpCall fwd("aten::_log_softmax",
                   {tensor({16384, 32000}), dim1, OpInput{{}, "Scalar", "False", {}}});
  ASSERT_TRUE(estimate_op_work(fwd).has_value());
  EXPECT_DOUBLE_EQ(estimate_op_work(fwd)->dram_bytes, 8 * n);
  const OpCall widen("aten::_log_softmax", {tensor({8192, 50304}, "c10::BFloat16"), dim1,
                                            OpInput{{}, "Scalar", "True", {}}});
  EXPECT_DOUBLE_EQ(estimate_op_work(widen)->dram_bytes, 6 * g);
  // The backward (grad, output, dim, input_dtype) writes the input's dtype:
  // 15 (BFloat16) after fp32 gradients, 4 + 4 + 2 B an element.
  const OpCall bwd(
      "aten::_log_softmax_backward_data",
      {tensor({8192, 50304}), tensor({8192, 50304}), dim1, OpInput{{}, "Scalar", "15", {}}});
  EXPECT_DOUBLE_EQ(estimate_op_work(bwd)->dram_bytes, 10 * g);

  // The kernels that stage a row in shared memory read it once; the
  // block-a-row ones re-read it: forward twice more, backward the gradient
  // once more, none of it counted when the capture device is unknown.
  const std::string f = "void at::native::cunn_SoftMaxForward<4, float, float, float, Epilogue>";
  const std::string b = "void at::native::cunn_SoftMaxBackward<8, c10::BFloat16, float>";
  LaunchConfig rows;
  rows.grid[0] = 16384;
  rows.block[0] = 1024;
  rows.registers_per_thread = 32;
  EXPECT_EQ(row_reread_bytes("cunn_SoftMaxForwardSmem<4, float>", 4 * n, 0, rows, nullptr), 0.0);
  EXPECT_EQ(row_reread_bytes(f, 4 * n, 0, rows, nullptr), 0.0);
  // On an H100 (132 SMs, 2 blocks of 1,024 threads each; L2 52,428,800 B,
  // resident below 0.50 of it, 26,214,400 B, none above 0.92, 48,234,496 B)
  // the 264 resident rows read 264 x 128,000 = 33,792,000 B between two
  // reads of a line: resident (48,234,496 - 33,792,000) / (48,234,496 -
  // 26,214,400) = 0.656 of it. With 100 rows in all, 12.8 MB: all of it.
  const Device h100 = load_capture_device("h100-sxm").device;
  EXPECT_NEAR(row_reread_bytes(f, 4 * n, 0, rows, &h100), 8 * n * (1 - 14442496.0 / 22020096.0),
              1.0);
  LaunchConfig few = rows;
  few.grid[0] = 100;
  EXPECT_EQ(row_reread_bytes(f, 100 * 128000.0, 0, few, &h100), 0.0);
  // On the H200 (L2 62,914,560 B: 31,457,280 and 57,881,395.2 B): the bf16
  // rows of 50,304, 264 x 100,608 B = 26.6 MB, stay; the backward's
  // 512-thread blocks, 4 an SM, 528 x 100,608 = 53,121,024 B, 0.180 of
  // them; rows of 65,536 fp32, 264 x 262,144 = 69.2 MB, none.
  const Device h200 = load_capture_device("h200").device;
  LaunchConfig gpt = rows;
  gpt.grid[0] = 8192;
  EXPECT_EQ(row_reread_bytes(f, 2 * g, 0, gpt, &h200), 0.0);
  EXPECT_DOUBLE_EQ(row_reread_bytes(f, 8192 * 262144.0, 0, gpt, &h200), 2 * 8192 * 262144.0);
  gpt.block[0] = 512;
  EXPECT_NEAR(row_reread_bytes(b, 2 * g, 0, gpt, &h200), 2 * g * (1 - 4760371.2 / 26424115.2), 1.0);
}

TEST(Rules, NormKernelsReReadWideRowsByTheL2ResidencyLaw) {
  // Layer / RMS norm on 16,384 rows of 4,096 bf16 (x and dy 134,217,728 B
  // each), 128-thread blocks of 32 registers: 16 an SM on an H100, 2,112
  // rows resident. The input-gradient kernel reads dy and x again after the
  // 2,112 rows' 16 KB each went through L2, 34,603,008 B: resident
  // (48,234,496 - 34,603,008) / 22,020,096 = 0.619 of it, the rest of 2 x
  // 134,217,728 B from DRAM. The forward re-reads x after 2,112 x 8 KB =
  // 17.3 MB, under 0.50 of the L2: none from DRAM; nor the backward over
  // 1,024 rows (16.8 MB).
  const Device h100 = load_capture_device("h100-sxm").device;
  LaunchConfig rows;
  rows.grid[0] = 16384;
  rows.block[0] = 128;
  rows.registers_per_thread = 32;
  const double t = 16384.0 * 4096 * 2;
  EXPECT_NEAR(row_reread_bytes("void layer_norm_grad_input_kernel_vectorized<BFloat16, float, 1>",
                               t, t, rows, &h100),
              2 * t * (1 - 13631488.0 / 22020096.0), 1.0);
  EXPECT_EQ(
      row_reread_bytes("void vectorized_layer_norm_kernel<BFloat16, float, 1>", t, 0, rows, &h100),
      0.0);
  LaunchConfig few = rows;
  few.grid[0] = 1024;
  EXPECT_EQ(
      row_reread_bytes("layer_norm_grad_input_kernel<float, float>", t / 16, t / 16, few, &h100),
      0.0);
  // Unknown capture device, or one without an L2 model (the A100's file):
  // none, as for a narrow row; other kernels none.
  EXPECT_EQ(row_reread_bytes("layer_norm_grad_input_kernel", t, t, rows, nullptr), 0.0);
  const Device a100 = load_capture_device("a100-sxm").device;
  EXPECT_EQ(row_reread_bytes("layer_norm_grad_input_kernel", t, t, rows, &a100), 0.0);
  EXPECT_EQ(row_reread_bytes("GammaBetaBackwardCUDAKernelTemplate", t, t, rows, nullptr), 0.0);
}

TEST(Rules, GemmWithoutShapesSitsNearItsComputeRoof) {
  // A 1 ms GEMM kernel without an operator or a tile in its name on the H200
  // at its default 1980 MHz: tensor peak 132 SMs x 4096 FLOP/clk x 1.98 GHz
  // = 1.0705 PFLOP/s; over the duration less the 1 us launch and drain,
  // FLOPs = 0.7 x 999 us x peak, bytes = 0.2 x 999 us x 4.8 TB/s.
  Trace t;
  t.call("cudaLaunchKernel", 10, 1, 1).kernel("sm90_xmma_gemm_bf16bf16_bf16f32", 20, 1000, 1);
  t.call("cudaLaunchKernel", 12, 1, 2).kernel("vectorized_elementwise_kernel", 1100, 1000, 2);
  const Workload w = t.read();
  ASSERT_EQ(w.kernels.size(), 2u);
  const Kernel& g = w.kernels[0];
  EXPECT_EQ(g.cls, KernelClass::gemm);
  EXPECT_EQ(g.work.source, WorkSource::fallback);
  EXPECT_NEAR(g.work.flops, 0.7 * 999e-6 * 132 * 4096 * 1.98e9, 1e3);
  EXPECT_NEAR(g.work.dram_bytes, 0.2 * 999e-6 * 4.8e12, 1.0);
  // Memory-bound classes: half the DRAM peak, no FLOPs.
  EXPECT_DOUBLE_EQ(w.kernels[1].work.flops, 0.0);
  EXPECT_NEAR(w.kernels[1].work.dram_bytes, 0.5 * 999e-6 * 4.8e12, 1.0);
}

TEST(Rules, GemmFallbackReadsTheTileInTheKernelName) {
  EXPECT_EQ(gemm_tile("nvjet_sm90_tst_64x8_64x16_4x1_v_bz_TNT"), (std::pair{64, 8}));
  EXPECT_EQ(gemm_tile("void cutlass::Kernel2<cutlass_80_tensorop_s16816gemm_bf16_64x128_64x4_nn>"),
            (std::pair{64, 128}));
  EXPECT_EQ(gemm_tile("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_cgasize1x2x1"),
            (std::pair{128, 256}));
  EXPECT_EQ(gemm_tile("ampere_bf16_s16816gemm_bf16_256x128_ldg8_f2f_stages_64x3_nn"),
            (std::pair{256, 128}));
  EXPECT_FALSE(gemm_tile("sm90_xmma_gemm_bf16bf16_bf16f32"));  // "90_" is no tile
  EXPECT_FALSE(gemm_tile("nvjet_sm90_tst_1x2_4x1"));           // cluster shapes, not tiles

  // 11 us GEMMs without operators (10 us after the 1 us launch): a 256 x 128
  // tile at 0.7 of the 1.0705 PFLOP/s peak, 176 x 128 at 0.6, 128 x 64 at
  // 0.35, a skinny one (decode GEMV) memory-bound at half of 4.8 TB/s and one
  // FLOP per byte.
  Trace t;
  t.call("cudaLaunchKernel", 10, 1, 1)
      .kernel("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_NNT", 20, 11, 1);
  t.call("cudaLaunchKernel", 12, 1, 2).kernel("nvjet_sm90_tst_128x64_64x8_1x2_h_bz_TNT", 40, 11, 2);
  t.call("cudaLaunchKernel", 14, 1, 3).kernel("nvjet_sm90_tst_64x8_64x16_4x1_v_bz_TNT", 60, 11, 3);
  t.call("cudaLaunchKernel", 16, 1, 4)
      .kernel("nvjet_sm90_tst_176x128_64x5_1x2_h_bz_TNN", 80, 11, 4);
  t.call("cudaLaunchKernel", 18, 1, 5)
      .kernel("void cublasLt::splitKreduce_kernel<32, 16, int, float, __nv_bfloat16>", 100, 11, 5);
  const Workload w = t.read();
  ASSERT_EQ(w.kernels.size(), 5u);
  // cuBLAS's split-K reduction sums partial products: memory-bound.
  EXPECT_EQ(w.kernels[4].cls, KernelClass::gemm);
  EXPECT_NEAR(w.kernels[4].work.dram_bytes, 0.5 * 10e-6 * 4.8e12, 1.0);
  const double peak = 132 * 4096 * 1.98e9;
  EXPECT_NEAR(w.kernels[0].work.flops, 0.7 * 10e-6 * peak, 1e3);
  EXPECT_NEAR(w.kernels[1].work.flops, 0.35 * 10e-6 * peak, 1e3);
  EXPECT_NEAR(w.kernels[2].work.dram_bytes, 0.5 * 10e-6 * 4.8e12, 1.0);
  EXPECT_DOUBLE_EQ(w.kernels[2].work.flops, w.kernels[2].work.dram_bytes);
  EXPECT_NEAR(w.kernels[3].work.flops, 0.6 * 10e-6 * peak, 1e3);
  EXPECT_NEAR(w.kernels[3].work.dram_bytes, 0.2 * 10e-6 * 4.8e12, 1.0);
  for (const Kernel& k : w.kernels) EXPECT_EQ(k.work.source, WorkSource::fallback);
}

TEST(Rules, GemmFallbackIsAFractionOfItsOwnPipesPeak) {
  // 11 us GEMMs without operators, 256 x 128 tiles (0.7 of the peak over the
  // 10 us after the launch): bf16 at 0.7 x 1.0705 PFLOP/s; TF32 at half that
  // peak (one TF32 MMA takes two 16-bit MMAs' time); an FP32 SIMT GEMM at 0.7
  // of the FP32 peak, 132 SMs x 256 FLOP/clk x 1.98 GHz = 66.9 TFLOP/s.
  Trace t;
  t.call("cudaLaunchKernel", 10, 1, 1)
      .kernel("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_NNT", 20, 11, 1);
  t.call("cudaLaunchKernel", 12, 1, 2)
      .kernel("sm90_xmma_gemm_f32f32_tf32f32_f32_nt_n_tilesize256x128x32", 40, 11, 2);
  t.call("cudaLaunchKernel", 14, 1, 3).kernel("cutlass_80_simt_sgemm_256x128_8x4_nn", 60, 11, 3);
  const Workload w = t.read();
  ASSERT_EQ(w.kernels.size(), 3u);
  const double tensor_peak = 132 * 4096 * 1.98e9;
  EXPECT_NEAR(w.kernels[0].work.flops, 0.7 * 10e-6 * tensor_peak, 1e3);
  EXPECT_NEAR(w.kernels[1].work.flops, 0.7 * 10e-6 * tensor_peak / 2, 1e3);
  EXPECT_NEAR(w.kernels[2].work.flops, 0.7 * 10e-6 * 132 * 256 * 1.98e9, 1e3);
}

TEST(Rules, KernelsOfNoKnownFamilyTakeTheirOwnFallbackFraction) {
  // 11 us kernels without operators (10 us after the launch): an elementwise
  // one takes half of 4.8 TB/s, 24 MB; a scatter (class `other`: no family
  // dvfsim knows) takes the 0.085 of the DRAM peak that shaped kernels of
  // that class reach, 0.085 x 10 us x 4.8 TB/s = 4.08 MB; CUB's radix sort,
  // of that class too, its primitives' 0.027, 1.296 MB.
  Trace t;
  t.call("cudaLaunchKernel", 10, 1, 1).kernel("vectorized_elementwise_kernel", 20, 11, 1);
  t.call("cudaLaunchKernel", 12, 1, 2)
      .kernel("void at_cuda_detail::cub::detail::radix_sort::DeviceRadixSortOnesweepKernel", 40, 11,
              2);
  t.call("cudaLaunchKernel", 14, 1, 3)
      .kernel("void at::native::(anonymous namespace)::sum_and_scatter<float, long>", 60, 11, 3);
  const Workload w = t.read();
  ASSERT_EQ(w.kernels.size(), 3u);
  EXPECT_EQ(w.kernels[0].cls, KernelClass::elementwise);
  EXPECT_NEAR(w.kernels[0].work.dram_bytes, 0.5 * 10e-6 * 4.8e12, 1.0);
  for (std::size_t i : {1u, 2u}) {
    EXPECT_EQ(w.kernels[i].cls, KernelClass::other);
    EXPECT_EQ(w.kernels[i].work.source, WorkSource::fallback);
  }
  EXPECT_NEAR(w.kernels[1].work.dram_bytes, 1.296e6, 1.0);
  EXPECT_NEAR(w.kernels[2].work.dram_bytes, 4.08e6, 1.0);
}

TEST(Rules, OverlappingKernelsShareTheFallbacksRoofline) {
  // Two 11 us kernels on two streams, the second starting 5.5 us into the
  // first: each spends half its time beside the other, a mean concurrency of
  // 1.5, so each takes the memory fallback's half of the DRAM peak over 1.5:
  // 0.5 / 1.5 x 10 us x 4.8 TB/s = 16 MB. A third kernel, alone, keeps 24 MB;
  // a fourth, whose timestamps overlap the third's on the same stream, is
  // not beside it (one stream runs one kernel at a time).
  Trace t;
  t.call("cudaLaunchKernel", 10, 1, 1).kernel("vectorized_elementwise_kernel", 20, 11, 1, 7);
  t.call("cudaLaunchKernel", 12, 1, 2).kernel("vectorized_elementwise_kernel", 25.5, 11, 2, 8);
  t.call("cudaLaunchKernel", 14, 1, 3).kernel("vectorized_elementwise_kernel", 60, 11, 3, 7);
  t.call("cudaLaunchKernel", 16, 1, 4).kernel("vectorized_elementwise_kernel", 65, 11, 4, 7);
  const Workload w = t.read();
  ASSERT_EQ(w.kernels.size(), 4u);
  const std::vector<double> c = traced_concurrency(w.kernels);
  EXPECT_NEAR(c[0], 1.5, 1e-9);
  EXPECT_NEAR(c[1], 1.5, 1e-9);
  EXPECT_DOUBLE_EQ(c[2], 1.0);
  EXPECT_DOUBLE_EQ(c[3], 1.0);
  EXPECT_NEAR(w.kernels[0].work.dram_bytes, 0.5 / 1.5 * 10e-6 * 4.8e12, 1.0);
  EXPECT_NEAR(w.kernels[1].work.dram_bytes, 0.5 / 1.5 * 10e-6 * 4.8e12, 1.0);
  EXPECT_NEAR(w.kernels[2].work.dram_bytes, 0.5 * 10e-6 * 4.8e12, 1.0);
}

// ---- capture devices -----------------------------------------------------------

TEST(CaptureDevices, EveryListedGpuResolvesFromItsDriverName) {
  const std::vector<std::pair<std::string, std::string>> names = {
      {"Tesla V100-SXM2-16GB", "v100-sxm2"},
      {"Tesla V100-SXM2-32GB", "v100-sxm2"},
      {"Tesla V100-PCIE-16GB", "v100-pcie"},
      {"Tesla V100-DGXS-32GB", "v100-dgxs"},
      {"Tesla T4", "t4"},
      {"NVIDIA A10", "a10"},
      {"NVIDIA A40", "a40"},
      {"NVIDIA A100-SXM4-40GB", "a100-sxm-40gb"},
      {"NVIDIA A100-SXM4-80GB", "a100-sxm"},
      {"NVIDIA A100-PG509-200", "a100-pg509-200"},
      {"NVIDIA PG509-210", "a100-pg509-210"},
      {"NVIDIA H100 PCIe", "h100-pcie"},
      {"NVIDIA H100 NVL", "h100-nvl"},
      {"NVIDIA H200", "h200"},
      {"NVIDIA L4", "l4"},
      {"NVIDIA L40S", "l40s"},
      {"NVIDIA GeForce RTX 2080 Ti", "rtx2080ti"},
      {"NVIDIA GeForce RTX 3090", "rtx3090"},
      {"NVIDIA GeForce RTX 3080 Ti", "rtx3080ti"},
      {"NVIDIA GeForce RTX 4090", "rtx4090"},
      {"NVIDIA RTX A4000", "rtx-a4000"},
      {"NVIDIA B200", "b200"},
      {"NVIDIA GeForce RTX 5090", "rtx5090"},
  };
  for (const auto& [driver, device] : names) {
    EXPECT_EQ(device_for_driver_name(driver), device) << driver;
    EXPECT_NO_THROW(load_capture_device(device)) << device;
  }
  // Case and repeated blanks do not matter; an unknown GPU maps to nothing.
  EXPECT_EQ(device_for_driver_name("tesla  v100-sxm2-16gb"), "v100-sxm2");
  EXPECT_EQ(device_for_driver_name("NVIDIA Quantum Q9000"), "");
}

TEST(CaptureDevices, NoDriverNameIsListedTwice) {
  std::map<std::string, std::string> seen;
  for (const std::string& name : list_capture_devices()) {
    const Device d = load_capture_device(name).device;
    const auto [it, fresh] = seen.try_emplace(d.nvml_name, name);
    EXPECT_TRUE(fresh) << d.nvml_name << " in " << name << " and " << it->second;
  }
}

TEST(CaptureDevices, CaptureOnlyFileIsRefusedAsTarget) {
  const std::string msg = [] {
    try {
      load_device("t4");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  }();
  EXPECT_NE(msg.find("t4.yaml: a capture-only device"), std::string::npos) << msg;
  EXPECT_NE(msg.find("--capture-device"), std::string::npos) << msg;
  // As a capture device: per-clock peaks from the datasheet numbers.
  // T4: 65 TFLOP/s / (40 SMs x 1590 MHz) = 1022 FLOP/clk/SM; 8.1 TF FP32 -> 127.
  const Device t4 = load_capture_device("t4").device;
  EXPECT_NEAR(t4.tensor_flops_per_clock_per_sm, 65e12 / (40 * 1590e6), 1e-6);
  EXPECT_NEAR(t4.fp32_flops_per_clock_per_sm, 8.1e12 / (40 * 1590e6), 1e-6);
  EXPECT_DOUBLE_EQ(t4.dram_bytes_per_s(5001), 320e9);
  EXPECT_EQ(t4.default_core_mhz, 1590);
}

TEST(CaptureDevices, OneRuleForDevicePaths) {
  EXPECT_TRUE(is_device_path("my/gpu"));
  EXPECT_TRUE(is_device_path("gpu.yaml"));
  EXPECT_TRUE(is_device_path("gpu.yml"));
  EXPECT_FALSE(is_device_path("h200"));
}

}  // namespace
}  // namespace dvfsim

namespace dvfsim {
namespace {

TEST(CaptureDevices, TargetWinsOverACaptureOnlyFileForTheSameDriverName) {
  // A capture-only file sorted before the target lists the target's driver
  // name too: resolution picks the target.
  const auto dir = std::filesystem::temp_directory_path() / "dvfsim_capture_precedence";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::filesystem::copy_file(device_directory() + "/h200.yaml", dir / "h200.yaml");
  std::string t4;
  {
    std::ifstream in(device_directory() + "/t4.yaml");
    std::stringstream ss;
    ss << in.rdbuf();
    t4 = ss.str();
  }
  const auto at = t4.find("nvml_names: [");
  ASSERT_NE(at, std::string::npos);
  t4.insert(at + 13, "\"NVIDIA H200\", ");
  std::ofstream(dir / "aaa.yaml") << t4;
  const char* old = std::getenv("DVFSIM_DEVICES");
  const std::string saved = old ? old : "";
  setenv("DVFSIM_DEVICES", dir.c_str(), 1);
  EXPECT_EQ(device_for_driver_name("NVIDIA H200"), "h200");
  EXPECT_EQ(device_for_driver_name("Tesla T4"), "aaa");
  if (old)
    setenv("DVFSIM_DEVICES", saved.c_str(), 1);
  else
    unsetenv("DVFSIM_DEVICES");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace dvfsim
