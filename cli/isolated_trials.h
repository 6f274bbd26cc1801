// Candidates validated and timed in a supervised worker process, so that a kernel that crashes,
// aborts, throws or hangs on some config costs that config, not the tune. The worker is
// `rooftune tune-worker` (started once, kept between candidates): it builds the same problem from
// the same seed, computes the reference, and answers one line of JSON per config it is sent. A
// worker that dies is replaced at the next candidate; one that does not answer within the
// deadline is killed. Either way the config comes back as a FailedPrecondition naming what
// happened, which the tuner counts as a rejected config.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "framework/harness.h"
#include "framework/kernel.h"

namespace rooftune::cli {

class IsolatedTrials {
 public:
  // `plugins`: the --plugin libraries the worker loads too. `deadline_seconds`: how long one
  // candidate may take before its worker is killed. `log_path`: where the worker's stdout and
  // stderr go (appended), when not to this process's stderr.
  IsolatedTrials(const Kernel& kernel, const Workload& workload, int threads,
                 std::vector<std::string> plugins, double deadline_seconds,
                 std::string log_path = "");
  ~IsolatedTrials();
  IsolatedTrials(const IsolatedTrials&) = delete;
  IsolatedTrials& operator=(const IsolatedTrials&) = delete;

  absl::StatusOr<Trial> Evaluate(const Config& config, const TimingOptions& timing);
  // The configs that crashed, aborted or hung a worker, each with what happened.
  const std::vector<std::pair<Config, std::string>>& failures() const { return failures_; }

 private:
  // Starts the worker and waits, up to SetupDeadlineSeconds, for it to say it has built the
  // problem and its reference; "" when it did, else what happened.
  std::string Start();
  // The next line the worker answers within `seconds`, or "" with `*failure` saying why not (it
  // hung and was killed, or it ended).
  std::string NextLine(double seconds, std::string* failure);
  // Reaps the worker and says how it ended ("killed by signal 11 (Segmentation fault)").
  std::string Reap(bool kill_first);
  void ClosePipes();

  const Kernel& kernel_;
  Workload workload_;
  int threads_;
  std::vector<std::string> plugins_;
  double deadline_seconds_;
  std::string log_path_;
  pid_t pid_ = -1;
  int to_worker_ = -1, from_worker_ = -1;
  std::string pending_;  // what the worker wrote past the last full line
  std::vector<std::pair<Config, std::string>> failures_;
};

// The deadline for one candidate: long enough for its validation and its timing (`timing`'s
// max_seconds), at least 5 s. ROOFTUNE_TRIAL_DEADLINE_SECONDS overrides it (for tests).
double TrialDeadlineSeconds(const TimingOptions& timing);
// The deadline for a worker to build the problem and compute its reference before the first
// candidate: a minute, or longer for a workload whose reference would take longer even at a
// tenth of a billion operations a second (a 64 x 8192 x 32768 GEMM's took 8 s, past the
// candidate's own deadline).
double SetupDeadlineSeconds(const Workload& workload);

// verify and bench run `config` once in a worker first (validated, and timed briefly in `cache`
// mode): a config that crashes, aborts, hangs or runs out of memory there is a FailedPrecondition
// naming the kernel, config and what happened, and never runs in this process. A config that
// runs, correct or not, is Ok: the command then runs it here and says what it found.
absl::Status RunsInAWorker(const Kernel& kernel, const Workload& workload, int threads,
                           const Config& config, CacheMode cache);

}  // namespace rooftune::cli
