// What rooftune knows about the machine it runs on: facts read from the OS and CPUID, the cache
// levels (as sysfs reports them and as the latency probe discovers them), and the measured
// ceilings. Every verdict is priced against this profile, and its fingerprint keys the tuning
// database.
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/string_view.h"
#include "framework/reader.h"
#include "framework/workload.h"
#include "nlohmann/json.hpp"

namespace rooftune {

// The memory hierarchy as a roofline sees it: each level feeds the one nearer the core.
enum class MemoryLevel { kL1 = 0, kL2 = 1, kL3 = 2, kDram = 3 };
inline constexpr int kNumMemoryLevels = 4;
absl::string_view ToString(MemoryLevel level);

struct CacheLevel {
  int level = 0;     // 1, 2, 3, ...
  std::string type;  // "Data", "Unified", "Instruction"
  uint64_t size_bytes = 0;
  int ways = 0;  // 0 when unknown
  int line_bytes = 64;
  int shared_by_cpus = 1;  // logical CPUs sharing one instance
};

// What a step of the latency curve is; probes/cache_discovery.h tells them apart by comparing the
// curves on 4 KiB and on huge pages.
enum class LevelKind {
  kCache,             // "cache": a cache level, seen on both page sizes
  kTlb,               // "tlb": the reach of a TLB (the step vanishes on huge pages)
  kCacheOnHugePages,  // "cache-hp": a cache only huge pages show (a TLB step hid its end)
  kCacheSetsUneven,   // "cache-sets": a cache ending early on 4 KiB pages, sized on huge pages
};
absl::string_view ToString(LevelKind kind);
absl::StatusOr<LevelKind> ParseLevelKind(absl::string_view text);

// A cache level (or TLB reach) found by the latency probe; see probes/cache_discovery.h.
struct MeasuredLevel {
  double size_bytes = 0;
  double low_bytes = 0, high_bytes = 0;  // 95% interval
  double latency_ns = 0;                 // latency of a hit in this level
  LevelKind kind = LevelKind::kCache;
  double sharpness = 1;  // how abruptly it misses once outgrown (the fit's; not stored)
};

// The cache step (TLB steps aside) nearest to `bytes` on a log scale, and how many octaves away;
// no step when there is none. The OS's cache sizes are checked against the curve this way.
struct NearestStep {
  const MeasuredLevel* step = nullptr;
  double octaves = 0;
  // Within a quarter octave: the curve and the OS agree on this cache's size.
  bool Agrees() const { return step != nullptr && octaves <= 0.25; }
};
NearestStep NearestCacheStep(const std::vector<MeasuredLevel>& steps, double bytes);

// Whether a cache step of the latency curve at `next_bytes`, following one at `previous_bytes`,
// is the same cache missing more rather than a level of its own: real levels lie octaves apart,
// while one cache can miss in two stages (a VM's 2 MiB L2 measured steps at 1.3 and 1.7-1.9 MiB,
// its 4 KiB pages filling the cache's sets unevenly).
inline bool SameCacheAsThePreviousStep(double previous_bytes, double next_bytes) {
  return next_bytes < 2 * previous_bytes;
}

// Whether loads past a cache step, at `next_ns` a hit, cost barely more than before it
// (`step_ns`): then the step is no level boundary. A VM's curve here showed a step at 406 KiB
// inside its 2 MiB L2 (4.6 ns before it, 5.2 after); counted as a level, it made the L2 406 KiB
// and put the "L3" bandwidth working set inside the real L2.
inline bool BarelyDearer(double step_ns, double next_ns) { return next_ns < 1.25 * step_ns; }

// The widest 95% interval, in octaves, of a cache's end at half of memory's latency or more: a
// cache ends at its capacity, and the fit pins that within a fraction of an octave; a step the fit
// cannot place within this is a ramp.
inline constexpr double kWidestSlowCacheEndOctaves = 0.5;

// Whether `step` lies within memory rather than ending a cache: a hit there already costs half
// of a memory access or more (`memory_ns`), and either loads past it (`next_ns`, read off the
// curve where there is one: the fit's memory latency is an asymptote, and one guest's 60 MiB step
// was planned as a level because 1.5x its 193.286 ns hit fell 0.001 ns short of the fit's 289.930
// though the curve past it stayed under 250) cost less than 1.5x that, or the fit cannot place
// the step within kWidestSlowCacheEndOctaves (one guest's huge-page curve rose from 100 to 300 ns
// over four octaves, and curves put a step on that ramp anywhere from 44 to 72 MiB, 34-62 and
// 48-96 MiB its intervals): page walks under a host's nested paging, or DRAM pages, not a cache.
// A cache that saves much (an eDRAM L4 at about half of DRAM's latency, DRAM twice it, its end a
// sharp step) stays one.
inline bool WithinMemory(const MeasuredLevel& step, double next_ns, double memory_ns) {
  if (memory_ns <= 0 || step.latency_ns < 0.5 * memory_ns) return false;
  const bool ramp = step.low_bytes > 0 &&
                    std::log2(step.high_bytes / step.low_bytes) > kWidestSlowCacheEndOctaves;
  return next_ns < 1.5 * step.latency_ns || ramp;
}

// A cache level as successive latency curves of this machine planned it (several in each full
// probe, and every later probe's). The latency curve of a shared or virtual machine moves its
// steps from curve to curve (one guest's L2 at 406, 575 and 967 KiB in three full probes within
// an hour; its last cache anywhere from 2 to 13 MiB), so a level is planned at the median of what
// the curves found, which a single curve moves little, and a level whose findings span more than
// a quarter octave is reported as unstable with that range.
struct LevelConsensus {
  std::vector<double> seen_bytes;       // the size each curve that found it planned, in order
  std::vector<double> seen_latency_ns;  // the hit latency each found
  double Bytes() const;                 // the median of seen_bytes (the lower of an even count)
  double LatencyNs() const;             // the median of seen_latency_ns
  double LowBytes() const;
  double HighBytes() const;
  bool Unstable() const;  // the sizes seen span more than a quarter octave
};

// A quarter octave: two sizes closer than this (a factor of 2^0.25, 19%) are the same finding.
inline constexpr double kSameSizeOctaves = 0.25;

struct CurvePoint {
  double bytes = 0;
  double value = 0;  // ns per load (latency curves) or GB/s (bandwidth curves)
};

// What loads cost on `curve` past a step that ends at `from_bytes`, before the next begins at
// `to_bytes`: the median of the points in the nearer half (in octaves) of that stretch, where the
// next step's misses have not begun; nothing when no point lies there. The fit's own latency past
// a step is its asymptote, which a soft step (misses rising slowly, as random replacement or a
// neighbour sharing the cache make them) never reaches before the next: one guest's 2 MiB L2
// showed a step at 470 KiB with loads past it at 5.5 ns against 4.6 before, while the fit put
// them at 7.4 ns, and planned at 470 KiB, the L2 lost the two-thirds of it that streamed as fast.
std::optional<double> CurveLatencyPast(const std::vector<CurvePoint>& curve, double from_bytes,
                                       double to_bytes);

// One measured limit. Compute ceilings are per data type and thread count; bandwidth ceilings per
// memory level and thread count.
struct Ceiling {
  enum class Kind { kCompute, kBandwidth };
  Kind kind = Kind::kCompute;
  Dtype dtype = Dtype::kF32;               // compute only
  MemoryLevel level = MemoryLevel::kDram;  // bandwidth only
  int threads = 1;
  double per_second = 0;  // operations/s (compute) or bytes/s (bandwidth)
  std::string source;     // which probe measured it: "AVX3 fma", or the access kind "read", "triad"
  std::string note;       // how it was measured or arrived at: "fastest reader streams:2", or
                          // kRaisedNote... when another thread count's evidence raised it
  // A read ceiling's own fastest reader: how this core streamed the level fastest at these
  // threads (absent in profiles probed before it was recorded).
  std::optional<Reader> reader;

  // Whether the evidence of another thread count raised this ceiling above its own measurement.
  static constexpr absl::string_view kRaisedNote = "raised from ";
  bool Raised() const { return absl::StartsWith(note, kRaisedNote); }
  // Appended to the note of a ceiling an earlier probe measured higher than the latest one.
  static constexpr absl::string_view kKeptNote = "kept over the latest probe's ";
  // The probe's self-checks (probes/probe_checks.h): a figure they doubted and measured again,
  // and one they still doubted after the retries.
  static constexpr absl::string_view kMeasuredAgainNote = "measured again";
  static constexpr absl::string_view kUnstableNote = "unstable";
  bool Unstable() const { return absl::StrContains(note, kUnstableNote); }
  bool MeasuredAgain() const { return absl::StrContains(note, kMeasuredAgainNote); }

  // Whether `other` measures the same thing at some thread count: kind, dtype (compute) or level
  // (bandwidth), and source.
  bool SamePath(const Ceiling& other) const {
    return kind == other.kind && source == other.source &&
           (kind == Kind::kCompute ? dtype == other.dtype : level == other.level);
  }

  std::string Name() const;  // "f32 compute, 2 threads" / "DRAM bandwidth, 1 thread"
  // A rate in this ceiling's unit: "245.4 GFLOP/s", "873.7 GOP/s" (int8), "16.8 GB/s".
  std::string RateText(double rate_per_second) const;
};

struct MachineProfile {
  std::string cpu_model;
  std::string vendor;
  int cpu_family = 0;                    // /proc/cpuinfo's "cpu family" (0: unknown)
  std::vector<std::string> isa;          // "avx2", "fma", "avx512f", "avx512vnni", ...
  std::vector<std::string> hwy_targets;  // Highway targets this CPU supports, best first
  int logical_cpus = 1;                  // CPUs this process may run on
  int physical_cores = 1;
  // The NUMA node of each CPU this process may run on, in the order the executor pins threads to
  // them (empty where the OS reports no nodes: one node).
  std::vector<int> cpu_nodes;
  std::vector<CacheLevel> caches;  // data and unified caches, as the OS reports them
  std::string os_kernel;
  std::string transparent_hugepages;
  std::string rooftune_version;
  std::vector<Ceiling> ceilings;

  // What the probes measured beyond the ceilings (empty until `rooftune probe` has run).
  std::vector<MeasuredLevel> measured_levels;    // from the 4 KiB-page latency curve
  std::vector<CurvePoint> latency_curve;         // 4 KiB pages
  std::vector<CurvePoint> latency_curve_huge;    // MADV_HUGEPAGE (full probe only)
  std::vector<CurvePoint> read_bandwidth_curve;  // 1 thread, GB/s by working set
  double memory_latency_ns = 0;
  double clock_ghz = 0;
  // Cycles between dependent FMAs (probes/latency.h); 0 when not measured.
  double fma_latency_cycles = 0;
  // The share of CPU time the hypervisor gave others while the probe ran (/proc/stat's steal).
  double steal_share = 0;
  // What a call split over `threads` threads costs beyond its work, by thread count
  // (probes/parallel_call.h); empty until a probe has measured it.
  struct ParallelCall {
    int threads = 0;
    double overhead_seconds = 0;
  };
  std::vector<ParallelCall> parallel_calls;
  // The overhead at `threads`, or at the nearest count measured above it (else below it); 0 where
  // none was measured.
  double ParallelCallOverheadSeconds(int threads) const;
  // The planned cache levels over every latency curve of this machine's probes (level_probes of
  // them: a full probe measures several, a quick one one), in order of size; empty until a probe
  // has measured the latency curve. FoldLevelConsensus adds a probe's curves.
  std::vector<LevelConsensus> level_consensus;
  int level_probes = 0;

  // The NUMA nodes the first `threads` CPUs span (1 where the OS reports none).
  int NumaNodesSpanned(int threads) const;

  // The machine's identity, which keys its profile and tuned rows: a stable hash of the facts
  // that make results transferable between machines of one type (CPU model, vendor, ISA flags,
  // physical cores, cache geometry). The rooftune version, OS release, THP setting and the
  // process's CPU count are provenance, not identity: an upgrade or another affinity mask keeps
  // the rows.
  std::string Fingerprint() const;
  // What is recorded with each tuned row instead: {"rooftune_version", "os_kernel",
  // "transparent_hugepages", "logical_cpus"}.
  nlohmann::json Provenance() const;

  // Bytes of a vector the multiply-add units take per instruction per pipe: the best Highway
  // target's vector, except where a CPU splits it (AMD family 25, Zen 4, runs 512-bit
  // instructions on 256-bit units: one zmm FMA or vpdpbusd a cycle, not two). 0 when no target
  // is known.
  int VectorDatapathBytes() const;

  // Capacity of the data (or unified) cache at `level` (1-based) as the OS reports it, or
  // nullopt where there is no such level.
  std::optional<CacheLevel> DataCache(int level) const;
  // Capacity for planning (blocking, working sets, diagnosis): the level-th held level of the
  // consensus over this machine's latency curves (ConsensusLevels), else the level-th level this
  // profile's latency curve planned (steps less than an octave apart counted as one level, at
  // the first), else what the OS reports, else nullopt.
  std::optional<uint64_t> EffectiveCacheBytes(int level) const;
  // The consensus levels that more than half of the curves found: the ones planned, in order.
  std::vector<const LevelConsensus*> ConsensusLevels() const;
  // This profile's own planned levels as a consensus of one curve (what each curve starts with).
  void StartLevelConsensus();
  // How EffectiveCacheBytes reads each cache step of the latency curve (TLB steps left out), in
  // order of size.
  struct PlannedStep {
    enum class Role {
      kLevel,           // a level boundary, planned at this size
      kSecondStage,     // the previous level missing more: less than an octave past its last step
      kInsideReported,  // the previous level missing more: both inside one inner reported cache
      kBarelyDearer,    // loads past it cost barely more: no boundary
      kWithinMemory,    // a step within memory's latency, not a cache's end (WithinMemory)
    };
    const MeasuredLevel* step;
    Role role;
    double past_ns =
        0;  // kBarelyDearer: what loads past it cost (CurveLatencyPast, else the fit's)
  };
  std::vector<PlannedStep> PlannedSteps() const;
  // Capacity for pricing a bound (traffic models; residency: HeldCacheBytes): the largest `level`
  // may have.
  // A bound must not charge a farther level for bytes a nearer one may hold, so where planning
  // takes the cautious size this takes the generous one: the last step of a level that misses in
  // two stages (kSecondStage, kInsideReported), the largest size any probe found it at; and for
  // the last cache level the traffic models know (L3), the largest cache planned beyond it too
  // (a machine whose curve shows four cache steps). Equal to EffectiveCacheBytes otherwise.
  std::optional<uint64_t> PricedCacheBytes(int level) const;
  // What `level` may hold from one call to the next: PricedCacheBytes, raised to the size the OS
  // reports for that level where the measured one is within an octave below it. Residency errs
  // towards holding: charging a farther level for a working set that stayed is the illegal error.
  std::optional<uint64_t> HeldCacheBytes(int level) const;
  // The nearest cache level whose HeldCacheBytes holds `bytes`, if any.
  std::optional<int> NearestCacheHolding(double bytes) const;
  // The largest EffectiveCacheBytes over every level (0 when none is known): what stays cached
  // from one call to the next.
  uint64_t LargestEffectiveCacheBytes() const;
  // The largest cache the OS reports (0 when it reports none).
  uint64_t LargestReportedCacheBytes() const;
  bool HasIsa(absl::string_view flag) const;

  // The compute ceiling for the arithmetic `dtype` does, at exactly `threads` threads: the
  // highest where it has several (int8: a vector ceiling and an AMX one); for s8 weights
  // dequantised in registers their own loop's, else (a profile probed without it) the f32 FMA's.
  const Ceiling* FindCompute(Dtype dtype, int threads) const;
  // The bandwidth traffic into `level` is priced against. Traffic models count lines filled
  // (reads, and the fills of write-allocates), so it is the read kernel's ceiling; without one,
  // the highest of the kinds measured. (Not simply the highest: non-temporal writes to DRAM and
  // copies in L1 move more bytes per second than any fill stream, and a read-bound kernel priced
  // against them would show headroom it cannot have: a GEMV at the read bandwidth at 0.6.)
  const Ceiling* FillBandwidth(MemoryLevel level, int threads) const;
  // The bandwidth of one access kind ("read", "write", "copy", "triad"), or null.
  const Ceiling* FindBandwidth(MemoryLevel level, int threads, absl::string_view kind) const;

  nlohmann::json ToJson() const;
  static absl::StatusOr<MachineProfile> FromJson(const nlohmann::json& json);
};

// The dtype whose compute ceiling prices a workload of `dtype` where the profile has none of its
// own: s8 weights dequantised against f32 activations run on the f32 FMA units.
Dtype ComputeDtype(Dtype dtype);

// Adds `fresh`'s consensus (of its own latency curves) to `stored`'s and keeps the result in
// `fresh`: each fresh level, with every size its curves found it at, joins a stored level found
// within an octave of its median size (a planned level before one that is not, then the one
// found nearest; each stored level taking one). One that joins none starts a level of its own, held
// only once more than half of all the curves have found it, except where `fresh` is a single
// curve and the level lies within an octave of one that curve already joined: its second step
// there, which must not count the curve twice. A probe folds its curves one at a time.
void FoldLevelConsensus(const MachineProfile& stored, MachineProfile& fresh);

// The ceilings of `after` that moved by at least `at_least` (0.02: 2%) from the same ceiling in
// `before` (same kind, dtype or level, threads and source), one line each:
// "DRAM bandwidth, 1 thread (read): 17.0 GB/s -> 17.6 GB/s (+3.5%)". On a shared machine a
// re-probe moves them; saying by how much tells a user how far to trust either.
std::vector<std::string> CeilingChanges(const MachineProfile& before, const MachineProfile& after,
                                        double at_least);

// A ceiling is the best rate any probe of this machine measured: each compute or DRAM ceiling of
// `fresh` that the same ceiling of `stored` exceeds takes the stored one back, its note saying
// what this probe measured. A bound is approached from below: a slower probe is the machine's
// noise (a busy neighbour, a slow phase), and a profile lowered by it calls kernels timed in a
// faster phase impossible. Cache levels' ceilings are left as measured: their working sets follow
// the levels each probe finds, and a probe that placed one inside a nearer level measured that
// level's rate, an error the best-of rule would keep for good. Returns how many ceilings kept
// their stored rate.
int KeepHigherCeilings(const MachineProfile& stored, MachineProfile& fresh);

}  // namespace rooftune
