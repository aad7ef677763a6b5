// The tasks a model learns, generated from numpy's stream (RandomState) so a seed gives the same
// batches on every machine. docs/model.md describes each; the words live in task_catalogue().
#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include "model.h"

namespace attn {
namespace {

/// The fixed seed of the probe batches: the same probe for every configuration's seed, so two
/// runs are measured on the same sequences.
constexpr std::uint32_t kProbeSeed = 1234;
/// Sequences in the task's probe batch and in the detectors' batch.
constexpr int kProbeSequences = 32;
constexpr int kDetectorSequences = 16;

int induction_n_max(const ModelConfig& m) { return (m.context - 1) / 2; }

/// `n` distinct tokens from [low, high), in the order drawn: a partial Fisher–Yates shuffle whose
/// i-th swap partner is randint(i, size).
std::vector<int> distinct(RandomState& random, int n, int low, int high) {
  std::vector<int> pool(static_cast<size_t>(high - low));
  std::iota(pool.begin(), pool.end(), low);
  const int size = high - low;
  for (int i = 0; i < n; ++i) {
    const auto j = static_cast<int>(random.randint(i, size));
    std::swap(pool[static_cast<size_t>(i)], pool[static_cast<size_t>(j)]);
  }
  pool.resize(static_cast<size_t>(n));
  return pool;
}

/// Decodes UTF-8 into code points (a malformed byte stands for itself).
std::vector<std::uint32_t> code_points(const std::string& text) {
  std::vector<std::uint32_t> out;
  for (size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    const int extra = c >= 0xF0 ? 3 : c >= 0xE0 ? 2 : c >= 0xC0 ? 1 : 0;
    std::uint32_t cp = extra == 0 ? c : extra == 1 ? c & 0x1F : extra == 2 ? c & 0x0F : c & 0x07;
    bool ok = i + static_cast<size_t>(extra) < text.size() + (extra == 0 ? 1 : 0);
    for (int k = 1; ok && k <= extra; ++k) {
      const auto next = static_cast<unsigned char>(text[i + static_cast<size_t>(k)]);
      if ((next & 0xC0) != 0x80) ok = false;
      cp = (cp << 6) | (next & 0x3F);
    }
    if (!ok) {
      out.push_back(c);
      ++i;
      continue;
    }
    out.push_back(cp);
    i += static_cast<size_t>(extra) + 1;
  }
  return out;
}

Batch empty_batch(int sequences, int length) {
  Batch b;
  b.sequences = sequences;
  b.length = length;
  b.tokens.assign(static_cast<size_t>(sequences * length), 0);
  b.targets.assign(static_cast<size_t>(sequences * length), -1);
  return b;
}

/// BOS (0), r₁…rₙ, r₁…rₙ padded to 1 + 2·n_max; targets the next token, -1 at the end.
void induction_row(Batch& b, int row, const std::vector<int>& r) {
  const int n = static_cast<int>(r.size());
  int* tokens = &b.tokens[static_cast<size_t>(row * b.length)];
  int* targets = &b.targets[static_cast<size_t>(row * b.length)];
  tokens[0] = 0;
  for (int k = 0; k < n; ++k) tokens[1 + k] = tokens[1 + n + k] = r[static_cast<size_t>(k)];
  for (int t = 0; t < 2 * n; ++t) targets[t] = tokens[t + 1];
}

Batch induction(const ModelConfig& m, RandomState& random, int count, bool full_length) {
  const int n_max = std::min(induction_n_max(m), m.vocab - 1);
  Batch b = empty_batch(count, 1 + 2 * n_max);
  for (int row = 0; row < count; ++row) {
    const int n = full_length ? n_max : static_cast<int>(random.randint(4, n_max + 1));
    induction_row(b, row, distinct(random, n, 1, m.vocab));
  }
  return b;
}

Batch previous(const ModelConfig& m, RandomState& random, int count) {
  Batch b = empty_batch(count, m.context);
  for (int row = 0; row < count; ++row) {
    for (int t = 0; t < m.context; ++t) {
      b.tokens[static_cast<size_t>(row * m.context + t)] = static_cast<int>(random.randint(0, m.vocab));
      if (t > 0)
        b.targets[static_cast<size_t>(row * m.context + t)] = b.tokens[static_cast<size_t>(row * m.context + t - 1)];
    }
  }
  return b;
}

/// x₁…xₙ, the separator 0, then the answer (reversed or sorted); targets on the answer only.
Batch reorder(const ModelConfig& m, RandomState& random, int count, bool sort) {
  const int n = m.context / 2;
  Batch b = empty_batch(count, 2 * n);
  for (int row = 0; row < count; ++row) {
    std::vector<int> x(static_cast<size_t>(n));
    for (int& v : x) v = static_cast<int>(random.randint(1, m.vocab));
    std::vector<int> answer = x;
    if (sort) {
      std::sort(answer.begin(), answer.end());
    } else {
      std::reverse(answer.begin(), answer.end());
    }
    std::vector<int> whole = x;
    whole.push_back(0);
    whole.insert(whole.end(), answer.begin(), answer.end());  // 2n + 1 tokens
    for (int t = 0; t < 2 * n; ++t) {
      b.tokens[static_cast<size_t>(row * 2 * n + t)] = whole[static_cast<size_t>(t)];
      if (t >= n) b.targets[static_cast<size_t>(row * 2 * n + t)] = whole[static_cast<size_t>(t + 1)];
    }
  }
  return b;
}

/// k₁ v₁ … kₙ vₙ q: distinct keys from 1…K, values from K+1…vocab−1, the query one of the keys;
/// the target at the query is its value.
Batch recall(const ModelConfig& m, RandomState& random, int count) {
  const int keys = (m.vocab - 1) / 2;
  const int n = std::min((m.context - 1) / 2, keys);
  Batch b = empty_batch(count, 2 * n + 1);
  for (int row = 0; row < count; ++row) {
    const std::vector<int> k = distinct(random, n, 1, keys + 1);
    int* tokens = &b.tokens[static_cast<size_t>(row * b.length)];
    for (int i = 0; i < n; ++i) {
      tokens[2 * i] = k[static_cast<size_t>(i)];
      tokens[2 * i + 1] = static_cast<int>(random.randint(keys + 1, m.vocab));
    }
    const auto asked = static_cast<int>(random.randint(0, n));
    tokens[2 * n] = k[static_cast<size_t>(asked)];
    b.targets[static_cast<size_t>(row * b.length + 2 * n)] = tokens[2 * asked + 1];
  }
  return b;
}

/// Windows of the text: `length` characters and the `length` that follow each by one.
Batch text(const ModelConfig& m, const std::string& source, RandomState& random, int count) {
  const std::vector<std::uint32_t> alphabet = text_alphabet(source);
  const std::vector<std::uint32_t> points = code_points(source);
  std::vector<int> ids(points.size());
  for (size_t i = 0; i < points.size(); ++i) {
    ids[i] = static_cast<int>(std::lower_bound(alphabet.begin(), alphabet.end(), points[i]) - alphabet.begin());
  }
  const int length = std::min(m.context, static_cast<int>(ids.size()) - 1);
  Batch b = empty_batch(count, length);
  const int starts = static_cast<int>(ids.size()) - length;  // windows of length + 1
  for (int row = 0; row < count; ++row) {
    const auto start = static_cast<size_t>(random.randint(0, starts));
    for (int t = 0; t < length; ++t) {
      b.tokens[static_cast<size_t>(row * length + t)] = ids[start + static_cast<size_t>(t)];
      b.targets[static_cast<size_t>(row * length + t)] = ids[start + static_cast<size_t>(t) + 1];
    }
  }
  return b;
}

/// The given sequences: all of them when count reaches their number, else `count` distinct ones.
Batch custom(const Batch& given, RandomState& random, int count) {
  if (count >= given.sequences) return given;
  Batch b = empty_batch(count, given.length);
  const std::vector<int> rows = distinct(random, count, 0, given.sequences);
  for (int row = 0; row < count; ++row) {
    const auto from = static_cast<size_t>(rows[static_cast<size_t>(row)] * given.length);
    std::copy_n(given.tokens.begin() + static_cast<std::ptrdiff_t>(from), given.length,
                b.tokens.begin() + row * given.length);
    std::copy_n(given.targets.begin() + static_cast<std::ptrdiff_t>(from), given.length,
                b.targets.begin() + row * given.length);
  }
  return b;
}

}  // namespace

const std::vector<TaskInfo>& task_catalogue() {
  static const std::vector<TaskInfo> tasks = {
      {"previous", "predict the previous token: one head learns to look one position back"},
      {"reverse", "after the separator 0, repeat the sequence backwards"},
      {"sort", "after the separator 0, repeat the sequence in increasing order"},
      {"recall", "associative recall: key value pairs, then a key: answer its value"},
      {"induction", "random tokens repeated once: predict the second copy from the first (induction heads)"},
      {"text", "predict the next character of a text you give"},
      {"custom", "your own token sequences and targets"},
  };
  return tasks;
}

std::vector<std::uint32_t> text_alphabet(const std::string& source) {
  std::vector<std::uint32_t> points = code_points(source);
  std::sort(points.begin(), points.end());
  points.erase(std::unique(points.begin(), points.end()), points.end());
  return points;
}

Batch task_batch(const TrainConfig& config, RandomState& random, int count) {
  const ModelConfig& m = config.model;
  const std::string& name = config.task.name;
  if (name.empty()) throw input_error(ErrorPlace("task"), "model-task-missing");
  if (name == "induction") return induction(m, random, count, false);
  if (name == "previous") return previous(m, random, count);
  if (name == "reverse") return reorder(m, random, count, false);
  if (name == "sort") return reorder(m, random, count, true);
  if (name == "recall") return recall(m, random, count);
  if (name == "text") return text(m, config.task.text, random, count);
  return custom(config.task.custom, random, count);
}

Batch task_probe(const TrainConfig& config) {
  RandomState random(kProbeSeed);
  if (config.task.name == "induction") return induction(config.model, random, kProbeSequences, true);
  if (config.task.name == "custom") return config.task.custom;
  return task_batch(config, random, kProbeSequences);
}

Batch detector_probe(const ModelConfig& model, int& n) {
  RandomState random(kProbeSeed);
  n = std::min(induction_n_max(model), model.vocab - 1);
  if (n < 1) return Batch{};
  return induction(model, random, kDetectorSequences, true);
}

std::vector<char> accuracy_positions(const TrainConfig& config, const Batch& batch) {
  std::vector<char> counted(batch.targets.size(), 0);
  const int n = (batch.length - 1) / 2;  // induction's probe: 1 + 2n tokens
  for (int b = 0; b < batch.sequences; ++b) {
    for (int t = 0; t < batch.length; ++t) {
      const bool has_target = batch.target(b, t) >= 0;
      // Induction counts the second copy after its first token: positions n+1 … 2n−1 predict r₂…rₙ.
      const bool counts = config.task.name == "induction" ? has_target && t >= n + 1 && t <= 2 * n - 1 : has_target;
      counted[static_cast<size_t>(b * batch.length + t)] = counts ? 1 : 0;
    }
  }
  return counted;
}

Json task_example(const TrainConfig& config) {
  if (config.task.name.empty()) return nullptr;
  // The probe batch's first sequence: the one the page shows predictions and heads on.
  const Batch b = task_probe(config);
  Json tokens = Json::array(), targets = Json::array();
  for (int t = 0; t < b.length; ++t) {
    tokens.push_back(b.token(0, t));
    targets.push_back(b.target(0, t));
  }
  std::string description;
  for (const TaskInfo& info : task_catalogue()) {
    if (info.name == config.task.name) description = info.description;
  }
  Json out = {{"name", config.task.name}, {"description", description}, {"tokens", tokens}, {"targets", targets}};
  if (config.task.name == "text") {
    Json alphabet = Json::array();
    for (std::uint32_t cp : text_alphabet(config.task.text)) {
      std::string ch;  // back to UTF-8
      if (cp < 0x80) {
        ch += static_cast<char>(cp);
      } else if (cp < 0x800) {
        ch += static_cast<char>(0xC0 | (cp >> 6));
        ch += static_cast<char>(0x80 | (cp & 0x3F));
      } else if (cp < 0x10000) {
        ch += static_cast<char>(0xE0 | (cp >> 12));
        ch += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        ch += static_cast<char>(0x80 | (cp & 0x3F));
      } else {
        ch += static_cast<char>(0xF0 | (cp >> 18));
        ch += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
        ch += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        ch += static_cast<char>(0x80 | (cp & 0x3F));
      }
      alphabet.push_back(ch);
    }
    out["alphabet"] = alphabet;
  }
  return out;
}

}  // namespace attn
