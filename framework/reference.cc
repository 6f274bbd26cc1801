#include "framework/reference.h"

#include <cmath>
#include <limits>
#include <vector>

namespace rooftune {
namespace {

float ApplyEpilogue(double value, const float* bias, int64_t j, Epilogue epilogue) {
  if (epilogue != Epilogue::kNone) value += bias[j];
  float out = float(value);
  // Written as a comparison so NaN propagates (max(NaN, 0) would depend on argument order).
  if (epilogue == Epilogue::kBiasRelu && out < 0.0f) out = 0.0f;
  return out;
}

}  // namespace

void ReferenceGemmF32(int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
                      const float* b, int64_t ldb, float beta, float* c, int64_t ldc,
                      const float* bias, Epilogue epilogue, double* magnitude) {
  std::vector<double> sum(n), abs_sum(n);
  for (int64_t i = 0; i < m; ++i) {
    std::fill(sum.begin(), sum.end(), 0.0);
    std::fill(abs_sum.begin(), abs_sum.end(), 0.0);
    for (int64_t p = 0; p < k; ++p) {
      const double a_ip = a[i * lda + p];
      const float* b_row = b + p * ldb;
      for (int64_t j = 0; j < n; ++j) {
        sum[j] += a_ip * b_row[j];
        abs_sum[j] += std::abs(a_ip * b_row[j]);
      }
    }
    for (int64_t j = 0; j < n; ++j) {
      double value = double(alpha) * sum[j];
      double bound = std::abs(double(alpha)) * abs_sum[j];
      if (beta != 0.0f) {
        value += double(beta) * c[i * ldc + j];
        bound += std::abs(double(beta) * c[i * ldc + j]);
      }
      if (epilogue != Epilogue::kNone) bound += std::abs(double(bias[j]));
      c[i * ldc + j] = ApplyEpilogue(value, bias, j, epilogue);
      if (magnitude != nullptr) magnitude[i * n + j] = bound;
    }
  }
}

int64_t ReferenceGemmU8S8(int64_t m, int64_t n, int64_t k, const uint8_t* a, int64_t lda,
                          const int8_t* b, int64_t ldb, int32_t* c, int64_t ldc,
                          int64_t* first_overflow) {
  std::vector<int64_t> sum(n);
  int64_t overflows = 0;
  for (int64_t i = 0; i < m; ++i) {
    std::fill(sum.begin(), sum.end(), 0);
    for (int64_t p = 0; p < k; ++p) {
      const int64_t a_ip = a[i * lda + p];
      for (int64_t j = 0; j < n; ++j) sum[j] += a_ip * b[p * ldb + j];
    }
    // With |a*b| <= 32640, a sum can leave s32 only past K = 65793.
    for (int64_t j = 0; j < n; ++j) {
      if (sum[j] > std::numeric_limits<int32_t>::max() ||
          sum[j] < std::numeric_limits<int32_t>::min()) {
        if (overflows++ == 0 && first_overflow != nullptr) *first_overflow = i * n + j;
      }
      c[i * ldc + j] = int32_t(uint32_t(uint64_t(sum[j])));
    }
  }
  return overflows;
}

float ReferenceDequantize(int32_t acc, float scale_a, int32_t zero_point_a, float scale_b,
                          int32_t colsum_b, float bias, bool relu) {
  const int64_t centred = int64_t(acc) - int64_t(zero_point_a) * colsum_b;
  float y = scale_a * scale_b * float(centred) + bias;
  if (relu && y < 0.0f) y = 0.0f;
  return y;
}

void ReferenceGemvF32(int64_t n, int64_t k, const float* w, int64_t ldw, const float* x, float* y,
                      const float* bias, Epilogue epilogue, double* magnitude) {
  for (int64_t j = 0; j < n; ++j) {
    double sum = 0, abs_sum = 0;
    for (int64_t p = 0; p < k; ++p) {
      sum += double(w[j * ldw + p]) * x[p];
      abs_sum += std::abs(double(w[j * ldw + p]) * x[p]);
    }
    if (epilogue != Epilogue::kNone) abs_sum += std::abs(double(bias[j]));
    y[j] = ApplyEpilogue(sum, bias, j, epilogue);
    if (magnitude != nullptr) magnitude[j] = abs_sum;
  }
}

void ReferenceGemvS8F32(int64_t n, int64_t k, const int8_t* w, int64_t ldw, const float* row_scale,
                        const float* x, float* y, const float* bias, Epilogue epilogue,
                        double* magnitude) {
  for (int64_t j = 0; j < n; ++j) {
    double sum = 0, abs_sum = 0;
    for (int64_t p = 0; p < k; ++p) {
      sum += double(w[j * ldw + p]) * x[p];
      abs_sum += std::abs(double(w[j * ldw + p]) * x[p]);
    }
    sum *= row_scale[j];
    abs_sum *= std::abs(row_scale[j]);
    if (epilogue != Epilogue::kNone) abs_sum += std::abs(double(bias[j]));
    y[j] = ApplyEpilogue(sum, bias, j, epilogue);
    if (magnitude != nullptr) magnitude[j] = abs_sum;
  }
}

}  // namespace rooftune
