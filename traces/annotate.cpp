#include "traces/annotate.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <functional>
#include <numeric>
#include <span>
#include <unordered_map>
#include <utility>

#include "models/capture_device.h"
#include "models/roofline_overlap.h"
#include "sim/device.h"
#include "sim/error.h"
#include "traces/classify.h"
#include "traces/instructions.h"

namespace dvfsim {
namespace {

using Shape = std::vector<std::int64_t>;

bool contains(std::string_view s, std::string_view needle) {
  return s.find(needle) != std::string_view::npos;
}

double numel(const Shape& s) {
  double n = 1;
  for (const std::int64_t d : s) n *= static_cast<double>(d);
  return n;
}

// Thread blocks of a launch.
double launch_blocks(const LaunchConfig& l) {
  return static_cast<double>(l.grid[0]) * l.grid[1] * l.grid[2];
}

// Accessors over an OpCall that tolerate missing inputs.
class Args {
 public:
  Args(const OpCall& op, int list_bytes) : op_(op), list_bytes_(list_bytes) {}

  std::size_t size() const { return op_.inputs.size(); }
  // The single tensor shape of input i; nullptr when input i is not one tensor.
  const Shape* tensor(std::size_t i) const {
    if (i >= op_.inputs.size() || !dtype_bytes(op_.inputs[i].type)) return nullptr;
    return op_.inputs[i].shapes.size() == 1 ? &op_.inputs[i].shapes[0] : nullptr;
  }
  int elt(std::size_t i) const {
    if (i >= op_.inputs.size()) return 0;
    if (const auto b = dtype_bytes(op_.inputs[i].type)) return *b;
    return op_.inputs[i].shapes.empty() ? 0 : list_bytes_;
  }
  double numel_of(std::size_t i) const {
    if (i >= op_.inputs.size() || elt(i) == 0) return 0;
    double n = 0;
    for (const Shape& s : op_.inputs[i].shapes) n += numel(s);
    return n;
  }
  double bytes(std::size_t i) const { return numel_of(i) * elt(i); }
  // Every shape of input i (a TensorList's elements); empty when absent.
  std::span<const Shape> shapes(std::size_t i) const {
    if (i >= op_.inputs.size()) return {};
    return op_.inputs[i].shapes;
  }
  // Element strides of input i, parallel to shapes(i); empty when not recorded.
  std::span<const Shape> strides(std::size_t i) const {
    if (i >= op_.inputs.size()) return {};
    return op_.inputs[i].strides;
  }
  std::string_view concrete(std::size_t i) const {
    return i < op_.inputs.size() ? std::string_view(op_.inputs[i].concrete) : std::string_view();
  }
  std::string_view type(std::size_t i) const {
    return i < op_.inputs.size() ? std::string_view(op_.inputs[i].type) : std::string_view();
  }
  // Sum of bytes / max numel / max element size over all tensor inputs.
  double all_bytes() const {
    double b = 0;
    for (std::size_t i = 0; i < size(); ++i) b += bytes(i);
    return b;
  }
  double max_numel() const {
    double n = 0;
    for (std::size_t i = 0; i < size(); ++i)
      if (tensor(i)) n = std::max(n, numel(*tensor(i)));
    return n;
  }
  // The result's element size: the widest input that has a dimension. A
  // 0-dim tensor (a Python number PyTorch wraps, recorded as "double" with
  // dims []) does not widen it (`x * 0.5` on bf16 stays bf16); only when
  // every input is 0-dim does it count.
  int max_elt() const {
    int dimensioned = 0, zero_dim = 0;
    for (std::size_t i = 0; i < size(); ++i) {
      const Shape* t = tensor(i);
      if (!t) continue;
      int& widest = t->empty() ? zero_dim : dimensioned;
      widest = std::max(widest, elt(i));
    }
    return dimensioned > 0 ? dimensioned : zero_dim;
  }

 private:
  const OpCall& op_;
  int list_bytes_;
};

std::optional<double> parse_double(std::string_view s) {
  double v = 0;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

// "[0, 1]" -> {0, 1}; nullopt when not a list of integers.
std::optional<std::vector<std::int64_t>> parse_int_list(std::string_view s) {
  if (s.size() < 2 || s.front() != '[' || s.back() != ']') return std::nullopt;
  s = s.substr(1, s.size() - 2);
  std::vector<std::int64_t> out;
  while (!s.empty()) {
    while (!s.empty() && (s.front() == ' ' || s.front() == ',')) s.remove_prefix(1);
    if (s.empty()) break;
    std::int64_t v = 0;
    const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc()) return std::nullopt;
    out.push_back(v);
    s.remove_prefix(static_cast<std::size_t>(p - s.data()));
  }
  return out;
}

// "[True, False]" -> {true, false}; nullopt when not a list of Python
// booleans (an output mask as the profiler records it).
std::optional<std::vector<bool>> parse_bool_list(std::string_view s) {
  if (s.size() < 2 || s.front() != '[' || s.back() != ']') return std::nullopt;
  s = s.substr(1, s.size() - 2);
  std::vector<bool> out;
  while (!s.empty()) {
    while (!s.empty() && (s.front() == ' ' || s.front() == ',')) s.remove_prefix(1);
    if (s.empty()) break;
    if (s.starts_with("True")) {
      out.push_back(true);
      s.remove_prefix(4);
    } else if (s.starts_with("False")) {
      out.push_back(false);
      s.remove_prefix(5);
    } else {
      return std::nullopt;
    }
  }
  return out;
}

// ---- matmul family -------------------------------------------------------

std::optional<OpWork> gemm_work(const Args& a, std::size_t first, std::size_t second, bool linear,
                                double extra_bytes) {
  const Shape* x = a.tensor(first);
  const Shape* w = a.tensor(second);
  if (!x || !w || x->empty() || w->empty()) return std::nullopt;
  const double k = static_cast<double>(x->back());
  double m = 1, n = 1, batch = 1;
  if (linear) {  // x [..., K] . w[N, K]^T
    m = numel(*x) / std::max(k, 1.0);
    n = static_cast<double>(w->front());
  } else {  // x [..., M, K] . w [..., K, N]
    m = x->size() >= 2 ? static_cast<double>((*x)[x->size() - 2]) : 1.0;
    n = w->size() >= 2 ? static_cast<double>(w->back()) : 1.0;
    const double bx = numel(*x) / std::max(m * k, 1.0);
    const double bw = numel(*w) / std::max(k * n, 1.0);
    batch = std::max(bx, bw);
  }
  // The result: 16-bit at least (FP8 products come out in bf16), int32 from
  // int8 operands (torch._int_mm).
  const bool int8 = a.type(first) == "signed char";
  const int out_elt = int8 ? 4 : std::max(a.elt(first), 2);
  // A complex multiply-add is four real multiplies and four real additions.
  const double flops_per_mac = contains(a.type(first), "complex") ? 8.0 : 2.0;
  OpWork work;
  work.flops = flops_per_mac * batch * m * n * k;
  work.dram_bytes = a.bytes(first) + a.bytes(second) + batch * m * n * out_elt + extra_bytes;
  return work;
}

// ---- attention -----------------------------------------------------------

struct AttentionOp {
  std::string_view name;
  bool backward;
  bool bthd;       // inputs laid out [B, T, H, D] instead of [B, H, T, D]
  int causal_arg;  // index of is_causal (or custom_mask_type) in Concrete Inputs
  bool mask_type;  // causal_arg is an integer mask type (0 = none)
};

constexpr std::array<AttentionOp, 14> kAttentionOps = {{
    {"scaled_dot_product_attention", false, false, 5, false},
    {"_scaled_dot_product_flash_attention", false, false, 4, false},
    {"_scaled_dot_product_efficient_attention", false, false, 6, false},
    {"_scaled_dot_product_cudnn_attention", false, false, 6, false},
    {"_cudnn_attention_forward", false, false, 10, false},
    {"_flash_attention_forward", false, true, 8, false},
    {"_efficient_attention_forward", false, true, 9, true},
    {"_scaled_dot_product_flash_attention_backward", true, false, 11, false},
    {"_scaled_dot_product_efficient_attention_backward", true, false, 11, false},
    {"_scaled_dot_product_cudnn_attention_backward", true, false, 14, false},
    {"_cudnn_attention_backward", true, false, 14, false},
    {"_flash_attention_backward", true, true, 11, false},
    {"_efficient_attention_backward", true, true, 14, true},
    {"_scaled_dot_product_fused_attention_overrideable", false, false, 6, false},
}};

std::optional<OpWork> attention_work(const Args& a, std::string_view name) {
  AttentionOp spec{name, contains(name, "backward"), false, -1, false};
  for (const AttentionOp& op : kAttentionOps)
    if (op.name == name) spec = op;
  const std::size_t q_arg = spec.backward ? 1 : 0;
  const Shape* q = a.tensor(q_arg);
  const Shape* k = a.tensor(q_arg + 1);
  if (!q || !k || q->size() != 4 || k->size() != 4) return std::nullopt;
  const double t_k = static_cast<double>(spec.bthd ? (*k)[1] : (*k)[2]);
  bool causal = false;  // unknown flag: full (non-causal) attention
  if (spec.causal_arg >= 0) {
    const std::string_view flag = a.concrete(static_cast<std::size_t>(spec.causal_arg));
    if (spec.mask_type)
      causal = !flag.empty() && flag != "0";
    else
      causal = flag == "True";
  }
  const double forward_flops = 4.0 * numel(*q) * t_k * (causal ? 0.5 : 1.0);
  const double q_bytes = a.bytes(q_arg), k_bytes = a.bytes(q_arg + 1), v_bytes = a.bytes(q_arg + 2);
  OpWork work;
  if (spec.backward) {
    work.flops = 2.5 * forward_flops;
    // Read dO, q, k, v, out, logsumexp; write dq, dk, dv.
    work.dram_bytes = 3 * q_bytes + 2 * k_bytes + 2 * v_bytes + a.bytes(5);
  } else {
    work.flops = forward_flops;
    work.dram_bytes = 2 * q_bytes + k_bytes + v_bytes;  // read q, k, v; write out
  }
  return work;
}

// ---- norms ---------------------------------------------------------------

// batch_norm(input, weight, bias, running_mean, running_var, training, ...);
// native_batch_norm_backward(grad_out, input, weight, running_mean,
// running_var, save_mean, save_invstd, train, eps, output_mask).
bool training_batch_norm(const Args& a, std::string_view op) {
  if (!contains(op, "batch_norm")) return false;
  return a.concrete(contains(op, "backward") ? 7 : 5) == "True";
}

// Warp instructions of ATen's layer, RMS and group norm (their forward and
// backward operators; batch norm keeps the per-byte rates of its kernels,
// traces/instructions.cpp). Nsight Compute on the H100 (the SASS is the
// H200's): validation/h100/norms/ and norms/small/, one repetition of each
// operator, docs/validation.md "Row-wise norms". A row-wise norm block
// reduces each row, a cost per row on top of the one per element, which the
// per-byte class rate (0.139, fitted on the GPT-3-XL step's 2,048-wide rows)
// cannot carry: layer norm's fp32 forward issues 15.5 warp instructions per
// element at 64 features, 1.05 at 4,096. Per element, F the features of a
// row (least squares on relative error over the operator sweeps):
//   layer norm forward, fp32 (autocast keeps it there): 0.418 + 320.0 F^-0.748
//     (F = 64 ... 4,096, six widths, within 6.1 %); 16-bit: 0.838 +
//     401.3 F^-0.838 (F = 96 ... 8,192, seven widths, within 2.7 %);
//   layer norm backward with weight gradients, fp32: 1.141 + 544/F; 16-bit:
//     1.509 + 532/F (the same widths, within 2.6 %); of it, the weight
//     gradients' kernel 0.511 (fp32) and 0.603 (16-bit) at every width, which
//     a backward without them skips;
//   RMS norm: layer norm's 16-bit rates times 0.41 forward and 0.82 backward
//     (bf16 at F = 2,048 and 4,096: 0.410 / 0.406 and 0.824 / 0.823);
//   group norm, bf16: forward 3.09 (row moments 1.16, the normalising pass
//     1.93), backward 4.09 (one shape, 16 x 128 x 64 x 64 in 32 groups).
// Precisions not measured take the nearest measured rates (assumption: fp32
// RMS norm the 16-bit rates, fp32 group norm the bf16 ones). Held out: layer
// norm at 1,024 and 262,144 bf16 features on another board, the layer norms
// of BERT, the small encoder and GPT-3 XL (H200) and of ConvNeXt-T and
// Swin-T (in the step), group norm at another shape. -1 when the shapes are
// not recorded.
double norm_instructions(const Args& a, std::string_view op, bool backward, bool weight_grads) {
  const Shape* x = a.tensor(backward ? 1 : 0);
  if (!x || x->empty()) return -1.0;
  const double elements = numel(*x);
  const bool wide = a.elt(backward ? 1 : 0) >= 4;
  if (contains(op, "group_norm")) return elements * (backward ? 4.09 : 3.09);
  // The normalized shape: the first integer list among the arguments
  // ("[2048]"), else the innermost dimension. A list that does not parse, or
  // holds a dimension no tensor is that wide in (over 2^40), is no shape: the
  // estimate stays.
  double features = static_cast<double>(x->back());
  for (std::size_t i = 1; i < a.size(); ++i) {
    const std::string_view c = a.concrete(i);
    if (c.size() < 3 || c.front() != '[' || c[1] < '0' || c[1] > '9') continue;
    const auto dims = parse_int_list(c);
    if (!dims) return -1.0;
    double f = 1;
    for (const std::int64_t d : *dims) {
      if (d > (std::int64_t{1} << 40)) return -1.0;
      f *= static_cast<double>(d);
    }
    if (f >= 1) features = f;
    break;
  }
  if (!(features >= 1)) return -1.0;
  const bool rms = contains(op, "rms_norm");
  const bool fp32 = wide && !rms;
  double per_element = 0;
  if (!backward) {
    per_element = fp32 ? 0.418 + 320.0 * std::pow(features, -0.748)
                       : 0.838 + 401.3 * std::pow(features, -0.838);
    if (rms) per_element *= 0.41;
  } else {
    per_element = fp32 ? 1.141 + 544.0 / features : 1.509 + 532.0 / features;
    if (!weight_grads) per_element -= fp32 ? 0.511 : 0.603;
    if (rms) per_element *= 0.82;
  }
  return elements * per_element;
}

// Passes over the activation checked with Nsight Compute (docs/validation.md,
// "Work annotation"; "Row-wise norms"): a training batch norm reads its
// input twice (statistics, then normalise) and writes the output once; the
// other forward norms read once and write once, but group norm runs its
// statistics as a pass of their own (a row-moments kernel, then the
// normalising elementwise kernel), like a training batch norm. Every
// backward that computes weight gradients runs a reduction (reads dy and x)
// and an elementwise pass (reads dy and x, writes dx): batch norm's reduce and
// elemt kernels, layer and RMS norm's gamma-beta and input-gradient kernels,
// group norm's internal-gradient and input-gradient kernels. Nsight Compute on
// the H100 (validation/h100/norms/): layer norm's backward 10.0 bytes per
// bf16 element up to 2,048 features, its two kernels 6.0 and 4.0.
std::optional<OpWork> norm_work(const Args& a, std::string_view op, bool backward) {
  const bool group = contains(op, "group_norm");
  const bool batch = contains(op, "batch_norm");
  if (!backward) {
    const Shape* x = a.tensor(0);
    if (!x) return std::nullopt;
    double params = 0;
    for (std::size_t i = 1; i < a.size(); ++i) params += a.bytes(i);
    const bool two_pass = group || training_batch_norm(a, op);
    OpWork work{8.0 * numel(*x), (two_pass ? 3.0 : 2.0) * a.bytes(0) + params};
    if (!batch) work.instructions = norm_instructions(a, op, false, false);
    return work;
  }
  const Shape* dy = a.tensor(0);
  const Shape* x = a.tensor(1);
  if (!dy || !x) return std::nullopt;
  double rest = 0;  // mean, rstd, weight, bias read; weight / bias gradients written
  for (std::size_t i = 2; i < a.size(); ++i) rest += a.bytes(i);
  // The output mask, where recorded ("[True, True, True]": dx, dweight,
  // dbias): without weight gradients layer and RMS norm skip the reduction.
  bool weight_grads = true;
  for (std::size_t i = a.size(); i-- > 2;)
    if (const auto mask = parse_bool_list(a.concrete(i)); mask && !mask->empty()) {
      weight_grads = std::find(mask->begin() + 1, mask->end(), true) != mask->end();
      break;
    }
  const bool two_pass = batch ? training_batch_norm(a, op) : (group || weight_grads);
  OpWork work = two_pass
                    ? OpWork{12.0 * numel(*x), 2.0 * a.bytes(0) + 3.0 * a.bytes(1) + 1.5 * rest}
                    : OpWork{12.0 * numel(*x), a.bytes(0) + 2.0 * a.bytes(1) + 1.5 * rest};
  if (!batch) work.instructions = norm_instructions(a, op, true, weight_grads);
  return work;
}

// ---- elementwise ---------------------------------------------------------

double flops_per_element(std::string_view op) {
  struct Entry {
    std::string_view name;
    double flops;
  };
  static constexpr std::array<Entry, 22> kTable = {{
      {"copy", 0},    {"fill", 0},          {"zero", 0},    {"cat", 0},
      {"stack", 0},   {"clone", 0},         {"to_copy", 0}, {"gelu_backward", 12},
      {"gelu", 8},    {"silu_backward", 6}, {"silu", 4},    {"sigmoid", 4},
      {"tanh", 4},    {"addcmul", 2},       {"addcdiv", 2}, {"lerp", 2},
      {"dropout", 2}, {"exp", 1},           {"add", 1},     {"mul", 1},
      {"div", 1},     {"sub", 1},
  }};
  for (const Entry& e : kTable)
    if (contains(op, e.name)) return e.flops;
  return 1;
}

// Pointwise operators whose result is bool (one byte an element) whatever
// their inputs: comparisons and tests.
bool bool_result(std::string_view o) {
  static constexpr std::string_view kNames[] = {
      "eq",      "ne",          "lt",          "le",         "gt",
      "ge",      "isnan",       "isinf",       "isneginf",   "isposinf",
      "signbit", "logical_not", "logical_and", "logical_or", "logical_xor"};
  return std::ranges::find(kNames, o) != std::end(kNames);
}

// ATen's pointwise operators (the rules' names: no namespace, no leading or
// in-place '_'): one TensorIterator kernel that reads its tensor inputs and
// writes one result. Activations run under their own names or under the
// operator they dispatch to (F.relu(inplace=True) launches aten::clamp_min_,
// ReLU6 aten::hardtanh_). Comparisons and tests: bool_result.
bool is_elementwise(std::string_view o) {
  static constexpr std::string_view kNames[] = {
      // arithmetic
      "add", "sub", "rsub", "mul", "div", "neg", "abs", "sign", "sgn", "reciprocal", "pow",
      "square", "remainder", "fmod", "minimum", "maximum", "clamp", "clamp_min", "clamp_max",
      "floor", "ceil", "round", "trunc", "frac", "where", "masked_fill", "addcmul", "addcdiv",
      "lerp", "nan_to_num", "copysign", "hypot", "xlogy", "heaviside", "fmin", "fmax",
      "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not",
      // transcendental
      "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "sin", "cos", "tan",
      "asin", "acos", "atan", "atan2", "sinh", "cosh", "asinh", "acosh", "atanh", "erf", "erfc",
      "erfinv", "logit", "lgamma", "digamma",
      // activations and their gradients
      "gelu", "gelu_backward", "silu", "silu_backward", "relu", "threshold", "threshold_backward",
      "sigmoid", "sigmoid_backward", "tanh", "tanh_backward", "hardswish", "hardswish_backward",
      "hardsigmoid", "hardsigmoid_backward", "hardtanh", "hardtanh_backward", "leaky_relu",
      "leaky_relu_backward", "elu", "elu_backward", "mish", "mish_backward", "softplus",
      "softplus_backward", "dropout", "native_dropout", "native_dropout_backward", "celu", "selu",
      "softshrink", "softshrink_backward", "hardshrink", "hardshrink_backward", "prelu_kernel",
      "prelu_kernel_backward",
      // pointwise losses before their reduction (mse_loss writes the squared
      // errors that a mean child operator reduces) and their gradients
      "mse_loss", "mse_loss_backward", "smooth_l1_loss", "smooth_l1_loss_backward", "huber_loss",
      "huber_loss_backward", "binary_cross_entropy", "binary_cross_entropy_backward",
      "soft_margin_loss", "soft_margin_loss_backward",
      // copies and fills
      "copy", "fill", "zero", "clone", "to_copy", "cat", "stack", "flip", "tril", "triu"};
  return std::ranges::find(kNames, o) != std::end(kNames) || bool_result(o);
}

// The dimension a tensor is contiguous in: the last one of size > 1 with
// stride 1; -1 when none is (or the strides do not match the shape).
int innermost_dim(std::span<const std::int64_t> shape, std::span<const std::int64_t> strides) {
  if (shape.size() != strides.size()) return -1;
  for (std::size_t d = shape.size(); d-- > 0;)
    if (shape[d] > 1 && strides[d] == 1) return static_cast<int>(d);
  return -1;
}

// torch.cat: the result is channels-last when every non-empty input is (4-D
// or 5-D, contiguous along the channels), else contiguous (ATen's
// cat_compute_output_memory_format); each input read across the result's
// innermost dimension moves the sectors of a layout change.
double cat_l2_excess_bytes(const Args& a) {
  const auto shapes = a.shapes(0), strides = a.strides(0);
  if (shapes.empty() || strides.size() != shapes.size()) return 0.0;
  bool channels_last = true;
  for (std::size_t t = 0; t < shapes.size() && channels_last; ++t)
    channels_last = numel(shapes[t]) == 0 || ((shapes[t].size() == 4 || shapes[t].size() == 5) &&
                                              innermost_dim(shapes[t], strides[t]) == 1);
  if (channels_last) return 0.0;
  double excess = 0.0;
  for (std::size_t t = 0; t < shapes.size(); ++t) {
    Shape contiguous(shapes[t].size(), 1);
    for (std::size_t d = shapes[t].size(); d-- > 1;)
      contiguous[d - 1] = contiguous[d] * std::max<std::int64_t>(shapes[t][d], 1);
    excess += layout_change_l2_excess_bytes(shapes[t], contiguous, shapes[t], strides[t], a.elt(0));
  }
  return excess;
}

std::optional<OpWork> elementwise_work(const Args& a, std::string_view o, bool inplace) {
  const double per_elt = flops_per_element(o);
  if (o == "cat" || o == "stack") {
    const double in = a.bytes(0);
    if (in <= 0) return std::nullopt;
    OpWork w{0, 2 * in};
    if (o == "cat") w.l2_excess_bytes = cat_l2_excess_bytes(a);
    return w;
  }
  if (!a.tensor(0)) return std::nullopt;
  const double n = a.max_numel();
  if (o == "fill" || o == "zero") return OpWork{0, a.bytes(0)};
  if (o == "copy") {  // write self, read src
    OpWork w{0, a.bytes(0) + a.bytes(1)};
    const auto dst = a.strides(0), src = a.strides(1);
    if (dst.size() == 1 && src.size() == 1 && a.tensor(1))
      w.l2_excess_bytes =
          layout_change_l2_excess_bytes(*a.tensor(0), dst[0], *a.tensor(1), src[0], a.elt(1));
    return w;
  }
  const double inputs = a.all_bytes();
  const double out = inplace ? a.bytes(0) : n * (bool_result(o) ? 1 : a.max_elt());
  return OpWork{per_elt * n, inputs + out};
}

// ---- reductions, losses, embeddings --------------------------------------

// Element size of the ScalarType code softmax's backward records as its
// input_dtype (c10/core/ScalarType.h: 5 Half, 6 Float, 7 Double, 15
// BFloat16); `fallback` for any other.
int softmax_input_elt(std::string_view code, int fallback) {
  if (code == "5" || code == "15") return 2;
  if (code == "6") return 4;
  if (code == "7") return 8;
  return fallback;
}

std::optional<OpWork> reduction_work(const Args& a, std::string_view o) {
  const Shape* x = a.tensor(0);
  if (!x) return std::nullopt;
  const double n = numel(*x);
  // Each tensor once (row_reread_bytes adds the passes of the kernels
  // that read a row more than once): the backward (grad, output, dim,
  // input_dtype) writes the input's dtype, the forward (self, dim,
  // half_to_float) fp32 when asked to.
  if (contains(o, "softmax_backward"))
    return OpWork{3 * n, a.bytes(0) + a.bytes(1) + n * softmax_input_elt(a.concrete(3), a.elt(0))};
  if (contains(o, "softmax"))
    return OpWork{5 * n, a.bytes(0) + n * (a.concrete(2) == "True" ? 4 : a.elt(0))};
  // cumsum / cumprod (self, dim, dtype): a scan writes every element it reads.
  if (o == "cumsum" || o == "cumprod") return OpWork{n, 2 * a.bytes(0)};
  // sum / mean / amax / ... over the dims in Concrete Inputs[1] ("[0]");
  // argmax, argmin, all, any, max and min name one dim there ("-1"); all
  // dims when absent.
  const bool one_dim =
      o == "argmax" || o == "argmin" || o == "all" || o == "any" || o == "max" || o == "min";
  auto dims = parse_int_list(a.concrete(1));
  if (one_dim && !dims)
    if (const auto d = parse_double(a.concrete(1)); d && *d == std::floor(*d))
      dims = std::vector<std::int64_t>{static_cast<std::int64_t>(*d)};
  double out = 1;
  if (dims && !dims->empty()) {
    out = n;
    for (std::int64_t d : *dims) {
      if (d < 0) d += static_cast<std::int64_t>(x->size());
      if (d >= 0 && static_cast<std::size_t>(d) < x->size())
        out /= std::max<double>(1.0, static_cast<double>((*x)[static_cast<std::size_t>(d)]));
    }
  }
  // The result's element: int64 indices, bool for all / any, else the input's.
  const int out_elt =
      o == "argmax" || o == "argmin" ? 8 : (o == "all" || o == "any" ? 1 : a.elt(0));
  return OpWork{n, a.bytes(0) + out * out_elt};
}

std::optional<OpWork> nll_loss_work(const Args& a, bool backward) {
  const std::size_t self = backward ? 1 : 0;
  const Shape* target = a.tensor(self + 1);
  if (!a.tensor(self) || !target) return std::nullopt;
  const double rows = numel(*target);
  return OpWork{rows, rows * (a.elt(self) + a.elt(self + 1))};
}

std::optional<OpWork> embedding_work(const Args& a, std::string_view o) {
  if (o == "embedding") {  // weight [V, D], indices [...]
    const Shape* w = a.tensor(0);
    if (!w || !a.tensor(1) || w->size() != 2) return std::nullopt;
    const double n = a.numel_of(1) * static_cast<double>((*w)[1]);
    return OpWork{0, 2 * n * a.elt(0) + a.bytes(1)};
  }
  if (o == "gather" || o == "index_select") {  // self, dim, index
    const Shape* index = a.tensor(2);
    if (!index || !a.tensor(0)) return std::nullopt;
    // gather: the index is usually an expanded (stride-0) view, so its bytes
    // are not counted; index_select reads a 1-D index.
    if (o == "gather") return OpWork{0, numel(*index) * 2 * a.elt(0)};
    const Shape* self = a.tensor(0);
    const auto dim = parse_double(a.concrete(1));
    const double rows = dim && *dim >= 0 && *dim < static_cast<double>(self->size())
                            ? static_cast<double>((*self)[static_cast<std::size_t>(*dim)])
                            : 1.0;
    const double n = numel(*index) * numel(*self) / std::max(1.0, rows);
    return OpWork{0, n * 2 * a.elt(0) + a.bytes(2)};
  }
  // embedding_dense_backward(grad_output, indices, num_weights, ...): read the
  // gradient, accumulate it into the weight rows, sort the indices (~4 passes).
  if (!a.tensor(0) || !a.tensor(1)) return std::nullopt;
  return OpWork{a.numel_of(0), 2 * a.bytes(0) + 4 * a.bytes(1)};
}

std::optional<OpWork> arange_work(const Args& a) {
  const auto start = parse_double(a.concrete(0)), end = parse_double(a.concrete(1)),
             step = parse_double(a.concrete(2));
  if (!start || !end || !step || *step == 0) return std::nullopt;
  const double n = std::ceil((*end - *start) / *step);
  const int elt = a.elt(3) > 0 ? a.elt(3) : 8;
  return OpWork{n, std::max(n, 0.0) * elt};
}

// ---- recurrent layers (cuDNN) ---------------------------------------------

// _cudnn_rnn(input, weight list, weight_stride0, ...) and
// _cudnn_rnn_backward(input, weight list, ...): the input is [B, T, I] (or
// [T, B, I]) and the weight list holds, per layer and direction, w_ih [G·H, in],
// w_hh [G·H, H] and the biases. Every time step multiplies every matrix once
// with one vector per sequence: 2 x B·T x (sum of the matrices' elements)
// FLOPs forward; the backward computes the data and the weight gradients,
// twice that. Bytes of the GEMMs, an estimate: the input and the weights
// read once, and the gates' pre-activations (B·T x the w_ih rows, G·H per
// layer and direction) written; the backward twice the forward's.
//
// The gate kernels between them (cuDNN's elemWiseRNNcell forward,
// LSTM_elementWise_bp1 and GENERIC_elementWise_bp2 backward) run once per
// time step and layer over B sequences: forward they read both GEMMs'
// pre-activations (2·G·H) and the previous cell state (H) and write the new
// hidden and cell states (2·H) and, in training (`train`, the 13th argument),
// the gate activations the backward reads (G·H); backward they read those and
// the state gradients and write the gates' gradients (2·G·H + 5·H), which the
// bias gradient reads once more (G·H); a GRU, whose hidden GEMM's
// pre-activations stay apart from the input GEMM's (r ⊙ (W_hn·h + b_hn)),
// twice (4·G·H + 5·H, its bias gradient 2·G·H). Per element of B·T, with H =
// w_hh's columns. Nsight Compute (caches flushed per kernel), the LSTM of
// validation/h100/heldout10 (H 1024, G 4, B 64, fp32): 4.23 MB per forward
// launch against the rule's 3.93 MB, 3.68 against 3.41 MB backward, the bias
// gradient 133 MB against 133 MB; the GRU of validation/h100/heldout11 (H
// 768, G 3, B 32), held out for the forward: 1.204 MB per forward launch
// against 1.180 MB, and its backward (which set the GRU's term) 1.381 MB
// against 1.376 MB, the bias gradient 150.5 MB against 151 MB.
std::optional<OpWork> rnn_work(const Args& a, bool backward) {
  const Shape* in = a.tensor(0);
  if (!in || in->size() != 3 || (*in)[2] <= 0) return std::nullopt;
  const double steps = numel(*in) / static_cast<double>((*in)[2]);  // B x T
  double matrix_elements = 0, gate_rows = 0, weight_elements = 0, hidden = 0;
  bool input_matrix = true;  // w_ih and w_hh alternate among the 2-D weights
  for (const Shape& w : a.shapes(1)) {
    weight_elements += numel(w);
    if (w.size() != 2) continue;
    matrix_elements += numel(w);
    if (input_matrix)
      gate_rows += static_cast<double>(w[0]);
    else
      hidden += static_cast<double>(w[1]);
    input_matrix = !input_matrix;
  }
  if (!(matrix_elements > 0)) return std::nullopt;
  const double es = a.elt(0);  // a.tensor(0) exists: its element size is known
  const double scale = backward ? 2.0 : 1.0;
  OpWork w;
  w.flops = scale * 2.0 * steps * matrix_elements;
  w.dram_bytes = scale * (a.bytes(0) + weight_elements * es + 2.0 * steps * gate_rows * es);
  w.flops_on_gemm_kernels = true;
  const bool training = backward || a.concrete(12) != "False";
  // cudnnRNNMode_t 3: a GRU keeps its hidden GEMM's pre-activations apart
  // (r ⊙ (W_hn·h + b_hn)), so its backward writes and reduces both sides'.
  const bool gru = a.concrete(backward ? 10 : 6) == "3";
  const double per_step = backward ? (gru ? 5.0 : 3.0) * gate_rows + 5.0 * hidden
                                   : (training ? 3.0 : 2.0) * gate_rows + 3.0 * hidden;
  w.pointwise_dram_bytes = steps * per_step * es;
  return w;
}

// ---- multi-tensor (fused / foreach) kernels ------------------------------

// ATen's multi_tensor_apply gives each thread block one chunk of 65,536
// elements, so grid.x bounds the elements a launch touched.
constexpr double kMultiTensorChunkElements = 65536.0;

struct MultiTensorCost {
  double bytes_per_element;
  double flops_per_element;
};

std::optional<MultiTensorCost> multi_tensor_cost(std::string_view o) {
  // Parameters and optimizer state in fp32: AdamW reads/writes param,
  // exp_avg, exp_avg_sq and reads grad: 4 x (2 + 1 + 2 + 2) = 28 bytes.
  if (contains(o, "adam")) return MultiTensorCost{28, 14};
  if (contains(o, "sgd")) return MultiTensorCost{20, 4};
  if (contains(o, "adagrad")) return MultiTensorCost{20, 6};
  if (o.starts_with("_foreach_") || o.starts_with("foreach_")) return MultiTensorCost{8, 1};
  return std::nullopt;
}

// ---- convolutions ---------------------------------------------------------

// "[2, 2]" or "2" -> per spatial dim values (one value repeated); nullopt
// when absent or not integers.
std::optional<std::vector<std::int64_t>> spatial_list(std::string_view s, std::size_t dims) {
  if (s.empty()) return std::nullopt;
  if (s.front() != '[') {
    const auto v = parse_double(s);
    if (!v) return std::nullopt;
    return std::vector<std::int64_t>(dims, static_cast<std::int64_t>(*v));
  }
  auto list = parse_int_list(s);
  if (!list || list->empty()) return std::nullopt;
  if (list->size() == 1) list->resize(dims, list->front());
  if (list->size() != dims) return std::nullopt;
  return list;
}

// ---- upsampling -------------------------------------------------------------

// upsample_{nearest,linear,bilinear,bicubic,trilinear}Nd(input, output_size,
// ...) and their backward (grad_output, output_size, input_size, ...), as
// ATen's CUDA kernels run them: the forward reads the input and writes the
// output once (a tap's neighbours are cached), the backward reads the output
// gradient and writes the input gradient (zeroed by a fill of its own
// operator before the interpolating modes add into it atomically; the
// atomics' L2 traffic is not priced, as the scatters' is not). Warp
// instructions per element on the output side (the forward's outputs, the
// backward's output-gradient elements), Nsight Compute (--clock-control none)
// on the networks' kernels, each rate constant to 3 % over the shapes of its
// capture; the captures named set them, the others are held out
// (docs/validation.md, "Upsampling and roll from their shapes"):
//  - nearest (upsample_nearest2d_out_frame, backward_out_frame): 1.328 and
//    1.144 per element at three shapes of the 2-D U-Net (fp32, H200,
//    validation/h200/heldout5/ncu_unet_train_b8_128); held out on bf16 at
//    another shape (an H100, validation/h100/heldout21): 1.328 and 1.123;
//    on channels-last maps (the _nhwc_ kernels) 4.53 and 2.16 (that H100
//    capture, their only measurement);
//  - linear modes on NCHW tensors (upsample_bilinear2d_out_frame, a thread
//    per output pixel looping over the channels): 0.894 forward (FCN-ResNet-50,
//    heldout7; held out: DeepLabV3's 1x1 -> 32x32, 0.735, and bf16 on an H100,
//    heldout21, 0.914), 5.50 backward (DeepLabV3, heldout6; held out:
//    FCN-ResNet-50, 5.50), 9.03 on 16-bit tensors (heldout21); bilinear on
//    channels-last tensors (the _nhwc_ kernels, a thread per element): 6.63
//    forward (DeepLabV3; held out: heldout21's bf16, 6.72) and 6.66 backward,
//    9.78 on 16-bit tensors (heldout21);
//  - bicubic (one kernel for both layouts, 16 taps): 3.07 forward and 26.0
//    backward on bf16 (heldout21, its only measurement); on fp32 the
//    backward takes the linear modes' fp32 / 16-bit ratio, an inference;
//  - trilinear: 2.33 forward, 2.95 backward (the 3-D U-Net's three levels,
//    fp32, heldout7; held out: an H100's bf16 forward at 56^3 -> 112^3,
//    2.78, validation/h100/heldout19), 9.66 backward on 16-bit tensors (that
//    H100 capture, its only measurement).
std::optional<OpWork> upsample_work(const Args& a, std::string_view o) {
  const bool backward = contains(o, "backward");
  const Shape* x = a.tensor(0);  // the input, or the output gradient
  // Antialiased modes (_aa) run separable kernels of a wider support: no rule.
  if (!x || x->size() < 3 || contains(o, "_aa")) return std::nullopt;
  const std::size_t dims = x->size() - 2;
  const double planes = static_cast<double>((*x)[0]) * static_cast<double>((*x)[1]);
  double other_side = 0;  // the output's elements, or the input gradient's
  if (backward) {
    const auto input_size = parse_int_list(a.concrete(2));
    if (!input_size || input_size->size() != x->size()) return std::nullopt;
    other_side = 1;
    for (const std::int64_t d : *input_size) other_side *= static_cast<double>(d);
  } else {
    const auto out = spatial_list(a.concrete(1), dims);
    if (!out) return std::nullopt;
    other_side = planes;
    for (const std::int64_t d : *out) other_side *= static_cast<double>(d);
  }
  const double out_side = backward ? numel(*x) : other_side;
  const int es = a.elt(0);
  const auto strides = a.strides(0);
  // Channels-last: unit channel stride over more than one pixel (a 1x1 map is
  // both layouts, and ATen runs the NCHW kernel on it). Bilinear and nearest
  // have _nhwc_ kernels; bicubic has one kernel for both (its rates below
  // ignore the layout).
  const bool channels_last = dims == 2 && strides.size() == 1 && strides[0].size() == 4 &&
                             strides[0][1] == 1 && (*x)[1] > 1 && (*x)[2] * (*x)[3] > 1;
  // A 16-bit backward adds through compare-and-swap loops: 1.5-3.3x the
  // fp32 rate where both are measured.
  const bool half = es <= 2;
  double per_element = 0;
  if (contains(o, "nearest")) {
    per_element = channels_last ? (backward ? 2.16 : 4.53) : (backward ? 1.144 : 1.328);
  } else if (contains(o, "trilinear")) {
    per_element = backward ? (half ? 9.66 : 2.95) : 2.33;
  } else if (contains(o, "bicubic")) {
    per_element = backward ? (half ? 26.0 : 26.0 * 5.50 / 9.03) : 3.07;
  } else if (channels_last) {
    per_element = backward ? (half ? 9.78 : 6.66) : 6.63;
  } else {
    per_element = backward ? (half ? 9.03 : 5.50) : 0.894;
  }
  OpWork w{0, (numel(*x) + other_side) * es};
  w.instructions = per_element * out_side;
  return w;
}

// roll(self, shifts, dims): ATen's roll_cuda_kernel writes every element once
// at its shifted place (one launch per rolled dim), a thread per element
// computing its source offset in 64-bit arithmetic. Nsight Compute on
// Swin-T's six shapes, fp32 and bf16 (validation/h200/heldout5/
// ncu_swin_t_train_b64): DRAM reads and L2 writes of the tensor's bytes each,
// 3.03 warp instructions per element whatever the dtype (to 0.1 %). Held
// out on an H100 (validation/h100/heldout21, fp32 [32, 64, 64, 128]): the
// bytes to 0.1 %, 3.03 per element.
std::optional<OpWork> roll_work(const Args& a) {
  if (!a.tensor(0)) return std::nullopt;
  OpWork w{0, 2 * a.bytes(0)};
  w.instructions = 3.03 * a.numel_of(0);
  return w;
}

}  // namespace

bool is_cub_primitive_kernel(std::string_view kernel_name) {
  if (!contains(kernel_name, "cub::")) return false;
  const std::string base = kernel_base_name(kernel_name);
  return base.starts_with("Device") && base.ends_with("Kernel");
}

double depthwise_instructions(ConvPass pass, double outputs, double taps) {
  // cuDNN's depthwise kernels (conv2d_c1_k1_nhwc, dgrad2d_c1_k1_nhwc,
  // wgrad2d_c1_k1_nhwc) run on the SIMT pipes: Nsight Compute counted a + b x
  // taps warp instructions per output element on the H200, fitted by least
  // squares on three operators (validation/h200/ops/: 3x3 on 256x116x28^2,
  // 5x5 on 128x240x28^2, 7x7 on 64x96x56^2; each within 5 %). Held out: the
  // depthwise networks (docs/validation.md, "Operators in isolation").
  switch (pass) {
    case ConvPass::forward:
      return outputs * (0.670 + 0.0546 * taps);
    case ConvPass::data_gradient:
      return outputs * (1.240 + 0.1665 * taps);
    case ConvPass::weight_gradient:
      return outputs * (0.992 + 0.0497 * taps);
  }
  return 0.0;
}

std::optional<LayoutTransformWork> layout_transform_work(std::string_view kernel_name,
                                                         const LaunchConfig& launch,
                                                         std::span<const OpInput> op_inputs) {
  if (!is_layout_transform_kernel(kernel_name)) return std::nullopt;
  // The first two template arguments: the element types read and written
  // ("nchwToNhwcKernel<__nv_bfloat16, __nv_bfloat16, float, ...>").
  const std::size_t open = kernel_name.find("Kernel<");
  if (open == std::string_view::npos) return std::nullopt;
  std::string_view rest = kernel_name.substr(open + 7);
  auto type_bytes = [](std::string_view t) -> std::optional<int> {
    while (!t.empty() && t.front() == ' ') t.remove_prefix(1);
    while (!t.empty() && t.back() == ' ') t.remove_suffix(1);
    if (t == "__nv_bfloat16" || t == "__half" || t == "half" || t == "__nv_half") return 2;
    if (t == "float" || t == "int") return 4;
    if (t == "double") return 8;
    if (t == "signed char" || t == "char" || t == "unsigned char" || t == "int8_t" ||
        t == "__nv_fp8_e4m3" || t == "__nv_fp8_e5m2")
      return 1;
    return std::nullopt;
  };
  double bytes_per_element = 0;
  for (int side = 0; side < 2; ++side) {
    const std::size_t end = rest.find_first_of(",>");
    if (end == std::string_view::npos) return std::nullopt;
    const auto t = type_bytes(rest.substr(0, end));
    if (!t) return std::nullopt;
    bytes_per_element += *t;
    rest.remove_prefix(end + 1);
  }
  // A block of fewer than a warp: no launch configuration recorded (the
  // reader's default of 1 x 1 x 1), nothing to count from.
  const double block = static_cast<double>(launch.block[0]) * launch.block[1] * launch.block[2];
  if (block < 32) return std::nullopt;
  const double threads = block * launch_blocks(launch);
  const auto tiles = [](double n) { return std::ceil(n / 32.0); };
  double elements = threads * kLayoutTransformElementsPerThread;
  double channels = 0;  // a channel count of the operator's with the grid's channel tiles
  bool exact = false;
  for (const OpInput& in : op_inputs)
    for (const auto& shape : in.shapes) {
      if (shape.size() < 3 || exact) continue;
      const double n = static_cast<double>(shape[0]);
      const double c = static_cast<double>(shape[1]);
      double s = 1;
      for (std::size_t d = 2; d < shape.size(); ++d) s *= static_cast<double>(shape[d]);
      if (!(c > 0) || tiles(c) != launch.grid[1]) continue;
      if (n == launch.grid[2] && tiles(s) == launch.grid[0]) {
        elements = n * c * s;
        exact = true;
      }
      channels = std::max(channels, c);
    }
  if (!exact && channels > 0) elements *= channels / (32.0 * launch.grid[1]);
  return LayoutTransformWork{elements * bytes_per_element,
                             threads * kLayoutTransformInstructionsPerThread};
}

double layout_change_l2_excess_bytes(std::span<const std::int64_t> dst_shape,
                                     std::span<const std::int64_t> dst_strides,
                                     std::span<const std::int64_t> src_shape,
                                     std::span<const std::int64_t> src_strides, int element_bytes) {
  constexpr double kSectorBytes = 32;  // the L1/L2 transfer unit of every NVIDIA GPU since Volta
  if (element_bytes <= 0 ||
      !std::equal(dst_shape.begin(), dst_shape.end(), src_shape.begin(), src_shape.end()))
    return 0.0;
  const int d = innermost_dim(dst_shape, dst_strides);
  if (d < 0 || src_strides.size() != src_shape.size()) return 0.0;
  const double stride = std::abs(static_cast<double>(src_strides[static_cast<std::size_t>(d)]));
  const double e = element_bytes;
  const double per_element = std::max(0.0, std::min(kSectorBytes, stride * e) - e);
  return kLayoutChangeSectorUse * per_element * numel(Shape(dst_shape.begin(), dst_shape.end()));
}

std::optional<double> conv_l2_bytes_per_flop(std::string_view kernel_name, const ConvGeometry& g) {
  // The tile cuDNN names ("tilesize<Mt>x<Nt>x<Kt>"), read as a GEMM's.
  if (!contains(kernel_name, "tilesize")) return std::nullopt;
  const auto tile = gemm_tile(kernel_name);
  if (!tile) return std::nullopt;
  double m = 0, n = 0;
  if (contains(kernel_name, "fprop")) {
    m = g.out_positions;
    n = g.out_channels;
  } else if (contains(kernel_name, "dgrad")) {
    m = g.in_positions;
    n = g.in_channels;
  } else if (contains(kernel_name, "wgrad")) {
    m = g.out_channels;
    n = g.in_channels * g.taps;
  } else {
    return std::nullopt;
  }
  if (!(m >= 1) || !(n >= 1)) return std::nullopt;
  double bytes_per_flop = std::ceil(n / tile->second) / n + std::ceil(m / tile->first) / m;
  // Operand type: the first of the type pair after the GEMM's name
  // ("..._gemm_bf16bf16_...", "..._gemm_indexed_f32f32_tf32f32_..."): 32-bit
  // operands move twice the bytes.
  for (const std::string_view wide : {"_f32f32_", "_tf32f32_", "_tf32tf32_"})
    if (contains(kernel_name, wide)) {
      bytes_per_flop *= 2;
      break;
    }
  if (kernel_name.starts_with("sm90_")) bytes_per_flop *= kHopperConvL2Share;
  return bytes_per_flop;
}

namespace {

// A depthwise convolution: weight [K, C/g, ...] with one input and one output
// channel per group (C/g = 1, K = g).
bool is_depthwise(const Shape& weight, double groups) {
  return weight[1] == 1 && groups > 1 && static_cast<double>(weight[0]) == groups;
}

// The Concrete Inputs indices of a convolution signature's stride, padding,
// dilation and groups, and of its transposed flag and output padding (< 0:
// the signature has none).
struct ConvArgs {
  int stride, padding, dilation, groups, transposed = -1, output_padding = -1;
};

// A convolution call's input and weight (input, weight first in every
// signature) and its per-dimension parameters; nullopt when any is missing.
struct ConvCall {
  const Shape* x = nullptr;
  const Shape* w = nullptr;
  std::vector<std::int64_t> stride, padding, dilation;
  double groups = 1;
};

std::optional<ConvCall> read_conv_call(const Args& a, ConvArgs at) {
  const Shape* x = a.tensor(0);
  const Shape* w = a.tensor(1);
  if (!x || !w || x->size() < 3 || w->size() != x->size()) return std::nullopt;
  const std::size_t dims = x->size() - 2;
  auto stride = spatial_list(a.concrete(static_cast<std::size_t>(at.stride)), dims);
  auto padding = spatial_list(a.concrete(static_cast<std::size_t>(at.padding)), dims);
  auto dilation = spatial_list(a.concrete(static_cast<std::size_t>(at.dilation)), dims);
  const auto groups = parse_double(a.concrete(static_cast<std::size_t>(at.groups)));
  if (!stride || !padding || !dilation || !groups || *groups < 1) return std::nullopt;
  return ConvCall{x, w, std::move(*stride), std::move(*padding), std::move(*dilation), *groups};
}

// Forward convolution: FLOPs 2 x N x K x prod(out spatial) x C/g x prod(kernel).
std::optional<OpWork> conv_forward_work(const Args& a, ConvArgs at) {
  const auto call = read_conv_call(a, at);
  if (!call) return std::nullopt;
  if (at.transposed >= 0 && a.concrete(static_cast<std::size_t>(at.transposed)) == "True")
    return std::nullopt;  // conv_work sends these to conv_transpose_work
  const Shape& x = *call->x;
  const Shape& w = *call->w;
  double out_spatial = 1, kernel = 1;
  for (std::size_t d = 0; d + 2 < x.size(); ++d) {
    const double in = static_cast<double>(x[2 + d]);
    const double r = static_cast<double>(w[2 + d]);
    const double s = static_cast<double>(std::max<std::int64_t>(1, call->stride[d]));
    const double o = std::floor((in + 2.0 * static_cast<double>(call->padding[d]) -
                                 static_cast<double>(call->dilation[d]) * (r - 1) - 1) /
                                s) +
                     1;
    if (o < 1) return std::nullopt;
    out_spatial *= o;
    kernel *= r;
  }
  const double n = static_cast<double>(x[0]);
  const double k = static_cast<double>(w[0]);
  const double c_per_group = static_cast<double>(w[1]);
  OpWork work;
  work.flops = 2.0 * n * k * out_spatial * c_per_group * kernel;
  work.dram_bytes = a.bytes(0) + a.bytes(1) + n * k * out_spatial * a.elt(0) + a.bytes(2);
  work.conv = ConvGeometry{n * out_spatial, numel(x) / static_cast<double>(x[1]), k / call->groups,
                           c_per_group, kernel};
  if (is_depthwise(w, call->groups))
    work.instructions = depthwise_instructions(ConvPass::forward, n * k * out_spatial, kernel);
  return work;
}

// Transposed convolution (ConvTranspose; the adjoint of the forward
// convolution that maps its output back to its input): weight [C_in, C_out/g,
// ...], output size (in - 1) x stride - 2 x padding + dilation x (kernel - 1)
// + output_padding + 1 per spatial dimension. Every input element meets
// C_out/g x prod(kernel) weights: FLOPs 2 x N x prod(in spatial) x C_in x
// C_out/g x prod(kernel), the adjoint forward convolution's, which cuDNN runs
// as that convolution's data gradient (a "dgrad" kernel). Its geometry is the
// adjoint's: output positions are the input's, input positions the output's.
std::optional<OpWork> conv_transpose_work(const Args& a, ConvArgs at) {
  const auto call = read_conv_call(a, at);
  if (!call) return std::nullopt;
  const Shape& x = *call->x;
  const Shape& w = *call->w;
  const auto extra =
      spatial_list(a.concrete(static_cast<std::size_t>(at.output_padding)), x.size() - 2);
  if (!extra) return std::nullopt;
  double in_spatial = 1, out_spatial = 1, kernel = 1;
  for (std::size_t d = 0; d + 2 < x.size(); ++d) {
    const double in = static_cast<double>(x[2 + d]);
    const double r = static_cast<double>(w[2 + d]);
    const double o = (in - 1) * static_cast<double>(std::max<std::int64_t>(1, call->stride[d])) -
                     2.0 * static_cast<double>(call->padding[d]) +
                     static_cast<double>(call->dilation[d]) * (r - 1) +
                     static_cast<double>((*extra)[d]) + 1;
    if (o < 1) return std::nullopt;
    in_spatial *= in;
    out_spatial *= o;
    kernel *= r;
  }
  const double n = static_cast<double>(x[0]);
  const double c_in = static_cast<double>(x[1]);
  const double c_out_per_group = static_cast<double>(w[1]);
  OpWork work;
  work.flops = 2.0 * n * in_spatial * c_in * c_out_per_group * kernel;
  work.dram_bytes = a.bytes(0) + a.bytes(1) +
                    n * c_out_per_group * call->groups * out_spatial * a.elt(0) + a.bytes(2);
  work.conv = ConvGeometry{n * in_spatial, n * out_spatial,
                           static_cast<double>(w[0]) / call->groups, c_out_per_group, kernel};
  return work;
}

// convolution_backward(grad_output, input, weight, bias_sizes, stride,
// padding, dilation, transposed, output_padding, groups, output_mask): the
// gradient's shape gives the output size; input and weight gradients each
// cost one forward's FLOPs (output_mask says which were computed). A
// transposed convolution's forward counts the input's positions and channels
// where a convolution's counts the output's (conv_transpose_work).
std::optional<OpWork> conv_backward_work(const Args& a) {
  const Shape* dy = a.tensor(0);
  const Shape* x = a.tensor(1);
  const Shape* w = a.tensor(2);
  if (!dy || !x || !w || dy->size() < 3 || w->size() != dy->size() || x->size() != dy->size())
    return std::nullopt;
  const bool transposed = a.concrete(7) == "True";
  const Shape& counted = transposed ? *x : *dy;
  double counted_spatial = 1, kernel = 1;
  for (std::size_t d = 2; d < dy->size(); ++d) {
    counted_spatial *= static_cast<double>(counted[d]);
    kernel *= static_cast<double>((*w)[d]);
  }
  const double forward = 2.0 * static_cast<double>(counted[0]) * static_cast<double>(counted[1]) *
                         counted_spatial * static_cast<double>((*w)[1]) * kernel;
  // Input and weight gradients; an unrecorded, empty or unreadable mask: both.
  bool computed[2] = {true, true};
  if (const auto mask = parse_bool_list(a.concrete(10)); mask && !mask->empty())
    for (std::size_t i = 0; i < 2; ++i) computed[i] = i < mask->size() && (*mask)[i];
  OpWork work;
  work.flops = (computed[0] + computed[1]) * forward;
  // Read dy, x, w; write dx and dw.
  work.dram_bytes = a.bytes(0) + 2.0 * a.bytes(1) + 2.0 * a.bytes(2);
  // groups: Concrete Inputs index 9.
  const auto groups = parse_double(a.concrete(9));
  const double g = groups && *groups >= 1 ? *groups : 1.0;
  const double dy_positions = numel(*dy) / static_cast<double>((*dy)[1]);
  const double x_positions = numel(*x) / static_cast<double>((*x)[1]);
  work.conv =
      ConvGeometry{transposed ? x_positions : dy_positions, transposed ? dy_positions : x_positions,
                   static_cast<double>((*w)[0]) / g, static_cast<double>((*w)[1]), kernel};
  if (groups && !transposed && is_depthwise(*w, *groups)) {
    const double outputs = numel(*dy);
    work.instructions =
        (computed[0] ? depthwise_instructions(ConvPass::data_gradient, outputs, kernel) : 0.0) +
        (computed[1] ? depthwise_instructions(ConvPass::weight_gradient, outputs, kernel) : 0.0);
  }
  return work;
}

std::optional<OpWork> conv_work(const Args& a, std::string_view o) {
  if (contains(o, "backward")) return conv_backward_work(a);
  // aten::convolution / _convolution (input, weight, bias, stride, padding,
  // dilation, transposed, output_padding, groups, ...); aten::conv{1,2,3}d
  // (input, weight, bias, stride, padding, dilation, groups); cuDNN's
  // (input, weight, padding, stride, dilation, groups, ...).
  if (o == "convolution" || o == "convolution_overrideable") {
    const ConvArgs at{.stride = 3,
                      .padding = 4,
                      .dilation = 5,
                      .groups = 8,
                      .transposed = 6,
                      .output_padding = 7};
    return a.concrete(6) == "True" ? conv_transpose_work(a, at) : conv_forward_work(a, at);
  }
  if (o == "conv1d" || o == "conv2d" || o == "conv3d")
    return conv_forward_work(a, {.stride = 3, .padding = 4, .dilation = 5, .groups = 6});
  if (o == "cudnn_convolution")
    return conv_forward_work(a, {.stride = 3, .padding = 2, .dilation = 4, .groups = 5});
  // conv_transpose{1,2,3}d(input, weight, bias, stride, padding,
  // output_padding, groups, dilation); cudnn_convolution_transpose(input,
  // weight, padding, output_padding, stride, dilation, groups, ...).
  if (o == "conv_transpose1d" || o == "conv_transpose2d" || o == "conv_transpose3d")
    return conv_transpose_work(
        a, {.stride = 3, .padding = 4, .dilation = 7, .groups = 6, .output_padding = 5});
  if (o == "cudnn_convolution_transpose")
    return conv_transpose_work(
        a, {.stride = 4, .padding = 2, .dilation = 5, .groups = 6, .output_padding = 3});
  return std::nullopt;
}

// ---- FFTs -------------------------------------------------------------------

// Warp instructions per DRAM byte of a cuFFT pass: Nsight Compute on the four
// kernel families of one FNO training step on an H100 (validation/h100/
// heldout23/ncu_fno_train_b64_128.subset.csv.gz, against this rule's bytes):
// regular_fft 0.085, vector_fft_symm_c2r 0.109, vector_fft_symm_r2c 0.111,
// vector_2d_fft 0.134; their median. Fitted there, held out nowhere yet.
constexpr double kFftInstructionsPerByte = 0.110;

// torch.fft's operators, _fft_r2c(self, dim, normalization, onesided),
// _fft_c2r(self, dim, normalization, last_dim_size) and _fft_c2c(self, dim,
// normalization, forward), run by cuFFT: every kernel of the operator is one
// pass that reads the whole input and writes the whole output (the same FNO
// step: 1.07 of input + output per kernel in reads and L2 writes, for the
// two-kernel 2-D real transforms and the one-kernel 2-D complex one), so the
// bytes are each kernel's (OpWork::one_pass_per_kernel). The output: a
// one-sided r2c halves the last transformed dimension (n / 2 + 1) in complex
// elements of twice the input's size; c2r writes last_dim_size real
// elements of half its input's. FLOPs 5 N log2 N per complex transform of N
// points, half that for a real one (the Cooley-Tukey count), N the product
// of the transformed dimensions.
std::optional<OpWork> fft_work(const Args& a, std::string_view o) {
  const Shape* x = a.tensor(0);
  const auto dims = parse_int_list(a.concrete(1));
  if (!x || x->empty() || !dims || dims->empty()) return std::nullopt;
  const auto rank = static_cast<std::int64_t>(x->size());
  Shape out = *x;
  double n = 1;
  std::size_t last = 0;
  for (std::int64_t d : *dims) {
    if (d < 0) d += rank;
    if (d < 0 || d >= rank) return std::nullopt;
    last = static_cast<std::size_t>(d);
    n *= static_cast<double>((*x)[last]);
  }
  const bool r2c = o == "fft_r2c", c2r = o == "fft_c2r";
  double out_elt = a.elt(0);
  if (r2c) {
    if (a.concrete(3) != "False") out[last] = (*x)[last] / 2 + 1;
    out_elt *= 2;
  } else if (c2r) {
    const auto size = parse_double(a.concrete(3));
    if (!size || *size < 1) return std::nullopt;
    n = n / static_cast<double>((*x)[last]) * *size;
    out[last] = static_cast<std::int64_t>(*size);
    out_elt /= 2;
  }
  if (!(n >= 1)) return std::nullopt;
  const double transforms = (r2c ? numel(*x) : numel(out)) / n;
  OpWork work;
  work.flops = ((r2c || c2r) ? 2.5 : 5.0) * n * std::log2(n) * transforms;
  work.dram_bytes = a.bytes(0) + numel(out) * out_elt;
  work.instructions = kFftInstructionsPerByte * work.dram_bytes;
  work.one_pass_per_kernel = true;
  return work;
}

// ---- pooling ----------------------------------------------------------------

// max_pool{1,2,3}d_with_indices(self, kernel_size, stride, padding, dilation,
// ceil_mode): reads the input once and writes the output and its int64
// argmax indices (checked with Nsight Compute on ResNet-50's stem pool:
// 205 MB read, 237 MB written against 205 MB in, 51 MB out + 205 MB indices).
// Its backward (grad_output, self, kernel_size, stride, padding, dilation,
// ceil_mode, indices) reads the gradient and the indices and writes the
// input gradient; self is only a shape. avg_pool{1,2,3}d(self, kernel_size,
// stride, padding, ...) has no indices; adaptive_avg_pool (self, output_size)
// takes its output size from the call. One FLOP per window element and
// output (forward), per input element (backward).
std::optional<OpWork> pool_work(const Args& a, std::string_view o) {
  const bool backward = contains(o, "backward");
  const bool adaptive = contains(o, "adaptive");
  const bool max = contains(o, "max_pool");
  if (backward) {
    const Shape* dy = a.tensor(0);
    const Shape* x = a.tensor(1);
    if (!dy || !x) return std::nullopt;
    // grad_input is written at the input's size and the gradient's dtype.
    const double dx = numel(*x) * a.elt(0);
    const double indices = max ? a.bytes(7) : 0.0;
    return OpWork{numel(*x), a.bytes(0) + indices + dx};
  }
  const Shape* x = a.tensor(0);
  if (!x || x->size() < 2) return std::nullopt;
  std::size_t dims = 0;
  for (const char c : {'1', '2', '3'})
    if (contains(o, std::string("pool") + c + "d")) dims = static_cast<std::size_t>(c - '0');
  if (dims == 0 || x->size() < dims + 1) return std::nullopt;
  double out = numel(*x), window = 1;
  if (adaptive) {
    const auto size = spatial_list(a.concrete(1), dims);
    if (!size) return std::nullopt;
    for (std::size_t d = 0; d < dims; ++d) {
      const double in = static_cast<double>((*x)[x->size() - dims + d]);
      out = out / in * static_cast<double>(std::max<std::int64_t>(1, (*size)[d]));
    }
    window = numel(*x) / std::max(out, 1.0);
  } else {
    const auto kernel = spatial_list(a.concrete(1), dims);
    auto stride = spatial_list(a.concrete(2), dims);
    const auto padding = spatial_list(a.concrete(3), dims);
    if (!kernel || !padding) return std::nullopt;
    if (!stride || a.concrete(2) == "[]") stride = kernel;  // stride defaults to the kernel
    // max_pool: dilation at 4, ceil_mode at 5; avg_pool: ceil_mode at 4.
    const auto dilation = max ? spatial_list(a.concrete(4), dims) : std::nullopt;
    const bool ceil_mode = a.concrete(max ? 5 : 4) == "True";
    for (std::size_t d = 0; d < dims; ++d) {
      const double in = static_cast<double>((*x)[x->size() - dims + d]);
      const double k = static_cast<double>((*kernel)[d]);
      const double s = static_cast<double>(std::max<std::int64_t>(1, (*stride)[d]));
      const double dil = dilation ? static_cast<double>((*dilation)[d]) : 1.0;
      const double span = (in + 2.0 * static_cast<double>((*padding)[d]) - dil * (k - 1) - 1) / s;
      const double o_d = (ceil_mode ? std::ceil(span) : std::floor(span)) + 1;
      if (o_d < 1) return std::nullopt;
      out = out / in * o_d;
      window *= k;
    }
  }
  const double indices = max && contains(o, "with_indices") ? 8.0 * out : 0.0;
  return OpWork{out * window, a.bytes(0) + out * a.elt(0) + indices};
}

// ---- collectives -----------------------------------------------------------

// A collective's DRAM traffic: it reads what it sends and writes what it
// receives, and a ring or tree stages (g - 1) / g of the message through
// device buffers twice more (send and receive); a reduction adds one FLOP
// per received element.
// ---- Triton / Inductor kernels --------------------------------------------
// Inductor wraps each kernel launch in a record_function named after the
// kernel ("triton_poi_fused_add_mul_0") whose inputs are the kernel's
// arguments: every tensor it reads or writes, then the sizes. Each buffer is
// taken as moved once through DRAM. A template GEMM (triton_tem_ / triton_mm)
// does 2·M·N·K per batch for its first two arguments [.., M, K] x [.., K, N];
// a pointwise or reduction kernel does, per element of its largest buffer,
// the FLOPs of the operators its name says it fused.
std::optional<OpWork> triton_work(const Args& a, std::string_view name) {
  const double bytes = a.all_bytes();
  if (bytes <= 0) return std::nullopt;
  const bool gemm = name.rfind("triton_tem_", 0) == 0 || name.rfind("triton_mm", 0) == 0 ||
                    name.rfind("triton_bmm", 0) == 0;
  if (gemm) {
    std::vector<const Shape*> t;
    for (std::size_t i = 0; i < a.size(); ++i)
      if (const Shape* s = a.tensor(i); s && s->size() >= 2) t.push_back(s);
    for (std::size_t i = 0; i < t.size(); ++i)
      for (std::size_t j = i + 1; j < t.size(); ++j) {
        const Shape& x = *t[i];
        const Shape& y = *t[j];
        const auto k = x.back();
        if (k <= 0 || y[y.size() - 2] != k) continue;
        const double m = static_cast<double>(x[x.size() - 2]);
        const double n = static_cast<double>(y.back());
        const double batch = numel(x) / (m * static_cast<double>(k));
        return OpWork{2.0 * batch * m * n * static_cast<double>(k), bytes};
      }
    return std::nullopt;  // no operand pair: the fallback estimate
  }
  // The fused operators: the name's words after "fused_", up to the index.
  double per_elt = 0;
  const std::size_t fused = name.find("fused_");
  std::string_view rest =
      fused == std::string_view::npos ? std::string_view() : name.substr(fused + 6);
  while (!rest.empty()) {
    const std::size_t cut = rest.find('_');
    const std::string_view word = rest.substr(0, cut);
    if (is_elementwise(word) || word == "sum" || word == "mean" || word == "amax" ||
        word == "amin" || word == "max" || word == "min" || word == "var" || word == "prod")
      per_elt += flops_per_element(word);
    if (cut == std::string_view::npos) break;
    rest.remove_prefix(cut + 1);
  }
  return OpWork{std::max(1.0, per_elt) * a.max_numel(), bytes};
}

std::optional<OpWork> collective_work(const OpCall& op) {
  if (op.in_msg_elements < 0 && op.out_msg_elements < 0) return std::nullopt;
  static constexpr std::array<std::pair<std::string_view, int>, 10> kDtypes = {{
      {"Float", 4},
      {"Double", 8},
      {"Half", 2},
      {"BFloat16", 2},
      {"Long", 8},
      {"Int", 4},
      {"Byte", 1},
      {"Char", 1},
      {"Bool", 1},
      {"Float8_e4m3fn", 1},
  }};
  int elt = 0;
  for (const auto& [name, bytes] : kDtypes)
    if (op.msg_dtype == name) elt = bytes;
  if (elt == 0) return std::nullopt;
  const double in = std::max(0.0, op.in_msg_elements) * elt;
  const double out = std::max(0.0, op.out_msg_elements) * elt;
  const double g = static_cast<double>(std::max<std::int64_t>(1, op.group_size));
  OpWork work;
  work.dram_bytes = in + out + 2.0 * (g - 1) / g * std::max(in, out);
  const bool reduces = contains(op.name, "reduce") || contains(op.name, "all_reduce");
  work.flops = reduces ? (g - 1) / g * std::max(in, out) / elt : 0.0;
  return work;
}

// Operators of other libraries (vllm::, _C::, trtllm::, ...) with recorded
// shapes but no formula here: each recorded tensor is taken as moved once,
// capped at what the capture device's peak bandwidth moves in the measured
// time (a paged KV cache passed whole is not read whole). Memory-bound
// classes only: GEMM, convolution and attention kernels keep the roofline
// fallback, collectives their own rule. Work from the cap stays "fallback".
void custom_op_work(std::vector<Kernel>& kernels, const std::vector<std::uint32_t>& members,
                    const Args& a, std::string_view op, double peak_bytes_per_s) {
  const std::size_t colons = op.find("::");
  if (colons == std::string_view::npos || op.substr(0, colons) == "aten") return;
  const double bytes = a.all_bytes();
  if (!(bytes > 0)) return;
  double total_ns = 0;
  for (const std::uint32_t idx : members) {
    const KernelClass c = kernels[idx].cls;
    if (c == KernelClass::gemm || c == KernelClass::conv || c == KernelClass::attention ||
        c == KernelClass::communication)
      return;
    total_ns += static_cast<double>(kernels[idx].work.duration_ns);
  }
  if (!(total_ns > 0)) return;
  const double cap = total_ns * 1e-9 * peak_bytes_per_s;
  const double moved = std::min(bytes, cap);
  for (const std::uint32_t idx : members) {
    Kernel& k = kernels[idx];
    k.work.flops = 0;
    k.work.dram_bytes = moved * static_cast<double>(k.work.duration_ns) / total_ns;
    k.work.source = bytes <= cap ? WorkSource::shapes : WorkSource::fallback;
  }
}

// Passes over the activation each kernel of a multi-kernel operator makes,
// from the kernel's name, where the name says what the kernel does (ATen's
// norm kernels; Nsight Compute, docs/validation.md: batch norm's statistics
// kernel reads x, its transform reads x and writes y, its backward reduction
// reads dy and x, its backward elementwise pass reads dy and x and writes dx,
// the running-statistics update touches only the per-channel vectors; layer
// and RMS norm's input-gradient kernel reads dy and x and writes dx, their
// gamma-beta kernel reads dy and x; a row-moments kernel reads x, group norm's
// internal-gradient kernel reads dy and x, its fused-parameter and
// gamma-beta kernels only per-group vectors; group norm's forward normalising
// pass, the operator's one generic elementwise kernel, reads x and writes y;
// its backward runs two generic elementwise kernels of one name, one over
// per-channel vectors and the dx pass, which reads dy and x and writes dx:
// kGroupNormBackwardGeneric, resolved by their launches in annotate_work).
// nullopt: no such knowledge, the operator's work is split by duration.
constexpr double kGroupNormBackwardGeneric = -1.0;

std::optional<double> activation_passes(std::string_view op, std::string_view kernel) {
  if (contains(op, "group_norm")) {
    const bool backward = contains(op, "backward");
    if (contains(kernel, "RowwiseMoments")) return 1.0;
    if (contains(kernel, "ComputeInternalGradients")) return 2.0;
    if (contains(kernel, "FusedParams") || contains(kernel, "GammaBeta")) return 0.0;
    if (contains(kernel, "elementwise_kernel")) return backward ? kGroupNormBackwardGeneric : 2.0;
    return std::nullopt;
  }
  if (contains(op, "batch_norm")) {
    if (contains(kernel, "batch_norm_collect_statistics")) return 1.0;
    if (contains(kernel, "batch_norm_transform_input")) return 2.0;
    if (contains(kernel, "batch_norm_backward_reduce")) return 2.0;
    if (contains(kernel, "batch_norm_backward_elemt")) return 3.0;
    if (contains(kernel, "batch_norm_update_stats") ||
        contains(kernel, "batch_norm_reduce_statistics"))
      return 0.0;
    return std::nullopt;
  }
  if (contains(op, "layer_norm") || contains(op, "rms_norm")) {
    if (contains(kernel, "layer_norm_grad_input")) return 3.0;
    if (contains(kernel, "GammaBetaBackward")) return 2.0;
    if (contains(kernel, "RowwiseMoments")) return 1.0;
    if (contains(kernel, "LayerNormForward") || contains(kernel, "layer_norm_kernel")) return 2.0;
  }
  return std::nullopt;
}

}  // namespace

double row_reread_bytes(std::string_view kernel, double first_input_bytes,
                        double second_input_bytes, const LaunchConfig& launch,
                        const Device* capture) {
  // Passes after the first over the rows, and the bytes a row of them holds.
  double passes = 0.0, tensors = 0.0;
  if (contains(kernel, "cunn_SoftMaxForward<")) {
    passes = 2.0;
    tensors = first_input_bytes;
  } else if (contains(kernel, "cunn_SoftMaxBackward<") ||
             contains(kernel, "vectorized_layer_norm_kernel")) {
    passes = 1.0;
    tensors = first_input_bytes;
  } else if (contains(kernel, "layer_norm_grad_input_kernel")) {
    passes = 1.0;
    tensors = first_input_bytes + second_input_bytes;
  } else {
    return 0.0;
  }
  const double rereads = passes * tensors;
  const double rows = launch_blocks(launch);
  const auto l2 = capture ? RooflineParams::of_if_used(*capture) : std::nullopt;
  // Without the capture device's L2 model (l2_bytes and its residency
  // fractions: the H100 SXM and H200 files) and SMs, none: a narrow row's
  // re-reads stay in L2 on any GPU, and counting them would double its bytes.
  if (!l2 || !(l2->l2_bytes > 0) || !(rows > 0) || capture->sm_count <= 0 ||
      capture->max_threads_per_sm <= 0)
    return 0.0;
  // A launch without a block size: one-warp blocks, as many as the SM's
  // threads allow.
  const double per_sm =
      resident_blocks_per_sm(launch, *capture).value_or(capture->max_threads_per_sm / 32.0);
  const double resident_rows = std::min(rows, per_sm * capture->sm_count);
  return rereads * (1.0 - l2->l2_resident_share(resident_rows * tensors / rows));
}

std::optional<std::pair<int, int>> gemm_tile(std::string_view name) {
  auto digits = [&](std::size_t at, int& value) {
    std::size_t n = 0;
    value = 0;
    while (at + n < name.size() && n < 4 && name[at + n] >= '0' && name[at + n] <= '9')
      value = value * 10 + (name[at + n++] - '0');
    return n;
  };
  for (std::size_t i = 0; i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9') continue;
    if (i > 0 && name[i - 1] != '_' && !name.substr(0, i).ends_with("tilesize")) continue;
    int m = 0, n = 0;
    const std::size_t lm = digits(i, m);
    if (lm == 0 || i + lm >= name.size() || name[i + lm] != 'x') continue;
    const std::size_t ln = digits(i + lm + 1, n);
    const std::size_t end = i + lm + 1 + ln;
    if (ln == 0 || (end < name.size() && name[end] != '_' && name[end] != 'x')) continue;
    if (m >= 8 && m <= 512 && n >= 8 && n <= 512) return std::pair{m, n};
  }
  return std::nullopt;
}

std::optional<int> dtype_bytes(std::string_view type) {
  struct Entry {
    std::string_view name;
    int bytes;
  };
  static constexpr std::array<Entry, 18> kTable = {{
      {"float", 4},
      {"double", 8},
      {"c10::Half", 2},
      {"c10::BFloat16", 2},
      {"long int", 8},
      {"int", 4},
      {"short int", 2},
      {"signed char", 1},
      {"unsigned char", 1},
      {"bool", 1},
      {"c10::Float8_e4m3fn", 1},
      {"c10::Float8_e5m2", 1},
      {"c10::Float8_e4m3fnuz", 1},
      {"c10::Float8_e5m2fnuz", 1},
      {"c10::Float8_e8m0fnu", 1},
      {"c10::complex<float>", 8},
      {"c10::complex<double>", 16},
      {"c10::complex<c10::Half>", 4},
  }};
  for (const Entry& e : kTable)
    if (e.name == type) return e.bytes;
  return std::nullopt;
}

namespace {

// An operator's name as the work rules read it: without namespace, leading
// '_' (except attention's) and in-place '_' ("aten::copy_" -> "copy").
struct OpName {
  std::string_view full;  // without namespace
  std::string_view o;     // the rules' name
  bool inplace = false;
};
OpName op_name(std::string_view name) {
  OpName n{bare_op_name(name), {}, false};
  n.o = n.full;
  if (n.o.size() > 1 && n.o.front() == '_' && !contains(n.o, "attention")) n.o.remove_prefix(1);
  n.inplace = n.o.size() > 1 && n.o.back() == '_';
  if (n.inplace) n.o.remove_suffix(1);
  return n;
}

}  // namespace

std::optional<OpWork> estimate_op_work(const OpCall& op, int list_element_bytes) {
  const Args a(op, list_element_bytes);
  const auto [full, o, inplace] = op_name(op.name);

  if (o == "mm" || o == "bmm" || o == "matmul" || o == "scaled_mm" || o == "int_mm")
    return gemm_work(a, 0, 1, false, 0);
  if (o == "addmm" || o == "baddbmm") return gemm_work(a, 1, 2, false, a.bytes(0));
  if (o == "linear") return gemm_work(a, 0, 1, true, a.bytes(2));
  if (full.rfind("triton_", 0) == 0) return triton_work(a, full);
  if (contains(full, "attention")) return attention_work(a, full);
  if (contains(o, "conv")) return conv_work(a, o);
  if (contains(o, "_pool")) return pool_work(a, o);
  if (o == "fft_r2c" || o == "fft_c2r" || o == "fft_c2c") return fft_work(a, o);
  if (o.starts_with("upsample_")) return upsample_work(a, o);
  if (o == "roll") return roll_work(a);
  if (contains(o, "layer_norm") || contains(o, "rms_norm") || contains(o, "group_norm") ||
      contains(o, "batch_norm"))
    return norm_work(a, o, contains(o, "backward"));
  if (contains(o, "nll_loss")) return nll_loss_work(a, contains(o, "backward"));
  if (contains(o, "softmax") || o == "sum" || o == "mean" || o == "amax" || o == "amin" ||
      o == "max" || o == "min" || o == "norm" || o == "linalg_vector_norm" || o == "var" ||
      o == "std" || o == "prod" || o == "argmax" || o == "argmin" || o == "all" || o == "any" ||
      o == "logsumexp" || o == "cumsum" || o == "cumprod")
    return reduction_work(a, o);
  if (o == "embedding" || o == "gather" || o == "index_select" ||
      contains(o, "embedding_dense_backward") || o == "embedding_backward")
    return embedding_work(a, o);
  if (o == "arange") return arange_work(a);
  if (o == "cudnn_rnn" || o == "cudnn_rnn_backward") return rnn_work(a, o == "cudnn_rnn_backward");
  if (is_elementwise(o)) return elementwise_work(a, o, inplace);
  return collective_work(op);
}

namespace {
// The roofline of `d`, the capture device, at the clocks `capture` ran at.
CaptureRoofline roofline_of(const Device& d, const CaptureInfo& capture) {
  const std::int32_t core = capture.core_mhz > 0 ? capture.core_mhz : d.default_core_mhz;
  const std::int32_t mem = capture.memory_mhz > 0 ? capture.memory_mhz : d.default_memory_mhz;
  return CaptureRoofline{d.dram_bytes_per_s(mem), d.tensor_flops_per_s(core),
                         d.fp32_flops_per_s(core), d.issue_per_s(core)};
}
}  // namespace

std::optional<CaptureRoofline> capture_roofline(const CaptureInfo& capture) {
  if (capture.device.empty()) return std::nullopt;
  return roofline_of(load_capture_device(capture.device).device, capture);
}

std::vector<double> traced_concurrency(std::span<const Kernel> kernels) {
  // Sweep in start order; each pair on two streams that overlaps adds its
  // common time to both. Memsets and memcpys run on the copy engines and
  // share no SMs.
  std::vector<double> overlap(kernels.size(), 0.0);
  std::vector<std::uint32_t> order;
  auto on_sms = [&](std::uint32_t i) {
    return kernels[i].cls != KernelClass::memset && kernels[i].cls != KernelClass::memcpy;
  };
  for (std::uint32_t i = 0; i < kernels.size(); ++i)
    if (on_sms(i) && kernels[i].work.duration_ns > 0) order.push_back(i);
  std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
    return kernels[a].traced_start_ns < kernels[b].traced_start_ns;
  });
  for (std::size_t x = 0; x < order.size(); ++x) {
    const Kernel& a = kernels[order[x]];
    const std::int64_t a_end = a.traced_start_ns + a.work.duration_ns;
    for (std::size_t y = x + 1; y < order.size(); ++y) {
      const Kernel& b = kernels[order[y]];
      if (b.traced_start_ns >= a_end) break;
      // One stream runs its kernels one after the other: timestamps that
      // say otherwise (none recorded, rounding) are no overlap.
      if (b.stream == a.stream) continue;
      const std::int64_t common =
          std::min(a_end, b.traced_start_ns + b.work.duration_ns) - b.traced_start_ns;
      overlap[order[x]] += static_cast<double>(common);
      overlap[order[y]] += static_cast<double>(common);
    }
  }
  std::vector<double> out(kernels.size(), 1.0);
  for (std::uint32_t i : order)
    out[i] = 1.0 + overlap[i] / static_cast<double>(kernels[i].work.duration_ns);
  return out;
}

void annotate_work(Workload& workload, std::span<const OpCall> op_calls,
                   std::span<const ActivityFacts> activities, const AnnotateOptions& options) {
  auto& kernels = workload.kernels;
  // The capture device, read once: its roofline, and its L2 and SMs for the
  // re-reads of row_reread_bytes.
  const std::optional<Device> capture_device =
      workload.capture.device.empty()
          ? std::nullopt
          : std::optional<Device>(load_capture_device(workload.capture.device).device);
  CaptureRoofline roof = options.roofline;
  if (roof.dram_bytes_per_s <= 0)
    roof = capture_device ? roofline_of(*capture_device, workload.capture) : kGenericRoofline;
  const double peak = roof.dram_bytes_per_s;
  // The fallback's fractions are what one kernel reaches with the GPU to
  // itself; kernels that overlapped in the trace shared it, so each takes its
  // fractions over its mean concurrency (traced_concurrency).
  const std::vector<double> concurrency = traced_concurrency(kernels);
  // The seconds a kernel works at the fallback's fractions: its duration less
  // the launch and drain (memsets and memcpys run on the copy engines: no SM
  // launch to subtract); and its share of the GPU over its traced concurrency.
  const auto work_seconds = [&](const Kernel& k) {
    const bool copy = k.cls == KernelClass::memset || k.cls == KernelClass::memcpy;
    const double d = static_cast<double>(k.work.duration_ns);
    return std::max(0.0, copy ? d : d - options.fallback_fixed_ns) * 1e-9;
  };
  const auto gpu_share = [&](const Kernel& k) {
    return 1.0 / concurrency[static_cast<std::size_t>(&k - kernels.data())];
  };
  auto fallback = [&](Kernel& k) {
    const double s = work_seconds(k);
    const double share = gpu_share(k);
    const bool tensor =
        k.cls == KernelClass::gemm || k.cls == KernelClass::conv || k.cls == KernelClass::attention;
    double tensor_fraction = options.fallback_tensor_fraction;
    double bandwidth_fraction = options.fallback_tensor_bandwidth_fraction;
    bool skinny = false;
    if (k.cls == KernelClass::gemm) {
      bandwidth_fraction = options.fallback_gemm_bandwidth_fraction;
      const std::string_view name = workload.name(k);
      // GEMV kernels and cuBLAS's split-K reduction (an elementwise sum of
      // the partial products) are memory-bound whatever their tile.
      skinny = contains(name, "gemv") || contains(name, "Gemv") || contains(name, "splitKreduce");
      if (const auto tile = gemm_tile(name)) {
        skinny = skinny || std::min(tile->first, tile->second) <= options.fallback_skinny_tile;
        const double area = static_cast<double>(tile->first) * tile->second;
        if (area < options.fallback_mid_tile_area)
          tensor_fraction = options.fallback_small_tile_tensor_fraction;
        else if (area < options.fallback_large_tile_area)
          tensor_fraction = options.fallback_mid_tile_tensor_fraction;
      }
    }
    if (tensor && !skinny) {
      // The fraction is of the kernel's own math pipe's peak: a TF32 MMA
      // takes two 16-bit MMAs' time, an FP32 SIMT GEMM runs on the FP32 units.
      const MathPipe pipe = math_pipe(k.cls, workload.name(k));
      const double pipe_peak = pipe == MathPipe::simt
                                   ? roof.fp32_flops_per_s
                                   : roof.tensor_flops_per_s / tensor_rate_cost(pipe);
      k.work.flops = s * pipe_peak * tensor_fraction * share;
      k.work.dram_bytes = s * peak * bandwidth_fraction * share;
    } else {
      const double fraction = k.cls == KernelClass::other
                                  ? options.fallback_other_bandwidth_fraction
                                  : options.fallback_bandwidth_fraction;
      k.work.dram_bytes = s * peak * fraction * share;
      k.work.flops = skinny ? k.work.dram_bytes : 0.0;  // a GEMV: ~1 FLOP per weight byte
    }
    k.work.source = WorkSource::fallback;
  };

  // cuDNN's layout transforms take their work from their launch (below), not
  // from their convolution's, and CUB's primitives a family's; names repeat,
  // so each is read once.
  std::vector<std::int8_t> transform_of(workload.names.size(), -1);
  const auto is_transform = [&](const Kernel& k) {
    std::int8_t& t = transform_of[k.name_id];
    if (t < 0) t = static_cast<std::int8_t>(is_layout_transform_kernel(workload.name(k)));
    return t > 0;
  };
  std::vector<std::int8_t> cub_of(workload.names.size(), -1);
  const auto is_cub = [&](const Kernel& k) {
    std::int8_t& t = cub_of[k.name_id];
    if (t < 0) t = static_cast<std::int8_t>(is_cub_primitive_kernel(workload.name(k)));
    return t > 0;
  };

  // Compute kernels of each operator call, and their summed duration.
  std::vector<std::vector<std::uint32_t>> kernels_of(op_calls.size());
  for (std::size_t i = 0; i < kernels.size(); ++i) {
    const Kernel& k = kernels[i];
    const std::int32_t op = i < activities.size() ? activities[i].op_call : -1;
    if (op >= 0 && static_cast<std::size_t>(op) < op_calls.size() && k.cls != KernelClass::memset &&
        k.cls != KernelClass::memcpy && !is_transform(k) && !is_cub(k))
      kernels_of[static_cast<std::size_t>(op)].push_back(static_cast<std::uint32_t>(i));
  }

  for (std::size_t i = 0; i < kernels.size(); ++i) {
    Kernel& k = kernels[i];
    const ActivityFacts facts = i < activities.size() ? activities[i] : ActivityFacts{};
    if (k.cls == KernelClass::memset || k.cls == KernelClass::memcpy) {
      if (facts.activity_bytes < 0) {
        fallback(k);
        continue;
      }
      const bool two_sided = k.cls == KernelClass::memcpy && facts.device_to_device;
      k.work.flops = 0;
      k.work.dram_bytes = facts.activity_bytes * (two_sided ? 2 : 1);
      k.work.source = WorkSource::shapes;
      continue;
    }
    const std::span<const OpInput> op_inputs =
        facts.op_call >= 0 && static_cast<std::size_t>(facts.op_call) < op_calls.size()
            ? std::span<const OpInput>(op_calls[static_cast<std::size_t>(facts.op_call)].inputs)
            : std::span<const OpInput>();
    if (const auto lw = is_transform(k)
                            ? layout_transform_work(workload.name(k), k.launch, op_inputs)
                            : std::nullopt) {
      // Bytes capped by what the capture device's peak bandwidth moves in the
      // measured duration, as the multi-tensor kernels below.
      const double cap = static_cast<double>(k.work.duration_ns) * 1e-9 * peak;
      k.work.flops = 0;
      k.work.dram_bytes = std::min(lw->dram_bytes, cap);
      k.work.source = lw->dram_bytes <= cap ? WorkSource::shapes : WorkSource::fallback;
      k.work.instructions = lw->instructions;
      k.work.instructions_source = InstructionSource::shapes;
      continue;
    }
    if (is_cub(k)) {
      const double s = work_seconds(k);
      const double share = gpu_share(k);
      const double issue = roof.issue_per_s > 0 ? roof.issue_per_s : roof.fp32_flops_per_s / 64;
      k.work.flops = 0;
      k.work.dram_bytes = s * peak * options.cub_bandwidth_fraction * share;
      k.work.source = WorkSource::fallback;
      k.work.instructions = s * issue * options.cub_issue_fraction * share;
      k.work.instructions_source = InstructionSource::shapes;
      continue;
    }
    fallback(k);  // replaced below when the operator is modelled
  }

  // Copies with shapes but a trace without strides (a profiler before
  // PyTorch 2.1): their layout changes read as streaming copies.
  const auto has = [](const OpCall& c, auto member) {
    return std::any_of(c.inputs.begin(), c.inputs.end(),
                       [&](const OpInput& in) { return !(in.*member).empty(); });
  };
  if (std::none_of(op_calls.begin(), op_calls.end(),
                   [&](const OpCall& c) { return has(c, &OpInput::strides); })) {
    for (std::size_t op = 0; op < op_calls.size(); ++op) {
      const std::string_view o = op_name(op_calls[op].name).o;
      if (!kernels_of[op].empty() && (o == "copy" || o == "cat") &&
          has(op_calls[op], &OpInput::shapes)) {
        workload.notes.push_back(
            "the trace records operator shapes but no strides (Input Strides: PyTorch 2.1 or "
            "later): copies that change the memory layout (NCHW <-> channels-last, a transpose "
            "made contiguous) cannot be told from streaming ones, and their L2 traffic is not "
            "modelled");
        break;
      }
    }
  }

  for (std::size_t op = 0; op < op_calls.size(); ++op) {
    const auto& members = kernels_of[op];
    if (members.empty()) continue;
    const OpCall& call = op_calls[op];
    const std::string_view bare = bare_op_name(call.name);

    if (const auto cost = multi_tensor_cost(bare)) {
      // Per launch: elements from the grid, capped by what the capture
      // device's peak bandwidth allows in the measured duration.
      for (const std::uint32_t idx : members) {
        Kernel& k = kernels[idx];
        const double geometry = k.launch.grid[0] * kMultiTensorChunkElements;
        const double cap =
            static_cast<double>(k.work.duration_ns) * 1e-9 * peak / cost->bytes_per_element;
        const double elements = std::min(geometry, cap);
        k.work.flops = elements * cost->flops_per_element;
        k.work.dram_bytes = elements * cost->bytes_per_element;
        k.work.source = geometry <= cap ? WorkSource::shapes : WorkSource::fallback;
      }
      continue;
    }

    // TensorList element size: ATen's cat kernels name it (OpaqueType<2u>).
    int list_bytes = 4;
    const std::string_view first_name = workload.name(kernels[members.front()]);
    if (const auto pos = first_name.find("OpaqueType<"); pos != std::string_view::npos) {
      const char c = first_name.size() > pos + 11 ? first_name[pos + 11] : '4';
      if (c >= '1' && c <= '8') list_bytes = c - '0';
    }
    const auto work = estimate_op_work(call, list_bytes);
    if (!work) {
      custom_op_work(kernels, members, Args(call, list_bytes), call.name, peak);
      continue;
    }
    // Split over the kernels by their own traffic where their names say it
    // (activation_passes), else by measured duration.
    std::vector<double> weight(members.size());
    bool by_passes = members.size() > 1;
    std::size_t widest_generic = members.size();  // group norm backward's dx pass
    for (std::size_t m = 0; m < members.size() && by_passes; ++m) {
      const auto passes = activation_passes(bare, workload.name(kernels[members[m]]));
      by_passes = passes.has_value();
      weight[m] = passes.value_or(0.0);
      if (weight[m] == kGroupNormBackwardGeneric) {
        weight[m] = 0.0;
        if (widest_generic == members.size() ||
            launch_blocks(kernels[members[m]].launch) >
                launch_blocks(kernels[members[widest_generic]].launch))
          widest_generic = m;
      }
    }
    // Of group norm backward's generic elementwise kernels the one with the
    // most blocks is the dx pass (three passes); the others run over
    // per-channel vectors (Nsight Compute, validation/h100/families/ncu9/:
    // 50,176 blocks and 3 passes against 32 blocks and none).
    if (by_passes && widest_generic < members.size()) weight[widest_generic] = 3.0;
    double total = std::accumulate(weight.begin(), weight.end(), 0.0);
    if (!by_passes || !(total > 0)) {
      total = 0;
      for (std::size_t m = 0; m < members.size(); ++m) {
        weight[m] = static_cast<double>(kernels[members[m]].work.duration_ns);
        total += weight[m];
      }
    }
    // FLOPs the operator's GEMMs alone do go to its GEMM kernels, by
    // duration (OpWork::flops_on_gemm_kernels); when it has none, they follow
    // the bytes.
    double gemm_total = 0, rest_total = 0;
    if (work->flops_on_gemm_kernels)
      for (const std::uint32_t idx : members)
        (kernels[idx].cls == KernelClass::gemm ? gemm_total : rest_total) +=
            static_cast<double>(kernels[idx].work.duration_ns);
    // The GEMMs' bytes to the GEMM kernels by duration, as their FLOPs, and
    // the gate kernels' to the rest, where the operator says both (rnn_work):
    // to each of their kernel names its share of the summed duration, the
    // same to each of its launches (a gate kernel runs the same shapes every
    // time step; a traced duration jitters).
    const bool split_bytes = work->pointwise_dram_bytes > 0 && gemm_total > 0 && rest_total > 0;
    std::unordered_map<std::uint32_t, std::pair<double, double>> by_name;  // duration, launches
    if (split_bytes)
      for (const std::uint32_t idx : members) {
        if (kernels[idx].cls == KernelClass::gemm) continue;
        auto& [d, n] = by_name[kernels[idx].name_id];
        d += static_cast<double>(kernels[idx].work.duration_ns);
        n += 1;
      }
    // The tensors a softmax or norm kernel re-reads: the operator's first
    // (input, gradient, x) and second (norm backward's x) inputs.
    const Args args(call, list_bytes);
    const double first_input_bytes = args.bytes(0), second_input_bytes = args.bytes(1);
    for (std::size_t m = 0; m < members.size(); ++m) {
      Kernel& k = kernels[members[m]];
      const double share =
          total > 0 ? weight[m] / total : 1.0 / static_cast<double>(members.size());
      const double duration = static_cast<double>(k.work.duration_ns);
      const bool gemm = k.cls == KernelClass::gemm;
      const double flops_share = gemm_total <= 0 ? share : gemm ? duration / gemm_total : 0.0;
      k.work.flops = work->flops * flops_share;
      // One pass per kernel (cuFFT): each kernel moves the operator's bytes.
      const double pass_share = work->one_pass_per_kernel ? 1.0 : share;
      if (!split_bytes) {
        k.work.dram_bytes = (work->dram_bytes + work->pointwise_dram_bytes) * pass_share;
      } else if (gemm) {
        k.work.dram_bytes = work->dram_bytes * duration / gemm_total;
      } else {
        const auto& [name_duration, launches] = by_name.at(k.name_id);
        k.work.dram_bytes = work->pointwise_dram_bytes / rest_total * name_duration / launches;
      }
      // A softmax or norm kernel that reads its rows once per pass.
      k.work.dram_bytes += row_reread_bytes(workload.name(k), first_input_bytes, second_input_bytes,
                                            k.launch, capture_device ? &*capture_device : nullptr);
      k.work.source = WorkSource::shapes;
      k.work.l2_excess_bytes = work->l2_excess_bytes * share;
      // A tensor-core convolution pass: its L2 reads beyond a GEMM's.
      if (work->conv)
        if (const auto bpf = conv_l2_bytes_per_flop(workload.name(k), *work->conv))
          k.work.l2_excess_bytes += std::max(0.0, (*bpf - kGemmL2BytesPerFlop) * k.work.flops);
      if (work->instructions >= 0) {
        k.work.instructions = work->instructions * pass_share;
        k.work.instructions_source = InstructionSource::shapes;
      }
    }
  }
}

}  // namespace dvfsim
