// The traffic model of the blocked fp32 GEMM (kernels/gemm_f32).
#pragma once

#include "framework/machine_profile.h"
#include "framework/traffic.h"
#include "framework/workload.h"
#include "kernels/gemm_f32/gemm_f32.h"

namespace rooftune {

// Bytes across each boundary for C = A * B (+ bias) under `blocking`.
Traffic GemmF32Traffic(const Workload& w, const kernels::GemmF32Blocking& blocking, int threads,
                       const MachineProfile& profile);

}  // namespace rooftune
