// How the GEMV kernels' configs (ROWS, TOGETHER, PF, PACKW) map to the kernel's blocking and its
// weight layout: for callers that run kernels::Gemv* directly with a tuned config, such as the
// batch sweep.
#pragma once

#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "framework/param_space.h"
#include "kernels/gemv/gemv.h"

namespace rooftune {

kernels::GemvBlocking GemvBlockingOf(const Config& config);

// W packed for this config (kernels::PackGemvWeights), or null when the config reads it in place.
absl::StatusOr<std::shared_ptr<const void>> PackGemvWeightsFor(const Config& config, const void* w,
                                                               int64_t n, int64_t k, int64_t ldw,
                                                               int element_bytes);

}  // namespace rooftune
