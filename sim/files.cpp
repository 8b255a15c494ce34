#include "sim/files.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "sim/error.h"

namespace dvfsim {
namespace {

[[noreturn]] void fail(const std::string& what, const std::string& path, int err) {
  throw InputError(fmt::format("{}: cannot {}: {}", path, what, std::strerror(err)));
}

}  // namespace

void write_file_atomic(const std::string& path, std::string_view content) {
  const std::string temp = fmt::format("{}.tmp.{}", path, static_cast<long>(::getpid()));
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail("create a temporary file", temp, errno);
  std::size_t written = 0;
  while (written < content.size()) {
    const ssize_t n = ::write(fd, content.data() + written, content.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      ::unlink(temp.c_str());
      fail("write", temp, err);
    }
    written += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    const int err = errno;
    ::unlink(temp.c_str());
    fail("write", temp, err);
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(temp.c_str());
    fail("move the finished file into place", path, err);
  }
}

void require_regular_file(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) fail("open", path, errno);
  if (S_ISREG(st.st_mode)) return;
  throw InputError(fmt::format("{}: not a regular file ({})", path,
                               S_ISDIR(st.st_mode)    ? "a directory"
                               : S_ISFIFO(st.st_mode) ? "a FIFO"
                               : S_ISCHR(st.st_mode)  ? "a character device"
                                                      : "a special file"));
}

std::string read_file(const std::string& path) {
  require_regular_file(path);
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("read", path, errno);
  std::ostringstream content;
  content << in.rdbuf();
  return content.str();
}

}  // namespace dvfsim
