#include "plugins/builtin/gemm_f32_traffic.h"

#include <algorithm>
#include <cmath>

namespace rooftune {

// Derivation. Traffic here is what PMU fill counters (L1D.REPLACEMENT, L2_LINES_IN) and cache
// simulators count: lines filled into the nearer level. Write-backs are not counted; leaving them
// out can only lower the bound, so a verdict stays legal. 4-byte elements; ceil() counts a partial
// block as a whole pass; A, B, C are the operand sizes in bytes.
//
//   L1 -> registers: each MR x NR micro-tile reads MR + NR floats per k, so A is read N/NR times
//     and B M/MR times; C once per KC block.
//   L2 -> L1, ir innermost (INNER=ir):
//     A: the packed MR x KC micro-panels of an MC x KC block come from L2 for every jr step,
//        unless the whole block fits in L1 beside two B micro-panels (the one in use and the
//        next): A*ceil(N/NR) or A*ceil(N/NC)
//     B: the KC x NR micro-panel stays in L1 across the ir loop, fetched once per MC block:
//        B*ceil(M/MC)
//     C: one pass per KC block (a write-allocate fill when beta = 0): C*ceil(K/KC)
//     packing (when enabled): reading the source (A once per NC block, B once) and
//        write-allocating the packed copy: 2*A*ceil(N/NC) + 2*B. B packed on first use
//        (PACKB=first_use) costs only the copy's B: the first tile's read of the source stands in
//        for its read of the packed micro-panel. Prepared B (PACKB=prepared) was packed once,
//        before the call: no packing traffic, and its reads are those of a packed block.
//   L2 -> L1, jr innermost (INNER=jr): the roles swap. The MR x KC micro-panel of A stays in L1
//     across the jr loop: A*ceil(N/NC). B's KC x NR micro-panels come from L2 for every ir step,
//     unless the whole KC x NC block fits in L1 beside two A micro-panels: B*ceil(M/MR) or
//     B*ceil(M/MC). C and packing as above.
//   L3 -> L2: packing reads A once per NC block and B once; the packed KC x NC block of B is
//     re-read from L3 for every MC block when it is larger than the L2 (prepared B has no
//     packing read: only those re-reads, or one read when the block fits); C passes come from L3
//     when C is larger than the L2. With jr innermost the KC x NC block of B is the one kept in L2
//     (re-read from L3 for every MR step when it does not fit) and A's micro-panels come from L3
//     once per NC block.
//   DRAM -> L3: every operand once; A again for every further NC block when A is larger than the
//     L3; C once per KC block when C is larger than the L3. The packing buffers are warm in
//     steady state and not charged; a cold single call also pays their first touch
//     (Traffic::first_touch): each thread's packed MC x KC block of A, and the packed KC x NC
//     block of B (one shared by the threads splitting ic, one per thread splitting jc), or,
//     with B in place, the KC x NR panel an edge of N packs. Prepared B is an operand, not a
//     buffer: it is charged as B is.
//
//   The small-matrix path (PATH=small) has no cache blocks and packs nothing: the tiles of an
//   NR-column panel read its K x NR of B from L1 when it fits there beside the MR rows of A in
//   use (else from L2 for every MR-row tile), and A once per panel, from L1 when A fits beside
//   the panel, else from L2 (or from L3 when A outgrows the L2). DRAM and L3 see each operand once.
//
// Cache sizes are the measured ones as a bound prices them (MachineProfile::PricedCacheBytes: the
// largest each level may have), else sysfs.
namespace {

Traffic SmallPathTraffic(const Workload& w, const kernels::GemmF32Blocking& blk,
                         const MachineProfile& profile) {
  const double m = double(w.m), n = double(w.n), k = double(w.k);
  const double a = 4 * m * k, b = 4 * k * n, c = 4 * m * n;
  const double bias = w.epilogue == Epilogue::kNone ? 0 : 4 * n;
  auto passes = [](double dim, double block) { return std::ceil(dim / std::max(block, 1.0)); };
  auto cache = [&](int level) { return double(profile.PricedCacheBytes(level).value_or(0)); };
  const double l1 = cache(1), l2 = cache(2);
  const double b_panel = 4 * k * std::min<double>(blk.nr, n), a_rows = 4 * blk.mr * k;
  const double a_per_panel = a * passes(n, blk.nr);
  Traffic t;
  t[MemoryLevel::kL1] = a_per_panel + b * passes(m, blk.mr) + c + bias;
  t[MemoryLevel::kL2] = (a + b_panel <= l1 ? a : a_per_panel) +
                        (b_panel + a_rows <= l1 ? b : b * passes(m, blk.mr)) + c + bias;
  t[MemoryLevel::kL3] = (a + b_panel <= l2 ? a : a_per_panel) + b + c + bias;
  t[MemoryLevel::kDram] = a + b + c + bias;
  return t;
}

}  // namespace

Traffic GemmF32Traffic(const Workload& w, const kernels::GemmF32Blocking& blk, int threads,
                       const MachineProfile& profile) {
  if (blk.path == kernels::GemmF32Path::kSmall) return SmallPathTraffic(w, blk, profile);
  const double m = double(w.m), n = double(w.n), k = double(w.k);
  // The column blocks the threads actually use when they split columns (see the kernel): the
  // widest for what a block holds, their count for how often A is read.
  const kernels::EvenBlocks split =
      kernels::EvenBlocksForThreads(w.n, blk.nc, blk.nr, std::max(threads, 1));
  const bool columns_split = blk.parallel == kernels::ParallelLoop::kJc;
  const double block_nc = columns_split ? double(split.Widest()) : double(blk.nc);
  const double a = 4 * m * k, b = 4 * k * n, c = 4 * m * n;
  auto passes = [](double dim, double block) { return std::ceil(dim / std::max(block, 1.0)); };
  auto cache = [&](int level) { return double(profile.PricedCacheBytes(level).value_or(0)); };
  const double l1 = cache(1), l2 = cache(2), l3 = cache(3);
  const double bias = w.epilogue == Epilogue::kNone ? 0 : 4 * n;
  const double kc = std::min<double>(blk.kc, k), mc = std::min<double>(blk.mc, m),
               nc = std::min<double>(block_nc, n);
  const double a_block = 4 * mc * kc, b_micro_panel = 4 * kc * blk.nr, b_block = 4 * kc * nc;
  const double k_passes = passes(k, blk.kc);
  const double a_packs = a * (columns_split ? double(split.count) : passes(n, block_nc));

  Traffic t;
  t[MemoryLevel::kL1] = a * passes(n, blk.nr) + b * passes(m, blk.mr) + c * k_passes + bias;
  const double b_packing = blk.pack_b == kernels::BPacking::kAhead        ? 2 * b
                           : blk.pack_b == kernels::BPacking::kOnFirstUse ? b
                                                                          : 0;
  const double packing = (blk.pack_a ? 2 * a_packs : 0) + b_packing;
  const double c_from_l3 = c > l2 ? c * k_passes : c;
  // B's block is read once by packing (or in place), then re-read from L3 `reads` times when it
  // outgrows L2; prepared B has no packing read: it is read `reads` times, or once when it fits.
  auto b_from_l3 = [&](double reads) {
    if (blk.pack_b == kernels::BPacking::kPrepared) return b_block > l2 ? b * reads : b;
    return b + (b_block > l2 ? b * reads : 0);
  };
  if (blk.jr_innermost) {
    const double a_micro_panel = 4 * blk.mr * kc;
    const double b_from_l2 =
        b_block + 2 * a_micro_panel <= l1 ? b * passes(m, blk.mc) : b * passes(m, blk.mr);
    t[MemoryLevel::kL2] = a_packs + b_from_l2 + c * k_passes + packing + bias;
    t[MemoryLevel::kL3] = a_packs + b_from_l3(passes(m, blk.mr)) + c_from_l3 + bias;
  } else {
    // The A block survives the jr loop in an LRU L1 only with room for it, the B micro-panel in
    // use and the next one that displaces it.
    const double a_from_l2 = a_block + 2 * b_micro_panel <= l1 ? a_packs : a * passes(n, blk.nr);
    t[MemoryLevel::kL2] = a_from_l2 + b * passes(m, blk.mc) + c * k_passes + packing + bias;
    t[MemoryLevel::kL3] = a_packs + b_from_l3(passes(m, blk.mc)) + c_from_l3 + bias;
  }
  t[MemoryLevel::kDram] = (a <= l3 ? a : a_packs) + b + (c <= l3 ? c : c * k_passes) + bias;

  auto round_up = [](double x, double to) { return std::ceil(x / to) * to; };
  const double threads_used = std::max(threads, 1);
  const double a_buffer = blk.pack_a ? 4 * round_up(mc, blk.mr) * kc : 0;
  const double b_buffer = blk.pack_b == kernels::BPacking::kPrepared ? 0
                          : blk.pack_b != kernels::BPacking::kInPlace
                              ? 4 * kc * round_up(nc, blk.nr)
                          : std::fmod(nc, blk.nr) != 0 ? 4 * kc * blk.nr
                                                       : 0;
  const bool b_shared =
      blk.parallel == kernels::ParallelLoop::kIc && blk.pack_b == kernels::BPacking::kAhead;
  t.first_touch = threads_used * a_buffer + (b_shared ? 1 : threads_used) * b_buffer;
  return t;
}

}  // namespace rooftune
