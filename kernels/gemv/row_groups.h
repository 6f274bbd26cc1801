// How a GEMV splits W's rows: tasks of `rows_per_task` rows for the threads, and within a task
// groups that share each load of x. The kernel and the weight packer both walk rows this way, so
// a packed group lies exactly where the kernel looks for it.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "kernels/gemv/gemv.h"

namespace rooftune::kernels {

// Rows [begin, end) as groups of 16, 8, 4, 2 and 1 rows, largest first, none larger than
// `together`: calls group(R, first) for each.
template <class Fn>
void ForEachGroupIn(int64_t begin, int64_t end, int together, const Fn& group) {
  for (int64_t size : {16, 8, 4, 2, 1}) {
    if (size > 1 && together < size) continue;
    for (; begin + size <= end; begin += size) group(size, begin);
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
// past its end on into row r of the next group. (The next row belongs to this group and streams
// already; a prefetch that ran on into it would leave each group's rows to start cold.)
inline size_t InPlaceAheadOffset(size_t R, size_t K, size_t ldw, size_t r, size_t col, size_t ahead) {
  size_t row = r, c = col + ahead;
  if (c >= K) row += c / K * R, c %= K;
  return row * ldw + c;
}

}  // namespace rooftune::kernels
