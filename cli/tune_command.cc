// rooftune tune: search a kernel's parameter space, validating every candidate, and store the
// fastest for this machine.
#include "cli/tune_command.h"

#include <iostream>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "cli/benchmark_json.h"
#include "cli/common.h"
#include "cli/flags.h"
#include "cli/subcommands.h"
#include "framework/judged_trial.h"
#include "framework/roofline.h"
#include "probes/paired_ceiling.h"
#include "reports/report.h"

namespace rooftune::cli {
absl::StatusOr<TuneOptions> BaseTuneOptions() {
  TuneOptions options;
  options.strategy = absl::GetFlag(FLAGS_strategy);
  if (options.strategy != "exhaustive" && options.strategy != "descent") {
    return UsageError(
        absl::StrCat("unknown --strategy '", options.strategy, "' (exhaustive or descent)"));
  }
  options.budget_seconds = absl::GetFlag(FLAGS_budget_seconds);
  if (!(options.budget_seconds > 0)) return UsageError("--budget-seconds must be positive");
  options.progress = Progress;
  return options;
}

absl::StatusOr<std::vector<nlohmann::json>> TuneOne(Session& session, const Kernel& kernel,
                                                    const Workload& workload,
                                                    const std::vector<int>& threads,
                                                    const MachineProfile& profile,
                                                    const TuneOptions& options) {
  absl::StatusOr<TuningDb*> db = session.Db();
  if (!db.ok()) return db.status();
  absl::StatusOr<Problem> problem = Problem::Create(workload);
  if (!problem.ok()) return problem.status();
  const ReferenceOutput reference = ComputeReference(*problem);
  std::vector<nlohmann::json> out;
  for (int t : threads) {
    Progress(absl::StrFormat("tune %s  %s  threads=%d  (%s, budget %.0f s)", kernel.name,
                             workload.Key(), t, options.strategy, options.budget_seconds));
    Executor executor(t);
    TuneOptions with_stored = options;
    absl::StatusOr<std::optional<StoredConfig>> stored =
        LoadStoredConfig(**db, profile, kernel, workload, t);
    if (stored.ok() && stored->has_value()) with_stored.stored = (*stored)->config;
    absl::StatusOr<TuneOutcome> outcome =
        Tune(kernel, profile, *problem, reference, executor, with_stored);
    if (!outcome.ok()) return outcome.status();
    // The winner judged beside its binding ceiling's own loop, on the same threads.
    absl::StatusOr<Verdict> judged =
        probes::JudgeBesideCeiling(profile, kernel, outcome->best, *problem, executor);
    if (!judged.ok()) return judged.status();
    const Verdict& verdict = *judged;
    if (absl::Status s = (*db)->Put(TunedResultOf(profile, *outcome, verdict)); !s.ok()) return s;
    const double speedup = outcome->best.seconds.median > 0
                               ? outcome->initial.seconds.median / outcome->best.seconds.median
                               : 0;
    Progress(absl::StrFormat(
        "  best %s: %s, %s, attainment %s (%s); %d of %d configs tried%s, %d rejected; "
        "%.2fx over the initial %s",
        ConfigText(outcome->best.config), reports::FormatSeconds(outcome->best.seconds.median),
        reports::FormatRate(outcome->best.OpsPerSecond(), IsInteger(workload.dtype)),
        reports::FormatAttainment(verdict.attainment), ToString(verdict.verdict),
        outcome->configs_tried, outcome->configs_valid,
        outcome->budget_exhausted ? " (budget spent)" : "", outcome->configs_rejected, speedup,
        ConfigText(outcome->initial.config)));
    Progress("  " + reports::AttainmentBasis(verdict.paired, verdict.profile_attainment,
                                             verdict.tolerance));
    if (!verdict.diagnosis.empty()) Progress("  " + verdict.diagnosis);
    nlohmann::json j = TrialJson(outcome->best, verdict);
    j["strategy"] = options.strategy;
    j["initial_config"] = outcome->initial.config.ToString();
    j["initial_real_time"] = outcome->initial.seconds.median * 1e9;
    j["configs_tried"] = outcome->configs_tried;
    j["configs_valid"] = outcome->configs_valid;
    // exhaustive: the nearest to the initial config; descent: the configs it reached
    j["configs_candidates"] = outcome->configs_candidates;
    j["configs_rejected"] = outcome->configs_rejected;
    j["budget_exhausted"] = outcome->budget_exhausted;
    out.push_back(j);
  }
  return out;
}

absl::StatusOr<int> TuneCommand(Session& session) {
  if (absl::Status s = CheckCacheFlags(); !s.ok()) return s;
  absl::StatusOr<Selection> selection = SelectKernelAndWorkload(session);
  if (!selection.ok()) return selection.status();
  const std::string threads_text = absl::GetFlag(FLAGS_threads);
  absl::StatusOr<std::vector<int>> threads =
      session.ParseThreads(threads_text.empty() ? "1" : threads_text);
  if (!threads.ok()) return threads.status();
  absl::StatusOr<TuneOptions> base = BaseTuneOptions();
  if (!base.ok()) return base.status();
  absl::StatusOr<MachineProfile> profile = session.MeasuredProfile(true, false);
  if (!profile.ok()) return profile.status();
  // Per thread count: whether the workload streams from DRAM depends on its ceilings.
  std::vector<nlohmann::json> results;
  for (int t : *threads) {
    TuneOptions options = *base;
    options.timing.cache = TimingFor(*profile, selection->workload, t).cache;
    absl::StatusOr<std::vector<nlohmann::json>> one =
        TuneOne(session, *selection->kernel, selection->workload, {t}, *profile, options);
    if (!one.ok()) return one.status();
    results.insert(results.end(), one->begin(), one->end());
  }
  absl::StatusOr<TuningDb*> db = session.Db();
  if (!db.ok()) return db.status();
  if (absl::GetFlag(FLAGS_json)) {
    std::cout << nlohmann::json{{"schema_version", kJsonSchemaVersion},
                                {"database", (*db)->path()},
                                {"benchmarks", results}}
                     .dump(2)
              << "\n";
  } else {
    for (const nlohmann::json& r : results) {
      std::cout << absl::StrFormat("%-50s %-60s %12s %16s  attainment %s %s\n",
                                   r["name"].get<std::string>(),
                                   ConfigText(r["config"].get<std::string>()),
                                   reports::FormatSeconds(r["real_time"].get<double>() / 1e9),
                                   reports::FormatRate(r["ops_per_second"].get<double>(),
                                                       IsInteger(selection->workload.dtype)),
                                   reports::FormatAttainment(r["attainment"].get<double>()),
                                   r["verdict"].get<std::string>());
    }
    std::cout << "stored in " << (*db)->path() << "\n";
  }
  return 0;
}

}  // namespace rooftune::cli
