// foreach_target.h must follow the define, before any other include.
// clang-format off
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/gemv/gemv.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
// clang-format on

#include "kernels/gemv/gemv.h"

#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "hwy/highway.h"
#include "kernels/code_paths.h"
#include "kernels/gemv/row_groups.h"
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

// Where a group of R rows of W keeps element (r, k): row-major in place (the group's rows
// `row_step` rows of W apart), or packed by PackGemvWeights, where a row is contiguous only
// within a 64-byte line.
template <typename T, size_t R, bool kPacked>
struct RowGroup {
  const T* base;       // in place: the group's first row; packed: the group's block
  size_t ldw;          // in place only, as the steps below (GroupRows): W's leading dimension,
  size_t row_step;     // rows of W between the group's rows,
  size_t stream_step;  // and from a row to where its stream goes on
  size_t k;            // elements per row

  static constexpr size_t kLine = kPackedLineBytes / sizeof(T);  // elements per line

  // Columns a vector loop may cover with At: whole lines when packed (the partial last line of
  // each row lies after the group's lines).
  size_t VectorColumns() const {
    if constexpr (kPacked) return k / kLine * kLine;
    return k;
  }
  // Element (r, col), col < VectorColumns(), is RowStart(r) + Column(col); a vector from there
  // stays within one line. A loop whose steps start on a line finds element (r, step + j) at
  // RowStart(r) + Column(step) + Column(j): a base register and constant displacements, where
  // the whole offset worked out for every load costs more instructions than the loads and their
  // conversions.
  HWY_INLINE const T* RowStart(size_t r) const {
    if constexpr (kPacked) return base + r * kLine;
    return base + r * row_step * ldw;
  }
  static HWY_INLINE size_t Column(size_t col) {
    if constexpr (kPacked) return col / kLine * R * kLine + col % kLine;
    return col;
  }
  HWY_INLINE const T* At(size_t r, size_t col) const { return RowStart(r) + Column(col); }
  // Any element, for the scalar remainder.
  const T* Element(size_t r, size_t col) const {
    if constexpr (kPacked) return base + PackedGroupOffset(R, k, sizeof(T), r, col);
    return base + r * row_step * ldw + col;
  }
  // Where the kernel reads `ahead` elements after (r, col), for a software prefetch: packed,
  // further along the group's one stream; in place, where row r's stream goes on
  // (InPlaceAheadOffset). May point past W; a prefetch there does nothing.
  HWY_INLINE const T* Ahead(size_t r, size_t col, size_t ahead) const {
    if constexpr (kPacked) return At(r, col) + ahead;
    return base + InPlaceAheadOffset(k, ldw, row_step, stream_step, r, col, ahead);
  }
};

template <typename T, size_t R, bool kPacked>
RowGroup<T, R, kPacked> GroupAt(const void* w, const GroupRows& rows, int64_t ldw, int64_t k) {
  // Packed groups lie where their rows were: the block of rows [first, first + R) of a dense W.
  const T* data = static_cast<const T*>(w);
  return {kPacked ? data + rows.first * k : data + rows.first * ldw, size_t(ldw),
          size_t(rows.row_step), size_t(rows.stream_step), size_t(k)};
}

// Loads N weights from `w` as f32 lanes.
template <typename T>
HWY_INLINE hn::Vec<DF> LoadWeights(DF df, const T* HWY_RESTRICT w) {
  if constexpr (std::is_same_v<T, float>) {
    return hn::LoadU(df, w);
  } else {
    return hn::ConvertTo(df, hn::PromoteTo(DI32(), hn::LoadU(DI8(), w)));
  }
}

// Software prefetch through W: how far ahead, in elements of W (0: none), and into which level.
struct WPrefetch {
  size_t ahead = 0;
  bool into_l2 = false;  // prefetcht1, as far as L2, instead of prefetcht0
};

template <typename T, size_t R, bool kPacked>
HWY_INLINE void PrefetchAhead(const RowGroup<T, R, kPacked>& w, size_t r, size_t col,
                              const WPrefetch& pf) {
  const T* p = w.Ahead(r, col, pf.ahead);
  if (pf.into_l2) {
    __builtin_prefetch(p, 0, 2);
  } else {
    __builtin_prefetch(p, 0, 3);
  }
}

// R rows at once. More rows mean more independent streams from DRAM when W is read in place
// (with 1-byte weights a single core needs many lines in flight: Little's law), and fewer loads
// of x. Eight rows or more cover the FMA latency with one accumulator each; fewer get two, and
// 16 rows with two would not fit the register file. A step of the loop covers two vectors or a
// whole line, whichever is more (1-byte weights: a line is four AVX-512 vectors), so that every
// step starts on a line (RowGroup::Column).
template <typename T, size_t R, bool kPacked>
void Rows(const GemvArgs& g, const GroupRows& rows, const WPrefetch& pf) {
  using Group = RowGroup<T, R, kPacked>;
  const DF df;
  const size_t N = hn::Lanes(df);
  const size_t K = size_t(g.k);
  const Group w = GroupAt<T, R, kPacked>(g.w, rows, g.ldw, g.k);
  const size_t step = std::max(2 * N, Group::kLine);
  constexpr bool kOneAccumulator = R >= 8;
  hn::Vec<DF> acc0[R], acc1[kOneAccumulator ? 1 : R];
  for (size_t r = 0; r < R; ++r) acc0[r] = hn::Zero(df);
  for (auto& a : acc1) a = hn::Zero(df);
  const T* row_start[R];
  for (size_t r = 0; r < R; ++r) row_start[r] = w.RowStart(r);
  size_t k = 0;
  for (const size_t end = w.VectorColumns(); k + step <= end; k += step) {
    if (pf.ahead != 0) {
      for (size_t line = 0; line < step; line += Group::kLine) {
        for (size_t r = 0; r < R; ++r) PrefetchAhead(w, r, k + line, pf);
      }
    }
    const size_t at = Group::Column(k);
    for (size_t j = 0; j < step; j += 2 * N) {
      const auto x0 = hn::LoadU(df, g.x + k + j), x1 = hn::LoadU(df, g.x + k + j + N);
      const size_t at0 = at + Group::Column(j), at1 = at + Group::Column(j + N);
      for (size_t r = 0; r < R; ++r) {
        acc0[r] = hn::MulAdd(LoadWeights(df, row_start[r] + at0), x0, acc0[r]);
        if constexpr (kOneAccumulator) {
          acc0[r] = hn::MulAdd(LoadWeights(df, row_start[r] + at1), x1, acc0[r]);
        } else {
          acc1[r] = hn::MulAdd(LoadWeights(df, row_start[r] + at1), x1, acc1[r]);
        }
      }
    }
  }
  for (size_t r = 0; r < R; ++r) {
    const hn::Vec<DF> both = kOneAccumulator ? acc0[r] : hn::Add(acc0[r], acc1[r]);
    float sum = hn::GetLane(hn::SumOfLanes(df, both));
    for (size_t j = k; j < K; ++j) sum += float(*w.Element(r, j)) * g.x[j];
    g.y[rows.first + int64_t(r) * rows.row_step] = sum;  // finished by the task (FinishRows)
  }
}

// Scales, biases and rectifies rows [begin, end) of y in place, in row order, once a task's
// groups have left their dot products there (see GemvU8S8Target for why not group by group).
void FinishRows(const GemvArgs& g, int64_t begin, int64_t end) {
  if (g.row_scale == nullptr && g.epilogue == GemmEpilogue::kNone) return;
  for (int64_t row = begin; row < end; ++row) g.y[row] = Finish(g.y[row], row, g);
}

// Splits n rows into tasks of `rows_per_task` for the arena's threads, and each task into groups
// (ForEachGroupIn): `rows(std::integral_constant<size_t, R>(), group, begin)` does the group's R
// rows of the task from row `begin`, and `task_done(begin, end)` follows the task's last group.
template <class Fn, class Done>
void ForEachRowGroup(int64_t n, const GemvBlocking& b, const Fn& rows, const Done& task_done) {
  const int64_t rows_per_task = RowsPerTask(b);
  const int64_t tasks = (n + rows_per_task - 1) / rows_per_task;
  tbb::parallel_for(
      tbb::blocked_range<int64_t>(0, tasks, 1),
      [&](const auto& range) {
        for (int64_t t = range.begin(); t < range.end(); ++t) {
          const int64_t begin = t * rows_per_task, end = std::min(n, begin + rows_per_task);
          ForEachGroupIn(begin, end, b.rows_together, b.spread_groups, [&](const GroupRows& group) {
            switch (group.size) {
              case 16: return rows(std::integral_constant<size_t, 16>(), group, begin);
              case 8: return rows(std::integral_constant<size_t, 8>(), group, begin);
              case 4: return rows(std::integral_constant<size_t, 4>(), group, begin);
              case 2: return rows(std::integral_constant<size_t, 2>(), group, begin);
              default: return rows(std::integral_constant<size_t, 1>(), group, begin);
            }
          });
          task_done(begin, end);
        }
      },
      tbb::simple_partitioner());
}

template <typename T>
void GemvTarget(const GemvArgs& g, const GemvBlocking& b) {
  if (RecordingCodePaths()) {
    NoteCodePath(absl::StrCat(sizeof(T) == 1 ? "gemv_s8f32 " : "gemv_f32 ",
                              hwy::TargetName(HWY_TARGET), b.packed_w ? " grouped" : " row-major",
                              b.spread_groups ? " spread" : " neighbours"));
  }
  const WPrefetch pf{size_t(b.prefetch_bytes) / sizeof(T), b.prefetch_into_l2};
  ForEachRowGroup(
      g.n, b,
      [&](auto size, const GroupRows& rows, int64_t) {
        if (b.packed_w) {
          Rows<T, decltype(size)::value, true>(g, rows, pf);
        } else {
          Rows<T, decltype(size)::value, false>(g, rows, pf);
        }
      },
      [&](int64_t begin, int64_t end) { FinishRows(g, begin, end); });
}

#if HWY_TARGET == HWY_AVX3_DL
// With VNNI, vpdpbusd adds four u8 x s8 products into each s32 lane in one instruction, without
// the saturating s16 step of vpmaddubsw: exact, and 64 weights per instruction instead of the
// widening path's 32 with three instructions. Accumulators as in Rows.
template <size_t R, bool kPacked>
__attribute__((target(HWY_TARGET_STR ",avx512vnni"))) void DotsVnni(
    const uint8_t* HWY_RESTRICT x, const RowGroup<int8_t, R, kPacked>& w, const WPrefetch& pf,
    int32_t* out) {
  constexpr bool kOneAccumulator = R >= 8;
  __m512i acc0[R], acc1[kOneAccumulator ? 1 : R];
  for (auto& a : acc0) a = _mm512_setzero_si512();
  for (auto& a : acc1) a = _mm512_setzero_si512();
  size_t j = 0;
  for (const size_t end = w.VectorColumns(); j + 128 <= end; j += 128) {
    const __m512i x0 = _mm512_loadu_si512(x + j), x1 = _mm512_loadu_si512(x + j + 64);
    if (pf.ahead != 0) {
      for (size_t r = 0; r < R; ++r) {
        PrefetchAhead(w, r, j, pf);
        PrefetchAhead(w, r, j + 64, pf);
      }
    }
    for (size_t r = 0; r < R; ++r) {
      acc0[r] = _mm512_dpbusd_epi32(acc0[r], x0, _mm512_loadu_si512(w.At(r, j)));
      if constexpr (kOneAccumulator) {
        acc0[r] = _mm512_dpbusd_epi32(acc0[r], x1, _mm512_loadu_si512(w.At(r, j + 64)));
      } else {
        acc1[r] = _mm512_dpbusd_epi32(acc1[r], x1, _mm512_loadu_si512(w.At(r, j + 64)));
      }
    }
  }
  // The rest (under 128 columns), 64 at a time: a whole line, then the row's partial last line
  // through masked loads, which read nothing past it. A scalar loop here is what GCC vectorises
  // into the VEX-encoded vpdpbusd (AVX-VNNI), which CPUs with AVX-512 VNNI alone (Zen 4, Ice
  // Lake) do not have.
  for (; j < w.k; j += 64) {
    const __mmask64 m = _bzhi_u64(~uint64_t{0}, unsigned(std::min<size_t>(64, w.k - j)));
    const __m512i xv = _mm512_maskz_loadu_epi8(m, x + j);
    for (size_t r = 0; r < R; ++r) {
      acc0[r] = _mm512_dpbusd_epi32(acc0[r], xv, _mm512_maskz_loadu_epi8(m, w.Element(r, j)));
    }
  }
  for (size_t r = 0; r < R; ++r) {
    const __m512i both = kOneAccumulator ? acc0[r] : _mm512_add_epi32(acc0[r], acc1[r]);
    out[r] = _mm512_reduce_add_epi32(both);
  }
}
#endif

#if HWY_TARGET != HWY_SCALAR
// R rows' u8 x s8 dot products with both widened to s16, pairs multiplied and summed into s32
// (exact), for targets without VNNI and, where it streams faster, with it.
template <size_t R, bool kPacked>
void DotsWidening(const uint8_t* HWY_RESTRICT x, const RowGroup<int8_t, R, kPacked>& w,
                  const WPrefetch& pf, int32_t* out) {
  const hn::ScalableTag<int16_t> d16;
  const hn::Repartition<int32_t, decltype(d16)> d32;
  const hn::Rebind<uint8_t, decltype(d16)> du8;
  const hn::Rebind<int8_t, decltype(d16)> di8;
  const size_t N = hn::Lanes(d16);
  hn::Vec<decltype(d32)> acc0[R], acc1[R];
  for (size_t r = 0; r < R; ++r) acc0[r] = hn::Zero(d32), acc1[r] = hn::Zero(d32);
  size_t j = 0;
  for (const size_t end = w.VectorColumns(); j + N <= end; j += N) {
    const auto xv = hn::BitCast(
        d16, hn::PromoteTo(hn::RebindToUnsigned<decltype(d16)>(), hn::LoadU(du8, x + j)));
    if (pf.ahead != 0 && j % 64 < N) {
      for (size_t r = 0; r < R; ++r) PrefetchAhead(w, r, j, pf);
    }
    for (size_t r = 0; r < R; ++r) {
      acc0[r] = hn::ReorderWidenMulAccumulate(
          d32, xv, hn::PromoteTo(d16, hn::LoadU(di8, w.At(r, j))), acc0[r], acc1[r]);
    }
  }
  // The rest, contiguous in both layouts, N at a time through zero-padded copies: a scalar loop
  // here is what GCC vectorises into the VEX-encoded vpdpbusd on the AVX3_DL target (see
  // DotsVnni).
  for (; j < w.k; j += N) {
    const size_t n = std::min(N, w.k - j);
    uint8_t x_rest[HWY_MAX_BYTES] = {};
    std::memcpy(x_rest, x + j, n);
    const auto xv = hn::BitCast(
        d16, hn::PromoteTo(hn::RebindToUnsigned<decltype(d16)>(), hn::LoadU(du8, x_rest)));
    for (size_t r = 0; r < R; ++r) {
      int8_t w_rest[HWY_MAX_BYTES] = {};
      std::memcpy(w_rest, w.Element(r, j), n);
      acc0[r] = hn::ReorderWidenMulAccumulate(d32, xv, hn::PromoteTo(d16, hn::LoadU(di8, w_rest)),
                                              acc0[r], acc1[r]);
    }
  }
  for (size_t r = 0; r < R; ++r) {
    out[r] = hn::GetLane(hn::SumOfLanes(d32, hn::RearrangeToOddPlusEven(acc0[r], acc1[r])));
  }
}
#endif

// R rows' u8 x s8 dot products against one x, exact: with VNNI vpdpbusd unless `widen`, else
// DotsWidening. R rows at once share each load of x and stream from DRAM together.
template <size_t R, bool kPacked>
void DotsU8S8(const uint8_t* HWY_RESTRICT x, const RowGroup<int8_t, R, kPacked>& w,
              const WPrefetch& pf, bool widen, int32_t* out) {
#if HWY_TARGET == HWY_AVX3_DL
  if (!widen) return DotsVnni<R, kPacked>(x, w, pf, out);
  DotsWidening<R, kPacked>(x, w, pf, out);
#elif HWY_TARGET == HWY_SCALAR
  (void)pf, (void)widen;
  for (size_t r = 0; r < R; ++r) {
    int32_t sum = 0;
    for (size_t j = 0; j < w.k; ++j) sum += int32_t(x[j]) * *w.Element(r, j);
    out[r] = sum;
  }
#else
  (void)widen;
  DotsWidening<R, kPacked>(x, w, pf, out);
#endif
}

// A group's dot products, row `row` of W into out[row - out_first].
template <size_t R, bool kPacked>
void RowsU8S8(const GemvU8S8Args& g, const GroupRows& rows, const WPrefetch& pf, bool widen,
              int32_t* out, int64_t out_first) {
  int32_t acc[R];
  DotsU8S8<R, kPacked>(g.x, GroupAt<int8_t, R, kPacked>(g.w, rows, g.ldw, g.k), pf, widen, acc);
  for (size_t r = 0; r < R; ++r) out[rows.first + int64_t(r) * rows.row_step - out_first] = acc[r];
}

// Dequantises rows [begin, end), their dot products in `acc[row - begin]`.
void DequantizeU8S8(const GemvU8S8Args& g, int64_t begin, int64_t end, const int32_t* acc) {
  for (int64_t row = begin; row < end; ++row) {
    const int32_t centred = acc[row - begin] - g.zero_point_x * g.row_sums[row];
    float v =
        g.scale_x * g.row_scale[row] * float(centred) + (g.bias != nullptr ? g.bias[row] : 0.0f);
    if (g.relu && v < 0.0f) v = 0.0f;
    g.y[row] = v;
  }
}

// With an epilogue, a task's groups leave their dot products in a per-thread buffer, and the task
// dequantises them in row order once its groups are done: with spread groups, dequantising each
// group's rows as it finished (rows G apart in four arrays) cost a few percent of the stream
// rate.
void GemvU8S8Target(const GemvU8S8Args& g, const GemvBlocking& b) {
  if (RecordingCodePaths()) {
    NoteCodePath(absl::StrCat(
        "gemv_u8s8 ", hwy::TargetName(HWY_TARGET), b.packed_w ? " grouped" : " row-major",
        b.spread_groups ? " spread" : " neighbours", b.widen_dot ? " s16_pairs" : " fastest"));
  }
  const WPrefetch pf{size_t(b.prefetch_bytes), b.prefetch_into_l2};
  thread_local std::vector<int32_t> task_acc;
  ForEachRowGroup(
      g.n, b,
      [&](auto size, const GroupRows& rows, int64_t begin) {
        int32_t* out = g.acc;
        int64_t out_first = 0;
        if (g.y != nullptr) {
          task_acc.resize(std::max(task_acc.size(), size_t(RowsPerTask(b))));
          out = task_acc.data(), out_first = begin;
        }
        if (b.packed_w) {
          RowsU8S8<decltype(size)::value, true>(g, rows, pf, b.widen_dot, out, out_first);
        } else {
          RowsU8S8<decltype(size)::value, false>(g, rows, pf, b.widen_dot, out, out_first);
        }
      },
      [&](int64_t begin, int64_t end) {
        if (g.y != nullptr) DequantizeU8S8(g, begin, end, task_acc.data());
      });
}

void GemvF32Target(const GemvArgs& g, const GemvBlocking& b) { GemvTarget<float>(g, b); }
void GemvS8F32Target(const GemvArgs& g, const GemvBlocking& b) { GemvTarget<int8_t>(g, b); }

int RowsTogetherThatFitTarget() {
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
  return 16;  // 32 vector registers: one accumulator a row, x and the weights beside them
#else
  return 4;  // 16 (or fewer): the widening u8 x s8 path keeps two accumulators a row
#endif
}

}  // namespace HWY_NAMESPACE
}  // namespace rooftune::kernels
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace rooftune::kernels {
HWY_EXPORT(GemvF32Target);
HWY_EXPORT(GemvS8F32Target);
HWY_EXPORT(GemvU8S8Target);
HWY_EXPORT(RowsTogetherThatFitTarget);

namespace {
absl::Status CheckBlocking(const GemvBlocking& b) {
  if (b.rows_together != 1 && b.rows_together != 2 && b.rows_together != 4 &&
      b.rows_together != 8 && b.rows_together != 16) {
    return absl::InvalidArgumentError("rows_together must be 1, 2, 4, 8 or 16");
  }
  if (b.prefetch_bytes < 0) return absl::InvalidArgumentError("prefetch distance must be >= 0");
  if (b.packed_w && b.spread_groups) {
    return absl::InvalidArgumentError("packed weights hold consecutive groups, not spread ones");
  }
  return absl::OkStatus();
}

absl::Status Check(const GemvArgs& g, const GemvBlocking& b, bool scaled) {
  if (g.n <= 0 || g.k <= 0) return absl::InvalidArgumentError("GEMV dimensions must be at least 1");
  if (!b.packed_w && g.ldw < g.k)
    return absl::InvalidArgumentError("ldw is smaller than a row of W");
  if (scaled && g.row_scale == nullptr)
    return absl::InvalidArgumentError("s8 weights need row scales");
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

absl::Status PackGemvWeights(const void* w, int64_t n, int64_t k, int64_t ldw, int element_bytes,
                             const GemvBlocking& blocking, void* out) {
  if (n <= 0 || k <= 0) return absl::InvalidArgumentError("GEMV dimensions must be at least 1");
  if (ldw < k) return absl::InvalidArgumentError("ldw is smaller than a row of W");
  if (element_bytes != 1 && element_bytes != 4) {
    return absl::InvalidArgumentError("GEMV weights are f32 or s8");
  }
  if (absl::Status s = CheckBlocking(blocking); !s.ok()) return s;
  const size_t bytes = size_t(element_bytes), K = size_t(k);
  const char* source = static_cast<const char*>(w);
  char* packed = static_cast<char*>(out);
  for (int64_t begin = 0; begin < n; begin += RowsPerTask(blocking)) {
    const int64_t end = std::min(n, begin + RowsPerTask(blocking));
    ForEachGroupIn(begin, end, blocking.rows_together, false, [&](const GroupRows& group) {
      const size_t size = size_t(group.size), first = size_t(group.first);
      char* block = packed + first * K * bytes;
      for (size_t r = 0; r < size; ++r) {
        const char* row = source + (first + r) * size_t(ldw) * bytes;
        // Whole lines, then the partial one: copy runs as long as the layout allows.
        const size_t line = kPackedLineBytes / bytes;
        for (size_t col = 0; col < K; col += line) {
          const size_t run = std::min(line, K - col);
          std::memcpy(block + PackedGroupOffset(size, K, bytes, r, col) * bytes, row + col * bytes,
                      run * bytes);
        }
      }
    });
  }
  return absl::OkStatus();
}

absl::Status GemvU8S8(const GemvU8S8Args& g, const GemvBlocking& blocking) {
  if (g.n <= 0 || g.k <= 0) return absl::InvalidArgumentError("GEMV dimensions must be at least 1");
  if (!blocking.packed_w && g.ldw < g.k)
    return absl::InvalidArgumentError("ldw is smaller than a row of W");
  if (g.y == nullptr && g.acc == nullptr) return absl::InvalidArgumentError("no output");
  if (g.y != nullptr && (g.row_scale == nullptr || g.row_sums == nullptr)) {
    return absl::InvalidArgumentError("dequantising needs row scales and row sums");
  }
  if (absl::Status s = CheckBlocking(blocking); !s.ok()) return s;
  HWY_DYNAMIC_DISPATCH(GemvU8S8Target)(g, blocking);
  return absl::OkStatus();
}

int GemvRowsTogetherThatFit() { return HWY_DYNAMIC_DISPATCH(RowsTogetherThatFitTarget)(); }

absl::Status GemvS8F32(const GemvArgs& args, const GemvBlocking& blocking) {
  if (absl::Status s = Check(args, blocking, true); !s.ok()) return s;
  HWY_DYNAMIC_DISPATCH(GemvS8F32Target)(args, blocking);
  return absl::OkStatus();
}

}  // namespace rooftune::kernels
#endif  // HWY_ONCE
