#pragma once
// Whole-file input and atomic output, shared by every part of dvfsim that
// writes results (DESIGN.md: outputs are written atomically).
#include <string>
#include <string_view>

namespace dvfsim {

// Writes `content` to `path` atomically: a temporary file in the same
// directory is written, flushed to disk and renamed over `path`, so readers
// see the old file or the whole new one. Throws InputError naming the path and
// the system error.
void write_file_atomic(const std::string& path, std::string_view content);

// The whole file; throws InputError naming the path if it cannot be read.
std::string read_file(const std::string& path);

}  // namespace dvfsim
