#!/usr/bin/env node
// `node bench/bench.mjs --browser` (or this file directly): the kernel benchmark inside headless
// Debian Chromium. Ours through attention-explorer/fast as built in dist/ (relaxed SIMD, which
// Chromium has, and SIMD128 forced with { relaxedSimd: false }), onnxruntime-web (wasm, one
// thread) and tfjs-backend-wasm in the same page (bench/browser-page.mjs), beside native Eigen
// (bench/bench_native.cpp, g++ -O3 -march=native) run between the browser's rounds. N tokens,
// d = 64, float32 and float64 (tfjs: float32 only). Rounds are interleaved; each cell is the
// median over rounds of the per-round medians; ratio = time / native Eigen.
//
// Usage: node bench/browser.mjs [--rounds 5] [--sizes 64,256,1024] [--no-peers] [--no-native]
//                               [--json build-bench/browser-results.json]
import { createServer } from 'node:http';
import { createReadStream, existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { dirname, extname, join, normalize, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

import { launchBrowser } from '../tests/browser/server.mjs';
import { median } from './inputs.mjs';
import { buildNative, runNative } from './native.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const DIST = process.env.ATTN_BENCH_DIST ? resolve(process.env.ATTN_BENCH_DIST) : join(ROOT, 'dist');

const argv = process.argv.slice(2);
const option = (name, fallback) => {
  const i = argv.indexOf(name);
  return i >= 0 && i + 1 < argv.length ? argv[i + 1] : fallback;
};
const quick = argv.includes('--quick');
const opts = {
  rounds: Number(option('--rounds', quick ? 2 : 5)),
  sizes: option('--sizes', '64,256,1024')
    .split(',')
    .map(Number)
    .filter((n) => Number.isInteger(n) && n > 0),
  peers: !argv.includes('--no-peers'),
  native: !argv.includes('--no-native'),
  json: option('--json', join(ROOT, 'build-bench', 'browser-results.json')),
  d: 64,
};
if (!existsSync(join(DIST, 'fast-index.js'))) {
  console.error(`bench: no built package in ${DIST}: run \`npm run build\` first`);
  process.exit(1);
}

// ---- a static server for the page, the package and the peers' files -----------------------------

const routes = [
  ['/dist/', DIST],
  ['/bench/', join(ROOT, 'bench')],
  ['/ort/', join(ROOT, 'node_modules', 'onnxruntime-web', 'dist')],
  ['/tfjs-core/', join(ROOT, 'node_modules', '@tensorflow', 'tfjs-core')],
  ['/tfjs-wasm/', join(ROOT, 'node_modules', '@tensorflow', 'tfjs-backend-wasm')],
];
const TYPES = {
  '.html': 'text/html',
  '.js': 'text/javascript',
  '.mjs': 'text/javascript',
  '.wasm': 'application/wasm',
  '.json': 'application/json',
};
const server = createServer((req, res) => {
  const path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
  for (const [prefix, dir] of routes) {
    if (!path.startsWith(prefix)) continue;
    const file = normalize(join(dir, path.slice(prefix.length)));
    if ((file === dir || file.startsWith(dir + sep)) && existsSync(file) && statSync(file).isFile()) {
      res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' });
      createReadStream(file).pipe(res);
      return;
    }
  }
  res.writeHead(404).end();
});
await new Promise((done) => server.listen(0, '127.0.0.1', done));
const base = `http://127.0.0.1:${server.address().port}/`;

// ---- run ---------------------------------------------------------------------------------------

const machine = {
  cpu: cpus()[0].model,
  cores: cpus().length,
  node: process.version,
  date: new Date().toISOString(),
  loadStart: loadavg()
    .map((x) => x.toFixed(2))
    .join(' '),
};
const native = opts.native ? buildNative() : null;
const browser = await launchBrowser();
const perRound = {};
const record = (key, ms) => (perRound[key] ??= []).push(ms);
let setup;
try {
  const page = await browser.newPage();
  const problems = [];
  page.on('pageerror', (e) => problems.push(e.message));
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(m.text());
  });
  page.setDefaultTimeout(600000);
  await page.goto(`${base}bench/browser.html`);
  await page.waitForFunction(() => window.benchReady === true);
  setup = await page.evaluate((o) => window.benchSetup(o), { sizes: opts.sizes, d: opts.d, peers: opts.peers });
  setup.browser = browser.version();
  console.error(`bench: ${setup.browser}, kernels ${setup.kernels}`);
  for (let round = 0; round < opts.rounds; round++) {
    if (native) {
      for (const r of runNative(native, ['--rounds', '1', '--sizes', opts.sizes.join(','), '--d', String(opts.d)])) {
        if (r.impl === 'eigen') record(`native Eigen/${r.precision}/${r.N}`, r.ms);
      }
    }
    const times = await page.evaluate((r) => window.benchRound(r), round);
    for (const [key, ms] of Object.entries(times)) record(key, ms);
    console.error(`bench: round ${round + 1}/${opts.rounds} done`);
  }
  if (problems.length) console.error(`bench: the page reported: ${problems.join(' | ')}`);
} finally {
  await browser.close();
  server.close();
}
machine.loadEnd = loadavg()
  .map((x) => x.toFixed(2))
  .join(' ');
const results = Object.fromEntries(Object.entries(perRound).map(([k, v]) => [k, median(v)]));

// ---- report ------------------------------------------------------------------------------------

const fmtMs = (ms) =>
  ms < 0.1 ? `${(ms * 1000).toFixed(1)} µs` : ms < 10 ? `${ms.toFixed(2)} ms` : ms < 100 ? `${ms.toFixed(1)} ms` : `${Math.round(ms)} ms`;
const columns = ['native Eigen', 'ours (relaxed SIMD)', 'ours (SIMD128)', 'onnxruntime-web', 'tfjs-backend-wasm'];
const lines = [];
const say = (s = '') => lines.push(s);
say(`Machine: ${machine.cpu}, ${machine.cores} cores; ${setup.browser} (headless); Node ${machine.node}; ${machine.date}`);
say(`Load average at start / end: ${machine.loadStart} / ${machine.loadEnd}`);
say(
  `Ours: attention-explorer/fast, kernels ${setup.kernels} (and SIMD128 with { relaxedSimd: false }). Peers: ${
    Object.entries(setup.versions)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ') || 'none'
  }.`,
);
say(`Rounds: ${opts.rounds}, interleaved; each cell = median over rounds of per-round medians; ratio = time / native Eigen.`);
say();
say(`| N | precision | ${columns.join(' | ')} |`);
say(`| ---: | --- | ${columns.map(() => '---:').join(' | ')} |`);
for (const N of opts.sizes) {
  for (const precision of ['float32', 'float64']) {
    const baseline = results[`native Eigen/${precision}/${N}`];
    const cells = columns.map((c) => {
      const ms = results[`${c}/${precision}/${N}`];
      if (ms === undefined) return '—';
      return baseline ? `${fmtMs(ms)} (${(ms / baseline).toFixed(1)}x)` : fmtMs(ms);
    });
    say(`| ${N} | ${precision} | ${cells.join(' | ')} |`);
  }
}
say();
say(
  `Tiny problems in the page (µs per call, including the copies): ${Object.entries(setup.tiny)
    .map(([k, us]) => `${k} ${us.toFixed(1)} µs`)
    .join('; ')}.`,
);
say();
say(
  'Largest |difference| from ours (SIMD128), per implementation: ' +
    Object.entries(setup.agreement)
      .filter(([k]) => !k.startsWith('ours (SIMD128)'))
      .map(([k, v]) => `${k} ${v.toExponential(1)}`)
      .join(', '),
);
console.log(lines.join('\n'));
mkdirSync(dirname(opts.json), { recursive: true });
writeFileSync(opts.json, JSON.stringify({ machine, opts, setup, results, perRound }, null, 2));
console.error(`bench: results in ${opts.json}`);
