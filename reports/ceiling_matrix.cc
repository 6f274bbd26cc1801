#include "reports/ceiling_matrix.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "framework/workload.h"

namespace rooftune::reports {
namespace {

// A ceiling's marks, in the order the legend lists them.
struct Mark {
  const char* symbol;
  const char* meaning;
  bool (*applies)(const Ceiling&);
};
const Mark kMarks[] = {
    {"*", "raised to what another thread count measured (a ceiling is an upper bound)",
     [](const Ceiling& c) { return c.Raised(); }},
    {"~", "doubted by the probe's self-checks and measured again",
     [](const Ceiling& c) { return c.MeasuredAgain() && !c.Unstable(); }},
    {"!", "unstable: still doubted after the retries",
     [](const Ceiling& c) { return c.Unstable(); }},
    {"^", "kept from an earlier probe that measured it higher",
     [](const Ceiling& c) { return absl::StrContains(c.note, Ceiling::kKeptNote); }},
};

// The figure and its marks: "412.3*".
std::string Cell(const Ceiling& c, std::set<std::string>& used) {
  std::string cell = absl::StrFormat("%.1f", c.per_second / 1e9);
  for (const Mark& m : kMarks) {
    if (m.applies(c)) {
      cell += m.symbol;
      used.insert(m.symbol);
    }
  }
  return cell;
}

}  // namespace

void AddCeilingMatrix(const MachineProfile& p, Document& doc) {
  std::vector<int> threads;
  std::vector<std::string> kinds;  // access kinds, in the order read, write, copy, triad
  for (const Ceiling& c : p.ceilings) {
    if (std::find(threads.begin(), threads.end(), c.threads) == threads.end()) {
      threads.push_back(c.threads);
    }
    if (c.kind == Ceiling::Kind::kBandwidth &&
        std::find(kinds.begin(), kinds.end(), c.source) == kinds.end()) {
      kinds.push_back(c.source);
    }
  }
  if (threads.empty()) {
    doc.Heading(2, "Ceilings", "ceilings").Paragraph("No ceilings measured: run `rooftune probe`.");
    return;
  }
  std::sort(threads.begin(), threads.end());
  static const std::vector<std::string> kOrder = {"read", "write", "copy", "triad"};
  auto rank = [&](const std::string& kind) {
    return size_t(std::find(kOrder.begin(), kOrder.end(), kind) - kOrder.begin());
  };
  std::stable_sort(kinds.begin(), kinds.end(),
                   [&](const std::string& a, const std::string& b) { return rank(a) < rank(b); });
  const int width = std::max<int>(1, int(kinds.size()));

  std::vector<std::pair<std::string, int>> groups = {{"", 1}};
  std::vector<std::string> header = {"ceiling"};
  for (int t : threads) {
    groups.push_back({absl::StrCat(t, "T"), width});
    if (kinds.empty()) header.push_back("compute");
    for (const std::string& kind : kinds) header.push_back(kind);
  }
  std::vector<std::vector<std::string>> rows;
  std::vector<std::vector<int>> spans;
  std::set<std::string> used;
  // Bandwidth: one row per level, GB/s under each kind.
  for (int level = 0; level < kNumMemoryLevels; ++level) {
    std::vector<std::string> row = {absl::StrCat(ToString(MemoryLevel(level)), " GB/s")};
    bool any = false;
    for (int t : threads) {
      for (const std::string& kind : kinds) {
        const Ceiling* c = p.FindBandwidth(MemoryLevel(level), t, kind);
        row.push_back(c == nullptr ? "–" : Cell(*c, used));
        any |= c != nullptr;
      }
    }
    if (!any) continue;
    rows.push_back(std::move(row));
    spans.push_back({});
  }
  // Compute: one row per dtype and path (int8 may have a vector and an AMX one), the rate
  // spanning its thread count's kinds.
  std::map<std::pair<int, std::string>, std::map<int, const Ceiling*>> compute;
  std::vector<std::pair<int, std::string>> order;
  for (const Ceiling& c : p.ceilings) {
    if (c.kind != Ceiling::Kind::kCompute) continue;
    const std::pair<int, std::string> key{int(c.dtype), c.source};
    if (!compute.count(key)) order.push_back(key);
    compute[key][c.threads] = &c;
  }
  for (const auto& key : order) {
    const Dtype dtype = Dtype(key.first);
    std::vector<std::string> row = {absl::StrCat(ToString(dtype), " ",
                                                 CountsIntegerOps(dtype) ? "GOP/s" : "GFLOP/s",
                                                 " (", key.second, ")")};
    std::vector<int> span = {1};
    for (int t : threads) {
      auto it = compute[key].find(t);
      row.push_back(it == compute[key].end() ? "–" : Cell(*it->second, used));
      span.push_back(width);
    }
    rows.push_back(std::move(row));
    spans.push_back(std::move(span));
  }
  doc.Heading(2, "Ceilings", "ceilings")
      .GroupedTable(std::move(groups), std::move(header), std::move(rows), std::move(spans));
  std::string legend =
      "Bandwidth per memory level and access kind, compute per dtype and instruction path, at each "
      "thread count the probe measured (a count between is priced from its neighbours). Traffic "
      "models count lines filled, so verdicts price bytes at the *read* figure.";
  for (const Mark& m : kMarks) {
    if (used.count(m.symbol)) absl::StrAppend(&legend, " `", m.symbol, "` ", m.meaning, ".");
  }
  doc.Paragraph(legend);
}

}  // namespace rooftune::reports
