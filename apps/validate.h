#pragma once
// `dvfsim hw validate`: the prediction for a trace under `native` against what
// was measured on the real GPU.
#include <iosfwd>
#include <string>

namespace dvfsim {

struct MeasuredStep {
  double time_per_step_s = 0;
  double energy_per_step_j = 0;
  double mean_power_w = 0;
  int steps = 0;
};

// Reads a `*.measured.json` (steps[0]: dt_s, steps, energy_mJ; or
// time_per_step_s / energy_per_step_j); InputError naming the file and field.
MeasuredStep read_measured(const std::string& path);

struct ValidationReport {
  MeasuredStep measured;
  double predicted_time_s = 0, predicted_energy_j = 0, predicted_power_w = 0;
  double time_error_pct = 0, energy_error_pct = 0, power_error_pct = 0;
};

ValidationReport validate_trace(const std::string& trace, const std::string& measured,
                                const std::string& device);
void print_validation(std::ostream& out, const ValidationReport& r, double tolerance_pct);

}  // namespace dvfsim
