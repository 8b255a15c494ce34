#include "apps/runner.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <limits>
#include <mutex>

#include "policies/registry.h"
#include "sim/error.h"
#include "sim/graph.h"
#include "sim/model_registry.h"
#include "traces/trace.h"

namespace dvfsim {

const std::vector<std::string>& engine_setting_keys() {
  static const std::vector<std::string> keys = {"switch_latency_us", "memory_stall_us",
                                                "data_activity", "host_overhead"};
  return keys;
}

std::shared_ptr<const Workload> load_workload(const std::string& path, const HostOverhead& host) {
  static std::mutex m;
  static std::map<std::string, std::shared_ptr<const Workload>> cache;
  const std::string key = path + '\n' + host.spec();
  {
    std::lock_guard<std::mutex> lock(m);
    if (auto it = cache.find(key); it != cache.end()) return it->second;
  }
  Workload loaded = read_trace(path);
  if (host.enabled && detect_trace_format(path) == TraceFormat::kineto)
    remove_host_overhead(loaded, host);
  auto w = std::make_shared<const Workload>(std::move(loaded));
  // The engine executes kernels one at a time in launch order: every
  // dependency (stream order, event waits, host syncs) must point forward.
  check_launch_order(*w, build_dependency_graph(*w));
  std::lock_guard<std::mutex> lock(m);
  return cache.emplace(key, std::move(w)).first->second;
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
  if (cap.empty())
    throw InputError(
        fmt::format("{}: the trace does not say which GPU captured it", p.workload->source_path));
  p.capture = cap == p.target->device.name ? p.target : load_device_cached(cap);
  const Device& d = p.target->device;
  p.power = make_power_model(d, options);  // first: says so when `d` is for capture only
  p.latency = make_latency_model(d);
  p.governor = make_governor(d, *p.power);
  p.costs = p.latency->prepare(*p.workload, p.capture->device, d);
  return p;
}

RunResult replay_policy(const Prepared& p, const std::string& policy,
                        const std::map<std::string, std::string>& params, const EngineConfig& cfg,
                        const RunResult* baseline) {
  const PolicyInfo& info = find_policy(policy);
  const Params resolved = resolve_params(info, params);
  std::unique_ptr<Policy> pol = info.make(resolved);
  EngineInputs in;
  in.workload = p.workload.get();
  in.device = &p.target->device;
  in.latency = p.latency.get();
  in.power = p.power.get();
  in.governor = p.governor.get();
  in.costs = &p.costs;
  in.baseline = baseline;
  in.policy_name = info.name;
  RunResult r = replay(in, *pol, cfg);
  r.policy = info.name;
  r.oracle = info.oracle;
  return r;
}

double energy_saving_pct(const RunResult& r, const RunResult& base) {
  return base.energy_j > 0 ? 100.0 * (base.energy_j - r.energy_j) / base.energy_j : 0.0;
}
double slowdown_pct(const RunResult& r, const RunResult& base) {
  const double b = base.time_s();
  return b > 0 ? 100.0 * (r.time_s() - b) / b : 0.0;
}

Simulation simulate(const RunSpec& spec) {
  Simulation sim;
  HostOverhead host;
  if (auto it = spec.settings.find("host_overhead"); it != spec.settings.end())
    host = parse_host_overhead(it->second);
  sim.workload = load_workload(spec.trace_path, host);
  sim.target = load_device_cached(spec.device);
  const PolicyInfo& info = find_policy(spec.policy);  // fail early on a bad name

  std::map<std::string, std::string> policy_settings;
  sim.engine.seed = spec.seed;
  sim.engine.record_timeline = spec.record_timeline;
  for (const auto& [key_, value_] : spec.settings) {
    const std::string &key = key_, &value = value_;  // clang 14: no captured bindings
    // A finite number in [0, max], else an error saying what was expected.
    auto number = [&](double max, std::string_view expected) {
      double v = -1;
      auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
      if (ec != std::errc() || ptr != value.data() + value.size() || !(v >= 0 && v <= max))
        throw InputError(fmt::format("--set {}={}: expected {}", key, value, expected));
      return v;
    };
    // At most the longest trace span (1 h): a switch that takes longer never
    // lands inside any trace, and larger values overflow the nanosecond clock.
    constexpr double kMaxUs = static_cast<double>(kMaxTraceSpanNs) / 1000.0;
    if (key == "switch_latency_us") {
      sim.engine.switch_latency_override_us =
          number(kMaxUs, "a time in microseconds in [0, 3.6e9] (1 h)");
    } else if (key == "memory_stall_us") {
      sim.engine.memory_stall_override_us =
          number(kMaxUs, "a time in microseconds in [0, 3.6e9] (1 h)");
    } else if (key == "data_activity") {
      sim.data_activity = number(1.0, "a number in [0, 1] (1: random data)");
    } else if (key == "host_overhead") {
      // read above, before the trace was loaded
    } else {
      policy_settings[key] = value;
    }
  }
  sim.policy_params = resolve_params(info, policy_settings).all();
  const Device& d = sim.target->device;
  sim.latency_model = d.latency.model;
  sim.power_model = d.power.model;
  sim.governor = d.governor.model;
  ModelOptions options;
  options.data_activity = sim.data_activity;
  const Prepared p = prepare(sim.workload, sim.target, options);
  sim.capture = p.capture;
  if (!spec.baseline.empty() && spec.baseline != "none") {
    find_policy(spec.baseline);
    sim.baseline = replay_policy(p, spec.baseline, {}, sim.engine);
    sim.has_baseline = true;
  }
  sim.result = replay_policy(p, spec.policy, policy_settings, sim.engine,
                             sim.has_baseline ? &sim.baseline : nullptr);
  return sim;
}

}  // namespace dvfsim
