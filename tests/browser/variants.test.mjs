// Issue 31 on the explorer page, in Chromium via playwright-core, on node:test:
//   node --test --test-concurrency=1 tests/browser/variants.test.mjs [--lib DIR]
// The "Attention variants" controls (linear attention: the switch, the feature map, normalize, the
// decay): set on the page, the steps appear with the numbers engine.run gives in Node for the
// problem the page's link holds; a bad decay shows its error under the options. The linear
// preset draws; ?walk=recurrent steps through its state token by token and chunk by chunk, the
// numbers checked against engine.recurrent. The tests run in order on one page.
import strict from 'node:assert/strict';
import { join, resolve } from 'node:path';

import { assert, browserSuite } from './server.mjs';

const root = resolve(import.meta.dirname, '..', '..');
const libArg = process.argv.indexOf('--lib');
const lib = resolve(libArg > 0 ? process.argv[libArg + 1] : join(root, 'dist'));
const pkg = await import(join(lib, 'node.js'));
const { decodeStateString, stateToProblem } = await import(join(lib, 'share.js'));
const engine = await pkg.loadAttention();

const parseShown = (text) => Number(text.trim().replace(/\u2212/g, '-'));

async function settleHash(page) {
  let last = null;
  for (let i = 0; i < 30; i++) {
    await page.waitForTimeout(250);
    const h = await page.evaluate(() => location.hash);
    if (h && h === last) return h;
    last = h;
  }
  throw new Error('the URL hash never settled');
}

async function nodeTrace(page) {
  const { state, error } = await decodeStateString(await settleHash(page));
  assert(state, `the page's link does not decode: ${error}`);
  const problem = stateToProblem(state, engine);
  return { problem, trace: engine.run(problem) };
}

async function assertStep(page, trace, id, head = 0) {
  const step = trace.steps.find((s) => s.id === id && s.head === head);
  assert(step, `engine.run has no step ${id} for head ${head}`);
  const key = `${id}:${head ?? -1}`;
  await page.waitForSelector(`#step-list article[data-key="${key}"] table.matrix`);
  const shown = (await page.$$eval(`#step-list article[data-key="${key}"] table.matrix tbody tr`,
    (rows) => rows.map((r) => [...r.querySelectorAll('td')].map((td) => td.textContent)))).map((r) => r.map(parseShown));
  assert(shown.length === step.data.length, `${id}: ${shown.length} rows on the page, engine.run has ${step.data.length}`);
  step.data.forEach((row, i) => row.forEach((e, j) => {
    assert(Math.abs(shown[i][j] - e) <= 0.51e-8 + 1e-7 * Math.abs(e), `${id}[${i + 1}, ${j + 1}]: the page shows ${shown[i][j]}, engine.run gives ${e}`);
  }));
}

const stepIds = (page) => page.$$eval('#step-list article.step', (as) => [...new Set(as.map((a) => a.dataset.step))]);
const optionsError = (page) => page.$eval('#options-error', (e) => (e.hidden ? '' : e.textContent));

const test = browserSuite('variants', { lib, contextOptions: { viewport: { width: 1440, height: 900 } }, screenshots: 'variants-' });

test('linear attention: the switch, feature map, normalize and decay reach the core', async ({ page, base }) => {
  await page.goto(base);
  await page.waitForSelector('body[data-ready="true"]');
  await page.selectOption('#preset', '000');
  await page.fill('#opt-decimals', '8');
  await page.waitForSelector('#step-list article[data-key="weights:0"]');
  await page.evaluate(() => { document.getElementById('opt-variants').open = true; });
  assert(await page.$eval('#opt-feature-map', (e) => e.disabled), 'the feature map is enabled with softmax attention');
  await page.selectOption('#opt-attention', 'linear');
  await page.waitForSelector('#step-list article[data-key="linear_scores:0"]');
  let { trace } = await nodeTrace(page);
  const ids = await stepIds(page);
  for (const id of ['phi_Q', 'phi_K', 'linear_scores', 'normalizer']) assert(ids.includes(id), `no ${id} step: ${ids}`);
  assert(!ids.includes('weights'), 'linear attention shows softmax weights');
  for (const id of ['phi_Q', 'linear_scores', 'normalizer']) await assertStep(page, trace, id);
  await assertStep(page, trace, 'output', null);
  await page.selectOption('#opt-feature-map', 'relu');
  await page.click('#opt-normalize');
  await page.check('#opt-causal');
  await page.fill('#opt-decay', '0.5');
  await page.press('#opt-decay', 'Tab');
  await page.waitForFunction(() => !document.querySelector('#step-list article[data-key="normalizer:0"]'));
  ({ trace } = await nodeTrace(page));
  strict.equal(trace.steps.find((s) => s.id === 'linear_scores').tex.includes('\\gamma'), true);
  await assertStep(page, trace, 'phi_K');
  await assertStep(page, trace, 'linear_scores');
  await assertStep(page, trace, 'output', null);
  await page.fill('#opt-decay', '2');
  await page.press('#opt-decay', 'Tab');
  await page.waitForFunction(() => !document.getElementById('options-error').hidden);
  strict.match(await optionsError(page), /^options\.decay is 2: at most 1/);
  await page.fill('#opt-decay', '');
  await page.press('#opt-decay', 'Tab');
  await page.waitForFunction(() => document.getElementById('options-error').hidden);
  await page.selectOption('#opt-attention', 'softmax');
  await page.waitForSelector('#step-list article[data-key="weights:0"]');
  assert(await page.$eval('#opt-decay', (e) => e.disabled), 'the decay stays enabled with softmax attention');
  const { problem } = await nodeTrace(page);
  for (const key of ['attention', 'feature_map', 'normalize', 'decay']) assert(!(key in problem.options), `options.${key} left in the link`);
});

test('the linear preset draws, and ?walk=recurrent steps through its state', async ({ page, base }) => {
  await page.goto(`${base}?walk=recurrent`);
  await page.waitForSelector('body[data-ready="true"]');
  // The first example is softmax attention: the walkthrough says what it needs.
  await page.waitForFunction(() => /Not computed: recurrent needs causal linear attention/.test(document.getElementById('practice-text').textContent));
  await page.selectOption('#preset', 'linear');
  await page.waitForSelector('#step-list article[data-key="linear_scores:-1"], #step-list article[data-key="linear_scores:0"]');
  await page.waitForSelector('#pr-costs');
  const preset = pkg.findPreset('linear');
  const { problem } = pkg.presetProblem(preset, engine);
  const want = engine.recurrent(problem);
  const decimals = Number(await page.$eval('#opt-decimals', (e) => e.value));
  const cell = (x) => pkg.formatNumber(x, decimals, { fixedZero: true, tinyAsZero: true });
  for (let t = 0; t < want.steps.length; t++) {
    await page.waitForFunction((p) => document.getElementById('practice-pos').textContent.endsWith(p), `Token step ${t + 1} of ${want.steps.length}`);
    const s = want.steps[t];
    const state = await page.$$eval('#practice-body .pr-state tbody tr', (rows) => rows.map((r) => [...r.querySelectorAll('td')].map((td) => td.textContent)));
    strict.deepEqual(state, s.state.map((r) => r.map(cell)), `token ${t + 1}: S`);
    strict.match(await page.$eval('#practice-text', (e) => e.textContent), new RegExp(`^${preset.tokens[t]}: the state S`));
    await page.keyboard.press('ArrowRight');
  }
  await page.waitForFunction(() => document.getElementById('practice-pos').textContent.endsWith('Every form’s cost'));
  const costs = await page.$$eval('#pr-costs tbody tr', (rows) => rows.map((r) => [r.dataset.form, ...[...r.querySelectorAll('td')].map((td) => Number(td.textContent))]));
  strict.deepEqual(costs, want.costs.map((c) => [c.form, c.multiply_adds, c.state]));
  // Chunks of 2: the chunked form, one position per chunk.
  await page.fill('#pr-chunk', '2');
  await page.press('#pr-chunk', 'Tab');
  const chunked = engine.recurrent(problem, { chunk: 2 });
  await page.waitForFunction((p) => document.getElementById('practice-pos').textContent.endsWith(p), `Chunk step 1 of ${chunked.steps.length}`);
  const rows = await page.$$eval('#practice-body figure', (fs) => fs.map((f) => f.querySelector('figcaption').textContent));
  assert(rows.some((c) => c.startsWith('From inside the chunk')) && rows.some((c) => c.startsWith('From the state carried in')), `captions: ${rows}`);
});
