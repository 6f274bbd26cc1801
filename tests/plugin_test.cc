#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <utility>

#include "framework/harness.h"
#include "framework/int8_speedup.h"
#include "framework/kernel.h"
#include "tests/temp_dir.h"

namespace rooftune {
namespace {

TEST(Plugin, TheExamplePluginLoadsAndItsKernelIsCorrect) {
  KernelRegistry registry;
  ASSERT_TRUE(registry.LoadPlugin(EXAMPLE_PLUGIN).ok());
  const Kernel* kernel = registry.Find("example_gemv_f32");
  ASSERT_NE(kernel, nullptr);
  EXPECT_EQ(kernel->origin, EXAMPLE_PLUGIN);
  EXPECT_EQ(kernel->params.Enumerate().size(), 3u);

  for (int threads : {1, 2}) {
    const Workload w{Op::kGemv, 1, 333, 77, Dtype::kF32, Epilogue::kBiasRelu};
    absl::StatusOr<Problem> problem = Problem::Create(w);
    ASSERT_TRUE(problem.ok());
    const ReferenceOutput reference = ComputeReference(*problem);
    Executor executor(threads);
    for (const Config& config : kernel->params.Enumerate()) {
      absl::StatusOr<Validation> v = ValidateConfig(*kernel, config, *problem, reference, executor);
      ASSERT_TRUE(v.ok()) << v.status();
      EXPECT_TRUE(v->ok) << config.ToString() << ": " << v->Summary();
    }
  }
  // Loading it twice is refused: the names would clash.
  absl::Status again = registry.LoadPlugin(EXAMPLE_PLUGIN);
  EXPECT_FALSE(again.ok());
  EXPECT_NE(again.message().find("already registered"), std::string::npos) << again;
}

TEST(Plugin, AWrongAbiVersionIsRefused) {
  KernelRegistry registry;
  absl::Status s = registry.LoadPlugin(WRONG_ABI_PLUGIN);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("ABI version 9999"), std::string::npos) << s;
  EXPECT_TRUE(registry.All().empty());
}

TEST(Plugin, ASharedLibraryThatIsNotAPluginIsRefused) {
  KernelRegistry registry;
  absl::Status s = registry.LoadPlugin(NOT_A_PLUGIN_LIBRARY);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("is not a rooftune plugin"), std::string::npos) << s;
}

TEST(Plugin, ATextFileOrAMissingFileIsRefused) {
  const std::string text = fixtures::TestTempDir() / "not_a_library.so";
  std::ofstream(text) << "hello";
  KernelRegistry registry;
  absl::Status s = registry.LoadPlugin(text);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("cannot load plugin"), std::string::npos) << s;
  EXPECT_FALSE(registry.LoadPlugin("/nonexistent/plugin.so").ok());
}

TEST(Registry, RefusesIncompleteKernels) {
  KernelRegistry registry;
  EXPECT_FALSE(registry.Add(Kernel("")).ok());
  EXPECT_FALSE(
      registry.Add(Kernel("no_run").Computes(Op::kGemm, {Dtype::kF32}, kAllEpilogues)).ok());
  ParamSpace impossible;
  impossible.Add("X", {1}).Require("X == 2", [](const Config& c) { return c.Get("X") == 2; });
  auto run = [](const Config&, Problem&, const RunContext&) { return absl::OkStatus(); };
  EXPECT_FALSE(registry
                   .Add(Kernel("empty_space")
                            .Computes(Op::kGemm, {Dtype::kF32}, kAllEpilogues)
                            .Tunes(impossible)
                            .Runs(run))
                   .ok());
  EXPECT_TRUE(
      registry.Add(Kernel("fine").Computes(Op::kGemm, {Dtype::kF32}, kAllEpilogues).Runs(run))
          .ok());
  EXPECT_FALSE(
      registry.Add(Kernel("fine").Computes(Op::kGemm, {Dtype::kF32}, kAllEpilogues).Runs(run))
          .ok());
}

// A kernel that declares no rule for a call's own weights runs every config as it is; one that
// does is asked through WithWeightsFromTheCall.
TEST(Registry, ACallsOwnWeightsFollowTheKernelsRule) {
  const Workload w{Op::kGemm, 8, 8, 8, Dtype::kF32, Epilogue::kNone};
  Config config;
  config.Set("X", 3);
  Kernel bare("bare");
  EXPECT_EQ(bare.WithWeightsFromTheCall(config, w, 1, MachineProfile()), config);
  Kernel ruled("ruled");
  ruled.ReadsWeightsFromTheCallAs(
      [](const Config& c, const Workload& workload, int threads, const MachineProfile&) {
        Config in_place = c;
        in_place.Set("X", workload.m + threads);
        return in_place;
      });
  EXPECT_EQ(ruled.WithWeightsFromTheCall(config, w, 2, MachineProfile()).Get("X"), 10);
}

TEST(Registry, BuiltinKernelsAreRegistered) {
  for (const char* name : {"gemm_f32", "gemm_f32_unfused", "reference_gemm", "reference_gemv"}) {
    EXPECT_NE(KernelRegistry::Global().Find(name), nullptr) << name;
  }
}

// `rooftune run` tunes each kernel's default workloads: every entry must name one the kernel
// computes, or the run would stop at it.
// A constraint that says which parameters it reads prunes the walk; pruning must never change
// which configs the space holds, nor their order (the reference: the walk without pruning).
// (Spaces of half a million configs: compared by count and a hash of the sequence.)
TEST(Registry, EveryKernelsPrunedWalkVisitsWhatTheFullWalkVisits) {
  auto fingerprint = [](const ParamSpace& space) {
    uint64_t count = 0, hash = 0;
    space.ForEachValid([&](const Config& c) {
      ++count;
      for (const auto& [name, value] : c.values()) {
        hash = hash * 1000003 ^ std::hash<std::string>()(name) ^ uint64_t(value) * 7919;
      }
      return true;
    });
    return std::pair(count, hash);
  };
  for (const Kernel* kernel : KernelRegistry::Global().All()) {
    EXPECT_EQ(fingerprint(kernel->params), fingerprint(kernel->params.WithoutPruning()))
        << kernel->name;
  }
}

// A parameter space declared wrongly is refused when its kernel registers, naming the mistake:
// two parameters a user would spell alike (--config reads pack_b as PACKB), a value AsBefore
// names outside the domain, a constraint reading a parameter declared after it.
TEST(Registry, AMisdeclaredParameterSpaceIsRefused) {
  auto kernel = [](ParamSpace space) {
    Kernel k("misdeclared");
    k.Computes(Op::kGemm, {Dtype::kF32}, {Epilogue::kNone}).Tunes(std::move(space));
    k.Runs([](const Config&, Problem&, const RunContext&) { return absl::OkStatus(); });
    return k;
  };
  const std::pair<ParamSpace, std::string> cases[] = {
      {ParamSpace().Add("PACKB", {0, 1}).Add("PACK_B", {0, 1}),
       "PACKB and PACK_B are spelled alike"},
      {ParamSpace().Add("KC", {64, 128}).AsBefore("96"), "AsBefore: KC=96 is outside its domain"},
      {ParamSpace()
           .Add("MR", {4, 6})
           .Require("MR <= NR", {"MR", "NR"}, [](const Config&) { return true; }),
       "reads NR, not declared before it"},
  };
  for (const auto& [space, says] : cases) {
    KernelRegistry registry;
    const absl::Status s = registry.Add(kernel(space));
    ASSERT_FALSE(s.ok()) << says;
    EXPECT_NE(s.message().find(says), std::string::npos) << s;
    EXPECT_TRUE(registry.All().empty());
  }
  KernelRegistry registry;
  EXPECT_TRUE(registry.Add(kernel(ParamSpace().Add("PACKB", {0, 1}).Add("PF", {0, 1}))).ok());
}

TEST(Registry, EveryDefaultWorkloadParsesAndIsSupported) {
  for (const Kernel* kernel : KernelRegistry::Global().All()) {
    for (const auto* entries : {&kernel->default_shapes, &kernel->quick_default_shapes}) {
      for (const std::string& entry : *entries) {
        absl::StatusOr<Workload> w = kernel->DefaultWorkload(entry, 0);
        ASSERT_TRUE(w.ok()) << kernel->name << " \"" << entry << "\": " << w.status();
        EXPECT_TRUE(kernel->Supports(*w)) << kernel->name << " " << entry;
      }
    }
  }
}

// The report shows what fusion saved only where both variants ran the same workload.
TEST(Registry, TheFusedAndUnfusedGemmShareADefaultWorkload) {
  const Kernel* fused = KernelRegistry::Global().Find("gemm_f32");
  const Kernel* unfused = KernelRegistry::Global().Find("gemm_f32_unfused");
  ASSERT_NE(fused, nullptr);
  ASSERT_NE(unfused, nullptr);
  for (bool quick : {false, true}) {
    auto keys = [&](const Kernel& k) {
      std::vector<std::string> out;
      for (const std::string& e : quick ? k.quick_default_shapes : k.default_shapes) {
        out.push_back(k.DefaultWorkload(e, 0)->Key());
      }
      return out;
    };
    const std::vector<std::string> fused_keys = keys(*fused);
    for (const std::string& key : keys(*unfused)) {
      EXPECT_NE(key.find("bias_relu"), std::string::npos) << key;
      EXPECT_NE(std::find(fused_keys.begin(), fused_keys.end(), key), fused_keys.end()) << key;
    }
  }
}

// Kernels name each other (the fusion lever, the fewer-bytes lever, the int8 speedup): a relation
// that names no registered kernel, or one of another op or dtype, would silently drop a lever.
TEST(Registry, EveryDeclaredRelationNamesARegisteredKernelOfTheSameOp) {
  const KernelRegistry& registry = KernelRegistry::Global();
  int relations = 0;
  for (const Kernel* kernel : registry.All()) {
    auto related = [&](const std::string& name) -> const Kernel* {
      if (name.empty()) return nullptr;
      ++relations;
      const Kernel* other = registry.Find(name);
      EXPECT_NE(other, nullptr) << kernel->name << " names " << name;
      if (other != nullptr) EXPECT_EQ(other->op, kernel->op) << kernel->name << " -> " << name;
      return other;
    };
    if (const Kernel* fused = related(kernel->unfused_variant_of)) {
      EXPECT_EQ(fused->dtypes, kernel->dtypes) << kernel->name;
      EXPECT_EQ(registry.UnfusedVariantOf(fused->name), kernel);
    }
    if (const Kernel* narrower = related(kernel->narrower)) {
      EXPECT_TRUE(HasInt8Weights(narrower->dtypes.front()))
          << kernel->name << " -> " << narrower->name;
      EXPECT_FALSE(HasInt8Weights(kernel->dtypes.front())) << kernel->name;
    }
    if (const Kernel* f32 = related(kernel->f32_counterpart)) {
      EXPECT_EQ(f32->dtypes.front(), Dtype::kF32) << kernel->name << " -> " << f32->name;
      EXPECT_TRUE(HasInt8Weights(kernel->dtypes.front())) << kernel->name;
    }
  }
  // The builtin GEMMs and GEMVs declare at least: gemm_f32_unfused of gemm_f32, gemm_f32 and
  // gemv_f32 narrowing to int8, and each int8 kernel's f32 counterpart.
  EXPECT_GE(relations, 6);
  ASSERT_NE(registry.Find("gemm_f32_unfused"), nullptr);
  EXPECT_EQ(registry.UnfusedVariantOf("gemm_f32"), registry.Find("gemm_f32_unfused"));
  EXPECT_EQ(registry.UnfusedVariantOf("gemm_s8"), nullptr);
  EXPECT_EQ(registry.UnfusedVariantOf(""), nullptr);
}

// Validation compares every kernel with the reference: the registered reference kernels must
// compute every op and dtype some kernel does, and agree with what validation computes (they run
// the same code), awkward shapes and every epilogue included.
TEST(Registry, TheReferenceKernelsCoverEveryOpAndDtypeAndPassValidation) {
  const std::vector<const Kernel*> all = KernelRegistry::Global().All();
  for (const Kernel* kernel : all) {
    for (Dtype dtype : kernel->dtypes) {
      const bool covered = std::any_of(all.begin(), all.end(), [&](const Kernel* r) {
        return r->reference && r->op == kernel->op &&
               std::find(r->dtypes.begin(), r->dtypes.end(), dtype) != r->dtypes.end();
      });
      EXPECT_TRUE(covered) << kernel->name << " " << ToString(dtype);
    }
  }
  Executor executor(1);
  for (const Kernel* reference : all) {
    if (!reference->reference) continue;
    for (Dtype dtype : reference->dtypes) {
      for (Epilogue epilogue : reference->epilogues) {
        const int64_t rows = reference->op == Op::kGemv ? 1 : 3;  // a GEMV has one row of x
        for (const Workload& w : {Workload{reference->op, rows, 17, 1, dtype, epilogue},
                                  Workload{reference->op, 1, 5, 131, dtype, epilogue}}) {
          absl::StatusOr<Problem> problem = Problem::Create(w);
          ASSERT_TRUE(problem.ok()) << problem.status();
          const ReferenceOutput expected = ComputeReference(*problem);
          absl::StatusOr<Validation> v =
              ValidateConfig(*reference, Config(), *problem, expected, executor);
          ASSERT_TRUE(v.ok()) << reference->name << " " << w.Key() << ": " << v.status();
          EXPECT_TRUE(v->ok) << reference->name << " " << w.Key() << ": " << v->Summary();
        }
      }
    }
  }
}

TEST(Registry, AMalformedDefaultWorkloadIsAnError) {
  const Kernel* gemm = KernelRegistry::Global().Find("gemm_f32");
  ASSERT_NE(gemm, nullptr);
  EXPECT_EQ(gemm->DefaultWorkload("64x64x64", 0)->epilogue, Epilogue::kNone);
  EXPECT_EQ(gemm->DefaultWorkload("64x64x64 bias", 0)->epilogue, Epilogue::kBias);
  EXPECT_FALSE(gemm->DefaultWorkload("", 0).ok());
  EXPECT_FALSE(gemm->DefaultWorkload("64x64", 0).ok());
  EXPECT_FALSE(gemm->DefaultWorkload("64x64x64 gelu", 0).ok());
  EXPECT_FALSE(gemm->DefaultWorkload("64x64x64 bias extra", 0).ok());
  // The unfused variant computes no epilogue-free GEMM.
  EXPECT_FALSE(
      KernelRegistry::Global().Find("gemm_f32_unfused")->DefaultWorkload("64x64x64 none", 0).ok());
}

}  // namespace
}  // namespace rooftune
