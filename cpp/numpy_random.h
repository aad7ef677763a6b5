// numpy's legacy RandomState (np.random.seed / randn / normal / rand / randint), bit for bit.
#pragma once

#include <array>
#include <cstdint>

#include "matrix.h"

namespace attn {

/// The stream of `np.random.seed(s)` followed by legacy draws: MT19937 seeded as numpy seeds
/// an integer, 53-bit doubles, the polar Gaussian with its cached second value, and
/// masked rejection sampling for randint. Matrices are filled in numpy's C (row-major) order.
class RandomState {
 public:
  /// Same as `np.random.seed(seed)`.
  explicit RandomState(std::uint32_t seed = 0);
  /// Same as `np.random.seed(seed)`: reseeds MT19937 and drops any cached Gaussian.
  void seed(std::uint32_t seed);

  /// One raw tempered MT19937 output (what `np.random.randint(0, 2**32)` returns).
  std::uint32_t next_uint32();
  /// `np.random.random_sample()`: a double in [0, 1) with 53 random bits.
  double random_sample();
  /// `np.random.standard_normal()`: the legacy polar method, caching its second value.
  double standard_normal();

  /// `np.random.randn(rows, cols)`.
  Matrix randn(Eigen::Index rows, Eigen::Index cols);
  /// `np.random.normal(loc, scale, size=(rows, cols))`.
  Matrix normal(Eigen::Index rows, Eigen::Index cols, double loc = 0.0, double scale = 1.0);
  /// `np.random.rand(rows, cols)`.
  Matrix rand(Eigen::Index rows, Eigen::Index cols);
  /// `np.random.randint(low, high, size=(rows, cols))` with numpy's default int64 dtype;
  /// high is exclusive. Throws InputError when low >= high.
  /// Values beyond 2**53 in magnitude are rounded by the conversion to double; use the scalar
  /// overload when every bit matters. Draws exactly what the scalar overload would, in C order.
  Matrix randint(std::int64_t low, std::int64_t high, Eigen::Index rows, Eigen::Index cols);
  /// `np.random.randint(low, high)`: one int64 in [low, high). Throws InputError when low >= high.
  std::int64_t randint(std::int64_t low, std::int64_t high);

 private:
  std::array<std::uint32_t, 624> state_{};
  int position_ = 624;
  bool has_gauss_ = false;
  double cached_gauss_ = 0.0;
};

}  // namespace attn
