#!/usr/bin/env node
// Copies intl-messageformat and the three @formatjs modules it imports into dist/ (or the folder
// given) as sibling ES modules whose imports are relative: the package's modules then load
// intl-messageformat by a relative path, so dist/ keeps working from a CDN and in a page without
// a bundler or an import map. Each file keeps its package's licence (BSD-3-Clause / MIT) on top.
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const out = resolve(process.argv[2] ?? join(root, 'dist'));
const require = createRequire(join(root, 'package.json'));
// package -> the file it becomes in dist/
const FILES = {
  'intl-messageformat': 'intl-messageformat.js',
  '@formatjs/icu-messageformat-parser': 'formatjs-icu-messageformat-parser.js',
  '@formatjs/icu-skeleton-parser': 'formatjs-icu-skeleton-parser.js',
  '@formatjs/fast-memoize': 'formatjs-fast-memoize.js',
};
// intl-messageformat's own dependencies resolve from its folder (npm may nest them there).
const nested = createRequire(require.resolve('intl-messageformat'));
const folderOf = (name) => dirname((name === 'intl-messageformat' ? require : nested).resolve(name));
for (const [name, file] of Object.entries(FILES)) {
  const folder = folderOf(name);
  const { version, license } = JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8'));
  const notice = readFileSync(join(folder, 'LICENSE.md'), 'utf8').trim().replaceAll('*/', '* /');
  let source = readFileSync(join(folder, 'index.js'), 'utf8').replace(/\n\/\/# sourceMappingURL=.*$/, '');
  source = source.replace(/from\s*(["'])(@formatjs\/[\w-]+)\1/g, (all, q, dep) => {
    if (!FILES[dep]) throw new Error(`vendor-formatjs: ${name} imports ${dep}, which is not vendored`);
    return `from ${q}./${FILES[dep]}${q}`;
  });
  if (/from\s*["'](?!\.\/)/.test(source)) throw new Error(`vendor-formatjs: ${name} still imports a package by name`);
  writeFileSync(join(out, file), `/*! ${name} ${version} (${license}), copied by scripts/vendor-formatjs.mjs\n${notice}\n*/\n${source}`);
}
console.log(`vendor-formatjs: ${Object.values(FILES).join(', ')} in ${out}`);
