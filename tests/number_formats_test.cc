// The number formats' limits, computed from their bits, against the published values.
#include "framework/number_formats.h"

#include <gtest/gtest.h>

#include <cfloat>
#include <map>

namespace rooftune {
namespace {

TEST(NumberFormats, LimitsMatchThePublishedValues) {
  std::map<std::string, NumberFormat> by_name;
  for (const NumberFormat& f : NumberFormats()) by_name[f.name] = f;
  ASSERT_EQ(by_name.size(), 9u);
  EXPECT_EQ(by_name["fp64"].Largest(), DBL_MAX);
  EXPECT_EQ(by_name["fp64"].SmallestNormal(), DBL_MIN);
  EXPECT_EQ(by_name["fp64"].StepNearOne(), DBL_EPSILON);
  EXPECT_EQ(by_name["fp32"].Largest(), double(FLT_MAX));
  EXPECT_EQ(by_name["fp32"].SmallestNormal(), double(FLT_MIN));
  EXPECT_EQ(by_name["fp32"].StepNearOne(), double(FLT_EPSILON));
  EXPECT_EQ(by_name["fp16"].Largest(), 65504);
  EXPECT_EQ(by_name["fp16"].SmallestNormal(), 1.0 / 16384);
  EXPECT_EQ(by_name["fp16"].StepNearOne(), 1.0 / 1024);
  EXPECT_EQ(by_name["bf16"].Largest(), 3.3895313892515355e38);
  EXPECT_EQ(by_name["bf16"].StepNearOne(), 1.0 / 128);
  EXPECT_EQ(by_name["tf32"].StepNearOne(), 1.0 / 1024);
  EXPECT_EQ(by_name["tf32"].SmallestNormal(), double(FLT_MIN));
  EXPECT_EQ(by_name["fp8 e4m3"].Largest(), 448);  // no infinities: the top exponent is finite
  EXPECT_EQ(by_name["fp8 e4m3"].SmallestNormal(), 1.0 / 64);
  EXPECT_EQ(by_name["fp8 e5m2"].Largest(), 57344);
  EXPECT_EQ(by_name["fp8 e5m2"].SmallestNormal(), 1.0 / 16384);
  EXPECT_EQ(by_name["int8"].Largest(), 127);
  EXPECT_EQ(by_name["int4"].Largest(), 7);
  EXPECT_EQ(by_name["int4"].BytesPerBillionParams(), 0.5e9);
  EXPECT_EQ(by_name["bf16"].BytesPerBillionParams(), 2e9);
}

}  // namespace
}  // namespace rooftune
