// Browser tests of the prerendered first screen (scripts/build-site.mjs, web/page/first-screen.js):
//   node --test --test-concurrency=1 tests/browser/run.mjs tests/browser/first-screen.test.mjs
// - the built index.html holds the default example's numbers, the engine's in Node;
// - without a link they are painted before the engine is loaded (its .wasm held back), and the
//   page then takes over and works (a cell edited, the weights recomputed);
// - on a desktop, a phone and with the problem panel folded in the tab, the snapshot is painted
//   with the panel as the live page starts it (folded on a phone), and the live page takes over
//   without moving anything on the first screen;
// - with a link or a query (?embed), no frame ever shows the snapshot: the page's own "Loading…"
//   until the engine is there;
// - the untouched default writes no hash (an edit does), so a reload of it gets the snapshot; a
//   frame forgets its saved hash by the same rule; a link written late never replaces a later one.
// Screenshots of failures go to test-artifacts/first-screen-FAIL-*.png.
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { assert, browserSuite, shown } from './server.mjs';
import { PANEL_KEY } from '../../web/page/layout.js';
import { defaultState } from '../../web/page/state.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const pkg = await import(join(root, 'dist', 'node.js'));
const share = await import(join(root, 'dist', 'share.js'));
const engine = await pkg.loadAttention();
const DECIMALS = defaultState().decimals;

const test = browserSuite('first-screen', {
  contextPerTest: true,
  contextOptions: { viewport: { width: 1440, height: 900 } },
  timeout: 20000,
  screenshots: 'first-screen-',
});

/** The weights of the default example's first head, as the engine in Node computes them. */
function weightsOf(problem) {
  return engine.run(problem).steps.find((s) => s.id === 'weights' && s.head === 0).data;
}

/** `shown` (a table's text) is `expected` at the page's decimals. */
function assertShown(actual, expected, what) {
  assert(actual.length === expected.length, `${what}: ${actual.length} rows, expected ${expected.length}`);
  expected.forEach((row, i) =>
    row.forEach((e, j) => {
      const text = actual[i][j];
      assert(
        new RegExp(`^−?\\d+\\.\\d{${DECIMALS}}$`).test(text),
        `${what}[${i + 1}, ${j + 1}] is "${text}", not a number with ${DECIMALS} decimals`,
      );
      assert(Math.abs(shown(text) - e) <= 0.5 * 10 ** -DECIMALS + 1e-12, `${what}[${i + 1}, ${j + 1}] shows ${text}, the engine has ${e}`);
    }),
  );
}

const WEIGHTS = '#step-list article[data-step="weights"][data-head="0"] table.matrix tbody tr';
const readWeights = (page) =>
  page.$$eval(WEIGHTS, (rows) => rows.map((r) => [...r.querySelectorAll('td')].map((td) => td.textContent.trim())));

/** Holds lib/attention.wasm back (the engine cannot load) until the returned function is called. */
async function holdEngine(page) {
  let release;
  const held = new Promise((r) => {
    release = r;
  });
  await page.route('**/lib/attention.wasm', async (route) => {
    await held;
    await route.continue();
  });
  return release;
}

/** Counts, from the first frame on, the frames that had a step card visible (checked before each frame's paint). */
async function countFrames(page) {
  await page.addInitScript(() => {
    window.frames_ = { all: 0, withSteps: 0 };
    const tick = () => {
      window.frames_.all += 1;
      const card = document.querySelector('#step-list article.step');
      if (card?.checkVisibility({ visibilityProperty: true })) window.frames_.withSteps += 1;
      requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
  });
}

test("the built index.html holds the default example's first screen, with the engine's numbers", async ({ page, siteDir }) => {
  const html = readFileSync(join(siteDir, 'index.html'), 'utf8');
  const read = await page.evaluate(
    ([source, weights]) => {
      const doc = new DOMParser().parseFromString(source, 'text/html');
      const app = doc.getElementById('app');
      const next = (el) => el?.nextElementSibling;
      return {
        attrs: { inert: app.hasAttribute('inert'), busy: app.getAttribute('aria-busy'), snapshot: app.getAttribute('data-snapshot') },
        preset: app.querySelector('#preset option[selected]')?.value ?? null,
        loading: Boolean(app.querySelector('#loading')),
        sigs: app.querySelectorAll('[data-sig], [data-signature]').length,
        pristine: next(app)?.id === 'app-pristine' ? next(app).content.querySelector('#loading')?.textContent : null,
        script: next(next(app))?.getAttribute('src') ?? null,
        weights: [...app.querySelectorAll(weights)].map((r) => [...r.querySelectorAll('td')].map((td) => td.textContent.trim())),
      };
    },
    [html, WEIGHTS],
  );
  assert(
    read.attrs.inert && read.attrs.busy === 'true' && read.attrs.snapshot === 'pending',
    `#app's attributes: ${JSON.stringify(read.attrs)}`,
  );
  assert(!read.loading, 'the snapshot still has the "Loading" line');
  assert(read.sigs === 0, `the snapshot keeps ${read.sigs} drawing signatures`);
  assert(
    /Loading the attention engine/.test(read.pristine ?? ''),
    'no <template id="app-pristine"> with the page\'s own markup after #app',
  );
  assert(read.script === 'first-screen.js', `after the template: ${read.script}, not first-screen.js`);
  assert(read.preset && pkg.findPreset(read.preset), `the snapshot's example: ${read.preset}`);
  assertShown(read.weights, weightsOf(pkg.presetProblem(pkg.findPreset(read.preset), engine).problem), "the snapshot's weights");
});

test('without a link the numbers are painted before the engine is loaded; then the page takes over and works', async ({ page, base }) => {
  await countFrames(page);
  const release = await holdEngine(page);
  await page.goto(base, { waitUntil: 'domcontentloaded' });
  await page.waitForFunction(() => window.frames_.withSteps >= 2);
  // Set when the first number is painted (Element Timing), reported after that frame.
  await page.waitForFunction(() => performance.getEntriesByName('ae:first-steps-painted', 'mark').length > 0);
  const before = await page.evaluate(() => ({
    ready: document.body.dataset.ready ?? null,
    inert: document.getElementById('app').inert,
    snapshot: document.getElementById('app').getAttribute('data-snapshot'),
    painted: performance.getEntriesByName('ae:first-steps-painted', 'mark').length,
    interactive: performance.getEntriesByName('ae:interactive', 'mark').length,
    preset: document.getElementById('preset').value,
  }));
  assert(before.ready === null && before.interactive === 0, `the page was ready before its engine: ${JSON.stringify(before)}`);
  assert(before.inert && before.snapshot === 'shown' && before.painted === 1, `the snapshot as shown: ${JSON.stringify(before)}`);
  const expected = weightsOf(pkg.presetProblem(pkg.findPreset(before.preset), engine).problem);
  assertShown(await readWeights(page), expected, 'the weights painted before the engine');
  assert(await page.locator(WEIGHTS).first().isVisible(), 'the weights are not visible');

  release();
  await page.waitForSelector('body[data-ready="true"]');
  const after = await page.evaluate(() => ({
    inert: document.getElementById('app').inert,
    snapshot: document.getElementById('app').getAttribute('data-snapshot'),
    busy: document.getElementById('app').getAttribute('aria-busy'),
    firstSteps: performance.getEntriesByName('ae:first-steps', 'mark').length,
    interactive: performance.getEntriesByName('ae:interactive-painted', 'mark').length,
    preset: document.getElementById('preset').value,
  }));
  assert(!after.inert && after.snapshot === null && after.busy === 'false', `the live page: ${JSON.stringify(after)}`);
  assert(after.firstSteps === 1 && after.interactive === 1, `marks: ${JSON.stringify(after)}`);
  assert(after.preset === before.preset, `the live page shows ${after.preset}, the snapshot ${before.preset}`);
  assertShown(await readWeights(page), expected, "the live page's weights");

  // It works: a cell of Q edited, the weights are the engine's for the new Q.
  const problem = structuredClone(pkg.presetProblem(pkg.findPreset(before.preset), engine).problem);
  problem.Q[0][0] = 0.5;
  const edited = weightsOf(problem);
  assert(Math.abs(edited[0][0] - expected[0][0]) > 1e-3, 'the edit would not change the first weight: pick another');
  const old = (await readWeights(page))[0][0];
  await page.fill('.editor[data-input="Q"] input.cell[data-r="0"][data-c="0"]', '0.5');
  await page.waitForFunction(([sel, text]) => document.querySelector(`${sel} td`)?.textContent.trim() !== text, [WEIGHTS, old]);
  assertShown(await readWeights(page), edited, 'the weights after editing Q[1, 1]');
});

// The page's module and the engine's .wasm are fetched after the frame that shows the snapshot (they
// competed with its layout and paint, BENCHMARKS.md, twelfth session); with a link, as the HTML is
// parsed (fetched at once, run when the HTML is parsed). Each frame records, before its paint,
// whether step cards show and whether the page's module is in the document yet (or preloaded).
for (const [what, path, framesFirst] of [
  ['without a link', '', true],
  ['with a link', `#${await share.encodeStateString({ preset: 'lookup' })}`, false],
]) {
  test(`${what}, the live page is started ${framesFirst ? "after the snapshot's first frame" : 'at once'}`, async ({ page, base }) => {
    await page.addInitScript(() => {
      window.start_ = { frames: 0, withSteps: 0, moduleAtFrame: null, moduleAtSteps: null };
      const tick = () => {
        const s = window.start_;
        s.frames += 1;
        if (document.querySelector('#step-list article.step')?.checkVisibility({ visibilityProperty: true })) s.withSteps += 1;
        if (s.moduleAtFrame === null && document.querySelector('script[type="module"], link[rel="modulepreload"]')) {
          s.moduleAtFrame = s.frames;
          s.moduleAtSteps = s.withSteps;
        }
        requestAnimationFrame(tick);
      };
      requestAnimationFrame(tick);
    });
    const wasm = [];
    page.on('request', (r) => {
      if (r.url().endsWith('/lib/attention.wasm')) wasm.push(r.url());
    });
    await page.goto(`${base}${path}`);
    await page.waitForSelector('body[data-ready="true"]');
    const start = await page.evaluate(() => ({
      ...window.start_,
      modules: [...document.querySelectorAll('script[type="module"]')].map((s) => s.getAttribute('src')),
      preloads: [...document.querySelectorAll('link[rel="preload"]')].map(
        (l) => `${l.getAttribute('href')} ${l.getAttribute('as')} ${l.getAttribute('crossorigin')}`,
      ),
      modulePreloads: [...document.querySelectorAll('link[rel="modulepreload"]')].map((l) => l.getAttribute('href')),
    }));
    assert(JSON.stringify(start.modules) === '["main.bundle.js"]', `the page's modules: ${JSON.stringify(start.modules)}`);
    assert(JSON.stringify(start.preloads) === '["lib/attention.wasm fetch anonymous"]', `the preloads: ${JSON.stringify(start.preloads)}`);
    // The preload and loadAttention's fetch are one request (the same URL, mode and credentials).
    assert(wasm.length === 1, `lib/attention.wasm was requested ${wasm.length} times`);
    if (framesFirst) {
      assert(start.moduleAtSteps >= 1, `the module was in the document before a frame showed the snapshot: ${JSON.stringify(start)}`);
    } else {
      assert(
        start.moduleAtFrame === 1 && JSON.stringify(start.modulePreloads) === '["main.bundle.js"]',
        `with a link the module was fetched only at frame ${start.moduleAtFrame}: ${JSON.stringify(start)}`,
      );
    }
  });
}

// What the first screen shows, for comparing the snapshot with the live page that replaces it: the
// problem panel's fold and where things are: the lesson's, problem panel's and steps' landmarks on
// the first screen, as far as the screen goes (below it, the step cards the snapshot skips have a
// guessed height until seen).
function firstScreenLayout() {
  const box = (el) => {
    if (!el) return null;
    const r = el.getBoundingClientRect();
    return [r.top, r.left, r.width, Math.min(r.bottom, innerHeight) - r.top].map(Math.round);
  };
  const app = document.getElementById('app');
  const cards = [...document.querySelectorAll('#step-list article.step')].slice(0, 3);
  return {
    snapshot: app.getAttribute('data-snapshot'),
    inert: app.inert,
    fold: {
      expanded: document.getElementById('setup-fold')?.getAttribute('aria-expanded'),
      bodyHidden: document.getElementById('setup-body')?.hidden,
      deskFolded: document.getElementById('desk')?.classList.contains('setup-folded'),
    },
    boxes: Object.fromEntries(
      [
        ...['#lesson', '#setup', '#setup-fold', '#results', '#step-list'].map((sel) => [sel, box(document.querySelector(sel))]),
        ...cards.map((card, i) => [`step ${i + 1} (${card.dataset.step})`, box(card.querySelector('.step-head') ?? card)]),
      ].filter(([, b]) => b === null || b[0] < innerHeight),
    ),
  };
}

// The live page takes over where the snapshot was: the same fold, everything on the first screen
// where it was. KaTeX is held back too, so both are drawn with the formulas' TeX source.
const PHONE_SIZE = { width: 390, height: 844 };
for (const [what, prepare, folded] of [
  ['a desktop (1440 × 900)', null, false],
  ['a phone (390 × 844)', (page) => page.setViewportSize(PHONE_SIZE), true],
  [
    'a desktop, the problem panel folded in this tab',
    (page) => page.addInitScript((key) => sessionStorage.setItem(key, 'folded'), PANEL_KEY),
    true,
  ],
  [
    'a phone, the problem panel opened in this tab',
    async (page) => {
      await page.setViewportSize(PHONE_SIZE);
      await page.addInitScript((key) => sessionStorage.setItem(key, 'open'), PANEL_KEY);
    },
    false,
  ],
]) {
  test(`${what}: the snapshot is painted with the panel ${folded ? 'folded' : 'open'}; the live page takes over without moving it`, async ({
    page,
    base,
  }) => {
    await countFrames(page);
    await prepare?.(page);
    const release = await holdEngine(page);
    await page.route('**/vendor/katex/**', () => new Promise(() => {})); // never answered
    await page.goto(base, { waitUntil: 'domcontentloaded' });
    await page.waitForFunction(() => window.frames_.withSteps >= 2);
    const before = await page.evaluate(firstScreenLayout);
    assert(before.snapshot === 'shown' && before.inert, `the snapshot is not shown: ${JSON.stringify(before)}`);
    const fold = { expanded: String(!folded), bodyHidden: folded, deskFolded: folded };
    assert(
      JSON.stringify(before.fold) === JSON.stringify(fold),
      `the snapshot's panel: ${JSON.stringify(before.fold)}, expected ${JSON.stringify(fold)}`,
    );

    release();
    await page.waitForFunction(() => performance.getEntriesByName('ae:interactive-painted', 'mark').length > 0);
    const after = await page.evaluate(firstScreenLayout);
    assert(after.snapshot === null && !after.inert, `the live page did not take over: ${JSON.stringify(after)}`);
    assert(
      JSON.stringify(after.fold) === JSON.stringify(fold),
      `the live page's panel: ${JSON.stringify(after.fold)}, expected ${JSON.stringify(fold)}`,
    );
    for (const [name, box] of Object.entries(before.boxes)) {
      assert(box !== null, `${name} is not in the snapshot`);
      assert(
        JSON.stringify(after.boxes[name]) === JSON.stringify(box),
        `${name} moved when the live page took over: [top, left, width, height] ${JSON.stringify(box)} -> ${JSON.stringify(after.boxes[name])}`,
      );
    }
  });
}

// With a link or a query the page may show another example or another layout: it shows its own
// markup until the engine is there.
const hash = await share.encodeStateString({ preset: 'lookup' });
for (const [what, path] of [
  ['a link (#v2=..., the same example by name)', `#${hash}`],
  ['?embed=1', '?embed=1'],
]) {
  test(`${what}: the snapshot is never painted`, async ({ page, base }) => {
    await countFrames(page);
    const release = await holdEngine(page);
    await page.goto(`${base}${path}`, { waitUntil: 'domcontentloaded' });
    await page.waitForFunction(() => window.frames_.all >= 3);
    const held = await page.evaluate(() => ({
      frames: window.frames_,
      loading: document.getElementById('loading')?.textContent ?? null,
      inert: document.getElementById('app').inert,
      snapshot: document.getElementById('app').getAttribute('data-snapshot'),
      marks: performance.getEntriesByType('mark').map((m) => m.name),
    }));
    assert(held.frames.withSteps === 0, `${held.frames.withSteps} frames showed step cards before the engine loaded`);
    assert(/Loading the attention engine/.test(held.loading ?? ''), `no "Loading" line: ${JSON.stringify(held)}`);
    assert(!held.inert && held.snapshot === null && held.marks.length === 0, `the pristine page: ${JSON.stringify(held)}`);
    release();
    await page.waitForSelector('body[data-ready="true"]');
    const marks = await page.evaluate(() =>
      ['ae:first-steps-painted', 'ae:interactive-painted'].map((n) => performance.getEntriesByName(n, 'mark')[0]?.startTime),
    );
    assert(marks[0] > 0 && Math.abs(marks[0] - marks[1]) < 1, `the live page's first drawing is its first steps: ${marks}`);
    const expected = weightsOf(pkg.presetProblem(pkg.findPreset('lookup'), engine).problem);
    assertShown(await readWeights(page), expected, `the weights (${what})`);
  });
}

// The untouched default leaves the address bar without a hash (link.js, addressHash): a reload or
// a bookmark of it gets the snapshot; any other state is in the hash, and reloads as it was.
test('the untouched default writes no hash; an edit does, choosing the default again takes it away; a reload gets the snapshot', async ({
  page,
  base,
  context,
}) => {
  const CELL = '.editor[data-input="Q"] input.cell[data-r="0"][data-c="0"]';
  const hashOf = () => page.evaluate(() => location.hash);
  await page.goto(base);
  await page.waitForSelector('body[data-ready="true"]');
  const original = await page.$eval(CELL, (e) => e.value);
  await page.waitForTimeout(400); // the hash is written 250 ms after a drawing
  assert((await hashOf()) === '', `the untouched default wrote a hash: ${await hashOf()}`);

  // An edit: its link is in the hash, and reads back as the edited number.
  assert(Number(original) !== 0.5, 'the edit would not change Q[1, 1]: pick another number');
  await page.fill(CELL, '0.5');
  await page.waitForFunction(() => location.hash.startsWith('#v2='));
  const edited = await hashOf();
  const { state } = await share.decodeStateString(edited);
  assert(state?.edited === true, `the edited link holds ${JSON.stringify(state).slice(0, 200)}`);
  assert(engine.parseMatrix(state.inputs.Q.text, 'Q')[0][0] === 0.5, `the link's Q: ${state.inputs.Q.text}`);

  // The number typed back is still an edited example (it says "(edited)", its numpy lines are
  // gone), not the untouched default: the link stays.
  await page.fill(CELL, original);
  await page.waitForFunction((h) => location.hash.startsWith('#v2=') && location.hash !== h, edited);
  const back = (await share.decodeStateString(await hashOf())).state;
  assert(back?.edited === true && back.inputs.Q.text.split(/\s+/)[0] === original, `typed back: ${JSON.stringify(back).slice(0, 200)}`);

  // The default example chosen again: no hash at all (not even "#").
  await page.selectOption('#preset', 'lookup');
  await page.waitForFunction(() => location.hash === '');
  assert(!page.url().includes('#'), `the address bar: ${page.url()}`);

  // The edited link opened as a link, then the default chosen: its hash goes too.
  const other = await context.newPage();
  await other.goto(`${base}${edited}`);
  await other.waitForSelector('body[data-ready="true"]');
  assert((await other.$eval(CELL, (e) => e.value)) === '0.5', 'the edited link did not reopen with Q[1, 1] = 0.5');
  assert((await other.evaluate(() => document.documentElement.dataset.firstScreen ?? null)) === null, 'a link got the snapshot');
  await other.selectOption('#preset', 'lookup');
  await other.waitForFunction(() => location.hash === '');
  await other.close();

  // A reload of the bare address gets the snapshot (painted before the engine, held back, is there).
  const release = await holdEngine(page);
  await page.reload({ waitUntil: 'domcontentloaded' });
  await page.waitForSelector('#app[data-snapshot="shown"]');
  assert(
    (await page.evaluate(() => document.documentElement.dataset.firstScreen)) === 'prerendered',
    'the reload did not keep the snapshot',
  );
  release();
  await page.waitForSelector('body[data-ready="true"]');
  await page.waitForTimeout(400);
  assert((await hashOf()) === '', `after the reload the page wrote a hash: ${await hashOf()}`);
  assert((await page.$eval(CELL, (e) => e.value)) === original, 'the reload did not show the default example');
});

// A frame keeps its state for its host's reload (link.js, saveFrameHash) by the same rule: back to
// what its address opens with, it forgets it, and reopens like a reload of the bare address.
// Links are written asynchronously (compressed): one that takes longer must not overwrite the
// link of a later edit. Compressing any link of Q[1, 1] = 0.111 is held back a second here.
test('a slow link does not overwrite the link of a later edit', async ({ page, base }) => {
  const CELL = '.editor[data-input="Q"] input.cell[data-r="0"][data-c="0"]';
  await page.addInitScript(() => {
    const Real = window.CompressionStream;
    window.CompressionStream = class extends Real {
      constructor(format) {
        super(format);
        let slow = false;
        const spy = new TransformStream({
          transform(chunk, out) {
            if (new TextDecoder().decode(chunk).includes('0.111')) slow = true;
            out.enqueue(chunk);
          },
        });
        spy.readable.pipeTo(super.writable);
        this.spyWritable = spy.writable;
        this.lateReadable = super.readable.pipeThrough(
          new TransformStream({
            async flush() {
              if (slow) await new Promise((r) => setTimeout(r, 1000));
            },
          }),
        );
      }
      get writable() {
        return this.spyWritable;
      }
      get readable() {
        return this.lateReadable;
      }
    };
  });
  await page.goto(base);
  await page.waitForSelector('body[data-ready="true"]');
  const firstQ = async () => {
    const { state } = await share.decodeStateString(await page.evaluate(() => location.hash));
    return state ? engine.parseMatrix(state.inputs.Q.text, 'Q')[0][0] : null;
  };
  await page.fill(CELL, '0.111');
  await page.waitForTimeout(400); // its link is being written, slowly
  await page.fill(CELL, '0.222');
  await page.waitForFunction(() => location.hash.startsWith('#v2='));
  await page.waitForTimeout(1500); // the slow link is done
  const q = await firstQ();
  assert(q === 0.222, `the address holds Q[1, 1] = ${q}: the link of the earlier edit, written late, replaced the later one`);
});

test("a frame opened without a hash: an edit is kept for the host's reload, the default chosen again is not", async ({ page, base }) => {
  const src = `${base}index.html?embed=1`;
  const CELL = '.editor[data-input="Q"] input.cell[data-r="0"][data-c="0"]';
  await page.goto(`${base}embedding.html`, { waitUntil: 'domcontentloaded' });
  /** The host (re)loads the frame, as reveal.js does when it comes back to a slide. */
  const reopen = async () => {
    await page.evaluate((s) => {
      document.getElementById('host-frame')?.remove();
      const f = document.createElement('iframe');
      f.id = 'host-frame';
      f.src = s;
      f.style.cssText = 'width: 1200px; height: 800px';
      document.body.prepend(f);
    }, src);
    const frame = await (await page.$('#host-frame')).contentFrame();
    await frame.waitForSelector('body[data-ready="true"]');
    return frame;
  };
  const saved = () => page.evaluate((s) => sessionStorage.getItem(`attention-explorer:${s}`), src);
  let frame = await reopen();
  const original = await frame.$eval(CELL, (e) => e.value);
  await page.waitForTimeout(400);
  assert(
    (await frame.evaluate(() => location.hash)) === '' && (await saved()) === null,
    `the untouched frame: hash ${await frame.evaluate(() => location.hash)}, saved ${await saved()}`,
  );

  await frame.fill(CELL, '0.5');
  await frame.waitForFunction(() => location.hash.startsWith('#v2='));
  await page.waitForFunction((s) => sessionStorage.getItem(`attention-explorer:${s}`) !== null, src);
  assert(`#${await saved()}` === (await frame.evaluate(() => location.hash)), "the saved hash is not the frame's");
  frame = await reopen();
  assert((await frame.$eval(CELL, (e) => e.value)) === '0.5', "the host's reload lost the edit");

  await frame.selectOption('#preset', 'lookup');
  await frame.waitForFunction(() => location.hash === '');
  await page.waitForFunction((s) => sessionStorage.getItem(`attention-explorer:${s}`) === null, src);
  frame = await reopen();
  assert((await frame.$eval(CELL, (e) => e.value)) === original, "the host's reload did not show the default");
  await page.waitForTimeout(400);
  assert((await frame.evaluate(() => location.hash)) === '', 'the reopened default wrote a hash');
});
