#include "policies/planning/emulation.h"

#include <cmath>

namespace dvfsim::plan {

GpuModel gpu_model(const PolicyContext& ctx) {
  return GpuModel{&ctx.device(), &ctx.latency(), &ctx.power(), ctx.governor()};
}

Emulation emulate(const GpuModel& m, const std::vector<ItemSpec>& kernels,
                  const std::vector<Clocks>& pairs, const EmulationStart& start,
                  double give_up_after_ns) {
  Emulation em;
  const std::size_t n = kernels.size();
  em.cap_mhz.resize(n);
  em.time_of_step.resize(n);
  if (n == 0) return em;
  const Device& d = *m.device;
  // The engine's GPU with switches that land at once, each memory switch
  // charged the stall the engine expects.
  TimelineConfig cfg;
  cfg.memory_stall_ns = static_cast<std::int64_t>(
      std::llround(start.stall_ns >= 0 ? start.stall_ns : d.memory_switch_stall_us * 1e3));
  cfg.stall_within_switch = false;
  cfg.record_switches = false;
  GpuTimeline tl(m, cfg);
  if (start.cap_mhz > 0) {
    tl.set_cap(start.cap_mhz);
  } else {
    // The engine's warm-up: the steady cap for the whole run at the first clocks.
    const Clocks& w = start.warm_pair.core_mhz > 0 ? start.warm_pair : pairs[0];
    tl.set_clocks_now(w.core_mhz, w.memory_mhz);
    std::vector<KernelCost> costs(n);
    std::vector<double> gaps(n);
    for (std::size_t i = 0; i < n; ++i) {
      costs[i] = kernels[i].cost;
      gaps[i] = kernels[i].floor_ns > 0
                    ? idle_after_ns(kernels[i],
                                    m.latency->duration_ns(costs[i], w) * kernels[i].time_scale)
                    : kernels[i].gap_ns;
    }
    tl.warm_firmware(costs, gaps);
  }
  const Clocks& from = start.from.memory_mhz != 0 ? start.from : pairs[0];
  tl.set_clocks_now(from.core_mhz, from.memory_mhz);
  tl.start(0, start.first_tick_ns >= 0
                  ? static_cast<std::int64_t>(std::llround(start.first_tick_ns))
                  : -1);
  FinishedKernel done;
  for (std::size_t i = 0; i < n; ++i) {
    const Clocks& pair = pairs[i];
    if (!(tl.wanted() == pair)) tl.request(pair.core_mhz, pair.memory_mhz);
    tl.fire_due_events();  // lands at once; a memory switch starts its stall
    if (tl.stalled()) tl.advance(tl.stall_end_ns(), &done);
    em.cap_mhz[i] = tl.cap_mhz();
    const std::int64_t begin = tl.now();
    tl.run_alone(kernels[i].cost, kernels[i].time_scale, static_cast<std::int32_t>(i), &done);
    em.time_of_step[i] = static_cast<double>(tl.now() - begin);
    if (static_cast<double>(tl.now()) > give_up_after_ns) break;  // time only grows
    if (i + 1 < n) {
      // The host wait the kernel did not absorb, then its fixed gap.
      // (round_ns: std::llround without the libm call.)
      const std::int64_t ready = begin + timeline_detail::round_ns(kernels[i].floor_ns);
      if (ready > tl.now()) tl.advance(ready, &done);
      tl.advance(tl.now() + timeline_detail::round_ns(kernels[i].gap_ns), &done);
    }
  }
  em.time_ns = static_cast<double>(tl.now());
  em.energy_j = tl.energy_j();
  em.memory_switches = tl.memory_switches();
  return em;
}

}  // namespace dvfsim::plan
