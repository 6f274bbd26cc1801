#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "bench/bench_main.h"

namespace rooftune::bench {
namespace {

const Usage kGemv{
    .name = "gemv_bench", .summary = "GEMV.", .op = Op::kGemv, .default_shapes = "4096x4096"};
const Usage kGemmS8{.name = "gemm_s8_bench",
                    .summary = "int8 GEMM.",
                    .op = Op::kGemm,
                    .default_shapes = "1024x1024x1024",
                    .takes_full_range = true,
                    .takes_max_isa = true};
const Usage kGemm{.name = "gemm_bench",
                  .summary = "GEMM.",
                  .op = Op::kGemm,
                  .default_shapes = "1024x1024x1024",
                  .takes_config = true};

// Runs ParseOptions over `args` (after a program name); `rest` receives what it leaves.
absl::StatusOr<Options> Parse(std::vector<std::string> args, const Usage& usage,
                              std::vector<std::string>* rest = nullptr) {
  args.insert(args.begin(), "bench");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  int argc = int(argv.size());
  absl::StatusOr<Options> options = ParseOptions(&argc, argv.data(), usage);
  if (rest != nullptr) rest->assign(argv.begin() + 1, argv.begin() + argc);
  return options;
}

TEST(BenchOptions, TakesItsOwnFlagsAndLeavesGoogleBenchmarksAlone) {
  Usage int8_gemv = kGemv;
  int8_gemv.takes_full_range = true;
  std::vector<std::string> rest;
  absl::StatusOr<Options> o = Parse({"--threads=2", "--benchmark_repetitions=3",
                                     "--shapes=8x16,32x64", "--tune-budget=2.5", "--full-range"},
                                    int8_gemv, &rest);
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->threads, std::vector<int>{2});
  EXPECT_EQ(o->shapes, (std::vector<std::string>{"8x16", "32x64"}));
  EXPECT_DOUBLE_EQ(o->tune_budget_seconds, 2.5);
  EXPECT_TRUE(o->full_range);
  EXPECT_FALSE(o->help);
  EXPECT_EQ(rest, std::vector<std::string>{"--benchmark_repetitions=3"});
}

TEST(BenchOptions, MaxIsaIsTakenWhereRooftuneMeetsOneDnnAlone) {
  absl::StatusOr<Options> o = Parse({"--max-isa=avx2"}, kGemmS8);
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_TRUE(o->max_isa_avx2);
  EXPECT_FALSE(Parse({}, kGemmS8)->max_isa_avx2);
  EXPECT_NE(HelpText(kGemmS8).find("--max-isa=avx2"), std::string::npos);
  EXPECT_EQ(HelpText(kGemm).find("--max-isa"), std::string::npos);
}

TEST(BenchOptions, ConfigIsTakenWhereOneKernelRunsPerRow) {
  absl::StatusOr<Options> o = Parse({"--config=MR=12,NR=32"}, kGemm);
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->config, "MR=12,NR=32");
  EXPECT_NE(HelpText(kGemm).find("--config="), std::string::npos);
  EXPECT_EQ(HelpText(kGemv).find("--config="), std::string::npos);
}

TEST(BenchOptions, RefusesWhatItCannotUseWithTheReason) {
  struct Case {
    std::string arg;
    const Usage* usage;
    std::string says;
  };
  const std::vector<Case> cases = {
      {"--threads=0", &kGemv, "'0' is not a thread count"},
      {"--threads=1,two", &kGemv, "'two' is not a thread count"},
      {"--shapes=", &kGemv, "no shape given"},
      {"--shapes=1024x1024x1024", &kGemv, "--shapes:"},  // a GEMM shape given to a GEMV bench
      {"--shapes=64x0", &kGemv, "--shapes:"},
      {"--shapes=1x2", &kGemmS8, "--shapes:"},
      {"--tune-budget=soon", &kGemv, "not a number of seconds"},
      {"--tune-budget=-1", &kGemv, "not a number of seconds"},
      {"--full-range", &kGemv, "--full-range does not apply"},
      {"--config=MR=6", &kGemv, "--config does not apply"},
      {"--max-isa=avx2", &kGemm, "--max-isa does not apply"},
      {"--max-isa=sse4", &kGemmS8, "'sse4' is not an ISA it takes"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<Options> o = Parse({c.arg}, *c.usage);
    ASSERT_FALSE(o.ok()) << c.arg;
    EXPECT_TRUE(absl::IsInvalidArgument(o.status())) << c.arg;
    EXPECT_NE(o.status().message().find(c.says), std::string::npos) << c.arg << ": " << o.status();
  }
}

TEST(BenchOptions, HelpNamesEveryOptionTheBinaryTakes) {
  absl::StatusOr<Options> o = Parse({"--help"}, kGemv);
  ASSERT_TRUE(o.ok());
  EXPECT_TRUE(o->help);
  const std::string gemv = HelpText(kGemv), s8 = HelpText(kGemmS8);
  for (const char* flag :
       {"--threads=", "--shapes=", "--tune-budget=", "--benchmark_repetitions"}) {
    EXPECT_NE(gemv.find(flag), std::string::npos) << flag;
  }
  EXPECT_NE(gemv.find("NxK shapes (default 4096x4096)"), std::string::npos) << gemv;
  EXPECT_NE(s8.find("MxNxK"), std::string::npos);
  EXPECT_EQ(gemv.find("--full-range"), std::string::npos);
  EXPECT_NE(s8.find("--full-range"), std::string::npos);
}

// Paired calls: a body that takes 2 ms (of a test clock) against one that takes 6 ms is 3x faster
// in every pair; the order alternates; the before-hook (an eviction, in the benchmarks) runs
// outside the timing, and a warm body gets an untimed call of its own before each timed one.
TEST(PairedSpeedup, RatioOfBackToBackCallsWithTheFirstAsNumerator) {
  ManualClock clock;
  int befores = 0, slow_calls = 0;
  auto takes_ms = [&](int ms) { clock.Advance(ms * 1e-3); };
  Register(
      "paired_test/fast", [&] { takes_ms(2); },
      [&] {
        ++befores;
        takes_ms(20);
      });
  Register("paired_test/slow", [&] {
    ++slow_calls;
    takes_ms(6);
  });
  const PairedSpeedup s = MeasurePaired("paired_test/fast", "paired_test/slow", 0, clock);
  EXPECT_EQ(s.pairs, 11);
  EXPECT_EQ(befores, 11);
  EXPECT_EQ(slow_calls, 22);  // a warm-up call before each timed one
  EXPECT_NEAR(s.median, 3.0, 1e-9);
  EXPECT_NEAR(s.low, 3.0, 1e-9);
  EXPECT_NEAR(s.high, 3.0, 1e-9);
  EXPECT_EQ(MeasurePaired("paired_test/fast", "not_registered").pairs, 0);
}

// 10 GB/s from DRAM and 100 GFLOP/s: the decode shape (8 rows, 64 MiB of B) takes 6.7 ms to
// stream and 2.7 ms to compute, so it is timed cold; 64 rows do 8x the work on the same bytes.
}  // namespace
}  // namespace rooftune::bench
