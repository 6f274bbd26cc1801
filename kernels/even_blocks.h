// Cutting a loop that threads split into blocks that keep every thread equally busy.
#pragma once

#include <algorithm>
#include <cstdint>

namespace rooftune::kernels {

// A loop over `extent` (rows or columns) in whole units (register blocks), cut into `count`
// blocks: as many as blocks of at most `max_block` would make, rounded up to a multiple of the
// threads, with widths within one unit of each other. Threads that take the blocks in equal
// shares then get the same number of units to one; uniform blocks of `max_block` would leave a
// short last block and one thread a block behind the other. 1024 columns, blocks of at most
// 192, units of 64, two threads: six blocks of 2-3 units (8 a thread), not five of 3 and one of
// 1 (9 against 7).
struct EvenBlocks {
  int64_t count = 1;  // blocks
  int64_t units = 1;  // units over all of the extent
  int64_t unit = 1;
  // The first index of block `block` (the extent rounded up to whole units at block == count).
  int64_t Begin(int64_t block) const { return units * block / count * unit; }
  int64_t Widest() const { return (units + count - 1) / count * unit; }
};

inline EvenBlocks EvenBlocksForThreads(int64_t extent, int64_t max_block, int64_t unit,
                                       int threads) {
  EvenBlocks blocks;
  blocks.unit = std::max<int64_t>(1, unit);
  blocks.units = std::max<int64_t>(1, (extent + blocks.unit - 1) / blocks.unit);
  const int64_t units_per_block = std::max<int64_t>(1, max_block / blocks.unit);
  const int64_t at_most_max = (blocks.units + units_per_block - 1) / units_per_block;
  const int64_t shared = (at_most_max + threads - 1) / std::max(threads, 1) * std::max(threads, 1);
  blocks.count = std::min(blocks.units, shared);
  return blocks;
}

}  // namespace rooftune::kernels
