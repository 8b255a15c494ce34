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
  if (is_one_of(o, {"mm", "addmm", "bmm", "baddbmm", "matmul", "linear", "scaled_mm", "addmv", "mv",
                    "addbmm", "dot"}))
    return KernelClass::gemm;
  if (contains_any(o, {"attention", "sdpa"})) return KernelClass::attention;
  if (contains_any(o, {"layer_norm", "rms_norm", "group_norm", "batch_norm", "instance_norm"}))
    return KernelClass::norm;
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
  if (contains_any(k, {"gemm", "cutlass", "nvjet", "xmma", "cublas"})) return KernelClass::gemm;
  if (contains_any(k, {"flash", "fmha", "sdpa", "attention"})) return KernelClass::attention;
  if (const auto c = class_from_op(op)) return *c;
  if (contains_any(k, {"reduce", "softmax"})) return KernelClass::reduction;
  if (contains_any(k, {"elementwise", "vectorized", "gelu", "copy", "fill"}))
    return KernelClass::elementwise;
  return KernelClass::other;
}

}  // namespace dvfsim
