#include "models/roofline_overlap.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "sim/error.h"

namespace dvfsim {
namespace {

constexpr const char* kName = "roofline-overlap";

const bool registered = register_model({
    .kind = ModelKind::latency,
    .name = kName,
    .description = "measured duration split into fixed, compute and memory parts by the "
                   "kernel's FLOPs and bytes against the capture device's roofline; the parts "
                   "scale with their clocks and overlap up to kappa",
    .params =
        {
            {"kappa", true, 0, 1, "share of the smaller of compute and memory time not overlapped"},
            {"fixed_ns", true, 0, 1e6, "clock-independent part of a kernel (ns)"},
            {"min_kernel_ns", true, 0, 1e6, "shortest kernel on this device (ns)"},
            {"compute_efficiency", true, 0.01, 10,
             "achieved / peak compute relative to the capture device"},
            {"memory_efficiency", true, 0.01, 10,
             "achieved / peak bandwidth relative to the capture device"},
            {"l2_bytes_per_clock", true, 1, 1e6, "L2 bandwidth per core clock, whole GPU (B)"},
            {"tensor_dram_amplification", true, 1, 100,
             "DRAM bytes of tensor-core kernels over their compulsory bytes"},
            {"l2_bytes", false, 1, 1e12, "L2 capacity (B); absent: no L2 residency"},
            {"l2_resident_below", false, 0, 10,
             "footprint over l2_bytes under which a memory-bound kernel's bytes are L2 hits"},
            {"l2_resident_above", false, 0, 10,
             "footprint over l2_bytes over which none of them are"},
            {"l2_hit_dram_power", false, 0, 1,
             "memory power of a byte served by L2 over that of a DRAM byte"},
        },
    .make_latency = [](const Device& d, const ModelOptions& o) -> std::unique_ptr<LatencyModel> {
      return std::make_unique<RooflineOverlap>(d, o.resident_warps);
    },
    .make_power = {},
    .make_governor = {},
});

}  // namespace

std::optional<RooflineParams> RooflineParams::of_if_used(const Device& d) {
  if (d.latency.model != kName) return std::nullopt;
  return of(d);
}

RooflineParams RooflineParams::of(const Device& d) {
  const Params& p = model_params(d, ModelKind::latency, kName);
  RooflineParams r;
  r.kappa = p.number("kappa");
  r.fixed_ns = p.number("fixed_ns");
  r.min_kernel_ns = p.number("min_kernel_ns");
  r.compute_efficiency = p.number("compute_efficiency");
  r.memory_efficiency = p.number("memory_efficiency");
  r.l2_bytes_per_clock = p.number("l2_bytes_per_clock");
  r.tensor_dram_amplification = p.number("tensor_dram_amplification");
  const char* l2_keys[] = {"l2_bytes", "l2_resident_below", "l2_resident_above",
                           "l2_hit_dram_power"};
  int given = 0;
  for (const char* k : l2_keys) given += p.has(k) ? 1 : 0;
  if (given != 0 && given != 4)
    throw InputError(
        fmt::format("{}: latency: the L2 residency keys go together: l2_bytes, l2_resident_below, "
                    "l2_resident_above and l2_hit_dram_power",
                    d.source_path));
  if (given == 4) {
    r.l2_bytes = p.number("l2_bytes");
    r.l2_resident_below = p.number("l2_resident_below");
    r.l2_resident_above = p.number("l2_resident_above");
    r.l2_hit_dram_power = p.number("l2_hit_dram_power");
    if (!(r.l2_resident_below < r.l2_resident_above))
      throw InputError(fmt::format(
          "{}: latency: l2_resident_below ({}) must be less than l2_resident_above ({})",
          d.source_path, r.l2_resident_below, r.l2_resident_above));
  }
  return r;
}

RooflineOverlap::RooflineOverlap(const Device& target, bool resident_warps)
    : resident_warps_(resident_warps),
      p_(RooflineParams::of(target)),
      form_(target, p_.kappa, p_.min_kernel_ns, p_.l2_bytes_per_clock) {}

Clocks RooflineOverlap::capture_clocks(const Workload& w, const Device& capture) {
  std::int32_t core = w.capture.core_mhz > 0 ? w.capture.core_mhz : capture.default_core_mhz;
  std::int32_t mem = w.capture.memory_mhz > 0 ? w.capture.memory_mhz : capture.default_memory_mhz;
  // A mean clock need not be a supported step: snap to the nearest one.
  auto nearest = [](const std::vector<std::int32_t>& v, std::int32_t x) {
    return *std::min_element(v.begin(), v.end(), [x](std::int32_t a, std::int32_t b) {
      return std::abs(a - x) < std::abs(b - x);
    });
  };
  core = nearest(capture.core_clocks_mhz, core);
  mem = nearest(capture.memory_clocks_mhz, mem);
  return make_clocks(capture, core, mem);
}

std::optional<double> resident_blocks_per_sm(const LaunchConfig& launch, const Device& d) {
  const auto& b = launch.block;
  const double threads = static_cast<double>(b[0]) * b[1] * b[2];
  if (d.max_threads_per_sm <= 0 || d.sm_count <= 0 || threads <= 1) return std::nullopt;
  const double warps = std::ceil(threads / 32.0);
  const double max_warps = d.max_threads_per_sm / 32.0;
  double blocks = std::min<double>(d.max_blocks_per_sm, std::floor(max_warps / warps));
  if (launch.registers_per_thread > 0) {
    const double per_warp = std::ceil(launch.registers_per_thread * 32.0 / 256.0) * 256.0;
    blocks = std::min(blocks, std::floor(d.registers_per_sm / (per_warp * warps)));
  }
  if (launch.shared_memory_bytes > 0)
    blocks = std::min(blocks, std::floor(static_cast<double>(d.shared_memory_per_sm) /
                                         launch.shared_memory_bytes));
  blocks = std::max(blocks, 1.0);  // it ran: at least one block fits
  const auto& g = launch.grid;
  const double ctas = static_cast<double>(g[0]) * g[1] * g[2];
  return std::min(blocks, std::max(1.0, ctas / d.sm_count));
}

double resident_warp_share(const LaunchConfig& launch, const Device& d) {
  const auto per_sm = resident_blocks_per_sm(launch, d);
  if (!per_sm) return 1.0;
  const auto& b = launch.block;
  const double warps = std::ceil(static_cast<double>(b[0]) * b[1] * b[2] / 32.0);
  return std::min(1.0, *per_sm * warps / (d.max_threads_per_sm / 32.0));
}

std::vector<KernelCost> RooflineOverlap::prepare(const Workload& w, const Device& capture,
                                                 const Device& target) const {
  const Clocks c0 = capture_clocks(w, capture);
  const bool same = capture.name == target.name;
  const RooflineParams cp = RooflineParams::of(capture);
  const RooflineParams tp = RooflineParams::of(target);
  // Per-clock throughput ratios capture/target (1 on the capture device).
  const double tensor_ratio = same ? 1.0
                                   : (capture.tensor_flops_per_clock_per_sm * capture.sm_count) /
                                         (target.tensor_flops_per_clock_per_sm * target.sm_count) /
                                         tp.compute_efficiency;
  const double fp32_ratio = same ? 1.0
                                 : (capture.fp32_flops_per_clock_per_sm * capture.sm_count) /
                                       (target.fp32_flops_per_clock_per_sm * target.sm_count) /
                                       tp.compute_efficiency;
  const double bw_ratio = same
                              ? 1.0
                              : (capture.dram_bandwidth_gbs / capture.dram_bandwidth_memory_mhz) /
                                    (target.dram_bandwidth_gbs / target.dram_bandwidth_memory_mhz) /
                                    tp.memory_efficiency;
  // L2 bytes per core clock, capture/target (the L2 floor of memory traffic).
  const double l2_capture = cp.l2_bytes_per_clock;
  const double l2_ratio = same ? 1.0 : l2_capture / tp.l2_bytes_per_clock;
  const double t0_capture = cp.fixed_ns;
  const double t0_target = tp.fixed_ns;
  const double kappa0 = cp.kappa;
  // Tensor kernels' DRAM traffic over their compulsory bytes, per device.
  const double amp_capture = cp.tensor_dram_amplification;
  const double amp_target = tp.tensor_dram_amplification;

  std::vector<KernelCost> out(w.kernels.size());
  // MathPipe per (name_id, attention or not), -1 unread: names repeat.
  std::vector<std::int8_t> pipe_of(2 * w.names.size(), -1);
  std::vector<std::int8_t> fp16_of(w.names.size(), -1);  // fp16 operands per name_id, -1 unread
  std::vector<std::int8_t> batch_norm_of(w.names.size(), -1);  // likewise, a batch-norm pass
  for (std::size_t i = 0; i < w.kernels.size(); ++i) {
    const Kernel& k = w.kernels[i];
    KernelCost& kc = out[i];
    // Same instruction count on every target: an assumption (another
    // architecture compiles the kernel to a different mix), docs/devices.md.
    kc.instructions = k.work.instructions;
    // Tensor-core kernels against the 16-bit tensor peak, their FLOPs in
    // 16-bit-rate terms (a TF32 FLOP takes two); FP32 SIMT GEMMs against the
    // FP32 peak, their power through the SIMT term (sim/workload.h, MathPipe).
    MathPipe pipe = MathPipe::simt;
    if (k.cls == KernelClass::gemm || k.cls == KernelClass::conv ||
        k.cls == KernelClass::attention) {
      std::int8_t& p = pipe_of[2 * std::size_t{k.name_id} + (k.cls == KernelClass::attention)];
      if (p < 0) p = static_cast<std::int8_t>(math_pipe(k.cls, w.name(k)));
      pipe = static_cast<MathPipe>(p);
    }
    kc.tensor = pipe != MathPipe::simt;
    kc.fp8 = pipe == MathPipe::tensor_fp8;
    if (pipe == MathPipe::tensor) {
      std::int8_t& f = fp16_of[k.name_id];
      if (f < 0) f = static_cast<std::int8_t>(fp16_operands(w.name(k)));
      kc.fp16 = f > 0;
    }
    // Operand zeros change what the tensor cores draw; SIMT pipes: not measured.
    if (kc.tensor) kc.zeroed_operands = k.work.zeroed_operands;
    kc.simt_matrix = !kc.tensor && (k.cls == KernelClass::gemm || k.cls == KernelClass::conv ||
                                    k.cls == KernelClass::attention);
    kc.flops = k.work.flops * (kc.tensor ? tensor_rate_cost(pipe) : 1.0);
    // DRAM bytes as they cross the memory bus on each device.
    const double bytes = k.work.dram_bytes * (kc.tensor ? amp_capture : 1.0);
    const double amp_ratio = kc.tensor && !same ? amp_target / amp_capture : 1.0;
    kc.dram_bytes = bytes * amp_ratio;
    // Sector traffic of a layout change: the same on every target (32-byte
    // sectors on every NVIDIA GPU since Volta).
    kc.l2_excess_bytes = k.work.l2_excess_bytes;
    // Memory-bound kernels with shapes whose data fit in the target's L2
    // (their footprint known only from shapes: the fallback's bytes are a
    // rate times the duration, not a footprint).
    if (k.work.source == WorkSource::shapes &&
        (k.cls == KernelClass::elementwise || k.cls == KernelClass::reduction ||
         k.cls == KernelClass::norm))
      kc.dram_bytes *= tp.dram_power_share(k.work.dram_bytes);
    const double d = static_cast<double>(k.work.duration_ns);
    if (k.cls == KernelClass::communication) {
      // Collectives wait on the interconnect (NVLink, PCIe, network) and on
      // the other ranks: assumed independent of this GPU's clocks, and the
      // same on every target (docs/devices.md).
      kc.fixed_ns = d;
      continue;
    }
    const double t0 = std::min(t0_capture, d);
    const double rest = d - t0;
    const double peak =
        kc.tensor ? capture.tensor_flops_per_s(c0.core_mhz) : capture.fp32_flops_per_s(c0.core_mhz);
    const double tc_ideal = kc.flops > 0 ? kc.flops / peak * 1e9 : 0.0;
    const double tm_ideal = bytes > 0 ? bytes / capture.dram_bytes_per_s(c0.memory_mhz) * 1e9 : 0.0;
    // Core-clocked part: the FLOPs, or moving the bytes through L2, whichever is longer.
    const double tl_ideal =
        bytes > 0 && l2_capture > 0 ? bytes / (l2_capture * c0.core_mhz * 1e6) * 1e9 : 0.0;
    const double tcore_ideal = std::max(tc_ideal, tl_ideal);
    double tc = rest, tl = 0.0, tm = 0.0;
    const double ideal = std::max(tcore_ideal, tm_ideal) + kappa0 * std::min(tcore_ideal, tm_ideal);
    if (ideal > 0) {
      const double s = rest / ideal;  // the kernel's distance from its roofline
      tc = s * tc_ideal;
      tl = s * tl_ideal;
      tm = s * tm_ideal;
    }
    kc.fixed_ns = same ? t0 : (t0_capture > 0 ? t0 * t0_target / t0_capture : t0_target);
    // The busy term's share (sim/models.h): the grid's CTAs over the target's
    // SMs; no SM executes during launch and drain. Copies and memsets have no
    // grid; a launch configuration of one thread in one CTA is what a trace
    // without one reads as, so it counts as unknown (the whole GPU).
    if (RooflineParams::has_grid(k.cls)) {
      const auto& g = k.launch.grid;
      const auto& b = k.launch.block;
      const double ctas = static_cast<double>(g[0]) * g[1] * g[2];
      const double threads = static_cast<double>(b[0]) * b[1] * b[2];
      if (ctas * threads > 1 && target.sm_count > 0)
        kc.sm_share = std::min(1.0, ctas / target.sm_count);
      // Batch-norm passes draw the busy term by the warps they keep on each
      // SM: ATen's NCHW batch norm (one block per channel) measured at 16 to
      // 512 channels drew sqrt(resident warp share) of it, channels-last
      // batch norm held out (docs/calibration.md, "Kernels that hold few
      // warps"). Layer and group norm, measured too, are not: their errors
      // grew under it.
      if (resident_warps_ && k.cls == KernelClass::norm) {
        std::int8_t& bn = batch_norm_of[k.name_id];
        if (bn < 0) bn = static_cast<std::int8_t>(is_batch_norm_kernel(w.name(k)));
        if (bn > 0) kc.sm_share *= std::sqrt(resident_warp_share(k.launch, target));
      }
      kc.drain_ns = kc.fixed_ns;
    }
    kc.compute_ns_mhz =
        std::max(tc * (kc.tensor ? tensor_ratio : fp32_ratio), tl * l2_ratio * amp_ratio) *
        c0.core_mhz;
    kc.memory_ns_mhz = tm * c0.memory_mhz * bw_ratio * amp_ratio;
  }
  return out;
}

}  // namespace dvfsim
