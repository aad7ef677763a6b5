// Linear attention through the package (issue 31): options.attention "linear" and its keys, their
// errors, engine.recurrent (recurrent = parallel = chunked), explain and gradients of its steps,
// the CLI's recurrent command, and the NumPy/PyTorch scripts.
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import { TORCH_DOUBLE_ENV, dist, noNumpy, reproducesTrace, runCli } from './helpers.mjs';

const { loadAttention, numpyScript, pytorchScript } = await import(`${dist}node.js`);
const engine = await loadAttention();

const dir = mkdtempSync(join(tmpdir(), 'attention-linear-'));

const [Q, K, V, X, W_Q, W_K, W_V, W_O] = engine.random(
  31,
  [
    [5, 6],
    [5, 3],
    [5, 4],
    [4, 5],
    [5, 4],
    [5, 4],
    [5, 4],
    [4, 3],
  ].map((shape) => ({ kind: 'randn', shape })),
);
// 2 query heads sharing 1 key/value head, causal with a decay.
const gqa = { Q, K, V, options: { attention: 'linear', causal: true, decay: 0.8, heads: 2, kv_heads: 1 } };
const maxAbs = (a, b) => Math.max(...a.flat().map((x, i) => Math.abs(x - b.flat()[i])));

/** The paper's formula in JS: o_i = Σ_j c_ij φ(q_i)·φ(k_j) v_j / Σ_j c_ij φ(q_i)·φ(k_j). */
function byFormula({ Q: q, K: k, V: v, options: o }) {
  const phi = { 'elu+1': (x) => (x > 0 ? x + 1 : Math.exp(x)), relu: (x) => Math.max(0, x), identity: (x) => x }[o.feature_map ?? 'elu+1'];
  const heads = o.heads ?? 1,
    kv = o.kv_heads ?? heads,
    dk = q[0].length / heads,
    dv = v[0].length / kv;
  return q.map((qi, i) =>
    Array.from({ length: heads }, (_, h) => {
      const g = Math.floor(h / (heads / kv));
      const num = new Array(dv).fill(0);
      let den = 0;
      k.forEach((kj, j) => {
        if (o.causal && j > i) return;
        let w = 0;
        for (let m = 0; m < dk; m++) w += phi(qi[h * dk + m]) * phi(kj[g * dk + m]);
        w *= o.causal ? (o.decay ?? 1) ** (i - j) : 1;
        for (let c = 0; c < dv; c++) num[c] += w * v[j][g * dv + c];
        den += w;
      });
      return o.normalize === false ? num : num.map((x) => x / den);
    }).flat(),
  );
}

describe('options.attention "linear"', () => {
  test('the output is the formula, with its steps per head', () => {
    for (const options of [
      gqa.options,
      { attention: 'linear' },
      { attention: 'linear', feature_map: 'identity', normalize: false, causal: true },
    ]) {
      const problem = {
        Q: Q.map((r) => r.slice(0, options.heads ? 6 : 3)),
        K,
        V: options.heads ? V : V.map((r) => r.slice(0, 2)),
        options,
      };
      const trace = engine.run(problem);
      assert.ok(maxAbs(trace.output, byFormula(problem)) < 1e-12, JSON.stringify(options));
    }
    const trace = engine.run(gqa);
    assert.deepEqual(
      trace.steps.filter((s) => s.head === 1).map((s) => s.id),
      ['Q', 'K', 'V', 'phi_Q', 'phi_K', 'linear_scores', 'normalizer', 'head_output'],
    );
    const scores = trace.steps.find((s) => s.id === 'linear_scores' && s.head === 0);
    assert.equal(scores.title, 'Linear scores');
    assert.match(scores.tex, /\\gamma = 0\.8$/);
    assert.equal(scores.data[0][1], 0);
  });

  test('each key and its errors name the key', () => {
    const error = (options) => assert.throws(() => engine.run({ Q, K, V, options }));
    const message = (options) => {
      try {
        engine.run({ Q: Q.map((r) => r.slice(0, 3)), K, V, options });
      } catch (e) {
        return e.message;
      }
      return '';
    };
    error({ attention: 'linear', feature_map: 'tanh' });
    assert.match(message({ attention: 'lin' }), /options\.attention/);
    assert.match(message({ attention: 'linear', feature_map: 'tanh' }), /options\.feature_map/);
    assert.match(message({ attention: 'linear', normalize: 'yes' }), /^options\.normalize must be true or false/);
    assert.equal(message({ attention: 'linear', decay: 0 }), 'options.decay must be a number in (0, 1], got number 0');
    assert.match(message({ attention: 'linear', decay: 1.5 }), /options\.decay/);
    assert.equal(message({ decay: 0.5 }), 'options.decay is an option of linear attention: set options.attention to "linear"');
    assert.match(
      message({ attention: 'linear', causal: true, mask: [[1, 0, 0, 0, 0]] }),
      /^options\.attention "linear" and options\.mask cannot be combined/,
    );
    assert.match(message({ attention: 'linear', rope: true }), /^options\.attention "linear" and options\.rope cannot be combined/);
    assert.match(message({ attention: 'linear', softcap: 3 }), /and options\.softcap cannot be combined/);
    // Not causal: the decay is ignored, with a warning.
    assert.match(
      engine.run({ Q: Q.map((r) => r.slice(0, 3)), K, V, options: { attention: 'linear', decay: 0.5 } }).warnings[0],
      /^options\.decay = 0\.5 is ignored/,
    );
    assert.ok(engine.problemKeys.some((k) => k.key === 'options.decay'));
  });

  test('explain and gradients cover its steps', () => {
    const cell = engine.explain(gqa, { step: 'linear_scores', head: 1, row: 3, col: 1 });
    assert.equal(cell.kind, 'linear_score');
    assert.ok(Math.abs(cell.factor - 0.8 ** 2) < 1e-15);
    assert.equal(engine.explain(gqa, { step: 'normalizer', head: 0, row: 2, col: 0 }).kind, 'row_sum');
    const g = engine.gradients(gqa);
    for (const id of ['dlinear_scores', 'dphi_Q', 'dphi_K'])
      assert.ok(
        g.steps.some((s) => s.id === id && s.head === 1),
        id,
      );
    assert.equal(engine.explain(gqa, { step: 'dphi_K', head: 1, row: 0, col: 0 }).kind, 'gradient_dot');
  });
});

describe('engine.recurrent', () => {
  test('recurrent = parallel = chunked for every chunk size', () => {
    const parallel = engine.run(gqa).output;
    for (const chunk of [undefined, 1, 2, 3, 4, 5, 9]) {
      const r = engine.recurrent(gqa, chunk === undefined ? undefined : { chunk });
      assert.equal(r.chunk, chunk ?? 0);
      assert.ok(maxAbs(r.output, parallel) < 1e-12, `chunk ${chunk}`);
      assert.ok(r.max_difference < 1e-12);
      assert.ok(r.steps.every((s) => s.difference < 1e-12));
      assert.deepEqual(
        r.costs.map((c) => c.form),
        chunk ? ['softmax', 'parallel', 'recurrent', 'chunked'] : ['softmax', 'parallel', 'recurrent'],
      );
    }
    const r = engine.recurrent(gqa);
    assert.equal(r.steps.length, 10);
    assert.deepEqual(r.steps[4].tokens, [4, 5]);
    assert.equal(r.steps[0].state.length, 3);
    assert.equal(r.steps[0].z.length, 3);
    const c = engine.recurrent(gqa, { chunk: 2 });
    assert.deepEqual(
      c.steps.map((s) => s.tokens),
      [
        [0, 2],
        [2, 4],
        [4, 5],
        [0, 2],
        [2, 4],
        [4, 5],
      ],
    );
    assert.equal(c.steps[1].inter.length, 2);
  });

  test('its errors', () => {
    assert.throws(() => engine.recurrent(gqa, { chunk: 0 }), /^Error: chunk must be a positive integer, got number 0$/);
    assert.throws(() => engine.recurrent(gqa, { chunks: 2 }), /chunks/);
    assert.throws(
      () => engine.recurrent({ ...gqa, options: { ...gqa.options, causal: false } }),
      /^Error: recurrent needs causal linear attention/,
    );
  });
});

describe('the CLI', () => {
  const file = join(dir, 'linear.json');
  writeFileSync(file, JSON.stringify(gqa));
  test('recurrent [--chunk N] prints the forms as JSON or tables', () => {
    const json = runCli(['recurrent', '--chunk', '2', file]);
    assert.equal(json.code, 0, json.stderr);
    const r = JSON.parse(json.stdout);
    assert.equal(r.chunk, 2);
    assert.equal(r.steps.length, 6);
    const table = runCli(['recurrent', '--table', file]);
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stdout, /^head 1, token 1: difference from the parallel form /);
    assert.match(table.stdout, /\nrecurrent: \d+ multiply-adds, state 15 numbers\n/);
    assert.match(runCli(['run', '--table', file]).stdout, /linear_scores/);
  });
  test('its usage errors and --help', () => {
    const zero = runCli(['recurrent', '--chunk', '0', file]);
    assert.equal(zero.code, 2);
    assert.match(zero.stderr, /--chunk takes a positive integer, got 0/);
    const misplaced = runCli(['run', '--chunk', '2', file]);
    assert.equal(misplaced.code, 2);
    assert.match(misplaced.stderr, /--chunk is an option of recurrent/);
    const bad = runCli(['recurrent', '-'], JSON.stringify({ ...gqa, options: { ...gqa.options, decay: 2 } }));
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /options\.decay/);
    const help = runCli(['--help']).stdout;
    assert.match(help, /recurrent \[--chunk N\] \[FILE\|-\]/);
    for (const key of ['options.attention', 'options.feature_map', 'options.normalize', 'options.decay'])
      assert.ok(help.includes(key), key);
  });
});

describe('the NumPy and PyTorch scripts', () => {
  const problems = {
    'causal, decay, GQA': gqa,
    'X, W_O, relu, not normalized, two heads': {
      X,
      W_Q,
      W_K,
      W_V,
      W_O,
      options: { attention: 'linear', heads: 2, feature_map: 'relu', normalize: false },
    },
    'identity, explicit positions with a gap': {
      Q: Q.map((r) => r.slice(0, 3)),
      K,
      V,
      options: {
        attention: 'linear',
        feature_map: 'identity',
        causal: true,
        decay: 0.5,
        positions: { queries: [0, 1, 3, 4, 6], keys: [0, 1, 3, 4, 6] },
      },
    },
  };
  for (const [dialect, script] of [
    ['NumPy', numpyScript],
    ['PyTorch', pytorchScript],
  ]) {
    for (const [name, problem] of Object.entries(problems)) {
      test(`the ${dialect} script reproduces the trace: ${name}`, { skip: noNumpy }, () => {
        const trace = engine.run(problem);
        reproducesTrace(script(problem, trace), trace, `linear ${dialect} ${name}`, { env: TORCH_DOUBLE_ENV });
      });
    }
  }
  // The backward pass: every gradient step of engine.gradients, rebuilt by the NumPy script.
  for (const [name, problem] of Object.entries(problems)) {
    test(`the NumPy backward-pass script reproduces engine.gradients: ${name}`, { skip: noNumpy }, () => {
      const gradients = engine.gradients(problem);
      reproducesTrace(numpyScript(problem, gradients, { gradients: true }), gradients, `linear gradients ${name}`);
    });
  }
});
