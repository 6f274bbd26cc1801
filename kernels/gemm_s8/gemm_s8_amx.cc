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
#include <vector>

#include "kernels/amx.h"
#include "kernels/gemm_s8/dequantize.h"
#include "kernels/gemm_s8/gemm_s8.h"
#include "oneapi/tbb/blocked_range.h"
#include "oneapi/tbb/parallel_for.h"

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

// C[32 x 32] = A[32 x 4*groups] * B-panel, into `out` (row stride 32 words). `a` rows are
// `lda` bytes apart; `b` is a packed panel.
ROOFTUNE_AMX void Block32x32(const uint8_t* a, size_t lda, const int32_t* b, size_t groups,
                             int32_t* out) {
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  const size_t b_stride = kBlockColumns * sizeof(int32_t);
  for (size_t g = 0; g < groups; g += kGroupsPerTile) {
    const uint8_t* ak = a + g * 4;
    const int32_t* bk = b + g * kBlockColumns;
    _tile_loadd(4, ak, lda);
    _tile_loadd(5, ak + 16 * lda, lda);
    _tile_loadd(6, bk, b_stride);
    _tile_loadd(7, bk + 16, b_stride);
    _tile_dpbusd(0, 4, 6);
    _tile_dpbusd(1, 4, 7);
    _tile_dpbusd(2, 5, 6);
    _tile_dpbusd(3, 5, 7);
  }
  const size_t c_stride = kBlockColumns * sizeof(int32_t);
  _tile_stored(0, out, c_stride);
  _tile_stored(1, out + 16, c_stride);
  _tile_stored(2, out + 16 * kBlockColumns, c_stride);
  _tile_stored(3, out + 16 * kBlockColumns + 16, c_stride);
}

// Rows [row, row + rows) of A, zero-padded to whole 32-row blocks and K to k_padded.
void PackRows(const GemmS8Args& g, size_t k_padded, size_t row, size_t rows, uint8_t* out) {
  const size_t padded_rows = (rows + kBlockRows - 1) / kBlockRows * kBlockRows;
  std::memset(out, 0, padded_rows * k_padded);
  for (size_t i = 0; i < rows; ++i) {
    std::memcpy(out + i * k_padded, g.a + (row + i) * size_t(g.lda), size_t(g.k));
  }
}

// Writes rows [0, mr) and columns [0, nr) of a 32 x 32 block: raw s32, or dequantised.
void StoreBlock(const GemmS8Args& g, const int32_t* block, size_t row, size_t col, size_t mr,
                size_t nr) {
  if (g.y == nullptr) {
    for (size_t i = 0; i < mr; ++i) {
      std::memcpy(g.c + (row + i) * size_t(g.ldc) + col, block + i * kBlockColumns,
                  nr * sizeof(int32_t));
    }
    return;
  }
  const Dequant dq{g.scale_a, g.zero_point_a, g.scale_b + col, g.b->column_sums.data() + col,
                   g.bias == nullptr ? nullptr : g.bias + col, g.relu};
  for (size_t i = 0; i < mr; ++i) {
    float* y = g.y + (row + i) * size_t(g.ldy) + col;
    for (size_t j = 0; j < nr; ++j) y[j] = Dequantize(block[i * kBlockColumns + j], dq, int64_t(j));
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
      Block32x32(a_block + i * Kp, Kp, packed_b + panel * groups * kBlockColumns, groups, block);
      StoreBlock(g, block, row + i, col, std::min(kBlockRows, rows - i), nr);
    }
  };
  if (blk.parallel == ParallelLoop::kIc) {
    tbb::parallel_for(tbb::blocked_range<size_t>(0, (M + MC - 1) / MC, 1), [&](const auto& r) {
      std::vector<uint8_t> a_block(MC * Kp);
      LoadTileConfig();
      for (size_t b = r.begin(); b < r.end(); ++b) {
        const size_t ic = b * MC, mc = std::min(MC, M - ic);
        PackRows(g, Kp, ic, mc, a_block.data());
        for (size_t panel = 0; panel < panels; ++panel) multiply(a_block.data(), ic, mc, panel);
      }
      ReleaseTiles();
    }, tbb::simple_partitioner());
  } else {
    // Columns split across threads: A is packed once and shared.
    std::vector<uint8_t> a_all((M + kBlockRows - 1) / kBlockRows * kBlockRows * Kp);
    PackRows(g, Kp, 0, M, a_all.data());
    tbb::parallel_for(tbb::blocked_range<size_t>(0, panels, 1), [&](const auto& r) {
      LoadTileConfig();
      for (size_t panel = r.begin(); panel < r.end(); ++panel) multiply(a_all.data(), 0, M, panel);
      ReleaseTiles();
    }, tbb::simple_partitioner());
  }
  return absl::OkStatus();
}

}  // namespace rooftune::kernels
