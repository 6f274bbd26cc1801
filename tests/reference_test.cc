#include "framework/reference.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "framework/problem.h"
#include "framework/validation.h"

namespace rooftune {
namespace {

TEST(ReferenceGemmF32, HandCheckedTwoByTwo) {
  const float a[] = {1, 2, 3, 4};  // [[1,2],[3,4]]
  const float b[] = {5, 6, 7, 8};  // [[5,6],[7,8]]
  float c[] = {100, 100, 100, 100};
  ReferenceGemmF32(2, 2, 2, 1.0f, a, 2, b, 2, 0.0f, c, 2, nullptr, Epilogue::kNone);
  EXPECT_EQ(c[0], 19);
  EXPECT_EQ(c[1], 22);
  EXPECT_EQ(c[2], 43);
  EXPECT_EQ(c[3], 50);
}

TEST(ReferenceGemmF32, AlphaBetaBiasAndRelu) {
  const float a[] = {1, 2, 3, 4};
  const float b[] = {5, 6, 7, 8};
  float c[] = {1, 1, 1, 1};
  const float bias[] = {-100, 1};
  // 2 * AB + 3 * C + bias, then ReLU: [[38+3-100, 44+3+1], [86+3-100, 100+3+1]].
  ReferenceGemmF32(2, 2, 2, 2.0f, a, 2, b, 2, 3.0f, c, 2, bias, Epilogue::kBiasRelu);
  EXPECT_EQ(c[0], 0);
  EXPECT_EQ(c[1], 48);
  EXPECT_EQ(c[2], 0);
  EXPECT_EQ(c[3], 104);
}

TEST(ReferenceGemmF32, BetaZeroNeverReadsC) {
  const float a[] = {1}, b[] = {2};
  float c[] = {std::numeric_limits<float>::quiet_NaN()};
  ReferenceGemmF32(1, 1, 1, 1.0f, a, 1, b, 1, 0.0f, c, 1, nullptr, Epilogue::kNone);
  EXPECT_EQ(c[0], 2);
}

TEST(ReferenceGemmF32, ReluKeepsNaN) {
  const float a[] = {std::numeric_limits<float>::quiet_NaN()}, b[] = {1}, bias[] = {0};
  float c[1];
  ReferenceGemmF32(1, 1, 1, 1.0f, a, 1, b, 1, 0.0f, c, 1, bias, Epilogue::kBiasRelu);
  EXPECT_TRUE(std::isnan(c[0]));
}

TEST(ReferenceGemmU8S8, ExtremeValuesAreExact) {
  // 255 * -128 * K with K = 4096 stays within s32 and must not saturate anywhere.
  const int64_t k = 4096;
  std::vector<uint8_t> a(k, 255);
  std::vector<int8_t> b(k, -128);
  int32_t c = 0;
  ReferenceGemmU8S8(1, 1, k, a.data(), k, b.data(), 1, &c, 1);
  EXPECT_EQ(c, -255 * 128 * 4096);
}

// 255 x -128 x 65793 = -2,147,483,520 still fits s32; one more term does not, and validation
// then fails whatever the kernel returned (a kernel matching the wrapped sum is as wrong).
TEST(ReferenceGemmU8S8, ASumBeyondS32IsCountedAndFailsValidation) {
  for (int64_t k : {int64_t(65793), int64_t(65794)}) {
    std::vector<uint8_t> a(k, 255);
    std::vector<int8_t> b(k, -128);
    int32_t c = 0;
    int64_t first = -1;
    const int64_t overflows = ReferenceGemmU8S8(1, 1, k, a.data(), k, b.data(), 1, &c, 1, &first);
    EXPECT_EQ(overflows, k == 65793 ? 0 : 1) << k;
    if (k == 65793) EXPECT_EQ(c, -255 * 128 * 65793);
    if (k == 65794) EXPECT_EQ(first, 0);
  }
  for (Epilogue e : {Epilogue::kNone, Epilogue::kBias}) {
    absl::StatusOr<Problem> p = Problem::Create({Op::kGemm, 1, 2, 65794, Dtype::kU8S8, e});
    ASSERT_TRUE(p.ok());
    std::fill(p->a_u8.data(), p->a_u8.data() + p->a_u8.size(), uint8_t(255));
    std::fill(p->b_s8.data(), p->b_s8.data() + p->b_s8.size(), int8_t(-128));
    p->RecomputeColumnSums();
    const ReferenceOutput ref = ComputeReference(*p);
    EXPECT_EQ(ref.s32_overflows, 2);
    // Even the wrapped sums themselves do not pass.
    if (e == Epilogue::kNone) std::copy(ref.s32.begin(), ref.s32.end(), p->c_s32.data());
    const Validation v = CompareWithReference(*p, ref);
    EXPECT_FALSE(v.ok);
    EXPECT_NE(v.first_mismatch.find("does not fit the s32 accumulator"), std::string::npos)
        << v.first_mismatch;
  }
}

TEST(ReferenceDequantize, FollowsTheFormula) {
  // y = s_a * s_w * (acc - z_a * colsum) + bias = 0.5 * 0.25 * (100 - 3 * 10) + 1 = 9.75.
  EXPECT_FLOAT_EQ(ReferenceDequantize(100, 0.5f, 3, 0.25f, 10, 1.0f, false), 9.75f);
  EXPECT_FLOAT_EQ(ReferenceDequantize(0, 0.5f, 3, 0.25f, 10, 1.0f, true), 0.0f);  // -2.75 -> 0
}

TEST(ReferenceGemv, F32AndS8WithRowScales) {
  const float w[] = {1, 2, 3, 4, 5, 6};  // 2 x 3
  const float x[] = {1, 0, -1};
  float y[2];
  ReferenceGemvF32(2, 3, w, 3, x, y, nullptr, Epilogue::kNone);
  EXPECT_EQ(y[0], -2);
  EXPECT_EQ(y[1], -2);
  const int8_t w8[] = {10, 20, 30, -40, 50, 60};
  const float scales[] = {0.5f, 2.0f}, bias[] = {1, 1};
  ReferenceGemvS8F32(2, 3, w8, 3, scales, x, y, bias, Epilogue::kBiasRelu);
  EXPECT_EQ(y[0], 0.5f * (10 - 30) + 1 < 0 ? 0 : 0.5f * (10 - 30) + 1);
  EXPECT_EQ(y[1], 0);  // 2 * (-40 - 60) + 1 < 0
}

TEST(Validation, CatchesOneWrongElementAndAcceptsRoundoff) {
  Workload w{Op::kGemm, 16, 16, 300, Dtype::kF32, Epilogue::kNone};
  absl::StatusOr<Problem> p = Problem::Create(w);
  ASSERT_TRUE(p.ok());
  const ReferenceOutput ref = ComputeReference(*p);
  for (size_t i = 0; i < ref.f32.size(); ++i) p->c[i] = ref.f32[i];
  EXPECT_TRUE(CompareWithReference(*p, ref).ok);
  // Roundoff-sized error passes...
  p->c[5] = std::nextafter(p->c[5], 1e9f);
  EXPECT_TRUE(CompareWithReference(*p, ref).ok);
  // ...one missing product does not.
  p->c[37] += p->a[2 * 300 + 7] * p->b[7 * 16 + 5] + 0.05f;
  const Validation v = CompareWithReference(*p, ref);
  EXPECT_FALSE(v.ok);
  EXPECT_EQ(v.mismatches, 1);
  EXPECT_NE(v.first_mismatch.find("C[2][5]"), std::string::npos) << v.first_mismatch;
}

TEST(Validation, NaNMustMatchNaN) {
  Workload w{Op::kGemm, 2, 2, 2, Dtype::kF32, Epilogue::kNone};
  absl::StatusOr<Problem> p = Problem::Create(w);
  ASSERT_TRUE(p.ok());
  p->a[0] = std::numeric_limits<float>::quiet_NaN();
  const ReferenceOutput ref = ComputeReference(*p);
  ASSERT_TRUE(std::isnan(ref.f32[0]));
  for (size_t i = 0; i < ref.f32.size(); ++i) p->c[i] = ref.f32[i];
  EXPECT_TRUE(CompareWithReference(*p, ref).ok);
  p->c[0] = 0;
  EXPECT_FALSE(CompareWithReference(*p, ref).ok);
}

TEST(Validation, AnElementAgreesByItsKind) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_TRUE(ElementAgrees(1.0, 1.25, 0.25));
  EXPECT_FALSE(ElementAgrees(1.0, 1.25, 0.24));
  EXPECT_TRUE(ElementAgrees(nan, nan, 0));
  EXPECT_FALSE(ElementAgrees(1.0, nan, 1e30));
  EXPECT_FALSE(ElementAgrees(nan, 1.0, 1e30));
  EXPECT_TRUE(ElementAgrees(-inf, -inf, 0));
  EXPECT_FALSE(ElementAgrees(inf, -inf, 1e30));
  EXPECT_FALSE(ElementAgrees(inf, 1e300, 1e30));
  EXPECT_FALSE(ElementAgrees(1e300, inf, 1e30));
}

TEST(Validation, IntegerAccumulatorsMustBeExact) {
  Workload w{Op::kGemm, 3, 5, 7, Dtype::kU8S8, Epilogue::kNone};
  absl::StatusOr<Problem> p = Problem::Create(w);
  ASSERT_TRUE(p.ok());
  const ReferenceOutput ref = ComputeReference(*p);
  for (size_t i = 0; i < ref.s32.size(); ++i) p->c_s32[i] = ref.s32[i];
  EXPECT_TRUE(CompareWithReference(*p, ref).ok);
  p->c_s32[4] += 1;
  EXPECT_FALSE(CompareWithReference(*p, ref).ok);
}

}  // namespace
}  // namespace rooftune
