#pragma once
// `dvfsim hw validate`: the prediction for a trace (under `native`, or the
// policy and settings the measured run ran under) against what was measured
// on the real GPU.
#include <cstdint>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>

#include "traces/host_overhead.h"

namespace dvfsim {

struct MeasuredStep {
  double time_per_step_s = 0;
  double energy_per_step_j = 0;
  double mean_power_w = 0;
  int steps = 0;
  // capture.py's paired host times (`host_step_s_mean` of the unprofiled
  // window, `profile.host_step_s` of the profiled steps): the profiler's host
  // stretch of this very capture, profiled over unprofiled; 0 when the file
  // has no such pair.
  double paired_host_factor = 0;
  // capture.py's `board` (since 2026-12-04): the GPU's NVML UUID and serial,
  // empty when the file has none. Boards of one model differ by several per
  // cent in power (docs/validation.md, "Operators in isolation").
  std::string board_uuid, board_serial;
  // capture.py's `step_result` (since 2026-12-05): whether what the
  // workload's step() returned (its loss) was finite after the energy window
  // and after the profiled steps. False when either was NaN or inf: the run
  // diverged, and such data draw far less power than the power model's
  // random-like data (docs/validation.md, "Held-out workloads, third set");
  // nullopt when the file does not say.
  std::optional<bool> step_result_finite;
  // How far the measured window's parts (capture.py's `sub_windows`: its two
  // halves) differ per step, largest minus smallest over their mean, in %;
  // nullopt when the file has fewer than two parts. An error smaller than
  // this is inside the measurement's own spread.
  std::optional<double> parts_time_spread_pct, parts_energy_spread_pct;
  // capture.py's `clock_event_reasons_mask` (NVML's clock-event reasons seen
  // during the window; -1 when absent) and `mean_sm_mhz` (0 when absent).
  // Bit 0x2, AppClocks: the clocks were held by an application-clock or
  // locked-clock setting, which the native prediction does not know.
  std::int64_t clock_event_reasons_mask = -1;
  double mean_sm_mhz = 0;
  // capture.py's `app_clock_sm` and `default_app_clock_sm` (NVML's
  // application SM clock in force and the board's default); 0 when absent.
  // Set below the default, the GPU ran at most at app_clock_sm.
  std::int64_t app_clock_sm_mhz = 0, default_app_clock_sm_mhz = 0;
  // The board's power limit when it was measured (capture.py's
  // `power_limit_mW`, in W); 0 when the file does not say.
  double power_limit_w = 0;
};

// Reads a `*.measured.json` (steps[0]: dt_s, steps, energy_mJ; or
// time_per_step_s / energy_per_step_j) or a `dvfsim hw measure`
// measurement.json (format dvfsim-hw-measurement/1: the whole command's
// duration_s and energy_j, divided by `iterations`, which it then needs);
// InputError naming the file and field.
MeasuredStep read_measured(const std::string& path, int iterations = 0);

struct Prediction {
  double time_s = 0, energy_j = 0, power_w = 0;
  double time_error_pct = 0, energy_error_pct = 0, power_error_pct = 0;
};

struct ValidationReport {
  MeasuredStep measured;
  Prediction predicted;  // with the host-overhead correction (when it applies)
  Prediction raw;        // the traced host timeline as traced
  HostOverhead host;
  bool corrected = false;  // the correction applied (a Kineto trace, not `off`)
  // A Kineto trace whose measurement holds capture.py's paired host times:
  // the prediction with the host divided by that capture's own factor
  // (at least 1). Its time is not a held-out check (the factor is read from
  // the measured host), but its energy and power are the GPU and power
  // models' error once the host is right (docs/validation.md, "Profiler host
  // overhead").
  std::optional<Prediction> paired;
  // A corrected Kineto trace replayed with the host factor at both ends of the
  // range the H200 captures paired at (kHostOverheadFactorLow/High): the
  // slow host's prediction and the fast one's. Their spread is how much of
  // the prediction rests on the profiler correction: nothing for a step the
  // GPU bounds, most of its time for a launch-bound one.
  struct HostBand {
    double slow_factor = 0, fast_factor = 0;
    Prediction slow, fast;
    // The measured time per step lies between the two predictions, to within
    // 1 % (where the fast end is the GPU's own time, a step measured a hair
    // faster is the GPU model's error, not the host's).
    bool time_inside(double measured_s) const {
      return measured_s >= 0.99 * fast.time_s && measured_s <= 1.01 * slow.time_s;
    }
    double time_spread_pct() const { return host_time_spread_pct(slow.time_s, fast.time_s); }
    bool host_bound() const { return host_bounds_step(slow.time_s, fast.time_s); }
  };
  std::optional<HostBand> host_band;
  // The measurement's power limit when it differs from the device file's
  // (every prediction above was replayed at it); 0 otherwise.
  double power_limit_applied_w = 0;
  double device_power_limit_w = 0;  // the device file's limit_w
  // The measured run's mean SM clock when NVML said application or locked
  // clocks held it below the device's default (a native validation is then
  // of the wrong conditions); 0 otherwise.
  double clocks_held_mhz = 0;
  // The application SM clock the measurement says was set below the board's
  // default (native validations only); 0 otherwise.
  int app_clocks_set_mhz = 0;
  int device_default_core_mhz = 0;
};

// What `hw validate` compares: a trace replayed under a policy (native: the
// GPU left alone) against a measurement of the same steps on a real GPU.
struct ValidationSpec {
  std::string trace, measured, device = "h200";
  // The conditions the measured run ran under, when it was not the GPU left
  // alone: a policy and its parameters, and engine settings (`--set`, as
  // `dvfsim run`; not host_overhead, which is `host`). A locked core clock
  // is `static` with core_mhz; a plan `hw apply` replayed is that plan's
  // policy, and is compared with the run's last iteration (the one its
  // clock_plan.json holds); native with the mean of the iterations. The
  // measurement's own power limit is applied unless power_limit_w is set here.
  std::string policy = "native";
  std::map<std::string, std::string> settings;
  HostOverhead host;
  int iterations = 0;  // for a `hw measure` measurement.json
};

ValidationReport validate_trace(const ValidationSpec& v);
void print_validation(std::ostream& out, const ValidationSpec& v, const ValidationReport& r,
                      double tolerance_pct);

}  // namespace dvfsim
