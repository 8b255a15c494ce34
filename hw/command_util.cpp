#include "hw/command_util.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <iostream>

#include "hw/child.h"
#include "hw/files.h"
#include "hw/marker.h"
#include "hw/nvml.h"
#include "sim/error.h"

namespace dvfsim::hw {

int run_reporting_errors(const std::string& command, const std::function<int()>& body) {
  try {
    return body();
  } catch (const SpawnError& error) {
    std::cerr << fmt::format("dvfsim hw {}: error: {}\n", command, error.what());
    return kSpawnFailedExitCode;
  } catch (const std::exception& error) {
    std::cerr << fmt::format("dvfsim hw {}: error: {}\n", command, error.what());
    return kHwErrorExitCode;
  }
}

std::unique_ptr<Nvml> open_nvml_and_recover() {
  auto nvml = open_nvml();
  recover_stale_marker(*nvml, std::cerr);
  return nvml;
}

std::vector<unsigned> select_gpus(const Nvml& nvml, const std::vector<unsigned>& requested) {
  unsigned count = nvml.device_count();
  std::vector<unsigned> gpus;
  if (requested.empty()) {
    for (unsigned gpu = 0; gpu < count; ++gpu) gpus.push_back(gpu);
    if (gpus.empty()) throw std::runtime_error("NVML reports no GPUs");
    return gpus;
  }
  for (unsigned gpu : requested) {
    if (gpu >= count) {
      throw InputError(fmt::format("--gpu {}: there {} only {} GPU{} (indices 0 to {})", gpu,
                                   count == 1 ? "is" : "are", count, count == 1 ? "" : "s",
                                   count == 0 ? 0 : count - 1));
    }
    if (std::find(gpus.begin(), gpus.end(), gpu) == gpus.end()) gpus.push_back(gpu);
  }
  return gpus;
}

void check_no_other_apply(const std::string& path) {
  if (::access(path.c_str(), F_OK) != 0) return;
  std::string owner = "unknown";
  try {
    if (auto marker = parse_marker(read_file(path))) owner = fmt::format("pid {}", marker->pid);
  } catch (const std::exception&) {
  }
  throw std::runtime_error(fmt::format(
      "the clock marker {} exists ({}): another dvfsim hw apply or switch-latency is changing "
      "clocks, or a previous one could not be undone; not touching clocks",
      path, owner));
}

std::string utc_timestamp(std::chrono::system_clock::time_point time) {
  std::time_t seconds = std::chrono::system_clock::to_time_t(time);
  auto millis =
      std::chrono::duration_cast<std::chrono::milliseconds>(time.time_since_epoch()).count() % 1000;
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%S", &utc);
  return fmt::format("{}.{:03d}Z", buffer, millis);
}

}  // namespace dvfsim::hw
