// The reference kernels, registered like any other so that `rooftune verify` and `bench` can run
// them: slow, single-threaded, obviously correct, and the very code validation compares every
// kernel with. `rooftune run` does not tune them.
#include <algorithm>

#include "framework/kernel.h"
#include "framework/validation.h"

namespace rooftune {
namespace {

// The reference result validation compares every kernel with (ComputeReference), written where
// the kernels write theirs: C (f32 or s32) with the problem's leading dimension, or y.
absl::Status RunReference(const Config&, Problem& p, const RunContext&) {
  const Workload& w = p.workload;
  const ReferenceOutput ref = ComputeReference(p);
  const int64_t rows = w.op == Op::kGemv ? 1 : w.m;
  for (int64_t i = 0; i < rows; ++i) {
    const size_t from = size_t(i) * size_t(w.n), to = size_t(i) * size_t(p.ldc);
    if (!ref.f32.empty()) std::copy_n(ref.f32.data() + from, w.n, p.c.data() + to);
    if (!ref.s32.empty()) std::copy_n(ref.s32.data() + from, w.n, p.c_s32.data() + to);
  }
  return absl::OkStatus();
}

}  // namespace

ROOFTUNE_REGISTER_KERNEL(Kernel("reference_gemm")
                             .Describe("reference GEMM: f32 (double accumulation) and u8 x s8 -> "
                                       "s32 with the dequantising epilogue")
                             .Computes(Op::kGemm, {Dtype::kF32, Dtype::kU8S8}, kAllEpilogues)
                             .Threads(Threading::kSelf)
                             .Runs(&RunReference)
                             .IsReference());

ROOFTUNE_REGISTER_KERNEL(Kernel("reference_gemv")
                             .Describe("reference GEMV: f32 weights, s8 weights with per-row "
                                       "scales against f32 x, or u8 x s8 -> s32 with the "
                                       "dequantising epilogue")
                             .Computes(Op::kGemv, {Dtype::kF32, Dtype::kS8F32, Dtype::kU8S8},
                                       kAllEpilogues)
                             .Threads(Threading::kSelf)
                             .Runs(&RunReference)
                             .IsReference());

}  // namespace rooftune
