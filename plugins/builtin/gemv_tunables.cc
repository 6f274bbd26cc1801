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
// With a measured reader that prefetched in software: as far ahead as it fetched (a page), into
// the level it fetched into.
constexpr int64_t kReaderPrefetchBytes = 4096;
// s8 weights widened and converted to f32 in registers (s8 x f32): the loop does three
// instructions for every 16 weights where f32 weights need one FMA. Streaming from memory, that
// leaves the core too little room to keep many lines in flight by itself: two rows at once, each
// fetched in software a page ahead, whatever the fastest reader was. At 4096^2 on an AVX-512
// core 2 rows read 0.80-0.92 of the paired stream read against 0.66-0.86 for 4 (8192^2: level)
// and 0.67-0.71 for 8, and the prefetch lifted 8192^2 from 0.70-0.75 to 0.80-0.83. Held in a
// cache, the same config ran 0.6-0.8x as fast as 4 rows without prefetch: a W that fits takes
// kRowsTogetherFromCache (bench/RESULTS.md).
constexpr int64_t kRowsTogetherConvertingFromMemory = 2;
constexpr int64_t kConvertingPrefetchBytes = 4096;
// u8 x s8 dot products from memory: two rows at once, whatever the reader. Each vpdpbusd takes
// 64 weights where an f32 FMA takes 16, so the loop issues a quarter of the instructions per
// byte and the rows' streams, not the arithmetic, set its pace; more rows at once streamed
// worse. Initial configs with the reader set to 2, 4 and 8 streams, alternated, three or four
// runs each, one AVX-512 VNNI core: 4096^2 on one thread 0.84-0.91 of the paired stream read at
// 2 rows, 0.76-0.87 at 4, 0.75-0.84 at 8 (8192^2: 0.93-0.98, 0.76-0.83, 0.73-0.83); on two
// threads 0.92-1.02, 0.78-0.95, 0.86-0.91. f32 GEMVs did better with 4 or 8 rows, so the f32
// rule stays the reader's (bench/RESULTS.md). Behind a GEMV-shaped reader (one that multiplies
// what it reads) the u8 x s8 GEMV takes its streams as the f32 GEMV does: where that reader read
// one row, one row at a time ran within 4% of the tuned config in 11 of 12 cells of three main
// jobs (10% in the twelfth), two rows 1.10-1.18x slower at 8192^2 in the next three.
constexpr int64_t kRowsTogetherDotFromMemory = 2;
// f32 weights behind a plain reader: at least four rows at once (as many as the registers hold,
// if fewer). The readers of 2, 4 and 8 streams read DRAM within a few percent of each other, so
// which one a probe finds fastest changes from probe to probe, while the f32 GEMV reads worse
// with two rows: 0.72-0.92 of the paired stream read at 2 rows against 0.86-0.95 at 4 and 8 (the
// reader edited, alternated); two rows against four by config, alternated, 8192^2 0.63-0.81
// against 0.80-0.99 on one and two threads; and the main job's tuner found four rows 1.14-1.32x
// faster in the runs whose probe crowned the 2-stream reader (bench/RESULTS.md). A reader that
// multiplies what it reads by a cached vector is a GEMV of its streams' rows, and the f32 GEMV
// takes its streams as they are: where one row so read was the fastest, the tuned one row ran
// 8192^2 1.12-1.26x faster than the initial four in all six cells of three main jobs; at 4096^2
// one row ran 1.00-1.19x slower than the tuned config (a short prefetch, two to eight rows).
constexpr int64_t kFewestRowsTogetherF32 = 4;

// A W that a cache holds (timed warm and within the largest cache planned): no software prefetch
// and eight rows at once, whatever the DRAM reader did. The prefetch is for lines on their way from
// DRAM; on lines a cache holds it only adds work: the initial config of one row fetched a page
// ahead (the GEMV-shaped reader's) read 23 GB/s from L2 and 22 from L3, where eight rows without
// prefetch read 117 and 30 (f32 512^2 and 1024^2; u8 x s8 1024^2 4.2x and 2048^2 1.2-1.3x
// faster, s8 weights converted 1.3-1.4x). Eight and sixteen rows were within 5% of each other, four
// 5-15% slower (bench/RESULTS.md).
constexpr int64_t kRowsTogetherFromCache = 8;

// Whether a GEMV's weights stream from memory on every call: a cold call's always, a warm call's
// when they outgrow every cache the profile plans (a profile that plans none holds nothing).
bool WeightsFromMemory(const Workload& w, CacheMode cache, const MachineProfile& profile) {
  const double bytes_per_weight = w.dtype == Dtype::kF32 ? 4 : 1;
  return cache == CacheMode::kCold || bytes_per_weight * double(w.n) * double(w.k) >
                                          double(profile.LargestEffectiveCacheBytes());
}

// Whether the probe's fastest one-thread reader of DRAM multiplied what it read by a cached
// vector: a GEMV of its streams' rows, whose rule the GEMVs then follow as they find it.
bool FastestDramReaderIsGemvShaped(const MachineProfile& profile) {
  const Ceiling* dram = profile.FindBandwidth(MemoryLevel::kDram, 1, "read");
  return dram != nullptr && dram->reader && dram->reader->dot;
}

}  // namespace

// The GEMV's loop is a read of W's rows, a few at a time: each thread's rows stream as the
// probe's fastest one-thread reader of DRAM streamed (MachineProfile's read ceiling records it),
// as many rows at once as it had streams (f32 weights at least four unless the reader was
// GEMV-shaped, kFewestRowsTogetherF32),
// prefetched in software only if it was. One thread's:
// that is how a core streams alone; with more threads DRAM saturates, the readers' rates close
// up, and which comes out fastest is noise. Cores differ in which reader that is (a few streams
// without software prefetch on one, many with it on another: bench/RESULTS.md). Without a
// measured reader: as many rows as the register file holds accumulators for, prefetched a few
// lines ahead. Never more rows than the registers hold; converting s8 to f32 from memory, two
// rows prefetched a page ahead (kRowsTogetherConvertingFromMemory). W row-major, copied once onto
// huge pages: the rows stay separate streams and no stream crosses a 4 KiB page boundary, where the
// prefetchers stop. Groups spread over the task: each row stream runs on through consecutive rows
// (kernels::ForEachGroupIn). A W that a cache holds is no stream from DRAM: eight rows at once
// without prefetch (kRowsTogetherFromCache). The tuner tries every layout.
Config GemvInitialConfig(const Workload& w, int threads, CacheMode cache,
                         const MachineProfile& profile) {
  static const ParamSpace space = GemvSpace();
  const int64_t rows =
      space.Find("ROWS")->LargestNotAbove(double(w.n) / (kTasksPerThread * threads));
  const int64_t fit = kernels::GemvRowsTogetherThatFit();
  int64_t together = fit;
  int64_t prefetch = kPrefetchBytes;
  bool prefetch_into_l2 = false;
  const Ceiling* dram = profile.FindBandwidth(MemoryLevel::kDram, 1, "read");
  if (dram != nullptr && dram->reader) {
    together = space.Find("TOGETHER")
                   ->LargestNotAbove(double(std::min<int64_t>(together, dram->reader->streams)));
    prefetch = dram->reader->prefetch ? kReaderPrefetchBytes : 0;
    prefetch_into_l2 = dram->reader->prefetch_into_l2;
  }
  if (w.dtype == Dtype::kF32 && !FastestDramReaderIsGemvShaped(profile)) {
    const int64_t fewest = std::min<int64_t>(fit, kFewestRowsTogetherF32);
    together = std::max(together, space.Find("TOGETHER")->LargestNotAbove(double(fewest)));
  }
  if (!WeightsFromMemory(w, cache, profile)) {
    together = std::min(fit, kRowsTogetherFromCache);
    prefetch = 0;
    prefetch_into_l2 = false;
  } else if (w.dtype == Dtype::kS8F32) {
    together = std::min(fit, kRowsTogetherConvertingFromMemory);
    prefetch = kConvertingPrefetchBytes;
    prefetch_into_l2 = false;
  }
  return space.WithUnusedAtRest(Config{{"ROWS", rows},
                                       {"TOGETHER", together},
                                       {"PF", prefetch},
                                       {"PFL", prefetch_into_l2 ? 2 : 1},
                                       {"PACKW", int64_t(GemvLayout::kCopied)},
                                       {"SPREAD", 1}});
}

// The u8 x s8 GEMV starts with the CPU's fastest dot product, two rows at once where W streams
// from memory (kRowsTogetherDotFromMemory), unless the fastest reader was GEMV-shaped: then as
// it read.
Config GemvU8S8InitialConfig(const Workload& w, int threads, CacheMode cache,
                             const MachineProfile& profile) {
  static const ParamSpace space = GemvU8S8Space();
  Config c = GemvInitialConfig(w, threads, cache, profile);
  c.Set("DOT", space.Code("DOT", "fastest"));
  if (WeightsFromMemory(w, cache, profile) && !FastestDramReaderIsGemvShaped(profile)) {
    c.Set("TOGETHER",
          std::min<int64_t>(kernels::GemvRowsTogetherThatFit(), kRowsTogetherDotFromMemory));
  }
  return c;
}

Config GemvWithWFromEachCall(const Config& config, const Workload&, int, const MachineProfile&) {
  if (GemvLayoutOf(config) == GemvLayout::kInPlace) return config;
  Config in_place = config;
  in_place.Set("PACKW", int64_t(GemvLayout::kInPlace));
  return in_place;
}

}  // namespace rooftune
