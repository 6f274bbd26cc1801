// One tile of the fp32 GEMM's small path: what its micro-kernel reads and writes. Shared by the
// per-target micro-kernels (small.cc) and the plan that walks the tiles (GemmF32SmallPlan).
#pragma once

#include <array>
#include <cstddef>

namespace rooftune::kernels {

struct SmallTile {
  size_t k;
  const float* a;  // the tile's first row of A, rows lda apart
  size_t lda;
  const float* b;  // the tile's first column of B, rows ldb apart
  size_t ldb;
  float* c;
  size_t ldc;
  size_t last;  // lanes of the tile's last vector (all of them unless the kernel is partial)
  float alpha, beta;
  const float* bias;  // at the tile's first column, or null
  bool relu;
};

// A micro-kernel of one height, width and edge, compiled for the CPU's best target.
using SmallTileFn = void (*)(const SmallTile&);

// The micro-kernels of an M x N product's four kinds of tile, resolved for the best target.
struct SmallTileKernels {
  bool ok = false;              // false: the target has no micro-kernel of the asked block
  SmallTileFn tile[2][2] = {};  // [at the bottom edge][at the right edge]
  // For N = 1 with B's column contiguous: MR dot products, and the bottom edge's.
  std::array<SmallTileFn, 2> dot = {};
  size_t lanes = 0;        // f32 lanes of the target's vector
  size_t edge_last = 0;    // lanes of the right-edge panel's last vector
  bool half_edge = false;  // the right-edge panel runs on half vectors (edge_last <= lanes / 2)
  bool two_banks = false;  // a full tile keeps two banks of sums on a product deep enough
  const char* target = "";
};

}  // namespace rooftune::kernels
