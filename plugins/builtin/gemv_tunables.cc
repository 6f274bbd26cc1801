// The GEMV kernels' analytic initial configs, every threshold a named constant with its reason.
#include <algorithm>

#include "kernels/gemv/gemv.h"
#include "plugins/builtin/gemv_blocking.h"

namespace rooftune {
namespace {

// Tasks per thread: enough for the threads to balance each other several times over.
constexpr double kTasksPerThread = 8;
// Without a measured reader: software prefetch a few lines ahead of each row's stream, which
// kept a core that converts int8 weights streaming.
constexpr int64_t kPrefetchBytes = 512;
// With a measured reader that prefetched in software: as far ahead as it fetched (a page).
constexpr int64_t kReaderPrefetchBytes = 4096;
// s8 weights widened and converted to f32 in registers (s8 x f32): the loop does three times the
// work a weight byte of f32 costs, and with more than 8 rows streaming together it fell behind
// the read: at 4096^2 and 8192^2 on an AVX-512 core, 8 rows read 0.85-0.90 of the paired stream
// read and 16 rows 0.79-0.84 (the u8 x s8 kernel, one vpdpbusd per 64 weights, keeps up with 16).
constexpr int64_t kMostRowsTogetherConverting = 8;

}  // namespace

// The GEMV's loop is a read of W's rows, a few at a time: each thread's rows stream as the
// probe's fastest one-thread reader of DRAM streamed (MachineProfile's read ceiling records it),
// as many rows at once as it had streams, prefetched in software only if it was. One thread's:
// that is how a core streams alone; with more threads DRAM saturates, the readers' rates close
// up, and which comes out fastest is noise. Cores differ in which reader that is (a few streams
// without software prefetch on one, many with it on another: bench/RESULTS.md). Without a
// measured reader: as many rows as the register file holds accumulators for, prefetched a few
// lines ahead. Never more rows than the registers hold, nor, converting s8 to f32, than keep up
// with the read. W row-major, copied once onto huge pages: the rows stay separate streams and no
// stream crosses a 4 KiB page boundary, where the prefetchers stop. Groups spread over the task:
// each row stream runs on through consecutive rows (kernels::ForEachGroupIn). The tuner tries
// every layout.
Config GemvInitialConfig(const Workload& w, int threads, const MachineProfile& profile) {
  static const ParamSpace space = GemvSpace();
  const int64_t rows =
      space.Find("ROWS")->LargestNotAbove(double(w.n) / (kTasksPerThread * threads));
  int64_t together = kernels::GemvRowsTogetherThatFit();
  if (w.dtype == Dtype::kS8F32) together = std::min(together, kMostRowsTogetherConverting);
  int64_t prefetch = kPrefetchBytes;
  const Ceiling* dram = profile.FindBandwidth(MemoryLevel::kDram, 1, "read");
  if (dram != nullptr && dram->reader) {
    together = space.Find("TOGETHER")
                   ->LargestNotAbove(double(std::min<int64_t>(together, dram->reader->streams)));
    prefetch = dram->reader->prefetch ? kReaderPrefetchBytes : 0;
  }
  return space.WithUnusedAtRest(Config{{"ROWS", rows},
                                       {"TOGETHER", together},
                                       {"PF", prefetch},
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

Config GemvWithWFromEachCall(const Config& config, const Workload&, int, const MachineProfile&) {
  if (GemvLayoutOf(config) == GemvLayout::kInPlace) return config;
  Config in_place = config;
  in_place.Set("PACKW", int64_t(GemvLayout::kInPlace));
  return in_place;
}

}  // namespace rooftune
