// The report's layout: the summary and its findings, the ceiling matrix, the roofline pictures'
// labels at 1, 10 and 60 results, each result's detail, and the text format's width.
#include <gtest/gtest.h>

#include <algorithm>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "reports/ceiling_matrix.h"
#include "reports/document.h"
#include "reports/report.h"
#include "reports/summary.h"
#include "reports/svg.h"
#include "tests/report_inputs.h"

namespace rooftune::reports {
namespace {

using fixtures::Add;
using fixtures::ManyResults;
using fixtures::Measured;
using fixtures::TwoThreadMachine;

struct TextBox {
  double left, top, width, height;
  std::string text;
};

// Every <text> of an SVG (rotated ones aside) as the box a browser would draw it in: about 0.6
// of the font size per character, 1.15 of it per line, anchored as the element says.
std::vector<TextBox> TextBoxes(const std::string& svg) {
  static const std::regex text_element(R"re(<text ([^>]*)>([^<]*)</text>)re");
  static const std::regex attribute(R"re(([a-z-]+)="([^"]*)")re");
  std::vector<TextBox> boxes;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), text_element);
       it != std::sregex_iterator(); ++it) {
    const std::string attributes = (*it)[1];
    double x = 0, y = 0, size = 12;
    std::string anchor = "start";
    bool rotated = false;
    for (auto a = std::sregex_iterator(attributes.begin(), attributes.end(), attribute);
         a != std::sregex_iterator(); ++a) {
      const std::string name = (*a)[1], value = (*a)[2];
      if (name == "x") x = std::stod(value);
      if (name == "y") y = std::stod(value);
      if (name == "font-size") size = std::stod(value);
      if (name == "text-anchor") anchor = value;
      if (name == "transform") rotated = true;
    }
    if (rotated) continue;
    const std::string text = (*it)[2];
    const double characters = double(std::count_if(text.begin(), text.end(), [](char c) {
      return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
    }));
    const double width = 0.6 * size * characters;
    const double left = anchor == "middle" ? x - width / 2 : anchor == "end" ? x - width : x;
    boxes.push_back({left, y - 0.9 * size, width, 1.15 * size, text});
  }
  return boxes;
}

// The pairs of labels that overlap, by more than half a pixel each way.
std::vector<std::string> Overlaps(const std::string& svg) {
  const std::vector<TextBox> boxes = TextBoxes(svg);
  std::vector<std::string> found;
  for (size_t i = 0; i < boxes.size(); ++i) {
    for (size_t j = i + 1; j < boxes.size(); ++j) {
      const TextBox& a = boxes[i];
      const TextBox& b = boxes[j];
      if (a.left + 0.5 < b.left + b.width && b.left + 0.5 < a.left + a.width &&
          a.top + 0.5 < b.top + b.height && b.top + 0.5 < a.top + a.height) {
        found.push_back(absl::StrCat("'", a.text, "' and '", b.text, "'"));
      }
    }
  }
  return found;
}

class RooflineLabels : public testing::TestWithParam<int> {};

// However many results, no two labels of a picture overlap, every result is numbered in exactly
// one picture and carries its hover text; past a dozen, one picture per kernel family.
TEST_P(RooflineLabels, EveryResultIsNumberedAndNoTwoLabelsOverlap) {
  const int count = GetParam();
  const ReportInput in = ManyResults(count);
  const std::vector<Picture> pictures = ReportPictures(in);
  ASSERT_GE(pictures.size(), 2u);
  EXPECT_EQ(pictures.front().file, "latency.svg");
  const size_t rooflines = pictures.size() - 1;
  EXPECT_EQ(rooflines, count <= 12 ? 1u : 4u);
  std::vector<int> numbered(size_t(count) + 1, 0);
  for (const Picture& picture : pictures) {
    EXPECT_EQ(Overlaps(picture.svg), std::vector<std::string>{}) << picture.file;
    if (picture.file == "latency.svg") continue;
    for (int number : picture.numbers) {
      EXPECT_NE(picture.svg.find(absl::StrCat("<title>#", number, " ")), std::string::npos)
          << number;
      const std::string label = absl::StrCat("class=\"point\">", number, "</text>");
      for (size_t at = picture.svg.find(label); at != std::string::npos;
           at = picture.svg.find(label, at + 1)) {
        ++numbered[size_t(number)];
      }
    }
  }
  for (int number = 1; number <= count; ++number) {
    EXPECT_EQ(numbered[size_t(number)], 1) << "result " << number;
  }
}

INSTANTIATE_TEST_SUITE_P(Report, RooflineLabels, testing::Values(1, 10, 60));

// Each marker sits at the result's intensity against that level's bytes, the binding one filled,
// an impossible one crossed.
TEST(RooflinePicture, OneMarkerPerLevelTheBindingOneFilled) {
  ReportInput in;
  in.profile = TwoThreadMachine();
  const Workload gemv{Op::kGemv, 1, 4096, 4096, Dtype::kF32, Epilogue::kNone};
  const double bytes = gemv.CompulsoryBytes();
  Add(in, Measured(in.profile, "gemv_f32", gemv, {bytes, bytes, bytes, bytes}, 8e-3));
  Add(in,
      Measured(in.profile, "gemv_f32", gemv, {bytes, bytes, bytes, bytes}, 1e-3));  // impossible
  ASSERT_EQ(in.results[1].verdict, Verdict::Class::kImpossible);
  const std::string svg = ReportPictures(in)[1].svg;
  const std::regex hollow(R"(<circle [^>]*r="3\.5" fill="white")");
  const std::regex filled(R"(<circle [^>]*r="5" fill="#d62728")");
  const std::regex cross(R"(<path d="M[^"]*l8 8m0 -8l-8 8")");
  auto count = [&](const std::regex& re) {
    return std::distance(std::sregex_iterator(svg.begin(), svg.end(), re), std::sregex_iterator());
  };
  // The round machine prices L2, L3 and DRAM: three markers each.
  EXPECT_EQ(count(hollow), 2);
  EXPECT_EQ(count(filled), 1);
  EXPECT_EQ(count(cross), 3);
  EXPECT_NE(svg.find("<title>#1 gemv_f32 4096x4096 1T: "), std::string::npos);
  EXPECT_NE(svg.find("bound by DRAM bandwidth"), std::string::npos);
  // Compute binds a large GEMM: its marker of highest intensity (DRAM's) is filled grey.
  ReportInput gemm;
  gemm.profile = in.profile;
  const Workload big{Op::kGemm, 1024, 1024, 1024, Dtype::kF32, Epilogue::kNone};
  Add(gemm, Measured(gemm.profile, "gemm_f32", big, {4e9, 1e9, 0, 12e6}, 0.03));
  ASSERT_EQ(gemm.results[0].binding, "f32 compute, 1 thread");
  const std::string compute = ReportPictures(gemm)[1].svg;
  const std::regex grey(R"re(<circle cx="([0-9.]+)"[^>]*r="5" fill="#555")re");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(compute, m, grey)) << compute;
  EXPECT_EQ(std::distance(std::sregex_iterator(compute.begin(), compute.end(), grey),
                          std::sregex_iterator()),
            1);
  // The rightmost of its markers: no circle further right.
  const std::regex circle(R"re(<circle cx="([0-9.]+)")re");
  for (auto it = std::sregex_iterator(compute.begin(), compute.end(), circle);
       it != std::sregex_iterator(); ++it) {
    EXPECT_LE(std::stod((*it)[1]), std::stod(m[1]));
  }
  // Only the roofs of the results' dtypes: no int8 roof over an f32 GEMM.
  EXPECT_EQ(compute.find("u8s8 1T"), std::string::npos);
  EXPECT_NE(compute.find("f32 1T 100"), std::string::npos);
}

// A line plot's markers (measured levels on a sweep) close together: each labelled, none over
// another, names escaped.
TEST(LogLogPlot, MarkerLabelsNeverOverlap) {
  const std::vector<PlotSeries> series = {
      {"predicted <per token>", {{1, 10}, {64, 40}, {1024, 600}}, false},
      {"measured", {{1, 12}, {64, 45}, {1024, 650}}, true}};
  std::vector<PlotMarker> markers;
  for (double x : {30.0, 32.0, 34.0, 36.0, 38.0, 40.0}) {
    markers.push_back({x, absl::StrCat("L", int(x), " ends here")});
  }
  const std::string svg =
      LogLogPlotSvg("Time per token", "batch", false, "seconds", series, markers);
  EXPECT_EQ(Overlaps(svg), std::vector<std::string>{}) << svg;
  for (const PlotMarker& m : markers)
    EXPECT_NE(svg.find(">" + m.label + "</text>"), std::string::npos) << m.label;
  EXPECT_NE(svg.find("predicted &lt;per token&gt;"), std::string::npos);
}

// The findings: levers by gain, then far from the bound, then impossible; each linked.
TEST(ReportSummary, FindingsComeInTheOrderTheyPay) {
  ReportInput in;
  in.profile = TwoThreadMachine();
  const Workload gemv{Op::kGemv, 1, 4096, 4096, Dtype::kF32, Epilogue::kNone};
  const double bytes = gemv.CompulsoryBytes();
  const Workload int8{Op::kGemm, 512, 512, 512, Dtype::kU8S8, Epilogue::kNone};
  const double int8_peak = 800e9;  // two threads
  // 1: an int8 GEMM on every CPU at 0.3 of its compute bound: nothing narrower, no more
  // threads, compute-bound: only the inner loop pays (3.3x). 2: impossible. 3: a DRAM-bound
  // GEMV (fewer bytes pays first). 4: the int8 GEMM at 0.95: nothing pays.
  Add(in, Measured(in.profile, "gemm_s8", int8, {1e8, 1e7, 0, 0},
                   int8.Operations() / int8_peak / 0.3, {}, 2));
  Add(in, Measured(in.profile, "gemv_f32", gemv, {bytes, bytes, bytes, bytes}, 1e-3));
  Add(in, Measured(in.profile, "gemv_f32", gemv, {bytes, bytes, bytes, bytes}, 8e-3));
  Add(in, Measured(in.profile, "gemm_s8", int8, {1e8, 1e7, 0, 0},
                   int8.Operations() / int8_peak / 0.95, {}, 2));
  const std::vector<PlacedResult> placed = PlaceResults(in);
  const std::vector<Finding> findings = Findings(in, placed);
  ASSERT_EQ(findings.size(), 3u);
  EXPECT_EQ(findings[0].kind, Finding::Kind::kLever);
  EXPECT_EQ(findings[0].number, 3);
  EXPECT_EQ(findings[1].kind, Finding::Kind::kFarFromBound);
  EXPECT_EQ(findings[1].number, 1);
  EXPECT_NEAR(findings[1].gain, 1 / 0.3, 0.01);
  EXPECT_EQ(findings[2].kind, Finding::Kind::kImpossible);
  EXPECT_EQ(findings[2].number, 2);
  EXPECT_FALSE(in.verdicts[1].diagnosis.empty());
  EXPECT_NE(findings[2].text.find(in.verdicts[1].diagnosis), std::string::npos);
  EXPECT_NE(findings[0].text.find("[#3 gemv_f32 4096x4096 1T](#result-3)"), std::string::npos)
      << findings[0].text;
  EXPECT_NE(findings[0].text.find("pull **fewer bytes** first"), std::string::npos)
      << findings[0].text;

  // Among levers, the larger gain first: a GEMV moving three times the bytes it needs (better
  // reuse pays 3x, after fewer bytes' gain) comes before or after by its first lever's gain.
  Add(in, Measured(in.profile, "gemv_f32", gemv, {bytes, bytes, bytes, bytes * 3}, 24e-3));
  const std::vector<Finding> more = Findings(in, PlaceResults(in));
  ASSERT_EQ(more.size(), 4u);
  EXPECT_EQ(more[0].kind, Finding::Kind::kLever);
  EXPECT_EQ(more[1].kind, Finding::Kind::kLever);
  EXPECT_GE(more[0].gain, more[1].gain);
  EXPECT_EQ(more[2].number, 1);
  EXPECT_EQ(more[3].number, 2);

  // Results impossible against one roof make one finding, naming each.
  Add(in, Measured(in.profile, "gemv_s8", gemv, {bytes, bytes, bytes, bytes}, 1.1e-3));
  const std::vector<Finding> grouped = Findings(in, PlaceResults(in));
  ASSERT_EQ(grouped.size(), 4u);
  EXPECT_EQ(grouped[3].kind, Finding::Kind::kImpossible);
  EXPECT_EQ(grouped[3].numbers, (std::vector<int>{2, 6}));
  EXPECT_NE(grouped[3].text.find("**2 results impossible** against the DRAM bandwidth roof "
                                 "([#2](#result-2), [#6](#result-6); attainment "),
            std::string::npos)
      << grouped[3].text;
  in.results.pop_back(), in.verdicts.pop_back();

  // The summary opens the report, before the ceilings, and lists them in that order.
  in.results.pop_back(), in.verdicts.pop_back();
  const std::string md = RenderMarkdown(in);
  const size_t summary = md.find("## Summary"), ceilings = md.find("## Ceilings");
  ASSERT_NE(summary, std::string::npos);
  EXPECT_LT(summary, ceilings);
  const size_t first = md.find("- [#3 "), second = md.find("- [#1 "), third = md.find("- [#2 ");
  EXPECT_LT(first, second);
  EXPECT_LT(second, third);
  EXPECT_LT(third, ceilings);
  EXPECT_NE(md.find("4 results: 1 at their bound, 2 with headroom, 1 impossible"),
            std::string::npos)
      << md;
  // Each link lands on its result's detail.
  EXPECT_NE(md.find("<a id=\"result-3\"></a>\n\n### #3 gemv_f32 4096x4096 1T"), std::string::npos);
}

// The machine on the first screen: cores, caches against the OS, peaks, DRAM at one and all
// threads and the share one core reaches, and the ridge points.
TEST(ReportSummary, TheMachineAndItsRidgePoints) {
  MachineProfile p = TwoThreadMachine();
  p.clock_ghz = 3.0;
  p.hwy_targets = {"AVX2"};
  p.measured_levels = {{32 << 10, 30 << 10, 34 << 10, 1.3, LevelKind::kCache},
                       {256 << 10, 240 << 10, 270 << 10, 4, LevelKind::kCache}};
  const std::vector<std::string> facts = MachineFacts(p);
  ASSERT_EQ(facts.size(), 4u);
  EXPECT_EQ(
      facts[0],
      "**CPU**: Round CPU (Test), 2 CPUs, 2 cores; widest vectors AVX2; clock 3.00 GHz (measured)");
  EXPECT_NE(facts[1].find("L1 32 KiB (OS 32 KiB); L2 256 KiB (OS 1.0 MiB, 2.0 octaves apart)"),
            std::string::npos)
      << facts[1];
  EXPECT_NE(facts[2].find("f32 100.0 GFLOP/s on 1 thread, 200.0 GFLOP/s on 2 threads"),
            std::string::npos)
      << facts[2];
  EXPECT_EQ(facts[3],
            "**DRAM read**: 10.0 GB/s on 1 thread, 16.0 GB/s on 2 threads: one core "
            "reaches 62% of the machine's DRAM bandwidth");
  // What a split call costs, where the probe measured it.
  p.parallel_calls = {{2, 3.04e-6}};
  EXPECT_EQ(MachineFacts(p).back(),
            "**A call split over threads** costs, beyond its work, 3.0 us on 2 threads (waking "
            "and joining them): a small product stays on one thread unless its work repays that");
  // Not measured yet: the OS's sizes, saying so.
  MachineProfile unmeasured = TwoThreadMachine();
  EXPECT_EQ(MachineFacts(unmeasured)[1],
            "**Caches**, as the OS reports them (not measured yet: `rooftune probe` draws the "
            "latency curve): L1 32 KiB; L2 1.0 MiB; L3 32.0 MiB");
  const RidgeTable ridge = RidgePoints(p);
  EXPECT_EQ(ridge.threads, 2);
  EXPECT_EQ(ridge.header, (std::vector<std::string>{"dtype", "L2", "L3", "DRAM"}));
  // f32 on two threads: 200 GFLOP/s over 200, 40 and 16 GB/s.
  EXPECT_EQ(ridge.rows[0], (std::vector<std::string>{"f32", "1", "5", "12.5"}));
}

// A database with no rows still opens on the machine, and says what to run.
TEST(ReportSummary, AnEmptyDatabaseSaysWhatToRun) {
  ReportInput in;
  in.profile = TwoThreadMachine();
  const std::string md = RenderMarkdown(in);
  EXPECT_NE(md.find("**Findings**: no tuned results for this machine yet: run `rooftune run`"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("**DRAM read**"), std::string::npos);
  EXPECT_EQ(md.find("## Each result"), std::string::npos);
  const std::string bare = RenderMarkdown(ReportInput{});
  EXPECT_NE(bare.find("No ceilings measured: run `rooftune probe`."), std::string::npos) << bare;
  EXPECT_NE(RenderHtml(ReportInput{}).find("</html>"), std::string::npos);
}

// Levels and dtypes down, thread counts and access kinds across, marks with their legend.
TEST(CeilingMatrix, LevelsAndDtypesDownThreadsAndKindsAcross) {
  MachineProfile p;
  p.ceilings = {
      {Ceiling::Kind::kBandwidth, Dtype::kF32, MemoryLevel::kDram, 1, 10e9, "read"},
      {Ceiling::Kind::kBandwidth, Dtype::kF32, MemoryLevel::kDram, 1, 8e9, "write"},
      {Ceiling::Kind::kBandwidth, Dtype::kF32, MemoryLevel::kDram, 2, 18e9, "read",
       "raised from 17.0 GB/s"},
      {Ceiling::Kind::kBandwidth, Dtype::kF32, MemoryLevel::kL1, 1, 300e9, "read",
       "measured again; unstable"},
      {Ceiling::Kind::kCompute, Dtype::kF32, MemoryLevel::kDram, 1, 100e9, "fma"},
      {Ceiling::Kind::kCompute, Dtype::kF32, MemoryLevel::kDram, 2, 200e9, "fma"},
      {Ceiling::Kind::kCompute, Dtype::kU8S8, MemoryLevel::kDram, 2, 900e9, "AMX tdpbusd"}};
  Document doc;
  AddCeilingMatrix(p, doc);
  const std::string md = ToMarkdown(doc);
  for (const char* line :
       {"<tr><th class=\"group\"></th><th colspan=\"2\" class=\"group\">1T</th><th colspan=\"2\" "
        "class=\"group\">2T</th></tr>",
        "<tr><th>ceiling</th><th>read</th><th>write</th><th>read</th><th>write</th></tr>",
        "<tr><td>L1 GB/s</td><td>300.0!</td><td>–</td><td>–</td><td>–</td></tr>",
        "<tr><td>DRAM GB/s</td><td>10.0</td><td>8.0</td><td>18.0*</td><td>–</td></tr>",
        "<tr><td>f32 GFLOP/s (fma)</td><td colspan=\"2\">100.0</td><td "
        "colspan=\"2\">200.0</td></tr>",
        "<tr><td>u8s8 GOP/s (AMX tdpbusd)</td><td colspan=\"2\">–</td><td "
        "colspan=\"2\">900.0</td></tr>"}) {
    EXPECT_NE(md.find(line), std::string::npos) << line << "\n" << md;
  }
  EXPECT_NE(md.find("`*` raised to what another thread count measured"), std::string::npos);
  EXPECT_NE(md.find("`!` unstable"), std::string::npos);
  EXPECT_EQ(md.find("`^`"), std::string::npos);  // no mark used, no legend entry
  const std::string html = ToHtml(doc);
  EXPECT_NE(html.find("<th colspan=\"2\" class=\"group\">1T</th>"), std::string::npos) << html;
  EXPECT_NE(html.find("<td colspan=\"2\">200.0</td>"), std::string::npos) << html;
}

// The detail of one result: a bar per level against compute and the measured time, the levers,
// and how its config was chosen.
TEST(ResultDetail, WhereTheTimeGoesAndHowTheConfigWasChosen) {
  ReportInput in;
  in.profile = TwoThreadMachine();
  const Workload gemv{Op::kGemv, 1, 4096, 4096, Dtype::kF32, Epilogue::kNone};
  const double bytes = gemv.CompulsoryBytes();
  fixtures::JudgedRow row =
      Measured(in.profile, "gemv_f32", gemv, {bytes, bytes, bytes, bytes}, 8e-3);
  row.result.config = "PACKW=grouped", row.result.initial_config = "PACKW=none";
  row.result.configs_tried = 40, row.result.initial_median_seconds = 10e-3;
  Add(in, row);
  const std::string md = RenderMarkdown(in);
  for (
      const char* pattern :
      {R"(^\| time of \| work \| at \| takes \| of measured \|$)",
       R"(^\| compute \| 0\.0336 GFLOP \| 100\.0 GFLOP/s \| 335\.5 us \| 4% \|$)",
       R"(^\| \*\*DRAM\*\* \| 64\.0 MiB \| 10\.0 GB/s \| 6\.714 ms \| 84% \|$)",
       R"(^\| measured \|  \|  \| 8\.000 ms \| 100% \|$)",
       R"(^\| \*\*fewer bytes\*\* \(first\) \| )",
       R"(the fastest of 40 configs tried from the analytic initial config `PACKW=none`, 1\.25x its speed)"}) {
    EXPECT_TRUE(std::regex_search(md, std::regex(pattern, std::regex::multiline)))
        << pattern << "\n"
        << md;
  }
  // The page draws the bars; the Markdown has only the table.
  EXPECT_NE(RenderHtml(in).find("(binds)</text>"), std::string::npos);
  EXPECT_EQ(md.find("(binds)"), std::string::npos);
}

// Columns of a line as a terminal counts them.
size_t Columns(const std::string& line) {
  return size_t(std::count_if(line.begin(), line.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  }));
}

// The text format fits its width: wide tables as grids when they fit, as records when not;
// paragraphs wrapped; only a word longer than the width may pass it.
TEST(ReportText, FitsTheTerminalsWidth) {
  const ReportInput in = ManyResults(10);
  for (int width : {60, 100, 250}) {
    const std::string text = RenderText(in, width);
    for (absl::string_view line : absl::StrSplit(text, '\n')) {
      const std::string l(line);
      if (Columns(l) <= size_t(width)) continue;
      // Past the width only when one word is longer than the line.
      const std::vector<std::string> words = absl::StrSplit(l, ' ', absl::SkipEmpty());
      size_t longest = 0;
      for (const std::string& w : words) longest = std::max(longest, Columns(w));
      EXPECT_GT(longest + 30, size_t(width)) << "width " << width << ": " << l;
    }
    EXPECT_EQ(text.find("**"), std::string::npos);
    EXPECT_EQ(text.find("<svg"), std::string::npos);
  }
  // 250 columns hold the results table as a grid; 60 print it a record per row.
  EXPECT_TRUE(
      std::regex_search(RenderText(in, 250),
                        std::regex(R"(^#\s+kernel\s+workload\s+threads)", std::regex::multiline)));
  const std::string narrow = RenderText(in, 60);
  EXPECT_TRUE(
      std::regex_search(narrow, std::regex(R"(^kernel:\s+gemm_f32$)", std::regex::multiline)))
      << narrow;
  EXPECT_NE(narrow.find("Summary\n-------"), std::string::npos);
}

TEST(Document, LinksAndGroupedTables) {
  EXPECT_EQ(InlineHtml("see [#3 a<b](#result-3) now"),
            "see <a href=\"#result-3\">#3 a&lt;b</a> now");
  EXPECT_EQ(InlineHtml("`[x](y)`"), "<code>[x](y)</code>");
  EXPECT_EQ(InlineHtml("[unclosed"), "[unclosed");
  // Text drops the marks and keeps what they mark, a code span's `*` included.
  Document marks;
  marks.Paragraph("`*` raised, **bold** and [#3](#result-3); 18.0*");
  EXPECT_EQ(ToText(marks, 80), "* raised, bold and #3; 18.0*\n");
  Document doc;
  doc.GroupedTable({{"", 1}, {"1T", 2}}, {"ceiling", "read", "write"},
                   {{"f32/fma-a", "100"}, {"L1", "1", "2"}}, {{1, 2}, {}});
  // Markdown's pipe tables cannot span: the grouped table is HTML there too.
  EXPECT_EQ(ToMarkdown(doc),
            "<table>\n<thead><tr><th class=\"group\"></th><th colspan=\"2\" class=\"group\">1T</th>"
            "</tr>\n<tr><th>ceiling</th><th>read</th><th>write</th></tr></thead>\n<tbody>\n"
            "<tr><td>f32/fma-a</td><td colspan=\"2\">100</td></tr>\n<tr><td>L1</td><td>1</td>"
            "<td>2</td></tr>\n</tbody>\n</table>\n");
  // Text: the groups on a line over the header; too narrow for that, one record per row, a
  // spanning cell named by its group alone.
  EXPECT_EQ(ToText(doc, 80),
            "           1T\nceiling    read  write\n---------  ----  -----\nf32/fma-a  100\n"
            "L1         1     2\n");
  EXPECT_EQ(ToText(doc, 20),
            "ceiling:  f32/fma-a\n1T:       100\n\nceiling:  L1\n1T read:  1\n1T write: 2\n");
}

}  // namespace
}  // namespace rooftune::reports
