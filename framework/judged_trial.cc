#include "framework/judged_trial.h"

#include <string>

namespace rooftune {

Verdict JudgeTrial(const MachineProfile& profile, const Kernel& kernel, const Trial& trial,
                   const std::optional<PairedAttainment>& paired) {
  const Workload& w = trial.workload;
  return Judge(profile, SelectCeilings(profile, w.dtype, trial.threads), w, trial.threads,
               kernel.TrafficFor(w, trial.config, trial.threads, profile), trial.seconds.median,
               trial.seconds.cv, {.warm = trial.cache == CacheMode::kWarm, .paired = paired});
}

std::optional<PairedAttainment> PairedOf(const TunedResult& row) {
  if (row.paired_pairs <= 0) return std::nullopt;
  return PairedAttainment{row.paired_attainment, row.paired_low, row.paired_high, row.paired_pairs,
                          row.paired_ceiling};
}

void SetVerdict(const Verdict& verdict, TunedResult& row) {
  row.attainment = verdict.attainment;
  row.profile_attainment = verdict.profile_attainment;
  row.verdict = verdict.verdict;
  row.binding = verdict.binding;
  row.tolerance = verdict.tolerance;
  // A verdict that did not use the row's pairing (its ceiling no longer binds) leaves none.
  const PairedAttainment none;
  const PairedAttainment& paired = verdict.paired ? *verdict.paired : none;
  row.paired_attainment = paired.median;
  row.paired_low = paired.low;
  row.paired_high = paired.high;
  row.paired_pairs = paired.pairs;
  row.paired_ceiling = paired.ceiling;
}

TunedResult TunedResultOf(const MachineProfile& profile, const Kernel& kernel,
                          const TuneOutcome& outcome, const Verdict& verdict) {
  const Trial& best = outcome.best;
  TunedResult r;
  r.fingerprint = profile.Fingerprint();
  r.kernel = best.kernel;
  r.workload = best.workload.Key();
  r.dtype = best.workload.dtype;
  r.threads = best.threads;
  r.config = kernel.params.Format(best.config);
  r.median_seconds = best.seconds.median;
  r.min_seconds = best.seconds.min;
  r.cv = best.seconds.cv;
  r.ops_per_second = best.OpsPerSecond();
  SetVerdict(verdict, r);
  r.cache = best.cache;
  r.initial_config = kernel.params.Format(outcome.initial.config);
  r.initial_median_seconds = outcome.initial.seconds.median;
  r.configs_tried = outcome.configs_tried;
  nlohmann::json provenance = profile.Provenance();
  provenance["origin"] = "tuned";
  r.provenance = provenance.dump();
  r.config_schema = kernel.config_schema;
  return r;
}

namespace {

// A stored config's text read back for `kernel`, parameters added since completed by
// ParamSpace::ParseStored against the kernel's initial config.
absl::StatusOr<Config> ParseStoredConfig(const MachineProfile& profile, const Kernel& kernel,
                                         const Workload& w, int threads, CacheMode cache,
                                         const std::string& text, bool* completed) {
  return kernel.params.ParseStored(text, kernel.InitialConfig(w, threads, cache, profile),
                                   completed);
}

}  // namespace

absl::StatusOr<Verdict> JudgeAgain(const MachineProfile& profile, const Kernel& kernel,
                                   TunedResult& row) {
  if (kernel.IsStale(row.config_schema)) {
    return absl::FailedPreconditionError(
        absl::StrCat("stale: tuned with ", kernel.name, "'s parameters version ", row.config_schema,
                     ", now version ", kernel.config_schema, "; tune it again"));
  }
  absl::StatusOr<Workload> w = ParseWorkloadKey(row.workload);
  if (!w.ok()) return w.status();
  bool completed = false;
  absl::StatusOr<Config> config =
      ParseStoredConfig(profile, kernel, *w, row.threads, row.cache, row.config, &completed);
  if (!config.ok()) return config.status();
  Trial trial;
  trial.kernel = kernel.name;
  trial.workload = *w;
  trial.config = *config;
  trial.threads = row.threads;
  trial.cache = row.cache;
  trial.seconds.median = row.median_seconds;
  trial.seconds.min = row.min_seconds;
  trial.seconds.cv = row.cv;
  const Verdict verdict = JudgeTrial(profile, kernel, trial, PairedOf(row));
  SetVerdict(verdict, row);
  return verdict;
}

absl::StatusOr<std::optional<StoredConfig>> LoadStoredConfig(TuningDb& db,
                                                             const MachineProfile& profile,
                                                             const Kernel& kernel,
                                                             const Workload& workload, int threads,
                                                             CacheMode cache) {
  const CacheMode other = cache == CacheMode::kCold ? CacheMode::kWarm : CacheMode::kCold;
  for (CacheMode mode : {cache, other}) {
    absl::StatusOr<std::optional<TunedResult>> row =
        db.Get(profile.Fingerprint(), kernel.name, workload.Key(), workload.dtype, threads, mode);
    if (!row.ok()) return row.status();
    if (!row->has_value() || kernel.IsStale((*row)->config_schema)) continue;
    StoredConfig stored;
    stored.cache = mode;
    absl::StatusOr<Config> config = ParseStoredConfig(profile, kernel, workload, threads, mode,
                                                      (*row)->config, &stored.completed);
    if (!config.ok()) continue;
    stored.config = *std::move(config);
    return stored;
  }
  return std::nullopt;
}

}  // namespace rooftune
