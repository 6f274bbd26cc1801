#include "framework/workload.h"

#include <gtest/gtest.h>

namespace rooftune {
namespace {

TEST(ParseWorkload, GemmAndGemvShapes) {
  absl::StatusOr<Workload> gemm =
      ParseWorkload(Op::kGemm, "7x13x29", Dtype::kF32, Epilogue::kNone, 0);
  ASSERT_TRUE(gemm.ok()) << gemm.status();
  EXPECT_EQ(gemm->m, 7);
  EXPECT_EQ(gemm->n, 13);
  EXPECT_EQ(gemm->k, 29);
  EXPECT_DOUBLE_EQ(gemm->Operations(), 2.0 * 7 * 13 * 29);
  EXPECT_EQ(gemm->Key(), "gemm 7x13x29 f32 none");

  absl::StatusOr<Workload> gemv =
      ParseWorkload(Op::kGemv, "4096x1024", Dtype::kS8F32, Epilogue::kBiasRelu, 0);
  ASSERT_TRUE(gemv.ok());
  EXPECT_EQ(gemv->m, 1);
  EXPECT_EQ(gemv->n, 4096);
  EXPECT_EQ(gemv->k, 1024);
  EXPECT_EQ(gemv->Key(), "gemv 4096x1024 s8f32 bias_relu");
}

TEST(ParseWorkload, RejectsBadShapesWithTheReason) {
  struct Case {
    Op op;
    const char* shape;
    const char* message;
  };
  for (const Case& c :
       {Case{Op::kGemm, "0x4x4", "at least 1"}, Case{Op::kGemm, "4x-4x4", "at least 1"},
        Case{Op::kGemm, "4xax4", "not an integer"}, Case{Op::kGemm, "4x4", "MxNxK"},
        Case{Op::kGemv, "4x4x4", "NxK"}, Case{Op::kGemm, "", "MxNxK"},
        Case{Op::kGemm, "4x4x99999999999", "too large"}}) {
    absl::StatusOr<Workload> w = ParseWorkload(c.op, c.shape, Dtype::kF32, Epilogue::kNone, 0);
    ASSERT_FALSE(w.ok()) << c.shape;
    EXPECT_EQ(w.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(w.status().message().find(c.message), std::string::npos) << w.status();
  }
}

TEST(ParseWorkload, RefusesOperandsLargerThanMemory) {
  absl::StatusOr<Workload> w = ParseWorkload(Op::kGemm, "100000x100000x100000", Dtype::kF32,
                                             Epilogue::kNone, uint64_t{1} << 30);
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(w.status().message().find("GiB"), std::string::npos);
}

TEST(Workload, CompulsoryBytesCountsEveryOperandOnce) {
  Workload w{Op::kGemm, 2, 3, 4, Dtype::kF32, Epilogue::kBias};
  EXPECT_DOUBLE_EQ(w.CompulsoryBytes(), 4.0 * (2 * 4 + 4 * 3 + 2 * 3) + 4.0 * 3);
  Workload q{Op::kGemv, 1, 8, 16, Dtype::kS8F32, Epilogue::kNone};
  EXPECT_DOUBLE_EQ(q.CompulsoryBytes(), 4.0 * 16 + 1.0 * 16 * 8 + 4.0 * 8 + 4.0 * 8);
}

TEST(ParseNames, RoundTripAndErrors) {
  for (Dtype d : {Dtype::kF32, Dtype::kF64, Dtype::kU8S8, Dtype::kS8F32}) {
    EXPECT_EQ(*ParseDtype(ToString(d)), d);
  }
  for (Epilogue e : {Epilogue::kNone, Epilogue::kBias, Epilogue::kBiasRelu}) {
    EXPECT_EQ(*ParseEpilogue(ToString(e)), e);
  }
  EXPECT_FALSE(ParseDtype("f16").ok());
  EXPECT_FALSE(ParseEpilogue("gelu").ok());
  EXPECT_FALSE(ParseOp("conv").ok());
}

}  // namespace
}  // namespace rooftune
