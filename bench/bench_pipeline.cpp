// Pipeline-parallel replay and planning at scale (issue 16): one iteration
// of GPT-3 XL (the shipped trace) on 1,024 GPUs (pp=8, dp=128, M=16) under
// native, target < 1 s; and the Perseus frontier for pp=8, M=32, target
// < 60 s on one core. Counters: kernel nodes replayed, frontier plans.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <string>

#include "apps/parallel_run.h"
#include "apps/runner.h"
#include "parallel/dag.h"
#include "parallel/job.h"
#include "parallel/perseus.h"
#include "parallel/replay.h"
#include "policies/registry.h"

namespace {

using namespace dvfsim;

std::string trace_path() {
  const char* env = std::getenv("DVFSIM_TRACE");
  return env && *env ? env : DVFSIM_SHIPPED_TRACE;
}

struct Job {
  Prepared p;
  PipelineJob job;
  PipelineGraph graph;
  ParallelInputs in;
  double kernel_nodes = 0;
  Job(const std::string& spec, const std::string& device)
      : p(prepare(load_workload(trace_path()), load_device_cached(device))) {
    job = make_job(*p.workload, parse_parallel(spec), p.target->device.name);
    graph = build_dag(job);
    in = parallel_inputs(p, job, graph);
    for (std::size_t v = 0; v < num_vertices(graph.g); ++v) {
      const DagNode& n = graph.g[v];
      if (n.rank < 0) continue;
      const StageWork& st = job.stages[static_cast<std::size_t>(n.stage)];
      kernel_nodes += static_cast<double>(n.kind == InstrKind::forward    ? st.forward.size()
                                          : n.kind == InstrKind::backward ? st.backward.size()
                                                                          : st.optimizer.size());
    }
  }
};

void BM_PipelineReplay(benchmark::State& state) {
  static const Job j("pp=8,dp=128,microbatches=16", "h200");
  const PolicyInfo& native = find_policy("native");
  const Params none = resolve_params(native, {});
  EngineConfig cfg;
  cfg.record_timeline = false;
  for (auto _ : state) {
    const ParallelRun r = replay_parallel(
        j.in, [&] { return native.make(none); }, cfg);
    benchmark::DoNotOptimize(r.energy_j);
  }
  state.counters["gpus"] = 1024;
  state.counters["kernel_nodes"] = j.kernel_nodes;
  state.counters["kernel_nodes_per_s"] =
      benchmark::Counter(j.kernel_nodes, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_PipelineReplay)->Unit(benchmark::kMillisecond)->Iterations(2);

void BM_PerseusFrontier(benchmark::State& state) {
  static const Job j("pp=8,microbatches=32", "a100-sxm");
  EngineConfig cfg;
  cfg.record_timeline = false;
  std::size_t plans = 0;
  for (auto _ : state) {
    const PerseusPlan plan = plan_perseus(j.in, cfg, PerseusOptions{});
    plans = plan.frontier.size();
    benchmark::DoNotOptimize(plan.chosen);
  }
  state.counters["frontier_plans"] = static_cast<double>(plans);
  state.counters["instructions"] = 2.0 * 8 * 32;
}
BENCHMARK(BM_PerseusFrontier)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace
