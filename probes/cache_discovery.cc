#include "probes/cache_discovery.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_format.h"

namespace rooftune::probes {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr int kGridPerOctave = 24;
constexpr double kChiSquare95 = 3.84;

// Sharpness exponents a level may take: 1 is random replacement; larger values describe
// LRU-like policies that miss on almost every access soon after the working set outgrows them.
constexpr double kSharpness[] = {1, 2, 4, 8};

double MissFraction(double bytes, double capacity, double sharpness) {
  return bytes <= capacity ? 0.0 : 1.0 - std::pow(capacity / bytes, sharpness);
}

struct Step {
  double capacity;
  double sharpness;
  bool operator<(const Step& o) const { return capacity < o.capacity; }
};

struct Fit {
  std::vector<Step> steps;   // ascending capacity
  std::vector<double> beta;  // L0, D_1..D_k
  double sse = kInf;
};

// Solves the (k+1) x (k+1) system in place by Gaussian elimination with partial pivoting.
bool Solve(std::vector<std::vector<double>>& a, std::vector<double>& b) {
  const size_t n = b.size();
  for (size_t col = 0; col < n; ++col) {
    size_t pivot = col;
    for (size_t r = col + 1; r < n; ++r) {
      if (std::abs(a[r][col]) > std::abs(a[pivot][col])) pivot = r;
    }
    if (std::abs(a[pivot][col]) < 1e-300) return false;
    std::swap(a[col], a[pivot]);
    std::swap(b[col], b[pivot]);
    for (size_t r = col + 1; r < n; ++r) {
      const double f = a[r][col] / a[col][col];
      for (size_t c = col; c < n; ++c) a[r][c] -= f * a[col][c];
      b[r] -= f * b[col];
    }
  }
  for (size_t col = n; col-- > 0;) {
    for (size_t c = col + 1; c < n; ++c) b[col] -= a[col][c] * b[c];
    b[col] /= a[col][col];
  }
  return true;
}

// Weighted least squares for the latencies given the capacities. A fit whose penalties are not
// all positive describes no hierarchy and is rejected.
Fit FitLatencies(const std::vector<LatencyPoint>& curve, std::vector<Step> steps) {
  Fit fit;
  std::sort(steps.begin(), steps.end());
  const size_t p = steps.size() + 1;
  std::vector<std::vector<double>> xtx(p, std::vector<double>(p, 0.0));
  std::vector<double> xty(p, 0.0), row(p);
  for (const LatencyPoint& pt : curve) {
    const double w = 1.0 / (pt.ns * pt.ns);
    row[0] = 1.0;
    for (size_t i = 0; i < steps.size(); ++i) {
      row[i + 1] = MissFraction(pt.bytes, steps[i].capacity, steps[i].sharpness);
    }
    for (size_t r = 0; r < p; ++r) {
      xty[r] += w * row[r] * pt.ns;
      for (size_t c = 0; c < p; ++c) xtx[r][c] += w * row[r] * row[c];
    }
  }
  if (!Solve(xtx, xty)) return fit;
  for (size_t i = 1; i < p; ++i) {
    if (!(xty[i] > 0)) return fit;
  }
  if (!(xty[0] > 0)) return fit;
  double sse = 0;
  for (const LatencyPoint& pt : curve) {
    double model = xty[0];
    for (size_t i = 0; i < steps.size(); ++i) {
      model += xty[i + 1] * MissFraction(pt.bytes, steps[i].capacity, steps[i].sharpness);
    }
    const double r = (pt.ns - model) / pt.ns;
    sse += r * r;
  }
  fit.steps = std::move(steps);
  fit.beta = std::move(xty);
  fit.sse = sse;
  return fit;
}

std::vector<double> Grid(const std::vector<LatencyPoint>& curve) {
  const double lo = curve.front().bytes, hi = curve.back().bytes;
  std::vector<double> grid;
  for (double x = lo; x <= hi; x *= std::pow(2.0, 1.0 / kGridPerOctave)) grid.push_back(x);
  return grid;
}

// Best fit with one more level than `fewer`: add the level at its best grid position and
// sharpness, then improve every level in turn (between its neighbours) until nothing changes.
Fit FitLevels(const std::vector<LatencyPoint>& curve, const std::vector<double>& grid,
              const Fit& fewer) {
  auto taken = [](const std::vector<Step>& steps, double c) {
    return std::any_of(steps.begin(), steps.end(), [&](const Step& s) { return s.capacity == c; });
  };
  Fit best;
  for (double c : grid) {
    if (taken(fewer.steps, c)) continue;
    for (double sharpness : kSharpness) {
      std::vector<Step> steps = fewer.steps;
      steps.push_back({c, sharpness});
      Fit f = FitLatencies(curve, steps);
      if (f.sse < best.sse) best = f;
    }
  }
  if (best.sse == kInf) return best;
  for (int sweep = 0; sweep < 20; ++sweep) {
    bool improved = false;
    for (size_t i = 0; i < best.steps.size(); ++i) {
      const double lower = i == 0 ? 0 : best.steps[i - 1].capacity;
      const double upper = i + 1 == best.steps.size() ? kInf : best.steps[i + 1].capacity;
      for (double c : grid) {
        if (c <= lower || c >= upper) continue;
        for (double sharpness : kSharpness) {
          std::vector<Step> steps = best.steps;
          steps[i] = {c, sharpness};
          Fit f = FitLatencies(curve, steps);
          if (f.sse < best.sse * (1 - 1e-12)) best = f, improved = true;
        }
      }
    }
    if (!improved) break;
  }
  return best;
}

double Bic(double sse, int n, int k) {
  // A floor keeps a noise-free (synthetic) curve from sending the criterion to -infinity.
  const double floor = 1e-10 * n;
  return n * std::log(std::max(sse, floor) / n) + (3.0 * k + 1) * std::log(double(n));
}

}  // namespace

namespace {

CacheDiscovery FitCurve(const std::vector<LatencyPoint>& input, int max_levels) {
  std::vector<LatencyPoint> curve = input;
  std::sort(curve.begin(), curve.end(),
            [](const LatencyPoint& a, const LatencyPoint& b) { return a.bytes < b.bytes; });
  CacheDiscovery d;
  d.points = int(curve.size());
  if (curve.size() < 4) return d;
  const int n = int(curve.size());
  const std::vector<double> grid = Grid(curve);

  Fit best = FitLatencies(curve, {});
  double best_bic = Bic(best.sse, n, 0);
  Fit current = best;
  for (int k = 1; k <= max_levels && 3 * k + 1 < n; ++k) {
    Fit next = FitLevels(curve, grid, current);
    if (next.sse == kInf) break;
    // BIC alone under-penalises a level placed by searching hundreds of positions: a level must
    // also add more latency than four times the fit's own relative noise, or it is fitting noise.
    const double rms = std::sqrt(next.sse / n);
    bool significant = true;
    double before = next.beta[0];
    for (size_t i = 1; i < next.beta.size(); ++i) {
      significant &= next.beta[i] > 4 * rms * before;
      before += next.beta[i];
    }
    if (!significant) break;
    const double bic = Bic(next.sse, n, k);
    if (bic < best_bic) best = next, best_bic = bic;
    current = next;
  }
  d.relative_rms = std::sqrt(best.sse / n);

  double latency = best.beta.empty() ? 0 : best.beta[0];
  for (size_t i = 0; i < best.steps.size(); ++i) {
    MeasuredLevel level;
    level.size_bytes = best.steps[i].capacity;
    level.sharpness = best.steps[i].sharpness;
    level.latency_ns = latency;
    latency += best.beta[i + 1];
    // Profile interval: the capacities whose best fit (others held) stays within the bound.
    level.low_bytes = level.high_bytes = level.size_bytes;
    const double floor = std::max(best.sse, 1e-10 * n);
    for (double c : grid) {
      const double lower = i == 0 ? 0 : best.steps[i - 1].capacity;
      const double upper = i + 1 == best.steps.size() ? kInf : best.steps[i + 1].capacity;
      if (c <= lower || c >= upper) continue;
      std::vector<Step> steps = best.steps;
      steps[i].capacity = c;
      const Fit f = FitLatencies(curve, steps);
      if (f.sse != kInf && n * std::log(std::max(f.sse, floor) / floor) <= kChiSquare95) {
        level.low_bytes = std::min(level.low_bytes, c);
        level.high_bytes = std::max(level.high_bytes, c);
      }
    }
    d.levels.push_back(level);
  }
  d.memory_latency_ns = latency;
  return d;
}

}  // namespace

CacheDiscovery DiscoverCacheLevels(const std::vector<LatencyPoint>& curve, int max_levels) {
  CacheDiscovery first = FitCurve(curve, max_levels);
  // One round of robust trimming: a shared machine leaves isolated points far off the curve (a
  // neighbour's burst, a lucky page placement). Points whose relative residual exceeds four
  // robust standard deviations (1.4826 x the median absolute residual) are dropped and the model
  // is fitted again.
  std::vector<double> residuals;
  for (const LatencyPoint& p : curve)
    residuals.push_back(std::abs(p.ns - ModelLatency(first, p.bytes)) / p.ns);
  std::vector<double> sorted = residuals;
  std::sort(sorted.begin(), sorted.end());
  if (sorted.empty()) return first;
  const double sigma = 1.4826 * sorted[sorted.size() / 2];
  std::vector<LatencyPoint> kept;
  for (size_t i = 0; i < curve.size(); ++i) {
    if (sigma == 0 || residuals[i] <= 4 * sigma) kept.push_back(curve[i]);
  }
  if (kept.size() == curve.size() || kept.size() < curve.size() / 2) return first;
  CacheDiscovery second = FitCurve(kept, max_levels);
  second.dropped_points = int(curve.size() - kept.size());
  return second;
}

double ModelLatency(const CacheDiscovery& d, double bytes) {
  if (d.levels.empty()) return d.memory_latency_ns;
  double latency = d.levels.front().latency_ns;
  for (size_t i = 0; i < d.levels.size(); ++i) {
    const double next = i + 1 < d.levels.size() ? d.levels[i + 1].latency_ns : d.memory_latency_ns;
    latency += (next - d.levels[i].latency_ns) *
               MissFraction(bytes, d.levels[i].size_bytes, d.levels[i].sharpness);
  }
  return latency;
}

void LabelTlbSteps(CacheDiscovery& small_pages, const CacheDiscovery& huge_pages) {
  auto octaves = [](double from, double to) { return std::log2(to / from); };
  // First the caches whose end 4 KiB pages show early: a physically indexed cache's sets fill
  // unevenly from randomly placed 4 KiB pages, so misses begin before the cache is full (often in
  // two stages), while on huge pages its whole capacity holds. The 4 KiB steps from an octave
  // below a huge-page step to a quarter octave above it that huge pages do not show at their own
  // sizes are that cache ending: if one of them lies more than a quarter octave below, they are
  // replaced by the huge-page step, as kind kCacheSetsUneven.
  auto on_huge_pages = [&](double bytes) {
    for (const MeasuredLevel& h : huge_pages.levels) {
      if (std::abs(octaves(bytes, h.size_bytes)) <= kSameSizeOctaves) return true;
    }
    return false;
  };
  for (const MeasuredLevel& h : huge_pages.levels) {
    std::vector<size_t> ending;
    bool early = false;
    for (size_t i = 0; i < small_pages.levels.size(); ++i) {
      const MeasuredLevel& level = small_pages.levels[i];
      const double below = octaves(level.size_bytes, h.size_bytes);
      if (level.kind == LevelKind::kCacheSetsUneven || below > 1.0 || below < -kSameSizeOctaves)
        continue;
      if (below > kSameSizeOctaves && on_huge_pages(level.size_bytes)) continue;
      ending.push_back(i);
      early |= below > kSameSizeOctaves;
    }
    if (!early) continue;
    // Its size from the huge pages, its hit latency from the 4 KiB-page step where its misses
    // begin: a huge-page fit that ends the cache in two stages gives its second step the miss
    // ramp's latency, which would make the next level look barely dearer and drop this one.
    MeasuredLevel sized = h;
    sized.kind = LevelKind::kCacheSetsUneven;
    sized.latency_ns = small_pages.levels[ending.front()].latency_ns;
    for (auto it = ending.rbegin(); it != ending.rend(); ++it) {
      small_pages.levels.erase(small_pages.levels.begin() + long(*it));
    }
    small_pages.levels.push_back(sized);
    std::sort(
        small_pages.levels.begin(), small_pages.levels.end(),
        [](const MeasuredLevel& a, const MeasuredLevel& b) { return a.size_bytes < b.size_bytes; });
  }
  for (MeasuredLevel& level : small_pages.levels) {
    if (level.kind == LevelKind::kCacheSetsUneven) continue;
    bool matched = false;
    for (const MeasuredLevel& h : huge_pages.levels) {
      matched |= std::abs(octaves(level.size_bytes, h.size_bytes)) <= 0.5;
    }
    level.kind = matched ? LevelKind::kCache : LevelKind::kTlb;
  }
  // A huge-page step that no 4 KiB-page cache step matches, with a TLB step up to 1.5 octaves
  // from it: on 4 KiB pages the TLB's reach and this cache's end blurred into one step. The TLB
  // may reach less than the cache (a 2048-entry STLB reaches 8 MiB) or more (a 4096-entry L2
  // TLB, 16 MiB). Without it the profile would lose its last cache level.
  std::vector<MeasuredLevel> hidden;
  for (const MeasuredLevel& h : huge_pages.levels) {
    bool matched = false, tlb_near = false;
    for (const MeasuredLevel& level : small_pages.levels) {
      const double up = octaves(level.size_bytes, h.size_bytes);
      matched |= level.kind != LevelKind::kTlb && std::abs(up) <= 0.5;
      tlb_near |= level.kind == LevelKind::kTlb && std::abs(up) <= 1.5;
    }
    // One cache, one level: the fit may split its end into steps less than an octave apart.
    const bool same_cache =
        !hidden.empty() && SameCacheAsThePreviousStep(hidden.back().size_bytes, h.size_bytes);
    if (!matched && tlb_near && !same_cache) {
      hidden.push_back(h);
      hidden.back().kind = LevelKind::kCacheOnHugePages;
    }
  }
  small_pages.levels.insert(small_pages.levels.end(), hidden.begin(), hidden.end());
  std::sort(
      small_pages.levels.begin(), small_pages.levels.end(),
      [](const MeasuredLevel& a, const MeasuredLevel& b) { return a.size_bytes < b.size_bytes; });
}

}  // namespace rooftune::probes
