// Replay throughput of the already-parsed shipped trace (or $DVFSIM_TRACE)
// under max, native and static, in kernels per second, and against the plain
// Python heap loop of bench/python_heap_replay.py measured in the same run
// (counter `x_python`: replay rate / Python rate; issue 15 asks >= 100).
// The Python loop runs once per process on the kernels of a native replay
// (start and duration columns written to a temporary CSV); without python3
// the counter is 0.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "apps/runner.h"

namespace {

using namespace dvfsim;

std::string trace_path() {
  const char* env = std::getenv("DVFSIM_TRACE");
  return env && *env ? env : DVFSIM_SHIPPED_TRACE;
}

struct Setup {
  std::shared_ptr<const Workload> w;
  Prepared p;
  Setup() : w(load_workload(trace_path())), p(prepare(w, load_device_cached("h200"))) {}
};
const Setup& setup() {
  static const Setup s;
  return s;
}

// Kernels per second of the Python heap loop on the native replay's kernels.
double python_rate() {
  static const double rate = [] {
    const Setup& s = setup();
    EngineConfig cfg;
    cfg.record_timeline = false;
    const RunResult r = replay_policy(s.p, "native", {}, cfg);
    const auto csv = std::filesystem::temp_directory_path() / "dvfsim_bench_python_kernels.csv";
    {
      std::ofstream f(csv);
      f << "start_ns,duration_ns\n";
      for (const KernelResult& k : r.kernels) f << k.start_ns << ',' << k.duration_ns << '\n';
    }
    const std::string cmd =
        "python3 " DVFSIM_BENCH_DIR "/python_heap_replay.py " + csv.string() + " 2>/dev/null";
    double found = 0;
    if (FILE* p = popen(cmd.c_str(), "r")) {
      char line[512];
      while (std::fgets(line, sizeof line, p)) {
        std::string l(line);
        const auto at = l.find("replay: ");
        if (at == std::string::npos) continue;
        std::string num;
        for (char c : l.substr(at + 8)) {
          if (c == ',') continue;
          if ((c < '0' || c > '9') && c != '.') break;
          num += c;
        }
        if (!num.empty()) found = std::stod(num);
      }
      pclose(p);
    }
    std::filesystem::remove(csv);
    return found;
  }();
  return rate;
}

void BM_ReplayShippedTrace(benchmark::State& state, const std::string& policy,
                           const std::map<std::string, std::string>& params) {
  const Setup& s = setup();
  const double py = python_rate();
  EngineConfig cfg;
  cfg.record_timeline = false;
  for (auto _ : state) {
    RunResult r = replay_policy(s.p, policy, params, cfg);
    benchmark::DoNotOptimize(r.energy_j);
  }
  const auto n = static_cast<double>(s.w->kernels.size());
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(s.w->kernels.size()));
  state.counters["kernels"] = n;
  state.counters["python_kernels_per_s"] = py;
  state.counters["x_python"] =
      benchmark::Counter(py > 0 ? n / py : 0.0, benchmark::Counter::kIsIterationInvariantRate);
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
