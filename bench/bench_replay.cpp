// Replay throughput of the already-parsed shipped trace (or $DVFSIM_TRACE)
// under each policy of the walking skeleton, in kernels per second.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <string>

#include "apps/runner.h"

namespace {

std::string trace_path() {
  const char* env = std::getenv("DVFSIM_TRACE");
  return env && *env ? env : DVFSIM_SHIPPED_TRACE;
}

void BM_ReplayShippedTrace(benchmark::State& state, const std::string& policy,
                           const std::map<std::string, std::string>& params) {
  using namespace dvfsim;
  const auto w = load_workload(trace_path());
  const Prepared p = prepare(w, load_device_cached("h200"));
  EngineConfig cfg;
  cfg.record_timeline = false;
  for (auto _ : state) {
    RunResult r = replay_policy(p, policy, params, cfg);
    benchmark::DoNotOptimize(r.energy_j);
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(w->kernels.size()));
  state.counters["kernels"] = static_cast<double>(w->kernels.size());
}

BENCHMARK_CAPTURE(BM_ReplayShippedTrace, max, std::string("max"),
                  std::map<std::string, std::string>{})
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_ReplayShippedTrace, native, std::string("native"),
                  std::map<std::string, std::string>{})
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_ReplayShippedTrace, static, std::string("static"),
                  std::map<std::string, std::string>{{"core_mhz", "1410"}})
    ->Unit(benchmark::kMicrosecond);

}  // namespace
