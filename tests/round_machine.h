// A machine with round numbers, for tests whose answers follow from the roofline by hand.
#pragma once

#include "framework/machine_profile.h"

namespace rooftune::fixtures {

// 100 GFLOP/s f32 and 50 f64 on one thread; 100 GB/s from L2, 10 GB/s from DRAM; caches of
// 32 KiB, 1 MiB and 32 MiB (the last shared by two CPUs).
inline MachineProfile RoundMachine() {
  MachineProfile p;
  p.caches = {{1, "Data", 32 << 10, 8, 64, 1},
              {2, "Unified", 1 << 20, 16, 64, 1},
              {3, "Unified", 32 << 20, 16, 64, 2}};
  p.ceilings = {{Ceiling::Kind::kCompute, Dtype::kF32, MemoryLevel::kDram, 1, 100e9, "fma"},
                {Ceiling::Kind::kCompute, Dtype::kF64, MemoryLevel::kDram, 1, 50e9, "fma"},
                {Ceiling::Kind::kBandwidth, Dtype::kF32, MemoryLevel::kDram, 1, 10e9, "read"},
                {Ceiling::Kind::kBandwidth, Dtype::kF32, MemoryLevel::kL2, 1, 100e9, "read"}};
  return p;
}

}  // namespace rooftune::fixtures
