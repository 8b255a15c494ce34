// Issue 14: command-line values and special files that were accepted and gave
// wrong numbers, wrapped silently, crashed or blocked. Each is refused with
// exit 2 and a message naming the option or file.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <string>

#include "tests/e2e/run_util.h"

namespace dvfsim::testing {
namespace {

const std::string kMini = std::string(DVFSIM_SOURCE_DIR) + "/tests/traces/data/mini_optimizer.json";

void expect_refused(const std::string& args, std::initializer_list<const char*> needles) {
  const ProcessResult r = run_dvfsim(args);
  EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.output;
  for (const char* n : needles)
    EXPECT_NE(r.output.find(n), std::string::npos) << n << "\n" << r.output;
  EXPECT_EQ(r.output.find("internal error"), std::string::npos) << r.output;
}

std::string run_with(const std::string& extra, const std::string& trace = kMini) {
  return "run --trace " + trace + " --device h200 " + extra + " --out " + temp_dir("harden-out");
}

TEST(Hardening, SwitchLatencyMustBeFiniteAndAtMostAnHour) {
  // Was: inf (or > 9.2e12 us) accepted; switches landed at -9.2e18 ns and a
  // policy was credited with savings it cannot have.
  for (const char* v : {"inf", "nan", "1e13", "3600000001", "-1"}) {
    SCOPED_TRACE(v);
    expect_refused(run_with(std::string("--policy native --set switch_latency_us=") + v),
                   {"--set switch_latency_us=", "[0, 3.6e9]"});
  }
  expect_refused(run_with("--policy native --set memory_stall_us=inf"),
                 {"--set memory_stall_us=inf"});
  const ProcessResult ok =
      run_dvfsim(run_with("--policy native --set switch_latency_us=3600000000"));
  EXPECT_EQ(ok.exit_code, 0) << ok.output;
}

TEST(Hardening, PolicyParametersMustBeFinite) {
  expect_refused(run_with("--policy kernel-oracle --set max_slowdown=inf"),
                 {"max_slowdown", "'inf' is not a finite number"});
  expect_refused(run_with("--policy kernel-oracle --set max_slowdown=nan"),
                 {"max_slowdown", "'nan' is not a finite number"});
}

TEST(Hardening, SpecialFilesAsTraceAreRefusedAtOnce) {
  // Was: a directory gave "internal error: std::bad_alloc"; /dev/zero read
  // forever; a FIFO blocked forever.
  const std::string dir = temp_dir("harden-special");
  const std::string fifo = dir + "/pipe.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const auto t0 = std::chrono::steady_clock::now();
  expect_refused(run_with("--policy native", dir), {"not a regular file (a directory)"});
  expect_refused(run_with("--policy native", "/dev/zero"), {"/dev/zero: not a regular file"});
  expect_refused(run_with("--policy native", fifo), {"pipe.json: not a regular file (a FIFO)"});
  expect_refused("trace info " + fifo, {"pipe.json: not a regular file (a FIFO)"});
  expect_refused(
      "run --trace " + kMini + " --device " + fifo + " --policy native --out " + dir + "/o",
      {"pipe.json: not a regular file (a FIFO)"});
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(20));
}

}  // namespace
}  // namespace dvfsim::testing
