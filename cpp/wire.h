// The wire format between the wasm modules and web/lib, declared once: the packed problem's
// slots and option codes, the packed trace's records, the fast path's header, and how an error
// comes back. _wireLayout() (bindings.cpp) hands the whole table to web/lib/wire.js and
// _fastWireLayout() (bindings_fast.cpp, in both modules) the fast path's section to
// web/lib/fast.js; they derive every offset and code from it, and web/lib/load.js refuses a
// module whose `kVersion` differs from the JS's. Included only by the binding files.
//
// Numbers travel as doubles. A text (a matrix typed as text, a step's title, a warning) travels
// as its UTF-8 byte count followed by the bytes, packed 8 to a double (the last one padded).
//
// The problem: a header, then the data of each input anywhere after it.
//   per slot (kSlots, in order): form (kForms), rows, cols, at. Numbers: a rows×cols row-major
//     block (a bias: n×1) starting `at` doubles from the start of the stream. Text: `rows` is its
//     byte count and the bytes start at `at`; the core's parser reads it (messages name the slot).
//   per option (kOptions, in order): its value (a code of its list, 0/1, or a number); NaN when
//     not given, so the core's default applies.
// The trace: the record kTraceFields, whose fields are written in order by type (FieldType).
// The fast path: kFastHeader doubles at a scratch address (see bindings_fast.cpp).
#pragma once

#include <emscripten/val.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <exception>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

#include "attention.h"
#include "parse.h"

namespace attn::wire {

/// Any change to this file's tables or to how a field is written changes the version.
inline constexpr int kVersion = 1;

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
inline constexpr Code kScaleKinds[] = {
    code("sqrt_dk", Scale::Kind::SqrtDk),       code("none", Scale::Kind::None),
    code("multiply", Scale::Kind::Multiply),    code("divide", Scale::Kind::DivideBy),
    code("divide_sqrt", Scale::Kind::DivideBySqrt)};
inline constexpr Code kMaskKinds[] = {code("keep", MaskKind::Keep),
                                      code("additive", MaskKind::Additive)};
inline constexpr Code kPrecisions[] = {code("float64", Precision::Float64),
                                       code("float32", Precision::Float32)};
inline constexpr Code kValueKinds[] = {
    code("signed", ValueKind::Signed), code("probability", ValueKind::Probability),
    code("keep_mask", ValueKind::KeepMask), code("additive_bias", ValueKind::AdditiveBias)};
inline constexpr Code kAxes[] = {code("queries", Axis::Queries), code("keys", Axis::Keys),
                                 code("features", Axis::Features)};

/// How a problem slot's data travels.
enum class Form { Absent, Numbers, Text };
inline constexpr Code kForms[] = {code("absent", Form::Absent), code("numbers", Form::Numbers),
                                  code("text", Form::Text)};

/// The enum value of code `code` of `list`; an unknown code means JS and wasm disagree.
inline int decode(const Codes& list, double code) {
  if (!(code >= 0 && code < static_cast<double>(list.size)) || code != std::floor(code)) {
    throw InputError(std::string("wire: ") + format_number(code) + " is not a " + list.name +
                     " code");
  }
  return list.codes[static_cast<std::size_t>(code)].value;
}

/// The code of enum value `value` in `list`.
template <class E>
double encode(const Codes& list, E value) {
  for (std::size_t i = 0; i < list.size; ++i) {
    if (list.codes[i].value == static_cast<int>(value)) return static_cast<double>(i);
  }
  throw InputError(std::string("wire: no ") + list.name + " code for value " +
                   std::to_string(static_cast<int>(value)));
}

// ---- the problem -----------------------------------------------------------------------------

/// One input of the problem: its key in the packed problem, what messages call it, and where
/// the core keeps it (a bias becomes a vector; text must parse to one row or one column).
struct Slot {
  const char* name;
  const char* label;
  void (*store)(Problem&, Matrix&&, const char* label);
};

/// A matrix that must be a list of numbers (one row or one column) as a vector.
inline Vector as_bias(const Matrix& m, const char* label) {
  if (m.rows() != 1 && m.cols() != 1) {
    throw InputError(std::string(label) + " must be a list of numbers, got a " +
                     std::to_string(m.rows()) + "x" + std::to_string(m.cols()) + " matrix");
  }
  return Eigen::Map<const Vector>(m.data(), m.size());
}

#define ATTN_WIRE_MATRIX(member) \
  {#member, #member, [](Problem& p, Matrix&& m, const char*) { p.member = std::move(m); }}
#define ATTN_WIRE_BIAS(member) \
  {#member, #member, [](Problem& p, Matrix&& m, const char* label) { p.member = as_bias(m, label); }}
inline constexpr Slot kSlots[] = {
    ATTN_WIRE_MATRIX(Q),   ATTN_WIRE_MATRIX(K),   ATTN_WIRE_MATRIX(V),   ATTN_WIRE_MATRIX(X),
    ATTN_WIRE_MATRIX(X_kv), ATTN_WIRE_MATRIX(W_Q), ATTN_WIRE_MATRIX(W_K), ATTN_WIRE_MATRIX(W_V),
    ATTN_WIRE_MATRIX(W_O), ATTN_WIRE_BIAS(b_Q),   ATTN_WIRE_BIAS(b_K),   ATTN_WIRE_BIAS(b_V),
    ATTN_WIRE_BIAS(b_O),
    {"mask", "options.mask", [](Problem& p, Matrix&& m, const char*) { p.options.mask = std::move(m); }},
};
#undef ATTN_WIRE_MATRIX
#undef ATTN_WIRE_BIAS

/// The numbers of each slot's header, in order.
enum SlotField { kForm, kRows, kCols, kAt, kSlotFields };
inline constexpr const char* kSlotFieldNames[kSlotFields] = {"form", "rows", "cols", "at"};

/// One option: its name, its code list (none for plain numbers) and where the core keeps it
/// (`value` is the enum value of a coded option, else the number sent).
struct Option {
  const char* name;
  Codes codes;
  void (*store)(Options&, double value);
};
inline constexpr Option kOptions[] = {
    {"layout", codes("layout", kLayouts), [](Options& o, double v) { o.layout = static_cast<Layout>(v); }},
    {"scale_kind", codes("scale_kind", kScaleKinds),
     [](Options& o, double v) { o.scale.kind = static_cast<Scale::Kind>(v); }},
    {"scale_value", {}, [](Options& o, double v) { o.scale.value = v; }},
    {"causal", {}, [](Options& o, double v) { o.causal = v != 0; }},
    {"mask_kind", codes("mask_kind", kMaskKinds),
     [](Options& o, double v) { o.mask_kind = static_cast<MaskKind>(v); }},
    {"softcap", {}, [](Options& o, double v) { o.softcap = v; }},
    {"heads", {}, [](Options& o, double v) { o.heads = static_cast<int>(v); }},
    {"kv_heads", {}, [](Options& o, double v) { o.kv_heads = static_cast<int>(v); }},
    {"precision", codes("precision", kPrecisions),
     [](Options& o, double v) { o.precision = static_cast<Precision>(v); }},
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
      throw InputError(std::string(slot.label) + ": packed data out of range");
    }
    const double room = static_cast<double>(length) - at;
    const double* data = h + static_cast<std::size_t>(at);
    if (form == Form::Text) {
      if (!(rows >= 0) || static_cast<double>(text_doubles(static_cast<std::size_t>(rows))) > room) {
        throw InputError(std::string(slot.label) + ": packed text too short");
      }
      const std::string_view text(reinterpret_cast<const char*>(data), static_cast<std::size_t>(rows));
      slot.store(p, parse_matrix(text, slot.label), slot.label);
    } else {
      if (!(rows >= 1 && cols >= 1) || rows > 1e9 || cols > 1e9) {
        throw InputError(std::string(slot.label) + " is empty");
      }
      if (rows * cols > room) throw InputError(std::string(slot.label) + ": packed data too short");
      slot.store(p,
                 Matrix(Eigen::Map<const Matrix>(data, static_cast<Eigen::Index>(rows),
                                                 static_cast<Eigen::Index>(cols))),
                 slot.label);
    }
  }
  const double* values = h + kSlotCount * kSlotFields;
  for (const Option& option : kOptions) {
    const double v = *values++;
    if (std::isnan(v)) continue;  // not given
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
  Number,   ///< one number
  Index,    ///< one number; -1 (none) reads as null
  Text,     ///< a text
  Texts,    ///< a count, then that many texts
  Numbers,  ///< a count, then that many numbers
  Shape,    ///< rows, cols: reads as [rows, cols]
  Values,   ///< the rows×cols numbers of the record's Shape field: reads as rows of numbers
  Matrix,   ///< rows, cols, then the numbers: reads as rows of numbers
  Code,     ///< a code of the field's list: reads as its name
  CodeList, ///< a count, then codes of the field's list: reads as their names
  Range,    ///< first, count: reads as [first, first + count], or null when count is 0
  Record,   ///< the field's record
  Records,  ///< a count, then that many of the field's record
};
inline constexpr const char* kFieldTypes[] = {"number", "index", "text", "texts", "numbers",
                                              "shape", "values", "matrix", "code", "codes",
                                              "range", "record", "records"};

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
    {"title", FieldType::Text, [](Writer& w, const Step& s) { w.text(s.title); }},
    {"symbol", FieldType::Text, [](Writer& w, const Step& s) { w.text(s.symbol); }},
    {"tex", FieldType::Text, [](Writer& w, const Step& s) { w.text(s.tex); }},
    {"text", FieldType::Text, [](Writer& w, const Step& s) { w.text(s.text); }},
    {"kind", FieldType::Code,
     [](Writer& w, const Step& s) { w.number(encode(codes("kind", kValueKinds), s.kind)); },
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
    {"given", FieldType::Texts,
     [](Writer& w, const Step& s) {
       write_list(w, s.given, [](Writer& o, const std::string& t) { o.text(t); });
     }},
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
     [](Writer& w, const HeadFacts& f) {
       write_list(w, f.fully_masked, [](Writer& o, int row) { o.number(row); });
     }},
    {"hidden_by", FieldType::Matrix, [](Writer& w, const HeadFacts& f) { write_matrix(w, f.hidden_by); }},
    {"hidden_weight", FieldType::Numbers, [](Writer& w, const HeadFacts& f) { write_vector(w, f.hidden_weight); }},
    {"alibi_slope", FieldType::Number, [](Writer& w, const HeadFacts& f) { w.number(f.alibi_slope); }},
    {"sink_logit", FieldType::Number, [](Writer& w, const HeadFacts& f) { w.number(f.sink_logit); }},
    {"sink_share", FieldType::Numbers, [](Writer& w, const HeadFacts& f) { write_vector(w, f.sink_share); }},
};

/// The trace's numbers that JS shows as `meta` (JS adds the layout and precision it sent).
inline constexpr Field<Trace> kMetaFields[] = {
    {"scale", FieldType::Number, [](Writer& w, const Trace& t) { w.number(t.scale); }},
    {"d_k", FieldType::Number, [](Writer& w, const Trace& t) { w.number(t.d_k); }},
    {"d_v", FieldType::Number, [](Writer& w, const Trace& t) { w.number(t.d_v); }},
    {"heads", FieldType::Number, [](Writer& w, const Trace& t) { w.number(t.heads); }},
    {"kv_heads", FieldType::Number, [](Writer& w, const Trace& t) { w.number(t.kv_heads); }},
    {"queries", FieldType::Number, [](Writer& w, const Trace& t) { w.number(static_cast<double>(t.queries)); }},
    {"keys", FieldType::Number, [](Writer& w, const Trace& t) { w.number(static_cast<double>(t.keys)); }},
};

template <class T, std::size_t N>
void write_record(Writer& w, const Field<T> (&fields)[N], const T& subject) {
  for (const Field<T>& field : fields) field.write(w, subject);
}

inline constexpr Field<Trace> kTraceFields[] = {
    {"steps", FieldType::Records,
     [](Writer& w, const Trace& t) {
       write_list(w, t.steps, [](Writer& o, const Step& s) { write_record(o, kStepFields, s); });
     },
     {}, "step"},
    {"output", FieldType::Matrix, [](Writer& w, const Trace& t) { write_matrix(w, t.output); }},
    {"warnings", FieldType::Texts,
     [](Writer& w, const Trace& t) {
       write_list(w, t.warnings, [](Writer& o, const std::string& text) { o.text(text); });
     }},
    {"facts", FieldType::Records,
     [](Writer& w, const Trace& t) {
       write_list(w, t.facts, [](Writer& o, const HeadFacts& f) { write_record(o, kFactsFields, f); });
     },
     {}, "facts"},
    {"meta", FieldType::Record, [](Writer& w, const Trace& t) { write_record(w, kMetaFields, t); }, {},
     "meta"},
};

// ---- the fast path's header ----------------------------------------------------------------------

/// The doubles of the fast path's header, in order: precision (kPrecisions); the addresses of
/// Q, K, V, the mask and the output; L, S, d_k, d_v; mask_kind (kFastMasks); scale_kind
/// (kScaleKinds) and scale_value; causal (0/1); row_offset (first query row of this chunk); and
/// one the core writes: fully_masked (query rows of the chunk whose keys were all hidden).
enum FastField {
  kFastPrecision, kFastQ, kFastK, kFastV, kFastMask, kFastOut, kFastL, kFastS, kFastDk, kFastDv,
  kFastMaskKind, kFastScaleKind, kFastScaleValue, kFastCausal, kFastRowOffset, kFastFullyMasked,
  kFastFields
};
inline constexpr const char* kFastHeader[kFastFields] = {
    "precision", "q", "k", "v", "mask", "out", "L", "S", "d_k", "d_v",
    "mask_kind", "scale_kind", "scale_value", "causal", "row_offset", "fully_masked"};
/// The fast path's masks: an additive one in Q's type, or a keep mask of bytes.
enum class FastMask { None, Additive, Keep };
inline constexpr Code kFastMasks[] = {code("none", FastMask::None), code("additive", FastMask::Additive),
                                      code("keep", FastMask::Keep)};

// ---- the table for JS, and the error strategy ------------------------------------------------

namespace detail {
using emscripten::val;

inline val names(const Codes& list) {
  val out = val::array();
  for (std::size_t i = 0; i < list.size; ++i) out.call<void>("push", val(list.codes[i].name));
  return out;
}
template <std::size_t N>
val strings(const char* const (&list)[N]) {
  val out = val::array();
  for (const char* name : list) out.call<void>("push", val(name));
  return out;
}
template <class T, std::size_t N>
val fields(const Field<T> (&list)[N]) {
  val out = val::array();
  for (const Field<T>& f : list) {
    val field = val::object();
    field.set("name", f.name);
    field.set("type", kFieldTypes[static_cast<int>(f.type)]);
    if (f.codes.size) field.set("codes", f.codes.name);
    if (f.record) field.set("record", f.record);
    out.call<void>("push", field);
  }
  return out;
}
}  // namespace detail

/// The code lists `lists` as { name: [code names] }.
inline emscripten::val code_lists(std::initializer_list<Codes> lists) {
  emscripten::val out = emscripten::val::object();
  for (const Codes& list : lists) out.set(list.name, detail::names(list));
  return out;
}

/// The fast path's section of the table, for web/lib/fast.js: _fastWireLayout() in both modules
/// (the lean fast module carries nothing of the trace's tables).
inline emscripten::val fast_layout() {
  emscripten::val out = emscripten::val::object();
  out.set("version", kVersion);
  out.set("codes", code_lists({codes("precision", kPrecisions), codes("scale_kind", kScaleKinds),
                               codes("fast_mask", kFastMasks)}));
  out.set("fast", detail::strings(kFastHeader));
  return out;
}

/// The whole table, for web/lib/wire.js: _wireLayout() in the trace module.
inline emscripten::val layout() {
  using emscripten::val;
  val slots = val::array();
  for (const Slot& slot : kSlots) slots.call<void>("push", val(slot.name));
  val options = val::array();
  for (const Option& option : kOptions) {
    val entry = val::object();
    entry.set("name", option.name);
    if (option.codes.size) entry.set("codes", option.codes.name);
    options.call<void>("push", entry);
  }
  val problem = val::object();
  problem.set("slots", slots);
  problem.set("slot_fields", detail::strings(kSlotFieldNames));
  problem.set("options", options);
  val records = val::object();
  records.set("trace", detail::fields(kTraceFields));
  records.set("step", detail::fields(kStepFields));
  records.set("facts", detail::fields(kFactsFields));
  records.set("meta", detail::fields(kMetaFields));
  val out = val::object();
  out.set("version", kVersion);
  out.set("codes", code_lists({codes("layout", kLayouts), codes("scale_kind", kScaleKinds),
                               codes("mask_kind", kMaskKinds), codes("precision", kPrecisions),
                               codes("form", kForms), codes("kind", kValueKinds), codes("axis", kAxes),
                               codes("fast_mask", kFastMasks)}));
  out.set("problem", problem);
  out.set("records", records);
  out.set("fast", detail::strings(kFastHeader));
  return out;
}

/// Runs `body` (which returns a val). A C++ exception comes back as a JS Error carrying
/// e.what(), RETURNED for web/lib to throw: throwing it from here would unwind the wasm stack
/// without running destructors, leaking embind's argument buffers and every C++ object of the
/// call on each error; returning lets everything be destroyed normally.
template <class Body>
emscripten::val guarded(Body&& body) {
  std::string message;
  try {
    return body();
  } catch (const std::exception& e) {
    message = e.what();
  } catch (...) {
    message = "unknown C++ exception";
  }
  return emscripten::val::global("Error").new_(message);
}

}  // namespace attn::wire
