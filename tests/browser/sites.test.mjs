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

import { browserSuite, startServer } from './server.mjs';

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

function assert(cond, message) {
  if (!cond) throw new Error(message);
}
const shown = (t) => Number(String(t).trim().replace(/\u2212/g, '-'));
function assertMatrix(actual, expected, what, tol) {
  assert(actual.length === expected.length, `${what}: ${actual.length} rows, expected ${expected.length}`);
  actual.forEach((row, i) => {
    assert(row.length === expected[i].length, `${what} row ${i + 1}: ${row.length} values, expected ${expected[i].length}`);
    row.forEach((v, j) => assert(Math.abs(v - expected[i][j]) <= tol, `${what}[${i}][${j}] = ${v}, expected ${expected[i][j]}`));
  });
}
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
  const cells = await page.locator(`#${id}`).evaluate((el) => [...el.shadowRoot.querySelectorAll('table[data-step="weights"] tbody tr')]
    .map((r) => [...r.querySelectorAll('td')].map((td) => td.textContent)));
  return cells.map((r) => r.map(shown));
}

/** A reader's edit of one input cell of a component: types the value and commits it. */
async function editComponent(page, id, input, r, c, value) {
  await page.locator(`#${id}`).evaluate((el, [name, row, col, v]) => {
    const cell = el.shadowRoot.querySelector(`input[data-input="${name}"][data-r="${row}"][data-c="${col}"]`);
    cell.value = v;
    cell.dispatchEvent(new Event('change', { bubbles: true }));
  }, [input, r, c, String(value)]);
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
  writeFileSync(join(dir, '.vitepress', 'config.mjs'), `import { defineConfig } from 'vitepress';
export default defineConfig({
  title: 'Attention course',
  head: [['link', { rel: 'icon', href: 'data:,' }]], // no /favicon.ico request (a 404 here)
  vue: { template: { compilerOptions: { isCustomElement: (tag) => tag === 'attention-explorer' } } },
});
`);
  writeFileSync(join(dir, '.vitepress', 'theme', 'index.js'), `import DefaultTheme from 'vitepress/theme';
export default {
  extends: DefaultTheme,
  async enhanceApp() {
    if (!import.meta.env.SSR) await import('attention-explorer/component'); // the browser only
  },
};
`);
  writeFileSync(join(dir, 'index.md'), '# One\n\n<attention-explorer id="explorer-one" preset="000" steps="weights" editable="Q"></attention-explorer>\n\nNext: [page two](./two)\n');
  writeFileSync(join(dir, 'two.md'), '# Two\n\n<attention-explorer id="explorer-two" preset="001" steps="weights"></attention-explorer>\n\nBack to [page one](./)\n');
  const build = spawnSync(process.execPath, [join(root, 'node_modules', 'vitepress', 'bin', 'vitepress.js'), 'build'], { cwd: dir, encoding: 'utf8' });
  if (build.status !== 0) throw new Error(`vitepress build failed:\n${build.stdout}\n${build.stderr}`);
  return join(dir, '.vitepress', 'dist');
}

test('VitePress: the component on two pages, loaded by the theme as the recipe says, route changes without a reload', async ({ page, requests }) => {
  const site = await serve(vitepressSite());
  await page.goto(site);
  assertMatrix(await componentWeights(page, 'explorer-one'), weightsOf(presetOf('000')), 'VitePress page one', 6e-5);
  // Vite bundled the .wasm beside the site's assets (found with new URL(..., import.meta.url)).
  assert(requests.some((u) => new RegExp(`^${site}assets/attention\\.[\\w-]+\\.wasm$`).test(u)),
    `no bundled attention.wasm fetched: ${requests.filter((u) => u.includes('.wasm')).join(', ') || 'none'}`);
  await page.evaluate(() => { window.sameDocument = true; });
  await page.click('.vp-doc a:text("page two")');
  await page.waitForURL(`${site}two.html`);
  assertMatrix(await componentWeights(page, 'explorer-two'), weightsOf(presetOf('001')), 'VitePress page two', 6e-5);
  assert(await page.locator('#explorer-one').count() === 0, 'page one\'s element is still there on page two');
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
