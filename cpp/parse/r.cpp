// R's print of a matrix (`[,1]` / `[1,]` labels, column blocks) and of a vector (`[1]` lines).
#include "scan.h"

#include <algorithm>

namespace attn::parsing {
namespace {

/// `[,3]` (R's column label) gives 3, `[3,]` (row label) gives 3 with `row`; -1 otherwise.
long r_label(std::string_view word, bool row) {
  if (word.size() < 4 || word.front() != '[' || word.back() != ']') return -1;
  const std::string_view inside = word.substr(1, word.size() - 2);
  if (row) return inside.back() == ',' ? digits_value(inside.substr(0, inside.size() - 1)) : -1;
  return inside.front() == ',' ? digits_value(inside.substr(1)) : -1;
}

/// `[7]`, R's index in front of a printed vector's line: 7, or -1.
long r_index(std::string_view word) {
  if (word.size() < 3 || word.front() != '[' || word.back() != ']') return -1;
  return digits_value(word.substr(1, word.size() - 2));
}

/// R's line for values it did not print: ` [ reached getOption("max.print") -- omitted 3 rows ]`.
bool is_r_omission(std::string_view line) { return starts_with(trim(line), "[ reached"); }

}  // namespace

/// R's column labels over a matrix's rows: `[,1] [,2] [,3]`.
bool is_r_header(std::string_view line) {
  if (!starts_with(line, "[,")) return false;
  const std::vector<std::string_view> words = split_words(line);
  return std::all_of(words.begin(), words.end(), [](std::string_view w) { return r_label(w, false) > 0; });
}

/// Every line of `all` that is not blank starts with R's index `[k]` and has more after it.
bool is_r_vector(std::string_view all, int first_line, std::string_view first) {
  if (first.empty() || first[0] != '[' || first.find("] ") == std::string_view::npos) return false;
  bool any = false;
  for (const TextLine& line : split_lines(all, first_line)) {
    const std::string_view text = trim(line.text);
    if (text.empty() || is_r_omission(text)) continue;
    const size_t close = text.find(']');
    if (close == std::string_view::npos || r_index(text.substr(0, close + 1)) < 1) return false;
    const std::string_view rest = trim(text.substr(close + 1));
    if (rest.empty() || rest[0] == '[' || rest[0] == ',' || !is_blank(text[close + 1])) {
      return false;
    }
    any = true;
  }
  return any;
}

namespace {

class R : public Reader {
 public:
  explicit R(const Reader& from) : Reader(from) {}

  /// R's "[ reached getOption("max.print") ... ]" line: values were left out of the print.
  void refuse_r_omission(int line_number, std::string_view text) {
    if (!is_r_omission(text)) return;
    fail("parse-r-omitted", {{"line", str(line_number)}, {"text", shorten(text, 80)}});
  }

  Matrix parse_r_matrix() {
    format_ = "R matrix";
    std::vector<Block> blocks;
    size_t labels = 0;  // columns the current block's header names
    for (const TextLine& line : split_lines(text_, first_line_)) {
      const std::string_view text = trim(line.text);
      if (text.empty()) continue;
      refuse_r_omission(line.number, text);
      const std::vector<std::string_view> words = split_words(text);
      if (r_label(words[0], false) > 0) {  // a header: [,9] [,10] ...
        Block block;
        block.line = line.number;
        block.first_column = static_cast<size_t>(r_label(words[0], false));
        for (size_t k = 0; k < words.size(); ++k) {
          if (r_label(words[k], false) != static_cast<long>(block.first_column + k)) {
            fail("parse-r-column-label",
                 {{"line", str(line.number)}, {"column", str(block.first_column + k)}, {"word", quote(words[k])}});
          }
        }
        labels = words.size();
        blocks.push_back(std::move(block));
        continue;
      }
      if (blocks.empty()) fail("parse-r-no-labels", {{"line", str(line.number)}});
      Block& block = blocks.back();
      if (r_label(words[0], true) != static_cast<long>(block.rows + 1)) {
        fail("parse-r-row-label",
             {{"line", str(line.number)}, {"row", str(block.rows + 1)}, {"word", quote(words[0])}});
      }
      read_row(block, words, 1, 0);
      if (block.columns != labels) {
        fail("parse-r-header-count", {{"row", str(block.rows)},
                                      {"numbers", str(words.size() - 1)},
                                      {"line", str(block.line)},
                                      {"columns", str(labels)}});
      }
    }
    return assemble(blocks);
  }

  Matrix parse_r_vector() {
    format_ = "R vector";
    size_t columns = 0;
    for (const TextLine& line : split_lines(text_, first_line_)) {
      const std::string_view text = trim(line.text);
      if (text.empty()) continue;
      refuse_r_omission(line.number, text);
      const std::vector<std::string_view> words = split_words(text);
      if (r_index(words[0]) != static_cast<long>(columns + 1)) {
        fail("parse-r-index", {{"line", str(line.number)}, {"index", str(columns + 1)}, {"word", quote(words[0])}});
      }
      for (size_t k = 1; k < words.size(); ++k) {
        values_.push_back(read_number(words[k], Position{1, columns + 1}));
        ++columns;
      }
    }
    return build(1, columns, false);
  }
};

}  // namespace

ParsedMatrix read_r_matrix(const Reader& from) {
  R reader(from);
  return reader.result(reader.parse_r_matrix());
}

ParsedMatrix read_r_vector(const Reader& from) {
  R reader(from);
  return reader.result(reader.parse_r_vector());
}

}  // namespace attn::parsing
