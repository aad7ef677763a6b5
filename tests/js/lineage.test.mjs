// Precedents and dependents of a cell (dist/lineage.js): the cells it was computed from and the cells
// it feeds, checked by recomputing the cell from its precedents' numbers.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { dist } from './helpers.mjs';

const { loadAttention } = await import(`${dist}node.js`);
const { precedents, dependents } = await import(`${dist}lineage.js`);
const engine = await loadAttention();

// Two heads sharing one key/value head (GQA), causal, with W_O: X is 3 tokens × 4 features.
const gqa = {
  X: [
    [1, 0, 2, -1],
    [0, 1, -1, 1],
    [2, 1, 0, 0],
  ],
  W_Q: [
    [1, 0, 0, 1],
    [0, 1, 1, 0],
    [1, 1, 0, 0],
    [0, 0, 1, 1],
  ],
  W_K: [
    [1, 0],
    [0, 1],
    [1, 1],
    [0, -1],
  ],
  W_V: [
    [1, 2],
    [0, 1],
    [-1, 0],
    [1, 1],
  ],
  W_O: [
    [1, 0, 0, 1],
    [0, 1, 0, 0],
    [0, 0, 1, 0],
    [1, 0, 0, 1],
  ],
  options: { heads: 2, kv_heads: 1, causal: true },
};
const trace = engine.run(gqa);
const at = (id, head) => trace.steps.findIndex((s) => s.id === id && (s.head ?? -1) === head);
const entry = (list, key) => list.find((e) => (typeof key === 'string' ? e.input === key : e.step === key));
const direct = (list) => list.filter((e) => e.level === 1);
const value = (i, [r, c]) => trace.steps[i].data[r][c];

test('a score reads its query row and its key row (of the group shared by both heads)', () => {
  const S = at('scores', 1);
  const pre = precedents(trace, S, 2, 1, { problem: gqa });
  const Q = at('Q', 1),
    K = at('K', 1);
  // Head 1's K is the same key/value group: its numbers are lit too.
  assert.deepEqual(
    direct(pre).map((e) => e.step),
    [at('K', 0), Q, K],
  );
  assert.deepEqual(entry(pre, Q).cells, [
    [2, 0],
    [2, 1],
  ]);
  assert.deepEqual(entry(pre, K).cells, [
    [1, 0],
    [1, 1],
  ]);
  const dot = entry(pre, Q).cells.reduce((sum, cell, f) => sum + value(Q, cell) * value(K, entry(pre, K).cells[f]), 0);
  assert.ok(Math.abs(dot - value(S, [2, 1])) < 1e-12, `${dot} vs ${value(S, [2, 1])}`);
  // One level further: a row of X and a column of W: head 2's queries are W_Q's columns 3 and 4.
  assert.equal(entry(pre, 'X').level, 2);
  assert.deepEqual(entry(pre, 'W_Q').cells, [
    [0, 2],
    [0, 3],
    [1, 2],
    [1, 3],
    [2, 2],
    [2, 3],
    [3, 2],
    [3, 3],
  ]);
  assert.deepEqual(
    entry(pre, 'W_K').cells.filter(([, c]) => c > 1),
    [],
  );
  // The shared key is also head 1's K: the same numbers, so a key cell feeds both heads' scores.
  const dep = dependents(trace, K, 1, 0);
  assert.deepEqual(entry(dep, at('K', 0)), { step: at('K', 0), level: 0, cells: [[1, 0]] });
  for (const h of [0, 1])
    assert.deepEqual(entry(dep, at('scores', h)).cells, [
      [0, 1],
      [1, 1],
      [2, 1],
    ]);
  assert.equal(trace.steps[at('K', 0)].data[1][0], trace.steps[K].data[1][0]);
});

test('a weight reads its whole row of the masked scores; a masked score feeds its weights row', () => {
  const A = at('weights', 0),
    M = at('masked', 0);
  const pre = precedents(trace, A, 1, 0, { depth: 1 });
  assert.deepEqual(pre, [
    {
      step: M,
      level: 1,
      cells: [
        [1, 0],
        [1, 1],
        [1, 2],
      ],
    },
  ]);
  const row = pre[0].cells.map((cell) => value(M, cell));
  const softmax = Math.exp(row[0]) / row.reduce((sum, x) => sum + Math.exp(x), 0);
  assert.ok(Math.abs(softmax - value(A, [1, 0])) < 1e-12);
  // Causal: the hidden key (−∞) is still read: the softmax runs over the whole row.
  assert.equal(value(M, [1, 2]), -Infinity);
  assert.deepEqual(dependents(trace, M, 1, 2, { depth: 1 }), [
    {
      step: A,
      level: 1,
      cells: [
        [1, 0],
        [1, 1],
        [1, 2],
      ],
    },
  ]);
  assert.deepEqual(entry(precedents(trace, M, 1, 2, { depth: 1 }), at('mask', 0)).cells, [[1, 2]]);
});

test('a head output reads its row of weights and its column of V; a concat cell reads its head', () => {
  const O = at('head_output', 1),
    A = at('weights', 1),
    V = at('V', 1),
    C = at('concat', -1);
  const pre = precedents(trace, O, 2, 1, { depth: 1 });
  assert.deepEqual(entry(pre, A).cells, [
    [2, 0],
    [2, 1],
    [2, 2],
  ]);
  assert.deepEqual(entry(pre, V).cells, [
    [0, 1],
    [1, 1],
    [2, 1],
  ]);
  const sum = [0, 1, 2].reduce((s, k) => s + value(A, [2, k]) * value(V, [k, 1]), 0);
  assert.ok(Math.abs(sum - value(O, [2, 1])) < 1e-12);
  // Concat column 4 is head 2's column 2 (features [2, 4)).
  assert.deepEqual(trace.steps[O].features, [2, 4]);
  assert.deepEqual(precedents(trace, C, 2, 3, { depth: 1 }), [{ step: O, level: 1, cells: [[2, 1]] }]);
  assert.equal(value(C, [2, 3]), value(O, [2, 1]));
  assert.deepEqual(dependents(trace, at('head_output', 0), 2, 1, { depth: 1 }), [{ step: C, level: 1, cells: [[2, 1]] }]);
  // The output (W_O): its row of the concat and its column of W_O.
  const out = at('output', -1);
  const last = precedents(trace, out, 0, 2, { problem: gqa, depth: 1 });
  assert.deepEqual(entry(last, C).cells, [
    [0, 0],
    [0, 1],
    [0, 2],
    [0, 3],
  ]);
  assert.deepEqual(entry(last, 'W_O').cells, [
    [0, 2],
    [1, 2],
    [2, 2],
    [3, 2],
  ]);
  const o = [0, 1, 2, 3].reduce((s, f) => s + value(C, [0, f]) * gqa.W_O[f][2], 0);
  assert.ok(Math.abs(o - value(out, [0, 2])) < 1e-12);
  // A weight feeds its row of the head's output, then the concat's slice of that head, then the output row.
  const dep = dependents(trace, A, 2, 0);
  assert.deepEqual(entry(dep, O).cells, [
    [2, 0],
    [2, 1],
  ]);
  assert.deepEqual(entry(dep, C), {
    step: C,
    level: 2,
    cells: [
      [2, 2],
      [2, 3],
    ],
  });
  assert.deepEqual(entry(dep, out), {
    step: out,
    level: 3,
    cells: [
      [2, 0],
      [2, 1],
      [2, 2],
      [2, 3],
    ],
  });
});

test('the columns layout: a score is a key row × query column, its inputs are columns', () => {
  const p = {
    Q: [
      [1, 0],
      [0, 1],
      [1, 1],
    ],
    K: [
      [1, 0, 2, 1],
      [0, 1, 1, 0],
      [1, 1, 0, 2],
    ],
    V: [
      [1, 2, 3, 4],
      [0, 1, 0, 1],
    ],
    options: {
      layout: 'columns',
      mask: [
        [1, 1],
        [1, 0],
        [0, 1],
        [1, 1],
      ],
    },
  };
  const t = engine.run(p);
  const i = (id) => t.steps.findIndex((s) => s.id === id);
  assert.deepEqual(t.steps[i('scores')].axes, ['keys', 'queries']);
  const pre = precedents(t, i('scores'), 2, 1, { problem: p });
  assert.deepEqual(entry(pre, i('Q')).cells, [
    [0, 1],
    [1, 1],
    [2, 1],
  ]);
  assert.deepEqual(entry(pre, i('K')).cells, [
    [0, 2],
    [1, 2],
    [2, 2],
  ]);
  assert.deepEqual(entry(pre, 'Q').cells, [
    [0, 1],
    [1, 1],
    [2, 1],
  ]);
  // The softmax runs down each column: a weight reads its query's column of the masked scores.
  assert.deepEqual(precedents(t, i('weights'), 0, 1, { depth: 1 })[0].cells, [
    [0, 1],
    [1, 1],
    [2, 1],
    [3, 1],
  ]);
  assert.deepEqual(entry(precedents(t, i('mask'), 2, 0, { problem: p }), 'mask').cells, [[2, 0]]);
  // The output (d_v × queries) reads its query's column of weights and its feature's row of V.
  const out = precedents(t, i('output'), 1, 0, { depth: 1 });
  assert.deepEqual(entry(out, i('weights')).cells, [
    [0, 0],
    [1, 0],
    [2, 0],
    [3, 0],
  ]);
  assert.deepEqual(entry(out, i('V')).cells, [
    [1, 0],
    [1, 1],
    [1, 2],
    [1, 3],
  ]);
});

test('a cache: a key of the cache is a row of past_K or a new (rotated) key', () => {
  const p = {
    Q: [
      [1, 0, 0, 1],
      [0, 1, 1, 0],
    ],
    K: [
      [1, 2],
      [0, 1],
    ],
    V: [
      [1, 0],
      [2, 1],
    ],
    past_K: [
      [1, 1],
      [0, 2],
      [2, 0],
    ],
    past_V: [
      [0, 1],
      [1, 1],
      [1, 0],
    ],
    options: { heads: 2, kv_heads: 1, rope: true },
  };
  const t = engine.run(p);
  const i = (id, head = 0) => t.steps.findIndex((s) => s.id === id && s.head === head);
  const cache = i('K_cache');
  assert.deepEqual(t.steps[cache].shape, [5, 2]);
  assert.deepEqual(entry(precedents(t, cache, 1, 1, { problem: p }), 'past_K'), { input: 'past_K', level: 1, cells: [[1, 1]] });
  assert.equal(t.steps[cache].data[1][1], p.past_K[1][1]);
  const fresh = precedents(t, cache, 4, 0, { problem: p });
  assert.deepEqual(entry(fresh, i('K_rot')).cells, [[1, 0]]);
  assert.equal(t.steps[cache].data[4][0], t.steps[i('K_rot')].data[1][0]);
  // The rotation mixes a key's features: a rotated key reads its whole row; then K and the given K.
  assert.deepEqual(entry(fresh, i('K')), {
    step: i('K'),
    level: 2,
    cells: [
      [1, 0],
      [1, 1],
    ],
  });
  assert.deepEqual(entry(fresh, 'K').cells, [
    [1, 0],
    [1, 1],
  ]);
  // A new key feeds its shifted row of the cache, in both heads (one key/value group).
  const dep = dependents(t, i('K_rot'), 0, 1, { depth: 1 });
  assert.deepEqual(entry(dep, cache).cells, [[3, 1]]);
  assert.deepEqual(entry(dep, i('K_cache', 1)).cells, [[3, 1]]);
  // Head 2's queries are the given Q's columns 3 and 4.
  assert.deepEqual(entry(precedents(t, i('Q', 1), 1, 0, { problem: p }), 'Q').cells, [[1, 2]]);
});

test('positions: a projection reads its row of X + PE and a column of W; ALiBi and the soft cap are elementwise', () => {
  const p = {
    X: [
      [1, 0, 2, -1],
      [0, 1, -1, 1],
      [2, 1, 0, 0],
    ],
    W_Q: gqa.W_Q,
    W_K: gqa.W_Q,
    W_V: gqa.W_Q,
    b_K: [1, 2, 3, 4],
    options: { positional: 'sinusoidal', alibi: true, softcap: 5 },
  };
  const t = engine.run(p);
  const i = (id) => t.steps.findIndex((s) => s.id === id);
  // Self-attention: key 3 is X's row 3 (X's rows are the queries).
  const k = precedents(t, i('K'), 2, 1, { problem: p, depth: 1 });
  assert.deepEqual(entry(k, i('X_pos')).cells, [
    [2, 0],
    [2, 1],
    [2, 2],
    [2, 3],
  ]);
  assert.deepEqual(entry(k, 'W_K').cells, [
    [0, 1],
    [1, 1],
    [2, 1],
    [3, 1],
  ]);
  assert.deepEqual(entry(k, 'b_K').cells, [[0, 1]]);
  const sum = [0, 1, 2, 3].reduce((s, f) => s + t.steps[i('X_pos')].data[2][f] * p.W_K[f][1], p.b_K[1]);
  assert.ok(Math.abs(sum - t.steps[i('K')].data[2][1]) < 1e-12);
  assert.deepEqual(precedents(t, i('X_pos'), 1, 3, { problem: p }), [
    { input: 'X', level: 1, cells: [[1, 3]] },
    { step: i('positional'), level: 1, cells: [[1, 3]] },
  ]);
  assert.deepEqual(precedents(t, i('biased'), 0, 2, { depth: 1 }), [
    { step: i('softcapped'), level: 1, cells: [[0, 2]] },
    { step: i('alibi'), level: 1, cells: [[0, 2]] },
  ]);
  // A row of X + PE feeds every query's, key's and value's features of that token.
  const dep = dependents(t, i('X_pos'), 1, 0, { depth: 1 });
  for (const id of ['Q', 'K', 'V'])
    assert.deepEqual(entry(dep, i(id)).cells, [
      [1, 0],
      [1, 1],
      [1, 2],
      [1, 3],
    ]);
});

// The backward pass (engine.gradients): each gradient cell's precedents are the cells the chain
// rule reads, checked by recomputing the cell from them.
const grads = engine.gradients(gqa, {
  dO: [
    [1, -1, 0.5, 2],
    [0, 1, 1, -1],
    [2, 0.5, -1, 1],
  ],
});
const g = (id, head) => grads.steps.findIndex((s) => s.id === id && (s.head ?? -1) === head);
const gv = (i, [r, c]) => grads.steps[i].data[r][c];
/** Σ over the paired cells of two precedent lists of their products. */
const dotOf = (i, a, j, b) => a.reduce((s, cell, k) => s + gv(i, cell) * gv(j, b[k]), 0);
const near = (a, b) => assert.ok(Math.abs(a - b) <= 1e-12 * Math.max(1, Math.abs(b)), `${a} vs ${b}`);

test('gradients: dV[j][c] reads column j of A and column c of the head output gradient; dA[i][j] row i of it and row j of V', () => {
  const dV = g('dV', 1),
    A = g('weights', 1),
    dH = g('dhead_output', 1),
    V = g('V', 1),
    dA = g('dA', 1);
  const pre = precedents(grads, dV, 1, 0, { depth: 1 });
  assert.deepEqual(
    pre.map((e) => e.step),
    [A, dH],
  );
  assert.deepEqual(entry(pre, A).cells, [
    [0, 1],
    [1, 1],
    [2, 1],
  ]);
  assert.deepEqual(entry(pre, dH).cells, [
    [0, 0],
    [1, 0],
    [2, 0],
  ]);
  near(dotOf(A, entry(pre, A).cells, dH, entry(pre, dH).cells), gv(dV, [1, 0]));
  const a = precedents(grads, dA, 2, 1, { depth: 1 });
  assert.deepEqual(entry(a, dH).cells, [
    [2, 0],
    [2, 1],
  ]);
  assert.deepEqual(entry(a, V).cells, [
    [1, 0],
    [1, 1],
  ]);
  near(dotOf(dH, entry(a, dH).cells, V, entry(a, V).cells), gv(dA, [2, 1]));
  // Gradients differ per head: no GQA twin at level 0 (the forward K and V have one).
  assert.equal(
    pre.some((e) => e.level === 0),
    false,
  );
  // With W_O, a head's output gradient reads its row of dO and row 3 + c of W_O (head 2's features start at 2).
  const h = precedents(grads, dH, 0, 1, { problem: { ...gqa, dO: grads.steps[g('dO', -1)].data }, depth: 1 });
  assert.deepEqual(entry(h, g('dO', -1)).cells, [
    [0, 0],
    [0, 1],
    [0, 2],
    [0, 3],
  ]);
  assert.deepEqual(entry(h, 'W_O').cells, [
    [3, 0],
    [3, 1],
    [3, 2],
    [3, 3],
  ]);
  near(
    [0, 1, 2, 3].reduce((s, m) => s + gv(g('dO', -1), [0, m]) * gqa.W_O[3][m], 0),
    gv(dH, [0, 1]),
  );
});

test('gradients: dS reads whole rows of A and dA; the mask, the scale and dQ, dK follow the chain', () => {
  const dS = g('dS', 0),
    A = g('weights', 0),
    dA = g('dA', 0);
  const pre = precedents(grads, dS, 2, 1, { depth: 1 });
  assert.deepEqual(entry(pre, A).cells, [
    [2, 0],
    [2, 1],
    [2, 2],
  ]);
  assert.deepEqual(entry(pre, dA).cells, [
    [2, 0],
    [2, 1],
    [2, 2],
  ]);
  const mean = [0, 1, 2].reduce((s, k) => s + gv(A, [2, k]) * gv(dA, [2, k]), 0);
  near(gv(A, [2, 1]) * (gv(dA, [2, 1]) - mean), gv(dS, [2, 1]));
  const kept = g('dS_kept', 0),
    dscores = g('dscores', 0);
  assert.deepEqual(precedents(grads, kept, 0, 2, { depth: 1 }), [
    { step: g('mask', 0), level: 1, cells: [[0, 2]] },
    { step: dS, level: 1, cells: [[0, 2]] },
  ]);
  assert.deepEqual(precedents(grads, dscores, 1, 0, { depth: 1 }), [{ step: kept, level: 1, cells: [[1, 0]] }]);
  // dQ[i][c]: row i of dscores times column c of K; dK[j][c]: column j of dscores times column c of Q.
  const dQ = g('dQ', 0),
    K = g('K', 0),
    Q = g('Q', 0),
    dK = g('dK', 0);
  const q = precedents(grads, dQ, 2, 1, { depth: 1 });
  assert.deepEqual(entry(q, dscores).cells, [
    [2, 0],
    [2, 1],
    [2, 2],
  ]);
  assert.deepEqual(entry(q, K).cells, [
    [0, 1],
    [1, 1],
    [2, 1],
  ]);
  near(dotOf(dscores, entry(q, dscores).cells, K, entry(q, K).cells), gv(dQ, [2, 1]));
  const k = precedents(grads, dK, 0, 1, { depth: 1 });
  assert.deepEqual(entry(k, dscores).cells, [
    [0, 0],
    [1, 0],
    [2, 0],
  ]);
  assert.deepEqual(entry(k, Q).cells, [
    [0, 1],
    [1, 1],
    [2, 1],
  ]);
  near(dotOf(dscores, entry(k, dscores).cells, Q, entry(k, Q).cells), gv(dK, [0, 1]));
  // A weight feeds its row of dS (every key of its query).
  assert.deepEqual(entry(dependents(grads, A, 1, 0, { depth: 1 }), dS).cells, [
    [1, 0],
    [1, 1],
    [1, 2],
  ]);
});

test("gradients: the whole dK sums its group's heads; dQ is side by side; dW_Q and dX read tokens and weights", () => {
  const whole = g('dK', -1);
  const pre = precedents(grads, whole, 2, 1, { depth: 1 });
  assert.deepEqual(pre, [
    { step: g('dK', 0), level: 1, cells: [[2, 1]] },
    { step: g('dK', 1), level: 1, cells: [[2, 1]] },
  ]);
  near(gv(g('dK', 0), [2, 1]) + gv(g('dK', 1), [2, 1]), gv(whole, [2, 1]));
  assert.deepEqual(precedents(grads, g('dQ', -1), 1, 3, { depth: 1 }), [{ step: g('dQ', 1), level: 1, cells: [[1, 1]] }]);
  // dW_Q[a][b] = Σ_i X[i][a]·dQ[i][b].
  const dW = g('dW_Q', -1),
    dQ = g('dQ', -1);
  const w = precedents(grads, dW, 3, 2, { problem: gqa, depth: 1 });
  assert.deepEqual(entry(w, dQ).cells, [
    [0, 2],
    [1, 2],
    [2, 2],
  ]);
  assert.deepEqual(entry(w, 'X').cells, [
    [0, 3],
    [1, 3],
    [2, 3],
  ]);
  near(
    [0, 1, 2].reduce((s, i) => s + gqa.X[i][3] * gv(dQ, [i, 2]), 0),
    gv(dW, [3, 2]),
  );
  // dX[i][m]: row i of dQ, dK, dV and row m of W_Q, W_K, W_V.
  const dX = g('dX', -1);
  const x = precedents(grads, dX, 1, 2, { problem: gqa, depth: 1 });
  assert.deepEqual(entry(x, g('dV', -1)).cells, [
    [1, 0],
    [1, 1],
  ]);
  assert.deepEqual(entry(x, 'W_K').cells, [
    [2, 0],
    [2, 1],
  ]);
  const path = (d, W) => W[2].reduce((s, wm, c) => s + gv(g(d, -1), [1, c]) * wm, 0);
  near(path('dQ', gqa.W_Q) + path('dK', gqa.W_K) + path('dV', gqa.W_V), gv(dX, [1, 2]));
  // dW_O[a][b] = Σ_i concat[i][a]·dO[i][b].
  const o = precedents(grads, g('dW_O', -1), 1, 3, { depth: 1 });
  assert.deepEqual(entry(o, g('concat', -1)).cells, [
    [0, 1],
    [1, 1],
    [2, 1],
  ]);
  assert.deepEqual(entry(o, g('dO', -1)).cells, [
    [0, 3],
    [1, 3],
    [2, 3],
  ]);
});

test("gradients in the columns layout: a weight gradient's cell is (output feature, input feature)", () => {
  const T = (m) => m[0].map((_, j) => m.map((row) => row[j]));
  const p = {
    X: T(gqa.X),
    W_Q: T(gqa.W_Q),
    W_K: T(gqa.W_K),
    W_V: T(gqa.W_V),
    b_Q: [1, 0, 0, 1],
    options: { layout: 'columns', heads: 2, kv_heads: 1 },
  };
  const t = engine.gradients(p);
  const i = (id, head = -1) => t.steps.findIndex((s) => s.id === id && (s.head ?? -1) === head);
  // dΩ_Q[b][a] = Σ_j dQ[b][j]·X[a][j] (tokens are columns).
  const w = precedents(t, i('dW_Q'), 2, 3, { problem: p, depth: 1 });
  assert.deepEqual(entry(w, i('dQ')).cells, [
    [2, 0],
    [2, 1],
    [2, 2],
  ]);
  assert.deepEqual(entry(w, 'X').cells, [
    [3, 0],
    [3, 1],
    [3, 2],
  ]);
  const sum = [0, 1, 2].reduce((s, j) => s + t.steps[i('dQ')].data[2][j] * p.X[3][j], 0);
  near(sum, t.steps[i('dW_Q')].data[2][3]);
  // dβ_Q is a column: entry b is row b of dQ summed over the tokens.
  assert.deepEqual(precedents(t, i('db_Q'), 1, 0, { depth: 1 }), [
    {
      step: i('dQ'),
      level: 1,
      cells: [
        [1, 0],
        [1, 1],
        [1, 2],
      ],
    },
  ]);
  // A dQ cell feeds its row of dΩ_Q... and dβ_Q's entry.
  assert.deepEqual(entry(dependents(t, i('dQ'), 1, 2, { depth: 1 }), i('db_Q')).cells, [[1, 0]]);
});

test("gradients with a cache and RoPE: new keys read their shifted rows of dK_cache, turned back whole; the cache's gradient sums the group", () => {
  const p = {
    Q: [
      [1, 0, 0, 1],
      [0, 1, 1, 0],
    ],
    K: [
      [1, 2],
      [0, 1],
    ],
    V: [
      [1, 0],
      [2, 1],
    ],
    past_K: [
      [1, 1],
      [0, 2],
      [2, 0],
    ],
    past_V: [
      [0, 1],
      [1, 1],
      [1, 0],
    ],
    options: { heads: 2, kv_heads: 1, rope: true },
  };
  const t = engine.gradients(p);
  const i = (id, head) => t.steps.findIndex((s) => s.id === id && (s.head ?? -1) === head);
  const at1 = (id, head, cell) => t.steps[i(id, head)].data[cell[0]][cell[1]];
  assert.deepEqual(precedents(t, i('dK_rot', 0), 1, 1, { depth: 1 }), [{ step: i('dK_cache', 0), level: 1, cells: [[4, 1]] }]);
  assert.equal(at1('dK_rot', 0, [1, 1]), at1('dK_cache', 0, [4, 1]));
  assert.deepEqual(precedents(t, i('dK', 0), 1, 0, { depth: 1 }), [
    {
      step: i('dK_rot', 0),
      level: 1,
      cells: [
        [1, 0],
        [1, 1],
      ],
    },
  ]);
  assert.deepEqual(precedents(t, i('dV', 0), 0, 1, { depth: 1 }), [{ step: i('dV_cache', 0), level: 1, cells: [[3, 1]] }]);
  const past = precedents(t, i('dpast_K', -1), 1, 1, { depth: 1 });
  assert.deepEqual(past, [
    { step: i('dK_cache', 0), level: 1, cells: [[1, 1]] },
    { step: i('dK_cache', 1), level: 1, cells: [[1, 1]] },
  ]);
  near(at1('dK_cache', 0, [1, 1]) + at1('dK_cache', 1, [1, 1]), at1('dpast_K', -1, [1, 1]));
});
