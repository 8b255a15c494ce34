#pragma once
// Kernel class from the owning operator and the kernel name.
#include <string_view>

#include "sim/workload.h"

namespace dvfsim {

// What kind of GPU activity a trace event was.
enum class ActivityKind : std::uint8_t { kernel, memset, memcpy };

// Operator name without the "aten::" style namespace prefix.
std::string_view bare_op_name(std::string_view op);

// Classifies one activity. Rules, first match wins:
//  1. memset / memcpy activities are their own class;
//  2. in the optimizer phase, fused/foreach optimizer ops and multi_tensor_apply
//     kernels are `optimizer`;
//  3. the kernel name: gemm (gemm, cutlass, nvjet, xmma, cublas) or attention
//     (flash, fmha, sdpa, attention);
//  4. the operator: matmul family -> gemm, attention ops -> attention,
//     *_norm -> norm, reductions / softmax / losses -> reduction, known
//     pointwise and copy ops -> elementwise;
//  5. the kernel name again: reduce / softmax -> reduction, elementwise /
//     vectorized / gelu / copy / fill -> elementwise;
//  6. other.
KernelClass classify_kernel(ActivityKind kind, std::string_view op, std::string_view kernel_name,
                            Phase phase);

}  // namespace dvfsim
