// Seed 001's print (tests/fixtures/seeds/001.json) through the JS API (dist/node.js) from the
// preset '001': its weights are one choice among those that reproduce every printed number, found
// by tests/fixtures/search_seed_001.py, since the notebook drew them from an unseeded generator.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';

import { assertPrinted, dist, printedNumbers, seedPrint, step } from './helpers.mjs';

const pkg = await import(`${dist}node.js`);
let engine;
before(async () => {
  engine = await pkg.loadAttention();
});

const preset = () => pkg.presetProblem(pkg.findPreset('001'), engine).problem;

describe('seed 001 (three 8-dim words, 8×3 weights with entries 0, 1 or 2)', () => {
  test('the preset holds the notebook’s words and 8×3 weights with entries 0, 1 or 2', () => {
    const p = preset();
    assert.deepEqual(p.X, seedPrint('001', 'X').values);
    for (const name of ['W_Q', 'W_K', 'W_V']) {
      assert.equal(p[name].length, 8, `${name} rows`);
      for (const row of p[name]) {
        assert.equal(row.length, 3, `${name} columns`);
        assert.ok(
          row.every((w) => w === 0 || w === 1 || w === 2),
          `${name} holds ${row}`,
        );
      }
    }
  });

  test('the preset reproduces every number the notebook prints, to the digits printed', () => {
    const trace = engine.run(preset());
    assert.equal(trace.meta.scale, 1 / Math.sqrt(3)); // key_1.shape[0] ** 0.5
    assertPrinted(step(trace, 'weights').data, seedPrint('001', 'weights'), 'weights_1..3');
    assertPrinted(trace.output, seedPrint('001', 'attention'), 'attention_1..3');
  });

  test('the scores are integers whose differences the print fixes: 8, 12, then 4 and 16', () => {
    const scores = step(engine.run(preset()), 'scores').data;
    assert.ok(scores.flat().every(Number.isInteger), `scores ${JSON.stringify(scores)}`);
    const [s1, s2, s3] = scores;
    assert.deepEqual([s1[0] - s1[1], s1[0] - s1[2]], [8, 0]);
    assert.deepEqual([s2[0] - s2[1], s2[0] - s2[2]], [12, 0]);
    assert.deepEqual([s3[2] - s3[0], s3[2] - s3[1]], [4, 16]);
  });

  test('float64 reproduces weights row 2 (its 8th digits are 0); float32 does not', () => {
    const row2 = seedPrint('001', 'weights').parts[1];
    assert.equal(row2, '[4.9975518e-01 4.8963998e-04 4.9975518e-01]');
    const float32 = step(engine.run({ ...preset(), options: { scale: 'sqrt_dk', precision: 'float32' } }), 'weights').data[1];
    const printed = printedNumbers(row2);
    assert.ok(Math.abs(float32[0] - printed[0].value) > printed[0].tolerance, `float32 gives ${float32[0]}, printed ${printed[0].text}`);
  });

  test('the numpy-seeded weights the preset had before do not reproduce the print', () => {
    const [W_Q, W_K, W_V] = engine.random(
      42,
      ['W_Q', 'W_K', 'W_V'].map(() => ({ kind: 'randint', low: 0, high: 3, shape: [8, 3] })),
    );
    const trace = engine.run({ ...preset(), W_Q, W_K, W_V });
    assert.throws(() => assertPrinted(trace.output, seedPrint('001', 'attention'), 'attention'), /printed/);
  });
});
