#include "hw/child.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <pthread.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

namespace dvfsim::hw {
namespace {

constexpr int kForwardedSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
constexpr auto kPollPeriod = std::chrono::milliseconds(50);
constexpr auto kTerminateGrace = std::chrono::seconds(5);

timespec to_timespec(std::chrono::nanoseconds duration) {
  timespec ts{};
  ts.tv_sec = static_cast<time_t>(duration.count() / 1'000'000'000);
  ts.tv_nsec = static_cast<long>(duration.count() % 1'000'000'000);
  return ts;
}

// In the forked child: only async-signal-safe calls until exec.
[[noreturn]] void exec_child(char* const* argv, int error_pipe, pid_t parent) {
  sigset_t none;
  sigemptyset(&none);
  pthread_sigmask(SIG_SETMASK, &none, nullptr);
  prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (getppid() != parent) _exit(kSpawnFailedExitCode);  // dvfsim already died
  execvp(argv[0], argv);
  int error = errno;
  ssize_t ignored = write(error_pipe, &error, sizeof error);
  (void)ignored;
  _exit(kSpawnFailedExitCode);
}

}  // namespace

ChildRunner::ChildRunner(std::vector<std::string> argv) : argv_(std::move(argv)) {
  if (argv_.empty()) throw SpawnError("no command given");
  sigemptyset(&blocked_);
  for (int signal_number : kForwardedSignals) sigaddset(&blocked_, signal_number);
  sigaddset(&blocked_, SIGCHLD);
  pthread_sigmask(SIG_BLOCK, &blocked_, &previous_mask_);
}

ChildRunner::~ChildRunner() {
  if (running()) {
    ::kill(pid_, SIGTERM);
    auto give_up = std::chrono::steady_clock::now() + kTerminateGrace;
    while (!reap(WNOHANG) && std::chrono::steady_clock::now() < give_up) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (!exited_) {
      ::kill(pid_, SIGKILL);
      reap(0);
    }
  }
  // Drop signals still pending from this run, then restore the mask.
  timespec zero{};
  while (sigtimedwait(&blocked_, nullptr, &zero) > 0) {
  }
  pthread_sigmask(SIG_SETMASK, &previous_mask_, nullptr);
}

void ChildRunner::start() {
  std::vector<char*> argv;
  for (auto& arg : argv_) argv.push_back(arg.data());
  argv.push_back(nullptr);
  int error_pipe[2];
  if (pipe2(error_pipe, O_CLOEXEC) != 0) {
    throw SpawnError(fmt::format("cannot create a pipe: {}", std::strerror(errno)));
  }
  pid_t parent = getpid();
  start_time_ = std::chrono::steady_clock::now();
  pid_ = fork();
  if (pid_ < 0) {
    int error = errno;
    close(error_pipe[0]);
    close(error_pipe[1]);
    throw SpawnError(fmt::format("cannot fork to run '{}': {}", argv_[0], std::strerror(error)));
  }
  if (pid_ == 0) exec_child(argv.data(), error_pipe[1], parent);
  close(error_pipe[1]);
  int exec_error = 0;
  ssize_t n;
  do {
    n = read(error_pipe[0], &exec_error, sizeof exec_error);
  } while (n < 0 && errno == EINTR);
  close(error_pipe[0]);
  if (n == static_cast<ssize_t>(sizeof exec_error)) {
    reap(0);
    throw SpawnError(fmt::format("cannot run '{}': {}", argv_[0], std::strerror(exec_error)));
  }
}

bool ChildRunner::reap(int flags) {
  if (exited_) return true;
  int status = 0;
  pid_t result;
  do {
    result = waitpid(pid_, &status, flags);
  } while (result < 0 && errno == EINTR);
  if (result == 0) return false;
  end_time_ = std::chrono::steady_clock::now();
  exited_ = true;
  if (result < 0) {
    exit_code_ = kSpawnFailedExitCode;
  } else if (WIFEXITED(status)) {
    exit_code_ = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    exit_code_ = 128 + WTERMSIG(status);
  }
  return true;
}

ChildRunner::Event ChildRunner::wait_until(SteadyTime deadline) {
  while (true) {
    if (reap(WNOHANG)) return Event::kExited;
    auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return Event::kDeadline;
    auto timeout = std::min<std::chrono::nanoseconds>(deadline - now, kPollPeriod);
    timespec ts = to_timespec(timeout);
    int signal_number = sigtimedwait(&blocked_, nullptr, &ts);
    if (signal_number > 0 && signal_number != SIGCHLD) {
      ::kill(pid_, signal_number);
      if (!forwarded_signal_) forwarded_signal_ = signal_number;
      return Event::kSignalForwarded;
    }
  }
}

void ChildRunner::wait() {
  while (wait_until(SteadyTime::max()) != Event::kExited) {
  }
}

}  // namespace dvfsim::hw
