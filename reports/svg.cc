#include "reports/svg.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include <functional>

#include "absl/strings/str_format.h"
#include "framework/roofline.h"

namespace rooftune::reports {
namespace {

constexpr double kWidth = 820, kHeight = 520, kLeft = 70, kRight = 170, kTop = 30, kBottom = 60;
const char* kColours[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"};

// A log-log frame mapping data to pixels.
struct Frame {
  double x0, x1, y0, y1;  // data ranges (log10 applied inside)
  double X(double x) const {
    return kLeft + (std::log10(x) - std::log10(x0)) / (std::log10(x1) - std::log10(x0)) *
                       (kWidth - kLeft - kRight);
  }
  double Y(double y) const {
    return kHeight - kBottom - (std::log10(y) - std::log10(y0)) / (std::log10(y1) - std::log10(y0)) *
                                   (kHeight - kTop - kBottom);
  }
};

std::string Header(const std::string& title) {
  return absl::StrFormat(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
      "font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%%\" height=\"100%%\" "
      "fill=\"white\"/>\n<text x=\"%.0f\" y=\"18\" font-size=\"15\">%s</text>\n",
      kWidth, kHeight, kLeft, title);
}

// Axes with a tick at every power of `base` inside the range.
std::string Axes(const Frame& f, double x_base, const std::string& x_label,
                 const std::function<std::string(double)>& x_text, const std::string& y_label) {
  std::string s = absl::StrFormat(
      "<rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\" fill=\"none\" stroke=\"#444\"/>\n",
      kLeft, kTop, kWidth - kLeft - kRight, kHeight - kTop - kBottom);
  for (double x = std::pow(x_base, std::ceil(std::log(f.x0) / std::log(x_base))); x <= f.x1 * 1.0001;
       x *= x_base) {
    absl::StrAppend(&s, absl::StrFormat(
        "<line x1=\"%.1f\" y1=\"%.0f\" x2=\"%.1f\" y2=\"%.0f\" stroke=\"#ddd\"/>"
        "<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\">%s</text>\n",
        f.X(x), kTop, f.X(x), kHeight - kBottom, f.X(x), kHeight - kBottom + 16, x_text(x)));
  }
  for (double y = std::pow(10, std::ceil(std::log10(f.y0))); y <= f.y1 * 1.0001; y *= 10) {
    absl::StrAppend(&s, absl::StrFormat(
        "<line x1=\"%.0f\" y1=\"%.1f\" x2=\"%.0f\" y2=\"%.1f\" stroke=\"#ddd\"/>"
        "<text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n",
        kLeft, f.Y(y), kWidth - kRight, f.Y(y), kLeft - 6, f.Y(y) + 4, y));
  }
  absl::StrAppend(&s, absl::StrFormat(
      "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">%s</text>\n"
      "<text x=\"16\" y=\"%.0f\" transform=\"rotate(-90 16 %.0f)\" text-anchor=\"middle\">%s</text>\n",
      (kLeft + kWidth - kRight) / 2, kHeight - 18, x_label, (kTop + kHeight - kBottom) / 2,
      (kTop + kHeight - kBottom) / 2, y_label));
  return s;
}

std::string BytesLabel(double b) {
  if (b >= double(uint64_t{1} << 30)) return absl::StrFormat("%.3gG", b / double(uint64_t{1} << 30));
  if (b >= (1 << 20)) return absl::StrFormat("%.3gM", b / (1 << 20));
  return absl::StrFormat("%.3gK", b / 1024);
}

std::string Polyline(const Frame& f, const std::vector<CurvePoint>& points, const char* colour,
                     const char* dash) {
  std::string pts;
  for (const CurvePoint& p : points) {
    if (p.value > 0) absl::StrAppend(&pts, absl::StrFormat("%.1f,%.1f ", f.X(p.bytes), f.Y(p.value)));
  }
  return absl::StrFormat("<polyline points=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"1.8\" "
                         "stroke-dasharray=\"%s\"/>\n",
                         pts, colour, dash);
}

}  // namespace

std::string LatencySvg(const MachineProfile& p) {
  std::string s = Header("Latency by working set (random pointer chase): levels found on the curve");
  if (p.latency_curve.empty()) return s + "<text x=\"70\" y=\"60\">no latency curve measured</text></svg>\n";
  double y_max = 1, y_min = 1e9;
  for (const auto* curve : {&p.latency_curve, &p.latency_curve_huge}) {
    for (const CurvePoint& c : *curve) y_max = std::max(y_max, c.value), y_min = std::min(y_min, c.value);
  }
  const Frame f{p.latency_curve.front().bytes, p.latency_curve.back().bytes,
                std::pow(10, std::floor(std::log10(y_min))), std::pow(10, std::ceil(std::log10(y_max)))};
  absl::StrAppend(&s, Axes(f, 4, "working set (bytes, log scale)", BytesLabel, "ns per load (log scale)"));
  for (const CacheLevel& c : p.caches) {
    const double x = f.X(double(c.size_bytes));
    if (x < kLeft || x > kWidth - kRight) continue;
    absl::StrAppend(&s, absl::StrFormat(
        "<line x1=\"%.1f\" y1=\"%.0f\" x2=\"%.1f\" y2=\"%.0f\" stroke=\"#999\" stroke-dasharray=\"2,4\"/>"
        "<text x=\"%.1f\" y=\"%.0f\" fill=\"#777\" font-size=\"10\">sysfs L%d</text>\n",
        x, kTop, x, kHeight - kBottom, x + 2, kTop + 12 + 12 * c.level, c.level));
  }
  int index = 0;
  for (const MeasuredLevel& m : p.measured_levels) {
    const bool tlb = m.kind == "tlb";
    const double label_y = kHeight - kBottom - 8 - 14 * (index++ % 3);
    absl::StrAppend(&s, absl::StrFormat(
        "<rect x=\"%.1f\" y=\"%.0f\" width=\"%.1f\" height=\"%.0f\" fill=\"%s\" opacity=\"0.15\"/>"
        "<line x1=\"%.1f\" y1=\"%.0f\" x2=\"%.1f\" y2=\"%.0f\" stroke=\"%s\" stroke-width=\"1.5\"/>"
        "<text x=\"%.1f\" y=\"%.0f\" fill=\"%s\" font-size=\"10\">%s %s</text>\n",
        f.X(m.low_bytes), kTop, std::max(1.0, f.X(m.high_bytes) - f.X(m.low_bytes)),
        kHeight - kTop - kBottom, tlb ? "#ff7f0e" : "#2ca02c", f.X(m.size_bytes), kTop,
        f.X(m.size_bytes), kHeight - kBottom, tlb ? "#ff7f0e" : "#2ca02c", f.X(m.size_bytes) + 2,
        label_y, tlb ? "#ff7f0e" : "#2ca02c", tlb ? "TLB" : "cache",
        BytesLabel(m.size_bytes)));
  }
  absl::StrAppend(&s, Polyline(f, p.latency_curve, kColours[0], "none"));
  absl::StrAppend(&s, Polyline(f, p.latency_curve_huge, kColours[1], "6,3"));
  const double lx = kWidth - kRight + 10;
  absl::StrAppend(&s, absl::StrFormat(
      "<text x=\"%.0f\" y=\"60\" fill=\"%s\">4 KiB pages</text>"
      "<text x=\"%.0f\" y=\"78\" fill=\"%s\">huge pages</text>"
      "<text x=\"%.0f\" y=\"96\" fill=\"#2ca02c\">cache step (95%%)</text>"
      "<text x=\"%.0f\" y=\"114\" fill=\"#ff7f0e\">TLB reach</text>"
      "<text x=\"%.0f\" y=\"132\" fill=\"#777\">sysfs size</text>\n</svg>\n",
      lx, kColours[0], lx, kColours[1], lx, lx, lx));
  return s;
}

namespace {

// A label's box in pixels: x, y its top left corner.
struct Box {
  double x, y, width, height;
  bool Overlaps(const Box& o) const {
    return x < o.x + o.width && o.x < x + width && y < o.y + o.height && o.y < y + height;
  }
};

// About the advance of one character of the sans-serif font: wide enough that boxes sized by it
// hold their text.
double TextWidth(const std::string& text, double font_size) {
  return 0.62 * font_size * double(text.size());
}

// Places labels one at a time where they overlap nothing placed before: beside their anchor if
// that is free, else the nearest free row above or below it, right of the anchor then left of it.
// Dense clusters (the same shape at several thread counts, a baseline beside our kernel) stay
// readable instead of printing over each other.
class LabelPlacer {
 public:
  explicit LabelPlacer(Box area) : area_(area) {}
  void Occupy(const Box& box) { taken_.push_back(box); }
  // The box for text of `width` x `height` whose preferred top-left corner is (x, y); a left-hand
  // place ends `gap` pixels before `anchor_x`.
  Box Place(double x, double y, double width, double height, double anchor_x, double gap) {
    for (int step = 0; step <= 24; ++step) {
      const double dy = (step % 2 == 1 ? -1 : 1) * height * double((step + 1) / 2);
      for (const double left : {x, anchor_x - gap - width}) {
        const Box box{left, y + dy, width, height};
        if (Free(box)) {
          taken_.push_back(box);
          return box;
        }
      }
    }
    const Box box{x, y, width, height};  // nowhere free: overlap rather than drop the label
    taken_.push_back(box);
    return box;
  }

 private:
  bool Free(const Box& box) const {
    if (box.x < area_.x || box.y < area_.y || box.x + box.width > area_.x + area_.width ||
        box.y + box.height > area_.y + area_.height) {
      return false;
    }
    for (const Box& t : taken_) {
      if (t.Overlaps(box)) return false;
    }
    return true;
  }
  Box area_;
  std::vector<Box> taken_;
};

// The thread counts to draw: those of the points, else the largest the profile measured.
std::vector<int> DrawnThreadCounts(const MachineProfile& p, const std::vector<RooflinePoint>& points) {
  std::vector<int> counts;
  for (const RooflinePoint& point : points) {
    if (point.threads > 0 && std::find(counts.begin(), counts.end(), point.threads) == counts.end()) {
      counts.push_back(point.threads);
    }
  }
  if (counts.empty()) {
    int most = 1;
    for (const Ceiling& c : p.ceilings) most = std::max(most, c.threads);
    counts.push_back(most);
  }
  std::sort(counts.begin(), counts.end());
  return counts;
}

// Every compute ceiling measured at `threads` (int8 may have a vector and an AMX one); at a
// count the probe skipped, each dtype's ceiling as SelectCeilings prices it from its neighbours.
std::vector<Ceiling> ComputeCeilings(const MachineProfile& p, int threads) {
  std::vector<Ceiling> measured;
  std::vector<Dtype> dtypes;
  for (const Ceiling& c : p.ceilings) {
    if (c.kind != Ceiling::Kind::kCompute) continue;
    if (c.threads == threads) measured.push_back(c);
    if (std::find(dtypes.begin(), dtypes.end(), c.dtype) == dtypes.end()) dtypes.push_back(c.dtype);
  }
  if (!measured.empty()) return measured;
  std::vector<Ceiling> priced;
  for (const Dtype dtype : dtypes) {
    for (const Ceiling& c : SelectCeilings(p, dtype, threads).ceilings) {
      if (c.kind == Ceiling::Kind::kCompute) priced.push_back(c);
    }
  }
  return priced;
}

}  // namespace

std::string RooflineSvg(const MachineProfile& p, const std::vector<RooflinePoint>& points) {
  std::string s = Header("Hierarchical roofline: measured ceilings per level, dtype and thread count");
  double top = 1;
  for (const Ceiling& c : p.ceilings) top = std::max(top, c.per_second / 1e9);
  const Frame f{1.0 / 16, 1024, 1, std::pow(10, std::ceil(std::log10(top * 1.5)))};
  absl::StrAppend(&s, Axes(f, 4, "arithmetic intensity (operations per byte, log scale)",
                           [](double x) { return absl::StrFormat("%g", x); },
                           "GFLOP/s or GOP/s (log scale)"));
  // The ceilings of the thread counts the kernels ran at, as they were judged (a count the probe
  // skipped is priced from its neighbours); the most threads solid, fewer dashed.
  const std::vector<int> counts = DrawnThreadCounts(p, points);
  auto dash = [&](int threads) { return threads == counts.back() ? "none" : "5,4"; };
  LabelPlacer placer({kLeft, kTop, kWidth - kLeft - kRight, kHeight - kTop - kBottom});
  double legend_y = 50;
  std::vector<std::string> compute_labels;
  for (const int threads : counts) {
    int colour = 0;
    for (const Ceiling& c : SelectCeilings(p, Dtype::kF32, threads).ceilings) {
      if (c.kind != Ceiling::Kind::kBandwidth || c.per_second <= 0) continue;
      const double bw = c.per_second / 1e9;
      // y = bandwidth x intensity, up to the highest compute ceiling (where every roof turns flat).
      const double x_end = std::min(f.x1, top / bw);
      const char* colour_text = kColours[colour++ % 6];
      absl::StrAppend(&s, absl::StrFormat(
          "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"1.5\" "
          "stroke-dasharray=\"%s\"/>"
          "<text x=\"%.0f\" y=\"%.0f\" fill=\"%s\">%s %.0f GB/s (%dT)</text>\n",
          f.X(std::max(f.x0, f.y0 / bw)), f.Y(std::max(f.y0, bw * f.x0)), f.X(x_end), f.Y(bw * x_end),
          colour_text, dash(threads), kWidth - kRight + 10, legend_y, colour_text,
          ToString(c.level), bw, threads));
      legend_y += 18;
    }
    legend_y += 6;
    for (const Ceiling& c : ComputeCeilings(p, threads)) {
      const double y = c.per_second / 1e9;
      const std::string label =
          absl::StrFormat("%s%s %dT %.0f", ToString(c.dtype),
                          c.source.rfind("AMX", 0) == 0 ? " AMX" : "", c.threads, y);
      constexpr double kFont = 10;
      const double width = TextWidth(label, kFont);
      const double right = kWidth - kRight - 4;
      const Box box = placer.Place(right - width, f.Y(y) - kFont - 2, width, kFont, right, 0);
      absl::StrAppend(&s, absl::StrFormat(
          "<line x1=\"%.0f\" y1=\"%.1f\" x2=\"%.0f\" y2=\"%.1f\" stroke=\"#333\" stroke-dasharray=\"%s\"/>"
          "<text x=\"%.1f\" y=\"%.1f\" font-size=\"%.0f\">%s</text>\n",
          kLeft, f.Y(y), kWidth - kRight, f.Y(y), dash(threads), box.x, box.y + kFont - 1, kFont,
          label));
    }
  }
  if (counts.size() > 1) {
    absl::StrAppend(&s, absl::StrFormat(
        "<text x=\"%.0f\" y=\"%.0f\" fill=\"#444\">solid: %dT; dashed: fewer</text>\n",
        kWidth - kRight + 10, legend_y, counts.back()));
  }
  // Points first, then their labels, top to bottom, so that no label covers a point.
  struct Placed {
    const RooflinePoint* point;
    double x, y;
  };
  std::vector<Placed> placed;
  for (const RooflinePoint& point : points) {
    if (point.intensity <= 0 || point.ops_per_second <= 0) continue;
    const double x = f.X(std::clamp(point.intensity, f.x0, f.x1));
    const double y = f.Y(std::clamp(point.ops_per_second / 1e9, f.y0, f.y1));
    placed.push_back({&point, x, y});
    placer.Occupy({x - 4, y - 4, 8, 8});
    absl::StrAppend(&s, absl::StrFormat("<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"#e377c2\"/>\n",
                                        x, y));
  }
  std::stable_sort(placed.begin(), placed.end(),
                   [](const Placed& a, const Placed& b) { return a.y < b.y; });
  for (const Placed& at : placed) {
    constexpr double kFont = 9;
    const double width = TextWidth(at.point->label, kFont);
    const Box box = placer.Place(at.x + 6, at.y - kFont - 2, width, kFont, at.x, 6);
    const bool beside = box.y == at.y - kFont - 2 && (box.x == at.x + 6 || box.x + width == at.x - 6);
    if (!beside) {
      // Moved off its point: a leader line says whose it is.
      const double lx = box.x > at.x ? box.x : box.x + width;
      absl::StrAppend(&s, absl::StrFormat(
          "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#e377c2\" stroke-width=\"0.6\"/>",
          at.x, at.y, lx, box.y + kFont / 2));
    }
    absl::StrAppend(&s, absl::StrFormat("<text x=\"%.1f\" y=\"%.1f\" font-size=\"%.0f\">%s</text>\n",
                                        box.x, box.y + kFont - 1, kFont, at.point->label));
  }
  return s + "</svg>\n";
}

std::string LogLogPlotSvg(const std::string& title, const std::string& x_label, bool x_is_bytes,
                          const std::string& y_label, const std::vector<PlotSeries>& series,
                          const std::vector<PlotMarker>& markers) {
  std::string s = Header(title);
  double x0 = 1e300, x1 = 0, y0 = 1e300, y1 = 0;
  for (const PlotSeries& line : series) {
    for (const CurvePoint& p : line.points) {
      if (p.bytes <= 0 || p.value <= 0) continue;
      x0 = std::min(x0, p.bytes), x1 = std::max(x1, p.bytes);
      y0 = std::min(y0, p.value), y1 = std::max(y1, p.value);
    }
  }
  if (x1 <= 0) return s + "<text x=\"70\" y=\"60\">nothing to plot</text></svg>\n";
  if (x1 <= x0) x1 = x0 * 2;
  const Frame f{x0, x1, std::pow(10, std::floor(std::log10(y0))),
                std::pow(10, std::ceil(std::log10(y1 * 1.0001)))};
  absl::StrAppend(&s, Axes(f, x_is_bytes ? 4 : 2, x_label,
                           x_is_bytes ? std::function<std::string(double)>(BytesLabel)
                                      : [](double x) { return absl::StrFormat("%g", x); },
                           y_label));
  for (size_t i = 0; i < markers.size(); ++i) {
    const double x = f.X(markers[i].x);
    if (x < kLeft || x > kWidth - kRight) continue;
    absl::StrAppend(&s, absl::StrFormat(
        "<line x1=\"%.1f\" y1=\"%.0f\" x2=\"%.1f\" y2=\"%.0f\" stroke=\"#2ca02c\" "
        "stroke-dasharray=\"4,3\"/><text x=\"%.1f\" y=\"%.0f\" fill=\"#2ca02c\" "
        "font-size=\"10\">%s</text>\n",
        x, kTop, x, kHeight - kBottom, x + 2, kTop + 12 + 12 * double(i % 4), markers[i].label));
  }
  for (size_t i = 0; i < series.size(); ++i) {
    const char* colour = kColours[i % (sizeof(kColours) / sizeof(kColours[0]))];
    absl::StrAppend(&s, Polyline(f, series[i].points, colour, series[i].dashed ? "6,3" : "none"));
    absl::StrAppend(&s, absl::StrFormat("<text x=\"%.0f\" y=\"%.0f\" fill=\"%s\">%s</text>\n",
                                        kWidth - kRight + 10, 60 + 18 * double(i), colour,
                                        series[i].name));
  }
  return s + "</svg>\n";
}

std::string StackSvg(const std::vector<std::string>& pictures) {
  std::string s = absl::StrFormat(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\">\n", kWidth,
      kHeight * double(pictures.size()));
  for (size_t i = 0; i < pictures.size(); ++i) {
    // Each picture is a whole <svg> document: placed as a nested one at its offset.
    std::string inner = pictures[i];
    const size_t open = inner.find("<svg ");
    if (open != std::string::npos) {
      inner.insert(open + 5, absl::StrFormat("y=\"%.0f\" ", kHeight * double(i)));
    }
    absl::StrAppend(&s, inner);
  }
  return s + "</svg>\n";
}

}  // namespace rooftune::reports
