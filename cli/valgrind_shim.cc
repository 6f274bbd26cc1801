// Preloaded into the rooftune that `simulate` runs under valgrind, and nowhere else.
//
// libhwy measures its timer's resolution with RDTSCP while it loads. valgrind decodes RDTSCP
// only where CPUID reports it, and a hypervisor may hide it, so the
// simulated process died before main. rooftune never uses Highway's timer: this stands in for
// that one measurement and nothing else.
#include "hwy/nanobenchmark.h"

namespace hwy::platform {
uint64_t TimerResolution() { return 1; }
}  // namespace hwy::platform
