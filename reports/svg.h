// The two pictures: the latency curve with the levels found on it, and the hierarchical
// roofline (one sloped line per memory level, one flat line per dtype and thread count) with
// measured kernels placed on it. Plain SVG, no dependencies.
#pragma once

#include <string>
#include <vector>

#include "framework/machine_profile.h"

namespace rooftune::reports {

std::string LatencySvg(const MachineProfile& profile);

struct RooflinePoint {
  std::string label;
  double intensity = 0;       // operations per DRAM byte
  double ops_per_second = 0;
  int threads = 0;            // the ceilings it is drawn against; 0: not known
};
// The ceilings of the points' thread counts (the most solid, fewer dashed), the points, and
// their labels placed so that none covers another or a point.
std::string RooflineSvg(const MachineProfile& profile, const std::vector<RooflinePoint>& points);

}  // namespace rooftune::reports
