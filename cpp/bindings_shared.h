// What both trace-reading modules' embind files share (bindings.cpp: the core, attention.wasm;
// bindings_walkthroughs.cpp: decode, tiles, the online softmax and the gradients,
// attention-walkthroughs.wasm): copies between JS and C++, and the packed run's scratch block.
// Each module has its own memory, so each has its own block.
#pragma once

#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <cstdint>
#include <string>
#include <vector>

#include "attention.h"
#include "wire_embind.h"

namespace attn::bindings {

using attn::wire::guarded;
using emscripten::val;

[[noreturn]] inline void fail(const std::string& message) { throw attn::InputError(message); }

// Copies a JS Float64Array (or array of numbers) into `out`, which has its final size already.
inline void copy_in(const val& source, double* out, std::size_t n) {
  if (n == 0) return;
  // No allocation happens between making this view and filling it, so it cannot detach.
  val(emscripten::typed_memory_view(n, out)).call<void>("set", source);
}

inline val copy_out(const double* data, std::size_t n) {
  // new Float64Array(view) copies; the view itself never escapes.
  return val::global("Float64Array").new_(emscripten::typed_memory_view(n, data));
}

inline val copy_out(const std::vector<double>& v) { return copy_out(v.data(), v.size()); }

// ---- explain()'s result ---------------------------------------------------------------------

inline val head_to(int head) { return head < 0 ? val::null() : val(head); }

inline val texts_to(const std::vector<std::string>& texts) {
  val out = val::array();
  for (const std::string& t : texts) out.call<void>("push", t);
  return out;
}

inline val index_to(Eigen::Index i) { return val(static_cast<double>(i)); }

// The term table, its columns plain arrays of numbers (engine.js copies only the typed arrays of
// the top level), or null when the calculation has none.
/// A message's parameters as an object (name: value as text).
inline val params_to(const std::vector<std::pair<std::string, std::string>>& params) {
  val out = val::object();
  for (const auto& [name, value] : params) out.set(name, value);
  return out;
}

inline val terms_to(const attn::Explanation::Terms& terms) {
  if (terms.columns.empty()) return val::null();
  val out = val::object();
  out.set("caption_id", terms.caption_id);
  out.set("caption_params", params_to(terms.caption_params));
  out.set("headers", texts_to(terms.headers));
  out.set("index", terms.index);
  val columns = val::array();
  for (const std::vector<double>& column : terms.columns) {
    val numbers = val::array();
    for (double x : column) numbers.call<void>("push", x);
    columns.call<void>("push", numbers);
  }
  out.set("columns", columns);
  out.set("highlight", terms.highlight);
  return out;
}

// explain()'s result, one entry per field (docs/api.md and web/lib/index.d.ts `Explanation`).
using Explanation = attn::Explanation;
struct ExplanationField {
  const char* name;
  val (*to)(const Explanation&);
};
inline constexpr ExplanationField kExplanationFields[] = {
    {"kind", [](const Explanation& e) { return val(e.kind); }},
    {"step", [](const Explanation& e) { return val(e.step); }},
    {"head", [](const Explanation& e) { return head_to(e.head); }},
    {"row", [](const Explanation& e) { return index_to(e.row); }},
    {"col", [](const Explanation& e) { return index_to(e.col); }},
    {"value", [](const Explanation& e) { return val(e.value); }},
    {"left", [](const Explanation& e) { return copy_out(e.left); }},
    {"right", [](const Explanation& e) { return copy_out(e.right); }},
    {"products", [](const Explanation& e) { return copy_out(e.products); }},
    {"has_bias", [](const Explanation& e) { return val(e.has_bias); }},
    {"bias", [](const Explanation& e) { return val(e.bias); }},
    {"input", [](const Explanation& e) { return val(e.input); }},
    {"factor", [](const Explanation& e) { return val(e.factor); }},
    {"divisor", [](const Explanation& e) { return val(e.divisor); }},
    {"additive", [](const Explanation& e) { return val(e.additive); }},
    {"logits", [](const Explanation& e) { return copy_out(e.logits); }},
    {"shifted", [](const Explanation& e) { return copy_out(e.shifted); }},
    {"exps", [](const Explanation& e) { return copy_out(e.exps); }},
    {"max", [](const Explanation& e) { return val(e.max); }},
    {"exp_sum", [](const Explanation& e) { return val(e.exp_sum); }},
    {"source_head", [](const Explanation& e) { return val(e.source_head); }},
    {"source_col", [](const Explanation& e) { return index_to(e.source_col); }},
    {"slope", [](const Explanation& e) { return val(e.slope); }},
    {"query_pos", [](const Explanation& e) { return val(e.query_pos); }},
    {"key_pos", [](const Explanation& e) { return val(e.key_pos); }},
    {"hidden", [](const Explanation& e) { return val(e.hidden); }},
    {"kept_by_sink", [](const Explanation& e) { return val(e.kept_by_sink); }},
    {"components", [](const Explanation& e) { return texts_to(e.components); }},
    {"fill", [](const Explanation& e) { return val(e.fill); }},
    {"has_sink", [](const Explanation& e) { return val(e.has_sink); }},
    {"sink_logit", [](const Explanation& e) { return val(e.sink_logit); }},
    {"sink_exp", [](const Explanation& e) { return val(e.sink_exp); }},
    {"sink_share", [](const Explanation& e) { return val(e.sink_share); }},
    {"mean", [](const Explanation& e) { return val(e.mean); }},
    {"spread", [](const Explanation& e) { return val(e.spread); }},
    {"lambda", [](const Explanation& e) { return val(e.lambda); }},
    {"part_1", [](const Explanation& e) { return val(e.part_1); }},
    {"part_2", [](const Explanation& e) { return val(e.part_2); }},
    {"position", [](const Explanation& e) { return val(e.position); }},
    {"angle", [](const Explanation& e) { return val(e.angle); }},
    {"cos", [](const Explanation& e) { return val(e.cos); }},
    {"sin", [](const Explanation& e) { return val(e.sin); }},
    {"pair_first", [](const Explanation& e) { return index_to(e.pair_first); }},
    {"pair_second", [](const Explanation& e) { return index_to(e.pair_second); }},
    {"source", [](const Explanation& e) { return val(e.source); }},
    {"source_row", [](const Explanation& e) { return index_to(e.source_row); }},
    {"lines", [](const Explanation& e) { return texts_to(e.lines); }},
    {"text_id", [](const Explanation& e) { return val(e.text_id); }},
    {"params", [](const Explanation& e) { return params_to(e.params); }},
    {"numbers", [](const Explanation& e) { return copy_out(e.numbers); }},
    {"terms", [](const Explanation& e) { return terms_to(e.terms); }},
};

inline val explanation_to(const Explanation& e) {
  val out = val::object();
  for (const ExplanationField& field : kExplanationFields) out.set(field.name, field.to(e));
  return out;
}

// ---- the packed run ----------------------------------------------------------------------------
//
// Up to kScratchNumbers, web/lib/engine.js writes the packed problem straight into the scratch
// block (its address from _runScratch(), fixed for the module's life) and passes the count. The
// packed trace comes back as a view of the same block when it fits (no copy): engine.js reads it
// at once, before anything else runs in the module (which could grow the memory and detach the
// view, or overwrite the block). A larger one comes back the same way from the kept block below,
// and only one larger than that as a fresh copy.

inline constexpr std::size_t kScratchNumbers = 32 * 1024;  // 256 KB, allocated once on first use

inline double* run_scratch() {
  static std::vector<double> block(kScratchNumbers);
  return block.data();
}

// The scratch block's address and its size in numbers (_runScratch).
inline val run_scratch_js() {
  val out = val::array();
  out.set(0, static_cast<double>(reinterpret_cast<std::uintptr_t>(run_scratch())));
  out.set(1, static_cast<double>(kScratchNumbers));
  return out;
}

// `packed`: the count of numbers in the scratch block, or a Float64Array.
inline attn::Problem problem_from(const val& packed) {
  if (packed.isNumber()) {
    const double count = packed.as<double>();
    if (!(count >= 0 && count <= kScratchNumbers)) fail("packed problem: does not fit the scratch block");
    return attn::wire::unpack_problem(run_scratch(), static_cast<std::size_t>(count));
  }
  const double length = packed["length"].as<double>();
  if (!(length >= attn::wire::kProblemHeader) || length > 4.0e9) fail("packed problem: too short");
  std::vector<double> in(static_cast<std::size_t>(length));
  copy_in(packed, in.data(), in.size());
  return attn::wire::unpack_problem(in.data(), in.size());
}

// A packed record larger than the scratch block and up to kKeptNumbers is written into this block,
// which grows to the largest such record and is kept, and handed over as a view like the scratch
// block. A fresh block copied out into a fresh Float64Array for every run was most of a large
// run's time: in Chromium, touching that much new memory on both sides (the 3 x 1024 x 1024
// numbers of a 1,024-token trace) took longer than computing and reading the trace.
inline constexpr std::size_t kKeptNumbers = std::size_t{1} << 24;  // 128 MB

inline double* kept_block(std::size_t n) {
  static std::vector<double> block;
  if (block.size() < n) {
    std::vector<double>().swap(block);  // freed before the larger one is allocated
    block.resize(n);
  }
  return block.data();
}

// A record packed by its field list (the trace's kTraceFields, or decode's, tiles', ...): a view of
// the scratch or the kept block when it fits one (read at once by wire.js, as the packed problem
// is written), else a fresh copy.
template <class T, std::size_t N>
val record_to_packed(const attn::wire::Field<T> (&fields)[N], const T& subject) {
  attn::wire::Writer count;
  attn::wire::write_record(count, fields, subject);
  const std::size_t n = count.size();
  const bool view = n <= kKeptNumbers;
  std::vector<double> fresh(view ? 0 : n);
  double* const start = n <= kScratchNumbers ? run_scratch() : view ? kept_block(n) : fresh.data();
  attn::wire::Writer out(start);
  attn::wire::write_record(out, fields, subject);
  if (out.size() != n) fail("packed record: size mismatch");
  return view ? val(emscripten::typed_memory_view(n, start)) : copy_out(fresh);
}

// _explain: the worked calculation of one cell of the problem packed in `packed`, by
// attn::explain_forward (the core module) or attn::explain (the walkthroughs, gradient steps too).
template <attn::Explanation (*Explain)(const attn::Problem&, const std::string&, int, Eigen::Index, Eigen::Index)>
val explain_js(val packed, std::string step, int head, double row, double col) {
  return guarded([&] {
    return explanation_to(
        Explain(problem_from(packed), step, head, static_cast<Eigen::Index>(row), static_cast<Eigen::Index>(col)));
  });
}

}  // namespace attn::bindings
