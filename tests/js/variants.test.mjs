// The attention variants of issue 31 through the package: QK-norm, the output gate, sigmoid and
// differential attention. Each key reaches the core (its steps, facts and worked calculations),
// each bad value is refused naming its key, the CLI's --help lists the keys, the worked
// calculations of the gradient cells, and the NumPy/PyTorch scripts (forward and backward).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { before, describe, test } from 'node:test';

import { TORCH_DOUBLE_ENV, dist, noNumpy, noTorch, reproducesTrace } from './helpers.mjs';

const pkg = await import(`${dist}node.js`);
let engine;
before(async () => {
  engine = await pkg.loadAttention();
});

const X = [
  [1, 0, 0.5],
  [0, 1, -0.5],
  [1, 1, 0.25],
];
const W = [
  [0.5, -1, 0.25, 1],
  [1, 0.5, -0.5, 0],
  [0, 1, 1, -1],
];
const WV = [
  [1, 0],
  [0, 1],
  [0.5, -0.5],
];
const base = (options = {}, more = {}) => ({ X, W_Q: W, W_K: W, W_V: WV, ...more, options });
const ids = (trace) => [...new Set(trace.steps.map((s) => s.id))];

function refused(problem, message, field) {
  assert.throws(
    () => engine.run(problem),
    (error) => {
      assert.equal(error.message, message);
      if (field !== undefined) assert.equal(error.field, field);
      return true;
    },
  );
}

describe('QK-norm', () => {
  test('rms and layer add Q_normed and K_normed before the scores, with the note of the largest score', () => {
    for (const type of ['rms', 'layer']) {
      const trace = engine.run(base({ qk_norm: { type, eps: 1e-5, g_q: [1, 2, 1, 1], g_k: '1 1 0.5 1' } }));
      assert.deepEqual(ids(trace).slice(0, 6), ['Q', 'K', 'V', 'Q_normed', 'K_normed', 'scores']);
      const q = trace.steps.find((s) => s.id === 'Q_normed');
      assert.match(q.text, type === 'rms' ? /mean\(Q²\)/ : /var\(Q\)/);
      assert.ok(Number.isFinite(trace.facts[0].max_score) && Number.isFinite(trace.facts[0].max_score_without_norm));
      const e = engine.explain(base({ qk_norm: { type } }), { step: 'K_normed', row: 1, col: 2 });
      assert.equal(e.kind, 'qk_norm');
      assert.ok(Math.abs(((e.input - e.mean) / e.divisor) * e.factor - e.value) < 1e-12);
    }
    assert.ok(Number.isNaN(engine.run(base()).facts[0].max_score));
  });

  test('its errors name the key', () => {
    refused(base({ qk_norm: { type: 'l2' } }), 'options.qk_norm.type must be "rms" or "layer", got "l2"', 'options.qk_norm.type');
    refused(
      base({ qk_norm: { type: 'rms', eps: 0 } }),
      'options.qk_norm.eps must be a positive number, got number 0',
      'options.qk_norm.eps',
    );
    refused(
      base({ qk_norm: { type: 'rms', gain: 1 } }),
      "options.qk_norm: unknown key 'gain'; expected one of type, eps, g_q, g_k",
      'options.qk_norm.gain',
    );
    refused(base({ qk_norm: true }), 'options.qk_norm.type is required: "rms" or "layer"');
    refused(
      base({ qk_norm: { type: 'rms', g_k: [1, 2] } }),
      'options.qk_norm.g_k has 2 gains but d_k = 4: one per feature of a head, shared by every head',
    );
    refused(
      base({ layout: 'columns', qk_norm: { type: 'rms' } }),
      'options.qk_norm is for the rows layout: the columns layout refuses it (options.layout "rows")',
    );
  });

  test('the gradients include dg_q and dg_k', () => {
    const g = engine.gradients(base({ qk_norm: { type: 'layer' } }));
    for (const id of ['dQ_normed', 'dK_normed', 'dg_q', 'dg_k', 'dW_Q'])
      assert.ok(
        g.steps.some((s) => s.id === id),
        id,
      );
    assert.deepEqual(g.steps.find((s) => s.id === 'dg_q').shape, [1, 4]);
  });
});

describe('sigmoid attention', () => {
  test('weights are σ(x + b), b = −ln S by default; rows need not sum to 1', () => {
    const trace = engine.run(base({ score_fn: 'sigmoid', causal: true }));
    const w = trace.steps.find((s) => s.id === 'weights');
    const masked = trace.steps.find((s) => s.id === 'masked');
    const b = -Math.log(3);
    assert.ok(Math.abs(w.data[1][0] - 1 / (1 + Math.exp(-(masked.data[1][0] + b)))) < 1e-15);
    assert.equal(w.data[0][2], 0);
    assert.match(w.text, /rows need not sum to 1/);
    assert.notEqual(trace.facts[0].weight_sums[2], 1);
    const e = engine.explain(base({ score_fn: 'sigmoid', sigmoid_bias: 0.5 }), { step: 'weights', row: 0, col: 1 });
    assert.equal(e.kind, 'sigmoid');
    assert.equal(e.bias, 0.5);
  });

  test('its errors name both keys', () => {
    refused(base({ score_fn: 'tanh' }), 'options.score_fn must be "softmax" or "sigmoid", got "tanh"', 'options.score_fn');
    refused(
      base({ score_fn: 'sigmoid', sigmoid_bias: 'x' }),
      'options.sigmoid_bias must be a finite number (default -ln S), got "x"',
      'options.sigmoid_bias',
    );
    refused(
      base({ score_fn: 'sigmoid', sink_logit: 0 }),
      'options.sink_logit and options.score_fn "sigmoid" exclude one another: a sink logit joins a softmax\'s denominator, and a sigmoid has none',
    );
    refused(
      base({ score_fn: 'sigmoid', differential: { lambda: 0.5 } }),
      'options.score_fn "sigmoid" and options.differential exclude one another: give one of them',
    );
    refused(base({ sigmoid_bias: 1 }), 'options.sigmoid_bias is given but options.score_fn is not "sigmoid"');
  });
});

describe('the output gate', () => {
  test('W_G elementwise or headwise adds gate and gated_output; gradients reach W_G, b_G and X', () => {
    const elementwise = engine.run(
      base(
        { heads: 2 },
        {
          W_G: [
            [1, 0],
            [0, 1],
            [1, 1],
          ],
          W_V: [
            [1, 0],
            [0, 1],
            [0.5, -0.5],
          ],
        },
      ),
    );
    assert.deepEqual(
      ids(elementwise).filter((id) => /gate/.test(id)),
      ['gate', 'gated_output'],
    );
    const headwise = engine.run(base({}, { W_G: [[1], [0], [-1]], b_G: [0.5] }));
    assert.deepEqual(headwise.steps.find((s) => s.id === 'gate').shape, [3, 1]);
    const e = engine.explain(base({}, { W_G: [[1], [0], [-1]], b_G: [0.5] }), { step: 'gate', row: 2, col: 0 });
    assert.equal(e.kind, 'gate');
    assert.ok(Math.abs(1 / (1 + Math.exp(-e.input)) - e.value) < 1e-15);
    const g = engine.gradients(base({}, { W_G: [[1], [0], [-1]], b_G: [0.5] }));
    for (const id of ['dgate', 'dW_G', 'db_G', 'dX'])
      assert.ok(
        g.steps.some((s) => s.id === id),
        id,
      );
  });

  test('its errors name the key', () => {
    refused(base({}, { W_G: [[1, 2, 3]] }), 'W_G has 1 rows but X has 3 columns (W_G is 1x3)');
    refused(
      base(
        {},
        {
          W_G: [
            [1, 1, 1],
            [1, 1, 1],
            [1, 1, 1],
          ],
        },
      ),
      'W_G has 3 columns but the gate needs heads*d_v = 2 (one gate per output feature) or heads = 1 (one gate per head)',
    );
    refused(base({}, { b_G: [1] }), 'b_G is given without W_G: the gate is sigmoid(X*W_G + b_G)');
    refused(
      { Q: X, K: X, V: X, W_G: [[1], [1], [1]] },
      'W_G needs X: the gate is sigmoid(X*W_G + b_G) of the rows Q is projected from, but Q, K and V are given directly',
    );
  });
});

describe('differential attention', () => {
  test('weights_1, weights_2, weights = A₁ − λA₂ and head_normed; a weight explains its common-mode part', () => {
    const problem = base({ differential: { lambda: 0.5, lambda_init: 0.6 }, causal: true });
    const trace = engine.run(problem);
    assert.deepEqual(ids(trace), ['Q', 'K', 'V', 'mask', 'weights_1', 'weights_2', 'weights', 'head_output', 'head_normed', 'output']);
    const [a1, a2, a] = ['weights_1', 'weights_2', 'weights'].map((id) => trace.steps.find((s) => s.id === id));
    assert.ok(Math.abs(a.data[2][1] - (a1.data[2][1] - 0.5 * a2.data[2][1])) < 1e-15);
    assert.equal(a.kind, 'signed');
    assert.equal(trace.facts[0].lambda, 0.5);
    const e = engine.explain(problem, { step: 'weights', row: 2, col: 1 });
    assert.equal(e.kind, 'difference');
    assert.match(e.text, /common-mode part/);
  });

  test('its errors name the key', () => {
    refused(base({ differential: {} }), 'options.differential.lambda is required: one number, or one per head');
    refused(base({ differential: { lambda: [1, 2] } }), 'options.differential.lambda needs one number or one per head: 2 given for 1 head');
    refused(
      base({ differential: { lambda: 0.5, norm: 'yes' } }),
      'options.differential.norm must be true or false, got "yes"',
      'options.differential.norm',
    );
    const I3 = [
      [1, 0, 0],
      [0, 1, 0],
      [0, 0, 1],
    ];
    refused(
      base({ differential: { lambda: 0.5 } }, { W_Q: I3, W_K: I3 }),
      "options.differential needs an even d_k (each head's features split in halves), got d_k = 3",
    );
  });
});

test("the CLI's --help lists the variants' keys, and a problem with one runs", () => {
  const help = execFileSync(process.execPath, [`${dist}cli.js`, '--help'], { encoding: 'utf8' });
  for (const key of [
    'W_G',
    'b_G',
    'options.qk_norm',
    'options.qk_norm.type',
    'options.score_fn',
    'options.sigmoid_bias',
    'options.differential',
    'options.differential.lambda',
  ]) {
    assert.match(help, new RegExp(`^  ${key.replace(/[.[\]]/g, '\\$&')}[: ]`, 'm'), key);
  }
});

// Problems of each variant (and some together), with X, two heads and W_O, for the gradient cells
// and the scripts.
const R = (r, c, s) => Array.from({ length: r }, (_, i) => Array.from({ length: c }, (_, j) => Math.sin(s * (i * c + j + 1))));
const wide = { X: R(4, 5, 7), W_Q: R(5, 8, 1), W_K: R(5, 8, 2), W_V: R(5, 4, 3), W_O: R(4, 3, 4), b_Q: R(1, 8, 9)[0] };
const variantProblems = {
  'QK-norm (layer, gains), RoPE, causal': {
    ...wide,
    options: { heads: 2, qk_norm: { type: 'layer', g_q: [1, 2, 0.5, -1], eps: 1e-3 }, rope: true, causal: true },
  },
  'QK-norm (rms), a cache': {
    Q: R(3, 4, 1),
    K: R(2, 4, 2),
    V: R(2, 2, 3),
    past_K: R(2, 4, 5),
    past_V: R(2, 2, 6),
    options: { qk_norm: { type: 'rms' }, causal: true },
  },
  'the gate per feature with b_G, sinusoidal positions': {
    ...wide,
    W_G: R(5, 4, 5),
    b_G: [0.1, 0.2, 0.3, 0.4],
    options: { heads: 2, positional: 'sinusoidal' },
  },
  'the gate per head, causal': { ...wide, W_G: R(5, 2, 5), options: { heads: 2, causal: true } },
  'sigmoid attention, causal, softcap': { ...wide, options: { heads: 2, score_fn: 'sigmoid', causal: true, softcap: 2 } },
  'sigmoid attention with a bias, ALiBi': { ...wide, options: { heads: 2, score_fn: 'sigmoid', sigmoid_bias: 0.3, alibi: true } },
  'differential attention, RoPE, causal, softcap': {
    ...wide,
    options: { differential: { lambda: 0.5 }, rope: true, causal: true, softcap: 1.5 },
  },
  'differential attention per head, gated': {
    ...wide,
    W_G: R(5, 4, 5),
    options: { heads: 2, differential: { lambda: [0.5, 0.2], lambda_init: 0.6 } },
  },
  'differential attention without the norm, QK-norm, RoPE, a cache': {
    Q: R(3, 8, 1),
    K: R(2, 8, 2),
    V: R(2, 4, 3),
    past_K: R(2, 8, 5),
    past_V: R(2, 4, 6),
    options: { heads: 2, differential: { lambda: 0.3, norm: false }, qk_norm: { type: 'rms' }, rope: true },
  },
};
const sum = (list) => list.reduce((t, x) => t + x, 0);

describe("worked calculations of the variants' gradient cells", () => {
  test("every gradient step of every variant explains its cells: the step's number, made of its terms", () => {
    const dO = R(4, 3, 11);
    for (const [name, problem] of Object.entries(variantProblems)) {
      const withDO = problem.W_O ? { ...problem, dO } : problem; // all ones without W_O
      const g = engine.gradients(withDO);
      const kinds = new Set();
      for (const s of g.steps.slice(g.steps.findIndex((t) => t.id === 'dO'))) {
        for (const [row, col] of [
          [0, 0],
          [s.shape[0] - 1, s.shape[1] - 1],
        ]) {
          const e = engine.explain(withDO, { step: s.id, head: s.head, row, col });
          const at = `${name}: ${s.id}:${s.head} (${row}, ${col})`;
          assert.equal(e.value, s.data[row][col], at);
          kinds.add(e.kind);
          // Each kind's numbers give the value again (docs/api.md's table).
          const again = {
            gradient_dot: () => sum(e.products),
            head_sum: () => sum(e.left),
            token_sum: () => sum(e.left),
            sigmoid_grad: () => e.input * e.factor,
            gated: () => e.input * e.factor,
            scale: () => e.input * e.factor,
            qk_norm_grad: () => (e.input * e.factor - e.mean - (e.right[col] * sum(e.products)) / e.products.length) / e.divisor,
          }[e.kind];
          if (again)
            assert.ok(Math.abs(again() - e.value) <= 1e-12 * Math.max(1, Math.abs(e.value)), `${at}: ${e.kind} ${again()} vs ${e.value}`);
          for (const template of [...e.lines, e.text, e.terms?.caption ?? '']) {
            const filled = pkg.fillExplanation(template, e, { number: (x) => x.toFixed(4), label: (n) => `the ${n}` });
            assert.doesNotMatch(filled, /@|undefined|NaN/, `${at}: ${filled}`);
          }
        }
      }
      if (/QK-norm/.test(name)) assert.ok(kinds.has('qk_norm_grad'), name);
      if (/sigmoid/.test(name)) assert.ok(kinds.has('sigmoid_grad'), name);
      if (/gate/.test(name)) assert.ok(kinds.has('gated'), name);
    }
  });

  test("the cells by their formulas: sigmoid's slope, the gate, λ", () => {
    const sigmoid = variantProblems['sigmoid attention, causal, softcap'];
    const g = engine.gradients(sigmoid);
    const step = (id, head) => g.steps.find((s) => s.id === id && s.head === head);
    const a = step('weights', 1).data[2][1],
      dA = step('dA', 1).data[2][1];
    const dS = engine.explain(sigmoid, { step: 'dS', head: 1, row: 2, col: 1 });
    assert.equal(dS.kind, 'sigmoid_grad');
    assert.ok(Math.abs(dS.value - dA * a * (1 - a)) < 1e-14);
    const diff = variantProblems['differential attention per head, gated'];
    const gd = engine.gradients(diff);
    const dA2 = gd.steps.find((s) => s.id === 'dA' && s.head === 1).data[1][2];
    assert.ok(Math.abs(engine.explain(diff, { step: 'dweights_2', head: 1, row: 1, col: 2 }).value + 0.2 * dA2) < 1e-15);
    const dq = engine.explain(diff, { step: 'dQ', head: 0, row: 3, col: 3 });
    assert.match(dq.text, /half 2/);
    const gated = engine.explain(diff, { step: 'dhead_normed', head: 1, row: 0, col: 1 });
    const G = gd.steps.find((s) => s.id === 'gate' && s.head === 1).data[0][1];
    assert.equal(gated.kind, 'gated');
    assert.equal(gated.factor, G);
  });
});

describe('the NumPy and PyTorch scripts recompute the variants', () => {
  for (const [name, problem] of Object.entries(variantProblems)) {
    test(`NumPy, forward and backward: ${name}`, { skip: noNumpy }, () => {
      reproducesTrace(pkg.numpyScript(problem, engine.run(problem)), engine.run(problem), `numpy ${name}`);
      const g = engine.gradients(problem);
      reproducesTrace(pkg.numpyScript(problem, g, { gradients: true }), g, `numpy gradients ${name}`);
    });
    test(`PyTorch (the test double): ${name}`, { skip: noNumpy }, () => {
      const trace = engine.run(problem);
      const script = pkg.pytorchScript(problem, trace);
      assert.match(script, /# Skipped: scaled_dot_product_attention has no /);
      reproducesTrace(script, trace, `torch ${name}`, { env: TORCH_DOUBLE_ENV });
    });
    test(`PyTorch (installed): ${name}`, { skip: noTorch }, () => {
      const trace = engine.run(problem);
      reproducesTrace(pkg.pytorchScript(problem, trace), trace, `real torch ${name}`, { env: { ...process.env, PYTHONPATH: '' } });
    });
  }
});
