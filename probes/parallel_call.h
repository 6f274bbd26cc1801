// What splitting a call over the threads costs beyond its work: waking the arena's workers,
// handing them their share and waiting for the last. Below a few times this, a small product runs
// faster on the calling thread alone; the cost differs by machine (a guest whose idle vCPUs halt
// wakes a worker with an inter-processor interrupt through the hypervisor) and by thread count.
#pragma once

#include "framework/executor.h"

namespace rooftune::probes {

// The median over repeated calls of the time a parallel loop of one fixed stretch of work per
// thread takes beyond that stretch, each call after the calling thread worked alone for a while
// (as between a program's calls in a loop, the workers idle but awake). 0 on one thread.
double MeasureParallelCallSeconds(Executor& executor);

}  // namespace rooftune::probes
