#pragma once
// The `roofline-overlap` latency model (DESIGN.md, "Models"):
//   t(fc, fm) = t0 + max(tc·fc0/fc, tm·fm0/fm) + κ·min(tc·fc0/fc, tm·fm0/fm)
// The measured duration d at the capture clocks (fc0, fm0) is split into a fixed
// part t0, a compute part tc and a memory part tm in the proportions of the
// kernel's FLOPs and bytes against the capture device's peaks; a kernel with
// neither is taken as core-clock bound (launch- or latency-bound SM work).
// The core-clocked part is the longer of the FLOPs and the bytes moved through
// L2 (l2_bytes_per_clock x core clock), so memory-bound kernels slow down once
// the core clock falls below the point where L2 can no longer feed DRAM.
// Tensor-core kernels move tensor_dram_amplification x their compulsory bytes
// through DRAM on each device (operand panels re-read when the L2 is small).
// Retargeting scales tc by peak compute per clock and tm by bandwidth per
// memory clock, divided by the target's efficiency factors.
#include "sim/models.h"

namespace dvfsim {

class RooflineOverlap final : public LatencyModel {
 public:
  explicit RooflineOverlap(const Device& target);
  std::vector<KernelCost> prepare(const Workload& w, const Device& capture,
                                  const Device& target) const override;
  double duration_ns(const KernelCost& k, const Clocks& c) const override {
    const double tc = k.compute_ns_mhz / c.core_mhz;
    const double tm = k.memory_ns_mhz / c.memory_mhz;
    const double hi = tc > tm ? tc : tm, lo = tc > tm ? tm : tc;
    const double t = k.fixed_ns + hi + kappa_ * lo;
    return t > min_ns_ ? t : min_ns_;
  }
  Utilisation utilisation(const KernelCost& k, const Clocks& c, double duration_ns) const override;

  // Capture clocks of a workload: its recorded ones, else the capture device's defaults.
  static Clocks capture_clocks(const Workload& w, const Device& capture);

 private:
  const Device& target_;
  double kappa_;
  double min_ns_;
};

}  // namespace dvfsim
