// Positions in the core: rotary position embeddings (RoPE), the sinusoidal and learned position
// encodings, explicit positions and the KV cache: their properties, public numbers, formulas,
// worked calculations and error messages.
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "../fuzz/trace_invariants.h"
#include "attention.h"
#include "gradients.h"
#include "trace_lookup.h"
#include "numpy_random.h"
#include "english.h"

using attn::Matrix;
using attn::Problem;
using Params = std::vector<std::pair<std::string, std::string>>;  // an explanation's message parameters

namespace {

/// Self-attention from X (N tokens, d_model 8): 4 query heads sharing 2 key/value heads
/// (d_k = 2, d_v = 3), W_O back to 8 features.
Problem gqa_projection(unsigned seed, int N) {
  attn::RandomState rng(seed);
  Problem p;
  p.X = rng.randn(N, 8);
  p.W_Q = rng.randn(8, 8);
  p.W_K = rng.randn(8, 4);
  p.W_V = rng.randn(8, 6);
  p.W_O = rng.randn(12, 8);
  p.options.heads = 4;
  p.options.kv_heads = 2;
  return p;
}

std::vector<double> range(double first, int count) {
  std::vector<double> out;
  for (int i = 0; i < count; ++i) out.push_back(first + i);
  return out;
}

/// The problem in the columns layout: every token matrix transposed.
Problem in_columns(Problem p) {
  for (auto* m :
       {&p.Q, &p.K, &p.V, &p.X, &p.X_kv, &p.W_Q, &p.W_K, &p.W_V, &p.W_O, &p.options.mask, &p.past_K, &p.past_V, &p.P}) {
    if (*m) *m = Matrix((*m)->transpose());
  }
  p.options.layout = attn::Layout::Columns;
  return p;
}

/// The trace holds together: documented steps and shapes, sound weights and metadata.
void check_sound(const Problem& p) {
  const attn::Trace t = attn::run(p);
  CHECK(attn::invariants::check_trace(p, t) == "");
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// RoPE

TEST_CASE("rope: rotation keeps the length of every query and key", "[positions][rope]") {
  for (auto style : {attn::Rope::Style::Half, attn::Rope::Style::Interleaved}) {
    for (int dims : {0, 4}) {
      Problem p = direct(11, 3, 5, 6);
      p.options.rope.on = true;
      p.options.rope.style = style;
      p.options.rope.dims = dims;
      const attn::Trace t = attn::run(p);
      for (const char* id : {"Q", "K"}) {
        const Matrix& before = values(t, id);
        const Matrix& after = values(t, std::string(id) + "_rot");
        REQUIRE(after.rows() == before.rows());
        for (Eigen::Index i = 0; i < before.rows(); ++i) {
          CHECK(after.row(i).norm() == Approx(before.row(i).norm()).epsilon(1e-14));
          // Every row but the first (position 0, no turn) moves.
          if (i > 0) CHECK((after.row(i) - before.row(i)).norm() > 1e-3);
        }
      }
      check_sound(p);
    }
  }
}

TEST_CASE("rope: a pair turns by position times theta", "[positions][rope]") {
  // d_k = 2: one pair with θ_0 = base^0 = 1, so q = k = (1, 0) at positions m and n score
  // cos(m - n).
  Problem p;
  p.Q = Matrix{{1, 0}};
  p.K = Matrix{{1, 0}, {1, 0}, {1, 0}};
  p.V = Matrix::Identity(3, 3);
  p.options.rope.on = true;
  p.options.query_positions = {3};
  const attn::Trace t = attn::run(p);
  const Matrix& scores = values(t, "scores");
  for (int n = 0; n < 3; ++n) CHECK(scores(0, n) == Approx(std::cos(3.0 - n)).margin(1e-15));
  // The query at position 3 turned by 3 radians.
  CHECK(values(t, "Q_rot")(0, 0) == Approx(std::cos(3.0)));
  CHECK(values(t, "Q_rot")(0, 1) == Approx(std::sin(3.0)));
  // Pair i of 4 features turns by θ_i = 10000^(-2i/4): i = 1 at position 2 turns by 0.02.
  Problem four;
  four.Q = Matrix{{0, 1, 0, 0}, {0, 1, 0, 0}, {0, 1, 0, 0}};
  four.K = four.Q;
  four.V = Matrix::Identity(3, 3);
  four.options.rope.on = true;
  const Matrix q = values(attn::run(four), "Q_rot");
  // Half style: feature 1 pairs with feature 3; (x1, x3) = (1, 0) -> (cos 0.02, sin 0.02).
  CHECK(q(2, 1) == Approx(std::cos(0.02)));
  CHECK(q(2, 3) == Approx(std::sin(0.02)));
  CHECK(q(2, 0) == 0);
}

TEST_CASE("rope: scores depend only on the difference of positions", "[positions][rope]") {
  Problem p = direct(12, 3, 5, 4);
  p.options.rope.on = true;
  p.options.query_positions = {2, 3, 4};
  p.options.key_positions = range(0, 5);
  const Matrix scores = values(attn::run(p), "scores");
  Problem shifted = p;
  shifted.options.query_positions = {9, 10, 11};
  shifted.options.key_positions = range(7, 5);
  const attn::Trace t = attn::run(shifted);
  CHECK(values(t, "Q_rot").isApprox(values(attn::run(p), "Q_rot")) == false);  // absolute turns differ
  const Matrix& moved = values(t, "scores");
  for (Eigen::Index i = 0; i < scores.rows(); ++i) {
    for (Eigen::Index j = 0; j < scores.cols(); ++j) CHECK(moved(i, j) == Approx(scores(i, j)).margin(1e-12));
  }
  // Without RoPE the scores are the plain dot products: RoPE changed them.
  Problem plain = p;
  plain.options.rope.on = false;
  CHECK((values(attn::run(plain), "scores") - scores).cwiseAbs().maxCoeff() > 1e-2);
}

TEST_CASE("rope: the trace's facts show the relative-position property with numbers", "[positions][rope]") {
  for (const auto precision : {attn::Precision::Float64, attn::Precision::Float32}) {
    Problem p = gqa_projection(5, 4);
    p.options.rope.on = true;
    p.options.precision = precision;
    const attn::Trace t = attn::run(p);
    REQUIRE(t.facts.size() == 4);
    for (const auto& f : t.facts) {
      CHECK(f.rope_shift == 100);
      // Rounding only: float64 near 1e-13, float32 near 1e-5 for scores of a few units.
      CHECK(f.rope_shift_change < (precision == attn::Precision::Float64 ? 1e-12 : 1e-4));
    }
    // The same check by hand: every position moved by 100 gives the same scores.
    Problem moved = p;
    moved.options.query_positions = range(100, 4);
    moved.options.key_positions = range(100, 4);
    const double change = (values(attn::run(moved), "scores", 2) - values(t, "scores", 2)).cwiseAbs().maxCoeff();
    CHECK(change < (precision == attn::Precision::Float64 ? 1e-12 : 1e-4));
  }
  // Without RoPE, or with cos/sin tables, nothing is checked.
  Problem off = gqa_projection(5, 4);
  CHECK(attn::run(off).facts[0].rope_shift == 0);
  Problem tables = gqa_projection(5, 4);
  tables.options.rope.on = true;
  tables.options.rope.cos = Matrix::Constant(4, 1, std::cos(0.5));
  tables.options.rope.sin = Matrix::Constant(4, 1, std::sin(0.5));
  CHECK(attn::run(tables).facts[0].rope_shift == 0);
}

TEST_CASE("rope: the half and interleaved styles are permutations of each other", "[positions][rope]") {
  for (int dims : {6, 4}) {
    Problem half = direct(13, 3, 4, 6);
    half.options.rope.on = true;
    half.options.rope.dims = dims;
    // Feature i of the half layout is feature 2i of the interleaved one, feature i + dims/2 is
    // 2i + 1; features past dims stay where they are.
    std::vector<int> from(6);
    for (int i = 0; i < dims / 2; ++i) {
      from[static_cast<size_t>(2 * i)] = i;
      from[static_cast<size_t>(2 * i + 1)] = i + dims / 2;
    }
    for (int f = dims; f < 6; ++f) from[static_cast<size_t>(f)] = f;
    auto permute = [&](const Matrix& m) {
      Matrix out(m.rows(), m.cols());
      for (int f = 0; f < 6; ++f) out.col(f) = m.col(from[static_cast<size_t>(f)]);
      return out;
    };
    Problem interleaved = half;
    interleaved.Q = permute(*half.Q);
    interleaved.K = permute(*half.K);
    interleaved.options.rope.style = attn::Rope::Style::Interleaved;
    const attn::Trace a = attn::run(half), b = attn::run(interleaved);
    CHECK(permute(values(a, "Q_rot")).isApprox(values(b, "Q_rot"), 1e-15));
    CHECK(permute(values(a, "K_rot")).isApprox(values(b, "K_rot"), 1e-15));
    CHECK(values(a, "scores").isApprox(values(b, "scores"), 1e-14));
    // Without permuting, the styles pair other features and give other scores.
    Problem same_features = half;
    same_features.options.rope.style = attn::Rope::Style::Interleaved;
    CHECK((values(attn::run(same_features), "scores") - values(a, "scores")).cwiseAbs().maxCoeff() > 1e-3);
  }
}

TEST_CASE("rope: cos and sin tables give the same numbers as the base they were made from", "[positions][rope]") {
  Problem p = direct(14, 3, 4, 4);
  p.options.rope.on = true;
  p.options.rope.base = 100;
  const attn::Trace computed = attn::run(p);
  Matrix cos(6, 2), sin(6, 2);
  for (int pos = 0; pos < 6; ++pos) {
    for (int i = 0; i < 2; ++i) {
      cos(pos, i) = std::cos(pos * std::pow(100.0, -2.0 * i / 4));
      sin(pos, i) = std::sin(pos * std::pow(100.0, -2.0 * i / 4));
    }
  }
  Problem tables = p;
  tables.options.rope.base = 10000;  // unused with tables
  tables.options.rope.cos = cos;
  tables.options.rope.sin = sin;
  const attn::Trace read = attn::run(tables);
  CHECK(values(read, "Q_rot") == values(computed, "Q_rot"));
  CHECK(values(read, "K_rot") == values(computed, "K_rot"));
  // A scaled table (linear RoPE scaling: positions halved) is what the rows hold, nothing else.
  for (int pos = 0; pos < 6; ++pos) {
    for (int i = 0; i < 2; ++i) {
      cos(pos, i) = std::cos(pos / 2.0 * std::pow(100.0, -2.0 * i / 4));
      sin(pos, i) = std::sin(pos / 2.0 * std::pow(100.0, -2.0 * i / 4));
    }
  }
  tables.options.rope.cos = cos;
  tables.options.rope.sin = sin;
  const Matrix q = values(attn::run(tables), "Q_rot");
  const Matrix& q0 = *p.Q;
  CHECK(q(1, 0) == Approx(q0(1, 0) * std::cos(0.5) - q0(1, 2) * std::sin(0.5)));
  check_sound(tables);
}

// ---------------------------------------------------------------------------------------------
// The KV cache

TEST_CASE("cache: a cached decode equals the last rows of full causal attention", "[positions][cache]") {
  for (bool rope : {false, true}) {
    for (int past : {1, 4}) {
      const int N = 6;
      Problem full = gqa_projection(21, N);
      full.options.causal = true;
      full.options.rope.on = rope;
      const attn::Trace whole = attn::run(full);

      // The cache as a model keeps it: every key/value head's (rotated) keys and values of the
      // first `past` tokens, side by side.
      Problem step = full;
      Matrix past_K(past, 4), past_V(past, 6);
      for (int g = 0; g < 2; ++g) {
        const int head = g * 2;  // the first query head of key/value group g
        past_K.middleCols(g * 2, 2) = values(whole, rope ? "K_rot" : "K", head).topRows(past);
        past_V.middleCols(g * 3, 3) = values(whole, "V", head).topRows(past);
      }
      step.X = Matrix(full.X->bottomRows(N - past));
      step.past_K = past_K;
      step.past_V = past_V;
      const attn::Trace decode = attn::run(step);
      INFO("rope " << rope << ", " << past << " cached rows");
      CHECK(decode.keys == N);
      CHECK(decode.queries == N - past);
      CHECK(decode.output.isApprox(whole.output.bottomRows(N - past), 1e-12));
      for (int h = 0; h < 4; ++h) {
        CHECK(values(decode, "K_cache", h).isApprox(values(whole, rope ? "K_rot" : "K", h), 1e-12));
        CHECK(values(decode, "V_cache", h).isApprox(values(whole, "V", h), 1e-12));
        CHECK(values(decode, "weights", h).isApprox(values(whole, "weights", h).bottomRows(N - past), 1e-12));
      }
      check_sound(step);

      // The columns layout: the same numbers transposed.
      const Problem columns = in_columns(step);
      const attn::Trace t = attn::run(columns);
      CHECK(t.output.isApprox(decode.output.transpose(), 1e-14));
      check_sound(columns);

      // float32: the same within float32's rounding.
      step.options.precision = attn::Precision::Float32;
      const attn::Trace f32 = attn::run(step);
      CHECK((f32.output - decode.output).cwiseAbs().maxCoeff() < 1e-4);
      check_sound(step);
    }
  }
}

TEST_CASE("cache: steps, positions and the scores' inputs", "[positions][cache]") {
  Problem p = direct(22, 2, 3, 4);
  attn::RandomState rng(23);
  p.past_K = rng.randn(2, 4);
  p.past_V = rng.randn(2, 3);
  p.options.rope.on = true;
  p.options.causal = true;
  const attn::Trace t = attn::run(p);
  CHECK(step_ids(t) == std::vector<std::string>{"rope_angles", "Q0", "K0", "V0", "Q_rot0", "K_rot0", "K_cache0",
                                                "V_cache0", "scores0", "scaled0", "mask0", "masked0", "weights0",
                                                "output"});
  const Matrix& keys = values(t, "K_cache");
  CHECK(keys.topRows(2) == *p.past_K);  // cached keys come rotated: kept as they are
  CHECK(keys.bottomRows(3) == values(t, "K_rot"));
  CHECK(values(t, "V_cache").topRows(2) == *p.past_V);
  CHECK(values(t, "V_cache").bottomRows(3) == *p.V);
  // Queries sit at positions 2 and 3, the new keys at 2, 3, 4: causal (ONNX's rule) hides key
  // 4 from query 2 and key 5 from both, nothing else.
  const Matrix& masked = values(t, "masked");
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 5; ++j) CHECK(std::isinf(masked(i, j)) == (j > i + 2));
  }
  // The query at position 2 turned by 2 radians in its first pair (θ_0 = 1).
  const Matrix& q = *p.Q;
  CHECK(values(t, "Q_rot")(0, 0) == Approx(q(0, 0) * std::cos(2.0) - q(0, 2) * std::sin(2.0)));
  const attn::Step& scores = find_step(t, "scores");
  CHECK(t.steps[static_cast<size_t>(scores.inputs[0])].id == "Q_rot");
  CHECK(t.steps[static_cast<size_t>(scores.inputs[1])].id == "K_cache");
  const attn::Step& output = find_step(t, "output", -1);
  CHECK(t.steps[static_cast<size_t>(output.inputs[1])].id == "V_cache");
  check_sound(p);
}

TEST_CASE("cache: how a step reads its inputs (Step::reads, for lineage)", "[positions][cache]") {
  Problem p = direct(22, 2, 3, 4);
  attn::RandomState rng(23);
  p.past_K = rng.randn(2, 4);
  p.past_V = rng.randn(2, 3);
  p.options.rope.on = true;
  p.options.causal = true;
  const attn::Trace t = attn::run(p);
  // K_cache's key j is past_K's row j (given) or, from j = 2, K_rot's row j - 2.
  CHECK(reads_text(t, find_step(t, "K_cache")) == std::vector<std::string>{"K_rot: keys=keys-2 features=features+0"});
  CHECK(reads_text(t, find_step(t, "V_cache")) == std::vector<std::string>{"V: keys=keys-2 features=features+0"});
  // A score: its query's row of Q_rot, its key's row of K_cache (the features summed over).
  CHECK(reads_text(t, find_step(t, "scores")) ==
        std::vector<std::string>{"Q_rot: queries=queries+0", "K_cache: keys=keys+0"});
  // RoPE: the token's row of Q, the whole angle table (no tie: positions are not tokens).
  CHECK(reads_text(t, find_step(t, "Q_rot")) == std::vector<std::string>{"Q: queries=queries+0", "rope_angles:"});
  // The softmax reads the whole row; masking is elementwise; weights · V_cache.
  CHECK(reads_text(t, find_step(t, "weights")) == std::vector<std::string>{"masked: queries=queries+0"});
  CHECK(reads_text(t, find_step(t, "masked")) ==
        std::vector<std::string>{"scaled: queries=queries+0 keys=keys+0", "mask: queries=queries+0 keys=keys+0"});
  CHECK(reads_text(t, find_step(t, "output", -1)) ==
        std::vector<std::string>{"weights: queries=queries+0", "V_cache: features=features+0"});
}

TEST_CASE("cache: how the gradient steps read theirs (Step::reads)", "[positions][cache][gradients]") {
  attn::RandomState rng(24);
  Problem p;
  p.Q = rng.randn(2, 4);
  p.K = rng.randn(3, 4);
  p.V = rng.randn(3, 4);
  p.past_K = rng.randn(2, 4);
  p.past_V = rng.randn(2, 4);
  p.options.heads = 2;
  const attn::Trace t = attn::gradients(p).trace;
  // dV[j][c] = Σ_i A[i][j] dhead[i][c]: column j of A, column c of the head's gradient.
  CHECK(reads_text(t, find_step(t, "dV_cache", 1)) ==
        std::vector<std::string>{"weights: keys=keys+0", "dhead_output: features=features+0"});
  // Head 1's new keys are rows 2.. of its dK_cache; the whole dK puts head 1 at features 2, 3.
  CHECK(reads_text(t, find_step(t, "dK", 1)) == std::vector<std::string>{"dK_cache: keys=keys+2 features=features+0"});
  CHECK(reads_text(t, find_step(t, "dK", -1)) ==
        std::vector<std::string>{"dK: keys=keys+0 features=features+0", "dK: keys=keys+0 features=features-2"});
  // Head 1's slice of dO: features 2, 3.
  CHECK(reads_text(t, find_step(t, "dhead_output", 1)) ==
        std::vector<std::string>{"dO: queries=queries+0 features=features+2"});
}

// ---------------------------------------------------------------------------------------------
// Position encodings

TEST_CASE("positional: the sinusoids of Attention Is All You Need, section 3.5", "[positions][sinusoidal]") {
  // PE(pos, 2i) = sin(pos / 10000^(2i/d_model)), PE(pos, 2i+1) = cos(pos / 10000^(2i/d_model)).
  // T = 10, d_model = 4, row 3 as published (4 decimals) in "Sinusoidal positional encoding",
  // https://prof.lexailabs.com/practice/build-gpt-02-positional-encoding-sinusoidal :
  // PE[3] ≈ [0.1411, -0.9900, 0.0300, 0.9996].
  Problem p;
  p.X = Matrix::Zero(10, 4);
  p.W_Q = p.W_K = p.W_V = Matrix::Identity(4, 4);
  p.options.positional = attn::Positional::Sinusoidal;
  const attn::Trace t = attn::run(p);
  const Matrix& pe = values(t, "positional", -1);
  const double published[] = {0.1411, -0.9900, 0.0300, 0.9996};
  for (int f = 0; f < 4; ++f) CHECK(pe(3, f) == Approx(published[f]).margin(5e-5));
  // sequence_length 2, embedding_dim 8, position 1 as printed (float16) in "Transformer position
  // embedding generator", https://www.onenoughtone.com/problems/transformer-position-embedding-generator
  Problem eight;
  eight.X = Matrix::Zero(2, 8);
  eight.W_Q = eight.W_K = eight.W_V = Matrix::Identity(8, 8);
  eight.options.positional = attn::Positional::Sinusoidal;
  const Matrix pe8 = values(attn::run(eight), "positional", -1);
  const double printed[] = {0.84130859375,       0.54052734375, 0.099853515625,        0.9951171875,
                            0.01000213623046875, 1.0,           0.0010004043579101562, 1.0};
  for (int f = 0; f < 8; ++f) {
    CHECK(pe8(0, f) == (f % 2 == 0 ? 0.0 : 1.0));
    CHECK(pe8(1, f) == Approx(printed[f]).margin(5e-4));  // float16 keeps ~3 digits
  }
  check_sound(p);
}

TEST_CASE("positional: X plus its encoding feeds the projections", "[positions][sinusoidal]") {
  Problem p = gqa_projection(31, 4);
  p.options.positional = attn::Positional::Sinusoidal;
  attn::RandomState rng(32);
  p.past_K = rng.randn(3, 4);
  p.past_V = rng.randn(3, 6);
  const attn::Trace t = attn::run(p);
  CHECK(step_ids(t)[0] == "positional");
  CHECK(step_ids(t)[1] == "X_pos");
  const Matrix& pe = values(t, "positional", -1);
  // With 3 cached tokens the new tokens sit at positions 3 to 6.
  CHECK(pe(0, 0) == Approx(std::sin(3.0)));
  CHECK(pe(0, 1) == Approx(std::cos(3.0)));
  const Matrix& x = values(t, "X_pos", -1);
  CHECK(x == Matrix(*p.X + pe));
  CHECK(values(t, "Q", 1).isApprox(Matrix(x * *p.W_Q).middleCols(2, 2), 1e-14));
  CHECK(values(t, "K", 3).isApprox(Matrix(x * *p.W_K).middleCols(2, 2), 1e-14));
  // Cross-attention: only X (the queries' sequence) gets positions.
  Problem cross = p;
  cross.past_K.reset();
  cross.past_V.reset();
  cross.X_kv = rng.randn(5, 8);
  const attn::Trace c = attn::run(cross);
  CHECK(values(c, "K", 0).isApprox(Matrix(*cross.X_kv * *cross.W_K).leftCols(2), 1e-14));
  CHECK(find_step(c, "K").inputs.empty());
  check_sound(p);
  check_sound(cross);
  check_sound(in_columns(p));
  // float32: the encoding and the sum are rounded to float32 like every other step.
  p.options.precision = attn::Precision::Float32;
  p.options.rope.on = true;
  const attn::Trace f32 = attn::run(p);
  CHECK((values(f32, "X_pos", -1) - x).cwiseAbs().maxCoeff() < 1e-6);
  check_sound(p);
}

TEST_CASE("positional: learned positions P are added to X", "[positions][learned]") {
  Problem p = gqa_projection(33, 3);
  attn::RandomState rng(34);
  p.P = rng.randn(3, 8);
  const attn::Trace t = attn::run(p);
  CHECK(values(t, "positional", -1) == *p.P);
  CHECK(values(t, "X_pos", -1) == Matrix(*p.X + *p.P));
  const attn::Step& encoding = find_step(t, "positional", -1);
  CHECK(encoding.symbol == "P");
  CHECK(encoding.given == std::vector<std::string>{"P"});
  CHECK(english_formula(encoding.tex) == "P \\;\\text{(given)}");
  check_sound(p);
  check_sound(in_columns(p));
}

// ---------------------------------------------------------------------------------------------
// What each new step says about itself

TEST_CASE("positions: the new steps' formulas", "[positions][metadata]") {
  Problem p = gqa_projection(41, 3);
  p.options.positional = attn::Positional::Sinusoidal;
  p.options.rope.on = true;
  attn::RandomState rng(42);
  p.past_K = rng.randn(2, 4);
  p.past_V = rng.randn(2, 6);
  const attn::Trace t = attn::run(p);
  struct Want {
    const char* id;
    int head;
    const char* symbol;
    const char* tex;
    const char* text;
  };
  const Want wants[] = {
      {"positional", -1, "PE",
       "PE_{p,\\,2i} = \\sin(p / 10000^{2i/d}),\\; PE_{p,\\,2i+1} = \\cos(p / 10000^{2i/d}),\\quad d = 8",
       "PE[p, 2i] = sin(p / 10000^(2i/d)), PE[p, 2i+1] = cos(p / 10000^(2i/d)), d = 8"},
      {"X_pos", -1, "X'", "X' = X + PE", "X′ = X + PE"},
      {"Q", 1, "Q^{(2)}", "Q^{(2)} = X'\\,W_{Q}^{(2)}", "Q⁽²⁾ = X′·W_Q⁽²⁾"},
      {"Q_rot", 1, "Q_{\\text{rot}}^{(2)}",
       "Q_{\\text{rot}}^{(2)} = \\operatorname{RoPE}(Q^{(2)}),\\quad \\theta_i = 10000^{-2i/2},\\; \\text{pairs } "
       "(i,\\, i+1)",
       "Q_rot⁽²⁾ = RoPE(Q⁽²⁾), θ_i = 10000^(−2i/2), pairs (i, i+1)"},
      {"K_cache", 2, "K_{\\text{cache}}^{(3)}",
       "K_{\\text{cache}}^{(3)} = \\begin{bmatrix} K_{\\text{past}}^{(3)} \\\\ K_{\\text{rot}}^{(3)} \\end{bmatrix}",
       "K_cache⁽³⁾ = [K_past⁽³⁾ ; K_rot⁽³⁾]"},
      {"V_cache", 0, "V_{\\text{cache}}^{(1)}",
       "V_{\\text{cache}}^{(1)} = \\begin{bmatrix} V_{\\text{past}}^{(1)} \\\\ V^{(1)} \\end{bmatrix}",
       "V_cache⁽¹⁾ = [V_past⁽¹⁾ ; V⁽¹⁾]"},
      {"scores", 1, "S^{(2)}", "S^{(2)} = Q_{\\text{rot}}^{(2)}K_{\\text{cache}}^{(2)\\top}",
       "S⁽²⁾ = Q_rot⁽²⁾·K_cache⁽²⁾ᵀ"},
      {"head_output", 0, "\\text{head}_{1}", "\\text{head}_{1} = A^{(1)} V_{\\text{cache}}^{(1)}",
       "head1 = A⁽¹⁾·V_cache⁽¹⁾"},
  };
  for (const Want& w : wants) {
    const attn::Step& s = find_step(t, w.id, w.head);
    INFO(w.id << " of head " << w.head);
    CHECK(s.symbol == w.symbol);
    CHECK(english_formula(s.tex) == w.tex);
    CHECK(english_formula(s.text) == w.text);
  }
  CHECK(find_step(t, "K_cache", 2).given == std::vector<std::string>{"past_K"});
  CHECK(find_step(t, "K_cache", 2).feature_first == 2);  // key/value head 2 of 2 holds features 3-4
  CHECK(find_step(t, "X_pos", -1).given == std::vector<std::string>{"X"});
  CHECK(find_step(t, "Q", 0).given == std::vector<std::string>{"W_Q"});
  CHECK(find_step(t, "K_cache", 0).row_axis == attn::Axis::Keys);
  CHECK(find_step(t, "K_cache", 0).title_id == "step.K_cache");
  CHECK(find_step(t, "Q_rot", 0).title_id == "step.Q_rot");
  check_sound(p);

  // Partial, interleaved, from tables; the columns layout stacks the cache side by side.
  Problem q = direct(43, 2, 3, 6);
  q.options.rope.on = true;
  q.options.rope.dims = 4;
  q.options.rope.style = attn::Rope::Style::Interleaved;
  attn::RandomState r(44);
  q.past_K = r.randn(1, 6);
  q.past_V = r.randn(1, 3);
  const attn::Trace partial = attn::run(in_columns(q));
  CHECK(english_formula(find_step(partial, "K_rot").text) ==
        "K_rot = RoPE(K), θ_i = 10000^(−2i/4), pairs (2i, 2i+1), features 1..4 of 6");
  CHECK(find_step(partial, "K_cache").tex ==
        "K_{\\text{cache}} = \\left[\\, K_{\\text{past}} \\mid K_{\\text{rot}} \\,\\right]");
  CHECK(find_step(partial, "scores").text == "S = K_cacheᵀ·Q_rot");
  q.options.rope.cos = Matrix::Ones(4, 2);
  q.options.rope.sin = Matrix::Zero(4, 2);
  CHECK(english_formula(find_step(attn::run(q), "Q_rot").tex) ==
        "Q_{\\text{rot}} = \\operatorname{RoPE}(Q),\\quad \\cos, \\sin \\text{ from the tables},\\; "
        "\\text{pairs } (2i,\\, 2i+1),\\; \\text{features } 1..4 \\text{ of } 6");
  check_sound(q);
}

// ---------------------------------------------------------------------------------------------
// Worked calculations

TEST_CASE("explain: rotation, sinusoid, sum and cache cells", "[positions][explain]") {
  Problem p = gqa_projection(51, 3);
  p.options.positional = attn::Positional::Sinusoidal;
  p.options.rope.on = true;
  p.options.rope.base = 100;
  attn::RandomState rng(52);
  p.past_K = rng.randn(2, 4);
  p.past_V = rng.randn(2, 6);
  const attn::Trace t = attn::run(p);

  // Head 2's rotated query 3 (position 4), feature 2: the second of the pair (1, 2)... d_k = 2,
  // so the one pair is (0, 1) with θ_0 = 1: angle 4.
  const attn::Explanation rot = attn::explain(p, "Q_rot", 1, 2, 1);
  CHECK(rot.kind == "rotation");
  CHECK(rot.position == 4);
  CHECK(rot.angle == 4);
  CHECK(rot.pair_first == 0);
  CHECK(rot.pair_second == 1);
  const Matrix& q = values(t, "Q", 1);
  CHECK(rot.left == std::vector<double>{q(2, 0), q(2, 1)});
  CHECK(rot.right == std::vector<double>{std::sin(4.0), std::cos(4.0)});
  CHECK(rot.cos == std::cos(4.0));
  CHECK(rot.sin == std::sin(4.0));
  CHECK(rot.products[0] + rot.products[1] == Approx(rot.value));
  CHECK(rot.value == values(t, "Q_rot", 1)(2, 1));
  const attn::Explanation first = attn::explain(p, "K_rot", 3, 0, 0);  // a new key at position 2
  CHECK(first.position == 2);
  CHECK(first.right == std::vector<double>{std::cos(2.0), -std::sin(2.0)});
  CHECK(first.products[0] + first.products[1] == Approx(first.value));

  const attn::Explanation pe = attn::explain(p, "positional", -1, 1, 2);  // position 3, i = 1
  CHECK(pe.kind == "sinusoid");
  CHECK(pe.position == 3);
  CHECK(pe.angle == Approx(3 / std::pow(10000.0, 2.0 / 8)));
  CHECK(pe.value == Approx(std::sin(pe.angle)));
  CHECK(pe.sin == pe.value);

  const attn::Explanation sum = attn::explain(p, "X_pos", -1, 1, 2);
  CHECK(sum.kind == "add");
  CHECK(sum.input == (*p.X)(1, 2));
  CHECK(sum.additive == pe.value);
  CHECK(sum.value == sum.input + sum.additive);

  // The projection now reads X' (the step X_pos), not X.
  const attn::Explanation proj = attn::explain(p, "Q", 0, 1, 0);
  CHECK(proj.kind == "projection");
  CHECK(proj.left[2] == sum.value);

  const attn::Explanation cached = attn::explain(p, "K_cache", 2, 1, 1);  // a cached row, group 1
  CHECK(cached.kind == "cache");
  CHECK(cached.source == "past_K");
  CHECK(cached.source_row == 1);
  CHECK(cached.source_col == 3);
  CHECK(cached.value == (*p.past_K)(1, 3));
  const attn::Explanation fresh = attn::explain(p, "V_cache", 2, 3, 2);  // the second new row
  CHECK(fresh.source == "V");
  CHECK(fresh.source_row == 1);
  CHECK(fresh.source_col == 2);
  CHECK(fresh.value == values(t, "V", 2)(1, 2));

  // Features beyond the rotated ones pass unchanged; tables have no angle.
  Problem partial = direct(53, 2, 2, 4);
  partial.options.rope.on = true;
  partial.options.rope.dims = 2;
  const attn::Explanation kept = attn::explain(partial, "Q_rot", 0, 1, 3);
  CHECK(kept.kind == "unrotated");
  CHECK(kept.value == (*partial.Q)(1, 3));
  CHECK(kept.input == kept.value);
  partial.options.rope.cos = Matrix::Constant(2, 1, 0.5);
  partial.options.rope.sin = Matrix::Constant(2, 1, 0.25);
  const attn::Explanation table = attn::explain(partial, "Q_rot", 0, 1, 0);
  CHECK(std::isnan(table.angle));
  CHECK(table.cos == 0.5);
  CHECK(table.sin == 0.25);
  CHECK(table.value == Approx(0.5 * (*partial.Q)(1, 0) - 0.25 * (*partial.Q)(1, 1)));
}

// ---------------------------------------------------------------------------------------------
// RoPE's angle table

TEST_CASE("rope_angles: p·θ_i for base 10000, dims 4, positions 0 to 3", "[positions][rope][angles]") {
  Problem p = direct(61, 4, 4, 4);
  p.options.rope.on = true;
  const attn::Trace t = attn::run(p);
  const attn::Step& angles = find_step(t, "rope_angles", -1);
  // θ_0 = 10000^0 = 1, θ_1 = 10000^(-2/4) = 0.01: one row per position, one column per pair.
  Matrix want(4, 2);
  want << 0, 0, 1, 0.01, 2, 0.02, 3, 0.03;
  REQUIRE(angles.values.rows() == 4);
  REQUIRE(angles.values.cols() == 2);
  for (int r = 0; r < 4; ++r) {
    for (int c = 0; c < 2; ++c) CHECK(angles.values(r, c) == Approx(want(r, c)).epsilon(1e-15));
  }
  CHECK(t.steps.front().id == "rope_angles");  // before the heads
  CHECK(angles.row_axis == attn::Axis::Positions);
  CHECK(angles.col_axis == attn::Axis::Features);
  CHECK(angles.kind == attn::ValueKind::Signed);
  CHECK(angles.symbol == "\\Theta");
  CHECK(angles.tex == "\\Theta_{p,i} = p\\,\\theta_i,\\quad \\theta_i = 10000^{-2i/4}");
  CHECK(angles.text == "Θ[p, i] = p·θ_i, θ_i = 10000^(−2i/4)");
  CHECK(angles.inputs.empty());
  // Q_rot and K_rot turn by these angles: they read the table.
  for (const char* id : {"Q_rot", "K_rot"}) {
    const attn::Step& rotated = find_step(t, id);
    REQUIRE(rotated.inputs.size() == 2);
    CHECK(t.steps[static_cast<size_t>(rotated.inputs[1])].id == "rope_angles");
  }
  // Row 3, pair 1: the rotation of Q_rot's query at position 3 uses that angle.
  const Matrix& q = *p.Q;
  CHECK(values(t, "Q_rot")(3, 1) == Approx(q(3, 1) * std::cos(0.03) - q(3, 3) * std::sin(0.03)));
  check_sound(p);

  // The columns layout: pairs down the rows, positions across.
  const attn::Trace columns = attn::run(in_columns(p));
  const attn::Step& turned = find_step(columns, "rope_angles", -1);
  CHECK(turned.values == Matrix(angles.values.transpose()));
  CHECK(turned.row_axis == attn::Axis::Features);
  CHECK(turned.col_axis == attn::Axis::Positions);
  CHECK(turned.tex == "\\Theta_{i,p} = p\\,\\theta_i,\\quad \\theta_i = 10000^{-2i/4}");
  check_sound(in_columns(p));
}

TEST_CASE("rope_angles: the positions used, in order, once; tables give atan2(sin, cos)", "[positions][rope][angles]") {
  Problem p = direct(62, 2, 3, 4);
  p.options.rope.on = true;
  p.options.rope.dims = 2;
  p.options.query_positions = {7, 2};
  p.options.key_positions = {2, 5, 9};
  const attn::Trace t = attn::run(p);
  const Matrix& angles = values(t, "rope_angles", -1);
  REQUIRE(angles.rows() == 4);  // positions 2, 5, 7, 9
  REQUIRE(angles.cols() == 1);
  CHECK(angles(0, 0) == 2);
  CHECK(angles(1, 0) == 5);
  CHECK(angles(2, 0) == 7);
  CHECK(angles(3, 0) == 9);
  const attn::Vector& rows = t.rope_positions;  // the positions of the rows
  CHECK(std::vector<double>(rows.data(), rows.data() + rows.size()) == std::vector<double>{2, 5, 7, 9});
  check_sound(p);

  // With tables: the angle whose cos and sin they hold, a row per position used.
  Problem tables = direct(63, 2, 2, 2);
  tables.options.rope.on = true;
  tables.options.rope.cos = Matrix(3, 1);
  tables.options.rope.sin = Matrix(3, 1);
  *tables.options.rope.cos << 1, 0, -1;
  *tables.options.rope.sin << 0, 1, 0;
  const attn::Trace from_tables = attn::run(tables);
  const attn::Step& step = find_step(from_tables, "rope_angles", -1);
  REQUIRE(step.values.rows() == 2);  // positions 0 and 1
  CHECK(step.values(0, 0) == 0);
  CHECK(step.values(1, 0) == Approx(std::acos(-1.0) / 2));
  CHECK(english_formula(step.text) == "Θ[p, i] = atan2(sin[p, i], cos[p, i]) (the angles of the cos/sin tables)");
  const attn::Explanation e = attn::explain(tables, "rope_angles", -1, 1, 0);
  CHECK(e.kind == "angle");
  CHECK(e.lines == std::vector<std::string>{"\\Theta_{2,1}", "\\operatorname{atan2}(@1, @2)", "@0"});
  CHECK(e.numbers == std::vector<double>{step.values(1, 0), 1, 0});
  CHECK(e.text_id == "explain.rope.angle.tables");
  CHECK(e.params == Params{{"position", "1"}, {"pair", "1"}, {"first", "1"}, {"second", "2"}});
  check_sound(tables);

  // A float32 trace shows the angles in float32.
  p.options.precision = attn::Precision::Float32;
  check_sound(p);
}

TEST_CASE("explain: an angle of RoPE's table, written as its calculation", "[positions][rope][angles][explain]") {
  Problem p = direct(64, 4, 4, 4);
  p.options.rope.on = true;
  const attn::Explanation e = attn::explain(p, "rope_angles", -1, 3, 1);
  CHECK(e.kind == "angle");
  CHECK(e.head == -1);
  CHECK(e.position == 3);
  CHECK(e.pair_first == 1);  // the half style pairs features 2 and 4
  CHECK(e.pair_second == 3);
  CHECK(e.value == Approx(0.03));
  CHECK(e.lines == std::vector<std::string>{"\\Theta_{4,2}", "3 \\cdot 10000^{-2 \\cdot 1/4}", "3 \\cdot @1", "@0"});
  CHECK(e.numbers[0] == e.value);
  CHECK(e.numbers[1] == Approx(0.01));
  CHECK(e.text_id == "explain.rope.angle");
  CHECK(e.params == Params{{"position", "3"},
                           {"pair", "2"},
                           {"first", "2"},
                           {"second", "4"},
                           {"base", "10000"},
                           {"i", "1"},
                           {"dims", "4"},
                           {"theta", "@1"}});
  CHECK(e.terms.columns.empty());
  // The head a caller names by default finds the table every head shares.
  CHECK(attn::explain(p, "rope_angles", 0, 3, 1).value == e.value);
}

// ---------------------------------------------------------------------------------------------
// Errors

TEST_CASE("positions: RoPE on an odd d_k names d_k, not rope dims nobody gave", "[positions][rope][errors]") {
  // The review's case: the first example (d_k = 2) split into 2 heads, so d_k = 1.
  Problem one = direct(64, 3, 3, 2);
  one.V = Matrix::Ones(3, 2);
  one.options.heads = 2;
  one.options.rope.on = true;
  CHECK_THROWS_SAYING(attn::run(one), "RoPE turns features in pairs, but d_k = 1 is odd");
  Problem three = direct(64, 3, 3, 3);
  three.options.rope.on = true;
  CHECK_THROWS_SAYING(attn::run(three),
                      "RoPE turns features in pairs, but d_k = 3 is odd; set rope dims to an even "
                      "number up to 2 to turn only that many");
  three.options.rope.dims = 2;  // ... which then works
  CHECK_NOTHROW(attn::run(three));
}

TEST_CASE("positions: each mistake gets its message", "[positions][errors]") {
  struct Case {
    const char* what;
    std::function<void(Problem&)> change;
    const char* message;
  };
  attn::RandomState rng(61);
  const Matrix past3 = rng.randn(2, 3), past4 = rng.randn(2, 4), past4b = rng.randn(3, 4);
  const std::vector<Case> cases = {
      {"cache narrower than K",
       [&](Problem& p) {
         p.past_K = past3;
         p.past_V = past4;
       },
       "past_K has 3 columns but K has 4"},
      {"cache of values narrower than V",
       [&](Problem& p) {
         p.past_K = past4;
         p.past_V = Matrix::Zero(2, 2);
       },
       "past_V has 2 columns but V has 3"},
      {"values without keys", [&](Problem& p) { p.past_V = past4; },
       "past_V is given without past_K: a cache holds keys and values"},
      {"keys without values", [&](Problem& p) { p.past_K = past4; },
       "past_K is given without past_V: a cache holds keys and values"},
      {"row counts differ",
       [&](Problem& p) {
         p.past_K = past4;
         p.past_V = Matrix::Zero(3, 3);
       },
       "past_K has 2 rows but past_V has 3: every cached key needs a cached value"},
      {"a cache holding NaN",
       [&](Problem& p) {
         p.past_K = past4;
         p.past_K->coeffRef(1, 0) = NAN;
         p.past_V = Matrix::Zero(2, 3);
       },
       "past_K row 2, column 1 is nan: inputs must be finite numbers (only an additive mask may hold -inf)"},
      {"odd rope dims",
       [](Problem& p) {
         p.options.rope.on = true;
         p.options.rope.dims = 3;
       },
       "rope dims must be even and at most d_k = 4 (got 3)"},
      {"rope dims over d_k",
       [](Problem& p) {
         p.options.rope.on = true;
         p.options.rope.dims = 6;
       },
       "rope dims must be even and at most d_k = 4 (got 6)"},
      {"rope base 0",
       [](Problem& p) {
         p.options.rope.on = true;
         p.options.rope.base = 0;
       },
       "rope base must be a positive number (got 0)"},
      {"cos without sin",
       [](Problem& p) {
         p.options.rope.on = true;
         p.options.rope.cos = Matrix::Ones(5, 2);
       },
       "rope cos is given without sin: the tables go together"},
      {"tables of the wrong width",
       [](Problem& p) {
         p.options.rope.on = true;
         p.options.rope.cos = Matrix::Ones(5, 3);
         p.options.rope.sin = Matrix::Zero(5, 3);
       },
       "rope cos has 3 columns but rope dims = 4 needs 2 (one per pair of features)"},
      {"tables of different lengths",
       [](Problem& p) {
         p.options.rope.on = true;
         p.options.rope.cos = Matrix::Ones(5, 2);
         p.options.rope.sin = Matrix::Zero(4, 2);
       },
       "rope sin has 4 rows but rope cos has 5: one row per position in both"},
      {"a key beyond the tables",
       [](Problem& p) {
         p.options.rope.on = true;
         p.options.rope.cos = Matrix::Ones(3, 2);
         p.options.rope.sin = Matrix::Zero(3, 2);
       },
       "key 4 is at position 3 but the rope tables have 3 rows (positions 0 to 2)"},
      {"a query beyond the tables",
       [](Problem& p) {
         p.options.rope.on = true;
         p.options.rope.cos = Matrix::Ones(8, 2);
         p.options.rope.sin = Matrix::Zero(8, 2);
         p.options.query_positions = {0, 1, 9};
       },
       "query 3 is at position 9 but the rope tables have 8 rows (positions 0 to 7)"},
      {"too few query positions",
       [](Problem& p) {
         p.options.query_positions = {0, 1};
       },
       "positions.queries has 2 entries but there are 3 queries"},
      {"too few key positions with a cache",
       [&](Problem& p) {
         p.past_K = past4;
         p.past_V = Matrix::Zero(2, 3);
         p.options.key_positions = {0, 1, 2, 3, 4};
       },
       "positions.keys has 5 entries but there are 6 keys (2 cached + 4 new)"},
      {"a fractional position",
       [](Problem& p) {
         p.options.key_positions = {0, 1, 2.5, 3};
       },
       "positions.keys entry 3 is 2.5: positions are whole numbers, 0 or more"},
      {"a negative position",
       [](Problem& p) {
         p.options.query_positions = {0, -1, 2};
       },
       "positions.queries entry 2 is -1: positions are whole numbers, 0 or more"},
      {"sinusoids without X", [](Problem& p) { p.options.positional = attn::Positional::Sinusoidal; },
       "positional \"sinusoidal\" adds positions to X, but Q, K and V are given directly: give X "
       "with W_Q, W_K and W_V"},
      {"P without X", [](Problem& p) { p.P = Matrix::Zero(3, 4); },
       "P (learned positions) adds positions to X, but Q, K and V are given directly: give X "
       "with W_Q, W_K and W_V"},
  };
  for (const Case& c : cases) {
    Problem p = direct(62, 3, 4, 4);
    c.change(p);
    INFO(c.what);
    CHECK_THROWS_SAYING(attn::run(p), c.message);
  }

  const std::vector<Case> projected = {
      {"P and sinusoids",
       [](Problem& p) {
         p.P = Matrix::Zero(3, 8);
         p.options.positional = attn::Positional::Sinusoidal;
       },
       "P (learned positions) and positional \"sinusoidal\" both add positions to X: give one of them"},
      {"learned without P", [](Problem& p) { p.options.positional = attn::Positional::Learned; },
       "positional \"learned\" needs the input P (one position vector per token of X)"},
      {"P of another shape", [](Problem& p) { p.P = Matrix::Zero(3, 7); },
       "P is 3x7 but X is 3x8: learned positions are added to X entry by entry"},
      {"a projected cache narrower than K",
       [&](Problem& p) {
         p.past_K = past3;
         p.past_V = Matrix::Zero(2, 6);
       },
       "past_K has 3 columns but K has 4"},
  };
  for (const Case& c : projected) {
    Problem p = gqa_projection(63, 3);
    c.change(p);
    INFO(c.what);
    CHECK_THROWS_SAYING(attn::run(p), c.message);
  }
  // The columns layout speaks of rows where the rows layout speaks of columns.
  Problem columns = direct(64, 3, 4, 4);
  columns.past_K = past3;
  columns.past_V = Matrix::Zero(2, 3);
  CHECK_THROWS_SAYING(attn::run(in_columns(columns)), "past_K has 3 rows but K has 4");
  columns.past_K = past4;
  columns.past_V = Matrix::Zero(3, 3);
  CHECK_THROWS_SAYING(attn::run(in_columns(columns)),
                      "past_K has 2 columns but past_V has 3: every cached key needs a cached value");
}
