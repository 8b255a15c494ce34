// `dvfsim hw apply` through the test driver, against the fake NVML, whose log
// records every clock set/reset call in order.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>

#include "process_util.h"

namespace dvfsim::hw::testing {
namespace {

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

const std::string kSetCore = "nvmlDeviceSetGpuLockedClocks gpu=0 ";
const std::string kSetMemory = "nvmlDeviceSetMemoryLockedClocks gpu=0 ";
const std::string kResetCore = "nvmlDeviceResetGpuLockedClocks gpu=0 rc=0";
const std::string kResetMemory = "nvmlDeviceResetMemoryLockedClocks gpu=0 rc=0";

std::string set_core(int mhz) {
  return kSetCore + "min=" + std::to_string(mhz) + " max=" + std::to_string(mhz) + " rc=0";
}
std::string set_memory(int mhz) {
  return kSetMemory + "min=" + std::to_string(mhz) + " max=" + std::to_string(mhz) + " rc=0";
}

// Three windows: 1410/3201 at 0 ms, 1200/2201 at 200 ms, 1980/3201 at 400 ms.
const char* kThreeWindowPlan = R"({
  "format": "dvfsim-clock-plan/1", "device": "h200", "mode": "time-windows", "period_ms": 0,
  "windows": [
    {"start_ms": 0, "core_mhz": 1410, "memory_mhz": 3201},
    {"start_ms": 200, "core_mhz": 1200, "memory_mhz": 2201},
    {"start_ms": 400, "core_mhz": 1980, "memory_mhz": 3201}
  ]
})";

const char* kOneWindowPlan = R"({
  "format": "dvfsim-clock-plan/1", "device": "h200", "mode": "time-windows",
  "windows": [{"start_ms": 0, "core_mhz": 1410}]
})";

std::vector<std::string> apply_args(const HwSandbox& sandbox, std::vector<std::string> command,
                                    bool allow = true) {
  std::vector<std::string> args = {"apply", "--plan", sandbox.path("plan.json")};
  if (allow) args.push_back("--allow-clock-changes");
  args.push_back("--");
  args.insert(args.end(), command.begin(), command.end());
  return args;
}

// The log ends with both resets, and nothing was set after them.
void expect_ends_reset(const std::vector<std::string>& calls) {
  ASSERT_GE(calls.size(), 2u);
  EXPECT_EQ(calls[calls.size() - 2], kResetCore);
  EXPECT_EQ(calls.back(), kResetMemory);
}

TEST(HwApplyCommand, RefusesWithoutAllowClockChanges) {
  HwSandbox sandbox;
  sandbox.write("plan.json", kThreeWindowPlan);
  ProcessResult result = sandbox.run(apply_args(sandbox, {"true"}, false));
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_TRUE(contains(result.err, "--allow-clock-changes")) << result.err;
  EXPECT_TRUE(sandbox.clock_calls().empty());
  EXPECT_FALSE(sandbox.exists("apply.marker"));
}

TEST(HwApplyCommand, SetsPlannedClocksInOrderThenResets) {
  HwSandbox sandbox;
  sandbox.write("plan.json", kThreeWindowPlan);
  ProcessResult result = sandbox.run(apply_args(sandbox, {"sleep", "0.7"}));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  std::vector<std::string> expected = {set_core(1410),   set_memory(3201), set_core(1200),
                                       set_memory(2201), set_core(1980),   set_memory(3201),
                                       kResetCore,       kResetMemory};
  EXPECT_EQ(sandbox.clock_calls(), expected);
  // Changes never come early: windows 2 and 3 are both timed from the plan's
  // start, so 200 ms lie between them. The first change can itself be late
  // under load (it marks the start only from above), so the gap after it is
  // bounded loosely: an early change would come at once (upper bounds would
  // be flaky).
  std::vector<long long> t = sandbox.clock_call_times_ns();
  ASSERT_EQ(t.size(), expected.size());
  EXPECT_GE(t[2] - t[0], 100'000'000);
  EXPECT_GE(t[4] - t[2], 190'000'000);
  EXPECT_FALSE(sandbox.exists("apply.marker"));
  EXPECT_TRUE(contains(result.err, "3 clock changes")) << result.err;
}

TEST(HwApplyCommand, AMeasureInsideTheApplyLeavesItsClocksAlone) {
  // docs/hw.md, "Closing the loop": `hw apply -- hw measure -- COMMAND`. The
  // inner hw command finds the apply's marker with its owner alive and does
  // not reset the clocks; the measurement is written, and the clocks are
  // reset once, by the apply, after the measure has ended.
  HwSandbox sandbox;
  sandbox.write("plan.json", kOneWindowPlan);
  ProcessResult result =
      sandbox.run(apply_args(sandbox, {DVFSIM_HW_TESTDRIVER, "hw", "measure", "--interval-ms", "5",
                                       "--out", sandbox.path("m"), "--", "sleep", "0.3"}));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_FALSE(contains(result.err, "stale clock marker")) << result.err;
  EXPECT_TRUE(sandbox.exists("m/measurement.json"));
  const std::vector<std::string> expected = {set_core(1410), kResetCore, kResetMemory};
  EXPECT_EQ(sandbox.clock_calls(), expected);
  EXPECT_FALSE(sandbox.exists("apply.marker"));
}

TEST(HwApplyCommand, RepeatingPlanCyclesUntilTheCommandEnds) {
  HwSandbox sandbox;
  sandbox.write("plan.json", R"({"format": "dvfsim-clock-plan/1", "device": "h200",
      "mode": "time-windows", "period_ms": 200,
      "windows": [{"start_ms": 0, "core_mhz": 1410}, {"start_ms": 100, "core_mhz": 1200}]})");
  ProcessResult result = sandbox.run(apply_args(sandbox, {"sleep", "0.65"}));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  std::vector<std::string> calls = sandbox.clock_calls();
  expect_ends_reset(calls);
  ASSERT_GE(calls.size(), 2u + 4u);  // at least 0, 100, 200, 300 ms, usually 7 changes
  for (size_t i = 0; i + 2 < calls.size(); ++i) {
    EXPECT_EQ(calls[i], set_core(i % 2 == 0 ? 1410 : 1200)) << i;  // memory never locked
  }
}

TEST(HwApplyCommand, ResetsWhenTheCommandIsKilledBySignal) {
  HwSandbox sandbox;
  sandbox.write("plan.json", kOneWindowPlan);
  ProcessResult result = sandbox.run(apply_args(sandbox, {"sh", "-c", "sleep 0.1; kill -KILL $$"}));
  EXPECT_EQ(result.exit_code, 128 + SIGKILL) << result.err;
  EXPECT_EQ(sandbox.clock_calls(),
            (std::vector<std::string>{set_core(1410), kResetCore, kResetMemory}));
  EXPECT_FALSE(sandbox.exists("apply.marker"));
}

TEST(HwApplyCommand, PassesTheExitCodeThrough) {
  HwSandbox sandbox;
  sandbox.write("plan.json", kOneWindowPlan);
  EXPECT_EQ(sandbox.run(apply_args(sandbox, {"sh", "-c", "exit 3"})).exit_code, 3);
  expect_ends_reset(sandbox.clock_calls());
}

class HwApplySignals : public ::testing::TestWithParam<int> {};

TEST_P(HwApplySignals, SignalToDvfsimIsForwardedAndClocksReset) {
  int signal_number = GetParam();
  HwSandbox sandbox;
  sandbox.write("plan.json", kOneWindowPlan);
  auto started = std::chrono::steady_clock::now();
  pid_t driver = sandbox.start(apply_args(sandbox, {"sleep", "20"}));
  ASSERT_TRUE(sandbox.wait_for_calls(1, 10.0));
  EXPECT_TRUE(sandbox.exists("apply.marker"));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // let sleep exec
  kill(driver, signal_number);
  ProcessResult result = sandbox.wait(driver);
  EXPECT_EQ(result.exit_code, 128 + signal_number) << result.err;  // sleep died of it
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(15));
  EXPECT_EQ(sandbox.clock_calls(),
            (std::vector<std::string>{set_core(1410), kResetCore, kResetMemory}));
  EXPECT_FALSE(sandbox.exists("apply.marker"));
}

INSTANTIATE_TEST_SUITE_P(IntAndTerm, HwApplySignals, ::testing::Values(SIGINT, SIGTERM),
                         [](const ::testing::TestParamInfo<int>& param) {
                           return param.param == SIGINT ? std::string("SIGINT")
                                                        : std::string("SIGTERM");
                         });

TEST(HwApplyCommand, AfterSigkillTheNextHwCommandResetsFromTheMarker) {
  HwSandbox sandbox;
  sandbox.write("plan.json", kOneWindowPlan);
  pid_t driver = sandbox.start(apply_args(sandbox, {"sleep", "20"}));
  ASSERT_TRUE(sandbox.wait_for_calls(1, 10.0));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  kill(driver, SIGKILL);
  EXPECT_EQ(sandbox.wait(driver).exit_code, 128 + SIGKILL);
  EXPECT_TRUE(sandbox.exists("apply.marker"));
  EXPECT_EQ(sandbox.clock_calls(), (std::vector<std::string>{set_core(1410)}));

  ProcessResult info = sandbox.run({"info"});
  EXPECT_EQ(info.exit_code, 0) << info.err;
  EXPECT_TRUE(contains(info.err, "stale clock marker")) << info.err;
  EXPECT_TRUE(contains(info.err, "from pid " + std::to_string(driver))) << info.err;
  EXPECT_TRUE(contains(info.err, "reset locked GPU and memory clocks on GPU 0")) << info.err;
  EXPECT_EQ(sandbox.clock_calls(),
            (std::vector<std::string>{set_core(1410), kResetCore, kResetMemory}));
  EXPECT_FALSE(sandbox.exists("apply.marker"));
  // Only once.
  ProcessResult again = sandbox.run({"info"});
  EXPECT_FALSE(contains(again.err, "stale")) << again.err;
}

// True while `pid` runs (a zombie has ended: only its parent has not reaped it).
bool process_alive(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const auto close = text.rfind(')');
  return close != std::string::npos && close + 2 < text.size() && text[close + 2] != 'Z' &&
         text[close + 2] != 'X';
}

TEST(HwApplyCommand, ACommandIgnoringSigtermDoesNotOutliveAKilledApply) {
  // Issue 14: after SIGKILL of apply, the command got only its parent-death
  // SIGTERM; one that ignores it ran on. The guard process sends SIGKILL 5 s later.
  HwSandbox sandbox;
  sandbox.write("plan.json", kOneWindowPlan);
  const std::string pid_file = sandbox.path("child.pid");
  pid_t driver =
      sandbox.start(apply_args(sandbox, {"sh", "-c",
                                         "trap '' TERM; echo $$ > " + pid_file + ".tmp; mv " +
                                             pid_file + ".tmp " + pid_file + "; exec sleep 60"}));
  ASSERT_TRUE(sandbox.wait_for_calls(1, 10.0));
  for (int i = 0; i < 200 && !sandbox.exists("child.pid"); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const pid_t child = static_cast<pid_t>(std::stol(sandbox.read("child.pid")));
  ASSERT_TRUE(process_alive(child));
  // The guard's grace period starts after the driver is dead, so after `sent` (a
  // strict lower bound, whatever the load) and about when wait() returns.
  const auto sent = std::chrono::steady_clock::now();
  kill(driver, SIGKILL);
  EXPECT_EQ(sandbox.wait(driver).exit_code, 128 + SIGKILL);
  const auto killed = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(std::chrono::seconds(1));
  EXPECT_TRUE(process_alive(child)) << "the command should ignore its SIGTERM";
  while (process_alive(child) &&
         std::chrono::steady_clock::now() - killed < std::chrono::seconds(15))
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const auto gone = std::chrono::steady_clock::now();
  EXPECT_FALSE(process_alive(child));
  // The 5 s grace period: at least 5 s after the SIGKILL was sent (measured from
  // there, a busy machine delaying this test cannot make it look shorter), and
  // not much more than 5 s after the driver was reaped.
  EXPECT_GE(std::chrono::duration<double>(gone - sent).count(), 4.95);
  EXPECT_LT(std::chrono::duration<double>(gone - killed).count(), 8.0);
  if (process_alive(child)) kill(child, SIGKILL);
}

TEST(HwApplyCommand, AFailingSetResetsAndReportsTheNvmlError) {
  HwSandbox sandbox;
  sandbox.configure(
      "error_after.nvmlDeviceSetGpuLockedClocks = 1\n"
      "error.nvmlDeviceSetGpuLockedClocks = 4");
  sandbox.write("plan.json", kThreeWindowPlan);
  ProcessResult result = sandbox.run(apply_args(sandbox, {"sleep", "5"}));
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_TRUE(contains(result.err,
                       "nvmlDeviceSetGpuLockedClocks failed: Insufficient "
                       "Permissions (NVML error 4)"))
      << result.err;
  std::vector<std::string> calls = sandbox.clock_calls();
  expect_ends_reset(calls);
  EXPECT_EQ(calls[0], set_core(1410));
  EXPECT_FALSE(sandbox.exists("apply.marker"));
}

TEST(HwApplyCommand, AFailingResetIsReportedAndTheMarkerStays) {
  HwSandbox sandbox;
  sandbox.configure("error.nvmlDeviceResetGpuLockedClocks = 4");
  sandbox.write("plan.json", kOneWindowPlan);
  ProcessResult result = sandbox.run(apply_args(sandbox, {"true"}));
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_TRUE(contains(result.err,
                       "nvmlDeviceResetGpuLockedClocks failed: Insufficient "
                       "Permissions"))
      << result.err;
  EXPECT_TRUE(sandbox.exists("apply.marker"));
  // The memory reset was still attempted.
  EXPECT_EQ(sandbox.clock_calls().back(), kResetMemory);
}

TEST(HwApplyCommand, AMissingMemoryResetIsToleratedWhenNotSupported) {
  HwSandbox sandbox;
  sandbox.configure("error.nvmlDeviceResetMemoryLockedClocks = 3");
  sandbox.write("plan.json", kOneWindowPlan);
  ProcessResult result = sandbox.run(apply_args(sandbox, {"true"}));
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_FALSE(sandbox.exists("apply.marker"));
}

TEST(HwApplyCommand, RejectsClocksTheGpuDoesNotSupportBeforeTouchingAny) {
  HwSandbox sandbox;
  sandbox.write("plan.json", R"({"format": "dvfsim-clock-plan/1", "device": "h200",
      "mode": "time-windows", "windows": [{"start_ms": 0, "core_mhz": 1410},
      {"start_ms": 10, "core_mhz": 2500}]})");
  ProcessResult result = sandbox.run(apply_args(sandbox, {"true"}));
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_TRUE(contains(result.err, "windows[1].core_mhz: 2500 MHz is outside")) << result.err;
  sandbox.write("plan.json", R"({"format": "dvfsim-clock-plan/1", "device": "h200",
      "mode": "time-windows", "windows": [{"start_ms": 0, "core_mhz": 1410, "memory_mhz": 1000}]})");
  result = sandbox.run(apply_args(sandbox, {"true"}));
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_TRUE(contains(result.err, "windows[0].memory_mhz: 1000 MHz is not a memory clock"))
      << result.err;
  EXPECT_TRUE(sandbox.clock_calls().empty());
}

TEST(HwApplyCommand, RefusesAPerPhasePlanWithoutWindows) {
  HwSandbox sandbox;
  sandbox.write("plan.json", R"({"format": "dvfsim-clock-plan/1", "device": "h200",
      "mode": "per-phase", "phases": {"forward": {"core_mhz": 1410}}})");
  ProcessResult result = sandbox.run(apply_args(sandbox, {"true"}));
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_TRUE(contains(result.err, "phase signal")) << result.err;
  EXPECT_TRUE(sandbox.clock_calls().empty());
}

TEST(HwApplyCommand, RefusesWhileAnotherApplyHoldsTheMarker) {
  HwSandbox sandbox;
  sandbox.write("plan.json", kOneWindowPlan);
  // This test process is alive, so its marker is not stale.
  sandbox.write("apply.marker", "pid=" + std::to_string(getpid()) + "\ngpus=0\n");
  ProcessResult result = sandbox.run(apply_args(sandbox, {"true"}));
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_TRUE(contains(result.err, "another dvfsim hw apply")) << result.err;
  EXPECT_TRUE(sandbox.clock_calls().empty());
  EXPECT_TRUE(sandbox.exists("apply.marker"));
}

TEST(HwApplyCommand, AnUnreadableStaleMarkerResetsAllGpus) {
  HwSandbox sandbox;
  sandbox.configure("device_count = 2");
  sandbox.write("apply.marker", "garbage\n");
  ProcessResult result = sandbox.run({"info"});
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_TRUE(contains(result.err, "unreadable clock marker")) << result.err;
  EXPECT_EQ(sandbox.clock_calls().size(), 4u);
  EXPECT_FALSE(sandbox.exists("apply.marker"));
}

// Power limits: 700 W before (the fake's default), constraints 200-700 W.
std::string set_limit(int watts) {
  return "nvmlDeviceSetPowerManagementLimit gpu=0 mw=" + std::to_string(watts * 1000) + " rc=0";
}

TEST(HwApplyCommand, SetsThePowerLimitAndRestoresThePreviousOne) {
  HwSandbox sandbox;
  sandbox.configure("power_limit_w = 650");  // a user's own limit, not the default
  sandbox.write("plan.json", kOneWindowPlan);
  std::vector<std::string> args = apply_args(sandbox, {"true"});
  args.insert(args.begin() + 1, {"--power-limit", "300"});
  ProcessResult result = sandbox.run(args);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  // Limit before the clocks, so the command starts capped; 650 W back at the end.
  EXPECT_EQ(sandbox.clock_calls(),
            (std::vector<std::string>{set_limit(300), set_core(1410), kResetCore, kResetMemory,
                                      set_limit(650)}));
  EXPECT_TRUE(contains(result.err, "at a 300 W power limit")) << result.err;
  EXPECT_FALSE(sandbox.exists("apply.marker"));
}

TEST(HwApplyCommand, ThePlansPowerLimitIsUsedAndRestoredWhenTheCommandIsKilled) {
  HwSandbox sandbox;
  sandbox.write("plan.json", R"({"format": "dvfsim-clock-plan/1", "device": "h200",
      "mode": "time-windows", "power_limit_w": 450, "windows": [{"start_ms": 0, "core_mhz": 1410}]})");
  ProcessResult result = sandbox.run(apply_args(sandbox, {"sh", "-c", "sleep 0.1; kill -KILL $$"}));
  EXPECT_EQ(result.exit_code, 128 + SIGKILL) << result.err;
  EXPECT_EQ(sandbox.clock_calls(),
            (std::vector<std::string>{set_limit(450), set_core(1410), kResetCore, kResetMemory,
                                      set_limit(700)}));
}

TEST(HwApplyCommand, RefusesAPowerLimitOutsideTheGpusRangeBeforeTouchingAnything) {
  HwSandbox sandbox;
  sandbox.write("plan.json", kOneWindowPlan);
  std::vector<std::string> args = apply_args(sandbox, {"true"});
  args.insert(args.begin() + 1, {"--power-limit", "150"});
  ProcessResult result = sandbox.run(args);
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_TRUE(contains(result.err, "power limit 150 W is outside GPU 0's allowed range 200–700 W"))
      << result.err;
  EXPECT_TRUE(sandbox.clock_calls().empty());
  EXPECT_FALSE(sandbox.exists("apply.marker"));
}

TEST(HwApplyCommand, AfterSigkillTheNextHwCommandRestoresThePowerLimitFromTheMarker) {
  HwSandbox sandbox;
  sandbox.write("plan.json", kOneWindowPlan);
  std::vector<std::string> args = apply_args(sandbox, {"sleep", "20"});
  args.insert(args.begin() + 1, {"--power-limit", "400"});
  pid_t driver = sandbox.start(args);
  ASSERT_TRUE(sandbox.wait_for_calls(2, 10.0));
  EXPECT_TRUE(contains(sandbox.read("apply.marker"), "power_limits_mw=0:700000"));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  kill(driver, SIGKILL);
  EXPECT_EQ(sandbox.wait(driver).exit_code, 128 + SIGKILL);
  ProcessResult info = sandbox.run({"info"});
  EXPECT_EQ(info.exit_code, 0) << info.err;
  EXPECT_TRUE(contains(info.err, "restored the power limit of GPU 0 to 700 W")) << info.err;
  EXPECT_EQ(sandbox.clock_calls(),
            (std::vector<std::string>{set_limit(400), set_core(1410), kResetCore, kResetMemory,
                                      set_limit(700)}));
  EXPECT_FALSE(sandbox.exists("apply.marker"));
}

TEST(HwApplyCommand, AFailingPowerLimitSetStillResetsEverything) {
  HwSandbox sandbox;
  sandbox.configure("error.nvmlDeviceSetPowerManagementLimit = 4");
  sandbox.write("plan.json", kOneWindowPlan);
  std::vector<std::string> args = apply_args(sandbox, {"true"});
  args.insert(args.begin() + 1, {"--power-limit", "300"});
  ProcessResult result = sandbox.run(args);
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_TRUE(contains(result.err,
                       "nvmlDeviceSetPowerManagementLimit failed: Insufficient "
                       "Permissions"))
      << result.err;
  // The limit never changed, so there is nothing to restore; the clocks are reset anyway.
  EXPECT_EQ(sandbox.clock_calls(),
            (std::vector<std::string>{"nvmlDeviceSetPowerManagementLimit gpu=0 mw=300000 rc=4",
                                      kResetCore, kResetMemory}));
  EXPECT_FALSE(sandbox.exists("apply.marker"));
}

}  // namespace
}  // namespace dvfsim::hw::testing
