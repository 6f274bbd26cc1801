// rooftune report, and the report's input that run and bench share.
#include "cli/report_command.h"

#include <filesystem>
#include <iostream>
#include <optional>

#include "absl/strings/str_cat.h"
#include "cli/common.h"
#include "cli/subcommands.h"
#include "framework/judged_trial.h"
#include "framework/roofline.h"
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
      const Config config = kernel->InitialConfig(w, threads, profile);
      const RooflineBound bound =
          BoundOf(profile, SelectCeilings(profile, w.dtype, threads), w,
                  kernel->TrafficFor(w, config, threads, profile),
                  /*warm=*/!StreamsFromDram(profile, w, threads));
      if (bound.seconds > 0 && (!best || bound.seconds < best->seconds)) {
        best = reports::ModelBound{bound.seconds, kernel->name};
      }
    }
    return best;
  };
}

}  // namespace

absl::StatusOr<reports::ReportInput> GatherReport(Session& session, const MachineProfile& profile) {
  absl::StatusOr<TuningDb*> db = session.Db();
  if (!db.ok()) return db.status();
  absl::StatusOr<std::vector<TunedResult>> results = (*db)->All(profile.Fingerprint());
  if (!results.ok()) return results.status();
  // Judged against the ceilings the report prints. A kernel that is not loaded (a plugin left off
  // --plugin) keeps the verdict it was stored with, and has no levers.
  std::vector<Verdict> verdicts;
  for (TunedResult& row : *results) {
    const Kernel* kernel = KernelRegistry::Global().Find(row.kernel);
    absl::StatusOr<Verdict> verdict =
        kernel == nullptr ? absl::NotFoundError("not loaded") : JudgeAgain(profile, *kernel, row);
    verdicts.push_back(verdict.ok() ? *verdict : Verdict{});
  }
  return reports::ReportInput{profile, *std::move(results), reports::NowUtc(), std::move(verdicts),
                              BoundByTheBestModel(profile)};
}

absl::StatusOr<int> ReportCommand(Session& session) {
  absl::StatusOr<ReportOptions> options = ReportOptionsFromFlags();
  if (!options.ok()) return options.status();
  const std::string& format = options->format;
  absl::StatusOr<MachineProfile> profile = session.MeasuredProfile(true, false);
  if (!profile.ok()) return profile.status();
  absl::StatusOr<reports::ReportInput> input = GatherReport(session, *profile);
  if (!input.ok()) return input.status();
  const std::string text = format == "md"     ? reports::RenderMarkdown(*input)
                           : format == "html" ? reports::RenderHtml(*input)
                                              : reports::RenderJson(*input).dump(2) + "\n";
  const std::string& out = options->out;
  if (out.empty()) {
    std::cout << text;
    return 0;
  }
  std::error_code ec;
  std::filesystem::create_directories(out, ec);
  if (absl::Status s = WriteFile(absl::StrCat(out, "/report.", format), text); !s.ok()) return s;
  if (format == "json") {
    std::cerr << "wrote " << out << "/report.json\n";
    return 0;
  }
  // The Markdown and HTML reports show the two pictures: written beside them, from the same rows.
  if (absl::Status s = WritePictures(out, *profile, input->results); !s.ok()) return s;
  std::cerr << "wrote " << out << "/report." << format << ", latency.svg and roofline.svg\n";
  return 0;
}

}  // namespace rooftune::cli
