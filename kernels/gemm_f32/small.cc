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
#include <cmath>
#include <cstdint>
#include <iterator>
#include <utility>

#include "absl/base/attributes.h"
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

// The tallest block. Loops over a block's rows unroll this far: one that stayed a loop would
// index its sums, and keep them in memory instead of registers.
constexpr size_t kMaxHeight =
    size_t(*std::max_element(std::begin(kGemmF32SmallHeights), std::end(kGemmF32SmallHeights)));
// The widest block, in vectors; loops over a block's vectors unroll this far, for the same reason.
constexpr size_t kMaxVectors = size_t(kGemmF32SmallWideVectors);

// AVX2 and AVX-512 mask f32 loads and stores in hardware (vmaskmovps, masked vmovups): lanes
// outside the mask are neither read nor written, so a vector may end past the matrix. Older
// targets emulate the mask on a full-width access; their partial vectors go through a buffer.
constexpr bool kHardwareMasks = HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2;

// The first `n` lanes from p (1 <= n <= lanes), the rest zero, reading nothing past p + n.
template <class DF>
HWY_INLINE hn::Vec<DF> LoadFirst(DF d, const float* HWY_RESTRICT p, size_t n) {
  if constexpr (kHardwareMasks) {
    return hn::MaskedLoad(hn::FirstN(d, n), d, p);
  } else {
    HWY_ALIGN float lanes[hn::MaxLanes(d)] = {};
    std::copy(p, p + n, lanes);
    return hn::Load(d, lanes);
  }
}

// Stores the first `n` lanes of v to p, writing nothing past p + n.
template <class DF>
HWY_INLINE void StoreFirst(hn::Vec<DF> v, DF d, float* HWY_RESTRICT p, size_t n) {
  if constexpr (kHardwareMasks) {
    hn::BlendedStore(v, hn::FirstN(d, n), d, p);
  } else {
    HWY_ALIGN float lanes[hn::MaxLanes(d)];
    hn::Store(v, d, lanes);
    std::copy(lanes, lanes + n, p);
  }
}

// An FMA's latency times the FMA units, with slack (kSmallBankedSumsBelow, shared with the cost
// model), is the number of independent sums that keeps the units busy. With registers to spare, a
// block of fewer keeps two banks of sums (even and odd k), added once at the end, so that a
// narrow tile runs at the units' rate instead of their latency; a product shallower than
// kSmallBankedDepthFrom would pay more for adding the banks than its short chains wait.
constexpr size_t BanksOf(size_t mr, size_t nv) {
  const bool few_sums = mr * nv < size_t(kSmallBankedSumsBelow);
  const bool room_for_two = 2 * mr * nv + (mr == 1 ? 1 : nv) + 1 <= size_t(kVectorRegisters);
  return few_sums && room_for_two ? 2 : 1;
}

// Pointers to every fourth row of A from `a`, by successive adds. Written as products (g * 4 *
// lda) the compiler turns them into a 64-bit vector multiply (vpmullq, about 15 cycles) and
// extracts each pointer: a chain that every load of the tile waits for, a sixth of a 16^3 call.
template <size_t kGroups>
HWY_INLINE void EveryFourthRow(const float* a, size_t lda, const float* (&group)[kGroups]) {
  const size_t step = 4 * lda;
  group[0] = a;
  for (size_t g = 1; g < kGroups; ++g) group[g] = group[g - 1] + step;
}

// acc += A[:, p] B[p, :] for one k, with the A column's rows addressed as in SmallMicroKernel.
template <class DF, size_t MR, size_t NV, bool kPartial, size_t kGroups, class VF = hn::Vec<DF>>
HWY_INLINE void SmallStep(const float* HWY_RESTRICT b, const float* const (&group)[kGroups],
                          const size_t (&offsets)[4], size_t last, VF (&acc)[MR][NV]) {
  const DF d;
  const size_t N = hn::Lanes(d);
  VF bv[NV];
  HWY_UNROLL(kMaxVectors)
  for (size_t v = 0; v < NV; ++v) {
    bv[v] = kPartial && v == NV - 1 ? LoadFirst(d, b + v * N, last) : hn::LoadU(d, b + v * N);
  }
  HWY_UNROLL(kMaxHeight)
  for (size_t i = 0; i < MR; ++i) {
    const VF ai = hn::Set(d, group[i / 4][offsets[i % 4]]);
    HWY_UNROLL(kMaxVectors)
    for (size_t v = 0; v < NV; ++v) acc[i][v] = hn::MulAdd(ai, bv[v], acc[i][v]);
  }
}

// C[0:MR, 0:NV vectors] = alpha * acc + beta * C (+ bias, ReLU), the last vector masked to
// `t.last` lanes with kPartial. The tile's fields are read once into locals: stores through C
// could otherwise alias them, and each would be read again after every store.
template <class DF, size_t MR, size_t NV, bool kPartial, class VF = hn::Vec<DF>>
HWY_INLINE void StoreTile(const VF (&acc)[MR][NV], const SmallTile& t) {
  const DF d;
  const size_t N = hn::Lanes(d);
  float* HWY_RESTRICT const c = t.c;
  const size_t ldc = t.ldc, last = t.last;
  const float alpha = t.alpha, beta = t.beta;
  const float* HWY_RESTRICT const bias = t.bias;
  const bool relu = t.relu;
  const auto store = [&](VF r, float* HWY_RESTRICT to, bool partial) HWY_ATTR {
    if (partial) {
      StoreFirst(r, d, to, last);
    } else {
      hn::StoreU(r, d, to);
    }
  };
  // The plain product (alpha 1, nothing else) stores the sums as they are: a multiply by one
  // would add its latency to every tile, a large part of the smallest.
  if (alpha == 1.0f && beta == 0.0f && bias == nullptr) {
    HWY_UNROLL(kMaxHeight)
    for (size_t i = 0; i < MR; ++i) {
      HWY_UNROLL(kMaxVectors)
      for (size_t v = 0; v < NV; ++v)
        store(acc[i][v], c + i * ldc + v * N, kPartial && v == NV - 1);
    }
    return;
  }
  const VF alpha_v = hn::Set(d, alpha), beta_v = hn::Set(d, beta), zero = hn::Zero(d);
  HWY_UNROLL(kMaxHeight)
  for (size_t i = 0; i < MR; ++i) {
    HWY_UNROLL(kMaxVectors)
    for (size_t v = 0; v < NV; ++v) {
      const bool partial = kPartial && v == NV - 1;
      float* cv = c + i * ldc + v * N;
      VF r = hn::Mul(acc[i][v], alpha_v);
      if (beta != 0.0f) {
        r = hn::MulAdd(beta_v, partial ? LoadFirst(d, cv, last) : hn::LoadU(d, cv), r);
      }
      if (bias != nullptr) {
        const float* bias_v = bias + v * N;
        r = hn::Add(r, partial ? LoadFirst(d, bias_v, last) : hn::LoadU(d, bias_v));
        // Not Max(r, 0): a comparison keeps NaN as NaN, as the reference does.
        if (relu) r = hn::IfThenZeroElse(hn::Lt(r, zero), r);
      }
      store(r, cv, partial);
    }
  }
}

// C[0:MR, 0:NV vectors] = alpha * A B + beta * C (+ bias, ReLU). With kPartial the last vector
// holds `last` lanes: it is loaded and stored masked. A's rows are addressed as x86 addressing
// wants them, a pointer to every fourth row and three row offsets (BLIS's kernels do the same):
// twelve row pointers would not fit the general registers, and each spilled one would cost a
// load more per broadcast. DF is the target's full vector, or its half for a narrow edge.
template <size_t MR, size_t NV, bool kPartial, class DF = D>
HWY_NOINLINE void SmallMicroKernel(const SmallTile& t) {
  using VF = hn::Vec<DF>;
  const DF d;
  constexpr size_t kGroups = (MR + 3) / 4;
  constexpr size_t kBanks = BanksOf(MR, NV);
  const float* group[kGroups];
  EveryFourthRow(t.a, t.lda, group);
  const size_t offsets[4] = {0, t.lda, 2 * t.lda, 3 * t.lda};
  VF acc[kBanks][MR][NV];
  for (size_t bank = 0; bank < kBanks; ++bank) {
    HWY_UNROLL(kMaxHeight)
    for (size_t i = 0; i < MR; ++i) {
      HWY_UNROLL(kMaxVectors)
      for (size_t v = 0; v < NV; ++v) acc[bank][i][v] = hn::Zero(d);
    }
  }
  const float* HWY_RESTRICT b = t.b;
  const size_t k = t.k, ldb = t.ldb, last = t.last;
  const bool banked = kBanks == 2 && k >= size_t(kSmallBankedDepthFrom);
  size_t p = 0;
  if (banked) {
    for (; p + 2 <= k; p += 2, b += 2 * ldb) {
      SmallStep<DF, MR, NV, kPartial>(b, group, offsets, last, acc[0]);
      for (size_t g = 0; g < kGroups; ++g) ++group[g];
      SmallStep<DF, MR, NV, kPartial>(b + ldb, group, offsets, last, acc[kBanks - 1]);
      for (size_t g = 0; g < kGroups; ++g) ++group[g];
    }
  }
  HWY_UNROLL(2)
  for (; p < k; ++p, b += ldb) {
    SmallStep<DF, MR, NV, kPartial>(b, group, offsets, last, acc[0]);
    for (size_t g = 0; g < kGroups; ++g) ++group[g];
  }
  if (banked) {
    HWY_UNROLL(kMaxHeight)
    for (size_t i = 0; i < MR; ++i) {
      HWY_UNROLL(kMaxVectors)
      for (size_t v = 0; v < NV; ++v) acc[0][i][v] = hn::Add(acc[0][i][v], acc[kBanks - 1][i][v]);
    }
  }
  StoreTile<DF, MR, NV, kPartial>(acc[0], t);
}

// Every height up to the tallest tunable one is compiled (where it fits the registers), so that
// a tile at M's edge runs one exactly its height: a taller one would read rows past the matrix.
// Likewise every width up to the widest, for a right edge of any number of vectors.

// [height - 1][vectors - 1][partial]; null where the block is not compiled.
using SmallKernelTable =
    std::array<std::array<std::array<SmallTileFn, 2>, kMaxVectors>, kMaxHeight>;

// The sums, B's vectors of a step and A's broadcast in registers. One row uses each vector of B
// once: its loads feed the FMAs directly and hold no register.
constexpr bool Fits(size_t mr, size_t nv) {
  return mr * nv + (mr == 1 ? 1 : nv) + 1 <= size_t(kVectorRegisters);
}

constexpr bool Compiled(size_t mr, size_t nv) {
  const bool wide_enough_rows = nv <= size_t(kGemmF32SmallVectors) ||
                                mr <= size_t(kGemmF32SmallWideRows);
  return wide_enough_rows && Fits(mr, nv);
}

template <size_t MR, size_t NV>
constexpr void FillOne(SmallKernelTable& table) {
  if constexpr (Compiled(MR, NV)) {
    table[MR - 1][NV - 1] = {&SmallMicroKernel<MR, NV, false>, &SmallMicroKernel<MR, NV, true>};
  }
}

template <size_t MR, size_t... kVectorsLess1>
constexpr void FillHeight(SmallKernelTable& table, std::index_sequence<kVectorsLess1...>) {
  (FillOne<MR, kVectorsLess1 + 1>(table), ...);
}

template <size_t... kHeightsLess1>
constexpr void FillAll(SmallKernelTable& table, std::index_sequence<kHeightsLess1...>) {
  (FillHeight<kHeightsLess1 + 1>(table, std::make_index_sequence<kMaxVectors>()), ...);
}

constexpr SmallKernelTable MakeTable() {
  SmallKernelTable table{};
  FillAll(table, std::make_index_sequence<kMaxHeight>());
  return table;
}
constexpr SmallKernelTable kSmallKernels = MakeTable();

// A right-edge tile of one vector whose columns fill at most half of it runs on half vectors: a
// core that executes a full vector's FMA as two halves (Zen 4's AVX-512) spends as long on the
// masked lanes as on the used ones, and elsewhere the narrower FMA costs no more. Only targets
// of 8 lanes or more have such a kernel.
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
constexpr bool kHalfEdges = true;
using HalfKernelTable =
    std::array<std::array<SmallTileFn, 2>, kMaxHeight>;  // [height - 1][partial]

template <size_t MR = 1>
constexpr void FillHalf(HalfKernelTable& table) {
  if constexpr (MR <= kMaxHeight && Compiled(MR, 1)) {
    table[MR - 1] = {&SmallMicroKernel<MR, 1, false, hn::Half<D>>,
                     &SmallMicroKernel<MR, 1, true, hn::Half<D>>};
    FillHalf<MR + 1>(table);
  }
}

constexpr HalfKernelTable MakeHalfTable() {
  HalfKernelTable table{};
  FillHalf(table);
  return table;
}
constexpr HalfKernelTable kHalfKernels = MakeHalfTable();
#else
constexpr bool kHalfEdges = false;
#endif

// C[0:MR, 0] of a product of one column (N = 1, B's column contiguous): MR dot products of A's
// rows with that column, the vectors along K and the last one masked. A register block over one
// column would fill one lane of each vector; here every lane works. Rows are addressed as in
// SmallMicroKernel; fewer than eight rows keep two banks of sums.
template <size_t MR>
HWY_NOINLINE void DotMicroKernel(const SmallTile& t) {
  const D d;
  const size_t N = hn::Lanes(d);
  constexpr size_t kGroups = (MR + 3) / 4;
  constexpr size_t kBanks = MR < 8 ? 2 : 1;
  const float* group[kGroups];
  EveryFourthRow(t.a, t.lda, group);
  const size_t offsets[4] = {0, t.lda, 2 * t.lda, 3 * t.lda};
  V acc[kBanks][MR];
  for (size_t bank = 0; bank < kBanks; ++bank) {
    for (size_t i = 0; i < MR; ++i) acc[bank][i] = hn::Zero(d);
  }
  const float* HWY_RESTRICT b = t.b;
  const size_t k = t.k;
  size_t p = 0;
  for (; p + kBanks * N <= k; p += kBanks * N) {
    HWY_UNROLL(2)
    for (size_t bank = 0; bank < kBanks; ++bank) {
      const V bv = hn::LoadU(d, b + p + bank * N);
      HWY_UNROLL(kMaxHeight)
      for (size_t i = 0; i < MR; ++i) {
        const V ai = hn::LoadU(d, group[i / 4] + offsets[i % 4] + p + bank * N);
        acc[bank][i] = hn::MulAdd(ai, bv, acc[bank][i]);
      }
    }
  }
  for (; p < k; p += N) {
    const size_t lanes = std::min(N, k - p);
    const V bv = LoadFirst(d, b + p, lanes);
    HWY_UNROLL(kMaxHeight)
    for (size_t i = 0; i < MR; ++i) {
      const V ai = LoadFirst(d, group[i / 4] + offsets[i % 4] + p, lanes);
      acc[0][i] = hn::MulAdd(ai, bv, acc[0][i]);
    }
  }
  float* HWY_RESTRICT const c = t.c;
  const size_t ldc = t.ldc;
  const float alpha = t.alpha, beta = t.beta;
  const float* const bias = t.bias;
  const bool relu = t.relu;
  for (size_t i = 0; i < MR; ++i) {
    if constexpr (kBanks == 2) acc[0][i] = hn::Add(acc[0][i], acc[1][i]);
    float r = alpha * hn::GetLane(hn::SumOfLanes(d, acc[0][i]));
    if (beta != 0.0f) r = std::fma(beta, c[i * ldc], r);
    if (bias != nullptr) {
      r += bias[0];
      if (relu && r < 0.0f) r = 0.0f;  // not max(r, 0): NaN stays NaN, as in the reference
    }
    c[i * ldc] = r;
  }
}

using DotKernelTable = std::array<SmallTileFn, kMaxHeight>;  // [height - 1]

template <size_t MR = 1>
constexpr void FillDot(DotKernelTable& table) {
  if constexpr (MR <= kMaxHeight && Compiled(MR, 1)) {
    table[MR - 1] = &DotMicroKernel<MR>;
    FillDot<MR + 1>(table);
  }
}

constexpr DotKernelTable MakeDotTable() {
  DotKernelTable table{};
  FillDot(table);
  return table;
}
constexpr DotKernelTable kDotKernels = MakeDotTable();

// Heights the tuner may choose, as a bit mask: the check runs on every call.
constexpr uint32_t kTunedHeightMask = [] {
  uint32_t mask = 0;
  for (int h : kGemmF32SmallHeights) mask |= 1u << h;
  return mask;
}();

bool HasKernel(int mr, int nr) {
  const int lanes = int(hn::Lanes(D()));
  if (mr < 1 || mr > int(kMaxHeight) || (kTunedHeightMask >> mr & 1) == 0 || nr < lanes ||
      nr % lanes != 0 || nr / lanes > int(kMaxVectors)) {
    return false;
  }
  return kSmallKernels[size_t(mr - 1)][size_t(nr / lanes - 1)][0] != nullptr;
}

// The micro-kernels of an M x N product's tiles under an MR x NR block: full, MR x (N % NR) at the
// right edge, (M % MR) x NR at the bottom, and the corner (an edge of 0 takes the full size).
SmallTileKernels ResolveTiles(int mr, int nr, size_t m, size_t n) {
  SmallTileKernels r;
  if (!HasKernel(mr, nr)) return r;
  const size_t N = hn::Lanes(D()), MR = size_t(mr), NR = size_t(nr);
  const size_t edge_rows = m % MR == 0 ? MR : m % MR, edge_columns = n % NR == 0 ? NR : n % NR;
  const size_t edge_vectors = (edge_columns + N - 1) / N;
  r.edge_last = edge_columns - (edge_vectors - 1) * N;
  const bool edge_partial = r.edge_last < N;
  for (size_t bottom : {0, 1}) {
    const size_t rows = bottom ? edge_rows : MR;
    r.tile[bottom][0] = kSmallKernels[rows - 1][NR / N - 1][0];
    r.tile[bottom][1] = kSmallKernels[rows - 1][edge_vectors - 1][edge_partial];
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
    if (edge_vectors == 1 && r.edge_last <= N / 2) {
      r.tile[bottom][1] = kHalfKernels[rows - 1][r.edge_last < N / 2];
    }
#endif
  }
  r.half_edge = kHalfEdges && edge_vectors == 1 && r.edge_last <= N / 2;
  r.two_banks = BanksOf(MR, NR / N) == 2;
  if (n == 1) r.dot = {kDotKernels[MR - 1], kDotKernels[edge_rows - 1]};
  r.lanes = N;
  r.target = hwy::TargetName(HWY_TARGET);
  r.ok = true;
  return r;
}

}  // namespace HWY_NAMESPACE
}  // namespace rooftune::kernels
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace rooftune::kernels {

HWY_EXPORT(ResolveTiles);
HWY_EXPORT(HasKernel);

absl::StatusOr<GemmF32SmallPlan> GemmF32SmallPlan::Make(int64_t m, int64_t n,
                                                        const GemmF32SmallBlocking& blocking) {
  if (m <= 0 || n <= 0) return absl::InvalidArgumentError("GEMM dimensions must be at least 1");
  const auto resolved =
      HWY_DYNAMIC_DISPATCH(ResolveTiles)(blocking.mr, blocking.nr, size_t(m), size_t(n));
  if (!resolved.ok) {
    return absl::InvalidArgumentError(absl::StrCat("no small micro-kernel ", blocking.mr, "x",
                                                   blocking.nr, " on this CPU's target"));
  }
  GemmF32SmallPlan plan;
  plan.blocking_ = blocking;
  plan.m_ = size_t(m), plan.n_ = size_t(n);
  plan.kernels_ = resolved;
  return plan;
}

// jc over NR-column panels of C, ic over MR-row tiles inside each: a panel's K x NR of B stays
// in L1 while every tile of rows reads it.
ABSL_ATTRIBUTE_ALWAYS_INLINE inline void GemmF32SmallPlan::RunTiles(const GemmF32Args& g, bool dot,
                                                                    size_t row0, size_t row1,
                                                                    size_t col0,
                                                                    size_t col1) const {
  const size_t MR = size_t(blocking_.mr), NR = size_t(blocking_.nr);
  SmallTile t{size_t(g.k),   nullptr, size_t(g.lda), nullptr,
              size_t(g.ldb), nullptr, size_t(g.ldc), kernels_.lanes,
              g.alpha,       g.beta,  nullptr,       g.epilogue == GemmEpilogue::kBiasRelu};
  if (dot) {
    t.b = g.b;
    t.bias = g.epilogue == GemmEpilogue::kNone ? nullptr : g.bias;
    for (size_t ic = row0; ic < row1; ic += MR) {
      t.a = g.a + ic * size_t(g.lda);
      t.c = g.c + ic * size_t(g.ldc);
      kernels_.dot[m_ - ic < MR](t);
    }
    return;
  }
  for (size_t jc = col0; jc < col1; jc += NR) {
    const bool right_edge = n_ - jc < NR;
    t.last = right_edge ? kernels_.edge_last : kernels_.lanes;
    t.b = g.b + jc;
    t.bias = g.epilogue == GemmEpilogue::kNone ? nullptr : g.bias + jc;
    for (size_t ic = row0; ic < row1; ic += MR) {
      t.a = g.a + ic * size_t(g.lda);
      t.c = g.c + ic * size_t(g.ldc) + jc;
      kernels_.tile[m_ - ic < MR][right_edge](t);
    }
  }
}

absl::Status GemmF32SmallPlan::Run(const GemmF32Args& g) const {
  if (size_t(g.m) != m_ || size_t(g.n) != n_ || g.k <= 0 || g.lda < g.k || g.ldb < g.n ||
      g.ldc < g.n || (g.epilogue != GemmEpilogue::kNone && g.bias == nullptr)) {
    return Refuse(g);
  }
  // One column read contiguously runs as dot products (DotMicroKernel); a strided one as tiles.
  const bool dot = kernels_.dot[0] != nullptr && g.ldb == 1;
  if (RecordingCodePaths()) RecordCodePath(dot, g.k);
  if (blocking_.split == SmallSplit::kNone) {
    RunTiles(g, dot, 0, m_, 0, n_);
  } else {
    RunSplit(g, dot);
  }
  return absl::OkStatus();
}

// Refuse, RecordCodePath and RunSplit are out of line, and RunTiles inlined, so that the unsplit
// call is one short function around its micro-kernels: at 8^3 the parallel loop's frame and a
// call more cost about a tenth of the product.
ABSL_ATTRIBUTE_NOINLINE absl::Status GemmF32SmallPlan::Refuse(const GemmF32Args& g) const {
  if (size_t(g.m) != m_ || size_t(g.n) != n_) {
    return absl::InvalidArgumentError(
        absl::StrCat("a ", g.m, " x ", g.n, " product run by the small plan of ", m_, " x ", n_));
  }
  if (g.k <= 0) return absl::InvalidArgumentError("GEMM dimensions must be at least 1");
  if (g.lda < g.k || g.ldb < g.n || g.ldc < g.n) {
    return absl::InvalidArgumentError("a leading dimension is smaller than its row");
  }
  return absl::InvalidArgumentError("the bias epilogue needs a bias vector");
}

ABSL_ATTRIBUTE_NOINLINE void GemmF32SmallPlan::RecordCodePath(bool dot, int64_t k) const {
  const SmallSplit split = blocking_.split;
  kernels::NoteCodePath(absl::StrCat(
      "gemm_f32 small ", kernels_.target, " ", blocking_.mr, "x", blocking_.nr,
      split == SmallSplit::kRows      ? " split rows"
      : split == SmallSplit::kColumns ? " split columns"
                                      : "",
      dot ? " one column" : "", kernels_.half_edge && !dot ? " half-width right edge" : "",
      kernels_.two_banks && !dot && k >= kSmallBankedDepthFrom ? " two banks" : ""));
}

ABSL_ATTRIBUTE_NOINLINE void GemmF32SmallPlan::RunSplit(const GemmF32Args& g, bool dot) const {
  const size_t MR = size_t(blocking_.mr), NR = size_t(blocking_.nr);
  if (blocking_.split == SmallSplit::kRows) {
    tbb::parallel_for(tbb::blocked_range<size_t>(0, (m_ + MR - 1) / MR), [&](const auto& r) {
      RunTiles(g, dot, r.begin() * MR, std::min(m_, r.end() * MR), 0, n_);
    });
  } else {
    tbb::parallel_for(tbb::blocked_range<size_t>(0, (n_ + NR - 1) / NR), [&](const auto& r) {
      RunTiles(g, dot, 0, m_, r.begin() * NR, std::min(n_, r.end() * NR));
    });
  }
}

absl::Status GemmF32Small(const GemmF32Args& args, const GemmF32SmallBlocking& blocking) {
  absl::StatusOr<GemmF32SmallPlan> plan = GemmF32SmallPlan::Make(args.m, args.n, blocking);
  if (!plan.ok()) return plan.status();
  return plan->Run(args);
}

bool GemmF32SmallHasKernel(int mr, int nr) { return HWY_DYNAMIC_DISPATCH(HasKernel)(mr, nr); }

}  // namespace rooftune::kernels
#endif  // HWY_ONCE
