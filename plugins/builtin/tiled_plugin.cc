// tiled_gemm_f32: the primer's textbook tiled product (kernels/gemm_f32/tiled.h), registered so
// that `rooftune primer` can run it under the cache simulator and `verify`/`bench` can run it
// like any kernel. `rooftune run` does not tune it (no default workloads): it is there to check
// the 2 n^3 / T law, not to compete.
#include <algorithm>

#include "framework/kernel.h"
#include "kernels/gemm_f32/tiled.h"

namespace rooftune {
namespace {

ParamSpace TiledSpace() {
  ParamSpace space;
  space.Add("TILE", {4, 8, 16, 32, 64, 128, 256}, "rows and columns of each square tile");
  return space;
}

// The largest tile of which three fit the L1 (the law's condition), else the smallest.
Config TiledInitialConfig(const Workload&, int, CacheMode, const MachineProfile& profile) {
  const double l1 = double(profile.EffectiveCacheBytes(1).value_or(32 << 10));
  int64_t tile = 4;
  for (int64_t t : {8, 16, 32, 64, 128, 256}) {
    if (3.0 * double(t * t) * 4 <= l1) tile = t;
  }
  Config c;
  c.Set("TILE", tile);
  return c;
}

absl::Status RunTiled(const Config& config, Problem& p, const RunContext&) {
  const Workload& w = p.workload;
  kernels::TiledGemmF32(p.a.data(), p.lda, p.b.data(), p.ldb, p.c.data(), p.ldc, w.m, w.n, w.k,
                        config.Get("TILE"), p.alpha, p.beta);
  return absl::OkStatus();
}

}  // namespace

ROOFTUNE_REGISTER_KERNEL(Kernel("tiled_gemm_f32")
                             .Describe("the primer's textbook tiled GEMM: T x T tiles, no packing "
                                       "or register blocking; A and B move 2 n^3 / T elements "
                                       "(rooftune primer checks it under a cache simulator)")
                             .Computes(Op::kGemm, {Dtype::kF32}, {Epilogue::kNone})
                             .Tunes(TiledSpace())
                             .StartsFrom(&TiledInitialConfig)
                             .Threads(Threading::kSelf)
                             .Runs(&RunTiled));

}  // namespace rooftune
