// int8 GEMM: u8 activations x s8 weights -> s32 accumulators, optionally dequantised once per
// output in the micro-kernel's store:
//   y = scale_a * scale_b[n] * (acc - zero_point_a * colsum_b[n]) + bias[n]  (then ReLU)
// Weights are packed once, ahead of time (as in inference), with their column sums and range.
//
// Two arithmetic paths:
//   kExact  widens both operands to s16 and multiplies pairs with vpmaddwd into s32: exact for
//           all inputs, about half the fast path's throughput.
//   kFast   vpdpbusd where the CPU has AVX512-VNNI (exact: it accumulates in s32), else
//           vpmaddubsw + vpmaddwd + vpaddd, whose s16 pair sums saturate (255*127*2 > 32767):
//           exact only when the activations are 7-bit (0..127) or the weights lie in -64..63.
//           The kernel refuses the fast path when neither holds (FailedPrecondition), so a tuner
//           never keeps a wrong config.
//   kAmx    the AMX tile unit's TDPBUSD on 32 x 32 blocks of C (gemm_s8_amx.cc): exact, and
//           several times the vector paths' throughput; only where AmxInt8Available().
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "kernels/gemm_f32/gemm_f32.h"

namespace rooftune::kernels {

enum class S8Path { kExact = 0, kFast = 1, kAmx = 2 };

struct PackedWeightsS8 {
  int64_t k = 0, n = 0;
  int nr = 0;  // columns per panel (32 for AMX: two tiles of 16)
  S8Path path = S8Path::kExact;
  int k_group = 4;             // k values interleaved per column: 4 (fast, bytes) or 2 (exact, s16)
  int64_t k_padded = 0;        // a multiple of k_group (of 64 for AMX: whole tiles)
  std::shared_ptr<void> data;  // panels: [n / nr][k_padded / k_group][nr][k_group]
  size_t bytes = 0;            // of data
  std::vector<int32_t> column_sums;
  int8_t min_weight = 0, max_weight = 0;
  bool WeightsAre7Bit() const { return min_weight >= -64 && max_weight <= 63; }
  // What a call reads of these weights, for eviction before a cold call: panels and column sums.
  std::vector<absl::Span<const uint8_t>> StreamedBytes() const {
    return {{static_cast<const uint8_t*>(data.get()), bytes},
            {reinterpret_cast<const uint8_t*>(column_sums.data()),
             column_sums.size() * sizeof(int32_t)}};
  }
};

// Packs K x N weights for the current CPU's best target and `path`. B[k][n] is read at
// b[k * ldb + n * column_stride]: row-major K x N by default, or a GEMV's N x K weight matrix seen
// transposed (ldb = 1, column_stride = its row length) so a batch of inputs can reuse them.
absl::StatusOr<PackedWeightsS8> PackWeightsS8(const int8_t* b, int64_t k, int64_t n, int64_t ldb,
                                              S8Path path, int64_t column_stride = 1);

struct GemmS8Args {
  int64_t m = 0, n = 0, k = 0;
  const uint8_t* a = nullptr;
  int64_t lda = 0;
  const PackedWeightsS8* b = nullptr;
  int32_t* c = nullptr;  // s32 output (used when y is null)
  int64_t ldc = 0;
  // Dequantised output (when y is not null).
  float* y = nullptr;
  int64_t ldy = 0;
  float scale_a = 1;
  int32_t zero_point_a = 0;
  const float* scale_b = nullptr;
  const float* bias = nullptr;
  bool relu = false;
};

struct GemmS8Blocking {
  int mr = 6;
  int mc = 96;
  ParallelLoop parallel = ParallelLoop::kIc;
  // The K slice (0 = all of K). On the vector paths, whole groups of k (4 fast, 2 exact): a
  // KC-deep slice of a tile column's B stays in cache (in L2 where all of a deep K would not)
  // while every row tile of the block multiplies it, the sums carried between slices. On the AMX
  // path, a multiple of 64.
  int kc = 0;
  // AMX path only: the columns of a B block (a multiple of 32; 0 = all of N). A KC x NC block of B
  // is kept in L2 while 32 x KC micro-panels of A, one at a time in L1, multiply it. With the jc
  // loop parallel, column blocks are also cut to the threads' share of N, so that every thread
  // has work.
  int nc = 0;
};

absl::Status GemmS8(const GemmS8Args& args, const GemmS8Blocking& blocking);

// The AMX path (weights packed with S8Path::kAmx; MR is not used, blocks are 32 x 32, MC is
// rounded down to a multiple of 32). GemmS8 calls it; FailedPrecondition without AMX.
absl::Status GemmS8Amx(const GemmS8Args& args, const GemmS8Blocking& blocking);

// Register blocks for the current target, and whether its fast path is vpdpbusd (always exact).
int GemmS8PanelColumns();
// Whether a tile of `mr` rows spans two panels of B on this target (where the registers hold
// its sums).
bool GemmS8SpansTwoPanels(int mr);
// Whether the kernel reads A's rows where they lie: on the fast path when K is whole groups of 4
// (the word vpdpbusd broadcasts); the exact path widens A to s16 and packs it.
inline bool GemmS8ReadsAInPlace(S8Path path, int64_t k) {
  return path == S8Path::kFast && k % 4 == 0;
}
// The groups of k in a K slice of the vector paths: all `k_padded / k_group` when `kc` is 0 or
// covers K, else kc rounded down to whole groups, at least one. The kernel and its traffic model
// both slice by it.
inline int64_t GemmS8SliceGroups(int64_t kc, int64_t k_group, int64_t k_padded) {
  const int64_t groups = k_padded / k_group;
  if (kc <= 0) return groups;
  return std::clamp<int64_t>(kc / k_group, 1, groups);
}
// The panels of B a tile spans: two where the target has the kernel, unless splitting the columns
// across `threads` would then leave a thread without a tile. The kernel and its traffic model
// both decide by it.
inline int GemmS8TilePanels(bool two_panel_kernel, int64_t panels, bool columns_split,
                            int threads) {
  return two_panel_kernel && (!columns_split || panels / 2 >= threads) ? 2 : 1;
}
bool GemmS8FastPathIsVnni();
const std::vector<int>& GemmS8RowBlocks();

}  // namespace rooftune::kernels
