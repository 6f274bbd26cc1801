// Pairs of real calls, timed on this machine: the tests check what a pairing reports and which
// way its ratio points, from two kernels whose work differs eightfold by construction.
#include "probes/paired_calls.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "framework/reference.h"

namespace rooftune::probes {
namespace {

// A kernel that runs the reference GEMM on its problem `times` times per call, counting calls.
Kernel Repeating(int times, int* calls, Threading threading) {
  Kernel kernel("repeating");
  kernel.Threads(threading).Runs([times, calls](const Config&, Problem& p, const RunContext&) {
    ++*calls;
    const Workload& w = p.workload;
    for (int i = 0; i < times; ++i) {
      ReferenceGemmF32(w.m, w.n, w.k, 1.0f, p.a.data(), p.lda, p.b.data(), p.ldb, 0.0f, p.c.data(),
                       p.ldc, nullptr, Epilogue::kNone);
    }
    return absl::OkStatus();
  });
  return kernel;
}

TEST(MeasurePairedSpeedup, TheirTimeOverOursPerPairWithBothSidesCalledInTurn) {
  const Workload w{Op::kGemm, 24, 24, 24, Dtype::kF32, Epilogue::kNone};
  absl::StatusOr<Problem> ours_problem = Problem::Create(w), their_problem = Problem::Create(w);
  ASSERT_TRUE(ours_problem.ok() && their_problem.ok());
  int ours_calls = 0, their_calls = 0;
  // Ours in the arena, theirs on the calling thread (a kernel with its own pool, as oneDNN's).
  const Kernel once = Repeating(1, &ours_calls, Threading::kTbb);
  const Kernel eight = Repeating(8, &their_calls, Threading::kSelf);
  Executor executor(1);
  const Prepared none;
  KernelSamples ours(once, Config(), *ours_problem, none, executor, CacheMode::kWarm);
  KernelSamples theirs(eight, Config(), *their_problem, none, executor, CacheMode::kWarm);
  const int64_t pinned_before = executor.pinned_entries();
  absl::StatusOr<PairedSpeedup> s = MeasurePairedSpeedup(ours, theirs, 0.05, 11, 15);
  ASSERT_TRUE(s.ok()) << s.status();
  // Ours joins the arena once a sample (its first may be sampled twice, to size its batches), not
  // once for each of its untimed and timed calls: pinning is not part of a call's time.
  const int64_t pinned = executor.pinned_entries() - pinned_before;
  EXPECT_GE(pinned, s->pairs);
  EXPECT_LE(pinned, s->pairs + 1);
  EXPECT_GE(s->pairs, 11);
  EXPECT_LE(s->pairs, 15);
  EXPECT_LE(s->low, s->median);
  EXPECT_LE(s->median, s->high);
  EXPECT_GT(s->ours_seconds, 0);
  EXPECT_GT(s->theirs_seconds, s->ours_seconds);
  // Eight times the work: above 1 means ours is faster, whatever the machine's speed.
  EXPECT_GT(s->median, 2.0);
  // Each warm sample follows three untimed calls of its own, on both sides alike.
  EXPECT_GE(ours_calls, 4 * s->pairs);
  EXPECT_GE(their_calls, 4 * s->pairs);
}

TEST(MeasurePairedSpeedup, AFailingCallEndsThePairingWithItsError) {
  const Workload w{Op::kGemm, 4, 4, 4, Dtype::kF32, Epilogue::kNone};
  absl::StatusOr<Problem> problem = Problem::Create(w);
  ASSERT_TRUE(problem.ok());
  int calls = 0;
  const Kernel fine = Repeating(1, &calls, Threading::kTbb);
  Kernel failing("failing");
  failing.Runs([](const Config&, Problem&, const RunContext&) {
    return absl::InternalError("the kernel broke");
  });
  Executor executor(1);
  const Prepared none;
  KernelSamples ours(fine, Config(), *problem, none, executor, CacheMode::kWarm);
  KernelSamples theirs(failing, Config(), *problem, none, executor, CacheMode::kWarm);
  absl::StatusOr<PairedSpeedup> s = MeasurePairedSpeedup(ours, theirs, 0.05);
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInternal);
  EXPECT_EQ(s.status().message(), "the kernel broke");
}

// A kernel whose call leaves a thread spinning for `spin` after it returns, as an OpenMP team
// does; a call while one still spins starts no other.
struct SpinningTeam {
  std::atomic<bool> spinning{false};
  std::vector<std::thread> threads;
  ~SpinningTeam() {
    for (std::thread& t : threads) t.join();
  }
};

Kernel SpinsAfterEachCall(SpinningTeam* team, std::chrono::milliseconds spin, Threading threading) {
  Kernel kernel("spins_after_each_call");
  kernel.Threads(threading).Runs([team, spin](const Config&, Problem&, const RunContext&) {
    if (!team->spinning.exchange(true)) {
      team->threads.emplace_back([team, spin] {
        const auto end = std::chrono::steady_clock::now() + spin;
        while (std::chrono::steady_clock::now() < end) {
        }
        team->spinning = false;
      });
    }
    return absl::OkStatus();
  });
  return kernel;
}

// A sample of a kernel with its own threads returns once they rest, so that the other side of a
// pair does not run among them; a TBB kernel's returns at once (its arena's workers are the
// pairing's own). The host can preempt the spinner past the quiet polls: a few tries.
TEST(KernelSamples, ASampleOfAKernelWithItsOwnThreadsReturnsOnceTheyRest) {
  const Workload w{Op::kGemm, 4, 4, 4, Dtype::kF32, Epilogue::kNone};
  absl::StatusOr<Problem> problem = Problem::Create(w);
  ASSERT_TRUE(problem.ok());
  Executor executor(1);
  const Prepared none;
  bool outlasted = false;
  for (int attempt = 0; attempt < 5 && !outlasted; ++attempt) {
    SpinningTeam team;
    const Kernel own = SpinsAfterEachCall(&team, std::chrono::milliseconds(30), Threading::kSelf);
    KernelSamples samples(own, Config(), *problem, none, executor, CacheMode::kCold);
    ASSERT_TRUE(samples.Next().ok());
    outlasted = !team.spinning;
  }
  EXPECT_TRUE(outlasted);

  SpinningTeam team;
  const Kernel tbb = SpinsAfterEachCall(&team, std::chrono::milliseconds(500), Threading::kTbb);
  KernelSamples samples(tbb, Config(), *problem, none, executor, CacheMode::kCold);
  ASSERT_TRUE(samples.Next().ok());
  EXPECT_TRUE(team.spinning);
}

// A thread of the process that spins (as an OpenMP team does after a call) holds the wait until
// it stops; one that sleeps does not. The host can preempt the spinner for longer than the
// quiet polls, ending a wait early: a few tries, of which one must outlast the spin.
TEST(WaitForOtherThreadsToRest, WaitsWhileAnotherThreadSpinsAndNotOnceItSleeps) {
  using std::chrono::milliseconds;
  bool outlasted = false;
  for (int attempt = 0; attempt < 5 && !outlasted; ++attempt) {
    std::atomic<bool> started{false}, spinning{true};
    std::thread spinner([&] {
      started = true;
      const auto end = std::chrono::steady_clock::now() + milliseconds(40);
      while (std::chrono::steady_clock::now() < end) {
      }
      spinning = false;
      std::this_thread::sleep_for(milliseconds(300));
    });
    while (!started) std::this_thread::yield();
    const double waited = WaitForOtherThreadsToRest(milliseconds(2000));
    outlasted = !spinning;
    // Once it sleeps, the wait ends within a few polls, long before its limit.
    if (outlasted) EXPECT_LT(waited, 1.0);
    spinner.join();
  }
  EXPECT_TRUE(outlasted);
}

TEST(WaitForOtherThreadsToRest, GivesUpAfterItsLimitOnAThreadThatNeverRests) {
  using std::chrono::milliseconds;
  std::atomic<bool> stop{false};
  std::thread spinner([&] {
    while (!stop) {
    }
  });
  const double waited = WaitForOtherThreadsToRest(milliseconds(30));
  stop = true;
  spinner.join();
  EXPECT_GE(waited, 0.03);
}

}  // namespace
}  // namespace rooftune::probes
