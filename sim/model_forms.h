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
    std::int32_t mhz = 0;
  };
  struct MemoryRates {
    std::int32_t mhz = 0;
    double dram_bytes_per_s = 0.0;  // Device::dram_bytes_per_s
  };
  std::vector<CoreRates> core;      // per core clock index of the target
  std::vector<MemoryRates> memory;  // per memory clock index
  const Device* device = nullptr;   // the target: rates at clocks outside the tables

  RooflineForm() = default;
  RooflineForm(const Device& d, double kappa_, double min_ns_) : kappa(kappa_), min_ns(min_ns_) {
    device = &d;
    core.reserve(d.core_clocks_mhz.size());
    for (const std::int32_t f : d.core_clocks_mhz)
      core.push_back({d.tensor_flops_per_s(f), d.issue_per_s(f), d.fp32_flops_per_s(f), f});
    memory.reserve(d.memory_clocks_mhz.size());
    for (const std::int32_t f : d.memory_clocks_mhz) memory.push_back({f, d.dram_bytes_per_s(f)});
  }

  double duration_ns(const KernelCost& k, const Clocks& c) const {
    // The two quotients in one packed division (each lane IEEE-rounded as alone).
    const V2 q = V2{k.compute_ns_mhz, k.memory_ns_mhz} /
                 V2{static_cast<double>(c.core_mhz), static_cast<double>(c.memory_mhz)};
    const double tc = q[0];
    const double tm = q[1];
    const double hi = tc > tm ? tc : tm, lo = tc > tm ? tm : tc;
    const double t = k.fixed_ns + hi + kappa * lo;
    return t > min_ns ? t : min_ns;
  }

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
  double dram_bytes_per_s(const Clocks& c) const {
    const auto i = static_cast<std::size_t>(c.memory_idx);
    if (i < memory.size() && memory[i].mhz == c.memory_mhz) return memory[i].dram_bytes_per_s;
    return device->dram_bytes_per_s(c.memory_mhz);
  }

  Utilisation utilisation(const KernelCost& k, const Clocks& c, double duration_ns) const {
    Utilisation u;
    u.busy = k.sm_share;
    if (duration_ns <= 0) return u;
    if (k.drain_ns > 0)
      u.busy = duration_ns > k.drain_ns ? k.sm_share * (1.0 - k.drain_ns / duration_ns) : 0.0;
    const double s = duration_ns * 1e-9;
    // Work over (time x peak) per unit, the core-clocked two (tensor, issue)
    // in one packed division; a unit with no work stays 0.
    const V2 q = V2{k.flops, k.instructions} / (s * core_rates(c));
    const double m = k.dram_bytes / (s * dram_bytes_per_s(c));
    if (k.flops > 0 && k.tensor) u.compute = min1(q[0]);
    if (k.instructions > 0) u.simt = min1(q[1]);
    if (k.dram_bytes > 0) u.memory = min1(m);
    if (k.simt_matrix && k.flops > 0) u.simt_matrix = min1(k.flops / (s * fp32_flops_per_s(c)));
    return u;
  }

 private:
  // std::min(1.0, x), NaN included (std::min returns its first argument then).
  static double min1(double x) { return x < 1.0 ? x : 1.0; }
};

// `cmos`: P = idle(fc) + mem_idle·fm + V²f·(u_busy·busy + u_c·compute + u_s·simt
//           + u_sm·simt_matrix) + u_m·mem_active·fm, the per-clock terms tabulated.
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
  double memory_active_w_per_ghz = 0.0;

  double power_w(const Utilisation& u, const Clocks& c) const {
    const CoreTerms& t = core[static_cast<std::size_t>(c.core_idx)];
    const MemoryTerms& m = memory[static_cast<std::size_t>(c.memory_idx)];
    return t.idle_w + m.idle_w +
           t.v2f * (u.busy * busy_w_per_v2ghz + u.compute * compute_w_per_v2ghz +
                    u.simt * simt_w_per_v2ghz + u.simt_matrix * simt_matrix_w_per_v2ghz) +
           u.memory * memory_active_w_per_ghz * m.ghz;
  }
};

}  // namespace dvfsim
