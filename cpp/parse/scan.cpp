// The parser's shared scanning helpers (declared in scan.h): text, Unicode, quoting, numbers
// and the words the tools print.
//
// Numbers:
//  - Numbers are converted exactly (correctly rounded) by fast_float, the same natively and in
//    wasm, always with '.' as the decimal point. The syntax is checked by scan_decimal first, so
//    the converter never sees hex floats, "nan(...)" or a leading '+'. Nothing depends on the C
//    locale.
//  - A number too small for a double (1e-400) becomes 0 like Python's float(); one too large
//    (1e999) is an error.
//  - Words that are numbers: inf, infinity, nan (any case, optional sign), np.inf / numpy.inf /
//    np.nan / numpy.nan, and True/False (1/0, no sign) for boolean masks. Anything else that is
//    not a number is an error, never skipped: a header row or a label line like "Q" fails.
//  - A simple fraction a/b of two unsigned decimal literals (`1/3`, `-2/3`, `1.5/4`), as people
//    type exact values into a cell: a divided by b in double, b not 0.
#include "scan.h"

#include <fast_float/fast_float.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <system_error>

namespace attn::parsing {

// ---------------------------------------------------------------------------------------------
// Text

int count_line_breaks(std::string_view s) {
  int breaks = 0;
  for (size_t i = 0; i < s.size();) {
    const size_t n = line_break_at(s, i);
    breaks += n > 0;
    i += n > 0 ? n : 1;
  }
  return breaks;
}

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

namespace {

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
    case 0xff0b:
      return "+";
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

}  // namespace

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
std::string quote(std::string_view word, size_t max_shown) {
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
std::string shorten(std::string_view word, size_t max_shown) {
  const std::string quoted = quote(word, max_shown);
  return quoted.substr(1, quoted.size() - 2);
}

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

namespace {

char to_lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

bool equals_ignore_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (to_lower(a[i]) != to_lower(b[i])) return false;
  }
  return true;
}

}  // namespace

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

namespace {

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

}  // namespace

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
  } else if (const size_t slash = body.find('/'); slash != std::string_view::npos &&
                                                  scan_decimal(body.substr(0, slash)) &&
                                                  scan_decimal(body.substr(slash + 1))) {
    double numerator = 0.0;
    double denominator = 0.0;
    NumberStatus status = convert_decimal(body.substr(0, slash), &numerator);
    if (status == NumberStatus::kOk) status = convert_decimal(body.substr(slash + 1), &denominator);
    if (status != NumberStatus::kOk) return status;
    if (denominator == 0.0) return NumberStatus::kNotNumber;
    magnitude = numerator / denominator;
    if (std::isinf(magnitude)) return NumberStatus::kOutOfRange;
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

const char* tool_key(Tool tool) {
  switch (tool) {
    case Tool::kTorch:
      return "torch";
    case Tool::kTensorFlow:
      return "tensorflow";
    case Tool::kJax:
      return "jax";
    case Tool::kJulia:
      return "julia";
    case Tool::kLatex:
      return "latex";
    case Tool::kNumpy:
      break;
  }
  return "numpy";
}

/// The marks tools print in place of values they left out: numpy's and PyTorch's `...`,
/// Julia's `…` (U+2026), `⋮` (U+22EE), `⋯` (U+22EF), `⋱` (U+22F1).
bool is_elision(std::string_view word) {
  return word == "..." || word == "\xe2\x80\xa6" || word == "\xe2\x8b\xae" || word == "\xe2\x8b\xaf" ||
         word == "\xe2\x8b\xb1";
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

}  // namespace attn::parsing
