#include "models/cmos_power.h"

#include <fmt/format.h>

#include "sim/error.h"

namespace dvfsim {
namespace {

constexpr const char* kName = "cmos";

const bool registered = register_model({
    .kind = ModelKind::power,
    .name = kName,
    .description = "CMOS-style board power: static and leakage, V²f clock and activity terms, "
                   "memory-clock terms",
    .params =
        {
            {"deep_idle_w", true, 0, 1e5, "power with no CUDA context, clocks at their floor (W)"},
            {"const_w", true, 0, 1e5, "constant part of context-idle power (W)"},
            {"leak_w_per_v", true, 0, 1e5, "leakage, proportional to core voltage (W/V)"},
            {"clock_w_per_v2ghz", true, 0, 1e5, "idle clock tree, x V² x core GHz (W/(V² GHz))"},
            {"busy_w_per_v2ghz", true, 0, 1e5, "any kernel running, x V² x core GHz"},
            {"compute_w_per_v2ghz", true, 0, 1e5,
             "tensor cores at peak, x utilisation x V² x core GHz"},
            {"simt_w_per_v2ghz", true, 0, 1e5,
             "every warp scheduler issuing, x issue utilisation x V² x core GHz"},
            {"simt_matrix_w_per_v2ghz", false, 0, 1e5,
             "FP32 matrix products on the SIMT pipes at the FP32 peak, x their FLOP utilisation "
             "x V² x core GHz: operand traffic beyond the issue term (absent: 0)"},
            {"l2_excess_w_per_v2ghz", false, 0, 1e5,
             "L2 traffic beyond a streaming kernel's at the L2 peak (the sectors of a "
             "layout-changing copy), x its utilisation x V² x core GHz (absent: 0)"},
            {"memory_active_w_per_ghz", true, 0, 1e5,
             "DRAM at peak bandwidth, x utilisation x memory GHz (W/GHz)"},
            {"memory_idle_w_per_ghz", true, 0, 1e5, "memory clock running, x memory GHz (W/GHz)"},
            {"fp16_tensor_power", false, 0.5, 2,
             "the tensor term on fp16 operands over the term on bf16 (absent: 1)"},
            {"fp8_tensor_power", false, 0.5, 2,
             "the tensor term of FP8 work over the term of bf16 work at the same 16-bit-"
             "equivalent utilisation (absent: 1)"},
            {"tensor_power_zeroed1", false, 0.1, 1.5,
             "the tensor term with one operand zeroed by a ReLU (half its values zero) over "
             "the term on random data (absent: 1)"},
            {"tensor_power_zeroed2", false, 0.1, 1.5,
             "the tensor term with both operands zeroed by a ReLU over the term on random data "
             "(absent: 1)"},
            {"data_share_memory", false, 0, 1,
             "share of the memory-active term from data toggling (absent: 0)"},
            {"data_share_compute", false, 0, 1,
             "share of the tensor and SIMT terms from data toggling (absent: 0)"},
        },
    .make_latency = {},
    .make_power = [](const Device& d, const ModelOptions& o) -> std::unique_ptr<PowerModel> {
      return std::make_unique<CmosPower>(d, o);
    },
    .make_governor = {},
});

}  // namespace

CmosParams CmosParams::of(const Device& d) {
  const Params& p = model_params(d, ModelKind::power, kName);
  CmosParams c;
  c.deep_idle_w = p.number("deep_idle_w");
  c.const_w = p.number("const_w");
  c.leak_w_per_v = p.number("leak_w_per_v");
  c.clock_w_per_v2ghz = p.number("clock_w_per_v2ghz");
  c.busy_w_per_v2ghz = p.number("busy_w_per_v2ghz");
  c.compute_w_per_v2ghz = p.number("compute_w_per_v2ghz");
  c.simt_w_per_v2ghz = p.number("simt_w_per_v2ghz");
  c.simt_matrix_w_per_v2ghz = p.number_or("simt_matrix_w_per_v2ghz", 0.0);
  c.l2_excess_w_per_v2ghz = p.number_or("l2_excess_w_per_v2ghz", 0.0);
  c.memory_active_w_per_ghz = p.number("memory_active_w_per_ghz");
  c.memory_idle_w_per_ghz = p.number("memory_idle_w_per_ghz");
  // Without them power does not depend on the data (random data).
  c.fp16_tensor_power = p.number_or("fp16_tensor_power", 1.0);
  c.fp8_tensor_power = p.number_or("fp8_tensor_power", 1.0);
  c.tensor_power_zeroed1 = p.number_or("tensor_power_zeroed1", 1.0);
  c.tensor_power_zeroed2 = p.number_or("tensor_power_zeroed2", 1.0);
  c.data_share_memory = p.number_or("data_share_memory", 0.0);
  c.data_share_compute = p.number_or("data_share_compute", 0.0);
  return c;
}

CmosParams CmosParams::with_data_activity(double activity) const {
  if (!(activity >= 0.0 && activity <= 1.0))
    throw InputError(
        fmt::format("data_activity = {}: expected a value in [0, 1] (1: random data)", activity));
  CmosParams p = *this;
  const double m = 1.0 - data_share_memory * (1.0 - activity);
  const double c = 1.0 - data_share_compute * (1.0 - activity);
  p.memory_active_w_per_ghz *= m;
  p.compute_w_per_v2ghz *= c;
  p.simt_w_per_v2ghz *= c;
  p.simt_matrix_w_per_v2ghz *= c;
  return p;
}

namespace {
CmosParams options_applied(CmosParams p, const ModelOptions& o) {
  if (!o.zeroed_operands) p.tensor_power_zeroed1 = p.tensor_power_zeroed2 = 1.0;
  return p.with_data_activity(o.data_activity);
}
}  // namespace

CmosPower::CmosPower(const Device& d, const ModelOptions& o)
    : CmosPower(d, options_applied(CmosParams::of(d), o)) {}

CmosPower::CmosPower(const Device& d, const CmosParams& p) : p_(p) {
  form_.busy_w_per_v2ghz = p_.busy_w_per_v2ghz;
  form_.compute_w_per_v2ghz = p_.compute_w_per_v2ghz;
  form_.simt_w_per_v2ghz = p_.simt_w_per_v2ghz;
  form_.simt_matrix_w_per_v2ghz = p_.simt_matrix_w_per_v2ghz;
  form_.l2_excess_w_per_v2ghz = p_.l2_excess_w_per_v2ghz;
  form_.memory_active_w_per_ghz = p_.memory_active_w_per_ghz;
  form_.compute_fp16_extra_w_per_v2ghz = (p_.fp16_tensor_power - 1.0) * p_.compute_w_per_v2ghz;
  form_.compute_fp8_extra_w_per_v2ghz = (p_.fp8_tensor_power - 1.0) * p_.compute_w_per_v2ghz;
  form_.compute_zeroed1_extra_w_per_v2ghz =
      (p_.tensor_power_zeroed1 - 1.0) * p_.compute_w_per_v2ghz;
  form_.compute_zeroed2_extra_w_per_v2ghz =
      (p_.tensor_power_zeroed2 - 1.0) * p_.compute_w_per_v2ghz;
  for (const auto f : d.core_clocks_mhz) {
    const double v = d.volts(f);
    const double v2f = v * v * f * 1e-3;
    form_.core.push_back({p_.const_w + p_.leak_w_per_v * v + p_.clock_w_per_v2ghz * v2f, v2f});
  }
  for (const auto f : d.memory_clocks_mhz) {
    const double ghz = f * 1e-3;
    form_.memory.push_back({ghz, p_.memory_idle_w_per_ghz * ghz});
  }
}

}  // namespace dvfsim
