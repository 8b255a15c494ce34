#include "apps/output_dir.h"

#include <fcntl.h>
#include <fmt/chrono.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "sim/error.h"

namespace dvfsim {
namespace fs = std::filesystem;

namespace {

std::string read_all(int fd) {
  std::string text;
  char buf[512];
  ssize_t n;
  off_t at = 0;
  while ((n = ::pread(fd, buf, sizeof buf, at)) > 0) {
    text.append(buf, static_cast<std::size_t>(n));
    at += n;
  }
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

}  // namespace

DirectoryLock::DirectoryLock(const std::string& dir, const std::string& command) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  const std::string path = (fs::path(dir) / ".dvfsim.lock").string();
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0)
    throw InputError(
        fmt::format("{}: cannot create the lock file: {}", path, std::strerror(errno)));
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    std::string holder = read_all(fd_);
    ::close(fd_);
    fd_ = -1;
    if (err != EWOULDBLOCK)
      throw InputError(fmt::format("{}: cannot lock: {}", path, std::strerror(err)));
    for (char& c : holder)
      if (c == '\n') c = ';';
    throw InputError(fmt::format(
        "{}: in use by another dvfsim ({}); wait for it to finish or choose another --out", dir,
        holder.empty() ? "holder unknown" : holder));
  }
  const auto now = std::chrono::floor<std::chrono::seconds>(std::chrono::system_clock::now());
  const std::string who = fmt::format("pid {}, since {:%Y-%m-%dT%H:%M:%SZ}: {}\n",
                                      static_cast<long>(::getpid()), now, command);
  if (::ftruncate(fd_, 0) == 0) {
    ssize_t ignored = ::pwrite(fd_, who.data(), who.size(), 0);
    (void)ignored;
  }
}

DirectoryLock::~DirectoryLock() {
  if (fd_ >= 0) ::close(fd_);  // releases the flock; the file stays (no unlink race)
}

int remove_stale_temporaries(const std::string& dir) {
  int removed = 0;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    const std::size_t at = name.rfind(".tmp.");
    if (at == std::string::npos || at == 0) continue;
    const std::string pid_text = name.substr(at + 5);
    if (pid_text.empty() || pid_text.size() > 9 ||
        pid_text.find_first_not_of("0123456789") != std::string::npos)
      continue;
    const long pid = std::stol(pid_text);
    if (pid == static_cast<long>(::getpid())) continue;
    if (pid > 0 && (::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH)) continue;
    std::error_code rm;
    if (fs::remove(it->path(), rm)) ++removed;
  }
  return removed;
}

void prepare_run_directory(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    throw InputError(fmt::format("{}: cannot create the output directory: {}", dir, ec.message()));
  remove_stale_temporaries(dir);
  const fs::path summary = fs::path(dir) / "summary.json";
  if (::unlink(summary.c_str()) != 0 && errno != ENOENT)
    throw InputError(fmt::format("{}: cannot remove the previous run's summary: {}",
                                 summary.string(), std::strerror(errno)));
}

}  // namespace dvfsim
