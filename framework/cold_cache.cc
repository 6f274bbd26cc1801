#include "framework/cold_cache.h"

#include <cstddef>
#include <cstdint>

#include "oneapi/tbb/parallel_for.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <immintrin.h>
#endif

namespace rooftune {

namespace {

// 64 bytes is the smallest line of the x86 and Arm cores rooftune runs on; flushing at that stride
// covers a larger line several times over, which is harmless.
constexpr uintptr_t kLine = 64;

#if defined(__x86_64__) || defined(__i386__)
// clflushopt is weakly ordered, so many flushes are in flight at once: 2.7 ns a line here against
// 37 for clflush, whose flushes are ordered with one another (64 MiB: 2.8 ms against 39).
__attribute__((target("clflushopt"))) void FlushLinesOpt(uintptr_t first, uintptr_t end) {
  for (uintptr_t line = first; line < end; line += kLine) {
    _mm_clflushopt(reinterpret_cast<void*>(line));
  }
}

void FlushLines(uintptr_t first, uintptr_t end) {
  for (uintptr_t line = first; line < end; line += kLine) {
    _mm_clflush(reinterpret_cast<const void*>(line));
  }
}

bool HasClflushopt() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  return __get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) != 0 && (ebx & bit_CLFLUSHOPT) != 0;
}
#endif

}  // namespace

void EvictFromCaches(ByteSpan bytes) {
  if (bytes.empty()) return;
  const uintptr_t first = reinterpret_cast<uintptr_t>(bytes.data()) & ~(kLine - 1);
  const uintptr_t end = reinterpret_cast<uintptr_t>(bytes.data()) + bytes.size();
#if defined(__x86_64__) || defined(__i386__)
  static const bool clflushopt = HasClflushopt();
  if (clflushopt) {
    FlushLinesOpt(first, end);
  } else {
    FlushLines(first, end);
  }
  _mm_mfence();  // every flush is done before the timed call's first load
#elif defined(__aarch64__)
  for (uintptr_t line = first; line < end; line += kLine) {
    asm volatile("dc civac, %0" : : "r"(line) : "memory");
  }
  asm volatile("dsb ish" : : : "memory");
#else
#error "EvictFromCaches needs a cache-line flush instruction for this architecture"
#endif
}

std::vector<ByteSpan> ColdBytes(const Problem& problem, const Prepared& prepared) {
  std::vector<ByteSpan> spans = problem.OperandBytes();
  spans.insert(spans.end(), prepared.streamed.begin(), prepared.streamed.end());
  return spans;
}

std::vector<ByteSpan> EvictionPieces(const std::vector<ByteSpan>& spans) {
  std::vector<ByteSpan> pieces;
  for (ByteSpan span : spans) {
    for (size_t at = 0; at < span.size(); at += kEvictionPieceBytes) {
      pieces.push_back(span.subspan(at, kEvictionPieceBytes));
    }
  }
  return pieces;
}

void EvictFromCaches(const std::vector<ByteSpan>& spans) {
  for (ByteSpan span : spans) EvictFromCaches(span);
}

void EvictFromCaches(const std::vector<ByteSpan>& spans, Executor& executor) {
  const std::vector<ByteSpan> pieces = EvictionPieces(spans);
  executor.Execute([&] {
    tbb::parallel_for(
        size_t{0}, pieces.size(), [&](size_t i) { EvictFromCaches(pieces[i]); },
        tbb::simple_partitioner());
  });
}

void EvictBeforeColdCall(const Kernel& kernel, const std::vector<ByteSpan>& spans,
                         Executor& executor) {
  if (kernel.threading == Threading::kTbb) {
    EvictFromCaches(spans, executor);
  } else {
    EvictFromCaches(spans);
  }
}

}  // namespace rooftune
