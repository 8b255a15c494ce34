// End to end per policy (issue 15): `simulate` of the shipped trace on the
// RTX 3080 Ti with free clock switches, as `dvfsim run` does it without
// writing outputs: the baseline replay, the policy's planning and its replay.
// The trace is parsed once for the process (load_workload caches it; its
// parse is BM_ParseShippedTrace), so each iteration is what a run costs on
// top of reading its trace. Counter `rounds`: the planner's rounds.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <string>

#include "apps/runner.h"

namespace {

using namespace dvfsim;

std::string trace_path() {
  const char* env = std::getenv("DVFSIM_TRACE");
  return env && *env ? env : DVFSIM_SHIPPED_TRACE;
}

void BM_RunPolicy(benchmark::State& state, const std::string& device, const std::string& policy,
                  const std::map<std::string, std::string>& settings) {
  RunSpec spec;
  spec.trace_path = trace_path();
  spec.device = device;
  spec.policy = policy;
  spec.settings = settings;
  spec.settings["switch_latency_us"] = "0";
  spec.record_timeline = false;
  double saving = 0, rounds = 0;
  for (auto _ : state) {
    const Simulation sim = simulate(spec);
    saving = energy_saving_pct(sim.result, sim.baseline);
    rounds = sim.result.solver.empty() ? 0 : sim.result.solver.back().rounds;
    benchmark::DoNotOptimize(sim.result.energy_j);
  }
  state.counters["saving_pct"] = saving;
  state.counters["rounds"] = rounds;
}

BENCHMARK_CAPTURE(BM_RunPolicy, rtx3080ti_kernel_oracle, std::string("rtx3080ti"),
                  std::string("kernel-oracle"), std::map<std::string, std::string>{})
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_RunPolicy, rtx3080ti_pass_level, std::string("rtx3080ti"),
                  std::string("pass-level"), std::map<std::string, std::string>{})
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_RunPolicy, rtx3080ti_native, std::string("rtx3080ti"), std::string("native"),
                  std::map<std::string, std::string>{})
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_RunPolicy, rtx3080ti_static, std::string("rtx3080ti"), std::string("static"),
                  std::map<std::string, std::string>{{"core_mhz", "1410"}})
    ->Unit(benchmark::kMillisecond);

}  // namespace
