// Robustness of the explorer page (issue 6), in Chromium via playwright-core, on node:test:
//   node --test tests/browser/robustness.test.mjs     (or: node tests/browser/robustness.test.mjs --lib DIR)
//  1. HTML / script payloads typed into every text field of the page (each matrix's text box and
//     grid cells, token names, custom scale, additive mask, softcap, exercise answers) and carried
//     in a hand-made link: nothing runs (window.__pwned stays undefined), no element is made from
//     the text, and token names show as text.
//  2. Every request the page makes, through loading each preset, editing and the payloads, goes to
//     its own server.
//  3. The page's heap across 1,000 grid edits: the V8 heap after a forced GC and the wasm memory,
//     after edit 100 and after edit 1,000 (a memory bound, not a time).
// The tests run in order on one page.
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { assert, browserSuite } from './server.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const libArg = process.argv.indexOf('--lib');
const lib = resolve(libArg > 0 ? process.argv[libArg + 1] : join(root, 'dist'));

const PAYLOADS = [
  '<img src=x onerror="window.__pwned=1">',
  '<script>window.__pwned=1</script>',
  '"><svg onload="window.__pwned=1">',
  'javascript:window.__pwned=1//\'><a href="javascript:window.__pwned=1">x</a>',
  '<iframe srcdoc="<script>parent.__pwned=1</script>"></iframe>',
];
const HEAP_BOUND = 2 * 1024 * 1024; // bytes the V8 heap may grow between edit 100 and edit 1,000

const test = browserSuite('robustness', {
  lib,
  contextOptions: { viewport: { width: 1440, height: 900 } },
  consoleTypes: ['error'],
  screenshots: null,
  async setup({ context, page }) {
    // Test-only: keep the wasm memories the page instantiates, to read their size (the page
    // itself exposes nothing).
    await context.addInitScript(() => {
      const original = WebAssembly.instantiate;
      window.__wasmMemories = [];
      WebAssembly.instantiate = async function (...args) {
        const result = await original.apply(this, args);
        const instance = result instanceof WebAssembly.Instance ? result : result.instance;
        for (const v of Object.values(instance.exports)) if (v instanceof WebAssembly.Memory) window.__wasmMemories.push(v);
        return result;
      };
    });
    return { cdp: await context.newCDPSession(page) };
  },
});

// Elements that user text must never become, and attributes it must never set.
async function injected(page) {
  return page.evaluate(() => {
    const found = [];
    for (const el of document.querySelectorAll(
      'img[src="x"], svg[onload], iframe, object, embed, a[href^="javascript:" i], [onerror], [onload]',
    )) {
      found.push(el.outerHTML.slice(0, 80));
    }
    const scripts = [...document.scripts].filter((s) => !s.src || /__pwned/.test(s.textContent));
    for (const s of scripts) if (/__pwned/.test(s.textContent)) found.push(s.outerHTML.slice(0, 80));
    return { found, pwned: window.__pwned };
  });
}

async function assertClean(page, where) {
  await page.waitForTimeout(150); // an <img onerror> would fire by now
  const { found, pwned } = await injected(page);
  assert(pwned === undefined, `${where}: window.__pwned was set: a payload ran`);
  assert(found.length === 0, `${where}: elements made from user text: ${found.join(' | ')}`);
}

/** The text fields a user can type into now: visible, enabled, writable. */
async function textFields(page) {
  return page
    .$$eval('textarea, input:not([type]), input[type="text"], input[type="search"], input[type="url"]', (els) => {
      for (const e of document.querySelectorAll('[data-robust]')) delete e.dataset.robust;
      return els;
    })
    .then(() =>
      page.$$eval('textarea, input:not([type]), input[type="text"], input[type="search"], input[type="url"]', (els) =>
        els
          .filter((e) => !e.disabled && !e.readOnly && e.offsetParent !== null)
          .map((e, i) => {
            e.dataset.robust = String(i);
            return { i, what: e.id || e.className || e.tagName, aria: e.getAttribute('aria-label') ?? '' };
          }),
      ),
    );
}

async function fillEverything(page, payload, where) {
  const fields = await textFields(page);
  for (const f of fields) {
    const el = page.locator(`[data-robust="${f.i}"]`);
    if (!(await el.isVisible())) continue;
    await el.fill(payload);
    await el.press('Tab').catch(() => {});
  }
  await assertClean(page, `${where}: ${fields.length} fields`);
  return fields.length;
}

test('payloads in every text field: nothing runs, nothing is injected, names show as text', async ({ page, base }) => {
  let filled = 0;
  const seen = new Set();
  const setups = [
    '004',
    '004 text',
    'custom scale + additive mask',
    'custom scale + additive mask text',
    'projection text',
    'cross-attention',
    'cross-attention text',
    'exercise',
  ];
  for (const setup of setups) {
    await page.selectOption('#preset', '004');
    await page.waitForTimeout(50);
    if (setup.startsWith('custom scale + additive mask')) {
      await page.selectOption('#opt-scale', 'custom');
      await page.selectOption('#opt-mask', 'additive');
    }
    if (setup === 'projection text') await page.selectOption('#preset', '002');
    if (setup.startsWith('cross-attention')) await page.selectOption('#preset', 'cross');
    // Each matrix's Text box instead of its grid.
    if (setup.endsWith(' text')) for (const tab of await page.locator('.editor button.tab[data-tab="text"]').all()) await tab.click();
    if (setup === 'exercise') {
      // An exercise link (weights and output hidden): the answer boxes are text fields too.
      const ex = { preset: '004', exercise: { steps: ['weights:0', 'output:-1'], tolerance: 0.001 } };
      await page.goto('about:blank');
      await page.goto(`${base}#v1=${Buffer.from(JSON.stringify(ex)).toString('base64url')}`);
      await page.waitForSelector('body[data-ready="true"]');
      assert((await page.locator('input.answer').count()) > 0, 'the exercise link shows no answer boxes');
    }
    for (const payload of PAYLOADS) {
      const fields = await textFields(page);
      fields.forEach((f) => seen.add(`${f.what}|${f.aria}`));
      filled += await fillEverything(page, payload, `${setup}, ${payload}`);
    }
  }
  // Token names: each word of the payload is a label, as text.
  await page.goto('about:blank');
  await page.goto(base);
  await page.waitForSelector('body[data-ready="true"]');
  await page.selectOption('#preset', '004');
  for (const payload of PAYLOADS) {
    await page.fill('#tokens-q', payload);
    // Names are split at spaces; a missing name is t1, t2, ...
    const split = payload.split(/\s+/);
    const words = [0, 1].map((i) => split[i] ?? `t${i + 1}`).join(' ');
    const rows = await page.$$eval('article[data-key="scores:0"] tbody th', (t) => t.map((e) => e.textContent));
    const cols = await page.$$eval('article[data-key="scores:0"] thead th[scope="col"]', (t) => t.map((e) => e.textContent).slice(1));
    assert(rows.join(' ') === words, `row labels for ${payload}: ${JSON.stringify(rows)}`);
    assert(cols.join(' ') === words, `column labels for ${payload}: ${JSON.stringify(cols)}`);
  }
  await assertClean(page, 'token names');
  // A matrix text box with a payload: the message quotes it as text.
  await page.click('.editor[data-input="X"] button.tab[data-tab="text"]');
  await page.fill('.editor[data-input="X"] textarea', `1 0\n${PAYLOADS[0]}`);
  await page.waitForSelector('.editor[data-input="X"] .error:not([hidden])');
  const message = await page.$eval('.editor[data-input="X"] .error', (e) => ({
    text: e.textContent,
    elements: e.querySelectorAll('img, script, svg').length,
  }));
  console.log(`     the message for a pasted payload: ${message.text}`);
  assert(message.text.includes('<img') && message.elements === 0, `the pasted payload is not quoted as text: ${JSON.stringify(message)}`);
  await assertClean(page, 'matrix text');
  console.log(
    `     ${filled} fills of ${PAYLOADS.length} payloads in ${setups.length} setups; ${seen.size} distinct fields: ${[...seen]
      .map((s) => s.split('|')[0].replace(/^mx-.*-text$/, 'matrix text box'))
      .filter((v, i, a) => a.indexOf(v) === i)
      .join(', ')}`,
  );
  assert(seen.size >= 8, `only ${seen.size} text fields found`);
});

test('payloads in a hand-made link (tokens, matrix text, scale, mask, preset, exercise): nothing runs', async ({ page, base }) => {
  for (const payload of PAYLOADS) {
    const state = {
      mode: 'self',
      preset: payload,
      edited: true,
      inputs: { Q: { text: payload }, K: { text: '1 0\n0 1' }, V: { text: `1 2\n3 4\n${payload}`, numpy: payload } },
      recipe: payload,
      options: { scale: 'custom', scaleCustom: payload, mask: 'additive', additiveMask: payload, layout: payload, precision: payload },
      tokens: { q: payload, k: payload },
      open: { step: payload, head: 0, row: 0, col: 0 },
      collapsed: [payload],
      hide: { inputs: [payload], steps: [payload], chrome: false },
      exercise: { steps: [payload], tolerance: payload },
    };
    const link = `${base}#v1=${Buffer.from(JSON.stringify(state)).toString('base64url')}`;
    await page.goto('about:blank');
    await page.goto(link);
    await page.waitForSelector('body[data-ready="true"]');
    await assertClean(page, `link with ${payload}`);
    // The same with an otherwise valid problem, so the token names are drawn as labels.
    const good = {
      mode: 'self',
      edited: true,
      inputs: { Q: { text: '1 0\n0 1' }, K: { text: '1 0\n0 1' }, V: { text: '1 2\n3 4' } },
      tokens: { q: `${payload} b`, k: payload },
    };
    await page.goto('about:blank');
    await page.goto(`${base}#v1=${Buffer.from(JSON.stringify(good)).toString('base64url')}`);
    await page.waitForSelector('body[data-ready="true"]');
    await assertClean(page, `valid link with token names ${payload}`);
    const labels = await page.$$eval('#step-list th', (t) => t.map((e) => e.textContent).join(' '));
    assert(
      labels.includes(payload.split(/\s+/)[0]),
      `the token name ${payload.split(/\s+/)[0]} is not shown as text: ${labels.slice(0, 200)}`,
    );
  }
  // And a link the page made itself from a state holding payloads, reloaded.
  await page.goto('about:blank');
  await page.goto(base);
  await page.waitForSelector('body[data-ready="true"]');
  await page.selectOption('#preset', '004');
  await page.fill('#tokens-q', PAYLOADS[0]);
  let hash = '';
  for (let i = 0; i < 30 && !/#v\d+=/.test(hash); i++) {
    await page.waitForTimeout(200);
    hash = await page.evaluate(() => location.hash);
  }
  assert(/#v\d+=/.test(hash), 'the page wrote no state link');
  await page.waitForTimeout(600);
  const own = page.url();
  await page.goto('about:blank');
  await page.goto(own);
  await page.waitForSelector('body[data-ready="true"]');
  assert((await page.$eval('#tokens-q', (e) => e.value)) === PAYLOADS[0], "the page's own link did not keep the token names");
  await assertClean(page, "the page's own link");
});

test("every request goes to the page's own server: each preset loaded and edited", async ({ page, base, requests }) => {
  await page.goto(base);
  await page.waitForSelector('body[data-ready="true"]');
  const presets = await page.$$eval('#preset option', (o) => o.map((e) => e.value).filter(Boolean));
  for (const id of presets) {
    await page.selectOption('#preset', id);
    const cell = page.locator('.editor input.cell').first();
    if (await cell.isVisible().catch(() => false)) await cell.fill('0.5');
    await page.selectOption('#opt-precision', 'float32').catch(() => {});
  }
  await page.waitForTimeout(500);
  const foreign = requests.filter((u) => !u.startsWith(base) && !u.startsWith('data:') && !u.startsWith('blob:') && u !== 'about:blank');
  const fromText = requests.filter((u) => /\/x$|__pwned/.test(u));
  console.log(
    `     ${requests.length} requests in this run (${presets.length} presets), ${new Set(requests).size} distinct URLs, none elsewhere`,
  );
  assert(foreign.length === 0, `requests outside ${base}: ${[...new Set(foreign)].join(', ')}`);
  assert(fromText.length === 0, `requests made from user text: ${fromText.join(', ')}`);
});

test('heap across 1,000 grid edits: V8 heap after GC and wasm memory stay flat', async ({ page, base, cdp }) => {
  await page.goto(base);
  await page.waitForSelector('body[data-ready="true"]');
  await page.selectOption('#preset', '004');
  const measure = async () => {
    await cdp.send('HeapProfiler.collectGarbage');
    await cdp.send('HeapProfiler.collectGarbage');
    const { usedSize } = await cdp.send('Runtime.getHeapUsage');
    const wasm = await page.evaluate(() => (window.__wasmMemories ?? []).map((m) => m.buffer.byteLength));
    return { js: usedSize, wasm };
  };
  const edit = (from, to) =>
    page.evaluate(
      ([a, b]) => {
        const cell = document.querySelector('.editor[data-input="X"] input.cell[data-r="0"][data-c="0"]');
        for (let i = a; i < b; i++) {
          cell.value = String((i % 9) + 1);
          cell.dispatchEvent(new Event('input', { bubbles: true }));
        }
        return document.querySelector('article[data-key="scores:0"] tbody tr td')?.textContent;
      },
      [from, to],
    );
  await edit(0, 100);
  const at100 = await measure();
  const shown = await edit(100, 1000);
  const at1000 = await measure();
  // Edit 1,000 typed (999 % 9) + 1 = 1, so scores[1,1] = 1·1 + 0·0 = 1: every edit recomputed.
  assert(Number(shown) === 1, `scores[1,1] after the last edit: ${shown}`);
  await page.locator('.editor[data-input="X"] input.cell[data-r="0"][data-c="0"]').fill('3');
  assert(Number(await page.$eval('article[data-key="scores:0"] tbody tr td', (e) => e.textContent)) === 9, 'the page stopped computing');
  const grew = at1000.js - at100.js;
  console.log(
    `     V8 heap after GC: ${(at100.js / 1048576).toFixed(2)} MB after 100 edits, ${(at1000.js / 1048576).toFixed(2)} MB after 1,000 (${grew >= 0 ? '+' : ''}${(grew / 1024).toFixed(0)} KB); ` +
      `wasm memory ${at100.wasm.map((b) => `${b / 1048576} MB`).join(', ')} -> ${at1000.wasm.map((b) => `${b / 1048576} MB`).join(', ')}`,
  );
  assert(at100.wasm.length >= 1, 'the wasm memory was not found');
  assert(grew < HEAP_BOUND, `the V8 heap grew by ${grew} bytes over 900 edits (bound ${HEAP_BOUND})`);
  assert(JSON.stringify(at1000.wasm) === JSON.stringify(at100.wasm), `the wasm memory grew: ${at100.wasm} -> ${at1000.wasm}`);
});
