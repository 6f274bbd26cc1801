#include "reports/document.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace rooftune::reports {

Document& Document::Heading(int level, std::string text) {
  Block b{Block::Kind::kHeading, level, std::move(text)};
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
  Block b{Block::Kind::kTable};
  b.header = std::move(header);
  b.rows = std::move(rows);
  blocks_.push_back(std::move(b));
  return *this;
}

Document& Document::Image(std::string description, std::string source) {
  Block b{Block::Kind::kImage, 0, std::move(description), std::move(source)};
  blocks_.push_back(std::move(b));
  return *this;
}

Document& Document::List(std::vector<std::string> items) {
  Block b{Block::Kind::kList};
  b.items = std::move(items);
  blocks_.push_back(std::move(b));
  return *this;
}

std::string ToMarkdown(const Document& document) {
  std::vector<std::string> blocks;
  for (const Document::Block& b : document.blocks()) {
    std::string out;
    switch (b.kind) {
      case Document::Block::Kind::kHeading:
        out = absl::StrCat(std::string(b.level, '#'), " ", b.text, "\n");
        break;
      case Document::Block::Kind::kParagraph:
        out = absl::StrCat(b.text, "\n");
        break;
      case Document::Block::Kind::kTable:
        out = absl::StrCat("| ", absl::StrJoin(b.header, " | "), " |\n|");
        for (size_t i = 0; i < b.header.size(); ++i) absl::StrAppend(&out, "---|");
        absl::StrAppend(&out, "\n");
        for (const auto& row : b.rows) absl::StrAppend(&out, "| ", absl::StrJoin(row, " | "), " |\n");
        break;
      case Document::Block::Kind::kImage:
        out = absl::StrCat("![", b.text, "](", b.source, ")\n");
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

std::string Escape(const std::string& text) {
  std::string out;
  for (char c : text) AppendEscaped(c, out);
  return out;
}

}  // namespace

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

std::string ToHtml(const Document& document) {
  std::string title = "rooftune report";
  for (const Document::Block& b : document.blocks()) {
    if (b.kind == Document::Block::Kind::kHeading) {
      title = b.text;
      break;
    }
  }
  std::string html = absl::StrCat(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>",
      Escape(title),
      "</title>\n<style>\n"
      "body { font-family: sans-serif; margin: 2em auto; max-width: 110em; padding: 0 1em; }\n"
      "table { border-collapse: collapse; font-size: 90%; }\n"
      "th, td { border: 1px solid #ccc; padding: 0.2em 0.5em; text-align: left; }\n"
      "th { background: #eee; }\n"
      "img { max-width: 100%; }\n"
      "</style>\n</head>\n<body>\n");
  for (const Document::Block& b : document.blocks()) {
    switch (b.kind) {
      case Document::Block::Kind::kHeading:
        absl::StrAppend(&html, "<h", b.level, ">", InlineHtml(b.text), "</h", b.level, ">\n");
        break;
      case Document::Block::Kind::kParagraph:
        absl::StrAppend(&html, "<p>", InlineHtml(b.text), "</p>\n");
        break;
      case Document::Block::Kind::kTable:
        absl::StrAppend(&html, "<table>\n<thead><tr>");
        for (const std::string& h : b.header) absl::StrAppend(&html, "<th>", InlineHtml(h), "</th>");
        absl::StrAppend(&html, "</tr></thead>\n<tbody>\n");
        for (const auto& row : b.rows) {
          absl::StrAppend(&html, "<tr>");
          for (const std::string& cell : row) absl::StrAppend(&html, "<td>", InlineHtml(cell), "</td>");
          absl::StrAppend(&html, "</tr>\n");
        }
        absl::StrAppend(&html, "</tbody>\n</table>\n");
        break;
      case Document::Block::Kind::kImage:
        absl::StrAppend(&html, "<p><img src=\"", Escape(b.source), "\" alt=\"", Escape(b.text),
                        "\"></p>\n");
        break;
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

}  // namespace rooftune::reports
