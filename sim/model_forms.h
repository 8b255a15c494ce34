#pragma once
// Closed forms of the shipped latency and power models (models/roofline_overlap.h,
// models/cmos_power.h) with their per-clock tables, so that the replay's hot
// path (sim/gpu_timeline.h) evaluates a kernel's duration, utilisation and
// power inline instead of through three virtual calls. A model builds its form
// once, when it is made for a device, and its virtual methods call the same
// inline functions: the fused path and the virtual interface give the same
// numbers bit for bit (tests/sim/model_forms_test.cpp), and those are the
// numbers the models gave before the forms existed (same operations in the
// same order; the tables hold what was recomputed per call).
//
// A model without a form (a test double, a future model) returns nullptr from
// inline_form() and the timeline calls it virtually.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "sim/models.h"

namespace dvfsim {

// `roofline-overlap`: t = max(min_ns, t0 + max(tc, tm) + κ·min(tc, tm)) with
// tc = compute_ns_mhz / fc, tm = memory_ns_mhz / fm; a unit's utilisation is
// its work over (duration x the target's peak rate at the clocks), at most 1.
struct RooflineForm {
  // Two doubles, for packed divisions (GCC and clang vector extension).
  using V2 = double __attribute__((vector_size(16)));

  double kappa = 0.0;
  double min_ns = 0.0;
  struct CoreRates {
    double tensor_flops_per_s = 0.0;  // Device::tensor_flops_per_s
    double issue_per_s = 0.0;         // Device::issue_per_s
    double fp32_flops_per_s = 0.0;    // Device::fp32_flops_per_s
    double l2_bytes_per_s = 0.0;      // l2_bytes_per_clock x clock
    std::int32_t mhz = 0;
  };
  struct MemoryRates {
    std::int32_t mhz = 0;
    double dram_bytes_per_s = 0.0;  // Device::dram_bytes_per_s
  };
  std::vector<CoreRates> core;      // per core clock index of the target
  std::vector<MemoryRates> memory;  // per memory clock index
  const Device* device = nullptr;   // the target: rates at clocks outside the tables
  double l2_bytes_per_clock = 0.0;  // RooflineParams::l2_bytes_per_clock (0: no L2 term)

  RooflineForm() = default;
  RooflineForm(const Device& d, double kappa_, double min_ns_, double l2_bytes_per_clock_)
      : kappa(kappa_), min_ns(min_ns_), l2_bytes_per_clock(l2_bytes_per_clock_) {
    device = &d;
    core.reserve(d.core_clocks_mhz.size());
    for (const std::int32_t f : d.core_clocks_mhz)
      core.push_back(
          {d.tensor_flops_per_s(f), d.issue_per_s(f), d.fp32_flops_per_s(f), l2_bytes_per_s(f), f});
    memory.reserve(d.memory_clocks_mhz.size());
    for (const std::int32_t f : d.memory_clocks_mhz) memory.push_back({f, d.dram_bytes_per_s(f)});
  }

  // The clocks and the target's rates at one clock pair, looked up once: the
  // timeline keeps them while its effective clocks hold (sim/gpu_timeline.h).
  struct At {
    V2 mhz;         // {core, memory} clock in MHz
    V2 core_rates;  // {tensor FLOP/s, issue/s} at the core clock
    double fp32_flops_per_s = 0.0;
    double dram_bytes_per_s = 0.0;
    double l2_bytes_per_s = 0.0;
  };
  At at(const Clocks& c) const {
    return {V2{static_cast<double>(c.core_mhz), static_cast<double>(c.memory_mhz)}, core_rates(c),
            fp32_flops_per_s(c), dram_bytes_per_s(c), l2_bytes_per_s(c)};
  }

  double duration_ns(const KernelCost& k, const Clocks& c) const {
    return duration_at(k, V2{static_cast<double>(c.core_mhz), static_cast<double>(c.memory_mhz)});
  }
  double duration_ns(const KernelCost& k, const At& a) const { return duration_at(k, a.mhz); }

  // The table's rates for `c` (by its indices); computed from the device
  // when `c` carries indices that do not name its clocks (hand-made Clocks).
  V2 core_rates(const Clocks& c) const {
    const auto i = static_cast<std::size_t>(c.core_idx);
    if (i < core.size() && core[i].mhz == c.core_mhz)
      return V2{core[i].tensor_flops_per_s, core[i].issue_per_s};
    return V2{device->tensor_flops_per_s(c.core_mhz), device->issue_per_s(c.core_mhz)};
  }
  double fp32_flops_per_s(const Clocks& c) const {
    const auto i = static_cast<std::size_t>(c.core_idx);
    if (i < core.size() && core[i].mhz == c.core_mhz) return core[i].fp32_flops_per_s;
    return device->fp32_flops_per_s(c.core_mhz);
  }
  double l2_bytes_per_s(std::int32_t core_mhz) const {
    return l2_bytes_per_clock * static_cast<double>(core_mhz) * 1e6;
  }
  double l2_bytes_per_s(const Clocks& c) const {
    const auto i = static_cast<std::size_t>(c.core_idx);
    if (i < core.size() && core[i].mhz == c.core_mhz) return core[i].l2_bytes_per_s;
    return l2_bytes_per_s(c.core_mhz);
  }
  double dram_bytes_per_s(const Clocks& c) const {
    const auto i = static_cast<std::size_t>(c.memory_idx);
    if (i < memory.size() && memory[i].mhz == c.memory_mhz) return memory[i].dram_bytes_per_s;
    return device->dram_bytes_per_s(c.memory_mhz);
  }

  Utilisation utilisation(const KernelCost& k, const Clocks& c, double duration_ns) const {
    return utilisation_at(k, core_rates(c), fp32_flops_per_s(c), dram_bytes_per_s(c),
                          l2_bytes_per_s(c), duration_ns);
  }
  Utilisation utilisation(const KernelCost& k, const At& a, double duration_ns) const {
    return utilisation_at(k, a.core_rates, a.fp32_flops_per_s, a.dram_bytes_per_s, a.l2_bytes_per_s,
                          duration_ns);
  }

 private:
  using I2 = decltype(V2{} < V2{});  // lane masks: the type of a V2 comparison
  static I2 bits(V2 v) { return reinterpret_cast<I2>(v); }
  // Per lane: m ? a : b (m all ones or all zeros), without a branch.
  static V2 select(I2 m, V2 a, V2 b) {
    return reinterpret_cast<V2>((m & bits(a)) | (~m & bits(b)));
  }
  // Per lane std::min(1.0, x), NaN included (std::min returns its first argument then).
  static V2 min1(V2 x) {
    const V2 one = {1.0, 1.0};
    return select(x < one, x, one);
  }

  double duration_at(const KernelCost& k, V2 mhz) const {
    // The two quotients in one packed division (each lane IEEE-rounded as alone).
    const V2 q = V2{k.compute_ns_mhz, k.memory_ns_mhz} / mhz;
    const double tc = q[0];
    const double tm = q[1];
    // hi = tc > tm ? tc : tm, lo = tc > tm ? tm : tc, by a lane mask: a
    // branch on which part bounds the kernel mispredicts on the kernel mix.
    const V2 hl = select(V2{tc, tc} > V2{tm, tm}, V2{tc, tm}, V2{tm, tc});
    const double hi = hl[0], lo = hl[1];
    const double t = k.fixed_ns + hi + kappa * lo;
    return t > min_ns ? t : min_ns;
  }

  // busy: the grid's share of the SMs outside launch and drain,
  //   drain > 0 ? (duration > drain ? sm_share x (1 - drain / duration) : 0) : sm_share;
  // a unit: its work over (time x peak rate), at most 1, and 0 without work
  // (compute: tensor kernels only against the tensor peak; simt_matrix: FP32
  // matrix products only against the FP32 peak, the two being exclusive in
  // KernelCost from the roofline model: one quotient of the FLOPs, by the
  // peak of the kernel's pipe, serves either). The five quotients in two packed
  // divisions (each lane the quotient alone) and every choice a lane mask,
  // not a branch (the kernels' mix mispredicts branches): the same values as
  // the branches, a quotient not chosen is discarded whatever it holds.
  Utilisation utilisation_at(const KernelCost& k, V2 core_rates, double fp32_flops_per_s,
                             double dram_bytes_per_s, double l2_bytes_per_s,
                             double duration_ns) const {
    Utilisation u;
    u.busy = k.sm_share;
    if (duration_ns <= 0) return u;
    const double s = duration_ns * 1e-9;
    const V2 zero = {0.0, 0.0};
    // {drain / duration, bytes / (s x bandwidth)}, {flops / (s x tensor peak), instr / (s x issue)}
    const V2 qd = V2{k.drain_ns, k.dram_bytes} / V2{duration_ns, s * dram_bytes_per_s};
    // The FLOPs' peak: the tensor one for tensor kernels, else the FP32 one.
    const I2 tensor = {k.tensor ? -1 : 0, -1};
    const V2 rates = select(tensor, core_rates, V2{fp32_flops_per_s, core_rates[1]});
    const V2 qc = V2{k.flops, k.instructions} / (s * rates);
    const V2 work = {k.flops, k.instructions};
    const V2 mc = min1(qc);
    const I2 has_work = work > zero;
    const V2 cs = reinterpret_cast<V2>(bits(mc) & (has_work & tensor));
    u.compute = cs[0];
    u.simt = cs[1];
    const I2 matrix = {k.simt_matrix ? -1 : 0, 0};
    u.simt_matrix = reinterpret_cast<V2>(bits(mc) & (has_work & matrix))[0];
    u.compute_fp16 = k.fp16 ? u.compute : 0.0;
    u.compute_fp8 = k.fp8 ? u.compute : 0.0;
    if (k.zeroed_operands != 0) [[unlikely]]
      (k.zeroed_operands == 1 ? u.compute_zeroed1 : u.compute_zeroed2) = u.compute;
    if (k.tensor && k.simt_matrix) [[unlikely]]  // both (never from the roofline model)
      u.simt_matrix = k.flops > 0 ? min1(V2{k.flops / (s * fp32_flops_per_s), 0.0})[0] : 0.0;
    // {busy while the drain is shorter, memory}: 0 unless duration > drain, bytes > 0.
    const V2 bm = reinterpret_cast<V2>(bits(V2{k.sm_share * (1.0 - qd[0]), min1(qd)[1]}) &
                                       (V2{duration_ns, k.dram_bytes} > V2{k.drain_ns, 0.0}));
    const V2 busy = select(V2{k.drain_ns, 0.0} > zero, bm, V2{k.sm_share, 0.0});
    u.busy = busy[0];
    u.memory = bm[1];
    // L2 traffic beyond streaming (layout-changing copies only: rare).
    if (k.l2_excess_bytes > 0 && l2_bytes_per_s > 0) [[unlikely]]
      u.l2_excess = std::min(1.0, k.l2_excess_bytes / (s * l2_bytes_per_s));
    return u;
  }
};
// `cmos`: P = idle(fc) + mem_idle·fm + V²f·(u_busy·busy + u_c·compute + u_c16·compute_fp16
//           + u_c8·compute_fp8 + u_z1·compute_zeroed1 + u_z2·compute_zeroed2
//           + u_s·simt + u_sm·simt_matrix + u_l2·l2_excess) + u_m·mem_active·fm,
//           the per-clock terms tabulated.
struct CmosForm {
  struct CoreTerms {
    double idle_w = 0.0;  // const + leak·V + clock·V²f
    double v2f = 0.0;     // V²·f in V²·GHz
  };
  struct MemoryTerms {
    double ghz = 0.0;     // fm in GHz
    double idle_w = 0.0;  // memory_idle_w_per_ghz · fm
  };
  std::vector<CoreTerms> core;      // per core clock index
  std::vector<MemoryTerms> memory;  // per memory clock index
  double busy_w_per_v2ghz = 0.0;
  double compute_w_per_v2ghz = 0.0;
  double simt_w_per_v2ghz = 0.0;
  double simt_matrix_w_per_v2ghz = 0.0;
  double l2_excess_w_per_v2ghz = 0.0;
  double memory_active_w_per_ghz = 0.0;
  // What fp16 operands draw beyond the tensor term: (fp16_tensor_power - 1) x compute.
  double compute_fp16_extra_w_per_v2ghz = 0.0;
  // What FP8 operands draw beyond the tensor term: (fp8_tensor_power - 1) x compute.
  double compute_fp8_extra_w_per_v2ghz = 0.0;
  // What operands zeroed by a ReLU draw beyond the tensor term (negative):
  // (tensor_power_zeroed1 - 1) x compute, likewise for two.
  double compute_zeroed1_extra_w_per_v2ghz = 0.0;
  double compute_zeroed2_extra_w_per_v2ghz = 0.0;

  // The terms at one clock pair, looked up once (the timeline keeps them
  // while its effective clocks hold): idle_w is the core and memory idle
  // terms' sum, the first addition of power_w.
  struct At {
    double idle_w = 0.0;
    double v2f = 0.0;
    double memory_ghz = 0.0;
  };
  At at(const Clocks& c) const {
    const CoreTerms& t = core[static_cast<std::size_t>(c.core_idx)];
    const MemoryTerms& m = memory[static_cast<std::size_t>(c.memory_idx)];
    return {t.idle_w + m.idle_w, t.v2f, m.ghz};
  }
  double power_w(const Utilisation& u, const Clocks& c) const { return power_w(u, at(c)); }
  double power_w(const Utilisation& u, const At& a) const {
    return a.idle_w +
           a.v2f *
               (u.busy * busy_w_per_v2ghz + u.compute * compute_w_per_v2ghz +
                u.compute_fp16 * compute_fp16_extra_w_per_v2ghz +
                u.compute_fp8 * compute_fp8_extra_w_per_v2ghz +
                u.compute_zeroed1 * compute_zeroed1_extra_w_per_v2ghz +
                u.compute_zeroed2 * compute_zeroed2_extra_w_per_v2ghz + u.simt * simt_w_per_v2ghz +
                u.simt_matrix * simt_matrix_w_per_v2ghz + u.l2_excess * l2_excess_w_per_v2ghz) +
           u.memory * memory_active_w_per_ghz * a.memory_ghz;
  }
};

}  // namespace dvfsim
