#include "reports/machine_text.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "reports/report.h"

namespace rooftune::reports {

namespace {

// Each cache the OS reports against the nearest step the latency curve measured.
void AddSysfsAgreement(const MachineProfile& p, std::vector<std::string>& lines) {
  for (const CacheLevel& c : p.caches) {
    const NearestStep nearest = NearestCacheStep(p.measured_levels, double(c.size_bytes));
    if (nearest.step == nullptr) continue;
    lines.push_back(absl::StrFormat(
        "sysfs L%d %s: nearest measured step %s (%s): %s", c.level,
        FormatBytes(double(c.size_bytes)), FormatBytes(nearest.step->size_bytes),
        ToString(nearest.step->kind),
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
            FormatBytes(m.size_bytes), m.latency_ns, planned[i].past_ns));
        continue;
      case Role::kWithinMemory:
        lines.push_back(absl::StrFormat(
            "step at %s (%s - %s): a hit there costs %.1f ns, half of memory's %.1f or more, and "
            "loads past it little more or the step spans more than %.1f octave: a step within "
            "memory (page walks under a host's nested paging, DRAM pages), not a cache; not "
            "planned as one",
            FormatBytes(m.size_bytes), FormatBytes(m.low_bytes), FormatBytes(m.high_bytes),
            m.latency_ns, p.memory_latency_ns, kWidestSlowCacheEndOctaves));
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
        "the OS reports a %s last-level cache, but this process measures about %s by latency and "
        "%s "
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
      "\nplanned cache levels: the median of what %d latency curve(s) of this machine's probes "
      "found (each later probe adds its curves)",
      p.level_probes));
  const std::vector<const LevelConsensus*> held = p.ConsensusLevels();
  int index = 0;
  for (const LevelConsensus& c : p.level_consensus) {
    const bool planned = std::find(held.begin(), held.end(), &c) != held.end();
    std::string line = absl::StrFormat(
        "  %-4s %10s  found by %d of %d curves", planned ? absl::StrCat("L", ++index) : "-",
        FormatBytes(c.Bytes()), int(c.seen_bytes.size()), p.level_probes);
    if (c.seen_bytes.size() > 1) {
      absl::StrAppend(&line, ", between ", FormatBytes(c.LowBytes()), " and ",
                      FormatBytes(c.HighBytes()));
    }
    if (c.Unstable()) {
      absl::StrAppend(&line,
                      ": UNSTABLE (more than a quarter octave apart; planned at the median)");
    }
    if (!planned) absl::StrAppend(&line, ": not planned (found by half the curves or fewer)");
    lines.push_back(line);
  }
  return lines;
}

namespace {

// The machine, its ISA and what the probe ran beside.
void AppendMachine(const MachineProfile& p, std::string& out) {
  absl::StrAppend(&out, "machine  ", p.cpu_model, " (", p.vendor, "), ", p.logical_cpus, " CPUs, ",
                  p.physical_cores, " cores");
  const int nodes = p.NumaNodesSpanned(p.logical_cpus);
  if (nodes > 1) absl::StrAppend(&out, ", ", nodes, " NUMA nodes");
  absl::StrAppend(&out, "\n");
  absl::StrAppend(&out, "isa      ", absl::StrJoin(p.isa, " "), "\n");
  absl::StrAppend(&out, "highway  ", absl::StrJoin(p.hwy_targets, " "), "\n");
  absl::StrAppend(&out, "os       ", p.os_kernel, ", THP ", p.transparent_hugepages, "\n");
  absl::StrAppend(&out, "print    ", p.Fingerprint(), "\n");
  if (p.steal_share > 0) {
    absl::StrAppend(
        &out, absl::StrFormat("steal    %.1f%% of the probe's CPU time%s\n", 100 * p.steal_share,
                              p.steal_share > 0.05 ? " (high: the hypervisor ran "
                                                     "others on these CPUs; ceilings "
                                                     "may be low)"
                                                   : ""));
  }
  for (const MachineProfile::ParallelCall& c : p.parallel_calls) {
    absl::StrAppend(&out, absl::StrFormat("split    a call over %d threads costs %.1f us beyond "
                                          "its work (waking and joining them)\n",
                                          c.threads, 1e6 * c.overhead_seconds));
  }
  absl::StrAppend(&out, "\n");
}

// The caches the OS reports, the levels the latency curve measured, and what they say.
void AppendCaches(const MachineProfile& p, std::string& out) {
  absl::StrAppend(&out, "caches (sysfs)\n");
  if (p.caches.empty()) {
    absl::StrAppend(&out,
                    "  none reported (a virtual machine may hide them): sizes come from the "
                    "latency curve alone, associativity is assumed\n");
  } else {
    absl::StrAppend(&out, absl::StrFormat("  %-6s %-8s %10s %5s %5s %7s\n", "level", "type", "size",
                                          "ways", "line", "shared"));
    for (const CacheLevel& c : p.caches) {
      absl::StrAppend(&out, absl::StrFormat("  L%-5d %-8s %10s %5d %5d %7d\n", c.level, c.type,
                                            FormatBytes(double(c.size_bytes)), c.ways, c.line_bytes,
                                            c.shared_by_cpus));
    }
  }
  if (!p.measured_levels.empty()) {
    absl::StrAppend(
        &out,
        absl::StrFormat(
            "\nlevels measured by pointer chase (clock %.2f GHz from a dependent-add chain)\n",
            p.clock_ghz));
    absl::StrAppend(&out, absl::StrFormat("  %-8s %12s %24s %10s %8s\n", "kind", "size",
                                          "95% interval", "latency", "cycles"));
    for (const MeasuredLevel& m : p.measured_levels) {
      absl::StrAppend(&out, absl::StrFormat("  %-8s %12s %11s - %-10s %7.1f ns %8.1f\n",
                                            ToString(m.kind), FormatBytes(m.size_bytes),
                                            FormatBytes(m.low_bytes), FormatBytes(m.high_bytes),
                                            m.latency_ns, m.latency_ns * p.clock_ghz));
    }
    absl::StrAppend(&out, absl::StrFormat("  %-8s %12s %24s %7.1f ns %8.1f\n", "memory", "", "",
                                          p.memory_latency_ns, p.memory_latency_ns * p.clock_ghz));
  }
  for (const std::string& line : CacheFindings(p)) absl::StrAppend(&out, "  ", line, "\n");
  for (const std::string& line : ConsensusLines(p)) absl::StrAppend(&out, line, "\n");
}

// Peak compute per dtype and thread count, per cycle and against the FMA pipes.
void AppendPeakCompute(const MachineProfile& p, std::string& out) {
  // Theoretical FMA rate: 2 pipes x lanes x 2 operations per cycle, the lanes those of the
  // units' datapath (every x86 server core since Haswell has two FMA pipes; some Xeon SKUs have
  // one 512-bit unit, which shows here as 50%).
  const int vector_bytes = std::max(16, p.VectorDatapathBytes());
  absl::StrAppend(&out, "\npeak compute (independent multiply-add chains)");
  if (p.fma_latency_cycles > 0) {
    absl::StrAppend(&out, absl::StrFormat("; FMA latency %.1f cycles (a dependent chain)",
                                          p.fma_latency_cycles));
  }
  absl::StrAppend(&out, "\n");
  absl::StrAppend(&out, absl::StrFormat("  %-6s %8s %16s %14s %14s  %s\n", "dtype", "threads",
                                        "rate", "per cycle/core", "of 2 FMA pipes", "path"));
  for (const Ceiling& c : p.ceilings) {
    if (c.kind != Ceiling::Kind::kCompute) continue;
    const double per_cycle = p.clock_ghz > 0 ? c.per_second / 1e9 / p.clock_ghz / c.threads : 0;
    const int element_bytes = c.dtype == Dtype::kF64 ? 8 : 4;
    const std::string fraction =
        CountsIntegerOps(c.dtype)
            ? "-"
            : absl::StrFormat("%.0f%%", 100 * per_cycle / (2.0 * vector_bytes / element_bytes * 2));
    absl::StrAppend(
        &out, absl::StrFormat("  %-6s %8d %16s %14.1f %14s  %s\n", ToString(c.dtype), c.threads,
                              FormatRate(c.per_second, c.dtype), per_cycle, fraction,
                              c.note.empty() ? c.source : c.source + " (" + c.note + ")"));
  }
}

// Bandwidth per level, access kind and thread count.
void AppendBandwidth(const MachineProfile& p, std::string& out) {
  absl::StrAppend(&out,
                  "\nbandwidth, GB/s (working sets inside each measured level; DRAM at 4x the "
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
      return absl::StrFormat("%.1f%s", it->second->per_second / 1e9,
                             it->second->Raised() ? "*" : "");
    };
    absl::StrAppend(
        &out, absl::StrFormat("  %-6s %8d %9s %9s %9s %9s\n", ToString(MemoryLevel(key.second)),
                              key.first, cell("read"), cell("write"), cell("copy"), cell("triad")));
  }
  if (any_raised) {
    absl::StrAppend(&out,
                    "  * raised to what another thread count showed (a ceiling is an upper "
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
    absl::StrAppend(&out, absl::StrFormat("\nLittle's law: 1 thread reads %.1f GB/s from DRAM at "
                                          "%.0f ns latency (huge pages), so it "
                                          "keeps %.0f lines in flight",
                                          one->per_second / 1e9, p.memory_latency_ns, in_flight));
    if (all != nullptr && all != one) {
      const double needed = all->per_second * p.memory_latency_ns * 1e-9 / 64;
      absl::StrAppend(&out,
                      absl::StrFormat("; the %d-thread %.1f GB/s needs %.0f: one core cannot "
                                      "saturate DRAM (its fill buffers "
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

}  // namespace rooftune::reports
