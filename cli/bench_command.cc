// rooftune bench: one config timed, judged against the roofline, and its levers priced; an int8
// kernel also against rooftune's f32 kernel on the same shape.
#include <iostream>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "cli/benchmark_json.h"
#include "cli/call_counters.h"
#include "cli/common.h"
#include "cli/isolated_trials.h"
#include "cli/report_command.h"
#include "cli/subcommands.h"
#include "framework/harness.h"
#include "framework/int8_speedup.h"
#include "framework/judged_trial.h"
#include "framework/roofline.h"
#include "probes/paired_calls.h"
#include "probes/paired_ceiling.h"
#include "reports/levers.h"
#include "reports/report.h"

namespace rooftune::cli {
namespace {

// The optimisation levers of a timed trial: this run's verdict prices them, and the database's
// rows for this machine give the measured ratios (and price fewer bytes by the narrower
// workload's own row). None for a wrong result or a broken model.
absl::StatusOr<std::vector<reports::Lever>> TrialLevers(Session& session,
                                                        const MachineProfile& profile,
                                                        const Trial& t, const Verdict& v) {
  if (!t.validation.ok) return std::vector<reports::Lever>{};
  absl::StatusOr<reports::ReportInput> stored = GatherReport(session, profile);
  if (!stored.ok()) return stored.status();
  TunedResult row;
  row.kernel = t.kernel;
  row.workload = t.workload.Key();
  row.dtype = t.workload.dtype;
  row.threads = t.threads;
  row.median_seconds = t.seconds.median;
  stored->results.push_back(row);
  stored->verdicts.push_back(v);
  return reports::LeversOf(*stored, stored->results.size() - 1);
}

void PrintTrial(const Trial& t, const ParamSpace& params, const Verdict& v,
                const CeilingSet& ceilings, CacheChoice cache) {
  std::cout << t.kernel << "  " << t.workload.Key() << "  threads=" << t.threads << "  "
            << ToString(t.cache) << " cache";
  // Say why when the flags did not choose: the operands outgrow the caches and stream from DRAM.
  if (t.cache == CacheMode::kCold && cache == CacheChoice::kByWorkload) {
    std::cout << " (its operands stream from DRAM in use; --warm to time it warm)";
  }
  std::cout << "\n";
  std::cout << "  config      " << ConfigText(params, t.config) << " (" << t.config_source << ")\n";
  std::cout << "  validation  " << t.validation.Summary() << "\n";
  if (!t.validation.ok) return;
  std::cout << absl::StrFormat("  time        median %s  min %s  CV %.1f%%  (%d repetitions)%s\n",
                               reports::FormatSeconds(t.seconds.median),
                               reports::FormatSeconds(t.seconds.min), 100 * t.seconds.cv,
                               t.seconds.count, t.noisy ? "  NOISY: do not quote" : "");
  std::cout << "  rate        " << reports::FormatRate(t.OpsPerSecond(), t.workload.dtype) << "\n";
  if (v.verdict == Verdict::Class::kNoModel) {
    std::cout << "  roofline    " << v.diagnosis << "\n";
    return;
  }
  std::cout << absl::StrFormat("  roofline    bound %s by %s -> attainment %s (%s)\n",
                               reports::FormatSeconds(v.bound_seconds), v.binding,
                               reports::FormatAttainment(v.attainment), ToString(v.verdict));
  std::cout << "              "
            << reports::AttainmentBasis(v.paired, v.profile_attainment, v.tolerance) << "\n";
  for (const LevelBound& b : v.bounds) {
    const bool compute = b.ceiling.kind == Ceiling::Kind::kCompute;
    std::cout << absl::StrFormat(
        "    %-28s %s over %s = %s\n", b.ceiling.Name(),
        compute ? absl::StrFormat("%.3g ops", b.work) : reports::FormatBytes(b.work),
        compute ? reports::FormatRate(b.ceiling.per_second, b.ceiling.dtype)
                : absl::StrFormat("%.1f GB/s", b.ceiling.per_second / 1e9),
        reports::FormatSeconds(b.seconds));
  }
  if (v.pass_seconds > 0) {
    std::cout << absl::StrFormat("    %-28s %s more\n", "then a separate pass",
                                 reports::FormatSeconds(v.pass_seconds));
  }
  for (const std::string& note : ceilings.notes) std::cout << "    note: " << note << "\n";
  if (!v.diagnosis.empty()) std::cout << "  DIAGNOSIS   " << v.diagnosis << "\n";
}

// An int8 kernel's speedup over the f32 kernel it declares (ComparedWithF32), timed on the same
// shape under the same conditions, beside its analytic bound.
struct Int8VsF32 {
  const Kernel* f32_kernel = nullptr;
  Trial f32;
  double speedup = 0;
  SpeedupBound bound;
  double FractionOfBound() const { return bound.ratio > 0 ? speedup / bound.ratio : 0; }
};

absl::StatusOr<std::optional<Int8VsF32>> CompareWithF32(Session& session,
                                                        const MachineProfile& profile,
                                                        const Selection& int8, const Trial& trial,
                                                        const TimingOptions& timing) {
  if (!HasInt8Weights(int8.workload.dtype) || !trial.validation.ok) return std::nullopt;
  const Workload workload = F32Counterpart(int8.workload);
  const Kernel* f32 = KernelRegistry::Global().Find(int8.kernel->f32_counterpart);
  if (f32 == nullptr || !f32->Supports(workload)) return std::nullopt;
  // Its best stored config (else its initial one), whatever --config says of the int8 kernel.
  absl::StatusOr<ReadyToRun> ready =
      MakeReady(session, Selection{f32, workload, int8.threads}, timing.cache, "", profile);
  if (!ready.ok()) return ready.status();
  Executor executor(int8.threads);
  absl::StatusOr<Trial> f32_trial =
      RunTrial(*f32, ready->config.config, ready->problem, ready->reference, executor, timing);
  if (!f32_trial.ok()) return f32_trial.status();
  f32_trial->config_source = ready->config.source;
  absl::StatusOr<SpeedupBound> bound =
      Int8SpeedupBound(profile, int8.workload, int8.threads, timing.cache == CacheMode::kWarm);
  if (!bound.ok()) return bound.status();
  Int8VsF32 c{f32, *std::move(f32_trial), 0, *bound};
  c.speedup = c.f32.seconds.median / trial.seconds.median;
  return c;
}

void PrintInt8VsF32(const Int8VsF32& c) {
  std::cout << absl::StrFormat("  vs f32      %s (%s): median %s, %s\n", c.f32.kernel,
                               c.f32.config_source, reports::FormatSeconds(c.f32.seconds.median),
                               reports::FormatRate(c.f32.OpsPerSecond(), c.f32.workload.dtype));
  const double fraction = c.FractionOfBound();
  // speedup / bound = (int8 attainment) / (f32 attainment), both against compulsory traffic.
  const double f32_attainment = c.bound.f32_bound_seconds / c.f32.seconds.median;
  const double int8_attainment = f32_attainment * fraction;
  std::cout << absl::StrFormat(
      "  int8/f32    speedup %.2fx; analytic bound %.2fx (%s) -> %.0f%% of the bound\n"
      "              (= int8 at %.2f of its roofline over f32 at %.2f of its%s)\n",
      c.speedup, c.bound.ratio, c.bound.basis, 100 * fraction, int8_attainment, f32_attainment,
      fraction > 1 ? ": above the bound because the f32 kernel is further below its ceiling" : "");
}

nlohmann::json Int8VsF32Json(const Int8VsF32& c) {
  return {{"f32_kernel", c.f32.kernel},
          {"f32_config", c.f32_kernel->params.Format(c.f32.config)},
          {"f32_real_time", c.f32.seconds.median * 1e9},
          {"speedup", c.speedup},
          {"bound", c.bound.ratio},
          {"bound_basis", c.bound.basis},
          {"fraction_of_bound", c.FractionOfBound()}};
}

// Another kernel on the same workload and threads, timed in pairs with ours (--versus).
struct Versus {
  const Kernel* kernel = nullptr;
  Config config;
  std::string config_source;
  Validation validation;
  probes::PairedSpeedup speedup;  // of ours over it; pairs 0 when its result was wrong
};

// Runs `other` as bench runs its own kernel (its stored config, else its initial one; first in a
// worker unless --in-process), validates it, then times it in pairs with ours, which
// `ours` samples.
absl::StatusOr<Versus> TimeVersus(Session& session, const MachineProfile& profile,
                                  const BenchOptions& options, const Kernel& other, CacheMode cache,
                                  probes::KernelSamples& ours, Executor& executor) {
  const Selection selection{&other, options.selection.workload, options.selection.threads};
  absl::StatusOr<ReadyToRun> ready = MakeReady(session, selection, cache, "", profile);
  if (!ready.ok()) return ready.status();
  Versus v{&other, ready->config.config, ready->config.source};
  if (!options.in_process) {
    if (absl::Status s =
            RunsInAWorker(other, selection.workload, selection.threads, v.config, cache);
        !s.ok()) {
      return s;
    }
  }
  absl::StatusOr<Validation> validation =
      ValidateConfig(other, v.config, ready->problem, ready->reference, executor);
  if (!validation.ok()) return validation.status();
  v.validation = *validation;
  if (!v.validation.ok) return v;
  absl::StatusOr<Prepared> prepared = Prepare(other, v.config, ready->problem);
  if (!prepared.ok()) return prepared.status();
  probes::KernelSamples theirs(other, v.config, ready->problem, *prepared, executor, cache);
  absl::StatusOr<probes::PairedSpeedup> speedup = probes::MeasurePairedSpeedup(ours, theirs);
  if (!speedup.ok()) return speedup.status();
  v.speedup = *speedup;
  return v;
}

// Each --versus kernel timed in pairs with the trial's config (validated already).
absl::StatusOr<std::vector<Versus>> TimeAllVersus(Session& session, const MachineProfile& profile,
                                                  const BenchOptions& options, const Trial& trial,
                                                  Problem& problem, Executor& executor) {
  std::vector<Versus> all;
  if (options.versus.empty() || !trial.validation.ok) return all;
  const Kernel& kernel = *options.selection.kernel;
  absl::StatusOr<Prepared> prepared = Prepare(kernel, trial.config, problem);
  if (!prepared.ok()) return prepared.status();
  probes::KernelSamples ours(kernel, trial.config, problem, *prepared, executor, trial.cache);
  for (const Kernel* other : options.versus) {
    absl::StatusOr<Versus> v =
        TimeVersus(session, profile, options, *other, trial.cache, ours, executor);
    if (!v.ok()) return v.status();
    all.push_back(*std::move(v));
  }
  return all;
}

void PrintVersus(const Versus& v) {
  std::cout << "  versus      " << v.kernel->name << " ("
            << (v.kernel->params.params().empty()
                    ? v.config_source
                    : absl::StrCat(ConfigText(v.kernel->params, v.config), ", ", v.config_source))
            << "): ";
  if (!v.validation.ok) {
    std::cout << "not timed: " << v.validation.Summary() << "\n";
    return;
  }
  std::cout << absl::StrFormat("%.2fx (quartiles %.2f-%.2f, %d pairs); median call %s, ours %s\n",
                               v.speedup.median, v.speedup.low, v.speedup.high, v.speedup.pairs,
                               reports::FormatSeconds(v.speedup.theirs_seconds),
                               reports::FormatSeconds(v.speedup.ours_seconds));
}

nlohmann::json VersusJson(const Versus& v) {
  nlohmann::json j = {{"kernel", v.kernel->name},
                      {"config", v.kernel->params.Format(v.config)},
                      {"config_source", v.config_source},
                      {"validation", v.validation.Summary()}};
  if (v.validation.ok) {
    j["speedup"] = v.speedup.median;
    j["speedup_low"] = v.speedup.low;
    j["speedup_high"] = v.speedup.high;
    j["pairs"] = v.speedup.pairs;
    j["real_time"] = v.speedup.theirs_seconds * 1e9;
    j["our_real_time"] = v.speedup.ours_seconds * 1e9;
  }
  return j;
}

}  // namespace

absl::StatusOr<int> BenchCommand(Session& session) {
  absl::StatusOr<BenchOptions> options = BenchOptionsFromFlags(session);
  if (!options.ok()) return options.status();
  const Selection* p = &options->selection;
  absl::StatusOr<MachineProfile> profile = session.MeasuredProfile(/*quick=*/true, /*force=*/false);
  if (!profile.ok()) return profile.status();
  TimingOptions timing;
  timing.cache = CacheFor(options->cache, *profile, p->workload, p->threads);
  absl::StatusOr<ReadyToRun> ready =
      MakeReady(session, *p, timing.cache, options->config, *profile);
  if (!ready.ok()) return ready.status();
  if (!options->in_process) {
    if (absl::Status s =
            RunsInAWorker(*p->kernel, p->workload, p->threads, ready->config.config, timing.cache);
        !s.ok()) {
      return s;
    }
  }
  Executor executor(p->threads);
  // Counted over the timed calls only (not the validation, warm-up or eviction), added up and
  // divided per call.
  std::optional<CallCounters> counters;
  int counted_calls = 0;
  TimingOptions trial_timing = timing;
  if (options->counters) {
    absl::StatusOr<CallCounters> opened = CallCounters::Open(executor);
    if (!opened.ok()) return opened.status();
    counters.emplace(*std::move(opened));
    trial_timing.before_call = [&] { counters->Resume(); };
    trial_timing.after_call = [&] {
      counters->Stop();
      ++counted_calls;
    };
  }
  absl::StatusOr<Trial> trial = RunTrial(*p->kernel, ready->config.config, ready->problem,
                                         ready->reference, executor, trial_timing);
  if (!trial.ok()) return trial.status();
  const std::vector<probes::CountedFigure> figures =
      counters ? counters->PerCall(counted_calls) : std::vector<probes::CountedFigure>();
  trial->config_source = ready->config.source;
  const CeilingSet ceilings = SelectCeilings(*profile, p->workload.dtype, p->threads);
  absl::StatusOr<Verdict> judged =
      probes::JudgeBesideCeiling(*profile, *p->kernel, *trial, ready->problem, executor);
  if (!judged.ok()) return judged.status();
  const Verdict& verdict = *judged;
  absl::StatusOr<std::optional<Int8VsF32>> vs_f32 =
      CompareWithF32(session, *profile, *p, *trial, timing);
  if (!vs_f32.ok()) return vs_f32.status();
  absl::StatusOr<std::vector<reports::Lever>> levers =
      TrialLevers(session, *profile, *trial, verdict);
  if (!levers.ok()) return levers.status();
  absl::StatusOr<std::vector<Versus>> versus =
      TimeAllVersus(session, *profile, *options, *trial, ready->problem, executor);
  if (!versus.ok()) return versus.status();
  if (options->json) {
    nlohmann::json context = {{"schema_version", kJsonSchemaVersion},
                              {"date", reports::NowUtc()},
                              {"host_name", profile->cpu_model},
                              {"num_cpus", profile->logical_cpus},
                              {"fingerprint", profile->Fingerprint()}};
    nlohmann::json benchmark = TrialJson(*trial, verdict, p->kernel->params);
    if (vs_f32->has_value()) benchmark["int8_vs_f32"] = Int8VsF32Json(**vs_f32);
    benchmark["levers"] = reports::LeversJson(*levers);
    if (!versus->empty()) {
      benchmark["versus"] = nlohmann::json::array();
      for (const Versus& v : *versus) benchmark["versus"].push_back(VersusJson(v));
    }
    if (counters) {
      benchmark["counters"] = CountersJson(figures, counted_calls, counters->cpus(), verdict);
    }
    nlohmann::json rows = nlohmann::json::array({benchmark});
    for (nlohmann::json& row : AggregateRowsJson(*trial)) rows.push_back(std::move(row));
    std::cout << nlohmann::json{{"context", context}, {"benchmarks", rows}}.dump(2) << "\n";
  } else {
    PrintTrial(*trial, p->kernel->params, verdict, ceilings, options->cache);
    if (counters && trial->validation.ok) {
      PrintCounters(figures, counted_calls, counters->scope(), verdict, p->workload);
    }
    if (vs_f32->has_value()) PrintInt8VsF32(**vs_f32);
    for (const Versus& v : *versus) PrintVersus(v);
    if (!levers->empty()) {
      std::cout << "  levers      in the order they pay: the roofline's gain, the first that pays "
                   "marked\n"
                << reports::LeversText(*levers, "    ");
    }
  }
  return trial->validation.ok ? 0 : 1;
}

}  // namespace rooftune::cli
