#pragma once
// Engine settings: the `--set` keys that configure the simulation rather than
// the policy (switch_latency_us, memory_stall_us, data_activity,
// zeroed_operands, resident_warps, host_overhead, power_limit_w). One table
// serves parsing `--set`, the help of `dvfsim policies` and `run --set`, the
// checks of experiment files, and the fields of summary.json (hence the
// columns of results.csv).
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "sim/engine.h"
#include "sim/json.h"
#include "sim/model_registry.h"
#include "traces/host_overhead.h"

namespace dvfsim {

// Everything the engine settings set.
struct RunSettings {
  EngineConfig engine;
  ModelOptions models;
  HostOverhead host;  // applied when a Kineto trace is loaded
  // Board power limit in W the firmware caps at (< 0: the device's own
  // limit_w); checked against the device's range when the run is prepared.
  double power_limit_w = -1.0;
};

struct EngineSetting {
  std::string_view name;
  std::string_view help;  // one line, with units
  // Parses `value` into `s`; InputError "--set NAME=VALUE: expected ..." otherwise.
  void (*apply)(RunSettings& s, const std::string& value);
  // Writes the value in effect as summary.json field `key` (null: not set,
  // the device's own).
  void (*summarise)(JsonWriter& j, std::string_view key, const RunSettings& s);
};

// Every engine setting, in the order summary.json and results.csv list them.
const std::vector<EngineSetting>& engine_settings();
// nullptr when `key` is not an engine setting (then it is a policy parameter).
const EngineSetting* find_engine_setting(std::string_view key);
inline bool is_engine_setting(std::string_view key) {
  return find_engine_setting(key) != nullptr;
}
// The names, comma-separated.
std::string engine_setting_names();
// Applies the engine settings among `settings` to `s` and returns the others
// (the policy's parameters).
std::map<std::string, std::string> apply_engine_settings(
    const std::map<std::string, std::string>& settings, RunSettings& s);
// "    --set NAME=...  (optional) HELP" lines, for help texts.
std::string engine_settings_help();

}  // namespace dvfsim
