#pragma once
// Atomic file output: write to a temporary file beside the target, then rename.
#include <string>
#include <string_view>

#include "sim/files.h"  // write_file_atomic, read_file

namespace dvfsim {

// Creates the directory (and parents); InputError when impossible.
void make_output_dir(const std::string& dir);
// CSV field quoting: quotes fields with commas, quotes or newlines.
std::string csv_field(std::string_view s);
// SHA-256-free content fingerprint (FNV-1a 64) of a file, hex; "" if unreadable.
std::string file_fingerprint(const std::string& path);

}  // namespace dvfsim
