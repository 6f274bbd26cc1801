#include "framework/machine_profile.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "framework/json_numbers.h"
#include "framework/stats.h"

namespace rooftune {

absl::string_view ToString(MemoryLevel level) {
  switch (level) {
    case MemoryLevel::kL1: return "L1";
    case MemoryLevel::kL2: return "L2";
    case MemoryLevel::kL3: return "L3";
    case MemoryLevel::kDram: return "DRAM";
  }
  return "?";
}

std::string Ceiling::Name() const {
  const std::string threads_text = absl::StrCat(threads, threads == 1 ? " thread" : " threads");
  if (kind == Kind::kCompute) return absl::StrCat(ToString(dtype), " compute, ", threads_text);
  return absl::StrCat(ToString(level), " bandwidth, ", threads_text);
}

std::string Ceiling::RateText(double rate_per_second) const {
  if (kind == Kind::kBandwidth) return absl::StrFormat("%.1f GB/s", rate_per_second / 1e9);
  return absl::StrFormat("%.1f %s", rate_per_second / 1e9,
                         CountsIntegerOps(dtype) ? "GOP/s" : "GFLOP/s");
}

Dtype ComputeDtype(Dtype dtype) { return dtype == Dtype::kS8F32 ? Dtype::kF32 : dtype; }

namespace {

// The ceiling of `profile` that measures what `c` measures, at the same thread count, or null.
const Ceiling* Counterpart(const MachineProfile& profile, const Ceiling& c) {
  for (const Ceiling& other : profile.ceilings) {
    if (c.SamePath(other) && c.threads == other.threads) return &other;
  }
  return nullptr;
}

}  // namespace

std::vector<std::string> CeilingChanges(const MachineProfile& before, const MachineProfile& after,
                                        double at_least) {
  std::vector<std::string> lines;
  for (const Ceiling& now : after.ceilings) {
    const Ceiling* then = Counterpart(before, now);
    if (then == nullptr || then->per_second <= 0) continue;
    const double change = now.per_second / then->per_second - 1;
    if (std::abs(change) >= at_least) {
      lines.push_back(absl::StrFormat("%s (%s): %s -> %s (%+.1f%%)", now.Name(), now.source,
                                      then->RateText(then->per_second),
                                      now.RateText(now.per_second), 100 * change));
    }
  }
  return lines;
}

int KeepHigherCeilings(const MachineProfile& stored, MachineProfile& fresh) {
  int kept = 0;
  for (Ceiling& now : fresh.ceilings) {
    if (now.kind == Ceiling::Kind::kBandwidth && now.level != MemoryLevel::kDram) continue;
    const Ceiling* then = Counterpart(stored, now);
    if (then == nullptr || then->per_second <= now.per_second) continue;
    const std::string measured = now.RateText(now.per_second);
    const std::optional<Reader> reader = now.reader;
    now = *then;
    // A profile stored before readers were recorded: the latest probe's reader is the evidence.
    if (!now.reader) now.reader = reader;
    // Only the latest probe's figure: a note that grew with every probe would say nothing.
    absl::string_view base = now.note;
    base = absl::StripSuffix(base.substr(0, base.find(Ceiling::kKeptNote)), "; ");
    now.note = absl::StrCat(base, base.empty() ? "" : "; ", Ceiling::kKeptNote, measured);
    ++kept;
  }
  return kept;
}

int MachineProfile::NumaNodesSpanned(int threads) const {
  std::set<int> nodes;
  for (int i = 0; i < threads && i < int(cpu_nodes.size()); ++i) nodes.insert(cpu_nodes[size_t(i)]);
  return std::max<int>(1, int(nodes.size()));
}

double MachineProfile::ParallelCallOverheadSeconds(int threads) const {
  const ParallelCall* above = nullptr;
  const ParallelCall* below = nullptr;
  for (const ParallelCall& c : parallel_calls) {
    if (c.threads >= threads && (above == nullptr || c.threads < above->threads)) above = &c;
    if (c.threads < threads && (below == nullptr || c.threads > below->threads)) below = &c;
  }
  if (above != nullptr) return above->overhead_seconds;
  return below != nullptr ? below->overhead_seconds : 0;
}

std::string MachineProfile::Fingerprint() const {
  std::string facts =
      absl::StrCat(cpu_model, "|", vendor, "|", absl::StrJoin(isa, ","), "|", physical_cores);
  for (const CacheLevel& c : caches) {
    absl::StrAppend(&facts, "|L", c.level, c.type, ":", c.size_bytes, "/", c.ways, "/",
                    c.line_bytes, "/", c.shared_by_cpus);
  }
  // FNV-1a, 64 bits: stable across runs and compilers, unlike std::hash.
  uint64_t hash = 0xcbf29ce484222325ull;
  for (unsigned char ch : facts) {
    hash ^= ch;
    hash *= 0x100000001b3ull;
  }
  return absl::StrFormat("%016x", hash);
}

nlohmann::json MachineProfile::Provenance() const {
  return {{"rooftune_version", rooftune_version},
          {"os_kernel", os_kernel},
          {"transparent_hugepages", transparent_hugepages},
          {"logical_cpus", logical_cpus}};
}

int MachineProfile::VectorDatapathBytes() const {
  if (hwy_targets.empty()) return 0;
  const std::string& best = hwy_targets.front();
  const int vector_bytes = best.rfind("AVX3", 0) == 0 ? 64 : best == "AVX2" ? 32 : 16;
  if (vendor == "AuthenticAMD" && cpu_family == 25) return std::min(vector_bytes, 32);
  return vector_bytes;
}

std::optional<CacheLevel> MachineProfile::DataCache(int level) const {
  for (const CacheLevel& c : caches) {
    if (c.level == level && c.type != "Instruction") return c;
  }
  return std::nullopt;
}

namespace {

// The reported cache level, other than the last, that holds a step at `bytes` (within a quarter
// octave), or 0. The last level is left out: a VM reports the host's (480 MiB on ours) where its
// share measures 15 MiB, and would swallow every step.
int InnerReportedLevelHolding(const std::vector<CacheLevel>& caches, double bytes) {
  int last = 0;
  for (const CacheLevel& c : caches) {
    if (c.type != "Instruction") last = std::max(last, c.level);
  }
  int holding = 0;
  for (const CacheLevel& c : caches) {
    if (c.type == "Instruction" || c.level == last || bytes > 1.19 * double(c.size_bytes)) continue;
    if (holding == 0 || c.level < holding) holding = c.level;
  }
  return holding;
}

}  // namespace

absl::string_view ToString(LevelKind kind) {
  switch (kind) {
    case LevelKind::kCache: return "cache";
    case LevelKind::kTlb: return "tlb";
    case LevelKind::kCacheOnHugePages: return "cache-hp";
    case LevelKind::kCacheSetsUneven: return "cache-sets";
  }
  return "?";
}

absl::StatusOr<LevelKind> ParseLevelKind(absl::string_view text) {
  for (LevelKind kind : {LevelKind::kCache, LevelKind::kTlb, LevelKind::kCacheOnHugePages,
                         LevelKind::kCacheSetsUneven}) {
    if (text == ToString(kind)) return kind;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown level kind '", text, "' (cache, tlb, cache-hp, cache-sets)"));
}

NearestStep NearestCacheStep(const std::vector<MeasuredLevel>& steps, double bytes) {
  NearestStep nearest;
  for (const MeasuredLevel& m : steps) {
    if (m.kind == LevelKind::kTlb) continue;
    const double octaves = std::abs(std::log2(m.size_bytes / bytes));
    if (nearest.step == nullptr || octaves < nearest.octaves) nearest = {&m, octaves};
  }
  return nearest;
}

std::optional<double> CurveLatencyPast(const std::vector<CurvePoint>& curve, double from_bytes,
                                       double to_bytes) {
  const double middle = std::sqrt(from_bytes * to_bytes);
  std::vector<double> past;
  for (const CurvePoint& point : curve) {
    if (point.bytes > from_bytes && point.bytes <= middle) past.push_back(point.value);
  }
  if (past.empty()) return std::nullopt;
  return QuartilesOf(std::move(past)).median;
}

namespace {
// The latency curve `step` was found on: huge pages' for the kinds only they show.
const std::vector<CurvePoint>& CurveOf(const MachineProfile& p, const MeasuredLevel& step) {
  const bool huge =
      step.kind == LevelKind::kCacheOnHugePages || step.kind == LevelKind::kCacheSetsUneven;
  return huge && !p.latency_curve_huge.empty() ? p.latency_curve_huge : p.latency_curve;
}
}  // namespace

std::vector<MachineProfile::PlannedStep> MachineProfile::PlannedSteps() const {
  // The curve's cache steps are the levels in order. A step past which loads cost barely more is
  // no boundary to plan around. A cache that missed in two steps (less than an octave apart, or
  // both inside one inner cache the OS reports) is counted once, at its first step (where misses
  // begin: the capacity to plan with). Ours showed its 2 MiB L2 ending at 836 KiB and again at
  // 1.7 MiB (a neighbour on the core's other hyperthread takes part of it); counted as two
  // levels, the "L3" bandwidth working set landed inside the real L2.
  std::vector<const MeasuredLevel*> cache_steps;
  for (const MeasuredLevel& m : measured_levels) {
    if (m.kind != LevelKind::kTlb) cache_steps.push_back(&m);
  }
  // The hit latency past a step: the next step's, TLB steps included, else memory's.
  // The hit latency past a step: the curve's points past it (CurveLatencyPast), up to the next
  // step, TLB steps included, or to the curve's end; without them, the fit's next step or memory.
  auto latency_past = [&](const MeasuredLevel& m) {
    const std::vector<CurvePoint>& curve = CurveOf(*this, m);
    for (const MeasuredLevel& next : measured_levels) {
      if (next.size_bytes > m.size_bytes) {
        return CurveLatencyPast(curve, m.high_bytes, next.low_bytes).value_or(next.latency_ns);
      }
    }
    if (curve.empty()) return memory_latency_ns;
    return CurveLatencyPast(curve, m.high_bytes, curve.back().bytes).value_or(memory_latency_ns);
  };
  std::vector<PlannedStep> planned;
  const MeasuredLevel* previous = nullptr;
  for (size_t i = 0; i < cache_steps.size(); ++i) {
    const MeasuredLevel& m = *cache_steps[i];
    if (i + 1 < cache_steps.size()) {
      const MeasuredLevel& next = *cache_steps[i + 1];
      const double past_ns = CurveLatencyPast(CurveOf(*this, m), m.high_bytes, next.low_bytes)
                                 .value_or(next.latency_ns);
      if (BarelyDearer(m.latency_ns, past_ns)) {
        planned.push_back({&m, PlannedStep::Role::kBarelyDearer, past_ns});
        continue;
      }
    }
    if (WithinMemory(m, latency_past(m), memory_latency_ns)) {
      planned.push_back({&m, PlannedStep::Role::kWithinMemory});
      continue;
    }
    PlannedStep::Role role = PlannedStep::Role::kLevel;
    if (previous != nullptr) {
      const int inner = InnerReportedLevelHolding(caches, m.size_bytes);
      if (SameCacheAsThePreviousStep(previous->size_bytes, m.size_bytes)) {
        role = PlannedStep::Role::kSecondStage;
      } else if (inner != 0 && inner == InnerReportedLevelHolding(caches, previous->size_bytes)) {
        role = PlannedStep::Role::kInsideReported;
      }
    }
    previous = &m;
    planned.push_back({&m, role});
  }
  return planned;
}

namespace {
double LowerMedian(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return values[(values.size() - 1) / 2];
}
}  // namespace

double LevelConsensus::Bytes() const { return LowerMedian(seen_bytes); }
double LevelConsensus::LatencyNs() const { return LowerMedian(seen_latency_ns); }
double LevelConsensus::LowBytes() const {
  return seen_bytes.empty() ? 0 : *std::min_element(seen_bytes.begin(), seen_bytes.end());
}
double LevelConsensus::HighBytes() const {
  return seen_bytes.empty() ? 0 : *std::max_element(seen_bytes.begin(), seen_bytes.end());
}
bool LevelConsensus::Unstable() const {
  return !seen_bytes.empty() && std::log2(HighBytes() / LowBytes()) > kSameSizeOctaves;
}

std::vector<const LevelConsensus*> MachineProfile::ConsensusLevels() const {
  std::vector<const LevelConsensus*> held;
  for (const LevelConsensus& c : level_consensus) {
    if (2 * int(c.seen_bytes.size()) > level_probes) held.push_back(&c);
  }
  std::sort(held.begin(), held.end(), [](const LevelConsensus* a, const LevelConsensus* b) {
    return a->Bytes() < b->Bytes();
  });
  return held;
}

void MachineProfile::StartLevelConsensus() {
  level_consensus.clear();
  level_probes = 1;
  for (const PlannedStep& p : PlannedSteps()) {
    if (p.role != PlannedStep::Role::kLevel) continue;
    level_consensus.push_back({{p.step->size_bytes}, {p.step->latency_ns}});
  }
}

void FoldLevelConsensus(const MachineProfile& stored, MachineProfile& fresh) {
  if (stored.level_probes == 0 || fresh.level_probes == 0) return;
  std::vector<LevelConsensus> folded = stored.level_consensus;
  const int held_at = stored.level_probes;
  auto held = [&](const LevelConsensus& c) { return 2 * int(c.seen_bytes.size()) > held_at; };
  // Octaves to the nearest size a level was found at: a level that moves keeps being recognised.
  auto octaves = [](double bytes, const LevelConsensus& c) {
    double nearest = std::numeric_limits<double>::infinity();
    for (double seen : c.seen_bytes) nearest = std::min(nearest, std::abs(std::log2(bytes / seen)));
    return nearest;
  };
  std::vector<bool> taken(folded.size(), false);
  for (const LevelConsensus& found : fresh.level_consensus) {
    const double bytes = found.Bytes();
    if (bytes <= 0) continue;
    // The level it moved from: within an octave, a planned level before one that was not (votes
    // split between a level and a stray entry near it would leave neither planned), the nearer
    // of two alike.
    int nearest = -1;
    for (size_t i = 0; i < folded.size(); ++i) {
      if (taken[i] || octaves(bytes, folded[i]) > 1.0) continue;
      if (nearest < 0) {
        nearest = int(i);
        continue;
      }
      const LevelConsensus& best = folded[size_t(nearest)];
      if (held(folded[i]) != held(best) ? held(folded[i])
                                        : octaves(bytes, folded[i]) < octaves(bytes, best)) {
        nearest = int(i);
      }
    }
    if (nearest >= 0) {
      taken[size_t(nearest)] = true;
      LevelConsensus& level = folded[size_t(nearest)];
      level.seen_bytes.insert(level.seen_bytes.end(), found.seen_bytes.begin(),
                              found.seen_bytes.end());
      level.seen_latency_ns.insert(level.seen_latency_ns.end(), found.seen_latency_ns.begin(),
                                   found.seen_latency_ns.end());
      continue;
    }
    // One curve's second step within an octave of a level it has already found is that level
    // missing again, not a level of its own: the curve counts once.
    const bool second_step =
        fresh.level_probes == 1 &&
        std::any_of(folded.begin(), folded.end(),
                    [&](const LevelConsensus& c) { return octaves(bytes, c) <= 1.0; });
    if (second_step) continue;
    folded.push_back(found);
    taken.push_back(true);
  }
  std::sort(folded.begin(), folded.end(),
            [](const LevelConsensus& a, const LevelConsensus& b) { return a.Bytes() < b.Bytes(); });
  fresh.level_consensus = std::move(folded);
  fresh.level_probes = stored.level_probes + fresh.level_probes;
}

std::optional<uint64_t> MachineProfile::EffectiveCacheBytes(int level) const {
  if (level_probes > 0 && !level_consensus.empty()) {
    const std::vector<const LevelConsensus*> held = ConsensusLevels();
    if (level >= 1 && level <= int(held.size())) return uint64_t(held[level - 1]->Bytes());
    if (!held.empty()) return std::nullopt;
  }
  int index = 0;
  for (const PlannedStep& p : PlannedSteps()) {
    if (p.role == PlannedStep::Role::kLevel && ++index == level)
      return uint64_t(p.step->size_bytes);
  }
  if (!measured_levels.empty() && index > 0 && level > index) return std::nullopt;
  std::optional<CacheLevel> c = DataCache(level);
  if (!c) return std::nullopt;
  return c->size_bytes;
}

std::optional<uint64_t> MachineProfile::PricedCacheBytes(int level) const {
  const std::optional<uint64_t> planned = EffectiveCacheBytes(level);
  if (!planned) return std::nullopt;
  uint64_t priced = *planned;
  // This profile's curve: the steps of the level-th planned level, its later stages included.
  int index = 0;
  for (const PlannedStep& p : PlannedSteps()) {
    if (p.role == PlannedStep::Role::kLevel) ++index;
    const bool stage = p.role == PlannedStep::Role::kLevel ||
                       p.role == PlannedStep::Role::kSecondStage ||
                       p.role == PlannedStep::Role::kInsideReported;
    if (index == level && stage) priced = std::max(priced, uint64_t(p.step->size_bytes));
  }
  // Every probe's: the largest size the level was found at.
  if (level_probes > 0) {
    const std::vector<const LevelConsensus*> held = ConsensusLevels();
    if (level >= 1 && level <= int(held.size())) {
      priced = std::max(priced, uint64_t(held[level - 1]->HighBytes()));
    }
  }
  // The traffic models' last cache holds whatever any cache beyond it holds.
  if (level == kNumMemoryLevels - 1) {
    for (int beyond = level + 1; const std::optional<uint64_t> more = EffectiveCacheBytes(beyond);
         ++beyond) {
      priced = std::max(priced, *more);
    }
  }
  return priced;
}

std::optional<uint64_t> MachineProfile::HeldCacheBytes(int level) const {
  const std::optional<uint64_t> priced = PricedCacheBytes(level);
  if (!priced) return std::nullopt;
  // A latency curve's step comes before the cache is full (replacement that is not LRU, ways a
  // sibling shares), and by how much moves from probe to probe: a working set between the step
  // and the size the OS reports may stay. Within an octave the report is the same cache; further
  // off (a VM reporting the host's whole L3) it says nothing about this guest's share.
  const std::optional<CacheLevel> reported = DataCache(level);
  if (reported && reported->size_bytes > *priced && reported->size_bytes <= 2 * *priced) {
    return reported->size_bytes;
  }
  return priced;
}

std::optional<int> MachineProfile::NearestCacheHolding(double bytes) const {
  for (int level = 1; level < kNumMemoryLevels; ++level) {
    const std::optional<uint64_t> capacity = HeldCacheBytes(level);
    if (capacity && bytes <= double(*capacity)) return level;
  }
  return std::nullopt;
}

uint64_t MachineProfile::LargestEffectiveCacheBytes() const {
  uint64_t largest = 0;
  for (int level = 1; level <= kNumMemoryLevels; ++level) {
    largest = std::max(largest, EffectiveCacheBytes(level).value_or(0));
  }
  return largest;
}

uint64_t MachineProfile::LargestReportedCacheBytes() const {
  uint64_t largest = 0;
  for (const CacheLevel& c : caches) largest = std::max(largest, c.size_bytes);
  return largest;
}

bool MachineProfile::HasIsa(absl::string_view flag) const {
  return std::find(isa.begin(), isa.end(), flag) != isa.end();
}

const Ceiling* MachineProfile::FindCompute(Dtype dtype, int threads) const {
  // A dtype can have several paths (int8: vector dot products and AMX tiles): a ceiling is an
  // upper bound, so the highest.
  auto highest = [&](Dtype of) {
    const Ceiling* best = nullptr;
    for (const Ceiling& c : ceilings) {
      if (c.kind == Ceiling::Kind::kCompute && c.dtype == of && c.threads == threads &&
          (best == nullptr || c.per_second > best->per_second)) {
        best = &c;
      }
    }
    return best;
  };
  // s8 weights dequantised in registers have a loop of their own (a widen and a convert beside
  // each FMA); a profile probed before it had one prices them at the FMA's rate.
  if (const Ceiling* own = highest(dtype)) return own;
  return ComputeDtype(dtype) == dtype ? nullptr : highest(ComputeDtype(dtype));
}

namespace {

bool IsBandwidthOf(const Ceiling& c, MemoryLevel level, int threads) {
  return c.kind == Ceiling::Kind::kBandwidth && c.level == level && c.threads == threads;
}

}  // namespace

const Ceiling* MachineProfile::FillBandwidth(MemoryLevel level, int threads) const {
  if (const Ceiling* read = FindBandwidth(level, threads, "read")) return read;
  const Ceiling* best = nullptr;
  for (const Ceiling& c : ceilings) {
    if (!IsBandwidthOf(c, level, threads)) continue;
    if (best == nullptr || c.per_second > best->per_second) best = &c;
  }
  return best;
}

const Ceiling* MachineProfile::FindBandwidth(MemoryLevel level, int threads,
                                             absl::string_view kind) const {
  for (const Ceiling& c : ceilings) {
    if (IsBandwidthOf(c, level, threads) && c.source == kind) return &c;
  }
  return nullptr;
}

nlohmann::json MachineProfile::ToJson() const {
  // The machine's identity and facts (the keys print sorted; this order is the reader's).
  nlohmann::json j = {{"fingerprint", Fingerprint()},
                      {"cpu_model", cpu_model},
                      {"vendor", vendor},
                      {"cpu_family", cpu_family},
                      {"isa", isa},
                      {"hwy_targets", hwy_targets},
                      {"logical_cpus", logical_cpus},
                      {"physical_cores", physical_cores},
                      {"cpu_nodes", cpu_nodes},
                      {"os_kernel", os_kernel},
                      {"transparent_hugepages", transparent_hugepages},
                      {"rooftune_version", rooftune_version}};
  j["caches"] = nlohmann::json::array();
  for (const CacheLevel& c : caches) {
    // The fields as a paragraph.
    // clang-format off
    j["caches"].push_back({{"level", c.level}, {"type", c.type}, {"size_bytes", c.size_bytes},
                           {"ways", c.ways}, {"line_bytes", c.line_bytes},
                           {"shared_by_cpus", c.shared_by_cpus}});
    // clang-format on
  }
  j["ceilings"] = nlohmann::json::array();
  for (const Ceiling& c : ceilings) {
    nlohmann::json cj = {{"kind", c.kind == Ceiling::Kind::kCompute ? "compute" : "bandwidth"},
                         {"threads", c.threads},
                         {"per_second", c.per_second},
                         {"source", c.source}};
    if (!c.note.empty()) cj["note"] = c.note;
    if (c.reader) cj["reader"] = c.reader->Name();
    if (c.kind == Ceiling::Kind::kCompute) {
      cj["dtype"] = ToString(c.dtype);
    } else {
      cj["level"] = ToString(c.level);
    }
    j["ceilings"].push_back(cj);
  }
  j["measured_levels"] = nlohmann::json::array();
  for (const MeasuredLevel& m : measured_levels) {
    // The fields as a paragraph.
    // clang-format off
    j["measured_levels"].push_back({{"size_bytes", m.size_bytes}, {"low_bytes", m.low_bytes},
                                    {"high_bytes", m.high_bytes}, {"latency_ns", m.latency_ns},
                                    {"kind", ToString(m.kind)}});
    // clang-format on
  }
  auto curve = [](const std::vector<CurvePoint>& points) {
    nlohmann::json a = nlohmann::json::array();
    for (const CurvePoint& p : points) a.push_back({p.bytes, p.value});
    return a;
  };
  j["latency_curve_ns"] = curve(latency_curve);
  j["latency_curve_huge_pages_ns"] = curve(latency_curve_huge);
  j["read_bandwidth_curve_gbs"] = curve(read_bandwidth_curve);
  j["memory_latency_ns"] = memory_latency_ns;
  j["clock_ghz"] = clock_ghz;
  j["fma_latency_cycles"] = fma_latency_cycles;
  j["steal_share"] = steal_share;
  j["parallel_call_overhead_seconds"] = nlohmann::json::array();
  for (const ParallelCall& c : parallel_calls) {
    j["parallel_call_overhead_seconds"].push_back({c.threads, c.overhead_seconds});
  }
  j["level_probes"] = level_probes;
  j["level_consensus"] = nlohmann::json::array();
  for (const LevelConsensus& c : level_consensus) {
    j["level_consensus"].push_back(
        {{"seen_bytes", c.seen_bytes}, {"seen_latency_ns", c.seen_latency_ns}});
  }
  return j;
}

absl::StatusOr<MachineProfile> MachineProfile::FromJson(const nlohmann::json& j) {
  try {
    MachineProfile p;
    p.cpu_model = j.at("cpu_model").get<std::string>();
    p.vendor = j.at("vendor").get<std::string>();
    p.cpu_family = WholeNumber<int>(j.value("cpu_family", nlohmann::json(0)));  // absent before
    p.isa = j.at("isa").get<std::vector<std::string>>();
    p.hwy_targets = j.value("hwy_targets", std::vector<std::string>{});
    p.logical_cpus = WholeNumber<int>(j.at("logical_cpus"));
    p.physical_cores = WholeNumber<int>(j.at("physical_cores"));
    // Absent before NUMA facts were read.
    for (const auto& node : j.value("cpu_nodes", nlohmann::json::array())) {
      p.cpu_nodes.push_back(WholeNumber<int>(node));
    }
    p.os_kernel = j.at("os_kernel").get<std::string>();
    p.transparent_hugepages = j.at("transparent_hugepages").get<std::string>();
    p.rooftune_version = j.at("rooftune_version").get<std::string>();
    for (const auto& cj : j.at("caches")) {
      p.caches.push_back({WholeNumber<int>(cj.at("level")), cj.at("type").get<std::string>(),
                          WholeNumber<uint64_t>(cj.at("size_bytes")),
                          WholeNumber<int>(cj.at("ways")), WholeNumber<int>(cj.at("line_bytes")),
                          WholeNumber<int>(cj.at("shared_by_cpus"))});
    }
    for (const auto& cj : j.at("ceilings")) {
      Ceiling c;
      c.kind = cj.at("kind") == "compute" ? Ceiling::Kind::kCompute : Ceiling::Kind::kBandwidth;
      c.threads = WholeNumber<int>(cj.at("threads"));
      c.per_second = cj.at("per_second").get<double>();
      c.source = cj.at("source").get<std::string>();
      c.note = cj.value("note", "");
      if (cj.contains("reader")) {
        c.reader = Reader::Parse(cj.at("reader").get<std::string>());
        if (!c.reader) return absl::InvalidArgumentError("a ceiling's reader is not a reader");
      }
      if (c.kind == Ceiling::Kind::kCompute) {
        absl::StatusOr<Dtype> dtype = ParseDtype(cj.at("dtype").get<std::string>());
        if (!dtype.ok()) return dtype.status();
        c.dtype = *dtype;
      } else {
        const std::string level = cj.at("level").get<std::string>();
        bool found = false;
        for (int i = 0; i < kNumMemoryLevels; ++i) {
          if (ToString(MemoryLevel(i)) == level) c.level = MemoryLevel(i), found = true;
        }
        if (!found) return absl::InvalidArgumentError("profile: unknown memory level " + level);
      }
      p.ceilings.push_back(c);
    }
    for (const auto& mj : j.value("measured_levels", nlohmann::json::array())) {
      absl::StatusOr<LevelKind> kind = ParseLevelKind(mj.at("kind").get<std::string>());
      if (!kind.ok())
        return absl::InvalidArgumentError(absl::StrCat("profile: ", kind.status().message()));
      p.measured_levels.push_back(
          {mj.at("size_bytes").get<double>(), mj.at("low_bytes").get<double>(),
           mj.at("high_bytes").get<double>(), mj.at("latency_ns").get<double>(), *kind});
    }
    auto curve = [&](const char* key) {
      std::vector<CurvePoint> points;
      for (const auto& pj : j.value(key, nlohmann::json::array())) {
        points.push_back({pj.at(0).get<double>(), pj.at(1).get<double>()});
      }
      return points;
    };
    p.latency_curve = curve("latency_curve_ns");
    p.latency_curve_huge = curve("latency_curve_huge_pages_ns");
    p.read_bandwidth_curve = curve("read_bandwidth_curve_gbs");
    p.memory_latency_ns = j.value("memory_latency_ns", 0.0);
    p.clock_ghz = j.value("clock_ghz", 0.0);
    p.fma_latency_cycles = j.value("fma_latency_cycles", 0.0);
    p.steal_share = j.value("steal_share", 0.0);
    for (const auto& cj : j.value("parallel_call_overhead_seconds", nlohmann::json::array())) {
      const ParallelCall c{WholeNumber<int>(cj.at(0)), cj.at(1).get<double>()};
      if (c.threads < 2 || !(c.overhead_seconds >= 0)) {
        return absl::InvalidArgumentError("profile: a parallel call's overhead out of range");
      }
      p.parallel_calls.push_back(c);
    }
    p.level_probes = j.contains("level_probes") ? WholeNumber<int>(j.at("level_probes")) : 0;
    for (const auto& cj : j.value("level_consensus", nlohmann::json::array())) {
      LevelConsensus c{cj.at("seen_bytes").get<std::vector<double>>(),
                       cj.at("seen_latency_ns").get<std::vector<double>>()};
      if (c.seen_bytes.empty() || c.seen_bytes.size() != c.seen_latency_ns.size()) {
        return absl::InvalidArgumentError("profile: a level consensus without its findings");
      }
      p.level_consensus.push_back(std::move(c));
    }
    return p;
  } catch (const nlohmann::json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("malformed machine profile: ", e.what()));
  } catch (const std::out_of_range& e) {
    return absl::InvalidArgumentError(absl::StrCat("malformed machine profile: ", e.what()));
  }
}

}  // namespace rooftune
