// The int8 GEMM's epilogue, applied once per output after the whole K:
//   y = scale_a * scale_b[n] * (acc - zero_point_a * colsum_b[n]) + bias[n]  (then ReLU)
#pragma once

#include <cstdint>

namespace rooftune::kernels {

struct Dequant {
  float scale_a;
  int32_t zero_point_a;
  const float* scale_b;   // at the tile's first column
  const int32_t* colsum;  // at the tile's first column
  const float* bias;      // at the tile's first column, or null
  bool relu;
};

inline float Dequantize(int32_t acc, const Dequant& dq, int64_t j) {
  const int32_t centred = acc - dq.zero_point_a * dq.colsum[j];
  float v = dq.scale_a * dq.scale_b[j] * float(centred) + (dq.bias != nullptr ? dq.bias[j] : 0.0f);
  return dq.relu && v < 0.0f ? 0.0f : v;
}

}  // namespace rooftune::kernels
