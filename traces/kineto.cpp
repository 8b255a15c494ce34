#include "traces/kineto.h"

#include <fmt/format.h>
#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "sim/error.h"
#include "traces/annotate.h"
#include "traces/capture_info.h"
#include "traces/classify.h"
#include "traces/gzip_io.h"
#include "traces/instructions.h"

namespace dvfsim {
namespace {

namespace dom = simdjson::dom;

bool starts_with(std::string_view s, std::string_view p) {
  return s.substr(0, p.size()) == p;
}
bool contains(std::string_view s, std::string_view n) {
  return s.find(n) != std::string_view::npos;
}

// Kineto times are microseconds with three decimals. Splitting off the
// integer part keeps the conversion exact for 2^43 us (about 100 days).
// Callers pass only values checked by EventContext::ts_ns / dur_ns.
std::int64_t us_to_ns(double us) {
  const double whole = std::floor(us);
  return static_cast<std::int64_t>(whole) * 1000 + std::llround((us - whole) * 1000.0);
}

// Time stamp range (docs/trace-format.md, "Time stamps"): |ts| and dur up to
// 2^52 us (143 years) convert to int64 ns, and ts + dur cannot overflow.
constexpr double kMaxAbsUs = 4503599627370496.0;  // 2^52
// No time stamp may lie further than kMaxTraceSpanNs (1 h, sim/workload.h)
// from the median GPU activity start, and no duration may be longer: a
// profiler window is seconds to minutes, so a value beyond an hour is a
// corrupt or mixed-clock event, which would otherwise stretch the replay over
// days and give silent wrong numbers.
constexpr std::int64_t kMaxSpanNs = kMaxTraceSpanNs;

bool in_int64(double d) {  // d converts to int64_t without overflow
  return d >= -9223372036854775808.0 && d < 9223372036854775808.0;
}

// A time stamp read from an event, for the span check after all are read.
struct Stamp {
  std::size_t index;
  std::string_view cat;
  std::int64_t ns;
};

// Field access that names the file, event and field in every error.
struct EventContext {
  const std::string& path;
  std::size_t index;
  std::string_view cat;

  [[noreturn]] void fail(std::string_view field, std::string_view what) const {
    throw InputError(
        fmt::format("{}: event {} (cat {}): {} field '{}'", path, index, cat, what, field));
  }
  double number(dom::object obj, std::string_view key, std::string_view field) const {
    dom::element e;
    if (obj[key].get(e) != simdjson::SUCCESS) fail(field, "missing");
    double v = 0;
    if (e.get(v) != simdjson::SUCCESS) fail(field, "non-numeric");
    return v;
  }
  std::int64_t integer(dom::object obj, std::string_view key, std::string_view field) const {
    dom::element e;
    if (obj[key].get(e) != simdjson::SUCCESS) fail(field, "missing");
    std::int64_t v = 0;
    if (e.get(v) == simdjson::SUCCESS) return v;
    double d = 0;
    if (e.get(d) != simdjson::SUCCESS || d != std::floor(d)) fail(field, "non-integer");
    if (!in_int64(d)) fail(field, "out-of-range");
    return static_cast<std::int64_t>(d);
  }
  // Field "ts" in ns; recorded in `stamps` for the span check.
  std::int64_t ts_ns(dom::object obj, std::vector<Stamp>& stamps) const {
    const double us = number(obj, "ts", "ts");
    if (!(std::abs(us) <= kMaxAbsUs)) fail("ts", "out-of-range (|ts| > 2^52 us)");
    const std::int64_t ns = us_to_ns(us);
    stamps.push_back({index, cat, ns});
    return ns;
  }
  // Field "dur" in ns: >= 0 and at most kMaxSpanNs.
  std::int64_t dur_ns(dom::object obj) const {
    const double us = number(obj, "dur", "dur");
    if (!(us >= 0)) fail("dur", "negative or NaN");
    if (!(us * 1000.0 <= static_cast<double>(kMaxSpanNs))) fail("dur", "longer-than-1-h");
    return us_to_ns(us);
  }
};

std::int64_t optional_int(dom::object obj, std::string_view key, std::int64_t fallback) {
  dom::element e;
  if (obj[key].get(e) != simdjson::SUCCESS) return fallback;
  std::int64_t v = 0;
  if (e.get(v) == simdjson::SUCCESS) return v;
  double d = 0;
  if (e.get(d) == simdjson::SUCCESS && in_int64(d)) return static_cast<std::int64_t>(d);
  return fallback;
}

void read_dim3(dom::object args, std::string_view key, std::uint32_t (&out)[3]) {
  dom::array a;
  if (args[key].get(a) != simdjson::SUCCESS) return;
  std::size_t i = 0;
  for (dom::element e : a) {
    std::int64_t v = 0;
    if (i < 3 && e.get(v) == simdjson::SUCCESS && v >= 0) out[i] = static_cast<std::uint32_t>(v);
    ++i;
  }
}

struct Activity {
  ActivityKind kind;
  std::string_view name;
  std::int64_t start_ns, duration_ns;
  std::int64_t correlation, external_id;
  std::int32_t stream, device;
  LaunchConfig launch;
  double bytes;
  bool device_to_device;
  // Filled from the launch call.
  std::int64_t host_ns = 0;
  std::int64_t host_tid = -1;
};

struct RuntimeCall {
  std::string_view name;
  std::int64_t ts_ns, end_ns, tid, correlation;
};

struct CpuOp {
  dom::object obj;
  std::string_view name;
  std::int64_t dur_ns;
};

struct Interval {
  std::int64_t begin_ns, end_ns;
};

struct CudaSync {
  std::string_view name;
  std::int64_t correlation, stream, wait_on_stream, record_correlation;
};

// Disjoint, sorted intervals with a containment query.
class IntervalSet {
 public:
  void add(Interval i) { raw_.push_back(i); }
  void finish() {
    std::sort(raw_.begin(), raw_.end(),
              [](const Interval& a, const Interval& b) { return a.begin_ns < b.begin_ns; });
    for (const Interval& i : raw_) {
      if (!merged_.empty() && i.begin_ns <= merged_.back().end_ns)
        merged_.back().end_ns = std::max(merged_.back().end_ns, i.end_ns);
      else
        merged_.push_back(i);
    }
  }
  bool contains(std::int64_t t) const {
    auto it = std::upper_bound(merged_.begin(), merged_.end(), t,
                               [](std::int64_t v, const Interval& i) { return v < i.begin_ns; });
    return it != merged_.begin() && t <= std::prev(it)->end_ns;
  }

 private:
  std::vector<Interval> raw_, merged_;
};

std::int64_t tid_of(dom::object ev) {
  return optional_int(ev, "tid", -1);
}

enum class SyncKind { none, device, stream, event, copy };

SyncKind sync_kind(std::string_view name) {
  if (name == "cudaDeviceSynchronize" || name == "cuCtxSynchronize") return SyncKind::device;
  if (name == "cudaStreamSynchronize" || name == "cuStreamSynchronize") return SyncKind::stream;
  if (name == "cudaEventSynchronize" || name == "cuEventSynchronize") return SyncKind::event;
  if ((starts_with(name, "cudaMemcpy") || starts_with(name, "cuMemcpy")) &&
      !contains(name, "Async"))
    return SyncKind::copy;
  return SyncKind::none;
}

OpCall to_op_call(const CpuOp& op) {
  OpCall call;
  call.name = std::string(op.name);
  dom::object args;
  if (op.obj["args"].get(args) != simdjson::SUCCESS) return call;
  dom::array dims, types, concrete;
  const bool has_dims = args["Input Dims"].get(dims) == simdjson::SUCCESS;
  const bool has_types = args["Input type"].get(types) == simdjson::SUCCESS;
  const bool has_concrete = args["Concrete Inputs"].get(concrete) == simdjson::SUCCESS;
  std::size_t n = 0;
  if (has_dims) n = std::max(n, dims.size());
  if (has_types) n = std::max(n, types.size());
  call.inputs.resize(n);
  if (has_types) {
    std::size_t i = 0;
    for (dom::element e : types) {
      std::string_view s;
      if (e.get(s) == simdjson::SUCCESS) call.inputs[i].type = std::string(s);
      ++i;
    }
  }
  if (has_concrete) {
    std::size_t i = 0;
    for (dom::element e : concrete) {
      std::string_view s;
      if (i < n && e.get(s) == simdjson::SUCCESS) call.inputs[i].concrete = std::string(s);
      ++i;
    }
  }
  auto to_shape = [](dom::array a) {
    std::vector<std::int64_t> shape;
    shape.reserve(a.size());
    for (dom::element d : a) {
      std::int64_t v = 0;
      shape.push_back(d.get(v) == simdjson::SUCCESS ? v : 0);
    }
    return shape;
  };
  if (has_dims) {
    std::size_t i = 0;
    for (dom::element e : dims) {
      OpInput& in = call.inputs[i++];
      dom::array a;
      if (e.get(a) != simdjson::SUCCESS) continue;
      if (a.size() == 0) {
        if (dtype_bytes(in.type)) in.shapes.emplace_back();  // 0-dim tensor
        continue;
      }
      dom::array first;
      if ((*a.begin()).get(first) == simdjson::SUCCESS) {  // TensorList: one shape each
        for (dom::element t : a) {
          dom::array shape;
          if (t.get(shape) == simdjson::SUCCESS) in.shapes.push_back(to_shape(shape));
        }
      } else {
        in.shapes.push_back(to_shape(a));
      }
    }
  }
  return call;
}

// Activities sorted by launch; (host_ns, correlation) is the order key.
using LaunchKey = std::pair<std::int64_t, std::int64_t>;

}  // namespace

Workload parse_kineto(std::string_view json, const std::string& path, bool padded) {
  dom::parser parser;
  dom::element root;
  if (auto err = parser.parse(json.data(), json.size(), !padded).get(root))
    throw InputError(fmt::format("{}: invalid JSON: {}", path, simdjson::error_message(err)));
  dom::array events;
  if (root.is_array()) {
    events = root.get_array().value_unsafe();
  } else if (root["traceEvents"].get(events) != simdjson::SUCCESS) {
    throw InputError(fmt::format("{}: not a Kineto trace: missing field 'traceEvents'", path));
  }

  std::vector<Activity> acts;
  std::vector<RuntimeCall> calls;
  std::unordered_map<std::int64_t, std::size_t> call_by_corr;
  std::unordered_map<std::int64_t, CpuOp> op_by_ext;
  std::unordered_map<std::int64_t, IntervalSet> autograd_ops;  // by tid
  std::unordered_set<std::int64_t> autograd_tids;
  std::vector<Interval> profiler_steps, optimizer_steps, zero_grads;
  std::vector<CudaSync> cuda_syncs;
  std::vector<Stamp> stamps;
  acts.reserve(8192);
  calls.reserve(8192);
  op_by_ext.reserve(32768);

  std::size_t index = 0;
  for (dom::element el : events) {
    const std::size_t i = index++;
    dom::object ev;
    if (el.get(ev) != simdjson::SUCCESS)
      throw InputError(fmt::format("{}: event {}: not a JSON object", path, i));
    std::string_view ph, cat, name;
    const bool has_name = ev["name"].get(name) == simdjson::SUCCESS;
    if (ev["ph"].get(ph) != simdjson::SUCCESS) ph = {};
    if (ev["cat"].get(cat) != simdjson::SUCCESS) cat = {};
    if (ph == "M") {
      dom::object args;
      std::string_view thread;
      if (name == "thread_name" && ev["args"].get(args) == simdjson::SUCCESS &&
          args["name"].get(thread) == simdjson::SUCCESS && contains(thread, "autograd"))
        autograd_tids.insert(tid_of(ev));
      continue;
    }
    if (ph != "X" || cat.empty()) continue;
    const EventContext ctx{path, i, cat};

    const bool is_kernel = cat == "kernel";
    if (is_kernel || cat == "gpu_memset" || cat == "gpu_memcpy") {
      Activity a{};
      a.kind = is_kernel ? ActivityKind::kernel
                         : (cat == "gpu_memset" ? ActivityKind::memset : ActivityKind::memcpy);
      if (!has_name) ctx.fail("name", "missing");
      a.name = name;
      a.start_ns = ctx.ts_ns(ev, stamps);
      a.duration_ns = ctx.dur_ns(ev);
      dom::object args;
      if (ev["args"].get(args) != simdjson::SUCCESS) ctx.fail("args", "missing");
      a.correlation = ctx.integer(args, "correlation", "args.correlation");
      a.external_id = optional_int(args, "External id", 0);
      a.stream = static_cast<std::int32_t>(optional_int(args, "stream", tid_of(ev)));
      a.device = static_cast<std::int32_t>(optional_int(args, "device", 0));
      if (is_kernel) {
        read_dim3(args, "grid", a.launch.grid);
        read_dim3(args, "block", a.launch.block);
        a.launch.registers_per_thread = static_cast<std::uint32_t>(
            std::max<std::int64_t>(0, optional_int(args, "registers per thread", 0)));
        a.launch.shared_memory_bytes = static_cast<std::uint32_t>(
            std::max<std::int64_t>(0, optional_int(args, "shared memory", 0)));
      }
      a.bytes = -1;
      double bytes = 0;
      if (args["bytes"].get(bytes) == simdjson::SUCCESS) a.bytes = bytes;
      a.device_to_device = contains(name, "DtoD") || contains(name, "PtoP");
      acts.push_back(a);
    } else if (cat == "cuda_runtime" || cat == "cuda_driver") {
      dom::object args;
      if (ev["args"].get(args) != simdjson::SUCCESS) ctx.fail("args", "missing");
      RuntimeCall c{};
      c.name = name;
      c.ts_ns = ctx.ts_ns(ev, stamps);
      c.end_ns = c.ts_ns + ctx.dur_ns(ev);
      c.tid = tid_of(ev);
      c.correlation = ctx.integer(args, "correlation", "args.correlation");
      call_by_corr.emplace(c.correlation, calls.size());
      calls.push_back(c);
    } else if (cat == "cpu_op") {
      dom::object args;
      if (ev["args"].get(args) != simdjson::SUCCESS) continue;
      const std::int64_t ext = optional_int(args, "External id", -1);
      const std::int64_t ts = ctx.ts_ns(ev, stamps);
      const std::int64_t dur = ctx.dur_ns(ev);
      if (starts_with(name, "autograd::engine::evaluate_function"))
        autograd_ops[tid_of(ev)].add({ts, ts + dur});
      if (ext < 0) continue;
      // Keep the innermost (shortest) operator of an External id.
      auto [it, fresh] = op_by_ext.try_emplace(ext, CpuOp{ev, name, dur});
      if (!fresh && dur < it->second.dur_ns) it->second = CpuOp{ev, name, dur};
    } else if (cat == "user_annotation" || starts_with(name, "ProfilerStep#")) {
      if (cat == "gpu_user_annotation") continue;
      const std::int64_t ts = ctx.ts_ns(ev, stamps);
      const Interval iv{ts, ts + ctx.dur_ns(ev)};
      if (starts_with(name, "ProfilerStep#")) profiler_steps.push_back(iv);
      if (starts_with(name, "Optimizer.step#")) optimizer_steps.push_back(iv);
      if (starts_with(name, "Optimizer.zero_grad#")) zero_grads.push_back(iv);
    } else if (cat == "cuda_sync") {
      dom::object args;
      if (ev["args"].get(args) != simdjson::SUCCESS) continue;
      cuda_syncs.push_back({name, optional_int(args, "correlation", -1),
                            optional_int(args, "stream", -1),
                            optional_int(args, "wait_on_stream", -1),
                            optional_int(args, "wait_on_cuda_event_record_corr_id", -1)});
    }
  }
  if (acts.empty()) throw InputError(fmt::format("{}: no GPU kernels, memsets or memcpys", path));
  {  // Span check: every time stamp within kMaxSpanNs of the median GPU start.
    std::vector<std::int64_t> starts(acts.size());
    for (std::size_t i = 0; i < acts.size(); ++i) starts[i] = acts[i].start_ns;
    const auto mid = starts.begin() + static_cast<std::ptrdiff_t>(starts.size() / 2);
    std::nth_element(starts.begin(), mid, starts.end());
    for (const Stamp& s : stamps)
      if (s.ns < *mid - kMaxSpanNs || s.ns > *mid + kMaxSpanNs)
        throw InputError(fmt::format(
            "{}: event {} (cat {}): field 'ts' lies {:.0f} s from the median GPU activity start "
            "(more than 1 h: a corrupt or mixed-clock time stamp; docs/trace-format.md)",
            path, s.index, s.cat, std::abs(static_cast<double>(s.ns - *mid)) * 1e-9));
  }

  // Host launch of every activity through its correlation id. Activities
  // whose launch call is missing are placed at their GPU start.
  for (Activity& a : acts) {
    const auto it = call_by_corr.find(a.correlation);
    if (it != call_by_corr.end()) {
      a.host_ns = calls[it->second].ts_ns;
      a.host_tid = calls[it->second].tid;
    } else {
      a.host_ns = a.start_ns;
    }
  }
  std::sort(acts.begin(), acts.end(), [](const Activity& a, const Activity& b) {
    return std::tie(a.host_ns, a.correlation) < std::tie(b.host_ns, b.correlation);
  });
  std::vector<LaunchKey> keys(acts.size());
  for (std::size_t i = 0; i < acts.size(); ++i) keys[i] = {acts[i].host_ns, acts[i].correlation};
  auto launched_before = [&](LaunchKey k) {  // activities with key <= k
    return static_cast<std::uint32_t>(std::upper_bound(keys.begin(), keys.end(), k) - keys.begin());
  };

  Workload w;
  w.source_path = path;
  w.intern("");  // op_id 0: no operator

  // Iterations: ProfilerStep#N annotations; else Optimizer.step (extended by
  // a zero_grad that follows it with no launch in between); else one.
  std::vector<std::int64_t> iteration_starts;  // host time an iteration starts
  std::vector<Interval> optimizer_spans;       // step (+ zero_grad): optimizer phase
  auto by_begin = [](const Interval& a, const Interval& b) { return a.begin_ns < b.begin_ns; };
  std::sort(profiler_steps.begin(), profiler_steps.end(), by_begin);
  std::sort(optimizer_steps.begin(), optimizer_steps.end(), by_begin);
  std::sort(zero_grads.begin(), zero_grads.end(), by_begin);
  for (const Interval& z : zero_grads) optimizer_spans.push_back(z);
  for (const Interval& s : optimizer_steps) optimizer_spans.push_back(s);
  std::int64_t trailing_after_ns = INT64_MAX;  // launches after this are stray
  if (!profiler_steps.empty()) {
    for (const Interval& s : profiler_steps) iteration_starts.push_back(s.begin_ns);
    iteration_starts.front() = INT64_MIN;
  } else if (!optimizer_steps.empty()) {
    iteration_starts.push_back(INT64_MIN);
    for (const Interval& s : optimizer_steps) {
      std::int64_t end = s.end_ns;
      for (const Interval& z : zero_grads) {
        if (z.begin_ns < s.end_ns) continue;
        const bool launch_between =
            launched_before({z.begin_ns, -1}) != launched_before({end, INT64_MAX});
        if (!launch_between) end = std::max(end, z.end_ns);
        break;
      }
      iteration_starts.push_back(end + 1);
    }
    trailing_after_ns = iteration_starts.back() - 1;
    iteration_starts.pop_back();
  } else {
    iteration_starts.push_back(INT64_MIN);
  }
  IntervalSet optimizer_set;
  for (const Interval& s : optimizer_spans) optimizer_set.add(s);
  optimizer_set.finish();
  for (auto& [tid, set] : autograd_ops) set.finish();

  // Operators: converted once per External id that launched work.
  std::vector<OpCall> op_calls;
  std::unordered_map<std::int64_t, std::int32_t> op_call_of_ext;
  std::vector<ActivityFacts> facts(acts.size());

  w.kernels.resize(acts.size());
  for (std::size_t i = 0; i < acts.size(); ++i) {
    const Activity& a = acts[i];
    Kernel& k = w.kernels[i];
    k.name_id = w.intern(a.name);
    k.stream = a.stream;
    k.device = a.device;
    k.launch = a.launch;
    k.host_launch_ns = a.host_ns;
    k.traced_start_ns = a.start_ns;
    k.work.duration_ns = a.duration_ns;
    facts[i].activity_bytes = a.bytes;
    facts[i].device_to_device = a.device_to_device;

    std::string_view op_name;
    if (const auto it = op_by_ext.find(a.external_id);
        a.external_id != 0 && it != op_by_ext.end()) {
      op_name = it->second.name;
      auto [slot, fresh] = op_call_of_ext.try_emplace(a.external_id, 0);
      if (fresh) {
        slot->second = static_cast<std::int32_t>(op_calls.size());
        op_calls.push_back(to_op_call(it->second));
      }
      facts[i].op_call = slot->second;
    }
    k.op_id = w.intern(op_name);

    const auto later =
        std::upper_bound(iteration_starts.begin(), iteration_starts.end(), a.host_ns);
    k.iteration = static_cast<std::int32_t>(later - iteration_starts.begin()) - 1;
    const bool launched = a.host_tid != -1 || call_by_corr.count(a.correlation) != 0;
    if (!launched || a.host_ns > trailing_after_ns) {
      k.phase = Phase::other;
    } else if (optimizer_set.contains(a.host_ns)) {
      k.phase = Phase::optimizer;
    } else {
      const auto ag = autograd_ops.find(a.host_tid);
      const bool backward = autograd_tids.count(a.host_tid) != 0 ||
                            (ag != autograd_ops.end() && ag->second.contains(a.host_ns));
      k.phase = backward ? Phase::backward : Phase::forward;
    }
    k.cls = classify_kernel(a.kind, op_name, a.name, k.phase);
  }

  // Drop empty iterations and renumber densely.
  {
    std::vector<std::int32_t> remap;
    for (const Kernel& k : w.kernels) {
      if (remap.size() <= static_cast<std::size_t>(k.iteration)) remap.resize(k.iteration + 1, -1);
    }
    for (const Kernel& k : w.kernels) remap[k.iteration] = 0;
    std::int32_t next = 0;
    for (auto& r : remap)
      if (r == 0) r = next++;
    for (Kernel& k : w.kernels) k.iteration = remap[k.iteration];
    w.iterations = next;
    w.iteration_begin.assign(static_cast<std::size_t>(next) + 1, 0);
    for (std::size_t i = w.kernels.size(); i-- > 0;)
      w.iteration_begin[w.kernels[i].iteration] = static_cast<std::uint32_t>(i);
    w.iteration_begin.back() = static_cast<std::uint32_t>(w.kernels.size());
  }

  // Host synchronisation points.
  std::unordered_map<std::int64_t, std::int64_t> sync_stream;  // correlation -> stream
  for (const CudaSync& s : cuda_syncs)
    if (s.correlation >= 0 && s.stream >= 0 && s.name != "Stream Wait Event")
      sync_stream[s.correlation] = s.stream;
  for (const RuntimeCall& c : calls) {
    const SyncKind kind = sync_kind(c.name);
    if (kind == SyncKind::none) continue;
    SyncPoint p;
    p.kind = kind == SyncKind::device   ? SyncPoint::Kind::device
             : kind == SyncKind::stream ? SyncPoint::Kind::stream
             : kind == SyncKind::event  ? SyncPoint::Kind::event
                                        : SyncPoint::Kind::copy;
    p.host_begin_ns = c.ts_ns;
    p.traced_end_ns = c.end_ns;
    p.waits_until_kernel = launched_before({c.ts_ns, c.correlation});
    const auto st = sync_stream.find(c.correlation);
    p.stream = kind != SyncKind::device && st != sync_stream.end()
                   ? static_cast<std::int32_t>(st->second)
                   : -1;
    w.syncs.push_back(p);
  }
  std::stable_sort(w.syncs.begin(), w.syncs.end(), [](const SyncPoint& a, const SyncPoint& b) {
    return a.host_begin_ns < b.host_begin_ns;
  });

  // Cross-stream event waits: the first activity launched on the waiting
  // stream after cudaStreamWaitEvent waits for the last one launched on the
  // recorded stream before the matching cudaEventRecord.
  std::unordered_map<std::int64_t, std::vector<std::uint32_t>> on_stream;
  for (std::uint32_t i = 0; i < acts.size(); ++i) on_stream[acts[i].stream].push_back(i);
  for (const CudaSync& s : cuda_syncs) {
    if (s.name != "Stream Wait Event" || s.record_correlation < 0) continue;
    const auto wait_call = call_by_corr.find(s.correlation);
    const auto record_call = call_by_corr.find(s.record_correlation);
    const auto waiting = on_stream.find(s.stream);
    const auto recorded = on_stream.find(s.wait_on_stream);
    if (wait_call == call_by_corr.end() || record_call == call_by_corr.end() ||
        waiting == on_stream.end() || recorded == on_stream.end())
      continue;
    const RuntimeCall& wc = calls[wait_call->second];
    const RuntimeCall& rc = calls[record_call->second];
    const std::uint32_t first_after = launched_before({wc.ts_ns, wc.correlation});
    const std::uint32_t count_before = launched_before({rc.ts_ns, rc.correlation});
    const auto& wv = waiting->second;
    const auto& rv = recorded->second;
    const auto k = std::lower_bound(wv.begin(), wv.end(), first_after);
    const auto a = std::lower_bound(rv.begin(), rv.end(), count_before);
    if (k == wv.end() || a == rv.begin()) continue;
    const std::uint32_t after = *std::prev(a);
    if (after < *k) w.event_waits.push_back({*k, after});
  }
  std::sort(w.event_waits.begin(), w.event_waits.end(), [](const EventWait& a, const EventWait& b) {
    return std::tie(a.kernel, a.after) < std::tie(b.kernel, b.after);
  });
  w.event_waits.erase(std::unique(w.event_waits.begin(), w.event_waits.end(),
                                  [](const EventWait& a, const EventWait& b) {
                                    return a.kernel == b.kernel && a.after == b.after;
                                  }),
                      w.event_waits.end());

  // Capture device and clocks.
  if (root.is_object()) {
    dom::array props;
    if (root["deviceProperties"].get(props) == simdjson::SUCCESS) {
      for (dom::element p : props) {
        std::string_view dev_name;
        const std::int64_t id = optional_int(p.get_object().value_unsafe(), "id", 0);
        if (p["name"].get(dev_name) == simdjson::SUCCESS &&
            (w.capture.device_name.empty() || id == acts.front().device)) {
          w.capture.device_name = std::string(dev_name);
          if (id == acts.front().device) break;
        }
      }
    }
  }
  w.capture.device = device_model_from_name(w.capture.device_name);
  load_capture_clocks(path, w.capture);

  annotate_work(w, op_calls, facts);
  annotate_instructions(w, path);
  w.validate();
  return w;
}

Workload read_kineto(const std::string& path) {
  const std::string text = traces::read_file(path, simdjson::SIMDJSON_PADDING);
  std::size_t first = 0;
  while (first < text.size() &&
         (text[first] == ' ' || text[first] == '\n' || text[first] == '\r' || text[first] == '\t'))
    ++first;
  if (first == text.size() || (text[first] != '{' && text[first] != '['))
    throw InputError(fmt::format("{}: not a Kineto JSON trace (does not start with '{{')", path));
  return parse_kineto(text, path, text.capacity() >= text.size() + simdjson::SIMDJSON_PADDING);
}

}  // namespace dvfsim
