#pragma once
// `dvfsim run --parallel ...`: a pipeline- and data-parallel job built from
// the trace (parallel/), replayed with the policy on every GPU against the
// baseline, and its outputs (docs/parallel.md).
#include <iosfwd>
#include <string>
#include <vector>

#include "apps/runner.h"
#include "parallel/dag.h"
#include "parallel/job.h"
#include "parallel/replay.h"
#include "sim/json.h"

namespace dvfsim {

// One point of a planner's iteration time-energy frontier.
struct FrontierPoint {
  int plan = 0;
  double iteration_s = 0.0;
  double energy_j = 0.0;
};

struct ParallelSummary {
  PipelineJob job;
  PipelineGraph graph;
  ParallelRun run;
  bool has_baseline = false;
  ParallelRun baseline;
  std::vector<FrontierPoint> frontier;  // perseus: the planned frontier
  std::vector<std::string> notes;       // the planner's
};

// Like simulate(), for the job `parallel` describes. `--set straggler=RANK:PCT`
// is read here.
// The pipeline replay's inputs: the prepared trace and device models, the job
// and its DAG (all must outlive the result).
ParallelInputs parallel_inputs(const Prepared& p, const PipelineJob& job, const PipelineGraph& g);

Simulation simulate_parallel(const RunSpec& spec, ParallelSpec parallel);

// The summary.json fields of a parallel run: gpus, parallel, per_gpu,
// critical_path_s (apps/outputs.cpp writes them when sim.parallel is set).
void write_parallel_summary_fields(JsonWriter& j, const ParallelSummary& p);
// summary.json, per_gpu.csv, instructions.csv, trace.json (one process per
// GPU), frontier.csv (planners), manifest.json.
void write_parallel_outputs(const std::string& dir, const RunSpec& spec, const Simulation& sim);
void print_parallel_summary(std::ostream& out, const Simulation& sim);

}  // namespace dvfsim
