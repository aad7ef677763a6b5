// libFuzzer target: arbitrary bytes -> attn::Problem (problem_decoder.h) -> attn::run and
// attn::explain. Whatever the problem, the core must either throw attn::InputError with a
// readable message, or return a sound trace (trace_invariants.h): steps in order with their
// shapes, weights in [0, 1] without NaN, rows summing to 1 (0 when fully masked), warnings
// for fully masked queries and non-finite outputs; with tame inputs every step is finite.
// explain() of cells picked by the bytes returns the trace's value or an InputError.
// Any other exception, a sanitizer report or a violated invariant aborts (a finding).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "attention.h"
#include "problem_decoder.h"
#include "trace_invariants.h"

namespace {

[[noreturn]] void finding(const std::string& what) {
  std::fprintf(stderr, "\n*** fuzz_run finding: %s\n", what.c_str());
  std::fflush(stderr);
  std::abort();
}

void check_message(const std::string& message) {
  if (message.empty()) finding("an InputError with an empty message");
  if (message.size() > 600) finding("an InputError message of " + std::to_string(message.size()) + " characters");
  for (unsigned char c : message) {
    if (c < 0x20 || c == 0x7f) finding("an InputError message with a control character: " + message);
  }
}

bool same(double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); }

/// The signatures of the core bugs this target found (ROBUSTNESS.md, "Findings"; all fixed in
/// 836f906). With ATTN_FUZZ_SKIP_KNOWN=1 in the environment an input showing one of them is not
/// a finding, so a run can look past a known bug while it is being fixed; by default (and in
/// `npm test`) every violation is a finding.
///  B1: softmax as exp(x - (log Σ + max)) loses the log Σ term when |max| is large, so weights
///      of large, nearly equal logits do not sum to 1 (float64 from ~1e7, float32 from ~1e3).
///  B2: a NaN logit (overflow: inf - inf in QKᵀ, 0 · inf, float32 inputs beyond 3.4e38)
///      gives NaN weights.
///  B3: float32 rounds a valid scale or softcap to 0 or inf (softcap 1e-50 silently off,
///      divisor 1e-50 gives inf logits).
///  B4: explain() of the output step of a multi-head problem without W_O dereferences the
///      empty W_O (undefined behaviour: a 9 GB allocation or a crash), so it is not even called.
const char* known_issue(const attn::Problem& p, const attn::Trace& t) {
  const bool f32 = p.options.precision == attn::Precision::Float32;
  const double big = f32 ? 1e3 : 1e6;
  for (const attn::Step& s : t.steps) {
    if (s.id == "scores" || s.id == "scaled" || s.id == "softcapped" || s.id == "masked") {
      if (s.values.hasNaN()) return "B2";
      for (Eigen::Index i = 0; i < s.values.size(); ++i) {
        const double v = s.values.data()[i];
        if (std::isfinite(v) && std::abs(v) > big) return "B1";
      }
    }
  }
  if (f32) {
    const attn::Scale& scale = p.options.scale;
    const bool scaled = scale.kind == attn::Scale::Kind::Multiply || scale.kind == attn::Scale::Kind::DivideBy;
    const float as_float = static_cast<float>(scale.value);
    if (scaled && (!std::isfinite(as_float) || (as_float == 0 && scale.value != 0))) return "B3";
    if (p.options.softcap > 0 &&
        !(static_cast<float>(p.options.softcap) > 0 && std::isfinite(static_cast<float>(p.options.softcap)))) {
      return "B3";
    }
  }
  return nullptr;
}

bool skip_known() {
  static const bool skip = [] {
    const char* v = std::getenv("ATTN_FUZZ_SKIP_KNOWN");
    return v != nullptr && v[0] == '1';
  }();
  return skip;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const attn::Problem problem = attn::fuzzing::decode_problem(data, size);
  attn::Trace trace;
  try {
    trace = attn::run(problem);
  } catch (const attn::InputError& e) {
    check_message(e.what());
    return 0;
  } catch (const std::exception& e) {
    finding(std::string("run threw a non-InputError exception: ") + e.what());
  }

  const std::string broken = attn::invariants::check_trace(problem, trace);
  if (!broken.empty()) {
    const char* known = known_issue(problem, trace);
    if (!(known && skip_known())) finding("run: " + broken + (known ? std::string(" (known: ") + known + ")" : ""));
    return 0;
  }
  if (attn::fuzzing::is_tame(problem)) {
    const std::string non_finite = attn::invariants::check_all_finite(trace);
    if (!non_finite.empty()) finding("tame inputs, yet " + non_finite);
    const std::string wrong = attn::invariants::check_against_reference(problem, trace);
    if (!wrong.empty()) {
      const char* known = known_issue(problem, trace);
      if (!(known && skip_known()))
        finding("tame inputs, yet " + wrong + (known ? std::string(" (known: ") + known + ")" : ""));
    }
  }

  // explain() on up to three cells chosen by the last bytes (in range or not).
  // Skipped for big problems: each explain() recomputes the whole trace.
  const bool small = trace.queries * trace.keys <= 4096 && trace.steps.size() <= 64;
  const size_t picks = size >= 4 && small ? 3 : 0;
  for (size_t k = 0; k < picks; ++k) {
    const uint8_t pick = data[size - 1 - k];
    const attn::Step& s = trace.steps[pick % trace.steps.size()];
    if (skip_known() && s.id == "output" && trace.heads > 1 && !problem.W_O) continue;  // B4
    const Eigen::Index row = (pick >> 4) % (s.values.rows() + 1);                       // sometimes one past the end
    const Eigen::Index col = (pick >> 2) % (s.values.cols() + 1);
    try {
      const attn::Explanation e = attn::explain(problem, s.id, s.head, row, col);
      if (row >= s.values.rows() || col >= s.values.cols()) {
        finding("explain accepted a cell outside step " + s.id);
      }
      if (!same(e.value, s.values(row, col))) finding("explain's value differs from the trace for step " + s.id);
      if (e.left.size() != e.right.size() || e.products.size() != e.left.size()) {
        finding("explain's term lists differ in length for step " + s.id);
      }
      if (e.kind == "softmax" && (e.logits.size() != e.exps.size() || std::isnan(e.exp_sum))) {
        finding("explain's softmax terms are inconsistent for step " + s.id);
      }
    } catch (const attn::InputError& e) {
      if (row < s.values.rows() && col < s.values.cols()) {
        finding("explain refused an existing cell of step " + s.id + ": " + e.what());
      }
      check_message(e.what());
    } catch (const std::exception& e) {
      finding(std::string("explain threw a non-InputError exception: ") + e.what());
    }
  }
  // A step that does not exist.
  try {
    attn::explain(problem, "no_such_step", 0, 0, 0);
    finding("explain accepted an unknown step");
  } catch (const attn::InputError& e) {
    check_message(e.what());
  }
  return 0;
}
