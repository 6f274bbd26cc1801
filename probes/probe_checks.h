// The probe checks itself: a figure that physics or the probe's own other figures contradict is
// measured again (bounded retries) and, if it still does not hold, flagged unstable with its
// spread. A shared machine's slow phase, another tenant on the core, or a frequency dip shows up
// here rather than as a ceiling every later verdict is priced against.
#pragma once

#include <string>
#include <vector>

#include "framework/machine_profile.h"

namespace rooftune::probes {

// Threads on separate physical cores each run the multiply-add loop at the one-thread rate: a
// multi-thread rate below this share of threads x the one-thread rate was disturbed.
inline constexpr double kComputeScaling = 0.85;
// A loop's per-cycle rate at the measured clock lies within [kSlowestShare, kFastestShare] of the
// instruction's throughput (ops per cycle per core): at most the throughput, at least half of it
// (a core that runs 512-bit vectors in two halves), each with 10% for the clock measurement.
inline constexpr double kFastestShare = 1.10;
inline constexpr double kSlowestShare = 0.45;
// Repetitions of one measurement agree: the median within this share of the best. Further apart,
// part of them ran in another phase of the machine.
inline constexpr double kRepetitionSpread = 0.10;
// How many times a contradicted figure is measured again before it is flagged.
inline constexpr int kProbeRetries = 2;
// Steal time (the hypervisor running someone else on our CPUs) above this share of the probe's
// CPU time is reported with the profile.
inline constexpr double kHighSteal = 0.05;

// 1 - median / best of a measurement's repetitions (0 for fewer than two).
double RepetitionSpread(std::vector<double> rates);

// What contradicts a compute rate measured on `threads` threads, or "" when nothing does.
// `one_thread_rate` (0: unknown) is the same loop's one-thread ceiling; the scaling check applies
// only when the threads have a physical core each. `ops_per_cycle` (0: unknown) is the
// instruction's throughput per core; `clock_ghz` (0: unknown) the measured clock.
std::string ComputeContradiction(double rate, int threads, int physical_cores,
                                 double one_thread_rate, double ops_per_cycle, double clock_ghz);

// What `threads` threads with a physical core each compute at least: `threads` x the one-thread
// rate (0 when the threads share cores or there is one). The ceiling stored when a contradicted
// multi-thread rate stays under it after the retries.
double ScalingFloor(int threads, int physical_cores, double one_thread_rate);

// A nearer level reads at least as fast as every level beyond it; a shortfall up to this share is
// two levels whose reads the same core limit caps (a core's load ports from L2 and from L3), not
// an order broken.
inline constexpr double kReadOrderSlack = 0.10;

// The read-bandwidth ceilings at `threads` threads that are out of order: each pair where a level
// nearer the core reads more than kReadOrderSlack slower than one beyond it names both levels.
// Returns the levels involved, each once, nearest first.
std::vector<MemoryLevel> OutOfOrderReads(const std::vector<Ceiling>& ceilings, int threads);

// The note an unstable ceiling carries: "unstable (why; repetitions 210-275 GFLOP/s)".
std::string UnstableNote(const Ceiling& ceiling, const std::string& why, double lowest,
                         double highest);

// CPU time counters of /proc/stat's "cpu" line: everything, and steal.
struct CpuTimes {
  unsigned long long total = 0, steal = 0;
};
CpuTimes ReadCpuTimes();  // zeros where /proc/stat cannot be read
// The share of CPU time stolen between two readings (0 when nothing elapsed).
double StealShare(const CpuTimes& before, const CpuTimes& after);

}  // namespace rooftune::probes
