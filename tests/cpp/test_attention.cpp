// Properties of the attention core, its options, its error messages and explain().
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>

#include "attention.h"
#include "numpy_random.h"

using attn::Matrix;
using attn::Problem;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

const Matrix& step(const attn::Trace& t, const std::string& id, int head = 0) {
  for (const auto& s : t.steps) {
    if (s.id == id && s.head == head) return s.values;
  }
  FAIL("no step " << id << " for head " << head);
  throw std::logic_error("unreachable");
}

std::vector<std::string> step_ids(const attn::Trace& t) {
  std::vector<std::string> ids;
  for (const auto& s : t.steps) ids.push_back(s.id + (s.head >= 0 ? std::to_string(s.head) : ""));
  return ids;
}

Problem random_projection_problem(unsigned seed, int L, int S, int d_model, int d_k, int d_v) {
  attn::RandomState rng(seed);
  Problem p;
  p.X = rng.randn(L, d_model);
  if (S != L) p.X_kv = rng.randn(S, d_model);
  p.W_Q = rng.randn(d_model, d_k);
  p.W_K = rng.randn(d_model, d_k);
  p.W_V = rng.randn(d_model, d_v);
  return p;
}

/// softmax(Q Kᵀ · scale) V written out with plain loops: the reference for the properties.
Matrix reference_attention(const Matrix& Q, const Matrix& K, const Matrix& V, double scale) {
  Matrix out = Matrix::Zero(Q.rows(), V.cols());
  for (Eigen::Index i = 0; i < Q.rows(); ++i) {
    std::vector<double> w(static_cast<size_t>(K.rows()));
    double max = -kInf, sum = 0;
    for (Eigen::Index j = 0; j < K.rows(); ++j) {
      double s = 0;
      for (Eigen::Index k = 0; k < Q.cols(); ++k) s += Q(i, k) * K(j, k);
      w[static_cast<size_t>(j)] = s * scale;
      max = std::max(max, s * scale);
    }
    for (auto& x : w) sum += x = std::exp(x - max);
    for (Eigen::Index j = 0; j < K.rows(); ++j)
      out.row(i) += w[static_cast<size_t>(j)] / sum * V.row(j);
  }
  return out;
}

}  // namespace

TEST_CASE("steps come in the documented order", "[attention][trace]") {
  auto p = random_projection_problem(1, 4, 4, 6, 6, 6);
  CHECK(step_ids(attn::run(p)) ==
        std::vector<std::string>{"Q0", "K0", "V0", "scores0", "scaled0", "weights0", "output"});
  p.options.causal = true;
  p.options.softcap = 5;
  p.W_O = Matrix::Identity(6, 6);
  CHECK(step_ids(attn::run(p)) ==
        std::vector<std::string>{"Q0", "K0", "V0", "scores0", "scaled0", "softcapped0", "masked0",
                                 "weights0", "head_output0", "output"});
  p.options.heads = 2;
  const auto ids = step_ids(attn::run(p));
  REQUIRE(ids.size() == 20);
  CHECK(ids[8] == "head_output0");
  CHECK(ids[9] == "Q1");
  CHECK(ids[18] == "concat");
  CHECK(ids[19] == "output");
}

TEST_CASE("one head equals the plain formula", "[attention][property]") {
  const auto p = random_projection_problem(7, 5, 5, 4, 3, 2);
  const auto t = attn::run(p);
  const Matrix Q = *p.X * *p.W_Q, K = *p.X * *p.W_K, V = *p.X * *p.W_V;
  CHECK(t.output.isApprox(reference_attention(Q, K, V, 1 / std::sqrt(3.0)), 1e-13));
  CHECK(step(t, "Q").isApprox(Q, 1e-15));
}

TEST_CASE("weights rows sum to 1 and masked weights are exactly 0", "[attention][property]") {
  auto p = random_projection_problem(3, 6, 6, 5, 4, 4);
  p.options.causal = true;
  const auto t = attn::run(p);
  const Matrix& w = step(t, "weights");
  for (Eigen::Index i = 0; i < w.rows(); ++i) {
    CHECK(w.row(i).sum() == Approx(1.0).margin(1e-14));
    CHECK(t.facts[0].weight_sums[i] == Approx(1.0).margin(1e-14));
    for (Eigen::Index j = i + 1; j < w.cols(); ++j) CHECK(w(i, j) == 0.0);
  }
  CHECK(t.warnings.empty());
}

TEST_CASE("the facts are the sums, maxima and entropies of the weights", "[attention][property]") {
  // The core takes log w as x - logsumexp(x) for the entropy; it must equal -Σ w log w.
  for (const auto precision : {attn::Precision::Float64, attn::Precision::Float32}) {
    auto p = random_projection_problem(5, 7, 9, 6, 4, 3);
    p.options.causal = true;
    p.options.heads = 1;
    p.options.precision = precision;
    const auto t = attn::run(p);
    const Matrix& w = step(t, "weights");
    const double tolerance = precision == attn::Precision::Float64 ? 1e-13 : 1e-6;
    for (Eigen::Index i = 0; i < w.rows(); ++i) {
      double entropy = 0;
      for (Eigen::Index j = 0; j < w.cols(); ++j) {
        if (w(i, j) > 0) entropy -= w(i, j) * std::log(w(i, j));
      }
      INFO("row " << i);
      CHECK(t.facts[0].entropy[i] == Approx(entropy).margin(tolerance));
      CHECK(t.facts[0].weight_sums[i] == Approx(w.row(i).sum()).margin(1e-15));
      CHECK(t.facts[0].max_weight[i] == w.row(i).maxCoeff());
    }
    CHECK(t.facts[0].entropy[0] == 0);  // causal: the first query sees one key
    CHECK(t.facts[0].entropy[6] > 0);    // the last sees seven
  }
}

TEST_CASE("permuting the tokens permutes the output", "[attention][property]") {
  const auto p = random_projection_problem(11, 5, 5, 4, 4, 3);
  Eigen::PermutationMatrix<Eigen::Dynamic> perm(5);
  perm.indices() << 3, 0, 4, 1, 2;
  auto permuted = p;
  permuted.X = perm * *p.X;
  CHECK(attn::run(permuted).output.isApprox(perm * attn::run(p).output, 1e-13));
}

TEST_CASE("the columns layout equals the transposed rows layout", "[attention][property]") {
  auto rows = random_projection_problem(5, 4, 4, 3, 2, 2);
  rows.b_Q = attn::Vector::Constant(2, 0.5);
  rows.b_V = attn::Vector::Constant(2, -1.0);
  rows.options.causal = true;
  auto cols = rows;
  cols.options.layout = attn::Layout::Columns;
  cols.X = rows.X->transpose();
  cols.W_Q = rows.W_Q->transpose();
  cols.W_K = rows.W_K->transpose();
  cols.W_V = rows.W_V->transpose();
  const auto tr = attn::run(rows), tc = attn::run(cols);
  REQUIRE(tr.steps.size() == tc.steps.size());
  for (size_t i = 0; i < tr.steps.size(); ++i) {
    INFO(tr.steps[i].id);
    CHECK(tr.steps[i].values == tc.steps[i].values.transpose());
  }
  // In the columns layout causal means key row j is hidden from query column i when j > i.
  CHECK(std::isinf(step(tc, "masked")(2, 1)));
  CHECK(step(tc, "weights").col(0).sum() == Approx(1.0));
}

TEST_CASE("multi-head splits into contiguous column blocks", "[attention][multihead]") {
  auto p = random_projection_problem(9, 4, 4, 8, 8, 8);
  p.options.heads = 2;
  attn::RandomState rng(99);
  p.W_O = rng.randn(8, 5);
  p.b_O = rng.randn(5, 1).col(0);
  const auto t = attn::run(p);
  const Matrix Q = *p.X * *p.W_Q, K = *p.X * *p.W_K, V = *p.X * *p.W_V;
  Matrix concat(4, 8);
  for (int h = 0; h < 2; ++h) {
    Problem single;
    single.Q = Q.middleCols(h * 4, 4);
    single.K = K.middleCols(h * 4, 4);
    single.V = V.middleCols(h * 4, 4);
    const auto th = attn::run(single);
    CHECK(step(t, "weights", h).isApprox(step(th, "weights"), 1e-14));
    CHECK(step(t, "head_output", h).isApprox(th.output, 1e-14));
    concat.middleCols(h * 4, 4) = th.output;
  }
  CHECK(step(t, "concat", -1).isApprox(concat, 1e-14));
  const Matrix expected = (concat * *p.W_O).rowwise() + p.b_O->transpose();
  CHECK(t.output.isApprox(expected, 1e-13));
  CHECK(t.d_k == 4);
}

TEST_CASE("grouped-query attention shares key/value heads", "[attention][multihead]") {
  attn::RandomState rng(4);
  Problem p;
  p.Q = rng.randn(3, 8);  // 4 query heads of d_k = 2
  p.K = rng.randn(5, 4);  // 2 kv heads
  p.V = rng.randn(5, 6);  // d_v = 3
  p.options.heads = 4;
  p.options.kv_heads = 2;
  const auto t = attn::run(p);
  CHECK(step(t, "K", 0) == p.K->leftCols(2));
  CHECK(step(t, "K", 1) == p.K->leftCols(2));
  CHECK(step(t, "K", 2) == p.K->rightCols(2));
  CHECK(step(t, "V", 3) == p.V->rightCols(3));
  CHECK(t.output.rows() == 3);
  CHECK(t.output.cols() == 12);
}

TEST_CASE("cross-attention with L != S and top-left causal", "[attention][cross]") {
  auto p = random_projection_problem(21, 3, 5, 4, 4, 4);
  p.options.causal = true;
  const auto t = attn::run(p);
  CHECK(step(t, "scores").rows() == 3);
  CHECK(step(t, "scores").cols() == 5);
  const Matrix& w = step(t, "weights");
  CHECK(w(0, 0) == 1.0);
  CHECK(w(0, 1) == 0.0);
  CHECK(w(2, 3) == 0.0);
  CHECK(w(2, 2) > 0.0);
  CHECK(t.queries == 3);
  CHECK(t.keys == 5);
}

TEST_CASE("boolean and additive masks combine with causal", "[attention][mask]") {
  auto p = random_projection_problem(2, 4, 4, 3, 3, 3);
  Matrix keep = Matrix::Ones(4, 4);
  keep(3, 0) = 0;
  p.options.mask = keep;
  p.options.mask_kind = attn::MaskKind::Keep;
  p.options.causal = true;
  const auto t = attn::run(p);
  const Matrix& w = step(t, "weights");
  CHECK(w(3, 0) == 0.0);
  CHECK(w(0, 1) == 0.0);
  CHECK(w(3, 1) > 0.0);

  // An additive bias shifts the logits it touches.
  Matrix bias = Matrix::Zero(4, 4);
  bias(1, 0) = 2.5;
  p.options.mask = bias;
  p.options.mask_kind = attn::MaskKind::Additive;
  const auto tb = attn::run(p);
  CHECK(step(tb, "masked")(1, 0) == Approx(step(tb, "scaled")(1, 0) + 2.5));
}

TEST_CASE("a fully masked row gives zero weights, zero output and a warning", "[attention][mask]") {
  auto p = random_projection_problem(8, 3, 3, 2, 2, 2);
  Matrix keep = Matrix::Ones(3, 3);
  keep.row(1).setZero();
  p.options.mask = keep;
  p.options.mask_kind = attn::MaskKind::Keep;
  const auto t = attn::run(p);
  CHECK(step(t, "weights").row(1).isZero(0));
  CHECK(t.output.row(1).isZero(0));
  CHECK(t.output.allFinite());
  REQUIRE(t.warnings.size() == 1);
  CHECK(t.warnings[0] == "row 2 of the mask hides every key: its weights and output are 0");
  CHECK(t.facts[0].fully_masked == std::vector<int>{1});
  CHECK(t.facts[0].weight_sums[1] == 0.0);
}

TEST_CASE("huge logits stay finite", "[attention][numerics]") {
  for (double big : {1e3, 1e5, 1e150}) {
    INFO(big);
    Problem p;
    p.Q = Matrix(2, 1);
    *p.Q << big, -big;
    p.K = Matrix(3, 1);
    *p.K << 1, 2, -1;
    p.V = Matrix(3, 2);
    *p.V << 1, 2, 3, 4, 5, 6;
    p.options.scale.kind = attn::Scale::Kind::None;
    const auto t = attn::run(p);
    CHECK(t.output.allFinite());
    CHECK(step(t, "weights")(0, 1) == Approx(1.0));
    CHECK(step(t, "weights")(1, 2) == Approx(1.0));
  }
  // Overflowing scores (1e300 · 1e300 = inf): the weight goes to the infinite score.
  Problem p;
  p.Q = Matrix::Constant(1, 1, 1e300);
  p.K = Matrix(2, 1);
  *p.K << 1e300, 1;
  p.V = Matrix(2, 1);
  *p.V << 7, 9;
  p.options.scale.kind = attn::Scale::Kind::None;
  const auto t = attn::run(p);
  CHECK(t.output(0, 0) == 7.0);
}

TEST_CASE("float32 agrees with float64 to float32 precision", "[attention][precision]") {
  auto p = random_projection_problem(13, 6, 6, 8, 4, 4);
  const auto t64 = attn::run(p);
  p.options.precision = attn::Precision::Float32;
  const auto t32 = attn::run(p);
  CHECK(t32.output.isApprox(t64.output, 1e-5));
  CHECK_FALSE(t32.output == t64.output);  // really computed in float32
  for (Eigen::Index i = 0; i < t32.output.size(); ++i) {
    const double v = t32.output.data()[i];
    CHECK(static_cast<double>(static_cast<float>(v)) == v);
  }
}

TEST_CASE("scale options", "[attention][scale]") {
  auto p = random_projection_problem(17, 3, 3, 4, 4, 4);
  const auto base = attn::run(p);
  CHECK(base.scale == Approx(0.5));
  p.options.scale = {attn::Scale::Kind::None, 0};
  CHECK(step(attn::run(p), "scaled") == step(base, "scores"));
  p.options.scale = {attn::Scale::Kind::Multiply, 0.25};
  CHECK(step(attn::run(p), "scaled").isApprox(step(base, "scores") * 0.25, 1e-15));
  p.options.scale = {attn::Scale::Kind::DivideBy, 2.0};
  CHECK(step(attn::run(p), "scaled") == step(base, "scaled"));
}

TEST_CASE("softcap bounds the scores", "[attention][softcap]") {
  auto p = random_projection_problem(19, 4, 4, 4, 4, 4);
  p.options.scale.kind = attn::Scale::Kind::None;
  p.options.softcap = 1.5;
  const auto t = attn::run(p);
  const Matrix& capped = step(t, "softcapped");
  const Matrix& scaled = step(t, "scaled");
  CHECK(capped.cwiseAbs().maxCoeff() < 1.5);
  CHECK(capped(1, 2) == Approx(1.5 * std::tanh(scaled(1, 2) / 1.5)));
}

TEST_CASE("shape errors name the matrices and their shapes", "[attention][errors]") {
  auto p = random_projection_problem(1, 4, 4, 4, 3, 3);
  SECTION("W_K rows vs X columns") {
    p.W_K = Matrix::Ones(3, 3);
    REQUIRE_THROWS_WITH(attn::run(p), "W_K has 3 rows but X has 4 columns (W_K is 3x3, X is 4x4)");
  }
  SECTION("W_Q in the columns layout") {
    p.options.layout = attn::Layout::Columns;
    p.X = Matrix::Ones(4, 5);
    p.W_Q = Matrix::Ones(3, 2);
    REQUIRE_THROWS_WITH(attn::run(p), "W_Q has 2 columns but X has 4 rows (W_Q is 3x2, X is 4x5)");
  }
  SECTION("X_kv") {
    p.X_kv = Matrix::Ones(6, 5);
    REQUIRE_THROWS_WITH(attn::run(p), Catch::StartsWith("W_K has 4 rows but X_kv has 5 columns"));
  }
  SECTION("d_k of queries and keys") {
    p.W_K = Matrix::Ones(4, 2);
    REQUIRE_THROWS_WITH(attn::run(p), "W_Q has 3 columns but W_K has 2: queries and keys need the same d_k");
  }
  SECTION("bias length") {
    p.b_Q = attn::Vector::Ones(4);
    REQUIRE_THROWS_WITH(attn::run(p), "b_Q has 4 entries but W_Q has 3 columns: one bias per column of W_Q");
  }
  SECTION("heads not dividing d_model") {
    p.options.heads = 2;
    REQUIRE_THROWS_WITH(attn::run(p), "heads = 2 does not divide d_model = 3 (the 3 columns of W_Q)");
  }
  SECTION("kv_heads not dividing heads") {
    p.W_Q = p.W_K = p.W_V = Matrix::Ones(4, 6);
    p.options.heads = 3;
    p.options.kv_heads = 2;
    REQUIRE_THROWS_WITH(attn::run(p), Catch::StartsWith("kv_heads = 2 does not divide heads = 3"));
  }
  SECTION("W_O") {
    p.W_O = Matrix::Ones(4, 4);
    REQUIRE_THROWS_WITH(attn::run(p), Catch::StartsWith("W_O has 4 rows but the concatenated heads have 3 columns"));
  }
  SECTION("b_O without W_O") {
    p.b_O = attn::Vector::Ones(3);
    REQUIRE_THROWS_WITH(attn::run(p), "b_O is given without W_O");
  }
  SECTION("mask shape") {
    p.options.mask = Matrix::Zero(4, 3);
    REQUIRE_THROWS_WITH(attn::run(p), "mask is 4x3 but the scores are 4x4 (queries x keys)");
  }
  SECTION("boolean mask values") {
    p.options.mask = Matrix::Constant(4, 4, 2.0);
    p.options.mask_kind = attn::MaskKind::Keep;
    REQUIRE_THROWS_WITH(attn::run(p), Catch::StartsWith("mask row 1, column 1 is 2: a boolean mask"));
  }
  SECTION("non-finite input") {
    (*p.X)(2, 1) = std::nan("");
    REQUIRE_THROWS_WITH(attn::run(p), Catch::StartsWith("X row 3, column 2 is nan: inputs must be finite"));
  }
  SECTION("empty matrix") {
    p.X = Matrix(0, 4);
    REQUIRE_THROWS_WITH(attn::run(p), Catch::StartsWith("X is empty (0x4)"));
  }
  SECTION("missing W_V") {
    p.W_V.reset();
    REQUIRE_THROWS_WITH(attn::run(p), "W_V is missing: self-attention from X needs X, W_Q, W_K and W_V");
  }
  SECTION("both modes") {
    p.Q = Matrix::Ones(4, 3);
    REQUIRE_THROWS_WITH(attn::run(p), Catch::StartsWith("give either Q, K and V, or X with W_Q, W_K and W_V, not both"));
  }
  SECTION("too many tokens, before allocating") {
    Problem big;
    big.Q = Matrix::Ones(attn::kMaxTokens + 1, 1);
    big.K = big.V = Matrix::Ones(2, 1);
    REQUIRE_THROWS_WITH(attn::run(big), "Q has 4097 rows: at most 4096 are accepted (every step of the trace is kept in memory)");
  }
  SECTION("softcap") {
    p.options.softcap = -1;
    REQUIRE_THROWS_WITH(attn::run(p), Catch::StartsWith("softcap must be 0 (off) or a positive number"));
  }
}

TEST_CASE("direct-mode errors", "[attention][errors]") {
  Problem p;
  p.Q = Matrix::Ones(3, 4);
  p.K = Matrix::Ones(5, 4);
  p.V = Matrix::Ones(4, 2);
  REQUIRE_THROWS_WITH(attn::run(p), "K has 5 rows but V has 4: every key needs a value (K is 5x4, V is 4x2)");
  p.V = Matrix::Ones(5, 2);
  p.K = Matrix::Ones(5, 3);
  REQUIRE_THROWS_WITH(attn::run(p), "Q has 4 columns but K has 3: queries and keys need the same d_k");
  p.K.reset();
  REQUIRE_THROWS_WITH(attn::run(p), Catch::StartsWith("K is missing"));
}

TEST_CASE("explain: every kind of cell shows its worked calculation", "[attention][explain]") {
  auto p = random_projection_problem(31, 3, 3, 4, 4, 2);
  p.b_Q = attn::Vector::Constant(4, 0.25);
  p.options.causal = true;
  p.options.heads = 2;
  p.W_O = Matrix::Ones(2, 3);
  p.b_O = attn::Vector::Constant(3, 1.0);
  // d_v = 1 per head: concat is 3x2, W_O 2x3.
  const auto t = attn::run(p);

  const auto q = attn::explain(p, "Q", 1, 2, 1);
  CHECK(q.kind == "projection");
  CHECK(q.right.size() == 4);
  CHECK(q.right[0] == (*p.W_Q)(0, 3));
  CHECK(q.has_bias);
  double sum = q.bias;
  for (double x : q.products) sum += x;
  CHECK(sum == Approx(q.value).epsilon(1e-14));

  const auto s = attn::explain(p, "scores", 0, 1, 0);
  CHECK(s.kind == "dot");
  CHECK(s.left.size() == 2);
  CHECK(s.products[0] + s.products[1] == Approx(s.value));

  const auto sc = attn::explain(p, "scaled", 0, 1, 0);
  CHECK(sc.kind == "scale");
  CHECK(sc.divisor == Approx(std::sqrt(2.0)));
  CHECK(sc.input / sc.divisor == Approx(sc.value));

  const auto m = attn::explain(p, "masked", 1, 0, 2);
  CHECK(m.kind == "mask");
  CHECK(m.additive == -kInf);
  CHECK(m.value == -kInf);

  const auto w = attn::explain(p, "weights", 1, 1, 0);
  CHECK(w.kind == "softmax");
  REQUIRE(w.exps.size() == 3);
  CHECK(w.exps[2] == 0.0);
  CHECK(w.exps[0] / w.exp_sum == Approx(w.value).epsilon(1e-14));
  CHECK(*std::max_element(w.logits.begin(), w.logits.end()) == w.max);

  const auto ho = attn::explain(p, "head_output", 1, 2, 0);
  CHECK(ho.kind == "weighted_sum");
  CHECK(ho.products[0] + ho.products[1] + ho.products[2] == Approx(ho.value));

  const auto c = attn::explain(p, "concat", -1, 2, 1);
  CHECK(c.kind == "concat");
  CHECK(c.source_head == 1);
  CHECK(c.value == step(t, "head_output", 1)(2, 0));

  const auto o = attn::explain(p, "output", -1, 0, 2);
  CHECK(o.kind == "projection");
  CHECK(o.products[0] + o.products[1] + o.bias == Approx(o.value));

  REQUIRE_THROWS_WITH(attn::explain(p, "weights", 5, 0, 0), "the trace has no step 'weights' for head 5");
  REQUIRE_THROWS_WITH(attn::explain(p, "weights", 0, 3, 0), "step 'weights' is 3x3: it has no row 4, column 1");
}

TEST_CASE("explain in the columns layout speaks in the columns layout", "[attention][explain]") {
  auto p = random_projection_problem(41, 3, 3, 2, 2, 2);
  p.options.layout = attn::Layout::Columns;
  p.X = p.X->transpose().eval();
  p.W_Q = p.W_Q->transpose().eval();
  p.W_K = p.W_K->transpose().eval();
  p.W_V = p.W_V->transpose().eval();
  const auto t = attn::run(p);
  // weights is keys x queries; (row 2, col 0) is key 2 for query 0, a softmax down column 0.
  const auto w = attn::explain(p, "weights", 0, 2, 0);
  CHECK(w.value == step(t, "weights")(2, 0));
  CHECK(w.exps[2] / w.exp_sum == Approx(w.value));
  double col_sum = 0;
  for (double e : w.exps) col_sum += e / w.exp_sum;
  CHECK(col_sum == Approx(1.0));
}
