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

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "framework/executor.h"
#include "framework/kernel.h"
#include "framework/machine_profile.h"
#include "framework/reference.h"
#include "framework/roofline.h"
#include "framework/validation.h"
#include "hwy/aligned_allocator.h"
#include "hwy/targets.h"
#include "kernels/code_paths.h"
#include "kernels/gemm_f32/blocking.h"
#include "kernels/gemm_f32/plan.h"
#include "kernels/gemm_f32/small.h"
#include "kernels/gemm_f32/tiled.h"

namespace rooftune::kernels {
namespace {

struct Shape {
  int64_t m, n, k;
};

// Runs the kernel on (possibly strided) operands and compares with the reference, element by
// element, within the K-scaled tolerance. Returns the number of wrong elements.
int64_t CountWrong(
    const Shape& s, const GemmF32Blocking& blocking, GemmEpilogue epilogue, float alpha, float beta,
    int64_t pad, int threads, uint64_t seed,
    const std::function<void(std::vector<float>&, std::vector<float>&)>& poison = {}) {
  const int64_t lda = s.k + pad, ldb = s.n + pad, ldc = s.n + pad;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(-1, 1);
  std::vector<float> a(size_t(s.m * lda)), b(size_t(s.k * ldb)), c(size_t(s.m * ldc)),
      bias(size_t(s.n));
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

  GemmF32Args args{s.m, s.n,  s.k,      alpha, a.data(),    lda,     b.data(),
                   ldb, beta, c.data(), ldc,   bias.data(), epilogue};
  // Prepared B is packed once, ahead of the call, from the same B; the call then reads only it.
  hwy::AlignedFreeUniquePtr<float[]> prepared;
  if (blocking.pack_b == BPacking::kPrepared) {
    prepared = hwy::AllocateAligned<float>(PreparedBFloats(s.k, s.n, blocking));
    EXPECT_TRUE(PackPreparedB(b.data(), s.k, s.n, ldb, blocking, prepared.get()).ok());
    args.b = prepared.get();
    args.ldb = 0;
  }
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
      const bool ok = ElementAgrees(got, want, tolerance * magnitude[size_t(i * s.n + j)]);
      if (!ok && wrong++ < 3) {
        ADD_FAILURE() << "C[" << i << "][" << j << "] = " << got << ", expected " << want << " for "
                      << s.m << "x" << s.n << "x" << s.k << " MR=" << blocking.mr
                      << " NR=" << blocking.nr;
      }
    }
  }
  return wrong;
}

const std::vector<Shape> kAwkwardShapes = {{1, 1, 1},    {7, 13, 29},    {1, 97, 5},
                                           {31, 1, 17},  {5, 7, 1},      {33, 65, 3},
                                           {64, 64, 64}, {13, 200, 300}, {97, 31, 129}};

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
    // combination of packed and in-place operands (B also packed on first use, or prepared),
    // both orders of the jr and ir loops, and the prefetch of in-place B's next micro-panel.
    for (int variant = 0; variant < 32; ++variant) {
      GemmF32Blocking blocking{uk.mr, uk.nr, 16, uk.mr * 3, uk.nr * 2, ParallelLoop::kIc, true};
      blocking.pack_a = variant & 1;
      blocking.jr_innermost = variant & 2;
      blocking.prefetch_b = variant & 4;
      // Into L2 with A packed, into L1 with A in place: both fetches under every kind of B.
      blocking.prefetch_b_into_l2 = blocking.prefetch_b && blocking.pack_a;
      blocking.pack_b = BPacking(variant >> 3);
      if (blocking.pack_b == BPacking::kOnFirstUse) blocking.parallel = ParallelLoop::kJc;
      for (const Shape& s : kAwkwardShapes) {
        EXPECT_EQ(CountWrong(s, blocking, GemmEpilogue::kNone, 1.0f, 0.0f, 0, 1, 1), 0)
            << "pack_a=" << blocking.pack_a << " pack_b=" << int(blocking.pack_b)
            << " jr_innermost=" << blocking.jr_innermost << " prefetch_b=" << blocking.prefetch_b
            << " into_l2=" << blocking.prefetch_b_into_l2;
      }
      EXPECT_EQ(CountWrong({29, 37, 41}, blocking, GemmEpilogue::kBiasRelu, 0.5f, 2.0f, 3, 1, 2),
                0);
      // alpha alone (beta = 0, no epilogue) over whole and edge tiles, one KC block and several:
      // the micro-kernel's plain store.
      const Shape whole_tiles{uk.mr * 2 + 1, uk.nr * 2 + 3, 13};
      EXPECT_EQ(CountWrong(whole_tiles, blocking, GemmEpilogue::kNone, -2.5f, 0.0f, 2, 1, 11), 0);
      EXPECT_EQ(CountWrong({whole_tiles.m, whole_tiles.n, 41}, blocking, GemmEpilogue::kNone, 0.25f,
                           0.0f, 0, 1, 12),
                0);
    }
  }
  // Every micro-kernel of this target ran with every packing and loop order: none fell back.
  const std::set<std::string> ran = RecordedCodePaths();
  RecordCodePaths(false);
  for (const MicroKernelShape& uk : kernels) {
    for (const char* a : {"packed", "in_place"}) {
      for (const char* b : {"in_place", "ahead", "first_use", "prepared"}) {
        for (const char* order : {"ir", "jr"}) {
          const std::string path = absl::StrCat("gemm_f32 ", hwy::TargetName(GetParam()), " ",
                                                uk.mr, "x", uk.nr, " A:", a, " B:", b, " ", order,
                                                std::string(b) == "first_use" ? " jc" : " ic");
          EXPECT_EQ(ran.count(path), 1u) << path;
        }
      }
    }
    // Prepared B fetched ahead runs the micro-kernel's streaming loop, fetching into each level.
    for (const char* level : {"L1", "L2"}) {
      const std::string path = absl::StrCat("gemm_f32 ", hwy::TargetName(GetParam()), " ", uk.mr,
                                            "x", uk.nr, " prepared B streamed into ", level);
      EXPECT_EQ(ran.count(path), 1u) << path;
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
                               uint64_t(rows)),
                    0)
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
    const std::string prefix = absl::StrCat("gemm_f32 ", hwy::TargetName(GetParam()), " ", uk.mr,
                                            "x", uk.nr, " edge rows ");
    int tallest = 0;
    for (const std::string& path : ran) {
      if (path.rfind(prefix, 0) == 0)
        tallest = std::max(tallest, std::stoi(path.substr(prefix.size())));
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
  for (int mr : kGemmF32SmallHeights) {
    for (int vectors : {1, 2, 3, 4, 8, 16}) {
      if (!GemmF32SmallHasKernel(mr, vectors * lanes)) continue;
      GemmF32Blocking b;
      b.path = GemmF32Path::kSmall;
      b.mr = mr;
      b.nr = vectors * lanes;
      blocks.push_back(b);
    }
  }
  ASSERT_GE(blocks.size(), 6u);
  // One row 8 vectors wide fits every target's registers (its loads of B feed the FMAs).
  EXPECT_TRUE(GemmF32SmallHasKernel(1, 8 * lanes));
  for (const GemmF32Blocking& b : blocks) {
    for (int64_t m = 1; m <= 17; ++m) {
      for (int64_t n = 1; n <= 17; ++n) {
        const int64_t k = (m * 7 + n * 3) % 17 + 1;
        EXPECT_EQ(CountWrong({m, n, k}, b, GemmEpilogue::kNone, 1.0f, 0.0f, 0, 1, uint64_t(m * n)),
                  0);
      }
      for (int64_t k = 1; k <= 17; ++k) {
        EXPECT_EQ(CountWrong({m, 17, k}, b, GemmEpilogue::kBiasRelu, 0.5f, 2.0f, 3, 1, uint64_t(k)),
                  0);
      }
    }
    for (const Shape& s : kAwkwardShapes) {
      EXPECT_EQ(CountWrong(s, b, GemmEpilogue::kBias, -1.5f, 0.25f, 1, 1, 5), 0);
    }
    // A bottom edge of every height below MR, after a full tile (the sizes above reach 17 rows).
    for (int64_t rows = 1; rows < b.mr; ++rows) {
      EXPECT_EQ(CountWrong({b.mr + rows, b.nr + 3, 9}, b, GemmEpilogue::kBiasRelu, 0.5f, 1.5f, 1, 1,
                           uint64_t(rows)),
                0)
          << "rows at the edge=" << rows;
    }
    // A right edge of every number of vectors below the block's, whole and with its last vector
    // partial: a wide block's edges run kernels narrower than any tunable width.
    for (int64_t vectors = 1; vectors < b.nr / lanes; ++vectors) {
      for (int64_t short_by : {0, 1}) {
        EXPECT_EQ(CountWrong({b.mr + 1, b.nr + vectors * lanes - short_by, 6}, b,
                             GemmEpilogue::kBiasRelu, 0.5f, 1.5f, 1, 1, uint64_t(vectors)),
                  0)
            << "edge vectors=" << vectors << " short by " << short_by;
      }
    }
    // Depths around the one from which a narrow block keeps two banks of sums, odd and even;
    // and one column, contiguous (dot products, every depth around two vectors) and strided.
    for (int64_t k : {kSmallBankedDepthFrom - 1, kSmallBankedDepthFrom, kSmallBankedDepthFrom + 1,
                      kSmallBankedDepthFrom + 2, 51}) {
      EXPECT_EQ(CountWrong({b.mr + 3, b.nr + 5, k}, b, GemmEpilogue::kBiasRelu, 0.5f, 1.5f, 2, 1,
                           uint64_t(k)),
                0);
    }
    for (int64_t k = 1; k <= 2 * lanes + 1; ++k) {
      for (int64_t pad : {0, 2}) {
        EXPECT_EQ(CountWrong({b.mr + 3, 1, k * 3}, b, GemmEpilogue::kBiasRelu, -0.5f, 1.5f, pad, 1,
                             uint64_t(k)),
                  0);
      }
    }
    GemmF32Blocking unfused = b;
    unfused.fuse_epilogue = false;
    EXPECT_EQ(CountWrong({13, 29, 7}, unfused, GemmEpilogue::kBiasRelu, 1.0f, 1.0f, 2, 1, 6), 0);
    // Tiles split over two threads, by rows and by column panels, edges included: one that
    // fills more than half its last vector and several that fill at most half of it.
    for (ParallelLoop loop : {ParallelLoop::kIc, ParallelLoop::kJc}) {
      GemmF32Blocking split = b;
      split.split_small = true;
      split.parallel = loop;
      for (const Shape& s : std::vector<Shape>{{1, 1, 1},
                                               {37, 5, 9},
                                               {29, 71, 13},
                                               {100, 3 * b.nr + 1, 17},
                                               {23, 2 * b.nr + lanes - 1, 11},
                                               {23, 2 * b.nr + lanes - 1, 5}}) {
        EXPECT_EQ(CountWrong(s, split, GemmEpilogue::kBiasRelu, 0.5f, 1.5f, 1, 2, 7), 0);
      }
      EXPECT_EQ(CountWrong({37, 1, 40}, split, GemmEpilogue::kBiasRelu, 0.5f, 1.5f, 0, 2, 8), 0);
    }
  }
  const std::set<std::string> ran = RecordedCodePaths();
  RecordCodePaths(false);
  for (const GemmF32Blocking& b : blocks) {
    for (const char* split : {"", " split rows", " split columns", " one column",
                              " split rows one column", " split columns one column"}) {
      const std::string path =
          absl::StrCat("gemm_f32 small ", hwy::TargetName(GetParam()), " ", b.mr, "x", b.nr, split);
      EXPECT_EQ(ran.count(path), 1u) << path;
    }
    // A right edge of at most half a vector ran on half vectors, on targets of 8 lanes or more.
    for (const char* split : {"", " split rows", " split columns"}) {
      const std::string path = absl::StrCat("gemm_f32 small ", hwy::TargetName(GetParam()), " ",
                                            b.mr, "x", b.nr, split, " half-width right edge");
      EXPECT_EQ(ran.count(path), lanes >= 8 ? 1u : 0u) << path;
    }
    // Two banks of sums ran on a product deep enough where the block holds few sums (one row of
    // at most kGemmF32SmallVectors always has the registers for them), never where it holds
    // enough to hide the latency.
    const int sums = b.mr * b.nr / lanes;
    const bool banked_ran = std::any_of(ran.begin(), ran.end(), [&](const std::string& path) {
      return absl::StartsWith(path, absl::StrCat("gemm_f32 small ", hwy::TargetName(GetParam()),
                                                 " ", b.mr, "x", b.nr, " ")) &&
             absl::EndsWith(path, " two banks");
    });
    if (b.mr == 1 && b.nr / lanes <= kGemmF32SmallVectors) {
      EXPECT_TRUE(banked_ran) << b.mr << "x" << b.nr;
    }
    if (sums >= kSmallBankedSumsBelow) EXPECT_FALSE(banked_ran) << b.mr << "x" << b.nr;
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
  const std::pair<int, int> blocks[] = {{4, 1}, {4, 2}, {4, 3}, {4, 4}, {1, 8}, {1, 16}, {2, 8}};
  for (const auto& [rows, vectors] : blocks) {
    if (!GemmF32SmallHasKernel(rows, vectors * lanes)) continue;
    GemmF32Blocking b;
    b.path = GemmF32Path::kSmall;
    b.mr = rows;
    b.nr = vectors * lanes;
    for (const Shape& s : std::vector<Shape>{{5, 1, 3}, {3, 17, 2}, {9, int64_t(b.nr) + 3, 4}}) {
      GuardedFloats a(size_t(s.m * s.k)), bm(size_t(s.k * s.n)), c(size_t(s.m * s.n)),
          bias(size_t(s.n));
      std::fill_n(a.data(), s.m * s.k, 1.0f);
      std::fill_n(bm.data(), s.k * s.n, 2.0f);
      std::fill_n(c.data(), s.m * s.n, 1.0f);
      std::fill_n(bias.data(), s.n, -0.5f);
      const GemmF32Args args{
          s.m,  s.n,      s.k, 1.0f,        a.data(),           s.k, bm.data(), s.n,
          3.0f, c.data(), s.n, bias.data(), GemmEpilogue::kBias};
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

// A plan made for C's M x N runs that shape at any depth and strides, and refuses any other.
TEST(GemmF32SmallPlan, RunsItsShapeAtAnyDepthAndStrides) {
  const int lanes = GemmF32VectorLanes();
  const GemmF32SmallBlocking blocking{4, lanes, SmallSplit::kNone};
  absl::StatusOr<GemmF32SmallPlan> plan = GemmF32SmallPlan::Make(13, lanes + 3, blocking);
  ASSERT_TRUE(plan.ok()) << plan.status();
  for (int64_t k : {1, 5, 40}) {
    for (int64_t pad : {0, 3}) {
      const int64_t m = 13, n = lanes + 3, lda = k + pad, ldb = n + pad, ldc = n + pad;
      std::vector<float> a(size_t(m * lda), 0.5f), b(size_t(k * ldb), 2.0f),
          c(size_t(m * ldc), 7.0f);
      const GemmF32Args args{m, n, k, 1.0f, a.data(), lda, b.data(), ldb, 0.0f, c.data(), ldc};
      ASSERT_TRUE(plan->Run(args).ok());
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < ldc; ++j) {
          EXPECT_EQ(c[size_t(i * ldc + j)], j < n ? float(k) : 7.0f) << i << "," << j << " k=" << k;
        }
      }
    }
  }
  std::vector<float> a(64 * 64), b(64 * 64), c(64 * 64);
  const GemmF32Args other{13, lanes + 4, 2, 1.0f, a.data(), 2, b.data(), 64, 0.0f, c.data(), 64};
  EXPECT_EQ(plan->Run(other).code(), absl::StatusCode::kInvalidArgument);
}

TEST(GemmF32SmallPlan, RefusesABlockWithoutAKernelAndAnEmptyShape) {
  const int lanes = GemmF32VectorLanes();
  EXPECT_EQ(GemmF32SmallPlan::Make(8, 8, {5, lanes, SmallSplit::kNone}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(GemmF32SmallPlan::Make(8, 8, {4, lanes + 1, SmallSplit::kNone}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(GemmF32SmallPlan::Make(0, 8, {4, lanes, SmallSplit::kNone}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(GemmF32SmallPlan::Make(8, 0, {4, lanes, SmallSplit::kNone}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// The plan of the GEMM as a whole: the small path's tiles resolved, the blocked path's blocking
// kept; both run as GemmF32 does, and only the unsplit small path stays on the calling thread.
TEST(GemmF32Plan, RunsBothPathsAndSaysWhichStayOnTheCallingThread) {
  GemmF32Blocking small;
  small.path = GemmF32Path::kSmall;
  small.mr = 4, small.nr = GemmF32VectorLanes();
  GemmF32Blocking split = small;
  split.split_small = true;
  const GemmF32Blocking blocked = DefaultBlocking();
  EXPECT_TRUE(RunsOnCallingThread(small));
  EXPECT_FALSE(RunsOnCallingThread(split));
  EXPECT_FALSE(RunsOnCallingThread(blocked));
  for (const GemmF32Blocking& b : {small, split, blocked}) {
    const int64_t m = 9, n = 21, k = 6;
    absl::StatusOr<GemmF32Plan> plan = GemmF32Plan::Make(b, m, n);
    ASSERT_TRUE(plan.ok()) << plan.status();
    std::vector<float> a(size_t(m * k), 1.0f), bm(size_t(k * n), 1.0f), c(size_t(m * n)),
        bias(size_t(n), -10.0f);
    const GemmF32Args args{m,
                           n,
                           k,
                           1.0f,
                           a.data(),
                           k,
                           bm.data(),
                           n,
                           0.0f,
                           c.data(),
                           n,
                           bias.data(),
                           GemmEpilogue::kBiasRelu};
    absl::Status status;
    Executor executor(2);
    executor.Execute([&] { status = plan->Run(args); });
    ASSERT_TRUE(status.ok()) << status;
    for (float x : c) EXPECT_EQ(x, 0.0f);  // 6 - 10, clipped by the ReLU
  }
  EXPECT_FALSE(GemmF32Plan::Make(small, 0, 4).ok());
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
    for (BPacking pack_b :
         {BPacking::kInPlace, BPacking::kAhead, BPacking::kOnFirstUse, BPacking::kPrepared}) {
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
  const GemmF32Args args{2,    2,        2, 1.0f,    a.data(),           2, b.data(), 2,
                         0.0f, c.data(), 2, nullptr, GemmEpilogue::kNone};
  GemmF32Blocking blocking = DefaultBlocking();
  blocking.pack_b = BPacking::kOnFirstUse;
  blocking.parallel = ParallelLoop::kIc;
  const absl::Status status = GemmF32(args, blocking);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("jc"), std::string::npos) << status;
  blocking.parallel = ParallelLoop::kJc;
  EXPECT_TRUE(GemmF32(args, blocking).ok());
}

// Prepared B is read at the offsets of every KC slice and column block, whatever NC and the
// threads make of the columns: a decode shape over several slices and blocks, on one thread and
// two, each loop split, with K and N off the blocks.
TEST(GemmF32, PreparedBUnderEveryColumnBlockAndSplit) {
  for (ParallelLoop loop : {ParallelLoop::kIc, ParallelLoop::kJc}) {
    for (int threads : {1, 2}) {
      GemmF32Blocking b = DefaultBlocking();
      b.pack_b = BPacking::kPrepared;
      b.pack_a = false;
      b.parallel = loop;
      b.kc = 48;
      b.nc = b.nr * 3;
      EXPECT_EQ(
          CountWrong({8, 11 * b.nr + 5, 1000}, b, GemmEpilogue::kBias, 1.0f, 0.0f, 3, threads, 13),
          0)
          << "threads=" << threads << " jc=" << (loop == ParallelLoop::kJc);
    }
  }
}

// The prepared layout is KC slice after slice of padded NR panels, whatever B's stride; its
// bad inputs are errors, and a call refuses prepared B off a 64-byte boundary.
TEST(GemmF32, PreparedBLayoutAndItsErrors) {
  GemmF32Blocking b = DefaultBlocking();
  b.kc = 2;
  b.nr = 16;
  const int64_t k = 3, n = 17, ldb = 20;
  std::vector<float> source(size_t(k * ldb));
  for (size_t i = 0; i < source.size(); ++i) source[i] = float(i);
  ASSERT_EQ(PreparedBFloats(k, n, b), size_t(3 * 32));
  std::vector<float> packed(PreparedBFloats(k, n, b), -1.0f);
  ASSERT_TRUE(PackPreparedB(source.data(), k, n, ldb, b, packed.data()).ok());
  // Slice 0 (rows 0-1): panel 0 (columns 0-15) k-major, then panel 1 (column 16, zero-padded).
  EXPECT_EQ(packed[0], 0.0f);    // B[0][0]
  EXPECT_EQ(packed[15], 15.0f);  // B[0][15]
  EXPECT_EQ(packed[16], 20.0f);  // B[1][0]
  EXPECT_EQ(packed[32], 16.0f);  // panel 1: B[0][16]
  EXPECT_EQ(packed[33], 0.0f);   // past N
  EXPECT_EQ(packed[48], 36.0f);  // B[1][16]
  EXPECT_EQ(packed[64], 40.0f);  // slice 1 (row 2): B[2][0]
  EXPECT_EQ(packed[80], 56.0f);  // B[2][16]
  EXPECT_EQ(packed[95], 0.0f);
  EXPECT_FALSE(PackPreparedB(source.data(), k, n, n - 1, b, packed.data()).ok());
  EXPECT_FALSE(PackPreparedB(source.data(), 0, n, ldb, b, packed.data()).ok());

  auto aligned = hwy::AllocateAligned<float>(64);
  std::vector<float> a(4), c(4);
  GemmF32Blocking prepared = DefaultBlocking();
  prepared.pack_b = BPacking::kPrepared;
  GemmF32Args args{2,    2,        2, 1.0f,    a.data(),           2, aligned.get() + 1, 0,
                   0.0f, c.data(), 2, nullptr, GemmEpilogue::kNone};
  const absl::Status status = GemmF32(args, prepared);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
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
                         a[3] = nan;            // row 0 of C becomes NaN
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

}  // namespace
}  // namespace rooftune::kernels

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
            expected[i * ldc + j] =
                float(alpha * sum + (beta == 0 ? 0.0 : beta * double(c[i * ldc + j])));
          }
        }
        kernels::TiledGemmF32(a.data(), lda, b.data(), ldb, c.data(), ldc, m, n, k, tile, alpha,
                              beta);
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
