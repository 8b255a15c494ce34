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
//  3. the kernel name: communication (NCCL's ncclKernel_* / ncclDevKernel_*,
//     custom all-reduce kernels), Triton/Inductor templates (triton_poi_ ->
//     elementwise, triton_red_ / triton_per_ -> reduction, triton_tem_ /
//     triton_mm -> gemm), conv (fprop, dgrad, wgrad, implicit GEMM,
//     Winograd, FFT), gemm (gemm, cutlass, nvjet, xmma, cublas, HMMA tile
//     names such as h884 / s16816) or attention (flash, fmha, sdpa,
//     attention);
//  4. the operator: matmul family -> gemm, attention ops -> attention,
//     convolutions -> conv, c10d collectives -> communication,
//     *_norm -> norm, reductions / softmax / losses -> reduction, known
//     pointwise and copy ops -> elementwise;
//  5. the kernel name again: reduce / softmax -> reduction, elementwise /
//     vectorized / gelu / copy / fill -> elementwise;
//  6. other.
KernelClass classify_kernel(ActivityKind kind, std::string_view op, std::string_view kernel_name,
                            Phase phase);

}  // namespace dvfsim
