#include "bench/bench_main.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "benchmark/benchmark.h"
#include "framework/cold_cache.h"
#include "framework/judged_trial.h"
#include "framework/roofline.h"
#include "framework/stats.h"
#include "framework/validation.h"
#include "hwy/targets.h"
#include "probes/machine_probe.h"
#include "probes/system_facts.h"

namespace rooftune::bench {

void ReexecWithQuietThreadPools(int argc, char** argv) {
  (void)argc;
  if (std::getenv("ROOFTUNE_BENCH_QUIET") != nullptr) return;
  setenv("ROOFTUNE_BENCH_QUIET", "1", 1);
  setenv("OMP_WAIT_POLICY", "PASSIVE", 1);
  setenv("OPENBLAS_THREAD_TIMEOUT", "4", 1);  // the minimum: 2^4 cycles of spinning
  execv("/proc/self/exe", argv);
  std::cerr << "warning: could not re-execute with quiet thread pools: " << std::strerror(errno)
            << "\n";
}

absl::StatusOr<Options> ParseOptions(int* argc, char** argv, const Usage& usage) {
  Options options;
  int kept = 1;
  for (int i = 1; i < *argc; ++i) {
    absl::string_view arg = argv[i];
    if (absl::ConsumePrefix(&arg, "--threads=")) {
      options.threads.clear();
      for (absl::string_view t : absl::StrSplit(arg, ',')) {
        int value = 0;
        if (!absl::SimpleAtoi(t, &value) || value < 1) {
          return absl::InvalidArgumentError(
              absl::StrCat("--threads: '", t, "' is not a thread count (a positive integer)"));
        }
        options.threads.push_back(value);
      }
    } else if (absl::ConsumePrefix(&arg, "--shapes=")) {
      options.shapes = absl::StrSplit(arg, ',', absl::SkipEmpty());
      if (options.shapes.empty()) return absl::InvalidArgumentError("--shapes: no shape given");
      const uint64_t memory = uint64_t(sysconf(_SC_PHYS_PAGES)) * uint64_t(sysconf(_SC_PAGESIZE));
      for (const std::string& shape : options.shapes) {
        absl::StatusOr<Workload> w =
            ParseWorkload(usage.op, shape, Dtype::kF32, Epilogue::kNone, memory / 2);
        if (!w.ok()) {
          return absl::InvalidArgumentError(absl::StrCat("--shapes: ", w.status().message()));
        }
      }
    } else if (arg == "--full-range") {
      if (!usage.takes_full_range) {
        return absl::InvalidArgumentError(
            absl::StrCat(usage.name, " has no int8 inputs: --full-range does not apply"));
      }
      options.full_range = true;
    } else if (absl::ConsumePrefix(&arg, "--max-isa=")) {
      if (!usage.takes_max_isa) {
        return absl::InvalidArgumentError(absl::StrCat(
            usage.name, " compares libraries it cannot hold to one ISA: --max-isa does not apply"));
      }
      if (arg != "avx2") {
        return absl::InvalidArgumentError(
            absl::StrCat("--max-isa: '", arg, "' is not an ISA it takes (avx2)"));
      }
      options.max_isa_avx2 = true;
    } else if (absl::ConsumePrefix(&arg, "--tune-budget=")) {
      if (!absl::SimpleAtod(arg, &options.tune_budget_seconds) ||
          !(options.tune_budget_seconds >= 0)) {
        return absl::InvalidArgumentError(
            absl::StrCat("--tune-budget: '", arg, "' is not a number of seconds >= 0"));
      }
    } else if (absl::ConsumePrefix(&arg, "--config=")) {
      if (!usage.takes_config) {
        return absl::InvalidArgumentError(absl::StrCat(
            usage.name, " measures several rooftune kernels: --config does not apply"));
      }
      options.config = std::string(arg);
    } else if (arg == "--help" || arg == "-h") {
      options.help = true;
    } else {
      argv[kept++] = argv[i];
    }
  }
  *argc = kept;
  return options;
}

std::string HelpText(const Usage& usage) {
  std::string text = absl::StrCat("usage: ", usage.name, " [options] [Google Benchmark flags]\n\n",
                                  usage.summary, "\n\noptions:\n");
  absl::StrAppend(
      &text, "  --threads=1,2         thread counts to measure (default 1,2)\n",
      "  --shapes=S,...        ", usage.op == Op::kGemv ? "NxK" : "MxNxK", " shapes (default ",
      usage.default_shapes, ")\n",
      "  --tune-budget=SECONDS tune, for this long each, the configs the tuning database\n"
      "                        lacks for this machine (default 0: use the kernel's\n"
      "                        initial config)\n");
  if (usage.takes_config) {
    absl::StrAppend(&text,
                    "  --config=p=v,...      these values for rooftune's kernel in every row,\n"
                    "                        over its stored or initial config (rooftune list\n"
                    "                        names them)\n");
  }
  if (usage.takes_full_range) {
    absl::StrAppend(&text,
                    "  --full-range          full-range u8 activations (default: 7-bit ones)\n");
  }
  if (usage.takes_max_isa) {
    absl::StrAppend(&text,
                    "  --max-isa=avx2        hold rooftune (its Highway targets) and oneDNN\n"
                    "                        (ONEDNN_MAX_CPU_ISA=AVX2_VNNI) to AVX2, with\n"
                    "                        AVX-VNNI where the CPU has it: a client core's\n"
                    "                        code on this machine; ceilings and attainments\n"
                    "                        stay this machine's (its widest vectors)\n");
  }
  absl::StrAppend(
      &text,
      "\nEach benchmark runs 5 repetitions, randomly interleaved with the other\n"
      "benchmarks' (--benchmark_repetitions=N, --benchmark_enable_random_interleaving=false\n"
      "to change); the summary tables use the median over all samples. Figures and the\n"
      "commands that produced them: bench/RESULTS.md.\n\n"
      "Google Benchmark flags:\n");
  return text;
}

absl::StatusOr<std::unique_ptr<Context>> Context::Open() {
  auto context = std::unique_ptr<Context>(new Context());
  absl::StatusOr<std::unique_ptr<TuningDb>> db = TuningDb::Open(DefaultTuningDbPath());
  if (!db.ok()) return db.status();
  context->db_ = *std::move(db);
  const MachineProfile facts = probes::ReadSystemFacts();
  absl::StatusOr<std::optional<std::string>> cached = context->db_->GetProfile(facts.Fingerprint());
  if (!cached.ok()) return cached.status();
  if (cached->has_value()) {
    absl::StatusOr<MachineProfile> profile =
        MachineProfile::FromJson(nlohmann::json::parse(**cached));
    if (profile.ok()) {
      context->profile_ = *profile;
      return context;
    }
  }
  std::cerr << "no cached profile for this machine: running a quick probe (run `rooftune probe` "
               "for the full one)\n";
  absl::StatusOr<MachineProfile> profile = probes::ProbeMachine({.quick = true});
  if (!profile.ok()) return profile.status();
  context->profile_ = *profile;
  nlohmann::json j = profile->ToJson();
  j["probe_quick"] = true;
  if (absl::Status s = context->db_->PutProfile(facts.Fingerprint(), j.dump()); !s.ok()) return s;
  return context;
}

Config Context::ConfigFor(const Kernel& kernel, const Workload& w, int threads, double tune_budget,
                          std::string* source) {
  const CacheMode cache = NaturalCacheMode(profile_, w, threads);
  absl::StatusOr<std::optional<StoredConfig>> stored =
      LoadStoredConfig(*db_, profile_, kernel, w, threads, cache);
  if (stored.ok() && stored->has_value()) {
    *source = (*stored)->completed ? "tuned; parameters added since filled in" : "tuned";
    return (*stored)->config;
  }
  if (tune_budget > 0 && !kernel.params.params().empty()) {
    std::cerr << "tuning " << kernel.name << " " << w.Key() << " threads=" << threads << " ("
              << tune_budget << " s)\n";
    absl::StatusOr<Problem> problem = Problem::Create(w);
    if (problem.ok()) {
      const ReferenceOutput reference = ComputeReference(*problem);
      Executor executor(threads);
      TuneOptions options;
      options.budget_seconds = tune_budget;
      // As `rooftune run` does: what streams from DRAM in use is tuned that way.
      if (cache == CacheMode::kCold) TimeCold(0.5, options);
      absl::StatusOr<TuneOutcome> outcome =
          Tune(kernel, profile_, *problem, reference, executor, options);
      if (outcome.ok()) {
        const Verdict verdict = JudgeTrial(profile_, kernel, outcome->best);
        if (absl::Status s = db_->Put(TunedResultOf(profile_, kernel, *outcome, verdict));
            !s.ok()) {
          std::cerr << "  not stored: " << s << "\n";
        }
        *source = "tuned now";
        return outcome->best.config;
      }
      std::cerr << "  tuning failed: " << outcome.status() << "\n";
    }
  }
  *source = "initial";
  return kernel.InitialConfig(w, threads, cache, profile_);
}

std::unique_ptr<Context> StartBenchmark(int* argc, char** argv, const Usage& usage,
                                        Options* options) {
  ReexecWithQuietThreadPools(*argc, argv);
  absl::StatusOr<Options> parsed = ParseOptions(argc, argv, usage);
  if (!parsed.ok()) {
    std::cerr << usage.name << ": " << parsed.status().message() << " (--help for usage)\n";
    return nullptr;
  }
  *options = *std::move(parsed);
  if (options->max_isa_avx2) {
    // Every target better than AVX2 has a lower bit. Not DisableTargets: in Highway 1.0.3 each
    // later SupportedTargets() call (the machine's facts make one) chooses from every detected
    // target again. oneDNN reads its cap at its first call.
    hwy::SetSupportedTargetsForTest(hwy::SupportedTargets() & ~(HWY_AVX2 - 1));
    setenv("ONEDNN_MAX_CPU_ISA", "AVX2_VNNI", 1);
  }
  if (options->help) {
    std::cout << HelpText(usage);
    std::cout.flush();
    static char help[] = "--help";  // Google Benchmark lists its own flags and exits
    char* args[] = {argv[0], help, nullptr};
    int count = 2;
    benchmark::Initialize(&count, args);
    std::exit(0);
  }
  // Interleaved repetitions by default (see Register); flags given on the command line, parsed
  // after these, still win.
  static char interleave[] = "--benchmark_enable_random_interleaving=true";
  static char repetitions[] = "--benchmark_repetitions=5";
  std::vector<char*> args(argv, argv + *argc);
  args.insert(args.begin() + 1, {interleave, repetitions});
  int count = int(args.size());
  args.push_back(nullptr);
  benchmark::Initialize(&count, args.data());
  absl::StatusOr<std::unique_ptr<Context>> context = Context::Open();
  if (!context.ok()) {
    std::cerr << context.status() << "\n";
    return nullptr;
  }
  return *std::move(context);
}

std::map<std::string, std::vector<double>>& Samples() {
  static auto* samples = new std::map<std::string, std::vector<double>>();
  return *samples;
}

bool RunRegistered(const absl::Status& registered, const std::string& binary) {
  if (!registered.ok()) {
    std::cerr << binary << ": " << registered.message() << "\n";
    return false;
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return true;
}

double MedianSeconds(const std::string& name) {
  auto it = Samples().find(name);
  return it == Samples().end() ? 0 : Summarize(it->second).median;
}

double BillionsPerSecond(double amount, const std::string& name) {
  const double s = MedianSeconds(name);
  return s > 0 ? amount / s / 1e9 : 0.0;
}

// Phases on a shared machine last from seconds to minutes, longer than one benchmark, so a
// competitor timed in a fast phase would win on luck. Each benchmark therefore runs as several
// repetitions, randomly interleaved with every other benchmark's (Google Benchmark's random
// interleaving), and the median is taken over all their samples. Both are defaults set in
// StartBenchmark, which --benchmark_repetitions=N and --benchmark_enable_random_interleaving=false
// override.
constexpr double kSecondsPerRepetition = 0.08;
// A cold call pays an eviction of its operands outside the timing, as long as a DRAM stream of
// them: a fixed count keeps the run short and still gives repetitions x this samples.
constexpr int kColdIterationsPerRepetition = 8;

namespace {
struct Body {
  std::function<void()> run, before;
  Executor* arena = nullptr;
};

// Runs `fn` inside `arena` when there is one (Register says why), else here.
void Within(Executor* arena, const std::function<void()>& fn) {
  if (arena != nullptr) {
    arena->Execute(fn);
  } else {
    fn();
  }
}
std::map<std::string, Body>& Bodies() {
  static auto* bodies = new std::map<std::string, Body>();
  return *bodies;
}
}  // namespace

void Register(const std::string& name, std::function<void()> body, std::function<void()> before,
              Executor* arena) {
  Bodies()[name] = {body, before, arena};
  benchmark::internal::Benchmark* b = benchmark::RegisterBenchmark(
      name.c_str(), [name, body, before, arena](benchmark::State& state) {
        std::vector<double>& samples = Samples()[name];
        Within(arena, [&] {
          for (auto _ : state) {
            if (before) {
              state.PauseTiming();
              before();
              state.ResumeTiming();
            }
            const auto start = std::chrono::steady_clock::now();
            body();
            benchmark::ClobberMemory();
            samples.push_back(
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
          }
        });
      });
  b->UseRealTime()->Unit(benchmark::kMillisecond)->DisplayAggregatesOnly(true);
  if (before) {
    b->Iterations(kColdIterationsPerRepetition);
  } else {
    b->MinTime(kSecondsPerRepetition);
  }
}

std::function<void()> Evicting(std::vector<ByteSpan> spans) {
  return [spans = std::move(spans)] { EvictFromCaches(spans); };
}

Executor* CompetitorArena(Executor* executor) {
  return executor->threads() == 1 ? executor : nullptr;
}

Executor* ArenaFor(const Kernel& kernel, Executor* executor) {
  return kernel.threading == Threading::kTbb ? executor : CompetitorArena(executor);
}

PairedSpeedup MeasurePaired(const std::string& a, const std::string& b, double seconds,
                            const Clock& clock) {
  PairedSpeedup result;
  auto ia = Bodies().find(a), ib = Bodies().find(b);
  if (ia == Bodies().end() || ib == Bodies().end()) return result;
  // A warm benchmark's timed call follows an untimed call of its own, as in its repetitions, not
  // the other side's call, whose buffers would fill the caches; a cold one follows its eviction.
  auto timed = [&clock](const Body& body) {
    double seconds = 0;
    Within(body.arena, [&] {
      if (body.before) {
        body.before();
      } else {
        body.run();
      }
      const double start = clock.Seconds();
      body.run();
      benchmark::ClobberMemory();
      seconds = clock.Seconds() - start;
    });
    return seconds;
  };
  std::vector<double> ratios;
  const double start = clock.Seconds();
  auto elapsed = [&] { return clock.Seconds() - start; };
  while (ratios.size() < 11 || (elapsed() < seconds && ratios.size() < 1001)) {
    double ta, tb;
    if (ratios.size() % 2 == 0) {
      ta = timed(ia->second), tb = timed(ib->second);
    } else {
      tb = timed(ib->second), ta = timed(ia->second);
    }
    ratios.push_back(tb / ta);
  }
  const Quartiles q = QuartilesOf(ratios);
  result.median = q.median, result.low = q.low, result.high = q.high;
  result.pairs = int(ratios.size());
  return result;
}

}  // namespace rooftune::bench
