#include "apps/outputs.h"

#include <fmt/compile.h>
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <memory>
#include <numeric>
#include <ostream>
#include <tuple>
#include <type_traits>

#include "apps/files.h"
#include "apps/output_dir.h"
#include "apps/parallel_run.h"
#include "apps/settings.h"
#include "hw/plan.h"
#include "sim/error.h"
#include "sim/graph.h"
#include "sim/json.h"

#ifndef DVFSIM_VERSION
#define DVFSIM_VERSION "0.0.0"
#endif

namespace dvfsim {
namespace {

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

const char* domain_name(SwitchRecord::Domain d) {
  return d == SwitchRecord::Domain::core
             ? "core"
             : (d == SwitchRecord::Domain::memory ? "memory" : "power_cap");
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

// A parameter as its JSON type: a number when the whole text is one
// (written as the double it parses to, as the policy reads it), true/false,
// else the string.
void typed_field(JsonWriter& j, const std::string& key, const std::string& text) {
  if (text == "true" || text == "false") {
    j.field(key, text == "true");
    return;
  }
  double d = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, d);
  if (!text.empty() && ec == std::errc() && ptr == end && std::isfinite(d))
    j.field(key, d);
  else
    j.field(key, text);
}

void result_numbers(JsonWriter& j, const RunResult& r, const std::vector<std::int32_t>& steady) {
  const double t = r.time_s();
  j.field("time_s", t);
  j.field("energy_j", r.energy_j);
  j.field("avg_power_w", t > 0 ? r.energy_j / t : 0.0);
  j.field("iterations", r.iterations);
  j.field("time_per_iteration_s", steady_mean(r.iteration_time_ns, steady) * 1e-9);
  j.field("energy_per_iteration_j", steady_mean(r.iteration_energy_j, steady));
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
  for (const auto& [k, v] : sim.policy_params) typed_field(j, k, v);
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
  if (const auto& h = sim.host_range) {
    j.key("host_range").begin_object();
    j.field("slow_factor", h->slow_factor);
    j.field("fast_factor", h->fast_factor);
    j.key("time_per_iteration_s").begin_object();
    j.field("slow", h->slow_time_s);
    j.field("fast", h->fast_time_s);
    j.end_object();
    j.key("energy_per_iteration_j").begin_object();
    j.field("slow", h->slow_energy_j);
    j.field("fast", h->fast_energy_j);
    j.end_object();
    j.field("time_spread_pct", h->time_spread_pct());
    j.field("host_bound", h->host_bound());
    j.end_object();
  }
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
    for (const auto& [key, v] :
         {std::pair{"energy_saving_after_first_pct",
                    energy_saving_after_first_pct(r, sim.baseline)},
          std::pair{"slowdown_after_first_pct", slowdown_after_first_pct(r, sim.baseline)}})
      if (v)
        j.field(key, *v);
      else
        j.key(key).null();
  } else {
    j.key("baseline").null();
    j.key("energy_saving_pct").null();
    j.key("slowdown_pct").null();
    j.key("energy_saving_after_first_pct").null();
    j.key("slowdown_after_first_pct").null();
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

namespace {

// The text a sink writer writes, as one string (for tests and the Python
// module; runs stream into files instead).
std::string sink_text(void (*write)(OutputSink&, const Simulation&), const Simulation& sim) {
  StringSink s;
  write(s, sim);
  return s.str();
}

// A CSV streamed into `out`: the header, then `row(i)` for i = 0 .. n - 1,
// each row counted.
template <class Row>
void write_csv(OutputSink& out, std::string_view header, std::size_t n, Row&& row) {
  out.write(header);
  for (std::size_t i = 0; i < n; ++i) {
    row(i);
    out.row_done();
  }
}

}  // namespace

void write_kernels_csv(OutputSink& out, const Simulation& sim) {
  const Workload& w = *sim.workload;
  const RunResult& r = sim.result;
  // name_id, operator_id: rows of names.csv (each name written once there,
  // not once per launch; README, "Outputs").
  constexpr std::string_view header =
      "kernel_index,iteration,name_id,operator_id,correlation_id,class,phase,stream,"
      "traced_start_ns,start_ns,duration_ns,flops,dram_bytes,work_source,instructions,"
      "instructions_source,l2_excess_bytes,zeroed_operands,requested_core_mhz,requested_memory_mhz,"
      "core_mhz,memory_mhz,power_w,energy_j,baseline_duration_ns,"
      "baseline_energy_j\n";
  write_csv(out, header, w.kernels.size(), [&](std::size_t i) {
    const Kernel& k = w.kernels[i];
    const KernelResult& kr = r.kernels[i];
    const double p =
        kr.duration_ns > 0 ? kr.energy_j / (static_cast<double>(kr.duration_ns) * 1e-9) : 0.0;
    out.format(FMT_COMPILE("{},{},{},{},"), i, k.iteration, k.name_id, k.op_id);
    if (k.correlation >= 0) out.format(FMT_COMPILE("{}"), k.correlation);
    out.format(FMT_COMPILE(",{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},"),
               to_string(k.cls), to_string(k.phase), k.stream, k.traced_start_ns, kr.start_ns,
               kr.duration_ns, k.work.flops, k.work.dram_bytes, to_string(k.work.source),
               k.work.instructions, to_string(k.work.instructions_source), k.work.l2_excess_bytes,
               k.work.zeroed_operands, kr.requested_core_mhz, kr.requested_memory_mhz,
               Fixed{kr.core_mhz, 1}, Fixed{kr.memory_mhz, 1}, Fixed{p, 3},
               Significant{kr.energy_j, 9});
    if (sim.has_baseline)
      out.format(FMT_COMPILE("{},{}\n"), sim.baseline.kernels[i].duration_ns,
                 Significant{sim.baseline.kernels[i].energy_j, 9});
    else
      out.write(",\n");
  });
}

void write_names_csv(OutputSink& out, const Simulation& sim) {
  const std::vector<std::string>& names = sim.workload->names;
  write_csv(out, "name_id,name\n", names.size(), [&](std::size_t i) {
    fmt::format_to(out.it(), FMT_COMPILE("{},{}\n"), i, csv_field(names[i]));
  });
}

std::string names_csv(const Simulation& sim) {
  return sink_text(&write_names_csv, sim);
}

std::string kernels_csv(const Simulation& sim) {
  return sink_text(&write_kernels_csv, sim);
}

void write_timeline_csv(OutputSink& out, const Simulation& sim) {
  // kernel_index: the key of kernels.csv (empty for idle and stall segments).
  write_csv(out, "start_ns,duration_ns,core_mhz,memory_mhz,power_w,state,kernel_index\n",
            sim.result.segments.size(), [&](std::size_t i) {
              const Segment& s = sim.result.segments[i];
              const char* state =
                  s.kernel >= 0 ? "kernel" : (s.kernel == Segment::kStall ? "stall" : "idle");
              out.format(FMT_COMPILE("{},{},{},{},{},{},"), s.start_ns, s.duration_ns, s.core_mhz,
                         s.memory_mhz, Fixed{s.power_w, 3}, state);
              if (s.kernel >= 0) out.format(FMT_COMPILE("{}"), s.kernel);
              out.put('\n');
            });
}

std::string timeline_csv(const Simulation& sim) {
  return sink_text(&write_timeline_csv, sim);
}

void write_clock_switches_csv(OutputSink& out, const Simulation& sim) {
  // The core and memory rows are the switches summary.json counts
  // (clock_switches); power_cap rows are the firmware's cap moving, which no
  // policy asked for (docs/design.md, "Command line").
  write_csv(out, "domain,request_ns,land_ns,latency_ns,from_mhz,to_mhz,stall_ns\n",
            sim.result.switches.size(), [&](std::size_t i) {
              const SwitchRecord& s = sim.result.switches[i];
              fmt::format_to(out.it(), "{},{},{},{},{},{},{}\n", domain_name(s.domain),
                             s.request_ns, s.land_ns, s.land_ns - s.request_ns, s.from_mhz,
                             s.to_mhz, s.stall_ns);
            });
}

std::string clock_switches_csv(const Simulation& sim) {
  return sink_text(&write_clock_switches_csv, sim);
}

namespace {

// Integer nanoseconds as microseconds with exactly three decimals: the trace
// viewers' unit, without the rounding of a double (6424.998, not
// 6424.9980000000005), so back-to-back kernels touch and never overlap.
struct Microseconds {
  static constexpr std::size_t kMaxChars = 24;  // "-", 17 digits, ".", 3 digits
  std::int64_t ns;
  char* write(char* to) const {
    const auto a = ns < 0 ? 0 - static_cast<std::uint64_t>(ns) : static_cast<std::uint64_t>(ns);
    if (ns < 0) *to++ = '-';
    return write_scaled_digits(to, a, 1000, 3);
  }
};
std::string us_text(std::int64_t ns) {
  char text[Microseconds::kMaxChars];
  return std::string(text, Microseconds{ns}.write(text));
}

// `value` with `decimals` (at most 9) fixed decimals, rounded as
// llround(value * 10^decimals) (for a viewer's file: the last digit of a tie
// may differ from printf's).
struct RoundedFixed {
  static constexpr std::size_t kMaxChars = kMaxNumberChars;
  double value;
  int decimals;
  char* write(char* to) const {
    static constexpr std::uint64_t kScale[] = {
        1, 10, 100, 1'000, 10'000, 100'000, 1'000'000, 10'000'000, 100'000'000, 1'000'000'000};
    const std::uint64_t scale = kScale[decimals];
    const double scaled = std::abs(value) * static_cast<double>(scale);
    if (!(scaled < 9e15))  // huge or not finite: fmt's own
      return fmt::format_to(to, "{:.{}f}", value, decimals);
    // std::llround (halves away from zero): the fraction is exact below 2^53.
    const auto whole = static_cast<std::uint64_t>(scaled);
    const std::uint64_t n = whole + (scaled - static_cast<double>(whole) >= 0.5);
    if (value < 0 && n > 0) *to++ = '-';
    return write_scaled_digits(to, n, scale, decimals);
  }
};

// The name a trace viewer shows for a kernel: a demangled C++ signature
// ("void at::native::foo<4, bar<float> >(int, ...)") shortened to its
// function's qualified name without template arguments, return type and
// parameters ("at::native::foo"), as Nsight Compute's function base name;
// short names and names it cannot parse are kept whole.
std::string_view display_name(std::string_view n) {
  constexpr std::size_t kKeepUpTo = 48;
  if (n.size() <= kKeepUpTo) return n;
  // The index just past the bracket group opening at `open`, npos if unbalanced.
  auto close_of = [n](std::size_t open) {
    int depth = 0;
    for (std::size_t i = open; i < n.size(); ++i) {
      const char c = n[i];
      if (c == '<' || c == '(' || c == '[' || c == '{')
        ++depth;
      else if ((c == '>' && n[i - 1] != '-') || c == ')' || c == ']' || c == '}')
        if (--depth == 0) return i + 1;
    }
    return std::string_view::npos;
  };
  std::size_t start = 0, i = 0;
  while (i < n.size()) {
    const char c = n[i];
    if (c == '<' || c == '(') {
      const std::size_t after = close_of(i);
      if (after == std::string_view::npos) return n;
      // "(anonymous namespace)::f", "A<int>::f": still the qualified name.
      if (n.substr(after, 2) == "::") {
        i = after;
        continue;
      }
      break;
    }
    if (c == ' ') start = i + 1;
    ++i;
  }
  const std::string_view s = n.substr(start, i - start);
  return s.empty() ? n : s;
}

// Chrome trace-event JSON, one event per line, streamed into a sink.
class TraceEvents {
 public:
  explicit TraceEvents(OutputSink& out) : out_(out) {
    out_.write("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n");
  }
  // One event object: `body` formatted with `args` between its braces.
  template <class... A>
  void addf(fmt::format_string<A...> body, A&&... args) {
    if (!first_) out_.write(",\n");
    first_ = false;
    out_.put('{');
    fmt::format_to(out_.it(), body, std::forward<A>(args)...);
    out_.put('}');
    out_.row_done();
  }
  void add(const std::string& body) { addf("{}", body); }
  // The same for a compiled format (OutputSink::format).
  template <class S, class... A>
  void event(const S& body, const A&... args) {
    out_.write(first_ ? "{" : ",\n{");
    first_ = false;
    out_.format(body, args...);
    out_.put('}');
    out_.row_done();
  }
  void name_process(int pid, const std::string& name, int sort) {
    addf(R"("ph":"M","name":"process_name","pid":{},"args":{{"name":{}}})", pid, json_quote(name));
    addf(R"("ph":"M","name":"process_sort_index","pid":{},"args":{{"sort_index":{}}})", pid, sort);
  }
  void name_thread(int pid, std::int64_t tid, const std::string& name, std::int64_t sort) {
    addf(R"("ph":"M","name":"thread_name","pid":{},"tid":{},"args":{{"name":{}}})", pid, tid,
         json_quote(name));
    addf(R"("ph":"M","name":"thread_sort_index","pid":{},"tid":{},"args":{{"sort_index":{}}})", pid,
         tid, sort);
  }
  void slice(int pid, std::int64_t tid, const std::string& name, std::string_view cat,
             std::int64_t start_ns, std::int64_t dur_ns, const std::string& args) {
    addf(R"("ph":"X","name":{},"cat":"{}","pid":{},"tid":{},"ts":{},"dur":{},"args":{{{}}})",
         json_quote(name), cat, pid, tid, us_text(start_ns), us_text(dur_ns), args);
  }
  // Ends the events; then the full names (kernels' slices give their
  // name_id), one string each, and the file.
  void finish(const std::vector<std::string>& names) {
    out_.write("\n],\"dvfsimNames\":[\n");
    for (std::size_t i = 0; i < names.size(); ++i) {
      if (i > 0) out_.write(",\n");
      out_.write(json_quote(names[i]));
      out_.row_done();
    }
    out_.write("\n]}\n");
  }

 private:
  OutputSink& out_;
  bool first_ = true;
};

// Track ids above any stream id: iterations, phases and clock switches.
constexpr std::int64_t kIterationTid = 1'000'000'001;
constexpr std::int64_t kPhaseTid = 1'000'000'002;
// One switch track per domain (a core and a memory switch may be in flight together).
constexpr std::int64_t kSwitchTid = 1'000'000'003;  // + the domain
std::int64_t switch_tid(SwitchRecord::Domain d) {
  return kSwitchTid + static_cast<std::int64_t>(d);
}

void trace_run(TraceEvents& ev, int pid, const std::string& process, const Workload& w,
               const RunResult& r) {
  ev.name_process(pid, process, pid);
  ev.name_thread(pid, kIterationTid, "iterations", 0);
  ev.name_thread(pid, kPhaseTid, "phases", 1);
  std::vector<std::int32_t> streams;
  for (const Kernel& k : w.kernels)
    if (std::find(streams.begin(), streams.end(), k.stream) == streams.end())
      streams.push_back(k.stream);
  std::sort(streams.begin(), streams.end());
  for (auto s : streams) ev.name_thread(pid, s, fmt::format("stream {}", s), 10 + s);
  for (const auto d :
       {SwitchRecord::Domain::core, SwitchRecord::Domain::memory, SwitchRecord::Domain::power_cap})
    if (std::any_of(r.switches.begin(), r.switches.end(),
                    [d](const SwitchRecord& s) { return s.domain == d; }))
      ev.name_thread(pid, switch_tid(d), fmt::format("{} switches", domain_name(d)),
                     2 + static_cast<std::int64_t>(d));

  // Iterations: from the first kernel's start to the last one's end.
  for (std::int32_t it = 0; it < w.iterations; ++it) {
    const auto b = w.iteration_begin[static_cast<std::size_t>(it)];
    const auto e = w.iteration_begin[static_cast<std::size_t>(it) + 1];
    if (b == e) continue;
    std::int64_t t0 = r.kernels[b].start_ns, t1 = t0;
    for (auto i = b; i < e; ++i) {
      t0 = std::min(t0, r.kernels[i].start_ns);
      t1 = std::max(t1, r.kernels[i].start_ns + r.kernels[i].duration_ns);
    }
    const double energy = static_cast<std::size_t>(it) < r.iteration_energy_j.size()
                              ? r.iteration_energy_j[static_cast<std::size_t>(it)]
                              : 0.0;
    ev.slice(pid, kIterationTid, fmt::format("iteration {}", it), "iteration", t0, t1 - t0,
             fmt::format(R"("iteration":{},"energy_j":{})", it, energy));
  }
  // Phases: runs of kernels (in launch order) of one phase within an
  // iteration, each from where the previous ended, so that they never nest.
  std::int64_t prev_end = std::numeric_limits<std::int64_t>::min();
  for (std::size_t i = 0; i < w.kernels.size();) {
    std::size_t j = i;
    std::int64_t t0 = std::numeric_limits<std::int64_t>::max(), t1 = prev_end;
    while (j < w.kernels.size() && w.kernels[j].phase == w.kernels[i].phase &&
           w.kernels[j].iteration == w.kernels[i].iteration) {
      t0 = std::min(t0, r.kernels[j].start_ns);
      t1 = std::max(t1, r.kernels[j].start_ns + r.kernels[j].duration_ns);
      ++j;
    }
    t0 = std::max(t0, prev_end);
    if (t1 > t0)
      ev.slice(pid, kPhaseTid, std::string(to_string(w.kernels[i].phase)), "phase", t0, t1 - t0,
               fmt::format(R"("iteration":{},"first_kernel":{},"kernels":{})",
                           w.kernels[i].iteration, i, j - i));
    prev_end = std::max(prev_end, t1);
    i = j;
  }
  // Kernel slices: the short display name (names[] in the file's
  // "dvfsimNames" holds the full one, by name_id), the energy and power; the
  // rest of the kernel is its kernels.csv row (kernel_index).
  std::vector<std::string> labels;
  labels.reserve(w.names.size());
  for (const std::string& n : w.names) labels.push_back(json_quote(display_name(n)));
  for (std::size_t i = 0; i < w.kernels.size(); ++i) {
    const Kernel& k = w.kernels[i];
    const KernelResult& kr = r.kernels[i];
    const double p =
        kr.duration_ns > 0 ? kr.energy_j / (static_cast<double>(kr.duration_ns) * 1e-9) : 0.0;
    ev.event(FMT_COMPILE(R"("ph":"X","name":{},"cat":"{}","pid":{},"tid":{},"ts":{},"dur":{},)"
                         R"("args":{{"kernel_index":{},"name_id":{},"power_w":{},"energy_j":{}}})"),
             labels[k.name_id], to_string(k.cls), pid, k.stream, Microseconds{kr.start_ns},
             Microseconds{kr.duration_ns}, i, k.name_id, RoundedFixed{p, 3},
             RoundedFixed{kr.energy_j, 9});
  }
  // Counter tracks, one sample where a value changes: a track's events are
  // its constant text around the stamp and the value (a 100x trace writes
  // millions).
  struct Track {
    std::string head;    // "ph":"C","name":"NAME","pid":PID,"ts":
    std::string middle;  // ,"args":{"UNIT":
  };
  auto track = [&](std::string_view name, std::string_view unit) {
    return Track{fmt::format(R"("ph":"C","name":"{}","pid":{},"ts":)", name, pid),
                 fmt::format(R"(,"args":{{"{}":)", unit)};
  };
  auto counter = [&](const Track& t, auto value, std::int64_t start_ns) {
    constexpr auto body = FMT_COMPILE("{}{}{}{}}}");
    // Power with timeline.csv's three decimals, clocks as integers.
    if constexpr (std::is_floating_point_v<decltype(value)>)
      ev.event(body, t.head, Microseconds{start_ns}, t.middle, RoundedFixed{value, 3});
    else
      ev.event(body, t.head, Microseconds{start_ns}, t.middle, value);
  };
  const Track power = track("power (W)", "W"), core = track("core clock (MHz)", "MHz"),
              memory = track("memory clock (MHz)", "MHz");
  double last_p = -1;
  std::int32_t last_c = -1, last_m = -1;
  for (const Segment& s : r.segments) {
    if (s.power_w != last_p) counter(power, s.power_w, s.start_ns);
    if (s.core_mhz != last_c) counter(core, s.core_mhz, s.start_ns);
    if (s.memory_mhz != last_m) counter(memory, s.memory_mhz, s.start_ns);
    last_p = s.power_w;
    last_c = s.core_mhz;
    last_m = s.memory_mhz;
  }
  // The clocks the policy asked for, at the start of the kernels they were
  // asked for (the effective clocks above lag them by the switch latency).
  const Track requested_core = track("requested core clock (MHz)", "MHz"),
              requested_memory = track("requested memory clock (MHz)", "MHz");
  std::int32_t last_rc = -1, last_rm = -1;
  for (const KernelResult& k : r.kernels) {
    if (k.requested_core_mhz != last_rc) counter(requested_core, k.requested_core_mhz, k.start_ns);
    if (k.requested_memory_mhz != last_rm)
      counter(requested_memory, k.requested_memory_mhz, k.start_ns);
    last_rc = k.requested_core_mhz;
    last_rm = k.requested_memory_mhz;
  }
  // Clock switches: a slice from the request to the landing (an instant when
  // they coincide), the values in args.
  for (const SwitchRecord& s : r.switches) {
    const std::string args =
        fmt::format(R"("domain":"{}","from_mhz":{},"to_mhz":{},"request_ns":{},"land_ns":{},)"
                    R"("latency_ns":{},"stall_ns":{})",
                    domain_name(s.domain), s.from_mhz, s.to_mhz, s.request_ns, s.land_ns,
                    s.land_ns - s.request_ns, s.stall_ns);
    const std::string name = fmt::format("{} switch", domain_name(s.domain));
    if (s.land_ns > s.request_ns)
      ev.slice(pid, switch_tid(s.domain), name, "switch", s.request_ns, s.land_ns - s.request_ns,
               args);
    else
      ev.add(fmt::format(R"("ph":"i","s":"t","name":"{}","cat":"switch","pid":{},"tid":{},)"
                         R"("ts":{},"args":{{{}}})",
                         name, pid, switch_tid(s.domain), us_text(s.land_ns), args));
  }
}

}  // namespace

void write_perfetto_trace_json(OutputSink& out, const Simulation& sim) {
  TraceEvents ev(out);
  const Device& d = sim.target->device;
  const std::string gpu = d.display_name.empty() ? d.name : d.display_name;
  trace_run(ev, 1,
            fmt::format("{} ({}{})", gpu, sim.result.policy, sim.result.oracle ? ", oracle" : ""),
            *sim.workload, sim.result);
  if (sim.has_baseline)
    trace_run(ev, 2, fmt::format("{} ({}, baseline)", gpu, sim.baseline.policy), *sim.workload,
              sim.baseline);
  ev.finish(sim.workload->names);
}

std::string perfetto_trace_json(const Simulation& sim) {
  return sink_text(&write_perfetto_trace_json, sim);
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
  for (const auto& [k, v] : sim.policy_params) typed_field(j, k, v);
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

namespace {

struct OutputFile {
  OutputSelection::File file;
  const char* key;   // in --outputs
  const char* name;  // in the directory
};
// In writing order; summary.json comes last.
constexpr OutputFile kOutputFiles[] = {
    {OutputSelection::kernels, "kernels", "kernels.csv"},
    {OutputSelection::names, "names", "names.csv"},
    {OutputSelection::timeline, "timeline", "timeline.csv"},
    {OutputSelection::switches, "switches", "clock_switches.csv"},
    {OutputSelection::trace, "trace", "trace.json"},
    {OutputSelection::manifest, "manifest", "manifest.json"},
    {OutputSelection::plan, "plan", "clock_plan.json"},
    {OutputSelection::summary, "summary", "summary.json"},
};

}  // namespace

OutputSelection OutputSelection::parse(std::string_view list, std::string_view option) {
  std::uint32_t mask = summary;
  std::size_t at = 0;
  while (at <= list.size()) {
    const std::size_t comma = std::min(list.find(',', at), list.size());
    std::string_view item = list.substr(at, comma - at);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    at = comma + 1;
    if (item.empty()) continue;
    if (item == "all") {
      mask = all().mask_;
      continue;
    }
    bool known = false;
    for (const OutputFile& f : kOutputFiles) {
      const std::string_view name = f.name;
      const std::string_view stem = name.substr(0, name.find('.'));
      if (item == f.key || item == name || item == stem) {
        mask |= f.file;
        known = true;
      }
    }
    if (!known) {
      std::string keys;
      for (const OutputFile& f : kOutputFiles)
        keys += fmt::format("{}{}", keys.empty() ? "" : ",", f.key);
      throw InputError(fmt::format("{} '{}': unknown output '{}' (one or more of {}, or all)",
                                   option, list, item, keys));
    }
  }
  return OutputSelection(mask);
}

std::string OutputSelection::describe() const {
  std::string out;
  for (const OutputFile& f : kOutputFiles)
    if (has(f.file)) out += fmt::format("{}{}", out.empty() ? "" : ", ", f.name);
  return out;
}

void write_summary_json(OutputSink& out, const RunSpec& spec, const Simulation& sim) {
  out.write(summary_json(spec, sim));
}

void write_run_outputs(const std::string& dir, const RunSpec& spec, const Simulation& sim,
                       OutputSelection selection) {
  make_output_dir(dir);
  // The old summary.json goes first and the new one comes last: a run killed
  // while it replaces another leaves no summary beside a mix of files.
  prepare_run_directory(dir);
  const std::filesystem::path d(dir);
  // A file of the previous run that this run does not write would sit beside
  // the new summary: removed too.
  for (const OutputFile& f : kOutputFiles) {
    if (selection.has(f.file)) continue;
    std::error_code ec;
    std::filesystem::remove(d / f.name, ec);
    if (ec)
      throw InputError(fmt::format("{}: cannot remove the previous run's file: {}",
                                   (d / f.name).string(), ec.message()));
  }
  std::vector<std::unique_ptr<FileSink>> files;
  for (const OutputFile& f : kOutputFiles) {
    if (!selection.has(f.file)) continue;
    auto& out = *files.emplace_back(std::make_unique<FileSink>((d / f.name).string()));
    switch (f.file) {
      case OutputSelection::kernels:
        write_kernels_csv(out, sim);
        break;
      case OutputSelection::names:
        write_names_csv(out, sim);
        break;
      case OutputSelection::timeline:
        write_timeline_csv(out, sim);
        break;
      case OutputSelection::switches:
        write_clock_switches_csv(out, sim);
        break;
      case OutputSelection::trace:
        write_perfetto_trace_json(out, sim);
        break;
      case OutputSelection::manifest:
        out.write(manifest_json(spec, sim));
        break;
      case OutputSelection::plan:
        out.write(clock_plan_json(spec, sim));
        break;
      case OutputSelection::summary:
        write_summary_json(out, spec, sim);
        break;
    }
    out.close();
  }
  // One sync for all of them, then the renames; summary.json, last in the
  // list, marks the run complete (sweep resumes on it).
  sync_file_system(dir);
  for (auto& f : files) f->commit();
}

void print_run_summary(std::ostream& out, const RunSpec& spec, const Simulation& sim) {
  const RunResult& r = sim.result;
  auto row = [&](const RunResult& x) {
    const double t = x.time_s();
    out << fmt::format(
        "  {:<18} {:>10.2f} {:>12.2f} {:>10.1f} {:>12.2f} {:>12.3f} {:>8}\n",
        x.policy + (x.oracle ? " (oracle)" : ""), t * 1e3, x.energy_j, t > 0 ? x.energy_j / t : 0.0,
        steady_mean(x.iteration_time_ns, sim.workload->steady_iterations) * 1e-6,
        steady_mean(x.iteration_energy_j, sim.workload->steady_iterations), x.clock_switches);
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
  if (sim.has_baseline)
    if (const auto e = energy_saving_after_first_pct(r, sim.baseline),
        t = slowdown_after_first_pct(r, sim.baseline);
        e && t)
      out << fmt::format(
          "  after the first iteration: energy saving {:+.2f} %, slowdown {:+.3f} %\n", *e, *t);
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
  if (const auto& h = sim.host_range) {
    out << fmt::format(
        "  host: traced host time divided by {:.2f} (profiler correction); native at factors {:g} "
        "to {:g}, the range measured on H200 captures: {:.2f} to {:.2f} ms/iter ({:+.1f} %), "
        "{:.3f} to {:.3f} J/iter: ",
        sim.host.factor, h->slow_factor, h->fast_factor, h->fast_time_s * 1e3, h->slow_time_s * 1e3,
        h->time_spread_pct(), std::min(h->fast_energy_j, h->slow_energy_j),
        std::max(h->fast_energy_j, h->slow_energy_j));
    out << (h->host_bound()
                ? "the host bounds this step, its time and energy rest on that factor (a "
                  "capture's own pairing pins it: --set host_overhead=F)\n"
                : "the GPU bounds this step\n");
  }
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
