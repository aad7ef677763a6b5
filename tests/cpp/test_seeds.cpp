// Every number the source documents in ../shared/seeds print, rebuilt from their recipes.
#include <catch2/catch.hpp>

#include "attention.h"
#include "numpy_random.h"
#include "printed.h"

using attn::Matrix;
using attn::testing::check_printed;
using attn::testing::matches;
using attn::testing::printed_numbers;

namespace {

const Matrix& step(const attn::Trace& t, const std::string& id, int head = 0) {
  for (const auto& s : t.steps) {
    if (s.id == id && s.head == head) return s.values;
  }
  FAIL("no step " << id << " for head " << head);
  throw std::logic_error("unreachable");
}

/// Seed 000: np.random.seed(42); q, k, v = three np.random.randn(4, 8).
attn::Problem seed000_problem() {
  attn::RandomState rng(42);
  attn::Problem p;
  p.Q = rng.randn(4, 8);
  p.K = rng.randn(4, 8);
  p.V = rng.randn(4, 8);
  return p;
}

}  // namespace

TEST_CASE("seed 000: Q, K, V from np.random.seed(42) match the print", "[seed][seed000]") {
  const auto p = seed000_problem();
  check_printed(*p.Q, R"([[ 0.49671415 -0.1382643   0.64768854  1.52302986 -0.23415337 -0.23413696
   1.57921282  0.76743473]
 [-0.46947439  0.54256004 -0.46341769 -0.46572975  0.24196227 -1.91328024
  -1.72491783 -0.56228753]
 [-1.01283112  0.31424733 -0.90802408 -1.4123037   1.46564877 -0.2257763
   0.0675282  -1.42474819]
 [-0.54438272  0.11092259 -1.15099358  0.37569802 -0.60063869 -0.29169375
  -0.60170661  1.85227818]])");
  check_printed(*p.K, R"([[-0.01349722 -1.05771093  0.82254491 -1.22084365  0.2088636  -1.95967012
  -1.32818605  0.19686124]
 [ 0.73846658  0.17136828 -0.11564828 -0.3011037  -1.47852199 -0.71984421
  -0.46063877  1.05712223]
 [ 0.34361829 -1.76304016  0.32408397 -0.38508228 -0.676922    0.61167629
   1.03099952  0.93128012]
 [-0.83921752 -0.30921238  0.33126343  0.97554513 -0.47917424 -0.18565898
  -1.10633497 -1.19620662]])");
  // The document's V print is cut off after its 14th number; those 14 are checked.
  const auto v_printed = printed_numbers(R"([[ 0.81252582  1.35624003 -0.07201012  1.0035329   0.36163603 -0.64511975
   0.36139561  1.53803657]
 [-0.03582604  1.56464366 -2.6197451   0.8219025   0.08704707 -0.29900735)");
  REQUIRE(v_printed.size() == 14);
  for (size_t i = 0; i < v_printed.size(); ++i) {
    CHECK(matches((*p.V)(static_cast<Eigen::Index>(i / 8), static_cast<Eigen::Index>(i % 8)),
                  v_printed[i]));
  }
}

TEST_CASE("seed 000: scores, variances, weights and output", "[seed][seed000]") {
  const auto t = attn::run(seed000_problem());
  check_printed(step(t, "scores"), R"(array([[-2.72357421,  0.40818741,  2.39601116, -1.18323729],
       [ 5.60012069,  1.1597874 , -4.7248515 ,  2.43859568],
       [ 1.03699903, -3.70553788, -3.0399309 ,  0.04345596],
       [ 0.09460324,  2.97027193,  0.43247995, -0.80026704]]))");
  // Printed with all 17 digits; numpy's BLAS sums in another order, so allow a few ulps.
  CHECK(matches(t.facts[0].scores_variance, printed_numbers("6.8375652409831655")[0], 1e-14));
  CHECK(matches(t.facts[0].scaled_variance, printed_numbers("0.8546956551228956")[0], 1e-14));
  check_printed(step(t, "weights"), R"([[0.08431243 0.25513027 0.51521078 0.14534652]
 [0.64059204 0.1332861  0.01664257 0.2094793 ]
 [0.47006414 0.08789379 0.11121405 0.33082801]
 [0.17794451 0.49185018 0.20052305 0.12968226]])");
  check_printed(t.output, R"([[-0.1308104   0.77212573  0.10108921  0.16807328 -0.46588684 -0.43681263
   0.46851458 -0.42075407]
 [ 0.40109276  1.19080398 -0.35037302  0.94668908  0.08274232 -0.53010106
   0.17683369  0.41923385]
 [ 0.17910025  0.98456145 -0.06763014  0.80678092 -0.14453166 -0.49373081
   0.15002954  0.10067088]
 [ 0.01421368  1.14907671 -0.99239485  0.60451701 -0.14600018 -0.40496816
   0.24215067 -0.82777073]])");
  CHECK(t.scale == Approx(1 / std::sqrt(8.0)).epsilon(1e-15));
}

TEST_CASE("seed 000: the decoder's causal mask gives the masked output", "[seed][seed000]") {
  auto p = seed000_problem();
  p.options.causal = true;
  const auto t = attn::run(p);
  const Matrix& masked = step(t, "masked");
  CHECK(std::isinf(masked(0, 1)));
  CHECK(masked(0, 1) < 0);
  CHECK(masked(1, 0) == step(t, "scaled")(1, 0));
  check_printed(t.output, R"([[ 0.81252582  1.35624003 -0.07201012  1.0035329   0.36163603 -0.64511975
   0.36139561  1.53803657]
 [ 0.66641301  1.39213367 -0.51081002  0.97225045  0.31434319 -0.58550834
   0.31495603  0.93081668]
 [ 0.52954961  1.21756173 -0.14905901  0.7267579   0.1310981  -0.57583252
   0.41805381  0.87397953]
 [ 0.01421368  1.14907671 -0.99239485  0.60451701 -0.14600018 -0.40496816
   0.24215067 -0.82777073]])");
}

TEST_CASE("seed 000: the same mask given as an additive matrix", "[seed][seed000][mask]") {
  auto causal = seed000_problem();
  causal.options.causal = true;
  auto additive = seed000_problem();
  Matrix mask = Matrix::Zero(4, 4);
  for (int i = 0; i < 4; ++i)
    for (int j = i + 1; j < 4; ++j) mask(i, j) = -std::numeric_limits<double>::infinity();
  additive.options.mask = mask;
  additive.options.mask_kind = attn::MaskKind::Additive;
  CHECK(attn::run(causal).output == attn::run(additive).output);
}

namespace {

/// Seed 002 (UDL notebook 12.1): inputs from np.random.seed(3), parameters from seed 0,
/// tokens as the columns of X.
attn::Problem seed002_problem() {
  attn::RandomState inputs(3);
  Matrix X(4, 3);
  for (int n = 0; n < 3; ++n) X.col(n) = inputs.normal(4, 1).col(0);
  attn::RandomState params(0);
  attn::Problem p;
  p.X = X;
  p.W_Q = params.normal(4, 4);
  p.W_K = params.normal(4, 4);
  p.W_V = params.normal(4, 4);
  p.b_Q = params.normal(4, 1).col(0);
  p.b_K = params.normal(4, 1).col(0);
  p.b_V = params.normal(4, 1).col(0);
  p.options.layout = attn::Layout::Columns;
  return p;
}

}  // namespace

TEST_CASE("seed 002: the inputs drawn after np.random.seed(3)", "[seed][seed002]") {
  check_printed(*seed002_problem().X, R"(
  [[ 1.78862847, -0.2773882 , -0.04381817],
   [ 0.43650985, -0.35475898, -0.47721803],
   [ 0.09649747, -0.08274148, -1.31386475],
   [-1.8634927 , -0.62700068,  0.88462238]])");
}

TEST_CASE("seed 002: unscaled self-attention in the columns layout", "[seed][seed002][columns]") {
  auto p = seed002_problem();
  p.options.scale.kind = attn::Scale::Kind::None;
  const auto t = attn::run(p);
  // X_prime.T as printed: one row per token.
  check_printed(t.output.transpose(), R"([[ 0.94744244 -0.24348429 -0.91310441 -0.44522983]
 [ 1.64201168 -0.08470004  4.02764044  2.18690791]
 [ 1.61949281 -0.06641533  3.96863308  2.15858316]])");
  // The attention matrix: softmax down each column.
  const Matrix& weights = step(t, "weights");
  check_printed(weights, R"([[1.24326146e-13 2.79525306e-12 5.05707907e-03]
 [9.98281489e-01 5.85506360e-03 6.54776072e-03]
 [1.71851130e-03 9.94144936e-01 9.88395160e-01]])");
  // The per-output loop printed each column with all 17 digits; numpy's unshifted softmax
  // rounds differently from our max-shifted one in the last bits, hence 1e-12.
  const char* columns[] = {"[1.2432614615724094e-13, 0.9982814887008525, 0.0017185112990231368]",
                           "[2.7952530620087617e-12, 0.0058550635983758564, 0.994144936398829]",
                           "[0.005057079072941125, 0.006547760717181933, 0.9883951602098769]"};
  for (int n = 0; n < 3; ++n) {
    const auto printed = printed_numbers(columns[n]);
    for (int m = 0; m < 3; ++m) CHECK(matches(weights(m, n), printed[m], 1e-12));
    // "Check that it sums to one: 1.0"
    CHECK(t.facts[0].weight_sums[n] == Approx(1.0).margin(1e-15));
  }
}

TEST_CASE("seed 002: scaled dot-product self-attention", "[seed][seed002][columns]") {
  const auto t = attn::run(seed002_problem());
  check_printed(t.output.transpose(), R"([[ 0.97411966 -0.23738409 -0.72333202 -0.34413007]
 [ 1.59622051 -0.09516106  3.70194096  2.01339538]
 [ 1.32638014  0.13062402  3.02371664  1.6902419 ]])");
}

TEST_CASE("seed 002: permuting the tokens permutes the output", "[seed][seed002][property]") {
  auto p = seed002_problem();
  p.options.scale.kind = attn::Scale::Kind::None;
  Matrix permuted(4, 3);
  permuted << p.X->col(1), p.X->col(0), p.X->col(2);
  p.X = permuted;
  check_printed(attn::run(p).output.transpose(), R"([[ 1.64201168 -0.08470004  4.02764044  2.18690791]
 [ 0.94744244 -0.24348429 -0.91310441 -0.44522983]
 [ 1.61949281 -0.06641533  3.96863308  2.15858316]])");
}

TEST_CASE("seed 003: float32 attention divided by sqrt(3) of the token count", "[seed][seed003]") {
  attn::Problem p;
  p.X = Matrix(3, 4);
  *p.X << 1, 0, 1, 0, 0, 2, 0, 2, 1, 1, 1, 1;
  p.W_K = Matrix(4, 3);
  *p.W_K << 0, 0, 1, 1, 1, 0, 0, 1, 0, 1, 1, 0;
  p.W_Q = Matrix(4, 3);
  *p.W_Q << 1, 0, 1, 1, 0, 0, 0, 0, 1, 0, 1, 1;
  p.W_V = Matrix(4, 3);
  *p.W_V << 0, 2, 0, 0, 3, 0, 1, 0, 3, 1, 1, 0;
  p.options.precision = attn::Precision::Float32;
  p.options.scale = {attn::Scale::Kind::DivideBy, std::sqrt(3.0)};
  const auto t = attn::run(p);
  check_printed(step(t, "Q"), "[[1. 0. 2.] [2. 2. 2.] [2. 1. 3.]]");
  check_printed(step(t, "K"), "[[0. 1. 1.] [4. 4. 0.] [2. 3. 1.]]");
  check_printed(step(t, "V"), "[[1. 2. 3.] [2. 8. 0.] [2. 6. 3.]]");
  // The divisor as float32 prints it: [1.7320508].
  CHECK(static_cast<float>(1 / t.scale) == 1.7320508f);
  // Eight significant digits of a float32 lie below its resolution (2^-24 ≈ 6e-8): the last
  // digit depends on the exp implementation, so allow 4 float32 ulps on top of the print.
  const double float32_ulps = 4 * 5.96e-8;
  check_printed(step(t, "weights"), R"([[1.3612579e-01 4.3193707e-01 4.3193707e-01]
 [8.9044782e-04 9.0884298e-01 9.0266980e-02]
 [7.4448888e-03 7.5470752e-01 2.3784746e-01]])", float32_ulps);
  check_printed(t.output, R"([[1.8638741 , 6.3193707 , 1.7041886 ]
 [1.9991105 , 7.8141265 , 0.27347228]
 [1.9925548 , 7.479635  , 0.73587704]])", float32_ulps);
  // Computed in float32 indeed: float64 differs from the print by far more than 4 ulps.
  auto p64 = p;
  p64.options.precision = attn::Precision::Float64;
  CHECK_FALSE(matches(attn::run(p64).output(1, 1), printed_numbers("7.8141265")[0], float32_ulps));
}

TEST_CASE("seed 004: identity projections on two tokens", "[seed][seed004]") {
  attn::Problem p;
  p.X = Matrix::Identity(2, 2);
  p.W_Q = Matrix::Identity(2, 2);
  p.W_K = Matrix::Identity(2, 2);
  p.W_V = Matrix(2, 2);
  *p.W_V << 1, 2, 3, 4;
  const auto t = attn::run(p);
  check_printed(t.output, "[[1.6604769 2.6604769]\n [2.3395231 3.3395231]]");
}

TEST_CASE("seed 001: the per-word loop equals the matrix formulation", "[seed][seed001]") {
  // The document drew W_Q, W_K, W_V from an unseeded generator, so its numbers cannot be
  // rebuilt. Same shapes here (three 8-d words, 8x3 integer weights in [0, 3)), seeded.
  Matrix words(3, 8);
  words << 1, 0, 0, 1, 0, 1, 0, 0,  //
      0, 1, 0, 0, 1, 1, 0, 1,       //
      1, 1, 0, 0, 1, 1, 1, 0;
  attn::RandomState rng(42);
  attn::Problem p;
  p.X = words;
  p.W_Q = rng.randint(0, 3, 8, 3);
  p.W_K = rng.randint(0, 3, 8, 3);
  p.W_V = rng.randint(0, 3, 8, 3);
  const auto t = attn::run(p);

  // The document's loop: query_i = word_i @ W_Q ..., weights_i = softmax(scores_i / sqrt(3)),
  // attention_i = Σ_j weights_i[j] * value_j; written with plain loops.
  auto times = [](const Matrix& word, const Matrix& W, int i) {
    std::vector<double> out(3, 0.0);
    for (int c = 0; c < 3; ++c)
      for (int k = 0; k < 8; ++k) out[c] += word(i, k) * W(k, c);
    return out;
  };
  for (int i = 0; i < 3; ++i) {
    const auto query = times(words, *p.W_Q, i);
    std::vector<double> scores(3);
    for (int j = 0; j < 3; ++j) {
      const auto key = times(words, *p.W_K, j);
      scores[j] = query[0] * key[0] + query[1] * key[1] + query[2] * key[2];
    }
    double sum = 0;
    std::vector<double> weights(3);
    for (int j = 0; j < 3; ++j) sum += weights[j] = std::exp(scores[j] / std::sqrt(3.0));
    std::vector<double> attention(3, 0.0);
    for (int j = 0; j < 3; ++j) {
      weights[j] /= sum;
      const auto value = times(words, *p.W_V, j);
      for (int c = 0; c < 3; ++c) attention[c] += weights[j] * value[c];
    }
    for (int c = 0; c < 3; ++c) {
      CHECK(step(t, "weights")(i, c) == Approx(weights[c]).epsilon(1e-13));
      CHECK(t.output(i, c) == Approx(attention[c]).epsilon(1e-13));
    }
  }
}
