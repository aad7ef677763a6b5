// parse_matrix(): reads the matrices people paste, in one linear pass per format.
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
//  - No recursion: nesting is tracked on a small explicit stack capped at kMaxDepth bracket
//    levels (plus at most one wrapper per level), so hostile input (10000 '[') fails with a
//    message instead of overflowing the stack. Every byte is looked at a bounded number of times.
//  - Inside brackets a newline is only whitespace: numpy wraps long rows over several lines,
//    so `[1 2\n 3 4]` is ONE row of 4 (as numpy means it); MATLAB rows need ';'.
//  - Commas are optional separators inside brackets (numpy prints none), but an empty element
//    (`[1,,2]`, `[,1]`) is an error. One trailing comma (`[1, 2,]`, `1,2,` at a line's end, or
//    after the whole matrix) and one trailing ';' in MATLAB text are accepted.
//  - Depth 3 is accepted only for a list of column vectors (`[array([[1], [2]]), ...]`, or the
//    same as a 3-D nested list, shape k x r x 1): they become the k columns of an r x k matrix.
//    Any other 3-D array is read to its end, so the refusal can name its slice shapes.
//  - Plain rows: ';' anywhere makes semicolon-separated cells, whose ',' is a decimal comma (as
//    European spreadsheets write CSV). Without ';', a comma is a decimal comma only when every
//    comma sits between two digits, cells are separated by blanks and none holds two commas
//    (`1,5\t2,25`); otherwise commas separate cells (CSV; `1,5` alone is two numbers). A
//    decimal comma that could be a thousands separator (`1,234`) is refused: use a dot.
//  - Numbers are converted exactly (correctly rounded) by fast_float, the same natively and in
//    wasm, always with '.' as the decimal point. The syntax is checked by scan_decimal first, so
//    the converter never sees hex floats, "nan(...)" or a leading '+'. Nothing depends on the C
//    locale.
//  - A number too small for a double (1e-400) becomes 0 like Python's float(); one too large
//    (1e999) is an error.
//  - Words that are numbers: inf, infinity, nan (any case, optional sign), np.inf / numpy.inf /
//    np.nan / numpy.nan, and True/False (1/0, no sign) for boolean masks. Anything else that is
//    not a number is an error, never skipped: a header row or a label line like "Q" fails.
#include "parse.h"

#include <fast_float/fast_float.h>

#include <algorithm>
#include <system_error>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

namespace attn {
namespace {

// Bracket levels: a matrix needs 2, a list of column vectors 3.
constexpr int kMaxDepth = 3;

// ---------------------------------------------------------------------------------------------
// Text

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\v' || c == '\f'; }
bool is_space(char c) { return is_blank(c) || c == '\n' || c == '\r'; }
bool is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && s.substr(0, prefix.size()) == prefix;
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

/// Length of the line break at s[i] (\n, \r\n or \r), 0 if there is none.
size_t line_break_at(std::string_view s, size_t i) {
  if (s[i] == '\n') return 1;
  if (s[i] != '\r') return 0;
  return (i + 1 < s.size() && s[i + 1] == '\n') ? 2 : 1;
}

int count_line_breaks(std::string_view s) {
  int breaks = 0;
  for (size_t i = 0; i < s.size();) {
    const size_t n = line_break_at(s, i);
    breaks += n > 0;
    i += n > 0 ? n : 1;
  }
  return breaks;
}

/// One line of a text, without its line break, and its number (from 1).
struct TextLine {
  std::string_view text;
  int number = 1;
};

std::vector<TextLine> split_lines(std::string_view text, int first_line) {
  std::vector<TextLine> lines;
  size_t start = 0;
  int number = first_line;
  for (size_t i = 0; i <= text.size();) {
    const size_t n = i < text.size() ? line_break_at(text, i) : 1;
    if (n == 0) {
      ++i;
      continue;
    }
    lines.push_back({text.substr(start, i - start), number++});
    i += n;
    start = i;
  }
  return lines;
}

/// The blank-separated words of a line.
std::vector<std::string_view> split_words(std::string_view line) {
  std::vector<std::string_view> words;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && is_space(line[i])) ++i;
    const size_t start = i;
    while (i < line.size() && !is_space(line[i])) ++i;
    if (i > start) words.push_back(line.substr(start, i - start));
  }
  return words;
}

/// Decodes the UTF-8 sequence at s[i]: its length, or 0 if it is not valid UTF-8.
size_t decode_utf8(std::string_view s, size_t i, char32_t* code_point) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char lead = byte(i);
  size_t length = 0;
  char32_t c = 0;
  if (lead >= 0xc2 && lead <= 0xdf) {
    length = 2, c = lead & 0x1f;
  } else if (lead >= 0xe0 && lead <= 0xef) {
    length = 3, c = lead & 0x0f;
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    length = 4, c = lead & 0x07;
  } else {
    return 0;
  }
  if (i + length > s.size()) return 0;
  for (size_t k = 1; k < length; ++k) {
    if ((byte(i + k) & 0xc0) != 0x80) return 0;
    c = (c << 6) | (byte(i + k) & 0x3f);
  }
  const bool overlong = (length == 3 && c < 0x800) || (length == 4 && c < 0x10000);
  if (overlong || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff)) return 0;
  *code_point = c;
  return length;
}

/// What a non-ASCII character becomes before parsing; nullptr keeps it.
const char* ascii_for(char32_t c) {
  switch (c) {
    case 0x2212:  // minus sign
    case 0x2010:  // hyphen
    case 0x2011:  // non-breaking hyphen
    case 0x2012:  // figure dash
    case 0x2013:  // en dash (typeset minus in many PDFs)
    case 0xfe63:  // small hyphen-minus
    case 0xff0d:  // fullwidth hyphen-minus
      return "-";
    case 0xff0b: return "+";
    case 0x00a0:  // no-break space
    case 0x1680:
    case 0x202f:  // narrow no-break space
    case 0x205f:
    case 0x3000:
      return " ";
    case 0x0085:
    case 0x2028:  // line separator
    case 0x2029:  // paragraph separator
      return "\n";
    case 0x00ad:  // soft hyphen
    case 0x200b:  // zero-width space
    case 0x200c:
    case 0x200d:
    case 0x2060:  // word joiner
    case 0xfeff:  // byte order mark
      return "";
    default:
      return (c >= 0x2000 && c <= 0x200a) ? " " : nullptr;  // en quad ... hair space
  }
}

bool is_ascii(std::string_view s) {
  for (char c : s) {
    if (static_cast<unsigned char>(c) >= 0x80) return false;
  }
  return true;
}

std::string normalize_unicode(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    char32_t c = 0;
    const size_t length = static_cast<unsigned char>(text[i]) < 0x80 ? 0 : decode_utf8(text, i, &c);
    if (length == 0) {  // ASCII, or a byte that is not UTF-8: kept
      out += text[i++];
      continue;
    }
    const char* ascii = ascii_for(c);
    if (ascii != nullptr) {
      out += ascii;
    } else {
      out.append(text.substr(i, length));
    }
    i += length;
  }
  return out;
}

/// Shows a found word in a message: at most `max_shown` characters; printable characters as
/// they are, control characters and bytes that are not UTF-8 as \xNN, so a message stays short
/// and valid text whatever bytes came in.
std::string quote(std::string_view word, size_t max_shown = 30) {
  struct Unit {
    size_t start, length;
    bool escaped;
  };
  std::vector<Unit> units;
  for (size_t i = 0; i < word.size() && units.size() <= max_shown;) {
    const unsigned char byte = static_cast<unsigned char>(word[i]);
    char32_t c = byte;
    size_t length = byte < 0x80 ? 1 : decode_utf8(word, i, &c);
    const bool escaped = length == 0 || c < 0x20 || (c >= 0x7f && c < 0xa0);
    if (length == 0) length = 1;
    units.push_back({i, length, escaped});
    i += length;
  }
  const bool cut = units.size() > max_shown;
  if (cut) units.resize(max_shown - 3);
  std::string out = "'";
  for (const Unit& unit : units) {
    if (!unit.escaped) {
      out.append(word.substr(unit.start, unit.length));
      continue;
    }
    static const char kHex[] = "0123456789abcdef";
    for (size_t k = 0; k < unit.length; ++k) {
      const unsigned char byte = static_cast<unsigned char>(word[unit.start + k]);
      out += "\\x";
      out += kHex[byte >> 4];
      out += kHex[byte & 15];
    }
  }
  if (cut) out += "...";
  out += "'";
  return out;
}

/// Shown for a word that is out of the range of a double: unquoted, shortened like quote().
std::string shorten(std::string_view word, size_t max_shown = 30) {
  const std::string quoted = quote(word, max_shown);
  return quoted.substr(1, quoted.size() - 2);
}

std::string count(size_t n, const char* singular, const char* plural) {
  return std::to_string(n) + " " + (n == 1 ? singular : plural);
}

std::string row_column(size_t row, size_t column) {
  return "row " + std::to_string(row) + ", column " + std::to_string(column);
}

/// Where a value is in the matrix, from 1: "row R, column C" (column 0: "row R").
struct Position {
  size_t row = 1;
  size_t column = 0;
  std::string name() const { return column ? row_column(row, column) : "row " + std::to_string(row); }
};

/// `digits` is a run of ASCII digits; its value, or -1 if it is empty or too long.
long digits_value(std::string_view digits) {
  if (digits.empty() || digits.size() > 9) return -1;
  long value = 0;
  for (char c : digits) {
    if (!is_digit(c)) return -1;
    value = value * 10 + (c - '0');
  }
  return value;
}

// ---------------------------------------------------------------------------------------------
// Numbers

enum class NumberStatus { kOk, kNotNumber, kOutOfRange };

char to_lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

bool equals_ignore_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (to_lower(a[i]) != to_lower(b[i])) return false;
  }
  return true;
}

/// True if `s` is exactly a decimal literal: digits [. digits] [e [sign] digits], with at least
/// one significand digit (so "1.", ".5", "1e-3" pass; "1e", ".", "0x1p3", "1_0" do not).
bool scan_decimal(std::string_view s) {
  size_t i = 0;
  size_t digits = 0;
  while (i < s.size() && is_digit(s[i])) ++i, ++digits;
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && is_digit(s[i])) ++i, ++digits;
  }
  if (digits == 0) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    size_t exp_digits = 0;
    while (i < s.size() && is_digit(s[i])) ++i, ++exp_digits;
    if (exp_digits == 0) return false;
  }
  return i == s.size();
}

/// Converts an unsigned decimal literal (already checked by scan_decimal) exactly: fast_float
/// (Debian's libfast-float-dev) rounds correctly, ignores the locale and is the same code
/// natively and in wasm (Emscripten's libc++ has no floating-point from_chars). It gives inf for
/// a literal too large for a double and 0 or a subnormal for one too small.
NumberStatus convert_decimal(std::string_view body, double* value) {
  const fast_float::from_chars_result result =
      fast_float::from_chars(body.data(), body.data() + body.size(), *value, fast_float::chars_format::general);
  if (result.ec != std::errc() || result.ptr != body.data() + body.size()) return NumberStatus::kNotNumber;
  if (std::isinf(*value)) return NumberStatus::kOutOfRange;
  return NumberStatus::kOk;
}

/// Mathematica's number forms as a decimal literal: `1.5*^-3` (InputForm's exponent) and a
/// precision mark (`1.5\``, `1.5\`20.`). False if `body` has neither or is no number with them.
bool mathematica_to_decimal(std::string_view body, std::string* decimal) {
  const size_t mark = body.find('`');
  const size_t power = body.find("*^");
  if (mark == std::string_view::npos && power == std::string_view::npos) return false;
  std::string out(body.substr(0, std::min(mark, power)));
  if (mark != std::string_view::npos) {  // the precision: digits and '.' up to `*^` or the end
    for (size_t i = mark + 1; i < std::min(power, body.size()); ++i) {
      if (!is_digit(body[i]) && body[i] != '.') return false;
    }
    if (power != std::string_view::npos && power < mark) return false;
  }
  if (power != std::string_view::npos) {
    out += 'e';
    out.append(body.substr(power + 2));
  }
  if (!scan_decimal(out)) return false;
  *decimal = std::move(out);
  return true;
}

/// Reads one whitespace/bracket-delimited word as a number (see the notes at the top).
NumberStatus parse_number(std::string_view word, double* value) {
  bool negative = false;
  std::string_view body = word;
  if (!body.empty() && (body[0] == '+' || body[0] == '-')) {
    negative = body[0] == '-';
    body.remove_prefix(1);
  }
  double magnitude = 0.0;
  if (scan_decimal(body)) {
    const NumberStatus status = convert_decimal(body, &magnitude);
    if (status != NumberStatus::kOk) return status;
  } else if (std::string plain; mathematica_to_decimal(body, &plain)) {
    const NumberStatus status = convert_decimal(plain, &magnitude);
    if (status != NumberStatus::kOk) return status;
  } else {
    for (std::string_view prefix : {"np.", "numpy."}) {
      if (body.size() > prefix.size() && equals_ignore_case(body.substr(0, prefix.size()), prefix)) {
        body.remove_prefix(prefix.size());
        break;
      }
    }
    if (body.size() == word.size() && equals_ignore_case(word, "true")) {
      magnitude = 1.0;  // booleans (masks) take no sign
    } else if (body.size() == word.size() && equals_ignore_case(word, "false")) {
      magnitude = 0.0;
    } else if (equals_ignore_case(body, "inf") || equals_ignore_case(body, "infinity")) {
      magnitude = std::numeric_limits<double>::infinity();
    } else if (equals_ignore_case(body, "nan")) {
      magnitude = std::numeric_limits<double>::quiet_NaN();
    } else {
      return NumberStatus::kNotNumber;
    }
  }
  *value = negative ? -magnitude : magnitude;
  return NumberStatus::kOk;
}

// ---------------------------------------------------------------------------------------------
// What the tools print

/// The tool a text comes from, for what to say about values it left out.
enum class Tool { kNumpy, kTorch, kTensorFlow, kJax, kJulia, kLatex };

std::string elision_advice(Tool tool) {
  switch (tool) {
    case Tool::kTorch:
      return "PyTorch shortened this tensor; print it in full with "
             "torch.set_printoptions(profile=\"full\")";
    case Tool::kTensorFlow:
      return "TensorFlow shortened this tensor; print it in full with "
             "np.set_printoptions(threshold=sys.maxsize)";
    case Tool::kJax:
      return "JAX shortened this array; print it in full with "
             "np.set_printoptions(threshold=sys.maxsize)";
    case Tool::kJulia:
      return "Julia shortened this matrix; print it in full with "
             "show(IOContext(stdout, :limit => false), \"text/plain\", A)";
    case Tool::kLatex:
      return "the matrix leaves values out; write every value";
    case Tool::kNumpy:
      break;
  }
  return "numpy shortened this array; print it in full with "
         "np.set_printoptions(threshold=sys.maxsize)";
}

/// The marks tools print in place of values they left out: numpy's and PyTorch's `...`,
/// Julia's `…` (U+2026), `⋮` (U+22EE), `⋯` (U+22EF), `⋱` (U+22F1).
bool is_elision(std::string_view word) {
  return word == "..." || word == "\xe2\x80\xa6" || word == "\xe2\x8b\xae" ||
         word == "\xe2\x8b\xaf" || word == "\xe2\x8b\xb1";
}

/// A complex literal as numpy and PyTorch (`1.+2.j`), Julia (`1.0+2.0im`), R and Octave
/// (`1+2i`, `2i`) print one.
bool is_complex(std::string_view word) {
  if (ends_with(word, "im")) {
    word.remove_suffix(2);
  } else if (!word.empty() && (word.back() == 'j' || word.back() == 'J' || word.back() == 'i')) {
    word.remove_suffix(1);
  } else {
    return false;
  }
  bool digit = false;
  for (char c : word) {
    if (is_digit(c)) {
      digit = true;
    } else if (c != '.' && c != 'e' && c != 'E' && c != '+' && c != '-') {
      return false;
    }
  }
  return digit && (is_digit(word.back()) || word.back() == '.');
}

/// A word that opens a wrapper around a list when '(' follows it: `array([[1, 2]])`.
struct Wrapper {
  std::string_view word;
  const char* format;
  Tool tool;
  bool numpy;  // NumPy's repr: only `dtype=` may follow the list
};

constexpr Wrapper kWrappers[] = {
    {"array", "NumPy array", Tool::kNumpy, true},
    {"np.array", "NumPy array", Tool::kNumpy, true},
    {"numpy.array", "NumPy array", Tool::kNumpy, true},
    {"matrix", "NumPy matrix", Tool::kNumpy, true},
    {"np.matrix", "NumPy matrix", Tool::kNumpy, true},
    {"numpy.matrix", "NumPy matrix", Tool::kNumpy, true},
    {"tensor", "PyTorch tensor", Tool::kTorch, false},
    {"torch.tensor", "PyTorch tensor", Tool::kTorch, false},
    {"Array", "JAX array", Tool::kJax, false},
    {"DeviceArray", "JAX array", Tool::kJax, false},
    {"jnp.array", "JAX array", Tool::kJax, false},
    {"tf.Tensor", "TensorFlow tensor", Tool::kTensorFlow, false},
    {"tf.constant", "TensorFlow tensor", Tool::kTensorFlow, false},
};

const Wrapper* find_wrapper(std::string_view word) {
  for (const Wrapper& wrapper : kWrappers) {
    if (wrapper.word == word) return &wrapper;
  }
  return nullptr;
}

/// `name=...`, as PyTorch, JAX and TensorFlow print keyword arguments after the values.
bool is_keyword_argument(std::string_view word) {
  const size_t equals = word.find('=');
  if (equals == 0 || equals == std::string_view::npos) return false;
  for (size_t i = 0; i < equals; ++i) {
    const char c = word[i];
    if (!is_letter(c) && c != '_' && !(i > 0 && is_digit(c))) return false;
  }
  return true;
}

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

/// `[,3]` (R's column label) gives 3, `[3,]` (row label) gives 3 with `row`; -1 otherwise.
long r_label(std::string_view word, bool row) {
  if (word.size() < 4 || word.front() != '[' || word.back() != ']') return -1;
  const std::string_view inside = word.substr(1, word.size() - 2);
  if (row) return inside.back() == ',' ? digits_value(inside.substr(0, inside.size() - 1)) : -1;
  return inside.front() == ',' ? digits_value(inside.substr(1)) : -1;
}

/// R's column labels over a matrix's rows: `[,1] [,2] [,3]`.
bool is_r_header(std::string_view line) {
  if (!starts_with(line, "[,")) return false;
  const std::vector<std::string_view> words = split_words(line);
  return std::all_of(words.begin(), words.end(), [](std::string_view w) { return r_label(w, false) > 0; });
}

/// `[7]`, R's index in front of a printed vector's line: 7, or -1.
long r_index(std::string_view word) {
  if (word.size() < 3 || word.front() != '[' || word.back() != ']') return -1;
  return digits_value(word.substr(1, word.size() - 2));
}

/// R's line for values it did not print: ` [ reached getOption("max.print") -- omitted 3 rows ]`.
bool is_r_omission(std::string_view line) { return starts_with(trim(line), "[ reached"); }

/// `A =` (Octave/MATLAB's output header) or `A = ...` (an assignment in front of the matrix):
/// the length of the name and '=' with the blanks around it, or 0.
size_t assignment_length(std::string_view line) {
  size_t i = 0;
  if (line.empty() || !(is_letter(line[0]) || line[0] == '_')) return 0;
  while (i < line.size() && (is_letter(line[i]) || is_digit(line[i]) || line[i] == '_' ||
                             line[i] == '.')) {
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
  return close != std::string_view::npos &&
         (close == 4 || digits_value(line.substr(4, close - 4)) >= 0);
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
constexpr EndsWordTable kEndsWord{true};
constexpr EndsWordTable kEndsWordKeepingCommas{false};

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
      case '[': case '{': kind = TokenKind::kOpen; break;
      case ']': case '}': kind = TokenKind::kClose; break;
      case '(': kind = TokenKind::kLParen; break;
      case ')': kind = TokenKind::kRParen; break;
      case ',': kind = options_.comma_in_words ? TokenKind::kWord : TokenKind::kComma; break;
      case ';': kind = TokenKind::kSemicolon; break;
      default: break;
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
// The parser

class Parser {
 public:
  Parser(std::string_view text, std::string_view name) : name_(name) {
    if (is_ascii(text)) {
      text_ = text;
    } else {
      normalized_ = normalize_unicode(text);
      text_ = normalized_;
    }
  }

  ParsedMatrix parse() {
    skip_front_matter();
    Matrix values = parse_body();
    return ParsedMatrix{std::move(values), std::move(format_)};
  }

  /// The text as one cell of a table: one number, a decimal comma read as a point.
  double parse_cell(size_t row, size_t column) {
    const Position at{row, column};
    const std::string_view word = trim(text_);
    if (word.empty()) fail(at.name() + " is empty: type a number");
    if (std::any_of(word.begin(), word.end(), [](char c) { return is_space(c) || c == ';'; })) {
      fail(at.name() + ": a cell holds one number but found " + quote(word));
    }
    return read_cell(word, CellSeparator::kBlank, at);
  }

 private:
  [[noreturn]] void fail(const std::string& message) const {
    throw InputError(ErrorPlace(std::string(name_)), std::string(name_) + ": " + message);
  }

  static std::string line_name(int line) { return "line " + std::to_string(line); }

  /// Reads `word` as a number; on failure throws, naming where it is.
  double read_number(std::string_view word, Position at) const {
    const auto where = [&] { return at.name(); };
    double value = 0.0;
    const NumberStatus status = parse_number(word, &value);
    if (status == NumberStatus::kOk) return value;
    if (status == NumberStatus::kOutOfRange) {
      fail(where() + ": " + shorten(word) + " is out of the range of a double");
    }
    if (is_elision(word)) {
      fail(where() + ": expected a number but found " + quote(word) + ": " + elision_advice(tool_));
    }
    if (is_complex(word)) fail_complex(where(), word);
    fail(where() + ": expected a number but found " + quote(word));
  }

  [[noreturn]] void fail_complex(const std::string& where, std::string_view shown) const {
    fail(where + ": found the complex number " + quote(shown) +
         ", but attention takes real numbers: paste the real part (in numpy A.real)");
  }

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
        fail("the TensorFlow tensor at " + line_name(line) +
             " shows no values (no 'numpy='): print it with print(t.numpy())");
      }
      if (rest.back() != '>') {
        fail("the TensorFlow tensor from " + line_name(line) + " is never closed by '>'");
      }
      text_ = text_.substr(0, static_cast<size_t>(rest.data() + rest.size() - 1 - text_.data()));
      drop_prefix(values + 6);
      format_ = "TensorFlow tensor";
      tool_ = Tool::kTensorFlow;
    }
  }

  Matrix parse_body() {
    TextLine line;
    size_t offset = 0;
    if (!first_content(&line, &offset)) fail("no numbers found (the text is empty)");
    if (text_.find("\\begin{") != std::string_view::npos) return parse_latex();
    const std::string_view first = trim(line.text);
    long rows = 0;
    long columns = 0;
    if (julia_header(first, &rows, &columns)) return parse_julia(line, rows, columns);
    if (const size_t length = assignment_length(first)) {
      drop_prefix(offset + length);  // `A = [[1, 2]]`: the name says nothing about the values
      if (length == first.size() && !starts_bracketed()) return parse_octave();
    } else if (is_r_header(first) && text_.find("[1,]") != std::string_view::npos) {
      return parse_r_matrix();
    } else if (is_r_vector(first)) {
      return parse_r_vector();
    }
    return starts_bracketed() ? parse_bracketed() : parse_plain();
  }

  /// The text starts with a bracket or a wrapper such as `array(`.
  bool starts_bracketed() const {
    Lexer probe(text_, first_line_, LexerOptions{});
    const Token token = probe.next();
    return token.kind == TokenKind::kOpen || token.kind == TokenKind::kClose ||
           token.kind == TokenKind::kLParen || token.kind == TokenKind::kRParen ||
           (find_wrapper(token.text) != nullptr && probe.peek().kind == TokenKind::kLParen);
  }

  /// Copies values_ into a rows x columns matrix; `transposed` when values_ holds columns.
  Matrix build(size_t rows, size_t columns, bool transposed) {
    if (rows == 0 || columns == 0) fail("no numbers found (the text is empty)");
    const auto r = static_cast<Eigen::Index>(rows);
    const auto c = static_cast<Eigen::Index>(columns);
    if (transposed) {
      using ColMajor = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::ColMajor>;
      return Eigen::Map<const ColMajor>(values_.data(), r, c);
    }
    return Eigen::Map<const Matrix>(values_.data(), r, c);
  }

  [[noreturn]] void fail_ragged(size_t row, size_t numbers, size_t first_row_numbers) const {
    fail("row " + std::to_string(row) + " has " + count(numbers, "number", "numbers") +
         " but row 1 has " + std::to_string(first_row_numbers));
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

  // ----- plain rows: CSV, TSV, semicolon-separated, whitespace -----

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
    const auto where = [&] { return at.name(); };
    if (word.size() >= 2 && word.front() == '"' && word.back() == '"') {
      word = trim(word.substr(1, word.size() - 2));
    }
    const size_t comma = word.find(',');
    if (comma == std::string_view::npos) {
      if (decimal_commas_in_text_ && looks_like_thousands(word, '.')) {
        fail(where() + ": " + quote(word) + " is ambiguous next to decimal commas: " +
             std::string(word) + " with a decimal point, or " + without(word, '.') +
             " with '.' as a thousands separator; use a dot for the decimal point and no "
             "thousands separators");
      }
      return read_number(word, at);
    }
    if (word.find('.') != std::string_view::npos || word.find(',', comma + 1) != std::string_view::npos) {
      fail(where() + ": " + quote(word) +
           " has thousands separators or two decimal marks; use a dot for the decimal point and "
           "no thousands separators");
    }
    std::string point(word);
    point[comma] = '.';
    if (separator != CellSeparator::kSemicolon && looks_like_thousands(word, ',')) {
      fail(where() + ": " + quote(word) + " is ambiguous: " + point +
           " with a decimal comma, or " + without(word, ',') +
           " with a thousands separator; use a dot for the decimal point");
    }
    double value = 0.0;
    const NumberStatus status = parse_number(point, &value);
    if (status == NumberStatus::kOutOfRange) {
      fail(where() + ": " + shorten(word) + " is out of the range of a double");
    }
    if (status != NumberStatus::kOk) fail(where() + ": expected a number but found " + quote(word));
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
    decimal_commas_in_text_ = separator != CellSeparator::kComma &&
                              text_.find(',') != std::string_view::npos;
    LexerOptions options;
    options.newline_tokens = true;
    options.comma_in_words = separator != CellSeparator::kComma;
    options.quotes = true;
    Lexer lexer(text_, first_line_, options);
    const TokenKind separator_kind =
        separator == CellSeparator::kSemicolon ? TokenKind::kSemicolon : TokenKind::kComma;
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
      const auto where = [&] { return at.name(); };
      if (token.kind == TokenKind::kWord) {
        if (separator == CellSeparator::kSemicolon && in_row > 0 && !after_separator) {
          fail(where() + ": expected ';' before " + quote(token.text) +
               " (each ';'-separated cell holds one number; no thousands separators)");
        }
        values_.push_back(read_cell(token.text, separator, at));
        ++in_row;
        after_separator = false;
      } else if (token.kind == separator_kind) {
        // Separates two numbers; a line may end with one, but may not start with one.
        if (in_row == 0 || after_separator) {
          fail(where() + ": expected a number but found '" + separator_char + "'");
        }
        after_separator = true;
        any_separator = true;
      } else if (token.kind == TokenKind::kNewline || token.kind == TokenKind::kEnd) {
        if (in_row > 0) close_row(rows, columns, in_row);  // blank lines are skipped
        in_row = 0;
        after_separator = false;
        if (token.kind == TokenKind::kEnd) break;
      } else {
        fail(where() + ": expected a number but found " + quote(token.text));
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

  // ----- rows under a header: Julia, Octave/MATLAB, R -----

  // Consecutive columns printed together: R and Octave split wide matrices into such blocks.
  struct Block {
    size_t first_column = 1;  // in the matrix, from 1
    size_t columns = 0;       // numbers per row, set by its first row
    size_t rows = 0;
    int line = 0;             // its header's (or first row's) line
    std::vector<double> values;
  };

  /// Reads `words[first_word...]` as the next row of `block`, each number times 10^scale.
  void read_row(Block& block, const std::vector<std::string_view>& words, size_t first_word,
                int scale) {
    const size_t row = block.rows + 1;
    size_t column = block.first_column;
    for (size_t k = first_word; k < words.size(); ++k) {
      const std::string_view word = words[k];
      const Position at{row, column};
      if ((word == "+" || word == "-") && k > first_word && k + 1 < words.size() &&
          is_complex(words[k + 1])) {
        // Octave and MATLAB print a complex number as three words: 1 + 2i.
        const std::string shown =
            std::string(words[k - 1]) + " " + std::string(word) + " " + std::string(words[k + 1]);
        fail_complex(row_column(row, column - 1), shown);
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
    if (blocks.empty() || blocks.front().rows == 0) fail("no numbers found (the text is empty)");
    const Block& first = blocks.front();
    size_t next_column = 1;
    for (const Block& block : blocks) {
      if (block.first_column != next_column) {
        fail("the columns from " + line_name(block.line) + " start at column " +
             std::to_string(block.first_column) + " but column " + std::to_string(next_column) +
             " comes next");
      }
      if (block.rows != first.rows) {
        fail("the columns from " + line_name(block.line) + " have " +
             count(block.rows, "row", "rows") + " but those from " + line_name(first.line) +
             " have " + std::to_string(first.rows));
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
      fail("the header at " + line_name(header.number) + " says " + std::to_string(rows) + " x " +
           std::to_string(columns) + " but the rows below it hold " +
           std::to_string(values.rows()) + " x " + std::to_string(values.cols()));
    }
    return values;
  }

  /// The rows under Octave's or MATLAB's `A =` (already dropped).
  Matrix parse_octave() {
    format_ = "Octave/MATLAB output";
    std::vector<Block> blocks;
    int scale = 0;
    bool data = false;
    for (const TextLine& line : split_lines(text_, first_line_)) {
      const std::string_view text = trim(line.text);
      if (text.empty()) continue;
      const std::vector<std::string_view> words = split_words(text);
      if (!data && (text == "Diagonal Matrix" || text == "Permutation Matrix")) continue;
      if (words[0] == "Columns" || words[0] == "Column") {  // Columns 9 through 16(:)
        Block block;
        block.line = line.number;
        std::string_view number = words.size() > 1 ? words[1] : std::string_view();
        if (ends_with(number, ":")) number.remove_suffix(1);  // Octave's `Column 9:`
        const long first_column = digits_value(number);
        if (first_column < 1) {
          fail(line_name(line.number) + ": expected a column number after " + quote(words[0]) +
               " but found " + (words.size() > 1 ? quote(words[1]) : std::string("nothing")));
        }
        block.first_column = static_cast<size_t>(first_column);
        blocks.push_back(std::move(block));
        continue;
      }
      if (!data && words.size() == 2 && words[1] == "*" && starts_with(words[0], "1.0e")) {
        // MATLAB's common scale factor: `1.0e+03 *` above the rows.
        const std::string_view exponent = words[0].substr(4);
        const long magnitude = digits_value(exponent.substr(exponent.empty() ? 0 : 1));
        if (exponent.empty() || (exponent[0] != '+' && exponent[0] != '-') || magnitude < 0 ||
            magnitude > 400) {
          fail(line_name(line.number) + ": expected a scale factor like 1.0e+03 but found " +
               quote(words[0]));
        }
        scale = static_cast<int>(exponent[0] == '-' ? -magnitude : magnitude);
        continue;
      }
      if (!data && text.find("\xc3\x97") != std::string_view::npos) continue;  // 2×2 logical array
      if (blocks.empty()) {
        blocks.emplace_back();
        blocks.back().line = line.number;
      }
      read_row(blocks.back(), words, 0, scale);
      data = true;
    }
    return assemble(blocks);
  }

  /// R's "[ reached getOption("max.print") ... ]" line: values were left out of the print.
  void refuse_r_omission(int line_number, std::string_view text) {
    if (!is_r_omission(text)) return;
    fail(line_name(line_number) + ": R left values out (" + shorten(text, 80) +
         "); print them all after options(max.print = 1e6)");
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
            fail(line_name(line.number) + ": expected the column label [," +
                 std::to_string(block.first_column + k) + "] but found " + quote(words[k]));
          }
        }
        labels = words.size();
        blocks.push_back(std::move(block));
        continue;
      }
      if (blocks.empty()) fail(line_name(line.number) + ": expected R's column labels like [,1]");
      Block& block = blocks.back();
      if (r_label(words[0], true) != static_cast<long>(block.rows + 1)) {
        fail(line_name(line.number) + ": expected the row label [" +
             std::to_string(block.rows + 1) + ",] but found " + quote(words[0]));
      }
      read_row(block, words, 1, 0);
      if (block.columns != labels) {
        fail("row " + std::to_string(block.rows) + " has " +
             count(words.size() - 1, "number", "numbers") + " but the header at " +
             line_name(block.line) + " names " + std::to_string(labels) + " columns");
      }
    }
    return assemble(blocks);
  }

  /// Every line that is not blank starts with R's index `[k]` and has more after it.
  bool is_r_vector(std::string_view first) const {
    if (first.empty() || first[0] != '[' || first.find("] ") == std::string_view::npos) return false;
    bool any = false;
    for (const TextLine& line : split_lines(text_, first_line_)) {
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

  Matrix parse_r_vector() {
    format_ = "R vector";
    size_t columns = 0;
    for (const TextLine& line : split_lines(text_, first_line_)) {
      const std::string_view text = trim(line.text);
      if (text.empty()) continue;
      refuse_r_omission(line.number, text);
      const std::vector<std::string_view> words = split_words(text);
      if (r_index(words[0]) != static_cast<long>(columns + 1)) {
        fail(line_name(line.number) + ": expected the index [" + std::to_string(columns + 1) +
             "] but found " + quote(words[0]));
      }
      for (size_t k = 1; k < words.size(); ++k) {
        values_.push_back(read_number(words[k], Position{1, columns + 1}));
        ++columns;
      }
    }
    return build(1, columns, false);
  }

  // ----- LaTeX: bmatrix, pmatrix, matrix, array, ... -----

  static bool is_latex_matrix(std::string_view environment) {
    if (ends_with(environment, "*")) environment.remove_suffix(1);
    for (std::string_view name : {"matrix", "bmatrix", "pmatrix", "Bmatrix", "vmatrix", "Vmatrix",
                                  "smallmatrix", "array"}) {
      if (environment == name) return true;
    }
    return false;
  }

  /// Text around the environment may only be math delimiters, or an assignment before it.
  static bool is_latex_delimiters(std::string_view text) {
    size_t i = 0;
    while (i < text.size()) {
      if (is_space(text[i])) {
        ++i;
        continue;
      }
      const size_t before = i;
      for (std::string_view word : {"\\left", "\\right", "\\[", "\\]", "\\(", "\\)", "$", "(",
                                    ")", "[", "]", ".", ","}) {
        if (starts_with(text.substr(i), word)) {
          i += word.size();
          break;
        }
      }
      if (i == before) return false;
    }
    return true;
  }

  /// Skips one `{...}` or `[...]` group at text[i] (after blanks): the index after it.
  static size_t skip_group(std::string_view text, size_t i, char open, char close) {
    size_t j = i;
    while (j < text.size() && is_space(text[j])) ++j;
    if (j >= text.size() || text[j] != open) return i;
    int depth = 0;
    for (; j < text.size(); ++j) {
      if (text[j] == open) ++depth;
      if (text[j] == close && --depth == 0) return j + 1;
    }
    return i;
  }

  Matrix parse_latex() {
    tool_ = Tool::kLatex;
    const size_t begin = text_.find("\\begin{");
    const size_t name_end = text_.find('}', begin);
    const std::string_view environment =
        text_.substr(begin + 7, name_end == std::string_view::npos ? 0 : name_end - begin - 7);
    const int line = first_line_ + count_line_breaks(text_.substr(0, begin));
    if (!is_latex_matrix(environment)) {
      fail(line_name(line) + ": expected a LaTeX matrix (bmatrix, pmatrix, matrix, array, ...) but "
           "found " + shorten("\\begin{" + std::string(environment) + "}"));
    }
    const std::string before(trim(text_.substr(0, begin)));
    const bool assignment = !before.empty() && before.back() == '=';
    if (!assignment && !is_latex_delimiters(before)) {
      fail("expected only the matrix but found " + quote(before) + " before \\begin{" +
           std::string(environment) + "}");
    }
    size_t body = skip_group(text_, name_end + 1, '[', ']');  // bmatrix*[r], array[t]
    if (starts_with(environment, "array")) body = skip_group(text_, body, '{', '}');  // {cc}
    const std::string end_mark = "\\end{" + std::string(environment) + "}";
    const size_t end = text_.find(end_mark, body);
    if (end == std::string_view::npos) {
      fail("\\begin{" + std::string(environment) + "} at " + line_name(line) +
           " is never closed by " + end_mark);
    }
    const std::string_view after = trim(text_.substr(end + end_mark.size()));
    if (after.find("\\begin{") != std::string_view::npos) {
      fail("expected the end of the text after the matrix but found another \\begin{ (give one "
           "matrix at a time)");
    }
    if (!is_latex_delimiters(after)) {
      fail("expected the end of the text after the matrix but found " + quote(after));
    }
    format_ = "LaTeX " + std::string(environment);
    return read_latex_body(text_.substr(body, end - body));
  }

  Matrix read_latex_body(std::string_view body) {
    size_t rows = 0;
    size_t columns = 0;
    size_t in_row = 0;
    std::string cell;
    const auto end_cell = [&](bool end_of_row) {
      const std::string text(trim(cell));
      if (!end_of_row || !text.empty() || in_row > 0) {
        const Position at{rows + 1, in_row + 1};
        if (text.empty()) fail(at.name() + ": expected a number but found an empty cell");
        values_.push_back(read_latex_cell(text, at));
        ++in_row;
      }
      cell.clear();
      if (!end_of_row) return;
      if (in_row > 0) close_row(rows, columns, in_row);
      in_row = 0;
    };
    for (size_t i = 0; i < body.size(); ++i) {
      const char c = body[i];
      if (c == '%') {  // a comment, to the end of the line
        while (i + 1 < body.size() && body[i + 1] != '\n') ++i;
      } else if (c == '&') {
        end_cell(false);
      } else if (c == '\\' && i + 1 < body.size() && body[i + 1] == '\\') {
        end_cell(true);
        i = skip_group(body, i + 2, '[', ']') - 1;  // \\[2pt]
      } else if (c == '\\' && i + 1 < body.size() && is_letter(body[i + 1])) {
        size_t j = i + 1;
        while (j < body.size() && is_letter(body[j])) ++j;
        const std::string_view command = body.substr(i, j - i);
        if (command == "\\hline" || command == "\\midrule" || command == "\\toprule" ||
            command == "\\bottomrule" || command == "\\quad" || command == "\\qquad") {
          cell += ' ';
        } else if (command == "\\phantom" || command == "\\hphantom" || command == "\\vphantom" ||
                   command == "\\cline") {
          j = skip_group(body, j, '{', '}');
          cell += ' ';
        } else {
          cell.append(command);
        }
        i = j - 1;
      } else if (c == '\\' && i + 1 < body.size()) {  // \, \; \! \: and '\ ': spacing
        cell += ' ';
        ++i;
      } else if (c == '~') {
        cell += ' ';
      } else {
        cell += c;
      }
    }
    end_cell(true);
    return build(rows, columns, false);
  }

  /// One cell: a number, `\infty` with a sign, `{-1}`, `\num{1.5}`; a sign may stand apart.
  double read_latex_cell(std::string text, Position at) {
    const auto where = [&] { return at.name(); };
    for (std::string_view dots : {"\\cdots", "\\vdots", "\\ddots", "\\ldots", "\\dots", "\\hdots"}) {
      if (text.find(dots) != std::string::npos) {
        fail(where() + ": expected a number but found " + quote(dots) + ": " +
             elision_advice(Tool::kLatex));
      }
    }
    const std::string shown = text;
    if (starts_with(text, "\\num{") && text.back() == '}') text = text.substr(5, text.size() - 6);
    std::string word;
    for (char c : text) {
      if (c != '{' && c != '}') word += c;
    }
    word = std::string(trim(word));
    if (!word.empty() && (word[0] == '-' || word[0] == '+')) {  // "- 1" as typed
      size_t k = 1;
      while (k < word.size() && is_space(word[k])) ++k;
      word = word[0] + word.substr(k);
    }
    const size_t infinity = word.find("\\infty");
    if (infinity != std::string::npos && infinity + 6 == word.size() && infinity <= 1) {
      word = word.substr(0, infinity) + "inf";
    }
    if (word.find_first_of(" \t\n\r\\") != std::string::npos) {
      fail(where() + ": expected a number but found " + quote(shown));
    }
    return read_number(word, at);
  }

  // ----- bracketed text: numpy, Python/JSON lists, MATLAB, PyTorch, JAX, TensorFlow, Mathematica

  // One open bracket list or wrapper such as `array(`.
  struct Frame {
    const Wrapper* wrapper = nullptr;  // a wrapper `array(` ... `)`; otherwise a list
    std::string_view word;             // the wrapper as written, or the list's opening bracket
    int line = 1;                      // where it opened, for unbalanced-bracket messages
    // Lists:
    size_t count = 0;             // elements so far
    size_t row_start = 0;         // count at the last ';' (MATLAB rows, depth 1 only)
    bool expect_element = true;   // just after the bracket, ',' or ';': a separator here is an error
    bool has_lists = false;
    bool has_numbers = false;
    // Wrappers: 0 expects '[', 1 after the list, 2 after ',' (expects a keyword argument or
    // ')'), 3 after NumPy's dtype= (expects ')'), 4 after another keyword argument (expects
    // ',' or ')').
    int paren_state = 0;
  };

  Frame& list_at(int depth) { return stack_[static_cast<size_t>(list_index_[depth])]; }

  /// "row R, column C" of the element that would come next at the current depth, in terms of
  /// the final matrix (for a list of column vectors, vector k is column k); just "row R" in an
  /// outer list of rows.
  Position position() {
    switch (depth_) {
      case 1: {
        const Frame& list = list_at(1);
        if (list.has_lists) return Position{list.count + 1, 0};
        return Position{matlab_rows_.size() + 1, list.count - list.row_start + 1};
      }
      case 2:
        return Position{list_at(1).count + 1, list_at(2).count + 1};
      default:
        return Position{list_at(2).count + 1, list_at(1).count + 1};
    }
  }

  std::string where() { return position().name(); }

  std::string opened(const Frame& frame) const {
    return "'" + std::string(frame.word) + (frame.wrapper ? "('" : "'");
  }

  static char closing_of(std::string_view open) { return open == "{" ? '}' : ']'; }

  /// Checks that a list (a bracket or a wrapper) may start here, before pushing it.
  void check_list_may_start(const Token& token) {
    if (stack_.empty()) return;
    Frame& top = stack_.back();
    if (top.wrapper) {
      if (top.paren_state != 0 || token.kind != TokenKind::kOpen) {
        fail("expected '[' after " + opened(top) + " at " + line_name(top.line) + " but found " +
             quote(token.text));
      }
      return;
    }
    if (top.has_numbers || (ndim_ != 0 && depth_ >= ndim_)) {
      fail(where() + ": expected a number but found " + quote(token.text));
    }
  }

  void open_list(const Token& token) {
    check_list_may_start(token);
    if (depth_ == kMaxDepth) {
      fail("nested too deeply: the '" + std::string(token.text) + "' at " + line_name(token.line) +
           " opens a 4th level, but a matrix has 2 levels (3 for a list of column vectors)");
    }
    if (token.text == "{") braces_ = true;
    Frame frame;
    frame.word = token.text;
    frame.line = token.line;
    stack_.push_back(frame);
    ++depth_;
    list_index_[depth_] = static_cast<int>(stack_.size()) - 1;
  }

  void open_wrapper(const Token& token, const Wrapper* wrapper) {
    check_list_may_start(token);
    lexer_->next();  // the '(' seen by peek
    if (stack_.empty()) {
      outer_wrapper_ = wrapper;
      if (format_.empty()) tool_ = wrapper->tool;
    } else {
      inner_wrapper_ = wrapper;
    }
    Frame frame;
    frame.wrapper = wrapper;
    frame.word = token.text;
    frame.line = token.line;
    stack_.push_back(frame);
  }

  /// A list or wrapper has just been completed: it is one element of whatever encloses it.
  void element_done() {
    if (stack_.empty()) {
      done_ = true;
      return;
    }
    Frame& top = stack_.back();
    if (top.wrapper) {
      top.paren_state = 1;
    } else {
      ++top.count;
      top.has_lists = true;
      top.expect_element = false;
    }
  }

  void close_list(const Token& token) {
    if (stack_.empty()) {
      fail("unbalanced brackets: '" + std::string(token.text) + "' at " + line_name(token.line) +
           " has no matching '" + (token.text == "}" ? "{" : "[") + "'");
    }
    Frame& top = stack_.back();
    if (top.wrapper || closing_of(top.word) != token.text[0]) {
      fail("unbalanced brackets: '" + std::string(token.text) + "' at " + line_name(token.line) +
           " closes the '" + std::string(top.wrapper ? "(" : top.word) + "' from " +
           line_name(top.line));
    }
    const size_t elements = top.count;
    if (depth_ == 1 && !top.has_lists) {
      // The last MATLAB row (or the only row); a trailing ';' leaves an empty one to drop.
      const size_t last_row = elements - top.row_start;
      if (last_row > 0 || matlab_rows_.empty()) matlab_rows_.push_back(last_row);
    } else if (depth_ == 2) {
      depth2_lengths_.push_back(elements);
    } else if (depth_ == 3) {
      depth3_lengths_.push_back(elements);
    }
    stack_.pop_back();
    --depth_;
    element_done();
  }

  void handle_word(const Token& token) {
    if (const Wrapper* wrapper = find_wrapper(token.text);
        wrapper != nullptr && lexer_->peek().kind == TokenKind::kLParen) {
      open_wrapper(token, wrapper);
      return;
    }
    if (stack_.empty()) {
      fail("expected '[' at " + line_name(token.line) + " but found " + quote(token.text));
    }
    Frame& top = stack_.back();
    if (top.wrapper) {
      handle_wrapper_word(top, token);
      return;
    }
    if (top.has_lists || (ndim_ != 0 && depth_ < ndim_)) {
      fail(where() + ": expected '[' (every row is a list) but found " + quote(token.text));
    }
    values_.push_back(read_number(token.text, position()));
    if (ndim_ == 0) ndim_ = depth_;
    ++top.count;
    top.has_numbers = true;
    top.expect_element = false;
  }

  /// A word after a wrapper's list: `dtype=float32`, `requires_grad=True`, `shape=(2, 2)`.
  void handle_wrapper_word(Frame& top, const Token& token) {
    if (top.paren_state == 2 && top.wrapper->numpy && starts_with(token.text, "dtype=") &&
        token.text.size() > 6) {
      top.paren_state = 3;  // the dtype says nothing the numbers don't: ignored
      return;
    }
    if (top.paren_state == 2 && !top.wrapper->numpy && is_keyword_argument(token.text)) {
      top.paren_state = 4;  // device, dtype, requires_grad, grad_fn, shape: ignored
      if (token.text.back() == '=' && lexer_->peek().kind == TokenKind::kLParen) {
        skip_parenthesized();  // shape=(2, 2)
      }
      return;
    }
    const char* expected = top.paren_state == 0   ? "'['"
                           : top.paren_state == 1 ? "',' or ')'"
                           : top.paren_state == 2 ? (top.wrapper->numpy ? "'dtype=...' or ')'"
                                                                        : "a keyword argument or ')'")
                           : top.paren_state == 3 ? "')'"
                                                  : "',' or ')'";
    fail(std::string("expected ") + expected + " in the " + opened(top) + " from " +
         line_name(top.line) + " but found " + quote(token.text));
  }

  void skip_parenthesized() {
    const Token open = lexer_->next();
    int depth = 1;
    while (depth > 0) {
      const Token token = lexer_->next();
      if (token.kind == TokenKind::kEnd) {
        fail("unbalanced brackets: '(' at " + line_name(open.line) + " is never closed");
      }
      depth += token.kind == TokenKind::kLParen;
      depth -= token.kind == TokenKind::kRParen;
    }
  }

  void handle_comma(const Token& token) {
    if (stack_.empty()) {
      // One trailing comma after the whole matrix, as copied from a line of code.
      if (done_ && !trailing_separator_) {
        trailing_separator_ = true;
        return;
      }
      fail("expected the end of the text after the matrix but found ',' at " +
           line_name(token.line));
    }
    Frame& top = stack_.back();
    if (top.wrapper) {
      if (top.paren_state != 1 && top.paren_state != 4) {
        fail("unexpected ',' at " + line_name(token.line) + " in the " + opened(top) + " from " +
             line_name(top.line));
      }
      top.paren_state = 2;
      return;
    }
    if (top.expect_element) fail(where() + ": expected a number but found ','");
    top.expect_element = true;
    commas_ = true;
  }

  void handle_semicolon(const Token& token) {
    if (stack_.empty() && done_ && !trailing_separator_) {
      trailing_separator_ = true;  // `A = [1 2; 3 4];` as MATLAB source ends
      return;
    }
    const bool matlab_row_end = !stack_.empty() && !stack_.back().wrapper && depth_ == 1 &&
                                !stack_.back().has_lists;
    if (!matlab_row_end) {
      fail("unexpected ';' at " + line_name(token.line) +
           ": ';' ends a row only in MATLAB-style text like [1 2; 3 4]");
    }
    Frame& top = stack_.back();
    if (top.expect_element) fail(where() + ": expected a number but found ';'");
    matlab_rows_.push_back(top.count - top.row_start);
    top.row_start = top.count;
    top.expect_element = true;
    semicolons_ = true;
  }

  void handle_rparen(const Token& token) {
    if (stack_.empty()) {
      fail("unbalanced brackets: ')' at " + line_name(token.line) + " has no matching '('");
    }
    Frame& top = stack_.back();
    if (!top.wrapper) {
      fail("unbalanced brackets: ')' at " + line_name(token.line) + " closes the '" +
           std::string(top.word) + "' from " + line_name(top.line));
    }
    if (top.paren_state == 0) {
      fail("expected '[' after " + opened(top) + " at " + line_name(top.line) + " but found ')'");
    }
    stack_.pop_back();
    element_done();
  }

  Matrix parse_bracketed() {
    Lexer lexer(text_, first_line_, LexerOptions{});
    lexer_ = &lexer;
    for (;;) {
      const Token token = lexer.next();
      if (token.kind == TokenKind::kEnd) break;
      if (done_ && token.kind != TokenKind::kComma && token.kind != TokenKind::kSemicolon) {
        if (token.kind == TokenKind::kClose) {
          fail("unbalanced brackets: '" + std::string(token.text) + "' at " +
               line_name(token.line) + " has no matching '" + (token.text == "}" ? "{" : "[") +
               "'");
        }
        if (token.kind == TokenKind::kRParen) {
          fail("unbalanced brackets: ')' at " + line_name(token.line) + " has no matching '('");
        }
        fail("expected the end of the text after the matrix but found " + quote(token.text) +
             " at " + line_name(token.line) + " (give one matrix at a time)");
      }
      switch (token.kind) {
        case TokenKind::kOpen: open_list(token); break;
        case TokenKind::kClose: close_list(token); break;
        case TokenKind::kWord: handle_word(token); break;
        case TokenKind::kComma: handle_comma(token); break;
        case TokenKind::kSemicolon: handle_semicolon(token); break;
        case TokenKind::kRParen: handle_rparen(token); break;
        case TokenKind::kLParen:
          if (stack_.empty()) fail("expected '[' at " + line_name(token.line) + " but found '('");
          if (stack_.back().wrapper) {
            fail("expected '[' after " + opened(stack_.back()) + " at " +
                 line_name(stack_.back().line) + " but found '('");
          }
          fail(where() + ": expected a number but found '('");
        default: break;  // no newline tokens in this mode
      }
    }
    lexer_ = nullptr;
    if (!stack_.empty()) {
      const Frame& open = stack_.back();
      fail("unbalanced brackets: '" + std::string(open.wrapper ? "(" : open.word) + "' at " +
           line_name(open.line) + " is never closed");
    }
    return finish();
  }

  /// Checks the collected shape, names the format and builds the matrix.
  Matrix finish() {
    if (ndim_ == 0) fail("no numbers found (only empty lists)");
    if (ndim_ == 3 && !std::all_of(depth3_lengths_.begin(), depth3_lengths_.end(),
                                   [](size_t n) { return n == 1; })) {
      fail_3d();
    }
    name_bracketed_format();
    size_t rows = 0;
    size_t columns = 0;
    if (ndim_ == 1) {
      for (size_t numbers : matlab_rows_) close_row(rows, columns, numbers);
      return build(rows, columns, false);
    }
    if (ndim_ == 2) {  // depth-2 lists are rows
      for (size_t numbers : depth2_lengths_) close_row(rows, columns, numbers);
      return build(rows, columns, false);
    }
    // ndim 3: depth-2 lists are column vectors, each of length r.
    for (size_t i = 1; i < depth2_lengths_.size(); ++i) {
      if (depth2_lengths_[i] == depth2_lengths_[0]) continue;
      fail("column vector " + std::to_string(i + 1) + " has " +
           count(depth2_lengths_[i], "row", "rows") + " but column vector 1 has " +
           std::to_string(depth2_lengths_[0]) + " (they become the columns of one matrix)");
    }
    return build(depth2_lengths_[0], depth2_lengths_.size(), true);
  }

  /// A 3-D array that is not a list of column vectors: names its slice shapes.
  [[noreturn]] void fail_3d() const {
    std::vector<std::string> shapes;  // "rows x columns" of each slice
    bool any_ragged = false;
    size_t next_row = 0;
    for (size_t rows : depth2_lengths_) {
      const size_t columns = rows > 0 ? depth3_lengths_[next_row] : 0;
      bool ragged = false;
      for (size_t r = 0; r < rows; ++r) ragged = ragged || depth3_lengths_[next_row + r] != columns;
      next_row += rows;
      any_ragged = any_ragged || ragged;
      shapes.push_back(ragged ? "ragged (rows of different lengths)"
                              : std::to_string(rows) + " x " + std::to_string(columns));
    }
    const bool same = std::all_of(shapes.begin(), shapes.end(),
                                  [&](const std::string& s) { return s == shapes[0]; });
    std::string message = "expected a matrix (2 dimensions) but found a 3-D array";
    if (same && !any_ragged) {
      message += " of shape " + std::to_string(shapes.size()) + " x " + shapes[0] + ": " +
                 count(shapes.size(), "slice", "slices") + " of " + shapes[0] +
                 "; paste one 2-D slice at a time (e.g. A[0])";
    } else {
      message += " whose slices differ:";
      for (size_t s = 0; s < shapes.size() && s < 4; ++s) {
        message += (s ? ", slice " : " slice ") + std::to_string(s + 1) + " is " + shapes[s];
      }
      if (shapes.size() > 4) message += ", ...";
      message += "; paste one 2-D slice at a time";
    }
    fail(message);
  }

  void name_bracketed_format() {
    if (!format_.empty()) return;  // TensorFlow's repr around an array(...)
    if (outer_wrapper_ != nullptr) {
      format_ = outer_wrapper_->format;
    } else if (inner_wrapper_ != nullptr) {
      const std::string inner = inner_wrapper_->format;
      format_ = inner == "NumPy array" ? (ndim_ == 3 ? "list of NumPy column vectors"
                                                     : "list of NumPy arrays")
                                       : "list of " + inner + "s";
    } else if (braces_) {
      format_ = "Mathematica list";
    } else if (semicolons_) {
      format_ = "MATLAB matrix";
    } else if (commas_) {
      format_ = "Python list";
    } else {
      format_ = "NumPy print output";
    }
  }

  std::string_view name_;
  std::string normalized_;  // the text with Unicode minus signs and spaces made ASCII
  std::string_view text_;   // what is left to parse
  int first_line_ = 1;      // the line number of text_'s first line
  std::string format_;
  Tool tool_ = Tool::kNumpy;
  std::vector<double> values_;
  // Plain rows.
  bool decimal_commas_in_text_ = false;
  bool decimal_commas_ = false;
  // Bracketed mode state.
  Lexer* lexer_ = nullptr;
  std::vector<Frame> stack_;            // at most 2 * kMaxDepth frames
  int list_index_[kMaxDepth + 1] = {};  // stack_ index of the open list at each depth
  int depth_ = 0;                       // open bracket lists
  int ndim_ = 0;                        // depth of the numbers, 0 until the first one
  std::vector<size_t> matlab_rows_;     // row lengths of a depth-1 list
  std::vector<size_t> depth2_lengths_;  // lengths of the depth-2 lists, in order
  std::vector<size_t> depth3_lengths_;  // lengths of the depth-3 lists, in order
  const Wrapper* outer_wrapper_ = nullptr;
  const Wrapper* inner_wrapper_ = nullptr;
  bool braces_ = false;
  bool commas_ = false;
  bool semicolons_ = false;
  bool done_ = false;  // the outermost list or wrapper has closed
  bool trailing_separator_ = false;
};

}  // namespace

ParsedMatrix parse_matrix_detailed(std::string_view text, std::string_view name) {
  return Parser(text, name).parse();
}

double parse_cell(std::string_view text, std::string_view name, size_t row, size_t column) {
  return Parser(text, name).parse_cell(row, column);
}

Matrix parse_matrix(std::string_view text, std::string_view name) {
  return std::move(parse_matrix_detailed(text, name).values);
}

}  // namespace attn
