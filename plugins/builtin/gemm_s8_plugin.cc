// Registers the int8 GEMM (u8 x s8 -> s32, or dequantised f32 with bias and ReLU). Its weights are
// packed in the prepare step, once per config and problem, outside every timing.
#include <algorithm>
#include <cmath>

#include "framework/kernel.h"
#include "kernels/amx.h"
#include "kernels/gemm_s8/gemm_s8.h"
#include "plugins/builtin/gemm_s8_config.h"

namespace rooftune {
namespace {

using kernels::S8Path;

}  // namespace

ParamSpace GemmS8Space() {
  ParamSpace space;
  // PATH's choices are listed in S8Path's order, so that a code is the enum's value.
  auto path_is_amx = [](const Config& c) { return S8Path(c.Get("PATH")) == S8Path::kAmx; };
  space
      .AddChoice("PATH", {"exact", "fast", "amx"},
                 "exact (s16 pairs, vpmaddwd); fast (vpdpbusd, or vpmaddubsw where eligible); "
                 "amx (tiles, TDPBUSD, exact; 32 x 32 blocks)")
      .Add("MR", {4, 6, 8},
           "rows of the register block (columns: 2 vectors of s32; 4 where 32 registers hold "
           "the sums, MR 4 and 6)")
      .OnlyWhen("PATH is not amx", [=](const Config& c) { return !path_is_amx(c); })
      .Add("MC", {24, 32, 48, 64, 96, 128, 192, 384}, "rows of A packed per block (kept in L2)")
      .AddChoice("PAR", {"rows", "columns"},
                 "loop the threads split: rows (row blocks) or columns (column panels)")
      .Add("KC", {128, 256, 512, 768, 1024, 2048, 4096, 8192, 16384},
           "the K slice (KC >= K: all of K): AMX keeps a 32 x KC micro-panel of A in L1; the "
           "vector paths keep a tile column's KC-deep slice of B in L2 across the row tiles")
      .Add("NC", {64, 128, 256, 512, 1024, 2048, 4096},
           "columns of the KC x NC block of B kept in L2 (NC >= N: all columns)")
      .OnlyWhen("PATH=amx", path_is_amx)
      .Require("MC % MR == 0", {"MC", "MR"},
               [](const Config& c) { return c.Get("MC") % c.Get("MR") == 0; })
      .Require("PATH=amx needs AMX int8 (CPU and OS)", {"PATH"},
               [=](const Config& c) { return !path_is_amx(c) || kernels::AmxInt8Available(); })
      .Require("PATH=amx blocks are 32 rows: MC % 32 == 0", {"PATH", "MC"},
               [=](const Config& c) { return !path_is_amx(c) || c.Get("MC") % 32 == 0; });
  return space;
}

GemmS8Choice GemmS8ChoiceOf(const Config& c) {
  GemmS8Choice d;
  d.path = S8Path(c.Get("PATH"));
  d.blocking.mr = int(c.Get("MR"));
  d.blocking.mc = int(c.Get("MC"));
  d.blocking.parallel = c.Get("PAR") == 1 ? kernels::ParallelLoop::kJc : kernels::ParallelLoop::kIc;
  d.blocking.kc = int(c.Get("KC"));
  d.blocking.nc = int(c.Get("NC"));
  return d;
}

Config ConfigOf(const GemmS8Choice& d) {
  static const ParamSpace space = GemmS8Space();
  const kernels::GemmS8Blocking& b = d.blocking;
  return space.WithUnusedAtRest(Config{{"PATH", int64_t(d.path)},
                                       {"MR", b.mr},
                                       {"MC", b.mc},
                                       {"PAR", b.parallel == kernels::ParallelLoop::kJc ? 1 : 0},
                                       {"KC", b.kc},
                                       {"NC", b.nc}});
}

namespace {

absl::StatusOr<Prepared> PackWeights(const Config& c, const Problem& p) {
  const Workload& w = p.workload;
  absl::StatusOr<kernels::PackedWeightsS8> packed =
      kernels::PackWeightsS8(p.b_s8.data(), w.k, w.n, p.ldb, GemmS8ChoiceOf(c).path);
  if (!packed.ok()) return packed.status();
  auto weights = std::make_shared<kernels::PackedWeightsS8>(*std::move(packed));
  std::vector<ByteSpan> streamed = weights->StreamedBytes();
  return Prepared{std::move(weights), std::move(streamed)};
}

absl::Status RunGemmS8(const Config& c, Problem& p, const RunContext& context) {
  const Workload& w = p.workload;
  kernels::GemmS8Args g;
  g.m = w.m, g.n = w.n, g.k = w.k;
  g.a = p.a_u8.data();
  g.lda = p.lda;
  g.b = static_cast<const kernels::PackedWeightsS8*>(context.prepared);
  if (w.epilogue == Epilogue::kNone) {
    g.c = p.c_s32.data();
    g.ldc = p.ldc;
  } else {
    g.y = p.c.data();
    g.ldy = p.ldc;
    g.scale_a = p.scale_a;
    g.zero_point_a = p.zero_point_a;
    g.scale_b = p.scale_b.data();
    g.bias = p.bias.data();
    g.relu = w.epilogue == Epilogue::kBiasRelu;
  }
  return kernels::GemmS8(g, GemmS8ChoiceOf(c).blocking);
}

// Derivation. As for the fp32 GEMM (gemm_f32_traffic.cc): bytes filled into each level from the
// next one out, write-backs left out (a lower bound stays legal). a = M*K (u8), b = the packed
// weights (K*N bytes; 2 per weight on the exact path), out = 4*M*N (s32 or f32); A is packed at
// b's width. An operand traversed again after `reuse` bytes of other traffic is re-read from the
// nearest level that holds `reuse` (cache sizes as measured, else sysfs); counting its re-reads at
// every farther level would call a kernel whose weights stay in L2 L3-bound.
//
// AMX (PATH=amx), loops ic (MC rows) > jc (NC columns) > pc (KC slice) > 32-row block > 32-column
// panel; with the columns split (PAR=columns), A packed whole once and each thread's loops jc > pc
// > all 32-row blocks > panel.
//   L1 -> tiles: A once per panel, B once per 32-row block, C once, partial sums out and back
//     between KC slices (2 * 4 bytes per output per extra slice).
//   L2 -> L1: the 32 x KC micro-panel of A stays in L1 across the panels of a block (A once per
//     NC block) unless it and two B micro-panels overflow L1 (then once per panel); B's
//     micro-panels come from L2 for every 32-row block unless the whole KC x NC block fits in L1.
//   L3 -> L2: the KC x NC block of B stays in L2 across the row blocks unless it and the A block
//     overflow L2 (then once per 32-row block); all of B is traversed again for every MC block
//     (row split) and stays in L2 only when B and the A block fit. A's packed block is re-read
//     for every NC block unless it fits beside B's block; the partial sums spill past L2 when
//     their buffer does not fit.
//   DRAM -> L3: every operand once; B again per MC block, or A per NC block (column split), when
//     what is traversed between two uses outgrows the last level.
// Other paths (register blocks of MR x NR, NR = GemmS8PanelColumns() or twice it where the kernel
// spans two panels): loops ic (MC rows, A block packed, or read in place on the fast path when K
// is whole groups of 4) > NR columns > pc (KC slice) > MR rows; with the columns split, A packed
// whole and each NR columns' slices run over every row block. The sums of a tile column's tiles
// are carried between slices.
//   L1 -> registers: A once per NR columns, B once per MR rows, C once, the sums out and back
//     for every slice after the first.
//   L2 -> L1: the KC x NR slice of B stays in L1 across the row tiles when it fits beside two A
//     micro-panels; A's micro-panels come from L2 for every NR columns unless A's block fits in
//     L1, plus one read of A where it is packed; the sums, unless they and the slices of A and B
//     that pass between their uses fit in L1.
//   L3 -> L2: B's slice comes from L3 for every MR rows when it and two A micro-panels overflow
//     L2 (all of a deep K: a 64 x 8192 x 32768 product read its 2 MiB panels from L3 for
//     every row tile), else as for AMX (again per MC block unless B and the A block fit); A again
//     per NR columns unless the A block and two panels of B fit; the sums, as at L1.
//   DRAM -> L3: as for AMX, with the B panel and the A block in place of the blocks.
Traffic GemmS8Traffic(const Workload& w, const Config& c, int threads,
                      const MachineProfile& profile) {
  const double m = double(w.m), n = double(w.n), k = double(w.k);
  const GemmS8Choice choice = GemmS8ChoiceOf(c);
  const kernels::GemmS8Blocking& blocking = choice.blocking;
  // Bytes per packed value (s16 / u16 pairs on the exact path).
  const double width = choice.path == S8Path::kExact ? 2 : 1;
  const double a = m * k, a_packed = width * a, b = width * k * n, out = 4 * m * n;
  auto passes = [](double dim, double block) { return std::ceil(dim / std::max(block, 1.0)); };
  auto cache = [&](int level) { return double(profile.PricedCacheBytes(level).value_or(0)); };
  const double l1 = cache(1), l2 = cache(2), l3 = cache(3);
  // `bytes` read `times` times over, each time after `reuse` bytes: once from a level that holds
  // `reuse`, every time from one that does not.
  auto reads = [](double bytes, double times, double reuse, double capacity) {
    return reuse <= capacity ? bytes : bytes * times;
  };
  const bool split_columns = choice.split_columns();
  const double mc = std::min(m, double(blocking.mc));
  // The rows of packed A a block of B meets in turn (all of them when the columns are split).
  const double rows = split_columns ? m : mc;
  Traffic t;
  if (choice.path == S8Path::kAmx) {
    const double panels = passes(n, 32);
    double nc = std::min(n, std::max(32.0, std::floor(double(blocking.nc) / 32) * 32));
    if (split_columns) nc = std::min(nc, 32 * passes(panels, std::max(threads, 1)));
    const double kc = std::min(k, std::max(64.0, std::floor(double(blocking.kc) / 64) * 64));
    const double slices = passes(k, kc);
    const double partial = 2 * 4 * m * n * (slices - 1);
    const double a_micro_panel = 32 * kc, b_micro_panel = 32 * kc, b_block = kc * nc;
    const double a_block = rows * k;
    t[MemoryLevel::kL1] = a * passes(n, 32) + b * passes(m, 32) + out + partial;
    const double a_to_l1 =
        a_micro_panel + 2 * b_micro_panel <= l1 ? a * passes(n, nc) : a * passes(n, 32);
    const double b_to_l1 = b_block + a_micro_panel <= l1 ? b * passes(m, rows) : b * passes(m, 32);
    t[MemoryLevel::kL2] = a_to_l1 + b_to_l1 + out + partial;
    const double b_to_l2 = b_block + a_block * kc / k > l2
                               ? b * passes(m, 32)
                               : reads(b, passes(m, rows), b + a_block, l2);
    const double a_to_l2 = reads(a, passes(n, nc), a_block + b_block, l2);
    const double partial_to_l2 = 4 * rows * nc <= l2 ? 0 : partial;
    t[MemoryLevel::kL3] = a_to_l2 + b_to_l2 + out + partial_to_l2;
    t[MemoryLevel::kDram] = (split_columns ? reads(a, passes(n, nc), a_block + b_block, l3) : a) +
                            (split_columns ? b : reads(b, passes(m, mc), b + a_block, l3)) + out;
    return t;
  }
  const double mr = double(blocking.mr);
  // A tile's columns: one panel of B, or two where the kernel spans two (GemmS8Target).
  const double panel_nr = kernels::GemmS8PanelColumns();
  const double nr = panel_nr * kernels::GemmS8TilePanels(kernels::GemmS8SpansTwoPanels(blocking.mr),
                                                         int64_t(passes(n, panel_nr)),
                                                         split_columns, std::max(threads, 1));
  // Packing A reads it once more, unless the fast path reads its rows in place (K whole groups).
  const double a_packing = kernels::GemmS8ReadsAInPlace(choice.path, w.k) ? 0 : a;
  // The K slice (kernel's rule, GemmS8SliceGroups) and the sums carried between slices.
  const double group = choice.path == S8Path::kExact ? 2 : 4;
  const double kc =
      std::min(k, group * double(kernels::GemmS8SliceGroups(blocking.kc, int64_t(group),
                                                            int64_t(passes(k, group) * group))));
  const double partial = 2 * 4 * m * n * (passes(k, kc) - 1);
  const double b_panel = k * nr * width, b_slice = kc * nr * width;
  const double a_block = width * rows * k, a_slice = width * rows * kc;
  // What passes between two uses of a tile's sums: the block's sums, A's and B's slices.
  const double partial_reuse = 4 * rows * nr + a_slice + b_slice;
  t[MemoryLevel::kL1] = a_packed * passes(n, nr) + b * passes(m, mr) + out + partial;
  const double b_to_l1 =
      b_slice + 2 * width * mr * kc <= l1 ? b * passes(m, rows) : b * passes(m, mr);
  const double a_to_l1 = a_packing + reads(a_packed, passes(n, nr), a_block + b_panel, l1);
  const double partial_to_l1 = partial > 0 && partial_reuse > l1 ? partial : 0;
  t[MemoryLevel::kL2] = a_to_l1 + b_to_l1 + out + partial_to_l1;
  const bool b_slice_fits_l2 = b_slice + 2 * width * mr * kc <= l2;
  const double b_to_l2 = !b_slice_fits_l2 ? b * passes(m, mr)
                         : split_columns  ? b
                                          : reads(b, passes(m, mc), b + a_block, l2);
  const double a_to_l2 = a + (a_block + 2 * b_panel <= l2 ? 0 : a_packed * passes(n, nr));
  const double partial_to_l2 = partial > 0 && partial_reuse > l2 ? partial : 0;
  t[MemoryLevel::kL3] = a_to_l2 + b_to_l2 + out + partial_to_l2;
  t[MemoryLevel::kDram] = a + (split_columns ? b : reads(b, passes(m, mc), b + a_block, l3)) + out +
                          (split_columns && a_block > l3 ? a_packed * passes(n, nr) : 0);
  return t;
}

}  // namespace

ROOFTUNE_REGISTER_KERNEL(
    Kernel("gemm_s8")
        .Describe("int8 GEMM u8 x s8 -> s32, weights packed once; exact (vpmaddwd), fast "
                  "(vpdpbusd / vpmaddubsw) or AMX tile path; dequantised f32 epilogue with bias "
                  "and ReLU")
        .Computes(Op::kGemm, {Dtype::kU8S8}, kAllEpilogues)
        .Tunes(GemmS8Space())
        .ConfigSchema(2)  // 2: KC slices K on the vector paths too
        .StartsFrom(&GemmS8InitialConfig)
        .Prepares(&PackWeights)
        .Moves(&GemmS8Traffic)
        .Runs(&RunGemmS8)
        .ComparedWithF32("gemm_f32")
        .ByDefaultOn({"512x512x512", "1024x1024x1024"}, {"256x256x256"}));

}  // namespace rooftune
