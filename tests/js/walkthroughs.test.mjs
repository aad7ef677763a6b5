// The two WebAssembly modules: the core (attention.wasm) that loadAttention() loads, and the
// walkthroughs (attention-walkthroughs.wasm: decode, tiles, onlineSoftmax, gradients, explain of
// gradient cells) that engine.loadWalkthroughs() loads on demand.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';

import { dist } from './helpers.mjs';

const { loadAttention } = await import(`${dist}node.js`);

const problem = {
  Q: [
    [1, 0],
    [0, 1],
    [1, 1],
  ],
  K: [
    [1, 2],
    [0, 1],
    [2, 0],
  ],
  V: [
    [1, 2],
    [3, 4],
    [5, 6],
  ],
  options: { causal: true },
};
const needs = (name) => ({
  message:
    `engine.${name} needs the walkthroughs module: await engine.loadWalkthroughs() first, ` + 'or loadAttention({ walkthroughs: true })',
});

describe('the walkthroughs module', () => {
  test('Node loads it by default', async () => {
    const engine = await loadAttention();
    assert.equal(engine.walkthroughsLoaded, true);
    assert.equal(engine.decode(problem).steps.length, 3);
  });

  test('without it, the core runs and the walkthroughs say how to load them', async () => {
    const engine = await loadAttention({ walkthroughs: false });
    assert.equal(engine.walkthroughsLoaded, false);
    const weights = engine.run(problem).steps.find((s) => s.id === 'weights').data;
    // Row 2 of softmax(QKᵀ/√2) with the causal mask: keys 1 and 2 of scores 2/√2 and 1/√2.
    const e = Math.exp(1 / Math.SQRT2);
    assert.ok(Math.abs(weights[1][0] - e / (e + 1)) < 1e-15, `weights[1][0] = ${weights[1][0]}`);
    assert.equal(engine.explain(problem, { step: 'weights', row: 1, col: 0 }).value, weights[1][0]);
    assert.throws(() => engine.decode(problem), needs('decode'));
    assert.throws(() => engine.tiles(problem, { block_q: 2, block_k: 2 }), needs('tiles'));
    assert.throws(() => engine.onlineSoftmax([1, 2]), needs('onlineSoftmax'));
    assert.throws(() => engine.gradients(problem), needs('gradients'));
    assert.throws(() => engine.explain(problem, { step: 'dV', row: 0, col: 0 }), needs("explain of gradient step 'dV'"));
  });

  test('loadWalkthroughs() loads it once and the same engine then has every method', async () => {
    const engine = await loadAttention({ walkthroughs: false });
    const first = engine.loadWalkthroughs();
    const second = engine.loadWalkthroughs();
    assert.equal(second, first, 'a load in progress is shared');
    assert.equal(await first, engine);
    assert.equal(await engine.loadWalkthroughs(), engine);
    assert.equal(engine.walkthroughsLoaded, true);
    const trace = engine.run(problem);
    const gradients = engine.gradients(problem);
    // The gradients start with the forward steps of the same problem, computed by the other module.
    assert.deepEqual(
      gradients.steps.slice(0, trace.steps.length).map((s) => s.data),
      trace.steps.map((s) => s.data),
    );
    // dV = Aᵀ dO with dO all ones: each value row's gradient is the weight its key gets, summed.
    const A = trace.steps.find((s) => s.id === 'weights').data;
    const dV = gradients.steps.find((s) => s.id === 'dV' && s.head === null).data;
    A[0].forEach((_, j) => assert.ok(Math.abs(dV[j][0] - A.reduce((sum, row) => sum + row[j], 0)) < 1e-15));
    const online = engine.onlineSoftmax([1, 2, 3]);
    assert.equal(online.max, 3);
    assert.ok(Math.abs(online.sum - (Math.exp(-2) + Math.exp(-1) + 1)) < 1e-15, `sum ${online.sum}`);
  });

  test('no forward step id starts with d, every gradient step id does (explain routes by it)', async () => {
    const engine = await loadAttention();
    const full = {
      X: [
        [1, 0, 2],
        [0, 1, 1],
        [1, 1, 0],
        [2, 0, 1],
      ],
      W_Q: [
        [1, 0, 1, 0],
        [0, 1, 0, 1],
        [1, 1, 0, 0],
      ],
      W_K: [
        [0, 1],
        [1, 0],
        [1, 1],
      ],
      W_V: [
        [1, 2],
        [0, 1],
        [1, 0],
      ],
      W_O: [
        [1, 0],
        [0, 1],
        [1, 1],
        [0, 2],
      ],
      b_O: [0.5, -0.5],
      options: {
        heads: 2,
        kv_heads: 1,
        causal: true,
        rope: true,
        softcap: 5,
        alibi: true,
        mask: [
          [true, true, false, true],
          [true, true, true, true],
          [true, true, true, true],
          [true, true, true, true],
        ],
      },
    };
    const forward = engine.run(full).steps.length;
    const steps = engine.gradients(full).steps;
    assert.ok(steps.length > forward);
    for (const s of steps.slice(0, forward)) assert.ok(!s.id.startsWith('d'), `forward step ${s.id}`);
    for (const s of steps.slice(forward)) assert.ok(s.id.startsWith('d'), `gradient step ${s.id}`);
  });

  test('a missing walkthroughs module is named, and a later load can succeed', async () => {
    const engine = await loadAttention({ walkthroughs: false, walkthroughsUrl: '/nonexistent/attention-walkthroughs.wasm' });
    await assert.rejects(engine.loadWalkthroughs(), {
      message: 'could not load the WebAssembly module from /nonexistent/attention-walkthroughs.wasm: no such file',
    });
    assert.equal(engine.walkthroughsLoaded, false);
    assert.throws(() => engine.gradients(problem), needs('gradients'));
  });

  test('the browser entry imports neither the walkthroughs glue nor its wasm statically', () => {
    const entry = readFileSync(`${dist}index.js`, 'utf8');
    assert.match(entry, /import\('\.\/attention-walkthroughs\.js'\)/);
    assert.doesNotMatch(entry, /from '\.\/attention-walkthroughs\.js'/);
  });
});
