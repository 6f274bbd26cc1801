// The latency curve: a pointer chase over a random cyclic permutation of cache lines, so that
// neither the prefetchers nor TLB prefetch can guess the next address. Every load depends on the
// one before it, so time / loads is the latency of the level the working set lives in.
#pragma once

#include <vector>

#include "absl/status/statusor.h"

namespace rooftune::probes {

struct LatencyPoint {
  double bytes = 0;
  double ns = 0;  // per dependent load
};

struct LatencyOptions {
  double min_bytes = 4096;
  double max_bytes = 256.0 * (1 << 20);
  int points_per_octave = 4;
  bool huge_pages = false;  // madvise(MADV_HUGEPAGE): tells a TLB step from a cache step
  double seconds_per_point = 0.02;
};

// Measures the curve, adding a midpoint (geometric) between neighbours whose latencies differ by
// more than their own spread would explain, so that steps are sampled finely where they are.
absl::StatusOr<std::vector<LatencyPoint>> MeasureLatencyCurve(const LatencyOptions& options);

// ns of one chase step over `bytes` (a single point; the buffer is built each call).
absl::StatusOr<double> ChaseLatency(double bytes, bool huge_pages, double seconds);

// The core clock, from a chain of dependent integer adds (one per cycle on every x86 core).
double MeasureClockGhz();

// Cycles from one floating-point multiply-add to the next that reads its result, from a chain of
// dependent FMAs timed at `clock_ghz`: how many independent accumulators a GEMM register block
// needs per FMA pipe. 0 where the CPU has no FMA instruction this probe knows.
double MeasureFmaLatencyCycles(double clock_ghz);

}  // namespace rooftune::probes
