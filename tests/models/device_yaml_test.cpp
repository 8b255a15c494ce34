#include "models/device_yaml.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "sim/error.h"

namespace dvfsim {
namespace {

std::string h200_text() {
  std::ifstream in(std::string(DVFSIM_SOURCE_DIR) + "/models/devices/h200.yaml");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string error_of(const std::string& yaml) {
  try {
    load_device_yaml(yaml, "test.yaml");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

std::string replace(std::string s, const std::string& from, const std::string& to) {
  const auto at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) s.replace(at, from.size(), to);
  return s;
}

TEST(DeviceYaml, H200LoadsWithTheMeasuredClocks) {
  const LoadedDevice ld = load_device_yaml(h200_text(), "h200.yaml");
  const Device& d = ld.device;
  EXPECT_EQ(d.core_clocks_mhz.size(), 110u);
  EXPECT_EQ(d.core_clocks_mhz.front(), 345);
  EXPECT_EQ(d.core_clocks_mhz.back(), 1980);
  EXPECT_EQ(d.memory_clocks_mhz, (std::vector<std::int32_t>{2201, 3201}));
  EXPECT_DOUBLE_EQ(d.power.limit_w, 700.0);
  // 132 SMs x 4096 FLOP/clock x 1.485 GHz = 803 TFLOP/s; measured 788 is 98 % of it.
  EXPECT_NEAR(d.tensor_flops_per_s(1485) / 1e12, 802.9, 0.1);
  EXPECT_GE(ld.sources.size(), 29u);
  for (const auto& s : ld.sources) EXPECT_FALSE(s.source.empty()) << s.field;
}

TEST(DeviceYaml, VoltageCurveIsMonotoneAndInterpolates) {
  const Device d = load_device_yaml(h200_text(), "h200.yaml").device;
  double last = 0;
  for (auto f : d.core_clocks_mhz) {
    EXPECT_GE(d.volts(f), last) << f;
    last = d.volts(f);
  }
  // Calibrated shape: flat 0.64 V to 495 MHz, then linear to 1.00 V at 1980 MHz.
  EXPECT_DOUBLE_EQ(d.volts(345), 0.64);
  EXPECT_DOUBLE_EQ(d.volts(495), 0.64);
  EXPECT_NEAR(d.volts(1237), 0.82, 0.001);  // about halfway between 495 and 1980
  EXPECT_DOUBLE_EQ(d.volts(1980), 1.00);
}

TEST(DeviceYaml, NumberWithoutSourceIsRejectedNamingTheField) {
  const std::string e = error_of(
      replace(h200_text(), "sm_count: {value: 132, source:", "sm_count: {value: 132, note:"));
  EXPECT_NE(e.find("compute.sm_count"), std::string::npos) << e;
  EXPECT_NE(e.find("without a source"), std::string::npos) << e;
}

TEST(DeviceYaml, SourceMustSayWhatKindItIs) {
  const std::string e =
      error_of(replace(h200_text(), "source: \"measured: NVML power limit", "source: \"trust me"));
  EXPECT_NE(e.find("power.limit_w.source"), std::string::npos) << e;
}

TEST(DeviceYaml, NonMonotoneVoltageCurveIsRejected) {
  const std::string e = error_of(replace(h200_text(), "[1980, 1.00]", "[1980, 0.60]"));
  EXPECT_NE(e.find("not monotone"), std::string::npos) << e;
}

TEST(DeviceYaml, UnknownKeyIsRejectedWithTheValidOnes) {
  const std::string e = error_of(replace(
      h200_text(), "  limit_w:", "  limt_w: {value: 1, source: \"assumption: x\"}\n  limit_w:"));
  EXPECT_NE(e.find("power.limt_w"), std::string::npos) << e;
  EXPECT_NE(e.find("limit_w"), std::string::npos) << e;
}

TEST(DeviceYaml, DefaultClocksMustBeSupported) {
  const std::string e =
      error_of(replace(h200_text(), "default: {core_mhz: 1980", "default: {core_mhz: 1990"));
  EXPECT_NE(e.find("clocks.default"), std::string::npos) << e;
  EXPECT_NE(e.find("1990"), std::string::npos) << e;
}

TEST(DeviceYaml, InvalidYamlNamesFileAndLine) {
  const std::string e = error_of("name: x\n  - [\n");
  EXPECT_NE(e.find("test.yaml:"), std::string::npos) << e;
}

TEST(DeviceYaml, UnknownDeviceListsTheKnownOnes) {
  try {
    load_device("no-such-gpu");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("h200"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace dvfsim
