// The libxsmm baseline against the reference: its JIT kernels with their own scales (alpha 1,
// beta 0 or 1) and with others applied after, every epilogue, strided operands, awkward shapes;
// both paths must have run.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "framework/harness.h"
#include "framework/kernel.h"
#include "kernels/code_paths.h"

namespace rooftune {
namespace {

TEST(LibxsmmBaseline, MatchesTheReferenceOnBothOfItsPaths) {
  const Kernel* kernel = KernelRegistry::Global().Find("libxsmm_gemm_f32");
  ASSERT_NE(kernel, nullptr) << "built without libxsmm-dev";
  EXPECT_EQ(kernel->threading, Threading::kSelf);
  struct Case {
    int64_t m, n, k;
    Epilogue epilogue;
    float alpha, beta;
    int64_t pad;
  };
  kernels::RecordCodePaths(true);
  for (const Case& c :
       {Case{1, 1, 1, Epilogue::kNone, 1, 0, 0}, Case{7, 13, 29, Epilogue::kBias, 1, 0, 0},
        Case{17, 5, 1, Epilogue::kBiasRelu, 1, 1, 3}, Case{33, 65, 17, Epilogue::kNone, 1, 1, 1},
        Case{100, 37, 70, Epilogue::kBiasRelu, 0.5f, 2.0f, 5},
        Case{3, 200, 11, Epilogue::kBias, -1.5f, 0, 2}}) {
    const Workload w{Op::kGemm, c.m, c.n, c.k, Dtype::kF32, c.epilogue};
    absl::StatusOr<Problem> problem = Problem::Create(w, 5, c.pad);
    ASSERT_TRUE(problem.ok());
    problem->alpha = c.alpha;
    problem->beta = c.beta;
    for (size_t i = 0; i < problem->c.size(); ++i) problem->c[i] = 0.25f * float(i % 7);
    const ReferenceOutput reference = ComputeReference(*problem);
    Executor executor(1);
    absl::StatusOr<Validation> v = ValidateConfig(*kernel, Config(), *problem, reference, executor);
    ASSERT_TRUE(v.ok()) << v.status();
    EXPECT_TRUE(v->ok) << w.Key() << " alpha=" << c.alpha << " beta=" << c.beta << ": "
                       << v->Summary();
  }
  const std::set<std::string> ran = kernels::RecordedCodePaths();
  kernels::RecordCodePaths(false);
  EXPECT_EQ(ran.count("libxsmm jit"), 1u);
  EXPECT_EQ(ran.count("libxsmm jit, scaled after"), 1u);
}

}  // namespace
}  // namespace rooftune
