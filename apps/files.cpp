#include "apps/files.h"

#include <fcntl.h>
#include <fmt/compile.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "sim/error.h"
#include "sim/hash.h"

namespace dvfsim {

void make_output_dir(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec || !std::filesystem::is_directory(dir))
    throw InputError(
        fmt::format("--out {}: cannot create the output directory ({})", dir, ec.message()));
}

std::string csv_field(std::string_view s) {
  if (s.find_first_of(",\"\n\r") == std::string_view::npos) return std::string(s);
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

std::string file_fingerprint(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  Fnv1a h;
  char buf[1 << 16];
  while (in) {
    in.read(buf, sizeof buf);
    h.bytes(std::string_view(buf, static_cast<std::size_t>(in.gcount())));
  }
  return fmt::format("fnv1a64:{:016x}", h.value());
}

char* Fixed::write(char* to) const {
  // |value| x 10^decimals = x, rounded to s (|s - x| <= ulp(s) / 2 <= 2^-14
  // below 2^40). Unless s lies within 2^-12 of a half, no half lies between s
  // and x: x rounds to the integer that s rounds to, the digits to write
  // (no tie). Else, and for large or non-finite values, to_chars.
  static constexpr double kPow10[] = {1e0, 1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,
                                      1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17};
  const double s = std::fabs(value) * kPow10[decimals];
  if (s < 0x1p40) {
    const auto whole = static_cast<std::uint64_t>(s);
    const double frac = s - static_cast<double>(whole);  // exact
    if (std::fabs(frac - 0.5) > 0x1p-12) {
      const std::uint64_t n = whole + (frac > 0.5);
      const auto scale = static_cast<std::uint64_t>(kPow10[decimals]);
      if (std::signbit(value)) *to++ = '-';  // printf's "-0.0" too
      to = fmt::format_to(to, FMT_COMPILE("{}"), n / scale);
      if (decimals == 0) return to;
      *to = '.';
      std::uint64_t f = n % scale;
      for (int i = decimals; i > 0; --i) {
        to[i] = static_cast<char>('0' + f % 10);
        f /= 10;
      }
      return to + decimals + 1;
    }
  }
  return std::to_chars(to, to + kMaxChars, value, std::chars_format::fixed, decimals).ptr;
}

FileSink::FileSink(std::string path)
    : path_(std::move(path)),
      temp_(fmt::format("{}.tmp.{}", path_, static_cast<long>(::getpid()))) {
  fd_ = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0)
    throw InputError(
        fmt::format("{}: cannot create a temporary file: {}", temp_, std::strerror(errno)));
}

FileSink::~FileSink() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_) ::unlink(temp_.c_str());
}

void FileSink::drain(fmt::memory_buffer& buf) {
  std::size_t written = 0;
  while (written < buf.size()) {
    const ssize_t n = ::write(fd_, buf.data() + written, buf.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw InputError(fmt::format("{}: cannot write: {}", temp_, std::strerror(errno)));
    }
    written += static_cast<std::size_t>(n);
  }
  buf.clear();
}

void FileSink::close() {
  if (fd_ < 0) return;
  drain(buf_);
  buf_ = fmt::memory_buffer();  // give the chunk back
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0)
    throw InputError(fmt::format("{}: cannot write: {}", temp_, std::strerror(errno)));
}

void FileSink::commit() {
  close();
  if (std::rename(temp_.c_str(), path_.c_str()) != 0)
    throw InputError(fmt::format("{}: cannot move the finished file into place: {}", path_,
                                 std::strerror(errno)));
  committed_ = true;
}

void sync_file_system(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) throw InputError(fmt::format("{}: cannot open: {}", dir, std::strerror(errno)));
  const int rc = ::syncfs(fd);
  const int err = errno;
  ::close(fd);
  if (rc != 0)
    throw InputError(
        fmt::format("{}: cannot write the outputs to disk: {}", dir, std::strerror(err)));
}

}  // namespace dvfsim
