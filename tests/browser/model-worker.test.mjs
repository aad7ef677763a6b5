// The model that trains, in a real browser's Worker: a page starts attention-explorer/model-worker
// (resolved through an import map made from package.json's exports, as a bundler would resolve
// it) in a module Worker and talks to it through connectModelWorker. It trains the `previous`
// preset in chunks while the main thread keeps running, reaches the preset's accuracy, gives the
// losses engine.model gives in Node, and hands an error back as a rejected Error.
//   node --test --test-concurrency=1 tests/browser/run.mjs tests/browser/model-worker.test.mjs
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { browserSuite } from './server.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const { loadAttention } = await import(join(root, 'dist', 'node.js'));
const engine = await loadAttention();

const test = browserSuite('model-worker', { contextPerTest: true, httpErrors: true, timeout: 60000, screenshots: 'model-worker-' });

/** The package's exports that the page uses, as an import map into the site's lib/ (dist/ built). */
function importMap() {
  const { exports } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const target = (entry) => (typeof entry === 'string' ? entry : entry.default);
  const imports = {};
  for (const [subpath, name] of [
    ['.', 'attention-explorer'],
    ['./model-worker', 'attention-explorer/model-worker'],
  ]) {
    const file = target(exports[subpath]);
    assert.match(file, /^\.\/dist\//, `package.json's export ${subpath} is not in dist/`);
    imports[name] = file.replace(/^\.\/dist\//, './lib/');
  }
  return { imports };
}

const CHUNK = 25;
const CHUNKS = 4;

test("the previous preset trains in a module Worker: the page stays responsive, the numbers are Node's, errors reject", async ({
  page,
  base,
  siteDir,
}) => {
  writeFileSync(
    join(siteDir, 'model-worker-test.html'),
    `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>model worker</title>
<script type="importmap">${JSON.stringify(importMap())}</script>
<script type="module">
import { connectModelWorker } from 'attention-explorer';
const worker = new Worker(import.meta.resolve('attention-explorer/model-worker'), { type: 'module' });
window.model = connectModelWorker(worker);
window.ready = true;
</script></head><body><p>Main-thread turns while the Worker trains: <output id="turns">0</output></p></body></html>`,
  );
  await page.goto(`${base}model-worker-test.html`);
  await page.waitForFunction(() => window.ready === true);

  const got = await page.evaluate(
    async ([chunk, chunks]) => {
      const { model } = window;
      const config = (await model.catalogue()).presets.find((p) => p.name === 'previous').config;
      const made = await model.create(config);
      const losses = [];
      const turns = [];
      for (let i = 0; i < chunks; i++) {
        // The main thread's tasks (a timer loop that writes to the page) while one chunk trains.
        let count = 0;
        let training = true;
        const turn = () => {
          if (!training) return;
          count += 1;
          document.getElementById('turns').textContent = String(count);
          setTimeout(turn, 0);
        };
        setTimeout(turn, 0);
        losses.push(...(await model.train(chunk)));
        training = false;
        turns.push(count);
      }
      const first = await model.evaluate();
      const rest = await model.train(config.steps - chunk * chunks);
      const evaluation = await model.evaluate();
      const step = await model.step();
      let error = null;
      try {
        await model.create({ model: { vocab: 8, context: 8, d_model: 10, heads: 4 } });
      } catch (e) {
        error = { isError: e instanceof Error, message: e.message };
      }
      return { config, made, losses, turns, first, rest, evaluation, step, error, shown: document.getElementById('turns').textContent };
    },
    [CHUNK, CHUNKS],
  );

  // The preset, as the Worker's module describes it, is Node's.
  const { config } = got;
  const preset = engine.modelCatalogue().presets.find((p) => p.name === 'previous');
  assert.deepEqual(config, preset.config);
  assert.equal(config.task, 'previous');
  assert.equal(config.steps, 400);
  assert.equal(got.made.step, 0);
  assert.deepEqual(got.made.config, config);

  // The page ran while every chunk trained (training on the main thread would leave 0 turns).
  assert.equal(got.turns.length, CHUNKS);
  for (const [i, n] of got.turns.entries())
    assert.ok(n >= 1, `chunk ${i + 1}: the main thread ran ${n} timer tasks while the Worker trained`);
  assert.equal(got.shown, String(got.turns.at(-1)));

  // The loss falls: from ln 16 ≈ 2.77 (a uniform guess over 16 tokens) to a fraction of it.
  assert.equal(got.losses.length, CHUNK * CHUNKS);
  assert.ok(got.losses.every(Number.isFinite));
  const mean = (xs) => xs.reduce((s, x) => s + x, 0) / xs.length;
  const start = mean(got.losses.slice(0, 10));
  const end = mean(got.losses.slice(-10));
  assert.ok(Math.abs(got.losses[0] - Math.log(16)) < 0.3, `the first loss ${got.losses[0]} is not near ln 16`);
  assert.ok(end < start / 2, `the loss did not fall: ${start} over the first 10 steps, ${end} over the last 10`);

  // After the preset's 400 steps it predicts the previous token (accuracy 1 on the probe here).
  assert.equal(got.rest.length, 400 - CHUNK * CHUNKS);
  assert.equal(got.step, 400);
  assert.equal(got.evaluation.step, 400);
  assert.ok(got.evaluation.accuracy > 0.9, `accuracy after 400 steps: ${got.evaluation.accuracy}`);
  assert.ok(got.evaluation.loss < got.first.loss, `the probe loss did not fall: ${got.first.loss} -> ${got.evaluation.loss}`);

  // The same wasm on V8 in Node: the same seed gives the same numbers, bit for bit (wasm's float
  // arithmetic is deterministic, the module compiles its own libm and no relaxed SIMD).
  const node = engine.model(config);
  try {
    const nodeLosses = [];
    for (let i = 0; i < CHUNKS; i++) nodeLosses.push(...node.train(CHUNK));
    assert.deepEqual(got.losses, nodeLosses);
    assert.deepEqual(got.first, node.evaluate());
    assert.deepEqual(got.rest, node.train(400 - CHUNK * CHUNKS));
    assert.deepEqual(got.evaluation, node.evaluate());
  } finally {
    node.dispose();
  }

  // A bad configuration comes back as a rejected Error with the core's message.
  assert.ok(got.error, 'create with 4 heads over d_model 10 did not reject');
  assert.ok(got.error.isError, 'the rejection is not an Error');
  assert.match(got.error.message, /^model\.heads: 4 heads do not divide d_model = 10\b/);
});
