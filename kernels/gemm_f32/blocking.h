// The analytic blocking for the fp32 GEMM, after Low, Igual, Smith and Quintana-Orti, "Analytical
// Modeling Is Enough for High-Performance BLIS" (ACM TOMS 2016): the register block from the
// register file and FMA latency x pipes, and KC, MC, NC from the capacity and associativity of
// L1, L2 and L3, so that an untuned call is already good and the tuner searches around it.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/gemm_f32/gemm_f32.h"

namespace rooftune::kernels {

struct CacheGeometry {
  uint64_t size_bytes = 0;  // 0: the level does not exist or is unknown
  int ways = 8;
  int line_bytes = 64;
};

struct GemmMachine {
  int vector_registers = 16;
  int lanes = 8;  // f32 lanes per vector
  int fma_latency_cycles = 4;
  int fma_pipes = 2;
  CacheGeometry l1, l2, l3;  // l3 per core share when shared
  std::vector<MicroKernelShape> micro_kernels;
  // The probe's fastest one-thread reader of DRAM fetched its stream into L2 ahead of its loads
  // (prefetcht1), not into L1: a prepared B, one stream from DRAM, is fetched the same way.
  bool stream_prefetched_into_l2 = false;
};

// The register block, then cache blocks for the jr-innermost order (A's micro-panel in L1, B's
// KC x NC block in L2, A's MC x KC block in L3).
GemmF32Blocking AnalyticBlocking(const GemmMachine& machine);

// The same register block with BLIS's own order (B's micro-panel in L1, A's block in L2, B's block
// in L3): better when there are too few rows for a B micro-panel to be reused from L2.
GemmF32Blocking BlockingForBInL1(const GemmMachine& machine);

// For a C of `m` rows, too few to repay packing B on each call (decode shapes). B is fetched ahead
// of the tiles, and read as `b`:
//   kPrepared (packed once ahead of the calls, as inference packs weights): one stream in the
//     order the tiles read it, fetched into the level the machine's fastest reader fetched into.
//     The register block pads M the least in the fewest row panels, as each panel re-reads B's
//     micro-panel. With one panel nothing of B is re-read, but every KC block re-reads C's rows,
//     which B's stream has pushed out since: KC as deep as A's MR x KC micro-panel fits half of
//     L2. With more, B's KC x NR micro-panel, re-read by each panel, takes half of L2 (half of L1
//     where L2 is unknown).
//   kInPlace: the register block pads M the least with the fewest loads per FMA. Each of B's rows
//     is touched once per column block; the KC x NR micro-panel in use and the next one, being
//     prefetched, share half of L1, which also keeps the number of B rows streamed at once (KC)
//     small.
GemmF32Blocking BlockingForFewRows(const GemmMachine& machine, int64_t m, BPacking b);

// For a C of `n` columns, at most kFewColumnPanels panels of NR: an MR x KC micro-panel of A then
// serves that few tiles, so keeping it in L1 buys little, while the KC x N block of B is re-read
// by every row panel. The jr-innermost order with KC grown until that block fills half the L2
// ways (fewer passes over C).
constexpr int64_t kFewColumnPanels = 2;
GemmF32Blocking BlockingForFewColumns(const GemmMachine& machine, int64_t n);

}  // namespace rooftune::kernels
