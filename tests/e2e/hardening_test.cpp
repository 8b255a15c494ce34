// Issue 14: command-line values and special files that were accepted and gave
// wrong numbers, wrapped silently, crashed or blocked. Each is refused with
// exit 2 and a message naming the option or file.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
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

TEST(Hardening, SeedMustBeAWholeNumberThatFits) {
  // Was: --seed 2^64 became 2^64 - 1 and -1 wrapped to 2^64 - 1, silently.
  for (const char* seed : {"-1", "18446744073709551616", "1e3", "0x10", ""}) {
    SCOPED_TRACE(seed);
    expect_refused(run_with(std::string("--policy native --seed '") + seed + "'"),
                   {"--seed", "[0, 18446744073709551615]"});
  }
  const ProcessResult ok = run_dvfsim(run_with("--policy native --seed 18446744073709551615"));
  EXPECT_EQ(ok.exit_code, 0) << ok.output;
}

TEST(Hardening, RowsAndToleranceMustBeInRange) {
  expect_refused(run_with("--policy native --rows -1"), {"--rows"});
  const std::string measured =
      std::string(DVFSIM_SOURCE_DIR) + "/traces/data/gpt3xl_h200_train_b4_t2048.measured.json";
  for (const char* tol : {"-5", "nan", "inf", "1e9"}) {
    SCOPED_TRACE(tol);
    expect_refused("hw validate --trace " + kMini + " --measured " + measured +
                       " --device h200 --tolerance " + tol,
                   {"--tolerance", "[0, 1000]"});
  }
}

// A pid that has just ended: a writer killed before it could clean up.
long dead_pid() {
  const pid_t p = ::fork();
  if (p == 0) ::_exit(0);
  int status = 0;
  ::waitpid(p, &status, 0);
  return static_cast<long>(p);
}

TEST(Hardening, ARunReplacingAnotherNeverLeavesTheOldSummary) {
  // Was: `run --out DIR` killed while it replaced an earlier run left the old
  // summary.json beside the new CSV files (12 of 16 kills), and killed runs
  // left *.tmp.<pid> files forever. The run below fails while writing
  // (trace.json is a directory), as a killed one would stop.
  const std::string dir = temp_dir("harden-replace");
  const std::string out = dir + "/out";
  ASSERT_EQ(
      run_dvfsim("run --trace " + kMini + " --device h200 --policy native --out " + out).exit_code,
      0);
  ASSERT_TRUE(std::filesystem::exists(out + "/summary.json"));
  const std::string stale = out + "/kernels.csv.tmp." + std::to_string(dead_pid());
  std::ofstream(stale) << "half a file";
  std::filesystem::remove(out + "/trace.json");
  std::filesystem::create_directory(out + "/trace.json");
  std::ofstream(out + "/trace.json/keep") << "x";
  const ProcessResult r =
      run_dvfsim("run --trace " + kMini + " --device h200 --policy static-best --out " + out);
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_FALSE(std::filesystem::exists(out + "/summary.json"))
      << "an old summary.json beside the new kernels.csv";
  EXPECT_FALSE(std::filesystem::exists(stale));
  for (const auto& e : std::filesystem::directory_iterator(out))
    EXPECT_EQ(e.path().filename().string().find(".tmp."), std::string::npos) << e.path();
  // Once the obstacle is gone the directory holds the new run, summary last.
  std::filesystem::remove_all(out + "/trace.json");
  ASSERT_EQ(run_dvfsim("run --trace " + kMini + " --device h200 --policy static-best --out " + out)
                .exit_code,
            0);
  EXPECT_NE(read_text(out + "/summary.json").find("\"policy\": \"static-best\""),
            std::string::npos);
}

std::string small_experiment(const std::string& dir) {
  const std::string path = dir + "/e.yaml";
  std::ofstream(path) << "traces: [" << kMini << "]\ndevices: [h200]\npolicies: [native]\n";
  return path;
}

TEST(Hardening, ASecondSweepOnTheSameDirectorySaysWhoHoldsItAndExits2) {
  // Was: two sweeps on one --out had no lock: spurious failed runs and a
  // results.csv saying "failed" for a run complete on disk.
  const std::string dir = temp_dir("harden-lock");
  const std::string exp = small_experiment(dir);
  const std::string out = dir + "/out";
  std::filesystem::create_directories(out);
  // Stand in for a running sweep: hold the lock the way dvfsim does.
  const int fd = ::open((out + "/.dvfsim.lock").c_str(), O_RDWR | O_CREAT, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX | LOCK_NB), 0);
  const std::string holder = "pid 4242, since 2026-12-01T09:00:00Z: dvfsim sweep e.yaml\n";
  ASSERT_EQ(::write(fd, holder.data(), holder.size()), static_cast<ssize_t>(holder.size()));
  expect_refused("sweep " + exp + " --out " + out + " --no-progress",
                 {"in use by another dvfsim (pid 4242, since 2026-12-01T09:00:00Z: dvfsim sweep "
                  "e.yaml)",
                  "choose another --out"});
  EXPECT_FALSE(std::filesystem::exists(out + "/results.csv"));
  ::close(fd);  // the holder ends: the lock is free again, no stale file to remove
  const ProcessResult ok = run_dvfsim("sweep " + exp + " --out " + out + " --no-progress");
  EXPECT_EQ(ok.exit_code, 0) << ok.output;
  EXPECT_NE(read_text(out + "/.dvfsim.lock").find("dvfsim sweep"), std::string::npos);
}

TEST(Hardening, AnExperimentOfBillionsOfRunsIsRefusedAtOnce) {
  // 2000^3 = 8e9 points: was a hang while memory grew.
  const std::string dir = temp_dir("harden-product");
  std::ofstream f(dir + "/e.yaml");
  f << "traces: [" << kMini << "]\ndevices: [h200]\npolicies:\n  - name: kernel-oracle\n"
    << "    set:\n";
  for (const char* k : {"max_slowdown", "switch_latency_us", "memory_stall_us"}) {
    f << "      " << k << ": [";
    for (int i = 0; i < 2000; ++i) f << (i ? "," : "") << i;
    f << "]\n";
  }
  f.close();
  const auto t0 = std::chrono::steady_clock::now();
  expect_refused("sweep " + dir + "/e.yaml --out " + dir + "/out --dry-run",
                 {"8000000000 runs", "at most 100000"});
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10));
}

}  // namespace
}  // namespace dvfsim::testing
