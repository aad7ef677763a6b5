// The parser's shared internals, for cpp/parse.cpp (the front matter and which format) and the
// formats' readers, one file each in cpp/parse/: text and Unicode helpers, the number reader
// (fast_float), the words the tools print, the lexer, and Reader, what every format's reader
// starts from (the text left after the front matter) with fail() (an InputError whose ErrorPlace
// is the input's name, its message an id `error.parse-*` of web/lib/locales with the input's name,
// the line, row and column numbers and the words found as parameters: no English here),
// read_number() and the row bookkeeping. Not for code outside the parser.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "matrix.h"
#include "parse.h"

namespace attn::parsing {

// ---------------------------------------------------------------------------------------------
// Text (scan.cpp; the one-liners here, for the scanners' loops)

inline bool is_digit(char c) { return c >= '0' && c <= '9'; }
inline bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\v' || c == '\f'; }
inline bool is_space(char c) { return is_blank(c) || c == '\n' || c == '\r'; }
inline bool is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

inline bool starts_with(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && s.substr(0, prefix.size()) == prefix;
}

inline bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

inline std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

/// Length of the line break at s[i] (\n, \r\n or \r), 0 if there is none.
inline size_t line_break_at(std::string_view s, size_t i) {
  if (s[i] == '\n') return 1;
  if (s[i] != '\r') return 0;
  return (i + 1 < s.size() && s[i + 1] == '\n') ? 2 : 1;
}

int count_line_breaks(std::string_view s);

/// One line of a text, without its line break, and its number (from 1).
struct TextLine {
  std::string_view text;
  int number = 1;
};

std::vector<TextLine> split_lines(std::string_view text, int first_line);
std::vector<std::string_view> split_words(std::string_view line);
bool is_ascii(std::string_view s);
std::string normalize_unicode(std::string_view text);
std::string quote(std::string_view word, size_t max_shown = 30);
std::string shorten(std::string_view word, size_t max_shown = 30);

/// Where a value is in the matrix, from 1: row R, column C (column 0: row R, a whole row). A
/// message says it from its parameters `row` and `column` ("0" for a whole row).
struct Position {
  size_t row = 1;
  size_t column = 0;
};

long digits_value(std::string_view digits);

// ---------------------------------------------------------------------------------------------
// Numbers (scan.cpp)

enum class NumberStatus { kOk, kNotNumber, kOutOfRange };

bool scan_decimal(std::string_view s);
NumberStatus parse_number(std::string_view word, double* value);

// ---------------------------------------------------------------------------------------------
// What the tools print (scan.cpp; the wrappers in bracketed.cpp)

/// The tool a text comes from, for what to say about values it left out.
enum class Tool { kNumpy, kTorch, kTensorFlow, kJax, kJulia, kLatex };

/// The tool as the messages' `tool` parameter names it: error.parse-elided says, per tool, how to
/// print the values it left out (a select over `tool` in the catalogues).
const char* tool_key(Tool tool);
bool is_elision(std::string_view word);
bool is_complex(std::string_view word);

struct Wrapper;
const Wrapper* find_wrapper(std::string_view word);

// ---------------------------------------------------------------------------------------------
// Tokens

enum class TokenKind { kOpen, kClose, kLParen, kRParen, kComma, kSemicolon, kNewline, kWord, kEnd };

struct Token {
  TokenKind kind = TokenKind::kEnd;
  std::string_view text;  // for kOpen / kClose: "[" or "{", "]" or "}"
  int line = 1;
};

// Bytes that end a word: blanks, line breaks and the delimiters [](){},; (with or without ',').
struct EndsWordTable {
  bool ends[256] = {};
  constexpr explicit EndsWordTable(bool comma) {
    for (unsigned char c : {' ', '\t', '\v', '\f', '\n', '\r', '[', ']', '{', '}', '(', ')', ';'}) {
      ends[c] = true;
    }
    ends[static_cast<unsigned char>(',')] = comma;
  }
  constexpr bool operator[](unsigned char c) const { return ends[c]; }
};
inline constexpr EndsWordTable kEndsWord{true};
inline constexpr EndsWordTable kEndsWordKeepingCommas{false};

struct LexerOptions {
  bool newline_tokens = false;  // plain rows: a newline ends a row
  bool comma_in_words = false;  // ',' is a decimal comma, not a separator
  bool quotes = false;          // "..." is one word (a spreadsheet's quoted cell)
};

/// Splits text into brackets, separators and words. Newlines (\n, \r\n, \r) are tokens only
/// when asked for (plain rows); in bracketed text they are whitespace.
class Lexer {
 public:
  Lexer(std::string_view text, int first_line, LexerOptions options)
      : text_(text),
        options_(options),
        ends_word_(options.comma_in_words ? kEndsWordKeepingCommas : kEndsWord),
        line_(first_line) {}

  Token next() {
    if (has_peeked_) {
      has_peeked_ = false;
      return peeked_;
    }
    return scan();
  }

  const Token& peek() {
    if (!has_peeked_) {
      peeked_ = scan();
      has_peeked_ = true;
    }
    return peeked_;
  }

 private:
  Token scan() {
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (is_blank(c)) {
        ++pos_;
      } else if (c == '\n' || c == '\r') {
        const int line = line_;
        pos_ += line_break_at(text_, pos_);
        ++line_;
        if (options_.newline_tokens) return Token{TokenKind::kNewline, "\n", line};
      } else {
        break;
      }
    }
    if (pos_ >= text_.size()) return Token{TokenKind::kEnd, "", line_};
    const size_t start = pos_;
    TokenKind kind = TokenKind::kWord;
    switch (text_[pos_]) {
      case '[':
      case '{':
        kind = TokenKind::kOpen;
        break;
      case ']':
      case '}':
        kind = TokenKind::kClose;
        break;
      case '(':
        kind = TokenKind::kLParen;
        break;
      case ')':
        kind = TokenKind::kRParen;
        break;
      case ',':
        kind = options_.comma_in_words ? TokenKind::kWord : TokenKind::kComma;
        break;
      case ';':
        kind = TokenKind::kSemicolon;
        break;
      default:
        break;
    }
    if (kind != TokenKind::kWord) {
      ++pos_;
    } else {
      size_t end = pos_ + 1;  // a local, so the hot loop keeps it in a register
      if (options_.quotes && text_[pos_] == '"') {
        while (end < text_.size() && text_[end] != '"' && text_[end] != '\n' && text_[end] != '\r') {
          ++end;
        }
        if (end < text_.size() && text_[end] == '"') ++end;
      }
      const EndsWordTable& ends_word = ends_word_;  // the hot loop: one table look-up per byte
      const char* text = text_.data();
      const size_t size = text_.size();
      while (end < size && !ends_word[static_cast<unsigned char>(text[end])]) ++end;
      pos_ = end;
    }
    return Token{kind, text_.substr(start, pos_ - start), line_};
  }

  std::string_view text_;
  LexerOptions options_;
  const EndsWordTable& ends_word_;
  size_t pos_ = 0;
  int line_;
  bool has_peeked_ = false;
  Token peeked_;
};

// ---------------------------------------------------------------------------------------------
// What every format's reader starts from

/// The text left after the front matter (cpp/parse.cpp skips it, then picks the format), the
/// format's name so far, the tool it comes from and the values read; how to fail and to read
/// numbers and rows. Each format's reader derives from it and starts as a copy of it.
class Reader {
 public:
  explicit Reader(std::string_view name) : name_(name) {}

  /// `values` with the name of the format they were read as.
  ParsedMatrix result(Matrix values) { return ParsedMatrix{std::move(values), std::move(format_)}; }

 protected:
  /// Throws error.<id> with the input's name (`name`) and `params`.
  [[noreturn]] void fail(const char* id, ErrorParams params = {}) const {
    params.insert(params.begin(), {"name", std::string(name_)});
    throw input_error(ErrorPlace(std::string(name_)), id, std::move(params));
  }

  /// Throws error.<id> about the value at `at` (`row`, `column`) with `params`.
  [[noreturn]] void fail(const char* id, Position at, ErrorParams params = {}) const {
    params.insert(params.begin(), {{"row", std::to_string(at.row)}, {"column", std::to_string(at.column)}});
    fail(id, std::move(params));
  }

  /// A count or a line number as a message's parameter.
  template <class Integer>
  static std::string str(Integer n) {
    return std::to_string(n);
  }

  /// Reads `word` as a number; on failure throws, naming where it is.
  double read_number(std::string_view word, Position at) const {
    double value = 0.0;
    const NumberStatus status = parse_number(word, &value);
    if (status == NumberStatus::kOk) return value;
    if (status == NumberStatus::kOutOfRange) fail("parse-out-of-range", at, {{"word", shorten(word)}});
    if (is_elision(word)) fail("parse-elided", at, {{"word", quote(word)}, {"tool", tool_key(tool_)}});
    if (is_complex(word)) fail_complex(at, word);
    fail("parse-not-number", at, {{"word", quote(word)}});
  }

  [[noreturn]] void fail_complex(Position at, std::string_view shown) const {
    fail("parse-complex", at, {{"word", quote(shown)}});
  }

  /// Copies values_ into a rows x columns matrix; `transposed` when values_ holds columns.
  Matrix build(size_t rows, size_t columns, bool transposed) {
    if (rows == 0 || columns == 0) fail("parse-empty-text");
    const auto r = static_cast<Eigen::Index>(rows);
    const auto c = static_cast<Eigen::Index>(columns);
    if (transposed) {
      using ColMajor = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::ColMajor>;
      return Eigen::Map<const ColMajor>(values_.data(), r, c);
    }
    return Eigen::Map<const Matrix>(values_.data(), r, c);
  }

  [[noreturn]] void fail_ragged(size_t row, size_t numbers, size_t first_row_numbers) const {
    fail("parse-ragged", {{"row", str(row)}, {"numbers", str(numbers)}, {"first", str(first_row_numbers)}});
  }

  /// Counts one more row of `numbers`: the first row sets `columns`, every later row must
  /// have as many.
  void close_row(size_t& rows, size_t& columns, size_t numbers) const {
    ++rows;
    if (rows == 1) {
      columns = numbers;
    } else if (numbers != columns) {
      fail_ragged(rows, numbers, columns);
    }
  }

  // ----- rows under a header: Julia, Octave/MATLAB, R -----

  // Consecutive columns printed together: R and Octave split wide matrices into such blocks.
  struct Block {
    size_t first_column = 1;  // in the matrix, from 1
    size_t columns = 0;       // numbers per row, set by its first row
    size_t rows = 0;
    int line = 0;  // its header's (or first row's) line
    std::vector<double> values;
  };

  /// Reads `words[first_word...]` as the next row of `block`, each number times 10^scale.
  void read_row(Block& block, const std::vector<std::string_view>& words, size_t first_word, int scale) {
    const size_t row = block.rows + 1;
    size_t column = block.first_column;
    for (size_t k = first_word; k < words.size(); ++k) {
      const std::string_view word = words[k];
      const Position at{row, column};
      if ((word == "+" || word == "-") && k > first_word && k + 1 < words.size() && is_complex(words[k + 1])) {
        // Octave and MATLAB print a complex number as three words: 1 + 2i.
        const std::string shown = std::string(words[k - 1]) + " " + std::string(word) + " " + std::string(words[k + 1]);
        fail_complex(Position{row, column - 1}, shown);
      }
      if (scale != 0 && scan_decimal(word[0] == '-' ? word.substr(1) : word) &&
          word.find_first_of("eE") == std::string_view::npos) {
        const std::string scaled = std::string(word) + "e" + std::to_string(scale);
        block.values.push_back(read_number(scaled, at));
      } else {
        block.values.push_back(read_number(word, at));
      }
      ++column;
    }
    const size_t numbers = column - block.first_column;
    if (numbers > 0) close_row(block.rows, block.columns, numbers);
  }

  /// Joins column blocks side by side into values_ and builds the matrix.
  Matrix assemble(const std::vector<Block>& blocks) {
    if (blocks.empty() || blocks.front().rows == 0) fail("parse-empty-text");
    const Block& first = blocks.front();
    size_t next_column = 1;
    for (const Block& block : blocks) {
      if (block.first_column != next_column) {
        fail("parse-block-start",
             {{"line", str(block.line)}, {"start", str(block.first_column)}, {"next", str(next_column)}});
      }
      if (block.rows != first.rows) {
        fail("parse-block-rows", {{"line", str(block.line)},
                                  {"rows", str(block.rows)},
                                  {"first_line", str(first.line)},
                                  {"first_rows", str(first.rows)}});
      }
      next_column += block.columns;
    }
    values_.clear();
    values_.reserve(first.rows * (next_column - 1));
    for (size_t r = 0; r < first.rows; ++r) {
      for (const Block& block : blocks) {
        const auto begin = block.values.begin() + static_cast<std::ptrdiff_t>(r * block.columns);
        values_.insert(values_.end(), begin, begin + static_cast<std::ptrdiff_t>(block.columns));
      }
    }
    return build(first.rows, next_column - 1, false);
  }

  std::string_view name_;
  std::string_view text_;  // what is left to parse
  int first_line_ = 1;     // the line number of text_'s first line
  std::string format_;
  Tool tool_ = Tool::kNumpy;
  std::vector<double> values_;
};

// ---------------------------------------------------------------------------------------------
// The formats, one file each in cpp/parse/: each reads what `from` has left after the front
// matter. The tests a format's text passes are beside its reader.

ParsedMatrix read_plain(const Reader& from);  // plain.cpp: CSV, TSV, ';'-separated, whitespace
/// One number typed into a table cell (attn::parse_cell), as a plain row's cell is read.
double read_cell(const Reader& from, size_t row, size_t column);
bool julia_header(std::string_view line, long* rows, long* columns);  // julia.cpp
ParsedMatrix read_julia(const Reader& from, const TextLine& header, long rows, long columns);
ParsedMatrix read_octave(const Reader& from);  // octave.cpp: Octave/MATLAB output under `A =`
bool is_r_header(std::string_view line);       // r.cpp: R's matrix and vector prints
bool is_r_vector(std::string_view all, int first_line, std::string_view first);
ParsedMatrix read_r_matrix(const Reader& from);
ParsedMatrix read_r_vector(const Reader& from);
ParsedMatrix read_latex(const Reader& from);  // latex.cpp
/// bracketed.cpp: NumPy, Python/JSON lists, MATLAB literals, PyTorch, JAX, TensorFlow, Mathematica.
ParsedMatrix read_bracketed(const Reader& from);

}  // namespace attn::parsing
