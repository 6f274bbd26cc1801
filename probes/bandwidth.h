// Streaming kernels for bandwidth ceilings: read (a reduction), write, copy and triad, over one
// thread's slice of a buffer, in Highway.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "absl/strings/string_view.h"
#include "framework/reader.h"

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

// The readers a read ceiling is the best over: which is fastest depends on the machine and the
// level (framework/reader.h says how each reads).
inline constexpr Reader kReaders[] = {{1, false},
                                      {2, false},
                                      {4, false},
                                      {8, false},
                                      {1, true},
                                      {2, true},
                                      {1, false, true},
                                      {2, false, true},
                                      {1, false, true, true, true},
                                      {2, false, true, true, true}};

// The read of StreamPass as `reader` reads.
float ReadPass(const float* a, size_t n, Reader reader, size_t passes = 1);

// A chunk of a read from DRAM that several threads share, each taking the next chunk as it comes
// (a kernel's threads take rows so): a thread the host preempts leaves its share to the others,
// where slices split in advance would wait for it, and a read the GEMV it is paired with
// out-runs would be no ceiling. 2 MiB (a huge page): long enough that restarting the
// prefetchers' streams at each chunk costs little (with 256 KiB chunks a GEMV reading four rows
// at once out-ran the read by 7%).
inline constexpr size_t kDramReadChunkFloats = (2 << 20) / sizeof(float);

}  // namespace rooftune::probes
