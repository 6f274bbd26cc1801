// How a GEMV splits W's rows: tasks of `rows_per_task` rows for the threads, and within a task
// groups that share each load of x. The kernel and the weight packer both walk rows this way, so
// a packed group lies exactly where the kernel looks for it.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "kernels/gemv/gemv.h"

namespace rooftune::kernels {

// A group of rows read together, as rows of W: `size` rows from `first`, `row_step` rows apart.
// Each row's stream goes on, past the row's end, into the row `stream_step` rows further down:
// the same row of the group after it.
struct GroupRows {
  int64_t size, first, row_step, stream_step;
};

// Rows [begin, end) as groups of 16, 8, 4, 2 and 1 rows, largest first, none larger than
// `together`: calls group(GroupRows) for each. Consecutive groups hold neighbouring rows, so each
// row's stream jumps R rows on at its end. Spread groups (`spread`) take rows G apart, G the
// number of groups of the largest size that fit: their streams run on through consecutive rows
// of W, long runs for the hardware prefetchers. Rows left over after the spread groups form
// consecutive ones.
template <class Fn>
void ForEachGroupIn(int64_t begin, int64_t end, int together, bool spread, const Fn& group) {
  for (int64_t size : {16, 8, 4, 2, 1}) {
    if (size > 1 && together < size) continue;
    if (spread && end - begin >= size) {
      const int64_t groups = (end - begin) / size;
      for (int64_t g = 0; g < groups; ++g) group(GroupRows{size, begin + g, groups, 1});
      begin += groups * size;
      spread = false;  // the rest, fewer rows than `size`, consecutive
      continue;
    }
    for (; begin + size <= end; begin += size) group(GroupRows{size, begin, 1, size});
  }
}

inline int64_t RowsPerTask(const GemvBlocking& b) { return std::max(1, b.rows_per_task); }

// The packed layout of a group of R rows of K elements of `bytes` each: each 64-byte line of a
// row followed by the same line of the next row, so that the group streams as one sequence; then
// the last, partial line of every row, row after row. Offsets below are in elements from the
// group's start.
constexpr size_t kPackedLineBytes = 64;

// Element (r, k) when k lies in one of the row's whole lines.
inline size_t PackedLineOffset(size_t R, size_t bytes, size_t r, size_t k) {
  const size_t line = kPackedLineBytes / bytes;  // elements per line
  return (k / line * R + r) * line + k % line;
}

// Element (r, k) anywhere in the row.
inline size_t PackedGroupOffset(size_t R, size_t K, size_t bytes, size_t r, size_t k) {
  const size_t line = kPackedLineBytes / bytes;
  const size_t in_lines = K / line * line;  // elements in whole lines
  if (k < in_lines) return PackedLineOffset(R, bytes, r, k);
  return in_lines * R + r * (K - in_lines) + (k - in_lines);
}

// Read in place (row-major, rows `ldw` apart), the offset from a group's first row of the element
// the kernel reads `ahead` elements after (r, col) in row r's stream: further along row r, and
// past its end on into the row `stream_step` rows down (GroupRows). (In consecutive groups that is
// row r of the next group, not the next row: that one belongs to this group and streams already,
// and a prefetch that ran on into it would leave each group's rows to start cold.)
inline size_t InPlaceAheadOffset(size_t K, size_t ldw, size_t row_step, size_t stream_step,
                                 size_t r, size_t col, size_t ahead) {
  const size_t c = col + ahead;
  return (r * row_step + c / K * stream_step) * ldw + c % K;
}

}  // namespace rooftune::kernels
