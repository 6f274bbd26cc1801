// The pictures: the latency curve with the levels found on it, and the hierarchical roofline
// (one sloped line per memory level, one flat line per dtype and thread count) with measured
// kernels placed on it. Plain SVG, no dependencies; every text label placed where it overlaps
// no other.
#pragma once

#include <string>
#include <vector>

#include "framework/machine_profile.h"
#include "reports/placed_result.h"

namespace rooftune::reports {

std::string LatencySvg(const MachineProfile& profile);

// The ceilings of the results' thread counts (the most threads solid, fewer dashed), each roof
// labelled once at the right edge, and every result as a cache-aware roofline draws it: one
// marker per memory level at the intensity of that level's bytes, joined, at the measured rate;
// the binding level's filled, an impossible result's crossed; its number beside it (never over
// another label or a marker) and its Describe() on hover. `title` empty: the default title.
std::string RooflineSvg(const MachineProfile& profile, const std::vector<PlacedResult>& results,
                        const std::string& title = "");

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
