// Shared numeric types of the core. Row-major so a JS flat array maps without copying.
#pragma once

#include <Eigen/Core>
#include <cstddef>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <utility>

#include "message.h"

namespace attn {

/// A dense row-major matrix of doubles: the storage type of every input and trace step.
using Matrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
/// A column vector of doubles (biases, per-row facts).
using Vector = Eigen::VectorXd;

/// What an input error concerns, for a view to show it beside: the input or option as problem JSON
/// names it ("W_K", "options.heads"), another one when two disagree ("K has 3 rows but V has 4":
/// field "V", other "K"), and the entry's 1-based row and column (0: the whole input).
struct ErrorPlace {
  ErrorPlace() = default;
  explicit ErrorPlace(std::string field_, std::string other_ = {}, std::ptrdiff_t row_ = 0, std::ptrdiff_t column_ = 0)
      : field(std::move(field_)), other(std::move(other_)), row(row_), column(column_) {}
  std::string field;
  std::string other;
  std::ptrdiff_t row = 0;
  std::ptrdiff_t column = 0;
};

/// Every user-facing failure of the core (bad text, bad shapes, bad options).
/// Its message names the input, the position and what was expected; place() says the same for
/// programs (empty when the error concerns no one input). An error made from a Message (an id
/// "error.*" and its parameters) has what() "id(name=value, ...)" and the words in the catalogues;
/// one made from a string (not yet converted) has English what() and an empty message().id.
class InputError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
  InputError(ErrorPlace place, const std::string& message) : std::invalid_argument(message), place_(std::move(place)) {}
  InputError(ErrorPlace place, Message message)
      : std::invalid_argument(said(message)), place_(std::move(place)), message_(std::move(message)) {}
  /// The same error at another place (a cell the caller knows better).
  InputError(ErrorPlace place, const InputError& from)
      : std::invalid_argument(from.what()), place_(std::move(place)), message_(from.message_) {}
  const ErrorPlace& place() const { return place_; }
  const Message& message() const { return message_; }

 private:
  ErrorPlace place_;
  Message message_;
};

/// An input error's parameters: name, value as text (numbers formatted by the core).
using ErrorParams = std::vector<std::pair<std::string, std::string>>;

/// An input error as a message of the catalogues: id "error.<id>" (web/lib/locales/*.json) and its
/// named parameters. Every user-facing error of the core is made here, so its words are the
/// catalogues' (what() is "error.<id>(name=value, ...)").
inline InputError input_error(ErrorPlace place, const char* id, ErrorParams params = {}) {
  return InputError(std::move(place), Message(std::string("error.") + id, std::move(params)));
}

/// A number as error messages show it (`%g`: 1e+39, -inf, nan, 0.5). snprintf rather than
/// iostreams keeps the WebAssembly module small.
inline std::string format_number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

}  // namespace attn
