#include "hw/plan.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "hw/plan_schedule.h"
#include "sim/error.h"

namespace dvfsim::hw {
namespace {

ClockPlan two_window_plan() {
  ClockPlan plan;
  plan.device = "h200";
  plan.period_ms = 500;
  plan.source = "dvfsim run --policy pass-level";
  plan.windows = {{0, {1410, 3201}}, {200, {1200, 0}}};
  return plan;
}

// The InputError message of parsing `json`, or "" if it parses.
std::string parse_error(const std::string& json) {
  try {
    parse_clock_plan(json, "plan.json");
  } catch (const InputError& error) {
    return error.what();
  }
  return "";
}

TEST(HwPlan, WriteThenLoadRoundTrips) {
  std::string path = (std::filesystem::temp_directory_path() /
                      ("dvfsim-hw-plan-" + std::to_string(::getpid()) + ".json"))
                         .string();
  ClockPlan plan = two_window_plan();
  write_clock_plan(plan, path);
  ClockPlan loaded = load_clock_plan(path);
  std::filesystem::remove(path);
  EXPECT_EQ(loaded.device, "h200");
  EXPECT_EQ(loaded.mode, ClockPlanMode::kTimeWindows);
  EXPECT_EQ(loaded.period_ms, 500);
  EXPECT_EQ(loaded.source, plan.source);
  ASSERT_EQ(loaded.windows.size(), 2u);
  EXPECT_EQ(loaded.windows[1].start_ms, 200);
  EXPECT_EQ(loaded.windows[1].clocks.core_mhz, 1200);
  EXPECT_EQ(loaded.windows[1].clocks.memory_mhz, 0);
  EXPECT_EQ(loaded.windows[0].clocks.memory_mhz, 3201);
}

TEST(HwPlan, PerPhasePlanParses) {
  ClockPlan plan = parse_clock_plan(R"({"format": "dvfsim-clock-plan/1", "device": "h200",
      "mode": "per-phase", "phases": {"forward": {"core_mhz": 1980, "memory_mhz": 3201},
      "backward": {"core_mhz": 1710}}})",
                                    "p.json");
  EXPECT_EQ(plan.mode, ClockPlanMode::kPerPhase);
  EXPECT_EQ(plan.phases.at("backward").core_mhz, 1710);
  EXPECT_EQ(plan.phases.at("forward").memory_mhz, 3201);
  EXPECT_EQ(parse_clock_plan(format_clock_plan(plan), "again.json").phases.size(), 2u);
}

TEST(HwPlan, ErrorsNameTheFileAndTheField) {
  const std::string head = R"({"format": "dvfsim-clock-plan/1", "device": "h200", )";
  EXPECT_EQ(parse_error("{"), parse_error("{"));  // not valid JSON
  EXPECT_NE(parse_error("{").find("plan.json: not valid JSON"), std::string::npos);
  EXPECT_NE(parse_error(R"({"device": "h200", "mode": "time-windows"})").find("plan.json: format"),
            std::string::npos);
  EXPECT_NE(parse_error(R"({"format": "dvfsim-clock-plan/2", "device": "h", "mode": "per-phase"})")
                .find("format: 'dvfsim-clock-plan/2' is not supported"),
            std::string::npos);
  EXPECT_NE(parse_error(head + R"("mode": "sometimes", "windows": []})").find("mode: 'sometimes'"),
            std::string::npos);
  EXPECT_NE(parse_error(head + R"("mode": "time-windows", "windows": []})").find("windows:"),
            std::string::npos);
  EXPECT_NE(parse_error(head + R"("mode": "time-windows", "windows": [{"start_ms": 0,
      "core_mhz": "fast"}]})")
                .find("plan.json: windows[0].core_mhz: must be an integer"),
            std::string::npos);
  EXPECT_NE(parse_error(head + R"("mode": "time-windows", "windows": [{"start_ms": 100,
      "core_mhz": 1410}, {"start_ms": 50, "core_mhz": 1200}]})")
                .find("windows[1].start_ms: 50 does not come after"),
            std::string::npos);
  EXPECT_NE(parse_error(head + R"("mode": "time-windows", "period_ms": 100,
      "windows": [{"start_ms": 100, "core_mhz": 1410}]})")
                .find("windows[0].start_ms: 100 is not inside the period"),
            std::string::npos);
  EXPECT_NE(parse_error(head + R"("mode": "time-windows", "windows": [{"start_ms": 0,
      "core_mhz": 1410, "memroy_mhz": 3201}]})")
                .find("windows[0].memroy_mhz: unknown key"),
            std::string::npos);
  EXPECT_NE(
      parse_error(
          head +
          R"("mode": "time-windows", "period_ms": -5, "windows": [{"start_ms": 0, "core_mhz": 1}]})")
          .find("period_ms: -5 is out of range"),
      std::string::npos);
  EXPECT_NE(parse_error(head + R"("mode": "per-phase"})").find("phases:"), std::string::npos);
}

TEST(HwPlan, MissingFileIsAnInputError) {
  try {
    load_clock_plan("/nonexistent/plan.json");
    FAIL() << "expected an InputError";
  } catch (const InputError& error) {
    EXPECT_NE(std::string(error.what()).find("/nonexistent/plan.json"), std::string::npos);
  }
}

TEST(HwPlan, WriteRefusesAnInvalidPlan) {
  ClockPlan plan = two_window_plan();
  plan.windows[1].start_ms = 0;
  EXPECT_THROW(write_clock_plan(plan, "/tmp/never-written.json"), InputError);
  EXPECT_FALSE(std::filesystem::exists("/tmp/never-written.json"));
}

TEST(HwPlanSchedule, OneShotPlanYieldsWindowsInOrder) {
  ClockPlan plan = two_window_plan();
  plan.period_ms = 0;
  plan.windows.push_back({300, {1200, 0}});  // same clocks: skipped
  plan.windows.push_back({400, {1980, 3201}});
  PlanSchedule schedule(plan);
  std::vector<int64_t> times;
  std::vector<int> cores;
  while (auto change = schedule.next()) {
    times.push_back(change->at_ms);
    cores.push_back(change->clocks.core_mhz);
  }
  EXPECT_EQ(times, (std::vector<int64_t>{0, 200, 400}));
  EXPECT_EQ(cores, (std::vector<int>{1410, 1200, 1980}));
}

TEST(HwPlanSchedule, PeriodicPlanRepeats) {
  PlanSchedule schedule(two_window_plan());
  std::vector<int64_t> times;
  for (int i = 0; i < 5; ++i) times.push_back(schedule.next()->at_ms);
  EXPECT_EQ(times, (std::vector<int64_t>{0, 200, 500, 700, 1000}));
}

TEST(HwPlanSchedule, PeriodicPlanWithOneSettingChangesOnce) {
  ClockPlan plan = two_window_plan();
  plan.windows = {{0, {1410, 3201}}, {100, {1410, 3201}}};
  PlanSchedule schedule(plan);
  EXPECT_TRUE(schedule.next().has_value());
  EXPECT_FALSE(schedule.next().has_value());
}

}  // namespace
}  // namespace dvfsim::hw
