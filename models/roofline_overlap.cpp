#include "models/roofline_overlap.h"

#include <algorithm>

namespace dvfsim {

RooflineOverlap::RooflineOverlap(const Device& target)
    : target_(target), kappa_(target.latency.kappa), min_ns_(target.latency.min_kernel_ns) {}

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

std::vector<KernelCost> RooflineOverlap::prepare(const Workload& w, const Device& capture,
                                                 const Device& target) const {
  const Clocks c0 = capture_clocks(w, capture);
  const bool same = capture.name == target.name;
  // Per-clock throughput ratios capture/target (1 on the capture device).
  const double tensor_ratio = same ? 1.0
                                   : (capture.tensor_flops_per_clock_per_sm * capture.sm_count) /
                                         (target.tensor_flops_per_clock_per_sm * target.sm_count) /
                                         target.latency.compute_efficiency;
  const double fp32_ratio = same ? 1.0
                                 : (capture.fp32_flops_per_clock_per_sm * capture.sm_count) /
                                       (target.fp32_flops_per_clock_per_sm * target.sm_count) /
                                       target.latency.compute_efficiency;
  const double bw_ratio = same
                              ? 1.0
                              : (capture.dram_bandwidth_gbs / capture.dram_bandwidth_memory_mhz) /
                                    (target.dram_bandwidth_gbs / target.dram_bandwidth_memory_mhz) /
                                    target.latency.memory_efficiency;
  // L2 bytes per core clock, capture/target (the L2 floor of memory traffic).
  const double l2_capture = capture.latency.l2_bytes_per_clock;
  const double l2_ratio = same ? 1.0 : l2_capture / target.latency.l2_bytes_per_clock;
  const double t0_capture = capture.latency.fixed_ns;
  const double t0_target = target.latency.fixed_ns;
  const double kappa0 = capture.latency.kappa;
  // Tensor kernels' DRAM traffic over their compulsory bytes, per device.
  const double amp_capture = capture.latency.tensor_dram_amplification;
  const double amp_target = target.latency.tensor_dram_amplification;

  std::vector<KernelCost> out(w.kernels.size());
  for (std::size_t i = 0; i < w.kernels.size(); ++i) {
    const Kernel& k = w.kernels[i];
    KernelCost& kc = out[i];
    kc.flops = k.work.flops;
    // Same instruction count on every target: an assumption (another
    // architecture compiles the kernel to a different mix), docs/devices.md.
    kc.instructions = k.work.instructions;
    kc.tensor = k.cls == KernelClass::gemm || k.cls == KernelClass::attention;
    // DRAM bytes as they cross the memory bus on each device.
    const double bytes = k.work.dram_bytes * (kc.tensor ? amp_capture : 1.0);
    const double amp_ratio = kc.tensor && !same ? amp_target / amp_capture : 1.0;
    kc.dram_bytes = bytes * amp_ratio;
    const double d = static_cast<double>(k.work.duration_ns);
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
    kc.compute_ns_mhz =
        std::max(tc * (kc.tensor ? tensor_ratio : fp32_ratio), tl * l2_ratio * amp_ratio) *
        c0.core_mhz;
    kc.memory_ns_mhz = tm * c0.memory_mhz * bw_ratio * amp_ratio;
  }
  return out;
}

Utilisation RooflineOverlap::utilisation(const KernelCost& k, const Clocks& c,
                                         double duration_ns) const {
  Utilisation u;
  u.busy = 1.0;
  if (duration_ns <= 0) return u;
  const double s = duration_ns * 1e-9;
  if (k.flops > 0 && k.tensor)
    u.compute = std::min(1.0, k.flops / (s * target_.tensor_flops_per_s(c.core_mhz)));
  if (k.instructions > 0)
    u.simt = std::min(1.0, k.instructions / (s * target_.issue_per_s(c.core_mhz)));
  if (k.dram_bytes > 0)
    u.memory = std::min(1.0, k.dram_bytes / (s * target_.dram_bytes_per_s(c.memory_mhz)));
  return u;
}

}  // namespace dvfsim
