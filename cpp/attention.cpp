// Scaled dot-product attention with every intermediate kept.
//
// Internally everything is computed in the rows layout (tokens as rows). A problem in the
// columns layout (UDL book: Q = Ω_Q X + β_Q) is transposed on the way in and every step is
// transposed back on the way out, so both layouts share one code path and give the same
// numbers. Validation messages, however, speak in the user's layout.
#include "attention.h"

#include <cmath>
#include <limits>

namespace attn {
namespace {

template <typename S>
using Mat = Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <typename S>
using RowVec = Eigen::Matrix<S, 1, Eigen::Dynamic>;

constexpr double kInf = std::numeric_limits<double>::infinity();

/// A problem brought to the rows layout, validated, with its derived sizes.
struct Normalized {
  bool columns = false;
  bool direct = false;
  Matrix Q, K, V;                 // direct mode
  Matrix X, X_kv, W_Q, W_K, W_V;  // projection mode (X_kv = X for self-attention)
  std::optional<Vector> b_Q, b_K, b_V, b_O;
  std::optional<Matrix> W_O;
  std::optional<Matrix> mask;  // L×S
  Options options;
  int heads = 1, kv_heads = 1;
  Eigen::Index L = 0, S = 0, d_k = 0, d_v = 0;
};

/// Speaks about shapes in the user's layout.
class ShapeWords {
 public:
  explicit ShapeWords(bool columns) : columns_(columns) {}
  /// "rows" for the token axis of a rows-layout matrix, flipped for the columns layout.
  const char* rows() const { return columns_ ? "columns" : "rows"; }
  const char* cols() const { return columns_ ? "rows" : "columns"; }
  const char* col() const { return columns_ ? "row" : "column"; }
  std::string shape(const Matrix& rows_layout) const {
    Eigen::Index r = rows_layout.rows(), c = rows_layout.cols();
    if (columns_) std::swap(r, c);
    return std::to_string(r) + "x" + std::to_string(c);
  }

 private:
  bool columns_;
};

void check_finite(const Matrix& m, const char* name, bool columns) {
  if (m.allFinite()) return;  // the position is looked for only when there is one
  for (Eigen::Index i = 0; i < m.rows(); ++i) {
    for (Eigen::Index j = 0; j < m.cols(); ++j) {
      const double v = m(i, j);
      if (std::isfinite(v)) continue;
      const Eigen::Index r = columns ? j : i, c = columns ? i : j;
      throw InputError(std::string(name) + " row " + std::to_string(r + 1) + ", column " +
                       std::to_string(c + 1) + " is " + format_number(v) +
                       ": inputs must be finite numbers (only an additive mask may hold -inf)");
    }
  }
}

void check_finite(const Vector& v, const char* name) {
  for (Eigen::Index i = 0; i < v.size(); ++i) {
    if (!std::isfinite(v[i])) {
      throw InputError(std::string(name) + " entry " + std::to_string(i + 1) + " is " +
                       format_number(v[i]) + ": inputs must be finite numbers");
    }
  }
}

void check_size(const Matrix& m, const char* name, bool columns) {
  const Eigen::Index r = columns ? m.cols() : m.rows(), c = columns ? m.rows() : m.cols();
  if (r == 0 || c == 0) {
    throw InputError(std::string(name) + " is empty (" + std::to_string(r) + "x" +
                     std::to_string(c) + "): every matrix needs at least one row and one column");
  }
  if (r > kMaxDim || c > kMaxDim) {
    const bool rows_too_many = r > kMaxDim;
    throw InputError(std::string(name) + " has " + std::to_string(rows_too_many ? r : c) +
                     (rows_too_many ? " rows" : " columns") + ": at most " +
                     std::to_string(kMaxDim) +
                     " are accepted (every step of the trace is kept in memory)");
  }
}

/// float32 computations need inputs within its range; say so instead of computing with inf.
void check_float32_range(const Matrix& m, const char* name, bool columns) {
  const double largest = std::numeric_limits<float>::max();
  for (Eigen::Index i = 0; i < m.rows(); ++i) {
    for (Eigen::Index j = 0; j < m.cols(); ++j) {
      if (std::abs(m(i, j)) <= largest) continue;
      const Eigen::Index r = columns ? j : i, c = columns ? i : j;
      throw InputError(std::string(name) + " row " + std::to_string(r + 1) + ", column " +
                       std::to_string(c + 1) + " is " + format_number(m(i, j)) +
                       ": too large for float32 (largest 3.4e+38); compute in float64");
    }
  }
}

/// An option value that float32 would turn into 0 or inf.
void check_float32_option(double value, const char* what) {
  const float f = static_cast<float>(value);
  if ((value != 0 && f == 0) || std::isinf(f)) {
    throw InputError(std::string(what) + " " + format_number(value) + " is " +
                     (f == 0 ? "0" : "infinite") + " in float32; compute in float64");
  }
}

Matrix to_rows(const Matrix& m, bool columns) { return columns ? Matrix(m.transpose()) : m; }

Normalized normalize(const Problem& p) {
  Normalized n;
  n.options = p.options;
  n.columns = p.options.layout == Layout::Columns;
  const bool columns = n.columns;
  const ShapeWords words(columns);

  const bool any_direct = p.Q || p.K || p.V;
  const bool any_projection = p.X || p.W_Q || p.W_K || p.W_V || p.X_kv;
  if (any_direct && any_projection) {
    throw InputError(
        "give either Q, K and V, or X with W_Q, W_K and W_V, not both (found " +
        std::string(p.Q ? "Q" : (p.K ? "K" : "V")) + " and " +
        std::string(p.X ? "X" : (p.W_Q ? "W_Q" : (p.W_K ? "W_K" : (p.W_V ? "W_V" : "X_kv")))) +
        ")");
  }
  if (!any_direct && !any_projection) {
    throw InputError("no inputs: give either Q, K and V, or X with W_Q, W_K and W_V");
  }
  n.direct = any_direct;

  // Every matrix present: non-empty, within limits, finite.
  const bool float32 = p.options.precision == Precision::Float32;
  auto take = [&](const std::optional<Matrix>& m, const char* name) {
    check_size(*m, name, false);
    check_finite(*m, name, false);
    if (float32) check_float32_range(*m, name, false);
    return to_rows(*m, columns);
  };
  auto require = [&](const std::optional<Matrix>& m, const char* name, const char* mode) {
    if (!m) throw InputError(std::string(name) + " is missing: " + mode);
  };

  if (n.direct) {
    const char* mode = "give Q, K and V (or X with W_Q, W_K and W_V)";
    require(p.Q, "Q", mode);
    require(p.K, "K", mode);
    require(p.V, "V", mode);
    for (const char* bias : {"b_Q", "b_K", "b_V"}) {
      const bool given = (bias[2] == 'Q' && p.b_Q) || (bias[2] == 'K' && p.b_K) ||
                         (bias[2] == 'V' && p.b_V);
      if (given) {
        throw InputError(std::string(bias) +
                         " is given but Q, K and V are given directly: biases belong to "
                         "projections from X");
      }
    }
    n.Q = take(p.Q, "Q");
    n.K = take(p.K, "K");
    n.V = take(p.V, "V");
    if (n.K.rows() != n.V.rows()) {
      throw InputError("K has " + std::to_string(n.K.rows()) + " " + words.rows() + " but V has " +
                       std::to_string(n.V.rows()) + ": every key needs a value (K is " +
                       words.shape(n.K) + ", V is " + words.shape(n.V) + ")");
    }
  } else {
    const char* mode = "self-attention from X needs X, W_Q, W_K and W_V";
    require(p.X, "X", mode);
    require(p.W_Q, "W_Q", mode);
    require(p.W_K, "W_K", mode);
    require(p.W_V, "W_V", mode);
    n.X = take(p.X, "X");
    n.X_kv = p.X_kv ? take(p.X_kv, "X_kv") : n.X;
    n.W_Q = take(p.W_Q, "W_Q");
    n.W_K = take(p.W_K, "W_K");
    n.W_V = take(p.W_V, "W_V");
    const char* kv_name = p.X_kv ? "X_kv" : "X";
    // W_Q has one row per feature of X (rows layout); Ω_Q has one column per feature, i.e.
    // per row of X (columns layout). After transposition both read W.rows() == X.cols().
    auto check_inner = [&](const Matrix& W, const char* w_name, const Matrix& in,
                           const char* in_name) {
      if (W.rows() == in.cols()) return;
      throw InputError(std::string(w_name) + " has " + std::to_string(W.rows()) + " " +
                       words.rows() + " but " + in_name + " has " + std::to_string(in.cols()) +
                       " " + words.cols() + " (" + w_name + " is " + words.shape(W) + ", " +
                       in_name + " is " + words.shape(in) + ")");
    };
    check_inner(n.W_Q, "W_Q", n.X, "X");
    check_inner(n.W_K, "W_K", n.X_kv, kv_name);
    check_inner(n.W_V, "W_V", n.X_kv, kv_name);

    auto take_bias = [&](const std::optional<Vector>& b, const char* name, const Matrix& W,
                         const char* w_name) -> std::optional<Vector> {
      if (!b) return std::nullopt;
      check_finite(*b, name);
      if (b->size() != W.cols()) {
        throw InputError(std::string(name) + " has " + std::to_string(b->size()) +
                         " entries but " + w_name + " has " + std::to_string(W.cols()) + " " +
                         words.cols() + ": one bias per " + words.col() + " of " +
                         w_name);
      }
      return b;
    };
    n.b_Q = take_bias(p.b_Q, "b_Q", n.W_Q, "W_Q");
    n.b_K = take_bias(p.b_K, "b_K", n.W_K, "W_K");
    n.b_V = take_bias(p.b_V, "b_V", n.W_V, "W_V");
  }

  // Sizes shared by both modes, computed as if projected.
  const Eigen::Index q_width = n.direct ? n.Q.cols() : n.W_Q.cols();
  const Eigen::Index k_width = n.direct ? n.K.cols() : n.W_K.cols();
  const Eigen::Index v_width = n.direct ? n.V.cols() : n.W_V.cols();
  n.L = n.direct ? n.Q.rows() : n.X.rows();
  n.S = n.direct ? n.K.rows() : n.X_kv.rows();
  if (n.L > kMaxTokens || n.S > kMaxTokens) {
    throw InputError("too many tokens (" + std::to_string(n.L) + " queries, " +
                     std::to_string(n.S) + " keys): the largest accepted is " +
                     std::to_string(kMaxTokens));
  }

  const Options& o = p.options;
  if (o.heads < 1) {
    throw InputError("heads must be at least 1 (got " + std::to_string(o.heads) + ")");
  }
  n.heads = o.heads;
  n.kv_heads = o.kv_heads == 0 ? o.heads : o.kv_heads;
  if (n.kv_heads < 1) {
    throw InputError("kv_heads must be at least 1 (got " + std::to_string(o.kv_heads) + ")");
  }
  if (n.heads % n.kv_heads != 0) {
    throw InputError("kv_heads = " + std::to_string(n.kv_heads) + " does not divide heads = " +
                     std::to_string(n.heads) + ": each key/value head serves a whole group of "
                     "query heads");
  }
  const char* q_name = n.direct ? "Q" : "W_Q";
  const char* k_name = n.direct ? "K" : "W_K";
  const char* v_name = n.direct ? "V" : "W_V";
  // The feature axis of Q is its columns in the rows layout and its rows in the columns layout.
  const char* feature_axis = words.cols();
  if (q_width % n.heads != 0) {
    throw InputError("heads = " + std::to_string(n.heads) + " does not divide d_model = " +
                     std::to_string(q_width) + " (the " + std::to_string(q_width) + " " +
                     feature_axis + " of " + q_name + ")");
  }
  n.d_k = q_width / n.heads;
  if (k_width != n.d_k * n.kv_heads) {
    if (n.kv_heads == 1 && n.heads == 1) {
      throw InputError(std::string(q_name) + " has " + std::to_string(q_width) + " " +
                       feature_axis + " but " + k_name + " has " + std::to_string(k_width) +
                       ": queries and keys need the same d_k");
    }
    throw InputError(std::string(k_name) + " has " + std::to_string(k_width) + " " +
                     feature_axis + " but " + std::to_string(n.kv_heads) +
                     " key heads of d_k = " + std::to_string(n.d_k) + " need " +
                     std::to_string(n.d_k * n.kv_heads));
  }
  if (v_width % n.kv_heads != 0) {
    throw InputError("kv_heads = " + std::to_string(n.kv_heads) + " does not divide the " +
                     std::to_string(v_width) + " " + feature_axis + " of " + v_name);
  }
  n.d_v = v_width / n.kv_heads;

  if (p.W_O) {
    n.W_O = take(p.W_O, "W_O");
    const Eigen::Index concat_width = n.d_v * n.heads;
    if (n.W_O->rows() != concat_width) {
      throw InputError("W_O has " + std::to_string(n.W_O->rows()) + " " + words.rows() +
                       " but the concatenated heads have " + std::to_string(concat_width) + " " +
                       feature_axis + " (" + std::to_string(n.heads) + " heads x d_v = " +
                       std::to_string(n.d_v) + ")");
    }
    if (p.b_O) {
      check_finite(*p.b_O, "b_O");
      if (p.b_O->size() != n.W_O->cols()) {
        throw InputError("b_O has " + std::to_string(p.b_O->size()) + " entries but W_O has " +
                         std::to_string(n.W_O->cols()) + " " + words.cols() +
                         ": one bias per " + words.col() + " of W_O");
      }
      n.b_O = p.b_O;
    }
  } else if (p.b_O) {
    throw InputError("b_O is given without W_O");
  }

  if (o.mask) {
    const Matrix& m = *o.mask;
    const Eigen::Index want_r = columns ? n.S : n.L, want_c = columns ? n.L : n.S;
    if (m.rows() != want_r || m.cols() != want_c) {
      throw InputError("mask is " + std::to_string(m.rows()) + "x" + std::to_string(m.cols()) +
                       " but the scores are " + std::to_string(want_r) + "x" +
                       std::to_string(want_c) +
                       (columns ? " (keys x queries)" : " (queries x keys)"));
    }
    for (Eigen::Index i = 0; i < m.rows(); ++i) {
      for (Eigen::Index j = 0; j < m.cols(); ++j) {
        const double v = m(i, j);
        const std::string where =
            "mask row " + std::to_string(i + 1) + ", column " + std::to_string(j + 1) + " is ";
        if (o.mask_kind == MaskKind::Keep && v != 0 && v != 1) {
          throw InputError(where + format_number(v) +
                           ": a boolean mask holds only 1/true (keep) and 0/false (hide)");
        }
        if (o.mask_kind == MaskKind::Additive && (std::isnan(v) || v == kInf)) {
          throw InputError(where + format_number(v) +
                           ": an additive mask holds finite numbers or -inf");
        }
      }
    }
    n.mask = to_rows(m, columns);
  }

  switch (o.scale.kind) {
    case Scale::Kind::Multiply:
      if (!std::isfinite(o.scale.value)) {
        throw InputError("scale must be a finite number (got " + format_number(o.scale.value) +
                         ")");
      }
      break;
    case Scale::Kind::DivideBy:
      if (!std::isfinite(o.scale.value) || o.scale.value == 0) {
        throw InputError("the scale divisor must be a finite nonzero number (got " +
                         format_number(o.scale.value) + ")");
      }
      break;
    default:
      break;
  }
  if (!(o.softcap >= 0) || !std::isfinite(o.softcap)) {
    throw InputError("softcap must be 0 (off) or a positive number (got " +
                     format_number(o.softcap) + ")");
  }
  if (float32) {
    check_float32_option(o.softcap, "softcap");
    if (o.scale.kind == Scale::Kind::Multiply) check_float32_option(o.scale.value, "scale");
    if (o.scale.kind == Scale::Kind::DivideBy) check_float32_option(o.scale.value, "the scale divisor");
  }

  // A full trace keeps about six L×S matrices per head: refuse before allocating.
  const double trace_values =
      static_cast<double>(n.heads) *
      (6.0 * static_cast<double>(n.L) * static_cast<double>(n.S) +
       static_cast<double>(n.L + 2 * n.S) * static_cast<double>(n.d_k + n.d_v));
  if (trace_values > kMaxTraceValues) {
    throw InputError("the trace of this problem would hold " +
                     std::to_string(static_cast<long long>(trace_values)) +
                     " numbers; the most accepted is " +
                     std::to_string(static_cast<long long>(kMaxTraceValues)) +
                     " (fewer tokens or heads)");
  }
  return n;
}

/// Row-wise softmax that never produces NaN: the row max is subtracted, -inf entries get
/// weight 0, a row with only -inf gets all zeros (reported by the caller), and a row holding
/// +inf (overflowed scores) shares the weight among its +inf entries, the limit of the maths.
/// Row-wise softmax. `log_sum_exp` gets, per row, log Σ_j e^(x_j) (in double), which the
/// entropy reads instead of taking a log per weight; NaN for rows with no such number (fully
/// masked, or +inf logits).
template <typename S>
Mat<S> softmax_rows(const Mat<S>& logits, std::vector<int>& fully_masked, Vector& log_sum_exp) {
  Mat<S> weights(logits.rows(), logits.cols());
  log_sum_exp = Vector::Constant(logits.rows(), std::numeric_limits<double>::quiet_NaN());
  for (Eigen::Index i = 0; i < logits.rows(); ++i) {
    const auto row = logits.row(i);
    const S max = row.maxCoeff();
    auto out = weights.row(i);
    if (max == -std::numeric_limits<S>::infinity()) {
      out.setZero();
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

/// Finite inputs can still overflow: inf - inf inside QKᵀ, or 0 · inf. A NaN logit has no
/// meaningful weight, so refuse with the position instead of returning NaN weights.
template <typename S>
void check_no_nan(const Mat<S>& logits, int head, const Normalized& n) {
  if (!logits.hasNaN()) return;
  for (Eigen::Index i = 0; i < logits.rows(); ++i) {
    for (Eigen::Index j = 0; j < logits.cols(); ++j) {
      if (!std::isnan(logits(i, j))) continue;
      const Eigen::Index r = n.columns ? j : i, c = n.columns ? i : j;
      throw InputError(std::string("the scores overflow ") +
                       (sizeof(S) == 4 ? "float32" : "float64") + ": row " +
                       std::to_string(r + 1) + ", column " + std::to_string(c + 1) +
                       (n.heads > 1 ? " of head " + std::to_string(head + 1) : std::string()) +
                       " is not a number (inf - inf or 0 x inf); scale the inputs down");
    }
  }
}

double variance(const Matrix& m) {
  const double mean = m.mean();
  return (m.array() - mean).square().mean();
}

/// The additive mask (0 or -inf, or the user's numbers) of size L×S, rows layout.
Matrix additive_mask(const Normalized& n) {
  Matrix add = Matrix::Zero(n.L, n.S);
  if (n.mask) {
    if (n.options.mask_kind == MaskKind::Keep) {
      add = (n.mask->array() != 0).select(Matrix::Zero(n.L, n.S), -kInf);
    } else {
      add = *n.mask;
    }
  }
  if (n.options.causal) {
    for (Eigen::Index i = 0; i < n.L; ++i) {
      for (Eigen::Index j = i + 1; j < n.S; ++j) add(i, j) = -kInf;
    }
  }
  return add;
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
Mat<S> project(const Matrix& in, const Matrix& W, const std::optional<Vector>& b) {
  Mat<S> out = product(in.cast<S>(), W.cast<S>());
  if (b) out.rowwise() += b->cast<S>().transpose();
  return out;
}

template <typename S>
Trace compute(const Normalized& n) {
  Trace t;
  t.heads = n.heads;
  t.kv_heads = n.kv_heads;
  t.d_k = static_cast<int>(n.d_k);
  t.d_v = static_cast<int>(n.d_v);
  t.queries = n.L;
  t.keys = n.S;

  const Mat<S> Q = n.direct ? Mat<S>(n.Q.cast<S>()) : project<S>(n.X, n.W_Q, n.b_Q);
  const Mat<S> K = n.direct ? Mat<S>(n.K.cast<S>()) : project<S>(n.X_kv, n.W_K, n.b_K);
  const Mat<S> V = n.direct ? Mat<S>(n.V.cast<S>()) : project<S>(n.X_kv, n.W_V, n.b_V);

  // The scale in the working precision: seed 003 divides by float32(√3), which rounds
  // differently from multiplying by float32(1/√3).
  const Scale& scale = n.options.scale;
  const bool divide = scale.kind == Scale::Kind::SqrtDk || scale.kind == Scale::Kind::DivideBy;
  const S divisor = scale.kind == Scale::Kind::SqrtDk ? std::sqrt(static_cast<S>(n.d_k))
                                                      : static_cast<S>(scale.value);
  const S factor = scale.kind == Scale::Kind::Multiply ? static_cast<S>(scale.value) : S(1);
  t.scale = divide ? 1.0 / static_cast<double>(divisor) : static_cast<double>(factor);

  const bool has_mask = n.mask.has_value() || n.options.causal;
  const Mat<S> mask = has_mask ? Mat<S>(additive_mask(n).cast<S>()) : Mat<S>();
  const S cap = static_cast<S>(n.options.softcap);

  auto emit = [&](const char* id, int head, const Matrix& rows_layout) {
    t.steps.push_back(Step{id, head, n.columns ? Matrix(rows_layout.transpose()) : rows_layout});
  };

  const int group = n.heads / n.kv_heads;
  Mat<S> concat(n.L, n.d_v * n.heads);
  std::vector<int> fully_masked_rows;
  for (int h = 0; h < n.heads; ++h) {
    const int g = h / group;
    const Mat<S> Qh = Q.middleCols(h * n.d_k, n.d_k);
    const Mat<S> Kh = K.middleCols(g * n.d_k, n.d_k);
    const Mat<S> Vh = V.middleCols(g * n.d_v, n.d_v);
    emit("Q", h, Qh.template cast<double>());
    emit("K", h, Kh.template cast<double>());
    emit("V", h, Vh.template cast<double>());

    const Mat<S> scores = product(Qh, Kh.transpose());
    emit("scores", h, scores.template cast<double>());
    Mat<S> logits = divide ? Mat<S>(scores / divisor) : Mat<S>(scores * factor);
    HeadFacts facts;
    facts.head = h;
    facts.scores_variance = variance(scores.template cast<double>());
    facts.scaled_variance = variance(logits.template cast<double>());
    emit("scaled", h, logits.template cast<double>());
    if (cap > 0) {
      logits = (cap * (logits.array() / cap).tanh()).matrix();
      emit("softcapped", h, logits.template cast<double>());
    }
    if (has_mask) {
      logits += mask;
      emit("masked", h, logits.template cast<double>());
    }
    check_no_nan<S>(logits, h, n);
    Vector log_sum_exp;
    const Mat<S> weights = softmax_rows<S>(logits, facts.fully_masked, log_sum_exp);
    emit("weights", h, weights.template cast<double>());

    // Per query: Σ w, max w and the entropy -Σ w log w, in one pass. log w is taken as
    // x - logsumexp(x), not a log per weight (in wasm the logs cost as much as the rest of a
    // small trace); rows of tied +inf logits take the logs.
    facts.weight_sums = Vector::Zero(n.L);
    facts.max_weight = Vector::Zero(n.L);
    facts.entropy = Vector::Zero(n.L);
    for (Eigen::Index i = 0; i < n.L; ++i) {
      const bool have_lse = !std::isnan(log_sum_exp[i]);
      double sum = 0, max = 0, entropy = 0;
      for (Eigen::Index j = 0; j < n.S; ++j) {
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
    if (h == 0) fully_masked_rows = facts.fully_masked;
    t.facts.push_back(std::move(facts));

    concat.middleCols(h * n.d_v, n.d_v) = product(weights, Vh);
    const bool last_step = n.heads == 1 && !n.W_O;
    if (!last_step) emit("head_output", h, concat.middleCols(h * n.d_v, n.d_v).template cast<double>());
  }

  Mat<S> output = concat;
  if (n.heads > 1) emit("concat", -1, concat.template cast<double>());
  if (n.W_O) {
    output = product(concat, n.W_O->cast<S>());
    if (n.b_O) output.rowwise() += n.b_O->cast<S>().transpose();
  }
  const Matrix out = output.template cast<double>();
  emit("output", -1, out);
  t.output = n.columns ? Matrix(out.transpose()) : out;

  // The mask is shared by all heads, so a fully masked query is reported once.
  const char* axis = n.columns ? "column " : "row ";
  for (int row : fully_masked_rows) {
    t.warnings.push_back(axis + std::to_string(row + 1) +
                         " of the mask hides every key: its weights and output are 0");
  }
  for (Eigen::Index i = 0; i < out.rows(); ++i) {
    if (!out.row(i).allFinite()) {
      t.warnings.push_back(std::string("output ") + axis + std::to_string(i + 1) +
                           " is not finite: the numbers overflowed " +
                           (sizeof(S) == 4 ? "float32" : "float64"));
    }
  }
  return t;
}

}  // namespace

Trace run(const Problem& problem) {
  const Normalized n = normalize(problem);
  return n.options.precision == Precision::Float32 ? compute<float>(n) : compute<double>(n);
}

}  // namespace attn

namespace attn {

Explanation explain(const Problem& problem, const std::string& step_id, int head,
                    Eigen::Index row, Eigen::Index col) {
  const Normalized n = normalize(problem);
  const Trace t = n.options.precision == Precision::Float32 ? compute<float>(n) : compute<double>(n);

  // Find a step of the trace; its values brought back to the rows layout.
  auto find = [&](const std::string& id, int h) -> const Step* {
    for (const Step& s : t.steps) {
      if (s.id == id && s.head == h) return &s;
    }
    return nullptr;
  };
  auto rows_layout = [&](const Step& s) {
    return n.columns ? Matrix(s.values.transpose()) : s.values;
  };

  const Step* step = find(step_id, head);
  if (!step) {
    throw InputError("the trace has no step '" + step_id + "' for head " +
                     (head < 0 ? std::string("(none)") : std::to_string(head)));
  }
  if (row < 0 || col < 0 || row >= step->values.rows() || col >= step->values.cols()) {
    throw InputError("step '" + step_id + "' is " + std::to_string(step->values.rows()) + "x" +
                     std::to_string(step->values.cols()) + ": it has no row " +
                     std::to_string(row + 1) + ", column " + std::to_string(col + 1));
  }

  Explanation e;
  e.step = step_id;
  e.head = head;
  e.row = row;
  e.col = col;
  e.value = step->values(row, col);
  // Work in the rows layout: (r, c) is (query, key) for scores, (token, feature) otherwise.
  const Eigen::Index r = n.columns ? col : row, c = n.columns ? row : col;
  const int h = head < 0 ? 0 : head;
  const int g = h / (n.heads / n.kv_heads);

  auto dot = [&](const Eigen::Ref<const Vector>& left, const Eigen::Ref<const Vector>& right) {
    e.left.assign(left.data(), left.data() + left.size());
    e.right.assign(right.data(), right.data() + right.size());
    for (Eigen::Index k = 0; k < left.size(); ++k) e.products.push_back(left[k] * right[k]);
  };
  auto previous_logits = [&](const char* before) -> Matrix {
    // The step just before `before` in the chain scaled -> softcapped -> masked -> weights.
    const char* chain[] = {"masked", "softcapped", "scaled"};
    bool seen = std::string(before) == "weights";
    for (const char* id : chain) {
      if (!seen) {
        seen = std::string(id) == before;
        continue;
      }
      if (const Step* s = find(id, head)) return rows_layout(*s);
    }
    return rows_layout(*find("scores", head));
  };

  if (step_id == "Q" || step_id == "K" || step_id == "V") {
    if (n.direct) {
      e.kind = "input";
      return e;
    }
    e.kind = "projection";
    const bool is_q = step_id == "Q";
    const Matrix& in = is_q ? n.X : n.X_kv;
    const Matrix& W = is_q ? n.W_Q : (step_id == "K" ? n.W_K : n.W_V);
    const auto& b = is_q ? n.b_Q : (step_id == "K" ? n.b_K : n.b_V);
    const Eigen::Index width = step_id == "V" ? n.d_v : n.d_k;
    const Eigen::Index w_col = (is_q ? h : g) * width + c;
    dot(in.row(r).transpose(), W.col(w_col));
    if (b) {
      e.has_bias = true;
      e.bias = (*b)[w_col];
    }
  } else if (step_id == "scores") {
    e.kind = "dot";
    const Matrix Qh = rows_layout(*find("Q", head)), Kh = rows_layout(*find("K", head));
    dot(Qh.row(r).transpose(), Kh.row(c).transpose());
  } else if (step_id == "scaled") {
    e.kind = "scale";
    e.input = rows_layout(*find("scores", head))(r, c);
    const Scale& s = n.options.scale;
    if (s.kind == Scale::Kind::Multiply || s.kind == Scale::Kind::None) {
      e.factor = s.kind == Scale::Kind::None ? 1.0 : s.value;
    } else {
      e.divisor = s.kind == Scale::Kind::SqrtDk ? std::sqrt(static_cast<double>(n.d_k)) : s.value;
      e.factor = 1.0 / e.divisor;
    }
  } else if (step_id == "softcapped") {
    e.kind = "softcap";
    e.input = rows_layout(*find("scaled", head))(r, c);
    e.factor = n.options.softcap;
  } else if (step_id == "masked") {
    e.kind = "mask";
    e.input = previous_logits("masked")(r, c);
    e.additive = additive_mask(n)(r, c);
  } else if (step_id == "weights") {
    e.kind = "softmax";
    const Matrix logits = previous_logits("weights");
    const Vector row_logits = logits.row(r).transpose();
    e.logits.assign(row_logits.data(), row_logits.data() + row_logits.size());
    e.max = row_logits.maxCoeff();
    for (double x : e.logits) {
      const double shifted = std::isinf(e.max) ? (x == e.max ? 0.0 : -kInf) : x - e.max;
      e.shifted.push_back(shifted);
      e.exps.push_back(std::exp(shifted));
      e.exp_sum += e.exps.back();
    }
    if (e.max == -kInf) e.exp_sum = 0;  // a fully masked query: every weight is 0
  } else if (step_id == "head_output" || (step_id == "output" && n.heads == 1 && !n.W_O)) {
    e.kind = "weighted_sum";
    const Matrix w = rows_layout(*find("weights", h));
    const Matrix v = rows_layout(*find("V", h));
    dot(w.row(r).transpose(), v.col(c));
  } else if (step_id == "concat") {
    e.kind = "concat";
    e.source_head = static_cast<int>(c / n.d_v);
    e.source_col = c % n.d_v;
  } else if (step_id == "output" && !n.W_O) {
    e.kind = "concat";  // several heads without W_O: the output is the concatenation
    e.source_head = static_cast<int>(c / n.d_v);
    e.source_col = c % n.d_v;
  } else if (step_id == "output") {
    e.kind = "projection";
    const Step* before = n.heads > 1 ? find("concat", -1) : find("head_output", 0);
    const Matrix concat = rows_layout(*before);
    dot(concat.row(r).transpose(), n.W_O->col(c));
    if (n.b_O) {
      e.has_bias = true;
      e.bias = (*n.b_O)[c];
    }
  }
  return e;
}

}  // namespace attn
