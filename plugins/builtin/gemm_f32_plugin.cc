// Registers the blocked fp32 GEMM twice: with the bias+ReLU epilogue fused into the micro-kernel's
// final store, and unfused (a separate pass over C), so that reports can show what fusion saves.
#include <algorithm>
#include <cmath>

#include "framework/kernel.h"
#include "framework/roofline.h"
#include "kernels/gemm_f32/blocking.h"
#include "kernels/gemm_f32/gemm_f32.h"
#include "kernels/gemm_f32/plan.h"
#include "kernels/gemm_f32/small.h"
#include "kernels/workspace.h"
#include "plugins/builtin/gemm_f32_config.h"
#include "plugins/builtin/gemm_f32_traffic.h"

namespace rooftune {
namespace {

using kernels::GemmF32Blocking;

bool HasMicroKernel(int mr, int nr) {
  static const std::vector<kernels::MicroKernelShape> shapes = kernels::GemmF32MicroKernels();
  return std::any_of(shapes.begin(), shapes.end(),
                     [&](const auto& s) { return s.mr == mr && s.nr == nr; });
}

}  // namespace

// Choices are listed in their kernel enum's order, so that a code is the enum's value.
constexpr int64_t kBInPlace = int64_t(kernels::BPacking::kInPlace);
constexpr int64_t kBFirstUse = int64_t(kernels::BPacking::kOnFirstUse);
constexpr int64_t kBPrepared = int64_t(kernels::BPacking::kPrepared);
constexpr int64_t kBlockedPath = int64_t(kernels::GemmF32Path::kBlocked);

bool Blocked(const Config& c) { return c.Get("PATH") == kBlockedPath; }

ParamSpace GemmF32Space() {
  ParamSpace space;
  const char* const kBlockedOnly = "PATH=blocked";
  space
      .AddChoice("PATH", {"blocked", "small"},
                 "the five loops around a micro-kernel with packed panels, or the small-matrix "
                 "path: one register block over C, A and B read in place, on the calling thread")
      .AsBefore("blocked")
      .AddChoice("SPLIT", {"none", "split"},
                 "the small path on the calling thread alone, or its tiles split over the threads "
                 "along PAR")
      .AsBefore("none")
      .OnlyWhen("PATH=small", [](const Config& c) { return !Blocked(c); })
      .Add("MR", {1, 2, 4, 6, 8, 12, 16, 24}, "rows of the register block")
      .Add("NR", {8, 16, 24, 32, 48, 64, 128, 256},
           "columns of the register block (a multiple of the vector; the small path's blocks of "
           "one or two rows up to 16 vectors)")
      .Add("KC", {32, 64, 128, 160, 192, 256, 320, 384, 512, 768, 1024, 2048, 4096},
           "depth of a packed panel (the micro-panel of A or of B kept in L1)")
      .OnlyWhen(kBlockedOnly, &Blocked)
      .Add("MC",
           {24, 48, 72, 96, 120, 144, 192, 240, 288, 384, 480, 576, 768, 1152, 1536, 2304, 3072},
           "rows of the packed A block (kept in L2, or in L3 when INNER=jr)")
      .OnlyWhen(kBlockedOnly, &Blocked)
      .Add("NC", {192, 256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192, 12288},
           "columns of the packed B block (kept in L3, or in L2 when INNER=jr)")
      .OnlyWhen(kBlockedOnly, &Blocked)
      .AddChoice("INNER", {"ir", "jr"},
                 "innermost loop around the micro-kernel: ir (a KC x NR micro-panel of B stays in "
                 "L1, as in BLIS) or jr (an MR x KC micro-panel of A stays in L1, B streams from "
                 "L2)")
      .OnlyWhen(kBlockedOnly, &Blocked)
      .AddChoice("PAR", {"rows", "columns"},
                 "loop the threads split: rows (ic, B shared) or columns (jc, B each thread's own)")
      .OnlyWhen("PATH=blocked or SPLIT=split",
                [](const Config& c) { return Blocked(c) || c.Get("SPLIT") == 1; })
      .AddChoice("PACKA", {"in_place", "packed"},
                 "A read in place, or its blocks packed into MR-row panels")
      .OnlyWhen(kBlockedOnly, &Blocked)
      .AddChoice("PACKB", {"in_place", "ahead", "first_use", "prepared"},
                 "B read in place, packed into NR-column panels ahead of use, each micro-panel "
                 "packed as its first tile reads it in place (no separate pass), or packed once "
                 "ahead of every call, as inference packs its weights")
      .OnlyWhen(kBlockedOnly, &Blocked)
      .AddChoice("PREFETCHB", {"off", "on", "l2"},
                 "fetch B ahead of the tiles' reads, for B streamed from memory as in decode "
                 "shapes: in place, the next micro-panel during this one; prepared, 8 KiB "
                 "ahead along its one stream; into L1 (on) or only as far as L2 (l2)")
      .OnlyWhen("PATH=blocked and PACKB=in_place or prepared",
                [](const Config& c) {
                  return Blocked(c) &&
                         (c.Get("PACKB") == kBInPlace || c.Get("PACKB") == kBPrepared);
                })
      .Require("MR x NR is a micro-kernel of this CPU's Highway target for the path",
               {"PATH", "MR", "NR"},
               [](const Config& c) {
                 const int mr = int(c.Get("MR")), nr = int(c.Get("NR"));
                 return Blocked(c) ? HasMicroKernel(mr, nr)
                                   : kernels::GemmF32SmallHasKernel(mr, nr);
               })
      .Require("MC % MR == 0 on the blocked path", {"PATH", "MC", "MR"},
               [](const Config& c) { return !Blocked(c) || c.Get("MC") % c.Get("MR") == 0; })
      .Require("NC % NR == 0 on the blocked path", {"PATH", "NC", "NR"},
               [](const Config& c) { return !Blocked(c) || c.Get("NC") % c.Get("NR") == 0; })
      .Require("PACKB=first_use only with PAR=columns (threads sharing B would race to pack it)",
               {"PACKB", "PAR"},
               [](const Config& c) { return c.Get("PACKB") != kBFirstUse || c.Get("PAR") == 1; });
  return space;
}

GemmF32Blocking BlockingOf(const Config& c, bool fused) {
  GemmF32Blocking b;
  b.path = kernels::GemmF32Path(c.Get("PATH"));
  b.split_small = c.Get("SPLIT") == 1;
  b.mr = int(c.Get("MR"));
  b.nr = int(c.Get("NR"));
  b.kc = int(c.Get("KC"));
  b.mc = int(c.Get("MC"));
  b.nc = int(c.Get("NC"));
  b.parallel = c.Get("PAR") == 1 ? kernels::ParallelLoop::kJc : kernels::ParallelLoop::kIc;
  b.fuse_epilogue = fused;
  b.pack_a = c.Get("PACKA") != 0;
  b.pack_b = kernels::BPacking(c.Get("PACKB"));
  b.jr_innermost = c.Get("INNER") == 1;
  b.prefetch_b = c.Get("PREFETCHB") != 0;
  b.prefetch_b_into_l2 = c.Get("PREFETCHB") == 2;
  return b;
}

Config ConfigOf(const GemmF32Blocking& b) {
  using kernels::ParallelLoop;
  return Config{{"PATH", int64_t(b.path)},
                {"SPLIT", b.split_small ? 1 : 0},
                {"MR", b.mr},
                {"NR", b.nr},
                {"KC", b.kc},
                {"MC", b.mc},
                {"NC", b.nc},
                {"PAR", b.parallel == ParallelLoop::kJc ? 1 : 0},
                {"INNER", b.jr_innermost ? 1 : 0},
                {"PACKA", b.pack_a ? 1 : 0},
                {"PACKB", int64_t(b.pack_b)},
                {"PREFETCHB", !b.prefetch_b          ? 0
                              : b.prefetch_b_into_l2 ? 2
                                                     : 1}};
}

namespace {

// What every call of a (config, problem) runs with, made once outside the timing: the config
// decoded into a plan of the problem's shape (a call then runs it instead of looking up a dozen
// parameters by name and choosing its tiles' micro-kernels, which would cost more than a 16^3
// product's arithmetic), and B packed ahead when the config reads it prepared.
struct PreparedCall {
  kernels::GemmF32Plan plan;
  std::shared_ptr<void> b;  // PACKB=prepared: B as kernels::PackPreparedB lays it out
};

// The unsplit small path runs on the calling thread alone; prepared B is streamed, so cold timing
// evicts it with the operands.
template <bool kFused>
absl::StatusOr<Prepared> PrepareCall(const Config& config, const Problem& problem) {
  const Workload& w = problem.workload;
  absl::StatusOr<kernels::GemmF32Plan> plan =
      kernels::GemmF32Plan::Make(BlockingOf(config, kFused), w.m, w.n);
  if (!plan.ok()) return plan.status();
  auto call = std::make_shared<PreparedCall>(PreparedCall{*std::move(plan), nullptr});
  const kernels::GemmF32Blocking& blocking = call->plan.blocking();
  std::vector<ByteSpan> streamed;
  if (blocking.pack_b == kernels::BPacking::kPrepared) {
    absl::StatusOr<kernels::PreparedB> b =
        kernels::PrepareB(problem.b.data(), w.k, w.n, problem.ldb, blocking);
    if (!b.ok()) return b.status();
    call->b = b->floats;
    streamed.push_back(BytesOf(static_cast<const uint8_t*>(call->b.get()), b->bytes));
  }
  const bool calling_thread_only = kernels::RunsOnCallingThread(blocking);
  return Prepared{std::move(call), std::move(streamed), calling_thread_only};
}

absl::Status RunGemmF32(const Config& config, Problem& p, const RunContext& context, bool fused) {
  kernels::GemmF32Args args;
  args.m = p.workload.m, args.n = p.workload.n, args.k = p.workload.k;
  args.alpha = p.alpha, args.beta = p.beta;
  args.a = p.a.data(), args.lda = p.lda;
  args.b = p.b.data(), args.ldb = p.ldb;
  args.c = p.c.data(), args.ldc = p.ldc;
  args.bias = p.bias.data();
  args.epilogue = p.workload.epilogue == Epilogue::kNone   ? kernels::GemmEpilogue::kNone
                  : p.workload.epilogue == Epilogue::kBias ? kernels::GemmEpilogue::kBias
                                                           : kernels::GemmEpilogue::kBiasRelu;
  if (context.prepared != nullptr) {
    const auto& call = *static_cast<const PreparedCall*>(context.prepared);
    if (call.b != nullptr) args.b = static_cast<const float*>(call.b.get());
    return call.plan.Run(args);
  }
  const kernels::GemmF32Blocking blocking = BlockingOf(config, fused);
  if (blocking.pack_b == kernels::BPacking::kPrepared) {
    return absl::FailedPreconditionError("PACKB=prepared runs only with its prepare step");
  }
  return kernels::GemmF32(args, blocking);
}

Traffic Model(const Workload& w, const Config& c, int threads, const MachineProfile& profile) {
  return GemmF32Traffic(w, BlockingOf(c, true), threads, profile);
}

// The unfused variant moves C once more, in a bias+ReLU pass after the GEMM.
Traffic UnfusedModel(const Workload& w, const Config& c, int threads,
                     const MachineProfile& profile) {
  Traffic t = Model(w, c, threads, profile);
  t.after = EpiloguePassTraffic(w, profile).bytes;
  return t;
}

// The fused and unfused variants share a bias+ReLU workload, so the report can show what fusion
// saved: one whose C outgrows the caches and is quick to compute (K small), where C's extra
// round trip is a large part of the time. (At 1024^3 the pass costs about 2% and measured
// within noise.)
const std::vector<std::string> kFusionShapes = {"4096x4096x64 bias_relu"};
const std::vector<std::string> kQuickFusionShapes = {"1024x1024x32 bias_relu"};
const std::vector<std::string> kSquareShapes = {"256x256x256", "512x512x512", "1024x1024x1024",
                                                kFusionShapes[0]};
const std::vector<std::string> kQuickShapes = {"256x256x256", kQuickFusionShapes[0]};

template <bool kFused>
absl::Status Run(const Config& c, Problem& p, const RunContext& context) {
  return RunGemmF32(c, p, context, kFused);
}

// Both fp32 GEMMs search one space from one analytic start; they differ in where the epilogue
// runs (fused into the final store, or a pass of its own over C).
template <bool kFused>
Kernel GemmF32(const char* name, const char* description, std::vector<Epilogue> epilogues) {
  Kernel kernel(name);
  kernel.Describe(description)
      .Computes(Op::kGemm, {Dtype::kF32}, std::move(epilogues))
      .Tunes(GemmF32Space())
      .StartsFrom(&GemmF32InitialConfig)
      .Moves(kFused ? &Model : &UnfusedModel)
      .Prepares(&PrepareCall<kFused>)
      .ReadsWeightsFromTheCallAs(&GemmF32WithBFromEachCall)
      .Runs(&Run<kFused>)
      .NarrowsTo("gemm_s8");
  return kernel;
}

}  // namespace

ROOFTUNE_REGISTER_KERNEL(
    GemmF32<true>("gemm_f32",
                  "fp32 GEMM: BLIS-style five loops, packed A and B, Highway MR x NR "
                  "micro-kernel, bias+ReLU fused into the final store",
                  kAllEpilogues)
        .ByDefaultOn(kSquareShapes, kQuickShapes));

ROOFTUNE_REGISTER_KERNEL(
    GemmF32<false>("gemm_f32_unfused",
                   "gemm_f32 with the bias+ReLU epilogue as a separate pass over C",
                   {Epilogue::kBias, Epilogue::kBiasRelu})
        .SeparatesEpilogueOf("gemm_f32")
        .ByDefaultOn(kFusionShapes, kQuickFusionShapes));

}  // namespace rooftune
