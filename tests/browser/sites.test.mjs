// Real sites built with the tools course authors use, loaded in Chromium with no network:
//   node --test tests/browser/sites.test.mjs
// - a VitePress site (npm vitepress, its own CLI build): the component on two pages, loaded the way
//   docs/recipes.md says (the theme imports attention-explorer/component, Vite bundles its .wasm);
//   navigated 1 -> 2 -> 1 by the site's own links, with no reload;
// - a reveal.js deck (npm reveal.js's dist): the iframe embed on slide 2 (data-src: reveal loads
//   and unloads it), the component on slide 3; moved 1 -> 2 -> 3 -> 2 -> 3 by keyboard, a reader's
//   edit in each kept across the unload.
// Each step asserts the numbers on screen against engine.run's weights.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { after } from 'node:test';
import { fileURLToPath } from 'node:url';

import { assert, assertMatrix, browserSuite, shown, startServer } from './server.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const pkg = await import(join(root, 'dist', 'node.js'));
const engine = await pkg.loadAttention();

const test = browserSuite('sites', {
  contextPerTest: true,
  contextOptions: { viewport: { width: 1100, height: 800 } },
  timeout: 20000,
  screenshots: 'sites-',
  httpErrors: true,
});

const weightsOf = (problem) => engine.run(problem).steps.find((s) => s.id === 'weights').data;
const presetOf = (id) => pkg.presetProblem(pkg.findPreset(id), engine).problem;

const work = mkdtempSync(join(tmpdir(), 'attention-sites-'));
const children = [];
after(() => {
  for (const child of children) child.kill();
  rmSync(work, { recursive: true, force: true });
});

/** Serves a built folder for the rest of the suite; returns its URL. */
async function serve(dir, headers) {
  const server = await startServer(dir, headers);
  children.push(server.child);
  return server.url;
}

/** The weights of the <attention-explorer> with this id (its Shadow DOM), once drawn, as numbers. */
async function componentWeights(page, id) {
  await page.waitForFunction((i) => document.getElementById(i)?.shadowRoot?.querySelector('table[data-step="weights"]'), id);
  const cells = await page
    .locator(`#${id}`)
    .evaluate((el) =>
      [...el.shadowRoot.querySelectorAll('table[data-step="weights"] tbody tr')].map((r) =>
        [...r.querySelectorAll('td')].map((td) => td.textContent),
      ),
    );
  return cells.map((r) => r.map(shown));
}

/** A reader's edit of one input cell of a component: types the value and commits it. */
async function editComponent(page, id, input, r, c, value) {
  await page.locator(`#${id}`).evaluate(
    (el, [name, row, col, v]) => {
      const cell = el.shadowRoot.querySelector(`input[data-input="${name}"][data-r="${row}"][data-c="${col}"]`);
      cell.value = v;
      cell.dispatchEvent(new Event('change', { bubbles: true }));
    },
    [input, r, c, String(value)],
  );
}

// ---- VitePress ----------------------------------------------------------------------------------

/**
 * A two-page VitePress site set up as docs/recipes.md says, with the package "installed" (its
 * package.json and dist/ in node_modules/attention-explorer) next to vitepress and vue; built with
 * the vitepress CLI. Returns the built folder.
 */
function vitepressSite() {
  const dir = join(work, 'vitepress');
  mkdirSync(join(dir, '.vitepress', 'theme'), { recursive: true });
  mkdirSync(join(dir, 'node_modules', 'attention-explorer'), { recursive: true });
  for (const name of ['vitepress', 'vue']) symlinkSync(join(root, 'node_modules', name), join(dir, 'node_modules', name), 'dir');
  cpSync(join(root, 'package.json'), join(dir, 'node_modules', 'attention-explorer', 'package.json'));
  cpSync(join(root, 'dist'), join(dir, 'node_modules', 'attention-explorer', 'dist'), { recursive: true });
  writeFileSync(join(dir, 'package.json'), '{ "type": "module", "private": true }\n');
  // The config and theme exactly as in docs/recipes.md (title and icon aside).
  writeFileSync(
    join(dir, '.vitepress', 'config.mjs'),
    `import { defineConfig } from 'vitepress';
export default defineConfig({
  title: 'Attention course',
  head: [['link', { rel: 'icon', href: 'data:,' }]], // no /favicon.ico request (a 404 here)
  vue: { template: { compilerOptions: { isCustomElement: (tag) => tag === 'attention-explorer' } } },
});
`,
  );
  writeFileSync(
    join(dir, '.vitepress', 'theme', 'index.js'),
    `import DefaultTheme from 'vitepress/theme';
export default {
  extends: DefaultTheme,
  async enhanceApp() {
    if (!import.meta.env.SSR) await import('attention-explorer/component'); // the browser only
  },
};
`,
  );
  writeFileSync(
    join(dir, 'index.md'),
    '# One\n\n<attention-explorer id="explorer-one" preset="000" steps="weights" editable="Q"></attention-explorer>\n\nNext: [page two](./two)\n',
  );
  writeFileSync(
    join(dir, 'two.md'),
    '# Two\n\n<attention-explorer id="explorer-two" preset="001" steps="weights"></attention-explorer>\n\nBack to [page one](./)\n',
  );
  const build = spawnSync(process.execPath, [join(root, 'node_modules', 'vitepress', 'bin', 'vitepress.js'), 'build'], {
    cwd: dir,
    encoding: 'utf8',
  });
  if (build.status !== 0) throw new Error(`vitepress build failed:\n${build.stdout}\n${build.stderr}`);
  return join(dir, '.vitepress', 'dist');
}

test('VitePress: the component on two pages, loaded by the theme as the recipe says, route changes without a reload', async ({
  page,
  requests,
}) => {
  const site = await serve(vitepressSite());
  await page.goto(site);
  assertMatrix(await componentWeights(page, 'explorer-one'), weightsOf(presetOf('000')), 'VitePress page one', 6e-5);
  // Vite bundled the .wasm beside the site's assets (found with new URL(..., import.meta.url)).
  assert(
    requests.some((u) => new RegExp(`^${site}assets/attention\\.[\\w-]+\\.wasm$`).test(u)),
    `no bundled attention.wasm fetched: ${requests.filter((u) => u.includes('.wasm')).join(', ') || 'none'}`,
  );
  await page.evaluate(() => {
    window.sameDocument = true;
  });
  await page.click('.vp-doc a:text("page two")');
  await page.waitForURL(`${site}two.html`);
  assertMatrix(await componentWeights(page, 'explorer-two'), weightsOf(presetOf('001')), 'VitePress page two', 6e-5);
  assert((await page.locator('#explorer-one').count()) === 0, "page one's element is still there on page two");
  assert(await page.evaluate(() => window.sameDocument === true), 'page two was a full reload, not a route change');
  await page.click('.vp-doc a:text("page one")');
  await page.waitForURL(site);
  assertMatrix(await componentWeights(page, 'explorer-one'), weightsOf(presetOf('000')), 'VitePress page one again', 6e-5);
  assert(await page.evaluate(() => window.sameDocument === true), 'back to page one was a full reload');
  // The new element on the page is live: the reader's edit recomputes.
  const edited = structuredClone(presetOf('000'));
  edited.Q[0][0] = 2;
  await editComponent(page, 'explorer-one', 'Q', 0, 0, 2);
  assertMatrix(await componentWeights(page, 'explorer-one'), weightsOf(edited), 'VitePress page one after an edit', 6e-5);
});

// ---- reveal.js ----------------------------------------------------------------------------------

/**
 * A three-slide reveal.js deck as in docs/recipes.md: reveal.js's dist/ copied into the deck, the
 * iframe embed of the explorer site at `frameSrc` on slide 2 (data-src), the component (the package
 * copied beside the deck, as self-hosting does) on slide 3. Returns the deck's folder.
 */
function revealDeck(siteDir, frameSrc) {
  const dir = join(work, 'reveal');
  cpSync(join(root, 'node_modules', 'reveal.js', 'dist'), join(dir, 'reveal'), { recursive: true });
  cpSync(join(siteDir, 'lib'), join(dir, 'attention'), { recursive: true });
  writeFileSync(
    join(dir, 'index.html'),
    `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>Attention, the deck</title>
<link rel="stylesheet" href="reveal/reveal.css"><link rel="stylesheet" href="reveal/theme/white.css">
</head><body><div class="reveal"><div class="slides">
<section><h2>Attention</h2></section>
<section>
  <h3>The whole explorer</h3>
  <iframe data-src="${frameSrc.replace(/&/g, '&amp;')}"
          width="100%" height="600" frameborder="0"></iframe>
</section>
<section>
  <h3>Change Q</h3>
  <attention-explorer id="deck-explorer" preset="000" steps="weights,output" editable="Q"></attention-explorer>
</section>
</div></div>
<script src="reveal/reveal.js"></script>
<script>Reveal.initialize({ hash: true });</script>
<script type="module" src="attention/component.js"></script>
</body></html>
`,
  );
  return dir;
}

test('reveal.js: the iframe (data-src) on slide 2, the component on slide 3, 1 -> 2 -> 3 -> 2 -> 3 by keyboard, edits kept', async ({
  page,
  base,
  siteDir,
}) => {
  const share = await import(join(root, 'dist', 'share.js'));
  const frameSrc = `${base}index.html?embed=1&hide=setup,why#${await share.encodeStateString({ preset: '000' })}`;
  const deck = await serve(revealDeck(siteDir, frameSrc));
  await page.goto(deck);
  await page.waitForFunction(() => window.Reveal?.isReady());
  const iframe = page.locator('.slides iframe');
  const frame = page.frameLocator('.slides iframe');
  const slide = () => page.evaluate(() => window.Reveal.getIndices().h);
  /** A key pressed in the deck (not in a frame or a field that has the focus), then the slide it leads to. */
  const key = async (name, to) => {
    await page.evaluate(() => document.activeElement?.blur());
    await page.keyboard.press(name);
    await page.waitForFunction((h) => window.Reveal.getIndices().h === h, to);
  };
  const frameWeights = async () => {
    await frame.locator('body[data-ready="true"]').waitFor();
    const cells = await frame
      .locator('#step-list article[data-key="weights:0"] table.matrix tbody tr')
      .evaluateAll((rows) => rows.map((r) => [...r.querySelectorAll('td')].map((td) => td.textContent)));
    return cells.map((r) => r.map(shown));
  };
  const preset000 = presetOf('000');
  // Slide 1: reveal has not loaded the frame (data-src, no data-preload).
  assert((await slide()) === 0, `the deck opened on slide ${(await slide()) + 1}`);
  assert((await iframe.getAttribute('src')) === null, 'the frame loaded before its slide');

  // Slide 2: the frame loads with the problem of its address; the reader edits Q in it.
  await key('ArrowRight', 1);
  assert((await iframe.getAttribute('src')) === frameSrc, `frame src ${await iframe.getAttribute('src')}`);
  assertMatrix(await frameWeights(), weightsOf(preset000), 'slide 2, the frame', 6e-5);
  await frame.locator('html').evaluate(() => {
    window.firstLoad = true;
  });
  const inFrame = structuredClone(preset000);
  inFrame.Q[1][0] = 3;
  await frame.locator('.editor[data-input="Q"] input.cell[data-r="1"][data-c="0"]').fill('3');
  assertMatrix(await frameWeights(), weightsOf(inFrame), 'slide 2, the frame after the edit', 6e-5);
  // The frame has written the edit into its own address (what it reopens with). Its first write
  // may be the example's own state in the page's words, so the hash is read, not just seen to change.
  const holdsEdit = async () => {
    const { state } = await share.decodeStateString(await frame.locator('html').evaluate(() => location.hash));
    const q = state?.inputs?.Q?.text; // absent while the address is still the deck's {preset: '000'}
    return typeof q === 'string' && engine.parseMatrix(q, 'Q')[1][0] === 3;
  };
  for (let tries = 0; !(await holdsEdit()); tries += 1) {
    assert(tries < 300, 'the frame did not write the edit into its address');
    await new Promise((done) => setTimeout(done, 50));
  }

  // Slide 3: reveal unloaded the frame; the component shows its example; the reader edits it.
  await key('ArrowRight', 2);
  assert((await iframe.getAttribute('src')) === null, 'the frame is still loaded on slide 3');
  assertMatrix(await componentWeights(page, 'deck-explorer'), weightsOf(preset000), 'slide 3, the component', 6e-5);
  const inComponent = structuredClone(preset000);
  inComponent.Q[0][1] = -1.5;
  await editComponent(page, 'deck-explorer', 'Q', 0, 1, -1.5);
  assertMatrix(await componentWeights(page, 'deck-explorer'), weightsOf(inComponent), 'slide 3, the component after the edit', 6e-5);

  // Back to slide 2: a new load of the frame (from its data-src), with the reader's edit.
  await key('ArrowLeft', 1);
  assert((await iframe.getAttribute('src')) === frameSrc, `frame src after coming back ${await iframe.getAttribute('src')}`);
  assertMatrix(await frameWeights(), weightsOf(inFrame), 'slide 2 again, the frame keeps the edit', 6e-5);
  assert(await frame.locator('html').evaluate(() => window.firstLoad === undefined), 'the frame was not reloaded');
  const q = await frame.locator('.editor[data-input="Q"] input.cell[data-r="1"][data-c="0"]').inputValue();
  assert(shown(q) === 3, `the frame's Q[2][1] editor shows ${q}`);

  // Slide 3 again: the component kept its edit.
  const shown3 = page.evaluate(
    () => new Promise((done) => document.querySelector('.reveal').addEventListener('slidetransitionend', done, { once: true })),
  );
  await key('ArrowRight', 2);
  assertMatrix(await componentWeights(page, 'deck-explorer'), weightsOf(inComponent), 'slide 3 again, the component keeps the edit', 6e-5);
  const output = await page
    .locator('#deck-explorer')
    .evaluate((el) =>
      [...el.shadowRoot.querySelectorAll('table[data-step="output"] tbody tr')].map((r) =>
        [...r.querySelectorAll('td')].map((td) => td.textContent),
      ),
    );
  assertMatrix(
    output.map((r) => r.map(shown)),
    engine.run(inComponent).output,
    'slide 3 again, the output',
    6e-4,
  );
  await shown3; // the slide in place, for the picture
  await page.screenshot({ path: join(root, 'test-artifacts', 'sites-reveal-slide-3.png') });
});
