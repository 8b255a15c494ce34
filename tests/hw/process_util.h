#pragma once
// Helpers for the hw command tests: a scratch directory with a fake-NVML
// configuration, and running dvfsim_hw_testdriver as a child process.
#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

namespace dvfsim::hw::testing {

struct ProcessResult {
  int exit_code = -1;  // 128 + signal if killed
  std::string out;
  std::string err;
};

// A temporary directory with the environment that points the driver at the fake NVML.
class HwSandbox {
 public:
  HwSandbox();
  ~HwSandbox();
  HwSandbox(const HwSandbox&) = delete;
  HwSandbox& operator=(const HwSandbox&) = delete;

  const std::string& dir() const { return dir_; }
  std::string path(const std::string& name) const { return dir_ + "/" + name; }
  std::string marker_path() const { return path("apply.marker"); }
  std::string log_path() const { return path("nvml.log"); }

  // Appends "key = value" lines to the fake's config.
  void configure(const std::string& lines);
  void write(const std::string& name, const std::string& content) const;
  std::string read(const std::string& name) const;
  bool exists(const std::string& name) const;

  // Environment overrides for the driver (DVFSIM_NVML_LIBRARY, FAKE_NVML_CONFIG,
  // FAKE_NVML_LOG, DVFSIM_HW_MARKER); tests may change entries.
  std::map<std::string, std::string> env;

  // Starts `dvfsim_hw_testdriver hw ARGS...` with stdout/stderr to files.
  pid_t start(const std::vector<std::string>& args);
  // Waits for a started driver and collects its output.
  ProcessResult wait(pid_t pid);
  ProcessResult run(const std::vector<std::string>& args) { return wait(start(args)); }

  // The set/reset calls in the fake's log, one per line, without the timestamp and pid.
  std::vector<std::string> clock_calls() const;
  // Timestamps (ns) of the log's lines, in order.
  std::vector<long long> clock_call_times_ns() const;
  // Polls until the log has at least `count` lines (or `timeout_s` passes).
  bool wait_for_calls(size_t count, double timeout_s) const;

 private:
  std::string dir_;
  int runs_ = 0;
  std::map<pid_t, int> run_of_pid_;
};

}  // namespace dvfsim::hw::testing
