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
#include <string>
#include <vector>

#include "parallel/replay.h"

namespace dvfsim {

struct PerseusOptions {
  double max_slowdown = 0.01;  // intrinsic: within this fraction of the fastest iteration
  int steps = 3000;            // time units between the slowest and fastest plans
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
// linear costs (exposed for tests): activity i takes an integer duration in
// [lo[i], hi[i]] with cost cost_at(i, d); edges (u, v, delay) are
// precedences. Returns, per step, the durations and makespan; step 0 is
// every activity at hi, the last the shortest makespan.
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
