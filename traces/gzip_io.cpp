#include "traces/gzip_io.h"

#include <fmt/format.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "sim/error.h"
#include "sim/files.h"

namespace dvfsim::traces {
namespace {

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

constexpr std::size_t kRawChunk = 1 << 18;  // 256 KiB of file a read

}  // namespace

void write_file_atomic(const std::string& path, std::string_view data, bool gzip) {
  std::string compressed;
  if (gzip) {
    compressed = deflate_gzip(path, data);
    data = compressed;
  }
  dvfsim::write_file_atomic(path, data);
}

struct GzipInput::Inflater {
  z_stream z{};
  ~Inflater() { inflateEnd(&z); }
};

GzipInput::GzipInput(const std::string& path) : path_(path), raw_(kRawChunk) {
  require_regular_file(path);
  file_ = std::fopen(path.c_str(), "rb");
  if (!file_) throw InputError(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
  while (raw_end_ < 2 && refill()) {
  }
  if (is_gzip(std::string_view(reinterpret_cast<const char*>(raw_.data()), raw_end_))) {
    z_ = std::make_unique<Inflater>();
    if (inflateInit2(&z_->z, 15 + 16) != Z_OK)
      throw InputError(fmt::format("{}: zlib init failed", path));
  }
}

GzipInput::~GzipInput() {
  if (file_) std::fclose(file_);
}

bool GzipInput::refill() {
  if (eof_) return false;
  if (raw_at_ == raw_end_) raw_at_ = raw_end_ = 0;
  const std::size_t n = std::fread(raw_.data() + raw_end_, 1, raw_.size() - raw_end_, file_);
  if (n == 0) {
    if (std::ferror(file_)) throw InputError(fmt::format("{}: read error", path_));
    eof_ = true;
    return false;
  }
  raw_end_ += n;
  return true;
}

std::size_t GzipInput::read(char* out, std::size_t n) {
  if (!z_) {  // a plain file: the raw bytes
    std::size_t got = 0;
    while (got < n && (raw_at_ < raw_end_ || refill())) {
      const std::size_t k = std::min(n - got, raw_end_ - raw_at_);
      std::memcpy(out + got, raw_.data() + raw_at_, k);
      raw_at_ += k;
      got += k;
    }
    return got;
  }
  // As read_file's inflate: concatenated members continue; input that ends
  // inside a member is truncated; anything else zlib rejects is corrupt.
  z_stream& z = z_->z;
  z.next_out = reinterpret_cast<Bytef*>(out);
  z.avail_out = static_cast<uInt>(std::min<std::size_t>(n, 1u << 30));
  const uInt asked = z.avail_out;
  while (!done_ && z.avail_out > 0) {
    if (raw_at_ == raw_end_) refill();
    z.next_in = raw_.data() + raw_at_;
    z.avail_in = static_cast<uInt>(raw_end_ - raw_at_);
    const int rc = inflate(&z, Z_NO_FLUSH);
    raw_at_ = raw_end_ - z.avail_in;
    if (rc == Z_STREAM_END) {
      if (raw_at_ == raw_end_ && !refill()) {
        done_ = true;
        break;
      }
      if (inflateReset(&z) != Z_OK) done_ = true;
      continue;
    }
    if (rc == Z_OK) continue;
    const bool ended = raw_at_ == raw_end_ && eof_;
    if (rc == Z_BUF_ERROR && !ended) continue;  // wants more input: read on
    const std::string msg = z.msg ? z.msg : "";
    throw InputError(fmt::format("{}: {} gzip stream{}{}", path_, ended ? "truncated" : "corrupt",
                                 msg.empty() ? "" : ": ", msg));
  }
  return asked - z.avail_out;
}

}  // namespace dvfsim::traces
