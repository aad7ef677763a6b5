// Decoding with a KV cache, FlashAttention's tiles and the online softmax (practice.h). The
// scores, masks and softmax inputs all come from run(): only the schedule is computed here.
#include "practice.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

#include "normalized.h"

namespace attn {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

/// max |a − b| entry by entry, counting NaN against NaN as equal (fully_masked "nan" rows).
double max_difference(const Matrix& a, const Matrix& b) {
  double out = 0;
  for (Eigen::Index i = 0; i < a.size(); ++i) {
    const double x = a.data()[i], y = b.data()[i];
    if (std::isnan(x) && std::isnan(y)) continue;
    if (x == y) continue;  // equal infinities
    const double d = std::abs(x - y);
    out = std::isnan(d) || d > out ? d : out;
    if (std::isnan(out)) return out;
  }
  return out;
}

/// The step `id` of `head` of a trace, brought to the rows layout.
Matrix step_rows(const Trace& trace, const char* id, int head, bool columns) {
  for (const Step& s : trace.steps) {
    if (s.id == id && s.head == head) return columns ? Matrix(s.values.transpose()) : s.values;
  }
  throw std::logic_error(std::string("the trace has no step ") + id);
}

bool has_step(const Trace& trace, const char* id, int head) {
  for (const Step& s : trace.steps) {
    if (s.id == id && s.head == head) return true;
  }
  return false;
}

Matrix to_layout(const Matrix& rows_layout, bool columns) {
  return columns ? Matrix(rows_layout.transpose()) : rows_layout;
}

// ---- decoding ------------------------------------------------------------------------------

/// Decoding generates tokens in order: a key that causal attention would show a query must
/// belong to a token generated no later than the query's.
void check_decode_positions(const Normalized& n) {
  double later_min = kInf;  // the smallest key position among tokens t+1 ...
  for (Eigen::Index t = n.L - 1; t >= 0; --t) {
    const double query = n.query_pos[static_cast<size_t>(t)];
    if (later_min <= query) {
      Eigen::Index j = t + 1;
      while (n.key_pos[static_cast<size_t>(j)] != later_min) ++j;
      throw input_error(ErrorPlace("positions.keys", "positions.queries", j + 1), "decode-positions",
                        {{"key", std::to_string(j + 1)},
                         {"key_position", format_number(later_min)},
                         {"query", std::to_string(t + 1)},
                         {"query_position", format_number(query)}});
    }
    later_min = std::min(later_min, n.key_pos[static_cast<size_t>(t)]);
  }
}

/// Token t of a matrix in the problem's layout (a row, or a column in the columns layout).
Matrix token(const Matrix& m, Eigen::Index t, bool columns) { return columns ? Matrix(m.col(t)) : Matrix(m.row(t)); }

/// The problem of decoding step t: token t's inputs, the cache of tokens 0..t-1 (rows layout,
/// kv_heads·d_k and kv_heads·d_v wide), token t's row of the mask and its positions.
Problem step_problem(const Problem& p, const Normalized& n, Eigen::Index t, const Matrix& cache_K,
                     const Matrix& cache_V) {
  const bool columns = n.columns;
  Problem s;
  s.options = p.options;
  s.options.causal = true;
  if (n.direct) {
    s.Q = token(*p.Q, t, columns);
    s.K = token(*p.K, t, columns);
    s.V = token(*p.V, t, columns);
  } else {
    s.X = token(*p.X, t, columns);
    s.W_Q = p.W_Q;
    s.W_K = p.W_K;
    s.W_V = p.W_V;
    s.b_Q = p.b_Q;
    s.b_K = p.b_K;
    s.b_V = p.b_V;
    if (p.P) s.P = token(*p.P, t, columns);
  }
  s.W_O = p.W_O;
  s.b_O = p.b_O;
  if (t > 0) {
    s.past_K = to_layout(cache_K.topRows(t), columns);
    s.past_V = to_layout(cache_V.topRows(t), columns);
  }
  if (p.options.mask) {  // query t's entries for keys 0..t
    const Matrix& m = *p.options.mask;
    s.options.mask = columns ? Matrix(m.block(0, t, t + 1, 1)) : Matrix(m.block(t, 0, 1, t + 1));
  }
  s.options.query_positions = {n.query_pos[static_cast<size_t>(t)]};
  s.options.key_positions.assign(n.key_pos.begin(), n.key_pos.begin() + t + 1);
  return s;
}

/// A 1×n or n×1 matrix as a row.
Eigen::Map<const Eigen::RowVectorXd> flat(const Matrix& m) {
  return Eigen::Map<const Eigen::RowVectorXd>(m.data(), m.size());
}

}  // namespace

Decoding decode(const Problem& problem) {
  const Normalized n = normalize(problem);
  if (n.latent) {
    throw input_error(ErrorPlace("W_DKV"), "decode-latent");
  }
  if (n.past > 0) {
    throw input_error(ErrorPlace("past_K"), "decode-past");
  }
  if (n.cross) {
    throw input_error(ErrorPlace("X_kv"), "decode-cross");
  }
  if (n.L != n.S) {
    throw input_error(
        ErrorPlace("K", "Q"), "decode-tokens",
        {{"queries", std::to_string(n.L)}, {"keys", std::to_string(n.S)}, {"layout", n.columns ? "columns" : "rows"}});
  }
  if (n.L > kMaxDecodeTokens) {
    throw input_error(ErrorPlace("Q"), "decode-too-many",
                      {{"max", std::to_string(kMaxDecodeTokens)}, {"tokens", std::to_string(n.L)}});
  }
  check_decode_positions(n);

  Problem causal = problem;
  causal.options.causal = true;
  const Trace full = run(causal);

  Decoding out;
  out.warnings = full.warnings;
  const Eigen::Index L = n.L, width_k = n.kv_heads * n.d_k, width_v = n.kv_heads * n.d_v;
  Matrix cache_K(L, width_k), cache_V(L, width_v);  // rows layout, filled token by token
  const Matrix full_output = to_layout(full.output, n.columns);
  Matrix output(L, full_output.cols());
  std::vector<Matrix> full_weights;
  for (int h = 0; h < n.heads; ++h) full_weights.push_back(step_rows(full, "weights", h, n.columns));

  // Multiply-adds (see practice.h).
  const double H = n.heads, d_k = static_cast<double>(n.d_k), d_v = static_cast<double>(n.d_v);
  const double D = n.direct ? 0 : static_cast<double>(n.X.cols());
  const double D_O = n.W_O ? static_cast<double>(n.W_O->cols()) : 0;
  const double projections = D * (H * d_k + n.kv_heads * d_k + n.kv_heads * d_v);
  const double through_W_O = H * d_v * D_O;

  for (Eigen::Index t = 0; t < L; ++t) {
    const Trace trace = run(step_problem(problem, n, t, cache_K, cache_V));
    DecodeStep s;
    s.t = static_cast<int>(t);
    s.cache_rows = t + 1;
    s.scores.resize(n.heads, t + 1);
    s.weights.resize(n.heads, t + 1);
    for (int h = 0; h < n.heads; ++h) {
      s.scores.row(h) = flat(step_rows(trace, "scores", h, false));
      s.weights.row(h) = flat(step_rows(trace, "weights", h, false));
      s.difference = std::max(
          s.difference, max_difference(s.weights.row(h), full_weights[static_cast<size_t>(h)].block(t, 0, 1, t + 1)));
      // The token's key and value join the cache, as its group's first head computed them.
      const int g = n.kv_group(h);
      if (h != g * (n.heads / n.kv_heads)) continue;
      const bool rotated = has_step(trace, "K_rot", h);
      cache_K.block(t, g * n.d_k, 1, n.d_k) = flat(step_rows(trace, rotated ? "K_rot" : "K", h, false));
      cache_V.block(t, g * n.d_v, 1, n.d_v) = flat(step_rows(trace, "V", h, false));
    }
    s.output = flat(trace.output).transpose();
    output.row(t) = s.output.transpose();
    s.difference = std::max(s.difference, max_difference(output.row(t), full_output.row(t)));
    const double tokens_so_far = static_cast<double>(t + 1);
    s.flops_cached = projections + H * tokens_so_far * (d_k + d_v) + through_W_O;
    s.flops_full =
        tokens_so_far * projections + H * tokens_so_far * tokens_so_far * (d_k + d_v) + tokens_so_far * through_W_O;
    out.flops_cached += s.flops_cached;
    out.flops_full += s.flops_full;
    out.steps.push_back(std::move(s));
  }
  out.output = to_layout(output, n.columns);
  return out;
}

// ---- FlashAttention's tiles ------------------------------------------------------------------

namespace {

template <typename S>
using Vec = Eigen::Matrix<S, Eigen::Dynamic, 1>;

/// e^(m − m'), taken as 1 while m' is still −∞ (nothing has been summed yet; e^(−∞ − (−∞)) is
/// undefined).
template <typename S>
S rescale_factor(S m_before, S m_after) {
  return m_after == -std::numeric_limits<S>::infinity() ? S(1) : std::exp(m_before - m_after);
}

/// e^(x − m), 0 for a hidden score.
template <typename S>
S shifted_exp(S x, S m) {
  return x == -std::numeric_limits<S>::infinity() ? S(0) : std::exp(x - m);
}

template <typename S>
Tiles tiles_in(const Normalized& n, const Trace& trace, Eigen::Index block_q, Eigen::Index block_k) {
  Tiles out;
  out.block_q = block_q;
  out.block_k = block_k;
  out.element_bytes = static_cast<int>(sizeof(S));
  out.warnings = trace.warnings;
  const Eigen::Index L = n.L, S_keys = n.S, d_v = n.d_v;
  const bool columns = n.columns;
  const bool nan_when_fully_masked = n.options.fully_masked == FullyMasked::NaN;
  const double mask_entries = n.mask ? 1 : 0;
  const double d_k = static_cast<double>(n.d_k), dv = static_cast<double>(d_v);

  Mat<S> concat(L, d_v * n.heads);
  for (int h = 0; h < n.heads; ++h) {
    // What the softmax reads (the step the weights are computed from) and what A·V reads.
    Matrix logits_rows;
    for (const Step& s : trace.steps) {
      if (s.id == "weights" && s.head == h) {
        const Step& in = trace.steps[static_cast<size_t>(s.inputs.at(0))];
        logits_rows = columns ? Matrix(in.values.transpose()) : in.values;
      }
    }
    const Mat<S> logits = logits_rows.cast<S>();
    const Mat<S> V = step_rows(trace, has_step(trace, "V_cache", h) ? "V_cache" : "V", h, columns).cast<S>();
    for (Eigen::Index i = 0; i < L; ++i) {
      for (Eigen::Index j = 0; j < S_keys; ++j) {
        if (logits(i, j) != std::numeric_limits<S>::infinity()) continue;
        const Eigen::Index r = columns ? j : i, c = columns ? i : j;
        throw input_error(ErrorPlace(), "tiles-overflow",
                          {{"row", std::to_string(r + 1)},
                           {"column", std::to_string(c + 1)},
                           {"head", n.heads > 1 ? std::to_string(h + 1) : "none"}});
      }
    }
    const bool sink = !n.sink_logits.empty() && n.sink_logits[static_cast<size_t>(h)] != -kInf;
    const S sink_logit = sink ? static_cast<S>(n.sink_logits[static_cast<size_t>(h)]) : S(0);

    out.bytes_standard += static_cast<double>(L) * d_k + static_cast<double>(S_keys) * (d_k + dv) +
                          static_cast<double>(L) * dv +
                          (4 + mask_entries) * static_cast<double>(L) * static_cast<double>(S_keys);
    int q_block = 0;
    for (Eigen::Index i0 = 0; i0 < L; i0 += block_q, ++q_block) {
      const Eigen::Index rows = std::min(block_q, L - i0);
      out.bytes_flash += static_cast<double>(rows) * (d_k + dv);  // Q_i read, O_i written
      // The running statistics of this query block: a sink is a key of value 0 seen first.
      Vec<S> m = Vec<S>::Constant(rows, sink ? sink_logit : -std::numeric_limits<S>::infinity());
      Vec<S> l = Vec<S>::Constant(rows, sink ? S(1) : S(0));
      Mat<S> partial = Mat<S>::Zero(rows, d_v);
      int k_block = 0;
      for (Eigen::Index j0 = 0; j0 < S_keys; j0 += block_k, ++k_block) {
        const Eigen::Index cols = std::min(block_k, S_keys - j0);
        Tile tile;
        tile.head = h;
        tile.q_block = q_block;
        tile.k_block = k_block;
        tile.q_first = i0;
        tile.q_count = rows;
        tile.k_first = j0;
        tile.k_count = cols;
        const Mat<S> T = logits.block(i0, j0, rows, cols);
        tile.skipped = (T.array() == -std::numeric_limits<S>::infinity()).all();
        if (tile.skipped) {
          ++out.skipped;
          out.tiles.push_back(std::move(tile));
          continue;
        }
        ++out.visited;
        out.bytes_flash += static_cast<double>(cols) * (d_k + dv) +
                           mask_entries * static_cast<double>(rows) * static_cast<double>(cols);
        tile.m_before = m.template cast<double>();
        tile.l_before = l.template cast<double>();
        tile.partial_before = to_layout(partial.template cast<double>(), columns);
        Vec<S> factor(rows);
        Mat<S> P(rows, cols);
        for (Eigen::Index r = 0; r < rows; ++r) {
          const S m_new = std::max(m[r], T.row(r).maxCoeff());
          factor[r] = rescale_factor(m[r], m_new);
          S sum = 0;
          for (Eigen::Index c = 0; c < cols; ++c) {
            P(r, c) = shifted_exp(T(r, c), m_new);
            sum += P(r, c);
          }
          l[r] = factor[r] * l[r] + sum;
          m[r] = m_new;
        }
        partial = factor.asDiagonal() * partial;
        partial += P * V.middleRows(j0, cols);
        tile.scores = to_layout(T.template cast<double>(), columns);
        tile.m_after = m.template cast<double>();
        tile.rescale = factor.template cast<double>();
        tile.l_after = l.template cast<double>();
        tile.partial_after = to_layout(partial.template cast<double>(), columns);
        out.tiles.push_back(std::move(tile));
      }
      // O = Õ / ℓ; ℓ = 0 only when every key of the row is hidden (and there is no sink).
      Mat<S> O(rows, d_v);
      for (Eigen::Index r = 0; r < rows; ++r) {
        if (l[r] == 0) {
          O.row(r).setConstant(nan_when_fully_masked ? std::numeric_limits<S>::quiet_NaN() : S(0));
        } else {
          O.row(r) = partial.row(r) / l[r];
        }
      }
      concat.block(i0, h * d_v, rows, d_v) = O;
      TileBlock block;
      block.head = h;
      block.q_block = q_block;
      block.q_first = i0;
      block.q_count = rows;
      block.m = m.template cast<double>();
      block.l = l.template cast<double>();
      block.output = to_layout(O.template cast<double>(), columns);
      out.blocks.push_back(std::move(block));
    }
  }
  Mat<S> output = concat;
  if (n.W_O) {
    output = concat * n.W_O->cast<S>();
    if (n.b_O) output.rowwise() += n.b_O->cast<S>().transpose();
  }
  out.bytes_standard *= out.element_bytes;  // counted in elements above
  out.bytes_flash *= out.element_bytes;
  out.output = to_layout(output.template cast<double>(), columns);
  out.max_difference = max_difference(out.output, trace.output);
  return out;
}

}  // namespace

void check_chunk_size(double value) {
  if (value >= 1 && std::isfinite(value) && value == std::floor(value)) return;
  throw input_error(ErrorPlace("chunk"), "positive-integer-number",
                    {{"name", "chunk"}, {"value", format_number(value)}});
}

Recurrent recurrent(const Problem& problem, Eigen::Index chunk) {
  if (chunk != 0) check_chunk_size(static_cast<double>(chunk));
  const Normalized n = normalize(problem);
  if (!n.linear() || !n.options.causal) {
    throw input_error(ErrorPlace(n.linear() ? "options.causal" : "options.attention"), "recurrent-causal-linear");
  }
  if (n.L != n.S) {
    throw input_error(ErrorPlace("K", "Q"), "recurrent-self",
                      {{"queries", std::to_string(n.L)}, {"keys", std::to_string(n.S)}});
  }
  const std::vector<double>& pos = n.query_pos;
  for (Eigen::Index t = 0; t < n.L; ++t) {
    const auto k = static_cast<size_t>(t);
    if (pos[k] != n.key_pos[k] || (t > 0 && !(pos[k] > pos[k - 1]))) {
      throw input_error(ErrorPlace("positions.keys", "positions.queries", t + 1), "recurrent-positions",
                        {{"token", std::to_string(t + 1)}});
    }
  }
  const Trace trace = compute_trace(n);
  const Eigen::Index L = n.L, dk = n.d_k, dv = n.d_v;
  const double gamma = n.decay();
  const bool normalized = n.normalize();
  const auto decay = [&](double from, double to) { return gamma == 1 ? 1.0 : std::pow(gamma, to - from); };
  Recurrent out;
  out.chunk = chunk;
  out.warnings = trace.warnings;
  const Eigen::Index size = chunk == 0 ? 1 : std::min(chunk, L);
  const bool own_output = n.heads == 1 && !n.W_O;
  Matrix concat(L, dv * n.heads);
  for (int h = 0; h < n.heads; ++h) {
    const Matrix phi_Q = step_rows(trace, "phi_Q", h, false), phi_K = step_rows(trace, "phi_K", h, false);
    const Matrix V = step_rows(trace, "V", h, false);
    const Matrix parallel =
        own_output ? step_rows(trace, "output", -1, false) : step_rows(trace, "head_output", h, false);
    Matrix S = Matrix::Zero(dk, dv);
    Vector z = Vector::Zero(dk);
    for (Eigen::Index a = 0; a < L; a += size) {
      const Eigen::Index b = std::min(a + size, L);
      RecurrentStep step;
      step.head = h;
      step.first = a;
      step.count = b - a;
      step.output.resize(b - a, dv);
      if (chunk == 0) {  // S_t = γ^Δ·S_{t−1} + φ(k_t)v_tᵀ, then o_t = φ(q_t)ᵀS_t / φ(q_t)ᵀz_t
        const double f = a == 0 ? 1.0 : decay(pos[static_cast<size_t>(a - 1)], pos[static_cast<size_t>(a)]);
        S = f * S + phi_K.row(a).transpose() * V.row(a);
        z = f * z + phi_K.row(a).transpose();
        const Vector numerator = (phi_Q.row(a) * S).transpose();
        const double denominator = phi_Q.row(a).dot(z);
        step.output.row(0) = (normalized ? Vector(numerator / denominator) : numerator).transpose();
      } else {  // inside the chunk, in parallel; plus the state carried in
        step.intra = Matrix::Zero(b - a, dv);
        step.inter = Matrix::Zero(b - a, dv);
        step.intra_normalizer = Vector::Zero(b - a);
        step.inter_normalizer = Vector::Zero(b - a);
        for (Eigen::Index i = a; i < b; ++i) {
          const double p = pos[static_cast<size_t>(i)];
          for (Eigen::Index j = a; j <= i; ++j) {
            const double w = phi_Q.row(i).dot(phi_K.row(j)) * decay(pos[static_cast<size_t>(j)], p);
            step.intra.row(i - a) += w * V.row(j);
            step.intra_normalizer[i - a] += w;
          }
          if (a > 0) {
            const double f = decay(pos[static_cast<size_t>(a - 1)], p);
            step.inter.row(i - a) = f * (phi_Q.row(i) * S);
            step.inter_normalizer[i - a] = f * phi_Q.row(i).dot(z);
          }
          const auto numerator = step.intra.row(i - a) + step.inter.row(i - a);
          step.output.row(i - a) =
              normalized ? Matrix(numerator / (step.intra_normalizer[i - a] + step.inter_normalizer[i - a]))
                         : Matrix(numerator);
        }
        const double last = pos[static_cast<size_t>(b - 1)];
        if (a > 0) {
          const double carry = decay(pos[static_cast<size_t>(a - 1)], last);
          S *= carry;
          z *= carry;
        }
        for (Eigen::Index j = a; j < b; ++j) {
          const double f = decay(pos[static_cast<size_t>(j)], last);
          S += f * phi_K.row(j).transpose() * V.row(j);
          z += f * phi_K.row(j).transpose();
        }
      }
      step.state = S;
      step.z = normalized ? z : Vector();
      step.difference = max_difference(step.output, parallel.middleRows(a, b - a));
      concat.block(a, h * dv, b - a, dv) = step.output;
      out.steps.push_back(std::move(step));
    }
  }
  Matrix output = concat;
  if (n.W_O) {
    output = concat * *n.W_O;
    if (n.b_O) output.rowwise() += n.b_O->transpose();
  }
  out.output = output;
  out.max_difference = max_difference(output, trace.output);

  const double H = n.heads, G = n.kv_heads, l = static_cast<double>(L), d_k = static_cast<double>(dk),
               d_v = static_cast<double>(dv);
  const double zs = normalized ? d_k : 0, one = normalized ? 1 : 0;
  const double pairs = l * (l + 1) / 2;
  out.costs.push_back({"softmax", H * pairs * (d_k + d_v), G * l * (d_k + d_v)});
  out.costs.push_back({"parallel", H * pairs * (d_k + d_v + one), H * l * l});
  out.costs.push_back({"recurrent", (G + H) * l * (d_k * d_v + zs), G * (d_k * d_v + zs)});
  if (chunk > 0) {
    double chunk_pairs = 0;
    for (Eigen::Index a = 0; a < L; a += size) {
      const double c = static_cast<double>(std::min(a + size, L) - a);
      chunk_pairs += c * (c + 1) / 2;
    }
    const double C = static_cast<double>(size);
    out.costs.push_back({"chunked", H * chunk_pairs * (d_k + d_v + one) + (H + G) * l * (d_k * d_v + zs),
                         G * (d_k * d_v + zs) + H * C * C});
  }
  return out;
}

void check_block_size(const char* name, double value) {
  if (value >= 1 && std::isfinite(value) && value == std::floor(value)) return;
  throw input_error(ErrorPlace(name), "positive-integer-number", {{"name", name}, {"value", format_number(value)}});
}

Tiles tiles(const Problem& problem, Eigen::Index block_q, Eigen::Index block_k) {
  check_block_size("block_q", static_cast<double>(block_q));
  check_block_size("block_k", static_cast<double>(block_k));
  const Normalized n = normalize(problem);
  if (n.latent) {
    throw input_error(ErrorPlace("W_DKV"), "tiles-latent");
  }
  const Eigen::Index bq = std::min(block_q, n.L), bk = std::min(block_k, n.S);
  // Every tile's numbers: the scores, Õ before and after, five numbers per query row, and the
  // record itself; refused before computing when that would not fit in a tab's memory.
  const double tiles_per_head = std::ceil(static_cast<double>(n.L) / static_cast<double>(bq)) *
                                std::ceil(static_cast<double>(n.S) / static_cast<double>(bk));
  const double key_blocks = std::ceil(static_cast<double>(n.S) / static_cast<double>(bk));
  const double values =
      n.heads * (static_cast<double>(n.L) * static_cast<double>(n.S) +
                 key_blocks * static_cast<double>(n.L) * static_cast<double>(2 * n.d_v + 5) + 16 * tiles_per_head);
  if (values > kMaxTraceValues) {
    throw input_error(ErrorPlace(), "tiles-too-large",
                      {{"count", std::to_string(static_cast<long long>(values))},
                       {"max", std::to_string(static_cast<long long>(kMaxTraceValues))}});
  }
  const Trace trace = compute_trace(n);
  Tiles out = n.options.precision == Precision::Float32 ? tiles_in<float>(n, trace, bq, bk)
                                                        : tiles_in<double>(n, trace, bq, bk);
  out.block_q = block_q;
  out.block_k = block_k;
  return out;
}

// ---- the online softmax of one row ---------------------------------------------------------------

namespace {

template <typename S>
OnlineSoftmax online_softmax_in(const std::vector<double>& row, bool subtract_max, const char* precision) {
  OnlineSoftmax out;
  S m = subtract_max ? -std::numeric_limits<S>::infinity() : S(0);
  S l = 0;
  Eigen::Index overflow = -1;
  for (size_t j = 0; j < row.size(); ++j) {
    const S x = static_cast<S>(row[j]);
    OnlineSoftmaxStep s;
    s.j = static_cast<Eigen::Index>(j);
    s.x = static_cast<double>(x);
    s.m_before = static_cast<double>(m);
    s.l_before = static_cast<double>(l);
    const S m_new = subtract_max ? std::max(m, x) : S(0);
    const S factor = rescale_factor(m, m_new);
    const S e = shifted_exp(x, m_new);
    if (std::isinf(e) && overflow < 0) overflow = s.j;
    l = factor * l + e;
    m = m_new;
    s.m_after = static_cast<double>(m);
    s.rescale = static_cast<double>(factor);
    s.l_after = static_cast<double>(l);
    out.steps.push_back(s);
  }
  out.max = static_cast<double>(m);
  out.sum = static_cast<double>(l);
  out.weights.resize(static_cast<Eigen::Index>(row.size()));
  for (size_t j = 0; j < row.size(); ++j) {
    const S w = l == 0 ? S(0) : shifted_exp(static_cast<S>(row[j]), m) / l;
    out.weights[static_cast<Eigen::Index>(j)] = static_cast<double>(w);
  }
  if (overflow >= 0) {
    out.warnings.push_back({"warning.exp_overflow",
                            {{"precision", precision},
                             {"entry", std::to_string(overflow + 1)},
                             {"x", format_number(row[static_cast<size_t>(overflow)])}}});
  }
  return out;
}

}  // namespace

OnlineSoftmax online_softmax(const std::vector<double>& row, bool subtract_max, Precision precision) {
  if (row.empty()) throw input_error(ErrorPlace("row"), "row-empty");
  if (static_cast<Eigen::Index>(row.size()) > kMaxTokens) {
    throw input_error(ErrorPlace("row"), "row-too-long",
                      {{"count", std::to_string(row.size())}, {"max", std::to_string(kMaxTokens)}});
  }
  const bool float32 = precision == Precision::Float32;
  for (size_t j = 0; j < row.size(); ++j) {
    const double x = row[j];
    const bool in_range =
        x == -kInf || (std::isfinite(x) && (!float32 || std::abs(x) <= std::numeric_limits<float>::max()));
    if (!in_range) {
      throw input_error(ErrorPlace("row", {}, static_cast<std::ptrdiff_t>(j + 1)), "row-entry",
                        {{"entry", std::to_string(j + 1)},
                         {"value", format_number(x)},
                         {"range", float32 && std::isfinite(x) ? "float32" : "any"}});
    }
  }
  return float32 ? online_softmax_in<float>(row, subtract_max, "float32")
                 : online_softmax_in<double>(row, subtract_max, "float64");
}

}  // namespace attn
