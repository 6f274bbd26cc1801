#include "framework/int8_speedup.h"

#include <gtest/gtest.h>

namespace rooftune {
namespace {

// 100 GFLOP/s f32 and 200 GOP/s u8s8 per thread, 10 GB/s DRAM.
MachineProfile RoundMachine() {
  MachineProfile p;
  p.ceilings = {{Ceiling::Kind::kCompute, Dtype::kF32, MemoryLevel::kDram, 1, 100e9, "fma"},
                {Ceiling::Kind::kCompute, Dtype::kU8S8, MemoryLevel::kDram, 1, 200e9, "vnni"},
                {Ceiling::Kind::kBandwidth, Dtype::kF32, MemoryLevel::kDram, 1, 10e9, "read"}};
  return p;
}

TEST(Int8SpeedupBound, GemvIsTheRatioOfBytes) {
  const Workload w{Op::kGemv, 1, 4096, 4096, Dtype::kS8F32, Epilogue::kNone};
  absl::StatusOr<SpeedupBound> b = Int8SpeedupBound(RoundMachine(), w, 1);
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_TRUE(b->memory_bound);
  // f32: 4 bytes per weight; s8: 1 byte per weight plus a 4-byte scale per row; x and y in f32.
  const double f32_bytes = 4.0 * 4096 * 4096 + 4.0 * 4096 + 4.0 * 4096;
  const double s8_bytes = 1.0 * 4096 * 4096 + 4.0 * 4096 + 4.0 * 4096 + 4.0 * 4096;
  EXPECT_NEAR(b->ratio, f32_bytes / s8_bytes, 1e-9);
  EXPECT_GT(b->ratio, 3.9);
  EXPECT_LT(b->ratio, 4.0);
  EXPECT_NE(b->basis.find("bytes"), std::string::npos);
}

TEST(Int8SpeedupBound, LargeGemmIsTheRatioOfComputeCeilings) {
  const Workload w{Op::kGemm, 2048, 2048, 2048, Dtype::kU8S8, Epilogue::kNone};
  absl::StatusOr<SpeedupBound> b = Int8SpeedupBound(RoundMachine(), w, 1);
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_FALSE(b->memory_bound);
  EXPECT_DOUBLE_EQ(b->ratio, 2.0);
  EXPECT_DOUBLE_EQ(b->f32_bound_seconds, w.Operations() / 100e9);
  EXPECT_NE(b->basis.find("compute"), std::string::npos);
}

TEST(Int8SpeedupBound, WarmBytesComeFromTheCacheThatHoldsThem) {
  MachineProfile p = RoundMachine();
  p.caches = {{1, "Data", 32 << 10, 8, 64, 1}, {2, "Unified", 1 << 20, 16, 64, 1}};
  p.ceilings.push_back(
      {Ceiling::Kind::kBandwidth, Dtype::kF32, MemoryLevel::kL2, 1, 100e9, "read"});
  // 96 x 1024 weights: 384 KiB in f32 and 96 KiB in s8, both inside the 1 MiB L2.
  const Workload w{Op::kGemv, 1, 96, 1024, Dtype::kS8F32, Epilogue::kNone};
  absl::StatusOr<SpeedupBound> cold = Int8SpeedupBound(p, w, 1);
  absl::StatusOr<SpeedupBound> warm = Int8SpeedupBound(p, w, 1, /*warm=*/true);
  ASSERT_TRUE(cold.ok() && warm.ok());
  EXPECT_DOUBLE_EQ(cold->f32_bound_seconds, F32Counterpart(w).CompulsoryBytes() / 10e9);
  EXPECT_DOUBLE_EQ(warm->f32_bound_seconds, F32Counterpart(w).CompulsoryBytes() / 100e9);
  // From L2 the s8 GEMV's bytes take less time than its arithmetic at the f32 ceiling: the warm
  // bound is f32 bytes over s8 compute, well under the cold bytes ratio.
  EXPECT_TRUE(cold->memory_bound);
  EXPECT_FALSE(warm->memory_bound);
  EXPECT_DOUBLE_EQ(warm->ratio, warm->f32_bound_seconds / (w.Operations() / 100e9));
  EXPECT_LT(warm->ratio, cold->ratio);
}

TEST(Int8SpeedupBound, RefusesWhatItCannotPrice) {
  const Workload f32{Op::kGemm, 64, 64, 64, Dtype::kF32, Epilogue::kNone};
  EXPECT_EQ(Int8SpeedupBound(RoundMachine(), f32, 1).status().code(),
            absl::StatusCode::kInvalidArgument);
  const Workload w{Op::kGemm, 64, 64, 64, Dtype::kU8S8, Epilogue::kNone};
  EXPECT_EQ(Int8SpeedupBound(RoundMachine(), w, 2).status().code(),  // no 2-thread ceilings
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(F32Counterpart(w).dtype, Dtype::kF32);
  EXPECT_EQ(F32Counterpart(w).m, 64);
}

}  // namespace
}  // namespace rooftune
