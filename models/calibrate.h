#pragma once
// `dvfsim calibrate`: fits the `cmos` power coefficients of a device by least
// squares (Eigen) from a measurement CSV, reports the fit error per row and
// overall, and writes the device YAML with the fitted numbers and their sources.
//
// CSV columns (docs/calibration.md): name, class, core_mhz, core_mhz_p10,
// core_mhz_p90, memory_mhz, window_s, busy_s, energy_j, mean_power_w, flops,
// dram_bytes, launches, reasons_mask, source, and optionally instructions
// and sm_share. One row per energy window: the mean clocks seen, the summed
// kernel time (busy_s) inside the window, the FLOPs, DRAM bytes and warp
// instructions done in it. Without an instructions column (or with a negative
// value) the per-class estimate of sim/workload.h stands in. The busy term
// counts as the engine does (sim/models.h, KernelCost::sm_share): busy_s less
// each kernel launch's clock-independent part (the latency model's fixed_ns;
// none for copies), times sm_share (the share of the SMs the kernels' grids
// occupy; 1 when absent).
#include <string>
#include <vector>

#include "models/cmos_power.h"
#include "sim/device.h"

namespace dvfsim {

struct CalibrationRow {
  std::string name;
  std::string cls;
  double core_mhz = 0, memory_mhz = 0;
  double window_s = 0, busy_s = 0;
  double energy_j = 0, mean_power_w = 0;
  double flops = 0, dram_bytes = 0;
  double instructions = -1;  // warp instructions in the window; < 0: not measured
  double launches = 0;       // kernel launches in the window
  double sm_share = 1;       // share of the SMs the kernels' grids occupy
  std::string source;
  int line = 0;
};

std::vector<CalibrationRow> read_calibration_csv(const std::string& path);

struct CalibrationFit {
  CmosParams power;  // fitted
  // Whether a `gemm_simt` row identified simt_matrix_w_per_v2ghz (otherwise it
  // keeps the device file's value and the file's line is not rewritten).
  bool simt_matrix_fitted = false;
  struct RowError {
    std::string name;
    double measured_w = 0, predicted_w = 0;
    double error_pct = 0;
    double tensor_w = 0;  // the prediction's tensor-core term
    bool used = false;    // false: reported only (e.g. deep idle)
  };
  std::vector<RowError> rows;
  double rms_error_pct = 0;
  double max_abs_error_pct = 0;
  double idle_scale = 1.0;
  // Set by fit_voltage_and_power: the V/F curve the fit chose.
  std::vector<VoltagePoint> voltage_curve;
  std::string voltage_note;
};

// Average board power the `cmos` model predicts for a measurement row.
double predict_row_power_w(const Device& d, const CmosParams& p, const CalibrationRow& r);

CalibrationFit fit_power(const Device& d, const std::vector<CalibrationRow>& rows);

// The rows against the device file's coefficients as they are: nothing is
// fitted (`dvfsim calibrate --predict-only`).
CalibrationFit predict_power(const Device& d, const std::vector<CalibrationRow>& rows);

// For GPUs that report no voltage: also chooses the V/F curve's shape, a flat
// floor v0 up to a knee clock, then linear to the curve's top point (kept).
// Grid: v0 from 0.60 to 0.80 V in 0.01 V steps, knee from the lowest clock
// in 50 MHz steps up to 400 MHz below the top. Picks the smallest maximum row
// error, then the smallest RMS error.
CalibrationFit fit_voltage_and_power(const Device& d, const std::vector<CalibrationRow>& rows);

// Rewrites the `power:` numbers of the device YAML text with the fitted values
// and a `calibrated:` source naming the CSV, and the `voltage:` points when the
// fit chose them; everything else is kept.
std::string rewrite_device_yaml(const std::string& yaml_text, const std::string& yaml_path,
                                const CalibrationFit& fit, const std::string& csv_path);

}  // namespace dvfsim
