// The GEMV kernels' analytic initial configs, every threshold a named constant with its reason.
#include <algorithm>

#include "kernels/gemv/gemv.h"
#include "plugins/builtin/gemv_blocking.h"

namespace rooftune {
namespace {

// Tasks per thread: enough for the threads to balance each other several times over.
constexpr double kTasksPerThread = 8;
// Software prefetch a few lines ahead of each row's stream: it keeps a core that converts int8
// weights streaming, and costs f32 nothing measurable.
constexpr int64_t kPrefetchBytes = 512;
// s8 weights widened and converted to f32 in registers (s8 x f32): the loop does three times the
// work a weight byte of f32 costs, and with more than 8 rows streaming together it fell behind
// the read: at 4096^2 and 8192^2 on an AVX-512 core, 8 rows read 0.85-0.90 of the paired stream
// read and 16 rows 0.79-0.84 (the u8 x s8 kernel, one vpdpbusd per 64 weights, keeps up with 16).
constexpr int64_t kMostRowsTogetherConverting = 8;

}  // namespace

// As many rows streaming at once as the register file holds accumulators for: each row is a
// stream the prefetchers follow, and one core needs many lines in flight (Little's law). W
// row-major, copied once onto huge pages: the rows stay separate streams (the prefetchers keep
// more lines in flight for them than for one packed stream a group) and no stream crosses a
// 4 KiB page boundary, where the prefetchers stop. Groups spread over the task: each row stream
// runs on through consecutive rows (kernels::ForEachGroupIn). The tuner tries every layout.
Config GemvInitialConfig(const Workload& w, int threads, const MachineProfile&) {
  static const ParamSpace space = GemvSpace();
  const int64_t rows =
      space.Find("ROWS")->LargestNotAbove(double(w.n) / (kTasksPerThread * threads));
  int64_t together = kernels::GemvRowsTogetherThatFit();
  if (w.dtype == Dtype::kS8F32) together = std::min(together, kMostRowsTogetherConverting);
  return space.WithUnusedAtRest(Config{{"ROWS", rows},
                                       {"TOGETHER", together},
                                       {"PF", kPrefetchBytes},
                                       {"PFL", 1},
                                       {"PACKW", int64_t(GemvLayout::kCopied)},
                                       {"SPREAD", 1}});
}

// The u8 x s8 GEMV starts with the CPU's fastest dot product.
Config GemvU8S8InitialConfig(const Workload& w, int threads, const MachineProfile& profile) {
  static const ParamSpace space = GemvU8S8Space();
  Config c = GemvInitialConfig(w, threads, profile);
  c.Set("DOT", space.Code("DOT", "fastest"));
  return c;
}

}  // namespace rooftune
