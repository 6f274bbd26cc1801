// The operands of one workload: aligned, initialised from a seeded generator, pages touched.
// GEMM: C[M x N] = alpha * A[M x K] * B[K x N] + beta * C, all row-major with leading dimensions.
// GEMV: y = W x with W in `b` (N x K, ldb = K), x in `a` (K) and y in `c` (N).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "framework/workload.h"
#include "hwy/aligned_allocator.h"

namespace rooftune {

// A run of bytes in memory: an operand, or what a kernel prepared from one.
using ByteSpan = absl::Span<const uint8_t>;

template <typename T>
ByteSpan BytesOf(const T* data, size_t count) {
  return ByteSpan(reinterpret_cast<const uint8_t*>(data), count * sizeof(T));
}

template <typename T>
class Buffer {
 public:
  Buffer() = default;
  explicit Buffer(size_t size) : data_(hwy::AllocateAligned<T>(size)), size_(size) {
    if (data_ != nullptr && size != 0) std::memset(data_.get(), 0, size * sizeof(T));
  }
  T* data() { return data_.get(); }
  const T* data() const { return data_.get(); }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  ByteSpan bytes() const { return BytesOf(data_.get(), size_); }
  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }

 private:
  hwy::AlignedFreeUniquePtr<T[]> data_;
  size_t size_ = 0;
};

struct Problem {
  Workload workload;
  int64_t lda = 0, ldb = 0, ldc = 0;
  float alpha = 1.0f;
  float beta = 0.0f;  // beta == 0 means C is write-only: its old contents may be NaN.

  // f32 GEMM and GEMV.
  Buffer<float> a, b, c;
  Buffer<float> bias;  // per output column (GEMM) or row (GEMV)

  // int8 path: u8 activations, s8 weights, s32 accumulators; f32 `c` for dequantised output.
  Buffer<uint8_t> a_u8;
  Buffer<int8_t> b_s8;
  Buffer<int32_t> c_s32;
  float scale_a = 1.0f;
  int32_t zero_point_a = 0;
  Buffer<float> scale_b;     // per output column (GEMM) or row (GEMV, s8 weights)
  Buffer<int32_t> colsum_b;  // per output: sum over k of B[k][n] (GEMM) or W[n][k] (GEMV)

  // Allocates and fills every operand the workload reads, with uniform values drawn from
  // `seed`: f32 in [-1, 1], u8 in [0, 255], s8 in [-128, 127]. C is zeroed. GEMM operands get
  // `row_padding` extra elements per row (leading dimension = row + padding), for strided tests.
  static absl::StatusOr<Problem> Create(const Workload& workload, uint64_t seed = 42,
                                        int64_t row_padding = 0);

  // True when the output is the s32 accumulator (int8 GEMM without epilogue).
  bool OutputIsS32() const {
    return workload.dtype == Dtype::kU8S8 && workload.epilogue == Epilogue::kNone;
  }
  size_t OutputSize() const { return size_t(workload.m) * size_t(ldc); }
  // Restores C to what Create left there (zeros), so that beta != 0 runs are repeatable.
  void ResetOutput();
  // Every operand buffer the workload allocated, inputs and outputs: what cold timing evicts.
  std::vector<ByteSpan> OperandBytes() const;
  // Recomputes colsum_b from b_s8 (after a test writes its own weights). GEMV u8s8 keeps its
  // activations in a_u8 and its raw accumulators in c_s32, like the int8 GEMM.
  void RecomputeColumnSums();
};

}  // namespace rooftune
