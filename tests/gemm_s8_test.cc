// The int8 GEMM on every Highway target and both arithmetic paths: s32 results bit-identical to
// the reference over awkward shapes (1, primes, K not a multiple of 2, 4 or 32, large K), the
// extreme all-255 x all--128 case that saturates vpmaddubsw (refused, never wrong), 7-bit inputs
// that make the fast path exact, and the dequantising epilogue with and without ReLU.
#include "kernels/gemm_s8/gemm_s8.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <random>
#include <set>
#include <tuple>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "framework/harness.h"
#include "framework/kernel.h"
#include "framework/reference.h"
#include "framework/tuner.h"
#include "hwy/targets.h"
#include "kernels/amx.h"
#include "kernels/code_paths.h"
#include "plugins/builtin/gemm_s8_config.h"

namespace rooftune {
namespace {

using kernels::S8Path;

struct Data {
  int64_t m, n, k;
  std::vector<uint8_t> a;
  std::vector<int8_t> b;
};

Data Random(int64_t m, int64_t n, int64_t k, int a_max, int b_lo, int b_hi, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> ua(0, a_max), ub(b_lo, b_hi);
  Data d{m, n, k, std::vector<uint8_t>(m * k), std::vector<int8_t>(k * n)};
  for (uint8_t& v : d.a) v = uint8_t(ua(rng));
  for (int8_t& v : d.b) v = int8_t(ub(rng));
  return d;
}

// Runs the kernel; returns its status and, when it ran, whether s32 output matched exactly.
// `kc` and `nc` block the AMX path (0: all of K, all of N).
absl::StatusOr<bool> MatchesReference(const Data& d, S8Path path, int mr,
                                      kernels::ParallelLoop loop, int kc = 0, int nc = 0) {
  absl::StatusOr<kernels::PackedWeightsS8> w =
      kernels::PackWeightsS8(d.b.data(), d.k, d.n, d.n, path);
  if (!w.ok()) return w.status();
  std::vector<int32_t> got(d.m * d.n, -1), want(d.m * d.n);
  ReferenceGemmU8S8(d.m, d.n, d.k, d.a.data(), d.k, d.b.data(), d.n, want.data(), d.n);
  kernels::GemmS8Args g;
  g.m = d.m, g.n = d.n, g.k = d.k, g.a = d.a.data(), g.lda = d.k, g.b = &*w, g.c = got.data(),
  g.ldc = d.n;
  absl::Status s;
  Executor executor(2);
  executor.Execute([&] { s = kernels::GemmS8(g, {mr, mr * 4, loop, kc, nc}); });
  if (!s.ok()) return s;
  return got == want;
}

struct Shape {
  int64_t m, n, k;
};

// Whether the first "flags" line of /proc/cpuinfo lists `flag`: the kernel's word on the CPU,
// independent of the CPUID reading under test.
bool CpuInfoLists(const std::string& flag) {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (!absl::StartsWith(line, "flags")) continue;
    for (absl::string_view f : absl::StrSplit(line, ' ', absl::SkipEmpty())) {
      if (f == flag) return true;
    }
    return false;
  }
  return false;
}

// Every row block, both loops and K whole or in slices on each shape, each s32 result
// bit-identical to the reference. A 12-deep slice is 3 groups of the fast path and 6 of the exact
// one, so most shapes end in a partial slice. Activations up to `a_max` (127: 7-bit, which every
// target's fast path takes exactly).
void ExpectBitIdenticalOn(const std::vector<Shape>& shapes, S8Path path, int a_max) {
  for (const Shape& s : shapes) {
    const Data d = Random(s.m, s.n, s.k, a_max, -128, 127, uint64_t(s.m * 7 + s.n * 3 + s.k));
    for (int mr : kernels::GemmS8RowBlocks()) {
      for (auto loop : {kernels::ParallelLoop::kIc, kernels::ParallelLoop::kJc}) {
        for (int kc : {0, 12}) {
          absl::StatusOr<bool> ok = MatchesReference(d, path, mr, loop, kc);
          ASSERT_TRUE(ok.ok()) << ok.status();
          EXPECT_TRUE(*ok) << s.m << "x" << s.n << "x" << s.k << " MR=" << mr << " KC=" << kc;
        }
      }
    }
  }
}

class GemmS8EveryTarget : public ::testing::TestWithParam<int64_t> {
 protected:
  void SetUp() override { hwy::SetSupportedTargetsForTest(GetParam()); }
  void TearDown() override { hwy::SetSupportedTargetsForTest(0); }
};

TEST_P(GemmS8EveryTarget, ExactPathIsBitIdenticalEverywhere) {
  kernels::RecordCodePaths(true);
  ExpectBitIdenticalOn({{1, 1, 1},
                        {7, 1, 13},
                        {7, 13, 29},
                        {5, 40, 3},
                        {33, 65, 1},
                        {17, 31, 37},
                        {64, 48, 130},
                        {9, 70, 2050}},
                       S8Path::kExact, 255);
  // The exact micro-kernel of every row block ran on this target, over all of K and in slices:
  // none fell back.
  const std::set<std::string> ran = kernels::RecordedCodePaths();
  kernels::RecordCodePaths(false);
  for (int mr : kernels::GemmS8RowBlocks()) {
    const std::string path =
        absl::StrCat("gemm_s8 ", hwy::TargetName(GetParam()), " exact vpmaddwd MR=", mr);
    const std::string two = kernels::GemmS8SpansTwoPanels(mr) ? " two panels" : "";
    EXPECT_EQ(ran.count(path), 1u) << path;
    EXPECT_EQ(ran.count(path + two + " K sliced"), 1u) << path << two << " K sliced";
  }
}

TEST_P(GemmS8EveryTarget, FastPathIsExactOrRefusedNeverWrong) {
  kernels::RecordCodePaths(true);
  // The worst case: every product 255 x -128, K large, full-range data.
  Data extreme{6, 40, 4096, std::vector<uint8_t>(6 * 4096, 255),
               std::vector<int8_t>(4096 * 40, -128)};
  absl::StatusOr<bool> ok = MatchesReference(extreme, S8Path::kFast, 6, kernels::ParallelLoop::kIc);
  if (kernels::GemmS8FastPathIsVnni()) {
    ASSERT_TRUE(ok.ok()) << ok.status();
    EXPECT_TRUE(*ok) << "vpdpbusd accumulates in s32 and must be exact";
  } else {
    ASSERT_FALSE(ok.ok()) << "vpmaddubsw saturates here; the kernel must refuse, not answer";
    EXPECT_EQ(ok.status().code(), absl::StatusCode::kFailedPrecondition);
  }
  // 7-bit activations (the quantiser can produce them): exact on every target.
  const Data seven = Random(23, 45, 301, 127, -128, 127, 5);
  ok = MatchesReference(seven, S8Path::kFast, 4, kernels::ParallelLoop::kJc);
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_TRUE(*ok);
  // Weights within -64..63 with full-range activations: exact too.
  const Data narrow = Random(23, 45, 301, 255, -64, 63, 6);
  ok = MatchesReference(narrow, S8Path::kFast, 8, kernels::ParallelLoop::kIc);
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_TRUE(*ok);
  // AVX-VNNI gives the AVX2 target vpdpbusd (on ymm) exactly where the CPU has it.
  if (GetParam() == HWY_AVX2) {
    EXPECT_EQ(kernels::GemmS8FastPathIsVnni(), CpuInfoLists("avx_vnni"));
  }
  // The fast path ran with the instruction this target has.
  const std::set<std::string> ran = kernels::RecordedCodePaths();
  kernels::RecordCodePaths(false);
  const std::string path = absl::StrCat(
      "gemm_s8 ", hwy::TargetName(GetParam()),
      kernels::GemmS8FastPathIsVnni() ? " fast vpdpbusd" : " fast vpmaddubsw", " MR=4");
  EXPECT_EQ(ran.count(path), 1u) << path;
}

// The fast path's ways of reading its operands: A's rows where they lie (K a multiple of 4, tiles
// of MR rows) or packed (a partial group of K, the bottom edge), tiles over one panel of B or two
// (where 32 vector registers hold the sums; the odd last panel alone), both loops. 7-bit
// activations keep every target's fast path exact, so each result must be bit-identical; and each
// way must have run.
TEST_P(GemmS8EveryTarget, FastPathReadsAInPlaceAndSpansTwoPanelsExactly) {
  kernels::RecordCodePaths(true);
  ExpectBitIdenticalOn({{1, 1, 4},
                        {13, 97, 64},
                        {7, 33, 28},
                        {5, 160, 12},
                        {12, 64, 3},
                        {30, 250, 1000},
                        {25, 129, 31}},
                       S8Path::kFast, 127);
  const std::set<std::string> ran = kernels::RecordedCodePaths();
  kernels::RecordCodePaths(false);
  auto ran_with = [&](int mr, absl::string_view what) {
    const std::string prefix = absl::StrCat("gemm_s8 ", hwy::TargetName(GetParam()), " fast ");
    const std::string rows = absl::StrCat(" MR=", mr);
    for (const std::string& path : ran) {
      if (absl::StartsWith(path, prefix) && absl::StrContains(path, rows) &&
          absl::StrContains(path, what)) {
        return true;
      }
    }
    return false;
  };
  // AVX-512's 32 registers hold two panels' sums for 4 and 6 rows: a build that lost the
  // two-panel kernels must fail here, not run slower unnoticed.
  if (HWY_ARCH_X86 && GetParam() <= HWY_AVX3) {
    EXPECT_TRUE(kernels::GemmS8SpansTwoPanels(4));
    EXPECT_TRUE(kernels::GemmS8SpansTwoPanels(6));
  }
  for (int mr : kernels::GemmS8RowBlocks()) {
    EXPECT_TRUE(ran_with(mr, " A in place")) << "MR=" << mr;
    EXPECT_TRUE(ran_with(mr, " A in place K sliced")) << "MR=" << mr;
    if (kernels::GemmS8SpansTwoPanels(mr)) EXPECT_TRUE(ran_with(mr, " two panels")) << "MR=" << mr;
  }
}

INSTANTIATE_TEST_SUITE_P(GemmS8, GemmS8EveryTarget,
                         ::testing::ValuesIn(hwy::SupportedAndGeneratedTargets()),
                         [](const auto& info) { return std::string(hwy::TargetName(info.param)); });

// The AMX path: exact on full-range data (TDPBUSD sums in s32), on shapes that leave partial
// 32 x 32 blocks and partial 64-deep tiles, with K in one slice or several (the last one
// partial) and N in one column block or several, and on the extreme case; refused without AMX.
TEST(GemmS8Amx, BitIdenticalOnAwkwardShapesAndExtremes) {
  if (!kernels::AmxInt8Available()) {
    const Data d = Random(4, 4, 4, 255, -128, 127, 1);
    EXPECT_EQ(kernels::PackWeightsS8(d.b.data(), 4, 4, 4, S8Path::kAmx).status().code(),
              absl::StatusCode::kFailedPrecondition);
    GTEST_SKIP() << "no AMX int8 here: the refusal is what can be tested";
  }
  struct Shape {
    int64_t m, n, k;
  };
  for (const Shape& s :
       {Shape{1, 1, 1}, Shape{7, 1, 13}, Shape{7, 13, 29}, Shape{33, 65, 1}, Shape{31, 33, 63},
        Shape{32, 32, 64}, Shape{64, 48, 130}, Shape{97, 70, 2051}}) {
    const Data d = Random(s.m, s.n, s.k, 255, -128, 127, uint64_t(s.m * 13 + s.k));
    struct Blocks {
      int kc, nc;
    };
    for (auto loop : {kernels::ParallelLoop::kIc, kernels::ParallelLoop::kJc}) {
      for (const Blocks& b : {Blocks{0, 0}, Blocks{64, 32}, Blocks{128, 64}, Blocks{100, 50}}) {
        absl::StatusOr<bool> ok = MatchesReference(d, S8Path::kAmx, 8, loop, b.kc, b.nc);
        ASSERT_TRUE(ok.ok()) << ok.status();
        EXPECT_TRUE(*ok) << s.m << "x" << s.n << "x" << s.k << " KC=" << b.kc << " NC=" << b.nc;
      }
    }
  }
  Data extreme{40, 40, 4096, std::vector<uint8_t>(40 * 4096, 255),
               std::vector<int8_t>(4096 * 40, -128)};
  absl::StatusOr<bool> ok =
      MatchesReference(extreme, S8Path::kAmx, 8, kernels::ParallelLoop::kIc, 1024, 64);
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_TRUE(*ok) << "all 255 x all -128 over K = 4096";
}

// The dequantising epilogue (vector by vector on full tiles, element by element at the edges)
// on every target, with and without a zero point, through the harness's validation.
TEST_P(GemmS8EveryTarget, DequantisedEpilogueWithZeroPointsThroughTheHarness) {
  const Kernel* kernel = KernelRegistry::Global().Find("gemm_s8");
  ASSERT_NE(kernel, nullptr);
  // K = 129 packs A; K = 128 reads it in place on the fast path.
  for (const auto& [e, zero_point, k] :
       std::vector<std::tuple<Epilogue, int32_t, int64_t>>{{Epilogue::kNone, 0, 129},
                                                           {Epilogue::kBias, 128, 129},
                                                           {Epilogue::kBiasRelu, 0, 129},
                                                           {Epilogue::kBiasRelu, 128, 129},
                                                           {Epilogue::kBias, 0, 128},
                                                           {Epilogue::kBiasRelu, 128, 128}}) {
    {
      const Workload w{Op::kGemm, 37, 53, k, Dtype::kU8S8, e};
      absl::StatusOr<Problem> p = Problem::Create(w, 9, 3);
      ASSERT_TRUE(p.ok());
      p->zero_point_a = zero_point;
      const ReferenceOutput reference = ComputeReference(*p);
      Executor executor(2);
      // What a path does not read (MR on AMX, NC elsewhere) is put at rest.
      auto config = [&](int64_t mr, int64_t mc, int64_t par, int64_t path, int64_t kc = 128,
                        int64_t nc = 64) {
        return kernel->params.WithUnusedAtRest(
            Config{{"MR", mr}, {"MC", mc}, {"PAR", par}, {"PATH", path}, {"KC", kc}, {"NC", nc}});
      };
      // KC = 128 slices K = 129 in two (the second partial) and K = 128 not at all.
      std::vector<Config> configs = {config(6, 24, 0, 0), config(8, 48, 1, 0), config(4, 24, 0, 1),
                                     config(6, 48, 1, 1), config(4, 24, 0, 1, 4096)};
      if (kernels::AmxInt8Available()) {
        // K = 129 pads to 192: two slices at KC = 128 (the partial sums go out and back), or one.
        configs.push_back(config(8, 32, 0, 2, 128, 64));
        configs.push_back(config(8, 64, 1, 2, 4096, 4096));
      }
      for (const Config& c : configs) {
        absl::StatusOr<Validation> v = ValidateConfig(*kernel, c, *p, reference, executor);
        // Without VNNI the fast path refuses full-range data (FastPathIsExactOrRefusedNeverWrong).
        if (v.status().code() == absl::StatusCode::kFailedPrecondition) continue;
        ASSERT_TRUE(v.ok()) << v.status();
        EXPECT_TRUE(v->ok) << w.Key() << " zp=" << zero_point << " " << c.ToString() << ": "
                           << v->Summary();
      }
    }
  }
}

// The register-blocked path's initial row blocks share the rows out evenly between the threads
// (the busiest within 10% of its share) when the threads split rows; where no block size does, the
// threads split columns instead. 512 rows on two threads in the largest block (192) would leave
// one thread 384 rows and the other 128. A thread whose rows fit one allowed block gets one block:
// each further block streams all of B again.
TEST(GemmS8Kernel, TheInitialRowBlocksShareTheRowsEvenly) {
  if (kernels::AmxInt8Available()) GTEST_SKIP() << "AMX's 32-row blocks follow their own rule";
  const Kernel* kernel = KernelRegistry::Global().Find("gemm_s8");
  ASSERT_NE(kernel, nullptr);
  for (int64_t m : {64, 100, 256, 512, 1000, 1024, 2048, 4096}) {
    for (int threads : {1, 2, 3, 4, 8}) {
      const Workload w{Op::kGemm, m, 512, 512, Dtype::kU8S8, Epilogue::kNone};
      const Config c = kernel->InitialConfig(w, threads, CacheMode::kWarm, MachineProfile());
      const int64_t mc = c.Get("MC"), mr = c.Get("MR");
      EXPECT_EQ(mc % mr, 0);
      if (c.Get("PAR") != 0) continue;  // columns
      const double share = std::ceil(double(m) / threads / double(mr)) * double(mr);
      const double blocks = std::ceil(double(m) / double(mc));
      const double busiest = std::min(double(m), std::ceil(blocks / threads) * double(mc));
      EXPECT_LE(busiest, 1.1 * share) << m << " rows, " << threads << " threads: MC=" << mc;
    }
  }
  const Workload w512{Op::kGemm, 512, 512, 512, Dtype::kU8S8, Epilogue::kNone};
  EXPECT_LT(kernel->InitialConfig(w512, 2, CacheMode::kWarm, MachineProfile()).Get("MC"), 192);
  for (int64_t m : {1, 7, 64, 100, 192}) {
    const Workload w{Op::kGemm, m, 8192, 32768, Dtype::kU8S8, Epilogue::kNone};
    const Config c = kernel->InitialConfig(w, 1, CacheMode::kWarm, MachineProfile());
    EXPECT_GE(c.Get("MC"), m) << m << " rows: " << c.ToString();
  }
  // 64 rows make three blocks of 24 at the least: two threads split the columns.
  const Workload w64{Op::kGemm, 64, 4096, 4096, Dtype::kU8S8, Epilogue::kNone};
  EXPECT_EQ(kernel->InitialConfig(w64, 2, CacheMode::kWarm, MachineProfile()).Get("PAR"), 1);
}

TEST(GemmS8Kernel, TheTunerRejectsTheSaturatingPathWhereItIsNotExact) {
  // Force a target without VNNI (AVX-512's or AVX-VNNI's), so the fast path is vpmaddubsw and
  // full-range data breaks it.
  int64_t without_vnni = 0;
  for (int64_t t : hwy::SupportedAndGeneratedTargets()) {
    hwy::SetSupportedTargetsForTest(t);
    if (!kernels::GemmS8FastPathIsVnni() && without_vnni == 0) without_vnni = t;
  }
  hwy::SetSupportedTargetsForTest(0);
  if (without_vnni == 0) GTEST_SKIP() << "every target this build dispatches to has VNNI";
  hwy::SetSupportedTargetsForTest(without_vnni);
  const Kernel* kernel = KernelRegistry::Global().Find("gemm_s8");
  const Workload w{Op::kGemm, 24, 40, 300, Dtype::kU8S8, Epilogue::kNone};
  absl::StatusOr<Problem> p = Problem::Create(w);
  ASSERT_TRUE(p.ok());
  Executor executor(1);
  TuneOptions options;
  options.timing = {.min_seconds = 0.001, .min_repetitions = 1};
  absl::StatusOr<TuneOutcome> outcome =
      Tune(*kernel, MachineProfile(), *p, ComputeReference(*p), executor, options);
  hwy::SetSupportedTargetsForTest(0);
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  EXPECT_GT(outcome->configs_rejected, 0);
  // Only the exact paths are correct here: vpmaddwd on s16, or AMX where the CPU has it.
  EXPECT_NE(outcome->best.config.Get("PATH"), 1) << "the saturating path must never win";
  EXPECT_TRUE(outcome->best.validation.ok);
}

}  // namespace
}  // namespace rooftune

namespace rooftune {
namespace {

TEST(GemmS8, WeightsPackedFromATransposedGemvMatrix) {
  // A batch of GEMV inputs against N x K weights: the GEMM reads B[k][n] = W[n][k].
  const int64_t batch = 5, n = 37, k = 70;
  const Data d = Random(batch, n, k, 255, -128, 127, 11);  // d.b used as W (n x k)
  std::vector<int8_t> transposed(k * n);
  for (int64_t row = 0; row < n; ++row) {
    for (int64_t q = 0; q < k; ++q) transposed[q * n + row] = d.b[row * k + q];
  }
  for (S8Path path : {S8Path::kExact, S8Path::kFast}) {
    absl::StatusOr<kernels::PackedWeightsS8> w =
        kernels::PackWeightsS8(d.b.data(), k, n, 1, path, k);
    ASSERT_TRUE(w.ok()) << w.status();
    std::vector<uint8_t> a(batch * k);
    for (size_t i = 0; i < a.size(); ++i) a[i] = uint8_t(d.a[i % d.a.size()] & 0x7f);
    std::vector<int32_t> got(batch * n), want(batch * n);
    ReferenceGemmU8S8(batch, n, k, a.data(), k, transposed.data(), n, want.data(), n);
    kernels::GemmS8Args g;
    g.m = batch, g.n = n, g.k = k, g.a = a.data(), g.lda = k, g.b = &*w, g.c = got.data(),
    g.ldc = n;
    absl::Status s;
    Executor executor(1);
    executor.Execute([&] { s = kernels::GemmS8(g, {4, 8, kernels::ParallelLoop::kIc}); });
    ASSERT_TRUE(s.ok()) << s;
    EXPECT_EQ(got, want);
  }
  EXPECT_FALSE(kernels::PackWeightsS8(d.b.data(), k, n, 1, S8Path::kExact, k - 1).ok());
}

}  // namespace
}  // namespace rooftune

namespace rooftune {
namespace {

// 48 KiB L1, 2 MiB L2 and the last level as given.
MachineProfile CachesOf(uint64_t l2, uint64_t l3) {
  MachineProfile p;
  p.caches = {{1, "Data", 48 << 10, 12, 64, 1},
              {2, "Unified", l2, 16, 64, 1},
              {3, "Unified", l3, 16, 64, 2}};
  return p;
}

// The AMX path's initial blocks (for any CPU: the rule, not this one's path): row blocks of at
// most 128 rows sharing the rows evenly between the threads, and where K is sliced, C's partial
// sums between slices (MC x NC s32) within a quarter of L2; B's block in half of it.
TEST(GemmS8Kernel, TheAmxInitialBlocksKeepThePartialSumsInAQuarterOfL2) {
  for (const uint64_t l2 : {uint64_t(1) << 20, uint64_t(3) << 19, uint64_t(2) << 20}) {
    const MachineProfile p = CachesOf(l2, 32 << 20);
    for (const int64_t size : {256, 512, 1024, 2048, 4096}) {
      for (const int threads : {1, 2, 4}) {
        const Workload w{Op::kGemm, size, size, size, Dtype::kU8S8, Epilogue::kNone};
        const Config c = GemmS8AmxInitialConfig(w, threads, p);
        const std::string what = absl::StrCat(size, "^3 T=", threads, " L2=", l2, ": ",
                                              c.ToString());
        const int64_t mc = c.Get("MC"), nc = c.Get("NC"), kc = c.Get("KC");
        EXPECT_EQ(mc % 32, 0) << what;
        EXPECT_LE(mc, 128) << what;
        if (c.Get("PAR") == 0) {  // rows: every thread gets as many blocks
          const int64_t blocks = (size + mc - 1) / mc;
          EXPECT_EQ(blocks % threads, 0) << what;
          EXPECT_LE(double(kc * nc), double(l2) / 2) << what;
          if (kc < size) EXPECT_LE(double(4 * mc * nc), double(l2) / 4) << what;
        }
      }
    }
  }
}

Traffic GemmS8TrafficOf(const MachineProfile& profile, const Workload& w, const Config& config) {
  const Kernel* kernel = KernelRegistry::Global().Find("gemm_s8");
  EXPECT_NE(kernel, nullptr);
  return kernel->TrafficFor(w, config, 1, profile);
}

// The AMX loops traverse all of B once per MC block of rows. Weights that stay in L2 between
// two traversals cross from L3 once: charging every traversal to L3 had called a 1024^3 GEMM
// whose 1 MiB of weights stayed in a 2 MiB L2 L3-bound, 1.5-2x past that ceiling ("impossible").
TEST(GemmS8Traffic, WeightsThatStayInL2CrossFromL3Once) {
  const Workload w{Op::kGemm, 1024, 1024, 1024, Dtype::kU8S8, Epilogue::kNone};
  const Config amx{{"MR", 8}, {"MC", 32}, {"PAR", 0}, {"PATH", 2}, {"KC", 512}, {"NC", 256}};
  const double a = 1024.0 * 1024, b = 1024.0 * 1024, out = 4.0 * 1024 * 1024;
  const double blocks = 1024 / 32;  // MC blocks: all of B is traversed for each

  const Traffic fits = GemmS8TrafficOf(CachesOf(2 << 20, 32 << 20), w, amx);
  EXPECT_DOUBLE_EQ(fits[MemoryLevel::kL3], a + b + out);
  EXPECT_DOUBLE_EQ(fits[MemoryLevel::kDram], a + b + out);
  EXPECT_GE(fits[MemoryLevel::kL2], blocks * b);  // B's micro-panels per 32-row block, from L2

  // A 512 KiB L2 cannot hold B between traversals: each comes from L3, the last level holds it.
  const Traffic small_l2 = GemmS8TrafficOf(CachesOf(512 << 10, 32 << 20), w, amx);
  EXPECT_DOUBLE_EQ(small_l2[MemoryLevel::kL3], a + blocks * b + out);
  EXPECT_DOUBLE_EQ(small_l2[MemoryLevel::kDram], a + b + out);

  // Nor a 512 KiB last level: every traversal comes from DRAM.
  const Traffic small_l3 = GemmS8TrafficOf(CachesOf(256 << 10, 512 << 10), w, amx);
  EXPECT_DOUBLE_EQ(small_l3[MemoryLevel::kDram], a + blocks * b + out);
}

// With the columns split, each thread's column block of B meets every row of A: B crosses each
// level once, and A (packed whole) is re-read per column block only when it outgrows the level.
TEST(GemmS8Traffic, SplitColumnsReadBOnceAndAAgainOnlyPastItsLevel) {
  const Workload w{Op::kGemm, 2048, 512, 2048, Dtype::kU8S8, Epilogue::kNone};
  const Config amx{{"MR", 8}, {"MC", 128}, {"PAR", 1}, {"PATH", 2}, {"KC", 512}, {"NC", 128}};
  const double a = 2048.0 * 2048, b = 2048.0 * 512, out = 4.0 * 2048 * 512;
  const double column_blocks = 512 / 128;
  const Traffic big = GemmS8TrafficOf(CachesOf(8 << 20, 64 << 20), w, amx);  // A (4 MiB) fits L2
  EXPECT_DOUBLE_EQ(big[MemoryLevel::kL3], a + b + out);
  const Traffic small = GemmS8TrafficOf(CachesOf(2 << 20, 2 << 20), w, amx);
  EXPECT_DOUBLE_EQ(small[MemoryLevel::kDram], column_blocks * a + b + out);
}

// The register-block paths slice K so that a tile column's slice of B stays in L2 across the row
// tiles: with all of a deep K (16384 x NR bytes, at least 256 KiB) the panel overflows a 256 KiB
// L2 and comes from L3 again for every MR rows. Sliced at 1024, B crosses once; the sums carried
// between slices go out to L1 and back.
TEST(GemmS8Traffic, AKSliceKeepsBInL2AcrossTheRowTiles) {
  const double m = 64, n = 1024, k = 16384, mr = 6;
  const Workload w{Op::kGemm, int64_t(m), int64_t(n), int64_t(k), Dtype::kU8S8, Epilogue::kNone};
  const Config whole{{"MR", 6}, {"MC", 96}, {"PAR", 0}, {"PATH", 1}, {"KC", 16384}, {"NC", 64}};
  Config sliced = whole;
  sliced.Set("KC", 1024);
  const MachineProfile p = CachesOf(256 << 10, 512 << 20);
  const Traffic t_whole = GemmS8TrafficOf(p, w, whole), t_sliced = GemmS8TrafficOf(p, w, sliced);
  const double b = k * n, partial = 2 * 4 * m * n * (k / 1024 - 1);
  EXPECT_DOUBLE_EQ(t_whole[MemoryLevel::kL3] - t_sliced[MemoryLevel::kL3],
                   b * std::ceil(m / mr) - b);
  EXPECT_DOUBLE_EQ(t_sliced[MemoryLevel::kL1] - t_whole[MemoryLevel::kL1], partial);
  EXPECT_DOUBLE_EQ(t_sliced[MemoryLevel::kDram], t_whole[MemoryLevel::kDram]);
}

// The initial config slices K only where a tile column's panel of B would overflow half of L2,
// then at the deepest slice that fits; on every target (the panel's width is the target's).
TEST(GemmS8Kernel, TheInitialSliceKeepsAPanelOfBInHalfOfL2) {
  if (kernels::AmxInt8Available()) GTEST_SKIP() << "AMX sizes its slice by its A micro-panel";
  const Kernel* kernel = KernelRegistry::Global().Find("gemm_s8");
  ASSERT_NE(kernel, nullptr);
  const std::vector<int64_t>& slices = kernel->params.Find("KC")->domain;
  const MachineProfile p = CachesOf(1 << 20, 32 << 20);
  for (int64_t target : hwy::SupportedAndGeneratedTargets()) {
    hwy::SetSupportedTargetsForTest(target);
    const int64_t panel = kernels::GemmS8PanelColumns();
    for (int64_t k : {1, 64, 1000, 4096, 8192, 32768}) {
      for (int threads : {1, 2}) {
        const Workload w{Op::kGemm, 512, 4096, k, Dtype::kU8S8, Epilogue::kNone};
        const Config c = kernel->InitialConfig(w, threads, CacheMode::kWarm, p);
        const double columns = double(panel) * kernels::GemmS8TilePanels(
                                                   kernels::GemmS8SpansTwoPanels(int(c.Get("MR"))),
                                                   4096 / panel, c.Get("PAR") == 1, threads);
        const double width = c.Get("PATH") == 0 ? 2 : 1;
        auto fits = [&](double kc) { return kc * width * columns <= 512 << 10; };
        const std::string what =
            absl::StrCat(hwy::TargetName(target), " K=", k, " T=", threads, ": ", c.ToString());
        if (fits(double(k))) {
          // All of K, or the deepest slice the parameter has where none covers K.
          EXPECT_GE(c.Get("KC"), std::min(k, slices.back())) << what;
        } else {
          EXPECT_LT(c.Get("KC"), k) << what;
          EXPECT_TRUE(fits(double(c.Get("KC")))) << what;
          for (int64_t deeper : slices) {  // the deepest that fits
            if (deeper > c.Get("KC")) EXPECT_FALSE(fits(double(deeper))) << what;
          }
        }
      }
    }
  }
  hwy::SetSupportedTargetsForTest(0);
}

// The register-block paths: the exact one packs both operands at 2 bytes a value.
TEST(GemmS8Traffic, ExactPathMovesTwiceTheWeightBytes) {
  const Workload w{Op::kGemm, 256, 256, 256, Dtype::kU8S8, Epilogue::kNone};
  const Config exact{{"MR", 6}, {"MC", 48}, {"PAR", 0}, {"PATH", 0}, {"KC", 128}, {"NC", 64}};
  Config fast = exact;
  fast.Set("PATH", 1);
  const MachineProfile p = CachesOf(2 << 20, 32 << 20);
  const double b = 256.0 * 256;
  EXPECT_DOUBLE_EQ(GemmS8TrafficOf(p, w, exact)[MemoryLevel::kDram] -
                       GemmS8TrafficOf(p, w, fast)[MemoryLevel::kDram],
                   b);
  for (MemoryLevel level : {MemoryLevel::kL1, MemoryLevel::kL2, MemoryLevel::kL3}) {
    EXPECT_GE(GemmS8TrafficOf(p, w, fast)[level], 256.0 * 256 * 2 + 4 * 256.0 * 256);
  }
}

}  // namespace
}  // namespace rooftune
