#!/usr/bin/env node
// Download of each entry: gzip -9 of the static import graph of dist/index.js and
// dist/fast-index.js plus its wasm, then what engine.loadWalkthroughs() fetches on demand (its glue
// and wasm).   node bench/entry_sizes.mjs dist
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { dirname, join } from 'node:path';
const dist = process.argv[2];
const gzipped = (f) => gzipSync(readFileSync(join(dist, f)), { level: 9 }).length;
const line = (name, sizes) => {
  const total = sizes.reduce((a, [, n]) => a + n, 0);
  console.log(`${name}: ${(total / 1024).toFixed(1)} KB (${sizes.map(([f, n]) => `${f} ${(n / 1024).toFixed(1)}`).join(', ')})`);
};
for (const [entry, wasm] of [['index.js', 'attention.wasm'], ['fast-index.js', 'attention-fast.wasm']]) {
  const seen = new Set(); const todo = [entry];
  while (todo.length) {
    const f = todo.pop(); if (seen.has(f)) continue; seen.add(f);
    const src = readFileSync(join(dist, f), 'utf8');
    for (const m of src.matchAll(/(?:import|export)\s[^'"]*?from\s*['"](\.\/[^'"]+)['"]/g)) todo.push(join(dirname(f), m[1]));
  }
  line(entry, [...seen, wasm].map((f) => [f, gzipped(f)]));
}
line('loadWalkthroughs() on demand', ['attention-walkthroughs.js', 'attention-walkthroughs.wasm'].map((f) => [f, gzipped(f)]));
