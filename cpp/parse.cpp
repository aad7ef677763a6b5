// parse_matrix(): reads the matrices people paste, in one linear pass per format. This file
// skips the front matter and tells the format; each format's reader is a file of cpp/parse/
// (plain.cpp, julia.cpp, octave.cpp, r.cpp, latex.cpp, bracketed.cpp), and what they share
// (text, numbers, the lexer, Reader) is cpp/parse/scan.h.
//
// Design notes:
//  - Unicode first: minus signs (U+2212, dashes) become '-', Unicode spaces ' ', line and
//    paragraph separators '\n', zero-width characters and the BOM nothing. Messages then show
//    what a person sees; only bytes that are not valid UTF-8 or are control characters are
//    shown escaped (\xNN). Pure ASCII text is not copied.
//  - Front matter is skipped: REPL prompt lines (`>>> a`, `In [3]: a`, `julia> a`, `> a`,
//    `>> a`), IPython's `Out[3]:`, PyTorch's `Parameter containing:`, an assignment `A = ` in
//    front of a matrix, TensorFlow's `<tf.Tensor: shape=..., numpy=` ... `>`.
//  - Then the format is told from the first line: `\begin{` is LaTeX; `2×2 Matrix{...}:` Julia;
//    `A =` alone Octave/MATLAB; `[,1] [,2]` R's matrix print, `[1] ...` R's vector print; a
//    first token '[', '{', '(' or a wrapper word such as `array(` / `tensor(` is bracketed text
//    (NumPy, Python/JSON, MATLAB literals, PyTorch, TensorFlow, JAX, Mathematica); anything
//    else is plain rows, one per line (CSV, TSV, semicolon-separated, whitespace).
//  - Each format's file says how it reads; scan.cpp how numbers are read.
#include "parse.h"

#include <string>

#include "parse/scan.h"

namespace attn {
namespace {

using namespace parsing;

/// `A =` (Octave/MATLAB's output header) or `A = ...` (an assignment in front of the matrix):
/// the length of the name and '=' with the blanks around it, or 0.
size_t assignment_length(std::string_view line) {
  size_t i = 0;
  if (line.empty() || !(is_letter(line[0]) || line[0] == '_')) return 0;
  while (i < line.size() && (is_letter(line[i]) || is_digit(line[i]) || line[i] == '_' || line[i] == '.')) {
    ++i;
  }
  while (i < line.size() && is_blank(line[i])) ++i;
  if (i >= line.size() || line[i] != '=' || (i + 1 < line.size() && line[i + 1] == '=')) return 0;
  ++i;
  while (i < line.size() && is_blank(line[i])) ++i;
  return i;
}

/// A REPL's prompt line (the command before its output): `>>> a`, `In [3]: a`, `julia> a`,
/// `> a` (R), `>> a` (Octave).
bool is_prompt_line(std::string_view line) {
  for (std::string_view prompt : {">>>", "julia>", ">>", ">"}) {
    if (starts_with(line, prompt)) {
      return line.size() == prompt.size() || is_blank(line[prompt.size()]);
    }
  }
  if (!starts_with(line, "In [")) return false;
  const size_t close = line.find("]:");
  return close != std::string_view::npos && (close == 4 || digits_value(line.substr(4, close - 4)) >= 0);
}

/// IPython's `Out[3]:` in front of a result: its length, or 0.
size_t out_prompt_length(std::string_view line) {
  if (!starts_with(line, "Out[")) return 0;
  const size_t close = line.find("]:");
  if (close == std::string_view::npos) return 0;
  if (close > 4 && digits_value(line.substr(4, close - 4)) < 0) return 0;
  return close + 2;
}

// ---------------------------------------------------------------------------------------------
// The parser: the front matter, then the format's reader

class Parser : public Reader {
 public:
  Parser(std::string_view text, std::string_view name) : Reader(name) {
    if (is_ascii(text)) {
      text_ = text;
    } else {
      normalized_ = normalize_unicode(text);
      text_ = normalized_;
    }
  }

  ParsedMatrix parse() {
    skip_front_matter();
    return parse_body();
  }

 private:
  // ----- front matter -----

  void drop_prefix(size_t length) {
    first_line_ += count_line_breaks(text_.substr(0, length));
    text_.remove_prefix(length);
  }

  /// The first line that is not blank, with the offset of its first non-blank character.
  bool first_content(TextLine* line, size_t* offset) const {
    size_t i = 0;
    int number = first_line_;
    while (i < text_.size()) {
      while (i < text_.size() && is_blank(text_[i])) ++i;
      const size_t content = i;
      while (i < text_.size() && line_break_at(text_, i) == 0) ++i;
      if (i > content) {
        *line = TextLine{text_.substr(content, i - content), number};
        *offset = content;
        return true;
      }
      if (i < text_.size()) i += line_break_at(text_, i);
      ++number;
    }
    return false;
  }

  void skip_front_matter() {
    TextLine line;
    size_t offset = 0;
    bool after_prompt = false;
    while (first_content(&line, &offset)) {
      const std::string_view text = trim(line.text);
      if (is_prompt_line(text) || (after_prompt && starts_with(text, "..."))) {
        after_prompt = true;  // a Python continuation line `... ` follows its prompt
        drop_prefix(offset + line.text.size());
        continue;
      }
      after_prompt = false;
      if (text == "Parameter containing:") {
        tool_ = Tool::kTorch;
        drop_prefix(offset + line.text.size());
        continue;
      }
      if (const size_t length = out_prompt_length(text)) {
        drop_prefix(offset + length);
        continue;
      }
      break;
    }
    const std::string_view rest = trim(text_);
    if (starts_with(rest, "<tf.Tensor") || starts_with(rest, "<tf.Variable")) {
      // <tf.Tensor: shape=(2, 2), dtype=float32, numpy=\narray([[...]], dtype=float32)>
      const int line = first_line_ + count_line_breaks(text_.substr(0, rest.data() - text_.data()));
      const size_t values = text_.find("numpy=");
      if (values == std::string_view::npos) {
        fail("parse-tf-no-values", {{"line", str(line)}});
      }
      if (rest.back() != '>') {
        fail("parse-tf-unclosed", {{"line", str(line)}, {"close", "'>'"}});
      }
      text_ = text_.substr(0, static_cast<size_t>(rest.data() + rest.size() - 1 - text_.data()));
      drop_prefix(values + 6);
      format_ = "TensorFlow tensor";
      tool_ = Tool::kTensorFlow;
    }
  }

  ParsedMatrix parse_body() {
    TextLine line;
    size_t offset = 0;
    if (!first_content(&line, &offset)) fail("parse-empty-text");
    if (text_.find("\\begin{") != std::string_view::npos) return read_latex(*this);
    const std::string_view first = trim(line.text);
    long rows = 0;
    long columns = 0;
    if (julia_header(first, &rows, &columns)) return read_julia(*this, line, rows, columns);
    if (const size_t length = assignment_length(first)) {
      drop_prefix(offset + length);  // `A = [[1, 2]]`: the name says nothing about the values
      if (length == first.size() && !starts_bracketed()) return read_octave(*this);
    } else if (is_r_header(first) && text_.find("[1,]") != std::string_view::npos) {
      return read_r_matrix(*this);
    } else if (is_r_vector(text_, first_line_, first)) {
      return read_r_vector(*this);
    }
    return starts_bracketed() ? read_bracketed(*this) : read_plain(*this);
  }

  /// The text starts with a bracket or a wrapper such as `array(`.
  bool starts_bracketed() const {
    Lexer probe(text_, first_line_, LexerOptions{});
    const Token token = probe.next();
    return token.kind == TokenKind::kOpen || token.kind == TokenKind::kClose || token.kind == TokenKind::kLParen ||
           token.kind == TokenKind::kRParen ||
           (find_wrapper(token.text) != nullptr && probe.peek().kind == TokenKind::kLParen);
  }

  std::string normalized_;  // the text with Unicode minus signs and spaces made ASCII
};

}  // namespace

ParsedMatrix parse_matrix_detailed(std::string_view text, std::string_view name) { return Parser(text, name).parse(); }

double parse_cell(std::string_view text, std::string_view name, size_t row, size_t column) {
  try {
    return read_cell(Parser(text, name), row, column);
  } catch (const InputError& e) {
    // The reader knows the input; the cell is the caller's: both, for a view to mark the cell
    // (the message, its id and parameters, stays the reader's).
    throw InputError(
        ErrorPlace(std::string(name), {}, static_cast<std::ptrdiff_t>(row), static_cast<std::ptrdiff_t>(column)), e);
  }
}

Matrix parse_matrix(std::string_view text, std::string_view name) {
  return std::move(parse_matrix_detailed(text, name).values);
}

}  // namespace attn
