#pragma once
// Segment plans: consecutive kernels grouped into segments that amortise the
// clock-switch latency, one pair per segment, chosen by dynamic programming
// jointly with the time budget (docs/policies.md, "latency-aware").
//
// The DP (positions 0..n): f[b][p] = least cost E + lambda T of the kernels
// before b with a segment of pair p ending at b. A segment must last at least
// L_min (so that the request for the next segment, issued L_min before it,
// comes after this one landed): the core latency when the memory clock is
// held (one DP per memory clock), the larger of core and memory latencies
// when the memory clock may change (then every memory change also costs the
// GPU stall in time and idle energy). Bisection on lambda
// (policies/planning/lagrangian.h) meets the budget with the dual bound
// reported. L -> 0 gives a per-kernel plan; large L a few long segments.
//
// Candidates: the pairs on the kernels' time-energy hulls, weighted by the
// time of the kernels they serve (a pair the few long GEMMs want is not
// crowded out by many short kernels), with the heaviest few of every memory
// clock kept. The firmware's power cap: each memory clock's columns take the
// cap each kernel meets with the whole run at that memory clock (a lower
// memory clock frees power for the core, a higher one takes it). Each mode
// runs rounds: its plan is emulated on the GPU timeline, the next round's
// columns take the caps the plan met (lowered only, after a plan that missed
// the budget), and a miss the caps do not explain tightens the budget by the
// overshoot; the best emulated plan that meets the budget is returned.
#include <cstdint>
#include <string>
#include <vector>

#include "policies/objective.h"
#include "policies/planning/emulation.h"
#include "policies/planning/report.h"
#include "policies/planning/tables.h"

namespace dvfsim::plan {

class PlanCache;  // policies/planning/solver.h

struct SegmentPlanInput {
  GpuModel gpu;
  // One per kernel (launch order, count 1), each with the cap it meets at the
  // default clocks (max_core_mhz) and the idle gap after it.
  std::vector<ItemSpec> kernels;
  EmulationStart start;
  Objective objective;
  double budget_ns = 0.0;       // on the emulated time
  double core_lmin_ns = 0.0;    // least segment length when only the core clock changes
  double memory_lmin_ns = 0.0;  // ... when the memory clock changes
  double memory_stall_ns = 0.0;
  int max_candidates = 32;               // pairs per memory mode (most often on the hulls)
  std::vector<Clocks> extra_candidates;  // considered in every mode that allows them
  double extra_tighten_ns = 0.0;         // taken off the DP's budget from the start
  std::string what;                      // prefix of the report
  // Optional: rows and hulls shared with the caller's other plans of these
  // models (the plan is the same without it).
  PlanCache* cache = nullptr;
};

struct SegmentPlan {
  std::vector<Clocks> pairs;  // per kernel (the default clocks when none met the budget)
  Emulation emulation;        // of the chosen plan
  bool have = false;          // a plan met the budget
  SolveReport report;
};

// `reference`: the kernels emulated at the default clocks.
SegmentPlan plan_segments(const SegmentPlanInput& in, const Emulation& reference);

}  // namespace dvfsim::plan
