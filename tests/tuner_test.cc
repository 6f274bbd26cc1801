#include "framework/tuner.h"

#include <gtest/gtest.h>

#include <memory>

#include "absl/strings/str_join.h"
#include "framework/clock.h"
#include "framework/harness.h"
#include "framework/kernel.h"
#include "framework/reference.h"
#include "tests/round_machine.h"

namespace rooftune {
namespace {

// The clock these tests' tunes read: the test kernels advance it by what a call "takes" instead
// of sleeping (every kernel timed with QuickOptions must, or its timing never ends), so which
// config wins and when a budget ends do not depend on the machine's load.
ManualClock& TestClock() {
  static ManualClock clock;
  return clock;
}
void Takes(double seconds) { TestClock().Advance(seconds); }

// A GEMV whose WRONG=1 configs corrupt one output: the tuner must reject every one of them,
// whatever their timing, and never store one.
Kernel SabotagedGemv() {
  ParamSpace space;
  space.Add("WRONG", {0, 1}).Add("UNROLL", {1, 2, 4});
  return Kernel("sabotaged_gemv")
      .Computes(Op::kGemv, {Dtype::kF32}, {Epilogue::kNone})
      .Tunes(space)
      .Threads(Threading::kSelf)
      .Runs([](const Config& c, Problem& p, const RunContext&) {
        const Workload& w = p.workload;
        ReferenceGemvF32(w.n, w.k, p.b.data(), p.ldb, p.a.data(), p.c.data(), nullptr,
                         Epilogue::kNone);
        // The wrong configs are also the cheapest, so timing alone would pick them.
        Takes(c.Get("WRONG") == 1 ? 1e-4 : 1e-3);
        if (c.Get("WRONG") == 1) p.c[w.n / 2] += 1.0f;
        return absl::OkStatus();
      });
}

// Timings short enough for these kernels, whose configs differ by milliseconds.
TuneOptions QuickOptions() {
  TuneOptions options;
  options.timing = {.min_seconds = 0.001, .min_repetitions = 2, .clock = &TestClock()};
  return options;
}

// Tunes a GEMV kernel on one thread over a fresh n x k problem, on a machine of `profile`
// (by default one the probe has measured nothing of: no model prices anything).
absl::StatusOr<TuneOutcome> TuneGemv(const Kernel& kernel, int64_t n, int64_t k,
                                     const TuneOptions& options,
                                     const MachineProfile& profile = MachineProfile()) {
  absl::StatusOr<Problem> problem =
      Problem::Create({Op::kGemv, 1, n, k, Dtype::kF32, Epilogue::kNone});
  if (!problem.ok()) return problem.status();
  Executor executor(1);
  return Tune(kernel, profile, *problem, ComputeReference(*problem), executor, options);
}

TEST(Tune, RejectsEveryWrongConfigAndKeepsACorrectOne) {
  const Kernel kernel = SabotagedGemv();
  absl::StatusOr<TuneOutcome> outcome = TuneGemv(kernel, 64, 64, QuickOptions());
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  EXPECT_EQ(outcome->configs_valid, 6);
  EXPECT_EQ(outcome->configs_tried, 6);
  EXPECT_EQ(outcome->configs_rejected, 3);
  EXPECT_EQ(outcome->rejected.size(), 3u);
  EXPECT_EQ(outcome->best.config.Get("WRONG"), 0);
  EXPECT_TRUE(outcome->best.validation.ok);
  EXPECT_GT(outcome->best.seconds.count, 0);
  EXPECT_EQ(outcome->initial.config.ToString(), "UNROLL=1,WRONG=0");  // first valid config
}

// A correct GEMV whose run time depends on PACE: 0 takes 3 ms every call, 2 (the initial config)
// 5 ms, and 1 is fast (1 ms) for its first four calls, which are its whole search trial
// (validation, warm-up, two timed repetitions), and 8 ms after: a config timed once in a lucky
// phase of the machine.
Kernel FickleGemv() {
  ParamSpace space;
  space.Add("PACE", {0, 1, 2});
  auto calls_of_lucky = std::make_shared<int>(0);
  return Kernel("fickle_gemv")
      .Computes(Op::kGemv, {Dtype::kF32}, {Epilogue::kNone})
      .Tunes(space)
      .StartsFrom([](const Workload&, int, CacheMode, const MachineProfile&) {
        return Config{{"PACE", 2}};
      })
      .Threads(Threading::kSelf)
      .Runs([calls_of_lucky](const Config& c, Problem& p, const RunContext&) {
        const Workload& w = p.workload;
        ReferenceGemvF32(w.n, w.k, p.b.data(), p.ldb, p.a.data(), p.c.data(), nullptr,
                         Epilogue::kNone);
        int ms = c.Get("PACE") == 0 ? 3 : 5;
        if (c.Get("PACE") == 1) ms = ++*calls_of_lucky <= 4 ? 1 : 8;
        Takes(ms * 1e-3);
        return absl::OkStatus();
      });
}

TEST(Tune, FinalsRetimeTheFastestAndDropAConfigThatWasFastOnce) {
  const Kernel kernel = FickleGemv();
  TuneOptions options = QuickOptions();
  std::vector<std::string> progress;
  options.progress = [&](const std::string& line) { progress.push_back(line); };
  absl::StatusOr<TuneOutcome> outcome = TuneGemv(kernel, 16, 16, options);
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  EXPECT_EQ(outcome->best.config.Get("PACE"), 0);
  EXPECT_EQ(outcome->initial.config.Get("PACE"), 2);
  // Pooled over the rounds: at least two rounds of two repetitions each.
  EXPECT_GE(outcome->best.seconds.count, 4);
  EXPECT_GE(outcome->initial.seconds.count, 4);
  ASSERT_FALSE(progress.empty());
  EXPECT_NE(progress.back().find("finals: PACE=0 beat the search's fastest, PACE=1"),
            std::string::npos)
      << progress.back();
}

// A correct GEMV tuned over one parameter: `fast_ms` a call when it is `fast`, `slow_ms` for every
// other value; the search starts at `initial`.
Kernel SleepingGemv(const std::string& name, const std::string& param, std::vector<int64_t> values,
                    int64_t initial, int64_t fast, int fast_ms, int slow_ms) {
  ParamSpace space;
  space.Add(param, std::move(values));
  return Kernel(name)
      .Computes(Op::kGemv, {Dtype::kF32}, {Epilogue::kNone})
      .Tunes(space)
      .StartsFrom([=](const Workload&, int, CacheMode, const MachineProfile&) {
        return Config{{param, initial}};
      })
      .Threads(Threading::kSelf)
      .Runs([=](const Config& c, Problem& p, const RunContext&) {
        const Workload& w = p.workload;
        ReferenceGemvF32(w.n, w.k, p.b.data(), p.ldb, p.a.data(), p.c.data(), nullptr,
                         Epilogue::kNone);
        Takes((c.Get(param) == fast ? fast_ms : slow_ms) * 1e-3);
        return absl::OkStatus();
      });
}

// STEP=32 takes 1 ms a call and every other config 6 ms; the search starts at STEP=1 and, with a
// budget of a few trials, never gets as far as 32.
Kernel FarFastGemv() {
  return SleepingGemv("far_fast_gemv", "STEP", {1, 2, 4, 8, 16, 32}, 1, 32, 1, 6);
}

TEST(Tune, ARetuneCutShortKeepsTheStoredConfigWhenItIsFaster) {
  const Kernel kernel = FarFastGemv();
  TuneOptions options = QuickOptions();
  options.budget_seconds = 0.1;
  absl::StatusOr<TuneOutcome> fresh = TuneGemv(kernel, 16, 16, options);
  ASSERT_TRUE(fresh.ok()) << fresh.status();
  ASSERT_TRUE(fresh->budget_exhausted);
  EXPECT_NE(fresh->best.config.Get("STEP"), 32);  // never reached

  options.stored = Config{{"STEP", 32}};
  std::vector<std::string> progress;
  options.progress = [&](const std::string& line) { progress.push_back(line); };
  absl::StatusOr<TuneOutcome> again = TuneGemv(kernel, 16, 16, options);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->best.config.Get("STEP"), 32);
  EXPECT_EQ(again->initial.config.Get("STEP"), 1);
  bool stored_in_finals = false;
  for (const std::string& line : progress) {
    if (line.find("the stored one") != std::string::npos) stored_in_finals = true;
  }
  EXPECT_TRUE(stored_in_finals);
}

// The initial config, X=0, is the fastest (1 ms a call; the others 4 ms).
Kernel FirstIsFastestGemv() {
  return SleepingGemv("first_is_fastest_gemv", "X", {0, 1, 2, 3}, 0, 0, 1, 4);
}

TEST(Tune, ALongSearchThatFindsNothingFasterStillReportsProgress) {
  const Kernel kernel = FirstIsFastestGemv();
  TuneOptions options = QuickOptions();
  std::vector<std::string> progress;
  options.progress = [&](const std::string& line) { progress.push_back(line); };
  options.heartbeat_seconds = 0;  // every trial that does not beat the best says where it stands
  absl::StatusOr<TuneOutcome> outcome = TuneGemv(kernel, 16, 16, options);
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  int heartbeats = 0;
  for (const std::string& line : progress) {
    if (line.find(" s searched, 0 rejected; best still X=0: ") != std::string::npos) ++heartbeats;
  }
  EXPECT_EQ(heartbeats, 3) << absl::StrJoin(progress, "\n");  // X = 1, 2 and 3

  // With the default interval a short search prints only its improvements.
  progress.clear();
  options.heartbeat_seconds = TuneOptions().heartbeat_seconds;
  ASSERT_TRUE(TuneGemv(kernel, 16, 16, options).ok());
  for (const std::string& line : progress)
    EXPECT_EQ(line.find("searched"), std::string::npos) << line;
}

TEST(Tune, FailsWhenNoConfigIsCorrect) {
  ParamSpace space;
  space.Add("X", {1, 2});
  const Kernel kernel = Kernel("always_wrong")
                            .Computes(Op::kGemv, {Dtype::kF32}, {Epilogue::kNone})
                            .Tunes(space)
                            .Threads(Threading::kSelf)
                            .Runs([](const Config&, Problem& p, const RunContext&) {
                              p.c[0] = 12345.0f;
                              return absl::OkStatus();
                            });
  absl::StatusOr<TuneOutcome> outcome = TuneGemv(kernel, 8, 8, TuneOptions());
  ASSERT_FALSE(outcome.ok());
  EXPECT_NE(outcome.status().message().find("2 rejected"), std::string::npos) << outcome.status();
}

// The budget holds before anything validated: a kernel whose 20,000 configs are all wrong (each
// call slow enough that trying them all would take 20 s) stops at its budget, far short of them.
TEST(Tune, TheBudgetHoldsWhileNoConfigIsCorrect) {
  ParamSpace space;
  std::vector<int64_t> values(20000);
  for (size_t i = 0; i < values.size(); ++i) values[i] = int64_t(i);
  space.Add("X", values);
  const Kernel kernel = Kernel("slowly_wrong")
                            .Computes(Op::kGemv, {Dtype::kF32}, {Epilogue::kNone})
                            .Tunes(space)
                            .Threads(Threading::kSelf)
                            .Runs([](const Config&, Problem& p, const RunContext&) {
                              Takes(1e-3);
                              p.c[0] = 12345.0f;
                              return absl::OkStatus();
                            });
  TuneOptions options = QuickOptions();
  options.budget_seconds = 0.3;
  absl::StatusOr<TuneOutcome> outcome = TuneGemv(kernel, 8, 8, options);
  ASSERT_FALSE(outcome.ok());
  EXPECT_NE(outcome.status().message().find("no config of slowly_wrong"), std::string::npos)
      << outcome.status();
  EXPECT_NE(outcome.status().message().find("before the 0.3 s budget ran out"), std::string::npos)
      << outcome.status();
  EXPECT_EQ(outcome.status().message().find("20000 rejected"), std::string::npos)
      << outcome.status();
}

// Ordering a space of millions of points takes seconds on a slow machine; the tune's budget
// holds through it. Here each constraint check costs the test clock 1 us, so walking the
// 4-million-point space would take 4 s against a 0.5 s budget: both strategies stop the walk,
// time what they have, and leave the space uncounted.
TEST(Tune, TheBudgetHoldsWhileALargeSpaceIsOrdered) {
  ParamSpace space;
  std::vector<int64_t> values(2000);
  for (size_t i = 0; i < values.size(); ++i) values[i] = int64_t(i);
  space.Add("A", values).Add("B", values).Require("costs a microsecond", [](const Config&) {
    Takes(1e-6);
    return true;
  });
  const Kernel kernel = Kernel("large_space_gemv")
                            .Computes(Op::kGemv, {Dtype::kF32}, {Epilogue::kNone})
                            .Tunes(space)
                            .Threads(Threading::kSelf)
                            .Runs([](const Config&, Problem& p, const RunContext&) {
                              const Workload& w = p.workload;
                              ReferenceGemvF32(w.n, w.k, p.b.data(), p.ldb, p.a.data(), p.c.data(),
                                               nullptr, Epilogue::kNone);
                              Takes(1e-4);
                              return absl::OkStatus();
                            });
  for (const char* strategy : {"exhaustive", "descent"}) {
    TuneOptions options = QuickOptions();
    options.strategy = strategy;
    options.budget_seconds = 0.5;
    const double start = TestClock().Seconds();
    absl::StatusOr<TuneOutcome> outcome = TuneGemv(kernel, 8, 8, options);
    ASSERT_TRUE(outcome.ok()) << strategy << ": " << outcome.status();
    EXPECT_TRUE(outcome->budget_exhausted) << strategy;
    EXPECT_EQ(outcome->configs_valid, 0) << strategy << ": the walk finished";
    EXPECT_GE(outcome->configs_tried, 1) << strategy;
    // The budget, plus the finals' two rounds and the few thousand points between two checks.
    EXPECT_LT(TestClock().Seconds() - start, 1.0) << strategy;
  }
}

// A kernel without tunables (a library baseline) is tuned as its one config, named for people.
TEST(Tune, AKernelWithoutParametersIsNamedAsSuch) {
  const Kernel kernel = Kernel("fixed_gemv")
                            .Computes(Op::kGemv, {Dtype::kF32}, {Epilogue::kNone})
                            .Threads(Threading::kSelf)
                            .Runs([](const Config&, Problem& p, const RunContext&) {
                              const Workload& w = p.workload;
                              ReferenceGemvF32(w.n, w.k, p.b.data(), p.ldb, p.a.data(), p.c.data(),
                                               nullptr, Epilogue::kNone);
                              Takes(1e-4);
                              return absl::OkStatus();
                            });
  TuneOptions options = QuickOptions();
  std::vector<std::string> progress;
  options.progress = [&](const std::string& line) { progress.push_back(line); };
  absl::StatusOr<TuneOutcome> outcome = TuneGemv(kernel, 8, 8, options);
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  EXPECT_EQ(outcome->configs_valid, 1);
  EXPECT_TRUE(outcome->best.config.empty());
  ASSERT_FALSE(progress.empty());
  EXPECT_NE(progress.front().find("[1/1] best so far (no parameters): "), std::string::npos)
      << progress.front();
}

TEST(Tune, UnknownStrategyIsAnError) {
  TuneOptions options;
  options.strategy = "annealing";
  absl::StatusOr<TuneOutcome> outcome = TuneGemv(SabotagedGemv(), 8, 8, options);
  ASSERT_FALSE(outcome.ok());
  EXPECT_NE(outcome.status().message().find("annealing"), std::string::npos) << outcome.status();
}

TEST(TimeCold, TimesColdAndBoundsTheWallTime) {
  TuneOptions options;
  TimeCold(0.5, options);
  EXPECT_EQ(options.timing.cache, CacheMode::kCold);
  EXPECT_EQ(options.timing.max_seconds, 0.5);
}

TEST(NearestConfigs, VisitsTheNeighbourhoodOfTheOriginFirst) {
  ParamSpace space;
  space.Add("A", {1, 2, 4, 8}).Add("B", {16, 32, 64});
  const Config origin{{"A", 2}, {"B", 32}};
  uint64_t valid = 0;
  const std::vector<Config> ordered = NearestConfigs(space, origin, 100, &valid);
  EXPECT_EQ(valid, 12u);
  ASSERT_EQ(ordered.size(), 12u);
  EXPECT_EQ(ordered[0], origin);
  // Then the one-parameter changes, nearest in log scale first.
  for (int i = 1; i <= 5; ++i) {
    const int changed = (ordered[i].Get("A") != 2) + (ordered[i].Get("B") != 32);
    EXPECT_EQ(changed, 1) << ordered[i].ToString();
  }
  EXPECT_EQ(ordered.back().ToString(), "A=8,B=64");  // farthest: both changed, by x4 and x2

  // Keeping only the 6 nearest: the origin and its one-parameter neighbours, in the same order.
  const std::vector<Config> nearest = NearestConfigs(space, origin, 6, &valid);
  EXPECT_EQ(valid, 12u);
  ASSERT_EQ(nearest.size(), 6u);
  for (size_t i = 0; i < nearest.size(); ++i) EXPECT_EQ(nearest[i], ordered[i]) << i;
}

TEST(Neighbours, AreOneDomainStepInOneParameterAndValid) {
  ParamSpace space;
  space.Add("A", {1, 2, 4}).Add("B", {16, 32});
  space.Require("A < 4 or B = 16",
                [](const Config& c) { return c.Get("A") < 4 || c.Get("B") == 16; });
  std::vector<std::string> text;
  for (const Config& c : Neighbours(space, Config{{"A", 2}, {"B", 16}}))
    text.push_back(c.ToString());
  EXPECT_EQ(absl::StrJoin(text, " "), "A=1,B=16 A=4,B=16 A=2,B=32");
  text.clear();
  // A=4,B=32 breaks the constraint; the domain ends above 4 and below 16.
  for (const Config& c : Neighbours(space, Config{{"A", 4}, {"B", 16}}))
    text.push_back(c.ToString());
  EXPECT_EQ(absl::StrJoin(text, " "), "A=2,B=16");
}

// A GEMV whose call takes 0.1 ms x (1 + 2 (16 - A) + (16 - B)): the fastest configs, A = B = 16,
// lie as far from the initial A = B = C = 1 as the space allows, and C does not matter.
Kernel DownhillGemv() {
  std::vector<int64_t> values;
  for (int64_t v = 1; v <= 16; ++v) values.push_back(v);
  ParamSpace space;
  space.Add("A", values).Add("B", values).Add("C", values);
  return Kernel("downhill_gemv")
      .Computes(Op::kGemv, {Dtype::kF32}, {Epilogue::kNone})
      .Tunes(space)
      .StartsFrom([](const Workload&, int, CacheMode, const MachineProfile&) {
        return Config{{"A", 1}, {"B", 1}, {"C", 1}};
      })
      .Threads(Threading::kSelf)
      .Runs([](const Config& c, Problem& p, const RunContext&) {
        const Workload& w = p.workload;
        ReferenceGemvF32(w.n, w.k, p.b.data(), p.ldb, p.a.data(), p.c.data(), nullptr,
                         Epilogue::kNone);
        const int64_t steps = 1 + 2 * (16 - c.Get("A")) + (16 - c.Get("B"));
        Takes(100e-6 * double(steps));
        return absl::OkStatus();
      });
}

TEST(Tune, DescentWalksToAFarOptimumThenSearchesAroundIt) {
  const Kernel kernel = DownhillGemv();
  TuneOptions options = QuickOptions();
  options.strategy = "descent";
  // The walk takes about 30 steps of about four new neighbours each, well under a second of the
  // test clock; the rest of the search's 4.5 s goes to the configs nearest the optimum.
  options.budget_seconds = 6;
  std::vector<std::string> progress;
  options.progress = [&](const std::string& line) { progress.push_back(line); };
  absl::StatusOr<TuneOutcome> outcome = TuneGemv(kernel, 16, 16, options);
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  EXPECT_EQ(outcome->best.config.Get("A"), 16);
  EXPECT_EQ(outcome->best.config.Get("B"), 16);
  EXPECT_TRUE(outcome->budget_exhausted);
  EXPECT_EQ(outcome->configs_valid, 4096);
  // The walk's last improvement came within its first 400 configs, not after the space's 4096:
  // the exhaustive order's first 400 hold no config with both A and B above 8.
  int improved_at = 0;
  for (const std::string& line : progress) {
    if (line.find("best so far A=16,B=16") != std::string::npos) {
      improved_at = std::stoi(line.substr(line.find('[') + 1));
      break;
    }
  }
  EXPECT_GT(improved_at, 0) << absl::StrJoin(progress, "\n");
  EXPECT_LT(improved_at, 400);
  for (const Config& c : NearestConfigs(kernel.params, Config{{"A", 1}, {"B", 1}, {"C", 1}}, 400)) {
    EXPECT_FALSE(c.Get("A") > 8 && c.Get("B") > 8) << c.ToString();
  }
}

TEST(ModelRankedConfigs, OrdersByModelledTimeThenByDistanceFromTheOrigin) {
  ParamSpace space;
  space.Add("A", {1, 2, 4, 8}).Add("B", {16, 32, 64});
  const Config origin{{"A", 1}, {"B", 32}};
  // The model sees A only (a config with a larger A moves fewer bytes); B = 64 is 0.5% dearer,
  // within the model's tie, and the 0.5 us bound of A = 8 is below a tie step of A = 4's 1 us.
  auto modelled = [](const Config& c) {
    return 8e-6 / double(c.Get("A")) * (c.Get("B") == 64 ? 1.005 : 1.0);
  };
  uint64_t valid = 0;
  std::vector<std::string> text;
  for (const Config& c : ModelRankedConfigs(space, origin, 100, modelled, &valid))
    text.push_back(c.ToString());
  EXPECT_EQ(valid, 12u);
  EXPECT_EQ(absl::StrJoin(text, " "),
            "A=8,B=32 A=8,B=16 A=8,B=64 A=4,B=32 A=4,B=16 A=4,B=64 "
            "A=2,B=32 A=2,B=16 A=2,B=64 A=1,B=32 A=1,B=16 A=1,B=64");
  // A model that prices nothing leaves the nearest-first order.
  const std::vector<Config> unpriced =
      ModelRankedConfigs(space, origin, 100, [](const Config&) { return 0.0; });
  EXPECT_EQ(unpriced, NearestConfigs(space, origin, 100));
}

TEST(ModelFit, PrunesOnlyWhatEvenTheBestEfficiencySeenCannotMakeFaster) {
  ModelFit fit;
  EXPECT_FALSE(fit.ProvesSlower(10, 1)) << "nothing fitted yet";
  fit.Add(1e-3, 2e-3);  // efficiency 0.5
  fit.Add(1e-3, 4e-3);  // 0.25
  fit.Add(1e-3, 2.2e-3);
  // The spread seen: the highest efficiency, 0.5, over the median, 1/2.2, is 10% more.
  EXPECT_NEAR(fit.Margin(), 0.1, 1e-9);
  // With a best of 2 ms, a config modelled at m runs at least m / (0.5 x 1.1): proven slower
  // from 1.1 ms of bound up.
  EXPECT_FALSE(fit.ProvesSlower(1.09e-3, 2e-3));
  EXPECT_TRUE(fit.ProvesSlower(1.11e-3, 2e-3));
  EXPECT_FALSE(fit.ProvesSlower(0, 2e-3)) << "an unpriced config is never pruned";
  fit.Add(1e-3, 1e-3);  // efficiency 1: the spread is now 1 / 0.5 - 1 = 100%
  EXPECT_NEAR(fit.Margin(), 1.0, 1e-9);
  EXPECT_FALSE(fit.ProvesSlower(3.9e-3, 2e-3));
  EXPECT_TRUE(fit.ProvesSlower(4.1e-3, 2e-3));
}

// A GEMV that reads its matrix PASSES times, 1 ms a pass, and U = 4 unrolls 5% faster than the
// others. Its traffic model says PASSES (10 MB from DRAM a pass) and not U. The initial config
// is the slowest, PASSES = 64, U = 1.
Kernel MultiPassGemv() {
  std::vector<int64_t> passes;
  for (int64_t p = 1; p <= 64; ++p) passes.push_back(p);
  ParamSpace space;
  space.Add("PASSES", passes).Add("U", {1, 2, 4, 8});
  return Kernel("multi_pass_gemv")
      .Computes(Op::kGemv, {Dtype::kF32}, {Epilogue::kNone})
      .Tunes(space)
      .StartsFrom([](const Workload&, int, CacheMode, const MachineProfile&) {
        return Config{{"PASSES", 64}, {"U", 1}};
      })
      .Moves([](const Workload&, const Config& c, int, const MachineProfile&) {
        Traffic t;
        t[MemoryLevel::kDram] = 1e7 * double(c.Get("PASSES"));
        return t;
      })
      .Threads(Threading::kSelf)
      .Runs([](const Config& c, Problem& p, const RunContext&) {
        const Workload& w = p.workload;
        ReferenceGemvF32(w.n, w.k, p.b.data(), p.ldb, p.a.data(), p.c.data(), nullptr,
                         Epilogue::kNone);
        Takes(1e-3 * double(c.Get("PASSES")) * (c.Get("U") == 4 ? 1.0 : 1.05));
        return absl::OkStatus();
      });
}

TEST(Tune, TheModelStrategyTimesWhatTheModelRanksFastestAndPrunesTheRest) {
  const Kernel kernel = MultiPassGemv();
  TuneOptions options = QuickOptions();
  options.timing.cache = CacheMode::kCold;  // the model's bytes come from DRAM
  std::vector<std::string> progress;
  options.progress = [&](const std::string& line) { progress.push_back(line); };
  std::vector<std::pair<std::string, int>> bests;  // each change of the fastest, and trials
  options.on_best = [&](const Trial& best, int tried, double) {
    bests.emplace_back(best.config.ToString(), tried);
  };
  absl::StatusOr<TuneOutcome> outcome = TuneGemv(kernel, 16, 16, options, fixtures::RoundMachine());
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  EXPECT_EQ(outcome->best.config.ToString(), "PASSES=1,U=4");
  EXPECT_EQ(outcome->configs_valid, 256);
  // The initial config, then the four of PASSES = 1; everything else is proven slower: two passes
  // are modelled at 2 ms, and at the best efficiency seen (1: 1 ms modelled, 1 ms measured) plus
  // the 10% margin cannot run under 1.8 ms.
  EXPECT_EQ(outcome->configs_tried, 5) << absl::StrJoin(progress, "\n");
  EXPECT_EQ(outcome->configs_pruned, 256 - 5);
  EXPECT_FALSE(outcome->budget_exhausted);
  bool said_pruned = false;
  for (const std::string& line : progress) {
    if (line.find("251 configs pruned") != std::string::npos) said_pruned = true;
  }
  EXPECT_TRUE(said_pruned) << absl::StrJoin(progress, "\n");
  // The search's own trace: the initial config, then the first of PASSES = 1 (U = 1), then U = 4.
  ASSERT_EQ(bests.size(), 3u);
  EXPECT_EQ(bests[0].first, "PASSES=64,U=1");
  EXPECT_EQ(bests[0].second, 1);
  EXPECT_EQ(bests[1].first, "PASSES=1,U=1");
  EXPECT_EQ(bests[1].second, 2);
  EXPECT_EQ(bests.back().first, "PASSES=1,U=4");

  // The exhaustive order, from the same start and budget, spends it around PASSES = 64.
  options.strategy = "exhaustive";
  options.budget_seconds = 1;
  absl::StatusOr<TuneOutcome> exhaustive =
      TuneGemv(kernel, 16, 16, options, fixtures::RoundMachine());
  ASSERT_TRUE(exhaustive.ok()) << exhaustive.status();
  EXPECT_GT(exhaustive->best.config.Get("PASSES"), 1);
  EXPECT_EQ(exhaustive->configs_pruned, 0);
}

// Where no ceiling prices the workload the model strategy cannot rank: half the search goes to
// the configs nearest the initial one, the rest to descent, which still walks to a far optimum
// (the nearest-first order alone does not get there in this budget: see the descent test).
TEST(Tune, TheModelStrategyWithoutAModelStillDescendsToAFarOptimum) {
  const Kernel kernel = DownhillGemv();
  TuneOptions options = QuickOptions();
  options.budget_seconds = 6;
  std::vector<std::string> progress;
  options.progress = [&](const std::string& line) { progress.push_back(line); };
  absl::StatusOr<TuneOutcome> outcome = TuneGemv(kernel, 16, 16, options);
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  EXPECT_EQ(outcome->best.config.Get("A"), 16);
  EXPECT_EQ(outcome->best.config.Get("B"), 16);
  EXPECT_EQ(outcome->configs_pruned, 0);
  ASSERT_FALSE(progress.empty());
  EXPECT_NE(progress.front().find("model: no ceiling prices this workload"), std::string::npos)
      << progress.front();
}

TEST(AutoThreadCounts, ArePowersOfTwoUpToEveryCpu) {
  EXPECT_EQ(AutoThreadCounts(1), std::vector<int>({1}));
  EXPECT_EQ(AutoThreadCounts(2), std::vector<int>({1, 2}));
  EXPECT_EQ(AutoThreadCounts(6), std::vector<int>({1, 2, 4, 6}));
  EXPECT_EQ(AutoThreadCounts(64), std::vector<int>({1, 2, 4, 8, 16, 32, 64}));
}

ThreadTiming TimedAt(int threads, double median, double cv) {
  ThreadTiming t;
  t.threads = threads;
  t.seconds.median = median;
  t.seconds.cv = cv;
  return t;
}

TEST(FewestThreadsAsFast, PrefersFewerThreadsOnlyWithinTheNoise) {
  // Two threads 2% faster than one, with 1% noise: within the 3% floor, so one thread.
  ThreadChoice c = FewestThreadsAsFast({TimedAt(1, 1.0, 0.01), TimedAt(2, 0.98, 0.01)});
  EXPECT_EQ(c.threads, 1);
  EXPECT_DOUBLE_EQ(c.tolerance, ThreadChoice::kMinThreadTolerance);
  // 10% faster on two: two.
  c = FewestThreadsAsFast({TimedAt(1, 1.0, 0.01), TimedAt(2, 0.9, 0.01)});
  EXPECT_EQ(c.threads, 2);
  // The same 10% with the fastest's samples spread by 20%: the tolerance stops at its ceiling of
  // 10%, and one thread, 11% slower, is not within it.
  c = FewestThreadsAsFast({TimedAt(1, 1.0, 0.01), TimedAt(2, 0.9, 0.2)});
  EXPECT_DOUBLE_EQ(c.tolerance, ThreadChoice::kMaxThreadTolerance);
  EXPECT_EQ(c.threads, 2);
  // Four counts: 4 and 8 as fast within 5% noise; 2 is 20% slower. Four threads.
  c = FewestThreadsAsFast({TimedAt(1, 4.0, 0.05), TimedAt(2, 1.2, 0.05), TimedAt(4, 1.02, 0.05),
                           TimedAt(8, 1.0, 0.05)});
  EXPECT_EQ(c.threads, 4);
  EXPECT_DOUBLE_EQ(c.tolerance, 0.05);
  EXPECT_EQ(c.timed.size(), 4u);
}

// A GEMV that takes 4 ms on one thread and `two_thread_ms` on two (ManualClock, by the threads
// the call is given).
Kernel ThreadScalingGemv(double two_thread_ms) {
  return Kernel("thread_scaling_gemv")
      .Computes(Op::kGemv, {Dtype::kF32}, {Epilogue::kNone})
      .Threads(Threading::kSelf)
      .Runs([two_thread_ms](const Config&, Problem& p, const RunContext& ctx) {
        const Workload& w = p.workload;
        ReferenceGemvF32(w.n, w.k, p.b.data(), p.ldb, p.a.data(), p.c.data(), nullptr,
                         Epilogue::kNone);
        Takes(ctx.threads == 1 ? 4e-3 : two_thread_ms * 1e-3);
        return absl::OkStatus();
      });
}

TEST(ChooseThreads, TimesEachCountOnItsOwnThreadsAndChoosesTheFewestAsFast) {
  if (AllowedCpus().size() < 2) GTEST_SKIP() << "needs two CPUs";
  absl::StatusOr<Problem> problem =
      Problem::Create({Op::kGemv, 1, 16, 16, Dtype::kF32, Epilogue::kNone});
  ASSERT_TRUE(problem.ok());
  const TimingOptions timing = QuickOptions().timing;
  for (const auto& [two_thread_ms, expected] : {std::pair{2.0, 2}, std::pair{3.95, 1}}) {
    const Kernel kernel = ThreadScalingGemv(two_thread_ms);
    absl::StatusOr<ThreadChoice> choice =
        ChooseThreads(kernel, *problem, {{1, Config()}, {2, Config()}}, timing, 3);
    ASSERT_TRUE(choice.ok()) << choice.status();
    EXPECT_EQ(choice->threads, expected) << two_thread_ms;
    ASSERT_EQ(choice->timed.size(), 2u);
    EXPECT_NEAR(choice->timed[0].seconds.median, 4e-3, 1e-9);
    EXPECT_NEAR(choice->timed[1].seconds.median, two_thread_ms * 1e-3, 1e-9);
    // Three rounds of at least two repetitions each, pooled.
    EXPECT_GE(choice->timed[0].seconds.count, 6);
  }
}

}  // namespace
}  // namespace rooftune
