#include "probes/ceiling_loops.h"

#include <algorithm>
#include <atomic>
#include <chrono>

#include "oneapi/tbb/parallel_for.h"
#include "probes/amx_peak.h"

namespace rooftune::probes {
namespace {
using Clock = std::chrono::steady_clock;
constexpr std::chrono::milliseconds kArrivalTimeout{100};
}  // namespace

double TimeOnAllThreads(Executor& executor, const std::function<void(int)>& body) {
  const int threads = executor.threads();
  std::atomic<int> arrived{0};
  std::vector<Clock::time_point> start(threads), end(threads);
  executor.Execute([&] {
    tbb::parallel_for(
        0, threads,
        [&](int t) {
          arrived.fetch_add(1);
          const Clock::time_point deadline = Clock::now() + kArrivalTimeout;
          while (arrived.load() < threads && Clock::now() < deadline) {
          }
          start[t] = Clock::now();
          body(t);
          end[t] = Clock::now();
        },
        tbb::static_partitioner());
  });
  const Clock::time_point first = *std::min_element(start.begin(), start.end());
  const Clock::time_point last = *std::max_element(end.begin(), end.end());
  return std::chrono::duration<double>(last - first).count();
}

std::vector<PeakLoop> PeakLoops() {
  std::vector<PeakLoop> loops;
  for (Dtype dtype : {Dtype::kF64, Dtype::kF32, Dtype::kS8F32, Dtype::kU8S8}) {
    loops.push_back(
        {dtype, PeakPathFor(dtype), [dtype](uint64_t n) { return RunPeakLoop(dtype, n); }});
  }
  // int8 has a second ISA on CPUs with AMX; the roofline takes the higher of the two ceilings.
  loops.push_back({Dtype::kU8S8, AmxInt8PeakPath(), &RunAmxInt8PeakLoop});
  return loops;
}

const PeakLoop* PeakLoopOf(const std::vector<PeakLoop>& loops, const Ceiling& ceiling) {
  for (const PeakLoop& loop : loops) {
    if (loop.info.supported && loop.dtype == ceiling.dtype && loop.info.path == ceiling.source) {
      return &loop;
    }
  }
  return nullptr;
}

}  // namespace rooftune::probes
