// Linear attention (Katharopoulos et al., 2020) and multi-head latent attention (DeepSeek-V2):
// each against a direct transcription of its formula on random problems, the identities
// (recurrent = parallel = chunked for every chunk size and γ; absorbed = naive), gradients
// against central finite differences, the worked calculations of the new steps, and the errors.
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "attention.h"
#include "gradients.h"
#include "numpy_random.h"
#include "practice.h"

using attn::Matrix;
using attn::Problem;
using attn::Vector;

namespace {

const attn::Step* find_step(const attn::Trace& t, const std::string& id, int head) {
  for (const attn::Step& s : t.steps) {
    if (s.id == id && s.head == head) return &s;
  }
  return nullptr;
}

std::vector<std::string> ids(const attn::Trace& t) {
  std::vector<std::string> out;
  for (const attn::Step& s : t.steps) out.push_back(s.id);
  return out;
}

double max_abs(const Matrix& m) { return m.cwiseAbs().maxCoeff(); }

std::string message_of(const Problem& p) {
  try {
    attn::run(p);
  } catch (const attn::InputError& e) {
    return e.what();
  }
  return "";
}

// ---- linear attention --------------------------------------------------------------------------

double phi(attn::FeatureMap map, double x) {
  switch (map) {
    case attn::FeatureMap::EluPlusOne: return x > 0 ? x + 1 : std::exp(x);
    case attn::FeatureMap::Relu: return std::max(0.0, x);
    case attn::FeatureMap::Identity: return x;
  }
  return x;
}

/// The paper's formula written out, one head at a time: o_i = Σ_j c_ij φ(q_i)·φ(k_j) v_j /
/// Σ_j c_ij φ(q_i)·φ(k_j), c_ij = γ^(i−j) for j ≤ i when causal (else 1); Q, K, V given.
Matrix linear_by_formula(const Problem& p) {
  const int heads = p.options.heads, kv = p.options.kv_heads ? p.options.kv_heads : heads;
  const Eigen::Index L = p.Q->rows(), S = p.K->rows(), d_k = p.Q->cols() / heads, d_v = p.V->cols() / kv;
  const attn::FeatureMap map = p.options.feature_map.value_or(attn::FeatureMap::EluPlusOne);
  const bool normalize = p.options.normalize.value_or(true);
  const double gamma = p.options.causal ? p.options.decay.value_or(1.0) : 1.0;
  Matrix out = Matrix::Zero(L, heads * d_v);
  for (int h = 0; h < heads; ++h) {
    const int g = h / (heads / kv);
    for (Eigen::Index i = 0; i < L; ++i) {
      Vector numerator = Vector::Zero(d_v);
      double denominator = 0;
      for (Eigen::Index j = 0; j < S; ++j) {
        if (p.options.causal && j > i) continue;
        double w = 0;
        for (Eigen::Index m = 0; m < d_k; ++m) {
          w += phi(map, (*p.Q)(i, h * d_k + m)) * phi(map, (*p.K)(j, g * d_k + m));
        }
        w *= std::pow(gamma, static_cast<double>(i - j) * (p.options.causal ? 1 : 0));
        numerator += w * p.V->block(j, g * d_v, 1, d_v).transpose();
        denominator += w;
      }
      out.block(i, h * d_v, 1, d_v) = (normalize ? Vector(numerator / denominator) : numerator).transpose();
    }
  }
  return out;
}

Problem linear_problem(unsigned seed, int L, int S, int heads = 1, int kv_heads = 0, int d_k = 3, int d_v = 2) {
  attn::RandomState rng(seed);
  const int kv = kv_heads ? kv_heads : heads;
  Problem p;
  p.Q = rng.randn(L, heads * d_k);
  p.K = rng.randn(S, kv * d_k);
  p.V = rng.randn(S, kv * d_v);
  p.options.heads = heads;
  p.options.kv_heads = kv_heads;
  p.options.attention = attn::AttentionKind::Linear;
  p.dO = rng.randn(L, heads * d_v);
  return p;
}

const attn::FeatureMap kMaps[] = {attn::FeatureMap::EluPlusOne, attn::FeatureMap::Relu, attn::FeatureMap::Identity};

/// Loss Σ O ∘ dO of run().
double loss(const Problem& p) { return attn::run(p).output.cwiseProduct(*p.dO).sum(); }

/// Every gradient of the inputs named (step "d" + name, head -1) against central differences.
void check_gradients(const Problem& p, const std::vector<std::pair<std::string, std::optional<Matrix> Problem::*>>& inputs) {
  const attn::Gradients g = attn::gradients(p);
  REQUIRE(g.loss == Approx(loss(p)).epsilon(1e-12));
  for (const auto& [name, member] : inputs) {
    const attn::Step* step = find_step(g.trace, "d" + name, -1);
    INFO("gradient of " << name);
    REQUIRE(step != nullptr);
    const Matrix& given = *(p.*member);
    REQUIRE(step->values.rows() == given.rows());
    REQUIRE(step->values.cols() == given.cols());
    const double largest = max_abs(step->values);
    for (Eigen::Index k = 0; k < given.size(); ++k) {
      const double h = 1e-5;
      Problem plus = p, minus = p;
      (plus.*member)->data()[k] += h;
      (minus.*member)->data()[k] -= h;
      const double difference = (loss(plus) - loss(minus)) / (2 * h);
      const double analytic = step->values.data()[k];
      INFO("entry " << k << ": analytic " << analytic << ", differences " << difference);
      CHECK(std::abs(analytic - difference) <= 1e-6 * std::max({std::abs(difference), largest, 1e-3}));
    }
  }
}

}  // namespace

TEST_CASE("linear attention equals its formula on random problems", "[linear]") {
  unsigned seed = 1;
  for (const attn::FeatureMap map : kMaps) {
    for (const bool causal : {false, true}) {
      for (const bool normalize : {true, false}) {
        for (const double gamma : {1.0, 0.8}) {
          for (const auto& [heads, kv] : {std::pair{1, 0}, std::pair{2, 0}, std::pair{4, 2}}) {
            Problem p = linear_problem(seed++, 5, causal ? 5 : 4, heads, kv);
            p.options.feature_map = map;
            p.options.normalize = normalize;
            p.options.causal = causal;
            if (causal) p.options.decay = gamma;
            const attn::Trace t = attn::run(p);
            const Matrix want = linear_by_formula(p);
            INFO("map " << static_cast<int>(map) << " causal " << causal << " normalize " << normalize << " gamma "
                        << gamma << " heads " << heads);
            // relu may leave a query no positive feature: a normalizer of 0, NaN in both.
            CHECK(t.output.array().isNaN().matrix() == want.array().isNaN().matrix());
            const Matrix got = t.output.array().isNaN().select(0, t.output),
                         expect = want.array().isNaN().select(0, want);
            CHECK(max_abs(got - expect) <= 1e-12 * std::max(1.0, max_abs(expect)));
          }
        }
      }
    }
  }
}

TEST_CASE("linear attention: its steps, their formulas and the projections", "[linear]") {
  Problem p = linear_problem(7, 4, 4);
  p.options.causal = true;
  p.options.decay = 0.5;
  attn::Trace t = attn::run(p);
  CHECK(ids(t) == std::vector<std::string>{"Q", "K", "V", "phi_Q", "phi_K", "linear_scores", "normalizer", "output"});
  const attn::Step& scores = *find_step(t, "linear_scores", 0);
  CHECK(scores.text == "Λ_ij = φ(Q)_i · φ(K)_j·γ^(i − j) where j ≤ i, 0 where j > i, γ = 0.5");
  CHECK(scores.values(0, 1) == 0);
  CHECK(find_step(t, "phi_Q", 0)->text == "φ(Q) = elu(Q) + 1");
  CHECK(find_step(t, "normalizer", 0)->text == "D_i = Σ_j Λ_ij");
  CHECK(find_step(t, "output", -1)->text == "O = (Λ·V)_i / D_i (row by row)");
  CHECK(find_step(t, "normalizer", 0)->values.cols() == 1);

  // From X, two heads and W_O: head outputs, concat, output; relu without the normalizer.
  attn::RandomState rng(3);
  Problem x;
  x.X = rng.randn(3, 4);
  x.W_Q = rng.randn(4, 4);
  x.W_K = rng.randn(4, 4);
  x.W_V = rng.randn(4, 4);
  x.W_O = rng.randn(4, 2);
  x.options.heads = 2;
  x.options.attention = attn::AttentionKind::Linear;
  x.options.feature_map = attn::FeatureMap::Relu;
  x.options.normalize = false;
  t = attn::run(x);
  CHECK(find_step(t, "normalizer", 0) == nullptr);
  CHECK(find_step(t, "phi_K", 1)->text == "φ(K)⁽²⁾ = max(0, K⁽²⁾)");
  CHECK(find_step(t, "head_output", 1)->text == "head2 = Λ⁽²⁾·V⁽²⁾ (not normalized)");
  Problem direct = linear_problem(1, 3, 3, 2);
  direct.Q = *x.X * *x.W_Q;
  direct.K = *x.X * *x.W_K;
  direct.V = *x.X * *x.W_V;
  direct.options = x.options;
  CHECK(max_abs(t.output - linear_by_formula(direct) * *x.W_O) < 1e-12);
}

TEST_CASE("linear attention: warnings and float32", "[linear]") {
  Problem p = linear_problem(11, 3, 3);
  p.options.decay = 0.5;  // not causal: ignored
  attn::Trace t = attn::run(p);
  REQUIRE(t.warnings.size() == 1);
  CHECK(t.warnings[0].find("options.decay = 0.5 is ignored") == 0);

  Problem zero = linear_problem(12, 2, 2);
  zero.options.feature_map = attn::FeatureMap::Relu;
  zero.Q->row(1) = -zero.Q->row(1).cwiseAbs();  // relu turns every feature of query 2 into 0
  t = attn::run(zero);
  REQUIRE(t.warnings.size() == 1);
  CHECK(t.warnings[0] == "row 2 of the normalizer is 0 (φ(q)·Σφ(k) = 0): its output row is not finite");
  CHECK(!t.output.row(1).allFinite());
  CHECK(t.output.row(0).allFinite());

  Problem f32 = linear_problem(13, 4, 4, 2);
  f32.options.causal = true;
  f32.options.decay = 0.9;
  const Matrix f64 = attn::run(f32).output;
  f32.options.precision = attn::Precision::Float32;
  CHECK(max_abs(attn::run(f32).output - f64) < 1e-5);
}

TEST_CASE("linear attention: what it refuses, naming both keys", "[linear]") {
  const auto refused = [](const std::function<void(Problem&)>& change) {
    Problem p = linear_problem(5, 3, 3);
    change(p);
    return message_of(p);
  };
  CHECK(refused([](Problem& p) { p.options.mask = Matrix::Ones(3, 3); }) ==
        "options.attention \"linear\" and options.mask cannot be combined: linear attention has no scores to scale, "
        "cap, bias or mask and no cache of keys (causal follows options.causal; it is written in the rows layout)");
  CHECK(refused([](Problem& p) { p.options.rope.on = true; }).find("options.attention \"linear\" and options.rope ") == 0);
  CHECK(refused([](Problem& p) { p.options.softcap = 5; }).find("and options.softcap cannot") != std::string::npos);
  CHECK(refused([](Problem& p) { p.options.alibi = true; }).find("and options.alibi cannot") != std::string::npos);
  CHECK(refused([](Problem& p) { p.options.window_left = 1; }).find("and options.window cannot") != std::string::npos);
  CHECK(refused([](Problem& p) { p.options.sink_tokens = 1; }).find("and options.sink_tokens cannot") != std::string::npos);
  CHECK(refused([](Problem& p) { p.options.sink_logit = {0.0}; }).find("and options.sink_logit cannot") != std::string::npos);
  CHECK(refused([](Problem& p) { p.options.scale.kind = attn::Scale::Kind::None; }).find("and options.scale cannot") !=
        std::string::npos);
  CHECK(refused([](Problem& p) { p.options.layout = attn::Layout::Columns; })
            .find("and options.layout \"columns\" cannot") != std::string::npos);
  CHECK(refused([](Problem& p) {
          p.past_K = Matrix::Ones(1, 3);
          p.past_V = Matrix::Ones(1, 2);
        }).find("and past_K cannot") != std::string::npos);
  CHECK(refused([](Problem& p) { p.options.decay = 0; }) == "options.decay must be a number in (0, 1], got number 0");
  CHECK(refused([](Problem& p) { p.options.decay = 1.5; }) == "options.decay must be a number in (0, 1], got number 1.5");
  CHECK(refused([](Problem& p) {
          p.options.attention = attn::AttentionKind::Softmax;
          p.options.feature_map = attn::FeatureMap::Relu;
        }) == "options.feature_map is an option of linear attention: set options.attention to \"linear\"");
  CHECK(refused([](Problem& p) {
          p.options.attention = attn::AttentionKind::Softmax;
          p.options.decay = 0.5;
        }) == "options.decay is an option of linear attention: set options.attention to \"linear\"");
}

TEST_CASE("linear attention: recurrent = parallel = chunked for every chunk size and decay", "[linear][recurrent]") {
  unsigned seed = 20;
  for (const double gamma : {1.0, 0.9, 0.5, 0.1}) {
    for (const bool normalize : {true, false}) {
      for (const auto& [heads, kv] : {std::pair{1, 0}, std::pair{2, 1}}) {
        Problem p = linear_problem(seed++, 6, 6, heads, kv);
        p.options.causal = true;
        p.options.decay = gamma;
        p.options.normalize = normalize;
        const Matrix parallel = attn::run(p).output;
        for (Eigen::Index chunk = 0; chunk <= 7; ++chunk) {
          INFO("gamma " << gamma << " normalize " << normalize << " heads " << heads << " chunk " << chunk);
          const attn::Recurrent r = attn::recurrent(p, chunk);
          CHECK(max_abs(r.output - parallel) < 1e-12);
          CHECK(r.max_difference < 1e-12);
          const Eigen::Index size = chunk == 0 ? 1 : std::min<Eigen::Index>(chunk, 6);
          CHECK(r.steps.size() == static_cast<size_t>(heads * ((6 + size - 1) / size)));
          for (const attn::RecurrentStep& s : r.steps) CHECK(s.difference < 1e-12);
          // The last state of head 0 is Σ_j γ^(5−j) φ(k_j) v_jᵀ.
          const attn::RecurrentStep& last = r.steps[r.steps.size() / heads - 1];
          const attn::Trace t = attn::run(p);
          const Matrix& phi_K = find_step(t, "phi_K", 0)->values;
          const Matrix& V = find_step(t, "V", 0)->values;
          Matrix state = Matrix::Zero(3, 2);
          for (Eigen::Index j = 0; j < 6; ++j) state += std::pow(gamma, 5.0 - j) * phi_K.row(j).transpose() * V.row(j);
          CHECK(max_abs(last.state - state) < 1e-12);
          CHECK(last.z.size() == (normalize ? 3 : 0));
          CHECK(last.intra.size() == (chunk == 0 ? 0 : last.count * 2));
        }
      }
    }
  }
}

TEST_CASE("linear attention: the forms' costs and the recurrent form's errors", "[linear][recurrent]") {
  Problem p = linear_problem(30, 4, 4, 2, 1, 3, 2);
  p.options.causal = true;
  const attn::Recurrent r = attn::recurrent(p, 2);
  REQUIRE(r.costs.size() == 4);
  // H = 2, G = 1, L = 4, d_k = 3, d_v = 2: P = 10 pairs; chunks of 2: 3 + 3 pairs.
  CHECK(r.costs[0].form == "softmax");
  CHECK(r.costs[0].multiply_adds == 2 * 10 * 5);
  CHECK(r.costs[0].state == 1 * 4 * 5);
  CHECK(r.costs[1].form == "parallel");
  CHECK(r.costs[1].multiply_adds == 2 * 10 * 6);
  CHECK(r.costs[1].state == 2 * 16);
  CHECK(r.costs[2].form == "recurrent");
  CHECK(r.costs[2].multiply_adds == 3 * 4 * 9);
  CHECK(r.costs[2].state == 9);
  CHECK(r.costs[3].form == "chunked");
  CHECK(r.costs[3].multiply_adds == 2 * 6 * 6 + 3 * 4 * 9);
  CHECK(r.costs[3].state == 9 + 2 * 4);
  CHECK(attn::recurrent(p, 0).costs.size() == 3);

  const auto message = [](const Problem& q, Eigen::Index chunk) {
    try {
      attn::recurrent(q, chunk);
    } catch (const attn::InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  Problem not_causal = p;
  not_causal.options.causal = false;
  CHECK(message(not_causal, 0).find("recurrent needs causal linear attention") == 0);
  Problem softmax = p;
  softmax.options.attention = attn::AttentionKind::Softmax;
  CHECK(message(softmax, 0).find("recurrent needs causal linear attention") == 0);
  Problem cross = linear_problem(31, 3, 4);
  cross.options.causal = true;
  CHECK(message(cross, 0) == "recurrent runs self-attention token by token, but the problem has 3 queries and 4 keys");
  CHECK(message(p, -1) == "chunk must be a positive integer, got number -1");
  Problem shuffled = p;
  shuffled.options.query_positions = {0, 1, 2, 3};
  shuffled.options.key_positions = {0, 1, 3, 2};
  CHECK(message(shuffled, 0).find("recurrent reads token t's query and key together") == 0);
  // Positions with gaps: the decay spans the gap.
  Problem gaps = p;
  gaps.options.decay = 0.7;
  gaps.options.query_positions = gaps.options.key_positions = {0, 2, 3, 7};
  CHECK(attn::recurrent(gaps, 0).max_difference < 1e-12);
  CHECK(attn::recurrent(gaps, 3).max_difference < 1e-12);
}

TEST_CASE("linear attention: gradients equal finite differences", "[linear][gradients]") {
  unsigned seed = 40;
  for (const attn::FeatureMap map : kMaps) {
    for (const bool causal : {false, true}) {
      for (const bool normalize : {true, false}) {
        Problem p = linear_problem(seed++, 4, 4, 2, 1);
        if (map == attn::FeatureMap::Relu) {  // away from relu's kink and from a normalizer of 0
          *p.Q = p.Q->array() + 2.0;
          *p.K = p.K->array() + 2.0;
        }
        p.options.feature_map = map;
        p.options.causal = causal;
        p.options.normalize = normalize;
        if (causal) p.options.decay = 0.7;
        INFO("map " << static_cast<int>(map) << " causal " << causal << " normalize " << normalize);
        check_gradients(p, {{"Q", &Problem::Q}, {"K", &Problem::K}, {"V", &Problem::V}});
      }
    }
  }
  attn::RandomState rng(50);
  Problem x;
  x.X = rng.randn(3, 4);
  x.W_Q = rng.randn(4, 4);
  x.W_K = rng.randn(4, 4);
  x.W_V = rng.randn(4, 4);
  x.W_O = rng.randn(4, 3);
  x.options.heads = 2;
  x.options.causal = true;
  x.options.attention = attn::AttentionKind::Linear;
  x.dO = rng.randn(3, 3);
  check_gradients(x, {{"X", &Problem::X}, {"W_Q", &Problem::W_Q}, {"W_K", &Problem::W_K}, {"W_V", &Problem::W_V},
                      {"W_O", &Problem::W_O}});
  const attn::Gradients g = attn::gradients(x);
  CHECK(find_step(g.trace, "dlinear_scores", 1)->text == "dΛ⁽²⁾_ij = dhead2_i · (V⁽²⁾_j − head2_i) / D⁽²⁾_i");
  CHECK(find_step(g.trace, "dphi_Q", 0)->text == "dφ(Q)⁽¹⁾ = (dΛ⁽¹⁾ ∘ C)·φ(K)⁽¹⁾, C_ij = 1 where j ≤ i, else 0");
  CHECK(find_step(g.trace, "dQ", 0)->text.find("∘ φ′(Q⁽¹⁾)") != std::string::npos);
}

TEST_CASE("linear attention: worked calculations of every new step's cell", "[linear][explain]") {
  Problem p = linear_problem(60, 3, 3, 2);
  p.options.causal = true;
  p.options.decay = 0.5;
  const attn::Gradients g = attn::gradients(p);
  const std::pair<const char*, const char*> cells[] = {
      {"phi_Q", "feature_map"}, {"phi_K", "feature_map"}, {"linear_scores", "linear_score"},
      {"normalizer", "row_sum"}, {"head_output", "linear_output"}, {"dlinear_scores", "linear_score_grad"},
      {"dphi_Q", "gradient_dot"}, {"dphi_K", "gradient_dot"}, {"dV", "gradient_dot"}, {"dQ", "feature_map_grad"},
      {"dK", "feature_map_grad"}};
  for (const auto& [id, kind] : cells) {
    for (int head = 0; head < 2; ++head) {
      const attn::Step& s = *find_step(g.trace, id, head);
      for (Eigen::Index r = 0; r < s.values.rows(); ++r) {
        for (Eigen::Index c = 0; c < s.values.cols(); ++c) {
          const attn::Explanation e = attn::explain(p, id, head, r, c);
          INFO(id << " head " << head << " cell " << r << "," << c);
          CHECK(e.kind == kind);
          CHECK(e.value == s.values(r, c));
          CHECK(!e.text.empty());
          CHECK(e.lines.size() >= 2);
          // The calculation's numbers give the value.
          if (e.kind == "linear_score" && !e.hidden) {
            double sum = 0;
            for (double x : e.products) sum += x;
            CHECK(sum * e.factor == Approx(e.value).margin(1e-12));
          }
          if (e.kind == "linear_output" || e.kind == "linear_score_grad") {
            double sum = 0;
            for (double x : e.products) sum += x;
            CHECK(sum / e.divisor == Approx(e.value).margin(1e-12));
          }
          if (e.kind == "row_sum") {
            double sum = 0;
            for (double x : e.left) sum += x;
            CHECK(sum == Approx(e.value).margin(1e-12));
          }
          if (e.kind == "gradient_dot") {
            double sum = 0;
            for (double x : e.products) sum += x;
            CHECK(sum == Approx(e.value).margin(1e-12));
          }
          if (e.kind == "feature_map_grad") CHECK(e.input * e.factor == Approx(e.value).margin(1e-12));
        }
      }
    }
  }
  const attn::Explanation hidden = attn::explain(p, "linear_scores", 0, 0, 2);
  CHECK(hidden.hidden);
  CHECK(hidden.value == 0);
  const attn::Explanation decayed = attn::explain(p, "linear_scores", 0, 2, 0);
  CHECK(decayed.factor == 0.25);
}
