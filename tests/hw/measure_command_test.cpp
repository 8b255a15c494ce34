// `dvfsim hw measure` through the test driver, against the fake NVML. The fake's
// power is constant, so the expected energy is power x the measured duration.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <sstream>

#include "process_util.h"

namespace dvfsim::hw::testing {
namespace {

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

struct Measurement {
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  double number(const char* key) { return root[key].get_double().value(); }
};

void load(Measurement& m, const std::string& text) {
  m.root = m.parser.parse(text).value();
}

TEST(HwMeasureCommand, ConstantPowerEnergyMatchesWithinUncertainty) {
  HwSandbox sandbox;
  sandbox.configure("power_w = 200\nenergy_tick_ms = 100\nreasons = 0x4");
  ProcessResult result = sandbox.run({"measure", "--out", sandbox.path("out"), "--", "sleep", "1"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  Measurement m;
  load(m, sandbox.read("out/measurement.json"));
  double duration_s = m.number("duration_s");
  double energy_j = m.number("energy_j");
  double uncertainty_j = m.number("energy_uncertainty_j");
  EXPECT_GE(duration_s, 1.0);
  EXPECT_LT(duration_s, 5.0);
  // By hand: 200 W for duration_s seconds.
  double expected_j = 200.0 * duration_s;
  EXPECT_LE(std::abs(energy_j - expected_j), uncertainty_j)
      << "energy " << energy_j << " expected " << expected_j;
  // Unaligned edges: at most one tick (0.1 s) plus a few samples of 200 W each side.
  EXPECT_LE(uncertainty_j, 2 * (0.1 + 0.05) * 200.0);
  EXPECT_NEAR(m.number("mean_power_w"), 200.0, uncertainty_j / duration_s);
  EXPECT_NEAR(m.number("counter_tick_period_s"), 0.1, 0.03);
  EXPECT_GE(m.root["sample_count"].get_int64().value(), 20);
  EXPECT_EQ(m.root["exit_code"].get_int64().value(), 0);
  EXPECT_EQ(std::string(m.root["device"].get_string().value()), "NVIDIA H200 (fake)");
  EXPECT_EQ(std::string(m.root["gpus"].at(0)["energy_method"].get_string().value()),
            "energy-counter");
  EXPECT_EQ(m.root["command"].at(0).get_string().value(), "sleep");

  std::istringstream csv(sandbox.read("out/samples.csv"));
  std::string header;
  std::getline(csv, header);
  EXPECT_EQ(header,
            "t_s,gpu,power_avg_w,power_instant_w,sm_mhz,mem_mhz,energy_j,reasons,reason_names");
  std::string row;
  int rows = 0;
  std::string last;
  while (std::getline(csv, row)) {
    ++rows;
    last = row;
  }
  EXPECT_GE(rows, 20);
  EXPECT_TRUE(contains(last, ",0,200.000,200.000,1980,3201,")) << last;
  EXPECT_TRUE(contains(last, ",0x4,SwPowerCap")) << last;
  EXPECT_FALSE(sandbox.exists("out/measurement.json.tmp." + std::to_string(0)));
}

TEST(HwMeasureCommand, ExitCodesPassThrough) {
  HwSandbox sandbox;
  EXPECT_EQ(sandbox.run({"measure", "--out", sandbox.path("a"), "--", "false"}).exit_code, 1);
  EXPECT_EQ(
      sandbox.run({"measure", "--out", sandbox.path("b"), "--", "sh", "-c", "exit 7"}).exit_code,
      7);
  // A child killed by a signal: 128 + signal, like a shell.
  EXPECT_EQ(sandbox.run({"measure", "--out", sandbox.path("c"), "--", "sh", "-c", "kill -TERM $$"})
                .exit_code,
            128 + 15);
  Measurement m;
  load(m, sandbox.read("c/measurement.json"));
  EXPECT_EQ(m.root["exit_code"].get_int64().value(), 143);
}

TEST(HwMeasureCommand, ACommandThatCannotRunGives127) {
  HwSandbox sandbox;
  ProcessResult result =
      sandbox.run({"measure", "--out", sandbox.path("o"), "--", "/nonexistent/command"});
  EXPECT_EQ(result.exit_code, 127);
  EXPECT_TRUE(contains(result.err, "cannot run '/nonexistent/command'")) << result.err;
}

TEST(HwMeasureCommand, MissingInstantPowerAndCounterAreNotedAndPowerIsIntegrated) {
  HwSandbox sandbox;
  sandbox.configure("instant_power = 0\nenergy_counter = 0\nreasons_supported = 0\npower_w = 150");
  ProcessResult result = sandbox.run(
      {"measure", "--interval-ms", "5", "--out", sandbox.path("o"), "--", "sleep", "0.3"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  std::string json = sandbox.read("o/measurement.json");
  EXPECT_TRUE(contains(json, "field 186")) << json;
  EXPECT_TRUE(contains(json, "no energy counter")) << json;
  EXPECT_TRUE(contains(json, "\"energy_method\": \"power-integral\"")) << json;
  Measurement m;
  load(m, json);
  EXPECT_NEAR(m.number("mean_power_w"), 150.0, 1.0);
  std::istringstream csv(sandbox.read("o/samples.csv"));
  std::string row;
  std::getline(csv, row);
  std::getline(csv, row);
  EXPECT_TRUE(contains(row, ",0,150.000,,")) << row;  // empty power_instant_w
}

TEST(HwMeasureCommand, SeveralGpusAreMeasuredSeparately) {
  HwSandbox sandbox;
  sandbox.configure("device_count = 2\npower_w = 100");
  ProcessResult result = sandbox.run({"measure", "--out", sandbox.path("o"), "--", "sleep", "0.5"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  Measurement m;
  load(m, sandbox.read("o/measurement.json"));
  EXPECT_EQ(m.root["gpus"].get_array().value().size(), 2u);
  EXPECT_LE(std::abs(m.number("energy_j") - 200.0 * m.number("duration_s")),
            m.number("energy_uncertainty_j"));
  ProcessResult one =
      sandbox.run({"measure", "--gpu", "1", "--out", sandbox.path("p"), "--", "true"});
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_TRUE(contains(sandbox.read("p/measurement.json"), "\"index\": 1"));
  EXPECT_EQ(
      sandbox.run({"measure", "--gpu", "2", "--out", sandbox.path("q"), "--", "true"}).exit_code,
      2);
}

TEST(HwMeasureCommand, NvmlErrorsAreReported) {
  struct Case {
    std::string config;
    std::string message;
  };
  std::vector<Case> cases = {
      {"error.nvmlDeviceGetPowerUsage = 15",
       "nvmlDeviceGetPowerUsage failed: GPU is lost (NVML error 15)"},
      {"error.nvmlDeviceGetClockInfo = 999",
       "nvmlDeviceGetClockInfo failed: Unknown Error (NVML error 999)"},
      {"error.nvmlDeviceGetTotalEnergyConsumption = 4",
       "nvmlDeviceGetTotalEnergyConsumption failed: Insufficient Permissions"},
      {"error.nvmlDeviceGetCurrentClocksEventReasons = 999",
       "nvmlDeviceGetCurrentClocksEventReasons failed: Unknown Error"},
      {"error.nvmlDeviceGetFieldValues = 999", "nvmlDeviceGetFieldValues failed: Unknown Error"},
      {"error.nvmlSystemGetDriverVersion = 999", "nvmlSystemGetDriverVersion failed"},
      // Mid-run: the first calls succeed, then the GPU falls off the bus.
      {"error_after.nvmlDeviceGetPowerUsage = 4\nerror.nvmlDeviceGetPowerUsage = 15",
       "nvmlDeviceGetPowerUsage failed: GPU is lost"},
  };
  for (const auto& c : cases) {
    HwSandbox sandbox;
    sandbox.configure(c.config);
    ProcessResult result =
        sandbox.run({"measure", "--out", sandbox.path("o"), "--", "sleep", "0.2"});
    EXPECT_EQ(result.exit_code, 2) << c.config;
    EXPECT_TRUE(contains(result.err, c.message)) << c.config << "\n" << result.err;
    EXPECT_TRUE(contains(result.err, "dvfsim hw measure: error:")) << result.err;
  }
}

}  // namespace
}  // namespace dvfsim::hw::testing
