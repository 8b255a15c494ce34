// `max`: the highest clocks, locked for the whole run (the power cap still
// lowers the core clock when the work would exceed the limit).
#include "policies/registry.h"

namespace dvfsim {
namespace {

class MaxPolicy final : public Policy {
 public:
  void begin(PolicyContext& ctx) override {
    const Device& d = ctx.device();
    ctx.request(d.max_core_mhz(), d.max_memory_mhz());
  }
  bool acts_per_kernel() const override { return false; }
};

const bool registered = register_policy({
    "max",
    "Highest core and memory clocks, locked for the whole run.",
    false,
    {},
    [](const Params&) { return std::make_unique<MaxPolicy>(); },
});

}  // namespace
}  // namespace dvfsim
