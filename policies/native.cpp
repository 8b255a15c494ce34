// `native`: the GPU left alone: it runs its default (boost) clocks and the
// firmware governor lowers the core clock under the power cap. The baseline.
#include "policies/registry.h"

namespace dvfsim {
namespace {

class NativePolicy final : public Policy {
 public:
  bool acts_per_kernel() const override { return false; }
};

const bool registered = register_policy({
    "native",
    "The GPU left alone: default clocks, boost under the power cap, firmware reacting with its "
    "sampling period. The default baseline.",
    false,
    {},
    [](const Params&) { return std::make_unique<NativePolicy>(); },
});

}  // namespace
}  // namespace dvfsim
