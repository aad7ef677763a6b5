// The output-only path through JS (web/lib/fast.js + cpp/bindings_fast.cpp): the same numbers as
// engine.run for every option, typed arrays in and out, errors, memory growth and no leaks. The
// kernels themselves are checked by the C++ suite ([fast], natively and as wasm).
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { dist, generator } from './helpers.mjs';

const { loadAttention } = await import(`${dist}node.js`);
const engine = await loadAttention();

const attention = (input) => engine.attention(input);
const heapStats = () => engine.heapStats();

const matrix = (next, rows, cols) => Array.from({ length: rows }, () => Array.from({ length: cols }, next));

test('seed 004 through the fast path: 1.6604769 2.6604769 / 2.3395231 3.3395231', () => {
  const r = attention({
    Q: [
      [1, 0],
      [0, 1],
    ],
    K: [
      [1, 0],
      [0, 1],
    ],
    V: [
      [1, 2],
      [3, 4],
    ],
  });
  assert.ok(r.output instanceof Float64Array);
  assert.deepEqual(r.shape, [2, 2]);
  assert.equal(r.precision, 'float64');
  assert.equal(r.fully_masked_rows, 0);
  [1.6604769, 2.6604769, 2.3395231, 3.3395231].forEach((x, i) => assert.ok(Math.abs(r.output[i] - x) <= 5e-8, `${r.output[i]}`));
  const f32 = attention({
    Q: new Float32Array([1, 0, 0, 1]),
    K: new Float32Array([1, 0, 0, 1]),
    V: new Float32Array([1, 2, 3, 4]),
    L: 2,
    S: 2,
  });
  assert.ok(f32.output instanceof Float32Array);
  [1.6604769, 2.6604769, 2.3395231, 3.3395231].forEach((x, i) => assert.ok(Math.abs(f32.output[i] - x) <= 3e-7));
});

test('equals engine.run for causal, masks, scales, precisions and odd sizes', () => {
  const next = generator(7);
  let cases = 0;
  for (const [L, S, d, dv] of [
    [1, 1, 1, 1],
    [3, 5, 7, 2],
    [9, 130, 16, 5],
    [40, 33, 64, 64],
  ]) {
    for (const causal of [false, true]) {
      for (const precision of ['float64', 'float32']) {
        for (const maskType of ['none', 'additive', 'keep']) {
          for (const scale of [undefined, 0.3, '1/sqrt(3)', 'none']) {
            const Q = matrix(next, L, d);
            const K = matrix(next, S, d);
            const V = matrix(next, S, dv);
            let mask;
            if (maskType === 'additive') mask = matrix(next, L, S).map((row) => row.map((x) => (x < -0.5 ? -Infinity : x)));
            if (maskType === 'keep') mask = matrix(next, L, S).map((row) => row.map((x) => x > -0.5));
            const options = { causal, precision, ...(mask ? { mask } : {}), ...(scale !== undefined ? { scale } : {}) };
            const trace = engine.run({ Q, K, V, options });
            const fast = attention({ Q, K, V, causal, precision, mask, scale });
            assert.deepEqual(fast.shape, [L, dv]);
            const tolerance = precision === 'float32' ? 2e-5 : 1e-12;
            for (let i = 0; i < L; i++) {
              for (let j = 0; j < dv; j++) {
                const a = fast.output[i * dv + j],
                  b = trace.output[i][j];
                assert.ok(
                  Math.abs(a - b) <= tolerance,
                  `L=${L} S=${S} ${precision} causal=${causal} ${maskType} scale=${scale}: [${i}][${j}] ${a} vs ${b}`,
                );
              }
            }
            assert.equal(fast.fully_masked_rows, trace.facts[0].fully_masked.length);
            cases++;
          }
        }
      }
    }
  }
  assert.equal(cases, 192);
});

test('long inputs go in chunks of query rows: causal, masks and error rows stay global', () => {
  const next = generator(5);
  const L = 600,
    S = 700,
    d = 8,
    dv = 3;
  const Q = matrix(next, L, d),
    K = matrix(next, S, d),
    V = matrix(next, S, dv);
  const mask = matrix(next, L, S).map((row) => row.map((x) => (x < -0.6 ? -Infinity : x)));
  mask[300].fill(-Infinity); // a fully masked row in the second chunk
  for (const precision of ['float64', 'float32']) {
    const trace = engine.run({ Q, K, V, options: { causal: true, mask, precision } });
    const fast = attention({ Q, K, V, causal: true, mask, precision });
    const tolerance = precision === 'float32' ? 2e-5 : 1e-12;
    let worst = 0;
    for (let i = 0; i < L; i++)
      for (let j = 0; j < dv; j++) worst = Math.max(worst, Math.abs(fast.output[i * dv + j] - trace.output[i][j]));
    assert.ok(worst <= tolerance, `${precision}: ${worst}`);
    assert.equal(fast.fully_masked_rows, trace.facts[0].fully_masked.length);
  }
  const bad = Q.map((row) => row.slice());
  bad[599][2] = NaN;
  assert.throws(() => attention({ Q: bad, K, V }), /Q row 600, column 3 is nan/);
  const badMask = mask.map((row) => row.slice());
  badMask[450][7] = Infinity;
  assert.throws(() => attention({ Q, K, V, mask: badMask }), /mask row 451, column 8 is inf/);
});

test('errors name the input', () => {
  const one = [[1]];
  assert.throws(() => attention({ Q: [[1]], K: [[1, 2]], V: one }), /Q has 1 columns but K has 2/);
  assert.throws(() => attention({ Q: new Float32Array(4), K: new Float32Array(4), V: new Float32Array(4) }), /L \(the number of queries\)/);
  assert.throws(() => attention({ Q: one, K: one, V: one, mask: [[Infinity]] }), /mask row 1, column 1 is inf/);
  assert.throws(() => attention({ Q: [[NaN]], K: one, V: one }), /Q row 1, column 1 is nan/);
  assert.throws(() => attention({ Q: one, K: one, V: one, scale: 'half' }), /scale must be/);
  assert.throws(() => attention({ Q: one, K: one, V: one, causall: true }), /unknown key "causall"/);
  assert.throws(
    () => attention({ Q: one, K: one, V: one, rope: true }),
    /^Error: unknown key "rope": attention takes Q, K, V, L, S, causal, scale, mask, precision; the problem's other options \(heads, softcap, rope, window, \.\.\.\) are engine\.run's$/,
  );
  assert.throws(() => attention({ Q: [[1], [2]], K: one, V: one, L: 3 }), /Q has 2 rows but L is 3/);
  // The module still works after errors.
  assert.equal(attention({ Q: one, K: one, V: [[5]] }).output[0], 5);
});

test('results are copies that survive memory growth', () => {
  const small = attention({
    Q: [
      [1, 0],
      [0, 1],
    ],
    K: [
      [1, 0],
      [0, 1],
    ],
    V: [
      [1, 2],
      [3, 4],
    ],
  }).output;
  const N = 3000,
    d = 64;
  const big = attention({
    Q: new Float32Array(N * d).fill(0.01),
    K: new Float32Array(N * d).fill(0.02),
    V: new Float32Array(N * d).fill(3),
    L: N,
    S: N,
  });
  assert.equal(big.output.length, N * d);
  assert.ok(big.output.every((x) => Math.abs(x - 3) < 1e-5));
  assert.ok(Math.abs(small[0] - 1.6604769) < 5e-8, 'an earlier result is not a view into wasm memory');
});

test('10,000 calls leave the wasm heap where it was', () => {
  const next = generator(11);
  const input = { Q: matrix(next, 5, 8), K: matrix(next, 7, 8), V: matrix(next, 7, 3), causal: true };
  attention(input);
  const before = heapStats();
  for (let i = 0; i < 10_000; i++) attention(input);
  for (let i = 0; i < 100; i++) assert.throws(() => attention({ ...input, Q: [[NaN]] }));
  assert.deepEqual(heapStats(), before);
});
