#include "sim/models.h"

#include <fmt/format.h>

#include "sim/error.h"

namespace dvfsim {

Clocks make_clocks(const Device& d, std::int32_t core_mhz, std::int32_t memory_mhz) {
  const int ci = d.core_index(core_mhz);
  const int mi = d.memory_index(memory_mhz);
  if (ci < 0 || mi < 0) throw InputError(d.why_unsupported(core_mhz, memory_mhz));
  return Clocks{core_mhz, memory_mhz, static_cast<std::int16_t>(ci), static_cast<std::int16_t>(mi)};
}

Clocks default_clocks(const Device& d) {
  return make_clocks(d, d.default_core_mhz, d.default_memory_mhz);
}

}  // namespace dvfsim
