#include "kernels/gemm_f32/plan.h"

#include <utility>

namespace rooftune::kernels {

absl::StatusOr<GemmF32Plan> GemmF32Plan::Make(const GemmF32Blocking& blocking, int64_t m,
                                              int64_t n) {
  GemmF32Plan plan(blocking);
  if (blocking.path != GemmF32Path::kSmall) return plan;
  const SmallSplit split = !blocking.split_small                    ? SmallSplit::kNone
                           : blocking.parallel == ParallelLoop::kIc ? SmallSplit::kRows
                                                                    : SmallSplit::kColumns;
  absl::StatusOr<GemmF32SmallPlan> small =
      GemmF32SmallPlan::Make(m, n, GemmF32SmallBlocking{blocking.mr, blocking.nr, split});
  if (!small.ok()) return small.status();
  plan.small_ = *std::move(small);
  return plan;
}

absl::Status GemmF32Plan::Run(const GemmF32Args& args) const {
  if (!small_.has_value()) return GemmF32(args, blocking_);
  if (blocking_.fuse_epilogue || args.epilogue == GemmEpilogue::kNone) return small_->Run(args);
  // Unfused: the product, then the epilogue's own pass over C.
  if (args.bias == nullptr)
    return absl::InvalidArgumentError("the bias epilogue needs a bias vector");
  GemmF32Args product = args;
  product.epilogue = GemmEpilogue::kNone;
  if (absl::Status s = small_->Run(product); !s.ok()) return s;
  BiasReluF32(args.m, args.n, args.bias, args.epilogue == GemmEpilogue::kBiasRelu, args.c,
              args.ldc);
  return absl::OkStatus();
}

}  // namespace rooftune::kernels
