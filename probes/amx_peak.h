// The int8 peak of the AMX tile unit, a second int8 ISA beside the vector one: a kernel that uses
// it (oneDNN does, and gemm_s8's PATH=2) must be priced against this ceiling, not vpdpbusd's.
#pragma once

#include <cstdint>

#include "probes/peak_compute.h"

namespace rooftune::probes {

// Supported only where kernels::AmxInt8Available().
PeakProbeInfo AmxInt8PeakPath();

// `iterations` rounds of TDPBUSD on six independent accumulator tiles (enough to cover the
// instruction's latency), operands held in tiles: no memory traffic in the loop. Returns the
// operations done (2 per multiply-accumulate), 0 without AMX.
double RunAmxInt8PeakLoop(uint64_t iterations);

}  // namespace rooftune::probes
