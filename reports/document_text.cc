// The report for a terminal: paragraphs wrapped to its width, tables as grids when they fit and
// one record per row when they do not.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "reports/document.h"

namespace rooftune::reports {
namespace {

// Inline marks as a terminal shows them: the marks dropped (what they mark kept), a link its text.
std::string PlainText(const std::string& text) {
  std::string out;
  OpenMarks open;
  for (size_t i = 0; i < text.size(); ++i) {
    const std::string_view mark = InlineMarkAt(text, i, open);
    if (!mark.empty()) {
      bool& state = mark == "`" ? open.code : mark == "**" ? open.strong : open.em;
      state = !state;
      i += mark.size() - 1;
      continue;
    }
    if (std::optional<InlineLink> link = open.code ? std::nullopt : InlineLinkAt(text, i)) {
      absl::StrAppend(&out, PlainText(link->text));
      i = link->end - 1;
      continue;
    }
    out += text[i];
  }
  return out;
}

// Columns as a terminal counts them: UTF-8 continuation bytes take none.
size_t Columns(const std::string& text) {
  return size_t(std::count_if(text.begin(), text.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  }));
}

// Words filled into lines of at most `width` columns, each line after the first indented by
// `indent`; a word longer than a line stands on its own.
std::string Wrap(const std::string& text, size_t width, const std::string& first,
                 const std::string& indent) {
  std::string out = first, line;
  size_t used = Columns(first);
  for (absl::string_view word : absl::StrSplit(text, ' ', absl::SkipEmpty())) {
    const size_t w = Columns(std::string(word));
    if (!line.empty() && used + 1 + w > width) {
      absl::StrAppend(&out, line, "\n");
      line.clear();
      used = Columns(indent);
      out += indent;
    }
    if (!line.empty()) line += ' ', ++used;
    absl::StrAppend(&line, word);
    used += w;
  }
  return absl::StrCat(out, line, "\n");
}

// A table block (or a picture's key) for the terminal. As a grid when it fits `width`: the group
// names on a line of their own over their columns, a spanning cell written in its first column.
// Else one record per row, each non-empty cell on its own line named by its column ("1T read:"),
// or by its group alone where it spans the group ("1T:").
std::string TextTable(const Document::Block& table, size_t width) {
  const std::vector<std::string> header = table.FlatHeader();
  const std::vector<std::vector<std::string>> rows = table.FlatRows();
  // Each flat column's group, and for each row which flat columns start a spanning cell.
  std::vector<std::string> group_of(header.size());
  for (size_t column = 0, g = 0; g < table.groups.size(); ++g) {
    for (int i = 0; i < table.groups[g].second && column < header.size(); ++i) {
      group_of[column++] = table.groups[g].first;
    }
  }
  auto spans_group = [&](size_t r, size_t flat_column) {
    if (r >= table.spans.size()) return false;
    for (size_t c = 0, at = 0; c < table.spans[r].size(); at += size_t(table.spans[r][c]), ++c) {
      if (at == flat_column) return table.spans[r][c] > 1;
    }
    return false;
  };
  std::vector<size_t> widths(header.size(), 0);
  for (size_t c = 0; c < header.size(); ++c) {
    widths[c] = Columns(group_of[c].empty() ? header[c] : table.header[c]);
  }
  std::vector<std::vector<std::string>> plain;
  for (const auto& row : rows) {
    std::vector<std::string> cells;
    for (size_t c = 0; c < row.size() && c < header.size(); ++c) {
      cells.push_back(PlainText(row[c]));
      widths[c] = std::max(widths[c], Columns(cells.back()));
    }
    plain.push_back(std::move(cells));
  }
  size_t total = 0;
  for (size_t w : widths) total += w + 2;
  std::string out;
  if (total <= width + 2) {
    auto line = [&](const std::vector<std::string>& cells) {
      std::string text;
      for (size_t c = 0; c < cells.size(); ++c) {
        const std::string pad(widths[c] - std::min(widths[c], Columns(cells[c])), ' ');
        absl::StrAppend(&text, c == 0 ? "" : "  ", cells[c], pad);
      }
      text.erase(text.find_last_not_of(' ') + 1);  // empty cells at the end leave no blanks
      return text + "\n";
    };
    if (!table.groups.empty()) {
      // The group names over their columns: each padded to the width its columns take.
      std::string groups;
      size_t column = 0;
      for (const auto& [name, span] : table.groups) {
        size_t span_width = 0;
        for (int i = 0; i < span && column < widths.size(); ++i) span_width += widths[column++] + 2;
        const std::string label = name.substr(0, span_width > 2 ? span_width - 2 : 0);
        absl::StrAppend(&groups, label, std::string(span_width - Columns(label), ' '));
      }
      groups.erase(groups.find_last_not_of(' ') + 1);
      out = groups + "\n" + line(table.header);
    } else {
      out = line(header);
    }
    std::vector<std::string> rule;
    for (size_t w : widths) rule.push_back(std::string(w, '-'));
    out += line(rule);
    for (const auto& cells : plain) out += line(cells);
    return out;
  }
  size_t label = 0;
  for (size_t c = 0; c < header.size(); ++c) {
    label = std::max(label, Columns(header[c]));
  }
  for (size_t r = 0; r < plain.size(); ++r) {
    if (r > 0) out += "\n";
    for (size_t c = 0; c < plain[r].size(); ++c) {
      if (plain[r][c].empty()) continue;
      const std::string& named = spans_group(r, c) ? group_of[c] : header[c];
      const std::string name =
          absl::StrCat(named, ":", std::string(label - Columns(named) + 1, ' '));
      out += Wrap(plain[r][c], width, name, std::string(label + 2, ' '));
    }
  }
  return out;
}

}  // namespace

std::string ToText(const Document& document, int width) {
  const size_t columns = size_t(std::max(width, 20));
  std::vector<std::string> blocks;
  for (const Document::Block& b : document.blocks()) {
    std::string out;
    switch (b.kind) {
      case Document::Block::Kind::kHeading: {
        const std::string text = PlainText(b.text);
        out = absl::StrCat(text, "\n",
                           std::string(std::min(Columns(text), columns), b.level <= 1 ? '=' : '-'),
                           "\n");
        break;
      }
      case Document::Block::Kind::kParagraph: out = Wrap(PlainText(b.text), columns, "", ""); break;
      case Document::Block::Kind::kTable: out = TextTable(b, columns); break;
      case Document::Block::Kind::kImage:
        if (b.header.empty()) continue;  // a terminal shows no picture, but its key
        out = TextTable(b, columns);
        break;
      case Document::Block::Kind::kList:
        for (const std::string& item : b.items) out += Wrap(PlainText(item), columns, "- ", "  ");
        break;
    }
    blocks.push_back(std::move(out));
  }
  return absl::StrJoin(blocks, "\n");
}

}  // namespace rooftune::reports
