// Summary statistics of repeated timings.
#pragma once

#include <vector>

namespace rooftune {

struct SampleStats {
  int count = 0;
  double median = 0, min = 0, max = 0, mean = 0;
  double cv = 0;  // coefficient of variation: standard deviation / mean
};

// Median rather than mean as the figure: one preempted repetition on a shared machine moves the
// mean a lot and the median hardly at all. The minimum is reported too (the least-disturbed run),
// and the CV says whether either can be trusted.
SampleStats Summarize(std::vector<double> samples);

// The median and quartiles of `values` (nearest rank, no interpolation): how paired ratios are
// reported. Zeros when there are none.
struct Quartiles {
  double low = 0, median = 0, high = 0;
};
Quartiles QuartilesOf(std::vector<double> values);

}  // namespace rooftune
