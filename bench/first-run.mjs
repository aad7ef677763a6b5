#!/usr/bin/env node
// The first engine.run after loading the package, in a fresh Node process each time: what V8's
// lazy compilation of the core's wasm functions costs (the second run of the same problem is
// already compiled). With two folders, their processes alternate (A, B, B, A, ...).
//
//   node bench/first-run.mjs [--rounds 9] [--problem lookup] DIST [DIST2]
//
// DIST: a built package folder (dist/ after `npm run build`). Prints medians and ranges.
import { spawnSync } from 'node:child_process';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const argv = process.argv.slice(2);
const value = (name, fallback) => {
  const i = argv.indexOf(name);
  if (i < 0) return fallback;
  const v = argv[i + 1];
  argv.splice(i, 2);
  return v;
};
const child = value('--child', null);
const preset = value('--problem', 'lookup');

if (child) {
  const { loadAttention, findPreset, presetProblem } = await import(pathToFileURL(join(child, 'node.js')).href);
  const engine = await loadAttention();
  const found = findPreset(preset);
  if (!found) throw new Error(`--problem ${preset}: no such preset`);
  const { problem } = presetProblem(found, engine);
  let t0 = performance.now();
  engine.run(problem);
  const first = performance.now() - t0;
  t0 = performance.now();
  engine.run(problem);
  console.log(JSON.stringify({ first, second: performance.now() - t0 }));
  process.exit(0);
}

const rounds = Number(value('--rounds', 9));
const dists = argv.map((d) => resolve(d));
if (dists.length < 1 || dists.length > 2 || !(rounds >= 1)) {
  console.error('usage: node bench/first-run.mjs [--rounds 9] [--problem lookup] DIST [DIST2]');
  process.exit(2);
}
const self = fileURLToPath(import.meta.url);
const runs = dists.map(() => []);
const loadStart = loadavg();
for (let r = 0; r < rounds; r++) {
  const order = r % 2 ? [...dists.keys()].reverse() : [...dists.keys()];
  for (const i of order) {
    const p = spawnSync(process.execPath, [self, '--child', dists[i], '--problem', preset], { encoding: 'utf8' });
    if (p.status !== 0) {
      console.error(p.stderr || p.stdout);
      process.exit(1);
    }
    runs[i].push(JSON.parse(p.stdout));
  }
}
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const ms = (x) => `${x < 10 ? x.toFixed(2) : x.toFixed(1)} ms`;
console.log(
  `${new Date().toISOString()}; Node ${process.version}; load ${loadStart.map((x) => x.toFixed(2)).join(' ')} -> ${loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')}; ${rounds} processes each; problem ${preset}`,
);
dists.forEach((d, i) => {
  const first = runs[i].map((x) => x.first);
  const second = runs[i].map((x) => x.second);
  console.log(
    `${d}: first engine.run ${ms(median(first))} (${ms(Math.min(...first))}–${ms(Math.max(...first))}), second ${ms(median(second))}`,
  );
});
