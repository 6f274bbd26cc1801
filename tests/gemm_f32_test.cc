// Every micro-kernel on every Highway target this CPU supports, against the reference, over the
// awkward shapes: 1, primes, edges that are not multiples of MR or NR, K = 1, large K, strided
// operands, beta != 0, NaN and Inf, both epilogues fused and unfused, both parallel loops.
#include "kernels/gemm_f32/gemm_f32.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <random>
#include <set>
#include <vector>

#include "absl/strings/str_cat.h"
#include "framework/executor.h"
#include "framework/kernel.h"
#include "framework/machine_profile.h"
#include "framework/reference.h"
#include "framework/roofline.h"
#include "hwy/targets.h"
#include "kernels/code_paths.h"
#include "kernels/gemm_f32/blocking.h"
#include "kernels/gemm_f32/small.h"
#include "kernels/gemm_f32/tiled.h"

namespace rooftune::kernels {
namespace {

struct Shape {
  int64_t m, n, k;
};

// Runs the kernel on (possibly strided) operands and compares with the reference, element by
// element, within the K-scaled tolerance. Returns the number of wrong elements.
int64_t CountWrong(const Shape& s, const GemmF32Blocking& blocking, GemmEpilogue epilogue,
                   float alpha, float beta, int64_t pad, int threads, uint64_t seed,
                   const std::function<void(std::vector<float>&, std::vector<float>&)>& poison = {}) {
  const int64_t lda = s.k + pad, ldb = s.n + pad, ldc = s.n + pad;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(-1, 1);
  std::vector<float> a(size_t(s.m * lda)), b(size_t(s.k * ldb)), c(size_t(s.m * ldc)), bias(size_t(s.n));
  for (float& x : a) x = uniform(rng);
  for (float& x : b) x = uniform(rng);
  for (float& x : c) x = uniform(rng);
  for (float& x : bias) x = uniform(rng);
  if (poison) poison(a, b);
  std::vector<float> expected = c;
  std::vector<double> magnitude(size_t(s.m * s.n));
  const Epilogue ref_epilogue = epilogue == GemmEpilogue::kNone   ? Epilogue::kNone
                                : epilogue == GemmEpilogue::kBias ? Epilogue::kBias
                                                                  : Epilogue::kBiasRelu;
  ReferenceGemmF32(s.m, s.n, s.k, alpha, a.data(), lda, b.data(), ldb, beta, expected.data(), ldc,
                   bias.data(), ref_epilogue, magnitude.data());
  if (beta == 0.0f) std::fill(c.begin(), c.end(), std::numeric_limits<float>::quiet_NaN());

  GemmF32Args args{s.m, s.n, s.k, alpha, a.data(), lda, b.data(), ldb, beta, c.data(), ldc,
                   bias.data(), epilogue};
  absl::Status status;
  Executor executor(threads);
  executor.Execute([&] { status = GemmF32(args, blocking); });
  EXPECT_TRUE(status.ok()) << status;
  const double tolerance = 4 * std::numeric_limits<float>::epsilon() * (std::sqrt(double(s.k)) + 2);
  int64_t wrong = 0;
  for (int64_t i = 0; i < s.m; ++i) {
    for (int64_t j = 0; j < ldc; ++j) {
      const float got = c[size_t(i * ldc + j)], want = expected[size_t(i * ldc + j)];
      if (j >= s.n) {
        // Padding between rows must be untouched (beta == 0 wrote NaN there before the call).
        if (!(std::isnan(got) && std::isnan(want)) && got != want && beta != 0.0f) ++wrong;
        continue;
      }
      bool ok;
      if (std::isnan(want)) {
        ok = std::isnan(got);
      } else if (std::isinf(want) || std::isinf(got) || std::isnan(got)) {
        ok = got == want;
      } else {
        ok = std::abs(got - want) <= tolerance * magnitude[size_t(i * s.n + j)];
      }
      if (!ok && wrong++ < 3) {
        ADD_FAILURE() << "C[" << i << "][" << j << "] = " << got << ", expected " << want
                      << " for " << s.m << "x" << s.n << "x" << s.k << " MR=" << blocking.mr
                      << " NR=" << blocking.nr;
      }
    }
  }
  return wrong;
}

const std::vector<Shape> kAwkwardShapes = {{1, 1, 1},    {7, 13, 29},  {1, 97, 5},  {31, 1, 17},
                                           {5, 7, 1},    {33, 65, 3},  {64, 64, 64}, {13, 200, 300},
                                           {97, 31, 129}};

class EveryTarget : public ::testing::TestWithParam<int64_t> {
 protected:
  void SetUp() override { hwy::SetSupportedTargetsForTest(GetParam()); }
  void TearDown() override { hwy::SetSupportedTargetsForTest(0); }
};

TEST_P(EveryTarget, EveryMicroKernelOnAwkwardShapes) {
  const std::vector<MicroKernelShape> kernels = GemmF32MicroKernels();
  ASSERT_FALSE(kernels.empty());
  EXPECT_STREQ(GemmF32TargetName(), hwy::TargetName(GetParam()));
  RecordCodePaths(true);
  for (const MicroKernelShape& uk : kernels) {
    // Small cache blocks so that every loop runs several times, with partial blocks; every
    // combination of packed and in-place operands (B also packed on first use), both orders of
    // the jr and ir loops, and the prefetch of in-place B's next micro-panel.
    for (int variant = 0; variant < 24; ++variant) {
      GemmF32Blocking blocking{uk.mr, uk.nr, 16, uk.mr * 3, uk.nr * 2, ParallelLoop::kIc, true};
      blocking.pack_a = variant & 1;
      blocking.jr_innermost = variant & 2;
      blocking.prefetch_b = variant & 4;
      blocking.pack_b = BPacking(variant >> 3);
      if (blocking.pack_b == BPacking::kOnFirstUse) blocking.parallel = ParallelLoop::kJc;
      for (const Shape& s : kAwkwardShapes) {
        EXPECT_EQ(CountWrong(s, blocking, GemmEpilogue::kNone, 1.0f, 0.0f, 0, 1, 1), 0)
            << "pack_a=" << blocking.pack_a << " pack_b=" << int(blocking.pack_b)
            << " jr_innermost=" << blocking.jr_innermost << " prefetch_b=" << blocking.prefetch_b;
      }
      EXPECT_EQ(CountWrong({29, 37, 41}, blocking, GemmEpilogue::kBiasRelu, 0.5f, 2.0f, 3, 1, 2), 0);
      // alpha alone (beta = 0, no epilogue) over whole and edge tiles, one KC block and several:
      // the micro-kernel's plain store.
      const Shape whole_tiles{uk.mr * 2 + 1, uk.nr * 2 + 3, 13};
      EXPECT_EQ(CountWrong(whole_tiles, blocking, GemmEpilogue::kNone, -2.5f, 0.0f, 2, 1, 11), 0);
      EXPECT_EQ(CountWrong({whole_tiles.m, whole_tiles.n, 41}, blocking, GemmEpilogue::kNone, 0.25f,
                           0.0f, 0, 1, 12), 0);
    }
  }
  // Every micro-kernel of this target ran with every packing and loop order: none fell back.
  const std::set<std::string> ran = RecordedCodePaths();
  RecordCodePaths(false);
  for (const MicroKernelShape& uk : kernels) {
    for (const char* a : {"packed", "in_place"}) {
      for (const char* b : {"in_place", "ahead", "first_use"}) {
        for (const char* order : {"ir", "jr"}) {
          const std::string path =
              absl::StrCat("gemm_f32 ", hwy::TargetName(GetParam()), " ", uk.mr, "x", uk.nr,
                           " A:", a, " B:", b, " ", order,
                           std::string(b) == "first_use" ? " jc" : " ic");
          EXPECT_EQ(ran.count(path), 1u) << path;
        }
      }
    }
  }
}

// A tile at M's edge runs a shorter kernel than MR (the shortest compiled height that covers its
// rows), and a packed A panel there holds that many rows per k: every remainder of M by MR, with
// the edge after a whole panel and alone (then it is also the tile that packs B on first use).
TEST_P(EveryTarget, EveryEdgeHeight) {
  RecordCodePaths(true);
  for (const MicroKernelShape& uk : GemmF32MicroKernels()) {
    for (int variant = 0; variant < 4; ++variant) {
      GemmF32Blocking blocking{uk.mr, uk.nr, 32, uk.mr * 2, uk.nr * 2, ParallelLoop::kJc, true};
      blocking.pack_a = variant & 1;
      blocking.pack_b = variant & 2 ? BPacking::kOnFirstUse : BPacking::kAhead;
      for (int rows = 1; rows < uk.mr; ++rows) {
        for (const int64_t m : {int64_t(rows), int64_t(uk.mr + rows)}) {
          EXPECT_EQ(CountWrong({m, uk.nr + 5, 37}, blocking, GemmEpilogue::kBias, 1.5f, 0.5f, 1, 1,
                               uint64_t(rows)), 0)
              << "rows at the edge=" << rows << " pack_a=" << blocking.pack_a
              << " pack_b=" << int(blocking.pack_b);
        }
      }
    }
  }
  // Each remainder of M ran an edge kernel at least that tall, on this target.
  const std::set<std::string> ran = RecordedCodePaths();
  RecordCodePaths(false);
  for (const MicroKernelShape& uk : GemmF32MicroKernels()) {
    const std::string prefix =
        absl::StrCat("gemm_f32 ", hwy::TargetName(GetParam()), " ", uk.mr, "x", uk.nr, " edge rows ");
    int tallest = 0;
    for (const std::string& path : ran) {
      if (path.rfind(prefix, 0) == 0) tallest = std::max(tallest, std::stoi(path.substr(prefix.size())));
    }
    EXPECT_GE(tallest, uk.mr - 1) << prefix;
  }
}

std::vector<int64_t> SupportedTargets() { return hwy::SupportedAndGeneratedTargets(); }

// The small-matrix path: every register block this target compiles, every size from 1 to 17 in
// each dimension (edges of every width below a vector, and of every height below MR), strided
// operands, beta, alpha and both epilogues; then tiles of several panels.
TEST_P(EveryTarget, SmallPathOnEverySizeFrom1To17) {
  RecordCodePaths(true);
  const int lanes = GemmF32VectorLanes();
  std::vector<GemmF32Blocking> blocks;
  for (int mr : {1, 2, 4, 6, 8, 12}) {
    for (int vectors = 1; vectors <= 4; ++vectors) {
      if (!GemmF32SmallHasKernel(mr, vectors * lanes)) continue;
      GemmF32Blocking b;
      b.path = GemmF32Path::kSmall;
      b.mr = mr;
      b.nr = vectors * lanes;
      blocks.push_back(b);
    }
  }
  ASSERT_GE(blocks.size(), 6u);
  for (const GemmF32Blocking& b : blocks) {
    for (int64_t m = 1; m <= 17; ++m) {
      for (int64_t n = 1; n <= 17; ++n) {
        const int64_t k = (m * 7 + n * 3) % 17 + 1;
        EXPECT_EQ(CountWrong({m, n, k}, b, GemmEpilogue::kNone, 1.0f, 0.0f, 0, 1, uint64_t(m * n)), 0);
      }
      for (int64_t k = 1; k <= 17; ++k) {
        EXPECT_EQ(CountWrong({m, 17, k}, b, GemmEpilogue::kBiasRelu, 0.5f, 2.0f, 3, 1, uint64_t(k)), 0);
      }
    }
    for (const Shape& s : kAwkwardShapes) {
      EXPECT_EQ(CountWrong(s, b, GemmEpilogue::kBias, -1.5f, 0.25f, 1, 1, 5), 0);
    }
    GemmF32Blocking unfused = b;
    unfused.fuse_epilogue = false;
    EXPECT_EQ(CountWrong({13, 29, 7}, unfused, GemmEpilogue::kBiasRelu, 1.0f, 1.0f, 2, 1, 6), 0);
    // Tiles split over two threads, by rows and by column panels, edges included.
    for (ParallelLoop loop : {ParallelLoop::kIc, ParallelLoop::kJc}) {
      GemmF32Blocking split = b;
      split.split_small = true;
      split.parallel = loop;
      for (const Shape& s : std::vector<Shape>{{1, 1, 1}, {37, 5, 9}, {29, 71, 13}, {100, 3 * b.nr + 1, 17}}) {
        EXPECT_EQ(CountWrong(s, split, GemmEpilogue::kBiasRelu, 0.5f, 1.5f, 1, 2, 7), 0);
      }
    }
  }
  const std::set<std::string> ran = RecordedCodePaths();
  RecordCodePaths(false);
  for (const GemmF32Blocking& b : blocks) {
    for (const char* split : {"", " split rows", " split columns"}) {
      const std::string path = absl::StrCat("gemm_f32 small ", hwy::TargetName(GetParam()), " ",
                                            b.mr, "x", b.nr, split);
      EXPECT_EQ(ran.count(path), 1u) << path;
    }
  }
}

// `count` floats that end where an inaccessible page begins: a read or write past them faults.
class GuardedFloats {
 public:
  explicit GuardedFloats(size_t count) {
    const size_t page = size_t(sysconf(_SC_PAGESIZE));
    bytes_ = (count * sizeof(float) + page - 1) / page * page + page;
    base_ = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    EXPECT_NE(base_, MAP_FAILED);
    char* guard = static_cast<char*>(base_) + bytes_ - page;
    EXPECT_EQ(mprotect(guard, page, PROT_NONE), 0);
    data_ = reinterpret_cast<float*>(guard) - count;
  }
  ~GuardedFloats() { munmap(base_, bytes_); }
  float* data() { return data_; }

 private:
  void* base_;
  size_t bytes_;
  float* data_;
};

// The masked edges read and write nothing past the operands: B, C and the bias each end at an
// inaccessible page, N is not a multiple of the vector, and beta reads C.
TEST_P(EveryTarget, SmallPathTouchesNothingPastItsOperands) {
  const int lanes = GemmF32VectorLanes();
  for (int vectors = 1; vectors <= 4; ++vectors) {
    if (!GemmF32SmallHasKernel(4, vectors * lanes)) continue;
    GemmF32Blocking b;
    b.path = GemmF32Path::kSmall;
    b.mr = 4;
    b.nr = vectors * lanes;
    for (const Shape& s : std::vector<Shape>{{5, 1, 3}, {3, 17, 2}, {9, int64_t(b.nr) + 3, 4}}) {
      GuardedFloats a(size_t(s.m * s.k)), bm(size_t(s.k * s.n)), c(size_t(s.m * s.n)), bias(size_t(s.n));
      std::fill_n(a.data(), s.m * s.k, 1.0f);
      std::fill_n(bm.data(), s.k * s.n, 2.0f);
      std::fill_n(c.data(), s.m * s.n, 1.0f);
      std::fill_n(bias.data(), s.n, -0.5f);
      const GemmF32Args args{s.m, s.n, s.k, 1.0f, a.data(), s.k, bm.data(), s.n, 3.0f, c.data(), s.n,
                             bias.data(), GemmEpilogue::kBias};
      ASSERT_TRUE(GemmF32(args, b).ok());
      for (int64_t i = 0; i < s.m * s.n; ++i) {
        ASSERT_EQ(c.data()[i], 2.0f * float(s.k) + 3.0f - 0.5f) << i;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Gemm, EveryTarget, ::testing::ValuesIn(SupportedTargets()),
                         [](const auto& info) { return std::string(hwy::TargetName(info.param)); });

GemmF32Blocking DefaultBlocking() {
  const std::vector<MicroKernelShape> kernels = GemmF32MicroKernels();
  GemmF32Blocking b;
  b.mr = kernels.front().mr;
  b.nr = kernels.front().nr;
  b.kc = 64;
  b.mc = b.mr * 4;
  b.nc = b.nr * 4;
  return b;
}

TEST(GemmF32, BothEpiloguesFusedAndUnfused) {
  for (bool fused : {true, false}) {
    GemmF32Blocking b = DefaultBlocking();
    b.fuse_epilogue = fused;
    for (GemmEpilogue e : {GemmEpilogue::kBias, GemmEpilogue::kBiasRelu}) {
      EXPECT_EQ(CountWrong({45, 77, 130}, b, e, 1.0f, 0.0f, 0, 1, 3), 0);
      EXPECT_EQ(CountWrong({45, 77, 130}, b, e, 1.5f, -0.5f, 5, 2, 4), 0);
    }
  }
}

TEST(GemmF32, BothParallelLoopsOnTwoThreads) {
  for (ParallelLoop loop : {ParallelLoop::kIc, ParallelLoop::kJc}) {
    for (BPacking pack_b : {BPacking::kInPlace, BPacking::kAhead, BPacking::kOnFirstUse}) {
      if (pack_b == BPacking::kOnFirstUse && loop == ParallelLoop::kIc) continue;
      GemmF32Blocking b = DefaultBlocking();
      b.parallel = loop;
      b.pack_b = pack_b;
      b.pack_a = pack_b != BPacking::kInPlace;
      EXPECT_EQ(CountWrong({150, 170, 90}, b, GemmEpilogue::kNone, 1.0f, 0.0f, 0, 2, 5), 0);
      EXPECT_EQ(CountWrong({150, 170, 90}, b, GemmEpilogue::kBiasRelu, 1.0f, 1.0f, 7, 2, 6), 0);
    }
  }
}

TEST(GemmF32, PackingBOnFirstUseNeedsTheColumnSplit) {
  std::vector<float> a(4), b(4), c(4);
  const GemmF32Args args{2, 2, 2, 1.0f, a.data(), 2, b.data(), 2, 0.0f, c.data(), 2, nullptr,
                         GemmEpilogue::kNone};
  GemmF32Blocking blocking = DefaultBlocking();
  blocking.pack_b = BPacking::kOnFirstUse;
  blocking.parallel = ParallelLoop::kIc;
  const absl::Status status = GemmF32(args, blocking);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("jc"), std::string::npos) << status;
  blocking.parallel = ParallelLoop::kJc;
  EXPECT_TRUE(GemmF32(args, blocking).ok());
}

TEST(GemmF32, LargeKAndLargePrimeShape) {
  GemmF32Blocking b = DefaultBlocking();
  b.kc = 256;
  b.mc = b.mr * 16;
  b.nc = b.nr * 32;
  EXPECT_EQ(CountWrong({3, 5, 20000}, b, GemmEpilogue::kNone, 1.0f, 0.0f, 0, 1, 7), 0);
  EXPECT_EQ(CountWrong({1000, 999, 1001}, b, GemmEpilogue::kNone, 1.0f, 0.0f, 0, 2, 8), 0);
}

TEST(GemmF32, NaNAndInfPropagateAsInTheReference) {
  const GemmF32Blocking b = DefaultBlocking();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(CountWrong({9, 19, 23}, b, GemmEpilogue::kNone, 1.0f, 0.0f, 0, 1, 9,
                       [&](auto& a, auto& bm) {
                         a[3] = nan;         // row 0 of C becomes NaN
                         bm[23 * 0 + 4] = inf;  // column 4 becomes +-Inf or NaN
                       }),
            0);
  EXPECT_EQ(CountWrong({9, 19, 23}, b, GemmEpilogue::kBiasRelu, 1.0f, 0.0f, 0, 1, 10,
                       [&](auto& a, auto&) { a[30] = nan; }),
            0);
}

TEST(GemmF32, RejectsBadArguments) {
  GemmF32Args args;
  EXPECT_FALSE(GemmF32(args, DefaultBlocking()).ok());
  std::vector<float> a(4), b(4), c(4);
  args = {2, 2, 2, 1.0f, a.data(), 1, b.data(), 2, 0.0f, c.data(), 2, nullptr, GemmEpilogue::kNone};
  EXPECT_FALSE(GemmF32(args, DefaultBlocking()).ok());  // lda < k
  args.lda = 2;
  args.epilogue = GemmEpilogue::kBias;
  EXPECT_FALSE(GemmF32(args, DefaultBlocking()).ok());  // no bias
  args.epilogue = GemmEpilogue::kNone;
  GemmF32Blocking odd = DefaultBlocking();
  odd.mr = 5;  // no 5-row micro-kernel anywhere
  EXPECT_FALSE(GemmF32(args, odd).ok());
}

TEST(AnalyticBlocking, FollowsTheCaches) {
  GemmMachine m;
  m.lanes = 8;
  m.vector_registers = 16;
  m.micro_kernels = {{6, 16}, {4, 24}, {8, 8}};
  m.l1 = {32 << 10, 8, 64};
  m.l2 = {512 << 10, 8, 64};
  m.l3 = {16 << 20, 16, 64};
  const GemmF32Blocking small = BlockingForBInL1(m);
  EXPECT_FALSE(small.jr_innermost);
  EXPECT_EQ(small.mc % small.mr, 0);
  EXPECT_EQ(small.nc % small.nr, 0);
  // KC x NR of B and MR x KC of A fit in L1.
  EXPECT_LE(uint64_t(small.kc) * (small.nr + small.mr) * 4, m.l1.size_bytes);
  // MC x KC of A fits in L2.
  EXPECT_LE(uint64_t(small.mc) * small.kc * 4, m.l2.size_bytes);

  // A's micro-panel in L1: it takes at most a quarter of L1, B's KC x NC block at most half of L2,
  // A's MC x KC block at most half of L3.
  const GemmF32Blocking a_in_l1 = AnalyticBlocking(m);
  EXPECT_TRUE(a_in_l1.jr_innermost);
  EXPECT_EQ(a_in_l1.mr, small.mr);
  EXPECT_LE(uint64_t(a_in_l1.kc) * a_in_l1.mr * 4, m.l1.size_bytes / 4);
  EXPECT_GT(uint64_t(a_in_l1.kc) * a_in_l1.mr * 4, m.l1.size_bytes / 8);
  EXPECT_LE(uint64_t(a_in_l1.kc) * a_in_l1.nc * 4, m.l2.size_bytes / 2);
  EXPECT_LE(uint64_t(a_in_l1.kc) * a_in_l1.mc * 4, m.l3.size_bytes / 2);
  EXPECT_GT(a_in_l1.kc, small.kc);  // the reason for this order: deeper panels

  m.l2.size_bytes *= 4;
  m.l3.size_bytes *= 4;
  const GemmF32Blocking big = BlockingForBInL1(m);
  EXPECT_GT(big.mc, small.mc);
  EXPECT_GT(big.nc, small.nc);
  const GemmF32Blocking big_a_in_l1 = AnalyticBlocking(m);
  EXPECT_GT(big_a_in_l1.mc, a_in_l1.mc);
  EXPECT_GT(big_a_in_l1.nc, a_in_l1.nc);
}

// An AVX-512 Xeon like the one these blocks were tuned on: 16 lanes, 32 registers, 48 KiB L1,
// 2 MiB L2.
GemmMachine Avx512Xeon() {
  GemmMachine m;
  m.lanes = 16;
  m.vector_registers = 32;
  m.micro_kernels = {{6, 64}, {8, 48}, {4, 48}, {12, 32}};
  m.l1 = {48 << 10, 12, 64};
  m.l2 = {2 << 20, 16, 64};
  m.l3 = {32 << 20, 16, 64};
  return m;
}

TEST(AnalyticBlocking, FewRowsReadBInPlaceWithTheLeastPadding) {
  const GemmMachine m = Avx512Xeon();
  const GemmF32Blocking eight = BlockingForFewRows(m, 8);
  EXPECT_EQ(eight.mr, 8);   // 8 rows: no padding (6 would pad to 12)
  EXPECT_EQ(eight.nr, 48);  // fewer loads per FMA than 4 x 48, which pads no more
  EXPECT_EQ(eight.pack_b, BPacking::kInPlace);
  EXPECT_TRUE(eight.prefetch_b);
  EXPECT_FALSE(eight.jr_innermost);
  EXPECT_EQ(eight.mc, 8);
  // The micro-panel in use and the one being fetched share half of L1.
  EXPECT_LE(2 * uint64_t(eight.kc) * eight.nr * 4, m.l1.size_bytes / 2);
  EXPECT_GT(4 * uint64_t(eight.kc) * eight.nr * 4, m.l1.size_bytes / 2);
  // C's MC x NC block takes at most half of L2.
  EXPECT_LE(uint64_t(eight.mc) * eight.nc * 4, m.l2.size_bytes / 2);
  EXPECT_EQ(eight.nc % eight.nr, 0);

  EXPECT_EQ(BlockingForFewRows(m, 1).mr, 4);
  EXPECT_EQ(BlockingForFewRows(m, 24).mr, 6);  // 6, 8, 12 all fit 24 exactly: 6 x 64 loads least
  EXPECT_EQ(BlockingForFewRows(m, 40).mr, 8);   // 6 would pad to 42, 12 to 48
}

TEST(ColumnBlockForThreads, SharesTheColumnsEvenlyInWholePanels) {
  EXPECT_EQ(ColumnBlockForThreads(4096, 1536, 48, 2), 1056);  // 4 blocks, not 1536 + 1536 + 1024
  EXPECT_EQ(ColumnBlockForThreads(4096, 3072, 48, 2), 2064);  // one block a thread
  EXPECT_EQ(ColumnBlockForThreads(2048, 256, 64, 2), 256);    // already even: unchanged
  EXPECT_EQ(ColumnBlockForThreads(4096, 1536, 48, 1), 1392);  // 3 even blocks on one thread
  EXPECT_EQ(ColumnBlockForThreads(100, 1536, 16, 1), 112);    // never below the columns' panels
  EXPECT_EQ(ColumnBlockForThreads(10, 192, 48, 2), 48);       // one panel: one thread idles
}

TEST(AnalyticBlocking, FewColumnsGrowKCUntilBFillsHalfOfL2) {
  const GemmMachine m = Avx512Xeon();
  const GemmF32Blocking a_in_l1 = AnalyticBlocking(m);
  const GemmF32Blocking one_panel = BlockingForFewColumns(m, 64);
  EXPECT_TRUE(one_panel.jr_innermost);
  EXPECT_EQ(one_panel.mr, a_in_l1.mr);
  EXPECT_EQ(one_panel.nc, one_panel.nr);  // the whole of N, one panel
  // The KC x N block of B takes at most half the L2, and more than a quarter of it.
  EXPECT_LE(uint64_t(one_panel.kc) * one_panel.nc * 4, m.l2.size_bytes / 2);
  EXPECT_GT(uint64_t(one_panel.kc) * one_panel.nc * 4, m.l2.size_bytes / 4);
  EXPECT_GT(one_panel.kc, a_in_l1.kc);
  EXPECT_LE(uint64_t(one_panel.kc) * one_panel.mc * 4, m.l3.size_bytes / 2);
  // 100 columns pad to two panels: B's block is twice as wide, KC half as deep.
  const GemmF32Blocking two_panels = BlockingForFewColumns(m, 100);
  EXPECT_EQ(two_panels.nc, 2 * two_panels.nr);
  EXPECT_EQ(two_panels.kc, one_panel.kc / 2);
}

// What a single cold call writes into its packing buffers, beside the steady-state model: A's
// MC x KC block per thread, and B's KC x NC block shared by the threads splitting ic or one per
// thread splitting jc; with B read in place, only the KC x NR panel an edge of N packs.
// A bound must not charge L3 for what the L2 may hold: on a VM whose 2 MiB L2 misses in two
// stages (836 KiB and 1.7 MiB), a 1 MiB block of B is priced as held in L2, while blocking still
// plans with the cautious 836 KiB.
TEST(GemmF32Traffic, ABlockBetweenAnL2sTwoStagesIsPricedAsHeld) {
  const Kernel* kernel = KernelRegistry::Global().Find("gemm_f32");
  ASSERT_NE(kernel, nullptr);
  MachineProfile two_stages;
  two_stages.caches = {{1, "Data", 48 << 10, 12, 64, 1}, {2, "Unified", 2 << 20, 16, 64, 1},
                       {3, "Unified", 480u << 20, 15, 64, 2}};
  two_stages.measured_levels = {{46 << 10, 46 << 10, 46 << 10, 1.3, LevelKind::kCache},
                                {836 << 10, 812 << 10, 939 << 10, 4.8, LevelKind::kCache},
                                {1.71 * (1 << 20), 1.71 * (1 << 20), 1.71 * (1 << 20), 14.9, LevelKind::kCache},
                                {15.8 * (1 << 20), 15.8 * (1 << 20), 15.8 * (1 << 20), 45.8, LevelKind::kCache}};
  MachineProfile one_stage = two_stages;
  one_stage.measured_levels.erase(one_stage.measured_levels.begin() + 2);
  ASSERT_EQ(two_stages.EffectiveCacheBytes(2), one_stage.EffectiveCacheBytes(2));
  const Workload w{Op::kGemm, 512, 1024, 512, Dtype::kF32, Epilogue::kNone};
  absl::StatusOr<Config> c = kernel->params.Parse(
      "PATH=blocked,MR=6,NR=16,KC=256,MC=96,NC=1024,INNER=jr,PAR=columns,PACKA=in_place,"
      "PACKB=first_use",
      kernel->InitialConfig(w, 1, two_stages), false);
  ASSERT_TRUE(c.ok()) << c.status();
  // B's block, 256 x 1024 floats: 1 MiB, past the first stage and inside the second.
  const double l3_two = kernel->TrafficFor(w, *c, 1, two_stages)[MemoryLevel::kL3];
  const double l3_one = kernel->TrafficFor(w, *c, 1, one_stage)[MemoryLevel::kL3];
  const double b = 4.0 * 512 * 1024;
  EXPECT_LT(l3_two, l3_one);
  EXPECT_DOUBLE_EQ(l3_one - l3_two, b * std::ceil(512.0 / 6));  // B re-read per row block of A
}

TEST(GemmF32Traffic, FirstTouchIsThePackingBuffersOneCallWrites) {
  const Kernel* kernel = KernelRegistry::Global().Find("gemm_f32");
  ASSERT_NE(kernel, nullptr);
  const MachineProfile profile;
  const Workload w{Op::kGemm, 96, 100, 96, Dtype::kF32, Epilogue::kNone};
  const Config base = kernel->InitialConfig(w, 1, profile);
  auto first_touch = [&](const std::string& text, int threads) {
    absl::StatusOr<Config> c = kernel->params.Parse(text, base, false);
    EXPECT_TRUE(c.ok()) << c.status();
    return c.ok() ? kernel->TrafficFor(w, *c, threads, profile).first_touch : -1.0;
  };
  const std::string blocks = "MR=6,NR=16,KC=64,MC=48,NC=192,INNER=0,";
  // A: 48 x 64 floats; B: 64 x 112 (100 columns rounded up to NR = 16).
  const double a = 4.0 * 48 * 64, b = 4.0 * 64 * 112;
  EXPECT_DOUBLE_EQ(first_touch(blocks + "PAR=0,PACKA=1,PACKB=1", 1), a + b);
  EXPECT_DOUBLE_EQ(first_touch(blocks + "PAR=0,PACKA=1,PACKB=1", 2), 2 * a + b);  // B shared
  EXPECT_DOUBLE_EQ(first_touch(blocks + "PAR=1,PACKA=1,PACKB=2", 1), a + b);
  EXPECT_DOUBLE_EQ(first_touch(blocks + "PAR=0,PACKA=0,PACKB=0", 1), 4.0 * 64 * 16);  // N's edge
  const Workload even{Op::kGemm, 96, 96, 96, Dtype::kF32, Epilogue::kNone};
  absl::StatusOr<Config> in_place =
      kernel->params.Parse(blocks + "PAR=0,PACKA=0,PACKB=0", base, false);
  ASSERT_TRUE(in_place.ok());
  EXPECT_EQ(kernel->TrafficFor(even, *in_place, 1, profile).first_touch, 0);  // nothing packed
}

}  // namespace
}  // namespace rooftune::kernels

namespace rooftune {
namespace {

// The plugin's initial config on a machine with this VM's caches: which operands are packed and
// which loop the threads split follow the shape, as its comments say.
TEST(GemmF32InitialConfig, PacksAndSplitsByTheShape) {
  const Kernel* kernel = KernelRegistry::Global().Find("gemm_f32");
  ASSERT_NE(kernel, nullptr);
  MachineProfile profile;
  profile.caches = {{1, "Data", 48 << 10, 12}, {2, "Unified", 2 << 20, 16},
                    {3, "Unified", 32 << 20, 16, 64, 2}};
  auto initial = [&](int64_t m, int64_t n, int64_t k, int threads) {
    return kernel->InitialConfig({Op::kGemm, m, n, k, Dtype::kF32, Epilogue::kNone}, threads, profile);
  };
  for (int threads : {1, 2}) {
    for (const Config& c : {initial(1024, 1024, 1024, threads), initial(64, 4096, 4096, threads)}) {
      // jr innermost keeps A's micro-panel in L1 for every column panel: no packed copy.
      ASSERT_EQ(c.Get("INNER"), 1) << c.ToString();
      EXPECT_EQ(c.Get("PACKA"), 0) << c.ToString();
    }
  }
  // Fewer than 4 column panels a thread (12 columns; NR is at least 8) and 2048 rows a thread:
  // split rows, and B, shared, is packed ahead by all threads together: 171 or more row panels
  // re-read the copy.
  EXPECT_EQ(initial(4096, 24, 4096, 2).Get("PAR"), 0);
  EXPECT_EQ(initial(4096, 24, 4096, 2).Get("PACKB"), 1);
  EXPECT_EQ(initial(4096, 64, 4096, 2).Get("PACKB"), 1);
  // Rows split, but under 100 row panels (MR is 4 or 6) do not repay packing the shared B: it
  // is read in place.
  for (const Config& c : {initial(256, 24, 256, 2), initial(384, 24, 4096, 2)}) {
    EXPECT_EQ(c.Get("PAR"), 0) << c.ToString();
    EXPECT_EQ(c.Get("PACKB"), 0) << c.ToString();
  }
  // 512 columns a thread (8 panels even at NR = 64), or 32 rows a thread: split columns; each
  // thread packs its B on first use. One thread does too.
  for (const Config& c : {initial(1024, 1024, 1024, 2), initial(64, 4096, 4096, 2),
                          initial(64, 4096, 4096, 1), initial(1024, 1024, 1024, 1)}) {
    EXPECT_EQ(c.Get("PAR"), 1) << c.ToString();
    EXPECT_EQ(c.Get("PACKB"), 2) << c.ToString();
  }
  // 128 columns and 128 rows a thread: the split follows the register block chosen, columns
  // first (AVX-512's NR = 64 gives 2 panels, so rows; AVX2's NR = 16 or 24 gives 8 or 5, so
  // columns). K is long enough that the operands outgrow the small path's share of the L2.
  const Config square = initial(256, 256, 4096, 2);
  ASSERT_EQ(square.Get("PATH"), 0) << square.ToString();
  const bool enough_columns = 128 >= 4 * square.Get("NR");
  const bool enough_rows = 128 >= 16 * square.Get("MR");
  EXPECT_EQ(square.Get("PAR"), enough_columns || !enough_rows ? 1 : 0) << square.ToString();
  // One column panel: A's micro-panel serves one tile, so KC is set by B's block in L2 instead.
  for (int threads : {1, 2}) {
    const Config tall = initial(4096, 24, 4096, threads);  // one panel of the least padding
    EXPECT_EQ(tall.Get("PATH"), 0) << tall.ToString();
    EXPECT_GT(tall.Get("KC"), initial(1024, 1024, 1024, threads).Get("KC")) << tall.ToString();
  }
  // N within one vector takes the small path, its row blocks split over two threads.
  EXPECT_EQ(initial(4096, 8, 4096, 1).Get("PATH"), 1) << initial(4096, 8, 4096, 1).ToString();
  EXPECT_EQ(initial(4096, 8, 4096, 2).Get("SPLIT"), 1) << initial(4096, 8, 4096, 2).ToString();
  EXPECT_EQ(initial(4096, 8, 4096, 2).Get("PAR"), 0) << initial(4096, 8, 4096, 2).ToString();
  // Work that fits half the L2 takes the small path, alone on one thread; on two (this profile
  // has no peak to say the work is too small to split) split by rows, or by column panels when
  // there are too few row blocks.
  EXPECT_EQ(initial(64, 64, 64, 1).Get("PATH"), 1);
  EXPECT_EQ(initial(64, 64, 64, 1).Get("SPLIT"), 0);
  EXPECT_EQ(initial(64, 64, 64, 2).Get("SPLIT"), 1);
  EXPECT_EQ(initial(64, 64, 64, 2).Get("PAR"), 0);
  EXPECT_EQ(initial(8, 256, 64, 2).Get("SPLIT"), 1) << initial(8, 256, 64, 2).ToString();
  EXPECT_EQ(initial(8, 256, 64, 2).Get("PAR"), 1) << initial(8, 256, 64, 2).ToString();
  EXPECT_EQ(initial(1024, 1024, 1024, 1).Get("PATH"), 0);
  // Columns split: one block a thread (the kernel evens NC out to each thread's share).
  const Config decode_two = initial(8, 4096, 4096, 2);
  EXPECT_EQ(decode_two.Get("PAR"), 1) << decode_two.ToString();
  EXPECT_EQ(kernels::ColumnBlockForThreads(4096, decode_two.Get("NC"), decode_two.Get("NR"), 2),
            (2048 + decode_two.Get("NR") - 1) / decode_two.Get("NR") * decode_two.Get("NR"))
      << decode_two.ToString();
  const Config decode = initial(8, 4096, 4096, 1);         // too few rows to repay packing B
  EXPECT_EQ(decode.Get("PACKB"), 0) << decode.ToString();
  EXPECT_EQ(decode.Get("PREFETCHB"), 1) << decode.ToString();
}

// The unfused variant's model charges its bias+ReLU pass over C after the GEMM; the fused one
// does not.
TEST(GemmF32Traffic, TheUnfusedVariantMovesCOnceMoreAfterTheGemm) {
  const Kernel* fused = KernelRegistry::Global().Find("gemm_f32");
  const Kernel* unfused = KernelRegistry::Global().Find("gemm_f32_unfused");
  ASSERT_NE(fused, nullptr);
  ASSERT_NE(unfused, nullptr);
  MachineProfile profile;
  profile.caches = {{1, "Data", 48 << 10, 12}, {2, "Unified", 2 << 20, 16},
                    {3, "Unified", 32 << 20, 16, 64, 2}};
  const Workload w{Op::kGemm, 1024, 1024, 1024, Dtype::kF32, Epilogue::kBiasRelu};  // C: 4 MiB
  const Config c = fused->InitialConfig(w, 1, profile);
  const Traffic with_pass = unfused->TrafficFor(w, c, 1, profile);
  const Traffic without = fused->TrafficFor(w, c, 1, profile);
  const Traffic pass = EpiloguePassTraffic(w, profile);
  EXPECT_GT(pass[MemoryLevel::kL3], 0);  // C outgrows the L2
  EXPECT_EQ(with_pass.bytes, without.bytes);
  EXPECT_EQ(with_pass.after, pass.bytes);
  EXPECT_EQ(without.after, Traffic().after);
}

}  // namespace
}  // namespace rooftune

namespace rooftune {
namespace {

// The primer's textbook tiled kernel against a double-accumulating loop: awkward shapes (1,
// primes, sizes no tile divides, K = 1), every tile size, alpha and beta, strided operands, and
// values large enough that a lost or doubled partial product would show.
TEST(TiledGemmF32, MatchesAPlainLoopOnAwkwardShapesAndEveryTile) {
  std::mt19937 rng(7);
  for (const auto& [m, n, k] : std::vector<std::array<int64_t, 3>>{
           {1, 1, 1}, {7, 13, 1}, {17, 5, 31}, {64, 64, 64}, {100, 37, 129}, {3, 257, 2}}) {
    for (int64_t tile : {4, 8, 16, 32, 64, 128, 256}) {
      for (const auto& [alpha, beta] : std::vector<std::pair<float, float>>{{1, 0}, {0.5f, 2}}) {
        const int64_t lda = k + 3, ldb = n + 1, ldc = n + 2;
        std::uniform_real_distribution<float> value(-1e3f, 1e3f);
        std::vector<float> a(size_t(m * lda)), b(size_t(k * ldb)), c(size_t(m * ldc));
        for (float& x : a) x = value(rng);
        for (float& x : b) x = value(rng);
        for (float& x : c) x = value(rng);
        std::vector<float> expected = c;
        for (int64_t i = 0; i < m; ++i) {
          for (int64_t j = 0; j < n; ++j) {
            double sum = 0;
            for (int64_t p = 0; p < k; ++p) sum += double(a[i * lda + p]) * b[p * ldb + j];
            expected[i * ldc + j] = float(alpha * sum + (beta == 0 ? 0.0 : beta * double(c[i * ldc + j])));
          }
        }
        kernels::TiledGemmF32(a.data(), lda, b.data(), ldb, c.data(), ldc, m, n, k, tile, alpha, beta);
        for (int64_t i = 0; i < m; ++i) {
          for (int64_t j = 0; j < n; ++j) {
            const double want = expected[i * ldc + j];
            // float accumulation of k products of magnitude up to 1e6
            const double tolerance = 1e-5 * 1e6 * double(k) + 1e-3 * std::abs(want);
            ASSERT_NEAR(c[i * ldc + j], want, tolerance)
                << m << "x" << n << "x" << k << " TILE=" << tile << " at " << i << "," << j;
          }
          // The padding beyond n is never written.
          for (int64_t j = n; j < ldc; ++j) ASSERT_EQ(c[i * ldc + j], expected[i * ldc + j]);
        }
      }
    }
  }
}

}  // namespace
}  // namespace rooftune
