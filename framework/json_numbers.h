// Whole numbers read from JSON written by someone else (a stored profile, an export): nlohmann's
// get<int>() converts a float or a number beyond the type silently (undefined behaviour for a
// float out of range), so a damaged file would read as a plausible one.
#pragma once

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

#include "nlohmann/json.hpp"

namespace rooftune {

// `j` as a T when it is a whole number T can hold, else std::out_of_range saying what it found.
template <typename T>
T WholeNumber(const nlohmann::json& j) {
  if (j.is_number_unsigned()) {
    const uint64_t v = j.get<uint64_t>();
    if (v <= uint64_t(std::numeric_limits<T>::max())) return T(v);
  } else if (j.is_number_integer()) {
    const int64_t v = j.get<int64_t>();
    if (v >= int64_t(std::numeric_limits<T>::min()) &&
        (v < 0 || uint64_t(v) <= uint64_t(std::numeric_limits<T>::max()))) {
      return T(v);
    }
  }
  throw std::out_of_range("a whole number in range was expected, found " + j.dump());
}

}  // namespace rooftune
