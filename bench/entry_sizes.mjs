#!/usr/bin/env node
// Download of each entry: gzip -9 of the static import graph of dist/index.js and
// dist/fast-index.js plus its wasm, then what engine.loadWalkthroughs() fetches on demand (its glue
// and wasm).   node bench/entry_sizes.mjs dist
// bench/bench.mjs reports the same download totals with `entryFiles`.
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The dist files a browser loads for `import ... from <entry>`: the entry's static import graph
 * (`import … from`, `export … from`, `import './x.js'`; not a dynamic `import()`, which loads on
 * demand), plus its .wasm.
 */
export function entryFiles(dist, entry, wasm) {
  const seen = new Set();
  const todo = [entry];
  while (todo.length) {
    const f = todo.pop();
    if (seen.has(f)) continue;
    seen.add(f);
    const src = readFileSync(join(dist, f), 'utf8');
    for (const m of src.matchAll(/\b(?:import|export)\s(?:[^'"();]*?\sfrom\s*)?['"](\.\/[^'"]+)['"]/g)) todo.push(join(dirname(f), m[1]));
  }
  return [...seen, wasm];
}

export const gzipped = (dist, f) => gzipSync(readFileSync(join(dist, f)), { level: 9 }).length;

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const dist = process.argv[2];
  if (!dist) {
    console.error('usage: node bench/entry_sizes.mjs DIST');
    process.exit(2);
  }
  const line = (name, files) => {
    const sizes = files.map((f) => [f, gzipped(dist, f)]);
    const total = sizes.reduce((a, [, n]) => a + n, 0);
    console.log(`${name}: ${(total / 1024).toFixed(1)} KB (${sizes.map(([f, n]) => `${f} ${(n / 1024).toFixed(1)}`).join(', ')})`);
  };
  line('index.js', entryFiles(dist, 'index.js', 'attention.wasm'));
  line('fast-index.js', entryFiles(dist, 'fast-index.js', 'attention-fast.wasm'));
  line('loadWalkthroughs() on demand', ['attention-walkthroughs.js', 'attention-walkthroughs.wasm']);
}
