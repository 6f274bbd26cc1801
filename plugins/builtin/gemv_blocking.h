// The GEMV kernels' parameters (ROWS, TOGETHER, PF, PFL, PACKW, SPREAD, and DOT for u8 x s8),
// their initial configs, and how a config maps to the kernel's blocking: for callers that run
// kernels::Gemv* directly with a tuned config, such as the batch sweep (which gets the weights a
// grouped or copied config reads from the kernel's prepare step).
#pragma once

#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "framework/cache_mode.h"
#include "framework/machine_profile.h"
#include "framework/param_space.h"
#include "framework/workload.h"
#include "kernels/gemv/gemv.h"

namespace rooftune {

// How PACKW prepares W once, ahead of time (the choices in this order).
enum class GemvLayout { kInPlace = 0, kGrouped = 1, kCopied = 2 };

kernels::GemvBlocking GemvBlockingOf(const Config& config);
GemvLayout GemvLayoutOf(const Config& config);

// W (n x k, rows ldw apart, f32 or s8 elements of `element_bytes`) prepared once for `layout`,
// on huge pages where the system grants them: packed across each group of rows `blocking` reads
// together (kGrouped), or copied as it is, rows still ldw apart (kCopied). Null for kInPlace,
// which reads the caller's W.
absl::StatusOr<std::shared_ptr<void>> PrepareGemvWeights(GemvLayout layout,
                                                         const kernels::GemvBlocking& blocking,
                                                         const void* w, int64_t n, int64_t k,
                                                         int64_t ldw, int element_bytes);

ParamSpace GemvSpace();
ParamSpace GemvU8S8Space();  // GemvSpace and the u8 x s8 dot product

// The analytic initial configs (gemv_tunables.cc).
Config GemvInitialConfig(const Workload& w, int threads, CacheMode cache,
                         const MachineProfile& profile);
Config GemvU8S8InitialConfig(const Workload& w, int threads, CacheMode cache,
                             const MachineProfile& profile);

// `config` for calls that bring their own W each time: W read in place where `config` groups or
// copies it ahead, the rest as `config` has it.
Config GemvWithWFromEachCall(const Config& config, const Workload& w, int threads,
                             const MachineProfile& profile);

}  // namespace rooftune
