#include "traces/kineto.h"

#include <fmt/format.h>
#include <simdjson.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstring>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include <deque>
#include <map>
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
#include "traces/iterations.h"
#include "traces/zeroed_operands.h"

namespace dvfsim {
namespace {

namespace dom = simdjson::dom;

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
  std::string_view cat;  // in the reader's StringPool
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
  std::string_view name;  // in the reader's StringPool
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

enum class SyncKind { none, device, stream, event, copy };

struct RuntimeCall {
  SyncKind sync;  // of its name
  std::int64_t ts_ns, end_ns, tid, correlation;
};

// An operator event, kept as the JSON text of the args to_op_call reads
// (op_args_text): converted only when it launched work, once the whole
// trace is read.
struct CpuOp {
  std::string text;
  std::string_view name;  // in the reader's StringPool
  std::int64_t dur_ns;
};

struct Interval {
  std::int64_t begin_ns, end_ns;
};

struct CudaSync {
  bool stream_wait_event;  // named "Stream Wait Event"
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

// Kineto's event categories; PyTorch 1.8/1.9 wrote them capitalised
// ("Kernel", "Runtime", "Operator", "Memcpy", "Memset").
enum class Cat {
  kernel,
  memset,
  memcpy,
  runtime,
  cpu_op,
  user_annotation,
  gpu_annotation,
  sync,
  other
};

Cat category(std::string_view cat) {
  std::string low(cat);
  for (char& c : low)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  if (low == "kernel") return Cat::kernel;
  if (low == "gpu_memset" || low == "memset") return Cat::memset;
  if (low == "gpu_memcpy" || low == "memcpy") return Cat::memcpy;
  if (low == "cuda_runtime" || low == "cuda_driver" || low == "runtime" || low == "driver")
    return Cat::runtime;
  if (low == "cpu_op" || low == "operator") return Cat::cpu_op;
  if (low == "user_annotation") return Cat::user_annotation;
  if (low == "gpu_user_annotation") return Cat::gpu_annotation;
  if (low == "cuda_sync") return Cat::sync;
  return Cat::other;
}

// "External id" (PyTorch >= 1.10) or "external id" (1.8/1.9).
std::int64_t external_id(dom::object args, std::int64_t fallback) {
  return optional_int(args, "External id", optional_int(args, "external id", fallback));
}

// An AMD GPU: the driver's name, or a gfx architecture name.
bool is_amd_device(std::string_view name) {
  return contains(name, "AMD") || contains(name, "Radeon") || contains(name, "Instinct") ||
         name.starts_with("gfx");
}

std::int64_t tid_of(dom::object ev) {
  return optional_int(ev, "tid", -1);
}

SyncKind sync_kind(std::string_view name) {
  if (name == "cudaDeviceSynchronize" || name == "cuCtxSynchronize") return SyncKind::device;
  if (name == "cudaStreamSynchronize" || name == "cuStreamSynchronize") return SyncKind::stream;
  if (name == "cudaEventSynchronize" || name == "cuEventSynchronize") return SyncKind::event;
  if ((name.starts_with("cudaMemcpy") || name.starts_with("cuMemcpy")) && !contains(name, "Async"))
    return SyncKind::copy;
  return SyncKind::none;
}

bool is_collective(std::string_view op_name) {
  return op_name == "record_param_comms" || op_name.starts_with("c10d::") ||
         op_name.starts_with("nccl:");
}

// {"args":{...}} with only the members of `args` that to_op_call reads
// (the first of each, as a lookup finds it), minified: about a third of the
// event's text.
std::string op_args_text(dom::object args, std::string_view op_name) {
  static constexpr std::string_view kShapes[] = {"Input Dims", "Input type", "Concrete Inputs",
                                                 "Input Strides"};
  static constexpr std::string_view kComms[] = {"In msg nelems", "Out msg nelems", "dtype",
                                                "Group size", "Collective name"};
  std::string out = "{\"args\":{";
  auto keep = [&](std::string_view key) {
    dom::element e;
    if (args[key].get(e) != simdjson::SUCCESS) return;
    if (out.back() != '{') out += ',';
    out += '"';
    out += key;
    out += "\":";
    out += simdjson::minify(e);
  };
  for (const std::string_view k : kShapes) keep(k);
  if (is_collective(op_name))
    for (const std::string_view k : kComms) keep(k);
  out += "}}";
  return out;
}

OpCall to_op_call(const CpuOp& op, dom::parser& parser) {
  OpCall call;
  call.name = std::string(op.name);
  dom::object obj, args;
  if (parser.parse(op.text).get(obj) != simdjson::SUCCESS ||
      obj["args"].get(args) != simdjson::SUCCESS)
    return call;
  if (is_collective(op.name)) {
    double v = 0;
    std::string_view dtype;
    if (args["In msg nelems"].get(v) == simdjson::SUCCESS) call.in_msg_elements = v;
    if (args["Out msg nelems"].get(v) == simdjson::SUCCESS) call.out_msg_elements = v;
    if (args["dtype"].get(dtype) == simdjson::SUCCESS) call.msg_dtype = std::string(dtype);
    call.group_size = optional_int(args, "Group size", -1);
    std::string_view collective;
    if (args["Collective name"].get(collective) == simdjson::SUCCESS)
      call.name = fmt::format("{} ({})", op.name, collective);
  }
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
  // One shape (or stride) list per tensor of each input: a TensorList has several.
  auto read_lists = [&](dom::array all, auto member) {
    std::size_t i = 0;
    for (dom::element e : all) {
      if (i >= n) break;
      OpInput& in = call.inputs[i++];
      auto& out = in.*member;
      dom::array a;
      if (e.get(a) != simdjson::SUCCESS) continue;
      if (a.size() == 0) {
        if (dtype_bytes(in.type)) out.emplace_back();  // 0-dim tensor
        continue;
      }
      dom::array first;
      if ((*a.begin()).get(first) == simdjson::SUCCESS) {  // TensorList: one list each
        for (dom::element t : a) {
          dom::array list;
          if (t.get(list) == simdjson::SUCCESS) out.push_back(to_shape(list));
        }
      } else {
        out.push_back(to_shape(a));
      }
    }
  };
  if (has_dims) read_lists(dims, &OpInput::shapes);
  dom::array strides;
  if (args["Input Strides"].get(strides) == simdjson::SUCCESS)
    read_lists(strides, &OpInput::strides);
  return call;
}

// What classify_kernel depends on, by pooled name.
struct ClassKey {
  const char* name;
  const char* op;
  ActivityKind kind;
  Phase phase;
  bool operator==(const ClassKey&) const = default;
};
struct ClassKeyHash {
  std::size_t operator()(const ClassKey& k) const {
    const auto h = std::hash<const void*>{};
    return h(k.name) * 31 + h(k.op) * 7 + static_cast<std::size_t>(k.kind) * 3 +
           static_cast<std::size_t>(k.phase);
  }
};

// Activities sorted by launch; (host_ns, correlation) is the order key.
using LaunchKey = std::pair<std::int64_t, std::int64_t>;

// Names and categories the reader keeps, each stored once: the views stay
// valid while the pool lives (a deque never moves its elements).
class StringPool {
 public:
  std::string_view operator()(std::string_view s) {
    if (const auto it = index_.find(s); it != index_.end()) return *it;
    const std::string_view kept = store_.emplace_back(s);
    index_.insert(kept);
    return kept;
  }

 private:
  std::deque<std::string> store_;
  std::unordered_set<std::string_view> index_;
};

// ---------------------------------------------------------------------------
// Streaming: the trace's text is read in pieces (GzipInput inflates on the
// fly) and split into the elements of "traceEvents" by a scan that tracks
// only strings and bracket depth; runs of whole events, about kBatchBytes at
// a time, are parsed as one JSON array by simdjson, handed to the reader and
// dropped. Neither the text nor the DOM of the whole trace is ever held: the
// memory is what the reader keeps per event plus one batch.

// Bytes of a trace's text, in order.
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  virtual std::size_t read(char* out, std::size_t n) = 0;  // 0 at the end
};

class MemorySource final : public ByteSource {
 public:
  explicit MemorySource(std::string_view text) : text_(text) {}
  std::size_t read(char* out, std::size_t n) override {
    const std::size_t k = std::min(n, text_.size() - at_);
    std::memcpy(out, text_.data() + at_, k);
    at_ += k;
    return k;
  }

 private:
  std::string_view text_;
  std::size_t at_ = 0;
};

class FileSource final : public ByteSource {
 public:
  explicit FileSource(const std::string& path) : in_(path) {}
  std::size_t read(char* out, std::size_t n) override { return in_.read(out, n); }

 private:
  traces::GzipInput in_;
};

// Newlines in [p, p + n), 16 bytes a step.
std::size_t count_newlines(const char* p, std::size_t n) {
  std::size_t count = 0, i = 0;
#if defined(__SSE2__)
  const __m128i nl = _mm_set1_epi8('\n');
  while (i + 16 <= n) {  // byte counters, summed before any can pass 255
    __m128i acc = _mm_setzero_si128();
    for (int k = 0; k < 255 && i + 16 <= n; ++k, i += 16)
      acc = _mm_sub_epi8(
          acc, _mm_cmpeq_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i)), nl));
    const __m128i sums = _mm_sad_epu8(acc, _mm_setzero_si128());
    count += static_cast<std::size_t>(_mm_cvtsi128_si32(sums)) +
             static_cast<std::size_t>(_mm_extract_epi16(sums, 4));
  }
#endif
  for (; i < n; ++i) count += p[i] == '\n';
  return count;
}

// The end of a JSON object or array: tracks strings (and their escapes) and
// bracket depth only, 16 bytes a step, resumable where the text stops. What
// it passes over is checked by simdjson afterwards.
class ContainerScan {
 public:
  // Scans text[from, to); the offset just past the closing bracket, or 0
  // when the container goes on past `to`.
  std::size_t run(const char* text, std::size_t from, std::size_t to) {
    std::size_t i = from;
#if defined(__SSE2__)
    const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\');
    const __m128i open_brace = _mm_set1_epi8('{'), close_brace = _mm_set1_epi8('}');
    const __m128i open_bracket = _mm_set1_epi8('['), close_bracket = _mm_set1_epi8(']');
    for (; i + 16 <= to; i += 16) {
      const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(text + i));
      const __m128i brackets = _mm_or_si128(
          _mm_or_si128(_mm_cmpeq_epi8(b, open_brace), _mm_cmpeq_epi8(b, close_brace)),
          _mm_or_si128(_mm_cmpeq_epi8(b, open_bracket), _mm_cmpeq_epi8(b, close_bracket)));
      const __m128i strings = _mm_or_si128(_mm_cmpeq_epi8(b, quote), _mm_cmpeq_epi8(b, backslash));
      auto mask = static_cast<unsigned>(_mm_movemask_epi8(_mm_or_si128(brackets, strings)));
      if (escaped_) {  // the first byte is escaped
        mask &= ~1u;
        escaped_ = false;
      }
      while (mask != 0) {
        const auto bit = static_cast<unsigned>(__builtin_ctz(mask));
        mask &= mask - 1;
        if (step(text[i + bit])) return i + bit + 1;
        if (escaped_ && bit < 15) {  // skip the escaped byte
          mask &= ~(1u << (bit + 1));
          escaped_ = false;
        }
      }
    }
#endif
    for (; i < to; ++i) {
      if (escaped_) {
        escaped_ = false;
        continue;
      }
      if (step(text[i])) return i + 1;
    }
    return 0;
  }

 private:
  // One byte that may matter; true when it closes the container.
  bool step(char x) {
    if (in_string_) {
      if (x == '\\')
        escaped_ = true;
      else if (x == '"')
        in_string_ = false;
      return false;
    }
    if (x == '"') {
      in_string_ = true;
    } else if (x == '{' || x == '[') {
      ++depth_;
    } else if ((x == '}' || x == ']') && depth_ > 0) {
      return --depth_ == 0;
    }
    return false;
  }

  std::size_t depth_ = 0;
  bool in_string_ = false, escaped_ = false;
};

bool is_ws(char c) {
  return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

// The top level of a Kineto trace: an object with "traceEvents" (and
// "deviceProperties"), or a bare array of events. `on_event(element, index)`
// sees every element of the events array in order; the element lives until
// it returns.
class EventStream {
 public:
  // The sizes a piece is read and a batch is parsed (tests shrink them to
  // put piece and batch boundaries everywhere).
  static constexpr std::size_t kChunkBytes = 1 << 20;
  static constexpr std::size_t kBatchBytes = 1 << 19;

  EventStream(ByteSource& src, const std::string& path, std::size_t chunk = kChunkBytes,
              std::size_t batch = kBatchBytes)
      : src_(src), path_(path), chunk_(std::max<std::size_t>(chunk, 1)), batch_bytes_(batch) {}

  template <class OnEvent>
  void run(OnEvent&& on_event) {
    skip_ws();
    const int first = peek();
    if (first != '{' && first != '[')
      throw InputError(
          fmt::format("{}: not a Kineto JSON trace (does not start with '{{')", path_));
    bool have_events = false, seen_repeated = false;
    if (first == '[') {
      events(on_event);
      have_events = true;
    } else {
      ++pos_;
      skip_ws();
      if (peek() == '}') {
        ++pos_;
      } else {
        for (;;) {
          skip_ws();
          if (peek() != '"') syntax("expected a field name");
          const std::size_t key_begin = pos_;
          scan_value();
          const std::string key = buf_.substr(key_begin + 1, pos_ - key_begin - 2);
          const bool repeated = key == "traceEvents" && seen_repeated;
          if (key == "traceEvents") seen_repeated = true;
          skip_ws();
          if (peek() != ':') syntax("expected ':' after a field name");
          ++pos_;
          skip_ws();
          if (peek() == EOF) truncated();
          if (key == "traceEvents" && !repeated && peek() == '[') {
            events(on_event);
            have_events = true;
          } else {
            other_value(key == "deviceProperties" && !have_props_);
          }
          skip_ws();
          const int c = peek();
          ++pos_;
          if (c == ',') continue;
          if (c == '}') break;
          if (c == EOF) truncated();
          --pos_;
          syntax("expected ',' or '}' after a top-level field");
        }
      }
    }
    skip_ws();
    if (peek() != EOF) syntax("content after the end of the trace");
    if (!have_events)
      throw InputError(fmt::format("{}: not a Kineto trace: missing field 'traceEvents'", path_));
  }

  // The "deviceProperties" value, parsed (null when the trace has none).
  const dom::element* device_properties() const { return have_props_ ? &props_ : nullptr; }

 private:
  // More text at the end of the buffer; false at the end of the input.
  bool fill() {
    if (eof_) return false;
    if (buf_.size() - size_ < chunk_) buf_.resize(std::max(2 * buf_.size(), size_ + chunk_));
    const std::size_t n = src_.read(buf_.data() + size_, std::min(chunk_, buf_.size() - size_));
    if (n == 0) {
      eof_ = true;
      return false;
    }
    size_ += n;
    return true;
  }
  int peek() {
    while (pos_ == size_)
      if (!fill()) return EOF;
    return static_cast<unsigned char>(buf_[pos_]);
  }
  void skip_ws() {
    for (;;) {
      while (pos_ < size_ && is_ws(buf_[pos_])) ++pos_;
      if (pos_ < size_ || !fill()) return;
    }
  }
  // Drops the text before pos_ (no span may point into it).
  void compact() {
    if (pos_ < chunk_) return;
    line_base_ += count_newlines(buf_.data(), pos_);
    std::memmove(buf_.data(), buf_.data() + pos_, size_ - pos_);
    size_ -= pos_;
    pos_ = 0;
  }
  std::size_t line_at(std::size_t at) const { return line_base_ + count_newlines(buf_.data(), at); }
  [[noreturn]] void truncated() const {
    throw InputError(fmt::format("{}: invalid JSON: the text ends inside {} (a truncated file)",
                                 path_, in_events_ ? "the events array" : "the trace"));
  }
  [[noreturn]] void syntax(std::string_view what) const {
    if (pos_ >= size_ && eof_) truncated();
    throw InputError(fmt::format("{}:{}: invalid JSON: {}", path_, line_at(pos_), what));
  }
  // Moves pos_ past the value that starts there (checked by simdjson later).
  void scan_value() {
    const char c = buf_[pos_];
    if (c == '"') {
      ++pos_;
      bool escaped = false;
      for (;;) {
        while (pos_ < size_) {
          const char d = buf_[pos_++];
          if (escaped)
            escaped = false;
          else if (d == '\\')
            escaped = true;
          else if (d == '"')
            return;
        }
        if (!fill()) truncated();
      }
    }
    if (c == '{' || c == '[') {
      ContainerScan scan;
      for (;;) {
        if (const std::size_t end = scan.run(buf_.data(), pos_, size_)) {
          pos_ = end;
          return;
        }
        pos_ = size_;
        if (!fill()) truncated();
      }
    }
    for (;;) {  // a number or literal: up to the next delimiter
      while (pos_ < size_) {
        const char d = buf_[pos_];
        if (is_ws(d) || d == ',' || d == ']' || d == '}') return;
        ++pos_;
      }
      if (!fill()) return;
    }
  }
  // Parses text[begin, end) as one JSON array of `count` values into `arr`.
  bool parse_array(std::size_t begin, std::size_t end, std::size_t count, dom::array& arr) {
    const std::size_t n = end - begin + 2;
    if (batch_.size() < n + simdjson::SIMDJSON_PADDING)
      batch_.resize(n + simdjson::SIMDJSON_PADDING);
    batch_[0] = '[';
    std::memcpy(batch_.data() + 1, buf_.data() + begin, end - begin);
    batch_[n - 1] = ']';
    dom::element root;
    return parser_.parse(batch_.data(), n, false).get(root) == simdjson::SUCCESS &&
           root.get(arr) == simdjson::SUCCESS && arr.size() == count;
  }
  // The error of the first span of the batch that is not valid JSON.
  [[noreturn]] void batch_error() {
    for (std::size_t j = 0; j < spans_.size(); ++j) {
      const auto [b, e] = spans_[j];
      const std::size_t n = e - b;
      std::string one(buf_.data() + b, n);
      one.resize(n + simdjson::SIMDJSON_PADDING);
      dom::element el;
      if (auto err = parser_.parse(one.data(), n, false).get(el))
        throw InputError(fmt::format("{}:{}: event {}: invalid JSON: {}", path_, line_at(b),
                                     first_index_ + j, simdjson::error_message(err)));
    }
    throw InputError(fmt::format("{}:{}: invalid JSON in the events array", path_,
                                 line_at(spans_.empty() ? pos_ : spans_.front().first)));
  }
  template <class OnEvent>
  void flush(OnEvent& on_event) {
    if (spans_.empty()) return;
    dom::array arr;
    if (!parse_array(spans_.front().first, spans_.back().second, spans_.size(), arr)) batch_error();
    std::size_t j = 0;
    for (dom::element el : arr) on_event(el, first_index_ + j++);
    first_index_ += spans_.size();
    spans_.clear();
    batch_size_ = 0;
    compact();
  }
  template <class OnEvent>
  void events(OnEvent& on_event) {
    in_events_ = true;
    ++pos_;  // '['
    skip_ws();
    if (peek() == ']') {
      ++pos_;
    } else {
      for (;;) {
        skip_ws();
        if (peek() == EOF) truncated();
        const std::size_t b = pos_;
        scan_value();
        spans_.emplace_back(b, pos_);
        batch_size_ += pos_ - b;
        skip_ws();
        const int c = peek();
        if (c == EOF) truncated();
        if (c != ',' && c != ']')
          syntax(
              fmt::format("expected ',' or ']' after event {}", first_index_ + spans_.size() - 1));
        ++pos_;
        if (batch_size_ >= batch_bytes_) flush(on_event);
        if (c == ']') break;
      }
    }
    flush(on_event);
    in_events_ = false;
  }
  // A top-level value other than the events: checked, and kept when it is
  // the device properties.
  void other_value(bool keep) {
    const std::size_t b = pos_;
    scan_value();
    const std::size_t n = pos_ - b;
    std::string& text = keep ? props_text_ : scratch_;
    text.assign(buf_.data() + b, n);
    text.resize(n + simdjson::SIMDJSON_PADDING);
    dom::parser& p = keep ? props_parser_ : parser_;
    if (auto err = p.parse(text.data(), n, false).get(props_tmp_))
      throw InputError(
          fmt::format("{}:{}: invalid JSON: {}", path_, line_at(b), simdjson::error_message(err)));
    if (keep) {
      props_ = props_tmp_;
      have_props_ = true;
    }
  }

  ByteSource& src_;
  const std::string& path_;
  std::size_t chunk_, batch_bytes_;
  std::string buf_;  // text [0, size_) read and not yet dropped
  std::size_t size_ = 0, pos_ = 0;
  std::size_t line_base_ = 1;  // the line buf_[0] lies on
  bool eof_ = false, in_events_ = false;
  std::vector<std::pair<std::size_t, std::size_t>> spans_;  // events of the batch
  std::size_t batch_size_ = 0, first_index_ = 0;
  std::string batch_, scratch_, props_text_;
  dom::parser parser_, props_parser_;
  dom::element props_, props_tmp_;
  bool have_props_ = false;
};

}  // namespace

Workload kineto_from(ByteSource& src, const std::string& path, const TraceOptions& options,
                     std::size_t chunk_bytes, std::size_t batch_bytes) {
  EventStream events(src, path, chunk_bytes, batch_bytes);
  StringPool pool;
  std::vector<Activity> acts;
  std::vector<RuntimeCall> calls;
  std::unordered_map<std::int64_t, std::size_t> call_by_corr;
  std::unordered_map<std::int64_t, CpuOp> op_by_ext;
  std::vector<OpSpan> op_spans;  // every operator range (traces/zeroed_operands.h)
  std::unordered_map<std::int64_t, IntervalSet> autograd_ops;  // by tid
  std::unordered_set<std::int64_t> autograd_tids;
  std::vector<Interval> profiler_steps, optimizer_steps, zero_grads;
  std::vector<std::pair<Interval, std::string_view>> annotations;  // record_function ranges (pool)
  std::vector<CudaSync> cuda_syncs;
  std::vector<Stamp> stamps;
  std::size_t hip_calls = 0;
  acts.reserve(8192);
  calls.reserve(8192);
  op_by_ext.reserve(32768);

  events.run([&](dom::element el, const std::size_t i) {
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
      return;
    }
    if (ph != "X" || cat.empty()) return;
    cat = pool(cat);  // kept by the time stamps
    const EventContext ctx{path, i, cat};
    const Cat c = category(cat);

    if (c == Cat::kernel || c == Cat::memset || c == Cat::memcpy) {
      const bool is_kernel = c == Cat::kernel;
      Activity a{};
      a.kind = is_kernel ? ActivityKind::kernel
                         : (c == Cat::memset ? ActivityKind::memset : ActivityKind::memcpy);
      if (!has_name) ctx.fail("name", "missing");
      a.name = pool(name);
      a.start_ns = ctx.ts_ns(ev, stamps);
      a.duration_ns = ctx.dur_ns(ev);
      dom::object args;
      if (ev["args"].get(args) != simdjson::SUCCESS) ctx.fail("args", "missing");
      a.correlation = ctx.integer(args, "correlation", "args.correlation");
      a.external_id = external_id(args, 0);
      a.stream = static_cast<std::int32_t>(optional_int(args, "stream", tid_of(ev)));
      a.device =
          static_cast<std::int32_t>(optional_int(args, "device", optional_int(ev, "pid", 0)));
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
      return;
    }
    if (c == Cat::runtime) {
      dom::object args;
      if (ev["args"].get(args) != simdjson::SUCCESS) ctx.fail("args", "missing");
      if (name.starts_with("hip")) ++hip_calls;
      RuntimeCall r{};
      r.sync = sync_kind(name);
      r.ts_ns = ctx.ts_ns(ev, stamps);
      r.end_ns = r.ts_ns + ctx.dur_ns(ev);
      r.tid = tid_of(ev);
      r.correlation = ctx.integer(args, "correlation", "args.correlation");
      call_by_corr.emplace(r.correlation, calls.size());
      calls.push_back(r);
      return;
    }
    if (c == Cat::sync) {
      dom::object args;
      if (ev["args"].get(args) != simdjson::SUCCESS) return;
      cuda_syncs.push_back({name == "Stream Wait Event", optional_int(args, "correlation", -1),
                            optional_int(args, "stream", -1),
                            optional_int(args, "wait_on_stream", -1),
                            optional_int(args, "wait_on_cuda_event_record_corr_id", -1)});
      return;
    }
    if (c == Cat::gpu_annotation) return;
    // Step and optimizer markers: record_function ranges, whatever CPU
    // category this PyTorch version files them under.
    const bool step = name.starts_with("ProfilerStep#");
    const bool optimizer = name.starts_with("Optimizer.step#");
    const bool zero_grad = name.starts_with("Optimizer.zero_grad#");
    if (step || optimizer || zero_grad) {
      const std::int64_t ts = ctx.ts_ns(ev, stamps);
      const Interval iv{ts, ts + ctx.dur_ns(ev)};
      if (step) profiler_steps.push_back(iv);
      if (optimizer) optimizer_steps.push_back(iv);
      if (zero_grad) zero_grads.push_back(iv);
      if (step) return;
    }
    if (c == Cat::user_annotation) {
      const std::int64_t ts = ctx.ts_ns(ev, stamps);
      annotations.push_back({{ts, ts + ctx.dur_ns(ev)}, pool(name)});
    }
    if (c == Cat::cpu_op) {
      dom::object args;
      if (ev["args"].get(args) != simdjson::SUCCESS) return;
      const std::int64_t ext = external_id(args, -1);
      const std::int64_t ts = ctx.ts_ns(ev, stamps);
      const std::int64_t dur = ctx.dur_ns(ev);
      if (name.starts_with("autograd::engine::evaluate_function"))
        autograd_ops[tid_of(ev)].add({ts, ts + dur});
      op_spans.push_back(
          {tid_of(ev), ts, ts + dur, pool(name), optional_int(args, "Sequence number", -1)});
      if (ext < 0) return;
      // Keep the innermost (shortest) operator of an External id.
      auto [it, fresh] = op_by_ext.try_emplace(ext);
      if (fresh || dur < it->second.dur_ns) {
        it->second.text = op_args_text(args, name);
        it->second.name = pool(name);
        it->second.dur_ns = dur;
      }
    }
  });
  std::map<std::int64_t, std::string> device_names;  // the GPUs, by id (deviceProperties)
  if (const dom::element* props = events.device_properties()) {
    dom::array list;
    if (props->get(list) == simdjson::SUCCESS) {
      for (dom::element p : list) {
        dom::object obj;
        std::string_view dev_name, arch;
        if (p.get(obj) != simdjson::SUCCESS) continue;
        if (obj["name"].get(dev_name) != simdjson::SUCCESS) continue;
        if (obj["gcnArchName"].get(arch) == simdjson::SUCCESS && !arch.empty())
          dev_name = dev_name.empty() ? arch : dev_name;
        device_names.try_emplace(optional_int(obj, "id", 0), std::string(dev_name));
      }
    }
  }
  if (acts.empty())
    throw InputError(fmt::format(
        "{}: no GPU kernels, memsets or memcpys (a CPU-only profile, or a trace recorded "
        "without ProfilerActivity.CUDA)",
        path));
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

  // AMD GPUs (ROCm's Kineto writes the same schema with HIP calls).
  for (const auto& [id, dev_name] : device_names)
    if (is_amd_device(dev_name))
      throw InputError(fmt::format(
          "{}: captured on an AMD GPU ('{}'): dvfsim models NVIDIA GPUs only (capture and "
          "target devices); AMD traces are not supported",
          path, dev_name));
  if (hip_calls > 0)
    throw InputError(fmt::format(
        "{}: an AMD GPU trace ({} HIP runtime calls): dvfsim models NVIDIA GPUs only (capture "
        "and target devices); AMD traces are not supported",
        path, hip_calls));

  Workload w;
  w.source_path = path;
  w.intern("");  // op_id 0: no operator

  // Several GPUs in one file are never merged: --gpu N picks one.
  {
    std::map<std::int32_t, std::size_t> per_device;
    for (const Activity& a : acts) ++per_device[a.device];
    auto describe = [&] {
      std::string list;
      for (const auto& [id, count] : per_device) {
        const auto name_it = device_names.find(id);
        list += fmt::format("{}{} ({}, {} activities)", list.empty() ? "" : ", ", id,
                            name_it != device_names.end() ? name_it->second : "unnamed", count);
      }
      return list;
    };
    if (options.gpu >= 0) {
      if (per_device.count(options.gpu) == 0)
        throw InputError(
            fmt::format("{}: --gpu {}: the trace has no GPU activities on device {}; "
                        "devices with activities: {}",
                        path, options.gpu, options.gpu, describe()));
      if (per_device.size() > 1) {
        w.notes.push_back(fmt::format("--gpu {}: read device {} of {} in the file ({})",
                                      options.gpu, options.gpu, per_device.size(), describe()));
        std::erase_if(acts, [&](const Activity& a) { return a.device != options.gpu; });
      }
    } else if (per_device.size() > 1) {
      throw InputError(fmt::format(
          "{}: GPU activities of {} devices: {}; dvfsim replays one GPU at a time: pass --gpu N",
          path, per_device.size(), describe()));
    }
  }
  const std::int32_t gpu = acts.front().device;

  // Host launch of every activity through its correlation id.
  std::vector<bool> launched(acts.size());
  std::size_t unlaunched = 0;
  for (std::size_t i = 0; i < acts.size(); ++i) {
    Activity& a = acts[i];
    const auto it = call_by_corr.find(a.correlation);
    launched[i] = it != call_by_corr.end();
    if (launched[i]) {
      a.host_ns = calls[it->second].ts_ns;
      a.host_tid = calls[it->second].tid;
    } else {
      a.host_ns = a.start_ns;
      ++unlaunched;
    }
  }
  // Activities whose launch call lies outside the profiling window: placed
  // at their GPU start, but never after an activity that follows them on
  // their stream (a stream runs its work in launch order).
  if (unlaunched > 0) {
    std::unordered_map<std::int32_t, std::vector<std::size_t>> by_stream;
    for (std::size_t i = 0; i < acts.size(); ++i) by_stream[acts[i].stream].push_back(i);
    for (auto& [stream, idx] : by_stream) {
      std::sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) {
        return std::tie(acts[a].start_ns, acts[a].correlation) <
               std::tie(acts[b].start_ns, acts[b].correlation);
      });
      std::int64_t later = INT64_MAX;  // earliest launch of what follows on the stream
      for (std::size_t j = idx.size(); j-- > 0;) {
        Activity& a = acts[idx[j]];
        if (!launched[idx[j]])
          a.host_ns = std::min(a.host_ns, later == INT64_MAX ? later : later - 1);
        later = std::min(later, a.host_ns);
      }
    }
    w.notes.push_back(fmt::format(
        "{} of {} activities have no launch call in the trace (launched before the profiling "
        "window opened, or the runtime events were dropped): placed by their GPU start",
        unlaunched, acts.size()));
  }
  // Launch order; the kernels of one graph launch (one correlation id) in
  // the order the GPU ran them.
  {
    std::vector<std::size_t> order(acts.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
      const Activity& a = acts[x];
      const Activity& b = acts[y];
      return std::tie(a.host_ns, a.correlation, a.start_ns, x) <
             std::tie(b.host_ns, b.correlation, b.start_ns, y);
    });
    std::vector<Activity> sorted;
    std::vector<bool> sorted_launched;
    sorted.reserve(acts.size());
    for (const std::size_t i : order) {
      sorted.push_back(acts[i]);
      sorted_launched.push_back(launched[i]);
    }
    acts = std::move(sorted);
    launched = std::move(sorted_launched);
  }
  std::vector<LaunchKey> keys(acts.size());
  for (std::size_t i = 0; i < acts.size(); ++i) keys[i] = {acts[i].host_ns, acts[i].correlation};
  auto launched_before = [&](LaunchKey k) {  // activities with key <= k
    return static_cast<std::uint32_t>(std::upper_bound(keys.begin(), keys.end(), k) - keys.begin());
  };

  // Iterations: --iterations N; else ProfilerStep#N annotations; else
  // Optimizer.step (extended by a zero_grad that follows it with no launch in
  // between); else a repeated activity sequence; else one, with a note.
  std::vector<LaunchKey> iteration_starts;  // first launch key of each iteration
  std::vector<Interval> optimizer_spans;    // step (+ zero_grad): optimizer phase
  auto by_begin = [](const Interval& a, const Interval& b) { return a.begin_ns < b.begin_ns; };
  std::sort(profiler_steps.begin(), profiler_steps.end(), by_begin);
  std::sort(optimizer_steps.begin(), optimizer_steps.end(), by_begin);
  std::sort(zero_grads.begin(), zero_grads.end(), by_begin);
  for (const Interval& z : zero_grads) optimizer_spans.push_back(z);
  for (const Interval& s : optimizer_steps) optimizer_spans.push_back(s);
  std::int64_t trailing_after_ns = INT64_MAX;  // launches after this are stray
  std::vector<std::int64_t> launch_ns(acts.size());
  for (std::size_t i = 0; i < acts.size(); ++i) launch_ns[i] = acts[i].host_ns;
  auto from_boundaries = [&](const std::vector<std::size_t>& starts) {
    for (const std::size_t b : starts) iteration_starts.push_back(keys[b]);
    iteration_starts.front() = {INT64_MIN, INT64_MIN};
  };
  if (options.iterations > 0) {
    from_boundaries(split_at_pauses(launch_ns, static_cast<std::size_t>(options.iterations)));
    w.iteration_rule = fmt::format(
        "--iterations {}: split at the longest host pauses between launches", options.iterations);
    if (iteration_starts.size() != static_cast<std::size_t>(options.iterations))
      w.notes.push_back(fmt::format("--iterations {}: only {} iterations fit the {} activities",
                                    options.iterations, iteration_starts.size(), acts.size()));
  } else if (!profiler_steps.empty()) {
    for (const Interval& s : profiler_steps) iteration_starts.push_back({s.begin_ns, INT64_MIN});
    iteration_starts.front() = {INT64_MIN, INT64_MIN};
    w.iteration_rule = "ProfilerStep# annotations";
  } else if (!optimizer_steps.empty()) {
    iteration_starts.push_back({INT64_MIN, INT64_MIN});
    for (const Interval& s : optimizer_steps) {
      std::int64_t end = s.end_ns;
      for (const Interval& z : zero_grads) {
        if (z.begin_ns < s.end_ns) continue;
        const bool launch_between =
            launched_before({z.begin_ns, -1}) != launched_before({end, INT64_MAX});
        if (!launch_between) end = std::max(end, z.end_ns);
        break;
      }
      iteration_starts.push_back({end + 1, INT64_MIN});
    }
    trailing_after_ns = iteration_starts.back().first - 1;
    iteration_starts.pop_back();
    w.iteration_rule = "Optimizer.step annotations (an iteration ends with its optimizer step)";
  } else {
    std::unordered_map<std::string_view, std::uint32_t> ids;
    std::vector<std::uint32_t> seq(acts.size());
    for (std::size_t i = 0; i < acts.size(); ++i)
      seq[i] = ids.try_emplace(acts[i].name, static_cast<std::uint32_t>(ids.size())).first->second;
    // One record_function range around every launch: the trace is one call
    // (a vLLM execute, a generate), and what repeats inside it are layers.
    std::string_view one_call;
    for (const auto& [iv, ann] : annotations)
      if (iv.begin_ns <= launch_ns.front() && launch_ns.back() <= iv.end_ns) one_call = ann;
    const auto fit = one_call.empty() ? detect_period(seq, launch_ns) : std::nullopt;
    if (!one_call.empty()) {
      iteration_starts.push_back({INT64_MIN, INT64_MIN});
      w.iteration_rule =
          fmt::format("one call: every launch lies inside the '{}' annotation", one_call);
      w.notes.push_back(fmt::format(
          "no ProfilerStep# or Optimizer.step markers, and every launch lies inside one "
          "record_function range ('{}'): read as one iteration (what repeats inside it are "
          "layers); pass --iterations N if it holds N",
          one_call));
    } else if (fit) {
      from_boundaries(period_boundaries(*fit, acts.size()));
      w.iteration_rule = fmt::format(
          "repeated activity sequence: period {} activities ({:.1f} % of positions repeat)",
          fit->period, 100.0 * fit->match);
      w.notes.push_back(fmt::format(
          "no ProfilerStep# or Optimizer.step markers: {} iterations found from the repeated "
          "activity sequence (period {}); pass --iterations N to override",
          iteration_starts.size(), fit->period));
    } else {
      iteration_starts.push_back({INT64_MIN, INT64_MIN});
      w.iteration_rule = "none found: one iteration";
      w.notes.push_back(
          "no ProfilerStep# or Optimizer.step markers and no repeated activity sequence: the "
          "whole trace is read as one iteration (pass --iterations N if it holds N)");
    }
  }
  IntervalSet optimizer_set;
  for (const Interval& s : optimizer_spans) optimizer_set.add(s);
  optimizer_set.finish();
  for (auto& [tid, set] : autograd_ops) set.finish();

  // Operators: converted once per External id that launched work.
  std::vector<OpCall> op_calls;
  std::unordered_map<std::int64_t, std::int32_t> op_call_of_ext;
  dom::parser op_parser;
  std::unordered_map<ClassKey, KernelClass, ClassKeyHash> class_of;
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
    k.correlation = a.correlation;
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
        op_calls.push_back(to_op_call(it->second, op_parser));
      }
      facts[i].op_call = slot->second;
    }
    k.op_id = w.intern(op_name);

    const auto later = std::upper_bound(iteration_starts.begin(), iteration_starts.end(), keys[i]);
    k.iteration = static_cast<std::int32_t>(later - iteration_starts.begin()) - 1;
    if (!launched[i] || a.host_ns > trailing_after_ns) {
      k.phase = Phase::other;
    } else if (optimizer_set.contains(a.host_ns)) {
      k.phase = Phase::optimizer;
    } else {
      const auto ag = autograd_ops.find(a.host_tid);
      const bool backward = autograd_tids.count(a.host_tid) != 0 ||
                            (ag != autograd_ops.end() && ag->second.contains(a.host_ns));
      k.phase = backward ? Phase::backward : Phase::forward;
    }
    // Names are pooled: the same views for the same names, so one class per
    // (kind, operator, name, phase) is computed once.
    const ClassKey key{a.name.data(), op_name.data(), a.kind, k.phase};
    auto [cls, fresh_cls] = class_of.try_emplace(key);
    if (fresh_cls) cls->second = classify_kernel(a.kind, op_name, a.name, k.phase);
    k.cls = cls->second;
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
  // Steady state: the leading warm-up iterations do not stand for the run.
  {
    const std::vector<std::int64_t> step = iteration_step_ns(w);
    w.steady_iterations = steady_iterations(step);
    if (!w.steady_iterations.empty() && w.steady_iterations.front() > 0) {
      const std::int32_t first = w.steady_iterations.front();
      const std::string warm = first == 1 ? std::string("iteration 0 is")
                                          : fmt::format("iterations 0..{} are", first - 1);
      w.notes.push_back(fmt::format(
          "per-iteration figures use the steady-state iterations {}..{}: {} warm-up (step "
          "time over {}x the median of the iterations after the first; iteration 0: {:.3f} ms)",
          first, w.iterations - 1, warm, kWarmupStepRatio,
          static_cast<double>(step.front()) * 1e-6));
    }
  }

  // Host synchronisation points (a blocking copy waits for its own copy too).
  std::unordered_map<std::int64_t, std::int64_t> sync_stream;  // correlation -> stream
  for (const CudaSync& s : cuda_syncs)
    if (s.correlation >= 0 && s.stream >= 0 && !s.stream_wait_event)
      sync_stream[s.correlation] = s.stream;
  for (const RuntimeCall& c : calls) {
    const SyncKind kind = c.sync;
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
    if (!s.stream_wait_event || s.record_correlation < 0) continue;
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
  if (const auto it = device_names.find(gpu); it != device_names.end())
    w.capture.device_name = it->second;
  else if (!device_names.empty())
    w.capture.device_name = device_names.begin()->second;
  resolve_capture_device(w.capture, options.capture_device);
  load_capture_clocks(path, w.capture);

  annotate_work(w, op_calls, facts);
  annotate_instructions(w, path);
  {
    std::vector<std::int64_t> host_tids(acts.size(), -1);
    for (std::size_t i = 0; i < acts.size(); ++i)
      if (launched[i]) host_tids[i] = acts[i].host_tid;
    mark_zeroed_operands(w, std::move(op_spans), host_tids);
  }
  w.validate();
  return w;
}

Workload read_kineto(const std::string& path, const TraceOptions& options) {
  FileSource src(path);
  return kineto_from(src, path, options, EventStream::kChunkBytes, EventStream::kBatchBytes);
}

Workload parse_kineto(std::string_view json, const std::string& path, const TraceOptions& options) {
  MemorySource src(json);
  return kineto_from(src, path, options, EventStream::kChunkBytes, EventStream::kBatchBytes);
}

Workload parse_kineto_in_pieces(std::string_view json, const std::string& path,
                                std::size_t chunk_bytes, std::size_t batch_bytes,
                                const TraceOptions& options) {
  MemorySource src(json);
  return kineto_from(src, path, options, chunk_bytes, batch_bytes);
}

}  // namespace dvfsim
