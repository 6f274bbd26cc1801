// The fp32 GEMM's small-matrix path: for operands that fit L1 or L2, where packing and the cache
// blocks of the five loops cost more than they save. An MR x NR register block runs over C with A
// and B read in place, the last vector of each row masked where N is not a multiple of it, every
// call on the calling thread (no task is spawned, nothing is allocated). The same C = alpha A B +
// beta C (+ bias, ReLU) as GemmF32. Work too large for one thread may split its tiles over the
// threads of the caller's tbb::task_arena instead, by rows or by column panels.
#pragma once

#include "absl/status/status.h"
#include "kernels/gemm_f32/gemm_f32.h"

namespace rooftune::kernels {

enum class SmallSplit { kNone = 0, kRows = 1, kColumns = 2 };

struct GemmF32SmallBlocking {
  int mr = 4;   // rows of the register block: 1, 2, 4, 6, 8 or 12
  int nr = 16;  // columns: 1 to 4 vectors of the best target
  SmallSplit split = SmallSplit::kNone;
};

// Runs on the calling thread, or with a split on the arena's threads. The blocking must be a
// small micro-kernel of the CPU's best target (GemmF32SmallHasKernel).
absl::Status GemmF32Small(const GemmF32Args& args, const GemmF32SmallBlocking& blocking);

// Whether the best target compiled an MR x NR small micro-kernel whose accumulators, B vectors
// and broadcast fit its vector registers.
bool GemmF32SmallHasKernel(int mr, int nr);

}  // namespace rooftune::kernels
