// dvfsim hw apply: run a command while replaying a clock plan on the GPU.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <iostream>

#include "hw/child.h"
#include "hw/clock_lock.h"
#include "hw/command_util.h"
#include "hw/files.h"
#include "hw/marker.h"
#include "hw/nvml.h"
#include "hw/plan.h"
#include "hw/plan_schedule.h"
#include "hw/subcommands.h"
#include "sim/error.h"

namespace dvfsim::hw {
namespace {

struct ApplyOptions {
  std::string plan_path;
  bool allow_clock_changes = false;
  int power_limit_w = 0;  // --power-limit; 0: the plan's, if any
  std::vector<unsigned> gpus;
  std::vector<std::string> command;
};

std::string simplified(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
  }
  return out;
}

// Every planned clock must be one the GPU supports: memory clocks from its list,
// core clocks inside the range of graphics clocks at that memory clock.
void check_plan_against_gpu(const ClockPlan& plan, const std::string& origin, const Nvml& nvml,
                            unsigned gpu) {
  nvmlDevice_t device = nvml.device(gpu);
  std::string name = nvml.name(device);
  if (simplified(name).find(simplified(plan.device)) == std::string::npos) {
    std::cerr << fmt::format(
        "dvfsim hw apply: warning: {} was made for device '{}' but GPU {} is '{}'\n", origin,
        plan.device, gpu, name);
  }
  std::vector<unsigned> memory_mhz = nvml.supported_memory_clocks_mhz(device);
  for (size_t i = 0; i < plan.windows.size(); ++i) {
    const ClockSetting& clocks = plan.windows[i].clocks;
    std::string field = fmt::format("{}: windows[{}]", origin, i);
    unsigned memory = static_cast<unsigned>(clocks.memory_mhz);
    if (clocks.memory_mhz > 0 &&
        std::find(memory_mhz.begin(), memory_mhz.end(), memory) == memory_mhz.end()) {
      throw InputError(fmt::format("{}.memory_mhz: {} MHz is not a memory clock of GPU {} ({})",
                                   field, memory, gpu, name));
    }
    if (memory == 0) memory = *std::max_element(memory_mhz.begin(), memory_mhz.end());
    std::vector<unsigned> graphics = nvml.supported_graphics_clocks_mhz(device, memory);
    if (graphics.empty()) continue;
    auto [low, high] = std::minmax_element(graphics.begin(), graphics.end());
    auto core = static_cast<unsigned>(clocks.core_mhz);
    if (core < *low || core > *high) {
      throw InputError(fmt::format(
          "{}.core_mhz: {} MHz is outside GPU {}'s graphics clocks {}–{} MHz at memory {} MHz",
          field, core, gpu, *low, *high, memory));
    }
  }
}

// The limit must lie inside the GPU's own power-limit constraints.
void check_power_limit_against_gpu(int watts, const std::string& origin, const Nvml& nvml,
                                   unsigned gpu) {
  nvmlDevice_t device = nvml.device(gpu);
  auto [min_mw, max_mw] = nvml.power_limit_constraints_mw(device);
  const double w = watts;
  if (w * 1000.0 < min_mw || w * 1000.0 > max_mw) {
    throw InputError(
        fmt::format("{}: power limit {} W is outside GPU {}'s allowed range {:g}–{:g} W ({})",
                    origin, watts, gpu, min_mw * 1e-3, max_mw * 1e-3, nvml.name(device)));
  }
}

int run_apply(const ApplyOptions& options) {
  if (!options.allow_clock_changes) {
    throw InputError(
        "refusing to change GPU clocks without --allow-clock-changes (dvfsim hw apply locks "
        "clocks while the command runs and restores the defaults afterwards)");
  }
  if (options.command.empty()) throw InputError("no command given (use: -- COMMAND...)");
  if (options.power_limit_w < 0) {
    throw InputError(
        fmt::format("--power-limit {}: expected a power in W (> 0)", options.power_limit_w));
  }
  ClockPlan plan = load_clock_plan(options.plan_path);
  if (plan.windows.empty()) {
    throw InputError(fmt::format(
        "{}: mode: a per-phase plan needs a phase signal from the command, which dvfsim hw "
        "apply does not have; give the plan 'windows' (its phase timeline in ms) or write a "
        "time-windows plan",
        options.plan_path));
  }

  auto nvml = open_nvml_and_recover();
  std::vector<unsigned> gpus =
      select_gpus(*nvml, options.gpus.empty() ? std::vector<unsigned>{0} : options.gpus);
  for (unsigned gpu : gpus) check_plan_against_gpu(plan, options.plan_path, *nvml, gpu);
  const int power_limit_w = options.power_limit_w > 0 ? options.power_limit_w : plan.power_limit_w;
  const std::string limit_origin = options.power_limit_w > 0
                                       ? std::string("--power-limit")
                                       : options.plan_path + ": power_limit_w";
  if (power_limit_w > 0) {
    for (unsigned gpu : gpus)
      check_power_limit_against_gpu(power_limit_w, limit_origin, *nvml, gpu);
  }
  std::string marker = marker_path();
  check_no_other_apply(marker);

  ChildRunner child(options.command);  // blocks SIGINT/SIGTERM from here on
  ClockLock lock(*nvml, gpus, marker);
  if (power_limit_w > 0) lock.set_power_limit(power_limit_w);
  PlanSchedule schedule(plan);
  std::optional<ScheduledChange> change = schedule.next();
  while (change && change->at_ms == 0) {  // start the command at the planned clocks
    lock.set(change->clocks);
    change = schedule.next();
  }
  child.start();
  while (child.running()) {
    SteadyTime deadline =
        change ? child.start_time() + std::chrono::milliseconds(change->at_ms) : SteadyTime::max();
    ChildRunner::Event event = child.wait_until(deadline);
    if (event == ChildRunner::Event::kDeadline && change) {
      lock.set(change->clocks);
      change = schedule.next();
    } else if (event == ChildRunner::Event::kSignalForwarded) {
      lock.reset();  // stop applying the plan; the child is ending
      change.reset();
    }
  }
  int changes = lock.changes();
  lock.reset();
  double duration_s = std::chrono::duration<double>(child.end_time() - child.start_time()).count();
  std::cerr << fmt::format(
      "dvfsim hw apply: {} clock change{}{} over {:.3f} s; default clocks{} restored; exit code "
      "{}\n",
      changes, changes == 1 ? "" : "s",
      power_limit_w > 0 ? fmt::format(" at a {} W power limit", power_limit_w) : std::string(),
      duration_s, power_limit_w > 0 ? " and the power limit" : "", child.exit_code());
  return child.exit_code();
}

}  // namespace

void add_apply_command(CLI::App& hw, int& exit_code) {
  auto options = std::make_shared<ApplyOptions>();
  CLI::App* apply = hw.add_subcommand(
      "apply", "Run a command while locking GPU clocks as a clock plan says (needs root)");
  apply->add_option("--plan", options->plan_path, "Clock plan JSON (dvfsim-clock-plan/1)")
      ->required();
  apply->add_flag("--allow-clock-changes", options->allow_clock_changes,
                  "Required: permit dvfsim to lock GPU clocks (they are restored afterwards)");
  apply->add_option("--power-limit", options->power_limit_w,
                    "Board power limit in W while the command runs (overrides the plan's "
                    "power_limit_w; restored afterwards)");
  apply->add_option("--gpu", options->gpus, "GPU index to control (repeatable; default 0)");
  apply->add_option("command", options->command, "The command to run, after --")->required();
  apply->callback([options, &exit_code] {
    exit_code = run_reporting_errors("apply", [&] { return run_apply(*options); });
  });
}

}  // namespace dvfsim::hw
