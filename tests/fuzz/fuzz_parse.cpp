// libFuzzer target: arbitrary bytes -> attn::parse_matrix_detailed. The parser must either
// throw attn::InputError whose message starts with the input's name and is short, valid UTF-8
// without control characters, or return a non-empty matrix no bigger than the text could spell
// and the name of its format. A parsed matrix printed back as a nested list (%.17g, inf, nan)
// and as CSV must parse to the same numbers.
// Any other exception, a sanitizer report or a violated check aborts (a finding).
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <string_view>

#include "parse.h"

namespace {

[[noreturn]] void finding(const std::string& what) {
  std::fprintf(stderr, "\n*** fuzz_parse finding: %s\n", what.c_str());
  std::fflush(stderr);
  std::abort();
}

/// Valid UTF-8 with no control characters (C0, DEL, C1): what a person can read.
bool printable_utf8(const std::string& s) {
  for (size_t i = 0; i < s.size();) {
    const unsigned char lead = static_cast<unsigned char>(s[i]);
    const size_t length = lead < 0x80                    ? 1
                          : lead >= 0xc2 && lead <= 0xdf ? 2
                          : lead >= 0xe0 && lead <= 0xef ? 3
                          : lead >= 0xf0 && lead <= 0xf4 ? 4
                                                         : 0;
    if (length == 0 || i + length > s.size()) return false;
    uint32_t c = length == 1 ? lead : lead & (0x7f >> length);
    for (size_t k = 1; k < length; ++k) {
      const unsigned char next = static_cast<unsigned char>(s[i + k]);
      if ((next & 0xc0) != 0x80) return false;
      c = (c << 6) | (next & 0x3f);
    }
    if (c < 0x20 || (c >= 0x7f && c < 0xa0) || (c >= 0xd800 && c <= 0xdfff) || c > 0x10ffff) return false;
    if ((length == 3 && c < 0x800) || (length == 4 && c < 0x10000)) return false;
    i += length;
  }
  return true;
}

std::string number(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buffer[40];
  std::snprintf(buffer, sizeof buffer, "%.17g", v);
  return buffer;
}

std::string as_list(const attn::Matrix& m) {
  std::string out = "[";
  for (Eigen::Index i = 0; i < m.rows(); ++i) {
    out += i ? ", [" : "[";
    for (Eigen::Index j = 0; j < m.cols(); ++j) out += (j ? ", " : "") + number(m(i, j));
    out += "]";
  }
  return out + "]";
}

std::string as_csv(const attn::Matrix& m) {
  std::string out;
  for (Eigen::Index i = 0; i < m.rows(); ++i) {
    for (Eigen::Index j = 0; j < m.cols(); ++j) out += (j ? "," : "") + number(m(i, j));
    out += "\r\n";
  }
  return out;
}

void check_same(const attn::Matrix& a, const std::string& text, const char* how) {
  attn::Matrix b;
  try {
    b = attn::parse_matrix(text, "again");
  } catch (const attn::InputError& e) {
    finding(std::string("the parsed matrix printed ") + how + " does not parse: " + e.what());
  }
  if (a.rows() != b.rows() || a.cols() != b.cols()) finding(std::string("round trip ") + how + " changed the shape");
  for (Eigen::Index i = 0; i < a.size(); ++i) {
    const double x = a.data()[i], y = b.data()[i];
    if (!(x == y || (std::isnan(x) && std::isnan(y))) || std::signbit(x) != std::signbit(y)) {
      if (std::isnan(x)) continue;  // nan's sign is not spelled
      finding(std::string("round trip ") + how + " changed " + number(x) + " into " + number(y));
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  attn::Matrix m;
  try {
    attn::ParsedMatrix parsed = attn::parse_matrix_detailed(text, "W_Q");
    if (parsed.format.empty()) finding("a matrix without the name of its format");
    m = std::move(parsed.values);
  } catch (const attn::InputError& e) {
    // A parser's message of the catalogues (error.parse-*) naming the input; what() is its id and
    // parameters, the words are in web/lib/locales.
    const std::string message = e.what();
    const attn::Message& said = e.message();
    if (said.id.rfind("error.parse-", 0) != 0) finding("a message that is not the parser's: " + message);
    bool named = false;
    for (const auto& [key, value] : said.params) named = named || (key == "name" && value == "W_Q");
    if (!named) finding("a message without the input's name: " + message);
    if (message.size() > 400) finding("a message of " + std::to_string(message.size()) + " bytes");
    if (!printable_utf8(message)) finding("a message with a control character or bad UTF-8: " + message);
    return 0;
  } catch (const std::exception& e) {
    finding(std::string("parse_matrix threw a non-InputError exception: ") + e.what());
  }
  if (m.rows() < 1 || m.cols() < 1) finding("an empty matrix was returned");
  if (static_cast<size_t>(m.size()) > size) finding("more numbers than bytes");
  check_same(m, as_list(m), "as a nested list");
  check_same(m, as_csv(m), "as CSV");
  return 0;
}
