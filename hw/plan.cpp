#include "hw/plan.h"

#include <fmt/format.h>
#include <simdjson.h>

#include <set>
#include <stdexcept>

#include "hw/files.h"
#include "sim/error.h"

namespace dvfsim::hw {
namespace {

constexpr int64_t kMaxMhz = 100'000;
constexpr int64_t kMaxWatts = 100'000;

using simdjson::dom::element;
using simdjson::dom::object;

// Builds InputErrors prefixed by the file name.
class PlanReader {
 public:
  explicit PlanReader(std::string origin) : origin_(std::move(origin)) {}

  [[noreturn]] void fail(const std::string& field, const std::string& message) const {
    throw InputError(fmt::format("{}: {}: {}", origin_, field, message));
  }

  std::string string_field(object obj, const char* key, const std::string& field,
                           bool required) const {
    element value;
    if (obj[key].get(value) != simdjson::SUCCESS) {
      if (required) fail(field, "missing (a string is required)");
      return {};
    }
    std::string_view text;
    if (value.get_string().get(text) != simdjson::SUCCESS) fail(field, "must be a string");
    return std::string(text);
  }

  // An integer in [min, max]; `fallback` when absent and not required.
  int64_t integer_field(object obj, const char* key, const std::string& field, bool required,
                        int64_t fallback, int64_t min, int64_t max) const {
    element value;
    if (obj[key].get(value) != simdjson::SUCCESS) {
      if (required) fail(field, "missing (an integer is required)");
      return fallback;
    }
    int64_t number = 0;
    if (value.get_int64().get(number) != simdjson::SUCCESS) fail(field, "must be an integer");
    if (number < min || number > max) {
      fail(field, fmt::format("{} is out of range [{}, {}]", number, min, max));
    }
    return number;
  }

  ClockSetting clocks(object obj, const std::string& field) const {
    check_keys(obj, {"core_mhz", "memory_mhz"}, field);
    ClockSetting setting;
    setting.core_mhz =
        static_cast<int>(integer_field(obj, "core_mhz", field + ".core_mhz", true, 0, 1, kMaxMhz));
    setting.memory_mhz = static_cast<int>(
        integer_field(obj, "memory_mhz", field + ".memory_mhz", false, 0, 0, kMaxMhz));
    return setting;
  }

  void check_keys(object obj, const std::set<std::string>& allowed,
                  const std::string& where) const {
    for (auto field : obj) {
      std::string key(field.key);
      if (allowed.count(key) == 0) {
        std::string names;
        for (const auto& name : allowed) names += (names.empty() ? "" : ", ") + name;
        fail(where.empty() ? key : where + "." + key,
             fmt::format("unknown key (expected one of: {})", names));
      }
    }
  }

  object as_object(element value, const std::string& field) const {
    object obj;
    if (value.get_object().get(obj) != simdjson::SUCCESS) fail(field, "must be an object");
    return obj;
  }

 private:
  std::string origin_;
};

const char* mode_name(ClockPlanMode mode) {
  return mode == ClockPlanMode::kTimeWindows ? "time-windows" : "per-phase";
}

std::string clocks_json(const ClockSetting& clocks) {
  if (clocks.memory_mhz == 0) return fmt::format("\"core_mhz\": {}", clocks.core_mhz);
  return fmt::format("\"core_mhz\": {}, \"memory_mhz\": {}", clocks.core_mhz, clocks.memory_mhz);
}

}  // namespace

ClockPlan parse_clock_plan(const std::string& json_text, const std::string& origin) {
  PlanReader reader(origin);
  simdjson::dom::parser parser;
  element root;
  auto error = parser.parse(simdjson::padded_string(json_text)).get(root);
  if (error != simdjson::SUCCESS) {
    throw InputError(fmt::format("{}: not valid JSON: {}", origin, simdjson::error_message(error)));
  }
  object top = reader.as_object(root, "top level");
  reader.check_keys(
      top,
      {"format", "device", "mode", "period_ms", "windows", "phases", "source", "power_limit_w"},
      "");

  std::string format = reader.string_field(top, "format", "format", true);
  if (format != kClockPlanFormat) {
    reader.fail("format",
                fmt::format("'{}' is not supported (expected '{}')", format, kClockPlanFormat));
  }
  ClockPlan plan;
  plan.device = reader.string_field(top, "device", "device", true);
  plan.source = reader.string_field(top, "source", "source", false);
  std::string mode = reader.string_field(top, "mode", "mode", true);
  if (mode == "time-windows") {
    plan.mode = ClockPlanMode::kTimeWindows;
  } else if (mode == "per-phase") {
    plan.mode = ClockPlanMode::kPerPhase;
  } else {
    reader.fail("mode",
                fmt::format("'{}' is not a mode (expected 'time-windows' or 'per-phase')", mode));
  }
  plan.period_ms =
      reader.integer_field(top, "period_ms", "period_ms", false, 0, 0, INT64_C(1) << 40);

  plan.power_limit_w = static_cast<int>(
      reader.integer_field(top, "power_limit_w", "power_limit_w", false, 0, 1, kMaxWatts));

  element windows;
  if (top["windows"].get(windows) == simdjson::SUCCESS) {
    simdjson::dom::array list;
    if (windows.get_array().get(list) != simdjson::SUCCESS) {
      reader.fail("windows", "must be an array");
    }
    size_t index = 0;
    for (element item : list) {
      std::string field = fmt::format("windows[{}]", index++);
      object obj = reader.as_object(item, field);
      reader.check_keys(obj, {"start_ms", "core_mhz", "memory_mhz"}, field);
      ClockWindow window;
      window.start_ms =
          reader.integer_field(obj, "start_ms", field + ".start_ms", true, 0, 0, INT64_C(1) << 40);
      window.clocks.core_mhz = static_cast<int>(
          reader.integer_field(obj, "core_mhz", field + ".core_mhz", true, 0, 1, kMaxMhz));
      window.clocks.memory_mhz = static_cast<int>(
          reader.integer_field(obj, "memory_mhz", field + ".memory_mhz", false, 0, 0, kMaxMhz));
      plan.windows.push_back(window);
    }
  }
  element phases;
  if (top["phases"].get(phases) == simdjson::SUCCESS) {
    object obj = reader.as_object(phases, "phases");
    for (auto field : obj) {
      std::string name(field.key);
      std::string where = "phases." + name;
      plan.phases[name] = reader.clocks(reader.as_object(field.value, where), where);
    }
  }
  validate_clock_plan(plan, origin);
  return plan;
}

ClockPlan load_clock_plan(const std::string& path) {
  std::string text;
  try {
    text = read_file(path);
  } catch (const std::exception& error) {
    throw InputError(fmt::format("clock plan: {}", error.what()));
  }
  return parse_clock_plan(text, path);
}

void validate_clock_plan(const ClockPlan& plan, const std::string& origin) {
  auto fail = [&](const std::string& field, const std::string& message) {
    throw InputError(fmt::format("{}: {}: {}", origin, field, message));
  };
  if (plan.device.empty()) fail("device", "must not be empty");
  if (plan.period_ms < 0) fail("period_ms", "must be >= 0");
  if (plan.power_limit_w < 0 || plan.power_limit_w > kMaxWatts) {
    fail("power_limit_w", "must be a power in W (1 to 100000; absent or 0 = unchanged)");
  }
  if (plan.mode == ClockPlanMode::kTimeWindows && plan.windows.empty()) {
    fail("windows", "a time-windows plan needs at least one window");
  }
  if (plan.mode == ClockPlanMode::kPerPhase && plan.phases.empty()) {
    fail("phases", "a per-phase plan needs at least one phase");
  }
  if (plan.mode == ClockPlanMode::kTimeWindows && !plan.phases.empty()) {
    fail("phases", "only per-phase plans have phases");
  }
  for (size_t i = 0; i < plan.windows.size(); ++i) {
    const ClockWindow& window = plan.windows[i];
    std::string field = fmt::format("windows[{}]", i);
    if (window.start_ms < 0) fail(field + ".start_ms", "must be >= 0");
    if (i > 0 && window.start_ms <= plan.windows[i - 1].start_ms) {
      fail(field + ".start_ms", fmt::format("{} does not come after the previous window's {}",
                                            window.start_ms, plan.windows[i - 1].start_ms));
    }
    if (plan.period_ms > 0 && window.start_ms >= plan.period_ms) {
      fail(field + ".start_ms",
           fmt::format("{} is not inside the period of {} ms", window.start_ms, plan.period_ms));
    }
    if (window.clocks.core_mhz <= 0 || window.clocks.core_mhz > kMaxMhz) {
      fail(field + ".core_mhz", "must be a clock in MHz (1 to 100000)");
    }
    if (window.clocks.memory_mhz < 0 || window.clocks.memory_mhz > kMaxMhz) {
      fail(field + ".memory_mhz", "must be a clock in MHz (0 = unlocked, up to 100000)");
    }
  }
  for (const auto& [name, clocks] : plan.phases) {
    if (name.empty()) fail("phases", "a phase name is empty");
    if (clocks.core_mhz <= 0 || clocks.core_mhz > kMaxMhz) {
      fail("phases." + name + ".core_mhz", "must be a clock in MHz (1 to 100000)");
    }
    if (clocks.memory_mhz < 0 || clocks.memory_mhz > kMaxMhz) {
      fail("phases." + name + ".memory_mhz", "must be a clock in MHz (0 = unlocked)");
    }
  }
}

std::string format_clock_plan(const ClockPlan& plan) {
  std::string out = "{\n";
  out += fmt::format("  \"format\": {},\n", json_quote(kClockPlanFormat));
  out += fmt::format("  \"device\": {},\n", json_quote(plan.device));
  if (!plan.source.empty()) out += fmt::format("  \"source\": {},\n", json_quote(plan.source));
  out += fmt::format("  \"mode\": \"{}\",\n", mode_name(plan.mode));
  if (plan.power_limit_w > 0) {
    out += fmt::format("  \"power_limit_w\": {},\n", plan.power_limit_w);
  }
  out += fmt::format("  \"period_ms\": {}", plan.period_ms);
  if (!plan.phases.empty()) {
    out += ",\n  \"phases\": {";
    bool first = true;
    for (const auto& [name, clocks] : plan.phases) {
      out += fmt::format("{}\n    {}: {{{}}}", first ? "" : ",", json_quote(name),
                         clocks_json(clocks));
      first = false;
    }
    out += "\n  }";
  }
  if (!plan.windows.empty()) {
    out += ",\n  \"windows\": [";
    for (size_t i = 0; i < plan.windows.size(); ++i) {
      const ClockWindow& window = plan.windows[i];
      out += fmt::format("{}\n    {{\"start_ms\": {}, {}}}", i == 0 ? "" : ",", window.start_ms,
                         clocks_json(window.clocks));
    }
    out += "\n  ]";
  }
  out += "\n}\n";
  return out;
}

void write_clock_plan(const ClockPlan& plan, const std::string& path) {
  validate_clock_plan(plan, path);
  write_file_atomic(path, format_clock_plan(plan));
}

}  // namespace dvfsim::hw
