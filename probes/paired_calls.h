// A kernel's calls timed one sample at a time for pairing with something else's calls: the
// ceiling loop that binds it (paired_ceiling.h) or another kernel on the same shape (a speedup
// that holds on a shared machine, where two medians taken a minute apart compare two phases of
// the host rather than two kernels).
#pragma once

#include <chrono>

#include "absl/status/statusor.h"
#include "framework/cache_mode.h"
#include "framework/executor.h"
#include "framework/kernel.h"
#include "framework/problem.h"

namespace rooftune::probes {

// The longest a kernel's own thread pool is waited for after a call. libgomp's default spin
// count (300,000 iterations around a PAUSE) lasts milliseconds, longer on cores whose PAUSE takes
// over a hundred cycles.
constexpr std::chrono::milliseconds kLongestSettle{60};

// Waits until the process's other threads have stopped running: until two polls in a row in
// which their CPU time (each thread's CPU-time clock) grew by less than a tenth of the poll
// interval (one quiet poll can be a spinning thread the host preempted), or until `longest` has
// passed. Returns the seconds waited. Where the clocks cannot be read, sleeps `longest`.
double WaitForOtherThreadsToRest(std::chrono::milliseconds longest);

// Samples of one kernel's calls as the harness times them. Cold: each call follows the eviction
// of its operands (and what its prepare step made). Warm: each sample follows three untimed calls
// of its own, so that it finds the caches as its own repetitions left them, not as the other side
// of a pair did, and the threads of a pool awake; calls shorter than the clock can time well are
// batched (CallsPerSample).
class KernelSamples {
 public:
  // The problem's output must have been validated under `config`; `prepared` is what Prepare
  // made for them. All are borrowed and must outlive this.
  KernelSamples(const Kernel& kernel, const Config& config, Problem& problem,
                const Prepared& prepared, Executor& executor, CacheMode cache);

  // The seconds of one call, from one sample. The first sample sets the batch. Returns once a
  // kernel with its own thread pool has settled (Settle), so that the next thing timed, the
  // other side of a pair, does not share the cores with its spinning threads.
  absl::StatusOr<double> Next();

  // Waits for a kernel with its own thread pool (oneDNN's OpenMP team) to let it fall asleep:
  // threads left spinning on the cores would slow whatever runs next. (For TBB's workers, which
  // spin after a loop too, among such a team: a caller that ran one settles again.)
  void Settle() const;

 private:
  absl::StatusOr<double> Sample();
  absl::StatusOr<double> SampleHere();

  const Kernel& kernel_;
  const Config& config_;
  Problem& problem_;
  const Prepared& prepared_;
  Executor& executor_;
  CacheMode cache_;
  std::vector<ByteSpan> cold_bytes_;
  int batch_ = 0;  // 0 until the first sample
};

// The speedup of `ours` over `theirs` measured in back-to-back pairs, order alternating: their
// call's time over ours, per pair. Pairs keep coming for `seconds` and number at least
// `min_pairs`, at most `max_pairs`.
struct PairedSpeedup {
  double median = 0, low = 0, high = 0;         // of the per-pair ratios; low, high: quartiles
  double ours_seconds = 0, theirs_seconds = 0;  // the median call of each side
  int pairs = 0;
};
absl::StatusOr<PairedSpeedup> MeasurePairedSpeedup(KernelSamples& ours, KernelSamples& theirs,
                                                   double seconds = 0.5, int min_pairs = 11,
                                                   int max_pairs = 401);

}  // namespace rooftune::probes
