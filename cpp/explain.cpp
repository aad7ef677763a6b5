// explain(): the worked calculation of one cell of one step, with the numbers filled in. It
// recomputes the trace and reads the operands from the steps the cell's step names as its
// inputs, so it follows the same data flow as the trace itself. Each kind of calculation is
// written once, as data (Explanation::lines, text, numbers, terms) that every view renders the
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

namespace {
const char* const kComponentWords[][2] = {
    {"causal", "causal masking (the key comes after the query)"},
    {"window", "the window (the key is too far from the query)"},
    {"mask", "your mask"},
};
}  // namespace

std::string hidden_by(const Explanation& e) {
  std::string names;
  for (size_t k = 0; k < e.components.size(); ++k) {
    std::string word = e.components[k];
    for (const auto& pair : kComponentWords) {
      if (word == pair[0]) word = pair[1];
    }
    names += (k ? " and " : "") + word;
  }
  return names.empty() ? "Hidden from this query." : "Hidden from this query by " + names + ".";
}

std::string kept_by_sink(const Explanation& e) {
  return e.kept_by_sink ? " The window alone would hide it, but it is a sink token: it stays visible." : "";
}

std::string join(const std::vector<std::string>& parts, const char* between) {
  std::string out;
  for (size_t k = 0; k < parts.size(); ++k) out += (k ? between : "") + parts[k];
  return out;
}

Explanation explain_forward(const Problem& problem, const std::string& step_id, int head, Eigen::Index row,
                            Eigen::Index col) {
  if (is_gradient_step(step_id)) {
    throw InputError(
        ErrorPlace{"step"},
        "step '" + step_id +
            "' is a gradient: its worked calculation needs the backward pass (explain, not explain_forward)");
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
    throw InputError(
        heads.empty() ? ErrorPlace{"step"} : ErrorPlace{"head", "step"},
        "the trace has no step '" + step_id + "' for head " + head_name(head) +
            (heads.empty() ? ": its steps are " + join(ids, ", ") : ": its heads are " + join(heads, ", ")));
  }
  if (row < 0 || col < 0 || row >= step->values.rows() || col >= step->values.cols()) {
    // The coordinate outside the step, read against the step, and the cell asked for (from 1).
    const bool row_outside = row < 0 || row >= step->values.rows();
    throw InputError(ErrorPlace{row_outside ? "row" : "col", "step", row + 1, col + 1},
                     "step '" + step_id + "' is " + std::to_string(step->values.rows()) + "x" +
                         std::to_string(step->values.cols()) + ": it has no row " + std::to_string(row + 1) +
                         ", column " + std::to_string(col + 1));
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

void ExplainedCell::derive(std::initializer_list<std::string> rhs) {
  e.lines = {cell};
  e.lines.insert(e.lines.end(), rhs.begin(), rhs.end());
}

void ExplainedCell::table(std::string caption, std::vector<std::string> headers, std::string index,
                          std::vector<std::vector<double>> columns, int highlight) {
  e.terms = {std::move(caption), std::move(headers), std::move(index), std::move(columns), highlight};
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
    derive({(from_symbol.empty() ? same_entry(0) : indexed(from_symbol, ij)) + " \\quad\\text{(not rotated)}", value});
    e.text = std::string("This feature lies beyond RoPE’s rotated dimensions: ") + (back ? "its gradient" : "it") +
             " passes through unchanged.";
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
  const std::string features = std::to_string(a + 1) + " and " + std::to_string(b + 1);
  const std::string by =
      (tables ? std::string("of the cos/sin tables") : angle + " rad") + " at position " + js_number(e.position) + ". ";
  e.text = back ? "RoPE turned features " + features + " together by the angle " + by +
                      "A rotation’s transpose is the rotation back, so the gradient is turned back by the same angle."
                : "RoPE turns features " + features + " together, as a point in a plane, by the angle " + by +
                      "A rotation keeps the pair’s length, and the dot product of a rotated query and key depends "
                      "only on how far apart they are.";
}

void ExplainedCell::given() {
  e.kind = "input";
  derive({value + " \\quad\\text{(given)}"});
  e.text = step->given.at(0) + " was given directly: this number is one of your inputs.";
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
    e.text = "Copied from head " + std::to_string(e.source_head + 1) + ", feature " + std::to_string(e.source_col + 1) +
             " of its output: the heads sit side by side.";
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
    derive({std::string(c % 2 == 0 ? "\\sin(" : "\\cos(") + num(e.angle) + ") \\quad\\text{(position " +
                js_number(e.position) + ")}",
            value});
    e.text = "Position " + js_number(e.position) + ", feature " + c1 +
             ": even features take the sine, odd ones the cosine of the same angle, position / 10000^(2i/d) "
             "with i = " +
             std::to_string(c / 2) + " and d = " + std::to_string(n.X.cols()) +
             "; the angle shrinks by a constant factor every two features, so each pair turns at its own speed.";
  } else if (step_id == "X_pos") {
    e.kind = "add";
    e.input = n.X(r, c);
    e.additive = input(0)(r, c);
    const std::string x = num(e.input), pe = num(e.additive);
    derive({indexed("X", ij) + " + " + same_entry(0), x + " + (" + pe + ")", value});
    e.text = "The token’s number plus its position encoding.";
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
    const std::string pair_words = "pair " + std::to_string(pair + 1) + " (features " +
                                   std::to_string(e.pair_first + 1) + " and " + std::to_string(e.pair_second + 1) + ")";
    if (rope.cos) {
      const std::string sin = num(turn.sin), cos = num(turn.cos);
      derive({"\\operatorname{atan2}(" + sin + ", " + cos + ")", value});
      e.text = "Position " + p + ", " + pair_words + ": the angle whose cosine and sine the tables give " + "in row " +
               p + ", column " + std::to_string(pair + 1) + " (atan2(sin, cos), in radians).";
    } else {
      const double theta = std::pow(rope.base, -2.0 * pair / rope.dims);
      const std::string base = js_number(rope.base), dims = std::to_string(rope.dims);
      const std::string per_position = num(theta);
      derive({p + " \\cdot " + base + "^{-2 \\cdot " + i + "/" + dims + "}", p + " \\cdot " + per_position, value});
      e.text =
          "Position " + p + ", " + pair_words + ": θ = " + base + "^(−2·" + i + "/" + dims + ") = " + per_position +
          " radians per position, times the position. Each pair turns at its own "
          "speed, the first pairs fastest; a query and a key are turned apart by the difference of their positions.";
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
      e.text = "Layer norm of @token's " + std::to_string(x.size()) + " features of this head: subtract their mean " +
               mean + ", divide by the square root of their variance " + spread + " plus ε, times the gain " + gain +
               ". Each row then has mean 0 and variance 1 (before the gains), whatever the size of the projection.";
    } else {
      derive({"\\frac{" + xi + "}{\\sqrt{\\operatorname{mean}(x^2) + \\varepsilon}}\\, " + g +
                  ",\\quad \\operatorname{mean}(x^2) = " + spread,
              "\\frac{" + in + "}{\\sqrt{" + spread + " + " + eps_n + "}} \\cdot " + gain,
              "\\frac{" + in + "}{" + d + "} \\cdot " + gain, value});
      e.text = std::string("RMS norm of @token's ") + std::to_string(x.size()) +
               (head_normed ? " output features of this head" : " features of this head") +
               ": divide by the root of their mean square " + spread + " plus ε, times " +
               (head_normed ? "1 − λ_init = " : "the gain ") + gain + "." +
               (head_normed ? " Every head's output row then has the same scale, whatever its λ."
                            : " Each row's length is then about √d_k, so scores cannot grow with the projections.");
    }
    std::vector<double> squares;
    for (double v : e.left) squares.push_back(layer ? (v - e.mean) * (v - e.mean) : v * v);
    table("Features of @token", {"feature", "x", layer ? "(x − mean)²" : "x²"}, "feature", {e.left, squares},
          static_cast<int>(c));
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
      derive({"0 \\quad\\text{(every key of this query is masked)}"});
      e.text = "Every key of this query is masked, so all its weights are 0 (no softmax is taken).";
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
    e.text = "Differential attention, half " + std::to_string(half + 1) +
             ": the query of @query and every key over features " + first + ".." + last +
             " only, scaled (and masked) as usual, then a softmax along the row. Σ exp = " + sum + ".";
    table("Keys of @query", {"key", "score", "score − max", "exp"}, "key", {e.logits, e.shifted, e.exps},
          static_cast<int>(c));
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
    e.text = "Both halves give this key weight: A₁ = " + a1 + " and A₂ = " + a2 + ". What they share, " + common_n +
             " here, is the common-mode part: attention both maps pay whatever the question (noise, or a sink), and "
             "λ·A₂ = " +
             la2 + " subtracts it. What is left, " + value +
             ", is the part only the first half sees. Each row of A sums to 1 − λ = " + rest +
             " (the softmaxes each sum to 1), and entries may be negative.";
    const Matrix w1 = input(0), w2 = input(1);
    std::vector<double> one(w1.row(r).data(), w1.row(r).data() + w1.cols()), two, scaled, diff;
    for (Eigen::Index j = 0; j < w2.cols(); ++j) {
      two.push_back(w2(r, j));
      scaled.push_back(e.lambda * w2(r, j));
      diff.push_back(w1(r, j) - e.lambda * w2(r, j));
    }
    table("Keys of @query", {"key", "A₁", "A₂", "λ·A₂", "A₁ − λ·A₂"}, "key", {one, two, scaled, diff},
          static_cast<int>(c));
  } else if (step_id == "weights" && n.sigmoid) {
    e.kind = "sigmoid";
    e.input = input(0)(r, c);
    e.has_bias = true;
    e.bias = n.sigmoid_bias;
    read_mask();
    const std::string x = num(e.input), b = num(e.bias);
    if (e.hidden || e.input == -std::numeric_limits<double>::infinity()) {
      derive({"0 \\quad\\text{(hidden)}"});
      e.text = hidden_by(e) + " Sigmoid attention gives a hidden key weight 0, whatever mask_fill is.";
    } else {
      const std::string z = num(e.input + e.bias);
      derive({"\\sigma(" + same_entry(0) + " + b) = \\frac{1}{1 + e^{-(" + same_entry(0) + " + b)}}",
              "\\frac{1}{1 + e^{-(" + x + " + (" + b + "))}}", "\\frac{1}{1 + e^{-(" + z + ")}}", value});
      e.text = "Sigmoid attention: each weight on its own, σ(score + b) with b = " + b +
               (std::isnan(n.options.sigmoid_bias) ? " (−ln S, S = " + std::to_string(n.S) + " keys)" : std::string()) +
               ". No key competes with another, so the row need not sum to 1.";
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
    e.text = "The token @token times column " + cj + " of W_G" + (e.has_bias ? ", plus its bias" : "") +
             ", through the sigmoid: " +
             (n.gate_headwise ? "one gate for all of this head's output"
                              : "one gate for this feature of the head's output") +
             ", between 0 (shut) and 1 (open).";
    table("Terms", {"m", "X value", "weight", "product"}, "m", {e.left, e.right, e.products});
  } else if (step_id == "gated_output") {
    e.kind = "gated";
    e.input = input(0)(r, c);
    e.factor = input(1)(r, n.gate_headwise ? 0 : c);
    const std::string x = num(e.input), g = num(e.factor);
    derive({indexed(input_step(0).symbol, ij) + " \\cdot " +
                indexed(input_step(1).symbol, at(r1, n.gate_headwise ? "1" : c1)),
            x + " \\cdot " + g, value});
    e.text = "The head's output times its gate " + g + ": the gate lets " + (e.factor > 0.5 ? "most" : "little") +
             " of it through (a gate near 0 lets a head say nothing for this token).";
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
    e.text = cached ? "Read from the cache: row " + source_row + ", feature " + source_col + " of " + e.source +
                          ", a token seen earlier whose " + (step_id == "K_cache" ? "key" : "value") +
                          " the model kept instead of computing it again."
                    : "A new token: row " + source_row + ", feature " + source_col +
                          " of this step’s new rows, appended after the cached ones.";
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
    e.text = "The query of @query dotted with the key of @key, over the d_k = " + std::to_string(n.d_k) +
             " features: the sum of the products is " + value + ".";
    table("Term by term", {"feature", "q", "k", "q × k"}, "feature", {e.left, e.right, e.products});
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
      e.text = s.kind == Scale::Kind::SqrtDk ? "The score divided by √d_k = √" + root + " = " + d + "."
               : root.empty()                ? "The score divided by the chosen divisor " + d + "."
                                             : "The score divided by √" + root + " = " + d + ".";
    } else {
      const std::string f = num(e.factor);
      derive({f + " \\cdot " + score, f + " \\cdot " + in, value});
      e.text = "The score multiplied by the scale " + f + (e.factor == 1 ? " (no scaling)." : ".");
    }
  } else if (step_id == "softcapped") {
    e.kind = "softcap";
    e.input = input(0)(r, c);
    e.factor = n.options.softcap;
    const std::string cap = num(e.factor);
    derive({"c\\,\\tanh\\!\\left(" + same_entry(0) + " / c\\right)",
            cap + "\\,\\tanh\\!\\left(" + num(e.input) + " / " + cap + "\\right)", value});
    e.text = "Soft-capping squashes large scores smoothly into (−c, c), c = " + cap + ".";
  } else if (step_id == "alibi") {
    e.kind = "alibi";
    e.slope = n.alibi_slopes[static_cast<size_t>(step->head)];
    e.query_pos = n.query_pos[static_cast<size_t>(r)];
    e.key_pos = n.key_pos[static_cast<size_t>(c)];
    const std::string m = num(e.slope), p = js_number(e.query_pos), q = js_number(e.key_pos);
    derive({"-m\\,\\lvert p_i - p_j \\rvert", "-" + m + " \\cdot \\lvert " + p + " - " + q + " \\rvert", value});
    e.text = "ALiBi: this head’s slope m = " + m + " times the distance between the query’s position " + p +
             " and the key’s " + q + ", subtracted: far keys lose more.";
  } else if (step_id == "biased") {
    e.kind = "bias";
    e.input = input(0)(r, c);
    e.additive = input(1)(r, c);
    const std::string score = num(e.input), bias = num(e.additive);
    derive({same_entry(0) + " + " + same_entry(1), score + " + (" + bias + ")", value});
    e.text = "The scaled score plus the ALiBi bias of this query and key.";
  } else if (step_id == "mask" || step_id == "masked") {
    read_mask();
    const std::string why = "hidden by " + join(e.components, ", ");
    if (step_id == "mask") {
      e.kind = "mask_entry";
      derive({value + " \\quad\\text{(" + (e.hidden ? why : e.kept_by_sink ? "kept: a sink token" : "visible") + ")}"});
      e.text = e.hidden ? hidden_by(e) : "This key is visible to this query." + kept_by_sink(e);
    } else {
      e.kind = "mask";
      e.input = input(0)(r, c);
      if (e.hidden && std::isfinite(e.fill)) {
        // A finite mask_fill replaces a hidden score (masked_fill).
        const std::string fill = num(e.fill);
        derive({fill + " \\quad\\text{(" + why + ": the fill)}"});
        e.text = hidden_by(e) + " The hidden score is replaced by the fill " + fill +
                 ", not −∞: after the softmax this key keeps a tiny weight, and a query whose keys are all "
                 "hidden spreads its weight evenly over them.";
      } else {
        const std::string score = num(e.input), added = num(e.additive);
        derive({same_entry(0) + " + " + same_entry(1), score + " + (" + added + ")", value});
        e.text = e.hidden          ? hidden_by(e) + " −∞ becomes weight 0 after the softmax."
                 : e.additive == 0 ? "This key is visible: the mask adds 0." + kept_by_sink(e)
                                   : "The additive mask biases this score.";
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
      derive({"0 \\quad\\text{(every key of this query is masked)}"});
      e.text = "Every key of this query is masked, so all its weights are 0 (no softmax is taken).";
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
    e.text = std::string("Softmax along the ") + (n.columns ? "column" : "row") +
             " of @query: subtract the largest score" + (e.has_sink ? " or sink logit" : "") + " (" + m +
             ") so no exponential overflows, exponentiate, divide by the sum. Σ exp" +
             (e.has_sink ? " (with the sink’s)" : "") + " = " + sum + ".";
    if (e.has_sink) {
      const std::string share = num(e.sink_share), rest = num(1 - e.sink_share);
      e.text += " The sink logit " + sink + " joins the denominator (e^(sink − m) = " + sink_exp +
                ") but has no value: it takes " + share + " of this query’s attention, so its weights sum to " + rest +
                ".";
    }
    table("Keys of @query", {"key", "score", "score − max", "exp"}, "key", {e.logits, e.shifted, e.exps},
          static_cast<int>(c));
  } else if (step_id == "phi_Q" || step_id == "phi_K") {
    e.kind = "feature_map";
    e.input = input(0)(r, c);
    const std::string x = num(e.input);
    const std::string of = same_entry(0);
    switch (n.feature_map()) {
      case FeatureMap::EluPlusOne:
        if (e.input > 0) {
          derive({"\\operatorname{elu}(" + of + ") + 1", x + " + 1", value});
          e.text = "elu(x) + 1 with x = " + x + " > 0: elu leaves a positive number as it is, so φ(x) = x + 1.";
        } else {
          derive({"\\operatorname{elu}(" + of + ") + 1", "(e^{" + x + "} - 1) + 1 = e^{" + x + "}", value});
          e.text = "elu(x) + 1 with x = " + x +
                   " ≤ 0: elu(x) = eˣ − 1, so φ(x) = eˣ, still above 0. "
                   "Every feature of φ is positive, so no linear score is negative and the normalizer is never 0.";
        }
        break;
      case FeatureMap::Relu:
        derive({"\\max(0,\\, " + of + ")", "\\max(0,\\, " + x + ")", value});
        e.text =
            e.input > 0
                ? "relu keeps a positive number as it is."
                : "relu turns a number ≤ 0 into 0: this feature adds nothing to the query’s (or key’s) dot products.";
        break;
      case FeatureMap::Identity:
        derive({of + " \\quad\\text{(identity)}", value});
        e.text = "The identity feature map: φ(x) = x. Scores may then be negative, and a normalizer may be 0.";
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
      derive({"0 \\quad\\text{(causal: the key comes after the query)}"});
      e.text =
          "Causal linear attention: @key comes after @query, so it adds nothing to its sum (0, not −∞: there is no "
          "softmax).";
    } else if (e.factor != 1) {
      const std::string gamma = num(n.decay()), factor = num(e.factor);
      const std::string distance = js_number(e.query_pos - e.key_pos);
      derive({"\\gamma^{" + distance + "} " + sum, factor + " \\cdot (@terms(0,1))", value});
      e.text = "φ of the query of @query dotted with φ of the key of @key, times the decay γ = " + gamma +
               " raised to their distance " + distance + " (" + factor + "): older keys fade.";
    } else {
      derive({sum, "@terms(0,1)", value});
      e.text =
          "φ of the query of @query dotted with φ of the key of @key: no exponential, no scale. "
          "The sum over keys of these times V is the state S = Σ φ(k)vᵀ read by φ(q).";
    }
    table("Term by term", {"feature", "φ(q)", "φ(k)", "φ(q) × φ(k)"}, "feature", {e.left, e.right, e.products});
  } else if (step_id == "normalizer") {
    e.kind = "row_sum";
    const Vector row = input(0).row(r).transpose();
    e.left.assign(row.data(), row.data() + row.size());
    derive({"\\sum_j " + indexed(input_step(0).symbol, r1 + ",j"), "@terms(0)", value});
    e.text =
        "The linear scores of @query summed over the keys: φ(q)·z with z = Σ φ(k) (with the decay, each key "
        "weighed by it). Dividing by it makes the query’s weights sum to 1, as a softmax’s do.";
    table("Keys of @query", {"key", "linear score"}, "key", {e.left}, static_cast<int>(c));
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
      e.text = "The linear scores of @query times feature " + c1 +
               " of each value, summed, then divided by the "
               "normalizer " +
               d + ": a weighted mean of the values.";
    } else {
      derive({sum, "@terms(0,1)", value});
      e.text = "The linear scores of @query times feature " + c1 + " of each value, summed (not normalized).";
    }
    table("Weighted values", {"key", "linear score", "value", "score × value"}, "key", {e.left, e.right, e.products});
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
    e.text = "The weights of @query times feature " + c1 + " of each value, summed.";
    table("Weighted values", {"key", "weight", "value", "weight × value"}, "key", {e.left, e.right, e.products});
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
    const std::string source = output ? "the heads" : from_step ? "X′" : names[0] == "X_kv" ? "X_kv" : "X";
    e.text = std::string("The ") + (output ? "row" : "token") + " @token of " + source + " times one " +
             (n.columns ? "row" : "column") + " of the weights, term by term" +
             (e.has_bias ? ", plus the bias " + bias.substr(3) : "") + ".";
    table("Terms", {"m", output ? "H value" : "X value", "weight", "product"}, "m", {e.left, e.right, e.products});
  }
}

bool ExplainedCell::latent_cell() {
  const int h = step->head;
  const auto W = [&](const char* name, bool per_head) { return given_symbol(name, per_head ? h : -1, n); };
  // Row `row` of `in` times column `w_col` of `Wm`: a projection written with the head's own indices.
  const auto projection = [&](const Vector& in_row, const std::string& in_symbol, const std::string& in_row1,
                              const Matrix& Wm, const std::string& W_symbol, Eigen::Index w_col,
                              const std::string& text) {
    e.kind = "projection";
    dot(in_row, Wm.col(w_col));
    derive(
        {"\\sum_m " + indexed(in_symbol, in_row1 + ",m") + "\\," + indexed(W_symbol, "m," + c1), "@terms(0,1)", value});
    e.text = text;
    table("Terms", {"m", "input", "weight", "product"}, "m", {e.left, e.right, e.products});
  };
  // A row of a step that holds cached rows first: copied from the cache.
  const auto cached = [&](const char* source, const char* what) {
    e.kind = "cache";
    e.source = source;
    e.source_row = r;
    e.source_col = c;
    derive({indexed(given_symbol(source, -1, n), r1 + "," + c1), value});
    e.text = std::string("Read from the cache: row ") + r1 + ", feature " + c1 + " of " + source + ", the " + what +
             " of a token seen earlier. A latent cache keeps only c_KV and k_R: every head's keys and values are "
             "computed again from them.";
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
                 "Token @token of X times one column of W_DKV: its latent c_KV, the one vector a latent cache "
                 "keeps for the keys and values of every head (d_c = " +
                     std::to_string(n.d_c) + " numbers).");
    }
  } else if (step_id == "k_R") {
    if (r < n.past) {
      cached("past_k_R", "rotated key");
    } else {
      rotation(n.X, r - n.past, n.W_KR, 0, n.key_pos[static_cast<size_t>(r)], "(X\\,W_{KR})");
      e.text +=
          " k_R is one rotated key for all heads: it carries the position, which the latent cannot (RoPE "
          "would not commute with W_UK).";
    }
  } else if (step_id == "c_Q") {
    projection(x_row(r), "X", r1, *n.W_DQ, W("W_DQ", false), c,
               "Token @token of X times one column of W_DQ: the queries' latent c_Q.");
  } else if (step_id == "K_C" || step_id == "V") {
    const bool keys = step_id == "K_C";
    const Matrix c_kv = input(0);
    projection(c_kv.row(r).transpose(), input_step(0).symbol, r1, keys ? n.W_UK : n.W_UV,
               W(keys ? "W_UK" : "W_UV", true), step->feature_first + c,
               std::string("The latent c_KV of @token times one column of ") + (keys ? "W_UK" : "W_UV") +
                   ": this head's " + (keys ? "key" : "value") + " is computed from the latent, not cached.");
  } else if (step_id == "Q_C") {
    if (n.W_DQ) {
      projection(input(0).row(r).transpose(), input_step(0).symbol, r1, *n.W_UQ, W("W_UQ", true),
                 step->feature_first + c,
                 "The queries' latent c_Q of @token times one column of W_UQ: the content part of this head's query.");
    } else {
      projection(x_row(r), "X", r1, n.W_Q, W("W_Q", true), step->feature_first + c,
                 "Token @token of X times one column of W_Q: the content part of this head's query.");
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
      e.text = "The rotary query of @query dotted with the shared rotary key of @key (d_r = " + std::to_string(n.d_r) +
               " features): the part of the score that knows the positions.";
    } else if (step_id == "scores_C_absorbed") {
      const Step* naive = nullptr;
      for (const Step& s : t.steps) {
        if (s.id == "scores_C" && s.head == h) naive = &s;
        if (!naive && s.id == "scores" && s.head == h) naive = &s;
      }
      const double same = naive->values(r, c);
      e.input = same;
      e.text = "The absorbed query of @query (W_UK folded in) dotted with the latent c_KV of @key itself: " + value +
               ", and the naive form's content score q_C·k_C is " + num(same) + " (a difference of " +
               num(e.value - same) + ", rounding). (q_C W_UKᵀ)·c = q_C·(c W_UK): no key need be computed or cached.";
    } else {
      e.text =
          "The content query of @query dotted with the key of @key that this head computed from the latent (d_h = " +
          std::to_string(n.d_h) + " features).";
    }
    table("Term by term", {"feature", "q", "k", "q × k"}, "feature", {e.left, e.right, e.products});
  } else if (step_id == "scores") {
    e.kind = "sum";
    e.left = {input(0)(r, c), input(1)(r, c)};
    const std::string a = num(e.left[0]), b = num(e.left[1]);
    derive(
        {indexed(input_step(0).symbol, ij) + " + " + indexed(input_step(1).symbol, ij), a + " + (" + b + ")", value});
    e.text = "The content score plus the rotary score: [q_C, q_R]·[k_C, k_R], one dot product over d_h + d_r = " +
             std::to_string(n.d_k) + " features, split in two.";
  } else if (step_id == "Q_absorbed") {
    const Matrix q_c = input(0);
    e.kind = "projection";
    dot(q_c.row(r).transpose(), n.W_UK.row(c).segment(static_cast<Eigen::Index>(h) * n.d_h, n.d_h).transpose());
    const std::string Wuk = W("W_UK", true);
    derive({"\\sum_m " + indexed(input_step(0).symbol, r1 + ",m") + "\\," + indexed(Wuk, c1 + ",m"), "@terms(0,1)",
            value});
    e.text = "The content query of @query times row " + c1 +
             " of this head's W_UK (its transpose's column): the query "
             "moved into the latent space, so it can be dotted with c_KV directly.";
    table("Terms", {"m", "q_C", "W_UK", "product"}, "m", {e.left, e.right, e.products});
  } else if (step_id == "O_latent") {
    e.kind = "weighted_sum";
    dot(input(0).row(r).transpose(), input(1).col(c));
    derive({"\\sum_k " + indexed(input_step(0).symbol, r1 + ",k") + "\\," + indexed(input_step(1).symbol, "k," + c1),
            "@terms(0,1)", value});
    e.text = "The weights of @query times feature " + c1 +
             " of each key's latent, summed: the head's output before W_UV, "
             "which the absorbed form folds into W_O.";
    table("Weighted latents", {"key", "weight", "latent", "weight × latent"}, "key", {e.left, e.right, e.products});
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
    e.text = "Each head's latent output times W_UV·W_O (W_UV folded into W_O), summed over the heads: " + value +
             "; the naive output O computed it as " + num(same) + ". A model can store W_UV·W_O once and never form V.";
    std::vector<double> heads;
    for (int head = 0; head < n.heads; ++head) heads.push_back(head + 1);
    table("Heads", {"m", "head", "head's term"}, "m", {heads, e.left});
  } else if (step_id == "cache_sizes") {
    e.kind = "cache_size";
    const auto forms = latent_cache_forms(n);
    e.source = forms.at(static_cast<size_t>(c)).first;
    const std::string& form = e.source;
    if (form == "MLA") {
      e.left = {static_cast<double>(n.d_c), static_cast<double>(n.d_r)};
      derive({"d_c + d_r", num(e.left[0]) + " + " + num(e.left[1]), value});
      e.text =
          "Multi-head latent attention caches one latent c_KV (d_c numbers) and one rotated key k_R (d_r) per token, "
          "whatever the number of heads.";
    } else {
      const double groups = form == "MHA" ? n.heads : form == "MQA" ? 1 : std::stod(form.substr(8));
      e.left = {2, groups, static_cast<double>(n.d_h)};
      derive({"2 \\cdot g \\cdot d_h", "2 \\cdot " + num(groups) + " \\cdot " + num(e.left[2]), value});
      e.text = form + ": a key and a value of d_h = " + std::to_string(n.d_h) + " numbers for each of its " +
               js_number(groups) + " key/value head" + (groups == 1 ? "" : "s") + " per token" +
               (form == "MHA" ? " (one per query head)." : ".");
    }
  } else {
    return false;
  }
  return true;
}

}  // namespace attn
