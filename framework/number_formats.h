// The number formats of machine learning, described by their bits and computed, not typed in:
// the largest finite value, the smallest normal, the step between 1 and the next value, and the
// bytes a billion parameters take.
#pragma once

#include <string>
#include <vector>

namespace rooftune {

struct NumberFormat {
  std::string name;
  int bits = 0;           // of storage
  int exponent_bits = 0;  // 0 for an integer
  int mantissa_bits = 0;  // stored fraction bits (the value bits of an integer, sign aside)
  // Floating point whose all-ones exponent holds finite values (no infinities; only the all-ones
  // mantissa there is NaN), as OCP's FP8 E4M3 does.
  bool finite_top_exponent = false;

  bool IsInteger() const { return exponent_bits == 0; }
  double Largest() const;         // the largest finite value
  double SmallestNormal() const;  // 1 for an integer
  double StepNearOne() const;     // the gap between 1 and the next larger value
  double BytesPerBillionParams() const { return double(bits) / 8 * 1e9; }
};

// fp64, fp32, tf32 (fp32's range and fp16's precision, stored in 32 bits), bf16, fp16, fp8 e4m3,
// fp8 e5m2, int8 and int4.
const std::vector<NumberFormat>& NumberFormats();

}  // namespace rooftune
