#include "hw/files.h"

#include <fmt/format.h>

#include <cmath>
#include <string>

namespace dvfsim::hw {

std::string json_number(double value) {
  if (!std::isfinite(value)) return "null";
  return fmt::format("{:.9g}", value);
}

}  // namespace dvfsim::hw
