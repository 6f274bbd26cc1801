#include "reports/document.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace rooftune::reports {

Document& Document::Heading(int level, std::string text, std::string anchor) {
  Block b{Block::Kind::kHeading, level, std::move(text), std::move(anchor)};
  blocks_.push_back(std::move(b));
  return *this;
}

Document& Document::Paragraph(std::string text) {
  Block b{Block::Kind::kParagraph, 0, std::move(text)};
  blocks_.push_back(std::move(b));
  return *this;
}

Document& Document::Table(std::vector<std::string> header,
                          std::vector<std::vector<std::string>> rows) {
  return GroupedTable({}, std::move(header), std::move(rows), {});
}

Document& Document::GroupedTable(std::vector<std::pair<std::string, int>> groups,
                                 std::vector<std::string> header,
                                 std::vector<std::vector<std::string>> rows,
                                 std::vector<std::vector<int>> spans) {
  Block b{Block::Kind::kTable};
  b.groups = std::move(groups);
  b.header = std::move(header);
  b.rows = std::move(rows);
  b.spans = std::move(spans);
  blocks_.push_back(std::move(b));
  return *this;
}

Document& Document::Image(std::string description, std::string source, std::string svg,
                          std::vector<std::string> key_header,
                          std::vector<std::vector<std::string>> key_rows) {
  Block b{Block::Kind::kImage, 0, std::move(description)};
  b.source = std::move(source);
  b.svg = std::move(svg);
  b.header = std::move(key_header);
  b.rows = std::move(key_rows);
  blocks_.push_back(std::move(b));
  return *this;
}

Document& Document::List(std::vector<std::string> items) {
  Block b{Block::Kind::kList};
  b.items = std::move(items);
  blocks_.push_back(std::move(b));
  return *this;
}

namespace {

// The table's header with each column named after its group ("1T read"), and its rows with every
// spanning cell followed by the empty cells it covers: the flat form Markdown and text print.
std::vector<std::string> FlatHeader(const Document::Block& b) {
  std::vector<std::string> header = b.header;
  size_t column = 0;
  for (const auto& [name, width] : b.groups) {
    for (int i = 0; i < width && column < header.size(); ++i, ++column) {
      if (!name.empty()) header[column] = absl::StrCat(name, " ", header[column]);
    }
  }
  return header;
}

std::vector<std::vector<std::string>> FlatRows(const Document::Block& b) {
  std::vector<std::vector<std::string>> rows;
  for (size_t r = 0; r < b.rows.size(); ++r) {
    std::vector<std::string> row;
    for (size_t c = 0; c < b.rows[r].size(); ++c) {
      row.push_back(b.rows[r][c]);
      const int span = r < b.spans.size() && c < b.spans[r].size() ? b.spans[r][c] : 1;
      for (int i = 1; i < span; ++i) row.push_back("");
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

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
      case Document::Block::Kind::kParagraph:
        out = absl::StrCat(b.text, "\n");
        break;
      case Document::Block::Kind::kTable:
        out = MarkdownTable(FlatHeader(b), FlatRows(b));
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

namespace {

void AppendEscaped(char c, std::string& out) {
  switch (c) {
    case '&': out += "&amp;"; break;
    case '<': out += "&lt;"; break;
    case '>': out += "&gt;"; break;
    case '"': out += "&quot;"; break;
    default: out += c;
  }
}

// A Markdown link "[text](target)" starting at text[i]: its text and target, and where it ends.
struct Link {
  std::string text, target;
  size_t end = 0;
};
std::optional<Link> LinkAt(const std::string& text, size_t i) {
  if (text[i] != '[') return std::nullopt;
  const size_t close = text.find("](", i);
  if (close == std::string::npos) return std::nullopt;
  const size_t end = text.find(')', close + 2);
  if (end == std::string::npos || text.find('[', i + 1) < close) return std::nullopt;
  return Link{text.substr(i + 1, close - i - 1), text.substr(close + 2, end - close - 2), end + 1};
}

}  // namespace

std::string EscapeHtml(const std::string& text) {
  std::string out;
  for (char c : text) AppendEscaped(c, out);
  return out;
}

std::string InlineHtml(const std::string& text) {
  std::string out;
  bool code = false, strong = false, em = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '`') {
      out += code ? "</code>" : "<code>";
      code = !code;
    } else if (!code && c == '*' && i + 1 < text.size() && text[i + 1] == '*') {
      out += strong ? "</strong>" : "<strong>";
      strong = !strong;
      ++i;
    } else if (!code && c == '*') {
      out += em ? "</em>" : "<em>";
      em = !em;
    } else if (std::optional<Link> link = code ? std::nullopt : LinkAt(text, i)) {
      absl::StrAppend(&out, "<a href=\"", EscapeHtml(link->target), "\">", InlineHtml(link->text),
                      "</a>");
      i = link->end - 1;
    } else {
      AppendEscaped(c, out);
    }
  }
  // A mark left open closes at the end of its text.
  if (em) out += "</em>";
  if (strong) out += "</strong>";
  if (code) out += "</code>";
  return out;
}

namespace {

void AppendHtmlTable(const Document::Block& b, std::string& html) {
  absl::StrAppend(&html, "<table>\n<thead>");
  if (!b.groups.empty()) {
    absl::StrAppend(&html, "<tr>");
    for (const auto& [name, width] : b.groups) {
      absl::StrAppend(&html, "<th", width > 1 ? absl::StrCat(" colspan=\"", width, "\"") : "",
                      " class=\"group\">", InlineHtml(name), "</th>");
    }
    absl::StrAppend(&html, "</tr>\n");
  }
  absl::StrAppend(&html, "<tr>");
  for (const std::string& h : b.header) absl::StrAppend(&html, "<th>", InlineHtml(h), "</th>");
  absl::StrAppend(&html, "</tr></thead>\n<tbody>\n");
  for (size_t r = 0; r < b.rows.size(); ++r) {
    absl::StrAppend(&html, "<tr>");
    for (size_t c = 0; c < b.rows[r].size(); ++c) {
      const int span = r < b.spans.size() && c < b.spans[r].size() ? b.spans[r][c] : 1;
      absl::StrAppend(&html, "<td", span > 1 ? absl::StrCat(" colspan=\"", span, "\"") : "", ">",
                      InlineHtml(b.rows[r][c]), "</td>");
    }
    absl::StrAppend(&html, "</tr>\n");
  }
  absl::StrAppend(&html, "</tbody>\n</table>\n");
}

}  // namespace

std::string ToHtml(const Document& document) {
  std::string title = "rooftune report";
  for (const Document::Block& b : document.blocks()) {
    if (b.kind == Document::Block::Kind::kHeading) {
      title = b.text;
      break;
    }
  }
  std::string html = absl::StrCat(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>",
      EscapeHtml(title),
      "</title>\n<style>\n"
      "body { font-family: sans-serif; margin: 1em auto; max-width: 110em; padding: 0 1em; }\n"
      "table { border-collapse: collapse; font-size: 90%; margin: 0.5em 0; }\n"
      "th, td { border: 1px solid #ccc; padding: 0.2em 0.5em; text-align: left; }\n"
      "th { background: #eee; }\n"
      "th.group { text-align: center; }\n"
      "figure { margin: 0.5em 0; display: flex; flex-wrap: wrap; gap: 1em; align-items: flex-start; }\n"
      "figure > svg { flex: 0 1 760px; min-width: 20em; max-width: 100%; height: auto; "
      "border: 1px solid #eee; }\n"
      "figure > table { flex: 0 1 auto; font-size: 80%; }\n"
      "img { max-width: 100%; }\n"
      "h2, h3 { margin: 1em 0 0.3em; }\n"
      "</style>\n</head>\n<body>\n");
  for (const Document::Block& b : document.blocks()) {
    switch (b.kind) {
      case Document::Block::Kind::kHeading:
        absl::StrAppend(&html, "<h", b.level,
                        b.anchor.empty() ? "" : absl::StrCat(" id=\"", EscapeHtml(b.anchor), "\""),
                        ">", InlineHtml(b.text), "</h", b.level, ">\n");
        break;
      case Document::Block::Kind::kParagraph:
        absl::StrAppend(&html, "<p>", InlineHtml(b.text), "</p>\n");
        break;
      case Document::Block::Kind::kTable:
        AppendHtmlTable(b, html);
        break;
      case Document::Block::Kind::kImage: {
        absl::StrAppend(&html, "<figure>\n");
        if (!b.svg.empty()) {
          // Inline, so that the page needs no other file; the description names it for readers.
          std::string svg = b.svg;
          const size_t open = svg.find("<svg ");
          if (open != std::string::npos) {
            svg.insert(open + 5, absl::StrCat("role=\"img\" aria-label=\"", EscapeHtml(b.text), "\" "));
          }
          absl::StrAppend(&html, svg);
        } else {
          absl::StrAppend(&html, "<img src=\"", EscapeHtml(b.source), "\" alt=\"",
                          EscapeHtml(b.text), "\">\n");
        }
        if (!b.header.empty()) {
          Document::Block key{Document::Block::Kind::kTable};
          key.header = b.header;
          key.rows = b.rows;
          AppendHtmlTable(key, html);
        }
        absl::StrAppend(&html, "</figure>\n");
        break;
      }
      case Document::Block::Kind::kList:
        absl::StrAppend(&html, "<ul>\n");
        for (const std::string& item : b.items) absl::StrAppend(&html, "<li>", InlineHtml(item), "</li>\n");
        absl::StrAppend(&html, "</ul>\n");
        break;
    }
  }
  absl::StrAppend(&html, "</body>\n</html>\n");
  return html;
}

namespace {

// Inline marks as a terminal shows them: code, strong and emphasis marks dropped, a link its text.
std::string PlainText(const std::string& text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '`' || text[i] == '*') continue;
    if (std::optional<Link> link = LinkAt(text, i)) {
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
  return size_t(std::count_if(text.begin(), text.end(),
                              [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
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

std::string TextTable(const std::vector<std::string>& header,
                      const std::vector<std::vector<std::string>>& rows, size_t width) {
  std::vector<size_t> widths(header.size(), 0);
  for (size_t c = 0; c < header.size(); ++c) widths[c] = Columns(header[c]);
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
        const std::string pad(widths[c] - Columns(cells[c]), ' ');
        absl::StrAppend(&text, c == 0 ? "" : "  ", cells[c], pad);
      }
      text.erase(text.find_last_not_of(' ') + 1);  // empty cells at the end leave no blanks
      return text + "\n";
    };
    out = line(header);
    std::vector<std::string> rule;
    for (size_t w : widths) rule.push_back(std::string(w, '-'));
    out += line(rule);
    for (const auto& cells : plain) out += line(cells);
    return out;
  }
  // Too wide for the terminal: one record per row, each non-empty cell on its own line.
  size_t label = 0;
  for (const std::string& h : header) label = std::max(label, Columns(h));
  for (size_t r = 0; r < plain.size(); ++r) {
    if (r > 0) out += "\n";
    for (size_t c = 0; c < plain[r].size(); ++c) {
      if (plain[r][c].empty()) continue;
      const std::string name =
          absl::StrCat(header[c], ":", std::string(label - Columns(header[c]) + 1, ' '));
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
        out = absl::StrCat(text, "\n", std::string(std::min(Columns(text), columns), b.level <= 1 ? '=' : '-'),
                           "\n");
        break;
      }
      case Document::Block::Kind::kParagraph:
        out = Wrap(PlainText(b.text), columns, "", "");
        break;
      case Document::Block::Kind::kTable:
        out = TextTable(FlatHeader(b), FlatRows(b), columns);
        break;
      case Document::Block::Kind::kImage:
        if (b.header.empty()) continue;  // a terminal shows no picture, but its key
        out = TextTable(b.header, b.rows, columns);
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
