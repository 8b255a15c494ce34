#include "hw/child.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <pthread.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
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

int pidfd_open(pid_t pid) {
#ifdef SYS_pidfd_open
  return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
#else
  (void)pid;
  errno = ENOSYS;
  return -1;
#endif
}

// Signals the command through its pidfd (immune to pid reuse), else by pid.
void signal_command(int pidfd, pid_t pid, int signal_number) {
#ifdef SYS_pidfd_send_signal
  if (pidfd >= 0) {
    ::syscall(SYS_pidfd_send_signal, pidfd, signal_number, nullptr, 0);
    return;
  }
#endif
  ::kill(pid, signal_number);
}

// The guard process (a second child of dvfsim, started with the command). It
// waits on a pipe whose write end only dvfsim holds. dvfsim writes one byte
// once it has reaped the command; end-of-file without that byte means dvfsim
// died (SIGKILL, a crash). The command then gets SIGTERM (it also had its
// parent-death SIGTERM) and, if it is still alive after the grace period,
// SIGKILL: a command that ignores SIGTERM does not outlive dvfsim.
// Only async-signal-safe calls: dvfsim may have other threads.
[[noreturn]] void run_guard(int guard_fd, int pidfd, pid_t command, int grace_ms) {
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, nullptr);  // Ctrl-C to the group is not for us
  for (int fd = 0; fd < 1024; ++fd)             // hold no terminal, pipe or file of dvfsim's
    if (fd != guard_fd && fd != pidfd) close(fd);
  char byte = 0;
  ssize_t n;
  do {
    n = read(guard_fd, &byte, 1);
  } while (n < 0 && errno == EINTR);
  if (n == 1) _exit(0);  // dvfsim reaped the command
  signal_command(pidfd, command, SIGTERM);
  if (pidfd >= 0) {
    pollfd p{pidfd, POLLIN, 0};  // readable once the command has exited
    if (poll(&p, 1, grace_ms) == 1) _exit(0);
  } else {
    for (int waited = 0; waited < grace_ms && ::kill(command, 0) == 0; waited += 50) {
      timespec ts{0, 50'000'000};
      nanosleep(&ts, nullptr);
    }
  }
  signal_command(pidfd, command, SIGKILL);
  _exit(0);
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
  stop_guard();
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
  start_guard();
}

void ChildRunner::start_guard() {
  // The command is our unreaped child: its pid cannot be reused yet.
  pidfd_ = pidfd_open(pid_);
  int guard_pipe[2];
  if (pipe2(guard_pipe, O_CLOEXEC) != 0) return;  // no guard: parent-death SIGTERM only
  guard_pid_ = fork();
  if (guard_pid_ == 0) {
    close(guard_pipe[1]);
    run_guard(guard_pipe[0], pidfd_, pid_,
              static_cast<int>(std::chrono::milliseconds(kTerminateGrace).count()));
  }
  close(guard_pipe[0]);
  if (guard_pid_ < 0) {
    close(guard_pipe[1]);
    return;
  }
  guard_fd_ = guard_pipe[1];
}

void ChildRunner::stop_guard() {
  if (guard_fd_ >= 0) {
    if (exited_) {  // tell the guard all is well; else EOF makes it end the command
      const char done = 1;
      ssize_t ignored = write(guard_fd_, &done, 1);
      (void)ignored;
    }
    close(guard_fd_);
    guard_fd_ = -1;
  }
  if (guard_pid_ > 0) {
    int status = 0;
    while (waitpid(guard_pid_, &status, 0) < 0 && errno == EINTR) {
    }
    guard_pid_ = -1;
  }
  if (pidfd_ >= 0) {
    close(pidfd_);
    pidfd_ = -1;
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
  stop_guard();
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
