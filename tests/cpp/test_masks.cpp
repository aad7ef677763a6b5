// ALiBi, sliding windows, sink tokens, sink logits, the mask fill and the mask step: their numbers,
// facts, worked calculations, formulas and error messages (issue 13, the part after the scores).
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "../fuzz/trace_invariants.h"
#include "attention.h"
#include "said.h"
#include "trace_lookup.h"
#include "numpy_random.h"
#include "english.h"

using attn::Matrix;
using attn::Problem;
using attn::Vector;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

/// Q, K, V given directly: L queries, S keys, `heads` heads of d_k = d_v = 2 (rows layout).
Problem random_problem(unsigned seed, int L, int S, int heads = 1) {
  attn::RandomState rng(seed);
  Problem p;
  p.Q = rng.randn(L, 2 * heads);
  p.K = rng.randn(S, 2 * heads);
  p.V = rng.randn(S, 2 * heads);
  p.options.heads = heads;
  return p;
}

/// A boolean keep-mask (1 keeps) from a rule on (query, key).
template <class Rule>
Matrix keep_mask(Eigen::Index L, Eigen::Index S, Rule keeps) {
  Matrix m(L, S);
  for (Eigen::Index i = 0; i < L; ++i) {
    for (Eigen::Index j = 0; j < S; ++j) m(i, j) = keeps(i, j) ? 1 : 0;
  }
  return m;
}

void check_sound(const Problem& p, const attn::Trace& t) {
  const std::string broken = attn::invariants::check_trace(p, t);
  INFO(broken);
  CHECK(broken.empty());
}

}  // namespace

TEST_CASE("window [inf, 0] without causal is causal", "[masks][window]") {
  Problem causal = random_problem(1, 5, 5);
  causal.options.causal = true;
  Problem window = random_problem(1, 5, 5);
  window.options.window_left = kInf;
  window.options.window_right = 0;
  const attn::Trace a = attn::run(causal), b = attn::run(window);
  REQUIRE(step_ids(a) == step_ids(b));
  for (size_t k = 0; k < a.steps.size(); ++k) {
    INFO(a.steps[k].id);
    CHECK(a.steps[k].values == b.steps[k].values);
  }
  CHECK(a.output == b.output);
  // The same entries hidden, by a different component.
  CHECK(a.facts[0].hidden_by(1, 3) == attn::kHiddenByCausal);
  CHECK(b.facts[0].hidden_by(1, 3) == attn::kHiddenByWindow);
  CHECK(b.facts[0].hidden_by(3, 1) == 0);
  check_sound(causal, a);
  check_sound(window, b);
}

TEST_CASE("a Mistral-style sliding window [w - 1, 0] with causal", "[masks][window]") {
  // Mistral 7B: each token attends to the w previous tokens, itself included.
  const int w = 3;
  Problem p = random_problem(2, 6, 6, 2);
  p.options.causal = true;
  p.options.window_left = w - 1;
  p.options.window_right = 0;
  const attn::Trace t = attn::run(p);
  const Matrix band = keep_mask(6, 6, [&](auto i, auto j) { return j <= i && i - j < w; });
  CHECK(values(t, "mask", 0) == band);
  CHECK(values(t, "mask", 1) == band);
  CHECK(find_step(t, "mask").kind == attn::ValueKind::KeepMask);
  // The same numbers as the band given as a boolean mask.
  Problem same = random_problem(2, 6, 6, 2);
  same.options.mask = band;
  same.options.mask_kind = attn::MaskKind::Keep;
  const attn::Trace u = attn::run(same);
  for (int h = 0; h < 2; ++h) CHECK(values(t, "weights", h) == values(u, "weights", h));
  CHECK(t.output == u.output);
  // Row 5 (from 0) sees keys 3, 4, 5: keys 0-2 are hidden by the window, none by causal.
  CHECK(t.facts[0].hidden_by(5, 2) == attn::kHiddenByWindow);
  CHECK(t.facts[0].hidden_by(5, 3) == 0);
  // A key after the query is beyond the window's right side (0) too: hidden by both.
  CHECK(t.facts[0].hidden_by(2, 4) == (attn::kHiddenByCausal | attn::kHiddenByWindow));
  for (Eigen::Index i = 0; i < 6; ++i) CHECK(t.facts[1].hidden_weight[i] == 0);
  check_sound(p, t);
  CHECK(english_formula(find_step(t, "mask").tex) ==
        "M^{(1)}_{ij} = 1 \\text{ if } j \\le i \\;\\text{(causal)},\\; i - 2 \\le j \\le i \\;\\text{(window)}; "
        "\\text{ else } 0");
  CHECK(english_formula(find_step(t, "mask").text) == "M⁽¹⁾_ij = 1 if j ≤ i (causal), i − 2 ≤ j ≤ i (window); else 0");
}

TEST_CASE("sink tokens stay visible whatever the window", "[masks][window][sinks]") {
  // StreamingLLM: the first tokens stay in the window of every query.
  Problem p = random_problem(3, 6, 6);
  p.options.causal = true;
  p.options.window_left = 1;
  p.options.window_right = 0;
  p.options.sink_tokens = 2;
  const attn::Trace t = attn::run(p);
  const Matrix keep = keep_mask(6, 6, [](auto i, auto j) { return j <= i && (i - j <= 1 || j < 2); });
  CHECK(values(t, "mask") == keep);
  const Matrix& by = t.facts[0].hidden_by;
  CHECK(by(5, 0) == attn::kKeptBySink);  // the window hides it, a sink keeps it
  CHECK(by(5, 1) == attn::kKeptBySink);
  CHECK(by(5, 2) == attn::kHiddenByWindow);
  CHECK(by(5, 4) == 0);
  CHECK(by(0, 1) == (attn::kHiddenByCausal | attn::kKeptBySink));  // a sink does not undo causal

  const attn::Explanation kept = attn::explain(p, "mask", 0, 5, 1);
  CHECK(kept.kind == "mask_entry");
  CHECK(kept.value == 1);
  CHECK_FALSE(kept.hidden);
  CHECK(kept.kept_by_sink);
  CHECK(kept.components.empty());
  const attn::Explanation hidden = attn::explain(p, "masked", 0, 5, 2);
  CHECK(hidden.kind == "mask");
  CHECK(hidden.hidden);
  CHECK(hidden.components == std::vector<std::string>{"window"});
  CHECK(hidden.value == -kInf);
  CHECK(hidden.additive == -kInf);
  CHECK(hidden.input == values(t, "scaled")(5, 2));
  check_sound(p, t);
  CHECK(english_formula(find_step(t, "mask").text) ==
        "M_ij = 1 if j ≤ i (causal), i − 1 ≤ j ≤ i (window) or j < 2 (sink); else 0");
}

TEST_CASE("the mask step says which component hid each entry", "[masks][mask]") {
  Problem p = random_problem(4, 4, 5, 2);
  p.options.causal = true;
  p.options.window_left = 2;
  p.options.window_right = kInf;
  Matrix user = Matrix::Ones(4, 5);
  user(3, 3) = 0;  // the user hides key 3 of query 3
  user(1, 4) = 0;  // also hidden by causal
  p.options.mask = user;
  p.options.mask_kind = attn::MaskKind::Keep;
  const attn::Trace t = attn::run(p);
  const attn::Step& mask = find_step(t, "mask", 1);
  CHECK(mask.kind == attn::ValueKind::KeepMask);
  CHECK(mask.given == std::vector<std::string>{"mask"});
  CHECK(mask.inputs.empty());
  CHECK(mask.row_axis == attn::Axis::Queries);
  CHECK(mask.col_axis == attn::Axis::Keys);
  CHECK(mask.kv_group == 1);
  const Matrix& by = t.facts[1].hidden_by;
  CHECK(by(3, 3) == attn::kHiddenByMask);
  CHECK(by(1, 4) == (attn::kHiddenByCausal | attn::kHiddenByMask));
  CHECK(by(3, 0) == attn::kHiddenByWindow);
  CHECK(by(3, 1) == 0);
  CHECK(values(t, "mask", 1)(3, 3) == 0);
  CHECK(values(t, "mask", 1)(3, 2) == 1);
  const attn::Step& masked = find_step(t, "masked", 1);
  CHECK(masked.inputs == std::vector<int>{static_cast<int>(&find_step(t, "scaled", 1) - t.steps.data()),
                                          static_cast<int>(&mask - t.steps.data())});
  const attn::Explanation e = attn::explain(p, "masked", 1, 1, 4);
  CHECK(e.components == std::vector<std::string>{"causal", "mask"});
  CHECK_FALSE(e.kept_by_sink);
  const attn::Explanation kept = attn::explain(p, "masked", 1, 3, 2);
  CHECK_FALSE(kept.hidden);
  CHECK(kept.components.empty());
  CHECK(kept.value == kept.input);
  check_sound(p, t);
  CHECK(english_formula(mask.text) == "M⁽²⁾_ij = 1 if j ≤ i (causal), i − 2 ≤ j (window), your mask keeps it; else 0");

  // An additive mask: the mask step holds its numbers (-inf where a component hides).
  Matrix additive = Matrix::Zero(4, 5);
  additive(2, 0) = -0.5;
  additive(3, 3) = -kInf;
  p.options.mask = additive;
  p.options.mask_kind = attn::MaskKind::Additive;
  const attn::Trace a = attn::run(p);
  const attn::Step& add = find_step(a, "mask");
  CHECK(add.kind == attn::ValueKind::AdditiveBias);
  CHECK(add.values(2, 0) == -0.5);
  CHECK(add.values(3, 3) == -kInf);
  CHECK(add.values(0, 1) == -kInf);  // causal
  CHECK(add.values(3, 0) == -kInf);  // the window
  CHECK(a.facts[0].hidden_by(2, 0) == 0);
  CHECK(a.facts[0].hidden_by(3, 3) == attn::kHiddenByMask);
  CHECK(values(a, "masked")(2, 0) == values(a, "scaled")(2, 0) - 0.5);
  check_sound(p, a);
  CHECK(english_formula(add.text) == "M⁽¹⁾_ij = your M_ij if j ≤ i (causal), i − 2 ≤ j (window); else −∞");
  CHECK(find_step(a, "masked").text == "S̄⁽¹⁾ = S̃⁽¹⁾ + M⁽¹⁾");
}

TEST_CASE("the mask step in the columns layout", "[masks][mask][columns]") {
  Problem p = random_problem(5, 3, 4);
  p.options.window_left = 0;
  p.options.window_right = 1;
  const attn::Trace rows = attn::run(p);
  for (auto* m : {&p.Q, &p.K, &p.V}) *m = Matrix((*m)->transpose());
  p.options.layout = attn::Layout::Columns;
  const attn::Trace cols = attn::run(p);
  CHECK(values(cols, "mask") == values(rows, "mask").transpose());
  CHECK(cols.facts[0].hidden_by == rows.facts[0].hidden_by.transpose());
  // Key 3 (row 3) of query 0 (column 0) is right of the window [0, 0 + 1].
  CHECK(cols.facts[0].hidden_by(3, 0) == attn::kHiddenByWindow);
  const attn::Explanation e = attn::explain(p, "mask", 0, 3, 0);
  CHECK(e.components == std::vector<std::string>{"window"});
  CHECK(e.value == 0);
  CHECK(english_formula(find_step(cols, "mask").text) == "M_ij = 1 if j ≤ i ≤ j + 1 (window); else 0");
  check_sound(p, cols);
}

TEST_CASE("ALiBi's slopes are the paper's", "[masks][alibi]") {
  // Press, Smith and Lewis, "Train Short, Test Long" (ICLR 2022), section 3: for 8 heads the
  // slopes are 1/2, 1/4, ..., 1/256; for head counts that are not powers of two the reference
  // code's get_slopes (github.com/ofirpress/attention_with_linear_biases) takes the 4-head
  // slopes 1/4 ... 1/256, then every other slope of the 8-head sequence: 1/2, 1/8.
  const auto slopes = [](int heads) {
    Problem p = random_problem(6, 3, 3, heads);
    p.options.alibi = true;
    std::vector<double> out;
    for (const attn::HeadFacts& f : attn::run(p).facts) out.push_back(f.alibi_slope);
    return out;
  };
  CHECK(slopes(8) ==
        std::vector<double>{1.0 / 2, 1.0 / 4, 1.0 / 8, 1.0 / 16, 1.0 / 32, 1.0 / 64, 1.0 / 128, 1.0 / 256});
  CHECK(slopes(6) == std::vector<double>{1.0 / 4, 1.0 / 16, 1.0 / 64, 1.0 / 256, 1.0 / 2, 1.0 / 8});
  CHECK(slopes(1) == std::vector<double>{1.0 / 256});
  CHECK(slopes(2) == std::vector<double>{1.0 / 16, 1.0 / 256});
  const std::vector<double> twelve = slopes(12);  // 8 heads' slopes, then 16 heads' odd ones
  REQUIRE(twelve.size() == 12);
  CHECK(twelve[8] == Approx(std::pow(2.0, -0.5)).epsilon(1e-15));
  CHECK(twelve[11] == Approx(std::pow(2.0, -3.5)).epsilon(1e-15));
}

TEST_CASE("ALiBi adds -m|i - j| to the scaled scores", "[masks][alibi]") {
  Problem p = random_problem(7, 3, 4, 2);
  p.options.alibi_slopes = {0.5, 0.25};
  p.options.causal = true;
  const attn::Trace t = attn::run(p);
  REQUIRE(step_ids(t) == std::vector<std::string>{"Q0",           "K0",           "V0",      "scores0", "scaled0",
                                                  "alibi0",       "biased0",      "mask0",   "masked0", "weights0",
                                                  "head_output0", "Q1",           "K1",      "V1",      "scores1",
                                                  "scaled1",      "alibi1",       "biased1", "mask1",   "masked1",
                                                  "weights1",     "head_output1", "concat",  "output"});
  Matrix bias(3, 4);
  bias << 0, -1, -2, -3, -1, 0, -1, -2, -2, -1, 0, -1;
  CHECK(values(t, "alibi", 0) == 0.5 * bias);
  CHECK(values(t, "alibi", 1) == 0.25 * bias);
  CHECK(values(t, "biased", 1) == values(t, "scaled", 1) + 0.25 * bias);
  const attn::Step& alibi = find_step(t, "alibi", 1);
  CHECK(alibi.kind == attn::ValueKind::AdditiveBias);
  CHECK(alibi.inputs.empty());
  CHECK(alibi.given.empty());
  CHECK(alibi.title_id == "step.alibi");
  CHECK(alibi.tex == "B^{(2)}_{ij} = -m\\,|i - j|,\\quad m = 0.25");
  CHECK(alibi.text == "B⁽²⁾_ij = −m·|i − j|, m = 0.25");
  const attn::Step& biased = find_step(t, "biased", 1);
  CHECK(biased.inputs == std::vector<int>{15, 16});
  CHECK(biased.kind == attn::ValueKind::Signed);
  CHECK(biased.tex == "\\check S^{(2)} = \\tilde S^{(2)} + B^{(2)}");
  CHECK(biased.text == "Š⁽²⁾ = S̃⁽²⁾ + B⁽²⁾");
  CHECK(find_step(t, "masked", 1).inputs == std::vector<int>{17, 18});

  const attn::Explanation a = attn::explain(p, "alibi", 1, 0, 3);
  CHECK(a.kind == "alibi");
  CHECK(a.slope == 0.25);
  CHECK(a.query_pos == 0);
  CHECK(a.key_pos == 3);
  CHECK(a.value == -0.75);
  const attn::Explanation b = attn::explain(p, "biased", 0, 2, 1);
  CHECK(b.kind == "bias");
  CHECK(b.input + b.additive == b.value);
  CHECK(b.additive == -0.5);
  check_sound(p, t);

  // The softmax is invariant to adding a constant to a row: the paper's implementation adds
  // m·j instead of -m|i - j| under causal masking; the weights are the same.
  Problem paper = random_problem(7, 3, 4, 2);
  paper.options.causal = true;
  const attn::Trace plain = attn::run(paper);
  for (int h = 0; h < 2; ++h) {
    const double m = h == 0 ? 0.5 : 0.25;
    Matrix logits = values(plain, "masked", h);
    for (Eigen::Index i = 0; i < 3; ++i) {
      double max = -kInf, sum = 0;
      for (Eigen::Index j = 0; j < 4; ++j) max = std::max(max, logits(i, j) += m * static_cast<double>(j));
      for (Eigen::Index j = 0; j < 4; ++j) sum += std::exp(logits(i, j) - max);
      for (Eigen::Index j = 0; j < 4; ++j) {
        CHECK(values(t, "weights", h)(i, j) == Approx(std::exp(logits(i, j) - max) / sum).epsilon(1e-12));
      }
    }
  }
}

TEST_CASE("a sink logit of -inf changes nothing", "[masks][sink]") {
  Problem p = random_problem(8, 4, 4, 2);
  p.options.causal = true;
  const attn::Trace plain = attn::run(p);
  for (const auto& sinks : {std::vector<double>{-kInf}, std::vector<double>{-kInf, -kInf}}) {
    p.options.sink_logit = sinks;
    const attn::Trace t = attn::run(p);
    REQUIRE(step_ids(t) == step_ids(plain));
    for (size_t k = 0; k < t.steps.size(); ++k) CHECK(t.steps[k].values == plain.steps[k].values);
    CHECK(t.facts[0].sink_share.size() == 0);
    CHECK(t.facts[1].sink_logit == -kInf);
    CHECK(t.facts[0].entropy == plain.facts[0].entropy);
    CHECK(find_step(t, "weights", 1).text == find_step(plain, "weights", 1).text);
  }
}

TEST_CASE("a sink logit takes a share of every softmax", "[masks][sink]") {
  // gpt-oss: softmax over the logits and the sink, the sink's column dropped. A sink of 0 is
  // softmax₁ ("smooth softmax"): e^x / (1 + Σ e^x).
  Problem p = random_problem(9, 3, 3, 2);
  p.options.causal = true;
  p.options.sink_logit = {0.0, 1.5};
  const attn::Trace t = attn::run(p);
  for (int h = 0; h < 2; ++h) {
    const double s = h == 0 ? 0.0 : 1.5;
    const Matrix& logits = values(t, "masked", h);
    const Matrix& w = values(t, "weights", h);
    const attn::HeadFacts& f = t.facts[static_cast<size_t>(h)];
    CHECK(f.sink_logit == s);
    for (Eigen::Index i = 0; i < 3; ++i) {
      double sum = std::exp(s);
      for (Eigen::Index j = 0; j <= i; ++j) sum += std::exp(logits(i, j));
      for (Eigen::Index j = 0; j <= i; ++j) CHECK(w(i, j) == Approx(std::exp(logits(i, j)) / sum).epsilon(1e-13));
      CHECK(f.sink_share[i] == Approx(std::exp(s) / sum).epsilon(1e-13));
      CHECK(f.weight_sums[i] == Approx(1 - f.sink_share[i]).epsilon(1e-13));
      CHECK(f.weight_sums[i] < 1);
    }
  }
  const attn::Explanation e = attn::explain(p, "weights", 1, 2, 1);
  CHECK(e.kind == "softmax");
  CHECK(e.has_sink);
  CHECK(e.sink_logit == 1.5);
  CHECK(e.sink_exp == Approx(std::exp(1.5 - e.max)).epsilon(1e-15));
  CHECK(e.exps[1] / e.exp_sum == Approx(e.value).epsilon(1e-14));
  CHECK(e.sink_share == Approx(t.facts[1].sink_share[2]).epsilon(1e-14));
  CHECK(find_step(t, "weights", 1).tex ==
        "A^{(2)}_{ij} = \\frac{e^{\\bar S^{(2)}_{ij}}}{e^{s} + \\sum_k e^{\\bar S^{(2)}_{ik}}},\\quad s = 1.5");
  CHECK(find_step(t, "weights", 1).text == "A⁽²⁾_ij = e^S̄⁽²⁾_ij / (e^s + Σ_k e^S̄⁽²⁾_ik), s = 1.5");
  check_sound(p, t);

  // A fully masked query: the sink takes all its weight.
  Matrix hide_row = Matrix::Ones(3, 3);
  hide_row.row(1).setZero();
  p.options.causal = false;
  p.options.mask = hide_row;
  p.options.mask_kind = attn::MaskKind::Keep;
  const attn::Trace full = attn::run(p);
  CHECK(values(full, "weights", 0).row(1).isZero(0));
  CHECK(full.facts[0].sink_share[1] == 1);
  CHECK(full.facts[0].fully_masked == std::vector<int>{1});
  const attn::Explanation all_sink = attn::explain(p, "weights", 0, 1, 2);
  CHECK(all_sink.value == 0);
  CHECK(all_sink.exps == std::vector<double>{0, 0, 0});
  CHECK(all_sink.sink_exp == 1);
  CHECK(all_sink.exp_sum == 1);
  CHECK(all_sink.sink_share == 1);
  CHECK(said(full.warnings) == std::vector<std::string>{"warning.fully_masked.sink(axis=row, row=2)"});
  check_sound(p, full);
}

TEST_CASE("a finite mask fill: uniform fully masked rows, a little weight for hidden keys", "[masks][fill]") {
  Problem p = random_problem(10, 3, 4);
  Matrix keep = Matrix::Ones(3, 4);
  keep.row(0).setZero();  // query 0 sees no key
  keep(2, 1) = 0;
  p.options.mask = keep;
  p.options.mask_kind = attn::MaskKind::Keep;
  p.options.mask_fill = -1e9;
  const attn::Trace t = attn::run(p);
  const Matrix& w = values(t, "weights");
  for (Eigen::Index j = 0; j < 4; ++j) CHECK(w(0, j) == 0.25);  // masked_fill: uniform, not 0
  CHECK(w(2, 1) == 0);                                          // e^(-1e9 - max) underflows
  CHECK(values(t, "masked")(0, 2) == -1e9);
  CHECK(values(t, "masked")(2, 1) == -1e9);
  CHECK(values(t, "masked")(2, 0) == values(t, "scaled")(2, 0));
  CHECK(t.facts[0].fully_masked == std::vector<int>{0});
  CHECK(t.facts[0].hidden_weight[0] == 1);
  CHECK(t.facts[0].hidden_weight[2] == 0);
  CHECK(said(t.warnings) == std::vector<std::string>{"warning.fully_masked.fill(axis=row, row=1, fill=-1e+09)"});
  CHECK(english_formula(find_step(t, "masked").tex) ==
        "\\bar S = \\tilde S \\text{ where } M = 1, -1000000000 \\text{ where } M = 0 \\;\\text{(masked\\_fill)}");
  CHECK(english_formula(find_step(t, "masked").text) == "S̄ = S̃ where M = 1, -1000000000 where M = 0 (masked_fill)");
  const attn::Explanation e = attn::explain(p, "masked", 0, 2, 1);
  CHECK(e.hidden);
  CHECK(e.fill == -1e9);
  CHECK(e.value == -1e9);
  check_sound(p, t);

  // A fill near the scores: the hidden key keeps a weight the softmax of the filled row gives.
  p.options.mask_fill = -2;
  const attn::Trace near = attn::run(p);
  const Matrix& logits = values(near, "scaled");
  double sum = 0;
  for (Eigen::Index j = 0; j < 4; ++j) sum += std::exp(j == 1 ? -2.0 : logits(2, j));
  const double leaked = std::exp(-2.0) / sum;
  CHECK(values(near, "weights")(2, 1) == Approx(leaked).epsilon(1e-14));
  CHECK(near.facts[0].hidden_weight[2] == Approx(leaked).epsilon(1e-14));
  REQUIRE(near.warnings.size() == 2);
  CHECK(said(near.warnings[1]) ==
        "warning.fill_leak(fill=-2, weight=" + attn::format_number(values(near, "weights")(2, 1)) +
            ", row=3, column=2, head=none)");
  check_sound(p, near);
}

TEST_CASE("fully_masked nan: a plain softmax's NaN row, no exception", "[masks][fill]") {
  Problem p = random_problem(11, 3, 3);
  Matrix keep = Matrix::Ones(3, 3);
  keep.row(2).setZero();
  p.options.mask = keep;
  p.options.mask_kind = attn::MaskKind::Keep;
  p.options.fully_masked = attn::FullyMasked::NaN;
  const attn::Trace t = attn::run(p);
  CHECK(values(t, "weights").row(2).array().isNaN().all());
  CHECK(values(t, "weights").row(1).allFinite());
  CHECK(t.output.row(2).array().isNaN().all());
  CHECK(t.facts[0].fully_masked == std::vector<int>{2});
  CHECK(said(t.warnings) == std::vector<std::string>{"warning.fully_masked.nan(axis=row, row=3)"});
  check_sound(p, t);
  p.options.fully_masked = attn::FullyMasked::Zero;
  CHECK(attn::run(p).output.row(2).isZero(0));
}

TEST_CASE("float32 computes every new step in float32", "[masks][float32]") {
  Problem p = random_problem(12, 5, 5, 2);
  p.options.causal = true;
  p.options.window_left = 2;
  p.options.window_right = 0;
  p.options.sink_tokens = 1;
  p.options.alibi = true;
  p.options.sink_logit = {0.5};
  p.options.mask_fill = -1e4;
  for (auto* m : {&p.Q, &p.K, &p.V}) *m = (*m)->cast<float>().cast<double>().eval();  // float32 inputs
  const attn::Trace f64 = attn::run(p);
  check_sound(p, f64);
  p.options.precision = attn::Precision::Float32;
  const attn::Trace f32 = attn::run(p);
  REQUIRE(step_ids(f32) == step_ids(f64));
  CHECK(values(f32, "weights", 1).isApprox(values(f64, "weights", 1), 1e-6));
  CHECK(f32.output.isApprox(f64.output, 1e-5));
  CHECK(f32.facts[1].sink_share.isApprox(f64.facts[1].sink_share, 1e-6));
  CHECK(values(f32, "masked", 0)(4, 1) == -1e4f);
  check_sound(p, f32);

  // Slopes and an additive mask that float32 rounds: the steps hold the float32 numbers used.
  p.options.alibi = false;
  p.options.alibi_slopes = {0.1, 0.3};
  Matrix additive = Matrix::Constant(5, 5, 0.1);
  additive(0, 0) = -kInf;
  p.options.mask = additive;
  p.options.mask_kind = attn::MaskKind::Additive;
  const attn::Trace rounded = attn::run(p);
  CHECK(values(rounded, "alibi", 1)(0, 2) == static_cast<double>(static_cast<float>(-0.3 * 2)));
  CHECK(values(rounded, "mask", 0)(1, 0) == static_cast<double>(0.1f));
  check_sound(p, rounded);
}

TEST_CASE("mask options: each error exactly", "[masks][errors]") {
  Problem p = random_problem(13, 3, 3, 4);
  p.options.alibi_slopes = {0.5, 0.25, 0.125};
  REQUIRE_THROWS_SAYING(attn::run(p), "alibi needs one slope per head: 3 given for 4 heads");
  p.options.alibi_slopes = {0.5, 0.25, std::nan(""), 0.1};
  REQUIRE_THROWS_SAYING(attn::run(p), "alibi slope 3 is nan: slopes must be finite numbers");
  p.options.alibi_slopes = {};

  p.options.window_left = -1;
  REQUIRE_THROWS_SAYING(attn::run(p), "the window's left side must be an integer >= 0 or unbounded (got -1)");
  p.options.window_left = 2;
  p.options.window_right = 1.5;
  REQUIRE_THROWS_SAYING(attn::run(p), "the window's right side must be an integer >= 0 or unbounded (got 1.5)");
  p.options.window_right = -kInf;
  REQUIRE_THROWS_SAYING(attn::run(p), "the window's right side must be an integer >= 0 or unbounded (got -inf)");
  p.options.window_right = kInf;
  p.options.sink_tokens = -2;
  REQUIRE_THROWS_SAYING(attn::run(p), "sink_tokens must be an integer >= 0 (got -2)");
  p.options.sink_tokens = 0;

  p.options.sink_logit = {0, 1, 2};
  REQUIRE_THROWS_SAYING(attn::run(p), "sink_logit needs one number or one per head: 3 given for 4 heads");
  p.options.sink_logit = {kInf};
  REQUIRE_THROWS_SAYING(attn::run(p), "sink_logit is inf: a sink logit is a finite number, or -inf for no sink");
  p.options.sink_logit = {0, 1, std::nan(""), 2};
  REQUIRE_THROWS_SAYING(attn::run(p), "sink_logit 3 is nan: a sink logit is a finite number, or -inf for no sink");
  p.options.sink_logit = {};

  p.options.mask_fill = kInf;
  REQUIRE_THROWS_SAYING(attn::run(p), "mask_fill must be -inf or a finite number (got inf)");
  p.options.mask_fill = std::nan("");
  REQUIRE_THROWS_SAYING(attn::run(p), "mask_fill must be -inf or a finite number (got nan)");
  p.options.mask_fill = -1e39;
  p.options.precision = attn::Precision::Float32;
  REQUIRE_THROWS_SAYING(attn::run(p), "mask_fill -1e+39 is infinite in float32; compute in float64");
  p.options.mask_fill = -kInf;
  p.options.sink_logit = {1e39};
  REQUIRE_THROWS_SAYING(attn::run(p), "sink_logit 1e+39 is infinite in float32; compute in float64");

  Problem one = random_problem(13, 3, 3, 1);
  one.options.alibi_slopes = {0.5, 0.25};
  REQUIRE_THROWS_SAYING(attn::run(one), "alibi needs one slope per head: 2 given for 1 head");
}

TEST_CASE("explain reproduces every cell of the new steps, in the columns layout", "[masks][explain][columns]") {
  Problem p = random_problem(14, 4, 5, 2);
  for (auto* m : {&p.Q, &p.K, &p.V}) *m = Matrix((*m)->transpose());
  p.options.layout = attn::Layout::Columns;
  p.options.causal = true;
  p.options.window_left = 1;
  p.options.window_right = 0;
  p.options.sink_tokens = 1;
  p.options.alibi = true;
  p.options.sink_logit = {0.25, -1};
  p.options.mask_fill = -3;
  const attn::Trace t = attn::run(p);
  check_sound(p, t);
  for (int h = 0; h < 2; ++h) {
    for (const char* id : {"alibi", "biased", "mask", "masked", "weights"}) {
      const Matrix& v = values(t, id, h);
      REQUIRE(v.rows() == 5);  // keys down the rows
      for (Eigen::Index r = 0; r < v.rows(); ++r) {
        for (Eigen::Index c = 0; c < v.cols(); ++c) {
          INFO(id << " head " << h << " (" << r << ", " << c << ")");
          const attn::Explanation e = attn::explain(p, id, h, r, c);
          CHECK(e.value == v(r, c));
          const std::string step = id;
          if (step == "alibi") {
            CHECK(e.key_pos == static_cast<double>(r));  // row r is key r in the columns layout
            CHECK(e.query_pos == static_cast<double>(c));
            CHECK(-e.slope * std::abs(e.query_pos - e.key_pos) == e.value);
          } else if (step == "biased") {
            CHECK(e.input + e.additive == e.value);
          } else if (step == "masked") {
            CHECK(e.value == (e.hidden ? -3.0 : e.input));
            CHECK(e.hidden == (t.facts[static_cast<size_t>(h)].hidden_by(r, c) != 0 &&
                               t.facts[static_cast<size_t>(h)].hidden_by(r, c) != attn::kKeptBySink));
          } else if (step == "mask") {
            CHECK(e.value == (e.hidden ? 0 : 1));
            CHECK(e.kept_by_sink == (r == 0 && c > 1));  // key 0 is a sink outside query c's window
          } else {
            CHECK(e.has_sink);
            CHECK(e.exps[static_cast<size_t>(r)] / e.exp_sum == Approx(e.value).epsilon(1e-14));
            CHECK(e.sink_share == Approx(t.facts[static_cast<size_t>(h)].sink_share[c]).epsilon(1e-14));
          }
        }
      }
    }
  }
  // Query 3 (column 3) keeps keys 2 and 3 (window) and 0 (sink); keys 1 and 4 keep exp(-3)-sized weights.
  CHECK(values(t, "weights", 0)(1, 3) > 0);
  CHECK(t.facts[0].hidden_weight[3] == Approx(values(t, "weights", 0)(1, 3) + values(t, "weights", 0)(4, 3)));
}
