// Compare computed numbers with numbers as a notebook printed them, to the digits printed; the
// printed matrices come from tests/fixtures/seeds/NNN.json (make_seed_fixtures.py writes them).
#pragma once

#include <catch2/catch.hpp>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "matrix.h"

#ifndef ATTN_FIXTURES_DIR
#error "ATTN_FIXTURES_DIR must be defined as the absolute path of tests/fixtures"
#endif

namespace attn::testing {

/// One printed number: its value and the unit of its last printed digit.
struct Printed {
  double value;
  double unit;
  std::string text;
};

/// Every number in a block of printed text, in reading order.
inline std::vector<Printed> printed_numbers(const std::string& text) {
  static const std::regex number(R"([-+]?\d+(\.\d*)?([eE][-+]?\d+)?)");
  std::vector<Printed> out;
  for (std::sregex_iterator it(text.begin(), text.end(), number), end; it != end; ++it) {
    const std::string s = it->str();
    const auto e = s.find_first_of("eE");
    const std::string mantissa = s.substr(0, e);
    const int exponent = e == std::string::npos ? 0 : std::stoi(s.substr(e + 1));
    const auto dot = mantissa.find('.');
    const int decimals = dot == std::string::npos ? 0 : static_cast<int>(mantissa.size() - dot - 1);
    out.push_back({std::stod(s), std::pow(10.0, exponent - decimals), s});
  }
  return out;
}

/// True when `actual` rounds to `p` at the digits printed. `extra_relative` widens the
/// tolerance for float32 prints, whose 8th digit lies below float32's resolution.
inline bool matches(double actual, const Printed& p, double extra_relative = 0) {
  const double tolerance = 0.5 * p.unit * (1 + 1e-9) + extra_relative * std::abs(p.value);
  return std::abs(actual - p.value) <= tolerance;
}

/// Checks every entry of `m` (row-major) against the numbers printed in `text`.
inline void check_printed(const Matrix& m, const std::string& text, double extra_relative = 0) {
  const auto numbers = printed_numbers(text);
  REQUIRE(static_cast<Eigen::Index>(numbers.size()) == m.size());
  for (Eigen::Index i = 0; i < m.rows(); ++i) {
    for (Eigen::Index j = 0; j < m.cols(); ++j) {
      const Printed& p = numbers[static_cast<size_t>(i * m.cols() + j)];
      INFO("row " << i + 1 << ", column " << j + 1 << ": computed " << m(i, j) << ", printed " << p.text);
      CHECK(matches(m(i, j), p, extra_relative));
    }
  }
}

/// A JSON value: just enough of JSON to read the seed fixtures (\u escapes for ASCII only).
struct Json {
  enum class Kind { Null, Bool, Number, String, Array, Object } kind = Kind::Null;
  double number = 0;
  std::string string;
  std::vector<Json> items;
  std::map<std::string, Json> members;

  bool has(const std::string& key) const { return members.count(key) > 0; }
  const Json& operator[](const std::string& key) const {
    const auto it = members.find(key);
    if (it == members.end()) throw std::runtime_error("no member \"" + key + "\"");
    return it->second;
  }
};

/// Parses JSON text; throws std::runtime_error naming the offset of the first error.
inline Json parse_json(const std::string& text) {
  size_t i = 0;
  const auto error = [&](const std::string& what) {
    return std::runtime_error("JSON: " + what + " at offset " + std::to_string(i));
  };
  const auto skip = [&] {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  };
  const auto expect = [&](char c) {
    skip();
    if (i >= text.size() || text[i] != c) throw error(std::string("expected '") + c + "'");
    ++i;
  };
  const auto string = [&] {
    expect('"');
    std::string out;
    while (i < text.size() && text[i] != '"') {
      char c = text[i++];
      if (c == '\\') {
        if (i >= text.size()) break;
        const char e = text[i++];
        const std::string simple = "\"\\/bfnrt", meaning = "\"\\/\b\f\n\r\t";
        if (e == 'u' && i + 4 <= text.size()) {
          const long code = std::strtol(text.substr(i, 4).c_str(), nullptr, 16);
          if (code > 0x7f) throw error("a non-ASCII \\u escape");
          c = static_cast<char>(code);
          i += 4;
        } else if (simple.find(e) != std::string::npos) {
          c = meaning[simple.find(e)];
        } else {
          throw error("a bad escape");
        }
      }
      out += c;
    }
    expect('"');
    return out;
  };
  std::function<Json()> value = [&]() -> Json {
    skip();
    Json v;
    if (i >= text.size()) throw error("unexpected end");
    const char c = text[i];
    if (c == '{') {
      v.kind = Json::Kind::Object;
      ++i;
      skip();
      if (text[i] == '}') return ++i, v;
      do {
        std::string key = string();
        expect(':');
        v.members[key] = value();
        skip();
      } while (i < text.size() && text[i] == ',' && ++i);
      expect('}');
    } else if (c == '[') {
      v.kind = Json::Kind::Array;
      ++i;
      skip();
      if (text[i] == ']') return ++i, v;
      do {
        v.items.push_back(value());
        skip();
      } while (i < text.size() && text[i] == ',' && ++i);
      expect(']');
    } else if (c == '"') {
      v.kind = Json::Kind::String;
      v.string = string();
    } else if (text.compare(i, 4, "null") == 0) {
      i += 4;
    } else if (text.compare(i, 4, "true") == 0 || text.compare(i, 5, "false") == 0) {
      v.kind = Json::Kind::Bool;
      v.number = text[i] == 't';
      i += text[i] == 't' ? 4 : 5;
    } else {
      // JSON numbers are written with repr() by the generator: strtod reads them exactly.
      char* end = nullptr;
      v.kind = Json::Kind::Number;
      v.number = std::strtod(text.c_str() + i, &end);
      if (end == text.c_str() + i) throw error("expected a value");
      i = static_cast<size_t>(end - text.c_str());
    }
    return v;
  };
  Json root = value();
  skip();
  if (i != text.size()) throw error("text after the value");
  return root;
}

/// One matrix a seed document shows, as tests/fixtures/seeds/NNN.json records it.
struct SeedPrint {
  std::string where;               // "seed 000 (000_....txt) line 26, In [20]: Q"
  std::string text;                // numbers and brackets as shown; the parts joined if in parts
  std::vector<std::string> parts;  // the pieces of a matrix shown in pieces
  std::string repr;                // "", "array" or "list of arrays"
  Matrix values;                   // rectangular prints only (else 0x0)
  std::vector<double> numbers;     // every value, row by row
};

/// The fixture's entry `name` of seed document `seed` ("000"); a missing fixture file or entry
/// fails the test that asks for it.
inline SeedPrint seed_print(const std::string& seed, const std::string& name) {
  static std::map<std::string, Json> loaded;
  const std::string path = std::string(ATTN_FIXTURES_DIR) + "/seeds/" + seed + ".json";
  if (!loaded.count(seed)) {
    std::ifstream file(path, std::ios::binary);
    if (!file) FAIL("missing fixture " << path << " (written by tests/fixtures/make_seed_fixtures.py)");
    std::stringstream content;
    content << file.rdbuf();
    loaded[seed] = parse_json(content.str());
  }
  const Json& fixture = loaded[seed];
  if (!fixture["matrices"].has(name)) FAIL(path << " has no matrix \"" << name << "\"");
  const Json& e = fixture["matrices"][name];
  SeedPrint p;
  std::ostringstream where;
  where << "seed " << seed << " (" << fixture["document"].string << ") line " << e["line"].number;
  if (e["cell"].kind == Json::Kind::String) where << ", " << e["cell"].string;
  where << ": " << name;
  p.where = where.str();
  if (e.has("repr")) p.repr = e["repr"].string;
  if (e.has("parts")) {
    for (const Json& part : e["parts"].items) {
      p.parts.push_back(part.string);
      p.text += (p.text.empty() ? "" : "\n") + part.string;
    }
  } else {
    p.text = e["text"].string;
  }
  const auto& rows = e["values"].items;
  bool rectangular = !rows.empty();
  for (const Json& row : rows) {
    rectangular = rectangular && row.items.size() == rows[0].items.size();
    for (const Json& x : row.items) p.numbers.push_back(x.number);
  }
  if (rectangular) {
    p.values.resize(static_cast<Eigen::Index>(rows.size()), static_cast<Eigen::Index>(rows[0].items.size()));
    for (Eigen::Index r = 0; r < p.values.rows(); ++r)
      for (Eigen::Index c = 0; c < p.values.cols(); ++c)
        p.values(r, c) = rows[static_cast<size_t>(r)].items[static_cast<size_t>(c)].number;
  }
  return p;
}

/// The exact characters the document shows: the text, inside numpy's array(...) if it was a repr.
inline std::string as_printed(const SeedPrint& p) {
  if (p.repr == "array") return "array(" + p.text + ")";
  if (p.repr == "list of arrays") {
    std::string out = "[";
    for (size_t i = 0; i < p.parts.size(); ++i) out += (i ? ", array(" : "array(") + p.parts[i] + ")";
    return out + "]";
  }
  return p.text;
}

/// `m` holds exactly the fixture's values (a parser must read each printed decimal exactly).
inline void check_values(const Matrix& m, const SeedPrint& p) {
  INFO(p.where);
  REQUIRE(m.rows() == p.values.rows());
  REQUIRE(m.cols() == p.values.cols());
  for (Eigen::Index i = 0; i < m.rows(); ++i) {
    for (Eigen::Index j = 0; j < m.cols(); ++j) {
      INFO("row " << i + 1 << ", column " << j + 1);
      CHECK(m(i, j) == p.values(i, j));
    }
  }
}

/// Checks every entry of `m` against a seed print, to the digits printed.
inline void check_printed(const Matrix& m, const SeedPrint& p, double extra_relative = 0) {
  INFO(p.where);
  check_printed(m, p.text, extra_relative);
}

}  // namespace attn::testing
