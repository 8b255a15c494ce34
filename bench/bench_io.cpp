// Input and output at scale (issue 15, items 2, 3 and 6): parsing per format
// and size (Kineto JSON, gzip, native, a parsed-trace cache hit), the run
// outputs per size, and the whole `dvfsim run` (a child process: wall and CPU
// time, peak resident memory from wait4) on the shipped trace from the cache
// and on 1x, 10x and 100x synthetic traces (the shipped trace's iterations
// repeated back to back). Sizes are the number of copies.
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "apps/outputs.h"
#include "apps/runner.h"
#include "sim/files.h"
#include "traces/kineto.h"
#include "traces/native.h"
#include "traces/trace.h"

extern char** environ;

namespace {

using namespace dvfsim;
namespace fs = std::filesystem;

std::string trace_path() {
  const char* env = std::getenv("DVFSIM_TRACE");
  return env && *env ? env : DVFSIM_SHIPPED_TRACE;
}

fs::path scratch() {
  static const fs::path dir = [] {
    const fs::path d =
        fs::temp_directory_path() / ("dvfsim_bench_io_" + std::to_string(::getpid()));
    fs::create_directories(d);
    std::atexit([] {
      std::error_code ec;
      fs::remove_all(fs::temp_directory_path() / ("dvfsim_bench_io_" + std::to_string(::getpid())),
                     ec);
    });
    return d;
  }();
  return dir;
}

const Workload& shipped() {
  static const Workload w = read_kineto(trace_path());
  return w;
}

// `w`'s iterations `copies` times back to back, each copy 1 ms after the
// previous one ends: the same kernels, syncs and event waits, shifted.
Workload replicate(const Workload& w, int copies) {
  Workload r = w;
  if (copies <= 1) return r;
  std::int64_t t0 = INT64_MAX, t1 = INT64_MIN, max_corr = 0;
  for (const Kernel& k : w.kernels) {
    t0 = std::min({t0, k.host_launch_ns, k.traced_start_ns});
    t1 = std::max({t1, k.host_launch_ns, k.traced_start_ns + k.work.duration_ns});
    max_corr = std::max(max_corr, k.correlation);
  }
  for (const SyncPoint& s : w.syncs) {
    t0 = std::min(t0, s.host_begin_ns);
    t1 = std::max(t1, s.traced_end_ns);
  }
  const std::int64_t span = t1 - t0 + 1'000'000;
  const auto n = static_cast<std::uint32_t>(w.kernels.size());
  r.kernels.reserve(w.kernels.size() * static_cast<std::size_t>(copies));
  r.iteration_begin.pop_back();
  for (int c = 1; c < copies; ++c) {
    const std::int64_t shift = span * c;
    const auto base = n * static_cast<std::uint32_t>(c);
    for (Kernel k : w.kernels) {
      k.host_launch_ns += shift;
      k.traced_start_ns += shift;
      k.iteration += w.iterations * c;
      if (k.correlation >= 0) k.correlation += (max_corr + 1) * c;
      r.kernels.push_back(k);
    }
    for (SyncPoint s : w.syncs) {
      s.host_begin_ns += shift;
      s.traced_end_ns += shift;
      s.waits_until_kernel += base;
      r.syncs.push_back(s);
    }
    for (EventWait e : w.event_waits) r.event_waits.push_back({e.kernel + base, e.after + base});
    for (std::size_t i = 0; i + 1 < w.iteration_begin.size(); ++i)
      r.iteration_begin.push_back(w.iteration_begin[i] + base);
    for (const std::int32_t s : w.steady_iterations)
      r.steady_iterations.push_back(s + w.iterations * c);
  }
  r.iteration_begin.push_back(static_cast<std::uint32_t>(r.kernels.size()));
  r.iterations = w.iterations * copies;
  r.validate();
  return r;
}

// The synthetic trace of `copies` copies in the native format (made once).
const std::string& synthetic(int copies) {
  static std::map<int, std::string> made;
  auto [it, fresh] = made.try_emplace(copies);
  if (fresh) {
    it->second = (scratch() / ("synthetic_" + std::to_string(copies) + "x.dvfsim")).string();
    write_native(replicate(shipped(), copies), it->second);
  }
  return it->second;
}

const std::string& plain_json() {
  static const std::string path = [] {
    const std::string p = (scratch() / "shipped.json").string();
    write_file_atomic(p, read_file(trace_path()));
    return p;
  }();
  return path;
}

void BM_ParseKinetoJson(benchmark::State& state) {
  const std::string& path = plain_json();
  for (auto _ : state) benchmark::DoNotOptimize(read_trace(path).kernels.data());
  state.counters["activities"] = static_cast<double>(shipped().kernels.size());
}
BENCHMARK(BM_ParseKinetoJson)->Unit(benchmark::kMillisecond);

void BM_ParseKinetoGzip(benchmark::State& state) {
  const std::string path = trace_path();
  for (auto _ : state) benchmark::DoNotOptimize(read_trace(path).kernels.data());
}
BENCHMARK(BM_ParseKinetoGzip)->Unit(benchmark::kMillisecond);

void BM_ParseNativeSize(benchmark::State& state) {
  const std::string& path = synthetic(static_cast<int>(state.range(0)));
  std::size_t n = 0;
  for (auto _ : state) {
    const Workload w = read_trace(path);
    n = w.kernels.size();
  }
  state.counters["activities"] = static_cast<double>(n);
  state.counters["activities/s"] =
      benchmark::Counter(static_cast<double>(n) * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate);
}
BENCHMARK(BM_ParseNativeSize)->Arg(1)->Arg(10)->Arg(100)->Unit(benchmark::kMillisecond);

// read_trace on the shipped (gzip) Kineto trace with the cache warm: hash
// the file, read the native entry.
void BM_ParseCacheHit(benchmark::State& state) {
  TraceOptions options;
  options.cache_dir = (scratch() / "cache").string();
  read_trace(trace_path(), options);  // the miss that fills it
  for (auto _ : state) benchmark::DoNotOptimize(read_trace(trace_path(), options).kernels.data());
}
BENCHMARK(BM_ParseCacheHit)->Unit(benchmark::kMillisecond);

// Every output file of `run` (native on the H200, baseline native), written
// to disk, per size; counter: bytes written per second.
void BM_Outputs(benchmark::State& state) {
  RunSpec spec;
  spec.trace_path = synthetic(static_cast<int>(state.range(0)));
  spec.device = "h200";
  spec.policy = "native";
  const Simulation sim = simulate(spec);
  const std::string dir = (scratch() / "outputs").string();
  std::uintmax_t bytes = 0;
  for (auto _ : state) {
    write_run_outputs(dir, spec, sim);
    bytes = 0;
    for (const auto& e : fs::directory_iterator(dir))
      if (e.is_regular_file()) bytes += e.file_size();
  }
  state.counters["MB"] = static_cast<double>(bytes) * 1e-6;
  // Bytes per activity of the two files that grow with the trace (README,
  // "Benchmarks": names once in names.csv, short trace events).
  const auto activities = static_cast<double>(sim.workload->kernels.size());
  state.counters["kernels_B/activity"] =
      static_cast<double>(fs::file_size(fs::path(dir) / "kernels.csv")) / activities;
  state.counters["trace_B/activity"] =
      static_cast<double>(fs::file_size(fs::path(dir) / "trace.json")) / activities;
  state.counters["bytes/s"] =
      benchmark::Counter(static_cast<double>(bytes) * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate);
}
BENCHMARK(BM_Outputs)->Arg(1)->Arg(10)->Arg(100)->Unit(benchmark::kMillisecond)->Iterations(3);

// `dvfsim run` as a child process: wall time (manual), CPU time (wait4) and
// peak resident memory. The peak comes from /usr/bin/time (%M) between us and
// dvfsim: a child forked or spawned straight from this process would report
// this process's own high-water mark (Linux keeps the larger of the two
// across exec), which holds the synthetic traces.
struct ChildRun {
  double wall_s = 0, cpu_s = 0, maxrss_mb = 0;
  int status = -1;
};
ChildRun run_child(const std::vector<std::string>& dvfsim_args) {
  const std::string rss_file = (scratch() / "maxrss.txt").string();
  std::vector<std::string> args = {"/usr/bin/time", "-f", "%M", "-o", rss_file};
  args.insert(args.end(), dvfsim_args.begin(), dvfsim_args.end());
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  ChildRun r;
  const auto t0 = std::chrono::steady_clock::now();
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (spawned != 0) return r;
  struct rusage ru {};
  ::wait4(pid, &r.status, 0, &ru);
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.cpu_s = static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
            static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
  try {
    r.maxrss_mb = std::stod(read_file(rss_file)) / 1024.0;  // KB
  } catch (const std::exception&) {
    r.status = -1;
  }
  return r;
}

void report(benchmark::State& state, const std::vector<std::string>& args, double activities) {
  double cpu = 0, rss = 0;
  for (auto _ : state) {
    const ChildRun r = run_child(args);
    if (r.status != 0) {
      state.SkipWithError("dvfsim run failed");
      return;
    }
    state.SetIterationTime(r.wall_s);
    cpu += r.cpu_s;
    rss = std::max(rss, r.maxrss_mb);
  }
  state.counters["cpu_s"] = cpu / static_cast<double>(state.iterations());
  state.counters["peak_rss_MB"] = rss;
  state.counters["activities"] = activities;
  state.counters["rss_B/activity"] = rss * 1048576.0 / activities;
}

// The shipped trace under native on the H200, read from a warm cache; all
// outputs written (acceptance: <= 50 ms wall and CPU).
void BM_RunShippedFromCache(benchmark::State& state) {
  const std::string cache = (scratch() / "run-cache").string();
  const std::vector<std::string> args = {
      DVFSIM_EXE,    "run",      "--trace", trace_path(), "--device",
      "h200",        "--policy", "native",  "--out",      (scratch() / "run-shipped").string(),
      "--cache-dir", cache};
  run_child(args);  // fills the cache
  report(state, args, static_cast<double>(shipped().kernels.size()));
}
BENCHMARK(BM_RunShippedFromCache)->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(5);

// native on the H200 over 1x, 10x and 100x the shipped trace (native-format
// files), all outputs written (acceptance at 100x: <= 1.5 s, <= 200 MB).
void BM_RunScaling(benchmark::State& state) {
  const int copies = static_cast<int>(state.range(0));
  const std::vector<std::string> args = {
      DVFSIM_EXE, "run",
      "--trace",  synthetic(copies),
      "--device", "h200",
      "--policy", "native",
      "--out",    (scratch() / ("run-" + std::to_string(copies))).string()};
  report(state, args, static_cast<double>(shipped().kernels.size()) * copies);
}
BENCHMARK(BM_RunScaling)
    ->Arg(1)
    ->Arg(10)
    ->Arg(100)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond)
    ->Iterations(2);

}  // namespace
