#include "kernels/gemm_f32/tiled.h"

#include <algorithm>

namespace rooftune::kernels {

void TiledGemmF32(const float* a, int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc,
                  int64_t m, int64_t n, int64_t k, int64_t tile, float alpha, float beta) {
  for (int64_t i = 0; i < m; ++i) {
    float* row = c + i * ldc;
    if (beta == 0) {
      std::fill(row, row + n, 0.0f);
    } else {
      for (int64_t j = 0; j < n; ++j) row[j] *= beta;
    }
  }
  // The C tile stays while the k tiles pass: per (i, j) tile, one A tile and one B tile each.
  for (int64_t i0 = 0; i0 < m; i0 += tile) {
    const int64_t i1 = std::min(m, i0 + tile);
    for (int64_t j0 = 0; j0 < n; j0 += tile) {
      const int64_t j1 = std::min(n, j0 + tile);
      for (int64_t p0 = 0; p0 < k; p0 += tile) {
        const int64_t p1 = std::min(k, p0 + tile);
        for (int64_t i = i0; i < i1; ++i) {
          float* c_row = c + i * ldc;
          for (int64_t p = p0; p < p1; ++p) {
            const float scaled = alpha * a[i * lda + p];
            const float* b_row = b + p * ldb;
            for (int64_t j = j0; j < j1; ++j) c_row[j] += scaled * b_row[j];
          }
        }
      }
    }
  }
}

}  // namespace rooftune::kernels
