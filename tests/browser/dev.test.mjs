#!/usr/bin/env node
// The page's two ways of being served, checked in Debian's Chromium (playwright-core):
//   node --test tests/browser/dev.test.mjs        (needs dist/: `npm run build`)
// - `npm run dev` (scripts/serve.mjs --dev) serves web/page and web/lib as they are (the HTML with
//   the page's import map, web/page/importmap.json, inline), with the compiled module from
//   dist/: the page computes, and an edited page file shows after a refresh;
// - scripts/build-site.mjs applies the page's import map (a strict CSP blocks inline maps) and
//   refuses a page module that imports a name the map does not resolve.
// Both run on a copy of the repository's web/, scripts and dist/ in a temporary folder, so the
// edits touch nothing in the repository.
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
for (const path of ['web', 'dist', 'package.json', 'scripts/serve.mjs', 'scripts/build-site.mjs', 'scripts/importmap.mjs', 'scripts/chromium.mjs']) {
  cpSync(join(root, path), join(copy, path), { recursive: true });
}
symlinkSync(join(root, 'node_modules'), join(copy, 'node_modules'));

let server;
let base;
let browser;

before(async () => {
  server = spawn(process.execPath, [join(copy, 'scripts', 'serve.mjs'), '--dev'], {
    env: { ...process.env, PORT: '0' }, stdio: ['ignore', 'pipe', 'pipe'],
  });
  base = await new Promise((resolveUrl, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`the dev server did not start: ${out}`)), 10000);
    server.stdout.on('data', (d) => {
      out += d;
      const m = /(http:\/\/127\.0\.0\.1:\d+\/)/.exec(out);
      if (m) { clearTimeout(timer); resolveUrl(m[1]); }
    });
    server.stderr.on('data', (d) => { out += d; });
    server.on('exit', (code) => reject(new Error(`the dev server exited (${code}): ${out}`)));
  });
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  server?.kill();
  rmSync(copy, { recursive: true, force: true });
});

test('npm run dev: the sources as they are, the compiled module from dist/', async () => {
  const source = readFileSync(join(copy, 'web', 'page', 'index.html'), 'utf8');
  const marker = '  <!-- import map: web/page/importmap.json, put here by scripts/importmap.mjs -->\n';
  assert.ok(source.includes(marker), 'index.html lost its import map marker');
  const map = JSON.parse(readFileSync(join(copy, 'web', 'page', 'importmap.json'), 'utf8'));
  assert.equal(map.imports['attention-explorer'], './lib/index.js');
  for (const name of ['index.html', 'embedding.html']) {
    const html = await (await fetch(`${base}${name}`)).text();
    const inline = /\n  <script type="importmap">\n([\s\S]*?)<\/script>\n/.exec(html);
    assert.ok(inline, `${name} is served without its import map`);
    assert.deepEqual(JSON.parse(inline[1]), map);
    if (name === 'index.html') assert.equal(html.replace(inline[0], `\n${marker}`), source);
  }
  const share = await fetch(`${base}lib/share.js`);
  assert.equal(await share.text(), readFileSync(join(copy, 'web', 'lib', 'share.js'), 'utf8'));
  assert.equal(share.headers.get('cache-control'), 'no-cache');
  const wasm = await fetch(`${base}lib/attention.wasm`);
  assert.equal(wasm.headers.get('content-type'), 'application/wasm');
  assert.equal(Buffer.from(await wasm.arrayBuffer()).compare(readFileSync(join(copy, 'dist', 'attention.wasm'))), 0);
  assert.equal((await fetch(`${base}vendor/katex/katex.mjs`)).status, 200);
  assert.equal((await fetch(`${base}vendor/noble-hashes/scrypt.js`)).status, 200);
  assert.equal((await fetch(`${base}no-such-file.js`)).status, 404);
});

test('npm run dev: the page computes, and an edit shows after a refresh', async () => {
  const page = await browser.newPage();
  const problems = [];
  page.on('pageerror', (e) => problems.push(String(e)));
  page.on('console', (m) => { if (m.type() === 'error') problems.push(m.text()); });
  try {
    await page.goto(`${base}index.html`);
    await page.waitForSelector('body[data-ready="true"]');
    const weights = await page.$$eval('article[data-key="weights:0"] tbody tr:first-child td', (tds) => tds.map((td) => td.textContent));
    assert.deepEqual(weights, ['0.7952', '0.0114', '0.1933']);
    assert.ok(await page.$eval('#step-list .formula', (f) => Boolean(f.querySelector('.katex'))), 'KaTeX did not render');
    const file = join(copy, 'web', 'page', 'index.html');
    writeFileSync(file, readFileSync(file, 'utf8').replace('<h1>Attention explorer</h1>', '<h1>Attention explorer, edited</h1>'));
    await page.reload();
    await page.waitForSelector('body[data-ready="true"]');
    assert.equal(await page.$eval('h1', (h) => h.textContent), 'Attention explorer, edited');
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
