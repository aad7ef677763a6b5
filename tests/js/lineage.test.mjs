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
  X: [[1, 0, 2, -1], [0, 1, -1, 1], [2, 1, 0, 0]],
  W_Q: [[1, 0, 0, 1], [0, 1, 1, 0], [1, 1, 0, 0], [0, 0, 1, 1]],
  W_K: [[1, 0], [0, 1], [1, 1], [0, -1]],
  W_V: [[1, 2], [0, 1], [-1, 0], [1, 1]],
  W_O: [[1, 0, 0, 1], [0, 1, 0, 0], [0, 0, 1, 0], [1, 0, 0, 1]],
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
  const Q = at('Q', 1), K = at('K', 1);
  // Head 1's K is the same key/value group: its numbers are lit too.
  assert.deepEqual(direct(pre).map((e) => e.step), [at('K', 0), Q, K]);
  assert.deepEqual(entry(pre, Q).cells, [[2, 0], [2, 1]]);
  assert.deepEqual(entry(pre, K).cells, [[1, 0], [1, 1]]);
  const dot = entry(pre, Q).cells.reduce((sum, cell, f) => sum + value(Q, cell) * value(K, entry(pre, K).cells[f]), 0);
  assert.ok(Math.abs(dot - value(S, [2, 1])) < 1e-12, `${dot} vs ${value(S, [2, 1])}`);
  // One level further: a row of X and a column of W: head 2's queries are W_Q's columns 3 and 4.
  assert.equal(entry(pre, 'X').level, 2);
  assert.deepEqual(entry(pre, 'W_Q').cells, [[0, 2], [0, 3], [1, 2], [1, 3], [2, 2], [2, 3], [3, 2], [3, 3]]);
  assert.deepEqual(entry(pre, 'W_K').cells.filter(([, c]) => c > 1), []);
  // The shared key is also head 1's K: the same numbers, so a key cell feeds both heads' scores.
  const dep = dependents(trace, K, 1, 0);
  assert.deepEqual(entry(dep, at('K', 0)), { step: at('K', 0), level: 0, cells: [[1, 0]] });
  for (const h of [0, 1]) assert.deepEqual(entry(dep, at('scores', h)).cells, [[0, 1], [1, 1], [2, 1]]);
  assert.equal(trace.steps[at('K', 0)].data[1][0], trace.steps[K].data[1][0]);
});

test('a weight reads its whole row of the masked scores; a masked score feeds its weights row', () => {
  const A = at('weights', 0), M = at('masked', 0);
  const pre = precedents(trace, A, 1, 0, { depth: 1 });
  assert.deepEqual(pre, [{ step: M, level: 1, cells: [[1, 0], [1, 1], [1, 2]] }]);
  const row = pre[0].cells.map((cell) => value(M, cell));
  const softmax = Math.exp(row[0]) / row.reduce((sum, x) => sum + Math.exp(x), 0);
  assert.ok(Math.abs(softmax - value(A, [1, 0])) < 1e-12);
  // Causal: the hidden key (−∞) is still read: the softmax runs over the whole row.
  assert.equal(value(M, [1, 2]), -Infinity);
  assert.deepEqual(dependents(trace, M, 1, 2, { depth: 1 }), [{ step: A, level: 1, cells: [[1, 0], [1, 1], [1, 2]] }]);
  assert.deepEqual(entry(precedents(trace, M, 1, 2, { depth: 1 }), at('mask', 0)).cells, [[1, 2]]);
});

test('a head output reads its row of weights and its column of V; a concat cell reads its head', () => {
  const O = at('head_output', 1), A = at('weights', 1), V = at('V', 1), C = at('concat', -1);
  const pre = precedents(trace, O, 2, 1, { depth: 1 });
  assert.deepEqual(entry(pre, A).cells, [[2, 0], [2, 1], [2, 2]]);
  assert.deepEqual(entry(pre, V).cells, [[0, 1], [1, 1], [2, 1]]);
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
  assert.deepEqual(entry(last, C).cells, [[0, 0], [0, 1], [0, 2], [0, 3]]);
  assert.deepEqual(entry(last, 'W_O').cells, [[0, 2], [1, 2], [2, 2], [3, 2]]);
  const o = [0, 1, 2, 3].reduce((s, f) => s + value(C, [0, f]) * gqa.W_O[f][2], 0);
  assert.ok(Math.abs(o - value(out, [0, 2])) < 1e-12);
  // A weight feeds its row of the head's output, then the concat's slice of that head, then the output row.
  const dep = dependents(trace, A, 2, 0);
  assert.deepEqual(entry(dep, O).cells, [[2, 0], [2, 1]]);
  assert.deepEqual(entry(dep, C), { step: C, level: 2, cells: [[2, 2], [2, 3]] });
  assert.deepEqual(entry(dep, out), { step: out, level: 3, cells: [[2, 0], [2, 1], [2, 2], [2, 3]] });
});

test('the columns layout: a score is a key row × query column, its inputs are columns', () => {
  const p = {
    Q: [[1, 0], [0, 1], [1, 1]], K: [[1, 0, 2, 1], [0, 1, 1, 0], [1, 1, 0, 2]], V: [[1, 2, 3, 4], [0, 1, 0, 1]],
    options: { layout: 'columns', mask: [[1, 1], [1, 0], [0, 1], [1, 1]] },
  };
  const t = engine.run(p);
  const i = (id) => t.steps.findIndex((s) => s.id === id);
  assert.deepEqual(t.steps[i('scores')].axes, ['keys', 'queries']);
  const pre = precedents(t, i('scores'), 2, 1, { problem: p });
  assert.deepEqual(entry(pre, i('Q')).cells, [[0, 1], [1, 1], [2, 1]]);
  assert.deepEqual(entry(pre, i('K')).cells, [[0, 2], [1, 2], [2, 2]]);
  assert.deepEqual(entry(pre, 'Q').cells, [[0, 1], [1, 1], [2, 1]]);
  // The softmax runs down each column: a weight reads its query's column of the masked scores.
  assert.deepEqual(precedents(t, i('weights'), 0, 1, { depth: 1 })[0].cells, [[0, 1], [1, 1], [2, 1], [3, 1]]);
  assert.deepEqual(entry(precedents(t, i('mask'), 2, 0, { problem: p }), 'mask').cells, [[2, 0]]);
  // The output (d_v × queries) reads its query's column of weights and its feature's row of V.
  const out = precedents(t, i('output'), 1, 0, { depth: 1 });
  assert.deepEqual(entry(out, i('weights')).cells, [[0, 0], [1, 0], [2, 0], [3, 0]]);
  assert.deepEqual(entry(out, i('V')).cells, [[1, 0], [1, 1], [1, 2], [1, 3]]);
});

test('a cache: a key of the cache is a row of past_K or a new (rotated) key', () => {
  const p = {
    Q: [[1, 0, 0, 1], [0, 1, 1, 0]], K: [[1, 2], [0, 1]], V: [[1, 0], [2, 1]],
    past_K: [[1, 1], [0, 2], [2, 0]], past_V: [[0, 1], [1, 1], [1, 0]],
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
  assert.deepEqual(entry(fresh, i('K')), { step: i('K'), level: 2, cells: [[1, 0], [1, 1]] });
  assert.deepEqual(entry(fresh, 'K').cells, [[1, 0], [1, 1]]);
  // A new key feeds its shifted row of the cache, in both heads (one key/value group).
  const dep = dependents(t, i('K_rot'), 0, 1, { depth: 1 });
  assert.deepEqual(entry(dep, cache).cells, [[3, 1]]);
  assert.deepEqual(entry(dep, i('K_cache', 1)).cells, [[3, 1]]);
  // Head 2's queries are the given Q's columns 3 and 4.
  assert.deepEqual(entry(precedents(t, i('Q', 1), 1, 0, { problem: p }), 'Q').cells, [[1, 2]]);
});

test('positions: a projection reads its row of X + PE and a column of W; ALiBi and the soft cap are elementwise', () => {
  const p = {
    X: [[1, 0, 2, -1], [0, 1, -1, 1], [2, 1, 0, 0]],
    W_Q: gqa.W_Q, W_K: gqa.W_Q, W_V: gqa.W_Q, b_K: [1, 2, 3, 4],
    options: { positional: 'sinusoidal', alibi: true, softcap: 5 },
  };
  const t = engine.run(p);
  const i = (id) => t.steps.findIndex((s) => s.id === id);
  // Self-attention: key 3 is X's row 3 (X's rows are the queries).
  const k = precedents(t, i('K'), 2, 1, { problem: p, depth: 1 });
  assert.deepEqual(entry(k, i('X_pos')).cells, [[2, 0], [2, 1], [2, 2], [2, 3]]);
  assert.deepEqual(entry(k, 'W_K').cells, [[0, 1], [1, 1], [2, 1], [3, 1]]);
  assert.deepEqual(entry(k, 'b_K').cells, [[0, 1]]);
  const sum = [0, 1, 2, 3].reduce((s, f) => s + t.steps[i('X_pos')].data[2][f] * p.W_K[f][1], p.b_K[1]);
  assert.ok(Math.abs(sum - t.steps[i('K')].data[2][1]) < 1e-12);
  assert.deepEqual(precedents(t, i('X_pos'), 1, 3, { problem: p }), [
    { input: 'X', level: 1, cells: [[1, 3]] }, { step: i('positional'), level: 1, cells: [[1, 3]] }]);
  assert.deepEqual(precedents(t, i('biased'), 0, 2, { depth: 1 }), [
    { step: i('softcapped'), level: 1, cells: [[0, 2]] }, { step: i('alibi'), level: 1, cells: [[0, 2]] }]);
  // A row of X + PE feeds every query's, key's and value's features of that token.
  const dep = dependents(t, i('X_pos'), 1, 0, { depth: 1 });
  for (const id of ['Q', 'K', 'V']) assert.deepEqual(entry(dep, i(id)).cells, [[1, 0], [1, 1], [1, 2], [1, 3]]);
});
