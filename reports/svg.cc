#include "reports/svg.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "framework/roofline.h"
#include "reports/document.h"

namespace rooftune::reports {
namespace {

constexpr double kWidth = 820, kHeight = 520, kLeft = 70, kRight = 170, kTop = 30, kBottom = 60;
constexpr double kLegendStep = 16;  // a 12-pixel legend line and its gap
const char* kColours[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"};

// A log-log frame mapping data to pixels.
struct Frame {
  double x0, x1, y0, y1;  // data ranges (log10 applied inside)
  double X(double x) const {
    return kLeft + (std::log10(x) - std::log10(x0)) / (std::log10(x1) - std::log10(x0)) *
                       (kWidth - kLeft - kRight);
  }
  double Y(double y) const {
    return kHeight - kBottom -
           (std::log10(y) - std::log10(y0)) / (std::log10(y1) - std::log10(y0)) *
               (kHeight - kTop - kBottom);
  }
};

std::string Header(const std::string& title, double height = kHeight) {
  return absl::StrFormat(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
      "viewBox=\"0 0 %.0f %.0f\" font-family=\"sans-serif\" font-size=\"12\">\n"
      "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
      "<text x=\"%.0f\" y=\"18\" font-size=\"15\">%s</text>\n",
      kWidth, height, kWidth, height, kLeft, EscapeHtml(title));
}

// Axes with a tick at every power of `base` inside the range.
std::string Axes(const Frame& f, double x_base, const std::string& x_label,
                 const std::function<std::string(double)>& x_text, const std::string& y_label) {
  std::string s = absl::StrFormat(
      "<rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\" fill=\"none\" "
      "stroke=\"#444\"/>\n",
      kLeft, kTop, kWidth - kLeft - kRight, kHeight - kTop - kBottom);
  for (double x = std::pow(x_base, std::ceil(std::log(f.x0) / std::log(x_base)));
       x <= f.x1 * 1.0001; x *= x_base) {
    absl::StrAppend(
        &s,
        absl::StrFormat("<line x1=\"%.1f\" y1=\"%.0f\" x2=\"%.1f\" y2=\"%.0f\" stroke=\"#ddd\"/>"
                        "<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\">%s</text>\n",
                        f.X(x), kTop, f.X(x), kHeight - kBottom, f.X(x), kHeight - kBottom + 20,
                        x_text(x)));
  }
  for (double y = std::pow(10, std::ceil(std::log10(f.y0))); y <= f.y1 * 1.0001; y *= 10) {
    absl::StrAppend(
        &s,
        absl::StrFormat("<line x1=\"%.0f\" y1=\"%.1f\" x2=\"%.0f\" y2=\"%.1f\" stroke=\"#ddd\"/>"
                        "<text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n",
                        kLeft, f.Y(y), kWidth - kRight, f.Y(y), kLeft - 6, f.Y(y) + 4, y));
  }
  absl::StrAppend(
      &s, absl::StrFormat("<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">%s</text>\n"
                          "<text x=\"16\" y=\"%.0f\" transform=\"rotate(-90 16 %.0f)\" "
                          "text-anchor=\"middle\">%s</text>\n",
                          (kLeft + kWidth - kRight) / 2, kHeight - 18, x_label,
                          (kTop + kHeight - kBottom) / 2, (kTop + kHeight - kBottom) / 2, y_label));
  return s;
}

// A label's box in pixels: x, y its top left corner; `placed` false when no free place was found.
struct Box {
  double x, y, width, height;
  bool placed = true;
  bool Overlaps(const Box& o) const {
    return x < o.x + o.width && o.x < x + width && y < o.y + o.height && o.y < y + height;
  }
};

// About the advance of one character of the sans-serif font, and the height of its line: wide and
// tall enough that boxes sized by them hold their text as a browser renders it.
double TextWidth(const std::string& text, double font_size) {
  return 0.62 * font_size * double(text.size());
}
double LineHeight(double font_size) { return 1.25 * font_size; }

// `text` in `box`, its baseline where a browser puts it for a line of that height.
// `css_class` names the kind of label ("point": a result's number) for readers of the SVG.
std::string TextIn(const Box& box, const std::string& text, double font_size, const char* colour,
                   const char* css_class = nullptr) {
  return absl::StrFormat("<text x=\"%.1f\" y=\"%.1f\" font-size=\"%.0f\" fill=\"%s\"%s>%s</text>\n",
                         box.x, box.y + 0.95 * font_size, font_size, colour,
                         css_class == nullptr ? "" : absl::StrCat(" class=\"", css_class, "\""),
                         EscapeHtml(text));
}

// Places labels one at a time where they overlap nothing placed before: beside their anchor if
// that is free, else the nearest free row above or below it, right of the anchor then left of it.
// Dense clusters (the same shape at several thread counts, a baseline beside our kernel) stay
// readable instead of printing over each other; a label with no free place is not drawn
// (placed false) rather than drawn over another.
class LabelPlacer {
 public:
  explicit LabelPlacer(Box area) : area_(area) {}
  void Occupy(const Box& box) { taken_.push_back(box); }
  // The box for text of `width` x `height` whose preferred top-left corner is (x, y); a left-hand
  // place ends `gap` pixels before `anchor_x`.
  Box Place(double x, double y, double width, double height, double anchor_x, double gap) {
    for (int step = 0; step <= 40; ++step) {
      const double dy = (step % 2 == 1 ? -1 : 1) * height * double((step + 1) / 2);
      for (const double left : {x, anchor_x - gap - width}) {
        const Box box{left, y + dy, width, height};
        if (Free(box)) {
          taken_.push_back(box);
          return box;
        }
      }
    }
    return Box{x, y, width, height, false};
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

std::string BytesLabel(double b) {
  if (b >= double(uint64_t{1} << 30))
    return absl::StrFormat("%.3gG", b / double(uint64_t{1} << 30));
  if (b >= (1 << 20)) return absl::StrFormat("%.3gM", b / (1 << 20));
  return absl::StrFormat("%.3gK", b / 1024);
}

std::string Polyline(const Frame& f, const std::vector<CurvePoint>& points, const char* colour,
                     const char* dash) {
  std::string pts;
  for (const CurvePoint& p : points) {
    if (p.value > 0)
      absl::StrAppend(&pts, absl::StrFormat("%.1f,%.1f ", f.X(p.bytes), f.Y(p.value)));
  }
  return absl::StrFormat(
      "<polyline points=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"1.8\" "
      "stroke-dasharray=\"%s\"/>\n",
      pts, colour, dash);
}

}  // namespace

std::string LatencySvg(const MachineProfile& p) {
  std::string s =
      Header("Latency by working set (random pointer chase): levels found on the curve");
  if (p.latency_curve.empty())
    return s + "<text x=\"70\" y=\"60\">no latency curve measured</text></svg>\n";
  double y_max = 1, y_min = 1e9;
  for (const auto* curve : {&p.latency_curve, &p.latency_curve_huge}) {
    for (const CurvePoint& c : *curve)
      y_max = std::max(y_max, c.value), y_min = std::min(y_min, c.value);
  }
  const Frame f{p.latency_curve.front().bytes, p.latency_curve.back().bytes,
                std::pow(10, std::floor(std::log10(y_min))),
                std::pow(10, std::ceil(std::log10(y_max)))};
  absl::StrAppend(
      &s, Axes(f, 4, "working set (bytes, log scale)", BytesLabel, "ns per load (log scale)"));
  // Bands and lines first, then their labels where they overlap nothing: the OS's sizes near the
  // top, the levels found near the bottom.
  LabelPlacer placer({kLeft, kTop, kWidth - kLeft - kRight, kHeight - kTop - kBottom});
  constexpr double kFont = 10;
  std::string labels;
  for (const CacheLevel& c : p.caches) {
    const double x = f.X(double(c.size_bytes));
    if (x < kLeft || x > kWidth - kRight) continue;
    absl::StrAppend(
        &s, absl::StrFormat("<line x1=\"%.1f\" y1=\"%.0f\" x2=\"%.1f\" y2=\"%.0f\" stroke=\"#999\" "
                            "stroke-dasharray=\"2,4\"/>\n",
                            x, kTop, x, kHeight - kBottom));
    const std::string text = absl::StrCat("OS L", c.level, " ", BytesLabel(double(c.size_bytes)));
    const Box box = placer.Place(x + 2, kTop + 4, TextWidth(text, kFont), LineHeight(kFont), x, 2);
    if (box.placed) absl::StrAppend(&labels, TextIn(box, text, kFont, "#777"));
  }
  for (const MeasuredLevel& m : p.measured_levels) {
    const bool tlb = m.kind == LevelKind::kTlb;
    const char* colour = tlb ? "#ff7f0e" : "#2ca02c";
    const double x = f.X(m.size_bytes);
    absl::StrAppend(
        &s,
        absl::StrFormat("<rect x=\"%.1f\" y=\"%.0f\" width=\"%.1f\" height=\"%.0f\" fill=\"%s\" "
                        "opacity=\"0.15\"/>"
                        "<line x1=\"%.1f\" y1=\"%.0f\" x2=\"%.1f\" y2=\"%.0f\" stroke=\"%s\" "
                        "stroke-width=\"1.5\"/>\n",
                        f.X(m.low_bytes), kTop, std::max(1.0, f.X(m.high_bytes) - f.X(m.low_bytes)),
                        kHeight - kTop - kBottom, colour, x, kTop, x, kHeight - kBottom, colour));
    const std::string text = absl::StrCat(tlb ? "TLB " : "cache ", BytesLabel(m.size_bytes));
    const Box box = placer.Place(x + 2, kHeight - kBottom - LineHeight(kFont) - 4,
                                 TextWidth(text, kFont), LineHeight(kFont), x, 2);
    if (box.placed) absl::StrAppend(&labels, TextIn(box, text, kFont, colour));
  }
  absl::StrAppend(&s, labels);
  absl::StrAppend(&s, Polyline(f, p.latency_curve, kColours[0], "none"));
  absl::StrAppend(&s, Polyline(f, p.latency_curve_huge, kColours[1], "6,3"));
  const double lx = kWidth - kRight + 10;
  absl::StrAppend(
      &s, absl::StrFormat(
              "<text x=\"%.0f\" y=\"60\" fill=\"%s\">4 KiB pages</text>"
              "<text x=\"%.0f\" y=\"78\" fill=\"%s\">huge pages</text>"
              "<text x=\"%.0f\" y=\"96\" fill=\"#2ca02c\">cache step (95%%)</text>"
              "<text x=\"%.0f\" y=\"114\" fill=\"#ff7f0e\">TLB reach</text>"
              "<text x=\"%.0f\" y=\"132\" fill=\"#777\">size the OS reports</text>\n</svg>\n",
              lx, kColours[0], lx, kColours[1], lx, lx, lx));
  return s;
}

namespace {

// The thread counts to draw: those of the points, else the largest the profile measured.
std::vector<int> DrawnThreadCounts(const MachineProfile& p,
                                   const std::vector<PlacedResult>& points) {
  std::vector<int> counts;
  for (const PlacedResult& point : points) {
    if (point.threads > 0 &&
        std::find(counts.begin(), counts.end(), point.threads) == counts.end()) {
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

namespace {

// One colour per memory level, shared by its roof, its markers and its legend entry.
const char* LevelColour(MemoryLevel level) {
  static const char* kByLevel[kNumMemoryLevels] = {"#2ca02c", "#1f77b4", "#9467bd", "#d62728"};
  return kByLevel[int(level)];
}

// The power of `base` at or below (`down`) or at or above `x`.
double PowerStep(double x, double base, bool down) {
  const double e = std::log(x) / std::log(base);
  return std::pow(base, down ? std::floor(e + 1e-9) : std::ceil(e - 1e-9));
}

}  // namespace

namespace {

// One roofline picture as it is drawn: its frame (ranges holding every roof and marker), the
// labels placed so far, and the legend's next line at the right edge. Roofs first, then the
// results' markers, then their numbers, so that no number covers a marker.
class RooflineDrawing {
 public:
  RooflineDrawing(const MachineProfile& profile, const std::vector<PlacedResult>& results)
      : profile_(profile),
        results_(results),
        counts_(DrawnThreadCounts(profile, results)),
        placer_({kLeft, kTop, kWidth - kLeft - kRight, kHeight - kTop - kBottom}) {
    for (const PlacedResult& r : results) {
      // The roof the result is priced at: its dtype's own loop where the probe has one (s8
      // weights converted to f32), else the loop doing its arithmetic.
      const Ceiling* priced = profile.FindCompute(r.dtype, r.threads);
      const Dtype d = priced != nullptr ? priced->dtype : ComputeDtype(r.dtype);
      if (std::find(dtypes_.begin(), dtypes_.end(), d) == dtypes_.end()) dtypes_.push_back(d);
    }
    frame_ = FrameHoldingAll();
    absl::StrAppend(
        &svg_,
        Axes(
            frame_, 4, "arithmetic intensity (operations per byte of each level, log scale)",
            [](double x) { return absl::StrFormat("%g", x); }, "GFLOP/s or GOP/s (log scale)"));
  }

  // The roofs of the thread counts the results ran at, as they were judged (a count the probe
  // skipped is priced from its neighbours); the most threads solid, fewer dashed. Each roof is
  // labelled once: a memory level's in the legend, a compute roof at its own right end.
  void DrawRoofs() {
    for (const int threads : counts_) {
      DrawBandwidthRoofs(threads);
      legend_y_ += 6;
      DrawComputeRoofs(threads);
    }
    if (counts_.size() > 1) {
      Legend(absl::StrFormat("solid: %dT; dashed: fewer", counts_.back()), "#444");
    }
  }

  // Each result: one marker per level at that level's intensity, joined, all at the measured
  // rate; what binds filled (grey at the highest intensity when compute binds), an impossible
  // result crossed; its number beside the binding marker; its figures on hover.
  void DrawResults() {
    if (results_.empty()) return;
    legend_y_ += 6;
    Legend("\u25CF what binds", "#444");
    Legend("  (grey: compute)", "#444");
    Legend("\u25CB every other level", "#444");
    Legend("\u2715 impossible", "#444");
    std::vector<Anchor> anchors;
    for (const PlacedResult& r : results_) {
      if (r.ops_per_second > 0 && !r.levels.empty()) anchors.push_back(DrawMarkers(r));
    }
    std::stable_sort(anchors.begin(), anchors.end(),
                     [](const Anchor& a, const Anchor& b) { return a.y < b.y; });
    for (const Anchor& at : anchors) DrawNumber(at);
  }

  std::string Finish(const std::string& title) const {
    return Header(title, std::max(kHeight, legend_y_ + 10)) + svg_ + "</svg>\n";
  }

 private:
  struct Anchor {
    const PlacedResult* result;
    double x, y;  // the marker the number goes beside
  };

  // A compute roof this picture draws: those its results are priced at (all without results).
  bool Drawn(const Ceiling& c) const {
    return c.kind == Ceiling::Kind::kCompute &&
           (dtypes_.empty() || std::find(dtypes_.begin(), dtypes_.end(), c.dtype) != dtypes_.end());
  }

  // The ranges hold every drawn roof and every marker: a fast L1 roof or a warm GEMM's tiny DRAM
  // traffic reaches far beyond the classic 1/16..1024.
  Frame FrameHoldingAll() {
    double bottom = 1, x0 = 1.0 / 16, x1 = 1024;
    for (const Ceiling& c : profile_.ceilings) {
      if (Drawn(c)) top_ = std::max(top_, c.per_second / 1e9);
    }
    for (const PlacedResult& r : results_) {
      if (r.ops_per_second <= 0) continue;
      top_ = std::max(top_, r.ops_per_second / 1e9);
      bottom = std::min(bottom, std::max(1e-3, r.ops_per_second / 1e9));
      for (const LevelMark& m : r.levels) {
        x0 = std::min(x0, std::max(std::pow(4.0, -8), m.intensity));
        x1 = std::max(x1, std::min(std::pow(4.0, 10), m.intensity));
      }
    }
    return Frame{PowerStep(x0, 4, true), PowerStep(x1, 4, false), PowerStep(bottom, 10, true),
                 PowerStep(top_ * 1.5, 10, false)};
  }

  const char* Dash(int threads) const { return threads == counts_.back() ? "none" : "5,4"; }

  void Legend(const std::string& text, const char* colour) {
    absl::StrAppend(&svg_, absl::StrFormat("<text x=\"%.0f\" y=\"%.0f\" fill=\"%s\">%s</text>\n",
                                           kWidth - kRight + 10, legend_y_, colour, text));
    legend_y_ += kLegendStep;
  }

  // y = bandwidth x intensity, up to the highest compute roof (where every roof turns flat).
  void DrawBandwidthRoofs(int threads) {
    const Frame& f = frame_;
    for (const Ceiling& c : SelectCeilings(profile_, Dtype::kF32, threads).ceilings) {
      if (c.kind != Ceiling::Kind::kBandwidth || c.per_second <= 0) continue;
      const double bw = c.per_second / 1e9;
      const double x_end = std::min(f.x1, top_ / bw);
      const double x_start = std::max(f.x0, f.y0 / bw);
      if (x_end <= x_start) continue;
      absl::StrAppend(&svg_, absl::StrFormat("<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
                                             "y2=\"%.1f\" stroke=\"%s\" stroke-width=\"1.5\" "
                                             "stroke-dasharray=\"%s\"/>\n",
                                             f.X(x_start), f.Y(bw * x_start), f.X(x_end),
                                             f.Y(bw * x_end), LevelColour(c.level), Dash(threads)));
      Legend(absl::StrFormat("%s %.0f GB/s (%dT)", ToString(c.level), bw, threads),
             LevelColour(c.level));
    }
  }

  void DrawComputeRoofs(int threads) {
    constexpr double kFont = 10;
    for (const Ceiling& c : ComputeCeilings(profile_, threads)) {
      if (!Drawn(c)) continue;  // another family's roof: a picture shows those its results meet
      const double y = frame_.Y(c.per_second / 1e9);
      const std::string label = absl::StrFormat("%s%s %dT %.0f", ToString(c.dtype),
                                                c.source.rfind("AMX", 0) == 0 ? " AMX" : "",
                                                c.threads, c.per_second / 1e9);
      const double width = TextWidth(label, kFont), right = kWidth - kRight - 4;
      const Box box = placer_.Place(right - width, y - LineHeight(kFont) - 1, width,
                                    LineHeight(kFont), right, 0);
      absl::StrAppend(&svg_,
                      absl::StrFormat("<line x1=\"%.0f\" y1=\"%.1f\" x2=\"%.0f\" y2=\"%.1f\" "
                                      "stroke=\"#333\" stroke-dasharray=\"%s\"/>\n",
                                      kLeft, y, kWidth - kRight, y, Dash(threads)));
      if (box.placed) absl::StrAppend(&svg_, TextIn(box, label, kFont, "#333"));
    }
  }

  Anchor DrawMarkers(const PlacedResult& r) {
    const Frame& f = frame_;
    const double y = f.Y(std::clamp(r.ops_per_second / 1e9, f.y0, f.y1));
    const bool compute_binds = r.judged && !r.binding_level;
    const LevelMark* nearest_flat = &*std::max_element(
        r.levels.begin(), r.levels.end(),
        [](const LevelMark& a, const LevelMark& b) { return a.intensity < b.intensity; });
    std::string line, dots;
    double anchor_x = -1;
    for (const LevelMark& m : r.levels) {
      const double x = f.X(std::clamp(m.intensity, f.x0, f.x1));
      absl::StrAppend(&line, absl::StrFormat("%.1f,%.1f ", x, y));
      const bool binds = compute_binds ? &m == nearest_flat : r.binding_level == m.level;
      const char* colour = !r.judged                ? "#777"
                           : compute_binds && binds ? "#555"
                                                    : LevelColour(m.level);
      if (r.impossible) {
        absl::StrAppend(
            &dots, absl::StrFormat(
                       "<path d=\"M%.1f %.1fl8 8m0 -8l-8 8\" stroke=\"%s\" stroke-width=\"%s\"/>",
                       x - 4, y - 4, colour, binds ? "2.5" : "1.2"));
      } else {
        absl::StrAppend(
            &dots,
            absl::StrFormat("<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%s\" fill=\"%s\" stroke=\"%s\"/>",
                            x, y, binds ? "5" : "3.5", binds ? colour : "white", colour));
      }
      placer_.Occupy({x - 5, y - 5, 10, 10});
      if (binds || anchor_x < 0) anchor_x = x;
    }
    absl::StrAppend(&svg_, "<g><title>", EscapeHtml(r.Describe()), "</title>",
                    absl::StrFormat("<polyline points=\"%s\" fill=\"none\" stroke=\"#888\" "
                                    "stroke-width=\"1\"%s/>",
                                    line, r.impossible ? " stroke-dasharray=\"2,2\"" : ""),
                    dots, "</g>\n");
    return {&r, anchor_x, y};
  }

  // The number beside its marker where that is free, else the nearest free place with a leader
  // line; nowhere free, none (the hover text and the key still name the result).
  void DrawNumber(const Anchor& at) {
    constexpr double kFont = 10;
    const std::string text = absl::StrCat(at.result->number);
    const double width = TextWidth(text, kFont), height = LineHeight(kFont);
    const Box box = placer_.Place(at.x + 6, at.y - height - 1, width, height, at.x, 6);
    if (!box.placed) return;
    const bool beside =
        box.y == at.y - height - 1 && (box.x == at.x + 6 || box.x + width == at.x - 6);
    if (!beside) {
      const double lx = box.x > at.x ? box.x : box.x + width;
      absl::StrAppend(&svg_, absl::StrFormat("<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
                                             "y2=\"%.1f\" stroke=\"#888\" stroke-width=\"0.6\"/>",
                                             at.x, at.y, lx, box.y + height / 2));
    }
    absl::StrAppend(&svg_,
                    TextIn(box, text, kFont, at.result->impossible ? "#d62728" : "#000", "point"));
  }

  const MachineProfile& profile_;
  const std::vector<PlacedResult>& results_;
  const std::vector<int> counts_;
  std::vector<Dtype> dtypes_;
  double top_ = 1;  // GFLOP/s: the highest drawn roof or result
  Frame frame_{};
  LabelPlacer placer_;
  double legend_y_ = 50;
  std::string svg_;
};

}  // namespace

std::string RooflineSvg(const MachineProfile& p, const std::vector<PlacedResult>& results,
                        const std::string& title) {
  RooflineDrawing drawing(p, results);
  drawing.DrawRoofs();
  drawing.DrawResults();
  return drawing.Finish(
      title.empty() ? "Hierarchical roofline: a marker per level, the binding one filled" : title);
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
  absl::StrAppend(&s, Axes(
                          f, x_is_bytes ? 4 : 2, x_label,
                          x_is_bytes ? std::function<std::string(double)>(BytesLabel)
                                     : [](double x) { return absl::StrFormat("%g", x); },
                          y_label));
  // Each marker's label beside its line near the top, else the nearest free place: markers close
  // together (a cache level and a TLB's reach) never print over each other.
  LabelPlacer placer({kLeft, kTop, kWidth - kLeft - kRight, kHeight - kTop - kBottom});
  constexpr double kFont = 10;
  std::string labels;
  for (const PlotMarker& marker : markers) {
    const double x = f.X(marker.x);
    if (x < kLeft || x > kWidth - kRight) continue;
    absl::StrAppend(
        &s,
        absl::StrFormat("<line x1=\"%.1f\" y1=\"%.0f\" x2=\"%.1f\" y2=\"%.0f\" stroke=\"#2ca02c\" "
                        "stroke-dasharray=\"4,3\"/>\n",
                        x, kTop, x, kHeight - kBottom));
    const Box box =
        placer.Place(x + 2, kTop + 4, TextWidth(marker.label, kFont), LineHeight(kFont), x, 2);
    if (box.placed) absl::StrAppend(&labels, TextIn(box, marker.label, kFont, "#2ca02c"));
  }
  absl::StrAppend(&s, labels);
  for (size_t i = 0; i < series.size(); ++i) {
    const char* colour = kColours[i % (sizeof(kColours) / sizeof(kColours[0]))];
    absl::StrAppend(&s, Polyline(f, series[i].points, colour, series[i].dashed ? "6,3" : "none"));
    absl::StrAppend(&s, absl::StrFormat("<text x=\"%.0f\" y=\"%.0f\" fill=\"%s\">%s</text>\n",
                                        kWidth - kRight + 10, 60 + kLegendStep * double(i), colour,
                                        EscapeHtml(series[i].name)));
  }
  return s + "</svg>\n";
}

std::string StackSvg(const std::vector<std::string>& pictures) {
  std::string s =
      absl::StrFormat("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\">\n",
                      kWidth, kHeight * double(pictures.size()));
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
