// The scale rule: how QKᵀ becomes the logits. run() (attention.cpp), the worked calculation of a
// scaled score (explain.cpp) and the output-only fast path (fast_attention.cpp) all take it from
// here, so the three cannot drift apart.
#pragma once

#include <Eigen/Core>
#include <cmath>

namespace attn {

/// How QKᵀ is scaled before the softmax.
struct Scale {
  enum class Kind {
    SqrtDk,        ///< divide by √d_k (the default)
    None,          ///< leave the scores as they are
    Multiply,      ///< multiply by `value`
    DivideBy,      ///< divide by `value`
    DivideBySqrt,  ///< divide by √value, the root taken in the working precision ("1/sqrt(3)")
  };
  Kind kind = Kind::SqrtDk;
  double value = 1.0;
};

/// A scale in the working precision S: the scores multiplied by `by`, or divided by it.
template <typename S>
struct ScaleRule {
  bool divide = false;
  S by = 1;
  S apply(S x) const { return divide ? x / by : x * by; }
  /// The factor the scores are multiplied by, as a number (1/by for a division).
  double factor() const { return divide ? 1.0 / static_cast<double>(by) : static_cast<double>(by); }
};

/// `scale` for scores over `d_scores` features (d_k; d_k/2 for differential attention's halves).
/// Divisions stay divisions and roots are taken in the working precision: seed 003 divides by
/// float32(√3), which rounds differently from multiplying by float32(1/√3).
template <typename S>
ScaleRule<S> scale_rule(const Scale& scale, Eigen::Index d_scores) {
  switch (scale.kind) {
    case Scale::Kind::SqrtDk:
      return {true, std::sqrt(static_cast<S>(d_scores))};
    case Scale::Kind::DivideBy:
      return {true, static_cast<S>(scale.value)};
    case Scale::Kind::DivideBySqrt:
      return {true, std::sqrt(static_cast<S>(scale.value))};
    case Scale::Kind::Multiply:
      return {false, static_cast<S>(scale.value)};
    case Scale::Kind::None:
      break;
  }
  return {false, S(1)};
}

}  // namespace attn
