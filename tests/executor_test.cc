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

#include "absl/strings/str_cat.h"
#include "framework/machine_profile.h"
#include "framework/problem.h"
#include "framework/reference.h"
#include "framework/validation.h"
#include "kernels/gemm_f32/gemm_f32.h"
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

// A call its prepare step marks calling_thread_only (gemm_f32's unsplit small path) runs without
// entering the arena, and right; every other call of a TBB kernel enters it.
TEST(Executor, ACallingThreadOnlyCallSkipsTheArena) {
  const Kernel* kernel = KernelRegistry::Global().Find("gemm_f32");
  ASSERT_NE(kernel, nullptr);
  ASSERT_TRUE(kernel->prepare);
  const Workload w{Op::kGemm, 13, 40, 7, Dtype::kF32, Epilogue::kBiasRelu};
  Executor executor(MostThreads());
  const std::string small = absl::StrCat("PATH=small,MR=4,NR=", kernels::GemmF32VectorLanes());
  const Config blocked =
      kernel->InitialConfig({Op::kGemm, 1024, 1024, 1024, Dtype::kF32}, executor.threads(),
                            CacheMode::kWarm, MachineProfile());
  ASSERT_EQ(blocked.Get("PATH"), 0) << blocked.ToString();
  struct Case {
    std::string config;
    bool skips;
  };
  for (const Case& c :
       {Case{small + ",SPLIT=none", true}, Case{small + ",SPLIT=split,PAR=rows", false},
        Case{kernel->params.Format(blocked), false}}) {
    absl::StatusOr<Config> config = kernel->params.Parse(c.config, Config(), false);
    ASSERT_TRUE(config.ok()) << c.config << ": " << config.status();
    absl::StatusOr<Problem> problem = Problem::Create(w);
    ASSERT_TRUE(problem.ok()) << problem.status();
    const ReferenceOutput reference = ComputeReference(*problem);
    absl::StatusOr<Prepared> prepared = kernel->prepare(*config, *problem);
    ASSERT_TRUE(prepared.ok()) << prepared.status();
    EXPECT_EQ(prepared->calling_thread_only, c.skips) << c.config;
    const int64_t entries = executor.arena_entries();
    const absl::Status ran = executor.Run(*kernel, *config, *problem, *prepared);
    ASSERT_TRUE(ran.ok()) << c.config << ": " << ran;
    EXPECT_EQ(executor.arena_entries() - entries, c.skips ? 0 : 1) << c.config;
    const Validation v = CompareWithReference(*problem, reference);
    EXPECT_TRUE(v.ok) << c.config << ": " << v.Summary();
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
