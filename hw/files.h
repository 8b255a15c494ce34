#pragma once
// Small JSON helpers shared by the hw commands (files: sim/files.h).
#include <string>

#include "sim/files.h"  // write_file_atomic, read_file
#include "sim/json.h"   // json_quote

namespace dvfsim::hw {

// A number for JSON: finite values with up to 9 significant digits, else null.
std::string json_number(double value);

}  // namespace dvfsim::hw
