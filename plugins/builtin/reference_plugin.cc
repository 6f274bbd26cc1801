// The reference kernels, registered like any other so that `rooftune verify` and `bench` can run
// them: slow, single-threaded, obviously correct. `rooftune run` does not tune them.
#include "framework/kernel.h"
#include "framework/reference.h"

namespace rooftune {
namespace {

absl::Status RunReferenceGemm(const Config&, Problem& p, const RunContext&) {
  const Workload& w = p.workload;
  if (w.dtype == Dtype::kF32) {
    ReferenceGemmF32(w.m, w.n, w.k, p.alpha, p.a.data(), p.lda, p.b.data(), p.ldb, p.beta,
                     p.c.data(), p.ldc, p.bias.data(), w.epilogue);
    return absl::OkStatus();
  }
  ReferenceGemmU8S8(w.m, w.n, w.k, p.a_u8.data(), p.lda, p.b_s8.data(), p.ldb, p.c_s32.data(), p.ldc);
  if (w.epilogue != Epilogue::kNone) {
    for (int64_t i = 0; i < w.m; ++i) {
      for (int64_t j = 0; j < w.n; ++j) {
        p.c[i * p.ldc + j] =
            ReferenceDequantize(p.c_s32[i * p.ldc + j], p.scale_a, p.zero_point_a, p.scale_b[j],
                                p.colsum_b[j], p.bias[j], w.epilogue == Epilogue::kBiasRelu);
      }
    }
  }
  return absl::OkStatus();
}

absl::Status RunReferenceGemv(const Config&, Problem& p, const RunContext&) {
  const Workload& w = p.workload;
  if (w.dtype == Dtype::kS8F32) {
    ReferenceGemvS8F32(w.n, w.k, p.b_s8.data(), p.ldb, p.scale_b.data(), p.a.data(), p.c.data(),
                       p.bias.data(), w.epilogue);
  } else {
    ReferenceGemvF32(w.n, w.k, p.b.data(), p.ldb, p.a.data(), p.c.data(), p.bias.data(), w.epilogue);
  }
  return absl::OkStatus();
}

}  // namespace

ROOFTUNE_REGISTER_KERNEL(Kernel("reference_gemm")
                             .Describe("reference GEMM: f32 (double accumulation) and u8 x s8 -> "
                                       "s32 with the dequantising epilogue")
                             .Computes(Op::kGemm, {Dtype::kF32, Dtype::kU8S8}, kAllEpilogues)
                             .Threads(Threading::kSelf)
                             .Runs(&RunReferenceGemm)
                             .IsReference());

ROOFTUNE_REGISTER_KERNEL(Kernel("reference_gemv")
                             .Describe("reference GEMV: f32 weights, or s8 weights with per-row "
                                       "scales against f32 x")
                             .Computes(Op::kGemv, {Dtype::kF32, Dtype::kS8F32}, kAllEpilogues)
                             .Threads(Threading::kSelf)
                             .Runs(&RunReferenceGemv)
                             .IsReference());

}  // namespace rooftune
