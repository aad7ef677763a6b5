// libFuzzer target: arbitrary bytes -> attn::parse_matrix. The parser must either throw
// attn::InputError whose message starts with the input's name and is short printable ASCII,
// or return a non-empty matrix no bigger than the text could spell. A parsed matrix printed
// back as a nested list (%.17g, inf, nan) and as CSV must parse to the same numbers.
// Any other exception, a sanitizer report or a violated check aborts (a finding).
#include <cmath>
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
    m = attn::parse_matrix(text, "W_Q");
  } catch (const attn::InputError& e) {
    const std::string message = e.what();
    if (message.rfind("W_Q: ", 0) != 0) finding("a message without the input's name: " + message);
    if (message.size() > 400) finding("a message of " + std::to_string(message.size()) + " characters");
    for (unsigned char c : message) {
      if (c < 0x20 || c >= 0x7f) finding("a message with a non-printable byte: " + message);
    }
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
