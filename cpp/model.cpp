// The model's forward pass, loss, backward pass and AdamW, in float32 or float64.
//
// Training reads the batch as B·T rows: projections, norms and the MLP are one product over all
// rows; attention is per sequence and head, as the core's run() computes it for one head (the
// same scale, causal mask, softmax and RoPE tables), so head_problem() hands a head to run() and
// gets the model's numbers back (tests/cpp/test_model.cpp). The backward pass is the core's
// gradients.cpp chain rule for one head (dA, the softmax's Jacobian, the scale, RoPE turned
// back, dQ, dK, dV), written over the batch here because training calls it thousands of times
// and the explorer's gradients() builds a described trace of every step; the finite-difference
// tests keep both right.
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "model.h"
#include "normalized.h"

namespace attn {

namespace {

template <typename S>
using Row = Eigen::Matrix<S, 1, Eigen::Dynamic>;
template <typename S>
using Col = Eigen::Matrix<S, Eigen::Dynamic, 1>;

template <typename S>
struct NormW {
  Mat<S> g, b;
};
template <typename S>
struct LayerW {
  NormW<S> norm_attn, norm_mlp;
  Mat<S> W_Q, b_Q, W_K, b_K, W_V, b_V, W_O, b_O, W_in, b_in, W_out, b_out;
};
/// Every weight (vectors as 1×n); a tensor the configuration does not use is empty.
template <typename S>
struct Weights {
  Mat<S> E, P;
  std::vector<LayerW<S>> layers;
  NormW<S> norm_final;
  Mat<S> U, b_U;
};

/// What visit() tells about a tensor: its JSON path, its shape, whether weight decay applies
/// (matrices) and how it starts (drawn, ones or zeros).
struct TensorInfo {
  std::string path;   ///< "layers/0/W_Q"
  std::string name;   ///< "layers[0].W_Q", as messages say it
  std::string shape;  ///< "d_model×heads·d_head"
  Eigen::Index rows, cols;
  bool matrix;
  enum class Start { Drawn, Ones, Zeros } start;
};

/// Calls f(info, tensor) for each tensor the configuration uses, in the canonical order (the
/// order of initialisation): E, P, then per layer norm_attn, W_Q, b_Q, W_K, b_K, W_V, b_V, W_O,
/// b_O, norm_mlp, W_in, b_in, W_out, b_out; then norm_final, U, b_U.
template <typename S, typename W, typename F>
void visit(const ModelConfig& c, W& w, F f) {
  using Start = TensorInfo::Start;
  const Eigen::Index d = c.d_model, q = c.heads * c.d_head, kv = c.kv_heads * c.d_head;
  auto go = [&](const std::string& path, const std::string& name, const std::string& shape, auto& tensor,
                Eigen::Index rows, Eigen::Index cols, bool matrix, Start start) {
    f(TensorInfo{path, name, shape, rows, cols, matrix, start}, tensor);
  };
  auto norm = [&](const std::string& path, const std::string& name, auto& n) {
    go(path + "/g", name + ".g", "d_model", n.g, 1, d, false, Start::Ones);
    if (c.norm == ModelConfig::Norm::LayerNorm) go(path + "/b", name + ".b", "d_model", n.b, 1, d, false, Start::Zeros);
  };
  go("E", "E", "vocab×d_model", w.E, c.vocab, d, true, Start::Drawn);
  if (c.positions == ModelConfig::Positions::Learned)
    go("P", "P", "context×d_model", w.P, c.context, d, true, Start::Drawn);
  for (int l = 0; l < c.layers; ++l) {
    auto& L = w.layers[static_cast<size_t>(l)];
    const std::string p = "layers/" + std::to_string(l) + "/", n = "layers[" + std::to_string(l) + "].";
    if (c.norm != ModelConfig::Norm::None) norm(p + "norm_attn", n + "norm_attn", L.norm_attn);
    go(p + "W_Q", n + "W_Q", "d_model×heads·d_head", L.W_Q, d, q, true, Start::Drawn);
    if (c.bias) go(p + "b_Q", n + "b_Q", "heads·d_head", L.b_Q, 1, q, false, Start::Zeros);
    go(p + "W_K", n + "W_K", "d_model×kv_heads·d_head", L.W_K, d, kv, true, Start::Drawn);
    if (c.bias) go(p + "b_K", n + "b_K", "kv_heads·d_head", L.b_K, 1, kv, false, Start::Zeros);
    go(p + "W_V", n + "W_V", "d_model×kv_heads·d_head", L.W_V, d, kv, true, Start::Drawn);
    if (c.bias) go(p + "b_V", n + "b_V", "kv_heads·d_head", L.b_V, 1, kv, false, Start::Zeros);
    go(p + "W_O", n + "W_O", "heads·d_head×d_model", L.W_O, q, d, true, Start::Drawn);
    if (c.bias) go(p + "b_O", n + "b_O", "d_model", L.b_O, 1, d, false, Start::Zeros);
    if (c.mlp > 0) {
      if (c.norm != ModelConfig::Norm::None) norm(p + "norm_mlp", n + "norm_mlp", L.norm_mlp);
      go(p + "W_in", n + "W_in", "d_model×mlp", L.W_in, d, c.mlp, true, Start::Drawn);
      if (c.bias) go(p + "b_in", n + "b_in", "mlp", L.b_in, 1, c.mlp, false, Start::Zeros);
      go(p + "W_out", n + "W_out", "mlp×d_model", L.W_out, c.mlp, d, true, Start::Drawn);
      if (c.bias) go(p + "b_out", n + "b_out", "d_model", L.b_out, 1, d, false, Start::Zeros);
    }
  }
  if (c.norm != ModelConfig::Norm::None) norm("norm_final", "norm_final", w.norm_final);
  if (!c.tied) go("U", "U", "d_model×vocab", w.U, d, c.vocab, true, Start::Drawn);
  if (c.bias) go("b_U", "b_U", "vocab", w.b_U, 1, c.vocab, false, Start::Zeros);
}

template <typename S>
Weights<S> zeros_like(const ModelConfig& c) {
  Weights<S> w;
  w.layers.resize(static_cast<size_t>(c.layers));
  visit<S>(c, w, [](const TensorInfo& info, Mat<S>& t) { t = Mat<S>::Zero(info.rows, info.cols); });
  return w;
}

/// A weight matrix starts as N(0, 1/fan_in): fan_in is its rows (what x·W sums over), and d_model
/// for the embeddings E and P (so a token's row has about unit length).
double init_std(const ModelConfig& c, const TensorInfo& info) {
  const bool embedding = info.path == "E" || info.path == "P";
  return 1.0 / std::sqrt(static_cast<double>(embedding ? c.d_model : info.rows));
}

template <typename S>
Json weights_json(const ModelConfig& c, const Weights<S>& w) {
  Json out = Json::object();
  if (c.layers > 0) out["layers"] = Json::array();
  visit<S>(c, w, [&](const TensorInfo& info, const Mat<S>& t) {
    out[Json::json_pointer("/" + info.path)] = matrix_json(t.template cast<double>(), !info.matrix);
  });
  return out;
}

/// A weights file's error (error.model-weights-*): the tensor's key as place and parameter, its
/// shape (rows, cols, `matrix`: "yes" or "no" for a vector, and its name such as "d_model×d_head").
InputError weights_error(const TensorInfo& info, const std::string& key, const char* id, ErrorParams params = {},
                         Eigen::Index row = 0, Eigen::Index column = 0) {
  params.insert(params.end(), {{"key", key},
                               {"matrix", info.matrix ? "yes" : "no"},
                               {"rows", std::to_string(info.rows)},
                               {"cols", std::to_string(info.cols)},
                               {"shape", info.shape}});
  return input_error(ErrorPlace(key, {}, row, column), id, std::move(params));
}
/// What a weights file holds instead of a list: its JSON, cut short.
std::string shown_json(const Json& v, size_t max) { return v.dump().substr(0, max); }

/// Reads weights JSON, every tensor checked against its shape.
template <typename S>
Weights<S> weights_from_json(const ModelConfig& c, const Json& json) {
  if (!json.is_object())
    throw input_error(ErrorPlace("weights"), "model-weights-object", {{"got", shown_json(json, 40)}});
  Weights<S> w;
  w.layers.resize(static_cast<size_t>(c.layers));
  // Keys that the configuration does not use must be absent (docs/model.md): collect what is used.
  std::vector<std::string> used;
  visit<S>(c, w, [&](const TensorInfo& info, Mat<S>& t) {
    used.push_back(info.path);
    const std::string where = "weights." + info.name;
    const Json::json_pointer pointer("/" + info.path);
    if (!json.contains(pointer)) throw weights_error(info, where, "model-weights-missing");
    const Json& v = json[pointer];
    t.resize(info.rows, info.cols);
    auto number = [&](const Json& x, Eigen::Index i, Eigen::Index j) {
      if (!x.is_number() || !std::isfinite(x.get<double>())) {
        throw weights_error(
            info, where, "model-weights-not-finite",
            {{"row", std::to_string(i + 1)}, {"column", std::to_string(j + 1)}, {"value", shown_json(x, 30)}},
            info.matrix ? i + 1 : j + 1, info.matrix ? j + 1 : 0);
      }
      return static_cast<S>(x.get<double>());
    };
    if (!info.matrix) {
      if (!v.is_array() || static_cast<Eigen::Index>(v.size()) != info.cols) {
        throw weights_error(info, where, "model-weights-size",
                            {{"got", v.is_array() ? "list" : "other"},
                             {"count", std::to_string(v.is_array() ? v.size() : 0)},
                             {"value", shown_json(v, 30)}});
      }
      for (Eigen::Index j = 0; j < info.cols; ++j) t(0, j) = number(v[static_cast<size_t>(j)], 0, j);
      return;
    }
    const bool rows_ok = v.is_array() && static_cast<Eigen::Index>(v.size()) == info.rows;
    if (!rows_ok) {
      throw weights_error(info, where, "model-weights-size",
                          {{"got", v.is_array() ? "list" : "other"},
                           {"count", std::to_string(v.is_array() ? v.size() : 0)},
                           {"value", shown_json(v, 30)}});
    }
    for (Eigen::Index i = 0; i < info.rows; ++i) {
      const Json& row = v[static_cast<size_t>(i)];
      if (!row.is_array() || static_cast<Eigen::Index>(row.size()) != info.cols) {
        throw weights_error(info, where, "model-weights-row",
                            {{"row", std::to_string(i + 1)},
                             {"got", row.is_array() ? "list" : "other"},
                             {"count", std::to_string(row.is_array() ? row.size() : 0)}},
                            i + 1);
      }
      for (Eigen::Index j = 0; j < info.cols; ++j) t(i, j) = number(row[static_cast<size_t>(j)], i, j);
    }
  });
  // Every key must be one the configuration uses (norm objects are looked into too).
  std::function<void(const Json&, const std::string&, const std::string&)> check_extra =
      [&](const Json& object, const std::string& prefix, const std::string& shown) {
        for (const auto& item : object.items()) {
          const std::string path = prefix + item.key();
          if (path == "layers") continue;
          bool known = false, whole = false;
          for (const std::string& u : used) {
            whole = whole || u == path;
            known = known || u == path || u.rfind(path + "/", 0) == 0;
          }
          if (!known) {
            const std::string key = "weights." + shown + item.key();
            throw input_error(ErrorPlace(key), "model-weights-unknown", {{"key", key}});
          }
          if (!whole && item.value().is_object()) check_extra(item.value(), path + "/", shown + item.key() + ".");
        }
      };
  check_extra(json, "", "");
  const Json& layers = json.at("layers");
  if (!layers.is_array() || static_cast<int>(layers.size()) != c.layers) {
    throw input_error(ErrorPlace("weights.layers", "model.layers"), "model-weights-layers",
                      {{"layers", std::to_string(c.layers)}});
  }
  for (int l = 0; l < c.layers; ++l) {
    check_extra(layers[static_cast<size_t>(l)], "layers/" + std::to_string(l) + "/",
                "layers[" + std::to_string(l) + "].");
  }
  return w;
}

// ---- the pieces of the forward pass and their derivatives -------------------------------------

/// A norm's input made unit (xhat) and the factor per row (1/σ or 1/rms), for the backward pass.
template <typename S>
struct NormCache {
  Mat<S> xhat;
  Col<S> inv;
};

template <typename S>
Mat<S> norm_forward(ModelConfig::Norm kind, const NormW<S>& w, const Mat<S>& x, NormCache<S>& cache) {
  const S eps = static_cast<S>(1e-5);
  const S d = static_cast<S>(x.cols());
  if (kind == ModelConfig::Norm::LayerNorm) {
    const Col<S> mean = x.rowwise().sum() / d;
    const Mat<S> centred = x.colwise() - mean;
    const Col<S> var = centred.array().square().rowwise().sum() / d;  // population variance
    cache.inv = (var.array() + eps).rsqrt();
    cache.xhat = centred.array().colwise() * cache.inv.array();
    return (cache.xhat.array().rowwise() * w.g.row(0).array()).rowwise() + w.b.row(0).array();
  }
  const Col<S> mean_square = x.array().square().rowwise().sum() / d;
  cache.inv = (mean_square.array() + eps).rsqrt();
  cache.xhat = x.array().colwise() * cache.inv.array();
  return cache.xhat.array().rowwise() * w.g.row(0).array();
}

template <typename S>
Mat<S> norm_backward(ModelConfig::Norm kind, const NormW<S>& w, const NormCache<S>& cache, const Mat<S>& dy,
                     NormW<S>& grad) {
  const S d = static_cast<S>(dy.cols());
  grad.g += (dy.array() * cache.xhat.array()).colwise().sum().matrix();
  const Mat<S> dxhat = dy.array().rowwise() * w.g.row(0).array();
  const Col<S> mean_dot = (dxhat.array() * cache.xhat.array()).rowwise().sum() / d;
  Mat<S> inner = dxhat - (cache.xhat.array().colwise() * mean_dot.array()).matrix();
  if (kind == ModelConfig::Norm::LayerNorm) {
    grad.b += dy.colwise().sum();
    const Col<S> mean = dxhat.rowwise().sum() / d;
    inner = inner.colwise() - mean;
  }
  return inner.array().colwise() * cache.inv.array();
}

/// GELU, the tanh form: 0.5·x·(1 + tanh(c·(x + k·x³))), c = √(2/π), k = 0.044715; its derivative
/// 0.5·(1 + t) + 0.5·x·(1 − t²)·c·(1 + 3k·x²) with t the same tanh.
constexpr double kGeluC = 0.7978845608028654, kGeluK = 0.044715;

/// Softmax of each row of causal scores (row i sees keys 0…i), as the core computes it
/// (attention.cpp softmax_rows): e^(x − max)/Σ in float64, e^(x − logsumexp) in float32.
template <typename S>
void causal_softmax(Mat<S>& s) {
  for (Eigen::Index i = 0; i < s.rows(); ++i) {
    const Eigen::Index seen = i + 1;
    auto row = s.row(i);
    const S max = row.head(seen).maxCoeff();
    const Row<S> x = row.head(seen);
    S sum = 0;
    for (Eigen::Index j = 0; j < seen; ++j) {
      row[j] = std::exp(x[j] - max);
      sum += row[j];
    }
    if constexpr (sizeof(S) == 8) {
      row.head(seen) /= sum;
    } else {
      const S log_sum = std::log(sum), lse = log_sum + max;
      const bool scipy_form = std::abs(max) <= S(16);
      for (Eigen::Index j = 0; j < seen; ++j)
        row[j] = scipy_form ? std::exp(x[j] - lse) : std::exp((x[j] - max) - log_sum);
    }
    row.tail(s.cols() - seen).setZero();
  }
}

}  // namespace

// ---- the model --------------------------------------------------------------------------------

struct Model::Impl {
  virtual ~Impl() = default;
  TrainConfig config;
  int steps_taken = 0;
  virtual std::vector<double> train(int steps) = 0;
  virtual Output forward(const Batch& batch, const std::vector<bool>* ablated) const = 0;
  virtual Json gradients(const Batch& batch, double* loss) const = 0;
  /// Every sequence's weights: [sequence][layer][head], T×T each.
  virtual std::vector<std::vector<std::vector<Matrix>>> attention(const Batch& batch) const = 0;
  virtual Json weights() const = 0;
  virtual HeadNumbers head_numbers(int layer, int head, const Batch& batch) const = 0;
  /// A weight by its path ("layers/0/W_Q"); empty when the model has none.
  virtual Matrix tensor(const std::string& path) const = 0;
};

namespace {

template <typename S>
struct ForwardCache {
  int B = 0, T = 0;
  std::vector<int> tokens;
  struct Layer {
    Mat<S> h_in, a, Q, K, V, concat, h_mid, m, z, t, u;  // t: GELU's tanh
    NormCache<S> na, nm;
    std::vector<Mat<S>> A;  ///< weights, index b·heads + h
  };
  std::vector<Layer> layers;
  Mat<S> h_last, hf, logits;
  NormCache<S> nf;
};

template <typename S>
class ModelT final : public Model::Impl {
 public:
  ModelT(const TrainConfig& c, const Json* given) : random_(c.seed + 1u) {
    config = c;
    const ModelConfig& m = c.model;
    if (given != nullptr) {
      w_ = weights_from_json<S>(m, *given);
    } else {
      // Drawn in visit()'s order from RandomState(seed): randn(rows, cols)·std per matrix.
      RandomState init(c.seed);
      w_ = zeros_like<S>(m);
      visit<S>(m, w_, [&](const TensorInfo& info, Mat<S>& t) {
        if (info.start == TensorInfo::Start::Ones) t.setOnes();
        if (info.start != TensorInfo::Start::Drawn) return;
        t = (init.randn(info.rows, info.cols) * init_std(m, info)).template cast<S>();
      });
    }
    adam_m_ = zeros_like<S>(m);
    adam_v_ = zeros_like<S>(m);
    tables();
  }

  std::vector<double> train(int steps) override {
    std::vector<double> losses;
    losses.reserve(static_cast<size_t>(std::max(steps, 0)));
    const OptimizerConfig& o = config.optimizer;
    for (int i = 0; i < steps; ++i) {
      const Batch batch = task_batch(config, random_, config.batch);
      ForwardCache<S> cache;
      const double loss = run_forward(batch, cache, nullptr);
      const int step = steps_taken + 1;
      if (!std::isfinite(loss)) {
        throw TrainingError(
            ErrorPlace("optimizer.lr"),
            Message("error.model-training-loss",
                    {{"step", std::to_string(step)},
                     {"loss", std::isnan(loss) ? std::string("NaN") : format_number(loss)},
                     {"precision", config.model.precision == Precision::Float32 ? "float32" : "float64"},
                     {"lr", format_number(o.lr)}}));
      }
      Weights<S> grad = zeros_like<S>(config.model);
      run_backward(batch, cache, grad);
      double norm2 = 0;
      visit<S>(config.model, grad,
               [&](const TensorInfo&, Mat<S>& g) { norm2 += g.template cast<double>().squaredNorm(); });
      const double norm = std::sqrt(norm2);
      if (!std::isfinite(norm)) {
        throw TrainingError(
            ErrorPlace("optimizer.lr"),
            Message("error.model-training-gradient",
                    {{"step", std::to_string(step)}, {"norm", format_number(norm)}, {"lr", format_number(o.lr)}}));
      }
      // Clipping by the global norm as PyTorch's clip_grad_norm_ does: factor clip/(norm + 1e-6).
      const S clip_factor = o.clip > 0 && norm > o.clip ? static_cast<S>(o.clip / (norm + 1e-6)) : S(1);
      adamw(grad, clip_factor, rate(steps_taken), step);
      steps_taken = step;
      losses.push_back(loss);
    }
    return losses;
  }

  Model::Output forward(const Batch& batch, const std::vector<bool>* ablated) const override {
    ForwardCache<S> cache;
    Model::Output out;
    out.loss = run_forward(batch, cache, ablated);
    out.logits = cache.logits.template cast<double>();
    return out;
  }

  Json gradients(const Batch& batch, double* loss) const override {
    ForwardCache<S> cache;
    const double l = run_forward(batch, cache, nullptr);
    if (loss != nullptr) *loss = l;
    Weights<S> grad = zeros_like<S>(config.model);
    run_backward(batch, cache, grad);
    return weights_json<S>(config.model, grad);
  }

  std::vector<std::vector<std::vector<Matrix>>> attention(const Batch& batch) const override {
    ForwardCache<S> cache;
    run_forward(batch, cache, nullptr);
    std::vector<std::vector<std::vector<Matrix>>> out(static_cast<size_t>(batch.sequences));
    for (int b = 0; b < batch.sequences; ++b) {
      for (const auto& layer : cache.layers) {
        std::vector<Matrix> heads;
        for (int h = 0; h < config.model.heads; ++h) {
          heads.push_back(layer.A[static_cast<size_t>(b * config.model.heads + h)].template cast<double>());
        }
        out[static_cast<size_t>(b)].push_back(std::move(heads));
      }
    }
    return out;
  }

  Json weights() const override { return weights_json<S>(config.model, w_); }

  Model::HeadNumbers head_numbers(int layer, int head, const Batch& batch) const override {
    ForwardCache<S> cache;
    run_forward(batch, cache, nullptr);
    const ModelConfig& m = config.model;
    const auto& L = cache.layers[static_cast<size_t>(layer)];
    const Eigen::Index dh = m.d_head;
    const int g = head / (m.heads / m.kv_heads);
    Model::HeadNumbers out;
    out.X = L.a.template cast<double>();
    out.Q = L.Q.middleCols(head * dh, dh).template cast<double>();
    out.K = L.K.middleCols(g * dh, dh).template cast<double>();
    out.V = L.V.middleCols(g * dh, dh).template cast<double>();
    out.weights = L.A[static_cast<size_t>(head)].template cast<double>();
    const Mat<S> o = L.concat.middleCols(head * dh, dh);
    out.head_output = o.template cast<double>();
    const Mat<S> share = o * w_.layers[static_cast<size_t>(layer)].W_O.middleRows(head * dh, dh);
    out.contribution = share.template cast<double>();
    return out;
  }

  Matrix tensor(const std::string& path) const override {
    Matrix out;
    visit<S>(config.model, w_, [&](const TensorInfo& info, const Mat<S>& t) {
      if (info.path == path) out = t.template cast<double>();
    });
    return out;
  }

 private:
  Weights<S> w_, adam_m_, adam_v_;
  RandomState random_;          ///< the batches' stream: RandomState(seed + 1), apart from the weights' draws
  Mat<S> positional_;           ///< sinusoidal: context×d_model
  Mat<S> rope_cos_, rope_sin_;  ///< rope: context×(d_head/2), from the core's rope_angle

  void tables() {
    const ModelConfig& m = config.model;
    if (m.positions == ModelConfig::Positions::Sinusoidal) {
      positional_.resize(m.context, m.d_model);
      for (int p = 0; p < m.context; ++p) {
        for (int f = 0; f < m.d_model; ++f) {
          const double angle = sinusoid_angle(p, f, m.d_model);
          positional_(p, f) = static_cast<S>(f % 2 == 0 ? std::sin(angle) : std::cos(angle));
        }
      }
    }
    if (m.positions == ModelConfig::Positions::Rope) {
      const Rope rope = model_rope();
      rope_cos_.resize(m.context, m.d_head / 2);
      rope_sin_.resize(m.context, m.d_head / 2);
      for (int p = 0; p < m.context; ++p) {
        for (int i = 0; i < m.d_head / 2; ++i) {
          const RopeAngle turn = rope_angle(rope, p, i);
          rope_cos_(p, i) = static_cast<S>(turn.cos);
          rope_sin_(p, i) = static_cast<S>(turn.sin);
        }
      }
    }
  }

 public:
  Rope model_rope() const {
    Rope rope;
    rope.on = true;
    rope.style = Rope::Style::Half;
    rope.base = 10000;
    rope.dims = config.model.d_head;
    return rope;
  }

 private:
  /// RoPE on every head block of x (rows b·T + t sit at position t); `back` turns the other way.
  void rotate_heads(Mat<S>& x, int T, int blocks, bool back) const {
    const int dh = config.model.d_head, half = dh / 2;
    for (Eigen::Index r = 0; r < x.rows(); ++r) {
      const auto t = static_cast<Eigen::Index>(r % T);
      for (int h = 0; h < blocks; ++h) {
        for (int i = 0; i < half; ++i) {
          const Eigen::Index a = h * dh + i, b = a + half;
          const S cos = rope_cos_(t, i), sin = back ? -rope_sin_(t, i) : rope_sin_(t, i);
          const S xa = x(r, a), xb = x(r, b);
          x(r, a) = xa * cos - xb * sin;
          x(r, b) = xa * sin + xb * cos;
        }
      }
    }
  }

  double rate(int step) const {
    const OptimizerConfig& o = config.optimizer;
    double lr = o.lr;
    if (o.warmup > 0 && step < o.warmup) return lr * (step + 1) / o.warmup;
    if (o.schedule == OptimizerConfig::Schedule::Cosine) {
      const double span = std::max(1, o.total_steps - o.warmup);
      const double progress = std::min(1.0, std::max(0.0, (step - o.warmup) / span));
      lr = o.min_lr + (o.lr - o.min_lr) * 0.5 * (1 + std::cos(3.14159265358979323846 * progress));
    }
    return lr;
  }

  /// AdamW as torch.optim.AdamW: decoupled decay lr·wd·p on matrices, then the bias-corrected step.
  void adamw(Weights<S>& grad, S clip_factor, double lr, int step) {
    const OptimizerConfig& o = config.optimizer;
    const S b1 = static_cast<S>(o.beta1), b2 = static_cast<S>(o.beta2);
    const S correction1 = static_cast<S>(1 - std::pow(o.beta1, step));
    const S sqrt_correction2 = static_cast<S>(std::sqrt(1 - std::pow(o.beta2, step)));
    const S step_size = static_cast<S>(lr) / correction1, eps = static_cast<S>(o.eps);
    const S decay = static_cast<S>(1 - lr * o.weight_decay);
    // Walk the four structures together: visit() gives the same order for each.
    std::vector<Mat<S>*> ps, gs, ms, vs;
    std::vector<bool> matrices;
    visit<S>(config.model, w_, [&](const TensorInfo& info, Mat<S>& t) {
      ps.push_back(&t);
      matrices.push_back(info.matrix);
    });
    visit<S>(config.model, grad, [&](const TensorInfo&, Mat<S>& t) { gs.push_back(&t); });
    visit<S>(config.model, adam_m_, [&](const TensorInfo&, Mat<S>& t) { ms.push_back(&t); });
    visit<S>(config.model, adam_v_, [&](const TensorInfo&, Mat<S>& t) { vs.push_back(&t); });
    for (size_t i = 0; i < ps.size(); ++i) {
      auto p = ps[i]->array();
      auto g = (gs[i]->array() * clip_factor).eval();
      if (matrices[i] && o.weight_decay > 0) p *= decay;
      ms[i]->array() = ms[i]->array() * b1 + g * (S(1) - b1);
      vs[i]->array() = vs[i]->array() * b2 + g.square() * (S(1) - b2);
      p -= step_size * ms[i]->array() / (vs[i]->array().sqrt() / sqrt_correction2 + eps);
    }
  }

  /// The forward pass; returns the loss (the mean over targets ≥ 0; NaN when there is none).
  double run_forward(const Batch& batch, ForwardCache<S>& cache, const std::vector<bool>* ablated) const {
    const ModelConfig& m = config.model;
    const int B = batch.sequences, T = batch.length, N = B * T;
    const int H = m.heads, dh = m.d_head, group = m.heads / m.kv_heads;
    cache.B = B;
    cache.T = T;
    cache.tokens = batch.tokens;
    Mat<S> h(N, m.d_model);
    for (int r = 0; r < N; ++r) {
      h.row(r) = w_.E.row(batch.tokens[static_cast<size_t>(r)]);
      if (m.positions == ModelConfig::Positions::Learned) h.row(r) += w_.P.row(r % T);
      if (m.positions == ModelConfig::Positions::Sinusoidal) h.row(r) += positional_.row(r % T);
    }
    const bool normed = m.norm != ModelConfig::Norm::None;
    const S divisor = std::sqrt(static_cast<S>(dh));  // the core's default scale: divide by √d_k
    cache.layers.resize(static_cast<size_t>(m.layers));
    for (int l = 0; l < m.layers; ++l) {
      const LayerW<S>& W = w_.layers[static_cast<size_t>(l)];
      auto& C = cache.layers[static_cast<size_t>(l)];
      C.h_in = h;
      C.a = normed ? norm_forward(m.norm, W.norm_attn, h, C.na) : h;
      C.Q = C.a * W.W_Q;
      C.K = C.a * W.W_K;
      C.V = C.a * W.W_V;
      if (m.bias) {
        C.Q.rowwise() += W.b_Q.row(0);
        C.K.rowwise() += W.b_K.row(0);
        C.V.rowwise() += W.b_V.row(0);
      }
      if (m.positions == ModelConfig::Positions::Rope) {
        rotate_heads(C.Q, T, H, false);
        rotate_heads(C.K, T, m.kv_heads, false);
      }
      C.concat = Mat<S>::Zero(N, H * dh);
      C.A.assign(static_cast<size_t>(B * H), Mat<S>());
      for (int b = 0; b < B; ++b) {
        for (int hd = 0; hd < H; ++hd) {
          const int g = hd / group;
          Mat<S> s = (C.Q.block(b * T, hd * dh, T, dh) * C.K.block(b * T, g * dh, T, dh).transpose()) / divisor;
          causal_softmax(s);
          if (ablated == nullptr || !(*ablated)[static_cast<size_t>(l * H + hd)]) {
            C.concat.block(b * T, hd * dh, T, dh) = s * C.V.block(b * T, g * dh, T, dh);
          }
          C.A[static_cast<size_t>(b * H + hd)] = std::move(s);
        }
      }
      h += C.concat * W.W_O;
      if (m.bias) h.rowwise() += W.b_O.row(0);
      if (m.mlp > 0) {
        C.h_mid = h;
        C.m = normed ? norm_forward(m.norm, W.norm_mlp, h, C.nm) : h;
        C.z = C.m * W.W_in;
        if (m.bias) C.z.rowwise() += W.b_in.row(0);
        if (m.activation == ModelConfig::Activation::Relu) {
          C.u = C.z.cwiseMax(S(0));
        } else {
          // GELU's tanh form, as whole arrays (Eigen vectorises tanh for float); t is kept for the
          // backward pass.
          const auto z = C.z.array();
          C.t = (S(kGeluC) * (z + S(kGeluK) * z.cube())).tanh().matrix();
          C.u = (S(0.5) * z * (S(1) + C.t.array())).matrix();
        }
        h += C.u * W.W_out;
        if (m.bias) h.rowwise() += W.b_out.row(0);
      }
    }
    cache.h_last = h;
    cache.hf = normed ? norm_forward(m.norm, w_.norm_final, h, cache.nf) : h;
    cache.logits = m.tied ? Mat<S>(cache.hf * w_.E.transpose()) : Mat<S>(cache.hf * w_.U);
    if (m.bias) cache.logits.rowwise() += w_.b_U.row(0);
    // The loss in double: −log softmax(logits)[target], averaged over the targets ≥ 0.
    double total = 0;
    int counted = 0;
    for (int r = 0; r < N; ++r) {
      const int target = batch.targets[static_cast<size_t>(r)];
      if (target < 0) continue;
      const auto row = cache.logits.row(r);
      const double max = static_cast<double>(row.maxCoeff());
      double sum = 0;
      for (Eigen::Index j = 0; j < row.size(); ++j) sum += std::exp(static_cast<double>(row[j]) - max);
      total += max + std::log(sum) - static_cast<double>(row[target]);
      ++counted;
    }
    return counted > 0 ? total / counted : std::numeric_limits<double>::quiet_NaN();
  }

  void run_backward(const Batch& batch, const ForwardCache<S>& cache, Weights<S>& grad) const {
    const ModelConfig& m = config.model;
    const int B = cache.B, T = cache.T, N = B * T;
    const int H = m.heads, dh = m.d_head, group = m.heads / m.kv_heads;
    const bool normed = m.norm != ModelConfig::Norm::None;
    int counted = 0;
    for (int t : batch.targets) counted += t >= 0 ? 1 : 0;
    // dlogits = (softmax − one-hot)/count on rows with a target.
    Mat<S> dlogits = Mat<S>::Zero(N, m.vocab);
    if (counted > 0) {
      const S share = S(1) / static_cast<S>(counted);
      for (int r = 0; r < N; ++r) {
        const int target = batch.targets[static_cast<size_t>(r)];
        if (target < 0) continue;
        const auto row = cache.logits.row(r);
        const S max = row.maxCoeff();
        Row<S> e = (row.array() - max).exp();
        e /= e.sum();
        e[target] -= S(1);
        dlogits.row(r) = e * share;
      }
    }
    Mat<S> dh_f;
    if (m.tied) {
      grad.E += dlogits.transpose() * cache.hf;
      dh_f = dlogits * w_.E;
    } else {
      grad.U += cache.hf.transpose() * dlogits;
      dh_f = dlogits * w_.U.transpose();
    }
    if (m.bias) grad.b_U += dlogits.colwise().sum();
    Mat<S> dx =
        normed ? norm_backward(m.norm, w_.norm_final, cache.nf, dh_f, grad.norm_final) : dh_f;  // d loss / d residual
    const S divisor = std::sqrt(static_cast<S>(dh));
    for (int l = m.layers - 1; l >= 0; --l) {
      const LayerW<S>& W = w_.layers[static_cast<size_t>(l)];
      LayerW<S>& G = grad.layers[static_cast<size_t>(l)];
      const auto& C = cache.layers[static_cast<size_t>(l)];
      if (m.mlp > 0) {
        if (m.bias) G.b_out += dx.colwise().sum();
        G.W_out += C.u.transpose() * dx;
        Mat<S> dz = dx * W.W_out.transpose();
        if (m.activation == ModelConfig::Activation::Relu) {
          dz = dz.cwiseProduct(Mat<S>((C.z.array() > S(0)).template cast<S>()));
        } else {
          const auto z = C.z.array(), t = C.t.array();
          dz.array() *=
              S(0.5) * (S(1) + t) + S(0.5) * z * (S(1) - t.square()) * S(kGeluC) * (S(1) + S(3 * kGeluK) * z.square());
        }
        if (m.bias) G.b_in += dz.colwise().sum();
        G.W_in += C.m.transpose() * dz;
        const Mat<S> dm = dz * W.W_in.transpose();
        dx += normed ? norm_backward(m.norm, W.norm_mlp, C.nm, dm, G.norm_mlp) : dm;
      }
      // The attention block: h_mid = h_in + concat·W_O + b_O.
      if (m.bias) G.b_O += dx.colwise().sum();
      G.W_O += C.concat.transpose() * dx;
      const Mat<S> dconcat = dx * W.W_O.transpose();
      Mat<S> dQ = Mat<S>::Zero(N, H * dh), dK = Mat<S>::Zero(N, m.kv_heads * dh), dV = Mat<S>::Zero(N, m.kv_heads * dh);
      for (int b = 0; b < B; ++b) {
        for (int hd = 0; hd < H; ++hd) {
          const int g = hd / group;
          const Mat<S>& A = C.A[static_cast<size_t>(b * H + hd)];
          const auto dO = dconcat.block(b * T, hd * dh, T, dh);
          const Mat<S> dA = dO * C.V.block(b * T, g * dh, T, dh).transpose();
          dV.block(b * T, g * dh, T, dh) += A.transpose() * dO;
          // The softmax's Jacobian row by row: dS_ij = A_ij (dA_ij − Σ_k A_ik dA_ik); hidden keys
          // have A = 0 and get none. Then the scale.
          const Mat<S> AdA = A.cwiseProduct(dA);
          Mat<S> dS = AdA - (A.array().colwise() * AdA.rowwise().sum().array()).matrix();
          dS /= divisor;
          dQ.block(b * T, hd * dh, T, dh) += dS * C.K.block(b * T, g * dh, T, dh);
          dK.block(b * T, g * dh, T, dh) += dS.transpose() * C.Q.block(b * T, hd * dh, T, dh);
        }
      }
      if (m.positions == ModelConfig::Positions::Rope) {
        rotate_heads(dQ, T, H, true);
        rotate_heads(dK, T, m.kv_heads, true);
      }
      if (m.bias) {
        G.b_Q += dQ.colwise().sum();
        G.b_K += dK.colwise().sum();
        G.b_V += dV.colwise().sum();
      }
      G.W_Q += C.a.transpose() * dQ;
      G.W_K += C.a.transpose() * dK;
      G.W_V += C.a.transpose() * dV;
      const Mat<S> da = dQ * W.W_Q.transpose() + dK * W.W_K.transpose() + dV * W.W_V.transpose();
      dx += normed ? norm_backward(m.norm, W.norm_attn, C.na, da, G.norm_attn) : da;
    }
    for (int r = 0; r < N; ++r) {
      grad.E.row(batch.tokens[static_cast<size_t>(r)]) += dx.row(r);
      if (m.positions == ModelConfig::Positions::Learned) grad.P.row(r % T) += dx.row(r);
    }
  }
};

}  // namespace

// ---- the public face --------------------------------------------------------------------------

namespace {
std::unique_ptr<Model::Impl> make_impl(const TrainConfig& config, const Json* weights) {
  if (config.model.precision == Precision::Float32) return std::make_unique<ModelT<float>>(config, weights);
  return std::make_unique<ModelT<double>>(config, weights);
}

Batch one_sequence(const ModelConfig& m, const std::vector<int>& tokens) {
  Json list = Json::array();
  for (int t : tokens) list.push_back(t);
  return batch_from_json(m, list, nullptr);
}
}  // namespace

Model::Model(const TrainConfig& config) : impl_(make_impl(config, nullptr)) {}
Model::Model(const TrainConfig& config, const Json& weights) : impl_(make_impl(config, &weights)) {}
Model::~Model() = default;
Model::Model(Model&&) noexcept = default;
Model& Model::operator=(Model&&) noexcept = default;

const TrainConfig& Model::config() const { return impl_->config; }
int Model::step() const { return impl_->steps_taken; }

std::vector<double> Model::train(int steps) {
  if (steps < 0) throw input_error(ErrorPlace("steps"), "model-train-steps", {{"steps", std::to_string(steps)}});
  return impl_->train(steps);
}

Model::Output Model::forward(const Batch& batch) const { return impl_->forward(batch, nullptr); }
Model::Output Model::forward(const Batch& batch, const std::vector<bool>& ablated) const {
  return impl_->forward(batch, &ablated);
}
Json Model::gradients(const Batch& batch, double* loss) const { return impl_->gradients(batch, loss); }
Json Model::weights() const { return impl_->weights(); }

Batch Model::probe_batch() const { return task_probe(impl_->config); }
Batch Model::detector_batch() const {
  int n = 0;
  return detector_probe(impl_->config.model, n);
}

std::vector<std::vector<Matrix>> Model::attention_weights(const std::vector<int>& tokens) const {
  return impl_->attention(one_sequence(impl_->config.model, tokens))[0];
}

Evaluation Model::evaluate(const std::vector<bool>* ablated) const {
  const Batch probe = probe_batch();
  const Output out = impl_->forward(probe, ablated);
  const std::vector<char> counted = accuracy_positions(impl_->config, probe);
  Evaluation e;
  e.loss = out.loss;
  int right = 0;
  for (size_t r = 0; r < counted.size(); ++r) {
    if (!counted[r]) continue;
    Eigen::Index best = 0;
    out.logits.row(static_cast<Eigen::Index>(r)).maxCoeff(&best);
    right += best == probe.targets[r] ? 1 : 0;
    ++e.predictions;
  }
  e.accuracy =
      e.predictions > 0 ? static_cast<double>(right) / e.predictions : std::numeric_limits<double>::quiet_NaN();
  return e;
}

std::vector<HeadScore> Model::head_scores() const {
  const ModelConfig& m = impl_->config.model;
  int n = 0;
  const Batch detector = detector_probe(m, n);
  std::vector<HeadScore> scores;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (int l = 0; l < m.layers; ++l) {
    for (int h = 0; h < m.heads; ++h) {
      HeadScore s;
      s.layer = l + 1;
      s.head = h + 1;
      s.previous_token = s.induction = s.duplicate_token = s.first_token = n >= 1 ? 0 : nan;
      scores.push_back(s);
    }
  }
  if (n >= 1) {
    const auto weights = impl_->attention(detector);
    for (int b = 0; b < detector.sequences; ++b) {
      const std::vector<std::vector<Matrix>>& A = weights[static_cast<size_t>(b)];
      for (int l = 0; l < m.layers; ++l) {
        for (int h = 0; h < m.heads; ++h) {
          const Matrix& a = A[static_cast<size_t>(l)][static_cast<size_t>(h)];
          HeadScore& s = scores[static_cast<size_t>(l * m.heads + h)];
          double previous = 0, first = 0, induction = 0, duplicate = 0;
          for (int t = 1; t <= 2 * n; ++t) {
            previous += a(t, t - 1);
            first += a(t, 0);
          }
          for (int k = 1; k <= n; ++k) {
            induction += a(n + k, k + 1);  // the token after the earlier copy of this one
            duplicate += a(n + k, k);      // the earlier copy itself
          }
          s.previous_token += previous / (2 * n) / detector.sequences;
          s.first_token += first / (2 * n) / detector.sequences;
          s.induction += induction / n / detector.sequences;
          s.duplicate_token += duplicate / n / detector.sequences;
        }
      }
    }
  }
  // Ablation on the task's probe; a model without a task on the detectors' repeated tokens.
  const Batch probe = impl_->config.task.name.empty() ? detector : probe_batch();
  std::vector<bool> ablated(static_cast<size_t>(m.layers * m.heads), false);
  for (size_t i = 0; i < ablated.size(); ++i) {
    ablated[i] = true;
    scores[i].ablated_loss = forward(probe, ablated).loss;
    ablated[i] = false;
  }
  return scores;
}

namespace {
void check_head(const ModelConfig& m, int layer, int head) {
  if (layer < 1 || layer > m.layers) {
    throw input_error(ErrorPlace("layer"), "model-layer",
                      {{"layer", std::to_string(layer)}, {"layers", std::to_string(m.layers)}});
  }
  if (head < 1 || head > m.heads) {
    throw input_error(ErrorPlace("head"), "model-head",
                      {{"head", std::to_string(head)}, {"heads", std::to_string(m.heads)}});
  }
}
}  // namespace

Model::HeadNumbers Model::head_numbers(int layer, int head, const std::vector<int>& tokens) const {
  check_head(impl_->config.model, layer, head);
  return impl_->head_numbers(layer - 1, head - 1, one_sequence(impl_->config.model, tokens));
}

Json Model::head_problem(int layer, int head, const std::vector<int>& tokens) const {
  const ModelConfig& m = impl_->config.model;
  check_head(m, layer, head);
  const HeadNumbers numbers = head_numbers(layer, head, tokens);
  const std::string p = "layers/" + std::to_string(layer - 1) + "/";
  const Eigen::Index dh = m.d_head, q = (head - 1) * dh, kv = (head - 1) / (m.heads / m.kv_heads) * dh;
  auto columns = [&](const char* name, Eigen::Index first, bool vector) {
    return matrix_json(impl_->tensor(p + name).middleCols(first, dh), vector);
  };
  Json problem = {{"X", matrix_json(numbers.X, false)},
                  {"W_Q", columns("W_Q", q, false)},
                  {"W_K", columns("W_K", kv, false)},
                  {"W_V", columns("W_V", kv, false)},
                  {"W_O", matrix_json(impl_->tensor(p + "W_O").middleRows(q, dh), false)}};
  if (m.bias) {
    problem["b_Q"] = columns("b_Q", q, true);
    problem["b_K"] = columns("b_K", kv, true);
    problem["b_V"] = columns("b_V", kv, true);
  }
  Json options = {{"causal", true}, {"precision", m.precision == Precision::Float32 ? "float32" : "float64"}};
  if (m.positions == ModelConfig::Positions::Rope) options["rope"] = {{"base", 10000}, {"style", "half"}};
  problem["options"] = options;
  return problem;
}

Json matrix_json(const Matrix& m, bool vector) {
  if (vector) {
    Json row = Json::array();
    for (Eigen::Index j = 0; j < m.cols(); ++j) row.push_back(m(0, j));
    return row;
  }
  Json out = Json::array();
  for (Eigen::Index i = 0; i < m.rows(); ++i) out.push_back(matrix_json(m.row(i), true));
  return out;
}

}  // namespace attn
