// Browser tests of the explorer where course authors put it (Chromium through playwright-core):
//   node --test tests/browser/embeds.test.mjs
// Three origins on 127.0.0.1: the site (the explorer page and the package in lib/), a "CDN" that
// serves the same package with CORS, and hosts (a course platform, a docs page, a notebook):
// - a Canvas-like host (only the iframe attributes Canvas keeps, a listener for lti.frameResize):
//   the frame grows and shrinks as steps fold; an open cell does not scroll the host;
// - the embed builder's checkboxes, preview and snippet; unknown flags get a message;
// - the component imported from the CDN origin: numbers on screen, the .wasm fetched beside it;
//   inserted after load, removed and inserted again with the reader's edit kept;
// - a host whose Content-Security-Policy lacks 'wasm-unsafe-eval': the component says so inside
//   itself and points to the iframe;
// - the anywidget module driven by a minimal model (get/set/on/off/save_changes), both ways;
// - a real MkDocs Material site (Debian's mkdocs-material) with navigation.instant: the component
//   on two pages navigated between without a reload (skipped, saying so, without mkdocs).
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { after, test as plainTest } from 'node:test';
import { fileURLToPath } from 'node:url';

import { assert, assertMatrix, browserSuite, launchBrowser, shown, startServer } from './server.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const pkg = await import(join(root, 'dist', 'node.js'));
const engine = await pkg.loadAttention();

const test = browserSuite('embeds', {
  contextPerTest: true,
  contextOptions: { viewport: { width: 1100, height: 800 } },
  timeout: 15000,
  screenshots: 'embeds-',
});

const weightsOf = (problem) => engine.run(problem).steps.find((s) => s.id === 'weights').data;
const preset000 = pkg.presetProblem(pkg.findPreset('000'), engine).problem;

// The CDN and the hosts, started once (they need the built site), stopped after the suite.
let servers = null;
const hostDir = mkdtempSync(join(tmpdir(), 'attention-hosts-'));
async function origins(siteDir, base) {
  if (servers) return servers;
  // The CDN serves the whole site; the package is its lib/ folder, as dist/ is on a real CDN.
  const cdn = await startServer(siteDir, { 'Access-Control-Allow-Origin': '*' });
  hostPage('index.html', '<h1>Hosts</h1>');
  const host = await startServer(hostDir);
  const cdnOrigin = cdn.url.replace(/\/$/, '');
  // No 'wasm-unsafe-eval': scripts and fetches from the CDN are allowed, compiling WebAssembly is not.
  const strict = await startServer(hostDir, {
    'Content-Security-Policy': `default-src 'self'; script-src 'self' ${cdnOrigin}; connect-src ${cdnOrigin}; style-src 'self' 'unsafe-inline'; img-src 'self' data:`,
  });
  servers = { cdn: `${cdn.url}lib/`, host: host.url, strict: strict.url, site: base, children: [cdn.child, host.child, strict.child] };
  return servers;
}
after(() => {
  for (const child of servers?.children ?? []) child.kill();
  rmSync(hostDir, { recursive: true, force: true });
});

/** Writes a host page; returns its name. */
function hostPage(name, body, head = '') {
  writeFileSync(
    join(hostDir, name),
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,">
<title>${name}</title>${head}</head><body>${body}</body></html>`,
  );
  return name;
}

/** The weights table of an <attention-explorer> (its Shadow DOM), as numbers. */
function componentWeights(locator) {
  return locator.evaluate((el) =>
    [...el.shadowRoot.querySelectorAll('table[data-step="weights"] tbody tr')].map((r) =>
      [...r.querySelectorAll('td')].map((td) => td.textContent),
    ),
  );
}

async function stateHash(page, base, state) {
  await page.goto(`${base}embedding.html`);
  return page.evaluate(async (s) => (await import('./lib/share.js')).encodeStateString(s), state);
}

// ---- the iframe in a learning platform ------------------------------------------------------------

test('Canvas-like host: the frame follows lti.frameResize as steps fold, an open cell does not scroll the host', async ({
  page,
  base,
  siteDir,
}) => {
  const { host } = await origins(siteDir, base);
  const hash = await stateHash(page, base, { preset: '000', open: { step: 'weights', head: 0, row: 3, col: 2 } });
  const src = `${base}index.html?embed=1&hide=why#${hash}`;
  const name = hostPage(
    'canvas.html',
    `<h1>Week 3: attention</h1>
<iframe src="${src.replace(/&/g, '&amp;')}" width="100%" height="300" name="attention-explorer" frameborder="0" scrolling="auto" allowfullscreen></iframe>
<p id="after">Next: multi-head attention.</p>`,
    `<script>
window.resizes = [];
window.ownMessages = [];
addEventListener('message', (e) => {
  const d = e.data;
  if (d && d.type === 'attention-explorer:resize') window.ownMessages.push(d.height);
  if (!d || d.subject !== 'lti.frameResize') return;
  for (const f of document.querySelectorAll('iframe')) if (f.contentWindow === e.source) f.height = d.height;
  window.resizes.push(d.height);
});
</script>`,
  );
  await page.goto(`${host}${name}`);
  const frame = page.frameLocator('iframe');
  await frame.locator('body[data-ready="true"]').waitFor();
  await page.waitForFunction(() => Number(document.querySelector('iframe').height) > 1000);
  // Both messages carry the same heights.
  await page.waitForFunction(() => window.ownMessages.at(-1) === window.resizes.at(-1));
  const frameHeight = () => page.$eval('iframe', (f) => Number(f.height));
  // The same height for 600 ms (two reads 150 ms apart were not enough on a loaded machine: a
  // resize message came later, and 'unfolded' differed from 'full' by 72 px).
  const settle = async () => {
    let last = -1,
      same = 0;
    for (let i = 0; i < 80 && same < 4; i++) {
      const h = await frameHeight();
      same = h === last ? same + 1 : 0;
      last = h;
      await page.waitForTimeout(150);
    }
    return last;
  };
  const full = await settle();
  // The frame is as tall as its content: no scrolling inside it, the page below it moved down.
  const inner = await frame.locator('body').evaluate((b) => Math.ceil(b.getBoundingClientRect().height));
  assert(Math.abs(full - inner) <= 1, `frame height ${full}, its content ${inner}`);
  // The open cell is marked, the host did not scroll to it, nor did the frame.
  assert((await frame.locator('#step-list td.selected').count()) === 1, 'the open cell is not marked');
  assert((await page.evaluate(() => scrollY)) === 0, `the host page scrolled to ${await page.evaluate(() => scrollY)}`);
  assert((await frame.locator('html').evaluate(() => scrollY)) === 0, 'the frame scrolled');
  // Numbers on screen: the weights of seed 000.
  const cells = await frame
    .locator('#step-list article[data-key="weights:0"] table.matrix tbody tr')
    .evaluateAll((rows) => rows.map((r) => [...r.querySelectorAll('td')].map((td) => td.textContent)));
  assertMatrix(
    cells.map((r) => r.map(shown)),
    weightsOf(preset000),
    'framed weights',
    6e-5,
  );
  // Folding every step shrinks the frame; unfolding grows it back.
  const folds = await frame.locator('#step-list article.step button.fold').count();
  assert(folds >= 5, `only ${folds} fold buttons`);
  for (let i = 0; i < folds; i++) await frame.locator('#step-list article.step button.fold').nth(i).click();
  const folded = await settle();
  assert(folded < full - 500, `folding ${folds} steps: frame ${full} → ${folded} px`);
  const inner2 = await frame.locator('body').evaluate((b) => Math.ceil(b.getBoundingClientRect().height));
  assert(Math.abs(folded - inner2) <= 1, `folded: frame ${folded}, content ${inner2}`);
  for (let i = 0; i < folds; i++) await frame.locator('#step-list article.step button.fold').nth(i).click();
  const unfolded = await settle();
  assert(Math.abs(unfolded - full) <= 2, `unfolded: ${unfolded}, first ${full}`);
  await page.screenshot({ path: join(root, 'test-artifacts', 'embeds-canvas-host.png') });
  // A host that does not resize (a fixed 600 px frame in a long page): the embed with an open
  // cell still opens at its top, and the host page stays where it was.
  const fixed = hostPage(
    'fixed.html',
    `<h1>Week 3</h1><iframe src="${src.replace(/&/g, '&amp;')}" width="100%" height="600" frameborder="0"></iframe>
<div style="height:3000px">More course text.</div>`,
  );
  await page.goto(`${host}${fixed}`);
  await frame.locator('body[data-ready="true"]').waitFor();
  await frame.locator('#step-list td.selected').waitFor();
  await page.waitForTimeout(300);
  const scrolls = [await page.evaluate(() => scrollY), await frame.locator('html').evaluate(() => scrollY)];
  assert(scrolls[0] === 0 && scrolls[1] === 0, `host / frame scrolled to ${scrolls} with an open cell`);
});

test('unknown hide/lock words are named on the page; input: and step: hide one of a name', async ({ page, base }) => {
  const hash = await stateHash(page, base, { preset: '000' });
  const cards = () => page.$$eval('#step-list article', (a) => a.map((e) => `${e.dataset.step}:${e.dataset.head}`));
  const editors = () => page.$$eval('#editors .editor', (eds) => eds.filter((e) => !e.hidden).map((e) => e.dataset.input));
  await page.goto(`${base}index.html?embed=1#${hash}`);
  await page.waitForSelector('body[data-ready="true"]');
  assert((await page.locator('#flag-error').count()) === 0, 'a message without unknown words');
  const allCards = await cards();
  assert(allCards.includes('Q:0') && allCards.includes('K:0'), `seed 000 cards: ${allCards}`);
  assert((await editors()).join() === 'Q,K,V', `seed 000 editors: ${await editors()}`);
  await page.goto(`${base}index.html?embed=1&hide=wieghts,step:Q,input:K,why&lock=everything,V#${hash}`);
  await page.waitForSelector('body[data-ready="true"]');
  const text = await page.$eval('#flag-error', (e) => e.textContent);
  assert(/hide=wieghts: not a panel/.test(text) && /lock=everything: not an input/.test(text), `flag message: ${text}`);
  assert(!/step:Q|input:K|why|V;/.test(text.replace(/\(.*?\)/g, '')), `known words named as unknown: ${text}`);
  assert(await page.$eval('#why', (e) => e.hidden), 'hide=why not applied next to an unknown word');
  const shownCards = await cards();
  assert(
    !shownCards.includes('Q:0') && shownCards.includes('K:0') && shownCards.includes('weights:0'),
    `step:Q, input:K: cards ${shownCards}`,
  );
  assert((await editors()).join() === 'Q,V', `step:Q, input:K: editors ${await editors()}`);
  assert(await page.$eval('.editor[data-input="V"]', (e) => e.inert), 'lock=V not applied next to an unknown word');
});

test('embed builder: checkboxes from the page, a live preview at the chosen size, the snippet', async ({ page, base }) => {
  await page.goto(`${base}index.html`);
  await page.waitForSelector('body[data-ready="true"]');
  await page.selectOption('#preset', '000');
  await page.click('#embed-options summary');
  const hideLabels = await page.$$eval('#embed-hide label', (ls) => ls.map((l) => l.textContent.trim()));
  for (const want of ['Panel: Why divide by √dk?', 'Panel: Worked calculation', 'Input Q', 'Input V']) {
    assert(hideLabels.includes(want), `hide choices lack "${want}": ${hideLabels.join(' | ')}`);
  }
  assert(
    hideLabels.some((l) => /^Step: .*weights/i.test(l)),
    `no weights step choice: ${hideLabels.join(' | ')}`,
  );
  await page.check('#embed-hide input[value="why"]');
  await page.check('#embed-hide input[value="step:scores"]');
  await page.check('#embed-lock input[value="inputs"]');
  await page.selectOption('#embed-width', '640');
  await page.fill('#embed-height', '500');
  await page.waitForFunction(() => /width="640" height="500"/.test(document.getElementById('embed-snippet').value));
  const snippet = await page.$eval('#embed-snippet', (t) => t.value);
  assert(
    /^<iframe src="[^"]+\?embed=1&amp;hide=why,step:scores&amp;lock=inputs#v2=[^"]+" width="640" height="500" name="attention-explorer" frameborder="0" scrolling="auto" allowfullscreen><\/iframe>$/.test(
      snippet,
    ),
    `snippet: ${snippet}`,
  );
  await page.click('#embed-preview-toggle');
  const preview = page.frameLocator('#embed-preview');
  await preview.locator('body[data-ready="true"]').waitFor();
  const box = await page.$eval('#embed-preview', (f) => [f.getBoundingClientRect().width, f.getBoundingClientRect().height]);
  assert(Math.round(box[0]) === 640 && Math.round(box[1]) === 500, `preview size ${box}`);
  const steps = await preview.locator('#step-list article').evaluateAll((a) => a.map((e) => e.dataset.step));
  assert(!steps.includes('scores') && steps.includes('weights'), `preview steps: ${steps}`);
  assert(await preview.locator('#why').evaluate((e) => e.hidden), 'the preview shows the why panel');
  assert(await preview.locator('#inputs').evaluate((e) => e.inert), 'the preview inputs are not locked');
  const cells = await preview
    .locator('#step-list article[data-key="weights:0"] table.matrix tbody tr')
    .evaluateAll((rows) => rows.map((r) => [...r.querySelectorAll('td')].map((td) => td.textContent)));
  assertMatrix(
    cells.map((r) => r.map(shown)),
    weightsOf(preset000),
    'preview weights',
    6e-5,
  );
  // A change of the checkboxes reaches the preview.
  await page.uncheck('#embed-hide input[value="step:scores"]');
  await page.waitForFunction(() => !document.getElementById('embed-preview').getAttribute('src').includes('step:scores'));
  await preview.locator('#step-list article[data-step="scores"]').first().waitFor();
  // Hidden again, the preview's frame is gone (it would keep a whole explorer loaded).
  await page.click('#embed-preview-toggle');
  assert((await page.locator('#embed-preview').count()) === 0, 'the hidden preview keeps its frame');
});

// ---- the package from a CDN, the component in docs sites ----------------------------------------

test('from a CDN origin with CORS: the component finds its .wasm beside it; inserted late, removed and re-inserted', async ({
  page,
  base,
  siteDir,
  requests,
}) => {
  const { cdn, host } = await origins(siteDir, base);
  const name = hostPage(
    'cdn.html',
    `<h1>Attention</h1><div id="slot"><attention-explorer id="a" preset="000" editable="Q" steps="weights"></attention-explorer></div>
<div id="later"></div>`,
    `<script type="module" src="${cdn}component.js"></script>`,
  );
  await page.goto(`${host}${name}`);
  const a = page.locator('#a');
  await page.waitForFunction(() => document.getElementById('a').shadowRoot?.querySelector('table[data-step="weights"]'));
  assertMatrix(
    (await componentWeights(a)).map((r) => r.map(shown)),
    weightsOf(preset000),
    'CDN component weights',
    6e-5,
  );
  assert(
    requests.some((u) => u === `${cdn}attention.wasm`),
    `attention.wasm not fetched from the CDN: ${requests.filter((u) => u.includes('wasm'))}`,
  );
  // The reader edits Q[1][1]; then a route change removes the element and puts it back.
  const edited = structuredClone(preset000);
  edited.Q[0][0] = 2;
  await a.evaluate((el) => {
    const input = el.shadowRoot.querySelector('input[data-input="Q"][data-r="0"][data-c="0"]');
    input.value = '2';
    input.dispatchEvent(new Event('change', { bubbles: true }));
  });
  assertMatrix(
    (await componentWeights(a)).map((r) => r.map(shown)),
    weightsOf(edited),
    'weights after the edit',
    6e-5,
  );
  await page.evaluate(() => {
    const el = document.getElementById('a');
    el.remove();
    return new Promise((r) =>
      setTimeout(() => {
        document.getElementById('slot').append(el);
        r();
      }, 50),
    );
  });
  await page.waitForTimeout(200);
  assertMatrix(
    (await componentWeights(a)).map((r) => r.map(shown)),
    weightsOf(edited),
    'weights after re-insertion',
    6e-5,
  );
  // A page swapped in after load (MkDocs instant navigation, a VitePress route): a new element
  // made from HTML initialises itself.
  await page.evaluate(() => {
    document.getElementById('later').innerHTML = '<attention-explorer id="b" preset="001" steps="weights"></attention-explorer>';
  });
  await page.waitForFunction(() => document.getElementById('b').shadowRoot?.querySelector('table[data-step="weights"]'));
  const preset001 = pkg.presetProblem(pkg.findPreset('001'), engine).problem;
  assertMatrix(
    (await componentWeights(page.locator('#b'))).map((r) => r.map(shown)),
    weightsOf(preset001),
    'late element weights',
    6e-5,
  );
});

test('a host whose CSP lacks wasm-unsafe-eval: the component says so inside itself and points to the iframe', async ({ base, siteDir }) => {
  const { cdn, strict } = await origins(siteDir, base);
  const name = hostPage(
    'csp.html',
    '<h1>Strict course page</h1><attention-explorer id="a" preset="000"></attention-explorer>',
    `<script type="module" src="${cdn}component.js"></script>`,
  );
  // Its own browser: the blocked compile is logged to the console, which the suite counts as a failure.
  const browser = await launchBrowser();
  try {
    const page = await browser.newPage();
    await page.addInitScript(() => {
      window.violations = [];
      document.addEventListener('securitypolicyviolation', (e) => window.violations.push(`${e.effectiveDirective} ${e.blockedURI}`));
    });
    await page.goto(`${strict}${name}`);
    await page.waitForFunction(() => document.getElementById('a').shadowRoot?.querySelector('.error'));
    const message = await page.$eval('#a', (el) => el.shadowRoot.querySelector('.error').textContent);
    assert(
      /Content-Security-Policy does not allow WebAssembly/.test(message) && /'wasm-unsafe-eval'/.test(message) && /<iframe>/.test(message),
      `message: ${message}`,
    );
    assert((await page.$eval('#a', (el) => el.shadowRoot.querySelectorAll('table').length)) === 0, 'tables drawn without an engine');
    // The browser blocked it for the policy's reason (not, say, a missing file).
    const violations = await page.evaluate(() => window.violations);
    assert(
      violations.some((v) => /^script-src wasm-eval/.test(v)),
      `no WebAssembly CSP violation reported: ${violations.join(' | ')}`,
    );
  } finally {
    await browser.close();
  }
});

// ---- the anywidget module -----------------------------------------------------------------------

test('anywidget: a minimal model host; the host sets problem, the widget sets trace; the reader edits, the model hears', async ({
  page,
  base,
  siteDir,
}) => {
  const { cdn, host } = await origins(siteDir, base);
  const name = hostPage(
    'widget.html',
    '<div id="out"></div>',
    `<script type="module">
import widget from '${cdn}widget.js';
// The part of anywidget's model API the contract uses; change events fire on set, as Backbone's do.
class Model {
  constructor(data) { this.data = data; this.handlers = {}; this.saves = 0; }
  get(key) { return this.data[key]; }
  set(key, value) { this.data[key] = value; for (const f of this.handlers['change:' + key] ?? []) f(); }
  on(event, f) { (this.handlers[event] ??= []).push(f); }
  off(event, f) { this.handlers[event] = (this.handlers[event] ?? []).filter((g) => g !== f); }
  save_changes() { this.saves += 1; }
}
const model = new Model({ problem: { Q: [[1, 0], [0, 1]], K: [[1, 0], [0, 1]], V: [[1, 2], [3, 4]] }, steps: 'weights,output' });
widget.initialize({ model });
window.cleanup = widget.render({ model, el: document.getElementById('out') });
window.model = model;
</script>`,
  );
  await page.goto(`${host}${name}`);
  await page.waitForFunction(() => window.model?.get('trace'));
  const p1 = {
    Q: [
      [1, 0],
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
  };
  const trace1 = await page.evaluate(() => window.model.get('trace'));
  assertMatrix(trace1.steps.find((s) => s.id === 'weights').data, weightsOf(p1), 'trace weights', 1e-12);
  assertMatrix(trace1.output, engine.run(p1).output, 'trace output', 1e-12);
  const el = page.locator('#out attention-explorer');
  assertMatrix(
    (await componentWeights(el)).map((r) => r.map(shown)),
    weightsOf(p1),
    'widget weights on screen',
    6e-5,
  );
  // Host → widget: a new problem redraws and sets the trace.
  const p2 = {
    Q: [
      [2, 0],
      [0, 1],
      [1, 1],
    ],
    K: [
      [1, 0],
      [0, 2],
      [1, 1],
    ],
    V: [
      [1, 0],
      [0, 1],
      [5, 5],
    ],
  };
  await page.evaluate((p) => window.model.set('problem', p), p2);
  await page.waitForFunction(() => window.model.get('trace')?.steps.find((s) => s.id === 'weights').data.length === 3);
  const trace2 = await page.evaluate(() => window.model.get('trace'));
  assertMatrix(trace2.steps.find((s) => s.id === 'weights').data, weightsOf(p2), 'trace after the host set problem', 1e-12);
  assertMatrix(
    (await componentWeights(el)).map((r) => r.map(shown)),
    weightsOf(p2),
    'redrawn weights',
    6e-5,
  );
  // Widget → host: the reader edits Q[2][1]; problem and trace are set and saved.
  const savesBefore = await page.evaluate(() => window.model.saves);
  await el.evaluate((x) => {
    const input = x.shadowRoot.querySelector('input[data-input="Q"][data-r="1"][data-c="0"]');
    input.value = '3';
    input.dispatchEvent(new Event('change', { bubbles: true }));
  });
  const p3 = structuredClone(p2);
  p3.Q[1][0] = 3;
  const after3 = await page.evaluate(() => ({
    problem: window.model.get('problem'),
    trace: window.model.get('trace'),
    saves: window.model.saves,
  }));
  assert(JSON.stringify(after3.problem.Q) === JSON.stringify(p3.Q), `model problem after the edit: ${JSON.stringify(after3.problem)}`);
  assert(after3.saves > savesBefore, 'save_changes not called after the edit');
  assertMatrix(after3.trace.steps.find((s) => s.id === 'weights').data, weightsOf(p3), 'trace after the edit', 1e-12);
  // A bad problem from the host: trace null, the element says why.
  await page.evaluate(() => window.model.set('problem', { Q: [[1, 2]], K: [[1, 2, 3]], V: [[1]] }));
  assert((await page.evaluate(() => window.model.get('trace'))) === null, 'trace not null for a bad problem');
  const error = await el.evaluate((x) => x.shadowRoot.querySelector('.error')?.textContent ?? '');
  assert(/columns/.test(error), `error shown: ${error}`);
  // The view's cleanup stops listening.
  await page.evaluate(() => window.cleanup());
  assert((await page.locator('#out attention-explorer').count()) === 0, 'cleanup left the element');
});

// ---- real docs sites ------------------------------------------------------------------------------

// Debian's mkdocs (with mkdocs-material, which the build then needs).
const hasMkdocs = spawnSync('mkdocs', ['--version']).status === 0;

/**
 * A two-page MkDocs Material site with instant navigation, the package in docs/lib/, built for
 * `siteUrl` (instant navigation only follows links under site_url); returns its built folder.
 */
function mkdocsSite(siteDir, siteUrl = 'http://127.0.0.1/') {
  const dir = join(hostDir, 'mkdocs');
  mkdirSync(join(dir, 'overrides'), { recursive: true });
  cpSync(join(siteDir, 'lib'), join(dir, 'docs', 'lib'), { recursive: true });
  // font: false: Material would otherwise load Google Fonts, which a machine without network refuses.
  writeFileSync(
    join(dir, 'mkdocs.yml'),
    `site_name: Attention course
site_url: ${siteUrl}
use_directory_urls: false
theme:
  name: material
  custom_dir: overrides
  font: false
  features: [navigation.instant]
plugins: []
nav:
  - One: index.md
  - Two: two.md
`,
  );
  writeFileSync(
    join(dir, 'overrides', 'main.html'),
    `{% extends "base.html" %}
{% block scripts %}
  {{ super() }}
  <script type="module" src="{{ 'lib/component.js' | url }}"></script>
{% endblock %}
`,
  );
  writeFileSync(
    join(dir, 'docs', 'index.md'),
    '# One\n\n<attention-explorer id="explorer-one" preset="000" steps="weights"></attention-explorer>\n\nNext: [page two](two.md)\n',
  );
  writeFileSync(
    join(dir, 'docs', 'two.md'),
    '# Two\n\n<attention-explorer id="explorer-two" preset="001" steps="weights"></attention-explorer>\n\nBack to [page one](index.md)\n',
  );
  const build = spawnSync('mkdocs', ['build', '-q', '-d', join(dir, 'site')], { cwd: dir, encoding: 'utf8' });
  if (build.status !== 0) throw new Error(`mkdocs build failed: ${build.stderr}`);
  return join(dir, 'site');
}

if (hasMkdocs) {
  test('MkDocs Material with navigation.instant: the component on two pages, navigated between without a reload', async ({
    page,
    base,
    siteDir,
  }) => {
    await origins(siteDir, base);
    const site = await startServer(mkdocsSite(siteDir));
    servers.children.push(site.child);
    mkdocsSite(siteDir, site.url); // again, for the address it is served at
    await page.goto(`${site.url}index.html`);
    const numbers = (id) =>
      page
        .waitForFunction((i) => document.getElementById(i)?.shadowRoot?.querySelector('table[data-step="weights"]'), id)
        .then(() => componentWeights(page.locator(`#${id}`)));
    assertMatrix(
      (await numbers('explorer-one')).map((r) => r.map(shown)),
      weightsOf(preset000),
      'MkDocs page one',
      6e-5,
    );
    await page.evaluate(() => {
      window.sameDocument = true;
    });
    await page.click('article a[href="two.html"]');
    const preset001 = pkg.presetProblem(pkg.findPreset('001'), engine).problem;
    assertMatrix(
      (await numbers('explorer-two')).map((r) => r.map(shown)),
      weightsOf(preset001),
      'MkDocs page two',
      6e-5,
    );
    assert(await page.evaluate(() => window.sameDocument === true), 'page two was a full reload, not instant navigation');
    await page.click('article a[href="index.html"]');
    await page.waitForFunction(() => document.getElementById('explorer-one'));
    assertMatrix(
      (await numbers('explorer-one')).map((r) => r.map(shown)),
      weightsOf(preset000),
      'MkDocs page one again',
      6e-5,
    );
    assert(await page.evaluate(() => window.sameDocument === true), 'back to page one was a full reload');
  });
} else {
  plainTest(
    'MkDocs Material with navigation.instant',
    { skip: 'mkdocs-material is not installed (apt-get install mkdocs-material)' },
    () => {},
  );
}
