// Registers the int8 GEMM (u8 x s8 -> s32, or dequantised f32 with bias and ReLU). Its weights are
// packed in the prepare step, once per config and problem, outside every timing.
#include <algorithm>
#include <cmath>

#include "framework/kernel.h"
#include "kernels/amx.h"
#include "kernels/gemm_s8/gemm_s8.h"

namespace rooftune {
namespace {

using kernels::S8Path;

ParamSpace GemmS8Space() {
  ParamSpace space;
  space.Add("MR", {4, 6, 8}, "rows of the register block (columns: 2 vectors of s32)")
      .Add("MC", {24, 32, 48, 64, 96, 128, 192, 384}, "rows of A packed per block (kept in L2)")
      .Add("PAR", {0, 1}, "loop the threads split: 0 = row blocks, 1 = column panels")
      .Add("PATH", {0, 1, 2},
           "0 = exact (s16 pairs, vpmaddwd); 1 = fast (vpdpbusd, or vpmaddubsw where eligible); "
           "2 = AMX tiles (TDPBUSD, exact; 32 x 32 blocks, MR unused)")
      .Add("KC", {128, 256, 512, 768, 1024, 2048, 4096},
           "AMX: the K slice whose 32 x KC micro-panel of A stays in L1 (KC >= K: all of K)")
      .Add("NC", {64, 128, 256, 512, 1024, 2048, 4096},
           "AMX: columns of the KC x NC block of B kept in L2 (NC >= N: all columns)")
      .Require("MC % MR == 0", [](const Config& c) { return c.Get("MC") % c.Get("MR") == 0; })
      .Require("PATH=2 needs AMX int8 (CPU and OS)",
               [](const Config& c) { return c.Get("PATH") != 2 || kernels::AmxInt8Available(); })
      .Require("PATH=2 blocks are 32 rows: MC % 32 == 0 and MR=8 (unused)", [](const Config& c) {
        return c.Get("PATH") != 2 || (c.Get("MC") % 32 == 0 && c.Get("MR") == 8);
      })
      .Require("KC and NC block the AMX path only (KC=128, NC=64 otherwise)", [](const Config& c) {
        return c.Get("PATH") == 2 || (c.Get("KC") == 128 && c.Get("NC") == 64);
      });
  return space;
}

Config GemmS8InitialConfig(const Workload& w, int threads, const MachineProfile& profile) {
  static const ParamSpace space = GemmS8Space();
  const Param& mc_domain = *space.Find("MC");
  if (kernels::AmxInt8Available()) {
    // The tile unit: exact on every input and the fastest path by far. MC: 32-row blocks, as
    // many as share the rows evenly between the threads.
    const double rows_per_thread = std::ceil(double(w.m) / threads / 32) * 32;
    const int64_t mc = mc_domain.LargestNotAbove(
        rows_per_thread, [](int64_t v) { return v % 32 == 0 && v <= 192; });
    const int64_t par = threads == 1 || w.m >= 64 * threads ? 0 : 1;
    // The 32 x KC micro-panel of A takes half of L1, the KC x NC block of B half of L2; with
    // the columns split, each thread's share of them is one block.
    const double l1 = double(profile.EffectiveCacheBytes(1).value_or(32 << 10));
    const double l2 = double(profile.EffectiveCacheBytes(2).value_or(1 << 20));
    const int64_t kc = space.Find("KC")->LargestNotAbove(l1 / 2 / 32);
    const double columns = par == 1 ? std::ceil(double(w.n) / threads / 32) * 32 : l2 / 2 / kc;
    const int64_t nc = space.Find("NC")->LargestNotAbove(columns);
    return Config{{"MR", 8}, {"MC", mc}, {"PAR", par}, {"PATH", 2}, {"KC", kc}, {"NC", nc}};
  }
  // The fast path is exact everywhere only with vpdpbusd; elsewhere start exact and let the tuner
  // try the fast one (it is refused where the inputs would saturate it).
  const int64_t mr = 6;
  const double rows_per_thread = std::ceil(double(w.m) / threads / mr) * mr;
  const int64_t mc = mc_domain.LargestNotAbove(
      rows_per_thread, [](int64_t v) { return v % mr == 0 && v <= 192; });
  const bool split_rows = threads == 1 || rows_per_thread >= 4 * mr;
  return Config{{"MR", mr},
                {"MC", mc},
                {"PAR", split_rows ? 0 : 1},
                {"PATH", kernels::GemmS8FastPathIsVnni() ? 1 : 0},
                {"KC", 128},
                {"NC", 64}};
}

absl::StatusOr<Prepared> PackWeights(const Config& c, const Problem& p) {
  const Workload& w = p.workload;
  absl::StatusOr<kernels::PackedWeightsS8> packed =
      kernels::PackWeightsS8(p.b_s8.data(), w.k, w.n, p.ldb, S8Path(c.Get("PATH")));
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
  kernels::GemmS8Blocking b;
  b.mr = int(c.Get("MR"));
  b.mc = int(c.Get("MC"));
  b.parallel = c.Get("PAR") == 1 ? kernels::ParallelLoop::kJc : kernels::ParallelLoop::kIc;
  b.kc = int(c.Get("KC"));
  b.nc = int(c.Get("NC"));
  return kernels::GemmS8(g, b);
}

Traffic GemmS8Traffic(const Workload& w, const Config& c, int, const MachineProfile&) {
  const double m = double(w.m), n = double(w.n), k = double(w.k);
  // Packed weights take 2 bytes per value on the exact path (s16), 1 on the others.
  const double a = m * k, b = k * n * (c.Get("PATH") == 0 ? 2 : 1), out = 4 * m * n;
  const double b_per_mc_block = b * std::ceil(m / double(c.Get("MC")));
  Traffic t;
  t[MemoryLevel::kDram] = a + b + out;
  t[MemoryLevel::kL3] = a + b_per_mc_block + out;
  if (c.Get("PATH") == 2) {
    // 32 x 32 blocks, jr innermost: a 32 x KC micro-panel of A is read into L1 once per block of
    // NC columns, each B micro-panel once per 32-row block; the KC x NC block of B is read into
    // L2 once per MC block. Between K slices C's partial sums (s32) go out and back.
    const double slices = std::ceil(k / double(c.Get("KC")));
    const double partial = 2 * 4 * m * n * (slices - 1);
    t[MemoryLevel::kL2] = a + b_per_mc_block + out + partial;
    t[MemoryLevel::kL1] =
        a * std::ceil(n / double(c.Get("NC"))) + b * std::ceil(m / 32) + out + partial;
    return t;
  }
  // Register blocks of MR x nr: A is re-read per nr-column panel, B per MR-row block.
  const double nr = kernels::GemmS8PanelColumns(), mr = double(c.Get("MR"));
  t[MemoryLevel::kL2] = a * std::ceil(n / nr) + b_per_mc_block + out;
  t[MemoryLevel::kL1] = a * std::ceil(n / nr) + b * std::ceil(m / mr) + out;
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
        .StartsFrom(&GemmS8InitialConfig)
        .Prepares(&PackWeights)
        .Moves(&GemmS8Traffic)
        .Runs(&RunGemmS8)
        .ByDefaultOn({"512x512x512", "1024x1024x1024"}, {"256x256x256"}));

}  // namespace rooftune
