#include "probes/paired_calls.h"

#include <dirent.h>
#include <errno.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
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
  absl::StatusOr<double> t = Sample();
  if (t.ok() && batch_ == 0) {
    batch_ = cache_ == CacheMode::kCold ? 1 : CallsPerSample(*t);
    if (batch_ > 1) t = Sample();
  }
  Settle();
  return t;
}

void KernelSamples::Settle() const {
  if (kernel_.threading == Threading::kSelf) WaitForOtherThreadsToRest(kLongestSettle);
}

namespace {

// The CPU-time clock of thread `tid` of this process, as glibc's pthread_getcpuclockid makes it
// (the kernel's ABI: the id inverted and shifted by three, the per-thread and scheduler bits set).
// Read from another thread it includes the slice the thread is running now, which schedstat
// leaves out until the next scheduler tick.
clockid_t ThreadCpuClock(unsigned tid) { return clockid_t((~tid << 3) | 6u); }

// The CPU nanoseconds of every thread of this process but the calling one, by thread id, or
// nullopt where /proc or the clocks do not say. A thread that exited since readdir is left out.
std::optional<std::map<unsigned, uint64_t>> OtherThreadsCpuNanoseconds() {
  DIR* tasks = opendir("/proc/self/task");
  if (tasks == nullptr) return std::nullopt;
  const unsigned self = unsigned(syscall(SYS_gettid));
  std::map<unsigned, uint64_t> cpu;
  bool readable = true;
  while (const dirent* task = readdir(tasks)) {
    unsigned tid = 0;
    if (!absl::SimpleAtoi(task->d_name, &tid) || tid == self) continue;
    timespec t{};
    if (clock_gettime(ThreadCpuClock(tid), &t) == 0) {
      cpu[tid] = uint64_t(t.tv_sec) * 1'000'000'000u + uint64_t(t.tv_nsec);
    } else if (errno != EINVAL) {  // EINVAL: exited
      readable = false;
    }
  }
  closedir(tasks);
  if (!readable) return std::nullopt;
  return cpu;
}

// The CPU nanoseconds the threads of `now` ran since `before` (a thread new since then, from its
// first reading).
uint64_t CpuSince(const std::map<unsigned, uint64_t>& before,
                  const std::map<unsigned, uint64_t>& now) {
  uint64_t ran = 0;
  for (const auto& [tid, ns] : now) {
    const auto then = before.find(tid);
    if (then != before.end() && ns > then->second) ran += ns - then->second;
  }
  return ran;
}

}  // namespace

double WaitForOtherThreadsToRest(std::chrono::milliseconds longest) {
  constexpr std::chrono::microseconds kPoll{1000};
  const Clock::time_point start = Clock::now();
  std::optional<std::map<unsigned, uint64_t>> before = OtherThreadsCpuNanoseconds();
  if (!before) {
    std::this_thread::sleep_for(longest);
    return Since(start);
  }
  constexpr int kQuietPolls = 2;
  int quiet = 0;
  while (quiet < kQuietPolls && Clock::now() - start < longest) {
    std::this_thread::sleep_for(kPoll);
    std::optional<std::map<unsigned, uint64_t>> now = OtherThreadsCpuNanoseconds();
    if (!now) break;
    const bool rested =
        double(CpuSince(*before, *now)) < 0.1 * double(std::chrono::nanoseconds(kPoll).count());
    quiet = rested ? quiet + 1 : 0;
    before = std::move(now);
  }
  return Since(start);
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
