// The int8 GEMM's tunable parameters and how a config maps to the kernel's path and blocking,
// shared by the plugin (packing, run, traffic model) and the tunables (the initial config).
#pragma once

#include "framework/cache_mode.h"
#include "framework/machine_profile.h"
#include "framework/param_space.h"
#include "framework/workload.h"
#include "kernels/gemm_s8/gemm_s8.h"

namespace rooftune {

ParamSpace GemmS8Space();

// A config decoded once, for the packing, the run and the traffic model alike.
struct GemmS8Choice {
  kernels::S8Path path = kernels::S8Path::kExact;
  kernels::GemmS8Blocking blocking;  // nc is read on the AMX path only, mr elsewhere
  bool split_columns() const { return blocking.parallel == kernels::ParallelLoop::kJc; }
};

GemmS8Choice GemmS8ChoiceOf(const Config& config);
// The config of a choice, the parameters its path does not read at rest.
Config ConfigOf(const GemmS8Choice& choice);

// The analytic initial config (gemm_s8_tunables.cc).
Config GemmS8InitialConfig(const Workload& w, int threads, CacheMode cache,
                           const MachineProfile& profile);
// The AMX path's, which GemmS8InitialConfig gives where the CPU has AMX (here for any CPU).
Config GemmS8AmxInitialConfig(const Workload& w, int threads, const MachineProfile& profile);

}  // namespace rooftune
