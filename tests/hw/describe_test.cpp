#include "hw/describe.h"

#include <gtest/gtest.h>

namespace dvfsim::hw {
namespace {

std::vector<unsigned> range(unsigned first, unsigned last, unsigned step) {
  std::vector<unsigned> out;
  for (unsigned mhz = first; mhz <= last; mhz += step) out.push_back(mhz);
  return out;
}

TEST(HwDescribe, OneArithmeticRunBecomesARange) {
  EXPECT_EQ(describe_clock_list(range(345, 1980, 15)), "345–1980 MHz step 15 (110 values)");
}

TEST(HwDescribe, UnsortedDescendingInputIsSorted) {
  std::vector<unsigned> descending = range(345, 1980, 15);
  std::reverse(descending.begin(), descending.end());
  EXPECT_EQ(describe_clock_list(descending), "345–1980 MHz step 15 (110 values)");
}

TEST(HwDescribe, IrregularListIsListed) {
  EXPECT_EQ(describe_clock_list({9501, 405, 810, 5001, 9251}),
            "405, 810, 5001, 9251, 9501 MHz (5 values)");
  EXPECT_EQ(describe_clock_list({3201}), "3201 MHz (1 value)");
  EXPECT_EQ(describe_clock_list({}), "none");
}

TEST(HwDescribe, MixedRunsAndSingles) {
  std::vector<unsigned> clocks = {100, 200};
  for (unsigned mhz : range(1000, 1100, 50)) clocks.push_back(mhz);
  EXPECT_EQ(describe_clock_list(clocks), "100, 200, 1000–1100 step 50 MHz (5 values)");
}

TEST(HwDescribe, ReasonBitsAreNamed) {
  EXPECT_EQ(clock_event_reason_names(0), "none");
  EXPECT_EQ(clock_event_reason_names(0x1), "GpuIdle");
  EXPECT_EQ(clock_event_reason_names(0x5), "GpuIdle|SwPowerCap");
  EXPECT_EQ(clock_event_reason_names(0x8 | 0x100), "HwSlowdown|DisplayClock");
  EXPECT_EQ(clock_event_reason_names(0x2 | 0x1000), "AppClocks|unknown 0x1000");
  EXPECT_EQ(describe_clock_event_reasons(0x4), "0x4 (SwPowerCap)");
  EXPECT_EQ(describe_clock_event_reasons(0x5), "0x5 (GpuIdle, SwPowerCap)");
}

}  // namespace
}  // namespace dvfsim::hw
