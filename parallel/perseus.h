#pragma once
// Perseus-style planning (Chung et al., SOSP'24; docs/parallel.md,
// "Perseus"): an SM clock for every forward and backward instruction of the
// pipeline, from the iteration time-energy frontier on the DAG. Each (stage,
// forward|backward) is profiled at every core clock on the GPU timeline; the
// frontier is traced with the Phillips-Dessouky time-cost trade-off
// algorithm (the one Perseus's Lowtime implements): start with every
// instruction at its least-energy clock and shorten the critical path one
// time unit at a time along the minimum cut of the critical subgraph,
// lengthening instructions that a cut crosses backwards.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "parallel/replay.h"

namespace dvfsim {

struct PerseusPlan;

struct PerseusOptions {
  double max_slowdown = 0.01;  // intrinsic: within this fraction of the fastest iteration
  int resolution = 500;        // time units in the shortest instruction
  // When set: replays a plan and returns its slowdown against all GPUs at
  // their highest clocks; the planner then re-chooses on the frontier with
  // the budget cut by the excess until the replay is within max_slowdown
  // (at most 8 rounds).
  std::function<double(const PerseusPlan&)> replayed_slowdown;
};

struct PerseusFrontierPoint {
  int plan = 0;
  double iteration_s = 0.0;  // planned
  double energy_j = 0.0;     // planned, the pipeline's GPUs over the iteration
};

struct PerseusPlan {
  std::vector<Clocks> per_node;  // per DAG node (optimizer and all-reduce: max)
  std::vector<double> node_ns;   // the profiled duration at that clock (0: not planned)
  std::vector<PerseusFrontierPoint> frontier;
  int chosen = 0;  // plan id of the frontier point used
  double fastest_s = 0.0, chosen_s = 0.0;
  std::vector<std::string> notes;
};

// The time-cost trade-off on a DAG of activities with convex piecewise-
// linear costs (exposed for tests): activity i takes an integer duration
// between its first and last breakpoint with the cost interpolated between
// breakpoints; edges (from, to, delay) are precedences. Returns, per step,
// the durations, makespan and cost; step 0 is every activity at its slowest,
// the last the shortest makespan. A step moves the cut as far as it stays
// valid (to the next breakpoint or until a path with float turns critical).
struct TimeCostProblem {
  std::vector<std::vector<std::int64_t>> times;  // per activity: hull breakpoints, ascending
  std::vector<std::vector<double>> costs;        // cost at each breakpoint (convex, decreasing)
  struct Edge {
    std::uint32_t from, to;
    std::int64_t delay;
  };
  std::vector<Edge> edges;
};
struct TimeCostStep {
  std::int64_t makespan = 0;
  double cost = 0.0;
  std::vector<std::int64_t> durations;
};
std::vector<TimeCostStep> phillips_dessouky(const TimeCostProblem& p, std::size_t max_steps);

PerseusPlan plan_perseus(const ParallelInputs& in, const EngineConfig& cfg,
                         const PerseusOptions& opt);

}  // namespace dvfsim
