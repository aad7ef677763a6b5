// cellLatex for the explanations of issue 13's steps: positions, RoPE, the KV cache, ALiBi, the
// mask with a finite fill and a softmax with a sink logit, from real engine.explain() results.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { dist } from './helpers.mjs';

const { cellLatex, cellText, fillExplanation, loadAttention } = await import(`${dist}node.js`);
const engine = await loadAttention();

const X = [
  [1, 0, 1, 0],
  [0, 2, 0, 2],
  [1, 1, 1, 1],
];
const W = [
  [1, 0, 1, 0],
  [1, 0, 0, 1],
  [0, 0, 1, 1],
  [0, 1, 1, 0],
];
const problem = {
  X,
  W_Q: W,
  W_K: W,
  W_V: W,
  past_K: [[1, 2, 3, 4]],
  past_V: [[1, 1, 1, 1]],
  options: {
    positional: 'sinusoidal',
    rope: { style: 'half', dims: 2 },
    alibi: true,
    window: [1, 0],
    sink_tokens: 1,
    sink_logit: 0.5,
    mask_fill: -50,
  },
};
const trace = engine.run(problem);
const latex = (step, head, row, col) =>
  cellLatex(engine.explain(problem, { step, head, row, col }), trace, { decimals: 3 }).replace(/\s+/g, ' ');

test('positions, X + P, RoPE and the cache read as their formulas with the numbers', () => {
  assert.match(latex('positional', -1, 2, 1), /PE_\{3,2\} &= \\cos\(3\.000\) \\quad\\text\{\(position 3\)\} \\\\ &= -0\.990/);
  assert.match(latex('X_pos', -1, 2, 1), /&= 1\.000 \+ \(-0\.990\) \\\\ &= 0\.010/);
  assert.match(latex('Q_rot', 0, 2, 1), /&= \(1\.151\)\(0\.141\) \+ \(2\.000\)\(-0\.990\) \\quad \(\\theta = 3\.000\) \\\\ &= -1\.817/);
  assert.match(latex('K_cache', 0, 2, 1), /\(K_\{\\text\{cache\}\}\)_\{3,2\} &= \(K_\{\\text\{rot\}\}\)_\{2,2\}/);
  assert.match(latex('K_cache', 0, 0, 1), /&= \(K_\{\\text\{past\}\}\)_\{1,2\} \\\\ &= 2\.000/);
});

test('ALiBi, the mask with a finite fill and a sink in the softmax', () => {
  assert.match(latex('alibi', 0, 2, 1), /&= -0\.004 \\cdot \\lvert 3 - 1 \\rvert \\\\ &= -0\.008/);
  assert.match(latex('mask', 0, 2, 1), /M_\{3,2\} &= 0 \\quad\\text\{\(hidden by window\)\}/);
  assert.match(latex('mask', 0, 2, 0), /\(kept: a sink token\)/);
  assert.match(latex('masked', 0, 2, 1), /&= -50\.000 \\quad\\text\{\(hidden by window: the fill\)\}/);
  const w = latex('weights', 0, 2, 0);
  assert.match(w, /\+ e\^\{s - m\}\},\\quad m = \\max = 11\.900,\\ s = 0\.500/);
  assert.match(w, /\+ 1\.12 \\times 10\^\{-5\}\}/, 'the sink exponential joins the sum');
});

test('rope_angles: the angle table is a step before the heads, its cells explained as p·θ_i', () => {
  const ids = trace.steps.map((s) => `${s.id}:${s.head}`);
  assert.deepEqual(ids.slice(0, 3), ['positional:null', 'X_pos:null', 'rope_angles:null']);
  const angles = trace.steps[2];
  // Queries at 1, 2, 3 (one cached key before them), keys at 0 ... 3: positions 0 to 3; dims 2: one pair.
  assert.deepEqual(angles.shape, [4, 1]);
  assert.deepEqual(angles.axes, ['positions', 'features']);
  assert.equal(angles.kind, 'signed');
  assert.deepEqual(angles.data, [[0], [1], [2], [3]]);
  assert.equal(angles.text, 'Θ[p, i] = p·θ_i, θ_i = 10000^(−2i/2)');
  const rot = trace.steps.find((s) => s.id === 'Q_rot');
  assert.deepEqual(
    rot.inputs.map((k) => trace.steps[k].id),
    ['Q', 'rope_angles'],
  );
  const e = engine.explain(problem, { step: 'rope_angles', head: null, row: 3, col: 0 });
  assert.equal(e.kind, 'angle');
  assert.equal(
    latex('rope_angles', null, 3, 0),
    '\\begin{aligned} \\Theta_{4,1} &= 3 \\cdot 10000^{-2 \\cdot 0/2} \\\\ &= 3 \\cdot 1.000 \\\\ &= 3.000 \\end{aligned}',
  );
  assert.match(cellText(e, trace), /^Position 3, pair 1 \(features 1 and 2\): θ = 10000\^\(−2·0\/2\) = 1\.0000 radians per position/);
});

test("a described calculation: sums elide at the view's length, tokens are named by the view", () => {
  const X8 = [
    [1, 2, 3, 4, 5, 6, 7, 8],
    [8, 7, 6, 5, 4, 3, 2, 1],
  ];
  const dotProblem = { Q: X8, K: X8, V: X8 };
  const dotTrace = engine.run(dotProblem);
  const e = engine.explain(dotProblem, { step: 'scores', row: 1, col: 0 });
  assert.deepEqual(e.terms.columns, [X8[1], X8[0], X8[1].map((x, k) => x * X8[0][k])]);
  assert.equal(e.numbers[0], e.value);
  const number = (x) => String(x);
  assert.equal(fillExplanation('@terms(0,1)', e, { number, maxTerms: 3 }), '(8)(1) + (7)(2) + \\cdots + (1)(8)');
  assert.equal(fillExplanation('@terms(0,1)', e, { number }), '(8)(1) + (7)(2) + (6)(3) + (5)(4) + (4)(5) + (3)(6) + (2)(7) + (1)(8)');
  assert.equal(fillExplanation('@terms(2) = @0', e, { number, maxTerms: 2 }), '8 + \\cdots + 8 = 120');
  assert.equal(
    cellText(e, dotTrace),
    'The query of query 2 dotted with the key of key 1, over the d_k = 8 features: the sum of the products is 120.0000.',
  );
  // A token named like a placeholder stays a name.
  assert.equal(
    fillExplanation(e.text, e, { number, label: (name) => `@${name === 'query' ? 0 : 'terms(0)'}` }).slice(0, 30),
    'The query of @0 dotted with th',
  );
  assert.match(
    cellLatex(e, dotTrace),
    /^\\begin\{aligned\}\nS_\{2,1\} &= \\sum_m Q_\{2,m\}\\,K_\{1,m\} \\\\\n {2}&= \(8\.0000\)\(1\.0000\) \+ .* \+ \(1\.0000\)\(8\.0000\) \\\\\n {2}&= 120\.0000\n\\end\{aligned\}$/,
  );
});
