// Per-target code (Highway foreach_target). The u8 x s8 products have no Highway op in 1.0.3, so
// the fast path uses raw intrinsics fenced by HWY_TARGET; the exact path is portable Highway
// (ReorderWidenMulAccumulate on s16 is vpmaddwd on x86).
// foreach_target.h must follow the define, before any other include.
// clang-format off
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/gemm_s8/gemm_s8.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
// clang-format on

#include "kernels/gemm_s8/gemm_s8.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "hwy/aligned_allocator.h"
#include "hwy/highway.h"
#include "kernels/amx.h"
#include "kernels/avx_vnni.h"
#include "kernels/code_paths.h"
#include "kernels/even_blocks.h"
#include "kernels/gemm_s8/dequantize.h"
#include "oneapi/tbb/blocked_range.h"
#include "oneapi/tbb/parallel_for.h"
#include "oneapi/tbb/task_arena.h"

#if HWY_ARCH_X86
#include <immintrin.h>
#endif

HWY_BEFORE_NAMESPACE();
namespace rooftune::kernels {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using DI32 = hn::ScalableTag<int32_t>;
using DI16 = hn::Repartition<int16_t, DI32>;
using DU8 = hn::Repartition<uint8_t, DI32>;
using DF = hn::Repartition<float, DI32>;
using V32 = hn::Vec<DI32>;
constexpr size_t kNV = 2;  // vectors of s32 accumulators per row: NR = 2 x lanes

#undef ROOFTUNE_S8_ATTR  // this part is compiled once per target
#if HWY_TARGET == HWY_AVX3_DL
#define ROOFTUNE_S8_ATTR __attribute__((target(HWY_TARGET_STR ",avx512vnni")))
constexpr bool kVnni = true;
#else
#define ROOFTUNE_S8_ATTR
constexpr bool kVnni = false;
#endif

// How a micro-kernel multiplies: kExact widens to s16 pairs (vpmaddwd); kFast is the target's
// own u8 x s8 product (vpdpbusd on AVX3_DL, else vpmaddubsw's saturating pairs); kAvxVnni, on
// the AVX2 target only, the VEX vpdpbusd of CPUs with AVX-VNNI (exact, like AVX-512's).
enum class Dot { kExact, kFast, kAvxVnni };

#if HWY_TARGET == HWY_AVX2
// acc += the u8 x s8 dot product of each 4-byte group, with AVX-VNNI's VEX vpdpbusd. Inline
// assembly: the instruction needs no target attribute on the caller (whose CPU was checked at
// run time), and the compiler still allocates its registers and schedules it.
HWY_INLINE V32 DotAvxVnni(V32 acc, V32 a, V32 b) {
  asm("%{vex%} vpdpbusd %2, %1, %0" : "+x"(acc.raw) : "x"(a.raw), "x"(b.raw));
  return acc;
}
#endif

// acc += the u8 x s8 dot product of each 4-byte group of `a` and `b`, the fast way.
ROOFTUNE_S8_ATTR HWY_INLINE V32 DotFast(V32 acc, V32 a, V32 b) {
#if HWY_TARGET == HWY_AVX3_DL
  return V32{_mm512_dpbusd_epi32(acc.raw, a.raw, b.raw)};
#elif HWY_TARGET == HWY_AVX3
  const __m512i pairs = _mm512_maddubs_epi16(a.raw, b.raw);  // saturating s16 pair sums
  return V32{_mm512_add_epi32(acc.raw, _mm512_madd_epi16(pairs, _mm512_set1_epi16(1)))};
#elif HWY_TARGET == HWY_AVX2
  const __m256i pairs = _mm256_maddubs_epi16(a.raw, b.raw);
  return V32{_mm256_add_epi32(acc.raw, _mm256_madd_epi16(pairs, _mm256_set1_epi16(1)))};
#elif HWY_TARGET == HWY_SSE4 || HWY_TARGET == HWY_SSSE3
  const __m128i pairs = _mm_maddubs_epi16(a.raw, b.raw);
  return V32{_mm_add_epi32(acc.raw, _mm_madd_epi16(pairs, _mm_set1_epi16(1)))};
#else
  // Same semantics as vpmaddubsw: each pair of products saturates to s16.
  const DI32 d;
  HWY_ALIGN int32_t lanes_acc[hn::MaxLanes(d)], lanes_a[hn::MaxLanes(d)], lanes_b[hn::MaxLanes(d)];
  hn::Store(acc, d, lanes_acc);
  hn::Store(a, d, lanes_a);
  hn::Store(b, d, lanes_b);
  for (size_t l = 0; l < hn::Lanes(d); ++l) {
    uint8_t ua[4];
    int8_t sb[4];
    std::memcpy(ua, &lanes_a[l], 4);
    std::memcpy(sb, &lanes_b[l], 4);
    for (int pair = 0; pair < 2; ++pair) {
      const int32_t s =
          int32_t(ua[2 * pair]) * sb[2 * pair] + int32_t(ua[2 * pair + 1]) * sb[2 * pair + 1];
      lanes_acc[l] += std::clamp(s, -32768, 32767);
    }
  }
  return hn::Load(d, lanes_acc);
#endif
}

// acc += a0*b0 + a1*b1 for each pair of s16 lanes: exact.
HWY_INLINE V32 DotExact(V32 acc, V32 a, V32 b) {
#if HWY_TARGET == HWY_SCALAR
  // One 32-bit lane holds the two s16 halves.
  const int32_t wa = hn::GetLane(a), wb = hn::GetLane(b);
  const int32_t sum = int32_t(int16_t(wa & 0xffff)) * int16_t(wb & 0xffff) +
                      int32_t(int16_t(uint32_t(wa) >> 16)) * int16_t(uint32_t(wb) >> 16);
  return hn::Add(acc, hn::Set(DI32(), sum));
#else
  const DI32 d32;
  const DI16 d16;
  // Where the products land is the target's choice (x86: every pair in one lane; EMU128: even
  // products in one sum, odd in the other; NEON: low and high halves): only
  // RearrangeToOddPlusEven puts each pair's sum in its lane.
  V32 odd = hn::Zero(d32);
  const V32 even = hn::ReorderWidenMulAccumulate(d32, hn::BitCast(d16, a), hn::BitCast(d16, b),
                                                 hn::Zero(d32), odd);
  return hn::Add(acc, hn::RearrangeToOddPlusEven(even, odd));
#endif
}

template <Dot kDot>
ROOFTUNE_S8_ATTR HWY_INLINE V32 DotOf(V32 acc, V32 a, V32 b) {
  if constexpr (kDot == Dot::kExact) {
    return DotExact(acc, a, b);
  } else if constexpr (kDot == Dot::kFast) {
    return DotFast(acc, a, b);
  } else {
#if HWY_TARGET == HWY_AVX2
    return DotAvxVnni(acc, a, b);
#else
    static_assert(kDot != Dot::kAvxVnni, "AVX-VNNI is the AVX2 target's alone");
    return acc;
#endif
  }
}

// The dequantising epilogue of a full MR x NR tile, straight from the accumulators, vector by
// vector: y = scale_a * scale_b[n] * (acc - zero_point_a * colsum_b[n]) + bias[n] (then ReLU).
// Element by element it had cost more than the tile's K loop on a 256-deep product.
template <size_t MR, size_t V>
HWY_INLINE void DequantizeTile(const V32 (&acc)[MR][V], float* HWY_RESTRICT y, size_t ldy,
                               const Dequant& dq) {
  const DI32 d;
  const hn::RebindToFloat<DI32> df;
  const size_t N = hn::Lanes(d);
  using VF = hn::Vec<decltype(df)>;
  V32 offset[V];
  VF scale[V], bias[V];
  for (size_t v = 0; v < V; ++v) {
    offset[v] = hn::Mul(hn::Set(d, dq.zero_point_a), hn::LoadU(d, dq.colsum + v * N));
    scale[v] = hn::Mul(hn::Set(df, dq.scale_a), hn::LoadU(df, dq.scale_b + v * N));
    bias[v] = dq.bias != nullptr ? hn::LoadU(df, dq.bias + v * N) : hn::Zero(df);
  }
  const VF zero = hn::Zero(df);
  HWY_UNROLL(8)
  for (size_t i = 0; i < MR; ++i) {
    for (size_t v = 0; v < V; ++v) {
      VF r = hn::MulAdd(scale[v], hn::ConvertTo(df, hn::Sub(acc[i][v], offset[v])), bias[v]);
      // Not Max(r, 0): a comparison keeps NaN as NaN, as the scalar epilogue does.
      if (dq.relu) r = hn::IfThenZeroElse(hn::Lt(r, zero), r);
      hn::StoreU(r, df, y + i * ldy + v * N);
    }
  }
}

// Where a tile's sums start and where they go. Over a K slice before the last, the sums are
// carried in `partial` (the whole MR x NR tile, row-major, even at an edge); after the last they
// are stored to C or dequantised to Y.
struct TileSums {
  const int32_t* carried;  // the sums of the slices before this one, or null for the first
  int32_t* partial;        // not null: store the sums here and return
  int32_t* c;
  size_t ldc;
  float* y;
  size_t ldy;
  size_t mr, nr;  // of the output this tile covers
  Dequant dq;
};

// One MR x (kPanels x NR) tile over `groups` groups of K: kPanels adjacent panels of B,
// `panel_words` apart, side by side. Each panel of `b` is [kb][NR] 32-bit words, kb counting
// groups of 4 k (fast) or 2 k (exact). `a` is packed [kb][MR] words, or with kAInPlace (fast path,
// K a multiple of 4) A's own MR rows, `a_row_bytes` apart: a group of 4 u8 is the word vpdpbusd
// broadcasts either way, so the rows need no copy. Two panels at once (where 32 registers hold the
// 24 sums) load each broadcast of A for twice the vpdpbusd: 10 loads a group for 24 instead of 8
// for 12.
template <size_t MR, size_t kPanels, Dot kDot, bool kAInPlace>
ROOFTUNE_S8_ATTR HWY_NOINLINE void MicroKernelS8(size_t groups, const uint8_t* HWY_RESTRICT a,
                                                 size_t a_row_bytes, const int32_t* HWY_RESTRICT b,
                                                 size_t panel_words, const TileSums& out) {
  const DI32 d;
  const size_t N = hn::Lanes(d);
  constexpr size_t V = kPanels * kNV;  // accumulator vectors a row
  const size_t NR = V * N;             // of this tile
  // Every loop over acc is unrolled in full: an index the compiler cannot resolve would keep the
  // accumulators on the stack.
  V32 acc[MR][V];
  HWY_UNROLL(8)
  for (size_t i = 0; i < MR; ++i) {
    HWY_UNROLL(4)
    for (size_t v = 0; v < V; ++v) {
      acc[i][v] = out.carried == nullptr ? hn::Zero(d) : hn::Load(d, out.carried + i * NR + v * N);
    }
  }
  HWY_UNROLL(2)
  for (size_t g = 0; g < groups; ++g) {
    V32 bv[V];
    HWY_UNROLL(4)
    for (size_t v = 0; v < V; ++v) bv[v] = hn::Load(d, b + (v / kNV) * panel_words + (v % kNV) * N);
    HWY_UNROLL(8)
    for (size_t i = 0; i < MR; ++i) {
      int32_t word;
      std::memcpy(&word, kAInPlace ? a + i * a_row_bytes : a + 4 * i, 4);
      const V32 ai = hn::Set(d, word);
      HWY_UNROLL(4)
      for (size_t v = 0; v < V; ++v) {
        acc[i][v] = DotOf<kDot>(acc[i][v], ai, bv[v]);
      }
    }
    a += kAInPlace ? 4 : 4 * MR;
    b += kNV * N;
  }
  if (out.partial != nullptr) {
    HWY_UNROLL(8)
    for (size_t i = 0; i < MR; ++i) {
      HWY_UNROLL(4)
      for (size_t v = 0; v < V; ++v) hn::Store(acc[i][v], d, out.partial + i * NR + v * N);
    }
    return;
  }
  if (out.mr == MR && out.nr == NR) {
    if (out.y != nullptr) {
      DequantizeTile<MR, V>(acc, out.y, out.ldy, out.dq);
      return;
    }
    HWY_UNROLL(8)
    for (size_t i = 0; i < MR; ++i) {
      HWY_UNROLL(4)
      for (size_t v = 0; v < V; ++v) hn::StoreU(acc[i][v], d, out.c + i * out.ldc + v * N);
    }
    return;
  }
  // Edges store through a tile, dequantised (if at all) once per output after the whole K.
  HWY_ALIGN int32_t tile[MR * V * hn::MaxLanes(d)];
  HWY_UNROLL(8)
  for (size_t i = 0; i < MR; ++i) {
    HWY_UNROLL(4)
    for (size_t v = 0; v < V; ++v) hn::Store(acc[i][v], d, tile + i * NR + v * N);
  }
  for (size_t i = 0; i < out.mr; ++i) {
    if (out.y == nullptr) {
      std::memcpy(out.c + i * out.ldc, tile + i * NR, out.nr * sizeof(int32_t));
      continue;
    }
    for (size_t j = 0; j < out.nr; ++j) {
      out.y[i * out.ldy + j] = Dequantize(tile[i * NR + j], out.dq, int64_t(j));
    }
  }
}

using MicroKernelS8Fn = void (*)(size_t, const uint8_t*, size_t, const int32_t*, size_t,
                                 const TileSums&);

// Two panels at once where the target has 32 vector registers and the sums fill at most 24.
constexpr bool TwoPanelsFit(size_t mr) {
  return HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3 && mr * 2 * kNV <= 24;
}

// Whether this target multiplies with AVX-VNNI on the fast path: the AVX2 target where the CPU
// has it.
bool UsesAvxVnni() { return HWY_TARGET == HWY_AVX2 && AvxVnniAvailable(); }

template <size_t MR, size_t kPanels>
MicroKernelS8Fn Pick(bool fast, bool a_in_place) {
  if constexpr (kPanels == 2 && !TwoPanelsFit(MR)) {
    return nullptr;
  } else {
    if (!fast) return a_in_place ? nullptr : &MicroKernelS8<MR, kPanels, Dot::kExact, false>;
#if HWY_TARGET == HWY_AVX2
    if (UsesAvxVnni()) {
      return a_in_place ? &MicroKernelS8<MR, kPanels, Dot::kAvxVnni, true>
                        : &MicroKernelS8<MR, kPanels, Dot::kAvxVnni, false>;
    }
#endif
    return a_in_place ? &MicroKernelS8<MR, kPanels, Dot::kFast, true>
                      : &MicroKernelS8<MR, kPanels, Dot::kFast, false>;
  }
}

// The micro-kernel of MR rows over `panels` (1 or 2) panels of B reading A packed or in place, or
// null where there is none (the exact path widens A, so it always packs).
MicroKernelS8Fn FindMicroKernel(int mr, size_t panels, bool fast, bool a_in_place) {
  const bool two = panels == 2;
  switch (mr) {
    case 4: return two ? Pick<4, 2>(fast, a_in_place) : Pick<4, 1>(fast, a_in_place);
    case 6: return two ? Pick<6, 2>(fast, a_in_place) : Pick<6, 1>(fast, a_in_place);
    case 8: return two ? Pick<8, 2>(fast, a_in_place) : Pick<8, 1>(fast, a_in_place);
  }
  return nullptr;
}

int PanelColumnsTarget() { return int(kNV * hn::Lanes(DI32())); }
bool FastIsVnniTarget() { return kVnni || UsesAvxVnni(); }
bool SpansTwoPanelsTarget(int mr) { return FindMicroKernel(mr, 2, false, false) != nullptr; }

// Packs rows [0, mr) of an A panel as [group][MR] words: 4 bytes (fast) or 2 zero-extended u16
// (exact) per word; k past K and rows past mr are zero. Row by row, so each row is read in order;
// the groups that lie wholly inside K are plain word copies (a byte-by-byte loop with bounds
// checks had taken nearly as long as the micro-kernel).
void PackAPanel(const uint8_t* a, size_t lda, size_t mr, size_t MR, size_t k, size_t group,
                int32_t* out) {
  const size_t groups = (k + group - 1) / group, whole = k / group;
  for (size_t i = 0; i < MR; ++i) {
    int32_t* column = out + i;  // word (g, i) is column[g * MR]
    if (i >= mr) {
      for (size_t g = 0; g < groups; ++g) column[g * MR] = 0;
      continue;
    }
    const uint8_t* row = a + i * lda;
    if (group == 4) {
      for (size_t g = 0; g < whole; ++g) std::memcpy(&column[g * MR], row + 4 * g, 4);
    } else {
      for (size_t g = 0; g < whole; ++g) {
        column[g * MR] = int32_t(uint32_t(row[2 * g]) | uint32_t(row[2 * g + 1]) << 16);
      }
    }
    for (size_t g = whole; g < groups; ++g) {  // the partial last group
      uint32_t word = 0;
      for (size_t t = 0; g * group + t < k; ++t) {
        word |= uint32_t(row[g * group + t]) << (group == 4 ? 8 * t : 16 * t);
      }
      column[g * MR] = int32_t(word);
    }
  }
}

void GemmS8Target(const GemmS8Args& g, const GemmS8Blocking& blk, absl::Status* status) {
  const PackedWeightsS8& w = *g.b;
  const bool fast = w.path == S8Path::kFast;
  const size_t M = size_t(g.m), N = size_t(g.n), K = size_t(g.k);
  const size_t MR = size_t(blk.mr), NR = size_t(w.nr);
  const size_t MC = std::max(MR, size_t(blk.mc) / MR * MR);
  const size_t group = size_t(w.k_group), groups = size_t(w.k_padded) / group;
  // The K slice, in groups: all of K, or KC rounded down to whole groups (at least one).
  const size_t KCg = size_t(GemmS8SliceGroups(blk.kc, w.k_group, w.k_padded));
  const size_t slices = (groups + KCg - 1) / KCg;
  // A tile of fewer than MR rows packs its micro-panel even where the rest read A in place.
  const bool a_in_place = GemmS8ReadsAInPlace(w.path, g.k);
  if (FindMicroKernel(blk.mr, 1, fast, false) == nullptr || w.nr != PanelColumnsTarget()) {
    *status = absl::InvalidArgumentError(
        "no int8 micro-kernel for this MR, or weights packed for another target");
    return;
  }
  const int32_t* packed_b = static_cast<const int32_t*>(w.data.get());
  const size_t panels = (N + NR - 1) / NR;
  const size_t a_panel_words = groups * MR, b_panel_words = groups * NR;
  MicroKernelS8Fn micro_kernels[2][2];  // [A in place][panels the tile spans - 1]
  for (int in_place = 0; in_place < 2; ++in_place) {
    for (size_t spanned = 1; spanned <= 2; ++spanned) {
      micro_kernels[in_place][spanned - 1] = FindMicroKernel(blk.mr, spanned, fast, in_place);
    }
  }
  const bool columns_split = blk.parallel == ParallelLoop::kJc;
  const size_t tile_panels =
      size_t(GemmS8TilePanels(micro_kernels[0][1] != nullptr, int64_t(panels), columns_split,
                              tbb::this_task_arena::max_concurrency()));
  const size_t tile_columns = (panels + tile_panels - 1) / tile_panels;  // tiles across N
  // A's packed micro-panels need room unless every one is read in place.
  const bool packs = !a_in_place || M % MR != 0;
  // The sums a tile carries from one K slice to the next: a whole tile each.
  const size_t partial_words = slices > 1 ? MR * tile_panels * NR : 0;
  if (RecordingCodePaths()) {
    NoteCodePath(absl::StrCat(
        "gemm_s8 ", hwy::TargetName(HWY_TARGET),
        fast ? (FastIsVnniTarget() ? " fast vpdpbusd" : " fast vpmaddubsw") : " exact vpmaddwd",
        " MR=", blk.mr, tile_panels == 2 ? " two panels" : "", a_in_place ? " A in place" : "",
        slices > 1 ? " K sliced" : ""));
  }

  // Rows [row, row + mr) of A as the micro-kernel reads them: in place, or from the `index`th
  // panel of `panels`, which pack_if_read filled first.
  struct APanel {
    const uint8_t* data;
    bool in_place;
  };
  auto in_place = [&](size_t mr) { return a_in_place && mr == MR; };
  auto pack_if_read = [&](size_t row, size_t mr, int32_t* panels, size_t index) {
    if (in_place(mr)) return;
    PackAPanel(g.a + row * g.lda, size_t(g.lda), mr, MR, K, group, panels + index * a_panel_words);
  };
  auto a_panel = [&](size_t row, size_t mr, const int32_t* panels, size_t index) {
    if (in_place(mr)) return APanel{g.a + row * g.lda, true};
    return APanel{reinterpret_cast<const uint8_t*>(panels + index * a_panel_words), false};
  };
  // The tile of rows [row, row + mr) and the `tile_column`th group of tile_panels panels (fewer
  // at the right edge), over K slice `slice`, its sums carried in `partial` between slices.
  auto tile = [&](APanel a, size_t row, size_t mr, size_t tile_column, size_t slice,
                  int32_t* partial) {
    const size_t panel = tile_column * tile_panels;
    const size_t col = panel * NR, nr = std::min(tile_panels * NR, N - col);
    const size_t first = slice * KCg, sliced = std::min(KCg, groups - first);
    const bool last = first + sliced == groups;
    const TileSums sums{
        first == 0 ? nullptr : partial,
        last ? nullptr : partial,
        g.c == nullptr ? nullptr : g.c + row * g.ldc + col,
        size_t(g.ldc),
        g.y == nullptr ? nullptr : g.y + row * g.ldy + col,
        size_t(g.ldy),
        mr,
        nr,
        {g.scale_a, g.zero_point_a, g.scale_b == nullptr ? nullptr : g.scale_b + col,
         w.column_sums.data() + col, g.bias == nullptr ? nullptr : g.bias + col, g.relu}};
    const size_t spanned = std::min(tile_panels, panels - panel);
    // A packed micro-panel holds MR words a group; a row in place, 4 bytes.
    const uint8_t* a_slice = a.data + first * (a.in_place ? 4 : 4 * MR);
    micro_kernels[a.in_place][spanned - 1](sliced, a_slice, size_t(g.lda),
                                           packed_b + panel * b_panel_words + first * NR,
                                           b_panel_words, sums);
  };
  // Each K slice of a tile column meets every row tile of the block while that slice of B is in
  // L2 (all of a deep K is not: every row tile re-read the panel from L3).
  if (!columns_split) {
    const EvenBlocks blocks = EvenBlocksForThreads(
        int64_t(M), int64_t(MC), int64_t(MR), std::max(1, tbb::this_task_arena::max_concurrency()));
    tbb::parallel_for(
        tbb::blocked_range<int64_t>(0, blocks.count, 1),
        [&](const auto& r) {
          auto a_block = hwy::AllocateAligned<int32_t>(packs ? (MC / MR) * a_panel_words : 1);
          auto partial =
              hwy::AllocateAligned<int32_t>(std::max<size_t>(1, MC / MR * partial_words));
          for (int64_t block = r.begin(); block < r.end(); ++block) {
            const size_t ic = size_t(blocks.Begin(block));
            const size_t mc = std::min(M, size_t(blocks.Begin(block + 1))) - ic;
            for (size_t ir = 0; ir < mc; ir += MR) {
              pack_if_read(ic + ir, std::min(MR, mc - ir), a_block.get(), ir / MR);
            }
            for (size_t tc = 0; tc < tile_columns; ++tc) {
              for (size_t slice = 0; slice < slices; ++slice) {
                for (size_t ir = 0; ir < mc; ir += MR) {
                  const size_t mr = std::min(MR, mc - ir);
                  tile(a_panel(ic + ir, mr, a_block.get(), ir / MR), ic + ir, mr, tc, slice,
                       partial.get() + ir / MR * partial_words);
                }
              }
            }
          }
        },
        tbb::simple_partitioner());
  } else {
    // Columns split across threads: A is packed once, by all threads, and shared.
    const size_t row_panels = (M + MR - 1) / MR;
    auto a_all = hwy::AllocateAligned<int32_t>(packs ? row_panels * a_panel_words : 1);
    tbb::parallel_for(tbb::blocked_range<size_t>(0, row_panels), [&](const auto& r) {
      for (size_t p = r.begin(); p < r.end(); ++p) {
        pack_if_read(p * MR, std::min(MR, M - p * MR), a_all.get(), p);
      }
    });
    tbb::parallel_for(
        tbb::blocked_range<size_t>(0, tile_columns, 1),
        [&](const auto& r) {
          auto partial =
              hwy::AllocateAligned<int32_t>(std::max<size_t>(1, row_panels * partial_words));
          for (size_t tc = r.begin(); tc < r.end(); ++tc) {
            for (size_t slice = 0; slice < slices; ++slice) {
              for (size_t p = 0; p < row_panels; ++p) {
                const size_t mr = std::min(MR, M - p * MR);
                tile(a_panel(p * MR, mr, a_all.get(), p), p * MR, mr, tc, slice,
                     partial.get() + p * partial_words);
              }
            }
          }
        },
        tbb::simple_partitioner());
  }
  *status = absl::OkStatus();
}

}  // namespace HWY_NAMESPACE
}  // namespace rooftune::kernels
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace rooftune::kernels {
HWY_EXPORT(GemmS8Target);
HWY_EXPORT(PanelColumnsTarget);
HWY_EXPORT(FastIsVnniTarget);
HWY_EXPORT(SpansTwoPanelsTarget);

int GemmS8PanelColumns() { return HWY_DYNAMIC_DISPATCH(PanelColumnsTarget)(); }
bool GemmS8FastPathIsVnni() { return HWY_DYNAMIC_DISPATCH(FastIsVnniTarget)(); }
bool GemmS8SpansTwoPanels(int mr) { return HWY_DYNAMIC_DISPATCH(SpansTwoPanelsTarget)(mr); }
const std::vector<int>& GemmS8RowBlocks() {
  static const std::vector<int> rows = {4, 6, 8};
  return rows;
}

absl::StatusOr<PackedWeightsS8> PackWeightsS8(const int8_t* b, int64_t k, int64_t n, int64_t ldb,
                                              S8Path path, int64_t column_stride) {
  if (k <= 0 || n <= 0 || ldb <= 0 || column_stride <= 0 || (column_stride == 1 && ldb < n) ||
      (column_stride > 1 && ldb == 1 && column_stride < k)) {
    return absl::InvalidArgumentError("bad weight dimensions");
  }
  PackedWeightsS8 w;
  w.k = k, w.n = n, w.path = path;
  if (path == S8Path::kAmx && !AmxInt8Available()) {
    return absl::FailedPreconditionError("this CPU or OS does not offer AMX int8");
  }
  w.nr = path == S8Path::kAmx ? 32 : GemmS8PanelColumns();
  w.k_group = path == S8Path::kExact ? 2 : 4;
  const int64_t k_multiple = path == S8Path::kAmx ? 64 : w.k_group;
  w.k_padded = (k + k_multiple - 1) / k_multiple * k_multiple;
  const int64_t panels = (n + w.nr - 1) / w.nr, groups = w.k_padded / w.k_group;
  const size_t words = size_t(panels * groups * w.nr);
  auto data = hwy::AllocateAligned<int32_t>(words);
  if (data == nullptr) return absl::ResourceExhaustedError("cannot allocate packed weights");
  w.column_sums.assign(size_t(n), 0);
  w.min_weight = 127, w.max_weight = -128;
  for (int64_t p = 0; p < panels; ++p) {
    for (int64_t gi = 0; gi < groups; ++gi) {
      for (int64_t j = 0; j < w.nr; ++j) {
        const int64_t col = p * w.nr + j;
        uint32_t word = 0;
        for (int t = 0; t < w.k_group; ++t) {
          const int64_t kk = gi * w.k_group + t;
          const int8_t v = (col < n && kk < k) ? b[kk * ldb + col * column_stride] : 0;
          word |= w.k_group == 4 ? uint32_t(uint8_t(v)) << (8 * t)
                                 : uint32_t(uint16_t(int16_t(v))) << (16 * t);
        }
        data[size_t((p * groups + gi) * w.nr + j)] = int32_t(word);
      }
    }
  }
  for (int64_t kk = 0; kk < k; ++kk) {
    for (int64_t col = 0; col < n; ++col) {
      const int8_t v = b[kk * ldb + col * column_stride];
      w.column_sums[size_t(col)] += v;
      w.min_weight = std::min(w.min_weight, v);
      w.max_weight = std::max(w.max_weight, v);
    }
  }
  int32_t* raw = data.release();
  w.data = std::shared_ptr<void>(raw, [](void* p) { hwy::FreeAlignedBytes(p, nullptr, nullptr); });
  w.bytes = words * sizeof(int32_t);
  return w;
}

absl::Status GemmS8(const GemmS8Args& args, const GemmS8Blocking& blocking) {
  if (args.m <= 0 || args.n <= 0 || args.k <= 0 || args.b == nullptr) {
    return absl::InvalidArgumentError("int8 GEMM needs M, N, K >= 1 and packed weights");
  }
  if (args.b->k != args.k || args.b->n != args.n) {
    return absl::InvalidArgumentError("the packed weights are for another shape");
  }
  if ((args.y == nullptr && args.c == nullptr) || (args.y != nullptr && args.scale_b == nullptr)) {
    return absl::InvalidArgumentError(
        "int8 GEMM needs an s32 output, or a dequantised one with weight scales");
  }
  if (args.b->path == S8Path::kFast && !GemmS8FastPathIsVnni() && !args.b->WeightsAre7Bit()) {
    // vpmaddubsw saturates unless the activations are 7-bit: check them (one pass over A).
    uint8_t any = 0;
    for (int64_t i = 0; i < args.m; ++i) {
      for (int64_t p = 0; p < args.k; ++p) any |= args.a[i * args.lda + p];
    }
    if (any & 0x80) {
      return absl::FailedPreconditionError(
          "the vpmaddubsw fast path is not exact for these inputs: activations are not 7-bit and "
          "weights are not within -64..63 (use the exact path)");
    }
  }
  if (args.b->path == S8Path::kAmx) return GemmS8Amx(args, blocking);
  absl::Status status;
  HWY_DYNAMIC_DISPATCH(GemmS8Target)(args, blocking, &status);
  return status;
}

}  // namespace rooftune::kernels
#endif  // HWY_ONCE
