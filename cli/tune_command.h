// Tuning as the tune and run commands share it.
#pragma once

#include <vector>

#include "absl/status/statusor.h"
#include "cli/session.h"
#include "framework/tuner.h"
#include "nlohmann/json.hpp"

namespace rooftune::cli {

// --strategy and --budget-seconds, with progress on stderr; a usage error for values Tune
// would refuse, so that run says so before it probes.
absl::StatusOr<TuneOptions> BaseTuneOptions();

// Tunes one kernel on one workload at each thread count and stores every winner; one JSON
// object (TrialJson and the search's counts) per thread count.
absl::StatusOr<std::vector<nlohmann::json>> TuneOne(Session& session, const Kernel& kernel,
                                                    const Workload& workload,
                                                    const std::vector<int>& threads,
                                                    const MachineProfile& profile,
                                                    const TuneOptions& options);

}  // namespace rooftune::cli
