// explain(): the worked calculation of one cell of one step, with the numbers filled in. It
// recomputes the trace and reads the operands from the steps the cell's step names as its
// inputs, so it follows the same data flow as the trace itself.
#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "normalized.h"

namespace attn {

Explanation explain(const Problem& problem, const std::string& step_id, int head,
                    Eigen::Index row, Eigen::Index col) {
  const Normalized n = normalize(problem);
  const Trace t = compute_trace(n);

  // A step shared by every head (the position encoding, X_pos) answers for head 0 too, the head
  // a caller names by default.
  const Step* step = nullptr;
  for (const Step& s : t.steps) {
    if (s.id == step_id && (s.head == head || (head == 0 && s.head == -1 && s.id != "concat" && s.id != "output"))) {
      step = &s;
      break;
    }
  }
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
  e.head = step->head;  // the step's own head (-1 for a step every head shares)
  e.row = row;
  e.col = col;
  e.value = step->values(row, col);
  // Work in the rows layout: (r, c) is (query, key) for scores, (token, feature) otherwise.
  const Eigen::Index r = n.columns ? col : row, c = n.columns ? row : col;

  auto rows_layout = [&](const Step& s) {
    return n.columns ? Matrix(s.values.transpose()) : s.values;
  };
  // The k-th step this one is computed from, and its values in the rows layout.
  auto input_step = [&](size_t k) -> const Step& {
    return t.steps[static_cast<size_t>(step->inputs[k])];
  };
  auto input = [&](size_t k) { return rows_layout(input_step(k)); };
  auto dot = [&](const Eigen::Ref<const Vector>& left, const Eigen::Ref<const Vector>& right) {
    e.left.assign(left.data(), left.data() + left.size());
    e.right.assign(right.data(), right.data() + right.size());
    for (Eigen::Index k = 0; k < left.size(); ++k) e.products.push_back(left[k] * right[k]);
  };
  // Column c of a concatenation comes from the head output whose feature range holds it.
  auto concat_source = [&](const Step& concat) {
    e.kind = "concat";
    for (int k : concat.inputs) {
      const Step& part = t.steps[static_cast<size_t>(k)];
      if (c >= part.feature_first && c < part.feature_first + part.feature_count) {
        e.source_head = part.head;
        e.source_col = c - part.feature_first;
      }
    }
  };

  if (step_id == "positional") {
    if (n.options.positional == Positional::Learned) {
      e.kind = "input";
      return e;
    }
    e.kind = "sinusoid";
    e.position = n.query_pos[static_cast<size_t>(r)];
    e.angle = sinusoid_angle(e.position, c, n.X.cols());
    e.cos = std::cos(e.angle);
    e.sin = std::sin(e.angle);
  } else if (step_id == "X_pos") {
    e.kind = "add";
    e.input = n.X(r, c);
    e.additive = input(0)(r, c);
  } else if (step_id == "Q_rot" || step_id == "K_rot") {
    const Rope& rope = n.options.rope;
    const Matrix x = input(0);
    e.input = x(r, c);
    if (c >= rope.dims) {
      e.kind = "unrotated";
      return e;
    }
    e.kind = "rotation";
    const int pair = static_cast<int>(rope.style == Rope::Style::Half ? c % (rope.dims / 2) : c / 2);
    const auto [a, b] = rope_pair(rope, pair);
    e.pair_first = a;
    e.pair_second = b;
    // Queries sit at their positions; new keys come after the cached ones.
    e.position = step_id == "Q_rot" ? n.query_pos[static_cast<size_t>(r)]
                                    : n.key_pos[static_cast<size_t>(n.past + r)];
    const RopeAngle turn = rope_angle(rope, e.position, pair);
    e.angle = turn.angle;
    e.cos = turn.cos;
    e.sin = turn.sin;
    e.left = {x(r, a), x(r, b)};
    e.right = c == a ? std::vector<double>{turn.cos, -turn.sin} : std::vector<double>{turn.sin, turn.cos};
    for (size_t k = 0; k < 2; ++k) e.products.push_back(e.left[k] * e.right[k]);
  } else if (step_id == "K_cache" || step_id == "V_cache") {
    e.kind = "cache";
    e.source_col = c;
    if (r < n.past) {
      e.source = step_id == "K_cache" ? "past_K" : "past_V";
      e.source_row = r;
      e.source_col = step->feature_first + c;  // the cache holds every key/value head
    } else {
      e.source = input_step(0).id;
      e.source_row = r - n.past;
    }
  } else if (step_id == "Q" || step_id == "K" || step_id == "V") {
    if (n.direct) {
      e.kind = "input";
      return e;
    }
    e.kind = "projection";
    const bool is_q = step_id == "Q";
    // X, X_kv, or the step X_pos (X with its positions) when the step reads one.
    const Matrix in = !step->inputs.empty() ? input(0) : is_q ? n.X : n.X_kv;
    const Matrix& W = is_q ? n.W_Q : (step_id == "K" ? n.W_K : n.W_V);
    const auto& b = is_q ? n.b_Q : (step_id == "K" ? n.b_K : n.b_V);
    const Eigen::Index w_col = step->feature_first + c;
    dot(in.row(r).transpose(), W.col(w_col));
    if (b) {
      e.has_bias = true;
      e.bias = (*b)[w_col];
    }
  } else if (step_id == "scores") {
    e.kind = "dot";
    const Matrix Qh = input(0), Kh = input(1);
    dot(Qh.row(r).transpose(), Kh.row(c).transpose());
  } else if (step_id == "scaled") {
    e.kind = "scale";
    e.input = input(0)(r, c);
    const Scale& s = n.options.scale;
    switch (s.kind) {
      case Scale::Kind::None: e.factor = 1.0; break;
      case Scale::Kind::Multiply: e.factor = s.value; break;
      case Scale::Kind::SqrtDk: e.divisor = std::sqrt(static_cast<double>(n.d_k)); break;
      case Scale::Kind::DivideBy: e.divisor = s.value; break;
      case Scale::Kind::DivideBySqrt: e.divisor = std::sqrt(s.value); break;
    }
    if (e.divisor != 0) e.factor = 1.0 / e.divisor;
  } else if (step_id == "softcapped") {
    e.kind = "softcap";
    e.input = input(0)(r, c);
    e.factor = n.options.softcap;
  } else if (step_id == "alibi") {
    e.kind = "alibi";
    e.slope = n.alibi_slopes[static_cast<size_t>(head)];
    e.query_pos = n.query_pos[static_cast<size_t>(r)];
    e.key_pos = n.key_pos[static_cast<size_t>(c)];
  } else if (step_id == "biased") {
    e.kind = "bias";
    e.input = input(0)(r, c);
    e.additive = input(1)(r, c);
  } else if (step_id == "mask" || step_id == "masked") {
    const Mask mask = combined_mask(n);
    const int bits = static_cast<int>(mask.hidden_by(r, c));
    const std::pair<int, const char*> names[] = {
        {kHiddenByCausal, "causal"}, {kHiddenByWindow, "window"}, {kHiddenByMask, "mask"}};
    for (const auto& [bit, name] : names) {
      if (bits & bit) e.components.push_back(name);
    }
    e.hidden = mask.hidden(r, c);
    e.kept_by_sink = (bits & kKeptBySink) != 0;
    e.fill = n.options.mask_fill;
    e.additive = mask.additive(r, c);
    if (step_id == "mask") {
      e.kind = "mask_entry";
    } else {
      e.kind = "mask";
      e.input = input(0)(r, c);
    }
  } else if (step_id == "weights") {
    e.kind = "softmax";
    const Vector row_logits = input(0).row(r).transpose();
    e.logits.assign(row_logits.data(), row_logits.data() + row_logits.size());
    e.max = row_logits.maxCoeff();
    constexpr double kInf = std::numeric_limits<double>::infinity();
    for (double x : e.logits) {
      const double shifted = std::isinf(e.max) ? (x == e.max ? 0.0 : -kInf) : x - e.max;
      e.shifted.push_back(shifted);
      e.exps.push_back(std::exp(shifted));
      e.exp_sum += e.exps.back();
    }
    if (e.max == -kInf) e.exp_sum = 0;  // a fully masked query: every weight is 0
    if (!n.sink_logits.empty()) {
      // The sink logit joins the row: it counts in the max and adds a term to the sum.
      e.has_sink = true;
      e.sink_logit = n.sink_logits[static_cast<size_t>(head)];
      const double max = std::max(e.max, e.sink_logit);
      e.exp_sum = 0;
      e.shifted.clear();
      e.exps.clear();
      if (!std::isinf(e.max) || e.max < 0) {
        for (double x : e.logits) {
          e.shifted.push_back(x - max);
          e.exps.push_back(std::exp(x - max));
          e.exp_sum += e.exps.back();
        }
        e.max = max;
        e.sink_exp = std::exp(e.sink_logit - max);
        e.exp_sum += e.sink_exp;
        e.sink_share = e.sink_exp / e.exp_sum;
      }
    }
  } else if (step_id == "concat") {
    concat_source(*step);
  } else if (step_id == "head_output" || input_step(0).id == "weights") {
    e.kind = "weighted_sum";  // a head's output, or the output of one head without W_O
    const Matrix w = input(0), v = input(1);
    dot(w.row(r).transpose(), v.col(c));
  } else if (!n.W_O) {
    concat_source(input_step(0));  // several heads without W_O: the output is the concatenation
  } else {
    e.kind = "projection";  // the output: the concatenation (or the one head) times W_O
    dot(input(0).row(r).transpose(), n.W_O->col(c));
    if (n.b_O) {
      e.has_bias = true;
      e.bias = (*n.b_O)[c];
    }
  }
  return e;
}

}  // namespace attn
