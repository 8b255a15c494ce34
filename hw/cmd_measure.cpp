// dvfsim hw measure: run a command and measure the GPUs' energy and power.
#include <fmt/format.h>

#include <filesystem>
#include <iostream>

#include "hw/child.h"
#include "hw/command_util.h"
#include "hw/files.h"
#include "hw/measurement.h"
#include "hw/nvml.h"
#include "hw/sampler.h"
#include "hw/subcommands.h"
#include "sim/error.h"

namespace dvfsim::hw {
namespace {

// How long to keep sampling after the command ends, waiting for the energy counter
// to tick (it refreshes every ~100 ms).
constexpr auto kMaxTail = std::chrono::milliseconds(500);

struct MeasureOptions {
  int interval_ms = 10;
  std::vector<unsigned> gpus;
  std::string out_dir;
  std::vector<std::string> command;
};

int64_t steady_ns(SteadyTime time) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(time.time_since_epoch()).count();
}

int run_measure(const MeasureOptions& options) {
  if (options.interval_ms < 1 || options.interval_ms > 3'600'000)
    throw InputError(fmt::format("--interval-ms {}: expected a whole number of ms in [1, 3600000]",
                                 options.interval_ms));
  if (options.command.empty()) throw InputError("no command given (use: -- COMMAND...)");
  std::filesystem::create_directories(options.out_dir);

  auto nvml = open_nvml_and_recover();
  MeasuredRun run;
  run.command = options.command;
  run.interval_ms = options.interval_ms;
  run.nvml_library = nvml->library_path();
  run.driver = nvml->driver_version();
  std::vector<unsigned> gpus = select_gpus(*nvml, options.gpus);

  ChildRunner child(options.command);  // before the sampler thread: signals stay here
  Sampler sampler(*nvml, gpus, std::chrono::milliseconds(options.interval_ms));
  sampler.start();
  run.start_wall = std::chrono::system_clock::now();
  child.start();
  child.wait();
  run.end_wall = std::chrono::system_clock::now();
  sampler.finish(child.end_time(), kMaxTail);

  run.exit_code = child.exit_code();
  run.forwarded_signal = child.forwarded_signal();
  run.start_ns = steady_ns(child.start_time());
  run.end_ns = steady_ns(child.end_time());
  run.notes = sampler.notes();
  std::vector<EnergyEstimate> estimates = estimate_all(run, sampler.series());

  std::string dir = options.out_dir;
  write_file_atomic(dir + "/samples.csv", format_samples_csv(run, sampler.series()));
  write_file_atomic(dir + "/measurement.json",
                    format_measurement_json(run, sampler.series(), estimates));

  double energy_j = 0;
  double uncertainty_j = 0;
  for (const auto& estimate : estimates) {
    energy_j += estimate.energy_j;
    uncertainty_j += estimate.uncertainty_j;
  }
  double duration_s = static_cast<double>(run.end_ns - run.start_ns) * 1e-9;
  std::cerr << fmt::format(
      "dvfsim hw measure: {:.3f} s, {:.1f} ± {:.1f} J, mean {:.1f} W on {} GPU{}; exit code {}; "
      "wrote {}/measurement.json\n",
      duration_s, energy_j, uncertainty_j, duration_s > 0 ? energy_j / duration_s : 0.0,
      gpus.size(), gpus.size() == 1 ? "" : "s", run.exit_code, dir);
  return run.exit_code;
}

}  // namespace

void add_measure_command(CLI::App& hw, int& exit_code) {
  auto options = std::make_shared<MeasureOptions>();
  CLI::App* measure = hw.add_subcommand(
      "measure", "Run a command and measure GPU energy, power and clocks while it runs");
  measure->add_option("--interval-ms", options->interval_ms, "Sampling interval in ms")
      ->capture_default_str();
  measure->add_option("--gpu", options->gpus, "GPU index to measure (repeatable; default all)");
  measure->add_option("--out", options->out_dir, "Directory for measurement.json and samples.csv")
      ->required();
  measure->add_option("command", options->command, "The command to run, after --")->required();
  measure->callback([options, &exit_code] {
    exit_code = run_reporting_errors("measure", [&] { return run_measure(*options); });
  });
}

}  // namespace dvfsim::hw
