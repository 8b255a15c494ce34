#include "apps/settings.h"

#include <fmt/format.h>

#include <charconv>

#include "sim/error.h"

namespace dvfsim {
namespace {

// At most the longest trace span (1 h): a switch that takes longer never
// lands inside any trace, and larger values overflow the nanosecond clock.
constexpr double kMaxUs = static_cast<double>(kMaxTraceSpanNs) / 1000.0;
constexpr std::string_view kTimeUs = "a time in microseconds in [0, 3.6e9] (1 h)";

// `value` as a number in [0, max], else InputError saying what was expected.
double number(std::string_view key, const std::string& value, double max,
              std::string_view expected) {
  double v = -1;
  auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (ec != std::errc() || ptr != value.data() + value.size() || !(v >= 0 && v <= max))
    throw InputError(fmt::format("--set {}={}: expected {}", key, value, expected));
  return v;
}

// `value` as on (true) or off (false), else InputError saying so.
bool on_off(std::string_view key, const std::string& value) {
  if (value != "on" && value != "off")
    throw InputError(fmt::format("--set {}={}: expected on or off", key, value));
  return value == "on";
}

// An override (< 0: not set) as a number or null.
void override_field(JsonWriter& j, std::string_view key, double v) {
  if (v >= 0)
    j.field(key, v);
  else
    j.key(key).null();
}

}  // namespace

const std::vector<EngineSetting>& engine_settings() {
  static const std::vector<EngineSetting> table = {
      {"switch_latency_us",
       "replaces every clock-switch latency of the device (both domains), in microseconds",
       [](RunSettings& s, const std::string& v) {
         s.engine.switch_latency_override_us = number("switch_latency_us", v, kMaxUs, kTimeUs);
       },
       [](JsonWriter& j, std::string_view key, const RunSettings& s) {
         override_field(j, key, s.engine.switch_latency_override_us);
       }},
      {"memory_stall_us",
       "replaces the device's memory-switch stall, in microseconds (a stall never outlasts "
       "its switch)",
       [](RunSettings& s, const std::string& v) {
         s.engine.memory_stall_override_us = number("memory_stall_us", v, kMaxUs, kTimeUs);
       },
       [](JsonWriter& j, std::string_view key, const RunSettings& s) {
         override_field(j, key, s.engine.memory_stall_override_us);
       }},
      {"data_activity",
       "bit-toggle activity of the data relative to random data (1, the default: random, as "
       "calibrated; 0: constant data); scales the power model's data-dependent terms",
       [](RunSettings& s, const std::string& v) {
         s.models.data_activity =
             number("data_activity", v, 1.0, "a number in [0, 1] (1: random data)");
       },
       [](JsonWriter& j, std::string_view key, const RunSettings& s) {
         j.field(key, s.models.data_activity);
       }},
      {"zeroed_operands",
       "on (the default): tensor-core work on operands a ReLU zeroed draws the device's "
       "tensor_power_zeroed1/2; off: the tensor power of random data (docs/design.md)",
       [](RunSettings& s, const std::string& v) {
         s.models.zeroed_operands = on_off("zeroed_operands", v);
       },
       [](JsonWriter& j, std::string_view key, const RunSettings& s) {
         j.field(key, s.models.zeroed_operands ? "on" : "off");
       }},
      {"resident_warps",
       "on (the default): batch-norm passes draw the busy term by the warps they keep on "
       "each SM; off: as if their blocks filled the SMs they occupy (docs/design.md)",
       [](RunSettings& s, const std::string& v) {
         s.models.resident_warps = on_off("resident_warps", v);
       },
       [](JsonWriter& j, std::string_view key, const RunSettings& s) {
         j.field(key, s.models.resident_warps ? "on" : "off");
       }},
      {"host_overhead",
       "profiler host-overhead correction of Kineto traces: off, auto (the default, 2.06) or "
       "a factor in [1, 100] (docs/validation.md)",
       [](RunSettings& s, const std::string& v) { s.host = parse_host_overhead(v); },
       [](JsonWriter& j, std::string_view key, const RunSettings& s) {
         j.field(key, s.host.spec());
       }},
      {"power_limit_w",
       "board power limit in W the firmware caps at, inside the device's "
       "power.limit_min_w..limit_max_w (default: its limit_w); summary.json gives the limit "
       "in force",
       [](RunSettings& s, const std::string& v) {
         s.power_limit_w =
             number("power_limit_w", v, 1e5, "a power in W inside the device's power-limit range");
       },
       [](JsonWriter& j, std::string_view key, const RunSettings& s) {
         override_field(j, key, s.power_limit_w);
       }},
  };
  return table;
}

const EngineSetting* find_engine_setting(std::string_view key) {
  for (const auto& s : engine_settings())
    if (s.name == key) return &s;
  return nullptr;
}

std::string engine_setting_names() {
  std::string out;
  for (const auto& s : engine_settings())
    out += fmt::format("{}{}", out.empty() ? "" : ", ", s.name);
  return out;
}

std::map<std::string, std::string> apply_engine_settings(
    const std::map<std::string, std::string>& settings, RunSettings& s) {
  std::map<std::string, std::string> rest;
  for (const auto& [key, value] : settings) {
    if (const EngineSetting* e = find_engine_setting(key))
      e->apply(s, value);
    else
      rest[key] = value;
  }
  return rest;
}

std::string engine_settings_help() {
  std::string out;
  for (const auto& s : engine_settings())
    out += fmt::format("    --set {}=...  (optional) {}\n", s.name, s.help);
  return out;
}

}  // namespace dvfsim
