// report.html in a real browser: headless Chromium (Debian's chromium, which scripts/setup.sh
// installs) loads the page with a checking script added, and the script reports what the
// renderer laid out: errors, anything fetched, each picture's size and every pair of text labels
// of one picture that overlap.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "nlohmann/json.hpp"
#include "reports/report.h"
#include "tests/report_inputs.h"

namespace rooftune::reports {
namespace {

namespace fs = std::filesystem;

// The first browser on PATH, or "".
std::string FindChromium() {
  for (const char* name : {"chromium", "chromium-browser", "google-chrome"}) {
    const std::string command = std::string("command -v ") + name + " >/dev/null 2>&1";
    if (std::system(command.c_str()) == 0) return name;
  }
  return "";
}

// Collects errors from the first moment (uncaught exceptions, console.error, failed loads).
constexpr char kErrorCatcher[] = R"(<script>
window.rooftuneErrors = [];
window.addEventListener('error', e => rooftuneErrors.push('error: ' + (e.message || e.target.outerHTML)), true);
console.error = (...a) => rooftuneErrors.push('console.error: ' + a.join(' '));
</script>
)";

// Runs once the page is parsed: what was fetched, each picture's box, and overlapping labels.
constexpr char kChecker[] = R"(<script>
const pictures = [...document.querySelectorAll('body svg')].map(svg => {
  const box = svg.getBoundingClientRect();
  const texts = [...svg.querySelectorAll('text')].map(t => {
    const b = t.getBoundingClientRect();
    return {text: t.textContent, x: b.left, y: b.top, w: b.width, h: b.height};
  });
  const overlaps = [];
  for (let i = 0; i < texts.length; ++i) {
    for (let j = i + 1; j < texts.length; ++j) {
      const a = texts[i], b = texts[j];
      if (a.w > 0 && b.w > 0 && a.x + 0.5 < b.x + b.w && b.x + 0.5 < a.x + a.w &&
          a.y + 0.5 < b.y + b.h && b.y + 0.5 < a.y + a.h) {
        overlaps.push(a.text + ' / ' + b.text);
      }
    }
  }
  return {label: svg.getAttribute('aria-label') || '', width: box.width, height: box.height,
          elements: svg.querySelectorAll('*').length, texts: texts.length, overlaps};
});
const out = document.createElement('pre');
out.id = 'rooftune-check';
out.textContent = JSON.stringify({errors: rooftuneErrors, fetched:
    performance.getEntriesByType('resource').map(r => r.name), pictures});
document.body.appendChild(out);
</script>
)";

struct Rendered {
  nlohmann::json check;
  std::string console;  // the browser's console lines, which a clean page leaves empty
};

// Loads `html` in headless Chromium and returns what the checking script found.
Rendered Render(const std::string& browser, const std::string& html, const fs::path& dir) {
  std::string page = html;
  page.insert(page.find("<head>") + 6, kErrorCatcher);
  page.insert(page.rfind("</body>"), kChecker);
  const fs::path file = dir / "report.html";
  std::ofstream(file) << page;
  const fs::path dom = dir / "dom.html", log = dir / "browser.log";
  const std::string command = "timeout 120 " + browser +
                              " --headless --no-sandbox --disable-gpu --no-first-run "
                              "--user-data-dir=" +
                              (dir / "profile").string() +
                              " --window-size=1400,1000 "
                              "--enable-logging=stderr --v=0 --dump-dom file://" +
                              file.string() + " >" + dom.string() + " 2>" + log.string();
  const int status = std::system(command.c_str());
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << command;
  std::stringstream dumped, logged;
  dumped << std::ifstream(dom).rdbuf();
  logged << std::ifstream(log).rdbuf();
  Rendered r;
  std::smatch m;
  const std::string text = dumped.str();
  if (std::regex_search(text, m, std::regex(R"re(<pre id="rooftune-check">([^<]*)</pre>)re"))) {
    // The DOM dump escapes &, < and > in text; the JSON has no markup of its own.
    std::string json = m[1];
    for (const auto& [from, to] : {std::pair<std::string, std::string>{"&lt;", "<"},
                                   {"&gt;", ">"},
                                   {"&quot;", "\""},
                                   {"&amp;", "&"}}) {
      for (size_t at = json.find(from); at != std::string::npos; at = json.find(from, at + 1)) {
        json.replace(at, from.size(), to);
      }
    }
    r.check = nlohmann::json::parse(json, nullptr, false);
  }
  for (std::string line; std::getline(logged, line);) {
    if (line.find(":CONSOLE") != std::string::npos) r.console += line + "\n";
  }
  return r;
}

// A report of sixty results (four kernel families: four roofline pictures), a latency curve
// with its levels, and each result's bars: every picture drawn, nothing fetched, no error, no
// two labels of a picture overlapping as Chromium lays them out.
TEST(ReportInBrowser, LoadsCleanlyWithEveryPictureAndNoOverlappingLabels) {
  const std::string browser = FindChromium();
  if (browser.empty()) {
    GTEST_SKIP() << "chromium is not installed (scripts/setup.sh installs Debian's chromium for "
                    "this test; install it to run it)";
  }
  ReportInput in = fixtures::ManyResults(60);
  MachineProfile& p = in.profile;
  p.measured_levels = {{32 << 10, 30 << 10, 34 << 10, 1.3, LevelKind::kCache},
                       {1 << 20, 900 << 10, 1200 << 10, 5, LevelKind::kCache},
                       {24 << 20, 20 << 20, 28 << 20, 30, LevelKind::kCache},
                       {2 << 20, 1800 << 10, 2200 << 10, 8, LevelKind::kTlb}};
  for (double bytes = 4096; bytes <= 512.0 * (1 << 20); bytes *= 2) {
    const double ns = bytes < 32e3 ? 1.3 : bytes < 1e6 ? 5 : bytes < 24e6 ? 30 : 90;
    p.latency_curve.push_back({bytes, ns});
    p.latency_curve_huge.push_back({bytes, ns * 0.9});
  }
  p.memory_latency_ns = 90;
  const fs::path dir = fs::temp_directory_path() / ("rooftune_browser_" + std::to_string(getpid()));
  fs::create_directories(dir);
  const Rendered r = Render(browser, RenderHtml(in), dir);
  ASSERT_TRUE(r.check.is_object()) << "the checking script did not report; see " << dir;
  EXPECT_EQ(r.check["errors"].size(), 0u) << r.check["errors"].dump(1);
  EXPECT_EQ(r.check["fetched"].size(), 0u) << "not self-contained: " << r.check["fetched"].dump(1);
  EXPECT_EQ(r.console, "");
  // The latency curve, four rooflines and sixty bar charts.
  const nlohmann::json& pictures = r.check["pictures"];
  EXPECT_EQ(pictures.size(), 1u + 4u + 60u);
  int rooflines = 0;
  for (const nlohmann::json& picture : pictures) {
    const std::string label = picture["label"];
    rooflines += label.rfind("Hierarchical roofline", 0) == 0;
    EXPECT_GT(picture["width"].get<double>(), 100) << label;
    EXPECT_GT(picture["height"].get<double>(), 50) << label;
    EXPECT_GT(picture["elements"].get<int>(), 5) << label;
    EXPECT_GT(picture["texts"].get<int>(), 3) << label;
    EXPECT_EQ(picture["overlaps"].size(), 0u) << label << ": " << picture["overlaps"].dump(1);
  }
  EXPECT_EQ(rooflines, 4);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace rooftune::reports
