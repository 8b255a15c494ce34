#include "traces/instructions.h"

#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <tuple>
#include <vector>

#include "sim/csv.h"
#include "sim/error.h"
#include "traces/capture_info.h"
#include "traces/gzip_io.h"

namespace dvfsim {
namespace {

struct Row {
  std::string base;
  std::uint64_t grid = 0, block = 0;
  std::uint32_t registers = 0;
  double instructions = 0;
};
using Key = std::tuple<std::string, std::uint64_t, std::uint64_t, std::uint32_t>;

std::vector<Row> parse_sidecar(std::string_view text, const std::string& path) {
  std::vector<Row> rows;
  std::map<std::string, std::size_t> col;
  std::size_t n_columns = 0;
  std::size_t pos = 0;
  int lineno = 0;
  bool have_header = false;
  while (pos < text.size()) {
    const std::size_t nl = text.find('\n', pos);
    const std::string_view line =
        text.substr(pos, (nl == std::string::npos ? text.size() : nl) - pos);
    pos = nl == std::string::npos ? text.size() : nl + 1;
    ++lineno;
    if (line.empty() || line == "\r" || line[0] == '#') continue;
    const auto f = split_csv_line(line);
    if (!have_header) {
      for (std::size_t i = 0; i < f.size(); ++i)
        if (!col.emplace(f[i], i).second)
          throw InputError(
              fmt::format("{}:{}: column '{}' appears twice in the header", path, lineno, f[i]));
      for (const char* c : {"kernel", "grid", "block", "registers", "instructions"})
        if (!col.count(c))
          throw InputError(
              fmt::format("{}:{}: missing column '{}' (docs/trace-format.md)", path, lineno, c));
      n_columns = f.size();
      have_header = true;
      continue;
    }
    if (f.size() != n_columns)
      throw InputError(
          fmt::format("{}:{}: {} fields, the header has {}", path, lineno, f.size(), n_columns));
    auto num = [&](const char* c) {
      const std::string& s = f[col.at(c)];
      const auto v = parse_csv_double(s);
      if (!v || *v < 0)
        throw InputError(
            fmt::format("{}:{}: column '{}': '{}' is not a number >= 0", path, lineno, c, s));
      return *v;
    };
    // A count: a whole number that fits `max` (a fraction or 1e30 would match nothing).
    auto count = [&](const char* c, double max) {
      const double v = num(c);
      if (v != std::floor(v) || v > max)
        throw InputError(fmt::format("{}:{}: column '{}': '{}' is not a whole number <= {:.0f}",
                                     path, lineno, c, f[col.at(c)], max));
      return v;
    };
    Row r;
    r.base = kernel_base_name(f[col.at("kernel")]);
    // Grid and block are thread counts (products of three dimensions).
    r.grid = static_cast<std::uint64_t>(count("grid", 0x1p63));
    r.block = static_cast<std::uint64_t>(count("block", 0x1p63));
    r.registers = static_cast<std::uint32_t>(count("registers", 4294967295.0));
    r.instructions = num("instructions");
    rows.push_back(std::move(r));
  }
  if (!have_header) throw InputError(fmt::format("{}: no header line", path));
  return rows;
}

bool runs_on_sms(const Kernel& k) {
  return k.cls != KernelClass::memcpy && k.cls != KernelClass::memset;
}

}  // namespace

std::string kernel_base_name(std::string_view s) {
  std::string n(s);
  constexpr std::string_view kAnon = "(anonymous namespace)::";  // Kineto's spelling
  for (std::size_t at; (at = n.find(kAnon)) != std::string::npos;) n.erase(at, kAnon.size());
  if (n.rfind("void ", 0) == 0) n.erase(0, 5);
  // The name ends at its template arguments or parameters. Nsight Compute
  // spells an anonymous namespace "<unnamed>::" (2025.3: "unnamed>::"): a '<'
  // at the start of a path component opens that namespace, not a template.
  constexpr std::string_view kUnnamed = "<unnamed>::";
  std::size_t end = 0;
  while (end < n.size() && n[end] != '(') {
    if (n[end] == '<') {
      if ((end == 0 || n[end - 1] == ':') && n.compare(end, kUnnamed.size(), kUnnamed) == 0) {
        end += kUnnamed.size();
        continue;
      }
      break;
    }
    ++end;
  }
  n.resize(end);
  const std::size_t colons = n.rfind("::");
  if (colons != std::string::npos) n.erase(0, colons + 2);
  return n;
}

void annotate_instructions_from(Workload& w, const std::string& ncu_csv_path) {
  if (ncu_csv_path.empty()) {
    annotate_instructions_from_text(w, std::nullopt, "");
    return;
  }
  annotate_instructions_from_text(w, read_file(ncu_csv_path, 0), ncu_csv_path);
}

void annotate_instructions_from_text(Workload& w, std::optional<std::string_view> csv,
                                     const std::string& ncu_csv_path) {
  // Elementwise kernels whose work comes from shapes take their family's
  // intensity from the name (estimated_instructions with the name, computed
  // once per distinct name: it reads the whole name); those intensities are per
  // byte of the shapes' traffic. The duration fallback's bytes are a class
  // median (0.5 of the DRAM peak over the kernel), not the kernel's: the
  // families move 0.24-0.55 of the peak with L2 flushed (Nsight Compute,
  // prefill and BERT steps), the 16-bit strided ones 0.24-0.28. Fallback
  // kernels keep the class intensity, the pairing the fallback was measured
  // with (docs/validation.md, "Instruction estimates of elementwise kernels").
  // Norm kernels with shapes likewise take their family's intensity per byte
  // (norm_instructions_per_byte: batch norm's statistics and backward
  // reduction).
  // Kernels whose count a rule on their operator's shapes set (the work
  // annotation: depthwise convolutions) keep it unless the sidecar has a row.
  std::vector<double> per_byte(w.names.size(), -1.0);
  for (Kernel& k : w.kernels) {
    if (k.work.instructions_source == InstructionSource::shapes) continue;
    k.work.instructions_source = InstructionSource::estimated;
    if ((k.cls == KernelClass::elementwise || k.cls == KernelClass::norm) &&
        k.work.source == WorkSource::shapes) {
      double& r = per_byte[k.name_id];
      // Instructions per byte (the estimate is linear in the bytes).
      if (r < 0) r = estimated_instructions(k.cls, 0.0, 1.0, MathPipe::simt, w.name(k));
      k.work.instructions = r * k.work.dram_bytes;
      continue;
    }
    // Convolutions pass their name: cuDNN's SIMT convolutions have a rate of
    // their own; the tensor-core ones add their operand re-reads (only they
    // carry L2 traffic beyond a GEMM's in the conv class).
    k.work.instructions =
        estimated_instructions(k.cls, k.work.flops, k.work.dram_bytes, math_pipe(k.cls, w.name(k)),
                               k.cls == KernelClass::conv ? w.name(k) : std::string_view{});
    if (k.cls == KernelClass::conv)
      k.work.instructions += kConvInstructionsPerL2ExcessByte * k.work.l2_excess_bytes;
  }
  w.capture.instructions_source = "estimated per class (no .ncu.csv sidecar)";
  if (!csv) return;
  const std::vector<Row> rows = parse_sidecar(*csv, ncu_csv_path);

  // The sidecar holds the SM kernels of one iteration in launch order. Each
  // iteration of the trace takes them kernel by kernel: the next unused row
  // with the same name, grid, block and registers. Reordered launches still
  // match; kernels without a row keep the estimate.
  std::map<Key, std::vector<std::size_t>> by_key;
  for (std::size_t i = 0; i < rows.size(); ++i)
    by_key[{rows[i].base, rows[i].grid, rows[i].block, rows[i].registers}].push_back(i);
  std::map<std::uint32_t, std::string> base_of;  // name_id -> base name
  std::size_t matched = 0, total = 0;
  std::int32_t iteration = -1;
  std::map<Key, std::size_t> used;
  for (Kernel& k : w.kernels) {
    if (!runs_on_sms(k)) continue;
    if (k.iteration != iteration) {
      iteration = k.iteration;
      used.clear();
    }
    ++total;
    auto [it, fresh] = base_of.try_emplace(k.name_id);
    if (fresh) it->second = kernel_base_name(w.names[k.name_id]);
    const auto& l = k.launch;
    const Key key{it->second, std::uint64_t{l.grid[0]} * l.grid[1] * l.grid[2],
                  std::uint64_t{l.block[0]} * l.block[1] * l.block[2], l.registers_per_thread};
    const auto found = by_key.find(key);
    if (found == by_key.end()) continue;
    std::size_t& n = used[key];
    if (n >= found->second.size()) continue;
    k.work.instructions = rows[found->second[n++]].instructions;
    k.work.instructions_source = InstructionSource::ncu;
    ++matched;
  }
  w.capture.instructions_source = fmt::format(
      "{}: measured for {} of {} SM kernels ({} rows per iteration), the rest estimated per "
      "class",
      std::filesystem::path(ncu_csv_path).filename().string(), matched, total, rows.size());
}

void annotate_instructions(Workload& w, const std::string& trace_path) {
  std::string sidecar = trace_stem(trace_path) + ".ncu.csv";
  if (!std::filesystem::exists(sidecar)) sidecar += ".gz";
  annotate_instructions_from(w, std::filesystem::exists(sidecar) ? sidecar : "");
}

}  // namespace dvfsim
