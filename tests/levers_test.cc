// The levers a report names, on constructed machines and measurements whose answers follow from
// the roofline by hand.
#include "reports/levers.h"

#include <gtest/gtest.h>

#include <cmath>
#include <regex>

#include "absl/strings/str_format.h"
#include "framework/roofline.h"
#include "reports/report.h"
#include "tests/judged_row.h"
#include "tests/round_machine.h"

namespace rooftune::reports {
namespace {

// The round machine with an int8 ceiling (400 GOP/s) and an L3 one (20 GB/s) added.
MachineProfile RoundMachine() {
  MachineProfile p = fixtures::RoundMachine();
  p.ceilings.push_back(
      {Ceiling::Kind::kCompute, Dtype::kU8S8, MemoryLevel::kDram, 1, 400e9, "vnni"});
  p.ceilings.push_back({Ceiling::Kind::kBandwidth, Dtype::kF32, MemoryLevel::kL3, 1, 20e9, "read"});
  return p;
}

using Row = fixtures::JudgedRow;
using fixtures::Measured;

std::vector<Lever> LeversOfFirst(const MachineProfile& p, const std::vector<Row>& rows,
                                 ModelBoundFn model_bound = nullptr) {
  ReportInput in;
  in.profile = p;
  for (const Row& r : rows) in.results.push_back(r.result), in.verdicts.push_back(r.verdict);
  in.model_bound = std::move(model_bound);
  return LeversOf(in, 0);
}

const Lever& Get(const std::vector<Lever>& levers, Lever::Kind kind) {
  for (const Lever& lever : levers) {
    if (lever.kind == kind) return lever;
  }
  static const Lever none{};
  ADD_FAILURE() << "no lever " << ToString(kind);
  return none;
}

const Workload kGemv{Op::kGemv, 1, 4096, 4096, Dtype::kF32, Epilogue::kNone};

Row DramBoundGemv(const MachineProfile& p) {
  const double bytes = kGemv.CompulsoryBytes();  // 64 MiB of weights, and x and y
  return Measured(p, "gemv_f32", kGemv, {bytes, bytes, bytes, bytes}, 8e-3);
}

TEST(Levers, AMemoryBoundGemvNeedsFewerBytesFirstThenMoreWorkPerByte) {
  const MachineProfile p = RoundMachine();
  const Row gemv = DramBoundGemv(p);
  ASSERT_EQ(gemv.verdict.binding, "DRAM bandwidth, 1 thread");
  const std::vector<Lever> levers = LeversOfFirst(p, {gemv});
  ASSERT_EQ(levers.size(), 6u);
  // In the order they pay.
  EXPECT_EQ(levers[0].kind, Lever::Kind::kFewerBytes);
  EXPECT_EQ(levers[4].kind, Lever::Kind::kThreads);
  EXPECT_EQ(levers[5].kind, Lever::Kind::kInnerLoop);

  Workload narrow = kGemv;
  narrow.dtype = Dtype::kS8F32;
  const double ratio = narrow.CompulsoryBytes() / kGemv.CompulsoryBytes();  // about 1/4
  const Lever& fewer = Get(levers, Lever::Kind::kFewerBytes);
  EXPECT_NEAR(fewer.gain, 1 / ratio, 1e-9);  // DRAM still binds at a quarter of the bytes
  EXPECT_FALSE(fewer.measured.has_value());
  EXPECT_NE(fewer.how.find("s8f32"), std::string::npos) << fewer.how;
  EXPECT_EQ(fewer.how.find("arithmetic"), std::string::npos) << fewer.how;  // DRAM binds

  const double memory = kGemv.CompulsoryBytes() / 10e9, compute = kGemv.Operations() / 100e9;
  const Lever& work = Get(levers, Lever::Kind::kMoreWorkPerByte);
  EXPECT_NEAR(work.gain, memory / compute, 1e-9);
  EXPECT_NE(work.how.find(absl::StrFormat("M >= %.0f", std::ceil(memory / compute))),
            std::string::npos)
      << work.how;

  EXPECT_FALSE(Get(levers, Lever::Kind::kBetterReuse).Pays());  // it moves the compulsory bytes
  EXPECT_FALSE(Get(levers, Lever::Kind::kFusion).Pays());       // no epilogue
  EXPECT_FALSE(Get(levers, Lever::Kind::kThreads).Pays());      // one CPU
  EXPECT_NEAR(Get(levers, Lever::Kind::kInnerLoop).gain, 8e-3 / memory, 1e-9);
  ASSERT_NE(FirstThatPays(levers), nullptr);
  EXPECT_EQ(FirstThatPays(levers)->kind, Lever::Kind::kFewerBytes);
}

TEST(Levers, TheNarrowerWorkloadsRowPricesFewerBytesAndMeasuresIt) {
  const MachineProfile p = RoundMachine();
  Workload narrow = kGemv;
  narrow.dtype = Dtype::kS8F32;
  const double bytes = narrow.CompulsoryBytes();
  const Row s8 = Measured(p, "gemv_s8", narrow, {bytes, bytes, bytes, bytes}, 2e-3);
  const Row gemv = DramBoundGemv(p);
  const Lever fewer = Get(LeversOfFirst(p, {gemv, s8}), Lever::Kind::kFewerBytes);
  EXPECT_NEAR(fewer.gain, gemv.verdict.bound_seconds / s8.verdict.bound_seconds, 1e-9);
  ASSERT_TRUE(fewer.measured.has_value());
  EXPECT_DOUBLE_EQ(*fewer.measured, 8e-3 / 2e-3);
  EXPECT_NE(fewer.how.find("gemv_s8"), std::string::npos) << fewer.how;
}

// Without a row for the narrower workload, the best kernel's own model for it prices the lever
// (here one that binds at 2 ms), and says which kernel.
TEST(Levers, WithoutARowTheNarrowerKernelsModelPricesFewerBytes) {
  const MachineProfile p = RoundMachine();
  const Workload gemm{Op::kGemm, 1024, 1024, 1024, Dtype::kF32, Epilogue::kNone};
  const Row row = Measured(p, "gemm_f32", gemm, {1e9, 200e6, 0, 0}, 25e-3);
  Workload asked;
  const Lever fewer = Get(LeversOfFirst(p, {row},
                                        [&](const Workload& w, int) {
                                          asked = w;
                                          return std::optional<ModelBound>({2e-3, "int8_gemm"});
                                        }),
                          Lever::Kind::kFewerBytes);
  EXPECT_EQ(asked.dtype, Dtype::kU8S8);
  EXPECT_NEAR(fewer.gain, row.verdict.bound_seconds / 2e-3, 1e-9);
  EXPECT_NE(fewer.how.find("priced by the int8_gemm model"), std::string::npos) << fewer.how;
  // No kernel computes it: this row's traffic, scaled, stands in.
  const Lever scaled =
      Get(LeversOfFirst(p, {row}, [](const Workload&, int) { return std::optional<ModelBound>(); }),
          Lever::Kind::kFewerBytes);
  EXPECT_NEAR(scaled.gain, 4.0, 1e-9);  // 100 against 400 GOP/s
}

TEST(Levers, AComputeBoundGemmGainsFromNarrowerArithmeticAndItsInnerLoop) {
  const MachineProfile p = RoundMachine();
  const Workload gemm{Op::kGemm, 1024, 1024, 1024, Dtype::kF32, Epilogue::kNone};
  // 200 MB from L2 take 2 ms; the operations 21.5 ms: compute binds, whatever L2 moves.
  const Row row = Measured(p, "gemm_f32", gemm, {1e9, 200e6, 0, 0}, 25e-3);
  ASSERT_EQ(row.verdict.binding, "f32 compute, 1 thread");
  const std::vector<Lever> levers = LeversOfFirst(p, {row});
  // No int8 row: this row's bytes halved (u8 x s8 into s32), the operations at 400 GOP/s.
  const double f32 = gemm.Operations() / 100e9, int8 = gemm.Operations() / 400e9;
  EXPECT_NEAR(Get(levers, Lever::Kind::kFewerBytes).gain, f32 / int8, 1e-9);
  EXPECT_NE(Get(levers, Lever::Kind::kFewerBytes).how.find("mostly u8s8 arithmetic"),
            std::string::npos);
  EXPECT_FALSE(Get(levers, Lever::Kind::kMoreWorkPerByte).Pays());
  // L2 moves 16x the compulsory bytes, but the operations bind.
  EXPECT_FALSE(Get(levers, Lever::Kind::kBetterReuse).Pays());
  EXPECT_NE(Get(levers, Lever::Kind::kBetterReuse).how.find("not what binds"), std::string::npos);
  EXPECT_NEAR(Get(levers, Lever::Kind::kInnerLoop).gain, 25e-3 / f32, 1e-9);
}

TEST(Levers, ALevelMovingMoreThanTheCompulsoryBytesNeedsBetterReuse) {
  const MachineProfile p = RoundMachine();
  const Workload gemm{Op::kGemm, 1024, 1024, 1024, Dtype::kU8S8, Epilogue::kNone};
  // 1 GB from L2 take 10 ms against 5.4 ms of operations at 400 GOP/s.
  const Row row = Measured(p, "gemm_s8", gemm, {2e9, 1e9, 0, 0}, 12e-3);
  ASSERT_EQ(row.verdict.binding, "L2 bandwidth, 1 thread");
  const std::vector<Lever> levers = LeversOfFirst(p, {row});
  EXPECT_FALSE(Get(levers, Lever::Kind::kFewerBytes).Pays());  // one byte already
  EXPECT_FALSE(Get(levers, Lever::Kind::kMoreWorkPerByte).Pays());
  const Lever& reuse = Get(levers, Lever::Kind::kBetterReuse);
  EXPECT_NEAR(reuse.gain, (1e9 / 100e9) / (gemm.Operations() / 400e9), 1e-9);
  EXPECT_NE(reuse.how.find("L2 moves"), std::string::npos) << reuse.how;
  ASSERT_NE(FirstThatPays(levers), nullptr);
  EXPECT_EQ(FirstThatPays(levers)->kind, Lever::Kind::kBetterReuse);
}

TEST(Levers, FusionIsPricedForTheUnfusedRowAndShownAsSavedForTheFusedOne) {
  const MachineProfile p = RoundMachine();
  const Workload w{Op::kGemm, 4096, 4096, 64, Dtype::kF32, Epilogue::kBiasRelu};  // C: 64 MiB
  const Traffic pass = EpiloguePassTraffic(w, p);
  ASSERT_EQ(pass[MemoryLevel::kDram], 64.0 * 1024 * 1024);  // past every cache
  // The GEMM's operations bind (21.5 ms); the pass after it moves C from DRAM: 6.7 ms more.
  const std::array<double, kNumMemoryLevels> gemm_bytes{1e9, 500e6, 200e6, 100e6};
  const double compute = w.Operations() / 100e9, pass_seconds = pass[MemoryLevel::kDram] / 10e9;
  const Row fused = Measured(p, "gemm_f32", w, gemm_bytes, 25e-3);
  const Row unfused = Measured(p, "gemm_f32_unfused", w, gemm_bytes, 33e-3, pass.bytes);
  ASSERT_NEAR(unfused.verdict.bound_seconds, compute + pass_seconds, 1e-12);

  const Lever pull = Get(LeversOfFirst(p, {unfused, fused}), Lever::Kind::kFusion);
  EXPECT_NEAR(pull.gain, (compute + pass_seconds) / compute, 1e-9);
  ASSERT_TRUE(pull.measured.has_value());
  EXPECT_DOUBLE_EQ(*pull.measured, 33.0 / 25.0);
  EXPECT_TRUE(pull.Pays());

  const Lever pulled = Get(LeversOfFirst(p, {fused, unfused}), Lever::Kind::kFusion);
  EXPECT_TRUE(pulled.pulled);
  EXPECT_FALSE(pulled.Pays());  // nothing left to gain
  ASSERT_TRUE(pulled.measured.has_value());
  EXPECT_DOUBLE_EQ(*pulled.measured, 33.0 / 25.0);
  EXPECT_NE(pulled.how.find(absl::StrFormat("%.2fx", (compute + pass_seconds) / compute)),
            std::string::npos)
      << pulled.how;
}

TEST(Levers, ThreadsArePricedAgainstEveryCpusCeilingsAndMeasuredThere) {
  MachineProfile p = RoundMachine();
  p.logical_cpus = 2;
  // Two threads: 190 GFLOP/s of f32 and 16 GB/s from DRAM (one core cannot saturate it).
  p.ceilings.push_back({Ceiling::Kind::kCompute, Dtype::kF32, MemoryLevel::kDram, 2, 190e9, "fma"});
  p.ceilings.push_back(
      {Ceiling::Kind::kBandwidth, Dtype::kF32, MemoryLevel::kDram, 2, 16e9, "read"});
  const Workload gemm{Op::kGemm, 1024, 1024, 1024, Dtype::kF32, Epilogue::kNone};
  const Row one = Measured(p, "gemm_f32", gemm, {1e9, 0, 0, 12e6}, 25e-3);
  const Lever threads = Get(LeversOfFirst(p, {one}), Lever::Kind::kThreads);
  EXPECT_NEAR(threads.gain, 190.0 / 100.0, 1e-9);  // compute binds at both counts
  EXPECT_FALSE(threads.measured.has_value());
  EXPECT_EQ(threads.how, "2 threads instead of 1");

  const double bytes = kGemv.CompulsoryBytes();
  const Row gemv = Measured(p, "gemv_f32", kGemv, {bytes, bytes, bytes, bytes}, 8e-3);
  const Row gemv_two = Measured(p, "gemv_f32", kGemv, {bytes, bytes, bytes, bytes}, 5e-3, {}, 2);
  const Lever wide = Get(LeversOfFirst(p, {gemv, gemv_two}), Lever::Kind::kThreads);
  EXPECT_NEAR(wide.gain, 16.0 / 10.0, 1e-9);  // DRAM binds at both counts
  ASSERT_TRUE(wide.measured.has_value());
  EXPECT_DOUBLE_EQ(*wide.measured, 8.0 / 5.0);
  // On every CPU already: nothing to gain.
  EXPECT_FALSE(Get(LeversOfFirst(p, {gemv_two}), Lever::Kind::kThreads).Pays());
}

TEST(Levers, ABrokenModelOrARowWithoutVerdictPricesNone) {
  const MachineProfile p = RoundMachine();
  const double bytes = kGemv.CompulsoryBytes();
  const Row impossible = Measured(p, "gemv_f32", kGemv, {bytes, bytes, bytes, bytes}, 1e-3);
  ASSERT_EQ(impossible.verdict.verdict, Verdict::Class::kImpossible);
  EXPECT_TRUE(LeversOfFirst(p, {impossible}).empty());
  Row unjudged = DramBoundGemv(p);
  unjudged.verdict = Verdict{};
  EXPECT_TRUE(LeversOfFirst(p, {unjudged}).empty());
  EXPECT_TRUE(LeversOf(ReportInput{}, 0).empty());
}

TEST(Levers, TheReportTabulatesThemAndNamesTheFirstThatPays) {
  ReportInput in;
  in.profile = RoundMachine();
  const Row gemv = DramBoundGemv(in.profile);
  in.results = {gemv.result};
  in.verdicts = {gemv.verdict};
  const std::string md = RenderMarkdown(in);
  for (
      const char* pattern :
      {R"(^## Levers, in the order they pay$)",
       R"(^\| \[1\]\(#result-1\) \| gemv_f32 \| gemv 4096x4096 f32 none \| 1 \| DRAM bandwidth, 1 thread \| 4\.0x \| 20\.0x \| – \| – \| – \| 1\.2x \| fewer bytes: s8f32 operands)"}) {
    EXPECT_TRUE(std::regex_search(md, std::regex(pattern, std::regex::multiline)))
        << pattern << "\n"
        << md;
  }
  const nlohmann::json j = RenderJson(in);
  const nlohmann::json& levers = j["results"][0]["levers"];
  ASSERT_EQ(levers.size(), 6u);
  EXPECT_EQ(levers[0]["lever"], "fewer bytes");
  EXPECT_EQ(levers[4]["lever"], "threads");
  EXPECT_EQ(levers[0]["pays"], true);
  EXPECT_EQ(levers[3]["lever"], "fusion");
  EXPECT_EQ(levers[3]["pays"], false);
  EXPECT_TRUE(levers[0]["measured"].is_null());
  // Without verdicts (a kernel not loaded) the section is left out.
  in.verdicts.clear();
  EXPECT_EQ(RenderMarkdown(in).find("## Levers"), std::string::npos);
}

// A 1x1x1 GEMM is timed at a call's fixed cost, far above a bound of picoseconds: the inner loop
// cannot close that gap, and its lever says what can.
TEST(Levers, ABoundBelowACallsFixedCostAsksForMoreWorkPerCall) {
  const MachineProfile p = RoundMachine();
  const Workload tiny{Op::kGemm, 1, 1, 1, Dtype::kF32, Epilogue::kNone};
  const double bytes = tiny.CompulsoryBytes();
  const Lever overhead =
      Get(LeversOfFirst(p, {Measured(p, "gemm_f32", tiny, {bytes, 0, 0, 0}, 2e-6)}),
          Lever::Kind::kInnerLoop);
  EXPECT_TRUE(overhead.Pays());
  EXPECT_NE(overhead.how.find("below a call's fixed cost"), std::string::npos) << overhead.how;
  // A kernel far from a bound of milliseconds is told about its inner loop.
  const Lever slow = Get(LeversOfFirst(p, {DramBoundGemv(p)}), Lever::Kind::kInnerLoop);
  EXPECT_NE(slow.how.find("instruction schedule"), std::string::npos) << slow.how;
}

}  // namespace
}  // namespace rooftune::reports
