#include "plugins/builtin/gemm_f32_traffic.h"

#include <cmath>

namespace rooftune {

// Derivation (4-byte elements; ceil() counts a partial block as a whole pass):
//
//   L1 -> registers: each MR x NR micro-tile reads MR + NR floats per k, so A is read N/NR times
//     and B M/MR times; C is read (when beta != 0 or after the first KC block) and written once
//     per KC block.
//       A*ceil(N/NR) + B*ceil(M/MR) + C*(2*ceil(K/KC) - 1)
//   L2 -> L1: the KC x NR micro-panel of B stays in L1 across the ir loop and is fetched once per
//     MC block; the MR x KC micro-panels of A come from L2 for every jr step.
//       A*ceil(N/NR) + B*ceil(M/MC) + C*(2*ceil(K/KC) - 1)
//   L3 -> L2: the MC x KC block of A is packed (read) once per NC block and then stays in L2;
//     the KC x NC block of B is streamed from L3 once per MC block.
//       A*ceil(N/NC) + B*ceil(M/MC) + C*(2*ceil(K/KC) - 1)
//   DRAM -> L3: every operand at least once; A again for every further NC block when A is larger
//     than the L3; C's round trips between KC blocks are charged only when C does not fit in L3.
//       A*(A fits L3 ? 1 : ceil(N/NC)) + B + C*(C fits L3 ? 1 : 2*ceil(K/KC) - 1) (+ C read when beta != 0)
//
// Packing writes (to buffers that stay in L1/L2) are not charged to the outer levels.
Traffic GemmF32Traffic(const Workload& w, const kernels::GemmF32Blocking& blk, int threads,
                       const MachineProfile& profile) {
  (void)threads;
  const double m = double(w.m), n = double(w.n), k = double(w.k);
  const double a = 4 * m * k, b = 4 * k * n, c = 4 * m * n;
  auto passes = [](double dim, double block) { return std::ceil(dim / std::max(block, 1.0)); };
  const double c_round_trips = 2 * passes(k, blk.kc) - 1;
  const double bias = w.epilogue == Epilogue::kNone ? 0 : 4 * n;
  const std::optional<CacheLevel> l3 = profile.DataCache(3);
  const double l3_bytes = l3 ? double(l3->size_bytes) : 0;

  Traffic t;
  t[MemoryLevel::kL1] = a * passes(n, blk.nr) + b * passes(m, blk.mr) + c * c_round_trips + bias;
  t[MemoryLevel::kL2] = a * passes(n, blk.nr) + b * passes(m, blk.mc) + c * c_round_trips + bias;
  t[MemoryLevel::kL3] = a * passes(n, blk.nc) + b * passes(m, blk.mc) + c * c_round_trips + bias;
  t[MemoryLevel::kDram] = a * (a <= l3_bytes ? 1 : passes(n, blk.nc)) + b +
                          c * (c <= l3_bytes ? 1 : c_round_trips) + bias;
  return t;
}

}  // namespace rooftune
