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

// The matrix's columns: the thread counts measured, ascending, and the access kinds under each,
// in the order read, write, copy, triad.
struct Columns {
  std::vector<int> threads;
  std::vector<std::string> kinds;
  int width() const { return std::max<int>(1, int(kinds.size())); }
};

Columns ColumnsOf(const MachineProfile& p) {
  Columns cols;
  for (const Ceiling& c : p.ceilings) {
    if (std::find(cols.threads.begin(), cols.threads.end(), c.threads) == cols.threads.end()) {
      cols.threads.push_back(c.threads);
    }
    if (c.kind == Ceiling::Kind::kBandwidth &&
        std::find(cols.kinds.begin(), cols.kinds.end(), c.source) == cols.kinds.end()) {
      cols.kinds.push_back(c.source);
    }
  }
  std::sort(cols.threads.begin(), cols.threads.end());
  static const std::vector<std::string> kOrder = {"read", "write", "copy", "triad"};
  auto rank = [&](const std::string& kind) {
    return size_t(std::find(kOrder.begin(), kOrder.end(), kind) - kOrder.begin());
  };
  std::stable_sort(cols.kinds.begin(), cols.kinds.end(),
                   [&](const std::string& a, const std::string& b) { return rank(a) < rank(b); });
  return cols;
}

struct Rows {
  std::vector<std::vector<std::string>> cells;
  std::vector<std::vector<int>> spans;
  std::set<std::string> marks_used;
};

// Bandwidth: one row per level, GB/s under each kind.
void AddBandwidthRows(const MachineProfile& p, const Columns& cols, Rows& rows) {
  for (int level = 0; level < kNumMemoryLevels; ++level) {
    std::vector<std::string> row = {absl::StrCat(ToString(MemoryLevel(level)), " GB/s")};
    bool any = false;
    for (int t : cols.threads) {
      for (const std::string& kind : cols.kinds) {
        const Ceiling* c = p.FindBandwidth(MemoryLevel(level), t, kind);
        row.push_back(c == nullptr ? "–" : Cell(*c, rows.marks_used));
        any |= c != nullptr;
      }
    }
    if (!any) continue;
    rows.cells.push_back(std::move(row));
    rows.spans.push_back({});
  }
}

// Compute: one row per dtype and path (int8 may have a vector and an AMX one), the rate spanning
// its thread count's kinds.
void AddComputeRows(const MachineProfile& p, const Columns& cols, Rows& rows) {
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
    for (int t : cols.threads) {
      auto it = compute[key].find(t);
      row.push_back(it == compute[key].end() ? "–" : Cell(*it->second, rows.marks_used));
      span.push_back(cols.width());
    }
    rows.cells.push_back(std::move(row));
    rows.spans.push_back(std::move(span));
  }
}

}  // namespace

void AddCeilingMatrix(const MachineProfile& p, Document& doc) {
  const Columns cols = ColumnsOf(p);
  if (cols.threads.empty()) {
    doc.Heading(2, "Ceilings", "ceilings").Paragraph("No ceilings measured: run `rooftune probe`.");
    return;
  }
  std::vector<std::pair<std::string, int>> groups = {{"", 1}};
  std::vector<std::string> header = {"ceiling"};
  for (int t : cols.threads) {
    groups.push_back({absl::StrCat(t, "T"), cols.width()});
    if (cols.kinds.empty()) header.push_back("compute");
    for (const std::string& kind : cols.kinds) header.push_back(kind);
  }
  Rows rows;
  AddBandwidthRows(p, cols, rows);
  AddComputeRows(p, cols, rows);
  doc.Heading(2, "Ceilings", "ceilings")
      .GroupedTable(std::move(groups), std::move(header), std::move(rows.cells),
                    std::move(rows.spans));
  std::string legend =
      "Bandwidth per memory level and access kind, compute per dtype and instruction path, at each "
      "thread count the probe measured (a count between is priced from its neighbours). Traffic "
      "models count lines filled, so verdicts price bytes at the *read* figure.";
  for (const Mark& m : kMarks) {
    if (rows.marks_used.count(m.symbol))
      absl::StrAppend(&legend, " `", m.symbol, "` ", m.meaning, ".");
  }
  doc.Paragraph(legend);
}

}  // namespace rooftune::reports
