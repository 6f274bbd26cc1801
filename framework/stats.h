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

// The q-quantile (0 <= q <= 1) of sorted, non-empty samples: the nearest rank, no interpolation.
double Quantile(const std::vector<double>& sorted, double q);

}  // namespace rooftune
