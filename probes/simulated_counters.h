// The simulated counter backend, for machines without a PMU (this VM, CI): runs one kernel call
// under valgrind's cache simulator (callgrind --cache-sim=yes, the simulator cachegrind uses)
// with the measured cache geometry, and reports the simulated L1 and last-level misses as bytes.
// Labelled "simulated" wherever it is shown: it models an inclusive two-level LRU hierarchy, not
// this CPU's prefetchers or replacement policy.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "framework/machine_profile.h"

namespace rooftune::probes {

struct SimulatedGeometry {
  uint64_t l1_bytes = 32 << 10;
  int l1_ways = 8;
  uint64_t last_level_bytes = 8 << 20;
  int last_level_ways = 16;
  int line_bytes = 64;
};

struct SimulatedTraffic {
  double l1_miss_bytes = 0;          // lines filled into L1 x line size: L2 -> L1 traffic
  double last_level_miss_bytes = 0;  // lines filled into the last level: DRAM -> LL traffic
  double instructions = 0;
  std::string command;  // what was run, for the record
  std::string output;   // what the simulated call printed on stdout
};

// Runs `rooftune simulate-once <args>` under valgrind and parses its totals. `rooftune_binary` is
// the path of the rooftune executable; `args` select the kernel, shape and config.
absl::StatusOr<SimulatedTraffic> SimulateKernelCall(const std::string& rooftune_binary,
                                                    const std::string& args,
                                                    const SimulatedGeometry& geometry);

// Valgrind's cache simulator wants power-of-two set counts: rounds a size down to the nearest
// ways x line x 2^k.
uint64_t SimulatorFriendlySize(uint64_t bytes, int ways, int line_bytes);

// `profile` as a traffic model must price a simulated call: its caches are the simulated L1 and
// last level (as level 3) and nothing else, with no measured step or consensus of curves left to
// size a level the simulator does not have.
MachineProfile ProfileOfSimulatedCaches(const MachineProfile& profile,
                                        const SimulatedGeometry& geometry);

// Parses the totals of a callgrind output file given its text.
absl::StatusOr<SimulatedTraffic> ParseCallgrindTotals(const std::string& text, int line_bytes);

}  // namespace rooftune::probes
