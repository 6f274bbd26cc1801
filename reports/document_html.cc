// The report as one self-contained HTML page: styles and pictures inside it.
#include <optional>
#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "reports/document.h"

namespace rooftune::reports {
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

}  // namespace

std::string EscapeHtml(const std::string& text) {
  std::string out;
  for (char c : text) AppendEscaped(c, out);
  return out;
}

std::string InlineHtml(const std::string& text) {
  std::string out;
  OpenMarks open;
  for (size_t i = 0; i < text.size(); ++i) {
    const std::string_view mark = InlineMarkAt(text, i, open);
    if (mark == "`") {
      out += open.code ? "</code>" : "<code>";
      open.code = !open.code;
    } else if (mark == "**") {
      out += open.strong ? "</strong>" : "<strong>";
      open.strong = !open.strong;
      ++i;
    } else if (mark == "*") {
      out += open.em ? "</em>" : "<em>";
      open.em = !open.em;
    } else if (std::optional<InlineLink> link = open.code ? std::nullopt : InlineLinkAt(text, i)) {
      absl::StrAppend(&out, "<a href=\"", EscapeHtml(link->target), "\">", InlineHtml(link->text),
                      "</a>");
      i = link->end - 1;
    } else {
      AppendEscaped(text[i], out);
    }
  }
  // A mark left open (its closing one inside a link or another mark) closes at the end.
  if (open.em) out += "</em>";
  if (open.strong) out += "</strong>";
  if (open.code) out += "</code>";
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

std::string HtmlTable(const Document::Block& table) {
  std::string html;
  AppendHtmlTable(table, html);
  return html;
}

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
      "figure { margin: 0.5em 0; display: flex; flex-wrap: wrap; gap: 1em; align-items: "
      "flex-start; }\n"
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
      case Document::Block::Kind::kTable: AppendHtmlTable(b, html); break;
      case Document::Block::Kind::kImage: {
        absl::StrAppend(&html, "<figure>\n");
        if (!b.svg.empty()) {
          // Inline, so that the page needs no other file; the description names it for readers.
          std::string svg = b.svg;
          const size_t open = svg.find("<svg ");
          if (open != std::string::npos) {
            svg.insert(open + 5,
                       absl::StrCat("role=\"img\" aria-label=\"", EscapeHtml(b.text), "\" "));
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
        for (const std::string& item : b.items)
          absl::StrAppend(&html, "<li>", InlineHtml(item), "</li>\n");
        absl::StrAppend(&html, "</ul>\n");
        break;
    }
  }
  absl::StrAppend(&html, "</body>\n</html>\n");
  return html;
}

}  // namespace rooftune::reports
