#include "reports/document.h"

#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace rooftune::reports {

Document& Document::Heading(int level, std::string text, std::string anchor) {
  return Add({.kind = Block::Kind::kHeading,
              .level = level,
              .text = std::move(text),
              .anchor = std::move(anchor)});
}

Document& Document::Paragraph(std::string text) {
  return Add({.kind = Block::Kind::kParagraph, .text = std::move(text)});
}

Document& Document::Table(std::vector<std::string> header,
                          std::vector<std::vector<std::string>> rows) {
  return GroupedTable({}, std::move(header), std::move(rows), {});
}

Document& Document::GroupedTable(std::vector<std::pair<std::string, int>> groups,
                                 std::vector<std::string> header,
                                 std::vector<std::vector<std::string>> rows,
                                 std::vector<std::vector<int>> spans) {
  return Add({.kind = Block::Kind::kTable,
              .header = std::move(header),
              .rows = std::move(rows),
              .groups = std::move(groups),
              .spans = std::move(spans)});
}

Document& Document::Image(std::string description, std::string source, std::string svg,
                          std::vector<std::string> key_header,
                          std::vector<std::vector<std::string>> key_rows) {
  return Add({.kind = Block::Kind::kImage,
              .text = std::move(description),
              .source = std::move(source),
              .svg = std::move(svg),
              .header = std::move(key_header),
              .rows = std::move(key_rows)});
}

Document& Document::List(std::vector<std::string> items) {
  return Add({.kind = Block::Kind::kList, .items = std::move(items)});
}

Document& Document::Add(Block block) {
  blocks_.push_back(std::move(block));
  return *this;
}

std::vector<std::string> Document::Block::FlatHeader() const {
  std::vector<std::string> flat = header;
  size_t column = 0;
  for (const auto& [name, width] : groups) {
    for (int i = 0; i < width && column < flat.size(); ++i, ++column) {
      if (!name.empty()) flat[column] = absl::StrCat(name, " ", flat[column]);
    }
  }
  return flat;
}

std::vector<std::vector<std::string>> Document::Block::FlatRows() const {
  std::vector<std::vector<std::string>> flat;
  for (size_t r = 0; r < rows.size(); ++r) {
    std::vector<std::string> row;
    for (size_t c = 0; c < rows[r].size(); ++c) {
      row.push_back(rows[r][c]);
      const int span = r < spans.size() && c < spans[r].size() ? spans[r][c] : 1;
      for (int i = 1; i < span; ++i) row.push_back("");
    }
    flat.push_back(std::move(row));
  }
  return flat;
}

std::optional<InlineLink> InlineLinkAt(const std::string& text, size_t i) {
  if (text[i] != '[') return std::nullopt;
  const size_t close = text.find("](", i);
  if (close == std::string::npos) return std::nullopt;
  const size_t end = text.find(')', close + 2);
  if (end == std::string::npos || text.find('[', i + 1) < close) return std::nullopt;
  return InlineLink{text.substr(i + 1, close - i - 1), text.substr(close + 2, end - close - 2),
                    end + 1};
}

std::string_view InlineMarkAt(const std::string& text, size_t i, const OpenMarks& open) {
  auto closed_after = [&](std::string_view mark) {
    return text.find(mark, i + mark.size()) != std::string::npos;
  };
  const char c = text[i];
  if (c == '`') return open.code || closed_after("`") ? "`" : "";
  if (open.code || c != '*') return "";
  if (i + 1 < text.size() && text[i + 1] == '*')
    return open.strong || closed_after("**") ? "**" : "";
  return open.em || closed_after("*") ? "*" : "";
}

namespace {

std::string MarkdownTable(const std::vector<std::string>& header,
                          const std::vector<std::vector<std::string>>& rows) {
  std::string out = absl::StrCat("| ", absl::StrJoin(header, " | "), " |\n|");
  for (size_t i = 0; i < header.size(); ++i) absl::StrAppend(&out, "---|");
  absl::StrAppend(&out, "\n");
  for (const auto& row : rows) absl::StrAppend(&out, "| ", absl::StrJoin(row, " | "), " |\n");
  return out;
}

}  // namespace

std::string ToMarkdown(const Document& document) {
  std::vector<std::string> blocks;
  for (const Document::Block& b : document.blocks()) {
    std::string out;
    switch (b.kind) {
      case Document::Block::Kind::kHeading:
        if (!b.anchor.empty()) absl::StrAppend(&out, "<a id=\"", b.anchor, "\"></a>\n\n");
        absl::StrAppend(&out, std::string(b.level, '#'), " ", b.text, "\n");
        break;
      case Document::Block::Kind::kParagraph: out = absl::StrCat(b.text, "\n"); break;
      case Document::Block::Kind::kTable:
        // Pipe tables cannot span columns: a grouped table is written as HTML, which Markdown
        // renderers show as a table.
        out = b.groups.empty() ? MarkdownTable(b.header, b.rows) : HtmlTable(b);
        break;
      case Document::Block::Kind::kImage:
        if (b.source.empty()) continue;  // a picture only the page embeds
        out = absl::StrCat("![", b.text, "](", b.source, ")\n");
        if (!b.header.empty()) absl::StrAppend(&out, "\n", MarkdownTable(b.header, b.rows));
        break;
      case Document::Block::Kind::kList:
        for (const std::string& item : b.items) absl::StrAppend(&out, "- ", item, "\n");
        break;
    }
    blocks.push_back(std::move(out));
  }
  return absl::StrJoin(blocks, "\n");
}

}  // namespace rooftune::reports
