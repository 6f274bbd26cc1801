#include "reports/report.h"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <map>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "framework/param_space.h"
#include "framework/tuning_db_export.h"
#include "reports/ceiling_matrix.h"
#include "reports/document.h"
#include "reports/levers.h"
#include "reports/machine_text.h"
#include "reports/placed_result.h"
#include "reports/result_detail.h"
#include "reports/summary.h"
#include "reports/svg.h"

namespace rooftune::reports {
namespace {

// A lever's table cell: "3.9x" where it pays, "–" where it does not, the measured ratio beside.
std::string LeverCell(const Lever& lever) {
  std::string cell = lever.pulled   ? std::string("fused")
                     : lever.Pays() ? absl::StrFormat("%.1fx", lever.gain)
                                    : std::string("–");
  if (lever.measured) {
    absl::StrAppend(&cell, absl::StrFormat(lever.pulled ? " (saved %.2fx)" : " (%.2fx measured)",
                                           *lever.measured));
  }
  return cell;
}

// A row whose workload does not parse has no verdict and so no levers: the placed results are all
// the rows this table can show.
void AddLevers(const ReportInput& in, const std::vector<PlacedResult>& placed, Document& doc) {
  std::vector<std::vector<std::string>> rows;
  for (const PlacedResult& placed_row : placed) {
    const std::vector<Lever>& levers = placed_row.levers;
    if (levers.empty()) continue;
    const TunedResult& r = in.results[placed_row.index];
    std::vector<std::string> row = {
        absl::StrCat("[", placed_row.number, "](#", ResultAnchor(placed_row.number), ")"), r.kernel,
        r.workload, absl::StrCat(r.threads), r.binding};
    for (const Lever& lever : levers) row.push_back(LeverCell(lever));
    const Lever* first = FirstThatPays(levers);
    row.push_back(first == nullptr ? "none pays"
                                   : absl::StrCat(ToString(first->kind), ": ", first->how));
    rows.push_back(std::move(row));
  }
  if (rows.empty()) return;
  doc.Heading(2, "Levers, in the order they pay", "levers")
      .Table({"#", "kernel", "workload", "threads", "bound by", "fewer bytes", "more work per byte",
              "better reuse", "fusion", "threads", "inner loop", "pull first"},
             std::move(rows))
      .Paragraph(absl::StrFormat(
          "Each figure is what the roofline says a lever gains: the bound time now over the "
          "bound with the lever pulled, the other ceilings unchanged (`–`: %.2fx or less, what a "
          "kernel at bound, at %.1f of it or above, has left). *Fewer bytes*: the operands one "
          "step narrower (int8 for f32), priced by the narrower workload's fastest row where this "
          "report has "
          "one, else by the model of the best kernel for it (either blocks for its own types), "
          "else by this row's traffic shrunk as the operands do, at the narrower type's compute "
          "ceiling. *More work per byte*: each weight "
          "reused for more inputs, per input, up to the ridge where the operations bind. *Better "
          "reuse*: every level beyond L1 moving each operand once. *Fusion*: the epilogue in the "
          "kernel's final store instead of a pass of its own after it, whose time adds to the "
          "kernel's. *Threads*: every CPU's ceilings for the same operations and bytes. *Inner "
          "loop*: the measured time over the bound, what is left once the bound is right. A lever "
          "further left changes what the ones after it can gain, so the first that pays is the "
          "one to pull first. *measured*: the same ratio between two rows of this report (the "
          "narrower workload's fastest row; the unfused variant; the same kernel on every CPU).",
          kLeverPays, kAtBoundFrom));
}

}  // namespace

std::string FormatRate(double per_second, Dtype dtype) {
  const char* unit = CountsIntegerOps(dtype) ? "OP/s" : "FLOP/s";
  // A tiny workload's rate in G would print as 0.0.
  if (per_second > 0 && per_second < 1e8)
    return absl::StrFormat("%.1f M%s", per_second / 1e6, unit);
  return absl::StrFormat("%.1f G%s", per_second / 1e9, unit);
}

std::string FormatSeconds(double s) {
  if (s >= 1) return absl::StrFormat("%.3f s", s);
  if (s >= 1e-3) return absl::StrFormat("%.3f ms", s * 1e3);
  if (s >= 1e-6) return absl::StrFormat("%.1f us", s * 1e6);
  if (s >= 1e-9) return absl::StrFormat("%.1f ns", s * 1e9);
  return s == 0 ? "0 s" : absl::StrFormat("%.3f ns", s * 1e9);
}

std::string FormatBytes(double bytes) {
  if (bytes >= double(uint64_t{1} << 30))
    return absl::StrFormat("%.1f GiB", bytes / (uint64_t{1} << 30));
  if (bytes >= (1 << 20)) return absl::StrFormat("%.1f MiB", bytes / (1 << 20));
  if (bytes >= 1024) return absl::StrFormat("%.0f KiB", bytes / 1024);
  return absl::StrFormat("%.0f B", bytes);
}

std::string FormatAttainment(double attainment) {
  // The nudge keeps a decimal that binary cannot hold exactly (0.29 x 100 = 28.999...) whole.
  return absl::StrFormat("%.2f", std::floor(attainment * 100 + 1e-9) / 100);
}

std::string AttainmentBasis(const std::optional<PairedAttainment>& paired,
                            double profile_attainment, double tolerance) {
  const std::string limit = absl::StrFormat("impossible above %.2f", 1 + tolerance);
  if (!paired) return absl::StrCat("against the profile (not paired); ", limit);
  // Where the two attainments differ, the ceiling moved since the probe: say by how much.
  const std::string now =
      paired->ceiling_now > 0
          ? absl::StrFormat(" (the ceiling runs at %.2fx the profile's now)", paired->ceiling_now)
          : "";
  return absl::StrCat("paired ", FormatAttainment(paired->low), "-", FormatAttainment(paired->high),
                      " over ", paired->pairs, " pairs with the ", paired->ceiling, "; ",
                      FormatAttainment(profile_attainment), " against the profile", now, "; ",
                      limit);
}

std::string AttainmentCell(const TunedResult& r) {
  if (r.paired_pairs <= 0) return absl::StrCat(FormatAttainment(r.attainment), " profile");
  return absl::StrCat(FormatAttainment(r.attainment), " paired (", FormatAttainment(r.paired_low),
                      "-", FormatAttainment(r.paired_high), "); profile ",
                      FormatAttainment(r.profile_attainment));
}

std::string NowUtc() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

namespace {

// The report's sections, for Markdown and HTML alike.
// The predicted passes, one row per batch and thread count (rooftune predict has the detail).
void AddWhatIf(const ReportInput& in, Document& doc) {
  if (in.what_if.empty()) return;
  const MlpSpec& mlp = in.what_if.front().mlp;
  doc.Heading(2, "What if: an MLP on this machine")
      .Paragraph(absl::StrCat(
          "An MLP ", absl::StrJoin(mlp.widths, " -> "), " (", ToString(mlp.dtype),
          ", bias+ReLU between layers) predicted before it runs, over ", mlp.repeat,
          " passes in a row: per layer the bound of the kernel that would run, at the config it "
          "would run with, over the attainment of its nearest tuned row (`rooftune predict "
          "--mlp ",
          absl::StrJoin(mlp.widths, ","), " --measure` runs it)."));
  std::vector<std::vector<std::string>> rows;
  for (const ReportInput::WhatIf& w : in.what_if) {
    const PassPrediction& p = w.pass;
    std::vector<std::string> binds;
    for (const LayerPrediction& l : p.layers) binds.push_back(l.bound.binding);
    rows.push_back(
        {absl::StrCat(p.batch), absl::StrCat(w.mlp.threads), FormatSeconds(p.predicted_seconds),
         FormatSeconds(p.bound_seconds),
         p.bound_only ? "bound only (no tuned row)" : "tuned rows' attainment",
         absl::StrJoin(binds, "; "),
         p.resident_level ? absl::StrCat("held in L", *p.resident_level) : "streams from DRAM"});
  }
  doc.Table({"batch", "threads", "predicted per pass", "bound", "from", "bound by (per layer)",
             "weights"},
            std::move(rows));
}

// The roofline: one picture, or one per kernel family (operation and dtype, in order of first
// result) when the results are many.
std::vector<Picture> RooflinePictures(const MachineProfile& profile,
                                      const std::vector<PlacedResult>& placed) {
  std::vector<Picture> pictures;
  if (placed.size() <= kResultsInOnePicture) {
    Picture all{"roofline.svg",
                "Hierarchical roofline with the tuned kernels",
                RooflineSvg(profile, placed),
                {}};
    for (const PlacedResult& r : placed) all.numbers.push_back(r.number);
    pictures.push_back(std::move(all));
    return pictures;
  }
  std::vector<std::string> families;
  for (const PlacedResult& r : placed) {
    if (std::find(families.begin(), families.end(), r.family) == families.end()) {
      families.push_back(r.family);
    }
  }
  for (const std::string& family : families) {
    std::vector<PlacedResult> members;
    Picture picture;
    for (const PlacedResult& r : placed) {
      if (r.family != family) continue;
      members.push_back(r);
      picture.numbers.push_back(r.number);
    }
    std::string name = family;
    std::replace(name.begin(), name.end(), ' ', '-');
    picture.file = absl::StrCat("roofline-", name, ".svg");
    picture.description = absl::StrCat("Hierarchical roofline: ", family);
    picture.svg = RooflineSvg(
        profile, members,
        absl::StrCat("Hierarchical roofline: ", family, " (", members.size(), " results)"));
    pictures.push_back(std::move(picture));
  }
  return pictures;
}

// The pictures' key: each result's number (linking to its detail) and what it is.
std::vector<std::vector<std::string>> KeyRows(const ReportInput& in,
                                              const std::vector<const PlacedResult*>& results) {
  std::vector<std::vector<std::string>> rows;
  for (const PlacedResult* r : results) {
    const TunedResult& row = in.results[r->index];
    rows.push_back({absl::StrCat("[", r->number, "](#", ResultAnchor(r->number), ")"), r->label,
                    !row.verdict ? "–" : FormatAttainment(row.attainment),
                    !row.verdict    ? "not judged"
                    : r->impossible ? "**impossible**"
                                    : std::string(ToString(*row.verdict)),
                    r->binding_level ? absl::StrCat(ToString(*r->binding_level))
                    : r->judged      ? "compute"
                                     : "–"});
  }
  return rows;
}

// The roofline pictures, each with the key to the results it places.
void AddRooflineKeys(const ReportInput& in, const std::vector<PlacedResult>& placed,
                     Document& doc) {
  for (const Picture& picture : RooflinePictures(in.profile, placed)) {
    std::vector<const PlacedResult*> shown;
    for (int number : picture.numbers) shown.push_back(&placed[size_t(number - 1)]);
    doc.Image(picture.description, picture.file, picture.svg,
              shown.empty()
                  ? std::vector<std::string>{}
                  : std::vector<std::string>{"#", "result", "attainment", "verdict", "bound by"},
              KeyRows(in, shown));
  }
}

// One row per tuned result, what its columns mean, and a warning when any is impossible.
void AddResultsTable(const ReportInput& in, const std::vector<PlacedResult>& placed,
                     Document& doc) {
  std::vector<std::vector<std::string>> rows;
  for (const PlacedResult& placed_row : placed) {
    const TunedResult& r = in.results[placed_row.index];
    const double speedup =
        r.initial_median_seconds > 0 ? r.initial_median_seconds / r.median_seconds : 0;
    rows.push_back(
        {absl::StrCat("[", placed_row.number, "](#", ResultAnchor(placed_row.number), ")"),
         r.kernel, r.workload, absl::StrCat(r.threads), std::string(ToString(r.cache)),
         r.config.empty() ? ConfigText(r.config) : absl::StrCat("`", r.config, "`"),
         FormatSeconds(r.median_seconds) + absl::StrFormat(" (CV %.1f%%)", 100 * r.cv),
         FormatRate(r.ops_per_second, r.dtype), !r.verdict ? "–" : AttainmentCell(r), r.binding,
         !r.verdict ? "not judged" : std::string(ToString(*r.verdict)),
         absl::StrFormat("%.2fx", speedup)});
  }
  doc.Table({"#", "kernel", "workload", "threads", "cache", "config", "median", "rate",
             "attainment", "bound by", "verdict", "tuned / initial"},
            std::move(rows))
      .Paragraph(
          "*Attainment* is the roofline bound time over the measured median: the bound is the "
          "largest of the operations at the compute ceiling of the workload's own data type and "
          "the bytes of each memory level at that level's bandwidth, at the same thread count "
          "(plus, for a kernel that makes a separate pass after its main loop, that pass's own "
          "bound: \"then ... (separate pass)\"). A value above 1 is never speed: it is reported "
          "as `impossible` with the model error named. *paired* attainments were measured beside "
          "the binding ceiling's own loop (the compute loop of the dtype, or the stream read of "
          "as many bytes from the same level; where a bound of the other kind is close behind, "
          "its loop too, each pair priced at the larger), in back-to-back pairs on the same "
          "threads: the median of the pairs with their quartiles, which a slow or fast phase of a "
          "shared machine does not move; the verdict uses it, and *profile* is the same result "
          "against the ceilings above, whichever profile was in use when it was tuned. Above 1 "
          "plus the pairs' spread (never less than 5%) is impossible. *tuned / initial* compares "
          "the tuned config with the analytic starting config, timed back to back.");
  bool any_impossible = false;
  for (const TunedResult& r : in.results)
    any_impossible |= r.verdict == Verdict::Class::kImpossible;
  if (any_impossible) {
    doc.Paragraph(
        "**Some results are above their roofline: the model (ceiling or byte count) is "
        "broken for them, not the kernel fast.** They have no levers below: a broken "
        "model prices none.");
  }
}

// The thread counts `tune --threads auto` stored: fewer than offered where they were as fast.
void AddThreadChoices(const ReportInput& in, Document& doc) {
  if (in.thread_choices.empty()) return;
  std::vector<std::vector<std::string>> rows;
  for (const TuningDb::ThreadChoice& c : in.thread_choices) {
    rows.push_back({c.kernel, c.workload, absl::StrCat(c.offered), absl::StrCat(c.threads),
                    absl::StrFormat("%.0f%%", 100 * c.tolerance), c.created_at});
  }
  doc.Heading(3, "Thread counts chosen", "thread-choices")
      .Paragraph(
          "`tune --threads auto` timed these workloads on every count up to the threads offered "
          "and kept the fewest whose time was within the tolerance of the fastest: the library "
          "API, given exactly that many threads, runs each on the count chosen (`rooftune "
          "predict` prices it there too).")
      .Table({"kernel", "workload", "threads offered", "runs on", "within", "chosen at"},
             std::move(rows));
}

Document BuildReport(const ReportInput& in) {
  const MachineProfile& p = in.profile;
  const std::vector<PlacedResult> placed = PlaceResults(in);
  Document doc;
  doc.Heading(1, "rooftune report")
      .Paragraph(absl::StrCat(
          "Generated ", in.generated_at, " on **", p.cpu_model, "** (", p.logical_cpus,
          " CPUs; fingerprint `", p.Fingerprint(),
          "`). Every figure below was measured on this "
          "machine; each row says whether its caches were warm or cold (operands evicted)."));
  AddSummary(in, placed, kFindingsShown, doc);
  AddCeilingMatrix(p, doc);
  doc.Heading(2, "Roofline", "roofline")
      .Paragraph(
          "Each result is drawn as a cache-aware roofline draws it: one marker per memory level, "
          "at "
          "the operations per byte its traffic model moves at that level, all at its measured rate "
          "and joined; the filled marker is the level (or the compute roof) that binds it, a cross "
          "an impossible result. A kernel sits under the roof of each level; the one it is "
          "closest to is the one to work on. Numbers name the results in the key (hover a marker "
          "for its figures).");
  AddRooflineKeys(in, placed, doc);
  const std::vector<std::string> findings = CacheFindings(p);
  if (!findings.empty()) {
    doc.Heading(2, "Caches as measured", "caches")
        .Image("Latency curve", std::string(kLatencyPicture), LatencySvg(p))
        .List(findings);
  }
  AddWhatIf(in, doc);
  doc.Heading(2, "Tuned kernels", "results");
  if (in.results.empty()) {
    doc.Paragraph("No tuned results for this machine yet: run `rooftune tune` or `rooftune run`.");
    return doc;
  }
  AddResultsTable(in, placed, doc);
  AddThreadChoices(in, doc);
  AddLevers(in, placed, doc);
  doc.Heading(2, "Each result", "detail");
  for (const PlacedResult& r : placed) AddResultDetail(in, r, doc);
  return doc;
}

// A result's JSON in three parts: what ran, how long it took, and how it was judged.
nlohmann::json WhatRanJson(const TunedResult& r) {
  return {{"kernel", r.kernel},   {"workload", r.workload}, {"dtype", ToString(r.dtype)},
          {"threads", r.threads}, {"config", r.config},     {"cache", ToString(r.cache)}};
}

nlohmann::json TimingJson(const TunedResult& r) {
  return {{"median_seconds", r.median_seconds},
          {"min_seconds", r.min_seconds},
          {"cv", r.cv},
          {"ops_per_second", r.ops_per_second},
          {"initial_config", r.initial_config},
          {"initial_median_seconds", r.initial_median_seconds},
          {"configs_tried", r.configs_tried},
          {"measured_at", r.created_at}};
}

// Attainments are null for a row stored without a verdict; the paired one also where the row
// was not timed beside its ceiling.
nlohmann::json JudgementJson(const TunedResult& r) {
  const auto unless_unjudged = [&](double value) {
    return r.verdict ? nlohmann::json(value) : nlohmann::json();
  };
  nlohmann::json paired;
  if (r.paired_pairs > 0) {
    paired = {{"median", r.paired_attainment},
              {"low", r.paired_low},
              {"high", r.paired_high},
              {"pairs", r.paired_pairs},
              {"ceiling", r.paired_ceiling}};
  }
  return {{"attainment", unless_unjudged(r.attainment)},
          {"attainment_basis", r.paired_pairs > 0 ? "paired" : "profile"},
          {"profile_attainment", unless_unjudged(r.profile_attainment)},
          {"paired_attainment", paired},
          {"impossible_above", 1 + r.tolerance},
          {"verdict", VerdictText(r.verdict)},
          {"binding_ceiling", r.binding}};
}

}  // namespace

std::vector<Picture> ReportPictures(const ReportInput& in) {
  std::vector<Picture> pictures = {
      {std::string(kLatencyPicture), "Latency curve", LatencySvg(in.profile), {}}};
  for (Picture& roofline : RooflinePictures(in.profile, PlaceResults(in))) {
    pictures.push_back(std::move(roofline));
  }
  return pictures;
}

std::string RenderMarkdown(const ReportInput& in) { return ToMarkdown(BuildReport(in)); }

std::string RenderHtml(const ReportInput& in) { return ToHtml(BuildReport(in)); }

std::string RenderText(const ReportInput& in, int width) { return ToText(BuildReport(in), width); }

nlohmann::json RenderJson(const ReportInput& in) {
  nlohmann::json j;
  j["schema_version"] = kReportSchemaVersion;
  j["generated_at"] = in.generated_at;
  j["machine"] = in.profile.ToJson();
  j["what_if"] = nlohmann::json::array();
  for (const ReportInput::WhatIf& w : in.what_if) {
    j["what_if"].push_back({{"mlp", w.mlp.widths},
                            {"dtype", ToString(w.mlp.dtype)},
                            {"threads", w.mlp.threads},
                            {"repeat", w.mlp.repeat},
                            {"batch", w.pass.batch},
                            {"predicted_seconds", w.pass.predicted_seconds},
                            {"bound_seconds", w.pass.bound_seconds},
                            {"bound_only", w.pass.bound_only}});
  }
  j["thread_choices"] = nlohmann::json::array();
  for (const TuningDb::ThreadChoice& c : in.thread_choices) {
    j["thread_choices"].push_back(ThreadChoiceJson(c));
  }
  j["results"] = nlohmann::json::array();
  for (size_t i = 0; i < in.results.size(); ++i) {
    nlohmann::json result = WhatRanJson(in.results[i]);
    result.update(TimingJson(in.results[i]));
    result.update(JudgementJson(in.results[i]));
    result["levers"] = LeversJson(LeversOf(in, i));
    j["results"].push_back(std::move(result));
  }
  return j;
}

}  // namespace rooftune::reports
