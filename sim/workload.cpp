#include "sim/workload.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/error.h"

namespace dvfsim {
namespace {
constexpr std::array<std::string_view, kKernelClassCount> kClassNames = {
    "gemm",      "attention",     "conv",   "elementwise", "reduction", "norm",
    "optimizer", "communication", "memcpy", "memset",      "other"};
constexpr std::array<std::string_view, kPhaseCount> kPhaseNames = {"forward", "backward",
                                                                   "optimizer", "other"};
}  // namespace

std::string_view to_string(KernelClass c) {
  return kClassNames[static_cast<int>(c)];
}
std::string_view to_string(Phase p) {
  return kPhaseNames[static_cast<int>(p)];
}
std::string_view to_string(WorkSource s) {
  return s == WorkSource::shapes ? "shapes" : "fallback";
}

std::string_view to_string(InstructionSource s) {
  switch (s) {
    case InstructionSource::ncu:
      return "ncu";
    case InstructionSource::shapes:
      return "shapes";
    case InstructionSource::estimated:
      break;
  }
  return "estimated";
}

std::optional<InstructionSource> parse_instruction_source(std::string_view s) {
  if (s == "ncu") return InstructionSource::ncu;
  if (s == "estimated") return InstructionSource::estimated;
  if (s == "shapes") return InstructionSource::shapes;
  return std::nullopt;
}

namespace {

// A kernel name in lower case, searched for the substrings that spell its
// template, type and functor (math_pipe, elementwise_instructions_per_byte).
struct LowerName {
  explicit LowerName(std::string_view name) : k(name) {
    for (char& c : k) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  bool has(std::string_view n) const { return k.find(n) != std::string::npos; }
  std::string k;
};

// cuBLAS's nvjet kernels spell the operand types after the architecture:
// "nvjet_tst_..." or "nvjet_sm90_tst_..." ("hsh" fp16 in, fp32 compute, fp16
// out; "tst" bf16; "sss" fp32; "qqt..." fp8 e4m3). The first type letter of a
// lower-cased name, '\0' when it is no nvjet kernel.
char nvjet_type(const std::string& k) {
  const std::size_t at = k.find("nvjet_");
  if (at == std::string::npos) return '\0';
  std::size_t i = at + 6;
  if (k.compare(i, 2, "sm") == 0) {
    const std::size_t us = k.find('_', i);
    if (us == std::string::npos) return '\0';
    i = us + 1;
  }
  return i < k.size() ? k[i] : '\0';
}

// FP8 operands, from a lower-cased kernel name: CUTLASS's and cuBLASLt's
// element types ("sm90_xmma_gemm_e4m3e4m3_e4m3f32", "cutlass3x_sm90_tensorop_
// gemm_e4m3_e4m3", cutlass::float_e4m3_t in FlashAttention-3's templates,
// "fp8" in TransformerEngine's and Triton's names, FlashInfer's "MxE4m3") or
// cuBLAS's nvjet type letter q.
bool fp8_operands(const std::string& k) {
  for (const std::string_view n : {"e4m3", "e5m2", "fp8", "float8"})
    if (k.find(n) != std::string::npos) return true;
  return nvjet_type(k) == 'q';
}

// INT8 operands, from a lower-cased kernel name: cuBLAS's and xmma's type
// pairs ("sm80_xmma_gemm_i8i8_i32i32_...", "s8s8"), CUTLASS's integer MMA
// shapes ("cutlass_80_tensorop_s8_i16832gemm_s8_...", Turing's i8816) and
// the cuBLAS heuristics' "int8" and "imma" names.
bool int8_operands(const std::string& k) {
  for (const std::string_view n :
       {"i8i8", "s8s8", "u8u8", "int8", "imma", "i16832gemm", "i8816gemm"})
    if (k.find(n) != std::string::npos) return true;
  return false;
}

}  // namespace

MathPipe math_pipe(KernelClass cls, std::string_view kernel_name) {
  if (cls != KernelClass::gemm && cls != KernelClass::conv && cls != KernelClass::attention)
    return MathPipe::simt;
  const LowerName name(kernel_name);
  auto has = [&](std::string_view n) { return name.has(n); };
  // Complex fp32 / fp64 products (cgemm, zgemm) run on the SIMT pipes too
  // unless TF32 is allowed for them, which PyTorch's default is not.
  if (has("simt") || has("sgemm") || has("dgemm") || has("cgemm") || has("zgemm") ||
      has("f32f32_f32f32") || has("gemv"))
    return MathPipe::simt;
  // Depthwise convolutions: cuDNN's per-channel kernels (conv2d_c1_k1_nhwc,
  // dgrad2d_c1_k1_nhwc, wgrad2d_c1_k1_nhwc, wgrad2d_grouped_direct_kernel) and
  // ATen's own (conv_depthwise2d_*) do FP32 FFMAs on the SIMT pipes: Nsight
  // Compute counts their FFMA FLOPs equal to the nominal ones
  // (validation/h200/ops/, docs/validation.md "Operators in isolation").
  if (has("_c1_k1_") || has("grouped_direct") || has("depthwise")) return MathPipe::simt;
  if (fp8_operands(name.k)) return MathPipe::tensor_fp8;
  if (int8_operands(name.k)) return MathPipe::tensor_int8;
  // CUTLASS names the MMA by its accumulator and shape: "s1688gemm" with no
  // 16-bit input type is fp32 data on the TF32 MMA (m16n8k8); "s16816gemm"
  // and "s1688gemm_f16" are 16-bit inputs with fp32 accumulation.
  if (has("tf32") || (has("s1688gemm") && !has("f16") && !has("bf16") && !has("h1688")))
    return MathPipe::tensor_tf32;
  if (cls == KernelClass::attention && has("_f32_")) return MathPipe::tensor_3xtf32;
  return MathPipe::tensor;
}

bool is_layout_transform_kernel(std::string_view kernel_name) {
  return kernel_name.find("nchwToNhwcKernel") != std::string_view::npos ||
         kernel_name.find("nhwcToNchwKernel") != std::string_view::npos;
}

bool fp16_operands(std::string_view kernel_name) {
  const LowerName name(kernel_name);
  auto has = [&](std::string_view n) { return name.has(n); };
  // bf16 names hold "f16" too ("bf16bf16_bf16f32"); cuDNN's generated SDPA
  // kernels say "wgmma_f16" whatever their data (the same name in the bf16 and
  // fp16 BERT-large captures of validation/h200/heldout3/).
  if (has("bf16") || has("bfloat16") || has("sdpa")) return false;
  if (has("nvjet_")) return nvjet_type(name.k) == 'h';
  // CUTLASS, xmma and the older cuBLAS kernels ("sm80_xmma_gemm_f16f16_f16f32",
  // "cutlass_80_tensorop_f16_s16816gemm_f16", "ampere_fp16_s16816gemm_fp16",
  // "volta_h884gemm"), FlashAttention's template argument (cutlass::half_t),
  // CUTLASS's fmha ("fmha_cutlassF_f16_aligned").
  for (const std::string_view n : {"fp16", "f16f16", "_f16_", "half_t", "__half", "c10::half",
                                   "h884gemm", "h1688gemm", "h16816gemm", "hgemm"})
    if (has(n)) return true;
  return false;
}

double tensor_rate_cost(MathPipe pipe) {
  switch (pipe) {
    case MathPipe::tensor:
      return 1.0;
    case MathPipe::tensor_tf32:
      return 2.0;
    case MathPipe::tensor_3xtf32:
      return 6.0;
    case MathPipe::tensor_fp8:
    case MathPipe::tensor_int8:
      return 0.5;
    case MathPipe::simt:
      return 0.0;
  }
  return 1.0;
}

double elementwise_instructions_per_byte(std::string_view kernel_name) {
  // Warp instructions (Nsight Compute sm__inst_executed) over the trace's
  // annotated DRAM bytes, summed per family. Fitted on the shipped GPT-3-XL
  // step (traces/data/gpt3xl_h200_train_b4_t2048.ncu.csv, its 711 elementwise
  // kernels paired with the trace's second iteration) where the step has the
  // family, else on the calibration microbenchmarks' own Nsight Compute counts
  // (models/calibration/h200/instmix.csv, the rows dvfsim calibrate fits).
  // Held out: the Nsight Compute steps of four class captures
  // (validation/h200/classes/*.ncu_kernels.csv.gz; docs/validation.md,
  // "Instruction estimates of elementwise kernels").
  constexpr double kClassMix = 0.137;  // the step's whole elementwise class
  const LowerName name(kernel_name);
  const std::string& k = name.k;
  auto has = [&](std::string_view n) { return name.has(n); };
  const bool copy = has("copy_kernel");  // direct_copy_kernel_cuda, bfloat16_copy_kernel_cuda, ...
  constexpr std::string_view kVectorised = "vectorized_elementwise_kernel<";
  if (const auto at = k.find(kVectorised); at != std::string::npos) {
    // Vector width V: 16 bytes of the narrowest operand, so V >= 8 for
    // 16-bit (and 8-bit) elements, 4 for float.
    int width = 0;
    for (std::size_t i = at + kVectorised.size();
         i < k.size() && std::isdigit(static_cast<unsigned char>(k[i])) != 0; ++i)
      width = width * 10 + (k[i] - '0');
    const bool narrow = width >= 8;
    // The fp32-to-bf16 cast (bfloat16_copy_kernel_cuda, <8>): 0.0150 over 291
    // kernels of the step.
    if (copy) return 0.0150;
    // Arithmetic, fills, comparisons: float <4> the step's 52 kernels (add,
    // fill), 0.0131; 16-bit <8> none in the step: instmix.csv ew_axpy_bf16,
    // 6.187e7 instructions over the 1.611e9 bytes of three 268M-element bf16
    // tensors, 0.0384 (its float row, ew_axpy_fp32, reads 0.0111).
    constexpr double kNarrowArithmetic = 0.0384, kFloatArithmetic = 0.0131;
    // Clamps and piecewise activations (ReLU through clamp_min, ReLU6 through
    // hardtanh's clamp, hard swish and sigmoid) and the infinity tests
    // compare and select per element on top of the conversions. Nsight
    // Compute per annotated byte, 16-bit <8>: launch_clamp_scalar 0.0781
    // (ResNet-50, validation/h200/classes/; held out: 0.0781 in MobileNetV3
    // and T5-small, validation/h200/heldout/), hardswish 0.0898,
    // hardswish_backward 0.1432, hardsigmoid 0.0820, hardsigmoid_backward
    // 0.0534 (MobileNetV3); float <4>: isneginf 0.0336 (T5-small). The other
    // width takes the same multiple of its arithmetic rate (assumption).
    {
      const double scale = narrow ? 1.0 : kFloatArithmetic / kNarrowArithmetic;
      if (has("hardswish_backward")) return 0.1432 * scale;
      if (has("hardswish")) return 0.0898 * scale;
      if (has("hardsigmoid_backward")) return 0.0534 * scale;
      if (has("hardsigmoid")) return 0.0820 * scale;
      if (has("clamp")) return 0.0781 * scale;
      if (has("isneginf") || has("isposinf"))
        return narrow ? 0.0336 * kNarrowArithmetic / kFloatArithmetic : 0.0336;
    }
    // Transcendental functors evaluate a polynomial or SFU sequence per element.
    for (const std::string_view t :
         {"gelu", "silu", "sigmoid", "tanh", "erf", "softplus", "mish", "sqrt", "exp_kernel",
          "expm1", "log_kernel", "log1p", "log2", "log10"})
      if (has(t))
        // 16-bit: the step's GELU forward and backward (48 kernels), 0.233;
        // float: instmix.csv ew_gelu_fp32, 2.380e8 instructions over the
        // 2.147e9 bytes of 268M floats in and out, 0.111.
        return narrow ? 0.233 : 0.111;
    return narrow ? kNarrowArithmetic : kFloatArithmetic;
  }
  // Unrolled (no vector loads: a dtype-converting or misaligned operand): the
  // step's 243 copies 0.2695, its 48 others (float add) 0.2313.
  if (has("unrolled_elementwise_kernel<")) return copy ? 0.2695 : 0.2313;
  // The generic strided kernel (broadcast or non-contiguous operands): an
  // offset calculation per element, so a fixed cost per element. The step has
  // one, a float add, 0.193; 16-bit operands take twice the elements per
  // byte: assumption, 0.386 (held out: 0.37-0.61 in the prefill and BERT).
  if (const auto at = k.find("elementwise_kernel<");
      at != std::string::npos &&
      (at == 0 || (std::isalpha(static_cast<unsigned char>(k[at - 1])) == 0 && k[at - 1] != '_')))
    return has("bfloat16") || has("half") ? 0.386 : 0.193;
  // index_select and embedding lookups (vectorized_gather_kernel: 16-byte
  // loads and stores of whole rows): the step's one paired kernel, 1.933e6 instructions over
  // its 3.355e7 annotated bytes, 0.0576; held out, the same 0.0576 in the
  // Nsight Compute steps of BERT, the small encoder and the 32k prefill
  // (validation/h200/classes/*.ncu_kernels.csv.gz), where the class mix gave
  // 2.4x their count.
  if (has("vectorized_gather_kernel")) return 0.0576;
  // torch.cat of aligned operands: the step's 24 kernels, 0.0473.
  if (has("catarraybatchedcopy_vectorized")) return 0.0473;
  // torch.cat otherwise (an operand misaligned or not contiguous): an offset
  // per element, like the generic kernel. Not in the step: the operator
  // capture validation/h200/ops/op_cat (one bf16 kernel: 6.272e7 instructions
  // over its 9.313e7 bytes read and written), 0.674; held out in
  // docs/validation.md, "Instruction estimates of elementwise kernels".
  if (has("catarraybatchedcopy")) return 0.674;
  return kClassMix;
}

bool is_batch_norm_kernel(std::string_view kernel_name) {
  const LowerName name(kernel_name);
  return name.has("batch_norm") || name.has("cudnn::bn_");
}

double norm_instructions_per_byte(std::string_view kernel_name) {
  // Warp instructions (Nsight Compute sm__inst_executed) over the annotated
  // DRAM bytes, summed per family, for the two batch-norm passes that issue
  // far from the class's 0.139 (the GPT-3-XL step's norm kernels): the
  // statistics pass (a Welford update per element) and the backward
  // reduction. Fitted on one ResNet-50 training step
  // (validation/h200/classes/resnet50_train_b128.ncu_kernels.csv.gz, 53
  // kernels each); held out: MobileNetV3 (two captures) and EfficientNet-B0
  // (docs/validation.md, "Batch norm and depthwise convolutions").
  const LowerName name(kernel_name);
  if (name.has("batch_norm_collect_statistics")) return 0.614;
  if (name.has("batch_norm_backward_reduce")) return 0.167;
  return 0.139;
}

double estimated_instructions(KernelClass cls, double flops, double dram_bytes, MathPipe pipe,
                              std::string_view kernel_name) {
  // FP32 SIMT: one FFMA warp instruction does 32 lanes x 2 FLOPs, and a tiled
  // SIMT GEMM issues 0.13 other instructions per FFMA: an 8x16 thread tile
  // reads its 24 operands with 6 LDS.128 per 128 FFMAs (0.047), a 256x128x8
  // CTA tile stages 3 LDG.128 + 3 STS.128 per thread per 1,024 FFMAs (0.006),
  // the rest is address, loop and barrier work. Measured: Nsight Compute on
  // cuBLAS's sm80_xmma_gemm_f32f32 (256x128x8) at 4096^3 on the H200,
  // 2.428e9 warp instructions for 2.148e9 FFMAs, 1.131 per FFMA
  // (models/calibration/h200/ncu/occupancy.csv.gz); docs/design.md "Math pipes".
  if (pipe == MathPipe::simt &&
      (cls == KernelClass::gemm || cls == KernelClass::conv || cls == KernelClass::attention)) {
    // cuDNN's SIMT convolutions ({implicit,precomputed,explicit}_convolve_sgemm,
    // implicit_convolveNd_sgemm: the few-channel layers cuDNN keeps off the
    // tensor cores) gather their im2col operands per element: Nsight Compute
    // counts 1.337e9 warp instructions for the 2.266e10 FLOPs of R3D-18's
    // first 3-D convolution (validation/h200/heldout5/
    // ncu_r3d18_train_b8.subset.csv.gz), 0.0590 per FLOP, 3.3x a tiled
    // GEMM's. Held out (docs/validation.md, "cuDNN's layout transforms and
    // SIMT convolutions"): 0.0571-0.0602 on MC3-18, the 2-D U-Net and
    // wav2vec 2.0's implicit kernels, 0.175 on a 3-D U-Net's one-channel
    // first layer; wav2vec 2.0's precomputed_convolve_sgemm (0.0758) was
    // added to the names after it was measured.
    if (cls == KernelClass::conv) {
      const LowerName name(kernel_name);
      if (name.has("convolve") && name.has("sgemm")) return 0.0590 * flops;
    }
    return 1.131 * flops / 64.0;
  }
  // Tensor pipes: the 16-bit intensity times the MMAs a 16-bit MMA's FLOPs take.
  const double mma = pipe == MathPipe::simt ? 1.0 : tensor_rate_cost(pipe);
  // Warp instructions per FLOP (tensor-core classes) or per DRAM byte (the
  // rest), class totals of Nsight Compute's sm__inst_executed over one
  // GPT-3-XL training step on the H200 against the trace's FLOPs and bytes
  // (traces/data/gpt3xl_h200_train_b4_t2048.ncu.csv, 1,437 of 1,438 kernels).
  switch (cls) {
    case KernelClass::gemm:
    // Convolutions: an assumption, that implicit-GEMM convolutions issue like
    // GEMMs. Nsight Compute counts cuDNN's tensor-core passes at 2.3-44x this
    // (the narrow layers highest); priced with the measured counts, the
    // networks of wide layers read high and as many captures leave their
    // bands as enter them, so the assumption stays (docs/validation.md,
    // "Instructions of the tensor-core convolutions").
    case KernelClass::conv:
      return 1.30e-4 * mma * flops;
    case KernelClass::attention:
      return 6.60e-4 * mma * flops;
    case KernelClass::elementwise:
      return elementwise_instructions_per_byte(kernel_name) * dram_bytes;
    case KernelClass::communication:  // assumption: moves data like elementwise kernels
      return 0.137 * dram_bytes;
    case KernelClass::norm:
      return norm_instructions_per_byte(kernel_name) * dram_bytes;
    case KernelClass::reduction:
      return 0.116 * dram_bytes;
    case KernelClass::optimizer:
      return 0.0609 * dram_bytes;
    case KernelClass::other:
      return 0.771 * dram_bytes;
    case KernelClass::memcpy:
    case KernelClass::memset:
      return 0.0;  // copy engines, no SM instructions (no rows in ncu)
  }
  return 0.0;
}

std::optional<KernelClass> parse_kernel_class(std::string_view s) {
  for (int i = 0; i < kKernelClassCount; ++i)
    if (kClassNames[i] == s) return static_cast<KernelClass>(i);
  return std::nullopt;
}

std::optional<Phase> parse_phase(std::string_view s) {
  for (int i = 0; i < kPhaseCount; ++i)
    if (kPhaseNames[i] == s) return static_cast<Phase>(i);
  return std::nullopt;
}

std::uint32_t Workload::intern(std::string_view s) {
  auto it = name_index.find(std::string(s));
  if (it != name_index.end()) return it->second;
  const auto id = static_cast<std::uint32_t>(names.size());
  names.emplace_back(s);
  name_index.emplace(names.back(), id);
  return id;
}

void Workload::validate() const {
  auto fail = [&](const std::string& what) {
    throw InputError(fmt::format("{}: invalid workload: {}", source_path, what));
  };
  if (kernels.empty()) fail("no kernels");
  // Time stamps within kMaxTraceSpanNs of the median GPU start, durations at
  // most that long (docs/trace-format.md, "Time stamps"): time differences
  // cannot overflow and one stray stamp cannot stretch the replay over days.
  std::vector<std::int64_t> starts(kernels.size());
  for (std::size_t i = 0; i < kernels.size(); ++i) starts[i] = kernels[i].traced_start_ns;
  const auto mid = starts.begin() + static_cast<std::ptrdiff_t>(starts.size() / 2);
  std::nth_element(starts.begin(), mid, starts.end());
  const std::int64_t median = *mid;
  auto near = [&](std::int64_t t) {  // |t - median| <= span, without overflow
    const auto ut = static_cast<std::uint64_t>(t), um = static_cast<std::uint64_t>(median);
    return (t > median ? ut - um : um - ut) <= static_cast<std::uint64_t>(kMaxTraceSpanNs);
  };
  // "<item> <i>: <stamp> T ns ...", formatted only when it fails.
  auto check_stamp = [&](std::int64_t t, std::string_view item, std::size_t i,
                         std::string_view stamp) {
    if (!near(t))
      fail(fmt::format("{} {}: {} {} ns lies more than 1 h from the median GPU start {} ns", item,
                       i, stamp, t, median));
  };
  for (std::size_t i = 0; i < kernels.size(); ++i) {
    const Kernel& k = kernels[i];
    check_stamp(k.host_launch_ns, "kernel", i, "host launch");
    check_stamp(k.traced_start_ns, "kernel", i, "GPU start");
    if (k.work.duration_ns > kMaxTraceSpanNs) fail(fmt::format("kernel {}: longer than 1 h", i));
    if (!std::isfinite(k.work.flops) || !std::isfinite(k.work.dram_bytes) ||
        !std::isfinite(k.work.instructions) || k.work.instructions < 0 ||
        !std::isfinite(k.work.l2_excess_bytes) || k.work.l2_excess_bytes < 0)
      fail(fmt::format("kernel {}: FLOPs, bytes or instructions not a finite number >= 0", i));
    if (k.work.zeroed_operands > 2)
      fail(fmt::format("kernel {}: {} zeroed operands (a matrix product has two)", i,
                       k.work.zeroed_operands));
  }
  for (std::size_t i = 0; i < syncs.size(); ++i) {
    check_stamp(syncs[i].host_begin_ns, "sync", i, "host begin");
    check_stamp(syncs[i].traced_end_ns, "sync", i, "end");
  }
  if (capture.core_mhz < 0 || capture.core_mhz > 100000 || capture.memory_mhz < 0 ||
      capture.memory_mhz > 100000)
    fail(fmt::format("capture clocks {} / {} MHz outside 0..100000", capture.core_mhz,
                     capture.memory_mhz));
  for (std::size_t i = 0; i < kernels.size(); ++i) {
    const Kernel& k = kernels[i];
    if (k.name_id >= names.size() || k.op_id >= names.size())
      fail(fmt::format("kernel {}: name index out of range", i));
    if (i > 0 && k.host_launch_ns < kernels[i - 1].host_launch_ns)
      fail(fmt::format("kernel {}: host launch time goes backwards", i));
    if (k.work.duration_ns < 0) fail(fmt::format("kernel {}: negative duration", i));
    if (k.work.flops < 0 || k.work.dram_bytes < 0)
      fail(fmt::format("kernel {}: negative FLOPs or bytes", i));
    if (k.iteration < 0 || k.iteration >= iterations)
      fail(fmt::format("kernel {}: iteration {} outside 0..{}", i, k.iteration, iterations - 1));
  }
  if (iteration_begin.size() != static_cast<std::size_t>(iterations) + 1 ||
      iteration_begin.front() != 0 || iteration_begin.back() != kernels.size())
    fail("iteration table does not cover the kernels");
  for (std::size_t i = 0; i + 1 < iteration_begin.size(); ++i)
    if (iteration_begin[i] > iteration_begin[i + 1]) fail("iteration table not ascending");
  for (std::size_t i = 0; i < syncs.size(); ++i) {
    if (syncs[i].waits_until_kernel > kernels.size())
      fail(fmt::format("sync {}: kernel index out of range", i));
    if (i > 0 && syncs[i].host_begin_ns < syncs[i - 1].host_begin_ns)
      fail(fmt::format("sync {}: host time goes backwards", i));
  }
  for (const EventWait& w : event_waits)
    if (w.kernel >= kernels.size() || w.after >= w.kernel)
      fail(fmt::format("event wait {}->{}: must point to an earlier kernel", w.after, w.kernel));
}

}  // namespace dvfsim
