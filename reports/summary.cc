#include "reports/summary.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "reports/levers.h"

namespace rooftune::reports {
namespace {

// The most threads any ceiling was measured at.
int MostThreads(const MachineProfile& p) {
  int most = 1;
  for (const Ceiling& c : p.ceilings) most = std::max(most, c.threads);
  return most;
}

// The dtypes with a compute ceiling, in the order the profile lists them.
std::vector<Dtype> ComputeDtypes(const MachineProfile& p) {
  std::vector<Dtype> dtypes;
  for (const Ceiling& c : p.ceilings) {
    if (c.kind == Ceiling::Kind::kCompute &&
        std::find(dtypes.begin(), dtypes.end(), c.dtype) == dtypes.end()) {
      dtypes.push_back(c.dtype);
    }
  }
  return dtypes;
}

std::string Threads(int n) { return absl::StrCat(n, n == 1 ? " thread" : " threads"); }

// The cache levels this profile plans with, as measured (empty when no probe drew the curve).
std::vector<uint64_t> MeasuredCacheLevels(const MachineProfile& p) {
  std::vector<uint64_t> measured;
  if (p.measured_levels.empty() && p.level_consensus.empty()) return measured;
  for (int level = 1;; ++level) {
    const std::optional<uint64_t> bytes = p.EffectiveCacheBytes(level);
    if (!bytes || (!measured.empty() && *bytes <= measured.back())) break;
    measured.push_back(*bytes);
  }
  return measured;
}

// "L1 47 KiB (OS 48 KiB); L2 406 KiB (OS 2.0 MiB, 2.3 octaves apart)": each level planned on the
// latency curve against the OS's cache of the same rank.
std::string CachesLine(const MachineProfile& p) {
  const std::vector<uint64_t> measured = MeasuredCacheLevels(p);
  std::vector<std::string> parts;
  if (measured.empty()) {
    for (const CacheLevel& c : p.caches) {
      if (c.type != "Instruction") {
        parts.push_back(absl::StrCat("L", c.level, " ", FormatBytes(double(c.size_bytes))));
      }
    }
    return absl::StrCat(
        "**Caches**, as the OS reports them (not measured yet: `rooftune probe` "
        "draws the latency curve)",
        parts.empty() ? "" : ": ", absl::StrJoin(parts, "; "));
  }
  for (size_t i = 0; i < measured.size(); ++i) {
    const int level = int(i) + 1;
    std::string part = absl::StrCat("L", level, " ", FormatBytes(double(measured[i])));
    if (const std::optional<CacheLevel> os = p.DataCache(level)) {
      const double octaves = std::abs(std::log2(double(measured[i]) / double(os->size_bytes)));
      absl::StrAppend(&part, " (OS ", FormatBytes(double(os->size_bytes)),
                      octaves > 0.25 ? absl::StrFormat(", %.1f octaves apart", octaves) : "", ")");
    } else {
      absl::StrAppend(&part, " (the OS reports none)");
    }
    parts.push_back(part);
  }
  for (int level = int(measured.size()) + 1;
       const std::optional<CacheLevel> os = p.DataCache(level); ++level) {
    parts.push_back(absl::StrCat("L", level, " not found on the curve (OS ",
                                 FormatBytes(double(os->size_bytes)), ")"));
  }
  return absl::StrCat("**Caches**, found on the latency curve (the OS's size beside): ",
                      absl::StrJoin(parts, "; "));
}

std::string Rate(const Ceiling& c) { return c.RateText(c.per_second); }

}  // namespace

std::string ResultAnchor(int number) { return absl::StrCat("result-", number); }

std::string LinkTo(const PlacedResult& r) {
  return absl::StrCat("[#", r.number, " ", r.label, "](#", ResultAnchor(r.number), ")");
}

std::vector<std::string> MachineFacts(const MachineProfile& p) {
  std::vector<std::string> facts;
  const int nodes = p.NumaNodesSpanned(p.logical_cpus);
  facts.push_back(absl::StrCat(
      "**CPU**: ", p.cpu_model.empty() ? "unknown" : p.cpu_model,
      p.vendor.empty() ? "" : absl::StrCat(" (", p.vendor, ")"), ", ", p.logical_cpus, " CPUs, ",
      p.physical_cores, p.physical_cores == 1 ? " core" : " cores",
      nodes > 1 ? absl::StrCat(", ", nodes, " NUMA nodes") : "",
      p.hwy_targets.empty() ? "" : absl::StrCat("; widest vectors ", p.hwy_targets.front()),
      p.clock_ghz > 0 ? absl::StrFormat("; clock %.2f GHz (measured)", p.clock_ghz) : ""));
  facts.push_back(CachesLine(p));
  const int most = MostThreads(p);
  std::vector<std::string> peaks;
  for (const Dtype dtype : ComputeDtypes(p)) {
    const Ceiling* one = p.FindCompute(dtype, 1);
    const Ceiling* all = p.FindCompute(dtype, most);
    std::string peak = absl::StrCat(ToString(dtype), " ");
    if (one != nullptr) absl::StrAppend(&peak, Rate(*one), " on 1 thread");
    if (all != nullptr && all != one) {
      absl::StrAppend(&peak, one != nullptr ? ", " : "", Rate(*all), " on ", Threads(most));
    }
    peaks.push_back(peak);
  }
  if (!peaks.empty())
    facts.push_back(absl::StrCat("**Peak compute**: ", absl::StrJoin(peaks, "; ")));
  const Ceiling* dram_one = p.FillBandwidth(MemoryLevel::kDram, 1);
  const Ceiling* dram_all = p.FillBandwidth(MemoryLevel::kDram, most);
  if (dram_one != nullptr) {
    std::string dram = absl::StrCat("**DRAM read**: ", Rate(*dram_one), " on 1 thread");
    if (dram_all != nullptr && dram_all != dram_one) {
      absl::StrAppend(&dram, ", ", Rate(*dram_all), " on ", Threads(most),
                      absl::StrFormat(": one core reaches %.0f%% of the machine's DRAM bandwidth",
                                      100 * dram_one->per_second / dram_all->per_second));
    }
    facts.push_back(dram);
  }
  std::vector<std::string> splits;
  for (const MachineProfile::ParallelCall& c : p.parallel_calls) {
    splits.push_back(
        absl::StrFormat("%.1f us on %s", 1e6 * c.overhead_seconds, Threads(c.threads)));
  }
  if (!splits.empty()) {
    facts.push_back(absl::StrCat("**A call split over threads** costs, beyond its work, ",
                                 absl::StrJoin(splits, ", "),
                                 " (waking and joining them): a small product stays on one "
                                 "thread unless its work repays that"));
  }
  return facts;
}

RidgeTable RidgePoints(const MachineProfile& p) {
  RidgeTable t;
  t.threads = MostThreads(p);
  std::vector<MemoryLevel> levels;
  for (int i = 0; i < kNumMemoryLevels; ++i) {
    if (p.FillBandwidth(MemoryLevel(i), t.threads) != nullptr) levels.push_back(MemoryLevel(i));
  }
  const std::vector<Dtype> dtypes = ComputeDtypes(p);
  if (levels.empty() || dtypes.empty()) return t;
  t.header = {"dtype"};
  for (MemoryLevel level : levels) t.header.push_back(std::string(ToString(level)));
  for (const Dtype dtype : dtypes) {
    const Ceiling* compute = p.FindCompute(dtype, t.threads);
    if (compute == nullptr) continue;
    std::vector<std::string> row = {std::string(ToString(dtype))};
    for (MemoryLevel level : levels) {
      row.push_back(absl::StrFormat(
          "%.3g", compute->per_second / p.FillBandwidth(level, t.threads)->per_second));
    }
    t.rows.push_back(std::move(row));
  }
  return t;
}

namespace {

// The roof a result binds at: its level's, or compute's.
std::string RoofOf(const PlacedResult& r) {
  return r.binding_level ? absl::StrCat(ToString(*r.binding_level), " bandwidth") : "compute";
}

// One finding for the results impossible against one roof: their links, the range of their
// attainments, and the first one's diagnosis (the others' differ in their figures only).
Finding ImpossibleFinding(const ReportInput& in, const std::vector<const PlacedResult*>& group) {
  const PlacedResult& first = *group.front();
  const Verdict* v = first.index < in.verdicts.size() ? &in.verdicts[first.index] : nullptr;
  const std::string diagnosis = v != nullptr && !v->diagnosis.empty()
                                    ? v->diagnosis
                                    : "the ceiling or the byte count is wrong for it (`rooftune "
                                      "bench --counters` names which)";
  Finding f{Finding::Kind::kImpossible, first.number, {}, 1, ""};
  double low = first.attainment, high = first.attainment;
  std::vector<std::string> links;
  for (const PlacedResult* r : group) {
    f.numbers.push_back(r->number);
    low = std::min(low, r->attainment), high = std::max(high, r->attainment);
    links.push_back(absl::StrCat("[#", r->number, "](#", ResultAnchor(r->number), ")"));
  }
  if (group.size() == 1) {
    f.text = absl::StrCat(LinkTo(first), ": **impossible**, attainment ",
                          FormatAttainment(first.attainment), " (above ",
                          absl::StrFormat("%.2f", 1 + in.results[first.index].tolerance),
                          "): ", diagnosis);
  } else {
    f.text =
        absl::StrCat("**", group.size(), " results impossible** against the ", RoofOf(first),
                     " roof (", absl::StrJoin(links, ", "), "; attainment ", FormatAttainment(low),
                     "-", FormatAttainment(high), "); ", LinkTo(first), ": ", diagnosis);
  }
  return f;
}

}  // namespace

std::vector<Finding> Findings(const ReportInput& in, const std::vector<PlacedResult>& placed) {
  std::vector<Finding> levers, far, impossible;
  std::vector<std::vector<const PlacedResult*>> broken;  // by roof, in report order
  for (const PlacedResult& r : placed) {
    if (r.impossible) {
      auto same_roof = std::find_if(broken.begin(), broken.end(), [&](const auto& group) {
        return RoofOf(*group.front()) == RoofOf(r);
      });
      if (same_roof == broken.end()) {
        broken.push_back({&r});
      } else {
        same_roof->push_back(&r);
      }
      continue;
    }
    const Lever* first = FirstThatPays(r.levers);
    if (first == nullptr) continue;
    const std::string state = absl::StrCat("attainment ", FormatAttainment(r.attainment), " (",
                                           r.verdict ? ToString(*r.verdict) : "not judged", ")");
    if (first->kind == Lever::Kind::kInnerLoop) {
      if (r.attainment >= kFarFromBound) continue;
      far.push_back({Finding::Kind::kFarFromBound,
                     r.number,
                     {r.number},
                     first->gain,
                     absl::StrCat(LinkTo(r), ": far from its bound, ", state,
                                  absl::StrFormat(": the inner loop could make it %.1fx faster; ",
                                                  first->gain),
                                  first->how)});
      continue;
    }
    levers.push_back(
        {Finding::Kind::kLever,
         r.number,
         {r.number},
         first->gain,
         absl::StrCat(LinkTo(r), ": pull **", ToString(first->kind), "** first, ",
                      absl::StrFormat("%.1fx by the roofline", first->gain),
                      first->measured ? absl::StrFormat(" (%.2fx measured)", *first->measured) : "",
                      "; ", first->how, "; ", state)});
  }
  for (const auto& group : broken) impossible.push_back(ImpossibleFinding(in, group));
  auto by_gain = [](const Finding& a, const Finding& b) { return a.gain > b.gain; };
  std::stable_sort(levers.begin(), levers.end(), by_gain);
  std::stable_sort(far.begin(), far.end(), by_gain);
  std::vector<Finding> findings = std::move(levers);
  findings.insert(findings.end(), far.begin(), far.end());
  findings.insert(findings.end(), impossible.begin(), impossible.end());
  return findings;
}

void AddSummary(const ReportInput& in, const std::vector<PlacedResult>& placed, size_t shown,
                Document& doc) {
  doc.Heading(2, "Summary", "summary").List(MachineFacts(in.profile));
  const RidgeTable ridge = RidgePoints(in.profile);
  if (!ridge.rows.empty()) {
    doc
        .Paragraph(absl::StrCat(
            "**Ridge points** at ", Threads(ridge.threads),
            ": the operations per byte of each level above which a kernel is bound by compute, "
            "not by that level"))
        .Table(ridge.header, ridge.rows);
  }
  if (placed.empty()) {
    doc.Paragraph(
        "**Findings**: no tuned results for this machine yet: run `rooftune run` (or "
        "`rooftune tune`), then report again.");
    return;
  }
  int at_bound = 0, headroom = 0, impossible = 0, unjudged = 0;
  for (const PlacedResult& r : placed) {
    at_bound += r.verdict == Verdict::Class::kAtBound;
    headroom += r.verdict == Verdict::Class::kHeadroom;
    impossible += r.impossible;
    unjudged += !r.verdict.has_value();
  }
  std::string counts = absl::StrCat(placed.size(), " results: ", at_bound, " at their bound, ",
                                    headroom, " with headroom, ", impossible, " impossible");
  if (unjudged > 0) absl::StrAppend(&counts, ", ", unjudged, " not judged (kernel not loaded)");
  const std::vector<Finding> findings = Findings(in, placed);
  if (findings.empty()) {
    doc.Paragraph(absl::StrCat("**Findings** (", counts, "): no lever pays on any result."));
    return;
  }
  // The first `shown` that pay, and every impossible verdict (up to `shown` too): a broken model
  // is news whatever else pays.
  std::vector<std::string> items;
  size_t paying = 0, broken = 0, left = 0;
  for (const Finding& f : findings) {
    size_t& count = f.kind == Finding::Kind::kImpossible ? broken : paying;
    if (count++ < shown) {
      items.push_back(f.text);
    } else {
      ++left;
    }
  }
  doc.Paragraph(absl::StrCat("**Findings**, in the order they pay (", counts, "):")).List(items);
  if (left > 0) {
    doc.Paragraph(
        absl::StrCat(left, " more in [the levers table](#levers) and [each result](#results)."));
  }
}

}  // namespace rooftune::reports
