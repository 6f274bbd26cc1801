// A TrafficModel's answer: the bytes a kernel moves across each boundary of the memory hierarchy.
#pragma once

#include <array>

#include "framework/machine_profile.h"

namespace rooftune {

// bytes[L] is the traffic served by level L to the level nearer the core: bytes[kL1] crosses
// L1 -> registers, bytes[kL2] L2 -> L1, bytes[kL3] L3 -> L2, bytes[kDram] DRAM -> L3.
struct Traffic {
  std::array<double, kNumMemoryLevels> bytes{};
  // What a second pass moves once the main loop has finished (an epilogue run as a pass of its
  // own over the output). Its time adds to the main loop's instead of overlapping it.
  std::array<double, kNumMemoryLevels> after{};

  double& operator[](MemoryLevel level) { return bytes[int(level)]; }
  double operator[](MemoryLevel level) const { return bytes[int(level)]; }
  // The bytes of scratch buffers (packing panels) one call writes. A steady stream of calls finds
  // them in cache, so the model above leaves them out; a single cold call also fills them once
  // into every level, as a cache simulator of one call sees.
  double first_touch = 0;

  // Both passes' bytes across `level`: what a cache simulator counts.
  double Total(MemoryLevel level) const { return bytes[int(level)] + after[int(level)]; }
};

}  // namespace rooftune
