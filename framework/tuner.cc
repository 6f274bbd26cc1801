#include "framework/tuner.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace rooftune {

std::vector<Config> NearestConfigs(const ParamSpace& space, const Config& origin, size_t limit,
                                   uint64_t* valid) {
  // (parameters changed, summed |log ratio|), then the enumeration order, so ties stay stable.
  using Key = std::tuple<int, double, uint64_t>;
  auto distance = [&](const Config& c, uint64_t sequence) {
    int changed = 0;
    double log_change = 0;
    for (const auto& [name, value] : c.values()) {
      const int64_t base = origin.Get(name);
      if (value == base) continue;
      ++changed;
      log_change += (value > 0 && base > 0) ? std::abs(std::log(double(value) / double(base))) : 1.0;
    }
    return Key(changed, log_change, sequence);
  };
  // A max-heap of the nearest `limit` seen so far.
  std::vector<std::pair<Key, Config>> nearest;
  auto farther = [](const auto& a, const auto& b) { return a.first < b.first; };
  uint64_t count = 0;
  space.ForEachValid([&](const Config& c) {
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
  });
  if (valid != nullptr) *valid = count;
  std::sort_heap(nearest.begin(), nearest.end(), farther);
  std::vector<Config> ordered;
  ordered.reserve(nearest.size());
  for (auto& [key, config] : nearest) ordered.push_back(std::move(config));
  return ordered;
}

std::vector<Config> Neighbours(const ParamSpace& space, const Config& origin) {
  std::vector<Config> out;
  for (const Param& p : space.params()) {
    if (!p.UsedIn(origin)) continue;  // it holds its unused value; stepping it changes nothing
    const size_t at = std::find(p.domain.begin(), p.domain.end(), origin.Get(p.name)) -
                      p.domain.begin();
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

void TimeCold(double seconds_per_timing, TuneOptions& options) {
  options.timing.cache = CacheMode::kCold;
  options.timing.max_seconds = seconds_per_timing;
}

namespace {

// A finalist: its search trial, what Prepare made for it, and its samples from every round.
struct Finalist {
  Trial trial;
  Prepared prepared;
  TimedCalls calls;
};

// The candidates of the search were timed once each, and on a shared machine a timing can fall in
// a fast phase of a few seconds and crown a config on luck. The finals re-time the fastest few
// and the initial config round-robin, the order rotated each round, so that every phase falls on
// all of them alike; each finalist's samples are pooled over the rounds.
absl::Status RunFinals(const Kernel& kernel, Problem& problem, Executor& executor,
                       const TuneOptions& options, const std::function<double()>& elapsed,
                       std::vector<Finalist>& finalists) {
  for (Finalist& f : finalists) {
    absl::StatusOr<Prepared> prepared = Prepare(kernel, f.trial.config, problem);
    if (!prepared.ok()) return prepared.status();
    f.prepared = *std::move(prepared);
  }
  const size_t n = finalists.size();
  for (int round = 0; round < std::max(2, options.final_rounds); ++round) {
    if (round >= 2 && elapsed() > options.budget_seconds) break;
    for (size_t i = 0; i < n; ++i) {
      Finalist& f = finalists[(i + size_t(round)) % n];
      absl::StatusOr<TimedCalls> calls =
          TimeSamples(kernel, f.trial.config, problem, executor, f.prepared, options.timing);
      if (!calls.ok()) return calls.status();
      f.calls.Append(*calls);
    }
  }
  for (Finalist& f : finalists) {
    f.trial.seconds = Summarize(f.calls.seconds);
    f.trial.cpu_seconds = Summarize(f.calls.cpu_seconds);
    f.trial.noisy = f.trial.seconds.cv > options.timing.noisy_cv;
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<TuneOutcome> Tune(const Kernel& kernel, const MachineProfile& profile,
                                 Problem& problem, const ReferenceOutput& reference,
                                 Executor& executor, const TuneOptions& options) {
  const bool descent = options.strategy == "descent";
  if (!descent && options.strategy != "exhaustive") {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown strategy '", options.strategy, "' (exhaustive or descent)"));
  }
  using Clock = std::chrono::steady_clock;
  const Clock::time_point start = Clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };

  const Workload& workload = problem.workload;
  const Config initial = kernel.InitialConfig(workload, executor.threads(), profile);
  if (absl::Status s = kernel.params.Validate(initial); !s.ok()) {
    return absl::InternalError(absl::StrCat("kernel ", kernel.name,
                                            " proposed an invalid initial config: ", s.message()));
  }
  const bool has_stored = options.stored.has_value() && *options.stored != initial &&
                          kernel.params.Validate(*options.stored).ok();
  TuneOutcome outcome;
  // The initial config is the first candidate: its search trial (or why it was refused) lands here.
  outcome.initial.kernel = kernel.name;
  outcome.initial.workload = workload;
  outcome.initial.config = initial;
  outcome.initial.config_source = "initial";

  const double search_seconds = options.budget_seconds * (1 - options.finals_share);
  const Trial* best = nullptr;
  double last_report = 0;  // elapsed() when the search last printed a line
  auto report = [&](const std::string& line) {
    if (options.progress) options.progress(line);
    last_report = elapsed();
  };
  std::deque<Trial> timed;  // a deque: `best` points into it while it grows
  // Whether the search's share of the budget is spent (once a config is correct), recorded in
  // the outcome.
  auto out_of_time = [&] {
    if (elapsed() > search_seconds && best != nullptr) outcome.budget_exhausted = true;
    return outcome.budget_exhausted;
  };
  // One candidate: validated, then timed. A refused or wrong config is counted, and never best.
  auto try_config = [&](const Config& config) -> absl::Status {
    absl::StatusOr<Trial> trial =
        RunTrial(kernel, config, problem, reference, executor, options.timing);
    if (!trial.ok() && absl::IsFailedPrecondition(trial.status())) {
      if (config == initial) {
        outcome.initial.validation.first_mismatch = std::string(trial.status().message());
      }
      // The kernel refused this config for these inputs (an int8 path that would not be exact,
      // say): a rejection, not a failure of the run.
      ++outcome.configs_tried;
      ++outcome.configs_rejected;
      outcome.rejected.push_back(absl::StrCat(ConfigText(kernel.params, config), ": ", trial.status().message()));
      report(absl::StrCat("  rejected ", ConfigText(kernel.params, config), ": ", trial.status().message()));
      return absl::OkStatus();
    }
    if (!trial.ok()) return trial.status();
    ++outcome.configs_tried;
    if (config == initial) {
      outcome.initial = *trial;
      outcome.initial.config_source = "initial";
    }
    if (!trial->validation.ok) {
      ++outcome.configs_rejected;
      outcome.rejected.push_back(absl::StrCat(ConfigText(kernel.params, config), ": ", trial->validation.Summary()));
      report(absl::StrCat("  rejected ", ConfigText(kernel.params, config), ": ", trial->validation.Summary()));
      return absl::OkStatus();
    }
    timed.push_back(*std::move(trial));
    if (best == nullptr || timed.back().seconds.median < best->seconds.median) {
      best = &timed.back();
      report(absl::StrFormat("  [%d/%d] best so far %s: %.3g ms", outcome.configs_tried,
                             outcome.configs_valid, ConfigText(kernel.params, config), best->seconds.median * 1e3));
    } else if (elapsed() - last_report >= options.heartbeat_seconds) {
      report(absl::StrFormat("  [%d/%d] %.0f of %.0f s searched, %d rejected; best still %s: %.3g ms",
                             outcome.configs_tried, outcome.configs_valid, elapsed(),
                             search_seconds, outcome.configs_rejected, ConfigText(kernel.params, best->config),
                             best->seconds.median * 1e3));
    }
    return absl::OkStatus();
  };

  constexpr size_t kMaxCandidates = 20000;
  if (descent) {
    outcome.configs_valid = int(kernel.params.CountValid());
    // From the initial config (or the stored one, when faster), to the fastest neighbour each
    // round, until no neighbour is faster or the budget is spent.
    std::vector<Config> seen = {initial};
    if (absl::Status s = try_config(initial); !s.ok()) return s;
    if (has_stored) {
      seen.push_back(*options.stored);
      if (absl::Status s = try_config(*options.stored); !s.ok()) return s;
    }
    Config from = best != nullptr ? best->config : initial;
    while (!out_of_time()) {
      for (const Config& next : Neighbours(kernel.params, from)) {
        if (std::find(seen.begin(), seen.end(), next) != seen.end()) continue;
        if (out_of_time()) break;
        seen.push_back(next);
        if (absl::Status s = try_config(next); !s.ok()) return s;
      }
      if (best == nullptr || best->config == from) break;  // nothing correct near, or a local optimum
      from = best->config;
    }
    // A local optimum reached within the budget: the rest of it goes to the configs nearest it.
    if (best != nullptr) {
      for (const Config& config : NearestConfigs(kernel.params, best->config, kMaxCandidates)) {
        if (out_of_time()) break;
        if (std::find(seen.begin(), seen.end(), config) != seen.end()) continue;
        seen.push_back(config);
        if (absl::Status s = try_config(config); !s.ok()) return s;
      }
    }
    outcome.configs_candidates = int(seen.size());
  } else {
    uint64_t valid = 0;
    std::vector<Config> candidates = NearestConfigs(kernel.params, initial, kMaxCandidates, &valid);
    // The stored config second, wherever its distance would have put it (if at all).
    if (has_stored) {
      candidates.erase(std::remove(candidates.begin(), candidates.end(), *options.stored),
                       candidates.end());
      candidates.insert(candidates.begin() + std::min<size_t>(1, candidates.size()), *options.stored);
    }
    outcome.configs_valid = int(valid);
    outcome.configs_candidates = int(candidates.size());
    for (const Config& config : candidates) {
      if (out_of_time()) break;
      if (absl::Status s = try_config(config); !s.ok()) return s;
    }
  }
  if (best == nullptr) {
    return absl::InternalError(absl::StrCat("no config of ", kernel.name, " produced a correct ",
                                            workload.Key(), " (", outcome.configs_rejected,
                                            " rejected)"));
  }
  // The finals: the initial config (when it was correct) and the fastest other candidates.
  std::vector<const Trial*> ranked;
  for (const Trial& t : timed) ranked.push_back(&t);
  std::stable_sort(ranked.begin(), ranked.end(), [](const Trial* a, const Trial* b) {
    return a->seconds.median < b->seconds.median;
  });
  std::vector<Finalist> finalists;
  const bool initial_ok = outcome.initial.validation.ok;
  if (initial_ok) finalists.push_back({outcome.initial});
  const Trial* stored = nullptr;
  for (const Trial& t : timed) {
    if (has_stored && t.config == *options.stored) stored = &t;
  }
  if (stored != nullptr) finalists.push_back({*stored});
  const int guaranteed = int(finalists.size());
  for (const Trial* t : ranked) {
    if (int(finalists.size()) >= options.finalists + guaranteed) break;
    if ((initial_ok && t->config == initial) || t == stored) continue;
    finalists.push_back({*t});
  }
  if (options.progress && finalists.size() > 1) {
    options.progress(absl::StrFormat(
        "  finals: %d configs re-timed round-robin (%s%s)", finalists.size(),
        initial_ok ? "the initial config, " : "the initial config was rejected; ",
        stored != nullptr ? "the stored one and the fastest others" : "the fastest others"));
  }
  if (absl::Status s = RunFinals(kernel, problem, executor, options, elapsed, finalists); !s.ok()) {
    return s;
  }
  const Finalist* winner = &finalists.front();
  for (const Finalist& f : finalists) {
    if (f.trial.seconds.median < winner->trial.seconds.median) winner = &f;
  }
  if (options.progress && winner->trial.config != best->config) {
    options.progress(absl::StrFormat("  finals: %s beat the search's fastest, %s",
                                     ConfigText(kernel.params, winner->trial.config), ConfigText(kernel.params, best->config)));
  }
  outcome.best = winner->trial;
  outcome.best.config_source = "tuned";
  if (initial_ok) outcome.initial = finalists.front().trial;
  return outcome;
}

}  // namespace rooftune
