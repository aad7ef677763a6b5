// The trace module's embind file: the core's run / explain / parse (matrices and cells) / random behind a stateless,
// copy-out API, and _wireLayout (the wire table, cpp/wire.h). The output-only fast path and
// _heapStats are bound in bindings_fast.cpp, which both modules link (attention.wasm, and the lean attention-fast.wasm of
// `attention-explorer/fast`).
//
// Private plumbing for web/lib/engine.js. `_run` and `_explain` take the problem packed as
// numbers (cpp/wire.h), written by web/lib/wire.js into this module's scratch block (their
// argument is then the count of numbers) or, when it does not fit, passed as one Float64Array.
// `_run` returns the trace packed (cpp/wire.h kTraceFields) in one Float64Array. Other results are fresh JS objects whose arrays
// are Float64Array copies: nothing returned points into wasm memory (which memory growth would
// detach) and nothing needs .delete(). Every C++ exception comes back as a returned Error
// (wire::guarded).

#include <emscripten/bind.h>
#include <emscripten/emscripten.h>
#include <emscripten/val.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "attention.h"
#include "numpy_random.h"
#include "parse.h"
#include "practice.h"
#include "wire.h"

using emscripten::val;
using attn::wire::guarded;

namespace {

[[noreturn]] void fail(const std::string& message) { throw attn::InputError(message); }

// Copies a JS Float64Array (or array of numbers) into `out`, which has its final size already.
void copy_in(const val& source, double* out, std::size_t n) {
  if (n == 0) return;
  // No allocation happens between making this view and filling it, so it cannot detach.
  val(emscripten::typed_memory_view(n, out)).call<void>("set", source);
}

// ---- C++ -> JS -------------------------------------------------------------------------------

val copy_out(const double* data, std::size_t n) {
  // new Float64Array(view) copies; the view itself never escapes.
  return val::global("Float64Array").new_(emscripten::typed_memory_view(n, data));
}

val copy_out(const std::vector<double>& v) { return copy_out(v.data(), v.size()); }

val matrix_to(const attn::Matrix& m) {
  val out = val::object();
  out.set("rows", static_cast<double>(m.rows()));
  out.set("cols", static_cast<double>(m.cols()));
  out.set("data", copy_out(m.data(), static_cast<std::size_t>(m.size())));
  return out;
}

val head_to(int head) { return head < 0 ? val::null() : val(head); }

val texts_to(const std::vector<std::string>& texts) {
  val out = val::array();
  for (const std::string& t : texts) out.call<void>("push", t);
  return out;
}

val index_to(Eigen::Index i) { return val(static_cast<double>(i)); }

// The term table, its columns plain arrays of numbers (engine.js copies only the typed arrays of
// the top level), or null when the calculation has none.
val terms_to(const attn::Explanation::Terms& terms) {
  if (terms.columns.empty()) return val::null();
  val out = val::object();
  out.set("caption", terms.caption);
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
constexpr ExplanationField kExplanationFields[] = {
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
    {"position", [](const Explanation& e) { return val(e.position); }},
    {"angle", [](const Explanation& e) { return val(e.angle); }},
    {"cos", [](const Explanation& e) { return val(e.cos); }},
    {"sin", [](const Explanation& e) { return val(e.sin); }},
    {"pair_first", [](const Explanation& e) { return index_to(e.pair_first); }},
    {"pair_second", [](const Explanation& e) { return index_to(e.pair_second); }},
    {"source", [](const Explanation& e) { return val(e.source); }},
    {"source_row", [](const Explanation& e) { return index_to(e.source_row); }},
    {"lines", [](const Explanation& e) { return texts_to(e.lines); }},
    {"text", [](const Explanation& e) { return val(e.text); }},
    {"numbers", [](const Explanation& e) { return copy_out(e.numbers); }},
    {"terms", [](const Explanation& e) { return terms_to(e.terms); }},
};

val explanation_to(const Explanation& e) {
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
// view, or overwrite the block). A larger one is a fresh copy.

constexpr std::size_t kScratchNumbers = 32 * 1024;  // 256 KB, allocated once on first use

double* run_scratch() {
  static std::vector<double> block(kScratchNumbers);
  return block.data();
}

// `packed`: the count of numbers in the scratch block, or a Float64Array.
attn::Problem problem_from(const val& packed) {
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

// A record packed by its field list (the trace's kTraceFields, or decode's, tiles', ...).
template <class T, std::size_t N>
val record_to_packed(const attn::wire::Field<T> (&fields)[N], const T& subject) {
  attn::wire::Writer count;
  attn::wire::write_record(count, fields, subject);
  const std::size_t n = count.size();
  const bool scratch = n <= kScratchNumbers;
  std::vector<double> fresh(scratch ? 0 : n);
  double* const start = scratch ? run_scratch() : fresh.data();
  attn::wire::Writer out(start);
  attn::wire::write_record(out, fields, subject);
  if (out.size() != n) fail("packed record: size mismatch");
  return scratch ? val(emscripten::typed_memory_view(n, start)) : copy_out(fresh);
}

val trace_to_packed(const attn::wire::Run& trace) { return record_to_packed(attn::wire::kTraceFields, trace); }

// ---- the raw API ------------------------------------------------------------------------------

val run_js(val packed) {
  return guarded([&] {
    const attn::Problem problem = problem_from(packed);
    return record_to_packed(attn::wire::kTraceFields, attn::wire::Run{attn::run(problem), problem.options});
  });
}

// The backward pass (cpp/gradients.h): the trace with its gradient steps and the loss, packed
// as the record kGradientsFields; dO comes in the problem's own slot.
val gradients_js(val packed) {
  return guarded([&] {
    const attn::Problem problem = problem_from(packed);
    const attn::Gradients g = attn::gradients(problem);
    return record_to_packed(attn::wire::kGradientsFields,
                            attn::wire::GradientsRun{{g.trace, problem.options}, g.loss});
  });
}

// decode, tiles and the online softmax (cpp/practice.h): packed records, read like the trace.
val decode_js(val packed) {
  return guarded([&] { return record_to_packed(attn::wire::kDecodeFields, attn::decode(problem_from(packed))); });
}

// The block sizes as JS numbers, checked before they become integers.
val tiles_js(val packed, double block_q, double block_k) {
  return guarded([&] {
    const attn::Problem problem = problem_from(packed);
    attn::check_block_size("block_q", block_q);
    attn::check_block_size("block_k", block_k);
    const auto size = [](double b) { return static_cast<Eigen::Index>(std::min(b, 1e9)); };
    return record_to_packed(attn::wire::kTilesFields, attn::tiles(problem, size(block_q), size(block_k)));
  });
}

// `row`: a Float64Array; `precision`: a code of the wire's precision list.
val online_softmax_js(val row, bool subtract_max, double precision) {
  return guarded([&] {
    std::vector<double> numbers(row["length"].as<std::size_t>());
    copy_in(row, numbers.data(), numbers.size());
    const auto p = static_cast<attn::Precision>(
        attn::wire::decode(attn::wire::codes("precision", attn::wire::kPrecisions), precision));
    return record_to_packed(attn::wire::kOnlineSoftmaxFields, attn::online_softmax(numbers, subtract_max, p));
  });
}

// The scratch block's address (see "the packed run") and its size in numbers.
val run_scratch_js() {
  val out = val::array();
  out.set(0, static_cast<double>(reinterpret_cast<std::uintptr_t>(run_scratch())));
  out.set(1, static_cast<double>(kScratchNumbers));
  return out;
}

val explain_js(val packed, std::string step, int head, double row, double col) {
  return guarded([&] {
    return explanation_to(attn::explain(problem_from(packed), step, head,
                                        static_cast<Eigen::Index>(row),
                                        static_cast<Eigen::Index>(col)));
  });
}

// The matrix ({rows, cols, data}) and the name of the format it was read as (`format`).
val parse_matrix_js(std::string text, std::string name) {
  return guarded([&] {
    attn::ParsedMatrix parsed = attn::parse_matrix_detailed(text, name);
    val out = matrix_to(parsed.values);
    out.set("format", parsed.format);
    return out;
  });
}

// `row`, `col` from 1 (they only name the cell in messages).
val parse_cell_js(std::string text, std::string name, double row, double col) {
  return guarded([&] {
    return val(attn::parse_cell(text, name, static_cast<std::size_t>(row), static_cast<std::size_t>(col)));
  });
}

// draws: [{ kind: 'randn'|'normal'|'rand'|'randint', rows, cols, loc, scale, low, high }, ...]
// taken in order from ONE stream seeded once, as a notebook does after np.random.seed(seed).
val random_js(double seed, val draws) {
  return guarded([&] {
    attn::RandomState stream(static_cast<std::uint32_t>(seed));
    val out = val::array();
    const auto count = draws["length"].as<unsigned>();
    for (unsigned i = 0; i < count; ++i) {
      const val d = draws[i];
      const auto kind = d["kind"].as<std::string>();
      const auto rows = static_cast<Eigen::Index>(d["rows"].as<double>());
      const auto cols = static_cast<Eigen::Index>(d["cols"].as<double>());
      attn::Matrix m;
      if (kind == "randn") {
        m = stream.randn(rows, cols);
      } else if (kind == "normal") {
        m = stream.normal(rows, cols, d["loc"].as<double>(), d["scale"].as<double>());
      } else if (kind == "rand") {
        m = stream.rand(rows, cols);
      } else if (kind == "randint") {
        m = stream.randint(static_cast<std::int64_t>(d["low"].as<double>()),
                           static_cast<std::int64_t>(d["high"].as<double>()), rows, cols);
      } else {
        fail("unknown random kind '" + kind + "'");
      }
      out.call<void>("push", matrix_to(m));
    }
    return out;
  });
}

}  // namespace

EMSCRIPTEN_BINDINGS(attention_explorer) {
  emscripten::function("_run", &run_js);
  emscripten::function("_runScratch", &run_scratch_js);
  emscripten::function("_decode", &decode_js);
  emscripten::function("_tiles", &tiles_js);
  emscripten::function("_onlineSoftmax", &online_softmax_js);
  emscripten::function("_explain", &explain_js);
  emscripten::function("_gradients", &gradients_js);
  emscripten::function("_parseMatrix", &parse_matrix_js);
  emscripten::function("_parseCell", &parse_cell_js);
  emscripten::function("_random", &random_js);
  emscripten::function("_wireLayout", &attn::wire::layout);
  emscripten::constant("_maxTokens", static_cast<double>(attn::kMaxTokens));
}
