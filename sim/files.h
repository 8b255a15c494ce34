#pragma once
// Whole-file input and atomic output, shared by every part of dvfsim that
// writes results (docs/design.md: outputs are written atomically).
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

// The whole file; throws InputError naming the path if it cannot be read.
std::string read_file(const std::string& path);

}  // namespace dvfsim
