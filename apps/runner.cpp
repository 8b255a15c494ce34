#include "apps/runner.h"

#include <fmt/format.h>

#include <algorithm>
#include <mutex>

#include "apps/settings.h"
#include "models/capture_device.h"
#include "policies/planning/kernel_plan.h"
#include "policies/registry.h"
#include "sim/error.h"
#include "sim/graph.h"
#include "sim/model_registry.h"
#include "traces/trace.h"

namespace dvfsim {

std::shared_ptr<const Workload> load_workload(const std::string& path, const TraceOptions& options,
                                              const HostOverhead& host) {
  static std::mutex m;
  static std::map<std::string, std::shared_ptr<const Workload>> cache;
  const std::string key = path + '\n' + options.key() + '\n' + host.spec();
  {
    std::lock_guard<std::mutex> lock(m);
    if (auto it = cache.find(key); it != cache.end()) return it->second;
  }
  TraceFormat format = TraceFormat::unknown;
  Workload loaded = read_trace(path, options, &format);
  if (host.enabled && format == TraceFormat::kineto) remove_host_overhead(loaded, host);
  auto w = std::make_shared<const Workload>(std::move(loaded));
  // The engine executes kernels one at a time in launch order: every
  // dependency (stream order, event waits, host syncs) must point forward.
  // Stream order and host syncs do by construction (dependencies(),
  // sim/graph.h), so only the event waits are checked; the Boost graph is
  // built only where it is used (critical path, tests).
  for (const EventWait& e : w->event_waits)
    if (e.after >= e.kernel)
      throw InputError(fmt::format("{}: dependency from kernel {} to earlier kernel {}",
                                   w->source_path, e.after, e.kernel));
  std::lock_guard<std::mutex> lock(m);
  return cache.emplace(key, std::move(w)).first->second;
}

// Capture devices: simulation targets or capture-only files.
std::shared_ptr<const LoadedDevice> load_capture_cached(const std::string& name_or_path) {
  static std::mutex m;
  static std::map<std::string, std::shared_ptr<const LoadedDevice>> cache;
  {
    std::lock_guard<std::mutex> lock(m);
    if (auto it = cache.find(name_or_path); it != cache.end()) return it->second;
  }
  auto d = std::make_shared<const LoadedDevice>(load_capture_device(name_or_path));
  std::lock_guard<std::mutex> lock(m);
  return cache.emplace(name_or_path, std::move(d)).first->second;
}

std::shared_ptr<const LoadedDevice> load_device_cached(const std::string& name_or_path) {
  static std::mutex m;
  static std::map<std::string, std::shared_ptr<const LoadedDevice>> cache;
  {
    std::lock_guard<std::mutex> lock(m);
    if (auto it = cache.find(name_or_path); it != cache.end()) return it->second;
  }
  auto d = std::make_shared<const LoadedDevice>(load_device(name_or_path));
  std::lock_guard<std::mutex> lock(m);
  return cache.emplace(name_or_path, std::move(d)).first->second;
}

Prepared prepare(std::shared_ptr<const Workload> w, std::shared_ptr<const LoadedDevice> target,
                 const ModelOptions& options) {
  Prepared p;
  p.workload = std::move(w);
  p.target = std::move(target);
  const std::string& cap = p.workload->capture.device;
  const std::string& gpu = p.workload->capture.device_name;
  if (cap.empty() && gpu.empty())
    throw InputError(fmt::format(
        "{}: the trace does not name the GPU it was captured on (no deviceProperties): pass "
        "--capture-device NAME|FILE (`dvfsim devices --capture` lists them)",
        p.workload->source_path));
  if (cap.empty())
    throw InputError(fmt::format(
        "{}: captured on '{}', which no device file lists in its nvml_names: pass "
        "--capture-device NAME|FILE with the closest GPU (`dvfsim devices --capture` lists "
        "them), or add a capture-device file for it (docs/devices.md, \"Capture devices\")",
        p.workload->source_path, gpu));
  p.capture = cap == p.target->device.name ? p.target : load_capture_cached(cap);
  const Device& d = p.target->device;
  p.power = make_power_model(d, options);  // first: says so when `d` is for capture only
  p.latency = make_latency_model(d, options);
  p.governor = make_governor(d, *p.power);
  p.costs = p.latency->prepare(*p.workload, p.capture->device, d);
  p.shape = workload_shape(*p.workload);
  return p;
}

RunResult replay_policy(const Prepared& p, const std::string& policy,
                        const std::map<std::string, std::string>& params, const EngineConfig& cfg,
                        const RunResult* baseline) {
  const PolicyInfo& info = find_policy(policy);
  const Params resolved = resolve_params(info, params);
  std::unique_ptr<Policy> pol = info.make(resolved);
  EngineInputs in;
  set_prepared(in, p);
  in.warm_cache = p.warm.get();
  in.shape = &p.shape;
  in.baseline = baseline;
  in.policy_name = info.name;
  RunResult r = replay(in, *pol, cfg);
  r.policy = info.name;
  r.oracle = info.oracle;
  r.solver = pol->solve_reports();
  r.policy_notes = pol->notes();
  return r;
}

double energy_saving_pct(const RunResult& r, const RunResult& base) {
  return base.energy_j > 0 ? 100.0 * (base.energy_j - r.energy_j) / base.energy_j : 0.0;
}
double slowdown_pct(const RunResult& r, const RunResult& base) {
  const double b = base.time_s();
  return b > 0 ? 100.0 * (r.time_s() - b) / b : 0.0;
}

namespace {
// (time, energy) summed over iterations 2..N; nullopt with fewer than two.
std::optional<std::pair<double, double>> after_first(const RunResult& r) {
  if (r.iteration_time_ns.size() < 2 || r.iteration_energy_j.size() != r.iteration_time_ns.size())
    return std::nullopt;
  double t = 0, e = 0;
  for (std::size_t i = 1; i < r.iteration_time_ns.size(); ++i) {
    t += static_cast<double>(r.iteration_time_ns[i]);
    e += r.iteration_energy_j[i];
  }
  return std::pair{t, e};
}
}  // namespace

std::optional<double> energy_saving_after_first_pct(const RunResult& r, const RunResult& base) {
  const auto a = after_first(r), b = after_first(base);
  if (!a || !b || r.iteration_time_ns.size() != base.iteration_time_ns.size() || !(b->second > 0))
    return std::nullopt;
  return 100.0 * (b->second - a->second) / b->second;
}
std::optional<double> slowdown_after_first_pct(const RunResult& r, const RunResult& base) {
  const auto a = after_first(r), b = after_first(base);
  if (!a || !b || r.iteration_time_ns.size() != base.iteration_time_ns.size() || !(b->first > 0))
    return std::nullopt;
  return 100.0 * (a->first - b->first) / b->first;
}

bool power_limit_settable(const Device& d, double watts) {
  return d.power_limit_max_w > 0 && watts >= d.power_limit_min_w && watts <= d.power_limit_max_w;
}

void check_power_limit(const Device& d, double watts, const std::string& what) {
  if (!(d.power_limit_max_w > 0))
    throw InputError(fmt::format(
        "{}={:g}: {} gives no power-limit range (power.limit_min_w and limit_max_w in {})", what,
        watts, d.name, d.source_path));
  if (!power_limit_settable(d, watts))
    throw InputError(fmt::format("{}={:g}: outside {}'s power-limit range {:g}..{:g} W", what,
                                 watts, d.name, d.power_limit_min_w, d.power_limit_max_w));
}

double run_power_limit_w(const Device& d, const PolicyInfo& policy,
                         const std::map<std::string, std::string>& policy_settings,
                         double requested_w,
                         const std::function<std::pair<double, double>(double)>& time_energy_at,
                         std::vector<SolveReport>* reports) {
  if (requested_w >= 0) check_power_limit(d, requested_w, "--set power_limit_w");
  if (!policy.choose_power_limit) return requested_w;
  if (requested_w >= 0)
    throw InputError(fmt::format(
        "--set power_limit_w: the {} policy chooses the power limit itself", policy.name));
  if (!(d.power_limit_max_w > 0))
    throw InputError(
        fmt::format("{}: the {} policy needs the device's power-limit range (power.limit_min_w and "
                    "limit_max_w), which {} does not give",
                    d.source_path, policy.name, d.name));
  PowerLimitProfiler prof;
  prof.min_w = d.power_limit_min_w;
  prof.max_w = d.power_limit_max_w;
  prof.default_w = d.power_limit_w;
  prof.time_energy_at = time_energy_at;
  if (reports) prof.report = [reports](const SolveReport& r) { reports->push_back(r); };
  const double w = policy.choose_power_limit(resolve_params(policy, policy_settings), prof);
  check_power_limit(d, w, policy.name);
  return w;
}

Prepared prepare_at_limit(const std::shared_ptr<const Workload>& w,
                          const std::shared_ptr<const LoadedDevice>& target, double limit_w,
                          const ModelOptions& options) {
  auto limited = std::make_shared<LoadedDevice>(*target);
  limited->device.power_limit_w = limit_w;
  return prepare(w, limited, options);
}

namespace {

// prepare_run without the prepare().
void set_up_run(const RunSpec& spec, const RunSettings& settings,
                const std::map<std::string, std::string>& policy_settings, Simulation& sim) {
  sim.engine = settings.engine;
  sim.models = settings.models;
  sim.host = settings.host;
  sim.workload = load_workload(spec.trace_path, spec.trace_options, sim.host);
  if (detect_trace_format(spec.trace_path) != TraceFormat::kineto)
    sim.host.enabled = false;  // the correction applies to Kineto traces only
  sim.target = load_device_cached(spec.device);
  const PolicyInfo& info = find_policy(spec.policy);  // fail early on a bad name
  sim.policy_params = resolve_params(info, policy_settings).all();
  const Device& d = sim.target->device;
  sim.latency_model = d.latency.model;
  sim.power_model = d.power.model;
  sim.governor = d.governor.model;
  sim.power_limit_w = d.power_limit_w;
}

// Simulation::host_range of a run of `spec` (its host correction on).
HostRange replay_host_range(const RunSpec& spec, RunCache* cache) {
  RunSettings settings;
  RunSpec at = spec;
  for (const auto& [key, value] : apply_engine_settings(spec.settings, settings))
    at.settings.erase(key);  // the policy's parameters: native takes none
  at.settings.erase("host_overhead");
  at.policy = "native";
  at.baseline = "none";
  at.record_timeline = false;
  at.host_range = false;
  const auto replay = [&at, cache] {
    HostRange r;
    for (const bool slow : {true, false}) {
      at.settings["host_overhead"] = fmt::format("{}", slow ? r.slow_factor : r.fast_factor);
      const Simulation x = simulate(at, cache);
      const std::vector<std::int32_t>& steady = x.workload->steady_iterations;
      (slow ? r.slow_time_s : r.fast_time_s) =
          steady_mean(x.result.iteration_time_ns, steady) * 1e-9;
      (slow ? r.slow_energy_j : r.fast_energy_j) = steady_mean(x.result.iteration_energy_j, steady);
    }
    return r;
  };
  if (!cache) return replay();
  std::string key =
      fmt::format("{}\n{}\n{}\n{}", at.trace_path, at.trace_options.key(), at.device, at.seed);
  for (const auto& [k, v] : at.settings) key += fmt::format("\n{}={}", k, v);
  return cache->host_range(key, replay);
}

}  // namespace

Prepared prepare_run(const RunSpec& spec, const RunSettings& settings,
                     const std::map<std::string, std::string>& policy_settings, Simulation& sim) {
  set_up_run(spec, settings, policy_settings, sim);
  Prepared p = prepare(sim.workload, sim.target, sim.models);
  sim.capture = p.capture;
  return p;
}

RunCache::RunCache() : plans_(std::make_unique<plan::PlanMemo>()) {}
RunCache::~RunCache() = default;

std::size_t RunCache::baseline_replays() const {
  const std::lock_guard<std::mutex> lock(m_);
  return baseline_replays_;
}
std::size_t RunCache::baseline_hits() const {
  const std::lock_guard<std::mutex> lock(m_);
  return baseline_hits_;
}

std::shared_ptr<const Prepared> RunCache::prepared(
    const std::shared_ptr<const Workload>& w, const std::shared_ptr<const LoadedDevice>& target,
    const ModelOptions& options) {
  // The workload and device caches keep every object for the process, so
  // their addresses identify them.
  const auto key = std::make_tuple(w.get(), target.get(), options.data_activity,
                                   options.zeroed_operands, options.resident_warps);
  {
    const std::lock_guard<std::mutex> lock(m_);
    if (const auto it = prepared_.find(key); it != prepared_.end()) return it->second;
  }
  auto p = std::make_shared<const Prepared>(prepare(w, target, options));
  const std::lock_guard<std::mutex> lock(m_);
  const auto [it, fresh] = prepared_.emplace(key, std::move(p));
  if (fresh)
    plans_->admit({&it->second->target->device, it->second->latency.get(), it->second->power.get(),
                   it->second->governor.get()});
  return it->second;
}

HostRange RunCache::host_range(const std::string& key, const std::function<HostRange()>& replay) {
  {
    const std::lock_guard<std::mutex> lock(m_);
    if (const auto it = host_ranges_.find(key); it != host_ranges_.end()) return it->second;
  }
  const HostRange r = replay();
  const std::lock_guard<std::mutex> lock(m_);
  return host_ranges_.emplace(key, r).first->second;
}

const RunResult& RunCache::baseline(const std::shared_ptr<const Prepared>& p,
                                    const std::string& policy, const EngineConfig& cfg) {
  // Every field of the engine's settings.
  const std::string key =
      fmt::format("{}\n{}\n{}\n{}\n{}\n{}\n{}", policy, cfg.seed, cfg.record_timeline,
                  cfg.switch_latency_override_us, cfg.memory_stall_override_us, cfg.power_cap,
                  cfg.warm_firmware);
  {
    const std::lock_guard<std::mutex> lock(m_);
    if (const auto it = baselines_.find({p.get(), key}); it != baselines_.end()) {
      ++baseline_hits_;
      return *it->second;
    }
  }
  auto r = std::make_shared<const RunResult>(replay_policy(*p, policy, {}, cfg));
  const std::lock_guard<std::mutex> lock(m_);
  ++baseline_replays_;
  return *baselines_.emplace(std::make_pair(p.get(), key), std::move(r)).first->second;
}

Simulation simulate(const RunSpec& spec, RunCache* cache) {
  Simulation sim;
  RunSettings settings;
  settings.engine.seed = spec.seed;
  settings.engine.record_timeline = spec.record_timeline;
  const std::map<std::string, std::string> policy_settings =
      apply_engine_settings(spec.settings, settings);
  std::shared_ptr<const Prepared> shared;
  if (cache) {
    set_up_run(spec, settings, policy_settings, sim);
    shared = cache->prepared(sim.workload, sim.target, sim.models);
    sim.capture = shared->capture;
  } else {
    shared = std::make_shared<const Prepared>(prepare_run(spec, settings, policy_settings, sim));
  }
  const Prepared& p = *shared;
  const PolicyInfo& info = find_policy(spec.policy);
  const Device& d = sim.target->device;
  // A run on its own remembers its plans too: latency-aware asks for the
  // per-kernel knapsack of one input twice (followed early, and at each
  // kernel's start), and plans are deterministic (plan::PlanMemo).
  plan::PlanMemo run_memo;
  if (!cache) run_memo.admit({&p.target->device, p.latency.get(), p.power.get(), p.governor.get()});
  const plan::PlanMemo::Scope memo(cache ? &cache->plans() : &run_memo);
  if (!spec.baseline.empty() && spec.baseline != "none") {
    find_policy(spec.baseline);
    sim.baseline = cache ? cache->baseline(shared, spec.baseline, sim.engine)
                         : replay_policy(p, spec.baseline, {}, sim.engine);
    sim.has_baseline = true;
  }
  const RunResult* base = sim.has_baseline ? &sim.baseline : nullptr;
  std::vector<SolveReport> choice_reports;  // the power-limit choice's
  const double power_limit_w = run_power_limit_w(
      d, info, policy_settings, settings.power_limit_w,
      [&](double w) {
        const Prepared q = prepare_at_limit(sim.workload, sim.target, w, sim.models);
        const RunResult r = replay_policy(q, "native", {}, sim.engine, base);
        return std::pair<double, double>(r.time_s(), r.energy_j);
      },
      &choice_reports);
  if (power_limit_w >= 0 && power_limit_w != d.power_limit_w) {
    const Prepared q = prepare_at_limit(sim.workload, sim.target, power_limit_w, sim.models);
    sim.power_limit_w = power_limit_w;
    sim.result = replay_policy(q, spec.policy, policy_settings, sim.engine, base);
  } else {
    sim.result = replay_policy(p, spec.policy, policy_settings, sim.engine, base);
  }
  sim.result.solver.insert(sim.result.solver.begin(), choice_reports.begin(), choice_reports.end());
  if (spec.host_range && sim.host.enabled) sim.host_range = replay_host_range(spec, cache);
  return sim;
}

}  // namespace dvfsim
