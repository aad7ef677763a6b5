// The model module's embind file (attention-model.wasm): a tiny transformer that trains
// (cpp/model.h). Kept out of the core module so the explorer never downloads it; web/lib/engine.js
// loads it on demand (engine.loadModel()), and the Worker entry (web/lib/model-worker.js) loads it
// alone.
//
// A model lives in this module between calls (its weights and AdamW's moments), named by a
// number; web/lib/model.js wraps it in an object and frees it with dispose() (or when it is
// garbage-collected). Configurations, weights and results cross as JSON text: they are the
// contract's own format (docs/model.md), and a training step's cost dwarfs the text's. Every C++
// exception comes back as a returned Error (wire::guarded).

#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "model.h"
#include "wire_embind.h"

using attn::Json;
using attn::wire::guarded;
using emscripten::val;

namespace {

std::map<int, std::unique_ptr<attn::Model>> models;
int next_id = 1;

attn::Model& model(int id) {
  const auto it = models.find(id);
  if (it == models.end()) throw attn::input_error(attn::ErrorPlace(), "model-disposed");
  return *it->second;
}

val text(const Json& j) { return val(j.dump()); }

Json parse(const std::string& text, const std::string& what) {
  try {
    return Json::parse(text);
  } catch (const Json::parse_error& e) {
    // web/lib writes this JSON (JSON.stringify): a programmer's error, in nlohmann's English.
    throw std::logic_error(what + " is not JSON: " + e.what());
  }
}

std::vector<int> tokens_of(const attn::Model& m, const std::string& tokens_json) {
  const attn::Batch b = attn::batch_from_json(m.config().model, parse(tokens_json, "tokens"), nullptr);
  if (b.sequences != 1) throw attn::input_error(attn::ErrorPlace("tokens"), "model-one-sequence");
  return b.tokens;
}

/// [[layer, head], ...] as JSON text ("" for none): which heads are switched off.
std::vector<bool> ablated_heads(const attn::ModelConfig& c, const std::string& ablated) {
  std::vector<bool> off(static_cast<size_t>(c.layers * c.heads), false);
  if (ablated.empty()) return off;
  const Json heads = parse(ablated, "ablate");
  if (!heads.is_array()) throw attn::input_error(attn::ErrorPlace("ablate"), "model-ablate-list");
  for (const Json& pair : heads) {
    const bool ok = pair.is_array() && pair.size() == 2 && pair[0].is_number_integer() && pair[1].is_number_integer() &&
                    pair[0].get<int>() >= 1 && pair[0].get<int>() <= c.layers && pair[1].get<int>() >= 1 &&
                    pair[1].get<int>() <= c.heads;
    if (!ok) {
      throw attn::input_error(
          attn::ErrorPlace("ablate"), "model-ablate-pair",
          {{"pair", pair.dump()}, {"layers", std::to_string(c.layers)}, {"heads", std::to_string(c.heads)}});
    }
    off[static_cast<size_t>((pair[0].get<int>() - 1) * c.heads + pair[1].get<int>() - 1)] = true;
  }
  return off;
}

Json evaluation(const attn::Model& m, const std::vector<bool>& off) {
  const attn::Evaluation e = m.evaluate(&off);
  return Json{{"step", m.step()}, {"loss", e.loss}, {"accuracy", e.accuracy}, {"predictions", e.predictions}};
}

Json scores(const attn::Model& m) {
  Json out = Json::array();
  for (const attn::HeadScore& s : m.head_scores()) {
    out.push_back({{"layer", s.layer},
                   {"head", s.head},
                   {"previous_token", s.previous_token},
                   {"induction", s.induction},
                   {"duplicate_token", s.duplicate_token},
                   {"first_token", s.first_token},
                   {"ablated_loss", s.ablated_loss}});
  }
  return out;
}

/// Logits shaped like the tokens: T×vocab for one sequence, B×T×vocab for a batch.
Json logits_json(const attn::Matrix& logits, const attn::Batch& b, bool batch) {
  Json out = Json::array();
  for (int s = 0; s < b.sequences; ++s) {
    out.push_back(attn::matrix_json(logits.middleRows(s * b.length, b.length)));
  }
  return batch ? out : out[0];
}

// ---- the functions ----------------------------------------------------------------------------

// { id, config }: config with every default written out. `weights`: "" for a fresh model.
val create_js(std::string config, std::string weights) {
  return guarded([&] {
    const attn::TrainConfig c = attn::train_config_from_json(parse(config, "the configuration"));
    auto made = weights.empty() ? std::make_unique<attn::Model>(c)
                                : std::make_unique<attn::Model>(c, parse(weights, "the weights"));
    const int id = next_id++;
    models[id] = std::move(made);
    return text(Json{{"id", id}, {"config", attn::to_json(c)}, {"example", attn::task_example(c)}});
  });
}

val dispose_js(int id) {
  models.erase(id);
  return val::undefined();
}

// The training losses of `steps` steps, as a Float64Array.
val train_js(int id, int steps) {
  return guarded([&] {
    const std::vector<double> losses = model(id).train(steps);
    val out = val::global("Float64Array").new_(losses.size());
    for (size_t i = 0; i < losses.size(); ++i) out.set(i, losses[i]);
    return out;
  });
}

val step_js(int id) {
  return guarded([&] { return val(model(id).step()); });
}

// `ablated`: as predict's.
val evaluate_js(int id, std::string ablated) {
  return guarded([&] {
    const attn::Model& m = model(id);
    return text(evaluation(m, ablated_heads(m.config().model, ablated)));
  });
}

val head_scores_js(int id) {
  return guarded([&] { return text(scores(model(id))); });
}

val weights_js(int id) {
  return guarded([&] { return text(model(id).weights()); });
}

val head_problem_js(int id, int layer, int head, std::string tokens) {
  return guarded([&] {
    const attn::Model& m = model(id);
    return text(m.head_problem(layer, head, tokens_of(m, tokens)));
  });
}

// { loss, logits, gradients } of tokens and targets ("" for targets: the next token).
val gradients_js(int id, std::string tokens, std::string targets) {
  return guarded([&] {
    const attn::Model& m = model(id);
    const Json t = parse(tokens, "tokens");
    const Json g = targets.empty() ? Json() : parse(targets, "targets");
    const attn::Batch b = attn::batch_from_json(m.config().model, t, targets.empty() ? nullptr : &g);
    double loss = 0;
    Json gradients = m.gradients(b, &loss);
    const attn::Model::Output out = m.forward(b);
    const bool batch = t.is_array() && !t.empty() && t[0].is_array();
    return text(
        Json{{"loss", loss}, {"logits", logits_json(out.logits, b, batch)}, {"gradients", std::move(gradients)}});
  });
}

// One sequence: { tokens, logits, predictions (the argmax at each position), attention: [layer][head] }.
// `ablated`: JSON list of [layer, head] pairs to switch off.
val predict_js(int id, std::string tokens, std::string ablated) {
  return guarded([&] {
    const attn::Model& m = model(id);
    const attn::ModelConfig& c = m.config().model;
    const std::vector<int> list = tokens_of(m, tokens);
    Json t = Json::array();
    for (int x : list) t.push_back(x);
    const attn::Batch b = attn::batch_from_json(c, t, nullptr);
    const std::vector<bool> off = ablated_heads(c, ablated);
    const attn::Model::Output out = m.forward(b, off);
    Json predictions = Json::array();
    for (Eigen::Index r = 0; r < out.logits.rows(); ++r) {
      Eigen::Index best = 0;
      out.logits.row(r).maxCoeff(&best);
      predictions.push_back(best);
    }
    Json attention = Json::array();
    for (const auto& layer : m.attention_weights(list)) {
      Json heads = Json::array();
      for (const attn::Matrix& a : layer) heads.push_back(attn::matrix_json(a));
      attention.push_back(heads);
    }
    return text(Json{{"tokens", t},
                     {"logits", attn::matrix_json(out.logits)},
                     {"predictions", predictions},
                     {"attention", attention}});
  });
}

// The tasks and presets, for the CLI's --help and the page's pickers.
val catalogue_js() {
  return guarded([&] {
    Json tasks = Json::array(), presets = Json::array();
    for (const attn::TaskInfo& t : attn::task_catalogue())
      tasks.push_back({{"name", t.name}, {"description", t.description}});
    for (const attn::Preset& p : attn::presets()) {
      const attn::TrainConfig c = attn::train_config_from_json(p.config);
      presets.push_back({{"name", p.name},
                         {"description", p.description},
                         {"question", p.question},
                         {"reveal", p.reveal},
                         {"config", attn::to_json(c)},
                         {"example", attn::task_example(c)}});
    }
    return text(Json{{"tasks", tasks}, {"presets", presets}});
  });
}

}  // namespace

EMSCRIPTEN_BINDINGS(attention_model) {
  emscripten::function("_modelCreate", &create_js);
  emscripten::function("_modelDispose", &dispose_js);
  emscripten::function("_modelTrain", &train_js);
  emscripten::function("_modelStep", &step_js);
  emscripten::function("_modelEvaluate", &evaluate_js);
  emscripten::function("_modelHeadScores", &head_scores_js);
  emscripten::function("_modelWeights", &weights_js);
  emscripten::function("_modelHeadProblem", &head_problem_js);
  emscripten::function("_modelGradients", &gradients_js);
  emscripten::function("_modelPredict", &predict_js);
  emscripten::function("_modelCatalogue", &catalogue_js);
}
