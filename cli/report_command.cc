// rooftune report, and the report's input that run and bench share.
#include "cli/report_command.h"

#include <filesystem>
#include <iostream>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/common.h"
#include "cli/subcommands.h"
#include "framework/harness.h"
#include "framework/judged_trial.h"
#include "framework/roofline.h"
#include "nlohmann/json.hpp"
#include "reports/document.h"

namespace rooftune::cli {
namespace {

// A workload's bound by the registered kernel whose own traffic model, at its analytic config,
// bounds it lowest (timed warm unless it streams from DRAM, as bench and tune would time it).
// Kernels without a model are left out: compulsory traffic would flatter them.
reports::ModelBoundFn BoundByTheBestModel(const MachineProfile& profile) {
  return [profile](const Workload& w, int threads) -> std::optional<reports::ModelBound> {
    std::optional<reports::ModelBound> best;
    for (const Kernel* kernel : KernelRegistry::Global().All()) {
      if (kernel->reference || !kernel->traffic || !kernel->Supports(w)) continue;
      const CacheMode cache = NaturalCacheMode(profile, w, threads);
      const Config config = kernel->InitialConfig(w, threads, cache, profile);
      const RooflineBound bound = BoundOf(profile, SelectCeilings(profile, w.dtype, threads), w,
                                          kernel->TrafficFor(w, config, threads, profile),
                                          /*warm=*/cache == CacheMode::kWarm);
      if (bound.seconds > 0 && (!best || bound.seconds < best->seconds)) {
        best = reports::ModelBound{bound.seconds, kernel->name};
      }
    }
    return best;
  };
}

}  // namespace

absl::StatusOr<reports::ReportInput> GatherReport(Session& session, const MachineProfile& profile) {
  absl::StatusOr<std::vector<TunedResult>> results = session.TunedRows(profile);
  if (!results.ok()) return results.status();
  // Judged against the ceilings the report prints. A kernel that is not loaded (a plugin left off
  // --plugin) keeps the verdict it was stored with, and has no levers.
  // A row tuned with a kernel's older parameters is left out: its config says nothing now.
  std::vector<Verdict> verdicts;
  std::vector<TunedResult> rows;
  int stale = 0;
  for (TunedResult& row : *results) {
    const Kernel* kernel = KernelRegistry::Global().Find(row.kernel);
    if (kernel != nullptr && kernel->IsStale(row.config_schema)) {
      ++stale;
      continue;
    }
    absl::StatusOr<Verdict> verdict =
        kernel == nullptr ? absl::NotFoundError("not loaded") : JudgeAgain(profile, *kernel, row);
    verdicts.push_back(verdict.ok() ? *verdict : Verdict{});
    rows.push_back(std::move(row));
  }
  if (stale > 0) {
    std::cerr << "report: " << stale << " stale row(s) left out (tuned with a kernel's older "
              << "parameters; tune them again)\n";
  }
  reports::ReportInput input{profile, std::move(rows), reports::NowUtc(), std::move(verdicts),
                             BoundByTheBestModel(profile)};
  absl::StatusOr<TuningDb*> db = session.Db();
  if (!db.ok()) return db.status();
  absl::StatusOr<std::vector<TuningDb::ThreadChoice>> choices =
      (*db)->ThreadChoices(profile.Fingerprint());
  if (!choices.ok()) return choices.status();
  input.thread_choices = *std::move(choices);
  // What if: the default MLP at batch 1 and 64, on one thread and on every CPU.
  std::vector<int> threads = {1};
  if (profile.logical_cpus > 1) threads.push_back(profile.logical_cpus);
  for (int t : threads) {
    const MlpSpec mlp{kWhatIfMlp, Dtype::kF32, t, 10};
    for (int64_t batch : {1, 64}) {
      absl::StatusOr<PassPrediction> pass =
          PredictMlp(mlp, batch, profile, input.results, input.thread_choices);
      if (pass.ok()) input.what_if.push_back({mlp, *std::move(pass)});
    }
  }
  return input;
}

namespace {

// The profiles --machine names: this machine's (measured, or the stored one) when it is empty,
// else the stored profile of that machine, or of every machine ("all").
absl::StatusOr<std::vector<MachineProfile>> ProfilesToReport(Session& session,
                                                             const std::string& machine) {
  if (machine.empty()) {
    absl::StatusOr<MachineProfile> profile = session.MeasuredProfile(true, false);
    if (!profile.ok()) return profile.status();
    return std::vector<MachineProfile>{*std::move(profile)};
  }
  absl::StatusOr<TuningDb*> db = session.Db();
  if (!db.ok()) return db.status();
  absl::StatusOr<std::vector<TuningDb::Machine>> machines = (*db)->Machines();
  if (!machines.ok()) return machines.status();
  std::vector<MachineProfile> profiles;
  for (const TuningDb::Machine& m : *machines) {
    if (machine != "all" && m.fingerprint != machine) continue;
    nlohmann::json j = nlohmann::json::parse(m.profile_json, nullptr, /*allow_exceptions=*/false);
    absl::StatusOr<MachineProfile> profile =
        j.is_object() ? MachineProfile::FromJson(j)
                      : absl::StatusOr<MachineProfile>(absl::DataLossError("not JSON"));
    if (!profile.ok()) {
      return absl::DataLossError(absl::StrCat("the stored profile of machine ", m.fingerprint,
                                              " is unreadable: ", profile.status().message()));
    }
    profiles.push_back(*std::move(profile));
  }
  if (profiles.empty()) {
    return UsageError(absl::StrCat("no machine ", machine, " in ", (*db)->path(),
                                   " (rooftune db list shows them)"));
  }
  return profiles;
}

absl::StatusOr<int> WriteReport(Session& session, const MachineProfile& profile,
                                const std::string& format, const std::string& out) {
  absl::StatusOr<reports::ReportInput> input = GatherReport(session, profile);
  if (!input.ok()) return input.status();
  const std::string text = format == "md"     ? reports::RenderMarkdown(*input)
                           : format == "html" ? reports::RenderHtml(*input)
                           : format == "text" ? reports::RenderText(*input, TerminalWidth())
                                              : reports::RenderJson(*input).dump(2) + "\n";
  if (out.empty()) {
    std::cout << text;
    return 0;
  }
  std::error_code ec;
  std::filesystem::create_directories(out, ec);
  const std::string file = absl::StrCat(out, "/report.", format == "text" ? "txt" : format);
  if (absl::Status s = WriteFile(file, text); !s.ok()) return s;
  if (format != "md") {
    // The page embeds its pictures; JSON and text have none.
    std::cerr << "wrote " << file << "\n";
    return 0;
  }
  // The Markdown links its pictures: written beside it, from the same rows.
  absl::StatusOr<std::vector<std::string>> pictures = WritePictures(out, *input);
  if (!pictures.ok()) return pictures.status();
  std::cerr << "wrote " << file << ", " << absl::StrJoin(*pictures, ", ") << "\n";
  return 0;
}

}  // namespace

absl::StatusOr<int> ReportCommand(Session& session) {
  absl::StatusOr<ReportOptions> options = ReportOptionsFromFlags();
  if (!options.ok()) return options.status();
  session.ReadOnly();  // a report reads the database; it never creates, upgrades or probes
  absl::StatusOr<std::vector<MachineProfile>> profiles =
      ProfilesToReport(session, options->machine);
  if (!profiles.ok()) return profiles.status();
  if (profiles->size() == 1) {
    return WriteReport(session, profiles->front(), options->format, options->out);
  }
  // Several machines: one report folder each.
  if (options->out.empty()) {
    return UsageError("--machine all writes one report per machine: give --out DIR");
  }
  for (const MachineProfile& profile : *profiles) {
    absl::StatusOr<int> status = WriteReport(
        session, profile, options->format, absl::StrCat(options->out, "/", profile.Fingerprint()));
    if (!status.ok() || *status != 0) return status;
  }
  return 0;
}

}  // namespace rooftune::cli
