#include "cli/commands.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "cli/session.h"
#include "framework/harness.h"
#include "framework/int8_speedup.h"
#include "framework/judged_trial.h"
#include "framework/roofline.h"
#include "framework/tuner.h"
#include "probes/counters.h"
#include "probes/simulated_counters.h"
#if defined(ROOFTUNE_HAVE_VALGRIND)
#include <valgrind/callgrind.h>
#else
#define CALLGRIND_START_INSTRUMENTATION
#define CALLGRIND_STOP_INSTRUMENTATION
#endif
#include "probes/pmu_events.h"
#include "reports/levers.h"
#include "reports/report.h"
#include "reports/svg.h"

ABSL_FLAG(std::string, kernel, "", "kernel name (rooftune list)");
ABSL_FLAG(std::string, shape, "", "MxNxK for gemm, NxK for gemv");
ABSL_FLAG(std::string, dtype, "", "f32, u8s8 (gemm) or s8f32 (gemv); default: the kernel's first");
ABSL_FLAG(std::string, epilogue, "", "none, bias or bias_relu; default: the kernel's first");
ABSL_FLAG(std::string, config, "", "p=v,... tunable values");
ABSL_FLAG(std::string, threads, "", "thread count (tune: a list such as 1,2)");
ABSL_FLAG(bool, cold, false,
          "evict the operands from the caches before every timed repetition (the default for "
          "workloads the roofline says stream from DRAM: GEMV, and GEMMs it calls memory-bound)");
ABSL_FLAG(bool, warm, false, "time with warm caches even a workload that streams from DRAM");
ABSL_FLAG(bool, json, false, "print JSON instead of text");
ABSL_FLAG(std::string, strategy, "exhaustive", "tuning strategy");
ABSL_FLAG(double, budget_seconds, 60,
          "tuning time limit per kernel, workload and thread count: the search takes the first "
          "75%, then finals re-time the fastest few and the initial config round-robin");
ABSL_FLAG(bool, quick, false, "shorter probes and fewer shapes");
ABSL_FLAG(bool, force, false, "re-measure the machine even when a cached profile matches");
ABSL_FLAG(bool, fresh, false,
          "re-measure (as --force) and store this probe's ceilings as measured, instead of "
          "keeping each stored one it measures lower");
ABSL_FLAG(std::string, format, "md", "report format: md, html or json");
ABSL_FLAG(std::string, out, "", "output folder");
ABSL_FLAG(std::string, db, "", "tuning database file (default $ROOFTUNE_DB, else ~/.cache/rooftune/tuning.db)");
ABSL_FLAG(std::vector<std::string>, plugin, {}, "shared libraries with more kernels, comma-separated");

namespace rooftune::cli {
namespace {

constexpr int kJsonSchemaVersion = 1;

std::string DbPath() {
  const std::string flag = absl::GetFlag(FLAGS_db);
  return flag.empty() ? DefaultTuningDbPath() : flag;
}

void Progress(const std::string& line) { std::cerr << line << "\n"; }

bool IsInteger(Dtype dtype) { return dtype == Dtype::kU8S8; }

absl::Status LoadPlugins() {
  for (const std::string& path : absl::GetFlag(FLAGS_plugin)) {
    if (absl::Status s = KernelRegistry::Global().LoadPlugin(path); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::StatusOr<int> SingleThreadCount(Session& session) {
  const std::string text = absl::GetFlag(FLAGS_threads);
  absl::StatusOr<std::vector<int>> threads = session.ParseThreads(text.empty() ? "1" : text);
  if (!threads.ok()) return threads.status();
  if (threads->size() != 1) return UsageError("--threads takes one thread count here");
  return threads->front();
}

nlohmann::json KernelJson(const Kernel& k) {
  nlohmann::json params = nlohmann::json::array();
  for (const Param& p : k.params.params()) {
    params.push_back({{"name", p.name}, {"domain", p.domain}, {"help", p.help}});
  }
  nlohmann::json constraints = nlohmann::json::array();
  for (const Constraint& c : k.params.constraints()) constraints.push_back(c.description);
  std::vector<std::string> dtypes, epilogues;
  for (Dtype d : k.dtypes) dtypes.emplace_back(ToString(d));
  for (Epilogue e : k.epilogues) epilogues.emplace_back(ToString(e));
  return {{"name", k.name},           {"op", ToString(k.op)},
          {"dtypes", dtypes},         {"epilogues", epilogues},
          {"params", params},         {"constraints", constraints},
          {"description", k.description}, {"reference", k.reference},
          {"threading", k.threading == Threading::kTbb ? "tbb" : "self"},
          {"origin", k.origin},       {"valid_configs", k.params.CountValid()}};
}

absl::StatusOr<int> List() {
  const bool json = absl::GetFlag(FLAGS_json);
  nlohmann::json all = nlohmann::json::array();
  for (const Kernel* k : KernelRegistry::Global().All()) {
    if (json) {
      all.push_back(KernelJson(*k));
      continue;
    }
    std::vector<std::string> dtypes, epilogues;
    for (Dtype d : k->dtypes) dtypes.emplace_back(ToString(d));
    for (Epilogue e : k->epilogues) epilogues.emplace_back(ToString(e));
    std::cout << k->name << "  (" << ToString(k->op) << "; " << absl::StrJoin(dtypes, ", ")
              << "; epilogues " << absl::StrJoin(epilogues, ", ") << ")"
              << (k->origin != "builtin" ? "  from " + k->origin : "") << "\n";
    if (!k->description.empty()) std::cout << "    " << k->description << "\n";
    for (const Param& p : k->params.params()) {
      std::cout << absl::StrFormat("    %-4s {%s}  %s\n", p.name, absl::StrJoin(p.domain, ","), p.help);
    }
    for (const Constraint& c : k->params.constraints()) std::cout << "    requires " << c.description << "\n";
    if (!k->params.params().empty()) {
      std::cout << "    " << k->params.CountValid() << " valid configs of "
                << k->params.CrossProductSize() << "\n";
    }
  }
  if (json) std::cout << nlohmann::json{{"schema_version", kJsonSchemaVersion}, {"kernels", all}}.dump(2) << "\n";
  return 0;
}

struct Selection {
  const Kernel* kernel;
  Workload workload;
  int threads = 1;
};

// --kernel, --shape, --dtype and --epilogue.
absl::StatusOr<Selection> SelectKernelAndWorkload(Session& session) {
  absl::StatusOr<const Kernel*> kernel = session.FindKernel(absl::GetFlag(FLAGS_kernel));
  if (!kernel.ok()) return kernel.status();
  absl::StatusOr<Workload> workload =
      session.ParseWorkloadFor(**kernel, absl::GetFlag(FLAGS_shape), absl::GetFlag(FLAGS_dtype),
                               absl::GetFlag(FLAGS_epilogue));
  if (!workload.ok()) return workload.status();
  return Selection{*kernel, *workload};
}

// The same, with one --threads count.
absl::StatusOr<Selection> Prepare(Session& session) {
  absl::StatusOr<Selection> selection = SelectKernelAndWorkload(session);
  if (!selection.ok()) return selection.status();
  absl::StatusOr<int> threads = SingleThreadCount(session);
  if (!threads.ok()) return threads.status();
  selection->threads = *threads;
  return selection;
}

absl::StatusOr<int> Verify(Session& session) {
  absl::StatusOr<Selection> p = Prepare(session);
  if (!p.ok()) return p.status();
  absl::StatusOr<Session::ResolvedConfig> config = session.ResolveConfig(
      *p->kernel, p->workload, p->threads, absl::GetFlag(FLAGS_config), session.Facts());
  if (!config.ok()) return config.status();
  absl::StatusOr<Problem> problem = Problem::Create(p->workload);
  if (!problem.ok()) return problem.status();
  const ReferenceOutput reference = ComputeReference(*problem);
  Executor executor(p->threads);
  absl::StatusOr<Validation> v =
      ValidateConfig(*p->kernel, config->config, *problem, reference, executor);
  if (!v.ok()) return v.status();
  if (absl::GetFlag(FLAGS_json)) {
    std::cout << nlohmann::json{{"schema_version", kJsonSchemaVersion},
                                {"kernel", p->kernel->name},
                                {"workload", p->workload.Key()},
                                {"threads", p->threads},
                                {"config", config->config.ToString()},
                                {"config_source", config->source},
                                {"correct", v->ok},
                                {"mismatches", v->mismatches},
                                {"max_abs_error", v->max_abs_error},
                                {"first_mismatch", v->first_mismatch}}
                     .dump(2)
              << "\n";
  } else {
    std::cout << (v->ok ? "PASS " : "FAIL ") << p->kernel->name << "  " << p->workload.Key()
              << "  threads=" << p->threads << "  config=" << config->config.ToString() << " ("
              << config->source << ")\n  " << v->Summary() << "\n";
  }
  return v->ok ? 0 : 1;
}

nlohmann::json TrialJson(const Trial& t, const Verdict& v) {
  const std::string name = absl::StrCat(t.kernel, "/", t.workload.ShapeString(), "/",
                                        ToString(t.workload.dtype), "/",
                                        ToString(t.workload.epilogue), "/threads:", t.threads);
  return {{"name", name},
          {"kernel", t.kernel},
          {"workload", t.workload.Key()},
          {"threads", t.threads},
          {"config", t.config.ToString()},
          {"config_source", t.config_source},
          {"cache", ToString(t.cache)},
          {"correct", t.validation.ok},
          {"iterations", t.seconds.count},
          {"real_time", t.seconds.median * 1e9},
          {"min_time", t.seconds.min * 1e9},
          {"time_unit", "ns"},
          {"cv", t.seconds.cv},
          {"noisy", t.noisy},
          {"ops_per_second", t.OpsPerSecond()},
          {"ops_unit", IsInteger(t.workload.dtype) ? "OP/s" : "FLOP/s"},
          {"bound_seconds", v.bound_seconds},
          {"attainment", v.attainment},
          {"binding_ceiling", v.binding},
          {"verdict", ToString(v.verdict)},
          {"diagnosis", v.diagnosis}};
}

// The optimisation levers of a timed trial: this run's verdict prices them, and the database's
// rows for this machine give the measured ratios (and price fewer bytes by the narrower
// workload's own row). None for a wrong result or a broken model.
absl::StatusOr<reports::ReportInput> GatherReport(Session& session, const MachineProfile& profile);
absl::StatusOr<std::vector<reports::Lever>> TrialLevers(Session& session,
                                                        const MachineProfile& profile,
                                                        const Trial& t, const Verdict& v) {
  if (!t.validation.ok) return std::vector<reports::Lever>{};
  absl::StatusOr<reports::ReportInput> stored = GatherReport(session, profile);
  if (!stored.ok()) return stored.status();
  TunedResult row;
  row.kernel = t.kernel;
  row.workload = t.workload.Key();
  row.dtype = std::string(ToString(t.workload.dtype));
  row.threads = t.threads;
  row.median_seconds = t.seconds.median;
  stored->results.push_back(row);
  stored->verdicts.push_back(v);
  return reports::LeversOf(*stored, stored->results.size() - 1);
}

void PrintTrial(const Trial& t, const Verdict& v, const CeilingSet& ceilings) {
  std::cout << t.kernel << "  " << t.workload.Key() << "  threads=" << t.threads << "  "
            << ToString(t.cache) << " cache";
  // Say why when the flags did not choose: the operands outgrow the caches and stream from DRAM.
  if (t.cache == CacheMode::kCold && !absl::GetFlag(FLAGS_cold)) {
    std::cout << " (its operands stream from DRAM in use; --warm to time it warm)";
  }
  std::cout << "\n";
  std::cout << "  config      " << t.config.ToString() << " (" << t.config_source << ")\n";
  std::cout << "  validation  " << t.validation.Summary() << "\n";
  if (!t.validation.ok) return;
  std::cout << absl::StrFormat("  time        median %s  min %s  CV %.1f%%  (%d repetitions)%s\n",
                               reports::FormatSeconds(t.seconds.median),
                               reports::FormatSeconds(t.seconds.min), 100 * t.seconds.cv,
                               t.seconds.count, t.noisy ? "  NOISY: do not quote" : "");
  std::cout << "  rate        " << reports::FormatRate(t.OpsPerSecond(), IsInteger(t.workload.dtype)) << "\n";
  if (v.verdict == Verdict::Class::kNoModel) {
    std::cout << "  roofline    " << v.diagnosis << "\n";
    return;
  }
  std::cout << absl::StrFormat("  roofline    bound %s by %s -> attainment %.2f (%s)\n",
                               reports::FormatSeconds(v.bound_seconds), v.binding, v.attainment,
                               ToString(v.verdict));
  for (const LevelBound& b : v.bounds) {
    const bool compute = b.ceiling.kind == Ceiling::Kind::kCompute;
    std::cout << absl::StrFormat("    %-28s %s over %s = %s\n", b.ceiling.Name(),
                                 compute ? absl::StrFormat("%.3g ops", b.work)
                                         : reports::FormatBytes(b.work),
                                 compute ? reports::FormatRate(b.ceiling.per_second, IsInteger(b.ceiling.dtype))
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

// Cold or warm, as --cold or --warm say, else cold for a workload that streams its operands from
// DRAM (StreamsFromDram): timed warm, a cache larger than the one this process measures can hold
// part of them, and the DRAM roofline then looks beaten.
absl::Status CheckCacheFlags() {
  if (absl::GetFlag(FLAGS_cold) && absl::GetFlag(FLAGS_warm)) {
    return UsageError("--cold and --warm exclude each other");
  }
  return absl::OkStatus();
}

TimingOptions TimingFor(const MachineProfile& profile, const Workload& w, int threads) {
  TimingOptions timing;
  const bool cold = absl::GetFlag(FLAGS_cold) ||
                    (!absl::GetFlag(FLAGS_warm) && StreamsFromDram(profile, w, threads));
  timing.cache = cold ? CacheMode::kCold : CacheMode::kWarm;
  return timing;
}

// An int8 kernel's speedup over rooftune's own fp32 kernel of the same op ("gemm_f32",
// "gemv_f32"), timed on the same shape under the same conditions, beside its analytic bound.
struct Int8VsF32 {
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
  const Kernel* f32 = KernelRegistry::Global().Find(absl::StrCat(ToString(workload.op), "_f32"));
  if (f32 == nullptr || !f32->Supports(workload)) return std::nullopt;
  absl::StatusOr<Session::ResolvedConfig> config =
      session.ResolveConfig(*f32, workload, int8.threads, "", profile);
  if (!config.ok()) return config.status();
  absl::StatusOr<Problem> problem = Problem::Create(workload);
  if (!problem.ok()) return problem.status();
  Executor executor(int8.threads);
  absl::StatusOr<Trial> f32_trial = RunTrial(*f32, config->config, *problem,
                                             ComputeReference(*problem), executor, timing);
  if (!f32_trial.ok()) return f32_trial.status();
  f32_trial->config_source = config->source;
  absl::StatusOr<SpeedupBound> bound = Int8SpeedupBound(profile, int8.workload, int8.threads,
                                                        timing.cache == CacheMode::kWarm);
  if (!bound.ok()) return bound.status();
  Int8VsF32 c{*std::move(f32_trial), 0, *bound};
  c.speedup = c.f32.seconds.median / trial.seconds.median;
  return c;
}

void PrintInt8VsF32(const Int8VsF32& c) {
  std::cout << absl::StrFormat("  vs f32      %s (%s): median %s, %s\n", c.f32.kernel,
                               c.f32.config_source, reports::FormatSeconds(c.f32.seconds.median),
                               reports::FormatRate(c.f32.OpsPerSecond(), false));
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
          {"f32_config", c.f32.config.ToString()},
          {"f32_real_time", c.f32.seconds.median * 1e9},
          {"speedup", c.speedup},
          {"bound", c.bound.ratio},
          {"bound_basis", c.bound.basis},
          {"fraction_of_bound", c.FractionOfBound()}};
}

absl::StatusOr<int> Bench(Session& session) {
  if (absl::Status s = CheckCacheFlags(); !s.ok()) return s;
  absl::StatusOr<Selection> p = Prepare(session);
  if (!p.ok()) return p.status();
  absl::StatusOr<MachineProfile> profile = session.MeasuredProfile(/*quick=*/true, /*force=*/false);
  if (!profile.ok()) return profile.status();
  absl::StatusOr<Session::ResolvedConfig> config = session.ResolveConfig(
      *p->kernel, p->workload, p->threads, absl::GetFlag(FLAGS_config), *profile);
  if (!config.ok()) return config.status();
  absl::StatusOr<Problem> problem = Problem::Create(p->workload);
  if (!problem.ok()) return problem.status();
  const ReferenceOutput reference = ComputeReference(*problem);
  Executor executor(p->threads);
  const TimingOptions timing = TimingFor(*profile, p->workload, p->threads);
  absl::StatusOr<Trial> trial =
      RunTrial(*p->kernel, config->config, *problem, reference, executor, timing);
  if (!trial.ok()) return trial.status();
  trial->config_source = config->source;
  const CeilingSet ceilings = SelectCeilings(*profile, p->workload.dtype, p->threads);
  const Verdict verdict = JudgeTrial(*profile, *p->kernel, *trial);
  absl::StatusOr<std::optional<Int8VsF32>> vs_f32 =
      CompareWithF32(session, *profile, *p, *trial, timing);
  if (!vs_f32.ok()) return vs_f32.status();
  absl::StatusOr<std::vector<reports::Lever>> levers = TrialLevers(session, *profile, *trial, verdict);
  if (!levers.ok()) return levers.status();
  if (absl::GetFlag(FLAGS_json)) {
    nlohmann::json context = {{"schema_version", kJsonSchemaVersion},
                              {"date", reports::NowUtc()},
                              {"host_name", profile->cpu_model},
                              {"num_cpus", profile->logical_cpus},
                              {"fingerprint", profile->Fingerprint()}};
    nlohmann::json benchmark = TrialJson(*trial, verdict);
    if (vs_f32->has_value()) benchmark["int8_vs_f32"] = Int8VsF32Json(**vs_f32);
    benchmark["levers"] = reports::LeversJson(*levers);
    std::cout << nlohmann::json{{"context", context}, {"benchmarks", {benchmark}}}.dump(2) << "\n";
  } else {
    PrintTrial(*trial, verdict, ceilings);
    if (vs_f32->has_value()) PrintInt8VsF32(**vs_f32);
    if (!levers->empty()) {
      std::cout << "  levers      in the order they pay: the roofline's gain, the first that pays marked\n"
                << reports::LeversText(*levers, "    ");
    }
  }
  return trial->validation.ok ? 0 : 1;
}

// Tunes one kernel on one workload at each thread count and stores every winner.
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
    const Verdict verdict = JudgeTrial(profile, kernel, outcome->best);
    if (absl::Status s = (*db)->Put(TunedResultOf(profile, *outcome, verdict)); !s.ok()) return s;
    const double speedup = outcome->best.seconds.median > 0
                               ? outcome->initial.seconds.median / outcome->best.seconds.median
                               : 0;
    Progress(absl::StrFormat(
        "  best %s: %s, %s, attainment %.2f (%s); %d of %d configs tried%s, %d rejected; "
        "%.2fx over the initial %s",
        outcome->best.config.ToString(), reports::FormatSeconds(outcome->best.seconds.median),
        reports::FormatRate(outcome->best.OpsPerSecond(), IsInteger(workload.dtype)),
        verdict.attainment, ToString(verdict.verdict), outcome->configs_tried,
        outcome->configs_valid, outcome->budget_exhausted ? " (budget spent)" : "",
        outcome->configs_rejected, speedup, outcome->initial.config.ToString()));
    if (!verdict.diagnosis.empty()) Progress("  " + verdict.diagnosis);
    nlohmann::json j = TrialJson(outcome->best, verdict);
    j["initial_config"] = outcome->initial.config.ToString();
    j["initial_real_time"] = outcome->initial.seconds.median * 1e9;
    j["configs_tried"] = outcome->configs_tried;
    j["configs_valid"] = outcome->configs_valid;
    j["configs_candidates"] = outcome->configs_candidates;  // the nearest to the initial config
    j["configs_rejected"] = outcome->configs_rejected;
    j["budget_exhausted"] = outcome->budget_exhausted;
    out.push_back(j);
  }
  return out;
}

TuneOptions BaseTuneOptions() {
  TuneOptions options;
  options.strategy = absl::GetFlag(FLAGS_strategy);
  options.budget_seconds = absl::GetFlag(FLAGS_budget_seconds);
  options.progress = Progress;
  return options;
}

TuneOptions TuneOptionsFromFlags(const MachineProfile& profile, const Workload& w, int threads) {
  TuneOptions options = BaseTuneOptions();
  options.timing.cache = TimingFor(profile, w, threads).cache;
  return options;
}

absl::StatusOr<int> TuneCommand(Session& session) {
  if (absl::Status s = CheckCacheFlags(); !s.ok()) return s;
  absl::StatusOr<Selection> selection = SelectKernelAndWorkload(session);
  if (!selection.ok()) return selection.status();
  const Kernel* const* kernel = &selection->kernel;
  const Workload* workload = &selection->workload;
  const std::string threads_text = absl::GetFlag(FLAGS_threads);
  absl::StatusOr<std::vector<int>> threads = session.ParseThreads(threads_text.empty() ? "1" : threads_text);
  if (!threads.ok()) return threads.status();
  if (absl::GetFlag(FLAGS_strategy) != "exhaustive") {
    return UsageError(absl::StrCat("unknown --strategy '", absl::GetFlag(FLAGS_strategy), "' (exhaustive)"));
  }
  if (!(absl::GetFlag(FLAGS_budget_seconds) > 0)) return UsageError("--budget-seconds must be positive");
  absl::StatusOr<MachineProfile> profile = session.MeasuredProfile(true, false);
  if (!profile.ok()) return profile.status();
  // Per thread count: whether the workload streams from DRAM depends on its ceilings.
  std::vector<nlohmann::json> results;
  for (int t : *threads) {
    absl::StatusOr<std::vector<nlohmann::json>> one = TuneOne(
        session, **kernel, *workload, {t}, *profile, TuneOptionsFromFlags(*profile, *workload, t));
    if (!one.ok()) return one.status();
    results.insert(results.end(), one->begin(), one->end());
  }
  absl::StatusOr<TuningDb*> db = session.Db();
  if (absl::GetFlag(FLAGS_json)) {
    std::cout << nlohmann::json{{"schema_version", kJsonSchemaVersion},
                                {"database", (*db)->path()},
                                {"benchmarks", results}}
                     .dump(2)
              << "\n";
  } else {
    for (const nlohmann::json& r : results) {
      std::cout << absl::StrFormat("%-50s %-60s %10.3f ms %8.1f G%s/s  attainment %.2f %s\n",
                                   r["name"].get<std::string>(), r["config"].get<std::string>(),
                                   r["real_time"].get<double>() / 1e6,
                                   r["ops_per_second"].get<double>() / 1e9,
                                   IsInteger(workload->dtype) ? "OP" : "FLOP",
                                   r["attainment"].get<double>(), r["verdict"].get<std::string>());
    }
    std::cout << "stored in " << (*db)->path() << "\n";
  }
  return 0;
}

absl::Status WriteFile(const std::string& path, const std::string& text);

std::string OutDir() {
  const std::string out = absl::GetFlag(FLAGS_out);
  return out.empty() ? "rooftune-report" : out;
}

// Tuned results placed on the roofline at their compulsory arithmetic intensity.
std::vector<reports::RooflinePoint> RooflinePoints(const std::vector<TunedResult>& results) {
  std::vector<reports::RooflinePoint> points;
  for (const TunedResult& r : results) {
    absl::StatusOr<Workload> w = ParseWorkloadKey(r.workload);
    if (!w.ok()) continue;
    points.push_back({absl::StrCat(r.kernel, " ", w->ShapeString(), " ", r.threads, "T"),
                      w->Operations() / w->CompulsoryBytes(), r.ops_per_second});
  }
  return points;
}

absl::Status WritePictures(const std::string& out, const MachineProfile& profile,
                           const std::vector<TunedResult>& results) {
  std::error_code ec;
  std::filesystem::create_directories(out, ec);
  if (absl::Status s = WriteFile(out + "/latency.svg", reports::LatencySvg(profile)); !s.ok()) return s;
  return WriteFile(out + "/roofline.svg", reports::RooflineSvg(profile, RooflinePoints(results)));
}

absl::StatusOr<int> Probe(Session& session) {
  absl::StatusOr<MachineProfile> profile =
      session.MeasuredProfile(absl::GetFlag(FLAGS_quick),
                              absl::GetFlag(FLAGS_force) || absl::GetFlag(FLAGS_fresh),
                              absl::GetFlag(FLAGS_fresh));
  if (!profile.ok()) return profile.status();
  const std::string out = OutDir();
  std::error_code ec;
  std::filesystem::create_directories(out, ec);
  if (absl::Status s = WriteFile(out + "/profile.json", profile->ToJson().dump(2) + "\n"); !s.ok()) return s;
  if (absl::Status s = WritePictures(out, *profile, {}); !s.ok()) return s;
  std::cerr << "wrote " << out << "/profile.json, latency.svg and roofline.svg\n";
  // Counters are a property of this process on this machine now (PMU passthrough, paranoia),
  // so they are checked live rather than cached.
  nlohmann::json counters = nlohmann::json::array();
  std::string counter_text;
  const std::string pmu = probes::DetectedCorePmu();
  absl::StatusOr<probes::CounterGroup> group = probes::CounterGroup::Open(probes::RooflineEvents());
  if (group.ok()) {
    absl::StrAppend(&counter_text, "\ncounters (libpfm4 + perf_event_open, user space, this thread): core PMU ",
                    pmu.empty() ? "none detected (no hardware counters exposed to this machine)" : pmu, "\n");
    for (const probes::CounterReading& r : group->Read()) {
      counters.push_back({{"event", r.event}, {"supported", r.supported}, {"reason", r.reason}});
      absl::StrAppend(&counter_text, absl::StrFormat("  %-48s %s\n", r.event,
                                                     r.supported ? "available" : r.reason));
    }
    if (const probes::PmuTable* table = probes::FindPmuTable(pmu); table != nullptr) {
      for (const std::string& caveat : table->caveats) absl::StrAppend(&counter_text, "  caveat: ", caveat, "\n");
    }
  } else {
    absl::StrAppend(&counter_text, "\ncounters: ", group.status().message(), "\n");
  }
  if (absl::GetFlag(FLAGS_json)) {
    nlohmann::json j = profile->ToJson();
    j["schema_version"] = kJsonSchemaVersion;
    j["counters"] = counters;
    j["core_pmu"] = pmu;
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << reports::RenderProfileText(*profile) << counter_text;
  }
  return 0;
}

absl::Status WriteFile(const std::string& path, const std::string& text) {
  // Write beside, then rename: a reader never sees half a report.
  const std::string temporary = path + ".tmp";
  {
    std::ofstream file(temporary);
    file << text;
    if (!file) return absl::PermissionDeniedError(absl::StrCat("cannot write ", temporary));
  }
  std::error_code ec;
  std::filesystem::rename(temporary, path, ec);
  if (ec) return absl::PermissionDeniedError(absl::StrCat("cannot write ", path, ": ", ec.message()));
  return absl::OkStatus();
}

// A workload's bound by the registered kernel whose own traffic model, at its analytic config,
// bounds it lowest (timed warm unless it streams from DRAM, as bench and tune would time it).
// Kernels without a model are left out: compulsory traffic would flatter them.
reports::ModelBoundFn BoundByTheBestModel(const MachineProfile& profile) {
  return [profile](const Workload& w, int threads) -> std::optional<reports::ModelBound> {
    std::optional<reports::ModelBound> best;
    for (const Kernel* kernel : KernelRegistry::Global().All()) {
      if (kernel->reference || !kernel->traffic || !kernel->Supports(w)) continue;
      Trial trial;
      trial.kernel = kernel->name;
      trial.workload = w;
      trial.config = kernel->InitialConfig(w, threads, profile);
      trial.threads = threads;
      trial.cache = StreamsFromDram(profile, w, threads) ? CacheMode::kCold : CacheMode::kWarm;
      trial.seconds.median = 1;  // only the bound is read
      const Verdict v = JudgeTrial(profile, *kernel, trial);
      if (v.bound_seconds > 0 && (!best || v.bound_seconds < best->seconds)) {
        best = reports::ModelBound{v.bound_seconds, kernel->name};
      }
    }
    return best;
  };
}

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

absl::StatusOr<int> Report(Session& session) {
  const std::string format = absl::GetFlag(FLAGS_format);
  if (format != "md" && format != "html" && format != "json") {
    return UsageError("--format must be md, html or json");
  }
  absl::StatusOr<MachineProfile> profile = session.MeasuredProfile(true, false);
  if (!profile.ok()) return profile.status();
  absl::StatusOr<reports::ReportInput> input = GatherReport(session, *profile);
  if (!input.ok()) return input.status();
  const std::string text = format == "md"     ? reports::RenderMarkdown(*input)
                           : format == "html" ? reports::RenderHtml(*input)
                                              : reports::RenderJson(*input).dump(2) + "\n";
  const std::string out = absl::GetFlag(FLAGS_out);
  if (out.empty()) {
    std::cout << text;
    return 0;
  }
  std::error_code ec;
  std::filesystem::create_directories(out, ec);
  if (absl::Status s = WriteFile(absl::StrCat(out, "/report.", format), text); !s.ok()) return s;
  std::cerr << "wrote " << out << "/report." << format << "\n";
  return 0;
}

absl::StatusOr<int> RunAll(Session& session) {
  const bool quick = absl::GetFlag(FLAGS_quick);
  absl::StatusOr<MachineProfile> profile = session.MeasuredProfile(
      quick, absl::GetFlag(FLAGS_force) || absl::GetFlag(FLAGS_fresh), absl::GetFlag(FLAGS_fresh));
  if (!profile.ok()) return profile.status();
  std::cout << reports::RenderProfileText(*profile) << "\n";
  std::vector<int> threads;
  for (int t = 1; t <= session.Facts().logical_cpus; ++t) {
    // Quick runs take one thread and all of them; full runs every count in between too.
    if (!quick || t == 1 || t == session.Facts().logical_cpus) threads.push_back(t);
  }
  TuneOptions options = BaseTuneOptions();
  options.budget_seconds = quick ? 4 : std::min(absl::GetFlag(FLAGS_budget_seconds), 30.0);
  std::vector<std::string> skipped;
  if (quick) options.final_rounds = 2;
  for (const Kernel* kernel : KernelRegistry::Global().All()) {
    if (kernel->reference) continue;
    for (const std::string& entry : quick ? kernel->quick_default_shapes : kernel->default_shapes) {
      absl::StatusOr<Workload> workload = kernel->DefaultWorkload(entry, AvailableMemoryBytes());
      if (!workload.ok()) return workload.status();
      // A workload that streams from DRAM (a GEMV, the decode-shape GEMM) is tuned cold: a cache
      // that holds part of its operands makes the DRAM roofline look beaten.
      TuneOptions kernel_options = options;
      const bool streams = std::any_of(threads.begin(), threads.end(), [&](int t) {
        return StreamsFromDram(*profile, *workload, t);
      });
      if (streams) TimeCold(quick ? 0.4 : 2, kernel_options);
      absl::StatusOr<std::vector<nlohmann::json>> tuned =
          TuneOne(session, *kernel, *workload, threads, *profile, kernel_options);
      // One kernel that cannot produce a correct result here (oneDNN's int8 on full-range data
      // without VNNI, say) must not cost the user the rest of the run: say so and go on.
      if (!tuned.ok() && absl::IsInternal(tuned.status())) {
        skipped.push_back(absl::StrCat(kernel->name, " ", workload->Key(), ": ", tuned.status().message()));
        Progress("  skipped: " + skipped.back());
        continue;
      }
      if (!tuned.ok()) return tuned.status();
    }
  }
  const std::string out = OutDir();
  std::error_code ec;
  std::filesystem::create_directories(out, ec);
  absl::StatusOr<reports::ReportInput> input = GatherReport(session, *profile);
  if (!input.ok()) return input.status();
  if (absl::Status s = WriteFile(out + "/report.md", reports::RenderMarkdown(*input)); !s.ok()) return s;
  if (absl::Status s = WriteFile(out + "/report.html", reports::RenderHtml(*input)); !s.ok()) return s;
  if (absl::Status s = WriteFile(out + "/report.json", reports::RenderJson(*input).dump(2) + "\n"); !s.ok()) return s;
  if (absl::Status s = WritePictures(out, *profile, input->results); !s.ok()) return s;
  std::cout << "\nsummary (pull first: the first lever that pays, and what the roofline gives it)\n";
  for (size_t i = 0; i < input->results.size(); ++i) {
    const TunedResult& r = input->results[i];
    const std::vector<reports::Lever> levers = reports::LeversOf(*input, i);
    const reports::Lever* first = reports::FirstThatPays(levers);
    std::cout << absl::StrFormat(
        "  %-18s %-32s threads=%d  %9s  %14s  attainment %.2f (%s, %s)%s\n", r.kernel, r.workload,
        r.threads, reports::FormatSeconds(r.median_seconds),
        reports::FormatRate(r.ops_per_second, r.dtype == "u8s8"), r.attainment, r.verdict, r.binding,
        first == nullptr ? ""
                         : absl::StrFormat("; pull first: %s %.1fx", reports::ToString(first->kind),
                                           first->gain));
  }
  for (const std::string& line : skipped) std::cout << "  SKIPPED (no correct config) " << line << "\n";
  std::cout << "\nwrote " << out << "/report.md, report.html and report.json; database "
            << DbPath() << "\n";
  return 0;
}

// Internal: one kernel call with valgrind's instrumentation switched on around it only, so the
// simulated caches see nothing of set-up (they start empty: a cold call).
absl::StatusOr<int> SimulateOnce(Session& session) {
  absl::StatusOr<Selection> p = Prepare(session);
  if (!p.ok()) return p.status();
  const MachineProfile& facts = session.Facts();
  absl::StatusOr<Config> config = p->kernel->params.Parse(
      absl::GetFlag(FLAGS_config), p->kernel->InitialConfig(p->workload, p->threads, facts));
  if (!config.ok()) return UsageError(absl::StrCat("--config: ", config.status().message()));
  absl::StatusOr<Problem> problem = Problem::Create(p->workload);
  if (!problem.ok()) return problem.status();
  Executor executor(p->threads);
  // Packing the weights is done ahead of time, outside the call, as in use (and as timed).
  absl::StatusOr<Prepared> prepared = rooftune::Prepare(*p->kernel, *config, *problem);
  if (!prepared.ok()) return prepared.status();
  CALLGRIND_START_INSTRUMENTATION;
  absl::Status status = executor.Run(*p->kernel, *config, *problem, prepared->object.get());
  CALLGRIND_STOP_INSTRUMENTATION;
  if (!status.ok()) return status;
  return 0;
}

absl::StatusOr<int> Simulate(Session& session) {
  absl::StatusOr<Selection> p = Prepare(session);
  if (!p.ok()) return p.status();
  // The config is checked here, not minutes into valgrind: its names and domains only, since
  // valgrind runs at most the AVX2 target and this CPU's target-dependent constraints need not
  // hold there.
  absl::StatusOr<Config> wanted = p->kernel->params.Parse(
      absl::GetFlag(FLAGS_config), p->kernel->InitialConfig(p->workload, 1, session.Facts()), false);
  const absl::Status checked = wanted.ok() ? p->kernel->params.CheckDomains(*wanted) : wanted.status();
  if (!checked.ok()) return UsageError(absl::StrCat("--config: ", checked.message()));
  absl::StatusOr<MachineProfile> profile = session.MeasuredProfile(true, false);
  if (!profile.ok()) return profile.status();
  probes::SimulatedGeometry g;
  const std::optional<CacheLevel> l1 = profile->DataCache(1);
  g.l1_bytes = profile->EffectiveCacheBytes(1).value_or(32 << 10);
  g.l1_ways = l1 ? std::max(l1->ways, 1) : 8;
  int last = 1;
  while (profile->EffectiveCacheBytes(last + 1)) ++last;
  g.last_level_bytes = profile->EffectiveCacheBytes(last).value_or(8 << 20);
  const std::optional<CacheLevel> ll = profile->DataCache(last);
  g.last_level_ways = ll ? std::max(ll->ways, 1) : 16;
  std::string args = absl::StrCat("--kernel ", p->kernel->name, " --shape ", absl::GetFlag(FLAGS_shape),
                                  " --dtype ", ToString(p->workload.dtype), " --epilogue ",
                                  ToString(p->workload.epilogue), " --db ", DbPath());
  if (!absl::GetFlag(FLAGS_config).empty()) absl::StrAppend(&args, " --config ", absl::GetFlag(FLAGS_config));
  for (const std::string& plugin : absl::GetFlag(FLAGS_plugin)) absl::StrAppend(&args, " --plugin ", plugin);
  absl::StatusOr<probes::SimulatedTraffic> sim = probes::SimulateKernelCall(std::filesystem::read_symlink("/proc/self/exe").string(), args, g);
  if (!sim.ok()) return sim.status();
  std::cout << "SIMULATED (valgrind cache simulator, cold single call, 1 thread; L1 "
            << reports::FormatBytes(double(probes::SimulatorFriendlySize(g.l1_bytes, g.l1_ways, 64)))
            << ", last level "
            << reports::FormatBytes(double(probes::SimulatorFriendlySize(g.last_level_bytes, g.last_level_ways, 64)))
            << ")\n";
  std::cout << absl::StrFormat("  L2 -> L1 bytes (L1 misses x line)      %14.0f\n", sim->l1_miss_bytes);
  std::cout << absl::StrFormat("  DRAM -> LL bytes (LL misses x line)    %14.0f\n", sim->last_level_miss_bytes);
  std::cout << absl::StrFormat("  instructions                           %14.0f\n", sim->instructions);
  // The model of the config the simulator ran (valgrind runs at most the AVX2 target, so the
  // config may not be one this CPU's best target would accept; the model does not care).
  absl::StatusOr<Config> config = p->kernel->params.Parse(
      absl::GetFlag(FLAGS_config), p->kernel->InitialConfig(p->workload, 1, *profile), false);
  if (config.ok() && !p->kernel->params.params().empty()) {
    // Price the model with the geometry that was simulated, not the measured one.
    MachineProfile simulated = *profile;
    simulated.measured_levels.clear();
    simulated.caches = {
        {1, "Data", probes::SimulatorFriendlySize(g.l1_bytes, g.l1_ways, 64), g.l1_ways, 64, 1},
        {3, "Unified", probes::SimulatorFriendlySize(g.last_level_bytes, g.last_level_ways, 64),
         g.last_level_ways, 64, 1}};
    const Traffic model = p->kernel->TrafficFor(p->workload, *config, 1, simulated);
    std::cout << absl::StrFormat("  traffic model: L2 -> L1 %.0f, DRAM -> L3 %.0f (config %s)\n",
                                 model.Total(MemoryLevel::kL2), model.Total(MemoryLevel::kDram),
                                 config->ToString());
  }
  return 0;
}

}  // namespace

std::string HelpText(const std::string& command) {
  std::string text = R"(rooftune: profile and autotune CPU kernels, judged against a roofline measured on this machine.

usage: rooftune <command> [flags]

commands
  list     [--json]                          kernels, their parameters and domains
  verify   --kernel K --shape S [--config p=v,...] [--threads T] [--json]
                                             run once against the reference; exit 0 when correct,
                                             1 with the max error when not
  bench    --kernel K --shape S [--config ...] [--threads T] [--cold|--warm] [--json]
                                             time statistics (median, min, CV), GFLOP/s (GOP/s for
                                             int8), attainment and the binding ceiling, and the
                                             optimisation levers in the order they pay
  tune     --kernel K --shape S [--threads 1,2] [--strategy exhaustive] [--budget-seconds B]
           [--cold|--warm] [--json]          search the kernel's parameter space, validate every
                                             candidate, store the fastest for this machine
           bench and tune time a workload whose operands stream from DRAM (a GEMV, a GEMM the
           roofline calls memory-bound: decode shapes) cold, its operands and prepared weights
           evicted from the caches before every call (code and threads stay warm, as in a
           decode loop); the rest warm. --cold for every workload, --warm for none
  probe    [--quick] [--force|--fresh] [--json] [--out DIR]
                                             measure the machine: latency curve and the cache
                                             levels found on it, bandwidth per level, peak compute
                                             per dtype; writes DIR/profile.json, latency.svg and
                                             roofline.svg (DIR defaults to rooftune-report). A
                                             re-probe keeps each stored compute or DRAM ceiling
                                             it measures lower (the best any probe measured);
                                             --fresh re-probes and stores what it measures
  report   [--format md|html|json] [--out DIR]
                                             render what the database holds for this machine:
                                             ceilings, results with verdicts, and each result's
                                             levers in the order they pay
  simulate --kernel K --shape S [--config ...]
                                             SIMULATED counters: one cold call under valgrind's
                                             cache simulator with the measured cache geometry;
                                             L1 and last-level misses as bytes, beside the
                                             kernel's traffic model (for machines without a PMU)
  run      [--quick]                         the main job: probe, tune every kernel on its default
                                             shapes, write rooftune-report/report.md, report.html
                                             and report.json

shapes     MxNxK for gemm (C[MxN] = A[MxK] B[KxN]), NxK for gemv (y[N] = W[NxK] x[K]);
           every dimension a positive integer
configs    without --config, verify and bench use the best config stored for this machine, kernel,
           workload and thread count, else the kernel's analytic initial config; output says which
flags      --dtype f32|u8s8|s8f32   --epilogue none|bias|bias_relu   --db FILE   --plugin a.so,b.so
           --out DIR   --force (re-probe even when the cached profile matches)
           --fresh (re-probe, and store this probe's ceilings even where lower)
database   --db, else $ROOFTUNE_DB, else $XDG_CACHE_HOME/rooftune/tuning.db, else
           ~/.cache/rooftune/tuning.db (SQLite; keyed by machine fingerprint)
exit       0 success; 1 runtime failure (wrong result, unreadable database, bad plugin file,
           allocation failure); 2 usage error (unknown command, kernel or flag, bad shape, config
           or thread count, shape too large for memory)
)";
  (void)command;
  return text;
}

absl::StatusOr<int> RunCommand(const std::string& command) {
  if (absl::Status s = LoadPlugins(); !s.ok()) return s;
  Session session(DbPath());
  if (command == "list") return List();
  if (command == "verify") return Verify(session);
  if (command == "bench") return Bench(session);
  if (command == "tune") return TuneCommand(session);
  if (command == "probe") return Probe(session);
  if (command == "report") return Report(session);
  if (command == "run") return RunAll(session);
  if (command == "simulate") return Simulate(session);
  if (command == "simulate-once") return SimulateOnce(session);
  return UsageError(absl::StrCat("unknown command '", command, "' (see rooftune --help)"));
}

}  // namespace rooftune::cli
