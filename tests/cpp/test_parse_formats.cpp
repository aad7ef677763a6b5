// Tests of parse_matrix_detailed(): one fixture per format in tests/fixtures/parse/ (the exact
// text a tool prints, with the matrix it holds or the message that refuses it), then the
// formats' details and refusals case by case.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "parse.h"

using attn::InputError;
using attn::Matrix;
using attn::ParsedMatrix;
using attn::parse_matrix;
using attn::parse_matrix_detailed;
using Catch::Contains;

namespace {

// Every fixture, by file name: a missing one fails.
const char* const kFixtures[] = {
    "numpy-print.txt", "numpy-print-wrapped.txt", "numpy-repr.txt", "numpy-repr-dtype.txt",
    "numpy-int.txt", "numpy-column.txt", "numpy-scientific.txt", "numpy-matrix.txt",
    "numpy-ipython-out.txt", "numpy-source.txt", "python-repl.txt", "numpy-elided.txt",
    "numpy-3d.txt", "numpy-complex.txt", "torch-tensor.txt", "torch-requires-grad.txt",
    "torch-grad-fn.txt", "torch-dtype.txt", "torch-device.txt", "torch-parameter.txt",
    "torch-elided.txt", "tf-repr.txt", "tf-print.txt", "jax-array.txt", "julia-matrix.txt",
    "julia-vector.txt", "julia-elided.txt", "r-matrix.txt", "r-columns.txt", "r-vector.txt",
    "r-logical.txt", "r-elided.txt", "r-complex.txt", "octave-int.txt", "octave-columns.txt",
    "octave-scientific.txt", "octave-diagonal.txt", "octave-complex.txt", "matlab-scale.txt",
    "mathematica.txt", "latex-bmatrix.txt", "latex-pmatrix.txt", "latex-matrix.txt",
    "latex-array.txt", "latex-cdots.txt", "csv.txt", "csv-quoted.txt", "tsv.txt",
    "tsv-decimal-comma.txt", "semicolon-csv.txt", "decimal-comma-ambiguous.txt",
    "python-list.txt", "unicode-minus.txt", "unicode-spaces.txt", "unicode-in-message.txt",
    "ragged.txt",
};

/// A fixture: `# key: value` lines (source, format, expect: R x C and R rows of numbers, or
/// error), then `# text:`, then the text itself, byte for byte, to the end of the file.
struct Fixture {
  std::string source, format, error, text;
  long rows = 0, columns = 0;
  std::vector<double> expected;  // row-major
};

Fixture load(const std::string& name) {
  std::ifstream file(std::string(ATTN_FIXTURES_DIR) + "/parse/" + name, std::ios::binary);
  REQUIRE(file.good());
  std::stringstream all;
  all << file.rdbuf();
  const std::string content = all.str();
  const size_t text_at = content.find("# text:\n");
  REQUIRE(text_at != std::string::npos);
  Fixture fixture;
  fixture.text = content.substr(text_at + 8);
  std::istringstream header(content.substr(0, text_at));
  std::string line;
  while (std::getline(header, line)) {
    REQUIRE(line.rfind("# ", 0) == 0);
    line = line.substr(2);
    const auto value = [&](const char* key) { return line.substr(std::string(key).size()); };
    if (line.rfind("source: ", 0) == 0) {
      fixture.source = value("source: ");
    } else if (line.rfind("format: ", 0) == 0) {
      fixture.format = value("format: ");
    } else if (line.rfind("error: ", 0) == 0) {
      fixture.error = value("error: ");
    } else if (line.rfind("expect: ", 0) == 0) {
      std::istringstream shape(value("expect: "));
      std::string times;
      shape >> fixture.rows >> times >> fixture.columns;
      REQUIRE(times == "x");
    } else {  // a row of the expected matrix, as Python's repr() writes floats
      std::istringstream row(line);
      std::string number;
      while (row >> number) fixture.expected.push_back(std::strtod(number.c_str(), nullptr));
    }
  }
  return fixture;
}

/// Same shape and the same numbers, bit for bit (NaN equals NaN).
void check_same(const Matrix& actual, long rows, long columns, const std::vector<double>& expected) {
  REQUIRE(actual.rows() == rows);
  REQUIRE(actual.cols() == columns);
  REQUIRE(expected.size() == static_cast<size_t>(rows * columns));
  for (long i = 0; i < rows * columns; ++i) {
    INFO("element " << i);
    const double a = actual.data()[i];
    const double e = expected[static_cast<size_t>(i)];
    CHECK((a == e || (std::isnan(a) && std::isnan(e))));
    CHECK(std::signbit(a) == std::signbit(e));
  }
}

ParsedMatrix read(const std::string& text) { return parse_matrix_detailed(text, "X"); }

}  // namespace

TEST_CASE("parse formats: every fixture reads as its tool printed it, or is refused", "[parse]") {
  for (const char* name : kFixtures) {
    INFO("fixture " << name);
    const Fixture fixture = load(name);
    CHECK(!fixture.source.empty());
    if (!fixture.error.empty()) {
      REQUIRE_THROWS_AS(read(fixture.text), InputError);
      REQUIRE_THROWS_WITH(read(fixture.text), fixture.error);
      continue;
    }
    const ParsedMatrix parsed = read(fixture.text);
    CHECK(parsed.format == fixture.format);
    check_same(parsed.values, fixture.rows, fixture.columns, fixture.expected);
    // parse_matrix is parse_matrix_detailed's matrix.
    check_same(parse_matrix(fixture.text, "X"), fixture.rows, fixture.columns, fixture.expected);
  }
}
