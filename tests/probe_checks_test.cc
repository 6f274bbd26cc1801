#include "probes/probe_checks.h"

#include <gtest/gtest.h>

#include "probes/peak_compute.h"

namespace rooftune::probes {
namespace {

TEST(RepetitionSpread, IsTheMediansShortfallFromTheBest) {
  EXPECT_EQ(RepetitionSpread({}), 0);
  EXPECT_EQ(RepetitionSpread({5}), 0);
  EXPECT_NEAR(RepetitionSpread({100, 98, 99}), 0.01, 1e-12);
  // Two of three repetitions in a slow phase: the median is one of them.
  EXPECT_NEAR(RepetitionSpread({100, 50, 55}), 0.45, 1e-12);
  EXPECT_GT(RepetitionSpread({100, 50, 55}), kRepetitionSpread);
}

// 1 thread: 100 GFLOP/s at 2 GHz with a 64 op/cycle instruction is 50 ops/cycle.
TEST(ComputeContradiction, TwoThreadsOnTwoCoresMustScale) {
  EXPECT_EQ(ComputeContradiction(200e9, 2, 2, 100e9, 64, 2.0), "");
  EXPECT_EQ(ComputeContradiction(171e9, 2, 2, 100e9, 64, 2.0), "");  // 0.855: within scaling
  const std::string hog = ComputeContradiction(120e9, 2, 2, 100e9, 64, 2.0);
  EXPECT_NE(hog.find("1.20 x the one-thread rate on 2 threads"), std::string::npos) << hog;
  // SMT siblings share a core: two threads on one core legitimately stay near one core's rate.
  EXPECT_EQ(ComputeContradiction(110e9, 2, 1, 100e9, 64, 2.0), "");
  // Without a one-thread figure there is nothing to scale from.
  EXPECT_EQ(ComputeContradiction(120e9, 2, 2, 0, 64, 2.0), "");
}

// A contradicted multi-thread rate is stored at no less than a core each at the one-thread rate.
TEST(ScalingFloor, IsThreadsTimesTheOneThreadRateOnlyWithACoreEach) {
  EXPECT_EQ(ScalingFloor(2, 2, 100e9), 200e9);
  EXPECT_EQ(ScalingFloor(4, 8, 50e9), 200e9);
  EXPECT_EQ(ScalingFloor(4, 2, 100e9), 0);  // SMT siblings share a core's units
  EXPECT_EQ(ScalingFloor(1, 2, 100e9), 0);  // one thread is the rate itself
  EXPECT_EQ(ScalingFloor(2, 2, 0), 0);      // no one-thread rate yet
}

// A zmm loop on units that take half a zmm a cycle is held to half its instructions' rate: a
// 45% floor against the full rate would sit a tenth under what such a core does at its best.
TEST(PeakProbeInfo, OpsPerCycleOnANarrowerDatapath) {
  const PeakProbeInfo zmm_fma{true, "AVX3_DL fma", 0, 64, 64};
  EXPECT_EQ(zmm_fma.OpsPerCycleOn(32), 32);
  EXPECT_EQ(zmm_fma.OpsPerCycleOn(64), 64);
  EXPECT_EQ(zmm_fma.OpsPerCycleOn(0), 64);  // unknown: as it is
  const PeakProbeInfo ymm_fma{true, "AVX2 fma", 0, 32, 32};
  EXPECT_EQ(ymm_fma.OpsPerCycleOn(64), 32);
  // Zen 4's measured 32 f32 ops a cycle: 50% of the zmm rate, all of the datapath's.
  EXPECT_EQ(ComputeContradiction(32 * 3.66e9, 1, 1, 0, zmm_fma.OpsPerCycleOn(32), 3.66), "");
  EXPECT_NE(ComputeContradiction(0.4 * 32 * 3.66e9, 1, 1, 0, zmm_fma.OpsPerCycleOn(32), 3.66), "");
}

TEST(ComputeContradiction, PerCycleRateWithinTheInstructionsThroughput) {
  // 64 ops/cycle at 2 GHz on one core is 128 GFLOP/s; 10% over it is the clock's error.
  EXPECT_EQ(ComputeContradiction(140e9, 1, 1, 0, 64, 2.0), "");
  const std::string above = ComputeContradiction(150e9, 1, 1, 0, 64, 2.0);
  EXPECT_NE(above.find("above the instruction's 64"), std::string::npos) << above;
  // Half the throughput is a core that runs wide vectors in halves: legal. Under 45%, not.
  EXPECT_EQ(ComputeContradiction(64e9, 1, 1, 0, 64, 2.0), "");
  const std::string below = ComputeContradiction(50e9, 1, 1, 0, 64, 2.0);
  EXPECT_NE(below.find("under half the instruction's 64"), std::string::npos) << below;
  // Per core: two threads share the rate.
  EXPECT_EQ(ComputeContradiction(256e9, 2, 2, 128e9, 64, 2.0), "");
  // Unknown throughput or clock: no per-cycle check.
  EXPECT_EQ(ComputeContradiction(1e12, 1, 1, 0, 0, 2.0), "");
  EXPECT_EQ(ComputeContradiction(1e12, 1, 1, 0, 64, 0), "");
}

TEST(OutOfOrderReads, NamesEveryLevelOfAPairThatIsOutOfOrder) {
  using K = Ceiling::Kind;
  auto read = [](MemoryLevel level, int threads, double rate) {
    return Ceiling{K::kBandwidth, Dtype::kF32, level, threads, rate, "read"};
  };
  const std::vector<Ceiling> ordered = {
      read(MemoryLevel::kL1, 1, 300e9), read(MemoryLevel::kL2, 1, 100e9),
      read(MemoryLevel::kL3, 1, 50e9), read(MemoryLevel::kDram, 1, 20e9)};
  EXPECT_TRUE(OutOfOrderReads(ordered, 1).empty());
  // An L3 read in a slow phase below DRAM's.
  std::vector<Ceiling> slow_l3 = ordered;
  slow_l3[2].per_second = 15e9;
  EXPECT_EQ(OutOfOrderReads(slow_l3, 1),
            (std::vector<MemoryLevel>{MemoryLevel::kL3, MemoryLevel::kDram}));
  // Within the slack, two levels the same core limit caps: no order broken.
  std::vector<Ceiling> close = ordered;
  close[1].per_second = 46e9;  // L2 at 46 against L3's 50: 8% under
  EXPECT_TRUE(OutOfOrderReads(close, 1).empty());
  // Other thread counts and other kinds do not count.
  slow_l3.push_back(read(MemoryLevel::kDram, 2, 400e9));
  slow_l3.push_back({K::kBandwidth, Dtype::kF32, MemoryLevel::kDram, 1, 900e9, "write"});
  EXPECT_EQ(OutOfOrderReads(slow_l3, 1).size(), 2u);
  EXPECT_TRUE(OutOfOrderReads(slow_l3, 2).empty());
  // L1 below L2: both named, and nothing else.
  std::vector<Ceiling> slow_l1 = ordered;
  slow_l1[0].per_second = 80e9;
  EXPECT_EQ(OutOfOrderReads(slow_l1, 1),
            (std::vector<MemoryLevel>{MemoryLevel::kL1, MemoryLevel::kL2}));
}

TEST(UnstableNote, SaysWhyAndTheRangeInTheCeilingsUnit) {
  const Ceiling c{Ceiling::Kind::kCompute, Dtype::kF32, MemoryLevel::kDram, 2, 200e9, "fma"};
  EXPECT_EQ(UnstableNote(c, "why", 150e9, 210e9),
            "unstable (why; repetitions 150.0 GFLOP/s to 210.0 GFLOP/s)");
}

TEST(StealShare, IsStealOverTotalBetweenTwoReadings) {
  EXPECT_EQ(StealShare({100, 5}, {100, 5}), 0);
  EXPECT_NEAR(StealShare({100, 5}, {300, 25}), 0.1, 1e-12);
  // The real /proc/stat reads, and time only moves forward.
  const CpuTimes a = ReadCpuTimes();
  const CpuTimes b = ReadCpuTimes();
  EXPECT_GT(a.total, 0u);
  EXPECT_GE(b.total, a.total);
  EXPECT_GE(StealShare(a, b), 0);
  EXPECT_LE(StealShare(a, b), 1);
}

}  // namespace
}  // namespace rooftune::probes
