#pragma once
// Helpers shared by the hw subcommands.
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace dvfsim::hw {

class Nvml;

inline constexpr int kHwErrorExitCode = 2;

// Runs `body`, turning exceptions into "dvfsim hw <command>: error: ..." on stderr
// and an exit code (2, or 127 when the command could not be started).
int run_reporting_errors(const std::string& command, const std::function<int()>& body);

// Opens NVML and undoes a stale clock marker, reporting on stderr.
std::unique_ptr<Nvml> open_nvml_and_recover();

// `requested` checked against the device count (InputError if out of range); all
// GPUs when empty.
std::vector<unsigned> select_gpus(const Nvml& nvml, const std::vector<unsigned>& requested);

// Refuses (throws) when the clock marker at `path` exists: another live hw command is
// changing clocks, or a stale one could not be undone.
void check_no_other_apply(const std::string& path);

// ISO 8601 UTC with milliseconds, e.g. "2026-11-29T17:03:04.123Z".
std::string utc_timestamp(std::chrono::system_clock::time_point time);

}  // namespace dvfsim::hw
