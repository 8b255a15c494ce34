#pragma once
// Clock plans: the clocks a policy wants over time, in a JSON file that
// `dvfsim run` can write and `dvfsim hw apply` replays on a real GPU.
// The format ("dvfsim-clock-plan/1") is documented in docs/hw.md.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace dvfsim::hw {

inline constexpr const char* kClockPlanFormat = "dvfsim-clock-plan/1";

// A clock pair. memory_mhz == 0 leaves the memory clock unlocked.
struct ClockSetting {
  int core_mhz = 0;
  int memory_mhz = 0;
};

// From start_ms (relative to the command's start, and to each period's start when
// the plan repeats) until the next window starts, lock the clocks to `clocks`.
struct ClockWindow {
  int64_t start_ms = 0;
  ClockSetting clocks;
};

enum class ClockPlanMode {
  kTimeWindows,  // "time-windows": apply `windows` as time passes
  kPerPhase,     // "per-phase": one pair per phase; needs a phase signal (see docs/hw.md)
};

struct ClockPlan {
  std::string device;  // device model name, e.g. "h200"
  ClockPlanMode mode = ClockPlanMode::kTimeWindows;
  // Repeat period of `windows` (e.g. one training step); 0 = windows run once and
  // the last one holds until the command ends.
  int64_t period_ms = 0;
  std::vector<ClockWindow> windows;            // strictly increasing start_ms
  std::map<std::string, ClockSetting> phases;  // per-phase plans: phase name -> clocks
  // Board power limit in W to set for the whole command (0: leave it as it is).
  int power_limit_w = 0;
  std::string source;  // optional provenance, e.g. the policy and trace that made it
};

// Parses and validates a plan; throws dvfsim::InputError naming `origin` (the file)
// and the offending field, e.g. "plan.json: windows[2].start_ms: ...".
ClockPlan parse_clock_plan(const std::string& json_text, const std::string& origin);
// Reads `path` and parses it; an unreadable file is an InputError too.
ClockPlan load_clock_plan(const std::string& path);

// Throws InputError (prefixed by `origin`) if the plan breaks a rule of the format.
void validate_clock_plan(const ClockPlan& plan, const std::string& origin);

// The plan as JSON text (stable key order, one window per line).
std::string format_clock_plan(const ClockPlan& plan);
// Validates, then writes atomically (temporary file + rename).
void write_clock_plan(const ClockPlan& plan, const std::string& path);

}  // namespace dvfsim::hw
