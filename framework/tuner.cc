#include "framework/tuner.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <memory>
#include <tuple>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "framework/roofline.h"

namespace rooftune {

std::vector<Config> NearestConfigs(const ParamSpace& space, const Config& origin, size_t limit,
                                   uint64_t* valid, const std::function<bool()>& interrupted) {
  // (parameters changed, summed |log ratio|), then the enumeration order, so ties stay stable.
  using Key = std::tuple<int, double, uint64_t>;
  auto distance = [&](const Config& c, uint64_t sequence) {
    int changed = 0;
    double log_change = 0;
    for (const auto& [name, value] : c.values()) {
      const int64_t base = origin.Get(name);
      if (value == base) continue;
      ++changed;
      log_change +=
          (value > 0 && base > 0) ? std::abs(std::log(double(value) / double(base))) : 1.0;
    }
    return Key(changed, log_change, sequence);
  };
  // A max-heap of the nearest `limit` seen so far.
  std::vector<std::pair<Key, Config>> nearest;
  auto farther = [](const auto& a, const auto& b) { return a.first < b.first; };
  uint64_t count = 0;
  const bool counted = space.ForEachValid(
      [&](const Config& c) {
        const Key key = distance(c, count++);
        if (nearest.size() < limit) {
          nearest.emplace_back(key, c);
          std::push_heap(nearest.begin(), nearest.end(), farther);
        } else if (limit > 0 && key < nearest.front().first) {
          std::pop_heap(nearest.begin(), nearest.end(), farther);
          nearest.back() = {key, c};
          std::push_heap(nearest.begin(), nearest.end(), farther);
        }
        return true;
      },
      interrupted);
  if (valid != nullptr) *valid = counted ? count : 0;
  std::sort_heap(nearest.begin(), nearest.end(), farther);
  std::vector<Config> ordered;
  ordered.reserve(nearest.size());
  for (auto& [key, config] : nearest) ordered.push_back(std::move(config));
  return ordered;
}

std::vector<Config> ModelRankedConfigs(const ParamSpace& space, const Config& origin, size_t limit,
                                       const ModelledSeconds& modelled, uint64_t* valid,
                                       const std::function<bool()>& interrupted) {
  std::vector<std::pair<int64_t, Config>> ranked;
  for (Config& c : NearestConfigs(space, origin, limit, valid, interrupted)) {
    const double seconds = modelled(c);
    const int64_t step = seconds > 0 ? std::llround(std::log(seconds) / std::log1p(kModelTie)) : 0;
    ranked.emplace_back(step, std::move(c));
  }
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<Config> ordered;
  ordered.reserve(ranked.size());
  for (auto& [step, config] : ranked) ordered.push_back(std::move(config));
  return ordered;
}

std::vector<Config> Neighbours(const ParamSpace& space, const Config& origin) {
  std::vector<Config> out;
  for (const Param& p : space.params()) {
    if (!p.UsedIn(origin)) continue;  // it holds its unused value; stepping it changes nothing
    const size_t at =
        std::find(p.domain.begin(), p.domain.end(), origin.Get(p.name)) - p.domain.begin();
    for (size_t step : {at - 1, at + 1}) {  // at - 1 wraps to a huge index from the first value
      if (at >= p.domain.size() || step >= p.domain.size()) continue;
      Config next = origin;
      next.Set(p.name, p.domain[step]);
      // A choice that changes which parameters are read puts the unread ones at rest.
      next = space.WithUnusedAtRest(std::move(next));
      if (space.Validate(next).ok()) out.push_back(std::move(next));
    }
  }
  return out;
}

void ModelFit::Add(double modelled_seconds, double measured_seconds) {
  if (modelled_seconds > 0 && measured_seconds > 0) {
    efficiencies_.push_back(modelled_seconds / measured_seconds);
  }
}

double ModelFit::Margin() const {
  if (efficiencies_.empty()) return kMinPruneMargin;
  std::vector<double> sorted = efficiencies_;
  std::sort(sorted.begin(), sorted.end());
  const double median = sorted[sorted.size() / 2];
  return std::max(kMinPruneMargin, sorted.back() / median - 1);
}

bool ModelFit::ProvesSlower(double modelled_seconds, double best_seconds) const {
  if (efficiencies_.empty() || modelled_seconds <= 0) return false;
  const double highest = *std::max_element(efficiencies_.begin(), efficiencies_.end());
  return modelled_seconds / (highest * (1 + Margin())) > best_seconds;
}

void TimeCold(double seconds_per_timing, TuneOptions& options) {
  options.timing.cache = CacheMode::kCold;
  options.timing.max_seconds = seconds_per_timing;
}

void TimeColdWithinBudget(TuneOptions& options) {
  TimeCold(std::min(options.timing.max_seconds, options.budget_seconds / 10), options);
}

std::string TuneOutcome::ValidText() const {
  return configs_valid > 0 ? absl::StrCat(configs_valid) : "?";
}

namespace {

// The candidates of the search were timed once each, and on a shared machine a timing can fall in
// a fast phase of a few seconds and crown a config on luck. The finals re-time the fastest few
// and the initial config round-robin (TimeRoundRobin), at least two rounds and more while the
// budget lasts; each finalist's trial gets its samples pooled over the rounds.
absl::Status RunFinals(const Kernel& kernel, Problem& problem, Executor& executor,
                       const TuneOptions& options, const std::function<double()>& elapsed,
                       std::vector<Trial>& finalists) {
  std::vector<RoundRobinEntrant> entrants;
  for (const Trial& f : finalists) entrants.push_back({f.config, &executor});
  absl::StatusOr<std::vector<TimedCalls>> calls =
      TimeRoundRobin(kernel, problem, entrants, options.timing, std::max(2, options.final_rounds),
                     [&] { return elapsed() <= options.budget_seconds; });
  if (!calls.ok()) return calls.status();
  for (size_t i = 0; i < finalists.size(); ++i) {
    Trial& f = finalists[i];
    f.seconds = Summarize((*calls)[i].seconds);
    f.cpu_seconds = Summarize((*calls)[i].cpu_seconds);
    f.noisy = f.seconds.cv > options.timing.noisy_cv;
  }
  return absl::OkStatus();
}

// What a search has found so far, shared by the strategies and the finals: every candidate goes
// through Try, which validates and times it, counts it and keeps the fastest correct one.
class Search {
 public:
  Search(const Kernel& kernel, const MachineProfile& profile, Problem& problem,
         const ReferenceOutput& reference, Executor& executor, const TuneOptions& options,
         const Config& initial)
      : kernel_(kernel),
        profile_(profile),
        ceilings_(SelectCeilings(profile, problem.workload.dtype, executor.threads())),
        problem_(problem),
        reference_(reference),
        executor_(executor),
        options_(options),
        initial_(initial),
        search_seconds_(options.budget_seconds * (1 - options.finals_share)) {
    // The initial config is the first candidate: its search trial (or why it was refused) lands
    // here.
    outcome_.initial.kernel = kernel.name;
    outcome_.initial.workload = problem.workload;
    outcome_.initial.config = initial;
    outcome_.initial.config_source = "initial";
  }

  const Kernel& kernel() const { return kernel_; }
  const ParamSpace& params() const { return kernel_.params; }
  const TuneOptions& options() const { return options_; }
  const Config& initial() const { return initial_; }
  const Trial* best() const { return best_; }
  const std::deque<Trial>& timed() const { return timed_; }
  TuneOutcome& outcome() { return outcome_; }
  double SearchSeconds() const { return search_seconds_; }
  double Elapsed() const { return options_.timing.clock->Seconds() - start_; }

  // The roofline bound of the config's traffic at the profile's ceilings, on the tune's threads,
  // priced warm or cold as the candidates are timed: the model strategy's estimate.
  double Modelled(const Config& config) const {
    const Workload& w = problem_.workload;
    const Traffic traffic = kernel_.TrafficFor(w, config, executor_.threads(), profile_);
    return BoundOf(profile_, ceilings_, w, traffic, options_.timing.cache == CacheMode::kWarm)
        .seconds;
  }

  // Whether the search's time is spent, recorded in the outcome: its share of the budget once a
  // config is correct (the finals take the rest), else the whole budget, so that a kernel whose
  // every config is wrong ends too.
  bool OutOfTime() {
    const double limit = best_ != nullptr ? search_seconds_ : options_.budget_seconds;
    if (Elapsed() > limit) outcome_.budget_exhausted = true;
    return outcome_.budget_exhausted;
  }

  void Report(const std::string& line) {
    if (options_.progress) options_.progress(line);
    last_report_ = Elapsed();
  }

  // One candidate: validated, then timed. A refused or wrong config is counted, and never best.
  absl::Status Try(const Config& config) {
    if (auto skipped = options_.skip.find(params().Format(config));
        skipped != options_.skip.end()) {
      ++outcome_.configs_tried;
      Reject(config, absl::StrCat("failed in an earlier tune (", skipped->second,
                                  "); not tried again without --retry-failed"));
      return absl::OkStatus();
    }
    absl::StatusOr<Trial> trial =
        options_.evaluate
            ? options_.evaluate(config, options_.timing)
            : RunTrial(kernel_, config, problem_, reference_, executor_, options_.timing);
    if (!trial.ok() && absl::IsFailedPrecondition(trial.status())) {
      // The kernel refused this config for these inputs (an int8 path that would not be exact,
      // say): a rejection, not a failure of the run.
      if (config == initial_) {
        outcome_.initial.validation.first_mismatch = std::string(trial.status().message());
      }
      ++outcome_.configs_tried;
      Reject(config, trial.status().message());
      return absl::OkStatus();
    }
    if (!trial.ok()) return trial.status();
    ++outcome_.configs_tried;
    if (config == initial_) {
      outcome_.initial = *trial;
      outcome_.initial.config_source = "initial";
    }
    if (!trial->validation.ok) {
      Reject(config, trial->validation.Summary());
      return absl::OkStatus();
    }
    timed_.push_back(*std::move(trial));
    if (best_ == nullptr || timed_.back().seconds.median < best_->seconds.median) {
      best_ = &timed_.back();
      if (options_.on_best) options_.on_best(*best_, outcome_.configs_tried, Elapsed());
      // The initial config may be tried before the valid configs are counted.
      Report(absl::StrFormat("  [%d/%s] best so far %s: %.3g ms", outcome_.configs_tried,
                             outcome_.ValidText(), ConfigText(params(), config),
                             best_->seconds.median * 1e3));
    } else if (Elapsed() - last_report_ >= options_.heartbeat_seconds) {
      Report(
          absl::StrFormat("  [%d/%s] %.0f of %.0f s searched, %d rejected; best still %s: %.3g ms",
                          outcome_.configs_tried, outcome_.ValidText(), Elapsed(), search_seconds_,
                          outcome_.configs_rejected, ConfigText(params(), best_->config),
                          best_->seconds.median * 1e3));
    }
    return absl::OkStatus();
  }

  // Whether the walk of a large space (a second or more) should stop: the budget is spent.
  std::function<bool()> Interrupted() {
    return [this] { return OutOfTime(); };
  }

 private:
  void Reject(const Config& config, absl::string_view why) {
    ++outcome_.configs_rejected;
    const std::string line = absl::StrCat(ConfigText(params(), config), ": ", why);
    outcome_.rejected.push_back(line);
    Report("  rejected " + line);
  }

  const Kernel& kernel_;
  const MachineProfile& profile_;
  const CeilingSet ceilings_;
  Problem& problem_;
  const ReferenceOutput& reference_;
  Executor& executor_;
  const TuneOptions& options_;
  const Config initial_;
  const double search_seconds_;
  const double start_ = options_.timing.clock->Seconds();
  TuneOutcome outcome_;
  std::deque<Trial> timed_;  // a deque: best_ points into it while it grows
  const Trial* best_ = nullptr;
  double last_report_ = 0;  // Elapsed() when the search last printed a line
};

constexpr size_t kMaxCandidates = 20000;
// Spaces whose cross product passes this take a second or more to order.
constexpr uint64_t kLargeSpacePoints = 1000000;

// The valid configs nearest the initial one first, the stored one second, until the budget ends.
absl::Status SearchNearestFirst(Search& search, const std::optional<Config>& stored) {
  // In a space of millions of points, the initial config before the space is ordered (which
  // then takes a second or more): a budget shorter than that still ends with a timed config.
  const bool large = search.params().CrossProductSize() > kLargeSpacePoints;
  if (large) {
    if (absl::Status s = search.Try(search.initial()); !s.ok()) return s;
  }
  uint64_t valid = 0;
  std::vector<Config> candidates = NearestConfigs(search.params(), search.initial(), kMaxCandidates,
                                                  &valid, search.Interrupted());
  if (large) {
    candidates.erase(std::remove(candidates.begin(), candidates.end(), search.initial()),
                     candidates.end());
  }
  if (stored) {
    candidates.erase(std::remove(candidates.begin(), candidates.end(), *stored), candidates.end());
    candidates.insert(candidates.begin() + (large ? 0 : std::min<size_t>(1, candidates.size())),
                      *stored);
  }
  search.outcome().configs_valid = int(valid);
  search.outcome().configs_candidates = int(candidates.size()) + (large ? 1 : 0);
  for (const Config& config : candidates) {
    if (search.OutOfTime()) break;
    if (absl::Status s = search.Try(config); !s.ok()) return s;
  }
  return absl::OkStatus();
}

// From the best measured config (else the initial one) to its fastest neighbour, round after
// round, until none is faster or the budget is spent. `visit` validates and times a config it
// has not seen.
absl::Status Descend(Search& search, const std::function<absl::Status(const Config&)>& visit) {
  Config from = search.best() != nullptr ? search.best()->config : search.initial();
  while (!search.OutOfTime()) {
    for (const Config& next : Neighbours(search.params(), from)) {
      if (search.OutOfTime()) break;
      if (absl::Status s = visit(next); !s.ok()) return s;
    }
    const Trial* best = search.best();
    if (best == nullptr || best->config == from) break;  // nothing correct near, or an optimum
    from = best->config;
  }
  return absl::OkStatus();
}

// From the initial config (or the stored one, when faster) to the fastest neighbour each round,
// until no neighbour is faster or the budget is spent; what is left of it goes to the configs
// nearest that local optimum.
absl::Status SearchByDescent(Search& search, const std::optional<Config>& stored) {
  std::vector<Config> seen;
  auto visit = [&](const Config& config) -> absl::Status {
    if (std::find(seen.begin(), seen.end(), config) != seen.end()) return absl::OkStatus();
    seen.push_back(config);
    return search.Try(config);
  };
  if (absl::Status s = visit(search.initial()); !s.ok()) return s;
  if (stored) {
    if (absl::Status s = visit(*stored); !s.ok()) return s;
  }
  if (absl::Status s = Descend(search, visit); !s.ok()) return s;
  // The walk to the nearest configs counts the space too, unless the budget ends it first.
  if (search.best() != nullptr && !search.OutOfTime()) {
    uint64_t valid = 0;
    const std::vector<Config> nearest = NearestConfigs(
        search.params(), search.best()->config, kMaxCandidates, &valid, search.Interrupted());
    search.outcome().configs_valid = int(valid);
    for (const Config& config : nearest) {
      if (search.OutOfTime()) break;
      if (absl::Status s = visit(config); !s.ok()) return s;
    }
  }
  search.outcome().configs_candidates = int(seen.size());
  return absl::OkStatus();
}

// The configs the model ranks fastest first, each pruned once the model proves it slower than the
// best measured; from half-way through the search, descent from the best measured; then the rest
// of the ranking. Where the model prices nothing the ranking is NearestConfigs' order and
// nothing is pruned.
absl::Status SearchByModel(Search& search, const std::optional<Config>& stored) {
  ModelFit fit;
  absl::flat_hash_set<std::string> seen;  // timed, rejected or pruned
  auto visit = [&](const Config& config) -> absl::Status {
    if (!seen.insert(config.ToString()).second) return absl::OkStatus();
    const double modelled = search.Modelled(config);
    if (search.best() != nullptr && fit.ProvesSlower(modelled, search.best()->seconds.median)) {
      ++search.outcome().configs_pruned;
      return absl::OkStatus();
    }
    const size_t timed = search.timed().size();
    if (absl::Status s = search.Try(config); !s.ok()) return s;
    if (search.timed().size() > timed) fit.Add(modelled, search.timed().back().seconds.median);
    return absl::OkStatus();
  };
  // The initial and stored configs first; in a space of millions of points before the ranking
  // (which then takes a second or more), so that a short budget still ends with a timed config.
  auto visit_initial_and_stored = [&]() -> absl::Status {
    if (absl::Status s = visit(search.initial()); !s.ok()) return s;
    return stored ? visit(*stored) : absl::OkStatus();
  };
  const bool large = search.params().CrossProductSize() > kLargeSpacePoints;
  if (large) {
    if (absl::Status s = visit_initial_and_stored(); !s.ok()) return s;
  }
  uint64_t valid = 0;
  const std::vector<Config> ranked = ModelRankedConfigs(
      search.params(), search.initial(), kMaxCandidates,
      [&](const Config& c) { return search.Modelled(c); }, &valid, search.Interrupted());
  search.outcome().configs_valid = int(valid);
  const double initial_bound = search.Modelled(search.initial());
  if (ranked.size() > 1) {
    search.Report(initial_bound > 0
                      ? absl::StrFormat("  model: %d configs ranked by modelled time (the "
                                        "initial config's bound: %.3g ms)",
                                        ranked.size(), initial_bound * 1e3)
                      : std::string("  model: no ceiling prices this workload; the configs "
                                    "nearest the initial one first"));
  }
  if (!large) {
    if (absl::Status s = visit_initial_and_stored(); !s.ok()) return s;
  }
  // The ranking, until the model proves a config slower (then every later one is too) or half
  // the search is spent.
  size_t next = 0;
  while (next < ranked.size() && !search.OutOfTime() &&
         search.Elapsed() <= search.SearchSeconds() / 2) {
    const int pruned = search.outcome().configs_pruned;
    if (absl::Status s = visit(ranked[next++]); !s.ok()) return s;
    if (search.outcome().configs_pruned > pruned) break;
  }
  // Descent from the best measured: the model's ranking cannot see what it does not price.
  if (absl::Status s = Descend(search, visit); !s.ok()) return s;
  for (; next < ranked.size() && !search.OutOfTime(); ++next) {
    if (absl::Status s = visit(ranked[next]); !s.ok()) return s;
  }
  search.outcome().configs_candidates = int(seen.size());
  if (search.outcome().configs_pruned > 0) {
    search.Report(absl::StrFormat(
        "  model: %d configs pruned, proven slower than the best measured (the model's error "
        "allowed: %.0f%%)",
        search.outcome().configs_pruned, fit.Margin() * 100));
  }
  return absl::OkStatus();
}

using Strategy = absl::Status (*)(Search&, const std::optional<Config>& stored);

struct NamedStrategy {
  const char* name;
  Strategy search;
};
constexpr NamedStrategy kStrategies[] = {
    {"model", &SearchByModel}, {"exhaustive", &SearchNearestFirst}, {"descent", &SearchByDescent}};

// The finals' entrants: the initial config (when it was correct), the stored one, and the fastest
// others up to options.finalists.
std::vector<Trial> ChooseFinalists(Search& search, const Trial* stored) {
  std::vector<const Trial*> ranked;
  for (const Trial& t : search.timed()) ranked.push_back(&t);
  std::stable_sort(ranked.begin(), ranked.end(), [](const Trial* a, const Trial* b) {
    return a->seconds.median < b->seconds.median;
  });
  std::vector<Trial> finalists;
  const bool initial_ok = search.outcome().initial.validation.ok;
  if (initial_ok) finalists.push_back(search.outcome().initial);
  if (stored != nullptr) finalists.push_back(*stored);
  const int guaranteed = int(finalists.size());
  for (const Trial* t : ranked) {
    if (int(finalists.size()) >= search.options().finalists + guaranteed) break;
    if ((initial_ok && t->config == search.initial()) || t == stored) continue;
    finalists.push_back(*t);
  }
  if (finalists.size() > 1) {
    search.Report(absl::StrFormat(
        "  finals: %d configs re-timed round-robin (%s%s)", finalists.size(),
        initial_ok ? "the initial config, " : "the initial config was rejected; ",
        stored != nullptr ? "the stored one and the fastest others" : "the fastest others"));
  }
  return finalists;
}

}  // namespace

std::vector<std::string> TuneStrategies() {
  std::vector<std::string> names;
  for (const NamedStrategy& s : kStrategies) names.emplace_back(s.name);
  return names;
}

std::vector<int> AutoThreadCounts(int cpus) {
  std::vector<int> counts;
  for (int t = 1; t < cpus; t *= 2) counts.push_back(t);
  counts.push_back(std::max(1, cpus));
  return counts;
}

ThreadChoice FewestThreadsAsFast(std::vector<ThreadTiming> timed) {
  ThreadChoice choice;
  const ThreadTiming* fastest = &timed.front();
  for (const ThreadTiming& t : timed) {
    if (t.seconds.median < fastest->seconds.median) fastest = &t;
  }
  choice.tolerance = std::clamp(fastest->seconds.cv, ThreadChoice::kMinThreadTolerance,
                                ThreadChoice::kMaxThreadTolerance);
  choice.threads = fastest->threads;
  for (const ThreadTiming& t : timed) {
    if (t.threads < choice.threads &&
        t.seconds.median <= fastest->seconds.median * (1 + choice.tolerance)) {
      choice.threads = t.threads;
    }
  }
  choice.timed = std::move(timed);
  return choice;
}

absl::StatusOr<ThreadChoice> ChooseThreads(const Kernel& kernel, Problem& problem,
                                           const std::vector<std::pair<int, Config>>& tuned,
                                           const TimingOptions& timing, int rounds) {
  if (tuned.empty()) return absl::InvalidArgumentError("no thread count to choose from");
  std::vector<std::unique_ptr<Executor>> executors;
  std::vector<RoundRobinEntrant> entrants;
  for (const auto& [threads, config] : tuned) {
    executors.push_back(std::make_unique<Executor>(threads));
    entrants.push_back({config, executors.back().get()});
  }
  absl::StatusOr<std::vector<TimedCalls>> calls =
      TimeRoundRobin(kernel, problem, entrants, timing, rounds);
  if (!calls.ok()) return calls.status();
  std::vector<ThreadTiming> timed;
  for (size_t i = 0; i < tuned.size(); ++i) {
    timed.push_back({tuned[i].first, tuned[i].second, Summarize((*calls)[i].seconds)});
  }
  return FewestThreadsAsFast(std::move(timed));
}

absl::StatusOr<TuneOutcome> Tune(const Kernel& kernel, const MachineProfile& profile,
                                 Problem& problem, const ReferenceOutput& reference,
                                 Executor& executor, const TuneOptions& options) {
  const NamedStrategy* strategy = nullptr;
  for (const NamedStrategy& s : kStrategies) {
    if (options.strategy == s.name) strategy = &s;
  }
  if (strategy == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("unknown strategy '", options.strategy, "' (",
                                                   absl::StrJoin(TuneStrategies(), " or "), ")"));
  }
  const Config initial =
      kernel.InitialConfig(problem.workload, executor.threads(), options.timing.cache, profile);
  if (absl::Status s = kernel.params.Validate(initial); !s.ok()) {
    return absl::InternalError(
        absl::StrCat("kernel ", kernel.name, " proposed an invalid initial config: ", s.message()));
  }
  std::optional<Config> stored;
  if (options.stored && *options.stored != initial &&
      kernel.params.Validate(*options.stored).ok()) {
    stored = options.stored;
  }
  Search search(kernel, profile, problem, reference, executor, options, initial);
  if (absl::Status s = strategy->search(search, stored); !s.ok()) return s;
  if (search.best() == nullptr) {
    return absl::InternalError(absl::StrCat(
        "no config of ", kernel.name, " produced a correct ", problem.workload.Key(), " (",
        search.outcome().configs_rejected, " rejected",
        search.outcome().budget_exhausted
            ? absl::StrFormat(" before the %g s budget ran out", options.budget_seconds)
            : "",
        ")"));
  }
  const Trial* stored_trial = nullptr;
  for (const Trial& t : search.timed()) {
    if (stored && t.config == *stored) stored_trial = &t;
  }
  std::vector<Trial> finalists = ChooseFinalists(search, stored_trial);
  if (absl::Status s = RunFinals(
          kernel, problem, executor, options, [&] { return search.Elapsed(); }, finalists);
      !s.ok()) {
    return s;
  }
  const Trial* winner = &finalists.front();
  for (const Trial& f : finalists) {
    if (f.seconds.median < winner->seconds.median) winner = &f;
  }
  const Trial& best = *search.best();
  if (winner->config != best.config) {
    search.Report(absl::StrFormat("  finals: %s beat the search's fastest, %s",
                                  ConfigText(kernel.params, winner->config),
                                  ConfigText(kernel.params, best.config)));
  }
  TuneOutcome outcome = search.outcome();
  outcome.best = *winner;
  outcome.best.config_source = "tuned";
  if (outcome.initial.validation.ok) outcome.initial = finalists.front();
  return outcome;
}

}  // namespace rooftune
