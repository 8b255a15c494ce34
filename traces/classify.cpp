#include "traces/classify.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <optional>
#include <string>

namespace dvfsim {
namespace {

bool contains(std::string_view s, std::string_view needle) {
  return s.find(needle) != std::string_view::npos;
}

bool contains_any(std::string_view s, std::initializer_list<std::string_view> needles) {
  return std::any_of(needles.begin(), needles.end(),
                     [&](std::string_view n) { return contains(s, n); });
}

bool is_one_of(std::string_view s, std::initializer_list<std::string_view> names) {
  return std::find(names.begin(), names.end(), s) != names.end();
}

// Lower-cased copy of a kernel name (names are short; this is cheap enough).
std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view strip_inplace(std::string_view op) {
  if (op.size() > 1 && op.back() == '_') op.remove_suffix(1);
  if (op.size() > 1 && op.front() == '_') op.remove_prefix(1);
  return op;
}

std::optional<KernelClass> class_from_op(std::string_view op) {
  const std::string_view o = strip_inplace(bare_op_name(op));
  if (o.empty()) return std::nullopt;
  if (is_one_of(o, {"mm", "addmm", "bmm", "baddbmm", "matmul", "linear", "scaled_mm", "int_mm",
                    "addmv", "mv", "addbmm", "dot"}))
    return KernelClass::gemm;
  if (contains_any(o, {"attention", "sdpa"})) return KernelClass::attention;
  if (contains_any(o, {"convolution", "conv1d", "conv2d", "conv3d", "conv_transpose"}))
    return KernelClass::conv;
  if (contains_any(o, {"all_reduce", "allreduce", "all_gather", "allgather", "reduce_scatter",
                       "all_to_all", "alltoall", "record_param_comms"}))
    return KernelClass::communication;
  if (contains_any(o, {"layer_norm", "rms_norm", "group_norm", "batch_norm", "instance_norm"}))
    return KernelClass::norm;
  // Scatters that accumulate (index_add_, scatter_add_, scatter_reduce_,
  // index_reduce_): atomics into the rows an index picks, no family dvfsim
  // models; their kernels name ATen's scatter functor ("ReduceAdd"), which
  // the kernel-name rule below would take for a reduction.
  if (is_one_of(o, {"index_add", "scatter_add", "scatter_reduce", "index_reduce"}))
    return KernelClass::other;
  if (contains_any(o, {"softmax", "nll_loss", "cross_entropy"}) ||
      is_one_of(o, {"sum", "mean", "amax", "amin", "max", "min", "norm", "var", "std", "var_mean",
                    "std_mean", "prod", "all", "any", "argmax", "argmin", "cumsum", "logsumexp",
                    "linalg_vector_norm"}))
    return KernelClass::reduction;
  if (contains_any(o, {"copy", "fill", "zero", "gelu", "silu", "relu", "sigmoid", "tanh", "dropout",
                       "where", "masked_fill", "threshold"}) ||
      is_one_of(o, {"add",     "sub",     "mul",   "div",         "neg",         "exp",
                    "log",     "pow",     "sqrt",  "rsqrt",       "to",          "to_copy",
                    "clone",   "cat",     "stack", "clamp",       "abs",         "reciprocal",
                    "addcmul", "addcdiv", "lerp",  "foreach_add", "foreach_mul", "arange"}))
    return KernelClass::elementwise;
  return std::nullopt;
}

}  // namespace

std::string_view bare_op_name(std::string_view op) {
  const std::size_t colons = op.rfind("::");
  return colons == std::string_view::npos ? op : op.substr(colons + 2);
}

KernelClass classify_kernel(ActivityKind kind, std::string_view op, std::string_view kernel_name,
                            Phase phase) {
  if (kind == ActivityKind::memset) return KernelClass::memset;
  if (kind == ActivityKind::memcpy) return KernelClass::memcpy;
  const std::string k = lower(kernel_name);
  const std::string_view o = bare_op_name(op);
  if (phase == Phase::optimizer &&
      (contains_any(o, {"adam", "sgd", "lamb", "lion", "adagrad", "rmsprop", "foreach_"}) ||
       contains(k, "multi_tensor_apply")))
    return KernelClass::optimizer;
  // Collectives: NCCL's kernels and the custom all-reduce kernels of
  // inference engines.
  if (contains_any(k, {"nccldevkernel", "ncclkernel", "nccl_", "cross_device_reduce",
                       "multimem_all_reduce", "one_shot_all_reduce", "two_shot_all_reduce",
                       "custom_all_reduce", "allreduce_kernel", "all_reduce_kernel"}))
    return KernelClass::communication;
  // cuDNN's layout transforms run under their convolution but copy.
  if (is_layout_transform_kernel(kernel_name)) return KernelClass::elementwise;
  // Triton / Inductor kernels name their template: pointwise, reduction,
  // persistent reduction, GEMM template.
  if (k.rfind("triton_poi_", 0) == 0) return KernelClass::elementwise;
  if (k.rfind("triton_red_", 0) == 0 || k.rfind("triton_per_", 0) == 0)
    return KernelClass::reduction;
  if (k.rfind("triton_tem_", 0) == 0 || k.rfind("triton_mm", 0) == 0 ||
      k.rfind("triton_bmm", 0) == 0 || contains(k, "_matmul_kernel") ||
      contains(k, "matmul_kernel"))
    return KernelClass::gemm;
  // Fused attention (FlashAttention, cuDNN SDPA, xFormers' and CUTLASS's
  // fmha): before the convolution names, since cuDNN's generated SDPA kernels
  // spell their pass like a convolution's
  // ("cudnn_generated_fort_native_sdpa_sm90_flash_fprop_..."), and before the
  // GEMM names, since CUTLASS's fmha kernels carry "cutlass" in their names
  // ("fmha_cutlassF_bf16_aligned_64x128_rf_sm80").
  if (contains_any(k, {"flash", "fmha", "sdpa", "attention"})) return KernelClass::attention;
  // Convolutions (cuDNN, CUTLASS, xmma): fprop / dgrad / wgrad, implicit
  // GEMM, Winograd, FFT; checked before GEMM names because implicit-GEMM
  // convolutions carry "gemm" in their names.
  if (contains_any(k, {"fprop", "dgrad", "wgrad", "conv2d", "conv3d", "convolve", "winograd",
                       "implicit_gemm", "implicit_precomp", "conv_kernel", "fft2d_r2c", "fft2d_c2r",
                       "scudnn", "hcudnn", "cudnn::detail::convolve"}))
    return KernelClass::conv;
  // cuDNN batch norm, pooling.
  if (contains_any(k, {"cudnn::bn_", "bn_fw_", "bn_bw_", "batch_norm"})) return KernelClass::norm;
  // Grouped / batched GEMMs of MoE and inference libraries ("bmm_Bfloat16_...").
  if (k.rfind("bmm_", 0) == 0 || contains_any(k, {"grouped_gemm", "moe_gemm", "group_gemm"}))
    return KernelClass::gemm;
  if (contains_any(k, {"gemm", "cutlass", "nvjet", "xmma", "cublas", "s884", "h884", "s1688",
                       "h1688", "s16816", "h16816"}))
    return KernelClass::gemm;
  if (const auto c = class_from_op(op)) return *c;
  // Normalisation kernels without their operator (a CUDA graph, a trace
  // without operators): ATen's layer norm (vectorized_layer_norm_kernel,
  // LayerNormForwardCUDAKernel, GammaBetaBackwardCUDAKernel, ...), group
  // norm's RowwiseMoments, RMSNorm kernels.
  if (contains_any(k, {"layer_norm", "layernorm", "gammabeta", "rms_norm", "rmsnorm", "group_norm",
                       "groupnorm", "rowwisemoments", "instance_norm"}))
    return KernelClass::norm;
  if (contains_any(k, {"reduce", "softmax", "max_pool", "avg_pool", "adaptive_avg_pool"}))
    return KernelClass::reduction;
  if (contains_any(k, {"elementwise", "vectorized", "gelu", "copy", "fill", "rotary_embedding"}))
    return KernelClass::elementwise;
  return KernelClass::other;
}

}  // namespace dvfsim
