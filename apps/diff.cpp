#include "apps/diff.h"

#include <fmt/format.h>
#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <map>
#include <ostream>
#include <sstream>
#include <vector>

#include "apps/files.h"
#include "sim/csv.h"
#include "sim/error.h"

namespace dvfsim {
namespace {

struct Row {
  std::string name, cls, phase;
  double duration_ns = 0, energy_j = 0, core_mhz = 0, memory_mhz = 0;
};

struct Run {
  std::string dir, policy, device;
  double time_s = 0, energy_j = 0;
  std::vector<Row> rows;
};

double number(const std::string& text, const std::string& file, std::size_t line,
              const std::string& column) {
  if (const auto v = parse_csv_double(text)) return *v;
  throw InputError(
      fmt::format("{}:{}: column '{}': '{}' is not a number", file, line, column, text));
}

// names.csv of a run directory (name_id,name): the names by id.
std::vector<std::string> read_names(const std::string& dir) {
  const std::string path = (std::filesystem::path(dir) / "names.csv").string();
  if (!std::filesystem::is_regular_file(path))
    throw InputError(fmt::format("{}: missing (kernels.csv names kernels by name_id)", path));
  std::istringstream in(read_file(path));
  std::string line;
  std::getline(in, line);
  if (split_csv_line(line) != std::vector<std::string>{"name_id", "name"})
    throw InputError(fmt::format("{}:1: the header is not 'name_id,name'", path));
  std::vector<std::string> names;
  std::size_t n = 1;
  while (std::getline(in, line)) {
    ++n;
    const std::vector<std::string> f = split_csv_line(line);
    if (f.size() != 2 || f[0] != std::to_string(names.size()))
      throw InputError(fmt::format("{}:{}: expected name_id {} and a name", path, n, names.size()));
    names.push_back(f[1]);
  }
  return names;
}

Run read_run(const std::string& dir) {
  namespace fs = std::filesystem;
  Run run;
  run.dir = dir;
  const std::string summary = (fs::path(dir) / "summary.json").string();
  const std::string kernels = (fs::path(dir) / "kernels.csv").string();
  if (!fs::is_regular_file(summary) || !fs::is_regular_file(kernels))
    throw InputError(
        fmt::format("{}: not a run directory (needs summary.json and kernels.csv, as "
                    "`dvfsim run --out` writes)",
                    dir));
  simdjson::dom::parser parser;
  simdjson::dom::element s;
  if (parser.load(summary).get(s) != simdjson::SUCCESS)
    throw InputError(fmt::format("{}: not valid JSON", summary));
  std::string_view text;
  if (s["policy"].get(text) == simdjson::SUCCESS) run.policy = std::string(text);
  if (s["device"].get(text) == simdjson::SUCCESS) run.device = std::string(text);
  double v = 0;
  if (s["time_s"].get(v) == simdjson::SUCCESS) run.time_s = v;
  if (s["energy_j"].get(v) == simdjson::SUCCESS) run.energy_j = v;

  std::istringstream in(read_file(kernels));
  std::string line;
  if (!std::getline(in, line)) throw InputError(fmt::format("{}: empty", kernels));
  const std::vector<std::string> header = split_csv_line(line);
  auto col = [&](std::initializer_list<const char*> names) {
    for (const char* n : names) {
      const auto it = std::find(header.begin(), header.end(), n);
      if (it != header.end()) return static_cast<std::size_t>(it - header.begin());
    }
    throw InputError(fmt::format("{}:1: no column '{}'", kernels, *names.begin()));
  };
  // kernels.csv names kernels by name_id, resolved in names.csv beside it
  // (runs written before it carry the name itself in a name column).
  std::vector<std::string> names;
  const bool by_id = std::find(header.begin(), header.end(), "name_id") != header.end();
  if (by_id) names = read_names(dir);
  const std::size_t c_name = col({"name_id", "name"}), c_cls = col({"class"}),
                    c_phase = col({"phase"}), c_dur = col({"duration_ns"}),
                    c_energy = col({"energy_j"}), c_core = col({"core_mhz"}),
                    c_mem = col({"memory_mhz"});
  std::size_t n = 1;
  while (std::getline(in, line)) {
    ++n;
    if (line.empty()) continue;
    const std::vector<std::string> f = split_csv_line(line);
    if (f.size() != header.size())
      throw InputError(
          fmt::format("{}:{}: {} fields, the header has {}", kernels, n, f.size(), header.size()));
    std::string name = f[c_name];
    if (by_id) {
      const double id = number(name, kernels, n, "name_id");
      if (!(id >= 0 && id < static_cast<double>(names.size())) || id != std::floor(id))
        throw InputError(
            fmt::format("{}:{}: column 'name_id': {} is not a row of names.csv", kernels, n, name));
      name = names[static_cast<std::size_t>(id)];
    }
    run.rows.push_back(
        {std::move(name), f[c_cls], f[c_phase], number(f[c_dur], kernels, n, "duration_ns"),
         number(f[c_energy], kernels, n, "energy_j"), number(f[c_core], kernels, n, "core_mhz"),
         number(f[c_mem], kernels, n, "memory_mhz")});
  }
  return run;
}

struct Agg {
  std::int64_t count = 0;
  double time_a = 0, time_b = 0, energy_a = 0, energy_b = 0;
  double core_a = 0, core_b = 0, mem_a = 0, mem_b = 0;  // time-weighted sums
  void add(const Row& a, const Row& b) {
    ++count;
    time_a += a.duration_ns;
    time_b += b.duration_ns;
    energy_a += a.energy_j;
    energy_b += b.energy_j;
    core_a += a.core_mhz * a.duration_ns;
    core_b += b.core_mhz * b.duration_ns;
    mem_a += a.memory_mhz * a.duration_ns;
    mem_b += b.memory_mhz * b.duration_ns;
  }
};

double pct(double a, double b) {
  return a != 0 ? 100.0 * (b - a) / a : 0.0;
}
double per(double sum, double t) {
  return t > 0 ? sum / t : 0.0;
}

std::string text_row(const std::string& label, const Agg& g) {
  return fmt::format(
      "  {:<44} {:>6} {:>11.3f} {:>11.3f} {:>+8.2f}% {:>11.3f} {:>11.3f} {:>+8.2f}% "
      "{:>5.0f}/{:<5.0f} {:>5.0f}/{:<5.0f}\n",
      label, g.count, g.time_a * 1e-6, g.time_b * 1e-6, pct(g.time_a, g.time_b), g.energy_a,
      g.energy_b, pct(g.energy_a, g.energy_b), per(g.core_a, g.time_a), per(g.core_b, g.time_b),
      per(g.mem_a, g.time_a), per(g.mem_b, g.time_b));
}

std::string csv_row(const char* level, const std::string& key, const Agg& g) {
  return fmt::format(
      "{},{},{},{:.9g},{:.9g},{:.6f},{:.9g},{:.9g},{:.6f},{:.1f},{:.1f},{:.1f},{:.1f}\n", level,
      csv_field(key), g.count, g.time_a * 1e-9, g.time_b * 1e-9, pct(g.time_a, g.time_b),
      g.energy_a, g.energy_b, pct(g.energy_a, g.energy_b), per(g.core_a, g.time_a),
      per(g.core_b, g.time_b), per(g.mem_a, g.time_a), per(g.mem_b, g.time_b));
}

}  // namespace

void run_diff(const DiffOptions& o, std::ostream& out) {
  const Run a = read_run(o.a), b = read_run(o.b);
  if (a.rows.size() != b.rows.size())
    throw InputError(fmt::format("{} and {} replay different traces ({} vs {} activities)", o.a,
                                 o.b, a.rows.size(), b.rows.size()));
  Agg total;
  std::map<std::string, Agg> by_class, by_phase;
  std::map<std::string, Agg> by_kernel;  // name | class | phase
  for (std::size_t i = 0; i < a.rows.size(); ++i) {
    const Row& x = a.rows[i];
    const Row& y = b.rows[i];
    if (x.name != y.name || x.cls != y.cls || x.phase != y.phase)
      throw InputError(fmt::format("{} and {} replay different traces (activity {}: '{}' vs '{}')",
                                   o.a, o.b, i, x.name, y.name));
    total.add(x, y);
    by_class[x.cls].add(x, y);
    by_phase[x.phase].add(x, y);
    by_kernel[x.name + " | " + x.cls + " | " + x.phase].add(x, y);
  }
  std::vector<std::pair<std::string, const Agg*>> kernels;
  for (const auto& [k, g] : by_kernel) kernels.emplace_back(k, &g);
  std::sort(kernels.begin(), kernels.end(), [](const auto& x, const auto& y) {
    const double dx = std::abs(x.second->energy_b - x.second->energy_a);
    const double dy = std::abs(y.second->energy_b - y.second->energy_a);
    return dx != dy ? dx > dy : x.first < y.first;
  });

  out << fmt::format("dvfsim diff: A = {} ({} on {}), B = {} ({} on {})\n", o.a, a.policy, a.device,
                     o.b, b.policy, b.device);
  out << fmt::format(
      "  run (idle included): time {:.3f} -> {:.3f} ms ({:+.2f} %), energy {:.3f} "
      "-> {:.3f} J ({:+.2f} %)\n",
      a.time_s * 1e3, b.time_s * 1e3, pct(a.time_s, b.time_s), a.energy_j, b.energy_j,
      pct(a.energy_j, b.energy_j));
  const std::string head =
      fmt::format("  {:<44} {:>6} {:>11} {:>11} {:>9} {:>11} {:>11} {:>9} {:>11} {:>11}\n", "",
                  "count", "A ms", "B ms", "time", "A J", "B J", "energy", "core A/B", "mem A/B");
  out << "kernels, by class (GPU time of the kernels; clocks time-weighted):\n" << head;
  out << text_row("all", total);
  for (const auto& [k, g] : by_class) out << text_row(k, g);
  out << "by phase:\n" << head;
  for (const auto& [k, g] : by_phase) out << text_row(k, g);
  out << fmt::format(
             "distinct kernels (name | class | phase), the {} of {} whose energy moved most:\n",
             std::min(o.rows, kernels.size()), kernels.size())
      << head;
  for (std::size_t i = 0; i < kernels.size() && i < o.rows; ++i) {
    std::string label = kernels[i].first;
    if (label.size() > 44) label = label.substr(0, 41) + "...";
    out << text_row(label, *kernels[i].second);
  }
  if (!o.csv.empty()) {
    std::string csv =
        "level,key,count,time_a_s,time_b_s,time_change_pct,energy_a_j,energy_b_j,"
        "energy_change_pct,core_mhz_a,core_mhz_b,memory_mhz_a,memory_mhz_b\n";
    csv += csv_row("total", "all", total);
    for (const auto& [k, g] : by_class) csv += csv_row("class", k, g);
    for (const auto& [k, g] : by_phase) csv += csv_row("phase", k, g);
    for (const auto& [k, g] : kernels) csv += csv_row("kernel", k, *g);
    write_file_atomic(o.csv, csv);
    out << fmt::format("wrote {} ({} rows)\n", o.csv,
                       1 + by_class.size() + by_phase.size() + kernels.size());
  }
}

void add_diff(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand(
      "diff", "Compare two runs of one trace per kernel class, phase and kernel");
  auto o = std::make_shared<DiffOptions>();
  cmd->add_option("RUN_A", o->a, "Run directory (dvfsim run --out)")->required();
  cmd->add_option("RUN_B", o->b, "Run directory to compare with RUN_A")->required();
  cmd->add_option("--csv", o->csv, "Also write every row (all kernels) to this CSV file");
  cmd->add_option("--rows", o->rows, "Kernels shown in the text")->capture_default_str();
  cmd->callback([o, &exit_code] {
    run_diff(*o, std::cout);
    exit_code = 0;
  });
}

}  // namespace dvfsim
