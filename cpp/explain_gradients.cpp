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
Explanation explain(const Problem& problem, const std::string& step_id, int head, Eigen::Index row,
                    Eigen::Index col) {
  if (!is_gradient_step(step_id)) return explain_forward(problem, step_id, head, row, col);
  // A gradient step's cell reads the backward pass (the forward steps, then the gradients).
  const Trace t = gradients(problem).trace;  // checks dO against the output
  Normalized n = normalize(problem);
  if (problem.dO) n.dO = n.columns ? Matrix(problem.dO->transpose()) : *problem.dO;  // as gradients() keeps it
  ExplainedCell cell(n, t, step_id, head, row, col);
  cell.gradient();
  return std::move(cell.e);
}

void ExplainedCell::gradient() {
  // The variants of issue 31 have gradients (gradients.cpp) but no worked calculations of their
  // gradient cells yet: say so rather than explain a cell by a rule that does not hold for it.
  const char* variant = n.options.qk_norm.on ? "options.qk_norm"
                        : n.W_G             ? "W_G"
                        : n.sigmoid         ? "options.score_fn \"sigmoid\""
                        : !n.lambdas.empty() ? "options.differential"
                                             : nullptr;
  if (variant && step_id != "dO") {
    throw InputError(std::string("explain has no worked calculation yet for the gradient cells of a problem with ") + variant +
                     " (engine.gradients computes them)");
  }
  // Σ_k left[k]·right[k]: the gradient reaching the cell along each k, summed. The subscripts
  // are in the rows layout's order (`at` writes them in the user's), "k" the summed index;
  // `over` labels the terms ("feature", "key", "query" or "m").
  auto chain = [&](const Vector& left, const Vector& right, const std::string& left_name, const std::string& left_sub,
                   const std::string& right_name, const std::string& right_sub, const std::string& over,
                   std::string caption, std::string text) {
    e.kind = "gradient_dot";
    dot(left, right);
    derive({"\\sum_k " + indexed(left_name, left_sub) + "\\," + indexed(right_name, right_sub), "@terms(0,1)", value});
    e.text = std::move(text);
    table(std::move(caption), {over, "gradient", "factor", "product"}, over, {e.left, e.right, e.products});
  };
  // A cell copied from cell (row, col) of step `from` (both in the rows layout).
  auto copy = [&](const Step& from, Eigen::Index from_r, Eigen::Index from_c, std::string text) {
    e.kind = "copy";
    e.source = from.id;
    e.source_row = from_r;
    e.source_col = from_c;
    derive({indexed(from.symbol, at(std::to_string(from_r + 1), std::to_string(from_c + 1))), value});
    e.text = std::move(text);
  };
  const std::string& id = step_id;
  const std::string along = n.columns ? "column" : "row";
  if (id == "dO") {
    if (n.dO) {
      given();
    } else {
      e.kind = "input";
      derive({value + " \\quad\\text{(no } dO \\text{ given: all ones)}"});
      e.text = "No dO was given, so it is all ones: the loss is L = Σ O, and every output entry’s gradient is 1.";
    }
  } else if (id == "dhead_output") {
    const Eigen::Index feature = step->feature_first + c;
    const std::string head_words = "this head’s feature " + c1 + " is feature " + std::to_string(feature + 1) + " of the heads side by side";
    if (!n.W_O) {
      copy(input_step(0), r, feature, "The heads sit side by side in the output: " + head_words + ", so its gradient is that column of dO.");
    } else {
      const Matrix dO = input(0);
      const std::string f1 = std::to_string(feature + 1);
      chain(dO.row(r).transpose(), n.W_O->row(feature).transpose(), input_step(0).symbol, at(r1, "k"),
            given_symbol("W_O", -1, n), at(f1, "k"), "feature", "Output features of @token",
            "The output is the heads times W_O, and " + head_words + ": it reaches every output feature through " +
                (n.columns ? "column " : "row ") + f1 + " of W_O. So its gradient is dO of @token times that " + along +
                ", summed.");
    }
  } else if (id == "dA") {
    const Matrix dH = input(0), V = input(1);
    chain(dH.row(r).transpose(), V.row(c).transpose(), input_step(0).symbol, at(r1, "k"), input_step(1).symbol,
          at(c1, "k"), "feature", "Features of the value of @key",
          "The output of @query is Σ_j A_ij·V_j: the weight of @key multiplies the value of @key. So its gradient is "
          "the output gradient of @query dotted with that value, over the d_v = " + std::to_string(n.d_v) + " features.");
  } else if ((id == "dV" || id == "dV_cache") && input_step(0).id == "weights") {
    const Matrix A = input(0), dH = input(1);
    chain(A.col(r), dH.col(c), input_step(0).symbol, at("k", r1), input_step(1).symbol, at("k", c1), "query",
          "Queries that read @key",
          "The value of @key reaches every query through that query’s weight on it: the weights on @key times the "
          "output gradients of feature " + c1 + ", summed over the queries.");
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
    derive({indexed(a, ij) + "\\big(" + indexed(da, ij) + " - \\sum_k " + indexed(a, own) + "\\," + indexed(da, own) + "\\big)",
            weight + "\\,\\big(" + gradient + " - (@terms(0,1))\\big)", weight + "\\,(" + gradient + " - " + mean + ")", value});
    e.text = "The softmax’s Jacobian, " + along + " by " + along + ": raising the score of @key raises its own weight "
             "and lowers every other weight of @query. So its gradient is its weight times (its dA minus the weighted "
             "average of dA over the " + along + ", Σ_k A·dA = " + mean + ")." +
             (n.sink_logits.empty() ? "" : " The sink takes part of the softmax but has no value: its dA is 0.");
    table("Keys of @query", {"key", "weight", "dA", "weight × dA"}, "key", {e.left, e.right, e.products}, static_cast<int>(c));
  } else if (id == "dS_kept") {
    read_mask();
    e.kind = "mask_grad";
    e.input = input(0)(r, c);
    const std::string why = "hidden by " + join(e.components, ", ");
    if (e.hidden) {
      derive({"0 \\quad\\text{(" + why + ")}"});
      e.text = hidden_by(e) + " A hidden score is replaced by " +
               (std::isfinite(e.fill) ? "the fill" : std::string("−∞")) +
               " whatever it was, so changing it changes nothing: no gradient flows back through it.";
    } else {
      derive({same_entry(0) + " \\quad\\text{(visible)}", value});
      e.text = "This key is visible: the mask passes the gradient on unchanged." + kept_by_sink(e);
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
    e.text = "Soft-capping c·tanh(s/c) has the slope 1 − tanh²(s/c) = " + slope +
             " here: near 1 for small scores, near 0 where the cap saturates. The gradient is multiplied by it.";
  } else if (id == "dscores") {
    e.kind = "scale";
    e.input = input(0)(r, c);
    e.factor = t.scale;
    const std::string in = num(e.input), f = num(e.factor);
    derive({same_entry(0) + " \\cdot " + f, in + " \\cdot " + f, value});
    e.text = "The scores were multiplied by the scale " + f + ", so their gradient is the next step’s multiplied by the same " + f + ".";
  } else if (input_step(0).id == "dscores") {  // dQ, dQ_rot, dK, dK_rot, dK_cache of a head
    const Matrix d = input(0), other = input(1);
    const std::string& ds = input_step(0).symbol;
    const std::string& x = input_step(1).symbol;
    if (id[1] == 'Q') {
      chain(d.row(r).transpose(), other.col(c), ds, at(r1, "k"), x, at("k", c1), "key", "Keys of @query",
            "The scores of @query are its query dotted with every key: feature " + c1 + " of the query meets feature " +
                c1 + " of each key. So its gradient is the " + along + " of score gradients times those key features, summed.");
    } else {
      chain(d.col(r), other.col(c), ds, at("k", r1), x, at("k", c1), "query", "Queries that read @key",
            "Every query’s score with @key is that query dotted with this key: feature " + c1 + " of the key meets "
            "feature " + c1 + " of each query. So its gradient is the score gradients of @key times those query features, "
            "summed over the queries.");
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
      e.text = "The output of @query is Σ_j Λ_ij·V_j / D_i, and D_i = Σ_j Λ_ij too: raising the score of @key pulls the "
               "output toward that key’s value, by (V_j − O_i) / D_i. Dotted with the output gradient of @query.";
    } else {
      derive({"\\sum_k " + indexed(dh, r1 + ",k") + "\\," + indexed(v, c1 + ",k"), "@terms(0,1)", value});
      e.text = "The output of @query is Σ_j Λ_ij·V_j: the score of @key multiplies the value of @key. So its gradient is "
               "the output gradient of @query dotted with that value.";
    }
    table("Features of the value of @key", {"feature", "gradient", normalized ? "value − output" : "value", "product"},
          "feature", {e.left, e.right, e.products});
  } else if (id == "dV" && input_step(0).id == "linear_scores") {
    const Matrix scores = input(0);
    Matrix dU = input(1);
    if (step->inputs.size() > 2) {
      const Matrix D = input(2);
      for (Eigen::Index i = 0; i < dU.rows(); ++i) dU.row(i) /= D(i, 0);
    }
    chain(scores.col(r), dU.col(c), input_step(0).symbol, at("k", r1), "(" + input_step(1).symbol + "/D)", at("k", c1),
          "query", "Queries that read @key",
          "The value of @key reaches every query through that query’s linear score on it" +
              std::string(step->inputs.size() > 2 ? ", over the query’s normalizer" : "") +
              ": the scores on @key times the output gradients of feature " + c1 + ", summed over the queries.");
  } else if (id == "dphi_Q" || id == "dphi_K") {
    Matrix d = input(0);
    for (Eigen::Index i = 0; i < d.rows(); ++i) {
      for (Eigen::Index j = 0; j < d.cols(); ++j) d(i, j) *= n.linear_factor(i, j);
    }
    const Matrix other = input(1);
    const std::string ds = n.options.causal ? "(" + input_step(0).symbol + "\\circ C)" : input_step(0).symbol;
    const std::string decay = n.options.causal ? " (times the decay and the causal mask C, which are constants)" : "";
    if (id == "dphi_Q") {
      chain(d.row(r).transpose(), other.col(c), ds, r1 + ",k", input_step(1).symbol, "k," + c1, "key", "Keys of @query",
            "The linear scores of @query are φ of its query dotted with φ of every key" + decay + ": its gradient is the "
            "row of score gradients times feature " + c1 + " of each φ(k), summed.");
    } else {
      chain(d.col(r), other.col(c), ds, "k," + r1, input_step(1).symbol, "k," + c1, "query", "Queries that read @key",
            "Every query’s linear score with @key is φ of that query dotted with φ of this key" + decay + ": its gradient is "
            "the score gradients of @key times feature " + c1 + " of each φ(q), summed over the queries.");
    }
  } else if (step->head >= 0 && (id == "dQ" || id == "dK") && (input_step(0).id == "dphi_Q" || input_step(0).id == "dphi_K")) {
    e.kind = "feature_map_grad";
    e.input = input(0)(r, c);
    const double x = input(1)(r, c);
    e.left = {x};
    e.factor = feature_map_slope(n.feature_map(), x);
    const std::string in = num(e.input), f = num(e.factor), xs = num(x);
    derive({same_entry(0) + " \\cdot \\phi'(" + same_entry(1) + ")", in + " \\cdot " + f, value});
    e.text = "φ was applied feature by feature, so the gradient is multiplied by its slope at x = " + xs + ": " +
             (n.feature_map() == FeatureMap::Identity ? std::string("1 (the identity).")
              : n.feature_map() == FeatureMap::Relu   ? std::string("1 above 0, 0 below (relu).")
                                                      : std::string("1 above 0, eˣ below (elu + 1)."));
  } else if (step->head >= 0 && (input_step(0).id == "dK_cache" || input_step(0).id == "dV_cache")) {
    copy(input_step(0), n.past + r, c,
         "The cached rows come first: this new token is row " + std::to_string(n.past + r + 1) +
             " of the cache and the new rows, and its gradient is that row’s (the cached rows’ go to past_K / past_V).");
  } else if (input_step(0).id == "dQ_rot" || input_step(0).id == "dK_rot") {
    rotate_pair(input(0), id == "dQ", true);  // the rotation's transpose: turned back by the same angle
  } else if (id == "dQ" || id == "dK" || id == "dV" || id == "dpast_K" || id == "dpast_V") {
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
    const std::string rows = id.rfind("dpast", 0) == 0 ? " (the cached rows)" : "";
    e.text = heads.size() == 1
                 ? "The heads sit side by side: this is head " + js_number(heads[0]) + "’s gradient" + rows + "."
                 : "Key/value head " + std::to_string(c / (id == "dK" || id == "dpast_K" ? n.d_k : n.d_v) + 1) +
                       " is read by " + std::to_string(heads.size()) +
                       " query heads (grouped-query attention): its gradient is the sum of theirs" + rows + ".";
    table("Heads", {"m", "head", "gradient"}, "m", {heads, e.left});
  } else if (id == "dW_O" || id == "dW_Q" || id == "dW_K" || id == "dW_V") {
    const bool two = step->inputs.size() == 2;
    const Matrix x = two ? input(0) : (id == "dW_Q" || !n.cross) ? n.X : n.X_kv;
    const std::string x_name = two ? input_step(0).symbol : given_symbol(id == "dW_Q" || !n.cross ? "X" : "X_kv", -1, n);
    const Step& d = input_step(step->inputs.size() - 1);
    const Matrix dy = input(step->inputs.size() - 1);
    const bool queries = id == "dW_O" || id == "dW_Q";
    const std::string over = queries ? "query" : n.past == 0 ? "key" : "m";
    const std::string made = id == "dW_O" ? "the output" : id == "dW_Q" ? "the queries" : id == "dW_K" ? "the keys" : "the values";
    chain(x.col(r), dy.col(c), x_name, at("k", r1), d.symbol, at("k", c1), over, "Tokens",
          "This weight multiplies feature " + r1 + " of every token into feature " + c1 + " of " + made +
              ": the tokens’ feature " + r1 + " times the gradients of feature " + c1 + ", summed over the tokens.");
  } else if (id.rfind("db_", 0) == 0) {
    e.kind = "token_sum";
    const Matrix d = input(0);
    const Vector column = d.col(c);
    e.left.assign(column.data(), column.data() + column.size());
    derive({"\\sum_k " + indexed(input_step(0).symbol, at("k", c1)), "@terms(0)", value});
    e.text = "The bias is added to every token’s feature " + c1 + ", so its gradient is that feature’s gradient summed over the tokens.";
    table("Tokens", {"m", "gradient"}, "m", {e.left});
  } else if (id == "dX" || id == "dX_kv") {
    // Each projection that reads X: d·Wᵀ, the paths added.
    e.kind = "gradient_dot";
    std::string sum;
    for (size_t k = 0; k < step->inputs.size(); ++k) {
      const Step& d = input_step(k);
      const std::string w = std::string("W_") + d.id[1];
      const Matrix& W = d.id == "dQ" ? n.W_Q : d.id == "dK" ? n.W_K : n.W_V;
      const Matrix g = input(k);
      for (Eigen::Index m = 0; m < g.cols(); ++m) {
        e.left.push_back(g(r, m));
        e.right.push_back(W(c, m));
        e.products.push_back(g(r, m) * W(c, m));
      }
      sum += (k ? " + " : "") + std::string("\\sum_k ") + indexed(d.symbol, at(r1, "k")) + "\\," + indexed(given_symbol(w, -1, n), at(c1, "k"));
    }
    derive({sum, "@terms(0,1)", value});
    const std::string paths = step->inputs.size() == 1 ? "the queries (through W_Q)" : id == "dX" ? "the queries, keys and values (through W_Q, W_K, W_V)" : "the keys and values (through W_K, W_V)";
    e.text = "Feature " + c1 + " of @token reaches " + paths + ": each path’s gradients times " + along +
             " " + c1 + " of its weights, all added.";
    table(step->inputs.size() == 1 ? "Features of dQ" : "Features of each gradient in turn (" + join(step->given, " path, then ") + " path)",
          {"m", "gradient", "weight", "product"}, "m", {e.left, e.right, e.products});
  } else if (id == "dP") {
    copy(input_step(0), r, c, "The learned positions P are added to X, so their gradient is X’s.");
  } else {
    throw InputError("explain has no worked calculation for gradient step '" + id + "'");
  }
}

}  // namespace attn
