// Properties of the attention core, its options, its error messages and explain().
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "attention.h"
#include "said.h"
#include "numpy_random.h"
#include "english.h"

using attn::Matrix;
using attn::Problem;
using Params = std::vector<std::pair<std::string, std::string>>;  // an explanation's message parameters

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
    for (Eigen::Index j = 0; j < K.rows(); ++j) out.row(i) += w[static_cast<size_t>(j)] / sum * V.row(j);
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
  CHECK(step_ids(attn::run(p)) == std::vector<std::string>{"Q0", "K0", "V0", "scores0", "scaled0", "softcapped0",
                                                           "mask0", "masked0", "weights0", "head_output0", "output"});
  p.options.heads = 2;
  const auto ids = step_ids(attn::run(p));
  REQUIRE(ids.size() == 22);
  CHECK(ids[9] == "head_output0");
  CHECK(ids[10] == "Q1");
  CHECK(ids[20] == "concat");
  CHECK(ids[21] == "output");
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
    CHECK(t.facts[0].entropy[6] > 0);   // the last sees seven
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
  CHECK(said(t.warnings[0]) == "warning.fully_masked(axis=row, row=2)");
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
    REQUIRE_THROWS_SAYING(attn::run(p), "W_K has 3 rows but X has 4 columns (W_K is 3x3, X is 4x4)");
  }
  SECTION("W_Q in the columns layout") {
    p.options.layout = attn::Layout::Columns;
    p.X = Matrix::Ones(4, 5);
    p.W_Q = Matrix::Ones(3, 2);
    REQUIRE_THROWS_SAYING(attn::run(p), "W_Q has 2 columns but X has 4 rows (W_Q is 3x2, X is 4x5)");
  }
  SECTION("X_kv") {
    p.X_kv = Matrix::Ones(6, 5);
    REQUIRE_THROWS_SAYING(attn::run(p), Catch::StartsWith("W_K has 4 rows but X_kv has 5 columns"));
  }
  SECTION("d_k of queries and keys") {
    p.W_K = Matrix::Ones(4, 2);
    REQUIRE_THROWS_SAYING(attn::run(p), "W_Q has 3 columns but W_K has 2: queries and keys need the same d_k");
  }
  SECTION("bias length") {
    p.b_Q = attn::Vector::Ones(4);
    REQUIRE_THROWS_SAYING(attn::run(p), "b_Q has 4 entries but W_Q has 3 columns: one bias per column of W_Q");
  }
  SECTION("heads not dividing d_model") {
    p.options.heads = 2;
    REQUIRE_THROWS_SAYING(attn::run(p), "heads = 2 does not divide d_model = 3 (the 3 columns of W_Q)");
  }
  SECTION("kv_heads not dividing heads") {
    p.W_Q = p.W_K = p.W_V = Matrix::Ones(4, 6);
    p.options.heads = 3;
    p.options.kv_heads = 2;
    REQUIRE_THROWS_SAYING(attn::run(p), Catch::StartsWith("kv_heads = 2 does not divide heads = 3"));
  }
  SECTION("W_O") {
    p.W_O = Matrix::Ones(4, 4);
    REQUIRE_THROWS_SAYING(attn::run(p), Catch::StartsWith("W_O has 4 rows but the concatenated heads have 3 columns"));
  }
  SECTION("b_O without W_O") {
    p.b_O = attn::Vector::Ones(3);
    REQUIRE_THROWS_SAYING(attn::run(p), "b_O is given without W_O");
  }
  SECTION("mask shape") {
    p.options.mask = Matrix::Zero(4, 3);
    REQUIRE_THROWS_SAYING(attn::run(p), "mask is 4x3 but the scores are 4x4 (queries x keys)");
  }
  SECTION("boolean mask values") {
    p.options.mask = Matrix::Constant(4, 4, 2.0);
    p.options.mask_kind = attn::MaskKind::Keep;
    REQUIRE_THROWS_SAYING(attn::run(p), Catch::StartsWith("mask row 1, column 1 is 2: a boolean mask"));
  }
  SECTION("non-finite input") {
    (*p.X)(2, 1) = std::nan("");
    REQUIRE_THROWS_SAYING(attn::run(p), Catch::StartsWith("X row 3, column 2 is nan: inputs must be finite"));
  }
  SECTION("empty matrix") {
    p.X = Matrix(0, 4);
    REQUIRE_THROWS_SAYING(attn::run(p), Catch::StartsWith("X is empty (0x4)"));
  }
  SECTION("missing W_V") {
    p.W_V.reset();
    REQUIRE_THROWS_SAYING(attn::run(p), "W_V is missing: self-attention from X needs X, W_Q, W_K and W_V");
  }
  SECTION("both modes") {
    p.Q = Matrix::Ones(4, 3);
    REQUIRE_THROWS_SAYING(attn::run(p),
                          Catch::StartsWith("give either Q, K and V, or X with W_Q, W_K and W_V, not both"));
  }
  SECTION("too many tokens, before allocating") {
    Problem big;
    big.Q = Matrix::Ones(attn::kMaxTokens + 1, 1);
    big.K = big.V = Matrix::Ones(2, 1);
    REQUIRE_THROWS_SAYING(attn::run(big),
                          "Q has 4097 rows: at most 4096 are accepted (every step of the trace is kept in memory)");
  }
  SECTION("softcap") {
    p.options.softcap = -1;
    REQUIRE_THROWS_SAYING(attn::run(p), Catch::StartsWith("softcap must be 0 (off) or a positive number"));
  }
}

TEST_CASE("direct-mode errors", "[attention][errors]") {
  Problem p;
  p.Q = Matrix::Ones(3, 4);
  p.K = Matrix::Ones(5, 4);
  p.V = Matrix::Ones(4, 2);
  REQUIRE_THROWS_SAYING(attn::run(p), "K has 5 rows but V has 4: every key needs a value (K is 5x4, V is 4x2)");
  p.V = Matrix::Ones(5, 2);
  p.K = Matrix::Ones(5, 3);
  REQUIRE_THROWS_SAYING(attn::run(p), "Q has 4 columns but K has 3: queries and keys need the same d_k");
  p.K.reset();
  REQUIRE_THROWS_SAYING(attn::run(p), Catch::StartsWith("K is missing"));
}

/// Where run() says `p`'s error is (field, other, row, column), or "no error".
std::string place_of(const Problem& p) {
  try {
    attn::run(p);
  } catch (const attn::InputError& e) {
    const attn::ErrorPlace& at = e.place();
    return at.field + " | " + at.other + " | " + std::to_string(at.row) + " | " + std::to_string(at.column);
  }
  return "no error";
}

TEST_CASE("errors carry the input they concern, and the entry's row and column", "[attention][errors]") {
  auto p = random_projection_problem(1, 4, 4, 4, 3, 3);
  SECTION("a non-finite entry: its 1-based row and column") {
    (*p.X)(2, 1) = std::nan("");
    CHECK(place_of(p) == "X |  | 3 | 2");
  }
  SECTION("two inputs that disagree: the one read against the other") {
    p.W_K = Matrix::Ones(3, 3);
    CHECK(place_of(p) == "W_K | X | 0 | 0");
    p.W_K.reset();
    CHECK(place_of(p) == "W_K |  | 0 | 0");
  }
  SECTION("a bias, an option, a mask entry, a list entry") {
    p.b_Q = attn::Vector::Ones(4);
    CHECK(place_of(p) == "b_Q | W_Q | 0 | 0");
    p.b_Q.reset();
    p.options.heads = 2;
    CHECK(place_of(p) == "options.heads | W_Q | 0 | 0");
    p.options.heads = 1;
    p.options.mask = Matrix::Constant(4, 4, 1.0);
    (*p.options.mask)(1, 3) = 2.0;
    p.options.mask_kind = attn::MaskKind::Keep;
    CHECK(place_of(p) == "options.mask |  | 2 | 4");
    p.options.mask.reset();
    p.options.alibi_slopes = {0.5, std::nan("")};
    p.options.heads = 1;
    CHECK(place_of(p) == "options.alibi | options.heads | 0 | 0");
    p.options.alibi_slopes = {std::nan("")};
    CHECK(place_of(p) == "options.alibi |  | 1 | 0");
  }
  SECTION("a variant's key is its field") {
    p.options.score_fn = attn::ScoreFn::Sigmoid;
    p.options.attention = attn::AttentionKind::Linear;
    CHECK(place_of(p) == "options.attention | options.score_fn | 0 | 0");
  }
  SECTION("an error of the whole problem names no field") {
    p.Q = Matrix::Ones(4, 3);
    CHECK(place_of(p) == " |  | 0 | 0");
  }
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

  REQUIRE_THROWS_SAYING(attn::explain(p, "weights", 5, 0, 0),
                        "the trace has no step 'weights' for head 5: its heads are 0, 1");
  REQUIRE_THROWS_SAYING(attn::explain(p, "weights", 0, 3, 0), "step 'weights' is 3x3: it has no row 4, column 1");
  // Their places: a step of other heads is the head's fault, read against the step; a cell
  // outside the step names the coordinate outside it and the cell asked for (from 1).
  const auto place = [&](const std::string& id, int head, Eigen::Index row, Eigen::Index col) {
    try {
      attn::explain(p, id, head, row, col);
    } catch (const attn::InputError& e) {
      const attn::ErrorPlace& at = e.place();
      return at.field + " | " + at.other + " | " + std::to_string(at.row) + " | " + std::to_string(at.column);
    }
    return std::string("no error");
  };
  CHECK(place("weights", 5, 0, 0) == "head | step | 0 | 0");
  CHECK(place("nope", 0, 0, 0) == "step |  | 0 | 0");
  CHECK(place("weights", 0, 3, 0) == "row | step | 4 | 1");
  CHECK(place("weights", 0, 0, 7) == "col | step | 1 | 8");
  CHECK(place("weights", 0, 0, 0) == "no error");
}

TEST_CASE("explain: a per-head step asked for with head -1 is head 0's, slope and sink logit too",
          "[attention][explain]") {
  // Head -1 once indexed the slopes and sink logits with -1 (garbage in wasm, an assertion natively).
  Problem p;
  p.Q = p.K = p.V = Matrix::Ones(2, 4);
  p.options.heads = 2;
  p.options.alibi = true;
  p.options.sink_logit = {0.5, -1};
  const auto alibi = attn::explain(p, "alibi", -1, 1, 0);
  CHECK(alibi.head == 0);
  CHECK(alibi.slope == 0.0625);  // the ALiBi paper's first slope of two heads, 2^-4
  CHECK(alibi.value == -0.0625);
  CHECK(alibi.lines == attn::explain(p, "alibi", 0, 1, 0).lines);
  const auto weights = attn::explain(p, "weights", -1, 1, 0);
  CHECK(weights.head == 0);
  CHECK(weights.sink_logit == 0.5);
  CHECK(weights.numbers == attn::explain(p, "weights", 0, 1, 0).numbers);
}

TEST_CASE("explain describes its calculation: TeX lines, sentences, numbers, terms", "[attention][explain]") {
  auto p = random_projection_problem(31, 3, 3, 4, 4, 2);
  p.b_Q = attn::Vector::Constant(4, 0.25);
  p.options.causal = true;
  p.options.heads = 2;
  p.options.softcap = 5;

  // A score: the query row times the key row; @terms(0,1) expands to the table's products.
  const auto s = attn::explain(p, "scores", 1, 2, 1);
  CHECK(s.lines ==
        std::vector<std::string>{"S^{(2)}_{3,2}", "\\sum_m Q^{(2)}_{3,m}\\,K^{(2)}_{2,m}", "@terms(0,1)", "@0"});
  CHECK(s.numbers == std::vector<double>{s.value});
  REQUIRE(s.terms.columns.size() == 3);
  CHECK(s.terms.columns[0] == s.left);
  CHECK(s.terms.columns[1] == s.right);
  CHECK(s.terms.columns[2] == s.products);
  CHECK(s.terms.columns[2][0] + s.terms.columns[2][1] == Approx(s.value));
  CHECK(s.terms.index == "feature");
  CHECK(s.terms.headers == std::vector<std::string>{"explain.term.feature", "q", "k", "q × k"});
  // The sentence is a message of the catalogues (en.json) with its parameters; the value is its placeholder.
  CHECK(s.text_id == "explain.scores.dot");
  CHECK(s.params == Params{{"d_k", "2"}, {"value", "@0"}});

  // The projection names the head's weights and its bias.
  const auto q = attn::explain(p, "Q", 1, 2, 1);
  CHECK(q.lines == std::vector<std::string>{"Q^{(2)}_{3,2}",
                                            "\\sum_m X_{3,m}\\,(W_{Q}^{(2)})_{m,2} + (b_{Q}^{(2)})_{2}",
                                            "@terms(0,1) + @1", "@0"});
  CHECK(q.numbers == std::vector<double>{q.value, 0.25});
  CHECK(q.text_id == "explain.projection");
  CHECK(q.params == Params{{"from", "X"}, {"along", "column"}, {"has_bias", "yes"}, {"bias", "@1"}});
  CHECK(q.terms.index == "m");

  // The scale keeps √d_k a root; its numbers are the input and the divisor.
  const auto sc = attn::explain(p, "scaled", 0, 1, 0);
  CHECK(sc.lines ==
        std::vector<std::string>{"\\tilde S^{(1)}_{2,1}", "\\frac{S^{(1)}_{2,1}}{\\sqrt{2}}", "\\frac{@1}{@2}", "@0"});
  CHECK(sc.numbers == std::vector<double>{sc.value, sc.input, std::sqrt(2.0)});
  CHECK(sc.text_id == "explain.scale.sqrt_dk");
  CHECK(sc.params == Params{{"root", "2"}, {"divisor", "@2"}});

  const auto cap = attn::explain(p, "softcapped", 0, 1, 0);
  CHECK(cap.lines[1] == "c\\,\\tanh\\!\\left(\\tilde S^{(1)}_{2,1} / c\\right)");
  CHECK(cap.lines[2] == "@1\\,\\tanh\\!\\left(@2 / @1\\right)");
  CHECK(cap.numbers == std::vector<double>{cap.value, 5, cap.input});

  // A hidden score: the scores plus -inf, and the component that hid it.
  const auto m = attn::explain(p, "masked", 1, 0, 2);
  CHECK(m.lines ==
        std::vector<std::string>{"\\bar S^{(2)}_{1,3}", "\\hat S^{(2)}_{1,3} + M^{(2)}_{1,3}", "@1 + (@2)", "@0"});
  CHECK(m.numbers[2] == -kInf);
  CHECK(m.text_id == "explain.mask.infinity");
  CHECK(m.params == Params{{"hidden", "causal"}});

  // A weight: the softmax's lines, the row's exponentials summed through @terms(2), the key highlighted.
  const auto w = attn::explain(p, "weights", 1, 1, 0);
  REQUIRE(w.lines.size() == 5);
  CHECK(w.lines[0] == "A^{(2)}_{2,1}");
  CHECK(w.lines[1] ==
        "\\frac{e^{\\bar S^{(2)}_{2,1} - m}}{\\sum_{j'} e^{\\bar S^{(2)}_{2,j'} - m}},\\quad m = \\max = @1");
  CHECK(w.lines[2] == "\\frac{e^{@3}}{@terms(2)}");
  CHECK(w.lines[3] == "\\frac{@4}{@2}");
  CHECK(w.numbers == std::vector<double>{w.value, w.max, w.exp_sum, w.shifted[0], w.exps[0]});
  CHECK(w.terms.columns == std::vector<std::vector<double>>{w.logits, w.shifted, w.exps});
  CHECK(w.terms.index == "key");
  CHECK(w.terms.highlight == 0);
  CHECK(w.terms.caption_id == "explain.terms.keys_of_query");
  CHECK(w.text_id == "explain.softmax");
  CHECK(w.params == Params{{"along", "row"}, {"max", "@1"}, {"sum", "@2"}});

  // The output copies the concatenation: the head and feature it comes from.
  const auto o = attn::explain(p, "output", -1, 2, 1);
  CHECK(o.kind == "concat");
  CHECK(o.lines == std::vector<std::string>{"O_{3,2}", "(\\text{head}_{2})_{3,1}", "@0"});
  CHECK(o.text_id == "explain.concat");
  CHECK(o.params == Params{{"head", "2"}, {"feature", "1"}});
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

// ---------------------------------------------------------------------------------------------
// Every step describes itself: caption id, symbol, formulas, kind, axes, inputs, given, group, slice.

namespace {

const attn::Step& described(const attn::Trace& t, const std::string& id, int head = 0) {
  for (const auto& s : t.steps) {
    if (s.id == id && s.head == head) return s;
  }
  FAIL("no step " << id << " for head " << head);
  throw std::logic_error("unreachable");
}

/// Q, K, V given directly: L = 3 queries, S = 4 keys, `heads` query heads of d_k = 2, `kv_heads`
/// key/value heads of d_v = 3 (rows layout).
Problem direct_problem(int heads, int kv_heads) {
  attn::RandomState rng(8);
  Problem p;
  p.Q = rng.randn(3, 2 * heads);
  p.K = rng.randn(4, 2 * kv_heads);
  p.V = rng.randn(4, 3 * kv_heads);
  p.options.heads = heads;
  p.options.kv_heads = kv_heads;
  return p;
}

/// The problem in the columns layout: every matrix transposed.
Problem in_columns(Problem p) {
  for (auto* m : {&p.Q, &p.K, &p.V, &p.X, &p.X_kv, &p.W_Q, &p.W_K, &p.W_V, &p.W_O, &p.options.mask}) {
    if (*m) *m = Matrix((*m)->transpose());
  }
  p.options.layout = attn::Layout::Columns;
  return p;
}

struct FormulaCase {
  const char* what;
  std::function<Problem()> problem;
  const char* id;
  int head;
  const char* symbol;
  const char* tex;
  const char* text;
};

}  // namespace

TEST_CASE("steps carry their caption id, symbol and formula for the problem's options", "[attention][metadata]") {
  const auto one_head = [] { return direct_problem(1, 1); };
  const auto self = [] {  // X 3x4, d_k = d_v = 2, biases on Q and V, W_O with b_O
    auto p = random_projection_problem(3, 3, 3, 4, 2, 2);
    p.b_Q = attn::Vector::Constant(2, 0.5);
    p.b_V = attn::Vector::Constant(2, 0.25);
    p.W_O = Matrix::Ones(2, 3);
    p.b_O = attn::Vector::Ones(3);
    return p;
  };
  const auto two_heads_columns = [] {  // causal, softcap 1.5, "1/sqrt(3)", biases, W_O with b_O
    auto p = random_projection_problem(5, 3, 3, 4, 4, 4);
    p.b_Q = attn::Vector::Constant(4, 0.5);
    p.W_O = Matrix::Ones(4, 2);
    p.b_O = attn::Vector::Ones(2);
    p.options.heads = 2;
    p.options.causal = true;
    p.options.softcap = 1.5;
    p.options.scale = {attn::Scale::Kind::DivideBySqrt, 3};
    return in_columns(p);
  };
  const auto cross = [] {
    auto p = random_projection_problem(6, 3, 4, 4, 2, 2);
    p.options.causal = true;
    Matrix keep = Matrix::Ones(3, 4);
    keep(0, 0) = 0;
    p.options.mask = keep;
    p.options.mask_kind = attn::MaskKind::Keep;
    p.options.scale = {attn::Scale::Kind::Multiply, 0.25};
    return p;
  };
  const auto with = [](std::function<Problem()> make, std::function<void(Problem&)> change) {
    return [=] {
      Problem p = make();
      change(p);
      return p;
    };
  };
  const std::vector<FormulaCase> cases = {
      // One head, Q, K, V given, rows layout, defaults.
      {"given Q", one_head, "Q", 0, "Q", "Q \\;\\text{(given)}", "Q (given)"},
      {"scores", one_head, "scores", 0, "S", "S = QK^\\top", "S = Q·Kᵀ"},
      {"scaled by sqrt(d_k)", one_head, "scaled", 0, "\\tilde S",
       "\\tilde S = \\frac{S}{\\sqrt{d_k}} = \\frac{S}{\\sqrt{2}}", "S̃ = S / √d_k = S / √2"},
      {"weights", one_head, "weights", 0, "A", "A = \\operatorname{softmax}(\\tilde S) \\quad\\text{(along each row)}",
       "A = softmax(S̃) (along each row)"},
      {"output of one head", one_head, "output", -1, "O", "O = A V", "O = A·V"},
      {"no scale",
       with(one_head,
            [](Problem& p) {
              p.options.scale = {attn::Scale::Kind::None, 0};
            }),
       "scaled", 0, "\\tilde S", "\\tilde S = S \\quad\\text{(not scaled)}", "S̃ = S (not scaled)"},
      {"divided by a number",
       with(one_head,
            [](Problem& p) {
              p.options.scale = {attn::Scale::Kind::DivideBy, 2};
            }),
       "scaled", 0, "\\tilde S", "\\tilde S = \\frac{S}{2}", "S̃ = S / 2"},
      {"numbers as JSON writes them",
       with(one_head,
            [](Problem& p) {
              p.options.scale = {attn::Scale::Kind::DivideBy, 1e21};
            }),
       "scaled", 0, "\\tilde S", "\\tilde S = \\frac{S}{1e+21}", "S̃ = S / 1e+21"},
      {"small numbers as JSON writes them", with(one_head, [](Problem& p) { p.options.softcap = 1e-7; }), "softcapped",
       0, "\\hat S", "\\hat S = c\\,\\tanh(\\tilde S / c),\\quad c = 1e-7", "Ŝ = c·tanh(S̃ / c), c = 1e-7"},
      {"an additive mask", with(one_head, [](Problem& p) { p.options.mask = Matrix::Zero(3, 4); }), "masked", 0,
       "\\bar S", "\\bar S = \\tilde S + M", "S̄ = S̃ + M"},
      {"an additive mask step", with(one_head, [](Problem& p) { p.options.mask = Matrix::Zero(3, 4); }), "mask", 0, "M",
       "M_{ij} = \\text{your } M_{ij}", "M_ij = your M_ij"},
      // Self-attention from X with biases and W_O.
      {"projected Q with a bias", self, "Q", 0, "Q", "Q = X\\,W_{Q} + b_{Q}", "Q = X·W_Q + b_Q"},
      {"projected K without a bias", self, "K", 0, "K", "K = X\\,W_{K}", "K = X·W_K"},
      {"head output of one head", self, "head_output", 0, "\\text{head}_{1}", "\\text{head}_{1} = A V", "head1 = A·V"},
      {"output through W_O", self, "output", -1, "O", "O = \\text{head}_{1}\\,W_{O} + b_{O}", "O = head1·W_O + b_O"},
      // Two heads in the columns layout: Ω/β, Kᵀ Q, softmax down each column.
      {"columns: projected Q of head 2", two_heads_columns, "Q", 1, "Q^{(2)}",
       "Q^{(2)} = \\Omega_{Q}^{(2)}\\,X + \\beta_{Q}^{(2)}", "Q⁽²⁾ = Ω_Q⁽²⁾·X + β_Q⁽²⁾"},
      {"columns: scores", two_heads_columns, "scores", 1, "S^{(2)}", "S^{(2)} = K^{(2)\\top} Q^{(2)}",
       "S⁽²⁾ = K⁽²⁾ᵀ·Q⁽²⁾"},
      {"divided by a square root", two_heads_columns, "scaled", 1, "\\tilde S^{(2)}",
       "\\tilde S^{(2)} = \\frac{S^{(2)}}{\\sqrt{3}}", "S̃⁽²⁾ = S⁽²⁾ / √3"},
      {"softcap", two_heads_columns, "softcapped", 0, "\\hat S^{(1)}",
       "\\hat S^{(1)} = c\\,\\tanh(\\tilde S^{(1)} / c),\\quad c = 1.5", "Ŝ⁽¹⁾ = c·tanh(S̃⁽¹⁾ / c), c = 1.5"},
      {"columns: causal after the softcap", two_heads_columns, "masked", 0, "\\bar S^{(1)}",
       "\\bar S^{(1)} = \\hat S^{(1)} \\text{ where } M^{(1)} = 1, -\\infty \\text{ where } M^{(1)} = 0",
       "S̄⁽¹⁾ = Ŝ⁽¹⁾ where M⁽¹⁾ = 1, −∞ where M⁽¹⁾ = 0"},
      {"columns: causal mask, key i and query j", two_heads_columns, "mask", 0, "M^{(1)}",
       "M^{(1)}_{ij} = 1 \\text{ if } i \\le j \\;\\text{(causal)}; \\text{ else } 0",
       "M⁽¹⁾_ij = 1 if i ≤ j (causal); else 0"},
      {"columns: weights", two_heads_columns, "weights", 1, "A^{(2)}",
       "A^{(2)} = \\operatorname{softmax}(\\bar S^{(2)}) \\quad\\text{(down each column)}",
       "A⁽²⁾ = softmax(S̄⁽²⁾) (down each column)"},
      {"columns: head output", two_heads_columns, "head_output", 1, "\\text{head}_{2}",
       "\\text{head}_{2} = V^{(2)} A^{(2)}", "head2 = V⁽²⁾·A⁽²⁾"},
      {"columns: concatenation", two_heads_columns, "concat", -1, "H",
       "H = \\begin{bmatrix} \\text{head}_{1} \\\\ \\text{head}_{2} \\end{bmatrix}", "H = [head1 ; head2]"},
      {"columns: output", two_heads_columns, "output", -1, "O", "O = \\Omega_{O}\\,H + \\beta_{O}", "O = Ω_O·H + β_O"},
      // Cross-attention, causal and a keep-mask, a multiplying scale.
      {"cross: K from X_kv", cross, "K", 0, "K", "K = X_{kv}\\,W_{K}", "K = X_kv·W_K"},
      {"multiplied", cross, "scaled", 0, "\\tilde S", "\\tilde S = 0.25\\,S", "S̃ = 0.25·S"},
      {"causal and a keep-mask", cross, "masked", 0, "\\bar S",
       "\\bar S = \\tilde S \\text{ where } M = 1, -\\infty \\text{ where } M = 0",
       "S̄ = S̃ where M = 1, −∞ where M = 0"},
      {"the mask of causal and a keep-mask", cross, "mask", 0, "M",
       "M_{ij} = 1 \\text{ if } j \\le i \\;\\text{(causal)},\\; \\text{your mask keeps it}; \\text{ else } 0",
       "M_ij = 1 if j ≤ i (causal), your mask keeps it; else 0"},
      // Several heads of Q, K, V given, no W_O: slices of the inputs, the output is the concatenation.
      {"a slice of a given Q", [] { return direct_problem(2, 2); }, "Q", 1, "Q^{(2)}", "Q^{(2)} = Q_{[:,\\,3..4]}",
       "Q⁽²⁾ = Q[:, 3..4]"},
      {"a slice of a given V, columns", [] { return in_columns(direct_problem(2, 2)); }, "V", 0, "V^{(1)}",
       "V^{(1)} = V_{[1..3,\\,:]}", "V⁽¹⁾ = V[1..3, :]"},
      {"head output of several heads", [] { return direct_problem(2, 2); }, "head_output", 1, "\\text{head}_{2}",
       "\\text{head}_{2} = A^{(2)} V^{(2)}", "head2 = A⁽²⁾·V⁽²⁾"},
      {"output of several heads without W_O", [] { return direct_problem(2, 2); }, "output", -1, "O",
       "O = H = \\left[\\, \\text{head}_{1} \\mid \\text{head}_{2} \\,\\right]", "O = H = [head1 | head2]"},
  };
  for (const FormulaCase& c : cases) {
    INFO(c.what);
    const attn::Trace t = attn::run(c.problem());
    const attn::Step& s = described(t, c.id, c.head);
    CHECK(s.title_id == std::string("step.") + c.id);  // its words are the catalogues' (web/lib/locales)
    CHECK(s.symbol == c.symbol);
    CHECK(english_formula(s.tex) == c.tex);
    CHECK(english_formula(s.text) == c.text);
  }
}

TEST_CASE("steps name the steps and problem inputs they are computed from", "[attention][metadata]") {
  auto p = random_projection_problem(12, 3, 3, 4, 2, 2);
  p.b_K = attn::Vector::Ones(2);
  p.options.softcap = 2;
  p.options.causal = true;
  p.W_O = Matrix::Ones(2, 2);
  p.b_O = attn::Vector::Ones(2);
  attn::Trace t = attn::run(p);
  using Ints = std::vector<int>;
  using Names = std::vector<std::string>;
  // Q0 K1 V2 scores3 scaled4 softcapped5 mask6 masked7 weights8 head_output9 output10
  REQUIRE(step_ids(t) == std::vector<std::string>{"Q0", "K0", "V0", "scores0", "scaled0", "softcapped0", "mask0",
                                                  "masked0", "weights0", "head_output0", "output"});
  CHECK(t.steps[0].inputs.empty());
  CHECK(t.steps[0].given == Names{"X", "W_Q"});
  CHECK(t.steps[1].given == Names{"X", "W_K", "b_K"});
  CHECK(t.steps[3].inputs == Ints{0, 1});
  CHECK(t.steps[4].inputs == Ints{3});
  CHECK(t.steps[5].inputs == Ints{4});
  CHECK(t.steps[6].inputs.empty());  // the mask is made from the options alone
  CHECK(t.steps[6].given.empty());   // causal only: no mask matrix is read
  CHECK(t.steps[7].inputs == Ints{5, 6});
  CHECK(t.steps[7].given.empty());
  CHECK(t.steps[8].inputs == Ints{7});
  CHECK(t.steps[9].inputs == Ints{8, 2});
  CHECK(t.steps[10].inputs == Ints{9});
  CHECK(t.steps[10].given == Names{"W_O", "b_O"});

  // The softmax reads the scaled scores when nothing follows them; one head without W_O: the
  // output is weights·V.
  p.options.softcap = 0;
  p.options.causal = false;
  p.W_O.reset();
  p.b_O.reset();
  p.X_kv = Matrix::Ones(5, 4);
  t = attn::run(p);
  REQUIRE(step_ids(t) == std::vector<std::string>{"Q0", "K0", "V0", "scores0", "scaled0", "weights0", "output"});
  CHECK(t.steps[1].given == Names{"X_kv", "W_K", "b_K"});
  CHECK(t.steps[5].inputs == Ints{4});
  CHECK(t.steps[6].inputs == Ints{5, 2});
  CHECK(t.steps[6].given.empty());

  // A mask matrix is read by the mask step; several heads: concat reads every head output.
  Problem d = direct_problem(2, 2);
  d.options.mask = Matrix::Zero(3, 4);
  t = attn::run(d);
  const attn::Step& q = described(t, "Q", 1);
  CHECK(q.given == Names{"Q"});
  CHECK(described(t, "mask", 1).given == Names{"mask"});
  CHECK(described(t, "masked", 1).given.empty());
  const attn::Step& concat = described(t, "concat", -1);
  REQUIRE(concat.inputs.size() == 2);
  CHECK(t.steps[static_cast<size_t>(concat.inputs[0])].id == "head_output");
  CHECK(t.steps[static_cast<size_t>(concat.inputs[0])].head == 0);
  CHECK(t.steps[static_cast<size_t>(concat.inputs[1])].head == 1);
  CHECK(described(t, "output", -1).inputs == Ints{static_cast<int>(t.steps.size()) - 2});
  CHECK(described(t, "output", -1).given.empty());
}

TEST_CASE("grouped-query steps know their key/value group and feature slice", "[attention][metadata]") {
  const attn::Trace t = attn::run(direct_problem(4, 2));  // d_k = 2, d_v = 3
  for (int h = 0; h < 4; ++h) {
    INFO("head " << h);
    const int group = h / 2;
    for (const char* id : {"Q", "K", "V", "scores", "scaled", "weights", "head_output"}) {
      CHECK(described(t, id, h).kv_group == group);
    }
    CHECK(described(t, "Q", h).feature_first == 2 * h);
    CHECK(described(t, "Q", h).feature_count == 2);
    CHECK(described(t, "K", h).feature_first == 2 * group);
    CHECK(described(t, "K", h).feature_count == 2);
    CHECK(described(t, "V", h).feature_first == 3 * group);
    CHECK(described(t, "V", h).feature_count == 3);
    CHECK(described(t, "head_output", h).feature_first == 3 * h);
    CHECK(described(t, "head_output", h).feature_count == 3);
    CHECK(described(t, "scores", h).feature_count == 0);
  }
  CHECK(described(t, "concat", -1).kv_group == -1);
  CHECK(described(t, "output", -1).kv_group == -1);
  CHECK(described(t, "output", -1).feature_count == 0);
  // The slice is the head's own columns of the given K.
  CHECK(described(t, "K", 3).values == direct_problem(4, 2).K->middleCols(2, 2));
  CHECK(described(t, "K", 3).tex == "K^{(4)} = K_{[:,\\,3..4]}");
}

TEST_CASE("step axes follow the layout; weights are probabilities", "[attention][metadata]") {
  using attn::Axis;
  auto p = random_projection_problem(14, 3, 4, 4, 2, 2);
  p.W_O = Matrix::Ones(2, 5);
  const attn::Trace rows = attn::run(p), cols = attn::run(in_columns(p));
  struct Want {
    const char* id;
    int head;
    Axis first, second;  // rows layout
  };
  for (const Want& w :
       {Want{"Q", 0, Axis::Queries, Axis::Features}, Want{"K", 0, Axis::Keys, Axis::Features},
        Want{"V", 0, Axis::Keys, Axis::Features}, Want{"scores", 0, Axis::Queries, Axis::Keys},
        Want{"weights", 0, Axis::Queries, Axis::Keys}, Want{"head_output", 0, Axis::Queries, Axis::Features},
        Want{"output", -1, Axis::Queries, Axis::Features}}) {
    INFO(w.id);
    const attn::Step& r = described(rows, w.id, w.head);
    const attn::Step& c = described(cols, w.id, w.head);
    CHECK(r.row_axis == w.first);
    CHECK(r.col_axis == w.second);
    CHECK(c.row_axis == w.second);
    CHECK(c.col_axis == w.first);
    const auto kind = std::string(w.id) == "weights" ? attn::ValueKind::Probability : attn::ValueKind::Signed;
    CHECK(r.kind == kind);
    CHECK(c.kind == kind);
  }
  CHECK(described(rows, "scores").values.rows() == 3);  // queries
  CHECK(described(cols, "scores").values.rows() == 4);  // keys
}

TEST_CASE("dividing by sqrt(n) takes the root in the working precision", "[attention][scale]") {
  // Seed 003's problem: float32, divided by float32(√3). DivideBySqrt(3) must give the very same
  // numbers as DivideBy(√3) (the root of 3 rounds to the same float32 either way).
  Problem p;
  p.X = Matrix(3, 4);
  *p.X << 1, 0, 1, 0, 0, 2, 0, 2, 1, 1, 1, 1;
  p.W_K = Matrix(4, 3);
  *p.W_K << 0, 0, 1, 1, 1, 0, 0, 1, 0, 1, 1, 0;
  p.W_Q = Matrix(4, 3);
  *p.W_Q << 1, 0, 1, 1, 0, 0, 0, 0, 1, 0, 1, 1;
  p.W_V = Matrix(4, 3);
  *p.W_V << 0, 2, 0, 0, 3, 0, 1, 0, 3, 1, 1, 0;
  for (const auto precision : {attn::Precision::Float32, attn::Precision::Float64}) {
    p.options.precision = precision;
    p.options.scale = {attn::Scale::Kind::DivideBy, std::sqrt(3.0)};
    const attn::Trace by_number = attn::run(p);
    p.options.scale = {attn::Scale::Kind::DivideBySqrt, 3};
    const attn::Trace by_root = attn::run(p);
    CHECK(by_root.scale == by_number.scale);
    REQUIRE(by_root.steps.size() == by_number.steps.size());
    for (size_t k = 0; k < by_root.steps.size(); ++k) {
      INFO(by_root.steps[k].id);
      CHECK(by_root.steps[k].values == by_number.steps[k].values);
    }
    const attn::Explanation e = attn::explain(p, "scaled", 0, 1, 2);
    CHECK(e.divisor == std::sqrt(3.0));
    CHECK(e.input / e.divisor == Approx(e.value).epsilon(1e-6));
  }
  CHECK(static_cast<float>(std::sqrt(3.0)) == std::sqrt(3.0f));
  p.options.precision = attn::Precision::Float64;
  p.options.scale = {attn::Scale::Kind::DivideBySqrt, 0};
  REQUIRE_THROWS_SAYING(attn::run(p), "the number under the scale's square root must be finite and positive (got 0)");
  p.options.scale = {attn::Scale::Kind::DivideBySqrt, -4};
  REQUIRE_THROWS_SAYING(attn::run(p), "the number under the scale's square root must be finite and positive (got -4)");
  p.options.scale = {attn::Scale::Kind::DivideBySqrt, kInf};
  REQUIRE_THROWS_SAYING(attn::run(p), "the number under the scale's square root must be finite and positive (got inf)");
}
