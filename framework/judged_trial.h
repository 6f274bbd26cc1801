// A timed trial judged against the roofline, and a tune's winner as the database keeps it and
// gives back. The CLI's bench and tune and the benchmarks' tuning all record and read results
// this way, so a stored row always carries its attainment, verdict and binding ceiling, and a
// stored config is read back the same way everywhere.
#pragma once

#include <optional>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "framework/harness.h"
#include "framework/kernel.h"
#include "framework/machine_profile.h"
#include "framework/roofline.h"
#include "framework/tuner.h"
#include "framework/tuning_db.h"

namespace rooftune {

// The trial's kernel traffic for its config, priced at the ceilings of its workload's data type
// and thread count, warm or cold as the trial was timed; with `paired` (measured beside the
// kernel: probes/paired_ceiling.h), the verdict uses the paired attainment.
Verdict JudgeTrial(const MachineProfile& profile, const Kernel& kernel, const Trial& trial,
                   const std::optional<PairedAttainment>& paired = std::nullopt);

// The paired attainment a row was stored with, if any.
std::optional<PairedAttainment> PairedOf(const TunedResult& row);

// A verdict's figures written into a row: both attainments, the paired one's quartiles, the
// class, the binding ceiling and the tolerance.
void SetVerdict(const Verdict& verdict, TunedResult& row);

// The row the tuning database stores for a tune: the winner with `verdict` (JudgeTrial of
// outcome.best), and the analytic initial config it was timed against; configs in `kernel`'s
// text form.
TunedResult TunedResultOf(const MachineProfile& profile, const Kernel& kernel,
                          const TuneOutcome& outcome, const Verdict& verdict);

// A stored row judged again, against `profile`: its attainment, verdict and binding ceiling are
// replaced by JudgeTrial of its stored timing and its stored paired attainment. A report prices
// every row with the ceilings it prints, whichever profile was in use when the row was tuned (a
// re-probe moves them), and a row stored without a verdict gets one. Fails, leaving the row as it
// was, when its workload or config no longer parses for `kernel`. Returns the verdict, whose bounds
// the report's levers read.
absl::StatusOr<Verdict> JudgeAgain(const MachineProfile& profile, const Kernel& kernel,
                                   TunedResult& row);

// The config a tune stored for this machine, `kernel`, workload and thread count, if any: the one
// tuned in `cache` mode, else the one tuned in the other (a config good cold is a fair start warm).
// One stored before the kernel's space gained a parameter is completed as ParamSpace::ParseStored
// does (the value it ran with, else the initial config's), and `completed` says so. A stored
// text that no longer parses counts as none.
struct StoredConfig {
  Config config;
  bool completed = false;
  CacheMode cache = CacheMode::kWarm;  // the mode it was tuned in
};
absl::StatusOr<std::optional<StoredConfig>> LoadStoredConfig(TuningDb& db,
                                                             const MachineProfile& profile,
                                                             const Kernel& kernel,
                                                             const Workload& workload, int threads,
                                                             CacheMode cache);

}  // namespace rooftune
