// The wire table (wire.h) as JS values, and how an error comes back: what the binding files
// (bindings*.cpp) hand to web/lib. Emscripten only.
#pragma once

#include <emscripten/val.h>

#include <string>

#include "wire.h"

namespace attn::wire {

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

/// How the JSON holds an entry, for web/lib/problem.js: { key, type, expected, ... } with only
/// what applies.
inline emscripten::val json_of(const Json& j) {
  emscripten::val out = emscripten::val::object();
  if (j.key) out.set("key", j.key);
  out.set("type", kJsonTypes[static_cast<int>(j.type)]);
  if (j.expected) out.set("expected", j.expected);
  if (j.minimum != -std::numeric_limits<double>::infinity()) out.set("minimum", j.minimum);
  if (j.maximum != std::numeric_limits<double>::infinity()) out.set("maximum", j.maximum);
  if (j.exclusive_minimum) out.set("exclusive_minimum", true);
  if (j.integer) out.set("integer", true);
  if (j.minus_inf) out.set("minus_inf", true);
  if (j.nullable) out.set("nullable", true);
  if (j.scalar) out.set("scalar", true);
  return out;
}

/// The whole table, for web/lib/wire.js: _wireLayout() in the trace module.
inline emscripten::val layout() {
  using emscripten::val;
  val slots = val::array();
  for (const Slot& slot : kSlots) {
    val entry = val::object();
    entry.set("name", slot.name);
    entry.set("json", json_of(slot.json));
    slots.call<void>("push", entry);
  }
  val options = val::array();
  for (const Option& option : kOptions) {
    val entry = val::object();
    entry.set("name", option.name);
    if (option.codes.size) entry.set("codes", option.codes.name);
    entry.set("json", json_of(option.json));
    options.call<void>("push", entry);
  }
  val problem = val::object();
  problem.set("slots", slots);
  problem.set("slot_fields", detail::strings(kSlotFieldNames));
  problem.set("options", options);
  val records = val::object();
  records.set("trace", detail::fields(kTraceFields));
  records.set("gradients", detail::fields(kGradientsFields));
  records.set("step", detail::fields(kStepFields));
  records.set("read", detail::fields(kReadFields));
  records.set("tie", detail::fields(kTieFields));
  records.set("message", detail::fields(kMessageFields));
  records.set("facts", detail::fields(kFactsFields));
  records.set("meta", detail::fields(kMetaFields));
  records.set("decode", detail::fields(kDecodeFields));
  records.set("decode_step", detail::fields(kDecodeStepFields));
  records.set("tiles", detail::fields(kTilesFields));
  records.set("tile", detail::fields(kTileFields));
  records.set("tile_block", detail::fields(kTileBlockFields));
  records.set("online_softmax", detail::fields(kOnlineSoftmaxFields));
  records.set("online_step", detail::fields(kOnlineStepFields));
  records.set("recurrent", detail::fields(kRecurrentFields));
  records.set("recurrent_step", detail::fields(kRecurrentStepFields));
  records.set("form_cost", detail::fields(kFormCostFields));
  val out = val::object();
  out.set("version", kVersion);
  out.set(
      "codes",
      code_lists({codes("layout", kLayouts), codes("scale_kind", kScaleKinds), codes("mask_kind", kMaskKinds),
                  codes("precision", kPrecisions), codes("rope_style", kRopeStyles), codes("positional", kPositionals),
                  codes("fully_masked", kFullyMaskedCodes), codes("attention", kAttentionKinds),
                  codes("feature_map", kFeatureMaps), codes("qk_norm_type", kQkNormTypes), codes("score_fn", kScoreFns),
                  codes("trace_mask_kind", kTraceMaskKinds), codes("form", kForms), codes("kind", kValueKinds),
                  codes("axis", kAxes), codes("tie_axis", kTieAxes), codes("fast_mask", kFastMasks)}));
  out.set("problem", problem);
  out.set("records", records);
  out.set("fast", detail::strings(kFastHeader));
  // The step catalogue (steps.cpp): the package's one list of step ids (each one's caption is the
  // catalogues' message "step.<id>", web/lib/locales).
  val steps = val::array();
  for (const StepInfo& step : step_catalogue()) {
    val entry = val::object();
    entry.set("id", step.id);
    entry.set("gradient", step.gradient);
    steps.call<void>("push", entry);
  }
  out.set("steps", steps);
  return out;
}

/// Runs `body` (which returns a val). A C++ exception comes back as a JS Error carrying
/// e.what(), RETURNED for web/lib to throw: throwing it from here would unwind the wasm stack
/// without running destructors, leaking embind's argument buffers and every C++ object of the
/// call on each error; returning lets everything be destroyed normally.
/// An input error's place (InputError::place()) rides along as the Error's field, fields, row and
/// column, which web/lib/load.js unwrap() keeps.
template <class Body>
emscripten::val guarded(Body&& body) {
  std::string message;
  ErrorPlace place;
  Message said;
  try {
    return body();
  } catch (const InputError& e) {
    message = e.what();
    place = e.place();
    said = e.message();
  } catch (const std::exception& e) {
    message = e.what();
  } catch (...) {
    message = "unknown C++ exception";
  }
  emscripten::val error = emscripten::val::global("Error").new_(message);
  if (!place.field.empty()) {
    error.set("field", place.field);
    emscripten::val fields = emscripten::val::array();
    fields.call<void>("push", place.field);
    if (!place.other.empty()) fields.call<void>("push", place.other);
    error.set("fields", fields);
    if (place.row > 0) error.set("row", static_cast<double>(place.row));
    if (place.column > 0) error.set("column", static_cast<double>(place.column));
  }
  // A converted error's message id and parameters: web/lib fills the message's English from the
  // catalogue (load.js unwrap), and i18n.js errorWords any language's.
  if (!said.id.empty()) {
    error.set("message_id", said.id);
    emscripten::val values = emscripten::val::object();
    for (const auto& [name, value] : said.params) values.set(name, value);
    error.set("values", values);
  }
  return error;
}

}  // namespace attn::wire
