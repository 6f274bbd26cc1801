// Registers the blocked fp32 GEMM twice: with the bias+ReLU epilogue fused into the micro-kernel's
// final store, and unfused (a separate pass over C), so that reports can show what fusion saves.
#include <algorithm>
#include <cmath>

#include "framework/kernel.h"
#include "framework/roofline.h"
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

// PACKB's choices are listed in kernels::BPacking's order, so that a code is the enum's value.
constexpr int64_t kBInPlace = int64_t(kernels::BPacking::kInPlace);
constexpr int64_t kBFirstUse = int64_t(kernels::BPacking::kOnFirstUse);

ParamSpace GemmF32Space() {
  ParamSpace space;
  space.Add("MR", {4, 6, 8, 12}, "rows of the register block")
      .Add("NR", {8, 16, 24, 32, 48, 64}, "columns of the register block (a multiple of the vector)")
      .Add("KC", {32, 64, 128, 160, 192, 256, 320, 384, 512, 768, 1024},
           "depth of a packed panel (the micro-panel of A or of B kept in L1)")
      .Add("MC",
           {24, 48, 72, 96, 120, 144, 192, 240, 288, 384, 480, 576, 768, 1152, 1536, 2304, 3072},
           "rows of the packed A block (kept in L2, or in L3 when INNER=jr)")
      .Add("NC", {192, 256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192, 12288},
           "columns of the packed B block (kept in L3, or in L2 when INNER=jr)")
      .AddChoice("INNER", {"ir", "jr"},
                 "innermost loop around the micro-kernel: ir (a KC x NR micro-panel of B stays in "
                 "L1, as in BLIS) or jr (an MR x KC micro-panel of A stays in L1, B streams from "
                 "L2)")
      .AddChoice("PAR", {"rows", "columns"},
                 "loop the threads split: rows (ic, B shared) or columns (jc, B each thread's own)")
      .AddChoice("PACKA", {"in_place", "packed"},
                 "A read in place, or its blocks packed into MR-row panels")
      .AddChoice("PACKB", {"in_place", "ahead", "first_use"},
                 "B read in place, packed into NR-column panels ahead of use, or each micro-panel "
                 "packed as its first tile reads it in place (no separate pass)")
      .AddChoice("PREFETCHB", {"off", "on"},
                 "fetch the next micro-panel of B into L1 during this one (for B streamed from "
                 "memory, as in decode shapes)")
      .OnlyWhen("PACKB=in_place", [](const Config& c) { return c.Get("PACKB") == kBInPlace; })
      .Require("MR x NR is a micro-kernel of this CPU's Highway target",
               [](const Config& c) { return HasMicroKernel(int(c.Get("MR")), int(c.Get("NR"))); })
      .Require("MC % MR == 0", [](const Config& c) { return c.Get("MC") % c.Get("MR") == 0; })
      .Require("NC % NR == 0", [](const Config& c) { return c.Get("NC") % c.Get("NR") == 0; })
      .Require("PACKB=first_use only with PAR=columns (threads sharing B would race to pack it)",
               [](const Config& c) { return c.Get("PACKB") != kBFirstUse || c.Get("PAR") == 1; });
  return space;
}

// A config and the kernel's blocking are the same facts: BlockingOf decodes one for the run and the
// traffic model, ConfigOf encodes the initial config's.
GemmF32Blocking BlockingOf(const Config& c, bool fused) {
  GemmF32Blocking b;
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
  b.prefetch_b = c.Get("PREFETCHB") == 1;
  return b;
}

Config ConfigOf(const GemmF32Blocking& b) {
  using kernels::ParallelLoop;
  return Config{{"MR", b.mr},
                {"NR", b.nr},
                {"KC", b.kc},
                {"MC", b.mc},
                {"NC", b.nc},
                {"PAR", b.parallel == ParallelLoop::kJc ? 1 : 0},
                {"INNER", b.jr_innermost ? 1 : 0},
                {"PACKA", b.pack_a ? 1 : 0},
                {"PACKB", int64_t(b.pack_b)},
                {"PREFETCHB", b.prefetch_b ? 1 : 0}};
}

// Capacity as measured (else as the OS reports it); associativity and line from the OS.
kernels::CacheGeometry GeometryOf(const MachineProfile& profile, int level) {
  const std::optional<uint64_t> capacity = profile.EffectiveCacheBytes(level);
  if (!capacity) return {};
  std::optional<CacheLevel> cache = profile.DataCache(level);
  kernels::CacheGeometry g{*capacity, cache ? std::max(cache->ways, 1) : 8,
                           cache ? cache->line_bytes : 64};
  // A shared cache the OS reports is shared: plan for this core's part of it. (A measured size
  // already is what this core sees.)
  if (profile.measured_levels.empty() && cache && cache->shared_by_cpus > 1) {
    g.size_bytes /= uint64_t(cache->shared_by_cpus);
  }
  return g;
}

constexpr double kRowPanelsToPackSharedB = 128;
constexpr double kColumnPanelsToSplitColumns = 4;

// The largest block size in `param`'s domain, a multiple of `multiple`, within `bound`, whose
// blocks of `extent` the threads share at least 90% evenly (else the most evenly shared one).
// With `extent` 0 (a loop the threads do not split) simply the largest within the bound.
int64_t BalancedBlock(const Param& param, double bound, int64_t multiple, int64_t extent,
                      int threads) {
  const int64_t largest = param.LargestNotAbove(bound, [&](int64_t v) { return v % multiple == 0; });
  if (extent == 0) return largest;
  int64_t most_even = largest, largest_even = -1;
  double best_balance = -1;
  for (int64_t v : param.domain) {
    if (v % multiple != 0 || double(v) > bound) continue;
    const double blocks = std::ceil(double(extent) / v);
    const double balance = (double(extent) / threads) / (std::ceil(blocks / threads) * v);
    if (balance >= 0.9 && v > largest_even) largest_even = v;
    if (balance > best_balance) best_balance = balance, most_even = v;
  }
  return largest_even > 0 ? largest_even : most_even;
}

Config GemmF32InitialConfig(const Workload& w, int threads, const MachineProfile& profile) {
  kernels::GemmMachine machine;
  machine.vector_registers = kernels::GemmF32VectorRegisters();
  machine.lanes = kernels::GemmF32VectorLanes();
  machine.micro_kernels = kernels::GemmF32MicroKernels();
  machine.l1 = GeometryOf(profile, 1);
  machine.l2 = GeometryOf(profile, 2);
  machine.l3 = GeometryOf(profile, 3);
  // With few row panels a B micro-panel read from L2 would serve too few A micro-panels, and a
  // packed copy of B would be reused too little to repay the copy: read B in place instead. With
  // one or two column panels A's micro-panel serves too few tiles to be worth keeping in L1: KC
  // follows B's block in L2 (tuned on 4096x64x4096, 1 and 2 threads, two hosts: KC = 1024, the
  // largest tried, against the L1 rule's 384).
  const GemmF32Blocking a_in_l1 = kernels::AnalyticBlocking(machine);
  const bool few_rows = std::ceil(double(w.m) / a_in_l1.mr) <= 4;
  const bool few_columns = std::ceil(double(w.n) / a_in_l1.nr) <= kernels::kFewColumnPanels;
  const GemmF32Blocking analytic = few_rows      ? kernels::BlockingForFewRows(machine, w.m)
                                   : few_columns ? kernels::BlockingForFewColumns(machine, w.n)
                                                 : a_in_l1;
  const int64_t mr = analytic.mr, nr = analytic.nr;
  auto round_up = [](double x, int64_t multiple) { return std::ceil(x / multiple) * multiple; };

  static const ParamSpace space = GemmF32Space();
  GemmF32Blocking b = analytic;  // the register block, the loop order and the B prefetch
  b.kc = int(space.Find("KC")->LargestNotAbove(analytic.kc));
  // Threads split the jc loop, with NC small enough that every thread gets a block, when each
  // thread gets at least kColumnPanelsToSplitColumns column panels: it then packs and reads its
  // own B, and waits for no one, while every micro-panel of A it fetches still serves that many
  // tiles. With fewer columns, the ic loop, when every thread gets at least 16 register blocks of
  // rows: the threads pack each B block together and wait for each other before using it, which
  // few rows per thread do not repay (64x4096x4096, 2 threads: jc, 1.76x the ic split with 32
  // rows each). Otherwise jc. Tuned with 2 threads on a Xeon with 2 MiB of L2 (120-150 s a
  // shape), 8 shapes: jc for 512^3 and 512x512x4096 (4 panels of 64 a thread), 1024^3, 2048^3
  // and the short-M shapes; ic for 256^3 (2 panels a thread) and 4096x64x4096. On 2048^3 jc
  // configs ran 1.08-1.10x the best ic ones (scratch A/B).
  const double rows_per_thread = round_up(double(w.m) / threads, mr);
  const bool split_columns = double(w.n) / threads >= kColumnPanelsToSplitColumns * nr;
  const bool split_rows = threads == 1 || (!split_columns && rows_per_thread >= 16.0 * mr);
  const double mc = split_rows ? std::min<double>(analytic.mc, rows_per_thread) : analytic.mc;
  // Split rows get an MC the threads share evenly. Every thread gets its columns as one block
  // where the analytic bound allows it: the smallest NC at or above its share (all of N, or N over
  // the threads when they split columns), which the kernel evens out (ColumnBlockForThreads);
  // beyond the bound, the largest NC within it, evened out the same way. Long blocks matter with B
  // read in place (decode shapes), where NC also sets how long each row's run is (8x4096x4096,
  // NR = 48: on two threads, scratch A/B, one block of 2064 columns a thread 180 GFLOP/s, blocks
  // of 1536 150, of 768 138, of 192 102; on one thread, cold, the tuner's one block of 4096
  // 1.19x two of 2064).
  const Param& nc_param = *space.Find("NC");
  auto multiple_of_nr = [&](int64_t v) { return v % nr == 0; };
  const double share = round_up(double(w.n) / (split_rows ? 1 : threads), nr);
  int64_t nc = nc_param.LargestNotAbove(std::min<double>(analytic.nc, share), multiple_of_nr);
  for (int64_t v : nc_param.domain) {
    if (multiple_of_nr(v) && double(v) >= share && double(v) <= analytic.nc) {
      nc = v;
      break;
    }
  }
  b.mc = int(
      BalancedBlock(*space.Find("MC"), mc, mr, split_rows && threads > 1 ? w.m : 0, threads));
  b.nc = int(nc);
  // One thread runs the same loops either way; PAR=columns there lets B be packed on first use.
  const bool share_b = split_rows && threads > 1;
  b.parallel = share_b ? kernels::ParallelLoop::kIc : kernels::ParallelLoop::kJc;
  // Packing an operand costs one extra read and write of it; it repays that when the packed copy
  // is re-read from a far cache by more than a few register blocks: B by the M/MR row panels (see
  // few_rows), A by the N/NR column panels, but only with ir innermost. With jr innermost an
  // MR x KC micro-panel of A is read once into L1 and stays there for every column panel, so a
  // packed copy saves nothing (scratch A/B, 2048^3 on one thread: 147 GFLOP/s in place, 129
  // packed; 512x512x4096: 116 against 104).
  b.pack_a = !analytic.jr_innermost && std::ceil(double(w.n) / nr) > 4;
  // B is packed on first use unless threads share it: the copy then rides on the first tile's
  // read instead of taking a pass of its own (scratch A/B, 64x4096x4096, one thread: 101-112
  // GFLOP/s against 97-104 packed ahead; two threads: 176 against 162). A shared B is packed
  // ahead only when enough row panels re-read the copy to repay that pass and the threads'
  // wait for it; reading B in place costs each of them only a little more. (Tuned with two
  // threads splitting rows, on a Xeon with 2 MiB of L2: B stayed in place for 43 and 85 row
  // panels, 256^3, 512^3 and 512x512x4096, and was packed for 171 and more, 1024^3, 2048^3,
  // 4096x64x4096; the middle four now split columns, where each thread packs its own B.)
  const bool pack_shared_b = std::ceil(double(w.m) / mr) >= kRowPanelsToPackSharedB;
  using kernels::BPacking;
  b.pack_b = few_rows  ? BPacking::kInPlace
             : share_b ? (pack_shared_b ? BPacking::kAhead : BPacking::kInPlace)
                       : BPacking::kOnFirstUse;
  const Config c = space.WithUnusedAtRest(ConfigOf(b));
  if (!space.Validate(c).ok()) return space.FirstValid();
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
        .NarrowsTo("gemm_s8")
        .ByDefaultOn(kSquareShapes, kQuickShapes));

ROOFTUNE_REGISTER_KERNEL(
    Kernel("gemm_f32_unfused")
        .Describe("gemm_f32 with the bias+ReLU epilogue as a separate pass over C")
        .Computes(Op::kGemm, {Dtype::kF32}, {Epilogue::kBias, Epilogue::kBiasRelu})
        .Tunes(GemmF32Space())
        .StartsFrom(&GemmF32InitialConfig)
        .Moves(&UnfusedModel)
        .Runs([](const Config& c, Problem& p, const RunContext&) {
          return RunGemmF32(c, p, false);
        })
        .SeparatesEpilogueOf("gemm_f32")
        .NarrowsTo("gemm_s8")
        .ByDefaultOn(kFusionShapes, kQuickFusionShapes));

}  // namespace rooftune
