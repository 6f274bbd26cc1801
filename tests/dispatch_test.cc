// The library API's dispatch rule (framework/dispatch.h): tuned row, else the nearest tuned
// workload on the same side of the ridge, else the initial config.
#include "framework/dispatch.h"

#include <gtest/gtest.h>

#include <cmath>

#include "framework/roofline.h"
#include "tests/round_machine.h"

namespace rooftune::dispatch {
namespace {

class Dispatch : public ::testing::Test {
 protected:
  void SetUp() override {
    kernel_ = KernelRegistry::Global().Find("gemm_f32");
    ASSERT_NE(kernel_, nullptr);
  }
  static Workload Gemm(int64_t m, int64_t n, int64_t k, Epilogue e = Epilogue::kNone) {
    return {Op::kGemm, m, n, k, Dtype::kF32, e};
  }
  // A config unlike the initial one for `w` (KC moved), so that a test sees which was chosen. KC
  // is the blocked path's: `w` must be too large for the small path (384^3 is, on this profile).
  Config TunedFor(const Workload& w, int64_t kc) const {
    Config c = kernel_->InitialConfig(w, 1, CacheMode::kWarm, profile_);
    c.Set("KC", kc);
    return c;
  }
  TunedResult Row(const Workload& w, const Config& c, int threads = 1) const {
    TunedResult r;
    r.kernel = kernel_->name;
    r.workload = w.Key();
    r.dtype = w.dtype;
    r.threads = threads;
    r.config = kernel_->params.Format(c);
    return r;
  }

  const Kernel* kernel_ = nullptr;
  // 100 GFLOP/s and 10 GB/s from DRAM on one thread: the ridge at 10 FLOP per byte.
  MachineProfile profile_ = fixtures::RoundMachine();
};

// Fewer threads only where tune --threads auto offered exactly the threads a call has, for this
// kernel and workload, and chose fewer.
TEST_F(Dispatch, AStoredThreadChoiceRunsTheWorkloadOnFewerThreads) {
  const Workload w = Gemm(384, 384, 384);
  const std::vector<TuningDb::ThreadChoice> choices = {
      {"", "gemm_f32", w.Key(), 4, 2, 0.05},
      {"", "gemm_f32", w.Key(), 8, 8, 0.05},
      {"", "gemm_f32", Gemm(385, 384, 384).Key(), 2, 1, 0.05},
      {"", "gemv_f32", w.Key(), 2, 1, 0.05}};
  std::string why;
  EXPECT_EQ(ChooseThreads(*kernel_, w, 4, choices, &why), 2);
  EXPECT_NE(why.find("on 2 threads of the 4 offered"), std::string::npos) << why;
  EXPECT_NE(why.find("within 5% of the fastest"), std::string::npos) << why;
  why.clear();
  EXPECT_EQ(ChooseThreads(*kernel_, w, 8, choices, &why), 8);  // chose all it was offered
  EXPECT_EQ(ChooseThreads(*kernel_, w, 2, choices, &why), 2);  // 2 were never offered alone
  EXPECT_EQ(ChooseThreads(*kernel_, w, 6, choices, &why), 6);
  EXPECT_TRUE(why.empty()) << why;
  EXPECT_EQ(ChooseThreads(*kernel_, Gemm(385, 384, 384), 2, choices), 1);
  EXPECT_EQ(ChooseThreads(*kernel_, Gemm(385, 384, 385), 2, choices), 2);
}

TEST_F(Dispatch, ATunedRowForTheWorkloadIsRunAsStored) {
  const Workload w = Gemm(384, 384, 384);
  const Config tuned = TunedFor(w, 64);
  const Choice choice = ChooseConfig(*kernel_, w, 1, profile_, {Row(w, tuned)});
  EXPECT_EQ(choice.source, Source::kTuned);
  EXPECT_EQ(choice.config, tuned);
  EXPECT_EQ(choice.tuned_workload, w.Key());
}

// Tuned cold and warm: the row of the mode the workload runs in (cold where it streams from
// DRAM), whichever order the rows come in; with only the other mode's row, that one.
TEST_F(Dispatch, OfAColdAndAWarmRowTheModeTheWorkloadRunsInIsRun) {
  const Workload in_cache = Gemm(384, 384, 384), streamed = Gemm(8, 8192, 8192);
  ASSERT_FALSE(StreamsFromDram(profile_, in_cache, 1));
  ASSERT_TRUE(StreamsFromDram(profile_, streamed, 1));
  for (const Workload& w : {in_cache, streamed}) {
    TunedResult cold = Row(w, TunedFor(w, 32)), warm = Row(w, TunedFor(w, 64));
    cold.cache = CacheMode::kCold, warm.cache = CacheMode::kWarm;
    const Config& expected = StreamsFromDram(profile_, w, 1) ? TunedFor(w, 32) : TunedFor(w, 64);
    for (const std::vector<TunedResult>& rows :
         {std::vector<TunedResult>{cold, warm}, std::vector<TunedResult>{warm, cold}}) {
      const Choice choice = ChooseConfig(*kernel_, w, 1, profile_, rows);
      EXPECT_EQ(choice.source, Source::kTuned);
      EXPECT_EQ(choice.config, expected) << w.Key() << " chose " << choice.config.ToString();
    }
    const TunedResult& other = StreamsFromDram(profile_, w, 1) ? warm : cold;
    const Choice only_other = ChooseConfig(*kernel_, w, 1, profile_, {other});
    EXPECT_EQ(only_other.source, Source::kTuned);
    EXPECT_EQ(only_other.config,
              StreamsFromDram(profile_, w, 1) ? TunedFor(w, 64) : TunedFor(w, 32))
        << w.Key();
  }
}

TEST_F(Dispatch, TheNearestShapeInLogSpaceLendsItsConfig) {
  const Workload small = Gemm(384, 384, 384), large = Gemm(1024, 1024, 1024);
  const std::vector<TunedResult> rows = {Row(small, TunedFor(small, 64)),
                                         Row(large, TunedFor(large, 512))};
  // 400 is nearer 384 than 1024 by ratio (1.04 against 2.56).
  Choice choice = ChooseConfig(*kernel_, Gemm(400, 400, 400), 1, profile_, rows);
  EXPECT_EQ(choice.source, Source::kNearestTuned);
  EXPECT_EQ(choice.tuned_workload, small.Key());
  EXPECT_EQ(choice.config.Get("KC"), 64);
  EXPECT_NEAR(choice.distance, std::sqrt(3.0) * std::log(400.0 / 384), 1e-9);
  choice = ChooseConfig(*kernel_, Gemm(700, 700, 700), 1, profile_, rows);
  EXPECT_EQ(choice.tuned_workload, large.Key());
  EXPECT_EQ(choice.config.Get("KC"), 512);
}

// s8 weights converted to f32 in registers cross the ridge at their own loop's rate where the
// probe measured one: a GEMV does 2 operations a byte of weights, under a ridge priced at the FMA
// (memory-bound) and over one priced at a loop slow enough (compute-bound).
TEST_F(Dispatch, S8WeightsConvertedCrossTheRidgeAtTheirOwnLoop) {
  const Workload gemv{Op::kGemv, 1, 4096, 4096, Dtype::kS8F32, Epilogue::kNone};
  MachineProfile profile = profile_;
  const Ceiling* fma = profile.FindCompute(Dtype::kF32, 1);
  const Ceiling* dram = profile.FillBandwidth(MemoryLevel::kDram, 1);
  ASSERT_NE(fma, nullptr);
  ASSERT_NE(dram, nullptr);
  ASSERT_GT(fma->per_second / dram->per_second, 2);
  EXPECT_EQ(MemoryBound(gemv, 1, profile), true);
  const double slow = 1.5 * dram->per_second;  // a ridge of 1.5 operations a byte
  profile.ceilings.push_back(
      {Ceiling::Kind::kCompute, Dtype::kS8F32, MemoryLevel::kDram, 1, slow, "s8 widen"});
  EXPECT_EQ(MemoryBound(gemv, 1, profile), false);
}

TEST_F(Dispatch, NeverBorrowsAcrossTheRidge) {
  // 8 x 4096 x 4096 streams its weights (4 FLOP per byte: memory-bound); 64 x 4096 x 4096 does 31
  // per byte (compute-bound), as does 1024^3. The memory-bound row is nearer in log space.
  const Workload decode = Gemm(8, 4096, 4096), cube = Gemm(1024, 1024, 1024);
  const Workload query = Gemm(64, 4096, 4096);
  ASSERT_EQ(MemoryBound(decode, 1, profile_), true);
  ASSERT_EQ(MemoryBound(query, 1, profile_), false);
  ASSERT_EQ(MemoryBound(cube, 1, profile_), false);
  ASSERT_LT(LogShapeDistance(query, decode), LogShapeDistance(query, cube));
  const std::vector<TunedResult> rows = {Row(decode, TunedFor(decode, 64)),
                                         Row(cube, TunedFor(cube, 512))};
  Choice choice = ChooseConfig(*kernel_, query, 1, profile_, rows);
  EXPECT_EQ(choice.source, Source::kNearestTuned);
  EXPECT_EQ(choice.tuned_workload, cube.Key());
  // With only the memory-bound row, nothing is borrowed.
  choice = ChooseConfig(*kernel_, query, 1, profile_, {rows[0]});
  EXPECT_EQ(choice.source, Source::kInitial);
  EXPECT_EQ(choice.config, kernel_->InitialConfig(query, 1, CacheMode::kWarm, profile_));
  EXPECT_NE(choice.reason.find("other side of the ridge"), std::string::npos) << choice.reason;
}

TEST_F(Dispatch, OnlyRowsOfTheSameKernelEpilogueAndThreadsCount) {
  const Workload w = Gemm(384, 384, 384);
  const Config tuned = TunedFor(w, 64);
  TunedResult other_kernel = Row(w, tuned);
  other_kernel.kernel = "gemm_f32_unfused";
  const std::vector<TunedResult> rows = {Row(w, tuned, /*threads=*/2),
                                         Row(Gemm(256, 256, 256, Epilogue::kBiasRelu), tuned),
                                         other_kernel};
  const Choice choice = ChooseConfig(*kernel_, w, 1, profile_, rows);
  EXPECT_EQ(choice.source, Source::kInitial);
  EXPECT_EQ(choice.config, kernel_->InitialConfig(w, 1, CacheMode::kWarm, profile_));
  EXPECT_NE(choice.reason.find("no tuned row of gemm_f32 for f32 none at 1 thread"),
            std::string::npos)
      << choice.reason;
}

TEST_F(Dispatch, AStoredConfigThisBuildCannotRunIsSkipped) {
  const Workload w = Gemm(256, 256, 256);
  TunedResult stale = Row(w, TunedFor(w, 64));
  stale.config = "MR=5,NR=7";  // no such register block anywhere
  const Choice choice = ChooseConfig(*kernel_, w, 1, profile_, {stale});
  EXPECT_EQ(choice.source, Source::kInitial);
  EXPECT_NE(choice.reason.find("1 stale or with a config this build cannot run"), std::string::npos)
      << choice.reason;
}

TEST_F(Dispatch, ARowTunedWithTheKernelsOlderParametersIsNeverRun) {
  const Workload w = Gemm(256, 256, 256);
  TunedResult old = Row(w, TunedFor(w, 64));
  old.config_schema = kernel_->config_schema - 1;
  Choice choice = ChooseConfig(*kernel_, w, 1, profile_, {old});
  EXPECT_EQ(choice.source, Source::kInitial);
  EXPECT_NE(choice.reason.find("stale"), std::string::npos) << choice.reason;
  old.config_schema = kernel_->config_schema;
  EXPECT_EQ(ChooseConfig(*kernel_, w, 1, profile_, {old}).source, Source::kTuned);
}

TEST_F(Dispatch, WithoutMeasuredCeilingsOnlyAnExactRowIsUsed) {
  MachineProfile facts_only = profile_;
  facts_only.ceilings.clear();
  const Workload small = Gemm(256, 256, 256);
  const std::vector<TunedResult> rows = {Row(small, TunedFor(small, 64))};
  EXPECT_EQ(MemoryBound(small, 1, facts_only), std::nullopt);
  EXPECT_EQ(ChooseConfig(*kernel_, small, 1, facts_only, rows).source, Source::kTuned);
  const Choice choice = ChooseConfig(*kernel_, Gemm(300, 300, 300), 1, facts_only, rows);
  EXPECT_EQ(choice.source, Source::kInitial);
  EXPECT_NE(choice.reason.find("no measured ceilings"), std::string::npos) << choice.reason;
}

}  // namespace
}  // namespace rooftune::dispatch
