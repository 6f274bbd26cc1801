// Registers the blocked fp32 GEMM twice: with the bias+ReLU epilogue fused into the micro-kernel's
// final store, and unfused (a separate pass over C), so that reports can show what fusion saves.
#include <algorithm>
#include <cmath>

#include "framework/kernel.h"
#include "kernels/gemm_f32/blocking.h"
#include "kernels/gemm_f32/gemm_f32.h"
#include "plugins/builtin/gemm_f32_traffic.h"

namespace rooftune {
namespace {

using kernels::GemmF32Blocking;

bool HasMicroKernel(int mr, int nr) {
  static const std::vector<kernels::MicroKernelShape> shapes = kernels::GemmF32MicroKernels();
  return std::any_of(shapes.begin(), shapes.end(),
                     [&](const auto& s) { return s.mr == mr && s.nr == nr; });
}

ParamSpace GemmF32Space() {
  ParamSpace space;
  space.Add("MR", {4, 6, 8, 12}, "rows of the register block")
      .Add("NR", {8, 16, 24, 32, 48, 64}, "columns of the register block (a multiple of the vector)")
      .Add("KC", {64, 128, 192, 256, 384, 512}, "depth of a packed panel (B micro-panel in L1)")
      .Add("MC", {24, 48, 72, 96, 120, 144, 192, 240, 288, 384, 480, 576},
           "rows of the packed A block (kept in L2)")
      .Add("NC", {192, 384, 768, 1536, 3072, 6144, 12288}, "columns of the packed B block (kept in L3)")
      .Add("PAR", {0, 1}, "loop the threads split: 0 = ic (rows, B shared), 1 = jc (columns)")
      .Require("MR x NR is a micro-kernel of this CPU's Highway target",
               [](const Config& c) { return HasMicroKernel(int(c.Get("MR")), int(c.Get("NR"))); })
      .Require("MC % MR == 0", [](const Config& c) { return c.Get("MC") % c.Get("MR") == 0; })
      .Require("NC % NR == 0", [](const Config& c) { return c.Get("NC") % c.Get("NR") == 0; });
  return space;
}

GemmF32Blocking BlockingOf(const Config& c, bool fused) {
  GemmF32Blocking b;
  b.mr = int(c.Get("MR"));
  b.nr = int(c.Get("NR"));
  b.kc = int(c.Get("KC"));
  b.mc = int(c.Get("MC"));
  b.nc = int(c.Get("NC"));
  b.parallel = c.Get("PAR") == 1 ? kernels::ParallelLoop::kJc : kernels::ParallelLoop::kIc;
  b.fuse_epilogue = fused;
  return b;
}

kernels::CacheGeometry GeometryOf(const MachineProfile& profile, int level) {
  std::optional<CacheLevel> cache = profile.DataCache(level);
  if (!cache) return {};
  kernels::CacheGeometry g{cache->size_bytes, std::max(cache->ways, 1), cache->line_bytes};
  // A shared cache is shared: plan for this core's part of it.
  if (cache->shared_by_cpus > 1) g.size_bytes /= uint64_t(cache->shared_by_cpus);
  return g;
}

// Nearest value of a domain in log scale, among those `accept` allows.
int64_t Nearest(const Param& p, double target, const std::function<bool(int64_t)>& accept) {
  int64_t best = -1;
  double best_distance = 1e300;
  for (int64_t v : p.domain) {
    if (!accept(v)) continue;
    const double d = std::abs(std::log(double(v) / std::max(target, 1.0)));
    if (d < best_distance) best_distance = d, best = v;
  }
  return best;
}

Config GemmF32InitialConfig(const Workload& w, int threads, const MachineProfile& profile) {
  kernels::GemmMachine machine;
  machine.vector_registers = kernels::GemmF32VectorRegisters();
  machine.lanes = kernels::GemmF32VectorLanes();
  machine.micro_kernels = kernels::GemmF32MicroKernels();
  machine.l1 = GeometryOf(profile, 1);
  machine.l2 = GeometryOf(profile, 2);
  machine.l3 = GeometryOf(profile, 3);
  const GemmF32Blocking analytic = kernels::AnalyticBlocking(machine);

  static const ParamSpace space = GemmF32Space();
  Config c;
  c.Set("MR", analytic.mr);
  c.Set("NR", analytic.nr);
  c.Set("KC", Nearest(*space.Find("KC"), analytic.kc, [](int64_t) { return true; }));
  c.Set("MC", Nearest(*space.Find("MC"), analytic.mc,
                      [&](int64_t v) { return v % analytic.mr == 0; }));
  c.Set("NC", Nearest(*space.Find("NC"), std::min<double>(analytic.nc, double(w.n)),
                      [&](int64_t v) { return v % analytic.nr == 0; }));
  // Split rows when there are enough MC blocks for every thread, else columns.
  const bool rows_suffice = double(w.m) >= double(c.Get("MC")) * threads;
  c.Set("PAR", threads > 1 && !rows_suffice ? 1 : 0);
  if (!space.Validate(c).ok()) return space.Enumerate().front();
  return c;
}

absl::Status RunGemmF32(const Config& config, Problem& p, bool fused) {
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
  return kernels::GemmF32(args, BlockingOf(config, fused));
}

Traffic Model(const Workload& w, const Config& c, int threads, const MachineProfile& profile) {
  return GemmF32Traffic(w, BlockingOf(c, true), threads, profile);
}

const std::vector<std::string> kSquareShapes = {"256x256x256", "512x512x512", "1024x1024x1024"};
const std::vector<std::string> kQuickShapes = {"256x256x256"};

}  // namespace

ROOFTUNE_REGISTER_KERNEL(
    Kernel("gemm_f32")
        .Describe("fp32 GEMM: BLIS-style five loops, packed A and B, Highway MR x NR "
                  "micro-kernel, bias+ReLU fused into the final store")
        .Computes(Op::kGemm, {Dtype::kF32}, kAllEpilogues)
        .Tunes(GemmF32Space())
        .StartsFrom(&GemmF32InitialConfig)
        .Moves(&Model)
        .Runs([](const Config& c, Problem& p, const RunContext&) { return RunGemmF32(c, p, true); })
        .ByDefaultOn(kSquareShapes, kQuickShapes));

ROOFTUNE_REGISTER_KERNEL(
    Kernel("gemm_f32_unfused")
        .Describe("gemm_f32 with the bias+ReLU epilogue as a separate pass over C")
        .Computes(Op::kGemm, {Dtype::kF32}, {Epilogue::kBias, Epilogue::kBiasRelu})
        .Tunes(GemmF32Space())
        .StartsFrom(&GemmF32InitialConfig)
        .Moves(&Model)
        .Runs([](const Config& c, Problem& p, const RunContext&) { return RunGemmF32(c, p, false); }));

}  // namespace rooftune
