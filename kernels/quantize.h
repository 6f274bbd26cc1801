// Quantisation from f32: per-output-channel symmetric s8 weights and per-tensor asymmetric u8
// activations, and an accuracy report of a quantised result against the f32 one.
#pragma once

#include <cstdint>
#include <vector>

namespace rooftune::kernels {

// Each of `rows` rows of `cols` values gets scale = max|row| / 127 and q = round(v / scale):
// symmetric, so zero stays exactly zero and no zero-point enters the integer dot product.
void QuantizeRowsSymmetricS8(const float* w, int64_t rows, int64_t cols, int64_t ld, int8_t* q,
                             float* scales);

struct ActivationQuantization {
  float scale = 1;
  int32_t zero_point = 0;
};
// One scale and zero point for the whole tensor, from its min and max (including 0, so that 0 is
// exact); `seven_bit` limits codes to 0..127, which keeps vpmaddubsw's s16 sums exact.
ActivationQuantization QuantizeAsymmetricU8(const float* x, int64_t count, uint8_t* q,
                                            bool seven_bit = false);

struct Accuracy {
  double max_relative_error = 0;  // max |a - b| / max |b|
  double cosine_similarity = 0;
};
Accuracy CompareToReference(const float* approx, const float* exact, int64_t count);

}  // namespace rooftune::kernels
