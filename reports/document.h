// A report as a sequence of blocks, written once and rendered as Markdown, as one self-contained
// HTML page, or as terminal text. Text in paragraphs, list items and table cells may use
// Markdown's inline marks: `code`, **strong**, *emphasis* and [links](#anchor); the HTML renderer
// escapes the rest.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rooftune::reports {

class Document {
 public:
  struct Block {
    enum class Kind { kHeading, kParagraph, kTable, kImage, kList };
    Kind kind = Kind::kParagraph;
    int level = 1;                               // heading
    std::string text;                            // heading, paragraph, image's description
    std::string anchor;                          // heading: the id links to it use
    std::string source;                          // image: the file Markdown links ("": none)
    std::string svg;                             // image: the picture HTML embeds
    std::vector<std::string> header;             // table; image: the key beside it
    std::vector<std::vector<std::string>> rows;  // table; image: the key beside it
    // Table: a row of group names over the header, each spanning that many columns; and per
    // row, how many columns each cell spans (empty: one each).
    std::vector<std::pair<std::string, int>> groups;
    std::vector<std::vector<int>> spans;
    std::vector<std::string> items;  // list

    // The table's header with each column named after its group ("1T read"), and its rows with
    // every spanning cell followed by the empty cells it covers: the flat form text lays out.
    std::vector<std::string> FlatHeader() const;
    std::vector<std::vector<std::string>> FlatRows() const;
  };

  Document& Heading(int level, std::string text, std::string anchor = "");
  Document& Paragraph(std::string text);
  Document& Table(std::vector<std::string> header, std::vector<std::vector<std::string>> rows);
  // A table whose columns come in named groups (thread counts over access kinds, say) and whose
  // cells may span several columns. HTML and Markdown (as HTML) put the groups on a header row
  // of their own, text on a line over the header.
  Document& GroupedTable(std::vector<std::pair<std::string, int>> groups,
                         std::vector<std::string> header,
                         std::vector<std::vector<std::string>> rows,
                         std::vector<std::vector<int>> spans);
  // A picture: `svg` embedded in the HTML page, `source` linked from the Markdown (either may be
  // empty: an HTML-only picture, a linked-only one). A key (header, rows) sits beside it.
  Document& Image(std::string description, std::string source, std::string svg = "",
                  std::vector<std::string> key_header = {},
                  std::vector<std::vector<std::string>> key_rows = {});
  Document& List(std::vector<std::string> items);

  const std::vector<Block>& blocks() const { return blocks_; }

 private:
  Document& Add(Block block);
  std::vector<Block> blocks_;
};

std::string ToMarkdown(const Document& document);
// One self-contained page: the first heading as its title, its styles and pictures inside it
// (nothing fetched: it works offline and when mailed). An image without an embedded picture is
// linked by its relative path.
std::string ToHtml(const Document& document);
// A table block as HTML: how Markdown writes a grouped table, which its pipe tables cannot span.
std::string HtmlTable(const Document::Block& table);
// Terminal text at most `width` columns wide where it can be: paragraphs wrapped, a table too wide
// for the width printed one record per row ("column: value" lines), pictures left out, marks
// dropped.
std::string ToText(const Document& document, int width);

// A Markdown link "[text](target)" starting at text[i]: its text and target, and the index just
// past it; nullopt when text[i] starts none.
struct InlineLink {
  std::string text, target;
  size_t end = 0;
};
std::optional<InlineLink> InlineLinkAt(const std::string& text, size_t i);

// Which inline marks are open while reading a text, and the mark that starts at text[i] given
// them: "`", "**", "*", or "" where none does. A mark opens only where a closing one follows (a
// lone `*`, a ceiling's "raised" mark, is text); inside code only "`" is a mark.
struct OpenMarks {
  bool code = false, strong = false, em = false;
};
std::string_view InlineMarkAt(const std::string& text, size_t i, const OpenMarks& open);

// `text` with &, <, > and " escaped: safe in HTML and SVG text and attributes.
std::string EscapeHtml(const std::string& text);

// `text`'s inline marks as HTML, everything else escaped.
std::string InlineHtml(const std::string& text);

}  // namespace rooftune::reports
