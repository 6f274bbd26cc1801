// The oneDNN baseline against the reference: every epilogue, alpha and beta, strided operands,
// one and two threads, awkward shapes.
#include <gtest/gtest.h>

#include <tuple>

#include "framework/harness.h"
#include "framework/kernel.h"

namespace rooftune {
namespace {

TEST(OneDnnBaseline, MatchesTheReference) {
  const Kernel* kernel = KernelRegistry::Global().Find("onednn_gemm_f32");
  ASSERT_NE(kernel, nullptr);
  EXPECT_EQ(kernel->threading, Threading::kSelf);  // never inside a TBB worker
  struct Case {
    int64_t m, n, k;
    Epilogue epilogue;
    float alpha, beta;
    int64_t pad;
    int threads;
  };
  for (const Case& c :
       {Case{1, 1, 1, Epilogue::kNone, 1, 0, 0, 1}, Case{7, 13, 29, Epilogue::kBias, 1, 0, 0, 1},
        Case{33, 65, 1, Epilogue::kBiasRelu, 1, 0, 3, 2},
        Case{100, 37, 70, Epilogue::kBiasRelu, 0.5f, 2.0f, 5, 2},
        Case{64, 64, 300, Epilogue::kNone, 1, 1, 0, 2}}) {
    const Workload w{Op::kGemm, c.m, c.n, c.k, Dtype::kF32, c.epilogue};
    absl::StatusOr<Problem> problem = Problem::Create(w, 7, c.pad);
    ASSERT_TRUE(problem.ok());
    problem->alpha = c.alpha;
    problem->beta = c.beta;
    for (size_t i = 0; i < problem->c.size(); ++i) problem->c[i] = 0.25f * float(i % 7);
    const ReferenceOutput reference = ComputeReference(*problem);
    Executor executor(c.threads);
    absl::StatusOr<Validation> v = ValidateConfig(*kernel, Config(), *problem, reference, executor);
    ASSERT_TRUE(v.ok()) << v.status();
    EXPECT_TRUE(v->ok) << w.Key() << " alpha=" << c.alpha << " beta=" << c.beta << ": "
                       << v->Summary();
  }
}

// Primitives are cached per shape and thread count: switching thread counts on one shape, back
// and forth, creates and reuses them, and every call must still give the reference result.
// (Which primitive ran is a matter of speed, not of results: the benchmarks show that part.)
TEST(OneDnnBaseline, OneShapeAtSeveralThreadCounts) {
  const Kernel* kernel = KernelRegistry::Global().Find("onednn_gemm_f32");
  ASSERT_NE(kernel, nullptr);
  const Workload w{Op::kGemm, 96, 80, 128, Dtype::kF32, Epilogue::kBiasRelu};
  absl::StatusOr<Problem> problem = Problem::Create(w, 11);
  ASSERT_TRUE(problem.ok());
  const ReferenceOutput reference = ComputeReference(*problem);
  for (int threads : {1, 2, 1, 2}) {
    Executor executor(threads);
    absl::StatusOr<Validation> v = ValidateConfig(*kernel, Config(), *problem, reference, executor);
    ASSERT_TRUE(v.ok()) << v.status();
    EXPECT_TRUE(v->ok) << "threads=" << threads << ": " << v->Summary();
  }
}

TEST(OneDnnBaseline, GemvMatchesTheReference) {
  const Kernel* kernel = KernelRegistry::Global().Find("onednn_gemv_f32");
  ASSERT_NE(kernel, nullptr);
  for (Epilogue e : kAllEpilogues) {
    for (const auto& [n, k] :
         std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {7, 13}, {300, 1000}}) {
      const Workload w{Op::kGemv, 1, n, k, Dtype::kF32, e};
      absl::StatusOr<Problem> problem = Problem::Create(w);
      ASSERT_TRUE(problem.ok());
      const ReferenceOutput reference = ComputeReference(*problem);
      Executor executor(2);
      absl::StatusOr<Validation> v =
          ValidateConfig(*kernel, Config(), *problem, reference, executor);
      ASSERT_TRUE(v.ok()) << v.status();
      EXPECT_TRUE(v->ok) << w.Key() << ": " << v->Summary();
    }
  }
}

// Runs a oneDNN int8 baseline on `w` with 7-bit activations and checks it against the reference.
// oneDNN's int8 matmul is exact for 7-bit activations on every ISA (vpmaddubsw saturates on
// full-range data where the CPU lacks VNNI: ../shared/ANCHORS.md measured that).
void ExpectExactOn7BitActivations(const Kernel& kernel, const Workload& w) {
  absl::StatusOr<Problem> problem = Problem::Create(w);
  ASSERT_TRUE(problem.ok());
  for (size_t i = 0; i < problem->a_u8.size(); ++i) problem->a_u8[i] &= 0x7f;
  problem->zero_point_a = 64;
  const ReferenceOutput reference = ComputeReference(*problem);
  Executor executor(2);
  absl::StatusOr<Validation> v = ValidateConfig(kernel, Config(), *problem, reference, executor);
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_TRUE(v->ok) << w.Key() << ": " << v->Summary();
}

TEST(OneDnnBaseline, Int8MatchesTheReferenceOn7BitActivations) {
  const Kernel* kernel = KernelRegistry::Global().Find("onednn_gemm_s8");
  ASSERT_NE(kernel, nullptr);
  for (Epilogue e : kAllEpilogues) {
    for (const auto& [m, n, k] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{
             {1, 1, 1}, {7, 13, 29}, {64, 37, 301}}) {
      ExpectExactOn7BitActivations(*kernel, {Op::kGemm, m, n, k, Dtype::kU8S8, e});
    }
  }
}

TEST(OneDnnBaseline, Int8GemvMatchesTheReferenceOn7BitActivations) {
  const Kernel* kernel = KernelRegistry::Global().Find("onednn_gemv_u8s8");
  ASSERT_NE(kernel, nullptr);
  for (Epilogue e : kAllEpilogues) {
    for (const auto& [n, k] :
         std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {7, 13}, {300, 1001}}) {
      ExpectExactOn7BitActivations(*kernel, {Op::kGemv, 1, n, k, Dtype::kU8S8, e});
    }
  }
}

TEST(GemmF32Kernel, StridedAlphaBetaThroughTheHarness) {
  for (const char* name : {"gemm_f32", "gemm_f32_unfused"}) {
    const Kernel* kernel = KernelRegistry::Global().Find(name);
    ASSERT_NE(kernel, nullptr);
    const Workload w{Op::kGemm, 45, 67, 89, Dtype::kF32, Epilogue::kBiasRelu};
    absl::StatusOr<Problem> problem = Problem::Create(w, 3, 9);
    ASSERT_TRUE(problem.ok());
    problem->alpha = -1.5f;
    problem->beta = 0.5f;
    for (size_t i = 0; i < problem->c.size(); ++i) problem->c[i] = float(i % 5) - 2.0f;
    const ReferenceOutput reference = ComputeReference(*problem);
    Executor executor(2);
    Config last;
    kernel->params.ForEachValid([&](const Config& c) {
      last = c;
      return true;
    });
    for (const Config& config : {kernel->InitialConfig(w, 2, CacheMode::kWarm, MachineProfile()),
                                 kernel->params.FirstValid(), last}) {
      absl::StatusOr<Validation> v = ValidateConfig(*kernel, config, *problem, reference, executor);
      ASSERT_TRUE(v.ok()) << v.status();
      EXPECT_TRUE(v->ok) << name << " " << config.ToString() << ": " << v->Summary();
    }
  }
}

}  // namespace
}  // namespace rooftune
