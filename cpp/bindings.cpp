// The core module's embind file (attention.wasm): run / explain / parse (matrices and cells) /
// random behind a stateless, copy-out API, and _wireLayout (the wire table, cpp/wire.h). The
// output-only fast path and _heapStats are bound in bindings_fast.cpp, which both fast-capable
// modules link (attention.wasm, and the lean attention-fast.wasm of `attention-explorer/fast`).
// decode, tiles, the online softmax and the gradients live in the walkthroughs module
// (bindings_walkthroughs.cpp), loaded on demand.
//
// Private plumbing for web/lib/engine.js. `_run` and `_explain` take the problem packed as
// numbers (cpp/wire.h), written by web/lib/wire.js into this module's scratch block (their
// argument is then the count of numbers) or, when it does not fit, passed as one Float64Array
// (bindings_shared.h). `_run` returns the trace packed (cpp/wire.h kTraceFields) in one
// Float64Array, a view of the module's memory that engine.js reads at once (bindings_shared.h).
// Other results are fresh JS objects whose arrays are Float64Array copies: nothing else returned
// points into wasm memory (which memory growth would detach) and nothing needs .delete(). Every C++ exception comes
// back as a returned Error (wire::guarded).

#include <emscripten/bind.h>
#include <emscripten/emscripten.h>
#include <emscripten/val.h>

#include <cstdint>
#include <string>
#include <vector>

#include "attention.h"
#include "numpy_random.h"
#include "parse.h"
#include "bindings_shared.h"
#include "wire_embind.h"

using attn::wire::guarded;
using emscripten::val;
using namespace attn::bindings;

namespace {

// ---- C++ -> JS -------------------------------------------------------------------------------

val matrix_to(const attn::Matrix& m) {
  val out = val::object();
  out.set("rows", static_cast<double>(m.rows()));
  out.set("cols", static_cast<double>(m.cols()));
  out.set("data", copy_out(m.data(), static_cast<std::size_t>(m.size())));
  return out;
}

// ---- the raw API ------------------------------------------------------------------------------

val run_js(val packed) {
  return guarded([&] {
    const attn::Problem problem = problem_from(packed);
    return record_to_packed(attn::wire::kTraceFields, attn::wire::Run{attn::run(problem), problem.options});
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
  return guarded(
      [&] { return val(attn::parse_cell(text, name, static_cast<std::size_t>(row), static_cast<std::size_t>(col))); });
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
  emscripten::function("_explain", &explain_js<attn::explain_forward>);
  emscripten::function("_parseMatrix", &parse_matrix_js);
  emscripten::function("_parseCell", &parse_cell_js);
  emscripten::function("_random", &random_js);
  emscripten::function("_wireLayout", &attn::wire::layout);
  emscripten::constant("_maxTokens", static_cast<double>(attn::kMaxTokens));
}
