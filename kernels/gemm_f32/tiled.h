// The textbook tiled matrix product, as a roofline primer draws it: three loops over T x T tiles
// and three inside them, no packing, no register blocking, no vector code of its own. Each tile of
// A and of B is read once per tile of the other dimension, so A and B move 2 n^3 / T elements
// between a level that holds three tiles and the one beyond it. It exists to check that law (the
// primer runs it under a cache simulator), not to be fast.
#pragma once

#include <cstdint>

namespace rooftune::kernels {

// C = alpha * A * B + beta * C, row-major with leading dimensions; beta 0 ignores C's contents.
void TiledGemmF32(const float* a, int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc,
                  int64_t m, int64_t n, int64_t k, int64_t tile, float alpha, float beta);

}  // namespace rooftune::kernels
