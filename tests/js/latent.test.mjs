// Multi-head latent attention through the package (issue 31): its inputs in the problem JSON and
// their errors, its steps and the absorbed form, explain, the cache's numbers per token, the CLI,
// the gradients (the naive form, against finite differences), and the NumPy/PyTorch scripts.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { TORCH_DOUBLE_ENV, dist, noNumpy, reproducesTrace, runCli } from './helpers.mjs';

const { loadAttention, numpyScript, pytorchScript } = await import(`${dist}node.js`);
const engine = await loadAttention();

// d_model 6, d_c 3, d_cq 4, 2 heads of d_h 2, d_r 2, d_v 3, W_O to 5; 2 cached tokens.
const [X, W_DKV, W_UK, W_UV, W_KR, W_DQ, W_UQ, W_QR, W_O, past_c_KV, past_k_R, W_Q, W_QRx] = engine.random(
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
    [6, 4],
    [6, 4],
  ].map((shape) => ({ kind: 'randn', shape })),
);
const latent = { X, W_DKV, W_UK, W_UV, W_KR, W_DQ, W_UQ, W_QR, W_O, past_c_KV, past_k_R, options: { heads: 2, causal: true } };
const plain = { X, W_DKV, W_UK, W_UV, W_KR, W_Q, W_QR: W_QRx, options: { heads: 2 } };
const maxAbs = (a, b) => Math.max(...a.flat().map((x, i) => (x === b.flat()[i] ? 0 : Math.abs(x - b.flat()[i]))));
const step = (trace, id, head = null) => trace.steps.find((s) => s.id === id && s.head === head);

describe('multi-head latent attention', () => {
  test('its inputs are problem keys, each saying what it holds', () => {
    const expected = Object.fromEntries(engine.problemKeys.map((k) => [k.key, k.expected]));
    assert.equal(expected.W_DKV, "a matrix: X's down-projection to the latent c_KV, d_model x d_c");
    assert.equal(expected.past_k_R, 'a matrix: the cached rotated keys k_R, d_r wide');
    for (const key of ['W_UK', 'W_UV', 'W_KR', 'W_QR', 'W_DQ', 'W_UQ', 'past_c_KV']) assert.ok(key in expected, key);
  });

  test('its steps, the scores in two parts, absorbed = naive, the cache per token', () => {
    const trace = engine.run(latent);
    assert.deepEqual(
      trace.steps.slice(0, 4).map((s) => s.id),
      ['rope_angles', 'c_KV', 'k_R', 'c_Q'],
    );
    assert.deepEqual(
      trace.steps.filter((s) => s.head === 1).map((s) => s.id),
      [
        'K_C',
        'V',
        'Q_C',
        'q_R',
        'scores_C',
        'scores_R',
        'scores',
        'scaled',
        'mask',
        'masked',
        'weights',
        'head_output',
        'Q_absorbed',
        'scores_C_absorbed',
        'O_latent',
      ],
    );
    assert.deepEqual(
      trace.steps.slice(-4).map((s) => s.id),
      ['concat', 'output', 'output_absorbed', 'cache_sizes'],
    );
    assert.deepEqual(step(trace, 'c_KV').shape, [6, 3]);
    assert.deepEqual(step(trace, 'c_KV').data.slice(0, 2), past_c_KV);
    assert.equal(trace.meta.d_k, 4);
    assert.equal(trace.meta.keys, 6);
    assert.ok(Math.abs(trace.meta.scale - 0.5) < 1e-15); // 1/√(d_h + d_r)
    for (const h of [0, 1]) assert.ok(maxAbs(step(trace, 'scores_C_absorbed', h).data, step(trace, 'scores_C', h).data) < 1e-12);
    assert.ok(maxAbs(step(trace, 'output_absorbed').data, trace.output) < 1e-12);
    assert.deepEqual(step(trace, 'cache_sizes').data, [[8, 4, 5]]); // MHA 2·2·2, MQA 2·2, MLA 3 + 2
    assert.equal(step(trace, 'scores', 0).text, 'S⁽¹⁾ = S_C⁽¹⁾ + S_R⁽¹⁾');
    assert.deepEqual(step(trace, 'c_KV').given, ['X', 'W_DKV', 'past_c_KV']);
    // A hidden key gets no weight: causal compares positions (the queries after the 2 cached tokens).
    assert.equal(step(trace, 'weights', 0).data[0][3], 0);
    assert.ok(step(trace, 'weights', 0).data[0][2] > 0);
  });

  test('explain: every new kind of cell', () => {
    assert.equal(engine.explain(latent, { step: 'c_KV', row: 0, col: 1 }).kind, 'cache');
    assert.equal(engine.explain(latent, { step: 'c_KV', row: 3, col: 1 }).kind, 'projection');
    assert.equal(engine.explain(latent, { step: 'k_R', row: 3, col: 0 }).kind, 'rotation');
    assert.equal(engine.explain(latent, { step: 'q_R', head: 1, row: 0, col: 1 }).kind, 'rotation');
    assert.equal(engine.explain(latent, { step: 'scores', head: 1, row: 0, col: 1 }).kind, 'sum');
    const absorbed = engine.explain(latent, { step: 'scores_C_absorbed', head: 1, row: 2, col: 1 });
    assert.equal(absorbed.kind, 'dot');
    assert.match(absorbed.text, /the naive form.s content score/);
    const out = engine.explain(latent, { step: 'output_absorbed', row: 1, col: 4 });
    assert.equal(out.kind, 'head_sum');
    assert.ok(Math.abs(out.left[0] + out.left[1] - out.value) < 1e-12);
    const mla = engine.explain(latent, { step: 'cache_sizes', row: 0, col: 2 });
    assert.equal(mla.kind, 'cache_size');
    assert.equal(mla.source, 'MLA');
  });

  test('W_Q with W_QR from X, one head, no W_O', () => {
    const trace = engine.run({
      ...plain,
      W_UK: W_UK.map((r) => r.slice(0, 2)),
      W_UV: W_UV.map((r) => r.slice(0, 3)),
      W_Q: W_Q.map((r) => r.slice(0, 2)),
      W_QR: W_QRx.map((r) => r.slice(0, 2)),
      options: {},
    });
    assert.deepEqual(
      trace.steps.map((s) => s.id),
      [
        'rope_angles',
        'c_KV',
        'k_R',
        'K_C',
        'V',
        'Q_C',
        'q_R',
        'scores_C',
        'scores_R',
        'scores',
        'scaled',
        'weights',
        'Q_absorbed',
        'scores_C_absorbed',
        'O_latent',
        'output',
        'output_absorbed',
        'cache_sizes',
      ],
    );
    assert.deepEqual(step(trace, 'cache_sizes').data, [[4, 5]]);
  });

  test('errors name both keys', () => {
    const both = 'W_DKV (multi-head latent attention) and ';
    assert.throws(() => engine.run({ ...plain, options: { heads: 2, kv_heads: 1 } }), {
      message: new RegExp(`${both.replace(/[()]/g, '\\$&')}options.kv_heads cannot be combined`),
    });
    assert.throws(
      () => engine.run({ ...plain, options: { heads: 2, window: [1, 0] } }),
      /W_DKV \(multi-head latent attention\) and options\.window cannot be combined/,
    );
    assert.throws(() => engine.run({ ...plain, options: { heads: 2, sink_tokens: 1 } }), /and options\.sink_tokens cannot be combined/);
    assert.throws(() => engine.run({ ...plain, options: { heads: 2, alibi: true } }), /and options\.alibi cannot be combined/);
    assert.throws(() => engine.run({ ...plain, options: { heads: 2, attention: 'linear' } }), {
      message:
        'options.attention "linear" and W_DKV (multi-head latent attention) exclude one another: a problem computes one variant of attention',
    });
    const { W_KR: _, ...noKR } = plain;
    assert.throws(() => engine.run(noKR), {
      message: 'W_QR is given without W_KR: the rotary part of a score is q_R·k_R, so W_QR and W_KR go together',
    });
    const { W_DKV: __, ...noDKV } = plain;
    assert.throws(() => engine.run(noDKV), /W_UK is an input of multi-head latent attention: give W_DKV/);
    assert.throws(() => engine.run({ ...plain, W_DKV: 'x' }), /W_DKV/);
  });

  test('engine.gradients: X and every latent weight against central finite differences (the naive form)', () => {
    for (const problem of [latent, plain]) {
      const width = problem.W_O ? 5 : 6;
      const dO = engine.random(32, [{ kind: 'randn', shape: [4, width] }])[0];
      const g = engine.gradients(problem, { dO });
      const loss = (p) =>
        engine
          .run(p)
          .output.flat()
          .reduce((t, x, k) => t + x * dO.flat()[k], 0);
      assert.ok(Math.abs(g.loss - loss(problem)) < 1e-12);
      const keys = ['X', 'W_DKV', 'W_UK', 'W_UV', 'W_KR', 'W_QR', 'W_DQ', 'W_UQ', 'W_Q', 'W_O', 'past_c_KV', 'past_k_R'].filter(
        (k) => problem[k],
      );
      for (const key of keys) {
        const grad = step(g, `d${key}`);
        assert.ok(grad, `d${key}`);
        assert.deepEqual(grad.shape, [problem[key].length, problem[key][0].length], key);
        const largest = Math.max(1e-3, ...grad.data.flat().map(Math.abs));
        problem[key].forEach((row, i) =>
          row.forEach((_, j) => {
            const nudged = (h) => ({ ...problem, [key]: problem[key].map((r, a) => r.map((v, b) => (a === i && b === j ? v + h : v))) });
            const difference = (loss(nudged(1e-5)) - loss(nudged(-1e-5))) / 2e-5;
            assert.ok(
              Math.abs(grad.data[i][j] - difference) <= 1e-6 * Math.max(Math.abs(difference), largest),
              `${key}[${i}][${j}]: ${grad.data[i][j]} vs ${difference}`,
            );
          }),
        );
      }
      for (const id of ['dQ_C', 'dK_C', 'dq_R', 'dk_R']) assert.ok(step(g, id, 1), id);
    }
    // Worked calculations of the gradient cells: a head's and the whole latent ones.
    const g = engine.gradients(latent);
    for (const [id, head, row, col] of [
      ['dK_C', 1, 2, 0],
      ['dW_UK', null, 0, 3],
      ['dc_KV', null, 3, 1],
      ['dX', null, 1, 4],
      ['dW_QR', null, 2, 3],
    ]) {
      const e = engine.explain(latent, { step: id, head, row, col });
      assert.equal(e.kind, 'gradient_dot', id);
      assert.equal(e.value, step(g, id, head).data[row][col], id);
      assert.ok(Math.abs(e.products.reduce((t, x) => t + x, 0) - e.value) < 1e-12, id);
    }
  });

  test('the CLI runs it and lists its keys', () => {
    const r = runCli(['run', '-'], JSON.stringify(plain));
    assert.equal(r.code, 0, r.stderr);
    const trace = JSON.parse(r.stdout);
    assert.ok(trace.steps.some((s) => s.id === 'output_absorbed'));
    const bad = runCli(['run', '-'], JSON.stringify({ ...plain, options: { heads: 2, alibi: true } }));
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /W_DKV \(multi-head latent attention\) and options\.alibi cannot be combined/);
    const help = runCli(['--help']).stdout;
    for (const key of ['W_DKV', 'W_UK', 'W_UV', 'W_KR', 'W_QR', 'W_DQ', 'W_UQ', 'past_c_KV', 'past_k_R'])
      assert.ok(help.includes(key), key);
  });
});

describe('the NumPy and PyTorch scripts of latent attention', () => {
  const problems = {
    'W_DQ, W_UQ, a cache, causal, W_O': latent,
    'W_Q, W_QR from X, a keep mask': {
      ...plain,
      options: {
        heads: 2,
        mask: [
          [true, false, true, true],
          [true, true, false, true],
          [true, true, true, true],
          [false, true, true, true],
        ],
      },
    },
    'no rotary part, float32': { X, W_DKV, W_UK, W_UV, W_Q, options: { heads: 2, precision: 'float32', causal: true } },
  };
  for (const [dialect, script] of [
    ['NumPy', numpyScript],
    ['PyTorch', pytorchScript],
  ]) {
    for (const [name, problem] of Object.entries(problems)) {
      test(`the ${dialect} script reproduces the trace: ${name}`, { skip: noNumpy }, () => {
        const trace = engine.run(problem);
        reproducesTrace(script(problem, trace), trace, `latent ${dialect} ${name}`, { env: TORCH_DOUBLE_ENV });
      });
    }
  }
  test('the backward pass script says it does not cover latent attention', () => {
    assert.throws(() => numpyScript(latent, engine.run(latent), { gradients: true }), /does not cover multi-head latent attention/);
  });
});
