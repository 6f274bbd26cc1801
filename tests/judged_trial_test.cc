#include "framework/judged_trial.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"

namespace rooftune {
namespace {

// 100 GFLOP/s f32 and 10 GB/s from DRAM on one thread.
MachineProfile TenGigabyteMachine() {
  MachineProfile p;
  p.ceilings = {{Ceiling::Kind::kCompute, Dtype::kF32, MemoryLevel::kDram, 1, 100e9, "fma"},
                {Ceiling::Kind::kBandwidth, Dtype::kF32, MemoryLevel::kDram, 1, 10e9, "read"}};
  return p;
}

// A kernel that reads W from DRAM PASSES times: its traffic depends on the config, so a verdict
// priced with any config other than the trial's shows up in the attainment.
Kernel MultiPassGemv() {
  ParamSpace space;
  space.Add("PASSES", {1, 2});
  return Kernel("multi_pass_gemv")
      .Computes(Op::kGemv, {Dtype::kF32}, {Epilogue::kNone})
      .Tunes(space)
      .Moves([](const Workload& w, const Config& c, int, const MachineProfile&) {
        Traffic t;
        t[MemoryLevel::kDram] = double(c.Get("PASSES")) * w.CompulsoryBytes();
        return t;
      });
}

Trial ColdTrial(const Kernel& kernel, int passes, double median_seconds) {
  Trial t;
  t.kernel = kernel.name;
  t.workload = {Op::kGemv, 1, 4096, 4096, Dtype::kF32, Epilogue::kNone};
  absl::StatusOr<Config> config = kernel.params.Parse(absl::StrCat("PASSES=", passes), Config());
  t.config = *config;
  t.threads = 1;
  t.cache = CacheMode::kCold;
  t.seconds.median = median_seconds;
  t.seconds.cv = 0.01;
  return t;
}

TEST(JudgeTrial, PricesTheTrialsOwnConfigAtTheDramCeiling) {
  const MachineProfile profile = TenGigabyteMachine();
  const Kernel kernel = MultiPassGemv();
  const Workload w{Op::kGemv, 1, 4096, 4096, Dtype::kF32, Epilogue::kNone};
  // Two passes over the compulsory bytes at 10 GB/s, measured at twice that time: half the bound.
  const double bound = 2 * w.CompulsoryBytes() / 10e9;
  const Verdict v = JudgeTrial(profile, kernel, ColdTrial(kernel, 2, 2 * bound));
  EXPECT_NEAR(v.attainment, 0.5, 1e-9);
  EXPECT_EQ(v.verdict, Verdict::Class::kHeadroom);
  EXPECT_THAT(v.binding, testing::HasSubstr("DRAM"));
}

// The benchmarks' tuning once stored its winners with attainment 0 and no verdict, and the report
// printed them as such: every stored row now comes through TunedResultOf.
TEST(TunedResultOf, StoresTheWinnersVerdictBesideItsTimings) {
  const MachineProfile profile = TenGigabyteMachine();
  const Kernel kernel = MultiPassGemv();
  const double bound = 4096.0 * 4096 * 4 / 10e9;
  TuneOutcome outcome;
  outcome.best = ColdTrial(kernel, 1, bound / 0.9);
  outcome.best.seconds.min = bound;
  outcome.initial = ColdTrial(kernel, 2, 2 * bound);
  outcome.configs_tried = 2;
  const Verdict verdict = JudgeTrial(profile, kernel, outcome.best);
  const TunedResult r = TunedResultOf(profile, kernel, outcome, verdict);
  EXPECT_EQ(r.fingerprint, profile.Fingerprint());
  EXPECT_EQ(r.kernel, "multi_pass_gemv");
  EXPECT_EQ(r.workload, outcome.best.workload.Key());
  EXPECT_EQ(r.threads, 1);
  EXPECT_EQ(r.config, "PASSES=1");
  EXPECT_EQ(r.initial_config, "PASSES=2");
  EXPECT_DOUBLE_EQ(r.median_seconds, bound / 0.9);
  EXPECT_DOUBLE_EQ(r.min_seconds, bound);
  EXPECT_DOUBLE_EQ(r.initial_median_seconds, 2 * bound);
  EXPECT_EQ(r.cache, CacheMode::kCold);
  EXPECT_EQ(r.configs_tried, 2);
  EXPECT_GT(r.attainment, 0.85);
  EXPECT_DOUBLE_EQ(r.attainment, verdict.attainment);
  EXPECT_EQ(r.verdict, Verdict::Class::kAtBound);
  EXPECT_EQ(r.binding, verdict.binding);
}

}  // namespace
}  // namespace rooftune
