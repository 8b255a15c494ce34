#include "apps/outputs.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <numeric>
#include <ostream>
#include <tuple>

#include "apps/files.h"
#include "apps/output_dir.h"
#include "apps/parallel_run.h"
#include "apps/settings.h"
#include "hw/plan.h"
#include "sim/graph.h"
#include "sim/json.h"

#ifndef DVFSIM_VERSION
#define DVFSIM_VERSION "0.0.0"
#endif

namespace dvfsim {
namespace {

// Mean over the workload's steady-state iterations (every iteration when it
// names none): warm-up inside the profiling window does not stand for the run.
template <class T>
double mean(const std::vector<T>& v, const std::vector<std::int32_t>& steady) {
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

// Time with two or more activities running at once (concurrent streams), in
// the trace and in the replay (docs/design.md, "Concurrent streams").
std::pair<std::int64_t, std::int64_t> overlap_traced_replayed(const Workload& w,
                                                              const RunResult& r) {
  std::vector<Interval> replayed;
  replayed.reserve(r.kernels.size());
  for (const KernelResult& k : r.kernels)
    replayed.push_back({k.start_ns, k.start_ns + k.duration_ns});
  return {overlap_ns(traced_intervals(w)), overlap_ns(std::move(replayed))};
}

// GPU time whose FLOPs and bytes rest on the fallback estimate, and its share.
std::pair<double, double> fallback_time(const Workload& w) {
  double all = 0, fallback = 0;
  for (const Kernel& k : w.kernels) {
    all += static_cast<double>(k.work.duration_ns);
    if (k.work.source == WorkSource::fallback) fallback += static_cast<double>(k.work.duration_ns);
  }
  return {fallback * 1e-9, all > 0 ? fallback / all : 0.0};
}

void result_numbers(JsonWriter& j, const RunResult& r, const std::vector<std::int32_t>& steady) {
  const double t = r.time_s();
  j.field("time_s", t);
  j.field("energy_j", r.energy_j);
  j.field("avg_power_w", t > 0 ? r.energy_j / t : 0.0);
  j.field("iterations", r.iterations);
  j.field("time_per_iteration_s", mean(r.iteration_time_ns, steady) * 1e-9);
  j.field("energy_per_iteration_j", mean(r.iteration_energy_j, steady));
}

}  // namespace

std::string summary_json(const RunSpec& spec, const Simulation& sim) {
  const RunResult& r = sim.result;
  const Workload& w = *sim.workload;
  JsonWriter j;
  j.begin_object();
  j.field("trace", spec.trace_path);
  j.field("device", sim.target->device.name);
  j.field("capture_device", sim.capture->device.name);
  j.field("policy", r.policy);
  j.field("oracle", r.oracle);
  j.key("policy_params").begin_object();
  for (const auto& [k, v] : sim.policy_params) j.field(k, v);
  j.end_object();
  const RunSettings settings{sim.engine, sim.models, sim.host, sim.power_limit_w};
  for (const EngineSetting& s : engine_settings()) s.summarise(j, s.name, settings);
  j.field("seed", static_cast<std::uint64_t>(spec.seed));
  result_numbers(j, r, w.steady_iterations);
  j.key("iteration_time_s").begin_array();
  for (auto t : r.iteration_time_ns) j.value(static_cast<double>(t) * 1e-9);
  j.end_array();
  j.key("iteration_energy_j").begin_array();
  for (auto e : r.iteration_energy_j) j.value(e);
  j.end_array();
  j.field("clock_switches", r.clock_switches);
  j.field("coalesced_requests", r.coalesced_requests);
  j.field("switch_stall_s", static_cast<double>(r.switch_stall_ns) * 1e-9);
  j.field("off_target_s", static_cast<double>(r.off_target_ns) * 1e-9);
  j.field("power_capped_s", static_cast<double>(r.power_capped_ns) * 1e-9);
  // The policy's solves (gap, rounds) and notes; solve times stay out so that
  // a rerun writes the same file.
  j.key("solver").begin_array();
  for (const SolveReport& s : r.solver) {
    j.begin_object();
    j.field("policy", s.policy);
    j.field("what", s.what);
    j.field("items", static_cast<std::uint64_t>(s.items));
    j.field("copies", s.copies);
    j.field("pairs", static_cast<std::uint64_t>(s.pairs));
    j.field("hull_vertices", static_cast<std::uint64_t>(s.hull_vertices));
    if (std::isfinite(s.budget_ns))
      j.field("budget_s", s.budget_ns * 1e-9);
    else
      j.key("budget_s").null();
    j.field("time_s", s.time_ns * 1e-9);
    j.field("energy_j", s.energy_j);
    j.field("dual_bound_j", s.dual_bound_j);
    j.field("gap_j", s.gap_j);
    j.field("gap_pct", s.gap_pct);
    j.field("feasible", s.feasible);
    j.field("rounds", s.rounds);
    j.end_object();
  }
  j.end_array();
  j.key("policy_notes").begin_array();
  for (const std::string& n : r.policy_notes) j.value(n);
  j.end_array();
  const auto [traced_overlap, replayed_overlap] = overlap_traced_replayed(w, r);
  j.key("overlap_ms").begin_object();
  j.field("traced", static_cast<double>(traced_overlap) * 1e-6);
  j.field("replayed", static_cast<double>(replayed_overlap) * 1e-6);
  j.end_object();
  if (sim.has_baseline) {
    j.key("baseline").begin_object();
    j.field("policy", sim.baseline.policy);
    result_numbers(j, sim.baseline, w.steady_iterations);
    j.end_object();
    j.field("energy_saving_pct", energy_saving_pct(r, sim.baseline));
    j.field("slowdown_pct", slowdown_pct(r, sim.baseline));
  } else {
    j.key("baseline").null();
    j.key("energy_saving_pct").null();
    j.key("slowdown_pct").null();
  }
  if (sim.parallel) write_parallel_summary_fields(j, *sim.parallel);
  j.key("trace_reading").begin_object();
  j.field("capture_gpu", w.capture.device_name);
  j.field("iteration_rule", w.iteration_rule);
  j.key("steady_iterations").begin_array();
  for (const std::int32_t i : w.steady_iterations) j.value(i);
  j.end_array();
  const auto [fallback_s, fallback_share] = fallback_time(w);
  j.field("fallback_work_gpu_time_s", fallback_s);
  j.field("fallback_work_share", fallback_share);
  j.key("notes").begin_array();
  for (const std::string& n : w.notes) j.value(n);
  j.end_array();
  j.end_object();
  j.end_object();
  return j.str() + "\n";
}

std::string kernels_csv(const Simulation& sim) {
  const Workload& w = *sim.workload;
  const RunResult& r = sim.result;
  std::string out =
      "index,iteration,name,class,phase,stream,start_ns,duration_ns,flops,dram_bytes,work_source,"
      "requested_core_mhz,requested_memory_mhz,core_mhz,memory_mhz,power_w,energy_j,"
      "baseline_duration_ns,baseline_energy_j\n";
  out.reserve(w.kernels.size() * 200);
  for (std::size_t i = 0; i < w.kernels.size(); ++i) {
    const Kernel& k = w.kernels[i];
    const KernelResult& kr = r.kernels[i];
    const double p =
        kr.duration_ns > 0 ? kr.energy_j / (static_cast<double>(kr.duration_ns) * 1e-9) : 0.0;
    out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{:.1f},{:.1f},{:.3f},{:.9g},", i,
                       k.iteration, csv_field(w.name(k)), to_string(k.cls), to_string(k.phase),
                       k.stream, kr.start_ns, kr.duration_ns, k.work.flops, k.work.dram_bytes,
                       to_string(k.work.source), kr.requested_core_mhz, kr.requested_memory_mhz,
                       kr.core_mhz, kr.memory_mhz, p, kr.energy_j);
    if (sim.has_baseline)
      out += fmt::format("{},{:.9g}\n", sim.baseline.kernels[i].duration_ns,
                         sim.baseline.kernels[i].energy_j);
    else
      out += ",\n";
  }
  return out;
}

std::string timeline_csv(const Simulation& sim) {
  std::string out = "start_ns,duration_ns,core_mhz,memory_mhz,power_w,state,kernel\n";
  for (const Segment& s : sim.result.segments) {
    const char* state = s.kernel >= 0 ? "kernel" : (s.kernel == Segment::kStall ? "stall" : "idle");
    out += fmt::format("{},{},{},{},{:.3f},{},{}\n", s.start_ns, s.duration_ns, s.core_mhz,
                       s.memory_mhz, s.power_w, state,
                       s.kernel >= 0 ? fmt::format("{}", s.kernel) : "");
  }
  return out;
}

std::string clock_switches_csv(const Simulation& sim) {
  std::string out = "domain,request_ns,land_ns,latency_ns,from_mhz,to_mhz,stall_ns\n";
  for (const SwitchRecord& s : sim.result.switches) {
    const char* d = s.domain == SwitchRecord::Domain::core
                        ? "core"
                        : (s.domain == SwitchRecord::Domain::memory ? "memory" : "power_cap");
    out += fmt::format("{},{},{},{},{},{},{}\n", d, s.request_ns, s.land_ns,
                       s.land_ns - s.request_ns, s.from_mhz, s.to_mhz, s.stall_ns);
  }
  return out;
}

std::string perfetto_trace_json(const Simulation& sim) {
  const Workload& w = *sim.workload;
  const RunResult& r = sim.result;
  JsonWriter j(false);
  j.begin_object();
  j.field("displayTimeUnit", "ns");
  j.key("traceEvents").begin_array();
  auto us = [](std::int64_t ns) { return static_cast<double>(ns) * 1e-3; };
  // Track names.
  j.begin_object()
      .field("ph", "M")
      .field("name", "process_name")
      .field("pid", 0)
      .key("args")
      .begin_object()
      .field("name", fmt::format("{} ({})", sim.target->device.name, r.policy))
      .end_object()
      .end_object();
  std::vector<std::int32_t> streams;
  for (const Kernel& k : w.kernels)
    if (std::find(streams.begin(), streams.end(), k.stream) == streams.end())
      streams.push_back(k.stream);
  for (auto s : streams)
    j.begin_object()
        .field("ph", "M")
        .field("name", "thread_name")
        .field("pid", 0)
        .field("tid", s)
        .key("args")
        .begin_object()
        .field("name", fmt::format("stream {}", s))
        .end_object()
        .end_object();
  for (std::size_t i = 0; i < w.kernels.size(); ++i) {
    const Kernel& k = w.kernels[i];
    const KernelResult& kr = r.kernels[i];
    j.begin_object()
        .field("ph", "X")
        .field("name", w.name(k))
        .field("cat", to_string(k.cls))
        .field("pid", 0)
        .field("tid", k.stream)
        .field("ts", us(kr.start_ns))
        .field("dur", us(kr.duration_ns))
        .key("args")
        .begin_object()
        .field("index", static_cast<std::int64_t>(i))
        .field("phase", to_string(k.phase))
        .field("iteration", k.iteration)
        .field("core_mhz", kr.core_mhz)
        .field("memory_mhz", kr.memory_mhz)
        .field("energy_j", kr.energy_j)
        .end_object()
        .end_object();
  }
  // Counter tracks, one sample per timeline segment change.
  auto counter = [&](const char* name, const char* unit, auto value, std::int64_t start_ns) {
    j.begin_object()
        .field("ph", "C")
        .field("name", name)
        .field("pid", 0)
        .field("ts", us(start_ns))
        .key("args")
        .begin_object()
        .field(unit, value)
        .end_object()
        .end_object();
  };
  double last_p = -1, last_c = -1, last_m = -1;
  for (const Segment& s : r.segments) {
    if (s.power_w != last_p) counter("power (W)", "W", s.power_w, s.start_ns);
    if (s.core_mhz != last_c) counter("core clock (MHz)", "MHz", s.core_mhz, s.start_ns);
    if (s.memory_mhz != last_m) counter("memory clock (MHz)", "MHz", s.memory_mhz, s.start_ns);
    last_p = s.power_w;
    last_c = s.core_mhz;
    last_m = s.memory_mhz;
  }
  for (const SwitchRecord& s : r.switches) {
    const char* d = s.domain == SwitchRecord::Domain::core
                        ? "core"
                        : (s.domain == SwitchRecord::Domain::memory ? "memory" : "power cap");
    if (s.domain != SwitchRecord::Domain::power_cap)
      j.begin_object()
          .field("ph", "i")
          .field("s", "p")
          .field("pid", 0)
          .field("tid", 0)
          .field("name", fmt::format("{} switch requested -> {} MHz", d, s.to_mhz))
          .field("ts", us(s.request_ns))
          .end_object();
    j.begin_object()
        .field("ph", "i")
        .field("s", "p")
        .field("pid", 0)
        .field("tid", 0)
        .field("name", fmt::format("{} {} -> {} MHz", d, s.from_mhz, s.to_mhz))
        .field("ts", us(s.land_ns))
        .end_object();
  }
  j.end_array();
  j.end_object();
  return j.str() + "\n";
}

std::string manifest_json(const RunSpec& spec, const Simulation& sim) {
  JsonWriter j;
  j.begin_object();
  j.field("dvfsim_version", DVFSIM_VERSION);
  j.key("command").begin_object();
  j.field("trace", spec.trace_path);
  j.field("device", spec.device);
  j.field("policy", spec.policy);
  j.field("baseline", spec.baseline);
  j.field("seed", static_cast<std::uint64_t>(spec.seed));
  j.key("set").begin_object();
  for (const auto& [k, v] : spec.settings) j.field(k, v);
  j.end_object();
  j.end_object();
  j.key("resolved").begin_object();
  j.field("latency_model", sim.latency_model);
  j.field("power_model", sim.power_model);
  j.field("governor", sim.governor);
  j.field("switch_latency_override_us", sim.engine.switch_latency_override_us);
  j.field("memory_stall_override_us", sim.engine.memory_stall_override_us);
  j.field("warm_firmware", sim.engine.warm_firmware);
  j.key("policy_params").begin_object();
  for (const auto& [k, v] : sim.policy_params) j.field(k, v);
  j.end_object();
  j.field("capture_device", sim.capture->device.name);
  j.field("capture_core_mhz", sim.workload->capture.core_mhz);
  j.field("capture_memory_mhz", sim.workload->capture.memory_mhz);
  j.field("capture_clocks_source", sim.workload->capture.clocks_source);
  j.field("instructions_source", sim.workload->capture.instructions_source);
  j.end_object();
  j.key("inputs").begin_object();
  j.key("trace")
      .begin_object()
      .field("path", spec.trace_path)
      .field("hash", file_fingerprint(spec.trace_path))
      .end_object();
  j.key("device")
      .begin_object()
      .field("path", sim.target->device.source_path)
      .field("hash", file_fingerprint(sim.target->device.source_path))
      .end_object();
  if (sim.capture != sim.target)
    j.key("capture_device")
        .begin_object()
        .field("path", sim.capture->device.source_path)
        .field("hash", file_fingerprint(sim.capture->device.source_path))
        .end_object();
  j.end_object();
  j.end_object();
  return j.str() + "\n";
}

std::string clock_plan_json(const RunSpec& spec, const Simulation& sim) {
  const Workload& w = *sim.workload;
  const RunResult& r = sim.result;
  hw::ClockPlan plan;
  plan.device = sim.target->device.name;
  plan.mode = hw::ClockPlanMode::kTimeWindows;
  // A limit other than the device's own travels with the plan (hw apply sets it).
  if (sim.power_limit_w != sim.target->device.power_limit_w)
    plan.power_limit_w = static_cast<int>(std::lround(sim.power_limit_w));
  plan.source = fmt::format("dvfsim run --policy {} on {} (last iteration of {})", r.policy,
                            plan.device, spec.trace_path);
  const auto last = static_cast<std::size_t>(w.iterations - 1);
  const std::uint32_t b = w.iteration_begin[last], e = w.iteration_begin[last + 1];
  if (b == e) return hw::format_clock_plan(plan);
  const std::int64_t t0 = r.kernels[b].start_ns;
  plan.period_ms = std::max<std::int64_t>(1, (r.iteration_time_ns[last] + 500'000) / 1'000'000);
  for (std::uint32_t i = b; i < e; ++i) {
    const KernelResult& k = r.kernels[i];
    const hw::ClockSetting c{k.requested_core_mhz, k.requested_memory_mhz};
    const std::int64_t ms = (k.start_ns - t0) / 1'000'000;
    if (ms >= plan.period_ms) break;
    if (!plan.windows.empty()) {
      hw::ClockWindow& back = plan.windows.back();
      if (back.clocks.core_mhz == c.core_mhz && back.clocks.memory_mhz == c.memory_mhz) continue;
      if (back.start_ms == ms) {  // several changes within one millisecond: the last one holds
        back.clocks = c;
        continue;
      }
    }
    plan.windows.push_back({ms, c});
  }
  return hw::format_clock_plan(plan);
}

void write_run_outputs(const std::string& dir, const RunSpec& spec, const Simulation& sim) {
  make_output_dir(dir);
  // The old summary.json goes first and the new one comes last: a run killed
  // while it replaces another leaves no summary beside a mix of files.
  prepare_run_directory(dir);
  const std::filesystem::path d(dir);
  write_file_atomic((d / "kernels.csv").string(), kernels_csv(sim));
  write_file_atomic((d / "timeline.csv").string(), timeline_csv(sim));
  write_file_atomic((d / "clock_switches.csv").string(), clock_switches_csv(sim));
  write_file_atomic((d / "trace.json").string(), perfetto_trace_json(sim));
  write_file_atomic((d / "manifest.json").string(), manifest_json(spec, sim));
  write_file_atomic((d / "clock_plan.json").string(), clock_plan_json(spec, sim));
  // Last, so that its presence means the run is complete (sweep resumes on it).
  write_file_atomic((d / "summary.json").string(), summary_json(spec, sim));
}

void print_run_summary(std::ostream& out, const RunSpec& spec, const Simulation& sim) {
  const RunResult& r = sim.result;
  auto row = [&](const RunResult& x) {
    const double t = x.time_s();
    out << fmt::format(
        "  {:<18} {:>10.2f} {:>12.2f} {:>10.1f} {:>12.2f} {:>12.3f} {:>8}\n",
        x.policy + (x.oracle ? " (oracle)" : ""), t * 1e3, x.energy_j, t > 0 ? x.energy_j / t : 0.0,
        mean(x.iteration_time_ns, sim.workload->steady_iterations) * 1e-6,
        mean(x.iteration_energy_j, sim.workload->steady_iterations), x.clock_switches);
  };
  out << fmt::format("dvfsim run: {} on {} ({} kernels, {} iterations; captured on {}",
                     spec.trace_path, sim.target->device.name, sim.workload->kernels.size(),
                     sim.workload->iterations, sim.capture->device.name);
  const std::string& gpu = sim.workload->capture.device_name;
  out << (gpu.empty() || gpu == sim.capture->device.name ? ")\n" : fmt::format(", '{}')\n", gpu));
  out << fmt::format("  {:<18} {:>10} {:>12} {:>10} {:>12} {:>12} {:>8}\n", "policy", "time (ms)",
                     "energy (J)", "power (W)", "ms/iter", "J/iter", "switches");
  if (sim.has_baseline) row(sim.baseline);
  row(r);
  if (sim.has_baseline)
    out << fmt::format("  energy saving {:+.2f} %, slowdown {:+.3f} % against {}\n",
                       energy_saving_pct(r, sim.baseline), slowdown_pct(r, sim.baseline),
                       sim.baseline.policy);
  if (r.clock_switches > 0 || r.switch_stall_ns > 0)
    out << fmt::format(
        "  switches {} (coalesced requests {}), stalls {:.3f} ms, off the wanted clocks {:.3f} "
        "ms\n",
        r.clock_switches, r.coalesced_requests, static_cast<double>(r.switch_stall_ns) * 1e-6,
        static_cast<double>(r.off_target_ns) * 1e-6);
  const Workload& w = *sim.workload;
  const auto [fallback_s, fallback_share] = fallback_time(w);
  if (!w.steady_iterations.empty() && w.steady_iterations.front() > 0)
    out << fmt::format("  per iteration: mean of the steady-state iterations {}..{} (of {})\n",
                       w.steady_iterations.front(), w.steady_iterations.back(), w.iterations);
  if (fallback_share > 0)
    out << fmt::format(
        "  work estimate: {:.1f} % of GPU time ({:.3f} ms) has no shapes and rests on the "
        "fallback (measured duration on the {} roofline)\n",
        100.0 * fallback_share, fallback_s * 1e3, sim.capture->device.name);
  if (multi_stream(w)) {
    const auto [traced_overlap, replayed_overlap] = overlap_traced_replayed(w, r);
    out << fmt::format(
        "  concurrent streams: {:.3f} ms with two or more activities at once in the trace, {:.3f} "
        "ms in the replay\n",
        static_cast<double>(traced_overlap) * 1e-6, static_cast<double>(replayed_overlap) * 1e-6);
  }
  if (r.oracle) out << "  note: this policy reads the future; its result is an upper bound\n";
}

void print_kernel_choices(std::ostream& out, const Simulation& sim, std::size_t max_rows) {
  const Workload& w = *sim.workload;
  struct Agg {
    std::int64_t count = 0;
    double time_ns = 0, base_ns = 0, energy = 0, base_energy = 0;
    std::map<std::pair<std::int32_t, std::int32_t>, std::int64_t> pairs;
  };
  std::map<std::tuple<std::string, KernelClass, Phase>, Agg> agg;
  for (std::size_t i = 0; i < w.kernels.size(); ++i) {
    const Kernel& k = w.kernels[i];
    Agg& a = agg[{std::string(w.name(k)), k.cls, k.phase}];
    const KernelResult& kr = sim.result.kernels[i];
    ++a.count;
    a.time_ns += static_cast<double>(kr.duration_ns);
    a.energy += kr.energy_j;
    ++a.pairs[{kr.requested_core_mhz, kr.requested_memory_mhz}];
    if (sim.has_baseline) {
      a.base_ns += static_cast<double>(sim.baseline.kernels[i].duration_ns);
      a.base_energy += sim.baseline.kernels[i].energy_j;
    }
  }
  std::vector<std::pair<const std::tuple<std::string, KernelClass, Phase>*, const Agg*>> rows;
  for (const auto& [key, a] : agg) rows.emplace_back(&key, &a);
  std::sort(rows.begin(), rows.end(),
            [](auto& x, auto& y) { return x.second->base_energy > y.second->base_energy; });
  out << fmt::format("{:<60} {:<11} {:<9} {:>6} {:>11} {:>9} {:>9}\n", "kernel", "class", "phase",
                     "count", "core/mem", "time %", "energy %");
  std::size_t n = 0;
  for (const auto& [key, a] : rows) {
    if (n++ >= max_rows) break;
    const auto best = std::max_element(a->pairs.begin(), a->pairs.end(),
                                       [](auto& x, auto& y) { return x.second < y.second; });
    std::string name = std::get<0>(*key);
    if (name.size() > 58) name = name.substr(0, 55) + "...";
    out << fmt::format(
        "{:<60} {:<11} {:<9} {:>6} {:>5}/{:<5} {:>+8.2f} {:>+8.2f}\n", name,
        to_string(std::get<1>(*key)), to_string(std::get<2>(*key)), a->count, best->first.first,
        best->first.second, a->base_ns > 0 ? 100.0 * (a->time_ns - a->base_ns) / a->base_ns : 0.0,
        a->base_energy > 0 ? 100.0 * (a->energy - a->base_energy) / a->base_energy : 0.0);
  }
}

}  // namespace dvfsim
