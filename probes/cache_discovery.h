// Cache levels discovered from a latency curve, not read from a spec sheet.
//
// The model. A pointer chase over a random cycle of S bytes, through a cache of capacity C that
// keeps an effectively random subset of the lines, hits that cache with probability C/S once
// S > C; an LRU-like cache misses more, and sooner. Each level i of capacity C_i therefore adds
// its miss penalty D_i in proportion to a miss fraction that is 0 up to C_i and rises with a
// sharpness p_i (1 for random replacement, up to 8 for a near-step):
//
//     latency(S) = L0 + sum_i D_i * max(0, 1 - (C_i / S)^p_i)
//
// with L0 the first level's hit latency. Given the capacities and sharpnesses, the latencies
// enter linearly and are fitted by weighted least squares (weights 1/latency^2: the noise is
// relative). Capacities and sharpnesses are found by a greedy search on a fine log grid (24 points
// per octave) followed by coordinate descent, for 1, 2, ... levels; the number of levels is the
// one with the smallest Bayesian information criterion, n ln(SSE/n) + (3k + 1) ln n, among fits
// whose every step exceeds four times the fit's relative noise (a grid search finds some step in
// pure noise; BIC does not charge for the search). Each
// capacity's interval is where the profile likelihood stays within the 95% chi-square bound
// (n ln(SSE/SSE_min) <= 3.84).
//
// Nothing here compares against fixed latency thresholds or snaps to powers of two: a 1.25 MiB
// cache comes out as 1.25 MiB, and a soft knee (a victim L3 blurring into L2) is what the model
// describes anyway. A TLB's reach produces a step of the same shape; a curve measured on huge
// pages tells the two apart (LabelTlbSteps).
#pragma once

#include <string>
#include <vector>

#include "framework/machine_profile.h"
#include "probes/latency.h"

namespace rooftune::probes {

// A step the fit found: its capacity estimate with a 95% interval, the latency of a hit, how
// sharply it misses once outgrown, and its kind (a cache until LabelTlbSteps says otherwise).
struct CacheDiscovery {
  std::vector<MeasuredLevel> levels;  // nearest the core first
  double memory_latency_ns = 0;       // latency beyond the last level
  int points = 0;
  int dropped_points = 0;   // outliers removed by the robust second fit
  double relative_rms = 0;  // fit residual, relative
};

CacheDiscovery DiscoverCacheLevels(const std::vector<LatencyPoint>& curve, int max_levels = 6);

// The model's latency at `bytes` for a discovery (for plots and tests).
double ModelLatency(const CacheDiscovery& discovery, double bytes);

// Plans each cache from the curve that shows it best. 4 KiB-page steps from an octave below a
// huge-page step to a quarter octave above it, which the huge-page curve does not show at their
// own sizes, are that cache ending early on 4 KiB pages (their sets filled unevenly) when one of
// them lies more than a quarter octave below: they are replaced by the huge-page step, as kind
// kCacheSetsUneven, at the hit latency of the first of them. Then marks the steps that have no
// counterpart (within half an octave) in the huge-page curve as TLB reach, and adds, as
// kCacheOnHugePages, a huge-page step whose 4 KiB-page step such a TLB step (up to 1.5 octaves
// away, either side) hid.
void LabelTlbSteps(CacheDiscovery& small_pages, const CacheDiscovery& huge_pages);

}  // namespace rooftune::probes
