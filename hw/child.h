#pragma once
// Runs the user's command as a child process, the way `perf stat` does: stdin,
// stdout and stderr pass through, SIGINT/SIGTERM/SIGHUP/SIGQUIT sent to dvfsim are
// forwarded to it, and its exit status becomes dvfsim's.
#include <signal.h>
#include <sys/types.h>

#include <chrono>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace dvfsim::hw {

using SteadyTime = std::chrono::steady_clock::time_point;

// The command could not be started (exec failed). Exit code 127, like a shell.
class SpawnError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

inline constexpr int kSpawnFailedExitCode = 127;

class ChildRunner {
 public:
  enum class Event { kExited, kDeadline, kSignalForwarded };

  // Blocks the forwarded signals and SIGCHLD in the calling thread; construct it
  // before starting any thread so that the signals reach only this one.
  explicit ChildRunner(std::vector<std::string> argv);
  // If the child still runs (an exception unwinds), sends it SIGTERM, then SIGKILL
  // after a grace period, and reaps it. Restores the signal mask.
  ~ChildRunner();
  ChildRunner(const ChildRunner&) = delete;
  ChildRunner& operator=(const ChildRunner&) = delete;

  // Forks and execs the command (PATH is searched). If dvfsim dies (even by
  // SIGKILL) the child gets SIGTERM, and SIGKILL 5 s later if it still runs (a
  // small guard process watches dvfsim). Throws SpawnError if exec fails.
  void start();

  // Waits until the child ends, `deadline` passes, or a signal was forwarded.
  Event wait_until(SteadyTime deadline);
  // Waits until the child ends, forwarding signals.
  void wait();

  bool running() const { return pid_ > 0 && !exited_; }
  pid_t pid() const { return pid_; }
  SteadyTime start_time() const { return start_time_; }
  SteadyTime end_time() const { return end_time_; }
  // The exit status; 128 + signal number when a signal killed the child.
  int exit_code() const { return exit_code_; }
  // The first signal dvfsim received and forwarded, if any.
  std::optional<int> forwarded_signal() const { return forwarded_signal_; }

 private:
  bool reap(int flags);
  void start_guard();
  void stop_guard();

  std::vector<std::string> argv_;
  sigset_t blocked_;
  sigset_t previous_mask_;
  pid_t pid_ = -1;
  bool exited_ = false;
  int exit_code_ = 0;
  SteadyTime start_time_{};
  SteadyTime end_time_{};
  std::optional<int> forwarded_signal_;
  int pidfd_ = -1;  // of the command, for the guard
  pid_t guard_pid_ = -1;
  int guard_fd_ = -1;  // write end of the guard's pipe
};

}  // namespace dvfsim::hw
