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
#include "kernels/gemm_s8/dequantize.h"
#include "kernels/gemm_s8/gemm_s8.h"
#include "kernels/workspace.h"
#include "oneapi/tbb/blocked_range.h"
#include "oneapi/tbb/parallel_for.h"

namespace rooftune::kernels {
namespace {

constexpr size_t kBlockRows = 32, kBlockColumns = 32;
constexpr size_t kGroupsPerTile = 16;  // 16 rows of 4-byte k groups = 64 k
constexpr size_t kPrefetchGroups = 4 * kGroupsPerTile;  // B prefetch distance: 4 tiles of k

#define ROOFTUNE_AMX __attribute__((target("amx-tile,amx-int8")))

ROOFTUNE_AMX void LoadTileConfig() {
  static const AmxTileConfig config;
  _tile_loadconfig(&config);
}

ROOFTUNE_AMX void ReleaseTiles() { _tile_release(); }

// C[32 x 32] = A[32 x 4*groups] * B-panel, into `out` (row stride `ldo` words). `a` rows are
// `lda` bytes apart; `b` is a packed panel.
ROOFTUNE_AMX void Block32x32(const uint8_t* a, size_t lda, const int32_t* b, size_t groups,
                             int32_t* out, size_t ldo) {
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  const size_t b_stride = kBlockColumns * sizeof(int32_t);
  for (size_t g = 0; g < groups; g += kGroupsPerTile) {
    const uint8_t* ak = a + g * 4;
    const int32_t* bk = b + g * kBlockColumns;
    // Fetch the B panel (what comes from memory when the weights are streamed) a few tiles
    // ahead: with tile loads alone, streamed weights arrived at a fraction of DRAM bandwidth
    // (the batch sweep ran 2-2.6x faster with this prefetch).
    if (g + kPrefetchGroups < groups) {
      const char* ahead = reinterpret_cast<const char*>(bk + kPrefetchGroups * kBlockColumns);
      for (size_t line = 0; line < kGroupsPerTile * b_stride; line += 64) {
        _mm_prefetch(ahead + line, _MM_HINT_T0);
      }
    }
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

// Rows [row, row + rows) of A, zero-padded to whole 32-row blocks and K to k_padded.
void PackRows(const GemmS8Args& g, size_t k_padded, size_t row, size_t rows, uint8_t* out) {
  const size_t k = size_t(g.k);
  for (size_t i = 0; i < rows; ++i) {
    std::memcpy(out + i * k_padded, g.a + (row + i) * size_t(g.lda), k);
    std::memset(out + i * k_padded + k, 0, k_padded - k);
  }
  std::memset(out + rows * k_padded, 0, (RoundUpToBlock(rows) - rows) * k_padded);
}

// A per-thread packing buffer that only grows (a fresh one per call would cost page faults).
uint8_t* PackingBuffer(size_t bytes) {
  static thread_local HugePageBuffer buffer;
  return buffer.Reserve<uint8_t>(bytes);
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
  const Dequant dq{g.scale_a, g.zero_point_a, g.scale_b + col, g.b->column_sums.data() + col,
                   g.bias == nullptr ? nullptr : g.bias + col, g.relu};
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

}  // namespace

absl::Status GemmS8Amx(const GemmS8Args& g, const GemmS8Blocking& blk) {
  const PackedWeightsS8& w = *g.b;
  if (!AmxInt8Available()) {
    return absl::FailedPreconditionError("this CPU or OS does not offer AMX int8");
  }
  if (w.nr != int(kBlockColumns) || w.k_group != 4 || w.k_padded % 64 != 0) {
    return absl::InvalidArgumentError("weights are not packed for the AMX path");
  }
  const size_t M = size_t(g.m), N = size_t(g.n), Kp = size_t(w.k_padded);
  const size_t MC = std::max(kBlockRows, size_t(blk.mc) / kBlockRows * kBlockRows);
  const size_t groups = Kp / 4, panels = (N + kBlockColumns - 1) / kBlockColumns;
  const int32_t* packed_b = static_cast<const int32_t*>(w.data.get());

  // C[row.., panel] for the 32-row blocks of a packed A block that starts at `row`.
  auto multiply = [&](const uint8_t* a_block, size_t row, size_t rows, size_t panel) {
    alignas(64) int32_t block[kBlockRows * kBlockColumns];
    const size_t col = panel * kBlockColumns, nr = std::min(kBlockColumns, N - col);
    for (size_t i = 0; i < rows; i += kBlockRows) {
      const size_t mr = std::min(kBlockRows, rows - i);
      const int32_t* b = packed_b + panel * groups * kBlockColumns;
      if (g.y == nullptr && mr == kBlockRows && nr == kBlockColumns) {
        // A whole block of raw accumulators goes straight from the tiles to C.
        Block32x32(a_block + i * Kp, Kp, b, groups, g.c + (row + i) * size_t(g.ldc) + col,
                   size_t(g.ldc));
        continue;
      }
      Block32x32(a_block + i * Kp, Kp, b, groups, block, kBlockColumns);
      StoreBlock(g, block, row + i, col, mr, nr);
    }
  };
  if (blk.parallel == ParallelLoop::kIc) {
    tbb::parallel_for(tbb::blocked_range<size_t>(0, (M + MC - 1) / MC, 1), [&](const auto& r) {
      uint8_t* a_block = PackingBuffer(MC * Kp);
      LoadTileConfig();
      for (size_t b = r.begin(); b < r.end(); ++b) {
        const size_t ic = b * MC, mc = std::min(MC, M - ic);
        PackRows(g, Kp, ic, mc, a_block);
        for (size_t panel = 0; panel < panels; ++panel) multiply(a_block, ic, mc, panel);
      }
      ReleaseTiles();
    }, tbb::simple_partitioner());
  } else {
    // Columns split across threads: A is packed once and shared.
    uint8_t* a_all = PackingBuffer(RoundUpToBlock(M) * Kp);
    PackRows(g, Kp, 0, M, a_all);
    tbb::parallel_for(tbb::blocked_range<size_t>(0, panels, 1), [&](const auto& r) {
      LoadTileConfig();
      for (size_t panel = r.begin(); panel < r.end(); ++panel) multiply(a_all, 0, M, panel);
      ReleaseTiles();
    }, tbb::simple_partitioner());
  }
  return absl::OkStatus();
}

}  // namespace rooftune::kernels
