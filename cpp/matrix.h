// Shared numeric types of the core. Row-major so a JS flat array maps without copying.
#pragma once

#include <Eigen/Core>
#include <cstdio>
#include <stdexcept>
#include <string>

namespace attn {

/// A dense row-major matrix of doubles: the storage type of every input and trace step.
using Matrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
/// A column vector of doubles (biases, per-row facts).
using Vector = Eigen::VectorXd;

/// Every user-facing failure of the core (bad text, bad shapes, bad options).
/// Its message names the input, the position and what was expected.
class InputError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

/// A number as error messages show it (`%g`: 1e+39, -inf, nan, 0.5). snprintf rather than
/// iostreams keeps the WebAssembly module small.
inline std::string format_number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

}  // namespace attn
