// rooftune run, the main job: probe, tune every kernel on its default workloads at each thread
// count, write the reports and print a summary.
#include <algorithm>
#include <filesystem>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "cli/common.h"
#include "cli/report_command.h"
#include "cli/subcommands.h"
#include "cli/tune_command.h"
#include "framework/executor.h"
#include "framework/roofline.h"
#include "reports/document.h"
#include "reports/levers.h"
#include "reports/machine_text.h"
#include "reports/report.h"

namespace rooftune::cli {

absl::StatusOr<int> RunAllCommand(Session& session) {
  absl::StatusOr<RunOptions> run = RunOptionsFromFlags();
  if (!run.ok()) return run.status();
  const bool quick = run->quick;
  absl::StatusOr<MachineProfile> profile = session.MeasuredProfile(quick, run->force, run->fresh);
  if (!profile.ok()) return profile.status();
  std::cout << reports::RenderProfileText(*profile) << "\n";
  // Quick runs take one thread and all of them; full runs the powers of two between too.
  const int most = session.Facts().logical_cpus;
  std::vector<int> threads = ThreadLadder(most);
  if (quick && threads.size() > 2) threads = {1, most};
  TuneOptions options = run->tune;
  options.budget_seconds = quick ? 4 : std::min(run->tune.budget_seconds, 30.0);
  std::vector<std::string> skipped;
  if (quick) options.final_rounds = 2;
  // Every (kernel, workload) first, so that the progress can say how much is left.
  std::vector<std::pair<const Kernel*, Workload>> tunes;
  for (const Kernel* kernel : KernelRegistry::Global().All()) {
    if (kernel->reference) continue;
    for (const std::string& entry : quick ? kernel->quick_default_shapes : kernel->default_shapes) {
      absl::StatusOr<Workload> workload = kernel->DefaultWorkload(entry, AvailableMemoryBytes());
      if (!workload.ok()) return workload.status();
      tunes.emplace_back(kernel, *workload);
    }
  }
  for (size_t i = 0; i < tunes.size(); ++i) {
    const auto& [kernel, workload] = tunes[i];
    Progress(RunProgress(int(i), int(tunes.size()), absl::StrCat(kernel->name, " ", workload.Key()),
                         int(threads.size()), options.budget_seconds));
    absl::StatusOr<std::vector<nlohmann::json>> tuned =
        TuneOne(session, *kernel, workload, threads, *profile, options, CacheChoice::kByWorkload);
    // One kernel that cannot produce a correct result here (oneDNN's int8 on full-range data
    // without VNNI, say) must not cost the user the rest of the run: say so and go on.
    if (!tuned.ok() && absl::IsInternal(tuned.status())) {
      skipped.push_back(
          absl::StrCat(kernel->name, " ", workload.Key(), ": ", tuned.status().message()));
      Progress("  skipped: " + skipped.back());
      continue;
    }
    if (!tuned.ok()) return tuned.status();
  }
  const std::string& out = run->out;
  std::error_code ec;
  std::filesystem::create_directories(out, ec);
  absl::StatusOr<reports::ReportInput> input = GatherReport(session, *profile);
  if (!input.ok()) return input.status();
  if (absl::Status s = WriteFile(out + "/report.md", reports::RenderMarkdown(*input)); !s.ok())
    return s;
  if (absl::Status s = WriteFile(out + "/report.html", reports::RenderHtml(*input)); !s.ok())
    return s;
  if (absl::Status s = WriteFile(out + "/report.json", reports::RenderJson(*input).dump(2) + "\n");
      !s.ok())
    return s;
  if (absl::StatusOr<std::vector<std::string>> pictures = WritePictures(out, *input);
      !pictures.ok()) {
    return pictures.status();
  }
  std::cout
      << "\nsummary (pull first: the first lever that pays, and what the roofline gives it)\n";
  for (size_t i = 0; i < input->results.size(); ++i) {
    const TunedResult& r = input->results[i];
    const std::vector<reports::Lever> levers = reports::LeversOf(*input, i);
    const reports::Lever* first = reports::FirstThatPays(levers);
    std::cout << absl::StrFormat(
        "  %-18s %-32s threads=%d  %9s  %14s  attainment %s %s (%s, %s)%s\n", r.kernel, r.workload,
        r.threads, reports::FormatSeconds(r.median_seconds),
        reports::FormatRate(r.ops_per_second, r.dtype), reports::FormatAttainment(r.attainment),
        r.paired_pairs > 0 ? "paired" : "profile", r.verdict ? ToString(*r.verdict) : "not judged",
        r.binding,
        first == nullptr ? ""
                         : absl::StrFormat("; pull first: %s %.1fx", reports::ToString(first->kind),
                                           first->gain));
  }
  for (const std::string& line : skipped)
    std::cout << "  SKIPPED (no correct config) " << line << "\n";
  std::cout << "\nwrote " << out << "/report.md, report.html and report.json; database "
            << session.db_path() << "\n";
  return 0;
}

}  // namespace rooftune::cli
