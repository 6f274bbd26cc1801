// The fp32 GEMM's model of the machine: the analytic blocking follows the measured caches, the
// plugin's initial config picks packing and thread splits by the shape, and the traffic model
// prices what each block moves.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <random>
#include <set>
#include <vector>

#include "absl/strings/str_cat.h"
#include "framework/executor.h"
#include "framework/kernel.h"
#include "framework/machine_profile.h"
#include "framework/reference.h"
#include "framework/roofline.h"
#include "hwy/targets.h"
#include "kernels/code_paths.h"
#include "kernels/gemm_f32/blocking.h"
#include "kernels/gemm_f32/gemm_f32.h"
#include "kernels/gemm_f32/small.h"
#include "kernels/gemm_f32/tiled.h"
#include "plugins/builtin/gemm_f32_config.h"

namespace rooftune::kernels {
namespace {

TEST(AnalyticBlocking, FollowsTheCaches) {
  GemmMachine m;
  m.lanes = 8;
  m.vector_registers = 16;
  m.micro_kernels = {{6, 16}, {4, 24}, {8, 8}};
  m.l1 = {32 << 10, 8, 64};
  m.l2 = {512 << 10, 8, 64};
  m.l3 = {16 << 20, 16, 64};
  const GemmF32Blocking small = BlockingForBInL1(m);
  EXPECT_FALSE(small.jr_innermost);
  EXPECT_EQ(small.mc % small.mr, 0);
  EXPECT_EQ(small.nc % small.nr, 0);
  // KC x NR of B and MR x KC of A fit in L1.
  EXPECT_LE(uint64_t(small.kc) * (small.nr + small.mr) * 4, m.l1.size_bytes);
  // MC x KC of A fits in L2.
  EXPECT_LE(uint64_t(small.mc) * small.kc * 4, m.l2.size_bytes);

  // A's micro-panel in L1: it takes at most a quarter of L1, B's KC x NC block at most half of L2,
  // A's MC x KC block at most half of L3.
  const GemmF32Blocking a_in_l1 = AnalyticBlocking(m);
  EXPECT_TRUE(a_in_l1.jr_innermost);
  EXPECT_EQ(a_in_l1.mr, small.mr);
  EXPECT_LE(uint64_t(a_in_l1.kc) * a_in_l1.mr * 4, m.l1.size_bytes / 4);
  EXPECT_GT(uint64_t(a_in_l1.kc) * a_in_l1.mr * 4, m.l1.size_bytes / 8);
  EXPECT_LE(uint64_t(a_in_l1.kc) * a_in_l1.nc * 4, m.l2.size_bytes / 2);
  EXPECT_LE(uint64_t(a_in_l1.kc) * a_in_l1.mc * 4, m.l3.size_bytes / 2);
  EXPECT_GT(a_in_l1.kc, small.kc);  // the reason for this order: deeper panels

  m.l2.size_bytes *= 4;
  m.l3.size_bytes *= 4;
  const GemmF32Blocking big = BlockingForBInL1(m);
  EXPECT_GT(big.mc, small.mc);
  EXPECT_GT(big.nc, small.nc);
  const GemmF32Blocking big_a_in_l1 = AnalyticBlocking(m);
  EXPECT_GT(big_a_in_l1.mc, a_in_l1.mc);
  EXPECT_GT(big_a_in_l1.nc, a_in_l1.nc);
}

// An AVX-512 Xeon like the one these blocks were tuned on: 16 lanes, 32 registers, 48 KiB L1,
// 2 MiB L2.
GemmMachine Avx512Xeon() {
  GemmMachine m;
  m.lanes = 16;
  m.vector_registers = 32;
  m.micro_kernels = {{6, 64}, {8, 48}, {4, 48}, {12, 32}};
  m.l1 = {48 << 10, 12, 64};
  m.l2 = {2 << 20, 16, 64};
  m.l3 = {32 << 20, 16, 64};
  return m;
}

TEST(AnalyticBlocking, FewRowsReadBInPlaceWithTheLeastPadding) {
  const GemmMachine m = Avx512Xeon();
  const GemmF32Blocking eight = BlockingForFewRows(m, 8, BPacking::kInPlace);
  EXPECT_EQ(eight.mr, 8);   // 8 rows: no padding (6 would pad to 12)
  EXPECT_EQ(eight.nr, 48);  // fewer loads per FMA than 4 x 48, which pads no more
  EXPECT_EQ(eight.pack_b, BPacking::kInPlace);
  EXPECT_TRUE(eight.prefetch_b);
  EXPECT_FALSE(eight.jr_innermost);
  EXPECT_EQ(eight.mc, 8);
  // The micro-panel in use and the one being fetched share half of L1.
  EXPECT_LE(2 * uint64_t(eight.kc) * eight.nr * 4, m.l1.size_bytes / 2);
  EXPECT_GT(4 * uint64_t(eight.kc) * eight.nr * 4, m.l1.size_bytes / 2);
  // C's MC x NC block takes at most half of L2.
  EXPECT_LE(uint64_t(eight.mc) * eight.nc * 4, m.l2.size_bytes / 2);
  EXPECT_EQ(eight.nc % eight.nr, 0);

  for (BPacking b : {BPacking::kInPlace, BPacking::kPrepared}) {
    EXPECT_EQ(BlockingForFewRows(m, 1, b).mr, 4);
    EXPECT_EQ(BlockingForFewRows(m, 40, b).mr, 8);  // 6 would pad to 42, 12 to 48
  }
  // 6, 8, 12 all fit 24 exactly: in place 6 x 64, the fewest loads per FMA.
  EXPECT_EQ(BlockingForFewRows(m, 24, BPacking::kInPlace).mr, 6);
}

// A prepared B is re-read by every row panel: of the blocks that pad M the least, the fewest
// panels; a block with more loads than FMAs (16 x 16) only where it takes every row at once.
TEST(AnalyticBlocking, FewRowsWithPreparedBTakeTheFewestPanels) {
  GemmMachine m = Avx512Xeon();
  m.micro_kernels.push_back({16, 16});
  auto mr = [&](int64_t rows) { return BlockingForFewRows(m, rows, BPacking::kPrepared).mr; };
  EXPECT_EQ(mr(24), 12);  // 12 x 32 in two panels, not 8 x 48 in three or 6 x 64 in four
  EXPECT_EQ(mr(48), 12);  // four panels; 16 x 16's three would each be bound by their loads
  EXPECT_EQ(mr(16), 16);  // one panel: nothing of B is re-read
  EXPECT_EQ(mr(32), 8);   // 16 x 16 would take two panels; 12 x 32 pads to 36
  EXPECT_EQ(mr(8), 8);
  // B read in place keeps the fewest loads per FMA: 8 x 48 over 16 rows.
  EXPECT_EQ(BlockingForFewRows(m, 16, BPacking::kInPlace).mr, 8);
}

// Prepared B streams once in the tiles' order and is fetched ahead. One row panel re-reads
// nothing of B but C at every KC block: KC as deep as A's micro-panel fits half of L2. Two row
// panels re-read B's micro-panel: it takes half of L2, or of L1 where L2 is unknown (twice the
// KC of B read in place, which shares that half with the next micro-panel).
TEST(AnalyticBlocking, FewRowsWithPreparedBSizeKCByWhatIsReRead) {
  const GemmMachine m = Avx512Xeon();
  const GemmF32Blocking eight = BlockingForFewRows(m, 8, BPacking::kPrepared);
  EXPECT_EQ(eight.pack_b, BPacking::kPrepared);
  EXPECT_TRUE(eight.prefetch_b);
  EXPECT_EQ(eight.mr, 8);
  EXPECT_EQ(uint64_t(eight.kc) * eight.mr * 4, m.l2.size_bytes / 2);
  const GemmF32Blocking sixteen = BlockingForFewRows(m, 16, BPacking::kPrepared);
  ASSERT_EQ(sixteen.mr, 8);
  EXPECT_EQ(uint64_t(sixteen.kc) * sixteen.nr * 4, m.l2.size_bytes / 2 / 192 * 192);
  GemmMachine no_l2 = m;
  no_l2.l2.size_bytes = 0;
  const GemmF32Blocking sixteen_l1 = BlockingForFewRows(no_l2, 16, BPacking::kPrepared);
  EXPECT_EQ(uint64_t(sixteen_l1.kc) * sixteen_l1.nr * 4, m.l1.size_bytes / 2);
  EXPECT_EQ(sixteen_l1.kc, 2 * BlockingForFewRows(no_l2, 16, BPacking::kInPlace).kc);
}

TEST(EvenBlocksForThreads, SharesTheExtentEvenlyInWholeUnits) {
  auto widest = [](int64_t n, int64_t nc, int64_t nr, int threads) {
    return EvenBlocksForThreads(n, nc, nr, threads).Widest();
  };
  EXPECT_EQ(widest(4096, 1536, 48, 2), 1056);  // 4 blocks, not 1536 + 1536 + 1024
  EXPECT_EQ(widest(4096, 3072, 48, 2), 2064);  // one block a thread
  EXPECT_EQ(widest(2048, 256, 64, 2), 256);    // already even: unchanged
  EXPECT_EQ(widest(4096, 1536, 48, 1), 1392);  // 3 even blocks on one thread
  EXPECT_EQ(widest(100, 1536, 16, 1), 112);    // never below the columns' panels
  EXPECT_EQ(widest(10, 192, 48, 2), 48);       // one panel: one thread idles
  // 16 panels of 64 in blocks of at most 3 on two threads: six blocks of 2 or 3 panels, the
  // first three 8 panels, as the last three (not 9 and 7, as blocks of 3 and a short one gave).
  const EvenBlocks six = EvenBlocksForThreads(1024, 192, 64, 2);
  ASSERT_EQ(six.count, 6);
  EXPECT_EQ(six.Begin(0), 0);
  EXPECT_EQ(six.Begin(3), 512);
  EXPECT_EQ(six.Begin(6), 1024);
  for (int64_t b = 0; b < six.count; ++b) {
    const int64_t width = six.Begin(b + 1) - six.Begin(b);
    EXPECT_TRUE(width == 128 || width == 192) << b << ": " << width;
  }
  // Blocks cover N once, each at most NC wide, for awkward widths too.
  for (int64_t n : {1, 47, 48, 49, 1000, 4097}) {
    for (int threads : {1, 2, 3, 8}) {
      const EvenBlocks blocks = EvenBlocksForThreads(n, 96, 48, threads);
      EXPECT_EQ(blocks.Begin(0), 0);
      EXPECT_GE(blocks.Begin(blocks.count), n);
      EXPECT_LT(blocks.Begin(blocks.count) - n, 48);
      for (int64_t b = 0; b < blocks.count; ++b) {
        EXPECT_GT(blocks.Begin(b + 1), blocks.Begin(b)) << n << " " << threads << " " << b;
        EXPECT_LE(blocks.Begin(b + 1) - blocks.Begin(b), 96) << n << " " << threads << " " << b;
      }
    }
  }
}

TEST(AnalyticBlocking, FewColumnsGrowKCUntilBFillsHalfOfL2) {
  const GemmMachine m = Avx512Xeon();
  const GemmF32Blocking a_in_l1 = AnalyticBlocking(m);
  const GemmF32Blocking one_panel = BlockingForFewColumns(m, 64);
  EXPECT_TRUE(one_panel.jr_innermost);
  EXPECT_EQ(one_panel.mr, a_in_l1.mr);
  EXPECT_EQ(one_panel.nc, one_panel.nr);  // the whole of N, one panel
  // The KC x N block of B takes at most half the L2, and more than a quarter of it.
  EXPECT_LE(uint64_t(one_panel.kc) * one_panel.nc * 4, m.l2.size_bytes / 2);
  EXPECT_GT(uint64_t(one_panel.kc) * one_panel.nc * 4, m.l2.size_bytes / 4);
  EXPECT_GT(one_panel.kc, a_in_l1.kc);
  EXPECT_LE(uint64_t(one_panel.kc) * one_panel.mc * 4, m.l3.size_bytes / 2);
  // 100 columns pad to two panels: B's block is twice as wide, KC half as deep.
  const GemmF32Blocking two_panels = BlockingForFewColumns(m, 100);
  EXPECT_EQ(two_panels.nc, 2 * two_panels.nr);
  EXPECT_EQ(two_panels.kc, one_panel.kc / 2);
}

// A machine whose OS reports a 48 KiB L1 and these L2 and L3, with nothing measured.
MachineProfile OsCaches(uint64_t l2_bytes, uint64_t l3_bytes, int l3_shared_by) {
  MachineProfile p;
  p.caches = {{1, "Data", 48 << 10, 12, 64, 1},
              {2, "Unified", l2_bytes, 16, 64, 1},
              {3, "Unified", l3_bytes, 15, 64, l3_shared_by}};
  return p;
}

// A bound must not charge L3 for what the L2 may hold: on a VM whose 2 MiB L2 misses in two
// stages (836 KiB and 1.7 MiB), a 1 MiB block of B is priced as held in L2, while blocking still
// plans with the cautious 836 KiB.
TEST(GemmF32Traffic, ABlockBetweenAnL2sTwoStagesIsPricedAsHeld) {
  const Kernel* kernel = KernelRegistry::Global().Find("gemm_f32");
  ASSERT_NE(kernel, nullptr);
  MachineProfile two_stages = OsCaches(2 << 20, 480u << 20, 2);
  two_stages.measured_levels = {
      {46 << 10, 46 << 10, 46 << 10, 1.3, LevelKind::kCache},
      {836 << 10, 812 << 10, 939 << 10, 4.8, LevelKind::kCache},
      {1.71 * (1 << 20), 1.71 * (1 << 20), 1.71 * (1 << 20), 14.9, LevelKind::kCache},
      {15.8 * (1 << 20), 15.8 * (1 << 20), 15.8 * (1 << 20), 45.8, LevelKind::kCache}};
  MachineProfile one_stage = two_stages;
  one_stage.measured_levels.erase(one_stage.measured_levels.begin() + 2);
  ASSERT_EQ(two_stages.EffectiveCacheBytes(2), one_stage.EffectiveCacheBytes(2));
  const Workload w{Op::kGemm, 512, 1024, 512, Dtype::kF32, Epilogue::kNone};
  absl::StatusOr<Config> c = kernel->params.Parse(
      "PATH=blocked,MR=6,NR=16,KC=256,MC=96,NC=1024,INNER=jr,PAR=columns,PACKA=in_place,"
      "PACKB=first_use",
      kernel->InitialConfig(w, 1, CacheMode::kWarm, two_stages), false);
  ASSERT_TRUE(c.ok()) << c.status();
  // B's block, 256 x 1024 floats: 1 MiB, past the first stage and inside the second.
  const double l3_two = kernel->TrafficFor(w, *c, 1, two_stages)[MemoryLevel::kL3];
  const double l3_one = kernel->TrafficFor(w, *c, 1, one_stage)[MemoryLevel::kL3];
  const double b = 4.0 * 512 * 1024;
  EXPECT_LT(l3_two, l3_one);
  EXPECT_DOUBLE_EQ(l3_one - l3_two, b * std::ceil(512.0 / 6));  // B re-read per row block of A
}

// What a single cold call writes into its packing buffers, beside the steady-state model: A's
// MC x KC block per thread, and B's KC x NC block shared by the threads splitting ic or one per
// thread splitting jc; with B read in place, only the KC x NR panel an edge of N packs.
TEST(GemmF32Traffic, FirstTouchIsThePackingBuffersOneCallWrites) {
  const Kernel* kernel = KernelRegistry::Global().Find("gemm_f32");
  ASSERT_NE(kernel, nullptr);
  const MachineProfile profile;
  const Workload w{Op::kGemm, 96, 100, 96, Dtype::kF32, Epilogue::kNone};
  const Config base = kernel->InitialConfig(w, 1, CacheMode::kWarm, profile);
  auto first_touch = [&](const std::string& text, int threads) {
    absl::StatusOr<Config> c = kernel->params.Parse(text, base, false);
    EXPECT_TRUE(c.ok()) << c.status();
    return c.ok() ? kernel->TrafficFor(w, *c, threads, profile).first_touch : -1.0;
  };
  const std::string blocks = "MR=6,NR=16,KC=64,MC=48,NC=192,INNER=0,";
  // A: 48 x 64 floats; B: 64 x 112 (100 columns rounded up to NR = 16).
  const double a = 4.0 * 48 * 64, b = 4.0 * 64 * 112;
  EXPECT_DOUBLE_EQ(first_touch(blocks + "PAR=0,PACKA=1,PACKB=1", 1), a + b);
  EXPECT_DOUBLE_EQ(first_touch(blocks + "PAR=0,PACKA=1,PACKB=1", 2), 2 * a + b);  // B shared
  EXPECT_DOUBLE_EQ(first_touch(blocks + "PAR=1,PACKA=1,PACKB=2", 1), a + b);
  EXPECT_DOUBLE_EQ(first_touch(blocks + "PAR=0,PACKA=0,PACKB=0", 1), 4.0 * 64 * 16);  // N's edge
  const Workload even{Op::kGemm, 96, 96, 96, Dtype::kF32, Epilogue::kNone};
  absl::StatusOr<Config> in_place =
      kernel->params.Parse(blocks + "PAR=0,PACKA=0,PACKB=0", base, false);
  ASSERT_TRUE(in_place.ok());
  EXPECT_EQ(kernel->TrafficFor(even, *in_place, 1, profile).first_touch, 0);  // nothing packed
  // Prepared B is an operand packed before the call: only A's buffer is touched.
  EXPECT_DOUBLE_EQ(first_touch(blocks + "PAR=0,PACKA=1,PACKB=prepared", 1), a);
}

// Prepared B costs no packing pass: against B packed ahead, L2 sees B's copy (read and written)
// less, and L3 B's packing read less; DRAM sees B once either way. A decode block of B that
// outgrows L2 is read from L3 once per row block, not once more for the packing.
TEST(GemmF32Traffic, PreparedBSavesThePackingPassAtEveryLevel) {
  const Kernel* kernel = KernelRegistry::Global().Find("gemm_f32");
  ASSERT_NE(kernel, nullptr);
  const MachineProfile profile = OsCaches(1 << 20, 32 << 20, 1);
  auto traffic = [&](const Workload& w, const std::string& packb) {
    absl::StatusOr<Config> c = kernel->params.Parse(
        "PATH=blocked,MR=8,NR=16,KC=512,MC=24,NC=4096,INNER=ir,PAR=rows,PACKA=packed," + packb,
        kernel->InitialConfig(w, 1, CacheMode::kWarm, profile), false);
    EXPECT_TRUE(c.ok()) << c.status();
    return kernel->TrafficFor(w, *c, 1, profile);
  };
  const Workload decode{Op::kGemm, 8, 4096, 4096, Dtype::kF32, Epilogue::kNone};
  const double b = 4.0 * 4096 * 4096;
  const Traffic ahead = traffic(decode, "PACKB=ahead"),
                prepared = traffic(decode, "PACKB=prepared");
  EXPECT_DOUBLE_EQ(ahead[MemoryLevel::kL2] - prepared[MemoryLevel::kL2], 2 * b);
  EXPECT_DOUBLE_EQ(ahead[MemoryLevel::kL3] - prepared[MemoryLevel::kL3], b);
  EXPECT_DOUBLE_EQ(ahead[MemoryLevel::kDram], prepared[MemoryLevel::kDram]);
  // One row block (M <= MC): the 8 MiB block of B (512 x 4096 floats) streams past L2 once.
  const double a = 4.0 * 8 * 4096;
  EXPECT_DOUBLE_EQ(prepared[MemoryLevel::kL3], a + b + 4.0 * 8 * 4096);  // A, B, C
}

}  // namespace
}  // namespace rooftune::kernels

namespace rooftune {
namespace {

// A profile of cache sizes as the OS reports them (48 KiB L1, 2 MiB L2, 32 MiB shared L3),
// nothing measured.
MachineProfile SysfsCachesOnly() {
  MachineProfile profile;
  profile.caches = {
      {1, "Data", 48 << 10, 12}, {2, "Unified", 2 << 20, 16}, {3, "Unified", 32 << 20, 16, 64, 2}};
  return profile;
}

// gemm_f32's initial config of a plain M x N x K product on `threads` threads, timed warm.
Config InitialGemmF32(const MachineProfile& profile, int64_t m, int64_t n, int64_t k, int threads) {
  const Kernel* kernel = KernelRegistry::Global().Find("gemm_f32");
  if (kernel == nullptr) return Config();
  return kernel->InitialConfig({Op::kGemm, m, n, k, Dtype::kF32, Epilogue::kNone}, threads,
                               CacheMode::kWarm, profile);
}

// The plugin's initial config on a machine with this VM's caches: which operands are packed and
// which loop the threads split follow the shape, as its comments say.
TEST(GemmF32InitialConfig, PacksAndSplitsByTheShape) {
  const Kernel* kernel = KernelRegistry::Global().Find("gemm_f32");
  ASSERT_NE(kernel, nullptr);
  MachineProfile profile = SysfsCachesOnly();
  auto initial = [&](int64_t m, int64_t n, int64_t k, int threads) {
    return InitialGemmF32(profile, m, n, k, threads);
  };
  for (int threads : {1, 2}) {
    for (const Config& c :
         {initial(1024, 1024, 1024, threads), initial(256, 4096, 4096, threads)}) {
      // jr innermost keeps A's micro-panel in L1 for every column panel: no packed copy.
      ASSERT_EQ(c.Get("INNER"), 1) << c.ToString();
      EXPECT_EQ(c.Get("PACKA"), 0) << c.ToString();
    }
  }
  // Fewer than 4 column panels a thread (12 columns; NR is at least 8) and 2048 rows a thread:
  // split rows, and B, shared, is packed ahead by all threads together: 171 or more row panels
  // re-read the copy.
  EXPECT_EQ(initial(4096, 24, 4096, 2).Get("PAR"), 0);
  EXPECT_EQ(initial(4096, 24, 4096, 2).Get("PACKB"), 1);
  EXPECT_EQ(initial(4096, 64, 4096, 2).Get("PACKB"), 1);
  // Rows split, but under 100 row panels (MR is 4 or 6) do not repay packing the shared B: it
  // is read in place.
  for (const Config& c : {initial(256, 24, 256, 2), initial(384, 24, 4096, 2)}) {
    EXPECT_EQ(c.Get("PAR"), 0) << c.ToString();
    EXPECT_EQ(c.Get("PACKB"), 0) << c.ToString();
  }
  // 512 columns a thread (8 panels even at NR = 64), or 128 rows a thread: split columns; each
  // thread packs its B on first use. One thread does too.
  for (const Config& c : {initial(1024, 1024, 1024, 2), initial(256, 4096, 4096, 2),
                          initial(256, 4096, 4096, 1), initial(1024, 1024, 1024, 1)}) {
    EXPECT_EQ(c.Get("PAR"), 1) << c.ToString();
    EXPECT_EQ(c.Get("PACKB"), 2) << c.ToString();
  }
  // 64 rows are few for a prepared B where the few-row block takes them in at most eight panels
  // (AVX-512's 8 x 48): BLIS's order, B's micro-panel in L1, B prepared ahead and streamed once,
  // the threads splitting its columns. A shorter block (AVX2's 4 x 24: sixteen panels) leaves
  // them to the many-row order, which packs the B each call brings.
  const int64_t few_row_mr =
      kernels::BlockingForFewRows(GemmMachineOf(profile), 64, kernels::BPacking::kPrepared).mr;
  const bool few = (64 + few_row_mr - 1) / few_row_mr <= 8;
  for (int threads : {1, 2}) {
    const Config c = initial(64, 4096, 4096, threads);
    EXPECT_EQ(c.Get("INNER"), few ? 0 : 1) << c.ToString();
    EXPECT_EQ(c.Get("PACKB"), few ? 3 : 2) << c.ToString();
    EXPECT_EQ(c.Get("PAR"), 1) << c.ToString();
  }
  // 128 columns and 128 rows a thread: the split follows the register block chosen, columns
  // first (AVX-512's NR = 64 gives 2 panels, so rows; AVX2's NR = 16 or 24 gives 8 or 5, so
  // columns). K is long enough that the operands outgrow the small path's share of the L2.
  const Config square = initial(256, 256, 4096, 2);
  ASSERT_EQ(square.Get("PATH"), 0) << square.ToString();
  const bool enough_columns = 128 >= 4 * square.Get("NR");
  const bool enough_rows = 128 >= 16 * square.Get("MR");
  EXPECT_EQ(square.Get("PAR"), enough_columns || !enough_rows ? 1 : 0) << square.ToString();
  // One column panel: A's micro-panel serves one tile, so KC is set by B's block in L2 instead.
  for (int threads : {1, 2}) {
    const Config tall = initial(4096, 24, 4096, threads);  // one panel of the least padding
    EXPECT_EQ(tall.Get("PATH"), 0) << tall.ToString();
    EXPECT_GT(tall.Get("KC"), initial(1024, 1024, 1024, threads).Get("KC")) << tall.ToString();
  }
  // N within one vector takes the small path, its row blocks split over two threads.
  EXPECT_EQ(initial(4096, 8, 4096, 1).Get("PATH"), 1) << initial(4096, 8, 4096, 1).ToString();
  EXPECT_EQ(initial(4096, 8, 4096, 2).Get("SPLIT"), 1) << initial(4096, 8, 4096, 2).ToString();
  EXPECT_EQ(initial(4096, 8, 4096, 2).Get("PAR"), 0) << initial(4096, 8, 4096, 2).ToString();
  // Work that fits half the L2 takes the small path, alone on one thread; on two (this profile
  // has no peak to say the work is too small to split) split by rows, or by column panels when
  // there are too few row blocks.
  EXPECT_EQ(initial(64, 64, 64, 1).Get("PATH"), 1);
  EXPECT_EQ(initial(64, 64, 64, 1).Get("SPLIT"), 0);
  EXPECT_EQ(initial(64, 64, 64, 2).Get("SPLIT"), 1);
  EXPECT_EQ(initial(64, 64, 64, 2).Get("PAR"), 0);
  EXPECT_EQ(initial(8, 256, 64, 2).Get("SPLIT"), 1) << initial(8, 256, 64, 2).ToString();
  EXPECT_EQ(initial(8, 256, 64, 2).Get("PAR"), 1) << initial(8, 256, 64, 2).ToString();
  EXPECT_EQ(initial(1024, 1024, 1024, 1).Get("PATH"), 0);
  // Columns split: one block a thread (the kernel evens NC out to each thread's share).
  const Config decode_two = initial(8, 4096, 4096, 2);
  EXPECT_EQ(decode_two.Get("PAR"), 1) << decode_two.ToString();
  EXPECT_EQ(
      kernels::EvenBlocksForThreads(4096, decode_two.Get("NC"), decode_two.Get("NR"), 2).count, 2)
      << decode_two.ToString();
  // K under KC: the blocks of A and B hold K-deep rows, so more of them fit. 4096 x 4096 x 64
  // takes a B block of every column (64 x 4096 floats: 1 MiB, half of this L2) where K = 4096
  // takes one of KC x NC within the same half, and an A block at least as tall.
  for (int threads : {1, 2}) {
    const Config deep = initial(4096, 4096, 4096, threads);
    const Config shallow = initial(4096, 4096, 64, threads);
    ASSERT_EQ(shallow.Get("PATH"), 0) << shallow.ToString();
    EXPECT_LE(deep.Get("NC") * deep.Get("KC") * 4, 1 << 20) << deep.ToString();
    EXPECT_LE(shallow.Get("NC") * 64 * 4, 1 << 20) << shallow.ToString();
    EXPECT_GE(shallow.Get("NC"), 4 * deep.Get("NC"))
        << shallow.ToString() << " " << deep.ToString();
    EXPECT_GE(shallow.Get("MC"), deep.Get("MC")) << shallow.ToString() << " " << deep.ToString();
  }
  // Too few rows to repay packing B on each call: prepared ahead of them, fetched ahead. A's
  // whole block stays in L1 while B's panels pass (ir innermost): read in place.
  for (int threads : {1, 2}) {
    for (int64_t rows : {8, 16}) {
      const Config decode = initial(rows, 4096, 4096, threads);
      EXPECT_EQ(decode.Get("PACKB"), 3) << decode.ToString();
      EXPECT_EQ(decode.Get("PREFETCHB"), 1) << decode.ToString();
      EXPECT_EQ(decode.Get("INNER"), 0) << decode.ToString();
      EXPECT_EQ(decode.Get("PACKA"), 0) << decode.ToString();
    }
    // A B the caches hold from call to call (16 MiB, within the 32 MiB L3) is left to the
    // hardware's prefetchers.
    for (int64_t rows : {1, 4}) {
      const Config held = initial(rows, 2048, 2048, threads);
      EXPECT_EQ(held.Get("PACKB"), 3) << held.ToString();
      EXPECT_EQ(held.Get("PREFETCHB"), 0) << held.ToString();
      // Timed cold, the same B streams from memory on every call: fetched ahead.
      const Config cold =
          kernel->InitialConfig({Op::kGemm, rows, 2048, 2048, Dtype::kF32, Epilogue::kNone},
                                threads, CacheMode::kCold, profile);
      EXPECT_EQ(cold.Get("PACKB"), 3) << cold.ToString();
      EXPECT_EQ(cold.Get("PREFETCHB"), 1) << cold.ToString();
    }
    // Every count of rows up to four of the many-row block's panels is few, awkward ones too
    // (the block that pads 5 or 7 rows the least is one row high).
    const int64_t many_row_mr = kernels::AnalyticBlocking(GemmMachineOf(profile)).mr;
    for (int64_t rows = 1; rows <= 4 * many_row_mr; ++rows) {
      const Config c = initial(rows, 4096, 4096, threads);
      EXPECT_EQ(c.Get("PACKB"), 3) << rows << " rows: " << c.ToString();
    }
    // Prepared B streams past every row once a call: one row block holds them all.
    for (int64_t rows : {8, 16, 24, 32, 40}) {
      const Config c = initial(rows, 4096, 4096, threads);
      if (c.Get("PACKB") != 3) continue;
      EXPECT_GE(c.Get("MC"), rows) << c.ToString();
      EXPECT_EQ(c.Get("MC") % c.Get("MR"), 0) << c.ToString();
    }
  }
}

// A prepared B, one stream from DRAM, is fetched into the level the probe's fastest one-thread
// reader of DRAM fetched into: as far as L2 (PREFETCHB=l2) behind a reader that fetched into L2,
// into L1 behind one that fetched into L1 or did not fetch at all. B read in place (the library
// API's call) keeps its fetch into L1.
TEST(GemmF32InitialConfig, PreparedBIsFetchedIntoTheLevelTheFastestReaderFetchedInto) {
  const Kernel* kernel = KernelRegistry::Global().Find("gemm_f32");
  ASSERT_NE(kernel, nullptr);
  const Workload decode{Op::kGemm, 8, 4096, 4096, Dtype::kF32, Epilogue::kNone};
  for (const auto& [reader, code] :
       std::vector<std::pair<Reader, int64_t>>{{Reader{1, false, true, true, true}, 2},
                                               {Reader{2, false, true, true, false}, 2},
                                               {Reader{2, false, true, false, false}, 1},
                                               {Reader{4, false, false, false, false}, 1}}) {
    MachineProfile profile = SysfsCachesOnly();
    Ceiling dram{Ceiling::Kind::kBandwidth, Dtype::kF32, MemoryLevel::kDram, 1, 20e9, "read"};
    dram.reader = reader;
    profile.ceilings.push_back(dram);
    for (int threads : {1, 2}) {
      const Config c = kernel->InitialConfig(decode, threads, CacheMode::kCold, profile);
      ASSERT_EQ(c.Get("PACKB"), 3) << c.ToString();
      EXPECT_EQ(c.Get("PREFETCHB"), code) << reader.Name() << ": " << c.ToString();
      const Config from_call = GemmF32WithBFromEachCall(c, decode, threads, profile);
      ASSERT_EQ(from_call.Get("PACKB"), 0) << from_call.ToString();
      EXPECT_EQ(from_call.Get("PREFETCHB"), 1) << reader.Name() << ": " << from_call.ToString();
    }
  }
}

// A call that brings its own B (the library API) cannot run a config that reads B prepared
// ahead: few rows read it in place with the KC that suits in-place B, more rows pack it as the
// analytic rule does for the split; the rest of the config stays, and other configs are
// returned as they are.
TEST(GemmF32WithBFromEachCall, ReplacesOnlyPreparedB) {
  const MachineProfile profile = SysfsCachesOnly();
  const ParamSpace space = GemmF32Space();
  auto workload = [](int64_t m) {
    return Workload{Op::kGemm, m, 4096, 4096, Dtype::kF32, Epilogue::kNone};
  };
  // The initial decode config (B prepared, a register block of this CPU's target), deeper.
  std::optional<Config> decode = GemmF32InitialConfig(workload(8), 1, CacheMode::kWarm, profile);
  ASSERT_EQ(decode->Get("PACKB"), 3) << decode->ToString();
  decode->Set("KC", 512);
  ASSERT_TRUE(space.Validate(*decode).ok()) << decode->ToString();
  const Config from_call = GemmF32WithBFromEachCall(*decode, workload(8), 1, profile);
  EXPECT_EQ(from_call.Get("PACKB"), 0) << from_call.ToString();
  EXPECT_EQ(from_call.Get("PREFETCHB"), 1) << from_call.ToString();
  const kernels::GemmF32Blocking in_place =
      kernels::BlockingForFewRows(GemmMachineOf(profile), 8, kernels::BPacking::kInPlace);
  EXPECT_EQ(from_call.Get("KC"), space.Find("KC")->LargestNotAbove(in_place.kc));
  for (const char* kept : {"MR", "NR", "MC", "NC", "PAR", "PACKA"}) {
    EXPECT_EQ(from_call.Get(kept), decode->Get(kept)) << kept;
  }
  EXPECT_TRUE(space.Validate(from_call).ok());
  // 1024 rows, columns split: packed on first use; rows split on two threads: packed ahead.
  Config many = *decode;
  EXPECT_EQ(GemmF32WithBFromEachCall(many, workload(1024), 2, profile).Get("PACKB"), 2);
  many.Set("PAR", 0);
  const Config shared = GemmF32WithBFromEachCall(many, workload(1024), 2, profile);
  EXPECT_EQ(shared.Get("PACKB"), 1);
  EXPECT_EQ(shared.Get("KC"), 512);
  // Every row count, at most a few panels or more: B from the call, a config that validates; a
  // count few enough to prepare B for but too many to read it in place runs the analytic config
  // for B from each call.
  for (int64_t rows : {1, 8, 16, 24, 32, 40, 48, 64}) {
    for (int threads : {1, 2}) {
      const Config prepared =
          GemmF32InitialConfig(workload(rows), threads, CacheMode::kWarm, profile);
      if (prepared.Get("PACKB") != 3) continue;
      const Config c = GemmF32WithBFromEachCall(prepared, workload(rows), threads, profile);
      EXPECT_NE(c.Get("PACKB"), 3) << rows << " rows: " << c.ToString();
      EXPECT_TRUE(space.Validate(c).ok()) << rows << " rows: " << c.ToString();
      if (c.Get("PACKB") != 0) EXPECT_EQ(c.Get("INNER"), 1) << rows << " rows: " << c.ToString();
    }
  }
  // Not prepared: unchanged.
  Config ahead = *decode;
  ahead.Set("PACKB", 1);
  EXPECT_EQ(GemmF32WithBFromEachCall(ahead, workload(8), 1, profile), ahead);
  // The registered kernels apply this rule to a call's own B (the library API asks them).
  for (const char* name : {"gemm_f32", "gemm_f32_unfused"}) {
    const Kernel* kernel = KernelRegistry::Global().Find(name);
    ASSERT_NE(kernel, nullptr) << name;
    EXPECT_EQ(kernel->WithWeightsFromTheCall(*decode, workload(8), 1, profile), from_call) << name;
    EXPECT_EQ(kernel->WithWeightsFromTheCall(ahead, workload(8), 1, profile), ahead) << name;
  }
}

// The small path takes a product whose A and C fit half the L2 at its cautious size (re-read for
// every column panel) and whose operands all fit the L2 at the largest size any probe found it
// at (B's panels, re-read by each row block). Three probes found the L2 at 432 KiB, 432 KiB and
// 1.6 MiB.
TEST(GemmF32InitialConfig, SmallPathWhileARowsFitTheCautiousL2AndAllTheGenerous) {
  MachineProfile profile = SysfsCachesOnly();
  profile.level_probes = 3;
  profile.level_consensus = {{{48e3, 48e3, 48e3}, {1.5, 1.5, 1.5}},
                             {{432e3, 432e3, 1.6e6}, {5, 5, 9}},
                             {{32e6, 32e6, 32e6}, {60, 60, 60}}};
  ASSERT_EQ(profile.EffectiveCacheBytes(2), 432000u);
  ASSERT_EQ(profile.PricedCacheBytes(2), 1600000u);
  auto initial = [&](int64_t m, int64_t n, int64_t k) {
    return InitialGemmF32(profile, m, n, k, 1);
  };
  // 1.05-1.1 MB in all, within 1.6 MB but beyond 432 KB; A and C 4-70 KB.
  for (int64_t m : {1, 4, 12, 16}) {
    const Config c = initial(m, 512, 512);
    EXPECT_EQ(c.Get("PATH"), 1) << m << ": " << c.ToString();
  }
  EXPECT_EQ(initial(16, 256, 256).Get("PATH"), 1) << "0.3 MB in all, A and C 32 KB";
  EXPECT_EQ(initial(1, 1024, 512).Get("PATH"), 0) << "2.1 MB of B: beyond 1.6 MB";
  EXPECT_EQ(initial(8, 4096, 4096).Get("PATH"), 0) << "a decode shape: 64 MB of B";
  EXPECT_EQ(initial(64, 1024, 256).Get("PATH"), 0) << "A and C 320 KB: beyond half of 432 KB";
}

// The small path's block is the one its cost model prices lowest for the shape: a tile's K
// steps each take the longest of its FMAs over two pipes, its loads over two ports and an FMA's
// latency (4 cycles here). Sixteen rows run as two tiles of 8 rather than 12 + 4, whose 4-row
// edge waits on its chains as long as a full tile; a wide N takes the widest block.
TEST(GemmF32InitialConfig, TheSmallBlockIsTheOneItsModelPricesLowest) {
  const MachineProfile profile = SysfsCachesOnly();
  auto initial = [&](int64_t m, int64_t n, int64_t k) {
    return InitialGemmF32(profile, m, n, k, 1);
  };
  const int lanes = kernels::GemmF32VectorLanes();
  const Config cube16 = initial(16, 16, 16);
  ASSERT_EQ(cube16.Get("PATH"), 1) << cube16.ToString();
  if (lanes == 16) {
    // One vector: 16 rows in one tile, 16 + 16 x 8.5 cycles (17 loads a step at two a cycle);
    // 8 + 8 rows, 88 each; 12 + 4, 120 + 56.
    EXPECT_EQ(cube16.Get("MR"), 16) << cube16.ToString();
    EXPECT_EQ(cube16.Get("NR"), 16) << cube16.ToString();
    const Config wide = initial(64, 64, 64);  // every block 8192 FMA cycles: fewest tiles
    EXPECT_EQ(wide.Get("NR"), 64) << wide.ToString();
    EXPECT_EQ(wide.Get("MR"), 6) << wide.ToString();
  } else if (lanes == 8) {
    // Two vectors of 6 rows (6, 6, 4: 112 + 112 + 80) beat 8-row tiles over two panels (352).
    EXPECT_EQ(cube16.Get("MR"), 6) << cube16.ToString();
    EXPECT_EQ(cube16.Get("NR"), 16) << cube16.ToString();
  }
  const Config eight = initial(8, 8, 8);  // one tile of 8 rows, whatever the target
  EXPECT_EQ(eight.Get("MR"), 8) << eight.ToString();
  EXPECT_EQ(eight.Get("NR"), lanes) << eight.ToString();
}

// A tall block over one vector loads fewer A elements per FMA (25 loads for 24 FMAs against 13
// for 12), but its rows of A, read in place K floats apart, must not outnumber the ways of the
// L1 set they share: at K = 1024 every row starts 4 KiB after the one before, the span of a
// 48 KiB L1's 64 sets, and all of them fall on one set of 12 ways.
TEST(GemmF32InitialConfig, ATallBlockOnlyWhereItsRowsOfAShareNoL1SetBeyondItsWays) {
  if (kernels::GemmF32VectorLanes() != 16 || !kernels::GemmF32SmallHasKernel(24, 16)) {
    GTEST_SKIP() << "the tall blocks are compiled for 16 lanes and 32 registers";
  }
  MachineProfile profile = SysfsCachesOnly();
  auto initial = [&](int64_t m, int64_t n, int64_t k) {
    return InitialGemmF32(profile, m, n, k, 1);
  };
  // Rows 1 KiB apart fall on 4 sets, six of 24 rows a set.
  const Config skinny = initial(240, 16, 256);
  ASSERT_EQ(skinny.Get("PATH"), 1) << skinny.ToString();
  EXPECT_EQ(skinny.Get("MR"), 24) << skinny.ToString();
  EXPECT_EQ(skinny.Get("NR"), 16) << skinny.ToString();
  const Config deep = initial(48, 16, 1024);
  ASSERT_EQ(deep.Get("PATH"), 1) << deep.ToString();
  EXPECT_LE(deep.Get("MR"), 12) << deep.ToString();
  // A 32 KiB L1 of 8 ways (64 sets) holds 8 such rows, and still six a set at K = 256.
  profile.caches[0].size_bytes = 32 << 10;
  profile.caches[0].ways = 8;
  EXPECT_LE(initial(48, 16, 1024).Get("MR"), 8) << initial(48, 16, 1024).ToString();
  EXPECT_EQ(initial(240, 16, 256).Get("MR"), 24) << initial(240, 16, 256).ToString();
  // Ways and line the OS leaves at 0 are unknown: 8 ways and 64 bytes assumed, not a division by
  // zero; a 48 KiB L1 is then 64 sets of 12.
  profile.caches[0] = {1, "Data", 48 << 10, 0, 0};
  const Config unknown = initial(48, 16, 1024);
  EXPECT_EQ(unknown.Get("PATH"), 1) << unknown.ToString();
  EXPECT_LE(unknown.Get("MR"), 12) << unknown.ToString();
}

// A split small path gives each thread at least four tiles along the loop it splits: 16 x 256
// would be 3 row blocks or 4 column panels under the cheapest block alone, so its block is
// re-chosen for 8 panels or more.
TEST(GemmF32InitialConfig, ASplitGivesEachThreadFourTilesAlongItsLoop) {
  const Kernel* kernel = KernelRegistry::Global().Find("gemm_f32");
  ASSERT_NE(kernel, nullptr);
  const MachineProfile profile = SysfsCachesOnly();  // no peak: any small product may split
  for (const Workload& w : {Workload{Op::kGemm, 16, 256, 256, Dtype::kF32, Epilogue::kNone},
                            Workload{Op::kGemm, 96, 96, 96, Dtype::kF32, Epilogue::kNone},
                            Workload{Op::kGemm, 8, 512, 64, Dtype::kF32, Epilogue::kNone}}) {
    const Config c = kernel->InitialConfig(w, 2, CacheMode::kWarm, profile);
    ASSERT_EQ(c.Get("PATH"), 1) << w.Key() << ": " << c.ToString();
    ASSERT_EQ(c.Get("SPLIT"), 1) << w.Key() << ": " << c.ToString();
    const int64_t tiles = c.Get("PAR") == 1 ? (w.n + c.Get("NR") - 1) / c.Get("NR")
                                            : (w.m + c.Get("MR") - 1) / c.Get("MR");
    EXPECT_GE(tiles, 8) << w.Key() << ": " << c.ToString();
  }
}

// On two threads a small product runs on the calling thread alone while its work at one
// thread's peak is under the split's cost. One column runs as dot products, every lane used; two
// columns fill two lanes of each vector, so the same rows and depth count sixteen times the
// lanes (on a 16-lane target) and split.
TEST(GemmF32InitialConfig, OneColumnCountsItsOwnWorkWhenDecidingToSplit) {
  MachineProfile profile = SysfsCachesOnly();
  profile.ceilings = {{Ceiling::Kind::kCompute, Dtype::kF32, MemoryLevel::kDram, 1, 100e9, "fma"}};
  auto initial = [&](int64_t m, int64_t n, int64_t k) {
    return InitialGemmF32(profile, m, n, k, 2);
  };
  // 512 x 256 multiply-adds: 2.6 us at 100 GFLOP/s counted per lane used, 16 times that per
  // lane held.
  const Config one = initial(512, 1, 256);
  EXPECT_EQ(one.Get("PATH"), 1) << one.ToString();
  EXPECT_EQ(one.Get("SPLIT"), 0) << one.ToString();
  if (kernels::GemmF32VectorLanes() >= 8) {
    const Config two = initial(512, 2, 256);
    EXPECT_EQ(two.Get("PATH"), 1) << two.ToString();
    EXPECT_EQ(two.Get("SPLIT"), 1) << two.ToString();
  }
}

// A small product splits over two threads when its work at one thread's peak repays twice the
// split's measured overhead twice over (T / 2 + F < T from T = 2F; the margin doubles it); where
// none was measured, from kSplitRepaidAboveSeconds (20 us). 96^3 is 8.8 us at 200 GFLOP/s.
TEST(GemmF32InitialConfig, ASmallProductSplitsWhereItsWorkRepaysTheMeasuredSplit) {
  MachineProfile profile = SysfsCachesOnly();
  profile.ceilings = {{Ceiling::Kind::kCompute, Dtype::kF32, MemoryLevel::kDram, 1, 200e9, "fma"}};
  auto split = [&] {
    const Config c = InitialGemmF32(profile, 96, 96, 96, 2);
    EXPECT_EQ(c.Get("PATH"), 1) << c.ToString();
    return c.Get("SPLIT") == 1;
  };
  EXPECT_FALSE(split());  // 8.8 us < 20 us
  profile.parallel_calls = {{2, 1e-6}};
  EXPECT_TRUE(split());  // > 4 us
  profile.parallel_calls = {{2, 3e-6}};
  EXPECT_FALSE(split());  // < 12 us
}

// The unfused variant's model charges its bias+ReLU pass over C after the GEMM; the fused one
// does not.
TEST(GemmF32Traffic, TheUnfusedVariantMovesCOnceMoreAfterTheGemm) {
  const Kernel* fused = KernelRegistry::Global().Find("gemm_f32");
  const Kernel* unfused = KernelRegistry::Global().Find("gemm_f32_unfused");
  ASSERT_NE(fused, nullptr);
  ASSERT_NE(unfused, nullptr);
  MachineProfile profile = SysfsCachesOnly();
  const Workload w{Op::kGemm, 1024, 1024, 1024, Dtype::kF32, Epilogue::kBiasRelu};  // C: 4 MiB
  const Config c = fused->InitialConfig(w, 1, CacheMode::kWarm, profile);
  const Traffic with_pass = unfused->TrafficFor(w, c, 1, profile);
  const Traffic without = fused->TrafficFor(w, c, 1, profile);
  const Traffic pass = EpiloguePassTraffic(w, profile);
  EXPECT_GT(pass[MemoryLevel::kL3], 0);  // C outgrows the L2
  EXPECT_EQ(with_pass.bytes, without.bytes);
  EXPECT_EQ(with_pass.after, pass.bytes);
  EXPECT_EQ(without.after, Traffic().after);
}

}  // namespace
}  // namespace rooftune

namespace rooftune {
namespace {

// The blocking plans with the FMA latency the probe measured (whole cycles), and with the
// documented assumption only where the profile has none or a value no core has.
TEST(GemmMachineOf, TakesTheMeasuredFmaLatencyAndAssumesOnlyWithoutOne) {
  MachineProfile profile;
  for (const auto& [measured, planned] :
       std::vector<std::pair<double, int>>{{4.02, 4}, {5.9, 6}, {3.1, 3}, {0, 4}, {250, 4}}) {
    profile.fma_latency_cycles = measured;
    EXPECT_EQ(GemmMachineOf(profile).fma_latency_cycles, planned) << measured;
  }
}

}  // namespace
}  // namespace rooftune
