#pragma once
// Wires one simulation: loads the trace and devices, builds the models, runs
// the baseline and the policy, and returns both results. Used by `run`,
// `sweep`, `hw validate`, the benchmarks and the end-to-end tests.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "models/device_yaml.h"
#include "sim/engine.h"
#include "sim/model_registry.h"
#include "sim/result.h"
#include "sim/workload.h"
#include "traces/host_overhead.h"
#include "traces/trace_options.h"

namespace dvfsim {

struct PolicyInfo;  // policies/registry.h

struct ParallelSummary;  // apps/parallel_run.h

namespace plan {
class PlanMemo;  // policies/planning/kernel_plan.h
}

struct RunSpec {
  std::string trace_path;
  std::string device = "h200";  // name or YAML path
  std::string policy = "native";
  std::map<std::string, std::string>
      settings;                     // --set KEY=VALUE (apps/settings.h, or the policy's)
  std::string baseline = "native";  // "" or "none": no baseline run
  std::uint64_t seed = 1;
  bool record_timeline = true;
  TraceOptions trace_options;  // --gpu, --iterations, --capture-device
  // Also replay the step natively at both ends of the profiler factor's range
  // (Simulation::host_range): `run`, `sweep` and the Python API.
  bool host_range = false;
};

// A Kineto trace's native replay at both ends of the profiler factor's
// measured range (kHostOverheadFactorLow/High, traces/host_overhead.h): how
// much of the step's time, and so of its energy, rests on the host
// correction. Per iteration (steady-state mean).
struct HostRange {
  double slow_factor = kHostOverheadFactorLow, fast_factor = kHostOverheadFactorHigh;
  double slow_time_s = 0, fast_time_s = 0;
  double slow_energy_j = 0, fast_energy_j = 0;
  double time_spread_pct() const { return host_time_spread_pct(slow_time_s, fast_time_s); }
  bool host_bound() const { return host_bounds_step(slow_time_s, fast_time_s); }
};

struct Simulation {
  std::shared_ptr<const Workload> workload;
  std::shared_ptr<const LoadedDevice> capture;  // the device the trace was captured on
  std::shared_ptr<const LoadedDevice> target;   // the simulated device
  // The target's models, by the names its device file gives (sim/model_registry.h).
  std::string latency_model;
  std::string power_model;
  std::string governor;
  ModelOptions models;  // --set data_activity (apps/settings.h)
  HostOverhead host;    // --set host_overhead, as applied (off for a native trace)
  // The board power limit the run was replayed at (the device's limit_w
  // unless --set power_limit_w or a power-limit policy changed it); the
  // baseline runs at the device's own limit.
  double power_limit_w = 0.0;
  EngineConfig engine;
  std::map<std::string, std::string> policy_params;  // resolved, defaults filled
  RunResult result;
  bool has_baseline = false;
  RunResult baseline;
  // --parallel runs: the job and per-GPU results (result and baseline hold
  // the job's totals for one iteration).
  std::shared_ptr<const ParallelSummary> parallel;
  // RunSpec::host_range on a Kineto trace with the host correction on: two
  // native replays, at the range's ends, with the run's engine settings (its
  // policy's parameters aside); a sweep replays them once per trace, device
  // and settings (RunCache::host_range).
  std::optional<HostRange> host_range;
};

// Mean of a per-iteration figure over the workload's steady-state iterations
// (every iteration when it names none): warm-up inside the profiling window
// does not stand for the run.
template <class T>
double steady_mean(const std::vector<T>& v, const std::vector<std::int32_t>& steady) {
  double sum = 0;
  std::size_t n = 0;
  for (const std::int32_t i : steady)
    if (i >= 0 && static_cast<std::size_t>(i) < v.size()) {
      sum += static_cast<double>(v[static_cast<std::size_t>(i)]);
      ++n;
    }
  if (n == 0) {
    for (const T& x : v) sum += static_cast<double>(x);
    n = v.size();
  }
  return n > 0 ? sum / static_cast<double>(n) : 0.0;
}

// Loads a trace (Kineto JSON or native), cached by path, trace options and
// host-overhead setting for the process. Kineto traces get the profiler
// host-overhead correction (traces/host_overhead.h; `--set
// host_overhead=off|auto|F`); native traces are replayed as written.
std::shared_ptr<const Workload> load_workload(const std::string& path,
                                              const TraceOptions& options = {},
                                              const HostOverhead& host = HostOverhead{});
std::shared_ptr<const LoadedDevice> load_device_cached(const std::string& name_or_path);

class RunCache;  // below
// `cache` (optional): work shared with other runs (RunCache).
Simulation simulate(const RunSpec& spec, RunCache* cache = nullptr);
// Whether `watts` is a power limit the device accepts: inside its
// power.limit_min_w..limit_max_w (false when its file gives no range).
bool power_limit_settable(const Device& d, double watts);
// InputError naming `what` and the device's range unless power_limit_settable.
void check_power_limit(const Device& d, double watts, const std::string& what);

// One replay with prepared inputs (for benchmarks and tests).
struct Prepared {
  std::shared_ptr<const Workload> workload;
  std::shared_ptr<const LoadedDevice> capture, target;
  std::unique_ptr<LatencyModel> latency;
  std::unique_ptr<PowerModel> power;
  std::unique_ptr<Governor> governor;
  std::vector<KernelCost> costs;
  // The firmware warm-ups of replays of these inputs (shared by baseline,
  // policy and planner replays).
  std::shared_ptr<WarmFirmwareCache> warm = std::make_shared<WarmFirmwareCache>();
  // workload_shape(*workload), for every replay of it (EngineInputs::shape).
  WorkloadShape shape;
};
Prepared prepare(std::shared_ptr<const Workload> w, std::shared_ptr<const LoadedDevice> target,
                 const ModelOptions& options = {});
// The prepared workload, target, models and costs into a replay's inputs
// (EngineInputs, ParallelInputs).
template <class Inputs>
void set_prepared(Inputs& in, const Prepared& p) {
  in.workload = p.workload.get();
  in.device = &p.target->device;
  in.latency = p.latency.get();
  in.power = p.power.get();
  in.governor = p.governor.get();
  in.costs = &p.costs;
}
RunResult replay_policy(const Prepared& p, const std::string& policy,
                        const std::map<std::string, std::string>& params, const EngineConfig& cfg,
                        const RunResult* baseline = nullptr);

// The board power limit a run uses, in W: -1 for the device's own; else the
// checked `requested_w` (--set power_limit_w, < 0 when not given), or, for a
// policy that chooses the limit itself, the limit it picks from
// `time_energy_at(w)`: the run's (time s, energy J) under native clocks at a
// limit of w. The choice's solve reports are appended to `reports`.
double run_power_limit_w(const Device& d, const PolicyInfo& policy,
                         const std::map<std::string, std::string>& policy_settings,
                         double requested_w,
                         const std::function<std::pair<double, double>(double)>& time_energy_at,
                         std::vector<SolveReport>* reports);
// The run's inputs with the board power limit set to `w`.
Prepared prepare_at_limit(const std::shared_ptr<const Workload>& w,
                          const std::shared_ptr<const LoadedDevice>& target, double limit_w,
                          const ModelOptions& options);

// The set-up every run shares: copies the engine, model and host settings
// into `sim`, loads the trace and the target device, resolves the policy's
// parameters (`sim.policy_params`; InputError on an unknown policy) and
// records the models, then prepares the replay inputs.
struct RunSettings;  // apps/settings.h
Prepared prepare_run(const RunSpec& spec, const RunSettings& settings,
                     const std::map<std::string, std::string>& policy_settings, Simulation& sim);

// Work shared by the runs of one process (a sweep's): the prepared inputs
// (models, costs, firmware warm-ups) of each (trace as loaded, device, model
// options); each baseline replay per (those, baseline policy, engine
// settings); and the planners' plans (plan::PlanMemo: a plan is computed once
// per distinct input, e.g. kernel-oracle's across switch latencies that do not
// change it). A run with a cache gives the results it gives alone, bit for
// bit (solve times aside). Thread-safe; it must outlive the runs' results.
class RunCache {
 public:
  RunCache();
  ~RunCache();
  RunCache(const RunCache&) = delete;
  RunCache& operator=(const RunCache&) = delete;
  plan::PlanMemo& plans() { return *plans_; }
  std::size_t baseline_replays() const;  // baselines replayed (misses)
  std::size_t baseline_hits() const;

  // The prepared inputs of `w` on `target` (prepare()), computed once.
  std::shared_ptr<const Prepared> prepared(const std::shared_ptr<const Workload>& w,
                                           const std::shared_ptr<const LoadedDevice>& target,
                                           const ModelOptions& options);
  // The baseline replay of `p` (from prepared()) under `policy` and `cfg`.
  const RunResult& baseline(const std::shared_ptr<const Prepared>& p, const std::string& policy,
                            const EngineConfig& cfg);
  // The host range (Simulation::host_range) of the runs whose trace, device
  // and engine settings `key` names, from `replay` the first time.
  HostRange host_range(const std::string& key, const std::function<HostRange()>& replay);

 private:
  mutable std::mutex m_;
  std::unique_ptr<plan::PlanMemo> plans_;
  std::map<std::tuple<const Workload*, const LoadedDevice*, double, bool, bool>,
           std::shared_ptr<const Prepared>>
      prepared_;
  std::map<std::pair<const Prepared*, std::string>, std::shared_ptr<const RunResult>> baselines_;
  std::size_t baseline_replays_ = 0, baseline_hits_ = 0;
  std::map<std::string, HostRange> host_ranges_;
};

// Percent helpers with the sign convention of summary.json.
double energy_saving_pct(const RunResult& r, const RunResult& base);
double slowdown_pct(const RunResult& r, const RunResult& base);
// The same over iterations 2..N only (the rate an online policy, which
// profiles the first iteration at the default clocks, reaches in a long
// run): the sums of `iteration_energy_j` / `iteration_time_ns` after the
// first against the baseline's. nullopt with fewer than two iterations in
// either run, or when they differ in iteration count.
std::optional<double> energy_saving_after_first_pct(const RunResult& r, const RunResult& base);
std::optional<double> slowdown_after_first_pct(const RunResult& r, const RunResult& base);

}  // namespace dvfsim
