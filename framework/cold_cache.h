// Cold timing: before each repetition, the bytes a kernel call streams (the problem's operands and
// what the kernel prepared from them) are evicted from every cache level, so that the call reads
// them from DRAM. Evicting exactly those lines, instead of streaming several cache sizes of other
// data through, leaves the code, the stack and the thread pool as a loop of such calls finds them
// (a decode step: this layer's weights cold, the rest warm), and costs no more than the bytes it
// evicts.
#pragma once

#include <cstddef>
#include <vector>

#include "framework/executor.h"
#include "framework/kernel.h"
#include "framework/problem.h"

namespace rooftune {

// Writes back (when dirty) and invalidates every cache line of `bytes`, at every level.
void EvictFromCaches(ByteSpan bytes);

// What a cold repetition evicts: every operand of `problem` and every byte `prepared` streams.
std::vector<ByteSpan> ColdBytes(const Problem& problem, const Prepared& prepared);

// Evicts each of `spans` on the calling thread.
void EvictFromCaches(const std::vector<ByteSpan>& spans);

// Evicts each of `spans`, shared out among `executor`'s threads: for a kernel that runs on them,
// whose cold call then finds them awake, as a call in a program's loop of calls does. Evicted by
// one thread, the others idled through the eviction and went to sleep, and waking them took the
// timed call's first 150 us or so on a VM (a two-thread decode GEMM ran 1.02 ms cold against 0.87
// warm, though its weights stream from DRAM either way). A kernel with threads of its own
// (OpenMP) evicts on the calling thread: TBB's threads, spinning for work after it, would take
// cores from its threads.
void EvictFromCaches(const std::vector<ByteSpan>& spans, Executor& executor);

// Evicts `spans` before a cold call of `kernel` on `executor`: on the executor's threads for a
// kernel that runs on them (Threading::kTbb), on the calling thread for one with its own.
void EvictBeforeColdCall(const Kernel& kernel, const std::vector<ByteSpan>& spans,
                         Executor& executor);

// The pieces the threads share an eviction in, `spans` cut in order: enough of them that every
// thread takes some of a weight matrix's, few enough that taking one costs nothing beside
// flushing it (64 MiB: 2.8 ms on one thread).
inline constexpr size_t kEvictionPieceBytes = size_t{1} << 20;
std::vector<ByteSpan> EvictionPieces(const std::vector<ByteSpan>& spans);

}  // namespace rooftune
