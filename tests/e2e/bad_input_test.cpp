// Bad input gets a clear error naming the file and field, exit code 2, no crash.
#include <gtest/gtest.h>

#include <fstream>

#include "tests/e2e/run_util.h"

namespace dvfsim::testing {
namespace {

void write(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

std::string run_args(const std::string& trace,
                     const std::string& extra = "--device h200 --policy native") {
  return "run --trace " + trace + " " + extra + " --out " + temp_dir("bad-out");
}

void expect_error(const ProcessResult& r, std::initializer_list<const char*> needles) {
  EXPECT_EQ(r.exit_code, 2) << r.output;
  for (const char* n : needles)
    EXPECT_NE(r.output.find(n), std::string::npos) << n << "\n" << r.output;
  EXPECT_EQ(r.output.find("internal error"), std::string::npos) << r.output;
}

TEST(BadInput, TruncatedGzip) {
  const std::string dir = temp_dir("gz");
  std::ifstream in(DVFSIM_SHIPPED_TRACE, std::ios::binary);
  std::string data((std::istreambuf_iterator<char>(in)), {});
  write(dir + "/cut.json.gz", data.substr(0, data.size() / 3));
  expect_error(run_dvfsim(run_args(dir + "/cut.json.gz")), {"cut.json.gz"});
}

TEST(BadInput, InvalidJson) {
  const std::string dir = temp_dir("json");
  write(dir + "/broken.json", "{\"traceEvents\": [ {\"ph\": \"X\", ");
  expect_error(run_dvfsim(run_args(dir + "/broken.json")), {"broken.json"});
}

TEST(BadInput, MissingField) {
  const std::string dir = temp_dir("field");
  write(dir + "/nodur.json", R"({"deviceProperties":[{"name":"NVIDIA H200"}],"traceEvents":[)"
                             R"({"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":10.0,)"
                             R"("args":{"stream":7,"correlation":1,"device":0}}]})");
  expect_error(run_dvfsim(run_args(dir + "/nodur.json")), {"nodur.json", "dur"});
}

TEST(BadInput, MissingTraceFile) {
  expect_error(run_dvfsim(run_args("/nonexistent/trace.json.gz")), {"/nonexistent/trace.json.gz"});
}

TEST(BadInput, UnknownDevice) {
  expect_error(run_dvfsim(run_args(DVFSIM_SHIPPED_TRACE, "--device h999 --policy native")),
               {"unknown device 'h999'", "h200"});
}

TEST(BadInput, UnknownPolicy) {
  expect_error(run_dvfsim(run_args(DVFSIM_SHIPPED_TRACE, "--device h200 --policy turbo")),
               {"unknown policy 'turbo'", "native"});
}

TEST(BadInput, UnknownPolicyParameter) {
  expect_error(
      run_dvfsim(run_args(DVFSIM_SHIPPED_TRACE,
                          "--device h200 --policy static --set core_mhz=1200 --set corr_mhz=3")),
      {"unknown parameter 'corr_mhz'", "core_mhz"});
}

TEST(BadInput, MissingRequiredPolicyParameter) {
  expect_error(run_dvfsim(run_args(DVFSIM_SHIPPED_TRACE, "--device h200 --policy static")),
               {"'core_mhz' is required"});
}

TEST(BadInput, ImpossibleClock) {
  expect_error(run_dvfsim(run_args(DVFSIM_SHIPPED_TRACE,
                                   "--device h200 --policy static --set core_mhz=1234")),
               {"core clock 1234 MHz is not supported", "345..1980"});
}

TEST(BadInput, BadSwitchLatency) {
  expect_error(run_dvfsim(run_args(DVFSIM_SHIPPED_TRACE,
                                   "--device h200 --policy native --set switch_latency_us=fast")),
               {"switch_latency_us"});
}

TEST(BadInput, DataActivityOutsideZeroToOne) {
  expect_error(run_dvfsim(run_args(DVFSIM_SHIPPED_TRACE,
                                   "--device h200 --policy native --set data_activity=1.5")),
               {"data_activity=1.5", "[0, 1]"});
}

TEST(BadInput, ZeroedOperandsNeitherOnNorOff) {
  expect_error(run_dvfsim(run_args(DVFSIM_SHIPPED_TRACE,
                                   "--device h200 --policy native --set zeroed_operands=yes")),
               {"zeroed_operands=yes", "expected on or off"});
}

TEST(BadInput, ResidentWarpsNeitherOnNorOff) {
  expect_error(run_dvfsim(run_args(DVFSIM_SHIPPED_TRACE,
                                   "--device h200 --policy native --set resident_warps=1")),
               {"resident_warps=1", "expected on or off"});
}

TEST(BadInput, PowerLimitOutsideTheDevicesRange) {
  expect_error(run_dvfsim(run_args(DVFSIM_SHIPPED_TRACE,
                                   "--device h200 --policy static --set core_mhz=1410 "
                                   "--set power_limit_w=150")),
               {"power_limit_w=150", "200..700 W"});
}

TEST(BadInput, BadDeviceYaml) {
  const std::string dir = temp_dir("yaml");
  write(dir + "/gpu.yaml", "name: x\n  bad: [\n");
  expect_error(
      run_dvfsim(run_args(DVFSIM_SHIPPED_TRACE, "--device " + dir + "/gpu.yaml --policy native")),
      {"gpu.yaml"});
}

TEST(BadInput, NumberWithoutSourceInDeviceFile) {
  const std::string dir = temp_dir("nosource");
  std::string yaml = read_text(std::string(DVFSIM_SOURCE_DIR) + "/models/devices/h200.yaml");
  const std::string needle = "limit_w: {value: 700, source:";
  const auto at = yaml.find(needle);
  ASSERT_NE(at, std::string::npos);
  const auto end = yaml.find('\n', at);
  yaml.replace(at, end - at, "limit_w: {value: 700}");
  write(dir + "/h200.yaml", yaml);
  expect_error(
      run_dvfsim(run_args(DVFSIM_SHIPPED_TRACE, "--device " + dir + "/h200.yaml --policy native")),
      {"power.limit_w", "without a source"});
}

TEST(BadInput, UnwritableOutputDirectory) {
  const auto r = run_dvfsim(std::string("run --trace ") + DVFSIM_SHIPPED_TRACE +
                            " --device h200 --policy native --out /proc/dvfsim-cannot-write");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("/proc/dvfsim-cannot-write"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace dvfsim::testing
