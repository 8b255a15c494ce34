#pragma once
// Whole-file input (gzip inflated) and atomic output, shared by every part of
// dvfsim that reads inputs or writes results (docs/design.md: outputs are
// written atomically).
#include <cstddef>
#include <string>
#include <string_view>

namespace dvfsim {

// Writes `content` to `path` atomically: a temporary file in the same
// directory is written, flushed to disk and renamed over `path`, so readers
// see the old file or the whole new one. Throws InputError naming the path and
// the system error.
void write_file_atomic(const std::string& path, std::string_view content);

// Throws InputError naming the path unless it is a regular file (or a link to
// one): every input is read whole, and a directory reports a bogus size,
// /dev/zero never ends and opening a FIFO blocks until someone writes to it.
void require_regular_file(const std::string& path);

// The whole file, inflated when it is gzip (detected by its magic bytes, not
// its name), with at least `spare_capacity` bytes of capacity beyond its size
// (simdjson needs padding). The one reader of every input: traces, device
// files, experiment files, markers, summaries. Throws InputError naming the
// path if it cannot be read or its gzip stream is corrupt or truncated.
std::string read_file(const std::string& path, std::size_t spare_capacity = 0);

// True when `data` starts with the gzip magic bytes 1f 8b.
bool is_gzip(std::string_view data);

}  // namespace dvfsim
