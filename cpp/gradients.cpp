// The backward pass of attention, by the chain rule, one forward step at a time in reverse.
//
// The forward trace (compute_trace) supplies every intermediate the derivatives read (A, V, the
// rotated Q and K, the scaled scores); like it, everything here is computed in the rows layout
// and each step is transposed back to the problem's layout as it is emitted, so the columns
// layout needs no formulas of its own. Each gradient step is described by the step catalogue.
#include "gradients.h"

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "normalized.h"
#include "steps.h"

namespace attn {
namespace {

/// The index of step `id` of `head` in `steps`, or -1.
int find(const std::vector<Step>& steps, const char* id, int head) {
  for (size_t i = 0; i < steps.size(); ++i) {
    if (steps[i].id == id && steps[i].head == head) return static_cast<int>(i);
  }
  return -1;
}

/// The sum of each column, as one row (a bias's gradient).
template <typename S>
Mat<S> column_sums(const Mat<S>& m) {
  return m.colwise().sum();
}

/// QK-norm's backward pass for each row: with x̂ = (x − mean)/σ and u = dy ∘ g,
/// dx = (u − mean(u) − x̂·mean(u ∘ x̂)) / σ (rms: mean 0 and no mean(u) term); `dg` gains Σ dy ∘ x̂.
template <typename S>
Mat<S> qk_norm_back(const Mat<S>& x, const Mat<S>& dy, bool layer, double eps, const std::vector<double>& g,
                    Mat<S>& dg) {
  Mat<S> dx(x.rows(), x.cols());
  const S count = static_cast<S>(x.cols());
  for (Eigen::Index r = 0; r < x.rows(); ++r) {
    const RowNorm norm = row_norm<S>(x.row(r), layer, eps);
    const S mean = static_cast<S>(norm.mean), sigma = static_cast<S>(norm.divisor);
    S mean_u = 0, mean_ux = 0;
    for (Eigen::Index k = 0; k < x.cols(); ++k) {
      const S xhat = (x(r, k) - mean) / sigma, u = dy(r, k) * static_cast<S>(g[static_cast<size_t>(k)]);
      mean_u += u;
      mean_ux += u * xhat;
      dg(0, k) += dy(r, k) * xhat;
    }
    mean_u /= count;
    mean_ux /= count;
    for (Eigen::Index k = 0; k < x.cols(); ++k) {
      const S xhat = (x(r, k) - mean) / sigma, u = dy(r, k) * static_cast<S>(g[static_cast<size_t>(k)]);
      dx(r, k) = (u - (layer ? mean_u : S(0)) - xhat * mean_ux) / sigma;
    }
  }
  return dx;
}

/// Multi-head latent attention's gradients of its inputs (DeepSeek-V2's naive form), from each
/// head's dQ_C, dK_C, dV, dq_R and the summed dk_R (all with the cached rows first):
/// c_KV = X·W_DKV feeds K_C = c_KV·W_UK and V = c_KV·W_UV per head, so dc_KV = Σ_h dK_C·W_UKᵀ +
/// dV·W_UVᵀ (its cached rows are dpast_c_KV); k_R = RoPE(X·W_KR) (cached rows: dpast_k_R);
/// Q_C = c_Q·W_UQ or X·W_Q; q_R = RoPE(c_Q·W_QR) or RoPE(X·W_QR); c_Q = X·W_DQ. RoPE is turned
/// back (its transpose) before a projection's weights. Steps: dk_R, dpast_k_R, dc_KV, dpast_c_KV,
/// dW_UK, dW_UV, dW_DKV, dW_KR, dW_UQ or dW_Q, dW_QR, dc_Q, dW_DQ, dX.
template <typename S, typename Grads, typename Emit, typename Values>
void latent_back(const Normalized& n, const Grads& lat, const Emit& emit, const Values& values, int c_kv_step,
                 int c_q_step) {
  const Eigen::Index past = n.past, fresh = n.S - n.past;
  const Rope& rope = n.options.rope;
  const Mat<S> X = n.X.cast<S>();
  const Mat<S> c_KV = values(c_kv_step);
  const auto with = [](std::vector<int> list, int more) {
    list.insert(list.begin(), more);
    return list;
  };
  // The rotary key, shared by the heads: its gradient summed, the cache's rows split off, turned back.
  Mat<S> dk_R_fresh;
  int dk_R_step = -1;
  if (n.d_r > 0) {
    dk_R_step = emit("dk_R", -1, lat.dk_R, lat.dk_R_steps);
    if (past > 0) emit("dpast_k_R", -1, Mat<S>(lat.dk_R.topRows(past)), std::vector<int>{dk_R_step});
    dk_R_fresh =
        rotate<S>(Mat<S>(lat.dk_R.bottomRows(fresh)), rope, n.key_pos, static_cast<size_t>(past), /*back=*/true);
  }
  // The latent: every head's keys and values read it.
  Mat<S> dc_KV = Mat<S>::Zero(n.S, n.d_c), dW_UK(n.d_c, n.heads * n.d_h), dW_UV(n.d_c, n.heads * n.d_v);
  for (int h = 0; h < n.heads; ++h) {
    const size_t k = static_cast<size_t>(h);
    dc_KV += lat.dK_C[k] * n.W_UK.middleCols(h * n.d_h, n.d_h).cast<S>().transpose();
    dc_KV += lat.dV[k] * n.W_UV.middleCols(h * n.d_v, n.d_v).cast<S>().transpose();
    dW_UK.middleCols(h * n.d_h, n.d_h) = c_KV.transpose() * lat.dK_C[k];
    dW_UV.middleCols(h * n.d_v, n.d_v) = c_KV.transpose() * lat.dV[k];
  }
  std::vector<int> kv_inputs = lat.dK_C_steps;
  kv_inputs.insert(kv_inputs.end(), lat.dV_steps.begin(), lat.dV_steps.end());
  const int dc_kv_step = emit("dc_KV", -1, dc_KV, kv_inputs);
  if (past > 0) emit("dpast_c_KV", -1, Mat<S>(dc_KV.topRows(past)), std::vector<int>{dc_kv_step});
  const Mat<S> dc_KV_fresh = dc_KV.bottomRows(fresh);
  emit("dW_UK", -1, dW_UK, with(lat.dK_C_steps, c_kv_step));
  emit("dW_UV", -1, dW_UV, with(lat.dV_steps, c_kv_step));
  emit("dW_DKV", -1, Mat<S>(X.transpose() * dc_KV_fresh), std::vector<int>{dc_kv_step});
  if (n.d_r > 0) emit("dW_KR", -1, Mat<S>(X.transpose() * dk_R_fresh), std::vector<int>{dk_R_step});

  // The queries: the content part from c_Q (or X), the rotary part from c_Q or X, turned back.
  std::vector<Mat<S>> dq_R_pre;
  for (const Mat<S>& d : lat.dq_R) dq_R_pre.push_back(rotate<S>(d, rope, n.query_pos, 0, /*back=*/true));
  const Mat<S> c_Q = n.W_DQ ? values(c_q_step) : Mat<S>();
  Mat<S> dX = dc_KV_fresh * n.W_DKV.cast<S>().transpose();
  if (n.d_r > 0) dX += dk_R_fresh * n.W_KR.cast<S>().transpose();
  Mat<S> dc_Q = n.W_DQ ? Mat<S>(Mat<S>::Zero(n.L, n.d_cq)) : Mat<S>();
  Mat<S> dW_Qc(n.W_DQ ? n.d_cq : n.X.cols(), n.heads * n.d_h);
  Mat<S> dW_QR(n.d_r > 0 ? n.W_QR.rows() : 0, n.heads * n.d_r);
  for (int h = 0; h < n.heads; ++h) {
    const size_t k = static_cast<size_t>(h);
    const Mat<S>& reads = n.W_DQ ? c_Q : X;
    const Matrix& W = n.W_DQ ? *n.W_UQ : n.W_Q;
    dW_Qc.middleCols(h * n.d_h, n.d_h) = reads.transpose() * lat.dQ_C[k];
    const Mat<S> back = lat.dQ_C[k] * W.middleCols(h * n.d_h, n.d_h).cast<S>().transpose();
    if (n.W_DQ)
      dc_Q += back;
    else
      dX += back;
    if (n.d_r > 0) {
      const Mat<S>& r_reads = n.qr_from_cq ? c_Q : X;
      dW_QR.middleCols(h * n.d_r, n.d_r) = r_reads.transpose() * dq_R_pre[k];
      const Mat<S> r_back = dq_R_pre[k] * n.W_QR.middleCols(h * n.d_r, n.d_r).cast<S>().transpose();
      if (n.qr_from_cq)
        dc_Q += r_back;
      else
        dX += r_back;
    }
  }
  if (n.W_DQ) {
    emit("dW_UQ", -1, dW_Qc, with(lat.dQ_C_steps, c_q_step));
  } else {
    emit("dW_Q", -1, dW_Qc, lat.dQ_C_steps);
  }
  if (n.d_r > 0) emit("dW_QR", -1, dW_QR, n.qr_from_cq ? with(lat.dq_R_steps, c_q_step) : lat.dq_R_steps);
  std::vector<int> x_inputs = {dc_kv_step};
  if (n.d_r > 0) x_inputs.push_back(dk_R_step);
  if (n.W_DQ) {
    std::vector<int> q_inputs = lat.dQ_C_steps;
    if (n.qr_from_cq) q_inputs.insert(q_inputs.end(), lat.dq_R_steps.begin(), lat.dq_R_steps.end());
    const int dc_q_step = emit("dc_Q", -1, dc_Q, q_inputs);
    emit("dW_DQ", -1, Mat<S>(X.transpose() * dc_Q), std::vector<int>{dc_q_step});
    dX += dc_Q * n.W_DQ->cast<S>().transpose();
    x_inputs.push_back(dc_q_step);
  } else {
    x_inputs.insert(x_inputs.end(), lat.dQ_C_steps.begin(), lat.dQ_C_steps.end());
  }
  if (n.d_r > 0 && !n.qr_from_cq) x_inputs.insert(x_inputs.end(), lat.dq_R_steps.begin(), lat.dq_R_steps.end());
  emit("dX", -1, dX, x_inputs);
}

template <typename S>
void backward(const Normalized& n, Trace& t) {
  std::vector<Step>& steps = t.steps;
  // The values of forward step `index` in the rows layout, in the working precision.
  auto values = [&](int index) {
    const Matrix& v = steps[static_cast<size_t>(index)].values;
    return Mat<S>((n.columns ? Matrix(v.transpose()) : v).cast<S>());
  };
  auto emit = [&](const char* id, int head, const Mat<S>& rows_layout, std::vector<int> inputs) {
    Step s;
    s.id = id;
    s.head = head;
    const Matrix m = rows_layout.template cast<double>();
    s.values = n.columns ? Matrix(m.transpose()) : m;
    s.inputs = std::move(inputs);
    describe_gradient(s, steps, n);
    steps.push_back(std::move(s));
    return static_cast<int>(steps.size()) - 1;
  };

  const Eigen::Index L = n.L, S_all = n.S, past = n.past, fresh = n.S - n.past;
  const Eigen::Index d_out = n.W_O ? n.W_O->cols() : n.d_v * n.heads;
  const Mat<S> dO = n.dO ? Mat<S>(n.dO->cast<S>()) : Mat<S>::Ones(L, d_out);
  const int dO_step = emit("dO", -1, dO, {});

  // The gradient of the concatenated head outputs: dO itself, or dO·W_Oᵀ.
  const Mat<S> d_concat = n.W_O ? Mat<S>(dO * n.W_O->cast<S>().transpose()) : dO;
  const bool head_output_step = n.heads > 1 || n.W_O.has_value();
  const bool has_mask = n.has_mask();
  const Mask mask = has_mask ? combined_mask(n) : Mask();
  const S cap = static_cast<S>(n.options.softcap);
  const S scale = static_cast<S>(t.scale);
  const Rope& rope = n.options.rope;

  Mat<S> dQ_all = Mat<S>::Zero(L, n.heads * n.d_k);
  Mat<S> dK_all = Mat<S>::Zero(fresh, n.kv_heads * n.d_k);
  Mat<S> dV_all = Mat<S>::Zero(fresh, n.kv_heads * n.d_v);
  Mat<S> dpast_K = Mat<S>::Zero(past, n.kv_heads * n.d_k);
  Mat<S> dpast_V = Mat<S>::Zero(past, n.kv_heads * n.d_v);
  std::vector<int> dQ_steps, dK_steps, dV_steps, dK_cache_steps, dV_cache_steps;
  const bool qk = n.options.qk_norm.on, halves = !n.lambdas.empty();
  Mat<S> dg_q = Mat<S>::Zero(1, n.d_k), dg_k = Mat<S>::Zero(1, n.d_k);
  std::vector<int> dgq_steps, dgk_steps, dgate_steps;
  Mat<S> dG_all = n.W_G ? Mat<S>(Mat<S>::Zero(L, n.W_G->cols())) : Mat<S>();

  // W_O reads the concatenation (several heads) or the one head's output.
  const auto emit_output_weights = [&]() {
    if (!n.W_O) return;
    const int gated = find(steps, "gated_output", 0), normed = find(steps, "head_normed", 0);
    const int last_head_step = gated >= 0 ? gated : normed >= 0 ? normed : find(steps, "head_output", 0);
    const int concat_step = n.heads > 1 ? find(steps, "concat", -1) : last_head_step;
    emit("dW_O", -1, Mat<S>(values(concat_step).transpose() * dO), {concat_step, dO_step});
    if (n.b_O) emit("db_O", -1, column_sums<S>(dO), {dO_step});
  };

  // Multi-head latent attention: each head's gradients of its content parts, its values and its
  // rotary query, and the shared rotary key's, summed over the heads (latent_back below).
  struct LatentGrads {
    std::vector<Mat<S>> dQ_C, dK_C, dV, dq_R;
    Mat<S> dk_R;
    std::vector<int> dQ_C_steps, dK_C_steps, dV_steps, dq_R_steps, dk_R_steps;
  } lat;
  if (n.latent && n.d_r > 0) lat.dk_R = Mat<S>::Zero(S_all, n.d_r);

  // From the gradients of the queries and keys as the scores read them (and of the values) to
  // the head's Q, K, V: the cache split off, RoPE and QK-norm turned back, summed into the whole.
  auto finish_head = [&](int h, Mat<S> dQh, int dQ_step, Mat<S> dK_seen, int dK_step, const Mat<S>& dV_seen,
                         int dV_seen_step) {
    const int g = n.kv_group(h);
    Mat<S> dVh = dV_seen;
    int dV_step = dV_seen_step;
    if (past > 0) {  // the cached rows' share goes to past_K / past_V, the new rows on
      dK_cache_steps.push_back(dK_step);
      dV_cache_steps.push_back(dV_step);
      dpast_K.middleCols(g * n.d_k, n.d_k) += dK_seen.topRows(past);
      dpast_V.middleCols(g * n.d_v, n.d_v) += dV_seen.topRows(past);
      dK_seen = Mat<S>(dK_seen.bottomRows(fresh));
      dVh = Mat<S>(dV_seen.bottomRows(fresh));
      dK_step = emit(rope.on ? "dK_rot" : qk ? "dK_normed" : "dK", h, dK_seen, {dK_step});
      dV_step = emit("dV", h, dVh, {dV_step});
    }
    if (rope.on) {
      dQh = rotate_head<S>(dQh, rope, halves, n.query_pos, 0, /*back=*/true);
      dQ_step = emit(qk ? "dQ_normed" : "dQ", h, dQh, {dQ_step});
      dK_seen = rotate_head<S>(dK_seen, rope, halves, n.key_pos, static_cast<size_t>(past), /*back=*/true);
      dK_step = emit(qk ? "dK_normed" : "dK", h, dK_seen, {dK_step});
    }
    if (qk) {  // QK-norm turned back: the gradients of Q and K as projected (before the norm)
      const bool layer = n.options.qk_norm.type == QkNorm::Type::Layer;
      dgq_steps.push_back(dQ_step);
      dgk_steps.push_back(dK_step);
      const int raw_q = find(steps, "Q", h), raw_k = find(steps, "K", h);
      dQh = qk_norm_back<S>(values(raw_q), dQh, layer, n.options.qk_norm.eps, n.g_q, dg_q);
      dQ_step = emit("dQ", h, dQh, {dQ_step, raw_q});
      dK_seen = qk_norm_back<S>(values(raw_k), dK_seen, layer, n.options.qk_norm.eps, n.g_k, dg_k);
      dK_step = emit("dK", h, dK_seen, {dK_step, raw_k});
    }
    dQ_all.middleCols(h * n.d_k, n.d_k) = dQh;
    dK_all.middleCols(g * n.d_k, n.d_k) += dK_seen;  // GQA: summed over the group's heads
    dV_all.middleCols(g * n.d_v, n.d_v) += dVh;
    dQ_steps.push_back(dQ_step);
    dK_steps.push_back(dK_step);
    dV_steps.push_back(dV_step);
  };

  // Differential attention: dA₁ = dA, dA₂ = −λ dA, each half's softmax (mask, softcap, scale)
  // turned back, and the halves of dQ and dK side by side.
  auto differential_back = [&](int h, const Mat<S>& Qh, const Mat<S>& Kh, const Mat<S>& dA, int dA_step, int q_step,
                               int k_step, const Mat<S>& dV_seen, int dV_seen_step) {
    const S lambda = static_cast<S>(n.lambdas[static_cast<size_t>(h)]);
    const int w1 = find(steps, "weights_1", h), w2 = find(steps, "weights_2", h);
    const int d1 = emit("dweights_1", h, dA, {dA_step});
    const int d2 = emit("dweights_2", h, Mat<S>(-lambda * dA), {dA_step});
    const Eigen::Index w = n.d_k / 2;
    Mat<S> dQh(L, n.d_k), dK_seen(S_all, n.d_k);
    for (int half = 0; half < 2; ++half) {
      const Mat<S> Ah = values(half == 0 ? w1 : w2);
      const Mat<S> dAh = half == 0 ? dA : Mat<S>(-lambda * dA);
      const Mat<S> Qk = Qh.middleCols(half * w, w), Kk = Kh.middleCols(half * w, w);
      const Mat<S> d = differential_half_back<S>(n, Ah, dAh, Qk, Kk, has_mask ? &mask : nullptr, scale);
      dQh.middleCols(half * w, w) = d * Kk;
      dK_seen.middleCols(half * w, w) = d.transpose() * Qk;
    }
    const int dQ_step = emit(rope.on ? "dQ_rot" : qk ? "dQ_normed" : "dQ", h, dQh, {d1, d2, k_step});
    const int dK_step = emit(past > 0  ? "dK_cache"
                             : rope.on ? "dK_rot"
                             : qk      ? "dK_normed"
                                       : "dK",
                             h, dK_seen, {d1, d2, q_step});
    finish_head(h, dQh, dQ_step, dK_seen, dK_step, dV_seen, dV_seen_step);
  };

  for (int h = 0; h < n.heads; ++h) {
    if (n.linear()) {
      const int g = n.kv_group(h);
      int d_head = dO_step;
      const Mat<S> dOh = d_concat.middleCols(h * n.d_v, n.d_v);
      if (head_output_step) d_head = emit("dhead_output", h, dOh, {dO_step});
      // O = (Λ·V) / D row by row, D_i = Σ_j Λ_ij, Λ = (φ(Q)φ(K)ᵀ) ∘ C (C: the decay and the causal
      // mask). dΛ_ij = dO_i·(V_j − O_i) / D_i (dO_i·V_j without normalizing), dV = Λᵀ·(dO / D),
      // dφ(Q) = (dΛ ∘ C)·φ(K), dφ(K) = (dΛ ∘ C)ᵀ·φ(Q), dQ = dφ(Q) ∘ φ′(Q), dK likewise.
      const int phi_q_step = find(steps, "phi_Q", h), phi_k_step = find(steps, "phi_K", h);
      const int scores_step = find(steps, "linear_scores", h), norm_step = find(steps, "normalizer", h);
      const int out_step = head_output_step ? find(steps, "head_output", h) : find(steps, "output", -1);
      const int q_in = find(steps, "Q", h), k_in = find(steps, "K", h), v_in = find(steps, "V", h);
      const Mat<S> phi_Q = values(phi_q_step), phi_K = values(phi_k_step), Lambda = values(scores_step);
      const Mat<S> Vh = values(v_in);
      Mat<S> dU = dOh;
      Mat<S> dLambda = dOh * Vh.transpose();
      std::vector<int> d_inputs = {d_head, v_in};
      if (norm_step >= 0) {
        const Mat<S> D = values(norm_step), Oh = values(out_step);
        for (Eigen::Index i = 0; i < L; ++i) {
          const S row_dot = dOh.row(i).dot(Oh.row(i));
          dLambda.row(i).array() -= row_dot;
          dLambda.row(i) /= D(i, 0);
          dU.row(i) /= D(i, 0);
        }
        d_inputs.push_back(out_step);
        d_inputs.push_back(norm_step);
      }
      const int dLambda_step = emit("dlinear_scores", h, dLambda, d_inputs);
      const Mat<S> dVh = Lambda.transpose() * dU;
      const int dV_step = emit(
          "dV", h, dVh,
          norm_step >= 0 ? std::vector<int>{scores_step, d_head, norm_step} : std::vector<int>{scores_step, d_head});
      Mat<S> dC = dLambda;
      if (n.options.causal) {
        for (Eigen::Index i = 0; i < L; ++i) {
          for (Eigen::Index j = 0; j < S_all; ++j) dC(i, j) *= static_cast<S>(n.linear_factor(i, j));
        }
      }
      const Mat<S> dphi_Q = dC * phi_K, dphi_K = dC.transpose() * phi_Q;
      const int dphi_q_step = emit("dphi_Q", h, dphi_Q, {dLambda_step, phi_k_step});
      const int dphi_k_step = emit("dphi_K", h, dphi_K, {dLambda_step, phi_q_step});
      const FeatureMap map = n.feature_map();
      const auto through = [map](const Mat<S>& d, const Mat<S>& x) {
        Mat<S> out = d;
        for (Eigen::Index k = 0; k < out.size(); ++k) {
          out.data()[k] *= static_cast<S>(feature_map_slope(map, static_cast<double>(x.data()[k])));
        }
        return out;
      };
      const Mat<S> dQh = through(dphi_Q, values(q_in)), dKh = through(dphi_K, values(k_in));
      dQ_all.middleCols(h * n.d_k, n.d_k) = dQh;
      dK_all.middleCols(g * n.d_k, n.d_k) += dKh;
      dV_all.middleCols(g * n.d_v, n.d_v) += dVh;
      dQ_steps.push_back(emit("dQ", h, dQh, {dphi_q_step, q_in}));
      dK_steps.push_back(emit("dK", h, dKh, {dphi_k_step, k_in}));
      dV_steps.push_back(dV_step);
      continue;
    }

    // The forward steps the derivatives read: Q and K as the scores read them, V as the
    // weights read it, the weights, and the scaled scores (softcap's derivative).
    // Latent attention: the content parts Q_C, K_C (the rotary parts are read after dscores) and
    // V from the latent, cached rows included.
    const int q_step = n.latent ? find(steps, "Q_C", h) : find(steps, rope.on ? "Q_rot" : qk ? "Q_normed" : "Q", h);
    const int k_step = n.latent ? find(steps, "K_C", h)
                                : find(steps,
                                       past > 0  ? "K_cache"
                                       : rope.on ? "K_rot"
                                       : qk      ? "K_normed"
                                                 : "K",
                                       h);
    const int v_step = find(steps, past > 0 && !n.latent ? "V_cache" : "V", h);
    const int weights_step = find(steps, "weights", h);
    const Mat<S> Qh = values(q_step), Kh = values(k_step), Vh = values(v_step), A = values(weights_step);

    int d_head = dO_step;
    Mat<S> dOh = d_concat.middleCols(h * n.d_v, n.d_v);
    const int head_step = find(steps, "head_output", h), normed_step = find(steps, "head_normed", h);
    const int gate_step = find(steps, "gate", h);
    if (gate_step >= 0) {  // head̃ = head ∘ G: dG = dhead̃ ∘ head (summed over a head's features when headwise)
      d_head = emit("dgated_output", h, dOh, {dO_step});
      const int pre_step = normed_step >= 0 ? normed_step : head_step;
      const Mat<S> pre = values(pre_step), G = values(gate_step);
      const Mat<S> product = dOh.cwiseProduct(pre);
      const Mat<S> dG = n.gate_headwise ? Mat<S>(product.rowwise().sum()) : product;
      dgate_steps.push_back(emit("dgate", h, dG, {d_head, pre_step}));
      if (n.gate_headwise) {
        dG_all.col(h) = dG.col(0);
      } else {
        dG_all.middleCols(h * n.d_v, n.d_v) = dG;
      }
      for (Eigen::Index j = 0; j < n.d_v; ++j) dOh.col(j) = dOh.col(j).cwiseProduct(G.col(n.gate_headwise ? 0 : j));
      d_head = emit(normed_step >= 0 ? "dhead_normed" : "dhead_output", h, dOh, {d_head, gate_step});
    }
    if (normed_step >= 0) {  // y = x / r · c, r = √(mean(x²) + 1e-5): dx = (c/r)(dy − x̂·mean(dy ∘ x̂))
      if (gate_step < 0) d_head = emit("dhead_normed", h, dOh, {dO_step});
      const std::vector<double> gain(static_cast<size_t>(n.d_v), 1 - n.options.differential.lambda_init);
      Mat<S> unused = Mat<S>::Zero(1, n.d_v);
      dOh = qk_norm_back<S>(values(head_step), dOh, false, 1e-5, gain, unused);
      d_head = emit("dhead_output", h, dOh, {d_head, head_step});
    }
    if (gate_step < 0 && normed_step < 0 && head_output_step) d_head = emit("dhead_output", h, dOh, {dO_step});

    const Mat<S> dA = dOh * Vh.transpose();
    const int dA_step = emit("dA", h, dA, {d_head, v_step});
    const Mat<S> dV_seen = A.transpose() * dOh;
    const int dV_seen_step = emit(past > 0 && !n.latent ? "dV_cache" : "dV", h, dV_seen, {weights_step, d_head});

    if (halves) {
      differential_back(h, Qh, Kh, dA, dA_step, q_step, k_step, dV_seen, dV_seen_step);
      continue;
    }

    Mat<S> d;
    int d_step;
    if (n.sigmoid) {  // σ' = σ(1 − σ), entry by entry; a hidden key's weight is 0, so is its gradient
      d = dA.cwiseProduct(A).cwiseProduct(Mat<S>::Ones(L, S_all) - A);
      d_step = emit("dS", h, d, {weights_step, dA_step});
    } else {
      // The softmax's Jacobian, row by row: dS_ij = A_ij (dA_ij - Σ_k A_ik dA_ik). A sink logit
      // is one more entry of the row whose dA is 0 (it adds nothing to the output), so the same
      // formula holds with the weights as they are (summing to 1 - the sink's share).
      d = A.cwiseProduct(dA);
      const Mat<S> row_sums = d.rowwise().sum();
      d -= A.cwiseProduct(row_sums.replicate(1, S_all));
      d_step = emit("dS", h, d, {weights_step, dA_step});
    }
    if (has_mask) {
      // A hidden score is the fill (-inf or mask_fill) whatever the score was: no gradient
      // passes. With -inf the weight is already 0; a finite fill leaves dS nonzero there.
      for (Eigen::Index i = 0; i < L; ++i) {
        for (Eigen::Index j = 0; j < S_all; ++j) {
          if (mask.hidden(i, j)) d(i, j) = 0;
        }
      }
      d_step = emit("dS_kept", h, d, {d_step, find(steps, "mask", h)});
    }
    // ALiBi's bias and an additive mask are added constants: the gradient passes unchanged.
    if (cap > 0) {
      const int scaled_step = find(steps, "scaled", h);
      const Mat<S> tanh = (values(scaled_step).array() / cap).tanh().matrix();
      d = d.cwiseProduct((Mat<S>::Ones(L, S_all) - tanh.cwiseProduct(tanh)));
      d_step = emit("dS_uncapped", h, d, {d_step, scaled_step});
    }
    d *= scale;
    const int dscores_step = emit("dscores", h, d, {d_step});
    if (n.latent) {  // the scores are Q_C·K_Cᵀ + q_R·k_Rᵀ: each part's factors take the same dscores
      const Mat<S> dQ_C = d * Kh, dK_C = d.transpose() * Qh;
      lat.dQ_C.push_back(dQ_C);
      lat.dK_C.push_back(dK_C);
      lat.dV.push_back(dV_seen);
      lat.dQ_C_steps.push_back(emit("dQ_C", h, dQ_C, {dscores_step, k_step}));
      lat.dK_C_steps.push_back(emit("dK_C", h, dK_C, {dscores_step, q_step}));
      lat.dV_steps.push_back(dV_seen_step);
      if (n.d_r > 0) {
        const int q_r_step = find(steps, "q_R", h), k_r_step = find(steps, "k_R", -1);
        const Mat<S> dq_R = d * values(k_r_step), dk_R = d.transpose() * values(q_r_step);
        lat.dq_R.push_back(dq_R);
        lat.dk_R += dk_R;
        lat.dq_R_steps.push_back(emit("dq_R", h, dq_R, {dscores_step, k_r_step}));
        lat.dk_R_steps.push_back(emit("dk_R", h, dk_R, {dscores_step, q_r_step}));
      }
      continue;
    }

    const Mat<S> dQh = d * Kh;
    const Mat<S> dK_seen = d.transpose() * Qh;
    const int dQ_step = emit(rope.on ? "dQ_rot" : qk ? "dQ_normed" : "dQ", h, dQh, {dscores_step, k_step});
    const char* dK_seen_id = past > 0 ? "dK_cache" : rope.on ? "dK_rot" : qk ? "dK_normed" : "dK";
    const int dK_step = emit(dK_seen_id, h, dK_seen, {dscores_step, q_step});
    finish_head(h, dQh, dQ_step, dK_seen, dK_step, dV_seen, dV_seen_step);
  }
  // The gradients of the inputs as given, whole.
  if (n.latent) {
    emit_output_weights();
    latent_back<S>(n, lat, emit, values, find(steps, "c_KV", -1), find(steps, "c_Q", -1));
    return;
  }
  const int dQ = emit("dQ", -1, dQ_all, dQ_steps);
  const int dK = emit("dK", -1, dK_all, dK_steps);
  const int dV = emit("dV", -1, dV_all, dV_steps);
  if (past > 0) {
    emit("dpast_K", -1, dpast_K, dK_cache_steps);
    emit("dpast_V", -1, dpast_V, dV_cache_steps);
  }
  if (qk) {
    emit("dg_q", -1, dg_q, dgq_steps);
    emit("dg_k", -1, dg_k, dgk_steps);
  }
  emit_output_weights();
  if (n.direct) return;

  // Projections: Q = X'·W_Q + b_Q (X' = X plus its positions), K and V from X_kv (X' itself in
  // self-attention). dW = X'ᵀ·dQ, db = Σ over tokens, dX' = dQ·W_Qᵀ (+ the K and V terms).
  const int x_pos_step = find(steps, "X_pos", -1);
  const Mat<S> X = x_pos_step >= 0 ? values(x_pos_step) : Mat<S>(n.X.cast<S>());
  const Mat<S> X_kv = n.cross ? Mat<S>(n.X_kv.cast<S>()) : X;
  std::vector<int> x_input = x_pos_step >= 0 ? std::vector<int>{x_pos_step} : std::vector<int>{};
  const std::vector<int> kv_input = n.cross ? std::vector<int>{} : x_input;
  auto with = [](std::vector<int> list, int more) {
    list.push_back(more);
    return list;
  };
  emit("dW_Q", -1, Mat<S>(X.transpose() * dQ_all), with(x_input, dQ));
  if (n.b_Q) emit("db_Q", -1, column_sums<S>(dQ_all), {dQ});
  emit("dW_K", -1, Mat<S>(X_kv.transpose() * dK_all), with(kv_input, dK));
  if (n.b_K) emit("db_K", -1, column_sums<S>(dK_all), {dK});
  emit("dW_V", -1, Mat<S>(X_kv.transpose() * dV_all), with(kv_input, dV));
  if (n.b_V) emit("db_V", -1, column_sums<S>(dV_all), {dV});
  Mat<S> dX_q = dQ_all * n.W_Q.cast<S>().transpose();
  std::vector<int> dX_inputs = n.cross ? std::vector<int>{dQ} : std::vector<int>{dQ, dK, dV};
  if (n.W_G) {  // the gate: G = σ(X'·W_G + b_G), so dZ = dG ∘ G(1 − G) for its argument Z
    Mat<S> Z = X * n.W_G->cast<S>();
    if (n.b_G) Z.rowwise() += n.b_G->cast<S>().transpose();
    const Mat<S> G = Z.unaryExpr([](S z) { return sigmoid<S>(z); });
    const Mat<S> dZ = dG_all.cwiseProduct(G).cwiseProduct(Mat<S>::Ones(G.rows(), G.cols()) - G);
    const int dgate = emit("dgate", -1, dG_all, dgate_steps);
    const int gates = find(steps, "gate", 0);  // the gate's numbers: G(1 − G) is σ's slope
    emit("dW_G", -1, Mat<S>(X.transpose() * dZ), with(with(x_input, dgate), gates));
    if (n.b_G) emit("db_G", -1, column_sums<S>(dZ), {dgate});
    dX_q += dZ * n.W_G->cast<S>().transpose();
    dX_inputs.push_back(dgate);
  }
  const Mat<S> dX_kv = dK_all * n.W_K.cast<S>().transpose() + dV_all * n.W_V.cast<S>().transpose();
  // A position encoding is added to X, so dX = dX' (and dP = dX' for learned positions).
  const int dX = n.cross ? emit("dX", -1, dX_q, dX_inputs) : emit("dX", -1, Mat<S>(dX_q + dX_kv), dX_inputs);
  if (n.cross) emit("dX_kv", -1, dX_kv, {dK, dV});
  if (n.P) emit("dP", -1, values(dX), {dX});
}

/// Σ O ∘ dO in double (dO absent: Σ O).
double loss_of(const Matrix& output, const std::optional<Matrix>& dO) {
  return dO ? output.cwiseProduct(*dO).sum() : output.sum();
}

}  // namespace

Gradients gradients(const Problem& problem, const std::optional<Matrix>& dO) {
  Normalized n = normalize(problem);
  Gradients g;
  g.trace = compute_trace(n);
  const Matrix& output = g.trace.output;  // the problem's layout, as dO is given
  if (dO) {
    const auto shape = [](const Matrix& m) { return std::to_string(m.rows()) + "x" + std::to_string(m.cols()); };
    // Rows and columns in the problem's layout: its token axis first.
    const Eigen::Index tokens = n.columns ? dO->cols() : dO->rows(),
                       out_tokens = n.columns ? output.cols() : output.rows();
    const Eigen::Index features = n.columns ? dO->rows() : dO->cols(),
                       out_features = n.columns ? output.rows() : output.cols();
    // axis: the token axis ("tokens") or the feature axis; layout: the problem's.
    const auto mismatch = [&](Eigen::Index have, Eigen::Index want, const char* axis) {
      throw input_error(ErrorPlace{"dO"}, "gradient-shape",
                        {{"have", std::to_string(have)},
                         {"axis", axis},
                         {"layout", n.columns ? "columns" : "rows"},
                         {"want", std::to_string(want)},
                         {"shape", shape(*dO)},
                         {"output_shape", shape(output)}});
    };
    if (tokens != out_tokens) mismatch(tokens, out_tokens, "tokens");
    if (features != out_features) mismatch(features, out_features, "features");
    for (Eigen::Index i = 0; i < dO->rows(); ++i) {
      for (Eigen::Index j = 0; j < dO->cols(); ++j) {
        if (std::isfinite((*dO)(i, j))) continue;
        // dO as given (the problem's layout): the row and column the user typed it at.
        throw input_error(
            ErrorPlace{"dO", {}, i + 1, j + 1}, "gradient-not-finite",
            {{"row", std::to_string(i + 1)}, {"column", std::to_string(j + 1)}, {"value", format_number((*dO)(i, j))}});
      }
    }
    n.dO = n.columns ? Matrix(dO->transpose()) : *dO;
  }
  if (n.options.precision == Precision::Float32) {
    backward<float>(n, g.trace);
  } else {
    backward<double>(n, g.trace);
  }
  g.loss = loss_of(output, dO);
  return g;
}

Gradients gradients(const Problem& problem) { return gradients(problem, problem.dO); }

}  // namespace attn
