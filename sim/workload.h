#pragma once
// The workload data model: kernels with their measured work, the host timeline
// they were launched from, and the dependencies between them (docs/design.md, "Data
// model"). Plain data; readers in traces/ fill it, the engine replays it.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace dvfsim {

enum class KernelClass : std::uint8_t {
  gemm,
  attention,
  conv,  // convolutions (cuDNN / CUTLASS fprop, dgrad, wgrad, implicit GEMM)
  elementwise,
  reduction,
  norm,
  optimizer,
  communication,
  memcpy,
  memset,
  other,
};
inline constexpr int kKernelClassCount = 11;

enum class Phase : std::uint8_t { forward, backward, optimizer, other };
inline constexpr int kPhaseCount = 4;

std::string_view to_string(KernelClass c);
std::string_view to_string(Phase p);
// Parse the names above; std::nullopt when unknown.
std::optional<KernelClass> parse_kernel_class(std::string_view s);
std::optional<Phase> parse_phase(std::string_view s);

// Where a kernel's FLOPs and bytes came from.
enum class WorkSource : std::uint8_t { shapes, fallback };
std::string_view to_string(WorkSource s);

// Where a kernel's instruction count came from: Nsight Compute
// (sm__inst_executed, matched from a `<trace>.ncu.csv` sidecar), the
// per-class estimate below (estimated_instructions), or a rule on its
// operator's shapes (depthwise_instructions in traces/annotate.h) or on its
// kernel family (CUB's primitives: AnnotateOptions::cub_issue_fraction).
enum class InstructionSource : std::uint8_t { ncu, estimated, shapes };
std::string_view to_string(InstructionSource s);
std::optional<InstructionSource> parse_instruction_source(std::string_view s);

// What a kernel did, measured on the capture device at the capture clocks.
struct Work {
  std::int64_t duration_ns = 0;  // measured duration at the capture clocks
  double flops = 0.0;            // floating-point operations
  double dram_bytes = 0.0;       // bytes read + written in device memory
  WorkSource source = WorkSource::fallback;
  // Warp instructions executed on the SMs (all pipes). Drives the SIMT term
  // of the power model (docs/design.md, "Models").
  double instructions = 0.0;
  InstructionSource instructions_source = InstructionSource::estimated;
  // Bytes moved through L2 beyond what a streaming kernel moving dram_bytes
  // does: the partly used 32-byte sectors of a copy that changes the
  // innermost dimension (traces/annotate.h, layout_change_l2_excess_bytes).
  // Drives the power models' L2 term; no time.
  double l2_excess_bytes = 0.0;
  // How many of a matrix kernel's two operands came straight from a ReLU, so
  // that about half their values are zero (0, 1 or 2; traces/zeroed_operands.h).
  // Zeros toggle no multiplier bits: the power models' tensor term shrinks
  // (docs/calibration.md, "Operand data"). 0 for every other kernel.
  std::uint8_t zeroed_operands = 0;
};

// Warp instructions of a kernel of class `cls` with the given FLOPs and DRAM
// bytes when nothing measured them: per-class intensities measured with
// Nsight Compute on one GPT-3-XL training step on the H200
// (traces/data/gpt3xl_h200_train_b4_t2048.ncu.csv; docs/trace-format.md).
// The arithmetic a GEMM, convolution or attention kernel runs on, read from
// its name (docs/design.md, "Math pipes"): tensor cores at their 16-bit (or
// 8-bit) rate, the default; TF32 tensor cores (an MMA does half the FLOPs of a
// 16-bit one: m16n8k8 against m16n8k16 on Ampere, k8 against k16 for Hopper's
// wgmma); FP32 emulated with three TF32 MMAs per product (CUTLASS's
// OpMultiplyAddFastF32, the fp32 fmha kernels of xFormers/PyTorch); or the
// FP32 SIMT pipes, no tensor cores (cuBLAS sgemm, CUTLASS simt, xmma
// f32f32_f32f32, complex cgemm). FP8 tensor cores (e4m3 or e5m2 operands) do
// a 16-bit MMA's work in half its time on every GPU that has them (Hopper,
// Ada, Blackwell: twice the dense 16-bit peak), and so do INT8 ones (int8
// operands, int32 products: 1979 TOPS against 989 TFLOP/s dense on the H100
// SXM, 624 against 312 on the A100; NVIDIA's data sheets). Every other class
// is `simt`.
enum class MathPipe : std::uint8_t {
  tensor,
  tensor_tf32,
  tensor_3xtf32,
  simt,
  tensor_fp8,
  tensor_int8
};
MathPipe math_pipe(KernelClass cls, std::string_view kernel_name);
// Whether a tensor-core kernel's name says its operands are fp16 (not bf16,
// TF32 or fp8): the tensor cores draw more power on fp16 data than on bf16
// (docs/calibration.md, "Operand data"). False when the name does not say.
bool fp16_operands(std::string_view kernel_name);
// Tensor-core work in 16-bit-rate FLOPs per FLOP on `pipe` (1, 2, 6, and 0.5
// for FP8 and INT8); 0 for simt.
double tensor_rate_cost(MathPipe pipe);

// cuDNN's layout transforms (nchwToNhwcKernel, nhwcToNchwKernel in any of
// cuDNN's namespaces): copies that convert a convolution's NCHW / NCDHW
// tensors to the channels-last layout its tensor-core kernels take, and
// back. They run under their convolution's operator but do none of its math:
// class `elementwise`, work from their launch (layout_transform_work,
// traces/annotate.h).
bool is_layout_transform_kernel(std::string_view kernel_name);

// Warp instructions per DRAM byte of an `elementwise` kernel, from the ATen
// template and functor its name spells (docs/design.md, "Elementwise
// instructions from the kernel name"): vectorised (`vectorized_elementwise_kernel<V, ...>`: a cast
// or copy, a transcendental functor, or plain arithmetic, at 16-bit elements for V >= 8 and 32-bit
// below), unrolled (copy or other), the generic strided `elementwise_kernel<...>` (16-bit or
// 32-bit), the vectorised concatenation; 0.137, the class mix of the GPT-3-XL step, for a name that
// says none of them.
double elementwise_instructions_per_byte(std::string_view kernel_name);

// Whether a kernel is a batch-norm pass: ATen's (`batch_norm_...`, NCHW and
// channels-last) or cuDNN's (`cudnn::bn_...`).
bool is_batch_norm_kernel(std::string_view kernel_name);

// Warp instructions per DRAM byte of a `norm` kernel: batch norm's statistics
// and backward-reduction passes by their names, 0.139 (the GPT-3-XL step's
// class) otherwise.
double norm_instructions_per_byte(std::string_view kernel_name);

// `kernel_name` refines the elementwise class (elementwise_instructions_per_byte)
// and the norm class (norm_instructions_per_byte); empty: the class mix.
double estimated_instructions(KernelClass cls, double flops, double dram_bytes,
                              MathPipe pipe = MathPipe::tensor, std::string_view kernel_name = {});

struct LaunchConfig {
  std::uint32_t grid[3] = {1, 1, 1};
  std::uint32_t block[3] = {1, 1, 1};
  std::uint32_t registers_per_thread = 0;
  std::uint32_t shared_memory_bytes = 0;
};

struct Kernel {
  std::uint32_t name_id = 0;  // index into Workload::names
  std::uint32_t op_id = 0;    // index into Workload::names: owning operator ("" if none)
  std::int32_t stream = 0;
  std::int32_t device = 0;
  LaunchConfig launch;
  std::int64_t host_launch_ns = 0;   // host time of the launch call, trace time base
  std::int64_t traced_start_ns = 0;  // GPU start in the trace, same time base
  KernelClass cls = KernelClass::other;
  Phase phase = Phase::other;
  std::int32_t iteration = 0;  // 0-based
  std::int32_t layer = -1;     // -1 when unknown
  Work work;
  // The launch's correlation id in a Kineto trace (joins kernels.csv back to
  // the trace); -1 when the trace has none (native traces do not keep it).
  std::int64_t correlation = -1;
};

// A host call that blocked until GPU work finished (stream/device/event
// synchronise, blocking copy). The host resumed at `traced_end_ns`.
struct SyncPoint {
  enum class Kind : std::uint8_t { device, stream, event, copy };
  Kind kind = Kind::device;
  std::int64_t host_begin_ns = 0;
  std::int64_t traced_end_ns = 0;
  // The host waited for every kernel with index < `waits_until_kernel` on
  // `stream` (or on every stream when stream < 0).
  std::uint32_t waits_until_kernel = 0;
  std::int32_t stream = -1;
};

// A cross-stream dependency: `kernel` may not start before `after` ends.
struct EventWait {
  std::uint32_t kernel = 0;
  std::uint32_t after = 0;
};

// Where and how the trace was captured.
struct CaptureInfo {
  std::string device;         // device model name, e.g. "h200"
  std::string device_name;    // as the driver named it, e.g. "NVIDIA H200"
  std::int32_t core_mhz = 0;  // mean SM clock while the trace's work ran
  std::int32_t memory_mhz = 0;
  std::string clocks_source;        // where the clocks came from
  std::string instructions_source;  // where Work::instructions came from
};

// The longest a trace may span around its median GPU start, either way, and
// the longest activity: one hour (Workload::validate; docs/trace-format.md).
inline constexpr std::int64_t kMaxTraceSpanNs = std::int64_t{3600} * 1'000'000'000;

struct Workload {
  std::string source_path;
  CaptureInfo capture;
  std::vector<std::string> names;  // interned kernel and operator names
  std::vector<Kernel> kernels;     // in host launch order
  std::vector<SyncPoint> syncs;    // in host time order
  std::vector<EventWait> event_waits;
  std::int32_t iterations = 0;
  // First kernel index of each iteration, plus kernels.size() at the end.
  std::vector<std::uint32_t> iteration_begin;
  // How the iterations were found, e.g. "ProfilerStep# annotations".
  std::string iteration_rule;
  // Steady-state iterations, ascending: per-iteration figures average over
  // these (traces/iterations.h). Empty: every iteration.
  std::vector<std::int32_t> steady_iterations;
  // What the reader assumed or worked around, for the user: `trace info`,
  // `run` and summary.json show them.
  std::vector<std::string> notes;

  std::string_view name(const Kernel& k) const { return names[k.name_id]; }
  std::string_view op(const Kernel& k) const { return names[k.op_id]; }
  std::unordered_map<std::string, std::uint32_t> name_index;  // for intern()

  std::uint32_t intern(std::string_view s);
  // Checks invariants (launch order, indices in range, iteration table); throws
  // InputError naming `source_path` when broken.
  void validate() const;
};

}  // namespace dvfsim
