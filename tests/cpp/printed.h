// Compare computed numbers with numbers as a notebook printed them, to the digits printed.
#pragma once

#include <catch2/catch.hpp>
#include <cmath>
#include <regex>
#include <string>
#include <vector>

#include "matrix.h"

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
      INFO("row " << i + 1 << ", column " << j + 1 << ": computed " << m(i, j) << ", printed "
                  << p.text);
      CHECK(matches(m(i, j), p, extra_relative));
    }
  }
}

}  // namespace attn::testing
