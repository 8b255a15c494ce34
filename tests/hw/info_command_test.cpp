// `dvfsim hw info` through the test driver, against the fake NVML.
#include <gtest/gtest.h>

#include <ostream>

#include "process_util.h"

namespace dvfsim::hw::testing {
namespace {

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(HwInfoCommand, WithoutNvmlFailsNamingNvmlAndThePath) {
  HwSandbox sandbox;
  sandbox.env["DVFSIM_NVML_LIBRARY"] = "/nonexistent/libnvidia-ml.so.1";
  ProcessResult result = sandbox.run({"info"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_TRUE(contains(result.err, "NVML")) << result.err;
  EXPECT_TRUE(contains(result.err, "/nonexistent/libnvidia-ml.so.1")) << result.err;
  EXPECT_TRUE(contains(result.err, "DVFSIM_NVML_LIBRARY")) << result.err;
}

TEST(HwInfoCommand, PrintsClocksPowerAndReasons) {
  HwSandbox sandbox;
  sandbox.configure("reasons = 0x5\npower_w = 121.5\nsm_mhz = 1755");
  ProcessResult result = sandbox.run({"info"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const std::string& out = result.out;
  EXPECT_TRUE(contains(out, "driver: 580.00-fake")) << out;
  EXPECT_TRUE(contains(out, "GPU 0: NVIDIA H200 (fake)")) << out;
  EXPECT_TRUE(contains(out, "memory clocks: 2201, 3201 MHz (2 values)")) << out;
  EXPECT_TRUE(contains(out, "345–1980 MHz step 15 (110 values)")) << out;
  EXPECT_TRUE(contains(out, "power limit: 700 W (constraints 200–700 W)")) << out;
  EXPECT_TRUE(contains(out, "SM 1755 MHz, memory 3201 MHz")) << out;
  EXPECT_TRUE(contains(out, "121.5 W")) << out;
  EXPECT_TRUE(contains(out, "clock-event reasons: 0x5 (GpuIdle, SwPowerCap)")) << out;
}

TEST(HwInfoCommand, GraphicsClocksPerMemoryClockWhenTheyDiffer) {
  HwSandbox sandbox;
  sandbox.configure(
      "memory_clocks = 9501,810,405\ngraphics_clocks = 210:2100:15\n"
      "graphics_clocks.405 = 210:420:15\ndevice_count = 2");
  ProcessResult result = sandbox.run({"info"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_TRUE(contains(result.out, "GPUs: 2")) << result.out;
  EXPECT_TRUE(contains(result.out, "GPU 1: NVIDIA H200 (fake)")) << result.out;
  EXPECT_TRUE(contains(result.out, "at memory 9501 MHz: 210–2100 MHz step 15 (127 values)"))
      << result.out;
  EXPECT_TRUE(contains(result.out, "at memory 405 MHz: 210–420 MHz step 15 (15 values)"))
      << result.out;
}

struct InjectedError {
  const char* call;
  int code;
  const char* nvml_text;
  int exit_code;  // 0: info goes on and prints the error in place
};

void PrintTo(const InjectedError& injected, std::ostream* out) {
  *out << injected.call << " -> " << injected.code;
}

class HwInfoNvmlErrors : public ::testing::TestWithParam<InjectedError> {};

TEST_P(HwInfoNvmlErrors, MessageNamesTheCallAndNvmlsText) {
  const InjectedError& injected = GetParam();
  HwSandbox sandbox;
  sandbox.configure(std::string("error.") + injected.call + " = " + std::to_string(injected.code));
  ProcessResult result = sandbox.run({"info"});
  EXPECT_EQ(result.exit_code, injected.exit_code);
  std::string expected = std::string(injected.call) + " failed: " + injected.nvml_text +
                         " (NVML error " + std::to_string(injected.code) + ")";
  EXPECT_TRUE(contains(result.out + result.err, expected)) << result.out << result.err;
}

INSTANTIATE_TEST_SUITE_P(
    Calls, HwInfoNvmlErrors,
    ::testing::Values(
        InjectedError{"nvmlInit_v2", 9, "Driver Not Loaded", 2},
        InjectedError{"nvmlDeviceGetCount_v2", 999, "Unknown Error", 2},
        InjectedError{"nvmlDeviceGetHandleByIndex_v2", 15, "GPU is lost", 2},
        InjectedError{"nvmlDeviceGetName", 2, "Invalid Argument", 2},
        InjectedError{"nvmlSystemGetDriverVersion", 999, "Unknown Error", 0},
        InjectedError{"nvmlDeviceGetSupportedMemoryClocks", 3, "Not Supported", 0},
        InjectedError{"nvmlDeviceGetSupportedGraphicsClocks", 4, "Insufficient Permissions", 0},
        InjectedError{"nvmlDeviceGetPowerManagementLimit", 4, "Insufficient Permissions", 0},
        InjectedError{"nvmlDeviceGetPowerManagementLimitConstraints", 3, "Not Supported", 0},
        InjectedError{"nvmlDeviceGetClockInfo", 999, "Unknown Error", 0},
        InjectedError{"nvmlDeviceGetPowerUsage", 3, "Not Supported", 0},
        InjectedError{"nvmlDeviceGetFieldValues", 999, "Unknown Error", 0},
        InjectedError{"nvmlDeviceGetTotalEnergyConsumption", 3, "Not Supported", 0},
        InjectedError{"nvmlDeviceGetCurrentClocksEventReasons", 999, "Unknown Error", 0}),
    [](const ::testing::TestParamInfo<InjectedError>& param) {
      return std::string(param.param.call);
    });

}  // namespace
}  // namespace dvfsim::hw::testing
