#include "framework/roofline.h"

#include <gtest/gtest.h>

#include <functional>

#include "absl/strings/str_join.h"
#include "tests/round_machine.h"

namespace rooftune {
namespace {

using fixtures::RoundMachine;  // L1 32 KiB, L2 1 MiB, L3 32 MiB; 100 GB/s L2, 10 GB/s DRAM

Traffic DramOnly(double bytes) {
  Traffic t;
  t[MemoryLevel::kDram] = bytes;
  return t;
}

TEST(WarmTraffic, LevelsBeyondTheCacheThatHoldsTheWorkingSetMoveNothing) {
  const MachineProfile p = RoundMachine();  // L1 32 KiB, L2 1 MiB, L3 32 MiB (sysfs)
  Traffic cold;
  cold.bytes = {4e6, 6e6, 2e6, 1e6};
  // 3 x 128 x 128 x 4 bytes = 192 KiB: fits L2, so nothing crosses L3 -> L2 or DRAM -> L3.
  const Workload small{Op::kGemm, 128, 128, 128, Dtype::kF32, Epilogue::kNone};
  const Traffic warm = WarmTraffic(cold, small, p);
  EXPECT_EQ(warm[MemoryLevel::kL1], 4e6);
  EXPECT_EQ(warm[MemoryLevel::kL2], 6e6);
  EXPECT_EQ(warm[MemoryLevel::kL3], 0);
  EXPECT_EQ(warm[MemoryLevel::kDram], 0);
  // 48 MiB fits no cache: the cold traffic stands.
  const Workload big{Op::kGemm, 2048, 2048, 2048, Dtype::kF32, Epilogue::kNone};
  EXPECT_EQ(WarmTraffic(cold, big, p).bytes, cold.bytes);
  // Judge charges DRAM for the small workload only when told the measurement was cold.
  const Verdict as_cold = Judge(p, SelectCeilings(p, small.dtype, 1), small, 1, cold, 1e-4, 0.01);
  EXPECT_EQ(as_cold.binding, "DRAM bandwidth, 1 thread");
  const Verdict as_warm =
      Judge(p, SelectCeilings(p, small.dtype, 1), small, 1, cold, 1e-4, 0.01, {.warm = true});
  EXPECT_EQ(as_warm.binding, "L2 bandwidth, 1 thread");
}

// DESIGN.md: a working set near a level's size is reported as straddling it, not silently priced
// at either side.
TEST(Judge, AWarmWorkingSetNearACachesSizeIsSaidToStraddleIt) {
  const MachineProfile p = RoundMachine();  // L1 32 KiB, L2 1 MiB, L3 32 MiB
  auto judge = [&](const Workload& w, double seconds, bool warm) {
    const double bytes = w.CompulsoryBytes();
    Traffic t;
    t.bytes = {bytes, bytes, bytes, bytes};
    return Judge(p, SelectCeilings(p, w.dtype, 1), w, 1, t, seconds, 0.01, {.warm = warm});
  };
  // 0.6 MiB: held in L2 when warm, and priced at L2's bandwidth, which is near its size.
  const Workload near_l2{Op::kGemv, 1, 400, 400, Dtype::kF32, Epilogue::kNone};
  EXPECT_EQ(judge(near_l2, 1e-4, true).binding,
            "L2 bandwidth, 1 thread (working set 0.6 MiB near L2's 1.0 MiB: partly held, partly "
            "not)");
  // Cold, it comes from DRAM whatever the caches hold: nothing to say.
  EXPECT_EQ(judge(near_l2, 1e-4, false).binding, "DRAM bandwidth, 1 thread");
  // 25 MiB is near L3, but held there the bytes that bind are L2's: L3's size does not change them.
  const Workload near_l3{Op::kGemv, 1, 2560, 2560, Dtype::kF32, Epilogue::kNone};
  ASSERT_EQ(StraddledCache(near_l3, p)->level, 3);
  EXPECT_EQ(judge(near_l3, 1e-3, true).binding, "L2 bandwidth, 1 thread");
  // Nor when the operations bind.
  const Workload gemm{Op::kGemm, 256, 256, 256, Dtype::kF32, Epilogue::kNone};  // 0.75 MiB
  ASSERT_EQ(StraddledCache(gemm, p)->level, 2);
  EXPECT_EQ(judge(gemm, 1, true).binding, "f32 compute, 1 thread");
  // Well inside a level, or far past every one, none.
  EXPECT_FALSE(
      StraddledCache({Op::kGemv, 1, 128, 512, Dtype::kF32, Epilogue::kNone}, p));  // 258 KiB
  EXPECT_FALSE(
      StraddledCache({Op::kGemv, 1, 8192, 8192, Dtype::kF32, Epilogue::kNone}, p));  // 256 MiB
}

TEST(EpiloguePassTraffic, CIsLoadedAgainAndRefilledFromEveryLevelItOutgrows) {
  const MachineProfile p = RoundMachine();  // L1 32 KiB, L2 1 MiB, L3 32 MiB (sysfs)
  // C 256 x 256 f32 = 256 KiB: past L1, inside L2.
  const Workload small{Op::kGemm, 256, 256, 64, Dtype::kF32, Epilogue::kBiasRelu};
  const Traffic in_l2 = EpiloguePassTraffic(small, p);
  EXPECT_EQ(in_l2[MemoryLevel::kL1], 256.0 * 256 * 4 + 256 * 4);  // C and the bias
  EXPECT_EQ(in_l2[MemoryLevel::kL2], 256.0 * 256 * 4);
  EXPECT_EQ(in_l2[MemoryLevel::kL3], 0);
  EXPECT_EQ(in_l2[MemoryLevel::kDram], 0);
  // C 4096 x 4096 f32 = 64 MiB: past every cache.
  const Workload big{Op::kGemm, 4096, 4096, 64, Dtype::kF32, Epilogue::kBias};
  EXPECT_EQ(EpiloguePassTraffic(big, p)[MemoryLevel::kDram], 4096.0 * 4096 * 4);
  // The int8 path's C is dequantised f32 too.
  const Workload int8{Op::kGemm, 4096, 4096, 64, Dtype::kU8S8, Epilogue::kBias};
  EXPECT_EQ(EpiloguePassTraffic(int8, p)[MemoryLevel::kDram], 4096.0 * 4096 * 4);
  // No epilogue, no pass; a level of unknown size is not charged (nor any beyond it).
  EXPECT_EQ(EpiloguePassTraffic({Op::kGemm, 4096, 4096, 64, Dtype::kF32, Epilogue::kNone}, p).bytes,
            Traffic().bytes);
  const Traffic unknown = EpiloguePassTraffic(big, MachineProfile());
  EXPECT_GT(unknown[MemoryLevel::kL1], 0);
  EXPECT_EQ(unknown[MemoryLevel::kL2] + unknown[MemoryLevel::kL3] + unknown[MemoryLevel::kDram], 0);
}

// A pass after the main loop (an unfused epilogue) cannot overlap it: its bound adds.
TEST(Judge, ASeparatePassAddsItsOwnBound) {
  const MachineProfile p = RoundMachine();
  const Workload w{Op::kGemm, 1000, 1000, 1000, Dtype::kF32, Epilogue::kBiasRelu};  // 2 GFLOP
  Traffic t = DramOnly(12e6);
  t.after[int(MemoryLevel::kDram)] = 50e6;  // 5 ms at 10 GB/s
  const Verdict v = Judge(p, SelectCeilings(p, w.dtype, 1), w, 1, t, 0.03, 0.01);
  EXPECT_DOUBLE_EQ(v.pass_seconds, 0.005);
  EXPECT_DOUBLE_EQ(v.bound_seconds, 0.02 + 0.005);
  EXPECT_EQ(v.binding, "f32 compute, 1 thread, then DRAM bandwidth, 1 thread (separate pass)");
  // Warm, with a working set the L3 holds, the pass moves nothing from DRAM either.
  const Verdict warm = Judge(p, SelectCeilings(p, w.dtype, 1), w, 1, t, 0.03, 0.01, {.warm = true});
  EXPECT_EQ(warm.pass_seconds, 0);
  EXPECT_EQ(warm.binding, "f32 compute, 1 thread");
}

TEST(Judge, ComputeBoundAtBoundAndHeadroom) {
  const MachineProfile p = RoundMachine();
  const Workload w{Op::kGemm, 1000, 1000, 1000, Dtype::kF32, Epilogue::kNone};  // 2 GFLOP
  const CeilingSet ceilings = SelectCeilings(p, w.dtype, 1);
  const Verdict at = Judge(p, ceilings, w, 1, DramOnly(12e6), 0.021, 0.01);
  EXPECT_EQ(at.verdict, Verdict::Class::kAtBound);
  EXPECT_DOUBLE_EQ(at.bound_seconds, 0.02);
  EXPECT_EQ(at.binding, "f32 compute, 1 thread");
  EXPECT_NEAR(at.attainment, 0.02 / 0.021, 1e-12);
  const Verdict slow = Judge(p, ceilings, w, 1, DramOnly(12e6), 0.1, 0.01);
  EXPECT_EQ(slow.verdict, Verdict::Class::kHeadroom);
}

TEST(Judge, MemoryBoundPicksTheDramCeiling) {
  const MachineProfile p = RoundMachine();
  const Workload w{Op::kGemv, 1, 8192, 8192, Dtype::kF32, Epilogue::kNone};
  const Verdict v =
      Judge(p, SelectCeilings(p, w.dtype, 1), w, 1, DramOnly(w.CompulsoryBytes()), 0.03, 0.01);
  EXPECT_EQ(v.binding, "DRAM bandwidth, 1 thread");
  EXPECT_NEAR(v.bound_seconds, w.CompulsoryBytes() / 10e9, 1e-12);
}

// Traffic counts lines filled: a read-bound kernel at the read bandwidth is at its bound, not at
// 0.5 of a non-temporal write figure that no fill stream reaches.
TEST(Judge, FillTrafficIsPricedAgainstTheReadCeilingNotTheFastestKind) {
  MachineProfile p = RoundMachine();
  p.ceilings.push_back(
      {Ceiling::Kind::kBandwidth, Dtype::kF32, MemoryLevel::kDram, 1, 20e9, "write"});
  p.ceilings.push_back(
      {Ceiling::Kind::kBandwidth, Dtype::kF32, MemoryLevel::kDram, 1, 15e9, "copy"});
  const Workload w{Op::kGemv, 1, 8192, 8192, Dtype::kF32, Epilogue::kNone};
  const Traffic traffic = DramOnly(w.CompulsoryBytes());
  const double at_read_speed = w.CompulsoryBytes() / 10e9;
  const Verdict v = Judge(p, SelectCeilings(p, w.dtype, 1), w, 1, traffic, at_read_speed, 0.01);
  EXPECT_EQ(v.binding, "DRAM bandwidth, 1 thread");
  EXPECT_NEAR(v.attainment, 1.0, 1e-9);
  EXPECT_EQ(v.verdict, Verdict::Class::kAtBound);
  // Without a read ceiling, the fastest kind measured bounds it.
  p.ceilings.erase(p.ceilings.begin() + 2);  // DRAM read
  const Verdict no_read =
      Judge(p, SelectCeilings(p, w.dtype, 1), w, 1, traffic, at_read_speed, 0.01);
  EXPECT_NEAR(no_read.attainment, 0.5, 1e-9);
}

TEST(Judge, AboveTheRooflineIsImpossibleNotFast) {
  const MachineProfile p = RoundMachine();
  const Workload w{Op::kGemm, 1000, 1000, 1000, Dtype::kF32, Epilogue::kNone};
  const Verdict v = Judge(p, SelectCeilings(p, w.dtype, 1), w, 1, DramOnly(12e6), 0.01, 0.01);
  EXPECT_EQ(v.verdict, Verdict::Class::kImpossible);
  EXPECT_NEAR(v.attainment, 2.0, 1e-12);
  EXPECT_NE(v.diagnosis.find("under-measured"), std::string::npos) << v.diagnosis;
}

// Counters settle which way an impossible verdict's model is broken: bytes the model charged to
// DRAM that the PMU did not see mean the byte count is wrong; bytes it did see mean the DRAM
// ceiling is measured low. The same for FLOPs against a compute bound.
TEST(CounterEvidence, NamesTheByteCountOrTheCeiling) {
  const MachineProfile p = RoundMachine();
  const Workload gemv{Op::kGemv, 1, 4096, 4096, Dtype::kF32, Epilogue::kNone};
  const double bytes = gemv.CompulsoryBytes();  // 6.7 ms at 10 GB/s
  const Verdict fast =
      Judge(p, SelectCeilings(p, gemv.dtype, 1), gemv, 1, DramOnly(bytes), 3e-3, 0.01);
  ASSERT_EQ(fast.verdict, Verdict::Class::kImpossible);
  CountedTraffic counted;
  EXPECT_EQ(CounterEvidence(fast, counted), "");  // nothing counted at DRAM
  counted.bytes[int(MemoryLevel::kDram)] = 0.4 * bytes;
  EXPECT_NE(CounterEvidence(fast, counted)
                .find("0.40x the bytes into DRAM the model charged: the "
                      "byte count is wrong"),
            std::string::npos)
      << CounterEvidence(fast, counted);
  counted.bytes[int(MemoryLevel::kDram)] = 1.02 * bytes;
  EXPECT_NE(CounterEvidence(fast, counted)
                .find("DRAM bandwidth, 1 thread allows, so that ceiling is "
                      "measured low"),
            std::string::npos)
      << CounterEvidence(fast, counted);

  const Workload gemm{Op::kGemm, 1000, 1000, 1000, Dtype::kF32, Epilogue::kNone};  // 20 ms of FMAs
  const Verdict compute =
      Judge(p, SelectCeilings(p, gemm.dtype, 1), gemm, 1, DramOnly(12e6), 0.01, 0.01);
  ASSERT_EQ(compute.verdict, Verdict::Class::kImpossible);
  counted = {};
  counted.flops = 1e9;  // half the workload's 2e9
  EXPECT_NE(CounterEvidence(compute, counted).find("the operation count is wrong"),
            std::string::npos);
  counted.flops = 2e9;
  EXPECT_NE(CounterEvidence(compute, counted).find("f32 compute, 1 thread allows"),
            std::string::npos);
  // A legal verdict needs no evidence.
  const Verdict legal =
      Judge(p, SelectCeilings(p, gemm.dtype, 1), gemm, 1, DramOnly(12e6), 0.03, 0.01);
  EXPECT_EQ(CounterEvidence(legal, counted), "");
}

TEST(Judge, NoiseWithinThreeCvIsStillLegal) {
  const MachineProfile p = RoundMachine();
  const Workload w{Op::kGemm, 1000, 1000, 1000, Dtype::kF32, Epilogue::kNone};
  // 8% over the bound with a 5% CV: inside 3 x CV.
  const Verdict v =
      Judge(p, SelectCeilings(p, w.dtype, 1), w, 1, DramOnly(12e6), 0.02 / 1.08, 0.05);
  EXPECT_EQ(v.verdict, Verdict::Class::kAtBound);
}

TEST(Judge, PricingF32AgainstTheF64CeilingIsNamedAsTheWrongCeiling) {
  const MachineProfile p = RoundMachine();
  const Workload w{Op::kGemm, 1000, 1000, 1000, Dtype::kF32, Epilogue::kNone};
  const CeilingSet wrong = SelectCeilings(p, Dtype::kF64, 1);  // the classic bug
  // At 80 GFLOP/s the f32 kernel is legal against f32 (100) but "beats" f64 (50).
  const Verdict v = Judge(p, wrong, w, 1, DramOnly(12e6), 0.025, 0.01);
  EXPECT_EQ(v.verdict, Verdict::Class::kImpossible);
  EXPECT_NE(v.diagnosis.find("wrong ceiling"), std::string::npos) << v.diagnosis;
  EXPECT_NE(v.diagnosis.find("f64 compute"), std::string::npos) << v.diagnosis;
}

// s8 weights dequantised in registers are priced at their own loop (widen, convert and
// multiply-add: a third of the FMA's rate here), a ceiling of their own dtype and no "wrong
// ceiling": a kernel at 0.9 of it is at its bound, where the FMA's ceiling would call it 0.3.
TEST(Judge, S8WeightsConvertedInRegistersArePricedAtTheirOwnLoop) {
  MachineProfile p = RoundMachine();
  const double fma = p.FindCompute(Dtype::kF32, 1)->per_second;
  p.ceilings.push_back({Ceiling::Kind::kCompute, Dtype::kS8F32, MemoryLevel::kDram, 1, fma / 3,
                        "s8 widen, convert, multiply-add"});
  const Workload w{Op::kGemv, 1, 1000, 1000, Dtype::kS8F32, Epilogue::kNone};
  const CeilingSet set = SelectCeilings(p, w.dtype, 1);
  const double bound = w.Operations() / (fma / 3);
  const Verdict v = Judge(p, set, w, 1, DramOnly(1e3), bound / 0.9, 0.01);
  EXPECT_EQ(v.verdict, Verdict::Class::kAtBound) << v.diagnosis;
  EXPECT_NEAR(v.attainment, 0.9, 1e-6);
  ASSERT_NE(v.Binding(), nullptr);
  EXPECT_EQ(v.Binding()->ceiling.dtype, Dtype::kS8F32);
  EXPECT_EQ(v.diagnosis.find("wrong ceiling"), std::string::npos) << v.diagnosis;
  // A profile probed before the loop existed prices them at the FMA's rate, as before.
  const MachineProfile older = RoundMachine();
  const Verdict fallback =
      Judge(older, SelectCeilings(older, w.dtype, 1), w, 1, DramOnly(1e3), bound / 0.9, 0.01);
  EXPECT_NEAR(fallback.attainment, 0.3, 1e-6);
  EXPECT_EQ(fallback.diagnosis.find("wrong ceiling"), std::string::npos) << fallback.diagnosis;
}

TEST(Judge, APerThreadCeilingForTwoThreadsIsTheWrongCeiling) {
  const MachineProfile p = RoundMachine();
  const Workload w{Op::kGemm, 1000, 1000, 1000, Dtype::kF32, Epilogue::kNone};
  const CeilingSet one_thread = SelectCeilings(p, w.dtype, 1);
  const Verdict v = Judge(p, one_thread, w, 2, DramOnly(12e6), 0.012, 0.01);
  EXPECT_EQ(v.verdict, Verdict::Class::kImpossible);
  EXPECT_NE(v.diagnosis.find("ran on 2 threads"), std::string::npos) << v.diagnosis;
}

TEST(Judge, ACacheResidentWorkingSetChargedToDramIsTheWrongByteCount) {
  const MachineProfile p = RoundMachine();
  // 64 x 64 x 64 f32: 48 KiB, fits the 1 MiB L2; charging 100 MB of DRAM traffic is a broken model.
  const Workload w{Op::kGemm, 64, 64, 64, Dtype::kF32, Epilogue::kNone};
  const Verdict v = Judge(p, SelectCeilings(p, w.dtype, 1), w, 1, DramOnly(100e6), 0.001, 0.01);
  EXPECT_EQ(v.verdict, Verdict::Class::kImpossible);
  EXPECT_NE(v.diagnosis.find("wrong byte count"), std::string::npos) << v.diagnosis;
  EXPECT_NE(v.diagnosis.find("fits in L2"), std::string::npos) << v.diagnosis;
}

TEST(Judge, AWorkingSetThatFitsOnlyTheReportedCacheIsNamedToo) {
  MachineProfile p = RoundMachine();
  // The probe measured a 2 MiB last level; the OS reports 32 MiB.
  p.measured_levels = {{32 << 10, 32 << 10, 32 << 10, 1, LevelKind::kCache},
                       {1 << 20, 1 << 20, 1 << 20, 4, LevelKind::kCache},
                       {2 << 20, 2 << 20, 2 << 20, 40, LevelKind::kCache}};
  const Workload w{Op::kGemv, 1, 2048, 2048, Dtype::kF32, Epilogue::kNone};  // 16 MiB of W
  const Verdict v = Judge(p, SelectCeilings(p, w.dtype, 1), w, 1, DramOnly(w.CompulsoryBytes()),
                          0.0005, 0.01, {.warm = true});
  EXPECT_EQ(v.verdict, Verdict::Class::kImpossible);
  EXPECT_NE(v.diagnosis.find("fits the 32.0 MiB the OS reports"), std::string::npos) << v.diagnosis;
  EXPECT_NE(v.diagnosis.find("--cold"), std::string::npos) << v.diagnosis;
  // Timed cold, its weights were flushed before every call: no cache can explain it, and the
  // diagnosis does not suggest one.
  const Verdict cold =
      Judge(p, SelectCeilings(p, w.dtype, 1), w, 1, DramOnly(w.CompulsoryBytes()), 0.0005, 0.01);
  EXPECT_EQ(cold.verdict, Verdict::Class::kImpossible);
  EXPECT_EQ(cold.diagnosis.find("OS reports"), std::string::npos) << cold.diagnosis;
  EXPECT_NE(cold.diagnosis.find("under-measured"), std::string::npos) << cold.diagnosis;
}

TEST(SelectCeilings, ExtrapolatesAMissingThreadCountAndSaysSo) {
  const MachineProfile p = RoundMachine();
  const CeilingSet set = SelectCeilings(p, Dtype::kF32, 4);
  ASSERT_FALSE(set.ceilings.empty());
  EXPECT_EQ(set.ceilings.front().threads, 4);
  EXPECT_DOUBLE_EQ(set.ceilings.front().per_second, 400e9);
  EXPECT_FALSE(set.notes.empty());
}

// The probe measures 1, 2, 4, 8 ... threads; 6 threads are priced from their neighbours. Compute
// scales with the threads (6/4 x the 4-thread figure is the tighter), DRAM bandwidth saturates
// (the 8-thread figure is the tighter): each the lowest legal bound.
TEST(SelectCeilings, BoundsAThreadCountBetweenTwoMeasuredOnesByTheTighterNeighbour) {
  MachineProfile p = RoundMachine();
  auto add = [&](Ceiling::Kind kind, MemoryLevel level, int threads, double rate) {
    p.ceilings.push_back({kind, Dtype::kF32, level, threads, rate,
                          kind == Ceiling::Kind::kCompute ? "fma" : "read"});
  };
  add(Ceiling::Kind::kCompute, MemoryLevel::kDram, 4, 380e9);
  add(Ceiling::Kind::kCompute, MemoryLevel::kDram, 8, 790e9);
  add(Ceiling::Kind::kBandwidth, MemoryLevel::kDram, 4, 30e9);
  add(Ceiling::Kind::kBandwidth, MemoryLevel::kDram, 8, 36e9);
  const CeilingSet set = SelectCeilings(p, Dtype::kF32, 6);
  auto find = [&](Ceiling::Kind kind, MemoryLevel level) -> const Ceiling* {
    for (const Ceiling& c : set.ceilings) {
      if (c.kind == kind && (kind == Ceiling::Kind::kCompute || c.level == level)) return &c;
    }
    return nullptr;
  };
  const Ceiling* compute = find(Ceiling::Kind::kCompute, MemoryLevel::kDram);
  ASSERT_NE(compute, nullptr);
  EXPECT_EQ(compute->threads, 6);
  EXPECT_DOUBLE_EQ(compute->per_second, 570e9);  // not 790 (8 threads), not 600 (6 x 1 thread)
  EXPECT_EQ(compute->source, "fma (extrapolated)");
  const Ceiling* dram = find(Ceiling::Kind::kBandwidth, MemoryLevel::kDram);
  ASSERT_NE(dram, nullptr);
  EXPECT_DOUBLE_EQ(dram->per_second, 36e9);  // not 45 (6/4 x 30), not 60 (6 x 10)
  EXPECT_EQ(dram->source, "read (8-thread figure)");
  // L2 was measured on one thread only: 6 x it.
  const Ceiling* l2 = find(Ceiling::Kind::kBandwidth, MemoryLevel::kL2);
  ASSERT_NE(l2, nullptr);
  EXPECT_DOUBLE_EQ(l2->per_second, 600e9);
  EXPECT_NE(absl::StrJoin(set.notes, "\n")
                .find("no 6-thread DRAM bandwidth ceiling measured; using the 8-thread one"),
            std::string::npos)
      << absl::StrJoin(set.notes, "\n");
  EXPECT_NE(absl::StrJoin(set.notes, "\n").find("using 6/4 x the 4-thread one"), std::string::npos);
}

// Threads on two NUMA nodes read operands one thread filled across the interconnect, which the
// probe's ceilings (each thread's memory local) do not price: the verdict's notes say so.
TEST(SelectCeilings, ThreadsSpanningNumaNodesGetANote) {
  MachineProfile p = RoundMachine();
  p.cpu_nodes = {0, 0, 1, 1};
  auto mentions_numa = [&](int threads) {
    for (const std::string& note : SelectCeilings(p, Dtype::kF32, threads).notes) {
      if (note.find("NUMA nodes") != std::string::npos) return true;
    }
    return false;
  };
  EXPECT_FALSE(mentions_numa(1));
  EXPECT_FALSE(mentions_numa(2));
  EXPECT_TRUE(mentions_numa(3));
  EXPECT_EQ(p.NumaNodesSpanned(4), 2);
  EXPECT_EQ(MachineProfile().NumaNodesSpanned(64), 1);  // no nodes reported: one
}

// Without a ceiling of their own (a profile probed before their loop existed).
TEST(SelectCeilings, S8WeightsAgainstF32ActivationsUseTheF32Ceiling) {
  const MachineProfile p = RoundMachine();
  const CeilingSet set = SelectCeilings(p, Dtype::kS8F32, 1);
  ASSERT_FALSE(set.ceilings.empty());
  EXPECT_EQ(set.ceilings.front().dtype, Dtype::kF32);
}

TEST(Judge, NoCeilingsIsNoModel) {
  MachineProfile p;
  const Workload w{Op::kGemm, 10, 10, 10, Dtype::kF32, Epilogue::kNone};
  const Verdict v = Judge(p, SelectCeilings(p, w.dtype, 1), w, 1, DramOnly(1), 1, 0);
  EXPECT_EQ(v.verdict, Verdict::Class::kNoModel);
}

TEST(StreamsFromDram, GemvAlwaysAndGemmWhenTheRooflineSaysMemoryBound) {
  MachineProfile p;
  p.ceilings = {{Ceiling::Kind::kCompute, Dtype::kF32, MemoryLevel::kDram, 1, 100e9, "fma"},
                {Ceiling::Kind::kBandwidth, Dtype::kF32, MemoryLevel::kDram, 1, 10e9, "read"},
                {Ceiling::Kind::kBandwidth, Dtype::kF32, MemoryLevel::kDram, 1, 40e9, "write"}};
  EXPECT_TRUE(StreamsFromDram(p, {Op::kGemv, 1, 64, 64, Dtype::kF32, Epilogue::kNone}, 1));
  EXPECT_TRUE(StreamsFromDram(p, {Op::kGemm, 8, 4096, 4096, Dtype::kF32, Epilogue::kNone}, 1));
  EXPECT_FALSE(StreamsFromDram(p, {Op::kGemm, 64, 4096, 4096, Dtype::kF32, Epilogue::kNone}, 1));
  EXPECT_FALSE(StreamsFromDram(p, {Op::kGemm, 256, 256, 256, Dtype::kF32, Epilogue::kNone}, 1));
  // No ceilings at two threads: nothing to judge by, so warm.
  EXPECT_FALSE(StreamsFromDram(p, {Op::kGemm, 8, 4096, 4096, Dtype::kF32, Epilogue::kNone}, 2));
  // Operands the largest cache holds stay cached between calls: warm, however memory-bound.
  p.caches = {{1, "Data", 32 << 10}, {2, "Unified", 1 << 20}, {3, "Unified", 32 << 20}};
  EXPECT_FALSE(StreamsFromDram(p, {Op::kGemv, 1, 64, 64, Dtype::kF32, Epilogue::kNone}, 1));
  EXPECT_FALSE(StreamsFromDram(p, {Op::kGemm, 64, 64, 64, Dtype::kF32, Epilogue::kNone}, 1));
  EXPECT_FALSE(
      StreamsFromDram(p, {Op::kGemv, 1, 1024, 1024, Dtype::kF32, Epilogue::kNone}, 1));  // 4 MiB
  // From half the largest cache up a GEMV straddles it: cold, not priced at a guessed capacity.
  EXPECT_TRUE(
      StreamsFromDram(p, {Op::kGemv, 1, 2048, 2048, Dtype::kF32, Epilogue::kNone}, 1));  // 16 MiB
  EXPECT_TRUE(
      StreamsFromDram(p, {Op::kGemv, 1, 4096, 4096, Dtype::kF32, Epilogue::kNone}, 1));  // 64 MiB
  EXPECT_TRUE(StreamsFromDram(p, {Op::kGemm, 8, 4096, 4096, Dtype::kF32, Epilogue::kNone}, 1));
}

}  // namespace
}  // namespace rooftune

namespace rooftune {
namespace {

Traffic DramOnlyTraffic(double bytes) {
  Traffic t;
  t[MemoryLevel::kDram] = bytes;
  return t;
}

// One rule: above 1 + the measured noise is impossible, at and below it never headroom or
// impossible by accident of which attainment was read. Paired, the noise is the pairs' spread.
TEST(ImpossibleRule, PairedAttainmentDecidesAtItsToleranceBoundary) {
  const MachineProfile p = fixtures::RoundMachine();
  const Workload w{Op::kGemm, 1000, 1000, 1000, Dtype::kF32, Epilogue::kNone};  // 20 ms bound
  const CeilingSet ceilings = SelectCeilings(p, w.dtype, 1);
  auto judge = [&](double median, double low, double high) {
    return Judge(p, ceilings, w, 1, DramOnlyTraffic(12e6), 0.0125, 0.3,
                 {.paired = PairedAttainment{median, low, high, 21, "f32 compute, 1 thread"}});
  };
  // A pairing with another ceiling's loop (a row stored when L3 bound it, judged again after the
  // model changed) is not this bound's: the profile's figure stands.
  const Verdict other =
      Judge(p, ceilings, w, 1, DramOnlyTraffic(12e6), 0.0125, 0.3,
            {.paired = PairedAttainment{1.95, 1.9, 2.0, 21, "L3 bandwidth, 1 thread (read)"}});
  EXPECT_EQ(other.Basis(), "profile");
  EXPECT_NEAR(other.attainment, 1.6, 1e-12);
  // The profile says 1.6 (a probe taken in a slow phase); the pairs say 0.95: at bound.
  const Verdict slow_probe = judge(0.95, 0.93, 0.97);
  EXPECT_EQ(slow_probe.verdict, Verdict::Class::kAtBound);
  EXPECT_EQ(slow_probe.Basis(), "paired");
  EXPECT_DOUBLE_EQ(slow_probe.attainment, 0.95);
  EXPECT_NEAR(slow_probe.profile_attainment, 1.6, 1e-12);
  // Tight pairs: the 5% floor is the tolerance. 1.05 is legal, anything beyond is not.
  EXPECT_DOUBLE_EQ(judge(1.049, 1.04, 1.06).tolerance, kNoiseFloor);
  EXPECT_EQ(judge(1.049, 1.04, 1.06).verdict, Verdict::Class::kAtBound);
  const Verdict beyond = judge(1.051, 1.04, 1.06);
  EXPECT_EQ(beyond.verdict, Verdict::Class::kImpossible);
  EXPECT_NE(beyond.diagnosis.find("paired with its ceiling's own loop"), std::string::npos)
      << beyond.diagnosis;
  EXPECT_NE(beyond.diagnosis.find("impossible above 1.05"), std::string::npos) << beyond.diagnosis;
  // Wide pairs widen it: quartiles 0.9-1.1 around 1.0 are a 20% noise.
  EXPECT_NEAR(judge(1.0, 0.9, 1.1).tolerance, 0.2, 1e-12);
  EXPECT_EQ(judge(1.15, 0.95, 1.15).verdict, Verdict::Class::kAtBound);     // 1 + 0.2 / 1.15
  EXPECT_EQ(judge(1.25, 1.15, 1.35).verdict, Verdict::Class::kImpossible);  // 1 + 0.2 / 1.25
  // The pairs' spread, not the timing's CV (0.3 here: 3 x 0.3 would have allowed 1.9), when paired.
  EXPECT_EQ(judge(1.5, 1.45, 1.55).verdict, Verdict::Class::kImpossible);
}

TEST(ImpossibleRule, UnpairedUsesThreeTimesTheCvAndNothingAboveIsAtBound) {
  EXPECT_DOUBLE_EQ(ImpossibleTolerance(std::nullopt, 0.01), kNoiseFloor);
  EXPECT_DOUBLE_EQ(ImpossibleTolerance(std::nullopt, 0.1), 0.30000000000000004);
  const MachineProfile p = fixtures::RoundMachine();
  const Workload w{Op::kGemm, 1000, 1000, 1000, Dtype::kF32, Epilogue::kNone};
  const CeilingSet ceilings = SelectCeilings(p, w.dtype, 1);
  for (double seconds : {0.0205, 0.019, 0.0185, 0.015}) {
    const Verdict v = Judge(p, ceilings, w, 1, DramOnlyTraffic(12e6), seconds, 0.01);
    EXPECT_EQ(v.Basis(), "profile");
    EXPECT_EQ(v.verdict == Verdict::Class::kImpossible, v.attainment > 1 + v.tolerance) << seconds;
    if (v.attainment > 1 + v.tolerance) EXPECT_NE(v.verdict, Verdict::Class::kAtBound);
  }
}

// predict --measure's passes: the median pass's attainment against 1 + the passes' own spread.
TEST(ImpossibleRule, RepeatedTimingsAreAboveTheBoundOnlyBeyondTheirSpread) {
  // Bound 1 ms; passes of 0.93-0.95 ms: attainment 1.06, quartiles tight: 5% floor, above.
  RepeatsAgainstBound tight = BeyondBoundOverRepeats(1e-3, {0.94e-3, 0.93e-3, 0.95e-3, 0.94e-3});
  EXPECT_NEAR(tight.attainment, 1e-3 / 0.94e-3, 1e-12);
  EXPECT_DOUBLE_EQ(tight.tolerance, kNoiseFloor);
  EXPECT_TRUE(tight.above);
  // The same median among passes spread 0.8-1.1 ms: their quartiles' spread allows it.
  RepeatsAgainstBound spread =
      BeyondBoundOverRepeats(1e-3, {0.8e-3, 0.94e-3, 1.1e-3, 0.85e-3, 1.0e-3, 0.94e-3, 0.9e-3});
  EXPECT_NEAR(spread.attainment, 1e-3 / 0.94e-3, 1e-12);
  EXPECT_GT(spread.tolerance, spread.attainment - 1);
  EXPECT_FALSE(spread.above);
  // Below the bound is never above it, and nothing measured says nothing.
  EXPECT_FALSE(BeyondBoundOverRepeats(1e-3, {1.5e-3, 1.6e-3, 1.4e-3}).above);
  EXPECT_EQ(BeyondBoundOverRepeats(1e-3, {}).attainment, 0);
  EXPECT_FALSE(BeyondBoundOverRepeats(0, {1e-3}).above);
}

// A layer of predict --measure judged in pairs (cold calls, within noise) whose later passes ran
// faster than the bound at the ceiling's rate now (a cache larger than measured kept part of
// the weights): the passes say so. Passes within the bound leave the pairs' judgement.
TEST(ImpossibleRule, PassesAboveTheBoundNowAreFlaggedWhereThePairsAreNot) {
  const RepeatsAgainstBound pairs{.attainment = 0.98, .tolerance = 0.05, .above = false};
  const std::vector<double> fast = {0.86e-3, 0.85e-3, 0.87e-3, 0.86e-3, 0.85e-3};
  const RepeatsAgainstBound flagged = PassesOrPairsAboveBound(pairs, 1e-3, fast);
  EXPECT_TRUE(flagged.above);
  EXPECT_NEAR(flagged.attainment, 1e-3 / 0.86e-3, 1e-12);
  const std::vector<double> within = {0.99e-3, 1.0e-3, 1.02e-3};
  const RepeatsAgainstBound kept = PassesOrPairsAboveBound(pairs, 1e-3, within);
  EXPECT_FALSE(kept.above);
  EXPECT_DOUBLE_EQ(kept.attainment, 0.98);
  // Pairs above their bound stay flagged whatever the passes did.
  EXPECT_TRUE(PassesOrPairsAboveBound({1.2, 0.05, true}, 1e-3, within).above);
}

}  // namespace
}  // namespace rooftune

namespace rooftune {
namespace {

// One probe's planned levels: L1, L2 and L3 at the given sizes (steps an octave or more apart),
// and a fourth step (at 60 ns) where `step_beyond` is given.
MachineProfile ProbeFinding(double l1, double l2, double l3, double step_beyond = 0) {
  MachineProfile p = fixtures::RoundMachine();
  p.caches.clear();
  p.measured_levels = {{l1, l1, l1, 1.2, LevelKind::kCache},
                       {l2, l2, l2, 4.5, LevelKind::kCache},
                       {l3, l3, l3, 20, LevelKind::kCache}};
  if (step_beyond > 0) {
    p.measured_levels.push_back({step_beyond, step_beyond, step_beyond, 60, LevelKind::kCache});
  }
  p.memory_latency_ns = 180;
  p.StartLevelConsensus();
  return p;
}

// Three full probes of one guest within an hour planned its L2 at 406, 575 and 967 KiB and its
// last cache at 2.0, 3.3 and 6.0 MiB: planned at the median, each reported unstable with its
// range, and a fourth probe that finds the same moves the answer little.
TEST(LevelConsensus, LevelsThatMoveFromProbeToProbeArePlannedAtTheMedianAndCalledUnstable) {
  const double KiB = 1024, MiB = 1024 * KiB;
  MachineProfile first = ProbeFinding(45 * KiB, 406 * KiB, 2.0 * MiB);
  EXPECT_EQ(first.level_probes, 1);
  EXPECT_EQ(first.EffectiveCacheBytes(2), uint64_t(406 * KiB));
  MachineProfile second = ProbeFinding(47 * KiB, 575 * KiB, 3.3 * MiB);
  FoldLevelConsensus(first, second);
  MachineProfile third = ProbeFinding(45 * KiB, 967 * KiB, 6.0 * MiB);
  FoldLevelConsensus(second, third);
  ASSERT_EQ(third.level_probes, 3);
  ASSERT_EQ(third.ConsensusLevels().size(), 3u);
  EXPECT_EQ(third.EffectiveCacheBytes(1), uint64_t(45 * KiB));
  EXPECT_EQ(third.EffectiveCacheBytes(2), uint64_t(575 * KiB));
  EXPECT_EQ(third.EffectiveCacheBytes(3), uint64_t(3.3 * MiB));
  EXPECT_FALSE(third.EffectiveCacheBytes(4).has_value());
  const std::vector<const LevelConsensus*> held = third.ConsensusLevels();
  EXPECT_FALSE(held[0]->Unstable());  // 45-47 KiB
  EXPECT_TRUE(held[1]->Unstable());
  EXPECT_EQ(held[1]->LowBytes(), 406 * KiB);
  EXPECT_EQ(held[1]->HighBytes(), 967 * KiB);
  // A bound prices each level at the largest size a probe found it at.
  EXPECT_EQ(third.PricedCacheBytes(2), uint64_t(967 * KiB));
  EXPECT_EQ(third.PricedCacheBytes(3), uint64_t(6.0 * MiB));
  EXPECT_TRUE(held[2]->Unstable());
  // The consensus travels with the profile.
  absl::StatusOr<MachineProfile> back = MachineProfile::FromJson(third.ToJson());
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->level_probes, 3);
  EXPECT_EQ(back->EffectiveCacheBytes(2), uint64_t(575 * KiB));
  // Two more probes that agree with the median keep every answer within a quarter octave.
  MachineProfile fourth = ProbeFinding(46 * KiB, 600 * KiB, 3.0 * MiB);
  FoldLevelConsensus(third, fourth);
  MachineProfile fifth = ProbeFinding(46 * KiB, 560 * KiB, 3.6 * MiB);
  FoldLevelConsensus(fourth, fifth);
  for (const MachineProfile* p : {&third, &fourth, &fifth}) {
    for (int level = 1; level <= 3; ++level) {
      EXPECT_LE(std::abs(std::log2(double(*p->EffectiveCacheBytes(level)) /
                                   double(*third.EffectiveCacheBytes(level)))),
                kSameSizeOctaves)
          << "L" << level << " after " << p->level_probes << " probes";
    }
  }
}

// A level one probe alone found (a step within memory it took for a cache, a neighbour's
// transient share) is not planned until more than half of the probes have found it.
TEST(LevelConsensus, ALevelFewProbesFoundIsNotPlanned) {
  const double KiB = 1024, MiB = 1024 * KiB;
  MachineProfile a = ProbeFinding(48 * KiB, 1 * MiB, 8 * MiB);
  MachineProfile b = ProbeFinding(48 * KiB, 1 * MiB, 8 * MiB, 64 * MiB);
  FoldLevelConsensus(a, b);
  EXPECT_EQ(b.level_consensus.size(), 4u);
  EXPECT_EQ(b.ConsensusLevels().size(), 3u);  // 64 MiB: 1 of 2 probes
  EXPECT_FALSE(b.EffectiveCacheBytes(4).has_value());
  MachineProfile c = ProbeFinding(48 * KiB, 1 * MiB, 8 * MiB, 70 * MiB);
  FoldLevelConsensus(b, c);
  ASSERT_EQ(c.ConsensusLevels().size(), 4u);                // 2 of 3 probes
  EXPECT_EQ(c.EffectiveCacheBytes(4), uint64_t(64 * MiB));  // the lower median of 64 and 70
}

// A full probe measures several curves and brings all of them to the consensus: a later probe's
// three curves count three, and each size they found joins the level's range.
TEST(LevelConsensus, AProbeOfSeveralCurvesAddsEveryCurve) {
  const double KiB = 1024, MiB = 1024 * KiB;
  // One probe's three curves: the last cache step moved (4.6, 6.5, 12.7 MiB) and one curve took
  // a step within memory at 72 MiB for a fourth level.
  MachineProfile first = ProbeFinding(45 * KiB, 664 * KiB, 4.6 * MiB, 72 * MiB);
  MachineProfile second = ProbeFinding(47 * KiB, 406 * KiB, 6.5 * MiB);
  FoldLevelConsensus(first, second);
  MachineProfile probe = ProbeFinding(47 * KiB, 683 * KiB, 12.7 * MiB);
  FoldLevelConsensus(second, probe);
  ASSERT_EQ(probe.level_probes, 3);
  ASSERT_EQ(probe.ConsensusLevels().size(), 3u);  // 72 MiB: 1 of 3 curves
  EXPECT_EQ(probe.EffectiveCacheBytes(3), uint64_t(6.5 * MiB));
  EXPECT_FALSE(probe.EffectiveCacheBytes(4).has_value());
  EXPECT_TRUE(probe.ConsensusLevels()[2]->Unstable());

  // A later probe of three curves that all found 8 MiB for the last level.
  MachineProfile later = ProbeFinding(48 * KiB, 680 * KiB, 8 * MiB);
  MachineProfile curve = ProbeFinding(48 * KiB, 680 * KiB, 8 * MiB);
  FoldLevelConsensus(later, curve);
  MachineProfile last = ProbeFinding(48 * KiB, 680 * KiB, 8 * MiB);
  FoldLevelConsensus(curve, last);
  ASSERT_EQ(last.level_probes, 3);
  FoldLevelConsensus(probe, last);
  EXPECT_EQ(last.level_probes, 6);
  const std::vector<const LevelConsensus*> held = last.ConsensusLevels();
  ASSERT_EQ(held.size(), 3u);  // 72 MiB: 1 of 6 curves
  EXPECT_EQ(held[2]->seen_bytes.size(), 6u);
  EXPECT_EQ(held[2]->LowBytes(), 4.6 * MiB);
  EXPECT_EQ(held[2]->HighBytes(), 12.7 * MiB);
  EXPECT_EQ(last.EffectiveCacheBytes(3), uint64_t(8 * MiB));  // lower median of 4.6 6.5 8 8 8 12.7
}

// A curve whose last cache missed in two steps more than an octave apart (4 and 11 MiB here)
// found that level once: no second entry starts beside it, and no level is found by more
// curves than were measured.
TEST(LevelConsensus, ACurveThatStepsTwiceNearOneLevelCountsOnceForIt) {
  const double KiB = 1024, MiB = 1024 * KiB;
  MachineProfile first = ProbeFinding(48 * KiB, 1 * MiB, 6 * MiB);
  MachineProfile second = ProbeFinding(48 * KiB, 1 * MiB, 4 * MiB, 11 * MiB);
  ASSERT_EQ(second.level_consensus.size(), 4u);  // the curve alone plans both steps
  FoldLevelConsensus(first, second);
  ASSERT_EQ(second.level_probes, 2);
  ASSERT_EQ(second.level_consensus.size(), 3u);
  for (const LevelConsensus& c : second.level_consensus) {
    EXPECT_LE(int(c.seen_bytes.size()), second.level_probes) << c.Bytes();
  }
  EXPECT_EQ(second.level_consensus[2].LowBytes(), 4 * MiB);
  EXPECT_EQ(second.level_consensus[2].HighBytes(), 6 * MiB);
}

// A stray entry beside a planned level (a step one curve alone found 0.6 octave past it) does
// not take the votes of later curves that found the planned level nearer the stray's size:
// they join the planned level, which stays planned.
TEST(LevelConsensus, LaterCurvesJoinThePlannedLevelBeforeAStrayBesideIt) {
  const double KiB = 1024, MiB = 1024 * KiB;
  MachineProfile consensus = ProbeFinding(48 * KiB, 1 * MiB, 6 * MiB);
  for (int i = 0; i < 2; ++i) {
    MachineProfile curve = ProbeFinding(48 * KiB, 1 * MiB, 6 * MiB);
    FoldLevelConsensus(consensus, curve);
    consensus = curve;
  }
  const LevelConsensus stray{{9 * MiB}, {30}};
  consensus.level_consensus.push_back(stray);
  consensus.level_probes += 1;
  for (int i = 0; i < 4; ++i) {
    MachineProfile curve = ProbeFinding(48 * KiB, 1 * MiB, 9 * MiB);
    FoldLevelConsensus(consensus, curve);
    consensus = curve;
  }
  ASSERT_EQ(consensus.level_probes, 8);
  const std::vector<const LevelConsensus*> held = consensus.ConsensusLevels();
  ASSERT_EQ(held.size(), 3u);
  EXPECT_EQ(held[2]->seen_bytes.size(), 7u);  // 6 MiB three times, 9 MiB four
  EXPECT_EQ(consensus.EffectiveCacheBytes(3), uint64_t(9 * MiB));
}
}  // namespace
}  // namespace rooftune
