// explain(): the worked calculation of a gradient step's cell (the backward pass, gradients.h),
// by the chain rule from the steps it reads. An object of its own, linked only where explain() is
// bound (the walkthroughs module): the core module binds explain_forward, which reaches none of it.
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "explain_cell.h"
#include "gradients.h"
#include "steps.h"

namespace attn {

// Not in explain.cpp, so that a module binding only explain_forward links no backward pass.
Explanation explain(const Problem& problem, const std::string& step_id, int head, Eigen::Index row, Eigen::Index col) {
  if (!is_gradient_step(step_id)) return explain_forward(problem, step_id, head, row, col);
  // A gradient step's cell reads the backward pass (the forward steps, then the gradients).
  const Trace t = gradients(problem).trace;  // checks dO against the output
  Normalized n = normalize(problem);
  if (problem.dO) n.dO = n.columns ? Matrix(problem.dO->transpose()) : *problem.dO;  // as gradients() keeps it
  ExplainedCell cell(n, t, step_id, head, row, col);
  cell.gradient();
  return std::move(cell.e);
}

void ExplainedCell::copy_cell(const Step& from, Eigen::Index from_r, Eigen::Index from_c, Message text) {
  e.kind = "copy";
  e.source = from.id;
  e.source_row = from_r;
  e.source_col = from_c;
  derive({indexed(from.symbol, at(std::to_string(from_r + 1), std::to_string(from_c + 1))), value});
  say(std::move(text));
}

void ExplainedCell::gradient() {
  // Σ_k left[k]·right[k]: the gradient reaching the cell along each k, summed. The subscripts
  // are in the rows layout's order (`at` writes them in the user's), "k" the summed index;
  // `over` labels the terms ("feature", "key", "query" or "m").
  auto chain = [&](const Vector& left, const Vector& right, const std::string& left_name, const std::string& left_sub,
                   const std::string& right_name, const std::string& right_sub, const std::string& over,
                   Message caption, Message text) {
    e.kind = "gradient_dot";
    dot(left, right);
    derive({"\\sum_k " + indexed(left_name, left_sub) + "\\," + indexed(right_name, right_sub), "@terms(0,1)", value});
    say(std::move(text));
    table(std::move(caption),
          {over == "m" ? over : term(over.c_str()), term("gradient"), term("factor"), term("product")}, over,
          {e.left, e.right, e.products});
  };
  // A cell copied from cell (row, col) of step `from` (both in the rows layout).
  auto copy = [&](const Step& from, Eigen::Index from_r, Eigen::Index from_c, Message text) {
    copy_cell(from, from_r, from_c, std::move(text));
  };
  const std::string& id = step_id;
  const char* const along = n.columns ? "column" : "row";  // the parameter `along` of messages
  // The trace's step `name` of `h`, or nullptr.
  auto step_of = [&](const std::string& name, int h) -> const Step* {
    for (const Step& s : t.steps) {
      if (s.id == name && s.head == h) return &s;
    }
    return nullptr;
  };
  // The gate's argument's gradient dZ = dG ∘ G ∘ (1 − G), every head's gate side by side (L×width),
  // G = σ(X'·W_G + b_G) recomputed as gradients.cpp computes it.
  auto gate_dZ = [&]() {
    const Step* x_pos = step_of("X_pos", -1);
    const Matrix X = x_pos ? rows_layout(*x_pos) : n.X;
    Matrix Z = X * *n.W_G;
    if (n.b_G) Z.rowwise() += n.b_G->transpose();
    const Matrix G = Z.unaryExpr([](double z) { return sigmoid<double>(z); });
    const Matrix dG = rows_layout(*step_of("dgate", -1));
    return Matrix(dG.cwiseProduct(G).cwiseProduct(Matrix::Ones(G.rows(), G.cols()) - G));
  };
  // QK-norm (or differential attention's norm of a head's output) turned back, one cell: with
  // x̂ = (x − mean)/σ and u = dy ∘ g, dx_c = (u_c − mean(u) − x̂_c·mean(u ∘ x̂)) / σ (rms: no mean(u)).
  auto norm_back = [&](const Vector& dy, const Vector& x, bool layer, double eps, const std::vector<double>& g,
                       const std::string& gain_name, const char* what) {
    e.kind = "qk_norm_grad";
    const RowNorm norm = row_norm<double>(x, layer, eps);
    const Eigen::Index d = x.size();
    double mean_u = 0, mean_ux = 0;
    for (Eigen::Index k = 0; k < d; ++k) {
      const double xhat = (x[k] - norm.mean) / norm.divisor, u = dy[k] * g[static_cast<size_t>(k)];
      e.left.push_back(u);
      e.right.push_back(xhat);
      e.products.push_back(u * xhat);
      mean_u += u;
      mean_ux += u * xhat;
    }
    mean_u /= static_cast<double>(d);
    mean_ux /= static_cast<double>(d);
    e.input = dy[c];
    e.factor = g[static_cast<size_t>(c)];
    e.mean = layer ? mean_u : 0;
    e.spread = norm.spread;
    e.divisor = norm.divisor;
    const std::string dy_c = num(e.input), g_c = num(e.factor), sigma = num(e.divisor),
                      xhat_c = num(e.right[static_cast<size_t>(c)]);
    const std::string mu = num(e.mean), mux = num(mean_ux);
    const std::string& y = input_step(0).symbol;
    const std::string u_c = indexed(y, at(r1, c1)) + "\\," + gain_name;
    derive({"\\frac{1}{\\sigma}\\Big(" + u_c + (layer ? " - \\operatorname{mean}(u)" : "") + " - \\hat x_{" + c1 +
                "}\\operatorname{mean}(u \\circ \\hat x)\\Big),\\quad u = " + y + "_{" + r1 + ",:} \\circ g",
            "\\frac{1}{" + sigma + "}\\big(" + dy_c + " \\cdot " + g_c + (layer ? " - " + mu : std::string()) + " - (" +
                xhat_c + ")(" + mux + ")\\big)",
            value});
    say({"norm_grad",
         {{"features", std::to_string(d)},
          {"what", what},
          {"sigma", sigma},
          {"layer", yes(layer)},
          {"mean_u", mu},
          {"mean_ux", mux}}});
    table({"terms.features_of_token"}, {term("feature"), "u = dy·g", "x̂", "u·x̂"}, "feature",
          {e.left, e.right, e.products}, static_cast<int>(c));
  };
  if (n.latent && step->head < 0 && latent_gradient()) return;
  if (id == "dO") {
    if (n.dO) {
      given();
    } else {
      e.kind = "input";
      derive({value + " \\quad\\text{(@{formula.no} } dO \\text{ @{formula.given}: @{formula.all_ones})}"});
      say({"dO.ones"});
    }
  } else if ((id == "dhead_output" || id == "dgated_output" || id == "dhead_normed") && input_step(0).id == "dO") {
    const Eigen::Index feature = step->feature_first + c;
    const std::string f1 = std::to_string(feature + 1);
    if (!n.W_O) {
      copy(input_step(0), r, feature, {"dhead.copy", {{"feature", c1}, {"column", f1}}});
    } else {
      const Matrix dO = input(0);
      chain(dO.row(r).transpose(), n.W_O->row(feature).transpose(), input_step(0).symbol, at(r1, "k"),
            given_symbol("W_O", -1, n), at(f1, "k"), "feature", {"terms.output_features"},
            {"dhead.W_O", {{"feature", c1}, {"column", f1}, {"along", along}}});
    }
  } else if ((id == "dhead_output" || id == "dhead_normed") && input_step(0).id == "dgated_output") {
    // head̃ = head ∘ G: the gradient times the gate.
    e.kind = "gated";
    const std::string g_col = n.gate_headwise ? "1" : c1;
    e.input = input(0)(r, c);
    e.factor = input(1)(r, n.gate_headwise ? 0 : c);
    const std::string in = num(e.input), g = num(e.factor);
    derive({same_entry(0) + " \\cdot " + indexed(input_step(1).symbol, at(r1, g_col)), in + " \\cdot " + g, value});
    say({"gated_grad", {{"gate", g}}});
  } else if (id == "dhead_output" && input_step(0).id == "dhead_normed") {
    const std::vector<double> gain(static_cast<size_t>(n.d_v), 1 - n.options.differential.lambda_init);
    norm_back(input(0).row(r).transpose(), input(1).row(r).transpose(), false, 1e-5, gain,
              "(1 - \\lambda_{\\text{init}})", "head");
  } else if (id == "dgate" && step->head >= 0) {
    // head̃ = head ∘ G: dG = dhead̃ ∘ head, summed over the head's features when one gate serves them all.
    const Matrix dy = input(0), pre = input(1);
    if (n.gate_headwise) {
      chain(dy.row(r).transpose(), pre.row(r).transpose(), input_step(0).symbol, at(r1, "k"), input_step(1).symbol,
            at(r1, "k"), "feature", {"terms.output_features"},
            {"dgate.headwise", {{"features", std::to_string(n.d_v)}}});
    } else {
      chain(dy.block(r, c, 1, 1).transpose(), pre.block(r, c, 1, 1).transpose(), input_step(0).symbol, at(r1, c1),
            input_step(1).symbol, at(r1, c1), "feature", {"terms.gated_feature"}, {"dgate", {{"feature", c1}}});
    }
  } else if (id == "dweights_1") {
    copy(input_step(0), r, c, {"dweights_1"});
  } else if (id == "dweights_2") {
    e.kind = "scale";
    e.input = input(0)(r, c);
    e.factor = -n.lambdas[static_cast<size_t>(step->head)];
    const std::string in = num(e.input), f = num(e.factor);
    derive({same_entry(0) + " \\cdot (-\\lambda)", in + " \\cdot (" + f + ")", value});
    say({"dweights_2", {{"factor", f}}});
  } else if (input_step(0).id == "dweights_1") {  // differential attention: dQ, dK of a head (as the scores read them)
    const Eigen::Index w = n.d_k / 2;
    const int half = static_cast<int>(c / w);
    // The other side's step (Q for dK, K for dQ) is this step's third input; its own side is the
    // sibling gradient step's (same dweights_1, the other of dQ / dK).
    const Step* sibling = nullptr;
    for (const Step& s : t.steps) {
      if (&s != step && s.head == step->head && s.inputs.size() == 3 && s.inputs[0] == step->inputs[0]) sibling = &s;
    }
    const bool query = id[1] == 'Q';
    const Matrix other = input(2), own = rows_layout(t.steps[static_cast<size_t>(sibling->inputs[2])]);
    const Matrix& Qh = query ? own : other;
    const Matrix& Kh = query ? other : own;
    const Matrix A = rows_layout(*step_of(half == 0 ? "weights_1" : "weights_2", step->head));
    const Mask mask = n.has_mask() ? combined_mask(n) : Mask();
    const Matrix dS =
        differential_half_back<double>(n, A, input(static_cast<size_t>(half)), Qh.middleCols(half * w, w),
                                       Kh.middleCols(half * w, w), n.has_mask() ? &mask : nullptr, t.scale);
    const std::string k = std::to_string(half + 1), first = std::to_string(half * w + 1),
                      last = std::to_string((half + 1) * w);
    const std::string dS_name = "dS_{" + k + "}";
    const Params how = {{"feature", c1},
                        {"half", k},
                        {"first", first},
                        {"last", last},
                        {"masked", yes(n.has_mask())},
                        {"softcap", yes(n.options.softcap > 0)}};
    if (query) {
      chain(dS.row(r).transpose(), other.col(c), dS_name, at(r1, "k"), input_step(2).symbol, at("k", c1), "key",
            {"terms.keys_of_query"}, {"differential.dQ", how});
    } else {
      chain(dS.col(r), other.col(c), dS_name, at("k", r1), input_step(2).symbol, at("k", c1), "query",
            {"terms.queries_reading"}, {"differential.dK", how});
    }
  } else if (id == "dS" && n.sigmoid) {
    e.kind = "sigmoid_grad";
    e.input = input(1)(r, c);
    const double a = input(0)(r, c);
    e.left = {a};
    e.factor = a * (1 - a);
    const std::string in = num(e.input), an = num(a), f = num(e.factor);
    derive({same_entry(1) + "\\," + same_entry(0) + "\\big(1 - " + same_entry(0) + "\\big)",
            in + " \\cdot " + an + "\\,(1 - " + an + ")", in + " \\cdot " + f, value});
    say({"sigmoid_grad", {{"slope", f}}});
  } else if (id == "dA") {
    const Matrix dH = input(0), V = input(1);
    chain(dH.row(r).transpose(), V.row(c).transpose(), input_step(0).symbol, at(r1, "k"), input_step(1).symbol,
          at(c1, "k"), "feature", {"terms.value_features"}, {"dA", {{"d_v", std::to_string(n.d_v)}}});
  } else if ((id == "dV" || id == "dV_cache") && input_step(0).id == "weights") {
    const Matrix A = input(0), dH = input(1);
    chain(A.col(r), dH.col(c), input_step(0).symbol, at("k", r1), input_step(1).symbol, at("k", c1), "query",
          {"terms.queries_reading"}, {"dV", {{"feature", c1}}});
  } else if (id == "dS") {
    const Matrix A = input(0), dA = input(1);
    e.kind = "softmax_grad";
    dot(A.row(r).transpose(), dA.row(r).transpose());
    e.factor = A(r, c);
    e.input = dA(r, c);
    double average = 0;
    for (double x : e.products) average += x;
    const std::string& a = input_step(0).symbol;
    const std::string& da = input_step(1).symbol;
    const std::string own = n.columns ? "k," + r1 : r1 + ",k";
    const std::string weight = num(e.factor), gradient = num(e.input), mean = num(average);
    derive({indexed(a, ij) + "\\big(" + indexed(da, ij) + " - \\sum_k " + indexed(a, own) + "\\," + indexed(da, own) +
                "\\big)",
            weight + "\\,\\big(" + gradient + " - (@terms(0,1))\\big)", weight + "\\,(" + gradient + " - " + mean + ")",
            value});
    say({"softmax_grad", {{"along", along}, {"mean", mean}, {"sink", yes(!n.sink_logits.empty())}}});
    table({"terms.keys_of_query"}, {term("key"), term("weight"), "dA", term("weight_times_dA")}, "key",
          {e.left, e.right, e.products}, static_cast<int>(c));
  } else if (id == "dS_kept") {
    read_mask();
    e.kind = "mask_grad";
    e.input = input(0)(r, c);
    const std::string why = "@{formula.hidden_by} " + formula_words(e.components);
    if (e.hidden) {
      derive({"0 \\quad\\text{(" + why + ")}"});
      say({"mask_grad.hidden", {{"hidden", hidden_key(e)}, {"fill", yes(std::isfinite(e.fill))}}});
    } else {
      derive({same_entry(0) + " \\quad\\text{(@{formula.visible})}", value});
      say({"mask_grad.visible", {{"sink", yes(e.kept_by_sink)}}});
    }
  } else if (id == "dS_uncapped") {
    e.kind = "softcap_grad";
    e.input = input(0)(r, c);
    const double score = input(1)(r, c), cap = n.options.softcap;
    const double tanh = std::tanh(score / cap);
    e.factor = 1 - tanh * tanh;
    const std::string in = num(e.input), s = num(score), cap_text = num(cap), slope = num(e.factor);
    derive({same_entry(0) + "\\,\\big(1 - \\tanh^2(" + same_entry(1) + " / c)\\big)",
            in + "\\,\\big(1 - \\tanh^2(" + s + " / " + cap_text + ")\\big)", in + " \\cdot " + slope, value});
    say({"softcap_grad", {{"slope", slope}}});
  } else if (id == "dscores") {
    e.kind = "scale";
    e.input = input(0)(r, c);
    e.factor = t.scale;
    const std::string in = num(e.input), f = num(e.factor);
    derive({same_entry(0) + " \\cdot " + f, in + " \\cdot " + f, value});
    say({"scale_grad", {{"factor", f}}});
  } else if (input_step(0).id == "dscores") {  // dQ, dQ_rot, dK, dK_rot, dK_cache of a head
    const Matrix d = input(0), other = input(1);
    const std::string& ds = input_step(0).symbol;
    const std::string& x = input_step(1).symbol;
    if (id[1] == 'Q' || id == "dq_R") {
      chain(d.row(r).transpose(), other.col(c), ds, at(r1, "k"), x, at("k", c1), "key", {"terms.keys_of_query"},
            {"dQ", {{"feature", c1}, {"along", along}}});
    } else {
      chain(d.col(r), other.col(c), ds, at("k", r1), x, at("k", c1), "query", {"terms.queries_reading"},
            {"dK", {{"feature", c1}}});
    }
  } else if (id == "dlinear_scores") {
    // O_i = Σ_j Λ_ij V_j / D_i: dΛ_ij = dO_i·(V_j − O_i) / D_i, or dO_i·V_j without the normalizer.
    const Matrix dH = input(0), V = input(1);
    const bool normalized = step->inputs.size() > 3;
    Vector right = V.row(c).transpose();
    if (normalized) right -= input(2).row(r).transpose();
    e.kind = "linear_score_grad";
    dot(dH.row(r).transpose(), right);
    const std::string& dh = input_step(0).symbol;
    const std::string& v = input_step(1).symbol;
    if (normalized) {
      e.divisor = input(3)(r, 0);
      const std::string d = num(e.divisor);
      derive({"\\frac{\\sum_k " + indexed(dh, r1 + ",k") + "\\,(" + indexed(v, c1 + ",k") + " - " +
                  indexed(input_step(2).symbol, r1 + ",k") + ")}{" + indexed(input_step(3).symbol, r1) + "}",
              "\\frac{@terms(0,1)}{" + d + "}", value});
      say({"linear_score_grad.normalized"});
    } else {
      derive({"\\sum_k " + indexed(dh, r1 + ",k") + "\\," + indexed(v, c1 + ",k"), "@terms(0,1)", value});
      say({"linear_score_grad"});
    }
    table({"terms.value_features"},
          {term("feature"), term("gradient"), normalized ? term("value_minus_output") : term("value"), term("product")},
          "feature", {e.left, e.right, e.products});
  } else if (id == "dV" && input_step(0).id == "linear_scores") {
    const Matrix scores = input(0);
    Matrix dU = input(1);
    if (step->inputs.size() > 2) {
      const Matrix D = input(2);
      for (Eigen::Index i = 0; i < dU.rows(); ++i) dU.row(i) /= D(i, 0);
    }
    chain(scores.col(r), dU.col(c), input_step(0).symbol, at("k", r1), "(" + input_step(1).symbol + "/D)", at("k", c1),
          "query", {"terms.queries_reading"},
          {"linear_dV", {{"normalized", yes(step->inputs.size() > 2)}, {"feature", c1}}});
  } else if (id == "dphi_Q" || id == "dphi_K") {
    Matrix d = input(0);
    for (Eigen::Index i = 0; i < d.rows(); ++i) {
      for (Eigen::Index j = 0; j < d.cols(); ++j) d(i, j) *= n.linear_factor(i, j);
    }
    const Matrix other = input(1);
    const std::string ds = n.options.causal ? "(" + input_step(0).symbol + "\\circ C)" : input_step(0).symbol;
    const Params words = {{"causal", yes(n.options.causal)}, {"feature", c1}};
    if (id == "dphi_Q") {
      chain(d.row(r).transpose(), other.col(c), ds, r1 + ",k", input_step(1).symbol, "k," + c1, "key",
            {"terms.keys_of_query"}, {"dphi_Q", words});
    } else {
      chain(d.col(r), other.col(c), ds, "k," + r1, input_step(1).symbol, "k," + c1, "query", {"terms.queries_reading"},
            {"dphi_K", words});
    }
  } else if (step->head >= 0 && (id == "dQ" || id == "dK") &&
             (input_step(0).id == "dQ_normed" || input_step(0).id == "dK_normed")) {
    const QkNorm& q = n.options.qk_norm;
    const bool queries = id == "dQ";
    norm_back(input(0).row(r).transpose(), input(1).row(r).transpose(), q.type == QkNorm::Type::Layer, q.eps,
              queries ? n.g_q : n.g_k, queries ? "g_{q," + c1 + "}" : "g_{k," + c1 + "}", queries ? "query" : "key");
  } else if (step->head >= 0 && (id == "dQ" || id == "dK") &&
             (input_step(0).id == "dphi_Q" || input_step(0).id == "dphi_K")) {
    e.kind = "feature_map_grad";
    e.input = input(0)(r, c);
    const double x = input(1)(r, c);
    e.left = {x};
    e.factor = feature_map_slope(n.feature_map(), x);
    const std::string in = num(e.input), f = num(e.factor), xs = num(x);
    derive({same_entry(0) + " \\cdot \\phi'(" + same_entry(1) + ")", in + " \\cdot " + f, value});
    say({"feature_map_grad",
         {{"x", xs},
          {"map", n.feature_map() == FeatureMap::Identity ? "identity"
                  : n.feature_map() == FeatureMap::Relu   ? "relu"
                                                          : "elu"}}});
  } else if (step->head >= 0 && (input_step(0).id == "dK_cache" || input_step(0).id == "dV_cache")) {
    copy(input_step(0), n.past + r, c, {"cache_grad", {{"row", std::to_string(n.past + r + 1)}}});
  } else if (input_step(0).id == "dQ_rot" || input_step(0).id == "dK_rot") {
    rotate_pair(input(0), id[1] == 'Q',
                true);  // the rotation's transpose: turned back by the same angle (dQ, dQ_normed)
  } else if (id == "dQ" || id == "dK" || id == "dV" || id == "dpast_K" || id == "dpast_V" || id == "dgate") {
    // A whole gradient: the block of head h's (dQ) or the sum over the heads of a key/value group.
    e.kind = "head_sum";
    std::vector<double> heads;
    std::string sum;
    for (size_t k = 0; k < step->inputs.size(); ++k) {
      const Step& part = input_step(k);
      if (c < part.feature_first || c >= part.feature_first + part.feature_count) continue;
      const std::string col = std::to_string(c - part.feature_first + 1);
      e.left.push_back(input(k)(r, c - part.feature_first));
      heads.push_back(part.head + 1);
      sum += (sum.empty() ? "" : " + ") + indexed(part.symbol, at(r1, col));
    }
    derive({sum, "@terms(1)", value});
    const std::string cached = yes(id.rfind("dpast", 0) == 0);
    if (heads.size() == 1) {
      say({"head_sum.one", {{"head", js_number(heads[0])}, {"cached", cached}}});
    } else {
      say({"head_sum.group",
           {{"group", std::to_string(c / (id == "dK" || id == "dpast_K" ? n.d_k : n.d_v) + 1)},
            {"heads", std::to_string(heads.size())},
            {"cached", cached}}});
    }
    table({"terms.heads"}, {"m", term("head"), term("gradient")}, "m", {heads, e.left});
  } else if (id == "dg_q" || id == "dg_k") {
    // Each gain multiplies feature c of every normalised row of every head: Σ dy ∘ x̂ over them.
    const bool queries = id == "dg_q";
    const QkNorm& q = n.options.qk_norm;
    std::vector<double> heads, rows;
    std::string sum;
    for (size_t k = 0; k < step->inputs.size(); ++k) {
      const Step& part = input_step(k);
      const Matrix dy = input(k), x = rows_layout(*step_of(queries ? "Q" : "K", part.head));
      for (Eigen::Index i = 0; i < dy.rows(); ++i) {
        const RowNorm norm = row_norm<double>(Vector(x.row(i).transpose()), q.type == QkNorm::Type::Layer, q.eps);
        heads.push_back(part.head + 1);
        rows.push_back(static_cast<double>(i + 1));
        e.left.push_back(dy(i, c));
        e.right.push_back((x(i, c) - norm.mean) / norm.divisor);
        e.products.push_back(e.left.back() * e.right.back());
      }
      sum += (sum.empty() ? "" : " + ") + std::string("\\sum_k ") + indexed(part.symbol, "k," + c1) + "\\,\\hat x_{k," +
             c1 + "}";
    }
    e.kind = "gradient_dot";
    derive({sum, "@terms(2,3)", value});
    say({"gain_grad", {{"gain", queries ? "g_q" : "g_k"}, {"feature", c1}, {"queries", yes(queries)}}});
    table({"terms.rows_of_every_head"}, {"m", term("head"), term("row"), term("gradient"), "x̂", term("product")}, "m",
          {heads, rows, e.left, e.right, e.products});
  } else if (id == "dW_G") {
    const Step* x_pos = step_of("X_pos", -1);
    const Matrix X = x_pos ? rows_layout(*x_pos) : n.X;
    const Matrix dZ = gate_dZ();
    chain(X.col(r), dZ.col(c), x_pos ? x_pos->symbol : given_symbol("X", -1, n), at("k", r1), "(dG \\circ G(1 - G))",
          at("k", c1), "query", {"terms.tokens"}, {"dW_G", {{"row", r1}, {"column", c1}}});
  } else if (id == "db_G") {
    e.kind = "token_sum";
    const Vector column = gate_dZ().col(c);
    e.left.assign(column.data(), column.data() + column.size());
    derive({"\\sum_k (dG \\circ G(1 - G))_{k," + c1 + "}", "@terms(0)", value});
    say({"db_G", {{"column", c1}}});
    table({"terms.tokens"}, {"m", term("gradient")}, "m", {e.left});
  } else if (id == "dW_O" || id == "dW_Q" || id == "dW_K" || id == "dW_V") {
    const bool two = step->inputs.size() == 2;
    const Matrix x = two ? input(0) : (id == "dW_Q" || !n.cross) ? n.X : n.X_kv;
    const std::string x_name =
        two ? input_step(0).symbol : given_symbol(id == "dW_Q" || !n.cross ? "X" : "X_kv", -1, n);
    const Step& d = input_step(step->inputs.size() - 1);
    const Matrix dy = input(step->inputs.size() - 1);
    const bool queries = id == "dW_O" || id == "dW_Q";
    const std::string over = queries ? "query" : n.past == 0 ? "key" : "m";
    const char* const made = id == "dW_O" ? "output" : id == "dW_Q" ? "queries" : id == "dW_K" ? "keys" : "values";
    chain(x.col(r), dy.col(c), x_name, at("k", r1), d.symbol, at("k", c1), over, {"terms.tokens"},
          {"dW", {{"row", r1}, {"column", c1}, {"made", made}}});
  } else if (id.rfind("db_", 0) == 0) {
    e.kind = "token_sum";
    const Matrix d = input(0);
    const Vector column = d.col(c);
    e.left.assign(column.data(), column.data() + column.size());
    derive({"\\sum_k " + indexed(input_step(0).symbol, at("k", c1)), "@terms(0)", value});
    say({"db", {{"feature", c1}}});
    table({"terms.tokens"}, {"m", term("gradient")}, "m", {e.left});
  } else if (id == "dX" || id == "dX_kv") {
    // Each projection that reads X: d·Wᵀ, the paths added.
    e.kind = "gradient_dot";
    std::string sum;
    for (size_t k = 0; k < step->inputs.size(); ++k) {
      const Step& d = input_step(k);
      const bool gate = d.id == "dgate";  // through the gate's sigmoid: dZ = dG ∘ G(1 − G) times W_G
      const std::string w = gate ? std::string("W_G") : std::string("W_") + d.id[1];
      const Matrix& W = gate ? *n.W_G : d.id == "dQ" ? n.W_Q : d.id == "dK" ? n.W_K : n.W_V;
      const Matrix g = gate ? gate_dZ() : input(k);
      for (Eigen::Index m = 0; m < g.cols(); ++m) {
        e.left.push_back(g(r, m));
        e.right.push_back(W(c, m));
        e.products.push_back(g(r, m) * W(c, m));
      }
      const std::string d_name = gate ? std::string("(dG \\circ G(1 - G))") : d.symbol;
      sum += (k ? " + " : "") + std::string("\\sum_k ") + indexed(d_name, at(r1, "k")) + "\\," +
             indexed(given_symbol(w, -1, n), at(c1, "k"));
    }
    derive({sum, "@terms(0,1)", value});
    const char* const paths = step->inputs.size() == 1 ? "queries"
                              : id == "dX" && !n.cross ? "qkv"
                              : id == "dX"             ? "queries"
                                                       : "kv";
    say({"dX", {{"feature", c1}, {"paths", paths}, {"gate", yes(id == "dX" && n.W_G)}, {"along", along}}});
    // The paths by their gradients' symbols (dQ, dK, dV, dG), in the order of the terms.
    // (One path: cross-attention's X reaches only the queries, dQ; `given` names its weight, W_Q.)
    const std::vector<std::string> gradients = step->inputs.size() == 1 ? std::vector<std::string>{"dQ"} : step->given;
    Params named = {{"count", std::to_string(gradients.size())}};
    const char* const ordinals[] = {"first", "second", "third", "fourth"};
    for (size_t k = 0; k < gradients.size() && k < 4; ++k) named.emplace_back(ordinals[k], gradients[k]);
    table({"terms.paths_named", std::move(named)}, {"m", term("gradient"), term("weight"), term("product")}, "m",
          {e.left, e.right, e.products});
  } else if (id == "dP") {
    copy(input_step(0), r, c, {"dP"});
  } else {
    throw input_error(ErrorPlace{"step"}, "explain-no-gradient", {{"step", id}});
  }
}

// Multi-head latent attention's whole gradients (gradients.cpp, latent_back): sums of paths through
// the projections (dc_KV, dc_Q, dX), the weights' gradients over the tokens, the shared rotary
// key's sum over the heads, the cache's rows. RoPE is turned back where a projection read the
// rotated key or query. False: not one of them (dO, dW_O, db_O take the usual calculations).
bool ExplainedCell::latent_gradient() {
  const std::string& id = step_id;
  const Rope& rope = n.options.rope;
  const Eigen::Index past = n.past;
  // The k-th input's values turned back by RoPE (dq_R of a head at the queries' positions, or
  // dk_R's new rows at the keys').
  const auto unrotated = [&](size_t k) {
    const Step& s = input_step(k);
    if (s.id == "dq_R") return rotate<double>(input(k), rope, n.query_pos, 0, /*back=*/true);
    return rotate<double>(Matrix(input(k).bottomRows(n.S - past)), rope, n.key_pos, static_cast<size_t>(past),
                          /*back=*/true);
  };
  const auto unrotate = [](const std::string& x) { return "\\operatorname{RoPE}^{-1}(" + x + ")"; };
  // Σ over paths of Σ_m g[r][m]·W[c][m]: a gradient reaching this row of a latent (or of X)
  // through every projection that read it.
  struct Path {
    Matrix g;
    Matrix W;  // the projection's columns the path went through (its rows: this step's features)
    std::string g_name, W_name;
  };
  const auto paths = [&](const std::vector<Path>& list, Message text) {
    e.kind = "gradient_dot";
    std::string sum;
    for (const Path& p : list) {
      for (Eigen::Index m = 0; m < p.g.cols(); ++m) {
        e.left.push_back(p.g(r, m));
        e.right.push_back(p.W(c, m));
        e.products.push_back(p.g(r, m) * p.W(c, m));
      }
      sum += (sum.empty() ? "" : " + ") + std::string("\\sum_k ") + indexed(p.g_name, r1 + ",k") + "\\," +
             indexed(p.W_name, c1 + ",k");
    }
    derive({sum, "@terms(0,1)", value});
    say(std::move(text));
    table({"terms.paths", {{"count", std::to_string(list.size())}}},
          {"m", term("gradient"), term("weight"), term("product")}, "m", {e.left, e.right, e.products});
  };
  // Σ_i A[i][r]·G[i][col]: a weight's gradient, over the tokens that went through it.
  const auto tokens = [&](const Matrix& A, const Matrix& G, Eigen::Index col, const std::string& A_name,
                          const std::string& G_name, Message text) {
    e.kind = "gradient_dot";
    dot(A.col(r), G.col(col));
    derive({"\\sum_k " + indexed(A_name, "k," + r1) + "\\," + indexed(G_name, "k," + std::to_string(col + 1)),
            "@terms(0,1)", value});
    say(std::move(text));
    table({"terms.tokens"}, {"m", term("input"), term("gradient"), term("product")}, "m",
          {e.left, e.right, e.products});
  };
  const auto head_of = [&](Eigen::Index width) { return static_cast<size_t>(c / width); };
  const Matrix& X = n.X;
  const std::string Xs = given_symbol("X", -1, n);
  if (id == "dk_R") {
    e.kind = "head_sum";
    std::vector<double> heads;
    std::string sum;
    for (size_t k = 0; k < step->inputs.size(); ++k) {
      e.left.push_back(input(k)(r, c));
      heads.push_back(input_step(k).head + 1);
      sum += (sum.empty() ? "" : " + ") + indexed(input_step(k).symbol, r1 + "," + c1);
    }
    derive({sum, "@terms(1)", value});
    say({"latent.dk_R", {{"heads", std::to_string(heads.size())}}});
    table({"terms.heads"}, {"m", term("head"), term("gradient")}, "m", {heads, e.left});
  } else if (id == "dpast_c_KV" || id == "dpast_k_R") {
    copy_cell(input_step(0), r, c, {"latent.dpast", {{"row", r1}, {"source", input_step(0).id}}});
  } else if (id == "dc_KV") {
    std::vector<Path> list;
    for (size_t k = 0; k < step->inputs.size(); ++k) {
      const Step& s = input_step(k);
      const bool keys = s.id == "dK_C";
      const Eigen::Index w = keys ? n.d_h : n.d_v;
      list.push_back({input(k), (keys ? n.W_UK : n.W_UV).middleCols(s.head * w, w), s.symbol,
                      given_symbol(keys ? "W_UK" : "W_UV", n.heads > 1 ? s.head : -1, n)});
    }
    paths(list, {"latent.dc_KV", {{"feature", c1}}});
  } else if (id == "dc_Q") {
    std::vector<Path> list;
    for (size_t k = 0; k < step->inputs.size(); ++k) {
      const Step& s = input_step(k);
      if (s.id == "dQ_C") {
        list.push_back({input(k), n.W_UQ->middleCols(s.head * n.d_h, n.d_h), s.symbol,
                        given_symbol("W_UQ", n.heads > 1 ? s.head : -1, n)});
      } else {
        list.push_back({unrotated(k), n.W_QR.middleCols(s.head * n.d_r, n.d_r), unrotate(s.symbol),
                        given_symbol("W_QR", n.heads > 1 ? s.head : -1, n)});
      }
    }
    paths(list, {"latent.dc_Q", {{"feature", c1}, {"rotary", yes(n.qr_from_cq)}}});
  } else if (id == "dX") {
    std::vector<Path> list;
    for (size_t k = 0; k < step->inputs.size(); ++k) {
      const Step& s = input_step(k);
      if (s.id == "dc_KV")
        list.push_back({Matrix(input(k).bottomRows(n.S - past)), n.W_DKV, s.symbol, given_symbol("W_DKV", -1, n)});
      if (s.id == "dk_R") list.push_back({unrotated(k), n.W_KR, unrotate(s.symbol), given_symbol("W_KR", -1, n)});
      if (s.id == "dc_Q") list.push_back({input(k), *n.W_DQ, s.symbol, given_symbol("W_DQ", -1, n)});
      if (s.id == "dQ_C")
        list.push_back({input(k), n.W_Q.middleCols(s.head * n.d_h, n.d_h), s.symbol,
                        given_symbol("W_Q", n.heads > 1 ? s.head : -1, n)});
      if (s.id == "dq_R")
        list.push_back({unrotated(k), n.W_QR.middleCols(s.head * n.d_r, n.d_r), unrotate(s.symbol),
                        given_symbol("W_QR", n.heads > 1 ? s.head : -1, n)});
    }
    paths(list, {"latent.dX",
                 {{"feature", c1},
                  {"rotary", yes(n.d_r > 0)},
                  {"c_Q", yes(n.W_DQ.has_value())},
                  {"rotary_query", yes(n.d_r > 0 && !n.qr_from_cq)}}});
  } else if (id == "dW_UK" || id == "dW_UV" || id == "dW_UQ" || id == "dW_Q" || id == "dW_QR") {
    const Eigen::Index w = id == "dW_UV" ? n.d_v : id == "dW_QR" ? n.d_r : n.d_h;
    const size_t h = head_of(w);
    const size_t first = id == "dW_Q" || (id == "dW_QR" && !n.qr_from_cq) ? 0 : 1;  // c_KV or c_Q first
    const size_t k = first + h;
    const Matrix A = first ? input(0) : X;
    const std::string A_name = first ? input_step(0).symbol : Xs;
    const Matrix G = id == "dW_QR" ? unrotated(k) : input(k);
    const std::string G_name = id == "dW_QR" ? unrotate(input_step(k).symbol) : input_step(k).symbol;
    tokens(A, G, c % w, A_name, G_name,
           {"latent.dW_up",
            {{"row", r1},
             {"column", c1},
             {"head_column", std::to_string(c % w + 1)},
             {"head", std::to_string(h + 1)},
             {"what", id == "dW_UK"   ? "keys"
                      : id == "dW_UV" ? "values"
                      : id == "dW_QR" ? "rotary"
                                      : "content"}}});
  } else if (id == "dW_DKV" || id == "dW_KR") {
    const Matrix G = id == "dW_KR" ? unrotated(0) : Matrix(input(0).bottomRows(n.S - past));
    const std::string G_name = id == "dW_KR" ? unrotate(input_step(0).symbol) : input_step(0).symbol;
    tokens(X, G, c, Xs, G_name, {"latent.dW_down", {{"row", r1}, {"column", c1}, {"rotary", yes(id == "dW_KR")}}});
  } else if (id == "dW_DQ") {
    tokens(X, input(0), c, Xs, input_step(0).symbol, {"latent.dW_DQ", {{"row", r1}, {"column", c1}}});
  } else {
    return false;
  }
  return true;
}

}  // namespace attn
