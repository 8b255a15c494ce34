#include "apps/commands.h"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <iostream>

#include "apps/cli_values.h"
#include "apps/diff.h"
#include "apps/files.h"
#include "apps/outputs.h"
#include "apps/parallel_run.h"
#include "apps/reports_json.h"
#include "apps/runner.h"
#include "apps/settings.h"
#include "apps/validate.h"
#include "hw/commands.h"
#include "models/calibrate.h"
#include "models/capture_device.h"
#include "models/device_yaml.h"
#include "policies/planning/report.h"
#include "policies/registry.h"
#include "sim/error.h"
#include "sim/model_registry.h"
#include "traces/native.h"
#include "traces/stats.h"
#include "traces/trace.h"

namespace dvfsim {
void add_sweep(CLI::App& app, int& exit_code);  // apps/sweep.cpp
namespace {

// KEY=VALUE pairs from --set.
std::map<std::string, std::string> parse_settings(const std::vector<std::string>& sets) {
  std::map<std::string, std::string> out;
  for (const auto& s : sets) {
    const auto eq = s.find('=');
    if (eq == std::string::npos || eq == 0)
      throw InputError(fmt::format("--set '{}': expected KEY=VALUE", s));
    out[s.substr(0, eq)] = s.substr(eq + 1);
  }
  return out;
}

// --gpu, --iterations, --capture-device: what the trace does not say itself.
void add_trace_options(CLI::App* cmd, TraceOptions& t) {
  cmd->add_option("--gpu", t.gpu,
                  "Device id to read from a trace holding activities of several GPUs");
  cmd->add_option("--iterations", t.iterations,
                  "The trace holds N iterations (overrides markers and repetition detection)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--capture-device", t.capture_device,
                  "GPU the trace was captured on: device name or YAML path (default: the "
                  "device file whose nvml_names lists the trace's GPU)");
  // The parsed-trace cache (docs/trace-format.md, "Parsed-trace cache").
  t.cache_dir = default_trace_cache_dir();
  auto* dir = cmd->add_option("--cache-dir", t.cache_dir,
                              "Parsed-trace cache directory (default: $DVFSIM_CACHE_DIR, else "
                              "$XDG_CACHE_HOME/dvfsim/traces or ~/.cache/dvfsim/traces)");
  cmd->add_flag_callback(
         "--no-cache", [&t] { t.cache_dir.clear(); },
         "Neither read nor write the parsed-trace cache (also: DVFSIM_CACHE_DIR=off)")
      ->excludes(dir);
}

void print_notes(std::ostream& out, const Workload& w) {
  for (const std::string& n : w.notes) out << fmt::format("note: {}: {}\n", w.source_path, n);
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void add_run(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("run", "Replay a trace on a device model under a DVFS policy");
  struct Opts {
    RunSpec spec;
    std::vector<std::string> sets;
    std::string out;
    bool per_kernel = false;
    std::size_t rows = 40;
    std::string parallel;
    std::string outputs = "all";
  };
  auto o = std::make_shared<Opts>();
  cmd->add_option("--trace", o->spec.trace_path,
                  "Trace file (Kineto JSON, .gz or plain, or native)")
      ->required();
  cmd->add_option("--device", o->spec.device, "Device name (see `dvfsim devices`) or YAML path")
      ->required();
  cmd->add_option("--policy", o->spec.policy, "Policy name (see `dvfsim policies`)")->required();
  cmd->add_option(
      "--set", o->sets,
      fmt::format("KEY=VALUE: a policy parameter (dvfsim policies) or an engine setting "
                  "({})",
                  engine_setting_names()));
  cmd->add_option("--baseline", o->spec.baseline, "Baseline policy, or none")
      ->capture_default_str();
  cmd->add_option("--seed", o->spec.seed, "Seed of the switch-latency draws")
      ->check(unsigned_in(0, UINT64_MAX))
      ->capture_default_str();
  cmd->add_option("--out", o->out, "Output directory")->required();
  cmd->add_option("--outputs", o->outputs,
                  "Files to write: all, or a list of summary,kernels,timeline,switches,trace,"
                  "plan,manifest (summary.json is always written)")
      ->capture_default_str();
  cmd->add_flag("--per-kernel", o->per_kernel,
                "Print the chosen clocks per distinct kernel (name, class, phase)");
  cmd->add_option("--rows", o->rows, "Rows of the per-kernel table")
      ->check(unsigned_in(1, 1'000'000))
      ->capture_default_str();
  cmd->add_option("--parallel", o->parallel,
                  "pp=S[,dp=D][,microbatches=M][,schedule=1f1b|gpipe][,partition=...]: a "
                  "pipeline-parallel job built from the trace (docs/parallel.md)");
  add_trace_options(cmd, o->spec.trace_options);
  cmd->callback([o, &exit_code] {
    o->spec.settings = parse_settings(o->sets);
    const OutputSelection outputs = OutputSelection::parse(o->outputs);
    // The timeline is recorded only when a file shows it.
    o->spec.record_timeline = outputs.needs_timeline();
    // The names first: a typo fails at once, not after the trace has loaded.
    find_policy(o->spec.policy);
    if (!o->spec.baseline.empty() && o->spec.baseline != "none") find_policy(o->spec.baseline);
    load_device_cached(o->spec.device);
    if (!o->parallel.empty()) {
      if (o->per_kernel) throw InputError("--per-kernel: not with --parallel");
      const Simulation sim = simulate_parallel(o->spec, parse_parallel(o->parallel));
      print_notes(std::cerr, *sim.workload);
      write_parallel_outputs(o->out, o->spec, sim);
      print_run_summary(std::cout, o->spec, sim);
      print_parallel_summary(std::cout, sim);
      exit_code = 0;
      return;
    }
    const auto t0 = std::chrono::steady_clock::now();
    std::cerr << fmt::format("dvfsim: loading {}, replaying {} and baseline {} ...\n",
                             o->spec.trace_path, o->spec.policy, o->spec.baseline);
    o->spec.host_range = true;
    const Simulation sim = simulate(o->spec);
    print_notes(std::cerr, *sim.workload);
    for (const SolveReport& r : sim.result.solver) std::cerr << "dvfsim: " << plan::line(r) << '\n';
    for (const std::string& n : sim.result.policy_notes) std::cerr << "dvfsim: " << n << '\n';
    write_run_outputs(o->out, o->spec, sim, outputs);
    print_run_summary(std::cout, o->spec, sim);
    if (o->per_kernel) print_kernel_choices(std::cout, sim, o->rows);
    std::cout << fmt::format("  wrote {}/ ({}) in {:.2f} s\n", o->out, outputs.describe(),
                             seconds_since(t0));
    exit_code = 0;
  });
}

void add_trace(CLI::App& app, int& exit_code) {
  auto* trace = app.add_subcommand("trace", "Inspect or convert traces");
  trace->require_subcommand(1);
  auto* info = trace->add_subcommand(
      "info", "Iterations, kernels, GPU time per class and phase, work coverage");
  auto path = std::make_shared<std::string>();
  auto options = std::make_shared<TraceOptions>();
  auto json = std::make_shared<bool>(false);
  info->add_option("FILE", *path, "Trace file")->required();
  add_trace_options(info, *options);
  info->add_flag("--json", *json, "Print the numbers as one JSON object (docs/design.md)");
  info->callback([path, options, json, &exit_code] {
    const Workload w = read_trace(*path, *options);
    if (*json) {
      std::cout << trace_stats_json(*path, compute_stats(w));
    } else {
      print_stats(compute_stats(w), std::cout);
      print_notes(std::cerr, w);
    }
    exit_code = 0;
  });
  auto* conv = trace->add_subcommand("convert", "Write a trace in the native format");
  auto in = std::make_shared<std::string>();
  auto out = std::make_shared<std::string>();
  auto conv_options = std::make_shared<TraceOptions>();
  conv->add_option("FILE", *in, "Input trace")->required();
  conv->add_option("--out", *out, "Output file (.gz to compress)")->required();
  add_trace_options(conv, *conv_options);
  conv->callback([in, out, conv_options, &exit_code] {
    const Workload w = read_trace(*in, *conv_options);
    write_native(w, *out);
    std::cout << fmt::format("wrote {} ({} kernels, {} iterations)\n", *out, w.kernels.size(),
                             w.iterations);
    exit_code = 0;
  });
}

void add_devices(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("devices", "List the shipped device models");
  auto capture = std::make_shared<bool>(false);
  cmd->add_flag("--capture", *capture,
                "List the capture devices (every GPU a trace can come from) and the driver "
                "names that select them");
  cmd->callback([capture, &exit_code] {
    if (*capture) {
      std::cout << fmt::format("{:<18} {:<8} {:<36} {:>6} {:>9} {:>10}  {}\n", "name", "role",
                               "GPU", "SMs", "TFLOP/s", "GB/s", "driver name");
      for (const auto& name : list_capture_devices()) {
        const LoadedDevice ld = load_capture_device(name);
        const Device& d = ld.device;
        const bool target_file = !is_capture_only_file(d.source_path);
        std::cout << fmt::format("{:<18} {:<8} {:<36} {:>6} {:>9.1f} {:>10.0f}  {}\n", d.name,
                                 target_file ? "target" : "capture", d.display_name, d.sm_count,
                                 d.tensor_flops_per_s(d.default_core_mhz) * 1e-12,
                                 d.dram_bandwidth_gbs, d.nvml_name);
      }
      std::cout << fmt::format("(from {}; TFLOP/s: dense fp16/bf16 tensor at the default clock)\n",
                               device_directory());
      exit_code = 0;
      return;
    }
    std::cout << fmt::format("{:<12} {:<28} {:>14} {:>22} {:>8} {:>9}\n", "name", "GPU", "core MHz",
                             "memory MHz", "limit W", "sources");
    for (const auto& name : list_devices()) {
      const LoadedDevice ld = load_device(name);
      const Device& d = ld.device;
      std::string mem;
      for (auto m : d.memory_clocks_mhz) mem += (mem.empty() ? "" : ",") + std::to_string(m);
      // A capture-only device file has no power model and no limit.
      const std::string limit =
          d.power.given() ? fmt::format("{:.0f}", d.power_limit_w) : "capture";
      std::cout << fmt::format("{:<12} {:<28} {:>6}..{:<6} {:>22} {:>8} {:>9}\n", d.name,
                               d.display_name, d.core_clocks_mhz.front(), d.core_clocks_mhz.back(),
                               mem, limit, ld.sources.size());
    }
    std::cout << fmt::format("(from {})\n", device_directory());
    exit_code = 0;
  });
}

void add_policies(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("policies", "List the DVFS policies and their parameters");
  cmd->callback([&exit_code] {
    for (const PolicyInfo* p : all_policies()) {
      std::cout << fmt::format("{}{}\n    {}\n", p->name,
                               p->oracle ? "  [oracle: reads the future]" : "", p->description);
      for (const auto& s : p->params) {
        const std::string kind =
            s.kind == ParamSpec::Kind::required
                ? "required"
                : (s.kind == ParamSpec::Kind::defaulted ? fmt::format("default {}", s.default_value)
                                                        : "optional");
        std::cout << fmt::format("    --set {}=...  ({}) {}\n", s.name, kind, s.description);
      }
    }
    std::cout << "engine settings for every policy:\n" << engine_settings_help();
    exit_code = 0;
  });
}

void add_models(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand(
      "models", "List the latency, power and governor models and their device-file keys");
  cmd->callback([&exit_code] {
    for (const ModelKind kind : {ModelKind::latency, ModelKind::power, ModelKind::governor}) {
      for (const ModelInfo* m : all_models(kind)) {
        std::cout << fmt::format("{}: {{model: {}, ...}}\n    {}\n", model_kind_name(kind), m->name,
                                 m->description);
        for (const auto& p : m->params)
          std::cout << fmt::format("    {}: {{value, source}}  ({}, in [{}, {}]) {}\n", p.name,
                                   p.required ? "required" : "optional", p.min, p.max,
                                   p.description);
      }
    }
    exit_code = 0;
  });
}

void add_calibrate(CLI::App& app, int& exit_code) {
  auto* cmd =
      app.add_subcommand("calibrate", "Fit a device's power coefficients from measurements");
  struct Opts {
    std::string device, csv, out;
    bool fit_voltage = false, predict_only = false;
  };
  auto o = std::make_shared<Opts>();
  cmd->add_option("--device", o->device, "Device name or YAML path to start from")->required();
  cmd->add_option("--measurements", o->csv, "Measurement CSV (docs/calibration.md)")->required();
  auto* out = cmd->add_option("--out", o->out, "Device YAML to write");
  cmd->add_flag("--fit-voltage", o->fit_voltage,
                "Also choose the V/F curve's floor and knee (GPUs without a voltage readout)");
  cmd->add_flag("--predict-only", o->predict_only,
                "Fit nothing: each row against the device file's coefficients as they are")
      ->excludes("--fit-voltage")
      ->excludes(out);
  cmd->callback([o, &exit_code] {
    if (!o->predict_only && o->out.empty())
      throw InputError("calibrate: --out FILE is required (or --predict-only)");
    const LoadedDevice ld = load_device(o->device);
    const auto rows = read_calibration_csv(o->csv);
    const CalibrationFit fit = o->predict_only  ? predict_power(ld.device, rows)
                               : o->fit_voltage ? fit_voltage_and_power(ld.device, rows)
                                                : fit_power(ld.device, rows);
    if (!fit.voltage_note.empty()) std::cout << "voltage curve: " << fit.voltage_note << "\n";
    std::cout << fmt::format("{:<40} {:>12} {:>12} {:>9} {:>10}\n", "measurement", "measured W",
                             "model W", "error", "tensor W");
    for (const auto& r : fit.rows)
      std::cout << fmt::format("{:<40} {:>12.1f} {:>12.1f} {:>+8.2f}% {:>10.1f}{}\n", r.name,
                               r.measured_w, r.predicted_w, r.error_pct, r.tensor_w,
                               r.used ? "" : "  (not fitted)");
    std::cout << fmt::format("RMS error {:.2f} %, max {:.2f} % over {} rows", fit.rms_error_pct,
                             fit.max_abs_error_pct, fit.rows.size());
    if (o->predict_only) {
      std::cout << fmt::format(" with {}'s coefficients (nothing fitted)\n", o->device);
      exit_code = 0;
      return;
    }
    std::cout << fmt::format("; idle split scaled by {:.3f}\n", fit.idle_scale);
    const CmosParams& p = fit.power;
    std::cout << fmt::format(
        "fitted: const {:.2f} W, leak {:.2f} W/V, clock {:.3f} W/(V^2 GHz), busy {:.2f} W/(V^2 "
        "GHz), "
        "tensor {:.2f} W/(V^2 GHz), SIMT issue {:.2f} W/(V^2 GHz), memory active {:.2f} W/GHz, "
        "memory "
        "idle {:.3f} W/GHz, SIMT matrix {:.2f} W/(V^2 GHz){}\n",
        p.const_w, p.leak_w_per_v, p.clock_w_per_v2ghz, p.busy_w_per_v2ghz, p.compute_w_per_v2ghz,
        p.simt_w_per_v2ghz, p.memory_active_w_per_ghz, p.memory_idle_w_per_ghz,
        p.simt_matrix_w_per_v2ghz, fit.simt_matrix_fitted ? "" : " (no gemm_simt row: kept)");
    const std::string text =
        rewrite_device_yaml(read_file(ld.device.source_path), ld.device.source_path, fit, o->csv);
    load_device_yaml(text, o->out);  // the result must load
    if (const auto parent = std::filesystem::path(o->out).parent_path(); !parent.empty())
      make_output_dir(parent.string());
    write_file_atomic(o->out, text);
    std::cout << fmt::format("wrote {}\n", o->out);
    exit_code = 0;
  });
}

void add_hw_validate(CLI::App& hw, int& exit_code) {
  auto* cmd = hw.add_subcommand(
      "validate", "Compare the prediction for a trace (native, or a policy) with its measurement");
  struct Opts {
    ValidationSpec spec;
    std::string host_overhead = "auto";
    std::vector<std::string> sets;
    double tolerance = 5.0;
    bool json = false;
  };
  auto o = std::make_shared<Opts>();
  cmd->add_option("--trace", o->spec.trace, "Trace file")->required();
  cmd->add_option("--measured", o->spec.measured,
                  "Measurement JSON (*.measured.json, or hw measure's measurement.json)")
      ->required();
  cmd->add_option("--host-overhead", o->host_overhead,
                  "Profiler host-overhead correction: off, auto or a factor")
      ->capture_default_str();
  cmd->add_option("--iterations", o->spec.iterations,
                  "Iterations the command ran (needed for a hw measure measurement.json)");
  cmd->add_option("--device", o->spec.device, "Device name or YAML path")->capture_default_str();
  cmd->add_option("--policy", o->spec.policy,
                  "What the measured run ran under (default native: the GPU left alone; static "
                  "with --set core_mhz=F for locked clocks; a plan's policy for hw apply)")
      ->capture_default_str();
  cmd->add_option(
      "--set", o->sets,
      fmt::format("KEY=VALUE: a policy parameter or an engine setting ({}), as for dvfsim run",
                  engine_setting_names()));
  cmd->add_option("--tolerance", o->tolerance, "Largest accepted energy error, percent")
      ->check(finite_in(0, 1000))
      ->capture_default_str();
  cmd->add_flag("--json", o->json, "Print the comparison as one JSON object");
  cmd->callback([o, &exit_code] {
    o->spec.host = parse_host_overhead(o->host_overhead);
    o->spec.settings = parse_settings(o->sets);
    const ValidationReport r = validate_trace(o->spec);
    if (o->json) {
      std::cout << validation_json(o->spec, r, o->tolerance);
    } else {
      std::string conditions = o->spec.policy;
      for (const auto& [k, v] : o->spec.settings) conditions += fmt::format(", {}={}", k, v);
      std::cout << fmt::format("dvfsim hw validate: {} on {} ({}) against {}\n", o->spec.trace,
                               o->spec.device, conditions, o->spec.measured);
      print_validation(std::cout, o->spec, r, o->tolerance);
    }
    exit_code = std::abs(r.predicted.energy_error_pct) <= o->tolerance ? 0 : 1;
  });
}

}  // namespace

void add_commands(CLI::App& app, int& exit_code) {
  add_run(app, exit_code);
  add_sweep(app, exit_code);
  add_trace(app, exit_code);
  add_devices(app, exit_code);
  add_policies(app, exit_code);
  add_models(app, exit_code);
  add_calibrate(app, exit_code);
  add_diff(app, exit_code);
  auto* hw = app.add_subcommand("hw", "Measure, validate and apply on a real GPU through NVML");
  hw->require_subcommand(1);
  hw::add_commands(*hw, exit_code);
  add_hw_validate(*hw, exit_code);
}

}  // namespace dvfsim
