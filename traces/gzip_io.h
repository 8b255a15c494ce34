#pragma once
// Gzip-compressed atomic output for traces. Reading, gzip or not, is the one
// read_file of sim/files.h (it inflates by magic bytes).
#include <string>
#include <string_view>

#include "sim/files.h"

namespace dvfsim::traces {

// Writes `data` to `path` atomically (temporary file in the same directory,
// then rename), gzip-compressed when `gzip` is true. Throws InputError.
void write_file_atomic(const std::string& path, std::string_view data, bool gzip);

}  // namespace dvfsim::traces
