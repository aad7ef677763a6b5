// explain(): the worked calculation of one cell of one step, with the numbers filled in. It
// recomputes the trace and reads the operands from the steps the cell's step names as its
// inputs, so it follows the same data flow as the trace itself. Each kind of calculation is
// written once, as data (Explanation::lines, text_id and params, numbers, terms) that every view renders the
// same way: the page, the LaTeX export and any other binding write no kind out themselves.
// Here: how a calculation is written (explain_cell.h) and the forward steps' calculations;
// explain_gradients.cpp has the gradient steps'.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include "explain_cell.h"
#include "steps.h"

namespace attn {

std::string indexed(const std::string& symbol, const std::string& sub) {
  if (symbol.find('_') != std::string::npos) return "(" + symbol + ")_{" + sub + "}";
  return symbol + "_{" + sub + "}";
}

std::string hidden_key(const Explanation& e) { return e.components.empty() ? "none" : join(e.components, "_"); }

std::string join(const std::vector<std::string>& parts, const char* between) {
  std::string out;
  for (size_t k = 0; k < parts.size(); ++k) out += (k ? between : "") + parts[k];
  return out;
}

Explanation explain_forward(const Problem& problem, const std::string& step_id, int head, Eigen::Index row,
                            Eigen::Index col) {
  if (is_gradient_step(step_id)) {
    throw input_error(ErrorPlace{"step"}, "explain-gradient-forward", {{"step", step_id}});
  }
  const Normalized n = normalize(problem);
  const Trace t = compute_trace(n);
  ExplainedCell cell(n, t, step_id, head, row, col);
  cell.forward();
  return std::move(cell.e);
}

ExplainedCell::ExplainedCell(const Normalized& n, const Trace& t, const std::string& step_id, int head,
                             Eigen::Index row, Eigen::Index col)
    : n(n), t(t), step_id(step_id) {
  // A step shared by every head (the position encoding, X_pos, RoPE's angles) answers for head 0
  // too, the head a caller names by default; a per-head step answers for no head (-1) as head 0.
  for (const Step& s : t.steps) {
    if (s.id == step_id && s.head == head) {
      step = &s;
      break;
    }
  }
  for (const Step& s : t.steps) {
    if (step) break;
    const bool shared = head == 0 && s.head == -1 && s.id != "concat" && s.id != "output";
    if (s.id == step_id && (shared || (head == -1 && s.head == 0))) step = &s;
  }
  if (!step) {
    // What there is instead: the step's heads, or else the trace's steps.
    const auto head_name = [](int h) { return h < 0 ? std::string("(none)") : std::to_string(h); };
    std::vector<std::string> heads, ids;
    for (const Step& s : t.steps) {
      if (s.id == step_id) heads.push_back(head_name(s.head));
      if (std::find(ids.begin(), ids.end(), s.id) == ids.end()) ids.push_back(s.id);
    }
    // No such step: the step is at fault; a step of other heads: the head, read against the step.
    throw input_error(heads.empty() ? ErrorPlace{"step"} : ErrorPlace{"head", "step"}, "explain-no-step",
                      {{"step", step_id},
                       {"head", head < 0 ? "none" : std::to_string(head)},
                       {"listed", heads.empty() ? "steps" : "heads"},
                       {"list", heads.empty() ? join(ids, ", ") : join(heads, ", ")}});
  }
  if (row < 0 || col < 0 || row >= step->values.rows() || col >= step->values.cols()) {
    // The coordinate outside the step, read against the step, and the cell asked for (from 1).
    const bool row_outside = row < 0 || row >= step->values.rows();
    throw input_error(ErrorPlace{row_outside ? "row" : "col", "step", row + 1, col + 1}, "explain-no-cell",
                      {{"step", step_id},
                       {"shape", std::to_string(step->values.rows()) + "x" + std::to_string(step->values.cols())},
                       {"row", std::to_string(row + 1)},
                       {"column", std::to_string(col + 1)}});
  }
  e.step = step_id;
  e.head = step->head;  // the step's own head (-1 for a step every head shares)
  e.row = row;
  e.col = col;
  e.value = step->values(row, col);
  r = n.columns ? col : row;
  c = n.columns ? row : col;
  value = num(e.value);
  ij = std::to_string(row + 1) + "," + std::to_string(col + 1);
  r1 = std::to_string(r + 1);
  c1 = std::to_string(c + 1);
  cell = indexed(step->symbol, ij);
}

Matrix ExplainedCell::rows_layout(const Step& s) const { return n.columns ? Matrix(s.values.transpose()) : s.values; }

const Step& ExplainedCell::input_step(size_t k) const { return t.steps[static_cast<size_t>(step->inputs[k])]; }

Matrix ExplainedCell::input(size_t k) const { return rows_layout(input_step(k)); }

std::string ExplainedCell::at(const std::string& a, const std::string& b) const {
  return n.columns ? b + "," + a : a + "," + b;
}

std::string ExplainedCell::same_entry(size_t k) const { return indexed(input_step(k).symbol, ij); }

std::string ExplainedCell::num(double x) {
  e.numbers.push_back(x);
  return "@" + std::to_string(e.numbers.size() - 1);
}

void ExplainedCell::dot(const Eigen::Ref<const Vector>& left, const Eigen::Ref<const Vector>& right) {
  e.left.assign(left.data(), left.data() + left.size());
  e.right.assign(right.data(), right.data() + right.size());
  for (Eigen::Index k = 0; k < left.size(); ++k) e.products.push_back(left[k] * right[k]);
}

void ExplainedCell::say(Message m) {
  e.text_id = "explain." + m.id;
  e.params = std::move(m.params);
}

void ExplainedCell::derive(std::initializer_list<std::string> rhs) {
  e.lines = {cell};
  e.lines.insert(e.lines.end(), rhs.begin(), rhs.end());
}

void ExplainedCell::table(Message caption, std::vector<std::string> headers, std::string index,
                          std::vector<std::vector<double>> columns, int highlight) {
  e.terms = {"explain." + caption.id, std::move(caption.params), std::move(headers),
             std::move(index),        std::move(columns),        highlight};
}

void ExplainedCell::read_mask() {
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
}

void ExplainedCell::rotate_pair(const Matrix& x, bool query, bool back, double position,
                                const std::string& from_symbol) {
  const Rope& rope = n.options.rope;
  e.input = x(r, c);
  // Differential attention rotates each half of the head as a head of d_k/2 features.
  const Eigen::Index offset = !n.lambdas.empty() && c >= n.d_k / 2 ? n.d_k / 2 : 0;
  if (c - offset >= rope.dims) {
    e.kind = "unrotated";
    derive(
        {(from_symbol.empty() ? same_entry(0) : indexed(from_symbol, ij)) + " \\quad\\text{(@{formula.not_rotated})}",
         value});
    say({"rope.unrotated", {{"gradient", yes(back)}}});
    return;
  }
  e.kind = "rotation";
  const int pair =
      static_cast<int>(rope.style == Rope::Style::Half ? (c - offset) % (rope.dims / 2) : (c - offset) / 2);
  const auto [pair_a, pair_b] = rope_pair(rope, pair);
  const Eigen::Index a = pair_a + offset, b = pair_b + offset;
  e.pair_first = a;
  e.pair_second = b;
  // Queries sit at their positions; new keys come after the cached ones.
  e.position = !std::isnan(position) ? position
               : query               ? n.query_pos[static_cast<size_t>(r)]
                                     : n.key_pos[static_cast<size_t>(n.past + r)];
  const RopeAngle turn = rope_angle(rope, e.position, pair);
  e.angle = turn.angle;
  e.cos = turn.cos;
  e.sin = turn.sin;
  // Row (a, b) of the rotation [cos −sin; sin cos], or of its transpose.
  const double s = back ? -turn.sin : turn.sin;
  e.left = {x(r, a), x(r, b)};
  e.right = c == a ? std::vector<double>{turn.cos, -s} : std::vector<double>{s, turn.cos};
  for (size_t k = 0; k < 2; ++k) e.products.push_back(e.left[k] * e.right[k]);
  const std::string& from = from_symbol.empty() ? input_step(0).symbol : from_symbol;
  const std::string xa = indexed(from, at(r1, std::to_string(a + 1))),
                    xb = indexed(from, at(r1, std::to_string(b + 1)));
  const bool tables = std::isnan(e.angle);
  const std::string angle = tables ? "" : num(e.angle);
  const std::string theta = tables ? "" : " \\quad (\\theta = " + angle + ")";
  const std::string x0 = num(e.left[0]), f0 = num(e.right[0]), x1 = num(e.left[1]), f1 = num(e.right[1]);
  const char* minus = back ? " + " : " - ";
  const char* first_sin = back ? "-" : "";
  derive({c == a ? xa + "\\cos\\theta" + minus + xb + "\\sin\\theta"
                 : first_sin + xa + "\\sin\\theta + " + xb + "\\cos\\theta",
          "(" + x0 + ")(" + f0 + ") + (" + x1 + ")(" + f1 + ")" + theta, value});
  say({back ? "rope.rotation.back" : "rope.rotation",
       {{"first", std::to_string(a + 1)},
        {"second", std::to_string(b + 1)},
        {"tables", yes(tables)},
        {"angle", angle},
        {"position", js_number(e.position)}}});
}

void ExplainedCell::given() {
  e.kind = "input";
  derive({value + " \\quad\\text{(@{formula.given})}"});
  say({"given", {{"name", step->given.at(0)}}});
}

void ExplainedCell::forward() {
  // Column c of a concatenation comes from the head output whose feature range holds it.
  auto concat_source = [&](const Step& concat) {
    e.kind = "concat";
    const Step* source = nullptr;
    for (int k : concat.inputs) {
      const Step& part = t.steps[static_cast<size_t>(k)];
      if (c >= part.feature_first && c < part.feature_first + part.feature_count) {
        e.source_head = part.head;
        e.source_col = c - part.feature_first;
        source = &part;
      }
    }
    derive({indexed(source->symbol, at(r1, std::to_string(e.source_col + 1))), value});
    say({"concat", {{"head", std::to_string(e.source_head + 1)}, {"feature", std::to_string(e.source_col + 1)}}});
  };

  if (n.latent && latent_cell()) return;
  if (step_id == "positional") {
    if (n.options.positional == Positional::Learned) {
      given();
      return;
    }
    e.kind = "sinusoid";
    e.position = n.query_pos[static_cast<size_t>(r)];
    e.angle = sinusoid_angle(e.position, c, n.X.cols());
    e.cos = std::cos(e.angle);
    e.sin = std::sin(e.angle);
    derive({std::string(c % 2 == 0 ? "\\sin(" : "\\cos(") + num(e.angle) + ") \\quad\\text{(@{formula.position} " +
                js_number(e.position) + ")}",
            value});
    say({"sinusoid",
         {{"position", js_number(e.position)},
          {"feature", c1},
          {"i", std::to_string(c / 2)},
          {"d", std::to_string(n.X.cols())}}});
  } else if (step_id == "X_pos") {
    e.kind = "add";
    e.input = n.X(r, c);
    e.additive = input(0)(r, c);
    const std::string x = num(e.input), pe = num(e.additive);
    derive({indexed("X", ij) + " + " + same_entry(0), x + " + (" + pe + ")", value});
    say({"add"});
  } else if (step_id == "rope_angles") {
    e.kind = "angle";
    const Rope& rope = n.options.rope;
    const int pair = static_cast<int>(c);
    std::tie(e.pair_first, e.pair_second) = rope_pair(rope, pair);
    e.position = rope_positions(n)[static_cast<size_t>(r)];
    const RopeAngle turn = rope_angle(rope, e.position, pair);
    e.angle = e.value;
    e.cos = turn.cos;
    e.sin = turn.sin;
    const std::string p = js_number(e.position), i = std::to_string(pair);
    const Params pair_words = {{"position", p},
                               {"pair", std::to_string(pair + 1)},
                               {"first", std::to_string(e.pair_first + 1)},
                               {"second", std::to_string(e.pair_second + 1)}};
    if (rope.cos) {
      const std::string sin = num(turn.sin), cos = num(turn.cos);
      derive({"\\operatorname{atan2}(" + sin + ", " + cos + ")", value});
      say({"rope.angle.tables", pair_words});
    } else {
      const double theta = std::pow(rope.base, -2.0 * pair / rope.dims);
      const std::string base = js_number(rope.base), dims = std::to_string(rope.dims);
      const std::string per_position = num(theta);
      derive({p + " \\cdot " + base + "^{-2 \\cdot " + i + "/" + dims + "}", p + " \\cdot " + per_position, value});
      Params params = pair_words;
      params.insert(params.end(), {{"base", base}, {"i", i}, {"dims", dims}, {"theta", per_position}});
      say({"rope.angle", std::move(params)});
    }
  } else if (step_id == "Q_normed" || step_id == "K_normed" || step_id == "head_normed") {
    // QK-norm of a head's row of d_k features, or differential attention's norm of a head's output row.
    e.kind = "qk_norm";
    const bool head_normed = step_id == "head_normed";
    const QkNorm& q = n.options.qk_norm;
    const bool layer = !head_normed && q.type == QkNorm::Type::Layer;
    const double eps = head_normed ? 1e-5 : q.eps;
    const Vector x = input(0).row(r).transpose();
    const RowNorm norm = row_norm<double>(x, layer, eps);
    e.input = x[c];
    e.mean = norm.mean;
    e.spread = norm.spread;
    e.divisor = norm.divisor;
    e.factor = head_normed ? 1 - n.options.differential.lambda_init
                           : (step_id == "Q_normed" ? n.g_q : n.g_k)[static_cast<size_t>(c)];
    e.left.assign(x.data(), x.data() + x.size());
    const std::string& from = input_step(0).symbol;
    const std::string xi = indexed(from, at(r1, c1)), in = num(e.input), gain = num(e.factor), d = num(e.divisor);
    const std::string spread = num(e.spread), eps_n = num(eps);
    const std::string g = head_normed             ? "(1 - \\lambda_{\\text{init}})"
                          : step_id == "Q_normed" ? "g_{q," + c1 + "}"
                                                  : "g_{k," + c1 + "}";
    if (layer) {
      const std::string mean = num(e.mean);
      derive({"\\frac{" + xi + " - \\mu}{\\sqrt{\\sigma^2 + \\varepsilon}}\\, " + g + ",\\quad \\mu = " + mean +
                  ",\\; \\sigma^2 = " + spread,
              "\\frac{" + in + " - " + mean + "}{\\sqrt{" + spread + " + " + eps_n + "}} \\cdot " + gain,
              "\\frac{" + num(e.input - e.mean) + "}{" + d + "} \\cdot " + gain, value});
      say({"qk_norm.layer",
           {{"features", std::to_string(x.size())}, {"mean", mean}, {"variance", spread}, {"gain", gain}}});
    } else {
      derive({"\\frac{" + xi + "}{\\sqrt{\\operatorname{mean}(x^2) + \\varepsilon}}\\, " + g +
                  ",\\quad \\operatorname{mean}(x^2) = " + spread,
              "\\frac{" + in + "}{\\sqrt{" + spread + " + " + eps_n + "}} \\cdot " + gain,
              "\\frac{" + in + "}{" + d + "} \\cdot " + gain, value});
      say({head_normed ? "head_norm.rms" : "qk_norm.rms",
           {{"features", std::to_string(x.size())}, {"spread", spread}, {"gain", gain}}});
    }
    std::vector<double> squares;
    for (double v : e.left) squares.push_back(layer ? (v - e.mean) * (v - e.mean) : v * v);
    table({"terms.features_of_token"}, {term("feature"), "x", layer ? term("deviation_squared") : "x²"}, "feature",
          {e.left, squares}, static_cast<int>(c));
  } else if (step_id == "weights_1" || step_id == "weights_2") {
    // One half's softmax: the logits of the half (recomputed as the trace computed them).
    const int half = step_id == "weights_1" ? 0 : 1;
    e.kind = "softmax";
    const Matrix logits = differential_logits(n, input(0), input(1), half, step->head);
    const Vector row_logits = logits.row(r).transpose();
    e.logits.assign(row_logits.data(), row_logits.data() + row_logits.size());
    e.max = row_logits.maxCoeff();
    constexpr double kInf = std::numeric_limits<double>::infinity();
    if (e.max == -kInf) {
      derive({"0 \\quad\\text{(@{formula.every_key_masked})}"});
      say({"softmax.all_masked"});
      return;
    }
    for (double x : e.logits) {
      e.shifted.push_back(x - e.max);
      e.exps.push_back(std::exp(x - e.max));
      e.exp_sum += e.exps.back();
    }
    const Eigen::Index w = n.d_k / 2;
    const std::string first = std::to_string(half * w + 1), last = std::to_string((half + 1) * w);
    const std::string m = num(e.max), sum = num(e.exp_sum);
    const std::string shifted = num(e.shifted[static_cast<size_t>(c)]), exp = num(e.exps[static_cast<size_t>(c)]);
    derive({"\\frac{e^{x_{" + ij + "} - m}}{\\sum_{j'} e^{x_{" + r1 + ",j'} - m}},\\quad x = Q_{" +
                std::to_string(half + 1) + "}K_{" + std::to_string(half + 1) + "}^\\top s,\\; m = " + m,
            "\\frac{e^{" + shifted + "}}{@terms(2)}", "\\frac{" + exp + "}{" + sum + "}", value});
    say({"differential.half", {{"half", std::to_string(half + 1)}, {"first", first}, {"last", last}, {"sum", sum}}});
    table({"terms.keys_of_query"}, {term("key"), term("score"), term("score_minus_max"), "exp"}, "key",
          {e.logits, e.shifted, e.exps}, static_cast<int>(c));
  } else if (step_id == "weights" && !n.lambdas.empty()) {
    e.kind = "difference";
    e.part_1 = input(0)(r, c);
    e.part_2 = input(1)(r, c);
    e.lambda = n.lambdas[static_cast<size_t>(step->head)];
    const double cancelled = e.lambda * e.part_2, common = std::min(e.part_1, cancelled);
    const std::string a1 = num(e.part_1), a2 = num(e.part_2), l = num(e.lambda), la2 = num(cancelled);
    const std::string common_n = num(common), rest = num(1 - e.lambda);
    derive({indexed(input_step(0).symbol, ij) + " - \\lambda\\, " + indexed(input_step(1).symbol, ij),
            a1 + " - " + l + " \\cdot " + a2, a1 + " - " + la2, value});
    say({"differential.difference",
         {{"a1", a1}, {"a2", a2}, {"common", common_n}, {"scaled", la2}, {"value", value}, {"rest", rest}}});
    const Matrix w1 = input(0), w2 = input(1);
    std::vector<double> one(w1.row(r).data(), w1.row(r).data() + w1.cols()), two, scaled, diff;
    for (Eigen::Index j = 0; j < w2.cols(); ++j) {
      two.push_back(w2(r, j));
      scaled.push_back(e.lambda * w2(r, j));
      diff.push_back(w1(r, j) - e.lambda * w2(r, j));
    }
    table({"terms.keys_of_query"}, {term("key"), "A₁", "A₂", "λ·A₂", "A₁ − λ·A₂"}, "key", {one, two, scaled, diff},
          static_cast<int>(c));
  } else if (step_id == "weights" && n.sigmoid) {
    e.kind = "sigmoid";
    e.input = input(0)(r, c);
    e.has_bias = true;
    e.bias = n.sigmoid_bias;
    read_mask();
    const std::string x = num(e.input), b = num(e.bias);
    if (e.hidden || e.input == -std::numeric_limits<double>::infinity()) {
      derive({"0 \\quad\\text{(@{formula.hidden})}"});
      say({"sigmoid.hidden", {{"hidden", hidden_key(e)}}});
    } else {
      const std::string z = num(e.input + e.bias);
      derive({"\\sigma(" + same_entry(0) + " + b) = \\frac{1}{1 + e^{-(" + same_entry(0) + " + b)}}",
              "\\frac{1}{1 + e^{-(" + x + " + (" + b + "))}}", "\\frac{1}{1 + e^{-(" + z + ")}}", value});
      say({"sigmoid", {{"b", b}, {"default", yes(std::isnan(n.options.sigmoid_bias))}, {"keys", std::to_string(n.S)}}});
    }
  } else if (step_id == "gate") {
    e.kind = "gate";
    const Matrix in = !step->inputs.empty() ? input(0) : n.X;
    const Eigen::Index col = n.gate_headwise ? step->head : step->feature_first + c;
    dot(in.row(r).transpose(), n.W_G->col(col));
    double z = 0;
    for (double p : e.products) z += p;
    if (n.b_G) {
      e.has_bias = true;
      e.bias = (*n.b_G)[col];
      z += e.bias;
    }
    e.input = z;
    const std::string W = given_symbol("W_G", -1, n), cj = std::to_string(col + 1);
    const std::string bias = e.has_bias ? " + " + num(e.bias) : "";
    const std::string zn = num(z);
    derive({"\\sigma\\Big(\\sum_m " +
                indexed(!step->inputs.empty() ? input_step(0).symbol : std::string("X"), r1 + ",m") + "\\," +
                indexed(W, "m," + cj) + (e.has_bias ? " + b_{G," + cj + "}" : "") + "\\Big)",
            "\\sigma(@terms(0,1)" + bias + ")", "\\sigma(" + zn + ")", value});
    say({"gate", {{"column", cj}, {"bias", yes(e.has_bias)}, {"headwise", yes(n.gate_headwise)}}});
    table({"terms.terms"}, {"m", term("X_value"), term("weight"), term("product")}, "m", {e.left, e.right, e.products});
  } else if (step_id == "gated_output") {
    e.kind = "gated";
    e.input = input(0)(r, c);
    e.factor = input(1)(r, n.gate_headwise ? 0 : c);
    const std::string x = num(e.input), g = num(e.factor);
    derive({indexed(input_step(0).symbol, ij) + " \\cdot " +
                indexed(input_step(1).symbol, at(r1, n.gate_headwise ? "1" : c1)),
            x + " \\cdot " + g, value});
    say({"gated", {{"gate", g}, {"most", yes(e.factor > 0.5)}}});
  } else if (step_id == "Q_rot" || step_id == "K_rot") {
    rotate_pair(input(0), step_id == "Q_rot", false);
  } else if (step_id == "K_cache" || step_id == "V_cache") {
    e.kind = "cache";
    e.source_col = c;
    const bool cached = r < n.past;
    std::string source;
    if (cached) {
      e.source = step_id == "K_cache" ? "past_K" : "past_V";
      e.source_row = r;
      e.source_col = step->feature_first + c;  // the cache holds every key/value head
      source = given_symbol(e.source, -1, n);
    } else {
      e.source = input_step(0).id;
      e.source_row = r - n.past;
      source = input_step(0).symbol;
    }
    const std::string source_row = std::to_string(e.source_row + 1), source_col = std::to_string(e.source_col + 1);
    derive({indexed(source, at(source_row, source_col)), value});
    if (cached) {
      say({"cache.read",
           {{"row", source_row}, {"feature", source_col}, {"source", e.source}, {"keys", yes(step_id == "K_cache")}}});
    } else {
      say({"cache.new", {{"row", source_row}, {"feature", source_col}}});
    }
  } else if (step_id == "Q" || step_id == "K" || step_id == "V") {
    if (n.direct) {
      given();
      return;
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
    derive(
        {"\\sum_m " + indexed(input_step(0).symbol, at(r1, "m")) + "\\," + indexed(input_step(1).symbol, at(c1, "m")),
         "@terms(0,1)", value});
    say({"scores.dot", {{"d_k", std::to_string(n.d_k)}, {"value", value}}});
    table({"terms.term_by_term"}, {term("feature"), "q", "k", "q × k"}, "feature", {e.left, e.right, e.products});
  } else if (step_id == "scaled") {
    e.kind = "scale";
    e.input = input(0)(r, c);
    const Scale& s = n.options.scale;
    const ScaleRule<double> rule = scale_rule<double>(s, n.d_k);
    if (rule.divide) e.divisor = rule.by;
    e.factor = rule.factor();
    const std::string score = same_entry(0), in = num(e.input);
    if (e.divisor != 0) {
      // √d_k and √n stay roots in the formula; a plain divisor is a number.
      const std::string d = num(e.divisor);
      const std::string root = s.kind == Scale::Kind::SqrtDk         ? std::to_string(n.d_k)
                               : s.kind == Scale::Kind::DivideBySqrt ? js_number(s.value)
                                                                     : "";
      derive({"\\frac{" + score + "}{" + (root.empty() ? d : "\\sqrt{" + root + "}") + "}",
              "\\frac{" + in + "}{" + d + "}", value});
      if (root.empty()) {
        say({"scale.divisor", {{"divisor", d}}});
      } else {
        say({s.kind == Scale::Kind::SqrtDk ? "scale.sqrt_dk" : "scale.sqrt", {{"root", root}, {"divisor", d}}});
      }
    } else {
      const std::string f = num(e.factor);
      derive({f + " \\cdot " + score, f + " \\cdot " + in, value});
      say({"scale.factor", {{"factor", f}, {"none", yes(e.factor == 1)}}});
    }
  } else if (step_id == "softcapped") {
    e.kind = "softcap";
    e.input = input(0)(r, c);
    e.factor = n.options.softcap;
    const std::string cap = num(e.factor);
    derive({"c\\,\\tanh\\!\\left(" + same_entry(0) + " / c\\right)",
            cap + "\\,\\tanh\\!\\left(" + num(e.input) + " / " + cap + "\\right)", value});
    say({"softcap", {{"cap", cap}}});
  } else if (step_id == "alibi") {
    e.kind = "alibi";
    e.slope = n.alibi_slopes[static_cast<size_t>(step->head)];
    e.query_pos = n.query_pos[static_cast<size_t>(r)];
    e.key_pos = n.key_pos[static_cast<size_t>(c)];
    const std::string m = num(e.slope), p = js_number(e.query_pos), q = js_number(e.key_pos);
    derive({"-m\\,\\lvert p_i - p_j \\rvert", "-" + m + " \\cdot \\lvert " + p + " - " + q + " \\rvert", value});
    say({"alibi", {{"slope", m}, {"query_position", p}, {"key_position", q}}});
  } else if (step_id == "biased") {
    e.kind = "bias";
    e.input = input(0)(r, c);
    e.additive = input(1)(r, c);
    const std::string score = num(e.input), bias = num(e.additive);
    derive({same_entry(0) + " + " + same_entry(1), score + " + (" + bias + ")", value});
    say({"alibi.biased"});
  } else if (step_id == "mask" || step_id == "masked") {
    read_mask();
    const std::string why = "@{formula.hidden_by} " + formula_words(e.components);
    if (step_id == "mask") {
      e.kind = "mask_entry";
      derive({value + " \\quad\\text{(" +
              (e.hidden         ? why
               : e.kept_by_sink ? "@{formula.kept_sink}"
                                : "@{formula.visible}") +
              ")}"});
      if (e.hidden) {
        say({"hidden", {{"by", hidden_key(e)}}});
      } else {
        say({"mask.visible", {{"sink", yes(e.kept_by_sink)}}});
      }
    } else {
      e.kind = "mask";
      e.input = input(0)(r, c);
      if (e.hidden && std::isfinite(e.fill)) {
        // A finite mask_fill replaces a hidden score (masked_fill).
        const std::string fill = num(e.fill);
        derive({fill + " \\quad\\text{(" + why + ": @{formula.the_fill})}"});
        say({"mask.fill", {{"hidden", hidden_key(e)}, {"fill", fill}}});
      } else {
        const std::string score = num(e.input), added = num(e.additive);
        derive({same_entry(0) + " + " + same_entry(1), score + " + (" + added + ")", value});
        if (e.hidden) {
          say({"mask.infinity", {{"hidden", hidden_key(e)}}});
        } else if (e.additive == 0) {
          say({"mask.adds_zero", {{"sink", yes(e.kept_by_sink)}}});
        } else {
          say({"mask.additive"});
        }
      }
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
      e.sink_logit = n.sink_logits[static_cast<size_t>(step->head)];
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
    if (e.max == -kInf) {
      derive({"0 \\quad\\text{(@{formula.every_key_masked})}"});
      say({"softmax.all_masked"});
      return;
    }
    // Along the row (rows layout) or down the column (columns layout) of the step it reads.
    const std::string& x = input_step(0).symbol;
    const std::string along = n.columns ? "i'" : "j'";
    const std::string m = num(e.max), sum = num(e.exp_sum);
    const std::string sink = e.has_sink ? num(e.sink_logit) : "";
    const std::string shifted = num(e.shifted[static_cast<size_t>(c)]), exp = num(e.exps[static_cast<size_t>(c)]);
    const std::string sink_exp = e.has_sink ? num(e.sink_exp) : "";
    derive({"\\frac{e^{" + indexed(x, ij) + " - m}}{\\sum_{" + along + "} e^{" + indexed(x, at(r1, along)) + " - m}" +
                (e.has_sink ? " + e^{s - m}" : "") + "},\\quad m = \\max = " + m +
                (e.has_sink ? ",\\ s = " + sink : ""),
            "\\frac{e^{" + shifted + "}}{@terms(2)" + (e.has_sink ? " + " + sink_exp : "") + "}",
            "\\frac{" + exp + "}{" + sum + "}", value});
    Params params = {{"along", n.columns ? "column" : "row"}, {"max", m}, {"sum", sum}};
    if (e.has_sink) {
      const std::string share = num(e.sink_share), rest = num(1 - e.sink_share);
      params.insert(params.end(), {{"sink_logit", sink}, {"sink_exp", sink_exp}, {"share", share}, {"rest", rest}});
    }
    say({e.has_sink ? "softmax.sink" : "softmax", std::move(params)});
    table({"terms.keys_of_query"}, {term("key"), term("score"), term("score_minus_max"), "exp"}, "key",
          {e.logits, e.shifted, e.exps}, static_cast<int>(c));
  } else if (step_id == "phi_Q" || step_id == "phi_K") {
    e.kind = "feature_map";
    e.input = input(0)(r, c);
    const std::string x = num(e.input);
    const std::string of = same_entry(0);
    switch (n.feature_map()) {
      case FeatureMap::EluPlusOne:
        if (e.input > 0) {
          derive({"\\operatorname{elu}(" + of + ") + 1", x + " + 1", value});
          say({"feature_map.elu_positive", {{"x", x}}});
        } else {
          derive({"\\operatorname{elu}(" + of + ") + 1", "(e^{" + x + "} - 1) + 1 = e^{" + x + "}", value});
          say({"feature_map.elu", {{"x", x}}});
        }
        break;
      case FeatureMap::Relu:
        derive({"\\max(0,\\, " + of + ")", "\\max(0,\\, " + x + ")", value});
        say({e.input > 0 ? "feature_map.relu_positive" : "feature_map.relu"});
        break;
      case FeatureMap::Identity:
        derive({of + " \\quad\\text{(@{formula.identity})}", value});
        say({"feature_map.identity"});
        break;
    }
  } else if (step_id == "linear_scores") {
    e.kind = "linear_score";
    const Matrix phi_q = input(0), phi_k = input(1);
    dot(phi_q.row(r).transpose(), phi_k.row(c).transpose());
    e.factor = n.linear_factor(r, c);
    e.query_pos = n.query_pos[static_cast<size_t>(r)];
    e.key_pos = n.key_pos[static_cast<size_t>(c)];
    e.hidden = n.options.causal && e.key_pos > e.query_pos;
    if (e.hidden) e.components.push_back("causal");
    const std::string sum =
        "\\sum_m " + indexed(input_step(0).symbol, r1 + ",m") + "\\," + indexed(input_step(1).symbol, c1 + ",m");
    if (e.hidden) {
      derive({"0 \\quad\\text{(@{formula.causal}: @{formula.key_after_query})}"});
      say({"linear_score.causal"});
    } else if (e.factor != 1) {
      const std::string gamma = num(n.decay()), factor = num(e.factor);
      const std::string distance = js_number(e.query_pos - e.key_pos);
      derive({"\\gamma^{" + distance + "} " + sum, factor + " \\cdot (@terms(0,1))", value});
      say({"linear_score.decay", {{"gamma", gamma}, {"distance", distance}, {"factor", factor}}});
    } else {
      derive({sum, "@terms(0,1)", value});
      say({"linear_score"});
    }
    table({"terms.term_by_term"}, {term("feature"), "φ(q)", "φ(k)", "φ(q) × φ(k)"}, "feature",
          {e.left, e.right, e.products});
  } else if (step_id == "normalizer") {
    e.kind = "row_sum";
    const Vector row = input(0).row(r).transpose();
    e.left.assign(row.data(), row.data() + row.size());
    derive({"\\sum_j " + indexed(input_step(0).symbol, r1 + ",j"), "@terms(0)", value});
    say({"normalizer"});
    table({"terms.keys_of_query"}, {term("key"), term("linear_score")}, "key", {e.left}, static_cast<int>(c));
  } else if (n.linear() && (step_id == "head_output" || step_id == "output") && input_step(0).id == "linear_scores") {
    e.kind = "linear_output";
    const Matrix scores = input(0), v = input(1);
    dot(scores.row(r).transpose(), v.col(c));
    const std::string& A = input_step(0).symbol;
    const std::string& V = input_step(1).symbol;
    const std::string sum = "\\sum_k " + indexed(A, r1 + ",k") + "\\," + indexed(V, "k," + c1);
    if (step->inputs.size() > 2) {
      e.divisor = input(2)(r, 0);
      const std::string d = num(e.divisor);
      derive(
          {"\\frac{" + sum + "}{" + indexed(input_step(2).symbol, r1) + "}", "\\frac{@terms(0,1)}{" + d + "}", value});
      say({"linear_output.normalized", {{"feature", c1}, {"divisor", d}}});
    } else {
      derive({sum, "@terms(0,1)", value});
      say({"linear_output", {{"feature", c1}}});
    }
    table({"terms.weighted_values"}, {term("key"), term("linear_score"), term("value"), term("score_times_value")},
          "key", {e.left, e.right, e.products});
  } else if (step_id == "concat") {
    concat_source(*step);
  } else if (step_id == "head_output" || input_step(0).id == "weights") {
    e.kind = "weighted_sum";  // a head's output, or the output of one head without W_O
    const Matrix w = input(0), v = input(1);
    dot(w.row(r).transpose(), v.col(c));
    const std::string& A = input_step(0).symbol;
    const std::string& V = input_step(1).symbol;
    derive({n.columns ? "\\sum_k " + indexed(V, c1 + ",k") + "\\," + indexed(A, "k," + r1)
                      : "\\sum_k " + indexed(A, r1 + ",k") + "\\," + indexed(V, "k," + c1),
            n.columns ? "@terms(1,0)" : "@terms(0,1)", value});
    say({"weighted_sum", {{"feature", c1}}});
    table({"terms.weighted_values"}, {term("key"), term("weight"), term("value"), term("weight_times_value")}, "key",
          {e.left, e.right, e.products});
  } else if (!n.W_O && n.heads == 1) {
    concat_source(*step);  // one head without W_O: the output is its last step (normed, gated)
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
  if (e.kind == "projection") {
    // Q, K, V read [X or X_kv, W, b?] (X_pos, a step, instead of X when positions are added);
    // the output reads the heads (its input step) and [W_O, b_O?].
    const bool output = step_id == "output";
    const std::vector<std::string>& names = step->given;
    const bool from_step = output || names.at(0)[0] != 'X';
    const size_t w_at = from_step ? 0 : 1;
    const int own_head = output ? -1 : step->head;
    const std::string in = from_step ? input_step(0).symbol : given_symbol(names[0], -1, n);
    const std::string W = given_symbol(names.at(w_at), own_head, n);
    const std::string b = e.has_bias ? given_symbol(names.at(w_at + 1), own_head, n) : "";
    // Rows: token i times column j of W. Columns: row i of Ω times token j.
    const std::string sum = n.columns ? "\\sum_m " + indexed(W, c1 + ",m") + "\\," + indexed(in, "m," + r1)
                                      : "\\sum_m " + indexed(in, r1 + ",m") + "\\," + indexed(W, "m," + c1);
    const std::string bias = e.has_bias ? " + " + num(e.bias) : "";
    derive(
        {sum + (e.has_bias ? " + " + indexed(b, c1) : ""), (n.columns ? "@terms(1,0)" : "@terms(0,1)") + bias, value});
    const std::string source = output ? "heads" : from_step ? "X′" : names[0] == "X_kv" ? "X_kv" : "X";
    say({"projection",
         {{"from", source},
          {"along", n.columns ? "row" : "column"},
          {"has_bias", yes(e.has_bias)},
          {"bias", e.has_bias ? bias.substr(3) : ""}}});
    table({"terms.terms"}, {"m", output ? term("H_value") : term("X_value"), term("weight"), term("product")}, "m",
          {e.left, e.right, e.products});
  }
}

bool ExplainedCell::latent_cell() {
  const int h = step->head;
  const auto W = [&](const char* name, bool per_head) { return given_symbol(name, per_head ? h : -1, n); };
  // Row `row` of `in` times column `w_col` of `Wm`: a projection written with the head's own indices.
  const auto projection = [&](const Vector& in_row, const std::string& in_symbol, const std::string& in_row1,
                              const Matrix& Wm, const std::string& W_symbol, Eigen::Index w_col, Message text) {
    e.kind = "projection";
    dot(in_row, Wm.col(w_col));
    derive(
        {"\\sum_m " + indexed(in_symbol, in_row1 + ",m") + "\\," + indexed(W_symbol, "m," + c1), "@terms(0,1)", value});
    say(std::move(text));
    table({"terms.terms"}, {"m", term("input"), term("weight"), term("product")}, "m", {e.left, e.right, e.products});
  };
  // A row of a step that holds cached rows first: copied from the cache.
  const auto cached = [&](const char* source, const char* what) {
    e.kind = "cache";
    e.source = source;
    e.source_row = r;
    e.source_col = c;
    derive({indexed(given_symbol(source, -1, n), r1 + "," + c1), value});
    say({"latent.cache", {{"row", r1}, {"feature", c1}, {"source", source}, {"what", what}}});
  };
  const std::string token = std::to_string(r - n.past + 1);
  const auto x_row = [&](Eigen::Index row) { return Vector(n.X.row(row).transpose()); };
  // The unrotated rows (x·W) laid out so that row r holds the cell's, for rotate_pair.
  const auto rotation = [&](const Matrix& in, Eigen::Index in_row, const Matrix& Wm, Eigen::Index first,
                            double position, const std::string& symbol) {
    Matrix unrotated = Matrix::Zero(r + 1, n.d_r);
    unrotated.row(r) = in.row(in_row) * Wm.middleCols(first, n.d_r);
    rotate_pair(unrotated, true, false, position, symbol);
  };
  if (step_id == "c_KV") {
    if (r < n.past) {
      cached("past_c_KV", "latent");
    } else {
      projection(x_row(r - n.past), "X", token, n.W_DKV, W("W_DKV", false), c,
                 {"latent.c_KV", {{"d_c", std::to_string(n.d_c)}}});
    }
  } else if (step_id == "k_R") {
    if (r < n.past) {
      cached("past_k_R", "rotated_key");
    } else {
      rotation(n.X, r - n.past, n.W_KR, 0, n.key_pos[static_cast<size_t>(r)], "(X\\,W_{KR})");
      e.text_id += ".k_R";  // the rotation's sentence, then what k_R is
    }
  } else if (step_id == "c_Q") {
    projection(x_row(r), "X", r1, *n.W_DQ, W("W_DQ", false), c, {"latent.c_Q"});
  } else if (step_id == "K_C" || step_id == "V") {
    const bool keys = step_id == "K_C";
    const Matrix c_kv = input(0);
    projection(c_kv.row(r).transpose(), input_step(0).symbol, r1, keys ? n.W_UK : n.W_UV,
               W(keys ? "W_UK" : "W_UV", true), step->feature_first + c,
               {"latent.up", {{"weights", keys ? "W_UK" : "W_UV"}, {"keys", yes(keys)}}});
  } else if (step_id == "Q_C") {
    if (n.W_DQ) {
      projection(input(0).row(r).transpose(), input_step(0).symbol, r1, *n.W_UQ, W("W_UQ", true),
                 step->feature_first + c, {"latent.Q_C.from_c_Q"});
    } else {
      projection(x_row(r), "X", r1, n.W_Q, W("W_Q", true), step->feature_first + c, {"latent.Q_C"});
    }
  } else if (step_id == "q_R") {
    const bool from_cq = n.qr_from_cq;
    rotation(from_cq ? input(0) : n.X, r, n.W_QR, static_cast<Eigen::Index>(h) * n.d_r,
             n.query_pos[static_cast<size_t>(r)], from_cq ? "(c_{Q}\\,W_{QR})" : "(X\\,W_{QR})");
  } else if (step_id == "scores_C" || step_id == "scores_R" || step_id == "scores_C_absorbed" ||
             (step_id == "scores" && input_step(0).id == "Q_C")) {
    e.kind = "dot";
    const Matrix q = input(0), k = input(1);
    dot(q.row(r).transpose(), k.row(c).transpose());
    derive({"\\sum_m " + indexed(input_step(0).symbol, r1 + ",m") + "\\," + indexed(input_step(1).symbol, c1 + ",m"),
            "@terms(0,1)", value});
    if (step_id == "scores_R") {
      say({"latent.scores_R", {{"d_r", std::to_string(n.d_r)}}});
    } else if (step_id == "scores_C_absorbed") {
      const Step* naive = nullptr;
      for (const Step& s : t.steps) {
        if (s.id == "scores_C" && s.head == h) naive = &s;
        if (!naive && s.id == "scores" && s.head == h) naive = &s;
      }
      const double same = naive->values(r, c);
      e.input = same;
      const std::string naive_n = num(same), difference = num(e.value - same);
      say({"latent.scores_C_absorbed", {{"value", value}, {"naive", naive_n}, {"difference", difference}}});
    } else {
      say({"latent.scores_C", {{"d_h", std::to_string(n.d_h)}}});
    }
    table({"terms.term_by_term"}, {term("feature"), "q", "k", "q × k"}, "feature", {e.left, e.right, e.products});
  } else if (step_id == "scores") {
    e.kind = "sum";
    e.left = {input(0)(r, c), input(1)(r, c)};
    const std::string a = num(e.left[0]), b = num(e.left[1]);
    derive(
        {indexed(input_step(0).symbol, ij) + " + " + indexed(input_step(1).symbol, ij), a + " + (" + b + ")", value});
    say({"latent.scores", {{"d_k", std::to_string(n.d_k)}}});
  } else if (step_id == "Q_absorbed") {
    const Matrix q_c = input(0);
    e.kind = "projection";
    dot(q_c.row(r).transpose(), n.W_UK.row(c).segment(static_cast<Eigen::Index>(h) * n.d_h, n.d_h).transpose());
    const std::string Wuk = W("W_UK", true);
    derive({"\\sum_m " + indexed(input_step(0).symbol, r1 + ",m") + "\\," + indexed(Wuk, c1 + ",m"), "@terms(0,1)",
            value});
    say({"latent.Q_absorbed", {{"row", c1}}});
    table({"terms.terms"}, {"m", "q_C", "W_UK", term("product")}, "m", {e.left, e.right, e.products});
  } else if (step_id == "O_latent") {
    e.kind = "weighted_sum";
    dot(input(0).row(r).transpose(), input(1).col(c));
    derive({"\\sum_k " + indexed(input_step(0).symbol, r1 + ",k") + "\\," + indexed(input_step(1).symbol, "k," + c1),
            "@terms(0,1)", value});
    say({"latent.O_latent", {{"feature", c1}}});
    table({"terms.weighted_latents"}, {term("key"), term("weight"), term("latent"), term("weight_times_latent")}, "key",
          {e.left, e.right, e.products});
  } else if (step_id == "output_absorbed") {
    e.kind = "head_sum";
    for (int head = 0; head < n.heads; ++head) {
      const Matrix o = input(static_cast<size_t>(head));
      const Matrix W_UV = n.W_UV.middleCols(static_cast<Eigen::Index>(head) * n.d_v, n.d_v);
      double term = 0;
      if (n.W_O) {
        const Matrix folded = W_UV * n.W_O->middleRows(static_cast<Eigen::Index>(head) * n.d_v, n.d_v);
        term = o.row(r).dot(folded.col(c));
      } else if (c / n.d_v == head) {
        term = o.row(r).dot(W_UV.col(c % n.d_v));
      }
      e.left.push_back(term);
    }
    if (n.b_O) {
      e.has_bias = true;
      e.bias = (*n.b_O)[c];
    }
    const Step* naive = nullptr;
    for (const Step& s : t.steps) {
      if (s.id == "output") naive = &s;
    }
    const double same = naive->values(r, c);
    e.right = {same};
    const std::string bias = e.has_bias ? " + " + num(e.bias) : "";
    derive({n.W_O ? std::string("\\sum_h (\\hat O^{(h)}\\,W_{UV}^{(h)}W_O^{(h)})_{") + ij + "}" +
                        (e.has_bias ? " + (b_O)_{" + c1 + "}" : "")
                  : std::string("(\\hat O^{(h)}\\,W_{UV}^{(h)})_{") + ij + "}",
            "@terms(0)" + bias, value});
    say({"latent.output_absorbed", {{"value", value}, {"naive", num(same)}}});
    std::vector<double> heads;
    for (int head = 0; head < n.heads; ++head) heads.push_back(head + 1);
    table({"terms.heads"}, {"m", term("head"), term("head_term")}, "m", {heads, e.left});
  } else if (step_id == "cache_sizes") {
    e.kind = "cache_size";
    const auto forms = latent_cache_forms(n);
    e.source = forms.at(static_cast<size_t>(c)).first;
    const std::string& form = e.source;
    if (form == "MLA") {
      e.left = {static_cast<double>(n.d_c), static_cast<double>(n.d_r)};
      derive({"d_c + d_r", num(e.left[0]) + " + " + num(e.left[1]), value});
      say({"cache_size.MLA"});
    } else {
      const double groups = form == "MHA" ? n.heads : form == "MQA" ? 1 : std::stod(form.substr(8));
      e.left = {2, groups, static_cast<double>(n.d_h)};
      derive({"2 \\cdot g \\cdot d_h", "2 \\cdot " + num(groups) + " \\cdot " + num(e.left[2]), value});
      say({"cache_size", {{"form", form}, {"d_h", std::to_string(n.d_h)}, {"groups", js_number(groups)}}});
    }
  } else {
    return false;
  }
  return true;
}

}  // namespace attn
