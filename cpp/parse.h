// Reads the matrices people paste: numpy print output, nested lists, CSV/TSV, MATLAB.
#pragma once

#include <string_view>

#include "matrix.h"

namespace attn {

/// Parse one matrix from text in any of the accepted formats:
///  - numpy print output, with or without commas, with `array(...)`, `dtype=...`,
///    scientific notation and wrapped lines;
///  - Python / JSON nested lists (`[[1, 2], [3, 4]]`);
///  - a Python list of numpy column vectors (`[array([[1], [2]]), array([[3], [4]])]`),
///    joined side by side as the columns of one matrix;
///  - CSV, TSV or whitespace-separated rows, one row per line;
///  - MATLAB style `[1 2; 3 4]`;
///  - the words inf, -inf, nan (any case) as numbers.
/// A single list of numbers is one row. `name` prefixes every error message, which
/// names the row and column (counted from 1), what was found and what was expected.
/// Throws InputError.
Matrix parse_matrix(std::string_view text, std::string_view name = "matrix");

}  // namespace attn
