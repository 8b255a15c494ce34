#pragma once
// An online policy's check of a plan before it commits to it: the learned
// iteration (the kernels of the profiling iteration as they were launched and
// measured, with their observed gaps) run on the engine's own GPU model
// (sim/gpu_timeline.h) with switches that take the device's expected latency
// per domain and the expected memory stall, the plan followed by the same
// Switcher the policy uses. It is the online counterpart of an oracle's
// replay (policies/planning/replay.h): it reads nothing of the run beyond
// what the policy observed, only the device's models.
#include <cstdint>
#include <vector>

#include "policies/online/switcher.h"
#include "policies/planning/tables.h"
#include "sim/policy.h"

namespace dvfsim::plan {

struct Rehearsal {
  double time_ns = 0.0;  // first kernel start to the last kernel's end
  double energy_j = 0.0;
  // The learned iteration run again right after the first, as the plan's
  // later iterations run: from the clocks the first left, with the requests
  // the plan issues across the iteration boundary (a switch for the next
  // iteration's start issued inside the last segment). Its start to its end,
  // and the energy from the first's end to its end.
  double next_time_ns = 0.0;
  double next_energy_j = 0.0;
  std::int64_t switches = 0;  // over both
};

struct RehearsalStart {
  std::int32_t cap_mhz = 0;  // firmware cap in force when the plan starts (0: none)
  Clocks from;               // clocks in force when the plan starts
};

// `steps` nullptr: no requests (the clocks in force). `early`: each switch
// requested ahead by the expected latency (Switcher), else at kernel start.
Rehearsal rehearse(const PolicyContext& ctx, const std::vector<ItemSpec>& items,
                   const std::vector<Switcher::Step>* steps, bool early,
                   const RehearsalStart& start);

}  // namespace dvfsim::plan
