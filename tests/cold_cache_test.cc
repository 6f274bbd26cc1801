#include "framework/cold_cache.h"

#include <algorithm>
#include <numeric>
#include <vector>

#include "framework/executor.h"
#include "framework/harness.h"
#include "gtest/gtest.h"

namespace rooftune {
namespace {

bool Contains(const std::vector<ByteSpan>& spans, const void* data, size_t bytes) {
  return std::any_of(spans.begin(), spans.end(), [&](ByteSpan s) {
    return static_cast<const void*>(s.data()) == data && s.size() == bytes;
  });
}

// A cold repetition evicts every operand the workload has, whole, and what was prepared.
TEST(ColdBytes, CoverEveryOperandAndThePreparedBytes) {
  const Workload w{Op::kGemv, 1, 24, 40, Dtype::kU8S8, Epilogue::kBias};
  absl::StatusOr<Problem> p = Problem::Create(w);
  ASSERT_TRUE(p.ok());
  std::vector<uint8_t> packed(960);
  const Prepared prepared{nullptr, {BytesOf(packed.data(), packed.size())}};
  const std::vector<ByteSpan> spans = ColdBytes(*p, prepared);
  EXPECT_TRUE(Contains(spans, p->b_s8.data(), 24 * 40));          // W
  EXPECT_TRUE(Contains(spans, p->a_u8.data(), 40));               // x
  EXPECT_TRUE(Contains(spans, p->c.data(), 24 * sizeof(float)));  // y
  EXPECT_TRUE(Contains(spans, p->bias.data(), 24 * sizeof(float)));
  EXPECT_TRUE(Contains(spans, p->scale_b.data(), 24 * sizeof(float)));
  EXPECT_TRUE(Contains(spans, p->colsum_b.data(), 24 * sizeof(int32_t)));
  EXPECT_TRUE(Contains(spans, packed.data(), packed.size()));
  for (ByteSpan s : spans) EXPECT_FALSE(s.empty());  // buffers the workload lacks are left out
  EXPECT_EQ(spans.size(), p->OperandBytes().size() + 1);
}

// Eviction moves lines out of the caches and leaves memory as it was, whatever the span's
// alignment and length.
TEST(EvictFromCaches, LeavesTheBytesUnchanged) {
  std::vector<uint8_t> data(10000);
  std::iota(data.begin(), data.end(), uint8_t{0});
  const std::vector<uint8_t> before = data;
  EvictFromCaches(ByteSpan(data.data() + 3, 5001));  // starts and ends inside a line
  EvictFromCaches(ByteSpan(data.data(), 0));
  EvictFromCaches(std::vector<ByteSpan>{BytesOf(data.data(), data.size())});
  EXPECT_EQ(data, before);
}

// The threads share an eviction in pieces of at most kEvictionPieceBytes that cut every span in
// order: each byte in exactly one piece, no piece empty.
TEST(EvictFromCaches, PiecesCoverEverySpanOnce) {
  std::vector<uint8_t> big(3 * kEvictionPieceBytes + 1000), small(100);
  const std::vector<ByteSpan> spans = {ByteSpan(big.data() + 7, big.size() - 7),
                                       ByteSpan(small.data(), 0), BytesOf(small.data(), 100),
                                       ByteSpan(big.data(), kEvictionPieceBytes)};
  const std::vector<ByteSpan> pieces = EvictionPieces(spans);
  ASSERT_EQ(pieces.size(), 4u + 1u + 1u);
  size_t at = 0;
  for (ByteSpan span : spans) {
    for (size_t offset = 0; offset < span.size(); ++at) {
      ASSERT_LT(at, pieces.size());
      EXPECT_EQ(pieces[at].data(), span.data() + offset);
      EXPECT_GT(pieces[at].size(), 0u);
      EXPECT_LE(pieces[at].size(), kEvictionPieceBytes);
      offset += pieces[at].size();
      EXPECT_LE(offset, span.size());
    }
  }
  EXPECT_EQ(at, pieces.size());
  // Shared out among a two-thread arena's threads, memory is left as it was.
  std::iota(big.begin(), big.end(), uint8_t{0});
  const std::vector<uint8_t> before = big;
  Executor executor(std::min<int>(2, int(AllowedCpus().size())));
  EvictFromCaches(spans, executor);
  EXPECT_EQ(big, before);
}

// Cold timing runs the kernel as often as warm timing does, and its output stays correct.
TEST(EvictFromCaches, ColdTimingStillRunsEveryRepetition) {
  const Kernel* kernel = KernelRegistry::Global().Find("gemv_u8s8");
  ASSERT_NE(kernel, nullptr);
  absl::StatusOr<Problem> p =
      Problem::Create({Op::kGemv, 1, 64, 96, Dtype::kU8S8, Epilogue::kNone});
  ASSERT_TRUE(p.ok());
  absl::StatusOr<Config> config = kernel->params.Parse("PACKW=1", kernel->params.FirstValid());
  ASSERT_TRUE(config.ok());
  absl::StatusOr<Prepared> prepared = Prepare(*kernel, *config, *p);
  ASSERT_TRUE(prepared.ok());
  Executor executor(1);
  TimingOptions options;
  options.cache = CacheMode::kCold;
  options.min_repetitions = 7, options.max_repetitions = 7, options.min_seconds = 0;
  absl::StatusOr<TimedCalls> calls =
      TimeSamples(*kernel, *config, *p, executor, *prepared, options);
  ASSERT_TRUE(calls.ok()) << calls.status();
  EXPECT_EQ(calls->seconds.size(), 7u);
  EXPECT_EQ(calls->cpu_seconds.size(), 7u);
  const ReferenceOutput reference = ComputeReference(*p);
  EXPECT_TRUE(CompareWithReference(*p, reference).ok);
}

}  // namespace
}  // namespace rooftune
