#include "framework/stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace rooftune {

SampleStats Summarize(std::vector<double> samples) {
  SampleStats s;
  s.count = int(samples.size());
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  const size_t n = samples.size();
  s.min = samples.front();
  s.max = samples.back();
  s.median = n % 2 == 1 ? samples[n / 2] : 0.5 * (samples[n / 2 - 1] + samples[n / 2]);
  s.mean = std::accumulate(samples.begin(), samples.end(), 0.0) / double(n);
  if (n > 1 && s.mean != 0) {
    double sq = 0;
    for (double x : samples) sq += (x - s.mean) * (x - s.mean);
    s.cv = std::sqrt(sq / double(n - 1)) / s.mean;
  }
  return s;
}

Quartiles QuartilesOf(std::vector<double> values) {
  if (values.empty()) return {};
  std::sort(values.begin(), values.end());
  auto at = [&](double q) { return values[size_t(q * double(values.size() - 1) + 0.5)]; };
  return {at(0.25), at(0.5), at(0.75)};
}

}  // namespace rooftune
