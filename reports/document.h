// A report as a sequence of blocks, written once and rendered as Markdown or as HTML. Text in
// paragraphs, list items and table cells may use Markdown's inline marks: `code`, **strong** and
// *emphasis*; the HTML renderer escapes the rest.
#pragma once

#include <string>
#include <vector>

namespace rooftune::reports {

class Document {
 public:
  struct Block {
    enum class Kind { kHeading, kParagraph, kTable, kImage, kList };
    Kind kind = Kind::kParagraph;
    int level = 1;                               // heading
    std::string text;                            // heading, paragraph, image's description
    std::string source;                          // image
    std::vector<std::string> header;             // table
    std::vector<std::vector<std::string>> rows;  // table
    std::vector<std::string> items;              // list
  };

  Document& Heading(int level, std::string text);
  Document& Paragraph(std::string text);
  Document& Table(std::vector<std::string> header, std::vector<std::vector<std::string>> rows);
  Document& Image(std::string description, std::string source);
  Document& List(std::vector<std::string> items);

  const std::vector<Block>& blocks() const { return blocks_; }

 private:
  std::vector<Block> blocks_;
};

std::string ToMarkdown(const Document& document);
// A standalone page: the first heading as its title, images linked by their relative paths (the
// SVG files a report folder holds beside it).
std::string ToHtml(const Document& document);

// `text`'s inline marks as HTML, everything else escaped.
std::string InlineHtml(const std::string& text);

}  // namespace rooftune::reports
