#include "reports/result_detail.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "reports/levers.h"
#include "reports/summary.h"

namespace rooftune::reports {
namespace {

struct Bar {
  std::string name;
  std::string work;  // "2.1 GFLOP", "12.0 MiB"
  std::string rate;  // the ceiling it is priced at
  double seconds = 0;
  bool binds = false;
  bool measured = false;
};

std::vector<Bar> BarsOf(const PlacedResult& r) {
  std::vector<Bar> bars;
  if (r.compute_seconds > 0) {
    const bool integer = CountsIntegerOps(r.dtype);
    bars.push_back(
        {"compute", absl::StrFormat("%.3g G%s", r.operations / 1e9, integer ? "OP" : "FLOP"),
         FormatRate(r.compute_rate, r.dtype), r.compute_seconds, r.judged && !r.binding_level});
  }
  for (const LevelMark& m : r.levels) {
    if (m.bandwidth <= 0) continue;
    bars.push_back({std::string(ToString(m.level)), FormatBytes(m.bytes),
                    absl::StrFormat("%.1f GB/s", m.bandwidth / 1e9), m.seconds,
                    r.binding_level == m.level});
  }
  if (r.pass_seconds > 0) bars.push_back({"separate pass", "", "", r.pass_seconds});
  bars.push_back({"measured", "", "", r.measured_seconds, false, true});
  return bars;
}

}  // namespace

std::string TimeBarsSvg(const PlacedResult& r) {
  const std::vector<Bar> bars = BarsOf(r);
  double longest = 0;
  for (const Bar& b : bars) longest = std::max(longest, b.seconds);
  constexpr double kWidth = 560, kName = 100, kBar = 330, kRow = 20;
  const double height = kRow * double(bars.size()) + 10;
  std::string s = absl::StrFormat(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f "
      "%.0f\" font-family=\"sans-serif\" font-size=\"11\">\n<rect width=\"100%%\" height=\"100%%\" "
      "fill=\"white\"/>\n",
      kWidth, height, kWidth, height);
  for (size_t i = 0; i < bars.size(); ++i) {
    const Bar& b = bars[i];
    const double y = 5 + kRow * double(i);
    const double length = longest > 0 ? std::max(1.0, kBar * b.seconds / longest) : 1;
    const char* fill = b.measured ? "#444" : b.binds ? "#d62728" : "#9ecae1";
    absl::StrAppend(
        &s,
        absl::StrFormat(
            "<text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\">%s</text>"
            "<rect x=\"%.0f\" y=\"%.1f\" width=\"%.1f\" height=\"%.0f\" "
            "fill=\"%s\"><title>%s</title></rect>"
            "<text x=\"%.1f\" y=\"%.1f\">%s%s</text>\n",
            kName - 6, y + 13, EscapeHtml(b.name), kName, y + 3, length, kRow - 6, fill,
            EscapeHtml(absl::StrCat(b.name, ": ", b.work, b.work.empty() ? "" : " at ", b.rate)),
            kName + length + 5, y + 13, FormatSeconds(b.seconds), b.binds ? " (binds)" : ""));
  }
  return s + "</svg>\n";
}

void AddResultDetail(const ReportInput& in, const PlacedResult& r, Document& doc) {
  const TunedResult& row = in.results[r.index];
  doc.Heading(3, absl::StrCat("#", r.number, " ", r.label), ResultAnchor(r.number));
  std::string summary =
      absl::StrCat("`", row.workload, "` on ", r.threads, r.threads == 1 ? " thread" : " threads",
                   ", ", ToString(row.cache), ": ", FormatSeconds(row.median_seconds),
                   absl::StrFormat(" (CV %.1f%%), ", 100 * row.cv),
                   FormatRate(row.ops_per_second, r.dtype), "; ");
  if (!row.verdict) {
    absl::StrAppend(&summary, "not judged (its kernel is not loaded).");
  } else {
    absl::StrAppend(&summary, "attainment ", AttainmentCell(row), ", **", ToString(*row.verdict),
                    "**, bound by ", row.binding, ".");
  }
  doc.Paragraph(summary);
  if (r.impossible) {
    const Verdict* v = r.index < in.verdicts.size() ? &in.verdicts[r.index] : nullptr;
    if (v != nullptr && !v->diagnosis.empty()) doc.Paragraph(absl::StrCat("Why: ", v->diagnosis));
  }
  const std::vector<Bar> bars = BarsOf(r);
  if (bars.size() > 1) {
    std::vector<std::vector<std::string>> rows;
    for (const Bar& b : bars) {
      rows.push_back({b.binds ? absl::StrCat("**", b.name, "**") : b.name, b.work, b.rate,
                      FormatSeconds(b.seconds),
                      r.measured_seconds > 0
                          ? absl::StrFormat("%.0f%%", 100 * b.seconds / r.measured_seconds)
                          : ""});
    }
    doc.Image(absl::StrCat("Where the time of #", r.number, " goes"), "", TimeBarsSvg(r))
        .Table({"time of", "work", "at", "takes", "of measured"}, std::move(rows));
  }
  const std::vector<Lever>& levers = r.levers;
  if (!levers.empty()) {
    std::vector<std::vector<std::string>> rows;
    const Lever* first = FirstThatPays(levers);
    for (const Lever& l : levers) {
      rows.push_back({&l == first ? absl::StrCat("**", ToString(l.kind), "** (first)")
                                  : std::string(ToString(l.kind)),
                      l.pulled ? "pulled" : absl::StrFormat("%.2fx", l.gain),
                      l.measured ? absl::StrFormat("%.2fx", *l.measured) : "–", l.how});
    }
    doc.Table({"lever", "roofline gain", "measured", "what it means here"}, std::move(rows));
  }
  std::string how;
  if (row.config.empty()) {
    how = "No parameters: a baseline runs as it is.";
  } else if (row.configs_tried > 1) {
    how =
        absl::StrCat("Config `", row.config, "`, the fastest of ", row.configs_tried,
                     " configs tried from the analytic initial config `", row.initial_config, "`");
    if (row.initial_median_seconds > 0 && row.median_seconds > 0) {
      absl::StrAppend(&how, absl::StrFormat(", %.2fx its speed timed back to back",
                                            row.initial_median_seconds / row.median_seconds));
    }
    absl::StrAppend(&how, ".");
  } else {
    how = absl::StrCat(
        "Config `", row.config, "`: ",
        row.config == row.initial_config ? "the analytic initial config" : "given, not tuned", ".");
  }
  if (!row.created_at.empty()) absl::StrAppend(&how, " Measured ", row.created_at, ".");
  doc.Paragraph(how);
}

}  // namespace rooftune::reports
