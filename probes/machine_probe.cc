#include "probes/machine_probe.h"

#include <algorithm>
#include <chrono>
#include <vector>

#include "absl/strings/str_format.h"
#include "framework/executor.h"
#include "framework/problem.h"
#include "oneapi/tbb/parallel_for.h"
#include "probes/bandwidth.h"
#include "probes/peak_compute.h"
#include "probes/system_facts.h"

namespace rooftune::probes {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Every thread of the arena runs `body(thread_index)` once; returns the wall time of the slowest.
double TimeOnAllThreads(Executor& executor, const std::function<void(int)>& body) {
  const int threads = executor.threads();
  double seconds = 0;
  executor.Execute([&] {
    const Clock::time_point start = Clock::now();
    tbb::parallel_for(0, threads, [&](int t) { body(t); }, tbb::static_partitioner());
    seconds = Seconds(start);
  });
  return seconds;
}

// A ceiling is an upper bound, so it takes the best of several repetitions, not the median: a
// kernel that sustains more than the probe's best is evidence against the model.
double BestRate(int repetitions, const std::function<double()>& rate) {
  double best = 0;
  for (int r = 0; r < repetitions; ++r) best = std::max(best, rate());
  return best;
}

void ProbeCompute(MachineProfile& profile, Executor& executor, bool quick) {
  for (Dtype dtype : {Dtype::kF64, Dtype::kF32, Dtype::kU8S8}) {
    if (!PeakPathFor(dtype).supported) continue;
    // Calibrate iterations to ~20 ms (quick) or ~60 ms per repetition.
    uint64_t iterations = 1 << 16;
    const double target = quick ? 0.02 : 0.06;
    for (;;) {
      const Clock::time_point start = Clock::now();
      RunPeakLoop(dtype, iterations);
      const double t = Seconds(start);
      if (t > target / 4 || iterations > (uint64_t{1} << 34)) {
        iterations = uint64_t(double(iterations) * target / std::max(t, 1e-6));
        break;
      }
      iterations *= 4;
    }
    double ops_per_thread = 0;
    const double rate = BestRate(quick ? 3 : 5, [&] {
      std::vector<double> ops(executor.threads());
      const double seconds =
          TimeOnAllThreads(executor, [&](int t) { ops[t] = RunPeakLoop(dtype, iterations); });
      ops_per_thread = ops[0];
      double total = 0;
      for (double o : ops) total += o;
      return total / seconds;
    });
    profile.ceilings.push_back({Ceiling::Kind::kCompute, dtype, MemoryLevel::kDram,
                                executor.threads(), rate, PeakPathFor(dtype).path});
  }
}

absl::Status ProbeBandwidth(MachineProfile& profile, Executor& executor, bool quick) {
  const int threads = executor.threads();
  for (int i = 0; i < kNumMemoryLevels; ++i) {
    const MemoryLevel level = MemoryLevel(i);
    if (level != MemoryLevel::kDram && !profile.DataCache(i + 1)) continue;
    const uint64_t bytes = BandwidthWorkingSet(profile, level, threads);
    const size_t per_thread = size_t(bytes / 4 / threads) / 64 * 64;
    Buffer<float> buffer(per_thread * threads);
    if (buffer.data() == nullptr) {
      return absl::ResourceExhaustedError(absl::StrFormat(
          "bandwidth probe: cannot allocate %.0f MiB for the %s working set", bytes / 1048576.0,
          ToString(level)));
    }
    // Each thread touches its own slice first, so its pages are local to it.
    TimeOnAllThreads(executor, [&](int t) {
      float* slice = buffer.data() + size_t(t) * per_thread;
      for (size_t j = 0; j < per_thread; ++j) slice[j] = 1.0f;
    });
    // Enough passes that a repetition takes a few milliseconds even in L1.
    const double pass_bytes = StreamBytes(StreamKind::kRead, per_thread) * threads;
    const int passes = std::max(1, int((quick ? 5e7 : 2e8) / pass_bytes));
    const double rate = BestRate(quick ? 3 : 7, [&] {
      const double seconds = TimeOnAllThreads(executor, [&](int t) {
        float* slice = buffer.data() + size_t(t) * per_thread;
        for (int p = 0; p < passes; ++p) StreamPass(StreamKind::kRead, slice, nullptr, nullptr, per_thread);
      });
      return pass_bytes * passes / seconds;
    });
    profile.ceilings.push_back(
        {Ceiling::Kind::kBandwidth, Dtype::kF32, level, threads, rate, "read"});
  }
  return absl::OkStatus();
}

}  // namespace

uint64_t BandwidthWorkingSet(const MachineProfile& facts, MemoryLevel level, int threads) {
  auto size = [&](int l) -> uint64_t {
    std::optional<CacheLevel> c = facts.DataCache(l);
    return c ? c->size_bytes : 0;
  };
  const uint64_t l1 = size(1), l2 = size(2), l3 = size(3);
  const uint64_t last = l3 ? l3 : (l2 ? l2 : l1);
  switch (level) {
    // Half of a private level per thread: inside it, with room for the stack and code.
    case MemoryLevel::kL1: return l1 / 2 * threads;
    case MemoryLevel::kL2: return std::max(l1 * 2, l2 / 2) * threads;
    // Past every thread's L2 and well inside the shared L3.
    case MemoryLevel::kL3: return std::min(l3 / 2, 4 * l2 * threads);
    // At least 4x the last level, so no measurable part of it stays cached.
    case MemoryLevel::kDram: return std::max<uint64_t>(4 * last, uint64_t{256} << 20);
  }
  return 0;
}

absl::StatusOr<MachineProfile> ProbeMachine(const ProbeOptions& options) {
  MachineProfile profile = ReadSystemFacts();
  const int max_threads = options.max_threads > 0
                              ? std::min(options.max_threads, profile.logical_cpus)
                              : profile.logical_cpus;
  for (int threads = 1; threads <= max_threads; ++threads) {
    Executor executor(threads);
    if (options.progress) options.progress(absl::StrFormat("probe: peak compute, %d thread(s)", threads));
    ProbeCompute(profile, executor, options.quick);
    if (options.progress) options.progress(absl::StrFormat("probe: bandwidth, %d thread(s)", threads));
    if (absl::Status s = ProbeBandwidth(profile, executor, options.quick); !s.ok()) return s;
  }
  return profile;
}

}  // namespace rooftune::probes
