#pragma once
// The clock-change marker: `hw apply` writes it before touching clocks and removes
// it after restoring them. A marker whose process is gone means a run died with
// clocks possibly locked; every `hw` command undoes that first.
#include <iosfwd>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace dvfsim::hw {

class Nvml;

inline constexpr const char* kMarkerEnv = "DVFSIM_HW_MARKER";
inline constexpr const char* kDefaultMarkerPath = "/var/tmp/dvfsim-hw-apply.marker";

// $DVFSIM_HW_MARKER if set and non-empty, else /var/tmp/dvfsim-hw-apply.marker.
std::string marker_path();

struct Marker {
  long pid = 0;
  // Start time of `pid` (clock ticks since boot, /proc/PID/stat field 22), so that a
  // reused pid is not mistaken for the owner; 0 when unknown.
  unsigned long long pid_start_ticks = 0;
  std::vector<unsigned> gpus;  // NVML device indices whose clocks may be locked
  std::string started_utc;
  // Power limits to restore: (GPU index, limit in mW before apply changed it).
  std::vector<std::pair<unsigned, unsigned>> power_limits_mw;
};

// A marker for the calling process.
Marker marker_for_this_process(const std::vector<unsigned>& gpus);

// Text form: one "key=value" per line (pid, pid_start_ticks, gpus, started_utc, and
// power_limits_mw=GPU:mW,... when apply changed a power limit).
std::string format_marker(const Marker& marker);
// nullopt when the text lacks a valid pid line.
std::optional<Marker> parse_marker(const std::string& text);

void write_marker(const Marker& marker, const std::string& path);  // atomic
void remove_marker(const std::string& path);                       // no error if absent

// Whether the process that wrote the marker still runs (zombies count as gone).
bool marker_owner_alive(const Marker& marker);

// Resets locked GPU and memory clocks of one device. A memory reset that NVML
// reports as not supported is ignored (GPUs without memory locking). Both resets are
// attempted; the first failure is rethrown.
void reset_locked_clocks(const Nvml& nvml, unsigned gpu_index);

// Sets the power limit of one device back to `mw` (what it was before apply).
void restore_power_limit(const Nvml& nvml, unsigned gpu_index, unsigned mw);

// If the marker at marker_path() belongs to a process that is gone: resets the
// clocks of the GPUs it names (all GPUs if it is unreadable) and restores the
// power limits it records, removes it and prints
// what it did to `log`. If a reset fails it prints why and leaves the marker.
// Returns true when a stale marker was found.
bool recover_stale_marker(const Nvml& nvml, std::ostream& log);

}  // namespace dvfsim::hw
