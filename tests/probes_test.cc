#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <vector>

#include "absl/strings/str_cat.h"
#include "framework/executor.h"
#include "framework/problem.h"
#include "hwy/targets.h"
#include "kernels/amx.h"
#include "kernels/gemm_s8/gemm_s8.h"
#include "probes/amx_peak.h"
#include "probes/bandwidth.h"
#include "probes/ceiling_loops.h"
#include "probes/latency.h"
#include "probes/machine_probe.h"
#include "probes/parallel_call.h"
#include "probes/peak_compute.h"
#include "probes/system_facts.h"
#include "tests/temp_dir.h"

namespace rooftune::probes {
namespace {

// The dependent FMA chain read at the measured clock is a cycle count a core can have (every x86
// core with FMA takes 3 to 6; a chain whose FMAs were independent, or a wrong unit, reads far
// outside), and 0 only where the CPU has no FMA the probe knows.
TEST(Latency, TheFmaChainReadsAsACycleCountACoreCanHave) {
  const double clock = MeasureClockGhz();
  ASSERT_GT(clock, 0);
  const double cycles = MeasureFmaLatencyCycles(clock);
#if defined(__x86_64__)
  if (!__builtin_cpu_supports("fma")) {
    EXPECT_EQ(cycles, 0);
    return;
  }
#endif
  EXPECT_GE(cycles, 2) << clock << " GHz";
  EXPECT_LE(cycles, 16) << clock << " GHz";
  EXPECT_EQ(MeasureFmaLatencyCycles(0), 0);
}

// One thread splits nothing; on two, the overhead is some time, and less than twice the share
// (20 us) a thread runs: the calling thread runs both shares itself when no worker comes.
TEST(ParallelCall, OverheadIsZeroOnOneThreadAndBoundedByTheShareOnTwo) {
  Executor one(1);
  EXPECT_EQ(MeasureParallelCallSeconds(one), 0);
  if (AllowedCpus().size() < 2) GTEST_SKIP() << "one CPU";
  Executor two(2);
  const double overhead = MeasureParallelCallSeconds(two);
  EXPECT_GT(overhead, 0);
  EXPECT_LT(overhead, 40e-6);
}

TEST(SystemFacts, ParsesSysfsCacheSizes) {
  EXPECT_EQ(ParseCacheSize("48K"), 48u << 10);
  EXPECT_EQ(ParseCacheSize("307200K"), 300u << 20);
  EXPECT_EQ(ParseCacheSize("32M"), 32u << 20);
  EXPECT_EQ(ParseCacheSize("1280K"), 1280u << 10);  // a 1.25 MiB L2 is not snapped anywhere
  EXPECT_EQ(ParseCacheSize("junk"), 0u);
}

TEST(SystemFacts, WarnsWhenOtherWorkKeepsTheCpusBusy) {
  EXPECT_FALSE(BusyMachineWarning("0.49 1.17 1.25 1/78 13043", 2).has_value());
  EXPECT_FALSE(BusyMachineWarning("1.49 0.20 0.10 1/78 13043", 2).has_value());
  const std::optional<std::string> busy = BusyMachineWarning("2.03 1.80 1.10 3/80 13050", 2);
  ASSERT_TRUE(busy.has_value());
  EXPECT_NE(busy->find("load average is 2.03 on 2 CPUs"), std::string::npos) << *busy;
  EXPECT_TRUE(BusyMachineWarning("24.0 20.0 18.0 30/900 1", 32).has_value());
  // Unreadable text or no CPUs: no claim either way.
  EXPECT_FALSE(BusyMachineWarning("", 2).has_value());
  EXPECT_FALSE(BusyMachineWarning("busy", 2).has_value());
  EXPECT_FALSE(BusyMachineWarning("5.0 5.0 5.0 1/1 1", 0).has_value());
}

void Write(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path) << text << "\n";
}

TEST(SystemFacts, ReadsAFakeSysfsTree) {
  const std::filesystem::path root = fixtures::TestTempDir() / "sysfs";
  std::filesystem::remove_all(root);
  const std::filesystem::path cpu0 = root / "devices/system/cpu/cpu0";
  Write(cpu0 / "cache/index0/level", "1");
  Write(cpu0 / "cache/index0/type", "Data");
  Write(cpu0 / "cache/index0/size", "32K");
  Write(cpu0 / "cache/index0/ways_of_associativity", "8");
  Write(cpu0 / "cache/index0/shared_cpu_list", "0");
  Write(cpu0 / "cache/index1/level", "1");
  Write(cpu0 / "cache/index1/type", "Instruction");
  Write(cpu0 / "cache/index1/size", "32K");
  Write(cpu0 / "cache/index2/level", "2");
  Write(cpu0 / "cache/index2/type", "Unified");
  Write(cpu0 / "cache/index2/size", "1280K");
  Write(cpu0 / "cache/index2/shared_cpu_list", "0-1,4");
  Write(root / "kernel/mm/transparent_hugepage/enabled", "always [madvise] never");
  // Two NUMA nodes, even CPUs on node 0 and odd on node 2 (node numbers may have gaps).
  std::string even, odd;
  for (int cpu = 0; cpu < 256; cpu += 2) {
    absl::StrAppend(&even, cpu == 0 ? "" : ",", cpu);
    absl::StrAppend(&odd, cpu == 0 ? "" : ",", cpu + 1);
  }
  Write(root / "devices/system/node/node0/cpulist", even);
  Write(root / "devices/system/node/node2/cpulist", odd);
  const std::filesystem::path cpuinfo = root / "cpuinfo";
  Write(cpuinfo, "vendor_id\t: FakeVendor\nmodel name\t: Fake CPU 9000\nflags\t\t: fpu avx2 fma\n");

  const MachineProfile p = ReadSystemFacts(root.string(), cpuinfo.string());
  EXPECT_EQ(p.cpu_model, "Fake CPU 9000");
  EXPECT_EQ(p.vendor, "FakeVendor");
  EXPECT_EQ(p.isa, (std::vector<std::string>{"avx2", "fma"}));
  ASSERT_EQ(p.caches.size(), 2u);  // the instruction cache is left out
  EXPECT_EQ(p.caches[0].size_bytes, 32u << 10);
  EXPECT_EQ(p.caches[0].ways, 8);
  EXPECT_EQ(p.caches[1].size_bytes, 1280u << 10);
  EXPECT_EQ(p.caches[1].shared_by_cpus, 3);
  EXPECT_EQ(p.transparent_hugepages, "madvise");
  const std::vector<int> cpus = AllowedCpus();
  ASSERT_EQ(p.cpu_nodes.size(), cpus.size());
  for (size_t i = 0; i < cpus.size(); ++i) EXPECT_EQ(p.cpu_nodes[i], cpus[i] % 2 == 0 ? 0 : 2);
}

TEST(SystemFacts, AMachineWithoutSysfsStillWorks) {
  const MachineProfile p = ReadSystemFacts("/nonexistent", "/nonexistent/cpuinfo");
  EXPECT_TRUE(p.caches.empty());
  EXPECT_TRUE(p.cpu_nodes.empty());
  EXPECT_EQ(p.NumaNodesSpanned(p.logical_cpus), 1);
  EXPECT_EQ(p.cpu_model, "unknown CPU");
  EXPECT_GE(p.logical_cpus, 1);
  EXPECT_GE(p.physical_cores, 1);
  EXPECT_FALSE(p.Fingerprint().empty());
}

TEST(BandwidthProbe, DramWorkingSetIsAtLeastFourTimesTheLastLevel) {
  MachineProfile p;
  p.caches = {{1, "Data", 48 << 10, 12, 64, 1},
              {2, "Unified", 2 << 20, 16, 64, 1},
              {3, "Unified", 300u << 20, 20, 64, 2}};
  EXPECT_GE(BandwidthWorkingSet(p, MemoryLevel::kDram, 1), 4 * (300ull << 20));
  EXPECT_LE(BandwidthWorkingSet(p, MemoryLevel::kL1, 1), 48u << 10);
  EXPECT_LE(BandwidthWorkingSet(p, MemoryLevel::kL2, 2), 2 * (2u << 20));
  p.caches.clear();
  EXPECT_GE(BandwidthWorkingSet(p, MemoryLevel::kDram, 1), 256u << 20);
}

// Each thread's share of the L3 working set lies past its L2 as the OS reports it, even when the
// latency curve found the L2 beginning to miss far earlier (a VM: 406 KiB of a 2 MiB L2).
TEST(BandwidthProbe, L3WorkingSetClearsEveryThreadsReportedL2) {
  MachineProfile p;
  p.caches = {{1, "Data", 48 << 10, 12, 64, 1},
              {2, "Unified", 2 << 20, 16, 64, 1},
              {3, "Unified", 480u << 20, 15, 64, 2}};
  p.measured_levels = {
      {45 << 10, 45 << 10, 45 << 10, 1.4, LevelKind::kCache},
      {406 << 10, 296 << 10, 497 << 10, 4.8, LevelKind::kCache},
      {10.1 * (1 << 20), 9.5 * (1 << 20), 10.7 * (1 << 20), 50, LevelKind::kCache}};
  for (int threads : {1, 2}) {
    const uint64_t set = BandwidthWorkingSet(p, MemoryLevel::kL3, threads);
    EXPECT_GT(set / threads, 2u << 20) << threads;
    EXPECT_LT(set, uint64_t(10.1 * (1 << 20))) << threads;
  }
}

TEST(BandwidthProbe, KernelsComputeWhatTheySay) {
  const size_t n = 1000;  // not a multiple of any vector length
  Buffer<float> a(n), b(n), c(n);
  for (size_t i = 0; i < n; ++i) b[i] = float(i), c[i] = 1.0f;
  StreamPass(StreamKind::kTriad, a.data(), b.data(), c.data(), n);
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(a[i], float(i) + 3.0f) << i;
  StreamPass(StreamKind::kCopy, a.data(), b.data(), nullptr, n);
  EXPECT_EQ(a[999], 999.0f);
  EXPECT_EQ(StreamPass(StreamKind::kRead, c.data(), nullptr, nullptr, n), 1000.0f);
  // The read pass splits the array into eight streams and a tail: every element once, whatever n.
  for (size_t size : {1, 37, 129, 1003, 4099}) {
    Buffer<float> powers(size);
    for (size_t i = 0; i < size; ++i) powers[i] = float(i % 7 + 1);
    float want = 0;
    for (size_t i = 0; i < size; ++i) want += powers[i];
    EXPECT_EQ(StreamPass(StreamKind::kRead, powers.data(), nullptr, nullptr, size), want) << size;
    // Any slice of a buffer, aligned or not.
    EXPECT_EQ(StreamPass(StreamKind::kRead, powers.data() + 1, nullptr, nullptr, size - 1),
              want - powers[0])
        << size;
    // Several passes in one call read every element once per pass.
    EXPECT_EQ(StreamPass(StreamKind::kRead, powers.data(), nullptr, nullptr, size, false, 3),
              3 * want)
        << size;
  }
  // Every reader the read ceiling tries reads every element once per pass, whatever n.
  for (size_t size : {1, 37, 129, 1003, 4099, 65537}) {
    Buffer<float> powers(size);
    for (size_t i = 0; i < size; ++i) powers[i] = float(i % 7 + 1);
    float want = 0;
    for (size_t i = 0; i < size; ++i) want += powers[i];
    for (const Reader& reader : kReaders) {
      EXPECT_EQ(ReadPass(powers.data(), size, reader), want) << size << " " << reader.Name();
      EXPECT_EQ(ReadPass(powers.data() + 1, size - 1, reader, 2), 2 * (want - powers[0]))
          << size << " " << reader.Name();
    }
  }
  for (size_t i = 0; i < n; ++i) a[i] = 0.0f;
  StreamPass(StreamKind::kTriad, a.data(), b.data(), c.data(), n, false, 2);
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(a[i], float(i) + 3.0f) << i;
  StreamPass(StreamKind::kWrite, a.data(), nullptr, nullptr, n);
  EXPECT_EQ(a[500], 1.0f);
  EXPECT_DOUBLE_EQ(StreamBytes(StreamKind::kTriad, n), 12000.0);
}

TEST(PeakProbe, CountsTheOperationsOfItsPath) {
  for (Dtype d : {Dtype::kF32, Dtype::kF64, Dtype::kS8F32}) {
    const PeakProbeInfo info = PeakPathFor(d);
    ASSERT_TRUE(info.supported);
    EXPECT_DOUBLE_EQ(RunPeakLoop(d, 10), 10.0 * info.ops_per_instruction_group) << info.path;
  }
  const PeakProbeInfo int8 = PeakPathFor(Dtype::kU8S8);
  EXPECT_DOUBLE_EQ(RunPeakLoop(Dtype::kU8S8, 10),
                   int8.supported ? 10.0 * int8.ops_per_instruction_group : 0.0);
  // AMX: six tiles of 16 x 16 outputs, 64 products each, per iteration; nothing without AMX.
  const PeakProbeInfo amx = AmxInt8PeakPath();
  EXPECT_EQ(amx.supported, kernels::AmxInt8Available());
  EXPECT_DOUBLE_EQ(RunAmxInt8PeakLoop(10), amx.supported ? 10.0 * 6 * 16 * 16 * 64 * 2 : 0.0);
  if (amx.supported) EXPECT_EQ(amx.ops_per_instruction_group, 6 * 16 * 16 * 64 * 2);
}

// The int8 ceiling is timed with the instruction the int8 GEMM's fast path uses on each target:
// vpdpbusd where the kernel has it (AVX-512 VNNI, or AVX-VNNI on the AVX2 target), the
// three-instruction vpmaddubsw sequence elsewhere. A kernel priced at another instruction's
// ceiling reads as faster than its roofline, or as far below it.
TEST(PeakProbe, TheInt8CeilingUsesTheInstructionOfTheKernelsFastPath) {
  for (int64_t target : hwy::SupportedAndGeneratedTargets()) {
    hwy::SetSupportedTargetsForTest(target);
    const PeakProbeInfo int8 = PeakPathFor(Dtype::kU8S8);
    if (int8.supported) {
      EXPECT_EQ(int8.path.find("vpdpbusd") != std::string::npos, kernels::GemmS8FastPathIsVnni())
          << hwy::TargetName(target) << ": " << int8.path;
      EXPECT_DOUBLE_EQ(RunPeakLoop(Dtype::kU8S8, 10), 10.0 * int8.ops_per_instruction_group)
          << int8.path;
    }
  }
  hwy::SetSupportedTargetsForTest(0);
}

// s8 weights dequantised against f32 activations are priced at a loop of their own instructions
// (widen, convert, multiply-add) on every target, which the pairs find by its path, and which
// bench/ceiling_check does not take for the FMA loop (no "fma" in its name). It does as many
// operations as the FMA loop's chains would in fewer chains: each needs a temporary.
TEST(PeakProbe, S8WeightsConvertedHaveALoopOfTheirOwn) {
  for (int64_t target : hwy::SupportedAndGeneratedTargets()) {
    hwy::SetSupportedTargetsForTest(target);
    const PeakProbeInfo convert = PeakPathFor(Dtype::kS8F32);
    const PeakProbeInfo fma = PeakPathFor(Dtype::kF32);
    ASSERT_TRUE(convert.supported) << hwy::TargetName(target);
    EXPECT_NE(convert.path, fma.path);
    EXPECT_EQ(convert.path.find("fma"), std::string::npos) << convert.path;
    EXPECT_EQ(convert.ops_per_instruction_group * 2, fma.ops_per_instruction_group) << convert.path;
    EXPECT_DOUBLE_EQ(RunPeakLoop(Dtype::kS8F32, 7), 7.0 * convert.ops_per_instruction_group);
  }
  hwy::SetSupportedTargetsForTest(0);
  const std::vector<PeakLoop> loops = PeakLoops();
  Ceiling measured{Ceiling::Kind::kCompute, Dtype::kS8F32, MemoryLevel::kDram, 1, 80e9, ""};
  measured.source = PeakPathFor(Dtype::kS8F32).path;
  const PeakLoop* loop = PeakLoopOf(loops, measured);
  ASSERT_NE(loop, nullptr);
  EXPECT_EQ(loop->dtype, Dtype::kS8F32);
}

TEST(MachineProbe, CeilingsTakeTheBestEvidenceAcrossThreadCounts) {
  MachineProfile p;
  using K = Ceiling::Kind;
  p.ceilings = {
      {K::kCompute, Dtype::kU8S8, MemoryLevel::kDram, 1, 300e9, "vpdpbusd"},  // unlucky
      {K::kCompute, Dtype::kU8S8, MemoryLevel::kDram, 2, 1200e9, "vpdpbusd"},
      {K::kCompute, Dtype::kU8S8, MemoryLevel::kDram, 1, 5000e9, "AMX tdpbusd"},
      {K::kCompute, Dtype::kU8S8, MemoryLevel::kDram, 2, 4000e9, "AMX tdpbusd"},  // unlucky
      {K::kBandwidth, Dtype::kF32, MemoryLevel::kDram, 1, 18e9, "read"},
      {K::kBandwidth, Dtype::kF32, MemoryLevel::kDram, 2, 27e9, "read"},
      {K::kBandwidth, Dtype::kF32, MemoryLevel::kL2, 1, 100e9, "read", "fastest reader streams:8"},
      {K::kBandwidth, Dtype::kF32, MemoryLevel::kL2, 2, 300e9, "read", "fastest reader streams:4"}};
  RaiseCeilingsToTheirEvidence(p);
  EXPECT_DOUBLE_EQ(p.ceilings[0].per_second, 600e9);  // half of the 2-thread rate
  EXPECT_NE(p.ceilings[0].note.find("raised from 300.0 GOP/s"), std::string::npos)
      << p.ceilings[0].note;
  EXPECT_EQ(p.ceilings[0].source, "vpdpbusd");         // the path stays a key
  EXPECT_DOUBLE_EQ(p.ceilings[1].per_second, 1200e9);  // already the best evidence
  EXPECT_TRUE(p.ceilings[1].note.empty());
  EXPECT_DOUBLE_EQ(p.ceilings[2].per_second, 5000e9);
  EXPECT_DOUBLE_EQ(p.ceilings[3].per_second, 5000e9);  // two threads can do what one did
  // DRAM is shared: 2 threads' 27 GB/s says nothing more about one thread than its 18.
  EXPECT_DOUBLE_EQ(p.ceilings[4].per_second, 18e9);
  EXPECT_DOUBLE_EQ(p.ceilings[5].per_second, 27e9);
  // A private level's 2-thread rate raises the 1-thread one; how it was measured stays said.
  EXPECT_DOUBLE_EQ(p.ceilings[6].per_second, 150e9);
  EXPECT_EQ(p.ceilings[6].note,
            "raised from 100.0 GB/s (fastest reader streams:8): the 2-thread run did more");
  EXPECT_TRUE(p.ceilings[6].Raised());
  EXPECT_FALSE(p.ceilings[7].Raised());
  EXPECT_EQ(p.ceilings[7].note, "fastest reader streams:4");
}

// The thread counts probed: a 64-CPU server in 7 steps.
TEST(ThreadLadder, DoublesUpToTheCpusAndEndsOnThem) {
  EXPECT_EQ(ThreadLadder(1), std::vector<int>({1}));
  EXPECT_EQ(ThreadLadder(2), std::vector<int>({1, 2}));
  EXPECT_EQ(ThreadLadder(6), std::vector<int>({1, 2, 4, 6}));
  EXPECT_EQ(ThreadLadder(64), std::vector<int>({1, 2, 4, 8, 16, 32, 64}));
  EXPECT_EQ(ThreadLadder(96).size(), 8u);
}

Ceiling Compute(Dtype dtype, int threads, double per_second, const std::string& source) {
  return {Ceiling::Kind::kCompute, dtype, MemoryLevel::kDram, threads, per_second, source};
}

TEST(MachineProfile, FindComputeTakesTheHighestPathOfADtype) {
  MachineProfile p;
  p.ceilings = {Compute(Dtype::kU8S8, 1, 300e9, "vpdpbusd"),
                Compute(Dtype::kU8S8, 1, 2000e9, "AMX tdpbusd"),
                Compute(Dtype::kU8S8, 2, 600e9, "vpdpbusd")};
  ASSERT_NE(p.FindCompute(Dtype::kU8S8, 1), nullptr);
  EXPECT_EQ(p.FindCompute(Dtype::kU8S8, 1)->source, "AMX tdpbusd");
  EXPECT_EQ(p.FindCompute(Dtype::kU8S8, 2)->source, "vpdpbusd");
  EXPECT_EQ(p.FindCompute(Dtype::kF32, 1), nullptr);
}

// s8 weights dequantised in registers are priced at their own loop's ceiling where the profile
// has one, else (a profile probed before it existed) at the f32 FMA's; f32 never at theirs.
TEST(MachineProfile, FindComputePricesS8WeightsAtTheirOwnLoopElseTheFma) {
  MachineProfile p;
  p.ceilings = {Compute(Dtype::kF32, 1, 240e9, "fma"), Compute(Dtype::kS8F32, 1, 80e9, "s8 widen"),
                Compute(Dtype::kF32, 2, 480e9, "fma")};
  ASSERT_NE(p.FindCompute(Dtype::kS8F32, 1), nullptr);
  EXPECT_EQ(p.FindCompute(Dtype::kS8F32, 1)->source, "s8 widen");
  EXPECT_EQ(p.FindCompute(Dtype::kF32, 1)->source, "fma");
  ASSERT_NE(p.FindCompute(Dtype::kS8F32, 2), nullptr);
  EXPECT_EQ(p.FindCompute(Dtype::kS8F32, 2)->source, "fma");  // none of its own at 2 threads
  EXPECT_EQ(p.FindCompute(Dtype::kS8F32, 4), nullptr);
}

}  // namespace
}  // namespace rooftune::probes
