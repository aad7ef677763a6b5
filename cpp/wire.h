// The wire format between the wasm modules and web/lib, declared once: the packed problem's
// slots and option codes, the packed trace's records, the fast path's header, and how an error
// comes back (wire_embind.h). _wireLayout() (bindings.cpp) hands the whole table to web/lib/wire.js and
// _fastWireLayout() (bindings_fast.cpp, in both modules) the fast path's section to
// web/lib/fast.js; they derive every offset and code from it, and web/lib/load.js refuses a
// module whose `kVersion` differs from the JS's. Plain C++: the native tests and fuzzers include it;
// wire_embind.h exports it to JS and is included only by the binding files.
//
// Numbers travel as doubles. A text (a matrix typed as text, a step's title id, a warning) travels
// as its UTF-8 byte count followed by the bytes, packed 8 to a double (the last one padded).
//
// The problem: a header, then the data of each input anywhere after it.
//   per slot (kSlots, in order): form (kForms), rows, cols, at. Numbers: a rows×cols row-major
//     block (a bias: n×1) starting `at` doubles from the start of the stream. Text: `rows` is its
//     byte count and the bytes start at `at`; the core's parser reads it (messages name the slot).
//   per option (kOptions, in order): its value (a code of its list, 0/1, or a number); NaN when
//     not given, so the core's default applies.
// Each slot and option also says how the problem JSON holds it (Json: its key, its JSON type and
// what messages say is expected): web/lib/problem.js checks and converts a problem from that, and
// the CLI's --help lists it. Where numbers or text arrive here, the same rules are checked again.
// The trace: the record kTraceFields, whose fields are written in order by type (FieldType);
// decode, tiles and the online softmax (practice.h) likewise: kDecodeFields, kTilesFields,
// kOnlineSoftmaxFields.
// The fast path: kFastHeader doubles at a scratch address (see bindings_fast.cpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <exception>
#include <initializer_list>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "attention.h"
#include "gradients.h"
#include "parse.h"
#include "practice.h"
#include "steps.h"

namespace attn::wire {

/// Any change to this file's tables or to how a field is written changes the version.
inline constexpr int kVersion = 10;

// ---- codes: a name per value; the code sent is the index in the list ---------------------------

struct Code {
  const char* name;
  int value;  ///< the enum's value
};
template <class E>
constexpr Code code(const char* name, E value) {
  return {name, static_cast<int>(value)};
}
/// A list of codes (a view of one of the arrays below).
struct Codes {
  const char* name = nullptr;  ///< how the table names the list (none for plain numbers)
  const Code* codes = nullptr;
  std::size_t size = 0;
};
template <std::size_t N>
constexpr Codes codes(const char* name, const Code (&list)[N]) {
  return {name, list, N};
}

inline constexpr Code kLayouts[] = {code("rows", Layout::Rows), code("columns", Layout::Columns)};
inline constexpr Code kScaleKinds[] = {code("sqrt_dk", Scale::Kind::SqrtDk), code("none", Scale::Kind::None),
                                       code("multiply", Scale::Kind::Multiply), code("divide", Scale::Kind::DivideBy),
                                       code("divide_sqrt", Scale::Kind::DivideBySqrt)};
inline constexpr Code kMaskKinds[] = {code("keep", MaskKind::Keep), code("additive", MaskKind::Additive)};
inline constexpr Code kPrecisions[] = {code("float64", Precision::Float64), code("float32", Precision::Float32)};
inline constexpr Code kValueKinds[] = {code("signed", ValueKind::Signed), code("probability", ValueKind::Probability),
                                       code("keep_mask", ValueKind::KeepMask),
                                       code("additive_bias", ValueKind::AdditiveBias)};
inline constexpr Code kAxes[] = {code("queries", Axis::Queries), code("keys", Axis::Keys),
                                 code("features", Axis::Features), code("positions", Axis::Positions)};

inline constexpr Code kRopeStyles[] = {code("half", Rope::Style::Half), code("interleaved", Rope::Style::Interleaved)};
inline constexpr Code kPositionals[] = {code("none", Positional::None), code("sinusoidal", Positional::Sinusoidal),
                                        code("learned", Positional::Learned)};
inline constexpr Code kFullyMaskedCodes[] = {code("zero", FullyMasked::Zero), code("nan", FullyMasked::NaN)};
inline constexpr Code kAttentionKinds[] = {code("softmax", AttentionKind::Softmax),
                                           code("linear", AttentionKind::Linear)};
inline constexpr Code kFeatureMaps[] = {code("elu+1", FeatureMap::EluPlusOne), code("relu", FeatureMap::Relu),
                                        code("identity", FeatureMap::Identity)};
inline constexpr Code kQkNormTypes[] = {code("rms", QkNorm::Type::Rms), code("layer", QkNorm::Type::Layer)};
inline constexpr Code kScoreFns[] = {code("softmax", ScoreFn::Softmax), code("sigmoid", ScoreFn::Sigmoid)};
/// The trace's mask kind: the problem's mask option's kind, or none (-1) without a mask.
inline constexpr Code kTraceMaskKinds[] = {
    {"none", -1}, code("keep", MaskKind::Keep), code("additive", MaskKind::Additive)};

/// How a problem slot's data travels.
enum class Form { Absent, Numbers, Text };
inline constexpr Code kForms[] = {code("absent", Form::Absent), code("numbers", Form::Numbers),
                                  code("text", Form::Text)};

/// The enum value of code `code` of `list`; an unknown code means JS and wasm disagree.
inline int decode(const Codes& list, double code) {
  if (!(code >= 0 && code < static_cast<double>(list.size)) || code != std::floor(code)) {
    throw InputError(std::string("wire: ") + format_number(code) + " is not a " + list.name + " code");
  }
  return list.codes[static_cast<std::size_t>(code)].value;
}

/// The code of enum value `value` in `list`.
template <class E>
double encode(const Codes& list, E value) {
  for (std::size_t i = 0; i < list.size; ++i) {
    if (list.codes[i].value == static_cast<int>(value)) return static_cast<double>(i);
  }
  throw InputError(std::string("wire: no ") + list.name + " code for value " + std::to_string(static_cast<int>(value)));
}

// ---- the problem -----------------------------------------------------------------------------

/// How the problem JSON holds a slot or an option: a few JSON types, not a schema language.
enum class JsonType {
  None,     ///< not read itself: set by the other entry of its key (scale_value, mask_kind)
  Boolean,  ///< true or false (0/1); with nested keys or a sibling of the same key, a switch:
            ///< an object of its settings, or the sibling's value, turns it on
  Code,     ///< one of its code list's names
  Scale,    ///< options.scale: "sqrt_dk", "none", a number, "1/sqrt(<n>)", "1/<n>"
  Mask,     ///< options.mask: a matrix of booleans (keep) or numbers (additive)
  Matrix,   ///< a matrix: nested lists, { shape, data }, or text
  Bias,     ///< a list of numbers (or a 1×n / n×1 matrix), or text
  Number,   ///< a finite number in the entry's range
  Numbers,  ///< a list of such numbers (a slot, one row), or text
};
inline constexpr const char* kJsonTypes[] = {"none",   "boolean", "code",   "scale",  "mask",
                                             "matrix", "bias",    "number", "numbers"};

struct Json {
  /// Its path in the problem JSON, e.g. "options.rope.base", "options.window[0]": what messages
  /// call it. Several entries may share a key: a switch and its list (options.alibi), a value
  /// and what is set with it (options.scale, options.mask).
  const char* key = nullptr;
  JsonType type = JsonType::None;
  /// What messages say is expected, e.g. "0 (off) or a positive number" (codes: their names).
  /// ASCII: embind hands a const char* to JS as Latin-1.
  const char* expected = nullptr;
  double minimum = -std::numeric_limits<double>::infinity();
  double maximum = std::numeric_limits<double>::infinity();
  bool exclusive_minimum = false;
  bool integer = false;    ///< whole numbers only
  bool minus_inf = false;  ///< also -inf (in JSON "-inf")
  bool nullable = false;   ///< null means unbounded: travels as +inf
  bool scalar = false;     ///< Numbers: one number stands for a list of one

  constexpr Json at_least(double m) const {
    Json j = *this;
    j.minimum = m;
    return j;
  }
  constexpr Json above(double m) const {
    Json j = at_least(m);
    j.exclusive_minimum = true;
    return j;
  }
  constexpr Json at_most(double m) const {
    Json j = *this;
    j.maximum = m;
    return j;
  }
  constexpr Json integers() const {
    Json j = *this;
    j.integer = true;
    return j;
  }
  constexpr Json or_minus_inf() const {
    Json j = *this;
    j.minus_inf = true;
    return j;
  }
  constexpr Json or_null() const {
    Json j = *this;
    j.nullable = true;
    return j;
  }
  constexpr Json or_one() const {
    Json j = *this;
    j.scalar = true;
    return j;
  }
};
constexpr Json json(const char* key, JsonType type, const char* expected = nullptr) {
  Json j;
  j.key = key;
  j.type = type;
  j.expected = expected;
  return j;
}

/// Whether `v` is a value `json` (Number, Numbers) accepts, apart from its maximum.
inline bool acceptable(const Json& json, double v) {
  if (std::isnan(v)) return false;
  if (std::isinf(v)) return v < 0 ? json.minus_inf : json.nullable;
  if (json.integer && v != std::floor(v)) return false;
  return json.exclusive_minimum ? v > json.minimum : v >= json.minimum;
}

/// Checks number `v` of `json` (`entry`: its place in a list, from 1; 0 for a single number),
/// with web/lib/problem.js's messages.
inline void check_number(const Json& json, double v, std::size_t entry = 0) {
  const std::string shown = "number " + format_number(v);
  if (!acceptable(json, v)) {
    throw InputError(ErrorPlace(json.key, {}, static_cast<std::ptrdiff_t>(entry)),
                     std::string(json.key) + " must be " + json.expected +
                         (entry ? ": entry " + std::to_string(entry) + " is " + shown : ", got " + shown));
  }
  if (v > json.maximum && !std::isinf(v)) {
    throw InputError(ErrorPlace(json.key, {}, static_cast<std::ptrdiff_t>(entry)),
                     std::string(json.key) + (entry ? " entry " + std::to_string(entry) : "") + " is " +
                         format_number(v) + ": at most " + format_number(json.maximum));
  }
}

/// One input of the problem: its key in the packed problem, how the JSON holds it (its key is
/// what messages call it), and where the core keeps it (a bias becomes a vector; text must
/// parse to one row or one column).
struct Slot {
  const char* name;
  Json json;
  void (*store)(Problem&, Matrix&&, const char* label);
};

/// A matrix that must be a list of numbers (one row or one column) as a vector.
inline Vector as_bias(const Matrix& m, const char* label) {
  if (m.rows() != 1 && m.cols() != 1) {
    throw InputError(ErrorPlace(label), std::string(label) + " must be a list of numbers, got a " +
                                            std::to_string(m.rows()) + "x" + std::to_string(m.cols()) + " matrix");
  }
  return Eigen::Map<const Vector>(m.data(), m.size());
}

/// The numbers of a Numbers slot, checked as its JSON says.
inline std::vector<double> as_list(const Json& json, const Matrix& m) {
  if (m.rows() != 1 && m.cols() != 1) {
    throw InputError(ErrorPlace(json.key), std::string(json.key) + " must be " + json.expected + ", got a " +
                                               std::to_string(m.rows()) + "x" + std::to_string(m.cols()) + " matrix");
  }
  for (Eigen::Index i = 0; i < m.size(); ++i) check_number(json, m.data()[i], static_cast<std::size_t>(i) + 1);
  return std::vector<double>(m.data(), m.data() + m.size());
}

#define ATTN_WIRE_MATRIX(member)                                                                                     \
  {                                                                                                                  \
#member, json(#member, JsonType::Matrix), [](Problem & p, Matrix && m, const char*) { p.member = std::move(m); } \
  }
#define ATTN_WIRE_BIAS(member)                                                            \
  {                                                                                       \
#member, json(#member, JsonType::Bias),                                               \
        [](Problem & p, Matrix && m, const char* label) { p.member = as_bias(m, label); } \
  }
inline constexpr Slot kSlots[] = {
    ATTN_WIRE_MATRIX(Q),
    ATTN_WIRE_MATRIX(K),
    ATTN_WIRE_MATRIX(V),
    ATTN_WIRE_MATRIX(X),
    ATTN_WIRE_MATRIX(X_kv),
    ATTN_WIRE_MATRIX(W_Q),
    ATTN_WIRE_MATRIX(W_K),
    ATTN_WIRE_MATRIX(W_V),
    ATTN_WIRE_MATRIX(W_O),
    ATTN_WIRE_BIAS(b_Q),
    ATTN_WIRE_BIAS(b_K),
    ATTN_WIRE_BIAS(b_V),
    ATTN_WIRE_BIAS(b_O),
    {"past_K", json("past_K", JsonType::Matrix, "a matrix: the cached keys, kv_heads*d_k wide"),
     [](Problem& p, Matrix&& m, const char*) { p.past_K = std::move(m); }},
    {"past_V", json("past_V", JsonType::Matrix, "a matrix: the cached values, kv_heads*d_v wide"),
     [](Problem& p, Matrix&& m, const char*) { p.past_V = std::move(m); }},
    {"P", json("P", JsonType::Matrix, "a matrix: learned positions added to X (X's shape)"),
     [](Problem& p, Matrix&& m, const char*) { p.P = std::move(m); }},
    {"dO", json("dO", JsonType::Matrix, "a matrix shaped like the output: the loss's gradient with respect to it"),
     [](Problem& p, Matrix&& m, const char*) { p.dO = std::move(m); }},
    {"mask",
     json("options.mask", JsonType::Mask,
          "a matrix of booleans (true keeps a key) or of numbers (added to the scores)"),
     [](Problem& p, Matrix&& m, const char*) { p.options.mask = std::move(m); }},
    {"query_positions", json("options.positions.queries", JsonType::Numbers, "a list of integers").integers(),
     [](Problem& p, Matrix&& m, const char*) { p.options.query_positions.assign(m.data(), m.data() + m.size()); }},
    {"key_positions", json("options.positions.keys", JsonType::Numbers, "a list of integers").integers(),
     [](Problem& p, Matrix&& m, const char*) { p.options.key_positions.assign(m.data(), m.data() + m.size()); }},
    {"rope_cos", json("options.rope.cos", JsonType::Matrix),
     [](Problem& p, Matrix&& m, const char*) { p.options.rope.cos = std::move(m); }},
    {"rope_sin", json("options.rope.sin", JsonType::Matrix),
     [](Problem& p, Matrix&& m, const char*) { p.options.rope.sin = std::move(m); }},
    {"alibi_slopes", json("options.alibi", JsonType::Numbers, "a list of numbers, one slope per head"),
     [](Problem& p, Matrix&& m, const char*) { p.options.alibi_slopes.assign(m.data(), m.data() + m.size()); }},
    {"W_G", json("W_G", JsonType::Matrix, "a matrix: the output gate, d_model x (heads*d_v) or d_model x heads"),
     [](Problem& p, Matrix&& m, const char*) { p.W_G = std::move(m); }},
    {"b_G", json("b_G", JsonType::Bias), [](Problem& p, Matrix&& m, const char* label) { p.b_G = as_bias(m, label); }},
    {"qk_norm_g_q",
     json("options.qk_norm.g_q", JsonType::Numbers, "a list of numbers, one gain per feature of a head (d_k)"),
     [](Problem& p, Matrix&& m, const char*) { p.options.qk_norm.g_q.assign(m.data(), m.data() + m.size()); }},
    {"qk_norm_g_k",
     json("options.qk_norm.g_k", JsonType::Numbers, "a list of numbers, one gain per feature of a head (d_k)"),
     [](Problem& p, Matrix&& m, const char*) { p.options.qk_norm.g_k.assign(m.data(), m.data() + m.size()); }},
    {"differential_lambda",
     json("options.differential.lambda", JsonType::Numbers, "a number or a list of numbers, one per head").or_one(),
     [](Problem& p, Matrix&& m, const char*) { p.options.differential.lambda.assign(m.data(), m.data() + m.size()); }},
    {"sink_logit",
     json("options.sink_logit", JsonType::Numbers, "a number, \"-inf\" or a list of them, one per head")
         .or_minus_inf()
         .or_one(),
     [](Problem& p, Matrix&& m, const char*) { p.options.sink_logit.assign(m.data(), m.data() + m.size()); }},
    // Multi-head latent attention (DeepSeek-V2): on when W_DKV is given.
    {"W_DKV", json("W_DKV", JsonType::Matrix, "a matrix: X's down-projection to the latent c_KV, d_model x d_c"),
     [](Problem& p, Matrix&& m, const char*) { p.W_DKV = std::move(m); }},
    {"W_UK", json("W_UK", JsonType::Matrix, "a matrix: the latent's up-projection to the keys, d_c x heads*d_h"),
     [](Problem& p, Matrix&& m, const char*) { p.W_UK = std::move(m); }},
    {"W_UV", json("W_UV", JsonType::Matrix, "a matrix: the latent's up-projection to the values, d_c x heads*d_v"),
     [](Problem& p, Matrix&& m, const char*) { p.W_UV = std::move(m); }},
    {"W_KR", json("W_KR", JsonType::Matrix, "a matrix: X to the rotary key k_R shared by all heads, d_model x d_r"),
     [](Problem& p, Matrix&& m, const char*) { p.W_KR = std::move(m); }},
    {"W_QR",
     json("W_QR", JsonType::Matrix, "a matrix: c_Q (or X) to the rotary queries, d_cq (or d_model) x heads*d_r"),
     [](Problem& p, Matrix&& m, const char*) { p.W_QR = std::move(m); }},
    {"W_DQ", json("W_DQ", JsonType::Matrix, "a matrix: X's down-projection to the query latent c_Q, d_model x d_cq"),
     [](Problem& p, Matrix&& m, const char*) { p.W_DQ = std::move(m); }},
    {"W_UQ", json("W_UQ", JsonType::Matrix, "a matrix: c_Q's up-projection to the queries, d_cq x heads*d_h"),
     [](Problem& p, Matrix&& m, const char*) { p.W_UQ = std::move(m); }},
    {"past_c_KV", json("past_c_KV", JsonType::Matrix, "a matrix: the cached latents, d_c wide"),
     [](Problem& p, Matrix&& m, const char*) { p.past_c_KV = std::move(m); }},
    {"past_k_R", json("past_k_R", JsonType::Matrix, "a matrix: the cached rotated keys k_R, d_r wide"),
     [](Problem& p, Matrix&& m, const char*) { p.past_k_R = std::move(m); }},
};
#undef ATTN_WIRE_MATRIX
#undef ATTN_WIRE_BIAS

/// The numbers of each slot's header, in order.
enum SlotField { kForm, kRows, kCols, kAt, kSlotFields };
inline constexpr const char* kSlotFieldNames[kSlotFields] = {"form", "rows", "cols", "at"};

/// One option: its name, its code list (none for plain numbers), how the JSON holds it, and
/// where the core keeps it (`value` is the enum value of a coded option, else the number sent).
struct Option {
  const char* name;
  Codes codes;
  Json json;
  void (*store)(Options&, double value);
};
/// Up to this, an int option's number converts to an int without overflow.
inline constexpr double kMaxInt = 2147483647;
inline constexpr Json kWindowSide =
    json(nullptr, JsonType::Number, "an integer >= 0 or null (unbounded)").integers().at_least(0).or_null();
inline constexpr Json kHeads =
    json(nullptr, JsonType::Number, "a positive integer").integers().at_least(1).at_most(kMaxDim);
/// `base` with its key.
constexpr Json keyed(Json base, const char* key) {
  base.key = key;
  return base;
}
inline constexpr Option kOptions[] = {
    {"layout", codes("layout", kLayouts), json("options.layout", JsonType::Code),
     [](Options& o, double v) { o.layout = static_cast<Layout>(v); }},
    {"scale_kind", codes("scale_kind", kScaleKinds),
     json("options.scale", JsonType::Scale, "\"sqrt_dk\", \"none\", a number, \"1/sqrt(<n>)\" or \"1/<n>\""),
     [](Options& o, double v) { o.scale.kind = static_cast<Scale::Kind>(v); }},
    {"scale_value", {}, json("options.scale", JsonType::None), [](Options& o, double v) { o.scale.value = v; }},
    {"causal",
     {},
     json("options.causal", JsonType::Boolean, "true or false"),
     [](Options& o, double v) { o.causal = v != 0; }},
    {"mask_kind", codes("mask_kind", kMaskKinds), json("options.mask", JsonType::None),
     [](Options& o, double v) { o.mask_kind = static_cast<MaskKind>(v); }},
    {"softcap",
     {},
     json("options.softcap", JsonType::Number, "0 (off) or a positive number").at_least(0),
     [](Options& o, double v) { o.softcap = v; }},
    {"heads", {}, keyed(kHeads, "options.heads"), [](Options& o, double v) { o.heads = static_cast<int>(v); }},
    {"kv_heads", {}, keyed(kHeads, "options.kv_heads"), [](Options& o, double v) { o.kv_heads = static_cast<int>(v); }},
    {"precision", codes("precision", kPrecisions), json("options.precision", JsonType::Code),
     [](Options& o, double v) { o.precision = static_cast<Precision>(v); }},
    {"rope",
     {},
     json("options.rope", JsonType::Boolean, "true, false, { base, style, dims } or { style, cos, sin }"),
     [](Options& o, double v) { o.rope.on = v != 0; }},
    {"rope_style", codes("rope_style", kRopeStyles), json("options.rope.style", JsonType::Code),
     [](Options& o, double v) { o.rope.style = static_cast<Rope::Style>(v); }},
    {"rope_base",
     {},
     json("options.rope.base", JsonType::Number, "a positive number").above(0),
     [](Options& o, double v) { o.rope.base = v; }},
    {"rope_dims",
     {},
     keyed(kHeads, "options.rope.dims"),
     [](Options& o, double v) { o.rope.dims = static_cast<int>(v); }},
    {"positional", codes("positional", kPositionals), json("options.positional", JsonType::Code),
     [](Options& o, double v) { o.positional = static_cast<Positional>(v); }},
    {"alibi",
     {},
     json("options.alibi", JsonType::Boolean, "true, false or a list of slopes, one per head"),
     [](Options& o, double v) { o.alibi = v != 0; }},
    {"window_left", {}, keyed(kWindowSide, "options.window[0]"), [](Options& o, double v) { o.window_left = v; }},
    {"window_right", {}, keyed(kWindowSide, "options.window[1]"), [](Options& o, double v) { o.window_right = v; }},
    {"sink_tokens",
     {},
     json("options.sink_tokens", JsonType::Number, "an integer >= 0").integers().at_least(0).at_most(kMaxInt),
     [](Options& o, double v) { o.sink_tokens = static_cast<int>(v); }},
    {"mask_fill",
     {},
     json("options.mask_fill", JsonType::Number, "\"-inf\" or a finite number").or_minus_inf(),
     [](Options& o, double v) { o.mask_fill = v; }},
    {"fully_masked", codes("fully_masked", kFullyMaskedCodes), json("options.fully_masked", JsonType::Code),
     [](Options& o, double v) { o.fully_masked = static_cast<FullyMasked>(v); }},
    {"attention", codes("attention", kAttentionKinds), json("options.attention", JsonType::Code),
     [](Options& o, double v) { o.attention = static_cast<AttentionKind>(v); }},
    {"feature_map", codes("feature_map", kFeatureMaps), json("options.feature_map", JsonType::Code),
     [](Options& o, double v) { o.feature_map = static_cast<FeatureMap>(v); }},
    {"normalize",
     {},
     json("options.normalize", JsonType::Boolean, "true or false"),
     [](Options& o, double v) { o.normalize = v != 0; }},
    {"decay",
     {},
     json("options.decay", JsonType::Number, "a number in (0, 1]").above(0).at_most(1),
     [](Options& o, double v) { o.decay = v; }},
    {"qk_norm",
     {},
     json("options.qk_norm", JsonType::Boolean, "false or { type, eps, g_q, g_k } (type \"rms\" or \"layer\")"),
     [](Options& o, double v) { o.qk_norm.on = v != 0; }},
    {"qk_norm_type", codes("qk_norm_type", kQkNormTypes), json("options.qk_norm.type", JsonType::Code),
     [](Options& o, double v) { o.qk_norm.type = static_cast<QkNorm::Type>(v); }},
    {"qk_norm_eps",
     {},
     json("options.qk_norm.eps", JsonType::Number, "a positive number").above(0),
     [](Options& o, double v) { o.qk_norm.eps = v; }},
    {"score_fn", codes("score_fn", kScoreFns), json("options.score_fn", JsonType::Code),
     [](Options& o, double v) { o.score_fn = static_cast<ScoreFn>(v); }},
    {"sigmoid_bias",
     {},
     json("options.sigmoid_bias", JsonType::Number, "a finite number (default -ln S)"),
     [](Options& o, double v) { o.sigmoid_bias = v; }},
    {"differential",
     {},
     json("options.differential", JsonType::Boolean, "false or { lambda, lambda_init, norm }"),
     [](Options& o, double v) { o.differential.on = v != 0; }},
    {"differential_lambda_init",
     {},
     json("options.differential.lambda_init", JsonType::Number, "a finite number"),
     [](Options& o, double v) { o.differential.lambda_init = v; }},
    {"differential_norm",
     {},
     json("options.differential.norm", JsonType::Boolean, "true or false"),
     [](Options& o, double v) { o.differential.norm = v != 0; }},
};

inline constexpr std::size_t kSlotCount = std::size(kSlots);
inline constexpr std::size_t kProblemHeader = kSlotCount * kSlotFields + std::size(kOptions);

/// Doubles that `bytes` bytes of text occupy.
constexpr std::size_t text_doubles(std::size_t bytes) { return (bytes + 7) / 8; }

/// The problem packed in `length` doubles from `h` (the layout at the top of this file).
inline Problem unpack_problem(const double* h, std::size_t length) {
  if (length < kProblemHeader) throw InputError("packed problem: too short");
  Problem p;
  for (std::size_t s = 0; s < kSlotCount; ++s) {
    const Slot& slot = kSlots[s];
    const double* field = h + s * kSlotFields;
    const auto form = static_cast<Form>(decode(codes("form", kForms), field[kForm]));
    if (form == Form::Absent) continue;
    const double rows = field[kRows], cols = field[kCols], at = field[kAt];
    if (!(at >= kProblemHeader && at <= length)) {
      throw InputError(std::string(slot.json.key) + ": packed data out of range");
    }
    const double room = static_cast<double>(length) - at;
    const double* data = h + static_cast<std::size_t>(at);
    const char* label = slot.json.key;
    Matrix m;
    if (form == Form::Text) {
      // rows is the text's byte count: within the stream before it becomes a size (fuzz_wire found
      // 5e39 converted to size_t, undefined behaviour).
      if (!(rows >= 0 && rows <= room * sizeof(double)) ||
          static_cast<double>(text_doubles(static_cast<std::size_t>(rows))) > room) {
        throw InputError(std::string(label) + ": packed text too short");
      }
      m = parse_matrix(std::string_view(reinterpret_cast<const char*>(data), static_cast<std::size_t>(rows)), label);
    } else {
      if (!(rows >= 1 && cols >= 1) || rows > 1e9 || cols > 1e9) {
        throw InputError(ErrorPlace(label), std::string(label) + " is empty");
      }
      if (rows * cols > room) throw InputError(std::string(label) + ": packed data too short");
      m = Eigen::Map<const Matrix>(data, static_cast<Eigen::Index>(rows), static_cast<Eigen::Index>(cols));
    }
    if (slot.json.type == JsonType::Numbers) as_list(slot.json, m);  // its checks
    slot.store(p, std::move(m), label);
  }
  const double* values = h + kSlotCount * kSlotFields;
  for (const Option& option : kOptions) {
    const double v = *values++;
    if (std::isnan(v)) continue;  // not given
    if (option.json.type == JsonType::Number) check_number(option.json, v);
    if (option.json.type == JsonType::Boolean && v != 0 && v != 1) {
      throw InputError(ErrorPlace(option.json.key), std::string(option.json.key) + " must be " + option.json.expected +
                                                        ", got number " + format_number(v));
    }
    option.store(p.options, option.codes.size ? decode(option.codes, v) : v);
  }
  return p;
}

// ---- the trace -------------------------------------------------------------------------------

/// Writes a packed record, or (with no output) only counts the doubles it needs.
class Writer {
 public:
  explicit Writer(double* out = nullptr) : out_(out) {}
  std::size_t size() const { return n_; }

  void number(double v) {
    if (out_) out_[n_] = v;
    ++n_;
  }
  void numbers(const double* data, std::size_t count) {
    if (out_) std::copy(data, data + count, out_ + n_);
    n_ += count;
  }
  void text(const std::string& s) {
    number(static_cast<double>(s.size()));
    if (out_ && !s.empty()) {
      out_[n_ + text_doubles(s.size()) - 1] = 0;  // the padding
      std::memcpy(out_ + n_, s.data(), s.size());
    }
    n_ += text_doubles(s.size());
  }

 private:
  double* out_;
  std::size_t n_ = 0;
};

/// How a field is written, and what web/lib/wire.js makes of it.
enum class FieldType {
  Number,    ///< one number
  Index,     ///< one number; -1 (none) reads as null
  Text,      ///< a text
  Texts,     ///< a count, then that many texts
  Numbers,   ///< a count, then that many numbers
  Shape,     ///< rows, cols: reads as [rows, cols]
  Values,    ///< the rows×cols numbers of the record's Shape field: reads as rows of numbers
  Matrix,    ///< rows, cols, then the numbers: reads as rows of numbers
  Code,      ///< a code of the field's list: reads as its name
  CodeList,  ///< a count, then codes of the field's list: reads as their names
  Range,     ///< first, count: reads as [first, first + count], or null when count is 0
  Record,    ///< the field's record
  Records,   ///< a count, then that many of the field's record
  Boolean,   ///< one number, 0 or 1: reads as false or true
};
inline constexpr const char* kFieldTypes[] = {"number", "index", "text",  "texts", "numbers", "shape",   "values",
                                              "matrix", "code",  "codes", "range", "record",  "records", "boolean"};

template <class T>
struct Field {
  const char* name;
  FieldType type;
  void (*write)(Writer&, const T&);
  Codes codes = {};              ///< Code, CodeList
  const char* record = nullptr;  ///< Record, Records: the name of the record's field list
};

inline void write_matrix(Writer& w, const attn::Matrix& m) {
  w.number(static_cast<double>(m.rows()));
  w.number(static_cast<double>(m.cols()));
  w.numbers(m.data(), static_cast<std::size_t>(m.size()));
}
inline void write_vector(Writer& w, const Vector& v) {
  w.number(static_cast<double>(v.size()));
  w.numbers(v.data(), static_cast<std::size_t>(v.size()));
}
template <class List, class Each>
void write_list(Writer& w, const List& list, Each each) {
  w.number(static_cast<double>(list.size()));
  for (const auto& item : list) each(w, item);
}

template <class T, std::size_t N>
void write_record(Writer& w, const Field<T> (&fields)[N], const T& subject) {
  for (const Field<T>& field : fields) field.write(w, subject);
}

/// A message (attention.h Message): its id, then its parameters as texts, name and value in turn.
inline constexpr Field<Message> kMessageFields[] = {
    {"id", FieldType::Text, [](Writer& w, const Message& m) { w.text(m.id); }},
    {"params", FieldType::Texts,
     [](Writer& w, const Message& m) {
       w.number(static_cast<double>(2 * m.params.size()));
       for (const auto& [name, value] : m.params) {
         w.text(name);
         w.text(value);
       }
     }},
};
inline void write_messages(Writer& w, const std::vector<Message>& messages) {
  write_list(w, messages, [](Writer& o, const Message& m) { write_record(o, kMessageFields, m); });
}

/// The step's side of a tie (TieAxis): an axis, or the step's row or column in the rows layout.
inline constexpr Code kTieAxes[] = {code("queries", TieAxis::Queries),   code("keys", TieAxis::Keys),
                                    code("features", TieAxis::Features), code("positions", TieAxis::Positions),
                                    code("row", TieAxis::Row),           code("column", TieAxis::Column)};

inline constexpr Field<Tie> kTieFields[] = {
    {"step", FieldType::Code, [](Writer& w, const Tie& t) { w.number(encode(codes("tie_axis", kTieAxes), t.step)); },
     codes("tie_axis", kTieAxes)},
    {"input", FieldType::Code, [](Writer& w, const Tie& t) { w.number(encode(codes("axis", kAxes), t.input)); },
     codes("axis", kAxes)},
    {"shift", FieldType::Number, [](Writer& w, const Tie& t) { w.number(t.shift); }},
};

inline constexpr Field<Read> kReadFields[] = {
    {"ties",
     FieldType::Records,
     [](Writer& w, const Read& r) {
       write_list(w, r.ties, [](Writer& o, const Tie& t) { write_record(o, kTieFields, t); });
     },
     {},
     "tie"},
};

inline constexpr Field<Step> kStepFields[] = {
    {"id", FieldType::Text, [](Writer& w, const Step& s) { w.text(s.id); }},
    {"head", FieldType::Index, [](Writer& w, const Step& s) { w.number(s.head); }},
    {"shape", FieldType::Shape,
     [](Writer& w, const Step& s) {
       w.number(static_cast<double>(s.values.rows()));
       w.number(static_cast<double>(s.values.cols()));
     }},
    {"data", FieldType::Values,
     [](Writer& w, const Step& s) { w.numbers(s.values.data(), static_cast<std::size_t>(s.values.size())); }},
    {"title_id", FieldType::Text, [](Writer& w, const Step& s) { w.text(s.title_id); }},
    {"symbol", FieldType::Text, [](Writer& w, const Step& s) { w.text(s.symbol); }},
    {"tex", FieldType::Text, [](Writer& w, const Step& s) { w.text(s.tex); }},
    {"text", FieldType::Text, [](Writer& w, const Step& s) { w.text(s.text); }},
    {"kind", FieldType::Code, [](Writer& w, const Step& s) { w.number(encode(codes("kind", kValueKinds), s.kind)); },
     codes("kind", kValueKinds)},
    {"axes", FieldType::CodeList,
     [](Writer& w, const Step& s) {
       w.number(2);
       w.number(encode(codes("axis", kAxes), s.row_axis));
       w.number(encode(codes("axis", kAxes), s.col_axis));
     },
     codes("axis", kAxes)},
    {"inputs", FieldType::Numbers,
     [](Writer& w, const Step& s) { write_list(w, s.inputs, [](Writer& o, int i) { o.number(i); }); }},
    {"reads",
     FieldType::Records,
     [](Writer& w, const Step& s) {
       write_list(w, s.reads, [](Writer& o, const Read& r) { write_record(o, kReadFields, r); });
     },
     {},
     "read"},
    {"given", FieldType::Texts,
     [](Writer& w, const Step& s) { write_list(w, s.given, [](Writer& o, const std::string& t) { o.text(t); }); }},
    {"kv_group", FieldType::Index, [](Writer& w, const Step& s) { w.number(s.kv_group); }},
    {"features", FieldType::Range,
     [](Writer& w, const Step& s) {
       w.number(static_cast<double>(s.feature_first));
       w.number(static_cast<double>(s.feature_count));
     }},
};

inline constexpr Field<HeadFacts> kFactsFields[] = {
    {"head", FieldType::Number, [](Writer& w, const HeadFacts& f) { w.number(f.head); }},
    {"scores_variance", FieldType::Number, [](Writer& w, const HeadFacts& f) { w.number(f.scores_variance); }},
    {"scaled_variance", FieldType::Number, [](Writer& w, const HeadFacts& f) { w.number(f.scaled_variance); }},
    {"weight_sums", FieldType::Numbers, [](Writer& w, const HeadFacts& f) { write_vector(w, f.weight_sums); }},
    {"max_weight", FieldType::Numbers, [](Writer& w, const HeadFacts& f) { write_vector(w, f.max_weight); }},
    {"entropy", FieldType::Numbers, [](Writer& w, const HeadFacts& f) { write_vector(w, f.entropy); }},
    {"fully_masked", FieldType::Numbers,
     [](Writer& w, const HeadFacts& f) { write_list(w, f.fully_masked, [](Writer& o, int row) { o.number(row); }); }},
    {"hidden_by", FieldType::Matrix, [](Writer& w, const HeadFacts& f) { write_matrix(w, f.hidden_by); }},
    {"hidden_weight", FieldType::Numbers, [](Writer& w, const HeadFacts& f) { write_vector(w, f.hidden_weight); }},
    {"alibi_slope", FieldType::Number, [](Writer& w, const HeadFacts& f) { w.number(f.alibi_slope); }},
    {"sink_logit", FieldType::Number, [](Writer& w, const HeadFacts& f) { w.number(f.sink_logit); }},
    {"sink_share", FieldType::Numbers, [](Writer& w, const HeadFacts& f) { write_vector(w, f.sink_share); }},
    {"rope_shift", FieldType::Number, [](Writer& w, const HeadFacts& f) { w.number(f.rope_shift); }},
    {"rope_shift_change", FieldType::Number, [](Writer& w, const HeadFacts& f) { w.number(f.rope_shift_change); }},
    {"max_score", FieldType::Number, [](Writer& w, const HeadFacts& f) { w.number(f.max_score); }},
    {"max_score_without_norm", FieldType::Number,
     [](Writer& w, const HeadFacts& f) { w.number(f.max_score_without_norm); }},
    {"lambda", FieldType::Number, [](Writer& w, const HeadFacts& f) { w.number(f.lambda); }},
};

/// What the packed trace is written from: the trace, and the options of its problem (the meta
/// record names the mask and scale kinds, so no view infers them from the problem's JSON).
struct Run {
  const Trace& trace;
  const Options& options;
};

/// The trace's numbers that JS shows as `meta` (JS adds the layout and precision it sent).
inline constexpr Field<Run> kMetaFields[] = {
    {"scale", FieldType::Number, [](Writer& w, const Run& r) { w.number(r.trace.scale); }},
    {"scale_kind", FieldType::Code,
     [](Writer& w, const Run& r) { w.number(encode(codes("scale_kind", kScaleKinds), r.options.scale.kind)); },
     codes("scale_kind", kScaleKinds)},
    {"mask_kind", FieldType::Code,
     [](Writer& w, const Run& r) {
       w.number(encode(codes("trace_mask_kind", kTraceMaskKinds),
                       r.options.mask ? static_cast<int>(r.options.mask_kind) : -1));
     },
     codes("trace_mask_kind", kTraceMaskKinds)},
    {"d_k", FieldType::Number, [](Writer& w, const Run& r) { w.number(r.trace.d_k); }},
    {"d_v", FieldType::Number, [](Writer& w, const Run& r) { w.number(r.trace.d_v); }},
    {"heads", FieldType::Number, [](Writer& w, const Run& r) { w.number(r.trace.heads); }},
    {"kv_heads", FieldType::Number, [](Writer& w, const Run& r) { w.number(r.trace.kv_heads); }},
    {"queries", FieldType::Number, [](Writer& w, const Run& r) { w.number(static_cast<double>(r.trace.queries)); }},
    {"keys", FieldType::Number, [](Writer& w, const Run& r) { w.number(static_cast<double>(r.trace.keys)); }},
    {"rope_positions", FieldType::Numbers, [](Writer& w, const Run& r) { write_vector(w, r.trace.rope_positions); }},
};

inline constexpr Field<Run> kTraceFields[] = {
    {"steps",
     FieldType::Records,
     [](Writer& w, const Run& r) {
       write_list(w, r.trace.steps, [](Writer& o, const Step& s) { write_record(o, kStepFields, s); });
     },
     {},
     "step"},
    {"output", FieldType::Matrix, [](Writer& w, const Run& r) { write_matrix(w, r.trace.output); }},
    {"warnings",
     FieldType::Records,
     [](Writer& w, const Run& r) { write_messages(w, r.trace.warnings); },
     {},
     "message"},
    {"facts",
     FieldType::Records,
     [](Writer& w, const Run& r) {
       write_list(w, r.trace.facts, [](Writer& o, const HeadFacts& f) { write_record(o, kFactsFields, f); });
     },
     {},
     "facts"},
    {"meta", FieldType::Record, [](Writer& w, const Run& r) { write_record(w, kMetaFields, r); }, {}, "meta"},
};

/// What the packed gradients are written from: the trace with the gradient steps, and the loss.
struct GradientsRun {
  Run run;
  double loss;
};

inline constexpr Field<GradientsRun> kGradientsFields[] = {
    {"trace",
     FieldType::Record,
     [](Writer& w, const GradientsRun& g) { write_record(w, kTraceFields, g.run); },
     {},
     "trace"},
    {"loss", FieldType::Number, [](Writer& w, const GradientsRun& g) { w.number(g.loss); }},
};

// ---- attention in practice (practice.h): decode, tiles, the online softmax ----------------------

inline void write_texts(Writer& w, const std::vector<std::string>& texts) {
  write_list(w, texts, [](Writer& o, const std::string& text) { o.text(text); });
}
/// A vector as Numbers.
#define ATTN_WIRE_VECTOR(T, member)                                                        \
  {                                                                                        \
#member, FieldType::Numbers, [](Writer & w, const T& x) { write_vector(w, x.member); } \
  }
#define ATTN_WIRE_NUMBER(T, member)                                                                     \
  {                                                                                                     \
#member, FieldType::Number, [](Writer & w, const T& x) { w.number(static_cast<double>(x.member)); } \
  }
#define ATTN_WIRE_MATRIX_FIELD(T, member)                                                 \
  {                                                                                       \
#member, FieldType::Matrix, [](Writer & w, const T& x) { write_matrix(w, x.member); } \
  }

inline constexpr Field<DecodeStep> kDecodeStepFields[] = {
    ATTN_WIRE_NUMBER(DecodeStep, t),
    ATTN_WIRE_NUMBER(DecodeStep, cache_rows),
    ATTN_WIRE_MATRIX_FIELD(DecodeStep, scores),
    ATTN_WIRE_MATRIX_FIELD(DecodeStep, weights),
    ATTN_WIRE_VECTOR(DecodeStep, output),
    ATTN_WIRE_NUMBER(DecodeStep, flops_cached),
    ATTN_WIRE_NUMBER(DecodeStep, flops_full),
    ATTN_WIRE_NUMBER(DecodeStep, difference),
};
inline constexpr Field<Decoding> kDecodeFields[] = {
    {"steps",
     FieldType::Records,
     [](Writer& w, const Decoding& d) {
       write_list(w, d.steps, [](Writer& o, const DecodeStep& s) { write_record(o, kDecodeStepFields, s); });
     },
     {},
     "decode_step"},
    ATTN_WIRE_MATRIX_FIELD(Decoding, output),
    {"warnings",
     FieldType::Records,
     [](Writer& w, const Decoding& d) { write_messages(w, d.warnings); },
     {},
     "message"},
    ATTN_WIRE_NUMBER(Decoding, flops_cached),
    ATTN_WIRE_NUMBER(Decoding, flops_full),
};

inline constexpr Field<Tile> kTileFields[] = {
    ATTN_WIRE_NUMBER(Tile, head),
    ATTN_WIRE_NUMBER(Tile, q_block),
    ATTN_WIRE_NUMBER(Tile, k_block),
    {"queries", FieldType::Range,
     [](Writer& w, const Tile& t) {
       w.number(static_cast<double>(t.q_first));
       w.number(static_cast<double>(t.q_count));
     }},
    {"keys", FieldType::Range,
     [](Writer& w, const Tile& t) {
       w.number(static_cast<double>(t.k_first));
       w.number(static_cast<double>(t.k_count));
     }},
    {"skipped", FieldType::Boolean, [](Writer& w, const Tile& t) { w.number(t.skipped ? 1 : 0); }},
    ATTN_WIRE_MATRIX_FIELD(Tile, scores),
    ATTN_WIRE_VECTOR(Tile, m_before),
    ATTN_WIRE_VECTOR(Tile, m_after),
    ATTN_WIRE_VECTOR(Tile, rescale),
    ATTN_WIRE_VECTOR(Tile, l_before),
    ATTN_WIRE_VECTOR(Tile, l_after),
    ATTN_WIRE_MATRIX_FIELD(Tile, partial_before),
    ATTN_WIRE_MATRIX_FIELD(Tile, partial_after),
};
inline constexpr Field<TileBlock> kTileBlockFields[] = {
    ATTN_WIRE_NUMBER(TileBlock, head),
    ATTN_WIRE_NUMBER(TileBlock, q_block),
    {"queries", FieldType::Range,
     [](Writer& w, const TileBlock& b) {
       w.number(static_cast<double>(b.q_first));
       w.number(static_cast<double>(b.q_count));
     }},
    ATTN_WIRE_VECTOR(TileBlock, m),
    ATTN_WIRE_VECTOR(TileBlock, l),
    ATTN_WIRE_MATRIX_FIELD(TileBlock, output),
};
inline constexpr Field<Tiles> kTilesFields[] = {
    ATTN_WIRE_NUMBER(Tiles, block_q),
    ATTN_WIRE_NUMBER(Tiles, block_k),
    {"tiles",
     FieldType::Records,
     [](Writer& w, const Tiles& t) {
       write_list(w, t.tiles, [](Writer& o, const Tile& x) { write_record(o, kTileFields, x); });
     },
     {},
     "tile"},
    {"blocks",
     FieldType::Records,
     [](Writer& w, const Tiles& t) {
       write_list(w, t.blocks, [](Writer& o, const TileBlock& x) { write_record(o, kTileBlockFields, x); });
     },
     {},
     "tile_block"},
    ATTN_WIRE_NUMBER(Tiles, visited),
    ATTN_WIRE_NUMBER(Tiles, skipped),
    ATTN_WIRE_MATRIX_FIELD(Tiles, output),
    ATTN_WIRE_NUMBER(Tiles, max_difference),
    ATTN_WIRE_NUMBER(Tiles, bytes_standard),
    ATTN_WIRE_NUMBER(Tiles, bytes_flash),
    ATTN_WIRE_NUMBER(Tiles, element_bytes),
    {"warnings", FieldType::Records, [](Writer& w, const Tiles& t) { write_messages(w, t.warnings); }, {}, "message"},
};

inline constexpr Field<OnlineSoftmaxStep> kOnlineStepFields[] = {
    ATTN_WIRE_NUMBER(OnlineSoftmaxStep, j),        ATTN_WIRE_NUMBER(OnlineSoftmaxStep, x),
    ATTN_WIRE_NUMBER(OnlineSoftmaxStep, m_before), ATTN_WIRE_NUMBER(OnlineSoftmaxStep, m_after),
    ATTN_WIRE_NUMBER(OnlineSoftmaxStep, rescale),  ATTN_WIRE_NUMBER(OnlineSoftmaxStep, l_before),
    ATTN_WIRE_NUMBER(OnlineSoftmaxStep, l_after),
};
inline constexpr Field<OnlineSoftmax> kOnlineSoftmaxFields[] = {
    {"steps",
     FieldType::Records,
     [](Writer& w, const OnlineSoftmax& s) {
       write_list(w, s.steps, [](Writer& o, const OnlineSoftmaxStep& x) { write_record(o, kOnlineStepFields, x); });
     },
     {},
     "online_step"},
    ATTN_WIRE_NUMBER(OnlineSoftmax, max),
    ATTN_WIRE_NUMBER(OnlineSoftmax, sum),
    ATTN_WIRE_VECTOR(OnlineSoftmax, weights),
    {"warnings",
     FieldType::Records,
     [](Writer& w, const OnlineSoftmax& s) { write_messages(w, s.warnings); },
     {},
     "message"},
};
inline constexpr Field<RecurrentStep> kRecurrentStepFields[] = {
    ATTN_WIRE_NUMBER(RecurrentStep, head),
    {"tokens", FieldType::Range,
     [](Writer& w, const RecurrentStep& x) {
       w.number(static_cast<double>(x.first));
       w.number(static_cast<double>(x.count));
     }},
    ATTN_WIRE_MATRIX_FIELD(RecurrentStep, state),
    ATTN_WIRE_VECTOR(RecurrentStep, z),
    ATTN_WIRE_MATRIX_FIELD(RecurrentStep, intra),
    ATTN_WIRE_MATRIX_FIELD(RecurrentStep, inter),
    ATTN_WIRE_VECTOR(RecurrentStep, intra_normalizer),
    ATTN_WIRE_VECTOR(RecurrentStep, inter_normalizer),
    ATTN_WIRE_MATRIX_FIELD(RecurrentStep, output),
    ATTN_WIRE_NUMBER(RecurrentStep, difference),
};
inline constexpr Field<FormCost> kFormCostFields[] = {
    {"form", FieldType::Text, [](Writer& w, const FormCost& c) { w.text(c.form); }},
    ATTN_WIRE_NUMBER(FormCost, multiply_adds),
    ATTN_WIRE_NUMBER(FormCost, state),
};
inline constexpr Field<Recurrent> kRecurrentFields[] = {
    ATTN_WIRE_NUMBER(Recurrent, chunk),
    {"steps",
     FieldType::Records,
     [](Writer& w, const Recurrent& r) {
       write_list(w, r.steps, [](Writer& o, const RecurrentStep& x) { write_record(o, kRecurrentStepFields, x); });
     },
     {},
     "recurrent_step"},
    ATTN_WIRE_MATRIX_FIELD(Recurrent, output),
    ATTN_WIRE_NUMBER(Recurrent, max_difference),
    {"costs",
     FieldType::Records,
     [](Writer& w, const Recurrent& r) {
       write_list(w, r.costs, [](Writer& o, const FormCost& x) { write_record(o, kFormCostFields, x); });
     },
     {},
     "form_cost"},
    {"warnings",
     FieldType::Records,
     [](Writer& w, const Recurrent& r) { write_messages(w, r.warnings); },
     {},
     "message"},
};
#undef ATTN_WIRE_VECTOR
#undef ATTN_WIRE_NUMBER
#undef ATTN_WIRE_MATRIX_FIELD

// ---- the fast path's header ----------------------------------------------------------------------

/// The doubles of the fast path's header, in order: precision (kPrecisions); the addresses of
/// Q, K, V, the mask and the output; L, S, d_k, d_v; mask_kind (kFastMasks); scale_kind
/// (kScaleKinds) and scale_value; causal (0/1); row_offset (first query row of this chunk); and
/// one the core writes: fully_masked (query rows of the chunk whose keys were all hidden).
enum FastField {
  kFastPrecision,
  kFastQ,
  kFastK,
  kFastV,
  kFastMask,
  kFastOut,
  kFastL,
  kFastS,
  kFastDk,
  kFastDv,
  kFastMaskKind,
  kFastScaleKind,
  kFastScaleValue,
  kFastCausal,
  kFastRowOffset,
  kFastFullyMasked,
  kFastFields
};
inline constexpr const char* kFastHeader[kFastFields] = {
    "precision", "q",   "k",         "v",          "mask",        "out",    "L",          "S",
    "d_k",       "d_v", "mask_kind", "scale_kind", "scale_value", "causal", "row_offset", "fully_masked"};
/// The fast path's masks: an additive one in Q's type, or a keep mask of bytes.
enum class FastMask { None, Additive, Keep };
inline constexpr Code kFastMasks[] = {code("none", FastMask::None), code("additive", FastMask::Additive),
                                      code("keep", FastMask::Keep)};

}  // namespace attn::wire
