// The fp32 GEMM's tunable parameters and how a config maps to the kernel's blocking, shared by
// the plugin (run, traffic model) and the tunables (the analytic initial config).
#pragma once

#include "framework/cache_mode.h"
#include "framework/machine_profile.h"
#include "framework/param_space.h"
#include "framework/workload.h"
#include "kernels/gemm_f32/blocking.h"
#include "kernels/gemm_f32/gemm_f32.h"

namespace rooftune {

ParamSpace GemmF32Space();

// A config and the kernel's blocking are the same facts: BlockingOf decodes one for the run and
// the traffic model, ConfigOf encodes the initial config's.
kernels::GemmF32Blocking BlockingOf(const Config& config, bool fused);
Config ConfigOf(const kernels::GemmF32Blocking& blocking);

// The analytic initial config for `w` on `threads` threads of the measured machine
// (gemm_f32_tunables.cc).
Config GemmF32InitialConfig(const Workload& w, int threads, CacheMode cache,
                            const MachineProfile& profile);

// `config` for calls that bring their own B each time (the library API's fp32 GEMM): where it
// reads B prepared ahead (PACKB=prepared), B read as the analytic rule reads a call's B for the
// shape (rows few enough: in place, with that rule's KC; many: packed), the rest as `config` has
// it; rows that repay only a prepared B get the analytic config for B from each call. Any other
// config unchanged.
Config GemmF32WithBFromEachCall(const Config& config, const Workload& w, int threads,
                                const MachineProfile& profile);

// The machine facts the analytic blocking plans with, from the measured profile: vector width and
// registers, FMA latency and pipes, the caches (gemm_f32_tunables.cc).
kernels::GemmMachine GemmMachineOf(const MachineProfile& profile);

}  // namespace rooftune
