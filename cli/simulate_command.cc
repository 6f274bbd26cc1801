// rooftune simulate: SIMULATED counters for machines without a PMU. One cold kernel call runs under
// valgrind's cache simulator (this binary again, as `simulate-once`), beside the kernel's model.
#include "cli/subcommands.h"

#if defined(ROOFTUNE_HAVE_VALGRIND)
#include <valgrind/callgrind.h>
#else
#define CALLGRIND_START_INSTRUMENTATION
#define CALLGRIND_STOP_INSTRUMENTATION
#endif

#include <filesystem>
#include <iostream>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "cli/common.h"
#include "framework/harness.h"
#include "probes/simulated_counters.h"
#include "reports/report.h"

namespace rooftune::cli {

// One kernel call with valgrind's instrumentation switched on around it only, so the
// simulated caches see nothing of set-up (they start empty: a cold call).
absl::StatusOr<int> SimulateOnceCommand(Session& session) {
  absl::StatusOr<SimulateOptions> options = SimulateOptionsFromFlags(session);
  if (!options.ok()) return options.status();
  const Selection* p = &options->selection;
  const MachineProfile& facts = session.Facts();
  absl::StatusOr<Config> config = p->kernel->params.Parse(
      options->config, p->kernel->InitialConfig(p->workload, p->threads, CacheMode::kCold, facts));
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
  // The config it ran, for `simulate` to price the model with: without --config it is the
  // initial config of the target valgrind runs, not of this CPU's.
  std::cout << p->kernel->params.Format(*config) << "\n";
  return 0;
}

namespace {

// Where the profile knows no cache: the smallest L1d, and a last level of a current server core's
// share, with the associativities x86 caches commonly have.
constexpr uint64_t kAssumedL1Bytes = 32 << 10;
constexpr uint64_t kAssumedLastLevelBytes = 8 << 20;
constexpr int kAssumedL1Ways = 8;
constexpr int kAssumedLastLevelWays = 16;

// The caches valgrind simulates: this machine's L1 and last level, as measured.
probes::SimulatedGeometry SimulatedGeometryOf(const MachineProfile& profile) {
  probes::SimulatedGeometry g;
  const std::optional<CacheLevel> l1 = profile.DataCache(1);
  g.l1_bytes = profile.EffectiveCacheBytes(1).value_or(kAssumedL1Bytes);
  g.l1_ways = l1 ? std::max(l1->ways, 1) : kAssumedL1Ways;
  int last = 1;
  while (profile.EffectiveCacheBytes(last + 1)) ++last;
  g.last_level_bytes = profile.EffectiveCacheBytes(last).value_or(kAssumedLastLevelBytes);
  const std::optional<CacheLevel> ll = profile.DataCache(last);
  g.last_level_ways = ll ? std::max(ll->ways, 1) : kAssumedLastLevelWays;
  return g;
}

void PrintSimulated(const probes::SimulatedGeometry& g, const probes::SimulatedTraffic& sim,
                    const absl::StatusOr<probes::SimulatedTraffic>& fixed,
                    const std::string& smallest) {
  std::cout << "SIMULATED (valgrind cache simulator, cold single call, 1 thread; L1 "
            << reports::FormatBytes(
                   double(probes::SimulatorFriendlySize(g.l1_bytes, g.l1_ways, 64)))
            << ", last level "
            << reports::FormatBytes(
                   double(probes::SimulatorFriendlySize(g.last_level_bytes, g.last_level_ways, 64)))
            << ")\n";
  std::cout << absl::StrFormat("  %-38s %14s %14s\n", "", "L2 -> L1", "DRAM -> LL");
  std::cout << absl::StrFormat("  %-38s %14.0f %14.0f\n", "simulated bytes (misses x line)",
                               sim.l1_miss_bytes, sim.last_level_miss_bytes);
  if (fixed.ok()) {
    std::cout << absl::StrFormat("  %-38s %14.0f %14.0f\n",
                                 absl::StrCat("a call's fixed cost (", smallest, ")"),
                                 fixed->l1_miss_bytes, fixed->last_level_miss_bytes);
  } else {
    std::cout << "  a call's fixed cost: not simulated (" << fixed.status().message() << ")\n";
  }
  std::cout << absl::StrFormat("  %-38s %14.0f\n", "instructions", sim.instructions);
}

// The traffic model of the config that ran, priced with the geometry that was simulated, not the
// measured one (valgrind's target may not be one this CPU's best target would accept; the model
// does not care), beside what the simulator counted.
void PrintModelAgainstSimulation(const MachineProfile& profile, const Selection& p,
                                 const Config& config, const probes::SimulatedGeometry& g,
                                 const probes::SimulatedTraffic& sim,
                                 const absl::StatusOr<probes::SimulatedTraffic>& fixed) {
  const MachineProfile simulated = probes::ProfileOfSimulatedCaches(profile, g);
  const Traffic model = p.kernel->TrafficFor(p.workload, config, 1, simulated);
  const double model_l1 = model.Total(MemoryLevel::kL2), dram = model.Total(MemoryLevel::kDram);
  std::cout << absl::StrFormat("  %-38s %14.0f %14.0f  (config %s)\n", "traffic model", model_l1,
                               dram, p.kernel->params.Format(config));
  // The model prices a call in steady state; one cold call also brings its packing buffers from
  // memory once (their write-allocates into L1 the model charges on every call).
  std::cout << absl::StrFormat("  %-38s %14s %14.0f\n", "+ first touch of the packing buffers", "",
                               model.first_touch);
  if (fixed.ok() && model_l1 > 0 && dram > 0) {
    std::cout << absl::StrFormat(
        "  simulated less the fixed cost, over the model: L1 %.2fx, last level %.2fx (under 1: "
        "the model counts bytes that never moved; above: misses it leaves out, such as the set "
        "conflicts of operands read in place)\n",
        (sim.l1_miss_bytes - fixed->l1_miss_bytes) / model_l1,
        (sim.last_level_miss_bytes - fixed->last_level_miss_bytes) / (dram + model.first_touch));
  }
}

absl::StatusOr<int> Simulate(Session& session, const SimulateOptions& options,
                             const MachineProfile& profile) {
  const Selection* p = &options.selection;
  const probes::SimulatedGeometry g = SimulatedGeometryOf(profile);
  const std::string binary = std::filesystem::read_symlink("/proc/self/exe").string();
  auto simulate = [&](const std::string& shape, const std::string& config) {
    std::string args = absl::StrCat("--kernel ", p->kernel->name, " --shape ", shape, " --dtype ",
                                    ToString(p->workload.dtype), " --epilogue ",
                                    ToString(p->workload.epilogue), " --db ", session.db_path());
    if (!config.empty()) absl::StrAppend(&args, " --config ", config);
    for (const std::string& plugin : options.plugins) absl::StrAppend(&args, " --plugin ", plugin);
    return probes::SimulateKernelCall(binary, args, g);
  };
  absl::StatusOr<probes::SimulatedTraffic> sim = simulate(options.shape, options.config);
  if (!sim.ok()) return sim.status();
  // The config the call ran and printed: without --config it is the initial config of the target
  // valgrind runs (at most AVX2), not of this CPU's.
  const std::string ran = std::string(absl::StripAsciiWhitespace(sim->output));
  // What any call touches whatever its size (dispatch, the thread pool, the stack, the kernel's
  // own state): the same call, same config, on the smallest shape. A cold call pays it once.
  const std::string smallest = p->workload.op == Op::kGemm ? "1x1x1" : "1x1";
  const absl::StatusOr<probes::SimulatedTraffic> fixed = simulate(smallest, ran);
  PrintSimulated(g, *sim, fixed, smallest);
  absl::StatusOr<Config> config = p->kernel->params.Parse(ran, Config(), false);
  if (!config.ok() || p->kernel->params.params().empty()) return 0;
  PrintModelAgainstSimulation(profile, *p, *config, g, *sim, fixed);
  return 0;
}

}  // namespace

absl::StatusOr<int> SimulateCommand(Session& session) {
  // The config is checked here, not minutes into valgrind: its names and domains only, since
  // valgrind runs at most the AVX2 target and this CPU's target-dependent constraints need not
  // hold there.
  return WithProfile(session, SimulateOptionsFromFlags(session), Simulate);
}

}  // namespace rooftune::cli
