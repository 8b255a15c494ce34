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
