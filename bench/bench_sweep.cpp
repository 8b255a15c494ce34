// Sweeps that share work (issue 15): the points of a switch-latency sweep
// (experiments/switch_latency.yaml's planners, on the B200 with 5 % slowdown
// allowed, at four latencies) run one after another as `dvfsim sweep` runs
// them, with one RunCache for the sweep (prepared models, baselines and plans
// computed once per distinct input; apps/runner.h), against the same points
// each run alone. Counters: `alone_s` (CPU s of the points alone, measured
// once in the same run), `shared_over_alone` (the ratio), `plans_reused`,
// `plans_computed`. The results are the same bit for bit
// (tests/e2e/sweep_test.cpp, SharedWorkGivesEachRunItsSingleRunResult).
#include <benchmark/benchmark.h>

#include <ctime>
#include <string>
#include <vector>

#include "apps/runner.h"
#include "policies/planning/kernel_plan.h"

namespace {

using namespace dvfsim;

std::vector<RunSpec> sweep_points() {
  std::vector<RunSpec> out;
  for (const char* policy : {"kernel-oracle", "latency-oracle", "pass-level", "static-best"})
    for (const char* latency : {"1", "100", "10000", "200000"}) {
      RunSpec s;
      s.trace_path = DVFSIM_SHIPPED_TRACE;
      s.device = "b200";
      s.policy = policy;
      s.settings = {{"switch_latency_us", latency}, {"max_slowdown", "5"}};
      if (std::string(policy) == "kernel-oracle") s.settings["aggregation"] = "global";
      s.record_timeline = false;
      out.push_back(s);
    }
  return out;
}

double cpu_s() {
  return static_cast<double>(std::clock()) / CLOCKS_PER_SEC;
}

void BM_SweepSwitchLatency(benchmark::State& state) {
  const std::vector<RunSpec> points = sweep_points();
  load_workload(DVFSIM_SHIPPED_TRACE);  // parsed once, outside the timings
  const double a0 = cpu_s();
  double check = 0;
  for (const RunSpec& s : points) check += simulate(s).result.energy_j;
  const double alone = cpu_s() - a0;
  double shared = 0, reused = 0, computed = 0, energy = 0;
  for (auto _ : state) {
    const double t0 = cpu_s();
    RunCache cache;
    energy = 0;
    for (const RunSpec& s : points) energy += simulate(s, &cache).result.energy_j;
    shared += cpu_s() - t0;
    reused = static_cast<double>(cache.plans().hits());
    computed = static_cast<double>(cache.plans().misses());
    benchmark::DoNotOptimize(energy);
  }
  if (energy != check) state.SkipWithError("a shared sweep's energy differs from the runs alone");
  const double per = shared / static_cast<double>(state.iterations());
  state.counters["alone_s"] = alone;
  state.counters["shared_s"] = per;
  state.counters["shared_over_alone"] = alone > 0 ? per / alone : 0;
  state.counters["plans_reused"] = reused;
  state.counters["plans_computed"] = computed;
}

BENCHMARK(BM_SweepSwitchLatency)->Unit(benchmark::kMillisecond)->Iterations(2);

}  // namespace
