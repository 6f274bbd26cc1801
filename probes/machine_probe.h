// Measures a MachineProfile: the latency curve and the cache levels discovered from it, peak
// compute per dtype, bandwidth per memory level and access kind, at the thread counts of
// ThreadLadder: 1, 2, 4, ... up to the CPUs this process may use.
#pragma once

#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "framework/machine_profile.h"

namespace rooftune::probes {

struct ProbeOptions {
  bool quick = false;   // under 30 s: coarser latency curves, read bandwidth only
  int max_threads = 0;  // 0: every CPU this process may use
  // An earlier profile of this machine: the levels this probe plans join its level consensus
  // (FoldLevelConsensus) before the bandwidth probes place their working sets by them.
  const MachineProfile* earlier = nullptr;
  std::function<void(const std::string&)> progress;
};

// Facts plus measurements. Fails only when a buffer cannot be allocated.
absl::StatusOr<MachineProfile> ProbeMachine(const ProbeOptions& options);

// A ceiling is an upper bound, so each one takes the best evidence of the same path (dtype and
// instructions, or level and access kind) at other thread counts: T threads can do at least what
// fewer did, and one of T threads at least the T-thread rate / T. A shared VM makes single
// measurements unreliable (another tenant on the same physical core halves a port-bound loop for
// seconds at a time); this keeps one unlucky run from lowering a ceiling. Raised ceilings say so
// in their note. ProbeMachine applies it.
void RaiseCeilingsToTheirEvidence(MachineProfile& profile);

// The working set (bytes, all threads together) the bandwidth probe uses for `level`: inside the
// level as measured (else as the OS reports it), and for DRAM at least 4x the last level.
uint64_t BandwidthWorkingSet(const MachineProfile& profile, MemoryLevel level, int threads);

// Little's law for DRAM: the cache lines one must keep in flight to sustain `bytes_per_second`
// at `latency_ns`.
double LinesInFlight(double bytes_per_second, double latency_ns, int line_bytes = 64);

}  // namespace rooftune::probes
