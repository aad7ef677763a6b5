// 100,000 calls leave the wasm heap where it started: the copy-out API leaks nothing.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { dist } from './helpers.mjs';

const { loadAttention } = await import(`${dist}node.js`);

test('100,000 run() calls leave wasm memory size and malloc usage unchanged', async () => {
  const engine = await loadAttention();
  const [Q, K, V] = engine.random(
    42,
    [1, 2, 3].map(() => ({ kind: 'randn', shape: [4, 8] })),
  );
  const problem = { Q, K, V, options: { causal: true } };
  engine.run(problem); // warm up: embind's one-time allocations
  const before = engine.heapStats();
  let checksum = 0;
  for (let i = 0; i < 100_000; i++) checksum += engine.run(problem).output[3][0];
  const after = engine.heapStats();
  assert.ok(Math.abs(checksum / 100_000 - 0.01421368) < 1e-8, `mean output[3][0] = ${checksum / 100_000}`);
  assert.deepEqual(after, before);
});

test('errors (trace and fast path), text inputs, explain, parse and random leak nothing either', async () => {
  const engine = await loadAttention();
  const bad = { Q: [[1, 2]], K: [[1, 2, 3]], V: [[1]] };
  const cell = { step: 'weights', row: 0, col: 1 };
  const ok = {
    Q: [
      [1, 2],
      [3, 4],
    ],
    K: [
      [1, 0],
      [0, 1],
    ],
    V: [
      [1, 2],
      [3, 4],
    ],
  };
  const round = () => {
    assert.throws(() => engine.run(bad));
    assert.throws(() => engine.run({ ...ok, K: '[[1, 0], [0, x]]' }), /^Error: K: row 2, column 2/);
    engine.run({ ...ok, Q: '1 2\n3 4' });
    // The fast path's C++ errors come back returned, as the trace API's do (cpp/wire.h guarded()).
    assert.throws(() => engine.attention({ Q: [[NaN]], K: [[1]], V: [[1]] }), /^Error: Q /);
    assert.throws(() => engine.parseMatrix('[[1, 2], [3]]'));
    engine.explain(ok, cell);
    assert.throws(() => engine.explain(ok, { step: 'nope', row: 0, col: 0 }));
    engine.parseMatrix('[[1, 2], [3, 4]]');
    engine.random(7, [{ kind: 'normal', shape: [3, 3] }]);
  };
  // Two rounds first: the second may still raise the heap's top once (by a few bytes, with
  // nothing more in use), as the first round's frees reorder the allocator's free lists.
  round();
  round();
  const before = engine.heapStats();
  for (let i = 0; i < 10_000; i++) round();
  assert.deepEqual(engine.heapStats(), before);
});
