#include "framework/stats.h"

#include <gtest/gtest.h>

namespace rooftune {
namespace {

TEST(Summarize, MedianMinAndCoefficientOfVariation) {
  const SampleStats odd = Summarize({5, 1, 3});
  EXPECT_EQ(odd.count, 3);
  EXPECT_DOUBLE_EQ(odd.median, 3);
  EXPECT_DOUBLE_EQ(odd.min, 1);
  EXPECT_DOUBLE_EQ(odd.max, 5);
  EXPECT_DOUBLE_EQ(odd.mean, 3);
  EXPECT_DOUBLE_EQ(odd.cv, 2.0 / 3.0);  // sample standard deviation 2 over mean 3

  const SampleStats even = Summarize({4, 1, 3, 2});
  EXPECT_DOUBLE_EQ(even.median, 2.5);
}

TEST(Summarize, OneOutlierMovesTheMeanNotTheMedian) {
  const SampleStats s = Summarize({1, 1, 1, 1, 1, 1, 1, 1, 1, 100});
  EXPECT_DOUBLE_EQ(s.median, 1);
  EXPECT_GT(s.mean, 10);
  EXPECT_GT(s.cv, 1);
}

TEST(Summarize, EmptyAndConstantSamples) {
  EXPECT_EQ(Summarize({}).count, 0);
  EXPECT_DOUBLE_EQ(Summarize({2, 2, 2}).cv, 0);
}

}  // namespace
}  // namespace rooftune
