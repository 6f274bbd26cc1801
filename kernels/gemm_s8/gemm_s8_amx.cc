// The AMX path of the int8 GEMM: TDPBUSD multiplies a 16 x 64 u8 tile of A by a 16 x 64 s8 tile
// of B (16 groups of 4 k for 16 columns) into 16 x 16 s32 accumulators, summing the four products
// of a group in s32: exact for every input, with no saturating step. A 32 x 32 block of C lives in
// four tiles; two A and two B tiles feed them, 8 tiles in all.
//
// The weights are packed as for the vpdpbusd path ([panel][k group][32 columns] of 4-byte
// groups), which is already TDPBUSD's B layout: each 16-column half of a panel is one B tile
// with a 128-byte row stride. K is padded to a multiple of 64 so every tile is whole.
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "kernels/amx.h"
#include "kernels/code_paths.h"
#include "kernels/gemm_s8/dequantize.h"
#include "kernels/gemm_s8/gemm_s8.h"
#include "kernels/workspace.h"
#include "oneapi/tbb/blocked_range.h"
#include "oneapi/tbb/parallel_for.h"
#include "oneapi/tbb/task_arena.h"

namespace rooftune::kernels {
namespace {

constexpr size_t kBlockRows = 32, kBlockColumns = 32;
constexpr size_t kGroupsPerTile = 16;  // 16 rows of 4-byte k groups = 64 k

#define ROOFTUNE_AMX __attribute__((target("amx-tile,amx-int8")))

ROOFTUNE_AMX void LoadTileConfig() {
  static const AmxTileConfig config;
  _tile_loadconfig(&config);
}

ROOFTUNE_AMX void ReleaseTiles() { _tile_release(); }

// Tile loads do not drive the hardware prefetchers, so B is fetched by software, on two cursors
// that run ahead of the loads through this micro-panel and on into the next: into L1 a little
// ahead (4 KiB), and into L2 far ahead (32 KiB) when the micro-panels lie end to end in memory
// (K not blocked), so that weights streamed from DRAM have many misses in flight (one cursor a
// whole micro-panel ahead streamed them markedly slower).
constexpr size_t kNearGroups = 32, kFarGroups = 256;

// The k groups of B `ahead` groups past `g`: in this slice, else in the next one (or none).
inline const int32_t* GroupsAhead(const int32_t* b, size_t groups, const int32_t* next_b, size_t g,
                                  size_t ahead) {
  if (g + ahead < groups) return b + (g + ahead) * kBlockColumns;
  return next_b == nullptr ? nullptr : next_b + (g + ahead - groups) * kBlockColumns;
}

inline void PrefetchTileRows(const int32_t* rows, bool into_l1) {
  if (rows == nullptr) return;
  const char* bytes = reinterpret_cast<const char*>(rows);
  for (size_t line = 0; line < kGroupsPerTile * kBlockColumns * sizeof(int32_t); line += 64) {
    if (into_l1) {
      _mm_prefetch(bytes + line, _MM_HINT_T0);
    } else {
      _mm_prefetch(bytes + line, _MM_HINT_T1);
    }
  }
}

// C[32 x 32] (+)= A[32 x 4*groups] * B micro-panel, into `out` (row stride `ldo` words). The
// tiles start from zero, or from the partial sums in `partial` (32 words per row) when K is split
// into blocks. `a` rows are `lda` bytes apart; `b` is a slice of a packed panel; `next_b` is the
// slice the following call reads (null if none), which the prefetch cursors run on into.
ROOFTUNE_AMX void Block32x32(const uint8_t* a, size_t lda, const int32_t* b, size_t groups,
                             const int32_t* partial, const int32_t* next_b, int32_t* out,
                             size_t ldo) {
  const size_t partial_stride = kBlockColumns * sizeof(int32_t);
  if (partial == nullptr) {
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
  } else {
    _tile_loadd(0, partial, partial_stride);
    _tile_loadd(1, partial + 16, partial_stride);
    _tile_loadd(2, partial + 16 * kBlockColumns, partial_stride);
    _tile_loadd(3, partial + 16 * kBlockColumns + 16, partial_stride);
  }
  const size_t b_stride = kBlockColumns * sizeof(int32_t);
  const bool end_to_end = next_b == b + groups * kBlockColumns;
  for (size_t g = 0; g < groups; g += kGroupsPerTile) {
    const uint8_t* ak = a + g * 4;
    const int32_t* bk = b + g * kBlockColumns;
    PrefetchTileRows(GroupsAhead(b, groups, next_b, g, kNearGroups), true);
    if (end_to_end) PrefetchTileRows(GroupsAhead(b, groups, next_b, g, kFarGroups), false);
    _tile_loadd(4, ak, lda);
    _tile_loadd(5, ak + 16 * lda, lda);
    _tile_loadd(6, bk, b_stride);
    _tile_loadd(7, bk + 16, b_stride);
    _tile_dpbusd(0, 4, 6);
    _tile_dpbusd(1, 4, 7);
    _tile_dpbusd(2, 5, 6);
    _tile_dpbusd(3, 5, 7);
  }
  const size_t c_stride = ldo * sizeof(int32_t);
  _tile_stored(0, out, c_stride);
  _tile_stored(1, out + 16, c_stride);
  _tile_stored(2, out + 16 * ldo, c_stride);
  _tile_stored(3, out + 16 * ldo + 16, c_stride);
}

size_t RoundUpToBlock(size_t rows) { return (rows + kBlockRows - 1) / kBlockRows * kBlockRows; }

// Rows [row, row + rows) of A, `stride` bytes apart, zero-padded to whole 32-row blocks and K to
// k_padded.
void PackRows(const GemmS8Args& g, size_t k_padded, size_t stride, size_t row, size_t rows,
              uint8_t* out) {
  const size_t k = size_t(g.k);
  for (size_t i = 0; i < rows; ++i) {
    std::memcpy(out + i * stride, g.a + (row + i) * size_t(g.lda), k);
    std::memset(out + i * stride + k, 0, k_padded - k);
  }
  for (size_t i = rows; i < RoundUpToBlock(rows); ++i) std::memset(out + i * stride, 0, k_padded);
}

// Packed rows of A are an odd number of cache lines apart: with a power-of-two K, the 16 rows of
// a tile would otherwise fall into a few L1 sets and evict each other.
size_t PackedRowStride(size_t k_padded) { return (k_padded / 64 | 1) * 64; }

// Per-thread buffers that only grow (fresh ones per call would cost page faults): packed rows of
// A, and the partial sums of C between K blocks.
uint8_t* PackingBuffer(size_t bytes) {
  static thread_local HugePageBuffer buffer;
  return buffer.Reserve<uint8_t>(bytes);
}
int32_t* PartialSums(size_t words) {
  static thread_local HugePageBuffer buffer(2048);
  return buffer.Reserve<int32_t>(words);
}

// Writes rows [0, mr) and columns [0, nr) of a 32 x 32 block: raw s32, or dequantised. Every
// CPU with AMX has AVX-512, so the epilogue uses it (16 columns at a time, the edge masked).
__attribute__((target("avx512f"))) void StoreBlock(const GemmS8Args& g, const int32_t* block,
                                                   size_t row, size_t col, size_t mr, size_t nr) {
  if (g.y == nullptr) {
    for (size_t i = 0; i < mr; ++i) {
      std::memcpy(g.c + (row + i) * size_t(g.ldc) + col, block + i * kBlockColumns,
                  nr * sizeof(int32_t));
    }
    return;
  }
  const Dequant dq{g.scale_a,
                   g.zero_point_a,
                   g.scale_b + col,
                   g.b->column_sums.data() + col,
                   g.bias == nullptr ? nullptr : g.bias + col,
                   g.relu};
  for (size_t j = 0; j < nr; j += 16) {
    const __mmask16 lanes = __mmask16((1u << std::min<size_t>(16, nr - j)) - 1);
    // The same arithmetic as Dequantize, 16 columns at once: (acc - z_a * colsum[n]) in s32,
    // then s_a * s_w[n] * that + bias[n].
    const __m512i colsum = _mm512_maskz_loadu_epi32(lanes, dq.colsum + j);
    const __m512i zero_term = _mm512_mullo_epi32(_mm512_set1_epi32(dq.zero_point_a), colsum);
    const __m512 scale =
        _mm512_mul_ps(_mm512_set1_ps(dq.scale_a), _mm512_maskz_loadu_ps(lanes, dq.scale_b + j));
    const __m512 bias =
        dq.bias == nullptr ? _mm512_setzero_ps() : _mm512_maskz_loadu_ps(lanes, dq.bias + j);
    for (size_t i = 0; i < mr; ++i) {
      const __m512i acc = _mm512_maskz_loadu_epi32(lanes, block + i * kBlockColumns + j);
      const __m512 centred = _mm512_cvtepi32_ps(_mm512_sub_epi32(acc, zero_term));
      __m512 v = _mm512_add_ps(_mm512_mul_ps(scale, centred), bias);
      // ReLU as Dequantize does it: v < 0 -> 0, NaN kept.
      if (dq.relu) {
        const __mmask16 negative = _mm512_cmp_ps_mask(v, _mm512_setzero_ps(), _CMP_LT_OQ);
        v = _mm512_mask_blend_ps(negative, v, _mm512_setzero_ps());
      }
      _mm512_mask_storeu_ps(g.y + (row + i) * size_t(g.ldy) + col + j, lanes, v);
    }
  }
}

// The loops around Block32x32, BLIS's order with jr innermost: for a block of panels and a KC
// slice of K (the B block, KC x 32 panels bytes, kept in L2), each 32 x KC micro-panel of A
// stays in L1 while the B micro-panels stream past it. C's partial sums wait in a per-thread
// buffer between KC slices; the last slice stores them, raw or dequantised.
struct AmxLoops {
  const GemmS8Args& g;
  size_t N, Kp, KC;  // columns of C, K padded to whole tiles, the K slice
  size_t groups;     // k groups of 4 in Kp
  size_t a_stride;   // bytes between packed rows of A
  const int32_t* packed_b;

  // Rows [row, row + rows) of C over the panels [first_panel, last_panel); `a_rows` holds those
  // rows of A, packed.
  void Multiply(const uint8_t* a_rows, size_t row, size_t rows, size_t first_panel,
                size_t last_panel) const {
    const size_t row_blocks = (rows + kBlockRows - 1) / kBlockRows;
    const size_t block_words = kBlockRows * kBlockColumns;
    int32_t* partial =
        KC < Kp ? PartialSums(row_blocks * (last_panel - first_panel) * block_words) : nullptr;
    alignas(64) int32_t tile[kBlockRows * kBlockColumns];
    for (size_t pc = 0; pc < Kp; pc += KC) {
      const size_t kc = std::min(KC, Kp - pc);
      const bool first = pc == 0, last = pc + kc == Kp;
      for (size_t i = 0; i < row_blocks; ++i) {
        const uint8_t* a = a_rows + i * kBlockRows * a_stride + pc;
        const size_t mr = std::min(kBlockRows, rows - i * kBlockRows);
        for (size_t panel = first_panel; panel < last_panel; ++panel) {
          const int32_t* b = packed_b + (panel * groups + pc / 4) * kBlockColumns;
          const int32_t* next_b = panel + 1 < last_panel ? b + groups * kBlockColumns : nullptr;
          int32_t* sums =
              partial == nullptr
                  ? nullptr
                  : partial + (i * (last_panel - first_panel) + panel - first_panel) * block_words;
          const int32_t* from = first ? nullptr : sums;
          if (!last) {
            Block32x32(a, a_stride, b, kc / 4, from, next_b, sums, kBlockColumns);
            continue;
          }
          const size_t r = row + i * kBlockRows, col = panel * kBlockColumns;
          const size_t nr = std::min(kBlockColumns, N - col);
          if (g.y == nullptr && mr == kBlockRows && nr == kBlockColumns) {
            // A whole block of raw accumulators goes straight from the tiles to C.
            Block32x32(a, a_stride, b, kc / 4, from, next_b, g.c + r * size_t(g.ldc) + col,
                       size_t(g.ldc));
            continue;
          }
          Block32x32(a, a_stride, b, kc / 4, from, next_b, tile, kBlockColumns);
          StoreBlock(g, tile, r, col, mr, nr);
        }
      }
    }
  }
};

}  // namespace

absl::Status GemmS8Amx(const GemmS8Args& g, const GemmS8Blocking& blk) {
  const PackedWeightsS8& w = *g.b;
  if (!AmxInt8Available()) {
    return absl::FailedPreconditionError("this CPU or OS does not offer AMX int8");
  }
  if (RecordingCodePaths()) NoteCodePath("gemm_s8 amx tdpbusd");
  if (w.nr != int(kBlockColumns) || w.k_group != 4 || w.k_padded % 64 != 0) {
    return absl::InvalidArgumentError("weights are not packed for the AMX path");
  }
  const size_t M = size_t(g.m), N = size_t(g.n), Kp = size_t(w.k_padded);
  const size_t MC = std::max(kBlockRows, size_t(blk.mc) / kBlockRows * kBlockRows);
  const size_t KC = blk.kc <= 0 ? Kp : std::max<size_t>(64, size_t(blk.kc) / 64 * 64);
  const size_t panels = (N + kBlockColumns - 1) / kBlockColumns;
  size_t NCp = blk.nc <= 0 ? panels : std::max<size_t>(1, size_t(blk.nc) / kBlockColumns);
  if (blk.parallel == ParallelLoop::kJc) {
    // NC bounds a column block for the caches; splitting the columns across threads may make
    // the blocks smaller still, so that every thread gets some (NC = all of N left one busy).
    const size_t threads = size_t(std::max(1, tbb::this_task_arena::max_concurrency()));
    NCp = std::min(NCp, (panels + threads - 1) / threads);
  }
  const size_t groups = Kp / 4, a_stride = PackedRowStride(Kp);
  const int32_t* packed_b = static_cast<const int32_t*>(w.data.get());

  const AmxLoops loops{g, N, Kp, KC, groups, a_stride, packed_b};
  auto column_blocks = [&](const uint8_t* a_rows, size_t row, size_t rows) {
    for (size_t jc = 0; jc < panels; jc += NCp) {
      loops.Multiply(a_rows, row, rows, jc, std::min(panels, jc + NCp));
    }
  };
  if (blk.parallel == ParallelLoop::kIc) {
    tbb::parallel_for(
        tbb::blocked_range<size_t>(0, (M + MC - 1) / MC, 1),
        [&](const auto& r) {
          uint8_t* a_block = PackingBuffer(MC * a_stride);
          LoadTileConfig();
          for (size_t b = r.begin(); b < r.end(); ++b) {
            const size_t ic = b * MC, mc = std::min(MC, M - ic);
            PackRows(g, Kp, a_stride, ic, mc, a_block);
            column_blocks(a_block, ic, mc);
          }
          ReleaseTiles();
        },
        tbb::simple_partitioner());
  } else {
    // Columns split across threads (NCp panels each): A is packed once and shared.
    uint8_t* a_all = PackingBuffer(RoundUpToBlock(M) * a_stride);
    PackRows(g, Kp, a_stride, 0, M, a_all);
    tbb::parallel_for(
        tbb::blocked_range<size_t>(0, (panels + NCp - 1) / NCp, 1),
        [&](const auto& r) {
          LoadTileConfig();
          for (size_t jb = r.begin(); jb < r.end(); ++jb) {
            loops.Multiply(a_all, 0, M, jb * NCp, std::min(panels, (jb + 1) * NCp));
          }
          ReleaseTiles();
        },
        tbb::simple_partitioner());
  }
  return absl::OkStatus();
}

}  // namespace rooftune::kernels
