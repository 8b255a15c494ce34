// Retargeting the latency model from the capture device (H200) to other GPUs,
// and the shipped device files: every one loads, has a monotone V/F curve and
// supported default clocks; bad files and forbidden clock pairs are rejected
// with messages that name the problem. Numbers are checkable by hand:
//   RTX 3080 Ti peak bf16 (FP32 accumulate) at 2100 MHz = 80 x 512 x 2.1e9
//   = 86.0 TFLOP/s; bandwidth at 9501 MHz = 912 GB/s.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <string>

#include "models/capture_device.h"
#include "models/cmos_power.h"
#include "models/device_yaml.h"
#include "models/native_governor.h"
#include "models/roofline_overlap.h"
#include "sim/error.h"
#include "sim/models.h"
#include "sim/workload.h"

namespace dvfsim {
namespace {

const std::string kDeviceDir = std::string(DVFSIM_SOURCE_DIR) + "/models/devices/";

Device shipped(const std::string& name) {
  return load_device_file(kDeviceDir + name + ".yaml").device;
}

// A workload captured on the H200 at 1980/3201 MHz: one 8192^3 bf16 GEMM at 98 %
// of the H200's tensor peak and one 4 GB (read + write) device copy at 88 % of
// its 4.8 TB/s.
struct TinyWorkload {
  Workload w;
  double gemm_flops = 2.0 * 8192.0 * 8192.0 * 8192.0;
  double gemm_bytes = 3.0 * 8192.0 * 8192.0 * 2.0;  // A, B, C in bf16
  double copy_bytes = 4e9;

  explicit TinyWorkload(const Device& h200) {
    w.source_path = "tiny";
    w.capture.device = "h200";
    w.capture.device_name = "NVIDIA H200";
    w.capture.core_mhz = 1980;
    w.capture.memory_mhz = 3201;
    w.iterations = 1;

    Kernel gemm;
    gemm.name_id = w.intern("gemm_bf16_8192");
    gemm.op_id = w.intern("");
    gemm.cls = KernelClass::gemm;
    gemm.work.flops = gemm_flops;
    gemm.work.dram_bytes = gemm_bytes;
    gemm.work.source = WorkSource::shapes;
    gemm.work.duration_ns =
        static_cast<std::int64_t>(gemm_flops / (0.98 * h200.tensor_flops_per_s(1980)) * 1e9);

    Kernel copy;
    copy.name_id = w.intern("copy_4GB");
    copy.op_id = w.intern("");
    copy.cls = KernelClass::memcpy;
    copy.host_launch_ns = 1;
    copy.work.dram_bytes = copy_bytes;
    copy.work.source = WorkSource::shapes;
    copy.work.duration_ns = static_cast<std::int64_t>(copy_bytes / (0.88 * 4.8e12) * 1e9);

    w.kernels = {gemm, copy};
    w.iteration_begin = {0, 2};
  }
};

TEST(Retarget, SameDeviceReproducesTheMeasuredDurations) {
  const Device h200 = shipped("h200");
  const TinyWorkload t(h200);
  const RooflineOverlap model(h200);
  const auto costs = model.prepare(t.w, h200, h200);
  const Clocks c = make_clocks(h200, 1980, 3201);
  for (std::size_t i = 0; i < costs.size(); ++i)
    EXPECT_NEAR(model.duration_ns(costs[i], c),
                static_cast<double>(t.w.kernels[i].work.duration_ns), 1.0)
        << i;
}

TEST(Retarget, H200To3080TiGemmAndCopyMatchTheTargetsPeaks) {
  const Device h200 = shipped("h200");
  const Device ti = shipped("rtx3080ti");
  const TinyWorkload t(h200);
  const RooflineOverlap model(ti);
  const auto costs = model.prepare(t.w, h200, ti);
  ASSERT_EQ(costs.size(), 2u);
  const Clocks top = make_clocks(ti, ti.max_core_mhz(), ti.max_memory_mhz());
  ASSERT_EQ(top.core_mhz, 2100);
  ASSERT_EQ(top.memory_mhz, 9501);

  // GEMM: flops / peak = 2 x 8192^3 / 86.0e12 = 12.78 ms.
  const double gemm_ideal_ns = t.gemm_flops / ti.tensor_flops_per_s(2100) * 1e9;
  EXPECT_NEAR(gemm_ideal_ns, 12.78e6, 0.01e6);
  const double gemm_ns = model.duration_ns(costs[0], top);
  EXPECT_GE(gemm_ns, gemm_ideal_ns);  // never faster than the roofline
  EXPECT_NEAR(gemm_ns / gemm_ideal_ns, 1.0, 0.15) << gemm_ns << " ns vs " << gemm_ideal_ns;

  // Copy: bytes / bandwidth = 4e9 / 912e9 = 4.386 ms.
  const double copy_ideal_ns = t.copy_bytes / ti.dram_bytes_per_s(9501) * 1e9;
  EXPECT_NEAR(copy_ideal_ns, 4.386e6, 0.001e6);
  const double copy_ns = model.duration_ns(costs[1], top);
  EXPECT_GE(copy_ns, copy_ideal_ns);
  EXPECT_NEAR(copy_ns / copy_ideal_ns, 1.0, 0.15) << copy_ns << " ns vs " << copy_ideal_ns;

  // Above the L2 knee (half the top clock, l2_bytes_per_clock) the copy does
  // not care about the core clock; below it, it slows with the core clock.
  // The GEMM does not care about the memory clock beyond its small memory part.
  // (within 3 %: the overlap term, kappa x the L2 part, still grows with 1/core clock)
  EXPECT_NEAR(model.duration_ns(costs[1], make_clocks(ti, 1500, 9501)), copy_ns, 0.03 * copy_ns);
  EXPECT_GT(model.duration_ns(costs[1], make_clocks(ti, 525, 9501)), 1.8 * copy_ns);
  EXPECT_NEAR(model.duration_ns(costs[0], make_clocks(ti, 1050, 9501)) / gemm_ns, 2100.0 / 1050.0,
              0.02);
  // DRAM-bound: the time grows with 9501/5001, less the overlap term of the
  // (now relatively smaller) L2 part: between 1.80 and 1.90.
  const double slower = model.duration_ns(costs[1], make_clocks(ti, 2100, 5001)) / copy_ns;
  EXPECT_GT(slower, 1.80);
  EXPECT_LE(slower, 9501.0 / 5001.0);
  EXPECT_LT(model.duration_ns(costs[0], make_clocks(ti, 2100, 5001)) / gemm_ns, 1.02);

  // Utilisations on the target stay within [0, 1] and the GEMM is near its peak.
  const Utilisation ug = model.utilisation(costs[0], top, gemm_ns);
  EXPECT_GT(ug.compute, 0.9);
  EXPECT_LE(ug.compute, 1.0);
  const Utilisation uc = model.utilisation(costs[1], top, copy_ns);
  EXPECT_GT(uc.memory, 0.85);
  EXPECT_LE(uc.memory, 1.0);
  EXPECT_EQ(uc.compute, 0.0);
}

TEST(Retarget, EveryShippedDeviceRetargetsBothKernelsNearItsPeaks) {
  const Device h200 = shipped("h200");
  const TinyWorkload t(h200);
  for (const char* name : {"rtx3080ti", "rtx-a4000", "b200", "rtx5090", "a100-sxm"}) {
    SCOPED_TRACE(name);
    const Device d = shipped(name);
    const RooflineOverlap model(d);
    const auto costs = model.prepare(t.w, h200, d);
    const Clocks top = make_clocks(d, d.max_core_mhz(), d.max_memory_mhz());
    const double gemm = model.duration_ns(costs[0], top) /
                        (t.gemm_flops / d.tensor_flops_per_s(top.core_mhz) * 1e9);
    const double copy = model.duration_ns(costs[1], top) /
                        (t.copy_bytes / d.dram_bytes_per_s(top.memory_mhz) * 1e9);
    EXPECT_GE(gemm, 1.0);
    EXPECT_LT(gemm, 1.2);
    EXPECT_GE(copy, 1.0);
    EXPECT_LT(copy, 1.2);
  }
}

TEST(ShippedDevices, AllSixLoadWithMonotoneVoltageAndSupportedDefaults) {
  std::set<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(kDeviceDir))
    if (e.path().extension() == ".yaml" && !is_capture_only_file(e.path().string()))
      names.insert(e.path().stem().string());
  for (const char* want : {"h200", "rtx3080ti", "rtx-a4000", "b200", "rtx5090", "a100-sxm"})
    EXPECT_TRUE(names.count(want)) << want << ".yaml missing from " << kDeviceDir;

  for (const auto& name : names) {
    SCOPED_TRACE(name);
    LoadedDevice ld;
    ASSERT_NO_THROW(ld = load_device_file(kDeviceDir + name + ".yaml"));
    const Device& d = ld.device;
    EXPECT_EQ(d.name, name) << "the `name:` field should match the file name";
    EXPECT_TRUE(d.supports(d.default_core_mhz, d.default_memory_mhz))
        << d.why_unsupported(d.default_core_mhz, d.default_memory_mhz);
    EXPECT_GE(d.core_index(d.deep_idle_core_mhz), 0) << "deep-idle clock not in the core list";
    // V(f) never falls as f rises, over every supported clock.
    double last = 0.0;
    for (const auto f : d.core_clocks_mhz) {
      const double v = d.volts(f);
      EXPECT_GE(v, last) << f << " MHz";
      last = v;
    }
    // Every number carries a source with a known prefix.
    for (const auto& s : ld.sources) EXPECT_FALSE(s.source.empty()) << s.field;
    // The power model's idle power is below the limit; a full-rate kernel at
    // the top clocks draws more than context idle.
    const CmosPower p(d);
    const Clocks def = default_clocks(d);
    EXPECT_LT(p.power_w(Utilisation{}, def), 0.5 * d.power_limit_w);
    EXPECT_LT(p.deep_idle_w(), p.power_w(Utilisation{}, def) + 1e-9);
  }
}

TEST(ShippedDevices, Rtx3080TiClockSpaceIsSpaansTable) {
  const Device ti = shipped("rtx3080ti");
  EXPECT_EQ(ti.core_clocks_mhz.size(), 127u);
  EXPECT_EQ(ti.core_clocks_mhz.front(), 210);
  EXPECT_EQ(ti.core_clocks_mhz.back(), 2100);
  EXPECT_EQ(ti.memory_clocks_mhz, (std::vector<std::int32_t>{405, 810, 5001, 9251, 9501}));
  EXPECT_EQ(ti.default_memory_mhz, 9251);
  EXPECT_EQ(ti.power_limit_w, 350.0);
}

// Spaan et al.: lowering the memory clock under a power-capped GEMM frees
// budget that the core clock takes; GEMMs run 2-3 % faster at 5001 MHz.
TEST(ShippedDevices, Rtx3080TiGemmIsPowerCappedAndGainsCoreClockAtLowMemoryClock) {
  const Device ti = shipped("rtx3080ti");
  const CmosPower power(ti);
  const NativeGovernor gov(ti, power);
  const Utilisation gemm{1.0, 0.98, 0.05};
  const Clocks at9251 = make_clocks(ti, ti.default_core_mhz, 9251);
  const Clocks at5001 = make_clocks(ti, ti.default_core_mhz, 5001);
  EXPECT_GT(power.power_w(gemm, at9251), ti.power_limit_w);  // must be capped
  const std::int32_t cap9251 = gov.cap_core_mhz(gemm, at9251, ti.max_core_mhz());
  // Same bytes per second: u_m scales with 9251/5001 at the lower clock.
  const Utilisation gemm5001{1.0, 0.98, 0.05 * 9251.0 / 5001.0};
  const std::int32_t cap5001 = gov.cap_core_mhz(gemm5001, at5001, ti.max_core_mhz());
  EXPECT_LT(cap9251, ti.default_core_mhz);
  // At 5001 MHz the freed memory power lets the core run its boost clock
  // ("core auto"), uncapped, as Spaan et al. measure for GEMMs: 2-3 % faster
  // for their GEMMs; this full-rate one (u_c 0.98) gains a little more.
  const std::int32_t run5001 = std::min(cap5001, ti.default_core_mhz);
  EXPECT_EQ(run5001, ti.default_core_mhz);
  EXPECT_LT(power.power_w(gemm5001, at5001), ti.power_limit_w);
  const double gain = static_cast<double>(run5001) / cap9251 - 1.0;
  EXPECT_GT(gain, 0.015) << cap9251 << " -> " << run5001 << " MHz";
  EXPECT_LT(gain, 0.05) << cap9251 << " -> " << run5001 << " MHz";
}

TEST(ShippedDevices, ForbiddenClockPairIsRejectedWithAClearMessage) {
  const Device ti = shipped("rtx3080ti");
  // 405 MHz memory only with core <= 420 MHz (Spaan et al.). 1005 MHz is a
  // supported core clock (210 + 53 x 15), so the pair alone is what is refused.
  const std::string why = ti.why_unsupported(1005, 405);
  EXPECT_FALSE(ti.supports(1005, 405));
  EXPECT_NE(why.find("405"), std::string::npos) << why;
  EXPECT_NE(why.find("420"), std::string::npos) << why;
  EXPECT_NE(why.find("1005"), std::string::npos) << why;
  EXPECT_TRUE(ti.supports(420, 405));
  EXPECT_TRUE(ti.supports(1005, 810));
  // 1000 MHz is not a 15 MHz step from 210 MHz: refused for that reason, named.
  const std::string why1000 = ti.why_unsupported(1000, 405);
  EXPECT_NE(why1000.find("1000"), std::string::npos) << why1000;
  EXPECT_FALSE(ti.why_unsupported(1001, 9501).empty());
}

// A complete device file; `@LIMIT@` is replaced by the power-limit entry.
constexpr const char* kTinyDevice = R"(name: tiny
display_name: Tiny GPU
nvml_name: Tiny
clocks:
  core_mhz: {min: 300, max: 1200, step: 300, source: "assumption: test"}
  memory_mhz: {values: [1000], source: "assumption: test"}
  default: {core_mhz: 1200, memory_mhz: 1000, source: "assumption: test"}
  deep_idle_core_mhz: {value: 300, source: "assumption: test"}
voltage:
  points: [[300, 0.7], [1200, 1.0]]
  source: "assumption: test"
compute:
  sm_count: {value: 10, source: "assumption: test"}
  tensor_flops_per_clock_per_sm: {value: 1024, source: "assumption: test"}
  fp32_flops_per_clock_per_sm: {value: 128, source: "assumption: test"}
  warp_schedulers_per_sm: {value: 4, source: "assumption: test"}
memory:
  bandwidth_gbs: {value: 100, source: "assumption: test"}
  bandwidth_memory_mhz: {value: 1000, source: "assumption: test"}
latency:
  model: roofline-overlap
  kappa: {value: 0.1, source: "assumption: test"}
  fixed_ns: {value: 1000, source: "assumption: test"}
  min_kernel_ns: {value: 1500, source: "assumption: test"}
  compute_efficiency: {value: 1.0, source: "assumption: test"}
  l2_bytes_per_clock: {value: 200, source: "assumption: test"}
  tensor_dram_amplification: {value: 1, source: "assumption: test"}
  memory_efficiency: {value: 1.0, source: "assumption: test"}
power:
  model: cmos
  @LIMIT@
  deep_idle_w: {value: 10, source: "assumption: test"}
  const_w: {value: 10, source: "assumption: test"}
  leak_w_per_v: {value: 10, source: "assumption: test"}
  clock_w_per_v2ghz: {value: 5, source: "assumption: test"}
  busy_w_per_v2ghz: {value: 5, source: "assumption: test"}
  compute_w_per_v2ghz: {value: 50, source: "assumption: test"}
  simt_w_per_v2ghz: {value: 17, source: "assumption: test"}
  memory_active_w_per_ghz: {value: 5, source: "assumption: test"}
  memory_idle_w_per_ghz: {value: 1, source: "assumption: test"}
governor:
  model: native
  period_ms: {value: 100, source: "assumption: test"}
  up_step_mhz: {value: 120, source: "assumption: test"}
  target_fraction: {value: 0.99, source: "assumption: test"}
switch_latency:
  core: {distribution: fixed, value_us: 100, source: "assumption: test"}
  memory: {distribution: fixed, value_us: 1000, source: "assumption: test"}
  memory_stall_us: {value: 0, source: "assumption: test"}
)";

std::string tiny_device(const std::string& limit_entry) {
  std::string s = kTinyDevice;
  s.replace(s.find("@LIMIT@"), 7, limit_entry);
  return s;
}

TEST(ShippedDevices, NumberWithoutSourceIsRejectedNamingTheField) {
  // The same file with a sourced limit loads: the failure below is the source alone.
  ASSERT_NO_THROW(load_device_yaml(
      tiny_device(R"(limit_w: {value: 150, source: "assumption: test"})"), "tiny.yaml"));
  try {
    load_device_yaml(tiny_device("limit_w: {value: 150}"), "tiny.yaml");
    FAIL() << "a number without a source was accepted";
  } catch (const InputError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("tiny.yaml"), std::string::npos) << msg;
    EXPECT_NE(msg.find("power.limit_w"), std::string::npos) << msg;
    EXPECT_NE(msg.find("source"), std::string::npos) << msg;
  }
  // A source that is not a URL, a file or a labelled guess is rejected too.
  try {
    load_device_yaml(tiny_device(R"(limit_w: {value: 150, source: "I think so"})"), "tiny.yaml");
    FAIL() << "an unlabelled source was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("power.limit_w"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace dvfsim
