// Plain rows, one per line: CSV, TSV, semicolon-separated values, whitespace-separated rows.
//
//  - Plain rows: ';' anywhere makes semicolon-separated cells, whose ',' is a decimal comma (as
//    European spreadsheets write CSV). Without ';', a comma is a decimal comma only when every
//    comma sits between two digits, cells are separated by blanks and none holds two commas
//    (`1,5\t2,25`); otherwise commas separate cells (CSV; `1,5` alone is two numbers). A
//    decimal comma that could be a thousands separator (`1,234`) is refused: use a dot.
#include "scan.h"

#include <algorithm>

namespace attn::parsing {
namespace {

class PlainRows : public Reader {
 public:
  explicit PlainRows(const Reader& from) : Reader(from) {}

  /// The text as one cell of a table: one number, a decimal comma read as a point.
  double parse_cell(size_t row, size_t column) {
    const Position at{row, column};
    const std::string_view word = trim(text_);
    if (word.empty()) fail("parse-cell-empty", at);
    if (std::any_of(word.begin(), word.end(), [](char c) { return is_space(c) || c == ';'; })) {
      fail("parse-cell-one-number", at, {{"word", quote(word)}});
    }
    return read_cell(word, CellSeparator::kBlank, at);
  }

  enum class CellSeparator {
    kComma,      // CSV (and blanks)
    kSemicolon,  // ';' between cells, ',' a decimal comma
    kBlank,      // tabs or spaces between cells, ',' a decimal comma
  };

  /// Chooses how commas are read (see the notes at the top). Quoted cells are skipped: a comma
  /// inside quotes belongs to the cell.
  CellSeparator choose_separator() const {
    if (text_.find(';') != std::string_view::npos) return CellSeparator::kSemicolon;
    if (text_.find(',') == std::string_view::npos) return CellSeparator::kComma;
    bool any_comma = false;
    bool two_words_on_a_line = false;
    size_t words_on_line = 0;
    size_t commas_in_word = 0;
    bool in_word = false;
    for (size_t i = 0; i < text_.size(); ++i) {
      const char c = text_[i];
      if (c == '"') {  // a quoted cell: to the closing quote on this line
        while (i + 1 < text_.size() && text_[i + 1] != '"' && text_[i + 1] != '\n') ++i;
        if (i + 1 < text_.size() && text_[i + 1] == '"') ++i;
      }
      if (is_space(c)) {
        in_word = false;
        commas_in_word = 0;
        if (c == '\n' || c == '\r') words_on_line = 0;
        continue;
      }
      if (!in_word) {
        in_word = true;
        if (++words_on_line >= 2) two_words_on_a_line = true;
      }
      if (c == ',') {
        any_comma = true;
        if (++commas_in_word > 1) return CellSeparator::kComma;  // 1,2,3 is CSV
        if (i == 0 || i + 1 >= text_.size() || !is_digit(text_[i - 1]) || !is_digit(text_[i + 1])) {
          return CellSeparator::kComma;
        }
      }
    }
    return any_comma && two_words_on_a_line ? CellSeparator::kBlank : CellSeparator::kComma;
  }

  /// A decimal literal whose separator may be a thousands separator: 1 to 3 digits (not a lone
  /// 0), the separator, exactly 3 digits (`1,234`, `-12.500`).
  static bool looks_like_thousands(std::string_view word, char separator) {
    if (!word.empty() && (word[0] == '-' || word[0] == '+')) word.remove_prefix(1);
    const size_t at = word.find(separator);
    if (at == std::string_view::npos || at == 0 || at > 3 || word.size() - at - 1 != 3) return false;
    if (at == 1 && word[0] == '0') return false;
    for (size_t i = 0; i < word.size(); ++i) {
      if (i != at && !is_digit(word[i])) return false;
    }
    return true;
  }

  /// One cell of plain rows: quotes removed, a decimal comma read as a point.
  double read_cell(std::string_view word, CellSeparator separator, Position at) {
    if (separator == CellSeparator::kComma && word[0] != '"') return read_number(word, at);
    if (word.size() >= 2 && word.front() == '"' && word.back() == '"') {
      word = trim(word.substr(1, word.size() - 2));
    }
    const size_t comma = word.find(',');
    if (comma == std::string_view::npos) {
      if (decimal_commas_in_text_ && looks_like_thousands(word, '.')) {
        fail("parse-ambiguous-point", at,
             {{"word", quote(word)}, {"point", std::string(word)}, {"digits", without(word, '.')}});
      }
      return read_number(word, at);
    }
    if (word.find('.') != std::string_view::npos || word.find(',', comma + 1) != std::string_view::npos) {
      fail("parse-two-marks", at, {{"word", quote(word)}});
    }
    std::string point(word);
    point[comma] = '.';
    if (separator != CellSeparator::kSemicolon && looks_like_thousands(word, ',')) {
      fail("parse-ambiguous-comma", at, {{"word", quote(word)}, {"point", point}, {"digits", without(word, ',')}});
    }
    double value = 0.0;
    const NumberStatus status = parse_number(point, &value);
    if (status == NumberStatus::kOutOfRange) fail("parse-out-of-range", at, {{"word", shorten(word)}});
    if (status != NumberStatus::kOk) fail("parse-not-number", at, {{"word", quote(word)}});
    decimal_commas_ = true;
    return value;
  }

  static std::string without(std::string_view word, char c) {
    std::string out;
    for (char x : word) {
      if (x != c) out += x;
    }
    return out;
  }

  Matrix parse_plain() {
    const CellSeparator separator = choose_separator();
    decimal_commas_in_text_ = separator != CellSeparator::kComma && text_.find(',') != std::string_view::npos;
    LexerOptions options;
    options.newline_tokens = true;
    options.comma_in_words = separator != CellSeparator::kComma;
    options.quotes = true;
    Lexer lexer(text_, first_line_, options);
    const TokenKind separator_kind = separator == CellSeparator::kSemicolon ? TokenKind::kSemicolon : TokenKind::kComma;
    const char separator_char = separator == CellSeparator::kSemicolon ? ';' : ',';
    size_t rows = 0;
    size_t columns = 0;
    size_t in_row = 0;             // numbers on the current line
    bool after_separator = false;  // the last token on this line was a separator
    bool any_separator = false;
    bool any_tab = text_.find('\t') != std::string_view::npos;
    for (;;) {
      const Token token = lexer.next();
      const Position at{rows + 1, in_row + 1};
      if (token.kind == TokenKind::kWord) {
        if (separator == CellSeparator::kSemicolon && in_row > 0 && !after_separator) {
          fail("parse-semicolon-expected", at, {{"word", quote(token.text)}});
        }
        values_.push_back(read_cell(token.text, separator, at));
        ++in_row;
        after_separator = false;
      } else if (token.kind == separator_kind) {
        // Separates two numbers; a line may end with one, but may not start with one.
        if (in_row == 0 || after_separator) {
          fail("parse-not-number", at, {{"word", quote(std::string(1, separator_char))}});
        }
        after_separator = true;
        any_separator = true;
      } else if (token.kind == TokenKind::kNewline || token.kind == TokenKind::kEnd) {
        if (in_row > 0) close_row(rows, columns, in_row);  // blank lines are skipped
        in_row = 0;
        after_separator = false;
        if (token.kind == TokenKind::kEnd) break;
      } else {
        fail("parse-not-number", at, {{"word", quote(token.text)}});
      }
    }
    if (separator == CellSeparator::kSemicolon) {
      format_ = "semicolon-separated values";
    } else if (any_tab) {
      format_ = "TSV";
    } else if (any_separator) {
      format_ = "CSV";
    } else {
      format_ = "whitespace-separated rows";
    }
    if (decimal_commas_) format_ += " with decimal commas";
    return build(rows, columns, false);
  }

  bool decimal_commas_in_text_ = false;
  bool decimal_commas_ = false;
};

}  // namespace

ParsedMatrix read_plain(const Reader& from) {
  PlainRows reader(from);
  return reader.result(reader.parse_plain());
}

double read_cell(const Reader& from, size_t row, size_t column) { return PlainRows(from).parse_cell(row, column); }

}  // namespace attn::parsing
