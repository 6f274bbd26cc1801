// Where kernels run: a tbb::task_arena sized to the configured thread count, its threads pinned
// one per CPU, so that a 2-thread measurement uses two cores and nothing else of ours competes.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "framework/kernel.h"

namespace rooftune {

class Executor {
 public:
  // `threads` must be between 1 and the number of CPUs this process may use.
  explicit Executor(int threads);
  ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  int threads() const { return threads_; }
  // The CPUs its threads are pinned to, one per arena slot.
  const std::vector<int>& Cpus() const { return slot_cpus_; }

  // Runs the kernel as its threading model requires: kTbb kernels inside the arena, kSelf kernels
  // on the calling thread.
  absl::Status Run(const Kernel& kernel, const Config& config, Problem& problem,
                   const void* prepared = nullptr);
  // The same with what the kernel's prepare step made: a call it marks calling_thread_only runs
  // on the calling thread too.
  absl::Status Run(const Kernel& kernel, const Config& config, Problem& problem,
                   const Prepared& prepared);
  // How many calls entered the arena (for tests that must see a call skip it).
  int64_t arena_entries() const { return arena_entries_.load(std::memory_order_relaxed); }
  // How many times a thread joined the arena and was pinned (system calls; for tests that must
  // see a timing loop enter once, not once a call). A call from inside the arena joins nothing.
  int64_t pinned_entries() const;

  // Runs `fn` inside the arena (for probes and tests).
  void Execute(const std::function<void()>& fn);

 private:
  class Pinner;
  int threads_;
  std::vector<int> slot_cpus_;  // the CPU of each arena slot, fixed when the arena is made
  std::unique_ptr<class ArenaHolder> arena_;
  std::unique_ptr<Pinner> pinner_;
  std::atomic<int64_t> arena_entries_{0};
};

// CPUs this process may run on, from its affinity mask.
std::vector<int> AllowedCpus();

// The thread counts measured and tuned by default up to `most`: 1, 2, 4, ... and `most` itself.
// A server's dozens of cores take a handful of steps, not one probe and one tune per count (64
// CPUs: 7 counts, not 64); a count between two steps is priced from its neighbours.
std::vector<int> ThreadLadder(int most);

}  // namespace rooftune
