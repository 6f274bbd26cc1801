#pragma once
// Timed trials as Google Benchmark's JSON writes them, so that its tools/compare.py reads
// `rooftune bench --json` and `rooftune tune --json` beside the bench binaries' output.

#include <vector>

#include "framework/harness.h"
#include "framework/param_space.h"
#include "framework/roofline.h"
#include "nlohmann/json.hpp"

namespace rooftune::cli {

// The trial's row: Google Benchmark's fields (name, run_type "iteration", iterations = timed
// calls, real_time = their median wall time and cpu_time = their median process CPU time, in ns)
// with rooftune's config (in `params`' text form), roofline verdict and paired attainment beside
// them.
nlohmann::json TrialJson(const Trial& t, const Verdict& v, const ParamSpace& params);

// Google Benchmark's aggregate rows over the trial's calls: NAME_mean, NAME_median, NAME_stddev
// (times in ns) and NAME_cv (a fraction). None when nothing was timed.
std::vector<nlohmann::json> AggregateRowsJson(const Trial& t);

// The paired attainment's median, quartiles, pairs and ceiling; null when the verdict has none.
nlohmann::json PairedJson(const Verdict& v);

}  // namespace rooftune::cli
