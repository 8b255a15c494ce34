// The inline forms of the shipped models (sim/model_forms.h) against the
// formulas the models evaluated per call before the forms existed (copied
// below), and the timeline's fused path against the same timeline driven
// through the virtual interface only: bit for bit, over many kernels and every
// clock pair, on several devices.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "models/cmos_power.h"
#include "models/device_yaml.h"
#include "models/native_governor.h"
#include "models/roofline_overlap.h"
#include "sim/gpu_timeline.h"
#include "sim/rng.h"

namespace dvfsim {
namespace {

const std::vector<std::string> kDevices = {"h200", "rtx3080ti", "a100-sxm",
                                           "v100", "rtx5090",   "b200"};

const Device& device(const std::string& name) {
  static std::map<std::string, Device> loaded;
  auto it = loaded.find(name);
  if (it == loaded.end())
    it = loaded
             .emplace(name, load_device(std::string(DVFSIM_SOURCE_DIR) + "/models/devices/" + name +
                                        ".yaml")
                                .device)
             .first;
  return it->second;
}

// Same bits (0.0 and -0.0 differ, NaN equals NaN of the same payload).
bool same(double a, double b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

// ---- the models' per-call formulas before the forms (models/*.cpp at 8fd4146)
double old_duration(const RooflineParams& p, const KernelCost& k, const Clocks& c) {
  const double tc = k.compute_ns_mhz / c.core_mhz;
  const double tm = k.memory_ns_mhz / c.memory_mhz;
  const double hi = tc > tm ? tc : tm, lo = tc > tm ? tm : tc;
  const double t = k.fixed_ns + hi + p.kappa * lo;
  return t > p.min_kernel_ns ? t : p.min_kernel_ns;
}
Utilisation old_utilisation(const Device& target, const KernelCost& k, const Clocks& c,
                            double duration_ns) {
  Utilisation u;
  u.busy = 1.0;
  if (duration_ns <= 0) return u;
  const double s = duration_ns * 1e-9;
  if (k.flops > 0 && k.tensor)
    u.compute = std::min(1.0, k.flops / (s * target.tensor_flops_per_s(c.core_mhz)));
  if (k.instructions > 0)
    u.simt = std::min(1.0, k.instructions / (s * target.issue_per_s(c.core_mhz)));
  if (k.dram_bytes > 0)
    u.memory = std::min(1.0, k.dram_bytes / (s * target.dram_bytes_per_s(c.memory_mhz)));
  return u;
}
double old_power(const CmosParams& p, const Device& d, const Utilisation& u, const Clocks& c) {
  const double v = d.volts(c.core_mhz);
  const double v2f = v * v * c.core_mhz * 1e-3;
  const double idle_w = p.const_w + p.leak_w_per_v * v + p.clock_w_per_v2ghz * v2f;
  const double fm = c.memory_mhz * 1e-3;
  return idle_w + p.memory_idle_w_per_ghz * fm +
         v2f * (u.busy * p.busy_w_per_v2ghz + u.compute * p.compute_w_per_v2ghz +
                u.simt * p.simt_w_per_v2ghz) +
         u.memory * p.memory_active_w_per_ghz * fm;
}

// Kernels spread over every regime: compute- and memory-bound, tensor or not,
// below the device's floor, clock-independent (collectives), no work counters,
// utilisations that saturate at 1.
std::vector<KernelCost> kernels(std::size_t n, std::uint64_t seed) {
  Rng rng(seed);
  std::vector<KernelCost> out(n);
  for (KernelCost& k : out) {
    const double len_ns =
        std::exp(std::log(500.0) + rng.uniform() * std::log(1e5));  // 0.5 µs..50 ms
    const double mem_share = rng.uniform();
    const int kind = static_cast<int>(rng.next() % 8);
    k.fixed_ns = kind == 7 ? len_ns : 1000.0 * rng.uniform();
    if (kind != 7) {
      k.compute_ns_mhz = (1.0 - mem_share) * len_ns * 1410.0;
      k.memory_ns_mhz = mem_share * len_ns * 9501.0;
    }
    k.tensor = kind < 3;
    // Up to 3x what the unit could do in the kernel's time at the top clocks.
    if (kind != 5) k.flops = rng.uniform() * 3.0 * 1e15 * len_ns * 1e-9;
    if (kind != 6) k.dram_bytes = rng.uniform() * 3.0 * 5e12 * len_ns * 1e-9;
    if (kind != 4) k.instructions = rng.uniform() * 3.0 * 2e12 * len_ns * 1e-9;
  }
  return out;
}

std::vector<Clocks> pairs(const Device& d) {
  std::vector<Clocks> out;
  for (const std::int32_t m : d.memory_clocks_mhz)
    for (const std::int32_t c : d.core_clocks_mhz)
      if (d.supports(c, m)) out.push_back(make_clocks(d, c, m));
  return out;
}

// The utilisation terms added since 8fd4146, as branches (models/roofline_overlap.h
// at 46dba12): busy outside launch and drain on the grid's share of the SMs,
// FP32 matrix products against the FP32 peak.
double branch_busy(const KernelCost& k, double duration_ns) {
  double busy = k.sm_share;
  if (k.drain_ns > 0)
    busy = duration_ns > k.drain_ns ? k.sm_share * (1.0 - k.drain_ns / duration_ns) : 0.0;
  return busy;
}
double branch_simt_matrix(const Device& target, const KernelCost& k, const Clocks& c,
                          double duration_ns) {
  if (!(k.simt_matrix && k.flops > 0)) return 0.0;
  return std::min(1.0, k.flops / (duration_ns * 1e-9 * target.fp32_flops_per_s(c.core_mhz)));
}

// With launch and drain (some longer than the kernel at high clocks), grids
// on a share of the SMs, FP32 matrix products (a few also flagged tensor,
// which the roofline model never makes).
std::vector<KernelCost> kernels_with_drain(std::size_t n, std::uint64_t seed) {
  std::vector<KernelCost> out = kernels(n, seed);
  Rng rng(seed + 1);
  for (KernelCost& k : out) {
    const auto r = rng.next() % 6;
    if (r != 0) k.drain_ns = r == 1 ? 1e5 * rng.uniform() : k.fixed_ns;
    if (r == 2 || r == 3) k.sm_share = rng.uniform();
    k.simt_matrix = r == 4 ? !k.tensor : (r == 5);
  }
  return out;
}

TEST(ModelForms, BusyAndSimtMatrixGiveTheBranchNumbersBitForBit) {
  const auto ks = kernels_with_drain(400, 9);
  for (const std::string& name : kDevices) {
    SCOPED_TRACE(name);
    const Device& d = device(name);
    const RooflineOverlap lat(d);
    std::size_t drained = 0, idle_sms = 0, matrix = 0;
    for (const Clocks& c : pairs(d)) {
      for (const KernelCost& k : ks) {
        const double dur = lat.duration_ns(k, c);
        const Utilisation u = lat.utilisation(k, c, dur);
        const Utilisation ou = old_utilisation(d, k, c, dur);
        ASSERT_TRUE(same(u.busy, branch_busy(k, dur)));
        ASSERT_TRUE(same(u.simt_matrix, branch_simt_matrix(d, k, c, dur)));
        ASSERT_TRUE(same(u.compute, ou.compute) && same(u.memory, ou.memory) &&
                    same(u.simt, ou.simt));
        drained += k.drain_ns > 0 && dur > k.drain_ns && u.busy < k.sm_share;
        idle_sms += k.drain_ns >= dur && u.busy == 0.0;
        matrix += u.simt_matrix > 0;
      }
    }
    EXPECT_GT(drained, 1000u);
    EXPECT_GT(idle_sms, 100u);
    EXPECT_GT(matrix, 1000u);
  }
}

TEST(ModelForms, GiveTheOldPerCallNumbersBitForBit) {
  const auto ks = kernels(400, 7);
  for (const std::string& name : kDevices) {
    SCOPED_TRACE(name);
    const Device& d = device(name);
    const RooflineOverlap lat(d);
    const CmosPower pow(d);
    ASSERT_NE(lat.inline_form(), nullptr);
    ASSERT_NE(pow.inline_form(), nullptr);
    const RooflineParams rp = RooflineParams::of(d);
    const CmosParams cp = CmosParams::of(d);
    std::size_t checked = 0, saturated = 0;
    for (const Clocks& c : pairs(d)) {
      for (const KernelCost& k : ks) {
        const double dur = lat.duration_ns(k, c);
        ASSERT_TRUE(same(dur, old_duration(rp, k, c)));
        ASSERT_TRUE(same(dur, lat.inline_form()->duration_ns(k, c)));
        const Utilisation u = lat.utilisation(k, c, dur);
        const Utilisation ou = old_utilisation(d, k, c, dur);
        const Utilisation fu = lat.inline_form()->utilisation(k, c, dur);
        for (const auto& [a, b] : {std::pair{u.busy, ou.busy},
                                   {u.compute, ou.compute},
                                   {u.memory, ou.memory},
                                   {u.simt, ou.simt}})
          ASSERT_TRUE(same(a, b));
        ASSERT_TRUE(same(u.compute, fu.compute) && same(u.memory, fu.memory) &&
                    same(u.simt, fu.simt) && same(u.simt_matrix, fu.simt_matrix));
        saturated += u.memory == 1.0 || u.compute == 1.0 || u.simt == 1.0;
        const double p = pow.power_w(u, c);
        ASSERT_TRUE(same(p, old_power(cp, d, u, c)));
        ASSERT_TRUE(same(p, pow.inline_form()->power_w(u, c)));
        ++checked;
      }
    }
    EXPECT_GT(checked, 400u * 50);  // every pair of a device with >= 50 of them
    EXPECT_GT(saturated, checked / 10);
  }
}

// Hand-made Clocks whose indices do not name its clocks: the rates come from
// the device, as before the tables.
TEST(ModelForms, ClocksWithoutValidIndicesUseTheDeviceRates) {
  const Device& d = device("h200");
  const RooflineOverlap lat(d);
  KernelCost k;
  k.compute_ns_mhz = 1980.0 * 10000.0;  // 10 µs at 1980 MHz
  k.flops = 0.5 * d.tensor_flops_per_s(1980) * 10e-6;
  k.tensor = true;
  const Clocks c{1980, 3201, 0, 0};  // index 0 is not 1980 MHz
  const double dur = lat.duration_ns(k, c);
  EXPECT_DOUBLE_EQ(dur, 10000.0);
  EXPECT_DOUBLE_EQ(lat.utilisation(k, c, dur).compute, 0.5);
}

// std::llround's halves-away-from-zero, the timeline's rounding of remaining time.
TEST(ModelForms, RoundNsIsLlround) {
  Rng rng(3);
  std::vector<double> xs = {
      0.0, 0.5, 1.5, 2.5, -0.5, -1.5, 0.49999999999999994, 1e15 + 0.5, 4503599627370495.5, -2.5};
  for (int i = 0; i < 100000; ++i) xs.push_back((rng.uniform() - 0.01) * 1e9);
  for (int i = 0; i < 1000; ++i) xs.push_back(std::floor(rng.uniform() * 1e7) + 0.5);
  for (const double x : xs) ASSERT_EQ(timeline_detail::round_ns(x), std::llround(x)) << x;
}

// The models through their virtual interface only (no inline form).
class VirtualLatency final : public LatencyModel {
 public:
  explicit VirtualLatency(const LatencyModel& m) : m_(m) {}
  std::vector<KernelCost> prepare(const Workload& w, const Device& a,
                                  const Device& b) const override {
    return m_.prepare(w, a, b);
  }
  double duration_ns(const KernelCost& k, const Clocks& c) const override {
    return m_.duration_ns(k, c);
  }
  Utilisation utilisation(const KernelCost& k, const Clocks& c, double d) const override {
    return m_.utilisation(k, c, d);
  }

 private:
  const LatencyModel& m_;
};
class VirtualPower final : public PowerModel {
 public:
  explicit VirtualPower(const PowerModel& m) : m_(m) {}
  double power_w(const Utilisation& u, const Clocks& c) const override { return m_.power_w(u, c); }
  double deep_idle_w() const override { return m_.deep_idle_w(); }

 private:
  const PowerModel& m_;
};

struct Driven {
  std::vector<FinishedKernel> done;
  double energy_j = 0.0;
  std::int64_t end_ns = 0, capped_ns = 0, switches = 0;
  std::size_t quiet = 0;  // kernels run through run_quiet
};

// Kernels one or two at a time with idle gaps, clock requests every few
// kernels and the firmware cap on: every code path of the timeline's hot loop.
// Kernel 5m runs alongside 5m + 1; 5m + 2 to 5m + 4 run back to back after
// one gap (no request among them).
// `alone`: a kernel without a second one alongside runs through run_next
// (the single-stream replay's path: batches evaluated ahead, no running list).
// `quiet` too: through run_quiet where it applies (the quick path of a
// policy that does nothing per kernel), else advance and run_next.
Driven drive(const Device& d, const LatencyModel& lat, const PowerModel& pow, const Governor& gov,
             const std::vector<KernelCost>& ks, bool alone = false, bool quiet = false) {
  TimelineConfig cfg;
  cfg.core_switch.value_us = 20.0;
  cfg.memory_switch.value_us = 100.0;
  cfg.memory_stall_ns = 30000;
  GpuTimeline tl(GpuModel{&d, &lat, &pow, &gov}, cfg);
  const std::vector<Clocks> ps = pairs(d);
  tl.set_clocks_now(d.max_core_mhz(), d.default_memory_mhz);
  tl.warm_firmware(ks, std::vector<double>(ks.size(), 5000.0));
  tl.start(0);
  Rng rng(11);
  Driven r;
  FinishedKernel f;
  struct Feed {
    std::int64_t until;
    std::size_t first;
    Driven& r;
    std::int64_t start(std::size_t j) const { return j == first ? until : 0; }
    void starting(std::size_t, double) const {}
    void ended(const FinishedKernel& k) const { r.done.push_back(k); }
  };
  for (std::size_t i = 0; i < ks.size(); ++i) {
    if (i % 7 == 0) {
      const Clocks& c = ps[rng.next() % ps.size()];
      tl.request(c.core_mhz, c.memory_mhz);
    }
    const std::int64_t until = tl.now() + static_cast<std::int64_t>(rng.next() % 20000);
    const bool pair = i + 1 < ks.size() && i % 5 == 0;
    const std::size_t last = pair ? i + 1 : i % 5 == 2 ? std::min(ks.size(), i + 3) : i + 1;
    std::size_t j = i;
    if (alone && quiet && !pair) {
      Feed feed{until, i, r};
      j = tl.run_quiet(ks, i, last, feed);
      r.quiet += j - i;
    }
    for (; j < last; ++j) {  // the full path (after an event in the quick one)
      tl.advance(j == i ? until : tl.now(), &f);
      if (alone && !pair) {
        tl.run_next(ks, j, &f);
        r.done.push_back(f);
        tl.fire_due_events();
        continue;
      }
      tl.begin_kernel(ks[j], 1.0, static_cast<std::int32_t>(j));
      if (pair) {  // a second kernel alongside
        ++j;
        tl.begin_kernel(ks[j], 1.0, static_cast<std::int32_t>(j));
      }
      while (tl.running() > 0) {
        if (tl.advance(GpuTimeline::kNever, &f)) r.done.push_back(f);
        tl.fire_due_events();
      }
    }
    i = last - 1;
    if (pair) ++i;
  }
  r.energy_j = tl.energy_j();
  r.end_ns = tl.now();
  r.capped_ns = tl.power_capped_ns();
  r.switches = tl.clock_switches();
  return r;
}

// `alone`: the fused timeline runs single kernels through run_next; `quiet`:
// through the quick path where it applies.
void expect_fused_equals_virtual(bool alone, bool quiet = false) {
  const auto ks = kernels(3000, 5);
  for (const std::string& name : kDevices) {
    SCOPED_TRACE(name);
    const Device& d = device(name);
    const RooflineOverlap lat(d);
    const CmosPower pow(d);
    const NativeGovernor gov(d, pow);
    const VirtualLatency vlat(lat);
    const VirtualPower vpow(pow);
    const Driven fused = drive(d, lat, pow, gov, ks, alone, quiet);
    const Driven virt = drive(d, vlat, vpow, gov, ks);
    ASSERT_EQ(fused.done.size(), ks.size());
    ASSERT_EQ(virt.done.size(), ks.size());
    for (std::size_t i = 0; i < ks.size(); ++i) {
      const FinishedKernel& a = fused.done[i];
      const FinishedKernel& b = virt.done[i];
      ASSERT_EQ(a.id, b.id);
      ASSERT_EQ(a.start_ns, b.start_ns);
      ASSERT_EQ(a.end_ns, b.end_ns);
      ASSERT_TRUE(same(a.core_mhz, b.core_mhz) && same(a.memory_mhz, b.memory_mhz));
      ASSERT_TRUE(same(a.energy_j, b.energy_j)) << a.energy_j << " " << b.energy_j;
    }
    EXPECT_TRUE(same(fused.energy_j, virt.energy_j));
    EXPECT_EQ(fused.end_ns, virt.end_ns);
    EXPECT_EQ(fused.capped_ns, virt.capped_ns);
    EXPECT_EQ(fused.switches, virt.switches);
    EXPECT_GT(fused.switches, 100);
    EXPECT_GT(fused.energy_j, 0.0);
    if (quiet) {  // both paths taken: 3 kernels in 5 run alone
      EXPECT_GT(fused.quiet, ks.size() / 4);
      EXPECT_LT(fused.quiet, ks.size() * 3 / 5);
    }
  }
}

TEST(ModelForms, FusedTimelineEqualsTheVirtualOne) {
  expect_fused_equals_virtual(false);
}

// run_next's batches (evaluated ahead at the clocks in force, again when
// they change: a request every 7 kernels, memory stalls, the firmware cap)
// against begin_kernel and advance through the virtual interface.
TEST(ModelForms, RunNextEqualsTheVirtualTimeline) {
  expect_fused_equals_virtual(true);
}

// The quick path (run_quiet) where nothing is due
// before a kernel's end, the full one where something is: the same numbers.
TEST(ModelForms, QuickPathEqualsTheVirtualTimeline) {
  expect_fused_equals_virtual(true, true);
}

}  // namespace
}  // namespace dvfsim
