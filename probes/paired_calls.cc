#include "probes/paired_calls.h"

#include <algorithm>
#include <thread>
#include <vector>

#include "benchmark/benchmark.h"
#include "framework/cold_cache.h"
#include "framework/harness.h"
#include "framework/stats.h"

namespace rooftune::probes {
namespace {

using Clock = std::chrono::steady_clock;

double Since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Untimed calls before each warm sample, the same for both sides of a pair: after the other
// side's calls (and its pool's settling) a core may have slowed down, and threads fallen asleep
// (a kernel's own pool, or the arena's on more than one thread) wake over the first calls.
constexpr int kWarmUpCalls = 3;

}  // namespace

KernelSamples::KernelSamples(const Kernel& kernel, const Config& config, Problem& problem,
                             const Prepared& prepared, Executor& executor, CacheMode cache)
    : kernel_(kernel),
      config_(config),
      problem_(problem),
      prepared_(prepared),
      executor_(executor),
      cache_(cache),
      cold_bytes_(cache == CacheMode::kCold ? ColdBytes(problem, prepared)
                                            : std::vector<ByteSpan>()) {}

// A kernel on TBB is sampled inside the executor's arena, entered once for the warm-up and timed
// calls: entering pins the calling thread and leaving unpins it, two system calls (about 6 us on
// a VM) that each call would otherwise time and the harness's own timing does not
// (TimeSamples). Where the caller is in the arena already, entering again costs nothing.
absl::StatusOr<double> KernelSamples::Sample() {
  if (kernel_.threading != Threading::kTbb) return SampleHere();
  absl::StatusOr<double> seconds;
  executor_.Execute([&] { seconds = SampleHere(); });
  return seconds;
}

absl::StatusOr<double> KernelSamples::SampleHere() {
  if (cache_ == CacheMode::kCold) {
    EvictBeforeColdCall(kernel_, cold_bytes_, executor_);
  } else {
    for (int i = 0; i < kWarmUpCalls; ++i) {
      if (absl::Status s = executor_.Run(kernel_, config_, problem_, prepared_); !s.ok()) return s;
    }
  }
  const int batch = std::max(batch_, 1);
  const Clock::time_point start = Clock::now();
  absl::Status s;
  for (int i = 0; i < batch && s.ok(); ++i) {
    s = executor_.Run(kernel_, config_, problem_, prepared_);
    benchmark::DoNotOptimize(problem_.c.data());
    benchmark::DoNotOptimize(problem_.c_s32.data());
    benchmark::ClobberMemory();
  }
  const double seconds = Since(start) / batch;
  if (!s.ok()) return s;
  return seconds;
}

absl::StatusOr<double> KernelSamples::Next() {
  if (batch_ == 0) {
    absl::StatusOr<double> first = Sample();
    if (!first.ok()) return first.status();
    batch_ = cache_ == CacheMode::kCold ? 1 : CallsPerSample(*first);
    if (batch_ == 1) return first;
  }
  return Sample();
}

void KernelSamples::Settle() const {
  if (kernel_.threading == Threading::kSelf) std::this_thread::sleep_for(kSettle);
}

absl::StatusOr<PairedSpeedup> MeasurePairedSpeedup(KernelSamples& ours, KernelSamples& theirs,
                                                   double seconds, int min_pairs, int max_pairs) {
  std::vector<double> ours_seconds, theirs_seconds, ratios;
  const Clock::time_point start = Clock::now();
  while (int(ratios.size()) < min_pairs ||
         (Since(start) < seconds && int(ratios.size()) < max_pairs)) {
    const bool theirs_first = ratios.size() % 2 == 1;
    double t[2];  // ours, theirs
    const int order[2] = {theirs_first ? 1 : 0, theirs_first ? 0 : 1};
    for (int side : order) {
      KernelSamples& samples = side == 0 ? ours : theirs;
      absl::StatusOr<double> s = samples.Next();
      if (!s.ok()) return s.status();
      t[side] = *s;
      samples.Settle();
    }
    ours_seconds.push_back(t[0]);
    theirs_seconds.push_back(t[1]);
    ratios.push_back(t[1] / t[0]);
  }
  const Quartiles q = QuartilesOf(ratios);
  PairedSpeedup speedup;
  speedup.median = q.median, speedup.low = q.low, speedup.high = q.high;
  speedup.ours_seconds = Summarize(ours_seconds).median;
  speedup.theirs_seconds = Summarize(theirs_seconds).median;
  speedup.pairs = int(ratios.size());
  return speedup;
}

}  // namespace rooftune::probes
