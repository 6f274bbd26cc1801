// Which libpfm4 event measures which roofline quantity, per micro-architecture. Counting bytes
// per level with a PMU is approximate on every CPU; the caveats say how.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "framework/machine_profile.h"

namespace rooftune::probes {

struct MetricEvent {
  std::string metric;  // "cycles", "instructions", "flops_512b_single", "l1_refill_lines", ...
  std::string event;   // libpfm4 name, "EVENT:UMASK[:UMASK]"
  double scale = 1;    // multiply the count by this (FLOPs per instruction, 64 bytes per line)
  std::string unit;    // what the scaled value is: "cycles", "flops", "bytes", ...
};

struct PmuTable {
  std::string pmu;  // libpfm4 PMU name: "amd64_fam19h_zen3", "spr", ...
  std::string description;
  std::vector<MetricEvent> events;
  std::vector<std::string> caveats;
};

const std::vector<PmuTable>& PmuTables();

// The memory level whose incoming lines a table metric counts ("l2_to_l1_bytes": the fills of
// L1 from L2, MemoryLevel::kL2 as Traffic indexes it), or nullopt for the others.
std::optional<MemoryLevel> LevelOfMetric(const std::string& metric);
// The table for a libpfm4 PMU name, or null.
const PmuTable* FindPmuTable(const std::string& pmu);

}  // namespace rooftune::probes
