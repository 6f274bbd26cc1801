// Each command's flags, read and checked once at its entry, before any probe or tune: a bad
// shape, config, thread count or strategy fails at once with one line, and the command and its
// helpers read the struct, never the global flags. (commands.cc already refuses flags a command
// does not take.)
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cli/session.h"
#include "framework/harness.h"
#include "framework/kernel.h"
#include "framework/machine_profile.h"
#include "framework/tuner.h"
#include "framework/workload.h"

namespace rooftune::cli {

// --kernel, --shape, --dtype and --epilogue; `threads` is --threads where a command takes one
// count.
struct Selection {
  const Kernel* kernel;
  Workload workload;
  int threads = 1;
};

// Cold or warm timing: --cold or --warm, else the workload decides (CacheFor).
enum class CacheChoice { kByWorkload, kCold, kWarm };

// The one rule for cold versus warm timing, for tune, run, bench and the benches alike: as the
// flags force it, else cold exactly when the workload streams its operands from DRAM
// (StreamsFromDram): timed warm, a cache larger than the one this process measures would hold
// what the roofline charges to DRAM, and the verdict would come out impossible.
CacheMode CacheFor(CacheChoice choice, const MachineProfile& profile, const Workload& workload,
                   int threads);

struct VerifyOptions {
  Selection selection;
  std::string config;  // --config as given ("" for the stored or initial one)
  bool json = false;
  bool in_process = false;  // --in-process: no first run in a worker
};

struct BenchOptions {
  Selection selection;
  std::string config;
  CacheChoice cache = CacheChoice::kByWorkload;
  bool json = false;
  bool counters = false;
  bool in_process = false;
  std::vector<const Kernel*> versus;  // --versus: kernels timed in pairs with this one
};

struct TuneCommandOptions {
  Selection selection;        // its `threads` unused: see below
  std::vector<int> threads;   // --threads, each tuned in turn
  bool threads_auto = false;  // --threads auto: `threads` is AutoThreadCounts, then one chosen
  TuneOptions tune;           // --strategy, --budget-seconds
  CacheChoice cache = CacheChoice::kByWorkload;
  bool json = false;
  bool in_process = false;    // --in-process: candidates in this process (for debugging)
  bool retry_failed = false;  // --retry-failed: try configs that crashed or hung before
};

struct ProbeCommandOptions {
  bool quick = false, force = false, fresh = false, json = false;
  std::string out;  // --out, default rooftune-report
};

struct RunOptions {
  bool quick = false, force = false, fresh = false;
  TuneOptions tune;  // --strategy, --budget-seconds (a full run caps each tune at 30 s)
  std::string out;   // --out, default rooftune-report
};

struct ReportOptions {
  std::string format;   // md, html, json or text
  std::string out;      // "" for stdout
  std::string machine;  // "" for this machine, a stored machine's identity, or "all"
};

struct SimulateOptions {
  Selection selection;
  std::string config;
  std::string shape;                 // --shape as given, for the run under valgrind
  std::vector<std::string> plugins;  // --plugin, likewise
};

// --kernel, --shape, --dtype and --epilogue (threads left at 1).
absl::StatusOr<Selection> KernelAndWorkloadFromFlags(Session& session);
absl::StatusOr<VerifyOptions> VerifyOptionsFromFlags(Session& session);
absl::StatusOr<BenchOptions> BenchOptionsFromFlags(Session& session);
absl::StatusOr<TuneCommandOptions> TuneOptionsFromFlags(Session& session);
absl::StatusOr<ProbeCommandOptions> ProbeOptionsFromFlags();
absl::StatusOr<RunOptions> RunOptionsFromFlags();
absl::StatusOr<ReportOptions> ReportOptionsFromFlags();
absl::StatusOr<SimulateOptions> SimulateOptionsFromFlags(Session& session);
bool JsonFlag();  // list's --json

// The tuning database's path: --db, else the default rules (DefaultTuningDbPath).
std::string DbPath();
// The plugin files --plugin names.
std::vector<std::string> PluginFlag();

// The parts of a --config text that need no stored or initial config to check: its syntax, and
// each name and value against the kernel's parameters and domains. The constraints between
// parameters are checked once the rest of the config is known.
absl::Status CheckConfigText(const Kernel& kernel, const std::string& text);

}  // namespace rooftune::cli
