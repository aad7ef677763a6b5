// Issue 31 on the explorer page, in Chromium via playwright-core, on node:test:
//   node --test --test-concurrency=1 tests/browser/variants.test.mjs [--lib DIR]
// The "Attention variants" controls (where the weights come from: softmax, sigmoid with its bias,
// differential with λ, λ_init and its norm, linear with its feature map, normalize and decay;
// QK-norm with its type, ε and gains; the output gate, elementwise or headwise, with b_G): set on
// the page, the steps appear with the numbers engine.run gives in Node for the problem the page's
// link holds; a bad value shows the message naming its key (under the options, or at W_G) and the
// page keeps working; two variants that exclude one another, arriving by link, show the core's
// message naming both. The variants' presets load; the linear preset draws, and ?walk=recurrent
// steps through its state token by token and chunk by chunk, the numbers checked against
// engine.recurrent. The tests run in order on one page.
import strict from 'node:assert/strict';
import { join, resolve } from 'node:path';

import { assert, browserSuite } from './server.mjs';

const root = resolve(import.meta.dirname, '..', '..');
const libArg = process.argv.indexOf('--lib');
const lib = resolve(libArg > 0 ? process.argv[libArg + 1] : join(root, 'dist'));
const pkg = await import(join(lib, 'node.js'));
const { decodeStateString, encodeStateString, problemToState, stateToProblem } = await import(join(lib, 'share.js'));
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
  const shown = (
    await page.$$eval(`#step-list article[data-key="${key}"] table.matrix tbody tr`, (rows) =>
      rows.map((r) => [...r.querySelectorAll('td')].map((td) => td.textContent)),
    )
  ).map((r) => r.map(parseShown));
  assert(shown.length === step.data.length, `${id}: ${shown.length} rows on the page, engine.run has ${step.data.length}`);
  step.data.forEach((row, i) =>
    row.forEach((e, j) => {
      assert(
        Math.abs(shown[i][j] - e) <= 0.51e-8 + 1e-7 * Math.abs(e),
        `${id}[${i + 1}, ${j + 1}]: the page shows ${shown[i][j]}, engine.run gives ${e}`,
      );
    }),
  );
}

/** Runs `action` (a change of a control) and waits until the page's link changed with it. */
async function changing(page, action) {
  const before = await page.evaluate(() => location.hash);
  await action();
  await page.waitForFunction((h) => location.hash !== h, before);
}

const openVariants = (page) =>
  page.evaluate(() => {
    document.getElementById('opt-variants').open = true;
  });
const factsOf = (page, key) => page.$eval(`#step-list article[data-key="${key}"] ul.facts`, (e) => e.textContent);

const stepIds = (page) => page.$$eval('#step-list article.step', (as) => [...new Set(as.map((a) => a.dataset.step))]);
const optionsError = (page) => page.$eval('#options-error', (e) => (e.hidden ? '' : e.textContent));

const test = browserSuite('variants', { lib, contextOptions: { viewport: { width: 1440, height: 900 } }, screenshots: 'variants-' });

test('linear attention: the switch, feature map, normalize and decay reach the core', async ({ page, base }) => {
  await page.goto(base);
  await page.waitForSelector('body[data-ready="true"]');
  await page.selectOption('#preset', '000');
  await page.fill('#opt-decimals', '8');
  await page.waitForSelector('#step-list article[data-key="weights:0"]');
  await page.evaluate(() => {
    document.getElementById('opt-variants').open = true;
  });
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
  for (const key of ['attention', 'feature_map', 'normalize', 'decay'])
    assert(!(key in problem.options), `options.${key} left in the link`);
});

test('the linear preset draws, and ?walk=recurrent steps through its state', async ({ page, base }) => {
  await page.goto(`${base}?walk=recurrent`);
  await page.waitForSelector('body[data-ready="true"]');
  // The first example is softmax attention: the walkthrough says what it needs.
  await page.waitForFunction(() =>
    /Not computed: recurrent needs causal linear attention/.test(document.getElementById('practice-text').textContent),
  );
  await page.selectOption('#preset', 'linear');
  await page.waitForSelector('#step-list article[data-key="linear_scores:-1"], #step-list article[data-key="linear_scores:0"]');
  await page.waitForSelector('#pr-costs');
  const preset = pkg.findPreset('linear');
  const { problem } = pkg.presetProblem(preset, engine);
  const want = engine.recurrent(problem);
  const decimals = Number(await page.$eval('#opt-decimals', (e) => e.value));
  const cell = (x) => pkg.formatNumber(x, decimals, { fixedZero: true, tinyAsZero: true });
  for (let t = 0; t < want.steps.length; t++) {
    await page.waitForFunction(
      (p) => document.getElementById('practice-pos').textContent.endsWith(p),
      `Token step ${t + 1} of ${want.steps.length}`,
    );
    const s = want.steps[t];
    const state = await page.$$eval('#practice-body .pr-state tbody tr', (rows) =>
      rows.map((r) => [...r.querySelectorAll('td')].map((td) => td.textContent)),
    );
    strict.deepEqual(
      state,
      s.state.map((r) => r.map(cell)),
      `token ${t + 1}: S`,
    );
    strict.match(await page.$eval('#practice-text', (e) => e.textContent), new RegExp(`^${preset.tokens[t]}: the state S`));
    await page.keyboard.press('ArrowRight');
  }
  await page.waitForFunction(() => document.getElementById('practice-pos').textContent.endsWith('Every form’s cost'));
  const costs = await page.$$eval('#pr-costs tbody tr', (rows) =>
    rows.map((r) => [r.dataset.form, ...[...r.querySelectorAll('td')].map((td) => Number(td.textContent))]),
  );
  strict.deepEqual(
    costs,
    want.costs.map((c) => [c.form, c.multiply_adds, c.state]),
  );
  // Chunks of 2: the chunked form, one position per chunk.
  await page.fill('#pr-chunk', '2');
  await page.press('#pr-chunk', 'Tab');
  const chunked = engine.recurrent(problem, { chunk: 2 });
  await page.waitForFunction(
    (p) => document.getElementById('practice-pos').textContent.endsWith(p),
    `Chunk step 1 of ${chunked.steps.length}`,
  );
  const rows = await page.$$eval('#practice-body figure', (fs) => fs.map((f) => f.querySelector('figcaption').textContent));
  assert(
    rows.some((c) => c.startsWith('From inside the chunk')) && rows.some((c) => c.startsWith('From the state carried in')),
    `captions: ${rows}`,
  );
});

test('sigmoid attention: the choice and its bias reach the core, and no row is said to sum to 1', async ({ page, base }) => {
  await page.goto(base);
  await page.waitForSelector('body[data-ready="true"]');
  await page.selectOption('#preset', '000');
  await page.fill('#opt-decimals', '8');
  await page.waitForSelector('#step-list article[data-key="weights:0"]');
  await openVariants(page);
  strict.match(await factsOf(page, 'weights:0'), /each row sums to 1: /);
  assert(await page.$eval('#opt-sigmoid-bias', (e) => e.disabled), 'the sigmoid bias is enabled with softmax attention');
  await changing(page, () => page.selectOption('#opt-attention', 'sigmoid'));
  let { problem, trace } = await nodeTrace(page);
  strict.equal(problem.options.score_fn, 'sigmoid');
  assert(!('sigmoid_bias' in problem.options), 'an empty bias is written into the link');
  // The empty field shows the default's number: −ln S for S = 4 keys.
  strict.equal(
    await page.$eval('#opt-sigmoid-bias', (e) => e.placeholder),
    `−ln ${trace.meta.keys} = −${Math.log(trace.meta.keys).toFixed(4)}`,
  );
  await assertStep(page, trace, 'weights');
  await assertStep(page, trace, 'output', null);
  // Rows of sigmoid weights (here 0.82 to 1.33) are not said to sum to 1, on the card or at a glance.
  const facts = await factsOf(page, 'weights:0');
  strict.match(facts, /row sums \(sigmoid weights need not sum to 1\): 0\.82088668/);
  assert(!/sums to 1:/.test(facts), `the weights card says the rows sum to 1: ${facts}`);
  strict.match(
    await page.$eval('#glance figcaption', (e) => e.textContent),
    /sigmoid weights, each on its own: a query's need not sum to 1/,
  );
  await changing(page, () => page.fill('#opt-sigmoid-bias', '-1'));
  ({ problem, trace } = await nodeTrace(page));
  strict.equal(problem.options.sigmoid_bias, -1);
  await assertStep(page, trace, 'weights');
  await page.fill('#opt-sigmoid-bias', 'big');
  await page.waitForFunction(() => !document.getElementById('options-error').hidden);
  strict.match(await optionsError(page), /^options\.sigmoid_bias must be a finite number \(default -ln S\), got "big"/);
  await page.fill('#opt-sigmoid-bias', '');
  await page.waitForFunction(() => document.getElementById('options-error').hidden);
  await changing(page, () => page.selectOption('#opt-attention', 'softmax'));
  ({ problem } = await nodeTrace(page));
  for (const key of ['score_fn', 'sigmoid_bias']) assert(!(key in problem.options), `options.${key} left in the link`);
});

test('differential attention: λ, λ_init and the norm reach the core; an odd d_k names the option', async ({ page }) => {
  await page.selectOption('#preset', '000');
  await page.waitForSelector('#step-list article[data-key="weights:0"]');
  await openVariants(page);
  await changing(page, () => page.selectOption('#opt-attention', 'differential'));
  // λ is required: it starts at λ_init's default, 0.8.
  strict.equal(await page.$eval('#opt-lambda', (e) => e.value), '0.8');
  await page.waitForSelector('#step-list article[data-key="head_normed:0"]');
  let { problem, trace } = await nodeTrace(page);
  strict.deepEqual(problem.options.differential, { lambda: 0.8 });
  for (const id of ['weights_1', 'weights_2', 'weights', 'head_normed']) await assertStep(page, trace, id);
  await assertStep(page, trace, 'output', null);
  strict.match(await factsOf(page, 'weights:0'), /each row sums to 1 − λ: 0\.2/);
  // Emptied, λ stays empty (it is required: the message names it) until a number is typed.
  await page.fill('#opt-lambda', '');
  await page.waitForFunction(() => !document.getElementById('options-error').hidden);
  strict.equal(await optionsError(page), 'options.differential.lambda is required: one number, or one per head');
  strict.equal(await page.$eval('#opt-lambda', (e) => e.value), '');
  await changing(page, () => page.fill('#opt-lambda', '0.3'));
  await changing(page, () => page.fill('#opt-lambda-init', '0.5'));
  ({ problem, trace } = await nodeTrace(page));
  strict.deepEqual(problem.options.differential, { lambda: 0.3, lambda_init: 0.5 });
  await assertStep(page, trace, 'weights');
  await assertStep(page, trace, 'head_normed');
  await page.click('#opt-diff-norm');
  await page.waitForFunction(() => !document.querySelector('#step-list article[data-key="head_normed:0"]'));
  ({ problem, trace } = await nodeTrace(page));
  strict.equal(problem.options.differential.norm, false);
  await assertStep(page, trace, 'output', null);
  // Seed 003's heads have d_k = 3: no halves. The message names the option; softmax computes again.
  await page.selectOption('#preset', '003');
  await page.waitForSelector('#step-list article[data-key="weights:0"]');
  await openVariants(page);
  await page.selectOption('#opt-attention', 'differential');
  await page.waitForFunction(() => !document.getElementById('options-error').hidden);
  strict.equal(await optionsError(page), "options.differential needs an even d_k (each head's features split in halves), got d_k = 3");
  assert(await page.$eval('#results', (e) => e.classList.contains('stale')), 'the last good result is not dimmed');
  await page.selectOption('#opt-attention', 'softmax');
  await page.waitForFunction(() => document.getElementById('options-error').hidden);
  assert(!(await page.$eval('#results', (e) => e.classList.contains('stale'))), 'softmax attention does not compute again');
});

test("two variants that exclude one another, by link: the core's message names both; one choice mends it", async ({ page, base }) => {
  const problem = pkg.presetProblem(pkg.findPreset('000'), engine).problem;
  problem.options = { ...problem.options, score_fn: 'sigmoid', differential: { lambda: 0.5 } };
  const hash = await encodeStateString(problemToState(problem, { decimals: 8 }));
  await page.goto(`${base}#${hash}`);
  await page.waitForSelector('body[data-ready="true"]');
  await page.waitForFunction(() => !document.getElementById('options-error').hidden);
  strict.equal(await optionsError(page), 'options.score_fn "sigmoid" and options.differential exclude one another: give one of them');
  // The one "weights from" choice shows one of them; choosing keeps only that one.
  strict.equal(await page.$eval('#opt-attention', (e) => e.value), 'differential');
  await page.selectOption('#opt-attention', 'sigmoid');
  await page.waitForFunction(() => document.getElementById('options-error').hidden);
  const { problem: mended, trace } = await nodeTrace(page);
  strict.equal(mended.options.score_fn, 'sigmoid');
  assert(!('differential' in mended.options), 'options.differential left in the link');
  await assertStep(page, trace, 'weights');
});

test('QK-norm: type, ε and gains reach the core; not with linear attention; wrong gains name the option', async ({ page }) => {
  await page.selectOption('#preset', '000');
  await page.waitForSelector('#step-list article[data-key="weights:0"]');
  await openVariants(page);
  assert(await page.$eval('#opt-qk-eps', (e) => e.disabled), 'ε is enabled with QK-norm off');
  await changing(page, () => page.selectOption('#opt-qk-norm', 'rms'));
  await page.waitForSelector('#step-list article[data-key="Q_normed:0"]');
  let { problem, trace } = await nodeTrace(page);
  strict.deepEqual(problem.options.qk_norm, { type: 'rms' });
  for (const id of ['Q_normed', 'K_normed', 'scores', 'weights']) await assertStep(page, trace, id);
  await assertStep(page, trace, 'output', null);
  await changing(page, () => page.selectOption('#opt-qk-norm', 'layer'));
  await changing(page, () => page.fill('#opt-qk-eps', '0.01'));
  await changing(page, () => page.fill('#opt-qk-gq', '1 2 1 2 1 2 1 2'));
  await changing(page, () => page.fill('#opt-qk-gk', '0.5, 0.5, 1, 1, 1, 1, 2, 2'));
  ({ problem, trace } = await nodeTrace(page));
  strict.deepEqual(problem.options.qk_norm, { type: 'layer', eps: 0.01, g_q: [1, 2, 1, 2, 1, 2, 1, 2], g_k: [0.5, 0.5, 1, 1, 1, 1, 2, 2] });
  for (const id of ['Q_normed', 'K_normed', 'weights']) await assertStep(page, trace, id);
  await page.fill('#opt-qk-gk', '1 2 3');
  await page.waitForFunction(() => !document.getElementById('options-error').hidden);
  strict.equal(await optionsError(page), 'options.qk_norm.g_k has 3 gains but d_k = 8: one per feature of a head, shared by every head');
  await page.fill('#opt-qk-gk', '');
  await page.waitForFunction(() => document.getElementById('options-error').hidden);
  // Linear attention refuses QK-norm: the control is off while it is chosen, and comes back after.
  await changing(page, () => page.selectOption('#opt-attention', 'linear'));
  assert(await page.$eval('#opt-qk-norm', (e) => e.disabled), 'QK-norm can be chosen with linear attention');
  ({ problem } = await nodeTrace(page));
  assert(!('qk_norm' in problem.options), 'options.qk_norm sent with linear attention');
  await changing(page, () => page.selectOption('#opt-attention', 'softmax'));
  ({ problem } = await nodeTrace(page));
  strict.deepEqual(problem.options.qk_norm, { type: 'layer', eps: 0.01, g_q: [1, 2, 1, 2, 1, 2, 1, 2] });
});

test('the output gate: W_G elementwise or headwise and b_G as inputs; a W_G of neither width names W_G', async ({ page }) => {
  await page.selectOption('#preset', '000');
  await page.waitForSelector('#step-list article[data-key="weights:0"]');
  await openVariants(page);
  assert(await page.$eval('#opt-gate', (e) => e.disabled), 'the gate can be chosen with Q, K, V given (it reads X)');
  // The multi-head example: X, 2 heads of d_v = 2, W_O.
  await page.selectOption('#preset', 'multihead');
  await page.waitForSelector('#step-list article[data-key="weights:1"]');
  await openVariants(page);
  await changing(page, () => page.selectOption('#opt-gate', 'elementwise'));
  await page.waitForSelector('#step-list article[data-key="gated_output:1"]');
  let { problem, trace } = await nodeTrace(page);
  strict.deepEqual([problem.W_G.length, problem.W_G[0].length], [4, 4]);
  for (const head of [0, 1]) {
    for (const id of ['gate', 'gated_output']) await assertStep(page, trace, id, head);
  }
  await assertStep(page, trace, 'output', null);
  await changing(page, () => page.selectOption('#opt-gate', 'headwise'));
  ({ problem, trace } = await nodeTrace(page));
  strict.deepEqual([problem.W_G.length, problem.W_G[0].length], [4, 2]);
  strict.deepEqual(trace.steps.find((s) => s.id === 'gate' && s.head === 1).shape, [4, 1]);
  await assertStep(page, trace, 'gate', 1);
  await assertStep(page, trace, 'output', null);
  await changing(page, () => page.check('#opt-gate-bias'));
  const bias = page.locator('.editor[data-input="b_G"]');
  await bias.locator('button.tab[data-tab="text"]').click();
  await changing(page, () => bias.locator('textarea').fill('1 -2'));
  ({ problem, trace } = await nodeTrace(page));
  strict.deepEqual(problem.b_G, [1, -2]);
  await assertStep(page, trace, 'gate', 0);
  await assertStep(page, trace, 'gate', 1);
  // Three columns: neither heads·d_v = 4 nor heads = 2. The message is at W_G; mended, it computes.
  await changing(page, () => page.uncheck('#opt-gate-bias'));
  const gate = page.locator('.editor[data-input="W_G"]');
  await gate.locator('button.tab[data-tab="text"]').click();
  await gate.locator('textarea').fill('1 0 1\n0 1 0\n1 1 0\n0 0 1');
  await gate.locator('.error').waitFor();
  strict.equal(
    await gate.locator('.error').textContent(),
    'W_G has 3 columns but the gate needs heads*d_v = 4 (one gate per output feature) or heads = 2 (one gate per head)',
  );
  await changing(page, () => gate.locator('textarea').fill('1 0\n0 1\n1 1\n0 -1'));
  assert(await gate.locator('.error').isHidden(), 'the message stays after mending W_G');
  ({ problem, trace } = await nodeTrace(page));
  strict.deepEqual(problem.W_G, [
    [1, 0],
    [0, 1],
    [1, 1],
    [0, -1],
  ]);
  await assertStep(page, trace, 'gated_output', 0);
  await changing(page, () => page.selectOption('#opt-gate', 'off'));
  ({ problem } = await nodeTrace(page));
  assert(!('W_G' in problem) && !('b_G' in problem), 'W_G or b_G left in the problem with the gate off');
});

test("the variants' presets load with their source, their controls set and the numbers of engine.run", async ({ page }) => {
  const controls = {
    'qk-norm': { '#opt-qk-norm': 'rms', '#opt-attention': 'softmax' },
    gated: { '#opt-gate': 'elementwise' },
    sigmoid: { '#opt-attention': 'sigmoid' },
    differential: { '#opt-attention': 'differential', '#opt-lambda': '0.5' },
  };
  const own = { 'qk-norm': 'Q_normed', gated: 'gate', sigmoid: 'weights', differential: 'weights_2' };
  for (const [id, values] of Object.entries(controls)) {
    const preset = pkg.findPreset(id);
    await page.selectOption('#preset', id);
    await page.waitForSelector(`#step-list article[data-key="${own[id]}:0"]`);
    strict.match(
      await page.$eval('#preset-source', (e) => e.textContent),
      new RegExp(`^From: ${preset.source.slice(0, 20).replace(/[()]/g, '\\$&')}`),
    );
    strict.equal(await page.$eval('#preset-source a', (e) => e.href), preset.url);
    for (const [sel, value] of Object.entries(values)) strict.equal(await page.$eval(sel, (e) => e.value), value, `${id}: ${sel}`);
    assert(await page.$eval('#opt-variants', (e) => e.open), `${id}: the variants are folded`);
    // The page shows what engine.run gives for the preset itself.
    const trace = engine.run(pkg.presetProblem(preset, engine).problem);
    await assertStep(page, trace, own[id]);
    await assertStep(page, trace, 'weights');
    await assertStep(page, trace, 'output', null);
  }
});

// ---- multi-head latent attention (DeepSeek-V2) -------------------------------------------------

const editorOf = (page, name) => page.locator(`.editor[data-input="${name}"]`);
const shownInputs = (page) => page.$$eval('#editors .editor', (es) => es.filter((e) => !e.hidden).map((e) => e.dataset.input));

/** Types `text` into an input's editor (its text view) and waits until the link holds it. */
async function typeInput(page, name, text) {
  const ed = editorOf(page, name);
  await ed.locator('button.tab[data-tab="text"]').click();
  await changing(page, () => ed.locator('textarea').fill(text));
}

// Latent attention's steps: whole (head null) and per head.
const LATENT_WHOLE = ['c_KV', 'k_R', 'output', 'output_absorbed', 'cache_sizes'];
const LATENT_HEAD = ['K_C', 'V', 'Q_C', 'q_R', 'scores_C', 'scores_R', 'scores', 'weights', 'Q_absorbed', 'scores_C_absorbed', 'O_latent'];

test("latent attention: its inputs, the queries' latent, the rotary part and the cache reach the core; the page shows engine.run's numbers", async ({
  page,
  base,
}) => {
  await page.goto(base);
  await page.waitForSelector('body[data-ready="true"]');
  await page.selectOption('#preset', '000');
  await page.fill('#opt-decimals', '8');
  await page.waitForSelector('#step-list article[data-key="weights:0"]');
  await openVariants(page);
  // Q, K, V given: latent attention reads X, so it cannot be chosen.
  assert(await page.$eval('#opt-attention option[value="latent"]', (e) => e.disabled), 'latent attention can be chosen with Q, K, V given');
  await page.selectOption('#preset', 'multihead');
  await page.waitForSelector('#step-list article[data-key="weights:1"]');
  await openVariants(page);
  await changing(page, () => page.selectOption('#opt-attention', 'latent'));
  await page.waitForSelector('#step-list article[data-key="cache_sizes:-1"]');
  strict.deepEqual(await shownInputs(page), ['X', 'W_DKV', 'W_UK', 'W_UV', 'W_KR', 'W_QR', 'W_Q', 'W_O']);
  for (const id of ['opt-qk-norm', 'opt-gate'])
    assert(await page.$eval(`#${id}`, (e) => e.disabled), `${id} can be chosen with latent attention`);
  let { problem, trace } = await nodeTrace(page);
  // Started from X (4 × 4), 2 heads of d_h = 2 (W_Q's width) and d_v = 2: latents of 2.
  strict.deepEqual(
    Object.fromEntries(['W_DKV', 'W_UK', 'W_UV', 'W_KR', 'W_QR'].map((n) => [n, [problem[n].length, problem[n][0].length]])),
    { W_DKV: [4, 2], W_UK: [2, 4], W_UV: [2, 4], W_KR: [4, 2], W_QR: [4, 4] },
  );
  assert(!('kv_heads' in problem.options) && !('W_K' in problem) && !('W_V' in problem), 'the link keeps W_K, W_V or kv_heads');
  for (const id of LATENT_WHOLE) await assertStep(page, trace, id, null);
  for (const head of [0, 1]) for (const id of LATENT_HEAD) await assertStep(page, trace, id, head);
  strict.deepEqual(trace.steps.find((s) => s.id === 'cache_sizes').data, [[8, 4, 4]]);
  // The queries from a latent of their own: W_DQ and W_UQ in place of W_Q, and the step c_Q.
  await changing(page, () => page.selectOption('#opt-latent-queries', 'W_DQ'));
  await page.waitForSelector('#step-list article[data-key="c_Q:-1"]');
  strict.deepEqual(await shownInputs(page), ['X', 'W_DKV', 'W_UK', 'W_UV', 'W_KR', 'W_QR', 'W_DQ', 'W_UQ', 'W_O']);
  await typeInput(page, 'W_DQ', '1 0 0\n0 1 0\n0 0 1\n1 1 1');
  await typeInput(page, 'W_UQ', '1 0 0 1\n0 1 1 0\n1 1 0 0');
  ({ problem, trace } = await nodeTrace(page));
  strict.deepEqual(problem.W_UQ, [
    [1, 0, 0, 1],
    [0, 1, 1, 0],
    [1, 1, 0, 0],
  ]);
  await assertStep(page, trace, 'c_Q', null);
  for (const id of ['Q_C', 'q_R', 'scores', 'weights']) await assertStep(page, trace, id, 1);
  await assertStep(page, trace, 'output_absorbed', null);
  // The cache: past_c_KV and past_k_R, whose rows come first in c_KV and k_R.
  await page.evaluate(() => {
    document.getElementById('opt-modern').open = true;
  });
  await changing(page, () => page.check('#opt-cache'));
  await typeInput(page, 'past_c_KV', '1 -1\n0.5 2');
  await typeInput(page, 'past_k_R', '0.5 0\n0 1');
  ({ problem, trace } = await nodeTrace(page));
  strict.deepEqual(problem.past_c_KV, [
    [1, -1],
    [0.5, 2],
  ]);
  strict.deepEqual(trace.steps.find((s) => s.id === 'c_KV').data.slice(0, 2), [
    [1, -1],
    [0.5, 2],
  ]);
  for (const id of ['c_KV', 'k_R', 'cache_sizes']) await assertStep(page, trace, id, null);
  for (const id of ['scores_R', 'weights', 'O_latent']) await assertStep(page, trace, id, 0);
  // Without the rotary part: no W_KR, W_QR, past_k_R; no k_R or q_R, the scores are the content scores.
  await changing(page, () => page.uncheck('#opt-latent-rope'));
  await page.waitForFunction(() => !document.querySelector('#step-list article[data-key="k_R:-1"]'));
  strict.deepEqual(await shownInputs(page), ['X', 'W_DKV', 'W_UK', 'W_UV', 'W_DQ', 'W_UQ', 'W_O', 'past_c_KV']);
  ({ problem, trace } = await nodeTrace(page));
  assert(!('W_KR' in problem) && !('past_k_R' in problem), 'the rotary part stays in the link');
  for (const head of [0, 1]) await assertStep(page, trace, 'scores', head);
  await assertStep(page, trace, 'output', null);
  await changing(page, () => page.uncheck('#opt-cache'));
  await changing(page, () => page.check('#opt-latent-rope'));
  await changing(page, () => page.selectOption('#opt-latent-queries', 'W_Q'));
  await page.waitForSelector('#step-list article[data-key="q_R:1"]');
});

test("latent attention: a bad value names its key (W_UK's rows, KV heads), and the page computes again once mended", async ({ page }) => {
  await page.waitForSelector('#step-list article[data-key="cache_sizes:-1"]');
  const uk = editorOf(page, 'W_UK');
  await uk.locator('button.tab[data-tab="text"]').click();
  const good = await uk.locator('textarea').inputValue();
  await uk.locator('textarea').fill('1 0 0 1\n0 1 1 0\n1 1 1 1');
  await uk.locator('.error').waitFor();
  strict.equal(await uk.locator('.error').textContent(), 'W_UK has 3 rows but c_KV = X·W_DKV has 2 columns (W_UK is 3x4)');
  assert(await page.$eval('#results', (e) => e.classList.contains('stale')), 'the last good result is not dimmed');
  await uk.locator('textarea').fill(good);
  await uk.locator('.error').waitFor({ state: 'hidden' });
  assert(!(await page.$eval('#results', (e) => e.classList.contains('stale'))), 'the page does not compute again');
  // KV heads set apart from heads: latent attention's heads share one latent, and the core says so.
  await page.fill('#opt-kvheads', '1');
  await page.waitForFunction(() => !document.getElementById('options-error').hidden);
  strict.match(await optionsError(page), /^W_DKV \(multi-head latent attention\) and options\.kv_heads cannot be combined: /);
  await page.fill('#opt-kvheads', '2');
  await page.waitForFunction(() => document.getElementById('options-error').hidden);
  const { trace } = await nodeTrace(page);
  await assertStep(page, trace, 'scores_C_absorbed', 1);
  // Back to softmax: W_K and W_V again, and nothing of latent attention left in the link.
  await changing(page, () => page.selectOption('#opt-attention', 'softmax'));
  await page.waitForSelector('#step-list article[data-key="K:1"]');
  const { problem } = await nodeTrace(page);
  for (const key of ['W_DKV', 'W_UK', 'W_UV', 'W_KR', 'W_QR']) assert(!(key in problem), `${key} left in the problem`);
  strict.equal(problem.options.kv_heads, 2);
});

test('the latent preset loads with its source and its latent steps; its link round-trips the latent inputs', async ({ page, base }) => {
  const preset = pkg.findPreset('latent');
  await page.selectOption('#preset', 'latent');
  await page.waitForSelector('#step-list article[data-key="cache_sizes:-1"]');
  strict.match(await page.$eval('#preset-source', (e) => e.textContent), /^From: DeepSeek-AI, 2024, “DeepSeek-V2/);
  strict.equal(await page.$eval('#preset-source a', (e) => e.href), 'https://arxiv.org/abs/2405.04434');
  strict.equal(await page.$eval('#opt-attention', (e) => e.value), 'latent');
  strict.equal(await page.$eval('#opt-latent-queries', (e) => e.value), 'W_Q');
  assert(await page.$eval('#opt-latent-rope', (e) => e.checked), 'the rotary part is off');
  assert(await page.$eval('#opt-variants', (e) => e.open), 'the variants are folded');
  const trace = engine.run(pkg.presetProblem(preset, engine).problem);
  const ids = await stepIds(page);
  for (const id of [...LATENT_WHOLE, ...LATENT_HEAD]) assert(ids.includes(id), `no ${id} step: ${ids}`);
  for (const id of LATENT_WHOLE) await assertStep(page, trace, id, null);
  for (const id of LATENT_HEAD) await assertStep(page, trace, id, 1);
  // The note's numbers: head 2's content scores for "sat" tie, its rotary scores do not; 4 numbers cached, not 8.
  const head2 = (id) => trace.steps.find((s) => s.id === id && s.head === 1).data[2];
  strict.deepEqual(head2('scores_C'), [6, 6, 6]);
  strict.deepEqual(
    head2('scores_R').map((x) => Number(x.toFixed(2))),
    [-2.65, 7.69, 8],
  );
  strict.deepEqual(trace.steps.find((s) => s.id === 'cache_sizes').data, [[8, 4, 4]]);
  // Its columns are named by the forms its formula lists.
  const heads = await page.$$eval('#step-list article[data-key="cache_sizes:-1"] table.matrix thead th', (ths) =>
    ths.map((t) => t.textContent.trim()),
  );
  strict.deepEqual(heads.slice(-3), ['MHA', 'MQA', 'MLA']);
  // Edited, its link holds every latent input as typed; opened elsewhere it shows the same numbers.
  await typeInput(page, 'W_UV', '1 0 1 1\n0 -1 0.5 1');
  const hash = await settleHash(page);
  const { state } = await decodeStateString(hash);
  strict.equal(state.inputs.W_UV.text.trim(), '1 0 1 1\n0 -1 0.5 1');
  const sent = stateToProblem(state, engine);
  for (const name of ['W_DKV', 'W_UK', 'W_KR', 'W_QR', 'W_Q']) strict.deepEqual(sent[name], preset.inputs[name], name);
  await page.goto('about:blank');
  await page.goto(`${base}${hash}`);
  await page.waitForSelector('#step-list article[data-key="cache_sizes:-1"]');
  strict.equal(await page.$eval('#opt-attention', (e) => e.value), 'latent');
  strict.deepEqual(await shownInputs(page), ['X', 'W_DKV', 'W_UK', 'W_UV', 'W_KR', 'W_QR', 'W_Q']);
  const { problem, trace: again } = await nodeTrace(page);
  strict.deepEqual(problem, sent);
  for (const id of ['V', 'head_output', 'O_latent']) await assertStep(page, again, id, 1);
  await assertStep(page, again, 'output_absorbed', null);
});
