// Configurations of a model and of a training run, read from JSON and written back with every
// default resolved, and the presets. Every message names the key and what was expected.
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "model.h"

namespace attn {
namespace {

// Upper bounds that keep a browser tab's memory safe (a model of these sizes trains slowly,
// but it trains).
constexpr int kMaxVocab = 65536, kMaxContext = 1024, kMaxWidth = 2048, kMaxLayers = 32, kMaxBatch = 4096;
constexpr int kMaxSteps = 100000000;

std::string shown(const Json& value) {
  std::string text = value.dump();
  return text.size() > 40 ? text.substr(0, 37) + "..." : text;
}

/// "<key>: expected <what error.<id> says>, got <got>": the key, the value and the id's own parameters.
[[noreturn]] void fail(const std::string& key, const char* id, const Json& got, ErrorParams params = {}) {
  params.insert(params.begin(), {{"key", key}, {"got", shown(got)}});
  throw input_error(ErrorPlace(key), id, std::move(params));
}

/// An object's keys must be among `known`.
void known_keys(const Json& object, const std::string& where, const std::vector<std::string>& known) {
  if (!object.is_object()) fail(where, "config-expected-object", object);
  for (const auto& item : object.items()) {
    bool ok = false;
    for (const std::string& k : known) ok = ok || k == item.key();
    if (ok) continue;
    std::string list;
    for (const std::string& k : known) list += (list.empty() ? "" : ", ") + k;
    throw input_error(ErrorPlace(where), "config-unknown-key", {{"key", where}, {"name", item.key()}, {"keys", list}});
  }
}

const Json* find(const Json& object, const std::string& key) {
  const auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

int whole(const Json& object, const std::string& where, const std::string& key, int fallback, int low, int high) {
  const Json* value = find(object, key);
  if (value == nullptr) return fallback;
  const std::string name = where + "." + key;
  const ErrorParams range = {{"low", std::to_string(low)}, {"high", std::to_string(high)}};
  if (!value->is_number()) fail(name, "config-expected-whole", *value, range);
  const double v = value->get<double>();
  if (!(std::floor(v) == v) || v < low || v > high) fail(name, "config-expected-whole", *value, range);
  return static_cast<int>(v);
}

double number(const Json& object, const std::string& where, const std::string& key, double fallback, double low,
              double high, bool low_open, const char* expected) {
  const Json* value = find(object, key);
  if (value == nullptr) return fallback;
  const std::string name = where + "." + key;
  // expected: which words error.config-expected-number says (its select).
  if (!value->is_number()) fail(name, "config-expected-number", *value, {{"kind", expected}});
  const double v = value->get<double>();
  if (!std::isfinite(v) || v < low || (low_open && v == low) || v > high)
    fail(name, "config-expected-number", *value, {{"kind", expected}});
  return v;
}

bool boolean(const Json& object, const std::string& where, const std::string& key, bool fallback) {
  const Json* value = find(object, key);
  if (value == nullptr) return fallback;
  if (!value->is_boolean()) fail(where + "." + key, "config-expected-boolean", *value);
  return value->get<bool>();
}

/// One of `names` (the enum's values in order); returns its index.
int code(const Json& object, const std::string& where, const std::string& key, int fallback,
         const std::vector<std::string>& names) {
  const Json* value = find(object, key);
  if (value == nullptr) return fallback;
  std::string list;
  for (const std::string& n : names) list += (list.empty() ? "\"" : ", \"") + n + "\"";
  if (value->is_string()) {
    for (size_t i = 0; i < names.size(); ++i) {
      if (names[i] == value->get<std::string>()) return static_cast<int>(i);
    }
  }
  fail(where + "." + key, "config-expected-one-of", *value, {{"names", list}});
}

const std::vector<std::string> kPositions = {"learned", "sinusoidal", "rope", "none"};
const std::vector<std::string> kActivations = {"relu", "gelu"};
const std::vector<std::string> kNorms = {"none", "layernorm", "rmsnorm"};
const std::vector<std::string> kPrecisions = {"float64", "float32"};  // Precision's order
const std::vector<std::string> kSchedules = {"constant", "cosine"};

}  // namespace

ModelConfig model_config_from_json(const Json& json, const std::string& where) {
  known_keys(json, where,
             {"vocab", "context", "d_model", "layers", "heads", "d_head", "kv_heads", "positions", "mlp", "activation",
              "norm", "bias", "tied", "precision"});
  ModelConfig m;
  for (const char* required : {"vocab", "context", "d_model"}) {
    if (find(json, required) == nullptr) {
      throw input_error(ErrorPlace(where + "." + required), "config-missing-whole", {{"key", where + "." + required}});
    }
  }
  m.vocab = whole(json, where, "vocab", 0, 2, kMaxVocab);
  m.context = whole(json, where, "context", 0, 1, kMaxContext);
  m.d_model = whole(json, where, "d_model", 0, 1, kMaxWidth);
  m.layers = whole(json, where, "layers", 1, 1, kMaxLayers);
  m.heads = whole(json, where, "heads", 1, 1, kMaxWidth);
  if (find(json, "d_head") == nullptr && m.d_model % m.heads != 0) {
    throw input_error(
        ErrorPlace(where + ".heads", where + ".d_model"), "config-heads-divide",
        {{"key", where + ".heads"}, {"heads", std::to_string(m.heads)}, {"d_model", std::to_string(m.d_model)}});
  }
  m.d_head = whole(json, where, "d_head", m.d_model / m.heads, 1, kMaxWidth);
  m.kv_heads = whole(json, where, "kv_heads", m.heads, 1, m.heads);
  if (m.heads % m.kv_heads != 0) {
    throw input_error(
        ErrorPlace(where + ".kv_heads", where + ".heads"), "config-kv-heads-divide",
        {{"key", where + ".kv_heads"}, {"kv_heads", std::to_string(m.kv_heads)}, {"heads", std::to_string(m.heads)}});
  }
  m.positions = static_cast<ModelConfig::Positions>(code(json, where, "positions", 0, kPositions));
  m.mlp = whole(json, where, "mlp", 0, 0, 4 * kMaxWidth);
  m.activation = static_cast<ModelConfig::Activation>(code(json, where, "activation", 1, kActivations));
  m.norm = static_cast<ModelConfig::Norm>(code(json, where, "norm", 0, kNorms));
  m.bias = boolean(json, where, "bias", false);
  m.tied = boolean(json, where, "tied", false);
  m.precision = static_cast<Precision>(code(json, where, "precision", 1, kPrecisions));
  if (m.positions == ModelConfig::Positions::Sinusoidal && m.d_model % 2 != 0) {
    throw input_error(ErrorPlace(where + ".d_model", where + ".positions"), "config-sinusoidal-odd",
                      {{"key", where + ".d_model"}, {"d_model", std::to_string(m.d_model)}});
  }
  if (m.positions == ModelConfig::Positions::Rope && m.d_head % 2 != 0) {
    throw input_error(ErrorPlace(where + ".d_head", where + ".positions"), "config-rope-odd",
                      {{"key", where + ".d_head"}, {"d_head", std::to_string(m.d_head)}});
  }
  return m;
}

Json to_json(const ModelConfig& m) {
  return Json{{"vocab", m.vocab},
              {"context", m.context},
              {"d_model", m.d_model},
              {"layers", m.layers},
              {"heads", m.heads},
              {"d_head", m.d_head},
              {"kv_heads", m.kv_heads},
              {"positions", kPositions[static_cast<size_t>(m.positions)]},
              {"mlp", m.mlp},
              {"activation", kActivations[static_cast<size_t>(m.activation)]},
              {"norm", kNorms[static_cast<size_t>(m.norm)]},
              {"bias", m.bias},
              {"tied", m.tied},
              {"precision", kPrecisions[static_cast<size_t>(m.precision)]}};
}

namespace {

TaskConfig task_from_json(const Json& json) {
  TaskConfig task;
  const Json* name = &json;
  if (json.is_object()) {
    known_keys(json, "task", {"name", "text", "tokens", "targets"});
    name = find(json, "name");
    if (name == nullptr) throw input_error(ErrorPlace("task.name"), "config-task-name-missing");
  }
  std::string list;
  bool known = false;
  for (const TaskInfo& info : task_catalogue()) {
    list += (list.empty() ? "" : ", ") + info.name;
    known = known || (name->is_string() && name->get<std::string>() == info.name);
  }
  if (!known) {
    const std::string key = json.is_object() ? "task.name" : "task";
    throw input_error(ErrorPlace(key), "config-unknown-task", {{"key", key}, {"got", shown(*name)}, {"tasks", list}});
  }
  task.name = name->get<std::string>();
  const bool text = task.name == "text", custom = task.name == "custom";
  if (json.is_object()) {
    for (const char* key : {"text", "tokens", "targets"}) {
      const bool belongs = (text && std::string(key) == "text") || (custom && std::string(key) != "text");
      if (find(json, key) != nullptr && !belongs) {
        throw input_error(ErrorPlace(std::string("task.") + key), "config-task-takes-no",
                          {{"key", std::string("task.") + key}, {"task", task.name}, {"name", key}});
      }
    }
  }
  if (text) {
    const Json* value = json.is_object() ? find(json, "text") : nullptr;
    if (value == nullptr || !value->is_string()) {
      throw input_error(ErrorPlace("task.text"), "config-text-missing",
                        {{"example", R"({ "name": "text", "text": "..." })"}});
    }
    task.text = value->get<std::string>();
    const size_t distinct = text_alphabet(task.text).size();
    if (distinct < 2) {
      throw input_error(ErrorPlace("task.text"), "config-text-alphabet", {{"count", std::to_string(distinct)}});
    }
  }
  return task;
}

}  // namespace

TrainConfig train_config_from_json(const Json& json) {
  known_keys(json, "configuration", {"model", "task", "optimizer", "steps", "batch", "seed", "eval_every"});
  TrainConfig c;
  const Json* task = find(json, "task");
  if (task != nullptr) c.task = task_from_json(*task);
  const Json* model = find(json, "model");
  if (model == nullptr) throw input_error(ErrorPlace("model"), "config-model-missing");
  Json model_json = *model;
  // The text task's vocabulary is its alphabet unless the model says more.
  const size_t alphabet = c.task.name == "text" ? text_alphabet(c.task.text).size() : 0;
  if (alphabet > 0 && model_json.is_object() && find(model_json, "vocab") == nullptr) {
    model_json["vocab"] = static_cast<int>(alphabet);
  }
  c.model = model_config_from_json(model_json, "model");
  if (alphabet > static_cast<size_t>(c.model.vocab)) {
    throw input_error(ErrorPlace("model.vocab", "task.text"), "config-vocab-text",
                      {{"count", std::to_string(alphabet)}, {"vocab", std::to_string(c.model.vocab)}});
  }
  c.steps = whole(json, "configuration", "steps", 0, 0, kMaxSteps);
  c.batch = whole(json, "configuration", "batch", 16, 1, kMaxBatch);
  c.eval_every = whole(json, "configuration", "eval_every", 100, 0, kMaxSteps);
  const Json* seed = find(json, "seed");
  if (seed != nullptr) {
    const double s = seed->is_number() ? seed->get<double>() : -1;
    if (!(s >= 0 && s <= 4294967295.0 && std::floor(s) == s))
      fail("seed", "config-expected-whole", *seed, {{"low", "0"}, {"high", "4294967295"}});
    c.seed = static_cast<std::uint32_t>(s);
  }
  if (const Json* opt = find(json, "optimizer")) {
    known_keys(*opt, "optimizer",
               {"lr", "beta1", "beta2", "eps", "weight_decay", "warmup", "schedule", "min_lr", "total_steps", "clip"});
    OptimizerConfig& o = c.optimizer;
    o.lr = number(*opt, "optimizer", "lr", o.lr, 0, 1e3, true, "lr");
    o.beta1 = number(*opt, "optimizer", "beta1", o.beta1, 0, 0.999999, false, "unit");
    o.beta2 = number(*opt, "optimizer", "beta2", o.beta2, 0, 0.999999999, false, "unit");
    o.eps = number(*opt, "optimizer", "eps", o.eps, 0, 1, true, "eps");
    o.weight_decay = number(*opt, "optimizer", "weight_decay", o.weight_decay, 0, 1e3, false, "nonnegative");
    o.warmup = whole(*opt, "optimizer", "warmup", 0, 0, kMaxSteps);
    o.schedule = static_cast<OptimizerConfig::Schedule>(code(*opt, "optimizer", "schedule", 0, kSchedules));
    o.min_lr = number(*opt, "optimizer", "min_lr", 0, 0, o.lr, false, "min_lr");
    o.total_steps = whole(*opt, "optimizer", "total_steps", 0, 0, kMaxSteps);
    o.clip = number(*opt, "optimizer", "clip", o.clip, 0, 1e9, false, "clip");
  }
  if (c.optimizer.total_steps == 0) c.optimizer.total_steps = c.steps;

  // What each task needs of the model.
  const ModelConfig& m = c.model;
  // error.<id> says what the task needs of key; params: the numbers it names.
  const auto need = [&](bool ok, const std::string& key, const char* id, ErrorParams params) {
    params.insert(params.begin(), {{"key", key}, {"task", c.task.name}});
    if (!ok) throw input_error(ErrorPlace(key), id, std::move(params));
  };
  const std::string& t = c.task.name;
  if (t == "induction") {
    const int n_max = (m.context - 1) / 2;
    need(n_max >= 4, "model.context", "config-induction-context", {{"context", std::to_string(m.context)}});
    need(m.vocab - 1 >= n_max, "model.vocab", "config-induction-vocab",
         {{"least", std::to_string(n_max + 1)}, {"n", std::to_string(n_max)}, {"vocab", std::to_string(m.vocab)}});
  } else if (t == "previous" || t == "reverse" || t == "sort") {
    need(m.context >= 2, "model.context", "config-task-context", {{"context", std::to_string(m.context)}});
  } else if (t == "recall") {
    need(m.context >= 3, "model.context", "config-recall-context", {{"context", std::to_string(m.context)}});
    need(m.vocab >= 5, "model.vocab", "config-recall-vocab", {{"vocab", std::to_string(m.vocab)}});
  } else if (t == "text") {
    // Unreachable (task_from_json asks for 2 distinct characters): a programmer's check.
    if (c.task.text.size() < 2) throw std::logic_error("task.text: the task text needs at least 2 characters");
  }
  if (t == "custom") {
    const Json* tokens = task->is_object() ? find(*task, "tokens") : nullptr;
    if (tokens == nullptr) throw input_error(ErrorPlace("task.tokens"), "config-custom-tokens");
    const Json* targets = find(*task, "targets");
    try {
      c.task.custom = batch_from_json(m, *tokens, targets);
    } catch (const InputError& e) {
      // They are the task's tokens and targets: the same error at task.<key>.
      Message said = e.message();
      for (auto& [name, value] : said.params)
        if (name == "key") value = "task." + value;
      const ErrorPlace& at = e.place();
      throw InputError(ErrorPlace("task." + at.field, at.other, at.row, at.column), said);
    }
  }
  return c;
}

Json to_json(const TrainConfig& c) {
  Json task = c.task.name;
  if (c.task.name.empty()) task = nullptr;
  if (c.task.name == "text") task = Json{{"name", "text"}, {"text", c.task.text}};
  if (c.task.name == "custom") {
    Json tokens = Json::array(), targets = Json::array();
    for (int b = 0; b < c.task.custom.sequences; ++b) {
      Json row = Json::array(), trow = Json::array();
      for (int t = 0; t < c.task.custom.length; ++t) {
        row.push_back(c.task.custom.token(b, t));
        trow.push_back(c.task.custom.target(b, t));
      }
      tokens.push_back(row);
      targets.push_back(trow);
    }
    task = Json{{"name", "custom"}, {"tokens", tokens}, {"targets", targets}};
  }
  const OptimizerConfig& o = c.optimizer;
  return Json{{"model", to_json(c.model)},
              {"task", task},
              {"optimizer",
               {{"lr", o.lr},
                {"beta1", o.beta1},
                {"beta2", o.beta2},
                {"eps", o.eps},
                {"weight_decay", o.weight_decay},
                {"warmup", o.warmup},
                {"schedule", kSchedules[static_cast<size_t>(o.schedule)]},
                {"min_lr", o.min_lr},
                {"total_steps", o.total_steps},
                {"clip", o.clip}}},
              {"steps", c.steps},
              {"batch", c.batch},
              {"seed", c.seed},
              {"eval_every", c.eval_every}};
}

Batch batch_from_json(const ModelConfig& model, const Json& tokens, const Json* targets) {
  Batch b;
  if (!tokens.is_array() || tokens.empty()) fail("tokens", "config-expected-tokens", tokens);
  const bool nested = tokens[0].is_array();
  const Json rows = nested ? tokens : Json::array({tokens});
  b.sequences = static_cast<int>(rows.size());
  if (b.sequences > kMaxBatch) {
    throw input_error(ErrorPlace("tokens"), "config-batch-size",
                      {{"key", "tokens"}, {"count", std::to_string(b.sequences)}, {"most", std::to_string(kMaxBatch)}});
  }
  for (int s = 0; s < b.sequences; ++s) {
    const Json& row = rows[static_cast<size_t>(s)];
    const std::string where = nested ? "tokens[" + std::to_string(s) + "]" : "tokens";
    if (!row.is_array() || row.empty()) fail(where, "config-expected-sequence", row);
    if (s == 0) b.length = static_cast<int>(row.size());
    if (static_cast<int>(row.size()) != b.length) {
      throw input_error(ErrorPlace(where, "tokens[0]"), "config-batch-length",
                        {{"key", where}, {"count", std::to_string(row.size())}, {"length", std::to_string(b.length)}});
    }
    if (b.length > model.context) {
      throw input_error(
          ErrorPlace(where, "model.context"), "config-batch-context",
          {{"key", where}, {"length", std::to_string(b.length)}, {"context", std::to_string(model.context)}});
    }
    for (int t = 0; t < b.length; ++t) {
      const Json& v = row[static_cast<size_t>(t)];
      const double x = v.is_number() ? v.get<double>() : -1;
      if (!(x >= 0 && x < model.vocab && std::floor(x) == x)) {
        fail(where + "[" + std::to_string(t) + "]", "config-expected-token", v,
             {{"last", std::to_string(model.vocab - 1)}, {"vocab", std::to_string(model.vocab)}});
      }
      b.tokens.push_back(static_cast<int>(x));
    }
  }
  if (targets == nullptr) {
    // The next token, none after the last.
    b.targets.assign(b.tokens.size(), -1);
    for (int s = 0; s < b.sequences; ++s) {
      for (int t = 0; t + 1 < b.length; ++t) b.targets[static_cast<size_t>(s * b.length + t)] = b.token(s, t + 1);
    }
    return b;
  }
  const Json trows = nested ? *targets : Json::array({*targets});
  const bool same_shape =
      targets->is_array() && trows.size() == rows.size() && (nested ? targets->size() == rows.size() : true);
  if (!same_shape) {
    fail("targets", "config-expected-targets", *targets,
         {{"count", std::to_string(nested ? b.sequences : b.length)}, {"shape", nested ? "sequences" : "targets"}});
  }
  for (int s = 0; s < b.sequences; ++s) {
    const Json& row = trows[static_cast<size_t>(s)];
    const std::string where = nested ? "targets[" + std::to_string(s) + "]" : "targets";
    if (!row.is_array() || static_cast<int>(row.size()) != b.length) {
      fail(where, "config-expected-target-row", row, {{"count", std::to_string(b.length)}});
    }
    for (int t = 0; t < b.length; ++t) {
      const Json& v = row[static_cast<size_t>(t)];
      const double x = v.is_number() ? v.get<double>() : -2;
      if (!(x >= -1 && x < model.vocab && std::floor(x) == x)) {
        fail(where + "[" + std::to_string(t) + "]", "config-expected-target", v,
             {{"last", std::to_string(model.vocab - 1)}});
      }
      b.targets.push_back(static_cast<int>(x));
    }
  }
  return b;
}

}  // namespace attn

namespace attn {

const std::vector<Preset>& presets() {
  // Each preset's defaults make its lesson happen from seed 0 within its steps (tests/cpp/test_model.cpp
  // checks induction's; BENCHMARKS.md times it).
  static const std::vector<Preset> list = {
      {"induction",
       "2 attention-only layers learn to copy a repeated sequence: a previous-token head in layer 1 "
       "feeds an induction head in layer 2",
       "Which layer will hold the head that attends to the token after the earlier copy of the current token (an "
       "induction head)?",
       Json{{"choose", "layer"}, {"score", "induction"}, {"threshold", 0.4}},
       Json::parse(R"({"model": {"vocab": 32, "context": 32, "d_model": 32, "layers": 2, "heads": 2},
                       "task": "induction", "optimizer": {"lr": 0.003}, "steps": 1500, "batch": 16,
                       "seed": 0, "eval_every": 50})")},
      {"induction-1-layer",
       "the induction preset with one layer: it cannot form an induction head, and its accuracy on the "
       "second copy stays low (the classic contrast)",
       "With one layer only, will the accuracy on the second copy pass 60% within 1,500 steps?",
       Json{{"choose", "yes_no"}, {"accuracy", 0.6}},
       Json::parse(R"({"model": {"vocab": 32, "context": 32, "d_model": 32, "layers": 1, "heads": 2},
                       "task": "induction", "optimizer": {"lr": 0.003}, "steps": 1500, "batch": 16,
                       "seed": 0, "eval_every": 50})")},
      {"previous", "one layer learns to output the token before: a previous-token head",
       "Which head will put most of its weight one token back?",
       Json{{"choose", "head"}, {"score", "previous_token"}, {"threshold", 0.5}},
       Json::parse(R"({"model": {"vocab": 16, "context": 16, "d_model": 32, "layers": 1, "heads": 2},
                       "task": "previous", "optimizer": {"lr": 0.003}, "steps": 400, "batch": 16,
                       "seed": 0, "eval_every": 20})")},
      {"reverse", "2 layers learn to repeat a sequence backwards: attention by position",
       "Will two layers reverse every probe sequence (accuracy above 95%) within 600 steps?",
       Json{{"choose", "yes_no"}, {"accuracy", 0.95}},
       Json::parse(R"({"model": {"vocab": 12, "context": 16, "d_model": 48, "layers": 2, "heads": 2, "mlp": 96,
                                 "norm": "layernorm"},
                       "task": "reverse", "optimizer": {"lr": 0.003}, "steps": 600, "batch": 32,
                       "seed": 0, "eval_every": 50})")},
      {"sort", "2 layers with an MLP learn to sort: each output looks for the smallest token not yet written",
       "Will two layers sort the probe sequences (accuracy above 95%) within 1,200 steps?",
       Json{{"choose", "yes_no"}, {"accuracy", 0.95}},
       Json::parse(R"({"model": {"vocab": 12, "context": 16, "d_model": 48, "layers": 2, "heads": 2, "mlp": 96,
                                 "norm": "layernorm"},
                       "task": "sort", "optimizer": {"lr": 0.003}, "steps": 1200, "batch": 32,
                       "seed": 0, "eval_every": 50})")},
      {"recall", "associative recall: find the key asked for among the pairs and answer the value after it",
       "Will two attention-only layers answer the key's value (accuracy above 95%) within 1,000 steps?",
       Json{{"choose", "yes_no"}, {"accuracy", 0.95}},
       Json::parse(R"({"model": {"vocab": 21, "context": 17, "d_model": 48, "layers": 2, "heads": 2},
                       "task": "recall", "optimizer": {"lr": 0.003}, "steps": 1000, "batch": 32,
                       "seed": 0, "eval_every": 50})")},
      {"text", "a character model of a short text: heads that look back one or two characters, and at spaces",
       "Will two small layers predict this text's next character 90% of the time within 1,000 steps?",
       Json{{"choose", "yes_no"}, {"accuracy", 0.9}},
       Json::parse(R"({"model": {"context": 24, "d_model": 48, "layers": 2, "heads": 3, "mlp": 96,
                                 "norm": "layernorm"},
                       "task": {"name": "text", "text": "the cat sat on the mat. the dog sat on the log. a cat and a dog met on the mat, and the cat ran to the log."},
                       "optimizer": {"lr": 0.003}, "steps": 1000, "batch": 16, "seed": 0, "eval_every": 50})")},
  };
  return list;
}

const Preset& find_preset(const std::string& name) {
  std::string names;
  for (const Preset& p : presets()) {
    if (p.name == name) return p;
    names += (names.empty() ? "" : ", ") + p.name;
  }
  throw input_error(ErrorPlace("--preset"), "config-unknown-preset", {{"name", name}, {"presets", names}});
}

}  // namespace attn
