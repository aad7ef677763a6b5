// What must hold for every trace attn::run returns, whatever the problem: checked by the
// fuzz_run libFuzzer target and by tests/cpp/test_robustness.cpp. Header-only, no test framework.
//
// check_trace() returns "" when the trace is sound, otherwise the first violation in words.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "attention.h"

namespace attn::invariants {

inline std::string shape_of(const Matrix& m) { return std::to_string(m.rows()) + "x" + std::to_string(m.cols()); }

/// Every weight in [0, 1], never NaN; each query's weights sum to 1 (1 minus the sink's share
/// with a sink logit; within the precision's rounding) or are all exactly 0 for a fully masked
/// query, which the facts then list. With fully_masked "nan" such a row is all NaN instead; with
/// a finite mask_fill it sums to 1 like any other (the facts still list it).
/// `w` is in the rows layout (queries as rows).
inline std::string check_weights(const Matrix& w, const HeadFacts& facts, const Options& o) {
  const double tolerance = o.precision == Precision::Float32 ? 1e-4 : 1e-9;
  const bool sink = facts.sink_share.size() > 0;
  const bool finite_fill = std::isfinite(o.mask_fill);
  std::vector<int> zero_rows;
  for (Eigen::Index i = 0; i < w.rows(); ++i) {
    double sum = 0;
    bool all_zero = true;
    if (o.fully_masked == FullyMasked::NaN && !sink && w.row(i).hasNaN()) {
      if (!w.row(i).array().isNaN().all()) return "a fully masked row is only partly NaN";
      zero_rows.push_back(static_cast<int>(i));  // the NaN row stands for the fully masked one
      continue;
    }
    for (Eigen::Index j = 0; j < w.cols(); ++j) {
      const double x = w(i, j);
      if (std::isnan(x) || x < 0 || x > 1) {
        std::ostringstream out;
        out << "weight (" << i << ", " << j << ") of head " << facts.head << " is " << x;
        return out.str();
      }
      sum += x;
      all_zero = all_zero && x == 0;
    }
    const double expected = sink ? 1 - facts.sink_share[i] : 1.0;
    if (all_zero) {
      zero_rows.push_back(static_cast<int>(i));
    } else if (std::abs(sum - expected) > tolerance * static_cast<double>(w.cols())) {
      std::ostringstream out;
      out.precision(17);
      out << "weights of query " << i << " of head " << facts.head << " sum to " << sum;
      return out.str();
    }
  }
  if (!finite_fill && !sink && zero_rows != facts.fully_masked) {
    return "head " + std::to_string(facts.head) + ": the facts' fully_masked rows differ from the all-zero weight rows";
  }
  if (facts.weight_sums.size() != w.rows()) return "facts.weight_sums has the wrong size";
  return "";
}

/// Whether the problem holds the input a step names in `given`.
inline bool problem_has(const Problem& p, const std::string& name) {
  if (name == "mask") return p.options.mask.has_value();
  if (name == "P") return p.P.has_value();
  if (name == "past_K") return p.past_K.has_value();
  if (name == "past_V") return p.past_V.has_value();
  const std::pair<const char*, bool> inputs[] = {
      {"Q", p.Q.has_value()},       {"K", p.K.has_value()},     {"V", p.V.has_value()},     {"X", p.X.has_value()},
      {"X_kv", p.X_kv.has_value()}, {"W_Q", p.W_Q.has_value()}, {"W_K", p.W_K.has_value()}, {"W_V", p.W_V.has_value()},
      {"W_O", p.W_O.has_value()},   {"b_Q", p.b_Q.has_value()}, {"b_K", p.b_K.has_value()}, {"b_V", p.b_V.has_value()},
      {"b_O", p.b_O.has_value()}};
  for (const auto& [input, present] : inputs) {
    if (name == input) return present;
  }
  return false;
}

/// Every step describes itself soundly: its caption's message id, a symbol and formulas; inputs that are earlier
/// steps (of the same head for per-head steps); given inputs the problem holds; the key/value
/// group of its head; a feature slice inside the projection; axes that match its shape.
/// The rows of the KV cache (past_K), in the problem's layout.
inline Eigen::Index cached_rows(const Problem& p) {
  if (!p.past_K) return 0;
  return p.options.layout == Layout::Columns ? p.past_K->cols() : p.past_K->rows();
}

/// Steps that hold only the new keys or values (the cache's rows come after them).
inline bool new_keys_only(const std::string& id) { return id == "K" || id == "V" || id == "K_rot"; }

inline std::string check_metadata(const Problem& p, const Trace& t) {
  const int group = t.heads / t.kv_heads;
  const bool columns = p.options.layout == Layout::Columns;
  const Eigen::Index past = cached_rows(p);
  for (size_t k = 0; k < t.steps.size(); ++k) {
    const Step& s = t.steps[k];
    const std::string where = "step " + std::to_string(k) + " (" + s.id + "/" + std::to_string(s.head) + ")";
    if (s.title_id != "step." + s.id && s.title_id != "step.dS.sigmoid")
      return where + " has the caption id " + s.title_id;
    if (s.symbol.empty() || s.tex.empty() || s.text.empty()) {
      return where + " lacks a symbol or formula";
    }
    const bool projection = s.id == "Q" || s.id == "K" || s.id == "V";
    // Q, K and V read X_pos when positions are added to X, else nothing; the steps made from the
    // problem alone (the position encoding, the mask, the ALiBi bias) read nothing.
    const bool source = s.id == "positional" || s.id == "mask" || s.id == "alibi" || s.id == "rope_angles";
    if (s.inputs.empty() && !projection && !source) return where + " reads no step";
    if (!s.inputs.empty() && source) return where + " reads a step";
    for (int i : s.inputs) {
      if (i < 0 || static_cast<size_t>(i) >= k)
        return where + " reads step " + std::to_string(i) + ", not an earlier one";
      const Step& in = t.steps[static_cast<size_t>(i)];
      if (projection && in.id != "X_pos") return where + " reads " + in.id + " instead of X_pos";
      // Every head's rotation reads the one table of RoPE's angles.
      const bool shared = in.id == "rope_angles" && (s.id == "Q_rot" || s.id == "K_rot");
      if (s.head >= 0 && in.head != s.head && !projection && !shared)
        return where + " reads a step of head " + std::to_string(in.head);
    }
    // How it reads each input (lineage follows it): one read per input, each tie between an axis
    // of the step (its row or column only when both are features) and an axis of the input.
    if (s.reads.size() != s.inputs.size()) return where + " has " + std::to_string(s.reads.size()) + " reads";
    for (size_t r = 0; r < s.reads.size(); ++r) {
      const Step& in = t.steps[static_cast<size_t>(s.inputs[r])];
      for (const attn::Tie& tie : s.reads[r].ties) {
        const bool positional = tie.step == attn::TieAxis::Row || tie.step == attn::TieAxis::Column;
        const auto axis = static_cast<Axis>(tie.step);
        const bool step_side = positional ? s.row_axis == Axis::Features && s.col_axis == Axis::Features
                                          : s.row_axis == axis || s.col_axis == axis;
        if (!step_side || (in.row_axis != tie.input && in.col_axis != tie.input))
          return where + " ties an axis it or " + in.id + " lacks";
      }
    }
    if (s.id == "concat") {
      if (static_cast<int>(s.inputs.size()) != t.heads) return where + " does not read every head's output";
      for (int h = 0; h < t.heads; ++h) {
        const Step& in = t.steps[static_cast<size_t>(s.inputs[static_cast<size_t>(h)])];
        if (in.id != "head_output" || in.head != h)
          return where + " reads " + in.id + " instead of head_output " + std::to_string(h);
      }
    }
    if (projection && s.given.empty()) return where + " names no problem input";
    for (const std::string& name : s.given) {
      if (!problem_has(p, name)) return where + " names " + name + ", which the problem does not hold";
    }
    const int want_group = s.head >= 0 ? s.head / group : -1;
    if (s.kv_group != want_group || s.kv_group >= t.kv_heads) {
      return where + " has kv_group " + std::to_string(s.kv_group) + ", expected " + std::to_string(want_group);
    }
    const bool query_slice = s.id == "Q" || s.id == "Q_rot";
    const bool key_slice = s.id == "K" || s.id == "K_rot" || s.id == "K_cache";
    const bool value_slice = s.id == "V" || s.id == "V_cache";
    const Eigen::Index width = query_slice || key_slice ? t.d_k : value_slice || s.id == "head_output" ? t.d_v : 0;
    const Eigen::Index full = query_slice   ? t.d_k * t.heads
                              : key_slice   ? t.d_k * t.kv_heads
                              : value_slice ? t.d_v * t.kv_heads
                                            : t.d_v * t.heads;
    if (s.feature_count != width || s.feature_first < 0 || (width > 0 && s.feature_first + width > full) ||
        (width == 0 && s.feature_first != 0)) {
      return where + " has the feature slice [" + std::to_string(s.feature_first) + ", +" +
             std::to_string(s.feature_count) + ")";
    }
    const bool additive_mask = p.options.mask && p.options.mask_kind == MaskKind::Additive;
    const ValueKind kind = s.id == "weights" ? ValueKind::Probability
                           : s.id == "alibi" ? ValueKind::AdditiveBias
                           : s.id == "mask"  ? (additive_mask ? ValueKind::AdditiveBias : ValueKind::KeepMask)
                                             : ValueKind::Signed;
    if (s.kind != kind) return where + " has the wrong kind of values";
    const Eigen::Index keys = new_keys_only(s.id) ? t.keys - past : t.keys;
    auto fits = [&](Axis axis, Eigen::Index size) {
      if (axis == Axis::Positions) return s.id == "rope_angles";
      return axis == Axis::Features || size == (axis == Axis::Queries ? t.queries : keys);
    };
    // Tokens (queries or keys) run down the rows in the rows layout, across in the columns layout.
    const Axis token_axis = columns ? s.col_axis : s.row_axis;
    if (!fits(s.row_axis, s.values.rows()) || !fits(s.col_axis, s.values.cols()) || s.row_axis == s.col_axis ||
        token_axis == Axis::Features) {
      return where + "'s axes do not match its shape " + shape_of(s.values);
    }
  }
  return "";
}

/// The trace's steps are in the documented order, each with the documented shape; weights
/// are sound (check_weights); fully masked queries and non-finite output rows have warnings.
inline std::string check_trace(const Problem& p, const Trace& t) {
  const Options& o = p.options;
  const bool columns = o.layout == Layout::Columns;
  const bool float32 = o.precision == Precision::Float32;
  const Eigen::Index L = t.queries, S = t.keys, dk = t.d_k, dv = t.d_v;
  const Eigen::Index past = cached_rows(p), S_new = S - past;
  const int heads = t.heads;
  if (heads != o.heads) return "trace.heads differs from options.heads";
  if (t.kv_heads != (o.kv_heads == 0 ? o.heads : o.kv_heads)) return "trace.kv_heads is wrong";
  if (static_cast<int>(t.facts.size()) != heads) return "one HeadFacts per head expected";

  const bool window = !(std::isinf(o.window_left) && std::isinf(o.window_right));
  const bool has_mask = o.mask.has_value() || o.causal || window;
  const bool alibi = o.alibi || !o.alibi_slopes.empty();
  const bool has_wo = p.W_O.has_value();
  struct Want {
    std::string id;
    int head;
    Eigen::Index rows, cols;  // rows layout
  };
  std::vector<Want> want;
  if (p.P || o.positional != Positional::None) {
    const Eigen::Index d_model = columns ? p.X->rows() : p.X->cols();
    want.push_back({"positional", -1, L, d_model});
    want.push_back({"X_pos", -1, L, d_model});
  }
  if (o.rope.on) {
    // One row per position a query or key sits at (those the cos/sin tables hold), one column
    // per rotated pair.
    std::vector<double> positions;
    for (Eigen::Index i = 0; i < L; ++i) {
      positions.push_back(o.query_positions.empty() ? static_cast<double>(past + i)
                                                    : o.query_positions[static_cast<size_t>(i)]);
    }
    for (Eigen::Index j = 0; j < S; ++j) {
      positions.push_back(o.key_positions.empty() ? static_cast<double>(j) : o.key_positions[static_cast<size_t>(j)]);
    }
    if (o.rope.cos) {
      const auto rows = static_cast<double>(o.rope.cos->rows());
      positions.erase(std::remove_if(positions.begin(), positions.end(), [&](double x) { return x >= rows; }),
                      positions.end());
    }
    std::sort(positions.begin(), positions.end());
    positions.erase(std::unique(positions.begin(), positions.end()), positions.end());
    const Eigen::Index dims = o.rope.dims == 0 ? dk : o.rope.dims;
    want.push_back({"rope_angles", -1, static_cast<Eigen::Index>(positions.size()), dims / 2});
  }
  for (int h = 0; h < heads; ++h) {
    want.push_back({"Q", h, L, dk});
    want.push_back({"K", h, S_new, dk});
    want.push_back({"V", h, S_new, dv});
    if (o.rope.on) {
      want.push_back({"Q_rot", h, L, dk});
      want.push_back({"K_rot", h, S_new, dk});
    }
    if (past > 0) {
      want.push_back({"K_cache", h, S, dk});
      want.push_back({"V_cache", h, S, dv});
    }
    for (const char* id : {"scores", "scaled"}) want.push_back({id, h, L, S});
    if (o.softcap > 0) want.push_back({"softcapped", h, L, S});
    if (alibi) {
      want.push_back({"alibi", h, L, S});
      want.push_back({"biased", h, L, S});
    }
    if (has_mask) {
      want.push_back({"mask", h, L, S});
      want.push_back({"masked", h, L, S});
    }
    want.push_back({"weights", h, L, S});
    if (heads > 1 || has_wo) want.push_back({"head_output", h, L, dv});
  }
  if (heads > 1) want.push_back({"concat", -1, L, dv * heads});
  const Eigen::Index out_cols = has_wo ? (columns ? p.W_O->rows() : p.W_O->cols()) : dv * heads;
  want.push_back({"output", -1, L, out_cols});

  if (t.steps.size() != want.size()) {
    std::string ids;
    for (const Step& s : t.steps) ids += " " + s.id + std::to_string(s.head);
    return "expected " + std::to_string(want.size()) + " steps, got " + std::to_string(t.steps.size()) + ":" + ids;
  }
  for (size_t k = 0; k < want.size(); ++k) {
    const Step& s = t.steps[k];
    const Want& w = want[k];
    const Eigen::Index r = columns ? w.cols : w.rows, c = columns ? w.rows : w.cols;
    if (s.id != w.id || s.head != w.head) {
      return "step " + std::to_string(k) + " is " + s.id + "/" + std::to_string(s.head) + ", expected " + w.id + "/" +
             std::to_string(w.head);
    }
    if (s.values.rows() != r || s.values.cols() != c) {
      return "step " + s.id + " of head " + std::to_string(s.head) + " is " + shape_of(s.values) + ", expected " +
             std::to_string(r) + "x" + std::to_string(c);
    }
    if (s.id == "weights") {
      const Matrix w_rows = columns ? Matrix(s.values.transpose()) : s.values;
      const std::string problem = check_weights(w_rows, t.facts[static_cast<size_t>(s.head)], o);
      if (!problem.empty()) return problem;
    }
    if (float32) {  // every value is a float32 value
      for (Eigen::Index i = 0; i < s.values.size(); ++i) {
        const double v = s.values.data()[i];
        if (!std::isnan(v) && static_cast<double>(static_cast<float>(v)) != v) {
          return "step " + s.id + " holds a value that is not a float32 in a float32 trace";
        }
      }
    }
  }
  const Matrix& last = t.steps.back().values;
  if (!(t.output.rows() == last.rows() && t.output.cols() == last.cols())) {
    return "trace.output has shape " + shape_of(t.output) + " but the output step " + shape_of(last);
  }
  for (Eigen::Index i = 0; i < t.output.size(); ++i) {
    const double a = t.output.data()[i], b = last.data()[i];
    if (!(a == b || (std::isnan(a) && std::isnan(b)))) return "trace.output != the output step";
  }

  // Warnings: one per fully masked query (of head 0: the mask is shared), one per
  // non-finite output row.
  // A warning is a message (its words are the catalogues'): found here by its id and its row.
  const char* axis = columns ? "column" : "row";
  const auto warned = [&](const std::string& id_prefix, const std::string& row) {
    for (const Message& m : t.warnings) {
      if (m.id.rfind(id_prefix, 0) != 0) continue;
      bool same_row = false, same_axis = m.id == "warning.fill_leak";
      for (const auto& [name, value] : m.params) {
        same_row = same_row || (name == "row" && value == row);
        same_axis = same_axis || (name == "axis" && value == axis);
      }
      if (same_row && same_axis) return true;
    }
    return false;
  };
  for (int row : t.facts[0].fully_masked) {
    if (!warned("warning.fully_masked", std::to_string(row + 1))) {
      return std::string("missing warning: ") + axis + " " + std::to_string(row + 1) + " of the mask hides every key";
    }
  }
  const Matrix out_rows = columns ? Matrix(t.output.transpose()) : t.output;
  for (Eigen::Index i = 0; i < out_rows.rows(); ++i) {
    if (out_rows.row(i).allFinite()) continue;
    const auto& fully = t.facts[0].fully_masked;
    if (o.fully_masked == FullyMasked::NaN &&
        std::find(fully.begin(), fully.end(), static_cast<int>(i)) != fully.end()) {
      continue;  // asked for: the row is NaN
    }
    if (!warned("warning.overflow", std::to_string(i + 1))) {
      return std::string("missing warning: output ") + axis + " " + std::to_string(i + 1) + " is not finite";
    }
  }
  return check_metadata(p, t);
}

/// True if no step holds NaN or ±inf, except -inf in the mask and masked steps.
inline std::string check_all_finite(const Trace& t) {
  for (const Step& s : t.steps) {
    for (Eigen::Index i = 0; i < s.values.size(); ++i) {
      const double v = s.values.data()[i];
      if (std::isfinite(v)) continue;
      if ((s.id == "masked" || s.id == "mask") && v == -std::numeric_limits<double>::infinity()) continue;
      std::ostringstream out;
      out << "step " << s.id << " of head " << s.head << " holds " << v;
      return out.str();
    }
  }
  return "";
}

/// The output of `p` computed again, independently: plain loops in long double, from the
/// problem as the user gave it (no code shared with the core). Only meaningful for a problem
/// run() accepted. `bound` receives the same sums taken over absolute values (the scale of the
/// rounding errors); `max_logit` the largest |scaled (and softcapped) logit|, and `abs_score` the
/// largest Σ|q||k|·|scale|, both to judge how much rounding the softmax amplifies.
inline Matrix reference_output(const Problem& p, Matrix* bound, double* max_logit, double* abs_score) {
  using LD = long double;
  using LMat = Eigen::Matrix<LD, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  const Options& o = p.options;
  const bool columns = o.layout == Layout::Columns;
  auto tr = [&](const Matrix& m) -> LMat {
    LMat out = m.cast<LD>();
    return columns ? LMat(out.transpose()) : out;
  };
  auto project = [&](const Matrix& x, const Matrix& w, const std::optional<Vector>& b, bool absolute) {
    LMat X = tr(x), W = tr(w);
    if (absolute) X = X.cwiseAbs(), W = W.cwiseAbs();
    LMat out = X * W;
    if (b) {
      for (Eigen::Index i = 0; i < out.rows(); ++i)
        for (Eigen::Index j = 0; j < out.cols(); ++j) out(i, j) += absolute ? std::abs(LD((*b)[j])) : LD((*b)[j]);
    }
    return out;
  };
  const bool direct = p.Q.has_value();
  const Matrix& kv_in = p.X_kv ? *p.X_kv : (direct ? *p.K : *p.X);
  const LMat Q = direct ? tr(*p.Q) : project(*p.X, *p.W_Q, p.b_Q, false);
  const LMat K = direct ? tr(*p.K) : project(kv_in, *p.W_K, p.b_K, false);
  const LMat Vv = direct ? tr(*p.V) : project(kv_in, *p.W_V, p.b_V, false);
  const LMat Vabs = direct ? LMat(tr(*p.V).cwiseAbs()) : project(kv_in, *p.W_V, p.b_V, true);
  const int h = o.heads, kv = o.kv_heads == 0 ? o.heads : o.kv_heads, group = h / kv;
  const Eigen::Index L = Q.rows(), S = K.rows(), dk = Q.cols() / h, dv = Vv.cols() / kv;
  LD scale = 1;
  switch (o.scale.kind) {
    case Scale::Kind::SqrtDk:
      scale = 1 / std::sqrt(LD(dk));
      break;
    case Scale::Kind::None:
      break;
    case Scale::Kind::Multiply:
      scale = o.scale.value;
      break;
    case Scale::Kind::DivideBy:
      scale = 1 / LD(o.scale.value);
      break;
    case Scale::Kind::DivideBySqrt:
      scale = 1 / std::sqrt(LD(o.scale.value));
      break;
  }
  LMat mask = LMat::Zero(L, S);
  if (o.mask) {
    const LMat m = tr(*o.mask);
    for (Eigen::Index i = 0; i < L; ++i)
      for (Eigen::Index j = 0; j < S; ++j)
        mask(i, j) = o.mask_kind == MaskKind::Keep ? (m(i, j) != 0 ? 0 : -INFINITY) : m(i, j);
  }
  if (o.causal)
    for (Eigen::Index i = 0; i < L; ++i)
      for (Eigen::Index j = i + 1; j < S; ++j) mask(i, j) = -INFINITY;

  LMat concat = LMat::Zero(L, dv * h), concat_abs = LMat::Zero(L, dv * h);
  *max_logit = 0;
  *abs_score = 0;
  std::vector<LD> logits(static_cast<size_t>(S));
  for (int head = 0; head < h; ++head) {
    const int g = head / group;
    for (Eigen::Index i = 0; i < L; ++i) {
      LD max = -INFINITY;
      for (Eigen::Index j = 0; j < S; ++j) {
        LD dot = 0, dot_abs = 0;
        for (Eigen::Index k = 0; k < dk; ++k) {
          dot += Q(i, head * dk + k) * K(j, g * dk + k);
          dot_abs += std::abs(Q(i, head * dk + k) * K(j, g * dk + k));
        }
        LD l = dot * scale;
        *abs_score = std::max(*abs_score, static_cast<double>(dot_abs * std::abs(scale)));
        if (o.softcap > 0) l = LD(o.softcap) * std::tanh(l / LD(o.softcap));
        *max_logit = std::max(*max_logit, static_cast<double>(std::abs(l)));
        l += mask(i, j);
        logits[static_cast<size_t>(j)] = l;
        max = std::max(max, l);
      }
      if (max == -INFINITY) continue;  // fully masked: zeros
      LD sum = 0;
      for (auto& l : logits) sum += l = std::exp(l - max);
      for (Eigen::Index j = 0; j < S; ++j) {
        const LD w = logits[static_cast<size_t>(j)] / sum;
        for (Eigen::Index c = 0; c < dv; ++c) {
          concat(i, head * dv + c) += w * Vv(j, g * dv + c);
          concat_abs(i, head * dv + c) += w * Vabs(j, g * dv + c);
        }
      }
    }
  }
  LMat out = concat, out_abs = concat_abs;
  if (p.W_O) {
    const LMat W = tr(*p.W_O);
    out = concat * W;
    out_abs = concat_abs * W.cwiseAbs();
    if (p.b_O) {
      for (Eigen::Index i = 0; i < out.rows(); ++i)
        for (Eigen::Index j = 0; j < out.cols(); ++j) {
          out(i, j) += (*p.b_O)[j];
          out_abs(i, j) += std::abs(LD((*p.b_O)[j]));
        }
    }
  }
  *bound = columns ? Matrix(out_abs.transpose().cast<double>()) : Matrix(out_abs.cast<double>());
  return columns ? Matrix(out.transpose().cast<double>()) : Matrix(out.cast<double>());
}

/// Compares the trace's output with reference_output() when the softmax is well conditioned
/// (|logits| <= 100): a wrong head slice, group, mask alignment, bias or layout is an O(1)
/// error; rounding is bounded by a generous multiple of the precision's epsilon.
inline std::string check_against_reference(const Problem& p, const Trace& t) {
  Matrix bound;
  double max_logit = 0, abs_score = 0;
  const Matrix ref = reference_output(p, &bound, &max_logit, &abs_score);
  if (!(max_logit <= 100) || !std::isfinite(abs_score)) return "";
  if (ref.rows() != t.output.rows() || ref.cols() != t.output.cols()) return "reference output has another shape";
  const bool f32 = p.options.precision == Precision::Float32;
  const double eps = f32 ? 0x1p-23 : 0x1p-52;
  Eigen::Index width = t.d_k + t.keys + 4;
  if (p.X) width += (p.options.layout == Layout::Columns ? p.X->rows() : p.X->cols());
  if (p.W_O) width += t.d_v * t.heads;
  const double tolerance = 16 * eps * static_cast<double>(width) * (1 + abs_score);
  for (Eigen::Index i = 0; i < ref.rows(); ++i) {
    for (Eigen::Index j = 0; j < ref.cols(); ++j) {
      const double error = std::abs(t.output(i, j) - ref(i, j));
      // float32 flushes weights below 2^-149 to 0 where the double reference keeps them
      // (e^-1600 · V gives 6e-59): below 2^-100 a difference is underflow, not a wrong slice.
      if (!(error <= tolerance * (bound(i, j) + 1e-300)) && !(f32 && error <= 0x1p-100)) {
        std::ostringstream out;
        out.precision(17);
        out << "output (" << i << ", " << j << ") is " << t.output(i, j) << " but the reference gives " << ref(i, j)
            << " (allowed error " << tolerance * bound(i, j) << ")";
        return out.str();
      }
    }
  }
  return "";
}

}  // namespace attn::invariants
