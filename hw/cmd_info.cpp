// dvfsim hw info: what NVML reports about each GPU.
#include <fmt/format.h>

#include <iostream>
#include <map>

#include "hw/command_util.h"
#include "hw/describe.h"
#include "hw/nvml.h"
#include "hw/subcommands.h"

namespace dvfsim::hw {
namespace {

constexpr double kWattsPerMw = 1e-3;

// The text of `describe`, or "unavailable (why)" if an NVML call fails.
template <typename F>
std::string or_unavailable(F describe) {
  try {
    return describe();
  } catch (const NvmlError& error) {
    return fmt::format("unavailable ({})", error.what());
  } catch (const NvmlUnavailable& error) {
    return fmt::format("unavailable ({})", error.what());
  }
}

void print_clock_lists(const Nvml& nvml, nvmlDevice_t device, std::ostream& out) {
  std::vector<unsigned> memory_mhz;
  try {
    memory_mhz = nvml.supported_memory_clocks_mhz(device);
  } catch (const NvmlError& error) {
    out << fmt::format("  memory clocks: unavailable ({})\n", error.what());
    return;
  }
  out << fmt::format("  memory clocks: {}\n", describe_clock_list(memory_mhz));
  std::map<unsigned, std::string> graphics;  // memory MHz -> description, descending
  for (unsigned mhz : memory_mhz) {
    graphics[mhz] = or_unavailable(
        [&] { return describe_clock_list(nvml.supported_graphics_clocks_mhz(device, mhz)); });
  }
  bool all_same = true;
  for (const auto& [mhz, text] : graphics) all_same = all_same && text == graphics.begin()->second;
  if (all_same && graphics.size() > 1) {
    out << fmt::format("  graphics clocks (the same at every memory clock): {}\n",
                       graphics.begin()->second);
    return;
  }
  for (auto it = graphics.rbegin(); it != graphics.rend(); ++it) {
    out << fmt::format("  graphics clocks at memory {} MHz: {}\n", it->first, it->second);
  }
}

void print_gpu(const Nvml& nvml, unsigned index, std::ostream& out) {
  nvmlDevice_t device = nvml.device(index);
  out << fmt::format("\nGPU {}: {}\n", index, nvml.name(device));
  print_clock_lists(nvml, device, out);
  out << "  power limit: " << or_unavailable([&] {
    auto limit_w = nvml.power_limit_mw(device) * kWattsPerMw;
    auto [min_mw, max_mw] = nvml.power_limit_constraints_mw(device);
    return fmt::format("{:g} W (constraints {:g}–{:g} W)", limit_w, min_mw * kWattsPerMw,
                       max_mw * kWattsPerMw);
  }) << "\n";
  out << "  current clocks: " << or_unavailable([&] {
    return fmt::format("SM {} MHz, memory {} MHz", nvml.clock_mhz(device, nvml_const::kClockSm),
                       nvml.clock_mhz(device, nvml_const::kClockMemory));
  }) << "\n";
  out << "  power: " << or_unavailable([&] {
    std::string text = fmt::format("{:.1f} W (nvmlDeviceGetPowerUsage, averaged)",
                                   nvml.power_usage_mw(device) * kWattsPerMw);
    if (auto instant_mw = nvml.field_value(device, nvml_const::kFieldPowerInstant)) {
      text += fmt::format(", {:.1f} W instantaneous", *instant_mw * kWattsPerMw);
    } else {
      text += ", instantaneous power (field 186) not available";
    }
    return text;
  }) << "\n";
  out << "  energy counter: " << or_unavailable([&] {
    return fmt::format("{:.3f} J since the driver loaded",
                       static_cast<double>(nvml.total_energy_mj(device)) * 1e-3);
  }) << "\n";
  out << "  clock-event reasons: " << or_unavailable([&] {
    return describe_clock_event_reasons(nvml.clocks_event_reasons(device));
  }) << "\n";
}

int run_info(std::ostream& out) {
  auto nvml = open_nvml_and_recover();
  out << fmt::format("NVML library: {}\n", nvml->library_path());
  out << fmt::format("driver: {}\n", or_unavailable([&] { return nvml->driver_version(); }));
  unsigned count = nvml->device_count();
  out << fmt::format("GPUs: {}\n", count);
  for (unsigned index = 0; index < count; ++index) print_gpu(*nvml, index, out);
  out.flush();
  return 0;
}

}  // namespace

void add_info_command(CLI::App& hw, int& exit_code) {
  CLI::App* info = hw.add_subcommand("info", "Show each GPU's clocks, power limits and state");
  info->callback([&exit_code] {
    exit_code = run_reporting_errors("info", [] { return run_info(std::cout); });
  });
}

}  // namespace dvfsim::hw
