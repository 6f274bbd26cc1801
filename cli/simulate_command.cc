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

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "cli/common.h"
#include "cli/flags.h"
#include "framework/harness.h"
#include "probes/simulated_counters.h"
#include "reports/report.h"

namespace rooftune::cli {

// One kernel call with valgrind's instrumentation switched on around it only, so the
// simulated caches see nothing of set-up (they start empty: a cold call).
absl::StatusOr<int> SimulateOnceCommand(Session& session) {
  absl::StatusOr<Selection> p = SelectForOneThreadCount(session);
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
  // The config it ran, for `simulate` to price the model with: without --config it is the
  // initial config of the target valgrind runs, not of this CPU's.
  std::cout << config->ToString() << "\n";
  return 0;
}

absl::StatusOr<int> SimulateCommand(Session& session) {
  absl::StatusOr<Selection> p = SelectForOneThreadCount(session);
  if (!p.ok()) return p.status();
  // The config is checked here, not minutes into valgrind: its names and domains only, since
  // valgrind runs at most the AVX2 target and this CPU's target-dependent constraints need not
  // hold there.
  absl::StatusOr<Config> wanted =
      p->kernel->params.Parse(absl::GetFlag(FLAGS_config),
                              p->kernel->InitialConfig(p->workload, 1, session.Facts()), false);
  const absl::Status checked =
      wanted.ok() ? p->kernel->params.CheckDomains(*wanted) : wanted.status();
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
  std::string args =
      absl::StrCat("--kernel ", p->kernel->name, " --shape ", absl::GetFlag(FLAGS_shape),
                   " --dtype ", ToString(p->workload.dtype), " --epilogue ",
                   ToString(p->workload.epilogue), " --db ", DbPath());
  if (!absl::GetFlag(FLAGS_config).empty())
    absl::StrAppend(&args, " --config ", absl::GetFlag(FLAGS_config));
  for (const std::string& plugin : absl::GetFlag(FLAGS_plugin))
    absl::StrAppend(&args, " --plugin ", plugin);
  absl::StatusOr<probes::SimulatedTraffic> sim =
      probes::SimulateKernelCall(std::filesystem::read_symlink("/proc/self/exe").string(), args, g);
  if (!sim.ok()) return sim.status();
  std::cout << "SIMULATED (valgrind cache simulator, cold single call, 1 thread; L1 "
            << reports::FormatBytes(
                   double(probes::SimulatorFriendlySize(g.l1_bytes, g.l1_ways, 64)))
            << ", last level "
            << reports::FormatBytes(
                   double(probes::SimulatorFriendlySize(g.last_level_bytes, g.last_level_ways, 64)))
            << ")\n";
  std::cout << absl::StrFormat("  L2 -> L1 bytes (L1 misses x line)      %14.0f\n",
                               sim->l1_miss_bytes);
  std::cout << absl::StrFormat("  DRAM -> LL bytes (LL misses x line)    %14.0f\n",
                               sim->last_level_miss_bytes);
  std::cout << absl::StrFormat("  instructions                           %14.0f\n",
                               sim->instructions);
  // The model of the config the simulated call ran and printed (valgrind runs at most the AVX2
  // target, so it may not be one this CPU's best target would accept; the model does not care).
  absl::StatusOr<Config> config =
      p->kernel->params.Parse(absl::StripAsciiWhitespace(sim->output), Config(), false);
  if (config.ok() && !p->kernel->params.params().empty()) {
    // Price the model with the geometry that was simulated, not the measured one.
    MachineProfile simulated = *profile;
    simulated.measured_levels.clear();
    simulated.caches = {
        {1, "Data", probes::SimulatorFriendlySize(g.l1_bytes, g.l1_ways, 64), g.l1_ways, 64, 1},
        {3, "Unified", probes::SimulatorFriendlySize(g.last_level_bytes, g.last_level_ways, 64),
         g.last_level_ways, 64, 1}};
    const Traffic model = p->kernel->TrafficFor(p->workload, *config, 1, simulated);
    const double l1 = model.Total(MemoryLevel::kL2), dram = model.Total(MemoryLevel::kDram);
    std::cout << absl::StrFormat("  traffic model: L2 -> L1 %.0f, DRAM -> L3 %.0f (config %s)\n",
                                 l1, dram, config->ToString());
    if (l1 > 0 && dram > 0) {
      // The model prices a call in steady state, the simulator sees one cold call: it adds what
      // the model leaves out, so a ratio well above 1 on a small shape is not by itself a broken
      // model. Below 1 it is.
      std::cout << absl::StrFormat(
          "  simulated / model: L1 %.2fx, last level %.2fx (a cold call also misses on first "
          "touching its packing buffers, and operands read in place on rows that share cache "
          "sets; under 1 the model counts bytes that never moved)\n",
          sim->l1_miss_bytes / l1, sim->last_level_miss_bytes / dram);
    }
  }
  return 0;
}

}  // namespace rooftune::cli
