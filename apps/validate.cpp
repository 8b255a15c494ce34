#include "apps/validate.h"

#include <fmt/format.h>
#include <simdjson.h>

#include <cmath>
#include <numeric>
#include <ostream>

#include "apps/runner.h"
#include "sim/error.h"

namespace dvfsim {

MeasuredStep read_measured(const std::string& path) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (auto err = parser.load(path).get(doc); err)
    throw InputError(
        fmt::format("{}: cannot read measurement JSON: {}", path, simdjson::error_message(err)));
  MeasuredStep m;
  double t = 0, e = 0;
  if (doc["time_per_step_s"].get(t) == simdjson::SUCCESS &&
      doc["energy_per_step_j"].get(e) == simdjson::SUCCESS) {
    m.time_per_step_s = t;
    m.energy_per_step_j = e;
    int64_t n = 0;
    if (doc["steps"].is_array() && doc["steps"].at(0)["steps"].get(n) == simdjson::SUCCESS)
      m.steps = static_cast<int>(n);
  } else {
    simdjson::dom::element s0;
    if (doc["steps"].at(0).get(s0) != simdjson::SUCCESS)
      throw InputError(fmt::format(
          "{}: field 'steps[0]' (or time_per_step_s and energy_per_step_j) missing", path));
    double dt = 0, mj = 0;
    int64_t n = 0;
    if (s0["dt_s"].get(dt) != simdjson::SUCCESS)
      throw InputError(fmt::format("{}: field 'steps[0].dt_s' missing or not a number", path));
    if (s0["steps"].get(n) != simdjson::SUCCESS || n <= 0)
      throw InputError(
          fmt::format("{}: field 'steps[0].steps' missing or not a positive integer", path));
    int64_t mj_int = 0;
    if (s0["energy_mJ"].get(mj) != simdjson::SUCCESS) {
      if (s0["energy_mJ"].get(mj_int) != simdjson::SUCCESS)
        throw InputError(
            fmt::format("{}: field 'steps[0].energy_mJ' missing or not a number", path));
      mj = static_cast<double>(mj_int);
    }
    m.steps = static_cast<int>(n);
    m.time_per_step_s = dt / static_cast<double>(n);
    m.energy_per_step_j = mj * 1e-3 / static_cast<double>(n);
  }
  if (m.time_per_step_s <= 0 || m.energy_per_step_j <= 0)
    throw InputError(fmt::format("{}: time and energy per step must be > 0", path));
  m.mean_power_w = m.energy_per_step_j / m.time_per_step_s;
  return m;
}

ValidationReport validate_trace(const std::string& trace, const std::string& measured,
                                const std::string& device) {
  ValidationReport r;
  r.measured = read_measured(measured);
  RunSpec spec;
  spec.trace_path = trace;
  spec.device = device;
  spec.policy = "native";
  spec.baseline = "none";
  spec.record_timeline = false;
  const Simulation sim = simulate(spec);
  const auto& it = sim.result.iteration_time_ns;
  const auto& ie = sim.result.iteration_energy_j;
  r.predicted_time_s = static_cast<double>(std::accumulate(it.begin(), it.end(), std::int64_t{0})) *
                       1e-9 / static_cast<double>(it.size());
  r.predicted_energy_j =
      std::accumulate(ie.begin(), ie.end(), 0.0) / static_cast<double>(ie.size());
  r.predicted_power_w = r.predicted_energy_j / r.predicted_time_s;
  auto err = [](double p, double m) { return 100.0 * (p - m) / m; };
  r.time_error_pct = err(r.predicted_time_s, r.measured.time_per_step_s);
  r.energy_error_pct = err(r.predicted_energy_j, r.measured.energy_per_step_j);
  r.power_error_pct = err(r.predicted_power_w, r.measured.mean_power_w);
  return r;
}

void print_validation(std::ostream& out, const ValidationReport& r, double tolerance_pct) {
  out << fmt::format("{:<22} {:>12} {:>12} {:>9}\n", "per iteration", "predicted", "measured",
                     "error");
  out << fmt::format("{:<22} {:>12.2f} {:>12.2f} {:>+8.2f}%\n", "time (ms)",
                     r.predicted_time_s * 1e3, r.measured.time_per_step_s * 1e3, r.time_error_pct);
  out << fmt::format("{:<22} {:>12.2f} {:>12.2f} {:>+8.2f}%\n", "energy (J)", r.predicted_energy_j,
                     r.measured.energy_per_step_j, r.energy_error_pct);
  out << fmt::format("{:<22} {:>12.1f} {:>12.1f} {:>+8.2f}%\n", "mean power (W)",
                     r.predicted_power_w, r.measured.mean_power_w, r.power_error_pct);
  out << fmt::format("tolerance {:.1f} % on energy: {}\n", tolerance_pct,
                     std::abs(r.energy_error_pct) <= tolerance_pct ? "PASS" : "FAIL");
}

}  // namespace dvfsim
