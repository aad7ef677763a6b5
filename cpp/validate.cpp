// normalize(): every check a problem passes before anything is computed, in the order a user
// meets them (inputs, heads, W_O, mask, options, size budget), each message naming the input,
// the position and what was expected, in the user's layout. The problem leaves in the rows
// layout (tokens as rows), which is all the computation knows.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "normalized.h"

namespace attn {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

/// The place of an error (matrix.h ErrorPlace) from the keys messages name: a key is its field up to
/// the first space ("options.attention \"linear\"" is options.attention, "W_DKV (multi-head latent
/// attention)" is W_DKV).
std::string field_of(const std::string& key) { return key.substr(0, key.find(' ')); }
ErrorPlace at(const std::string& field, const std::string& other = {}) {
  return ErrorPlace{field_of(field), other.empty() ? std::string() : field_of(other), 0, 0};
}
/// One entry: its 1-based row (a list's entry) and column (0 for a list).
ErrorPlace cell(const std::string& field, size_t row, size_t column = 0) {
  return ErrorPlace{field_of(field), {}, static_cast<std::ptrdiff_t>(row), static_cast<std::ptrdiff_t>(column)};
}

/// Speaks about shapes in the user's layout.
class ShapeWords {
 public:
  explicit ShapeWords(bool columns) : columns_(columns) {}
  /// "rows" for the token axis of a rows-layout matrix, flipped for the columns layout.
  const char* rows() const { return columns_ ? "columns" : "rows"; }
  const char* cols() const { return columns_ ? "rows" : "columns"; }
  const char* col() const { return columns_ ? "row" : "column"; }
  /// The catalogue's `layout` parameter: "rows" (tokens as rows) or "columns".
  const char* layout() const { return columns_ ? "columns" : "rows"; }
  std::string shape(const Matrix& rows_layout) const {
    Eigen::Index r = rows_layout.rows(), c = rows_layout.cols();
    if (columns_) std::swap(r, c);
    return std::to_string(r) + "x" + std::to_string(c);
  }

 private:
  bool columns_;
};

// Input errors are input_error() (matrix.h); the layout's words ("rows"/"columns") are the
// catalogue's, chosen by a `layout` parameter ("rows": tokens as rows; "columns").
template <class Integer>
std::string text(Integer value) {
  return std::to_string(value);
}
std::string shape_text(Eigen::Index rows, Eigen::Index cols) { return text(rows) + "x" + text(cols); }
/// A variant's key as a message parameter: "W_DKV (multi-head latent attention)" is W_DKV, the
/// catalogue says the words ("options.attention \"linear\"" stays whole).
std::string variant_key(const std::string& key) { return key.substr(0, key.find(" (")); }

// The element checks run on matrices as the user gave them, so their rows and columns are the
// user's.

void check_finite(const Matrix& m, const char* name, const char* field = nullptr) {
  if (m.allFinite()) return;  // the position is looked for only when there is one
  for (Eigen::Index i = 0; i < m.rows(); ++i) {
    for (Eigen::Index j = 0; j < m.cols(); ++j) {
      const double v = m(i, j);
      if (std::isfinite(v)) continue;
      throw input_error(cell(field ? field : name, i + 1, j + 1), "not-finite",
                        {{"name", name}, {"row", text(i + 1)}, {"column", text(j + 1)}, {"value", format_number(v)}});
    }
  }
}

void check_finite(const Vector& v, const char* name) {
  for (Eigen::Index i = 0; i < v.size(); ++i) {
    if (!std::isfinite(v[i])) {
      throw input_error(cell(name, i + 1), "not-finite-entry",
                        {{"name", name}, {"entry", text(i + 1)}, {"value", format_number(v[i])}});
    }
  }
}

void check_size(const Matrix& m, const char* name, const char* field = nullptr) {
  const Eigen::Index r = m.rows(), c = m.cols();
  if (r == 0 || c == 0)
    throw input_error(at(field ? field : name), "empty", {{"name", name}, {"shape", shape_text(r, c)}});
  if (r > kMaxDim || c > kMaxDim) {
    const bool rows_too_many = r > kMaxDim;
    throw input_error(at(field ? field : name), "too-large",
                      {{"name", name},
                       {"count", text(rows_too_many ? r : c)},
                       {"axis", rows_too_many ? "rows" : "columns"},
                       {"max", text(kMaxDim)}});
  }
}

/// float32 computations need inputs within its range; say so instead of computing with inf.
void check_float32_range(const Matrix& m, const char* name, const char* field = nullptr) {
  const double largest = std::numeric_limits<float>::max();
  for (Eigen::Index i = 0; i < m.rows(); ++i) {
    for (Eigen::Index j = 0; j < m.cols(); ++j) {
      if (std::abs(m(i, j)) <= largest) continue;
      throw input_error(
          cell(field ? field : name, i + 1, j + 1), "float32-range",
          {{"name", name}, {"row", text(i + 1)}, {"column", text(j + 1)}, {"value", format_number(m(i, j))}});
    }
  }
}

/// An option value that float32 would turn into 0 or inf. `option` is what the catalogue calls it
/// ("scale", "divisor", "root", "alibi", "sink_logit"; else the option's key as it is), `index` the
/// 1-based entry of a list (0: the whole option).
void check_float32_option(double value, const char* option, const char* field, size_t index = 0) {
  const float f = static_cast<float>(value);
  if ((value != 0 && f == 0) || std::isinf(f)) {
    throw input_error(at(field), "float32-option",
                      {{"option", option},
                       {"index", index ? text(index) : "none"},
                       {"value", format_number(value)},
                       {"result", f == 0 ? "zero" : "infinite"}});
  }
}

Matrix to_rows(const Matrix& m, bool columns) { return columns ? Matrix(m.transpose()) : m; }

/// A matrix input: non-empty, within limits, finite (and within float32's range when the
/// problem computes in float32), brought to the rows layout.
Matrix take(const Matrix& m, const char* name, const Normalized& n) {
  check_size(m, name);
  check_finite(m, name);
  if (n.options.precision == Precision::Float32) check_float32_range(m, name);
  return to_rows(m, n.columns);
}

/// `id`: the message that says what the mode needs.
void require(const std::optional<Matrix>& m, const char* name, const char* id) {
  if (!m) throw input_error(at(name), id, {{"name", name}});
}

/// Q, K and V given directly: no biases, one value per key.
void take_direct(const Problem& p, Normalized& n, const ShapeWords& words) {
  require(p.Q, "Q", "missing-direct");
  require(p.K, "K", "missing-direct");
  require(p.V, "V", "missing-direct");
  const std::pair<const char*, bool> biases[] = {
      {"b_Q", p.b_Q.has_value()}, {"b_K", p.b_K.has_value()}, {"b_V", p.b_V.has_value()}};
  for (const auto& [bias, given] : biases) {
    if (given) throw input_error(at(bias, "X"), "bias-direct", {{"name", bias}});
  }
  n.Q = take(*p.Q, "Q", n);
  n.K = take(*p.K, "K", n);
  n.V = take(*p.V, "V", n);
  if (n.K.rows() != n.V.rows()) {
    throw input_error(at("V", "K"), "kv-rows",
                      {{"k", text(n.K.rows())},
                       {"layout", words.layout()},
                       {"v", text(n.V.rows())},
                       {"k_shape", words.shape(n.K)},
                       {"v_shape", words.shape(n.V)}});
  }
}

/// X (and X_kv) with W_Q, W_K, W_V and optional biases: the inner sizes agree.
void take_projections(const Problem& p, Normalized& n, const ShapeWords& words) {
  require(p.X, "X", "missing-projection");
  require(p.W_Q, "W_Q", "missing-projection");
  require(p.W_K, "W_K", "missing-projection");
  require(p.W_V, "W_V", "missing-projection");
  n.cross = p.X_kv.has_value();
  n.X = take(*p.X, "X", n);
  n.X_kv = n.cross ? take(*p.X_kv, "X_kv", n) : n.X;
  n.W_Q = take(*p.W_Q, "W_Q", n);
  n.W_K = take(*p.W_K, "W_K", n);
  n.W_V = take(*p.W_V, "W_V", n);
  const char* kv_name = n.cross ? "X_kv" : "X";
  // W_Q has one row per feature of X (rows layout); Ω_Q has one column per feature, i.e.
  // per row of X (columns layout). After transposition both read W.rows() == X.cols().
  auto check_inner = [&](const Matrix& W, const char* w_name, const Matrix& in, const char* in_name) {
    if (W.rows() == in.cols()) return;
    throw input_error(at(w_name, in_name), "projection-inner",
                      {{"weights", w_name},
                       {"weights_count", text(W.rows())},
                       {"layout", words.layout()},
                       {"input", in_name},
                       {"input_count", text(in.cols())},
                       {"weights_shape", words.shape(W)},
                       {"input_shape", words.shape(in)}});
  };
  check_inner(n.W_Q, "W_Q", n.X, "X");
  check_inner(n.W_K, "W_K", n.X_kv, kv_name);
  check_inner(n.W_V, "W_V", n.X_kv, kv_name);

  auto take_bias = [&](const std::optional<Vector>& b, const char* name, const Matrix& W,
                       const char* w_name) -> std::optional<Vector> {
    if (!b) return std::nullopt;
    check_finite(*b, name);
    if (b->size() != W.cols()) {
      throw input_error(at(name, w_name), "bias-size",
                        {{"name", name},
                         {"count", text(b->size())},
                         {"weights", w_name},
                         {"width", text(W.cols())},
                         {"layout", words.layout()}});
    }
    return b;
  };
  n.b_Q = take_bias(p.b_Q, "b_Q", n.W_Q, "W_Q");
  n.b_K = take_bias(p.b_K, "b_K", n.W_K, "W_K");
  n.b_V = take_bias(p.b_V, "b_V", n.W_V, "W_V");
}

/// Either Q, K, V or X with the W's (never both, never neither), then the token counts.
ATTN_NOINLINE void take_inputs(const Problem& p, Normalized& n, const ShapeWords& words) {
  const bool any_direct = p.Q || p.K || p.V;
  const bool any_projection = p.X || p.W_Q || p.W_K || p.W_V || p.X_kv;
  if (any_direct && any_projection) {
    throw input_error(ErrorPlace{}, "inputs-both",
                      {{"direct", p.Q ? "Q" : (p.K ? "K" : "V")},
                       {"projection", p.X ? "X" : (p.W_Q ? "W_Q" : (p.W_K ? "W_K" : (p.W_V ? "W_V" : "X_kv")))}});
  }
  if (!any_direct && !any_projection) throw input_error(ErrorPlace{}, "inputs-none");
  n.direct = any_direct;
  if (n.direct) {
    take_direct(p, n, words);
  } else {
    take_projections(p, n, words);
  }
  n.L = n.direct ? n.Q.rows() : n.X.rows();
  n.S = n.direct ? n.K.rows() : n.X_kv.rows();
  if (n.L > kMaxTokens || n.S > kMaxTokens) {
    throw input_error(ErrorPlace{}, "too-many-tokens",
                      {{"queries", text(n.L)}, {"keys", text(n.S)}, {"max", text(kMaxTokens)}});
  }
}

/// heads and kv_heads divide the feature widths of Q, K and V: sets d_k and d_v.
ATTN_NOINLINE void take_heads(const Options& o, Normalized& n, const ShapeWords& words) {
  // Sizes shared by both modes, computed as if projected.
  const Eigen::Index q_width = n.direct ? n.Q.cols() : n.W_Q.cols();
  const Eigen::Index k_width = n.direct ? n.K.cols() : n.W_K.cols();
  const Eigen::Index v_width = n.direct ? n.V.cols() : n.W_V.cols();
  if (o.heads < 1) throw input_error(at("options.heads"), "heads-positive", {{"heads", text(o.heads)}});
  n.heads = o.heads;
  n.kv_heads = o.kv_heads == 0 ? o.heads : o.kv_heads;
  if (n.kv_heads < 1) throw input_error(at("options.kv_heads"), "kv-heads-positive", {{"kv_heads", text(o.kv_heads)}});
  if (n.heads % n.kv_heads != 0) {
    throw input_error(at("options.kv_heads", "options.heads"), "kv-heads-divide",
                      {{"kv_heads", text(n.kv_heads)}, {"heads", text(n.heads)}});
  }
  const char* q_name = n.direct ? "Q" : "W_Q";
  const char* k_name = n.direct ? "K" : "W_K";
  const char* v_name = n.direct ? "V" : "W_V";
  // The feature axis of Q is its columns in the rows layout and its rows in the columns layout
  // (the catalogue's {layout, select, ...}).
  if (q_width % n.heads != 0) {
    throw input_error(
        at("options.heads", q_name), "heads-divide",
        {{"heads", text(n.heads)}, {"width", text(q_width)}, {"layout", words.layout()}, {"name", q_name}});
  }
  n.d_k = q_width / n.heads;
  if (k_width != n.d_k * n.kv_heads) {
    if (n.kv_heads == 1 && n.heads == 1) {
      throw input_error(at(k_name, q_name), "qk-width",
                        {{"query", q_name},
                         {"query_width", text(q_width)},
                         {"layout", words.layout()},
                         {"key", k_name},
                         {"key_width", text(k_width)}});
    }
    throw input_error(at(k_name, "options.kv_heads"), "key-heads-width",
                      {{"key", k_name},
                       {"key_width", text(k_width)},
                       {"layout", words.layout()},
                       {"kv_heads", text(n.kv_heads)},
                       {"d_k", text(n.d_k)},
                       {"need", text(n.d_k * n.kv_heads)}});
  }
  if (v_width % n.kv_heads != 0) {
    throw input_error(
        at(v_name, "options.kv_heads"), "kv-heads-divide-value",
        {{"kv_heads", text(n.kv_heads)}, {"width", text(v_width)}, {"layout", words.layout()}, {"name", v_name}});
  }
  n.d_v = v_width / n.kv_heads;
}

/// W_O reads the concatenated heads; b_O needs W_O.
ATTN_NOINLINE void take_output_projection(const Problem& p, Normalized& n, const ShapeWords& words) {
  if (!p.W_O) {
    if (p.b_O) throw input_error(at("b_O", "W_O"), "bias-without-output");
    return;
  }
  n.W_O = take(*p.W_O, "W_O", n);
  const Eigen::Index concat_width = n.d_v * n.heads;
  if (n.W_O->rows() != concat_width) {
    throw input_error(at("W_O"), "output-width",
                      {{"rows", text(n.W_O->rows())},
                       {"layout", words.layout()},
                       {"width", text(concat_width)},
                       {"heads", text(n.heads)},
                       {"d_v", text(n.d_v)}});
  }
  if (p.b_O) {
    check_finite(*p.b_O, "b_O");
    if (p.b_O->size() != n.W_O->cols()) {
      throw input_error(at("b_O", "W_O"), "bias-size",
                        {{"name", "b_O"},
                         {"count", text(p.b_O->size())},
                         {"weights", "W_O"},
                         {"width", text(n.W_O->cols())},
                         {"layout", words.layout()}});
    }
    n.b_O = p.b_O;
  }
}

/// The mask has the shape of the scores (in the user's layout) and values of its kind.
ATTN_NOINLINE void take_mask(const Options& o, Normalized& n) {
  if (!o.mask) return;
  const Matrix& m = *o.mask;
  const Eigen::Index want_r = n.columns ? n.S : n.L, want_c = n.columns ? n.L : n.S;
  if (m.rows() != want_r || m.cols() != want_c) {
    throw input_error(at("options.mask"), "mask-shape",
                      {{"shape", shape_text(m.rows(), m.cols())},
                       {"scores", shape_text(want_r, want_c)},
                       {"layout", n.columns ? "columns" : "rows"}});
  }
  for (Eigen::Index i = 0; i < m.rows(); ++i) {
    for (Eigen::Index j = 0; j < m.cols(); ++j) {
      const double v = m(i, j);
      const bool keep_wrong = o.mask_kind == MaskKind::Keep && v != 0 && v != 1;
      const bool additive_wrong = o.mask_kind == MaskKind::Additive && (std::isnan(v) || v == kInf);
      if (keep_wrong || additive_wrong) {
        throw input_error(cell("options.mask", i + 1, j + 1), keep_wrong ? "mask-boolean" : "mask-additive",
                          {{"row", text(i + 1)}, {"column", text(j + 1)}, {"value", format_number(v)}});
      }
    }
  }
  n.mask = to_rows(m, n.columns);
}

/// The scale and the softcap are numbers the working precision can hold.
ATTN_NOINLINE void check_options(const Options& o) {
  const double value = o.scale.value;
  switch (o.scale.kind) {
    case Scale::Kind::Multiply:
      if (!std::isfinite(value))
        throw input_error(at("options.scale"), "scale-finite", {{"value", format_number(value)}});
      break;
    case Scale::Kind::DivideBy:
      if (!std::isfinite(value) || value == 0) {
        throw input_error(at("options.scale"), "scale-divisor", {{"value", format_number(value)}});
      }
      break;
    case Scale::Kind::DivideBySqrt:
      if (!std::isfinite(value) || !(value > 0)) {
        throw input_error(at("options.scale"), "scale-root", {{"value", format_number(value)}});
      }
      break;
    case Scale::Kind::SqrtDk:
    case Scale::Kind::None:
      break;
  }
  if (!(o.softcap >= 0) || !std::isfinite(o.softcap)) {
    throw input_error(at("options.softcap"), "softcap", {{"value", format_number(o.softcap)}});
  }
  if (o.precision == Precision::Float32) {
    check_float32_option(o.softcap, "softcap", "options.softcap");
    if (o.scale.kind == Scale::Kind::Multiply) check_float32_option(value, "scale", "options.scale");
    if (o.scale.kind == Scale::Kind::DivideBy) check_float32_option(value, "divisor", "options.scale");
    if (o.scale.kind == Scale::Kind::DivideBySqrt) check_float32_option(value, "root", "options.scale");
  }
}

/// ALiBi's slopes for `heads` heads as its paper's reference code computes them (Press et al.,
/// "Train Short, Test Long", ICLR 2022; get_slopes in github.com/ofirpress/attention_with_linear_biases):
/// for a power of two n, the geometric sequence starting at and multiplied by 2^(-8/n); otherwise
/// the slopes of the closest smaller power of two, then every other slope of twice that power.
std::vector<double> alibi_paper_slopes(int heads) {
  const auto power_of_two = [](int n) {
    const double start = std::pow(2.0, -std::pow(2.0, -(std::log2(static_cast<double>(n)) - 3)));
    std::vector<double> slopes;
    for (int i = 0; i < n; ++i) slopes.push_back(start * std::pow(start, i));
    return slopes;
  };
  int closest = 1;
  while (closest * 2 <= heads) closest *= 2;
  std::vector<double> slopes = power_of_two(closest);
  if (closest == heads) return slopes;
  const std::vector<double> more = alibi_paper_slopes(2 * closest);
  for (size_t i = 0; slopes.size() < static_cast<size_t>(heads); i += 2) slopes.push_back(more[i]);
  return slopes;
}

/// ALiBi, the window, sink tokens, sink logits and the mask fill: resolved per head.
ATTN_NOINLINE void take_mask_options(const Options& o, Normalized& n) {
  const bool float32 = o.precision == Precision::Float32;
  if (!o.alibi_slopes.empty()) {
    if (o.alibi_slopes.size() != static_cast<size_t>(n.heads)) {
      throw input_error(at("options.alibi", "options.heads"), "alibi-count",
                        {{"count", text(o.alibi_slopes.size())}, {"heads", text(n.heads)}});
    }
    for (size_t h = 0; h < o.alibi_slopes.size(); ++h) {
      if (!std::isfinite(o.alibi_slopes[h])) {
        throw input_error(cell("options.alibi", h + 1), "alibi-finite",
                          {{"slope", text(h + 1)}, {"value", format_number(o.alibi_slopes[h])}});
      }
      if (float32) check_float32_option(o.alibi_slopes[h], "alibi", "options.alibi", h + 1);
    }
    n.alibi_slopes = o.alibi_slopes;
  } else if (o.alibi) {
    n.alibi_slopes = alibi_paper_slopes(n.heads);
  }

  const std::pair<const char*, double> sides[] = {{"left", o.window_left}, {"right", o.window_right}};
  for (const auto& [side, value] : sides) {
    if (value == kInf || (value >= 0 && value == std::floor(value))) continue;
    throw input_error(at("options.window"), "window", {{"side", side}, {"value", format_number(value)}});
  }
  if (o.sink_tokens < 0) {
    throw input_error(at("options.sink_tokens"), "sink-tokens", {{"value", text(o.sink_tokens)}});
  }

  if (!o.sink_logit.empty()) {
    const size_t count = o.sink_logit.size();
    if (count != 1 && count != static_cast<size_t>(n.heads)) {
      throw input_error(at("options.sink_logit", "options.heads"), "sink-logit-count",
                        {{"count", text(count)}, {"heads", text(n.heads)}});
    }
    for (size_t h = 0; h < count; ++h) {
      const double v = o.sink_logit[h];
      const size_t entry = count == 1 ? 0 : h + 1;  // 0: the one number of every head
      if (std::isnan(v) || v == kInf) {
        throw input_error(cell("options.sink_logit", entry), "sink-logit",
                          {{"index", entry ? text(entry) : "none"}, {"value", format_number(v)}});
      }
      if (float32 && v != -kInf) check_float32_option(v, "sink_logit", "options.sink_logit", entry);
    }
    // -inf takes no weight: such sinks change nothing, so none is computed.
    const bool any = std::any_of(o.sink_logit.begin(), o.sink_logit.end(), [](double v) { return v != -kInf; });
    if (any) {
      n.sink_logits = count == 1 ? std::vector<double>(static_cast<size_t>(n.heads), o.sink_logit[0]) : o.sink_logit;
    }
  }

  if (std::isnan(o.mask_fill) || o.mask_fill == kInf) {
    throw input_error(at("options.mask_fill"), "mask-fill", {{"value", format_number(o.mask_fill)}});
  }
  if (float32 && o.mask_fill != -kInf) check_float32_option(o.mask_fill, "mask_fill", "options.mask_fill");
}

/// A full trace keeps about six L×S matrices per head (two more for ALiBi, two more for the
/// mask step and its facts): refuse before allocating.
ATTN_NOINLINE void check_trace_budget(const Normalized& n) {
  const double trace_values =
      static_cast<double>(n.heads) * ((6.0 + (n.alibi_slopes.empty() ? 0 : 2) + (n.has_mask() ? 2 : 0)) *
                                          static_cast<double>(n.L) * static_cast<double>(n.S) +
                                      static_cast<double>(n.L + 2 * n.S) * static_cast<double>(n.d_k + n.d_v));
  if (trace_values > kMaxTraceValues) {
    throw input_error(ErrorPlace{}, "trace-budget",
                      {{"values", text(static_cast<long long>(trace_values))},
                       {"max", text(static_cast<long long>(kMaxTraceValues))}});
  }
}

/// A KV cache: past_K and past_V together, as wide as K and V, one value per cached key. The
/// cached rows come before the new ones, so S counts both from here on.
ATTN_NOINLINE void take_cache(const Problem& p, Normalized& n, const ShapeWords& words) {
  if (!p.past_K && !p.past_V) return;
  if (!p.past_K) throw input_error(at("past_V", "past_K"), "cache-without", {{"name", "past_V"}, {"other", "past_K"}});
  if (!p.past_V) throw input_error(at("past_K", "past_V"), "cache-without", {{"name", "past_K"}, {"other", "past_V"}});
  n.past_K = take(*p.past_K, "past_K", n);
  n.past_V = take(*p.past_V, "past_V", n);
  // The features of K and V are their columns in the rows layout (rows in the columns layout).
  const std::pair<const char*, std::pair<const Matrix*, Eigen::Index>> widths[] = {
      {"K", {&n.past_K, n.d_k * n.kv_heads}}, {"V", {&n.past_V, n.d_v * n.kv_heads}}};
  for (const auto& [name, cache] : widths) {
    const auto& [m, width] = cache;
    if (m->cols() == width) continue;
    throw input_error(at(std::string("past_") + name, name), "cache-width",
                      {{"name", std::string("past_") + name},
                       {"count", text(m->cols())},
                       {"layout", words.layout()},
                       {"input", name},
                       {"width", text(width)}});
  }
  if (n.past_K.rows() != n.past_V.rows()) {
    throw input_error(at("past_V", "past_K"), "cache-rows",
                      {{"keys", text(n.past_K.rows())}, {"layout", words.layout()}, {"values", text(n.past_V.rows())}});
  }
  n.past = n.past_K.rows();
  n.S += n.past;
  if (n.S > kMaxTokens) {
    throw input_error(at("past_K"), "too-many-keys",
                      {{"cached", text(n.past)}, {"new", text(n.S - n.past)}, {"max", text(kMaxTokens)}});
  }
}

/// A position encoding added to X: the sinusoids (options.positional) or learned positions
/// (the input P, which alone means "learned").
ATTN_NOINLINE void take_positional(const Problem& p, Normalized& n, const ShapeWords& words) {
  Positional& positional = n.options.positional;
  if (p.P && positional == Positional::None) positional = Positional::Learned;
  if (positional == Positional::None) return;
  const bool sinusoidal = positional == Positional::Sinusoidal;
  if (n.direct) {
    throw input_error(at(sinusoidal ? "options.positional" : "P"), "positional-direct",
                      {{"kind", sinusoidal ? "sinusoidal" : "learned"}});
  }
  if (sinusoidal && p.P) {
    throw input_error(at("P", "options.positional"), "positional-both");
  }
  if (sinusoidal) return;
  if (!p.P) throw input_error(at("P", "options.positional"), "positional-learned");
  n.P = take(*p.P, "P", n);
  if (n.P->rows() != n.X.rows() || n.P->cols() != n.X.cols()) {
    throw input_error(at("P", "X"), "positional-shape",
                      {{"p_shape", words.shape(*n.P)}, {"x_shape", words.shape(n.X)}});
  }
}

/// Explicit positions: one whole number (0 or more) per query and per key (cache + new; `past`
/// cached keys, 0 for the queries).
void take_explicit_positions(const std::vector<double>& given, const char* name, Eigen::Index count, Eigen::Index past,
                             std::vector<double>& out) {
  if (static_cast<Eigen::Index>(given.size()) != count) {
    throw input_error(at(std::string("options.positions.") + name), "positions-count",
                      {{"name", name},
                       {"count", text(given.size())},
                       {"tokens", text(count)},
                       {"cached", past > 0 ? text(past) : "none"},
                       {"new", text(count - past)}});
  }
  for (size_t i = 0; i < given.size(); ++i) {
    const double x = given[i];
    if (!(x >= 0) || x != std::floor(x) || x > 1e15) {
      throw input_error(cell(std::string("options.positions.") + name, i + 1), "positions-entry",
                        {{"name", name}, {"entry", text(i + 1)}, {"value", format_number(x)}});
    }
  }
  out = given;
}

/// Each query's and key's position (see Normalized::query_pos).
ATTN_NOINLINE void take_positions(const Options& o, Normalized& n) {
  n.query_pos.resize(static_cast<size_t>(n.L));
  n.key_pos.resize(static_cast<size_t>(n.S));
  for (Eigen::Index i = 0; i < n.L; ++i) n.query_pos[static_cast<size_t>(i)] = static_cast<double>(n.past + i);
  for (Eigen::Index j = 0; j < n.S; ++j) n.key_pos[static_cast<size_t>(j)] = static_cast<double>(j);
  if (!o.query_positions.empty()) take_explicit_positions(o.query_positions, "queries", n.L, 0, n.query_pos);
  if (!o.key_positions.empty()) take_explicit_positions(o.key_positions, "keys", n.S, n.past, n.key_pos);
}

/// RoPE: an even number of rotated features within d_k, a positive base, or cos/sin tables
/// with a row for every position that rotates (queries and new keys; cached keys come rotated).
ATTN_NOINLINE void take_rope(Normalized& n) {
  Rope& rope = n.options.rope;
  if (!rope.on) return;
  // Latent attention turns only q_R and k_R (d_r features); differential attention rotates each
  // half of a head as a head of d_k/2 features.
  const bool halves = !n.lambdas.empty();
  const Eigen::Index width = n.latent ? n.d_r : halves ? n.d_k / 2 : n.d_k;
  const int dims = rope.dims == 0 ? static_cast<int>(width) : rope.dims;
  const std::string width_name = n.latent ? "d_r" : halves ? "d_k/2" : "d_k";
  if (rope.dims == 0 && width % 2 != 0) {
    // No dims were given: name the width that is odd, not a "got" value nobody typed.
    throw input_error(at("options.rope.dims"), "rope-odd",
                      {{"width_name", width_name},
                       {"width", text(width)},
                       {"halves", halves ? "yes" : "no"},
                       {"fit", width > 1 ? text(width - 1) : "none"}});
  }
  if (dims <= 0 || dims % 2 != 0 || dims > width) {
    throw input_error(
        at("options.rope.dims"), "rope-dims",
        {{"width_name", width_name}, {"width", text(width)}, {"halves", halves ? "yes" : "no"}, {"dims", text(dims)}});
  }
  rope.dims = dims;
  if (!rope.cos && !rope.sin) {
    if (!(rope.base > 0) || !std::isfinite(rope.base)) {
      throw input_error(at("options.rope.base"), "rope-base", {{"value", format_number(rope.base)}});
    }
    return;
  }
  if (!rope.cos)
    throw input_error(at("options.rope.sin", "options.rope.cos"), "rope-table-without",
                      {{"name", "sin"}, {"other", "cos"}});
  if (!rope.sin)
    throw input_error(at("options.rope.cos", "options.rope.sin"), "rope-table-without",
                      {{"name", "cos"}, {"other", "sin"}});
  // The tables hold a row per position whatever the layout.
  struct Table {
    const char* name;
    const char* field;
    const Matrix* m;
  };
  const Table tables[] = {{"rope cos", "options.rope.cos", &*rope.cos}, {"rope sin", "options.rope.sin", &*rope.sin}};
  for (const auto& [name, field, m] : tables) {
    check_size(*m, name, field);
    check_finite(*m, name, field);
    if (n.options.precision == Precision::Float32) check_float32_range(*m, name, field);
    if (m->cols() != dims / 2) {
      throw input_error(at(field, "options.rope.dims"), "rope-table-columns",
                        {{"name", name}, {"count", text(m->cols())}, {"dims", text(dims)}, {"need", text(dims / 2)}});
    }
  }
  if (rope.sin->rows() != rope.cos->rows()) {
    throw input_error(at("options.rope.sin", "options.rope.cos"), "rope-table-rows",
                      {{"sin", text(rope.sin->rows())}, {"cos", text(rope.cos->rows())}});
  }
  const Eigen::Index rows = rope.cos->rows();
  auto check_row = [&](double position, const char* token, size_t index) {
    if (position < static_cast<double>(rows)) return;
    throw input_error(at("options.rope.cos"), "rope-position",
                      {{"token", token},
                       {"index", text(index + 1)},
                       {"position", format_number(position)},
                       {"rows", text(rows)},
                       {"last", text(rows - 1)}});
  };
  for (size_t i = 0; i < n.query_pos.size(); ++i) check_row(n.query_pos[i], "query", i);
  for (size_t j = static_cast<size_t>(n.past); j < n.key_pos.size(); ++j) check_row(n.key_pos[j], "key", j);
}

/// Sigmoid, differential, linear and latent attention exclude one another (exclusive_variants()
/// lists them): any two are refused, the message naming both keys.
ATTN_NOINLINE void check_exclusive_variants(const Problem& p) {
  const ExclusiveVariant* first = nullptr;
  const std::vector<ExclusiveVariant> variants = exclusive_variants(p);
  for (const ExclusiveVariant& v : variants) {
    if (!v.on) continue;
    if (first) {
      // Linear and latent attention replace the whole computation; sigmoid and differential
      // attention change how a softmax attention's weights are made.
      const bool whole = first->whole || v.whole;
      throw input_error(
          at(v.key, first->key), "variants-exclusive",
          {{"first", variant_key(first->key)}, {"second", variant_key(v.key)}, {"whole", whole ? "yes" : "no"}});
    }
    first = &v;
  }
}

/// QK-norm and the output gate are for softmax attention (with sigmoid or differential weights
/// too): linear and latent attention refuse them, naming both keys.
ATTN_NOINLINE void check_softmax_only(const Problem& p, const char* variant) {
  const std::pair<const char*, bool> softmax_only[] = {
      {"options.qk_norm", p.options.qk_norm.on},
      {"W_G", p.W_G.has_value() || p.b_G.has_value()},
  };
  for (const auto& [key, on] : softmax_only) {
    if (on) {
      throw input_error(at(key, variant), "softmax-only", {{"variant", variant_key(variant)}, {"key", key}});
    }
  }
}

/// Multi-head latent attention (DeepSeek-V2, equations 9-19 without the latent RMSNorms): X with
/// W_DKV, W_UK, W_UV, [W_KR with W_QR], the query side W_Q or W_DQ with W_UQ, [W_O]; a cache of
/// past_c_KV and past_k_R. Sets the sizes (d_k = d_h + d_r) and turns RoPE on for q_R and k_R.
/// Returns false (touching nothing) when the problem gives none of its inputs.
ATTN_NOINLINE bool take_latent(const Problem& p, Normalized& n) {
  const std::pair<const char*, bool> own[] = {
      {"W_UK", p.W_UK.has_value()},           {"W_UV", p.W_UV.has_value()},        {"W_KR", p.W_KR.has_value()},
      {"W_QR", p.W_QR.has_value()},           {"W_DQ", p.W_DQ.has_value()},        {"W_UQ", p.W_UQ.has_value()},
      {"past_c_KV", p.past_c_KV.has_value()}, {"past_k_R", p.past_k_R.has_value()}};
  if (!p.W_DKV) {
    for (const auto& [key, given] : own) {
      if (given) {
        throw input_error(at(key, "W_DKV"), "latent-input", {{"key", key}});
      }
    }
    return false;
  }
  check_softmax_only(p, "W_DKV (multi-head latent attention)");
  const Options& o = p.options;
  const std::pair<const char*, bool> refused[] = {
      {"options.layout \"columns\"", n.columns},
      {"Q", p.Q.has_value()},
      {"K", p.K.has_value()},
      {"V", p.V.has_value()},
      {"X_kv", p.X_kv.has_value()},
      {"W_K", p.W_K.has_value()},
      {"W_V", p.W_V.has_value()},
      {"b_Q", p.b_Q.has_value()},
      {"b_K", p.b_K.has_value()},
      {"b_V", p.b_V.has_value()},
      {"past_K", p.past_K.has_value()},
      {"past_V", p.past_V.has_value()},
      {"P", p.P.has_value()},
      {"options.positional", o.positional != Positional::None},
      {"options.kv_heads", o.kv_heads != 0},
      {"options.window", !(std::isinf(o.window_left) && std::isinf(o.window_right))},
      {"options.sink_tokens", o.sink_tokens != 0},
      {"options.sink_logit", !o.sink_logit.empty()},
      {"options.alibi", o.alibi || !o.alibi_slopes.empty()},
  };
  for (const auto& [key, given] : refused) {
    if (!given) continue;
    throw input_error(at(key, "W_DKV"), "latent-refuses", {{"key", key}});
  }
  require(p.X, "X", "missing-latent");
  require(p.W_UK, "W_UK", "missing-latent");
  require(p.W_UV, "W_UV", "missing-latent");
  if (p.W_Q && (p.W_DQ || p.W_UQ)) {
    throw input_error(at(p.W_DQ ? "W_DQ" : "W_UQ", "W_Q"), "latent-query-both", {{"name", p.W_DQ ? "W_DQ" : "W_UQ"}});
  }
  if (!p.W_Q && !p.W_DQ && !p.W_UQ) require(p.W_Q, "W_Q", "missing-latent");
  if (p.W_DQ && !p.W_UQ)
    throw input_error(at("W_DQ", "W_UQ"), "latent-query-without", {{"name", "W_DQ"}, {"other", "W_UQ"}});
  if (p.W_UQ && !p.W_DQ)
    throw input_error(at("W_UQ", "W_DQ"), "latent-query-without", {{"name", "W_UQ"}, {"other", "W_DQ"}});
  if (p.W_QR.has_value() != p.W_KR.has_value()) {
    throw input_error(at(p.W_QR ? "W_QR" : "W_KR", p.W_QR ? "W_KR" : "W_QR"), "latent-rotary-without",
                      {{"name", p.W_QR ? "W_QR" : "W_KR"}, {"other", p.W_QR ? "W_KR" : "W_QR"}});
  }
  if (!p.W_KR && o.rope.on) {
    throw input_error(at("options.rope", "W_KR"), "latent-rope");
  }
  if (o.heads < 1) throw input_error(at("options.heads"), "heads-positive", {{"heads", text(o.heads)}});
  n.latent = true;
  n.X = take(*p.X, "X", n);
  n.W_DKV = take(*p.W_DKV, "W_DKV", n);
  n.W_UK = take(*p.W_UK, "W_UK", n);
  n.W_UV = take(*p.W_UV, "W_UV", n);
  // `input`: what W's rows must match, X or the latent c_KV or c_Q (the catalogue writes the product).
  const auto rows_must_be = [&](const Matrix& W, const char* name, Eigen::Index want, const char* input) {
    if (W.rows() == want) return;
    throw input_error(at(name), "latent-rows",
                      {{"name", name},
                       {"rows", text(W.rows())},
                       {"input", input},
                       {"width", text(want)},
                       {"shape", shape_text(W.rows(), W.cols())}});
  };
  const Eigen::Index d_model = n.X.cols();
  rows_must_be(n.W_DKV, "W_DKV", d_model, "X");
  n.d_c = n.W_DKV.cols();
  rows_must_be(n.W_UK, "W_UK", n.d_c, "c_KV");
  rows_must_be(n.W_UV, "W_UV", n.d_c, "c_KV");
  n.heads = o.heads;
  n.kv_heads = o.heads;
  const auto per_head = [&](const Matrix& W, const char* name, const char* what) {
    if (W.cols() % n.heads != 0) {
      throw input_error(at(name, "options.heads"), "latent-heads-divide",
                        {{"heads", text(n.heads)}, {"width", text(W.cols())}, {"name", name}, {"part", what}});
    }
    return W.cols() / n.heads;
  };
  n.d_h = per_head(n.W_UK, "W_UK", "d_h");
  n.d_v = per_head(n.W_UV, "W_UV", "d_v");
  const Matrix* query_side = nullptr;
  const char* query_name = "W_Q";
  if (p.W_DQ) {
    n.W_DQ = take(*p.W_DQ, "W_DQ", n);
    n.W_UQ = take(*p.W_UQ, "W_UQ", n);
    rows_must_be(*n.W_DQ, "W_DQ", d_model, "X");
    n.d_cq = n.W_DQ->cols();
    rows_must_be(*n.W_UQ, "W_UQ", n.d_cq, "c_Q");
    query_side = &*n.W_UQ;
    query_name = "W_UQ";
  } else {
    n.W_Q = take(*p.W_Q, "W_Q", n);
    rows_must_be(n.W_Q, "W_Q", d_model, "X");
    query_side = &n.W_Q;
  }
  if (query_side->cols() != n.d_h * n.heads) {
    throw input_error(at(query_name, "W_UK"), "latent-query-width",
                      {{"name", query_name},
                       {"width", text(query_side->cols())},
                       {"key_width", text(n.W_UK.cols())},
                       {"heads", text(n.heads)},
                       {"d_h", text(n.d_h)}});
  }
  if (p.W_KR) {
    n.W_KR = take(*p.W_KR, "W_KR", n);
    n.W_QR = take(*p.W_QR, "W_QR", n);
    rows_must_be(n.W_KR, "W_KR", d_model, "X");
    n.d_r = n.W_KR.cols();
    if (n.W_QR.rows() == n.d_cq && n.d_cq > 0) {
      n.qr_from_cq = true;  // d_cq = d_model reads c_Q, as the contract says
    } else if (n.W_QR.rows() != d_model) {
      throw input_error(
          at("W_QR", "X"), "latent-qr-rows",
          {{"rows", text(n.W_QR.rows())}, {"c_q", n.d_cq > 0 ? text(n.d_cq) : "none"}, {"width", text(d_model)}});
    }
    if (n.W_QR.cols() != n.d_r * n.heads) {
      throw input_error(at("W_QR", "W_KR"), "latent-qr-width",
                        {{"width", text(n.W_QR.cols())},
                         {"heads", text(n.heads)},
                         {"d_r", text(n.d_r)},
                         {"need", text(n.d_r * n.heads)}});
    }
    if (n.d_r % 2 != 0) {
      throw input_error(at("W_KR"), "latent-kr-odd", {{"d_r", text(n.d_r)}});
    }
    n.options.rope.on = true;  // q_R and k_R are always rotated
  }
  n.d_k = n.d_h + n.d_r;
  n.L = n.X.rows();
  n.S = n.L;
  if (n.L > kMaxTokens) {
    throw input_error(ErrorPlace{}, "latent-too-many-tokens", {{"tokens", text(n.L)}, {"max", text(kMaxTokens)}});
  }
  if (p.past_c_KV || p.past_k_R) {
    if (!p.past_c_KV)
      throw input_error(at("past_k_R", "past_c_KV"), "latent-cache-without",
                        {{"name", "past_k_R"}, {"other", "past_c_KV"}});
    if (n.d_r > 0 && !p.past_k_R)
      throw input_error(at("past_c_KV", "past_k_R"), "latent-cache-without",
                        {{"name", "past_c_KV"}, {"other", "past_k_R"}});
    if (n.d_r == 0 && p.past_k_R) throw input_error(at("past_k_R", "W_KR"), "latent-cache-rotary");
    n.past_c_KV = take(*p.past_c_KV, "past_c_KV", n);
    if (n.past_c_KV.cols() != n.d_c) {
      throw input_error(
          at("past_c_KV", "W_DKV"), "latent-cache-width",
          {{"name", "past_c_KV"}, {"count", text(n.past_c_KV.cols())}, {"input", "c_KV"}, {"width", text(n.d_c)}});
    }
    if (p.past_k_R) {
      n.past_k_R = take(*p.past_k_R, "past_k_R", n);
      if (n.past_k_R.cols() != n.d_r) {
        throw input_error(
            at("past_k_R", "W_KR"), "latent-cache-width",
            {{"name", "past_k_R"}, {"count", text(n.past_k_R.cols())}, {"input", "k_R"}, {"width", text(n.d_r)}});
      }
      if (n.past_k_R.rows() != n.past_c_KV.rows()) {
        throw input_error(at("past_k_R", "past_c_KV"), "latent-cache-rows",
                          {{"rows", text(n.past_k_R.rows())}, {"latent", text(n.past_c_KV.rows())}});
      }
    }
    n.past = n.past_c_KV.rows();
    n.S += n.past;
    if (n.S > kMaxTokens) {
      throw input_error(at("past_c_KV"), "too-many-keys",
                        {{"cached", text(n.past)}, {"new", text(n.L)}, {"max", text(kMaxTokens)}});
    }
  }
  return true;
}

/// Linear attention: its options only with it, and what it has no use for refused, each
/// message naming both keys. Scores are never scaled, masked or turned, so none of that applies.
ATTN_NOINLINE void take_linear(const Problem& p, Normalized& n) {
  const Options& o = p.options;
  const std::pair<const char*, bool> own[] = {{"options.feature_map", o.feature_map.has_value()},
                                              {"options.normalize", o.normalize.has_value()},
                                              {"options.decay", o.decay.has_value()}};
  if (!n.linear()) {
    for (const auto& [key, given] : own) {
      if (given) throw input_error(at(key, "options.attention"), "linear-option", {{"key", key}});
    }
    return;
  }
  check_softmax_only(p, "options.attention \"linear\"");
  if (o.decay && !(*o.decay > 0 && *o.decay <= 1)) {
    throw input_error(at("options.decay"), "linear-decay", {{"value", format_number(*o.decay)}});
  }
  const std::pair<const char*, bool> refused[] = {
      {"options.layout \"columns\"", n.columns},
      {"past_K", p.past_K.has_value()},
      {"past_V", p.past_V.has_value()},
      {"options.mask", o.mask.has_value()},
      {"options.window", !(std::isinf(o.window_left) && std::isinf(o.window_right))},
      {"options.sink_tokens", o.sink_tokens != 0},
      {"options.sink_logit", !o.sink_logit.empty()},
      {"options.alibi", o.alibi || !o.alibi_slopes.empty()},
      {"options.rope", o.rope.on},
      {"options.softcap", o.softcap != 0},
      {"options.scale", o.scale.kind != Scale::Kind::SqrtDk},
  };
  for (const auto& [key, given] : refused) {
    if (!given) continue;
    throw input_error(at(key, "options.attention"), "linear-refuses", {{"key", key}});
  }
}

/// The variants of issue 31 are for the rows layout: the columns layout refuses them, first.
ATTN_NOINLINE void check_rows_only(const Problem& p) {
  const Options& o = p.options;
  const std::pair<const char*, bool> rows_only[] = {
      {"options.qk_norm", o.qk_norm.on},
      {"W_G", p.W_G.has_value() || p.b_G.has_value()},
      {"options.score_fn \"sigmoid\"", o.score_fn == ScoreFn::Sigmoid},
      {"options.differential", o.differential.on},
  };
  for (const auto& [key, on] : rows_only) {
    if (on) {
      throw input_error(at(key, "options.layout"), "rows-only", {{"key", key}});
    }
  }
}

/// The variants of issue 31, each naming its key when refused.
ATTN_NOINLINE void take_variants(const Problem& p, Normalized& n) {
  const Options& o = p.options;
  const bool float32 = o.precision == Precision::Float32;

  if (o.qk_norm.on) {
    if (o.qk_norm.type == QkNorm::Type::None) {
      throw input_error(at("options.qk_norm.type"), "qk-norm-type");
    }
    if (!(o.qk_norm.eps > 0) || !std::isfinite(o.qk_norm.eps)) {
      throw input_error(at("options.qk_norm.eps"), "qk-norm-eps", {{"value", format_number(o.qk_norm.eps)}});
    }
    if (float32) check_float32_option(o.qk_norm.eps, "options.qk_norm.eps", "options.qk_norm.eps");
    const std::pair<const char*, const std::vector<double>*> gains[] = {{"options.qk_norm.g_q", &o.qk_norm.g_q},
                                                                        {"options.qk_norm.g_k", &o.qk_norm.g_k}};
    for (const auto& [key, g] : gains) {
      if (!g->empty() && static_cast<Eigen::Index>(g->size()) != n.d_k) {
        throw input_error(at(key), "qk-norm-gains", {{"key", key}, {"count", text(g->size())}, {"d_k", text(n.d_k)}});
      }
      for (size_t k = 0; k < g->size(); ++k) {
        if (!std::isfinite((*g)[k])) {
          throw input_error(cell(key, k + 1), "qk-norm-gain",
                            {{"key", key}, {"entry", text(k + 1)}, {"value", format_number((*g)[k])}});
        }
      }
    }
    const std::vector<double> ones(static_cast<size_t>(n.d_k), 1.0);
    n.g_q = o.qk_norm.g_q.empty() ? ones : o.qk_norm.g_q;
    n.g_k = o.qk_norm.g_k.empty() ? ones : o.qk_norm.g_k;
  }

  if (p.b_G && !p.W_G) throw input_error(at("b_G", "W_G"), "gate-bias-without");
  if (p.W_G) {
    if (n.direct) {
      throw input_error(at("W_G", "X"), "gate-needs-x");
    }
    n.W_G = take(*p.W_G, "W_G", n);
    if (n.W_G->rows() != n.X.cols()) {
      throw input_error(at("W_G", "X"), "gate-rows",
                        {{"rows", text(n.W_G->rows())},
                         {"width", text(n.X.cols())},
                         {"shape", shape_text(n.W_G->rows(), n.W_G->cols())}});
    }
    const Eigen::Index elementwise = n.heads * n.d_v, headwise = n.heads, width = n.W_G->cols();
    if (width != elementwise && width != headwise) {
      throw input_error(at("W_G"), "gate-width",
                        {{"width", text(width)}, {"elementwise", text(elementwise)}, {"heads", text(headwise)}});
    }
    n.gate_headwise = width != elementwise;  // d_v = 1: both, the same gate
    if (p.b_G) {
      check_finite(*p.b_G, "b_G");
      if (p.b_G->size() != width) {
        throw input_error(at("b_G", "W_G"), "gate-bias-size", {{"count", text(p.b_G->size())}, {"width", text(width)}});
      }
      n.b_G = p.b_G;
    }
  }

  if (o.score_fn == ScoreFn::Sigmoid) {
    n.sigmoid = true;
    if (!o.sink_logit.empty()) {
      throw input_error(at("options.sink_logit", "options.score_fn"), "sigmoid-sink");
    }
    if (o.fully_masked == FullyMasked::NaN) {
      throw input_error(at("options.fully_masked", "options.score_fn"), "sigmoid-fully-masked");
    }
    const double b = o.sigmoid_bias;
    if (std::isinf(b))
      throw input_error(at("options.sigmoid_bias"), "sigmoid-bias-finite", {{"value", format_number(b)}});
    n.sigmoid_bias = std::isnan(b) ? -std::log(static_cast<double>(n.S)) : b;
    if (float32 && n.sigmoid_bias != 0)
      check_float32_option(n.sigmoid_bias, "options.sigmoid_bias", "options.sigmoid_bias");
  } else if (!std::isnan(o.sigmoid_bias)) {
    throw input_error(at("options.sigmoid_bias", "options.score_fn"), "sigmoid-bias-unused");
  }

  if (o.differential.on) {
    const Differential& d = o.differential;
    if (n.d_k % 2 != 0) {
      throw input_error(at("options.differential"), "differential-even", {{"d_k", text(n.d_k)}});
    }
    if (!o.sink_logit.empty()) {
      throw input_error(at("options.sink_logit", "options.differential"), "differential-sink");
    }
    if (d.lambda.empty()) throw input_error(at("options.differential.lambda"), "differential-lambda-required");
    if (d.lambda.size() != 1 && d.lambda.size() != static_cast<size_t>(n.heads)) {
      throw input_error(at("options.differential.lambda", "options.heads"), "differential-lambda-count",
                        {{"count", text(d.lambda.size())}, {"heads", text(n.heads)}});
    }
    for (size_t h = 0; h < d.lambda.size(); ++h) {
      if (!std::isfinite(d.lambda[h])) {
        throw input_error(cell("options.differential.lambda", h + 1), "differential-lambda-entry",
                          {{"entry", text(h + 1)}, {"value", format_number(d.lambda[h])}});
      }
    }
    if (!std::isfinite(d.lambda_init)) {
      throw input_error(at("options.differential.lambda_init"), "differential-lambda-init",
                        {{"value", format_number(d.lambda_init)}});
    }
    n.lambdas = d.lambda.size() == 1 ? std::vector<double>(static_cast<size_t>(n.heads), d.lambda[0]) : d.lambda;
  }
}

}  // namespace

std::vector<ExclusiveVariant> exclusive_variants(const Problem& p) {
  return {
      {"options.score_fn \"sigmoid\"", p.options.score_fn == ScoreFn::Sigmoid, false},
      {"options.differential", p.options.differential.on, false},
      {"options.attention \"linear\"", p.options.attention == AttentionKind::Linear, true},
      {"W_DKV (multi-head latent attention)", p.W_DKV.has_value(), true},
  };
}

Normalized normalize(const Problem& p) {
  Normalized n;
  n.options = p.options;
  n.columns = p.options.layout == Layout::Columns;
  const ShapeWords words(n.columns);
  if (n.columns) check_rows_only(p);
  check_exclusive_variants(p);
  take_linear(p, n);
  if (!take_latent(p, n)) {
    take_inputs(p, n, words);
    take_heads(p.options, n, words);
    take_cache(p, n, words);
  }
  take_positional(p, n, words);
  take_output_projection(p, n, words);
  take_mask(p.options, n);
  check_options(p.options);
  take_mask_options(p.options, n);
  take_positions(p.options, n);
  take_variants(p, n);
  take_rope(n);
  check_trace_budget(n);
  return n;
}

}  // namespace attn
