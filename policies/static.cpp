// `static`: one fixed pair of clocks for the whole run.
#include "policies/registry.h"

namespace dvfsim {
namespace {

class StaticPolicy final : public Policy {
 public:
  StaticPolicy(std::int32_t core_mhz, std::int32_t memory_mhz)
      : core_mhz_(core_mhz), memory_mhz_(memory_mhz) {}
  void begin(PolicyContext& ctx) override {
    ctx.request(core_mhz_, memory_mhz_ > 0 ? memory_mhz_ : ctx.device().default_memory_mhz);
  }
  bool acts_per_kernel() const override { return false; }

 private:
  std::int32_t core_mhz_, memory_mhz_;
};

const bool registered = register_policy({
    "static",
    "One fixed pair of clocks for the whole run.",
    false,
    {{"core_mhz", ParamSpec::Kind::required, "", "core clock in MHz, one the device supports"},
     {"memory_mhz", ParamSpec::Kind::defaulted, "0",
      "memory clock in MHz (0 = the device's default memory clock)"}},
    [](const Params& p) {
      return std::make_unique<StaticPolicy>(p.integer("core_mhz"), p.integer("memory_mhz"));
    },
});

}  // namespace
}  // namespace dvfsim
