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

// A log-log line plot: each series a polyline with its name in the legend, and vertical markers
// (a cache level's size, say) dashed and labelled. x values in bytes are labelled as sizes.
struct PlotSeries {
  std::string name;
  std::vector<CurvePoint> points;  // `bytes` is x, `value` is y
  bool dashed = false;
};
struct PlotMarker {
  double x = 0;
  std::string label;
};
std::string LogLogPlotSvg(const std::string& title, const std::string& x_label, bool x_is_bytes,
                          const std::string& y_label, const std::vector<PlotSeries>& series,
                          const std::vector<PlotMarker>& markers = {});
// Pictures stacked into one SVG document, each at its own height.
std::string StackSvg(const std::vector<std::string>& pictures);

}  // namespace rooftune::reports
