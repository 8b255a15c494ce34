#pragma once
// The `cmos` power model (docs/design.md, "Models"), with fc and fm in GHz:
//   P = const + leak·V(fc) + clock·V²·fc + mem_idle·fm            (context idle)
//     + (u_busy·busy + u_c·compute + u_c16·(fp16 - 1)·compute + u_s·simt
//        + u_sm·simt_matrix + u_l2·l2_excess)·V²·fc + u_m·mem_active·fm     (a kernel)
// u_c: tensor-core utilisation, u_c16: its part on fp16 operands (fp16 =
// fp16_tensor_power, 1 when absent; likewise the parts with one or two operands
// a ReLU zeroed draw tensor_power_zeroed1 or 2 of the tensor term), u_s: SIMT issue utilisation
// (warp instructions per scheduler cycle), u_sm: FP32 FLOPs of a matrix product on the SIMT pipes
// over the FP32 peak (its operands' traffic through shared memory and the
// register file, beyond the issue term; docs/calibration.md), u_l2: L2 traffic beyond
// streaming at the L2 peak (the partly used sectors of a layout-changing copy;
// docs/calibration.md, "L2 traffic of layout-changing copies").
// Linear in the utilisations, as the governor requires.
//
// Its parameters are the keys of a device file's `power: {model: cmos, ...}`
// section (declared in cmos_power.cpp); `dvfsim calibrate` fits them.
#include <vector>

#include "sim/model_forms.h"
#include "sim/model_registry.h"

namespace dvfsim {

struct CmosParams {
  double const_w = 0.0;
  double leak_w_per_v = 0.0;
  double clock_w_per_v2ghz = 0.0;
  double busy_w_per_v2ghz = 0.0;
  double compute_w_per_v2ghz = 0.0;      // tensor-core work
  double simt_w_per_v2ghz = 0.0;         // instruction issue (SIMT pipes)
  double simt_matrix_w_per_v2ghz = 0.0;  // FP32 matrix products on the SIMT pipes
  double l2_excess_w_per_v2ghz = 0.0;    // L2 traffic beyond streaming
  double memory_active_w_per_ghz = 0.0;
  double memory_idle_w_per_ghz = 0.0;
  double deep_idle_w = 0.0;  // no CUDA context, clocks at their floor
  // The tensor term on fp16 operands over the term on bf16 (random data both);
  // 1 when the file gives none.
  double fp16_tensor_power = 1.0;
  // The tensor term of FP8 work over the term of bf16 work at the same
  // 16-bit-equivalent utilisation; 1 when the file gives none.
  double fp8_tensor_power = 1.0;
  // The tensor term with one / both operands zeroed by a ReLU (about half
  // their values zero) over the term on random data; 1 when the file gives none.
  double tensor_power_zeroed1 = 1.0;
  double tensor_power_zeroed2 = 1.0;
  // Share of the memory-active and of the compute (tensor + SIMT) power that
  // comes from data toggling: gone when the data are constant (zeros), all
  // there for random data (the default). 0 when the file gives none.
  double data_share_memory = 0.0;
  double data_share_compute = 0.0;

  // The device's `power:` section; InputError when it uses another model.
  static CmosParams of(const Device& d);
  // The coefficients on data whose bits toggle `activity` times as often as
  // random data's (1: random; 0: constant): memory-active and compute
  // coefficients lose that share of their data-dependent part. InputError
  // outside [0, 1].
  CmosParams with_data_activity(double activity) const;
};

class CmosPower final : public PowerModel {
 public:
  explicit CmosPower(const Device& d, const ModelOptions& o = {});
  CmosPower(const Device& d, const CmosParams& p);
  double power_w(const Utilisation& u, const Clocks& c) const override {
    return form_.power_w(u, c);
  }
  double deep_idle_w() const override { return p_.deep_idle_w; }
  const CmosParams& params() const { return p_; }
  const CmosForm* inline_form() const override { return &form_; }

 private:
  CmosParams p_;
  CmosForm form_;  // the coefficients and the per-clock terms
};

}  // namespace dvfsim
