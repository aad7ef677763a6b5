// The seeds' numbers through the JS API (dist/node.js), plus the helpers the page uses.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';

import { assertInSeed, assertPrinted, dist, step } from './helpers.mjs';

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
  test('Q as printed', () => {
    const printed = ` [[ 0.49671415 -0.1382643   0.64768854  1.52302986 -0.23415337 -0.23413696
   1.57921282  0.76743473]`;
    assertInSeed('000', printed);
    assertPrinted(seed000().Q[0], printed, 'Q row 1');
  });

  test('scores, variances, weights and output as printed', () => {
    const trace = engine.run(seed000());
    assert.deepEqual(trace.steps.map((s) => s.id), ['Q', 'K', 'V', 'scores', 'scaled', 'weights', 'output']);
    const scores = `array([[-2.72357421,  0.40818741,  2.39601116, -1.18323729],
       [ 5.60012069,  1.1597874 , -4.7248515 ,  2.43859568],
       [ 1.03699903, -3.70553788, -3.0399309 ,  0.04345596],
       [ 0.09460324,  2.97027193,  0.43247995, -0.80026704]])`;
    assertInSeed('000', scores);
    assertPrinted(step(trace, 'scores').data, scores, 'scores');
    assert.deepEqual(step(trace, 'scores').shape, [4, 4]);

    assertInSeed('000', 'before scaling 6.8375652409831655');
    assertInSeed('000', 'after scaling 0.8546956551228956');
    // Printed with 17 digits; numpy sums in another order, so allow a few float64 ulps.
    assertPrinted(trace.facts[0].scores_variance, '6.8375652409831655', 'variance before scaling', 4 * 2.2e-16);
    assertPrinted(trace.facts[0].scaled_variance, '0.8546956551228956', 'variance after scaling', 4 * 2.2e-16);

    const weights = `[[0.08431243 0.25513027 0.51521078 0.14534652]
 [0.64059204 0.1332861  0.01664257 0.2094793 ]
 [0.47006414 0.08789379 0.11121405 0.33082801]
 [0.17794451 0.49185018 0.20052305 0.12968226]]`;
    assertInSeed('000', weights);
    assertPrinted(step(trace, 'weights').data, weights, 'weights');

    const output = ` [[-0.1308104   0.77212573  0.10108921  0.16807328 -0.46588684 -0.43681263
   0.46851458 -0.42075407]
 [ 0.40109276  1.19080398 -0.35037302  0.94668908  0.08274232 -0.53010106
   0.17683369  0.41923385]
 [ 0.17910025  0.98456145 -0.06763014  0.80678092 -0.14453166 -0.49373081
   0.15002954  0.10067088]
 [ 0.01421368  1.14907671 -0.99239485  0.60451701 -0.14600018 -0.40496816
   0.24215067 -0.82777073]]`;
    assertInSeed('000', output);
    assertPrinted(trace.output, output, 'output');
    assert.deepEqual(step(trace, 'output').data, trace.output);
    assert.equal(trace.meta.scale, 1 / Math.sqrt(8));
    assert.deepEqual(trace.facts[0].weight_sums.map((s) => Math.round(s * 1e12) / 1e12), [1, 1, 1, 1]);
  });

  test('masked (decoder) output as printed, causal and as an additive -inf mask', () => {
    const printed = ` [[ 0.81252582  1.35624003 -0.07201012  1.0035329   0.36163603 -0.64511975
   0.36139561  1.53803657]
 [ 0.66641301  1.39213367 -0.51081002  0.97225045  0.31434319 -0.58550834
   0.31495603  0.93081668]
 [ 0.52954961  1.21756173 -0.14905901  0.7267579   0.1310981  -0.57583252
   0.41805381  0.87397953]
 [ 0.01421368  1.14907671 -0.99239485  0.60451701 -0.14600018 -0.40496816
   0.24215067 -0.82777073]]`;
    assertInSeed('000', printed);
    const causal = engine.run({ ...seed000(), options: { causal: true } });
    assertPrinted(causal.output, printed, 'causal output');
    const masked = step(causal, 'masked').data;
    assert.equal(masked[0][1], -Infinity);
    assert.equal(step(causal, 'weights').data[0][3], 0);

    const mask = [[0, '-inf', '-inf', '-inf'], [0, 0, '-inf', '-inf'], [0, 0, 0, '-inf'], [0, 0, 0, 0]];
    assertPrinted(engine.run({ ...seed000(), options: { mask } }).output, printed, 'additive mask output');
    const keep = [[true, false, false, false], [true, true, false, false], [true, true, true, false], [true, true, true, true]];
    assertPrinted(engine.run({ ...seed000(), options: { mask: keep } }).output, printed, 'keep mask output');
  });
});

describe('seed 002 (UDL 12.1: tokens as columns, Ω and β)', () => {
  const problem = (scale) => {
    const xs = engine.random(3, [1, 2, 3].map(() => ({ kind: 'normal', shape: [4, 1] })));
    const X = xs[0].map((_, r) => xs.map((x) => x[r][0]));
    const [W_Q, W_K, W_V, b_Q, b_K, b_V] = engine.random(0, [
      ...[1, 2, 3].map(() => ({ kind: 'normal', shape: [4, 4] })),
      ...[1, 2, 3].map(() => ({ kind: 'normal', shape: [4, 1] })),
    ]);
    return { X, W_Q, W_K, W_V, b_Q: b_Q.flat(), b_K: b_K.flat(), b_V: b_V.flat(), options: { layout: 'columns', scale } };
  };

  test('unscaled: attention matrix and outputs as printed', () => {
    const trace = engine.run(problem('none'));
    const attention = `[[1.24326146e-13 2.79525306e-12 5.05707907e-03]
 [9.98281489e-01 5.85506360e-03 6.54776072e-03]
 [1.71851130e-03 9.94144936e-01 9.88395160e-01]]`;
    assertInSeed('002', attention);
    assertPrinted(step(trace, 'weights').data, attention, 'attention');
    const outputT = `[[ 0.94744244 -0.24348429 -0.91310441 -0.44522983]
 [ 1.64201168 -0.08470004  4.02764044  2.18690791]
 [ 1.61949281 -0.06641533  3.96863308  2.15858316]]`;
    assertInSeed('002', outputT);
    assert.deepEqual(trace.output.length, 4); // D x N: tokens are columns
    const transposed = trace.output[0].map((_, c) => trace.output.map((row) => row[c]));
    assertPrinted(transposed, outputT, 'X_prime.T');
  });

  test('scaled by 1/sqrt(d_k): outputs as printed', () => {
    const trace = engine.run(problem('sqrt_dk'));
    const outputT = `[[ 0.97411966 -0.23738409 -0.72333202 -0.34413007]
 [ 1.59622051 -0.09516106  3.70194096  2.01339538]
 [ 1.32638014  0.13062402  3.02371664  1.6902419 ]]`;
    assertInSeed('002', outputT);
    const transposed = trace.output[0].map((_, c) => trace.output.map((row) => row[c]));
    assertPrinted(transposed, outputT, 'scaled X_prime.T');
    assert.equal(trace.meta.layout, 'columns');
  });
});

describe('seed 003 (float32, divided by sqrt(3) from the token count)', () => {
  const problem = {
    X: '[[1. 0. 1. 0.]\n [0. 2. 0. 2.]\n [1. 1. 1. 1.]]',
    W_K: [[0, 0, 1], [1, 1, 0], [0, 1, 0], [1, 1, 0]],
    W_Q: [[1, 0, 1], [1, 0, 0], [0, 0, 1], [0, 1, 1]],
    W_V: [[0, 2, 0], [0, 3, 0], [1, 0, 3], [1, 1, 0]],
    options: { precision: 'float32', scale: '1/sqrt(3)' },
  };

  // A float32's 8th printed digit lies below its resolution (2^-24): allow 4 float32 ulps.
  const float32Ulps = 4 * 5.96e-8;

  test('projections, weights and output as printed', () => {
    const trace = engine.run(problem);
    assert.equal(trace.meta.precision, 'float32');
    assertPrinted(step(trace, 'Q').data, '[[1. 0. 2.]\n [2. 2. 2.]\n [2. 1. 3.]]', 'Q');
    assertPrinted(step(trace, 'K').data, '[[0. 1. 1.]\n [4. 4. 0.]\n [2. 3. 1.]]', 'K');
    assertPrinted(step(trace, 'V').data, '[[1. 2. 3.]\n [2. 8. 0.]\n [2. 6. 3.]]', 'V');
    const weights = `[[1.3612579e-01 4.3193707e-01 4.3193707e-01]
 [8.9044782e-04 9.0884298e-01 9.0266980e-02]
 [7.4448888e-03 7.5470752e-01 2.3784746e-01]]`;
    assertInSeed('003', weights);
    assertPrinted(step(trace, 'weights').data, weights, 'weights', float32Ulps);
    const output = `[[1.8638741 , 6.3193707 , 1.7041886 ]
 [1.9991105 , 7.8141265 , 0.27347228]
 [1.9925548 , 7.479635  , 0.73587704]]`;
    assertInSeed('003', output);
    assertPrinted(trace.output, output, 'output', float32Ulps);
    // Computed in float32 indeed: in float64 the same entry is further from the print.
    const trace64 = engine.run({ ...problem, options: { scale: '1/sqrt(3)' } });
    assert.ok(Math.abs(trace64.output[1][1] - 7.8141265) > float32Ulps * 7.8141265);
  });
});

describe('seed 004 (two tokens, identity W_Q, W_K)', () => {
  test('output as printed', () => {
    const trace = engine.run({
      X: [[1, 0], [0, 1]], W_Q: [[1, 0], [0, 1]], W_K: [[1, 0], [0, 1]], W_V: [[1, 2], [3, 4]],
    });
    const printed = '[[1.6604769 2.6604769]\n [2.3395231 3.3395231]]';
    assertInSeed('004', printed);
    assertPrinted(trace.output, printed, 'output');
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
    const X = [[1, 0, 1, 0], [0, 2, 0, 2], [1, 1, 1, 1]];
    const I = [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]];
    const trace = engine.run({ X, W_Q: I, W_K: I, W_V: I, W_O: I, options: { heads: 2 } });
    assert.deepEqual(trace.steps.filter((s) => s.head === 1).map((s) => s.id),
      ['Q', 'K', 'V', 'scores', 'scaled', 'weights', 'head_output']);
    assert.deepEqual(trace.steps.slice(-2).map((s) => [s.id, s.head]), [['concat', null], ['output', null]]);
    assert.equal(trace.facts.length, 2);
    assert.equal(trace.meta.d_k, 2);
  });

  test('explain gives the worked softmax of seed 000 weights row 2, column 3', () => {
    const e = engine.explain(seed000(), { step: 'weights', row: 1, col: 2 });
    assert.equal(e.kind, 'softmax');
    assertPrinted(e.value, '0.01664257', 'weight');
    assert.equal(e.logits.length, 4);
    assert.ok(Math.abs(e.exps[2] / e.exp_sum - e.value) < 1e-15);
    const dot = engine.explain(seed000(), { step: 'scores', row: 0, col: 0 });
    assert.equal(dot.kind, 'dot');
    assert.equal(dot.products.length, 8);
    assertPrinted(dot.value, '-2.72357421', 'score');
  });

  test('parseMatrix reads numpy output as printed in seed 000', () => {
    const m = engine.parseMatrix(`[[0.08431243 0.25513027 0.51521078 0.14534652]
 [0.64059204 0.1332861  0.01664257 0.2094793 ]]`, 'weights');
    assert.deepEqual(m, [[0.08431243, 0.25513027, 0.51521078, 0.14534652], [0.64059204, 0.1332861, 0.01664257, 0.2094793]]);
    assert.deepEqual(engine.parseMatrix('[1 2; 3 4]'), [[1, 2], [3, 4]]);
  });

  test('random: one stream seeded once, every kind', () => {
    const [a, b] = engine.random(0, [{ kind: 'normal', shape: [1, 2] }, { kind: 'normal', shape: [1, 2] }]);
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
    engine.run({ X: Array.from({ length: 512 }, (_, i) => [i % 7, 1]), W_Q: [[1, 0], [0, 1]], W_K: [[1, 0], [0, 1]], W_V: [[1, 0], [0, 1]] });
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
    const mask = [[0, -Infinity, -Infinity, -Infinity], [0, 0, -Infinity, -Infinity], [0, 0, 0, -Infinity], [0, 0, 0, 0]];
    const again = engine.run(JSON.parse(pkg.stringify({ ...seed000(), options: { mask } })));
    assert.equal(step(again, 'masked').data[0][1], -Infinity);
    assert.deepEqual(again.output, trace.output);
  });

  test('a fully masked row gives zeros and a warning, never NaN', () => {
    const trace = engine.run({ ...seed000(), options: { mask: [[false, false, false, false], [true, true, true, true], [true, true, true, true], [true, true, true, true]] } });
    assert.deepEqual(step(trace, 'weights').data[0], [0, 0, 0, 0]);
    assert.ok(trace.output[0].every((v) => v === 0), `output row 1 is ${trace.output[0]}`);
    assert.equal(trace.warnings.length, 1);
    assert.match(trace.warnings[0], /row 1/);
    assert.deepEqual(trace.facts[0].fully_masked, [0]);
  });

  test('presets build the seed problems', () => {
    const { problem } = pkg.presetProblem(pkg.findPreset('000'), engine);
    assertPrinted(step(engine.run(problem), 'weights').data[0], '0.08431243 0.25513027 0.51521078 0.14534652', 'preset weights');
  });
});
