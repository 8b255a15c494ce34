#pragma once
// Work annotation: FLOPs and DRAM bytes of every kernel, estimated from the
// shapes and dtypes of the operator that launched it (docs/trace-format.md,
// "Work annotation", lists every formula and assumption).
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/workload.h"

namespace dvfsim {

struct Device;

// One positional input of an operator call, as the profiler recorded it
// (`Input Dims`, `Input type`, `Concrete Inputs`, `Input Strides`).
struct OpInput {
  std::vector<std::vector<std::int64_t>> shapes;  // one per tensor; several for a TensorList
  std::string type;                               // "c10::BFloat16", "float", "Scalar", ...
  std::string concrete;                           // recorded scalar value ("True", "[0]"), or ""
  // Element strides, parallel to `shapes` (PyTorch 2.1+ records them); empty
  // when the trace has none.
  std::vector<std::vector<std::int64_t>> strides;
};

// An operator call (a Kineto `cpu_op`) that launched GPU work.
struct OpCall {
  OpCall() = default;
  OpCall(std::string op_name, std::vector<OpInput> op_inputs)
      : name(std::move(op_name)), inputs(std::move(op_inputs)) {}

  std::string name;  // e.g. "aten::addmm"
  std::vector<OpInput> inputs;
  // Collectives (record_param_comms): elements sent and received, their
  // dtype ("Float", "BFloat16", ...) and the group size; < 0 / "" when absent.
  double in_msg_elements = -1.0;
  double out_msg_elements = -1.0;
  std::string msg_dtype;
  std::int64_t group_size = -1;
};

// The implicit GEMMs of a convolution, per group: output positions
// (N x prod(output spatial)), input positions (N x prod(input spatial)),
// output and input channels per group, and the kernel's taps (prod(kernel)).
struct ConvGeometry {
  double out_positions = 0.0;
  double in_positions = 0.0;
  double out_channels = 0.0;
  double in_channels = 0.0;
  double taps = 0.0;
};

struct OpWork {
  double flops = 0.0;
  double dram_bytes = 0.0;
  // The FLOPs are the operator's GEMMs' alone (a recurrent layer: the gate
  // kernels between its GEMMs do a few FLOPs per element), so they are split
  // over its GEMM kernels only; the bytes over all of its kernels.
  bool flops_on_gemm_kernels = false;
  // Bytes the operator's kernels other than its GEMMs move (a recurrent
  // layer's gate kernels, rnn_work): when > 0, dram_bytes are split over the
  // GEMM kernels and these over the others, each by duration.
  double pointwise_dram_bytes = 0.0;
  // Warp instructions from the shapes where a rule knows them better than the
  // per-class estimate (depthwise convolutions: depthwise_instructions); < 0:
  // none, the kernels take the estimate (traces/instructions.h).
  double instructions = -1.0;
  // L2 traffic beyond a streaming kernel's (Work::l2_excess_bytes): the
  // partly used sectors of a copy that changes the innermost dimension
  // (layout_change_l2_excess_bytes).
  double l2_excess_bytes = 0.0;
  // A convolution's GEMM shapes, for its tensor-core kernels' L2 traffic
  // (conv_l2_bytes_per_flop); nullopt for every other operator.
  std::optional<ConvGeometry> conv = std::nullopt;
  // Every kernel of the operator is one pass over its tensors (cuFFT's
  // passes, fft_work): each kernel moves dram_bytes and issues instructions,
  // rather than a share of them; the FLOPs are still split.
  bool one_pass_per_kernel = false;
};

// L2 traffic per useful FLOP of one pass of a tiled implicit-GEMM
// convolution (cuDNN's tensor-core kernels, whose names carry the pass and
// the tile, read by gemm_tile: "sm90_xmma_fprop_..._tilesize128x64x64_..."). The
// pass is a GEMM of M x N x K: forward, M the output positions and N the
// output channels; data gradient, the input positions and the input
// channels; weight gradient, the output channels and the input channels x
// taps (K: the reduction). A CTA computes an Mt x Nt tile and reads its
// operand rows from L2 once per tile of the other dimension, so each
// element of the M-side operand is read ceil(N / Nt) times and each of the
// N-side operand ceil(M / Mt) times: ceil(N/Nt)/N + ceil(M/Mt)/M bytes per
// FLOP at 2 bytes an element (bf16, fp16; 4 for fp32 and tf32 operands).
// A narrow layer runs on a tile wider than itself and pays the whole tile's
// reads for its few channels. Hopper's kernels (sm90_) share operand loads
// between the CTAs of a cluster: kHopperConvL2Share of that. nullopt when
// the name is no such kernel (no pass, no tile size).
std::optional<double> conv_l2_bytes_per_flop(std::string_view kernel_name, const ConvGeometry& g);
// Fitted on R3D-18's 28 tensor-core convolution kernels of one step
// (Nsight Compute's L2 bytes beyond a GEMM's, validation/h200/heldout5/
// ncu_r3d18_train_b8.subset.csv.gz): 0.531. Held out on fourteen other
// network captures (docs/validation.md, "The convolutions' L2 traffic from
// their shapes"). sm80 kernels read 0.97 of the formula (FLOP-weighted
// median of 78 forward passes) and take it whole.
inline constexpr double kHopperConvL2Share = 0.531;
// L2 bytes per FLOP of a large bf16 GEMM: cuBLAS's kernels in the BERT-base
// and Llama-1B prefill steps moved 0.0081-0.0091 (Nsight Compute,
// validation/h200/classes/). The tensor term was calibrated on GEMMs and
// carries that much; a convolution's L2 traffic beyond it is priced by the
// `l2_excess` term (Work::l2_excess_bytes).
inline constexpr double kGemmL2BytesPerFlop = 0.0085;

// L2 traffic beyond a streaming access of a copy from `src` to `dst` (shapes
// and element strides of one tensor each, `element_bytes` per element):
// where the destination's innermost dimension (stride 1) runs through the
// source with stride s elements, each element read brings a 32-byte sector
// for its s·e bytes apart, so min(32, s·e) - e bytes per element beyond the
// element itself, times kLayoutChangeSectorUse (docs/design.md, "L2 traffic
// of layout-changing copies"). 0 when the layouts agree, a stride is missing
// or the shapes differ.
double layout_change_l2_excess_bytes(std::span<const std::int64_t> dst_shape,
                                     std::span<const std::int64_t> dst_strides,
                                     std::span<const std::int64_t> src_shape,
                                     std::span<const std::int64_t> src_strides, int element_bytes);
// The share of that sector traffic Nsight Compute measured in L2 (L1 serves
// the rest): 0.52 (NCHW to channels-last) and 0.96 (back) on the H200
// operator captures (validation/h200/ops); their mean. Held out: 0.86 on the
// concatenation of a channels-last operand into an NCHW result.
inline constexpr double kLayoutChangeSectorUse = 0.74;

// Warp instructions of a depthwise convolution (one input and one output
// channel per group) with `taps` weights per output (3x3: 9) producing
// `outputs` elements, per pass: forward, data gradient, weight gradient.
enum class ConvPass : std::uint8_t { forward, data_gradient, weight_gradient };
double depthwise_instructions(ConvPass pass, double outputs, double taps);

// Work of one launch of cuDNN's layout transforms (nchwToNhwcKernel,
// nhwcToNchwKernel: the tensors it converts around a tensor-core
// convolution), from its launch. The grid is (ceil(S / 32), ceil(C / 32), N)
// for a tensor of N x C x S elements (S: the spatial extent), 256 threads a
// block, 4 elements a thread in a full 32 x 32 tile; the elements are read as
// the first template type and written as the second. Where one of the
// operator's tensors has that N, C and S, its elements are what moves;
// else, where one has a channel count C of the grid's ceil(C / 32), the
// tiles are C / (32 ceil(C / 32)) full; else full. Instructions follow the
// threads, full tile or not. nullopt when the name is no such kernel, its
// types are unknown or the launch has no block size (under a warp).
struct LayoutTransformWork {
  double dram_bytes = 0.0;
  double instructions = 0.0;
};
std::optional<LayoutTransformWork> layout_transform_work(std::string_view kernel_name,
                                                         const LaunchConfig& launch,
                                                         std::span<const OpInput> op_inputs);
// Nsight Compute on R3D-18's 165 transforms of one step (validation/h200/
// heldout5/ncu_r3d18_train_b8.subset.csv.gz): 16.0 bytes of bf16 read and
// written per thread on the launches of full tiles (4 elements), and 1.147e9
// warp instructions over 3.049e8 threads, 3.76 a thread (3.6-5.6 per launch,
// the few-channel ones included). Held out: docs/validation.md, "cuDNN's
// layout transforms and SIMT convolutions".
inline constexpr double kLayoutTransformElementsPerThread = 4.0;
inline constexpr double kLayoutTransformInstructionsPerThread = 3.76;

// Bytes per element of a profiler dtype name; nullopt for non-tensors
// ("Scalar", "TensorList", "") and unknown names.
std::optional<int> dtype_bytes(std::string_view type);

// Work of a whole operator call from its shapes; nullopt when the operator is
// not modelled or its shapes are missing. `list_element_bytes` is the element
// size assumed for TensorList inputs, whose dtype the profiler does not record.
std::optional<OpWork> estimate_op_work(const OpCall& op, int list_element_bytes = 4);

// Kernels that read a row once per pass, one block a row, so that a pass
// after the first re-reads what the first read:
//  - ATen's softmax (aten/src/ATen/native/cuda/SoftMax.cu) stages a row of
//    at most 1,024 elements and 4 KB in a warp's registers and a longer one
//    that fits a block's 48 KB of shared memory there (the "Smem" kernels),
//    and reads its tensors once, as reduction_work counts; a longer row runs
//    on cunn_SoftMaxForward, which reads its input three times (the
//    maximum, the sum of exponentials, the written pass), or
//    cunn_SoftMaxBackward, which reads its gradient twice (the sum, then
//    the written pass with the output);
//  - layer and RMS norm's vectorized_layer_norm_kernel reads x twice (the
//    row's moments, then the normalising pass), and
//    layer_norm_grad_input_kernel(_vectorized) dy and x twice (the row's
//    sums, then dx), whatever the row's width.
// Between two reads of a line of a row, the blocks resident with it (the
// capture device's SMs and resident_warp_share) read their own rows: a
// re-read finds the line in L2 by the device's L2 residency law for that
// footprint (RooflineParams::l2_resident_share, the fractions calibrated on
// elementwise kernels; no new coefficient), else in DRAM. Returns the bytes
// a kernel reads beyond one read of each tensor: the re-read passes over the
// operator's first input (softmax: the input or the gradient; norm forward:
// x) or its first two (norm backward: dy and x) times the share not
// resident; none when the capture device is unknown or its file has no L2
// model (only the H100 SXM and H200 files calibrate one), as for a narrow
// row on any GPU; 0 for every other kernel. Checked with
// Nsight Compute (docs/validation.md, "A second board for the five, and
// softmax over long rows", "Layer and RMS norm rows read twice"): softmax
// on two GPUs and a sweep of 26 kernels (widths 8,000-131,072) run after the
// rule was committed, and layer and RMS norm on H100s at rows of 0.5 to 16
// KB over 256 to 32,768 rows, measured before the rule and not used to
// shape it: every one within 30 % of its bytes, 0.72-1.08.
double row_reread_bytes(std::string_view kernel, double first_input_bytes,
                        double second_input_bytes, const LaunchConfig& launch,
                        const Device* capture);

// Per-activity facts the reader knows and the annotation needs, parallel to
// Workload::kernels.
struct ActivityFacts {
  std::int32_t op_call = -1;      // index into the OpCall list; -1 when none
  double activity_bytes = -1.0;   // args.bytes of a memset / memcpy; < 0 when absent
  bool device_to_device = false;  // memcpy within device memory (read + write)
};

// The capture device's roofline, at the clocks the trace ran at.
// CUB's device-wide primitives: a name in a namespace CUB is built into
// ("cub::", "at_cuda_detail::cub::") whose function is Device...Kernel
// (DeviceRadixSortOnesweepKernel, DeviceScanKernel, DeviceUniqueByKeySweepKernel,
// ...): the sorts and scans behind torch.sort, unique, nonzero and the
// embedding backward (AnnotateOptions::cub_bandwidth_fraction).
bool is_cub_primitive_kernel(std::string_view kernel_name);

struct CaptureRoofline {
  double dram_bytes_per_s = 0.0;
  double tensor_flops_per_s = 0.0;  // dense fp16/bf16 tensor peak
  double fp32_flops_per_s = 0.0;
  double issue_per_s = 0.0;  // warp instructions per second, whole GPU
};

// Each kernel's mean number of SM kernels running during its traced
// interval, itself included (kernels of its own stream never count) (1: alone; 2: another kernel
// ran beside it all the time); 1 for memsets, memcpys and kernels of no duration.
std::vector<double> traced_concurrency(std::span<const Kernel> kernels);

// Peaks of the capture device `capture.device` (a name or a device file) at
// its default clocks; nullopt when the capture device is unknown.
std::optional<CaptureRoofline> capture_roofline(const CaptureInfo& capture);

// Peaks assumed when the capture device is unknown: 2 TB/s, 100 TFLOP/s
// tensor, 20 TFLOP/s FP32 (a mid-range datacenter GPU; only `trace info`
// uses them, `run` refuses an unknown capture device).
inline constexpr CaptureRoofline kGenericRoofline{2.0e12, 100e12, 20e12, 20e12 / 64};

struct AnnotateOptions {
  // The capture device's peaks; all 0: from workload.capture (capture_roofline),
  // kGenericRoofline when unknown.
  CaptureRoofline roofline{};
  // Fallback for kernels without shapes, as shares of the measured duration
  // on the capture device's roofline:
  //  - tensor-core classes (gemm, conv, attention): FLOPs = duration x
  //    fallback_tensor_fraction x tensor peak, bytes = duration x
  //    fallback_tensor_bandwidth_fraction x DRAM peak (a GEMM is compute-bound);
  //  - every other class: bytes = duration x fallback_bandwidth_fraction x
  //    DRAM peak (fallback_other_bandwidth_fraction for the `other` class),
  //    no FLOPs.
  // The tensor peak is that of the kernel's math pipe (math_pipe: the 16-bit
  // peak over tensor_rate_cost for TF32, the FP32 peak for a SIMT GEMM), and a
  // kernel that overlapped others in the trace takes every fraction over its
  // mean concurrency (traced_concurrency): the fractions are what one kernel
  // reaches with the GPU to itself.
  double fallback_bandwidth_fraction = 0.5;
  // The `other` class (sorts, scatters, index and embedding backward
  // kernels: no operator rule, no streaming access) moves far less: its
  // shaped kernels reach 0.085 of the DRAM peak (median over the four H200
  // captures that have them, 0.082-0.117, leave-one-out 0.083-0.087;
  // scripts/fallback_fractions.py), where the pooled 0.5 above is the
  // elementwise kernels'. docs/validation.md, "Kernels of no known family".
  double fallback_other_bandwidth_fraction = 0.085;
  // CUB's device-wide primitives (is_cub_primitive_kernel: the radix sorts,
  // scans and unique-by-key passes of torch.sort, unique, nonzero and the
  // embedding backward) wait more than they move: Nsight Compute, pooled
  // over their 169 kernels in four steps (DLRM, BERT-base, GPT-3 XL on the
  // H200, an LSTM on an H100), 0.027 of the DRAM peak and 0.022 of the
  // issue peak over duration less fallback_fixed_ns (per step 0.002-0.036
  // and 0.016-0.024), where the class `other`'s fallback gave them 0.085 and,
  // through its 0.771 instructions per byte, about 0.3. Held out: Swin-T's
  // sorts 0.003 and 0.061, GPT-2 sampling's (a 50,257-wide vocabulary)
  // 0.157 and 0.093 (docs/validation.md, "CUB's sorts and scans"). They take
  // these whether or not their operator has a rule; its work goes to its
  // other kernels.
  double cub_bandwidth_fraction = 0.027;
  double cub_issue_fraction = 0.022;
  double fallback_tensor_fraction = 0.7;
  double fallback_tensor_bandwidth_fraction = 0.1;
  // GEMM kernels, by the CTA tile their names carry ("nvjet_sm90_tst_64x8_...",
  // "cutlass_..._256x128_32x3"; gemm_tile): a tile at most
  // fallback_skinny_tile wide in either dimension (or a "gemv" name; also
  // cuBLAS's "splitKreduce" partial-sum kernels) serves
  // a skinny, GEMV-like (decode) product, memory-bound: bytes as the memory
  // classes, one FLOP per byte. A tile of at least fallback_large_tile_area
  // elements (and a name without a tile, and the conv and attention classes)
  // runs at fallback_tensor_fraction; one of at least fallback_mid_tile_area
  // at fallback_mid_tile_tensor_fraction; a smaller one (a small problem) at
  // fallback_small_tile_tensor_fraction; bytes at
  // fallback_gemm_bandwidth_fraction. Fractions: medians over the shaped
  // GEMMs of the H200 validation captures (docs/validation.md, "CUDA graphs",
  // with their leave-one-out values).
  double fallback_skinny_tile = 16;
  double fallback_large_tile_area = 256.0 * 128.0;
  double fallback_mid_tile_area = 128.0 * 128.0;
  double fallback_mid_tile_tensor_fraction = 0.6;
  double fallback_small_tile_tensor_fraction = 0.35;
  double fallback_gemm_bandwidth_fraction = 0.2;
  // The part of a kernel's measured duration that moves no work (launch and
  // drain; the latency model's fixed_ns): the fallback charges its fractions
  // of peak over the duration minus this.
  double fallback_fixed_ns = 1000;
};

// The CTA tile (M x N) a GEMM kernel's name carries: the first "AxB" with
// both sides in 8..512 that follows '_' or "tilesize" and ends at '_' or at
// 'x' (a third, K extent); nullopt when the name has none. A name with
// "gemv" is skinny whatever its tile.
std::optional<std::pair<int, int>> gemm_tile(std::string_view kernel_name);

// Fills kernels[i].work.flops / dram_bytes / source for every kernel. An
// operator's work is split over its compute kernels (not its memsets or
// memcpys) in proportion to their measured durations. Adds a note to the
// workload when its copies have shapes but the trace records no strides.
void annotate_work(Workload& workload, std::span<const OpCall> op_calls,
                   std::span<const ActivityFacts> activities, const AnnotateOptions& options = {});

}  // namespace dvfsim
