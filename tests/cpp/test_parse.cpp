// Tests of parse_matrix(): every accepted format, every matrix printed in seeds 000, 002, 003,
// 004 (exactly as shown, from tests/fixtures/seeds/), every kind of bad input with its message,
// and robustness (deep nesting, huge words, arbitrary bytes).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>

#include "parse.h"
#include "printed.h"
#include "english.h"

using attn::InputError;
using attn::Matrix;
using attn::parse_matrix;
using attn::testing::as_printed;
using attn::testing::check_values;
using attn::testing::seed_print;
using attn::testing::SeedPrint;
using Catch::Contains;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

/// A seed document's literal as its code wrote it: np.array(TEXT, dtype='float32').
std::string as_float32_literal(const SeedPrint& p) { return "np.array(" + p.text + ", dtype='float32')"; }

/// parse_matrix with the name "W_Q", as the error-message tests expect.
Matrix Parse(const std::string& text) { return parse_matrix(text, "W_Q"); }

}  // namespace

// ---------------------------------------------------------------------------------------------
// Formats

TEST_CASE("parse: Python / JSON nested lists", "[parse]") {
  const Matrix m = parse_matrix("[[1, 2], [3, 4]]");
  REQUIRE(m.rows() == 2);
  REQUIRE(m.cols() == 2);
  CHECK(m(0, 0) == 1.0);
  CHECK(m(0, 1) == 2.0);
  CHECK(m(1, 0) == 3.0);
  CHECK(m(1, 1) == 4.0);

  const Matrix json = parse_matrix("[[0.5,-1.25e-3],[1E2,-0]]");
  CHECK(json(0, 1) == -1.25e-3);
  CHECK(json(1, 0) == 100.0);
  CHECK(json(1, 1) == 0.0);
  CHECK(std::signbit(json(1, 1)));
}

TEST_CASE("parse: a single list is one row", "[parse]") {
  const Matrix m = parse_matrix("[1, 0, 1, 0]");
  REQUIRE(m.rows() == 1);
  REQUIRE(m.cols() == 4);
  CHECK(m(0, 0) == 1.0);
  CHECK(m(0, 1) == 0.0);
  CHECK(m(0, 3) == 0.0);

  const Matrix one = parse_matrix("[7]");
  REQUIRE(one.rows() == 1);
  REQUIRE(one.cols() == 1);
  CHECK(one(0, 0) == 7.0);
}

TEST_CASE("parse: numpy print output without commas, rows wrapped over lines", "[parse]") {
  const Matrix m = parse_matrix("[[ 1.5 -2.   3.\n   4. ]\n [ 5.  6.  -7.\n   8.5]]");
  REQUIRE(m.rows() == 2);
  REQUIRE(m.cols() == 4);
  CHECK(m(0, 1) == -2.0);
  CHECK(m(0, 3) == 4.0);
  CHECK(m(1, 2) == -7.0);
  CHECK(m(1, 3) == 8.5);

  // A long 1-D numpy array wraps too: still one row.
  const Matrix row = parse_matrix("[ 0.1  0.2  0.3\n  0.4]");
  REQUIRE(row.rows() == 1);
  REQUIRE(row.cols() == 4);
  CHECK(row(0, 3) == 0.4);
}

TEST_CASE("parse: numpy repr with array(...) and dtype", "[parse]") {
  const Matrix m = parse_matrix("array([[1.3612579e-01, 4.3193707e-01],\n       [8.9e-04, 2.]], dtype=float32)");
  REQUIRE(m.rows() == 2);
  REQUIRE(m.cols() == 2);
  CHECK(m(0, 0) == 1.3612579e-01);
  CHECK(m(1, 0) == 8.9e-04);

  CHECK(parse_matrix("np.array([[1, 2]], dtype='float32')")(0, 1) == 2.0);
  CHECK(parse_matrix("numpy.array([3, 4], dtype=np.float64)")(0, 1) == 4.0);
  CHECK(parse_matrix("array([5, 6])")(0, 0) == 5.0);
  CHECK(parse_matrix("array([5, 6],)")(0, 1) == 6.0);
  CHECK(parse_matrix("[array([1, 2]), array([3, 4])]")(1, 0) == 3.0);  // a list of 1-D rows
}

TEST_CASE("parse: a list of numpy column vectors becomes the columns of one matrix", "[parse]") {
  const Matrix m = parse_matrix("[array([[1], [2], [3]]), array([[4], [5], [6]])]");
  REQUIRE(m.rows() == 3);
  REQUIRE(m.cols() == 2);
  CHECK(m(0, 0) == 1.0);
  CHECK(m(2, 0) == 3.0);
  CHECK(m(0, 1) == 4.0);
  CHECK(m(2, 1) == 6.0);

  // The same as a plain 3-D nested list (numpy prints k x r x 1 arrays like this).
  const Matrix nested = parse_matrix("[[[1]\n  [2]]\n\n [[3]\n  [4]]]");
  REQUIRE(nested.rows() == 2);
  REQUIRE(nested.cols() == 2);
  CHECK(nested(1, 0) == 2.0);
  CHECK(nested(0, 1) == 3.0);

  // One column vector is an r x 1 matrix either way.
  const Matrix single = parse_matrix("[array([[1], [2]])]");
  REQUIRE(single.rows() == 2);
  REQUIRE(single.cols() == 1);
  CHECK(parse_matrix("array([[1], [2]])").rows() == 2);
}

TEST_CASE("parse: CSV, TSV and whitespace-separated rows", "[parse]") {
  for (const char* text : {"1,2,3\n4,5,6", "1, 2, 3\n4, 5, 6\n", "1\t2\t3\n4\t5\t6\n", "1 2 3\n4 5 6",
                           "  1   2 3  \n\n 4 5    6\n\n", "1,2,3,\n4,5,6,\n", "1,2,3\r\n4,5,6\r\n", "1 2 3\r4 5 6"}) {
    INFO(text);
    const Matrix m = parse_matrix(text);
    REQUIRE(m.rows() == 2);
    REQUIRE(m.cols() == 3);
    CHECK(m(0, 0) == 1.0);
    CHECK(m(0, 2) == 3.0);
    CHECK(m(1, 0) == 4.0);
    CHECK(m(1, 2) == 6.0);
  }
  const Matrix one = parse_matrix("-2.5");
  REQUIRE(one.size() == 1);
  CHECK(one(0, 0) == -2.5);
}

TEST_CASE("parse: MATLAB style", "[parse]") {
  for (const char* text : {"[1 2; 3 4]", "[1, 2; 3, 4]", "[1 2;\n 3 4]", "[1 2; 3 4;]"}) {
    INFO(text);
    const Matrix m = parse_matrix(text);
    REQUIRE(m.rows() == 2);
    REQUIRE(m.cols() == 2);
    CHECK(m(0, 1) == 2.0);
    CHECK(m(1, 0) == 3.0);
    CHECK(m(1, 1) == 4.0);
  }
  const Matrix column = parse_matrix("[1; 2; 3]");
  REQUIRE(column.rows() == 3);
  REQUIRE(column.cols() == 1);
  CHECK(column(2, 0) == 3.0);
}

TEST_CASE("parse: inf, nan, np.inf and booleans are numbers", "[parse]") {
  const Matrix m = parse_matrix(
      "[[inf, -inf, +inf, INF, Infinity, -infinity], [nan, NaN, -nan, np.inf, -np.inf, np.nan],"
      " [numpy.inf, True, False, true, false, +1]]");
  REQUIRE(m.rows() == 3);
  REQUIRE(m.cols() == 6);
  CHECK(m(0, 0) == kInf);
  CHECK(m(0, 1) == -kInf);
  CHECK(m(0, 2) == kInf);
  CHECK(m(0, 3) == kInf);
  CHECK(m(0, 4) == kInf);
  CHECK(m(0, 5) == -kInf);
  CHECK(std::isnan(m(1, 0)));
  CHECK(std::isnan(m(1, 1)));
  CHECK(std::isnan(m(1, 2)));
  CHECK(m(1, 3) == kInf);
  CHECK(m(1, 4) == -kInf);
  CHECK(std::isnan(m(1, 5)));
  CHECK(m(2, 0) == kInf);
  CHECK(m(2, 1) == 1.0);
  CHECK(m(2, 2) == 0.0);
  CHECK(m(2, 3) == 1.0);
  CHECK(m(2, 4) == 0.0);
  CHECK(m(2, 5) == 1.0);

  // An additive causal mask as numpy prints it, and a boolean mask as CSV.
  const Matrix mask = parse_matrix("[[  0. -inf -inf]\n [  0.   0. -inf]\n [  0.   0.   0.]]");
  CHECK(mask(0, 1) == -kInf);
  CHECK(mask(2, 2) == 0.0);
  const Matrix keep = parse_matrix("True,False\nfalse,true");
  CHECK(keep(0, 0) == 1.0);
  CHECK(keep(1, 0) == 0.0);
}

TEST_CASE("parse: numbers are converted exactly (correctly rounded)", "[parse]") {
  const Matrix m = parse_matrix(
      "[0.1, 0.49671415, 1.3612579e-01, 9007199254740993, 2.2250738585072011e-308,"
      " 1.7976931348623157e308, 4.9406564584124654e-324, 1., .5, 1e-400, -1e-400,"
      " 0.30000000000000004, 123456789012345678901234567890]");
  REQUIRE(m.cols() == 13);
  CHECK(m(0, 0) == 0.1);
  CHECK(m(0, 1) == 0.49671415);
  CHECK(m(0, 2) == 0.13612579);
  CHECK(m(0, 3) == 9007199254740992.0);  // halfway: rounds to even
  CHECK(m(0, 4) == 2.2250738585072011e-308);
  CHECK(m(0, 5) == std::numeric_limits<double>::max());
  CHECK(m(0, 6) == std::numeric_limits<double>::denorm_min());
  CHECK(m(0, 7) == 1.0);
  CHECK(m(0, 8) == 0.5);
  CHECK(m(0, 9) == 0.0);  // underflow gives 0, as in Python
  CHECK(m(0, 10) == 0.0);
  CHECK(std::signbit(m(0, 10)));
  CHECK(m(0, 11) == 0.30000000000000004);
  CHECK(m(0, 12) == 123456789012345678901234567890.0);
}

TEST_CASE("parse: random literals match the correctly rounded strtod", "[parse]") {
  // Short literals take a fast path, long ones the general one: both must round exactly.
  uint64_t state = 12345;
  auto next = [&state]() {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return state >> 33;
  };
  for (int i = 0; i < 20000; ++i) {
    std::string literal = (next() % 2) ? "-" : "";
    const int int_digits = static_cast<int>(next() % 12);
    const int frac_digits = static_cast<int>(next() % 22);
    for (int d = 0; d < int_digits; ++d) literal += static_cast<char>('0' + next() % 10);
    if (int_digits == 0 || frac_digits > 0) {
      literal += '.';
      for (int d = 0; d < std::max(frac_digits, int_digits == 0 ? 1 : 0); ++d) {
        literal += static_cast<char>('0' + next() % 10);
      }
    }
    if (next() % 3 == 0) literal += "e" + std::to_string(static_cast<int>(next() % 80) - 40);
    INFO(literal);
    CHECK(parse_matrix(literal)(0, 0) == std::strtod(literal.c_str(), nullptr));
  }
}

TEST_CASE("parse: surrounding whitespace, trailing commas and Windows line endings", "[parse]") {
  const Matrix m = parse_matrix("\r\n  \t[[1, 2,],\r\n [3, 4,],]  ,\r\n\n  ");
  REQUIRE(m.rows() == 2);
  REQUIRE(m.cols() == 2);
  CHECK(m(1, 1) == 4.0);
  // A non-breaking space (as copied from a web page) is whitespace.
  const Matrix nbsp = parse_matrix(
      "[1\xc2\xa0"
      "2]");
  REQUIRE(nbsp.cols() == 2);
  CHECK(nbsp(0, 1) == 2.0);
}

// ---------------------------------------------------------------------------------------------
// Seeds: every matrix they print.

namespace {

/// Parses what the document shows and checks every number read is exactly the printed decimal.
Matrix parse_seed(const SeedPrint& p, const std::string& text, Eigen::Index rows, Eigen::Index cols) {
  INFO(p.where);
  const Matrix m = parse_matrix(text, "M");
  REQUIRE(m.rows() == rows);
  REQUIRE(m.cols() == cols);
  check_values(m, p);
  return m;
}

Matrix parse_seed(const std::string& seed, const std::string& name, Eigen::Index rows, Eigen::Index cols) {
  const SeedPrint p = seed_print(seed, name);
  return parse_seed(p, as_printed(p), rows, cols);
}

}  // namespace

TEST_CASE("parse: seed 000 (numpy print, wrapped rows, array repr)", "[parse]") {
  // 4x8 prints wrap each row over two lines.
  for (const char* name : {"Q", "K", "output", "causal_output"}) parse_seed("000", name, 4, 8);
  // The repr: array([[a, b, ...], ...]) with commas and aligned columns.
  parse_seed("000", "scores", 4, 4);
  const Matrix attention = parse_seed("000", "weights", 4, 4);
  for (int i = 0; i < 4; ++i) CHECK(attention.row(i).sum() == Approx(1.0).margin(1e-7));

  // The document cuts V off mid-matrix: that must be an error, not a short matrix.
  REQUIRE_THROWS_SAYING(parse_matrix(as_printed(seed_print("000", "V")), "V"),
                        "V: unbalanced brackets: '[' at line 3 is never closed");
}

TEST_CASE("parse: seed 002 (list of column vectors, scientific notation)", "[parse]") {
  // all_x: three 4x1 arrays -> the 4x3 matrix X whose columns are the inputs.
  parse_seed("002", "X", 4, 3);
  for (const char* name : {"queries_difference", "keys_difference", "values_difference"}) {
    parse_seed("002", name, 4, 3);
  }
  // A Python list of 17-digit floats: one row.
  parse_seed("002", "weights_column_0", 1, 3);
  parse_seed("002", "output_T_row_0", 1, 4);
  parse_seed("002", "output_T", 3, 4);
  parse_seed("002", "weights", 3, 3);
  parse_seed("002", "scaled_output_T", 3, 4);
}

TEST_CASE("parse: seed 003 (float32 prints, np.array with dtype, commas within rows)", "[parse]") {
  parse_seed("003", "X", 3, 4);
  // The weights as the document's code writes them.
  const SeedPrint w_k = seed_print("003", "W_K");
  parse_seed(w_k, as_float32_literal(w_k), 4, 3);
  parse_seed("003", "Q", 3, 3);
  parse_seed("003", "scale_divisor", 1, 1);
  parse_seed("003", "weights", 3, 3);
  // Commas inside rows but none between them: numpy's mixed print, still 3x3.
  parse_seed("003", "output", 3, 3);
}

TEST_CASE("parse: seed 004 (float32 2x2 and the inputs as np.array)", "[parse]") {
  parse_seed("004", "output", 2, 2);
  const SeedPrint w_v = seed_print("004", "W_V");
  parse_seed(w_v, "np.array(" + w_v.text + ")", 2, 2);
}

// ---------------------------------------------------------------------------------------------
// Errors: each names the input, the position (from 1), what was found and what was expected.

TEST_CASE("parse: empty text", "[parse]") {
  REQUIRE_THROWS_AS(Parse(""), InputError);
  REQUIRE_THROWS_SAYING(Parse(""), "W_Q: no numbers found (the text is empty)");
  REQUIRE_THROWS_SAYING(Parse(" \n\t\r\n "), "W_Q: no numbers found (the text is empty)");
  REQUIRE_THROWS_SAYING(Parse("[]"), "W_Q: no numbers found (only empty lists)");
  REQUIRE_THROWS_SAYING(Parse("[[], []]"), "W_Q: no numbers found (only empty lists)");
  REQUIRE_THROWS_SAYING(Parse("array([])"), "W_Q: no numbers found (only empty lists)");
  REQUIRE_THROWS_SAYING(parse_matrix(""), "matrix: no numbers found (the text is empty)");
}

TEST_CASE("parse: ragged rows", "[parse]") {
  REQUIRE_THROWS_SAYING(Parse("[[1, 2, 3, 4], [5, 6, 7]]"), "W_Q: row 2 has 3 numbers but row 1 has 4");
  REQUIRE_THROWS_SAYING(Parse("1,2,3,4\n5,6,7,8\n9,10,11"), "W_Q: row 3 has 3 numbers but row 1 has 4");
  REQUIRE_THROWS_SAYING(Parse("1 2\n3"), "W_Q: row 2 has 1 number but row 1 has 2");
  REQUIRE_THROWS_SAYING(Parse("[1 2; 3 4 5]"), "W_Q: row 2 has 3 numbers but row 1 has 2");
  REQUIRE_THROWS_SAYING(Parse("[[1, 2], []]"), "W_Q: row 2 has 0 numbers but row 1 has 2");
  REQUIRE_THROWS_SAYING(Parse("[array([[1], [2]]), array([[3]])]"),
                        "W_Q: column vector 2 has 1 row but column vector 1 has 2 (they become the "
                        "columns of one matrix)");
  // A TSV row with an empty cell collapses, so it shows up as a short row.
  REQUIRE_THROWS_SAYING(Parse("1\t2\t3\n4\t\t6"), "W_Q: row 2 has 2 numbers but row 1 has 3");
}

TEST_CASE("parse: a non-number is an error, never skipped", "[parse]") {
  REQUIRE_THROWS_SAYING(Parse("[[1, 2, abc]]"), "W_Q: row 1, column 3: expected a number but found 'abc'");
  REQUIRE_THROWS_SAYING(Parse("1 2 abc"), "W_Q: row 1, column 3: expected a number but found 'abc'");
  REQUIRE_THROWS_SAYING(Parse("[[1 2]\n [3 x]]"), "W_Q: row 2, column 2: expected a number but found 'x'");
  // A header row, a label line.
  REQUIRE_THROWS_SAYING(Parse("a,b\n1,2"), "W_Q: row 1, column 1: expected a number but found 'a'");
  REQUIRE_THROWS_SAYING(Parse("Q\n [[1, 2]]"), "W_Q: row 1, column 1: expected a number but found 'Q'");
  REQUIRE_THROWS_SAYING(Parse("K\n 1 2"), "W_Q: row 1, column 1: expected a number but found 'K'");
  // Words and syntax that look almost like numbers.
  for (const char* bad :
       {"1e", "--1", "+-1", "1.2.3", "0x10", "1_000", "e5", ".", "-", "infinit", "np.infx", "-True", "inf1"}) {
    INFO(bad);
    REQUIRE_THROWS_SAYING(Parse(std::string("[") + bad + "]"),
                          Contains("row 1, column 1: expected a number but found '"));
  }
  REQUIRE_THROWS_SAYING(Parse("[nan(1)]"), "W_Q: row 1, column 2: expected a number but found '('");
  REQUIRE_THROWS_SAYING(Parse("[1 - 2]"), "W_Q: row 1, column 2: expected a number but found '-'");
  REQUIRE_THROWS_SAYING(Parse("[[1, 2, ..., 9]]"), Contains("row 1, column 3: expected a number but found '...': numpy "
                                                            "shortened this array"));
  // Long or binary words are shortened and escaped in the message.
  REQUIRE_THROWS_SAYING(Parse("[\x01\xff]"), "W_Q: row 1, column 1: expected a number but found '\\x01\\xff'");
  REQUIRE_THROWS_SAYING(Parse("[" + std::string(100, 'z') + "]"),
                        "W_Q: row 1, column 1: expected a number but found '" + std::string(27, 'z') + "...'");
  // ';' separates the cells of semicolon-separated values, so an empty cell is an error.
  REQUIRE_THROWS_SAYING(Parse("1;;3"), "W_Q: row 1, column 2: expected a number but found ';'");
}

TEST_CASE("parse: empty fields and stray separators", "[parse]") {
  REQUIRE_THROWS_SAYING(Parse("1,,2"), "W_Q: row 1, column 2: expected a number but found ','");
  REQUIRE_THROWS_SAYING(Parse("1,2\n,3,4"), "W_Q: row 2, column 1: expected a number but found ','");
  REQUIRE_THROWS_SAYING(Parse("[1,,2]"), "W_Q: row 1, column 2: expected a number but found ','");
  REQUIRE_THROWS_SAYING(Parse("[,1]"), "W_Q: row 1, column 1: expected a number but found ','");
  REQUIRE_THROWS_SAYING(Parse("[[1,2],,[3,4]]"), "W_Q: row 2: expected a number but found ','");
  REQUIRE_THROWS_SAYING(Parse("[1;;2]"), "W_Q: row 2, column 1: expected a number but found ';'");
  REQUIRE_THROWS_SAYING(Parse("[[1;2]]"),
                        "W_Q: unexpected ';' at line 1: ';' ends a row only in MATLAB-style text "
                        "like [1 2; 3 4]");
  REQUIRE_THROWS_SAYING(Parse("[1,2],,"), "W_Q: expected the end of the text after the matrix but found ',' at line 1");
}

TEST_CASE("parse: unbalanced brackets", "[parse]") {
  REQUIRE_THROWS_SAYING(Parse("[[1, 2], [3, 4]"), "W_Q: unbalanced brackets: '[' at line 1 is never closed");
  REQUIRE_THROWS_SAYING(Parse("[[1, 2],\n [3, 4"), "W_Q: unbalanced brackets: '[' at line 2 is never closed");
  REQUIRE_THROWS_SAYING(Parse("[[1]]]"), "W_Q: unbalanced brackets: ']' at line 1 has no matching '['");
  REQUIRE_THROWS_SAYING(Parse("]"), "W_Q: unbalanced brackets: ']' at line 1 has no matching '['");
  REQUIRE_THROWS_SAYING(Parse("array([1, 2]"), "W_Q: unbalanced brackets: '(' at line 1 is never closed");
  REQUIRE_THROWS_SAYING(Parse("array([1, 2]))"), "W_Q: unbalanced brackets: ')' at line 1 has no matching '('");
  REQUIRE_THROWS_SAYING(Parse("[1, 2)"), "W_Q: unbalanced brackets: ')' at line 1 closes the '[' from line 1");
  REQUIRE_THROWS_SAYING(Parse("array([1, 2]]"), "W_Q: unbalanced brackets: ']' at line 1 closes the '(' from line 1");
  REQUIRE_THROWS_SAYING(Parse("1 2]"), "W_Q: row 1, column 3: expected a number but found ']'");
}

TEST_CASE("parse: malformed array(...) wrappers", "[parse]") {
  REQUIRE_THROWS_SAYING(Parse("array()"), "W_Q: expected '[' after 'array(' at line 1 but found ')'");
  REQUIRE_THROWS_SAYING(Parse("array(array([1]))"), "W_Q: expected '[' after 'array(' at line 1 but found 'array'");
  REQUIRE_THROWS_SAYING(Parse("array((1, 2))"), "W_Q: expected '[' after 'array(' at line 1 but found '('");
  REQUIRE_THROWS_SAYING(Parse("array([1], float32)"),
                        "W_Q: expected 'dtype=...' or ')' in the 'array(' from line 1 but found "
                        "'float32'");
  REQUIRE_THROWS_SAYING(Parse("array([1] 5)"), "W_Q: expected ',' or ')' in the 'array(' from line 1 but found '5'");
  REQUIRE_THROWS_SAYING(Parse("array([1], dtype=int64 x)"),
                        "W_Q: expected ')' in the 'array(' from line 1 but found 'x'");
  REQUIRE_THROWS_SAYING(Parse("(1, 2)"), "W_Q: expected '[' at line 1 but found '('");
  REQUIRE_THROWS_SAYING(Parse("[1, (2)]"), "W_Q: row 1, column 2: expected a number but found '('");
}

TEST_CASE("parse: one matrix at a time", "[parse]") {
  REQUIRE_THROWS_SAYING(Parse("[1 2]\n[3 4]"),
                        "W_Q: expected the end of the text after the matrix but found '[' at line 2 "
                        "(give one matrix at a time)");
  REQUIRE_THROWS_SAYING(Parse("[[1, 2]]\nK"),
                        "W_Q: expected the end of the text after the matrix but found 'K' at line 2 "
                        "(give one matrix at a time)");
  REQUIRE_THROWS_SAYING(Parse("[[1, 2]], dtype=float32)"),
                        Contains("after the matrix but found 'dtype=float32' at line 1"));
}

TEST_CASE("parse: out-of-range numbers", "[parse]") {
  REQUIRE_THROWS_SAYING(Parse("[1, 1e999]"), "W_Q: row 1, column 2: 1e999 is out of the range of a double");
  REQUIRE_THROWS_SAYING(Parse("[[1, 2], [3, -1e999]]"), "W_Q: row 2, column 2: -1e999 is out of the range of a double");
  REQUIRE_THROWS_SAYING(Parse("1.7976931348623159e308"),
                        "W_Q: row 1, column 1: 1.7976931348623159e308 is out of the range of a double");
  REQUIRE_THROWS_SAYING(Parse("0.0001e99999999999999999999999"), Contains("is out of the range of a double"));
  REQUIRE_THROWS_SAYING(Parse(std::string(400, '9')),
                        "W_Q: row 1, column 1: " + std::string(27, '9') + "... is out of the range of a double");
}

TEST_CASE("parse: mixed nesting depths", "[parse]") {
  REQUIRE_THROWS_SAYING(Parse("[1, [2]]"), "W_Q: row 1, column 2: expected a number but found '['");
  REQUIRE_THROWS_SAYING(Parse("[[1], 2]"), "W_Q: row 2: expected '[' (every row is a list) but found '2'");
  REQUIRE_THROWS_SAYING(Parse("[[1, 2], [[3], [4]]]"), "W_Q: row 2, column 1: expected a number but found '['");
  REQUIRE_THROWS_SAYING(Parse("[[[1], [2]], [3, 4]]"),
                        "W_Q: row 2, column 1: expected '[' (every row is a list) but found '3'");
}

TEST_CASE("parse: a 3-D array that is not a list of column vectors", "[parse]") {
  REQUIRE_THROWS_SAYING(Parse("[[[1, 2], [3, 4]], [[5, 6], [7, 8]]]"),
                        "W_Q: expected a matrix (2 dimensions) but found a 3-D array of shape "
                        "2 x 2 x 2: 2 slices of 2 x 2; paste one 2-D slice at a time (e.g. A[0])");
  REQUIRE_THROWS_SAYING(Parse("[array([[1], [2]]), array([[3, 4], [5, 6]])]"),
                        "W_Q: expected a matrix (2 dimensions) but found a 3-D array whose slices "
                        "differ: slice 1 is 2 x 1, slice 2 is 2 x 2; paste one 2-D slice at a time");
  REQUIRE_THROWS_SAYING(Parse("[[[1]], [[]]]"), Contains("slice 1 is 1 x 1, slice 2 is 1 x 0"));
}

TEST_CASE("parse: deep nesting fails cleanly, without recursion", "[parse]") {
  REQUIRE_THROWS_SAYING(Parse("[[[[1]]]]"),
                        "W_Q: nested too deeply: the '[' at line 1 opens a 4th level, but a matrix "
                        "has 2 levels (3 for a list of column vectors)");
  REQUIRE_THROWS_SAYING(Parse(std::string(10000, '[')), Contains("nested too deeply"));
  REQUIRE_THROWS_SAYING(Parse(std::string(1000000, '[') + std::string(1000000, ']')), Contains("nested too deeply"));
  std::string wrappers;
  for (int i = 0; i < 10000; ++i) wrappers += "array(";
  REQUIRE_THROWS_SAYING(Parse(wrappers), "W_Q: expected '[' after 'array(' at line 1 but found 'array'");
  REQUIRE_THROWS_SAYING(Parse(std::string(10000, ']')), "W_Q: unbalanced brackets: ']' at line 1 has no matching '['");
}

// ---------------------------------------------------------------------------------------------
// Robustness and speed

TEST_CASE("parse: arbitrary bytes give a matrix or an InputError, nothing else", "[parse]") {
  // A small deterministic fuzz: random bytes drawn mostly from the parser's own alphabet, and
  // random single-byte mutations of seed text. Under ASan/UBSan this also checks memory safety.
  uint64_t state = 0x9E3779B97F4A7C15ull;
  auto next = [&state]() {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  const std::string alphabet = "[](),;. \n\r\t-+eE0123456789infatyrudslINFnpx.=\xc2\xa0\xff";
  int parsed = 0;
  for (int round = 0; round < 20000; ++round) {
    std::string text;
    if (round % 2 == 0) {
      const size_t length = next() % 40;
      for (size_t i = 0; i < length; ++i) text += alphabet[next() % alphabet.size()];
    } else {
      static const std::string seeds[] = {as_printed(seed_print("000", "scores")), as_printed(seed_print("002", "X")),
                                          as_float32_literal(seed_print("003", "W_K")),
                                          as_printed(seed_print("003", "output")), "[1 2; 3 4]"};
      text = seeds[next() % 5];
      for (int edits = 0; edits < 3; ++edits) {
        text[next() % text.size()] = alphabet[next() % alphabet.size()];
      }
    }
    try {
      const Matrix m = parse_matrix(text, "fuzz");
      CHECK(m.size() > 0);
      ++parsed;
    } catch (const InputError& error) {
      // Every message is a parse error's id naming the input.
      CHECK(error.message().id.rfind("error.parse-", 0) == 0);
      CHECK(english(error.message()).rfind("fuzz: ", 0) == 0);
    }
  }
  CHECK(parsed > 100);  // the mutations leave many texts valid
}

// Quadratic behaviour would make these take minutes (ctest's timeout catches it); the parser's
// speed itself is measured by the benchmark, not asserted here.
TEST_CASE("parse: huge words and texts", "[parse]") {
  // 1 MB literals: digits, zeros before a 1, a long exponent.
  CHECK(Parse("0." + std::string(1000000, '0') + "1")(0, 0) == 0.0);
  CHECK(Parse("1." + std::string(1000000, '0'))(0, 0) == 1.0);
  CHECK(Parse("1e-" + std::string(1000000, '9'))(0, 0) == 0.0);
  REQUIRE_THROWS_SAYING(Parse(std::string(1000000, '1')), Contains("out of the range of a double"));
  REQUIRE_THROWS_SAYING(Parse(std::string(1000000, 'x')), Contains("found 'xxx"));
  // Many rows and many blank lines.
  std::string rows;
  for (int i = 0; i < 100000; ++i) rows += "1,2\n\n";
  CHECK(Parse(rows).rows() == 100000);
}

TEST_CASE("parse: a 256x256 numpy print parses exactly", "[parse]") {
  // Build numpy-style text: 8 numbers per line, rows wrapped, like seed 000's Q but 256 wide.
  std::string text = "[";
  for (int r = 0; r < 256; ++r) {
    text += r == 0 ? "[" : " [";
    for (int c = 0; c < 256; ++c) {
      const int v = (r * 256 + c) * 7919 % 2000001 - 1000000;  // 7 significant digits
      text += (c > 0 && c % 8 == 0) ? "\n  " : " ";
      text += std::to_string(v / 1000000.0).substr(0, 10);
    }
    text += r == 255 ? "]]" : "]\n";
  }
  const Matrix expected_corner = parse_matrix(text.substr(0, text.find(' ', 4)) + "]]");

  const Matrix m = parse_matrix(text);
  REQUIRE(m.rows() == 256);
  REQUIRE(m.cols() == 256);
  CHECK(m(0, 0) == expected_corner(0, 0));
  CHECK(m(0, 1) == std::stod(std::to_string(7919 / 1000000.0 - 1.0).substr(0, 10)));
}
