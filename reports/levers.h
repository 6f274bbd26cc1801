// The optimisation levers of a tuned result, in the order they pay: fewer bytes, more work per
// byte, better reuse, fusion, threads, and only then the inner loop. A lever further left changes
// what the ones after it can gain, so the first that pays is the one to pull first.
//
// Each figure is what the roofline says a lever gains: the bound time now over the bound time with
// the lever pulled, the other ceilings unchanged. The inner loop's is the measured time over the
// bound (1 / attainment). Where the database holds the other side of a lever (the same shape
// with narrower operands, the unfused variant, more threads), the measured ratio stands beside it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "framework/machine_profile.h"
#include "framework/roofline.h"
#include "framework/tuning_db.h"
#include "nlohmann/json.hpp"
#include "reports/report.h"

namespace rooftune::reports {

// A lever pays when it gains more than a kernel at its bound (kAtBoundFrom) has left, about a
// shared machine's noise: so the inner loop pays exactly when the verdict says headroom.
inline constexpr double kLeverPays = 1 / kAtBoundFrom;

struct Lever {
  enum class Kind { kFewerBytes, kMoreWorkPerByte, kBetterReuse, kFusion, kThreads, kInnerLoop };
  Kind kind;
  double gain = 1;                 // by the roofline; 1 when it cannot lower the bound
  std::optional<double> measured;  // the same ratio between two rows of the database
  bool pulled = false;             // this kernel pulls it already (a fused epilogue): `measured`
                                   // is then what it saved
  std::string how;                 // what pulling it means here, or why it does not pay

  bool Pays() const { return !pulled && gain > kLeverPays; }
};
absl::string_view ToString(Lever::Kind kind);  // "fewer bytes", "more work per byte", ...

// The six levers of in.results[i], in the order above, priced with in.verdicts[i] (the row
// judged against in.profile). The other rows give the measured ratios. Fewer bytes is priced by
// the narrower workload's fastest judged row, else by in.model_bound, else by this row's traffic
// scaled to the narrower operands. Empty when the row's verdict has no bounds, and when it is
// impossible: a broken model prices no lever.
std::vector<Lever> LeversOf(const ReportInput& in, size_t i);

// The first lever that pays, or null when none does.
const Lever* FirstThatPays(const std::vector<Lever>& levers);

// The levers as JSON (report.json, `rooftune bench --json`): one object per lever.
nlohmann::json LeversJson(const std::vector<Lever>& levers);
// The levers as terminal lines, one per lever with `indent` before it, the first that pays
// marked "<- first".
std::string LeversText(const std::vector<Lever>& levers, const std::string& indent);

}  // namespace rooftune::reports
