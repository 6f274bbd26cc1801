// The GEMV kernels' analytic initial configs, every threshold a named constant with its reason.
#include "kernels/gemv/gemv.h"
#include "plugins/builtin/gemv_blocking.h"

namespace rooftune {
namespace {

// Tasks per thread: enough for the threads to balance each other several times over.
constexpr double kTasksPerThread = 8;
// Software prefetch a few lines ahead of each row's stream: it keeps a core that converts int8
// weights streaming, and costs f32 nothing measurable.
constexpr int64_t kPrefetchBytes = 512;

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
  return space.WithUnusedAtRest(Config{{"ROWS", rows},
                                       {"TOGETHER", kernels::GemvRowsTogetherThatFit()},
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
