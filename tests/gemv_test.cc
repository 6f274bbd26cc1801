// GEMV kernels (f32 weights, s8 weights with row scales, and the integer u8 x s8 dot product) on
// every Highway target against the reference,
// and the quantisation utilities' accuracy on decode-shape weights.
#include "kernels/gemv/gemv.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <random>
#include <set>

#include "absl/strings/str_cat.h"
#include "framework/harness.h"
#include "framework/kernel.h"
#include "framework/reference.h"
#include "framework/tuner.h"
#include "hwy/targets.h"
#include "kernels/code_paths.h"
#include "kernels/gemv/row_groups.h"
#include "kernels/quantize.h"
#include "kernels/workspace.h"

namespace rooftune {
namespace {

class GemvEveryTarget : public ::testing::TestWithParam<int64_t> {
 protected:
  void SetUp() override { hwy::SetSupportedTargetsForTest(GetParam()); }
  void TearDown() override { hwy::SetSupportedTargetsForTest(0); }
};

TEST_P(GemvEveryTarget, BothWeightFormatsOnAwkwardShapes) {
  kernels::RecordCodePaths(true);
  for (const char* name : {"gemv_f32", "gemv_s8", "gemv_u8s8"}) {
    const Kernel* kernel = KernelRegistry::Global().Find(name);
    ASSERT_NE(kernel, nullptr);
    const Dtype dtype = kernel->dtypes.front();
    struct Shape {
      int64_t n, k;
    };
#ifdef ROOFTUNE_REPRESENTATIVE_SHAPES
    // The ThreadSanitizer build: one shape with ragged row groups and a vector tail, every config.
    const std::vector<Shape> shapes = {{101, 257}};
#else
    const std::vector<Shape> shapes = {{1, 1},  {7, 13},    {1, 4097},
                                       {33, 1}, {101, 257}, {64, 20000}};
#endif
    // The prefetch parameters move no element of the result, only how far ahead rows are
    // touched: each case runs every other parameter's combinations with one prefetch setting,
    // the settings taking turns (the last case runs those left when the cases are fewer), so
    // that each meets the shapes, epilogues and thread counts, at a seventh of the cost.
    const std::vector<Config> configs = kernel->params.Enumerate();
    std::map<std::pair<int64_t, int64_t>, int> prefetch_turn;
    auto prefetch_of = [](const Config& c) {
      return std::pair{c.Get("PF"), c.Has("PFL") ? c.Get("PFL") : 0};
    };
    for (const Config& config : configs) prefetch_turn.emplace(prefetch_of(config), 0);
    int turn = 0;
    for (auto& [setting, index] : prefetch_turn) index = turn++;
    const int settings = int(prefetch_turn.size());
    const int cases = int(shapes.size() * kAllEpilogues.size()) * 2;
    int case_index = 0;
    for (const Shape& s : shapes) {
      for (Epilogue e : kAllEpilogues) {
        const Workload w{Op::kGemv, 1, s.n, s.k, dtype, e};
        absl::StatusOr<Problem> problem = Problem::Create(w, uint64_t(s.n * 31 + s.k));
        ASSERT_TRUE(problem.ok());
        const ReferenceOutput reference = ComputeReference(*problem);
        for (int threads : {1, 2}) {
          Executor executor(threads);
          const int this_case = case_index++;
          for (const Config& config : configs) {
            const int turn = prefetch_turn.at(prefetch_of(config));
            if (turn != this_case % settings && !(this_case == cases - 1 && turn >= cases))
              continue;
            absl::StatusOr<Validation> v =
                ValidateConfig(*kernel, config, *problem, reference, executor);
            ASSERT_TRUE(v.ok()) << v.status();
            EXPECT_TRUE(v->ok) << name << " " << w.Key() << " " << config.ToString() << ": "
                               << v->Summary();
          }
        }
      }
    }
  }
  // Every layout and grouping of every format ran on this target: none fell back.
  const std::set<std::string> ran = kernels::RecordedCodePaths();
  kernels::RecordCodePaths(false);
  const std::string target = hwy::TargetName(GetParam());
  for (const char* format : {"gemv_f32 ", "gemv_s8f32 ", "gemv_u8s8 "}) {
    for (const char* layout :
         {" grouped neighbours", " row-major neighbours", " row-major spread"}) {
      const std::string prefix = absl::StrCat(format, target, layout);
      const bool found = std::any_of(ran.begin(), ran.end(),
                                     [&](const std::string& p) { return p.rfind(prefix, 0) == 0; });
      EXPECT_TRUE(found) << prefix;
    }
  }
  for (const char* dot : {" fastest", " s16_pairs"}) {
    const std::string path = absl::StrCat("gemv_u8s8 ", target, " row-major spread", dot);
    EXPECT_EQ(ran.count(path), 1u) << path;
  }
}

INSTANTIATE_TEST_SUITE_P(Gemv, GemvEveryTarget,
                         ::testing::ValuesIn(hwy::SupportedAndGeneratedTargets()),
                         [](const auto& info) { return std::string(hwy::TargetName(info.param)); });

// The tuner driving a built-in kernel on two threads (one where the machine has one CPU): more
// than one candidate validated against the reference, none of them wrong, the one kept correct.
TEST(Gemv, TunesOnTwoThreadsAndKeepsACorrectConfig) {
  const Kernel* kernel = KernelRegistry::Global().Find("gemv_f32");
  ASSERT_NE(kernel, nullptr);
  absl::StatusOr<Problem> problem =
      Problem::Create({Op::kGemv, 1, 97, 301, Dtype::kF32, Epilogue::kBiasRelu});
  ASSERT_TRUE(problem.ok());
  Executor executor(std::min<int>(2, int(AllowedCpus().size())));
  TuneOptions options;
  options.budget_seconds = 2;
  options.timing = {.min_seconds = 0.0005, .min_repetitions = 1};
  absl::StatusOr<TuneOutcome> outcome =
      Tune(*kernel, MachineProfile(), *problem, ComputeReference(*problem), executor, options);
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  EXPECT_GT(outcome->configs_tried, 1);
  EXPECT_EQ(outcome->configs_rejected, 0) << "a built-in config failed validation";
  EXPECT_TRUE(outcome->best.validation.ok) << outcome->best.validation.Summary();
}

TEST(Gemv, ExtremeWeightsAndRejectedArguments) {
  const int64_t n = 8, k = 5000;
  std::vector<int8_t> w(n * k, -128);
  std::vector<float> x(k, 1.0f), y(n), scale(n, 0.5f);
  kernels::GemvArgs g;
  g.n = n, g.k = k, g.w = w.data(), g.ldw = k, g.x = x.data(), g.y = y.data(),
  g.row_scale = scale.data();
  ASSERT_TRUE(kernels::GemvS8F32(g, {4, 4}).ok());
  for (float v : y) EXPECT_EQ(v, -128.0f * k * 0.5f);
  g.row_scale = nullptr;
  EXPECT_FALSE(kernels::GemvS8F32(g, {4, 4}).ok());
  g.ldw = k - 1;
  EXPECT_FALSE(kernels::GemvF32(g, {4, 4}).ok());
  g.ldw = k;
  EXPECT_FALSE(kernels::GemvF32(g, {4, 3}).ok());
  EXPECT_FALSE(kernels::GemvF32(g, {4, 32}).ok());
  EXPECT_FALSE(kernels::GemvF32(g, {4, 4, -1}).ok());
  EXPECT_FALSE(kernels::GemvF32(g, {4, 4, 0, true, false, true}).ok());  // packed groups spread
}

// The packed layout, element by element: in each group of rows read together, a 64-byte line of
// every row in turn, then each row's partial last line; groups stay where their rows were.
TEST(Gemv, PackedWeightsInterleaveEachGroupLineByLine) {
  const int64_t n = 7, k = 20, ldw = 23;  // 16 f32 per line: one whole line and 4 more per row
  std::vector<float> w(n * ldw);
  for (int64_t r = 0; r < n; ++r) {
    for (int64_t j = 0; j < ldw; ++j) w[r * ldw + j] = float(r * 100 + j);
  }
  std::vector<float> packed(n * k, -1.0f);
  // Tasks of 5 rows: [0, 5) as 4 + 1, [5, 7) as 2.
  ASSERT_TRUE(kernels::PackGemvWeights(w.data(), n, k, ldw, 4, {5, 4}, packed.data()).ok());
  auto at = [&](int64_t r, int64_t j) { return float(r * 100 + j); };
  for (int64_t r = 0; r < 4; ++r) {  // the group of 4 from row 0
    for (int64_t j = 0; j < 16; ++j) EXPECT_EQ(packed[r * 16 + j], at(r, j)) << r << " " << j;
    for (int64_t j = 16; j < 20; ++j)
      EXPECT_EQ(packed[64 + r * 4 + j - 16], at(r, j)) << r << " " << j;
  }
  for (int64_t j = 0; j < k; ++j) EXPECT_EQ(packed[4 * k + j], at(4, j));  // a group of 1: its row
  for (int64_t r = 5; r < 7; ++r) {  // the group of 2 from row 5
    for (int64_t j = 0; j < 16; ++j) EXPECT_EQ(packed[5 * k + (r - 5) * 16 + j], at(r, j));
    for (int64_t j = 16; j < 20; ++j)
      EXPECT_EQ(packed[5 * k + 32 + (r - 5) * 4 + j - 16], at(r, j));
  }
  EXPECT_FALSE(kernels::PackGemvWeights(w.data(), n, k, k - 1, 4, {5, 4}, packed.data()).ok());
  EXPECT_FALSE(kernels::PackGemvWeights(w.data(), n, k, ldw, 2, {5, 4}, packed.data()).ok());
  EXPECT_FALSE(kernels::PackGemvWeights(w.data(), n, k, ldw, 4, {5, 3}, packed.data()).ok());
}

// Weights copied to outlive the caller's: each row's k elements, at the copy's own stride (the
// source's, as the GEMV's copied layout keeps it, or packed tight, as the API's copy of B).
TEST(Gemv, CopiedRowsKeepTheirElementsAtTheCopysStride) {
  const size_t rows = 5, k = 7, ldw = 11;
  std::vector<float> w(rows * ldw);
  for (size_t i = 0; i < w.size(); ++i) w[i] = float(i);
  for (size_t stride : {ldw, k}) {
    std::shared_ptr<void> copy = kernels::CopyRowsOnHugePages(
        w.data(), rows, k * sizeof(float), ldw * sizeof(float), stride * sizeof(float));
    ASSERT_NE(copy, nullptr);
    const float* c = static_cast<const float*>(copy.get());
    for (size_t r = 0; r < rows; ++r) {
      for (size_t j = 0; j < k; ++j) EXPECT_EQ(c[r * stride + j], w[r * ldw + j]) << r << " " << j;
    }
  }
  EXPECT_EQ(kernels::CopyRowsOnHugePages(w.data(), 0, 4, 4, 4), nullptr);
}

// Every row of a task falls in exactly one group, neighbouring rows or spread ones, the largest
// groups first; spread groups take rows G apart (G groups of the largest size) and each of their
// rows' streams goes on into the next row of W.
TEST(Gemv, GroupsCoverEveryRowOnce) {
  for (bool spread : {false, true}) {
    for (int together : {1, 2, 4, 8, 16}) {
      for (int64_t rows : {1, 3, 8, 27, 64, 100}) {
        const int64_t begin = 5, end = begin + rows;
        std::vector<int> seen(size_t(end), 0);
        int64_t largest = 0;
        kernels::ForEachGroupIn(begin, end, together, spread, [&](const kernels::GroupRows& g) {
          EXPECT_LE(g.size, together);
          if (largest == 0) largest = g.size;
          for (int64_t r = 0; r < g.size; ++r) ++seen[size_t(g.first + r * g.row_step)];
          if (spread && g.size == largest && rows / largest > 1) {
            EXPECT_EQ(g.row_step, rows / largest);
            EXPECT_EQ(g.stream_step, 1);
          } else if (!spread) {
            EXPECT_EQ(g.row_step, 1);
            EXPECT_EQ(g.stream_step, g.size);
          }
        });
        for (int64_t r = 0; r < end; ++r) {
          EXPECT_EQ(seen[size_t(r)], r >= begin ? 1 : 0)
              << spread << " " << together << " " << rows;
        }
      }
    }
  }
}

// A software prefetch `ahead` elements on through an in-place row lands where that row's stream
// goes next: along the row, then (neighbouring groups) row r of the next group, never in another
// row of this group, or (spread groups) the next row of W.
TEST(Gemv, InPlacePrefetchRunsOnWhereTheRowsStreamGoes) {
  const size_t R = 4, K = 10, ldw = 12;
  auto neighbours = [&](size_t r, size_t col, size_t ahead) {
    return kernels::InPlaceAheadOffset(K, ldw, 1, R, r, col, ahead);
  };
  EXPECT_EQ(neighbours(1, 2, 5), 1 * ldw + 7);    // along row 1
  EXPECT_EQ(neighbours(1, 8, 5), 5 * ldw + 3);    // row 1 of group 1
  EXPECT_EQ(neighbours(3, 9, 1), 7 * ldw + 0);    // row 3 of group 1
  EXPECT_EQ(neighbours(0, 4, 26), 12 * ldw + 0);  // two groups on
  for (size_t r = 0; r < R; ++r) {
    for (size_t col = 0; col < K; ++col) {
      for (size_t ahead = 0; ahead < 3 * K; ++ahead) {
        const size_t at = neighbours(r, col, ahead);
        EXPECT_EQ(at / ldw % R, r) << r << " " << col << " " << ahead;  // the same row of a group
        EXPECT_EQ(at / ldw / R * K + at % ldw, col + ahead) << r << " " << col << " " << ahead;
      }
    }
  }
  const size_t G = 6;  // spread: the group's rows 6 apart, each stream through consecutive rows
  auto spread = [&](size_t r, size_t col, size_t ahead) {
    return kernels::InPlaceAheadOffset(K, ldw, G, 1, r, col, ahead);
  };
  EXPECT_EQ(spread(1, 2, 5), 6 * ldw + 7);    // along row 6, the group's second
  EXPECT_EQ(spread(1, 8, 5), 7 * ldw + 3);    // on into row 7
  EXPECT_EQ(spread(3, 4, 16), 20 * ldw + 0);  // two rows on from row 18
}

// The initial config reads as many rows together as the target's registers hold accumulators
// for: 16 with AVX-512's 32 registers, 4 with AVX2's 16; two where s8 weights are converted to
// f32 in registers or dotted with u8 and stream from memory (no cache is known here), the
// converted ones prefetched a page ahead.
TEST(Gemv, InitialConfigReadsTheRowsTheRegistersHold) {
  const Kernel* kernel = KernelRegistry::Global().Find("gemv_f32");
  ASSERT_NE(kernel, nullptr);
  const Kernel* dot = KernelRegistry::Global().Find("gemv_u8s8");
  ASSERT_NE(dot, nullptr);
  for (int64_t target : hwy::SupportedAndGeneratedTargets()) {
    hwy::SetSupportedTargetsForTest(target);
    const int fit = kernels::GemvRowsTogetherThatFit();
    if (target == HWY_AVX2) EXPECT_EQ(fit, 4);
    if (target == HWY_AVX3 || target == HWY_AVX3_DL) EXPECT_EQ(fit, 16);
    const Config c = kernel->InitialConfig({Op::kGemv, 1, 8192, 8192, Dtype::kF32, Epilogue::kBias},
                                           1, CacheMode::kWarm, MachineProfile());
    EXPECT_EQ(c.Get("TOGETHER"), fit) << hwy::TargetName(target);
    EXPECT_EQ(c.Get("PACKW"), 2);   // W copied once onto huge pages, rows kept as separate streams
    EXPECT_EQ(c.Get("SPREAD"), 1);  // each stream on through consecutive rows
    const Config dotted =
        dot->InitialConfig({Op::kGemv, 1, 8192, 8192, Dtype::kU8S8, Epilogue::kBias}, 1,
                           CacheMode::kWarm, MachineProfile());
    EXPECT_EQ(dotted.Get("DOT"), 0);  // the CPU's fastest dot product first
    EXPECT_EQ(dotted.Get("TOGETHER"), std::min(fit, 2)) << hwy::TargetName(target);
    EXPECT_EQ(dotted.Get("PF"), 512) << hwy::TargetName(target);
    // s8 weights converted to f32 in registers: two rows, each fetched a page ahead.
    const Kernel* s8 = KernelRegistry::Global().Find("gemv_s8");
    ASSERT_NE(s8, nullptr);
    const Config converting =
        s8->InitialConfig({Op::kGemv, 1, 8192, 8192, Dtype::kS8F32, Epilogue::kNone}, 1,
                          CacheMode::kWarm, MachineProfile());
    EXPECT_EQ(converting.Get("TOGETHER"), 2) << hwy::TargetName(target);
    EXPECT_EQ(converting.Get("PF"), 4096) << hwy::TargetName(target);
    EXPECT_EQ(c.Get("PF"), 512) << hwy::TargetName(target);  // no reader measured: a few lines
  }
  hwy::SetSupportedTargetsForTest(0);
}

// With a measured one-thread DRAM reader, each thread's rows stream as it did: as many rows at
// once as it had streams (never more than the registers hold; f32 weights at least four) and
// prefetched in software only if it was, a page ahead. Every thread count takes the one-thread
// reader (the core's own).
TEST(Gemv, InitialConfigStreamsAsTheFastestDramReader) {
  MachineProfile profile;
  auto dram_read = [](int threads, Reader reader) {
    Ceiling c{Ceiling::Kind::kBandwidth, Dtype::kF32, MemoryLevel::kDram, threads, 40e9, "read"};
    c.reader = reader;
    return c;
  };
  profile.ceilings = {dram_read(1, Reader{2, false, true}), dram_read(2, Reader{8, false, false})};
  const int fit = kernels::GemvRowsTogetherThatFit();
  for (const char* name : {"gemv_f32", "gemv_s8", "gemv_u8s8"}) {
    const Kernel* kernel = KernelRegistry::Global().Find(name);
    ASSERT_NE(kernel, nullptr);
    const Workload w{Op::kGemv, 1, 8192, 8192, kernel->dtypes[0], Epilogue::kNone};
    for (int threads : {1, 2}) {
      const Config c = kernel->InitialConfig(w, threads, CacheMode::kWarm, profile);
      EXPECT_EQ(c.Get("TOGETHER"), std::min(fit, w.dtype == Dtype::kF32 ? 4 : 2)) << name;
      EXPECT_EQ(c.Get("PF"), 4096) << name;
      EXPECT_EQ(c.Get("PFL"), 1) << name;
    }
  }
  // Eight streams without software prefetch: f32 weights stream so. s8 weights converted in
  // registers stream from memory two rows at a time, each fetched a page ahead, and u8 x s8
  // dot products two rows at a time as the reader fetched; a W that a cache holds keeps the
  // reader's rule, at most 8 rows converting.
  profile.ceilings = {dram_read(1, Reader{8, true, false})};
  profile.caches = {CacheLevel{3, "Unified", uint64_t(32) << 20}};
  for (const char* name : {"gemv_f32", "gemv_s8", "gemv_u8s8"}) {
    const Kernel* kernel = KernelRegistry::Global().Find(name);
    ASSERT_NE(kernel, nullptr);
    const Dtype dtype = kernel->dtypes[0];
    for (int64_t n : {4096, 8192}) {  // W of 32 MiB (held by the cache) and 64 MiB (not) in int8
      const Config c = kernel->InitialConfig({Op::kGemv, 1, n, 8192, dtype, Epilogue::kNone}, 1,
                                             CacheMode::kWarm, profile);
      const bool from_memory = dtype != Dtype::kF32 && n == 8192;
      EXPECT_EQ(c.Get("TOGETHER"), from_memory ? 2 : std::min(fit, 8)) << name << " " << n;
      EXPECT_EQ(c.Get("PF"), from_memory && dtype == Dtype::kS8F32 ? 4096 : 0) << name << " " << n;
      // Timed cold, W streams from memory on every call, however large the caches.
      const Config cold = kernel->InitialConfig({Op::kGemv, 1, n, 8192, dtype, Epilogue::kNone}, 1,
                                                CacheMode::kCold, profile);
      const bool int8 = dtype != Dtype::kF32;
      EXPECT_EQ(cold.Get("TOGETHER"), int8 ? 2 : std::min(fit, 8)) << name << " " << n;
      EXPECT_EQ(cold.Get("PF"), dtype == Dtype::kS8F32 ? 4096 : 0) << name << " " << n;
    }
  }
  // One stream, fetched into L2 with a dot product beside it, the fastest reader: it is a GEMV
  // of one row, and f32 weights and u8 x s8 dot products go one row at a time, fetched as it
  // fetched; s8 weights converted to f32 two rows from memory, as on every reader measured (one
  // row at a time ran them 1.3-1.8x slower).
  profile.ceilings = {dram_read(1, Reader{1, false, true, true, true})};
  for (const char* name : {"gemv_f32", "gemv_s8", "gemv_u8s8"}) {
    const Kernel* kernel = KernelRegistry::Global().Find(name);
    const Dtype dtype = kernel->dtypes[0];
    const Config cold = kernel->InitialConfig({Op::kGemv, 1, 8192, 8192, dtype, Epilogue::kNone}, 1,
                                              CacheMode::kCold, profile);
    EXPECT_EQ(cold.Get("TOGETHER"), dtype == Dtype::kS8F32 ? std::min(fit, 2) : 1) << name;
    EXPECT_EQ(cold.Get("PF"), 4096) << name;
    EXPECT_EQ(cold.Get("PFL"), dtype == Dtype::kS8F32 ? 1 : 2) << name;
  }
  // The same reader of two rows without the dot product is plain: f32 weights four rows at once.
  profile.ceilings = {dram_read(1, Reader{2, false, true, true, false})};
  const Kernel* f32 = KernelRegistry::Global().Find("gemv_f32");
  EXPECT_EQ(f32->InitialConfig({Op::kGemv, 1, 8192, 8192, Dtype::kF32, Epilogue::kNone}, 1,
                               CacheMode::kCold, profile)
                .Get("TOGETHER"),
            std::min(fit, 4));
}

// A W that a cache holds, timed warm, is no stream from DRAM: eight rows at once (fewer where
// the registers hold fewer) and no software prefetch, whichever reader was fastest from DRAM.
// The same W timed cold, and a W larger than every cache, stream as that reader did.
TEST(Gemv, InitialConfigOfAWeightMatrixACacheHoldsPrefetchesNothing) {
  MachineProfile profile;
  Ceiling dram{Ceiling::Kind::kBandwidth, Dtype::kF32, MemoryLevel::kDram, 1, 20e9, "read"};
  dram.reader = Reader{1, false, true, true, true};  // one stream, into L2 a page ahead, dotted
  profile.ceilings = {dram};
  profile.caches = {CacheLevel{3, "Unified", uint64_t(32) << 20}};
  const int64_t fit = kernels::GemvRowsTogetherThatFit();
  for (const char* name : {"gemv_f32", "gemv_s8", "gemv_u8s8"}) {
    const Kernel* kernel = KernelRegistry::Global().Find(name);
    ASSERT_NE(kernel, nullptr);
    const Dtype dtype = kernel->dtypes[0];
    const Workload held{Op::kGemv, 1, 2048, 2048, dtype, Epilogue::kNone};  // 4 or 16 MiB
    for (int threads : {1, 2}) {
      const Config warm = kernel->InitialConfig(held, threads, CacheMode::kWarm, profile);
      EXPECT_EQ(warm.Get("TOGETHER"), std::min<int64_t>(fit, 8)) << name << " " << threads;
      EXPECT_EQ(warm.Get("PF"), 0) << name << " " << threads;
    }
    const Config cold = kernel->InitialConfig(held, 1, CacheMode::kCold, profile);
    const Workload larger{Op::kGemv, 1, 16384, 8192, dtype, Epilogue::kNone};  // 128 or 512 MiB
    const Config streamed = kernel->InitialConfig(larger, 1, CacheMode::kWarm, profile);
    for (const Config& c : {cold, streamed}) {
      EXPECT_EQ(c.Get("PF"), 4096) << name;
      EXPECT_EQ(c.Get("TOGETHER"), dtype == Dtype::kS8F32 ? std::min<int64_t>(fit, 2) : 1) << name;
    }
  }
}

// A config that reads prepared weights, run without its prepare step, is refused: a packed one
// would read row-major weights as packed. The copy (PACKW=2) holds W's bytes unchanged.
TEST(Gemv, PreparedConfigWithoutPreparedWeightsIsRefused) {
  for (const char* name : {"gemv_f32", "gemv_s8", "gemv_u8s8"}) {
    const Kernel* kernel = KernelRegistry::Global().Find(name);
    ASSERT_NE(kernel, nullptr);
    absl::StatusOr<Problem> problem =
        Problem::Create({Op::kGemv, 1, 40, 70, kernel->dtypes.front(), Epilogue::kNone});
    ASSERT_TRUE(problem.ok());
    for (const char* packing : {"PACKW=1", "PACKW=2"}) {
      absl::StatusOr<Config> config = kernel->params.Parse(packing, kernel->params.FirstValid());
      ASSERT_TRUE(config.ok()) << config.status();
      Executor executor(1);
      EXPECT_EQ(executor.Run(*kernel, *config, *problem).code(),
                absl::StatusCode::kFailedPrecondition)
          << name << " " << packing;
      // A call that brings its own W runs the same config with W read where it lies.
      const Config from_call =
          kernel->WithWeightsFromTheCall(*config, problem->workload, 1, MachineProfile());
      EXPECT_EQ(from_call.Get("PACKW"), 0) << name << " " << packing;
      EXPECT_EQ(from_call.Get("ROWS"), config->Get("ROWS")) << name << " " << packing;
      EXPECT_TRUE(executor.Run(*kernel, from_call, *problem).ok()) << name << " " << packing;
      EXPECT_EQ(kernel->WithWeightsFromTheCall(from_call, problem->workload, 1, MachineProfile()),
                from_call);
      absl::StatusOr<Prepared> prepared = Prepare(*kernel, *config, *problem);
      ASSERT_TRUE(prepared.ok() && prepared->object != nullptr) << name << " " << packing;
      EXPECT_TRUE(executor.Run(*kernel, *config, *problem, prepared->object.get()).ok())
          << name << " " << packing;
      // Cold timing evicts the copy the kernel streams, all of it.
      const bool f32 = kernel->dtypes.front() == Dtype::kF32;
      const size_t bytes = size_t(problem->workload.n * problem->ldb) * (f32 ? 4 : 1);
      ASSERT_EQ(prepared->streamed.size(), 1u) << name;
      EXPECT_EQ(static_cast<const void*>(prepared->streamed[0].data()), prepared->object.get());
      EXPECT_GE(prepared->streamed[0].size(), bytes) << name;
      if (config->Get("PACKW") == 2) {
        const void* w = f32 ? static_cast<const void*>(problem->b.data())
                            : static_cast<const void*>(problem->b_s8.data());
        EXPECT_EQ(std::memcmp(prepared->object.get(), w, bytes), 0) << name;
      }
    }
  }
}

TEST(Gemv, IntegerDotIsExactAtTheExtremes) {
  const int64_t n = 27, k = 20001;  // 16 + 8 + 2 + 1 rows, odd K: every row group and the tail run
  std::vector<int8_t> w(n * k, -128);
  std::vector<uint8_t> x(k, 255);
  std::vector<int32_t> acc(n);
  kernels::GemvU8S8Args g;
  g.n = n, g.k = k, g.w = w.data(), g.ldw = k, g.x = x.data(), g.acc = acc.data();
  std::vector<int8_t> packed(n * k);
  for (int64_t target : hwy::SupportedAndGeneratedTargets()) {
    hwy::SetSupportedTargetsForTest(target);
    for (int together : {1, 2, 4, 8, 16}) {
      // Neighbouring groups in place, packed, spread in place; then spread with the widening dot
      // product where VNNI would have served.
      for (int layout : {0, 1, 2, 3}) {
        const bool pack = layout == 1;
        const kernels::GemvBlocking blocking{32,    together,    256,        pack,
                                             false, layout >= 2, layout == 3};
        if (pack) {
          ASSERT_TRUE(kernels::PackGemvWeights(w.data(), n, k, k, 1, blocking, packed.data()).ok());
        }
        g.w = pack ? packed.data() : w.data();
        std::fill(acc.begin(), acc.end(), 0);
        ASSERT_TRUE(kernels::GemvU8S8(g, blocking).ok());
        for (int32_t v : acc) {
          EXPECT_EQ(v, -128 * 255 * k)
              << hwy::TargetName(target) << " " << together << " " << layout;
        }
      }
    }
  }
  g.w = w.data();
  hwy::SetSupportedTargetsForTest(0);
  EXPECT_FALSE(kernels::GemvU8S8(g, {4, 3}).ok());
  g.acc = nullptr;
  EXPECT_FALSE(kernels::GemvU8S8(g, {1, 1}).ok());
}

TEST(Quantize, SymmetricWeightsAndAsymmetricActivations) {
  const float w[] = {-1.0f, 0.5f, 0.0f, 0.25f, 2.0f, -4.0f};
  int8_t q[6];
  float scales[2];
  kernels::QuantizeRowsSymmetricS8(w, 2, 3, 3, q, scales);
  EXPECT_FLOAT_EQ(scales[0], 1.0f / 127);
  EXPECT_EQ(q[0], -127);
  EXPECT_EQ(q[2], 0);  // zero stays exactly zero
  EXPECT_EQ(q[5], -127);
  EXPECT_FLOAT_EQ(scales[1], 4.0f / 127);

  const float x[] = {-1.0f, 0.0f, 3.0f};
  uint8_t qx[3];
  const kernels::ActivationQuantization a = kernels::QuantizeAsymmetricU8(x, 3, qx);
  EXPECT_EQ(qx[0], 0);
  EXPECT_EQ(qx[2], 255);
  EXPECT_EQ(int(qx[1]), a.zero_point);  // zero is exact
  const kernels::ActivationQuantization seven = kernels::QuantizeAsymmetricU8(x, 3, qx, true);
  EXPECT_EQ(qx[2], 127);
  EXPECT_NEAR(seven.scale, 4.0f / 127, 1e-6);
}

TEST(Quantize, DecodeShapeGemvKeepsCosineSimilarityAboveTheBar) {
  // 2048 x 2048 weights and activations with normal data, as in a decode step.
  const int64_t n = 2048, k = 2048;
  std::mt19937 rng(3);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> w(n * k), x(k), y(n), yq(n), scales(n);
  for (float& v : w) v = normal(rng);
  for (float& v : x) v = normal(rng);
  std::vector<int8_t> q(n * k);
  kernels::QuantizeRowsSymmetricS8(w.data(), n, k, k, q.data(), scales.data());
  kernels::GemvArgs g;
  g.n = n, g.k = k, g.ldw = k, g.x = x.data();
  g.w = w.data(), g.y = y.data();
  ASSERT_TRUE(kernels::GemvF32(g, {64, 4}).ok());
  g.w = q.data(), g.y = yq.data(), g.row_scale = scales.data();
  ASSERT_TRUE(kernels::GemvS8F32(g, {64, 4}).ok());
  const kernels::Accuracy a = kernels::CompareToReference(yq.data(), y.data(), n);
  EXPECT_GE(a.cosine_similarity, 0.9999);
  EXPECT_LT(a.max_relative_error, 0.05);
  EXPECT_DOUBLE_EQ(kernels::CompareToReference(y.data(), y.data(), n).cosine_similarity, 1.0);
}

}  // namespace
}  // namespace rooftune
