// The catalogue of bad inputs at the core level, each with its exact message, plus the numerical
// edge cases the core must survive (issue 6). Tables, so ROBUSTNESS.md can count them:
//   kParseCases   text that parse_matrix must refuse (or read as the given numbers)
//   kProblemCases problems that run() must refuse, with the message a user sees
//   numerical edge cases with finite results where the maths is finite
// The cases that reproduce bugs the fuzzers found name them in a comment (ROBUSTNESS.md,
// "Findings", B1-B4) and now guard against their return.
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "../fuzz/trace_invariants.h"
#include "attention.h"
#include "said.h"
#include "parse.h"
#include "english.h"

using attn::InputError;
using attn::Matrix;
using attn::Problem;
using attn::Vector;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

Matrix M(std::initializer_list<std::initializer_list<double>> rows) {
  Matrix m(static_cast<Eigen::Index>(rows.size()), static_cast<Eigen::Index>(rows.begin()->size()));
  Eigen::Index i = 0;
  for (const auto& row : rows) {
    Eigen::Index j = 0;
    for (double v : row) m(i, j++) = v;
    ++i;
  }
  return m;
}

Vector V(std::initializer_list<double> values) {
  Vector v(static_cast<Eigen::Index>(values.size()));
  Eigen::Index i = 0;
  for (double x : values) v[i++] = x;
  return v;
}

const Matrix& step(const attn::Trace& t, const std::string& id, int head = 0) {
  for (const auto& s : t.steps) {
    if (s.id == id && s.head == head) return s.values;
  }
  FAIL("no step " << id << " for head " << head);
  throw std::logic_error("unreachable");
}

/// A self-attention problem from X: 3 tokens, d_model 4, d_k = d_v = 4 (rows layout).
Problem projection_problem() {
  Problem p;
  p.X = M({{1, 0, 1, 0}, {0, 2, 0, 2}, {1, 1, 1, 1}});
  p.W_Q = M({{1, 0, 1, 0}, {1, 0, 0, 1}, {0, 0, 1, 0}, {0, 1, 1, 0}});
  p.W_K = M({{0, 0, 1, 1}, {1, 1, 0, 0}, {0, 1, 0, 1}, {1, 1, 0, 0}});
  p.W_V = M({{0, 2, 0, 1}, {0, 3, 0, 0}, {1, 0, 3, 0}, {1, 1, 0, 1}});
  return p;
}

/// Q, K, V given directly: 2 queries, 3 keys, d_k 2, d_v 3.
Problem direct_problem() {
  Problem p;
  p.Q = M({{1, 0}, {0, 1}});
  p.K = M({{1, 1}, {0, 1}, {1, 0}});
  p.V = M({{1, 2, 3}, {4, 5, 6}, {7, 8, 9}});
  return p;
}

/// Fails with the invariant violated, if any (trace_invariants.h, shared with fuzz_run).
void check_sound(const Problem& p, const attn::Trace& t) {
  const std::string broken = attn::invariants::check_trace(p, t);
  INFO(broken);
  CHECK(broken.empty());
}

// ---------------------------------------------------------------------------------------------
// Text: what parse_matrix refuses, with the message (the input is called "Q").

struct ParseCase {
  const char* what;
  std::string text;
  const char* message;
};

const std::vector<ParseCase>& parse_cases() {
  static const std::vector<ParseCase> cases = {
      // empty input
      {"empty text", "", "Q: no numbers found (the text is empty)"},
      {"only spaces and newlines", "  \n\t \r\n ", "Q: no numbers found (the text is empty)"},
      {"empty list", "[]", "Q: no numbers found (only empty lists)"},
      {"list of empty lists", "[[], []]", "Q: no numbers found (only empty lists)"},
      {"empty array()", "array([])", "Q: no numbers found (only empty lists)"},
      // ragged rows
      {"ragged CSV", "1,2,3\n4,5", "Q: row 2 has 2 numbers but row 1 has 3"},
      {"ragged nested list", "[[1, 2], [3, 4, 5]]", "Q: row 2 has 3 numbers but row 1 has 2"},
      {"ragged numpy print", "[[1. 2.]\n [3.]]", "Q: row 2 has 1 number but row 1 has 2"},
      {"ragged MATLAB", "[1 2; 3 4; 5]", "Q: row 3 has 1 number but row 1 has 2"},
      {"ragged column vectors", "[array([[1], [2]]), array([[3]])]",
       "Q: column vector 2 has 1 row but column vector 1 has 2 (they become the columns of one matrix)"},
      // non-numbers
      {"a word", "1 2\n3 four", "Q: row 2, column 2: expected a number but found 'four'"},
      {"a header row", "a,b\n1,2", "Q: row 1, column 1: expected a number but found 'a'"},
      {"a traceback pasted with the matrix", "Traceback (most recent call last):\n  File \"x.py\", line 1",
       "Q: row 1, column 1: expected a number but found 'Traceback'"},
      {"hex float", "[[0x1p3]]", "Q: row 1, column 1: expected a number but found '0x1p3'"},
      {"numpy's ellipsis", "[[1 2 ... 9]]",
       "Q: row 1, column 3: expected a number but found '...': numpy shortened this array; print it "
       "in full with np.set_printoptions(threshold=sys.maxsize)"},
      {"an empty field", "[1,,2]", "Q: row 1, column 2: expected a number but found ','"},
      {"a leading comma in CSV", ",1,2", "Q: row 1, column 1: expected a number but found ','"},
      {"a number with a unit", "1 2kg", "Q: row 1, column 2: expected a number but found '2kg'"},
      {"a control byte", std::string("1 \x01"), "Q: row 1, column 2: expected a number but found '\\x01'"},
      {"a long word is shortened", "1 " + std::string(100, 'z'),
       "Q: row 1, column 2: expected a number but found 'zzzzzzzzzzzzzzzzzzzzzzzzzzz...'"},
      {"HTML", "<img src=x onerror=alert(1)>", "Q: row 1, column 1: expected a number but found '<img'"},
      // numbers out of double range
      {"1e999", "1 1e999", "Q: row 1, column 2: 1e999 is out of the range of a double"},
      {"-1e309 in brackets", "[[1, -1e309]]", "Q: row 1, column 2: -1e309 is out of the range of a double"},
      {"a 400-digit integer", std::string(400, '9'),
       "Q: row 1, column 1: 999999999999999999999999999... is out of the range of a double"},
      // brackets and nesting
      {"unbalanced '['", "[[1, 2], [3, 4]", "Q: unbalanced brackets: '[' at line 1 is never closed"},
      {"unbalanced ']'", "[[1, 2]]]", "Q: unbalanced brackets: ']' at line 1 has no matching '['"},
      {"3-D array", "[[[1, 2], [3, 4]], [[5, 6], [7, 8]]]",
       "Q: expected a matrix (2 dimensions) but found a 3-D array of shape 2 x 2 x 2: 2 slices of 2 x 2; "
       "paste one 2-D slice at a time (e.g. A[0])"},
      {"deeply nested", std::string(10000, '[') + "1" + std::string(10000, ']'),
       "Q: nested too deeply: the '[' at line 1 opens a 4th level, but a matrix has 2 levels (3 for a "
       "list of column vectors)"},
      {"mixed depths", "[[1, 2], 3]", "Q: row 2: expected '[' (every row is a list) but found '3'"},
      {"two matrices", "[[1]] [[2]]",
       "Q: expected the end of the text after the matrix but found '[' at line 1 (give one matrix at a time)"},
      {"a stray ';'", "[[1, 2]; [3, 4]]",
       "Q: unexpected ';' at line 1: ';' ends a row only in MATLAB-style text like [1 2; 3 4]"},
  };
  return cases;
}

TEST_CASE("robustness: every bad text gets its message", "[robustness][parse]") {
  for (const ParseCase& c : parse_cases()) {
    INFO(c.what);
    REQUIRE_THROWS_AS(attn::parse_matrix(c.text, "Q"), InputError);
    REQUIRE_THROWS_SAYING(attn::parse_matrix(c.text, "Q"), c.message);
  }
}

TEST_CASE("robustness: words and limits the parser accepts", "[robustness][parse]") {
  // NaN and Inf are numbers to the parser; run() then refuses them (see below).
  const Matrix m = attn::parse_matrix("[[nan, -inf], [np.inf, 1e-400]]", "Q");
  CHECK(std::isnan(m(0, 0)));
  CHECK(m(0, 1) == -kInf);
  CHECK(m(1, 0) == kInf);
  CHECK(m(1, 1) == 0.0);  // underflow is 0, as Python's float() says
  CHECK(attn::parse_matrix("4.9406564584124654e-324")(0, 0) == std::numeric_limits<double>::denorm_min());
  CHECK(attn::parse_matrix("1.7976931348623157e308")(0, 0) == std::numeric_limits<double>::max());
}

// ---------------------------------------------------------------------------------------------
// Problems: what run() refuses, with the message.

struct ProblemCase {
  const char* what;
  std::function<Problem()> make;
  const char* message;
};

Problem with(Problem p, const std::function<void(Problem&)>& edit) {
  edit(p);
  return p;
}

const std::vector<ProblemCase>& problem_cases() {
  static const std::vector<ProblemCase> cases = {
      // which inputs
      {"nothing", [] { return Problem(); }, "no inputs: give either Q, K and V, or X with W_Q, W_K and W_V"},
      {"both modes", [] { return with(projection_problem(), [](Problem& p) { p.Q = M({{1}}); }); },
       "give either Q, K and V, or X with W_Q, W_K and W_V, not both (found Q and X)"},
      {"V missing", [] { return with(direct_problem(), [](Problem& p) { p.V.reset(); }); },
       "V is missing: give Q, K and V (or X with W_Q, W_K and W_V)"},
      {"X missing", [] { return with(projection_problem(), [](Problem& p) { p.X.reset(); }); },
       "X is missing: self-attention from X needs X, W_Q, W_K and W_V"},
      {"W_K missing", [] { return with(projection_problem(), [](Problem& p) { p.W_K.reset(); }); },
       "W_K is missing: self-attention from X needs X, W_Q, W_K and W_V"},
      {"bias in direct mode", [] { return with(direct_problem(), [](Problem& p) {
                                     p.b_K = V({1, 2});
                                   }); },
       "b_K is given but Q, K and V are given directly: biases belong to projections from X"},
      {"b_O without W_O", [] { return with(projection_problem(), [](Problem& p) { p.b_O = V({1}); }); },
       "b_O is given without W_O"},
      // NaN and Inf in inputs
      {"NaN in Q", [] { return with(direct_problem(), [](Problem& p) { (*p.Q)(1, 0) = kNaN; }); },
       "Q row 2, column 1 is nan: inputs must be finite numbers (only an additive mask may hold -inf)"},
      {"+inf in X", [] { return with(projection_problem(), [](Problem& p) { (*p.X)(0, 3) = kInf; }); },
       "X row 1, column 4 is inf: inputs must be finite numbers (only an additive mask may hold -inf)"},
      {"-inf in W_V", [] { return with(projection_problem(), [](Problem& p) { (*p.W_V)(3, 3) = -kInf; }); },
       "W_V row 4, column 4 is -inf: inputs must be finite numbers (only an additive mask may hold -inf)"},
      {"NaN in X, columns layout (positions in the user's layout)",
       [] {
         return with(projection_problem(), [](Problem& p) {
           p.options.layout = attn::Layout::Columns;
           (*p.X)(2, 0) = kNaN;
         });
       },
       "X row 3, column 1 is nan: inputs must be finite numbers (only an additive mask may hold -inf)"},
      {"NaN in a bias", [] { return with(projection_problem(), [](Problem& p) {
                               p.b_V = V({0, kNaN, 0, 0});
                             }); },
       "b_V entry 2 is nan: inputs must be finite numbers"},
      {"inf in b_O",
       [] {
         return with(projection_problem(), [](Problem& p) {
           p.W_O = Matrix::Identity(4, 4);
           p.b_O = V({0, 0, kInf, 0});
         });
       },
       "b_O entry 3 is inf: inputs must be finite numbers"},
      {"+inf in an additive mask",
       [] { return with(direct_problem(), [](Problem& p) {
              p.options.mask = M({{0, kInf, 0}, {0, 0, 0}});
            }); },
       "mask row 1, column 2 is inf: an additive mask holds finite numbers or -inf"},
      {"NaN in an additive mask",
       [] { return with(direct_problem(), [](Problem& p) {
              p.options.mask = M({{0, 0, 0}, {0, 0, kNaN}});
            }); },
       "mask row 2, column 3 is nan: an additive mask holds finite numbers or -inf"},
      {"2 in a boolean mask",
       [] {
         return with(direct_problem(), [](Problem& p) {
           p.options.mask = M({{1, 1, 1}, {1, 2, 1}});
           p.options.mask_kind = attn::MaskKind::Keep;
         });
       },
       "mask row 2, column 2 is 2: a boolean mask holds only 1/true (keep) and 0/false (hide)"},
      {"-inf in a boolean mask",
       [] {
         return with(direct_problem(), [](Problem& p) {
           p.options.mask = M({{1, -kInf, 1}, {1, 1, 1}});
           p.options.mask_kind = attn::MaskKind::Keep;
         });
       },
       "mask row 1, column 2 is -inf: a boolean mask holds only 1/true (keep) and 0/false (hide)"},
      // shape mismatches, every pair
      {"X vs W_Q", [] { return with(projection_problem(), [](Problem& p) { p.W_Q = Matrix::Ones(3, 4); }); },
       "W_Q has 3 rows but X has 4 columns (W_Q is 3x4, X is 3x4)"},
      {"X vs W_K", [] { return with(projection_problem(), [](Problem& p) { p.W_K = Matrix::Ones(5, 4); }); },
       "W_K has 5 rows but X has 4 columns (W_K is 5x4, X is 3x4)"},
      {"X vs W_V", [] { return with(projection_problem(), [](Problem& p) { p.W_V = Matrix::Ones(2, 4); }); },
       "W_V has 2 rows but X has 4 columns (W_V is 2x4, X is 3x4)"},
      {"X_kv vs W_K", [] { return with(projection_problem(), [](Problem& p) { p.X_kv = Matrix::Ones(5, 2); }); },
       "W_K has 4 rows but X_kv has 2 columns (W_K is 4x4, X_kv is 5x2)"},
      {"X vs W_Q, columns layout",
       [] {
         return with(projection_problem(), [](Problem& p) {
           p.options.layout = attn::Layout::Columns;
           p.X = Matrix::Ones(4, 3);    // 4 features x 3 tokens
           p.W_Q = Matrix::Ones(4, 5);  // Ω_Q needs 4 columns... has 5
         });
       },
       "W_Q has 5 columns but X has 4 rows (W_Q is 4x5, X is 4x3)"},
      {"Q vs K d_k", [] { return with(direct_problem(), [](Problem& p) { p.K = Matrix::Ones(3, 3); }); },
       "Q has 2 columns but K has 3: queries and keys need the same d_k"},
      {"W_Q vs W_K d_k", [] { return with(projection_problem(), [](Problem& p) { p.W_K = Matrix::Ones(4, 2); }); },
       "W_Q has 4 columns but W_K has 2: queries and keys need the same d_k"},
      {"K vs V length", [] { return with(direct_problem(), [](Problem& p) { p.V = Matrix::Ones(2, 3); }); },
       "K has 3 rows but V has 2: every key needs a value (K is 3x2, V is 2x3)"},
      {"K vs V length, columns layout",
       [] {
         return with(direct_problem(), [](Problem& p) {
           p.options.layout = attn::Layout::Columns;
           p.Q = Matrix::Ones(2, 2);
           p.K = Matrix::Ones(2, 3);
           p.V = Matrix::Ones(3, 4);
         });
       },
       "K has 3 columns but V has 4: every key needs a value (K is 2x3, V is 3x4)"},
      {"heads not dividing d_model", [] { return with(projection_problem(), [](Problem& p) { p.options.heads = 3; }); },
       "heads = 3 does not divide d_model = 4 (the 4 columns of W_Q)"},
      {"heads = 0", [] { return with(projection_problem(), [](Problem& p) { p.options.heads = 0; }); },
       "heads must be at least 1 (got 0)"},
      {"heads negative", [] { return with(projection_problem(), [](Problem& p) { p.options.heads = -2; }); },
       "heads must be at least 1 (got -2)"},
      {"kv_heads negative", [] { return with(projection_problem(), [](Problem& p) { p.options.kv_heads = -1; }); },
       "kv_heads must be at least 1 (got -1)"},
      {"kv_heads not dividing heads",
       [] {
         return with(projection_problem(), [](Problem& p) {
           p.options.heads = 4;
           p.options.kv_heads = 3;
         });
       },
       "kv_heads = 3 does not divide heads = 4: each key/value head serves a whole group of query heads"},
      {"K width vs kv_heads x d_k",
       [] {
         return with(projection_problem(), [](Problem& p) {
           p.options.heads = 2;
           p.options.kv_heads = 1;  // W_K needs 1 x d_k = 2 columns, has 4
         });
       },
       "W_K has 4 columns but 1 key head of d_k = 2 need 2"},
      {"V width vs kv_heads",
       [] {
         return with(direct_problem(), [](Problem& p) {
           p.Q = Matrix::Ones(2, 4);
           p.K = Matrix::Ones(3, 4);
           p.options.heads = 2;  // V has 3 columns: not 2 value heads
         });
       },
       "kv_heads = 2 does not divide the 3 columns of V"},
      {"mask shape", [] { return with(direct_problem(), [](Problem& p) { p.options.mask = Matrix::Zero(3, 2); }); },
       "mask is 3x2 but the scores are 2x3 (queries x keys)"},
      {"mask shape, columns layout",
       [] {
         return with(direct_problem(), [](Problem& p) {
           p.options.layout = attn::Layout::Columns;
           p.Q = Matrix::Ones(2, 2);  // 2 queries (columns)
           p.K = Matrix::Ones(2, 3);  // 3 keys
           p.V = Matrix::Ones(4, 3);
           p.options.mask = Matrix::Zero(2, 3);
         });
       },
       "mask is 2x3 but the scores are 3x2 (keys x queries)"},
      {"b_Q length", [] { return with(projection_problem(), [](Problem& p) {
                            p.b_Q = V({1, 2, 3});
                          }); },
       "b_Q has 3 entries but W_Q has 4 columns: one bias per column of W_Q"},
      {"b_K length", [] { return with(projection_problem(), [](Problem& p) {
                            p.b_K = V({1, 2, 3, 4, 5});
                          }); },
       "b_K has 5 entries but W_K has 4 columns: one bias per column of W_K"},
      {"b_V length, columns layout",
       [] {
         return with(projection_problem(), [](Problem& p) {
           p.options.layout = attn::Layout::Columns;
           p.X = Matrix::Ones(4, 3);
           p.b_V = V({1});
         });
       },
       "b_V has 1 entries but W_V has 4 rows: one bias per row of W_V"},
      {"W_O rows", [] { return with(projection_problem(), [](Problem& p) { p.W_O = Matrix::Ones(3, 4); }); },
       "W_O has 3 rows but the concatenated heads have 4 columns (1 heads x d_v = 4)"},
      {"W_O rows, 2 heads",
       [] {
         return with(projection_problem(), [](Problem& p) {
           p.options.heads = 2;
           p.W_O = Matrix::Ones(2, 4);
         });
       },
       "W_O has 2 rows but the concatenated heads have 4 columns (2 heads x d_v = 2)"},
      {"b_O length",
       [] {
         return with(projection_problem(), [](Problem& p) {
           p.W_O = Matrix::Ones(4, 2);
           p.b_O = V({1, 2, 3});
         });
       },
       "b_O has 3 entries but W_O has 2 columns: one bias per column of W_O"},
      // zero-size dimensions
      {"Q with no rows", [] { return with(direct_problem(), [](Problem& p) { p.Q = Matrix(0, 2); }); },
       "Q is empty (0x2): every matrix needs at least one row and one column"},
      {"K with no columns", [] { return with(direct_problem(), [](Problem& p) { p.K = Matrix(3, 0); }); },
       "K is empty (3x0): every matrix needs at least one row and one column"},
      {"W_V 0x0", [] { return with(projection_problem(), [](Problem& p) { p.W_V = Matrix(0, 0); }); },
       "W_V is empty (0x0): every matrix needs at least one row and one column"},
      {"X_kv with no tokens", [] { return with(projection_problem(), [](Problem& p) { p.X_kv = Matrix(0, 4); }); },
       "X_kv is empty (0x4): every matrix needs at least one row and one column"},
      {"W_O with no columns", [] { return with(projection_problem(), [](Problem& p) { p.W_O = Matrix(4, 0); }); },
       "W_O is empty (4x0): every matrix needs at least one row and one column"},
      // options
      {"scale divisor 0",
       [] { return with(direct_problem(), [](Problem& p) {
              p.options.scale = {attn::Scale::Kind::DivideBy, 0};
            }); },
       "the scale divisor must be a finite nonzero number (got 0)"},
      {"scale NaN",
       [] { return with(direct_problem(), [](Problem& p) {
              p.options.scale = {attn::Scale::Kind::Multiply, kNaN};
            }); },
       "scale must be a finite number (got nan)"},
      {"scale inf",
       [] { return with(direct_problem(), [](Problem& p) {
              p.options.scale = {attn::Scale::Kind::Multiply, kInf};
            }); },
       "scale must be a finite number (got inf)"},
      {"softcap negative", [] { return with(direct_problem(), [](Problem& p) { p.options.softcap = -1; }); },
       "softcap must be 0 (off) or a positive number (got -1)"},
      {"softcap NaN", [] { return with(direct_problem(), [](Problem& p) { p.options.softcap = kNaN; }); },
       "softcap must be 0 (off) or a positive number (got nan)"},
      {"softcap inf", [] { return with(direct_problem(), [](Problem& p) { p.options.softcap = kInf; }); },
       "softcap must be 0 (off) or a positive number (got inf)"},
      // overflow of finite inputs (findings B2, B3: refused since 836f906)
      {"inf - inf inside Q Kᵀ",
       [] {
         Problem p;
         p.Q = M({{1e300, 1e300}});
         p.K = M({{1e300, -1e300}, {1, 1}});
         p.V = M({{1}, {2}});
         p.options.scale.kind = attn::Scale::Kind::None;
         return p;
       },
       "the scores overflow float64: row 1, column 1 is not a number (inf - inf or 0 x inf); scale the "
       "inputs down"},
      {"scale 0 times an infinite score, head 2, columns layout",
       [] {
         Problem p;
         p.options.layout = attn::Layout::Columns;
         p.Q = M({{1}, {1e300}});  // 2 features x 1 query: head 1 sees 1, head 2 sees 1e300
         p.K = M({{1, 1}, {1e300, 1}});
         p.V = M({{1, 2}, {3, 4}});
         p.options.heads = 2;
         p.options.scale = {attn::Scale::Kind::Multiply, 0};
         return p;
       },
       "the scores overflow float64: row 1, column 1 of head 2 is not a number (inf - inf or 0 x inf); "
       "scale the inputs down"},
      {"float32 input beyond float32's range",
       [] {
         return with(projection_problem(), [](Problem& p) {
           (*p.X)(1, 2) = -1e39;
           p.options.precision = attn::Precision::Float32;
         });
       },
       "X row 2, column 3 is -1e+39: too large for float32 (largest 3.4e+38); compute in float64"},
      {"float32 softcap that rounds to 0",
       [] {
         return with(direct_problem(), [](Problem& p) {
           p.options.softcap = 1e-50;
           p.options.precision = attn::Precision::Float32;
         });
       },
       "softcap 1e-50 is 0 in float32; compute in float64"},
      {"float32 softcap that rounds to inf",
       [] {
         return with(direct_problem(), [](Problem& p) {
           p.options.softcap = 1e39;
           p.options.precision = attn::Precision::Float32;
         });
       },
       "softcap 1e+39 is infinite in float32; compute in float64"},
      {"float32 scale divisor that rounds to 0",
       [] {
         return with(direct_problem(), [](Problem& p) {
           p.options.scale = {attn::Scale::Kind::DivideBy, 1e-50};
           p.options.precision = attn::Precision::Float32;
         });
       },
       "the scale divisor 1e-50 is 0 in float32; compute in float64"},
      {"float32 scale factor that rounds to inf",
       [] {
         return with(direct_problem(), [](Problem& p) {
           p.options.scale = {attn::Scale::Kind::Multiply, 1e300};
           p.options.precision = attn::Precision::Float32;
         });
       },
       "scale 1e+300 is infinite in float32; compute in float64"},
      // limits: over them, an error before anything the size of the trace is allocated
      {"X over kMaxDim rows",
       [] { return with(projection_problem(), [](Problem& p) { p.X = Matrix::Ones(attn::kMaxDim + 1, 4); }); },
       "X has 4097 rows: at most 4096 are accepted (every step of the trace is kept in memory)"},
      {"W_Q over kMaxDim columns",
       [] { return with(projection_problem(), [](Problem& p) { p.W_Q = Matrix::Ones(4, attn::kMaxDim + 1); }); },
       "W_Q has 4097 columns: at most 4096 are accepted (every step of the trace is kept in memory)"},
      {"K over kMaxDim columns, columns layout (tokens)",
       [] {
         return with(direct_problem(), [](Problem& p) {
           p.options.layout = attn::Layout::Columns;
           p.Q = Matrix::Ones(2, 2);
           p.K = Matrix::Ones(2, attn::kMaxDim + 1);
         });
       },
       "K has 4097 columns: at most 4096 are accepted (every step of the trace is kept in memory)"},
      {"a 4096 x 4096 trace",
       [] {
         Problem p;
         p.Q = p.K = p.V = Matrix::Ones(4096, 1);
         return p;
       },
       "the trace of this problem would hold 100687872 numbers; the most accepted is 67108864 (fewer "
       "tokens or heads)"},
      {"8 heads of 2048 x 2048",
       [] {
         Problem p;
         p.Q = p.K = p.V = Matrix::Ones(2048, 8);
         p.options.heads = 8;
         return p;
       },
       "the trace of this problem would hold 201424896 numbers; the most accepted is 67108864 (fewer "
       "tokens or heads)"},
  };
  return cases;
}

TEST_CASE("robustness: every bad problem gets its message", "[robustness][errors]") {
  for (const ProblemCase& c : problem_cases()) {
    INFO(c.what);
    const Problem p = c.make();
    REQUIRE_THROWS_AS(attn::run(p), InputError);
    REQUIRE_THROWS_SAYING(attn::run(p), c.message);
    // explain() validates the same way.
    REQUIRE_THROWS_SAYING(attn::explain(p, "weights", 0, 0, 0), c.message);
  }
}

TEST_CASE("robustness: pasted text with NaN/Inf reaches run() and is refused there", "[robustness][errors]") {
  Problem p = direct_problem();
  p.K = attn::parse_matrix("[[1, 1], [0, nan], [1, 0]]", "K");
  REQUIRE_THROWS_SAYING(attn::run(p),
                        "K row 2, column 2 is nan: inputs must be finite numbers (only an "
                        "additive mask may hold -inf)");
  p = direct_problem();
  p.options.mask = attn::parse_matrix("0 -inf 0\n-inf -inf 0", "mask");  // -inf: allowed here only
  CHECK_NOTHROW(attn::run(p));
}

TEST_CASE("robustness: limits refuse before allocating the trace", "[robustness][limits]") {
  // A 4096 x 4096 problem would need ~800 MB of trace; it must be refused at once.
  Problem p;
  p.Q = p.K = p.V = Matrix::Ones(4096, 1);
  // The size check comes before any allocation (normalize() runs first; no time is asserted).
  CHECK_THROWS_SAYING(attn::run(p), Catch::StartsWith("the trace of this problem would hold"));
  // The largest accepted shapes still run: 4096 queries against a few keys, d_model 4096.
  Problem tall;
  tall.Q = Matrix::Ones(attn::kMaxTokens, 1);
  tall.K = tall.V = Matrix::Ones(2, 1);
  CHECK(attn::run(tall).output.rows() == attn::kMaxTokens);
  Problem wide;
  wide.Q = wide.K = Matrix::Constant(2, attn::kMaxDim, 1e-3);
  wide.V = Matrix::Ones(2, 1);
  CHECK(attn::run(wide).output.allFinite());
}

TEST_CASE("robustness: explain refuses cells and steps that do not exist", "[robustness][explain]") {
  const Problem p = direct_problem();
  REQUIRE_THROWS_SAYING(
      attn::explain(p, "softcapped", 0, 0, 0),
      "the trace has no step 'softcapped' for head 0: its steps are Q, K, V, scores, scaled, weights, output");
  REQUIRE_THROWS_SAYING(attn::explain(p, "weights", 3, 0, 0),
                        "the trace has no step 'weights' for head 3: its heads are 0");
  REQUIRE_THROWS_SAYING(
      attn::explain(p, "concat", -1, 0, 0),
      "the trace has no step 'concat' for head (none): its steps are Q, K, V, scores, scaled, weights, output");
  REQUIRE_THROWS_SAYING(attn::explain(p, "weights", 0, 2, 0), "step 'weights' is 2x3: it has no row 3, column 1");
  REQUIRE_THROWS_SAYING(attn::explain(p, "weights", 0, 0, -1), "step 'weights' is 2x3: it has no row 1, column 0");
  REQUIRE_THROWS_SAYING(
      attn::explain(p, "<script>", 0, 0, 0),
      "the trace has no step '<script>' for head 0: its steps are Q, K, V, scores, scaled, weights, output");
}

// ---------------------------------------------------------------------------------------------
// Masks that hide everything

TEST_CASE("robustness: a mask that hides everything", "[robustness][mask]") {
  for (const bool keep : {true, false}) {
    INFO((keep ? "boolean" : "additive"));
    Problem p = direct_problem();
    p.options.mask_kind = keep ? attn::MaskKind::Keep : attn::MaskKind::Additive;
    p.options.mask = keep ? Matrix(Matrix::Zero(2, 3)) : Matrix(Matrix::Constant(2, 3, -kInf));
    const attn::Trace t = attn::run(p);
    check_sound(p, t);
    CHECK(step(t, "weights").isZero(0));
    CHECK(t.output.isZero(0));
    CHECK(said(t.warnings) ==
          std::vector<std::string>{"warning.fully_masked(axis=row, row=1)", "warning.fully_masked(axis=row, row=2)"});
    CHECK(t.facts[0].fully_masked == std::vector<int>{0, 1});
    CHECK(t.facts[0].entropy.isZero(0));
  }
  // Causal cross-attention with more queries than keys never hides a row (top-left aligned),
  // but a custom mask hiding key 1 hides query 1's only key.
  Problem p = direct_problem();
  p.Q = Matrix::Ones(4, 2);
  p.options.causal = true;
  p.options.mask = M({{0, 1, 1}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}});
  p.options.mask_kind = attn::MaskKind::Keep;
  const attn::Trace t = attn::run(p);
  check_sound(p, t);
  CHECK(t.facts[0].fully_masked == std::vector<int>{0});
  CHECK(said(t.warnings) == std::vector<std::string>{"warning.fully_masked(axis=row, row=1)"});
  // With W_O and b_O the fully masked query's output is b_O (its head output is 0).
  Problem q = projection_problem();
  q.options.mask = Matrix::Constant(3, 3, -kInf);
  q.W_O = Matrix::Identity(4, 4);
  q.b_O = V({1, 2, 3, 4});
  const attn::Trace u = attn::run(q);
  check_sound(q, u);
  CHECK(u.output.row(0) == V({1, 2, 3, 4}).transpose());
}

// ---------------------------------------------------------------------------------------------
// Numerical edge cases: finite results where the maths is finite.

TEST_CASE("robustness: logits of +-1e300", "[robustness][numerics]") {
  Problem p;
  p.Q = M({{1e150}, {-1e150}});
  p.K = M({{1e150}, {-1e150}, {1}});
  p.V = M({{1, 10}, {2, 20}, {3, 30}});
  p.options.scale.kind = attn::Scale::Kind::None;
  const attn::Trace t = attn::run(p);
  check_sound(p, t);
  CHECK(step(t, "scores")(0, 0) == Approx(1e300));
  CHECK(step(t, "scores")(1, 0) == Approx(-1e300));
  CHECK(step(t, "weights") == M({{1, 0, 0}, {0, 1, 0}}));
  CHECK(t.output == M({{1, 10}, {2, 20}}));
  CHECK(t.warnings.empty());
  // Scaled down by 1/sqrt(d_k) and in float32 (1e300 does not fit: see the float32 cases).
  p.options.scale.kind = attn::Scale::Kind::SqrtDk;
  CHECK(attn::run(p).output == M({{1, 10}, {2, 20}}));
}

TEST_CASE("robustness: all-equal scores give uniform weights", "[robustness][numerics]") {
  for (const double s : {0.0, 1.0, -7.5, 1000.0}) {
    INFO(s);
    Problem p;
    p.Q = M({{s}});
    p.K = M({{1}, {1}, {1}, {1}});
    p.V = M({{1}, {2}, {3}, {4}});
    p.options.scale.kind = attn::Scale::Kind::None;
    const attn::Trace t = attn::run(p);
    check_sound(p, t);
    for (Eigen::Index j = 0; j < 4; ++j) CHECK(step(t, "weights")(0, j) == Approx(0.25).epsilon(1e-12));
    CHECK(t.output(0, 0) == Approx(2.5).epsilon(1e-12));
    CHECK(t.facts[0].entropy[0] == Approx(std::log(4.0)));
  }
}

// Large equal logits get weights 1/S: the softmax must not compute exp(x - (log Σ + max)), which
// loses log Σ when |max| is large (weights 1, 1, 1 for logits 1e300; 0.47 + 0.47 in float32 for
// logits -1492992). ROBUSTNESS.md, B1.
TEST_CASE("robustness: large equal logits still give uniform weights", "[robustness][numerics]") {
  Problem p;
  p.Q = M({{1e150}});
  p.K = M({{1e150}, {1e150}, {1e150}});
  p.V = M({{1}, {2}, {3}});
  p.options.scale.kind = attn::Scale::Kind::None;
  attn::Trace t = attn::run(p);
  check_sound(p, t);
  CHECK(step(t, "weights")(0, 0) == Approx(1.0 / 3));
  CHECK(t.output(0, 0) == Approx(2.0));

  // float32: the seed-003-sized problem with scores ~1.5e6 (from fuzz_run's first finding).
  Problem f;
  f.Q = M({{-1221.0}, {-1221.0}});
  f.K = M({{1222.75}, {1222.75}});
  f.V = M({{1}, {3}});
  f.options.scale.kind = attn::Scale::Kind::None;
  f.options.precision = attn::Precision::Float32;
  t = attn::run(f);
  check_sound(f, t);
  CHECK(step(t, "weights")(0, 0) == Approx(0.5));
  CHECK(t.output(0, 0) == Approx(2.0));

  // float64, equal logits of 1e5: weights 0.25 - 1.4e-11 instead of 0.25.
  Problem g;
  g.Q = M({{1e5}});
  g.K = M({{1}, {1}, {1}, {1}});
  g.V = M({{1}, {2}, {3}, {4}});
  g.options.scale.kind = attn::Scale::Kind::None;
  t = attn::run(g);
  CHECK(step(t, "weights")(0, 0) == Approx(0.25).epsilon(1e-14));
}

TEST_CASE("robustness: subnormal inputs", "[robustness][numerics]") {
  const double tiny = std::numeric_limits<double>::denorm_min();
  Problem p;
  p.Q = M({{tiny, 2.5e-310}});
  p.K = M({{tiny, tiny}, {-tiny, 2.5e-310}});
  p.V = M({{tiny}, {3 * tiny}});
  const attn::Trace t = attn::run(p);
  check_sound(p, t);
  CHECK(step(t, "scores").isZero(0));  // products underflow to 0
  CHECK(step(t, "weights") == M({{0.5, 0.5}}));
  CHECK(t.output(0, 0) == 2 * tiny);
  CHECK(t.warnings.empty());
  // float32: double subnormals become 0, and that is fine too.
  p.options.precision = attn::Precision::Float32;
  const attn::Trace f = attn::run(p);
  check_sound(p, f);
  CHECK(f.output.allFinite());
}

TEST_CASE("robustness: a single token and d_k = 1", "[robustness][numerics]") {
  Problem p;
  p.Q = M({{3}});
  p.K = M({{-2}});
  p.V = M({{7, -1}});
  for (const bool f32 : {false, true}) {
    p.options.precision = f32 ? attn::Precision::Float32 : attn::Precision::Float64;
    const attn::Trace t = attn::run(p);
    check_sound(p, t);
    CHECK(t.d_k == 1);
    CHECK(step(t, "weights") == M({{1}}));
    CHECK(t.output == M({{7, -1}}));
    CHECK(t.facts[0].entropy[0] == 0);
  }
  // One token from X with a 1x1 everything, causal, softcap, W_O, in the columns layout.
  Problem q;
  q.X = M({{2}});
  q.W_Q = q.W_K = q.W_V = M({{0.5}});
  q.W_O = M({{3}});
  q.options.causal = true;
  q.options.softcap = 1;
  q.options.layout = attn::Layout::Columns;
  const attn::Trace t = attn::run(q);
  check_sound(q, t);
  CHECK(t.output == M({{3}}));
}

TEST_CASE("robustness: float32 overflow where float64 would not", "[robustness][numerics]") {
  // Scores of 9e38 overflow float32 (max 3.4e38) but not float64.
  Problem p;
  p.Q = M({{3e19}, {1}});
  p.K = M({{3e19}, {1}});
  p.V = M({{1}, {2}});
  p.options.scale.kind = attn::Scale::Kind::None;
  const attn::Trace t64 = attn::run(p);
  check_sound(p, t64);
  CHECK(std::isfinite(step(t64, "scores")(0, 0)));
  CHECK(t64.output.allFinite());
  p.options.precision = attn::Precision::Float32;
  const attn::Trace t32 = attn::run(p);
  check_sound(p, t32);
  CHECK(step(t32, "scores")(0, 0) == kInf);  // documented: the scores step shows the overflow
  // The weight goes to the infinite score, the limit of the maths: same output as float64.
  CHECK(step(t32, "weights") == M({{1, 0}, {1, 0}}));
  CHECK(t32.output == t64.output);
  // The output itself overflowing float32 is reported as a warning.
  Problem v = direct_problem();
  v.V = Matrix::Constant(3, 3, 3e38);
  v.options.precision = attn::Precision::Float32;
  v.W_O = M({{2, 0, 0}, {0, 1, 0}, {0, 0, 1}});
  const attn::Trace w = attn::run(v);
  check_sound(v, w);
  CHECK(!w.output.allFinite());
  REQUIRE(w.warnings.size() >= 1);
  CHECK(said(w.warnings[0]).rfind("warning.overflow(axis=row, ", 0) == 0);
}

// Finite inputs whose scores overflow to NaN (inf - inf inside QKᵀ, 0 · inf with scale 0,
// float32 inputs beyond 3.4e38) are refused with the position, never turned into NaN weights.
// ROBUSTNESS.md, B2.
TEST_CASE("robustness: overflowing scores are refused, never NaN weights", "[robustness][numerics]") {
  SECTION("inf - inf in Q Kᵀ") {
    Problem p;
    p.Q = M({{1e300, 1e300}});
    p.K = M({{1e300, -1e300}, {1, 1}});
    p.V = M({{1}, {2}});
    p.options.scale.kind = attn::Scale::Kind::None;
    REQUIRE_THROWS_SAYING(attn::run(p), Catch::Contains("the scores overflow float64: row 1, column 1 is "
                                                        "not a number (inf - inf or 0 x inf)"));
  }
  SECTION("scale 0 times an infinite score") {
    Problem p;
    p.Q = M({{1e300}});
    p.K = M({{1e300}, {1}});
    p.V = M({{1}, {2}});
    p.options.scale = {attn::Scale::Kind::Multiply, 0};
    REQUIRE_THROWS_SAYING(attn::run(p), Catch::Contains("the scores overflow float64: row 1, column 1 is "
                                                        "not a number"));
  }
  SECTION("float32 input beyond float32's range") {
    Problem p = projection_problem();
    (*p.X)(0, 0) = 1e39;
    p.options.precision = attn::Precision::Float32;
    REQUIRE_THROWS_SAYING(attn::run(p), Catch::Contains("X row 1, column 1 is 1e+39: too large for float32"));
  }
}

// A softcap or scale that float32 would round to 0 or inf is refused, not silently changed (a
// softcap of 1e-50 would switch the softcap off; a divisor of 1e-50 would make every logit inf).
// ROBUSTNESS.md, B3.
TEST_CASE("robustness: float32 refuses options that would round to 0 or inf", "[robustness][numerics]") {
  Problem p = direct_problem();
  p.options.precision = attn::Precision::Float32;
  p.options.softcap = 1e-50;
  REQUIRE_THROWS_SAYING(attn::run(p), Catch::Contains("softcap 1e-50 is 0 in float32; compute in float64"));
  Problem q;
  q.Q = M({{1}});
  q.K = M({{1}, {2}});
  q.V = M({{1}, {2}});
  q.options.precision = attn::Precision::Float32;
  q.options.scale = {attn::Scale::Kind::DivideBy, 1e-50};
  REQUIRE_THROWS_SAYING(attn::run(q), Catch::Contains("the scale divisor 1e-50 is 0 in float32; compute in float64"));
  q.options.scale = {attn::Scale::Kind::DivideBySqrt, 1e-50};
  REQUIRE_THROWS_SAYING(attn::run(q), Catch::Contains("the number under the scale's square root 1e-50 "
                                                      "is 0 in float32; compute in float64"));
  // float64 holds both: the larger logit takes all the weight.
  q.options.precision = attn::Precision::Float64;
  q.options.scale = {attn::Scale::Kind::DivideBy, 1e-50};
  CHECK(step(attn::run(q), "weights") == M({{0, 1}}));
}

// With several heads and no W_O the output is the concatenation: explain() reports its cells as
// "concat" (source head c / d_v, column c % d_v) and never reads the absent W_O. ROBUSTNESS.md, B4.
TEST_CASE("robustness: explain the output of several heads without W_O", "[robustness][explain]") {
  Problem p;
  p.Q = p.K = p.V = Matrix::Ones(2, 4);
  p.options.heads = 2;
  const attn::Explanation e = attn::explain(p, "output", -1, 1, 3);
  CHECK(e.value == Approx(1.0).epsilon(1e-15));
  CHECK(e.kind == "concat");
  CHECK(e.source_head == 1);
  CHECK(e.source_col == 1);
}

TEST_CASE("robustness: every documented output of run() passes the fuzzers' invariants", "[robustness]") {
  // The problems of this file that run, in both layouts and precisions, through the same checks
  // fuzz_run applies to every input it tries, including the long-double reference output.
  std::vector<Problem> problems = {direct_problem(), projection_problem()};
  Problem multi = projection_problem();
  multi.options.heads = 4;
  multi.options.kv_heads = 2;
  multi.options.causal = true;
  multi.W_K = Matrix(multi.W_K->leftCols(2));  // 2 key/value heads of d_k = d_v = 1
  multi.W_V = Matrix(multi.W_V->leftCols(2));
  multi.W_O = Matrix::Identity(4, 4);
  multi.X_kv = M({{1, 2, 3, 4}, {0, 0, 0, 1}, {1, 1, 0, 0}, {2, 0, 0, 2}, {1, 0, 0, 0}});
  problems.push_back(multi);
  for (Problem p : problems) {
    for (const auto layout : {attn::Layout::Rows, attn::Layout::Columns}) {
      for (const auto precision : {attn::Precision::Float64, attn::Precision::Float32}) {
        Problem q = p;
        if (layout == attn::Layout::Columns) {
          for (auto* m : {&q.Q, &q.K, &q.V, &q.X, &q.X_kv, &q.W_Q, &q.W_K, &q.W_V, &q.W_O}) {
            if (*m) *m = Matrix((*m)->transpose());
          }
        }
        q.options.layout = layout;
        q.options.precision = precision;
        const attn::Trace t = attn::run(q);
        check_sound(q, t);
        CHECK(attn::invariants::check_all_finite(t).empty());
        CHECK(attn::invariants::check_against_reference(q, t).empty());
      }
    }
  }
}

}  // namespace
