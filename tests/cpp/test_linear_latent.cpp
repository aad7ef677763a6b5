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
#include "said.h"
#include "gradients.h"
#include "numpy_random.h"
#include "practice.h"
#include "english.h"

using attn::Matrix;
using attn::Problem;
using Params = std::vector<std::pair<std::string, std::string>>;  // an explanation's message parameters
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

/// The English a user reads for `p`'s refusal ("" when it runs).
std::string message_of(const Problem& p) {
  try {
    attn::run(p);
  } catch (const attn::InputError& e) {
    return e.message().id.empty() ? e.what() : english(e.message());
  }
  return "";
}

// ---- linear attention --------------------------------------------------------------------------

double phi(attn::FeatureMap map, double x) {
  switch (map) {
    case attn::FeatureMap::EluPlusOne:
      return x > 0 ? x + 1 : std::exp(x);
    case attn::FeatureMap::Relu:
      return std::max(0.0, x);
    case attn::FeatureMap::Identity:
      return x;
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
void check_gradients(const Problem& p,
                     const std::vector<std::pair<std::string, std::optional<Matrix> Problem::*>>& inputs) {
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
  CHECK(english_formula(scores.text) == "Λ_ij = φ(Q)_i · φ(K)_j·γ^(i − j) where j ≤ i, 0 where j > i, γ = 0.5");
  CHECK(scores.values(0, 1) == 0);
  CHECK(find_step(t, "phi_Q", 0)->text == "φ(Q) = elu(Q) + 1");
  CHECK(find_step(t, "normalizer", 0)->text == "D_i = Σ_j Λ_ij");
  CHECK(english_formula(find_step(t, "output", -1)->text) == "O = (Λ·V)_i / D_i (row by row)");
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
  CHECK(english_formula(find_step(t, "head_output", 1)->text) == "head2 = Λ⁽²⁾·V⁽²⁾ (not normalized)");
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
  CHECK(said(t.warnings[0]) == "warning.decay_ignored(decay=0.5)");

  Problem zero = linear_problem(12, 2, 2);
  zero.options.feature_map = attn::FeatureMap::Relu;
  zero.Q->row(1) = -zero.Q->row(1).cwiseAbs();  // relu turns every feature of query 2 into 0
  t = attn::run(zero);
  REQUIRE(t.warnings.size() == 1);
  CHECK(said(t.warnings[0]) == "warning.normalizer_zero(row=2, head=none)");
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
  CHECK(refused([](Problem& p) { p.options.rope.on = true; }).find("options.attention \"linear\" and options.rope ") ==
        0);
  CHECK(refused([](Problem& p) { p.options.softcap = 5; }).find("and options.softcap cannot") != std::string::npos);
  CHECK(refused([](Problem& p) { p.options.alibi = true; }).find("and options.alibi cannot") != std::string::npos);
  CHECK(refused([](Problem& p) { p.options.window_left = 1; }).find("and options.window cannot") != std::string::npos);
  CHECK(refused([](Problem& p) { p.options.sink_tokens = 1; }).find("and options.sink_tokens cannot") !=
        std::string::npos);
  CHECK(refused([](Problem& p) { p.options.sink_logit = {0.0}; }).find("and options.sink_logit cannot") !=
        std::string::npos);
  CHECK(refused([](Problem& p) { p.options.scale.kind = attn::Scale::Kind::None; }).find("and options.scale cannot") !=
        std::string::npos);
  CHECK(refused([](Problem& p) {
          p.options.layout = attn::Layout::Columns;
        }).find("and options.layout \"columns\" cannot") != std::string::npos);
  CHECK(refused([](Problem& p) {
          p.past_K = Matrix::Ones(1, 3);
          p.past_V = Matrix::Ones(1, 2);
        }).find("and past_K cannot") != std::string::npos);
  CHECK(refused([](Problem& p) { p.options.decay = 0; }) == "options.decay must be a number in (0, 1], got number 0");
  CHECK(refused([](Problem& p) { p.options.decay = 1.5; }) ==
        "options.decay must be a number in (0, 1], got number 1.5");
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
      return e.message().id.empty() ? std::string(e.what()) : english(e.message());
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
  check_gradients(x, {{"X", &Problem::X},
                      {"W_Q", &Problem::W_Q},
                      {"W_K", &Problem::W_K},
                      {"W_V", &Problem::W_V},
                      {"W_O", &Problem::W_O}});
  const attn::Gradients g = attn::gradients(x);
  CHECK(find_step(g.trace, "dlinear_scores", 1)->text == "dΛ⁽²⁾_ij = dhead2_i · (V⁽²⁾_j − head2_i) / D⁽²⁾_i");
  CHECK(english_formula(find_step(g.trace, "dphi_Q", 0)->text) ==
        "dφ(Q)⁽¹⁾ = (dΛ⁽¹⁾ ∘ C)·φ(K)⁽¹⁾, C_ij = 1 where j ≤ i, else 0");
  CHECK(find_step(g.trace, "dQ", 0)->text.find("∘ φ′(Q⁽¹⁾)") != std::string::npos);
}

TEST_CASE("linear attention: worked calculations of every new step's cell", "[linear][explain]") {
  Problem p = linear_problem(60, 3, 3, 2);
  p.options.causal = true;
  p.options.decay = 0.5;
  const attn::Gradients g = attn::gradients(p);
  const std::pair<const char*, const char*> cells[] = {
      {"phi_Q", "feature_map"},   {"phi_K", "feature_map"},         {"linear_scores", "linear_score"},
      {"normalizer", "row_sum"},  {"head_output", "linear_output"}, {"dlinear_scores", "linear_score_grad"},
      {"dphi_Q", "gradient_dot"}, {"dphi_K", "gradient_dot"},       {"dV", "gradient_dot"},
      {"dQ", "feature_map_grad"}, {"dK", "feature_map_grad"}};
  for (const auto& [id, kind] : cells) {
    for (int head = 0; head < 2; ++head) {
      const attn::Step& s = *find_step(g.trace, id, head);
      for (Eigen::Index r = 0; r < s.values.rows(); ++r) {
        for (Eigen::Index c = 0; c < s.values.cols(); ++c) {
          const attn::Explanation e = attn::explain(p, id, head, r, c);
          INFO(id << " head " << head << " cell " << r << "," << c);
          CHECK(e.kind == kind);
          CHECK(e.value == s.values(r, c));
          CHECK(e.text_id.rfind("explain.", 0) == 0);
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

// ---- multi-head latent attention ---------------------------------------------------------------

namespace {

struct LatentSizes {
  int L = 4, d_model = 6, d_c = 3, d_cq = 0, d_h = 2, d_r = 2, d_v = 3, heads = 2, past = 0;
  bool qr_from_x = false;  ///< with W_DQ: W_QR reads X (d_model rows) rather than c_Q
  bool W_O = false;
};

Problem latent_problem(unsigned seed, const LatentSizes& z) {
  attn::RandomState rng(seed);
  Problem p;
  p.X = rng.randn(z.L, z.d_model);
  p.W_DKV = rng.randn(z.d_model, z.d_c);
  p.W_UK = rng.randn(z.d_c, z.heads * z.d_h);
  p.W_UV = rng.randn(z.d_c, z.heads * z.d_v);
  if (z.d_r > 0) p.W_KR = rng.randn(z.d_model, z.d_r);
  if (z.d_cq > 0) {
    p.W_DQ = rng.randn(z.d_model, z.d_cq);
    p.W_UQ = rng.randn(z.d_cq, z.heads * z.d_h);
    if (z.d_r > 0) p.W_QR = rng.randn(z.qr_from_x ? z.d_model : z.d_cq, z.heads * z.d_r);
  } else {
    p.W_Q = rng.randn(z.d_model, z.heads * z.d_h);
    if (z.d_r > 0) p.W_QR = rng.randn(z.d_model, z.heads * z.d_r);
  }
  if (z.W_O) p.W_O = rng.randn(z.heads * z.d_v, 5);
  if (z.past > 0) {
    p.past_c_KV = rng.randn(z.past, z.d_c);
    if (z.d_r > 0) p.past_k_R = rng.randn(z.past, z.d_r);
  }
  p.options.heads = z.heads;
  return p;
}

/// RoPE of row x at position m, "half" style, base 10000: pairs (i, i + d/2) turned by m·10000^(−2i/d).
Vector rope_row(const Vector& x, double m) {
  const Eigen::Index d = x.size(), half = d / 2;
  Vector out = x;
  for (Eigen::Index i = 0; i < half; ++i) {
    const double angle = m * std::pow(10000.0, -2.0 * static_cast<double>(i) / static_cast<double>(d));
    out[i] = x[i] * std::cos(angle) - x[i + half] * std::sin(angle);
    out[i + half] = x[i] * std::sin(angle) + x[i + half] * std::cos(angle);
  }
  return out;
}

/// DeepSeek-V2's equations 9-19 (no latent RMSNorms), written token by token and head by head:
/// c_t^KV = W^DKV h_t, k_t,i^C = W_i^UK c_t^KV, v_t,i^C = W_i^UV c_t^KV, k_t^R = RoPE(W^KR h_t),
/// c_t^Q = W^DQ h_t, q_t,i^C = W_i^UQ c_t^Q, q_t,i^R = RoPE(W_i^QR c_t^Q), o_t,i = Σ_j softmax_j(
/// (q_t,i^C·k_j,i^C + q_t,i^R·k_j^R)/√(d_h + d_r)) v_j,i^C (causal), u_t = W^O [o_t,1; ...].
Matrix latent_by_formula(const Problem& p, const LatentSizes& z, bool causal) {
  const Matrix& X = *p.X;
  const int P = z.past, S = P + z.L;
  Matrix c_kv(S, z.d_c), k_r(S, std::max(z.d_r, 1));
  for (int j = 0; j < S; ++j) {
    if (j < P) {
      c_kv.row(j) = p.past_c_KV->row(j);
      if (z.d_r) k_r.row(j) = p.past_k_R->row(j);
      continue;
    }
    const Vector h = X.row(j - P).transpose();
    c_kv.row(j) = (p.W_DKV->transpose() * h).transpose();
    if (z.d_r) k_r.row(j) = rope_row(p.W_KR->transpose() * h, j).transpose();
  }
  Matrix concat(z.L, z.heads * z.d_v);
  for (int t = 0; t < z.L; ++t) {
    const Vector h = X.row(t).transpose();
    const Vector c_q = z.d_cq ? Vector(p.W_DQ->transpose() * h) : Vector();
    for (int i = 0; i < z.heads; ++i) {
      const Vector q_c = z.d_cq ? Vector(p.W_UQ->middleCols(i * z.d_h, z.d_h).transpose() * c_q)
                                : Vector(p.W_Q->middleCols(i * z.d_h, z.d_h).transpose() * h);
      Vector q_r;
      if (z.d_r) {
        const Vector& from = z.d_cq && !z.qr_from_x ? c_q : h;
        q_r = rope_row(p.W_QR->middleCols(i * z.d_r, z.d_r).transpose() * from, P + t);
      }
      std::vector<double> logits;
      double max = -INFINITY;
      const int seen = causal ? P + t + 1 : S;
      for (int j = 0; j < seen; ++j) {
        const Vector k_c = p.W_UK->middleCols(i * z.d_h, z.d_h).transpose() * c_kv.row(j).transpose();
        double score = q_c.dot(k_c);
        if (z.d_r) score += q_r.dot(k_r.row(j).transpose());
        logits.push_back(score / std::sqrt(static_cast<double>(z.d_h + z.d_r)));
        max = std::max(max, logits.back());
      }
      double sum = 0;
      for (double& x : logits) sum += (x = std::exp(x - max));
      Vector o = Vector::Zero(z.d_v);
      for (int j = 0; j < seen; ++j) {
        o += logits[static_cast<size_t>(j)] / sum *
             (p.W_UV->middleCols(i * z.d_v, z.d_v).transpose() * c_kv.row(j).transpose());
      }
      concat.block(t, i * z.d_v, 1, z.d_v) = o.transpose();
    }
  }
  return p.W_O ? Matrix(concat * *p.W_O) : concat;
}

std::vector<LatentSizes> latent_shapes() {
  std::vector<LatentSizes> out;
  LatentSizes z;
  out.push_back(z);  // W_Q, W_QR from X
  z.d_cq = 4;
  out.push_back(z);  // W_DQ, W_UQ, W_QR from c_Q
  z.qr_from_x = true;
  out.push_back(z);  // W_QR from X beside W_DQ
  z.qr_from_x = false;
  z.W_O = true;
  z.heads = 3;
  out.push_back(z);
  z.past = 3;
  out.push_back(z);  // a latent cache
  z.d_r = 0;
  out.push_back(z);  // no rotary part
  z.d_r = 4;
  z.heads = 1;
  z.d_cq = 6;
  z.W_O = false;
  out.push_back(z);  // d_cq = d_model: W_QR reads c_Q
  return out;
}

}  // namespace

TEST_CASE("latent attention equals DeepSeek-V2's equations on random problems", "[latent]") {
  unsigned seed = 100;
  for (const LatentSizes& z : latent_shapes()) {
    for (const bool causal : {false, true}) {
      Problem p = latent_problem(seed++, z);
      p.options.causal = causal;
      const attn::Trace t = attn::run(p);
      INFO("shape " << seed << " causal " << causal << " heads " << z.heads << " d_cq " << z.d_cq << " d_r " << z.d_r
                    << " past " << z.past);
      const Matrix want = latent_by_formula(p, z, causal);
      REQUIRE(t.output.rows() == want.rows());
      REQUIRE(t.output.cols() == want.cols());
      CHECK(max_abs(t.output - want) <= 1e-12 * std::max(1.0, max_abs(want)));
      CHECK(t.d_k == z.d_h + z.d_r);
      CHECK(t.scale == Approx(1 / std::sqrt(static_cast<double>(z.d_h + z.d_r))).epsilon(1e-15));
      CHECK(t.keys == z.past + z.L);
    }
  }
}

TEST_CASE("latent attention: its steps in order, and absorbed = naive", "[latent]") {
  LatentSizes z;
  z.d_cq = 4;
  z.W_O = true;
  z.past = 2;
  Problem p = latent_problem(7, z);
  p.options.causal = true;
  const attn::Trace t = attn::run(p);
  std::vector<std::string> head0;
  for (const attn::Step& s : t.steps) {
    if (s.head == 0) head0.push_back(s.id);
  }
  CHECK(head0 == std::vector<std::string>{"K_C", "V", "Q_C", "q_R", "scores_C", "scores_R", "scores", "scaled", "mask",
                                          "masked", "weights", "head_output", "Q_absorbed", "scores_C_absorbed",
                                          "O_latent"});
  const std::vector<std::string> all = ids(t);
  CHECK(std::vector<std::string>(all.begin(), all.begin() + 4) ==
        std::vector<std::string>{"rope_angles", "c_KV", "k_R", "c_Q"});
  CHECK(std::vector<std::string>(all.end() - 4, all.end()) ==
        std::vector<std::string>{"concat", "output", "output_absorbed", "cache_sizes"});
  const attn::Step& c_kv = *find_step(t, "c_KV", -1);
  CHECK(c_kv.values.rows() == z.past + z.L);
  CHECK(c_kv.values.topRows(z.past) == *p.past_c_KV);
  CHECK(find_step(t, "k_R", -1)->values.topRows(z.past) == *p.past_k_R);
  CHECK(c_kv.given == std::vector<std::string>{"X", "W_DKV", "past_c_KV"});
  for (int h = 0; h < z.heads; ++h) {
    const Matrix& content = find_step(t, "scores_C", h)->values;
    const Matrix& absorbed = find_step(t, "scores_C_absorbed", h)->values;
    CHECK(max_abs(absorbed - content) <= 1e-12 * std::max(1.0, max_abs(content)));
    const Matrix sum = content + find_step(t, "scores_R", h)->values;
    CHECK(find_step(t, "scores", h)->values == sum);
    CHECK(find_step(t, "K_C", h)->feature_first == h * z.d_h);
    CHECK(find_step(t, "Q_absorbed", h)->values.cols() == z.d_c);
  }
  const Matrix& output = find_step(t, "output", -1)->values;
  CHECK(max_abs(find_step(t, "output_absorbed", -1)->values - output) <= 1e-12 * std::max(1.0, max_abs(output)));
  // Formulas name what each step is computed from.
  CHECK(find_step(t, "scores", 0)->text == "S⁽¹⁾ = S_C⁽¹⁾ + S_R⁽¹⁾");
  CHECK(find_step(t, "scaled", 0)->text == "S̃⁽¹⁾ = S⁽¹⁾ / √(d_h + d_r) = S⁽¹⁾ / √(2 + 2)");
  CHECK(find_step(t, "K_C", 1)->text == "K_C⁽²⁾ = c_KV·W_UK⁽²⁾");
  CHECK(find_step(t, "c_KV", -1)->text == "c_KV = [c_KV,past ; X·W_DKV]");
}

TEST_CASE("latent attention: the numbers a cache stores per token", "[latent]") {
  LatentSizes z;
  z.heads = 6;
  z.d_c = 5;
  z.d_r = 4;
  const attn::Trace t = attn::run(latent_problem(8, z));
  const attn::Step& sizes = *find_step(t, "cache_sizes", -1);
  // MHA 2·6·2, GQA g = 3 and 2, MQA 2·2, MLA 5 + 4.
  CHECK(sizes.values == (Matrix(1, 5) << 24, 12, 8, 4, 9).finished());
  CHECK(english_formula(sizes.text) ==
        "N_cache = per token: MHA 2·6·2, GQA(g=3) 2·3·2, GQA(g=2) 2·2·2, MQA 2·2, MLA 5 + 4");
  const attn::Explanation gqa = attn::explain(latent_problem(8, z), "cache_sizes", -1, 0, 1);
  CHECK(gqa.kind == "cache_size");
  CHECK(gqa.source == "GQA g = 3");
  CHECK(gqa.left == std::vector<double>{2, 3, 2});
  const attn::Explanation mla = attn::explain(latent_problem(8, z), "cache_sizes", -1, 0, 4);
  CHECK(mla.left == std::vector<double>{5, 4});
  z.heads = 1;
  CHECK(find_step(attn::run(latent_problem(9, z)), "cache_sizes", -1)->values == (Matrix(1, 2) << 4, 9).finished());
}

TEST_CASE("latent attention: worked calculations of every new step's cell", "[latent][explain]") {
  LatentSizes z;
  z.d_cq = 4;
  z.W_O = true;
  z.past = 2;
  Problem p = latent_problem(11, z);
  p.options.causal = true;
  const attn::Trace t = attn::run(p);
  const std::pair<const char*, int> steps[] = {{"c_KV", -1},       {"k_R", -1},
                                               {"c_Q", -1},        {"K_C", 1},
                                               {"V", 1},           {"Q_C", 1},
                                               {"q_R", 1},         {"scores_C", 1},
                                               {"scores_R", 1},    {"scores", 1},
                                               {"Q_absorbed", 1},  {"scores_C_absorbed", 1},
                                               {"O_latent", 1},    {"output_absorbed", -1},
                                               {"cache_sizes", -1}};
  for (const auto& [id, head] : steps) {
    const attn::Step& s = *find_step(t, id, head);
    for (Eigen::Index r = 0; r < s.values.rows(); ++r) {
      for (Eigen::Index c = 0; c < s.values.cols(); ++c) {
        const attn::Explanation e = attn::explain(p, id, head, r, c);
        INFO(id << " cell " << r << "," << c << " kind " << e.kind);
        CHECK(e.value == s.values(r, c));
        CHECK(e.text_id.rfind("explain.", 0) == 0);
        CHECK(e.lines.size() >= 2);
        double sum = 0;
        for (double x : e.products) sum += x;
        if (e.kind == "projection" || e.kind == "dot" || e.kind == "weighted_sum" || e.kind == "rotation") {
          CHECK(sum == Approx(e.value).margin(1e-12));
        } else if (e.kind == "cache") {
          CHECK(r < z.past);
        } else if (e.kind == "sum") {
          CHECK(e.left[0] + e.left[1] == e.value);
        } else if (e.kind == "head_sum") {
          double heads = e.bias;
          for (double x : e.left) heads += x;
          CHECK(heads == Approx(e.value).margin(1e-12));
          CHECK(e.right[0] == Approx(e.value).margin(1e-12));  // the naive output's cell
        } else {
          CHECK(e.kind == "cache_size");
        }
      }
    }
  }
  CHECK(attn::explain(p, "c_KV", -1, 0, 0).kind == "cache");
  CHECK(attn::explain(p, "c_KV", -1, 2, 0).kind == "projection");
  CHECK(attn::explain(p, "k_R", -1, 3, 0).kind == "rotation");
  CHECK(attn::explain(p, "k_R", -1, 3, 0).position == 3);
  CHECK(attn::explain(p, "q_R", 0, 1, 1).position == 3);  // queries after the 2 cached tokens
  const attn::Explanation absorbed = attn::explain(p, "scores_C_absorbed", 0, 1, 2);
  CHECK(absorbed.input == Approx(absorbed.value).margin(1e-12));  // the naive content score
}

TEST_CASE("latent attention: what it refuses, naming both keys", "[latent]") {
  const auto refused = [](const std::function<void(Problem&)>& edit) {
    Problem p = latent_problem(12, LatentSizes{});
    edit(p);
    return message_of(p);
  };
  const std::string both = "W_DKV (multi-head latent attention) and ";
  CHECK(refused([](Problem& p) { p.options.kv_heads = 1; }).rfind(both + "options.kv_heads cannot be combined", 0) ==
        0);
  CHECK(refused([](Problem& p) { p.options.window_left = 1; }).rfind(both + "options.window cannot be combined", 0) ==
        0);
  CHECK(refused([](Problem& p) { p.options.sink_tokens = 1; }).rfind(both + "options.sink_tokens cannot", 0) == 0);
  CHECK(refused([](Problem& p) { p.options.sink_logit = {0.5}; }).rfind(both + "options.sink_logit cannot", 0) == 0);
  CHECK(refused([](Problem& p) { p.options.alibi = true; }).rfind(both + "options.alibi cannot", 0) == 0);
  CHECK(refused([](Problem& p) {
          p.options.layout = attn::Layout::Columns;
        }).rfind(both + "options.layout \"columns\"", 0) == 0);
  CHECK(refused([](Problem& p) { p.past_K = Matrix::Zero(1, 4); }).rfind(both + "past_K cannot", 0) == 0);
  CHECK(refused([](Problem& p) { p.options.attention = attn::AttentionKind::Linear; }) ==
        "options.attention \"linear\" and W_DKV (multi-head latent attention) exclude one another: a problem computes "
        "one variant of attention");
  CHECK(refused([](Problem& p) { p.W_KR.reset(); }) ==
        "W_QR is given without W_KR: the rotary part of a score is q_R·k_R, so W_QR and W_KR go together");
  CHECK(refused([](Problem& p) { p.W_QR.reset(); }) ==
        "W_KR is given without W_QR: the rotary part of a score is q_R·k_R, so W_QR and W_KR go together");
  CHECK(refused([](Problem& p) { p.W_DKV.reset(); }) ==
        "W_UK is an input of multi-head latent attention: give W_DKV (X's down-projection to the latent c_KV) with "
        "W_UK and W_UV");
  CHECK(refused([](Problem& p) { p.W_UK = Matrix::Zero(3, 5); }) ==
        "heads = 2 does not divide the 5 columns of W_UK (heads x d_h)");
  CHECK(refused([](Problem& p) { p.W_Q = Matrix::Zero(6, 6); }) ==
        "W_Q has 6 columns but W_UK has 4: q_C and k_C need the same d_h (heads = 2, d_h = 2)");
  CHECK(refused([](Problem& p) { p.W_DKV = Matrix::Zero(5, 3); }) ==
        "W_DKV has 5 rows but X has 6 columns (W_DKV is 5x3)");
  CHECK(refused([](Problem& p) { p.W_DQ = Matrix::Zero(6, 4); }) ==
        "W_Q and W_DQ cannot be combined: the queries come from X·W_Q, or from c_Q = X·W_DQ through W_UQ");
  CHECK(refused([](Problem& p) { p.past_c_KV = Matrix::Zero(2, 3); }) ==
        "past_c_KV is given without past_k_R: a latent cache holds both (W_KR is given)");
  CHECK(refused([](Problem& p) {
          p.past_c_KV = Matrix::Zero(2, 3);
          p.past_k_R = Matrix::Zero(2, 3);
        }) == "past_k_R has 3 columns but k_R has 2");
  CHECK(refused([](Problem& p) { p.W_KR = Matrix::Zero(6, 3); }) ==
        "W_QR has 4 columns but heads = 2 of d_r = 3 (W_KR's columns) need 6");
  // A missing input names itself and what latent attention needs (error.missing-latent).
  CHECK(refused([](Problem& p) { p.W_UV.reset(); }) ==
        "W_UV is missing: multi-head latent attention needs X, W_DKV, W_UK, W_UV and W_Q (or W_DQ with W_UQ)");
  CHECK(refused([](Problem& p) { p.W_UK = Matrix::Zero(2, 4); }) ==
        "W_UK has 2 rows but c_KV = X·W_DKV has 3 columns (W_UK is 2x4)");
  CHECK(refused([](Problem& p) {
          p.W_Q.reset();
          p.W_DQ = Matrix::Zero(6, 5);
          p.W_UQ = Matrix::Zero(5, 4);
          p.W_QR = Matrix::Zero(4, 4);
        }) == "W_QR has 4 rows but q_R reads c_Q (5 columns) or X (6 columns)");
  CHECK(refused([](Problem& p) { p.past_k_R = Matrix::Zero(2, 2); }) ==
        "past_k_R is given without past_c_KV: a latent cache holds both");
  // The walkthroughs say what they do not cover.
  const Problem p = latent_problem(13, LatentSizes{});
  CHECK_THROWS_SAYING(attn::decode(p),
                      Catch::Contains("multi-head latent attention (W_DKV) caches past_c_KV and past_k_R"));
  // Causal and a mask apply.
  Problem masked = latent_problem(14, LatentSizes{});
  masked.options.mask = Matrix::Ones(4, 4);
  (*masked.options.mask)(0, 1) = 0;
  masked.options.mask_kind = attn::MaskKind::Keep;
  CHECK(find_step(attn::run(masked), "weights", 0)->values(0, 1) == 0);
}

TEST_CASE("sigmoid, differential, linear and latent attention: any two refused, naming both keys", "[linear][latent]") {
  const std::string one = " exclude one another: a problem computes one variant of attention";
  Problem linear = linear_problem(5, 3, 4);
  linear.options.score_fn = attn::ScoreFn::Sigmoid;
  CHECK(message_of(linear) == "options.score_fn \"sigmoid\" and options.attention \"linear\"" + one);
  linear.options.score_fn = attn::ScoreFn::Softmax;
  linear.options.differential.on = true;
  linear.options.differential.lambda = {0.5};
  CHECK(message_of(linear) == "options.differential and options.attention \"linear\"" + one);
  linear.options.differential.on = false;
  linear.options.qk_norm.on = true;
  linear.options.qk_norm.type = attn::QkNorm::Type::Rms;
  CHECK(message_of(linear).rfind("options.attention \"linear\" and options.qk_norm cannot be combined", 0) == 0);

  Problem latent = latent_problem(12, LatentSizes{});
  latent.options.differential.on = true;
  latent.options.differential.lambda = {0.5};
  CHECK(message_of(latent) == "options.differential and W_DKV (multi-head latent attention)" + one);
  latent.options.differential.on = false;
  latent.options.score_fn = attn::ScoreFn::Sigmoid;
  CHECK(message_of(latent) == "options.score_fn \"sigmoid\" and W_DKV (multi-head latent attention)" + one);
  latent.options.score_fn = attn::ScoreFn::Softmax;
  latent.W_G = Matrix::Zero(latent.X->cols(), 2);
  CHECK(message_of(latent).rfind("W_DKV (multi-head latent attention) and W_G cannot be combined", 0) == 0);
}

TEST_CASE("latent attention: gradients of X and every weight equal finite differences (the naive form)",
          "[latent][gradients]") {
  unsigned seed = 200;
  for (const LatentSizes& z : latent_shapes()) {
    for (const bool causal : {false, true}) {
      Problem p = latent_problem(seed++, z);
      p.options.causal = causal;
      p.dO = attn::RandomState(seed++).randn(z.L, z.W_O ? 5 : z.heads * z.d_v);
      INFO("heads " << z.heads << " d_cq " << z.d_cq << " d_r " << z.d_r << " past " << z.past << " W_QR from X "
                    << z.qr_from_x << " causal " << causal);
      std::vector<std::pair<std::string, std::optional<Matrix> Problem::*>> inputs = {
          {"X", &Problem::X}, {"W_DKV", &Problem::W_DKV}, {"W_UK", &Problem::W_UK}, {"W_UV", &Problem::W_UV}};
      if (z.d_r > 0) {
        inputs.push_back({"W_KR", &Problem::W_KR});
        inputs.push_back({"W_QR", &Problem::W_QR});
      }
      if (z.d_cq > 0) {
        inputs.push_back({"W_DQ", &Problem::W_DQ});
        inputs.push_back({"W_UQ", &Problem::W_UQ});
      } else {
        inputs.push_back({"W_Q", &Problem::W_Q});
      }
      if (z.W_O) inputs.push_back({"W_O", &Problem::W_O});
      if (z.past > 0) {
        inputs.push_back({"past_c_KV", &Problem::past_c_KV});
        if (z.d_r > 0) inputs.push_back({"past_k_R", &Problem::past_k_R});
      }
      check_gradients(p, inputs);
    }
  }
  // The steps describe themselves; a softcap and a mask compose (the softmax's backward pass).
  LatentSizes z;
  z.d_cq = 4;
  z.past = 2;
  Problem p = latent_problem(230, z);
  p.options.causal = true;
  p.options.softcap = 1.5;
  p.dO = attn::RandomState(231).randn(z.L, z.heads * z.d_v);
  check_gradients(
      p, {{"X", &Problem::X}, {"W_UK", &Problem::W_UK}, {"W_QR", &Problem::W_QR}, {"past_k_R", &Problem::past_k_R}});
  const attn::Gradients g = attn::gradients(p);
  CHECK(find_step(g.trace, "dQ_C", 1)->text == "dQ_C⁽²⁾ = dS⁽²⁾·K_C⁽²⁾");
  CHECK(find_step(g.trace, "dc_KV", -1)->text == "dc_KV = Σ_h (dK_C⁽ʰ⁾·W_UK⁽ʰ⁾ᵀ + dV⁽ʰ⁾·W_UV⁽ʰ⁾ᵀ)");
  CHECK(find_step(g.trace, "dW_KR", -1)->text == "dW_KR = Xᵀ·RoPE⁻¹(dk_R[3..6, :])");
  CHECK(find_step(g.trace, "dpast_c_KV", -1)->text == "dc_KV,past = dc_KV[1..2, :]");
  CHECK(find_step(g.trace, "dX", -1)->given == std::vector<std::string>{"W_DKV", "W_KR", "W_DQ"});
  CHECK(find_step(g.trace, "dQ_C", 1)->feature_first == 2);
  // Every gradient cell explains itself: the step's number, and its terms give it again.
  for (const LatentSizes& shape : latent_shapes()) {
    Problem q = latent_problem(240, shape);
    q.options.causal = true;
    const attn::Gradients gq = attn::gradients(q);
    int explained = 0;
    for (const attn::Step& s : gq.trace.steps) {
      if (s.id[0] != 'd') continue;
      for (Eigen::Index i = 0; i < s.values.rows(); ++i) {
        for (Eigen::Index j = 0; j < s.values.cols(); ++j) {
          const attn::Explanation x = attn::explain(q, s.id, s.head, i, j);
          INFO(s.id << " head " << s.head << " (" << i << ", " << j << ") " << x.kind << " d_cq " << shape.d_cq
                    << " d_r " << shape.d_r << " past " << shape.past);
          REQUIRE(x.value == s.values(i, j));
          REQUIRE(!x.lines.empty());
          REQUIRE(x.text_id.rfind("explain.", 0) == 0);
          double again = 0;
          if (x.kind == "gradient_dot") {
            for (double v : x.products) again += v;
          } else if (x.kind == "head_sum" || x.kind == "token_sum") {
            for (double v : x.left) again += v;
          } else if (x.kind == "copy") {
            const attn::Step* from = find_step(gq.trace, x.source, x.head);
            if (!from) from = find_step(gq.trace, x.source, -1);  // dO's columns of a head
            REQUIRE(from != nullptr);
            again = from->values(x.source_row, x.source_col);
          } else if (x.kind == "input") {
            again = x.value;
          } else if (x.kind == "softmax_grad") {
            for (double v : x.products) again += v;
            again = x.factor * (x.input - again);
          } else if (x.kind == "mask_grad") {
            again = x.hidden ? 0 : x.input;
          } else if (x.kind == "scale" || x.kind == "softcap_grad") {
            again = x.input * x.factor;
          } else {
            FAIL("unexpected kind " << x.kind);
          }
          CHECK(std::abs(again - x.value) <= 1e-12 * std::max(1.0, std::abs(x.value)));
          ++explained;
        }
      }
    }
    CHECK(explained > 0);
  }
  const attn::Explanation dx = attn::explain(p, "dX", -1, 1, 2);
  CHECK(dx.terms.columns.at(0).size() == static_cast<size_t>(z.d_c + z.d_r + z.d_cq));  // c_KV, k_R, c_Q paths
  CHECK(dx.text_id == "explain.latent.dX");  // its paths: c_KV, the rotary key (d_r > 0), c_Q
  CHECK(dx.params == Params{{"feature", "3"}, {"rotary", "yes"}, {"c_Q", "yes"}, {"rotary_query", "no"}});
  const attn::Explanation e = attn::explain(p, "dq_R", 1, 2, 1);
  CHECK(e.kind == "gradient_dot");
  CHECK(e.value == find_step(g.trace, "dq_R", 1)->values(2, 1));
  double sum = 0;
  for (double x : e.products) sum += x;
  CHECK(sum == Approx(e.value).epsilon(1e-12));
  CHECK(attn::explain(p, "dK_C", 0, 3, 0).value == find_step(g.trace, "dK_C", 0)->values(3, 0));
  CHECK(attn::explain(p, "dc_KV", -1, 0, 0).value == find_step(g.trace, "dc_KV", -1)->values(0, 0));
}
