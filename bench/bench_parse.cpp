// Parse speed of the shipped Kineto trace and of the same trace in native form.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "traces/kineto.h"
#include "traces/native.h"

namespace {

std::string trace_path() {
  if (const char* env = std::getenv("DVFSIM_TRACE")) return env;
#if defined(DVFSIM_SHIPPED_TRACE)
  return DVFSIM_SHIPPED_TRACE;
#else
  return std::string(DVFSIM_SOURCE_DIR) + "/traces/data/gpt3xl_h200_train_b4_t2048.kineto.json.gz";
#endif
}

void BM_ParseShippedTrace(benchmark::State& state) {
  const std::string path = trace_path();
  for (auto _ : state) {
    dvfsim::Workload w = dvfsim::read_kineto(path);
    benchmark::DoNotOptimize(w.kernels.data());
  }
}
BENCHMARK(BM_ParseShippedTrace)->Unit(benchmark::kMillisecond);

void BM_ParseNative(benchmark::State& state) {
  const std::string native =
      (std::filesystem::temp_directory_path() / "dvfsim_bench_parse.dvfsim.gz").string();
  dvfsim::write_native(dvfsim::read_kineto(trace_path()), native);
  for (auto _ : state) {
    dvfsim::Workload w = dvfsim::read_native(native);
    benchmark::DoNotOptimize(w.kernels.data());
  }
  std::filesystem::remove(native);
}
BENCHMARK(BM_ParseNative)->Unit(benchmark::kMillisecond);

}  // namespace

// main() comes from benchmark::benchmark_main.
