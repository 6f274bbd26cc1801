#include "framework/problem.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "absl/strings/str_format.h"

namespace rooftune {
namespace {

template <typename T>
absl::Status Allocate(Buffer<T>& buffer, size_t count, const char* name) {
  buffer = Buffer<T>(count);
  if (count != 0 && buffer.data() == nullptr) {
    return absl::ResourceExhaustedError(absl::StrFormat("cannot allocate %s (%.1f MiB)", name,
                                                        double(count) * sizeof(T) / (1 << 20)));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Problem> Problem::Create(const Workload& w, uint64_t seed, int64_t row_padding) {
  Problem p;
  p.workload = w;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::uniform_int_distribution<int> u8(0, 255), s8(-128, 127);
  const size_t m = w.m, n = w.n, k = w.k;

  if (w.op == Op::kGemv) {
    p.ldb = k;
    p.ldc = n;
    if (auto s = Allocate(p.a, k, "x"); !s.ok()) return s;
    if (auto s = Allocate(p.c, n, "y"); !s.ok()) return s;
    for (size_t i = 0; i < k; ++i) p.a[i] = uniform(rng);
    if (w.dtype == Dtype::kS8F32 || w.dtype == Dtype::kU8S8) {
      if (auto s = Allocate(p.b_s8, n * k, "W"); !s.ok()) return s;
      if (auto s = Allocate(p.scale_b, n, "row scales"); !s.ok()) return s;
      for (size_t i = 0; i < n * k; ++i) p.b_s8[i] = int8_t(s8(rng));
      for (size_t i = 0; i < n; ++i)
        p.scale_b[i] = 1.0f / 127.0f * (0.5f + 0.5f * std::abs(uniform(rng)));
      if (w.dtype == Dtype::kU8S8) {
        // Activations already quantised to u8; per-row weight sums for the zero-point term.
        if (auto s = Allocate(p.a_u8, k, "x (u8)"); !s.ok()) return s;
        if (auto s = Allocate(p.colsum_b, n, "row sums"); !s.ok()) return s;
        if (auto s = Allocate(p.c_s32, n, "y (s32)"); !s.ok()) return s;
        for (size_t i = 0; i < k; ++i) p.a_u8[i] = uint8_t(u8(rng));
        p.scale_a = 1.0f / 255.0f;
        p.zero_point_a = 128;
        p.RecomputeColumnSums();
      }
    } else {
      if (auto s = Allocate(p.b, n * k, "W"); !s.ok()) return s;
      for (size_t i = 0; i < n * k; ++i) p.b[i] = uniform(rng);
    }
  } else {
    const size_t pad = size_t(std::max<int64_t>(row_padding, 0));
    p.lda = int64_t(k + pad);
    p.ldb = int64_t(n + pad);
    p.ldc = int64_t(n + pad);
    const size_t lda = p.lda, ldb = p.ldb, ldc = p.ldc;
    if (w.dtype == Dtype::kU8S8) {
      if (auto s = Allocate(p.a_u8, m * lda, "A"); !s.ok()) return s;
      if (auto s = Allocate(p.b_s8, k * ldb, "B"); !s.ok()) return s;
      if (auto s = Allocate(p.c_s32, m * ldc, "C"); !s.ok()) return s;
      if (auto s = Allocate(p.colsum_b, n, "column sums"); !s.ok()) return s;
      if (auto s = Allocate(p.scale_b, n, "column scales"); !s.ok()) return s;
      for (size_t i = 0; i < m * lda; ++i) p.a_u8[i] = uint8_t(u8(rng));
      for (size_t i = 0; i < k * ldb; ++i) p.b_s8[i] = int8_t(s8(rng));
      for (size_t i = 0; i < n; ++i)
        p.scale_b[i] = 1.0f / 127.0f * (0.5f + 0.5f * std::abs(uniform(rng)));
      p.scale_a = 1.0f / 255.0f;
      p.zero_point_a = 128;
      p.RecomputeColumnSums();
      if (w.epilogue != Epilogue::kNone) {
        if (auto s = Allocate(p.c, m * ldc, "C (f32)"); !s.ok()) return s;
      }
    } else {
      if (auto s = Allocate(p.a, m * lda, "A"); !s.ok()) return s;
      if (auto s = Allocate(p.b, k * ldb, "B"); !s.ok()) return s;
      if (auto s = Allocate(p.c, m * ldc, "C"); !s.ok()) return s;
      for (size_t i = 0; i < m * lda; ++i) p.a[i] = uniform(rng);
      for (size_t i = 0; i < k * ldb; ++i) p.b[i] = uniform(rng);
    }
  }
  if (w.epilogue != Epilogue::kNone) {
    if (auto s = Allocate(p.bias, n, "bias"); !s.ok()) return s;
    for (size_t i = 0; i < n; ++i) p.bias[i] = uniform(rng);
  }
  return p;
}

void Problem::ResetOutput() {
  if (!c.empty()) std::memset(c.data(), 0, c.size() * sizeof(float));
  if (!c_s32.empty()) std::memset(c_s32.data(), 0, c_s32.size() * sizeof(int32_t));
}

void Problem::RecomputeColumnSums() {
  const size_t k = workload.k, n = workload.n;
  if (workload.op == Op::kGemv) {
    // GEMV keeps W as N x K: the sums run along each row.
    for (size_t j = 0; j < n; ++j) {
      int32_t sum = 0;
      for (size_t q = 0; q < k; ++q) sum += b_s8[j * ldb + q];
      colsum_b[j] = sum;
    }
    return;
  }
  for (size_t j = 0; j < n; ++j) colsum_b[j] = 0;
  for (size_t p = 0; p < k; ++p) {
    for (size_t j = 0; j < n; ++j) colsum_b[j] += b_s8[p * ldb + j];
  }
}

std::vector<ByteSpan> Problem::OperandBytes() const {
  std::vector<ByteSpan> spans;
  for (ByteSpan span : {a.bytes(), b.bytes(), c.bytes(), bias.bytes(), a_u8.bytes(), b_s8.bytes(),
                        c_s32.bytes(), scale_b.bytes(), colsum_b.bytes()}) {
    if (!span.empty()) spans.push_back(span);
  }
  return spans;
}

}  // namespace rooftune
