// The attention variants of issue 31 (QK-norm, the output gate, sigmoid attention, differential
// attention): each against a direct transcription of its formula on random problems, the
// identities the issue names, finite-difference gradients, the worked calculations of the new
// steps, and the refusals (each naming its keys).
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "attention.h"
#include "said.h"
#include "gradients.h"
#include "numpy_random.h"
#include "english.h"

using attn::Matrix;
using attn::Problem;
using Params = std::vector<std::pair<std::string, std::string>>;  // an explanation's message parameters
using attn::Vector;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

const attn::Step* find_step(const attn::Trace& t, const std::string& id, int head) {
  for (const attn::Step& s : t.steps) {
    if (s.id == id && s.head == head) return &s;
  }
  return nullptr;
}

/// X with W_Q, W_K, W_V (d_model 5, d_k 4, d_v 3 per head), biases and W_O; dO random.
Problem projected(unsigned seed, int L, int heads = 2) {
  attn::RandomState rng(seed);
  Problem p;
  const int d_model = 5;
  p.X = rng.randn(L, d_model);
  p.W_Q = rng.randn(d_model, 4 * heads);
  p.W_K = rng.randn(d_model, 4 * heads);
  p.W_V = rng.randn(d_model, 3 * heads);
  p.b_Q = Vector(rng.randn(4 * heads, 1));
  p.b_K = Vector(rng.randn(4 * heads, 1));
  p.W_O = rng.randn(3 * heads, 2);
  p.options.heads = heads;
  p.dO = rng.randn(L, 2);
  return p;
}

Matrix softmax_rows(const Matrix& x) {
  Matrix out(x.rows(), x.cols());
  for (Eigen::Index i = 0; i < x.rows(); ++i) {
    const double m = x.row(i).maxCoeff();
    const Eigen::RowVectorXd e = (x.row(i).array() - m).exp().matrix();
    out.row(i) = e / e.sum();
  }
  return out;
}

Matrix norm_rows(const Matrix& x, bool layer, double eps, const Vector& g) {
  Matrix out(x.rows(), x.cols());
  for (Eigen::Index i = 0; i < x.rows(); ++i) {
    const double mean = layer ? x.row(i).mean() : 0;
    const double spread = (x.row(i).array() - mean).square().mean();
    out.row(i) = ((x.row(i).array() - mean) / std::sqrt(spread + eps) * g.transpose().array()).matrix();
  }
  return out;
}

double sigmoid(double x) { return 1 / (1 + std::exp(-x)); }

/// Per head: Q_h, K_h, V_h of the projections, then `head` maps them to the head's output.
Matrix by_heads(const Problem& p, const std::function<Matrix(const Matrix&, const Matrix&, const Matrix&, int)>& head) {
  const Matrix Q = (*p.X * *p.W_Q).rowwise() + p.b_Q->transpose();
  const Matrix K = (*p.X * *p.W_K).rowwise() + p.b_K->transpose();
  const Matrix V = *p.X * *p.W_V;
  const int heads = p.options.heads;
  const Eigen::Index d_k = Q.cols() / heads, d_v = V.cols() / heads;
  Matrix concat(Q.rows(), V.cols());
  for (int h = 0; h < heads; ++h) {
    concat.middleCols(h * d_v, d_v) =
        head(Q.middleCols(h * d_k, d_k), K.middleCols(h * d_k, d_k), V.middleCols(h * d_v, d_v), h);
  }
  return concat * *p.W_O;
}

/// Central differences of Σ O∘dO against a gradient step (head -1), entry by entry.
void check_gradient(const Problem& p, const std::string& step_id,
                    const std::function<double&(Problem&, Eigen::Index)>& entry) {
  const attn::Gradients g = attn::gradients(p);
  const attn::Step* step = find_step(g.trace, step_id, -1);
  INFO("gradient " << step_id);
  REQUIRE(step != nullptr);
  const double largest = step->values.cwiseAbs().maxCoeff();
  const auto loss = [&](const Problem& q) { return attn::run(q).output.cwiseProduct(*p.dO).sum(); };
  for (Eigen::Index k = 0; k < step->values.size(); ++k) {
    const double h = 1e-5;
    Problem plus = p, minus = p;
    entry(plus, k) += h;
    entry(minus, k) -= h;
    const double difference = (loss(plus) - loss(minus)) / (2 * h);
    const double analytic = step->values.data()[k];
    INFO("entry " << k << ": analytic " << analytic << ", differences " << difference);
    CHECK(std::abs(analytic - difference) <= 1e-6 * std::max({std::abs(difference), largest, 1e-3}));
  }
}

#define MATRIX_ENTRY(member) [](Problem& q, Eigen::Index k) -> double& { return q.member->data()[k]; }

void check_inputs(const Problem& p) {
  check_gradient(p, "dX", MATRIX_ENTRY(X));
  check_gradient(p, "dW_Q", MATRIX_ENTRY(W_Q));
  check_gradient(p, "dW_K", MATRIX_ENTRY(W_K));
  check_gradient(p, "dW_V", MATRIX_ENTRY(W_V));
  check_gradient(p, "db_Q", MATRIX_ENTRY(b_Q));
  check_gradient(p, "db_K", MATRIX_ENTRY(b_K));
  check_gradient(p, "dW_O", MATRIX_ENTRY(W_O));
}

/// Every cell of the steps `ids` explains itself: its value, lines, text and numbers.
void check_explanations(const Problem& p, std::initializer_list<const char*> ids) {
  const bool gradient = std::string(*ids.begin())[0] == 'd';
  const attn::Trace t = gradient ? attn::gradients(p).trace : attn::run(p);
  int explained = 0;
  for (const attn::Step& s : t.steps) {
    bool wanted = false;
    for (const char* id : ids) wanted = wanted || s.id == id;
    if (!wanted) continue;
    for (Eigen::Index i = 0; i < s.values.rows(); ++i) {
      for (Eigen::Index j = 0; j < s.values.cols(); ++j) {
        const attn::Explanation e = attn::explain(p, s.id, s.head, i, j);
        INFO(s.id << " head " << s.head << " (" << i << ", " << j << ")");
        CHECK(e.value == s.values(i, j));
        CHECK(!e.lines.empty());
        CHECK(e.text_id.rfind("explain.", 0) == 0);
        CHECK(e.numbers.at(0) == e.value);
        ++explained;
      }
    }
  }
  CHECK(explained > 0);
}

}  // namespace

// ---- QK-norm ------------------------------------------------------------------------------------

TEST_CASE("variants: QK-norm equals its formula (rms and layer, gains, two heads)", "[variants][qk_norm]") {
  for (const bool layer : {false, true}) {
    Problem p = projected(1, 4);
    attn::RandomState rng(2);
    p.options.qk_norm.on = true;
    p.options.qk_norm.type = layer ? attn::QkNorm::Type::Layer : attn::QkNorm::Type::Rms;
    p.options.qk_norm.eps = 1e-3;
    const Vector g_q = rng.randn(4, 1), g_k = rng.randn(4, 1);
    p.options.qk_norm.g_q.assign(g_q.data(), g_q.data() + 4);
    p.options.qk_norm.g_k.assign(g_k.data(), g_k.data() + 4);
    const attn::Trace t = attn::run(p);
    const Matrix expected = by_heads(p, [&](const Matrix& Q, const Matrix& K, const Matrix& V, int) {
      const Matrix q = norm_rows(Q, layer, 1e-3, g_q), k = norm_rows(K, layer, 1e-3, g_k);
      return Matrix(softmax_rows(q * k.transpose() / 2) * V);
    });
    INFO((layer ? "layer" : "rms"));
    CHECK(t.output.isApprox(expected, 1e-12));
    const Matrix Q = (*p.X * *p.W_Q).rowwise() + p.b_Q->transpose();
    CHECK(find_step(t, "Q_normed", 1)->values.isApprox(norm_rows(Q.middleCols(4, 4), layer, 1e-3, g_q), 1e-12));
    // The note: the largest score with and without the norm.
    const Matrix K = (*p.X * *p.W_K).rowwise() + p.b_K->transpose();
    CHECK(t.facts[0].max_score_without_norm == Approx((Q.leftCols(4) * K.leftCols(4).transpose()).maxCoeff()));
    CHECK(t.facts[0].max_score == Approx(find_step(t, "scores", 0)->values.maxCoeff()));
  }
}

TEST_CASE("variants: the layer QK-norm with unit gains leaves each row with mean 0", "[variants][qk_norm]") {
  Problem p = projected(3, 5);
  p.options.qk_norm.on = true;
  p.options.qk_norm.type = attn::QkNorm::Type::Layer;
  const attn::Trace t = attn::run(p);
  for (const char* id : {"Q_normed", "K_normed"}) {
    for (int h = 0; h < 2; ++h) {
      const Matrix& m = find_step(t, id, h)->values;
      for (Eigen::Index i = 0; i < m.rows(); ++i) CHECK(std::abs(m.row(i).mean()) < 1e-12);
    }
  }
  CHECK(std::isnan(attn::run(projected(3, 5)).facts[0].max_score));  // no note without QK-norm
}

TEST_CASE("variants: QK-norm with RoPE and a cache: new keys normalised, then rotated", "[variants][qk_norm]") {
  Problem p;
  attn::RandomState rng(4);
  p.Q = rng.randn(2, 4);
  p.K = rng.randn(2, 4);
  p.V = rng.randn(2, 2);
  p.past_K = rng.randn(3, 4);
  p.past_V = rng.randn(3, 2);
  p.options.qk_norm.on = true;
  p.options.qk_norm.type = attn::QkNorm::Type::Rms;
  p.options.rope.on = true;
  const attn::Trace t = attn::run(p);
  REQUIRE(find_step(t, "K_normed", 0)->values.rows() == 2);
  CHECK(t.steps.at(static_cast<size_t>(find_step(t, "K_rot", 0)->inputs.at(0))).id == "K_normed");
  const Matrix& cache = find_step(t, "K_cache", 0)->values;
  CHECK(cache.topRows(3) == *p.past_K);  // cached keys as the cache stores them
}

TEST_CASE("variants: QK-norm's gradients equal finite differences (dQ, dK before the norm, dg_q, dg_k)",
          "[variants][qk_norm][gradients]") {
  for (const bool layer : {false, true}) {
    Problem p = projected(5, 3);
    p.options.qk_norm.on = true;
    p.options.qk_norm.type = layer ? attn::QkNorm::Type::Layer : attn::QkNorm::Type::Rms;
    p.options.qk_norm.g_q = {0.5, 1.5, -1, 2};
    p.options.qk_norm.g_k = {1, 0.25, 2, -0.5};
    p.options.rope.on = true;
    p.options.causal = true;
    INFO((layer ? "layer" : "rms"));
    check_inputs(p);
    check_gradient(p, "dg_q",
                   [](Problem& q, Eigen::Index k) -> double& { return q.options.qk_norm.g_q[static_cast<size_t>(k)]; });
    check_gradient(p, "dg_k",
                   [](Problem& q, Eigen::Index k) -> double& { return q.options.qk_norm.g_k[static_cast<size_t>(k)]; });
  }
  Problem direct;  // Q, K given: dQ and dK are of Q and K as given, before the norm
  attn::RandomState rng(6);
  direct.Q = rng.randn(3, 4);
  direct.K = rng.randn(4, 4);
  direct.V = rng.randn(4, 2);
  direct.dO = rng.randn(3, 2);
  direct.options.qk_norm.on = true;
  for (const auto type : {attn::QkNorm::Type::Rms, attn::QkNorm::Type::Layer}) {
    direct.options.qk_norm.type = type;
    INFO("direct, type " << static_cast<int>(type));
    check_gradient(direct, "dQ", MATRIX_ENTRY(Q));
    check_gradient(direct, "dK", MATRIX_ENTRY(K));
  }
}

// ---- sigmoid attention --------------------------------------------------------------------------

TEST_CASE("variants: sigmoid attention equals its formula, b = -ln S by default", "[variants][sigmoid]") {
  Problem p = projected(7, 4);
  p.options.score_fn = attn::ScoreFn::Sigmoid;
  p.options.softcap = 3;
  const auto expected = [&](double b) {
    return by_heads(p, [&](const Matrix& Q, const Matrix& K, const Matrix& V, int) {
      const Matrix logits = (3 * (Q * K.transpose() / 2 / 3).array().tanh()).matrix();
      return Matrix(logits.unaryExpr([b](double x) { return sigmoid(x + b); }) * V);
    });
  };
  CHECK(attn::run(p).output.isApprox(expected(-std::log(4.0)), 1e-12));
  p.options.sigmoid_bias = 0.7;
  const attn::Trace t = attn::run(p);
  CHECK(t.output.isApprox(expected(0.7), 1e-12));
  CHECK(t.facts[0].weight_sums[0] != Approx(1));  // rows need not sum to 1
  CHECK(english_formula(find_step(t, "weights", 0)->text).find("rows need not sum to 1") != std::string::npos);
}

TEST_CASE("variants: sigmoid attention gives a key masked with -inf weight 0, whatever mask_fill",
          "[variants][sigmoid]") {
  Problem p = projected(8, 3, 1);
  p.options.score_fn = attn::ScoreFn::Sigmoid;
  p.options.mask = Matrix::Zero(3, 3);
  p.options.mask->col(1).setConstant(-kInf);  // key 2 hidden from every query
  for (const double fill : {-kInf, -5.0}) {
    p.options.mask_fill = fill;
    const attn::Trace t = attn::run(p);
    const Matrix& w = find_step(t, "weights", 0)->values;
    CHECK(w.col(1).isZero());
    CHECK((w.col(0).array() > 0).all());
    CHECK(t.warnings.empty());
  }
  p.options.causal = true;
  p.options.mask->setConstant(-kInf);  // every key hidden: weights and output 0
  const attn::Trace all = attn::run(p);
  CHECK(find_step(all, "weights", 0)->values.isZero());
  CHECK(all.warnings.at(0).id == "warning.fully_masked");
}

TEST_CASE("variants: sigmoid attention's gradients equal finite differences", "[variants][sigmoid][gradients]") {
  Problem p = projected(9, 4);
  p.options.score_fn = attn::ScoreFn::Sigmoid;
  p.options.causal = true;
  p.options.alibi = true;
  check_inputs(p);
}

TEST_CASE("variants: under sigmoid attention, dS is titled by the sigmoid it goes through",
          "[variants][sigmoid][gradients]") {
  Problem p = projected(9, 4);
  const auto title = [&] {
    const attn::Gradients g = attn::gradients(p);
    const attn::Step* dS = find_step(g.trace, "dS", 0);
    return dS ? dS->title_id : std::string("no dS");
  };
  CHECK(title() == "step.dS");
  p.options.score_fn = attn::ScoreFn::Sigmoid;
  CHECK(title() == "step.dS.sigmoid");
}

// ---- the output gate ----------------------------------------------------------------------------

TEST_CASE("variants: the output gate equals its formula, elementwise and headwise", "[variants][gate]") {
  for (const int width : {6, 2}) {  // heads·d_v (elementwise) or heads (headwise)
    Problem p = projected(10, 4);
    attn::RandomState rng(11);
    p.W_G = rng.randn(5, width);
    p.b_G = Vector(rng.randn(width, 1));
    const Matrix G = ((*p.X * *p.W_G).rowwise() + p.b_G->transpose()).unaryExpr([](double x) { return sigmoid(x); });
    const Matrix expected = by_heads(p, [&](const Matrix& Q, const Matrix& K, const Matrix& V, int h) {
      Matrix head = softmax_rows(Q * K.transpose() / 2) * V;
      for (Eigen::Index j = 0; j < head.cols(); ++j) {
        head.col(j) = head.col(j).cwiseProduct(width == 2 ? G.col(h) : G.col(h * 3 + j));
      }
      return head;
    });
    const attn::Trace t = attn::run(p);
    INFO("W_G width " << width);
    CHECK(t.output.isApprox(expected, 1e-12));
    CHECK(find_step(t, "gate", 1)->values.cols() == (width == 2 ? 1 : 3));
    check_inputs(p);
    check_gradient(p, "dW_G", MATRIX_ENTRY(W_G));
    check_gradient(p, "db_G", MATRIX_ENTRY(b_G));
  }
}

TEST_CASE("variants: the gate with one head and no W_O, learned positions and cross-attention", "[variants][gate]") {
  Problem p = projected(12, 3, 1);
  attn::RandomState rng(13);
  p.W_O.reset();
  p.dO = rng.randn(3, 3);
  p.W_G = rng.randn(5, 1);  // headwise
  p.P = rng.randn(3, 5);
  p.X_kv = rng.randn(4, 5);
  const attn::Trace t = attn::run(p);
  CHECK(t.output == find_step(t, "gated_output", 0)->values);
  check_gradient(p, "dX", MATRIX_ENTRY(X));
  check_gradient(p, "dX_kv", MATRIX_ENTRY(X_kv));
  check_gradient(p, "dP", MATRIX_ENTRY(P));
  check_gradient(p, "dW_G", MATRIX_ENTRY(W_G));
}

// ---- differential attention ---------------------------------------------------------------------

TEST_CASE("variants: differential attention equals its formula", "[variants][differential]") {
  Problem p = projected(14, 4);
  p.options.differential.on = true;
  p.options.differential.lambda = {0.3, 0.6};
  p.options.differential.lambda_init = 0.7;
  p.options.causal = true;
  const double s = 1 / std::sqrt(2.0);
  const Matrix expected = by_heads(p, [&](const Matrix& Q, const Matrix& K, const Matrix& V, int h) {
    Matrix mask = Matrix::Zero(4, 4);
    for (int i = 0; i < 4; ++i) {
      for (int j = i + 1; j < 4; ++j) mask(i, j) = -kInf;
    }
    const Matrix A1 = softmax_rows(Q.leftCols(2) * K.leftCols(2).transpose() * s + mask);
    const Matrix A2 = softmax_rows(Q.rightCols(2) * K.rightCols(2).transpose() * s + mask);
    const Matrix x = (A1 - (h == 0 ? 0.3 : 0.6) * A2) * V;
    Matrix out(x.rows(), x.cols());
    for (Eigen::Index i = 0; i < x.rows(); ++i)
      out.row(i) = x.row(i) / std::sqrt(x.row(i).squaredNorm() / 3 + 1e-5) * 0.3;
    return out;
  });
  const attn::Trace t = attn::run(p);
  CHECK(t.output.isApprox(expected, 1e-12));
  CHECK(t.facts[1].lambda == 0.6);
  CHECK(t.facts[0].weight_sums[2] == Approx(1 - 0.3));
}

TEST_CASE("variants: differential attention with lambda 0 and norm off is softmax attention on the first halves",
          "[variants][differential]") {
  attn::RandomState rng(15);
  Problem p;
  p.Q = rng.randn(3, 8);
  p.K = rng.randn(5, 8);
  p.V = rng.randn(5, 4);
  p.options.heads = 2;
  p.options.differential.on = true;
  p.options.differential.lambda = {0};
  p.options.differential.norm = false;
  p.options.causal = true;
  p.options.rope.on = true;
  Problem halves = p;
  halves.options.differential = attn::Differential();
  halves.Q = Matrix(3, 4);
  halves.K = Matrix(5, 4);
  halves.Q->leftCols(2) = p.Q->leftCols(2);
  halves.Q->rightCols(2) = p.Q->middleCols(4, 2);
  halves.K->leftCols(2) = p.K->leftCols(2);
  halves.K->rightCols(2) = p.K->middleCols(4, 2);
  CHECK(attn::run(p).output.isApprox(attn::run(halves).output, 1e-12));
}

TEST_CASE("variants: differential attention's gradients equal finite differences",
          "[variants][differential][gradients]") {
  Problem p = projected(16, 3);
  p.options.differential.on = true;
  p.options.differential.lambda = {0.4, -0.2};
  p.options.causal = true;
  p.options.softcap = 2;
  p.options.rope.on = true;
  check_inputs(p);
  p.options.differential.norm = false;
  p.W_G = attn::RandomState(17).randn(5, 6);  // composed with the gate
  check_inputs(p);
}

// ---- worked calculations ------------------------------------------------------------------------

TEST_CASE("variants: every cell of the new steps explains itself", "[variants][explain]") {
  Problem p = projected(18, 3);
  p.options.qk_norm.on = true;
  p.options.qk_norm.type = attn::QkNorm::Type::Layer;
  p.W_G = attn::RandomState(19).randn(5, 2);
  p.options.score_fn = attn::ScoreFn::Sigmoid;
  p.options.causal = true;
  check_explanations(p, {"Q_normed", "K_normed", "weights", "gate", "gated_output"});
  const attn::Explanation e = attn::explain(p, "Q_normed", 1, 2, 3);
  CHECK(e.kind == "qk_norm");
  CHECK((e.input - e.mean) / e.divisor * e.factor == Approx(e.value));
  const attn::Explanation hidden = attn::explain(p, "weights", 0, 0, 2);
  CHECK(hidden.kind == "sigmoid");
  CHECK(hidden.value == 0);

  Problem d = projected(20, 3);
  d.options.differential.on = true;
  d.options.differential.lambda = {0.5};
  d.options.rope.on = true;
  check_explanations(d, {"weights_1", "weights_2", "weights", "head_normed", "Q_rot"});
  const attn::Explanation w = attn::explain(d, "weights", 1, 2, 0);
  CHECK(w.kind == "difference");
  CHECK(w.part_1 - w.lambda * w.part_2 == Approx(w.value));
  CHECK(w.text_id == "explain.differential.difference");
  CHECK(w.params ==
        Params{{"a1", "@1"}, {"a2", "@2"}, {"common", "@5"}, {"scaled", "@4"}, {"value", "@0"}, {"rest", "@6"}});
  CHECK(w.numbers.at(6) == Approx(1 - w.lambda));
}

// ---- refusals -----------------------------------------------------------------------------------

TEST_CASE("variants: refusals name their keys", "[variants][errors]") {
  Problem p = projected(21, 3);
  Problem q = p;
  q.options.score_fn = attn::ScoreFn::Sigmoid;
  q.options.differential.on = true;
  q.options.differential.lambda = {0.5};
  REQUIRE_THROWS_SAYING(attn::run(q),
                        "options.score_fn \"sigmoid\" and options.differential exclude one another: give one of them");
  q = p;
  q.options.qk_norm.on = true;
  REQUIRE_THROWS_SAYING(attn::run(q), "options.qk_norm.type is required: \"rms\" or \"layer\"");
  q.options.qk_norm.type = attn::QkNorm::Type::Rms;
  q.options.qk_norm.g_q = {1, 2};
  REQUIRE_THROWS_SAYING(attn::run(q),
                        "options.qk_norm.g_q has 2 gains but d_k = 4: one per feature of a head, shared by every head");
  q = p;
  q.W_G = Matrix::Ones(5, 4);
  REQUIRE_THROWS_SAYING(attn::run(q),
                        "W_G has 4 columns but the gate needs heads*d_v = 6 (one gate per output feature) or heads = 2 "
                        "(one gate per head)");
  q = p;
  q.options.score_fn = attn::ScoreFn::Sigmoid;
  q.options.sink_logit = {0};
  REQUIRE_THROWS_SAYING(attn::run(q),
                        Catch::StartsWith("options.sink_logit and options.score_fn \"sigmoid\" exclude one another"));
  q.options.sink_logit.clear();
  q.options.fully_masked = attn::FullyMasked::NaN;
  REQUIRE_THROWS_SAYING(
      attn::run(q),
      Catch::StartsWith("options.fully_masked \"nan\" and options.score_fn \"sigmoid\" exclude one another"));
  q = p;
  q.options.sigmoid_bias = 1;
  REQUIRE_THROWS_SAYING(attn::run(q), "options.sigmoid_bias is given but options.score_fn is not \"sigmoid\"");
  q = projected(22, 3, 1);
  q.W_Q = Matrix::Ones(5, 3);
  q.W_K = Matrix::Ones(5, 3);
  q.b_Q.reset();
  q.b_K.reset();
  q.options.differential.on = true;
  q.options.differential.lambda = {0.5};
  REQUIRE_THROWS_SAYING(attn::run(q),
                        "options.differential needs an even d_k (each head's features split in halves), got d_k = 3");
  q = p;
  q.options.differential.on = true;
  REQUIRE_THROWS_SAYING(attn::run(q), "options.differential.lambda is required: one number, or one per head");
  q.options.differential.lambda = {1, 2, 3};
  REQUIRE_THROWS_SAYING(attn::run(q),
                        "options.differential.lambda needs one number or one per head: 3 given for 2 heads");
  q = p;
  q.options.layout = attn::Layout::Columns;
  q.options.qk_norm.on = true;
  REQUIRE_THROWS_SAYING(attn::run(q),
                        Catch::StartsWith("options.qk_norm is for the rows layout: the columns layout refuses it"));
  Problem direct;
  direct.Q = direct.K = direct.V = Matrix::Ones(2, 2);
  direct.W_G = Matrix::Ones(2, 2);
  REQUIRE_THROWS_SAYING(attn::run(direct), Catch::StartsWith("W_G needs X: the gate is sigmoid(X*W_G + b_G)"));
  direct.W_G.reset();
  direct.b_G = Vector::Ones(2);
  REQUIRE_THROWS_SAYING(attn::run(direct), "b_G is given without W_G: the gate is sigmoid(X*W_G + b_G)");
  // RoPE's widths: differential attention rotates each half of a head (d_k = 4 here, halves of 2).
  q = p;
  q.options.differential.on = true;
  q.options.differential.lambda = {0.5};
  q.options.rope.on = true;
  q.options.rope.dims = 4;
  REQUIRE_THROWS_SAYING(
      attn::run(q), "rope dims must be even and at most d_k/2 = 2 (options.differential rotates each half) (got 4)");
  q = p;
  q.options.rope.on = true;
  q.options.rope.cos = Matrix::Ones(2, 2);
  q.options.rope.sin = Matrix::Ones(2, 2);
  REQUIRE_THROWS_SAYING(attn::run(q), "query 3 is at position 2 but the rope tables have 2 rows (positions 0 to 1)");
}
