// Internal to the core: a problem after validation, and the functions the core's files share.
// Not part of the public API (attention.h is).
#pragma once

#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "attention.h"

namespace attn {

/// Keeps a function out of its callers. A browser compiles a wasm function on the main thread
/// when it is first called, and V8's first compiler (Liftoff) takes longer per byte the larger
/// the function, with native wasm exceptions: every call in a cleanup scope carries the state of
/// all the function's locals. So the phases and checks of what the first engine.run calls
/// (normalize, compute, the formulas) stay functions of a few KB, and the phases a problem does
/// not use are never compiled (BENCHMARKS.md, "Lazy compilation"). Binaryen, at link, may still
/// inline one that has a single caller; the calls cost nothing measurable against the steps.
#define ATTN_NOINLINE __attribute__((noinline))

/// A problem brought to the rows layout (tokens as rows), validated, with its derived sizes.
/// Validation messages speak in the user's layout; everything after it works in rows.
struct Normalized {
  bool columns = false;           ///< the user's layout is Layout::Columns
  bool direct = false;            ///< Q, K, V given (else projected from X)
  bool cross = false;             ///< X_kv given: keys and values come from another sequence
  Matrix Q, K, V;                 // direct mode
  Matrix X, X_kv, W_Q, W_K, W_V;  // projection mode (X_kv = X for self-attention)
  std::optional<Vector> b_Q, b_K, b_V, b_O;
  std::optional<Matrix> W_O;
  std::optional<Matrix> mask;  // L×S
  /// The KV cache (past rows), kv_heads·d_k and kv_heads·d_v wide; empty without one.
  Matrix past_K, past_V;
  std::optional<Matrix> P;  // learned positions, the shape of X
  /// The output's gradient as the problem gave it (gradients.cpp sets it; the catalogue says
  /// whether dO was given or is all ones).
  std::optional<Matrix> dO;
  /// The options, with what validation resolved: positional is Learned when P is given, and
  /// rope.dims is the number of rotated features (d_k when the problem left it 0).
  Options options;
  int heads = 1, kv_heads = 1;
  /// S counts every key the scores see: `past` cached rows, then the new keys (K's rows).
  Eigen::Index L = 0, S = 0, d_k = 0, d_v = 0, past = 0;
  /// Every query's position (L of them) and every key's (S, counting cached keys first): what
  /// causal, windows, sinks, ALiBi and RoPE compare. Without options.positions, queries sit at
  /// past ... past+L-1 and keys at 0 ... S-1.
  std::vector<double> query_pos, key_pos;

  /// ALiBi's slope of each head (the paper's or the user's); empty when ALiBi is off.
  std::vector<double> alibi_slopes;
  /// Each head's sink logit; empty without a sink (or when every one is -inf: they change nothing).
  std::vector<double> sink_logits;

  // ---- multi-head latent attention (W_DKV given; Problem::W_DKV) ----
  bool latent = false;
  Matrix W_DKV, W_UK, W_UV, W_KR, W_QR;  ///< W_KR, W_QR empty without the rotary part (d_r = 0)
  std::optional<Matrix> W_DQ, W_UQ;      ///< the query's down- and up-projections (else W_Q reads X)
  Matrix past_c_KV, past_k_R;            ///< the latent cache (`past` rows; past_k_R empty when d_r = 0)
  /// d_c: the latent's width; d_r: the rotary part's (0: none); d_cq: c_Q's (0: W_Q reads X);
  /// d_h: each head's q_C and k_C (d_k = d_h + d_r, so the default scale is 1/√(d_h + d_r)).
  Eigen::Index d_c = 0, d_r = 0, d_cq = 0, d_h = 0;
  bool qr_from_cq = false;  ///< W_QR reads c_Q (d_cq rows), else X (d_model rows)

  // ---- variants (issue 31), rows layout ----
  /// QK-norm's gains, d_k each (ones when not given); empty without QK-norm.
  std::vector<double> g_q, g_k;
  /// The output gate: W_G and b_G, and whether it is one gate per head (d_model×heads) rather
  /// than one per output feature (d_model×(heads·d_v)).
  std::optional<Matrix> W_G;
  std::optional<Vector> b_G;
  bool gate_headwise = false;
  /// Sigmoid attention: the bias b every weight adds (the given one, or −ln S).
  bool sigmoid = false;
  double sigmoid_bias = 0;
  /// Differential attention: each head's λ; empty when off.
  std::vector<double> lambdas;

  /// The key/value head query head `h` reads (grouped-query attention).
  int kv_group(int h) const { return h / (heads / kv_heads); }
  /// A window limits the keys a query sees (one side at least is bounded).
  bool window() const { return !(std::isinf(options.window_left) && std::isinf(options.window_right)); }
  /// Some component hides keys: the trace has a mask step and a masked step.
  bool has_mask() const { return !linear() && (mask.has_value() || options.causal || window()); }

  // ---- linear attention (options.attention = "linear") ----
  bool linear() const { return options.attention == AttentionKind::Linear; }
  FeatureMap feature_map() const { return options.feature_map.value_or(FeatureMap::EluPlusOne); }
  bool normalize() const { return options.normalize.value_or(true); }
  /// γ as the computation uses it: the option when causal, else 1 (ignored with a warning).
  double decay() const { return options.causal ? options.decay.value_or(1.0) : 1.0; }
  /// What φ(q_i)·φ(k_j) is multiplied by in the linear scores: γ^(pos(i) − pos(j)) for a key
  /// the query sees, 0 for one causal attention hides; 1 when not causal.
  double linear_factor(Eigen::Index i, Eigen::Index j) const {
    if (!options.causal) return 1.0;
    const double p = query_pos[static_cast<size_t>(i)], q = key_pos[static_cast<size_t>(j)];
    if (q > p) return 0.0;
    const double gamma = decay();
    return gamma == 1.0 ? 1.0 : std::pow(gamma, p - q);
  }
};

/// Linear attention's feature map φ at x, and its derivative φ′ (relu's at 0 is taken as 0).
inline double feature_map_at(FeatureMap map, double x) {
  switch (map) {
    case FeatureMap::EluPlusOne:
      return x > 0 ? x + 1 : std::exp(x);
    case FeatureMap::Relu:
      return x > 0 ? x : 0.0;
    case FeatureMap::Identity:
      break;
  }
  return x;
}
inline double feature_map_slope(FeatureMap map, double x) {
  switch (map) {
    case FeatureMap::EluPlusOne:
      return x > 0 ? 1.0 : std::exp(x);
    case FeatureMap::Relu:
      return x > 0 ? 1.0 : 0.0;
    case FeatureMap::Identity:
      break;
  }
  return 1.0;
}

/// Latent attention: the forms of attention a cache is compared for (MHA, GQA g = ... for each
/// divisor g of heads between 1 and heads, MQA, MLA) and the numbers each stores per token at this
/// problem's sizes (2·heads·d_h, 2·g·d_h, 2·d_h, d_c + d_r); as one row, the cache_sizes step.
std::vector<std::pair<std::string, double>> latent_cache_forms(const Normalized& n);
Matrix latent_cache_sizes(const Normalized& n);

/// QK-norm of one row of d_k features: (x − mean)/√(var + eps)·g (layer) or x/√(mean(x²) + eps)·g.
struct RowNorm {
  double mean = 0, spread = 0, divisor = 1;  ///< spread: var (layer) or mean(x²) (rms)
};
template <typename S, typename Row>
RowNorm row_norm(const Row& x, bool layer, double eps) {
  RowNorm r;
  const S count = static_cast<S>(x.size());
  S mean = 0;
  if (layer) mean = x.sum() / count;
  S spread = 0;
  for (Eigen::Index k = 0; k < x.size(); ++k) spread += (x[k] - mean) * (x[k] - mean);
  spread /= count;
  const S divisor = std::sqrt(spread + static_cast<S>(eps));
  r.mean = static_cast<double>(mean);
  r.spread = static_cast<double>(spread);
  r.divisor = static_cast<double>(divisor);
  return r;
}

/// The exclusive variants (issue 31): sigmoid, differential, linear and latent attention exclude
/// one another. Each entry is the key a message names, whether the problem turns it on, and
/// whether the variant replaces the whole computation (linear, latent) rather than how a softmax
/// attention's weights are made (sigmoid, differential); validate.cpp's exclusive_variants() lists
/// them and check_exclusive_variants() refuses any two.
struct ExclusiveVariant {
  const char* key;
  bool on;
  bool whole;
};
std::vector<ExclusiveVariant> exclusive_variants(const Problem& p);

/// Checks `problem` and brings it to the rows layout (validate.cpp). Throws InputError naming
/// the inputs that disagree, in the user's layout.
Normalized normalize(const Problem& problem);

/// Every step of the trace of a normalized problem, in its precision (attention.cpp).
Trace compute_trace(const Normalized& n);

/// The angle of the original Transformer's position encoding for `feature` (from 0) of d_model
/// features at `position`: position / 10000^(2i/d_model), i = feature / 2 (attention.cpp).
double sinusoid_angle(double position, Eigen::Index feature, Eigen::Index d_model);

/// The two features RoPE's pair `i` (from 0) rotates together: (i, i + dims/2) in the half
/// style, (2i, 2i + 1) interleaved (attention.cpp).
std::pair<Eigen::Index, Eigen::Index> rope_pair(const Rope& rope, int i);

/// The rotation of RoPE's pair `i` at `position`: angle = position·θ_i with θ_i =
/// base^(-2i/dims), or cos and sin read from the tables (angle NaN then) (attention.cpp).
struct RopeAngle {
  double angle, cos, sin;
};
RopeAngle rope_angle(const Rope& rope, double position, int i);

/// A row-major matrix in the working precision (float or double).
template <typename S>
using Mat = Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

/// RoPE: each row of `x` (one head's queries or keys) turned at its position, positions[first +
/// row]; `back` turns the other way (the rotation's transpose, which the backward pass needs).
/// The angles are taken in double and their cos/sin rounded to the working precision; the
/// rotation itself is done in it. Features beyond rope.dims pass unchanged.
template <typename S>
Mat<S> rotate(const Mat<S>& x, const Rope& rope, const std::vector<double>& positions, size_t first,
              bool back = false) {
  Mat<S> out = x;
  for (Eigen::Index r = 0; r < x.rows(); ++r) {
    const double position = positions[first + static_cast<size_t>(r)];
    for (int i = 0; i < rope.dims / 2; ++i) {
      const auto [a, b] = rope_pair(rope, i);
      const RopeAngle turn = rope_angle(rope, position, i);
      const S cos = static_cast<S>(turn.cos), sin = static_cast<S>(back ? -turn.sin : turn.sin);
      out(r, a) = x(r, a) * cos - x(r, b) * sin;
      out(r, b) = x(r, a) * sin + x(r, b) * cos;
    }
  }
  return out;
}

/// RoPE as the problem applies it to one head's queries or keys: the whole row, or with
/// differential attention each half as a head of d_k/2 features.
template <typename S>
Mat<S> rotate_head(const Mat<S>& x, const Rope& rope, bool halves, const std::vector<double>& positions, size_t first,
                   bool back = false) {
  if (!halves) return rotate<S>(x, rope, positions, first, back);
  const Eigen::Index half = x.cols() / 2;
  Mat<S> out(x.rows(), x.cols());
  out.leftCols(half) = rotate<S>(Mat<S>(x.leftCols(half)), rope, positions, first, back);
  out.rightCols(half) = rotate<S>(Mat<S>(x.rightCols(half)), rope, positions, first, back);
  return out;
}

/// QK-norm of each row of `x` with gains `g`: (x − mean)/√(var + eps)·g or x/√(mean(x²) + eps)·g.
template <typename S>
Mat<S> qk_normalize(const Mat<S>& x, bool layer, double eps, const std::vector<double>& g) {
  Mat<S> out(x.rows(), x.cols());
  for (Eigen::Index r = 0; r < x.rows(); ++r) {
    const RowNorm norm = row_norm<S>(x.row(r), layer, eps);
    const S mean = static_cast<S>(norm.mean), divisor = static_cast<S>(norm.divisor);
    for (Eigen::Index k = 0; k < x.cols(); ++k) {
      out(r, k) = (x(r, k) - mean) / divisor * static_cast<S>(g[static_cast<size_t>(k)]);
    }
  }
  return out;
}

/// The logistic sigmoid 1 / (1 + e^-x), 0 at -inf.
template <typename S>
S sigmoid(S x) {
  return S(1) / (S(1) + std::exp(-x));
}

/// Differential attention's logits of half `half` (0 or 1) of head h: Q_k K_kᵀ scaled, soft-capped,
/// ALiBi's bias and the mask added (or the fill), in double (explain() reads them) (attention.cpp).
Matrix differential_logits(const Normalized& n, const Matrix& Qh, const Matrix& Kh, int half, int h);

/// The rows of the rope_angles step: every position a query or key sits at, in increasing
/// order, once each (with cos/sin tables, those the tables hold a row for) (attention.cpp).
std::vector<double> rope_positions(const Normalized& n);

/// Row `position` of the rope_angles step: the angle of each pair, position·θ_i, or
/// atan2(sin, cos) of the tables' entries (attention.cpp).
double rope_table_angle(const Rope& rope, double position, int i);

/// Every mask component (causal, window, sink tokens, the user's mask) combined, L×S in the
/// rows layout (attention.cpp).
struct Mask {
  Matrix additive;      ///< 0 where kept, -inf where hidden; the user's numbers of an additive mask
  Matrix hidden_by;     ///< per entry the MaskComponent bits that hid it (or kept it as a sink)
  bool boolean = true;  ///< no additive user mask: the mask step is a keep-mask of 1 and 0
  bool hidden(Eigen::Index i, Eigen::Index j) const { return (static_cast<int>(hidden_by(i, j)) & ~kKeptBySink) != 0; }
};
Mask combined_mask(const Normalized& n);

/// ALiBi's bias of a head of slope `slope`, L×S in the rows layout (attention.cpp).
Matrix alibi_bias(const Normalized& n, double slope);

/// Differential attention's backward pass through one half's softmax (gradients.cpp, and the
/// worked calculations of dQ and dK, explain_gradients.cpp): from A_k and dA_k (dA, or −λ·dA),
/// dS_k = A_k ∘ (dA_k − rowsum(dA_k ∘ A_k)), 0 where `mask` hides a key, times softcap's slope
/// 1 − tanh²(Q_k K_kᵀ·s / c) when soft-capped, times the scale s: the gradient of Q_k K_kᵀ.
template <typename S>
Mat<S> differential_half_back(const Normalized& n, const Mat<S>& A, const Mat<S>& dA, const Mat<S>& Qk,
                              const Mat<S>& Kk, const Mask* mask, S scale) {
  Mat<S> d = A.cwiseProduct(dA);
  const Mat<S> row_sums = d.rowwise().sum();
  d -= A.cwiseProduct(row_sums.replicate(1, A.cols()));
  if (mask) {
    for (Eigen::Index i = 0; i < d.rows(); ++i) {
      for (Eigen::Index j = 0; j < d.cols(); ++j) {
        if (mask->hidden(i, j)) d(i, j) = 0;
      }
    }
  }
  const S cap = static_cast<S>(n.options.softcap);
  if (cap > 0) {
    const Mat<S> tanh = (Mat<S>(Qk * Kk.transpose() * scale).array() / cap).tanh().matrix();
    d = d.cwiseProduct(Mat<S>::Ones(d.rows(), d.cols()) - tanh.cwiseProduct(tanh));
  }
  return d * scale;
}

}  // namespace attn
