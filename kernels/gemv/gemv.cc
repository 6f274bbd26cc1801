#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/gemv/gemv.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include <algorithm>
#include <type_traits>

#include "hwy/cache_control.h"
#include "hwy/highway.h"
#include "kernels/gemv/gemv.h"
#include "oneapi/tbb/blocked_range.h"
#include "oneapi/tbb/parallel_for.h"

HWY_BEFORE_NAMESPACE();
namespace rooftune::kernels {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using DF = hn::ScalableTag<float>;
using DI32 = hn::RebindToSigned<DF>;
using DI8 = hn::Rebind<int8_t, DI32>;  // a quarter-width vector of s8, one per f32 lane

float Finish(float sum, int64_t row, const GemvArgs& g) {
  if (g.row_scale != nullptr) sum *= g.row_scale[row];
  if (g.epilogue != GemmEpilogue::kNone) sum += g.bias[row];
  if (g.epilogue == GemmEpilogue::kBiasRelu && sum < 0.0f) sum = 0.0f;
  return sum;
}

// Loads N weights of row `w` at column k as f32 lanes.
template <typename T>
HWY_INLINE hn::Vec<DF> LoadWeights(DF df, const T* HWY_RESTRICT w, size_t k) {
  if constexpr (std::is_same_v<T, float>) {
    return hn::LoadU(df, w + k);
  } else {
    return hn::ConvertTo(df, hn::PromoteTo(DI32(), hn::LoadU(DI8(), w + k)));
  }
}

// R rows at once, two accumulators per row so the FMA latency is covered even for R = 1. More
// rows also mean more independent streams from DRAM: with 1-byte weights a single core needs many
// lines in flight (Little's law), and each row is a stream the prefetchers follow.
template <typename T, size_t R>
void Rows(const GemvArgs& g, int64_t first, size_t prefetch_bytes) {
  const DF df;
  const size_t N = hn::Lanes(df);
  const size_t K = size_t(g.k);
  const T* w[R];
  for (size_t r = 0; r < R; ++r) w[r] = static_cast<const T*>(g.w) + (first + int64_t(r)) * g.ldw;
  hn::Vec<DF> acc0[R], acc1[R];
  for (size_t r = 0; r < R; ++r) acc0[r] = hn::Zero(df), acc1[r] = hn::Zero(df);
  size_t k = 0;
  const size_t prefetch = prefetch_bytes / sizeof(T);
  for (; k + 2 * N <= K; k += 2 * N) {
    const auto x0 = hn::LoadU(df, g.x + k), x1 = hn::LoadU(df, g.x + k + N);
    if (prefetch != 0 && (k * sizeof(T)) % 64 < 2 * N * sizeof(T)) {
      for (size_t r = 0; r < R; ++r) hwy::Prefetch(w[r] + k + prefetch);
    }
    for (size_t r = 0; r < R; ++r) {
      acc0[r] = hn::MulAdd(LoadWeights(df, w[r], k), x0, acc0[r]);
      acc1[r] = hn::MulAdd(LoadWeights(df, w[r], k + N), x1, acc1[r]);
    }
  }
  for (size_t r = 0; r < R; ++r) {
    float sum = hn::GetLane(hn::SumOfLanes(df, hn::Add(acc0[r], acc1[r])));
    for (size_t j = k; j < K; ++j) sum += float(w[r][j]) * g.x[j];
    g.y[first + int64_t(r)] = Finish(sum, first + int64_t(r), g);
  }
}

// Splits n rows into tasks of `rows_per_task` for the arena's threads, and each task into groups
// of `rows_together` rows, the remainder in smaller groups: `rows(std::integral_constant<size_t,
// R>(), first)` does the R rows from `first`.
template <class Fn>
void ForEachRowGroup(int64_t n, const GemvBlocking& b, const Fn& rows) {
  const int64_t rows_per_task = std::max(1, b.rows_per_task);
  const int64_t tasks = (n + rows_per_task - 1) / rows_per_task;
  tbb::parallel_for(
      tbb::blocked_range<int64_t>(0, tasks, 1),
      [&](const auto& range) {
        for (int64_t t = range.begin(); t < range.end(); ++t) {
          int64_t row = t * rows_per_task;
          const int64_t end = std::min(n, row + rows_per_task);
          auto groups_of = [&](auto size) {
            constexpr int64_t R = int64_t(decltype(size)::value);
            if (R > 1 && b.rows_together < R) return;
            for (; row + R <= end; row += R) rows(size, row);
          };
          groups_of(std::integral_constant<size_t, 16>());
          groups_of(std::integral_constant<size_t, 8>());
          groups_of(std::integral_constant<size_t, 4>());
          groups_of(std::integral_constant<size_t, 2>());
          groups_of(std::integral_constant<size_t, 1>());
        }
      },
      tbb::simple_partitioner());
}

template <typename T>
void GemvTarget(const GemvArgs& g, const GemvBlocking& b) {
  const size_t pf = size_t(b.prefetch_bytes);
  ForEachRowGroup(g.n, b, [&](auto group, int64_t row) {
    Rows<T, decltype(group)::value>(g, row, pf);
  });
}

#if HWY_TARGET == HWY_AVX3_DL
// With VNNI, vpdpbusd adds four u8 x s8 products into each s32 lane in one instruction, without
// the saturating s16 step of vpmaddubsw: exact, and 64 weights per instruction instead of the
// widening path's 32 with three instructions.
template <size_t R>
__attribute__((target(HWY_TARGET_STR ",avx512vnni"))) void DotsVnni(
    const uint8_t* HWY_RESTRICT x, const int8_t* const* w, size_t k, size_t prefetch, int32_t* out) {
  __m512i acc0[R], acc1[R];
  for (size_t r = 0; r < R; ++r) acc0[r] = acc1[r] = _mm512_setzero_si512();
  size_t j = 0;
  for (; j + 128 <= k; j += 128) {
    const __m512i x0 = _mm512_loadu_si512(x + j), x1 = _mm512_loadu_si512(x + j + 64);
    if (prefetch != 0) {
      for (size_t r = 0; r < R; ++r) {
        hwy::Prefetch(w[r] + j + prefetch);
        hwy::Prefetch(w[r] + j + prefetch + 64);
      }
    }
    for (size_t r = 0; r < R; ++r) {
      acc0[r] = _mm512_dpbusd_epi32(acc0[r], x0, _mm512_loadu_si512(w[r] + j));
      acc1[r] = _mm512_dpbusd_epi32(acc1[r], x1, _mm512_loadu_si512(w[r] + j + 64));
    }
  }
  for (size_t r = 0; r < R; ++r) {
    int32_t sum = _mm512_reduce_add_epi32(_mm512_add_epi32(acc0[r], acc1[r]));
    for (size_t q = j; q < k; ++q) sum += int32_t(x[q]) * w[r][q];
    out[r] = sum;
  }
}
#endif

// R rows' u8 x s8 dot products against one x: with VNNI, vpdpbusd; otherwise both widened to
// s16, pairs multiplied and summed into s32 (exact). R rows at once share each load of x and
// stream from DRAM together.
template <size_t R>
void DotsU8S8(const uint8_t* HWY_RESTRICT x, const int8_t* const* w, size_t k, size_t prefetch,
              int32_t* out) {
#if HWY_TARGET == HWY_AVX3_DL
  DotsVnni<R>(x, w, k, prefetch, out);
#elif HWY_TARGET == HWY_SCALAR
  (void)prefetch;
  for (size_t r = 0; r < R; ++r) {
    int32_t sum = 0;
    for (size_t j = 0; j < k; ++j) sum += int32_t(x[j]) * w[r][j];
    out[r] = sum;
  }
#else
  const hn::ScalableTag<int16_t> d16;
  const hn::Repartition<int32_t, decltype(d16)> d32;
  const hn::Rebind<uint8_t, decltype(d16)> du8;
  const hn::Rebind<int8_t, decltype(d16)> di8;
  const size_t N = hn::Lanes(d16);
  hn::Vec<decltype(d32)> acc0[R], acc1[R];
  for (size_t r = 0; r < R; ++r) acc0[r] = hn::Zero(d32), acc1[r] = hn::Zero(d32);
  size_t j = 0;
  for (; j + N <= k; j += N) {
    const auto xv = hn::BitCast(d16, hn::PromoteTo(hn::RebindToUnsigned<decltype(d16)>(), hn::LoadU(du8, x + j)));
    if (prefetch != 0 && j % 64 < N) {
      for (size_t r = 0; r < R; ++r) hwy::Prefetch(w[r] + j + prefetch);
    }
    for (size_t r = 0; r < R; ++r) {
      acc0[r] = hn::ReorderWidenMulAccumulate(d32, xv, hn::PromoteTo(d16, hn::LoadU(di8, w[r] + j)),
                                              acc0[r], acc1[r]);
    }
  }
  for (size_t r = 0; r < R; ++r) {
    int32_t sum = hn::GetLane(hn::SumOfLanes(d32, hn::RearrangeToOddPlusEven(acc0[r], acc1[r])));
    for (size_t q = j; q < k; ++q) sum += int32_t(x[q]) * w[r][q];
    out[r] = sum;
  }
#endif
}

template <size_t R>
void RowsU8S8(const GemvU8S8Args& g, int64_t first, size_t prefetch) {
  const int8_t* w[R];
  for (size_t r = 0; r < R; ++r) w[r] = g.w + (first + int64_t(r)) * g.ldw;
  int32_t acc[R];
  DotsU8S8<R>(g.x, w, size_t(g.k), prefetch, acc);
  for (size_t r = 0; r < R; ++r) {
    const int64_t row = first + int64_t(r);
    if (g.y == nullptr) {
      g.acc[row] = acc[r];
      continue;
    }
    const int32_t centred = acc[r] - g.zero_point_x * g.row_sums[row];
    float v = g.scale_x * g.row_scale[row] * float(centred) + (g.bias != nullptr ? g.bias[row] : 0.0f);
    if (g.relu && v < 0.0f) v = 0.0f;
    g.y[row] = v;
  }
}

void GemvU8S8Target(const GemvU8S8Args& g, const GemvBlocking& b) {
  const size_t pf = size_t(b.prefetch_bytes);
  ForEachRowGroup(g.n, b, [&](auto group, int64_t row) {
    RowsU8S8<decltype(group)::value>(g, row, pf);
  });
}

void GemvF32Target(const GemvArgs& g, const GemvBlocking& b) { GemvTarget<float>(g, b); }
void GemvS8F32Target(const GemvArgs& g, const GemvBlocking& b) { GemvTarget<int8_t>(g, b); }

}  // namespace HWY_NAMESPACE
}  // namespace rooftune::kernels
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace rooftune::kernels {
HWY_EXPORT(GemvF32Target);
HWY_EXPORT(GemvS8F32Target);
HWY_EXPORT(GemvU8S8Target);

namespace {
absl::Status CheckBlocking(const GemvBlocking& b) {
  if (b.rows_together != 1 && b.rows_together != 2 && b.rows_together != 4 && b.rows_together != 8 &&
      b.rows_together != 16) {
    return absl::InvalidArgumentError("rows_together must be 1, 2, 4, 8 or 16");
  }
  if (b.prefetch_bytes < 0) return absl::InvalidArgumentError("prefetch distance must be >= 0");
  return absl::OkStatus();
}

absl::Status Check(const GemvArgs& g, const GemvBlocking& b, bool scaled) {
  if (g.n <= 0 || g.k <= 0) return absl::InvalidArgumentError("GEMV dimensions must be at least 1");
  if (g.ldw < g.k) return absl::InvalidArgumentError("ldw is smaller than a row of W");
  if (scaled && g.row_scale == nullptr) return absl::InvalidArgumentError("s8 weights need row scales");
  if (g.epilogue != GemmEpilogue::kNone && g.bias == nullptr) {
    return absl::InvalidArgumentError("the bias epilogue needs a bias vector");
  }
  return CheckBlocking(b);
}
}  // namespace

absl::Status GemvF32(const GemvArgs& args, const GemvBlocking& blocking) {
  if (absl::Status s = Check(args, blocking, false); !s.ok()) return s;
  GemvArgs unscaled = args;
  unscaled.row_scale = nullptr;
  HWY_DYNAMIC_DISPATCH(GemvF32Target)(unscaled, blocking);
  return absl::OkStatus();
}

absl::Status GemvU8S8(const GemvU8S8Args& g, const GemvBlocking& blocking) {
  if (g.n <= 0 || g.k <= 0) return absl::InvalidArgumentError("GEMV dimensions must be at least 1");
  if (g.ldw < g.k) return absl::InvalidArgumentError("ldw is smaller than a row of W");
  if (g.y == nullptr && g.acc == nullptr) return absl::InvalidArgumentError("no output");
  if (g.y != nullptr && (g.row_scale == nullptr || g.row_sums == nullptr)) {
    return absl::InvalidArgumentError("dequantising needs row scales and row sums");
  }
  if (absl::Status s = CheckBlocking(blocking); !s.ok()) return s;
  HWY_DYNAMIC_DISPATCH(GemvU8S8Target)(g, blocking);
  return absl::OkStatus();
}

absl::Status GemvS8F32(const GemvArgs& args, const GemvBlocking& blocking) {
  if (absl::Status s = Check(args, blocking, true); !s.ok()) return s;
  HWY_DYNAMIC_DISPATCH(GemvS8F32Target)(args, blocking);
  return absl::OkStatus();
}

}  // namespace rooftune::kernels
#endif  // HWY_ONCE
