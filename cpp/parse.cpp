// parse_matrix(): reads the matrices people paste (numpy print output, nested lists, CSV/TSV,
// MATLAB) in one linear pass.
//
// Design notes:
//  - No recursion: nesting is tracked on a small explicit stack capped at kMaxDepth '[' levels
//    (plus at most one `array(` wrapper per level), so hostile input (10000 '[') fails with a
//    message instead of overflowing the stack. Every byte is looked at a bounded number of times.
//  - Two modes, chosen by the first non-blank character: text starting with '[', ']', '(', ')'
//    or `array(` is bracketed (numpy / Python / JSON / MATLAB); anything else is plain rows,
//    one per line, numbers separated by commas, tabs or spaces (CSV, TSV, whitespace).
//  - Inside brackets a newline is only whitespace: numpy wraps long rows over several lines,
//    so `[1 2\n 3 4]` is ONE row of 4 (as numpy means it); MATLAB rows need ';'.
//  - Commas are optional separators inside brackets (numpy prints none), but an empty element
//    (`[1,,2]`, `[,1]`) is an error. One trailing comma (`[1, 2,]`, `1,2,` at a line's end, or
//    after the whole matrix) and one trailing ';' in MATLAB text are accepted.
//  - Depth 3 is accepted only for a list of column vectors (`[array([[1], [2]]), ...]`, or the
//    same as a 3-D nested list, shape k x r x 1): they become the k columns of an r x k matrix.
//  - Numbers are converted exactly (correctly rounded). Short literals (<= 19 digits, power of
//    ten within 1e+-22: nearly everything numpy prints) take Clinger's exact fast path; the
//    rest go to std::from_chars where the standard library has it (libstdc++), otherwise to
//    strtod, which under Emscripten is musl's: correctly rounded and always '.' as the decimal
//    point. The syntax is checked by ScanDecimal first, so no converter ever sees hex floats,
//    "nan(...)" or a leading '+'. Nothing depends on the C locale.
//  - A number too small for a double (1e-400) becomes 0 like Python's float(); one too large
//    (1e999) is an error.
//  - Words that are numbers: inf, infinity, nan (any case, optional sign), np.inf / numpy.inf /
//    np.nan / numpy.nan, and True/False (1/0, no sign) for boolean masks. Anything else that is
//    not a number is an error, never skipped: a header row or a label line like "Q" fails.
//  - Non-breaking spaces (U+00A0, common when copying from web pages) count as whitespace.
#include "parse.h"

#include <cerrno>
#include <cfloat>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

namespace attn {
namespace {

// '[' levels: a matrix needs 2, a list of column vectors 3.
constexpr int kMaxDepth = 3;

// ---------------------------------------------------------------------------------------------
// Numbers

enum class NumberStatus { kOk, kNotNumber, kOutOfRange };

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

char ToLower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (ToLower(a[i]) != ToLower(b[i])) return false;
  }
  return true;
}

/// True if `s` is exactly a decimal literal: digits [. digits] [e [sign] digits], with at least
/// one significand digit (so "1.", ".5", "1e-3" pass; "1e", ".", "0x1p3", "1_0" do not).
bool ScanDecimal(std::string_view s) {
  size_t i = 0;
  size_t digits = 0;
  while (i < s.size() && IsDigit(s[i])) ++i, ++digits;
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && IsDigit(s[i])) ++i, ++digits;
  }
  if (digits == 0) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    size_t exp_digits = 0;
    while (i < s.size() && IsDigit(s[i])) ++i, ++exp_digits;
    if (exp_digits == 0) return false;
  }
  return i == s.size();
}

#if defined(__cpp_lib_to_chars) && __cpp_lib_to_chars >= 201611L
/// For a literal that passed ScanDecimal: true if its value is at least 1, i.e. an out-of-range
/// result is an overflow rather than an underflow. Works on the digits, so it is exact.
bool MagnitudeAtLeastOne(std::string_view s) {
  // Decimal exponent of the first non-zero significand digit, relative to the decimal point.
  constexpr int64_t kCap = int64_t{1} << 40;  // saturate: far beyond any double, no overflow
  int64_t order = 0;
  bool found = false;
  size_t i = 0;
  int64_t int_digits = 0;
  int64_t first_nonzero_int = -1;
  while (i < s.size() && IsDigit(s[i])) {
    if (first_nonzero_int < 0 && s[i] != '0') first_nonzero_int = int_digits;
    if (int_digits < kCap) ++int_digits;
    ++i;
  }
  if (first_nonzero_int >= 0) {
    order = int_digits - 1 - first_nonzero_int;
    found = true;
  }
  if (i < s.size() && s[i] == '.') {
    ++i;
    int64_t frac_pos = 0;
    while (i < s.size() && IsDigit(s[i])) {
      if (frac_pos < kCap) ++frac_pos;
      if (!found && s[i] != '0') {
        order = -frac_pos;
        found = true;
      }
      ++i;
    }
  }
  if (!found) return false;  // zero never overflows
  int64_t exponent = 0;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    bool negative = false;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) negative = s[i++] == '-';
    while (i < s.size() && IsDigit(s[i])) {
      if (exponent < kCap) exponent = exponent * 10 + (s[i] - '0');
      ++i;
    }
    if (negative) exponent = -exponent;
  }
  return order + exponent >= 0;
}
#endif

/// Clinger's fast path, for the common short literal: when the significand has at most 19
/// digits and is below 2^53, and the power of ten is exact in a double (10^0..10^22), a single
/// IEEE multiplication or division rounds correctly. Returns false for anything else (other
/// syntax included), which then takes the general path. Several times faster than the latter.
bool FastDecimal(std::string_view s, double* value) {
#if defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD != 0
  return false;  // x87-style excess precision would round twice
#else
  static constexpr double kPow10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                      1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                      1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
  uint64_t significand = 0;
  int significant_digits = 0;  // digits from the first non-zero one
  int exponent = 0;            // power of ten applied to `significand`
  bool any_digit = false;
  size_t i = 0;
  for (; i < s.size() && IsDigit(s[i]); ++i) {
    any_digit = true;
    if (significand != 0 || s[i] != '0') {
      if (++significant_digits > 19) return false;
      significand = significand * 10 + static_cast<uint64_t>(s[i] - '0');
    }
  }
  if (i < s.size() && s[i] == '.') {
    for (++i; i < s.size() && IsDigit(s[i]); ++i) {
      any_digit = true;
      if (significand != 0 || s[i] != '0') {
        if (++significant_digits > 19) return false;
        significand = significand * 10 + static_cast<uint64_t>(s[i] - '0');
      }
      --exponent;
      if (exponent < -400) return false;  // e.g. 0.000...0001: no int overflow, slow path
    }
  }
  if (!any_digit) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    bool negative = false;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) negative = s[i++] == '-';
    int explicit_exponent = 0;
    int exponent_digits = 0;
    for (; i < s.size() && IsDigit(s[i]); ++i) {
      if (++exponent_digits > 4) return false;
      explicit_exponent = explicit_exponent * 10 + (s[i] - '0');
    }
    if (exponent_digits == 0) return false;
    exponent += negative ? -explicit_exponent : explicit_exponent;
  }
  if (i != s.size()) return false;
  if (significand == 0) {
    *value = 0.0;
    return true;
  }
  if (significand > (uint64_t{1} << 53) || exponent < -22 || exponent > 22) return false;
  const double m = static_cast<double>(significand);  // exact: at most 2^53
  *value = exponent >= 0 ? m * kPow10[exponent] : m / kPow10[-exponent];
  return true;
#endif
}

/// Converts an unsigned decimal literal (already checked by ScanDecimal) exactly.
NumberStatus ConvertDecimal(std::string_view body, double* value) {
#if defined(__cpp_lib_to_chars) && __cpp_lib_to_chars >= 201611L
  const std::from_chars_result result =
      std::from_chars(body.data(), body.data() + body.size(), *value, std::chars_format::general);
  if (result.ec == std::errc::result_out_of_range) {
    if (MagnitudeAtLeastOne(body)) return NumberStatus::kOutOfRange;
    *value = 0.0;  // underflow: the nearest double is 0, as Python's float() says
    return NumberStatus::kOk;
  }
  if (result.ec != std::errc() || result.ptr != body.data() + body.size()) {
    return NumberStatus::kNotNumber;
  }
  return NumberStatus::kOk;
#else
  // No floating-point from_chars (libc++ before 20, e.g. Emscripten's): strtod needs a
  // terminated copy. Under Emscripten it is musl's, which rounds correctly and ignores locale.
  const std::string copy(body);
  char* end = nullptr;
  errno = 0;
  const double result = std::strtod(copy.c_str(), &end);
  if (end != copy.c_str() + copy.size()) return NumberStatus::kNotNumber;
  if (errno == ERANGE && std::isinf(result)) return NumberStatus::kOutOfRange;
  *value = result;  // an underflow gives 0 or a subnormal, as wanted
  return NumberStatus::kOk;
#endif
}

/// Reads one whitespace/bracket-delimited word as a number (see the notes at the top).
NumberStatus ParseNumber(std::string_view word, double* value) {
  bool negative = false;
  std::string_view body = word;
  if (!body.empty() && (body[0] == '+' || body[0] == '-')) {
    negative = body[0] == '-';
    body.remove_prefix(1);
  }
  double magnitude = 0.0;
  if (FastDecimal(body, &magnitude)) {
    // done
  } else if (ScanDecimal(body)) {
    const NumberStatus status = ConvertDecimal(body, &magnitude);
    if (status != NumberStatus::kOk) return status;
  } else {
    for (std::string_view prefix : {"np.", "numpy."}) {
      if (body.size() > prefix.size() && EqualsIgnoreCase(body.substr(0, prefix.size()), prefix)) {
        body.remove_prefix(prefix.size());
        break;
      }
    }
    if (body.size() == word.size() && EqualsIgnoreCase(word, "true")) {
      magnitude = 1.0;  // booleans (masks) take no sign
    } else if (body.size() == word.size() && EqualsIgnoreCase(word, "false")) {
      magnitude = 0.0;
    } else if (EqualsIgnoreCase(body, "inf") || EqualsIgnoreCase(body, "infinity")) {
      magnitude = std::numeric_limits<double>::infinity();
    } else if (EqualsIgnoreCase(body, "nan")) {
      magnitude = std::numeric_limits<double>::quiet_NaN();
    } else {
      return NumberStatus::kNotNumber;
    }
  }
  *value = negative ? -magnitude : magnitude;
  return NumberStatus::kOk;
}

/// Shows a found word in a message: at most ~30 characters, non-printable bytes as \xNN, so a
/// message stays short and valid text whatever bytes came in.
std::string Quote(std::string_view word) {
  constexpr size_t kMaxShown = 30;
  std::string out = "'";
  const size_t shown = word.size() > kMaxShown ? kMaxShown - 3 : word.size();
  for (size_t i = 0; i < shown; ++i) {
    const unsigned char c = static_cast<unsigned char>(word[i]);
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      static const char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  if (shown < word.size()) out += "...";
  out += "'";
  return out;
}

/// Shown for a word that is out of the range of a double: unquoted, shortened like Quote.
std::string Shorten(std::string_view word) {
  const std::string quoted = Quote(word);
  return quoted.substr(1, quoted.size() - 2);
}

// ---------------------------------------------------------------------------------------------
// Tokens

enum class TokenKind { kOpen, kClose, kLParen, kRParen, kComma, kSemicolon, kNewline, kWord, kEnd };

struct Token {
  TokenKind kind = TokenKind::kEnd;
  std::string_view text;
  int line = 1;
};

// Bytes that end a word: blanks, line breaks, the delimiters []();, and 0xC2 (maybe a NBSP).
struct EndsWordTable {
  bool ends[256] = {};
  constexpr EndsWordTable() {
    for (unsigned char c : {' ', '\t', '\v', '\f', '\n', '\r', '[', ']', '(', ')', ',', ';'}) {
      ends[c] = true;
    }
    ends[0xc2] = true;
  }
  constexpr bool operator[](unsigned char c) const { return ends[c]; }
};
constexpr EndsWordTable kEndsWord{};

/// Splits text into brackets, separators and words. Newlines (\n, \r\n, \r) are tokens only
/// when asked for (plain rows); in bracketed text they are whitespace.
class Lexer {
 public:
  Lexer(std::string_view text, bool newline_tokens) : text_(text), newline_tokens_(newline_tokens) {}

  Token Next() {
    if (has_peeked_) {
      has_peeked_ = false;
      return peeked_;
    }
    return Scan();
  }

  const Token& Peek() {
    if (!has_peeked_) {
      peeked_ = Scan();
      has_peeked_ = true;
    }
    return peeked_;
  }

 private:
  static bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\v' || c == '\f'; }

  bool IsNbspAt(size_t i) const {
    return i + 1 < text_.size() && text_[i] == '\xc2' && text_[i + 1] == '\xa0';
  }

  Token Scan() {
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (IsBlank(c)) {
        ++pos_;
      } else if (IsNbspAt(pos_)) {
        pos_ += 2;
      } else if (c == '\n' || c == '\r') {
        const int line = line_;
        pos_ += (c == '\r' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '\n') ? 2 : 1;
        ++line_;
        if (newline_tokens_) return Token{TokenKind::kNewline, "\n", line};
      } else {
        break;
      }
    }
    if (pos_ >= text_.size()) return Token{TokenKind::kEnd, "", line_};
    const size_t start = pos_;
    TokenKind kind = TokenKind::kWord;
    switch (text_[pos_]) {
      case '[': kind = TokenKind::kOpen; break;
      case ']': kind = TokenKind::kClose; break;
      case '(': kind = TokenKind::kLParen; break;
      case ')': kind = TokenKind::kRParen; break;
      case ',': kind = TokenKind::kComma; break;
      case ';': kind = TokenKind::kSemicolon; break;
      default: break;
    }
    if (kind != TokenKind::kWord) {
      ++pos_;
    } else {
      // The hot loop: one table look-up per byte; 0xC2 stops it only to check for a NBSP.
      size_t end = pos_ + 1;  // a local, so the loop keeps it in a register
      while (end < text_.size()) {
        const unsigned char c = static_cast<unsigned char>(text_[end]);
        if (kEndsWord[c] && (c != 0xc2 || IsNbspAt(end))) break;
        ++end;
      }
      pos_ = end;
    }
    return Token{kind, text_.substr(start, pos_ - start), line_};
  }

  std::string_view text_;
  bool newline_tokens_;
  size_t pos_ = 0;
  int line_ = 1;
  bool has_peeked_ = false;
  Token peeked_;
};

bool IsArrayWord(std::string_view word) {
  return word == "array" || word == "np.array" || word == "numpy.array";
}

std::string Count(size_t n, const char* singular, const char* plural) {
  return std::to_string(n) + " " + (n == 1 ? singular : plural);
}

// ---------------------------------------------------------------------------------------------
// The parser

class Parser {
 public:
  Parser(std::string_view text, std::string_view name) : text_(text), name_(name) {}

  Matrix Parse() {
    Lexer probe(text_, false);
    const Token first = probe.Next();
    if (first.kind == TokenKind::kEnd) Fail("no numbers found (the text is empty)");
    const bool bracketed =
        first.kind == TokenKind::kOpen || first.kind == TokenKind::kClose ||
        first.kind == TokenKind::kLParen || first.kind == TokenKind::kRParen ||
        (IsArrayWord(first.text) && probe.Peek().kind == TokenKind::kLParen);
    return bracketed ? ParseBracketed() : ParsePlain();
  }

 private:
  [[noreturn]] void Fail(const std::string& message) const {
    throw InputError(std::string(name_) + ": " + message);
  }

  static std::string RowColumn(size_t row, size_t column) {
    return "row " + std::to_string(row) + ", column " + std::to_string(column);
  }

  /// Appends the number read from `word`; on failure throws, naming `where` (a "row R,
  /// column C", only built then: building it for every number would dominate the run time).
  template <typename WhereFn>
  void AddNumber(std::string_view word, const WhereFn& where) {
    double value = 0.0;
    const NumberStatus status = ParseNumber(word, &value);
    if (status == NumberStatus::kOk) {
      values_.push_back(value);
      return;
    }
    if (status == NumberStatus::kOutOfRange) {
      Fail(where() + ": " + Shorten(word) + " is out of the range of a double");
    }
    if (word == "...") {
      Fail(where() + ": expected a number but found '...': numpy shortened this array; print it "
                     "in full with np.set_printoptions(threshold=sys.maxsize)");
    }
    Fail(where() + ": expected a number but found " + Quote(word));
  }

  // ----- plain rows: CSV, TSV, whitespace -----

  Matrix ParsePlain() {
    Lexer lexer(text_, true);
    size_t rows = 0;
    size_t columns = 0;
    size_t in_row = 0;         // numbers on the current line
    bool after_comma = false;  // the last token on this line was a comma
    for (;;) {
      const Token token = lexer.Next();
      const auto where = [&] { return RowColumn(rows + 1, in_row + 1); };
      switch (token.kind) {
        case TokenKind::kWord:
          AddNumber(token.text, where);
          ++in_row;
          after_comma = false;
          break;
        case TokenKind::kComma:
          // Separates two numbers; a line may end with one, but may not start with one.
          if (in_row == 0 || after_comma) Fail(where() + ": expected a number but found ','");
          after_comma = true;
          break;
        case TokenKind::kNewline:
        case TokenKind::kEnd:
          if (in_row > 0) {  // blank lines are skipped
            ++rows;
            if (rows == 1) {
              columns = in_row;
            } else if (in_row != columns) {
              Fail("row " + std::to_string(rows) + " has " + Count(in_row, "number", "numbers") +
                   " but row 1 has " + std::to_string(columns));
            }
          }
          in_row = 0;
          after_comma = false;
          if (token.kind == TokenKind::kEnd) return Build(rows, columns, false);
          break;
        default:
          Fail(where() + ": expected a number but found " + Quote(token.text));
      }
    }
  }

  // ----- bracketed text: numpy, Python/JSON lists, MATLAB -----

  // One open '[' list or `array(` wrapper.
  struct Frame {
    bool paren = false;  // `array(` ... `)`; otherwise a '[' list
    int line = 1;        // where it opened, for unbalanced-bracket messages
    // Lists:
    size_t count = 0;             // elements so far
    size_t row_start = 0;         // count at the last ';' (MATLAB rows, depth 1 only)
    bool expect_element = true;   // just after '[', ',' or ';': a separator here is an error
    bool has_lists = false;
    bool has_numbers = false;
    // Wrappers: 0 expects '[', 1 after the list, 2 after ',' (expects dtype= or ')'),
    // 3 after dtype= (expects ')').
    int paren_state = 0;
  };

  Frame& ListAt(int depth) { return stack_[static_cast<size_t>(list_index_[depth])]; }

  /// "row R, column C" of the element that would come next at the current depth, in terms of
  /// the final matrix (for a list of column vectors, vector k is column k); just "row R" in an
  /// outer list of rows.
  std::string Where() {
    switch (depth_) {
      case 1: {
        const Frame& list = ListAt(1);
        if (list.has_lists) return "row " + std::to_string(list.count + 1);
        return RowColumn(matlab_rows_.size() + 1, list.count - list.row_start + 1);
      }
      case 2:
        return RowColumn(ListAt(1).count + 1, ListAt(2).count + 1);
      default:
        return RowColumn(ListAt(2).count + 1, ListAt(1).count + 1);
    }
  }

  std::string Line(int line) { return "line " + std::to_string(line); }

  /// Checks that a list ('[' or `array(`) may start here, before pushing it.
  void CheckListMayStart(const Token& token) {
    if (stack_.empty()) return;
    Frame& top = stack_.back();
    if (top.paren) {
      if (top.paren_state != 0 || token.kind != TokenKind::kOpen) {
        Fail("expected '[' after 'array(' at " + Line(top.line) + " but found " +
             Quote(token.text));
      }
      return;
    }
    if (top.has_numbers || (ndim_ != 0 && depth_ >= ndim_)) {
      Fail(Where() + ": expected a number but found " + Quote(token.text));
    }
  }

  void OpenList(const Token& token) {
    CheckListMayStart(token);
    if (depth_ == kMaxDepth) {
      Fail("nested too deeply: the '[' at " + Line(token.line) +
           " opens a 4th level, but a matrix has 2 levels (3 for a list of column vectors)");
    }
    Frame frame;
    frame.line = token.line;
    stack_.push_back(frame);
    ++depth_;
    list_index_[depth_] = static_cast<int>(stack_.size()) - 1;
  }

  void OpenWrapper(const Token& token) {
    CheckListMayStart(token);
    lexer_->Next();  // the '(' seen by Peek
    Frame frame;
    frame.paren = true;
    frame.line = token.line;
    stack_.push_back(frame);
  }

  /// A list or wrapper has just been completed: it is one element of whatever encloses it.
  void ElementDone() {
    if (stack_.empty()) {
      done_ = true;
      return;
    }
    Frame& top = stack_.back();
    if (top.paren) {
      top.paren_state = 1;
    } else {
      ++top.count;
      top.has_lists = true;
      top.expect_element = false;
    }
  }

  void CloseList(const Token& token) {
    if (stack_.empty()) {
      Fail("unbalanced brackets: ']' at " + Line(token.line) + " has no matching '['");
    }
    Frame& top = stack_.back();
    if (top.paren) {
      Fail("unbalanced brackets: ']' at " + Line(token.line) + " closes the '(' from " +
           Line(top.line));
    }
    const size_t count = top.count;
    if (depth_ == 1 && !top.has_lists) {
      // The last MATLAB row (or the only row); a trailing ';' leaves an empty one to drop.
      const size_t last_row = count - top.row_start;
      if (last_row > 0 || matlab_rows_.empty()) matlab_rows_.push_back(last_row);
    } else if (depth_ == 2) {
      depth2_lengths_.push_back(count);
    } else if (depth_ == 3 && count != 1) {
      // Row `ListAt(2).count + 1` of item `ListAt(1).count + 1` holds `count` numbers.
      Fail("expected a matrix (2 dimensions) but found a 3-D array: row " +
           std::to_string(ListAt(2).count + 1) + " of item " +
           std::to_string(ListAt(1).count + 1) + " has " + Count(count, "number", "numbers") +
           "; only a list of column vectors (each r x 1) is joined into a matrix");
    }
    stack_.pop_back();
    --depth_;
    ElementDone();
  }

  void HandleWord(const Token& token) {
    if (IsArrayWord(token.text) && lexer_->Peek().kind == TokenKind::kLParen) {
      OpenWrapper(token);
      return;
    }
    if (stack_.empty()) {
      Fail("expected '[' at " + Line(token.line) + " but found " + Quote(token.text));
    }
    Frame& top = stack_.back();
    if (top.paren) {
      constexpr std::string_view kDtype = "dtype=";
      if (top.paren_state == 2 && token.text.size() > kDtype.size() &&
          token.text.substr(0, kDtype.size()) == kDtype) {
        top.paren_state = 3;  // the dtype says nothing the numbers don't: ignored
        return;
      }
      Fail(std::string("expected ") + (top.paren_state == 0   ? "'['"
                                       : top.paren_state == 1 ? "',' or ')'"
                                       : top.paren_state == 2 ? "'dtype=...' or ')'"
                                                              : "')'") +
           " in the 'array(' from " + Line(top.line) + " but found " + Quote(token.text));
    }
    if (top.has_lists || (ndim_ != 0 && depth_ < ndim_)) {
      Fail(Where() + ": expected '[' (every row is a list) but found " + Quote(token.text));
    }
    AddNumber(token.text, [this] { return Where(); });
    if (ndim_ == 0) ndim_ = depth_;
    ++top.count;
    top.has_numbers = true;
    top.expect_element = false;
  }

  void HandleComma(const Token& token) {
    if (stack_.empty()) {
      // One trailing comma after the whole matrix, as copied from a line of code.
      if (done_ && !trailing_comma_) {
        trailing_comma_ = true;
        return;
      }
      Fail("expected the end of the text after the matrix but found ',' at " + Line(token.line));
    }
    Frame& top = stack_.back();
    if (top.paren) {
      if (top.paren_state != 1) {
        Fail("unexpected ',' at " + Line(token.line) + " in the 'array(' from " + Line(top.line));
      }
      top.paren_state = 2;
      return;
    }
    if (top.expect_element) Fail(Where() + ": expected a number but found ','");
    top.expect_element = true;
  }

  void HandleSemicolon(const Token& token) {
    const bool matlab_row_end = !stack_.empty() && !stack_.back().paren && depth_ == 1 &&
                                !stack_.back().has_lists;
    if (!matlab_row_end) {
      Fail("unexpected ';' at " + Line(token.line) +
           ": ';' ends a row only in MATLAB-style text like [1 2; 3 4]");
    }
    Frame& top = stack_.back();
    if (top.expect_element) Fail(Where() + ": expected a number but found ';'");
    matlab_rows_.push_back(top.count - top.row_start);
    top.row_start = top.count;
    top.expect_element = true;
  }

  void HandleRParen(const Token& token) {
    if (stack_.empty()) {
      Fail("unbalanced brackets: ')' at " + Line(token.line) + " has no matching '('");
    }
    Frame& top = stack_.back();
    if (!top.paren) {
      Fail("unbalanced brackets: ')' at " + Line(token.line) + " closes the '[' from " +
           Line(top.line));
    }
    if (top.paren_state == 0) {
      Fail("expected '[' after 'array(' at " + Line(top.line) + " but found ')'");
    }
    stack_.pop_back();
    ElementDone();
  }

  Matrix ParseBracketed() {
    Lexer lexer(text_, false);
    lexer_ = &lexer;
    for (;;) {
      const Token token = lexer.Next();
      if (token.kind == TokenKind::kEnd) break;
      if (done_ && token.kind != TokenKind::kComma) {
        if (token.kind == TokenKind::kClose) {
          Fail("unbalanced brackets: ']' at " + Line(token.line) + " has no matching '['");
        }
        if (token.kind == TokenKind::kRParen) {
          Fail("unbalanced brackets: ')' at " + Line(token.line) + " has no matching '('");
        }
        Fail("expected the end of the text after the matrix but found " + Quote(token.text) +
             " at " + Line(token.line) + " (give one matrix at a time)");
      }
      switch (token.kind) {
        case TokenKind::kOpen: OpenList(token); break;
        case TokenKind::kClose: CloseList(token); break;
        case TokenKind::kWord: HandleWord(token); break;
        case TokenKind::kComma: HandleComma(token); break;
        case TokenKind::kSemicolon: HandleSemicolon(token); break;
        case TokenKind::kRParen: HandleRParen(token); break;
        case TokenKind::kLParen:
          if (stack_.empty()) Fail("expected '[' at " + Line(token.line) + " but found '('");
          if (stack_.back().paren) {
            Fail("expected '[' after 'array(' at " + Line(stack_.back().line) + " but found '('");
          }
          Fail(Where() + ": expected a number but found '('");
        default: break;  // no newline tokens in this mode
      }
    }
    lexer_ = nullptr;
    if (!stack_.empty()) {
      const Frame& open = stack_.back();
      Fail(std::string("unbalanced brackets: '") + (open.paren ? "(" : "[") + "' at " +
           Line(open.line) + " is never closed");
    }
    return Finish();
  }

  /// Checks the collected shape and builds the matrix.
  Matrix Finish() {
    if (ndim_ == 0) Fail("no numbers found (only empty lists)");
    if (ndim_ == 1) {
      for (size_t i = 1; i < matlab_rows_.size(); ++i) {
        if (matlab_rows_[i] != matlab_rows_[0]) {
          Fail("row " + std::to_string(i + 1) + " has " +
               Count(matlab_rows_[i], "number", "numbers") + " but row 1 has " +
               std::to_string(matlab_rows_[0]));
        }
      }
      return Build(matlab_rows_.size(), matlab_rows_[0], false);
    }
    // ndim 2: depth-2 lists are rows. ndim 3: they are column vectors, each of length r.
    for (size_t i = 1; i < depth2_lengths_.size(); ++i) {
      if (depth2_lengths_[i] == depth2_lengths_[0]) continue;
      if (ndim_ == 2) {
        Fail("row " + std::to_string(i + 1) + " has " +
             Count(depth2_lengths_[i], "number", "numbers") + " but row 1 has " +
             std::to_string(depth2_lengths_[0]));
      }
      Fail("column vector " + std::to_string(i + 1) + " has " +
           Count(depth2_lengths_[i], "row", "rows") + " but column vector 1 has " +
           std::to_string(depth2_lengths_[0]) + " (they become the columns of one matrix)");
    }
    if (ndim_ == 2) return Build(depth2_lengths_.size(), depth2_lengths_[0], false);
    return Build(depth2_lengths_[0], depth2_lengths_.size(), true);
  }

  /// Copies values_ into a rows x columns matrix; `transposed` when values_ holds columns.
  Matrix Build(size_t rows, size_t columns, bool transposed) {
    if (rows == 0 || columns == 0) Fail("no numbers found (the text is empty)");
    const auto r = static_cast<Eigen::Index>(rows);
    const auto c = static_cast<Eigen::Index>(columns);
    if (transposed) {
      using ColMajor = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::ColMajor>;
      return Eigen::Map<const ColMajor>(values_.data(), r, c);
    }
    return Eigen::Map<const Matrix>(values_.data(), r, c);
  }

  std::string_view text_;
  std::string_view name_;
  std::vector<double> values_;
  // Bracketed mode state.
  Lexer* lexer_ = nullptr;
  std::vector<Frame> stack_;            // at most 2 * kMaxDepth frames
  int list_index_[kMaxDepth + 1] = {};  // stack_ index of the open list at each depth
  int depth_ = 0;                       // open '[' lists
  int ndim_ = 0;                        // depth of the numbers, 0 until the first one
  std::vector<size_t> matlab_rows_;     // row lengths of a depth-1 list
  std::vector<size_t> depth2_lengths_;  // lengths of the depth-2 lists, in order
  bool done_ = false;                   // the outermost list or wrapper has closed
  bool trailing_comma_ = false;
};

}  // namespace

Matrix parse_matrix(std::string_view text, std::string_view name) {
  return Parser(text, name).Parse();
}

}  // namespace attn
