// Cold timing: before each repetition, the bytes a kernel call streams (the problem's operands and
// what the kernel prepared from them) are evicted from every cache level, so that the call reads
// them from DRAM. Evicting exactly those lines, instead of streaming several cache sizes of other
// data through, leaves the code, the stack and the thread pool as a loop of such calls finds them
// (a decode step: this layer's weights cold, the rest warm), and costs no more than the bytes it
// evicts.
#pragma once

#include <vector>

#include "framework/kernel.h"
#include "framework/problem.h"

namespace rooftune {

// Writes back (when dirty) and invalidates every cache line of `bytes`, at every level.
void EvictFromCaches(ByteSpan bytes);

// What a cold repetition evicts: every operand of `problem` and every byte `prepared` streams.
std::vector<ByteSpan> ColdBytes(const Problem& problem, const Prepared& prepared);

// Evicts each of `spans`.
void EvictFromCaches(const std::vector<ByteSpan>& spans);

}  // namespace rooftune
