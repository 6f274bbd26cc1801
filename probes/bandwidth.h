// Streaming kernels for bandwidth ceilings: read (a reduction), write, copy and triad, over one
// thread's slice of a buffer, in Highway.
#pragma once

#include "absl/strings/string_view.h"
#include <cstddef>
#include <string_view>

namespace rooftune::probes {

enum class StreamKind { kRead, kWrite, kCopy, kTriad };
absl::string_view ToString(StreamKind kind);

// Bytes one pass of `kind` over `n` floats per array moves (reads plus writes; a cached write
// also reads the line for ownership, which STREAM does not count and neither does this).
double StreamBytes(StreamKind kind, size_t n);

// `passes` passes over the arrays (one call, so a short array pays no per-call cost per pass).
// `a` is written (write, copy, triad) or read (read); `b` and `c` are read. Writes are
// non-temporal (no read for ownership, no cache pollution) when `nontemporal`, which is right for
// DRAM and wrong for a working set meant to stay in a cache.
// Returns a value derived from the data (for read, the sum of every element read) so the passes
// cannot be deleted.
float StreamPass(StreamKind kind, float* a, const float* b, const float* c, size_t n,
                 bool nontemporal = false, size_t passes = 1);

// The read of StreamPass with `streams` streams at once (1, 2, 4 or 8; StreamPass reads 8), each
// over its share of the array into its own accumulator. Which count reads fastest depends on the
// machine and the level, so a read ceiling is the best over kReadStreamCounts.
float ReadPass(const float* a, size_t n, int streams, size_t passes = 1);
inline constexpr int kReadStreamCounts[] = {1, 2, 4, 8};

}  // namespace rooftune::probes
