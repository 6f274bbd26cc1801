// An fp32 GEMM's blocking with what its shape lets be decided once, ahead of its calls: on the
// small path, the micro-kernel of every tile (GemmF32SmallPlan). The prepare step of a tuned
// config and the library API's per-shape plans make one; each call then only runs it.
#pragma once

#include <cstdint>
#include <optional>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "kernels/gemm_f32/gemm_f32.h"
#include "kernels/gemm_f32/small.h"

namespace rooftune::kernels {

// Whether a call under this blocking spawns no task (the small path unsplit): it may then run on
// the calling thread without entering an arena, whose entry costs more than such a product.
inline bool RunsOnCallingThread(const GemmF32Blocking& b) {
  return b.path == GemmF32Path::kSmall && !b.split_small;
}

class GemmF32Plan {
 public:
  // For the products of C's M x N under `blocking`. Fails where the small path's block is not a
  // micro-kernel of the CPU's best target, or M or N is below 1.
  static absl::StatusOr<GemmF32Plan> Make(const GemmF32Blocking& blocking, int64_t m, int64_t n);

  // GemmF32(args, blocking()) for a product of the plan's M and N, inside the caller's arena
  // unless RunsOnCallingThread(blocking()).
  absl::Status Run(const GemmF32Args& args) const;

  const GemmF32Blocking& blocking() const { return blocking_; }

 private:
  explicit GemmF32Plan(const GemmF32Blocking& blocking) : blocking_(blocking) {}

  GemmF32Blocking blocking_;
  std::optional<GemmF32SmallPlan> small_;  // on the small path
};

}  // namespace rooftune::kernels
