// OutputSink::format and the numbers that write themselves (apps/files.h):
// the text of printf's %.Nf and %.Ng, and records of any length.
#include <gtest/gtest.h>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <string>

#include "apps/files.h"

namespace dvfsim {
namespace {

std::string text(auto x) {
  char buf[kMaxNumberChars];
  return std::string(buf, x.write(buf));
}

TEST(OutputNumbers, FixedIsPrintfsExactlyRoundedFixedPoint) {
  EXPECT_EQ(text(Fixed{1635.0, 1}), "1635.0");
  EXPECT_EQ(text(Fixed{562.6774, 3}), "562.677");
  EXPECT_EQ(text(Fixed{0.125, 2}), "0.12");  // a true tie: to even, as printf
  EXPECT_EQ(text(Fixed{0.375, 2}), "0.38");
  EXPECT_EQ(text(Fixed{2.675, 2}), "2.67");  // 2.67499999999999982236431605997495353221893310546875
  EXPECT_EQ(text(Fixed{-0.04, 1}), "-0.0");
  EXPECT_EQ(text(Fixed{1e20, 1}), "100000000000000000000.0");
  EXPECT_EQ(text(Fixed{-1.7976931348623157e308, 3}).size(), 1 + 309 + 1 + 3);
}

// Fixed's own digits (exact below 2^40 away from ties) against std::to_chars
// on values at, next to and between the ties of every precision used.
TEST(OutputNumbers, FixedAgreesWithToCharsAroundTies) {
  char want[kMaxNumberChars];
  int checked = 0;
  for (int decimals : {0, 1, 3, 9})
    for (std::int64_t n = -20000; n <= 20000; n += 7)
      for (double step : {0.0, 0.25, 0.5, 0.75}) {
        const double tie = (static_cast<double>(n) + step) / std::pow(10.0, decimals);
        for (double v :
             {tie, std::nextafter(tie, -1e300), std::nextafter(tie, 1e300), tie * 1234.5678}) {
          const std::string expected(
              want,
              std::to_chars(want, want + sizeof want, v, std::chars_format::fixed, decimals).ptr);
          ASSERT_EQ(text(Fixed{v, decimals}), expected) << v << " with " << decimals;
          ++checked;
        }
      }
  EXPECT_EQ(checked, 4 * 5715 * 4 * 4);
}

// Significant's own digits against std::to_chars at, next to and between
// the 9-digit ties and the powers of ten (where the exponent changes).
TEST(OutputNumbers, SignificantAgreesWithToCharsAroundTiesAndPowersOfTen) {
  char want[kMaxNumberChars];
  int checked = 0;
  for (int e = -18; e <= 24; ++e)
    for (double mantissa : {1.0, 1.234567885, 5.0, 9.999999995, 9.9999999949, 9.99999999})
      for (int digits : {1, 9, 12}) {
        const double x = mantissa * std::pow(10.0, e);
        for (double v : {x, -x, std::nextafter(x, 0.0), std::nextafter(x, 1e300)}) {
          const std::string expected(
              want,
              std::to_chars(want, want + sizeof want, v, std::chars_format::general, digits).ptr);
          ASSERT_EQ(text(Significant{v, digits}), expected) << v << " with " << digits;
          ++checked;
        }
      }
  EXPECT_EQ(checked, 43 * 6 * 3 * 4);
}

TEST(OutputNumbers, SignificantIsPrintfsG) {
  EXPECT_EQ(text(Significant{0.0216056589, 9}), "0.0216056589");
  EXPECT_EQ(text(Significant{0.000198201529, 9}), "0.000198201529");
  EXPECT_EQ(text(Significant{0.00001234567891, 9}), "1.23456789e-05");  // below 1e-4: exponent
  EXPECT_EQ(text(Significant{1234567890.0, 9}), "1.23456789e+09");      // 10 digits > 9
  EXPECT_EQ(text(Significant{2.5, 9}), "2.5");                          // no trailing zeros
  EXPECT_EQ(text(Significant{0.0, 9}), "0");
}

TEST(OutputSink, FormatWritesRecordsOfAnyLengthWhole) {
  StringSink s;
  const std::string name(3 * OutputSink::kChunkBytes, 'x');  // longer than a chunk
  s.format(FMT_COMPILE("{},{},{},{}\n"), -12, name, Fixed{1.25, 1}, Significant{1.0 / 3, 3});
  s.write("end");
  s.put('\n');
  EXPECT_EQ(s.str(), "-12," + name + ",1.2,0.333\nend\n");
}

}  // namespace
}  // namespace dvfsim
