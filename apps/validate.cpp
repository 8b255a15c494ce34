#include "apps/validate.h"

#include <fmt/format.h>
#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <ostream>
#include <string_view>

#include "apps/runner.h"
#include "policies/registry.h"
#include "sim/error.h"
#include "traces/trace.h"

namespace dvfsim {

namespace {

// Mean profiled host step over the unprofiled one, from capture.py's keys; 0
// when either is absent. Present but not positive numbers are an error.
double paired_host_factor(simdjson::dom::element doc, const std::string& path) {
  double unprofiled = 0;
  simdjson::dom::array profiled;
  if (doc["host_step_s_mean"].get(unprofiled) != simdjson::SUCCESS ||
      doc["profile"]["host_step_s"].get(profiled) != simdjson::SUCCESS)
    return 0;
  double sum = 0;
  std::size_t n = 0;
  for (simdjson::dom::element e : profiled) {
    double h = 0;
    if (e.get(h) != simdjson::SUCCESS || !(h > 0) || !std::isfinite(h))
      throw InputError(fmt::format(
          "{}: field 'profile.host_step_s[{}]' is not a positive number of seconds", path, n));
    sum += h;
    ++n;
  }
  if (n == 0) return 0;
  if (!(unprofiled > 0) || !std::isfinite(unprofiled))
    throw InputError(
        fmt::format("{}: field 'host_step_s_mean' is not a positive number of seconds", path));
  return sum / static_cast<double>(n) / unprofiled;
}

// capture.py's `board` block: {"uuid": "GPU-...", "serial": "...", ...}; absent
// is fine, present with the wrong types is an error naming the field.
void read_board(simdjson::dom::element doc, const std::string& path, MeasuredStep& m) {
  simdjson::dom::element board;
  if (doc["board"].get(board) != simdjson::SUCCESS || board.is_null()) return;
  if (!board.is_object()) throw InputError(fmt::format("{}: field 'board' is not an object", path));
  auto text = [&](const char* key, std::string& out) {
    simdjson::dom::element v;
    if (board[key].get(v) != simdjson::SUCCESS || v.is_null()) return;
    std::string_view t;
    if (v.get(t) != simdjson::SUCCESS)
      throw InputError(fmt::format("{}: field 'board.{}' is not a string", path, key));
    out = std::string(t);
  };
  text("uuid", m.board_uuid);
  text("serial", m.board_serial);
}

// capture.py's `step_result`: {"after_window": {"finite": bool, ...} or null,
// "after_profile": ...}. nullopt when absent or both null; false when either
// says not finite. Present with the wrong types is an error naming the field.
std::optional<bool> read_step_result(simdjson::dom::element doc, const std::string& path) {
  simdjson::dom::element sr;
  if (doc["step_result"].get(sr) != simdjson::SUCCESS || sr.is_null()) return std::nullopt;
  if (!sr.is_object())
    throw InputError(fmt::format("{}: field 'step_result' is not an object", path));
  std::optional<bool> finite;
  for (const char* key : {"after_window", "after_profile"}) {
    simdjson::dom::element r;
    if (sr[key].get(r) != simdjson::SUCCESS || r.is_null()) continue;
    bool f = false;
    if (!r.is_object() || r["finite"].get(f) != simdjson::SUCCESS)
      throw InputError(fmt::format(
          "{}: field 'step_result.{}' is not an object with a true/false 'finite'", path, key));
    finite = finite.value_or(true) && f;
  }
  return finite;
}

// capture.py's `sub_windows` (the window's halves, each {dt_s, steps,
// energy_mJ}): the spread of their time and energy per step.
void read_parts(simdjson::dom::element doc, const std::string& path, MeasuredStep& m) {
  simdjson::dom::array parts;
  if (doc["sub_windows"].get(parts) != simdjson::SUCCESS || parts.size() < 2) return;
  std::vector<double> t, e;
  std::size_t i = 0;
  for (simdjson::dom::element p : parts) {
    double dt = 0, mj = 0;
    int64_t n = 0;
    if (p["dt_s"].get(dt) != simdjson::SUCCESS || !(dt > 0) || !std::isfinite(dt) ||
        p["steps"].get(n) != simdjson::SUCCESS || n <= 0 ||
        p["energy_mJ"].get(mj) != simdjson::SUCCESS || !(mj > 0) || !std::isfinite(mj))
      throw InputError(fmt::format(
          "{}: field 'sub_windows[{}]': expected positive dt_s, steps and energy_mJ", path, i));
    t.push_back(dt / static_cast<double>(n));
    e.push_back(mj / static_cast<double>(n));
    ++i;
  }
  auto spread = [](const std::vector<double>& v) {
    const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
    return 100.0 * (*hi - *lo) /
           (std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size()));
  };
  m.parts_time_spread_pct = spread(t);
  m.parts_energy_spread_pct = spread(e);
}

// An optional top-level number: `out` is left alone when `key` is absent or
// null; present, it must read as T and pass `valid`, else an InputError
// saying the field is not `expected`.
template <class T, class Valid>
void read_optional(simdjson::dom::element doc, const std::string& path, const char* key, T& out,
                   Valid valid, std::string_view expected) {
  simdjson::dom::element e;
  if (doc[key].get(e) != simdjson::SUCCESS || e.is_null()) return;
  T v{};
  if (e.get(v) != simdjson::SUCCESS || !valid(v))
    throw InputError(fmt::format("{}: field '{}' is not {}", path, key, expected));
  out = v;
}

// What a capture script (capture.py, capture_gpt3.py) records of the run's
// conditions beside its time and energy; each absent field is left unset.
void read_capture_conditions(simdjson::dom::element doc, const std::string& path, MeasuredStep& m) {
  m.paired_host_factor = paired_host_factor(doc, path);
  read_board(doc, path, m);
  m.step_result_finite = read_step_result(doc, path);
  read_parts(doc, path, m);
  const auto non_negative = [](std::int64_t v) { return v >= 0; };
  const auto positive = [](std::int64_t v) { return v > 0; };
  const auto positive_finite = [](double v) { return v > 0 && std::isfinite(v); };
  read_optional(doc, path, "clock_event_reasons_mask", m.clock_event_reasons_mask, non_negative,
                "a non-negative integer");
  read_optional(doc, path, "mean_sm_mhz", m.mean_sm_mhz, positive_finite,
                "a positive number of MHz");
  read_optional(doc, path, "app_clock_sm", m.app_clock_sm_mhz, positive,
                "a positive integer of MHz");
  read_optional(doc, path, "default_app_clock_sm", m.default_app_clock_sm_mhz, positive,
                "a positive integer of MHz");
  double mw = 0;
  read_optional(doc, path, "power_limit_mW", mw, positive_finite,
                "a positive number of milliwatts");
  m.power_limit_w = mw * 1e-3;
}

}  // namespace

MeasuredStep read_measured(const std::string& path, int iterations) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (auto err = parser.load(path).get(doc); err)
    throw InputError(
        fmt::format("{}: cannot read measurement JSON: {}", path, simdjson::error_message(err)));
  MeasuredStep m;
  double t = 0, e = 0;
  std::string_view format;
  const bool hw_measure = doc["format"].get(format) == simdjson::SUCCESS &&
                          format.substr(0, 22) == "dvfsim-hw-measurement/";
  if (hw_measure) {
    if (iterations <= 0)
      throw InputError(fmt::format(
          "{}: a `dvfsim hw measure` record covers the whole command; give --iterations N, "
          "the number of trace iterations (steps) the command ran",
          path));
    if (doc["duration_s"].get(t) != simdjson::SUCCESS)
      throw InputError(fmt::format("{}: field 'duration_s' missing or not a number", path));
    if (doc["energy_j"].get(e) != simdjson::SUCCESS)
      throw InputError(fmt::format("{}: field 'energy_j' missing or not a number", path));
    m.steps = iterations;
    m.time_per_step_s = t / iterations;
    m.energy_per_step_j = e / iterations;
  } else if (doc["time_per_step_s"].get(t) == simdjson::SUCCESS &&
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
    if (s0["steps"].get(n) != simdjson::SUCCESS || n <= 0 || n > INT32_MAX)
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
  if (!hw_measure) read_capture_conditions(doc, path, m);
  if (m.time_per_step_s <= 0 || m.energy_per_step_j <= 0)
    throw InputError(fmt::format("{}: time and energy per step must be > 0", path));
  m.mean_power_w = m.energy_per_step_j / m.time_per_step_s;
  if (!std::isfinite(m.mean_power_w))
    throw InputError(fmt::format("{}: {} J in {} s per step is no finite power", path,
                                 m.energy_per_step_j, m.time_per_step_s));
  return m;
}

namespace {

Prediction predict(const ValidationSpec& v, const HostOverhead& host, const MeasuredStep& m) {
  RunSpec spec;
  spec.trace_path = v.trace;
  spec.device = v.device;
  spec.policy = v.policy;
  spec.settings = v.settings;
  spec.baseline = "none";
  spec.record_timeline = false;
  spec.settings["host_overhead"] = host.spec();
  const Simulation sim = simulate(spec);
  const auto& it = sim.result.iteration_time_ns;
  const auto& ie = sim.result.iteration_energy_j;
  Prediction p;
  if (v.policy == "native") {  // the steady-state iterations' mean, as `run` reports it
    p.time_s = steady_mean(it, sim.workload->steady_iterations) * 1e-9;
    p.energy_j = steady_mean(ie, sim.workload->steady_iterations);
  } else {  // the last iteration: the one clock_plan.json holds and hw apply repeats
    p.time_s = static_cast<double>(it.back()) * 1e-9;
    p.energy_j = ie.back();
  }
  p.power_w = p.energy_j / p.time_s;
  auto err = [](double a, double b) { return 100.0 * (a - b) / b; };
  p.time_error_pct = err(p.time_s, m.time_per_step_s);
  p.energy_error_pct = err(p.energy_j, m.energy_per_step_j);
  p.power_error_pct = err(p.power_w, m.mean_power_w);
  return p;
}

}  // namespace

ValidationReport validate_trace(const ValidationSpec& v) {
  if (v.settings.count("host_overhead"))
    throw InputError("--set host_overhead: hw validate takes it as --host-overhead off|auto|F");
  const PolicyInfo& policy = find_policy(v.policy);  // a typo fails before the trace loads
  ValidationReport r;
  r.measured = read_measured(v.measured, v.iterations);
  r.host = v.host;
  // The board's power limit when it was measured: the firmware caps at it,
  // so the prediction is replayed at it too (unless the user set one, or the
  // policy chooses it).
  const Device& d = load_device_cached(v.device)->device;
  r.device_power_limit_w = d.power_limit_w;
  if (const double w = r.measured.power_limit_w; w > 0 && std::abs(w - d.power_limit_w) >= 0.5 &&
                                                 !v.settings.count("power_limit_w") &&
                                                 !policy.choose_power_limit) {
    if (!power_limit_settable(d, w))
      throw InputError(fmt::format(
          "{}: field 'power_limit_mW': the board was measured at a {:g} W power limit, which {} "
          "cannot be set to (its power-limit range: {}); is the measurement of another GPU?",
          v.measured, w, d.name,
          d.power_limit_max_w > 0
              ? fmt::format("{:g}..{:g} W", d.power_limit_min_w, d.power_limit_max_w)
              : std::string("none in its device file")));
    r.power_limit_applied_w = w;
  }
  // Every replay below runs under `run`: the spec, at that limit.
  ValidationSpec run = v;
  if (r.power_limit_applied_w > 0)
    run.settings["power_limit_w"] = fmt::format("{}", r.power_limit_applied_w);
  // Application clocks set below the board's default say so directly; else
  // NVML's AppClocks reason with the SM clock below the device's default:
  // held by an application-clock or locked-clock setting. (AppClocks alone
  // is no sign: a GPU whose default application clock is below its boost
  // clock can report it when left alone.)
  constexpr std::int64_t kAppClocks = 0x2;
  r.device_default_core_mhz = d.default_core_mhz;
  const MeasuredStep& m = r.measured;
  if (v.policy == "native") {
    if (m.app_clock_sm_mhz > 0 && m.default_app_clock_sm_mhz > 0 &&
        m.app_clock_sm_mhz < m.default_app_clock_sm_mhz)
      r.app_clocks_set_mhz = static_cast<int>(m.app_clock_sm_mhz);
    else if (m.clock_event_reasons_mask > 0 && (m.clock_event_reasons_mask & kAppClocks) != 0 &&
             m.mean_sm_mhz > 0 && m.mean_sm_mhz < 0.99 * d.default_core_mhz)
      r.clocks_held_mhz = m.mean_sm_mhz;
  }
  const HostOverhead& host = v.host;
  const bool kineto = detect_trace_format(v.trace) == TraceFormat::kineto;
  r.corrected = host.enabled && kineto;
  HostOverhead off;
  off.enabled = false;
  r.raw = predict(run, off, r.measured);
  r.predicted = r.corrected ? predict(run, host, r.measured) : r.raw;
  if (r.corrected) {
    ValidationReport::HostBand b;
    HostOverhead h;
    b.slow_factor = h.factor = kHostOverheadFactorLow;
    b.slow = predict(run, h, r.measured);
    b.fast_factor = h.factor = kHostOverheadFactorHigh;
    b.fast = predict(run, h, r.measured);
    r.host_band = b;
  }
  if (r.measured.paired_host_factor > 0 && kineto) {
    HostOverhead own;
    own.factor = std::max(1.0, r.measured.paired_host_factor);
    r.paired = predict(run, own, r.measured);
  }
  return r;
}

void print_validation(std::ostream& out, const ValidationSpec& v, const ValidationReport& r,
                      double tolerance_pct) {
  const Prediction& p = r.predicted;
  const Prediction& q = r.raw;
  out << fmt::format("{:<22} {:>12} {:>12} {:>9} {:>12} {:>9}\n", "per iteration", "predicted",
                     "measured", "error", "raw", "raw error");
  out << fmt::format("{:<22} {:>12.2f} {:>12.2f} {:>+8.2f}% {:>12.2f} {:>+8.2f}%\n", "time (ms)",
                     p.time_s * 1e3, r.measured.time_per_step_s * 1e3, p.time_error_pct,
                     q.time_s * 1e3, q.time_error_pct);
  out << fmt::format("{:<22} {:>12.2f} {:>12.2f} {:>+8.2f}% {:>12.2f} {:>+8.2f}%\n", "energy (J)",
                     p.energy_j, r.measured.energy_per_step_j, p.energy_error_pct, q.energy_j,
                     q.energy_error_pct);
  out << fmt::format("{:<22} {:>12.1f} {:>12.1f} {:>+8.2f}% {:>12.1f} {:>+8.2f}%\n",
                     "mean power (W)", p.power_w, r.measured.mean_power_w, p.power_error_pct,
                     q.power_w, q.power_error_pct);
  if (!r.measured.board_uuid.empty() || !r.measured.board_serial.empty())
    out << fmt::format(
        "measured on board {}{}{} (boards differ by several per cent in power: compare "
        "captures of one board)\n",
        r.measured.board_uuid,
        r.measured.board_uuid.empty() || r.measured.board_serial.empty() ? "" : ", serial ",
        r.measured.board_serial);
  if (r.measured.parts_time_spread_pct)
    out << fmt::format(
        "measurement spread: the measured window's halves differ by {:.2f}% in time and {:.2f}% "
        "in energy per step (an error smaller than that is inside the measurement's own "
        "repeatability)\n",
        *r.measured.parts_time_spread_pct, *r.measured.parts_energy_spread_pct);
  if (r.app_clocks_set_mhz > 0)
    out << fmt::format(
        "the measured run's application SM clock was set to {} MHz (the board's default: {} "
        "MHz): the native prediction assumes the default clocks; pass --policy static --set "
        "core_mhz={}\n",
        r.app_clocks_set_mhz, r.measured.default_app_clock_sm_mhz, r.app_clocks_set_mhz);
  if (r.clocks_held_mhz > 0)
    out << fmt::format(
        "the measured run's clocks were held below the GPU's default {} MHz by an "
        "application-clock or locked-clock setting (NVML clock-event reason AppClocks, mean SM "
        "clock {:.0f} MHz): the native prediction assumes the default clocks; for a locked core "
        "clock pass --policy static --set core_mhz=F\n",
        r.device_default_core_mhz, r.clocks_held_mhz);
  if (v.policy != "native")
    out << fmt::format(
        "policy {}: the last iteration of `dvfsim run --policy {}` (the one its clock_plan.json "
        "holds); the measured run must have run under the same (hw apply of that plan; locked "
        "clocks for static)\n",
        v.policy, v.policy);
  if (r.power_limit_applied_w > 0)
    out << fmt::format(
        "power limit: the board was measured at a {:g} W limit (the device file's: {:g} W), and "
        "every prediction here is replayed at it\n",
        r.power_limit_applied_w, r.device_power_limit_w);
  if (r.measured.step_result_finite == false)
    out << "the measured run diverged: its step returned NaN or inf (step_result in the "
           "measurement), and such data draw far less power than the power model's random-like "
           "data (a diverged VGG-16 read +49.7 % in energy); this comparison does not test the "
           "model\n";
  if (r.corrected)
    out << fmt::format(
        "host overhead: profiled host time divided by {:g} before replay (raw: as traced; "
        "--host-overhead off|auto|F)\n",
        r.host.factor);
  else
    out << fmt::format("host overhead: not corrected ({}; predicted = raw)\n",
                       r.host.enabled ? "native trace" : "--host-overhead off");
  if (const auto& b = r.host_band) {
    out << fmt::format(
        "host factor from {:g} to {:g} (the range of the H200 captures): time {:.2f} to {:.2f} ms "
        "({:+.2f} to {:+.2f}%), energy {:.2f} to {:.2f} J ({:+.2f} to {:+.2f}%): ",
        b->slow_factor, b->fast_factor, std::min(b->fast.time_s, b->slow.time_s) * 1e3,
        std::max(b->fast.time_s, b->slow.time_s) * 1e3,
        std::min(b->fast.time_error_pct, b->slow.time_error_pct),
        std::max(b->fast.time_error_pct, b->slow.time_error_pct),
        std::min(b->fast.energy_j, b->slow.energy_j), std::max(b->fast.energy_j, b->slow.energy_j),
        std::min(b->fast.energy_error_pct, b->slow.energy_error_pct),
        std::max(b->fast.energy_error_pct, b->slow.energy_error_pct));
    if (!b->host_bound())
      out << fmt::format("the GPU bounds this step (the host moves its time by {:.2f}%)\n",
                         std::abs(b->time_spread_pct()));
    else
      out << fmt::format(
          "the host bounds this step, its time rests on the profiler correction (the measured "
          "time is {} the range, to within 1 %)\n",
          b->time_inside(r.measured.time_per_step_s) ? "inside" : "outside");
  }
  if (r.measured.paired_host_factor > 0) {
    out << fmt::format(
        "this capture's own pairing: profiled host time {:.2f} x the unprofiled (for what-if "
        "runs of it: --set host_overhead={:.2f}; not a held-out check of the time)",
        r.measured.paired_host_factor, std::max(1.0, r.measured.paired_host_factor));
    // A host that waits for the GPU takes the GPU's step time profiled or
    // not: the ratio is then near 1 whatever the profiler added to its work.
    if (r.host_band && !r.host_band->host_bound())
      out << "; the GPU bounds this step, so the ratio is its pace more than the profiler's "
             "stretch of the host's work";
    out << "\n";
  }
  if (r.paired)
    out << fmt::format(
        "with that factor: time {:.2f} ms ({:+.2f}%), energy {:.2f} J ({:+.2f}%), power {:.1f} W "
        "({:+.2f}%): the GPU and power models' error once the host is right\n",
        r.paired->time_s * 1e3, r.paired->time_error_pct, r.paired->energy_j,
        r.paired->energy_error_pct, r.paired->power_w, r.paired->power_error_pct);
  out << fmt::format("tolerance {:.1f} % on energy: {}\n", tolerance_pct,
                     std::abs(p.energy_error_pct) <= tolerance_pct ? "PASS" : "FAIL");
}

}  // namespace dvfsim
