#pragma once
// The `cmos` power model (DESIGN.md, "Models"), with fc and fm in GHz:
//   P = const + leak·V(fc) + clock·V²·fc + mem_idle·fm            (context idle)
//     + (u_busy·busy + u_c·compute + u_s·simt)·V²·fc + u_m·mem_active·fm  (a kernel)
// u_c: tensor-core utilisation, u_s: SIMT issue utilisation (warp instructions
// per scheduler cycle).
// Linear in the utilisations, as the governor requires.
#include <vector>

#include "sim/models.h"

namespace dvfsim {

class CmosPower final : public PowerModel {
 public:
  explicit CmosPower(const Device& d);
  double power_w(const Utilisation& u, const Clocks& c) const override {
    const CoreTerms& t = core_[static_cast<std::size_t>(c.core_idx)];
    const double fm = mem_ghz_[static_cast<std::size_t>(c.memory_idx)];
    return t.idle_w + p_.memory_idle_w_per_ghz * fm +
           t.v2f * (u.busy * p_.busy_w_per_v2ghz + u.compute * p_.compute_w_per_v2ghz +
                    u.simt * p_.simt_w_per_v2ghz) +
           u.memory * p_.memory_active_w_per_ghz * fm;
  }
  double deep_idle_w() const override { return p_.deep_idle_w; }

 private:
  struct CoreTerms {
    double idle_w;  // const + leak·V + clock·V²f
    double v2f;     // V²·f in V²·GHz
  };
  PowerParams p_;
  std::vector<CoreTerms> core_;
  std::vector<double> mem_ghz_;
};

}  // namespace dvfsim
