#include "traces/native.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <vector>

#include "sim/error.h"
#include "traces/gzip_io.h"

namespace dvfsim {
namespace {

constexpr std::string_view kKernelColumns =
    "# name_id op_id stream device grid_x grid_y grid_z block_x block_y block_z "
    "registers_per_thread shared_memory_bytes host_launch_ns traced_start_ns class phase "
    "iteration layer duration_ns flops dram_bytes work_source instructions instructions_source "
    "correlation l2_excess_bytes zeroed_operands";

std::string escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (const char c : s) {
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string_view sync_kind_name(SyncPoint::Kind k) {
  switch (k) {
    case SyncPoint::Kind::device:
      return "device";
    case SyncPoint::Kind::stream:
      return "stream";
    case SyncPoint::Kind::event:
      return "event";
    case SyncPoint::Kind::copy:
      return "copy";
  }
  return "device";
}

// Line-by-line reader with line numbers for messages.
class Lines {
 public:
  Lines(std::string_view text, const std::string& path) : text_(text), path_(path) {}

  [[noreturn]] void fail(std::string_view what) const {
    throw InputError(fmt::format("{}:{}: {}", path_, line_no_, what));
  }
  // Next line that is not a comment ('#' first) or empty; false at the end.
  bool next(std::string_view& line) {
    while (pos_ < text_.size()) {
      std::size_t end = text_.find('\n', pos_);
      if (end == std::string_view::npos) end = text_.size();
      line = text_.substr(pos_, end - pos_);
      pos_ = end + 1;
      ++line_no_;
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      if (line.empty() || line.front() == '#') continue;
      return true;
    }
    return false;
  }
  std::string_view expect() {
    std::string_view line;
    if (!next(line)) fail("unexpected end of file");
    return line;
  }
  // "@section N" -> N.
  std::size_t section(std::string_view name) {
    const std::string_view line = expect();
    const std::string prefix = fmt::format("@{} ", name);
    if (line.substr(0, prefix.size()) != prefix)
      fail(fmt::format("expected section '@{} <count>'", name));
    return count(integer<std::uint64_t>(line.substr(prefix.size()), name), name);
  }
  // A section count checked against the lines left in the file (each entry
  // takes one), so that a corrupt count cannot allocate more than the file holds.
  std::size_t count(std::uint64_t n, std::string_view name) const {
    if (n > lines_left())
      fail(fmt::format("section '@{}' claims {} entries but the file has only {} lines left", name,
                       n, lines_left()));
    return static_cast<std::size_t>(n);
  }
  std::size_t lines_left() const {
    if (pos_ >= text_.size()) return 0;
    const auto rest = text_.substr(pos_);
    return static_cast<std::size_t>(std::count(rest.begin(), rest.end(), '\n')) +
           (rest.back() != '\n');
  }
  template <typename T>
  T integer(std::string_view s, std::string_view field) const {
    T v{};
    const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || p != s.data() + s.size())
      fail(fmt::format("field '{}': bad integer '{}'", field, s));
    return v;
  }
  double real(std::string_view s, std::string_view field) const {
    double v = 0;
    const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || p != s.data() + s.size())
      fail(fmt::format("field '{}': bad number '{}'", field, s));
    if (!std::isfinite(v)) fail(fmt::format("field '{}': '{}' is not a finite number", field, s));
    return v;
  }
  std::string unescape(std::string_view s) const {
    std::string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size(); ++i) {
      if (s[i] != '\\') {
        out += s[i];
        continue;
      }
      if (++i == s.size()) fail("dangling backslash");
      switch (s[i]) {
        case '\\':
          out += '\\';
          break;
        case 't':
          out += '\t';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        default:
          fail(fmt::format("unknown escape '\\{}'", s[i]));
      }
    }
    return out;
  }

 private:
  std::string_view text_;
  const std::string& path_;
  std::size_t pos_ = 0;
  std::size_t line_no_ = 0;
};

// A line's tab-separated fields (the kernels' 25 at most).
using Fields = std::array<std::string_view, 27>;

// Splits on tabs into exactly `n` fields (at most Fields' size).
void split_tabs(const Lines& lines, std::string_view line, Fields& out, std::size_t n,
                std::string_view what) {
  std::size_t count = 0;
  const char* const end = line.data() + line.size();
  for (const char* p = line.data();; ++p) {
    const char* const field = p;
    while (p != end && *p != '\t') ++p;
    if (count < out.size())
      out[count] = std::string_view(field, static_cast<std::size_t>(p - field));
    ++count;
    if (p == end) break;
  }
  if (count != n)
    lines.fail(fmt::format("{}: expected {} tab-separated fields, got {}", what, n, count));
}

}  // namespace

std::string format_native(const Workload& w) {
  fmt::memory_buffer b;
  auto out = std::back_inserter(b);
  fmt::format_to(out, "{}\n", kNativeHeader);
  fmt::format_to(out, "device={}\n", escape(w.capture.device));
  fmt::format_to(out, "device_name={}\n", escape(w.capture.device_name));
  fmt::format_to(out, "core_mhz={}\n", w.capture.core_mhz);
  fmt::format_to(out, "memory_mhz={}\n", w.capture.memory_mhz);
  fmt::format_to(out, "clocks_source={}\n", escape(w.capture.clocks_source));
  fmt::format_to(out, "instructions_source={}\n", escape(w.capture.instructions_source));
  fmt::format_to(out, "iterations={}\n", w.iterations);
  if (!w.iteration_rule.empty())
    fmt::format_to(out, "iteration_rule={}\n", escape(w.iteration_rule));
  if (!w.steady_iterations.empty()) {
    fmt::format_to(out, "steady_iterations=");
    for (std::size_t i = 0; i < w.steady_iterations.size(); ++i)
      fmt::format_to(out, "{}{}", i ? "," : "", w.steady_iterations[i]);
    fmt::format_to(out, "\n");
  }
  for (const std::string& n : w.notes) fmt::format_to(out, "note={}\n", escape(n));
  fmt::format_to(out, "@names {}\n", w.names.size());
  for (std::size_t i = 0; i < w.names.size(); ++i)
    fmt::format_to(out, "{}\t{}\n", i, escape(w.names[i]));
  fmt::format_to(out, "@kernels {}\n{}\n", w.kernels.size(), kKernelColumns);
  for (const Kernel& k : w.kernels) {
    const LaunchConfig& l = k.launch;
    fmt::format_to(out, "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t", k.name_id,
                   k.op_id, k.stream, k.device, l.grid[0], l.grid[1], l.grid[2], l.block[0],
                   l.block[1], l.block[2], l.registers_per_thread, l.shared_memory_bytes,
                   k.host_launch_ns, k.traced_start_ns);
    fmt::format_to(out, "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\n", to_string(k.cls),
                   to_string(k.phase), k.iteration, k.layer, k.work.duration_ns, k.work.flops,
                   k.work.dram_bytes, to_string(k.work.source), k.work.instructions,
                   to_string(k.work.instructions_source), k.correlation, k.work.l2_excess_bytes,
                   k.work.zeroed_operands);
  }
  fmt::format_to(out, "@syncs {}\n# kind host_begin_ns traced_end_ns waits_until_kernel stream\n",
                 w.syncs.size());
  for (const SyncPoint& s : w.syncs)
    fmt::format_to(out, "{}\t{}\t{}\t{}\t{}\n", sync_kind_name(s.kind), s.host_begin_ns,
                   s.traced_end_ns, s.waits_until_kernel, s.stream);
  fmt::format_to(out, "@event_waits {}\n# kernel after\n", w.event_waits.size());
  for (const EventWait& e : w.event_waits) fmt::format_to(out, "{}\t{}\n", e.kernel, e.after);
  fmt::format_to(out, "@iteration_begin {}\n", w.iteration_begin.size());
  for (const std::uint32_t i : w.iteration_begin) fmt::format_to(out, "{}\n", i);
  fmt::format_to(out, "@end\n");
  return fmt::to_string(b);
}

void write_native(const Workload& w, const std::string& path) {
  const bool gz = path.size() >= 3 && path.compare(path.size() - 3, 3, ".gz") == 0;
  traces::write_file_atomic(path, format_native(w), gz);
}

Workload parse_native(std::string_view text, const std::string& path) {
  auto has_header = [&](std::string_view h) {
    return text.substr(0, h.size()) == h &&
           (text.size() == h.size() || text[h.size()] == '\n' || text[h.size()] == '\r');
  };
  const bool v2 = has_header(kNativeHeaderV2);
  const bool v3 = has_header(kNativeHeaderV3);
  const bool v4 = has_header(kNativeHeaderV4);
  if (!v2 && !v3 && !v4 && !has_header(kNativeHeader)) {
    if (text.substr(0, 17) == "# dvfsim-trace v1")
      throw InputError(fmt::format(
          "{}:1: native trace format v1 has no instruction counts; convert the original trace "
          "again with `dvfsim trace convert` (writes '{}')",
          path, kNativeHeader));
    throw InputError(fmt::format("{}:1: not a dvfsim trace (expected '{}')", path, kNativeHeader));
  }
  Lines lines(text, path);
  Workload w;
  w.source_path = path;
  bool have_iterations = false;
  std::string_view line;

  // Metadata: key=value until the first section.
  for (;;) {
    line = lines.expect();
    if (line.front() == '@') break;
    const std::size_t eq = line.find('=');
    if (eq == std::string_view::npos) lines.fail("expected key=value");
    const std::string_view key = line.substr(0, eq), value = line.substr(eq + 1);
    if (key == "device")
      w.capture.device = lines.unescape(value);
    else if (key == "device_name")
      w.capture.device_name = lines.unescape(value);
    else if (key == "core_mhz")
      w.capture.core_mhz = lines.integer<std::int32_t>(value, key);
    else if (key == "memory_mhz")
      w.capture.memory_mhz = lines.integer<std::int32_t>(value, key);
    else if (key == "clocks_source")
      w.capture.clocks_source = lines.unescape(value);
    else if (key == "instructions_source")
      w.capture.instructions_source = lines.unescape(value);
    else if (key == "iterations") {
      w.iterations = lines.integer<std::int32_t>(value, key);
      have_iterations = true;
    } else if (key == "iteration_rule") {
      w.iteration_rule = lines.unescape(value);
    } else if (key == "steady_iterations") {
      w.steady_iterations.clear();
      std::size_t at = 0;
      while (at <= value.size()) {
        const std::size_t comma = std::min(value.find(',', at), value.size());
        w.steady_iterations.push_back(
            lines.integer<std::int32_t>(value.substr(at, comma - at), key));
        at = comma + 1;
      }
    } else if (key == "note") {
      w.notes.push_back(lines.unescape(value));
    }  // other keys: informational, ignored
  }
  if (!have_iterations) lines.fail("missing metadata key 'iterations'");
  if (w.iterations < 1) lines.fail("metadata key 'iterations' must be >= 1");
  for (std::size_t i = 0; i < w.steady_iterations.size(); ++i)
    if (w.steady_iterations[i] < 0 || w.steady_iterations[i] >= w.iterations ||
        (i > 0 && w.steady_iterations[i] <= w.steady_iterations[i - 1]))
      lines.fail(
          fmt::format("metadata key 'steady_iterations': expected ascending iterations in 0..{}",
                      w.iterations - 1));

  // "@names N" is the line we stopped at.
  const std::string_view names_prefix = "@names ";
  if (line.substr(0, names_prefix.size()) != names_prefix) lines.fail("expected '@names <count>'");
  const std::size_t n_names =
      lines.count(lines.integer<std::uint64_t>(line.substr(names_prefix.size()), "names"), "names");
  Fields f;
  w.names.reserve(n_names);
  for (std::size_t i = 0; i < n_names; ++i) {
    line = lines.expect();
    const std::size_t tab = line.find('\t');
    if (tab == std::string_view::npos) lines.fail("names: expected '<id>\\t<name>'");
    if (lines.integer<std::size_t>(line.substr(0, tab), "name id") != i)
      lines.fail(fmt::format("names: expected id {}", i));
    std::string name = lines.unescape(line.substr(tab + 1));
    if (w.name_index.count(name)) lines.fail("names: duplicate name");
    w.name_index.emplace(name, static_cast<std::uint32_t>(i));
    w.names.push_back(std::move(name));
  }

  const std::size_t n_kernels = lines.section("kernels");
  w.kernels.resize(n_kernels);
  for (Kernel& k : w.kernels) {
    split_tabs(lines, lines.expect(), f, v2 ? 24 : v3 ? 25 : v4 ? 26 : 27, "kernels");
    k.name_id = lines.integer<std::uint32_t>(f[0], "name_id");
    k.op_id = lines.integer<std::uint32_t>(f[1], "op_id");
    k.stream = lines.integer<std::int32_t>(f[2], "stream");
    k.device = lines.integer<std::int32_t>(f[3], "device");
    for (int d = 0; d < 3; ++d) {
      k.launch.grid[d] = lines.integer<std::uint32_t>(f[4 + d], "grid");
      k.launch.block[d] = lines.integer<std::uint32_t>(f[7 + d], "block");
    }
    k.launch.registers_per_thread = lines.integer<std::uint32_t>(f[10], "registers_per_thread");
    k.launch.shared_memory_bytes = lines.integer<std::uint32_t>(f[11], "shared_memory_bytes");
    k.host_launch_ns = lines.integer<std::int64_t>(f[12], "host_launch_ns");
    k.traced_start_ns = lines.integer<std::int64_t>(f[13], "traced_start_ns");
    const auto cls = parse_kernel_class(f[14]);
    if (!cls) lines.fail(fmt::format("field 'class': unknown class '{}'", f[14]));
    k.cls = *cls;
    const auto phase = parse_phase(f[15]);
    if (!phase) lines.fail(fmt::format("field 'phase': unknown phase '{}'", f[15]));
    k.phase = *phase;
    k.iteration = lines.integer<std::int32_t>(f[16], "iteration");
    k.layer = lines.integer<std::int32_t>(f[17], "layer");
    k.work.duration_ns = lines.integer<std::int64_t>(f[18], "duration_ns");
    k.work.flops = lines.real(f[19], "flops");
    k.work.dram_bytes = lines.real(f[20], "dram_bytes");
    if (f[21] == "shapes")
      k.work.source = WorkSource::shapes;
    else if (f[21] == "fallback")
      k.work.source = WorkSource::fallback;
    else
      lines.fail(fmt::format("field 'work_source': unknown value '{}'", f[21]));
    k.work.instructions = lines.real(f[22], "instructions");
    if (k.work.instructions < 0) lines.fail("field 'instructions': must be >= 0");
    const auto is = parse_instruction_source(f[23]);
    if (!is) lines.fail(fmt::format("field 'instructions_source': unknown value '{}'", f[23]));
    k.work.instructions_source = *is;
    if (!v2) {
      k.correlation = lines.integer<std::int64_t>(f[24], "correlation");
      if (k.correlation < -1) lines.fail("field 'correlation': must be >= -1");
    }
    if (!v2 && !v3) {
      k.work.l2_excess_bytes = lines.real(f[25], "l2_excess_bytes");
      if (!(k.work.l2_excess_bytes >= 0)) lines.fail("field 'l2_excess_bytes': must be >= 0");
    }
    if (!v2 && !v3 && !v4) {
      const auto z = lines.integer<std::uint32_t>(f[26], "zeroed_operands");
      if (z > 2) lines.fail("field 'zeroed_operands': must be 0, 1 or 2");
      k.work.zeroed_operands = static_cast<std::uint8_t>(z);
    }
  }

  w.syncs.resize(lines.section("syncs"));
  for (SyncPoint& s : w.syncs) {
    split_tabs(lines, lines.expect(), f, 5, "syncs");
    if (f[0] == "device")
      s.kind = SyncPoint::Kind::device;
    else if (f[0] == "stream")
      s.kind = SyncPoint::Kind::stream;
    else if (f[0] == "event")
      s.kind = SyncPoint::Kind::event;
    else if (f[0] == "copy")
      s.kind = SyncPoint::Kind::copy;
    else
      lines.fail(fmt::format("field 'kind': unknown sync kind '{}'", f[0]));
    s.host_begin_ns = lines.integer<std::int64_t>(f[1], "host_begin_ns");
    s.traced_end_ns = lines.integer<std::int64_t>(f[2], "traced_end_ns");
    s.waits_until_kernel = lines.integer<std::uint32_t>(f[3], "waits_until_kernel");
    s.stream = lines.integer<std::int32_t>(f[4], "stream");
  }

  w.event_waits.resize(lines.section("event_waits"));
  for (EventWait& e : w.event_waits) {
    split_tabs(lines, lines.expect(), f, 2, "event_waits");
    e.kernel = lines.integer<std::uint32_t>(f[0], "kernel");
    e.after = lines.integer<std::uint32_t>(f[1], "after");
  }

  w.iteration_begin.resize(lines.section("iteration_begin"));
  for (std::uint32_t& b : w.iteration_begin)
    b = lines.integer<std::uint32_t>(lines.expect(), "iteration_begin");
  if (lines.expect() != "@end") lines.fail("expected '@end'");
  w.validate();
  return w;
}

Workload read_native(const std::string& path) {
  return parse_native(read_file(path), path);
}

}  // namespace dvfsim
