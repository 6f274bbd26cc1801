// Reference kernels: plain loops, obviously correct, accumulating in double (f32) or in int64
// checked into s32 (int8). Every optimised kernel is validated against these. Each also returns,
// where it helps validation, the magnitude sum |alpha| * sum_k |a||b| + |beta c| + |bias| that
// bounds the rounding error of any summation order.
#pragma once

#include <cstdint>

#include "framework/workload.h"

namespace rooftune {

// C = alpha * A * B + beta * C, then + bias[n] and ReLU per `epilogue`. beta == 0 never reads C.
// `magnitude`, when not null, receives M x N values with leading dimension n.
void ReferenceGemmF32(int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
                      const float* b, int64_t ldb, float beta, float* c, int64_t ldc,
                      const float* bias, Epilogue epilogue, double* magnitude = nullptr);

// C[m x n] (s32) = A (u8) * B (s8), summed exactly in 64 bits. Returns how many outputs do not
// fit s32 (each stored wrapped, as a 32-bit accumulator would hold it), and the first of them in
// `*first_overflow` (row * n + column) when any.
int64_t ReferenceGemmU8S8(int64_t m, int64_t n, int64_t k, const uint8_t* a, int64_t lda,
                          const int8_t* b, int64_t ldb, int32_t* c, int64_t ldc,
                          int64_t* first_overflow = nullptr);

// The dequantising epilogue, applied once per output:
// y = scale_a * scale_b[n] * (acc - zero_point_a * colsum_b[n]) + bias[n], then optional ReLU.
float ReferenceDequantize(int32_t acc, float scale_a, int32_t zero_point_a, float scale_b,
                          int32_t colsum_b, float bias, bool relu);

// y[n] = W[n x k] x[k] (+ bias, ReLU).
void ReferenceGemvF32(int64_t n, int64_t k, const float* w, int64_t ldw, const float* x, float* y,
                      const float* bias, Epilogue epilogue, double* magnitude = nullptr);

// y[n] = row_scale[n] * sum_k W_s8[n][k] * x[k] (+ bias, ReLU).
void ReferenceGemvS8F32(int64_t n, int64_t k, const int8_t* w, int64_t ldw, const float* row_scale,
                        const float* x, float* y, const float* bias, Epilogue epilogue,
                        double* magnitude = nullptr);

}  // namespace rooftune
