// A noisy neighbour for tests and scripts: a thread pinned to one CPU that spins for a while, as
// another tenant's process does on a shared machine.
#pragma once

#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace rooftune::fixtures {

class CpuHog {
 public:
  explicit CpuHog(int cpu) : cpu_(cpu) {}
  ~CpuHog() { Stop(); }

  // Spins on the CPU for `seconds` from now, on a thread of its own (one run at a time).
  void Run(double seconds) {
    Stop();
    stop_ = false;
    thread_ = std::thread([this, seconds] {
      cpu_set_t set;
      CPU_ZERO(&set);
      CPU_SET(cpu_, &set);
      pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
      const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
      volatile unsigned long spins = 0;
      while (!stop_.load(std::memory_order_relaxed) && std::chrono::steady_clock::now() < end) {
        spins = spins + 1;
      }
    });
  }
  void Stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }

 private:
  int cpu_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace rooftune::fixtures
