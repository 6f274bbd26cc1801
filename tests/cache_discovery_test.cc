// The cache-discovery algorithm on synthetic latency curves whose answer is known: several
// hierarchies, non-power-of-two sizes, soft knees, noise and outliers, a TLB step.
#include "probes/cache_discovery.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace rooftune::probes {
namespace {

struct TrueLevel {
  double bytes;
  double penalty_ns;  // latency added once this level is outgrown
  double sharpness;
};

constexpr double kKiB = 1024, kMiB = 1024 * 1024;

// 4 points per octave from 4 KiB to 256 MiB, multiplicative noise of `noise` (relative sigma).
std::vector<LatencyPoint> Curve(double l1_ns, const std::vector<TrueLevel>& levels, double noise,
                                uint64_t seed = 1) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> gauss(0.0, noise);
  std::vector<LatencyPoint> curve;
  for (double s = 4 * kKiB; s <= 256 * kMiB; s *= std::pow(2.0, 0.25)) {
    double ns = l1_ns;
    for (const TrueLevel& l : levels) {
      if (s > l.bytes) ns += l.penalty_ns * (1 - std::pow(l.bytes / s, l.sharpness));
    }
    curve.push_back({s, ns * (1 + (noise > 0 ? gauss(rng) : 0))});
  }
  return curve;
}

// Within a quarter octave, the tolerance the issue sets.
void ExpectSize(const MeasuredLevel& level, double bytes) {
  EXPECT_LE(std::abs(std::log2(level.size_bytes / bytes)), 0.25)
      << "measured " << level.size_bytes / kKiB << " KiB, true " << bytes / kKiB << " KiB";
  EXPECT_LE(level.low_bytes, level.size_bytes);
  EXPECT_GE(level.high_bytes, level.size_bytes);
}

TEST(CacheDiscovery, ThreeLevelsWithNoise) {
  const auto curve = Curve(1.3, {{32 * kKiB, 3, 4}, {512 * kKiB, 12, 4}, {16 * kMiB, 80, 2}}, 0.02);
  const CacheDiscovery d = DiscoverCacheLevels(curve);
  ASSERT_EQ(d.levels.size(), 3u);
  ExpectSize(d.levels[0], 32 * kKiB);
  ExpectSize(d.levels[1], 512 * kKiB);
  ExpectSize(d.levels[2], 16 * kMiB);
  EXPECT_NEAR(d.levels[0].latency_ns, 1.3, 0.1);
  EXPECT_NEAR(d.levels[1].latency_ns, 4.3, 0.4);
  EXPECT_NEAR(d.memory_latency_ns, 96.3, 8);
}

TEST(CacheDiscovery, NonPowerOfTwoSizesAreNotSnapped) {
  const auto curve =
      Curve(1.2, {{48 * kKiB, 4, 4}, {1.25 * kMiB, 10, 4}, {12 * kMiB, 60, 4}}, 0.01);
  const CacheDiscovery d = DiscoverCacheLevels(curve);
  ASSERT_EQ(d.levels.size(), 3u);
  ExpectSize(d.levels[0], 48 * kKiB);
  // 1.25 MiB sits a third of an octave from both 1 and 2 MiB: snapping would fail this.
  EXPECT_LE(std::abs(std::log2(d.levels[1].size_bytes / (1.25 * kMiB))), 0.1);
  ExpectSize(d.levels[2], 12 * kMiB);
}

TEST(CacheDiscovery, FourLevels) {
  const auto curve = Curve(
      1.0, {{32 * kKiB, 3, 4}, {1 * kMiB, 8, 4}, {8 * kMiB, 20, 4}, {64 * kMiB, 60, 4}}, 0.01);
  const CacheDiscovery d = DiscoverCacheLevels(curve);
  ASSERT_EQ(d.levels.size(), 4u);
  ExpectSize(d.levels[0], 32 * kKiB);
  ExpectSize(d.levels[1], 1 * kMiB);
  ExpectSize(d.levels[2], 8 * kMiB);
  ExpectSize(d.levels[3], 64 * kMiB);
}

TEST(CacheDiscovery, SoftKneeOfAVictimL3BlurringIntoL2) {
  // A random-replacement L2 (sharpness 1) and a victim L3 that adds little latency.
  const auto curve = Curve(1.4, {{32 * kKiB, 3, 4}, {512 * kKiB, 8, 1}, {4 * kMiB, 25, 2}}, 0.01);
  const CacheDiscovery d = DiscoverCacheLevels(curve);
  ASSERT_EQ(d.levels.size(), 3u);
  ExpectSize(d.levels[1], 512 * kKiB);
  ExpectSize(d.levels[2], 4 * kMiB);
  EXPECT_EQ(d.levels[1].sharpness, 1);
}

TEST(CacheDiscovery, OutliersAreDroppedNotFitted) {
  auto curve = Curve(1.3, {{32 * kKiB, 3, 4}, {512 * kKiB, 12, 4}, {16 * kMiB, 80, 4}}, 0.02, 7);
  curve[30].ns *= 0.4;  // a lucky point in the middle of a plateau
  curve[50].ns *= 2.5;  // a disturbed one
  const CacheDiscovery d = DiscoverCacheLevels(curve);
  EXPECT_GE(d.dropped_points, 2);
  ASSERT_EQ(d.levels.size(), 3u);
  ExpectSize(d.levels[1], 512 * kKiB);
}

TEST(CacheDiscovery, ATlbStepIsLabelledByTheHugePageCurve) {
  // 4 KiB pages: a 64-entry TLB (256 KiB reach) adds a small step of its own.
  const auto small_pages = Curve(
      1.3, {{32 * kKiB, 3, 4}, {256 * kKiB, 2, 4}, {1 * kMiB, 10, 4}, {16 * kMiB, 80, 4}}, 0.005);
  const auto huge_pages =
      Curve(1.3, {{32 * kKiB, 3, 4}, {1 * kMiB, 10, 4}, {16 * kMiB, 80, 4}}, 0.005, 2);
  CacheDiscovery d = DiscoverCacheLevels(small_pages);
  const CacheDiscovery h = DiscoverCacheLevels(huge_pages);
  ASSERT_EQ(d.levels.size(), 4u);
  ASSERT_EQ(h.levels.size(), 3u);
  LabelTlbSteps(d, h);
  EXPECT_EQ(d.levels[0].kind, LevelKind::kCache);
  EXPECT_EQ(d.levels[1].kind, LevelKind::kTlb);
  ExpectSize(d.levels[1], 256 * kKiB);
  EXPECT_EQ(d.levels[2].kind, LevelKind::kCache);
  EXPECT_EQ(d.levels[3].kind, LevelKind::kCache);
}

// On 4 KiB pages a TLB's reach and the last cache's end blur into one step near the TLB's, which
// huge pages move: the TLB step stays labelled, and the cache comes back from the huge-page curve.
// The TLB may reach less than the cache (an 8 MiB reach, a 20 MiB cache) or more (an AMD EPYC
// guest: a 16 MiB reach outlasting an 11 MiB share of the last cache).
TEST(CacheDiscovery, ACacheHiddenByATlbStepComesFromTheHugePageCurve) {
  struct Case {
    double tlb_bytes, cache_bytes;
  };
  for (const Case c : {Case{8 * kMiB, 20 * kMiB}, Case{16 * kMiB, 11 * kMiB}}) {
    SCOPED_TRACE(c.tlb_bytes / kMiB);
    const auto small_pages =
        Curve(1.3, {{32 * kKiB, 3, 4}, {1 * kMiB, 10, 4}, {c.tlb_bytes, 80, 4}}, 0.005);
    const auto huge_pages =
        Curve(1.3, {{32 * kKiB, 3, 4}, {1 * kMiB, 10, 4}, {c.cache_bytes, 80, 4}}, 0.005, 2);
    CacheDiscovery d = DiscoverCacheLevels(small_pages);
    const CacheDiscovery h = DiscoverCacheLevels(huge_pages);
    ASSERT_EQ(d.levels.size(), 3u);
    LabelTlbSteps(d, h);
    ASSERT_EQ(d.levels.size(), 4u);
    EXPECT_EQ(d.levels[0].kind, LevelKind::kCache);
    EXPECT_EQ(d.levels[1].kind, LevelKind::kCache);
    // Levels come in size order: the TLB's step first when it reaches less.
    const bool tlb_first = c.tlb_bytes < c.cache_bytes;
    const MeasuredLevel& tlb = d.levels[tlb_first ? 2 : 3];
    const MeasuredLevel& cache = d.levels[tlb_first ? 3 : 2];
    EXPECT_EQ(tlb.kind, LevelKind::kTlb);
    ExpectSize(tlb, c.tlb_bytes);
    EXPECT_EQ(cache.kind, LevelKind::kCacheOnHugePages);
    ExpectSize(cache, c.cache_bytes);
  }
}

// The levels a profile plans from a discovery, as the probe stores them.
MachineProfile Planned(const CacheDiscovery& d) {
  MachineProfile p;
  for (const MeasuredLevel& l : d.levels) {
    p.measured_levels.push_back({l.size_bytes, l.low_bytes, l.high_bytes, l.latency_ns, l.kind});
  }
  p.memory_latency_ns = d.memory_latency_ns;
  return p;
}

// On 4 KiB pages a physically indexed 1 MiB L2 begins missing at about 640 KiB (randomly placed
// pages fill its sets unevenly; the fit may see it end in two stages); on huge pages at 1 MiB.
// The level is planned at the huge-page size. Where huge pages show the early step too, it is
// the cache's own and stays.
TEST(CacheDiscovery, ACacheEndedEarlyBySetConflictsIsPlannedAtItsHugePageSize) {
  const auto small_pages =
      Curve(1.3, {{48 * kKiB, 3, 4}, {640 * kKiB, 10, 4}, {16 * kMiB, 80, 4}}, 0.005);
  const auto huge_pages =
      Curve(1.3, {{48 * kKiB, 3, 4}, {1 * kMiB, 10, 4}, {16 * kMiB, 80, 4}}, 0.005, 2);
  CacheDiscovery d = DiscoverCacheLevels(small_pages);
  const CacheDiscovery h = DiscoverCacheLevels(huge_pages);
  ASSERT_GE(d.levels.size(), 3u);
  ExpectSize(d.levels[1], 640 * kKiB);
  const MachineProfile before = Planned(d);
  EXPECT_LE(std::abs(std::log2(double(*before.EffectiveCacheBytes(2)) / (640 * kKiB))), 0.25);
  LabelTlbSteps(d, h);
  int moved = 0;
  for (const MeasuredLevel& l : d.levels) {
    if (l.kind != LevelKind::kCacheSetsUneven) continue;
    ++moved;
    EXPECT_EQ(l.size_bytes, h.levels[1].size_bytes);
  }
  EXPECT_EQ(moved, 1);
  const MachineProfile after = Planned(d);
  ASSERT_TRUE(after.EffectiveCacheBytes(3).has_value());
  EXPECT_EQ(*after.EffectiveCacheBytes(1), uint64_t(d.levels[0].size_bytes));
  EXPECT_EQ(double(*after.EffectiveCacheBytes(2)), std::floor(h.levels[1].size_bytes));
  EXPECT_LE(std::abs(std::log2(double(*after.EffectiveCacheBytes(3)) / (16 * kMiB))), 0.25);

  // Both curves step at 640 KiB: nothing moves.
  CacheDiscovery same = DiscoverCacheLevels(small_pages);
  LabelTlbSteps(same, DiscoverCacheLevels(small_pages));
  for (const MeasuredLevel& l : same.levels) EXPECT_NE(l.kind, LevelKind::kCacheSetsUneven);
  EXPECT_LE(std::abs(std::log2(double(*Planned(same).EffectiveCacheBytes(2)) / (640 * kKiB))),
            0.25);
}

// A 2 MiB L2 whose huge-page fit ends it in two stages: at 1.4 MiB (hits at 7.6 ns) and at 2 MiB,
// the second step carrying the miss ramp's 32 ns. On 4 KiB pages it ends at 1.6 MiB (8.3 ns), after
// an earlier step at 400 KiB that both curves show. The replaced level keeps the 4 KiB step's hit
// latency: with the ramp's, the L3 step after it (38 ns) would look barely dearer, the 2 MiB stage
// would be no boundary, and a bound would price the L2 at 400 KiB.
TEST(CacheDiscovery, ALevelSizedOnHugePagesKeepsItsHitLatency) {
  auto level = [](double bytes, double ns) {
    return MeasuredLevel{bytes, bytes, bytes, ns, LevelKind::kCache};
  };
  CacheDiscovery small_pages;
  small_pages.levels = {level(46 * kKiB, 1.7), level(406 * kKiB, 5.4), level(1673 * kKiB, 8.25),
                        level(9 * kMiB, 38.5), level(17 * kMiB, 73)};
  small_pages.memory_latency_ns = 150;
  CacheDiscovery huge_pages;
  huge_pages.levels = {level(46 * kKiB, 1.7), level(373 * kKiB, 5.4), level(1367 * kKiB, 7.6),
                       level(2 * kMiB, 31.7), level(10 * kMiB, 41.4), level(20.7 * kMiB, 47.3)};
  huge_pages.memory_latency_ns = 135;
  LabelTlbSteps(small_pages, huge_pages);
  const MeasuredLevel* sized = nullptr;
  for (const MeasuredLevel& l : small_pages.levels) {
    if (l.kind == LevelKind::kCacheSetsUneven && l.size_bytes == 2 * kMiB) sized = &l;
  }
  ASSERT_NE(sized, nullptr);
  EXPECT_EQ(sized->latency_ns, 8.25);

  MachineProfile profile = Planned(small_pages);
  profile.caches = {{1, "Data", 48 << 10, 12, 64, 1},
                    {2, "Unified", 2 << 20, 16, 64, 1},
                    {3, "Unified", 260 << 20, 20, 64, 2}};
  EXPECT_EQ(*profile.EffectiveCacheBytes(2), uint64_t(406 * kKiB));  // planned where misses begin
  EXPECT_EQ(*profile.PricedCacheBytes(2), uint64_t(2 * kMiB));       // priced at its last stage
}

TEST(CacheDiscovery, AFlatCurveHasNoLevels) {
  const CacheDiscovery d = DiscoverCacheLevels(Curve(90, {}, 0.01));
  EXPECT_TRUE(d.levels.empty());
  EXPECT_NEAR(d.memory_latency_ns, 90, 2);
}

TEST(CacheDiscovery, TheNearestStepSaysWhichOfTheOSsCachesDisagree) {
  const auto curve = Curve(1.3, {{32 * kKiB, 3, 4}, {512 * kKiB, 12, 4}, {2 * kMiB, 40, 4}}, 0.01);
  const CacheDiscovery d = DiscoverCacheLevels(curve);
  const NearestStep l1 = NearestCacheStep(d.levels, 32 << 10);
  const NearestStep l2 = NearestCacheStep(d.levels, 512 << 10);
  const NearestStep l3 = NearestCacheStep(d.levels, 32 << 20);
  EXPECT_TRUE(l1.Agrees()) << l1.octaves;
  EXPECT_TRUE(l2.Agrees()) << l2.octaves;
  ASSERT_NE(l3.step, nullptr);
  EXPECT_FALSE(l3.Agrees());  // the VM case: a 32 MiB L3 measured as 2 MiB
  EXPECT_NEAR(l3.octaves, 4, 0.3);
  // TLB reach is never a cache's nearest step, and without any cache step there is none.
  std::vector<MeasuredLevel> tlb_only = d.levels;
  for (MeasuredLevel& m : tlb_only) m.kind = LevelKind::kTlb;
  EXPECT_EQ(NearestCacheStep(tlb_only, 32 << 10).step, nullptr);
}

}  // namespace
}  // namespace rooftune::probes
