#include "probes/paired_ceiling.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "benchmark/benchmark.h"
#include "framework/cold_cache.h"
#include "framework/judged_trial.h"
#include "framework/stats.h"
#include "kernels/workspace.h"
#include "oneapi/tbb/parallel_for.h"
#include "probes/bandwidth.h"
#include "probes/ceiling_loops.h"
#include "probes/machine_probe.h"
#include "probes/paired_calls.h"

namespace rooftune::probes {
namespace {

using Clock = std::chrono::steady_clock;

double Since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// A loop shorter than this pays its thread start-up in its rate: every call runs at least this
// long, whatever the kernel's time (the rate is what is compared, not the call).
constexpr double kShortestLoopSeconds = 2e-4;

// One call of a ceiling's loop, returning the rate it reached (ops/s or bytes/s). Whatever a call
// needs first (an eviction, a warming pass) it does outside its timing.
using RateOfOneCall = std::function<double()>;

// A ceiling's loop, and for a read which readers it takes from which sources ("" for compute).
struct CeilingLoop {
  RateOfOneCall call;
  std::string readers;
};

// A kernel's threads take tiles as they come, so when the host preempts one thread the others
// finish its share; a compute loop split evenly in advance would wait for the preempted thread,
// and a busy machine would make the ceiling look slow and the kernel impossible (7x, on two
// threads beside a compiler). So the compute loop is cut into chunks of about this long, taken
// the same way, and so is a stream read from DRAM (kDramReadChunkFloats); a read from a cache level
// keeps each thread on its own slice, which that thread's cache holds.
constexpr double kChunkSeconds = 2e-5;

// The fewest floats a thread reads in one call of a DRAM read (256 KiB): fewer, and the call's
// start-up shows in its rate.
constexpr size_t kDramReadShortestFloats = 64 * 1024;

// The largest of `spans`, the last of equals: of ColdBytes, what a kernel prepared (a copy of W
// on huge pages) over the operand it was copied from, which the kernel no longer reads.
ByteSpan LargestSpan(const std::vector<ByteSpan>& spans) {
  ByteSpan largest;
  for (ByteSpan span : spans) {
    if (span.size() >= largest.size()) largest = span;
  }
  return largest;
}

// Runs `chunks` calls of `chunk` in the executor's arena, each taken by whichever thread is free;
// returns the wall time.
double TimeChunks(Executor& executor, int chunks, const std::function<void(int)>& chunk) {
  const Clock::time_point start = Clock::now();
  executor.Execute([&] {
    tbb::parallel_for(
        0, chunks, [&](int i) { chunk(i); }, tbb::simple_partitioner());
  });
  return Since(start);
}

// The compute loop of `ceiling`, each call about `seconds` of work on every thread, in chunks.
absl::StatusOr<CeilingLoop> ComputeLoop(const Ceiling& ceiling, Executor& executor,
                                        double seconds) {
  static const std::vector<PeakLoop> loops = PeakLoops();
  const PeakLoop* loop = PeakLoopOf(loops, ceiling);
  if (loop == nullptr) {
    return absl::NotFoundError(absl::StrCat("no loop of this CPU measures the ", ceiling.Name(),
                                            " (", ceiling.source, ")"));
  }
  // Iterations of one chunk, calibrated on one thread after a warm-up call (the first pays for
  // the dispatch and the vector unit's wake-up), each size timed at its best of three.
  loop->run(1024);
  uint64_t iterations = 16;
  for (;;) {
    double t = 1e9;
    for (int repeat = 0; repeat < 3; ++repeat) {
      const Clock::time_point start = Clock::now();
      loop->run(iterations);
      t = std::min(t, Since(start));
    }
    if (t > kChunkSeconds / 4 || iterations > (uint64_t{1} << 34)) {
      iterations =
          std::max<uint64_t>(1, uint64_t(double(iterations) * kChunkSeconds / std::max(t, 1e-9)));
      break;
    }
    iterations *= 2;
  }
  const int chunks =
      std::max(executor.threads(), int(std::lround(seconds / kChunkSeconds)) * executor.threads());
  const double ops_per_chunk = loop->run(iterations);
  return CeilingLoop{[loop, iterations, chunks, ops_per_chunk, &executor] {
                       const double t =
                           TimeChunks(executor, chunks, [&](int) { loop->run(iterations); });
                       return chunks * ops_per_chunk / t;
                     },
                     ""};
}

// Where a stream read reads: thread t's slice begins at data + t * slice.
struct ReadSource {
  const float* data = nullptr;
  size_t slice = 0;   // floats per thread
  size_t offset = 0;  // DRAM: where the next call's stretch begins
  size_t passes = 1;  // cache levels: passes over each thread's slice in a call
  const char* name = "";
};

// A reader and the source it reads, as calibration ranked them.
struct ReadPick {
  Reader reader;
  size_t source = 0;
};

// The stream read of `level` at the executor's thread count. A cache level is read from a buffer
// of the probe's working-set size for it, each thread's slice touched first by that thread. DRAM
// and a warm L3 are read from such a buffer on huge pages and from the kernel's own largest
// operand: where the bytes lie decides how fast they stream (4 KiB pages against 2 MiB, and which
// of the host's memory backs them). A DRAM read of a buffer elsewhere ran 0.8x its usual rate for
// minutes while the GEMV it was paired with kept its speed, so it came out 1.15x its "ceiling";
// a warm GEMV's 16 MiB of weights on 4 KiB pages streamed from a shared L3 at 1.05-1.2x the
// buffer's rate in one process and 0.97x in another. A private level's operand is not read:
// the kernel's threads split it otherwise than into one slice each. A call reads as many bytes
// as the kernel moves there: whole passes over a cache level's slices, each by its own thread; a
// stretch of a DRAM source, which moves on from call to call, in chunks (see kChunkSeconds).
struct ReadLoop {
  std::shared_ptr<void> pages;
  std::vector<ReadSource> sources;
  std::vector<ReadPick> picks;  // taken in turn, one a call
  size_t calls = 0;
  size_t floats_per_call = 0;  // DRAM: floats each thread reads per call, at most a slice
};

// The floats a DRAM read may take from `bytes` on each of `threads` threads: whole cache lines,
// none when a slice would be shorter than a read call's shortest.
size_t FloatsPerThreadOf(ByteSpan bytes, int threads) {
  if (reinterpret_cast<uintptr_t>(bytes.data()) % alignof(float) != 0) return 0;
  const size_t slice = bytes.size() / sizeof(float) / size_t(threads) / 64 * 64;
  return slice >= kDramReadShortestFloats ? slice : 0;
}

// ReadPass over bytes that may not hold floats (int8 weights): denormal operands, which such
// bytes read as floats now and then, would cost some cores microcode assists the kernel never
// pays, so the read treats them as zero.
float ReadPassOfAnyBytes(const float* a, size_t n, Reader reader, size_t passes = 1) {
#if defined(__x86_64__) || defined(__i386__)
  const unsigned int csr = _mm_getcsr();
  _mm_setcsr(csr | 0x8040);  // DAZ and FTZ
  const float sum = ReadPass(a, n, reader, passes);
  _mm_setcsr(csr);
  return sum;
#else
  return ReadPass(a, n, reader, passes);
#endif
}

absl::StatusOr<CeilingLoop> ReadLoopOf(const MachineProfile& profile, const Ceiling& ceiling,
                                       double charged_bytes, ByteSpan kernel_bytes,
                                       Executor& executor, double seconds, CacheMode cache) {
  const int threads = executor.threads();
  const uint64_t working_set = BandwidthWorkingSet(profile, ceiling.level, threads);
  if (working_set == 0) {
    return absl::NotFoundError(absl::StrCat("no working set for the ", ceiling.Name()));
  }
  auto loop = std::make_shared<ReadLoop>();
  const size_t own_slice = std::max<size_t>(working_set / 4 / threads / 64 * 64, 64);
  loop->pages = kernels::AllocateOnHugePages(own_slice * threads * sizeof(float));
  if (loop->pages == nullptr) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "paired ceiling: cannot allocate ", working_set >> 20, " MiB for the ", ceiling.Name()));
  }
  float* data = static_cast<float*>(loop->pages.get());
  TimeOnAllThreads(executor,
                   [&](int t) { std::fill_n(data + size_t(t) * own_slice, own_slice, 1.0f); });
  loop->sources.push_back({data, own_slice, 0, 1, "huge pages"});
  const bool dram = ceiling.level == MemoryLevel::kDram;
  if (dram || (ceiling.level == MemoryLevel::kL3 && cache == CacheMode::kWarm)) {
    if (const size_t slice = FloatsPerThreadOf(kernel_bytes, threads); slice > 0) {
      loop->sources.push_back({reinterpret_cast<const float*>(kernel_bytes.data()), slice, 0, 1,
                               "the kernel's operand"});
    }
  }
  // As many bytes as the kernel moves across this level, within what the buffer and a call's
  // length allow; the rate is what counts, so a call of another length is still the same ceiling.
  const double at_ceiling = std::max(seconds, kShortestLoopSeconds) * ceiling.per_second;
  const double bytes = std::max(charged_bytes, at_ceiling);
  if (dram) {
    loop->floats_per_call = std::clamp<size_t>(size_t(bytes / 4 / threads) / 64 * 64,
                                               kDramReadShortestFloats, own_slice);
  } else {
    for (ReadSource& source : loop->sources) {
      source.passes = std::max<size_t>(1, size_t(bytes / (4.0 * double(source.slice) * threads)));
    }
  }
  auto one_call = [loop, dram, cache, threads, &executor](const ReadPick& pick) {
    ReadSource& source = loop->sources[pick.source];
    const Reader reader = pick.reader;
    const size_t n = dram ? std::min(loop->floats_per_call, source.slice) : source.slice;
    const size_t begin = dram ? source.offset : 0;
    if (dram) source.offset = begin + 2 * n <= source.slice ? begin + n : 0;
    const float* data = source.data;
    const size_t slice = source.slice;
    const size_t passes = source.passes;
    if (cache == CacheMode::kCold || dram) {
      std::vector<ByteSpan> spans;
      for (int t = 0; t < threads; ++t)
        spans.push_back(BytesOf(data + size_t(t) * slice + begin, n));
      EvictFromCaches(spans, executor);
    } else {
      TimeOnAllThreads(executor,
                       [&](int t) { ReadPassOfAnyBytes(data + size_t(t) * slice, n, reader); });
    }
    if (dram) {
      // From DRAM, chunks of the stretch taken as they come, as a kernel's threads take rows (see
      // kChunkSeconds): a thread the host preempts leaves its share to the others.
      const size_t per_chunk = std::min<size_t>(n, kDramReadChunkFloats);
      const int per_thread = int((n + per_chunk - 1) / per_chunk);
      std::vector<float> sums(size_t(per_thread) * threads);
      const double t = TimeChunks(executor, per_thread * threads, [&](int c) {
        const size_t from = size_t(c % per_thread) * per_chunk;
        sums[size_t(c)] = ReadPassOfAnyBytes(data + size_t(c / per_thread) * slice + begin + from,
                                             std::min(per_chunk, n - from), reader);
      });
      benchmark::DoNotOptimize(sums.data());
      return 4.0 * double(n) * threads / t;
    }
    // A cache level: each thread reads its own slice, which its caches hold.
    std::vector<float> sums(threads);
    const double t = TimeOnAllThreads(executor, [&](int i) {
      sums[i] = ReadPassOfAnyBytes(data + size_t(i) * slice, n, reader, passes);
    });
    benchmark::DoNotOptimize(sums.data());
    return 4.0 * double(n) * double(passes) * threads / t;
  };
  // Which reader a core streams fastest with differs by machine, level and source, as in the
  // probe. A few calibration calls on a busy machine can crown the wrong one (its rivals' calls
  // were the preempted ones), so the calls alternate between the two fastest of each source, and
  // each pair's bound, the best loop rate around it (kRateWindow), is whichever of them the
  // machine favours then.
  for (size_t s = 0; s < loop->sources.size(); ++s) {
    std::vector<double> best(std::size(kReaders), 0.0);
    for (int round = 0; round < 2; ++round) {
      for (size_t r = 0; r < best.size(); ++r) {
        best[r] = std::max(best[r], one_call({kReaders[r], s}));
      }
    }
    std::vector<size_t> order(best.size());
    for (size_t r = 0; r < order.size(); ++r) order[r] = r;
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return best[a] > best[b]; });
    loop->picks.push_back({kReaders[order[0]], s});
    loop->picks.push_back({kReaders[order[1]], s});
  }
  std::vector<std::string> readers;
  for (size_t s = 0; s < loop->sources.size(); ++s) {
    readers.push_back(absl::StrCat(loop->picks[2 * s].reader.Name(), ", ",
                                   loop->picks[2 * s + 1].reader.Name(), " on ",
                                   loop->sources[s].name));
  }
  return CeilingLoop{[loop, one_call] {
                       const ReadPick& pick = loop->picks[loop->calls++ % loop->picks.size()];
                       return one_call(pick);
                     },
                     absl::StrJoin(readers, "; ")};
}

// Pairs on either side of a pair whose loop rate can stand for its ceiling (PairedAttainment).
constexpr size_t kRateWindow = 2;

// A bound of the other kind (compute beside a read, a read beside compute) at least this fraction
// of the binding one can bind instead in another phase of a shared machine: an AMX GEMM's time
// moved 1.35x between two runs while the L2 read paired beside it kept its rate. Its loop is timed
// in the same pairs. (Two reads of different levels slow together; only the binding one is timed.)
constexpr double kRunnerUpFraction = 0.75;

// The largest bound of the other kind than `binding`'s within kRunnerUpFraction of it, or null.
const LevelBound* RunnerUpOf(const Verdict& prior, const LevelBound& binding) {
  const LevelBound* runner_up = nullptr;
  for (const LevelBound& b : prior.bounds) {
    if (b.ceiling.kind == binding.ceiling.kind || b.work <= 0) continue;
    if (b.seconds < kRunnerUpFraction * binding.seconds) continue;
    if (runner_up == nullptr || b.seconds > runner_up->seconds) runner_up = &b;
  }
  return runner_up;
}

// One loop's calls in the pairs, and the bound they price.
struct PairedLoop {
  const LevelBound* bound;
  CeilingLoop loop;
  std::vector<double> rates;  // one a pair
};

// The time `bound`'s work takes at the fastest rate its loop ran in pair i and the kRateWindow
// pairs on either side: a ceiling is approached from below, and a loop call the host preempted (a
// neighbour's time slice lasts milliseconds, a call a fraction of one) would otherwise price that
// pair's kernel against a ceiling the machine was not short of.
double BoundSecondsOfPair(const PairedLoop& paired, size_t i) {
  const std::vector<double>& rates = paired.rates;
  const size_t from = i >= kRateWindow ? i - kRateWindow : 0;
  const size_t to = std::min(rates.size(), i + kRateWindow + 1);
  return paired.bound->work /
         *std::max_element(rates.begin() + long(from), rates.begin() + long(to));
}

// The pairs' attainments: each pair's bound (the larger of the binding loop's and a runner-up's,
// at their rates then, plus any separate pass) over the kernel's time. `loops` begins with the
// binding ceiling's, whose rate over the profile's is ceiling_now. Sets `runner_up_binds` to the
// pairs where the runner-up's bound was the larger.
PairedAttainment AttainmentOfPairs(const std::vector<PairedLoop>& loops,
                                   const std::vector<double>& kernel_seconds, double pass_seconds,
                                   int* runner_up_binds) {
  std::vector<double> attainments, of_profile;
  *runner_up_binds = 0;
  const LevelBound& binding = *loops[0].bound;
  for (size_t i = 0; i < kernel_seconds.size(); ++i) {
    const double binding_seconds = BoundSecondsOfPair(loops[0], i);
    double seconds = binding_seconds;
    for (size_t l = 1; l < loops.size(); ++l) {
      const double other = BoundSecondsOfPair(loops[l], i);
      *runner_up_binds += other > binding_seconds;
      seconds = std::max(seconds, other);
    }
    attainments.push_back((seconds + pass_seconds) / kernel_seconds[i]);
    if (binding.ceiling.per_second > 0) {
      of_profile.push_back(binding.work / binding_seconds / binding.ceiling.per_second);
    }
  }
  const Quartiles q = QuartilesOf(attainments);
  PairedAttainment paired;
  paired.median = q.median, paired.low = q.low, paired.high = q.high;
  paired.pairs = int(attainments.size());
  if (!of_profile.empty()) paired.ceiling_now = QuartilesOf(of_profile).median;
  return paired;
}

// The loop of `bound`'s ceiling, each call about `seconds`.
absl::StatusOr<CeilingLoop> LoopOf(const MachineProfile& profile, const LevelBound& bound,
                                   Problem& problem, const Prepared& prepared, Executor& executor,
                                   double seconds, CacheMode cache) {
  const Ceiling& ceiling = bound.ceiling;
  if (ceiling.kind == Ceiling::Kind::kCompute) return ComputeLoop(ceiling, executor, seconds);
  return ReadLoopOf(profile, ceiling, bound.work, LargestSpan(ColdBytes(problem, prepared)),
                    executor, seconds, cache);
}

std::string LoopName(const Ceiling& ceiling, const CeilingLoop& loop) {
  return absl::StrCat(ceiling.Name(), " (", ceiling.source, loop.readers.empty() ? "" : ": ",
                      loop.readers, ")");
}

}  // namespace

absl::StatusOr<PairedAttainment> MeasurePairedAttainment(const MachineProfile& profile,
                                                         const Kernel& kernel, const Config& config,
                                                         Problem& problem, const Prepared& prepared,
                                                         Executor& executor, const Verdict& prior,
                                                         const PairingOptions& options) {
  const LevelBound* binding = prior.Binding();
  if (binding == nullptr || binding->work <= 0) {
    return absl::NotFoundError("no ceiling binds this result: nothing to pair");
  }
  const Ceiling& ceiling = binding->ceiling;
  KernelSamples samples(kernel, config, problem, prepared, executor, options.cache);
  // The loop's calls last about as long as the kernel's (the main loop's share of it).
  // Next settles the kernel's own threads: the loop calibrates (and a read ranks its readers,
  // once for the whole pairing) right after this call, and among a still-spinning team it would
  // crown a slow reader for good.
  absl::StatusOr<double> first = samples.Next();
  if (!first.ok()) return first.status();
  std::vector<PairedLoop> loops;
  for (const LevelBound* bound : {binding, RunnerUpOf(prior, *binding)}) {
    if (bound == nullptr) continue;
    const double seconds = std::max(kShortestLoopSeconds,
                                    *first * bound->seconds / std::max(prior.bound_seconds, 1e-12));
    absl::StatusOr<CeilingLoop> loop =
        LoopOf(profile, *bound, problem, prepared, executor, seconds, options.cache);
    if (!loop.ok()) {
      if (bound == binding) return loop.status();
      continue;  // no loop of this CPU measures the runner-up: the binding one's alone
    }
    loops.push_back({bound, *std::move(loop), {}});
  }

  auto call_loops = [&] {
    for (PairedLoop& paired : loops) paired.rates.push_back(paired.loop.call());
  };
  std::vector<double> kernel_seconds;
  const Clock::time_point start = Clock::now();
  while (int(kernel_seconds.size()) < options.min_pairs ||
         (Since(start) < options.seconds && int(kernel_seconds.size()) < options.max_pairs)) {
    const bool loops_first = kernel_seconds.size() % 2 == 1;
    if (loops_first) {
      call_loops();
      // The loops' TBB workers spin a while after them too, among a kernel's own team.
      samples.Settle();
    }
    // A kernel with a thread pool of its own (oneDNN's OpenMP team) leaves its threads spinning
    // on the cores for a while after each call; a loop started among them runs slow and makes
    // the kernel look impossible (1.3-1.8 on two threads). Next lets them fall asleep first.
    absl::StatusOr<double> t = samples.Next();
    if (!t.ok()) return t.status();
    kernel_seconds.push_back(*t);
    if (!loops_first) call_loops();
  }
  int runner_up_binds = 0;
  PairedAttainment paired =
      AttainmentOfPairs(loops, kernel_seconds, prior.pass_seconds, &runner_up_binds);
  paired.ceiling = LoopName(ceiling, loops[0].loop);
  if (loops.size() > 1) {
    absl::StrAppend(&paired.ceiling, ", and beside it ",
                    LoopName(loops[1].bound->ceiling, loops[1].loop), ", the larger bound in ",
                    runner_up_binds, " of ", paired.pairs, " pairs");
  }
  return paired;
}

absl::StatusOr<Verdict> JudgeBesideCeiling(const MachineProfile& profile, const Kernel& kernel,
                                           const Trial& trial, Problem& problem, Executor& executor,
                                           PairingOptions options) {
  const Verdict prior = JudgeTrial(profile, kernel, trial);
  if (!trial.validation.ok || prior.verdict == Verdict::Class::kNoModel) return prior;
  absl::StatusOr<Prepared> prepared = Prepare(kernel, trial.config, problem);
  if (!prepared.ok()) return prepared.status();
  return JudgeBesideCeiling(profile, kernel, trial, problem, *prepared, executor, options);
}

absl::StatusOr<Verdict> JudgeBesideCeiling(const MachineProfile& profile, const Kernel& kernel,
                                           const Trial& trial, Problem& problem,
                                           const Prepared& prepared, Executor& executor,
                                           PairingOptions options) {
  const Verdict prior = JudgeTrial(profile, kernel, trial);
  if (!trial.validation.ok || prior.verdict == Verdict::Class::kNoModel) return prior;
  options.cache = trial.cache;
  absl::StatusOr<PairedAttainment> paired;
  auto measure = [&] {
    paired = MeasurePairedAttainment(profile, kernel, trial.config, problem, prepared, executor,
                                     prior, options);
  };
  // Inside the executor's arena once, not once per call (entering pins the calling thread: system
  // calls a short call's time would include). A kernel with threads of its own stays outside.
  if (kernel.threading == Threading::kTbb) {
    executor.Execute(measure);
  } else {
    measure();
  }
  if (absl::IsNotFound(paired.status())) return prior;
  if (!paired.ok()) return paired.status();
  return JudgeTrial(profile, kernel, trial, *paired);
}

}  // namespace rooftune::probes
