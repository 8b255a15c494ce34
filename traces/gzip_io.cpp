#include "traces/gzip_io.h"

#include <fmt/format.h>
#include <zlib.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "sim/error.h"
#include "sim/files.h"

namespace dvfsim::traces {
namespace {

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

std::string deflate_gzip(const std::string& path, std::string_view in) {
  z_stream z{};
  if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    throw InputError(fmt::format("{}: zlib init failed", path));
  std::string out;
  out.resize(deflateBound(&z, static_cast<uLong>(in.size())) + 64);
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  const int rc = deflate(&z, Z_FINISH);
  const std::size_t produced = out.size() - z.avail_out;
  deflateEnd(&z);
  if (rc != Z_STREAM_END) throw InputError(fmt::format("{}: gzip compression failed", path));
  out.resize(produced);
  return out;
}

}  // namespace

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

void write_file_atomic(const std::string& path, std::string_view data, bool gzip) {
  std::string compressed;
  if (gzip) {
    compressed = deflate_gzip(path, data);
    data = compressed;
  }
  dvfsim::write_file_atomic(path, data);
}

}  // namespace dvfsim::traces
