#include "probes/machine_probe.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <chrono>
#include <functional>
#include <memory>
#include <vector>

#include "absl/strings/str_format.h"
#include "framework/executor.h"
#include "framework/problem.h"
#include "kernels/workspace.h"
#include "oneapi/tbb/parallel_for.h"
#include "probes/amx_peak.h"
#include "probes/bandwidth.h"
#include "probes/cache_discovery.h"
#include "probes/latency.h"
#include "probes/peak_compute.h"
#include "probes/system_facts.h"

namespace rooftune::probes {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Every thread of the arena runs `body(thread_index)` once; returns the time from the moment all
// of them have started to the moment the slowest finishes. The threads wait for each other first:
// a worker that wakes up late would otherwise leave the others running alone for part of the
// window, and a short window (a pass over L1 takes microseconds) would count its wake-up as time.
// If a thread never arrives (the arena ran out of workers) the wait gives up after
// kArrivalTimeout and the bodies run as they come; the rate is then low, never high.
constexpr std::chrono::milliseconds kArrivalTimeout{100};
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

// A ceiling is an upper bound, so it takes the best of several repetitions, not the median: a
// kernel that sustains more than the probe's best is evidence against the model.
double BestRate(int repetitions, const std::function<double()>& rate) {
  double best = 0;
  for (int r = 0; r < repetitions; ++r) best = std::max(best, rate());
  return best;
}

// One compute ceiling: a dtype, the instructions that reach it, and the loop that measures it.
struct PeakProbe {
  Dtype dtype;
  PeakProbeInfo info;
  std::function<double(uint64_t)> run;  // iterations -> operations done
};

std::vector<PeakProbe> PeakProbes() {
  std::vector<PeakProbe> probes;
  for (Dtype dtype : {Dtype::kF64, Dtype::kF32, Dtype::kU8S8}) {
    probes.push_back(
        {dtype, PeakPathFor(dtype), [dtype](uint64_t n) { return RunPeakLoop(dtype, n); }});
  }
  // int8 has a second ISA on CPUs with AMX; the roofline takes the higher of the two ceilings.
  probes.push_back({Dtype::kU8S8, AmxInt8PeakPath(), &RunAmxInt8PeakLoop});
  return probes;
}

// Threads with a core each run independent multiply-adds at the one-thread rate. A multi-thread
// peak below kComputeScaling times that was most likely disturbed (another tenant, a frequency
// dip: a quick probe's repetitions all fit in one such dip), so it is measured again, up to
// kComputeRetries times, keeping the best. SMT siblings sharing a core stay below it legitimately
// and only cost the retries.
constexpr double kComputeScaling = 0.9;
constexpr int kComputeRetries = 2;

// The one-thread ceiling already measured for this probe's dtype and path (0 if none).
double OneThreadRate(const MachineProfile& profile, const PeakProbe& probe) {
  for (const Ceiling& c : profile.ceilings) {
    if (c.kind == Ceiling::Kind::kCompute && c.threads == 1 && c.dtype == probe.dtype &&
        c.source == probe.info.path) {
      return c.per_second;
    }
  }
  return 0;
}

void ProbeCompute(MachineProfile& profile, Executor& executor, bool quick) {
  for (const PeakProbe& probe : PeakProbes()) {
    if (!probe.info.supported) continue;
    // Calibrate iterations to ~20 ms (quick) or ~60 ms per repetition.
    uint64_t iterations = 1 << 10;
    const double target = quick ? 0.02 : 0.06;
    for (;;) {
      const Clock::time_point start = Clock::now();
      probe.run(iterations);
      const double t = Seconds(start);
      if (t > target / 4 || iterations > (uint64_t{1} << 34)) {
        const double scaled = double(iterations) * target / std::max(t, 1e-6);
        iterations = std::max<uint64_t>(1, uint64_t(scaled));
        break;
      }
      iterations *= 4;
    }
    auto measure = [&] {
      return BestRate(quick ? 3 : 5, [&] {
        std::vector<double> ops(executor.threads());
        const double seconds =
            TimeOnAllThreads(executor, [&](int t) { ops[t] = probe.run(iterations); });
        double total = 0;
        for (double o : ops) total += o;
        return total / seconds;
      });
    };
    double rate = measure();
    const double expected = executor.threads() * OneThreadRate(profile, probe);
    for (int retry = 0; retry < kComputeRetries && rate < kComputeScaling * expected; ++retry) {
      rate = std::max(rate, measure());
    }
    profile.ceilings.push_back({Ceiling::Kind::kCompute, probe.dtype, MemoryLevel::kDram,
                                executor.threads(), rate, probe.info.path});
  }
}

absl::Status ProbeBandwidth(MachineProfile& profile, Executor& executor, bool quick) {
  const int threads = executor.threads();
  const std::vector<StreamKind> kinds =
      quick ? std::vector<StreamKind>{StreamKind::kRead}
            : std::vector<StreamKind>{StreamKind::kRead, StreamKind::kWrite, StreamKind::kCopy,
                                      StreamKind::kTriad};
  for (int i = 0; i < kNumMemoryLevels; ++i) {
    const MemoryLevel level = MemoryLevel(i);
    const uint64_t bytes = BandwidthWorkingSet(profile, level, threads);
    if (bytes == 0) continue;
    // Three arrays (triad) share the working set.
    const size_t per_thread = std::max<size_t>(size_t(bytes / 4 / 3 / threads) / 64 * 64, 64);
    // On huge pages where the system grants them (working sets of 2 MiB and more): a ceiling is
    // the most the machine moves, and kernels keep their packed operands on huge pages. A DRAM
    // read over 4 KiB pages measured 5-7% less here (15.8 against 16.9 GB/s on one thread,
    // 31.2 against 32.8 on two), and packed GEMV weights on huge pages came close to it.
    const std::shared_ptr<void> pages =
        kernels::AllocateOnHugePages(per_thread * 3 * threads * sizeof(float));
    float* data = static_cast<float*>(pages.get());
    if (data == nullptr) {
      return absl::ResourceExhaustedError(absl::StrFormat(
          "bandwidth probe: cannot allocate %.0f MiB for the %s working set", bytes / 1048576.0,
          ToString(level)));
    }
    // Each thread touches its own slices first, so its pages are local to it.
    TimeOnAllThreads(executor, [&](int t) {
      float* slice = data + size_t(t) * 3 * per_thread;
      for (size_t j = 0; j < 3 * per_thread; ++j) slice[j] = 1.0f;
    });
    const bool nontemporal = level == MemoryLevel::kDram;
    for (StreamKind kind : kinds) {
      // Enough passes that a repetition takes a few milliseconds even in L1.
      const double pass_bytes =
          StreamBytes(kind, kind == StreamKind::kRead ? 3 * per_thread : per_thread) * threads;
      const int passes = std::max(1, int((quick ? 5e7 : 2e8) / pass_bytes));
      // Reads take the whole slice (longer passes, less per-pass overhead in L1), read by the
      // fastest of kReaders (a ceiling is the most any reader gets); the other kinds split the
      // slice into their two or three arrays. `pass` runs one thread's passes over its slice.
      auto rate_of = [&](const std::function<void(float*)>& pass) {
        return BestRate(quick ? 3 : 5, [&] {
          const double seconds = TimeOnAllThreads(
              executor, [&](int t) { pass(data + size_t(t) * 3 * per_thread); });
          return pass_bytes * passes / seconds;
        });
      };
      double rate = 0;
      std::string note;
      if (kind == StreamKind::kRead) {
        for (const Reader& reader : kReaders) {
          const double reader_rate =
              rate_of([&](float* a) { ReadPass(a, 3 * per_thread, reader, passes); });
          if (reader_rate > rate) rate = reader_rate, note = "fastest reader " + reader.Name();
        }
      } else {
        rate = rate_of([&](float* a) {
          StreamPass(kind, a, a + per_thread, a + 2 * per_thread, per_thread, nontemporal, passes);
        });
      }
      profile.ceilings.push_back({Ceiling::Kind::kBandwidth, Dtype::kF32, level, threads, rate,
                                  std::string(ToString(kind)), note});
    }
  }
  return absl::OkStatus();
}

// 1-thread read bandwidth by working set, one point per octave: the second view of where the
// caches end (streaming lets prefetchers hide latency that the pointer chase cannot).
absl::Status ProbeBandwidthCurve(MachineProfile& profile, bool quick) {
  const double top = double(BandwidthWorkingSet(profile, MemoryLevel::kDram, 1));
  for (double bytes = 16 * 1024; bytes <= top; bytes *= quick ? 4 : 2) {
    const size_t n = size_t(bytes / 4) / 64 * 64;
    Buffer<float> buffer(n);
    if (buffer.data() == nullptr) return absl::ResourceExhaustedError("bandwidth curve: out of memory");
    const int passes = std::max(1, int((quick ? 2e7 : 1e8) / bytes));
    StreamPass(StreamKind::kRead, buffer.data(), nullptr, nullptr, n);
    const double rate = BestRate(3, [&] {
      const Clock::time_point start = Clock::now();
      StreamPass(StreamKind::kRead, buffer.data(), nullptr, nullptr, n, false, passes);
      return bytes * passes / Seconds(start);
    });
    profile.read_bandwidth_curve.push_back({bytes, rate / 1e9});
  }
  return absl::OkStatus();
}

absl::Status ProbeLatency(MachineProfile& profile, const ProbeOptions& options) {
  profile.clock_ghz = MeasureClockGhz();
  LatencyOptions latency;
  uint64_t last = 0;
  for (const CacheLevel& c : profile.caches) last = std::max(last, c.size_bytes);
  latency.max_bytes = options.quick ? 128.0 * (1 << 20)
                                    : std::max(256.0 * (1 << 20), 2.0 * double(last));
  latency.points_per_octave = options.quick ? 2 : 4;
  latency.seconds_per_point = options.quick ? 0.01 : 0.02;
  latency.progress = options.progress;
  absl::StatusOr<std::vector<LatencyPoint>> small = MeasureLatencyCurve(latency);
  if (!small.ok()) return small.status();
  CacheDiscovery discovery = DiscoverCacheLevels(*small);
  for (const LatencyPoint& p : *small) profile.latency_curve.push_back({p.bytes, p.ns});
  // The same chase on huge pages: a step that vanishes there is a TLB's reach, not a cache.
  latency.huge_pages = true;
  absl::StatusOr<std::vector<LatencyPoint>> huge = MeasureLatencyCurve(latency);
  if (!huge.ok()) return huge.status();
  for (const LatencyPoint& p : *huge) profile.latency_curve_huge.push_back({p.bytes, p.ns});
  const CacheDiscovery huge_discovery = DiscoverCacheLevels(*huge);
  LabelTlbSteps(discovery, huge_discovery);
  for (const DiscoveredLevel& d : discovery.levels) {
    profile.measured_levels.push_back({d.size_bytes, d.low_bytes, d.high_bytes, d.latency_ns, d.kind});
  }
  // Memory latency without page walks: the huge-page curve's last plateau.
  profile.memory_latency_ns = huge_discovery.memory_latency_ns > 0 ? huge_discovery.memory_latency_ns
                                                                   : discovery.memory_latency_ns;
  return absl::OkStatus();
}

}  // namespace

uint64_t BandwidthWorkingSet(const MachineProfile& profile, MemoryLevel level, int threads) {
  auto size = [&](int l) -> uint64_t { return profile.EffectiveCacheBytes(l).value_or(0); };
  const uint64_t l1 = size(1), l2 = size(2), l3 = size(3);
  // The DRAM set must clear the largest cache anyone claims, measured or reported.
  const uint64_t last =
      std::max(profile.LargestEffectiveCacheBytes(), profile.LargestReportedCacheBytes());
  switch (level) {
    // Half of a private level per thread: inside it, with room for the stack and code.
    case MemoryLevel::kL1: return l1 / 2 * threads;
    // Between the levels in log scale: past L1 by a factor, inside L2 by the same factor.
    case MemoryLevel::kL2:
      return l2 == 0 ? 0 : uint64_t(std::sqrt(double(l1) * double(l2)) * 1.41) / 2 * threads;
    // Past every thread's L2 and inside the shared L3: the geometric middle. The L2 counts at
    // its size as the OS reports it when that is larger: the latency curve plans a level from
    // where its misses begin, and a VM's 2 MiB L2 began missing at 406 KiB.
    case MemoryLevel::kL3: {
      const std::optional<CacheLevel> reported = profile.DataCache(2);
      const double l2_end = std::max(double(l2), reported ? double(reported->size_bytes) : 0.0);
      return l3 == 0 ? 0 : uint64_t(std::sqrt(l2_end * threads * double(l3)));
    }
    // At least 4x the last level, so no measurable part of it stays cached.
    case MemoryLevel::kDram: return std::max<uint64_t>(4 * last, uint64_t{256} << 20);
  }
  return 0;
}

double LinesInFlight(double bytes_per_second, double latency_ns, int line_bytes) {
  return bytes_per_second * latency_ns * 1e-9 / line_bytes;
}

absl::StatusOr<MachineProfile> ProbeMachine(const ProbeOptions& options) {
  MachineProfile profile = ReadSystemFacts();
  if (options.progress) {
    if (std::optional<std::string> busy = BusyMachineWarning()) options.progress(*busy);
    options.progress("probe: latency curve (pointer chase) and clock");
  }
  if (absl::Status s = ProbeLatency(profile, options); !s.ok()) return s;
  if (options.progress) options.progress("probe: read bandwidth curve, 1 thread");
  if (absl::Status s = ProbeBandwidthCurve(profile, options.quick); !s.ok()) return s;
  const int max_threads = options.max_threads > 0
                              ? std::min(options.max_threads, profile.logical_cpus)
                              : profile.logical_cpus;
  const std::vector<int> ladder = ThreadLadder(max_threads);
  for (size_t step = 0; step < ladder.size(); ++step) {
    const int threads = ladder[step];
    Executor executor(threads);
    // Which of the ladder's counts: on a large server the bandwidth probes take most of the time.
    const std::string where =
        absl::StrFormat("%d thread(s), count %d of %d", threads, int(step) + 1, int(ladder.size()));
    if (options.progress) options.progress("probe: peak compute, " + where);
    ProbeCompute(profile, executor, options.quick);
    if (options.progress) options.progress("probe: bandwidth, " + where);
    if (absl::Status s = ProbeBandwidth(profile, executor, options.quick); !s.ok()) return s;
  }
  RaiseCeilingsToTheirEvidence(profile);
  return profile;
}

void RaiseCeilingsToTheirEvidence(MachineProfile& profile) {
  std::vector<Ceiling>& all = profile.ceilings;
  // Evidence from the measurements as taken, before any is raised.
  const std::vector<Ceiling> measured = all;
  for (Ceiling& c : all) {
    double best = c.per_second;
    const Ceiling* from = nullptr;
    for (const Ceiling& other : measured) {
      if (!c.SamePath(other) || other.threads == c.threads) continue;
      // More threads can leave some idle; fewer threads did, on average, their share.
      const double evidence = other.threads < c.threads
                                  ? other.per_second
                                  : other.per_second * c.threads / other.threads;
      if (evidence > best) best = evidence, from = &other;
    }
    // Within 2% is the same figure: not worth a note.
    if (from == nullptr || best < 1.02 * c.per_second) continue;
    c.note = absl::StrFormat("%s%s%s: the %d-thread run did more", Ceiling::kRaisedNote,
                             c.RateText(c.per_second), c.note.empty() ? "" : " (" + c.note + ")",
                             from->threads);
    c.per_second = best;
  }
}

}  // namespace rooftune::probes
