// How a step reads each of its input steps (Step.reads) is the core's (cpp/steps.cpp read_of):
// web/lib/lineage.js follows those ties. They used to be re-derived in JS, one rule per step id;
// that function is kept below as the oracle, and for a spread of problems (causal, RoPE, a cache,
// GQA, W_O and biases, cross-attention, the columns layout, the variants, linear and latent
// attention; each forward and backward) the core's ties equal it for every step and input.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { dist } from './helpers.mjs';

const { loadAttention } = await import(`${dist}node.js`);
const { dependents, precedents } = await import(`${dist}lineage.js`);
const engine = await loadAttention();

// ---- the oracle: the previous implementation (web/lib/lineage.js stepTies before the core wrote
// Step.reads), kept here only to compare the core's ties against. Not used by the package.
const tokenAxis = (axes) => axes.find((a) => a === 'queries' || a === 'keys');
const weightAxes = (columns) => (columns ? ['@1', '@0'] : ['@0', '@1']);
function oldStepTies(step, input, columns) {
  const both = (a) => [a, a, 0];
  const [multiplied, made] = weightAxes(columns);
  const shared = () => step.axes.filter((a) => input.axes.includes(a)).map(both);
  switch (step.id) {
    case 'dhead_output':
      if (step.given.includes('W_O')) return [both('queries')];
      return [both('queries'), ['features', 'features', step.features[0]]];
    case 'dA':
    case 'dV_cache':
    case 'dQ_rot':
    case 'dK_rot':
    case 'dK_cache':
    case 'dQ':
    case 'dK':
    case 'dV':
    case 'dpast_K':
    case 'dpast_V':
      if (step.head == null) return [both(tokenAxis(input.axes)), ['features', 'features', -input.features[0]]];
      if (input.id === 'dQ_rot' || input.id === 'dK_rot') return [both(tokenAxis(input.axes))];
      if (input.id === 'dK_cache' || input.id === 'dV_cache') {
        return [['keys', 'keys', input.shape[input.axes.indexOf('keys')] - step.shape[step.axes.indexOf('keys')]], both('features')];
      }
      return shared();
    case 'dS':
      return [both('queries')];
    case 'dW_Q':
    case 'dW_K':
    case 'dW_V':
    case 'dW_O':
      return input.id === 'dO' || input.id === 'dQ' || input.id === 'dK' || input.id === 'dV'
        ? [[made, 'features', 0]]
        : [[multiplied, 'features', 0]];
    case 'db_Q':
    case 'db_K':
    case 'db_V':
    case 'db_O':
      return [[made, 'features', 0]];
    case 'dX':
    case 'dX_kv':
      return [[tokenAxis(step.axes), tokenAxis(input.axes), 0]];
    case 'scores':
      return [both(tokenAxis(input.axes))];
    case 'weights':
      return [both('queries')];
    case 'Q':
    case 'K':
    case 'V':
    case 'Q_rot':
    case 'K_rot':
      return [[tokenAxis(step.axes), tokenAxis(input.axes), 0]];
    case 'K_cache':
    case 'V_cache': {
      const cached = step.shape[step.axes.indexOf('keys')] - input.shape[input.axes.indexOf('keys')];
      return [['keys', 'keys', -cached], both('features')];
    }
    case 'concat':
      return [both('queries'), ['features', 'features', -input.features[0]]];
    case 'head_output':
    case 'output':
      if (step.inputs.length === 2)
        return input.axes.includes('keys') && !input.axes.includes('features') ? [both('queries')] : [both('features')];
      return step.given.includes('W_O') ? [both('queries')] : step.axes.map(both);
    default:
      return step.axes.map(both);
  }
}
/** The step ids the oracle has a rule for (its case labels). */
const ORACLE_IDS = [...oldStepTies.toString().matchAll(/case '([A-Za-z_]+)'/g)].map((m) => m[1]);

/**
 * The oracle's ties as they act: a tie to an axis the input lacks fixed none of its cells in
 * precedents (and, in dependents, left the step with none: the core writes no such tie), the same
 * tie twice is one, -0 is 0, and the order is not meaningful.
 */
function normalOracle(step, input, columns) {
  const ties = oldStepTies(step, input, columns)
    .filter(([, i]) => input.axes.includes(i))
    .map(([s, i, shift]) => JSON.stringify([s, i, shift + 0]));
  return [...new Set(ties)].sort();
}

/** The core's ties of `step`'s `at`-th input in the trace's layout, as lineage.js reads them. */
function coreTies(step, at, columns) {
  const [row, column] = weightAxes(columns);
  return step.reads[at].ties
    .map((t) => JSON.stringify([t.step === 'row' ? row : t.step === 'column' ? column : t.step, t.input, t.shift]))
    .sort();
}

// ---- the spread of problems
const m = (rows, cols, seed) =>
  Array.from({ length: rows }, (_, r) =>
    Array.from({ length: cols }, (_, c) => Math.round(Math.sin(seed * 7 + r * 3.1 + c * 1.7) * 100) / 100),
  );
const T = (a) => a[0].map((_, c) => a.map((row) => row[c]));
const X = m(3, 4, 1),
  W = m(4, 4, 2),
  Wkv = m(4, 2, 3),
  WO = m(4, 4, 4);
const [lX, W_DKV, W_UK, W_UV, W_KR, W_DQ, W_UQ, W_QR, lW_O, past_c_KV, past_k_R] = engine.random(
  31,
  [
    [4, 6],
    [6, 3],
    [3, 4],
    [3, 6],
    [6, 2],
    [6, 4],
    [4, 4],
    [4, 4],
    [6, 5],
    [2, 3],
    [2, 2],
  ].map((shape) => ({ kind: 'randn', shape })),
);
const PROBLEMS = {
  causal: { Q: m(3, 2, 5), K: m(3, 2, 6), V: m(3, 2, 7), options: { causal: true } },
  'GQA, RoPE, W_O, biases': {
    X,
    W_Q: W,
    W_K: Wkv,
    W_V: Wkv,
    W_O: WO,
    b_Q: [1, 0, 0, 1],
    b_K: [0, 1],
    b_V: [1, 1],
    b_O: [0, 0, 1, 1],
    options: { heads: 2, kv_heads: 1, causal: true, rope: true },
  },
  'cache, RoPE, GQA': {
    Q: m(2, 4, 8),
    K: m(2, 2, 9),
    V: m(2, 2, 10),
    past_K: m(3, 2, 11),
    past_V: m(3, 2, 12),
    options: { heads: 2, kv_heads: 1, rope: true },
  },
  'cache from X, two heads': {
    X: m(2, 4, 15),
    W_Q: W,
    W_K: W,
    W_V: W,
    past_K: m(3, 4, 16),
    past_V: m(3, 4, 17),
    options: { heads: 2, causal: true },
  },
  'cross-attention': { X, X_kv: m(5, 4, 13), W_Q: W, W_K: W, W_V: W, b_K: [0, 1, 0, 1], options: { heads: 2 } },
  'columns: positions, ALiBi, soft cap, mask': {
    X: T(X),
    W_Q: T(W),
    W_K: T(W),
    W_V: T(W),
    W_O: T(WO),
    b_Q: [1, 0, 0, 1],
    options: {
      heads: 2,
      layout: 'columns',
      positional: 'sinusoidal',
      alibi: true,
      softcap: 5,
      mask: [
        [1, 1, 0],
        [1, 0, 1],
        [0, 1, 1],
      ],
    },
  },
  'columns: cache, GQA': {
    Q: T(m(2, 4, 8)),
    K: T(m(2, 2, 9)),
    V: T(m(2, 2, 10)),
    past_K: T(m(3, 2, 11)),
    past_V: T(m(3, 2, 12)),
    options: { heads: 2, kv_heads: 1, layout: 'columns', rope: true },
  },
  'QK-norm, differential, gate': {
    X,
    W_Q: W,
    W_K: W,
    W_V: W,
    W_G: m(4, 4, 14),
    options: { heads: 2, qk_norm: { type: 'rms' }, differential: { lambda: 0.5 } },
  },
  'sigmoid, window, sink': { X, W_Q: W, W_K: W, W_V: W, options: { score_fn: 'sigmoid', causal: true, window: [1, 0], sink_tokens: 1 } },
  linear: { X, W_Q: W, W_K: W, W_V: W, options: { heads: 2, attention: 'linear' } },
  latent: { X: lX, W_DKV, W_UK, W_UV, W_KR, W_DQ, W_UQ, W_QR, W_O: lW_O, past_c_KV, past_k_R, options: { heads: 2, causal: true } },
};

test("the core's ties equal the previous JS rules for every step and input, forward and backward", () => {
  const covered = new Set();
  let pairs = 0;
  for (const [name, problem] of Object.entries(PROBLEMS)) {
    for (const [pass, trace] of [
      ['run', engine.run(problem)],
      ['gradients', engine.gradients(problem)],
    ]) {
      const columns = trace.meta.layout === 'columns';
      trace.steps.forEach((step, index) => {
        assert.equal(step.reads.length, step.inputs.length, `${name} ${pass}: step ${index} ${step.id}`);
        step.inputs.forEach((j, at) => {
          const input = trace.steps[j];
          assert.deepEqual(
            coreTies(step, at, columns),
            normalOracle(step, input, columns),
            `${name} (${pass}): ${step.id} of head ${step.head} reading ${input.id} of head ${input.head}`,
          );
          covered.add(step.id);
          pairs++;
        });
      });
    }
  }
  // The spread reaches every rule the oracle had, and many steps by the elementwise default.
  assert.deepEqual(
    ORACLE_IDS.filter((id) => !covered.has(id)),
    [],
  );
  assert.ok(pairs > 1000, `${pairs} step inputs compared`);
  assert.ok(covered.size > ORACLE_IDS.length + 30, `${covered.size} kinds of step compared`);
});

test('a tie reads as written: a cache, a head of the concatenation, a weight gradient in the columns layout', () => {
  const cache = engine.run(PROBLEMS['cache, RoPE, GQA']);
  const K_cache = cache.steps.find((s) => s.id === 'K_cache' && s.head === 1);
  assert.equal(cache.steps[K_cache.inputs[0]].id, 'K_rot');
  assert.deepEqual(K_cache.reads, [
    {
      ties: [
        { step: 'keys', input: 'keys', shift: -3 },
        { step: 'features', input: 'features', shift: 0 },
      ],
    },
  ]);
  const multi = engine.run(PROBLEMS['GQA, RoPE, W_O, biases']);
  const concat = multi.steps.find((s) => s.id === 'concat');
  assert.deepEqual(
    concat.reads.map((r) => r.ties[1]),
    [
      { step: 'features', input: 'features', shift: 0 },
      { step: 'features', input: 'features', shift: -2 },
    ],
  );
  // dW_Q[a][b] (rows layout): column a of X_pos, column b of dQ. The core says the row and the
  // column of the rows layout; in the columns layout lineage swaps them.
  const g = engine.gradients(PROBLEMS['columns: positions, ALiBi, soft cap, mask']);
  const dW_Q = g.steps.find((s) => s.id === 'dW_Q');
  assert.deepEqual(
    dW_Q.inputs.map((i) => g.steps[i].id),
    ['X_pos', 'dQ'],
  );
  assert.deepEqual(
    dW_Q.reads.map((r) => r.ties),
    [[{ step: 'row', input: 'features', shift: 0 }], [{ step: 'column', input: 'features', shift: 0 }]],
  );
  // Cell [1][2] of dW_Q in the columns layout is (feature 1 of dQ, feature 2 of X_pos): dQ's row 1.
  const pre = precedents(g, g.steps.indexOf(dW_Q), 1, 2, { depth: 1 });
  const dQ = pre.find((e) => e.step === dW_Q.inputs[1]);
  assert.deepEqual(dQ.cells, [
    [1, 0],
    [1, 1],
    [1, 2],
  ]);
});

test('where the old rules tied an axis the input lacks, dependents now reach the step that reads it', () => {
  // Q_rot reads the whole RoPE angle table (a query's position picks its row, which no axis of
  // the step names): the old tie to a token axis the table lacks left an angle's dependents empty.
  const t = engine.run(PROBLEMS['cache, RoPE, GQA']);
  const angles = t.steps.findIndex((s) => s.id === 'rope_angles');
  const Q_rot = t.steps.findIndex((s) => s.id === 'Q_rot' && s.head === 0);
  assert.deepEqual(
    t.steps[Q_rot].reads.map((r) => r.ties),
    [[{ step: 'queries', input: 'queries', shift: 0 }], []],
  );
  const reached = dependents(t, angles, 0, 0, { depth: 1 }).find((e) => e.step === Q_rot);
  assert.equal(reached.cells.length, t.steps[Q_rot].shape[0] * t.steps[Q_rot].shape[1]);
});
