#!/usr/bin/env node
// Download of each entry: gzip -9 of the static import graph of dist/index.js and
// dist/fast-index.js plus its wasm.   node bench/entry_sizes.mjs dist
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { dirname, join } from 'node:path';
const dist = process.argv[2];
for (const [entry, wasm] of [['index.js', 'attention.wasm'], ['fast-index.js', 'attention-fast.wasm']]) {
  const seen = new Set(); const todo = [entry];
  while (todo.length) {
    const f = todo.pop(); if (seen.has(f)) continue; seen.add(f);
    const src = readFileSync(join(dist, f), 'utf8');
    for (const m of src.matchAll(/(?:import|export)\s[^'"]*?from\s*['"](\.\/[^'"]+)['"]/g)) todo.push(join(dirname(f), m[1]));
  }
  const files = [...seen, wasm];
  const sizes = files.map((f) => [f, gzipSync(readFileSync(join(dist, f)), { level: 9 }).length]);
  const total = sizes.reduce((a, [, n]) => a + n, 0);
  console.log(`${entry}: ${(total / 1024).toFixed(1)} KB (${sizes.map(([f, n]) => `${f} ${(n / 1024).toFixed(1)}`).join(', ')})`);
}
