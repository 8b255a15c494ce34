#pragma once
// A planned clock sequence run on the engine's own GPU model
// (sim/gpu_timeline.h), to predict the firmware cap each kernel meets and
// the plan's time and energy.
#include <cstdint>
#include <limits>
#include <vector>

#include "policies/planning/tables.h"
#include "sim/gpu_timeline.h"
#include "sim/policy.h"

namespace dvfsim::plan {

// ---------------------------------------------------------------- firmware

// A planned sequence run on the engine's own GPU model (sim/gpu_timeline.h)
// with switches that land at once: kernels back to back with their gaps, each
// memory-clock change stalling the GPU for the stall the engine expects, the
// firmware cap updated every governor period. It predicts the cap each kernel
// will meet, and the plan's time and energy.
struct Emulation {
  std::vector<std::int32_t> cap_mhz;  // cap in force when each kernel starts
  std::vector<double> time_of_step;   // kernel durations (ns)
  double time_ns = 0.0;               // first start to last end (gaps and stalls included)
  double energy_j = 0.0;
  std::int64_t memory_switches = 0;
};
struct EmulationStart {
  std::int32_t cap_mhz = 0;  // the cap in force at the start (0: computed as the engine's warm-up)
  Clocks warm_pair;          // warm-up: the clocks set before the run
  double first_tick_ns = -1.0;  // time of the first governor tick (< 0: one period in)
  // The clocks in force before the first kernel (memory_mhz 0: none): a
  // different memory clock for the first kernel costs a stall.
  Clocks from;
  // GPU stall per memory switch (< 0: the device's; policies pass
  // PolicyContext::expected_memory_stall_ns(), which honours the engine's
  // settings and never exceeds the switch latency).
  double stall_ns = -1.0;
};
// The idle time after a kernel that ran `kernel_ns`: its gap plus the host
// wait it did not absorb (ItemSpec::floor_ns); what a Switcher step's gap is.
inline double idle_after_ns(const ItemSpec& it, double kernel_ns) {
  return it.gap_ns + (it.floor_ns > kernel_ns ? it.floor_ns - kernel_ns : 0.0);
}
// `give_up_after_ns`: the emulation stops after the first kernel that ends
// later (time_ns is then its end, above the limit; the rest of the result is
// partial): for a caller that discards a plan whose time exceeds a budget.
Emulation emulate(const GpuModel& m, const std::vector<ItemSpec>& kernels,
                  const std::vector<Clocks>& pairs, const EmulationStart& start,
                  double give_up_after_ns = std::numeric_limits<double>::infinity());
// The simulated GPU a policy runs on (its models and firmware), for emulate().
GpuModel gpu_model(const PolicyContext& ctx);

}  // namespace dvfsim::plan
