// A race on purpose, for the ThreadSanitizer build only: scripts/tsan.sh runs it on its own and
// fails unless ThreadSanitizer reports it here. It proves that the sanitizer sees through TBB's
// task hand-off (instrumented oneTBB) and that nothing hides a race in our code. Disabled, so
// that the run of every other threaded test stays clean.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>

#include "oneapi/tbb/parallel_for.h"
#include "oneapi/tbb/task_arena.h"

namespace rooftune {
namespace {

TEST(RaceCanary, DISABLED_TwoTasksIncrementOneCounterWithoutALock) {
  tbb::task_arena arena(2);
  std::atomic<int> arrived{0};
  int64_t counter = 0;  // plain, not atomic: the race
  arena.execute([&] {
    tbb::parallel_for(
        0, 2,
        [&](int) {
          // Each task waits (a while at most) for the other to start, so the two run on two
          // threads at once even on one CPU.
          arrived.fetch_add(1);
          const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
          while (arrived.load() < 2 && std::chrono::steady_clock::now() < deadline) {
            std::this_thread::yield();
          }
          ++counter;
        },
        tbb::simple_partitioner());
  });
  EXPECT_EQ(arrived.load(), 2);
  EXPECT_EQ(counter, 2);
}

}  // namespace
}  // namespace rooftune
