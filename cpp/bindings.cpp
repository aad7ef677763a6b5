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
// `_run` also takes the problem packed as numbers (written into a scratch block of wasm memory, or
// one Float64Array) and returns its trace packed in one Float64Array (see "the packed run"
// below): per-property val reads and writes cost a JS call each, which made marshalling a small
// trace several times dearer than computing it.
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

// ---- the packed run ----------------------------------------------------------------------------
//
// For problems without text (a problem with text comes as the object above, for the core's
// parser). The problem is packed as [kPackedHeader numbers][the data of every matrix given]:
//   13 pairs (rows, cols) for Q, K, V, X, X_kv, W_Q, W_K, W_V, W_O, b_Q, b_K, b_V, b_O; (0, 0) when
//   absent, (n, 1) for a bias. Then 11 options, NaN when not given (the core's default applies):
//   layout (0 rows, 1 columns), scaleKind (0 sqrt_dk, 1 none, 2 multiply, 3 divide), scaleValue,
//   causal (0/1), mask rows, mask cols (0, 0: none), maskKind (0 keep, 1 additive), softcap, heads,
//   kvHeads, precision (0 float64, 1 float32). The data follows in the same order, mask last.
// Up to kScratchNumbers, engine.js writes it straight into the scratch block (its address from
// _runScratch(), fixed for the module's life) and passes `_run` the count; a larger problem comes
// as one Float64Array.
// The trace comes back packed as one Float64Array: scale, d_k, d_v, heads, kv_heads, queries,
//   keys, step count, facts count; per step: head (-1: none), rows, cols, values; the output:
//   rows, cols, values; per head's facts: head, scores_variance, scaled_variance, then
//   weight_sums, max_weight, entropy, fully_masked, each as its length followed by its values;
//   then per step its id, and the warning count and each warning, each text as its length
//   followed by its UTF-8 bytes. Up to kScratchNumbers it is a view of the scratch block (no
//   copy): engine.js reads it at once, before anything else runs in the module (which could grow
//   the memory and detach the view, or overwrite the block). A larger one is a fresh copy.
// web/lib/engine.js (packedRun, traceFrom) is the other side.

constexpr std::size_t kPackedSlots = 13;
constexpr std::size_t kPackedHeader = 2 * kPackedSlots + 11;
constexpr std::size_t kScratchNumbers = 32 * 1024;  // 256 KB, allocated once on first use

double* run_scratch() {
  static std::vector<double> block(kScratchNumbers);
  return block.data();
}

attn::Problem problem_from_packed(const double* h, std::size_t length) {
  if (length < kPackedHeader) fail("packed problem: too short");
  std::size_t at = kPackedHeader;
  // The next rows×cols numbers after the header, as a row-major matrix named `name`.
  auto take = [&](double rows, double cols, const char* name) {
    if (!(rows >= 1 && cols >= 1) || rows > 1e9 || cols > 1e9) fail(std::string(name) + " is empty");
    const double n = rows * cols;
    if (n > static_cast<double>(length - at)) fail(std::string(name) + ": packed data too short");
    const double* data = h + at;
    at += static_cast<std::size_t>(n);
    return Eigen::Map<const attn::Matrix>(data, static_cast<Eigen::Index>(rows),
                                          static_cast<Eigen::Index>(cols));
  };
  using MatrixSlot = std::optional<attn::Matrix> attn::Problem::*;
  using BiasSlot = std::optional<attn::Vector> attn::Problem::*;
  // The slots' order of the packed layout (engine.js's PACKED_SLOTS).
  const std::pair<const char*, MatrixSlot> matrices[] = {
      {"Q", &attn::Problem::Q},     {"K", &attn::Problem::K},     {"V", &attn::Problem::V},
      {"X", &attn::Problem::X},     {"X_kv", &attn::Problem::X_kv}, {"W_Q", &attn::Problem::W_Q},
      {"W_K", &attn::Problem::W_K}, {"W_V", &attn::Problem::W_V}, {"W_O", &attn::Problem::W_O}};
  const std::pair<const char*, BiasSlot> biases[] = {
      {"b_Q", &attn::Problem::b_Q}, {"b_K", &attn::Problem::b_K},
      {"b_V", &attn::Problem::b_V}, {"b_O", &attn::Problem::b_O}};
  attn::Problem p;
  std::size_t slot = 0;
  auto given_slot = [&] { return !(h[2 * slot] == 0 && h[2 * slot + 1] == 0); };
  for (const auto& [name, member] : matrices) {
    if (given_slot()) p.*member = take(h[2 * slot], h[2 * slot + 1], name);
    ++slot;
  }
  for (const auto& [name, member] : biases) {
    if (given_slot()) {
      const auto m = take(h[2 * slot], h[2 * slot + 1], name);
      p.*member = Eigen::Map<const attn::Vector>(m.data(), m.size());
    }
    ++slot;
  }

  const double* o = h + 2 * kPackedSlots;
  auto given = [](double v) { return v == v; };  // NaN: not given
  attn::Options& options = p.options;
  if (given(o[0])) options.layout = o[0] == 1 ? attn::Layout::Columns : attn::Layout::Rows;
  if (given(o[1])) {
    using K = attn::Scale::Kind;
    options.scale.kind = o[1] == 1 ? K::None : o[1] == 2 ? K::Multiply : o[1] == 3 ? K::DivideBy : K::SqrtDk;
    if (given(o[2])) options.scale.value = o[2];
  }
  if (given(o[3])) options.causal = o[3] != 0;
  if (!(o[4] == 0 && o[5] == 0)) {
    options.mask = take(o[4], o[5], "options.mask");
  }
  if (given(o[6])) options.mask_kind = o[6] == 0 ? attn::MaskKind::Keep : attn::MaskKind::Additive;
  if (given(o[7])) options.softcap = o[7];
  if (given(o[8])) options.heads = static_cast<int>(o[8]);
  if (given(o[9])) options.kv_heads = static_cast<int>(o[9]);
  if (given(o[10])) options.precision = o[10] == 1 ? attn::Precision::Float32 : attn::Precision::Float64;
  if (at != length) fail("packed problem: " + std::to_string(length - at) + " numbers left over");
  return p;
}

attn::Problem problem_from_packed(const val& packed) {
  const double length = packed["length"].as<double>();
  if (!(length >= kPackedHeader) || length > 4.0e9) fail("packed problem: too short");
  std::vector<double> in(static_cast<std::size_t>(length));
  copy_in(packed, in.data(), in.size());
  return problem_from_packed(in.data(), in.size());
}

std::size_t text_size(const std::string& text) { return 1 + text.size(); }

val trace_to_packed(const attn::Trace& trace) {
  std::size_t n = 9 + 2 + static_cast<std::size_t>(trace.output.size()) + 1;
  for (const attn::Step& step : trace.steps) {
    n += 3 + static_cast<std::size_t>(step.values.size()) + text_size(step.id);
  }
  for (const attn::HeadFacts& f : trace.facts) {
    n += 7 + static_cast<std::size_t>(f.weight_sums.size() + f.max_weight.size() + f.entropy.size()) +
         f.fully_masked.size();
  }
  for (const std::string& w : trace.warnings) n += text_size(w);
  const bool scratch = n <= kScratchNumbers;
  std::vector<double> fresh(scratch ? 0 : n);
  double* const start = scratch ? run_scratch() : fresh.data();
  double* out = start;
  auto put_all = [&](const double* data, Eigen::Index count) {
    for (Eigen::Index i = 0; i < count; ++i) out[i] = data[i];
    out += count;
  };
  auto put_text = [&](const std::string& text) {
    *out++ = static_cast<double>(text.size());
    for (unsigned char c : text) *out++ = c;
  };
  *out++ = trace.scale;
  *out++ = trace.d_k;
  *out++ = trace.d_v;
  *out++ = trace.heads;
  *out++ = trace.kv_heads;
  *out++ = static_cast<double>(trace.queries);
  *out++ = static_cast<double>(trace.keys);
  *out++ = static_cast<double>(trace.steps.size());
  *out++ = static_cast<double>(trace.facts.size());
  for (const attn::Step& step : trace.steps) {
    *out++ = step.head;
    *out++ = static_cast<double>(step.values.rows());
    *out++ = static_cast<double>(step.values.cols());
    put_all(step.values.data(), step.values.size());
  }
  *out++ = static_cast<double>(trace.output.rows());
  *out++ = static_cast<double>(trace.output.cols());
  put_all(trace.output.data(), trace.output.size());
  for (const attn::HeadFacts& f : trace.facts) {
    *out++ = f.head;
    *out++ = f.scores_variance;
    *out++ = f.scaled_variance;
    for (const attn::Vector* v : {&f.weight_sums, &f.max_weight, &f.entropy}) {
      *out++ = static_cast<double>(v->size());
      put_all(v->data(), v->size());
    }
    *out++ = static_cast<double>(f.fully_masked.size());
    for (int row : f.fully_masked) *out++ = row;
  }
  for (const attn::Step& step : trace.steps) put_text(step.id);
  *out++ = static_cast<double>(trace.warnings.size());
  for (const std::string& w : trace.warnings) put_text(w);
  if (static_cast<std::size_t>(out - start) != n) fail("packed trace: size mismatch");
  return scratch ? val(emscripten::typed_memory_view(n, start)) : copy_out(fresh);
}

// ---- the raw API ------------------------------------------------------------------------------

// `problem`: the count of numbers packed in the scratch block, a packed Float64Array, or the
// object described at the top (engine.js sends that one when the problem holds text for the
// core's parser). The trace comes back packed in every case.
val run_js(val problem) {
  static const val float64_array = val::global("Float64Array");
  return guarded([&] {
    if (problem.isNumber()) {
      const double count = problem.as<double>();
      if (!(count >= 0 && count <= kScratchNumbers)) fail("packed problem: does not fit the scratch block");
      return trace_to_packed(attn::run(problem_from_packed(run_scratch(), static_cast<std::size_t>(count))));
    }
    return trace_to_packed(attn::run(problem.instanceof(float64_array) ? problem_from_packed(problem)
                                                                       : problem_from(problem)));
  });
}

// The scratch block's address (see "the packed run") and its size in numbers.
val run_scratch_js() {
  val out = val::array();
  out.set(0, static_cast<double>(reinterpret_cast<std::uintptr_t>(run_scratch())));
  out.set(1, static_cast<double>(kScratchNumbers));
  return out;
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
  emscripten::function("_runScratch", &run_scratch_js);
  emscripten::function("_explain", &explain_js);
  emscripten::function("_parseMatrix", &parse_matrix_js);
  emscripten::function("_random", &random_js);
  emscripten::constant("_maxTokens", static_cast<double>(attn::kMaxTokens));
}
