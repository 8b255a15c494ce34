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
#include <memory>
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
  // Each kernel's duration in the second iteration (the one every later
  // iteration of the plan repeats), by position: what a budget guard
  // (policies/online/budget_guard.h) expects the plan to take.
  std::vector<double> next_step_ns;
  std::vector<double> step_ns;  // the same for the first iteration
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

// The native run of the iterations a policy follows, as its own models see
// it: the engine's GPU model (the firmware cap included) at the default
// clocks, fed each kernel the policy launches with the work it has now (the
// learned time scale and gap of its position). It starts from the state the
// plan starts from (the firmware cap and clocks when the policy planned, as
// the rehearsal does) and carries the firmware's state from kernel to kernel
// as native would: what the budget guard
// (policies/online/budget_guard.h) charges a followed kernel against.
class NativeShadow {
 public:
  NativeShadow(const PolicyContext& ctx, const std::vector<ItemSpec>& items,
               const RehearsalStart& start);
  ~NativeShadow();
  NativeShadow(const NativeShadow&) = delete;
  NativeShadow& operator=(const NativeShadow&) = delete;
  // The kernel of learned position `position` with the work `cost`, run
  // next: its duration (ns).
  double run(std::size_t position, const KernelCost& cost);

 private:
  struct State;
  std::unique_ptr<State> s_;
  std::vector<ItemSpec> items_;
};

}  // namespace dvfsim::plan
