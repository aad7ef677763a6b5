#!/usr/bin/env node
// `npm run bench`: single-head attention softmax(QKᵀ/√d)·V, one thread, N tokens, d = 64, float32
// and float64, measured side by side on this machine:
//   native Eigen   plain Eigen, g++ -O3 -march=native (bench/bench_native.cpp): the 1.0x baseline
//   native fast    attn::fast_attention natively (same core as the wasm module)
//   ours (wasm)    the package's wasm through its public JS API (engine.attention, web/lib/fast.js)
//   onnxruntime-web, tfjs-backend-wasm (SIMD), plain JS loops: the peers (devDependencies only)
// Rounds are interleaved (every implementation once per round, in rotating order); each cell is
// the median over rounds of the per-round median. Then: tiny problems (µs per call through the JS
// API), long sequences (output-only path up to N = 16,384: ms, ms per query row, wasm heap),
// download size (gzipped) of the main entry and of attention-explorer/fast, and time to first result in Node.
//
// Usage: node bench/bench.mjs [--rounds 5] [--sizes 4,64,256,1024,2048] [--long 1024,...,16384]
//                             [--no-peers] [--quick] [--json build-bench/results.json]
//        node bench/bench.mjs --browser [--rounds 5] [--sizes 64,256,1024] [--no-peers] [--no-native]
//                             (in headless Chromium: bench/browser.mjs)
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { dirname, join, resolve as resolvePath } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';

import { median, randomArray } from './inputs.mjs';
import { buildNative, runNative, sh } from './native.mjs';
import { entryFiles } from './entry_sizes.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
// ATTN_BENCH_DIST: benchmark another build laid out like dist/ (e.g. a SIMD experiment).
const DIST = process.env.ATTN_BENCH_DIST ? resolvePath(process.env.ATTN_BENCH_DIST) : join(ROOT, 'dist');
const BUILD = join(ROOT, 'build-bench');

// ---- options -----------------------------------------------------------------------------------

const argv = process.argv.slice(2);
const option = (name, fallback) => {
  const i = argv.indexOf(name);
  return i >= 0 && i + 1 < argv.length ? argv[i + 1] : fallback;
};
const list = (text) =>
  text
    .split(',')
    .map(Number)
    .filter((n) => Number.isInteger(n) && n > 0);
const quick = argv.includes('--quick');
const opts = {
  rounds: Number(option('--rounds', quick ? 2 : 5)),
  sizes: list(option('--sizes', quick ? '4,64,256,1024' : '4,64,256,1024,2048')),
  long: list(option('--long', quick ? '1024,4096' : '1024,2048,4096,8192,16384')),
  peers: !argv.includes('--no-peers'),
  json: option('--json', join(BUILD, 'results.json')),
  d: 64,
};

// `--browser`: the same kernels and peers inside headless Chromium (bench/browser.mjs).
if (argv.includes('--browser')) {
  const run = spawnSync(process.execPath, [join(ROOT, 'bench', 'browser.mjs'), ...argv.filter((a) => a !== '--browser')], {
    stdio: 'inherit',
  });
  process.exit(run.status ?? 1);
}

// ---- child modes: one long-sequence run, or one cold start, in a fresh process ------------------

if (argv[0] === '--child-long') {
  const [, n, precision] = argv;
  const { attention, heap } = await loadFast();
  const N = Number(n);
  const Float = precision === 'float64' ? Float64Array : Float32Array;
  const [Q, K, V] = [1, 2, 3].map((seed) => randomArray(Float, N * opts.d, seed));
  // Warm up so V8 has tiered the module up from its baseline compiler (see web/lib/fast.js).
  const [wq, wk, wv] = [4, 5, 6].map((seed) => randomArray(Float, 256 * opts.d, seed));
  for (const start = performance.now(); performance.now() - start < 400;) {
    attention({ Q: wq, K: wk, V: wv, L: 256, S: 256, precision });
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  const t0 = performance.now();
  const result = attention({ Q, K, V, L: N, S: N, precision });
  const ms = performance.now() - t0;
  if (!Number.isFinite(result.output[0])) throw new Error('non-finite output');
  console.log(JSON.stringify({ N, precision, ms, heap: heap() }));
  process.exit(0);
}
if (argv[0] === '--child-tiny') {
  console.log(JSON.stringify(measureTiny(await loadFast())));
  process.exit(0);
}
if (argv[0] === '--child-cold') {
  // argv[1]: 'full' (the package's main entry, a full trace) or 'fast' (attention-explorer/fast).
  const t0 = performance.now();
  let first;
  if (argv[1] === 'fast') {
    const { loadFastAttention } = await import(pathToFileURL(join(DIST, 'fast-node.js')).href);
    const fast = await loadFastAttention();
    first = fast.attention({
      Q: [
        [1, 0],
        [0, 1],
      ],
      K: [
        [1, 0],
        [0, 1],
      ],
      V: [
        [1, 2],
        [3, 4],
      ],
    }).output[0];
  } else {
    const { loadAttention } = await import(pathToFileURL(join(DIST, 'node.js')).href);
    const engine = await loadAttention();
    first = engine.run({
      Q: [
        [1, 0],
        [0, 1],
      ],
      K: [
        [1, 0],
        [0, 1],
      ],
      V: [
        [1, 2],
        [3, 4],
      ],
    }).output[0][0];
  }
  const ms = performance.now() - t0;
  if (Math.abs(first - 1.6604769) > 1e-6) throw new Error('wrong first result');
  console.log(JSON.stringify({ ms }));
  process.exit(0);
}

// ---- helpers -----------------------------------------------------------------------------------

/** The package's fast path through its public API (engine.attention). */
async function loadFast() {
  const { loadAttention } = await import(pathToFileURL(join(DIST, 'node.js')).href);
  const engine = await loadAttention();
  const heap = () => engine.heapStats().heapSize;
  return { engine, attention: engine.attention, via: 'engine.attention', kernels: engine.fastKernels(), heap };
}

/** µs per call of the interactive cases, 7 rounds, median. */
function measureTiny(fast) {
  const tiny = {};
  const N = 4,
    d = 8;
  for (const [precision, Float] of [
    ['float32', Float32Array],
    ['float64', Float64Array],
  ]) {
    const [Q, K, V] = [1, 2, 3].map((seed) => randomArray(Float, N * d, seed));
    const per = [];
    for (let r = 0; r < 7; r++) {
      const calls = 20000;
      const t0 = performance.now();
      for (let i = 0; i < calls; i++) fast.attention({ Q, K, V, L: N, S: N, precision });
      per.push(((performance.now() - t0) / calls) * 1000);
    }
    tiny[`attention N=4 d=8 ${precision}`] = median(per);
  }
  const rows = (seed) => {
    const a = randomArray(Float64Array, 256, seed);
    return Array.from({ length: 16 }, (_, i) => Array.from(a.subarray(i * 16, i * 16 + 16)));
  };
  const problem = { Q: rows(1), K: rows(2), V: rows(3) };
  const per = [];
  for (let r = 0; r < 7; r++) {
    const calls = 2000;
    const t0 = performance.now();
    for (let i = 0; i < calls; i++) fast.engine.run(problem);
    per.push(((performance.now() - t0) / calls) * 1000);
  }
  tiny['engine.run 16x16 full trace'] = median(per);
  return tiny;
}

/** Median ms of one call, repeating for at least `budget` ms (and at least `min` times). */
async function timeCall(fn, budget, min = 3) {
  const samples = [];
  const start = performance.now();
  while (samples.length < min || performance.now() - start < budget) {
    const t0 = performance.now();
    await fn();
    samples.push(performance.now() - t0);
    if (samples.length >= 1 && samples[0] > 4 * budget) break; // a slow peer: one sample will do
  }
  return median(samples);
}

function gz(path) {
  return gzipSync(readFileSync(path), { level: 9 }).length;
}

const fmtMs = (ms) =>
  ms === undefined
    ? '—'
    : ms < 0.1
      ? `${(ms * 1000).toFixed(1)} µs`
      : ms < 10
        ? `${ms.toFixed(2)} ms`
        : ms < 100
          ? `${ms.toFixed(1)} ms`
          : `${ms.toFixed(0)} ms`;
const fmtKB = (bytes) => `${(bytes / 1024).toFixed(1)} KB`;

// ---- main --------------------------------------------------------------------------------------

const machine = {
  cpu: (() => {
    try {
      return (
        execFileSync('lscpu', { encoding: 'utf8' })
          .split('\n')
          .find((l) => l.startsWith('Model name'))
          ?.replace(/^Model name:\s*/, '') ?? cpus()[0].model
      );
    } catch {
      return cpus()[0]?.model;
    }
  })(),
  cores: cpus().length,
  node: process.version,
  date: new Date().toISOString(),
  loadStart: loadavg()
    .map((x) => x.toFixed(2))
    .join(' '),
};
console.error(`bench: ${machine.cpu}, ${machine.cores} cores, Node ${machine.node}, load ${machine.loadStart}`);

if (!existsSync(join(DIST, 'attention.wasm'))) sh('bash', ['scripts/build.sh']);
const native = buildNative();
const fast = await loadFast();
console.error(`bench: ours via ${fast.via}, kernels ${fast.kernels}`);

const precisions = [
  ['float32', Float32Array],
  ['float64', Float64Array],
];
const impls = {
  float32: [{ name: 'ours (wasm)', run: (Q, K, V, N) => fast.attention({ Q, K, V, L: N, S: N, precision: 'float32' }).output }],
  float64: [{ name: 'ours (wasm)', run: (Q, K, V, N) => fast.attention({ Q, K, V, L: N, S: N, precision: 'float64' }).output }],
};
const versions = {};
if (opts.peers) {
  const { makeOrt, makeTfjs, makePlainJs } = await import('./peers.mjs');
  for (const [precision, Float] of precisions) {
    try {
      const ort = await makeOrt(precision, opts.d);
      versions[ort.name] = ort.version;
      impls[precision].push(ort);
    } catch (error) {
      console.error(`bench: onnxruntime-web ${precision} unavailable: ${error.message}`);
    }
    if (precision === 'float32') {
      try {
        const tf = await makeTfjs();
        versions[tf.name] = `${tf.version}${tf.simd ? ' (SIMD)' : ''}`;
        impls.float32.push(tf);
      } catch (error) {
        console.error(`bench: tfjs-backend-wasm unavailable: ${error.message}`);
      }
    }
    impls[precision].push(makePlainJs(Float));
  }
}

// Inputs shared by every implementation; the outputs are cross-checked against ours.
const inputs = {};
for (const [precision, Float] of precisions) {
  for (const N of opts.sizes) {
    inputs[`${precision}/${N}`] = [1, 2, 3].map((seed) => randomArray(Float, N * opts.d, seed + N));
  }
}
const agreement = {};
for (const [precision] of precisions) {
  for (const N of opts.sizes) {
    const [Q, K, V] = inputs[`${precision}/${N}`];
    const ours = impls[precision][0].run(Q, K, V, N, opts.d);
    for (const impl of impls[precision].slice(1)) {
      if (N > 1024 && impl.name === 'plain JS') continue;
      const out = await impl.run(Q, K, V, N, opts.d);
      let worst = 0;
      for (let i = 0; i < out.length; i++) worst = Math.max(worst, Math.abs(out[i] - ours[i]));
      agreement[`${impl.name}/${precision}/${N}`] = worst;
      const limit = precision === 'float32' ? 1e-4 : 1e-10;
      if (!(worst <= limit)) console.error(`bench: WARNING ${impl.name} ${precision} N=${N} differs from ours by ${worst}`);
    }
  }
}

// Interleaved rounds.
const perRound = {}; // key impl/precision/N -> [ms per round]
const record = (impl, precision, N, ms) => (perRound[`${impl}/${precision}/${N}`] ??= []).push(ms);
for (let round = 0; round < opts.rounds; round++) {
  for (const r of runNative(native, ['--rounds', '1', '--sizes', opts.sizes.join(','), '--d', String(opts.d)])) {
    if (r.impl) record({ eigen: 'native Eigen', fast: 'native fast', core: 'native core (trace)' }[r.impl], r.precision, r.N, r.ms);
  }
  for (const N of opts.sizes) {
    for (const [precision] of precisions) {
      const list = impls[precision];
      for (let k = 0; k < list.length; k++) {
        const impl = list[(k + round) % list.length];
        const [Q, K, V] = inputs[`${precision}/${N}`];
        const budget = N <= 64 ? 40 : 120;
        record(impl.name, precision, N, await timeCall(() => impl.run(Q, K, V, N, opts.d), budget));
      }
    }
  }
  console.error(`bench: round ${round + 1}/${opts.rounds} done`);
}
const results = {};
for (const [key, values] of Object.entries(perRound)) results[key] = median(values);

// Tiny problems through the JS API, in a fresh process, so that the peers' runtimes and the large
// runs' garbage do not weigh on microsecond figures.
let tiny = {};
{
  const out = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--child-tiny'], { encoding: 'utf8', cwd: ROOT });
  if (out.status === 0) tiny = JSON.parse(out.stdout.trim().split('\n').pop());
  else console.error(`bench: tiny problems failed: ${out.stderr.slice(0, 400)}`);
}

// Long sequences: one fresh process per size (so the heap is that size's own).
const long = [];
const longRuns = [...opts.long.map((N) => [N, 'float32']), [Math.max(...opts.long), 'float64']];
for (const [N, precision] of longRuns) {
  const out = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--child-long', String(N), precision], {
    encoding: 'utf8',
    cwd: ROOT,
  });
  if (out.status !== 0) {
    console.error(`bench: long N=${N} ${precision} failed: ${out.stderr.slice(0, 400)}`);
    long.push({ N, precision, error: out.stderr.split('\n').find((l) => /Error/.test(l)) ?? 'failed' });
    continue;
  }
  long.push(JSON.parse(out.stdout.trim().split('\n').pop()));
}
const nativeLong = runNative(native, ['--long', '--sizes', opts.long.join(','), '--d', String(opts.d)]).filter((r) => r.impl);

// Download size and cold start, for the main entry and for attention-explorer/fast.
const entries = { full: ['index.js', 'attention.wasm'], fast: ['fast-index.js', 'attention-fast.wasm'] };
const downloads = {};
const cold = {};
for (const [name, [entry, wasm]] of Object.entries(entries)) {
  downloads[name] = Object.fromEntries(entryFiles(DIST, entry, wasm).map((f) => [f, gz(join(DIST, f))]));
  cold[name] = [];
  for (let i = 0; i < 5; i++) {
    const out = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--child-cold', name], { encoding: 'utf8', cwd: ROOT });
    if (out.status === 0) cold[name].push(JSON.parse(out.stdout.trim().split('\n').pop()).ms);
  }
}
const total = (files) => Object.values(files).reduce((a, b) => a + b, 0);
const peerSizes = opts.peers ? await (await import('./peers.mjs')).peerDownloads() : {};
machine.loadEnd = loadavg()
  .map((x) => x.toFixed(2))
  .join(' ');

// ---- report ------------------------------------------------------------------------------------

const columns = ['native Eigen', 'native fast', 'ours (wasm)', 'onnxruntime-web', 'tfjs-backend-wasm', 'plain JS'];
const lines = [];
const say = (s = '') => lines.push(s);
say(`Machine: ${machine.cpu}, ${machine.cores} cores; Node ${machine.node}; ${machine.date}`);
say(`Load average at start / end: ${machine.loadStart} / ${machine.loadEnd}`);
say(
  `Ours: ${fast.via}; kernels: ${fast.kernels}. Peers: ${
    Object.entries(versions)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ') || 'none'
  }.`,
);
if (fast.kernels !== 'wasm-simd128') {
  say('NOTE: this wasm module was compiled without -msimd128, so "ours (wasm)" ran the portable Eigen kernels, not the SIMD128 ones.');
}
say(`Rounds: ${opts.rounds}, interleaved; each cell = median over rounds of per-round medians; ratio = time / native Eigen.`);
say();
say(`| N | precision | ${columns.join(' | ')} |`);
say(`| ---: | --- | ${columns.map(() => '---:').join(' | ')} |`);
for (const N of opts.sizes) {
  for (const [precision] of precisions) {
    const base = results[`native Eigen/${precision}/${N}`];
    const cells = columns.map((c) => {
      const ms = results[`${c}/${precision}/${N}`];
      if (ms === undefined) return '—';
      return `${fmtMs(ms)} (${(ms / base).toFixed(1)}x)`;
    });
    say(`| ${N} | ${precision} | ${cells.join(' | ')} |`);
  }
}
say();
say(
  'Trace API natively (attn::run, every step kept), for reference: ' +
    opts.sizes
      .filter((N) => N <= 1024)
      .map((N) => `N=${N} ${fmtMs(results[`native core (trace)/float32/${N}`])} / ${fmtMs(results[`native core (trace)/float64/${N}`])}`)
      .join('; ') +
    ' (float32 / float64).',
);
say();
say('Tiny problems through the JS API (including the copies in and out):');
for (const [k, us] of Object.entries(tiny)) say(`- ${k}: ${us.toFixed(2)} µs per call`);
say();
say('Long sequences, output-only path, d = 64, one call each in a fresh process after 0.4 s of warm-up calls at N = 256:');
say('| N | precision | wasm (JS API) | ms per query row | wasm heap after | native fast | native ms per row |');
say('| ---: | --- | ---: | ---: | ---: | ---: | ---: |');
for (const r of long) {
  const nat = nativeLong.find((x) => x.N === r.N && x.precision === r.precision);
  if (r.error) {
    say(`| ${r.N} | ${r.precision} | failed: ${r.error} | | | | |`);
    continue;
  }
  say(
    `| ${r.N} | ${r.precision} | ${fmtMs(r.ms)} | ${(r.ms / r.N).toFixed(4)} ms | ${(r.heap / 1048576).toFixed(1)} MB | ${nat ? fmtMs(nat.ms) : '—'} | ${nat ? (nat.ms / r.N).toFixed(4) + ' ms' : '—'} |`,
  );
}
say();
const entryNames = {
  full: "'attention-explorer' (trace, explain, parser, random, fast path)",
  fast: "'attention-explorer/fast' (output-only path)",
};
for (const name of Object.keys(entries)) {
  say(`Download (gzip -9) of what \`import ... from ${entryNames[name]}\` loads in a browser: ${fmtKB(total(downloads[name]))} total`);
  say(
    `(${Object.entries(downloads[name])
      .map(([f, b]) => `${f} ${fmtKB(b)}`)
      .join(', ')}).`,
  );
}
if (Object.keys(peerSizes).length)
  say(
    `Peers, same measure: ${Object.entries(peerSizes)
      .map(([k, b]) => `${k} ${fmtKB(b)}`)
      .join(', ')}.`,
  );
say(
  `Time to first result in Node (import + instantiate + first call on seed 004, fresh process, median of 5): ` +
    `main entry (engine.run) ${cold.full.length ? fmtMs(median(cold.full)) : 'failed'}, ` +
    `/fast entry (attention) ${cold.fast.length ? fmtMs(median(cold.fast)) : 'failed'}.`,
);
say();
say(
  'Largest |difference| from ours, per peer (float32 limit 1e-4, float64 1e-10): ' +
    Object.entries(agreement)
      .map(([k, v]) => `${k} ${v.toExponential(1)}`)
      .join(', '),
);

console.log(lines.join('\n'));
mkdirSync(dirname(opts.json), { recursive: true });
writeFileSync(
  opts.json,
  JSON.stringify(
    {
      machine,
      opts,
      results,
      perRound,
      tiny,
      long,
      nativeLong,
      downloads,
      peerSizes,
      cold,
      agreement,
      via: fast.via,
      kernels: fast.kernels,
    },
    null,
    2,
  ),
);
console.error(`bench: results in ${opts.json}`);
