// Regression tests for what a page review found on colour, exports, numbers, copying and small screens, each with its
// regression test, in Chromium via playwright-core, on node:test:
//   node --test tests/browser/review.test.mjs [--lib DIR]      (needs dist/)
// 1: a uniform row of weights drawn at 0.25's colour (a fixed 0–1 scale), legends that name their
// scale; 7: floating-point noise (−3.469e−17) shown as 0.0000 in a table, every digit kept in the
// worked calculation; 10: the SVG/PNG export with its whole title, axes, colour bar and grey masked
// cells; 15: "Copy LaTeX" on a step card puts the step's LaTeX on the clipboard; 17: the status
// line's timings on demand, one line on a phone; 9: a 4-token table fits 390 px, a wider one shows
// that it scrolls; 20: the worked calculation's formula wraps to fit its panel (390 px and the side panel);
// 13 (third pass): the component's editable cells hold their numbers at its decimals, never cut.
// Screenshots at 1440 and 390 px go to test-artifacts/review-*.png.
import strict from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

import { artifacts, assert, axeFindings, browserSuite, isSerious, settled } from './server.mjs';

const root = resolve(import.meta.dirname, '..', '..');
const libArg = process.argv.indexOf('--lib');
const lib = resolve(libArg > 0 ? process.argv[libArg + 1] : join(root, 'dist'));
const { colourScale, loadAttention, stepLatex } = await import(join(lib, 'node.js'));
const { encodeStateString, problemToState } = await import(join(lib, 'share.js'));
const engine = await loadAttention();

// A problem that makes floating-point noise: the exercise generator's problem from seed 1 (randn rounded to
// one decimal, as its "New problem from this seed" draws it), 2 heads, causal. Head 1's scores of
// query 4 with keys 1 and 3 are −6.9e−17 and 5.6e−17 instead of 0: floating-point noise.
const round1 = (m) => m.map((row) => row.map((x) => Math.round(x * 10) / 10 || 0));
const [Q1, K1, V1] = engine
  .random(
    1,
    [0, 1, 2].map(() => ({ kind: 'randn', shape: [4, 8] })),
  )
  .map(round1);
const NOISY = { Q: Q1, K: K1, V: V1, options: { causal: true, heads: 2 } };
// Zero queries: every key scores 0, so every weight of an unmasked row is 1 / 4.
const [K2, V2] = engine.random(3, [
  { kind: 'randn', shape: [4, 8] },
  { kind: 'randn', shape: [4, 8] },
]);
const UNIFORM = { Q: Array.from({ length: 4 }, () => Array(8).fill(0)), K: K2, V: V2, options: {} };

/** The page opened at a link holding problem `p`. */
async function open(page, base, p, width = 1440) {
  await page.setViewportSize({ width, height: 900 });
  const hash = await encodeStateString(problemToState(p));
  await page.goto(`${base}index.html#${hash}`);
  await page.waitForSelector('body[data-ready="true"]');
  await page.waitForSelector('#step-list article[data-step="weights"] td[data-r]');
  await page.evaluate(() => document.fonts.ready);
  await settled(page); // a link to the open page only changes its hash: that update is drawn next
}

const cells = (page, key) =>
  page.$$eval(`#step-list article[data-key="${key}"] tbody tr`, (rows) =>
    rows.map((tr) =>
      [...tr.querySelectorAll('td')].map((td) => ({
        text: td.textContent,
        bg: getComputedStyle(td).backgroundColor,
        cls: td.className,
      })),
    ),
  );
/** "rgb(1,2,3)" as the browser computes it: "rgb(1, 2, 3)". */
const computed = (css) => css.replace(/,\s*/g, ', ');

async function download(page, click) {
  const [dl] = await Promise.all([page.waitForEvent('download'), click()]);
  return { name: dl.suggestedFilename(), bytes: readFileSync(await dl.path()) };
}

/** axe-core's WCAG 2 A/AA rules on `include` (colour contrast of every cell colour included): nothing serious. */
async function axe(page, what, include) {
  const serious = (await axeFindings(page, { include })).filter(isSerious);
  assert(
    serious.length === 0,
    `axe (${what}): ${serious.map((v) => `${v.id} ${v.targets.length}× e.g. ${v.targets[0]}: ${v.help}`).join('; ')}`,
  );
}

const test = browserSuite('review', {
  lib,
  contextPerTest: true,
  screenshots: 'review-',
  contextOptions: { viewport: { width: 1440, height: 900 }, acceptDownloads: true, permissions: ['clipboard-read', 'clipboard-write'] },
});

test('a uniform row of weights is drawn at the colour of 0.25, not of the maximum', async ({ page, base }) => {
  await open(page, base, UNIFORM);
  const weights = await cells(page, 'weights:0');
  const quarter = computed(colourScale([[0]], 'probability')(0.25).bg);
  const full = computed(colourScale([[0]], 'probability')(1).bg);
  assert(quarter === 'rgb(92, 200, 99)', `0.25 on the package's scale: ${quarter}`);
  weights.forEach((row, i) =>
    row.forEach((c, j) => {
      assert(c.text === '0.2500', `weight [${i + 1}, ${j + 1}] shows ${c.text}`);
      assert(c.bg === quarter, `weight [${i + 1}, ${j + 1}] is drawn ${c.bg}, expected 0.25's ${quarter} (1 is ${full})`);
    }),
  );
  const legend = (key) =>
    page.$$eval(`#step-list article[data-key="${key}"] .legend span`, (spans) =>
      spans
        .map((e) => e.textContent)
        .filter(Boolean)
        .join(' '),
    );
  assert((await legend('weights:0')) === 'weight, 0 to 1: 0.00 1.00', `weights legend: ${await legend('weights:0')}`);
  // Scores: symmetric about 0, so the largest |score| is at an end and 0 in the neutral middle.
  const scores = engine.run(UNIFORM).steps.find((s) => s.id === 'scores');
  assert(
    /^signed, ±max: −0\.00 \+0\.00$|^signed, ±max: 0\.00 0\.00$/.test(await legend('scores:0')),
    `zero scores legend: ${await legend('scores:0')}`,
  );
  const scoreCells = await cells(page, 'scores:0');
  assert(scoreCells[0][0].bg === computed(colourScale(scores.data, 'signed')(0).bg), `a zero score: ${scoreCells[0][0].bg}`);
  await page.locator('#step-list article[data-key="weights:0"]').screenshot({ path: join(artifacts, 'review-uniform-1440.png') });
  await axe(page, 'steps and status bar at 1440 px', [['#step-list'], ['.status-bar']]);
});

test('noise that rounds to 0 shows as 0.0000; the worked calculation keeps its digits', async ({ page, base }) => {
  await open(page, base, NOISY);
  const trace = engine.run(NOISY);
  const masked = trace.steps.find((s) => s.id === 'masked' && s.head === 0);
  assert(Math.abs(masked.data[3][0]) > 0 && Math.abs(masked.data[3][0]) < 1e-15, `the repro still gives noise: ${masked.data[3][0]}`);
  for (const key of ['scores:0', 'scaled:0', 'masked:0']) {
    const row4 = (await cells(page, key))[3].map((c) => c.text);
    assert(row4[0] === '0.0000' && row4[2] === '0.0000', `${key} row w4: ${row4.join(' ')}`);
  }
  const all = await page.$$eval('#step-list td[data-r]', (tds) => tds.map((td) => td.textContent));
  assert(!all.some((t) => /e[−-]/.test(t)), `a table still shows scientific noise: ${all.filter((t) => /e[−-]/.test(t)).join(', ')}`);
  await page.click('#step-list article[data-key="masked:0"] td[data-r="3"][data-c="0"]');
  await page.waitForFunction(() => /Masked scores/.test(document.querySelector('#drill')?.textContent ?? ''));
  const drill = await page.$eval('#drill', (e) => e.textContent);
  assert(/3\.469e−17/.test(drill), `the worked calculation should keep the exact value: ${drill.slice(0, 300)}`);
});

test('the SVG and PNG heatmaps carry the whole title, the axes, a colour bar and grey masked cells', async ({ page, base }) => {
  await open(page, base, NOISY);
  await page.selectOption('#export-what', 'weights:0');
  const svgFile = await download(page, () => page.click('button[data-export="svg"]'));
  const svg = svgFile.bytes.toString('utf8');
  const title = 'Attention weights, head 1 (4 × 4)';
  assert(svg.includes(`font-weight="600" fill="#111">${title}</text>`), `title in ${svgFile.name}: ${svg.slice(0, 400)}`);
  assert(svg.includes('>query ↓  key →</text>'), 'axis names');
  assert(svg.includes('>weight, 0 to 1</text>') && /fill="url\(#bar-weights0\)"/.test(svg), 'colour bar with its meaning');
  // Causal: query 1 sees only key 1; its other three weights are hidden, grey as on the page.
  const fill = (i, j) => new RegExp(`fill="([^"]+)"><title>${i},${j}: `).exec(svg)?.[1];
  assert(fill(1, 2) === '#eceef1' && fill(1, 4) === '#eceef1', `masked cells: ${fill(1, 2)}, ${fill(1, 4)}`);
  assert(fill(1, 1) === 'rgb(68,1,84)', `weight 1 at the end of the scale: ${fill(1, 1)}`);
  // Nothing drawn beyond the width: the title's text fits (measured by the browser).
  const fits = await page.evaluate((text) => {
    const box = new DOMParser().parseFromString(text, 'image/svg+xml').documentElement;
    document.body.appendChild(box);
    const width = box.width.baseVal.value;
    const widest = Math.max(...[...box.querySelectorAll('text')].map((t) => t.getBBox().x + t.getBBox().width));
    box.remove();
    return { width, widest };
  }, svg);
  assert(fits.widest <= fits.width, `text reaches ${fits.widest} px in a ${fits.width} px SVG`);
  const png = await download(page, () => page.click('button[data-export="png"]'));
  const pngWidth = png.bytes.readUInt32BE(16);
  assert(pngWidth === 2 * fits.width, `PNG ${pngWidth} px wide for a ${fits.width} px SVG drawn at 2×`);
  // With an icon of its own, or Chromium asks the server for /favicon.ico (a 404 the suite reports).
  await page.setContent(`<link rel="icon" href="data:,">${svg}`);
  await page.screenshot({ path: join(artifacts, 'review-export-svg.png') });
});

test('"Copy LaTeX" on a step card puts the step\'s LaTeX on the clipboard and says so', async ({ page, base }) => {
  await open(page, base, NOISY);
  const step = engine.run(NOISY).steps.find((s) => s.id === 'weights' && s.head === 1);
  const card = page.locator('#step-list article[data-key="weights:1"]');
  await card.locator('button.copy-tex').click();
  await card.locator('.copy-done', { hasText: 'LaTeX copied' }).waitFor();
  const copied = await page.evaluate(() => navigator.clipboard.readText());
  const expected = `\\[ ${step.tex} \\]\n\\[ ${stepLatex(step, { decimals: 4 })} \\]\n`;
  assert(copied === expected, `clipboard:\n${copied}\nexpected:\n${expected}`);
  assert(copied.includes('\\bar{S}') || copied.includes(step.tex), 'the formula the card shows');
  assert(await card.locator('.copy-done').isVisible(), 'the confirmation is visible');
  const label = await card.locator('button.copy-tex').getAttribute('aria-label');
  assert(label === 'Copy LaTeX: Attention weights, head 2', `button label: ${label}`);
});

test('the status line shows its timings on demand and is one line on a phone', async ({ page, base }) => {
  await open(page, base, NOISY);
  const shown = () => page.$eval('#status', (e) => e.innerText);
  assert(/^20 steps for 4 queries × 4 keys, dk = 4, 2 heads, float64$/.test(await shown()), `status: ${await shown()}`);
  assert(/computed in [\d.]+ ms, drawn in [\d.]+ ms/.test(await page.$eval('#status', (e) => e.title)), 'timings in the title');
  await page.click('#status-timings');
  assert(/: computed in [\d.]+ ms, drawn in [\d.]+ ms$/.test(await shown()), `timings shown on demand: ${await shown()}`);
  assert((await page.getAttribute('#status-timings', 'aria-pressed')) === 'true', 'the toggle says it is on');
  await page.click('#status-timings');
  assert(!/computed in/.test(await shown()), 'timings hidden again');
  await page.setViewportSize({ width: 390, height: 844 });
  await page.waitForTimeout(200);
  const bar = await page.$eval('#status', (e) => ({
    h: e.getBoundingClientRect().height,
    line: parseFloat(getComputedStyle(e).lineHeight) || 20,
    sw: e.scrollWidth,
    cw: e.clientWidth,
    text: e.innerText,
  }));
  assert(bar.h < 1.6 * bar.line && bar.sw <= bar.cw, `phone status: ${JSON.stringify(bar)}`);
  assert(bar.text === '4 queries × 4 keys, dk = 4, 2 heads', `phone status text: ${bar.text}`);
  await page.locator('.status-bar').screenshot({ path: join(artifacts, 'review-status-390.png') });
});

test('a 4-token table fits a 390 px phone; a wider one shows that it scrolls', async ({ page, base }) => {
  await open(page, base, NOISY, 390);
  const wraps = await page.$$eval('#step-list article[data-head="0"] .matrix-wrap', (ws) =>
    ws.map((w) => ({
      key: w.closest('article').dataset.key,
      sw: w.scrollWidth,
      cw: w.clientWidth,
      scrolls: w.classList.contains('scrolls'),
    })),
  );
  for (const w of wraps.filter((x) => /^(scores|scaled|masked|weights):/.test(x.key))) {
    assert(w.sw <= w.cw, `${w.key} is ${w.sw} px in ${w.cw} px at 390 px`);
    assert(!w.scrolls, `${w.key} marked as scrolling`);
  }
  await page.locator('#step-list article[data-key="weights:0"]').screenshot({ path: join(artifacts, 'review-weights-390.png') });
  await axe(page, 'steps and status bar at 390 px', [['#step-list'], ['.status-bar']]);
  const [Q, K, V] = engine.random(
    5,
    [0, 1, 2].map(() => ({ kind: 'randn', shape: [9, 4] })),
  );
  await open(page, base, { Q, K, V, options: {} }, 390);
  const cue = await page.$eval('#step-list article[data-step="weights"] .matrix-wrap', (w) => ({
    scrolls: w.classList.contains('scrolls') && !w.classList.contains('at-end'),
    text: getComputedStyle(w.nextElementSibling, '::before').content,
    mask: getComputedStyle(w).maskImage || getComputedStyle(w).webkitMaskImage,
  }));
  assert(
    cue.scrolls && cue.text === '"scroll → for more columns"' && /gradient/.test(cue.mask),
    `9 tokens at 390 px: ${JSON.stringify(cue)}`,
  );
  await page.$eval('#step-list article[data-step="weights"] .matrix-wrap', (w) => {
    w.scrollLeft = w.scrollWidth;
  });
  await page.waitForFunction(() =>
    document.querySelector('#step-list article[data-step="weights"] .matrix-wrap').classList.contains('at-end'),
  );
});

test("the worked calculation's formula wraps to fit its panel, on a phone and in the side panel, numbers and all", async ({
  page,
  base,
}) => {
  // d = 8: a score is a sum of 8 products (the page shows the first two, ⋯, the last).
  const [Q, K, V] = engine.random(
    7,
    [0, 1, 2].map(() => ({ kind: 'randn', shape: [4, 8] })),
  );
  const p = { Q, K, V, options: {} };
  for (const [width, height] of [
    [390, 844],
    [1440, 900],
  ]) {
    await open(page, base, p, width);
    await page.setViewportSize({ width, height });
    // A softmax weight too: its sum of exponentials sits in a fraction's denominator.
    for (const [step, r, c] of [
      ['scores', 1, 2],
      ['output', 2, 5],
      ['weights', 3, 0],
    ]) {
      await page.click(`#step-list article[data-key="${step}:${step === 'output' ? -1 : 0}"] td[data-r="${r}"][data-c="${c}"]`);
      await page.waitForFunction(
        (s) => document.querySelector('#drill .drill-target')?.textContent.includes(s),
        { scores: 'Scores', output: 'Output', weights: 'Attention weights' }[step],
      );
      await page.evaluate(() => document.fonts.ready);
      // Laid out (typeset, not a placeholder): measured after KaTeX has drawn it.
      // Measured in the same task as the wait: the idle work after an edit may draw the panel again
      // between two separate calls (a fresh, not yet laid out copy measures 0 px).
      const eq = await (
        await page.waitForFunction(() => {
          const e = document.querySelector('#drill .drill-eq');
          if (!(e?.clientWidth > 0) || document.querySelector('#drill .tex-pending')) return null;
          return {
            sw: e.scrollWidth,
            cw: e.clientWidth,
            lines: e.querySelectorAll('.drill-line').length,
            shown: [...e.querySelectorAll('.katex-html')].map((k) => k.textContent).join(' '),
          };
        })
      ).jsonValue();
      assert(
        eq.cw > 100 && eq.sw <= eq.cw,
        `${step} [${r + 1}, ${c + 1}] at ${width} px: the formula is ${eq.sw} px wide in a ${eq.cw} px panel`,
      );
      await page.locator('#drill').screenshot({ path: join(artifacts, `review-drill-${step}-${width}.png`) });
      const e = engine.explain(p, { step, row: r, col: c });
      assert(eq.shown.includes(Math.abs(e.value).toFixed(4)), `${step} at ${width} px: the value ${e.value} missing`);
      if (step === 'weights') continue;
      // Its numbers are all there: the shown terms' factors and the value (the page's 4 decimals).
      const [x, y] = e.terms.columns;
      const n = x.length;
      assert(n === (step === 'scores' ? 8 : 4), `${step}: ${n} terms`);
      for (const k of [0, 1, n - 1]) {
        for (const v of [x[k], y[k]])
          assert(
            eq.shown.includes(Math.abs(v).toFixed(4)),
            `${step} at ${width} px: term ${k + 1}'s ${v.toFixed(4)} missing from ${eq.shown}`,
          );
      }
      assert(eq.lines === 3, `${step}: ${eq.lines} lines (definition, terms, value)`);
    }
  }
});

test('the <attention-explorer> component: the same 0–1 colours and legend, grey masked weights, noise as 0', async ({
  page,
  base,
  siteDir,
}) => {
  const causalUniform = { ...UNIFORM, options: { causal: true } };
  writeFileSync(
    join(siteDir, 'review-component.html'),
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>component</title>
    <link rel="icon" href="data:,"><script type="module" src="lib/component.js"></script></head><body>
    <attention-explorer id="u" steps="weights" inputs=""><script type="application/json">${JSON.stringify(causalUniform)}</script></attention-explorer>
    <attention-explorer id="n" steps="masked" heads="1" inputs=""><script type="application/json">${JSON.stringify(NOISY)}</script></attention-explorer>
    </body></html>`,
  );
  await page.goto(`${base}review-component.html`);
  await page.waitForFunction(() => ['u', 'n'].every((id) => document.getElementById(id).shadowRoot?.querySelector('.steps td')));
  const read = (id) =>
    page.$eval(`#${id}`, (el) => ({
      rows: [...el.shadowRoot.querySelectorAll('table[data-step] tbody tr')].map((tr) =>
        [...tr.querySelectorAll('td')].map((td) => ({
          text: td.textContent,
          bg: getComputedStyle(td).backgroundColor,
          cls: td.className,
        })),
      ),
      legend: el.shadowRoot.querySelector('.legend')?.textContent.replace(/\s+/g, ' ').trim(),
    }));
  const u = await read('u');
  const quarter = computed(colourScale([[0]], 'probability')(0.25).bg);
  assert(
    u.rows[3].every((c) => c.text === '0.2500' && c.bg === quarter),
    `row 4 (uniform): ${JSON.stringify(u.rows[3])}`,
  );
  assert(
    u.rows[0].slice(1).every((c) => c.cls === 'masked' && c.bg === 'rgb(236, 238, 241)'),
    `row 1's hidden keys: ${JSON.stringify(u.rows[0])}`,
  );
  assert(u.legend === 'weight, 0 to 1: 0.00 1.00', `component legend: ${u.legend}`);
  const n = await read('n');
  const row4 = n.rows[3].map((c) => c.text);
  assert(row4[0] === '0' && row4[2] === '0', `head 1 masked scores row 4: ${row4.join(' ')}`);
});

test("the component's editable cells: numbers at its decimals, never cut mid-digit; given zeros as 0.0000 (review #13)", async ({
  page,
  base,
  siteDir,
}) => {
  writeFileSync(
    join(siteDir, 'review-component-cells.html'),
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>component cells</title>
    <link rel="icon" href="data:,"><script type="module" src="lib/component.js"></script></head><body>
    <attention-explorer id="seed" preset="000" editable="Q" steps="weights"></attention-explorer>
    <attention-explorer id="eye" editable="Q" inputs="Q,K" steps="weights"><script type="application/json">${JSON.stringify({
      Q: [
        [1, 0],
        [0, 1],
      ],
      K: [
        [1, 0],
        [0, -1],
      ],
      V: [
        [1, 2],
        [3, 4],
      ],
    })}</script></attention-explorer>
    <attention-explorer id="six" preset="000" editable="Q" decimals="6" steps="weights"></attention-explorer>
    </body></html>`,
  );
  const ids = ['seed', 'eye', 'six'];
  for (const [width, height] of [
    [1440, 900],
    [390, 844],
  ]) {
    await page.setViewportSize({ width, height });
    await page.goto(`${base}review-component-cells.html`);
    await page.waitForFunction((ids) => ids.every((id) => document.getElementById(id).shadowRoot?.querySelector('.steps td')), ids);
    // Each field's text against the room it has: its width at 0 is the text's own (plus padding).
    const cells = await page.evaluate(
      (ids) =>
        Object.fromEntries(
          ids.map((id) => [
            id,
            [
              ...document.getElementById(id).shadowRoot.querySelectorAll('table[data-input] input, table[data-input] td:not(:has(input))'),
            ].map((el) => {
              if (!(el instanceof HTMLInputElement)) return { text: el.textContent };
              const room = el.clientWidth;
              el.style.width = '0px';
              const needs = el.scrollWidth;
              el.style.width = '';
              return { value: el.value, room, needs };
            }),
          ]),
        ),
      ids,
    );
    const fields = (id) => cells[id].filter((c) => 'value' in c);
    strict.deepEqual(
      fields('seed')
        .slice(0, 3)
        .map((c) => c.value),
      ['0.4967', '-0.1383', '0.6477'],
    );
    strict.deepEqual(
      fields('six')
        .slice(0, 2)
        .map((c) => c.value),
      ['0.496714', '-0.138264'],
    );
    strict.deepEqual(
      fields('eye').map((c) => c.value),
      ['1.0000', '0.0000', '0.0000', '1.0000'],
    );
    strict.deepEqual(
      cells.eye.filter((c) => 'text' in c).map((c) => c.text),
      ['1.0000', '0.0000', '0.0000', '−1.0000'],
    );
    for (const id of ids) {
      strict.equal(fields(id).length, id === 'eye' ? 4 : 32);
      const cut = fields(id).filter((c) => c.needs > c.room);
      strict.deepEqual(cut, [], `${id} at ${width}×${height}: fields too narrow for their numbers`);
    }
  }
});
