#include "sim/files.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>

#include "sim/error.h"

namespace dvfsim {
namespace {

[[noreturn]] void fail(const std::string& what, const std::string& path, int err) {
  throw InputError(fmt::format("{}: cannot {}: {}", path, what, std::strerror(err)));
}

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

std::string read_raw(const std::string& path) {
  require_regular_file(path);
  File f(std::fopen(path.c_str(), "rb"));
  if (!f) throw InputError(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
  std::string data;
  if (std::fseek(f.get(), 0, SEEK_END) == 0) {
    const long size = std::ftell(f.get());
    if (size > 0) data.reserve(static_cast<std::size_t>(size));
    std::fseek(f.get(), 0, SEEK_SET);
  }
  char buf[1 << 16];
  std::size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, f.get())) > 0) data.append(buf, n);
  if (std::ferror(f.get())) throw InputError(fmt::format("{}: read error", path));
  return data;
}

std::string inflate_gzip(const std::string& path, std::string_view in, std::size_t spare) {
  // The gzip trailer holds the uncompressed size modulo 2^32: a good first guess.
  // Trusted only when plausible: a truncated or corrupt file ends in garbage.
  std::size_t guess = in.size() * 8;
  if (in.size() >= 18) {
    std::uint32_t isize = 0;
    std::memcpy(&isize, in.data() + in.size() - 4, 4);
    if (isize > in.size() && isize <= in.size() * 64) guess = isize;
  }
  std::string out;
  out.resize(guess + spare);
  z_stream z{};
  if (inflateInit2(&z, 15 + 16) != Z_OK)
    throw InputError(fmt::format("{}: zlib init failed", path));
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  std::size_t in_left = in.size();
  std::size_t produced = 0;
  int rc = Z_OK;
  for (;;) {
    if (produced == out.size()) out.resize(out.size() * 2);
    const auto in_chunk = static_cast<uInt>(std::min<std::size_t>(in_left, 1u << 30));
    const auto out_chunk =
        static_cast<uInt>(std::min<std::size_t>(out.size() - produced, 1u << 30));
    z.avail_in = in_chunk;
    z.next_out = reinterpret_cast<Bytef*>(out.data() + produced);
    z.avail_out = out_chunk;
    rc = inflate(&z, Z_NO_FLUSH);
    in_left -= in_chunk - z.avail_in;
    produced += out_chunk - z.avail_out;
    if (rc == Z_STREAM_END) {
      // Concatenated gzip members are legal; continue with the next one.
      if (in_left == 0) break;
      if (inflateReset(&z) != Z_OK) break;
      continue;
    }
    if (rc == Z_BUF_ERROR && in_left == 0) break;  // input ended mid-stream
    if (rc != Z_OK && rc != Z_BUF_ERROR) break;
  }
  const std::string msg = z.msg ? z.msg : "";
  inflateEnd(&z);
  if (rc != Z_STREAM_END)
    throw InputError(fmt::format("{}: {} gzip stream{}{}", path,
                                 in_left == 0 ? "truncated" : "corrupt", msg.empty() ? "" : ": ",
                                 msg));
  out.resize(produced);
  out.reserve(produced + spare);
  return out;
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

bool is_gzip(std::string_view data) {
  return data.size() >= 2 && static_cast<unsigned char>(data[0]) == 0x1f &&
         static_cast<unsigned char>(data[1]) == 0x8b;
}

std::string read_file(const std::string& path, std::size_t spare_capacity) {
  std::string raw = read_raw(path);
  if (is_gzip(raw)) return inflate_gzip(path, raw, spare_capacity);
  raw.reserve(raw.size() + spare_capacity);
  return raw;
}

}  // namespace dvfsim
