// The fp32 GEMM's small-matrix path: for operands that fit L1 or L2, where packing and the cache
// blocks of the five loops cost more than they save. An MR x NR register block runs over C with A
// and B read in place, the last vector of each row masked where N is not a multiple of it, every
// call on the calling thread (no task is spawned, nothing is allocated). The same C = alpha A B +
// beta C (+ bias, ReLU) as GemmF32. Work too large for one thread may split its tiles over the
// threads of the caller's tbb::task_arena instead, by rows or by column panels.
#pragma once

#include <cstddef>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kernels/gemm_f32/gemm_f32.h"
#include "kernels/gemm_f32/small_tile.h"

namespace rooftune::kernels {

enum class SmallSplit { kNone = 0, kRows = 1, kColumns = 2 };

// A block of fewer sums than this (MR x NR / lanes) keeps two banks of them, even and odd k, on
// a product at least kSmallBankedDepthFrom deep: an FMA's latency times the FMA units, with
// slack, is the number of independent sums that keeps the units busy. Even an 8-deep product
// gains: its whole time is a few chains of FMA latency (8^3 and 16^3 ran about 5% faster banked).
constexpr int kSmallBankedSumsBelow = 16;
constexpr int kSmallBankedDepthFrom = 8;

// The register block heights the small path compiles for the tuner, where the registers hold
// them: 16 and 24 only for one vector of 32 registers (B's vector loaded once a step, each row's
// A element a broadcast load per FMA, so the loads per FMA fall with the block's height).
inline constexpr int kGemmF32SmallHeights[] = {1, 2, 4, 6, 8, 12, 16, 24};

// Vectors across a register block: up to kGemmF32SmallVectors at every height, and up to
// kGemmF32SmallWideVectors for blocks of at most kGemmF32SmallWideRows rows. A product of one or
// two rows reads each element of B once: a block 16 vectors wide reads B's rows in runs of 16
// lines and broadcasts A's element once for 16 FMAs, where 4 vectors broadcast it once for 4.
inline constexpr int kGemmF32SmallVectors = 4;
inline constexpr int kGemmF32SmallWideVectors = 16;
inline constexpr int kGemmF32SmallWideRows = 2;

struct GemmF32SmallBlocking {
  int mr = 4;   // rows of the register block, one of kGemmF32SmallHeights
  int nr = 16;  // columns: a whole number of the best target's vectors (see above)
  SmallSplit split = SmallSplit::kNone;
};

// The small path resolved once for an M x N of C: the micro-kernel of every tile (full, at the
// bottom edge, at the right edge, in the corner) chosen ahead, so that a call only walks its
// tiles. A product of a few hundred multiply-adds costs about as much as deciding that again.
// A product of one column (N = 1) whose column is contiguous runs MR dot products at a time,
// the vectors along K, whatever NR says: any block over one column is one lane wide.
class GemmF32SmallPlan {
 public:
  // Fails where M or N is below 1 or the blocking is not a small micro-kernel of the CPU's best
  // target (GemmF32SmallHasKernel).
  static absl::StatusOr<GemmF32SmallPlan> Make(int64_t m, int64_t n,
                                               const GemmF32SmallBlocking& blocking);

  // Runs a product of the plan's M and N (any K and leading dimensions) on the calling thread,
  // or with a split on the threads of the caller's arena.
  absl::Status Run(const GemmF32Args& args) const;

  const GemmF32SmallBlocking& blocking() const { return blocking_; }

 private:
  GemmF32SmallPlan() = default;
  // The tiles of C's rows [row0, row1) and columns [col0, col1), both starting on a tile's edge;
  // with `dot`, the dot products of one column instead.
  void RunTiles(const GemmF32Args& args, bool dot, size_t row0, size_t row1, size_t col0,
                size_t col1) const;
  // The tiles spread over the threads of the caller's arena, by rows or by column panels.
  void RunSplit(const GemmF32Args& args, bool dot) const;
  // Why a call's arguments do not fit the plan.
  absl::Status Refuse(const GemmF32Args& args) const;
  void RecordCodePath(bool dot, int64_t k) const;

  GemmF32SmallBlocking blocking_;
  size_t m_ = 0, n_ = 0;
  SmallTileKernels kernels_;
};

// Runs on the calling thread, or with a split on the arena's threads: a plan made for the call.
absl::Status GemmF32Small(const GemmF32Args& args, const GemmF32SmallBlocking& blocking);

// Whether the best target compiled an MR x NR small micro-kernel whose accumulators, B vectors
// and broadcast fit its vector registers.
bool GemmF32SmallHasKernel(int mr, int nr);

}  // namespace rooftune::kernels
