// Peak compute per data type: long runs of independent multiply-add chains (enough of them to
// cover latency x pipes), on every thread of an arena, with nothing else in the loop.
#pragma once

#include <string>

#include "framework/workload.h"

namespace rooftune::probes {

struct PeakProbeInfo {
  bool supported = false;
  std::string path;  // "avx512 fma", "avx2 vpmaddubsw+vpmaddwd+vpaddd", "avx512 vpdpbusd"
  int ops_per_instruction_group = 0;  // operations one iteration of one chain does
  // The instructions' throughput in operations per cycle per core (0: unknown): two FMA or
  // vpdpbusd per cycle, or one vpmaddubsw+vpmaddwd pair (both multiply on the same two ports).
  double ops_per_cycle = 0;
  int vector_bytes = 0;  // of the loop's instructions, for a datapath narrower than them
  // ops_per_cycle on a CPU whose units take `datapath_bytes` of a vector a cycle per pipe (0:
  // unknown, as it is).
  double OpsPerCycleOn(int datapath_bytes) const {
    if (datapath_bytes <= 0 || vector_bytes <= datapath_bytes) return ops_per_cycle;
    return ops_per_cycle * datapath_bytes / vector_bytes;
  }
};

// Runs `iterations` iterations of the dtype's multiply-add loop on the calling thread and returns
// the operations done (2 per multiply-accumulate; 0 when the dtype has no path on this CPU).
double RunPeakLoop(Dtype dtype, uint64_t iterations);
PeakProbeInfo PeakPathFor(Dtype dtype);

}  // namespace rooftune::probes
