// The tuner: search a kernel's ParamSpace for the fastest correct config of one workload at one
// thread count. Every candidate is validated before it is timed; a wrong one is rejected and never
// becomes the best.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "framework/executor.h"
#include "framework/harness.h"
#include "framework/machine_profile.h"
#include "framework/stats.h"

namespace rooftune {

struct TuneOptions {
  // "model" (the default): the configs the roofline model ranks fastest first (ModelRankedConfigs),
  // each pruned once the model proves it slower than the best measured (ModelFit); half-way
  // through the search, descent from the best measured (below); then the rest of the ranking.
  // "exhaustive": the valid configs nearest the initial one first (NearestConfigs), until the
  // budget is spent. "descent": from the initial config (or the stored one, when faster), time
  // every neighbour (Neighbours) and move to the fastest, until none is faster: it goes further
  // from the initial config in the same budget, to a local optimum, and spends what is left of
  // the budget on the configs nearest that optimum.
  std::string strategy = "model";
  double budget_seconds = 60;  // wall-clock limit for one (kernel, workload, threads)
  // One timing of one config: every candidate of the search gets one, every finalist one a round.
  TimingOptions timing = {.min_seconds = 0.03, .min_repetitions = 3, .max_seconds = 2};
  // The finals: the `finalists` fastest candidates, the initial config and the stored one (below),
  // re-timed round-robin for up to `final_rounds` rounds (at least 2) in the last `finals_share`
  // of the budget.
  int finalists = 4;
  int final_rounds = 5;
  double finals_share = 0.25;
  // The config an earlier tune stored for this workload and thread count, if any: timed right
  // after the initial config and always re-timed in the finals, so that a re-tune whose budget
  // ends before it reaches that config again (a cold tune tries a few dozen) keeps it rather than
  // storing something slower.
  std::optional<Config> stored;
  std::function<void(const std::string&)> progress;  // one line per event, for stderr
  // Called when the search's fastest correct config changes: its trial, the configs tried so far
  // and the seconds since the tune began (bench/tuner_bench traces the search with it).
  std::function<void(const Trial& best, int tried, double seconds)> on_best;
  // A search that finds nothing faster for this long says how far it has got, so a long tune
  // never goes quiet.
  double heartbeat_seconds = 5;
  // How a candidate is validated and timed with `timing`: unset, RunTrial in this process. The
  // CLI sets it to run candidates in a supervised worker process (cli/isolated_trials.h), whose
  // crash, hang or abort comes back as a FailedPrecondition: a rejected config, not a failed tune.
  std::function<absl::StatusOr<Trial>(const Config&, const TimingOptions&)> evaluate;
  // Configs not to try (their text form), each with why: the ones that crashed or hung an
  // earlier tune's worker. Counted as rejected.
  std::map<std::string, std::string> skip;
};

// The strategies TuneOptions::strategy may name, in the order `--help` lists them.
std::vector<std::string> TuneStrategies();

struct TuneOutcome {
  Trial best;     // timings pooled over the finals' rounds
  Trial initial;  // the kernel's analytic starting config, in the same finals
  // Configs in the space that satisfy every constraint; 0 when the budget ran out before the
  // space was walked (a space of a million points takes a second or more).
  int configs_valid = 0;
  int configs_candidates = 0;  // exhaustive: the nearest of them to the initial config, in
                               // order; descent and model: the configs they reached
  int configs_tried = 0;       // validated and timed (or rejected)
  int configs_rejected = 0;    // produced a wrong result
  int configs_pruned = 0;      // model: never timed, the model proved them slower than the best
  bool budget_exhausted = false;
  std::vector<std::string> rejected;  // "config: why", for the report

  // The valid configs' count, or "?" while the space is not yet walked (or never was).
  std::string ValidText() const;
};

// The order the exhaustive strategy visits configs: the initial config first, then by distance
// from it (fewest parameters changed, then smallest change in log scale), so that a search cut
// short by its budget has covered the neighbourhood of the analytic config rather than an
// arbitrary corner of the space. Only the `limit` nearest valid configs are kept (spaces of
// hundreds of thousands of points would not fit a budget anyway); `valid` receives the count of
// all of them. A walk `interrupted` (ParamSpace::ForEachValid) returns the nearest of the
// configs it reached, and `valid` receives 0: not counted.
std::vector<Config> NearestConfigs(const ParamSpace& space, const Config& origin, size_t limit,
                                   uint64_t* valid = nullptr,
                                   const std::function<bool()>& interrupted = {});

// What the model says one config of the workload costs, in seconds; 0 where it prices nothing.
using ModelledSeconds = std::function<double(const Config&)>;

// Modelled times within this fraction of each other rank as equal: the model cannot tell them
// apart, and among them the config nearer the initial one goes first.
inline constexpr double kModelTie = 0.01;

// The order the model strategy visits configs: the `limit` valid configs nearest `origin`
// (NearestConfigs; `valid` and `interrupted` as there), ranked by modelled time in steps of
// kModelTie, and within a step in NearestConfigs' order. The nearest, not the whole space: a
// traffic model priced on every point of a space of half a million takes seconds, more than a
// short budget has. A model that prices nothing (0 everywhere) leaves NearestConfigs' order.
std::vector<Config> ModelRankedConfigs(const ParamSpace& space, const Config& origin, size_t limit,
                                       const ModelledSeconds& modelled, uint64_t* valid = nullptr,
                                       const std::function<bool()>& interrupted = {});

// The model's observed error, and the pruning rule it gives. Efficiency = modelled / measured
// time of each config timed so far. A config not yet timed is taken to be at most `margin` more
// efficient than the most efficient one seen, where margin is the spread seen (the highest
// efficiency over the median, minus 1) and never less than kMinPruneMargin: so it cannot run
// faster than modelled / (highest x (1 + margin)), and is proven slower than the best measured
// when even that is slower.
class ModelFit {
 public:
  static constexpr double kMinPruneMargin = 0.1;

  void Add(double modelled_seconds, double measured_seconds);
  double Margin() const;
  // Whether a config modelled at `modelled_seconds` cannot beat `best_seconds`; false while
  // nothing is fitted or the model prices nothing.
  bool ProvesSlower(double modelled_seconds, double best_seconds) const;

 private:
  std::vector<double> efficiencies_;
};

// The configs one step from `origin` in one parameter's domain (the value before or after it),
// valid ones only: the moves the descent strategy weighs each round.
std::vector<Config> Neighbours(const ParamSpace& space, const Config& origin);

// Times every config cold, its operands evicted from the caches before each repetition, with one
// timing's wall time bounded by `seconds_per_timing`. For GEMV, whose figure is about streaming W
// from DRAM: tuned warm, a cache holding part of W picks configs for a case decode never sees.
void TimeCold(double seconds_per_timing, TuneOptions& options);
// TimeCold with one timing's wall time held to a tenth of the budget (and the timing's own limit):
// a cold timing is slower by its evictions, and the search must still try several configs.
void TimeColdWithinBudget(TuneOptions& options);

// --threads auto: the thread counts a tune tries on `cpus` CPUs (1, 2, 4, ... and `cpus`).
std::vector<int> AutoThreadCounts(int cpus);

// Each thread count's tuned config, re-timed for the choice.
struct ThreadTiming {
  int threads = 1;
  Config config;
  SampleStats seconds;  // pooled over the rounds
};
struct ThreadChoice {
  int threads = 1;
  // Counts within this fraction of the fastest count's median are as fast: the fastest's
  // coefficient of variation, held between kMinThreadTolerance and kMaxThreadTolerance.
  double tolerance = 0;
  std::vector<ThreadTiming> timed;  // in the order given
  static constexpr double kMinThreadTolerance = 0.03, kMaxThreadTolerance = 0.10;
};

// The fewest threads as fast as the fastest count within the tolerance: a core that does not
// make the call faster is better left to the rest of the program (a GEMV at DRAM bandwidth is as
// fast on one core as on two where one core saturates the memory). `timed` must not be empty.
ThreadChoice FewestThreadsAsFast(std::vector<ThreadTiming> timed);

// Times each count's config (validated by its tune) in `rounds` interleaved rounds, the order
// rotated each round so a slow phase of the machine falls on every count alike, each on an
// executor of its own thread count, then chooses with FewestThreadsAsFast.
absl::StatusOr<ThreadChoice> ChooseThreads(const Kernel& kernel, Problem& problem,
                                           const std::vector<std::pair<int, Config>>& tuned,
                                           const TimingOptions& timing, int rounds);

absl::StatusOr<TuneOutcome> Tune(const Kernel& kernel, const MachineProfile& profile,
                                 Problem& problem, const ReferenceOutput& reference,
                                 Executor& executor, const TuneOptions& options);

}  // namespace rooftune
