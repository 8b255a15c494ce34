#pragma once
// The interfaces the engine replays against: a latency model (how long a kernel
// takes at given clocks) and a power model (what the GPU draws). Implementations
// live in models/ and are chosen by name (sim/model_registry.h).
#include <cstdint>
#include <memory>
#include <vector>

#include "sim/device.h"
#include "sim/workload.h"

namespace dvfsim {

// A pair of clocks, with their indices into the device's clock lists.
struct Clocks {
  std::int32_t core_mhz = 0;
  std::int32_t memory_mhz = 0;
  std::int16_t core_idx = 0;
  std::int16_t memory_idx = 0;
  friend bool operator==(const Clocks& a, const Clocks& b) {
    return a.core_mhz == b.core_mhz && a.memory_mhz == b.memory_mhz;
  }
};
Clocks make_clocks(const Device& d, std::int32_t core_mhz, std::int32_t memory_mhz);
// The device's default pair (what the GPU runs when nobody sets clocks).
Clocks default_clocks(const Device& d);

// A kernel's work split by the latency model, on the target device. The
// clock-dependent parts are stored as time x clock: at core clock fc (MHz) the
// compute part takes compute_ns_mhz / fc ns, likewise the memory part.
struct KernelCost {
  double fixed_ns = 0.0;        // does not scale with clocks
  double compute_ns_mhz = 0.0;  // compute part x core clock
  double memory_ns_mhz = 0.0;   // memory part x memory clock
  double flops = 0.0;
  double dram_bytes = 0.0;
  double instructions = 0.0;  // warp instructions on the SMs (Work::instructions)
  bool tensor = false;        // runs on the tensor cores (peak compute = tensor peak)
  // A matrix product on the FP32 SIMT pipes (MathPipe::simt of a GEMM, convolution
  // or attention kernel): its FLOPs draw the power models' `simt_matrix` term.
  bool simt_matrix = false;
  // A tensor-core kernel on fp16 operands (fp16_operands, sim/workload.h): its
  // tensor utilisation also counts as Utilisation::compute_fp16.
  bool fp16 = false;
  // A kernel on the FP8 tensor pipe (MathPipe::tensor_fp8): its tensor
  // utilisation (16-bit-equivalent) also counts as Utilisation::compute_fp8.
  bool fp8 = false;
  // How many of a tensor-core kernel's two operands a ReLU zeroed
  // (Work::zeroed_operands; 0 for every other kernel): its tensor utilisation
  // also counts as Utilisation::compute_zeroed1 or compute_zeroed2.
  std::uint8_t zeroed_operands = 0;
  // L2 traffic beyond a streaming kernel's (Work::l2_excess_bytes): the
  // power models' `l2_excess` term, no time.
  double l2_excess_bytes = 0.0;
  // What share of the GPU's SMs executes the kernel, and for how long: its
  // grid's CTAs over the SM count (at most 1; 1 when the trace gives no launch
  // configuration; for a batch-norm pass times the square root of its
  // resident warp share, models/roofline_overlap.h), and, of its time, the launch and drain in
  // which no SM of it executes (the latency model's clock-independent part). The power models'
  // `busy` term is drawn only by executing SMs (Utilisation::busy).
  double sm_share = 1.0;
  double drain_ns = 0.0;
};

// Fractions of the time a unit is busy, averaged over an interval: `busy` the
// GPU's SMs execute a kernel (a kernel whose grid fills the GPU has busy 1 outside
// its launch and drain; KernelCost::sm_share), `compute` the tensor cores run at peak, `memory`
// DRAM runs at peak bandwidth, `simt` every warp scheduler issues an instruction each cycle (warp
// instructions / (SMs x schedulers x clock x time)), `simt_matrix` the FP32 SIMT pipes run a
// matrix product's FLOPs at their peak (FP32 FLOP/s of KernelCost::simt_matrix kernels over the
// FP32 peak), `compute_fp16` the part of `compute` whose operands are fp16, `compute_zeroed1` and
// `compute_zeroed2` the parts whose one or two operands a ReLU zeroed, `compute_fp8` the part on
// FP8 operands, `l2_excess` the L2 moves traffic beyond streaming at its peak rate
// (KernelCost::l2_excess_bytes per second over RooflineParams::l2_bytes_per_clock x the core
// clock). Time-weighted averages of Utilisation are valid Utilisations; power models must be
// linear in them (the governor relies on it).
struct Utilisation {
  double busy = 0.0;
  double compute = 0.0;
  double memory = 0.0;
  double simt = 0.0;
  double simt_matrix = 0.0;
  double compute_fp16 = 0.0;  // the part of `compute` on fp16 operands (KernelCost::fp16)
  double l2_excess = 0.0;
  // The parts of `compute` with one and with two operands zeroed by a ReLU
  // (KernelCost::zeroed_operands).
  double compute_zeroed1 = 0.0;
  double compute_zeroed2 = 0.0;
  double compute_fp8 = 0.0;  // the part of `compute` on FP8 operands (KernelCost::fp8)

  // Accumulating activity over an interval: adds `u` held for `w` (ns).
  void add(const Utilisation& u, double w) {
    busy += u.busy * w;
    compute += u.compute * w;
    memory += u.memory * w;
    simt += u.simt * w;
    simt_matrix += u.simt_matrix * w;
    compute_fp16 += u.compute_fp16 * w;
    l2_excess += u.l2_excess * w;
    compute_zeroed1 += u.compute_zeroed1 * w;
    compute_zeroed2 += u.compute_zeroed2 * w;
    compute_fp8 += u.compute_fp8 * w;
  }
  // The accumulation divided by the interval's length: the time-weighted average.
  Utilisation per(double interval) const {
    return {busy / interval,       compute / interval,         memory / interval,
            simt / interval,       simt_matrix / interval,     compute_fp16 / interval,
            l2_excess / interval,  compute_zeroed1 / interval, compute_zeroed2 / interval,
            compute_fp8 / interval};
  }
};

struct RooflineForm;  // sim/model_forms.h
struct CmosForm;

class LatencyModel {
 public:
  virtual ~LatencyModel() = default;
  // Splits every kernel of `w` (measured on `capture` at the workload's capture
  // clocks) into a cost on `target`.
  virtual std::vector<KernelCost> prepare(const Workload& w, const Device& capture,
                                          const Device& target) const = 0;
  virtual double duration_ns(const KernelCost& k, const Clocks& c) const = 0;
  // Utilisation of the kernel while it runs at `c` for `duration_ns`.
  virtual Utilisation utilisation(const KernelCost& k, const Clocks& c,
                                  double duration_ns) const = 0;
  // The model's closed form, when it has one the replay's hot path evaluates
  // inline with the same numbers (sim/model_forms.h); nullptr: virtual calls.
  virtual const RooflineForm* inline_form() const { return nullptr; }
};

class PowerModel {
 public:
  virtual ~PowerModel() = default;
  // Board power in W; linear in `u`. Utilisation{} is context-idle power.
  virtual double power_w(const Utilisation& u, const Clocks& c) const = 0;
  // Power with no CUDA context, at the device's deep-idle clock.
  virtual double deep_idle_w() const = 0;
  // As LatencyModel::inline_form.
  virtual const CmosForm* inline_form() const { return nullptr; }
};

// The firmware: what the GPU does to its own core clock. Called every period
// with the activity of the last period; returns the highest core clock it
// allows from now on (the power cap).
class Governor {
 public:
  virtual ~Governor() = default;
  virtual std::int64_t period_ns() const = 0;
  virtual std::int32_t cap_core_mhz(const Utilisation& last_period, const Clocks& current,
                                    std::int32_t current_cap_mhz) const = 0;
};

}  // namespace dvfsim
