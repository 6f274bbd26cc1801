#include "framework/harness.h"

#include <time.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "framework/cold_cache.h"
#include "framework/roofline.h"

namespace rooftune {
namespace {

void KeepOutput(Problem& problem) {
  // The output is the kernel's only observable effect: make it escape so no run can be deleted.
  benchmark::DoNotOptimize(problem.c.data());
  benchmark::DoNotOptimize(problem.c_s32.data());
  benchmark::ClobberMemory();
}

// Every thread's CPU time so far (the calling thread and the executor's workers alike).
double ProcessCpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

}  // namespace

CacheMode NaturalCacheMode(const MachineProfile& profile, const Workload& workload, int threads) {
  return StreamsFromDram(profile, workload, threads) ? CacheMode::kCold : CacheMode::kWarm;
}

absl::StatusOr<Prepared> Prepare(const Kernel& kernel, const Config& config,
                                 const Problem& problem) {
  if (!kernel.prepare) return Prepared();
  return kernel.prepare(config, problem);
}

namespace {
absl::StatusOr<Validation> Validate(const Kernel& kernel, const Config& config, Problem& problem,
                                    const ReferenceOutput& reference, Executor& executor,
                                    const void* prepared) {
  if (absl::Status s = kernel.params.Validate(config); !s.ok()) return s;
  if (!kernel.Supports(problem.workload)) {
    return absl::InvalidArgumentError(
        absl::StrCat("kernel ", kernel.name, " does not compute ", problem.workload.Key()));
  }
  RestoreOutput(problem, reference);
  if (absl::Status s = executor.Run(kernel, config, problem, prepared); !s.ok()) return s;
  return CompareWithReference(problem, reference);
}
}  // namespace

absl::StatusOr<Validation> ValidateConfig(const Kernel& kernel, const Config& config,
                                          Problem& problem, const ReferenceOutput& reference,
                                          Executor& executor) {
  absl::StatusOr<Prepared> prepared = Prepare(kernel, config, problem);
  if (!prepared.ok()) return prepared.status();
  return Validate(kernel, config, problem, reference, executor, prepared->object.get());
}

void TimedCalls::Append(const TimedCalls& more) {
  seconds.insert(seconds.end(), more.seconds.begin(), more.seconds.end());
  cpu_seconds.insert(cpu_seconds.end(), more.cpu_seconds.begin(), more.cpu_seconds.end());
}

// Calls shorter than this are timed in batches, each sample the mean of a batch: the clock reads
// and the loop around a call cost tens of nanoseconds, a large part of a sub-microsecond call
// (Google Benchmark's iterations serve the same end).
constexpr double kShortestTimedSeconds = 20e-6;
constexpr int kLargestBatch = 1000;

int CallsPerSample(double call_seconds) {
  if (call_seconds >= kShortestTimedSeconds) return 1;
  return std::min(kLargestBatch,
                  int(std::ceil(kShortestTimedSeconds / std::max(call_seconds, 1e-9))));
}

namespace {

// Cold calls evict before each call, and counters are read around each: those are timed one by
// one.
absl::StatusOr<TimedCalls> TimeCalls(const Kernel& kernel, const Config& config, Problem& problem,
                                     Executor& executor, const Prepared& prepared,
                                     const TimingOptions& options) {
  const std::vector<ByteSpan> cold_bytes =
      options.cache == CacheMode::kCold ? ColdBytes(problem, prepared) : std::vector<ByteSpan>();
  auto run = [&] { return executor.Run(kernel, config, problem, prepared); };
  const Clock& clock = *options.clock;
  double warm_call = 1;  // the last warm-up call's time, which sizes batches
  for (int i = 0; i < options.warmup_runs; ++i) {
    const double start = clock.Seconds();
    if (absl::Status s = run(); !s.ok()) return s;
    KeepOutput(problem);
    warm_call = clock.Seconds() - start;
  }
  const bool one_by_one =
      options.cache == CacheMode::kCold || options.before_call || options.after_call;
  const int batch = one_by_one ? 1 : CallsPerSample(warm_call);
  TimedCalls calls;
  double total = 0;
  const double deadline = clock.Seconds() + options.max_seconds;
  while (int(calls.seconds.size()) < options.max_repetitions) {
    if (options.cache == CacheMode::kCold) EvictBeforeColdCall(kernel, cold_bytes, executor);
    if (options.before_call) options.before_call();
    const double cpu_start = ProcessCpuSeconds();
    const double start = clock.Seconds();
    absl::Status status;
    for (int i = 0; i < batch && status.ok(); ++i) {
      status = run();
      KeepOutput(problem);
    }
    const double end = clock.Seconds();
    const double cpu_end = ProcessCpuSeconds();
    if (options.after_call) options.after_call();
    if (!status.ok()) return status;
    const double seconds = end - start;
    calls.seconds.push_back(seconds / batch);
    calls.cpu_seconds.push_back((cpu_end - cpu_start) / batch);
    total += seconds;
    if (total >= options.min_seconds && int(calls.seconds.size()) >= options.min_repetitions) {
      break;
    }
    if (end >= deadline && calls.seconds.size() >= 2) break;
  }
  return calls;
}

}  // namespace

absl::StatusOr<TimedCalls> TimeSamples(const Kernel& kernel, const Config& config, Problem& problem,
                                       Executor& executor, const Prepared& prepared,
                                       const TimingOptions& options) {
  if (kernel.threading != Threading::kTbb) {
    return TimeCalls(kernel, config, problem, executor, prepared, options);
  }
  // One entry into the executor's arena for all the calls, not one per call: entering pins the
  // calling thread (system calls that a short call's time would include). A kernel with threads
  // of its own (kSelf) runs outside the arena, unpinned, as it always does.
  absl::StatusOr<TimedCalls> calls;
  executor.Execute(
      [&] { calls = TimeCalls(kernel, config, problem, executor, prepared, options); });
  return calls;
}

absl::StatusOr<std::vector<TimedCalls>> TimeRoundRobin(
    const Kernel& kernel, Problem& problem, const std::vector<RoundRobinEntrant>& entrants,
    const TimingOptions& options, int rounds, const std::function<bool()>& go_on) {
  std::vector<Prepared> prepared;
  for (const RoundRobinEntrant& e : entrants) {
    absl::StatusOr<Prepared> p = Prepare(kernel, e.config, problem);
    if (!p.ok()) return p.status();
    prepared.push_back(*std::move(p));
  }
  const size_t n = entrants.size();
  std::vector<TimedCalls> calls(n);
  for (int round = 0; round < std::max(1, rounds); ++round) {
    if (round >= 2 && go_on && !go_on()) break;
    for (size_t i = 0; i < n; ++i) {
      const size_t at = (i + size_t(round)) % n;
      absl::StatusOr<TimedCalls> timed = TimeSamples(kernel, entrants[at].config, problem,
                                                     *entrants[at].executor, prepared[at], options);
      if (!timed.ok()) return timed.status();
      calls[at].Append(*timed);
    }
  }
  return calls;
}

absl::StatusOr<Trial> RunTrial(const Kernel& kernel, const Config& config, Problem& problem,
                               const ReferenceOutput& reference, Executor& executor,
                               const TimingOptions& options) {
  Trial trial;
  trial.kernel = kernel.name;
  trial.workload = problem.workload;
  trial.config = config;
  trial.threads = executor.threads();
  trial.cache = options.cache;
  absl::StatusOr<Prepared> prepared = Prepare(kernel, config, problem);
  if (!prepared.ok()) return prepared.status();
  absl::StatusOr<Validation> validation =
      Validate(kernel, config, problem, reference, executor, prepared->object.get());
  if (!validation.ok()) return validation.status();
  trial.validation = *validation;
  if (!trial.validation.ok) return trial;

  absl::StatusOr<TimedCalls> calls =
      TimeSamples(kernel, config, problem, executor, *prepared, options);
  if (!calls.ok()) return calls.status();
  trial.seconds = Summarize(calls->seconds);
  trial.cpu_seconds = Summarize(calls->cpu_seconds);
  trial.noisy = trial.seconds.cv > options.noisy_cv;
  return trial;
}

}  // namespace rooftune
