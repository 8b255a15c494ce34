#include "hw/files.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace dvfsim::hw {
namespace {

[[noreturn]] void throw_system_error(const std::string& what, const std::string& path) {
  throw std::runtime_error(fmt::format("cannot {} '{}': {}", what, path, std::strerror(errno)));
}

}  // namespace

void write_file_atomically(const std::string& path, const std::string& content) {
  std::string temp_path = fmt::format("{}.tmp.{}", path, getpid());
  int fd = ::open(temp_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw_system_error("create", temp_path);
  size_t written = 0;
  while (written < content.size()) {
    ssize_t n = ::write(fd, content.data() + written, content.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      int saved = errno;
      ::close(fd);
      ::unlink(temp_path.c_str());
      errno = saved;
      throw_system_error("write", temp_path);
    }
    written += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    int saved = errno;
    ::unlink(temp_path.c_str());
    errno = saved;
    throw_system_error("write", temp_path);
  }
  if (std::rename(temp_path.c_str(), path.c_str()) != 0) {
    int saved = errno;
    ::unlink(temp_path.c_str());
    errno = saved;
    throw_system_error("rename a temporary file to", path);
  }
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw_system_error("read", path);
  std::ostringstream content;
  content << in.rdbuf();
  return content.str();
}

std::string json_string(const std::string& text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20) {
          out += fmt::format("\\u{:04x}", static_cast<unsigned>(c));
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += '"';
  return out;
}

std::string json_number(double value) {
  if (!std::isfinite(value)) return "null";
  return fmt::format("{:.9g}", value);
}

}  // namespace dvfsim::hw
