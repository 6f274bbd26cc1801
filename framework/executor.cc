#include "framework/executor.h"

#include <sched.h>

#include "oneapi/tbb/task_arena.h"
#include "oneapi/tbb/task_scheduler_observer.h"

namespace rooftune {

std::vector<int> AllowedCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
      if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
    }
  }
  if (cpus.empty()) cpus.push_back(0);
  return cpus;
}

std::vector<int> ThreadLadder(int most) {
  std::vector<int> counts;
  for (int t = 1; t < most; t *= 2) counts.push_back(t);
  counts.push_back(std::max(most, 1));
  return counts;
}

class ArenaHolder {
 public:
  explicit ArenaHolder(int threads) : arena(threads) {}
  tbb::task_arena arena;
};

// Pins each thread that enters the arena to the CPU of its arena slot, and restores the thread's
// previous mask when it leaves (the calling thread must not stay pinned after a measurement).
class Executor::Pinner : public tbb::task_scheduler_observer {
 public:
  Pinner(tbb::task_arena& arena, std::vector<int> slot_cpus)
      : tbb::task_scheduler_observer(arena), slot_cpus_(std::move(slot_cpus)) {
    observe(true);
  }
  ~Pinner() override { observe(false); }

  void on_scheduler_entry(bool) override {
    const int slot = tbb::this_task_arena::current_thread_index();
    if (slot < 0) return;
    entries.fetch_add(1, std::memory_order_relaxed);
    sched_getaffinity(0, sizeof(saved_), &saved_);
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(slot_cpus_[size_t(slot) % slot_cpus_.size()], &one);
    sched_setaffinity(0, sizeof(one), &one);
  }
  void on_scheduler_exit(bool) override { sched_setaffinity(0, sizeof(saved_), &saved_); }

  std::atomic<int64_t> entries{0};

 private:
  std::vector<int> slot_cpus_;
  static thread_local cpu_set_t saved_;
};
thread_local cpu_set_t Executor::Pinner::saved_;

Executor::Executor(int threads)
    : threads_(threads), arena_(std::make_unique<ArenaHolder>(threads)) {
  const std::vector<int> allowed = AllowedCpus();
  for (int slot = 0; slot < threads_; ++slot) {
    slot_cpus_.push_back(allowed[size_t(slot) % allowed.size()]);
  }
  arena_->arena.initialize();
  pinner_ = std::make_unique<Pinner>(arena_->arena, slot_cpus_);
}

Executor::~Executor() = default;

void Executor::Execute(const std::function<void()>& fn) { arena_->arena.execute(fn); }

int64_t Executor::pinned_entries() const {
  return pinner_->entries.load(std::memory_order_relaxed);
}

absl::Status Executor::Run(const Kernel& kernel, const Config& config, Problem& problem,
                           const void* prepared) {
  const RunContext context{threads_, prepared};
  if (kernel.threading == Threading::kSelf) return kernel.run(config, problem, context);
  arena_entries_.fetch_add(1, std::memory_order_relaxed);
  absl::Status status;
  arena_->arena.execute([&] { status = kernel.run(config, problem, context); });
  return status;
}

absl::Status Executor::Run(const Kernel& kernel, const Config& config, Problem& problem,
                           const Prepared& prepared) {
  if (prepared.calling_thread_only) {
    return kernel.run(config, problem, RunContext{threads_, prepared.object.get()});
  }
  return Run(kernel, config, problem, prepared.object.get());
}

}  // namespace rooftune
