// A stored row and the verdict it was judged with, built from a workload, the bytes its traffic
// model moves at each level and a measured time: the input reports and levers read, made by the
// real roofline (Judge) rather than by hand.
#pragma once

#include <array>
#include <string>

#include "framework/roofline.h"
#include "framework/tuning_db.h"
#include "framework/workload.h"

namespace rooftune::fixtures {

struct JudgedRow {
  TunedResult result;
  Verdict verdict;
};

// `w` timed at `seconds` on `threads` threads, moving `bytes` (L1, L2, L3, DRAM) and `after`
// them in a separate pass.
inline JudgedRow Measured(const MachineProfile& p, const std::string& kernel, const Workload& w,
                          std::array<double, kNumMemoryLevels> bytes, double seconds,
                          std::array<double, kNumMemoryLevels> after = {}, int threads = 1) {
  Traffic t;
  t.bytes = bytes;
  t.after = after;
  JudgedRow r;
  r.verdict = Judge(p, SelectCeilings(p, w.dtype, threads), w, threads, t, seconds, 0.01);
  r.result.kernel = kernel;
  r.result.workload = w.Key();
  r.result.dtype = w.dtype;
  r.result.threads = threads;
  r.result.median_seconds = seconds;
  r.result.ops_per_second = w.Operations() / seconds;
  r.result.attainment = r.verdict.attainment;
  r.result.tolerance = r.verdict.tolerance;
  r.result.verdict = r.verdict.verdict;
  r.result.binding = r.verdict.binding;
  r.result.cache = CacheMode::kWarm;
  return r;
}

}  // namespace rooftune::fixtures
