// The pairing measures real loops beside real kernels: these tests run both, on this machine.
#include "probes/paired_ceiling.h"

#include <gtest/gtest.h>

#include <cstdio>

#include "absl/strings/match.h"
#include "framework/judged_trial.h"
#include "framework/kernel.h"
#include "framework/reference.h"
#include "probes/peak_compute.h"
#include "tests/round_machine.h"

namespace rooftune::probes {
namespace {

// The round machine with its f32 compute ceiling renamed to the loop this CPU runs, at `flops`.
MachineProfile MachineWithF32Peak(double flops) {
  MachineProfile p = fixtures::RoundMachine();
  p.ceilings[0].source = PeakPathFor(Dtype::kF32).path;
  p.ceilings[0].per_second = flops;
  return p;
}

struct Judged {
  Verdict prior, paired;
};

Judged JudgeOnThisMachine(const MachineProfile& profile, const std::string& kernel_name,
                          const Workload& w, CacheMode cache) {
  const Kernel* kernel = KernelRegistry::Global().Find(kernel_name);
  EXPECT_NE(kernel, nullptr);
  absl::StatusOr<Problem> problem = Problem::Create(w);
  EXPECT_TRUE(problem.ok());
  Executor executor(1);
  TimingOptions timing{.min_seconds = 0.02, .min_repetitions = 3, .cache = cache};
  absl::StatusOr<Trial> trial =
      RunTrial(*kernel, kernel->InitialConfig(w, 1, CacheMode::kWarm, profile), *problem,
               ComputeReference(*problem), executor, timing);
  EXPECT_TRUE(trial.ok()) << trial.status();
  EXPECT_TRUE(trial->validation.ok);
  absl::StatusOr<Verdict> paired =
      JudgeBesideCeiling(profile, *kernel, *trial, *problem, executor, {.seconds = 0.2});
  EXPECT_TRUE(paired.ok()) << paired.status();
  return {JudgeTrial(profile, *kernel, *trial), *paired};
}

// The read beside a memory-bound verdict bound at `binding` took its bytes from its own buffer
// alone, not from the kernel's operand.
void ExpectPairedWithItsBufferOnly(const Judged& j, const std::string& binding) {
  ASSERT_EQ(j.prior.binding, binding);
  ASSERT_TRUE(j.paired.paired.has_value());
  EXPECT_TRUE(absl::EndsWith(j.paired.paired->ceiling, " on huge pages)"))
      << j.paired.paired->ceiling;
}

// The case that made the profile's verdicts fail: a compute ceiling measured in a slow phase
// (here 1 GFLOP/s, far under any core) calls every GEMM impossible; beside the FMA loop itself,
// the same GEMM is what it is.
TEST(JudgeBesideCeiling, ACeilingMeasuredLowDoesNotMakeAComputeBoundGemmImpossible) {
  const MachineProfile profile = MachineWithF32Peak(1e9);
  const Workload w{Op::kGemm, 128, 128, 128, Dtype::kF32, Epilogue::kNone};
  const Judged j = JudgeOnThisMachine(profile, "gemm_f32", w, CacheMode::kWarm);
  EXPECT_EQ(j.prior.verdict, Verdict::Class::kImpossible);
  ASSERT_TRUE(j.paired.paired.has_value());
  EXPECT_EQ(j.paired.Basis(), "paired");
  EXPECT_NE(j.paired.paired->ceiling.find("f32 compute, 1 thread"), std::string::npos)
      << j.paired.paired->ceiling;
  EXPECT_NE(j.paired.paired->ceiling.find(PeakPathFor(Dtype::kF32).path), std::string::npos);
  EXPECT_GE(j.paired.paired->pairs, 11);
  EXPECT_LE(j.paired.paired->low, j.paired.paired->median);
  EXPECT_LE(j.paired.paired->median, j.paired.paired->high);
  EXPECT_NE(j.paired.verdict, Verdict::Class::kImpossible) << j.paired.diagnosis;
  EXPECT_GT(j.paired.attainment, 0.05);  // a tiled GEMM does real arithmetic
  // The loop ran far above the 1 GFLOP/s the profile claims: its rate against the profile's.
  EXPECT_GT(j.paired.paired->ceiling_now, 5);
  // The profile's figure stays beside it, and the tolerance is the pairs' spread or the floor.
  EXPECT_DOUBLE_EQ(j.paired.profile_attainment, j.prior.attainment);
  EXPECT_DOUBLE_EQ(j.paired.tolerance, ImpossibleTolerance(j.paired.paired, 0));
}

// A cold GEMV is priced by its weights' DRAM bytes: the pair is the stream read of as many bytes,
// evicted first as the GEMV's are, and a GEMV cannot read DRAM faster than a stream read does. The
// read takes its bytes from a buffer of its own on huge pages and from the GEMV's own weights,
// which lie where the caller put them.
TEST(JudgeBesideCeiling, AColdGemvIsPairedWithTheStreamReadFromDram) {
  MachineProfile profile = MachineWithF32Peak(1e12);
  profile.ceilings[2].per_second = 1e9;  // DRAM read "measured" at 1 GB/s: far too low
  const Workload w{Op::kGemv, 1, 2048, 2048, Dtype::kF32, Epilogue::kNone};
  const Judged j = JudgeOnThisMachine(profile, "gemv_f32", w, CacheMode::kCold);
  EXPECT_EQ(j.prior.binding, "DRAM bandwidth, 1 thread");
  EXPECT_EQ(j.prior.verdict, Verdict::Class::kImpossible);
  ASSERT_TRUE(j.paired.paired.has_value());
  const std::string& loop = j.paired.paired->ceiling;
  EXPECT_TRUE(absl::StartsWith(loop, "DRAM bandwidth, 1 thread (read: streams:")) << loop;
  EXPECT_NE(loop.find(" on huge pages; "), std::string::npos) << loop;
  EXPECT_TRUE(absl::EndsWith(loop, " on the kernel's operand)")) << loop;
  EXPECT_EQ(loop.find("beside it"), std::string::npos) << loop;  // its FLOPs are far behind
  EXPECT_NE(j.paired.verdict, Verdict::Class::kImpossible) << j.paired.diagnosis;
  EXPECT_GT(j.paired.attainment, 0.1);
  EXPECT_GT(j.paired.paired->ceiling_now, 1);  // any DRAM reads faster than 1 GB/s
}

// int8 weights are read as the stream read reads floats (their bytes are all it counts); the
// denormals such bytes make now and then must not slow it, or the GEMV would look impossible.
TEST(JudgeBesideCeiling, AnInt8GemvsOwnWeightsAreReadAsBytes) {
  MachineProfile profile = MachineWithF32Peak(1e12);
  profile.ceilings[2].per_second = 1e9;
  const Workload w{Op::kGemv, 1, 2048, 2048, Dtype::kS8F32, Epilogue::kNone};
  const Judged j = JudgeOnThisMachine(profile, "gemv_s8", w, CacheMode::kCold);
  EXPECT_EQ(j.prior.binding, "DRAM bandwidth, 1 thread");
  ASSERT_TRUE(j.paired.paired.has_value());
  EXPECT_TRUE(absl::EndsWith(j.paired.paired->ceiling, " on the kernel's operand)"))
      << j.paired.paired->ceiling;
  EXPECT_NE(j.paired.verdict, Verdict::Class::kImpossible) << j.paired.diagnosis;
  EXPECT_GT(j.paired.attainment, 0.1);
}

// Weights shorter than a read call's shortest stretch are no source of their own: the read takes
// its buffer's bytes alone.
TEST(JudgeBesideCeiling, WeightsTooShortForARead) {
  MachineProfile profile = MachineWithF32Peak(1e12);
  profile.ceilings[2].per_second = 1e9;
  const Workload w{Op::kGemv, 1, 64, 512, Dtype::kF32, Epilogue::kNone};  // 128 KiB of W
  ExpectPairedWithItsBufferOnly(JudgeOnThisMachine(profile, "gemv_f32", w, CacheMode::kCold),
                                "DRAM bandwidth, 1 thread");
}

// A warm GEMV whose weights a shared L3 holds is paired with the L3 read of its own weights too:
// where the bytes lie decides how fast that level streams them. A private level's read keeps to
// its own buffer, one slice a thread.
TEST(JudgeBesideCeiling, AWarmGemvFromL3IsPairedWithTheReadOfItsOwnWeightsToo) {
  MachineProfile profile = MachineWithF32Peak(1e12);
  profile.ceilings.push_back(
      {Ceiling::Kind::kBandwidth, Dtype::kF32, MemoryLevel::kL3, 1, 1e9, "read"});
  const Workload w{Op::kGemv, 1, 1024, 2048, Dtype::kF32, Epilogue::kNone};  // 8 MiB of W
  const Judged j = JudgeOnThisMachine(profile, "gemv_f32", w, CacheMode::kWarm);
  ASSERT_EQ(j.prior.binding, "L3 bandwidth, 1 thread");
  ASSERT_TRUE(j.paired.paired.has_value());
  const std::string& loop = j.paired.paired->ceiling;
  EXPECT_NE(loop.find(" on huge pages; "), std::string::npos) << loop;
  EXPECT_TRUE(absl::EndsWith(loop, " on the kernel's operand)")) << loop;
  EXPECT_NE(j.paired.verdict, Verdict::Class::kImpossible) << j.paired.diagnosis;
  EXPECT_GT(j.paired.paired->ceiling_now, 1);  // any L3 reads faster than 1 GB/s
}

TEST(JudgeBesideCeiling, AWarmGemvFromL2IsPairedWithTheReadOfABufferOnly) {
  MachineProfile profile = MachineWithF32Peak(1e12);
  profile.ceilings[3].per_second = 1e9;  // L2 read "measured" at 1 GB/s
  // 256 KiB of W: long enough for a read of its own, were a private level's read to take one.
  const Workload w{Op::kGemv, 1, 64, 1024, Dtype::kF32, Epilogue::kNone};
  ExpectPairedWithItsBufferOnly(JudgeOnThisMachine(profile, "gemv_f32", w, CacheMode::kWarm),
                                "L2 bandwidth, 1 thread");
}

// An L2 read that binds with the compute bound close behind (0.83 of it): the FMA loop is timed in
// the same pairs, and since any core reads a 128^3 product's L2 bytes much faster than it does
// its FLOPs, the compute bound at the loops' rates is the larger in most pairs.
TEST(JudgeBesideCeiling, AComputeBoundCloseBehindAReadIsTimedInTheSamePairs) {
  MachineProfile profile = MachineWithF32Peak(1e9);
  const Workload w{Op::kGemm, 128, 128, 128, Dtype::kF32, Epilogue::kNone};
  const Judged first = JudgeOnThisMachine(profile, "gemm_f32", w, CacheMode::kWarm);
  double l2_bytes = 0;
  for (const LevelBound& b : first.prior.bounds) {
    if (b.ceiling.kind == Ceiling::Kind::kBandwidth && b.ceiling.level == MemoryLevel::kL2) {
      l2_bytes = b.work;
    }
  }
  ASSERT_GT(l2_bytes, 0);
  const double compute_seconds = w.Operations() / 1e9;
  profile.ceilings[3].per_second = l2_bytes / (1.2 * compute_seconds);
  const Judged j = JudgeOnThisMachine(profile, "gemm_f32", w, CacheMode::kWarm);
  ASSERT_TRUE(absl::StartsWith(j.prior.binding, "L2 bandwidth, 1 thread")) << j.prior.binding;
  ASSERT_TRUE(j.paired.paired.has_value());
  const std::string& loops = j.paired.paired->ceiling;
  EXPECT_TRUE(absl::StartsWith(loops, "L2 bandwidth, 1 thread (read: ")) << loops;
  const size_t beside = loops.find(", and beside it f32 compute, 1 thread (");
  ASSERT_NE(beside, std::string::npos) << loops;
  int larger = -1, pairs = -1;
  ASSERT_EQ(std::sscanf(loops.c_str() + loops.find(", the larger bound in "),
                        ", the larger bound in %d of %d pairs", &larger, &pairs),
            2)
      << loops;
  EXPECT_EQ(pairs, j.paired.paired->pairs);
  EXPECT_GT(2 * larger, pairs) << loops;
  EXPECT_NE(j.paired.verdict, Verdict::Class::kImpossible) << j.paired.diagnosis;
  EXPECT_GT(j.paired.attainment, 0.05);  // priced at the FMA loop's rate, not the L2 read's
}

// No loop measures a ceiling this CPU's probes did not produce: the profile's verdict stands, and
// says it is unpaired.
TEST(JudgeBesideCeiling, ACeilingWithoutALoopKeepsTheProfilesVerdict) {
  MachineProfile profile = MachineWithF32Peak(1e9);
  profile.ceilings[0].source = "a plugin's own ceiling";
  const Workload w{Op::kGemm, 64, 64, 64, Dtype::kF32, Epilogue::kNone};
  const Judged j = JudgeOnThisMachine(profile, "gemm_f32", w, CacheMode::kWarm);
  EXPECT_FALSE(j.paired.paired.has_value());
  EXPECT_EQ(j.paired.Basis(), "profile");
  EXPECT_EQ(j.paired.verdict, j.prior.verdict);
}

}  // namespace
}  // namespace rooftune::probes
