#pragma once
// Small file helpers shared by the hw commands.
#include <string>

namespace dvfsim::hw {

// Writes `content` to `path` atomically: a temporary file in the same directory is
// written, flushed to disk and renamed over `path`. Throws std::runtime_error naming
// the path and the system error.
void write_file_atomically(const std::string& path, const std::string& content);

// The whole file; throws std::runtime_error naming the path if it cannot be read.
std::string read_file(const std::string& path);

// `text` as a JSON string literal, quotes included.
std::string json_string(const std::string& text);

// A number for JSON: finite values with up to 9 significant digits, else null.
std::string json_number(double value);

}  // namespace dvfsim::hw
