// tuner_bench: how fast each tuning strategy finds a workload's best config. For every workload
// each strategy tunes once per budget (fresh: nothing stored is offered), and its longest tune is
// traced (every change of its fastest config). Then every config any tune reached is re-timed in
// interleaved rounds in this process, the order rotated each round; the fastest is the reference
// best. Reported: each (strategy, budget)'s config and the analytic initial config against the
// reference, and the trials and seconds each strategy's longest tune took to come within 3% of it.
//
//   tuner_bench [--budgets=2,5,10,20,40] [--strategies=model,exhaustive,descent]
//               [--workloads=KERNEL:SHAPE,...] [--threads=N] [--rounds=N]
#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "bench/bench_main.h"
#include "framework/executor.h"
#include "framework/harness.h"
#include "framework/kernel.h"
#include "framework/reference.h"
#include "framework/tuner.h"

namespace rooftune::bench {
namespace {

constexpr double kWithin = 0.03;  // "found": within 3% of the reference best

struct Flags {
  std::vector<double> budgets = {2, 5, 10, 20, 40};
  std::vector<std::string> strategies = TuneStrategies();
  std::vector<std::string> workloads;  // KERNEL:SHAPE; empty: run's default workloads
  int threads = 1;
  int rounds = 3;
};

constexpr char kUsage[] =
    "usage: tuner_bench [--budgets=2,5,10,20,40] [--strategies=model,exhaustive,descent]\n"
    "                   [--workloads=KERNEL:SHAPE,...] [--threads=N] [--rounds=N]\n"
    "  each strategy tunes each workload once per budget (seconds), in this process, from a\n"
    "  fresh start; every config reached is re-timed in N interleaved rounds (default 3) and the\n"
    "  fastest is the reference best. Prints, per workload, each tune's best against it and the\n"
    "  trials and seconds each strategy's longest tune needed to come within 3% of it.\n"
    "  Default workloads: `rooftune run`'s of every built-in tunable kernel. Exit 2 on a bad\n"
    "  flag, 1 when a tune fails.\n";

std::optional<Flags> ParseFlags(int argc, char** argv) {
  Flags f;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&](absl::string_view name) -> std::optional<std::string> {
      const std::string prefix = absl::StrCat("--", name, "=");
      if (!absl::StartsWith(arg, prefix)) return std::nullopt;
      return arg.substr(prefix.size());
    };
    if (auto v = value("budgets")) {
      f.budgets.clear();
      for (absl::string_view item : absl::StrSplit(*v, ',')) {
        double b = 0;
        if (!absl::SimpleAtod(item, &b) || b <= 0) return std::nullopt;
        f.budgets.push_back(b);
      }
      std::sort(f.budgets.begin(), f.budgets.end());
    } else if (auto v = value("strategies")) {
      f.strategies = absl::StrSplit(*v, ',');
      for (const std::string& s : f.strategies) {
        const std::vector<std::string> known = TuneStrategies();
        if (std::find(known.begin(), known.end(), s) == known.end()) return std::nullopt;
      }
    } else if (auto v = value("workloads")) {
      f.workloads = absl::StrSplit(*v, ',');
    } else if (auto v = value("threads")) {
      if (!absl::SimpleAtoi(*v, &f.threads) || f.threads < 1 ||
          f.threads > int(AllowedCpus().size())) {
        return std::nullopt;
      }
    } else if (auto v = value("rounds")) {
      if (!absl::SimpleAtoi(*v, &f.rounds) || f.rounds < 1) return std::nullopt;
    } else {
      return std::nullopt;
    }
  }
  if (f.budgets.empty() || f.strategies.empty()) return std::nullopt;
  return f;
}

struct Target {
  const Kernel* kernel = nullptr;
  Workload workload;
};

// `rooftune run`'s workloads: every built-in kernel with parameters to tune, on its default
// shapes (a separate-pass variant tunes the same space as its fused kernel, and is left out).
absl::StatusOr<std::vector<Target>> Targets(const Flags& flags) {
  constexpr uint64_t kMemoryLimit = uint64_t(8) << 30;
  std::vector<Target> targets;
  if (flags.workloads.empty()) {
    for (const Kernel* k : KernelRegistry::Global().All()) {
      if (k->reference || k->origin != "builtin" || k->params.params().empty() ||
          !k->unfused_variant_of.empty()) {
        continue;
      }
      for (const std::string& entry : k->default_shapes) {
        absl::StatusOr<Workload> w = k->DefaultWorkload(entry, kMemoryLimit);
        if (!w.ok()) return w.status();
        targets.push_back({k, *w});
      }
    }
    return targets;
  }
  for (const std::string& item : flags.workloads) {
    const std::vector<std::string> parts = absl::StrSplit(item, absl::MaxSplits(':', 1));
    const Kernel* k = parts.size() == 2 ? KernelRegistry::Global().Find(parts[0]) : nullptr;
    if (k == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("--workloads: '", item, "' is not KERNEL:SHAPE of a known kernel"));
    }
    absl::StatusOr<Workload> w = k->DefaultWorkload(parts[1], kMemoryLimit);
    if (!w.ok()) return w.status();
    targets.push_back({k, *w});
  }
  return targets;
}

struct TuneRun {
  std::string strategy;
  double budget = 0;
  Config best;
  int tried = 0, pruned = 0;
};

// A change of a traced tune's fastest config.
struct Step {
  Config config;
  int tried = 0;
  double seconds = 0;
};

// Every config in `configs` re-timed in `rounds` interleaved rounds (TimeRoundRobin); the pooled
// median of each, by its text.
absl::StatusOr<std::map<std::string, double>> Retime(const Kernel& kernel, Problem& problem,
                                                     Executor& executor,
                                                     const std::vector<Config>& configs,
                                                     const TimingOptions& timing, int rounds) {
  std::vector<RoundRobinEntrant> entrants;
  for (const Config& c : configs) entrants.push_back({c, &executor});
  absl::StatusOr<std::vector<TimedCalls>> calls =
      TimeRoundRobin(kernel, problem, entrants, timing, rounds);
  if (!calls.ok()) return calls.status();
  std::map<std::string, double> medians;
  for (size_t i = 0; i < configs.size(); ++i) {
    medians[configs[i].ToString()] = Summarize((*calls)[i].seconds).median;
  }
  return medians;
}

// One workload: every strategy at every budget, the re-timing, and its table rows. Returns the
// trials each strategy's longest tune needed to come within kWithin (absent: it did not).
absl::StatusOr<std::map<std::string, std::optional<int>>> BenchWorkload(const Target& target,
                                                                        const MachineProfile& p,
                                                                        const Flags& flags) {
  const Kernel& kernel = *target.kernel;
  absl::StatusOr<Problem> problem = Problem::Create(target.workload);
  if (!problem.ok()) return problem.status();
  const ReferenceOutput reference = ComputeReference(*problem);
  Executor executor(flags.threads);
  const bool cold = NaturalCacheMode(p, target.workload, flags.threads) == CacheMode::kCold;
  std::vector<TuneRun> runs;
  std::map<std::string, std::vector<Step>> traces;
  for (const std::string& strategy : flags.strategies) {
    for (double budget : flags.budgets) {
      TuneOptions options;
      options.strategy = strategy;
      options.budget_seconds = budget;
      if (cold) TimeColdWithinBudget(options);
      if (budget == flags.budgets.back()) {
        options.on_best = [&, strategy](const Trial& best, int tried, double seconds) {
          traces[strategy].push_back({best.config, tried, seconds});
        };
      }
      absl::StatusOr<TuneOutcome> outcome = Tune(kernel, p, *problem, reference, executor, options);
      if (!outcome.ok()) return outcome.status();
      runs.push_back({strategy, budget, outcome->best.config, outcome->configs_tried,
                      outcome->configs_pruned});
      std::fprintf(stderr, "  %s %s, %s, %g s: %d tried, %d pruned; best %s\n", kernel.name.c_str(),
                   target.workload.Key().c_str(), strategy.c_str(), budget, outcome->configs_tried,
                   outcome->configs_pruned, kernel.params.Format(outcome->best.config).c_str());
    }
  }
  std::vector<Config> configs;
  auto add = [&](const Config& c) {
    if (std::find(configs.begin(), configs.end(), c) == configs.end()) configs.push_back(c);
  };
  const Config initial = kernel.InitialConfig(target.workload, flags.threads,
                                              cold ? CacheMode::kCold : CacheMode::kWarm, p);
  add(initial);
  for (const TuneRun& r : runs) add(r.best);
  for (const auto& [strategy, steps] : traces) {
    for (const Step& s : steps) add(s.config);
  }
  TimingOptions timing = TuneOptions().timing;
  if (cold) timing.cache = CacheMode::kCold;
  std::fprintf(stderr, "  re-timing %zu configs in %d interleaved rounds\n", configs.size(),
               flags.rounds);
  absl::StatusOr<std::map<std::string, double>> medians =
      Retime(kernel, *problem, executor, configs, timing, flags.rounds);
  if (!medians.ok()) return medians.status();
  double best = 0;
  std::string best_config;
  for (const Config& c : configs) {
    const double median = medians->at(c.ToString());
    if (best == 0 || median < best) best = median, best_config = kernel.params.Format(c);
  }
  auto gap = [&](const Config& c) { return medians->at(c.ToString()) / best - 1; };

  std::map<std::string, std::optional<int>> trials_to_within;
  for (const std::string& strategy : flags.strategies) {
    std::string row = absl::StrFormat("| %s %s | %d | %s |", kernel.name,
                                      target.workload.ShapeString(), flags.threads, strategy);
    for (const TuneRun& r : runs) {
      if (r.strategy != strategy) continue;
      row += absl::StrFormat(" %+.1f%% (%d%s) |", gap(r.best) * 100, r.tried,
                             r.pruned > 0 ? absl::StrFormat(", %d pruned", r.pruned) : "");
    }
    std::optional<Step> reached;
    for (const Step& s : traces[strategy]) {
      if (gap(s.config) <= kWithin) {
        reached = s;
        break;
      }
    }
    trials_to_within[strategy] = reached ? std::optional<int>(reached->tried) : std::nullopt;
    row += reached ? absl::StrFormat(" %d | %.1f |", reached->tried, reached->seconds)
                   : std::string(" not reached | - |");
    std::printf("%s\n", row.c_str());
  }
  std::printf("| | | reference | %s: %s |\n", best_config.c_str(),
              absl::StrFormat("%.4g ms", best * 1e3).c_str());
  std::printf("| | | initial | %s: %+.1f%% |\n", kernel.params.Format(initial).c_str(),
              gap(initial) * 100);
  std::fflush(stdout);
  return trials_to_within;
}

int Main(int argc, char** argv) {
  const std::optional<Flags> flags = ParseFlags(argc, argv);
  if (!flags) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  absl::StatusOr<std::unique_ptr<Context>> context = Context::Open();
  if (!context.ok()) {
    std::fprintf(stderr, "tuner_bench: %s\n", std::string(context.status().message()).c_str());
    return 1;
  }
  const MachineProfile& profile = (*context)->profile();
  absl::StatusOr<std::vector<Target>> targets = Targets(*flags);
  if (!targets.ok()) {
    std::fprintf(stderr, "tuner_bench: %s\n", std::string(targets.status().message()).c_str());
    return 2;
  }
  std::string header = "| workload | threads | strategy |";
  std::string rule = "|---|---|---|";
  for (double b : flags->budgets) {
    header += absl::StrFormat(" %g s: gap (tried) |", b);
    rule += "---|";
  }
  std::printf("%s trials to %.0f%% | seconds to %.0f%% |\n%s---|---|\n", header.c_str(),
              kWithin * 100, kWithin * 100, rule.c_str());
  std::vector<std::string> summary;
  for (const Target& t : *targets) {
    std::fprintf(stderr, "%s %s, %d thread(s)\n", t.kernel->name.c_str(), t.workload.Key().c_str(),
                 flags->threads);
    absl::StatusOr<std::map<std::string, std::optional<int>>> trials =
        BenchWorkload(t, profile, *flags);
    if (!trials.ok()) {
      std::fprintf(stderr, "tuner_bench: %s %s: %s\n", t.kernel->name.c_str(),
                   t.workload.Key().c_str(), std::string(trials.status().message()).c_str());
      return 1;
    }
    const std::optional<int> model = (*trials)["model"], exhaustive = (*trials)["exhaustive"];
    if (trials->count("model") && trials->count("exhaustive")) {
      summary.push_back(absl::StrFormat(
          "%s %s: model %s, exhaustive %s%s", t.kernel->name, t.workload.ShapeString(),
          model ? absl::StrCat(*model, " trials") : "not within 3%",
          exhaustive ? absl::StrCat(*exhaustive, " trials") : "not within 3%",
          model && exhaustive ? absl::StrFormat(" (%.0f%%)", 100.0 * *model / *exhaustive) : ""));
    }
  }
  std::printf("\n%s\n", absl::StrJoin(summary, "\n").c_str());
  std::printf(
      "\nhost: %s, %d CPUs; gap: the tune's best re-timed against the reference best "
      "(the fastest config any tune reached, re-timed in the same rounds)\n",
      profile.cpu_model.c_str(), profile.logical_cpus);
  return 0;
}

}  // namespace
}  // namespace rooftune::bench

int main(int argc, char** argv) { return rooftune::bench::Main(argc, argv); }
