// engine.run reaches the core three ways (web/lib/engine.js run(), cpp/bindings.cpp "the packed
// run"): numbers written into the module's scratch block, one packed Float64Array when they do not
// fit it, and the problem object itself when it holds text. All three give the same trace.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { dist } from './helpers.mjs';

const { loadAttention } = await import(`${dist}node.js`);
const engine = await loadAttention();

const text = (m) => m.map((row) => row.join(' ')).join('\n');
// Small integers: exact in text and in binary, so the traces must be equal to the last bit.
const grid = (rows, cols, seed) => Array.from({ length: rows }, (_, i) => Array.from({ length: cols }, (_, j) => ((i * 7 + j * 3 + seed) % 5) - 2));

test('numbers, text and { shape, data } give the same trace, biases and options included', () => {
  const X = grid(3, 4, 1);
  const W = (seed) => grid(4, 4, seed);
  const options = { heads: 2, causal: true, scale: '1/sqrt(2)', softcap: 5, mask: [[0, -1, 0], [0, 0, -2], [1, 0, 0]] };
  const numbers = { X, W_Q: W(2), W_K: W(3), W_V: W(4), W_O: W(5), b_Q: [1, 0, -1, 2], b_K: [[0, 1, 0, 1]], b_V: [1, 1, 1, 1], b_O: [0, 0, 1, 0], options };
  const asText = { ...numbers, X: text(X), W_Q: text(W(2)), b_K: '0 1 0 1', options: { ...options, mask: text(options.mask) } };
  const asShape = { ...numbers, W_K: { shape: [4, 4], data: W(3).flat() } };
  const expected = engine.run(numbers);
  assert.deepEqual(engine.run(asText), expected);
  assert.deepEqual(engine.run(asShape), expected);
  assert.deepEqual(engine.run(numbers), expected, 'the scratch block is reused after a text problem');
  assert.equal(expected.steps.filter((s) => s.id === 'weights').length, 2);
});

test('a problem larger than the scratch block (one packed Float64Array) gives the same trace as its text', () => {
  // 3 x 120 x 100 numbers: more than the block's 32K.
  const Q = grid(120, 100, 1);
  const K = grid(120, 100, 2);
  const V = grid(120, 100, 3);
  const big = engine.run({ Q, K, V, options: { precision: 'float32' } });
  assert.deepEqual(engine.run({ Q: text(Q), K: text(K), V: text(V), options: { precision: 'float32' } }), big);
  assert.deepEqual(big.meta, { layout: 'rows', precision: 'float32', scale: 0.1, d_k: 100, d_v: 100, heads: 1, kv_heads: 1, queries: 120, keys: 120 });
  const small = { Q: grid(2, 3, 1), K: grid(4, 3, 2), V: grid(4, 2, 3) };
  assert.deepEqual(engine.run(small), engine.run({ Q: text(small.Q), K: text(small.K), V: text(small.V) }));
});

test('warnings, facts and step ids come through; holes of a sparse array still count as 0', () => {
  const trace = engine.run({ Q: [[1, 0], [0, 1]], K: [[1, 0], [0, 1]], V: [[1, 2], [3, 4]], options: { mask: [[false, false], [true, true]] } });
  assert.deepEqual(trace.steps.map((s) => [s.id, s.head]), [['Q', 0], ['K', 0], ['V', 0], ['scores', 0], ['scaled', 0], ['masked', 0], ['weights', 0], ['output', null]]);
  assert.deepEqual(trace.warnings, ['row 1 of the mask hides every key: its weights and output are 0']);
  assert.deepEqual(trace.facts[0].fully_masked, [0]);
  assert.deepEqual(trace.output[0], [0, 0]);
  // eslint-disable-next-line no-sparse-arrays
  const sparse = { Q: [[1, , 3], [0, 1, 0]], K: [[1, 0, 0]], V: [[2]] };
  assert.deepEqual(engine.run(sparse), engine.run({ ...sparse, Q: [[1, 0, 3], [0, 1, 0]] }));
});

test('input errors are unchanged by where the numbers go', () => {
  assert.throws(() => engine.run({ Q: [[1, 2], [3, 'x']], K: [[1, 2]], V: [[1]] }), {
    message: 'Q row 2, column 2 is "x": expected a number or "inf", "-inf", "nan"',
  });
  assert.throws(() => engine.run({ Q: { shape: [2, 2], data: [1, 2, 3] }, K: [[1, 2]], V: [[1]] }), {
    message: 'Q has 3 values but its shape 2x2 needs 4',
  });
  assert.throws(() => engine.run({ Q: { shape: [2, 2], data: [1, null, 3] }, K: [[1, 2]], V: [[1]] }), {
    message: 'Q entry 2 is null: expected a number or "inf", "-inf", "nan"',
  });
  // After an error the next run is right.
  assert.deepEqual(engine.run({ Q: [[1]], K: [[1]], V: [[5]] }).output, [[5]]);
});
