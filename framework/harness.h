// The harness turns (kernel, workload, config, threads) into a Trial: it validates the config's
// output against the reference first, and only a correct config is timed.
#pragma once

#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "framework/cache_mode.h"
#include "framework/clock.h"
#include "framework/executor.h"
#include "framework/kernel.h"
#include "framework/machine_profile.h"
#include "framework/stats.h"
#include "framework/validation.h"

namespace rooftune {

// How a workload is timed, tuned and looked up unless the user says otherwise: cold when it is
// about streaming its operands from DRAM (StreamsFromDram), warm otherwise.
CacheMode NaturalCacheMode(const MachineProfile& profile, const Workload& workload, int threads);

struct TimingOptions {
  double min_seconds = 0.2;  // keep repeating until this much kernel time is collected...
  int min_repetitions = 5;   // ...and at least this many repetitions,
  int max_repetitions = 10000;
  double max_seconds = 10;  // but stop here whatever the counts say.
  int warmup_runs = 1;
  double noisy_cv = 0.05;  // a CV above this flags the figure as noisy
  // Cold: the operands and the prepared bytes are evicted before every repetition
  // (framework/cold_cache.h).
  CacheMode cache = CacheMode::kWarm;
  // Called right before and right after each timed call, outside its clock and after any
  // eviction: counters enabled over the kernel's own work only.
  std::function<void()> before_call, after_call;
  // Where the calls' times and the limits above are read (tests pass a ManualClock).
  const Clock* clock = &Clock::Steady();
};

struct Trial {
  std::string kernel;
  Workload workload;
  Config config;
  std::string config_source;  // "given", "tuned", "initial"
  int threads = 1;
  CacheMode cache = CacheMode::kWarm;
  Validation validation;
  SampleStats seconds;
  // Process CPU time per call, every thread's (Google Benchmark's cpu_time with
  // MeasureProcessCPUTime): about threads x seconds when the calls keep every thread busy.
  SampleStats cpu_seconds;
  bool noisy = false;
  double OpsPerSecond() const {
    return seconds.median > 0 ? workload.Operations() / seconds.median : 0;
  }
};

// Validates, and if the output is correct, times. A wrong output is not an error: the Trial says
// so and carries no timing. Errors are for configs that cannot run at all.
absl::StatusOr<Trial> RunTrial(const Kernel& kernel, const Config& config, Problem& problem,
                               const ReferenceOutput& reference, Executor& executor,
                               const TimingOptions& options);

// Warm calls of `call_seconds` are timed this many to a sample (each sample a batch's mean): 1
// from 20 us up, more below, so that the clock reads stay a small part of a sample.
int CallsPerSample(double call_seconds);

// The timed calls of one TimeSamples, in order: each call's wall time and process CPU time. Warm
// calls without counters are timed CallsPerSample to a sample.
struct TimedCalls {
  std::vector<double> seconds;
  std::vector<double> cpu_seconds;
  void Append(const TimedCalls& more);
};

// Times a config whose output was already validated on this problem (`prepared` is what Prepare
// made for it).
absl::StatusOr<TimedCalls> TimeSamples(const Kernel& kernel, const Config& config, Problem& problem,
                                       Executor& executor, const Prepared& prepared,
                                       const TimingOptions& options);

// Configs already validated on this problem, each timed on its own executor (one shared, or one
// per thread count), in rounds: every one once a round, the order rotated each round, so that a
// slow phase of a shared machine falls on all of them alike. `rounds` rounds (at least one); when
// `go_on` is given it is asked before each round after the second. Returns each one's timed
// calls pooled over the rounds, in the order given.
struct RoundRobinEntrant {
  Config config;
  Executor* executor = nullptr;
};
absl::StatusOr<std::vector<TimedCalls>> TimeRoundRobin(
    const Kernel& kernel, Problem& problem, const std::vector<RoundRobinEntrant>& entrants,
    const TimingOptions& options, int rounds, const std::function<bool()>& go_on = {});

// The kernel's prepare step for this config and problem (empty when it has none).
absl::StatusOr<Prepared> Prepare(const Kernel& kernel, const Config& config,
                                 const Problem& problem);

// Validation alone (rooftune verify).
absl::StatusOr<Validation> ValidateConfig(const Kernel& kernel, const Config& config,
                                          Problem& problem, const ReferenceOutput& reference,
                                          Executor& executor);

}  // namespace rooftune
