#pragma once
// An oracle's check of a per-kernel plan: the whole run replayed by the engine.
#include <vector>

#include "sim/policy.h"
#include "sim/result.h"

namespace dvfsim::plan {

// Oracles only (it replays the whole run): the run under a per-kernel plan
// (each kernel's pair requested when it starts; nullptr: no requests, the
// default clocks), replayed by the engine itself with the governor rule above
// and each domain's expected switch latency and the expected memory stall.
// Used to check a plan against its
// budget before committing to it.
RunResult replay_plan(const PolicyContext& ctx, const std::vector<Clocks>* pairs);
// The run under any policy `p` (an oracle's candidate), replayed the same way.
RunResult replay_with(const PolicyContext& ctx, Policy& p);

}  // namespace dvfsim::plan
