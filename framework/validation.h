// Checks a kernel's output against the reference kernels: exactly for integer accumulators, and
// for floating point within a tolerance scaled by K and the data type's epsilon, relative to the
// magnitude sum |a||b| that bounds the rounding of any summation order.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "framework/problem.h"

namespace rooftune {

struct ReferenceOutput {
  std::vector<float> initial_c;  // C before the run (beta != 0 reads it)
  std::vector<float> f32;
  std::vector<double> magnitude;
  std::vector<int32_t> s32;
  double relative_tolerance = 0;
  // int8: outputs whose exact sum does not fit the s32 accumulator (no int8 path computes them),
  // and the first one's description.
  int64_t s32_overflows = 0;
  std::string first_overflow;
};

// Computes the reference result for the problem's current inputs and C.
ReferenceOutput ComputeReference(const Problem& problem);

// The relative tolerance for a floating-point result of a K-term dot product in `dtype`: a few
// units of roundoff times sqrt(K), the expected growth of rounding error for any blocked order.
double RelativeTolerance(Dtype dtype, int64_t k);

struct Validation {
  bool ok = false;
  int64_t mismatches = 0;
  double max_abs_error = 0;
  double max_error_over_tolerance = 0;  // <= 1 when ok (floating point)
  std::string first_mismatch;           // "C[3][17] = 1.5, expected 1.25"
  std::string Summary() const;
};

// Whether one output element agrees with the reference's: a NaN only with a NaN, an infinity
// only with the same infinity, a finite value within `tolerance` (absolute) of it.
bool ElementAgrees(double got, double want, double tolerance);

// Compares the problem's output with the reference.
Validation CompareWithReference(const Problem& problem, const ReferenceOutput& reference);

// Puts C back to what it held when the reference was computed.
void RestoreOutput(Problem& problem, const ReferenceOutput& reference);

}  // namespace rooftune
