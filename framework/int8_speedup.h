// The analytic bound of an int8 kernel's speedup over fp32 on the same shape, from the measured
// roofline: the fp32 workload's bound time over the int8 workload's, each the larger of its
// compute time (at its own dtype's ceiling) and its compulsory bytes over DRAM bandwidth.
// A memory-bound shape (GEMV, the decode shape) reduces to the ratio of the bytes each format
// moves (weights, scales, x and y); a compute-bound one (a large GEMM) to the ratio of the int8
// and f32 compute ceilings. The measured speedup over the bound equals the int8 kernel's
// attainment over the f32 kernel's: above 1 says the f32 kernel is further below its ceiling.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "framework/machine_profile.h"
#include "framework/workload.h"

namespace rooftune {

struct SpeedupBound {
  double ratio = 0;  // f32_bound_seconds / int8_bound_seconds
  double f32_bound_seconds = 0;
  double int8_bound_seconds = 0;
  bool memory_bound = false;  // both formats bound by DRAM bandwidth: the ratio is a bytes ratio
  std::string basis;          // e.g. "bytes 67.1 MB f32 / 16.8 MB int8"
};

// True for the dtypes with int8 weights (u8s8, s8f32).
bool HasInt8Weights(Dtype dtype);

// The same op, shape and epilogue in fp32.
Workload F32Counterpart(const Workload& int8_workload);

// Needs the compute ceilings of both dtypes and the DRAM bandwidth at `threads`. `warm`: the
// timings repeat calls on cached data, so each format's bytes come from the nearest cache that
// holds its working set (as in WarmTraffic), not from DRAM.
absl::StatusOr<SpeedupBound> Int8SpeedupBound(const MachineProfile& profile,
                                              const Workload& int8_workload, int threads,
                                              bool warm = false);

}  // namespace rooftune
