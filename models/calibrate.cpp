#include "models/calibrate.h"

#include <fmt/format.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <sstream>
#include <utility>
#include <vector>

#include "models/roofline_overlap.h"
#include "sim/csv.h"
#include "sim/error.h"
#include "sim/files.h"
#include "sim/workload.h"

namespace dvfsim {
namespace {

// `gemm_fp16` rows are GEMMs on fp16 operands (the tensor term times
// fp16_tensor_power); `mixed` rows are duty-cycled GEMMs: their FLOPs run on the
// tensor cores; `gemm_fp8` and `mixed_fp8` rows the same on FP8 operands (a
// FLOP costs half a 16-bit one: MathPipe::tensor_fp8).
bool is_fp8_class(const std::string& cls) {
  return cls == "gemm_fp8" || cls == "mixed_fp8";
}
bool is_tensor_class(const std::string& cls) {
  return cls == "gemm" || cls == "gemm_fp16" || cls == "conv" || cls == "attention" ||
         cls == "mixed" || is_fp8_class(cls);
}

// `gemm_simt` rows are FP32 matrix products on the SIMT pipes (no tensor cores).
bool is_simt_matrix_class(const std::string& cls) {
  return cls == "gemm_simt";
}

// Feature terms of a row at its clocks.
struct Terms {
  double v, v2f, fm_ghz, busy_frac, u_compute, u_simt, u_memory, u_simt_matrix;
  double u_compute_fp16;  // the part of u_compute on fp16 operands (a `gemm_fp16` row)
  double u_compute_fp8;   // the part on FP8 operands (`gemm_fp8`, `mixed_fp8`)
};

Terms terms(const Device& d, const RooflineParams& lat, const CalibrationRow& r) {
  Terms t{};
  const auto fc = static_cast<std::int32_t>(std::lround(r.core_mhz));
  t.v = d.volts(fc);
  t.v2f = t.v * t.v * r.core_mhz * 1e-3;
  t.fm_ghz = r.memory_mhz * 1e-3;
  // As the engine counts it: no busy power in a kernel's launch and drain (the
  // latency model's fixed_ns per launch; copies and memsets have none), only on
  // the SMs its grid occupies.
  const auto cls_of_row = parse_kernel_class(r.cls);
  const bool grid = !cls_of_row || RooflineParams::has_grid(*cls_of_row);
  const double drain_s = grid ? r.launches * lat.fixed_ns * 1e-9 : 0.0;
  t.busy_frac =
      r.window_s > 0 ? r.sm_share * std::clamp((r.busy_s - drain_s) / r.window_s, 0.0, 1.0) : 0.0;
  const bool tensor = is_tensor_class(r.cls);
  const double peak = (tensor ? d.tensor_flops_per_clock_per_sm : d.fp32_flops_per_clock_per_sm) *
                      d.sm_count * r.core_mhz * 1e6;
  const double bw = d.dram_bandwidth_gbs * 1e9 * r.memory_mhz / d.dram_bandwidth_memory_mhz;
  const bool fp8 = is_fp8_class(r.cls);
  const double flops = r.flops * (fp8 ? tensor_rate_cost(MathPipe::tensor_fp8) : 1.0);
  const double u = r.window_s > 0 && peak > 0 ? std::min(1.0, flops / (r.window_s * peak)) : 0.0;
  t.u_compute = tensor ? u : 0.0;
  t.u_compute_fp16 = r.cls == "gemm_fp16" ? u : 0.0;
  t.u_compute_fp8 = fp8 ? u : 0.0;
  t.u_simt_matrix = is_simt_matrix_class(r.cls) ? u : 0.0;
  double inst = r.instructions;
  if (inst < 0) {
    const bool simt_matrix = is_simt_matrix_class(r.cls);
    const auto cls = r.cls == "mixed" || r.cls == "gemm_fp16" || simt_matrix || fp8
                         ? std::optional<KernelClass>(KernelClass::gemm)
                         : parse_kernel_class(r.cls);
    const MathPipe pipe =
        simt_matrix ? MathPipe::simt : (fp8 ? MathPipe::tensor_fp8 : MathPipe::tensor);
    inst = cls ? estimated_instructions(*cls, r.flops, r.dram_bytes, pipe) : 0.0;
  }
  const double issue = d.issue_per_s(static_cast<std::int32_t>(std::lround(r.core_mhz)));
  t.u_simt = r.window_s > 0 && issue > 0 ? std::min(1.0, inst / (r.window_s * issue)) : 0.0;
  t.u_memory = r.window_s > 0 && bw > 0 ? std::min(1.0, r.dram_bytes / (r.window_s * bw)) : 0.0;
  return t;
}

// Tensor utilisation in bf16 terms: fp16 operands count fp16_tensor_power times,
// FP8 ones fp8_tensor_power times (the file's values; calibrate does not fit
// them, docs/calibration.md "Operand data" and "FP8 GEMMs").
double tensor_utilisation(const CmosParams& p, const Terms& t) {
  return t.u_compute + (p.fp16_tensor_power - 1.0) * t.u_compute_fp16 +
         (p.fp8_tensor_power - 1.0) * t.u_compute_fp8;
}

double idle_w(const CmosParams& p, const Terms& t) {
  return p.const_w + p.leak_w_per_v * t.v + p.clock_w_per_v2ghz * t.v2f +
         p.memory_idle_w_per_ghz * t.fm_ghz;
}

double tensor_w(const CmosParams& p, const Terms& t) {
  return t.v2f * tensor_utilisation(p, t) * p.compute_w_per_v2ghz;
}

double row_power_w(const CmosParams& p, const Terms& t) {
  return idle_w(p, t) + tensor_w(p, t) +
         t.v2f * (t.busy_frac * p.busy_w_per_v2ghz + t.u_simt * p.simt_w_per_v2ghz +
                  t.u_simt_matrix * p.simt_matrix_w_per_v2ghz) +
         t.u_memory * p.memory_active_w_per_ghz * t.fm_ghz;
}

bool is_deep_idle(const CalibrationRow& r) {
  return r.cls == "deep_idle";
}
bool is_idle(const CalibrationRow& r) {
  return r.cls == "idle" && r.busy_s <= 0;
}
// Duty-cycled rows: the firmware moves the clock between their busy and idle
// halves, so one mean clock misdescribes them; they are predicted, not fitted.
bool is_mixed(const CalibrationRow& r) {
  return r.cls == "mixed" || r.cls == "mixed_fp8";
}

}  // namespace

std::vector<CalibrationRow> read_calibration_csv(const std::string& path) {
  require_regular_file(path);
  std::ifstream in(path);
  if (!in) throw InputError(fmt::format("{}: cannot open measurement CSV", path));
  std::string line;
  if (!std::getline(in, line)) throw InputError(fmt::format("{}: empty file", path));
  const auto header = split_csv_line(line);
  std::map<std::string, std::size_t> col;
  for (std::size_t i = 0; i < header.size(); ++i) col[header[i]] = i;
  const char* required[] = {"name",   "class",        "core_mhz", "memory_mhz", "window_s",
                            "busy_s", "mean_power_w", "flops",    "dram_bytes"};
  for (const char* r : required)
    if (!col.count(r))
      throw InputError(fmt::format("{}:1: missing column '{}' (see docs/calibration.md)", path, r));
  std::vector<CalibrationRow> rows;
  int lineno = 1;
  while (std::getline(in, line)) {
    ++lineno;
    if (line.empty() || line[0] == '#') continue;
    const auto f = split_csv_line(line);
    if (f.size() != header.size())
      throw InputError(fmt::format("{}:{}: {} fields, the header has {}", path, lineno, f.size(),
                                   header.size()));
    auto num = [&](const char* c) {
      const std::string& s = f[col.at(c)];
      const auto v = parse_csv_double(s);
      if (!v)
        throw InputError(
            fmt::format("{}:{}: column '{}': '{}' is not a number", path, lineno, c, s));
      return *v;
    };
    CalibrationRow r;
    r.line = lineno;
    r.name = f[col.at("name")];
    r.cls = f[col.at("class")];
    r.core_mhz = num("core_mhz");
    r.memory_mhz = num("memory_mhz");
    r.window_s = num("window_s");
    r.busy_s = num("busy_s");
    r.mean_power_w = num("mean_power_w");
    r.flops = num("flops");
    r.dram_bytes = num("dram_bytes");
    if (col.count("energy_j")) r.energy_j = num("energy_j");
    if (col.count("instructions") && !f[col.at("instructions")].empty())
      r.instructions = num("instructions");
    if (col.count("launches") && !f[col.at("launches")].empty()) r.launches = num("launches");
    if (col.count("sm_share") && !f[col.at("sm_share")].empty()) {
      r.sm_share = num("sm_share");
      if (r.sm_share <= 0 || r.sm_share > 1)
        throw InputError(fmt::format("{}:{}: sm_share must be in (0, 1]", path, lineno));
    }
    if (col.count("source")) r.source = f[col.at("source")];
    if (r.window_s <= 0) throw InputError(fmt::format("{}:{}: window_s must be > 0", path, lineno));
    if (r.core_mhz <= 0 || r.memory_mhz <= 0)
      throw InputError(fmt::format("{}:{}: clocks must be > 0 MHz", path, lineno));
    if (r.mean_power_w <= 0)
      throw InputError(fmt::format("{}:{}: mean_power_w must be > 0", path, lineno));
    rows.push_back(r);
  }
  if (rows.empty()) throw InputError(fmt::format("{}: no measurement rows", path));
  return rows;
}

double predict_row_power_w(const Device& d, const CmosParams& p, const CalibrationRow& r) {
  return row_power_w(p, terms(d, RooflineParams::of(d), r));
}

namespace {

// Each row's prediction with fit.power, its error and the RMS and largest
// error over the fitted rows (deep idle is the model's value, duty-cycled rows
// are predicted only).
void score_rows(const Device& d, const std::vector<CalibrationRow>& rows, CalibrationFit& fit) {
  const CmosParams& p = fit.power;
  const RooflineParams lat = RooflineParams::of(d);
  double sq = 0;
  int n = 0;
  for (const auto& r : rows) {
    CalibrationFit::RowError e;
    e.name = r.name;
    e.measured_w = r.mean_power_w;
    e.used = !is_deep_idle(r) && !is_mixed(r);
    if (is_deep_idle(r)) {
      e.predicted_w = p.deep_idle_w;
    } else {
      const Terms t = terms(d, lat, r);
      e.predicted_w = row_power_w(p, t);
      e.tensor_w = tensor_w(p, t);
    }
    e.error_pct = 100.0 * (e.predicted_w - e.measured_w) / e.measured_w;
    if (e.used) {
      sq += e.error_pct * e.error_pct;
      ++n;
      fit.max_abs_error_pct = std::max(fit.max_abs_error_pct, std::abs(e.error_pct));
    }
    fit.rows.push_back(e);
  }
  fit.rms_error_pct = n > 0 ? std::sqrt(sq / n) : 0.0;
}

}  // namespace

CalibrationFit fit_power(const Device& d, const std::vector<CalibrationRow>& rows) {
  const RooflineParams lat = RooflineParams::of(d);
  CalibrationFit fit;
  fit.power = CmosParams::of(d);
  CmosParams& p = fit.power;

  // 1. The idle split keeps its shape; one scale makes it match the measured
  //    context-idle power.
  double num = 0, den = 0;
  for (const auto& r : rows) {
    if (!is_idle(r)) continue;
    const double m = idle_w(p, terms(d, lat, r));
    num += m * r.mean_power_w;
    den += m * m;
  }
  if (den > 0) {
    fit.idle_scale = num / den;
    p.const_w *= fit.idle_scale;
    p.leak_w_per_v *= fit.idle_scale;
    p.clock_w_per_v2ghz *= fit.idle_scale;
    p.memory_idle_w_per_ghz *= fit.idle_scale;
  }
  for (const auto& r : rows)
    if (is_deep_idle(r)) p.deep_idle_w = r.mean_power_w;

  // 2. Active rows: P - P_idle = busy·b·V²f + compute·u_c·V²f + simt·u_s·V²f
  //    + simt_matrix·u_sm·V²f + mem_active·u_m·fm, non-negative least squares by
  //    an active set over the five columns. A column no row exercises (no
  //    `gemm_simt` row) is not fitted: its coefficient keeps the file's value.
  std::vector<const CalibrationRow*> active;
  for (const auto& r : rows)
    if (!is_idle(r) && !is_deep_idle(r) && !is_mixed(r) && r.busy_s > 0) active.push_back(&r);
  constexpr int kCols = 5;  // busy, tensor compute, SIMT issue, memory, SIMT matrix
  if (active.size() >= kCols) {
    Eigen::MatrixXd a(static_cast<Eigen::Index>(active.size()), kCols);
    Eigen::VectorXd y(static_cast<Eigen::Index>(active.size()));
    for (std::size_t i = 0; i < active.size(); ++i) {
      const Terms t = terms(d, lat, *active[i]);
      const auto row = static_cast<Eigen::Index>(i);
      a(row, 0) = t.busy_frac * t.v2f;
      a(row, 1) = tensor_utilisation(p, t) * t.v2f;
      a(row, 2) = t.u_simt * t.v2f;
      a(row, 3) = t.u_memory * t.fm_ghz;
      a(row, 4) = t.u_simt_matrix * t.v2f;
      y(row) = active[i]->mean_power_w - idle_w(p, t);
      // Relative errors matter: weight each row by 1 / measured power.
      a.row(row) /= active[i]->mean_power_w;
      y(row) /= active[i]->mean_power_w;
    }
    // Non-negative least squares by a small active set: drop a column whose
    // coefficient comes out negative and solve again.
    std::vector<bool> free_col(kCols, true);
    for (int c = 0; c < kCols; ++c)
      if (a.col(c).cwiseAbs().maxCoeff() <= 0) free_col[static_cast<std::size_t>(c)] = false;
    fit.simt_matrix_fitted = free_col[4];
    Eigen::VectorXd x = Eigen::VectorXd::Zero(kCols);
    for (int round = 0; round < kCols; ++round) {
      std::vector<int> cols;
      for (int c = 0; c < kCols; ++c)
        if (free_col[static_cast<std::size_t>(c)]) cols.push_back(c);
      Eigen::MatrixXd sub(a.rows(), static_cast<Eigen::Index>(cols.size()));
      for (std::size_t j = 0; j < cols.size(); ++j)
        sub.col(static_cast<Eigen::Index>(j)) = a.col(cols[j]);
      const Eigen::VectorXd s = sub.colPivHouseholderQr().solve(y);
      x.setZero();
      bool negative = false;
      for (std::size_t j = 0; j < cols.size(); ++j) {
        x(cols[j]) = s(static_cast<Eigen::Index>(j));
        if (x(cols[j]) < 0) {
          free_col[static_cast<std::size_t>(cols[j])] = false;
          negative = true;
        }
      }
      if (!negative) break;
      x = x.cwiseMax(0.0);
    }
    p.busy_w_per_v2ghz = x(0);
    p.compute_w_per_v2ghz = x(1);
    p.simt_w_per_v2ghz = x(2);
    p.memory_active_w_per_ghz = x(3);
    if (fit.simt_matrix_fitted) p.simt_matrix_w_per_v2ghz = x(4);
  }

  score_rows(d, rows, fit);
  return fit;
}

CalibrationFit predict_power(const Device& d, const std::vector<CalibrationRow>& rows) {
  CalibrationFit fit;
  fit.power = CmosParams::of(d);
  score_rows(d, rows, fit);
  return fit;
}

CalibrationFit fit_voltage_and_power(const Device& d, const std::vector<CalibrationRow>& rows) {
  if (d.voltage_curve.empty() || d.core_clocks_mhz.empty())
    throw InputError(fmt::format("{}: no voltage curve to start from", d.source_path));
  const VoltagePoint top = d.voltage_curve.back();
  const std::int32_t lo = d.core_clocks_mhz.front();
  CalibrationFit best;  // empty voltage_curve: nothing tried yet
  Device trial = d;
  for (int mv = 600; mv <= 800; mv += 10) {
    const double v0 = mv * 1e-3;
    if (v0 > top.volts) break;
    for (std::int32_t knee = lo; knee <= top.core_mhz - 400; knee += 50) {
      trial.voltage_curve = {{lo, v0}};
      if (knee > lo) trial.voltage_curve.push_back({knee, v0});
      trial.voltage_curve.push_back(top);
      CalibrationFit f = fit_power(trial, rows);
      const bool better = best.voltage_curve.empty() ||
                          f.max_abs_error_pct < best.max_abs_error_pct - 1e-9 ||
                          (std::abs(f.max_abs_error_pct - best.max_abs_error_pct) <= 1e-9 &&
                           f.rms_error_pct < best.rms_error_pct);
      if (better) {
        best = std::move(f);
        best.voltage_curve = trial.voltage_curve;
      }
    }
  }
  if (best.voltage_curve.empty())
    throw InputError(fmt::format(
        "{}: --fit-voltage needs a top voltage >= 0.60 V and a top clock at least 400 MHz above "
        "the lowest (voltage.points ends at {} MHz, {:.2f} V)",
        d.source_path, top.core_mhz, top.volts));
  best.voltage_note = fmt::format(
      "flat {:.2f} V to {} MHz, then linear to {:.2f} V at {} MHz",
      best.voltage_curve.front().volts,
      best.voltage_curve.size() > 2 ? best.voltage_curve[1].core_mhz : lo, top.volts, top.core_mhz);
  return best;
}

std::string rewrite_device_yaml(const std::string& yaml_text, const std::string& yaml_path,
                                const CalibrationFit& fit, const std::string& csv_path) {
  const CmosParams& p = fit.power;
  const std::pair<const char*, double> values[] = {
      {"deep_idle_w", p.deep_idle_w},
      {"const_w", p.const_w},
      {"leak_w_per_v", p.leak_w_per_v},
      {"clock_w_per_v2ghz", p.clock_w_per_v2ghz},
      {"busy_w_per_v2ghz", p.busy_w_per_v2ghz},
      {"compute_w_per_v2ghz", p.compute_w_per_v2ghz},
      {"simt_w_per_v2ghz", p.simt_w_per_v2ghz},
      {"memory_active_w_per_ghz", p.memory_active_w_per_ghz},
      {"memory_idle_w_per_ghz", p.memory_idle_w_per_ghz},
  };
  std::vector<std::pair<const char*, double>> keys(std::begin(values), std::end(values));
  if (fit.simt_matrix_fitted)
    keys.emplace_back("simt_matrix_w_per_v2ghz", p.simt_matrix_w_per_v2ghz);
  std::string out = yaml_text;
  for (const auto& [key, value] : keys) {
    // One flow mapping on one indented line, as the shipped files write them.
    const std::string needle = fmt::format("{}:", key);
    std::size_t at = 0, open = std::string::npos, close = std::string::npos;
    while ((at = out.find(needle, at)) != std::string::npos) {
      const std::size_t line_start = out.rfind('\n', at) + 1;
      const bool indented = at > line_start && out.find_first_not_of(" \t", line_start) == at;
      const std::size_t line_end = std::min(out.find('\n', at), out.size());
      open = out.find('{', at);
      close = out.rfind('}', line_end);
      if (indented && open < line_end && close != std::string::npos && close > open) break;
      at += needle.size();
      open = close = std::string::npos;
    }
    if (open == std::string::npos)
      throw InputError(fmt::format(
          "{}: field 'power.{}': expected `{}: {{value: ..., source: ...}}` on one line", yaml_path,
          key, key));
    const std::string repl = fmt::format(
        "{{value: {:.6g}, source: \"calibrated: {} (dvfsim calibrate: {} rows, RMS error {:.2f} %, "
        "max {:.2f} %)\"}}",
        value, csv_path, fit.rows.size(), fit.rms_error_pct, fit.max_abs_error_pct);
    out.replace(open, close - open + 1, repl);
  }
  if (!fit.voltage_curve.empty()) {
    // The `voltage:` block's `points:` and `source:` lines.
    const std::size_t block = out.find("\nvoltage:");
    const std::size_t pts = block == std::string::npos ? block : out.find("\n  points:", block);
    const std::size_t src = pts == std::string::npos ? pts : out.find("\n  source:", pts);
    if (src == std::string::npos)
      throw InputError(fmt::format(
          "{}: field 'voltage': expected `points:` then `source:` lines to rewrite", yaml_path));
    std::string points = "  points: [";
    for (std::size_t i = 0; i < fit.voltage_curve.size(); ++i)
      points += fmt::format("{}[{}, {:.2f}]", i ? ", " : "", fit.voltage_curve[i].core_mhz,
                            fit.voltage_curve[i].volts);
    points += "]";
    const std::string source = fmt::format(
        "  source: \"calibrated: shape chosen by dvfsim calibrate --fit-voltage against {} ({}; "
        "grid over floor voltage and knee, smallest max row error {:.2f} %); the top point is "
        "kept from the file it started from\"",
        csv_path, fit.voltage_note, fit.max_abs_error_pct);
    const std::size_t src_end = std::min(out.find('\n', src + 1), out.size());
    out.replace(src + 1, src_end - src - 1, source);
    const std::size_t pts_end = std::min(out.find('\n', pts + 1), out.size());
    out.replace(pts + 1, pts_end - pts - 1, points);
  }
  return out;
}

}  // namespace dvfsim
