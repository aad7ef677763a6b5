// The backward pass (gradients.h): every gradient of an input equals central finite differences
// of run()'s loss Σ O ∘ dO in float64, in every mode; a 2x2 case checked by hand; the steps'
// descriptions; dO's errors.
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "attention.h"
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

/// Where `call`'s InputError says it is (field | other | row | column), or "no error".
template <class Call>
std::string place_of(Call&& call) {
  try {
    call();
  } catch (const attn::InputError& e) {
    const attn::ErrorPlace& at = e.place();
    return at.field + " | " + at.other + " | " + std::to_string(at.row) + " | " + std::to_string(at.column);
  }
  return "no error";
}

double loss(const Problem& p, const Matrix& dO) { return attn::run(p).output.cwiseProduct(dO).sum(); }

/// An input of the problem as numbers that can be nudged one at a time.
struct Input {
  std::string name;
  std::function<double&(Problem&, Eigen::Index)> entry;
  Eigen::Index size;
};

std::vector<Input> inputs_of(const Problem& p) {
  std::vector<Input> out;
  const auto matrix = [&](const char* name, std::optional<Matrix> Problem::*member) {
    if (!(p.*member)) return;
    out.push_back({name, [member](Problem& q, Eigen::Index k) -> double& { return (q.*member)->data()[k]; },
                   (p.*member)->size()});
  };
  const auto bias = [&](const char* name, std::optional<Vector> Problem::*member) {
    if (!(p.*member)) return;
    out.push_back({name, [member](Problem& q, Eigen::Index k) -> double& { return (q.*member)->data()[k]; },
                   (p.*member)->size()});
  };
  matrix("Q", &Problem::Q);
  matrix("K", &Problem::K);
  matrix("V", &Problem::V);
  matrix("X", &Problem::X);
  matrix("X_kv", &Problem::X_kv);
  matrix("W_Q", &Problem::W_Q);
  matrix("W_K", &Problem::W_K);
  matrix("W_V", &Problem::W_V);
  matrix("W_O", &Problem::W_O);
  bias("b_Q", &Problem::b_Q);
  bias("b_K", &Problem::b_K);
  bias("b_V", &Problem::b_V);
  bias("b_O", &Problem::b_O);
  matrix("past_K", &Problem::past_K);
  matrix("past_V", &Problem::past_V);
  matrix("P", &Problem::P);
  return out;
}

/// Checks every gradient of an input (step "d" + name, head -1) against central differences of
/// the loss, entry by entry, to 1e-6 of the larger of the entry and the gradient's largest
/// entry (an entry near 0 is compared at the scale of its matrix).
void check_against_differences(const Problem& p) {
  const attn::Gradients g = attn::gradients(p);
  const Matrix dO = *p.dO;
  REQUIRE(g.loss == Approx(loss(p, dO)).epsilon(1e-12));
  const std::vector<Input> inputs = inputs_of(p);
  REQUIRE(!inputs.empty());
  for (const Input& input : inputs) {
    const attn::Step* step = find_step(g.trace, "d" + input.name, -1);
    INFO("gradient of " << input.name);
    REQUIRE(step != nullptr);
    REQUIRE(step->values.size() == input.size);
    const double largest = step->values.cwiseAbs().maxCoeff();
    for (Eigen::Index k = 0; k < input.size; ++k) {
      const double h = 1e-5;
      Problem plus = p, minus = p;
      input.entry(plus, k) += h;
      input.entry(minus, k) -= h;
      const double difference = (loss(plus, dO) - loss(minus, dO)) / (2 * h);
      const double analytic = step->values.data()[k];
      INFO("entry " << k << ": analytic " << analytic << ", differences " << difference);
      CHECK(std::abs(analytic - difference) <= 1e-6 * std::max({std::abs(difference), largest, 1e-3}));
    }
  }
}

/// Q, K, V given: L queries, S keys, heads·d_k and kv_heads·d_k wide; dO random.
Problem direct(unsigned seed, int L, int S, int heads = 1, int kv_heads = 0, int d_k = 3, int d_v = 2) {
  attn::RandomState rng(seed);
  const int kv = kv_heads ? kv_heads : heads;
  Problem p;
  p.Q = rng.randn(L, heads * d_k);
  p.K = rng.randn(S, kv * d_k);
  p.V = rng.randn(S, kv * d_v);
  p.options.heads = heads;
  p.options.kv_heads = kv_heads;
  p.dO = rng.randn(L, heads * d_v);
  return p;
}

/// X with W_Q, W_K, W_V (d_model 4, d_k 2 per head) and biases, W_O with b_O; rows layout.
Problem projected(unsigned seed, int L, int heads = 1, bool columns = false) {
  attn::RandomState rng(seed);
  Problem p;
  const int d_model = 4, width = 2 * heads;
  p.X = rng.randn(L, d_model);
  p.W_Q = rng.randn(d_model, width);
  p.W_K = rng.randn(d_model, width);
  p.W_V = rng.randn(d_model, width);
  p.W_O = rng.randn(width, 3);
  p.b_Q = Vector(rng.randn(width, 1));
  p.b_K = Vector(rng.randn(width, 1));
  p.b_V = Vector(rng.randn(width, 1));
  p.b_O = Vector(rng.randn(3, 1));
  p.options.heads = heads;
  p.dO = rng.randn(L, 3);
  if (columns) {  // the same numbers as the UDL book writes them: tokens as columns, Ω = Wᵀ
    p.options.layout = attn::Layout::Columns;
    for (auto* m : {&p.X, &p.W_Q, &p.W_K, &p.W_V, &p.W_O, &p.dO}) **m = Matrix((*m)->transpose());
  }
  return p;
}

}  // namespace

TEST_CASE("gradients: a 2x2 case by hand", "[gradients]") {
  // Q = 0: every score is 0 and every weight 1/2. V = I, so dA = dO·Vᵀ = dO.
  Problem p;
  p.Q = Matrix::Zero(2, 2);
  p.K = (Matrix(2, 2) << 1, 0, 0, 2).finished();
  p.V = Matrix::Identity(2, 2);
  p.dO = (Matrix(2, 2) << 1, 2, 3, 4).finished();
  const attn::Gradients g = attn::gradients(p);
  // dV = Aᵀ·dO = 1/2 (column sums of dO) in each row.
  CHECK(find_step(g.trace, "dV", 0)->values.isApprox((Matrix(2, 2) << 2, 3, 2, 3).finished()));
  CHECK(find_step(g.trace, "dA", 0)->values == *p.dO);
  // dS = A ∘ (dA − rowsum(dA ∘ A)): row 1: rowsum = 1.5, so 1/2 (1 − 1.5), 1/2 (2 − 1.5).
  CHECK(find_step(g.trace, "dS", 0)->values.isApprox((Matrix(2, 2) << -0.25, 0.25, -0.25, 0.25).finished()));
  // dQ = (dS / √2)·K; dK = (dS / √2)ᵀ·Q = 0.
  const double r = 1 / std::sqrt(2.0);
  CHECK(find_step(g.trace, "dQ", -1)
            ->values.isApprox((Matrix(2, 2) << -0.25 * r, 0.5 * r, -0.25 * r, 0.5 * r).finished()));
  CHECK(find_step(g.trace, "dK", -1)->values.isZero());
  CHECK(g.loss == Approx(1 * 0.5 + 2 * 0.5 + 3 * 0.5 + 4 * 0.5));
}

TEST_CASE("gradients equal finite differences: Q, K, V given", "[gradients]") {
  check_against_differences(direct(1, 3, 4));
  check_against_differences(direct(2, 4, 4, 2));  // two heads
}

TEST_CASE("gradients equal finite differences: GQA", "[gradients]") {
  check_against_differences(direct(3, 3, 5, 4, 2));
  check_against_differences(direct(4, 3, 5, 4, 1));  // multi-query
}

TEST_CASE("gradients equal finite differences: X, weights and biases", "[gradients]") {
  check_against_differences(projected(5, 3));
  check_against_differences(projected(6, 4, 2));
  Problem no_w_o = projected(7, 3, 2);
  no_w_o.W_O.reset();
  no_w_o.b_O.reset();
  no_w_o.dO = attn::RandomState(8).randn(3, 4);
  check_against_differences(no_w_o);
}

TEST_CASE("gradients equal finite differences: the columns layout", "[gradients]") {
  const Problem columns = projected(9, 3, 2, true);
  check_against_differences(columns);
  // The same problem in the rows layout: every gradient is the transpose.
  const attn::Gradients a = attn::gradients(columns), b = attn::gradients(projected(9, 3, 2));
  REQUIRE(a.trace.steps.size() == b.trace.steps.size());
  for (size_t k = 0; k < a.trace.steps.size(); ++k) {
    INFO(a.trace.steps[k].id);
    CHECK(a.trace.steps[k].values.isApprox(b.trace.steps[k].values.transpose(), 1e-12));
  }
}

TEST_CASE("gradients equal finite differences: cross-attention", "[gradients]") {
  Problem p = projected(10, 3);
  p.X_kv = attn::RandomState(11).randn(5, 4);
  check_against_differences(p);
}

TEST_CASE("gradients equal finite differences: causal, a keep mask, an additive mask", "[gradients]") {
  Problem causal = direct(12, 4, 4, 2);
  causal.options.causal = true;
  check_against_differences(causal);
  Problem keep = direct(13, 3, 4);
  keep.options.mask = (Matrix(3, 4) << 1, 0, 1, 1, 0, 1, 1, 0, 1, 1, 1, 1).finished();
  keep.options.mask_kind = attn::MaskKind::Keep;
  check_against_differences(keep);
  Problem additive = direct(14, 3, 4);
  additive.options.mask = (Matrix(3, 4) << 0, -1, 0.5, -kInf, 0, 0, 2, 0, -kInf, 0, 0, 0).finished();
  additive.options.mask_kind = attn::MaskKind::Additive;
  check_against_differences(additive);
  // A fully masked query (fully_masked zero): its weights and output are 0 whatever the inputs.
  Problem hidden_row = direct(30, 3, 3);
  hidden_row.options.mask = (Matrix(3, 3) << 1, 1, 0, 0, 0, 0, 1, 0, 1).finished();
  hidden_row.options.mask_kind = attn::MaskKind::Keep;
  check_against_differences(hidden_row);
  CHECK(find_step(attn::gradients(hidden_row).trace, "dS", 0)->values.row(1).isZero());
}

TEST_CASE("gradients equal finite differences: softcap, ALiBi, window and sinks, sink logit", "[gradients]") {
  Problem softcap = direct(15, 3, 4);
  softcap.options.softcap = 1.5;
  check_against_differences(softcap);
  Problem alibi = direct(16, 4, 4, 2);
  alibi.options.alibi = true;
  alibi.options.causal = true;
  check_against_differences(alibi);
  Problem window = direct(17, 6, 6);
  window.options.window_left = 1;
  window.options.window_right = 0;
  window.options.sink_tokens = 1;
  check_against_differences(window);
  Problem sink = direct(18, 3, 4, 2);
  sink.options.sink_logit = {0.5, -1};
  sink.options.causal = true;
  check_against_differences(sink);
}

TEST_CASE("gradients equal finite differences: a finite mask_fill", "[gradients]") {
  Problem p = direct(19, 4, 4);
  p.options.causal = true;
  p.options.mask_fill = -3;  // hidden scores become -3: they keep weight but take no gradient
  check_against_differences(p);
  const attn::Gradients g = attn::gradients(p);
  const Matrix& kept = find_step(g.trace, "dS_kept", 0)->values;
  CHECK(find_step(g.trace, "dS", 0)->values(0, 3) != 0);
  CHECK(kept(0, 3) == 0);
}

TEST_CASE("gradients equal finite differences: RoPE, positions, a KV cache", "[gradients]") {
  Problem half = projected(20, 4, 2);
  half.options.rope.on = true;
  check_against_differences(half);
  Problem interleaved = direct(21, 3, 3, 1, 0, 4, 2);
  interleaved.options.rope.on = true;
  interleaved.options.rope.style = attn::Rope::Style::Interleaved;
  interleaved.options.rope.dims = 2;
  check_against_differences(interleaved);
  Problem sinusoidal = projected(22, 3);
  sinusoidal.options.positional = attn::Positional::Sinusoidal;
  check_against_differences(sinusoidal);
  Problem learned = projected(23, 3);
  learned.P = attn::RandomState(24).randn(3, 4);
  check_against_differences(learned);
  Problem cache = direct(25, 2, 2, 2, 1, 2, 2);
  attn::RandomState rng(26);
  cache.past_K = rng.randn(3, 2);
  cache.past_V = rng.randn(3, 2);
  cache.options.rope.on = true;
  cache.options.causal = true;
  check_against_differences(cache);
}

TEST_CASE("gradients: the steps describe themselves", "[gradients]") {
  Problem p = direct(27, 3, 4, 4, 2);
  p.options.causal = true;
  p.options.softcap = 2;
  const attn::Gradients g = attn::gradients(p);
  const attn::Step* dS = find_step(g.trace, "dS", 1);
  REQUIRE(dS != nullptr);
  CHECK(dS->text == "dS̄⁽²⁾ = A⁽²⁾ ∘ (dA⁽²⁾ − rowsum(dA⁽²⁾ ∘ A⁽²⁾))");
  CHECK(dS->title_id == "step.dS");
  CHECK(find_step(g.trace, "dS_uncapped", 1)->text == "dS̃⁽²⁾ = dŜ⁽²⁾ ∘ (1 − tanh²(S̃⁽²⁾ / c)), c = 2");
  const attn::Step* dK = find_step(g.trace, "dK", -1);
  CHECK(dK->text == "dK = [dK⁽¹⁾ + dK⁽²⁾ | dK⁽³⁾ + dK⁽⁴⁾]");
  CHECK(find_step(g.trace, "dV", 0)->text == "dV⁽¹⁾ = A⁽¹⁾ᵀ·dhead1");
  CHECK(find_step(g.trace, "dO", -1)->given == std::vector<std::string>{"dO"});
  CHECK(find_step(g.trace, "dK", 3)->kv_group == 1);
  CHECK(find_step(g.trace, "dK", 3)->feature_first == 3);
}

TEST_CASE("gradients: dO defaults to ones and is checked", "[gradients]") {
  Problem p = direct(28, 4, 3);
  p.dO.reset();
  const attn::Gradients ones = attn::gradients(p);
  CHECK(ones.loss == Approx(attn::run(p).output.sum()));
  CHECK(find_step(ones.trace, "dO", -1)->values == Matrix::Ones(4, 2));
  CHECK(find_step(ones.trace, "dO", -1)->given.empty());
  CHECK_THROWS_SAYING(attn::gradients(p, Matrix::Ones(3, 2)),
                      "dO has 3 rows but the output has 4 (dO is 3x2, the output is 4x2)");
  CHECK_THROWS_SAYING(attn::gradients(p, Matrix::Ones(4, 3)),
                      "dO has 3 columns but the output has 2 (dO is 4x3, the output is 4x2)");
  Matrix bad = Matrix::Ones(4, 2);
  bad(1, 0) = std::numeric_limits<double>::quiet_NaN();
  CHECK_THROWS_SAYING(attn::gradients(p, bad), "dO: row 2, column 1 is nan, not a finite number");
  // Each error names dO, and a bad entry its 1-based row and column, for a view to mark the cell.
  CHECK(place_of([&] { attn::gradients(p, Matrix::Ones(3, 2)); }) == "dO |  | 0 | 0");
  CHECK(place_of([&] { attn::gradients(p, Matrix::Ones(4, 3)); }) == "dO |  | 0 | 0");
  CHECK(place_of([&] { attn::gradients(p, bad); }) == "dO |  | 2 | 1");
  bad(1, 0) = 1;
  bad(3, 1) = -kInf;
  CHECK_THROWS_SAYING(attn::gradients(p, bad), "dO: row 4, column 2 is -inf, not a finite number");
  CHECK(place_of([&] { attn::gradients(p, bad); }) == "dO |  | 4 | 2");
  // The columns layout: dO as the user gives it (features as rows), its row and column theirs.
  p.options.layout = attn::Layout::Columns;
  p.Q = Matrix(p.Q->transpose());
  p.K = Matrix(p.K->transpose());
  p.V = Matrix(p.V->transpose());
  Matrix columns = Matrix::Ones(2, 4);
  CHECK(place_of([&] { attn::gradients(p, columns); }) == "no error");
  columns(0, 2) = std::numeric_limits<double>::quiet_NaN();
  CHECK(place_of([&] { attn::gradients(p, columns); }) == "dO |  | 1 | 3");
}

TEST_CASE("gradients in float32 are float64's to float32 rounding", "[gradients]") {
  Problem p = projected(29, 4, 2);
  p.options.causal = true;
  const attn::Gradients g64 = attn::gradients(p);
  p.options.precision = attn::Precision::Float32;
  const attn::Gradients g32 = attn::gradients(p);
  REQUIRE(g32.trace.steps.size() == g64.trace.steps.size());
  for (size_t k = 0; k < g64.trace.steps.size(); ++k) {
    const Matrix& a = g64.trace.steps[k].values;
    INFO(g64.trace.steps[k].id);
    CHECK((g32.trace.steps[k].values - a).cwiseAbs().maxCoeff() <= 1e-4 * std::max(1.0, a.cwiseAbs().maxCoeff()));
  }
}

namespace {

/// The value an explanation's own numbers give, by its kind (attn::Explanation::kind).
double recomputed(const attn::Explanation& e, const attn::Trace& t, bool columns) {
  double sum = 0;
  if (e.kind == "gradient_dot" || e.kind == "rotation") {
    for (double x : e.products) sum += x;
    return sum;
  }
  if (e.kind == "softmax_grad") {
    for (double x : e.products) sum += x;
    return e.factor * (e.input - sum);
  }
  if (e.kind == "head_sum" || e.kind == "token_sum") {
    for (double x : e.left) sum += x;
    return sum;
  }
  if (e.kind == "mask_grad") return e.hidden ? 0 : e.input;
  if (e.kind == "softcap_grad" || e.kind == "scale" || e.kind == "sigmoid_grad" || e.kind == "gated")
    return e.input * e.factor;
  if (e.kind == "qk_norm_grad") {  // (u_c − mean(u) − x̂_c·mean(u ∘ x̂)) / σ, u = dy ∘ g (left), x̂ (right)
    for (double x : e.products) sum += x;
    const double xhat = e.right.at(static_cast<size_t>(columns ? e.row : e.col));
    return (e.input * e.factor - e.mean - xhat * sum / static_cast<double>(e.products.size())) / e.divisor;
  }
  if (e.kind == "unrotated") return e.input;
  if (e.kind == "copy") {
    const attn::Step* from = find_step(t, e.source, e.head);
    if (!from) from = find_step(t, e.source, -1);
    REQUIRE(from != nullptr);
    return columns ? from->values(e.source_col, e.source_row) : from->values(e.source_row, e.source_col);
  }
  if (e.kind == "input") return e.value;  // dO: checked against the problem by the caller
  FAIL("no recomputation for kind " << e.kind);
  return 0;
}

/// Every cell of every gradient step: explain() gives the trace's value, and the explanation's
/// own numbers (its products, terms, factors) give it again.
void check_explanations(const Problem& p) {
  const attn::Gradients g = attn::gradients(p);
  const bool columns = p.options.layout == attn::Layout::Columns;
  int explained = 0;
  for (const attn::Step& s : g.trace.steps) {
    if (s.id[0] != 'd') continue;  // the forward steps have their own tests
    for (Eigen::Index i = 0; i < s.values.rows(); ++i) {
      for (Eigen::Index j = 0; j < s.values.cols(); ++j) {
        const attn::Explanation e = attn::explain(p, s.id, s.head, i, j);
        INFO(s.id << " head " << s.head << " cell " << i << "," << j << ": " << e.kind);
        REQUIRE(e.value == s.values(i, j));
        REQUIRE(!e.lines.empty());
        REQUIRE(e.text_id.rfind("explain.", 0) == 0);
        REQUIRE(e.numbers.at(0) == e.value);
        const double scale = std::max(1.0, std::abs(e.value));
        CHECK(std::abs(recomputed(e, g.trace, columns) - e.value) <= 1e-12 * scale);
        ++explained;
      }
    }
  }
  CHECK(explained > 0);
}

}  // namespace

TEST_CASE("explain: every gradient cell's numbers give its value, in every mode", "[gradients][explain]") {
  check_explanations(direct(40, 3, 4));
  check_explanations(direct(41, 3, 5, 4, 2));     // GQA: dK, dV summed over each group
  check_explanations(projected(42, 3, 2));        // X, weights, biases, W_O
  check_explanations(projected(43, 3, 2, true));  // the columns layout
  Problem cross = projected(44, 3);
  cross.X_kv = attn::RandomState(45).randn(4, 4);
  check_explanations(cross);
  Problem masked = direct(46, 4, 4, 2);
  masked.options.causal = true;
  masked.options.softcap = 1.5;
  masked.options.mask_fill = -3;
  check_explanations(masked);
  Problem rope = projected(47, 4, 2);
  rope.options.rope.on = true;
  rope.options.rope.dims = 1 * 2;  // features past dims pass unrotated
  rope.W_Q = attn::RandomState(48).randn(4, 6);
  rope.W_K = attn::RandomState(49).randn(4, 6);
  rope.b_Q.reset();
  rope.b_K.reset();
  check_explanations(rope);
  Problem cache = direct(50, 2, 2, 2, 1, 2, 2);
  attn::RandomState rng(51);
  cache.past_K = rng.randn(3, 2);
  cache.past_V = rng.randn(3, 2);
  cache.options.rope.on = true;
  cache.options.causal = true;
  check_explanations(cache);
  Problem learned = projected(52, 3);
  learned.P = attn::RandomState(53).randn(3, 4);
  learned.options.sink_logit = {0.5};
  learned.dO.reset();  // all ones
  check_explanations(learned);
}

TEST_CASE("explain: gradient cells by hand", "[gradients][explain]") {
  // The 2x2 case above: A = 1/2 everywhere, V = I, dO = [[1, 2], [3, 4]].
  Problem p;
  p.Q = Matrix::Zero(2, 2);
  p.K = (Matrix(2, 2) << 1, 0, 0, 2).finished();
  p.V = Matrix::Identity(2, 2);
  p.dO = (Matrix(2, 2) << 1, 2, 3, 4).finished();
  // dV[1][2] = Σ_i A[i][1]·dO[i][2] = (2 + 4) / 2.
  const attn::Explanation dV = attn::explain(p, "dV", 0, 0, 1);
  CHECK(dV.kind == "gradient_dot");
  CHECK(dV.left == std::vector<double>{0.5, 0.5});
  CHECK(dV.right == std::vector<double>{2, 4});
  CHECK(dV.value == 3);
  CHECK(dV.terms.index == "query");
  CHECK(dV.lines.at(1) == "\\sum_k A_{k,1}\\,dO_{k,2}");
  // dS[1][1] = A(dA − Σ A·dA) = 1/2 (1 − 1.5).
  const attn::Explanation dS = attn::explain(p, "dS", 0, 0, 0);
  CHECK(dS.kind == "softmax_grad");
  CHECK(dS.factor == 0.5);
  CHECK(dS.input == 1);
  CHECK(dS.products == std::vector<double>{0.5, 1});
  CHECK(dS.value == Approx(-0.25));
  CHECK(dS.text_id == "explain.softmax_grad");
  CHECK(dS.params == Params{{"along", "row"}, {"mean", "@3"}, {"sink", "no"}});  // Σ_k A·dA is numbers[3]
  CHECK(dS.numbers.at(3) == 1.5);
  // The whole dQ with head null (-1), and a per-head step asked for with head -1 (head 0's).
  CHECK(attn::explain(p, "dQ", -1, 1, 0).kind == "head_sum");
  CHECK(attn::explain(p, "dA", -1, 1, 0).value == 3);
  const attn::Explanation dO = attn::explain(p, "dO", -1, 1, 1);
  CHECK(dO.text_id == "explain.given");
  CHECK(dO.params == Params{{"name", "dO"}});
  // A hidden key takes no gradient, and says why.
  p.options.causal = true;
  const attn::Explanation hidden = attn::explain(p, "dS_kept", 0, 0, 1);
  CHECK(hidden.kind == "mask_grad");
  CHECK(hidden.hidden);
  CHECK(hidden.components == std::vector<std::string>{"causal"});
  CHECK(hidden.value == 0);
  CHECK(hidden.text_id == "explain.mask_grad.hidden");
  CHECK(hidden.params == Params{{"hidden", "causal"}, {"fill", "no"}});  // hidden by causal masking, -inf
  REQUIRE_THROWS_SAYING(attn::explain(p, "dW_Q", -1, 0, 0),
                        "the trace has no step 'dW_Q' for head (none): its steps are Q, K, V, scores, scaled, mask, "
                        "masked, weights, output, dO, dA, dV, dS, dS_kept, dscores, dQ, dK");
  REQUIRE_THROWS_SAYING(attn::explain(p, "dV", 0, 2, 0), "step 'dV' is 2x2: it has no row 3, column 1");
  // Their places: the step asked for; the coordinate outside it, read against the step, with
  // the cell asked for from 1.
  CHECK(place_of([&] { attn::explain(p, "dW_Q", -1, 0, 0); }) == "step |  | 0 | 0");
  CHECK(place_of([&] { attn::explain(p, "dV", 0, 2, 0); }) == "row | step | 3 | 1");
  CHECK(place_of([&] { attn::explain(p, "dV", 0, 1, 4); }) == "col | step | 2 | 5");
  CHECK(place_of([&] { attn::explain_forward(p, "dA", 0, 0, 0); }) == "step |  | 0 | 0");
  // The core module binds explain_forward, which links no gradient cells and says why it refuses.
  REQUIRE_THROWS_SAYING(
      attn::explain_forward(p, "dA", 0, 0, 0),
      "step 'dA' is a gradient: its worked calculation needs the backward pass (explain, not explain_forward)");
}

// ---- the variants of issue 31 (QK-norm, the gate, sigmoid and differential attention) ----------

TEST_CASE("explain: the variants' gradient cells give their values, in every combination",
          "[gradients][explain][variants]") {
  Problem qk = projected(60, 3, 2);
  qk.options.qk_norm.on = true;
  qk.options.qk_norm.type = attn::QkNorm::Type::Layer;
  qk.options.qk_norm.g_q = {0.5, -1.5};
  qk.options.qk_norm.g_k = {2, 0.75};
  qk.options.rope.on = true;
  qk.options.causal = true;
  check_explanations(qk);                      // dQ_rot, dQ_normed (RoPE turned back), dQ through the norm, dg_q, dg_k
  Problem rms = direct(61, 2, 2, 2, 1, 4, 2);  // GQA, a cache, the rms norm
  attn::RandomState rng(62);
  rms.past_K = rng.randn(2, 4);
  rms.past_V = rng.randn(2, 2);
  rms.options.qk_norm.on = true;
  rms.options.qk_norm.type = attn::QkNorm::Type::Rms;
  rms.options.qk_norm.eps = 1e-3;
  check_explanations(rms);
  rms.options.rope.on = true;
  check_explanations(rms);

  for (const int width : {4, 2}) {  // the gate: one per output feature, one per head
    Problem gate = projected(63, 3, 2);
    gate.W_G = attn::RandomState(64).randn(4, width);
    gate.b_G = Vector(attn::RandomState(65).randn(width, 1));
    gate.options.positional = attn::Positional::Sinusoidal;
    INFO("W_G width " << width);
    check_explanations(gate);  // dgated_output, dgate, dhead_output, dW_G, db_G, dX with the gate's path
  }
  Problem cross = projected(66, 3, 1);
  cross.W_O.reset();
  cross.b_O.reset();
  cross.dO = attn::RandomState(67).randn(3, 2);
  cross.X_kv = attn::RandomState(68).randn(4, 4);
  cross.W_G = attn::RandomState(69).randn(4, 1);
  check_explanations(cross);

  Problem sigmoid = projected(70, 4, 2);
  sigmoid.options.score_fn = attn::ScoreFn::Sigmoid;
  sigmoid.options.causal = true;
  sigmoid.options.alibi = true;
  sigmoid.options.softcap = 2;
  check_explanations(sigmoid);

  Problem differential = direct(71, 3, 4, 2, 0, 4, 2);
  differential.options.differential.on = true;
  differential.options.differential.lambda = {0.4, -0.3};
  differential.options.causal = true;
  differential.options.softcap = 1.5;
  differential.options.rope.on = true;
  check_explanations(differential);  // dweights_1, dweights_2, dQ_rot, dK_rot, dhead_normed, dhead_output
  differential.options.differential.norm = false;
  differential.options.rope.on = false;
  differential.options.qk_norm.on = true;
  differential.options.qk_norm.type = attn::QkNorm::Type::Rms;
  differential.past_K = attn::RandomState(72).randn(2, 8);
  differential.past_V = attn::RandomState(73).randn(2, 4);
  differential.options.causal = false;
  check_explanations(differential);  // dK_cache from the halves, dK_normed, dQ_normed, QK-norm turned back
  Problem gated = projected(74, 3, 2);
  gated.W_Q = attn::RandomState(75).randn(4, 8);
  gated.W_K = attn::RandomState(76).randn(4, 8);
  gated.b_Q = Vector(attn::RandomState(77).randn(8, 1));
  gated.b_K = Vector(attn::RandomState(78).randn(8, 1));
  gated.options.differential.on = true;
  gated.options.differential.lambda = {0.5};
  gated.W_G = attn::RandomState(79).randn(4, 4);
  check_explanations(gated);  // the gate on the normed heads: dgated_output, dhead_normed from the gate
}

TEST_CASE("explain: the variants' gradient cells by their formulas", "[gradients][explain][variants]") {
  // Sigmoid attention: dS = dA·A(1 − A), read from the trace's own weights and dA.
  Problem sigmoid = direct(80, 3, 3);
  sigmoid.options.score_fn = attn::ScoreFn::Sigmoid;
  const attn::Gradients gs = attn::gradients(sigmoid);
  const double a = find_step(gs.trace, "weights", 0)->values(1, 2), dA = find_step(gs.trace, "dA", 0)->values(1, 2);
  const attn::Explanation dS = attn::explain(sigmoid, "dS", 0, 1, 2);
  CHECK(dS.kind == "sigmoid_grad");
  CHECK(dS.factor == Approx(a * (1 - a)).epsilon(1e-14));
  CHECK(dS.value == Approx(dA * a * (1 - a)).epsilon(1e-12));
  CHECK(dS.text_id == "explain.sigmoid_grad");
  CHECK(dS.params == Params{{"slope", "@3"}});
  CHECK(dS.numbers.at(3) == dS.factor);

  // QK-norm (layer, gains): dQ of a row transcribed from the formula on Q as given.
  Problem qk = direct(81, 2, 3, 1, 0, 4, 2);
  qk.options.qk_norm.on = true;
  qk.options.qk_norm.type = attn::QkNorm::Type::Layer;
  qk.options.qk_norm.eps = 1e-2;
  qk.options.qk_norm.g_q = {1, 2, -0.5, 0.25};
  const attn::Gradients gq = attn::gradients(qk);
  const Eigen::RowVectorXd x = qk.Q->row(1), dy = find_step(gq.trace, "dQ_normed", 0)->values.row(1);
  const double mean = x.mean(), sigma = std::sqrt((x.array() - mean).square().mean() + 1e-2);
  const Eigen::RowVectorXd xhat = (x.array() - mean) / sigma;
  const Eigen::RowVectorXd u =
      dy.cwiseProduct(Eigen::RowVectorXd((Eigen::RowVectorXd(4) << 1, 2, -0.5, 0.25).finished()));
  const double expected = (u(2) - u.mean() - xhat(2) * u.cwiseProduct(xhat).mean()) / sigma;
  const attn::Explanation dQ = attn::explain(qk, "dQ", 0, 1, 2);
  CHECK(dQ.kind == "qk_norm_grad");
  CHECK(dQ.value == Approx(expected).epsilon(1e-12));
  CHECK(dQ.divisor == Approx(sigma).epsilon(1e-14));
  CHECK(dQ.right.at(2) == Approx(xhat(2)).epsilon(1e-14));
  // dg_q[c] = Σ over rows of dQ_normed ∘ x̂.
  double dg = 0;
  for (Eigen::Index i = 0; i < 2; ++i) {
    const Eigen::RowVectorXd xi = qk.Q->row(i);
    const double m = xi.mean(), s = std::sqrt((xi.array() - m).square().mean() + 1e-2);
    dg += find_step(gq.trace, "dQ_normed", 0)->values(i, 3) * (xi(3) - m) / s;
  }
  const attn::Explanation dgq = attn::explain(qk, "dg_q", -1, 0, 3);
  CHECK(dgq.kind == "gradient_dot");
  CHECK(dgq.value == Approx(dg).epsilon(1e-12));
  CHECK(dgq.terms.columns.size() == 5);

  // The gate (headwise): dgate = Σ_j dgated_output·head_output over the head's features; the
  // head's gradient is the gated one times the gate.
  Problem gate = projected(82, 2, 1);
  gate.W_G = attn::RandomState(83).randn(4, 1);
  const attn::Gradients gg = attn::gradients(gate);
  const Matrix& dgated = find_step(gg.trace, "dgated_output", 0)->values;
  const Matrix& head = find_step(gg.trace, "head_output", 0)->values;
  const attn::Explanation dG = attn::explain(gate, "dgate", 0, 1, 0);
  CHECK(dG.value == Approx(dgated.row(1).dot(head.row(1))).epsilon(1e-12));
  const double G = 1 / (1 + std::exp(-gate.X->row(1).dot(gate.W_G->col(0))));
  const attn::Explanation dh = attn::explain(gate, "dhead_output", 0, 1, 1);
  CHECK(dh.kind == "gated");
  CHECK(dh.factor == Approx(G).epsilon(1e-14));
  CHECK(dh.value == Approx(dgated(1, 1) * G).epsilon(1e-12));
  // db_G = Σ over tokens of dG·G(1 − G).
  double db = 0;
  const Matrix& dgate = find_step(gg.trace, "dgate", -1)->values;
  for (Eigen::Index i = 0; i < 2; ++i) {
    const double g = 1 / (1 + std::exp(-gate.X->row(i).dot(gate.W_G->col(0))));
    db += dgate(i, 0) * g * (1 - g);
  }
  Problem biased = gate;
  biased.b_G = Vector::Zero(1);
  CHECK(attn::explain(biased, "db_G", -1, 0, 0).value == Approx(db).epsilon(1e-12));

  // Differential attention: dweights_2 = −λ·dA; dQ of half 2 = Σ_j dS₂[i][j]·K[j][c] with
  // dS₂ = A₂ ∘ (dA₂ − rowsum(dA₂ ∘ A₂))·s, transcribed here (no mask, no softcap).
  Problem diff = direct(84, 2, 3, 1, 0, 4, 2);
  diff.options.differential.on = true;
  diff.options.differential.lambda = {0.6};
  const attn::Gradients gd = attn::gradients(diff);
  const Matrix& dAd = find_step(gd.trace, "dA", 0)->values;
  CHECK(attn::explain(diff, "dweights_2", 0, 1, 2).value == Approx(-0.6 * dAd(1, 2)).epsilon(1e-14));
  const Matrix& A2 = find_step(gd.trace, "weights_2", 0)->values;
  const Eigen::RowVectorXd dA2 = -0.6 * dAd.row(1);
  const double row_sum = A2.row(1).cwiseProduct(dA2).sum();
  double dq = 0;
  for (Eigen::Index j = 0; j < 3; ++j) dq += A2(1, j) * (dA2(j) - row_sum) / std::sqrt(2.0) * (*diff.K)(j, 3);
  const attn::Explanation dQd = attn::explain(diff, "dQ", 0, 1, 3);
  CHECK(dQd.kind == "gradient_dot");
  CHECK(dQd.value == Approx(dq).epsilon(1e-12));
  CHECK(dQd.text_id == "explain.differential.dQ");
  CHECK(dQd.params ==
        Params{{"feature", "4"}, {"half", "2"}, {"first", "3"}, {"last", "4"}, {"masked", "no"}, {"softcap", "no"}});
}
