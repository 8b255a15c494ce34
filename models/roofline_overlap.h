#pragma once
// The `roofline-overlap` latency model (docs/design.md, "Models"):
//   t(fc, fm) = t0 + max(tc·fc0/fc, tm·fm0/fm) + κ·min(tc·fc0/fc, tm·fm0/fm)
// The measured duration d at the capture clocks (fc0, fm0) is split into a fixed
// part t0, a compute part tc and a memory part tm in the proportions of the
// kernel's FLOPs and bytes against the capture device's peaks; a kernel with
// neither is taken as core-clock bound (launch- or latency-bound SM work).
// The core-clocked part is the longer of the FLOPs and the bytes moved through
// L2 (l2_bytes_per_clock x core clock), so memory-bound kernels slow down once
// the core clock falls below the point where L2 can no longer feed DRAM.
// Tensor-core kernels move tensor_dram_amplification x their compulsory bytes
// through DRAM on each device (operand panels re-read when the L2 is small);
// memory-bound kernels whose data fit in L2 draw less DRAM power
// (RooflineParams::dram_power_share).
// Retargeting scales tc by peak compute per clock and tm by bandwidth per
// memory clock, divided by the target's efficiency factors.
//
// Its parameters are the keys of a device file's `latency: {model:
// roofline-overlap, ...}` section (declared in roofline_overlap.cpp); the
// capture device's section is read too, so it must use this model as well.
#include <optional>

#include "sim/model_forms.h"
#include "sim/model_registry.h"

namespace dvfsim {

struct RooflineParams {
  double kappa = 0.1;               // overlap penalty of the smaller part
  double fixed_ns = 1000.0;         // clock-independent part t0 of a kernel
  double min_kernel_ns = 1500.0;    // floor for any kernel on this device
  double compute_efficiency = 1.0;  // achieved / peak, relative to the capture device
  double memory_efficiency = 1.0;
  // On-chip (L2) bandwidth in bytes per core clock, summed over the GPU. DRAM
  // traffic also crosses L2, so a memory-bound kernel cannot move its bytes
  // faster than l2_bytes_per_clock x core clock: below that knee, lowering
  // the core clock slows memory-bound kernels too.
  double l2_bytes_per_clock = 0.0;
  // DRAM traffic of tensor-core kernels (GEMM, attention) relative to their
  // compulsory bytes (each operand read once, the result written once): > 1
  // when the L2 is too small to hold the operand panels that tiles re-read.
  double tensor_dram_amplification = 1.0;
  // L2 residency of memory-bound kernels (elementwise, reduction, norm) with
  // shapes: a kernel whose footprint (its compulsory bytes, read and written)
  // is under l2_resident_below x l2_bytes finds its data in L2, one over
  // l2_resident_above x l2_bytes in DRAM, linearly between; a byte served by
  // L2 draws l2_hit_dram_power of a DRAM byte's memory power. Only the bytes
  // that draw power change (KernelCost::dram_bytes), not the kernel's time.
  // l2_bytes 0 (the keys absent): every byte is DRAM traffic.
  double l2_bytes = 0.0;
  double l2_resident_below = 0.0;
  double l2_resident_above = 0.0;
  double l2_hit_dram_power = 1.0;
  // Share of `bytes` of data still in L2 when read again after that many
  // bytes (a footprint) went through it: 0 without an L2 model.
  double l2_resident_share(double bytes) const {
    if (!(l2_bytes > 0)) return 0.0;
    const double lo = l2_resident_below * l2_bytes, hi = l2_resident_above * l2_bytes;
    return bytes <= lo ? 1.0 : bytes >= hi ? 0.0 : (hi - bytes) / (hi - lo);
  }
  // Share of a memory-bound kernel's bytes that draws DRAM power, for a
  // footprint of `bytes`: 1 without an L2 model.
  double dram_power_share(double bytes) const {
    const double hit = l2_resident_share(bytes);
    return 1.0 - hit + hit * l2_hit_dram_power;
  }
  // The device's `latency:` section; InputError when it uses another model.
  static RooflineParams of(const Device& d);
  // The same, nullopt when the device uses another latency model or none.
  static std::optional<RooflineParams> of_if_used(const Device& d);
  // Whether a kernel of this class runs a grid on the SMs, and so has a
  // launch and drain (fixed_ns) in which no SM draws the busy term: not
  // copies and memsets (the copy engines; sim/models.h, KernelCost::drain_ns).
  static bool has_grid(KernelClass c) {
    return c != KernelClass::memcpy && c != KernelClass::memset;
  }
};

// The warps a kernel keeps resident on each SM its grid occupies, over the
// most an SM can hold (Device::max_threads_per_sm / 32), in (0, 1]: its
// blocks spread evenly over the SMs (one each while the grid has fewer CTAs
// than SMs), at most as many per SM as the threads, blocks, registers
// (allocated per warp in units of 256) and shared memory of the SM allow
// (the 1 KB of shared memory the driver reserves per block on recent GPUs
// is not counted). 1 when the device gives no limits or the launch gives no
// block size.
double resident_warp_share(const LaunchConfig& launch, const Device& d);
// The blocks of the launch each SM its grid occupies holds at once, by the
// same limits (resident_warp_share is these blocks' warps over the SM's);
// nullopt when the device gives no limits or the launch no block size.
std::optional<double> resident_blocks_per_sm(const LaunchConfig& launch, const Device& d);

class RooflineOverlap final : public LatencyModel {
 public:
  // resident_warps: whether batch-norm passes draw the busy term by their
  // resident warps (ModelOptions::resident_warps).
  explicit RooflineOverlap(const Device& target, bool resident_warps = true);
  std::vector<KernelCost> prepare(const Workload& w, const Device& capture,
                                  const Device& target) const override;
  double duration_ns(const KernelCost& k, const Clocks& c) const override {
    return form_.duration_ns(k, c);
  }
  Utilisation utilisation(const KernelCost& k, const Clocks& c, double duration_ns) const override {
    return form_.utilisation(k, c, duration_ns);
  }
  const RooflineForm* inline_form() const override { return &form_; }

  // Capture clocks of a workload: its recorded ones, else the capture device's defaults.
  static Clocks capture_clocks(const Workload& w, const Device& capture);

 private:
  bool resident_warps_;
  RooflineParams p_;
  RooflineForm form_;  // kappa, the kernel floor and the target's rates per clock
};

}  // namespace dvfsim
