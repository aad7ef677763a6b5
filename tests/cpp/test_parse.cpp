// Tests of parse_matrix(): every accepted format, every matrix printed in seeds 000, 002, 003,
// 004 (copied verbatim below), every kind of bad input with its message, and robustness
// (deep nesting, huge words, arbitrary bytes).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>

#include "parse.h"

using attn::InputError;
using attn::Matrix;
using attn::parse_matrix;
using Catch::Contains;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Matrices as printed in the seed documents (shared/seeds/*.txt), copied byte for byte.
// seed 000, lines 26-33
const char* const kSeed0Q = R"txt( [[ 0.49671415 -0.1382643   0.64768854  1.52302986 -0.23415337 -0.23413696
   1.57921282  0.76743473]
 [-0.46947439  0.54256004 -0.46341769 -0.46572975  0.24196227 -1.91328024
  -1.72491783 -0.56228753]
 [-1.01283112  0.31424733 -0.90802408 -1.4123037   1.46564877 -0.2257763
   0.0675282  -1.42474819]
 [-0.54438272  0.11092259 -1.15099358  0.37569802 -0.60063869 -0.29169375
  -0.60170661  1.85227818]])txt";

// seed 000, lines 35-42
const char* const kSeed0K = R"txt( [[-0.01349722 -1.05771093  0.82254491 -1.22084365  0.2088636  -1.95967012
  -1.32818605  0.19686124]
 [ 0.73846658  0.17136828 -0.11564828 -0.3011037  -1.47852199 -0.71984421
  -0.46063877  1.05712223]
 [ 0.34361829 -1.76304016  0.32408397 -0.38508228 -0.676922    0.61167629
   1.03099952  0.93128012]
 [-0.83921752 -0.30921238  0.33126343  0.97554513 -0.47917424 -0.18565898
  -1.10633497 -1.19620662]])txt";

// seed 000, lines 44-47
const char* const kSeed0VTruncated = R"txt( [[ 0.81252582  1.35624003 -0.07201012  1.0035329   0.36163603 -0.64511975
   0.36139561  1.53803657]
 [-0.03582604  1.56464366 -2.6197451   0.8219025   0.08704707 -0.29900735
   0.09)txt";

// seed 000, lines 60-63
const char* const kSeed0Scores = R"txt(array([[-2.72357421,  0.40818741,  2.39601116, -1.18323729],
       [ 5.60012069,  1.1597874 , -4.7248515 ,  2.43859568],
       [ 1.03699903, -3.70553788, -3.0399309 ,  0.04345596],
       [ 0.09460324,  2.97027193,  0.43247995, -0.80026704]]))txt";

// seed 000, lines 88-91
const char* const kSeed0Attention = R"txt([[0.08431243 0.25513027 0.51521078 0.14534652]
 [0.64059204 0.1332861  0.01664257 0.2094793 ]
 [0.47006414 0.08789379 0.11121405 0.33082801]
 [0.17794451 0.49185018 0.20052305 0.12968226]])txt";

// seed 000, lines 101-108
const char* const kSeed0NewValues = R"txt( [[-0.1308104   0.77212573  0.10108921  0.16807328 -0.46588684 -0.43681263
   0.46851458 -0.42075407]
 [ 0.40109276  1.19080398 -0.35037302  0.94668908  0.08274232 -0.53010106
   0.17683369  0.41923385]
 [ 0.17910025  0.98456145 -0.06763014  0.80678092 -0.14453166 -0.49373081
   0.15002954  0.10067088]
 [ 0.01421368  1.14907671 -0.99239485  0.60451701 -0.14600018 -0.40496816
   0.24215067 -0.82777073]])txt";

// seed 000, lines 125-132
const char* const kSeed0MaskedNewValues = R"txt( [[ 0.81252582  1.35624003 -0.07201012  1.0035329   0.36163603 -0.64511975
   0.36139561  1.53803657]
 [ 0.66641301  1.39213367 -0.51081002  0.97225045  0.31434319 -0.58550834
   0.31495603  0.93081668]
 [ 0.52954961  1.21756173 -0.14905901  0.7267579   0.1310981  -0.57583252
   0.41805381  0.87397953]
 [ 0.01421368  1.14907671 -0.99239485  0.60451701 -0.14600018 -0.40496816
   0.24215067 -0.82777073]])txt";

// seed 002, lines 39-48
const char* const kSeed2AllX = R"txt([array([[ 1.78862847],
       [ 0.43650985],
       [ 0.09649747],
       [-1.8634927 ]]), array([[-0.2773882 ],
       [-0.35475898],
       [-0.08274148],
       [-0.62700068]]), array([[-0.04381817],
       [-0.47721803],
       [-1.31386475],
       [ 0.88462238]])])txt";

// seed 002, lines 108-111
const char* const kSeed2DiffQ = R"txt([[ 0.00000000e+00 -4.44089210e-16  0.00000000e+00]
 [ 0.00000000e+00  0.00000000e+00  0.00000000e+00]
 [ 0.00000000e+00  0.00000000e+00  0.00000000e+00]
 [ 0.00000000e+00 -1.11022302e-16  0.00000000e+00]])txt";

// seed 002, lines 112-115
const char* const kSeed2DiffK = R"txt([[ 0.00000000e+00  5.55111512e-17  0.00000000e+00]
 [ 0.00000000e+00  0.00000000e+00  0.00000000e+00]
 [ 8.88178420e-16 -1.04083409e-17  5.55111512e-17]
 [ 0.00000000e+00  2.22044605e-16  1.11022302e-16]])txt";

// seed 002, lines 116-119
const char* const kSeed2DiffV = R"txt([[ 4.44089210e-16  0.00000000e+00  2.22044605e-16]
 [ 0.00000000e+00  0.00000000e+00 -5.55111512e-17]
 [ 0.00000000e+00  0.00000000e+00  0.00000000e+00]
 [ 0.00000000e+00  0.00000000e+00  0.00000000e+00]])txt";

// seed 002, lines 173-173
const char* const kSeed2Attentions0 = R"txt([1.2432614615724094e-13, 0.9982814887008525, 0.0017185112990231368])txt";

// seed 002, lines 249-251
const char* const kSeed2XPrime = R"txt([[ 0.94744244 -0.24348429 -0.91310441 -0.44522983]
 [ 1.64201168 -0.08470004  4.02764044  2.18690791]
 [ 1.61949281 -0.06641533  3.96863308  2.15858316]])txt";

// seed 002, lines 267-269
const char* const kSeed2AttentionMatrix = R"txt([[1.24326146e-13 2.79525306e-12 5.05707907e-03]
 [9.98281489e-01 5.85506360e-03 6.54776072e-03]
 [1.71851130e-03 9.94144936e-01 9.88395160e-01]])txt";

// seed 002, lines 306-308
const char* const kSeed2ScaledXPrime = R"txt([[ 0.97411966 -0.23738409 -0.72333202 -0.34413007]
 [ 1.59622051 -0.09516106  3.70194096  2.01339538]
 [ 1.32638014  0.13062402  3.02371664  1.6902419 ]])txt";

// seed 003, lines 29-31
const char* const kSeed3Inputs = R"txt([[1. 0. 1. 0.]
 [0. 2. 0. 2.]
 [1. 1. 1. 1.]])txt";

// seed 003, lines 36-39
const char* const kSeed3Wk = R"txt(np.array([[0, 0, 1],
             [1, 1, 0],
             [0, 1, 0],
             [1, 1, 0]], dtype='float32'))txt";

// seed 003, lines 58-60
const char* const kSeed3Query = R"txt([[1. 0. 2.]
 [2. 2. 2.]
 [2. 1. 3.]] )txt";

// seed 003, lines 70-70
const char* const kSeed3Dim = R"txt([1.7320508])txt";

// seed 003, lines 77-79
const char* const kSeed3Scores = R"txt([[1.3612579e-01 4.3193707e-01 4.3193707e-01]
 [8.9044782e-04 9.0884298e-01 9.0266980e-02]
 [7.4448888e-03 7.5470752e-01 2.3784746e-01]])txt";

// seed 003, lines 86-88
const char* const kSeed3Attention = R"txt([[1.8638741 , 6.3193707 , 1.7041886 ]
 [1.9991105 , 7.8141265 , 0.27347228]
 [1.9925548 , 7.479635  , 0.73587704]])txt";

// seed 004, lines 83-84
const char* const kSeed4Output = R"txt([[1.6604769 2.6604769]
 [2.3395231 3.3395231]])txt";

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
  for (const char* text : {"1,2,3\n4,5,6", "1, 2, 3\n4, 5, 6\n", "1\t2\t3\n4\t5\t6\n",
                           "1 2 3\n4 5 6", "  1   2 3  \n\n 4 5    6\n\n", "1,2,3,\n4,5,6,\n",
                           "1,2,3\r\n4,5,6\r\n", "1 2 3\r4 5 6"}) {
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
  const Matrix nbsp = parse_matrix("[1\xc2\xa0" "2]");
  REQUIRE(nbsp.cols() == 2);
  CHECK(nbsp(0, 1) == 2.0);
}

// ---------------------------------------------------------------------------------------------
// Seeds: every matrix they print.

TEST_CASE("parse: seed 000 (numpy print, wrapped rows, array repr)", "[parse]") {
  const Matrix q = parse_matrix(kSeed0Q, "Q");
  REQUIRE(q.rows() == 4);
  REQUIRE(q.cols() == 8);
  CHECK(q(0, 0) == 0.49671415);
  CHECK(q(0, 1) == -0.1382643);
  CHECK(q(0, 6) == 1.57921282);  // first number of a wrapped line
  CHECK(q(1, 6) == -1.72491783);
  CHECK(q(3, 7) == 1.85227818);

  const Matrix k = parse_matrix(kSeed0K, "K");
  REQUIRE(k.rows() == 4);
  REQUIRE(k.cols() == 8);
  CHECK(k(0, 0) == -0.01349722);
  CHECK(k(2, 4) == -0.676922);
  CHECK(k(3, 7) == -1.19620662);

  // The document cuts V off mid-matrix: that must be an error, not a short matrix.
  REQUIRE_THROWS_WITH(parse_matrix(kSeed0VTruncated, "V"),
                      "V: unbalanced brackets: '[' at line 3 is never closed");

  const Matrix scores = parse_matrix(kSeed0Scores, "scores");
  REQUIRE(scores.rows() == 4);
  REQUIRE(scores.cols() == 4);
  CHECK(scores(0, 0) == -2.72357421);
  CHECK(scores(1, 1) == 1.1597874);
  CHECK(scores(1, 2) == -4.7248515);
  CHECK(scores(3, 3) == -0.80026704);

  const Matrix attention = parse_matrix(kSeed0Attention, "weights");
  REQUIRE(attention.rows() == 4);
  REQUIRE(attention.cols() == 4);
  CHECK(attention(0, 0) == 0.08431243);
  CHECK(attention(1, 3) == 0.2094793);
  CHECK(attention(3, 3) == 0.12968226);
  for (int i = 0; i < 4; ++i) CHECK(attention.row(i).sum() == Approx(1.0).margin(1e-7));

  const Matrix new_values = parse_matrix(kSeed0NewValues, "output");
  REQUIRE(new_values.rows() == 4);
  REQUIRE(new_values.cols() == 8);
  CHECK(new_values(0, 0) == -0.1308104);
  CHECK(new_values(3, 7) == -0.82777073);

  const Matrix masked = parse_matrix(kSeed0MaskedNewValues, "output");
  REQUIRE(masked.rows() == 4);
  REQUIRE(masked.cols() == 8);
  CHECK(masked(0, 0) == 0.81252582);
  CHECK(masked(1, 7) == 0.93081668);
  CHECK(masked(3, 7) == -0.82777073);
}

TEST_CASE("parse: seed 002 (list of column vectors, scientific notation)", "[parse]") {
  // all_x: three 4x1 arrays -> the 4x3 matrix X whose columns are the inputs.
  const Matrix x = parse_matrix(kSeed2AllX, "X");
  REQUIRE(x.rows() == 4);
  REQUIRE(x.cols() == 3);
  CHECK(x(0, 0) == 1.78862847);
  CHECK(x(3, 0) == -1.8634927);
  CHECK(x(0, 1) == -0.2773882);
  CHECK(x(3, 1) == -0.62700068);
  CHECK(x(0, 2) == -0.04381817);
  CHECK(x(2, 2) == -1.31386475);
  CHECK(x(3, 2) == 0.88462238);

  const Matrix diff_q = parse_matrix(kSeed2DiffQ);
  REQUIRE(diff_q.rows() == 4);
  REQUIRE(diff_q.cols() == 3);
  CHECK(diff_q(0, 0) == 0.0);
  CHECK(diff_q(0, 1) == -4.44089210e-16);
  CHECK(diff_q(3, 1) == -1.11022302e-16);

  const Matrix diff_k = parse_matrix(kSeed2DiffK);
  REQUIRE(diff_k.rows() == 4);
  REQUIRE(diff_k.cols() == 3);
  CHECK(diff_k(2, 0) == 8.88178420e-16);
  CHECK(diff_k(2, 1) == -1.04083409e-17);
  CHECK(diff_k(3, 2) == 1.11022302e-16);

  const Matrix diff_v = parse_matrix(kSeed2DiffV);
  REQUIRE(diff_v.rows() == 4);
  REQUIRE(diff_v.cols() == 3);
  CHECK(diff_v(0, 0) == 4.44089210e-16);
  CHECK(diff_v(1, 2) == -5.55111512e-17);
  CHECK(diff_v(3, 2) == 0.0);

  const Matrix attentions = parse_matrix(kSeed2Attentions0);
  REQUIRE(attentions.rows() == 1);
  REQUIRE(attentions.cols() == 3);
  CHECK(attentions(0, 0) == 1.2432614615724094e-13);
  CHECK(attentions(0, 1) == 0.9982814887008525);
  CHECK(attentions(0, 2) == 0.0017185112990231368);

  const Matrix x_prime = parse_matrix(kSeed2XPrime);
  REQUIRE(x_prime.rows() == 3);
  REQUIRE(x_prime.cols() == 4);
  CHECK(x_prime(0, 0) == 0.94744244);
  CHECK(x_prime(1, 2) == 4.02764044);
  CHECK(x_prime(2, 3) == 2.15858316);

  const Matrix true_row = parse_matrix("[[ 0.94744244 -0.24348429 -0.91310441 -0.44522983]]");
  REQUIRE(true_row.rows() == 1);
  REQUIRE(true_row.cols() == 4);
  CHECK(true_row(0, 3) == -0.44522983);

  const Matrix attention = parse_matrix(kSeed2AttentionMatrix);
  REQUIRE(attention.rows() == 3);
  REQUIRE(attention.cols() == 3);
  CHECK(attention(0, 0) == 1.24326146e-13);
  CHECK(attention(1, 0) == 9.98281489e-01);
  CHECK(attention(2, 2) == 9.88395160e-01);

  const Matrix scaled = parse_matrix(kSeed2ScaledXPrime);
  REQUIRE(scaled.rows() == 3);
  REQUIRE(scaled.cols() == 4);
  CHECK(scaled(0, 0) == 0.97411966);
  CHECK(scaled(2, 3) == 1.6902419);
}

TEST_CASE("parse: seed 003 (float32 prints, np.array with dtype, commas within rows)", "[parse]") {
  const Matrix inputs = parse_matrix(kSeed3Inputs, "X");
  REQUIRE(inputs.rows() == 3);
  REQUIRE(inputs.cols() == 4);
  CHECK(inputs(0, 0) == 1.0);
  CHECK(inputs(1, 1) == 2.0);
  CHECK(inputs(2, 3) == 1.0);

  for (const char* row : {"[1, 0, 1, 0]", "[0, 2, 0, 2]", "[1, 1, 1, 1]"}) {
    const Matrix m = parse_matrix(row);
    REQUIRE(m.rows() == 1);
    REQUIRE(m.cols() == 4);
  }

  const Matrix wk = parse_matrix(kSeed3Wk, "W_K");
  REQUIRE(wk.rows() == 4);
  REQUIRE(wk.cols() == 3);
  CHECK(wk(0, 2) == 1.0);
  CHECK(wk(1, 0) == 1.0);
  CHECK(wk(3, 2) == 0.0);

  const Matrix query = parse_matrix(kSeed3Query, "Q");
  REQUIRE(query.rows() == 3);
  REQUIRE(query.cols() == 3);
  CHECK(query(0, 2) == 2.0);
  CHECK(query(2, 2) == 3.0);

  const Matrix dim = parse_matrix(kSeed3Dim);
  REQUIRE(dim.rows() == 1);
  REQUIRE(dim.cols() == 1);
  CHECK(dim(0, 0) == 1.7320508);

  const Matrix scores = parse_matrix(kSeed3Scores);
  REQUIRE(scores.rows() == 3);
  REQUIRE(scores.cols() == 3);
  CHECK(scores(0, 0) == 1.3612579e-01);
  CHECK(scores(1, 0) == 8.9044782e-04);
  CHECK(scores(2, 2) == 2.3784746e-01);

  // Commas inside rows but none between them: numpy's mixed print, still 3x3.
  const Matrix attention = parse_matrix(kSeed3Attention);
  REQUIRE(attention.rows() == 3);
  REQUIRE(attention.cols() == 3);
  CHECK(attention(0, 0) == 1.8638741);
  CHECK(attention(1, 2) == 0.27347228);
  CHECK(attention(2, 1) == 7.479635);
  CHECK(attention(2, 2) == 0.73587704);
}

TEST_CASE("parse: seed 004 (float32 2x2 and the inputs as np.array)", "[parse]") {
  const Matrix output = parse_matrix(kSeed4Output);
  REQUIRE(output.rows() == 2);
  REQUIRE(output.cols() == 2);
  CHECK(output(0, 0) == 1.6604769);
  CHECK(output(0, 1) == 2.6604769);
  CHECK(output(1, 0) == 2.3395231);
  CHECK(output(1, 1) == 3.3395231);

  const Matrix w_v = parse_matrix("np.array([[1, 2], [3, 4]])", "W_V");
  REQUIRE(w_v.rows() == 2);
  CHECK(w_v(1, 0) == 3.0);
}

// ---------------------------------------------------------------------------------------------
// Errors: each names the input, the position (from 1), what was found and what was expected.

TEST_CASE("parse: empty text", "[parse]") {
  REQUIRE_THROWS_AS(Parse(""), InputError);
  REQUIRE_THROWS_WITH(Parse(""), "W_Q: no numbers found (the text is empty)");
  REQUIRE_THROWS_WITH(Parse(" \n\t\r\n "), "W_Q: no numbers found (the text is empty)");
  REQUIRE_THROWS_WITH(Parse("[]"), "W_Q: no numbers found (only empty lists)");
  REQUIRE_THROWS_WITH(Parse("[[], []]"), "W_Q: no numbers found (only empty lists)");
  REQUIRE_THROWS_WITH(Parse("array([])"), "W_Q: no numbers found (only empty lists)");
  REQUIRE_THROWS_WITH(parse_matrix(""), "matrix: no numbers found (the text is empty)");
}

TEST_CASE("parse: ragged rows", "[parse]") {
  REQUIRE_THROWS_WITH(Parse("[[1, 2, 3, 4], [5, 6, 7]]"), "W_Q: row 2 has 3 numbers but row 1 has 4");
  REQUIRE_THROWS_WITH(Parse("1,2,3,4\n5,6,7,8\n9,10,11"), "W_Q: row 3 has 3 numbers but row 1 has 4");
  REQUIRE_THROWS_WITH(Parse("1 2\n3"), "W_Q: row 2 has 1 number but row 1 has 2");
  REQUIRE_THROWS_WITH(Parse("[1 2; 3 4 5]"), "W_Q: row 2 has 3 numbers but row 1 has 2");
  REQUIRE_THROWS_WITH(Parse("[[1, 2], []]"), "W_Q: row 2 has 0 numbers but row 1 has 2");
  REQUIRE_THROWS_WITH(Parse("[array([[1], [2]]), array([[3]])]"),
                      "W_Q: column vector 2 has 1 row but column vector 1 has 2 (they become the "
                      "columns of one matrix)");
  // A TSV row with an empty cell collapses, so it shows up as a short row.
  REQUIRE_THROWS_WITH(Parse("1\t2\t3\n4\t\t6"), "W_Q: row 2 has 2 numbers but row 1 has 3");
}

TEST_CASE("parse: a non-number is an error, never skipped", "[parse]") {
  REQUIRE_THROWS_WITH(Parse("[[1, 2, abc]]"),
                      "W_Q: row 1, column 3: expected a number but found 'abc'");
  REQUIRE_THROWS_WITH(Parse("1 2 abc"), "W_Q: row 1, column 3: expected a number but found 'abc'");
  REQUIRE_THROWS_WITH(Parse("[[1 2]\n [3 x]]"),
                      "W_Q: row 2, column 2: expected a number but found 'x'");
  // A header row, a label line.
  REQUIRE_THROWS_WITH(Parse("a,b\n1,2"), "W_Q: row 1, column 1: expected a number but found 'a'");
  REQUIRE_THROWS_WITH(Parse("Q\n [[1, 2]]"),
                      "W_Q: row 1, column 1: expected a number but found 'Q'");
  REQUIRE_THROWS_WITH(Parse("K\n 1 2"), "W_Q: row 1, column 1: expected a number but found 'K'");
  // Words and syntax that look almost like numbers.
  for (const char* bad : {"1e", "--1", "+-1", "1.2.3", "0x10", "1_000", "e5", ".", "-", "infinit", "np.infx", "-True", "inf1"}) {
    INFO(bad);
    REQUIRE_THROWS_WITH(Parse(std::string("[") + bad + "]"),
                        Contains("row 1, column 1: expected a number but found '"));
  }
  REQUIRE_THROWS_WITH(Parse("[nan(1)]"), "W_Q: row 1, column 2: expected a number but found '('");
  REQUIRE_THROWS_WITH(Parse("[1 - 2]"), "W_Q: row 1, column 2: expected a number but found '-'");
  REQUIRE_THROWS_WITH(Parse("[[1, 2, ..., 9]]"),
                      Contains("row 1, column 3: expected a number but found '...': numpy "
                               "shortened this array"));
  // Long or binary words are shortened and escaped in the message.
  REQUIRE_THROWS_WITH(Parse("[\x01\xff]"),
                      "W_Q: row 1, column 1: expected a number but found '\\x01\\xff'");
  REQUIRE_THROWS_WITH(Parse("[" + std::string(100, 'z') + "]"),
                      "W_Q: row 1, column 1: expected a number but found '" +
                          std::string(27, 'z') + "...'");
  // ';' separates the cells of semicolon-separated values, so an empty cell is an error.
  REQUIRE_THROWS_WITH(Parse("1;;3"), "W_Q: row 1, column 2: expected a number but found ';'");
}

TEST_CASE("parse: empty fields and stray separators", "[parse]") {
  REQUIRE_THROWS_WITH(Parse("1,,2"), "W_Q: row 1, column 2: expected a number but found ','");
  REQUIRE_THROWS_WITH(Parse("1,2\n,3,4"), "W_Q: row 2, column 1: expected a number but found ','");
  REQUIRE_THROWS_WITH(Parse("[1,,2]"), "W_Q: row 1, column 2: expected a number but found ','");
  REQUIRE_THROWS_WITH(Parse("[,1]"), "W_Q: row 1, column 1: expected a number but found ','");
  REQUIRE_THROWS_WITH(Parse("[[1,2],,[3,4]]"), "W_Q: row 2: expected a number but found ','");
  REQUIRE_THROWS_WITH(Parse("[1;;2]"), "W_Q: row 2, column 1: expected a number but found ';'");
  REQUIRE_THROWS_WITH(Parse("[[1;2]]"),
                      "W_Q: unexpected ';' at line 1: ';' ends a row only in MATLAB-style text "
                      "like [1 2; 3 4]");
  REQUIRE_THROWS_WITH(Parse("[1,2],,"),
                      "W_Q: expected the end of the text after the matrix but found ',' at line 1");
}

TEST_CASE("parse: unbalanced brackets", "[parse]") {
  REQUIRE_THROWS_WITH(Parse("[[1, 2], [3, 4]"),
                      "W_Q: unbalanced brackets: '[' at line 1 is never closed");
  REQUIRE_THROWS_WITH(Parse("[[1, 2],\n [3, 4"),
                      "W_Q: unbalanced brackets: '[' at line 2 is never closed");
  REQUIRE_THROWS_WITH(Parse("[[1]]]"), "W_Q: unbalanced brackets: ']' at line 1 has no matching '['");
  REQUIRE_THROWS_WITH(Parse("]"), "W_Q: unbalanced brackets: ']' at line 1 has no matching '['");
  REQUIRE_THROWS_WITH(Parse("array([1, 2]"),
                      "W_Q: unbalanced brackets: '(' at line 1 is never closed");
  REQUIRE_THROWS_WITH(Parse("array([1, 2]))"),
                      "W_Q: unbalanced brackets: ')' at line 1 has no matching '('");
  REQUIRE_THROWS_WITH(Parse("[1, 2)"),
                      "W_Q: unbalanced brackets: ')' at line 1 closes the '[' from line 1");
  REQUIRE_THROWS_WITH(Parse("array([1, 2]]"),
                      "W_Q: unbalanced brackets: ']' at line 1 closes the '(' from line 1");
  REQUIRE_THROWS_WITH(Parse("1 2]"), "W_Q: row 1, column 3: expected a number but found ']'");
}

TEST_CASE("parse: malformed array(...) wrappers", "[parse]") {
  REQUIRE_THROWS_WITH(Parse("array()"), "W_Q: expected '[' after 'array(' at line 1 but found ')'");
  REQUIRE_THROWS_WITH(Parse("array(array([1]))"),
                      "W_Q: expected '[' after 'array(' at line 1 but found 'array'");
  REQUIRE_THROWS_WITH(Parse("array((1, 2))"),
                      "W_Q: expected '[' after 'array(' at line 1 but found '('");
  REQUIRE_THROWS_WITH(Parse("array([1], float32)"),
                      "W_Q: expected 'dtype=...' or ')' in the 'array(' from line 1 but found "
                      "'float32'");
  REQUIRE_THROWS_WITH(Parse("array([1] 5)"),
                      "W_Q: expected ',' or ')' in the 'array(' from line 1 but found '5'");
  REQUIRE_THROWS_WITH(Parse("array([1], dtype=int64 x)"),
                      "W_Q: expected ')' in the 'array(' from line 1 but found 'x'");
  REQUIRE_THROWS_WITH(Parse("(1, 2)"), "W_Q: expected '[' at line 1 but found '('");
  REQUIRE_THROWS_WITH(Parse("[1, (2)]"), "W_Q: row 1, column 2: expected a number but found '('");
}

TEST_CASE("parse: one matrix at a time", "[parse]") {
  REQUIRE_THROWS_WITH(Parse("[1 2]\n[3 4]"),
                      "W_Q: expected the end of the text after the matrix but found '[' at line 2 "
                      "(give one matrix at a time)");
  REQUIRE_THROWS_WITH(Parse("[[1, 2]]\nK"),
                      "W_Q: expected the end of the text after the matrix but found 'K' at line 2 "
                      "(give one matrix at a time)");
  REQUIRE_THROWS_WITH(Parse("[[1, 2]], dtype=float32)"),
                      Contains("after the matrix but found 'dtype=float32' at line 1"));
}

TEST_CASE("parse: out-of-range numbers", "[parse]") {
  REQUIRE_THROWS_WITH(Parse("[1, 1e999]"), "W_Q: row 1, column 2: 1e999 is out of the range of a double");
  REQUIRE_THROWS_WITH(Parse("[[1, 2], [3, -1e999]]"),
                      "W_Q: row 2, column 2: -1e999 is out of the range of a double");
  REQUIRE_THROWS_WITH(Parse("1.7976931348623159e308"),
                      "W_Q: row 1, column 1: 1.7976931348623159e308 is out of the range of a double");
  REQUIRE_THROWS_WITH(Parse("0.0001e99999999999999999999999"),
                      Contains("is out of the range of a double"));
  REQUIRE_THROWS_WITH(Parse(std::string(400, '9')),
                      "W_Q: row 1, column 1: " + std::string(27, '9') +
                          "... is out of the range of a double");
}

TEST_CASE("parse: mixed nesting depths", "[parse]") {
  REQUIRE_THROWS_WITH(Parse("[1, [2]]"), "W_Q: row 1, column 2: expected a number but found '['");
  REQUIRE_THROWS_WITH(Parse("[[1], 2]"),
                      "W_Q: row 2: expected '[' (every row is a list) but found '2'");
  REQUIRE_THROWS_WITH(Parse("[[1, 2], [[3], [4]]]"),
                      "W_Q: row 2, column 1: expected a number but found '['");
  REQUIRE_THROWS_WITH(Parse("[[[1], [2]], [3, 4]]"),
                      "W_Q: row 2, column 1: expected '[' (every row is a list) but found '3'");
}

TEST_CASE("parse: a 3-D array that is not a list of column vectors", "[parse]") {
  REQUIRE_THROWS_WITH(Parse("[[[1, 2], [3, 4]], [[5, 6], [7, 8]]]"),
                      "W_Q: expected a matrix (2 dimensions) but found a 3-D array of shape "
                      "2 x 2 x 2: 2 slices of 2 x 2; paste one 2-D slice at a time (e.g. A[0])");
  REQUIRE_THROWS_WITH(Parse("[array([[1], [2]]), array([[3, 4], [5, 6]])]"),
                      "W_Q: expected a matrix (2 dimensions) but found a 3-D array whose slices "
                      "differ: slice 1 is 2 x 1, slice 2 is 2 x 2; paste one 2-D slice at a time");
  REQUIRE_THROWS_WITH(Parse("[[[1]], [[]]]"), Contains("slice 1 is 1 x 1, slice 2 is 1 x 0"));
}

TEST_CASE("parse: deep nesting fails cleanly, without recursion", "[parse]") {
  REQUIRE_THROWS_WITH(Parse("[[[[1]]]]"),
                      "W_Q: nested too deeply: the '[' at line 1 opens a 4th level, but a matrix "
                      "has 2 levels (3 for a list of column vectors)");
  REQUIRE_THROWS_WITH(Parse(std::string(10000, '[')), Contains("nested too deeply"));
  REQUIRE_THROWS_WITH(Parse(std::string(1000000, '[') + std::string(1000000, ']')),
                      Contains("nested too deeply"));
  std::string wrappers;
  for (int i = 0; i < 10000; ++i) wrappers += "array(";
  REQUIRE_THROWS_WITH(Parse(wrappers), "W_Q: expected '[' after 'array(' at line 1 but found 'array'");
  REQUIRE_THROWS_WITH(Parse(std::string(10000, ']')),
                      "W_Q: unbalanced brackets: ']' at line 1 has no matching '['");
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
      const char* seeds[] = {kSeed0Scores, kSeed2AllX, kSeed3Wk, kSeed3Attention, "[1 2; 3 4]"};
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
      CHECK(std::string(error.what()).rfind("fuzz: ", 0) == 0);
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
  REQUIRE_THROWS_WITH(Parse(std::string(1000000, '1')), Contains("out of the range of a double"));
  REQUIRE_THROWS_WITH(Parse(std::string(1000000, 'x')), Contains("found 'xxx"));
  // Many rows and many blank lines.
  std::string rows;
  for (int i = 0; i < 100000; ++i) rows += "1,2\n\n";
  CHECK(Parse(rows).rows() == 100000);
}

TEST_CASE("parse: a 256x256 numpy print parses exactly", "[parse]") {
  // Build numpy-style text: 8 numbers per line, rows wrapped, like kSeed0Q but 256 wide.
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
