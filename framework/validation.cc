#include "framework/validation.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "absl/strings/str_format.h"
#include "framework/reference.h"

namespace rooftune {

double RelativeTolerance(Dtype dtype, int64_t k) {
  const double eps = dtype == Dtype::kF64 ? std::numeric_limits<double>::epsilon()
                                          : std::numeric_limits<float>::epsilon();
  return 4.0 * eps * (std::sqrt(double(k)) + 2.0);
}

namespace {

// An integer result of `rows` x n dequantised as the kernels' epilogue does: the accumulator is
// exact, so only the epilogue's few roundings remain.
void DequantizeReference(const Problem& p, int64_t rows, ReferenceOutput& ref) {
  const Workload& w = p.workload;
  const size_t outputs = size_t(rows) * size_t(w.n);
  ref.f32.assign(outputs, 0.0f);
  ref.magnitude.assign(outputs, 0.0);
  ref.relative_tolerance = 8.0 * std::numeric_limits<float>::epsilon();
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < w.n; ++j) {
      const size_t at = size_t(i) * w.n + j;
      ref.f32[at] =
          ReferenceDequantize(ref.s32[at], p.scale_a, p.zero_point_a, p.scale_b[j], p.colsum_b[j],
                              p.bias[j], w.epilogue == Epilogue::kBiasRelu);
      const double centred = double(ref.s32[at]) - double(p.zero_point_a) * p.colsum_b[j];
      ref.magnitude[at] =
          std::abs(double(p.scale_a) * p.scale_b[j] * centred) + std::abs(double(p.bias[j]));
    }
  }
}

}  // namespace

ReferenceOutput ComputeReference(const Problem& p) {
  const Workload& w = p.workload;
  ReferenceOutput ref;
  ref.relative_tolerance = RelativeTolerance(w.dtype, w.k);
  const size_t outputs = size_t(w.m) * size_t(w.n);
  if (!p.c.empty()) ref.initial_c.assign(p.c.data(), p.c.data() + p.c.size());

  if (w.dtype == Dtype::kU8S8) {
    ref.s32.assign(outputs, 0);
    int64_t first = -1;
    if (w.op == Op::kGemv) {
      // The integer GEMV is the int8 GEMM with M = 1 and W read as B transposed.
      for (int64_t j = 0; j < w.n; ++j) {
        int64_t at = 0;
        if (ReferenceGemmU8S8(1, 1, w.k, p.a_u8.data(), w.k, p.b_s8.data() + j * p.ldb, 1,
                              &ref.s32[j], 1, &at) > 0) {
          if (ref.s32_overflows++ == 0) first = j;
        }
      }
    } else {
      ref.s32_overflows = ReferenceGemmU8S8(w.m, w.n, w.k, p.a_u8.data(), p.lda, p.b_s8.data(),
                                            p.ldb, ref.s32.data(), w.n, &first);
    }
    if (ref.s32_overflows > 0) {
      ref.first_overflow = absl::StrFormat(
          "the exact sum at C[%d][%d] does not fit the s32 accumulator (K = %d of extreme values): "
          "no int8 path computes this problem",
          first / w.n, first % w.n, w.k);
    }
    if (w.epilogue != Epilogue::kNone) DequantizeReference(p, w.m, ref);
    return ref;
  }
  if (w.op == Op::kGemv) {
    ref.f32.assign(w.n, 0.0f);
    ref.magnitude.assign(w.n, 0.0);
    if (w.dtype == Dtype::kS8F32) {
      ReferenceGemvS8F32(w.n, w.k, p.b_s8.data(), p.ldb, p.scale_b.data(), p.a.data(),
                         ref.f32.data(), p.bias.data(), w.epilogue, ref.magnitude.data());
    } else {
      ReferenceGemvF32(w.n, w.k, p.b.data(), p.ldb, p.a.data(), ref.f32.data(), p.bias.data(),
                       w.epilogue, ref.magnitude.data());
    }
    return ref;
  }
  // f32 GEMM: run the reference on a copy of C with the problem's leading dimension.
  std::vector<float> c = ref.initial_c;
  ref.magnitude.assign(outputs, 0.0);
  ReferenceGemmF32(w.m, w.n, w.k, p.alpha, p.a.data(), p.lda, p.b.data(), p.ldb, p.beta, c.data(),
                   p.ldc, p.bias.data(), w.epilogue, ref.magnitude.data());
  ref.f32.resize(outputs);
  for (int64_t i = 0; i < w.m; ++i) {
    std::memcpy(&ref.f32[size_t(i) * w.n], &c[size_t(i) * p.ldc], sizeof(float) * w.n);
  }
  return ref;
}

void RestoreOutput(Problem& p, const ReferenceOutput& ref) {
  p.ResetOutput();
  if (!ref.initial_c.empty())
    std::memcpy(p.c.data(), ref.initial_c.data(), sizeof(float) * ref.initial_c.size());
}

std::string Validation::Summary() const {
  if (ok)
    return absl::StrFormat("ok (max abs error %.3g, %.2f of tolerance)", max_abs_error,
                           max_error_over_tolerance);
  return absl::StrFormat("WRONG: %d mismatches, max abs error %.6g; first: %s", mismatches,
                         max_abs_error, first_mismatch);
}

bool ElementAgrees(double got, double want, double tolerance) {
  if (std::isnan(want)) return std::isnan(got);
  if (std::isinf(want) || !std::isfinite(got)) return got == want;
  return std::abs(got - want) <= tolerance;
}

Validation CompareWithReference(const Problem& p, const ReferenceOutput& ref) {
  const Workload& w = p.workload;
  Validation v;
  const int64_t rows = w.op == Op::kGemv ? 1 : w.m;
  const int64_t ld = w.op == Op::kGemv ? w.n : p.ldc;
  auto note = [&](int64_t i, int64_t j, double got, double want) {
    if (v.mismatches++ == 0) {
      v.first_mismatch = absl::StrFormat("C[%d][%d] = %.9g, expected %.9g", i, j, got, want);
    }
  };
  if (ref.s32_overflows > 0) {
    // A kernel that matched the wrapped sums would be as wrong as one that did not.
    v.mismatches = int(std::min<int64_t>(ref.s32_overflows, std::numeric_limits<int>::max()));
    v.first_mismatch = ref.first_overflow;
    v.ok = false;
    return v;
  }
  if (p.OutputIsS32()) {
    for (int64_t i = 0; i < rows; ++i) {
      for (int64_t j = 0; j < w.n; ++j) {
        const int64_t got = p.c_s32[size_t(i) * ld + j], want = ref.s32[size_t(i) * w.n + j];
        if (got != want) {
          note(i, j, double(got), double(want));
          v.max_abs_error = std::max(v.max_abs_error, std::abs(double(got - want)));
        }
      }
    }
    v.ok = v.mismatches == 0;
    return v;
  }
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < w.n; ++j) {
      const double got = p.c[size_t(i) * ld + j];
      const double want = ref.f32[size_t(i) * w.n + j];
      const double tolerance = ref.relative_tolerance * ref.magnitude[size_t(i) * w.n + j];
      if (std::isfinite(got) && std::isfinite(want)) {
        const double error = std::abs(got - want);
        v.max_abs_error = std::max(v.max_abs_error, error);
        if (tolerance > 0) {
          v.max_error_over_tolerance = std::max(v.max_error_over_tolerance, error / tolerance);
        }
      }
      const bool good = ElementAgrees(got, want, tolerance);
      if (!good) note(i, j, got, want);
    }
  }
  v.ok = v.mismatches == 0;
  return v;
}

}  // namespace rooftune
