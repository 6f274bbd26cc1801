// Report formats, checked line by line against patterns (as Google Benchmark checks its own).
#include "reports/report.h"

#include <gtest/gtest.h>

#include <regex>

#include "absl/strings/str_cat.h"
#include "reports/document.h"
#include "reports/machine_text.h"
#include "reports/placed_result.h"
#include "reports/svg.h"
#include "tests/round_machine.h"

namespace rooftune::reports {
namespace {

ReportInput Input() {
  ReportInput in;
  in.profile.cpu_model = "Test CPU";
  in.profile.logical_cpus = 2;
  in.profile.hwy_targets = {"AVX2"};
  in.profile.clock_ghz = 3.0;
  in.profile.caches = {{1, "Data", 32 << 10, 8, 64, 1}, {3, "Unified", 32 << 20, 16, 64, 2}};
  in.profile.ceilings = {
      {Ceiling::Kind::kCompute, Dtype::kF32, MemoryLevel::kDram, 1, 96e9, "AVX2 fma"},
      {Ceiling::Kind::kBandwidth, Dtype::kF32, MemoryLevel::kDram, 1, 14e9, "read"}};
  in.profile.measured_levels = {{32 << 10, 30 << 10, 34 << 10, 1.3, LevelKind::kCache},
                                {2 << 20, 1.8 * (1 << 20), 2.2 * (1 << 20), 20, LevelKind::kCache}};
  in.profile.latency_curve = {{4096, 1.3}, {1 << 20, 10}, {64 << 20, 90}};
  in.profile.read_bandwidth_curve = {{16384, 150}, {1 << 20, 90}, {4 << 20, 40}, {256 << 20, 14}};
  TunedResult ok;
  ok.kernel = "gemm_f32", ok.workload = "gemm 256x256x256 f32 none", ok.dtype = Dtype::kF32,
  ok.threads = 1;
  ok.config = "KC=256", ok.median_seconds = 0.0004, ok.ops_per_second = 83.9e9,
  ok.attainment = 0.87;
  ok.verdict = Verdict::Class::kAtBound, ok.binding = "f32 compute, 1 thread",
  ok.cache = CacheMode::kWarm;
  ok.initial_median_seconds = 0.0005;
  TunedResult broken = ok;
  // The ok row was judged beside its ceiling: the profile alone would have called it impossible.
  ok.profile_attainment = 1.31, ok.paired_attainment = 0.87, ok.paired_low = 0.85;
  ok.paired_high = 0.89, ok.paired_pairs = 21, ok.paired_ceiling = "f32 compute, 1 thread (fma)";
  ok.tolerance = 0.05;
  broken.kernel = "gemv_f32", broken.workload = "gemv 4096x4096 f32 none", broken.attainment = 1.5;
  broken.verdict = Verdict::Class::kImpossible, broken.cache = CacheMode::kCold;
  in.results = {ok, broken};
  in.generated_at = "2026-11-29T00:00:00Z";
  return in;
}

// A 1x1x1 GEMM's figures must not print as zeros.
TEST(Format, TinyFiguresKeepTheirDigits) {
  EXPECT_EQ(FormatSeconds(2.5), "2.500 s");
  EXPECT_EQ(FormatSeconds(0.0125), "12.500 ms");
  EXPECT_EQ(FormatSeconds(1.8e-6), "1.8 us");
  EXPECT_EQ(FormatSeconds(8.3e-9), "8.3 ns");
  EXPECT_EQ(FormatSeconds(3.5e-11), "0.035 ns");
  EXPECT_EQ(FormatSeconds(0), "0 s");
  EXPECT_EQ(FormatBytes(12), "12 B");
  EXPECT_EQ(FormatBytes(4096), "4 KiB");
  EXPECT_EQ(FormatBytes(3 << 20), "3.0 MiB");
  EXPECT_EQ(FormatRate(1.1e6, Dtype::kF32), "1.1 MFLOP/s");
  EXPECT_EQ(FormatRate(240.1e9, Dtype::kF32), "240.1 GFLOP/s");
  EXPECT_EQ(FormatRate(852.2e9, Dtype::kU8S8), "852.2 GOP/s");
  EXPECT_EQ(FormatRate(0, Dtype::kF64), "0.0 GFLOP/s");
}

// The figure beside a verdict never reads as the other side of its threshold (at-bound from 0.9).
TEST(Format, AttainmentRoundsDownToTwoDecimals) {
  EXPECT_EQ(FormatAttainment(0.8996), "0.89");
  EXPECT_EQ(FormatAttainment(0.9), "0.90");
  EXPECT_EQ(FormatAttainment(0.957), "0.95");
  EXPECT_EQ(FormatAttainment(1.049), "1.04");
  EXPECT_EQ(FormatAttainment(0.29), "0.29");
  EXPECT_EQ(FormatAttainment(0), "0.00");
}

TEST(Report, MarkdownHasItsTablesAndFlagsImpossibleRows) {
  const std::string md = RenderMarkdown(Input());
  for (
      const char* pattern :
      {R"(^# rooftune report$)", R"(<th class="group">1T</th>)",
       R"(<tr><th>ceiling</th><th>read</th></tr>)", R"(<tr><td>DRAM GB/s</td><td>14\.0</td></tr>)",
       R"(<tr><td>f32 GFLOP/s \(AVX2 fma\)</td><td>96\.0</td></tr>)",
       R"(^\| \[1\]\(#result-1\) \| gemm_f32 \| gemm 256x256x256 f32 none \| 1 \| warm \| `KC=256` \| 400\.0 us .*\| 0\.87 paired \(0\.85-0\.89\); profile 1\.31 \| f32 compute, 1 thread \| at-bound \| 1\.25x \|$)",
       R"(^\| \[2\]\(#result-2\) \| gemv_f32 \| .* \| 1\.50 profile \| )",
       R"(^\| \[2\]\(#result-2\) \| gemv_f32 \| .* \| cold \| .*\| impossible \|)",
       R"(model \(ceiling or byte count\) is broken)", R"(!\[Latency curve\]\(latency\.svg\))",
       R"(sysfs L3 32\.0 MiB: nearest measured step 2\.0 MiB.*DISAGREES)"}) {
    EXPECT_TRUE(std::regex_search(md, std::regex(pattern, std::regex::multiline)))
        << pattern << "\n"
        << md;
  }
}

// The HTML page carries the same tables as the Markdown, marks turned into tags and the rest
// escaped.
TEST(Report, HtmlIsTheSameReportAsAPage) {
  ReportInput in = Input();
  in.profile.cpu_model = "Test <CPU> & co";
  const std::string html = RenderHtml(in);
  for (const char* pattern :
       {R"(^<!DOCTYPE html>$)", R"(^<title>rooftune report</title>$)",
        R"(^<h1>rooftune report</h1>$)", R"(<strong>Test &lt;CPU&gt; &amp; co</strong>)",
        R"(^<h2 id="ceilings">Ceilings</h2>$)",
        R"(<tr><td>f32 GFLOP/s \(AVX2 fma\)</td><td>96\.0</td></tr>)",
        R"(<th colspan=)"
        "|"
        R"(<th class="group">1T</th>)",
        R"(<td><code>KC=256</code></td>)", R"(<svg role="img" aria-label="Hierarchical roofline)",
        R"(<li>sysfs L3 32\.0 MiB: nearest measured step 2\.0 MiB.*DISAGREES)",
        R"(<em>Attainment</em> is the roofline bound)", R"(^</html>$)"}) {
    EXPECT_TRUE(std::regex_search(html, std::regex(pattern, std::regex::multiline)))
        << pattern << "\n"
        << html;
  }
  EXPECT_EQ(html.find("**"), std::string::npos);
  EXPECT_EQ(html.find("Test <CPU>"), std::string::npos);
  // Self-contained: nothing for the browser to fetch.
  EXPECT_EQ(html.find("<img"), std::string::npos) << html;
  EXPECT_EQ(html.find("src="), std::string::npos) << html;
  EXPECT_EQ(html.find("<link"), std::string::npos) << html;
}

TEST(Document, InlineMarksBecomeTagsAndTheRestIsEscaped) {
  EXPECT_EQ(InlineHtml("a `x<y` **b** *c* & \"d\""),
            "a <code>x&lt;y</code> <strong>b</strong> <em>c</em> &amp; &quot;d&quot;");
  EXPECT_EQ(InlineHtml("`a*b*`"), "<code>a*b*</code>");  // no emphasis inside code
  EXPECT_EQ(InlineHtml("*open"), "*open");               // a mark with none to close it is text
  EXPECT_EQ(InlineHtml("18.0*"), "18.0*");               // a ceiling's "raised" mark
  EXPECT_EQ(InlineHtml("`*` raised, `x"), "<code>*</code> raised, `x");
  Document doc;
  doc.Heading(2, "T").Table({"a", "b"}, {{"1", "2"}}).List({"x", "y"}).Image("pic", "p.svg");
  EXPECT_EQ(ToMarkdown(doc),
            "## T\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n- x\n- y\n\n![pic](p.svg)\n");
}

TEST(Report, JsonCarriesTheSchemaVersionAndEveryResult) {
  const nlohmann::json j = RenderJson(Input());
  EXPECT_EQ(j["schema_version"], kReportSchemaVersion);
  ASSERT_EQ(j["results"].size(), 2u);
  EXPECT_EQ(j["results"][1]["verdict"], "impossible");
  EXPECT_EQ(j["results"][1]["cache"], "cold");
  EXPECT_EQ(j["machine"]["cpu_model"], "Test CPU");
  // Both attainments, and which one the verdict used.
  EXPECT_EQ(j["results"][0]["attainment_basis"], "paired");
  EXPECT_EQ(j["results"][0]["profile_attainment"], 1.31);
  EXPECT_EQ(j["results"][0]["paired_attainment"]["low"], 0.85);
  EXPECT_EQ(j["results"][0]["paired_attainment"]["pairs"], 21);
  EXPECT_EQ(j["results"][0]["impossible_above"], 1.05);
  EXPECT_EQ(j["results"][1]["attainment_basis"], "profile");
  EXPECT_TRUE(j["results"][1]["paired_attainment"].is_null());
}

// A stored `--threads auto` choice is listed under the results, in Markdown and JSON; a report
// without one has no such section.
TEST(Report, ListsTheThreadCountsTuneChose) {
  ReportInput in = Input();
  EXPECT_EQ(RenderMarkdown(in).find("Thread counts chosen"), std::string::npos);
  EXPECT_EQ(RenderJson(in)["thread_choices"].size(), 0u);
  in.thread_choices.push_back({in.profile.Fingerprint(), "gemv_f32", "gemv 4096x4096 f32 none", 2,
                               1, 0.05, "2026-12-06T03:00:00Z"});
  const std::string md = RenderMarkdown(in);
  EXPECT_NE(md.find("### Thread counts chosen"), std::string::npos) << md;
  EXPECT_NE(md.find("| gemv_f32 | gemv 4096x4096 f32 none | 2 | 1 | 5% | 2026-12-06T03:00:00Z |"),
            std::string::npos)
      << md;
  const nlohmann::json j = RenderJson(in)["thread_choices"];
  ASSERT_EQ(j.size(), 1u);
  EXPECT_EQ(j[0]["offered"], 2);
  EXPECT_EQ(j[0]["threads"], 1);
  EXPECT_EQ(j[0]["workload"], "gemv 4096x4096 f32 none");
}

// A row that has no verdict (its kernel was not loaded to judge it again) shows no attainment:
// 0.00 would read as a measured figure.
TEST(Report, ARowWithoutAVerdictShowsNoAttainment) {
  ReportInput in = Input();
  in.results[0].verdict.reset();
  in.results[0].binding.clear();
  in.results[0].attainment = 0;
  const std::string md = RenderMarkdown(in);
  EXPECT_TRUE(std::regex_search(
      md,
      std::regex(R"(^\| \[1\]\(#result-1\) \| gemm_f32 \| .* \| – \|  \| not judged \| 1\.25x \|$)",
                 std::regex::multiline)))
      << md;
  EXPECT_TRUE(RenderJson(in)["results"][0]["attainment"].is_null());
  EXPECT_EQ(RenderJson(in)["results"][1]["attainment"], 1.5);
}

// A baseline without tunables has no config to quote; JSON keeps the empty string.
TEST(Report, AKernelWithoutParametersSaysSo) {
  ReportInput in = Input();
  in.results[0].kernel = "onednn_gemm_f32", in.results[0].config.clear();
  const std::string md = RenderMarkdown(in);
  EXPECT_NE(md.find("| [1](#result-1) | onednn_gemm_f32 | gemm 256x256x256 f32 none | 1 | warm | "
                    "(no parameters) |"),
            std::string::npos)
      << md;
  EXPECT_EQ(md.find("``"), std::string::npos) << md;
  EXPECT_EQ(RenderJson(in)["results"][0]["config"], "");
}

TEST(Report, ProfileTextAndPictures) {
  ReportInput in = Input();
  const std::string text = RenderProfileText(in.profile);
  EXPECT_TRUE(std::regex_search(text, std::regex(R"(f32\s+1\s+96\.0 GFLOP/s\s+32\.0\s+100%)")))
      << text;
  EXPECT_EQ(text.find("NUMA"), std::string::npos) << text;  // one node: nothing to say
  in.profile.cpu_nodes = {0, 1};
  EXPECT_NE(RenderProfileText(in.profile).find("2 CPUs, 1 cores, 2 NUMA nodes"), std::string::npos);
  // A split call's cost where the probe measured it; nothing said where it did not.
  EXPECT_EQ(text.find("split    "), std::string::npos) << text;
  in.profile.parallel_calls = {{2, 3.04e-6}};
  EXPECT_NE(RenderProfileText(in.profile)
                .find("split    a call over 2 threads costs 3.0 us beyond its work (waking and "
                      "joining them)\n"),
            std::string::npos);
  const std::string latency = LatencySvg(in.profile);
  EXPECT_EQ(latency.rfind("<svg", 0), 0u);
  EXPECT_NE(latency.find("</svg>"), std::string::npos);
  EXPECT_NE(latency.find("cache 32K"), std::string::npos) << latency;
  PlacedResult point;
  point.number = 1, point.label = "gemm_f32 256x256x256 1T", point.ops_per_second = 80e9;
  point.levels = {{MemoryLevel::kDram, 1, 14e9, 0, 40}};
  const std::string roofline = RooflineSvg(in.profile, {point});
  EXPECT_NE(roofline.find("DRAM 14 GB/s"), std::string::npos);
  EXPECT_NE(roofline.find("<title>#1 gemm_f32 256x256x256 1T: 80.0 GFLOP/s"), std::string::npos)
      << roofline;
  EXPECT_NE(roofline.find("</svg>"), std::string::npos);
}

PlacedResult At(int threads, double intensity, double rate) {
  PlacedResult p;
  p.number = threads, p.label = absl::StrCat("a ", threads, "T"), p.threads = threads;
  p.ops_per_second = rate, p.judged = true, p.binding_level = MemoryLevel::kDram;
  p.levels = {{MemoryLevel::kDram, 1, 14e9, 0, intensity}};
  return p;
}

// Only the thread counts the results ran at are drawn, not every count the probe measured.
TEST(Report, RooflineDrawsTheCeilingsOfThePointsThreadCounts) {
  ReportInput in = Input();
  for (int threads : {2, 4, 8}) {
    in.profile.ceilings.push_back({Ceiling::Kind::kBandwidth, Dtype::kF32, MemoryLevel::kDram,
                                   threads, 14e9 + threads * 1e9, "read"});
    in.profile.ceilings.push_back({Ceiling::Kind::kCompute, Dtype::kF32, MemoryLevel::kDram,
                                   threads, 96e9 * threads, "AVX2 fma"});
  }
  const std::string svg = RooflineSvg(in.profile, {At(1, 4, 40e9), At(8, 4, 80e9)});
  EXPECT_NE(svg.find("DRAM 14 GB/s (1T)"), std::string::npos) << svg;
  EXPECT_NE(svg.find("DRAM 22 GB/s (8T)"), std::string::npos) << svg;
  EXPECT_NE(svg.find("f32 8T 768"), std::string::npos) << svg;
  for (const char* absent : {"(2T)", "(4T)", "f32 2T", "f32 4T"}) {
    EXPECT_EQ(svg.find(absent), std::string::npos) << absent;
  }
  // A count the probe skipped is drawn as the verdicts price it: 6 threads from 4 and 8.
  const std::string six = RooflineSvg(in.profile, {At(6, 4, 80e9)});
  EXPECT_NE(six.find("DRAM 22 GB/s (6T)"), std::string::npos) << six;  // the 8-thread figure
  EXPECT_NE(six.find("f32 6T 576"), std::string::npos) << six;  // 6 x 1 thread = 6/4 x 4 threads
}

// s8 weights converted to f32 are drawn under the roof they are priced at: their own loop where
// the probe measured one, else the FMA.
TEST(Report, RooflineDrawsTheRoofAResultIsPricedAt) {
  ReportInput in = Input();
  PlacedResult s8 = At(1, 2, 20e9);
  s8.dtype = Dtype::kS8F32;
  EXPECT_NE(RooflineSvg(in.profile, {s8}).find("f32 1T 96"), std::string::npos);
  in.profile.ceilings.push_back(
      {Ceiling::Kind::kCompute, Dtype::kS8F32, MemoryLevel::kDram, 1, 30e9, "s8 widen"});
  const std::string svg = RooflineSvg(in.profile, {s8});
  EXPECT_NE(svg.find("s8f32 1T 30"), std::string::npos) << svg;
  EXPECT_EQ(svg.find("f32 1T 96"), std::string::npos) << svg;
}

TEST(Report, CacheFindingsNameTwoStepsOfOneCache) {
  MachineProfile p = Input().profile;
  auto mentions_two_stages = [](const std::vector<std::string>& lines) {
    for (const std::string& l : lines) {
      if (l.find("one cache missing in two stages") != std::string::npos) return true;
    }
    return false;
  };
  EXPECT_FALSE(mentions_two_stages(CacheFindings(p)));  // 32 KiB and 2 MiB: two levels
  p.measured_levels.push_back(
      {2.6 * (1 << 20), 2.5 * (1 << 20), 2.7 * (1 << 20), 40, LevelKind::kCache});
  EXPECT_TRUE(mentions_two_stages(CacheFindings(p)));

  // More than an octave apart, but both inside the 2 MiB L2 the OS reports.
  MachineProfile vm = Input().profile;
  vm.caches = {{1, "Data", 48 << 10, 12, 64, 1},
               {2, "Unified", 2 << 20, 16, 64, 1},
               {3, "Unified", 480u << 20, 15, 64, 2}};
  vm.measured_levels = {
      {46 << 10, 46 << 10, 46 << 10, 1.3, LevelKind::kCache},
      {836 << 10, 836 << 10, 836 << 10, 4.8, LevelKind::kCache},
      {1.71 * (1 << 20), 1.71 * (1 << 20), 1.71 * (1 << 20), 14.9, LevelKind::kCache},
      {15.8 * (1 << 20), 15.8 * (1 << 20), 15.8 * (1 << 20), 45.8, LevelKind::kCache}};
  bool named = false;
  for (const std::string& l : CacheFindings(vm)) {
    named |= l.find("steps at 836 KiB and 1.7 MiB both lie inside one cache the OS reports") !=
             std::string::npos;
  }
  EXPECT_TRUE(named);
}

TEST(Report, CacheFindingsSayAStepWithinMemoryIsNoCache) {
  MachineProfile p = Input().profile;
  p.memory_latency_ns = 252.4;
  p.measured_levels.push_back(
      {47.9 * (1 << 20), 40 << 20, 56 << 20, 163.7, LevelKind::kCacheOnHugePages});
  p.measured_levels.push_back({87.9 * (1 << 20), 50 << 20, 150 << 20, 206.1, LevelKind::kTlb});
  std::string line;
  for (const std::string& l : CacheFindings(p)) {
    if (l.find("within memory") != std::string::npos) line = l;
  }
  EXPECT_NE(line.find("step at 47.9 MiB (40.0 MiB - 56.0 MiB): a hit there costs 163.7 ns, half "
                      "of memory's 252.4"),
            std::string::npos)
      << line;
  for (const std::string& l : CacheFindings(p)) {
    EXPECT_EQ(l.find("last cache step is at 47.9 MiB"), std::string::npos) << l;
    EXPECT_EQ(l.find("step at 47.9 MiB seen on huge pages only"), std::string::npos) << l;
  }
}

TEST(Report, CacheFindingsGiveBothReasonsAStepVanishesOnHugePages) {
  MachineProfile p = Input().profile;
  p.measured_levels.push_back({1 << 20, 0.9 * (1 << 20), 1.1 * (1 << 20), 5, LevelKind::kTlb});
  std::string tlb_line;
  for (const std::string& l : CacheFindings(p)) {
    if (l.find("vanishes on huge pages") != std::string::npos) tlb_line = l;
  }
  EXPECT_NE(tlb_line.find("1.0 MiB"), std::string::npos) << tlb_line;
  EXPECT_NE(tlb_line.find("TLB reach"), std::string::npos) << tlb_line;
  EXPECT_NE(tlb_line.find("unevenly"), std::string::npos) << tlb_line;
}

}  // namespace
}  // namespace rooftune::reports

namespace rooftune::reports {
namespace {

// The "what if" section: each predicted pass a row, in Markdown and JSON.
TEST(Report, WhatIfPredictsTheDefaultMlp) {
  ReportInput in;
  in.profile = fixtures::RoundMachine();
  in.profile.cpu_model = "Test CPU";
  const MlpSpec mlp{{4096, 4096, 4096, 4096}, Dtype::kF32, 1, 10};
  absl::StatusOr<PassPrediction> pass = PredictMlp(mlp, 1, in.profile, {});
  ASSERT_TRUE(pass.ok());
  in.what_if.push_back({mlp, *pass});
  const std::string md = RenderMarkdown(in);
  EXPECT_NE(md.find("## What if: an MLP on this machine"), std::string::npos) << md;
  EXPECT_NE(md.find("| 1 | 1 | " + FormatSeconds(pass->predicted_seconds) + " | " +
                    FormatSeconds(pass->bound_seconds) + " | bound only (no tuned row) |"),
            std::string::npos)
      << md;
  const nlohmann::json j = RenderJson(in);
  ASSERT_EQ(j["what_if"].size(), 1u);
  EXPECT_EQ(j["what_if"][0]["batch"], 1);
  EXPECT_DOUBLE_EQ(j["what_if"][0]["predicted_seconds"].get<double>(), pass->predicted_seconds);
  EXPECT_EQ(RenderJson(ReportInput{})["what_if"].size(), 0u);
  EXPECT_EQ(RenderMarkdown(ReportInput{}).find("What if"), std::string::npos);
}

}  // namespace
}  // namespace rooftune::reports
