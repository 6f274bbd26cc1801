#include "reports/placed_result.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "framework/workload.h"

namespace rooftune::reports {

std::string PlacedResult::Describe() const {
  std::string text = absl::StrCat("#", number, " ", label, ": ", FormatRate(ops_per_second, dtype));
  if (!judged) return absl::StrCat(text, ", not judged (kernel not loaded)");
  absl::StrAppend(&text, ", attainment ", FormatAttainment(attainment), " (",
                  verdict ? ToString(*verdict) : "not judged", "), bound by ",
                  binding_level ? absl::StrCat(ToString(*binding_level), " bandwidth")
                                : std::string("compute"));
  for (const LevelMark& m : levels) {
    absl::StrAppend(&text, absl::StrFormat("; %s %.3g op/B", ToString(m.level), m.intensity));
  }
  return text;
}

std::vector<PlacedResult> PlaceResults(const ReportInput& in) {
  std::vector<PlacedResult> placed;
  for (size_t i = 0; i < in.results.size(); ++i) {
    const TunedResult& r = in.results[i];
    absl::StatusOr<Workload> w = ParseWorkloadKey(r.workload);
    if (!w.ok()) continue;
    PlacedResult p;
    p.number = int(placed.size()) + 1;
    p.index = i;
    p.label = absl::StrCat(r.kernel, " ", w->ShapeString(), " ", r.threads, "T");
    p.family = absl::StrCat(ToString(w->op), " ", ToString(w->dtype));
    p.dtype = w->dtype;
    p.threads = r.threads;
    p.operations = w->Operations();
    p.ops_per_second = r.ops_per_second;
    p.measured_seconds = r.median_seconds;
    p.verdict = r.verdict;
    p.attainment = r.attainment;
    p.impossible = r.verdict == Verdict::Class::kImpossible;
    p.levers = LeversOf(in, i);
    const Verdict* v = i < in.verdicts.size() ? &in.verdicts[i] : nullptr;
    if (v != nullptr && !v->bounds.empty()) {
      p.judged = true;
      p.pass_seconds = v->pass_seconds;
      const LevelBound* binding = v->Binding();
      for (const LevelBound& b : v->bounds) {
        if (b.ceiling.kind == Ceiling::Kind::kCompute) {
          p.compute_seconds = b.seconds;
          p.compute_rate = b.ceiling.per_second;
          continue;
        }
        if (b.work <= 0) continue;  // nothing moves there: no finite intensity to draw
        p.levels.push_back(
            {b.ceiling.level, b.work, b.ceiling.per_second, b.seconds, p.operations / b.work});
        if (&b == binding) p.binding_level = b.ceiling.level;
      }
      std::sort(p.levels.begin(), p.levels.end(),
                [](const LevelMark& a, const LevelMark& b) { return a.level < b.level; });
    } else {
      const double bytes = w->CompulsoryBytes();
      p.levels.push_back({MemoryLevel::kDram, bytes, 0, 0, p.operations / bytes});
    }
    placed.push_back(std::move(p));
  }
  return placed;
}

}  // namespace rooftune::reports
