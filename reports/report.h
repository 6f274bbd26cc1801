// Renders what rooftune measured: the machine's ceilings and the tuned results with their
// verdicts, as terminal text, Markdown and JSON. Every figure names the kernel and config that
// produced it and the ceiling it was judged against.
#pragma once

#include <string>
#include <vector>

#include "framework/machine_profile.h"
#include "framework/roofline.h"
#include "framework/tuning_db.h"
#include "nlohmann/json.hpp"

namespace rooftune::reports {

inline constexpr int kReportSchemaVersion = 1;

struct ReportInput {
  MachineProfile profile;
  std::vector<TunedResult> results;
  std::string generated_at;  // UTC, ISO 8601
  // results[i] judged against `profile`, for its levers (reports/levers.h); a row without one
  // (its kernel not loaded) is shown without levers.
  std::vector<Verdict> verdicts;
};

// The machine: facts, caches and ceilings, as aligned text tables (also used by `rooftune probe`).
std::string RenderProfileText(const MachineProfile& profile);
// What the measured levels say against sysfs, the TLB steps, the streaming view of the last level,
// and the best explanation of any disagreement: one finding per line.
std::vector<std::string> CacheFindings(const MachineProfile& profile);
std::string RenderMarkdown(const ReportInput& input);
// The same report as a standalone HTML page, its pictures linked as report.md links them.
std::string RenderHtml(const ReportInput& input);
nlohmann::json RenderJson(const ReportInput& input);

// "1.23 GFLOP/s"-style helpers shared with the CLI.
std::string FormatRate(double per_second, bool integer_ops);
std::string FormatSeconds(double seconds);
std::string FormatBytes(double bytes);
std::string NowUtc();

}  // namespace rooftune::reports
