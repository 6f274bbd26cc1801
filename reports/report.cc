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
#include "reports/ceiling_matrix.h"
#include "reports/document.h"
#include "reports/levers.h"
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
        absl::StrCat("[", placed_row.number, "](#", ResultAnchor(placed_row.number), ")"),
        r.kernel, r.workload, absl::StrCat(r.threads), r.binding};
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
          "step narrower (int8 for f32), priced by the narrower workload's fastest row where this report has "
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
  if (per_second > 0 && per_second < 1e8) return absl::StrFormat("%.1f M%s", per_second / 1e6, unit);
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
  if (bytes >= double(uint64_t{1} << 30)) return absl::StrFormat("%.1f GiB", bytes / (uint64_t{1} << 30));
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
  return absl::StrCat("paired ", FormatAttainment(paired->low), "-",
                      FormatAttainment(paired->high), " over ", paired->pairs, " pairs with the ",
                      paired->ceiling, "; ", FormatAttainment(profile_attainment),
                      " against the profile; ", limit);
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

// Each cache the OS reports against the nearest step the latency curve measured.
void AddSysfsAgreement(const MachineProfile& p, std::vector<std::string>& lines) {
  for (const CacheLevel& c : p.caches) {
    const NearestStep nearest = NearestCacheStep(p.measured_levels, double(c.size_bytes));
    if (nearest.step == nullptr) continue;
    lines.push_back(absl::StrFormat(
        "sysfs L%d %s: nearest measured step %s (%s): %s", c.level, FormatBytes(double(c.size_bytes)),
        FormatBytes(nearest.step->size_bytes), ToString(nearest.step->kind),
        nearest.Agrees() ? "agrees within a quarter octave"
                         : absl::StrFormat("DISAGREES by %.1f octaves", nearest.octaves)));
  }
}

// What the two page sizes told apart: caches only huge pages showed, sets filled unevenly, TLB
// reach.
void AddStepKinds(const MachineProfile& p, std::vector<std::string>& lines) {
  const std::vector<MachineProfile::PlannedStep> planned = p.PlannedSteps();
  auto within_memory = [&](const MeasuredLevel& m) {
    return std::any_of(planned.begin(), planned.end(), [&](const MachineProfile::PlannedStep& s) {
      return s.step == &m && s.role == MachineProfile::PlannedStep::Role::kWithinMemory;
    });
  };
  for (const MeasuredLevel& m : p.measured_levels) {
    if (m.kind == LevelKind::kCacheOnHugePages && !within_memory(m)) {
      lines.push_back(absl::StrFormat(
          "step at %s seen on huge pages only: a cache whose end the TLB's reach hid on 4 KiB "
          "pages (planned at its huge-page size)",
          FormatBytes(m.size_bytes)));
    }
    if (m.kind == LevelKind::kCacheSetsUneven) {
      lines.push_back(absl::StrFormat(
          "cache ending at %s on huge pages began missing earlier on 4 KiB pages (randomly placed "
          "pages fill a physically indexed cache's sets unevenly): planned at its huge-page size",
          FormatBytes(m.size_bytes)));
    }
    if (m.kind == LevelKind::kTlb) {
      // Huge pages remove two effects, not one: the TLB's reach, and the uneven spread of 4 KiB
      // pages over a physically indexed cache's sets (which starts its misses early).
      lines.push_back(absl::StrFormat(
          "step at %s vanishes on huge pages: TLB reach, or 4 KiB pages filling a physically "
          "indexed cache's sets unevenly (then a soft start of the next cache step)",
          FormatBytes(m.size_bytes)));
    }
  }
}

// Why a measured step was or was not planned as a level of its own.
void AddPlanning(const MachineProfile& p, std::vector<std::string>& lines) {
  using Role = MachineProfile::PlannedStep::Role;
  const std::vector<MachineProfile::PlannedStep> planned = p.PlannedSteps();
  const MeasuredLevel* previous = nullptr;  // the last step not skipped as barely dearer
  for (size_t i = 0; i < planned.size(); ++i) {
    const MeasuredLevel& m = *planned[i].step;
    switch (planned[i].role) {
      case Role::kLevel: break;
      case Role::kSecondStage:
      case Role::kInsideReported:
        lines.push_back(absl::StrFormat(
            "steps at %s and %s %s, planned as one level from the first",
            FormatBytes(previous->size_bytes), FormatBytes(m.size_bytes),
            planned[i].role == Role::kSecondStage
                ? "lie less than an octave apart: one cache missing in two stages"
                : "both lie inside one cache the OS reports: that cache missing in two stages "
                  "(part of it taken by another tenant, or its sets filled unevenly)"));
        break;
      case Role::kBarelyDearer:
        lines.push_back(absl::StrFormat(
            "step at %s: loads past it cost barely more (%.1f ns, then %.1f): no level boundary, "
            "not planned as one",
            FormatBytes(m.size_bytes), m.latency_ns, planned[i + 1].step->latency_ns));
        continue;
      case Role::kWithinMemory:
        lines.push_back(absl::StrFormat(
            "step at %s: a hit there costs %.1f ns, half of memory's %.1f or more, and loads past "
            "it little more: a step within memory (page walks under a host's nested paging, DRAM "
            "pages), not a cache; not planned as one",
            FormatBytes(m.size_bytes), m.latency_ns, p.memory_latency_ns));
        continue;
    }
    previous = &m;
  }
}

// The second view: streaming reads keep cache-like bandwidth further than the chase suggests
// when prefetchers hide latency. Reports where bandwidth falls to the geometric middle between
// the fastest and the DRAM plateau.
void AddStreamingView(const MachineProfile& p, std::vector<std::string>& lines) {
  if (p.read_bandwidth_curve.size() < 3) return;
  double peak = 0;
  for (const CurvePoint& c : p.read_bandwidth_curve) peak = std::max(peak, c.value);
  const double dram = p.read_bandwidth_curve.back().value;
  const double middle = std::sqrt(peak * dram);
  double edge = 0;
  for (const CurvePoint& c : p.read_bandwidth_curve) {
    if (c.value >= middle) edge = c.bytes;
  }
  double chased = 0;  // the last step planned as a level
  for (const MachineProfile::PlannedStep& step : p.PlannedSteps()) {
    if (step.role == MachineProfile::PlannedStep::Role::kLevel) chased = step.step->size_bytes;
  }
  lines.push_back(absl::StrFormat(
      "streaming reads (1 thread) stay above %.1f GB/s (between %.1f peak and %.1f DRAM) up to %s; "
      "the pointer chase's last cache step is at %s",
      middle, peak, dram, FormatBytes(edge), FormatBytes(chased)));
  uint64_t sysfs_last = 0;
  for (const CacheLevel& c : p.caches) sysfs_last = std::max(sysfs_last, c.size_bytes);
  if (sysfs_last > 0 && chased > 0 && std::log2(double(sysfs_last) / chased) > 1) {
    lines.push_back(absl::StrFormat(
        "the OS reports a %s last-level cache, but this process measures about %s by latency and %s "
        "by streaming: most likely the cache is shared with other tenants of the host (or "
        "partitioned for this VM), and page walks add to the latency beyond the TLB's reach",
        FormatBytes(double(sysfs_last)), FormatBytes(chased), FormatBytes(edge)));
  }
}

}  // namespace

std::vector<std::string> CacheFindings(const MachineProfile& p) {
  std::vector<std::string> lines;
  if (p.measured_levels.empty()) return lines;
  AddSysfsAgreement(p, lines);
  AddStepKinds(p, lines);
  AddPlanning(p, lines);
  AddStreamingView(p, lines);
  return lines;
}

std::vector<std::string> ConsensusLines(const MachineProfile& p) {
  std::vector<std::string> lines;
  if (p.level_probes == 0 || p.level_consensus.empty()) return lines;
  lines.push_back(absl::StrFormat(
      "\nplanned cache levels: the median of what %d probe(s) of this machine found%s",
      p.level_probes, p.level_probes > 1 ? "" : " (each later probe joins in)"));
  const std::vector<const LevelConsensus*> held = p.ConsensusLevels();
  int index = 0;
  for (const LevelConsensus& c : p.level_consensus) {
    const bool planned = std::find(held.begin(), held.end(), &c) != held.end();
    std::string line = absl::StrFormat(
        "  %-4s %10s  found by %d of %d probes", planned ? absl::StrCat("L", ++index) : "-",
        FormatBytes(c.Bytes()), int(c.seen_bytes.size()), p.level_probes);
    if (c.seen_bytes.size() > 1) {
      absl::StrAppend(&line, ", between ", FormatBytes(c.LowBytes()), " and ",
                      FormatBytes(c.HighBytes()));
    }
    if (c.Unstable()) {
      absl::StrAppend(&line, ": UNSTABLE (more than a quarter octave apart; planned at the median)");
    }
    if (!planned) absl::StrAppend(&line, ": not planned (found by half the probes or fewer)");
    lines.push_back(line);
  }
  return lines;
}

namespace {

// The machine, its ISA and what the probe ran beside.
void AppendMachine(const MachineProfile& p, std::string& out) {
  absl::StrAppend(&out, "machine  ", p.cpu_model, " (", p.vendor, "), ", p.logical_cpus,
                  " CPUs, ", p.physical_cores, " cores");
  const int nodes = p.NumaNodesSpanned(p.logical_cpus);
  if (nodes > 1) absl::StrAppend(&out, ", ", nodes, " NUMA nodes");
  absl::StrAppend(&out, "\n");
  absl::StrAppend(&out, "isa      ", absl::StrJoin(p.isa, " "), "\n");
  absl::StrAppend(&out, "highway  ", absl::StrJoin(p.hwy_targets, " "), "\n");
  absl::StrAppend(&out, "os       ", p.os_kernel, ", THP ", p.transparent_hugepages, "\n");
  absl::StrAppend(&out, "print    ", p.Fingerprint(), "\n");
  if (p.steal_share > 0) {
    absl::StrAppend(&out, absl::StrFormat("steal    %.1f%% of the probe's CPU time%s\n",
                                          100 * p.steal_share,
                                          p.steal_share > 0.05 ? " (high: the hypervisor ran "
                                                                 "others on these CPUs; ceilings "
                                                                 "may be low)"
                                                               : ""));
  }
  absl::StrAppend(&out, "\n");
}

// The caches the OS reports, the levels the latency curve measured, and what they say.
void AppendCaches(const MachineProfile& p, std::string& out) {
  absl::StrAppend(&out, "caches (sysfs)\n");
  if (p.caches.empty()) {
    absl::StrAppend(&out, "  none reported (a virtual machine may hide them): sizes come from the "
                          "latency curve alone, associativity is assumed\n");
  } else {
    absl::StrAppend(&out, absl::StrFormat("  %-6s %-8s %10s %5s %5s %7s\n", "level", "type",
                                          "size", "ways", "line", "shared"));
    for (const CacheLevel& c : p.caches) {
      absl::StrAppend(&out, absl::StrFormat("  L%-5d %-8s %10s %5d %5d %7d\n", c.level, c.type,
                                            FormatBytes(double(c.size_bytes)), c.ways,
                                            c.line_bytes, c.shared_by_cpus));
    }
  }
  if (!p.measured_levels.empty()) {
    absl::StrAppend(&out, absl::StrFormat("\nlevels measured by pointer chase (clock %.2f GHz from a dependent-add chain)\n",
                                          p.clock_ghz));
    absl::StrAppend(&out, absl::StrFormat("  %-8s %12s %24s %10s %8s\n", "kind", "size", "95% interval",
                                          "latency", "cycles"));
    for (const MeasuredLevel& m : p.measured_levels) {
      absl::StrAppend(&out, absl::StrFormat("  %-8s %12s %11s - %-10s %7.1f ns %8.1f\n", ToString(m.kind),
                                            FormatBytes(m.size_bytes), FormatBytes(m.low_bytes),
                                            FormatBytes(m.high_bytes), m.latency_ns,
                                            m.latency_ns * p.clock_ghz));
    }
    absl::StrAppend(&out, absl::StrFormat("  %-8s %12s %24s %7.1f ns %8.1f\n", "memory", "", "",
                                          p.memory_latency_ns, p.memory_latency_ns * p.clock_ghz));
  }
  for (const std::string& line : CacheFindings(p)) absl::StrAppend(&out, "  ", line, "\n");
  for (const std::string& line : ConsensusLines(p)) absl::StrAppend(&out, line, "\n");
}

// Peak compute per dtype and thread count, per cycle and against the FMA pipes.
void AppendPeakCompute(const MachineProfile& p, std::string& out) {
  // Theoretical FMA rate: 2 pipes x lanes x 2 operations per cycle, the vector width taken from
  // the best Highway target (every x86 server core since Haswell has two FMA pipes; some Xeon
  // SKUs have one 512-bit unit, which shows here as 50%).
  const std::string best = p.hwy_targets.empty() ? "" : p.hwy_targets.front();
  const int vector_bytes = best.rfind("AVX3", 0) == 0 ? 64 : best == "AVX2" ? 32 : 16;
  absl::StrAppend(&out, "\npeak compute (independent multiply-add chains)\n");
  absl::StrAppend(&out, absl::StrFormat("  %-6s %8s %16s %14s %14s  %s\n", "dtype", "threads", "rate",
                                        "per cycle/core", "of 2 FMA pipes", "path"));
  for (const Ceiling& c : p.ceilings) {
    if (c.kind != Ceiling::Kind::kCompute) continue;
    const double per_cycle = p.clock_ghz > 0 ? c.per_second / 1e9 / p.clock_ghz / c.threads : 0;
    const int element_bytes = c.dtype == Dtype::kF64 ? 8 : 4;
    const std::string fraction =
        CountsIntegerOps(c.dtype) ? "-"
                                : absl::StrFormat("%.0f%%", 100 * per_cycle / (2.0 * vector_bytes / element_bytes * 2));
    absl::StrAppend(&out, absl::StrFormat("  %-6s %8d %16s %14.1f %14s  %s\n", ToString(c.dtype), c.threads,
                                          FormatRate(c.per_second, c.dtype),
                                          per_cycle, fraction,
                                          c.note.empty() ? c.source : c.source + " (" + c.note + ")"));
  }
}

// Bandwidth per level, access kind and thread count.
void AppendBandwidth(const MachineProfile& p, std::string& out) {
  absl::StrAppend(&out, "\nbandwidth, GB/s (working sets inside each measured level; DRAM at 4x the "
                        "largest cache, non-temporal stores)\n");
  absl::StrAppend(&out, absl::StrFormat("  %-6s %8s %9s %9s %9s %9s\n", "level", "threads", "read",
                                        "write", "copy", "triad"));
  std::map<std::pair<int, int>, std::map<std::string, const Ceiling*>> table;
  bool any_raised = false;
  for (const Ceiling& c : p.ceilings) {
    if (c.kind == Ceiling::Kind::kBandwidth) table[{c.threads, int(c.level)}][c.source] = &c;
  }
  for (const auto& [key, kinds] : table) {
    auto cell = [&](const char* kind) {
      auto it = kinds.find(kind);
      if (it == kinds.end()) return std::string("-");
      any_raised |= it->second->Raised();
      return absl::StrFormat("%.1f%s", it->second->per_second / 1e9, it->second->Raised() ? "*" : "");
    };
    absl::StrAppend(&out, absl::StrFormat("  %-6s %8d %9s %9s %9s %9s\n", ToString(MemoryLevel(key.second)),
                                          key.first, cell("read"), cell("write"), cell("copy"),
                                          cell("triad")));
  }
  if (any_raised) {
    absl::StrAppend(&out, "  * raised to what another thread count showed (a ceiling is an upper "
                          "bound; single runs here are noisy)\n");
  }
}

// What the probe's self-checks doubted: measured again, and what still did not hold.
void AppendSelfChecks(const MachineProfile& p, std::string& out) {
  std::vector<std::string> checked;
  for (const Ceiling& c : p.ceilings) {
    if (c.Unstable() || c.MeasuredAgain()) {
      checked.push_back(absl::StrCat("  ", c.Name(), " (", c.source, "): ", c.note, "\n"));
    }
  }
  if (!checked.empty()) {
    absl::StrAppend(&out, "\nself-checks: ceilings measured again, and any still unstable\n");
    for (const std::string& line : checked) absl::StrAppend(&out, line);
  }
}

// Little's law on the DRAM read ceilings.
void AppendLittlesLaw(const MachineProfile& p, std::string& out) {
  // Little's law: bandwidth = lines in flight x line size / latency, for reads (the misses a core
  // must keep outstanding; non-temporal writes do not wait for lines).
  const Ceiling* one = p.FillBandwidth(MemoryLevel::kDram, 1);
  const Ceiling* all = p.FillBandwidth(MemoryLevel::kDram, p.logical_cpus);
  if (one != nullptr && p.memory_latency_ns > 0) {
    const double in_flight = one->per_second * p.memory_latency_ns * 1e-9 / 64;
    absl::StrAppend(&out, absl::StrFormat(
        "\nLittle's law: 1 thread reads %.1f GB/s from DRAM at %.0f ns latency (huge pages), so it "
        "keeps %.0f lines in flight",
        one->per_second / 1e9, p.memory_latency_ns, in_flight));
    if (all != nullptr && all != one) {
      const double needed = all->per_second * p.memory_latency_ns * 1e-9 / 64;
      absl::StrAppend(&out, absl::StrFormat(
          "; the %d-thread %.1f GB/s needs %.0f: one core cannot saturate DRAM (its fill buffers "
          "and prefetchers cap the misses it can have outstanding)",
          all->threads, all->per_second / 1e9, needed));
    }
    absl::StrAppend(&out, "\n");
  }
}

}  // namespace

std::string RenderProfileText(const MachineProfile& p) {
  std::string out;
  for (auto append : {&AppendMachine, &AppendCaches, &AppendPeakCompute, &AppendBandwidth,
                      &AppendSelfChecks, &AppendLittlesLaw}) {
    append(p, out);
  }
  return out;
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
          "--mlp ", absl::StrJoin(mlp.widths, ","), " --measure` runs it)."));
  std::vector<std::vector<std::string>> rows;
  for (const ReportInput::WhatIf& w : in.what_if) {
    const PassPrediction& p = w.pass;
    std::vector<std::string> binds;
    for (const LayerPrediction& l : p.layers) binds.push_back(l.bound.binding);
    rows.push_back({absl::StrCat(p.batch), absl::StrCat(w.mlp.threads),
                    FormatSeconds(p.predicted_seconds), FormatSeconds(p.bound_seconds),
                    p.bound_only ? "bound only (no tuned row)" : "tuned rows' attainment",
                    absl::StrJoin(binds, "; "),
                    p.resident_level ? absl::StrCat("held in L", *p.resident_level)
                                     : "streams from DRAM"});
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
    Picture all{"roofline.svg", "Hierarchical roofline with the tuned kernels",
                RooflineSvg(profile, placed), {}};
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
    picture.svg = RooflineSvg(profile, members,
                              absl::StrCat("Hierarchical roofline: ", family, " (",
                                           members.size(), " results)"));
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
                    !row.verdict    ? "–" : FormatAttainment(row.attainment),
                    !row.verdict    ? "not judged"
                    : r->impossible ? "**impossible**"
                                    : std::string(ToString(*row.verdict)),
                    r->binding_level ? absl::StrCat(ToString(*r->binding_level))
                    : r->judged      ? "compute"
                                     : "–"});
  }
  return rows;
}

Document BuildReport(const ReportInput& in) {
  const MachineProfile& p = in.profile;
  const std::vector<PlacedResult> placed = PlaceResults(in);
  Document doc;
  doc.Heading(1, "rooftune report")
      .Paragraph(absl::StrCat(
          "Generated ", in.generated_at, " on **", p.cpu_model, "** (", p.logical_cpus,
          " CPUs; fingerprint `", p.Fingerprint(), "`). Every figure below was measured on this "
          "machine; each row says whether its caches were warm or cold (operands evicted)."));
  AddSummary(in, placed, kFindingsShown, doc);
  AddCeilingMatrix(p, doc);
  doc.Heading(2, "Roofline", "roofline")
      .Paragraph(
          "Each result is drawn as a cache-aware roofline draws it: one marker per memory level, at "
          "the operations per byte its traffic model moves at that level, all at its measured rate "
          "and joined; the filled marker is the level (or the compute roof) that binds it, a cross "
          "an impossible result. A kernel sits under the roof of each level; the one it is "
          "closest to is the one to work on. Numbers name the results in the key (hover a marker "
          "for its figures).");
  for (const Picture& picture : RooflinePictures(p, placed)) {
    std::vector<const PlacedResult*> shown;
    for (int number : picture.numbers) shown.push_back(&placed[size_t(number - 1)]);
    doc.Image(picture.description, picture.file, picture.svg,
              shown.empty() ? std::vector<std::string>{}
                            : std::vector<std::string>{"#", "result", "attainment", "verdict",
                                                       "bound by"},
              KeyRows(in, shown));
  }
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
  std::vector<std::vector<std::string>> rows;
  for (const PlacedResult& placed_row : placed) {
    const TunedResult& r = in.results[placed_row.index];
    const double speedup =
        r.initial_median_seconds > 0 ? r.initial_median_seconds / r.median_seconds : 0;
    rows.push_back({absl::StrCat("[", placed_row.number, "](#", ResultAnchor(placed_row.number), ")"),
                    r.kernel, r.workload, absl::StrCat(r.threads), std::string(ToString(r.cache)),
                    r.config.empty() ? ConfigText(r.config) : absl::StrCat("`", r.config, "`"),
                    FormatSeconds(r.median_seconds) + absl::StrFormat(" (CV %.1f%%)", 100 * r.cv),
                    FormatRate(r.ops_per_second, r.dtype),
                    !r.verdict ? "–" : AttainmentCell(r), r.binding,
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
          "as many bytes from the same level), in back-to-back pairs on the same threads: the "
          "median of the pairs with their quartiles, which a slow or fast phase of a shared "
          "machine does not move; the verdict uses it, and *profile* is the same result against "
          "the ceilings above, whichever profile was in use when it was tuned. Above 1 plus the "
          "pairs' spread (never less than 5%) is impossible. *tuned / initial* compares the "
          "tuned config with the analytic starting config, timed back to back.");
  bool any_impossible = false;
  for (const TunedResult& r : in.results) any_impossible |= r.verdict == Verdict::Class::kImpossible;
  if (any_impossible) {
    doc.Paragraph("**Some results are above their roofline: the model (ceiling or byte count) is "
                  "broken for them, not the kernel fast.** They have no levers below: a broken "
                  "model prices none.");
  }
  AddLevers(in, placed, doc);
  doc.Heading(2, "Each result", "detail");
  for (const PlacedResult& r : placed) AddResultDetail(in, r, doc);
  return doc;
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
  j["results"] = nlohmann::json::array();
  for (size_t i = 0; i < in.results.size(); ++i) {
    const TunedResult& r = in.results[i];
    j["results"].push_back({{"kernel", r.kernel},
                            {"workload", r.workload},
                            {"dtype", ToString(r.dtype)},
                            {"threads", r.threads},
                            {"config", r.config},
                            {"median_seconds", r.median_seconds},
                            {"min_seconds", r.min_seconds},
                            {"cv", r.cv},
                            {"ops_per_second", r.ops_per_second},
                            {"attainment", !r.verdict ? nlohmann::json() : nlohmann::json(r.attainment)},
                            {"attainment_basis", r.paired_pairs > 0 ? "paired" : "profile"},
                            {"profile_attainment", !r.verdict ? nlohmann::json() : nlohmann::json(r.profile_attainment)},
                            {"paired_attainment", r.paired_pairs > 0
                                 ? nlohmann::json{{"median", r.paired_attainment},
                                                  {"low", r.paired_low},
                                                  {"high", r.paired_high},
                                                  {"pairs", r.paired_pairs},
                                                  {"ceiling", r.paired_ceiling}}
                                 : nlohmann::json()},
                            {"impossible_above", 1 + r.tolerance},
                            {"verdict", r.verdict ? ToString(*r.verdict) : ""},
                            {"binding_ceiling", r.binding},
                            {"cache", ToString(r.cache)},
                            {"initial_config", r.initial_config},
                            {"initial_median_seconds", r.initial_median_seconds},
                            {"configs_tried", r.configs_tried},
                            {"measured_at", r.created_at},
                            {"levers", LeversJson(LeversOf(in, i))}});
  }
  return j;
}

}  // namespace rooftune::reports
