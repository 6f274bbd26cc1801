#include "framework/tuner.h"

#include <algorithm>
#include <chrono>
#include <cmath>
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

void TimeCold(const MachineProfile& profile, double candidate_seconds, double final_seconds,
              TuneOptions& options) {
  for (TimingOptions* timing : {&options.candidate_timing, &options.final_timing}) {
    timing->cache = CacheMode::kCold;
    timing->flush_bytes = ColdFlushBytes(profile);
  }
  options.candidate_timing.max_seconds = candidate_seconds;
  options.final_timing.max_seconds = final_seconds;
}

absl::StatusOr<TuneOutcome> Tune(const Kernel& kernel, const MachineProfile& profile,
                                 Problem& problem, const ReferenceOutput& reference,
                                 Executor& executor, const TuneOptions& options) {
  if (options.strategy != "exhaustive") {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown strategy '", options.strategy, "' (exhaustive)"));
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
  constexpr size_t kMaxCandidates = 20000;
  uint64_t valid = 0;
  const std::vector<Config> candidates =
      NearestConfigs(kernel.params, initial, kMaxCandidates, &valid);
  TuneOutcome outcome;
  outcome.configs_valid = int(valid);
  outcome.configs_candidates = int(candidates.size());

  const Trial* best = nullptr;
  std::vector<Trial> timed;
  timed.reserve(candidates.size());
  for (const Config& config : candidates) {
    if (elapsed() > options.budget_seconds && best != nullptr) {
      outcome.budget_exhausted = true;
      break;
    }
    absl::StatusOr<Trial> trial =
        RunTrial(kernel, config, problem, reference, executor, options.candidate_timing);
    if (!trial.ok() && absl::IsFailedPrecondition(trial.status())) {
      // The kernel refused this config for these inputs (an int8 path that would not be exact,
      // say): a rejection, not a failure of the run.
      ++outcome.configs_tried;
      ++outcome.configs_rejected;
      outcome.rejected.push_back(absl::StrCat(config.ToString(), ": ", trial.status().message()));
      if (options.progress) {
        options.progress(absl::StrCat("  rejected ", config.ToString(), ": ", trial.status().message()));
      }
      continue;
    }
    if (!trial.ok()) return trial.status();
    ++outcome.configs_tried;
    if (!trial->validation.ok) {
      ++outcome.configs_rejected;
      outcome.rejected.push_back(absl::StrCat(config.ToString(), ": ", trial->validation.Summary()));
      if (options.progress) {
        options.progress(absl::StrCat("  rejected ", config.ToString(), ": ", trial->validation.Summary()));
      }
      continue;
    }
    timed.push_back(*std::move(trial));
    if (best == nullptr || timed.back().seconds.median < best->seconds.median) {
      best = &timed.back();
      if (options.progress) {
        options.progress(absl::StrFormat("  [%d/%d] best so far %s: %.3g ms", outcome.configs_tried,
                                         outcome.configs_valid, config.ToString(),
                                         best->seconds.median * 1e3));
      }
    }
  }
  if (best == nullptr) {
    return absl::InternalError(absl::StrCat("no config of ", kernel.name, " produced a correct ",
                                            workload.Key(), " (", outcome.configs_rejected,
                                            " rejected)"));
  }
  // Re-time the winner and the initial config back to back with the full timing options, so the
  // stored figure and the "how far was the analytic config" ratio come from the same conditions.
  const Config winner = best->config;
  absl::StatusOr<Trial> final_best =
      RunTrial(kernel, winner, problem, reference, executor, options.final_timing);
  if (!final_best.ok()) return final_best.status();
  absl::StatusOr<Trial> final_initial =
      RunTrial(kernel, initial, problem, reference, executor, options.final_timing);
  if (!final_initial.ok() && !absl::IsFailedPrecondition(final_initial.status())) {
    return final_initial.status();
  }
  outcome.best = *std::move(final_best);
  if (final_initial.ok()) {
    outcome.initial = *std::move(final_initial);
  } else {
    outcome.initial.kernel = kernel.name;
    outcome.initial.workload = workload;
    outcome.initial.config = initial;
    outcome.initial.validation.first_mismatch = std::string(final_initial.status().message());
  }
  outcome.best.config_source = "tuned";
  outcome.initial.config_source = "initial";
  // The initial config can win the re-timing by noise; the stored best is the faster of the two.
  if (outcome.initial.validation.ok &&
      outcome.initial.seconds.median < outcome.best.seconds.median) {
    outcome.best = outcome.initial;
    outcome.best.config_source = "tuned";
  }
  return outcome;
}

}  // namespace rooftune
