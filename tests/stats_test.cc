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

// Nearest rank, no interpolation, whatever the order the values come in.
TEST(QuartilesOf, NearestRankOfUnsortedValues) {
  const Quartiles q = QuartilesOf({9, 1, 5, 3, 7});  // 1 3 5 7 9
  EXPECT_DOUBLE_EQ(q.low, 3);
  EXPECT_DOUBLE_EQ(q.median, 5);
  EXPECT_DOUBLE_EQ(q.high, 7);
  const Quartiles four = QuartilesOf({4, 1, 3, 2});  // ranks 0.75, 1.5, 2.25 round to 1, 2, 2
  EXPECT_DOUBLE_EQ(four.low, 2);
  EXPECT_DOUBLE_EQ(four.median, 3);
  EXPECT_DOUBLE_EQ(four.high, 3);
  const Quartiles none = QuartilesOf({});
  EXPECT_EQ(none.median, 0);
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
