// Measures the ceilings of a MachineProfile: peak compute per dtype and bandwidth per memory level,
// for every thread count from 1 to the CPUs this process may use.
#pragma once

#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "framework/machine_profile.h"

namespace rooftune::probes {

struct ProbeOptions {
  bool quick = false;
  int max_threads = 0;  // 0: every CPU this process may use
  std::function<void(const std::string&)> progress;
};

// Facts plus measured ceilings. Fails only when a buffer cannot be allocated.
absl::StatusOr<MachineProfile> ProbeMachine(const ProbeOptions& options);

// The working set (bytes, all threads together) the bandwidth probe uses for `level`.
uint64_t BandwidthWorkingSet(const MachineProfile& facts, MemoryLevel level, int threads);

}  // namespace rooftune::probes
