// Julia's display of a matrix or vector: `2×3 Matrix{Float64}:` then its rows.
#include "scan.h"

namespace attn::parsing {

/// A Julia display header: `2×3 Matrix{Float64}:` (rows x columns) or `3-element
/// Vector{Float64}:` (a column).
bool julia_header(std::string_view line, long* rows, long* columns) {
  if (line.empty() || line.back() != ':') return false;
  size_t i = 0;
  while (i < line.size() && is_digit(line[i])) ++i;
  const long first = digits_value(line.substr(0, i));
  if (first < 0) return false;
  std::string_view rest = line.substr(i);
  if (starts_with(rest, "-element ")) {
    *rows = first;
    *columns = 1;
    return true;
  }
  if (starts_with(rest, "\xc3\x97")) {  // ×
    rest.remove_prefix(2);
  } else if (starts_with(rest, "x")) {
    rest.remove_prefix(1);
  } else {
    return false;
  }
  size_t j = 0;
  while (j < rest.size() && is_digit(rest[j])) ++j;
  const long second = digits_value(rest.substr(0, j));
  if (second < 0 || j >= rest.size() || rest[j] != ' ') return false;
  *rows = first;
  *columns = second;
  return true;
}

namespace {

class Julia : public Reader {
 public:
  explicit Julia(const Reader& from) : Reader(from) {}

  /// The lines after `header`.
  std::vector<TextLine> lines_after(const TextLine& header) const {
    const size_t end = static_cast<size_t>(header.text.data() + header.text.size() - text_.data());
    std::string_view rest = text_.substr(end);
    int first = header.number;
    if (!rest.empty()) {
      const size_t n = line_break_at(rest, 0);
      rest.remove_prefix(n);
      first += n > 0;
    }
    return split_lines(rest, first);
  }

  Matrix parse_julia(const TextLine& header, long rows, long columns) {
    tool_ = Tool::kJulia;
    format_ = header.text.find("-element") != std::string_view::npos ? "Julia vector" : "Julia matrix";
    Block block;
    block.line = header.number;
    for (const TextLine& line : lines_after(header)) read_row(block, split_words(line.text), 0, 0);
    const Matrix values = assemble({block});
    if (values.rows() != rows || values.cols() != columns) {
      fail("parse-julia-header", {{"line", str(header.number)},
                                  {"rows", str(rows)},
                                  {"columns", str(columns)},
                                  {"found_rows", str(values.rows())},
                                  {"found_columns", str(values.cols())}});
    }
    return values;
  }
};

}  // namespace

ParsedMatrix read_julia(const Reader& from, const TextLine& header, long rows, long columns) {
  Julia reader(from);
  return reader.result(reader.parse_julia(header, rows, columns));
}

}  // namespace attn::parsing
