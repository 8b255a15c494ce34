// The CSV line splitter and number parser shared by every CSV reader.
#include "sim/csv.h"

#include <gtest/gtest.h>

namespace dvfsim {
namespace {

TEST(Csv, SplitsQuotedFieldsAndDropsCarriageReturns) {
  using V = std::vector<std::string>;
  EXPECT_EQ(split_csv_line("a,b,,c\r"), (V{"a", "b", "", "c"}));
  EXPECT_EQ(split_csv_line("\"f<8, T1>(int)\",4,\"say \"\"hi\"\"\""),
            (V{"f<8, T1>(int)", "4", "say \"hi\""}));
  EXPECT_EQ(split_csv_line(""), (V{""}));
}

TEST(Csv, NumbersMustBeWholeAndFinite) {
  EXPECT_EQ(parse_csv_double("1.5e3"), 1500.0);
  EXPECT_EQ(parse_csv_double("-2"), -2.0);
  EXPECT_FALSE(parse_csv_double("12x"));
  EXPECT_FALSE(parse_csv_double(""));
  EXPECT_FALSE(parse_csv_double("inf"));
  EXPECT_FALSE(parse_csv_double("nan"));
}

}  // namespace
}  // namespace dvfsim
