// Every number the seed documents print (tests/fixtures/seeds/, one file per document), rebuilt
// from their recipes.
#include <catch2/catch.hpp>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "attention.h"
#include "numpy_random.h"
#include "printed.h"

using attn::Matrix;
using attn::testing::check_printed;
using attn::testing::matches;
using attn::testing::printed_numbers;
using attn::testing::seed_print;

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
  check_printed(*p.Q, seed_print("000", "Q"));
  check_printed(*p.K, seed_print("000", "K"));
  // The document's V print is cut off after its 14th whole number; those 14 are checked.
  const auto v = seed_print("000", "V");
  const auto v_printed = printed_numbers(v.text);
  REQUIRE(v.numbers.size() == 14);
  for (size_t i = 0; i < v.numbers.size(); ++i) {
    INFO(v.where << ", number " << i + 1);
    CHECK(matches((*p.V)(static_cast<Eigen::Index>(i / 8), static_cast<Eigen::Index>(i % 8)), v_printed[i]));
  }
}

TEST_CASE("seed 000: scores, variances, weights and output", "[seed][seed000]") {
  const auto t = attn::run(seed000_problem());
  check_printed(step(t, "scores"), seed_print("000", "scores"));
  // Printed with all 17 digits; numpy's BLAS sums in another order, so allow a few ulps.
  check_printed(Matrix::Constant(1, 1, t.facts[0].scores_variance), seed_print("000", "scores_variance"), 1e-14);
  check_printed(Matrix::Constant(1, 1, t.facts[0].scaled_variance), seed_print("000", "scaled_variance"), 1e-14);
  check_printed(step(t, "weights"), seed_print("000", "weights"));
  check_printed(t.output, seed_print("000", "output"));
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
  check_printed(t.output, seed_print("000", "causal_output"));
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
  // all_x: three column vectors, i.e. X's columns; read in order they are the rows of Xᵀ.
  check_printed(seed002_problem().X->transpose(), seed_print("002", "X"));
}

TEST_CASE("seed 002: unscaled self-attention in the columns layout", "[seed][seed002][columns]") {
  auto p = seed002_problem();
  p.options.scale.kind = attn::Scale::Kind::None;
  const auto t = attn::run(p);
  // X_prime.T as printed: one row per token.
  check_printed(t.output.transpose(), seed_print("002", "output_T"));
  // The attention matrix: softmax down each column.
  const Matrix& weights = step(t, "weights");
  check_printed(weights, seed_print("002", "weights"));
  // The per-output loop printed each column with all 17 digits; numpy's unshifted softmax
  // rounds differently from our max-shifted one in the last bits, hence 1e-12.
  for (int n = 0; n < 3; ++n) {
    check_printed(weights.col(n).transpose(), seed_print("002", "weights_column_" + std::to_string(n)), 1e-12);
    // "Check that it sums to one: 1.0"
    CHECK(t.facts[0].weight_sums[n] == Approx(1.0).margin(1e-15));
  }
}

TEST_CASE("seed 002: scaled dot-product self-attention", "[seed][seed002][columns]") {
  const auto t = attn::run(seed002_problem());
  check_printed(t.output.transpose(), seed_print("002", "scaled_output_T"));
}

TEST_CASE("seed 002: permuting the tokens permutes the output", "[seed][seed002][property]") {
  auto p = seed002_problem();
  p.options.scale.kind = attn::Scale::Kind::None;
  Matrix permuted(4, 3);
  permuted << p.X->col(1), p.X->col(0), p.X->col(2);
  p.X = permuted;
  check_printed(attn::run(p).output.transpose(), seed_print("002", "permuted_output_T"));
}

TEST_CASE("seed 003: float32 attention divided by sqrt(3) of the token count", "[seed][seed003]") {
  attn::Problem p;
  p.X = seed_print("003", "X").values;
  p.W_K = seed_print("003", "W_K").values;
  p.W_Q = seed_print("003", "W_Q").values;
  p.W_V = seed_print("003", "W_V").values;
  p.options.precision = attn::Precision::Float32;
  p.options.scale = {attn::Scale::Kind::DivideBy, std::sqrt(3.0)};
  const auto t = attn::run(p);
  check_printed(step(t, "Q"), seed_print("003", "Q"));
  check_printed(step(t, "K"), seed_print("003", "K"));
  check_printed(step(t, "V"), seed_print("003", "V"));
  // The divisor is the float32 the document prints.
  CHECK(static_cast<float>(1 / t.scale) == static_cast<float>(seed_print("003", "scale_divisor").numbers[0]));
  // Eight significant digits of a float32 lie below its resolution (2^-24 ≈ 6e-8): the last
  // digit depends on the exp implementation, so allow 4 float32 ulps on top of the print.
  const double float32_ulps = 4 * 5.96e-8;
  check_printed(step(t, "weights"), seed_print("003", "weights"), float32_ulps);
  const auto output = seed_print("003", "output");
  check_printed(t.output, output, float32_ulps);
  // Computed in float32 indeed: float64 differs from the print by far more than 4 ulps.
  auto p64 = p;
  p64.options.precision = attn::Precision::Float64;
  CHECK_FALSE(matches(attn::run(p64).output(1, 1), printed_numbers(output.text)[4], float32_ulps));
}

TEST_CASE("seed 004: identity projections on two tokens", "[seed][seed004]") {
  attn::Problem p;
  p.X = seed_print("004", "X").values;
  p.W_Q = seed_print("004", "W_Q").values;
  p.W_K = seed_print("004", "W_K").values;
  p.W_V = seed_print("004", "W_V").values;
  CHECK(*p.X == Matrix::Identity(2, 2));
  CHECK(*p.W_Q == Matrix::Identity(2, 2));
  const auto t = attn::run(p);
  check_printed(t.output, seed_print("004", "output"));
}

namespace {

/// Input `name` of preset `id` as web/lib/presets.js writes it (`name: [[...], ...]`): seed 001's
/// weights live there only, and the package, the page and this test read the same numbers.
Matrix preset_input(const std::string& id, const std::string& name) {
  const std::string path = std::string(ATTN_FIXTURES_DIR) + "/../../web/lib/presets.js";
  std::ifstream file(path, std::ios::binary);
  if (!file) FAIL("cannot read " << path);
  std::stringstream content;
  content << file.rdbuf();
  const std::string js = content.str();
  const auto begin = js.find("id: '" + id + "'");
  if (begin == std::string::npos) FAIL(path << " has no preset '" << id << "'");
  const auto end = js.find("id: '", begin + 1);
  const auto at = js.find(name + ": [", begin);
  if (at == std::string::npos || at > end) FAIL("preset '" << id << "' in " << path << " has no " << name);
  // The balanced [[...], ...] block; each innermost [...] is a row.
  const auto open = js.find('[', at);
  size_t close = open;
  for (int depth = 0; close < js.size(); ++close) {
    depth += js[close] == '[' ? 1 : js[close] == ']' ? -1 : 0;
    if (depth == 0) break;
  }
  std::vector<std::vector<double>> rows;
  const std::string block = js.substr(open + 1, close - open - 1);
  static const std::regex row(R"(\[([^\[\]]*)\])");
  for (std::sregex_iterator it(block.begin(), block.end(), row), last; it != last; ++it) {
    rows.emplace_back();
    for (const auto& p : printed_numbers((*it)[1].str())) rows.back().push_back(p.value);
  }
  REQUIRE(!rows.empty());
  Matrix m(static_cast<Eigen::Index>(rows.size()), static_cast<Eigen::Index>(rows[0].size()));
  for (Eigen::Index r = 0; r < m.rows(); ++r) {
    REQUIRE(rows[static_cast<size_t>(r)].size() == rows[0].size());
    for (Eigen::Index c = 0; c < m.cols(); ++c) m(r, c) = rows[static_cast<size_t>(r)][static_cast<size_t>(c)];
  }
  return m;
}

/// Seed 001: the notebook's words; W_Q, W_K, W_V (8x3, entries 0, 1 or 2) from the preset, one
/// choice among those that reproduce every number the notebook prints (its generator was unseeded).
attn::Problem seed001_problem() {
  attn::Problem p;
  p.X = seed_print("001", "X").values;
  p.W_Q = preset_input("001", "W_Q");
  p.W_K = preset_input("001", "W_K");
  p.W_V = preset_input("001", "W_V");
  CHECK(*p.X == preset_input("001", "X"));
  return p;
}

}  // namespace

TEST_CASE("seed 001: the preset's weights reproduce every number the notebook prints", "[seed][seed001]") {
  const auto p = seed001_problem();
  for (const Matrix* W : {&*p.W_Q, &*p.W_K, &*p.W_V}) {
    REQUIRE(W->rows() == 8);
    REQUIRE(W->cols() == 3);
    CHECK(((W->array() == 0) || (W->array() == 1) || (W->array() == 2)).all());
  }
  const auto t = attn::run(p);
  CHECK(t.scale == 1 / std::sqrt(3.0));  // key_1.shape[0] ** 0.5
  check_printed(step(t, "weights"), seed_print("001", "weights"));
  check_printed(t.output, seed_print("001", "attention"));
  // Row 2 prints 7 digits because float64's 8th are 0 (0.4997551800…); float32 gives 0.49975514.
  auto p32 = p;
  p32.options.precision = attn::Precision::Float32;
  const auto weights = seed_print("001", "weights");
  CHECK_FALSE(matches(step(attn::run(p32), "weights")(1, 0), printed_numbers(weights.text)[3]));
}

TEST_CASE("seed 001: the per-word loop equals the matrix formulation", "[seed][seed001]") {
  const auto p = seed001_problem();
  const Matrix& words = *p.X;
  REQUIRE(words.rows() == 3);
  REQUIRE(words.cols() == 8);
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
