#!/usr/bin/env node
// Assembles the static explorer site in site/ (or --out DIR):
//   site/            the page (web/page/*)
//   site/lib/        the built package (dist/, or --lib DIR): attention.js + .wasm + JS API
//   site/vendor/katex/  KaTeX's stylesheet, ES module and fonts, so the page needs no network
// The result is plain static files: any web server (or scripts/serve.mjs) can serve it.
import { cpSync, existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

function arg(name, fallback) {
  const i = process.argv.indexOf(name);
  return i > 0 && process.argv[i + 1] ? resolve(process.argv[i + 1]) : fallback;
}

const out = arg('--out', join(root, 'site'));
const lib = arg('--lib', join(root, 'dist'));
const page = join(root, 'web', 'page');

function fail(message) {
  console.error(`build-site: ${message}`);
  process.exit(1);
}

if (!existsSync(join(lib, 'index.js')) || !existsSync(join(lib, 'attention.wasm'))) {
  fail(`no built package in ${lib} (index.js and attention.wasm): run \`npm run build\` first`);
}

let katexDist;
try {
  const require = createRequire(join(root, 'package.json'));
  katexDist = join(dirname(require.resolve('katex/package.json')), 'dist');
} catch {
  fail('KaTeX is not installed: run `npm install` (it is a dependency in package.json)');
}

rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });

// The page: every file of web/page (html, css, ES modules).
cpSync(page, out, { recursive: true });

// The package, as a user's page would load it.
mkdirSync(join(out, 'lib'), { recursive: true });
for (const name of readdirSync(lib)) {
  const from = join(lib, name);
  if (statSync(from).isFile() && /\.(js|mjs|wasm|d\.ts|map)$/.test(name)) cpSync(from, join(out, 'lib', name));
}

// KaTeX, vendored.
const vendor = join(out, 'vendor', 'katex');
mkdirSync(vendor, { recursive: true });
for (const name of ['katex.min.css', 'katex.mjs']) cpSync(join(katexDist, name), join(vendor, name));
mkdirSync(join(vendor, 'fonts'), { recursive: true });
for (const name of readdirSync(join(katexDist, 'fonts'))) {
  // woff2 is enough for every browser that runs WebAssembly.
  if (name.endsWith('.woff2')) cpSync(join(katexDist, 'fonts', name), join(vendor, 'fonts', name));
}

const count = (dir) => readdirSync(dir, { recursive: true }).filter((f) => statSync(join(dir, f)).isFile()).length;
console.log(`build-site: ${out} ready (${count(out)} files; package from ${lib})`);
