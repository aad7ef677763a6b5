// Scaled dot-product attention with every intermediate kept.
//
// Internally everything is computed in the rows layout (tokens as rows). A problem in the
// columns layout (UDL book: Q = Ω_Q X + β_Q) is transposed on the way in (validate.cpp) and
// every step is transposed back on the way out, so both layouts share one code path and give
// the same numbers. Each step is described by the step catalogue (steps.cpp) as it is emitted.
#include "attention.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <utility>

#include "normalized.h"
#include "steps.h"

namespace attn {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

/// Row-wise softmax that never produces NaN: the row max is subtracted, -inf entries get
/// weight 0, a row with only -inf gets all zeros (listed in `fully_masked`; NaN when
/// `nan_when_fully_masked`, as a plain softmax gives), and a row holding +inf (overflowed
/// scores) shares the weight among its +inf entries, the limit of the maths.
/// `log_sum_exp` gets, per row, log Σ_j e^(x_j) (in double), which the entropy reads instead of
/// taking a log per weight; NaN for rows with no such number (fully masked, or +inf logits).
template <typename S>
Mat<S> softmax_rows(const Mat<S>& logits, std::vector<int>& fully_masked, Vector& log_sum_exp,
                    bool nan_when_fully_masked) {
  Mat<S> weights(logits.rows(), logits.cols());
  log_sum_exp = Vector::Constant(logits.rows(), std::numeric_limits<double>::quiet_NaN());
  for (Eigen::Index i = 0; i < logits.rows(); ++i) {
    const auto row = logits.row(i);
    const S max = row.maxCoeff();
    auto out = weights.row(i);
    if (max == -std::numeric_limits<S>::infinity()) {
      if (nan_when_fully_masked) {
        out.setConstant(std::numeric_limits<S>::quiet_NaN());
      } else {
        out.setZero();
      }
      fully_masked.push_back(static_cast<int>(i));
      continue;
    }
    if (max == std::numeric_limits<S>::infinity()) {
      const S count = static_cast<S>((row.array() == max).count());
      for (Eigen::Index j = 0; j < row.size(); ++j) out[j] = row[j] == max ? S(1) / count : S(0);
      continue;
    }
    S sum = 0;
    for (Eigen::Index j = 0; j < row.size(); ++j) {
      out[j] = std::exp(row[j] - max);
      sum += out[j];
    }
    const S log_sum = std::log(sum);
    log_sum_exp[i] = static_cast<double>(max) + static_cast<double>(log_sum);
    if constexpr (sizeof(S) == 8) {
      // float64: e^(x - max) / Σ, numpy's way, one exp per weight.
      out /= sum;
    } else {
      // float32, for logits of moderate size: exp(x - logsumexp(x)) as scipy.special.softmax
      // computes it, so float32 rounds like the notebooks built on scipy (seed 003). logsumexp
      // = max + log Σ rounds to a unit of max, so for large logits (1.5e6) that error would
      // swamp the weights: there the shifted form exp((x - max) - log Σ) is used.
      const S lse = log_sum + max;
      const bool scipy_form = std::abs(max) <= S(16);
      for (Eigen::Index j = 0; j < row.size(); ++j) {
        out[j] = scipy_form ? std::exp(row[j] - lse) : std::exp((row[j] - max) - log_sum);
      }
    }
  }
  return weights;
}

/// The softmax with a sink logit (gpt-oss): softmax over [logits, sink] with the sink's column
/// dropped, so each row sums to 1 - sink_share. The sink counts in the max, so a fully masked
/// row gives its whole weight to the sink (zeros, never NaN). `log_sum_exp` includes the sink.
template <typename S>
Mat<S> softmax_rows_with_sink(const Mat<S>& logits, S sink, std::vector<int>& fully_masked, Vector& log_sum_exp,
                              Vector& sink_share) {
  Mat<S> weights(logits.rows(), logits.cols());
  log_sum_exp = Vector::Constant(logits.rows(), std::numeric_limits<double>::quiet_NaN());
  sink_share = Vector::Zero(logits.rows());
  for (Eigen::Index i = 0; i < logits.rows(); ++i) {
    const auto row = logits.row(i);
    const S row_max = row.maxCoeff();
    auto out = weights.row(i);
    if (row_max == -std::numeric_limits<S>::infinity()) fully_masked.push_back(static_cast<int>(i));
    if (row_max == std::numeric_limits<S>::infinity()) {  // overflowed scores outweigh the sink
      const S count = static_cast<S>((row.array() == row_max).count());
      for (Eigen::Index j = 0; j < row.size(); ++j) out[j] = row[j] == row_max ? S(1) / count : S(0);
      continue;
    }
    const S max = std::max(row_max, sink);
    const S sink_exp = std::exp(sink - max);
    S sum = sink_exp;
    for (Eigen::Index j = 0; j < row.size(); ++j) {
      out[j] = std::exp(row[j] - max);
      sum += out[j];
    }
    out /= sum;
    log_sum_exp[i] = static_cast<double>(max) + static_cast<double>(std::log(sum));
    sink_share[i] = static_cast<double>(sink_exp / sum);
  }
  return weights;
}

/// Finite inputs can still overflow: inf - inf inside QKᵀ, or 0 · inf. A NaN logit has no
/// meaningful weight, so refuse with the position instead of returning NaN weights.
template <typename S>
void check_no_nan(const Mat<S>& logits, int head, const Normalized& n) {
  if (!logits.hasNaN()) return;
  for (Eigen::Index i = 0; i < logits.rows(); ++i) {
    for (Eigen::Index j = 0; j < logits.cols(); ++j) {
      if (!std::isnan(logits(i, j))) continue;
      const Eigen::Index r = n.columns ? j : i, c = n.columns ? i : j;
      throw input_error(ErrorPlace(), "scores-nan",
                        {{"precision", sizeof(S) == 4 ? "float32" : "float64"},
                         {"row", std::to_string(r + 1)},
                         {"column", std::to_string(c + 1)},
                         {"head", n.heads > 1 ? std::to_string(head + 1) : "none"}});
    }
  }
}

double variance(const Matrix& m) {
  const double mean = m.mean();
  return (m.array() - mean).square().mean();
}

// The trace's products. In WebAssembly Eigen's blocked GEMM adds kilobytes of code per type and
// layout to the download without a SIMD gain (Eigen 3.4 has no wasm backend), so there c = a·b
// is computed as rows of b scaled and added, c.row(i) += a(i,k)·b.row(k): contiguous loops that
// LLVM vectorises for SIMD128, summing over k in the order of a plain dot product.
#ifdef __EMSCRIPTEN__
template <typename S>
Mat<S> product_rows(const Eigen::Ref<const Mat<S>>& a, const Eigen::Ref<const Mat<S>>& b) {
  Mat<S> c = Mat<S>::Zero(a.rows(), b.cols());
  const Eigen::Index n = b.cols();
  for (Eigen::Index i = 0; i < a.rows(); ++i) {
    S* ci = c.data() + i * n;
    for (Eigen::Index k = 0; k < a.cols(); ++k) {
      const S x = a(i, k);
      const S* bk = b.data() + k * b.outerStride();
      for (Eigen::Index j = 0; j < n; ++j) ci[j] += x * bk[j];
    }
  }
  return c;
}
#endif

template <typename A, typename B>
auto product(const A& a, const B& b) {
#ifdef __EMSCRIPTEN__
  using S = typename A::Scalar;
  return product_rows<S>(a, b);
#else
  return a * b;
#endif
}

template <typename S>
Mat<S> project(const Mat<S>& in, const Matrix& W, const std::optional<Vector>& b) {
  Mat<S> out = product(in, W.cast<S>());
  if (b) out.rowwise() += b->cast<S>().transpose();
  return out;
}

/// The original Transformer's position encoding ("Attention Is All You Need", §3.5) of tokens
/// at `positions`, d_model features wide: sin of the angle in even features, cos in odd ones.
Matrix sinusoidal_encoding(const std::vector<double>& positions, Eigen::Index d_model) {
  Matrix pe(static_cast<Eigen::Index>(positions.size()), d_model);
  for (Eigen::Index i = 0; i < pe.rows(); ++i) {
    for (Eigen::Index f = 0; f < d_model; ++f) {
      const double angle = sinusoid_angle(positions[static_cast<size_t>(i)], f, d_model);
      pe(i, f) = f % 2 == 0 ? std::sin(angle) : std::cos(angle);
    }
  }
  return pe;
}

/// How far RoPE's relative-position check moves every token (HeadFacts::rope_shift).
constexpr double kRopeShift = 100;

/// Appends the steps of a trace, each described by the step catalogue as it is emitted.
class StepWriter {
 public:
  StepWriter(Trace& t, const Normalized& n) : t_(t), n_(n) {}

  /// Appends a step computed from the steps `inputs` (indices into the trace's steps), given in
  /// the rows layout. Returns its index.
  ATTN_NOINLINE int operator()(const char* id, int head, const Matrix& rows_layout, std::vector<int> inputs) const {
    Step s;
    s.id = id;
    s.head = head;
    s.values = n_.columns ? Matrix(rows_layout.transpose()) : rows_layout;
    s.inputs = std::move(inputs);
    describe(s, t_.steps, n_);
    t_.steps.push_back(std::move(s));
    return static_cast<int>(t_.steps.size()) - 1;
  }

 private:
  Trace& t_;
  const Normalized& n_;
};

/// What every head of a trace shares: the scale, the softcap, the mask and the softmax's rule,
/// in the working precision.
template <typename S>
struct Settings {
  ScaleRule<S> scale;  ///< logits = scores / scale.by, or scores · scale.by (scale.h)
  S cap = 0;           ///< the softcap (0: off)
  bool has_mask = false;
  Mask combined;
  Mat<S> mask;
  Matrix mask_values;  ///< the mask step's numbers: 1 keeps and 0 hides, or the additive mask
  /// A finite mask_fill replaces hidden scores (masked_fill), as many codebases write -1e9.
  bool finite_fill = false;
  S fill = 0;
  bool nan_when_fully_masked = false;
};

/// The problem's options as every head applies them.
template <typename S>
ATTN_NOINLINE Settings<S> settings_of(const Normalized& n) {
  Settings<S> s;
  // Differential attention's scores are over d_k/2 features: √(d_k/2).
  s.scale = scale_rule<S>(n.options.scale, n.lambdas.empty() ? n.d_k : n.d_k / 2);
  s.cap = static_cast<S>(n.options.softcap);
  s.has_mask = n.has_mask();
  if (s.has_mask) {
    s.combined = combined_mask(n);
    const Mask& combined = s.combined;
    s.mask = combined.additive.cast<S>();
    s.mask_values = combined.boolean ? Matrix((combined.additive.array() == 0).cast<double>())
                                     : Matrix(s.mask.template cast<double>());
  }
  s.finite_fill = std::isfinite(n.options.mask_fill);
  s.fill = static_cast<S>(n.options.mask_fill);
  s.nan_when_fully_masked = n.options.fully_masked == FullyMasked::NaN;
  return s;
}

/// Q, K and V before they are split into heads, and the steps they were computed from.
template <typename S>
struct Projected {
  Mat<S> Q, K, V;
  std::vector<int> x_step;       ///< the step Q is projected from (none: X itself)
  std::vector<int> kv_step;      ///< the step K and V are projected from
  std::vector<int> angles_step;  ///< RoPE's angles (none without RoPE)
  Mat<S> G;                      ///< the output gate σ(X·W_G + b_G), every head's (empty without W_G)
};

/// A position encoding added to X before the projections: X' = X + PE (or + P). Returns the
/// step of X'.
template <typename S>
ATTN_NOINLINE int add_positions(const Normalized& n, const StepWriter& emit, Mat<S>& X) {
  const Mat<S> encoding = n.options.positional == Positional::Sinusoidal
                              ? Mat<S>(sinusoidal_encoding(n.query_pos, n.X.cols()).cast<S>())
                              : Mat<S>(n.P->cast<S>());
  const int encoding_step = emit("positional", -1, encoding.template cast<double>(), {});
  X += encoding;
  return emit("X_pos", -1, X.template cast<double>(), {encoding_step});
}

/// RoPE's angles, one row per position, one column per pair: what Q_rot and K_rot turn by.
/// Returns their step.
template <typename S>
ATTN_NOINLINE int add_rope_angles(const Normalized& n, const StepWriter& emit, Trace& t) {
  const std::vector<double> positions = rope_positions(n);
  t.rope_positions = Eigen::Map<const Vector>(positions.data(), static_cast<Eigen::Index>(positions.size()));
  // Taken in double, as rotate() takes them, and shown in the working precision.
  Mat<S> angles(static_cast<Eigen::Index>(positions.size()), n.options.rope.dims / 2);
  for (Eigen::Index p = 0; p < angles.rows(); ++p) {
    for (int i = 0; i < n.options.rope.dims / 2; ++i) {
      angles(p, i) = static_cast<S>(rope_table_angle(n.options.rope, positions[static_cast<size_t>(p)], i));
    }
  }
  return emit("rope_angles", -1, angles.template cast<double>(), {});
}

/// Q, K and V as given, or projected from X (with its positions) and X_kv.
template <typename S>
ATTN_NOINLINE Projected<S> project_inputs(const Normalized& n, const StepWriter& emit, Trace& t) {
  Projected<S> p;
  Mat<S> X = n.direct ? Mat<S>() : Mat<S>(n.X.cast<S>());
  if (n.options.positional != Positional::None) p.x_step = {add_positions<S>(n, emit, X)};
  if (n.options.rope.on) p.angles_step = {add_rope_angles<S>(n, emit, t)};
  const Mat<S> X_kv = n.cross ? Mat<S>(n.X_kv.cast<S>()) : X;
  p.kv_step = n.cross ? std::vector<int>{} : p.x_step;
  p.Q = n.direct ? Mat<S>(n.Q.cast<S>()) : project<S>(X, n.W_Q, n.b_Q);
  p.K = n.direct ? Mat<S>(n.K.cast<S>()) : project<S>(X_kv, n.W_K, n.b_K);
  p.V = n.direct ? Mat<S>(n.V.cast<S>()) : project<S>(X_kv, n.W_V, n.b_V);
  if (n.W_G) p.G = project<S>(X, *n.W_G, n.b_G).unaryExpr([](S x) { return sigmoid<S>(x); });
  return p;
}

/// One head's queries, keys and values as its scores and weights·V read them, and their steps.
template <typename S>
struct HeadInputs {
  Mat<S> Q, K, V;
  int q_step = 0, k_step = 0, v_step = 0;
  /// QK-norm: the queries and keys as the scores would read them without the norm.
  Mat<S> Q_raw, K_raw;
};

/// Head h's slices of Q, K and V, turned by RoPE and with the cache's rows before the new ones.
template <typename S>
ATTN_NOINLINE HeadInputs<S> head_inputs(const Normalized& n, const Projected<S>& p, const StepWriter& emit, int h) {
  const int g = n.kv_group(h);
  HeadInputs<S> in;
  in.Q = p.Q.middleCols(h * n.d_k, n.d_k);
  in.K = p.K.middleCols(g * n.d_k, n.d_k);
  in.V = p.V.middleCols(g * n.d_v, n.d_v);
  in.q_step = emit("Q", h, in.Q.template cast<double>(), p.x_step);
  in.k_step = emit("K", h, in.K.template cast<double>(), p.kv_step);
  in.v_step = emit("V", h, in.V.template cast<double>(), p.kv_step);
  const QkNorm& qk_norm = n.options.qk_norm;
  if (qk_norm.on) {  // each row's d_k features, Q and the new keys separately
    in.Q_raw = in.Q;
    in.K_raw = in.K;
    const bool layer = qk_norm.type == QkNorm::Type::Layer;
    in.Q = qk_normalize<S>(in.Q, layer, qk_norm.eps, n.g_q);
    in.q_step = emit("Q_normed", h, in.Q.template cast<double>(), {in.q_step});
    in.K = qk_normalize<S>(in.K, layer, qk_norm.eps, n.g_k);
    in.k_step = emit("K_normed", h, in.K.template cast<double>(), {in.k_step});
  }
  const Rope& rope = n.options.rope;
  const bool halves = !n.lambdas.empty();
  if (rope.on) {  // queries at their positions, new keys at theirs (after the cached ones)
    in.Q = rotate_head<S>(in.Q, rope, halves, n.query_pos, 0);
    in.q_step = emit("Q_rot", h, in.Q.template cast<double>(), {in.q_step, p.angles_step[0]});
    in.K = rotate_head<S>(in.K, rope, halves, n.key_pos, static_cast<size_t>(n.past));
    in.k_step = emit("K_rot", h, in.K.template cast<double>(), {in.k_step, p.angles_step[0]});
    if (qk_norm.on) {
      in.Q_raw = rotate_head<S>(in.Q_raw, rope, halves, n.query_pos, 0);
      in.K_raw = rotate_head<S>(in.K_raw, rope, halves, n.key_pos, static_cast<size_t>(n.past));
    }
  }
  if (n.past > 0) {  // the cache's rows of this key/value head, then the new rows
    Mat<S> keys(n.S, n.d_k), values(n.S, n.d_v);
    keys << n.past_K.middleCols(g * n.d_k, n.d_k).cast<S>(), in.K;
    values << n.past_V.middleCols(g * n.d_v, n.d_v).cast<S>(), in.V;
    if (qk_norm.on) {  // the cache holds keys as it stores them, normalised
      Mat<S> raw(n.S, n.d_k);
      raw << n.past_K.middleCols(g * n.d_k, n.d_k).cast<S>(), in.K_raw;
      in.K_raw = std::move(raw);
    }
    in.K = std::move(keys);
    in.V = std::move(values);
    in.k_step = emit("K_cache", h, in.K.template cast<double>(), {in.k_step});
    in.v_step = emit("V_cache", h, in.V.template cast<double>(), {in.v_step});
  }
  return in;
}

/// RoPE's relative-position property: turning a rotated vector by s more positions is rotating
/// it at position + s, so the scores should not change. Sets facts.rope_shift(_change).
template <typename S>
ATTN_NOINLINE void check_rope_shift(const Normalized& n, const HeadInputs<S>& in, const Mat<S>& scores,
                                    HeadFacts& facts) {
  const Rope& rope = n.options.rope;
  facts.rope_shift = kRopeShift;
  const std::vector<double> shift(static_cast<size_t>(std::max(n.L, n.S)), kRopeShift);
  const Mat<S> shifted = product(rotate<S>(in.Q, rope, shift, 0), rotate<S>(in.K, rope, shift, 0).transpose());
  facts.rope_shift_change = (shifted - scores).template cast<double>().cwiseAbs().maxCoeff();
}

/// A head's logits and the step holding them: what the next step (and finally the softmax) reads.
template <typename S>
struct Logits {
  Mat<S> values;
  int step = 0;
};

/// ALiBi's bias added to the logits.
template <typename S>
ATTN_NOINLINE void add_alibi(const Normalized& n, const StepWriter& emit, int h, Logits<S>& logits, HeadFacts& facts) {
  facts.alibi_slope = n.alibi_slopes[static_cast<size_t>(h)];
  const Mat<S> bias = alibi_bias(n, facts.alibi_slope).cast<S>();
  const int bias_step = emit("alibi", h, bias.template cast<double>(), {});
  logits.values += bias;
  logits.step = emit("biased", h, logits.values.template cast<double>(), {logits.step, bias_step});
}

/// The mask applied to the logits: -inf added where it hides (or mask_fill written there).
template <typename S>
ATTN_NOINLINE void apply_mask(const Normalized& n, const Settings<S>& set, const StepWriter& emit, int h,
                              Logits<S>& logits, HeadFacts& facts) {
  const int mask_step = emit("mask", h, set.mask_values, {});
  logits.values += set.mask;
  if (set.finite_fill) {
    for (Eigen::Index i = 0; i < n.L; ++i) {
      for (Eigen::Index j = 0; j < n.S; ++j) {
        if (set.combined.hidden(i, j)) logits.values(i, j) = set.fill;
      }
    }
  }
  logits.step = emit("masked", h, logits.values.template cast<double>(), {logits.step, mask_step});
  facts.hidden_by = n.columns ? Matrix(set.combined.hidden_by.transpose()) : set.combined.hidden_by;
}

/// The scores (step `scores_step`) scaled, then softcapped, biased and masked as the problem asks.
template <typename S>
ATTN_NOINLINE Logits<S> scores_to_logits(const Normalized& n, const Settings<S>& set, const StepWriter& emit,
                                         const Mat<S>& scores, int scores_step, int h, HeadFacts& facts) {
  Logits<S> logits;
  logits.values = set.scale.divide ? Mat<S>(scores / set.scale.by) : Mat<S>(scores * set.scale.by);
  facts.scores_variance = variance(scores.template cast<double>());
  facts.scaled_variance = variance(logits.values.template cast<double>());
  logits.step = emit("scaled", h, logits.values.template cast<double>(), {scores_step});
  if (set.cap > 0) {
    logits.values = (set.cap * (logits.values.array() / set.cap).tanh()).matrix();
    logits.step = emit("softcapped", h, logits.values.template cast<double>(), {logits.step});
  }
  if (!n.alibi_slopes.empty()) add_alibi<S>(n, emit, h, logits, facts);
  if (set.has_mask) apply_mask<S>(n, set, emit, h, logits, facts);
  return logits;
}

/// QKᵀ, scaled, then softcapped, biased and masked as the problem asks.
template <typename S>
ATTN_NOINLINE Logits<S> head_logits(const Normalized& n, const Settings<S>& set, const StepWriter& emit,
                                    const HeadInputs<S>& in, int h, HeadFacts& facts) {
  const Mat<S> scores = product(in.Q, in.K.transpose());
  const int scores_step = emit("scores", h, scores.template cast<double>(), {in.q_step, in.k_step});
  if (n.options.rope.on && !n.options.rope.cos) check_rope_shift<S>(n, in, scores, facts);
  return scores_to_logits<S>(n, set, emit, scores, scores_step, h, facts);
}

/// Multi-head latent attention's steps every head shares: RoPE's angles, c_KV (cached rows, then
/// X·W_DKV), k_R (cached rows, then RoPE(X·W_KR)) and c_Q = X·W_DQ.
template <typename S>
struct Latent {
  Mat<S> X, c_KV, k_R, c_Q;
  int angles_step = -1, c_kv_step = -1, k_r_step = -1, c_q_step = -1;
  std::vector<Mat<S>> o_latent;  ///< each head's A·c_KV (the absorbed form's head output)
  std::vector<int> o_latent_steps;
};

/// Rows `past` (cached) stacked over `fresh`.
template <typename S>
Mat<S> stacked(const Matrix& past, const Mat<S>& fresh) {
  if (past.rows() == 0) return fresh;
  Mat<S> out(past.rows() + fresh.rows(), fresh.cols());
  out << past.cast<S>(), fresh;
  return out;
}

template <typename S>
ATTN_NOINLINE Latent<S> latent_shared(const Normalized& n, const StepWriter& emit, Trace& t) {
  Latent<S> l;
  l.X = n.X.cast<S>();
  if (n.d_r > 0) l.angles_step = add_rope_angles<S>(n, emit, t);
  l.c_KV = stacked<S>(n.past_c_KV, product(l.X, n.W_DKV.cast<S>()));
  l.c_kv_step = emit("c_KV", -1, l.c_KV.template cast<double>(), {});
  if (n.d_r > 0) {
    const Mat<S> fresh =
        rotate<S>(product(l.X, n.W_KR.cast<S>()), n.options.rope, n.key_pos, static_cast<size_t>(n.past));
    l.k_R = stacked<S>(n.past_k_R, fresh);
    l.k_r_step = emit("k_R", -1, l.k_R.template cast<double>(), {l.angles_step});
  }
  if (n.W_DQ) {
    l.c_Q = product(l.X, n.W_DQ->cast<S>());
    l.c_q_step = emit("c_Q", -1, l.c_Q.template cast<double>(), {});
  }
  return l;
}

/// A latent head's scores: K_C, V, Q_C, q_R, then S_C = Q_C·K_Cᵀ and S_R = q_R·k_Rᵀ and their sum
/// (without a rotary part, the scores are Q_C·K_Cᵀ). Returns the head's values in `in`.
template <typename S>
struct LatentScores {
  Mat<S> scores, Q_C;
  int scores_step = 0, q_c_step = 0;
};

template <typename S>
ATTN_NOINLINE LatentScores<S> latent_scores(const Normalized& n, const Latent<S>& l, const StepWriter& emit, int h,
                                            HeadInputs<S>& in) {
  LatentScores<S> out;
  const Mat<S> K_C = product(l.c_KV, Mat<S>(n.W_UK.middleCols(h * n.d_h, n.d_h).cast<S>()));
  const int k_c_step = emit("K_C", h, K_C.template cast<double>(), {l.c_kv_step});
  in.V = product(l.c_KV, Mat<S>(n.W_UV.middleCols(h * n.d_v, n.d_v).cast<S>()));
  in.v_step = emit("V", h, in.V.template cast<double>(), {l.c_kv_step});
  if (n.W_DQ) {
    out.Q_C = product(l.c_Q, Mat<S>(n.W_UQ->middleCols(h * n.d_h, n.d_h).cast<S>()));
    out.q_c_step = emit("Q_C", h, out.Q_C.template cast<double>(), {l.c_q_step});
  } else {
    out.Q_C = product(l.X, Mat<S>(n.W_Q.middleCols(h * n.d_h, n.d_h).cast<S>()));
    out.q_c_step = emit("Q_C", h, out.Q_C.template cast<double>(), {});
  }
  const Mat<S> content = product(out.Q_C, K_C.transpose());
  if (n.d_r == 0) {
    out.scores = content;
    out.scores_step = emit("scores", h, content.template cast<double>(), {out.q_c_step, k_c_step});
    return out;
  }
  const Mat<S>& reads = n.qr_from_cq ? l.c_Q : l.X;
  const Mat<S> q_R =
      rotate<S>(product(reads, Mat<S>(n.W_QR.middleCols(h * n.d_r, n.d_r).cast<S>())), n.options.rope, n.query_pos, 0);
  const int q_r_step =
      emit("q_R", h, q_R.template cast<double>(),
           n.qr_from_cq ? std::vector<int>{l.c_q_step, l.angles_step} : std::vector<int>{l.angles_step});
  const int content_step = emit("scores_C", h, content.template cast<double>(), {out.q_c_step, k_c_step});
  const Mat<S> rotary = product(q_R, l.k_R.transpose());
  const int rotary_step = emit("scores_R", h, rotary.template cast<double>(), {q_r_step, l.k_r_step});
  out.scores = content + rotary;
  out.scores_step = emit("scores", h, out.scores.template cast<double>(), {content_step, rotary_step});
  return out;
}

/// The absorbed form of a head: W_UK folded into the query (Q̂_C = Q_C·W_UKᵀ, read against c_KV
/// itself) and the head's output kept in the latent (Ô = A·c_KV), W_UV being folded into W_O.
template <typename S>
ATTN_NOINLINE void latent_absorbed(const Normalized& n, Latent<S>& l, const StepWriter& emit, int h,
                                   const LatentScores<S>& ls, const Mat<S>& weights, int weights_step) {
  const Mat<S> q_hat = product(ls.Q_C, Mat<S>(n.W_UK.middleCols(h * n.d_h, n.d_h).transpose().cast<S>()));
  const int q_hat_step = emit("Q_absorbed", h, q_hat.template cast<double>(), {ls.q_c_step});
  const Mat<S> scores = product(q_hat, l.c_KV.transpose());
  emit("scores_C_absorbed", h, scores.template cast<double>(), {q_hat_step, l.c_kv_step});
  l.o_latent.push_back(product(weights, l.c_KV));
  l.o_latent_steps.push_back(
      emit("O_latent", h, l.o_latent.back().template cast<double>(), {weights_step, l.c_kv_step}));
}

/// The output in the absorbed form, Σ_h Ô⁽ʰ⁾·(W_UV⁽ʰ⁾·W_O⁽ʰ⁾) (+ b_O), or [Ô⁽ʰ⁾·W_UV⁽ʰ⁾]_h without W_O;
/// then the numbers each form of attention caches per token at this problem's sizes.
template <typename S>
ATTN_NOINLINE void latent_output(const Normalized& n, const Latent<S>& l, const StepWriter& emit, Eigen::Index width) {
  Mat<S> out = Mat<S>::Zero(n.L, width);
  for (int h = 0; h < n.heads; ++h) {
    const Mat<S> W_UV = n.W_UV.middleCols(h * n.d_v, n.d_v).cast<S>();
    const Mat<S>& o = l.o_latent[static_cast<size_t>(h)];
    if (n.W_O) {
      const Mat<S> folded = product(W_UV, Mat<S>(n.W_O->middleRows(h * n.d_v, n.d_v).cast<S>()));
      out += product(o, folded);
    } else {
      out.middleCols(h * n.d_v, n.d_v) = product(o, W_UV);
    }
  }
  if (n.b_O) out.rowwise() += n.b_O->cast<S>().transpose();
  emit("output_absorbed", -1, out.template cast<double>(), l.o_latent_steps);
  emit("cache_sizes", -1, latent_cache_sizes(n), {});
}

/// With a finite fill the softmax sees no -inf: a row is fully masked when the mask hides all
/// its keys. Adds those rows to facts.fully_masked (sorted, once each).
template <typename S>
ATTN_NOINLINE void add_rows_hidden_by_fill(const Normalized& n, const Settings<S>& set, HeadFacts& facts) {
  for (Eigen::Index i = 0; i < n.L; ++i) {
    bool all_hidden = true;
    for (Eigen::Index j = 0; j < n.S && all_hidden; ++j) all_hidden = set.combined.hidden(i, j);
    if (all_hidden) facts.fully_masked.push_back(static_cast<int>(i));
  }
  std::sort(facts.fully_masked.begin(), facts.fully_masked.end());
  facts.fully_masked.erase(std::unique(facts.fully_masked.begin(), facts.fully_masked.end()), facts.fully_masked.end());
}

/// A finite fill: the largest weight a hidden key keeps in a row that is not fully hidden.
struct Leak {
  double weight = 0;
  Eigen::Index row = 0, col = 0;
  int head = 0;
};

/// The weight each query gives its hidden keys (facts.hidden_weight), and the largest leak.
template <typename S>
ATTN_NOINLINE void note_hidden_weight(const Normalized& n, const Settings<S>& set, const Mat<S>& weights, int h,
                                      HeadFacts& facts, Leak& leak) {
  facts.hidden_weight = Vector::Zero(n.L);
  for (Eigen::Index i = 0; i < n.L; ++i) {
    const bool fully = std::binary_search(facts.fully_masked.begin(), facts.fully_masked.end(), static_cast<int>(i));
    for (Eigen::Index j = 0; j < n.S; ++j) {
      if (!set.combined.hidden(i, j)) continue;
      const double w = static_cast<double>(weights(i, j));
      facts.hidden_weight[i] += w;
      if (!fully && w > leak.weight) leak = Leak{w, i, j, h};
    }
  }
}

/// Per query: Σ w, max w and the entropy -Σ w log w, in one pass. log w is taken as
/// x - logsumexp(x), not a log per weight (in wasm the logs cost as much as the rest of a
/// small trace); rows of tied +inf logits take the logs.
template <typename S>
ATTN_NOINLINE void note_weight_rows(const Mat<S>& weights, const Mat<S>& logits, const Vector& log_sum_exp,
                                    HeadFacts& facts) {
  const Eigen::Index queries = weights.rows(), keys = weights.cols();
  facts.weight_sums = Vector::Zero(queries);
  facts.max_weight = Vector::Zero(queries);
  facts.entropy = Vector::Zero(queries);
  for (Eigen::Index i = 0; i < queries; ++i) {
    const bool have_lse = !std::isnan(log_sum_exp[i]);
    double sum = 0, max = 0, entropy = 0;
    for (Eigen::Index j = 0; j < keys; ++j) {
      const double w = static_cast<double>(weights(i, j));
      sum += w;
      max = std::max(max, w);
      if (!(w > 0)) continue;
      entropy -= w * (have_lse ? static_cast<double>(logits(i, j)) - log_sum_exp[i] : std::log(w));
    }
    facts.weight_sums[i] = sum;
    facts.max_weight[i] = max;
    facts.entropy[i] = entropy;
  }
}

/// A head's weights (the softmax of its logits) and the step holding them.
template <typename S>
struct Weights {
  Mat<S> values;
  int step = 0;
};

/// The softmax of a head's logits (with its sink, when given), and what facts reads off the weights.
template <typename S>
ATTN_NOINLINE Weights<S> head_weights(const Normalized& n, const Settings<S>& set, const StepWriter& emit,
                                      const Logits<S>& logits, int h, HeadFacts& facts, Leak& leak) {
  Vector log_sum_exp;
  Weights<S> weights;
  if (n.sigmoid) {
    // σ(x + b) entry by entry; a hidden key gets 0 whatever mask_fill wrote there.
    const S b = static_cast<S>(n.sigmoid_bias);
    weights.values = logits.values.unaryExpr([b](S x) { return sigmoid<S>(x + b); });
    log_sum_exp = Vector::Constant(n.L, std::numeric_limits<double>::quiet_NaN());
    for (Eigen::Index i = 0; i < n.L; ++i) {
      bool all_hidden = true;
      for (Eigen::Index j = 0; j < n.S; ++j) {
        const bool hidden = set.has_mask && set.combined.hidden(i, j);
        if (hidden) weights.values(i, j) = 0;
        all_hidden = all_hidden && hidden;
      }
      if (all_hidden) facts.fully_masked.push_back(static_cast<int>(i));
    }
    weights.step = emit("weights", h, weights.values.template cast<double>(), {logits.step});
    note_weight_rows<S>(weights.values, logits.values, log_sum_exp, facts);
    if (set.has_mask) facts.hidden_weight = Vector::Zero(n.L);
    return weights;
  }
  if (!n.sink_logits.empty()) {
    facts.sink_logit = n.sink_logits[static_cast<size_t>(h)];
    weights.values = softmax_rows_with_sink<S>(logits.values, static_cast<S>(facts.sink_logit), facts.fully_masked,
                                               log_sum_exp, facts.sink_share);
  } else {
    weights.values = softmax_rows<S>(logits.values, facts.fully_masked, log_sum_exp, set.nan_when_fully_masked);
  }
  if (set.has_mask && set.finite_fill) add_rows_hidden_by_fill<S>(n, set, facts);
  weights.step = emit("weights", h, weights.values.template cast<double>(), {logits.step});
  if (set.has_mask) note_hidden_weight<S>(n, set, weights.values, h, facts, leak);
  note_weight_rows<S>(weights.values, logits.values, log_sum_exp, facts);
  return weights;
}

/// The trace's warnings: fully masked queries, the weight a finite fill leaks to hidden keys,
/// and outputs that overflowed.
template <typename S>
ATTN_NOINLINE void add_warnings(const Normalized& n, const Settings<S>& set, const Matrix& out,
                                const std::vector<int>& fully_masked_rows, const Leak& leak, Trace& t) {
  // The mask is shared by all heads, so a fully masked query is reported once.
  // The messages' parameter `axis`: "row", or "column" in the columns layout.
  const char* axis = n.columns ? "column" : "row";
  const std::string fill_text = format_number(n.options.mask_fill);
  for (int row : fully_masked_rows) {
    const std::string which = std::to_string(row + 1);
    if (set.finite_fill && !n.sigmoid) {
      t.warnings.push_back({"warning.fully_masked.fill", {{"axis", axis}, {"row", which}, {"fill", fill_text}}});
    } else if (!n.sink_logits.empty()) {
      t.warnings.push_back({"warning.fully_masked.sink", {{"axis", axis}, {"row", which}}});
    } else if (set.nan_when_fully_masked) {
      t.warnings.push_back({"warning.fully_masked.nan", {{"axis", axis}, {"row", which}}});
    } else {
      t.warnings.push_back({"warning.fully_masked", {{"axis", axis}, {"row", which}}});
    }
  }
  if (leak.weight > 0) {
    const Eigen::Index r = n.columns ? leak.col : leak.row, c = n.columns ? leak.row : leak.col;
    t.warnings.push_back({"warning.fill_leak",
                          {{"fill", fill_text},
                           {"weight", format_number(leak.weight)},
                           {"row", std::to_string(r + 1)},
                           {"column", std::to_string(c + 1)},
                           {"head", n.heads > 1 ? std::to_string(leak.head + 1) : "none"}}});
  }
  for (Eigen::Index i = 0; i < out.rows(); ++i) {
    // fully_masked "nan" asked for these rows to be NaN.
    if (set.nan_when_fully_masked &&
        std::binary_search(fully_masked_rows.begin(), fully_masked_rows.end(), static_cast<int>(i))) {
      continue;
    }
    if (!out.row(i).allFinite()) {
      t.warnings.push_back(
          {"warning.overflow",
           {{"axis", axis}, {"row", std::to_string(i + 1)}, {"precision", sizeof(S) == 4 ? "float32" : "float64"}}});
    }
  }
}

/// A head of linear attention: its output rows and the steps they are computed from.
template <typename S>
struct LinearHead {
  Mat<S> output;
  std::vector<int> inputs;  ///< linear_scores, V (and normalizer)
};

/// Linear attention (Katharopoulos et al., 2020) of one head: φ(Q), φ(K), the linear scores
/// Λ_ij = φ(q_i)·φ(k_j)·γ^(pos(i) − pos(j)) (0 where causal attention hides the key), their row
/// sums D (when normalized) and Λ·V / D. `zero_rows` collects (head, row) of a 0 normalizer.
template <typename S>
ATTN_NOINLINE LinearHead<S> linear_head(const Normalized& n, const StepWriter& emit, const HeadInputs<S>& in, int h,
                                        HeadFacts& facts, std::vector<std::pair<int, Eigen::Index>>& zero_rows) {
  const FeatureMap map = n.feature_map();
  const auto phi = [map](const Mat<S>& x) {
    return Mat<S>(x.unaryExpr([map](S v) { return static_cast<S>(feature_map_at(map, static_cast<double>(v))); }));
  };
  const Mat<S> phi_Q = phi(in.Q), phi_K = phi(in.K);
  const int q_step = emit("phi_Q", h, phi_Q.template cast<double>(), {in.q_step});
  const int k_step = emit("phi_K", h, phi_K.template cast<double>(), {in.k_step});
  Mat<S> scores = product(phi_Q, phi_K.transpose());
  if (n.options.causal) {
    for (Eigen::Index i = 0; i < n.L; ++i) {
      for (Eigen::Index j = 0; j < n.S; ++j) {
        const double factor = n.linear_factor(i, j);
        scores(i, j) = factor == 0 ? S(0) : scores(i, j) * static_cast<S>(factor);
      }
    }
  }
  const int scores_step = emit("linear_scores", h, scores.template cast<double>(), {q_step, k_step});
  LinearHead<S> head;
  head.output = product(scores, in.V);
  head.inputs = {scores_step, in.v_step};
  Vector sums = scores.template cast<double>().rowwise().sum();
  if (n.normalize()) {
    const Mat<S> normalizer = scores.rowwise().sum();
    head.inputs.push_back(emit("normalizer", h, normalizer.template cast<double>(), {scores_step}));
    for (Eigen::Index i = 0; i < n.L; ++i) {
      head.output.row(i) /= normalizer(i, 0);
      if (normalizer(i, 0) == S(0)) zero_rows.emplace_back(h, i);
    }
  }
  // What a query gives its keys, as the weights' facts say it: Λ's row over D (or Λ's row).
  facts.weight_sums = Vector::Zero(n.L);
  facts.max_weight = Vector::Zero(n.L);
  facts.entropy = Vector::Zero(n.L);
  for (Eigen::Index i = 0; i < n.L; ++i) {
    const double by = n.normalize() ? sums[i] : 1.0;
    facts.weight_sums[i] = sums[i] / by;
    facts.max_weight[i] = static_cast<double>(scores.row(i).maxCoeff()) / by;
  }
  return head;
}

/// Linear attention's warnings: a decay without causal, a normalizer of 0, an overflow.
template <typename S>
ATTN_NOINLINE void add_linear_warnings(const Normalized& n, const Matrix& out,
                                       const std::vector<std::pair<int, Eigen::Index>>& zero_rows, Trace& t) {
  if (!n.options.causal && n.options.decay && *n.options.decay != 1) {
    t.warnings.push_back({"warning.decay_ignored", {{"decay", format_number(*n.options.decay)}}});
  }
  std::vector<bool> explained(static_cast<size_t>(out.rows()), false);
  for (const auto& [h, i] : zero_rows) {
    explained[static_cast<size_t>(i)] = true;
    t.warnings.push_back({"warning.normalizer_zero",
                          {{"row", std::to_string(i + 1)}, {"head", n.heads > 1 ? std::to_string(h + 1) : "none"}}});
  }
  for (Eigen::Index i = 0; i < out.rows(); ++i) {
    if (explained[static_cast<size_t>(i)] || out.row(i).allFinite()) continue;
    t.warnings.push_back(
        {"warning.overflow",
         {{"axis", "row"}, {"row", std::to_string(i + 1)}, {"precision", sizeof(S) == 4 ? "float32" : "float64"}}});
  }
}

/// QK-norm's note: the largest score with the norm, and without it (the same queries and keys,
/// rotated and cached alike, never normalised).
template <typename S>
ATTN_NOINLINE void note_qk_norm(const HeadInputs<S>& in, HeadFacts& facts) {
  facts.max_score = static_cast<double>(product(in.Q, in.K.transpose()).maxCoeff());
  facts.max_score_without_norm = static_cast<double>(product(in.Q_raw, in.K_raw.transpose()).maxCoeff());
}

/// Differential attention's output norm: each row x / √(mean(x²) + 1e-5) · (1 − lambda_init).
template <typename S>
Mat<S> head_norm(const Mat<S>& x, double lambda_init) {
  Mat<S> out(x.rows(), x.cols());
  const S gain = static_cast<S>(1 - lambda_init);
  for (Eigen::Index r = 0; r < x.rows(); ++r) {
    const S divisor = static_cast<S>(row_norm<S>(x.row(r), false, 1e-5).divisor);
    out.row(r) = x.row(r) / divisor * gain;
  }
  return out;
}

/// Differential attention's logits of one half (see normalized.h), in the working precision.
template <typename S>
Mat<S> half_logits(const Normalized& n, const Settings<S>& set, const Mat<S>& Qh, const Mat<S>& Kh, int half,
                   const Mat<S>& alibi) {
  const Eigen::Index w = n.d_k / 2;
  const Mat<S> scores = product(Mat<S>(Qh.middleCols(half * w, w)), Mat<S>(Kh.middleCols(half * w, w).transpose()));
  Mat<S> logits = set.scale.divide ? Mat<S>(scores / set.scale.by) : Mat<S>(scores * set.scale.by);
  if (set.cap > 0) logits = (set.cap * (logits.array() / set.cap).tanh()).matrix();
  if (alibi.size() > 0) logits += alibi;
  if (set.has_mask) {
    logits += set.mask;
    if (set.finite_fill) {
      for (Eigen::Index i = 0; i < n.L; ++i) {
        for (Eigen::Index j = 0; j < n.S; ++j) {
          if (set.combined.hidden(i, j)) logits(i, j) = set.fill;
        }
      }
    }
  }
  return logits;
}

/// Differential attention's weights of a head: A₁ and A₂ (the softmaxes of the halves, with the
/// head's ALiBi bias and the mask), then A₁ − λA₂.
template <typename S>
ATTN_NOINLINE Weights<S> differential_weights(const Normalized& n, const Settings<S>& set, const StepWriter& emit,
                                              const HeadInputs<S>& in, int h, HeadFacts& facts) {
  std::vector<int> inputs = {in.q_step, in.k_step};
  Mat<S> alibi;
  if (!n.alibi_slopes.empty()) {
    facts.alibi_slope = n.alibi_slopes[static_cast<size_t>(h)];
    alibi = alibi_bias(n, facts.alibi_slope).cast<S>();
    inputs.push_back(emit("alibi", h, alibi.template cast<double>(), {}));
  }
  if (set.has_mask) {
    inputs.push_back(emit("mask", h, set.mask_values, {}));
    facts.hidden_by = set.combined.hidden_by;
  }
  facts.lambda = n.lambdas[static_cast<size_t>(h)];
  Mat<S> parts[2];
  int steps[2];
  Vector log_sum_exp;
  for (int half = 0; half < 2; ++half) {
    const Mat<S> logits = half_logits<S>(n, set, in.Q, in.K, half, alibi);
    check_no_nan<S>(logits, h, n);
    std::vector<int> masked;
    parts[half] =
        softmax_rows<S>(logits, half == 0 ? facts.fully_masked : masked, log_sum_exp, set.nan_when_fully_masked);
    steps[half] = emit(half == 0 ? "weights_1" : "weights_2", h, parts[half].template cast<double>(), inputs);
  }
  if (set.has_mask && set.finite_fill) add_rows_hidden_by_fill<S>(n, set, facts);
  Weights<S> weights;
  weights.values = parts[0] - static_cast<S>(facts.lambda) * parts[1];
  weights.step = emit("weights", h, weights.values.template cast<double>(), {steps[0], steps[1]});
  // Sums, largest weights and entropies of A₁ − λA₂ (its entries may be negative).
  log_sum_exp = Vector::Constant(n.L, std::numeric_limits<double>::quiet_NaN());
  note_weight_rows<S>(weights.values, weights.values, log_sum_exp, facts);
  return weights;
}

template <typename S>
ATTN_NOINLINE Trace compute(const Normalized& n) {
  Trace t;
  t.heads = n.heads;
  t.kv_heads = n.kv_heads;
  t.d_k = static_cast<int>(n.d_k);
  t.d_v = static_cast<int>(n.d_v);
  t.queries = n.L;
  t.keys = n.S;
  const Settings<S> set = settings_of<S>(n);
  t.scale = set.scale.factor();
  const StepWriter emit(t, n);
  t.steps.reserve(static_cast<size_t>(n.heads) * 24 + 5);  // at most 24 steps per head, 5 shared

  const Projected<S> projected = n.latent ? Projected<S>() : project_inputs<S>(n, emit, t);
  std::optional<Latent<S>> latent;
  if (n.latent) latent = latent_shared<S>(n, emit, t);
  Mat<S> concat(n.L, n.d_v * n.heads);
  std::vector<int> fully_masked_rows;
  Leak leak;
  std::vector<int> head_outputs;
  std::vector<int> weighted_sum;                        // one head without W_O: the output is weights·V itself
  std::vector<std::pair<int, Eigen::Index>> zero_rows;  // linear attention: a normalizer of 0
  if (n.linear()) t.scale = 1;
  for (int h = 0; h < n.heads; ++h) {
    HeadFacts facts;
    facts.head = h;
    if (n.latent) {
      HeadInputs<S> in;
      const LatentScores<S> ls = latent_scores<S>(n, *latent, emit, h, in);
      const Logits<S> logits = scores_to_logits<S>(n, set, emit, ls.scores, ls.scores_step, h, facts);
      check_no_nan<S>(logits.values, h, n);
      const Weights<S> weights = head_weights<S>(n, set, emit, logits, h, facts, leak);
      if (h == 0) fully_masked_rows = facts.fully_masked;
      t.facts.push_back(std::move(facts));
      concat.middleCols(h * n.d_v, n.d_v) = product(weights.values, in.V);
      if (n.heads == 1 && !n.W_O) {
        weighted_sum = {weights.step, in.v_step};
      } else {
        head_outputs.push_back(emit("head_output", h, concat.middleCols(h * n.d_v, n.d_v).template cast<double>(),
                                    {weights.step, in.v_step}));
      }
      latent_absorbed<S>(n, *latent, emit, h, ls, weights.values, weights.step);
      continue;
    }
    const HeadInputs<S> in = head_inputs<S>(n, projected, emit, h);
    if (n.linear()) {
      const LinearHead<S> head = linear_head<S>(n, emit, in, h, facts, zero_rows);
      t.facts.push_back(std::move(facts));
      concat.middleCols(h * n.d_v, n.d_v) = head.output;
      if (n.heads == 1 && !n.W_O) {
        weighted_sum = head.inputs;
      } else {
        head_outputs.push_back(emit("head_output", h, head.output.template cast<double>(), head.inputs));
      }
      continue;
    }
    if (n.options.qk_norm.on) note_qk_norm<S>(in, facts);
    const Weights<S> weights = n.lambdas.empty() ? [&] {
      const Logits<S> logits = head_logits<S>(n, set, emit, in, h, facts);
      check_no_nan<S>(logits.values, h, n);
      return head_weights<S>(n, set, emit, logits, h, facts, leak);
    }() : differential_weights<S>(n, set, emit, in, h, facts);
    if (h == 0) fully_masked_rows = facts.fully_masked;
    t.facts.push_back(std::move(facts));

    Mat<S> head = product(weights.values, in.V);
    // The head's own steps after weights·V: the norm of differential attention, the gate.
    const bool more = (!n.lambdas.empty() && n.options.differential.norm) || n.W_G;
    if (n.heads == 1 && !n.W_O && !more) {
      weighted_sum = {weights.step, in.v_step};
    } else {
      int step = emit("head_output", h, head.template cast<double>(), {weights.step, in.v_step});
      if (!n.lambdas.empty() && n.options.differential.norm) {
        head = head_norm<S>(head, n.options.differential.lambda_init);
        step = emit("head_normed", h, head.template cast<double>(), {step});
      }
      if (n.W_G) {
        const Mat<S> gate =
            n.gate_headwise ? Mat<S>(projected.G.col(h)) : Mat<S>(projected.G.middleCols(h * n.d_v, n.d_v));
        const int gate_step = emit("gate", h, gate.template cast<double>(), projected.x_step);
        for (Eigen::Index j = 0; j < n.d_v; ++j)
          head.col(j) = head.col(j).cwiseProduct(gate.col(n.gate_headwise ? 0 : j));
        step = emit("gated_output", h, head.template cast<double>(), {step, gate_step});
      }
      head_outputs.push_back(step);
    }
    concat.middleCols(h * n.d_v, n.d_v) = head;
  }

  // The output reads the concatenation (several heads) or the one head's output (with W_O),
  // or is the one head's weights·V itself.
  std::vector<int> output_inputs = weighted_sum;
  if (n.heads > 1) {
    output_inputs = {emit("concat", -1, concat.template cast<double>(), head_outputs)};
  } else if (weighted_sum.empty()) {  // W_O, or the head's own steps after weights·V
    output_inputs = head_outputs;
  }
  Mat<S> output = concat;
  if (n.W_O) {
    output = product(concat, n.W_O->cast<S>());
    if (n.b_O) output.rowwise() += n.b_O->cast<S>().transpose();
  }
  const Matrix out = output.template cast<double>();
  emit("output", -1, out, std::move(output_inputs));
  if (n.latent) latent_output<S>(n, *latent, emit, out.cols());
  t.output = n.columns ? Matrix(out.transpose()) : out;
  if (n.linear()) {
    add_linear_warnings<S>(n, out, zero_rows, t);
  } else {
    add_warnings<S>(n, set, out, fully_masked_rows, leak, t);
  }
  return t;
}

}  // namespace

double sinusoid_angle(double position, Eigen::Index feature, Eigen::Index d_model) {
  const double i = static_cast<double>(feature / 2);
  return position / std::pow(10000.0, 2 * i / static_cast<double>(d_model));
}

std::pair<Eigen::Index, Eigen::Index> rope_pair(const Rope& rope, int i) {
  if (rope.style == Rope::Style::Interleaved) return {2 * i, 2 * i + 1};
  return {i, i + rope.dims / 2};
}

RopeAngle rope_angle(const Rope& rope, double position, int i) {
  if (rope.cos) {
    const auto row = static_cast<Eigen::Index>(position);
    return {std::numeric_limits<double>::quiet_NaN(), (*rope.cos)(row, i), (*rope.sin)(row, i)};
  }
  const double theta = std::pow(rope.base, -2.0 * i / rope.dims);
  const double angle = position * theta;
  return {angle, std::cos(angle), std::sin(angle)};
}

std::vector<double> rope_positions(const Normalized& n) {
  std::vector<double> out(n.query_pos);
  out.insert(out.end(), n.key_pos.begin(), n.key_pos.end());
  if (n.options.rope.cos) {  // a cached key may sit past the tables (it came rotated)
    const auto rows = static_cast<double>(n.options.rope.cos->rows());
    out.erase(std::remove_if(out.begin(), out.end(), [&](double p) { return p >= rows; }), out.end());
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

double rope_table_angle(const Rope& rope, double position, int i) {
  const RopeAngle turn = rope_angle(rope, position, i);
  return rope.cos ? std::atan2(turn.sin, turn.cos) : turn.angle;
}

/// Causal, the window with its sink tokens, and the user's mask, entry by entry. Positions
/// (not indices) are compared: a query at p sees a key at q when q <= p (causal) and
/// p - left <= q <= p + right (window) or q < sink_tokens.
Mask combined_mask(const Normalized& n) {
  Mask m;
  m.additive = Matrix::Zero(n.L, n.S);
  m.hidden_by = Matrix::Zero(n.L, n.S);
  m.boolean = !n.mask || n.options.mask_kind == MaskKind::Keep;
  const Options& o = n.options;
  const bool window = n.window();
  for (Eigen::Index i = 0; i < n.L; ++i) {
    const double p = n.query_pos[static_cast<size_t>(i)];
    for (Eigen::Index j = 0; j < n.S; ++j) {
      const double q = n.key_pos[static_cast<size_t>(j)];
      int bits = 0;
      if (o.causal && q > p) bits |= kHiddenByCausal;
      if (window && (q < p - o.window_left || q > p + o.window_right)) {
        bits |= q < o.sink_tokens ? kKeptBySink : kHiddenByWindow;
      }
      if (n.mask) {
        const double v = (*n.mask)(i, j);
        if (o.mask_kind == MaskKind::Keep ? v == 0 : v == -kInf) bits |= kHiddenByMask;
        if (o.mask_kind == MaskKind::Additive) m.additive(i, j) = v;
      }
      m.hidden_by(i, j) = bits;
      if (m.hidden(i, j)) m.additive(i, j) = -kInf;
    }
  }
  return m;
}

/// ALiBi's bias for a head of slope m: -m·|p - q| for the query at p and the key at q.
Matrix alibi_bias(const Normalized& n, double slope) {
  Matrix bias(n.L, n.S);
  for (Eigen::Index i = 0; i < n.L; ++i) {
    for (Eigen::Index j = 0; j < n.S; ++j) {
      // 0 - m·d rather than -m·d: a zero distance gives 0, not -0.
      bias(i, j) = 0.0 - slope * std::abs(n.query_pos[static_cast<size_t>(i)] - n.key_pos[static_cast<size_t>(j)]);
    }
  }
  return bias;
}

std::vector<std::pair<std::string, double>> latent_cache_forms(const Normalized& n) {
  std::vector<std::pair<std::string, double>> forms;
  const auto h = static_cast<double>(n.heads), d_h = static_cast<double>(n.d_h);
  forms.emplace_back("MHA", 2 * h * d_h);
  for (int g = n.heads - 1; g > 1; --g) {
    if (n.heads % g == 0) forms.emplace_back("GQA g = " + std::to_string(g), 2.0 * g * d_h);
  }
  if (n.heads > 1) forms.emplace_back("MQA", 2 * d_h);
  forms.emplace_back("MLA", static_cast<double>(n.d_c + n.d_r));
  return forms;
}

Matrix latent_cache_sizes(const Normalized& n) {
  const auto forms = latent_cache_forms(n);
  Matrix sizes(1, static_cast<Eigen::Index>(forms.size()));
  for (size_t k = 0; k < forms.size(); ++k) sizes(0, static_cast<Eigen::Index>(k)) = forms[k].second;
  return sizes;
}

Matrix differential_logits(const Normalized& n, const Matrix& Qh, const Matrix& Kh, int half, int h) {
  const Settings<double> set = settings_of<double>(n);
  const Matrix alibi = n.alibi_slopes.empty() ? Matrix() : alibi_bias(n, n.alibi_slopes[static_cast<size_t>(h)]);
  return half_logits<double>(n, set, Qh, Kh, half, alibi);
}

Trace compute_trace(const Normalized& n) {
  return n.options.precision == Precision::Float32 ? compute<float>(n) : compute<double>(n);
}

Trace run(const Problem& problem) { return compute_trace(normalize(problem)); }

}  // namespace attn
