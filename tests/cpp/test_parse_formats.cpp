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
#include "english.h"

using attn::InputError;
using attn::Matrix;
using attn::parse_matrix;
using attn::parse_matrix_detailed;
using attn::ParsedMatrix;
using Catch::Contains;

namespace {

// Every fixture, by file name: a missing one fails.
const char* const kFixtures[] = {
    "numpy-print.txt",
    "numpy-print-wrapped.txt",
    "numpy-repr.txt",
    "numpy-repr-dtype.txt",
    "numpy-int.txt",
    "numpy-column.txt",
    "numpy-scientific.txt",
    "numpy-matrix.txt",
    "numpy-ipython-out.txt",
    "numpy-source.txt",
    "python-repl.txt",
    "numpy-elided.txt",
    "numpy-3d.txt",
    "numpy-complex.txt",
    "torch-tensor.txt",
    "torch-requires-grad.txt",
    "torch-grad-fn.txt",
    "torch-dtype.txt",
    "torch-device.txt",
    "torch-parameter.txt",
    "torch-elided.txt",
    "tf-repr.txt",
    "tf-print.txt",
    "jax-array.txt",
    "julia-matrix.txt",
    "julia-vector.txt",
    "julia-elided.txt",
    "r-matrix.txt",
    "r-columns.txt",
    "r-vector.txt",
    "r-logical.txt",
    "r-elided.txt",
    "r-complex.txt",
    "octave-int.txt",
    "octave-columns.txt",
    "octave-scientific.txt",
    "octave-diagonal.txt",
    "octave-complex.txt",
    "matlab-scale.txt",
    "mathematica.txt",
    "latex-bmatrix.txt",
    "latex-pmatrix.txt",
    "latex-matrix.txt",
    "latex-array.txt",
    "latex-cdots.txt",
    "csv.txt",
    "csv-quoted.txt",
    "tsv.txt",
    "tsv-decimal-comma.txt",
    "semicolon-csv.txt",
    "decimal-comma-ambiguous.txt",
    "python-list.txt",
    "unicode-minus.txt",
    "unicode-spaces.txt",
    "unicode-in-message.txt",
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
      REQUIRE_THROWS_SAYING(read(fixture.text), fixture.error);
      continue;
    }
    const ParsedMatrix parsed = read(fixture.text);
    CHECK(parsed.format == fixture.format);
    check_same(parsed.values, fixture.rows, fixture.columns, fixture.expected);
    // parse_matrix is parse_matrix_detailed's matrix.
    check_same(parse_matrix(fixture.text, "X"), fixture.rows, fixture.columns, fixture.expected);
  }
}

// ---------------------------------------------------------------------------------------------
// Formats: the name each one is given, and details the fixtures do not show.

TEST_CASE("parse formats: the format's name", "[parse]") {
  const std::pair<const char*, const char*> cases[] = {
      {"[[1, 2], [3, 4]]", "Python list"},
      {"[[1 2]\n [3 4]]", "NumPy print output"},
      {"[1 2; 3 4]", "MATLAB matrix"},
      {"[array([[1], [2]]), array([[3], [4]])]", "list of NumPy column vectors"},
      {"[array([1, 2]), array([3, 4])]", "list of NumPy arrays"},
      {"[tensor([1., 2.]), tensor([3., 4.])]", "list of PyTorch tensors"},
      {"1,2\n3,4", "CSV"},
      {"1 2\n3 4", "whitespace-separated rows"},
      {"1\t2\n3\t4", "TSV"},
      {"1;2\n3;4", "semicolon-separated values"},
      {"{{1, 2}, {3, 4}}", "Mathematica list"},
      {"DeviceArray([[1., 2.]], dtype=float32)", "JAX array"},
      {"tf.constant([[1., 2.]])", "TensorFlow tensor"},
      {"torch.tensor([[1., 2.]])", "PyTorch tensor"},
  };
  for (const auto& [text, format] : cases) {
    INFO(text);
    CHECK(read(text).format == format);
  }
}

TEST_CASE("parse formats: prompts, Out[n] and assignments before the matrix", "[parse]") {
  ParsedMatrix p = read("julia> A\n2×2 Matrix{Float64}:\n 1.0  2.0\n 3.0  4.0\n");
  CHECK(p.format == "Julia matrix");
  check_same(p.values, 2, 2, {1, 2, 3, 4});
  p = read("> A\n     [,1]\n[1,]    1\n[2,]   -2\n");
  CHECK(p.format == "R matrix");
  check_same(p.values, 2, 1, {1, -2});
  p = read(">> A\nA =\n\n   1   2\n\n");
  CHECK(p.format == "Octave/MATLAB output");
  check_same(p.values, 1, 2, {1, 2});
  // A Python command over two lines: the continuation line is skipped too.
  p = read(">>> a = np.array([[1, 2],\n...               [3, 4]])\n>>> a\narray([[1, 2],\n       [3, 4]])");
  check_same(p.values, 2, 2, {1, 2, 3, 4});
  p = read("Out[12]: tensor([[0.5000, 1.0000]])");
  CHECK(p.format == "PyTorch tensor");
  check_same(p.values, 1, 2, {0.5, 1});
  // Assignments: Python, MATLAB source (with its ';'), an Octave scalar.
  check_same(read("W_Q = [[1, 2], [3, 4]]").values, 2, 2, {1, 2, 3, 4});
  p = read("A = [1 2; 3 4];");
  CHECK(p.format == "MATLAB matrix");
  check_same(p.values, 2, 2, {1, 2, 3, 4});
  check_same(read("x = 2.5000").values, 1, 1, {2.5});
  p = read("Q =\n[[1, 2],\n [3, 4]]");  // a label line over the matrix
  CHECK(p.format == "Python list");
  check_same(p.values, 2, 2, {1, 2, 3, 4});
  check_same(read("self.w_q = torch.tensor([[1., -1.]])").values, 1, 2, {1, -1});
}

TEST_CASE("parse formats: PyTorch, TensorFlow and JAX keyword arguments", "[parse]") {
  check_same(read("tensor([[1., 2.]], dtype=torch.float64, requires_grad=True)").values, 1, 2, {1, 2});
  check_same(read("tf.Tensor([[1. 2.]], shape=(1, 2), dtype=float32)").values, 1, 2, {1, 2});
  check_same(read("Array([1, 2], dtype=int32, weak_type=True)").values, 1, 2, {1, 2});
  check_same(read("<tf.Variable 'Variable:0' shape=(1, 2) dtype=float32, numpy=array([[1., 2.]], "
                  "dtype=float32)>")
                 .values,
             1, 2, {1, 2});
  REQUIRE_THROWS_SAYING(read("tensor([1.], foo)"),
                        "X: expected a keyword argument or ')' in the 'tensor(' from line 1 but found "
                        "'foo'");
  REQUIRE_THROWS_SAYING(read("tensor([1.], dtype=torch.float32 x)"),
                        "X: expected ',' or ')' in the 'tensor(' from line 1 but found 'x'");
  REQUIRE_THROWS_SAYING(read("tensor(1.5)"), "X: expected '[' in the 'tensor(' from line 1 but found '1.5'");
  REQUIRE_THROWS_SAYING(read("tf.Tensor([[1.]], shape=(1, 1"), "X: unbalanced brackets: '(' at line 1 is never closed");
  REQUIRE_THROWS_SAYING(read("<tf.Tensor: shape=(2,), dtype=float32>"),
                        "X: the TensorFlow tensor at line 1 shows no values (no 'numpy='): print it "
                        "with print(t.numpy())");
  REQUIRE_THROWS_SAYING(read("<tf.Tensor: shape=(1, 2), dtype=float32, numpy=array([[1., 2.]])"),
                        "X: the TensorFlow tensor from line 1 is never closed by '>'");
}

TEST_CASE("parse formats: values left out are refused with the tool's way to print them all", "[parse]") {
  REQUIRE_THROWS_SAYING(read("<tf.Tensor: shape=(2, 1000), dtype=int32, numpy=\narray([[   0,    1, "
                             "...,  998,  999],\n       [1000, 1001, ..., 1998, 1999]], dtype=int32)>"),
                        "X: row 1, column 3: expected a number but found '...': TensorFlow shortened "
                        "this tensor; print it in full with np.set_printoptions(threshold=sys.maxsize)");
  REQUIRE_THROWS_SAYING(read("Array([   0,    1, ...,  998,  999], dtype=int32)"),
                        "X: row 1, column 3: expected a number but found '...': JAX shortened this "
                        "array; print it in full with np.set_printoptions(threshold=sys.maxsize)");
  REQUIRE_THROWS_SAYING(read("5-element Vector{Float64}:\n 1.0\n 2.0\n ⋮\n 5.0\n"),
                        Contains("row 3, column 1: expected a number but found '⋮': Julia shortened"));
  REQUIRE_THROWS_SAYING(read("[1,2]\n[ reached getOption(\"max.print\") -- omitted 3 entries ]"),
                        Contains("expected the end of the text after the matrix"));
  REQUIRE_THROWS_SAYING(read("[1] 1 2 3\n [ reached getOption(\"max.print\") -- omitted 7 entries ]"),
                        "X: line 2: R left values out ([ reached getOption(\"max.print\") -- omitted 7 "
                        "entries ]); print them all after options(max.print = 1e6)");
}

TEST_CASE("parse formats: Julia, Octave/MATLAB and R layouts", "[parse]") {
  REQUIRE_THROWS_SAYING(read("2×3 Matrix{Float64}:\n 1.0  2.0\n 3.0  4.0"),
                        "X: the header at line 1 says 2 x 3 but the rows below it hold 2 x 2");
  REQUIRE_THROWS_SAYING(read("1×2 Matrix{ComplexF64}:\n 1.0+2.0im  3.0-1.0im"),
                        "X: row 1, column 1: found the complex number '1.0+2.0im', but attention "
                        "takes real numbers: paste the real part (in numpy A.real)");
  // Octave's column blocks must follow each other and have the same rows.
  REQUIRE_THROWS_SAYING(read("A =\n\n Columns 1 and 2:\n\n 1 2\n\n Columns 4 and 5:\n\n 3 4\n"),
                        "X: the columns from line 7 start at column 4 but column 3 comes next");
  REQUIRE_THROWS_SAYING(read("A =\n\n Columns 1 and 2:\n\n 1 2\n 5 6\n\n Column 3:\n\n 3\n"),
                        "X: the columns from line 8 have 1 row but those from line 3 have 2");
  REQUIRE_THROWS_SAYING(read("A =\n\n Columns x:\n 1 2\n"),
                        "X: line 3: expected a column number after 'Columns' but found 'x:'");
  // MATLAB's header lines and a negative scale.
  check_same(read("A =\n\n  2×2 logical array\n\n   1   0\n   0   1\n").values, 2, 2, {1, 0, 0, 1});
  check_same(read("A =\n\n   1.0e-03 *\n\n    1.5000   -2.0000\n").values, 1, 2, {1.5e-3, -2e-3});
  // R: labels in order, as many numbers as labels.
  REQUIRE_THROWS_SAYING(read("     [,1] [,2]\n[1,]    1    2\n[3,]    3    4"),
                        "X: line 3: expected the row label [2,] but found '[3,]'");
  REQUIRE_THROWS_SAYING(read("     [,1] [,2]\n[1,]    1    2    3"),
                        "X: row 1 has 3 numbers but the header at line 1 names 2 columns");
  REQUIRE_THROWS_SAYING(read("     [,1] [,3]\n[1,]    1    2"),
                        "X: line 1: expected the column label [,2] but found '[,3]'");
  REQUIRE_THROWS_SAYING(read("[1] 1 2\n[4] 3"), "X: line 2: expected the index [3] but found '[4]'");
  REQUIRE_THROWS_SAYING(read("     [,1]\n[1,]   NA"), "X: row 1, column 1: expected a number but found 'NA'");
}

TEST_CASE("parse formats: LaTeX details", "[parse]") {
  check_same(read("\\begin{bmatrix} - 1 & {-2} \\\\[2pt] \\num{2.5} & +\\infty % a comment\n"
                  "\\end{bmatrix}")
                 .values,
             2, 2, {-1, -2, 2.5, HUGE_VAL});
  check_same(read("\\begin{bmatrix*}[r] 1 & -1 \\end{bmatrix*}").values, 1, 2, {1, -1});
  check_same(read("\\mathbf{W}_Q = \\begin{Bmatrix} 1 \\\\ 2 \\\\ \\end{Bmatrix}.").values, 2, 1, {1, 2});
  REQUIRE_THROWS_SAYING(read("\\begin{align} a &= 1 \\end{align}"),
                        "X: line 1: expected a LaTeX matrix (bmatrix, pmatrix, matrix, array, ...) but "
                        "found \\begin{align}");
  REQUIRE_THROWS_SAYING(read("\\begin{bmatrix} 1 & 2"),
                        "X: \\begin{bmatrix} at line 1 is never closed by \\end{bmatrix}");
  REQUIRE_THROWS_SAYING(read("2 \\begin{bmatrix} 1 \\end{bmatrix}"),
                        "X: expected only the matrix but found '2' before \\begin{bmatrix}");
  REQUIRE_THROWS_SAYING(read("\\begin{bmatrix} 1 \\end{bmatrix} \\begin{bmatrix} 2 \\end{bmatrix}"),
                        "X: expected the end of the text after the matrix but found another \\begin{ "
                        "(give one matrix at a time)");
  REQUIRE_THROWS_SAYING(read("\\begin{bmatrix} 1 \\end{bmatrix} x"),
                        "X: expected the end of the text after the matrix but found 'x'");
  REQUIRE_THROWS_SAYING(read("\\begin{bmatrix} 1 & \\\\ 3 & 4 \\end{bmatrix}"),
                        "X: row 1, column 2: expected a number but found an empty cell");
  REQUIRE_THROWS_SAYING(read("\\begin{bmatrix} 1 & 2 \\\\ 3 \\end{bmatrix}"), "X: row 2 has 1 number but row 1 has 2");
  REQUIRE_THROWS_SAYING(read("\\begin{pmatrix} \\frac{1}{2} \\end{pmatrix}"),
                        "X: row 1, column 1: expected a number but found '\\frac{1}{2}'");
  REQUIRE_THROWS_SAYING(read("\\begin{pmatrix} 1 2 \\end{pmatrix}"),
                        "X: row 1, column 1: expected a number but found '1 2'");
}

TEST_CASE("parse formats: Mathematica lists", "[parse]") {
  check_same(read("{1.5`, 2`20., 3*^2, -4.5`*^-1}").values, 1, 4, {1.5, 2, 300, -0.45});
  REQUIRE_THROWS_SAYING(read("{{1, 2}, {3, 4]]"), "X: unbalanced brackets: ']' at line 1 closes the '{' from line 1");
  REQUIRE_THROWS_SAYING(read("}"), "X: unbalanced brackets: '}' at line 1 has no matching '{'");
  REQUIRE_THROWS_SAYING(read("{1, 2"), "X: unbalanced brackets: '{' at line 1 is never closed");
  REQUIRE_THROWS_SAYING(read("{1*^, 2}"), "X: row 1, column 1: expected a number but found '1*^'");
}

TEST_CASE("parse formats: decimal commas", "[parse]") {
  // Without blanks between cells a comma separates them, as before.
  ParsedMatrix p = read("1,5\n2,5");
  CHECK(p.format == "CSV");
  check_same(p.values, 2, 2, {1, 5, 2, 5});
  p = read("1,5 2,5");
  CHECK(p.format == "whitespace-separated rows with decimal commas");
  check_same(p.values, 1, 2, {1.5, 2.5});
  check_same(read("0,123\t-4,5e-3").values, 1, 2, {0.123, -4.5e-3});
  // In semicolon-separated values the comma is always decimal.
  p = read("1,234;5\n6;7,25;");
  CHECK(p.format == "semicolon-separated values with decimal commas");
  check_same(p.values, 2, 2, {1.234, 5, 6, 7.25});
  REQUIRE_THROWS_SAYING(read("1.234,5\t6"),
                        "X: row 1, column 1: '1.234,5' has thousands separators or two decimal marks; "
                        "use a dot for the decimal point and no thousands separators");
  REQUIRE_THROWS_SAYING(read("1,5;1.234"),
                        "X: row 1, column 2: '1.234' is ambiguous next to decimal commas: 1.234 with a "
                        "decimal point, or 1234 with '.' as a thousands separator; use a dot for the "
                        "decimal point and no thousands separators");
  REQUIRE_THROWS_SAYING(read("\"1,234\",\"5\""),
                        "X: row 1, column 1: '1,234' is ambiguous: 1.234 with a decimal comma, or 1234 "
                        "with a thousands separator; use a dot for the decimal point");
  REQUIRE_THROWS_SAYING(read("1 2;3"),
                        "X: row 1, column 2: expected ';' before '2' (each ';'-separated cell holds one "
                        "number; no thousands separators)");
  REQUIRE_THROWS_SAYING(read("1;2\n3"), "X: row 2 has 1 number but row 1 has 2");
  REQUIRE_THROWS_SAYING(read(";1"), "X: row 1, column 1: expected a number but found ';'");
  // A comma that is not between two digits makes the text CSV.
  REQUIRE_THROWS_SAYING(read("1,5 x,5"), "X: row 1, column 3: expected a number but found 'x'");
}

TEST_CASE("parse formats: complex numbers and 3-D arrays are refused with what they are", "[parse]") {
  REQUIRE_THROWS_SAYING(read("tensor([1.+2.j, 3.+0.j])"),
                        "X: row 1, column 1: found the complex number '1.+2.j', but attention takes "
                        "real numbers: paste the real part (in numpy A.real)");
  REQUIRE_THROWS_SAYING(read("[[1, 2j]]"), Contains("column 2: found the complex number '2j'"));
  REQUIRE_THROWS_SAYING(read("tensor([[[1., 2.],\n         [3., 4.]],\n\n        [[5., 6.],\n"
                             "         [7., 8.]]])"),
                        "X: expected a matrix (2 dimensions) but found a 3-D array of shape 2 x 2 x 2: "
                        "2 slices of 2 x 2; paste one 2-D slice at a time (e.g. A[0])");
  REQUIRE_THROWS_SAYING(read("[[[1, 2], [3]], [[4, 5], [6, 7]]]"),
                        "X: expected a matrix (2 dimensions) but found a 3-D array whose slices differ: "
                        "slice 1 is ragged (rows of different lengths), slice 2 is 2 x 2; paste one 2-D "
                        "slice at a time");
  REQUIRE_THROWS_SAYING(read("[[[1, 2]], [[3, 4]], [[5, 6]], [[7, 8]], [[9]]]"),
                        Contains("slice 4 is 1 x 2, ...; paste one 2-D slice at a time"));
}

TEST_CASE("parse formats: a 3-D array of one slice (a batch of one) is that slice", "[parse]") {
  // PyTorch's print of a 1 x 3 x 2 tensor, NumPy's of a 1 x 2 x 2 array, a nested list: the
  // slice, its format's name saying the batch axis was dropped.
  ParsedMatrix p = read("tensor([[[ 0.5000, -1.2500],\n         [ 2.0000,  0.0000],\n         [-0.7500,  1.0000]]])");
  check_same(p.values, 3, 2, {0.5, -1.25, 2, 0, -0.75, 1});
  CHECK(p.format == "PyTorch tensor with its batch axis of 1 dropped");
  p = read("[[[1 2]\n  [3 4]]]");
  check_same(p.values, 2, 2, {1, 2, 3, 4});
  CHECK(p.format == "NumPy print output with its batch axis of 1 dropped");
  p = read("[[[1, 2, 3]]]");
  check_same(p.values, 1, 3, {1, 2, 3});
  CHECK(p.format == "Python list with its batch axis of 1 dropped");
  p = read("[array([[1, 2], [3, 4]])]");
  check_same(p.values, 2, 2, {1, 2, 3, 4});
  CHECK(p.format == "list of one NumPy array with its batch axis of 1 dropped");
  // A 1 x r x 1 array stays what it was: one column vector.
  p = read("[[[1], [2]]]");
  check_same(p.values, 2, 1, {1, 2});
  CHECK(p.format == "Python list");
  // Its rows are checked as any matrix's.
  REQUIRE_THROWS_SAYING(read("[[[1, 2], [3]]]"), "X: row 2 has 1 number but row 1 has 2");
}

TEST_CASE("parse formats: a simple fraction a/b is a number", "[parse]") {
  check_same(read("1/3 -2/3\n1.5/4 1e1/4").values, 2, 2, {1.0 / 3, -2.0 / 3, 1.5 / 4, 2.5});
  check_same(read("[[1/3, 2], [3, 4/8]]").values, 2, 2, {1.0 / 3, 2, 3, 0.5});
  CHECK(attn::parse_cell("1/3", "X", 1, 1) == 1.0 / 3);
  CHECK(attn::parse_cell("\xe2\x88\x92"
                         "1/4",
                         "X", 1, 1) == -0.25);  // a Unicode minus
  // Not fractions: a zero denominator, signs or words after the slash, two slashes (a date).
  REQUIRE_THROWS_SAYING(attn::parse_cell("1/0", "X", 1, 2), "X: row 1, column 2: expected a number but found '1/0'");
  REQUIRE_THROWS_SAYING(attn::parse_cell("1/-3", "X", 1, 2), "X: row 1, column 2: expected a number but found '1/-3'");
  REQUIRE_THROWS_SAYING(attn::parse_cell("1/3/2024", "X", 1, 2), Contains("expected a number but found '1/3/2024'"));
  REQUIRE_THROWS_SAYING(attn::parse_cell("1/inf", "X", 1, 2), Contains("expected a number but found '1/inf'"));
  REQUIRE_THROWS_SAYING(attn::parse_cell("1e300/1e-300", "X", 1, 2), Contains("out of the range of a double"));
}

TEST_CASE("parse formats: Unicode from web pages and PDFs", "[parse]") {
  check_same(read("1e\xe2\x88\x92"
                  "5 \xe2\x88\x92"
                  "2")
                 .values,
             1, 2, {1e-5, -2});  // U+2212
  check_same(read("\xef\xbb\xbf"
                  "1,2\n3,4")
                 .values,
             2, 2, {1, 2, 3, 4});  // BOM
  check_same(read("1 2\xe2\x80\xa8"
                  "3 4")
                 .values,
             2, 2, {1, 2, 3, 4});  // U+2028
  check_same(read("[1\xe2\x80\x8b"
                  "2, 3]")
                 .values,
             1, 2, {12, 3});  // U+200B
  check_same(read("1\xe3\x80\x80"
                  "2")
                 .values,
             1, 2, {1, 2});  // U+3000
  // A word is shown as its characters, at most 30 of them, never cut inside one.
  std::string accents;
  for (int i = 0; i < 40; ++i) accents += "\xc3\xa9";  // é
  std::string shown;
  for (int i = 0; i < 27; ++i) shown += "\xc3\xa9";
  REQUIRE_THROWS_SAYING(read("[" + accents + "]"),
                        "X: row 1, column 1: expected a number but found '" + shown + "...'");
  REQUIRE_THROWS_SAYING(read("1 \xc3\x97 2"), "X: row 1, column 2: expected a number but found '\xc3\x97'");
  // Bytes that are not UTF-8, and control characters, have no face: they are escaped.
  REQUIRE_THROWS_SAYING(read("[\xe2\x88]"), "X: row 1, column 1: expected a number but found '\\xe2\\x88'");
  REQUIRE_THROWS_SAYING(read("[a\xc2\x85]"), "X: row 1, column 1: expected a number but found 'a'");
  REQUIRE_THROWS_SAYING(read("[a\xc2\x9f]"), "X: row 1, column 1: expected a number but found 'a\\xc2\\x9f'");
}

TEST_CASE("parse_cell: one number per table cell, a decimal comma read as a point", "[parse]") {
  using attn::parse_cell;
  CHECK(parse_cell("1,5", "X", 1, 2) == 1.5);
  CHECK(parse_cell(" \xe2\x88\x92"
                   "0,25 ",
                   "X", 1, 2) == -0.25);  // U+2212 minus, a decimal comma
  CHECK(parse_cell("\xe2\x88\x92"
                   "0.1383",
                   "X", 1, 2) == -0.1383);  // as the page's tables print it
  CHECK(parse_cell("1e-3", "X", 1, 2) == 0.001);
  CHECK(parse_cell("-inf", "X", 1, 2) == -INFINITY);
  CHECK(parse_cell("0,123", "X", 1, 2) == 0.123);  // a lone 0 is no thousands group
  REQUIRE_THROWS_SAYING(parse_cell("1 2", "X", 2, 3), "X: row 2, column 3: a cell holds one number but found '1 2'");
  REQUIRE_THROWS_SAYING(parse_cell("1;5", "X", 2, 3), "X: row 2, column 3: a cell holds one number but found '1;5'");
  REQUIRE_THROWS_SAYING(parse_cell("1,234", "W_Q", 1, 1),
                        "W_Q: row 1, column 1: '1,234' is ambiguous: 1.234 with a decimal comma, or "
                        "1234 with a thousands separator; use a dot for the decimal point");
  REQUIRE_THROWS_SAYING(parse_cell("1,2,3", "X", 1, 1),
                        "X: row 1, column 1: '1,2,3' has thousands separators or two decimal marks; "
                        "use a dot for the decimal point and no thousands separators");
  REQUIRE_THROWS_SAYING(parse_cell("abc", "X", 4, 1), "X: row 4, column 1: expected a number but found 'abc'");
  REQUIRE_THROWS_SAYING(parse_cell("  ", "X", 4, 1), "X: row 4, column 1 is empty: type a number");
  // The error's place: the input and the cell, for a view to mark it.
  try {
    parse_cell("abc", "dO", 4, 2);
    FAIL("abc was read as a number");
  } catch (const attn::InputError& e) {
    CHECK(e.place().field == "dO");
    CHECK(e.place().row == 4);
    CHECK(e.place().column == 2);
  }
}
