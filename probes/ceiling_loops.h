// The loops that define the ceilings, shared by the probe that measures them and by the pairing
// that times a ceiling beside a kernel (probes/paired_ceiling.h): the same instructions, on the
// same threads, started together.
#pragma once

#include <functional>
#include <vector>

#include "framework/executor.h"
#include "framework/machine_profile.h"
#include "probes/peak_compute.h"

namespace rooftune::probes {

// Every thread of the arena runs `body(thread_index)` once; returns the time from the moment all
// of them have started to the moment the slowest finishes. The threads wait for each other first:
// a worker that wakes up late would otherwise leave the others running alone for part of the
// window, and a short window (a pass over L1 takes microseconds) would count its wake-up as time.
// If a thread never arrives (the arena ran out of workers) the wait gives up after 100 ms and the
// bodies run as they come; the rate is then low, never high.
double TimeOnAllThreads(Executor& executor, const std::function<void(int)>& body);

// One compute ceiling's loop: a dtype, the instructions that reach it, and the loop itself.
struct PeakLoop {
  Dtype dtype;
  PeakProbeInfo info;
  std::function<double(uint64_t)> run;  // iterations -> operations done
};

// Every compute loop this CPU has (unsupported ones included, info.supported false): f64, f32 and
// int8 on the vector units, and int8 on AMX where there is one.
std::vector<PeakLoop> PeakLoops();

// The loop that measured `ceiling` (same dtype and path), or null.
const PeakLoop* PeakLoopOf(const std::vector<PeakLoop>& loops, const Ceiling& ceiling);

}  // namespace rooftune::probes
