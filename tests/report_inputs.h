// Report inputs judged by the real roofline on a round two-thread machine: a few rows for the
// summary's cases, or a crowd of them for the pictures' layout.
#pragma once

#include <vector>

#include "absl/strings/str_cat.h"
#include "reports/report.h"
#include "tests/judged_row.h"
#include "tests/round_machine.h"

namespace rooftune::fixtures {

// The round machine on two threads: int8 and L3 ceilings added, every ceiling measured at 1 and 2.
inline MachineProfile TwoThreadMachine() {
  MachineProfile p = fixtures::RoundMachine();
  p.cpu_model = "Round CPU";
  p.vendor = "Test";
  p.logical_cpus = 2, p.physical_cores = 2;
  p.ceilings.push_back(
      {Ceiling::Kind::kCompute, Dtype::kU8S8, MemoryLevel::kDram, 1, 400e9, "vnni"});
  p.ceilings.push_back({Ceiling::Kind::kBandwidth, Dtype::kF32, MemoryLevel::kL3, 1, 20e9, "read"});
  std::vector<Ceiling> two;
  for (Ceiling c : p.ceilings) {
    c.threads = 2;
    // DRAM does not double on two threads: one core reaches 10 of 16 GB/s.
    c.per_second *= c.kind == Ceiling::Kind::kBandwidth && c.level == MemoryLevel::kDram ? 1.6 : 2;
    two.push_back(c);
  }
  p.ceilings.insert(p.ceilings.end(), two.begin(), two.end());
  return p;
}

inline void Add(reports::ReportInput& in, const fixtures::JudgedRow& row) {
  in.results.push_back(row.result);
  in.verdicts.push_back(row.verdict);
}

// `count` results over four kernel families, at attainments from 0.2 to 0.95 and every seventh
// one impossible: a crowded picture's worth.
inline reports::ReportInput ManyResults(int count) {
  reports::ReportInput in;
  in.profile = TwoThreadMachine();
  in.generated_at = "2026-12-03T00:00:00Z";
  const Op ops[] = {Op::kGemm, Op::kGemv};
  const Dtype dtypes[] = {Dtype::kF32, Dtype::kU8S8};
  for (int i = 0; i < count; ++i) {
    const Op op = ops[i % 2];
    const Dtype dtype = dtypes[(i / 2) % 2];
    const int64_t size = int64_t{64} << (i / 4 % 6);
    const Workload w{op, op == Op::kGemv ? 1 : size, size * 2, size, dtype, Epilogue::kNone};
    const double ops_count = w.Operations();
    const std::array<double, kNumMemoryLevels> bytes = {ops_count / 2, ops_count / 12,
                                                        ops_count / 40, w.CompulsoryBytes()};
    const int threads = 1 + i % 3 % 2;
    // The bound first, then the time that gives the attainment wanted.
    const Verdict probe = Measured(in.profile, "k", w, bytes, 1, {}, threads).verdict;
    const double attainment = i % 7 == 6 ? 1.6 : 0.2 + 0.75 * double(i % 5) / 4;
    Add(in, Measured(in.profile, absl::StrCat(ToString(op), "_", ToString(dtype)), w, bytes,
                     probe.bound_seconds / attainment, {}, threads));
  }
  return in;
}

}  // namespace rooftune::fixtures
