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
#include <iterator>

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

namespace {

// 10^0 .. 10^22, each exact.
constexpr double kPow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                             1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

// The integer that x rounds to, when x's double s (one rounding away: |s -
// x| <= ulp(s) / 2 <= 2^-14 below 2^40) shows it: unless s lies within
// 2^-12 of a half, no half lies between s and x, so x rounds where s does
// (and is no tie). False otherwise.
bool rounded_exactly(double s, std::uint64_t& n) {
  if (!(s < 0x1p40)) return false;
  const auto whole = static_cast<std::uint64_t>(s);
  const double frac = s - static_cast<double>(whole);  // exact
  if (!(std::fabs(frac - 0.5) > 0x1p-12)) return false;
  n = whole + (frac > 0.5);
  return true;
}

}  // namespace

char* Fixed::write(char* to) const {
  // |value| x 10^decimals rounded to an integer: the digits (else to_chars:
  // near a tie, large, not finite).
  std::uint64_t n = 0;
  if (rounded_exactly(std::fabs(value) * kPow10[decimals], n)) {
    const auto scale = static_cast<std::uint64_t>(kPow10[decimals]);
    if (std::signbit(value)) *to++ = '-';  // printf's "-0.0" too
    return write_scaled_digits(to, n, scale, decimals);
  }
  return std::to_chars(to, to + kMaxChars, value, std::chars_format::fixed, decimals).ptr;
}

char* write_scaled_digits(char* to, std::uint64_t n, std::uint64_t scale, int decimals) {
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

char* Significant::write(char* to) const {
  // |value| = d.ddd x 10^e: |value| x 10^(digits - 1 - e) rounded to an
  // integer of `digits` digits, written as %g writes them (else to_chars:
  // near a tie, zero, tiny, huge, not finite, more than 12 digits).
  const double a = std::fabs(value);
  if (digits >= 1 && digits <= 12 && a >= 1e-15 && a < 1e22) {
    int e = 0;  // about floor(log10(a)): a miss by one fails the range check below
    if (a >= 1)
      while (a >= kPow10[e + 1]) ++e;
    else
      while (a * kPow10[-e] < 1) --e;
    const int k = digits - 1 - e;  // up to 26 (12 digits of 1e-15): past the table
    constexpr int kTop = static_cast<int>(std::size(kPow10)) - 1;
    const bool in_table = k <= kTop && k >= -kTop;
    // One rounding either way.
    const double s = !in_table ? 0.0 : k >= 0 ? a * kPow10[k] : a / kPow10[-k];
    std::uint64_t n = 0;
    if (in_table && s >= kPow10[digits - 1] && s < kPow10[digits] && rounded_exactly(s, n)) {
      if (n == static_cast<std::uint64_t>(kPow10[digits])) {  // 9.99..95 -> 10.0
        n /= 10;
        ++e;
      }
      char d[12];
      for (int i = digits - 1; i >= 0; --i) {
        d[i] = static_cast<char>('0' + n % 10);
        n /= 10;
      }
      auto len = static_cast<std::size_t>(digits);
      while (len > 1 && d[len - 1] == '0') --len;  // %g drops trailing zeros
      auto put = [&to](const char* from, std::size_t count) {
        std::memcpy(to, from, count);
        to += count;
      };
      if (std::signbit(value)) *to++ = '-';
      if (e < -4 || e >= digits) {  // d.ddde+XX
        *to++ = d[0];
        if (len > 1) {
          *to++ = '.';
          put(d + 1, len - 1);
        }
        const int x = e < 0 ? -e : e;  // at most 22
        const char exponent[] = {'e', e < 0 ? '-' : '+', static_cast<char>('0' + x / 10),
                                 static_cast<char>('0' + x % 10)};
        put(exponent, sizeof exponent);
      } else if (e >= 0) {  // ddd.ddd
        const auto whole = static_cast<std::size_t>(e) + 1;
        put(d, whole);
        if (len > whole) {
          *to++ = '.';
          put(d + whole, len - whole);
        }
      } else {  // 0.000ddd
        const char zeros[] = {'0', '.', '0', '0', '0'};
        put(zeros, static_cast<std::size_t>(1 - e));
        put(d, len);
      }
      return to;
    }
  }
  return std::to_chars(to, to + kMaxChars, value, std::chars_format::general, digits).ptr;
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
