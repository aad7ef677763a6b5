#!/usr/bin/env node
// The page's two ways of being served, checked in Debian's Chromium (playwright-core):
//   node --test tests/browser/dev.test.mjs        (needs dist/: `npm run build`)
// - `npm run dev` (vite's dev server, vite.config.js) serves web/page and web/lib as they are,
//   with the compiled module from dist/ and KaTeX from node_modules under the site's URLs: the
//   page computes, and an edited page or package file shows after a refresh;
// - scripts/build-site.mjs applies the page's import map (web/page/importmap.json; a strict CSP
//   blocks inline maps) and refuses a page module that imports a name the map does not resolve.
// Both run on a copy of the repository's web/, scripts, vite.config.js and dist/ in a temporary
// folder, so the edits touch nothing in the repository; its node_modules holds links to the
// repository's packages, so vite's cache (node_modules/.vite) is the copy's own.
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';

import { launchBrowser } from './server.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const copy = mkdtempSync(join(tmpdir(), 'attention-dev-'));
for (const path of [
  'web',
  'dist',
  'package.json',
  'vite.config.js',
  'scripts/serve.mjs',
  'scripts/build-site.mjs',
  'scripts/chromium.mjs',
]) {
  cpSync(join(root, path), join(copy, path), { recursive: true });
}
mkdirSync(join(copy, 'node_modules'));
for (const name of readdirSync(join(root, 'node_modules')).filter((n) => n !== '.vite')) {
  symlinkSync(join(root, 'node_modules', name), join(copy, 'node_modules', name));
}

let server;
let base;
let browser;

before(async () => {
  server = spawn(process.execPath, [join(copy, 'node_modules', 'vite', 'bin', 'vite.js')], {
    cwd: copy,
    env: { ...process.env, PORT: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  base = await new Promise((resolveUrl, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`the dev server did not start: ${out}`)), 20000);
    server.stdout.on('data', (d) => {
      out += d;
      const m = /Attention explorer: (http:\/\/127\.0\.0\.1:\d+\/)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolveUrl(m[1]);
      }
    });
    server.stderr.on('data', (d) => {
      out += d;
    });
    server.on('exit', (code) => reject(new Error(`the dev server exited (${code}): ${out}`)));
  });
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  server?.kill();
  rmSync(copy, { recursive: true, force: true });
});

test("npm run dev: the sources as they are, the compiled module from dist/, under the site's URLs", async () => {
  for (const name of ['index.html', 'embedding.html', 'playground.html']) {
    const html = await (await fetch(`${base}${name}`)).text();
    assert.match(html, /<script type="module" src="\/?[\w-]+\.js"><\/script>/, `${name} is served without its module`);
    assert.doesNotMatch(html, /importmap/, `${name} is served with an import map: vite resolves the names`);
  }
  // The package's modules under lib/, from web/lib (vite serves them transformed: their imports as URLs).
  const share = await (await fetch(`${base}lib/share.js`)).text();
  assert.ok(share.includes('export async function encodeStateString'), 'lib/share.js is not web/lib/share.js');
  assert.match(await (await fetch(`${base}main.js`)).text(), /from "\/lib\/index\.js"/);
  const wasm = await fetch(`${base}lib/attention.wasm`);
  assert.equal(wasm.headers.get('content-type'), 'application/wasm');
  assert.equal(Buffer.from(await wasm.arrayBuffer()).compare(readFileSync(join(copy, 'dist', 'attention.wasm'))), 0);
  for (const file of ['katex.mjs', 'katex.min.js', 'fonts/KaTeX_Main-Regular.woff2']) {
    assert.equal((await fetch(`${base}vendor/katex/${file}`)).status, 200, `vendor/katex/${file}`);
  }
  // @noble/hashes, which the student view imports by name, resolved by vite.
  const student = await (await fetch(`${base}student.js`)).text();
  const noble = [...student.matchAll(/import\("([^"]*noble[^"]*)"\)/g)].map((m) => m[1]);
  assert.equal(noble.length, 3, `student.js's imports of @noble/hashes: ${noble}`);
  for (const url of noble) assert.equal((await fetch(new URL(url, base))).status, 200, url);
  assert.equal((await fetch(`${base}no-such-file.js`)).status, 404);
});

test('npm run dev: the page computes, and an edit shows after a refresh', async () => {
  const page = await browser.newPage();
  const problems = [];
  page.on('pageerror', (e) => problems.push(String(e)));
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(m.text());
  });
  try {
    await page.goto(`${base}index.html`);
    await page.waitForSelector('body[data-ready="true"]');
    const weights = await page.$$eval('article[data-key="weights:0"] tbody tr:first-child td', (tds) => tds.map((td) => td.textContent));
    assert.deepEqual(weights, ['0.7952', '0.0114', '0.1933']);
    await page.waitForSelector('#step-list .formula .katex', { timeout: 10000 });
    // Edited while no page is open (vite would reload an open one itself, racing a reload here).
    await page.goto('about:blank');
    const file = join(copy, 'web', 'page', 'index.html');
    writeFileSync(
      file,
      readFileSync(file, 'utf8').replace(
        'data-i18n="explorer.heading">Attention explorer</h1>',
        'data-i18n="explorer.heading">Attention explorer, edited</h1>',
      ),
    );
    const format = join(copy, 'web', 'lib', 'format.js');
    writeFileSync(format, `${readFileSync(format, 'utf8')}\nexport const EDITED = 'web/lib, edited';\n`);
    // vite notices the edit through its file watcher, a moment after the write.
    for (let i = 0; i < 50 && !(await (await fetch(`${base}lib/format.js`)).text()).includes('EDITED'); i++) {
      await new Promise((r) => setTimeout(r, 100));
    }
    await page.goto(`${base}index.html`);
    await page.waitForSelector('body[data-ready="true"]');
    assert.equal(await page.$eval('h1', (h) => h.textContent), 'Attention explorer, edited');
    assert.equal(await page.evaluate(() => import('/lib/format.js').then((m) => m.EDITED)), 'web/lib, edited');
    assert.deepEqual(problems, []);
  } finally {
    await page.close();
  }
});

test('build-site applies the import map, and refuses a name the map does not resolve', () => {
  const site = join(copy, 'site');
  const build = () => spawnSync(process.execPath, [join(copy, 'scripts', 'build-site.mjs'), '--out', site], { encoding: 'utf8' });
  let r = build();
  assert.equal(r.status, 0, r.stderr);
  for (const name of ['index.html', 'embedding.html']) {
    assert.doesNotMatch(readFileSync(join(site, name), 'utf8'), /import ?map/, `${name} kept its import map`);
  }
  assert.throws(() => readFileSync(join(site, 'importmap.json')), /ENOENT/);
  const main = readFileSync(join(site, 'main.js'), 'utf8');
  assert.match(main, /import \{ loadAttention \} from '\.\/lib\/index\.js';/);
  for (const name of readdirSync(site).filter((f) => f.endsWith('.js'))) {
    assert.doesNotMatch(readFileSync(join(site, name), 'utf8'), /from 'attention-explorer/, `${name} still imports by package name`);
  }
  mkdirSync(join(copy, 'web', 'page', 'extra'), { recursive: true });
  writeFileSync(join(copy, 'web', 'page', 'extra', 'stray.js'), "import { x } from 'not-mapped';\nexport { x };\n");
  r = build();
  assert.equal(r.status, 1);
  assert.match(r.stderr, /web\/page\/extra\/stray\.js imports 'not-mapped', which web\/page\/importmap\.json does not name/);
});
