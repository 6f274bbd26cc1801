// Per-target code: Highway compiles this file once for every x86 target (foreach_target.h) and
// GemmF32Small dispatches to the best one the CPU supports.
// foreach_target.h must follow the define, before any other include.
// clang-format off
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/gemm_f32/small.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
// clang-format on

#include "kernels/gemm_f32/small.h"

#include <algorithm>
#include <array>

#include "absl/strings/str_cat.h"
#include "hwy/highway.h"
#include "kernels/code_paths.h"
#include "oneapi/tbb/blocked_range.h"
#include "oneapi/tbb/parallel_for.h"

HWY_BEFORE_NAMESPACE();
namespace rooftune::kernels {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using D = hn::ScalableTag<float>;
using V = hn::Vec<D>;

constexpr int kVectorRegisters =
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
    32;
#else
    16;
#endif

// AVX2 and AVX-512 mask f32 loads and stores in hardware (vmaskmovps, masked vmovups): lanes
// outside the mask are neither read nor written, so a vector may end past the matrix. Older
// targets emulate the mask on a full-width access; their partial vectors go through a buffer.
constexpr bool kHardwareMasks = HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2;

// The first `n` lanes from p (1 <= n <= lanes), the rest zero, reading nothing past p + n.
HWY_INLINE V LoadFirst(D d, const float* HWY_RESTRICT p, size_t n) {
  if constexpr (kHardwareMasks) {
    return hn::MaskedLoad(hn::FirstN(d, n), d, p);
  } else {
    HWY_ALIGN float lanes[hn::MaxLanes(d)] = {};
    std::copy(p, p + n, lanes);
    return hn::Load(d, lanes);
  }
}

// Stores the first `n` lanes of v to p, writing nothing past p + n.
HWY_INLINE void StoreFirst(V v, D d, float* HWY_RESTRICT p, size_t n) {
  if constexpr (kHardwareMasks) {
    hn::BlendedStore(v, hn::FirstN(d, n), d, p);
  } else {
    HWY_ALIGN float lanes[hn::MaxLanes(d)];
    hn::Store(v, d, lanes);
    std::copy(lanes, lanes + n, p);
  }
}

struct SmallTile {
  size_t k;
  const float* a;  // the tile's first row of A, rows lda apart
  size_t lda;
  const float* b;  // the tile's first column of B, rows ldb apart
  size_t ldb;
  float* c;
  size_t ldc;
  size_t last;  // lanes of the tile's last vector (all of them unless kPartial)
  float alpha, beta;
  const float* bias;  // at the tile's first column, or null
  bool relu;
};

// C[0:MR, 0:NV vectors] = alpha * A B + beta * C (+ bias, ReLU). With kPartial the last vector
// holds `last` lanes: it is loaded and stored masked. A's rows are addressed as x86 addressing
// wants them, a pointer to every fourth row and three row offsets (BLIS's kernels do the same):
// twelve row pointers would not fit the general registers, and each spilled one would cost a
// load more per broadcast.
template <size_t MR, size_t NV, bool kPartial>
HWY_NOINLINE void SmallMicroKernel(const SmallTile& t) {
  const D d;
  const size_t N = hn::Lanes(d);
  constexpr size_t kGroups = (MR + 3) / 4;
  const float* group[kGroups];
  for (size_t g = 0; g < kGroups; ++g) group[g] = t.a + 4 * g * t.lda;
  const size_t l1 = t.lda, l2 = 2 * l1, l3 = 3 * l1;
  V acc[MR][NV];
  HWY_UNROLL(12)
  for (size_t i = 0; i < MR; ++i) {
    HWY_UNROLL(4)
    for (size_t v = 0; v < NV; ++v) acc[i][v] = hn::Zero(d);
  }
  const float* HWY_RESTRICT b = t.b;
  const size_t k = t.k, ldb = t.ldb, last = t.last;
  HWY_UNROLL(2)
  for (size_t p = 0; p < k; ++p, b += ldb) {
    V bv[NV];
    HWY_UNROLL(4)
    for (size_t v = 0; v < NV; ++v) {
      bv[v] = kPartial && v == NV - 1 ? LoadFirst(d, b + v * N, last) : hn::LoadU(d, b + v * N);
    }
    HWY_UNROLL(12)
    for (size_t i = 0; i < MR; ++i) {
      const size_t off = i % 4 == 0 ? 0 : i % 4 == 1 ? l1 : i % 4 == 2 ? l2 : l3;
      const V ai = hn::Set(d, group[i / 4][off]);
      HWY_UNROLL(4)
      for (size_t v = 0; v < NV; ++v) acc[i][v] = hn::MulAdd(ai, bv[v], acc[i][v]);
    }
    for (size_t g = 0; g < kGroups; ++g) ++group[g];
  }
  // The plain product (alpha 1, nothing else) stores the sums as they are: a multiply by one
  // would add its latency to every tile, a large part of the smallest.
  const bool plain = t.alpha == 1.0f && t.beta == 0.0f && t.bias == nullptr;
  const V alpha = hn::Set(d, t.alpha), beta = hn::Set(d, t.beta), zero = hn::Zero(d);
  HWY_UNROLL(12)
  for (size_t i = 0; i < MR; ++i) {
    HWY_UNROLL(4)
    for (size_t v = 0; v < NV; ++v) {
      const bool partial = kPartial && v == NV - 1;
      float* cv = t.c + i * t.ldc + v * N;
      if (plain) {
        if (partial) {
          StoreFirst(acc[i][v], d, cv, last);
        } else {
          hn::StoreU(acc[i][v], d, cv);
        }
        continue;
      }
      V r = hn::Mul(acc[i][v], alpha);
      if (t.beta != 0.0f) {
        r = hn::MulAdd(beta, partial ? LoadFirst(d, cv, last) : hn::LoadU(d, cv), r);
      }
      if (t.bias != nullptr) {
        const float* bias = t.bias + v * N;
        r = hn::Add(r, partial ? LoadFirst(d, bias, last) : hn::LoadU(d, bias));
        // Not Max(r, 0): a comparison keeps NaN as NaN, as the reference does.
        if (t.relu) r = hn::IfThenZeroElse(hn::Lt(r, zero), r);
      }
      if (partial) {
        StoreFirst(r, d, cv, last);
      } else {
        hn::StoreU(r, d, cv);
      }
    }
  }
}

using SmallKernelFn = void (*)(const SmallTile&);

// Every height from 1 to 12 is compiled, so that a tile at M's edge runs one exactly its height
// (a taller one would read rows past the matrix); the tunable heights are 1, 2, 4, 6, 8 and 12.
constexpr size_t kMaxHeight = 12;
constexpr size_t kTunedHeights[] = {1, 2, 4, 6, 8, 12};
constexpr size_t kMaxVectors = 4;

// [height - 1][vectors - 1][partial]; null where the block does not fit the registers.
using SmallKernelTable =
    std::array<std::array<std::array<SmallKernelFn, 2>, kMaxVectors>, kMaxHeight>;

constexpr bool Fits(size_t mr, size_t nv) { return mr * nv + nv + 1 <= size_t(kVectorRegisters); }

template <size_t MR = 1, size_t NV = 1>
constexpr void Fill(SmallKernelTable& table) {
  if constexpr (MR <= kMaxHeight) {
    if constexpr (NV <= kMaxVectors) {
      if constexpr (Fits(MR, NV)) {
        table[MR - 1][NV - 1] = {&SmallMicroKernel<MR, NV, false>, &SmallMicroKernel<MR, NV, true>};
      }
      Fill<MR, NV + 1>(table);
    } else {
      Fill<MR + 1, 1>(table);
    }
  }
}

constexpr SmallKernelTable MakeTable() {
  SmallKernelTable table{};
  Fill(table);
  return table;
}
constexpr SmallKernelTable kSmallKernels = MakeTable();

bool HasKernel(int mr, int nr) {
  const int lanes = int(hn::Lanes(D()));
  if (std::find(std::begin(kTunedHeights), std::end(kTunedHeights), size_t(mr)) ==
          std::end(kTunedHeights) ||
      nr < lanes || nr % lanes != 0 || nr / lanes > int(kMaxVectors)) {
    return false;
  }
  return kSmallKernels[size_t(mr - 1)][size_t(nr / lanes - 1)][0] != nullptr;
}

// jc over NR-column panels of C, ic over MR-row tiles inside each: a panel's K x NR of B stays
// in L1 while every tile of rows reads it.
void GemmF32SmallTarget(const GemmF32Args& g, const GemmF32SmallBlocking& blk,
                        absl::Status* status) {
  if (!HasKernel(blk.mr, blk.nr)) {
    *status = absl::InvalidArgumentError(
        absl::StrCat("no small micro-kernel ", blk.mr, "x", blk.nr, " on this CPU's target"));
    return;
  }
  const size_t N = hn::Lanes(D());
  const size_t MR = size_t(blk.mr), NR = size_t(blk.nr);
  const size_t m = size_t(g.m), n = size_t(g.n);
  if (RecordingCodePaths()) {
    NoteCodePath(absl::StrCat("gemm_f32 small ", hwy::TargetName(HWY_TARGET), " ", MR, "x", NR,
                              blk.split == SmallSplit::kRows      ? " split rows"
                              : blk.split == SmallSplit::kColumns ? " split columns"
                                                                  : ""));
  }
  // The tiles of row blocks [r0, r1) and column panels [p0, p1).
  auto tiles = [&](size_t r0, size_t r1, size_t p0, size_t p1) {
    SmallTile t{size_t(g.k),   nullptr, size_t(g.lda), nullptr,
                size_t(g.ldb), nullptr, size_t(g.ldc), N,
                g.alpha,       g.beta,  nullptr,       g.epilogue == GemmEpilogue::kBiasRelu};
    for (size_t jc = p0 * NR; jc < std::min(n, p1 * NR); jc += NR) {
      const size_t columns = std::min(NR, n - jc);
      const size_t vectors = (columns + N - 1) / N;
      t.last = columns - (vectors - 1) * N;
      const bool partial = t.last < N;
      t.b = g.b + jc;
      t.bias = g.epilogue == GemmEpilogue::kNone ? nullptr : g.bias + jc;
      for (size_t ic = r0 * MR; ic < std::min(m, r1 * MR); ic += MR) {
        const size_t rows = std::min(MR, m - ic);  // fits: no taller and no wider than MR x NR
        t.a = g.a + ic * size_t(g.lda);
        t.c = g.c + ic * size_t(g.ldc) + jc;
        kSmallKernels[rows - 1][vectors - 1][partial](t);
      }
    }
  };
  const size_t row_blocks = (m + MR - 1) / MR, panels = (n + NR - 1) / NR;
  switch (blk.split) {
    case SmallSplit::kNone: tiles(0, row_blocks, 0, panels); break;
    case SmallSplit::kRows:
      tbb::parallel_for(tbb::blocked_range<size_t>(0, row_blocks),
                        [&](const auto& r) { tiles(r.begin(), r.end(), 0, panels); });
      break;
    case SmallSplit::kColumns:
      tbb::parallel_for(tbb::blocked_range<size_t>(0, panels),
                        [&](const auto& r) { tiles(0, row_blocks, r.begin(), r.end()); });
      break;
  }
  *status = absl::OkStatus();
}

}  // namespace HWY_NAMESPACE
}  // namespace rooftune::kernels
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace rooftune::kernels {

HWY_EXPORT(GemmF32SmallTarget);
HWY_EXPORT(HasKernel);

absl::Status GemmF32Small(const GemmF32Args& args, const GemmF32SmallBlocking& blocking) {
  if (args.m <= 0 || args.n <= 0 || args.k <= 0) {
    return absl::InvalidArgumentError("GEMM dimensions must be at least 1");
  }
  if (args.lda < args.k || args.ldb < args.n || args.ldc < args.n) {
    return absl::InvalidArgumentError("a leading dimension is smaller than its row");
  }
  if (args.epilogue != GemmEpilogue::kNone && args.bias == nullptr) {
    return absl::InvalidArgumentError("the bias epilogue needs a bias vector");
  }
  absl::Status status;
  HWY_DYNAMIC_DISPATCH(GemmF32SmallTarget)(args, blocking, &status);
  return status;
}

bool GemmF32SmallHasKernel(int mr, int nr) { return HWY_DYNAMIC_DISPATCH(HasKernel)(mr, nr); }

}  // namespace rooftune::kernels
#endif  // HWY_ONCE
