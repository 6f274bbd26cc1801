// rooftune tune: search a kernel's parameter space, validating every candidate, and store the
// fastest for this machine.
#include "cli/tune_command.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <iostream>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "cli/benchmark_json.h"
#include "cli/common.h"
#include "cli/flags.h"
#include "cli/isolated_trials.h"
#include "cli/subcommands.h"
#include "framework/judged_trial.h"
#include "framework/roofline.h"
#include "framework/tuning_db_export.h"
#include "probes/paired_ceiling.h"
#include "reports/report.h"

namespace rooftune::cli {
namespace {

// Interleaved rounds of the --threads auto choice: each count's config timed once a round.
constexpr int kThreadChoiceRounds = 5;

// Stores a tune's result. When the database refuses the write, the result is not lost: it is
// written beside the database as an export file (`rooftune db import` takes it), named in the
// error. ROOFTUNE_TEST_FAIL_STORE makes the write fail, for the tests.
absl::Status Store(TuningDb& db, const MachineProfile& profile, const TunedResult& row) {
  absl::Status s = std::getenv("ROOFTUNE_TEST_FAIL_STORE") != nullptr
                       ? absl::DataLossError("the write failed (ROOFTUNE_TEST_FAIL_STORE)")
                       : db.Put(row);
  if (s.ok()) return s;
  const std::string file = absl::StrFormat("%s.unsaved-%s-%d-%d.json", db.path(), row.kernel,
                                           row.threads, int64_t(std::time(nullptr)));
  const DbExport data{{{row.fingerprint, profile.ToJson().dump(), ""}}, {row}};
  const absl::Status saved = WriteFile(file, ToJson(data).dump(1) + "\n");
  return absl::Status(
      s.code(),
      absl::StrCat(s.message(),
                   saved.ok()
                       ? absl::StrCat("; the result is saved in ", file,
                                      " (rooftune db import it once the database takes writes)")
                       : "; saving it beside the database failed too"));
}

// Marks this process as tuning on this machine, for its lifetime (a shared flock on one file per
// machine), and says whether another process already was: two tunes at once share the cores and
// disturb each other's timings, which neither can see in its own figures.
class TuningPresence {
 public:
  TuningPresence() {
    fd_ = open(kLockFile, O_RDONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) return;
    others_ = flock(fd_, LOCK_EX | LOCK_NB) != 0;  // refused while another tune holds it
    flock(fd_, LOCK_SH);
  }
  ~TuningPresence() {
    if (fd_ >= 0) close(fd_);
  }
  bool others() const { return others_; }

 private:
  static constexpr const char* kLockFile = "/tmp/rooftune-tuning.lock";
  int fd_ = -1;
  bool others_ = false;
};

// Candidates run in a worker process: `options` evaluate through it and skip the configs stored
// as failures (cleared first when retrying them).
absl::Status IsolateCandidates(TuningDb& db, const Kernel& kernel, const Workload& workload,
                               int threads, const std::string& machine, bool retry_failed,
                               std::optional<IsolatedTrials>& worker, TuneOptions& options) {
  worker.emplace(kernel, workload, threads, PluginFlag(), TrialDeadlineSeconds(options.timing));
  options.evaluate = [&worker](const Config& c, const TimingOptions& timing) {
    return worker->Evaluate(c, timing);
  };
  const std::string key = workload.Key();
  if (retry_failed) {
    if (absl::Status s = db.ClearFailures(machine, kernel.name, key, threads); !s.ok()) return s;
  }
  absl::StatusOr<std::vector<TuningDb::Failure>> failed =
      db.Failures(machine, kernel.name, key, threads);
  if (!failed.ok()) return failed.status();
  for (const TuningDb::Failure& f : *failed) options.skip[f.config] = f.reason;
  return absl::OkStatus();
}

// The configs that crashed, aborted or hung the worker, stored so that later tunes skip them.
absl::Status StoreFailures(TuningDb& db, const Kernel& kernel, const Workload& workload,
                           int threads, const std::string& machine, const IsolatedTrials& worker) {
  for (const auto& [config, reason] : worker.failures()) {
    const TuningDb::Failure f{machine,        kernel.name,
                              workload.Key(), std::string(ToString(workload.dtype)),
                              threads,        kernel.params.Format(config),
                              reason,         ""};
    if (absl::Status s = db.PutFailure(f); !s.ok()) return s;
  }
  return absl::OkStatus();
}

void SayOutcome(const Kernel& kernel, const Workload& workload, const TuneOutcome& outcome,
                const Verdict& verdict) {
  const double speedup = outcome.best.seconds.median > 0
                             ? outcome.initial.seconds.median / outcome.best.seconds.median
                             : 0;
  Progress(absl::StrFormat(
      "  best %s: %s, %s, attainment %s (%s); %d of %s configs tried%s, %d rejected%s; "
      "%.2fx over the initial %s",
      ConfigText(kernel.params, outcome.best.config),
      reports::FormatSeconds(outcome.best.seconds.median),
      reports::FormatRate(outcome.best.OpsPerSecond(), workload.dtype),
      reports::FormatAttainment(verdict.attainment), ToString(verdict.verdict),
      outcome.configs_tried, outcome.ValidText(), outcome.budget_exhausted ? " (budget spent)" : "",
      outcome.configs_rejected,
      outcome.configs_pruned > 0
          ? absl::StrFormat(", %d pruned by the model", outcome.configs_pruned)
          : "",
      speedup, ConfigText(kernel.params, outcome.initial.config)));
  Progress("  " +
           reports::AttainmentBasis(verdict.paired, verdict.profile_attainment, verdict.tolerance));
  if (!verdict.diagnosis.empty()) Progress("  " + verdict.diagnosis);
}

nlohmann::json OutcomeJson(const Kernel& kernel, const TuneOutcome& outcome, const Verdict& verdict,
                           const std::string& strategy) {
  nlohmann::json j = TrialJson(outcome.best, verdict, kernel.params);
  j["strategy"] = strategy;
  j["initial_config"] = kernel.params.Format(outcome.initial.config);
  j["initial_real_time"] = outcome.initial.seconds.median * 1e9;
  j["configs_tried"] = outcome.configs_tried;
  // null: the budget ended before the space was counted
  j["configs_valid"] =
      outcome.configs_valid > 0 ? nlohmann::json(outcome.configs_valid) : nlohmann::json(nullptr);
  // exhaustive: the nearest to the initial config; descent and model: the configs it reached
  j["configs_candidates"] = outcome.configs_candidates;
  j["configs_rejected"] = outcome.configs_rejected;
  j["configs_pruned"] = outcome.configs_pruned;  // model: proven slower, never timed
  j["budget_exhausted"] = outcome.budget_exhausted;
  return j;
}

// The results as JSON (Google Benchmark's "benchmarks" list), or one line each and where they
// are stored.
void PrintTuned(const TuneCommandOptions& o, const std::vector<nlohmann::json>& results,
                const std::string& database, const std::optional<nlohmann::json>& threads_auto) {
  if (o.json) {
    nlohmann::json out{
        {"schema_version", kJsonSchemaVersion}, {"database", database}, {"benchmarks", results}};
    if (threads_auto) out["threads_auto"] = *threads_auto;
    std::cout << out.dump(2) << "\n";
    return;
  }
  for (const nlohmann::json& r : results) {
    std::cout << absl::StrFormat(
        "%-50s %-60s %12s %16s  attainment %s %s\n", r["name"].get<std::string>(),
        ConfigText(r["config"].get<std::string>()),
        reports::FormatSeconds(r["real_time"].get<double>() / 1e9),
        reports::FormatRate(r["ops_per_second"].get<double>(), o.selection.workload.dtype),
        reports::FormatAttainment(r["attainment"].get<double>()), r["verdict"].get<std::string>());
  }
  if (threads_auto) {
    std::cout << absl::StrFormat(
        "threads auto: %d (the fewest threads within %.0f%% of the fastest count; the library "
        "API runs this workload on as many in a context of %d)\n",
        (*threads_auto)["chosen"].get<int>(), (*threads_auto)["tolerance"].get<double>() * 100,
        (*threads_auto)["offered"].get<int>());
  }
  std::cout << "stored in " << database << "\n";
}

}  // namespace

absl::StatusOr<std::vector<nlohmann::json>> TuneOne(Session& session, const Kernel& kernel,
                                                    const Workload& workload,
                                                    const std::vector<int>& threads,
                                                    const MachineProfile& profile,
                                                    const TuneOptions& options, CacheChoice cache,
                                                    bool isolated, bool retry_failed,
                                                    std::vector<std::pair<int, Config>>* winners) {
  absl::StatusOr<TuningDb*> db = session.Db();
  if (!db.ok()) return db.status();
  absl::StatusOr<Problem> problem = Problem::Create(workload);
  if (!problem.ok()) return problem.status();
  const ReferenceOutput reference = ComputeReference(*problem);
  const TuningPresence presence;
  if (presence.others()) {
    Progress(
        "warning: another rooftune tune is running on this machine: the two share its cores "
        "and each one's timings are disturbed by the other");
  }
  const std::string machine = profile.Fingerprint();
  std::vector<nlohmann::json> out;
  for (int t : threads) {
    Progress(absl::StrFormat("tune %s  %s  threads=%d  (%s, budget %.0f s)", kernel.name,
                             workload.Key(), t, options.strategy, options.budget_seconds));
    Executor executor(t);
    TuneOptions with_stored = options;
    with_stored.progress = Progress;
    const CacheMode mode = CacheFor(cache, profile, workload, t);
    if (mode == CacheMode::kCold) {
      TimeColdWithinBudget(with_stored);
    }
    absl::StatusOr<std::optional<StoredConfig>> stored =
        LoadStoredConfig(**db, profile, kernel, workload, t, mode);
    if (stored.ok() && stored->has_value()) with_stored.stored = (*stored)->config;
    std::optional<IsolatedTrials> worker;
    if (isolated) {
      absl::Status s =
          IsolateCandidates(**db, kernel, workload, t, machine, retry_failed, worker, with_stored);
      if (!s.ok()) return s;
    }
    absl::StatusOr<TuneOutcome> outcome =
        Tune(kernel, profile, *problem, reference, executor, with_stored);
    if (worker) {
      if (absl::Status s = StoreFailures(**db, kernel, workload, t, machine, *worker); !s.ok()) {
        return s;
      }
    }
    if (!outcome.ok()) return outcome.status();
    // The winner judged beside its binding ceiling's own loop, on the same threads.
    absl::StatusOr<Verdict> judged =
        probes::JudgeBesideCeiling(profile, kernel, outcome->best, *problem, executor);
    if (!judged.ok()) return judged.status();
    const absl::Status stored_status =
        Store(**db, profile, TunedResultOf(profile, kernel, *outcome, *judged));
    SayOutcome(kernel, workload, *outcome, *judged);
    if (!stored_status.ok()) return stored_status;
    out.push_back(OutcomeJson(kernel, *outcome, *judged, options.strategy));
    if (winners != nullptr) winners->emplace_back(t, outcome->best.config);
  }
  return out;
}

namespace {

// --threads auto: each count's tuned config re-timed in interleaved rounds, and the fewest threads
// as fast as the fastest count within noise.
absl::StatusOr<nlohmann::json> ChooseThreadCount(
    const TuneCommandOptions& o, const MachineProfile& profile,
    const std::vector<std::pair<int, Config>>& winners) {
  const Kernel& kernel = *o.selection.kernel;
  const Workload& workload = o.selection.workload;
  absl::StatusOr<Problem> problem = Problem::Create(workload);
  if (!problem.ok()) return problem.status();
  TuneOptions timing = o.tune;
  // Cold where any count is timed cold: the choice compares the counts on the same footing.
  for (const auto& [threads, config] : winners) {
    if (CacheFor(o.cache, profile, workload, threads) == CacheMode::kCold) {
      TimeColdWithinBudget(timing);
    }
  }
  Progress(
      absl::StrFormat("threads auto: the %d counts' tuned configs re-timed in %d "
                      "interleaved rounds",
                      winners.size(), kThreadChoiceRounds));
  absl::StatusOr<ThreadChoice> choice =
      ChooseThreads(kernel, *problem, winners, timing.timing, kThreadChoiceRounds);
  if (!choice.ok()) return choice.status();
  nlohmann::json medians = nlohmann::json::array();
  for (const ThreadTiming& t : choice->timed) {
    Progress(absl::StrFormat("  %d thread%s: %s (cv %.1f%%)%s", t.threads,
                             t.threads == 1 ? "" : "s", reports::FormatSeconds(t.seconds.median),
                             t.seconds.cv * 100,
                             t.threads == choice->threads ? "  <- chosen" : ""));
    medians.push_back({{"threads", t.threads},
                       {"config", kernel.params.Format(t.config)},
                       {"real_time", t.seconds.median * 1e9},
                       {"cv", t.seconds.cv}});
  }
  Progress(absl::StrFormat("  chosen: %d thread%s, the fewest within %.0f%% of the fastest",
                           choice->threads, choice->threads == 1 ? "" : "s",
                           choice->tolerance * 100));
  int offered = 0;
  for (const auto& [threads, config] : winners) offered = std::max(offered, threads);
  return nlohmann::json{{"chosen", choice->threads},
                        {"offered", offered},
                        {"tolerance", choice->tolerance},
                        {"time_unit", "ns"},
                        {"counts", medians}};
}

absl::StatusOr<int> Tune(Session& session, const TuneCommandOptions& o,
                         const MachineProfile& profile) {
  std::vector<std::pair<int, Config>> winners;
  absl::StatusOr<std::vector<nlohmann::json>> results =
      TuneOne(session, *o.selection.kernel, o.selection.workload, o.threads, profile, o.tune,
              o.cache, !o.in_process, o.retry_failed, &winners);
  if (!results.ok()) return results.status();
  std::optional<nlohmann::json> threads_auto;
  if (o.threads_auto) {
    absl::StatusOr<nlohmann::json> chosen = ChooseThreadCount(o, profile, winners);
    if (!chosen.ok()) return chosen.status();
    threads_auto = *std::move(chosen);
  }
  absl::StatusOr<TuningDb*> db = session.Db();
  if (!db.ok()) return db.status();
  if (threads_auto) {
    // Stored for the library API: a context of the most threads tried runs on the chosen count.
    const TuningDb::ThreadChoice choice{profile.Fingerprint(),
                                        o.selection.kernel->name,
                                        o.selection.workload.Key(),
                                        (*threads_auto)["offered"].get<int>(),
                                        (*threads_auto)["chosen"].get<int>(),
                                        (*threads_auto)["tolerance"].get<double>()};
    if (absl::Status s = (*db)->PutThreadChoice(choice); !s.ok()) return s;
  }
  PrintTuned(o, *results, (*db)->path(), threads_auto);
  return 0;
}

}  // namespace

absl::StatusOr<int> TuneCommand(Session& session) {
  return WithProfile(session, TuneOptionsFromFlags(session), Tune);
}

}  // namespace rooftune::cli
