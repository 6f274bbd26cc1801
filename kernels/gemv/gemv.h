// GEMV for the decode shape, y[N] = W[N x K] x[K] (+ bias, ReLU): every weight is read once to do
// two operations, so the kernel is bound by how fast it streams W. Three weight formats:
//   f32      W in f32;
//   s8f32    W in s8 with one f32 scale per row, dequantised in registers against f32 x
//            (y = scale[n] * sum_k W[n][k] x[k]): a quarter of the bytes, the same arithmetic.
//   u8s8     W in s8 against activations already quantised to u8 (scale, zero point): an integer
//            dot product per row (exact: vpdpbusd with VNNI, else s16 pairs into s32),
//            dequantised once per output:
//            y = scale_x * scale[n] * (acc - zero_point_x * rowsum[n]) + bias[n], or the raw s32
//            accumulators when no epilogue is asked for.
// Rows are split across the threads of the caller's tbb::task_arena in blocks of `rows_per_task`;
// within a task, groups of `rows_together` rows (neighbours, or spread over the task) share each
// load of x. W is read row-major in place, or
// packed once (PackGemvWeights) so that the rows read together stream as one sequence.
#pragma once

#include <cstdint>

#include "absl/status/status.h"
#include "kernels/gemm_f32/gemm_f32.h"

namespace rooftune::kernels {

struct GemvArgs {
  int64_t n = 0, k = 0;
  const void* w = nullptr;  // f32 or s8, row-major
  int64_t ldw = 0;
  const float* row_scale = nullptr;  // s8f32 only
  const float* x = nullptr;
  float* y = nullptr;
  const float* bias = nullptr;
  GemmEpilogue epilogue = GemmEpilogue::kNone;
};

struct GemvBlocking {
  int rows_per_task = 64;
  int rows_together = 4;   // 1, 2, 4, 8 or 16
  int prefetch_bytes = 0;  // software prefetch this far ahead along each row's stream (0: none);
                           // past a row's end, on where that stream goes next (in place: see
                           // InPlaceAheadOffset) or further along the group's one stream (packed)
  // W as PackGemvWeights lays it out for this blocking (then ldw is ignored), instead of
  // row-major: each group of rows read together becomes one sequential stream.
  bool packed_w = false;
  bool prefetch_into_l2 = false;  // the prefetch fills L2 only (prefetcht1), not L1 (prefetcht0)
  // A task's groups take rows spread evenly over it instead of neighbouring rows, so that each
  // row stream runs on through consecutive rows of W (ForEachGroupIn). In place only.
  bool spread_groups = false;
  // u8 x s8 only: widen both to s16 and multiply pairs even where vpdpbusd (VNNI) would do it in
  // one instruction. Exact either way; as with the probe's fastest readers (sums stored and
  // reloaded), a core that issues its loads more slowly can stream DRAM faster.
  bool widen_dot = false;
};

struct GemvU8S8Args {
  int64_t n = 0, k = 0;
  const int8_t* w = nullptr;
  int64_t ldw = 0;
  const int32_t* row_sums = nullptr;  // sum over k of W[n][k], computed once with the weights
  const float* row_scale = nullptr;
  const uint8_t* x = nullptr;
  float scale_x = 1;
  int32_t zero_point_x = 0;
  int32_t* acc = nullptr;  // raw output (when y is null)
  float* y = nullptr;      // dequantised output
  const float* bias = nullptr;
  bool relu = false;
};

// Packs W (n x k, row-major, leading dimension ldw; f32 or s8 elements of `element_bytes`) once,
// ahead of time, for a GEMV with this blocking (packed_w set): every group of rows the kernel
// reads together is stored line by line, a 64-byte line of the first row, the same line of the
// next, and so on, so the group streams from memory as one sequence (one prefetcher stream, one
// page at a time) instead of R streams a row apart. `out` holds n * k elements; groups stay where
// their rows were, so one pointer still addresses all of W.
absl::Status PackGemvWeights(const void* w, int64_t n, int64_t k, int64_t ldw, int element_bytes,
                             const GemvBlocking& blocking, void* out);

absl::Status GemvF32(const GemvArgs& args, const GemvBlocking& blocking);
absl::Status GemvU8S8(const GemvU8S8Args& args, const GemvBlocking& blocking);
absl::Status GemvS8F32(const GemvArgs& args, const GemvBlocking& blocking);

// The most rows_together whose accumulators fit the register file of the best target this CPU
// supports, for every weight format.
int GemvRowsTogetherThatFit();

}  // namespace rooftune::kernels
