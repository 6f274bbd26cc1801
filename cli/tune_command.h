// Tuning as the tune and run commands share it.
#pragma once

#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "cli/options.h"
#include "cli/session.h"
#include "framework/tuner.h"
#include "nlohmann/json.hpp"

namespace rooftune::cli {

// Tunes one kernel on one workload at each thread count, judges each winner beside its binding
// ceiling and stores it; one JSON object (TrialJson and the search's counts) per thread count.
// `cache` decides cold or warm timing per thread count (CacheFor); a cold timing, slower by its
// evictions, is capped at a tenth of the budget so the search still tries several configs.
// Progress goes to stderr. `isolated`: candidates run in a supervised worker process
// (cli/isolated_trials.h), so that a config that crashes or hangs is rejected, not fatal; such
// configs are stored as failures and skipped by later tunes unless `retry_failed`. `winners`, when
// given, receives each thread count's tuned config.
absl::StatusOr<std::vector<nlohmann::json>> TuneOne(
    Session& session, const Kernel& kernel, const Workload& workload,
    const std::vector<int>& threads, const MachineProfile& profile, const TuneOptions& options,
    CacheChoice cache, bool isolated = true, bool retry_failed = false,
    std::vector<std::pair<int, Config>>* winners = nullptr);

}  // namespace rooftune::cli
