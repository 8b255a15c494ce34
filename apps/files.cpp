#include "apps/files.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
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

}  // namespace dvfsim
