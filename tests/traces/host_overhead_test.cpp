// The profiler host-overhead correction: host timestamps compressed, blocked
// (synchronisation) time and GPU timestamps kept.
#include "traces/host_overhead.h"

#include <gtest/gtest.h>

#include "sim/error.h"

namespace dvfsim {
namespace {

// Launches at 0, 100 and 300 us, a device sync from 300 to 500 us, a launch
// at 600 us (GPU start 650 us).
Workload four_launches() {
  Workload w;
  w.intern("");
  for (std::int64_t t : {0, 100'000, 300'000, 600'000}) {
    Kernel k;
    k.host_launch_ns = t;
    k.traced_start_ns = t + 50'000;
    k.work.duration_ns = 10'000;
    w.kernels.push_back(k);
  }
  SyncPoint s;
  s.host_begin_ns = 300'000;
  s.traced_end_ns = 500'000;
  s.waits_until_kernel = 3;
  w.syncs.push_back(s);
  w.iterations = 1;
  w.iteration_begin = {0, 4};
  return w;
}

TEST(HostOverhead, HalvesActiveHostTimeAndKeepsBlockedTime) {
  Workload w = four_launches();
  HostOverhead h;
  h.factor = 2.0;
  const HostOverheadStats st = remove_host_overhead(w, h);
  // Active host time: 0-300 and 500-600 us = 400 us -> 200 us; blocked 200 us kept.
  EXPECT_EQ(st.active_ns_before, 400'000);
  EXPECT_EQ(st.active_ns_after, 200'000);
  EXPECT_EQ(st.blocked_ns, 200'000);
  EXPECT_EQ(w.kernels[0].host_launch_ns, 0);
  EXPECT_EQ(w.kernels[1].host_launch_ns, 50'000);
  EXPECT_EQ(w.kernels[2].host_launch_ns, 150'000);
  EXPECT_EQ(w.syncs[0].host_begin_ns, 150'000);
  EXPECT_EQ(w.syncs[0].traced_end_ns, 350'000);      // 200 us blocked, as traced
  EXPECT_EQ(w.kernels[3].host_launch_ns, 400'000);   // 350 + 100 / 2
  EXPECT_EQ(w.kernels[3].traced_start_ns, 650'000);  // GPU time untouched
  EXPECT_NO_THROW(w.validate());
}

// Two iterations of three launches each, no synchronisation: iteration 0 at
// 0, 1, 2 x step0_us, iteration 1 from 3 x step0_us every step1_us.
Workload two_iterations(std::int64_t step0_us, std::int64_t step1_us, bool same_count = true) {
  Workload w;
  w.intern("");
  auto launch = [&](std::int64_t t_us, std::int32_t it) {
    Kernel k;
    k.host_launch_ns = t_us * 1000;
    k.traced_start_ns = k.host_launch_ns + 5'000'000;
    k.work.duration_ns = 1'000;
    k.iteration = it;
    w.kernels.push_back(k);
  };
  for (std::int64_t i = 0; i < 3; ++i) launch(i * step0_us, 0);
  const std::int64_t next = 3 * step0_us;
  for (std::int64_t i = 0; i < (same_count ? 3 : 4); ++i) launch(next + i * step1_us, 1);
  w.iterations = 2;
  w.iteration_begin = {0, 3, static_cast<std::uint32_t>(w.kernels.size())};
  return w;
}

TEST(HostOverhead, FirstStepSlowerThanTheNextIsBroughtToItsPace) {
  // Iteration 0 spans 200 us of launches, iteration 1 100 us: the first ran
  // 2x slower (profiler warm-up), so its window (0-300 us) is halved before
  // the division by 2: 300 us -> 75 us; iteration 1 is only divided by 2.
  Workload w = two_iterations(100, 50);
  HostOverhead h;
  h.factor = 2.0;
  const HostOverheadStats st = remove_host_overhead(w, h);
  EXPECT_EQ(st.warmup_iterations, 1);
  EXPECT_DOUBLE_EQ(st.warmup_ratio, 2.0);
  const std::int64_t want_us[] = {0, 25, 50, 75, 100, 125};
  for (std::size_t i = 0; i < 6; ++i)
    EXPECT_EQ(w.kernels[i].host_launch_ns, want_us[i] * 1000) << i;
  EXPECT_EQ(st.active_ns_before, 400'000);
  EXPECT_EQ(st.active_ns_after, 125'000);
  ASSERT_EQ(w.notes.size(), 1u);
  EXPECT_NE(w.notes[0].find("2.00x"), std::string::npos) << w.notes[0];
  EXPECT_NO_THROW(w.validate());
}

TEST(HostOverhead, AFasterFirstStepOrStepsOfAnotherShapeAreOnlyDivided) {
  // Iteration 0 faster than iteration 1: never stretched, plain halving.
  Workload fast = two_iterations(50, 100);
  HostOverhead h;
  h.factor = 2.0;
  EXPECT_EQ(remove_host_overhead(fast, h).warmup_iterations, 0);
  EXPECT_EQ(fast.kernels[3].host_launch_ns, 75'000);   // 150 us / 2
  EXPECT_EQ(fast.kernels[5].host_launch_ns, 175'000);  // 350 us / 2
  // Iteration 1 launches four kernels, iteration 0 three: not the same step.
  Workload other = two_iterations(100, 50, false);
  EXPECT_EQ(remove_host_overhead(other, h).warmup_iterations, 0);
  EXPECT_EQ(other.kernels[3].host_launch_ns, 150'000);  // 300 us / 2
  EXPECT_TRUE(other.notes.empty());
}

TEST(HostOverhead, OffAndFactorOneChangeNothing) {
  for (const char* spec : {"off", "1"}) {
    Workload w = four_launches();
    remove_host_overhead(w, parse_host_overhead(spec));
    EXPECT_EQ(w.kernels[3].host_launch_ns, 600'000) << spec;
    EXPECT_EQ(w.syncs[0].traced_end_ns, 500'000) << spec;
  }
}

TEST(HostOverhead, ParsesItsSetting) {
  EXPECT_FALSE(parse_host_overhead("off").enabled);
  EXPECT_DOUBLE_EQ(parse_host_overhead("auto").factor, kDefaultHostOverheadFactor);
  EXPECT_DOUBLE_EQ(parse_host_overhead("2.5").factor, 2.5);
  EXPECT_EQ(parse_host_overhead("2.5").spec(), "2.5");
  EXPECT_EQ(parse_host_overhead("off").spec(), "off");
  for (const char* bad : {"0.5", "abc", "", "2x", "1000"}) {
    try {
      parse_host_overhead(bad);
      ADD_FAILURE() << bad;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("host_overhead"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace dvfsim
