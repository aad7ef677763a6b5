// cellLatex for the explanations of issue 13's steps: positions, RoPE, the KV cache, ALiBi, the
// mask with a finite fill and a softmax with a sink logit, from real engine.explain() results.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { dist } from './helpers.mjs';

const { cellLatex, loadAttention } = await import(`${dist}node.js`);
const engine = await loadAttention();

const X = [[1, 0, 1, 0], [0, 2, 0, 2], [1, 1, 1, 1]];
const W = [[1, 0, 1, 0], [1, 0, 0, 1], [0, 0, 1, 1], [0, 1, 1, 0]];
const problem = {
  X, W_Q: W, W_K: W, W_V: W, past_K: [[1, 2, 3, 4]], past_V: [[1, 1, 1, 1]],
  options: { positional: 'sinusoidal', rope: { style: 'half', dims: 2 }, alibi: true, window: [1, 0], sink_tokens: 1, sink_logit: 0.5, mask_fill: -50 },
};
const trace = engine.run(problem);
const latex = (step, head, row, col) => cellLatex(engine.explain(problem, { step, head, row, col }), trace, { decimals: 3 }).replace(/\s+/g, ' ');

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
