// Issue 13 on the explorer page, in Chromium via playwright-core, on node:test:
//   node --test tests/browser/modern.test.mjs [--lib DIR]
// Each control of "Positions, windows, sinks, KV cache" (RoPE style/base/dims, sinusoidal and
// learned P, ALiBi, window, sink tokens, sink logit, mask fill, fully masked, KV cache): set on the
// page, the new steps appear with the numbers engine.run gives in Node for the problem the page's
// link holds; a bad value shows its error under the options and the page recovers; a reload keeps
// the options; clicking a cell of Q_rot, alibi, mask and a sink's weights explains it.
// The tests run in order on one page.
import { join, resolve } from 'node:path';

import { assert, browserSuite } from './server.mjs';

const root = resolve(import.meta.dirname, '..', '..');
const libArg = process.argv.indexOf('--lib');
const lib = resolve(libArg > 0 ? process.argv[libArg + 1] : join(root, 'dist'));
const { loadAttention } = await import(join(lib, 'node.js'));
const { decodeStateString, stateToProblem } = await import(join(lib, 'share.js'));
const engine = await loadAttention();

function parseShown(text) {
  const t = text.trim().replace(/\u2212/g, '-');
  if (t === '-∞') return -Infinity;
  if (t === '∞') return Infinity;
  return Number(t);
}

/** The page writes its state into the URL hash after a short pause: wait until it stops changing. */
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

/** The problem the page's link stands for, run by the engine in Node. */
async function nodeTrace(page) {
  const { state, error } = await decodeStateString(await settleHash(page));
  assert(state, `the page's link does not decode: ${error}`);
  const problem = stateToProblem(state, engine);
  return { problem, trace: engine.run(problem) };
}

async function readStep(page, key) {
  await page.waitForSelector(`#step-list article[data-key="${key}"] table.matrix`);
  const cells = await page.$$eval(`#step-list article[data-key="${key}"] table.matrix tbody tr`, (rows) =>
    rows.map((r) => [...r.querySelectorAll('td')].map((td) => td.textContent)),
  );
  return cells.map((r) => r.map(parseShown));
}

/** Step `id` of `head` (null: no head) as the page shows it equals engine.run's, to 8 decimals. */
async function assertStep(page, trace, id, head = 0) {
  const step = trace.steps.find((s) => s.id === id && s.head === head);
  assert(step, `engine.run has no step ${id} for head ${head}`);
  const shown = await readStep(page, `${id}:${head ?? -1}`);
  assert(shown.length === step.data.length, `${id}: ${shown.length} rows on the page, engine.run has ${step.data.length}`);
  step.data.forEach((row, i) =>
    row.forEach((e, j) => {
      const a = shown[i][j];
      const ok = a === e || Math.abs(a - e) <= 0.51e-8 + 1e-7 * Math.abs(e);
      assert(ok, `${id}[${i + 1}, ${j + 1}]: the page shows ${a}, engine.run gives ${e}`);
    }),
  );
  return step;
}

const stepIds = (page) => page.$$eval('#step-list article.step', (as) => [...new Set(as.map((a) => a.dataset.step))]);

async function optionsError(page) {
  return page.$eval('#options-error', (e) => (e.hidden ? '' : e.textContent));
}

async function reset(page, id = '000') {
  await page.selectOption('#preset', id);
  await page.fill('#opt-decimals', '8');
  await page.waitForSelector('#step-list article[data-key="weights:0"]');
  await page.evaluate(() => {
    document.getElementById('opt-modern').open = true;
  });
}

async function setNumber(page, selector, value) {
  await page.fill(selector, String(value));
  await page.press(selector, 'Tab');
}

const test = browserSuite('modern', { lib, contextOptions: { viewport: { width: 1440, height: 900 } }, screenshots: 'modern-' });

test('RoPE: Q_rot and K_rot match engine.run, base and dims reach the core, odd dims is an error', async ({ page }) => {
  await reset(page);
  await page.selectOption('#opt-rope', 'half');
  let { trace } = await nodeTrace(page);
  assert((await stepIds(page)).includes('Q_rot'), 'no Q_rot step with RoPE on');
  const q = await assertStep(page, trace, 'Q_rot');
  await assertStep(page, trace, 'K_rot');
  await setNumber(page, '#opt-rope-base', 100);
  await setNumber(page, '#opt-rope-dims', 4);
  ({ trace } = await nodeTrace(page));
  const q2 = await assertStep(page, trace, 'Q_rot');
  assert(q2.data[1][0] !== q.data[1][0], 'base 100 did not change Q_rot');
  assert(q2.data[1][7] === trace.steps.find((s) => s.id === 'Q' && s.head === 0).data[1][7], 'dims 4 rotated dimension 8');
  await page.selectOption('#opt-rope', 'interleaved');
  ({ trace } = await nodeTrace(page));
  await assertStep(page, trace, 'Q_rot');
  await assertStep(page, trace, 'weights');
  // The relative-position property, with the engine's own number.
  const note = await page.$eval('#step-list article[data-key="scores:0"] .facts', (a) => a.textContent);
  assert(note.includes('turned 100 positions further') && /depend only on how far apart/.test(note), `the scores' facts: "${note}"`);
  const change = trace.facts[0].rope_shift_change;
  assert(
    change < 1e-12 && (change === 0 ? note.includes('no score at all') : note.includes('by more than')),
    `change ${change}: "${note}"`,
  );

  await setNumber(page, '#opt-rope-dims', 3);
  await page.waitForFunction(() => !document.getElementById('options-error').hidden);
  const error = await optionsError(page);
  assert(/rope dims must be even/.test(error), `RoPE dims 3 shows: "${error}"`);
  await setNumber(page, '#opt-rope-dims', 2);
  await page.waitForFunction(() => document.getElementById('options-error').hidden);
  ({ trace } = await nodeTrace(page));
  await assertStep(page, trace, 'Q_rot');
});

test('a Q_rot cell explains its rotation', async ({ page }) => {
  const { problem, trace } = await nodeTrace(page);
  await page.click('article[data-key="Q_rot:0"] td[data-r="1"][data-c="0"]');
  const body = await page.$eval('#drill-body', (e) => e.textContent);
  const value = trace.steps.find((s) => s.id === 'Q_rot' && s.head === 0).data[1][0];
  const e = engine.explain(problem, { step: 'Q_rot', head: 0, row: 1, col: 0 });
  assert(body.includes(value.toFixed(8)), `the Q_rot drill-down lacks ${value.toFixed(8)}: ${body.slice(0, 300)}`);
  assert(/rot/i.test(body), `the Q_rot drill-down does not speak of a rotation: ${body.slice(0, 300)}`);
  assert(e.kind === 'rotation', `engine.explain gives kind ${e.kind} for Q_rot`);
});

test("RoPE's angle table is a step of the page; a cell explains its angle as p·θ_i", async ({ page }) => {
  const { problem, trace } = await nodeTrace(page);
  const angles = await assertStep(page, trace, 'rope_angles', null);
  assert(angles.shape[0] === 4 && angles.shape[1] === 1, `rope dims 2 at positions 0..3: rope_angles is ${angles.shape}`);
  // Rows are the positions themselves, columns the rotated pairs i of θ_i.
  const heads = await page.$$eval('article[data-key="rope_angles:-1"] table.matrix th', (ths) => ths.map((th) => th.textContent));
  const labels = heads.filter((t) => /^[pi] = /.test(t)).join(', ');
  assert(labels === 'i = 0, p = 0, p = 1, p = 2, p = 3', `the angle table's labels: ${labels}`);
  const caption = await page.$eval('article[data-key="rope_angles:-1"] table.matrix caption', (c) => c.textContent);
  assert(caption.includes('4 position rows by 1 pair columns'), `the angle table's caption: ${caption}`);
  await page.click('article[data-key="rope_angles:-1"] td[data-r="3"][data-c="0"]');
  const body = await page.$eval('#drill-body', (e) => e.textContent);
  const e = engine.explain(problem, { step: 'rope_angles', head: null, row: 3, col: 0 });
  assert(e.kind === 'angle', `engine.explain gives kind ${e.kind} for rope_angles`);
  assert(body.includes(e.value.toFixed(8)) && /Position 3, pair 1/.test(body), `the rope_angles drill-down: ${body.slice(0, 300)}`);
  const formula = await page.$eval('#drill-body .katex-mathml annotation', (a) => a.textContent);
  assert(formula.includes('3 \\cdot'), `the angle's formula: ${formula}`);
});

test('positions: sinusoidal and learned P add X_pos; the hash keeps them over a reload', async ({ page }) => {
  await reset(page, '001'); // positions add to X: self-attention
  await page.selectOption('#opt-positional', 'sinusoidal');
  let { trace } = await nodeTrace(page);
  await assertStep(page, trace, 'positional', null);
  await assertStep(page, trace, 'X_pos', null);
  await page.reload();
  await page.waitForSelector('body[data-ready="true"]');
  assert((await page.$eval('#opt-positional', (s) => s.value)) === 'sinusoidal', 'a reload lost sinusoidal positions');
  await assertStep(page, trace, 'X_pos', null);
  await page.selectOption('#opt-positional', 'learned');
  await page.waitForSelector('.editor[data-input="P"]');
  let problem;
  ({ problem, trace } = await nodeTrace(page));
  await assertStep(page, trace, 'X_pos', null);
  await assertStep(page, trace, 'output', null);
  // X_pos has no head: its cell must be explained as X_pos, not as a head's step.
  await page.click('article[data-key="X_pos:-1"] td[data-r="1"][data-c="0"]');
  const body = await page.$eval('#drill-body', (e) => e.textContent);
  const e = engine.explain(problem, { step: 'X_pos', head: -1, row: 1, col: 0 });
  assert(!/no step/.test(body) && body.includes(e.value.toFixed(8)), `the X_pos drill-down: ${body.slice(0, 300)}`);
});

test('ALiBi, window, sinks: alibi, biased, mask and masked match engine.run and survive a reload', async ({ page }) => {
  await reset(page);
  await page.evaluate(() => {
    document.getElementById('opt-modern').open = true;
  });
  await page.check('#opt-alibi');
  await setNumber(page, '#opt-window-left', 1);
  await setNumber(page, '#opt-window-right', 0);
  await setNumber(page, '#opt-sink-tokens', 1);
  const { trace } = await nodeTrace(page);
  for (const id of ['alibi', 'biased', 'mask', 'masked', 'weights', 'output'])
    await assertStep(page, trace, id, id === 'output' ? null : 0);
  const masked = trace.steps.find((s) => s.id === 'masked' && s.head === 0).data;
  assert(masked[3][1] === -Infinity && masked[3][0] !== -Infinity, 'engine: query 4 should see the sink key 1 but not key 2');
  await page.reload();
  await page.waitForSelector('body[data-ready="true"]');
  assert(await page.$eval('#opt-alibi', (c) => c.checked), 'a reload lost ALiBi');
  assert((await page.$eval('#opt-window-left', (c) => c.value)) === '1', 'a reload lost the window');
  assert((await page.$eval('#opt-sink-tokens', (c) => c.value)) === '1', 'a reload lost the sink tokens');
  await assertStep(page, trace, 'masked');
});

test('alibi and mask cells explain themselves', async ({ page }) => {
  const { problem } = await nodeTrace(page);
  await page.click('article[data-key="alibi:0"] td[data-r="3"][data-c="1"]');
  let body = await page.$eval('#drill-body', (e) => e.textContent);
  const alibi = engine.explain(problem, { step: 'alibi', head: 0, row: 3, col: 1 });
  assert(/slope/i.test(body), `the alibi drill-down does not name the slope: ${body.slice(0, 300)}`);
  assert(
    body.includes(String(alibi.value.toFixed(8))) || body.includes(alibi.value.toFixed(8).replace('-', '−')),
    `the alibi drill-down lacks ${alibi.value}: ${body.slice(0, 300)}`,
  );
  await page.click('article[data-key="mask:0"] td[data-r="3"][data-c="1"]');
  body = await page.$eval('#drill-body', (e) => e.textContent);
  assert(/window/i.test(body), `the mask drill-down of a key outside the window does not say so: ${body.slice(0, 300)}`);
  await page.click('article[data-key="mask:0"] td[data-r="3"][data-c="0"]');
  body = await page.$eval('#drill-body', (e) => e.textContent);
  assert(/sink/i.test(body), `the mask drill-down of a sink key does not say it is kept by the sink: ${body.slice(0, 300)}`);
});

test('mask fill: a finite fill, and the masked note counts hidden entries by their facts', async ({ page }) => {
  await setNumber(page, '#opt-mask-fill', -100);
  const { trace } = await nodeTrace(page);
  const masked = await assertStep(page, trace, 'masked');
  assert(Number.isFinite(masked.data[3][1]) && masked.data[3][1] < -50, `fill -100: masked[4, 2] is ${masked.data[3][1]}`);
  const note = await page.$eval('#step-list article[data-key="masked:0"] .facts', (a) => a.textContent);
  const hiddenBy = trace.facts[0].hidden_by;
  const count = hiddenBy.flat().filter((bits) => (bits & ~8) !== 0).length; // 8: kept by a sink
  assert(count === 7, `engine: window [1, 0] with a sink over 4 queries hides ${count} entries, expected 7`);
  assert(note.startsWith(`${count} entries are hidden with the finite fill`), `the masked note with fill -100 says: ${note.slice(0, 300)}`);
  await page.fill('#opt-mask-fill', '');
  await page.press('#opt-mask-fill', 'Tab');
});

test('sink logit and fully masked: weights of a sink explain the sink share', async ({ page }) => {
  await reset(page);
  await page.check('#opt-causal');
  await page.fill('#opt-sink-logit', '1.5');
  await page.press('#opt-sink-logit', 'Tab');
  let { problem, trace } = await nodeTrace(page);
  const w = await assertStep(page, trace, 'weights');
  assert(w.data[0][0] < 1, 'with a sink logit the first query keeps all its weight');
  // Rows sum to less than 1 now: the card and the glance say so, not "sums to 1".
  const facts = await page.$eval('article[data-key="weights:0"] .facts-box', (e) => e.textContent);
  assert(/each row sums to less than 1 \(the sink logit takes the rest\)/.test(facts), `weights card: ${facts}`);
  const glance = await page.$eval('#glance figcaption', (e) => e.textContent);
  assert(/weights sum to less than 1: the sink logit takes the rest/.test(glance), `glance: ${glance}`);
  await page.click('article[data-key="weights:0"] td[data-r="0"][data-c="0"]');
  const body = await page.$eval('#drill-body', (e) => e.textContent);
  const e = engine.explain(problem, { step: 'weights', head: 0, row: 0, col: 0 });
  assert(e.has_sink, 'engine.explain: the weight has no sink');
  assert(/sink/i.test(body), `the weight drill-down does not mention the sink: ${body.slice(0, 300)}`);
  const formula = await page.$eval('#drill-body .katex-mathml annotation', (a) => a.textContent);
  assert(formula.includes('+ e^{s - m}'), `the softmax formula leaves the sink out of the denominator: ${formula}`);
  assert(body.includes(w.data[0][0].toFixed(8)), `the weight drill-down lacks ${w.data[0][0].toFixed(8)}`);

  await setNumber(page, '#opt-window-left', 0);
  await setNumber(page, '#opt-window-right', 0);
  await page.fill('#opt-sink-logit', '');
  await page.press('#opt-sink-logit', 'Tab');
  await page.selectOption('#opt-fully-masked', 'nan');
  ({ trace } = await nodeTrace(page));
  assert(trace.steps.find((s) => s.id === 'weights').data[0][0] === 1, 'a window of 0 both ways should leave each query its own key');
  await assertStep(page, trace, 'weights');
  await page.fill('#opt-sink-logit', 'x');
  await page.press('#opt-sink-logit', 'Tab');
  await page.waitForFunction(() => !document.getElementById('options-error').hidden);
  assert(/sink/i.test(await optionsError(page)), `a sink logit "x" shows: ${await optionsError(page)}`);
  await page.fill('#opt-sink-logit', '');
  await page.press('#opt-sink-logit', 'Tab');
  await page.waitForFunction(() => document.getElementById('options-error').hidden);
});

test('KV cache: past_K and past_V give K_cache and V_cache, cached keys are labelled past', async ({ page }) => {
  await reset(page);
  await page.check('#opt-cache');
  await page.waitForSelector('.editor[data-input="past_K"]');
  const { trace } = await nodeTrace(page);
  const kc = await assertStep(page, trace, 'K_cache');
  await assertStep(page, trace, 'V_cache');
  const scores = await assertStep(page, trace, 'scores');
  const cached = kc.data.length - trace.steps.find((s) => s.id === 'K' && s.head === 0).data.length;
  assert(
    cached > 0 && scores.data[0].length === kc.data.length,
    `engine: ${cached} cached keys, scores have ${scores.data[0].length} columns`,
  );
  const heads = await page.$$eval('article[data-key="scores:0"] thead th[data-token]', (t) => t.map((e) => e.textContent.trim()));
  assert(heads.length === kc.data.length, `the scores table has ${heads.length} key labels for ${kc.data.length} keys`);
  for (let i = 0; i < cached; i++) assert(/past/i.test(heads[i]), `cached key ${i + 1} is labelled "${heads[i]}"`);
  assert(!/past/i.test(heads[cached]), `the first new key is labelled "${heads[cached]}"`);
  await page.reload();
  await page.waitForSelector('body[data-ready="true"]');
  assert(await page.$eval('#opt-cache', (c) => c.checked), 'a reload lost the KV cache');
  await assertStep(page, trace, 'K_cache');
  await page.uncheck('#opt-cache');
  await page.waitForSelector('#step-list article[data-step="K_cache"]', { state: 'detached' });
});
