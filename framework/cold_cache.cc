#include "framework/cold_cache.h"

#include <cstddef>
#include <cstdint>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace rooftune {

void EvictFromCaches(ByteSpan bytes) {
  if (bytes.empty()) return;
  // 64 bytes is the smallest line of the x86 and Arm cores rooftune runs on; flushing at that
  // stride covers a larger line several times over, which is harmless.
  constexpr uintptr_t kLine = 64;
  const uintptr_t first = reinterpret_cast<uintptr_t>(bytes.data()) & ~(kLine - 1);
  const uintptr_t end = reinterpret_cast<uintptr_t>(bytes.data()) + bytes.size();
  for (uintptr_t line = first; line < end; line += kLine) {
#if defined(__x86_64__) || defined(__i386__)
    _mm_clflush(reinterpret_cast<const void*>(line));
#elif defined(__aarch64__)
    asm volatile("dc civac, %0" : : "r"(line) : "memory");
#else
#error "EvictFromCaches needs a cache-line flush instruction for this architecture"
#endif
  }
  // The flushes are done before the timed call's first load.
#if defined(__x86_64__) || defined(__i386__)
  _mm_mfence();
#elif defined(__aarch64__)
  asm volatile("dsb ish" : : : "memory");
#endif
}

std::vector<ByteSpan> ColdBytes(const Problem& problem, const Prepared& prepared) {
  std::vector<ByteSpan> spans = problem.OperandBytes();
  spans.insert(spans.end(), prepared.streamed.begin(), prepared.streamed.end());
  return spans;
}

void EvictFromCaches(const std::vector<ByteSpan>& spans) {
  for (ByteSpan span : spans) EvictFromCaches(span);
}

}  // namespace rooftune
