#include "framework/number_formats.h"

#include <cmath>

namespace rooftune {

double NumberFormat::Largest() const {
  if (IsInteger()) return std::ldexp(1.0, mantissa_bits) - 1;
  const int bias = (1 << (exponent_bits - 1)) - 1;
  if (finite_top_exponent) {
    // The all-ones exponent is finite; its all-ones mantissa is NaN, so the largest mantissa
    // there is one step below all ones.
    const int top = (1 << exponent_bits) - 1 - bias;
    return (2 - std::ldexp(2.0, -mantissa_bits)) * std::ldexp(1.0, top);
  }
  // IEEE: the all-ones exponent holds infinities and NaNs.
  const int top = (1 << exponent_bits) - 2 - bias;
  return (2 - std::ldexp(1.0, -mantissa_bits)) * std::ldexp(1.0, top);
}

double NumberFormat::SmallestNormal() const {
  if (IsInteger()) return 1;
  const int bias = (1 << (exponent_bits - 1)) - 1;
  return std::ldexp(1.0, 1 - bias);
}

double NumberFormat::StepNearOne() const {
  return IsInteger() ? 1 : std::ldexp(1.0, -mantissa_bits);
}

const std::vector<NumberFormat>& NumberFormats() {
  static const std::vector<NumberFormat> formats = {
      {"fp64", 64, 11, 52},  {"fp32", 32, 8, 23}, {"tf32", 32, 8, 10},
      {"bf16", 16, 8, 7},    {"fp16", 16, 5, 10}, {"fp8 e4m3", 8, 4, 3, true},
      {"fp8 e5m2", 8, 5, 2}, {"int8", 8, 0, 7},   {"int4", 4, 0, 3},
  };
  return formats;
}

}  // namespace rooftune
