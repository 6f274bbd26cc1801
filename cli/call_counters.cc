#include "cli/call_counters.h"

#include <iostream>
#include <map>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "cli/common.h"
#include "probes/pmu_events.h"
#include "reports/report.h"

namespace rooftune::cli {

absl::StatusOr<CallCounters> CallCounters::Open(const Executor& executor) {
  CallCounters counters;
  const bool per_cpu = executor.threads() > 1;
  for (const int cpu : per_cpu ? executor.Cpus() : std::vector<int>{-1}) {
    absl::StatusOr<probes::CounterGroup> group =
        probes::CounterGroup::Open(probes::RooflineEvents(per_cpu), cpu);
    if (!group.ok()) return group.status();
    group->Start();  // zeroed
    group->Stop();
    counters.groups_.push_back(*std::move(group));
  }
  counters.per_cpu_ = per_cpu;
  return counters;
}

std::string CallCounters::scope() const {
  if (!per_cpu_) return "this thread";
  return absl::StrFormat(
      "summed over the %d CPUs its threads are pinned to, everything that ran "
      "there",
      cpus());
}

void CallCounters::Resume() {
  for (probes::CounterGroup& g : groups_) g.Resume();
}

void CallCounters::Stop() {
  for (probes::CounterGroup& g : groups_) g.Stop();
}

std::vector<probes::CountedFigure> CallCounters::PerCall(int calls) const {
  std::vector<std::vector<probes::CountedFigure>> each;
  for (const probes::CounterGroup& g : groups_) {
    each.push_back(probes::PerCallFigures(g.Read(), calls));
  }
  return probes::AddFigures(each);
}

namespace {

// The bytes the verdict priced at `level`, if it priced that level.
std::optional<double> ModelBytes(const Verdict& v, MemoryLevel level) {
  for (const LevelBound& b : v.bounds) {
    if (b.ceiling.kind == Ceiling::Kind::kBandwidth && b.ceiling.level == level) return b.work;
  }
  return std::nullopt;
}

std::string CountedValue(const probes::CountedFigure& f) {
  if (f.unit == "bytes") return reports::FormatBytes(f.per_call);
  if (f.unit == "ns") return reports::FormatSeconds(f.per_call * 1e-9);
  return absl::StrFormat("%.4g %s", f.per_call, f.unit);
}

// A counted figure of bytes beside the bytes the model priced at that level ("" for the others;
// the FLOPs of every vector width are summed and set beside the workload's operations apart).
std::string BesideTheModel(const probes::CountedFigure& f, const Verdict& v) {
  const std::optional<MemoryLevel> level = probes::LevelOfMetric(f.metric);
  if (!level) return "";
  const std::optional<double> model = ModelBytes(v, *level);
  if (!model) return "";
  if (*model <= 0) return absl::StrCat("model ", reports::FormatBytes(0), " (held in cache)");
  return absl::StrFormat("model %s: %.2fx the model", reports::FormatBytes(*model),
                         f.per_call / *model);
}

// The figures the roofline can read: bytes per level and the FLOPs of every width.
CountedTraffic CountedOf(const std::vector<probes::CountedFigure>& figures) {
  CountedTraffic counted;
  for (const probes::CountedFigure& f : figures) {
    if (!f.supported) continue;
    if (const std::optional<MemoryLevel> level = probes::LevelOfMetric(f.metric)) {
      counted.bytes[int(*level)] = f.per_call;
    }
    if (f.unit == "flops") counted.flops = counted.flops.value_or(0) + f.per_call;
  }
  return counted;
}

}  // namespace

void PrintCounters(const std::vector<probes::CountedFigure>& figures, int calls,
                   const std::string& scope, const Verdict& v, const Workload& w) {
  std::cout << absl::StrFormat(
      "  counters    per call, over the %d timed calls (libpfm4 + perf_event_open, user space; "
      "%s)\n",
      calls, scope);
  // Unsupported events share their reason (a machine without a PMU refuses every hardware one).
  std::map<std::string, std::vector<std::string>> unsupported;
  double flops = 0;
  bool any_flops = false;
  for (const probes::CountedFigure& f : figures) {
    if (!f.supported) {
      unsupported[f.reason].push_back(f.metric);
      continue;
    }
    if (f.unit == "flops") flops += f.per_call, any_flops = true;
    std::string line = absl::StrFormat("    %-20s %-14s", f.metric, CountedValue(f));
    if (const std::string model = BesideTheModel(f, v); !model.empty()) {
      absl::StrAppend(&line, " ", model);
    }
    if (f.running_fraction < 0.999) {
      absl::StrAppend(&line, absl::StrFormat(" (scaled: counted %.0f%% of the time)",
                                             100 * f.running_fraction));
    }
    std::cout << absl::StripTrailingAsciiWhitespace(line) << "\n";
  }
  if (any_flops && !CountsIntegerOps(w.dtype)) {
    std::cout << absl::StrFormat("    %-20s %-14s the workload's %.4g: %.2fx\n",
                                 "flops (all widths)", absl::StrFormat("%.4g", flops),
                                 w.Operations(), flops / w.Operations());
  }
  for (const auto& [reason, metrics] : unsupported) {
    std::cout << "    " << absl::StrJoin(metrics, ", ") << ": " << reason << "\n";
  }
  if (const std::string evidence = CounterEvidence(v, CountedOf(figures)); !evidence.empty()) {
    std::cout << "  EVIDENCE    " << evidence << "\n";
  }
}

nlohmann::json CountersJson(const std::vector<probes::CountedFigure>& figures, int calls, int cpus,
                            const Verdict& v) {
  nlohmann::json events = nlohmann::json::array();
  for (const probes::CountedFigure& f : figures) {
    nlohmann::json e = {
        {"metric", f.metric}, {"event", f.event}, {"supported", f.supported}, {"unit", f.unit}};
    if (f.supported) {
      e["per_call"] = f.per_call;
      e["running_fraction"] = f.running_fraction;
      if (const std::optional<MemoryLevel> level = probes::LevelOfMetric(f.metric)) {
        if (const std::optional<double> model = ModelBytes(v, *level)) e["model_bytes"] = *model;
      }
    } else {
      e["reason"] = f.reason;
    }
    events.push_back(e);
  }
  // cpus 0: the calling thread; else the CPUs counted, each whole.
  nlohmann::json j = {{"calls", calls}, {"cpus", cpus}, {"events", events}};
  if (const std::string evidence = CounterEvidence(v, CountedOf(figures)); !evidence.empty()) {
    j["evidence"] = evidence;  // what the counters say of an impossible verdict's cause
  }
  return j;
}

}  // namespace rooftune::cli
