#pragma once
// Instruction counts of a workload's kernels (Work::instructions): measured
// ones from an Nsight Compute sidecar `<trace stem>.ncu.csv` where it exists,
// the per-class estimate (estimated_instructions) for every other kernel.
// docs/trace-format.md, "Instruction counts", describes the sidecar.
#include <optional>
#include <string>
#include <string_view>

#include "sim/workload.h"

namespace dvfsim {

// The part of a demangled kernel name that Kineto and Nsight Compute spell
// alike: the function's own name, without return type, namespaces, template
// arguments and parameters ("void at::native::foo<8, float>(int)" -> "foo").
std::string kernel_base_name(std::string_view demangled);

// Warp instructions a tensor-core convolution pass issues per byte of its L2
// traffic beyond a GEMM's (Work::l2_excess_bytes, conv_l2_bytes_per_flop in
// traces/annotate.h), on top of the per-FLOP estimate: a narrow layer's
// operand rows are re-read once per tile of the other dimension, and each
// re-read costs loads and address arithmetic that a wide layer amortises.
// Nsight Compute's counts less the estimate, over the rule's excess bytes,
// pooled over the eleven convolutions measured alone on H100 boards
// (validation/h100/convs/, convwidth/: 8-256 channels, 2-D and 3-D): 0.127.
// Held out on the sixteen network captures with convolution counts
// (docs/validation.md, "Instructions of narrow convolutions").
inline constexpr double kConvInstructionsPerL2ExcessByte = 0.127;

// Fills Work::instructions of every kernel of `w`; reads the sidecar of
// `trace_path` if there is one and records what it matched in
// w.capture.instructions_source.
void annotate_instructions(Workload& w, const std::string& trace_path);

// The same with an explicit sidecar path (empty: estimates only).
void annotate_instructions_from(Workload& w, const std::string& ncu_csv_path);

// The same with the sidecar's text in memory (std::nullopt: estimates only);
// `ncu_csv_path` names it in messages. A malformed sidecar is an InputError
// naming the file and line.
void annotate_instructions_from_text(Workload& w, std::optional<std::string_view> csv,
                                     const std::string& ncu_csv_path);

}  // namespace dvfsim
