#pragma once
// Whole-file reading with transparent gzip decompression, and atomic writing.
#include <cstddef>
#include <string>
#include <string_view>

namespace dvfsim::traces {

// True when `data` starts with the gzip magic bytes 1f 8b.
bool is_gzip(std::string_view data);

// Reads `path` whole; inflates it when it is gzip (detected by magic bytes, not
// by name). The returned string has at least `spare_capacity` bytes of
// capacity beyond its size (simdjson needs padding). Throws InputError naming
// the file on I/O errors and corrupt or truncated gzip streams.
std::string read_file(const std::string& path, std::size_t spare_capacity = 0);

// Writes `data` to `path` atomically (temporary file in the same directory,
// then rename), gzip-compressed when `gzip` is true. Throws InputError.
void write_file_atomic(const std::string& path, std::string_view data, bool gzip);

}  // namespace dvfsim::traces
