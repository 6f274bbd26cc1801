// The int8 GEMM's analytic initial config: cache capacities from the measured profile, every
// threshold a named constant with its reason.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "kernels/amx.h"
#include "plugins/builtin/gemm_s8_config.h"

namespace rooftune {
namespace {

using kernels::S8Path;

// The AMX path multiplies blocks of 32 rows (two 16-row tiles), so its row blocks are multiples.
constexpr int64_t kAmxBlockRows = 32;
// Row blocks of at most this many rows: taller ones leave too few blocks to share between the
// threads and crowd B's block out of L2.
constexpr double kMaxRowBlock = 192;
// AMX: the threads split rows when each gets at least two 32-row blocks, else columns.
constexpr int64_t kAmxRowsPerThreadToSplitRows = 2 * kAmxBlockRows;
// AMX row blocks of at most 128 rows, and C's partial sums between K slices (MC x NC s32) within
// a quarter of L2 beside B's block: MC=192, NC=1024 ran 1024^3 1.2-1.4x slower than MC=128,
// NC=512 on one and two threads (their 768 KiB of sums against 256), and 2048^3 1.06-1.23x on
// one; 32-row blocks, which keep the sums smallest, traverse B once per block and ran 2048^3
// 1.5-1.8x slower (bench/RESULTS.md).
constexpr double kAmxMaxRowBlock = 128;
constexpr double kAmxPartialSumsShareOfL2 = 0.25;
// The register block elsewhere: 6 rows x 2 vectors of s32 accumulators leave registers for A's
// broadcasts and B's loads on every x86 target.
constexpr int64_t kRegisterRows = 6;
// Elsewhere the threads split rows when each gets at least this many register blocks of them.
constexpr double kRowBlocksToSplitRows = 4;
// Row blocks share the rows out evenly when the busiest thread gets at most this much more than
// its share.
constexpr double kRowShareSlack = 1.1;
// Where the profile knows no cache: the smallest L1d and per-core L2 of current x86 servers.
constexpr double kAssumedL1Bytes = 32 << 10;
constexpr double kAssumedL2Bytes = 1 << 20;

double CacheBytes(const MachineProfile& profile, int level, double assumed) {
  const std::optional<uint64_t> bytes = profile.EffectiveCacheBytes(level);
  return bytes ? double(*bytes) : assumed;
}

// The tile unit: exact on every input and the fastest path by far. MC: 32-row blocks, as many as
// share the rows evenly between the threads, up to kAmxMaxRowBlock. The 32 x KC micro-panel of A
// takes half of L1, the KC x NC block of B half of L2, and where K is sliced C's partial sums a
// quarter (kAmxPartialSumsShareOfL2); with the columns split, each thread's share of them is one
// block.
GemmS8Choice AmxChoice(const ParamSpace& space, const Workload& w, int threads,
                       const MachineProfile& profile) {
  GemmS8Choice d;
  d.path = S8Path::kAmx;
  kernels::GemmS8Blocking& b = d.blocking;
  const double rows_per_thread = std::ceil(double(w.m) / threads / kAmxBlockRows) * kAmxBlockRows;
  b.mc = int(space.Find("MC")->LargestNotAbove(
      rows_per_thread, [](int64_t v) { return v % kAmxBlockRows == 0 && v <= kAmxMaxRowBlock; }));
  const bool split_rows = threads == 1 || w.m >= kAmxRowsPerThreadToSplitRows * threads;
  b.parallel = split_rows ? kernels::ParallelLoop::kIc : kernels::ParallelLoop::kJc;
  const double l1 = CacheBytes(profile, 1, kAssumedL1Bytes);
  const double l2 = CacheBytes(profile, 2, kAssumedL2Bytes);
  b.kc = int(space.Find("KC")->LargestNotAbove(l1 / 2 / kAmxBlockRows));
  double columns =
      split_rows ? l2 / 2 / b.kc : std::ceil(double(w.n) / threads / kAmxBlockRows) * kAmxBlockRows;
  if (b.kc < w.k) {
    // A block's rows keep sums; with the columns split, every row does.
    const int64_t rows = split_rows ? std::min<int64_t>(b.mc, w.m) : w.m;
    const double sums_bytes_per_column = sizeof(int32_t) * double(rows);
    columns = std::min(columns, kAmxPartialSumsShareOfL2 * l2 / sums_bytes_per_column);
  }
  b.nc = int(space.Find("NC")->LargestNotAbove(columns));
  return d;
}

// The rows the busiest of `threads` threads multiplies when blocks of `mc` rows are shared out.
double BusiestThreadRows(double m, double mc, int threads) {
  const double blocks = std::ceil(m / mc);
  return std::min(m, std::ceil(blocks / threads) * mc);
}

// The fast path is exact everywhere only with vpdpbusd; elsewhere start exact and let the tuner
// try the fast one (it is refused where the inputs would saturate it).
// MC: one block for each thread's share of the rows where a block that size is allowed (every
// further block traverses all of B again), else the largest; then smaller while the blocks do not
// share the rows out evenly (within kRowShareSlack): 512 rows on two threads in blocks of 192
// leave one thread 384 rows and the other 128. The threads split rows when each gets several
// register blocks and the blocks share out evenly, else columns.
// KC: all of K while a tile column's K-deep panel of B fits half of L2 (the other half for A's
// block and what streams past), so that every row tile of the block finds it there; deeper, the
// largest slice that fits: 64 x 8192 x 32768 re-read its 2 MiB panels from L3 for every row tile.
GemmS8Choice RegisterBlockedChoice(const ParamSpace& space, const Workload& w, int threads,
                                   const MachineProfile& profile) {
  GemmS8Choice d;
  d.path = kernels::GemmS8FastPathIsVnni() ? S8Path::kFast : S8Path::kExact;
  kernels::GemmS8Blocking& b = d.blocking;
  b.mr = int(kRegisterRows);
  const double m = double(w.m);
  const double rows_per_thread = std::ceil(m / threads / kRegisterRows) * kRegisterRows;
  const Param* mc = space.Find("MC");
  auto fits = [&](int64_t v) { return v % kRegisterRows == 0 && v <= kMaxRowBlock; };
  auto covers_share = [&](int64_t v) { return fits(v) && double(v) >= rows_per_thread; };
  const int64_t largest = mc->LargestNotAbove(kMaxRowBlock, fits);
  const int64_t covering = mc->SmallestNotBelow(0, covers_share);
  b.mc = int(covering > 0 ? covering : largest);
  bool even = BusiestThreadRows(m, b.mc, threads) <= kRowShareSlack * rows_per_thread;
  for (double below = b.mc - 1; !even && below >= kRegisterRows; below = b.mc - 1) {
    const int64_t smaller = mc->LargestNotAbove(below, fits);
    if (smaller >= b.mc) break;  // none smaller
    b.mc = int(smaller);
    even = BusiestThreadRows(m, b.mc, threads) <= kRowShareSlack * rows_per_thread;
  }
  if (!even) b.mc = int(covering > 0 ? covering : largest);
  const bool split_rows =
      threads == 1 || (even && rows_per_thread >= kRowBlocksToSplitRows * kRegisterRows);
  b.parallel = split_rows ? kernels::ParallelLoop::kIc : kernels::ParallelLoop::kJc;
  const double width = d.path == S8Path::kExact ? 2 : 1;  // bytes a packed k takes
  const int64_t panel_columns = kernels::GemmS8PanelColumns();
  const double tile_columns =
      double(panel_columns) * kernels::GemmS8TilePanels(kernels::GemmS8SpansTwoPanels(b.mr),
                                                        (w.n + panel_columns - 1) / panel_columns,
                                                        !split_rows, threads);
  const double deepest = CacheBytes(profile, 2, kAssumedL2Bytes) / 2 / (width * tile_columns);
  const Param* kc = space.Find("KC");
  const int64_t whole = kc->SmallestNotBelow(double(w.k));
  b.kc = int(double(w.k) <= deepest && whole > 0 ? whole : kc->LargestNotAbove(deepest));
  return d;
}

}  // namespace

Config GemmS8InitialConfig(const Workload& w, int threads, CacheMode,
                           const MachineProfile& profile) {
  static const ParamSpace space = GemmS8Space();
  if (kernels::AmxInt8Available()) return GemmS8AmxInitialConfig(w, threads, profile);
  return ConfigOf(RegisterBlockedChoice(space, w, threads, profile));
}

Config GemmS8AmxInitialConfig(const Workload& w, int threads, const MachineProfile& profile) {
  static const ParamSpace space = GemmS8Space();
  return ConfigOf(AmxChoice(space, w, threads, profile));
}

}  // namespace rooftune
