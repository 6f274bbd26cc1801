// The executor: an arena of the configured thread count, each of its threads pinned to its slot's
// CPU while inside, the calling thread's own CPU mask given back afterwards; work handed to the
// arena's threads and their results read after the join (what ThreadSanitizer checks).
#include "framework/executor.h"

#include <gtest/gtest.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <set>
#include <vector>

#include "oneapi/tbb/parallel_for.h"
#include "oneapi/tbb/task_arena.h"

namespace rooftune {
namespace {

std::vector<int> CpusOfThisThread() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  }
  return cpus;
}

int MostThreads() { return std::min<int>(2, int(AllowedCpus().size())); }

TEST(Executor, OneSlotPerThreadEachOnAnAllowedCpu) {
  const std::vector<int> allowed = AllowedCpus();
  for (int threads = 1; threads <= MostThreads(); ++threads) {
    Executor executor(threads);
    EXPECT_EQ(executor.threads(), threads);
    ASSERT_EQ(executor.Cpus().size(), size_t(threads));
    for (int cpu : executor.Cpus()) {
      EXPECT_NE(std::find(allowed.begin(), allowed.end(), cpu), allowed.end()) << cpu;
    }
    // Distinct CPUs while there are enough: two threads never share a core we could have given.
    const std::set<int> distinct(executor.Cpus().begin(), executor.Cpus().end());
    EXPECT_EQ(distinct.size(), executor.Cpus().size());
  }
}

TEST(Executor, RunsInsideAnArenaOfItsThreadCount) {
  for (int threads = 1; threads <= MostThreads(); ++threads) {
    Executor executor(threads);
    int concurrency = 0;
    executor.Execute([&] { concurrency = tbb::this_task_arena::max_concurrency(); });
    EXPECT_EQ(concurrency, threads);
  }
}

TEST(Executor, PinsEachArenaThreadToItsSlotsCpuAndGivesTheCallerItsMaskBack) {
  const std::vector<int> before = CpusOfThisThread();
  Executor executor(MostThreads());
  std::mutex mutex;
  std::vector<std::vector<int>> masks;
  executor.Execute([&] {
    tbb::parallel_for(0, 64, [&](int) {
      std::vector<int> mine = CpusOfThisThread();
      std::lock_guard<std::mutex> lock(mutex);
      masks.push_back(std::move(mine));
    });
  });
  ASSERT_EQ(masks.size(), 64u);
  for (const std::vector<int>& mask : masks) {
    ASSERT_EQ(mask.size(), 1u) << "an arena thread ran unpinned";
    EXPECT_NE(std::find(executor.Cpus().begin(), executor.Cpus().end(), mask[0]),
              executor.Cpus().end());
  }
  EXPECT_EQ(CpusOfThisThread(), before);
}

// Inputs written before the loop, each element written by one task, the sum read after the
// join, and a counter shared through an atomic: nothing here may be reported as a race.
TEST(Executor, WorkHandedToItsThreadsIsSeenAfterTheJoin) {
  Executor executor(MostThreads());
  for (int round = 0; round < 8; ++round) {
    std::vector<int64_t> in(4096), out(in.size(), -1);
    for (size_t i = 0; i < in.size(); ++i) in[i] = int64_t(i) * (round + 1);
    std::atomic<int64_t> calls{0};
    executor.Execute([&] {
      tbb::parallel_for(size_t(0), in.size(), [&](size_t i) {
        out[i] = 2 * in[i];
        calls.fetch_add(1, std::memory_order_relaxed);
      });
    });
    EXPECT_EQ(calls.load(), int64_t(in.size()));
    for (size_t i = 0; i < in.size(); ++i) ASSERT_EQ(out[i], 2 * in[i]) << i;
  }
}

}  // namespace
}  // namespace rooftune
