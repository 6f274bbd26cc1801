#include "framework/roofline.h"

#include <algorithm>
#include <functional>
#include <optional>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "framework/stats.h"

namespace rooftune {
namespace {

std::string Bytes(double bytes) {
  if (bytes >= (1 << 20)) return absl::StrFormat("%.1f MiB", bytes / (1 << 20));
  return absl::StrFormat("%.1f KiB", bytes / 1024);
}

}  // namespace

const LevelBound* Verdict::Binding() const {
  const LevelBound* binding = nullptr;
  for (const LevelBound& b : bounds) {
    if (binding == nullptr || b.seconds > binding->seconds) binding = &b;
  }
  return binding;
}

double ImpossibleTolerance(const std::optional<PairedAttainment>& paired, double cv) {
  const double noise =
      paired && paired->median > 0 ? (paired->high - paired->low) / paired->median : 3.0 * cv;
  return std::max(kNoiseFloor, noise);
}

RepeatsAgainstBound BeyondBoundOverRepeats(double bound_seconds,
                                           const std::vector<double>& seconds) {
  std::vector<double> attainments;
  for (double s : seconds) {
    if (s > 0) attainments.push_back(bound_seconds / s);
  }
  if (attainments.empty() || bound_seconds <= 0) return {};
  const Quartiles q = QuartilesOf(attainments);
  RepeatsAgainstBound r{.attainment = q.median,
                        .tolerance = ImpossibleTolerance(
                            PairedAttainment{.median = q.median, .low = q.low, .high = q.high}, 0)};
  r.above = r.attainment > 1 + r.tolerance;
  return r;
}

RepeatsAgainstBound PassesOrPairsAboveBound(const RepeatsAgainstBound& pairs,
                                            double bound_seconds_now,
                                            const std::vector<double>& passes) {
  const RepeatsAgainstBound by_passes = BeyondBoundOverRepeats(bound_seconds_now, passes);
  return by_passes.above ? by_passes : pairs;
}

absl::string_view ToString(Verdict::Class c) {
  switch (c) {
    case Verdict::Class::kAtBound: return "at-bound";
    case Verdict::Class::kHeadroom: return "headroom";
    case Verdict::Class::kImpossible: return "impossible";
    case Verdict::Class::kNoModel: return "no-model";
  }
  return "?";
}

absl::StatusOr<Verdict::Class> ParseVerdictClass(absl::string_view text) {
  for (Verdict::Class c : {Verdict::Class::kAtBound, Verdict::Class::kHeadroom,
                           Verdict::Class::kImpossible, Verdict::Class::kNoModel}) {
    if (text == ToString(c)) return c;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("verdict '", text, "' is none of at-bound, headroom, impossible, no-model"));
}

namespace {

// The thread counts the profile has any ceiling for, ascending.
std::vector<int> MeasuredThreadCounts(const MachineProfile& profile) {
  std::vector<int> counts;
  for (const Ceiling& c : profile.ceilings) {
    if (std::find(counts.begin(), counts.end(), c.threads) == counts.end()) {
      counts.push_back(c.threads);
    }
  }
  std::sort(counts.begin(), counts.end());
  return counts;
}

}  // namespace

CeilingSet SelectCeilings(const MachineProfile& profile, Dtype dtype, int threads) {
  CeilingSet set;
  const std::vector<int> counts = MeasuredThreadCounts(profile);
  // `find(t)`: the ceiling measured at t threads, or null. One not measured at `threads` is
  // bounded by the counts that were, the tightest bound kept: T threads do at most T / t times
  // what t < T did (a thread's share does not grow with company), and at most what t > T did
  // (those could leave threads idle).
  auto pick = [&](const std::function<const Ceiling*(int)>& find, const std::string& what) {
    if (const Ceiling* exact = find(threads)) {
      set.ceilings.push_back(*exact);
      return;
    }
    std::optional<Ceiling> best;
    std::string how;
    for (const int t : counts) {
      const Ceiling* c = find(t);
      if (c == nullptr) continue;
      const double bound = t < threads ? c->per_second * threads / t : c->per_second;
      if (best && bound >= best->per_second) continue;
      best = *c;
      best->per_second = bound;
      best->threads = threads;
      how = t < threads ? absl::StrCat(threads, "/", t, " x the ", t, "-thread one")
                        : absl::StrCat("the ", t, "-thread one");
      best->source = t < threads ? absl::StrCat(c->source, " (extrapolated)")
                                 : absl::StrCat(c->source, " (", t, "-thread figure)");
    }
    if (!best) return;
    set.ceilings.push_back(*best);
    set.notes.push_back(
        absl::StrCat("no ", threads, "-thread ", what, " ceiling measured; using ", how));
  };
  pick([&](int t) { return profile.FindCompute(dtype, t); },
       std::string(ToString(dtype)) + " compute");
  for (int i = 0; i < kNumMemoryLevels; ++i) {
    const MemoryLevel level = MemoryLevel(i);
    pick([&](int t) { return profile.FillBandwidth(level, t); },
         std::string(ToString(level)) + " bandwidth");
  }
  if (const int nodes = profile.NumaNodesSpanned(threads); nodes > 1) {
    // The probe's threads each touched their own memory first; a kernel's operands are where
    // whoever filled them ran, so the other nodes' threads read them across the interconnect.
    set.notes.push_back(absl::StrCat(
        "the ", threads, " threads span ", nodes,
        " NUMA nodes: the DRAM ceiling is for memory "
        "local to each thread, while operands filled by one thread sit on its node (first "
        "touch); interleave them (numactl --interleave=all) or fill them on the threads that "
        "use them"));
  }
  return set;
}

Traffic WarmTraffic(const Traffic& cold, const Workload& workload, const MachineProfile& profile) {
  Traffic warm = cold;
  const std::optional<int> level = profile.NearestCacheHolding(workload.CompulsoryBytes());
  if (!level) return warm;
  // Nothing crosses from the levels beyond cache level `level`. MemoryLevel k names the traffic
  // into level k (kL1 = registers <- L1), so `level` keeps index level - 1 and every index from
  // `level` on is zero.
  for (int i = *level; i < kNumMemoryLevels; ++i) warm.bytes[i] = warm.after[i] = 0;
  return warm;
}

Traffic EpiloguePassTraffic(const Workload& w, const MachineProfile& profile) {
  Traffic pass;
  if (w.epilogue == Epilogue::kNone) return pass;
  const double output = double(w.m) * double(w.n) * ElementSizesOf(w.dtype, w.epilogue).c;
  pass[MemoryLevel::kL1] = output + 4.0 * double(w.n);
  // pass[MemoryLevel(level)] is what fills cache level `level` (1-based) from the one beyond it.
  for (int level = 1; level < kNumMemoryLevels; ++level) {
    const std::optional<uint64_t> capacity = profile.PricedCacheBytes(level);
    if (!capacity || output <= double(*capacity)) break;
    pass[MemoryLevel(level)] = output;
  }
  return pass;
}

std::optional<Straddle> StraddledCache(const Workload& w, const MachineProfile& profile) {
  const double working_set = w.CompulsoryBytes();
  for (int level = 1; level < kNumMemoryLevels; ++level) {
    const std::optional<uint64_t> capacity = profile.EffectiveCacheBytes(level);
    if (!capacity) break;
    const double c = double(*capacity);
    if (working_set > c / 2 && working_set < 2 * c) {
      return Straddle{
          level,
          absl::StrFormat("working set %.1f MiB near L%d's %.1f MiB: partly held, partly not",
                          working_set / (1 << 20), level, c / (1 << 20))};
    }
  }
  return std::nullopt;
}

bool StreamsFromDram(const MachineProfile& profile, const Workload& w, int threads) {
  // Operands the largest cache holds stay there from one call to the next, whatever their
  // intensity (a 64x64x64 GEMM is "memory-bound" by its compulsory bytes alone).
  const uint64_t largest_cache = profile.LargestEffectiveCacheBytes();
  // A GEMV's weights from half the largest cache up straddle it: how much of them a warm loop
  // keeps depends on a capacity each probe of a shared machine measures differently, and a
  // decode step's weights are evicted by the other layers' anyway. They are timed cold; a warm
  // verdict there priced DRAM for bytes L3 served.
  const double holds = w.op == Op::kGemv ? double(largest_cache) / 2 : double(largest_cache);
  if (largest_cache > 0 && w.CompulsoryBytes() < holds) return false;
  if (w.op == Op::kGemv) return true;
  const Ceiling* dram = profile.FillBandwidth(MemoryLevel::kDram, threads);
  const Ceiling* compute = profile.FindCompute(w.dtype, threads);
  if (dram == nullptr || compute == nullptr) return false;
  return w.CompulsoryBytes() / dram->per_second > w.Operations() / compute->per_second;
}

RooflineBound BoundOf(const MachineProfile& profile, const CeilingSet& ceilings,
                      const Workload& workload, const Traffic& cold_traffic, bool warm) {
  const Traffic traffic = warm ? WarmTraffic(cold_traffic, workload, profile) : cold_traffic;
  RooflineBound r;
  for (const Ceiling& c : ceilings.ceilings) {
    if (c.per_second <= 0) continue;
    LevelBound b{c, c.kind == Ceiling::Kind::kCompute ? workload.Operations() : traffic[c.level]};
    b.seconds = b.work / c.per_second;
    r.bounds.push_back(b);
  }
  if (r.bounds.empty()) return r;
  const auto binding = std::max_element(
      r.bounds.begin(), r.bounds.end(),
      [](const LevelBound& a, const LevelBound& b) { return a.seconds < b.seconds; });
  r.seconds = binding->seconds;
  r.binding = binding->ceiling.Name();
  // Warm, a working set near a cache's size is priced at one side of it while the kernel sees
  // both: say so when the bytes that bind are that cache's (MemoryLevel level - 1: out of it) or
  // the fills into it from beyond (MemoryLevel level), rather than price it at either in silence.
  if (warm && binding->ceiling.kind == Ceiling::Kind::kBandwidth) {
    const std::optional<Straddle> near = StraddledCache(workload, profile);
    const int bytes_of = int(binding->ceiling.level);
    if (near && (bytes_of == near->level - 1 || bytes_of == near->level)) {
      absl::StrAppend(&r.binding, " (", near->description, ")");
    }
  }
  // A separate pass runs once the main loop has finished: its own bound, the slowest level it
  // moves bytes across, adds to the main loop's.
  const Ceiling* pass_binding = nullptr;
  for (const Ceiling& c : ceilings.ceilings) {
    if (c.kind != Ceiling::Kind::kBandwidth || c.per_second <= 0) continue;
    const double seconds = traffic.after[int(c.level)] / c.per_second;
    if (seconds > r.pass_seconds) r.pass_seconds = seconds, pass_binding = &c;
  }
  if (pass_binding != nullptr) {
    r.seconds += r.pass_seconds;
    absl::StrAppend(&r.binding, ", then ", pass_binding->Name(), " (separate pass)");
  }
  return r;
}

namespace {

// A ceiling of another data type or thread count than the workload's priced it, or "".
std::string WrongCeiling(const Workload& workload, int threads, const Verdict& v) {
  for (const LevelBound& b : v.bounds) {
    const Ceiling& c = b.ceiling;
    if (c.kind == Ceiling::Kind::kCompute && c.dtype != workload.dtype &&
        c.dtype != ComputeDtype(workload.dtype)) {
      return absl::StrCat(
          "model broken: wrong ceiling. The workload does ", ToString(ComputeDtype(workload.dtype)),
          " arithmetic but was priced against the ", c.Name(), " (", c.RateText(c.per_second), ")");
    }
    if (c.threads != threads) {
      return absl::StrCat("model broken: wrong ceiling. The kernel ran on ", threads,
                          " threads but was priced against the ", c.Name());
    }
  }
  return "";
}

// A working set that fits a nearer cache than the one its bytes were charged to, or "".
std::string WrongByteCount(const MachineProfile& profile, const Workload& workload,
                           const Ceiling& bound, bool warm) {
  if (bound.kind != Ceiling::Kind::kBandwidth || bound.level == MemoryLevel::kL1) return "";
  const double working_set = workload.CompulsoryBytes();
  for (int level = 1; level <= int(bound.level); ++level) {
    const std::optional<uint64_t> capacity = profile.EffectiveCacheBytes(level);
    const std::optional<CacheLevel> reported = profile.DataCache(level);
    // Only a warm trial can keep its working set between calls in a cache larger than the one
    // measured: a cold one's operands were flushed before every call.
    if (warm && reported && working_set <= double(reported->size_bytes) &&
        !(capacity && working_set <= double(*capacity))) {
      return absl::StrCat("model broken: wrong byte count. The working set (", Bytes(working_set),
                          ") is larger than the L", level, " the latency probe measured (",
                          capacity ? Bytes(double(*capacity)) : std::string("none"),
                          ") but fits the ", Bytes(double(reported->size_bytes)),
                          " the OS reports, so part of it likely stayed "
                          "cached between repetitions while its traffic was charged to ",
                          ToString(bound.level), "; measure cold (--cold)");
    }
    if (capacity && working_set <= double(*capacity)) {
      return absl::StrCat("model broken: wrong byte count. The working set (", Bytes(working_set),
                          ") fits in L", level, " (", Bytes(double(*capacity)),
                          profile.measured_levels.empty() ? " by sysfs" : " as measured",
                          "), but its traffic was "
                          "charged to ",
                          ToString(bound.level),
                          " bandwidth; measure cold (--cold) or charge the "
                          "nearer level");
    }
  }
  return "";
}

// Why a result above its roofline is a broken model, the most specific evidence first.
std::string WhyImpossible(const MachineProfile& profile, const Workload& workload, int threads,
                          const Verdict& v, bool warm) {
  if (std::string why = WrongCeiling(workload, threads, v); !why.empty()) return why;
  const Ceiling& bound = v.Binding()->ceiling;
  if (std::string why = WrongByteCount(profile, workload, bound, warm); !why.empty()) return why;
  const double implied = v.Binding()->work / v.measured_seconds;
  const std::string what = bound.kind == Ceiling::Kind::kCompute ? "operations" : "bytes";
  if (v.paired) {
    // The ceiling was timed beside the kernel, so a slow phase of the machine cannot explain it.
    return absl::StrFormat(
        "model broken: paired with its ceiling's own loop (%s), the kernel reached %.2f of it "
        "(quartiles %.2f-%.2f over %d pairs; impossible above %.2f): the traffic model "
        "over-counts the kernel's %s, or the kernel uses a faster path than the loop (%s)",
        v.paired->ceiling, v.paired->median, v.paired->low, v.paired->high, v.paired->pairs,
        1 + v.tolerance, what, bound.source);
  }
  return absl::StrCat("model broken: the kernel sustained ", bound.RateText(implied), " against a ",
                      bound.Name(), " of ", bound.RateText(bound.per_second), " (",
                      absl::StrFormat("%.2f", v.attainment), "x, impossible above ",
                      absl::StrFormat("%.2f", 1 + v.tolerance),
                      "): either the traffic "
                      "model over-counts the kernel's ",
                      what,
                      " or the probe under-measured this ceiling "
                      "(re-run `rooftune probe --force`)");
}

}  // namespace

Verdict Judge(const MachineProfile& profile, const CeilingSet& ceilings, const Workload& workload,
              int threads, const Traffic& cold_traffic, double measured_seconds, double cv,
              const JudgeOptions& options) {
  const RooflineBound roof = BoundOf(profile, ceilings, workload, cold_traffic, options.warm);
  Verdict v;
  v.measured_seconds = measured_seconds;
  v.bounds = roof.bounds;
  if (v.bounds.empty() || measured_seconds <= 0) {
    v.diagnosis = "no ceilings measured for this data type and thread count: run `rooftune probe`";
    return v;
  }
  v.bound_seconds = roof.seconds;
  v.binding = roof.binding;
  v.pass_seconds = roof.pass_seconds;
  v.profile_attainment = v.bound_seconds / measured_seconds;
  v.paired = options.paired;
  // A pairing with another ceiling's loop than the one that binds now (a stored row judged again
  // after the model changed) says nothing about this bound: the profile's figure stands.
  if (v.paired && !absl::StartsWith(v.paired->ceiling, v.Binding()->ceiling.Name())) {
    v.paired.reset();
  }
  v.attainment = v.paired ? v.paired->median : v.profile_attainment;
  v.tolerance = ImpossibleTolerance(v.paired, cv);
  if (v.attainment <= 1.0 + v.tolerance) {
    v.verdict = v.attainment >= options.at_bound_from ? Verdict::Class::kAtBound
                                                      : Verdict::Class::kHeadroom;
    return v;
  }

  v.verdict = Verdict::Class::kImpossible;
  v.diagnosis = WhyImpossible(profile, workload, threads, v, options.warm);
  return v;
}

std::string CounterEvidence(const Verdict& v, const CountedTraffic& counted) {
  if (v.verdict != Verdict::Class::kImpossible) return "";
  const LevelBound* binding = v.Binding();
  if (binding == nullptr || binding->work <= 0) return "";
  const bool compute = binding->ceiling.kind == Ceiling::Kind::kCompute;
  const std::optional<double> seen =
      compute ? counted.flops : counted.bytes[int(binding->ceiling.level)];
  if (!seen) return "";
  const double ratio = *seen / binding->work;
  const std::string what =
      compute ? "FLOPs" : absl::StrCat("bytes into ", ToString(binding->ceiling.level));
  // 10% either way is within what counting bytes with a PMU can promise (prefetches, partial
  // lines).
  if (ratio < 0.9) {
    return absl::StrFormat(
        "the counters saw %.2fx the %s the model charged: the %s count is wrong (%s)", ratio, what,
        compute ? "operation" : "byte",
        compute ? "the kernel does less arithmetic than the workload says"
                : "part of the working set stayed in a nearer level");
  }
  return absl::StrFormat(
      "the counters saw the %s the model charged (%.2fx): they did move, faster than the %s "
      "allows, so that ceiling is measured low (re-probe on a quiet machine: rooftune probe "
      "--force)",
      what, ratio, binding->ceiling.Name());
}

}  // namespace rooftune
