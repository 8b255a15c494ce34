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
  // Per-kernel clocks inside each instruction: an instruction's time-energy
  // options are the per-kernel plans (the lower hull of the sum of its
  // kernels' own hulls) instead of one clock for all its kernels.
  bool inner_kernel = false;
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
  // inner_kernel: per DAG node, per kernel of its instruction (else empty).
  std::vector<std::vector<Clocks>> per_node_kernels;
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

// The time-energy options of an instruction whose kernels may each run at
// another clock (exposed for tests). Kernel k at option q takes time[k][q]
// and costs cost[k][q]. The least-cost plan of every duration lies on the
// lower convex hull of the sum of the kernels' own hulls: their segments
// taken in order of slope, the steepest saving first (exact at the
// vertices). Vertex j of the curve: time_ns[j], cost_j[j].
struct KernelPlanCurve {
  std::vector<double> time_ns, cost_j;
  std::vector<std::vector<std::size_t>> hull_option;  // per kernel, per hull vertex: q
  struct Segment {
    std::size_t kernel, vertex;  // the kernel moves to this hull vertex
  };
  std::vector<Segment> segments;  // segment j leads from curve vertex j to j+1
};
KernelPlanCurve kernel_plan_curve(const std::vector<std::vector<double>>& time_ns,
                                  const std::vector<std::vector<double>>& cost_j);
// Per kernel, the option of the least-cost curve vertex no longer than
// `duration_ns` (the fastest vertex when none fits).
std::vector<std::size_t> kernel_plan_at(const KernelPlanCurve& c, double duration_ns);

PerseusPlan plan_perseus(const ParallelInputs& in, const EngineConfig& cfg,
                         const PerseusOptions& opt);

}  // namespace dvfsim
