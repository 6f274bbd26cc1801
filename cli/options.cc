#include "cli/options.h"

#include <algorithm>
#include <cmath>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "cli/flags.h"
#include "framework/roofline.h"
#include "framework/tuning_db.h"

namespace rooftune::cli {

absl::StatusOr<Selection> KernelAndWorkloadFromFlags(Session& session) {
  absl::StatusOr<const Kernel*> kernel = session.FindKernel(absl::GetFlag(FLAGS_kernel));
  if (!kernel.ok()) return kernel.status();
  absl::StatusOr<Workload> workload =
      session.ParseWorkloadFor(**kernel, absl::GetFlag(FLAGS_shape), absl::GetFlag(FLAGS_dtype),
                               absl::GetFlag(FLAGS_epilogue));
  if (!workload.ok()) return workload.status();
  return Selection{*kernel, *workload};
}

namespace {

absl::StatusOr<std::vector<int>> ThreadCounts(Session& session) {
  const std::string text = absl::GetFlag(FLAGS_threads);
  return session.ParseThreads(text.empty() ? "1" : text);
}

// The selection with one --threads count (default 1).
absl::StatusOr<Selection> KernelWorkloadAndThreads(Session& session) {
  absl::StatusOr<Selection> selection = KernelAndWorkloadFromFlags(session);
  if (!selection.ok()) return selection.status();
  absl::StatusOr<std::vector<int>> threads = ThreadCounts(session);
  if (!threads.ok()) return threads.status();
  if (threads->size() != 1) return UsageError("--threads takes one thread count here");
  selection->threads = threads->front();
  return selection;
}

// The selection and a --config checked as far as it can be before the stored or initial config
// is known.
absl::StatusOr<std::pair<Selection, std::string>> SelectionAndConfig(Session& session) {
  absl::StatusOr<Selection> selection = KernelWorkloadAndThreads(session);
  if (!selection.ok()) return selection.status();
  const std::string config = absl::GetFlag(FLAGS_config);
  if (absl::Status s = CheckConfigText(*selection->kernel, config); !s.ok()) return s;
  return std::make_pair(*selection, config);
}

absl::StatusOr<CacheChoice> CacheFlags() {
  const bool cold = absl::GetFlag(FLAGS_cold), warm = absl::GetFlag(FLAGS_warm);
  if (cold && warm) return UsageError("--cold and --warm exclude each other");
  return cold ? CacheChoice::kCold : warm ? CacheChoice::kWarm : CacheChoice::kByWorkload;
}

absl::StatusOr<TuneOptions> StrategyAndBudget() {
  TuneOptions options;
  options.strategy = absl::GetFlag(FLAGS_strategy);
  const std::vector<std::string> strategies = TuneStrategies();
  if (std::find(strategies.begin(), strategies.end(), options.strategy) == strategies.end()) {
    return UsageError(absl::StrCat("unknown --strategy '", options.strategy, "' (",
                                   absl::StrJoin(strategies, " or "), ")"));
  }
  options.budget_seconds = absl::GetFlag(FLAGS_budget_seconds);
  if (!(options.budget_seconds > 0) || !std::isfinite(options.budget_seconds)) {
    return UsageError("--budget-seconds must be a positive, finite number of seconds");
  }
  return options;
}

std::string OutFlag() {
  const std::string out = absl::GetFlag(FLAGS_out);
  return out.empty() ? "rooftune-report" : out;
}

}  // namespace

CacheMode CacheFor(CacheChoice choice, const MachineProfile& profile, const Workload& workload,
                   int threads) {
  switch (choice) {
    case CacheChoice::kCold: return CacheMode::kCold;
    case CacheChoice::kWarm: return CacheMode::kWarm;
    case CacheChoice::kByWorkload: break;
  }
  return NaturalCacheMode(profile, workload, threads);
}

absl::Status CheckConfigText(const Kernel& kernel, const std::string& text) {
  if (text.empty()) return absl::OkStatus();
  absl::StatusOr<Config> parsed =
      kernel.params.Parse(text, kernel.params.FirstValid(), /*validate=*/false);
  if (!parsed.ok()) return UsageError(absl::StrCat("--config: ", parsed.status().message()));
  if (absl::Status s = kernel.params.CheckDomains(*parsed); !s.ok()) {
    return UsageError(absl::StrCat("--config: ", s.message()));
  }
  return absl::OkStatus();
}

absl::StatusOr<VerifyOptions> VerifyOptionsFromFlags(Session& session) {
  absl::StatusOr<std::pair<Selection, std::string>> chosen = SelectionAndConfig(session);
  if (!chosen.ok()) return chosen.status();
  return VerifyOptions{chosen->first, chosen->second, absl::GetFlag(FLAGS_json),
                       absl::GetFlag(FLAGS_in_process)};
}

namespace {

// --versus K1,K2,...: registered kernels that compute the selected workload.
absl::StatusOr<std::vector<const Kernel*>> VersusKernels(Session& session,
                                                         const Workload& workload) {
  std::vector<const Kernel*> kernels;
  const std::string text = absl::GetFlag(FLAGS_versus);
  if (text.empty()) return kernels;
  for (absl::string_view name : absl::StrSplit(text, ',')) {
    if (name.empty()) return UsageError("--versus: an empty kernel name (K1,K2,...)");
    absl::StatusOr<const Kernel*> kernel = session.FindKernel(std::string(name));
    if (!kernel.ok()) return kernel.status();
    if (!(*kernel)->Supports(workload)) {
      return UsageError(
          absl::StrCat("--versus: kernel ", name, " does not compute ", workload.Key()));
    }
    kernels.push_back(*kernel);
  }
  return kernels;
}

}  // namespace

absl::StatusOr<BenchOptions> BenchOptionsFromFlags(Session& session) {
  absl::StatusOr<CacheChoice> cache = CacheFlags();
  if (!cache.ok()) return cache.status();
  absl::StatusOr<std::pair<Selection, std::string>> chosen = SelectionAndConfig(session);
  if (!chosen.ok()) return chosen.status();
  absl::StatusOr<std::vector<const Kernel*>> versus =
      VersusKernels(session, chosen->first.workload);
  if (!versus.ok()) return versus.status();
  return BenchOptions{chosen->first,
                      chosen->second,
                      *cache,
                      absl::GetFlag(FLAGS_json),
                      absl::GetFlag(FLAGS_counters),
                      absl::GetFlag(FLAGS_in_process),
                      *std::move(versus)};
}

absl::StatusOr<TuneCommandOptions> TuneOptionsFromFlags(Session& session) {
  absl::StatusOr<CacheChoice> cache = CacheFlags();
  if (!cache.ok()) return cache.status();
  absl::StatusOr<Selection> selection = KernelAndWorkloadFromFlags(session);
  if (!selection.ok()) return selection.status();
  const bool threads_auto = absl::GetFlag(FLAGS_threads) == "auto";
  absl::StatusOr<std::vector<int>> threads =
      threads_auto ? AutoThreadCounts(session.Facts().logical_cpus) : ThreadCounts(session);
  if (!threads.ok()) return threads.status();
  absl::StatusOr<TuneOptions> tune = StrategyAndBudget();
  if (!tune.ok()) return tune.status();
  return TuneCommandOptions{*selection,
                            *threads,
                            threads_auto,
                            *tune,
                            *cache,
                            absl::GetFlag(FLAGS_json),
                            absl::GetFlag(FLAGS_in_process),
                            absl::GetFlag(FLAGS_retry_failed)};
}

absl::StatusOr<ProbeCommandOptions> ProbeOptionsFromFlags() {
  ProbeCommandOptions o;
  o.quick = absl::GetFlag(FLAGS_quick);
  o.fresh = absl::GetFlag(FLAGS_fresh);
  o.force = absl::GetFlag(FLAGS_force) || o.fresh;
  o.json = absl::GetFlag(FLAGS_json);
  o.out = OutFlag();
  return o;
}

absl::StatusOr<RunOptions> RunOptionsFromFlags() {
  RunOptions o;
  o.quick = absl::GetFlag(FLAGS_quick);
  o.fresh = absl::GetFlag(FLAGS_fresh);
  o.force = absl::GetFlag(FLAGS_force) || o.fresh;
  absl::StatusOr<TuneOptions> tune = StrategyAndBudget();
  if (!tune.ok()) return tune.status();
  o.tune = *tune;
  o.out = OutFlag();
  return o;
}

absl::StatusOr<ReportOptions> ReportOptionsFromFlags() {
  ReportOptions o{absl::GetFlag(FLAGS_format), absl::GetFlag(FLAGS_out),
                  absl::GetFlag(FLAGS_machine)};
  if (o.format != "md" && o.format != "html" && o.format != "json" && o.format != "text") {
    return UsageError("--format must be md, html, json or text");
  }
  return o;
}

absl::StatusOr<SimulateOptions> SimulateOptionsFromFlags(Session& session) {
  absl::StatusOr<std::pair<Selection, std::string>> chosen = SelectionAndConfig(session);
  if (!chosen.ok()) return chosen.status();
  return SimulateOptions{chosen->first, chosen->second, absl::GetFlag(FLAGS_shape),
                         absl::GetFlag(FLAGS_plugin)};
}

bool JsonFlag() { return absl::GetFlag(FLAGS_json); }

std::string DbPath() {
  const std::string flag = absl::GetFlag(FLAGS_db);
  return flag.empty() ? DefaultTuningDbPath() : flag;
}

std::vector<std::string> PluginFlag() { return absl::GetFlag(FLAGS_plugin); }

}  // namespace rooftune::cli
