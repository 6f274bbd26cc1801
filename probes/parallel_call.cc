#include "probes/parallel_call.h"

#include <chrono>
#include <vector>

#include "framework/stats.h"
#include "oneapi/tbb/parallel_for.h"
#include "oneapi/tbb/partitioner.h"

namespace rooftune::probes {
namespace {

using Clock = std::chrono::steady_clock;

// Each thread's share: long enough that a worker woken late shows as the time it lost, short
// enough to be a small product's.
constexpr std::chrono::microseconds kShare{20};
// The calling thread's work between calls: a program's other work between two small products
// in its loop, or the other side of a pair. Workers idle this long are still awake; after a
// millisecond they sleep, and waking them cost 20-40 us on a 2-vCPU guest, which a program
// calling that seldom pays whatever the split.
constexpr std::chrono::microseconds kAloneBetweenCalls{50};
constexpr int kCalls = 101;

void WorkFor(std::chrono::microseconds span) {
  const Clock::time_point end = Clock::now() + span;
  while (Clock::now() < end) {
  }
}

}  // namespace

double MeasureParallelCallSeconds(Executor& executor) {
  const int threads = executor.threads();
  if (threads <= 1) return 0;
  std::vector<double> beyond;
  executor.Execute([&] {
    for (int call = 0; call < kCalls; ++call) {
      WorkFor(kAloneBetweenCalls);
      const Clock::time_point start = Clock::now();
      tbb::parallel_for(
          0, threads, [](int) { WorkFor(kShare); }, tbb::simple_partitioner());
      const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
      beyond.push_back(std::max(0.0, seconds - std::chrono::duration<double>(kShare).count()));
    }
  });
  return Summarize(beyond).median;
}

}  // namespace rooftune::probes
