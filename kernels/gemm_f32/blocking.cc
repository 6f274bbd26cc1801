#include "kernels/gemm_f32/blocking.h"

#include <algorithm>
#include <cmath>
#include <tuple>

namespace rooftune::kernels {
namespace {

constexpr uint64_t kFloat = sizeof(float);

// Bytes of one way of a cache.
uint64_t WayBytes(const CacheGeometry& cache) {
  return cache.size_bytes / uint64_t(std::max(cache.ways, 1));
}

// Ways of a cache a block of `bytes` occupies when spread over its sets.
int WaysFor(uint64_t bytes, const CacheGeometry& cache) {
  const uint64_t way_bytes = std::max<uint64_t>(WayBytes(cache), 1);
  return int((bytes + way_bytes - 1) / way_bytes);
}

// Half of a cache's ways, in bytes: a block's share when it lives beside the traffic that passes
// through the same level.
uint64_t HalfTheWays(const CacheGeometry& cache) {
  return uint64_t(std::max(1, cache.ways / 2)) * WayBytes(cache);
}

// What picks a register block over an extent of rows or columns: the least padding, then (only
// for few rows reading a prepared B) the fewest panels, then the fewest loads per FMA.
//
// Few rows reading a prepared B: each row panel re-reads B's micro-panel (6 x 64 over 24 rows
// ran 0.39 of the DRAM bound where 12 x 32 and 8 x 48 ran 0.44-0.46). A block that loads more
// than it multiplies (16 x 16: 16 broadcasts and a vector for 16 FMAs) runs at the load ports'
// rate; it is taken only where it holds every row in one panel and nothing of B is re-read (16
// rows: 0.60-0.63 of the DRAM bound against 8 x 48's 0.55-0.58; 32 rows in two panels: 0.44
// against 0.52).
enum class Prefer { kFewestLoads, kFewestPanels };

struct BlockRank {
  int64_t padded;
  bool load_bound;  // with Prefer::kFewestPanels: more loads than FMAs, in more than one panel
  int64_t panels;   // with Prefer::kFewestPanels; 0 otherwise
  double loads_per_fma;
  bool operator<(const BlockRank& o) const {
    return std::tie(padded, load_bound, panels, loads_per_fma) <
           std::tie(o.padded, o.load_bound, o.panels, o.loads_per_fma);
  }
};

BlockRank RankOf(const GemmMachine& m, const MicroKernelShape& s, int64_t extent, bool by_columns,
                 Prefer prefer) {
  const int64_t block = by_columns ? s.nr : s.mr;
  const int64_t panels = (extent + block - 1) / block;
  const int nv = s.nr / m.lanes;
  const int loads = s.mr + nv, fmas = s.mr * nv;
  const bool by_panels = prefer == Prefer::kFewestPanels;
  return {panels * block, by_panels && loads > fmas && panels > 1, by_panels ? panels : 0,
          double(loads) / fmas};
}

// The register block that ranks first over `extent`; null when there is none.
const MicroKernelShape* BestBlock(const GemmMachine& m, int64_t extent, bool by_columns,
                                  Prefer prefer) {
  const MicroKernelShape* best = nullptr;
  for (const MicroKernelShape& s : m.micro_kernels) {
    if (best == nullptr ||
        RankOf(m, s, extent, by_columns, prefer) < RankOf(m, *best, extent, by_columns, prefer)) {
      best = &s;
    }
  }
  return best;
}

}  // namespace

GemmF32Blocking AnalyticBlocking(const GemmMachine& m) {
  GemmF32Blocking b;
  // Register block: enough independent accumulators to cover latency x pipes, then the fewest
  // loads per FMA ((MR + NR/lanes) / (MR * NR/lanes)), which leaves load ports free.
  const int needed = m.fma_latency_cycles * m.fma_pipes;
  double best_score = -1;
  for (const MicroKernelShape& s : m.micro_kernels) {
    const int nv = s.nr / m.lanes;
    const int accumulators = s.mr * nv;
    const double loads_per_fma = double(s.mr + nv) / accumulators;
    const double score = std::min(accumulators, needed) * 100.0 - loads_per_fma;
    if (score > best_score) best_score = score, b.mr = s.mr, b.nr = s.nr;
  }
  // BLIS keeps the micro-panel of the broadcast operand in L1 and streams the vector operand's
  // from L2. Here A is broadcast (MR rows) and B is loaded as vectors (NR columns), so the jr loop
  // runs innermost: an MR x KC micro-panel of A stays in L1 while B's KC x NR micro-panels stream
  // past it. The roles of the cache blocks follow: KC x NC of B lives in L2, MC x KC of A in L3.
  // (BlockingForBInL1 below is the other order, for shapes with too few rows to reuse B panels.)
  b.jr_innermost = true;
  const CacheGeometry& l1 = m.l1;
  if (l1.size_bytes > 0) {
    // A quarter of the ways for the A micro-panel: the rest holds the B lines in flight, C's tile
    // and whatever the hardware prefetchers bring.
    const int ways_a = std::max(1, l1.ways / 4);
    b.kc = int(uint64_t(ways_a) * (l1.size_bytes / l1.ways) / (uint64_t(b.mr) * kFloat));
  }
  // NC: the KC x NC block of B takes half the L2 ways; the other half serves A's micro-panels on
  // their way to L1, C, and streaming.
  const CacheGeometry& l2 = m.l2;
  if (l2.size_bytes > 0) {
    b.nc = std::max(b.nr, int(HalfTheWays(l2) / (uint64_t(b.kc) * kFloat)) / b.nr * b.nr);
  }
  // MC: the MC x KC block of A takes half of the L3 (this core's share).
  const CacheGeometry& l3 = m.l3;
  if (l3.size_bytes > 0) {
    b.mc = std::max(b.mr, int(HalfTheWays(l3) / (uint64_t(b.kc) * kFloat)) / b.mr * b.mr);
  }
  return b;
}

GemmF32Blocking BlockingForBInL1(const GemmMachine& m) {
  GemmF32Blocking b = AnalyticBlocking(m);
  b.jr_innermost = false;
  // KC: the KC x NR micro-panel of B stays in L1 while MR x KC panels of A stream through, using
  // C_Ar = floor((W - 1) / (1 + NR/MR)) ways for A and the rest for B.
  const CacheGeometry& l1 = m.l1;
  if (l1.size_bytes > 0) {
    const uint64_t sets = l1.size_bytes / (uint64_t(l1.ways) * l1.line_bytes);
    const int ways_a = std::max(1, int((l1.ways - 1) / (1.0 + double(b.nr) / b.mr)));
    b.kc = int(uint64_t(ways_a) * sets * l1.line_bytes / (uint64_t(b.mr) * kFloat));
  }
  // MC: the MC x KC block of A fills the L2 ways not taken by the B micro-panel (and one way left
  // for C and streaming).
  const CacheGeometry& l2 = m.l2;
  if (l2.size_bytes > 0) {
    const int ways_b = WaysFor(uint64_t(b.kc) * b.nr * kFloat, l2);
    const int ways_a = std::max(1, l2.ways - 1 - ways_b);
    b.mc = std::max(b.mr, int(ways_a * WayBytes(l2) / (uint64_t(b.kc) * kFloat)) / b.mr * b.mr);
  }
  // NC: the KC x NC block of B fills the L3 ways not taken by the A block.
  const CacheGeometry& l3 = m.l3;
  if (l3.size_bytes > 0) {
    const int ways_a = WaysFor(uint64_t(b.mc) * b.kc * kFloat, l3);
    const int ways_b = std::max(1, l3.ways - 1 - ways_a);
    b.nc = std::max(b.nr, int(ways_b * WayBytes(l3) / (uint64_t(b.kc) * kFloat)) / b.nr * b.nr);
  }
  return b;
}

GemmF32Blocking BlockingForFewColumns(const GemmMachine& m, int64_t columns) {
  GemmF32Blocking b = AnalyticBlocking(m);
  // A 64-wide block over 16 columns would leave three quarters of every FMA's lanes idle.
  if (const MicroKernelShape* best =
          BestBlock(m, columns, /*by_columns=*/true, Prefer::kFewestLoads)) {
    b.mr = best->mr, b.nr = best->nr;
  }
  const uint64_t width = uint64_t((columns + b.nr - 1) / b.nr * b.nr);
  if (m.l2.size_bytes > 0) {
    b.kc = std::max(b.kc, int(HalfTheWays(m.l2) / (width * kFloat)));
  }
  b.nc = int(width);
  if (m.l3.size_bytes > 0) {
    b.mc = std::max(b.mr, int(HalfTheWays(m.l3) / (uint64_t(b.kc) * kFloat)) / b.mr * b.mr);
  }
  return b;
}

GemmF32Blocking BlockingForFewRows(const GemmMachine& m, int64_t rows, BPacking b_read) {
  GemmF32Blocking b = BlockingForBInL1(m);
  auto padded = [&](int mr) { return (rows + mr - 1) / mr * mr; };
  const Prefer prefer =
      b_read == BPacking::kPrepared ? Prefer::kFewestPanels : Prefer::kFewestLoads;
  if (const MicroKernelShape* best = BestBlock(m, rows, /*by_columns=*/false, prefer)) {
    b.mr = best->mr, b.nr = best->nr;
  }
  // B read in place: the micro-panel in use and the next one, being fetched, share half of L1.
  // Prepared B: half of L2 (of L1 where L2 is unknown) holds what each tile re-reads. With more
  // than one row panel that is B's micro-panel. In one row panel nothing of B is re-read, but
  // every KC block re-reads and re-writes the rows of C, which B's stream has pushed out of the
  // caches since the block before: KC runs as deep as A's micro-panel fits there (8 x 4096 x 4096
  // read B at 0.85 of the stream read with KC 4096 against 0.78 with KC 512, bench/RESULTS.md).
  if (m.l1.size_bytes > 0) {
    const uint64_t half_l1 = m.l1.size_bytes / 2;
    const uint64_t re_read_share = m.l2.size_bytes > 0 ? m.l2.size_bytes / 2 : half_l1;
    const uint64_t re_read_width = padded(b.mr) == b.mr ? uint64_t(b.mr) : uint64_t(b.nr);
    const uint64_t kc = b_read != BPacking::kPrepared ? half_l1 / (2 * uint64_t(b.nr) * kFloat)
                                                      : re_read_share / (re_read_width * kFloat);
    b.kc = std::max(1, int(kc));
  }
  b.mc = int(padded(b.mr));
  // Nothing of B is kept, so NC only bounds how far each of the KC row streams runs before the
  // next KC block starts (long runs suit the prefetchers); C's MC x NC block is what every KC
  // block reuses: it takes half of L2.
  if (m.l2.size_bytes > 0) {
    b.nc = std::max(b.nr, int(m.l2.size_bytes / 2 / (uint64_t(b.mc) * kFloat)) / b.nr * b.nr);
  }
  b.pack_b = b_read == BPacking::kPrepared ? BPacking::kPrepared : BPacking::kInPlace;
  b.prefetch_b = true;
  b.prefetch_b_into_l2 = b.pack_b == BPacking::kPrepared && m.stream_prefetched_into_l2;
  return b;
}

}  // namespace rooftune::kernels
