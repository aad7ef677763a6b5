// Browser tests of embedding, sharing, exporting and exercises (Chromium through playwright-core,
// on node:test), against the static site built from web/page + dist/, each test in a fresh
// browser context:
//   node --test tests/browser/embed.test.mjs   (node --test-name-pattern=NAME ... for some)
// - <attention-explorer> on a plain page: numbers, JSON child, editing + change event, one wasm
//   download for all elements, Shadow DOM keeps styles apart;
// - the iframe embed with hidden and locked inputs;
// - links: v2 round trip, an old v1 link, an unedited preset by name, over-long and damaged links;
// - the site under a strict Content-Security-Policy (no violations, page and component work);
// - every export (LaTeX through KaTeX, CSV/JSON round trip, the NumPy script run by python3,
//   the PyTorch script compiled, SVG, PNG, a worked cell);
// - an exercise answered wrong then right, a seeded new problem, a teacher's link without answers.
// Screenshots go to test-artifacts/embed-*.png.
import { spawnSync, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { artifacts, assert, axeFindings, browserSuite, isSerious, startServer } from './server.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The policy the CSP test serves (docs/embedding.md quotes it). */
export const CSP = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self' 'unsafe-inline'; img-src 'self' data:";

const pkg = await import(join(root, 'dist', 'node.js'));
const engine = await pkg.loadAttention();
const katex = createRequire(join(root, 'package.json'))('katex');
const PYTHON = '/usr/bin/python3';
const hasNumpy = existsSync(PYTHON) && spawnSync(PYTHON, ['-c', 'import numpy']).status === 0;

// ---- checks ----------------------------------------------------------------------------------
const test = browserSuite('embed', {
  strictHeaders: { 'Content-Security-Policy': CSP },
  contextPerTest: true,
  contextOptions: { viewport: { width: 1280, height: 900 }, acceptDownloads: true },
  timeout: 15000,
  screenshots: 'embed-',
});
function close(a, b, tol = 1e-9) {
  return Math.abs(a - b) <= tol * (1 + Math.abs(b));
}
function assertMatrix(actual, expected, what, tol = 1e-9) {
  assert(actual.length === expected.length, `${what}: ${actual.length} rows, expected ${expected.length}`);
  actual.forEach((row, i) => {
    assert(row.length === expected[i].length, `${what} row ${i + 1}: ${row.length} values, expected ${expected[i].length}`);
    row.forEach((v, j) => {
      const e = expected[i][j];
      assert(Number.isFinite(e) ? close(v, e, tol) : v === e, `${what}[${i}][${j}] = ${v}, expected ${e}`);
    });
  });
}
const shown = (t) =>
  Number(
    String(t)
      .trim()
      .replace(/\u2212/g, '-')
      .replace('∞', 'Infinity'),
  );

async function shot(page, name) {
  await page.screenshot({ path: join(artifacts, `embed-${name}.png`), fullPage: true });
}

async function ready(page, { timeout } = {}) {
  await page.waitForSelector('body[data-ready="true"]', { timeout });
  await page.waitForSelector('#share', { state: 'attached' });
}

/** Numbers of a step table on the explorer page. */
function readStep(page, key) {
  return page.$$eval(`#step-list article[data-key="${key}"] table.matrix tbody tr`, (rows) =>
    rows.map((r) => [...r.querySelectorAll('td')].map((td) => td.textContent)),
  );
}

/** axe-core's WCAG 2 A/AA rules (colour contrast included, Shadow DOM too): no serious findings. */
async function axe(page, what, include) {
  const serious = (await axeFindings(page, { include })).filter(isSerious);
  assert(
    serious.length === 0,
    `axe (${what}): ${serious.map((v) => `${v.id} ${v.targets.length}× e.g. ${v.targets[0]}: ${v.help}`).join('; ')}`,
  );
}

async function download(page, click) {
  const [dl] = await Promise.all([page.waitForEvent('download'), click()]);
  return { name: dl.suggestedFilename(), bytes: readFileSync(await dl.path()) };
}

async function exportFile(page, what, format) {
  await page.selectOption('#export-what', what);
  return download(page, () => page.click(`button[data-export="${format}"]`));
}

/** The state object of the page's current link (decoded by the package's own share.js). */
function linkState(page) {
  return page.evaluate(async () => {
    const { decodeStateString } = await import('./lib/share.js');
    return decodeStateString(location.hash);
  });
}

/** Waits (up to 5 s) until the page's link state satisfies `ok`; returns that state. */
async function settledLink(page, ok) {
  let last;
  for (const t0 = Date.now(); Date.now() - t0 < 5000;) {
    last = await linkState(page);
    if (last.state && ok(last.state)) return last.state;
    await page.waitForTimeout(100);
  }
  throw new Error(`the link did not settle: ${JSON.stringify(last).slice(0, 300)}`);
}

function preset(id) {
  return pkg.presetProblem(pkg.findPreset(id), engine).problem;
}

// ---- the web component -------------------------------------------------------------------------

test('component on a plain page: preset, JSON child, state attribute, one wasm download, Shadow DOM', async ({ page, base, requests }) => {
  requests.length = 0;
  await page.goto(`${base}embedding.html`);
  await page.waitForSelector('body[data-ready="true"]');
  await page.waitForFunction(() =>
    ['ex-preset', 'ex-json', 'ex-state'].every((id) => document.getElementById(id).shadowRoot.querySelector('.steps')),
  );
  const weights = await page.$eval('#ex-preset', (el) =>
    [...el.shadowRoot.querySelectorAll('table[data-step="weights"] tbody tr')].map((r) =>
      [...r.querySelectorAll('td')].map((td) => td.textContent),
    ),
  );
  const want = engine.run(preset('000')).steps.find((s) => s.id === 'weights').data;
  assertMatrix(
    weights.map((r) => r.map(shown)),
    want,
    'component weights (3 decimals)',
    6e-4 / 0.08,
  );
  assert(weights[0].join(' ') === '0.084 0.255 0.515 0.145', `seed 000 weights row 1 shows ${weights[0].join(' ')}`);
  const stepsShown = await page.$eval('#ex-preset', (el) => [...el.shadowRoot.querySelectorAll('section.step')].map((s) => s.dataset.step));
  assert(stepsShown.join() === 'scaled,weights,output', `steps="scaled,weights,output" shows ${stepsShown}`);
  // One wasm download for three elements and the iframe's own page (a separate document).
  const wasm = requests.filter((u) => u.endsWith('attention.wasm') && !u.includes('index.html'));
  assert(wasm.length <= 2, `attention.wasm fetched ${wasm.length} times (elements share one instance; the iframe page is its own)`);
  const shared = await page.evaluate(async () => {
    const { sharedEngine } = await import('./lib/component.js');
    return (await sharedEngine()) === (await sharedEngine());
  });
  assert(shared, 'sharedEngine() does not return one engine');
  // Styles do not leak in: a page rule on td does not reach the element's cells; nor out.
  await page.addStyleTag({ content: 'td { background: rgb(255, 0, 0) !important; font-size: 40px !important }' });
  const inside = await page.$eval(
    '#ex-preset',
    (el) => getComputedStyle(el.shadowRoot.querySelector('table[data-step="weights"] td')).fontSize,
  );
  assert(inside !== '40px', 'a page style reached into the component');
  const outside = await page.$eval('h1', (h) => getComputedStyle(h).borderTopWidth);
  assert(outside === '0px', 'the component style leaked out');
  assert(
    await page.$eval('#ex-preset', (el) => Boolean(el.shadowRoot.querySelector('.formula math'))),
    'KaTeX given: formulas are not MathML',
  );
  // The state attribute: causal, so the upper triangle of the weights is 0.
  const stateWeights = await page.$eval('#ex-state', (el) =>
    [...el.shadowRoot.querySelectorAll('table[data-step="weights"] tbody tr')].map((r) =>
      [...r.querySelectorAll('td')].map((td) => td.textContent),
    ),
  );
  assert(stateWeights[0][1] === '0' && stateWeights[0][0] === '1.0000', `state="v2=…" causal weights row 1: ${stateWeights[0]}`);
  await axe(page, 'embedding page with three components', [['main > section:not(:last-child)']]);
  await shot(page, '01-component-page');
});

test('component on a bare page: three elements, one wasm download, text formulas, styles kept apart', async ({
  page,
  base,
  requests,
  siteDir,
}) => {
  writeFileSync(
    join(siteDir, 'plain-test.html'),
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>plain</title>
    <link rel="icon" href="data:,"><style>td { background: rgb(255, 0, 0); font-size: 40px } .step { display: none }</style>
    <script type="module" src="lib/component.js"></script></head><body>
    <h3 id="outside">outside</h3>
    <attention-explorer id="a" preset="seed-000" steps="weights" inputs=""></attention-explorer>
    <attention-explorer id="b" preset="003" steps="weights,output" decimals="6" inputs=""></attention-explorer>
    <attention-explorer id="c" preset="multihead" steps="concat" heads="2"></attention-explorer>
    <table><tr><td id="page-td">page</td></tr></table></body></html>`,
  );
  requests.length = 0;
  await page.goto(`${base}plain-test.html`);
  await page.waitForFunction(() => ['a', 'b', 'c'].every((id) => document.getElementById(id).shadowRoot.querySelector('.steps section')));
  const wasm = requests.filter((u) => u.endsWith('/attention.wasm'));
  assert(wasm.length === 1, `attention.wasm fetched ${wasm.length} times for three elements`);
  const formula = await page.$eval('#a', (el) => el.shadowRoot.querySelector('.formula').textContent);
  assert(formula === 'A = softmax(S̃) (along each row)', `text formula: ${formula}`);
  const b = await page.$eval('#b', (el) =>
    [...el.shadowRoot.querySelectorAll('table[data-step="output"] tbody tr')].map((r) =>
      [...r.querySelectorAll('td')].map((td) => td.textContent),
    ),
  );
  const out003 = engine.run(preset('003')).output;
  assert(b[0].join(' ') === out003[0].map((v) => v.toFixed(6)).join(' '), `seed 003 output row 1 (float32): ${b[0]}`);
  assertMatrix(
    b.map((r) => r.map(shown)),
    out003,
    'seed 003 output',
    1e-6,
  );
  const c = await page.$eval('#c', (el) =>
    [...el.shadowRoot.querySelectorAll('section.step')].map((s) => s.dataset.step + ':' + s.dataset.head),
  );
  assert(c.join() === 'concat:', `steps="concat": ${c}`);
  const inputs = await page.$eval('#c', (el) => [...el.shadowRoot.querySelectorAll('.inputs h3')].map((h) => h.firstChild.textContent));
  assert(inputs.join() === 'X,W_Q,W_K,W_V,W_O', `inputs shown by default: ${inputs}`);
  const styles = await page.evaluate(() => ({
    inside: getComputedStyle(document.getElementById('a').shadowRoot.querySelector('td')).fontSize,
    shownStep: getComputedStyle(document.getElementById('a').shadowRoot.querySelector('.step')).display,
    pageTd: getComputedStyle(document.getElementById('page-td')).fontSize,
    outsideH3: getComputedStyle(document.getElementById('outside')).fontSize,
  }));
  assert(styles.inside !== '40px' && styles.shownStep !== 'none', `page styles reached into the element: ${JSON.stringify(styles)}`);
  assert(styles.pageTd === '40px' && styles.outsideH3 !== '14px', `element styles leaked out: ${JSON.stringify(styles)}`);
  // The problem property and attribute changes: recomputed and redrawn.
  const after = await page.evaluate(async () => {
    const el = document.getElementById('a');
    const ready = new Promise((r) => el.addEventListener('change', r, { once: true }));
    el.problem = {
      Q: [[1, 0]],
      K: [
        [1, 0],
        [0, 1],
      ],
      V: [
        [2, 0],
        [0, 2],
      ],
      options: { scale: 'none' },
    };
    el.setAttribute('steps', 'weights,output');
    await Promise.race([ready, new Promise((r) => setTimeout(r, 100))]);
    return [...el.shadowRoot.querySelectorAll('section.step')].map(
      (s) => `${s.dataset.step}:${[...s.querySelectorAll('td')].map((t) => t.textContent).join(' ')}`,
    );
  });
  const e = Math.E / (Math.E + 1);
  assert(
    after.join(' | ') === `weights:${e.toFixed(4)} ${(1 - e).toFixed(4)} | output:${(2 * e).toFixed(4)} ${(2 - 2 * e).toFixed(4)}`,
    `after setting problem: ${after}`,
  );
  // RoPE's angle table: rows are the positions, columns the rotated pairs i of θ_i.
  const angleLabels = await page.evaluate(async () => {
    const el = document.getElementById('a');
    const ready = new Promise((r) => el.addEventListener('change', r, { once: true }));
    el.problem = {
      Q: [[1, 0]],
      K: [
        [1, 0],
        [0, 1],
      ],
      V: [
        [2, 0],
        [0, 2],
      ],
      options: { rope: true, positions: { queries: [4], keys: [1, 4] } },
    };
    el.setAttribute('steps', 'rope_angles');
    await Promise.race([ready, new Promise((r) => setTimeout(r, 100))]);
    return [...el.shadowRoot.querySelectorAll('section.step[data-step="rope_angles"] th')]
      .map((t) => t.textContent)
      .filter(Boolean)
      .join(', ');
  });
  assert(angleLabels === 'i = 0, p = 1, p = 4', `the component's rope_angles labels: ${angleLabels}`);
  await shot(page, '00-component-bare-page');
});

test('component: editing Q recomputes and fires change with the new problem', async ({ page, base }) => {
  await page.goto(`${base}embedding.html`);
  await page.waitForFunction(() => document.getElementById('ex-json').shadowRoot.querySelector('input[data-input="Q"]'));
  const readonly = await page.$eval('#ex-json', (el) => el.shadowRoot.querySelectorAll('input[data-input="K"]').length);
  assert(readonly === 0, 'K is editable although editable="Q"');
  const q = page.locator('#ex-json').locator('input[data-input="Q"][data-r="0"][data-c="0"]');
  await q.fill('2');
  await q.press('Enter');
  await page.waitForFunction(() => document.getElementById('ex-json-log').textContent.startsWith('change'));
  const log = await page.$eval('#ex-json-log', (e) => e.textContent);
  assert(log.includes('Q = [[2,0],[0,1]]'), `change event problem: ${log}`);
  const trace = engine.run({
    Q: [
      [2, 0],
      [0, 1],
    ],
    K: [
      [1, 0],
      [0, 1],
    ],
    V: [
      [1, 2],
      [3, 4],
    ],
  });
  const out = trace.output.map((r) => r.map((v) => v.toFixed(3)).join(' ')).join(' | ');
  assert(log.endsWith(`output = ${out}`), `the change event's output ${log} is not the engine's ${out}`);
  const cell = await page.$eval('#ex-json', (el) => el.shadowRoot.querySelector('table[data-step="weights"] tbody td').textContent);
  assert(close(shown(cell), trace.steps.find((s) => s.id === 'weights').data[0][0], 1e-4), `weights[1][1] shows ${cell}`);
  // A bad number: a message, the last good steps stay.
  await q.fill('abc');
  await q.press('Enter');
  const msg = await page.$eval('#ex-json', (el) => el.shadowRoot.querySelector('.error')?.textContent ?? '');
  assert(/Q row 1, column 1: "abc" is not a number/.test(msg), `bad input message: ${msg}`);
  assert(
    await page.$eval('#ex-json', (el) => el.shadowRoot.querySelectorAll('section.step').length === 2),
    'steps vanished after bad input',
  );
});

// ---- iframe embedding ----------------------------------------------------------------------------

test('iframe embed: no chrome, hidden inputs and steps, locked inputs, open-in-explorer link', async ({ page, base }) => {
  await page.goto(`${base}embedding.html`);
  const hash = await page.evaluate(async () => (await import('./lib/share.js')).encodeStateString({ preset: 'multihead' }));
  await page.goto(`${base}index.html?embed=1&hide=W_Q,W_K,scores,why&lock=inputs#${hash}`);
  await ready(page);
  assert(await page.$eval('.site-header', (h) => getComputedStyle(h).display === 'none'), 'the site header shows in embed mode');
  const hiddenEditors = await page.$$eval('#editors .editor', (eds) => eds.filter((e) => e.hidden).map((e) => e.dataset.input));
  assert(hiddenEditors.join() === 'W_Q,W_K', `hidden editors: ${hiddenEditors}`);
  const cards = await page.$$eval('#step-list article', (a) => a.map((e) => e.dataset.step));
  assert(!cards.includes('scores') && cards.includes('weights') && cards.includes('concat'), `steps shown: ${cards}`);
  assert(await page.$eval('#why', (e) => e.hidden), 'the why view shows although hide=why');
  assert(await page.$eval('#inputs', (e) => e.inert), 'inputs are not locked (inert)');
  // Locked inputs show their numbers only: no Grid/Text tabs, sizes, Random… or W_O box that would do nothing.
  const controls = await page.$$eval(
    '#inputs .tabs, #inputs .dims, #inputs .optional-inputs',
    (els) => els.filter((e) => e.getClientRects().length).length,
  );
  assert(controls === 0, `locked inputs still show ${controls} editing controls`);
  assert(
    (await page.$$eval('#editors .editor:not([hidden]) td, #editors .editor:not([hidden]) input.cell', (c) => c.length)) > 0,
    'locked inputs show no numbers',
  );
  // The status line counts the steps shown, not the hidden ones (2 heads: scores hidden in each).
  const shownCards = cards.length;
  assert(engine.run(preset('multihead')).steps.length - shownCards === 2, `scores not hidden in both heads: ${shownCards} cards`);
  const status = await page.$eval('#status', (e) => e.textContent);
  assert(status.startsWith(`${shownCards} steps for `), `status: ${status}`);
  assert(!(await page.$eval('#setup', (e) => e.inert)), 'options are locked although only inputs were');
  assert(await page.$eval('#share', (e) => e.hidden), 'the share panel shows in embed mode');
  const href = await page.$eval('#open-full', (a) => a.href);
  assert(/index\.html#v2=/.test(href) && !href.includes('embed=1'), `open-in-explorer link: ${href}`);
  const full = await page.evaluate(async (h) => (await import('./lib/share.js')).decodeStateString(h), href.split('#')[1]);
  assert(
    full.state.preset === 'multihead' && full.state.hide === undefined,
    `the full explorer link keeps the embed's hiding: ${JSON.stringify(full.state)}`,
  );
  // The multi-head preset's numbers are the engine's.
  const want = engine.run(preset('multihead')).output;
  assertMatrix(
    (await readStep(page, 'output:-1')).map((r) => r.map(shown)),
    want,
    'embedded output',
    1e-3,
  );
  await shot(page, '02-iframe-embed-mode');
  // The same inside a real iframe on the examples page.
  await page.goto(`${base}embedding.html`);
  const frame = page.frameLocator('#ex-iframe');
  await frame.locator('body[data-ready="true"]').waitFor();
  const framed = await frame.locator('#step-list article').evaluateAll((a) => a.map((e) => e.dataset.step));
  assert(!framed.includes('scores') && !framed.includes('scaled') && framed.includes('masked'), `iframe steps: ${framed}`);
  assert(await frame.locator('#inputs').evaluate((e) => e.inert), 'the iframe inputs are not locked');
});

test("?hide=step:rope_angles and step:gate hide those steps: every step id of the core's catalogue is a word of ?hide", async ({
  page,
  base,
}) => {
  await page.goto(`${base}embedding.html`);
  const hash = await page.evaluate(async () => {
    const share = await import('./lib/share.js');
    const I = [
      [1, 0, 1, 0],
      [0, 1, 0, 1],
      [1, 1, 0, 0],
    ];
    return share.encodeStateString(share.problemToState({ Q: I, K: I, V: I, options: { rope: true } }));
  });
  await page.goto(`${base}index.html?hide=step:rope_angles,step:gate#${hash}`);
  await ready(page);
  const cards = await page.$$eval('#step-list article', (a) => a.map((e) => e.dataset.step));
  assert(!cards.includes('rope_angles') && cards.includes('Q_rot') && cards.includes('weights'), `steps shown: ${cards}`);
  const refused = await page.$eval('#flag-error', (e) => e.textContent).catch(() => '');
  assert(refused === '', `a catalogue step refused as a ?hide word: ${refused}`);
  // Without the flag, the same link shows the angles.
  await page.goto(`${base}index.html#${hash}`);
  await ready(page);
  assert((await page.locator('#step-list article[data-step="rope_angles"]').count()) === 1, 'the RoPE problem has no rope_angles card');
});

test('copy embed code: an iframe snippet with the flags and the state', async ({ page, base }) => {
  await page.goto(`${base}index.html`);
  await ready(page);
  await page.selectOption('#preset', '004');
  await page.click('#share summary');
  for (const box of [
    '#embed-hide input[value="input:W_Q"]',
    '#embed-hide input[value="step:scores"]',
    '#embed-lock input[value="options"]',
    '#embed-lock input[value="X"]',
  ])
    await page.check(box);
  await page.click('#copy-embed');
  // The click's handler writes the snippet once the state is compressed (asynchronously).
  await page.waitForFunction(() => (document.querySelector('#export-preview')?.value ?? '') !== '');
  const code = await page.$eval('#export-preview', (t) => t.value);
  // Only the attributes Canvas keeps: the whole problem is in src.
  const m =
    /^<iframe src="([^"]+)" width="100%" height="720" name="attention-explorer" frameborder="0" scrolling="auto" allowfullscreen><\/iframe>$/.exec(
      code,
    );
  assert(m, `embed code: ${code}`);
  // The builder writes its own snippet after each change of a box, also asynchronously.
  await page
    .waitForFunction((c) => document.querySelector('#embed-snippet').value === c, code, { timeout: 5000 })
    .catch(async () => {
      throw new Error(`the builder shows another snippet than the one copied: ${await page.$eval('#embed-snippet', (t) => t.value)}`);
    });
  const src = m[1].replace(/&amp;/g, '&');
  assert(/\?embed=1&hide=input:W_Q,step:scores&lock=options,X#v2=/.test(src), `embed src: ${src}`);
  await page.goto(src);
  await ready(page);
  assert(await page.$eval('#setup', (e) => e.inert), 'options not locked from the embed code');
  assert(await page.$eval('.editor[data-input="W_Q"]', (e) => e.hidden), 'W_Q not hidden from the embed code');
  assert(await page.$eval('.editor[data-input="X"]', (e) => e.inert), 'X not locked from the embed code');
  assert(!(await page.$eval('.editor[data-input="W_K"]', (e) => e.inert)), 'W_K locked although only X was');
  assertMatrix(
    (await readStep(page, 'output:-1')).map((r) => r.map(shown)),
    engine.run(preset('004')).output,
    'seed 004 output',
    1e-4,
  );
});

// ---- links ---------------------------------------------------------------------------------------

test('shared link: v2 round trip of an edited problem, an old v1 link, a preset by name, bad links', async ({ page, base, context }) => {
  await page.goto(`${base}index.html`);
  await ready(page);
  await page.selectOption('#preset', '004');
  await page.check('#opt-causal');
  await page.fill('#tokens-q', 'alpha beta');
  await page.click('article[data-key="weights:0"] td[data-r="1"][data-c="0"]');
  await page.waitForTimeout(500);
  const before = await readStep(page, 'output:-1');
  await page.$eval('#export-preview', (t) => {
    t.value = '';
  });
  await page.click('#copy-link');
  await page.waitForFunction(() => /#v\d+=/.test(document.querySelector('#export-preview')?.value ?? ''));
  const link = await page.$eval('#export-preview', (t) => t.value);
  assert(/#v2=[A-Za-z0-9_-]+$/.test(link), `copied link: ${link}`);
  await page
    .waitForFunction((h) => location.hash === h, link.slice(link.indexOf('#')), { timeout: 5000 })
    .catch(() => {
      throw new Error(`the address bar (${page.url().slice(0, 80)}…) never showed the copied link`);
    });
  const other = await context.newPage();
  await other.goto(link);
  await ready(other);
  const after = await readStep(other, 'output:-1');
  assert(JSON.stringify(after) === JSON.stringify(before), `output after opening the link: ${after} vs ${before}`);
  assert(await other.isChecked('#opt-causal'), 'causal not restored');
  assert((await other.$eval('#drill-body', (e) => e.textContent)).includes('beta'), 'the open cell was not restored');
  await other.close();
  // An unedited preset travels by name: a short link.
  await page.selectOption('#preset', '002');
  const state = await settledLink(page, (s) => s.preset === '002');
  assert(state.preset === '002' && state.inputs === undefined, `unedited preset link holds ${JSON.stringify(state).slice(0, 200)}`);
  assert(page.url().split('#')[1].length < 80, `preset link is ${page.url().split('#')[1].length} characters`);
  // A v1 link (made by the first version of the page) still opens.
  const v1 = {
    preset: null,
    edited: true,
    mode: 'qkv',
    inputs: { Q: { text: '1 0\n0 1' }, K: { text: '1 2\n3 4' }, V: { text: '1 1\n0 2' } },
    options: { scale: 'none' },
  };
  const v1hash = `v1=${Buffer.from(JSON.stringify(v1)).toString('base64url')}`;
  await page.goto(`${base}index.html#${v1hash}`);
  await ready(page);
  const v1trace = engine.run({
    Q: [
      [1, 0],
      [0, 1],
    ],
    K: [
      [1, 2],
      [3, 4],
    ],
    V: [
      [1, 1],
      [0, 2],
    ],
    options: { scale: 'none' },
  });
  assertMatrix(
    (await readStep(page, 'output:-1')).map((r) => r.map(shown)),
    v1trace.output,
    'v1 link output',
    1e-4,
  );
  // Over-long and damaged links: a clear message and a working page (the default example).
  for (const [hash, re] of [
    [`v2=${'A'.repeat(1_000_100)}`, /too long/],
    ['v2=AAAA$$$', /damaged/],
    ['v9=abc', /newer version/],
  ]) {
    await page.goto('about:blank');
    // A 1 MB address takes Chromium itself seconds to take in on a loaded machine (a profile shows
    // the page's own scripts under 2 s of a 12 s load; the rest is the browser and the test
    // driver passing the address around): wait for the commit, then longer than usual for the page.
    await page.goto(`${base}index.html#${hash}`, { waitUntil: 'commit', timeout: 60_000 });
    await ready(page, { timeout: 60_000 });
    const status = await page.$eval('#status', (e) => e.textContent);
    assert(re.test(status), `link #${hash.slice(0, 12)}…: status "${status}"`);
    const banner = await page.$eval('#link-error', (e) => e.textContent);
    assert(re.test(banner), `link #${hash.slice(0, 12)}…: banner "${banner}"`);
    // The first example (the dictionary lookup): sweet? puts 0.7952 on banana.
    const w = await readStep(page, 'weights:0');
    assert(w.length === 3 && w[0][0] === '0.7952', `the page does not work after a bad link: ${w[0]}`);
  }
  await shot(page, '03-bad-link-message');
});

// ---- exports -------------------------------------------------------------------------------------

test('exports: LaTeX, CSV, JSON, NumPy, PyTorch, SVG, PNG, a worked cell — whole and per step', async ({ page, base }) => {
  await page.goto(`${base}index.html`);
  await ready(page);
  await page.selectOption('#preset', '000-causal');
  await page.waitForTimeout(300);
  const problem = preset('000-causal');
  const trace = engine.run(problem);
  const work = mkdtempSync(join(tmpdir(), 'attn-embed-'));
  try {
    // LaTeX: a standalone document whose math all renders in KaTeX.
    const tex = await exportFile(page, 'all', 'latex');
    const doc = tex.bytes.toString('utf8');
    assert(tex.name === 'attention-solution.tex' && doc.startsWith('\\documentclass{article}'), `LaTeX export ${tex.name}`);
    const blocks = [...doc.matchAll(/\\\[([\s\S]*?)\\\]/g)].map((m) => m[1]);
    assert(blocks.length >= 2 * trace.steps.length, `${blocks.length} math blocks`);
    for (const b of blocks) katex.renderToString(b, { throwOnError: true, displayMode: true });
    const stepTex = (await exportFile(page, 'weights:0', 'latex')).bytes.toString('utf8');
    assert(
      stepTex.includes('A = \\begin{bmatrix}\n0.0000') || stepTex.includes('A = \\begin{bmatrix}\n1.0000'),
      `weights LaTeX: ${stepTex.slice(0, 120)}`,
    );
    for (const b of [...stepTex.matchAll(/\\\[([\s\S]*?)\\\]/g)].map((m) => m[1])) katex.renderToString(b, { throwOnError: true });
    // CSV: the long table round-trips the trace exactly; a step CSV has labels.
    const csv = (await exportFile(page, 'all', 'csv')).bytes.toString('utf8');
    const back = pkg.parseCsv(csv);
    back.steps.forEach((s, k) => assertMatrix(s.data, trace.steps[k].data, `CSV ${s.id}`, 0));
    const masked = (await exportFile(page, 'masked:0', 'csv')).bytes.toString('utf8').trim().split('\n');
    assert(masked[0] === ',w1,w2,w3,w4' && masked[1].endsWith(',-inf,-inf,-inf'), `masked CSV: ${masked.slice(0, 2)}`);
    // JSON: the trace.
    const json = JSON.parse((await exportFile(page, 'all', 'json')).bytes.toString('utf8'), (k, v) => (v === '-inf' ? -Infinity : v));
    json.steps.forEach((s, k) => assertMatrix(s.data, trace.steps[k].data, `JSON ${s.id}`, 0));
    assertMatrix(json.output, trace.output, 'JSON output', 0);
    // NumPy: run it; it prints every step as JSON, equal to the trace.
    const py = await exportFile(page, 'all', 'numpy');
    assert(py.name === 'attention_numpy.py', py.name);
    if (hasNumpy) {
      writeFileSync(join(work, 'a.py'), py.bytes);
      const steps = JSON.parse(execFileSync(PYTHON, [join(work, 'a.py'), '--json'], { encoding: 'utf8' }));
      steps.forEach((s, k) =>
        assertMatrix(
          s.data.map((r) => r.map((v) => (v === '-inf' ? -Infinity : v))),
          trace.steps[k].data,
          `numpy ${s.id}`,
          1e-12,
        ),
      );
    }
    const torch = (await exportFile(page, 'all', 'pytorch')).bytes.toString('utf8');
    assert(/F\.scaled_dot_product_attention\(q, k, v, is_causal=True/.test(torch), 'PyTorch script does not check SDPA');
    if (hasNumpy) {
      writeFileSync(join(work, 't.py'), torch);
      execFileSync(PYTHON, ['-m', 'py_compile', join(work, 't.py')]);
    }
    // SVG and PNG heatmaps.
    const svg = (await exportFile(page, 'weights:0', 'svg')).bytes.toString('utf8');
    assert(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"'), 'SVG export');
    assert([...svg.matchAll(/<rect x=/g)].length === 16, 'weights SVG has not 16 cells');
    const all = (await exportFile(page, 'all', 'svg')).bytes.toString('utf8');
    assert([...all.matchAll(/<svg /g)].length === trace.steps.length + 1, 'the whole-trace SVG has not one heatmap per step');
    const png = await exportFile(page, 'weights:0', 'png');
    assert(png.name === 'weights.png' && png.bytes.subarray(1, 4).toString() === 'PNG', `PNG export ${png.name}`);
    const width = png.bytes.readUInt32BE(16),
      height = png.bytes.readUInt32BE(20);
    assert(width > 100 && height > 100, `PNG is ${width}x${height}`);
    writeFileSync(join(artifacts, 'embed-export-weights.png'), png.bytes);
    writeFileSync(join(artifacts, 'embed-export-steps.svg'), all);
    // A worked cell: click a weight, export its aligned calculation.
    await page.click('article[data-key="weights:0"] td[data-r="1"][data-c="0"]');
    const cell = (await exportFile(page, 'all', 'cell')).bytes.toString('utf8');
    const e = engine.explain(problem, { step: 'weights', row: 1, col: 0 });
    // The softmax of a causal problem reads the masked scores (the weights step's input).
    assert(cell.includes('A_{2,1} &= \\frac{e^{\\bar S_{2,1} - m}}') && cell.includes(`&= ${e.value.toFixed(4)}`), `cell LaTeX: ${cell}`);
    katex.renderToString(cell.replace(/^\\\[|\\\]\s*$/g, ''), { throwOnError: true, displayMode: true });
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  await page.click('#share summary'); // open the embed options to show the whole panel
  await shot(page, '04-share-export-panel');
});

// ---- exercises ------------------------------------------------------------------------------------

test("exercise: New problem draws every input the problem has, the gate's W_G too", async ({ page, base }) => {
  await page.goto(`${base}index.html`);
  await ready(page);
  await page.selectOption('#preset', 'gated');
  await page.waitForSelector('.editor[data-input="W_G"]');
  await page.click('#exercise-setup summary');
  await page.fill('#ex-seed', '3');
  await page.click('#ex-new');
  await page.waitForFunction(() => document.querySelector('#recipe code')?.textContent.includes('np.random.seed(3)'));
  // The recipe names each input in the order drawn; W_G's numbers are that draw's.
  const recipe = await page.$eval('#recipe code', (c) => c.textContent);
  const draws = [...recipe.matchAll(/^(\w+) = np\.round\(np\.random\.randn\(([\d, ]+)\), 1\)$/gm)].map(([, name, dims]) => ({
    name,
    shape: dims.split(',').map(Number),
  }));
  const names = draws.map((d) => d.name);
  assert(names.join() === 'X,W_Q,W_K,W_V,W_G', `New problem drew ${names}`);
  const drawn = engine.random(
    3,
    draws.map(({ shape }) => ({ kind: 'randn', shape })),
  );
  const want = drawn[names.indexOf('W_G')].map((row) => row.map((x) => Math.round(x * 10) / 10 || 0));
  const text = await page.$eval('.editor[data-input="W_G"] textarea', (t) => t.value);
  assert(text === want.map((r) => r.join(' ')).join('\n'), `W_G from seed 3: ${JSON.stringify(text)} vs ${JSON.stringify(want)}`);
});

test('exercise: seeded new problem, answers wrong then right, the teacher link holds no answers', async ({ page, base, context }) => {
  await page.goto(`${base}index.html`);
  await ready(page);
  await page.selectOption('#preset', '004');
  await page.waitForTimeout(200);
  await page.click('#exercise-setup summary');
  // One decimal (the default): np.round(np.random.randn(2, 2), 1) for each input, from seed 5.
  await page.fill('#ex-seed', '5');
  await page.click('#ex-new');
  await page.waitForTimeout(200);
  const r5 = engine
    .random(
      5,
      [0, 1, 2, 3].map(() => ({ kind: 'randn', shape: [2, 2] })),
    )
    .map((m) => m.map((row) => row.map((x) => Math.round(x * 10) / 10 || 0)));
  const x5 = await page.$eval('.editor[data-input="X"] textarea', (t) => t.value);
  assert(x5 === r5[0].map((r) => r.join(' ')).join('\n'), `X from seed 5, one decimal: ${JSON.stringify(x5)} vs ${JSON.stringify(r5[0])}`);
  assert(
    (await page.$eval('#recipe code', (c) => c.textContent)).includes('X = np.round(np.random.randn(2, 2), 1)'),
    'the recipe does not show np.round',
  );
  await page.selectOption('#ex-kind', 'int');
  await page.fill('#ex-seed', '7');
  await page.click('#ex-new');
  await page.waitForTimeout(200);
  // The seed's numbers are numpy's: np.random.seed(7); randint(-2, 3, size=...) for each input in order.
  const shapes = [
    ['X', [2, 2]],
    ['W_Q', [2, 2]],
    ['W_K', [2, 2]],
    ['W_V', [2, 2]],
  ];
  const drawn = engine.random(
    7,
    shapes.map(([, shape]) => ({ kind: 'randint', shape, low: -2, high: 3 })),
  );
  const problem = { options: { scale: 'sqrt_dk', heads: 1, kv_heads: 1, layout: 'rows', precision: 'float64', causal: false } };
  shapes.forEach(([n], i) => {
    problem[n] = drawn[i];
  });
  const xText = await page.$eval('.editor[data-input="X"] textarea', (t) => t.value);
  assert(
    xText === drawn[0].map((r) => r.join(' ')).join('\n'),
    `X after new problem(7): ${JSON.stringify(xText)} vs ${JSON.stringify(drawn[0])}`,
  );
  const trace = engine.run(problem);
  const weights = trace.steps.find((s) => s.id === 'weights').data;
  await page.check('#ex-steps input[value="weights:0"]');
  await page.fill('#ex-tol', '0.001');
  await page.click('#ex-start');
  await page.waitForSelector('#exercise:not([hidden]) input.answer');
  assert(!(await page.$('#step-list article[data-step="weights"]')), 'the weights step still shows during the exercise');
  assert(await page.$eval('#drill', (e) => getComputedStyle(e).display === 'none'), 'the worked calculation shows during the exercise');
  // Answers: all right except row 2, column 1.
  const fill = async (wrong) => {
    for (let r = 0; r < 2; r++) {
      for (let c = 0; c < 2; c++) {
        const v = r === 1 && c === 0 && wrong ? weights[r][c] + 0.05 : weights[r][c];
        await page.fill(`#exercise input[data-id="weights:0/${r}/${c}"]`, v.toFixed(4));
      }
    }
  };
  await fill(true);
  await page.click('#ex-check');
  const message = await page.$eval('#ex-result', (e) => e.textContent);
  assert(
    /^3 of 4 right\. First to fix: Attention weights, row 2 \(.+\), column 1 \(.+\) — you wrote [\d.]+\. It depends on every entry of query .+'s row in the scaled scores: softmax/.test(
      message,
    ),
    `wrong answer message: ${message}`,
  );
  assert(
    await page.$eval('#exercise input[data-id="weights:0/1/0"]', (i) => i.classList.contains('wrong') && document.activeElement === i),
    'the first wrong entry is not marked and focused',
  );
  await axe(page, 'exercise and share panels', [['#exercise'], ['#share']]);
  await shot(page, '05-exercise-wrong');
  // "Show answers": the step comes back and the grid shows the engine's numbers.
  await page.click('#ex-reveal');
  await page.waitForSelector('#step-list article[data-step="weights"]');
  const revealedCells = await page.$$eval('#exercise td.revealed', (t) => t.map((e) => e.textContent));
  assert(revealedCells.length === 4, `revealed ${revealedCells.length} cells`);
  assertMatrix([revealedCells.map(shown)], [weights.flat()], 'revealed answers', 1e-4);
  await page.click('#ex-reveal');
  await page.waitForSelector('#exercise input.answer');
  assert(!(await page.$('#step-list article[data-step="weights"]')), 'the weights step stays after hiding the answers again');
  // The teacher's link: the problem and the hidden step, no answers.
  // The link is written asynchronously (deflate): wait for it rather than read a stale preview.
  await page.$eval('#export-preview', (t) => {
    t.value = '';
  });
  await page.click('#copy-teacher-link');
  await page.waitForFunction(() => /#v\d+=/.test(document.querySelector('#export-preview')?.value ?? ''));
  const link = await page.$eval('#export-preview', (t) => t.value);
  const { state } = await page.evaluate(async (h) => (await import('./lib/share.js')).decodeStateString(h), link.split('#')[1]);
  assert(state, `the copied link does not decode: ${link.slice(0, 200)}`);
  assert(
    JSON.stringify(state.exercise.steps) === '["weights:0"]' && state.exercise.tolerance === 0.001 && state.exercise.seed === 7,
    `exercise in the link: ${JSON.stringify(state.exercise)}`,
  );
  const text = JSON.stringify(state);
  for (const row of weights) for (const w of row) assert(!text.includes(String(w).slice(0, 8)), `the link holds the answer ${w}`);
  // Opened again (the teacher's link; students get theirs from the exercise, see student.test.mjs): same numbers, the exercise is waiting.
  const student = await context.newPage();
  await student.goto(link);
  await ready(student);
  await student.waitForSelector('#exercise input.answer');
  assert((await student.$$eval('#exercise input.answer', (i) => i.length)) === 4, 'the student does not get 4 blanks');
  for (let r = 0; r < 2; r++)
    for (let c = 0; c < 2; c++) await student.fill(`#exercise input[data-id="weights:0/${r}/${c}"]`, weights[r][c].toFixed(4));
  await student.click('#ex-check');
  const ok = await student.$eval('#ex-result', (e) => e.textContent);
  assert(ok === 'All 4 right. Well done!', `right answers: ${ok}`);
  await shot(student, '06-exercise-right');
  await student.close();
  // Hidden cells only: two numbers of the output.
  await fill(false);
  await page.click('#ex-leave');
  await page.$eval('#exercise-setup', (d) => {
    d.open = true;
  });
  await page.fill('#ex-cells', '2');
  await page.check('#ex-steps input[value="output:-1"]');
  await page.uncheck('#ex-steps input[value="weights:0"]');
  await page.click('#ex-start');
  await page.waitForSelector('#exercise input.answer');
  const blanks = await page.$$eval('#exercise input.answer', (i) => i.length);
  const given = await page.$$eval('#exercise td.given', (t) => t.length);
  assert(blanks === 2 && given === 2, `cells mode: ${blanks} blanks, ${given} given`);
  // The teacher hides one more number by clicking it.
  await page.click('#ex-choose');
  const shownCell = page.locator('#exercise button.ex-toggle[aria-pressed="false"]').first();
  const [r, c] = [await shownCell.getAttribute('data-r'), await shownCell.getAttribute('data-c')];
  await shownCell.click();
  await page.click('#ex-choose');
  assert((await page.$$eval('#exercise input.answer', (i) => i.length)) === 3, 'a clicked number did not become a blank');
  // The address bar holds the students' link during an exercise: its paper's blanks are the 3 cells.
  const blanksOf = (s) => (s.student?.steps?.[0]?.cells ?? []).flatMap((row, i) => row.flatMap((x, j) => (x === null ? [[i, j]] : [])));
  const withCells = await settledLink(page, (s) => blanksOf(s).length === 3);
  const cells = blanksOf(withCells);
  assert(
    cells.some(([a, b]) => a === Number(r) && b === Number(c)),
    `cells in the link: ${JSON.stringify(cells)}`,
  );
});

// ---- CSP -------------------------------------------------------------------------------------------

test(`strict CSP (${CSP}): the page, the component and the exports work, no violations`, async ({ page, strictBase: cspBase, siteDir }) => {
  await page.addInitScript(() => {
    window.__violations = [];
    document.addEventListener('securitypolicyviolation', (e) => window.__violations.push(`${e.violatedDirective} ${e.blockedURI}`));
  });
  const response = await page.goto(`${cspBase}index.html`);
  assert(response.headers()['content-security-policy'] === CSP, 'the server did not send the policy');
  await ready(page);
  const w = await readStep(page, 'weights:0');
  assert(w[0].join(' ') === '0.7952 0.0114 0.1933', `weights under CSP (the first example): ${w[0]}`);
  assert(await page.$eval('#step-list .formula', (f) => Boolean(f.querySelector('.katex'))), 'KaTeX did not render under CSP');
  const png = await exportFile(page, 'weights:0', 'png');
  assert(png.bytes.subarray(1, 4).toString() === 'PNG', 'PNG export under CSP');
  await page.click('#copy-link');
  let violations = await page.evaluate(() => window.__violations);
  assert(violations.length === 0, `CSP violations on the page: ${violations.join('; ')}`);
  await page.goto(`${cspBase}embedding.html`);
  await page.waitForSelector('body[data-ready="true"]');
  await page.waitForFunction(() =>
    ['ex-preset', 'ex-json', 'ex-state'].every((id) => document.getElementById(id).shadowRoot.querySelector('.steps')),
  );
  const frame = page.frameLocator('#ex-iframe');
  await frame.locator('body[data-ready="true"]').waitFor();
  violations = await page.evaluate(() => window.__violations);
  assert(violations.length === 0, `CSP violations on the embedding page: ${violations.join('; ')}`);
  await shot(page, '07-csp-embedding-page');
  // Control: the same policy without 'wasm-unsafe-eval' stops the engine, with a message (so the
  // header is enforced, and that one source is what the WebAssembly needs).
  const noWasm = await startServer(siteDir, { 'Content-Security-Policy': CSP.replace(" 'wasm-unsafe-eval'", '') });
  const other = await page.context().browser().newContext();
  try {
    const p = await other.newPage();
    await p.goto(`${noWasm.url}index.html`);
    await p.waitForSelector('#loading.error');
    const text = await p.$eval('#loading', (e) => e.textContent);
    assert(/The attention engine could not be loaded/.test(text), `without wasm-unsafe-eval: ${text}`);
  } finally {
    await other.close();
    noWasm.child.kill();
  }
});
