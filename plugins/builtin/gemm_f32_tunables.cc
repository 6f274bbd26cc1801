// The fp32 GEMM's analytic initial config: every machine fact from the measured profile (cache
// capacities as measured, ways and lines as the OS reports them, FMA pipes from the measured
// peak, FMA latency from the dependent chain), every threshold a named constant with its reason.
// RESULTS.md has the measurements behind them.
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <vector>

#include "framework/roofline.h"
#include "kernels/gemm_f32/blocking.h"
#include "kernels/gemm_f32/small.h"
#include "plugins/builtin/gemm_f32_config.h"

namespace rooftune {
namespace {

using kernels::BPacking;
using kernels::GemmF32Blocking;

// FMA latency in cycles where the profile has none measured: 4 on every x86 core with FMA since
// Skylake and Zen 2 (Agner Fog's instruction tables).
constexpr int kAssumedFmaLatencyCycles = 4;
// Associativity and line size where the OS reports no cache: the common x86 figures.
constexpr int kAssumedWays = 8;
constexpr int kAssumedLineBytes = 64;
// At most this many MR-row panels and B is read in place: a packed copy would be reused too
// little to repay it, and a B micro-panel in L2 would serve too few A micro-panels.
constexpr double kFewRowPanels = 4;
// At most this many panels of the few-row block and a prepared B is read in the few-row order: it
// streams once, each panel re-reading its micro-panel from L2, where the many-row order would
// pack B again on every call. 48 to 96 rows of 4096 x 4096 ran 0.56-0.68 of their bound in the
// few-row order against 0.45-0.68 in the many-row one (64 rows 1.12-1.17x faster); 128 rows
// tied, 192 lost.
constexpr double kFewRowPanelsOfPreparedB = 8;
// Threads split the columns when each gets at least this many NR panels: it then packs and
// reads its own B and waits for no one, while each micro-panel of A still serves that many tiles.
constexpr double kColumnPanelsToSplitColumns = 4;
// Threads split the rows (sharing B) only when each gets at least this many register blocks of
// rows: they pack each B block together and wait for each other, which fewer rows do not repay.
constexpr double kRowBlocksToSplitRows = 16;
// A shared B is packed ahead only when this many row panels re-read the copy, repaying the extra
// pass and the threads' wait; below it, reading B in place costs each thread little more.
constexpr double kRowPanelsToPackSharedB = 128;
// A is packed only when more than this many column panels re-read it, ir is innermost (with jr
// innermost its MR x KC micro-panel stays in L1 for every panel, and a copy saves nothing) and
// the rows are not few (their whole KC-deep block stays in L1 for every panel as well).
constexpr double kColumnPanelsToPackA = 4;
// Row blocks shared at least this evenly between the threads count as balanced.
constexpr double kBalancedShare = 0.9;
// The small-matrix path (register blocks over operands read in place, no packing) pays while
// what its tiles re-read stays near the core. A's rows and C's, re-read for every column panel,
// must fit this share of the L2 at its cautious size (the rest of the L2 holds B's panel).
constexpr double kSmallPathShareOfL2ForAAndC = 0.5;
// B's panels, re-read by every row block straight after, and everything else must fit the L2 at
// the largest size it was measured at: beyond it B streams from farther, where the blocked
// path's packed, prefetched panels win (3x on a decode shape streaming B from DRAM).
constexpr double kSmallPathShareOfL2ForAll = 1.0;
// On more than one thread, a product that takes less than SplitRepaidAboveSeconds at one
// thread's peak runs on the calling thread alone: a split of so little work costs more in waking
// and joining the threads than it saves. Where the probe measured what a split call costs beyond
// its work (F), T seconds of one thread's work split over n threads take T / n + F, which pays
// from T = F n / (n - 1); kSplitOverheadsToRepay times that leaves room for threads that do not
// share evenly and for a host slower to wake them than when probed.
constexpr double kSplitOverheadsToRepay = 2;
// Where it was not measured: in pairs with other kernels, where the threads rest between calls,
// two threads were once slower up to 16x256x256 and 256x16x256 (12 us) and faster from 128^3
// (24 us); on another host, faster from 96^3 (8 us).
constexpr double kSplitRepaidAboveSeconds = 2e-5;
// A split small path gains only when each thread gets several tiles along the loop it splits:
// with two a thread, the second thread joins too late to take one (16x256x256 split into 4
// column panels ran as long as on one thread; into 8, 1.26x faster).
constexpr int64_t kSmallTilesPerThreadToSplit = 4;

// Capacity as measured (else as the OS reports it); associativity and line from the OS, where it
// reports them (0 is unknown).
kernels::CacheGeometry GeometryOf(const MachineProfile& profile, int level) {
  const std::optional<uint64_t> capacity = profile.EffectiveCacheBytes(level);
  if (!capacity) return {};
  std::optional<CacheLevel> cache = profile.DataCache(level);
  kernels::CacheGeometry g{*capacity, cache && cache->ways > 0 ? cache->ways : kAssumedWays,
                           cache && cache->line_bytes > 0 ? cache->line_bytes : kAssumedLineBytes};
  // A shared cache the OS reports is shared: plan for this core's part of it. (A measured size
  // already is what this core sees.)
  if (profile.measured_levels.empty() && cache && cache->shared_by_cpus > 1) {
    g.size_bytes /= uint64_t(cache->shared_by_cpus);
  }
  return g;
}

double SplitRepaidAboveSeconds(const MachineProfile& profile, int threads) {
  const double overhead = profile.ParallelCallOverheadSeconds(threads);
  if (overhead <= 0 || threads < 2) return kSplitRepaidAboveSeconds;
  return kSplitOverheadsToRepay * overhead * threads / (threads - 1);
}

// FMA pipes per core: the measured one-thread f32 peak per cycle over one vector FMA's FLOPs;
// two (every x86 server core since Haswell) where the profile has no peak or clock.
int FmaPipes(const MachineProfile& profile, int lanes) {
  const Ceiling* peak = profile.FindCompute(Dtype::kF32, 1);
  if (peak == nullptr || profile.clock_ghz <= 0 || lanes <= 0) return 2;
  const double per_cycle = peak->per_second / (profile.clock_ghz * 1e9);
  return std::clamp(int(std::lround(per_cycle / (2.0 * lanes))), 1, 4);
}

// The measured FMA latency, whole cycles (a chain timed at a measured clock reads 4.02 for 4);
// assumed where the probe did not measure it or read nonsense.
int FmaLatency(const MachineProfile& profile) {
  const long cycles = std::lround(profile.fma_latency_cycles);
  return cycles >= 1 && cycles <= 16 ? int(cycles) : kAssumedFmaLatencyCycles;
}

// The largest block size in `param`'s domain, a multiple of `multiple`, within `bound`, whose
// blocks of `extent` the threads share at least kBalancedShare evenly (else the most evenly
// shared one). With `extent` 0 (a loop the threads do not split) simply the largest within the
// bound.
int64_t BalancedBlock(const Param& param, double bound, int64_t multiple, int64_t extent,
                      int threads) {
  const int64_t largest =
      param.LargestNotAbove(bound, [&](int64_t v) { return v % multiple == 0; });
  if (extent == 0) return largest;
  int64_t most_even = largest, largest_even = -1;
  double best_balance = -1;
  for (int64_t v : param.domain) {
    if (v % multiple != 0 || double(v) > bound) continue;
    const double blocks = std::ceil(double(extent) / v);
    const double balance = (double(extent) / threads) / (std::ceil(blocks / threads) * v);
    if (balance >= kBalancedShare && v > largest_even) largest_even = v;
    if (balance > best_balance) best_balance = balance, most_even = v;
  }
  return largest_even > 0 ? largest_even : most_even;
}

double RoundUp(double x, int64_t multiple) { return std::ceil(x / multiple) * multiple; }

// Every thread gets its columns as one block where the analytic bound allows it: the smallest NC
// at or above its share, which the kernel evens out (EvenBlocksForThreads); beyond the bound, the
// largest NC within it. Long blocks matter with B read in place (decode shapes), where NC also
// sets how long each row's run is.
int64_t ColumnBlock(const Param& nc_param, double share, int64_t nr, double bound) {
  auto multiple_of_nr = [&](int64_t v) { return v % nr == 0; };
  const int64_t covering = nc_param.SmallestNotBelow(
      share, [&](int64_t v) { return multiple_of_nr(v) && double(v) <= bound; });
  if (covering > 0) return covering;
  return nc_param.LargestNotAbove(std::min(bound, share), multiple_of_nr);
}

// Rows too few to repay packing B on each call when each call brings B: at most kFewRowPanels
// panels of the analytic (many-row) register block. B read in place is re-read from its KC
// separate rows by every row panel, which only that few panels repay.
bool FewRowsForBInPlace(const Workload& w, const kernels::GemmMachine& machine) {
  return std::ceil(double(w.m) / kernels::AnalyticBlocking(machine).mr) <= kFewRowPanels;
}

// The same when B is prepared ahead of the calls, which one stream serves: at most
// kFewRowPanelsOfPreparedB panels of the block the few-row order runs.
bool FewRows(const Workload& w, const kernels::GemmMachine& machine) {
  const int mr = kernels::BlockingForFewRows(machine, w.m, BPacking::kPrepared).mr;
  return FewRowsForBInPlace(w, machine) || std::ceil(double(w.m) / mr) <= kFewRowPanelsOfPreparedB;
}

// B, as a call brings it, for more than few rows: packed on first use by a thread that owns its
// columns (the copy rides on the first tile's read instead of taking a pass of its own), and
// packed ahead when shared only if enough row panels re-read it.
BPacking PackingOfBFromTheCall(const Workload& w, int64_t mr, bool share_b) {
  if (!share_b) return BPacking::kOnFirstUse;
  return std::ceil(double(w.m) / mr) >= kRowPanelsToPackSharedB ? BPacking::kAhead
                                                                : BPacking::kInPlace;
}

// The small path's cost model, in cycles. A tile of `rows` x `vectors` runs K steps; each step
// issues rows x vectors FMAs over the FMA pipes, loads `vectors` of B and broadcasts `rows` of A
// over the load ports, and cannot finish sooner than an FMA's latency after the step before it
// (every sum is a chain through K). A block of few sums keeps two banks on a deep product
// (kernels/gemm_f32/small.h), halving that wait. Every tile pays a fixed entry and store cost.
constexpr double kLoadsPerCycle = 2;  // 512-bit loads on current x86 cores; 256-bit ones more
constexpr double kTileEntryCycles = 16;

double SmallTileCycles(int64_t rows, int64_t vectors, int64_t k, int pipes, int latency) {
  const int64_t sums = rows * vectors;
  const bool banked = sums < kernels::kSmallBankedSumsBelow && k >= kernels::kSmallBankedDepthFrom;
  const double wait = banked ? latency / 2.0 : latency;
  const double step =
      std::max({double(sums) / pipes, double(rows + vectors) / kLoadsPerCycle, wait});
  return kTileEntryCycles + double(k) * step;
}

// The modelled cycles of M x N x K under an MR x NR block: full tiles, the right-edge panel's
// (N % NR columns, masked), and the bottom edge's (M % MR rows).
double SmallCycles(const Workload& w, int64_t mr, int64_t nr, int lanes, int pipes, int latency) {
  const int64_t full_rows = w.m / mr, edge_rows = w.m % mr;
  const int64_t full_panels = w.n / nr, edge_columns = w.n % nr;
  auto panel = [&](int64_t vectors) {
    return double(full_rows) * SmallTileCycles(mr, vectors, w.k, pipes, latency) +
           (edge_rows > 0 ? SmallTileCycles(edge_rows, vectors, w.k, pipes, latency) : 0.0);
  };
  const int64_t edge_vectors = (edge_columns + lanes - 1) / lanes;
  return double(full_panels) * panel(nr / lanes) + (edge_columns > 0 ? panel(edge_vectors) : 0.0);
}

// The most of a tile's `rows` rows of A (read in place, K floats apart) that fall on one set of
// the L1. Sets are indexed by address bits, so their count is a power of two (a 48 KiB L1 of
// unknown ways is taken as 64 sets of 12, not 96 of 8); rows a multiple of the set span apart
// share a set, and more of them than its ways evict each other at every step: a 24-row tile at
// K = 1024 (rows 4 KiB apart) ran 3.7x slower than a 12-row one, which a 12-way L1 holds.
struct L1Sets {
  int64_t sets = 64, ways = kAssumedWays, line_bytes = kAssumedLineBytes;
};

L1Sets L1SetsOf(const kernels::CacheGeometry& l1) {
  L1Sets s;
  if (l1.size_bytes == 0) return s;
  s.line_bytes = l1.line_bytes;
  const uint64_t lines = l1.size_bytes / uint64_t(l1.line_bytes);
  uint64_t sets = 1;
  while (2 * sets <= lines / uint64_t(std::max(l1.ways, 1))) sets *= 2;
  s.sets = int64_t(sets);
  s.ways = std::max<int64_t>(1, int64_t(lines / sets));
  return s;
}

int64_t ARowsOnOneL1Set(int64_t rows, int64_t k, const L1Sets& l1) {
  std::vector<int64_t> on_set(size_t(l1.sets), 0);
  int64_t most = 0;
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t line = r * k * int64_t(sizeof(float)) / l1.line_bytes;
    most = std::max(most, ++on_set[size_t(line % l1.sets)]);
  }
  return most;
}

// The small path's register block: of the blocks this target compiles (and `allowed` admits)
// whose rows of A the L1's sets hold, the one the model above prices lowest for the shape (an
// edge of a few rows or one vector can cost as much as a full tile: 16 rows run as 8 + 8, not
// 12 + 4); of equal prices the one of fewest tiles. One column (N = 1) runs as dot products
// whatever the block: its rows are the block's height.
std::optional<GemmF32Blocking> SmallBlocking(
    const Workload& w, const MachineProfile& profile,
    const std::function<bool(int64_t mr, int64_t nr)>& allowed = {}) {
  const int lanes = kernels::GemmF32VectorLanes();
  const int pipes = FmaPipes(profile, lanes), latency = FmaLatency(profile);
  const L1Sets l1 = L1SetsOf(GeometryOf(profile, 1));
  static const ParamSpace space = GemmF32Space();
  std::optional<GemmF32Blocking> best;
  double best_cycles = std::numeric_limits<double>::infinity();
  int64_t best_tiles = 0;
  for (const int64_t width : space.Find("NR")->domain) {
    const int nr = int(width);
    for (int mr : kernels::kGemmF32SmallHeights) {
      if (!kernels::GemmF32SmallHasKernel(mr, nr) || (allowed && !allowed(mr, nr)) ||
          ARowsOnOneL1Set(mr, w.k, l1) > l1.ways) {
        continue;
      }
      const double cycles = SmallCycles(w, mr, nr, lanes, pipes, latency);
      const int64_t tiles = (w.m + mr - 1) / mr * ((w.n + nr - 1) / nr);
      if (cycles < best_cycles * (1 - 1e-9) ||
          (cycles <= best_cycles * (1 + 1e-9) && tiles < best_tiles)) {
        best_cycles = cycles, best_tiles = tiles;
        best = GemmF32Blocking();
        best->path = kernels::GemmF32Path::kSmall;
        best->mr = mr, best->nr = nr;
      }
    }
  }
  return best;
}

// The small path when it pays: N within one vector (the blocked path's NR-wide register blocks
// would leave most of every FMA's lanes idle, where the small path masks one vector to N), or
// operands that fit the L2 as above. On more than one thread it runs alone when the product is
// too small to repay a split, else split by rows, else by column panels, where each thread gets
// kSmallTilesPerThreadToSplit tiles along the loop (under a block chosen for that when the
// cheapest gives too few); otherwise the blocked path's loops split better.
std::optional<GemmF32Blocking> SmallPath(const Workload& w, int threads,
                                         const MachineProfile& profile) {
  const double a_and_c = 4.0 * double(w.m * w.k + w.m * w.n);
  const double footprint = a_and_c + 4.0 * double(w.k * w.n);
  const std::optional<uint64_t> cautious = profile.EffectiveCacheBytes(2);
  const std::optional<uint64_t> generous = profile.PricedCacheBytes(2);
  const bool fits =
      w.n <= kernels::GemmF32VectorLanes() ||
      (cautious && generous && a_and_c <= kSmallPathShareOfL2ForAAndC * double(*cautious) &&
       footprint <= kSmallPathShareOfL2ForAll * double(*generous));
  if (!fits) return std::nullopt;
  std::optional<GemmF32Blocking> alone = SmallBlocking(w, profile);
  if (!alone || threads == 1) return alone;
  // The lanes the last vector of each row leaves idle cost as much as the used ones; one column
  // runs as dot products along K, every lane used.
  const int lanes = kernels::GemmF32VectorLanes();
  const double lane_operations =
      w.n == 1 ? w.Operations()
               : w.Operations() / double(w.n) * double((w.n + lanes - 1) / lanes * lanes);
  const Ceiling* peak = profile.FindCompute(Dtype::kF32, 1);
  if (peak != nullptr &&
      lane_operations / peak->per_second < SplitRepaidAboveSeconds(profile, threads)) {
    return alone;
  }
  // Split along the rows, else the column panels, where each thread gets enough tiles; the block
  // is re-chosen among those that give them when the cheapest alone does not.
  const int64_t enough = kSmallTilesPerThreadToSplit * threads;
  auto rows_split = [&](int64_t mr, int64_t) { return (w.m + mr - 1) / mr >= enough; };
  auto columns_split = [&](int64_t, int64_t nr) { return (w.n + nr - 1) / nr >= enough; };
  std::optional<GemmF32Blocking> b =
      rows_split(alone->mr, alone->nr) || columns_split(alone->mr, alone->nr)
          ? alone
          : SmallBlocking(w, profile, [&](int64_t mr, int64_t nr) {
              return rows_split(mr, nr) || columns_split(mr, nr);
            });
  if (!b) return std::nullopt;
  b->split_small = true;
  b->parallel = rows_split(b->mr, b->nr) ? kernels::ParallelLoop::kIc : kernels::ParallelLoop::kJc;
  return b;
}

}  // namespace

kernels::GemmMachine GemmMachineOf(const MachineProfile& profile) {
  kernels::GemmMachine machine;
  machine.vector_registers = kernels::GemmF32VectorRegisters();
  machine.lanes = kernels::GemmF32VectorLanes();
  machine.fma_latency_cycles = FmaLatency(profile);
  machine.fma_pipes = FmaPipes(profile, machine.lanes);
  machine.micro_kernels = kernels::GemmF32MicroKernels();
  const Ceiling* dram = profile.FindBandwidth(MemoryLevel::kDram, 1, "read");
  machine.stream_prefetched_into_l2 =
      dram != nullptr && dram->reader && dram->reader->prefetch && dram->reader->prefetch_into_l2;
  machine.l1 = GeometryOf(profile, 1);
  machine.l2 = GeometryOf(profile, 2);
  machine.l3 = GeometryOf(profile, 3);
  return machine;
}

namespace {

// The analytic config, for B prepared ahead of the calls where that pays or for B as each call
// brings it.
Config InitialConfigFor(const Workload& w, int threads, CacheMode cache,
                        const MachineProfile& profile, bool b_prepared_ahead) {
  static const ParamSpace space = GemmF32Space();
  if (const std::optional<GemmF32Blocking> small = SmallPath(w, threads, profile)) {
    const Config c = space.WithUnusedAtRest(ConfigOf(*small));
    if (space.Validate(c).ok()) return c;
  }
  const kernels::GemmMachine machine = GemmMachineOf(profile);
  // With one or two column panels A's micro-panel serves too few tiles to be worth keeping in
  // L1: KC follows B's block in L2 instead.
  const GemmF32Blocking a_in_l1 = kernels::AnalyticBlocking(machine);
  const bool few_rows = b_prepared_ahead ? FewRows(w, machine) : FewRowsForBInPlace(w, machine);
  const bool few_columns = std::ceil(double(w.n) / a_in_l1.nr) <= kernels::kFewColumnPanels;
  // Few rows read B prepared ahead of the calls, as the GEMV's initial config reads its weights.
  const GemmF32Blocking analytic =
      few_rows ? kernels::BlockingForFewRows(
                     machine, w.m, b_prepared_ahead ? BPacking::kPrepared : BPacking::kInPlace)
      : few_columns ? kernels::BlockingForFewColumns(machine, w.n)
                    : a_in_l1;
  const int64_t mr = analytic.mr, nr = analytic.nr;

  // Which loop the threads split: columns when each thread gets enough column panels, else rows
  // when each gets enough row blocks (or there is a single column panel), else columns. One
  // thread runs the same loops either way; splitting columns there lets B be packed on first use.
  const double rows_per_thread = RoundUp(double(w.m) / threads, mr);
  const bool split_columns = double(w.n) / threads >= kColumnPanelsToSplitColumns * nr;
  // A C of one column panel cannot be split by columns at all: rows then, however few.
  const bool one_column_panel = w.n <= nr;
  const bool split_rows =
      threads == 1 ||
      (!split_columns && (rows_per_thread >= kRowBlocksToSplitRows * mr || one_column_panel));
  const bool share_b = split_rows && threads > 1;

  GemmF32Blocking b = analytic;  // the register block, the loop order and the B prefetch
  // The prefetch ahead of the tiles pays for a B that streams from memory (every cold call's);
  // one the caches hold from call to call is fetched by the hardware's prefetchers, and the
  // extra instructions only crowd the loads (few rows run load-bound).
  const uint64_t held = profile.LargestEffectiveCacheBytes();
  if (few_rows && cache == CacheMode::kWarm && held > 0 &&
      double(w.k) * double(w.n) * sizeof(float) <= double(held)) {
    b.prefetch_b = false;
  }
  b.kc = int(space.Find("KC")->LargestNotAbove(analytic.kc));
  // The cache blocks of A (MC x KC) and B (KC x NC) are sized for KC-deep rows; with K under KC
  // their rows are only K deep, and as many times more of them fit the same cache.
  const double depth_gain = double(b.kc) / double(std::clamp<int64_t>(w.k, 1, b.kc));
  // Split rows get an MC the threads share evenly.
  const double mc_bound = analytic.mc * depth_gain;
  const double mc = split_rows ? std::min<double>(mc_bound, rows_per_thread) : mc_bound;
  b.mc = int(BalancedBlock(*space.Find("MC"), mc, mr, share_b ? w.m : 0, threads));
  if (few_rows && !share_b) {
    // Every row in one block, so that B streams past them once per call, not once per block.
    const int64_t covering = space.Find("MC")->SmallestNotBelow(
        RoundUp(double(w.m), mr), [&](int64_t v) { return v % mr == 0; });
    if (covering > 0) b.mc = int(covering);
  }
  const double share = RoundUp(double(w.n) / (split_rows ? 1 : threads), nr);
  b.nc = int(ColumnBlock(*space.Find("NC"), share, nr, analytic.nc * depth_gain));
  b.parallel = share_b ? kernels::ParallelLoop::kIc : kernels::ParallelLoop::kJc;
  b.pack_a =
      !analytic.jr_innermost && !few_rows && std::ceil(double(w.n) / nr) > kColumnPanelsToPackA;
  b.pack_b = few_rows ? analytic.pack_b : PackingOfBFromTheCall(w, mr, share_b);
  const Config c = space.WithUnusedAtRest(ConfigOf(b));
  if (!space.Validate(c).ok()) return space.FirstValid();
  return c;
}

}  // namespace

Config GemmF32InitialConfig(const Workload& w, int threads, CacheMode cache,
                            const MachineProfile& profile) {
  return InitialConfigFor(w, threads, cache, profile, /*b_prepared_ahead=*/true);
}

Config GemmF32WithBFromEachCall(const Config& config, const Workload& w, int threads,
                                const MachineProfile& profile) {
  static const ParamSpace space = GemmF32Space();
  GemmF32Blocking b = BlockingOf(config, /*fused=*/true);
  if (b.path != kernels::GemmF32Path::kBlocked || b.pack_b != BPacking::kPrepared) return config;
  const kernels::GemmMachine machine = GemmMachineOf(profile);
  if (FewRows(w, machine) && !FewRowsForBInPlace(w, machine)) {
    // Rows that repay preparing B but not reading it in place: the analytic config for a B that
    // each call brings (the few-row order's blocks suit only a prepared B), which the caches
    // hold from call to call where it fits.
    return InitialConfigFor(w, threads, CacheMode::kWarm, profile, /*b_prepared_ahead=*/false);
  }
  if (FewRowsForBInPlace(w, machine)) {
    // In place, with the KC that suits B read in place (its KC rows are streams of their own).
    const GemmF32Blocking in_place = kernels::BlockingForFewRows(machine, w.m, BPacking::kInPlace);
    b.pack_b = BPacking::kInPlace;
    b.prefetch_b = true;
    b.prefetch_b_into_l2 = in_place.prefetch_b_into_l2;
    b.kc = int(space.Find("KC")->LargestNotAbove(in_place.kc));
  } else {
    b.pack_b =
        PackingOfBFromTheCall(w, b.mr, b.parallel == kernels::ParallelLoop::kIc && threads > 1);
  }
  return space.WithUnusedAtRest(ConfigOf(b));
}

}  // namespace rooftune
