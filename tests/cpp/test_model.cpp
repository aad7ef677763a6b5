// The model (model.h): gradients against central finite differences in float64 for every weight
// under every option; the loss, logits and gradients against PyTorch (tests/fixtures/model,
// written by make_model_fixtures.py); the bridge to run(); the induction preset forming an
// induction head where one layer cannot; determinism; the tasks; errors naming their key.
#include <catch2/catch.hpp>
#include <cmath>
#include <algorithm>
#include <fstream>
#include <stdexcept>
#include <sstream>
#include <string>
#include <vector>

#include "attention.h"
#include "model.h"
#include "english.h"

using attn::Json;
using attn::Matrix;

namespace {

attn::TrainConfig config_of(const std::string& text) { return attn::train_config_from_json(Json::parse(text)); }

attn::Batch batch_of(const attn::ModelConfig& m, const std::string& tokens, const std::string& targets = "") {
  const Json t = Json::parse(tokens);
  if (targets.empty()) return attn::batch_from_json(m, t, nullptr);
  const Json g = Json::parse(targets);
  return attn::batch_from_json(m, t, &g);
}

/// Every number of a weights object, in visit order, as pointers into the JSON.
void numbers(Json& j, std::vector<Json*>& out) {
  if (j.is_number()) {
    out.push_back(&j);
  } else if (j.is_array() || j.is_object()) {
    for (auto& child : j) numbers(child, out);
  }
}

/// The largest relative difference between two weights-shaped objects, matched by key.
double largest_gap(const Json& a, const Json& b) {
  if (a.is_number()) return std::abs(a.get<double>() - b.get<double>()) / std::max(1.0, std::abs(b.get<double>()));
  REQUIRE(a.size() == b.size());
  double gap = 0;
  if (a.is_object()) {
    for (const auto& item : b.items()) {
      INFO(item.key());
      REQUIRE(a.contains(item.key()));
      gap = std::max(gap, largest_gap(a[item.key()], item.value()));
    }
  } else {
    for (size_t i = 0; i < a.size(); ++i) gap = std::max(gap, largest_gap(a[i], b[i]));
  }
  return gap;
}

/// Checks every gradient entry against (L(w + h) − L(w − h)) / 2h.
void check_finite_differences(const std::string& model_json, const std::string& task = "\"previous\"") {
  attn::TrainConfig c = config_of(R"({"model": )" + model_json + R"(, "task": )" + task +
                                  R"(, "optimizer": {"lr": 0.05}, "batch": 2, "seed": 3})");
  attn::Model trained(c);
  trained.train(3);  // biases and gains move away from 0 and 1, so their terms matter
  const Json weights = trained.weights();
  attn::RandomState random(7);
  const attn::Batch batch = attn::task_batch(c, random, 2);
  double loss = 0;
  const Json analytic = trained.gradients(batch, &loss);
  REQUIRE(std::isfinite(loss));

  Json nudged = weights;
  std::vector<Json*> entries;
  numbers(nudged, entries);
  Json grads = analytic;
  std::vector<Json*> grad_entries;
  numbers(grads, grad_entries);
  REQUIRE(entries.size() == grad_entries.size());
  const double h = 1e-6;
  double worst = 0;
  for (size_t i = 0; i < entries.size(); ++i) {
    const double w = entries[i]->get<double>();
    *entries[i] = w + h;
    const double up = attn::Model(c, nudged).forward(batch).loss;
    *entries[i] = w - h;
    const double down = attn::Model(c, nudged).forward(batch).loss;
    *entries[i] = w;
    const double numeric = (up - down) / (2 * h), exact = grad_entries[i]->get<double>();
    worst = std::max(worst, std::abs(numeric - exact) / std::max(1e-3, std::abs(exact)));
  }
  INFO(model_json << ": " << entries.size() << " weights");
  CHECK(entries.size() > 100);
  CHECK(worst < 1e-5);
}

}  // namespace

TEST_CASE("model: gradients equal finite differences for every weight under every option", "[model]") {
  const char* base = R"("vocab": 6, "context": 7, "d_model": 4, "precision": "float64")";
  for (
      const std::string options : {
          R"("layers": 1, "heads": 1)",
          R"("layers": 2, "heads": 2, "positions": "rope", "norm": "rmsnorm", "bias": true, "kv_heads": 1)",
          R"("layers": 2, "heads": 2, "positions": "sinusoidal", "norm": "layernorm", "mlp": 6, "tied": true, "bias": true)",
          R"("layers": 1, "heads": 2, "d_head": 3, "positions": "none", "mlp": 5, "activation": "relu", "norm": "layernorm")",
          R"("layers": 1, "heads": 4, "kv_heads": 2, "d_head": 2, "positions": "rope", "mlp": 3, "tied": true)",
      }) {
    check_finite_differences(std::string("{") + base + ", " + options + "}");
  }
}

TEST_CASE("model: loss, logits and gradients equal PyTorch's (tests/fixtures/model)", "[model]") {
  std::ifstream file(std::string(ATTN_FIXTURES_DIR) + "/model/torch_models.json");
  REQUIRE(file.good());
  const Json fixtures = Json::parse(file);
  REQUIRE(fixtures["cases"].size() >= 5);
  for (const Json& item : fixtures["cases"]) {
    INFO(item["name"].get<std::string>());
    attn::TrainConfig c;
    c.model = attn::model_config_from_json(item["model"]);
    c.task.name = "previous";
    const attn::Model model(c, item["weights"]);
    const attn::Batch batch = attn::batch_from_json(c.model, item["tokens"], &item["targets"]);
    const attn::Model::Output out = model.forward(batch);
    CHECK(out.loss == Approx(item["loss"].get<double>()).epsilon(1e-12));
    Json logits = item["logits"];
    std::vector<Json*> expected;
    numbers(logits, expected);
    REQUIRE(static_cast<Eigen::Index>(expected.size()) == out.logits.size());
    double gap = 0;
    for (Eigen::Index i = 0; i < out.logits.size(); ++i) {
      gap = std::max(gap, std::abs(out.logits(i / out.logits.cols(), i % out.logits.cols()) -
                                   expected[static_cast<size_t>(i)]->get<double>()));
    }
    CHECK(gap < 1e-12);
    CHECK(largest_gap(model.gradients(batch), item["gradients"]) < 1e-11);
  }
}

namespace {

Matrix matrix(const Json& j) {
  Matrix m(static_cast<Eigen::Index>(j.size()), static_cast<Eigen::Index>(j[0].size()));
  for (Eigen::Index i = 0; i < m.rows(); ++i) {
    for (Eigen::Index k = 0; k < m.cols(); ++k)
      m(i, k) = j[static_cast<size_t>(i)][static_cast<size_t>(k)].get<double>();
  }
  return m;
}

attn::Vector vector(const Json& j) {
  attn::Vector v(static_cast<Eigen::Index>(j.size()));
  for (Eigen::Index i = 0; i < v.size(); ++i) v[i] = j[static_cast<size_t>(i)].get<double>();
  return v;
}

/// head_problem's JSON as the core's Problem (the keys it uses: the JS API reads the same JSON).
attn::Problem problem_of(const Json& j) {
  attn::Problem p;
  p.X = matrix(j["X"]);
  p.W_Q = matrix(j["W_Q"]);
  p.W_K = matrix(j["W_K"]);
  p.W_V = matrix(j["W_V"]);
  p.W_O = matrix(j["W_O"]);
  if (j.contains("b_Q")) {
    p.b_Q = vector(j["b_Q"]);
    p.b_K = vector(j["b_K"]);
    p.b_V = vector(j["b_V"]);
  }
  const Json& o = j["options"];
  p.options.causal = o["causal"].get<bool>();
  p.options.precision = o["precision"] == "float32" ? attn::Precision::Float32 : attn::Precision::Float64;
  if (o.contains("rope")) {
    p.options.rope.on = true;
    p.options.rope.base = o["rope"]["base"].get<double>();
    p.options.rope.style = attn::Rope::Style::Half;
  }
  return p;
}

const Matrix& step(const attn::Trace& t, const std::string& id) {
  for (const attn::Step& s : t.steps) {
    if (s.id == id) return s.values;
  }
  FAIL("no step " << id);
  throw std::logic_error("unreachable");
}

}  // namespace

TEST_CASE("model: head_problem's run() reproduces the head's own numbers", "[model]") {
  for (const std::string precision : {"float64", "float32"}) {
    for (const std::string options : {R"("positions": "rope", "norm": "rmsnorm", "bias": true, "kv_heads": 1)",
                                      R"("positions": "learned", "norm": "layernorm", "mlp": 8)"}) {
      INFO(precision << " " << options);
      attn::Model model(
          config_of(R"({"model": {"vocab": 9, "context": 8, "d_model": 8, "layers": 2, "heads": 2, "precision": ")" +
                    precision + "\", " + options + R"(}, "task": "previous", "optimizer": {"lr": 0.03}, "seed": 5})"));
      model.train(5);
      const std::vector<int> tokens = {3, 1, 4, 1, 5, 8, 2};
      for (int layer = 1; layer <= 2; ++layer) {
        for (int head = 1; head <= 2; ++head) {
          const attn::Model::HeadNumbers own = model.head_numbers(layer, head, tokens);
          const attn::Trace trace = attn::run(problem_of(model.head_problem(layer, head, tokens)));
          // Same precision, same operations; the products may sum in another order.
          const double tolerance = precision == "float64" ? 1e-12 : 2e-6;
          CHECK((step(trace, options.find("rope") != std::string::npos ? "Q_rot" : "Q") - own.Q).cwiseAbs().maxCoeff() <
                tolerance);
          CHECK((step(trace, "weights") - own.weights).cwiseAbs().maxCoeff() < tolerance);
          CHECK((step(trace, "head_output") - own.head_output).cwiseAbs().maxCoeff() < tolerance);
          CHECK((trace.output - own.contribution).cwiseAbs().maxCoeff() < tolerance);
          // The weights are those of the model's attention pattern.
          CHECK((model.attention_weights(tokens)[static_cast<size_t>(layer - 1)][static_cast<size_t>(head - 1)] -
                 own.weights)
                    .cwiseAbs()
                    .maxCoeff() == 0);
        }
      }
    }
  }
}

TEST_CASE("model: the induction preset forms an induction head in layer 2, one layer does not", "[model]") {
  attn::Model two(attn::train_config_from_json(attn::find_preset("induction").config));
  REQUIRE(two.config().steps <= 2000);
  two.train(two.config().steps);
  const attn::Evaluation e = two.evaluate();
  double best = 0;
  for (const attn::HeadScore& s : two.head_scores()) {
    if (s.layer == 2) best = std::max(best, s.induction);
  }
  INFO("accuracy " << e.accuracy << ", best layer-2 prefix-matching score " << best);
  CHECK(best > 0.4);
  CHECK(e.accuracy > 0.9);
  CHECK(e.predictions == 32 * 14);  // 32 probe sequences, positions n+1 … 2n−1 with n = 15

  attn::Model one(attn::train_config_from_json(attn::find_preset("induction-1-layer").config));
  REQUIRE(one.config().model.layers == 1);
  one.train(one.config().steps);
  CHECK(one.evaluate().accuracy < 0.6);
}

TEST_CASE("model: the same configuration and seed give bit-identical losses", "[model]") {
  const std::string text =
      R"({"model": {"vocab": 12, "context": 12, "d_model": 8, "heads": 2, "mlp": 8, "norm": "layernorm"},
                               "task": "sort", "optimizer": {"lr": 0.01, "warmup": 3, "schedule": "cosine", "weight_decay": 0.1},
                               "steps": 12, "seed": 42})";
  attn::Model a(config_of(text)), b(config_of(text));
  const std::vector<double> first = a.train(12), second = b.train(12);
  CHECK(first == second);
  attn::Model c(
      config_of(R"({"model": {"vocab": 12, "context": 12, "d_model": 8, "heads": 2, "mlp": 8, "norm": "layernorm"},
                              "task": "sort", "optimizer": {"lr": 0.01, "warmup": 3, "schedule": "cosine", "weight_decay": 0.1},
                              "steps": 12, "seed": 43})"));
  CHECK(c.train(12) != first);
  // Training in pieces is training in one go.
  attn::Model d(config_of(text));
  std::vector<double> pieces = d.train(5);
  const std::vector<double> rest = d.train(7);
  pieces.insert(pieces.end(), rest.begin(), rest.end());
  CHECK(pieces == first);
  CHECK(d.step() == 12);
}

TEST_CASE("model: tasks generate what docs/model.md says", "[model]") {
  attn::RandomState random(1);
  const attn::TrainConfig induction =
      config_of(R"({"model": {"vocab": 20, "context": 11, "d_model": 4}, "task": "induction"})");
  const attn::Batch b = attn::task_batch(induction, random, 50);
  CHECK(b.length == 11);  // 1 + 2·⌊(11−1)/2⌋
  for (int s = 0; s < b.sequences; ++s) {
    CHECK(b.token(s, 0) == 0);
    int n = 0;  // the sequence's n: the targets of positions 0 … 2n−1
    for (int t = 0; t < b.length; ++t) n += b.target(s, t) >= 0 ? 1 : 0;
    n /= 2;
    REQUIRE(n >= 4);
    for (int k = 1; k <= n; ++k) {
      CHECK(b.token(s, k) == b.token(s, n + k));
      CHECK(b.token(s, k) >= 1);
      for (int j = 1; j < k; ++j) CHECK(b.token(s, j) != b.token(s, k));
    }
    for (int t = 0; t < 2 * n; ++t) CHECK(b.target(s, t) == b.token(s, t + 1));
    for (int t = 2 * n; t < b.length; ++t) CHECK(b.target(s, t) == -1);
  }
  const attn::TrainConfig previous =
      config_of(R"({"model": {"vocab": 5, "context": 6, "d_model": 4}, "task": "previous"})");
  const attn::Batch p = attn::task_batch(previous, random, 3);
  for (int s = 0; s < 3; ++s) {
    CHECK(p.target(s, 0) == -1);
    for (int t = 1; t < 6; ++t) CHECK(p.target(s, t) == p.token(s, t - 1));
  }
  const attn::TrainConfig sort = config_of(R"({"model": {"vocab": 9, "context": 8, "d_model": 4}, "task": "sort"})");
  const attn::Batch so = attn::task_batch(sort, random, 1);
  CHECK(so.token(0, 4) == 0);  // the separator after 4 tokens
  std::vector<int> given = {so.token(0, 0), so.token(0, 1), so.token(0, 2), so.token(0, 3)};
  std::sort(given.begin(), given.end());
  CHECK(std::vector<int>{so.target(0, 4), so.target(0, 5), so.target(0, 6), so.target(0, 7)} == given);
  const attn::TrainConfig recall =
      config_of(R"({"model": {"vocab": 9, "context": 9, "d_model": 4}, "task": "recall"})");
  const attn::Batch r = attn::task_batch(recall, random, 1);
  CHECK(r.length == 9);
  bool found = false;
  for (int i = 0; i < 4; ++i) {
    if (r.token(0, 2 * i) == r.token(0, 8)) found = r.target(0, 8) == r.token(0, 2 * i + 1);
  }
  CHECK(found);
  const attn::TrainConfig text =
      config_of(R"({"model": {"context": 4, "d_model": 4}, "task": {"name": "text", "text": "abcabd"}})");
  CHECK(text.model.vocab == 4);
  const attn::Batch t = attn::task_batch(text, random, 2);
  CHECK(t.length == 4);
  CHECK(t.target(0, 0) == t.token(0, 1));
}

TEST_CASE("model: bad configurations, weights and tokens name the key", "[model]") {
  const auto error = [](const std::string& text) {
    try {
      attn::train_config_from_json(Json::parse(text));
    } catch (const attn::InputError& e) {
      return e.message().id.empty() ? std::string(e.what()) : english(e.message());
    }
    return std::string("no error");
  };
  CHECK(error(R"({"model": {"vocab": 8, "context": 8, "d_model": 10, "heads": 4}})") ==
        "model.heads: 4 heads do not divide d_model = 10 (give d_head, or heads that divide d_model)");
  CHECK(error(R"({"model": {"vocab": 8, "context": 8, "d_model": 8}, "task": "copy"})") ==
        "task: unknown task \"copy\" (the tasks are previous, reverse, sort, recall, induction, text, custom)");
  CHECK(error(R"({"model": {"vocab": 40, "context": 32, "d_model": 8}, "optimizer": {"lr": 0}})") ==
        "optimizer.lr: expected a learning rate above 0, got 0");
  CHECK(error(R"({"model": {"context": 8, "d_model": 8}, "task": {"name": "text", "text": "aaaa"}})") ==
        "task.text: the text has 1 distinct character; it needs at least 2 to predict one from another");
  CHECK(error(R"({"model": {"vocab": 8, "context": 32, "d_model": 8}, "task": "induction"})") ==
        "model.vocab: the task induction needs vocab ≥ 16 (n = ⌊(context−1)/2⌋ = 15 distinct tokens from 1…vocab−1), "
        "got 8");
  CHECK(error(R"({"model": {"vocab": 8, "context": 8, "d_model": 8, "positions": "alibi"}})") ==
        "model.positions: expected one of \"learned\", \"sinusoidal\", \"rope\", \"none\", got \"alibi\"");
  CHECK(error(R"({"model": {"vocab": 8, "context": 8, "d_model": 8, "heads": 2, "kv_heads": 3}})") ==
        "model.kv_heads: expected a whole number from 1 to 2, got 3");

  const attn::ModelConfig m = attn::model_config_from_json(Json::parse(R"({"vocab": 5, "context": 4, "d_model": 2})"));
  CHECK_THROWS_SAYING(batch_of(m, "[1, 2, 7]"), "tokens[2]: expected a token from 0 to 4 (model.vocab = 5), got 7");
  CHECK_THROWS_SAYING(batch_of(m, "[1, 2, 3, 4, 0]"), "tokens: 5 tokens, longer than the context (model.context = 4)");
  CHECK_THROWS_SAYING(
      batch_of(m, "[[1, 2], [3]]"),
      "tokens[1]: 1 tokens but tokens[0] has 2 (the sequences of a batch have one length; pad with targets -1)");

  attn::TrainConfig c;
  c.model = m;
  Json weights = attn::Model(c).weights();
  weights["layers"][0]["W_Q"][1] = Json::array({1.0});
  CHECK_THROWS_SAYING(attn::Model(c, weights),
                      "weights.layers[0].W_Q: row 2 has 1 columns, expected 2 (d_model×heads·d_head)");
  weights = attn::Model(c).weights();
  weights["b_U"] = Json::array({0, 0, 0, 0, 0});
  CHECK_THROWS_SAYING(attn::Model(c, weights), Catch::StartsWith("weights.b_U: this model has no such weight"));
  weights.erase("b_U");
  weights.erase("U");
  CHECK_THROWS_SAYING(attn::Model(c, weights), "weights.U is missing: expected 2×5 (d_model×vocab)");
}

TEST_CASE("model: a loss that overflows stops training with the step and the cause", "[model]") {
  const attn::TrainConfig c = config_of(R"({"model": {"vocab": 8, "context": 8, "d_model": 8, "precision": "float32"},
                                            "task": "previous", "optimizer": {"lr": 0.5}})");
  Json weights = attn::Model(c).weights();
  for (auto& row : weights["E"]) {
    for (auto& x : row) x = x.get<double>() * 1e20;  // logits of about 1e40: past float32's largest
  }
  attn::Model model(c, weights);
  CHECK_THROWS_SAYING(model.train(3),
                      "training stopped at step 1: the loss is NaN; the weights grew too large for "
                      "float32: lower optimizer.lr (now 0.5) or clip the gradients (optimizer.clip)");
  CHECK(model.step() == 0);
}
