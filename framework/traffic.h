// A TrafficModel's answer: the bytes a kernel moves across each boundary of the memory hierarchy.
#pragma once

#include <array>

#include "framework/machine_profile.h"

namespace rooftune {

// bytes[L] is the traffic served by level L to the level nearer the core: bytes[kL1] crosses
// L1 -> registers, bytes[kL2] L2 -> L1, bytes[kL3] L3 -> L2, bytes[kDram] DRAM -> L3.
struct Traffic {
  std::array<double, kNumMemoryLevels> bytes{};
  double& operator[](MemoryLevel level) { return bytes[int(level)]; }
  double operator[](MemoryLevel level) const { return bytes[int(level)]; }
};

}  // namespace rooftune
