// Reads the matrices people paste: from notebooks (NumPy, PyTorch, TensorFlow, JAX), other
// languages' consoles (Julia, R, Octave/MATLAB, Mathematica), LaTeX, spreadsheets and web pages.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "matrix.h"

namespace attn {

/// A matrix read from text and the name of the format it was recognised as.
struct ParsedMatrix {
  Matrix values;
  /// A person-readable name, for "read as a PyTorch tensor, 4 x 8": one of "NumPy print
  /// output", "NumPy array", "NumPy matrix", "list of NumPy arrays", "list of NumPy column
  /// vectors", "Python list", "MATLAB matrix", "PyTorch tensor", "TensorFlow tensor", "JAX
  /// array", "Julia matrix", "Julia vector", "R matrix", "R vector", "Octave/MATLAB output",
  /// "Mathematica list", "LaTeX bmatrix" (pmatrix, matrix, array, ...), "CSV", "TSV",
  /// "semicolon-separated values", "whitespace-separated rows"; the last four add " with
  /// decimal commas" when they held any.
  std::string format;
};

/// Parse one matrix from text, as the tools print it:
///  - NumPy print() and repr() output (wrapped rows, `dtype=`, `np.matrix`, integers, column
///    vectors, scientific notation), `np.array([...])` source, a Python list of arrays (a list
///    of column vectors becomes the columns of one matrix); IPython `Out[n]:`, REPL prompt
///    lines (`>>> `, `In [n]:`, `julia> `, `> `, `>> `) and an assignment `A = ` are skipped;
///  - PyTorch `tensor(...)` with any keyword arguments (`requires_grad=`, `grad_fn=`,
///    `device=`, `dtype=`), TensorFlow `<tf.Tensor: ..., numpy=array(...)>` and
///    `tf.Tensor(..., shape=(...), dtype=...)`, JAX `Array(...)`;
///  - Julia (`2×2 Matrix{Float64}:` then rows), R's print (`[,1]` / `[1,]` labels, column
///    blocks; `[1]` vectors), Octave/MATLAB output (`A =` then rows, `Columns 1 through 8`
///    blocks, a `1.0e+03 *` scale), Mathematica `{{1, 2}, {3, 4}}` (`*^` exponents);
///  - LaTeX bmatrix/pmatrix/Bmatrix/vmatrix/Vmatrix/matrix/smallmatrix/array environments;
///  - Python/JSON lists (trailing commas allowed), MATLAB `[1 2; 3 4]`;
///  - CSV, TSV and whitespace-separated rows, one row per line; semicolon-separated values
///    with decimal commas; a decimal comma in tab- or space-separated cells;
///  - a 3-D array of one slice (1 x r x c, a batch of one) as that slice, its format's name
///    ending " with its batch axis of 1 dropped";
///  - a simple fraction a/b of two unsigned decimals (`1/3`, `-2/3`);
///  - inf, -inf, nan (any case), np.inf, True/False as numbers; U+2212 and other Unicode
///    minus signs, non-breaking and other Unicode spaces, CRLF line ends.
/// What cannot be read is refused with an InputError whose message starts with `name` and
/// names the row and column (from 1), what was found (as the characters a person sees) and
/// what to do: elided values (`...`, `⋮`), 3-D arrays of several slices (with their shapes), complex
/// numbers, ragged rows, an ambiguous decimal comma.
ParsedMatrix parse_matrix_detailed(std::string_view text, std::string_view name = "matrix");

/// One number typed into a table cell (row and column from 1, for the messages): the numbers
/// and words parse_matrix reads, a decimal comma read as a point (`1,5` is 1.5, never two
/// numbers). Refused, naming `name` and the cell: an empty cell, more than one number (`1 2`,
/// `1;2`), a comma that could be a thousands separator (`1,234`: use a dot). The InputError's
/// place is `name` at (row, column).
double parse_cell(std::string_view text, std::string_view name, std::size_t row, std::size_t column);

/// parse_matrix_detailed(text, name).values.
Matrix parse_matrix(std::string_view text, std::string_view name = "matrix");

}  // namespace attn
