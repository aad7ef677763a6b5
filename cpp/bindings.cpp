// The trace module's embind file: the core's run / explain / parse / random behind a stateless,
// copy-out API. The output-only fast path and _heapStats are bound in bindings_fast.cpp, which
// both modules link (attention.wasm, and the lean attention-fast.wasm of `attention-explorer/fast`).
//
// Everything here is private plumbing for web/lib/engine.js, which validates the user's JSON and
// hands over an already-normalised problem:
//   matrix  = string (given to parse_matrix)  |  { rows, cols, data: Float64Array (row-major) }
//   bias    = string                          |  Float64Array
//   options = { layout: 'rows'|'columns', scaleKind: 'sqrt_dk'|'none'|'multiply'|'divide',
//               scaleValue, causal, mask?: matrix, maskKind: 'keep'|'additive', softcap,
//               heads, kvHeads, precision: 'float64'|'float32' }
// Results are fresh JS objects whose arrays are Float64Array copies: nothing returned points into
// wasm memory (which memory growth would detach) and nothing needs .delete().
// A C++ exception becomes a JS Error carrying e.what() (TOOLCHAIN.md quirk 6), returned for
// engine.js to throw (see guarded()).

#include <emscripten/bind.h>
#include <emscripten/emscripten.h>
#include <emscripten/val.h>

#include <cstdint>
#include <exception>
#include <string>
#include <utility>
#include <vector>

#include "attention.h"
#include "numpy_random.h"
#include "parse.h"

using emscripten::val;

namespace {

// Runs `body`; a C++ exception becomes a JS Error carrying e.what(), which is RETURNED and then
// thrown by web/lib/engine.js. Throwing it from here (val::throw_) would unwind the wasm stack
// without running destructors, leaking embind's argument buffers and every C++ object of the
// call on each error; returning lets everything be destroyed normally.
template <class Body>
val guarded(Body&& body) {
  std::string message;
  try {
    return body();
  } catch (const std::exception& e) {
    message = e.what();
  } catch (...) {
    message = "unknown C++ exception";
  }
  return val::global("Error").new_(message);
}

[[noreturn]] void fail(const std::string& message) { throw attn::InputError(message); }

// ---- JS -> C++ -------------------------------------------------------------------------------

bool present(const val& v) { return !v.isUndefined() && !v.isNull(); }

// Copies a JS Float64Array (or array of numbers) into `out`, which has its final size already.
void copy_in(const val& source, double* out, std::size_t n) {
  if (n == 0) return;
  // No allocation happens between making this view and filling it, so it cannot detach.
  val(emscripten::typed_memory_view(n, out)).call<void>("set", source);
}

attn::Matrix matrix_from(const val& v, const std::string& name) {
  if (v.isString()) return attn::parse_matrix(v.as<std::string>(), name);
  const double rows = v["rows"].as<double>();
  const double cols = v["cols"].as<double>();
  if (!(rows >= 1 && cols >= 1) || rows > 1e9 || cols > 1e9) fail(name + " is empty");
  const val data = v["data"];
  const auto n = static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);
  if (data["length"].as<double>() != static_cast<double>(n)) {
    fail(name + ": " + std::to_string(n) + " values expected for a " +
         std::to_string(static_cast<long long>(rows)) + "x" +
         std::to_string(static_cast<long long>(cols)) + " matrix");
  }
  attn::Matrix m(static_cast<Eigen::Index>(rows), static_cast<Eigen::Index>(cols));
  copy_in(data, m.data(), n);
  return m;
}

attn::Vector vector_from(const val& v, const std::string& name) {
  if (v.isString()) {
    const attn::Matrix m = attn::parse_matrix(v.as<std::string>(), name);
    if (m.rows() != 1 && m.cols() != 1) {
      fail(name + " must be a list of numbers, got a " + std::to_string(m.rows()) + "x" +
           std::to_string(m.cols()) + " matrix");
    }
    return Eigen::Map<const attn::Vector>(m.data(), m.size());
  }
  const auto n = static_cast<std::size_t>(v["length"].as<double>());
  if (n == 0) fail(name + " is empty");
  attn::Vector out(static_cast<Eigen::Index>(n));
  copy_in(v, out.data(), n);
  return out;
}

void read_matrix(const val& problem, const char* key, std::optional<attn::Matrix>& out) {
  const val v = problem[key];
  if (present(v)) out = matrix_from(v, key);
}

void read_vector(const val& problem, const char* key, std::optional<attn::Vector>& out) {
  const val v = problem[key];
  if (present(v)) out = vector_from(v, key);
}

attn::Options options_from(const val& o) {
  attn::Options options;
  if (!present(o)) return options;
  if (present(o["layout"])) {
    const auto layout = o["layout"].as<std::string>();
    options.layout = layout == "columns" ? attn::Layout::Columns : attn::Layout::Rows;
  }
  if (present(o["scaleKind"])) {
    const auto kind = o["scaleKind"].as<std::string>();
    using K = attn::Scale::Kind;
    options.scale.kind = kind == "none"       ? K::None
                         : kind == "multiply" ? K::Multiply
                         : kind == "divide"   ? K::DivideBy
                                              : K::SqrtDk;
    if (present(o["scaleValue"])) options.scale.value = o["scaleValue"].as<double>();
  }
  if (present(o["causal"])) options.causal = o["causal"].as<bool>();
  if (present(o["mask"])) options.mask = matrix_from(o["mask"], "options.mask");
  if (present(o["maskKind"])) {
    options.mask_kind = o["maskKind"].as<std::string>() == "keep" ? attn::MaskKind::Keep
                                                                  : attn::MaskKind::Additive;
  }
  if (present(o["softcap"])) options.softcap = o["softcap"].as<double>();
  if (present(o["heads"])) options.heads = o["heads"].as<int>();
  if (present(o["kvHeads"])) options.kv_heads = o["kvHeads"].as<int>();
  if (present(o["precision"])) {
    options.precision = o["precision"].as<std::string>() == "float32" ? attn::Precision::Float32
                                                                      : attn::Precision::Float64;
  }
  return options;
}

attn::Problem problem_from(const val& p) {
  attn::Problem problem;
  read_matrix(p, "Q", problem.Q);
  read_matrix(p, "K", problem.K);
  read_matrix(p, "V", problem.V);
  read_matrix(p, "X", problem.X);
  read_matrix(p, "X_kv", problem.X_kv);
  read_matrix(p, "W_Q", problem.W_Q);
  read_matrix(p, "W_K", problem.W_K);
  read_matrix(p, "W_V", problem.W_V);
  read_matrix(p, "W_O", problem.W_O);
  read_vector(p, "b_Q", problem.b_Q);
  read_vector(p, "b_K", problem.b_K);
  read_vector(p, "b_V", problem.b_V);
  read_vector(p, "b_O", problem.b_O);
  problem.options = options_from(p["options"]);
  return problem;
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

val vector_to(const attn::Vector& v) { return copy_out(v.data(), static_cast<std::size_t>(v.size())); }

val head_to(int head) { return head < 0 ? val::null() : val(head); }

val trace_to(const attn::Trace& trace) {
  val steps = val::array();
  for (const attn::Step& step : trace.steps) {
    val s = matrix_to(step.values);
    s.set("id", step.id);
    s.set("head", head_to(step.head));
    steps.call<void>("push", s);
  }
  val warnings = val::array();
  for (const std::string& w : trace.warnings) warnings.call<void>("push", w);
  val facts = val::array();
  for (const attn::HeadFacts& f : trace.facts) {
    val o = val::object();
    o.set("head", f.head);
    o.set("scores_variance", f.scores_variance);
    o.set("scaled_variance", f.scaled_variance);
    o.set("weight_sums", vector_to(f.weight_sums));
    o.set("max_weight", vector_to(f.max_weight));
    o.set("entropy", vector_to(f.entropy));
    val masked = val::array();
    for (int row : f.fully_masked) masked.call<void>("push", row);
    o.set("fully_masked", masked);
    facts.call<void>("push", o);
  }
  val out = val::object();
  out.set("steps", steps);
  out.set("output", matrix_to(trace.output));
  out.set("warnings", warnings);
  out.set("facts", facts);
  out.set("scale", trace.scale);
  out.set("d_k", trace.d_k);
  out.set("d_v", trace.d_v);
  out.set("heads", trace.heads);
  out.set("kv_heads", trace.kv_heads);
  out.set("queries", static_cast<double>(trace.queries));
  out.set("keys", static_cast<double>(trace.keys));
  return out;
}

val explanation_to(const attn::Explanation& e) {
  val out = val::object();
  out.set("kind", e.kind);
  out.set("step", e.step);
  out.set("head", head_to(e.head));
  out.set("row", static_cast<double>(e.row));
  out.set("col", static_cast<double>(e.col));
  out.set("value", e.value);
  out.set("left", copy_out(e.left));
  out.set("right", copy_out(e.right));
  out.set("products", copy_out(e.products));
  out.set("has_bias", e.has_bias);
  out.set("bias", e.bias);
  out.set("input", e.input);
  out.set("factor", e.factor);
  out.set("divisor", e.divisor);
  out.set("additive", e.additive);
  out.set("logits", copy_out(e.logits));
  out.set("shifted", copy_out(e.shifted));
  out.set("exps", copy_out(e.exps));
  out.set("max", e.max);
  out.set("exp_sum", e.exp_sum);
  out.set("source_head", e.source_head);
  out.set("source_col", static_cast<double>(e.source_col));
  return out;
}

// ---- the raw API ------------------------------------------------------------------------------

val run_js(val problem) {
  return guarded([&] { return trace_to(attn::run(problem_from(problem))); });
}

val explain_js(val problem, std::string step, int head, double row, double col) {
  return guarded([&] {
    return explanation_to(attn::explain(problem_from(problem), step, head,
                                        static_cast<Eigen::Index>(row),
                                        static_cast<Eigen::Index>(col)));
  });
}

val parse_matrix_js(std::string text, std::string name) {
  return guarded([&] { return matrix_to(attn::parse_matrix(text, name)); });
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

// Diagnostics for leak tests: the wasm memory size and the bytes malloc has handed out.

}  // namespace

EMSCRIPTEN_BINDINGS(attention_explorer) {
  emscripten::function("_run", &run_js);
  emscripten::function("_explain", &explain_js);
  emscripten::function("_parseMatrix", &parse_matrix_js);
  emscripten::function("_random", &random_js);
  emscripten::constant("_maxTokens", static_cast<double>(attn::kMaxTokens));
}
