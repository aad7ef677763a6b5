// A tiny decoder-only transformer that trains: the forward pass, the loss, the backward pass,
// AdamW, the tasks it learns and the detectors that say what its heads do. Every number of a
// trained head can be opened in the explorer: head_problem() hands a head's inputs to run().
//
// Configurations and weights are JSON (docs/model.md is the contract); the core's attention
// conventions hold (rows layout, Q = x·W_Q + b_Q, heads split along columns, GQA groups, RoPE's
// "half" style, causal, scale 1/√d_head).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attention.h"
#include "numpy_random.h"

namespace attn {

/// JSON objects keep their keys in the order written (configurations print as they read).
using Json = nlohmann::ordered_json;

/// What a model is (the issue's `model` object, defaults resolved).
struct ModelConfig {
  enum class Positions { Learned, Sinusoidal, Rope, None };
  enum class Activation { Relu, Gelu };
  enum class Norm { None, LayerNorm, RmsNorm };
  int vocab = 0, context = 0, d_model = 0, layers = 1, heads = 1, d_head = 0, kv_heads = 0, mlp = 0;
  Positions positions = Positions::Learned;
  Activation activation = Activation::Gelu;
  Norm norm = Norm::None;
  bool bias = false, tied = false;
  Precision precision = Precision::Float32;
};

/// Token sequences of one length and their targets (-1: no loss there), row-major B×T.
struct Batch {
  int sequences = 0, length = 0;
  std::vector<int> tokens, targets;
  int token(int b, int t) const { return tokens[static_cast<size_t>(b * length + t)]; }
  int target(int b, int t) const { return targets[static_cast<size_t>(b * length + t)]; }
};

/// AdamW with warm-up, a constant or cosine schedule and clipping by the global norm.
struct OptimizerConfig {
  enum class Schedule { Constant, Cosine };
  double lr = 1e-3, beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weight_decay = 0.0;
  int warmup = 0;  ///< steps of linear warm-up from lr/warmup to lr
  Schedule schedule = Schedule::Constant;
  double min_lr = 0;    ///< cosine: the rate it ends at
  int total_steps = 0;  ///< cosine: the step it reaches min_lr (0: the configuration's `steps`)
  double clip = 1.0;    ///< largest global gradient norm (0: no clipping)
};

/// What the model learns: a task generated from the seed, a text, or given sequences.
struct TaskConfig {
  /// previous, reverse, sort, recall, induction, text, custom; empty: none (a model that is only
  /// evaluated, as the `model` command's; training it is an error)
  std::string name;
  std::string text;  ///< text: the characters it learns
  Batch custom;      ///< custom: the sequences and targets
};

/// A whole training run (the CLI's configuration file).
struct TrainConfig {
  ModelConfig model;
  TaskConfig task;
  OptimizerConfig optimizer;
  int steps = 0, batch = 16, eval_every = 100;
  std::uint32_t seed = 0;
};

/// Reads a configuration ({model, task, optimizer, steps, batch, seed, eval_every}); every
/// missing key takes its default. Throws InputError naming the key and what was expected.
TrainConfig train_config_from_json(const Json& json);
/// The configuration with every default written out: a file train_config_from_json accepts.
Json to_json(const TrainConfig& config);
/// Reads a `model` object alone (the `model` command's input).
ModelConfig model_config_from_json(const Json& json, const std::string& where = "model");
Json to_json(const ModelConfig& model);

/// The tasks, each with its one-line description (for --help, the page's picker).
struct TaskInfo {
  std::string name, description;
};
const std::vector<TaskInfo>& task_catalogue();

/// A preset: a configuration whose defaults make its lesson happen, with the question a learner
/// answers before training and how the run reveals the answer: `reveal` is {"choose": "layer" |
/// "head", "score": a detector, "threshold"} (the first head whose score passes it) or {"choose":
/// "yes_no", "accuracy": a threshold} (passed by the last step or not).
struct Preset {
  std::string name, description, question;
  Json reveal, config;
};
const std::vector<Preset>& presets();
/// The preset's configuration; throws InputError naming the presets there are.
const Preset& find_preset(const std::string& name);

/// One head's detector scores on the probe batches (layers and heads numbered from 1).
struct HeadScore {
  int layer = 1, head = 1;
  double previous_token = 0, induction = 0, duplicate_token = 0, first_token = 0;
  double ablated_loss = 0;  ///< the probe loss with this head's output zeroed
};

/// Loss and accuracy on the task's probe batch.
struct Evaluation {
  double loss = 0, accuracy = 0;
  int predictions = 0;  ///< how many positions the accuracy counts
};

/// Thrown when training meets a loss or gradient that is not finite: says at which step and why.
class TrainingError : public InputError {
 public:
  using InputError::InputError;
};

/// A model and its optimiser state. Copyable it is not: it owns its weights.
class Model {
 public:
  /// A fresh model for `config`, initialised from config.seed (docs/model.md, "Initialisation").
  explicit Model(const TrainConfig& config);
  /// A model with the given weights (shapes checked, every key named on a mismatch).
  Model(const TrainConfig& config, const Json& weights);
  ~Model();
  Model(Model&&) noexcept;
  Model& operator=(Model&&) noexcept;

  const TrainConfig& config() const;
  int step() const;  ///< optimiser steps taken so far

  /// `steps` optimiser steps on batches of the task; the training loss of each.
  std::vector<double> train(int steps);
  /// Loss and accuracy on the task's probe batch (fixed, the same at every step); `ablated` as
  /// for forward() switches heads off.
  Evaluation evaluate(const std::vector<bool>* ablated = nullptr) const;
  /// Every layer × head's detector scores and ablation.
  std::vector<HeadScore> head_scores() const;

  /// The forward pass: logits (B·T rows × vocab) and the loss of a batch (NaN when no target).
  struct Output {
    Matrix logits;
    double loss = 0;
  };
  Output forward(const Batch& batch) const;
  /// The same with heads switched off: ablated[(layer-1)·heads + head-1] zeroes that head's output.
  Output forward(const Batch& batch, const std::vector<bool>& ablated) const;
  /// The loss's gradient with respect to every weight, shaped like weights() (and the loss).
  Json gradients(const Batch& batch, double* loss = nullptr) const;
  /// Every layer × head's attention weights for one sequence: [layer][head] = T×T.
  std::vector<std::vector<Matrix>> attention_weights(const std::vector<int>& tokens) const;

  /// The weights, under the contract's keys.
  Json weights() const;
  /// A problem for the explorer: layer's normed input X for `tokens`, the head's W_Q, W_K, W_V,
  /// W_O slices (and biases), the options the model uses. run() of it reproduces the head's
  /// numbers (its weights, and its output·W_O slice: the head's share of the residual stream).
  Json head_problem(int layer, int head, const std::vector<int>& tokens) const;
  /// The model's own numbers for that head on `tokens`: Q, K, V (rotated with RoPE), weights,
  /// head output and its share of the residual (head_output·W_O slice), for tests of the bridge.
  struct HeadNumbers {
    Matrix X, Q, K, V, weights, head_output, contribution;
  };
  HeadNumbers head_numbers(int layer, int head, const std::vector<int>& tokens) const;

  /// The task's batch the next train step would draw (for tests and the page's probe).
  Batch probe_batch() const;
  Batch detector_batch() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

/// A batch from JSON: one sequence (a list) or several (lists of equal length). `targets` may be
/// absent (the next token, -1 at the end). Checked against the model's vocab and context.
Batch batch_from_json(const ModelConfig& model, const Json& tokens, const Json* targets);

/// A matrix as JSON: a list of rows, or (vector) one list of its first row.
Json matrix_json(const Matrix& m, bool vector = false);

/// A task's batch of `count` sequences from `random` (tasks.cpp).
Batch task_batch(const TrainConfig& config, RandomState& random, int count);
/// The task's probe batch: fixed for a configuration (induction: every sequence n = ⌊(context−1)/2⌋).
Batch task_probe(const TrainConfig& config);
/// Repeated random tokens (BOS, r₁…rₙ, r₁…rₙ) for the detectors; n = min(⌊(context−1)/2⌋, vocab−1).
Batch detector_probe(const ModelConfig& model, int& n);
/// Which positions a task's accuracy counts (1) or not (0), B×T like the batch.
std::vector<char> accuracy_positions(const TrainConfig& config, const Batch& batch);
/// The characters of a text task (code points, sorted): token i is alphabet[i].
std::vector<std::uint32_t> text_alphabet(const std::string& text);
/// A task's example: one sequence and its targets, with the description.
Json task_example(const TrainConfig& config);

}  // namespace attn
