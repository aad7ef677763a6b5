// The model that trains, through the built package: the API and its errors, PyTorch's numbers
// (tests/fixtures/model/torch_models.json, from make_model_fixtures.py), the bridge to engine.run,
// weights that round-trip, and the CLI's train and model commands.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';

import { dist, repo } from './helpers.mjs';

const { loadAttention } = await import(`${dist}node.js`);
const fixtures = JSON.parse(readFileSync(join(repo, 'tests/fixtures/model/torch_models.json'), 'utf8'));
const cli = (args, input) => spawnSync('node', [`${dist}cli.js`, ...args], { input, encoding: 'utf8' });

/** The largest difference between two nested arrays or weight objects, matched by key. */
function gap(a, b, where = '') {
  if (typeof b === 'number') return Math.abs(a - b);
  assert.equal(typeof a, typeof b, where);
  const keys = Object.keys(b);
  assert.deepEqual(Object.keys(a).sort(), keys.slice().sort(), `${where}: keys`);
  return Math.max(0, ...keys.map((k) => gap(a[k], b[k], `${where}.${k}`)));
}

const SMALL = { model: { vocab: 8, context: 8, d_model: 8, layers: 2, heads: 2 }, task: 'previous', optimizer: { lr: 0.01 }, seed: 4 };

describe('engine.model', () => {
  let engine;
  before(async () => {
    engine = await loadAttention();
  });

  test("loss, logits and gradients equal PyTorch's for every fixture model", () => {
    assert.ok(fixtures.cases.length >= 5);
    for (const c of fixtures.cases) {
      const model = engine.model({ model: c.model }, { weights: c.weights });
      const out = model.gradients(c.tokens, c.targets);
      assert.ok(Math.abs(out.loss - c.loss) < 1e-12, `${c.name}: loss ${out.loss}, PyTorch ${c.loss}`);
      assert.ok(gap(out.logits, c.logits) < 1e-12, `${c.name}: logits`);
      assert.ok(gap(out.gradients, c.gradients) < 1e-11, `${c.name}: gradients`);
      model.dispose();
    }
  });

  test('train returns one loss per step; the same seed trains to the same numbers, bit for bit', () => {
    const a = engine.model(SMALL);
    const b = engine.model(SMALL);
    const losses = a.train(30);
    assert.equal(losses.length, 30);
    assert.equal(a.step, 30);
    assert.deepEqual(b.train(10).concat(b.train(20)), losses);
    assert.ok(losses[29] < losses[0], `the loss falls: ${losses[0]} -> ${losses[29]}`);
    assert.deepEqual(a.weights(), b.weights());
    const other = engine.model({ ...SMALL, seed: 5 });
    assert.notDeepEqual(other.train(30), losses);
  });

  test('the configuration comes back with every default written out', () => {
    const { config, example } = engine.model(SMALL);
    assert.deepEqual(config.model, {
      vocab: 8,
      context: 8,
      d_model: 8,
      layers: 2,
      heads: 2,
      d_head: 4,
      kv_heads: 2,
      positions: 'learned',
      mlp: 0,
      activation: 'gelu',
      norm: 'none',
      bias: false,
      tied: false,
      precision: 'float32',
    });
    assert.deepEqual(Object.keys(config), ['model', 'task', 'optimizer', 'steps', 'batch', 'seed', 'eval_every']);
    assert.equal(config.optimizer.clip, 1);
    assert.equal(example.name, 'previous');
    assert.equal(example.tokens.length, 8);
    assert.deepEqual(example.targets.slice(1), example.tokens.slice(0, 7));
  });

  test("headProblem runs in the explorer and gives the model's own attention weights", () => {
    const model = engine.model({
      ...SMALL,
      model: { ...SMALL.model, positions: 'rope', norm: 'rmsnorm', bias: true, precision: 'float64' },
    });
    model.train(20);
    const tokens = [1, 5, 2, 7, 3];
    const { attention, predictions } = model.predict(tokens);
    assert.equal(predictions.length, 5);
    for (const layer of [1, 2]) {
      for (const head of [1, 2]) {
        const trace = engine.run(model.headProblem(layer, head, tokens));
        const weights = trace.steps.find((s) => s.id === 'weights').data;
        assert.ok(gap(weights, attention[layer - 1][head - 1]) < 1e-12, `layer ${layer} head ${head}`);
        assert.ok(
          trace.steps.some((s) => s.id === 'Q_rot'),
          'RoPE reaches the explorer',
        );
        const cell = engine.explain(model.headProblem(layer, head, tokens), { step: 'weights', row: 4, col: 1 });
        assert.ok(Math.abs(cell.value - attention[layer - 1][head - 1][4][1]) < 1e-12);
      }
    }
  });

  test('saved weights make the same model', () => {
    const model = engine.model(SMALL);
    model.train(15);
    const copy = engine.model(SMALL, { weights: JSON.stringify(model.weights()) });
    assert.deepEqual(copy.predict([1, 2, 3]), model.predict([1, 2, 3]));
  });

  test('evaluate, headScores and ablation', () => {
    const model = engine.model(SMALL);
    model.train(40);
    const e = model.evaluate();
    assert.equal(e.step, 40);
    assert.ok(e.accuracy >= 0 && e.accuracy <= 1);
    assert.equal(e.predictions, 32 * 7); // 32 probe sequences, 7 positions with a previous token
    const scores = model.headScores();
    assert.deepEqual(
      scores.map((s) => [s.layer, s.head]),
      [
        [1, 1],
        [1, 2],
        [2, 1],
        [2, 2],
      ],
    );
    for (const s of scores) {
      for (const k of ['previous_token', 'induction', 'duplicate_token', 'first_token']) assert.ok(s[k] >= 0 && s[k] <= 1, k);
      assert.ok(Number.isFinite(s.ablated_loss));
    }
    const plain = model.predict([1, 2, 3, 4]);
    const ablated = model.predict([1, 2, 3, 4], {
      ablate: [
        [1, 1],
        [1, 2],
        [2, 1],
        [2, 2],
      ],
    });
    assert.notDeepEqual(ablated.logits, plain.logits);
    const off = model.evaluate({ ablate: [[1, 2]] });
    assert.equal(off.loss, scores[1].ablated_loss, "evaluate with a head off is that head's ablated_loss");
    // With every head off the logits depend on each token and position alone: E[t] + P[p] then U.
    assert.throws(
      () => model.predict([1], { ablate: [[3, 1]] }),
      /ablate: \[3,1\] is not \[layer, head\] of this model \(layers 1 to 2, heads 1 to 2\)/,
    );
  });

  test('bad input throws an Error naming the key', () => {
    const cases = [
      [{ model: { vocab: 8, context: 8, d_model: 10, heads: 4 } }, /model\.heads: 4 heads do not divide d_model = 10/],
      [
        { model: { vocab: 8, context: 8, d_model: 8 }, task: 'copy' },
        /task: unknown task "copy" \(the tasks are previous, reverse, sort, recall, induction, text, custom\)/,
      ],
      [
        { model: { vocab: 8, context: 8, d_model: 8 }, task: 'previous', optimizer: { lr: -1 } },
        /optimizer\.lr: expected a learning rate above 0, got -1/,
      ],
      [{ model: { context: 8, d_model: 8 }, task: { name: 'text', text: 'zzzz' } }, /task\.text: the text has 1 distinct character/],
      [
        { model: { vocab: 8, context: 8, d_model: 8 }, task: 'previous', steps: -3 },
        /configuration\.steps: expected a whole number from 0/,
      ],
      [{ model: { vocab: 8, context: 8 } }, /model\.d_model is missing/],
      [
        { model: { vocab: 8, context: 8, d_model: 8, mlp: 4 }, optimizer: { lr: 1 }, task: 'induction' },
        /model\.context: the task induction needs a context of at least 9/,
      ],
    ];
    for (const [config, message] of cases) assert.throws(() => engine.model(config), message);
    const model = engine.model(SMALL);
    assert.throws(() => model.predict([1, 9]), /tokens\[1\]: expected a token from 0 to 7 \(model\.vocab = 8\), got 9/);
    assert.throws(() => model.predict([1, 2, 3, 4, 5, 6, 7, 0, 1]), /tokens: 9 tokens, longer than the context \(model\.context = 8\)/);
    assert.throws(() => model.headProblem(3, 1, [1]), /layer: 3 is not a layer of this model \(1 to 2\)/);
    const weights = model.weights();
    weights.layers[1].W_O = [[1]];
    assert.throws(() => engine.model(SMALL, { weights }), /weights\.layers\[1\]\.W_O: expected 8×8 \(heads·d_head×d_model\), got 1 rows/);
    assert.throws(() => engine.model({ model: SMALL.model }).train(1), /task is missing/);
    model.dispose();
    assert.throws(() => model.evaluate(), /this model was disposed of/);
  });
});

describe('attention-explorer train and model', () => {
  const dir = mkdtempSync(join(tmpdir(), 'attention-train-'));

  test('train --preset NAME --print-config prints a configuration that train accepts', () => {
    const r = cli(['train', '--preset', 'induction', '--print-config']);
    assert.equal(r.status, 0, r.stderr);
    const config = JSON.parse(r.stdout);
    assert.equal(config.model.layers, 2);
    assert.equal(config.batch, 16);
    assert.equal(config.model.context, 32);
    const again = cli(['train', '--print-config', '-'], r.stdout);
    assert.equal(again.status, 0, again.stderr);
    assert.deepEqual(JSON.parse(again.stdout), config);
  });

  test('train prints the config, then progress lines, and writes the weights', () => {
    const file = join(dir, 'config.json');
    writeFileSync(file, JSON.stringify({ ...SMALL, steps: 20, eval_every: 10 }));
    const out = join(dir, 'weights.json');
    const r = cli(['train', file, '--weights', out]);
    assert.equal(r.status, 0, r.stderr);
    const lines = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.deepEqual(
      lines.map((l) => l.step),
      [undefined, 0, 10, 20],
    );
    assert.equal(lines[0].config.steps, 20);
    assert.equal(lines[1].loss, null);
    assert.equal(lines[3].heads.length, 4);
    // The same losses as the API's, bit for bit.
    return loadAttention().then((engine) => {
      const model = engine.model({ ...SMALL, steps: 20, eval_every: 10 });
      const losses = model.train(20);
      assert.equal(lines[3].loss, losses.slice(10).reduce((a, b) => a + b, 0) / 10);
      assert.equal(lines[3].eval_loss, model.evaluate().loss);
      const saved = JSON.parse(readFileSync(out, 'utf8'));
      assert.deepEqual(saved.weights, model.weights());
      // The model command on those weights.
      const m = cli(
        ['model', '-'],
        JSON.stringify({
          model: saved.model,
          weights: saved.weights,
          tokens: [
            [1, 2, 3],
            [4, 5, 6],
          ],
          targets: [
            [2, 3, -1],
            [5, 6, 7],
          ],
        }),
      );
      assert.equal(m.status, 0, m.stderr);
      const result = JSON.parse(m.stdout);
      assert.deepEqual(Object.keys(result), ['loss', 'logits', 'gradients']);
      assert.equal(result.logits.length, 2);
      assert.deepEqual(
        result,
        model.gradients(
          [
            [1, 2, 3],
            [4, 5, 6],
          ],
          [
            [2, 3, -1],
            [5, 6, 7],
          ],
        ),
      );
    });
  });

  test('bad input exits 1 with the key on stderr; bad usage exits 2', () => {
    const bad = cli(
      ['train', '-'],
      JSON.stringify({ model: { vocab: 8, context: 8, d_model: 8 }, task: 'previous', optimizer: { lr: 0 } }),
    );
    assert.equal(bad.status, 1);
    assert.equal(bad.stderr, 'attention-explorer: standard input: optimizer.lr: expected a learning rate above 0, got 0\n');
    assert.equal(bad.stdout, '');
    const preset = cli(['train', '--preset', 'nope']);
    assert.equal(preset.status, 1);
    assert.match(
      preset.stderr,
      /unknown preset 'nope' \(the presets are induction, induction-1-layer, previous, reverse, sort, recall, text\)/,
    );
    const model = cli(['model', '-'], JSON.stringify({ model: { vocab: 4, context: 4, d_model: 2 }, weights: {}, tokens: [1] }));
    assert.equal(model.status, 1);
    assert.match(model.stderr, /standard input: weights\.E is missing: expected 4×2 \(vocab×d_model\)/);
    assert.equal(cli(['run', '--preset', 'induction']).status, 2);
    assert.equal(cli(['train', 'a.json', '--preset', 'induction']).status, 2);
  });

  test('--help lists the tasks and the presets', () => {
    const r = cli(['--help']);
    assert.equal(r.status, 0);
    assert.match(r.stdout, /\n {2}induction {10}random tokens repeated once/);
    assert.match(r.stdout, /Presets \(attention-explorer train --preset NAME\):\n {2}induction /);
  });
});
