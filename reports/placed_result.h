// Each tuned result as the hierarchical roofline sees it: its operations and measured rate, and
// for every memory level the bytes its traffic model moves there, the intensity they give and the
// time they take at that level's bandwidth (a cache-aware roofline places one marker per level).
// The pictures, the per-result detail and the summary all read these.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "framework/machine_profile.h"
#include "reports/levers.h"
#include "reports/report.h"

namespace rooftune::reports {

struct LevelMark {
  MemoryLevel level = MemoryLevel::kDram;
  double bytes = 0;
  double bandwidth = 0;  // bytes per second, the ceiling the verdict priced this level at
  double seconds = 0;    // bytes / bandwidth
  double intensity = 0;  // operations per byte of this level
};

struct PlacedResult {
  int number = 0;      // 1-based: how the pictures, tables and findings name the result
  size_t index = 0;    // into ReportInput::results
  std::string label;   // "gemm_f32 256x256x256 1T"
  std::string family;  // "gemm f32": the operation and dtype, one picture each when many
  Dtype dtype = Dtype::kF32;
  int threads = 1;
  double operations = 0;
  double ops_per_second = 0;  // measured
  double measured_seconds = 0;
  double compute_seconds = 0;  // operations at the compute ceiling (0: none priced them)
  double compute_rate = 0;
  double pass_seconds = 0;        // a separate pass after the main loop (an unfused epilogue)
  std::vector<LevelMark> levels;  // levels whose bytes the model counts, nearest first
  std::optional<MemoryLevel> binding_level;  // the level that binds; nullopt: compute (or none)
  bool judged = false;        // false: its kernel was not loaded; one mark at compulsory intensity
  std::vector<Lever> levers;  // LeversOf the result, priced once for the summary, tables, detail
  bool impossible = false;
  std::optional<Verdict::Class> verdict;  // none when not judged
  double attainment = 0;

  // One line for a picture's hover text and the point table.
  std::string Describe() const;
};

// Every result of `in` that names a parseable workload, numbered in report order.
std::vector<PlacedResult> PlaceResults(const ReportInput& in);

}  // namespace rooftune::reports
