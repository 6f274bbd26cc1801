// Streaming kernels for bandwidth ceilings: read (a reduction), write, copy and triad, over one
// thread's slice of a buffer, in Highway.
#pragma once

#include "absl/strings/string_view.h"
#include <cstddef>
#include <string_view>

namespace rooftune::probes {

enum class StreamKind { kRead, kWrite, kCopy, kTriad };
absl::string_view ToString(StreamKind kind);

// Bytes one pass of `kind` over `n` floats per array moves (reads plus writes).
double StreamBytes(StreamKind kind, size_t n);

// One pass. `a` is written (write, copy, triad) or read (read); `b` and `c` are read.
// Returns a value derived from the data so the pass cannot be deleted.
float StreamPass(StreamKind kind, float* a, const float* b, const float* c, size_t n);

}  // namespace rooftune::probes
