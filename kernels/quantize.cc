#include "kernels/quantize.h"

#include <algorithm>
#include <cmath>

namespace rooftune::kernels {

void QuantizeRowsSymmetricS8(const float* w, int64_t rows, int64_t cols, int64_t ld, int8_t* q,
                             float* scales) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = w + r * ld;
    float max_abs = 0;
    for (int64_t c = 0; c < cols; ++c) max_abs = std::max(max_abs, std::abs(row[c]));
    const float scale = max_abs > 0 ? max_abs / 127.0f : 1.0f;
    scales[r] = scale;
    for (int64_t c = 0; c < cols; ++c) {
      q[r * ld + c] = int8_t(std::clamp(std::lround(row[c] / scale), -127L, 127L));
    }
  }
}

ActivationQuantization QuantizeAsymmetricU8(const float* x, int64_t count, uint8_t* q,
                                            bool seven_bit) {
  float lo = 0, hi = 0;
  for (int64_t i = 0; i < count; ++i) lo = std::min(lo, x[i]), hi = std::max(hi, x[i]);
  const float top = seven_bit ? 127.0f : 255.0f;
  ActivationQuantization a;
  a.scale = hi > lo ? (hi - lo) / top : 1.0f;
  a.zero_point = int32_t(std::lround(-lo / a.scale));
  for (int64_t i = 0; i < count; ++i) {
    const long code = std::lround(x[i] / a.scale) + a.zero_point;
    q[i] = uint8_t(std::clamp(code, 0L, long(top)));
  }
  return a;
}

Accuracy CompareToReference(const float* approx, const float* exact, int64_t count) {
  double dot = 0, na = 0, ne = 0, max_error = 0, max_exact = 0;
  for (int64_t i = 0; i < count; ++i) {
    dot += double(approx[i]) * exact[i];
    na += double(approx[i]) * approx[i];
    ne += double(exact[i]) * exact[i];
    max_error = std::max(max_error, std::abs(double(approx[i]) - exact[i]));
    max_exact = std::max(max_exact, std::abs(double(exact[i])));
  }
  Accuracy a;
  a.max_relative_error = max_exact > 0 ? max_error / max_exact : max_error;
  a.cosine_similarity = na > 0 && ne > 0 ? dot / std::sqrt(na * ne) : (na == ne ? 1 : 0);
  return a;
}

}  // namespace rooftune::kernels
