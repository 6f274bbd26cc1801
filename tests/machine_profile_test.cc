// The machine profile: cache steps planned as levels, ceilings kept across probes, the JSON form
// and the fingerprint.
#include "framework/machine_profile.h"

#include <gtest/gtest.h>

#include <functional>

#include "absl/strings/str_join.h"
#include "framework/reader.h"
#include "framework/roofline.h"
#include "tests/round_machine.h"

namespace rooftune {
namespace {

using fixtures::RoundMachine;  // L1 32 KiB, L2 1 MiB, L3 32 MiB; 100 GB/s L2, 10 GB/s DRAM

// The round machine with no caches the OS reports, memory at `memory_ns` and the latency curve's
// `steps`: what planning makes of a curve alone.
MachineProfile MachineWithSteps(double memory_ns, std::vector<MeasuredLevel> steps) {
  MachineProfile p = RoundMachine();
  p.caches.clear();
  p.memory_latency_ns = memory_ns;
  p.measured_levels = std::move(steps);
  return p;
}

TEST(MachineProfile, StepsLessThanAnOctaveApartAreOneCacheLevel) {
  MachineProfile p = RoundMachine();
  // The VM's caches as the OS reports them.
  p.caches = {{1, "Data", 48 << 10, 12, 64, 1},
              {2, "Unified", 2 << 20, 16, 64, 1},
              {3, "Unified", 480u << 20, 15, 64, 2}};
  // As measured on a VM: the 2 MiB L2 missed in two stages (1.3 and 1.8 MiB); a TLB step between.
  p.measured_levels = {
      {47 << 10, 47 << 10, 48 << 10, 1.2, LevelKind::kCache},
      {1.3 * (1 << 20), 1.3 * (1 << 20), 1.3 * (1 << 20), 4.7, LevelKind::kCache},
      {1.85 * (1 << 20), 1.7 * (1 << 20), 1.9 * (1 << 20), 17, LevelKind::kCache},
      {12 << 20, 10 << 20, 14 << 20, 44, LevelKind::kTlb},
      {15.5 * (1 << 20), 15.5 * (1 << 20), 16.5 * (1 << 20), 50, LevelKind::kCache}};
  EXPECT_EQ(p.EffectiveCacheBytes(1), uint64_t(47 << 10));
  EXPECT_EQ(p.EffectiveCacheBytes(2), uint64_t(1.3 * (1 << 20)));
  EXPECT_EQ(p.EffectiveCacheBytes(3), uint64_t(15.5 * (1 << 20)));
  // A 3-step run (1.3, 1.85, 3.5 MiB: each less than an octave past the last) is still one level.
  p.measured_levels.insert(p.measured_levels.begin() + 3, {3.5 * (1 << 20), 3.5 * (1 << 20),
                                                           3.5 * (1 << 20), 35, LevelKind::kCache});
  EXPECT_EQ(p.EffectiveCacheBytes(3), uint64_t(15.5 * (1 << 20)));
  // A step past which loads cost barely more (4.6 -> 5.2 ns) is no level: the L2 is the next one.
  p.measured_levels = {{47 << 10, 47 << 10, 47 << 10, 1.2, LevelKind::kCache},
                       {406 << 10, 406 << 10, 406 << 10, 4.6, LevelKind::kCache},
                       {1149 << 10, 1149 << 10, 1149 << 10, 5.2, LevelKind::kCache},
                       {1625 << 10, 1625 << 10, 1625 << 10, 10.5, LevelKind::kCache},
                       {10 << 20, 10 << 20, 10 << 20, 43.5, LevelKind::kCache}};
  EXPECT_EQ(p.EffectiveCacheBytes(2), uint64_t(1149 << 10));
  EXPECT_EQ(p.EffectiveCacheBytes(3), uint64_t(10 << 20));
  // Two steps inside one inner cache the OS reports are that cache, even an octave apart: a VM
  // whose 2 MiB L2 ended at 836 KiB and again at 1.7 MiB (a neighbour on the other hyperthread).
  // The last level's report (480 MiB) merges nothing.
  MachineProfile vm = p;
  vm.measured_levels = {
      {46 << 10, 46 << 10, 46 << 10, 1.3, LevelKind::kCache},
      {836 << 10, 812 << 10, 939 << 10, 4.8, LevelKind::kCache},
      {1.71 * (1 << 20), 1.71 * (1 << 20), 1.71 * (1 << 20), 14.9, LevelKind::kCache},
      {15.8 * (1 << 20), 15.8 * (1 << 20), 15.8 * (1 << 20), 45.8, LevelKind::kCache},
      {128 << 20, 110 << 20, 144 << 20, 184, LevelKind::kTlb}};
  EXPECT_EQ(vm.EffectiveCacheBytes(2), uint64_t(836 << 10));
  EXPECT_EQ(vm.EffectiveCacheBytes(3), uint64_t(15.8 * (1 << 20)));
  // A bound prices the L2 at its second stage: what the 1.7 MiB may hold is not charged to L3.
  EXPECT_EQ(vm.PricedCacheBytes(2), uint64_t(1.71 * (1 << 20)));
  EXPECT_EQ(vm.PricedCacheBytes(1), uint64_t(46 << 10));
  EXPECT_EQ(vm.PricedCacheBytes(3), uint64_t(15.8 * (1 << 20)));
  // Between calls the L2 may hold what the OS says it has (2 MiB, within an octave of the step);
  // the 480 MiB the OS reports for L3 is the host's, twenty times the guest's step: not raised.
  EXPECT_EQ(vm.HeldCacheBytes(2), uint64_t(2 << 20));
  EXPECT_EQ(vm.HeldCacheBytes(3), uint64_t(15.8 * (1 << 20)));
  EXPECT_EQ(vm.NearestCacheHolding(1.5 * (1 << 20)), 2);
  EXPECT_EQ(vm.NearestCacheHolding(1.9 * (1 << 20)), 2);
  EXPECT_EQ(vm.NearestCacheHolding(2.1 * (1 << 20)), 3);
  EXPECT_FALSE(vm.NearestCacheHolding(16 << 20).has_value());
  // Levels an octave or more apart stay apart; past the measured ones there is no level.
  p.measured_levels = {{32 << 10, 32 << 10, 32 << 10, 1, LevelKind::kCache},
                       {64 << 10, 64 << 10, 64 << 10, 3, LevelKind::kCache}};
  EXPECT_EQ(p.EffectiveCacheBytes(2), uint64_t(64 << 10));
  EXPECT_FALSE(p.EffectiveCacheBytes(3).has_value());
}

// A soft step is judged by what loads past it cost on the curve, not by the fit's latency past it
// (its asymptote, which the next step cuts off): an Intel guest's 2 MiB L2 showed a step at
// 470 KiB, loads past it at 5.3-5.5 ns against 4.6 before it, and the fit put them at 7.4 ns.
TEST(MachineProfile, ASoftStepIsJudgedByTheCurvePastItNotByTheFit) {
  const double KiB = 1024, MiB = 1 << 20;
  MachineProfile p = RoundMachine();
  p.caches = {{1, "Data", 48 << 10, 12, 64, 1},
              {2, "Unified", 2 << 20, 16, 64, 1},
              {3, "Unified", 480u << 20, 16, 64, 2}};
  p.memory_latency_ns = 244;
  p.measured_levels = {{47 * KiB, 47 * KiB, 47 * KiB, 1.3, LevelKind::kCache},
                       {470 * KiB, 373 * KiB, 592 * KiB, 4.6, LevelKind::kCache},
                       {1.5 * MiB, 1.4 * MiB, 1.5 * MiB, 7.4, LevelKind::kCache},
                       {13.1 * MiB, 13.1 * MiB, 13.1 * MiB, 55, LevelKind::kCache}};
  // Without a curve, the fit's 7.4 ns is all there is: two steps inside the reported L2, planned
  // from the first.
  EXPECT_EQ(p.EffectiveCacheBytes(2), uint64_t(470 * KiB));
  p.latency_curve = {{32 * KiB, 1.34},  {55 * KiB, 4.41},  {131 * KiB, 4.58}, {371 * KiB, 4.59},
                     {441 * KiB, 4.79}, {623 * KiB, 5.25}, {741 * KiB, 5.44}, {882 * KiB, 5.51},
                     {1 * MiB, 5.67},   {1.25 * MiB, 6.6}, {1.6 * MiB, 9.5},  {2 * MiB, 19},
                     {4 * MiB, 39},     {8 * MiB, 44.9},   {16 * MiB, 59.3},  {32 * MiB, 179}};
  const std::vector<MachineProfile::PlannedStep> planned = p.PlannedSteps();
  ASSERT_EQ(planned.size(), 4u);
  EXPECT_EQ(planned[1].role, MachineProfile::PlannedStep::Role::kBarelyDearer);
  EXPECT_DOUBLE_EQ(planned[1].past_ns, 5.44);  // 623, 741 and 882 KiB: the nearer half
  EXPECT_EQ(p.EffectiveCacheBytes(2), uint64_t(1.5 * MiB));
  EXPECT_EQ(p.EffectiveCacheBytes(3), uint64_t(13.1 * MiB));
  // Loads past it a quarter dearer or more: a level after all.
  for (CurvePoint& point : p.latency_curve) {
    if (point.bytes > 592 * KiB && point.bytes < 1.4 * MiB) point.value *= 1.1;
  }
  EXPECT_EQ(p.PlannedSteps()[1].role, MachineProfile::PlannedStep::Role::kLevel);
  EXPECT_EQ(p.EffectiveCacheBytes(2), uint64_t(470 * KiB));
}

// A step whose hit already costs half of a memory access, with little more past it, lies within
// memory: an AMD EPYC guest's curve, whose 13.1 MiB last-cache share was followed by steps at
// 47.9 MiB (164 ns) and 87.9 MiB (206 ns, a TLB's), memory at 252 ns, and no caches in sysfs.
TEST(MachineProfile, AStepWithinMemoryIsNoCacheLevel) {
  MachineProfile p = RoundMachine();
  p.caches.clear();
  p.memory_latency_ns = 252.4;
  auto level = [](double mib, double ns, LevelKind kind) {
    return MeasuredLevel{mib * (1 << 20), mib * (1 << 20), mib * (1 << 20), ns, kind};
  };
  p.measured_levels = {level(0.043, 1.2, LevelKind::kCache),
                       level(0.515, 4.1, LevelKind::kCache),
                       level(6.5, 19.7, LevelKind::kTlb),
                       level(13.1, 21.3, LevelKind::kCacheOnHugePages),
                       level(47.9, 163.7, LevelKind::kCacheOnHugePages),
                       level(87.9, 206.1, LevelKind::kTlb)};
  EXPECT_EQ(p.EffectiveCacheBytes(3), uint64_t(13.1 * (1 << 20)));
  EXPECT_FALSE(p.EffectiveCacheBytes(4).has_value());
  EXPECT_EQ(p.LargestEffectiveCacheBytes(), uint64_t(13.1 * (1 << 20)));
  // The last step is judged against memory itself: 164 ns before 180 is within memory too.
  p.measured_levels.pop_back();
  p.memory_latency_ns = 180;
  EXPECT_EQ(p.LargestEffectiveCacheBytes(), uint64_t(13.1 * (1 << 20)));
  // A level that saves much stays one, even at half of memory's latency: an eDRAM-like 128 MiB
  // L4 at 42 ns before memory at 80.
  p.memory_latency_ns = 80;
  p.measured_levels = {level(0.043, 1.2, LevelKind::kCache), level(0.515, 4.1, LevelKind::kCache),
                       level(8, 12, LevelKind::kCache), level(128, 42, LevelKind::kCache)};
  EXPECT_EQ(p.EffectiveCacheBytes(4), uint64_t(128) << 20);
  // The traffic models know three cache levels: a bound prices the third as holding what the
  // fourth holds, so a warm 64 MiB working set is charged to L3, not to DRAM.
  EXPECT_EQ(p.EffectiveCacheBytes(3), uint64_t(8) << 20);
  EXPECT_EQ(p.PricedCacheBytes(3), uint64_t(128) << 20);
  EXPECT_EQ(p.NearestCacheHolding(64.0 * (1 << 20)), 3);
  const Workload gemv{Op::kGemv, 1, 4096, 4096, Dtype::kF32, Epilogue::kNone};
  Traffic cold;
  cold.bytes = {gemv.CompulsoryBytes(), gemv.CompulsoryBytes(), gemv.CompulsoryBytes(),
                gemv.CompulsoryBytes()};
  const Traffic warm = WarmTraffic(cold, gemv, p);
  EXPECT_EQ(warm[MemoryLevel::kDram], 0);
  EXPECT_EQ(warm[MemoryLevel::kL3], gemv.CompulsoryBytes());
}

// On memory's ramp, loads past a slow step are read off the curve, not the fit's memory latency:
// a Zen 5 guest's step at 60 MiB (193.286 ns a hit) was planned as a fourth level because 1.5x
// its hit, 289.929 ns, fell short of the fit's memory latency by 0.001 ns, though the curve past
// it stayed under 250; the int8 GEMVs whose weights it "held" were then timed warm.
TEST(MachineProfile, AStepOnMemorysRampIsJudgedByTheCurvePastIt) {
  const double MiB = 1 << 20;
  MachineProfile p =
      MachineWithSteps(289.930, {{0.047 * MiB, 0.047 * MiB, 0.047 * MiB, 1.1, LevelKind::kCache},
                                 {1 * MiB, 0.9 * MiB, 1.1 * MiB, 3.5, LevelKind::kCache},
                                 {16 * MiB, 15 * MiB, 17 * MiB, 40, LevelKind::kCache},
                                 {60 * MiB, 50 * MiB, 70 * MiB, 193.286, LevelKind::kCache}});
  EXPECT_EQ(p.EffectiveCacheBytes(4), uint64_t(60 * MiB));  // the fit alone: a fourth level
  p.latency_curve = {{8 * MiB, 38},    {16 * MiB, 45},   {24 * MiB, 150},  {48 * MiB, 180},
                     {56 * MiB, 190},  {80 * MiB, 210},  {96 * MiB, 215},  {128 * MiB, 225},
                     {192 * MiB, 240}, {256 * MiB, 250}, {512 * MiB, 270}, {1024 * MiB, 285}};
  EXPECT_EQ(p.PlannedSteps().back().role, MachineProfile::PlannedStep::Role::kWithinMemory);
  EXPECT_FALSE(p.EffectiveCacheBytes(4).has_value());
  EXPECT_EQ(p.LargestEffectiveCacheBytes(), uint64_t(16 * MiB));
  // A cache that saves much keeps its place on the same terms: past a sharp end the curve climbs
  // to memory at once.
  for (CurvePoint& point : p.latency_curve) {
    if (point.bytes > 70 * MiB) point.value = std::max(point.value, 295.0);
  }
  EXPECT_EQ(p.EffectiveCacheBytes(4), uint64_t(60 * MiB));
}

// A step at half of memory's latency or more that the fit cannot place within half an octave is
// a ramp within memory, even with memory at twice its latency: a Zen 5 guest's huge-page curve
// put one at 71.8 MiB (47.9-95.9 MiB) with a hit at 156 ns and memory at 305. Pinned to its
// place, the same step is a cache that saves much (an eDRAM-like L4).
TEST(MachineProfile, ASlowStepTheFitCannotPlaceIsWithinMemory) {
  const double MiB = 1 << 20;
  MachineProfile p = MachineWithSteps(
      305, {{0.045 * MiB, 0.045 * MiB, 0.045 * MiB, 1.1, LevelKind::kCache},
            {0.65 * MiB, 0.63 * MiB, 0.67 * MiB, 4.0, LevelKind::kCacheSetsUneven},
            {4.6 * MiB, 4.4 * MiB, 4.8 * MiB, 17.4, LevelKind::kCacheSetsUneven},
            {71.8 * MiB, 47.9 * MiB, 95.9 * MiB, 155.7, LevelKind::kCacheSetsUneven}});
  EXPECT_EQ(p.LargestEffectiveCacheBytes(), uint64_t(4.6 * MiB));
  EXPECT_FALSE(p.EffectiveCacheBytes(4).has_value());
  EXPECT_EQ(p.PlannedSteps().back().role, MachineProfile::PlannedStep::Role::kWithinMemory);
  p.measured_levels.back().low_bytes = 66 * MiB;
  p.measured_levels.back().high_bytes = 78 * MiB;
  EXPECT_EQ(p.EffectiveCacheBytes(4), uint64_t(71.8 * MiB));
}

// The largest cache to plan with is the measured one where the curve found it (a VM's 480 MiB
// "L3" that loads never meet is not planned with); the reported one stays on record beside it.
TEST(MachineProfile, LargestCacheMeasuredAndReported) {
  MachineProfile p = RoundMachine();
  EXPECT_EQ(p.LargestEffectiveCacheBytes(), uint64_t(32 << 20));  // nothing measured: the OS's
  EXPECT_EQ(p.LargestReportedCacheBytes(), uint64_t(32 << 20));
  p.measured_levels = {{47 << 10, 47 << 10, 48 << 10, 1.2, LevelKind::kCache},
                       {1.3 * (1 << 20), 1.3 * (1 << 20), 1.3 * (1 << 20), 4.7, LevelKind::kCache},
                       {10 << 20, 10 << 20, 11 << 20, 44, LevelKind::kCache}};
  p.caches[2].size_bytes = uint64_t(480) << 20;
  EXPECT_EQ(p.LargestEffectiveCacheBytes(), uint64_t(10 << 20));
  EXPECT_EQ(p.LargestReportedCacheBytes(), uint64_t(480) << 20);
  EXPECT_EQ(MachineProfile().LargestEffectiveCacheBytes(), 0u);
  EXPECT_EQ(MachineProfile().LargestReportedCacheBytes(), 0u);
}

// A re-probe reports the ceilings that moved, matched by kind, dtype or level, threads and source.
TEST(MachineProfile, CeilingChangesNameWhatMovedAndByHowMuch) {
  const MachineProfile before = RoundMachine();
  MachineProfile after = before;
  after.ceilings[2].per_second = 10.5e9;   // DRAM read, 1 thread: +5%
  after.ceilings[0].per_second = 100.5e9;  // f32 compute: +0.5%, under the threshold
  after.ceilings.push_back(
      {Ceiling::Kind::kBandwidth, Dtype::kF32, MemoryLevel::kDram, 2, 18e9, "read"});
  const std::vector<std::string> moved = CeilingChanges(before, after, 0.02);
  ASSERT_EQ(moved.size(), 1u);
  EXPECT_EQ(moved[0], "DRAM bandwidth, 1 thread (read): 10.0 GB/s -> 10.5 GB/s (+5.0%)");
  EXPECT_EQ(CeilingChanges(before, after, 0.001).size(), 2u);
  EXPECT_TRUE(CeilingChanges(before, before, 0.001).empty());
  after.ceilings[2].source = "triad";  // another kind: not the same ceiling
  EXPECT_TRUE(CeilingChanges(before, after, 0.02).empty());
}

// A compute or DRAM ceiling is the best any probe measured: a lower re-measurement keeps the stored
// rate and says what it measured; a higher one replaces it; cache levels' ceilings stay as
// measured.
TEST(MachineProfile, KeepHigherCeilingsKeepsTheStoredRateWhereAProbeMeasuresLower) {
  MachineProfile stored = RoundMachine();
  stored.ceilings[2].note = "fastest reader streams:2";  // DRAM read, 1 thread: 10 GB/s
  MachineProfile fresh = RoundMachine();
  fresh.ceilings[2].per_second = 9e9;    // slower phase
  fresh.ceilings[0].per_second = 110e9;  // f32 compute: faster
  fresh.ceilings[3].per_second = 50e9;   // L2 read: a cache level's, left as measured
  EXPECT_EQ(KeepHigherCeilings(stored, fresh), 1);
  EXPECT_DOUBLE_EQ(fresh.ceilings[2].per_second, 10e9);
  EXPECT_EQ(fresh.ceilings[2].note,
            "fastest reader streams:2; kept over the latest probe's 9.0 GB/s");
  EXPECT_DOUBLE_EQ(fresh.ceilings[0].per_second, 110e9);
  EXPECT_TRUE(fresh.ceilings[0].note.empty());
  EXPECT_DOUBLE_EQ(fresh.ceilings[3].per_second, 50e9);

  // Kept again by the next probe: the note names only the latest probe's figure.
  MachineProfile next = RoundMachine();
  next.ceilings[2].per_second = 8e9;
  EXPECT_EQ(KeepHigherCeilings(fresh, next), 2);  // and the faster f32 compute of the last one
  EXPECT_DOUBLE_EQ(next.ceilings[0].per_second, 110e9);
  EXPECT_EQ(next.ceilings[2].note,
            "fastest reader streams:2; kept over the latest probe's 8.0 GB/s");
  MachineProfile bare = RoundMachine();  // a stored ceiling without a note
  bare.ceilings[2].per_second = 7e9;
  EXPECT_EQ(KeepHigherCeilings(RoundMachine(), bare), 1);
  EXPECT_EQ(bare.ceilings[2].note, "kept over the latest probe's 7.0 GB/s");
}

// A reader's name and its parse are each other's inverse over every reader the probe times;
// anything else is no reader.
TEST(Reader, NameAndParseAreInverses) {
  for (const Reader& r :
       {Reader{1, false, false}, Reader{8, false, false}, Reader{2, true, false},
        Reader{2, false, true}, Reader{4, true, true}, Reader{1, false, true, true},
        Reader{2, false, false, false, true}, Reader{1, false, true, true, true}}) {
    const std::optional<Reader> back = Reader::Parse(r.Name());
    ASSERT_TRUE(back.has_value()) << r.Name();
    EXPECT_EQ(back->Name(), r.Name());
    EXPECT_EQ(back->streams, r.streams);
    EXPECT_EQ(back->sums_in_memory, r.sums_in_memory);
    EXPECT_EQ(back->prefetch, r.prefetch);
    EXPECT_EQ(back->prefetch_into_l2, r.prefetch_into_l2);
    EXPECT_EQ(back->dot, r.dot);
  }
  EXPECT_EQ((Reader{1, false, true, true}).Name(), "streams:1/prefetch_l2");
  EXPECT_EQ((Reader{1, false, true, true, true}).Name(), "streams:1/dot/prefetch_l2");
  for (const char* bad :
       {"", "streams:", "streams:0", "streams:x", "stream:2", "streams:2/",
        "streams:2/prefetch/prefetch", "streams:2/prefetch/prefetch_l2", "streams:2/prefetch/dot",
        "streams:2/dot/sums_in_memory", "streams:2/fast", "fastest reader"}) {
    EXPECT_FALSE(Reader::Parse(bad).has_value()) << bad;
  }
}

// A read ceiling keeps the reader that set it across the database; a profile stored before
// readers were recorded has none, and a reader that is not one is refused.
TEST(MachineProfile, ReadCeilingsKeepTheirReader) {
  MachineProfile p = RoundMachine();
  p.ceilings[2].reader = Reader{4, false, true};
  absl::StatusOr<MachineProfile> back = MachineProfile::FromJson(p.ToJson());
  ASSERT_TRUE(back.ok()) << back.status();
  ASSERT_TRUE(back->ceilings[2].reader.has_value());
  EXPECT_EQ(back->ceilings[2].reader->Name(), "streams:4/prefetch");
  EXPECT_FALSE(back->ceilings[0].reader.has_value());
  nlohmann::json bad = p.ToJson();
  bad["ceilings"][2]["reader"] = "streams:four";
  EXPECT_FALSE(MachineProfile::FromJson(bad).ok());
}

TEST(MachineProfile, JsonRoundTripKeepsTheFingerprint) {
  MachineProfile p = RoundMachine();
  p.cpu_model = "Test CPU";
  p.isa = {"avx2", "fma"};
  p.cpu_nodes = {0, 0, 1, 1};
  absl::StatusOr<MachineProfile> back = MachineProfile::FromJson(p.ToJson());
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->Fingerprint(), p.Fingerprint());
  EXPECT_EQ(back->ceilings.size(), p.ceilings.size());
  EXPECT_EQ(back->cpu_nodes, p.cpu_nodes);
  // A profile stored before the NUMA facts were read: one node.
  nlohmann::json old = p.ToJson();
  old.erase("cpu_nodes");
  ASSERT_TRUE(MachineProfile::FromJson(old).ok());
  EXPECT_EQ(MachineProfile::FromJson(old)->NumaNodesSpanned(4), 1);
  p.caches[1].size_bytes *= 2;
  EXPECT_NE(back->Fingerprint(), p.Fingerprint());
  EXPECT_FALSE(MachineProfile::FromJson(nlohmann::json::parse(R"({"cpu_model": 3})")).ok());
  // Counts that are not whole numbers an int holds are refused, not cast (found by fuzzing: a
  // float beyond int's range was undefined behaviour).
  for (const nlohmann::json& cpus : {nlohmann::json(6.8e10), nlohmann::json(2.5),
                                     nlohmann::json(int64_t{1} << 40), nlohmann::json(-1.0)}) {
    nlohmann::json damaged = p.ToJson();
    damaged["logical_cpus"] = cpus;
    absl::StatusOr<MachineProfile> read = MachineProfile::FromJson(damaged);
    ASSERT_FALSE(read.ok()) << cpus.dump();
    EXPECT_NE(read.status().message().find("malformed machine profile"), std::string::npos);
  }
  nlohmann::json negative_size = p.ToJson();
  negative_size["caches"][0]["size_bytes"] = -1;
  EXPECT_FALSE(MachineProfile::FromJson(negative_size).ok());
}

// A split call's overhead by thread count: the count asked for, else the nearest measured above
// it (more threads cost no less to wake), else below it; none measured, 0. It survives the JSON,
// and an entry of fewer than two threads or a negative overhead is refused.
TEST(MachineProfile, ParallelCallOverheadAtTheNearestCountMeasured) {
  MachineProfile p = RoundMachine();
  EXPECT_EQ(p.ParallelCallOverheadSeconds(2), 0);
  p.parallel_calls = {{2, 3e-6}, {8, 9e-6}};
  EXPECT_EQ(p.ParallelCallOverheadSeconds(2), 3e-6);
  EXPECT_EQ(p.ParallelCallOverheadSeconds(4), 9e-6);
  EXPECT_EQ(p.ParallelCallOverheadSeconds(64), 9e-6);
  absl::StatusOr<MachineProfile> back = MachineProfile::FromJson(p.ToJson());
  ASSERT_TRUE(back.ok()) << back.status();
  ASSERT_EQ(back->parallel_calls.size(), 2u);
  EXPECT_EQ(back->parallel_calls[1].threads, 8);
  EXPECT_EQ(back->ParallelCallOverheadSeconds(3), 9e-6);
  for (const char* bad : {R"([1, 3e-6])", R"([2, -1e-6])", R"([2.5, 1e-6])"}) {
    nlohmann::json damaged = p.ToJson();
    damaged["parallel_call_overhead_seconds"] = nlohmann::json::array({nlohmann::json::parse(bad)});
    EXPECT_FALSE(MachineProfile::FromJson(damaged).ok()) << bad;
  }
  nlohmann::json old = p.ToJson();  // a profile stored before the overhead was measured
  old.erase("parallel_call_overhead_seconds");
  ASSERT_TRUE(MachineProfile::FromJson(old).ok());
  EXPECT_TRUE(MachineProfile::FromJson(old)->parallel_calls.empty());
}

// The multiply-add units' datapath: the best target's vector, halved for AVX-512 on Zen 4 (AMD
// family 25), which runs a zmm instruction in two 256-bit halves; the family survives the JSON.
TEST(MachineProfile, VectorDatapathIsTheTargetsVectorUnlessTheCpuSplitsIt) {
  MachineProfile p = RoundMachine();
  p.hwy_targets = {"AVX3_DL", "AVX3", "AVX2"};
  p.vendor = "AuthenticAMD";
  p.cpu_family = 26;  // Zen 5: full-width units
  EXPECT_EQ(p.VectorDatapathBytes(), 64);
  p.cpu_family = 25;  // Zen 4
  EXPECT_EQ(p.VectorDatapathBytes(), 32);
  EXPECT_EQ(MachineProfile::FromJson(p.ToJson())->cpu_family, 25);
  p.hwy_targets = {"AVX2", "SSE4"};  // Zen 3, same family: its widest vector is the datapath
  EXPECT_EQ(p.VectorDatapathBytes(), 32);
  p.hwy_targets = {"AVX3_DL"};
  p.vendor = "GenuineIntel";
  p.cpu_family = 6;
  EXPECT_EQ(p.VectorDatapathBytes(), 64);
  p.hwy_targets.clear();
  EXPECT_EQ(p.VectorDatapathBytes(), 0);
  nlohmann::json old = p.ToJson();
  old.erase("cpu_family");  // stored before the family was read
  EXPECT_EQ(MachineProfile::FromJson(old)->cpu_family, 0);
}

// A measured level's kind is an enum in the profile and its text only in the JSON; an unknown
// kind is refused, naming it.
TEST(MachineProfile, LevelKindsRoundTripThroughJsonAndAnUnknownOneIsRefused) {
  MachineProfile p = RoundMachine();
  for (LevelKind kind : {LevelKind::kCache, LevelKind::kTlb, LevelKind::kCacheOnHugePages,
                         LevelKind::kCacheSetsUneven}) {
    p.measured_levels.push_back({double(p.measured_levels.size() + 1) * (1 << 20), 0, 0, 5, kind});
  }
  absl::StatusOr<MachineProfile> back = MachineProfile::FromJson(p.ToJson());
  ASSERT_TRUE(back.ok()) << back.status();
  ASSERT_EQ(back->measured_levels.size(), p.measured_levels.size());
  for (size_t i = 0; i < p.measured_levels.size(); ++i) {
    EXPECT_EQ(back->measured_levels[i].kind, p.measured_levels[i].kind) << i;
  }
  EXPECT_EQ(p.ToJson()["measured_levels"].back()["kind"], "cache-sets");
  nlohmann::json unknown = p.ToJson();
  unknown["measured_levels"][0]["kind"] = "cache?";
  absl::StatusOr<MachineProfile> refused = MachineProfile::FromJson(unknown);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("unknown level kind 'cache?'"), std::string::npos)
      << refused.status();
}

// Provenance (version, OS release, THP, the process's CPU count) does not key results; what
// makes them transfer between machines of one type does.
TEST(MachineProfile, FingerprintIsTheMachineIdentityNotItsProvenance) {
  MachineProfile p = RoundMachine();
  p.cpu_model = "Test CPU";
  p.isa = {"avx2", "fma"};
  p.physical_cores = 4;
  const std::string identity = p.Fingerprint();
  MachineProfile moved = p;
  moved.rooftune_version = "9.9.9";
  moved.os_kernel = "7.0.0-other";
  moved.transparent_hugepages = "never";
  moved.logical_cpus = 1;
  EXPECT_EQ(moved.Fingerprint(), identity);
  for (auto change : std::vector<std::function<void(MachineProfile&)>>{
           [](MachineProfile& m) { m.cpu_model = "Other CPU"; },
           [](MachineProfile& m) { m.vendor = "OtherVendor"; },
           [](MachineProfile& m) { m.isa.push_back("avx512f"); },
           [](MachineProfile& m) { m.physical_cores = 8; },
           [](MachineProfile& m) { m.caches[0].ways = 12; }}) {
    MachineProfile other = p;
    change(other);
    EXPECT_NE(other.Fingerprint(), identity);
  }
}

}  // namespace
}  // namespace rooftune
