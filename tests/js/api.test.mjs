// The seeds' numbers (tests/fixtures/seeds/) through the JS API (dist/node.js), plus the helpers
// the page uses.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';

import { assertPrinted, dist, printedNumbers, seedPrint, step } from './helpers.mjs';

const pkg = await import(`${dist}node.js`);
let engine;
before(async () => {
  engine = await pkg.loadAttention();
});

// Seed 000: np.random.seed(42); q, k, v = three np.random.randn(4, 8).
const seed000 = () => {
  const [Q, K, V] = engine.random(42, [
    { kind: 'randn', shape: [4, 8] },
    { kind: 'randn', shape: [4, 8] },
    { kind: 'randn', shape: [4, 8] },
  ]);
  return { Q, K, V };
};

describe('seed 000 (np.random.seed(42), three randn(4, 8))', () => {
  test('Q, K and the part of V the document shows, as printed', () => {
    const { Q, K, V } = seed000();
    assertPrinted(Q, seedPrint('000', 'Q'), 'Q');
    assertPrinted(K, seedPrint('000', 'K'), 'K');
    // The document cuts V off after its 14th whole number.
    const v = seedPrint('000', 'V');
    assert.equal(v.values.flat().length, 14);
    const shown = printedNumbers(v.text)
      .slice(0, 14)
      .map((n) => n.text)
      .join(' ');
    assertPrinted(V.flat().slice(0, 14), shown, `V (${v.where})`);
  });

  test('scores, variances, weights and output as printed', () => {
    const trace = engine.run(seed000());
    assert.deepEqual(
      trace.steps.map((s) => s.id),
      ['Q', 'K', 'V', 'scores', 'scaled', 'weights', 'output'],
    );
    assertPrinted(step(trace, 'scores').data, seedPrint('000', 'scores'), 'scores');
    assert.deepEqual(step(trace, 'scores').shape, [4, 4]);

    // Printed with 17 digits; numpy sums in another order, so allow a few float64 ulps.
    assertPrinted(trace.facts[0].scores_variance, seedPrint('000', 'scores_variance'), 'variance before scaling', 4 * 2.2e-16);
    assertPrinted(trace.facts[0].scaled_variance, seedPrint('000', 'scaled_variance'), 'variance after scaling', 4 * 2.2e-16);

    assertPrinted(step(trace, 'weights').data, seedPrint('000', 'weights'), 'weights');
    assertPrinted(trace.output, seedPrint('000', 'output'), 'output');
    assert.deepEqual(step(trace, 'output').data, trace.output);
    assert.equal(trace.meta.scale, 1 / Math.sqrt(8));
    assert.deepEqual(
      trace.facts[0].weight_sums.map((s) => Math.round(s * 1e12) / 1e12),
      [1, 1, 1, 1],
    );
  });

  test('masked (decoder) output as printed, causal and as an additive -inf mask', () => {
    const printed = seedPrint('000', 'causal_output');
    const causal = engine.run({ ...seed000(), options: { causal: true } });
    assertPrinted(causal.output, printed, 'causal output');
    const masked = step(causal, 'masked').data;
    assert.equal(masked[0][1], -Infinity);
    assert.equal(step(causal, 'weights').data[0][3], 0);

    const mask = [
      [0, '-inf', '-inf', '-inf'],
      [0, 0, '-inf', '-inf'],
      [0, 0, 0, '-inf'],
      [0, 0, 0, 0],
    ];
    assertPrinted(engine.run({ ...seed000(), options: { mask } }).output, printed, 'additive mask output');
    const keep = [
      [true, false, false, false],
      [true, true, false, false],
      [true, true, true, false],
      [true, true, true, true],
    ];
    assertPrinted(engine.run({ ...seed000(), options: { mask: keep } }).output, printed, 'keep mask output');
  });
});

describe('seed 002 (UDL 12.1: tokens as columns, Ω and β)', () => {
  const problem = (scale) => {
    const xs = engine.random(
      3,
      [1, 2, 3].map(() => ({ kind: 'normal', shape: [4, 1] })),
    );
    const X = xs[0].map((_, r) => xs.map((x) => x[r][0]));
    const [W_Q, W_K, W_V, b_Q, b_K, b_V] = engine.random(0, [
      ...[1, 2, 3].map(() => ({ kind: 'normal', shape: [4, 4] })),
      ...[1, 2, 3].map(() => ({ kind: 'normal', shape: [4, 1] })),
    ]);
    return { X, W_Q, W_K, W_V, b_Q: b_Q.flat(), b_K: b_K.flat(), b_V: b_V.flat(), options: { layout: 'columns', scale } };
  };

  const transpose = (m) => m[0].map((_, c) => m.map((row) => row[c]));

  test('the inputs drawn after np.random.seed(3), as printed', () => {
    assertPrinted(transpose(problem('none').X), seedPrint('002', 'X'), 'all_x');
  });

  test('unscaled: attention matrix and outputs as printed', () => {
    const trace = engine.run(problem('none'));
    const weights = step(trace, 'weights').data;
    assertPrinted(weights, seedPrint('002', 'weights'), 'attention');
    // Each column printed with 17 digits by the per-output loop; numpy's unshifted softmax rounds
    // differently in the last bits.
    [0, 1, 2].forEach((n) =>
      assertPrinted(
        weights.map((row) => row[n]),
        seedPrint('002', `weights_column_${n}`),
        `column ${n}`,
        1e-12,
      ),
    );
    assert.deepEqual(trace.output.length, 4); // D x N: tokens are columns
    assertPrinted(transpose(trace.output), seedPrint('002', 'output_T'), 'X_prime.T');
  });

  test('scaled by 1/sqrt(d_k): outputs as printed', () => {
    const trace = engine.run(problem('sqrt_dk'));
    assertPrinted(transpose(trace.output), seedPrint('002', 'scaled_output_T'), 'scaled X_prime.T');
    assert.equal(trace.meta.layout, 'columns');
  });

  test('permuting the tokens permutes the output, as printed', () => {
    const p = problem('none');
    p.X = p.X.map(([a, b, c]) => [b, a, c]);
    assertPrinted(transpose(engine.run(p).output), seedPrint('002', 'permuted_output_T'), 'permuted X_prime.T');
  });
});

describe('seed 003 (float32, divided by sqrt(3) from the token count)', () => {
  const problem = {
    X: seedPrint('003', 'X').text, // the printed text, parsed by the engine
    W_K: seedPrint('003', 'W_K').values,
    W_Q: seedPrint('003', 'W_Q').values,
    W_V: seedPrint('003', 'W_V').values,
    options: { precision: 'float32', scale: '1/sqrt(3)' },
  };

  // A float32's 8th printed digit lies below its resolution (2^-24): allow 4 float32 ulps.
  const float32Ulps = 4 * 5.96e-8;

  test('projections, divisor, weights and output as printed', () => {
    const trace = engine.run(problem);
    assert.equal(trace.meta.precision, 'float32');
    for (const id of ['Q', 'K', 'V']) assertPrinted(step(trace, id).data, seedPrint('003', id), id);
    assert.equal(Math.fround(1 / trace.meta.scale), Math.fround(seedPrint('003', 'scale_divisor').values[0][0]));
    assertPrinted(step(trace, 'weights').data, seedPrint('003', 'weights'), 'weights', float32Ulps);
    const output = seedPrint('003', 'output');
    assertPrinted(trace.output, output, 'output', float32Ulps);
    // Computed in float32 indeed: in float64 the same entry is further from the print.
    const trace64 = engine.run({ ...problem, options: { scale: '1/sqrt(3)' } });
    assert.ok(Math.abs(trace64.output[1][1] - output.values[1][1]) > float32Ulps * output.values[1][1]);
  });
});

describe('seed 004 (two tokens, identity W_Q, W_K)', () => {
  test('output as printed', () => {
    const [X, W_Q, W_K, W_V] = ['X', 'W_Q', 'W_K', 'W_V'].map((name) => seedPrint('004', name).values);
    const trace = engine.run({ X, W_Q, W_K, W_V });
    assertPrinted(trace.output, seedPrint('004', 'output'), 'output');
  });
});

describe('engine helpers', () => {
  test('runAll returns one trace per problem, in order', () => {
    const traces = engine.runAll([seed000(), { ...seed000(), options: { causal: true } }]);
    assert.equal(traces.length, 2);
    assert.ok(!traces[0].steps.some((s) => s.id === 'masked'));
    assert.ok(traces[1].steps.some((s) => s.id === 'masked'));
    assert.deepEqual(engine.runAll([]), []);
  });

  test('multi-head trace: per-head steps, then concat and output with head null', () => {
    const X = [
      [1, 0, 1, 0],
      [0, 2, 0, 2],
      [1, 1, 1, 1],
    ];
    const I = [
      [1, 0, 0, 0],
      [0, 1, 0, 0],
      [0, 0, 1, 0],
      [0, 0, 0, 1],
    ];
    const trace = engine.run({ X, W_Q: I, W_K: I, W_V: I, W_O: I, options: { heads: 2 } });
    assert.deepEqual(
      trace.steps.filter((s) => s.head === 1).map((s) => s.id),
      ['Q', 'K', 'V', 'scores', 'scaled', 'weights', 'head_output'],
    );
    assert.deepEqual(
      trace.steps.slice(-2).map((s) => [s.id, s.head]),
      [
        ['concat', null],
        ['output', null],
      ],
    );
    assert.equal(trace.facts.length, 2);
    assert.equal(trace.meta.d_k, 2);
  });

  test('explain gives the worked softmax of seed 000 weights row 2, column 3', () => {
    const e = engine.explain(seed000(), { step: 'weights', row: 1, col: 2 });
    assert.equal(e.kind, 'softmax');
    assertPrinted(e.value, printedNumbers(seedPrint('000', 'weights').text)[1 * 4 + 2].text, 'weight');
    assert.equal(e.logits.length, 4);
    assert.ok(Math.abs(e.exps[2] / e.exp_sum - e.value) < 1e-15);
    const dot = engine.explain(seed000(), { step: 'scores', row: 0, col: 0 });
    assert.equal(dot.kind, 'dot');
    assert.equal(dot.products.length, 8);
    assertPrinted(dot.value, printedNumbers(seedPrint('000', 'scores').text)[0].text, 'score');
  });

  test('parseMatrix reads numpy output as printed in seed 000', () => {
    const printed = seedPrint('000', 'weights');
    assert.deepEqual(engine.parseMatrix(printed.text, 'weights'), printed.values);
    assert.deepEqual(engine.parseMatrix('[1 2; 3 4]'), [
      [1, 2],
      [3, 4],
    ]);
  });

  test('parseMatrixDetailed: the matrix and the format it was read as', () => {
    const printed = seedPrint('000', 'weights');
    assert.deepEqual(engine.parseMatrixDetailed(printed.text, 'weights'), { values: printed.values, format: 'NumPy print output' });
    assert.deepEqual(engine.parseMatrixDetailed('tensor([[ 0.5000, \u22121.2500],\n        [ 2.0000,  0.0000]], requires_grad=True)'), {
      values: [
        [0.5, -1.25],
        [2, 0],
      ],
      format: 'PyTorch tensor',
    });
    assert.deepEqual(engine.parseMatrixDetailed('\\begin{bmatrix} 1 & -2 \\\\ 3.5 & 4 \\end{bmatrix}'), {
      values: [
        [1, -2],
        [3.5, 4],
      ],
      format: 'LaTeX bmatrix',
    });
    // A row copied from the page's tables: tab-separated, with the tables' U+2212 minus.
    assert.deepEqual(engine.parseMatrixDetailed('\u22120.1383\t0.2551\t\u22121.0000'), { values: [[-0.1383, 0.2551, -1]], format: 'TSV' });
    assert.deepEqual(engine.parseMatrixDetailed('1,5;2\n3;4,25'), {
      values: [
        [1.5, 2],
        [3, 4.25],
      ],
      format: 'semicolon-separated values with decimal commas',
    });
    // A batch of one (shape 1 × 2 × 2) is its slice, the format saying so; two slices are refused.
    assert.deepEqual(engine.parseMatrixDetailed('tensor([[[1., 2.],\n         [3., 4.]]])'), {
      values: [
        [1, 2],
        [3, 4],
      ],
      format: 'PyTorch tensor with its batch axis of 1 dropped',
    });
    assert.throws(() => engine.parseMatrixDetailed('[[[1, 2]], [[3, 4]]]', 'Q'), {
      message:
        'Q: expected a matrix (2 dimensions) but found a 3-D array of shape 2 x 1 x 2: 2 slices of 1 x 2; paste one 2-D slice at a time (e.g. A[0])',
    });
    assert.deepEqual(engine.parseMatrixDetailed('1/3 -1/4').values, [[1 / 3, -0.25]]);
    assert.throws(() => engine.parseMatrixDetailed('[[1, 2], [3]]', 'pasted'), { message: 'pasted: row 2 has 1 number but row 1 has 2' });
    assert.throws(() => engine.parseMatrixDetailed(null), { message: 'parseMatrixDetailed takes text, got null' });
  });

  test('parseCell: one number as a grid cell holds it', () => {
    assert.equal(engine.parseCell('1,5'), 1.5);
    assert.equal(engine.parseCell(' \u22120.25 ', 'X', 2, 3), -0.25);
    assert.equal(engine.parseCell('-inf'), -Infinity);
    assert.equal(engine.parseCell('1/3'), 1 / 3);
    assert.throws(() => engine.parseCell('1/0', 'X', 2, 3), {
      message: "X: row 2, column 3: expected a number but found '1/0'",
      field: 'X',
      row: 2,
      column: 3,
    });
    assert.throws(() => engine.parseCell('1 2', 'X', 2, 3), { message: "X: row 2, column 3: a cell holds one number but found '1 2'" });
    assert.throws(() => engine.parseCell('1,234', 'W_Q'), {
      message:
        "W_Q: row 1, column 1: '1,234' is ambiguous: 1.234 with a decimal comma, or 1234 with a thousands separator; use a dot for the decimal point",
    });
    assert.throws(() => engine.parseCell('', 'X', 1, 2), { message: 'X: row 1, column 2 is empty: type a number' });
    assert.throws(() => engine.parseCell(1.5), { message: 'parseCell takes text, got number 1.5' });
    assert.throws(() => engine.parseCell('1', 'X', 0, 1), { message: 'parseCell: row must be a whole number from 1, got number 0' });
  });

  test('random: one stream seeded once, every kind', () => {
    const [a, b] = engine.random(0, [
      { kind: 'normal', shape: [1, 2] },
      { kind: 'normal', shape: [1, 2] },
    ]);
    // np.random.seed(0); np.random.normal(size=4) = 1.76405235 0.40015721 0.97873798 2.2408932
    assertPrinted([a, b], '1.76405235 0.40015721 0.97873798 2.2408932', 'normal');
    const [r] = engine.random(0, [{ kind: 'rand', shape: [1, 2] }]);
    assertPrinted(r, '0.5488135 0.71518937', 'rand');
    const [n] = engine.random(0, [{ kind: 'normal', shape: [1, 1], loc: 10, scale: 2 }]);
    assertPrinted(n, '13.5281047', 'normal(10, 2)');
    const [i] = engine.random(42, [{ kind: 'randint', shape: [2, 3], low: 0, high: 3 }]);
    assert.ok(i.flat().every((v) => Number.isInteger(v) && v >= 0 && v < 3));
  });

  test('results are plain copies: arrays, numbers, no views into wasm memory', () => {
    const trace = engine.run(seed000());
    for (const s of trace.steps) {
      assert.ok(Array.isArray(s.data) && s.data.every(Array.isArray));
      assert.ok(s.data.flat().every((v) => typeof v === 'number'));
    }
    const before = JSON.stringify(trace);
    engine.run({
      X: Array.from({ length: 512 }, (_, i) => [i % 7, 1]),
      W_Q: [
        [1, 0],
        [0, 1],
      ],
      W_K: [
        [1, 0],
        [0, 1],
      ],
      W_V: [
        [1, 0],
        [0, 1],
      ],
    });
    assert.equal(JSON.stringify(trace), before); // memory growth left the earlier trace intact
  });

  test('toJSON and stringify write non-finite numbers as "inf", "-inf", "nan"', () => {
    const trace = engine.run({ ...seed000(), options: { causal: true } });
    const json = pkg.toJSON(trace);
    assert.equal(json.steps.find((s) => s.id === 'masked').data[0][1], '-inf');
    assert.deepEqual(pkg.toJSON([Infinity, -Infinity, NaN, 1]), ['inf', '-inf', 'nan', 1]);
    const text = pkg.stringify({ a: [[1, Infinity]] });
    assert.equal(text, '{\n  "a": [\n    [1, "inf"]\n  ]\n}');
    // The strings go back in as numbers.
    const mask = [
      [0, -Infinity, -Infinity, -Infinity],
      [0, 0, -Infinity, -Infinity],
      [0, 0, 0, -Infinity],
      [0, 0, 0, 0],
    ];
    const again = engine.run(JSON.parse(pkg.stringify({ ...seed000(), options: { mask } })));
    assert.equal(step(again, 'masked').data[0][1], -Infinity);
    assert.deepEqual(again.output, trace.output);
  });

  test('a fully masked row gives zeros and a warning, never NaN', () => {
    const trace = engine.run({
      ...seed000(),
      options: {
        mask: [
          [false, false, false, false],
          [true, true, true, true],
          [true, true, true, true],
          [true, true, true, true],
        ],
      },
    });
    assert.deepEqual(step(trace, 'weights').data[0], [0, 0, 0, 0]);
    assert.ok(
      trace.output[0].every((v) => v === 0),
      `output row 1 is ${trace.output[0]}`,
    );
    assert.equal(trace.warnings.length, 1);
    assert.match(trace.warnings[0], /row 1/);
    assert.deepEqual(trace.facts[0].fully_masked, [0]);
  });

  test('presets hold the matrices the seed documents write', () => {
    const inputs = (id) => pkg.findPreset(id).inputs;
    assert.deepEqual(inputs('001').X, seedPrint('001', 'X').values);
    for (const name of ['X', 'W_Q', 'W_K', 'W_V']) {
      assert.deepEqual(inputs('003')[name], seedPrint('003', name).values, `preset 003 ${name}`);
      assert.deepEqual(inputs('004')[name], seedPrint('004', name).values, `preset 004 ${name}`);
    }
  });

  test('each seed preset computes what its document prints', () => {
    const run = (id) => engine.run(pkg.presetProblem(pkg.findPreset(id), engine).problem);
    const columns = (m) => m[0].map((_, c) => m.map((row) => row[c]));
    const t000 = run('000');
    assertPrinted(step(t000, 'weights').data, seedPrint('000', 'weights'), 'preset 000 weights');
    assertPrinted(t000.output, seedPrint('000', 'output'), 'preset 000 output');
    assertPrinted(run('000-causal').output, seedPrint('000', 'causal_output'), 'preset 000-causal output');
    assertPrinted(columns(run('002').output), seedPrint('002', 'output_T'), 'preset 002 output');
    assertPrinted(columns(run('002-scaled').output), seedPrint('002', 'scaled_output_T'), 'preset 002-scaled output');
    const t003 = run('003');
    assertPrinted(step(t003, 'weights').data, seedPrint('003', 'weights'), 'preset 003 weights', 4 * 5.96e-8);
    assertPrinted(t003.output, seedPrint('003', 'output'), 'preset 003 output', 4 * 5.96e-8);
    assertPrinted(run('004').output, seedPrint('004', 'output'), 'preset 004 output');
  });
});
