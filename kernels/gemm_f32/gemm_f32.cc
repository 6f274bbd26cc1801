// Per-target code: Highway compiles this file once for every x86 target (foreach_target.h) and
// GemmF32 dispatches to the best one the CPU supports.
// foreach_target.h must follow the define, before any other include.
// clang-format off
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/gemm_f32/gemm_f32.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
// clang-format on

#include "kernels/gemm_f32/gemm_f32.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "hwy/cache_control.h"
#include "hwy/highway.h"
#include "kernels/code_paths.h"
#include "kernels/gemm_f32/pack.h"
#include "kernels/gemm_f32/plan.h"
#include "kernels/workspace.h"
#include "oneapi/tbb/blocked_range.h"
#include "oneapi/tbb/parallel_for.h"
#include "oneapi/tbb/task_arena.h"

HWY_BEFORE_NAMESPACE();
namespace rooftune::kernels {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using D = hn::ScalableTag<float>;

constexpr int kVectorRegisters =
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
    32;
#else
    16;
#endif

// How the micro-kernel finishes a tile: scale, add beta * C, then (after the last KC block only)
// the fused bias and ReLU.
struct TileStore {
  float alpha;
  float beta;         // 0: C is not read
  const float* bias;  // at the tile's first column; null unless the epilogue is applied
  bool relu;
};

template <class V>
HWY_INLINE V FinishLanes(D d, V acc, const float* c, const float* bias, const TileStore& s) {
  V r = hn::Mul(acc, hn::Set(d, s.alpha));
  if (s.beta != 0.0f) r = hn::MulAdd(hn::Set(d, s.beta), hn::LoadU(d, c), r);
  if (bias != nullptr) {
    r = hn::Add(r, hn::LoadU(d, bias));
    // Not Max(r, 0): a comparison keeps NaN as NaN, as the reference does.
    if (s.relu) r = hn::IfThenZeroElse(hn::Lt(r, hn::Zero(d)), r);
  }
  return r;
}

inline float FinishScalar(float acc, const float* c, const float* bias, const TileStore& s) {
  float r = acc * s.alpha;
  if (s.beta != 0.0f) r = s.beta * *c + r;
  if (bias != nullptr) {
    r += *bias;
    if (s.relu && r < 0.0f) r = 0.0f;
  }
  return r;
}

// Where the micro-kernel reads its operands. Packed panels are contiguous: A as MR values per k,
// B as NR values per k, aligned. Direct (unpacked) operands are read in place: A's MR rows `lda`
// apart, B's rows `ldb` apart; this skips the packing copy when an operand is used too few times
// to repay it (a small M for B, a small N for A).
struct Operands {
  const float* a;
  size_t lda;  // direct A only
  const float* b;
  size_t ldb;  // direct B only
  // Direct B: fetch the next micro-panel's row at each k. Prepared B: fetch each line
  // kPreparedBAheadFloats ahead.
  bool prefetch_b = false;
  bool prefetch_b_into_l2 = false;  // GemmF32Blocking::prefetch_b_into_l2
  float* b_packed = nullptr;        // packing on first use: where the micro-panel read is stored
};

// How far ahead of its reads a micro-kernel fetches prepared B, which the tiles read as one
// sequential stream (few rows: once, from memory). One stream is what a core's hardware
// prefetchers keep fewest lines in flight for, while one core needs about bandwidth x latency in
// flight to stream DRAM at its rate (Little's law: 30-45 GB/s x 150-210 ns, 5-9 KiB). Further
// ahead, the fetched lines wait in the caches longer and more of them: the decode shape read
// 0.89-0.93 of the stream read at 8 KiB against 0.81-0.88 at 16 KiB and 0.83-0.86 at 4 KiB on one
// thread, builds alternated (commit 48d1583).
constexpr size_t kPreparedBAheadFloats = 8192 / sizeof(float);

// Fetches B's line at `p` into L1, or only as far as L2 (prefetcht1).
HWY_INLINE void PrefetchB(const float* p, bool into_l2) {
  if (into_l2) {
    __builtin_prefetch(p, 0, 2);
  } else {
    hwy::Prefetch(p);
  }
}

// Where a micro-kernel call reads B: its packed micro-panel, B in place, or B in place while
// storing what it loads into the packed micro-panel (the first tile to use it, when B is packed
// on first use).
enum class BSource { kInPlace = 0, kPacked = 1, kPackThrough = 2 };

// Whether a k step fetches prepared B's stream ahead of its reads, and how far in: a template
// argument of the step, so that the streaming loop carries no test of it.
enum class Stream { kOff, kIntoL1, kIntoL2 };

// C[0:mr, 0:nr] (op)= acc. Tiles with whole rows (nr = NR) store straight from registers; tiles
// at N's edge (nr < NR) go through a local tile so nothing outside C is touched.
template <size_t MR, size_t NV, class V = hn::Vec<D>>
HWY_INLINE void Store(const V (&acc)[MR][NV], float* HWY_RESTRICT c, size_t ldc, size_t mr,
                      size_t nr, const TileStore& store) {
  const D d;
  const size_t N = hn::Lanes(d);
  const size_t NR = NV * N;
  if (nr == NR) {
    // Whole rows store straight from registers; a tile at M's edge stops after its last row.
    // The store's parameters are copied first: C's stores might alias the TileStore behind the
    // reference, so the compiler would re-read them and re-test them for every vector (about
    // 14 instructions per vector, a few percent of a 6 x 64 x 256 tile). Without beta and bias
    // the store is only a scale: its own instance of the row loop, free of their tests.
    const TileStore s = store;
    auto store_rows = [&](const auto& finish) HWY_ATTR {
      HWY_UNROLL(16)
      for (size_t i = 0; i < MR; ++i) {
        if (i == mr) break;
        HWY_UNROLL(4)
        for (size_t v = 0; v < NV; ++v) {
          float* cv = c + i * ldc + v * N;
          hn::StoreU(finish(acc[i][v], cv, v), d, cv);
        }
      }
    };
    if (s.beta == 0.0f && s.bias == nullptr) {
      const V alpha = hn::Set(d, s.alpha);
      store_rows([&](V r, const float*, size_t) HWY_ATTR { return hn::Mul(r, alpha); });
    } else {
      store_rows([&](V r, const float* cv, size_t v) HWY_ATTR {
        return FinishLanes(d, r, cv, s.bias == nullptr ? nullptr : s.bias + v * N, s);
      });
    }
    return;
  }
  HWY_ALIGN float tile[MR * NV * hn::MaxLanes(d)];
  HWY_UNROLL(16)
  for (size_t i = 0; i < MR; ++i) {
    HWY_UNROLL(4)
    for (size_t v = 0; v < NV; ++v) hn::Store(acc[i][v], d, tile + i * NR + v * N);
  }
  for (size_t i = 0; i < mr; ++i) {
    for (size_t j = 0; j < nr; ++j) {
      c[i * ldc + j] = FinishScalar(tile[i * NR + j], &c[i * ldc + j],
                                    store.bias == nullptr ? nullptr : store.bias + j, store);
    }
  }
}

// C[0:mr, 0:nr] (op)= A_panel * B_panel over kc, stored as Store does. With direct A, rows past mr
// read row 0 instead (valid memory; their results are dropped); direct B is only ever given full
// panels.
template <size_t MR, size_t NV, bool kPackedA, BSource kB>
HWY_NOINLINE void MicroKernel(size_t kc, const Operands& in, float* HWY_RESTRICT c, size_t ldc,
                              size_t mr, size_t nr, const TileStore& store) {
  const D d;
  const size_t N = hn::Lanes(d);
  using V = hn::Vec<D>;
  // The C tile is read (beta != 0, or any KC block after the first) and written only after the
  // k loop; fetching its lines now hides that latency behind the FMAs. With a power-of-two ldc
  // the rows also compete for the same L1 sets, which makes an early fetch matter more.
  for (size_t i = 0; i < std::min(mr, MR); ++i) {
    for (size_t j = 0; j < NV * N; j += 64 / sizeof(float)) hwy::Prefetch(c + i * ldc + j);
  }
  const float* HWY_RESTRICT a = in.a;
  const float* HWY_RESTRICT b = in.b;
  const float* rows[MR];
  if constexpr (!kPackedA) {
    // Additions, not i * lda: GCC vectorises the products with vpmullq, whose latency the first
    // broadcast of every tile would wait for.
    const float* row = a;
    for (size_t i = 0; i < MR; ++i, row += in.lda) rows[i] = i < mr ? row : a;
  }
  // Every loop over acc is unrolled in full: an index the compiler cannot resolve would send the
  // whole array to the stack (a store and a load of every accumulator per call).
  V acc[MR][NV];
  HWY_UNROLL(16)
  for (size_t i = 0; i < MR; ++i) {
    HWY_UNROLL(4)
    for (size_t v = 0; v < NV; ++v) acc[i][v] = hn::Zero(d);
  }
  float* HWY_RESTRICT b_packed = in.b_packed;
  // Locals, not reads through `in`: the packing stores below might alias it.
  const size_t ldb = in.ldb;
  const bool prefetch_b = in.prefetch_b;
  const bool into_l2 = in.prefetch_b_into_l2;
  // One k step: acc += A[:, p] B[p, :]. `stream`, a Stream constant, says whether the step also
  // fetches prepared B's one stream ahead, and into which level.
  auto step = [&](size_t p, auto stream) HWY_ATTR {
    V bv[NV];
    for (size_t v = 0; v < NV; ++v) {
      bv[v] = kB == BSource::kPacked ? hn::Load(d, b + v * N) : hn::LoadU(d, b + v * N);
    }
    if constexpr (decltype(stream)::value != Stream::kOff) {
      for (size_t j = 0; j < NV * N; j += 64 / sizeof(float)) {
        PrefetchB(b + kPreparedBAheadFloats + j, decltype(stream)::value == Stream::kIntoL2);
      }
    }
    if constexpr (kB == BSource::kInPlace) {
      // The macro-kernel's next B micro-panel is NR columns to the right, in both loop orders.
      if (prefetch_b) {
        for (size_t j = 0; j < NV * N; j += 64 / sizeof(float)) PrefetchB(b + NV * N + j, into_l2);
      }
    }
    if constexpr (kB == BSource::kPackThrough) {
      // This is B's first read, most likely from memory: a few lines of each row, rows ldb
      // apart, as in PackBPanel, so fetch each row's run the same distance ahead.
      if (p + kPackRowsAhead < kc) PrefetchRun(b + kPackRowsAhead * ldb, NV * N);
      for (size_t v = 0; v < NV; ++v) hn::Store(bv[v], d, b_packed + v * N);
      b_packed += NV * N;
    }
    HWY_UNROLL(16)
    for (size_t i = 0; i < MR; ++i) {
      const V ai = hn::Set(d, kPackedA ? a[i] : rows[i][p]);
      HWY_UNROLL(4)
      for (size_t v = 0; v < NV; ++v) acc[i][v] = hn::MulAdd(ai, bv[v], acc[i][v]);
    }
    if constexpr (kPackedA) a += MR;
    b += kB == BSource::kPacked ? NV * N : ldb;
  };
  // Prepared B fetched ahead streams from memory only as fast as the loop issues its fetches. In
  // a harness around this kernel's blocking (one thread), the decode shape's B streamed at 0.95
  // of the stream read through a plain loop, one k step an iteration with its fetches compiled
  // in; at 0.85 with the loop unrolled four times; at 0.80 with the fetch behind a flag tested
  // at every step.
  if constexpr (kB == BSource::kPacked) {
    if (prefetch_b) {
      const auto stream = [&](auto kind) HWY_ATTR {
        HWY_UNROLL(1)
        for (size_t p = 0; p < kc; ++p) step(p, kind);
      };
      if (into_l2) {
        stream(std::integral_constant<Stream, Stream::kIntoL2>());
      } else {
        stream(std::integral_constant<Stream, Stream::kIntoL1>());
      }
      return Store<MR, NV>(acc, c, ldc, mr, nr, store);
    }
  }
  // With A read in place, the k loop runs a cache line of A's rows at a time. Its MR rows stream
  // from memory, a line per row every 16 k steps, and on a narrow N each line serves only one or
  // two tiles: the hardware prefetchers, following MR streams at once, fall behind. Each row's
  // line two lines ahead is fetched as a line begins. Packed A runs in one piece.
  constexpr size_t kLine = 64 / sizeof(float);
  constexpr size_t kALinesAhead = 2;
  const size_t piece = kPackedA ? std::max<size_t>(kc, 1) : kLine;
  for (size_t line = 0; line < kc; line += piece) {
    if constexpr (!kPackedA) {
      for (size_t i = 0; i < MR; ++i) hwy::Prefetch(rows[i] + line + kALinesAhead * kLine);
    }
    const size_t line_end = std::min(kc, line + piece);
    HWY_UNROLL(4)
    for (size_t p = line; p < line_end; ++p) {
      step(p, std::integral_constant<Stream, Stream::kOff>());
    }
  }
  return Store<MR, NV>(acc, c, ldc, mr, nr, store);
}

using MicroKernelFn = void (*)(size_t, const Operands&, float*, size_t, size_t, size_t,
                               const TileStore&);
using MicroKernelFns = std::array<std::array<MicroKernelFn, 3>, 2>;  // [A packed][BSource]

// A tile at M's edge has mr < MR rows. Running the full MR x NR kernel there wastes MR - mr rows
// of FMAs (0.8% of 256^3 with MR = 6); it runs the shortest of these heights that covers mr
// instead, compiled for the same NR.
constexpr size_t kEdgeHeights[] = {1, 2, 4, 6, 8};
constexpr size_t kMaxMR = 16;

// For each mr in [1, MR): the rows the kernel run on that edge computes, and the kernel.
struct EdgeKernel {
  int rows = 0;
  MicroKernelFns fn{};
};

struct MicroKernelEntry {
  int mr;
  int nv;  // NR in vectors
  MicroKernelFns fn;
  std::array<EdgeKernel, kMaxMR> edge;  // [mr], mr < MR
};

template <size_t MR, size_t NV>
constexpr MicroKernelFns Kernels() {
  return {
      {{&MicroKernel<MR, NV, false, BSource::kInPlace>,
        &MicroKernel<MR, NV, false, BSource::kPacked>,
        &MicroKernel<MR, NV, false, BSource::kPackThrough>},
       {&MicroKernel<MR, NV, true, BSource::kInPlace>, &MicroKernel<MR, NV, true, BSource::kPacked>,
        &MicroKernel<MR, NV, true, BSource::kPackThrough>}}};
}

// The edge kernels of an MR-row entry: index i of kEdgeHeights, then the rest.
template <size_t MR, size_t NV, size_t I = 0>
constexpr void FillEdges(std::array<EdgeKernel, kMaxMR>& edge) {
  if constexpr (I < std::size(kEdgeHeights)) {
    constexpr size_t kHeight = kEdgeHeights[I];
    if constexpr (kHeight < MR) {
      const EdgeKernel kernel{int(kHeight), Kernels<kHeight, NV>()};
      // Each mr takes the first (shortest) height that covers it.
      for (size_t mr = 1; mr <= kHeight; ++mr) {
        if (edge[mr].rows == 0) edge[mr] = kernel;
      }
    }
    FillEdges<MR, NV, I + 1>(edge);
  }
}

template <size_t MR, size_t NV>
constexpr MicroKernelEntry Entry() {
  static_assert(MR <= kMaxMR);
  MicroKernelEntry e{int(MR), int(NV), Kernels<MR, NV>(), {}};
  FillEdges<MR, NV>(e.edge);
  for (size_t mr = 1; mr < MR; ++mr) {
    if (e.edge[mr].rows == 0) e.edge[mr] = {int(MR), e.fn};  // no shorter height covers it
  }
  return e;
}

// The rows a tile of mr rows computes (and a packed A panel of it holds): mr's edge height.
inline size_t EdgeRows(const MicroKernelEntry& e, size_t mr) {
  return mr > 0 && mr < size_t(e.mr) ? size_t(e.edge[mr].rows) : size_t(e.mr);
}

// Every register block compiled. Only those whose accumulators, B vectors and the broadcast fit
// the target's register file are offered (MR * NV + NV + 1 <= registers).
constexpr MicroKernelEntry kMicroKernels[] = {
    Entry<4, 2>(), Entry<6, 2>(), Entry<4, 3>(),  Entry<8, 1>(), Entry<12, 1>(),
    Entry<8, 2>(), Entry<8, 3>(), Entry<12, 2>(), Entry<6, 4>(), Entry<16, 1>(),
};

bool FitsRegisters(const MicroKernelEntry& e) { return e.mr * e.nv + e.nv + 1 <= kVectorRegisters; }

const MicroKernelEntry* FindMicroKernel(int mr, int nr) {
  const int lanes = int(hn::Lanes(D()));
  if (nr % lanes != 0) return nullptr;
  for (const MicroKernelEntry& e : kMicroKernels) {
    if (e.mr == mr && e.nv * lanes == nr && FitsRegisters(e)) return &e;
  }
  return nullptr;
}

void ListMicroKernels(std::vector<MicroKernelShape>* shapes) {
  const int lanes = int(hn::Lanes(D()));
  for (const MicroKernelEntry& e : kMicroKernels) {
    if (FitsRegisters(e)) shapes->push_back({e.mr, e.nv * lanes});
  }
}

int VectorLanes() { return int(hn::Lanes(D())); }
int VectorRegisters() { return kVectorRegisters; }

// Packing buffers live as long as their thread and only grow: allocating them per call would map
// fresh pages every time (they are larger than malloc's mmap threshold), and the page faults cost
// several percent of a large GEMM and most of a small one. They are backed by huge pages where
// the kernel allows it: a packed B block spans hundreds of 4 KiB pages, more than the L1 TLB holds.
enum class Panel { kA = 0, kB = 1, kSharedB = 2, kEdgeB = 3 };
float* Workspace(Panel panel, size_t floats) {
  struct Buffers {
    HugePageBuffer data[4] = {HugePageBuffer(0), HugePageBuffer(1024), HugePageBuffer(2048),
                              HugePageBuffer(3072)};
  };
  static thread_local Buffers buffers;
  return buffers.data[int(panel)].Reserve<float>(floats);
}

// An operand block as the macro-kernel sees it: packed (panel after panel) or in place. A B block
// in place with `pack_into` set is packed on first use: the first tile of each micro-panel copies
// it there, and every later tile reads the copy.
struct Block {
  const float* data;
  size_t ld;  // in place: the leading dimension
  bool packed;
  float* pack_into = nullptr;
};

// The macro-kernel: C[ic block, jc block] += A * B for one KC slice, as jr and ir loops over
// MR x NR tiles. With ir innermost (BLIS's order) one KC x NR micro-panel of B stays in L1 while
// the MR x KC micro-panels of A stream past it; with jr innermost an MR x KC micro-panel of A
// stays in L1 and B's micro-panels stream from L2, which lets KC grow when NR is wide. A partial
// B panel read in place is packed first, so no load crosses the matrix.
void MacroKernel(const MicroKernelEntry& uk, const GemmF32Blocking& blk, size_t mc, size_t nc,
                 size_t kc, const Block& a, const Block& b, float* c, size_t ldc, const float* bias,
                 const TileStore& base) {
  const size_t MR = size_t(uk.mr), NR = size_t(blk.nr);
  const float* edge = nullptr;
  if (!b.packed && nc % NR != 0) {
    float* panel = b.pack_into != nullptr ? b.pack_into + nc / NR * NR * kc
                                          : Workspace(Panel::kEdgeB, kc * NR);
    PackBPanel(b.data + nc / NR * NR, b.ld, kc, nc % NR, NR, panel);
    edge = panel;
  }
  auto tile = [&](size_t ir, size_t jr) {
    const size_t mr = std::min(MR, mc - ir), nr = std::min(NR, nc - jr);
    TileStore store = base;
    store.bias = bias == nullptr ? nullptr : bias + jr;
    const bool prefetch_b =
        blk.prefetch_b && (blk.pack_b == BPacking::kPrepared || (!b.packed && jr + 2 * NR <= nc));
    Operands in{a.packed ? a.data + ir * kc : a.data + ir * a.ld,
                a.ld,
                nullptr,
                b.ld,
                prefetch_b,
                prefetch_b && blk.prefetch_b_into_l2};
    BSource source = BSource::kPacked;
    if (b.packed) {
      in.b = b.data + jr * kc;
    } else if (nr < NR) {
      in.b = edge;
    } else if (b.pack_into == nullptr) {
      in.b = b.data + jr;
      source = BSource::kInPlace;
    } else if (ir == 0) {
      in.b = b.data + jr;
      in.b_packed = b.pack_into + jr * kc;
      source = BSource::kPackThrough;
    } else {
      in.b = b.pack_into + jr * kc;
    }
    const MicroKernelFns& fn = mr < MR ? uk.edge[mr].fn : uk.fn;
    if (prefetch_b && source == BSource::kPacked && RecordingCodePaths()) {
      NoteCodePath(absl::StrCat("gemm_f32 ", hwy::TargetName(HWY_TARGET), " ", MR, "x", NR,
                                " prepared B streamed into ", in.prefetch_b_into_l2 ? "L2" : "L1"));
    }
    if (mr < MR && RecordingCodePaths()) {
      NoteCodePath(absl::StrCat("gemm_f32 ", hwy::TargetName(HWY_TARGET), " ", MR, "x", NR,
                                " edge rows ", EdgeRows(uk, mr)));
    }
    fn[a.packed][int(source)](kc, in, c + ir * ldc + jr, ldc, mr, nr, store);
  };
  if (blk.jr_innermost) {
    for (size_t ir = 0; ir < mc; ir += MR) {
      for (size_t jr = 0; jr < nc; jr += NR) tile(ir, jr);
    }
  } else {
    for (size_t jr = 0; jr < nc; jr += NR) {
      for (size_t ir = 0; ir < mc; ir += MR) tile(ir, jr);
    }
  }
}

// The A block for (ic, pc): packed into `buffer`, or read in place.
Block PrepareA(const GemmF32Args& g, const GemmF32Blocking& blk, size_t ic, size_t pc, size_t mc,
               size_t kc, const MicroKernelEntry& uk, float* buffer) {
  const float* source = g.a + ic * size_t(g.lda) + pc;
  if (!blk.pack_a) return {source, size_t(g.lda), false};
  const size_t MR = size_t(uk.mr);
  PackABlock(source, size_t(g.lda), mc, kc, MR, EdgeRows(uk, mc % MR), buffer);
  return {buffer, 0, true};
}

// The B block for (jc, pc): packed ahead into `buffer` (by all the threads together when they
// share it), read in place, or read in place with `buffer` to pack each micro-panel into as its
// first tile reads it (never when shared: the threads would race to pack it).
Block PrepareB(const GemmF32Args& g, const GemmF32Blocking& blk, size_t jc, size_t nc, size_t pc,
               size_t kc, bool shared, float* buffer) {
  const size_t ldb = size_t(g.ldb), NR = size_t(blk.nr);
  if (blk.pack_b == BPacking::kPrepared) {
    // KC slice pc starts after pc rows of every padded panel; its block jc after jc columns'
    // panels.
    return {g.b + pc * RoundUp(size_t(g.n), NR) + jc * kc, 0, true};
  }
  const float* source = g.b + pc * ldb + jc;
  if (blk.pack_b == BPacking::kAhead) {
    if (shared) {
      tbb::parallel_for(tbb::blocked_range<size_t>(0, DivCeil(nc, NR)), [&](const auto& r) {
        for (size_t jr = r.begin(); jr < r.end(); ++jr) {
          PackBPanel(source + jr * NR, ldb, kc, std::min(NR, nc - jr * NR), NR,
                     buffer + jr * NR * kc);
        }
      });
    } else {
      PackBBlock(source, ldb, kc, nc, NR, buffer);
    }
    return {buffer, 0, true};
  }
  Block b{source, ldb, false};
  if (blk.pack_b == BPacking::kOnFirstUse && !shared) b.pack_into = buffer;
  return b;
}

// For tests that must see a path run: the target, register block, packing, loop order and the
// loop the threads split.
void NoteBlockingPath(const GemmF32Blocking& blk) {
  static constexpr const char* kB[] = {"in_place", "ahead", "first_use", "prepared"};
  NoteCodePath(absl::StrCat("gemm_f32 ", hwy::TargetName(HWY_TARGET), " ", blk.mr, "x", blk.nr,
                            " A:", blk.pack_a ? "packed" : "in_place", " B:", kB[int(blk.pack_b)],
                            blk.jr_innermost ? " jr" : " ir",
                            blk.parallel == ParallelLoop::kJc ? " jc" : " ic"));
}

// BLIS's five loops: jc over column blocks of C (NC), pc over K slices (KC), ic over row blocks
// (MC), then the macro-kernel's jr and ir over register blocks. The threads split the ic loop
// (sharing each packed B block) or the jc loop (each with its own column blocks).
void GemmF32Target(const GemmF32Args& g, const GemmF32Blocking& blk, absl::Status* status) {
  const MicroKernelEntry* uk = FindMicroKernel(blk.mr, blk.nr);
  if (uk == nullptr) {
    *status = absl::InvalidArgumentError("no micro-kernel for this MR x NR on this CPU's target");
    return;
  }
  if (RecordingCodePaths()) NoteBlockingPath(blk);
  const size_t M = size_t(g.m), N = size_t(g.n), K = size_t(g.k);
  const size_t MR = size_t(blk.mr), NR = size_t(blk.nr);
  // Cache blocks are whole numbers of register blocks.
  const size_t KC = size_t(blk.kc);
  const size_t MC = std::max(MR, size_t(blk.mc) / MR * MR);
  const size_t NC = std::max(NR, size_t(blk.nc) / NR * NR);
  const bool fused = blk.fuse_epilogue && g.epilogue != GemmEpilogue::kNone;
  const size_t a_floats = RoundUp(std::min(MC, M), MR) * std::min(KC, K);
  const size_t b_floats =
      blk.pack_b == BPacking::kPrepared ? 0 : RoundUp(std::min(NC, N), NR) * std::min(KC, K);

  // The pc and ic loops inside the column block [jc, jc + nc), the row blocks in parallel when
  // the threads share B (then evened out between them, as the column blocks are when split).
  const EvenBlocks row_blocks = EvenBlocksForThreads(
      int64_t(M), int64_t(MC), int64_t(MR), std::max(1, tbb::this_task_arena::max_concurrency()));
  auto column_block = [&](size_t jc, size_t nc, bool shared_b, float* b_packed) {
    for (size_t pc = 0; pc < K; pc += KC) {
      const size_t kc = std::min(KC, K - pc);
      Block b = PrepareB(g, blk, jc, nc, pc, kc, shared_b, b_packed);
      TileStore store{g.alpha, pc == 0 ? g.beta : 1.0f, nullptr,
                      g.epilogue == GemmEpilogue::kBiasRelu};
      if (fused && pc + kc == K) store.bias = g.bias + jc;
      auto row_block = [&](size_t ic, size_t mc, float* a_packed) {
        const Block a = PrepareA(g, blk, ic, pc, mc, kc, *uk, a_packed);
        MacroKernel(*uk, blk, mc, nc, kc, a, b, g.c + ic * g.ldc + jc, size_t(g.ldc), store.bias,
                    store);
      };
      if (shared_b) {
        tbb::parallel_for(
            tbb::blocked_range<int64_t>(0, row_blocks.count, 1),
            [&](const auto& r) {
              float* a_packed = Workspace(Panel::kA, a_floats);
              for (int64_t block = r.begin(); block < r.end(); ++block) {
                const size_t ic = size_t(row_blocks.Begin(block));
                row_block(ic, std::min(M, size_t(row_blocks.Begin(block + 1))) - ic, a_packed);
              }
            },
            tbb::simple_partitioner());
        continue;
      }
      float* a_packed = Workspace(Panel::kA, a_floats);
      for (size_t ic = 0; ic < M; ic += MC) {
        row_block(ic, std::min(MC, M - ic), a_packed);
        // The first row block packed every micro-panel of B; the rest read the copy.
        if (b.pack_into != nullptr) b = {b_packed, 0, true};
      }
    }
  };

  if (blk.parallel == ParallelLoop::kIc) {
    float* b_packed = Workspace(Panel::kSharedB, b_floats);
    for (size_t jc = 0; jc < N; jc += NC) column_block(jc, std::min(NC, N - jc), true, b_packed);
  } else {
    // Each thread owns whole column blocks of C: nothing shared, nothing synchronised.
    const EvenBlocks blocks = EvenBlocksForThreads(
        int64_t(N), int64_t(NC), int64_t(NR), std::max(1, tbb::this_task_arena::max_concurrency()));
    tbb::parallel_for(
        tbb::blocked_range<int64_t>(0, blocks.count, 1),
        [&](const auto& r) {
          float* b_packed = Workspace(Panel::kB, b_floats);
          for (int64_t block = r.begin(); block < r.end(); ++block) {
            const size_t jc = size_t(blocks.Begin(block));
            const size_t end = std::min(N, size_t(blocks.Begin(block + 1)));
            column_block(jc, end - jc, false, b_packed);
          }
        },
        tbb::simple_partitioner());
  }
  if (g.epilogue != GemmEpilogue::kNone && !fused) {
    BiasReluF32(g.m, g.n, g.bias, g.epilogue == GemmEpilogue::kBiasRelu, g.c, g.ldc);
  }
  *status = absl::OkStatus();
}

void BiasReluTarget(int64_t m, int64_t n, const float* bias, bool relu, float* c, int64_t ldc) {
  const D d;
  const size_t N = hn::Lanes(d);
  const TileStore store{1.0f, 1.0f, nullptr, relu};
  tbb::parallel_for(tbb::blocked_range<int64_t>(0, m), [&](const auto& rows) {
    for (int64_t i = rows.begin(); i < rows.end(); ++i) {
      float* row = c + i * ldc;
      size_t j = 0;
      for (; j + N <= size_t(n); j += N) {
        auto r = hn::Add(hn::LoadU(d, row + j), hn::LoadU(d, bias + j));
        if (relu) r = hn::IfThenZeroElse(hn::Lt(r, hn::Zero(d)), r);
        hn::StoreU(r, d, row + j);
      }
      for (; j < size_t(n); ++j) {
        float r = row[j] + bias[j];
        row[j] = (store.relu && r < 0.0f) ? 0.0f : r;
      }
    }
  });
}

const char* TargetName() { return hwy::TargetName(HWY_TARGET); }

}  // namespace HWY_NAMESPACE
}  // namespace rooftune::kernels
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace rooftune::kernels {

HWY_EXPORT(GemmF32Target);
HWY_EXPORT(BiasReluTarget);
HWY_EXPORT(ListMicroKernels);
HWY_EXPORT(VectorLanes);
HWY_EXPORT(VectorRegisters);
HWY_EXPORT(TargetName);

absl::Status GemmF32(const GemmF32Args& args, const GemmF32Blocking& blocking) {
  if (blocking.path == GemmF32Path::kSmall) {
    absl::StatusOr<GemmF32Plan> plan = GemmF32Plan::Make(blocking, args.m, args.n);
    if (!plan.ok()) return plan.status();
    return plan->Run(args);
  }
  if (args.m <= 0 || args.n <= 0 || args.k <= 0) {
    return absl::InvalidArgumentError("GEMM dimensions must be at least 1");
  }
  const bool b_prepared = blocking.pack_b == BPacking::kPrepared;
  if (args.lda < args.k || (!b_prepared && args.ldb < args.n) || args.ldc < args.n) {
    return absl::InvalidArgumentError("a leading dimension is smaller than its row");
  }
  if (b_prepared && reinterpret_cast<uintptr_t>(args.b) % 64 != 0) {
    return absl::InvalidArgumentError("prepared B must start on a 64-byte boundary");
  }
  if (args.epilogue != GemmEpilogue::kNone && args.bias == nullptr) {
    return absl::InvalidArgumentError("the bias epilogue needs a bias vector");
  }
  if (blocking.kc <= 0 || blocking.mc <= 0 || blocking.nc <= 0) {
    return absl::InvalidArgumentError("KC, MC and NC must be positive");
  }
  if (blocking.pack_b == BPacking::kOnFirstUse && blocking.parallel != ParallelLoop::kJc) {
    return absl::InvalidArgumentError(
        "packing B on first use needs the jc loop split: threads sharing a B block would race "
        "to pack it");
  }
  absl::Status status;
  HWY_DYNAMIC_DISPATCH(GemmF32Target)(args, blocking, &status);
  return status;
}

size_t PreparedBFloats(int64_t k, int64_t n, const GemmF32Blocking& blocking) {
  return size_t(k) * RoundUp(size_t(n), size_t(blocking.nr));
}

absl::Status PackPreparedB(const float* b, int64_t k, int64_t n, int64_t ldb,
                           const GemmF32Blocking& blocking, float* out) {
  if (k <= 0 || n <= 0) return absl::InvalidArgumentError("B's dimensions must be at least 1");
  if (ldb < n) return absl::InvalidArgumentError("B's leading dimension is smaller than its row");
  if (blocking.kc <= 0 || blocking.nr <= 0) {
    return absl::InvalidArgumentError("KC and NR must be positive");
  }
  const size_t K = size_t(k), N = size_t(n), KC = size_t(blocking.kc), NR = size_t(blocking.nr);
  for (size_t pc = 0; pc < K; pc += KC) {
    PackBBlock(b + pc * size_t(ldb), size_t(ldb), std::min(KC, K - pc), N, NR,
               out + pc * RoundUp(N, NR));
  }
  return absl::OkStatus();
}

absl::StatusOr<PreparedB> PrepareB(const float* b, int64_t k, int64_t n, int64_t ldb,
                                   const GemmF32Blocking& blocking) {
  if (k <= 0 || n <= 0 || blocking.nr <= 0) {
    return absl::InvalidArgumentError("B's dimensions and NR must be at least 1");
  }
  PreparedB prepared;
  prepared.bytes = PreparedBFloats(k, n, blocking) * sizeof(float);
  prepared.floats = AllocateOnHugePages(prepared.bytes);
  if (prepared.floats == nullptr) return absl::ResourceExhaustedError("no memory for prepared B");
  absl::Status packed =
      PackPreparedB(b, k, n, ldb, blocking, static_cast<float*>(prepared.floats.get()));
  if (!packed.ok()) return packed;
  return prepared;
}

void BiasReluF32(int64_t m, int64_t n, const float* bias, bool relu, float* c, int64_t ldc) {
  HWY_DYNAMIC_DISPATCH(BiasReluTarget)(m, n, bias, relu, c, ldc);
}

std::vector<MicroKernelShape> GemmF32MicroKernels() {
  std::vector<MicroKernelShape> shapes;
  HWY_DYNAMIC_DISPATCH(ListMicroKernels)(&shapes);
  return shapes;
}

int GemmF32VectorLanes() { return HWY_DYNAMIC_DISPATCH(VectorLanes)(); }
int GemmF32VectorRegisters() { return HWY_DYNAMIC_DISPATCH(VectorRegisters)(); }
const char* GemmF32TargetName() { return HWY_DYNAMIC_DISPATCH(TargetName)(); }

}  // namespace rooftune::kernels
#endif  // HWY_ONCE
