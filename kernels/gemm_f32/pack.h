// Packing for the fp32 GEMM: copies blocks of A and B into the contiguous, zero-padded panel
// layouts the micro-kernel streams through. Padding with zeros lets edge tiles run the full-size
// micro-kernel without reading outside the operands.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>

namespace rooftune::kernels {

inline size_t DivCeil(size_t a, size_t b) { return (a + b - 1) / b; }
inline size_t RoundUp(size_t a, size_t b) { return DivCeil(a, b) * b; }

// Packing reads short runs of many rows, ldb (or lda) apart: a few lines of each, too few for the
// hardware prefetchers to lock on, so a pack from DRAM would have only a few misses in flight.
// Each row's run is fetched this many rows ahead of its copy.
constexpr size_t kPackRowsAhead = 8;

inline void PrefetchRun(const float* run, size_t floats) {
  const char* bytes = reinterpret_cast<const char*>(run);
  for (size_t offset = 0; offset < floats * sizeof(float); offset += 64) {
    __builtin_prefetch(bytes + offset);
  }
  __builtin_prefetch(bytes + floats * sizeof(float) - 1);  // a run need not start a line
}

// A block (mc x kc, row stride lda) -> panels of MR rows; within a panel, for each k the MR values
// of that column: dst[panel][k][i]. A partial last panel holds `edge_rows` values per k (at
// least its rows, at most MR: the height of the kernel that runs it); rows past mc are zero.
inline void PackABlock(const float* a, size_t lda, size_t mc, size_t kc, size_t MR,
                       size_t edge_rows, float* dst) {
  for (size_t ir = 0; ir < mc; ir += MR) {
    const size_t mr = std::min(MR, mc - ir);
    const size_t rows = mr < MR ? edge_rows : MR;
    float* panel = dst + ir * kc;
    for (size_t i = 0; i < mr; ++i) {
      const float* row = a + (ir + i) * lda;
      if (ir + i + kPackRowsAhead < mc) PrefetchRun(row + kPackRowsAhead * lda, kc);
      for (size_t p = 0; p < kc; ++p) panel[p * rows + i] = row[p];
    }
    for (size_t i = mr; i < rows; ++i) {
      for (size_t p = 0; p < kc; ++p) panel[p * rows + i] = 0.0f;
    }
  }
}

// One NR-wide panel of B (kc x nr valid columns, row stride ldb) -> dst[k][j], NR per row,
// columns past nr zero.
inline void PackBPanel(const float* b, size_t ldb, size_t kc, size_t nr, size_t NR, float* dst) {
  for (size_t p = 0; p < kc; ++p) {
    if (p + kPackRowsAhead < kc) PrefetchRun(b + (p + kPackRowsAhead) * ldb, nr);
    std::memcpy(dst + p * NR, b + p * ldb, nr * sizeof(float));
    if (nr < NR) std::memset(dst + p * NR + nr, 0, (NR - nr) * sizeof(float));
  }
}

// A whole KC x NC block of B as consecutive NR panels.
inline void PackBBlock(const float* b, size_t ldb, size_t kc, size_t nc, size_t NR, float* dst) {
  for (size_t jr = 0; jr < nc; jr += NR) {
    PackBPanel(b + jr, ldb, kc, std::min(NR, nc - jr), NR, dst + jr * kc);
  }
}

}  // namespace rooftune::kernels
