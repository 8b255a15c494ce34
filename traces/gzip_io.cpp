#include "traces/gzip_io.h"

#include <fmt/format.h>
#include <zlib.h>

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

}  // namespace

void write_file_atomic(const std::string& path, std::string_view data, bool gzip) {
  std::string compressed;
  if (gzip) {
    compressed = deflate_gzip(path, data);
    data = compressed;
  }
  dvfsim::write_file_atomic(path, data);
}

}  // namespace dvfsim::traces
