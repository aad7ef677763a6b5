#!/usr/bin/env node
// `npm run bench:train`: the speed of the model that trains (issue 30, "Speed"). Steps per second,
// side by side in one run, of two models on batches of 16:
//   induction   the `induction` preset (2 layers, attention only, vocab 32, context 32, d_model 32,
//               2 heads of 16, float32)
//   mlp+norm    the same with mlp 128 and layernorm
// each trained
//   native      bench/bench_train.cpp, built in the native preset's build/ (Release, -O3; target
//               bench_train, built only here)
//   wasm Node   the package's engine.model() (dist/node.js) in this process
//   wasm Worker the package in headless Chromium (/usr/bin/chromium, playwright-core): a module
//               Worker running attention-explorer/model-worker, driven through connectModelWorker
//               (bench/train-page.html); training only, the module's load and create() excluded
//   PyTorch     bench/train_torch.py with /usr/bin/python3: Debian's torch, one thread, eager
//               (skipped, with a note, when torch cannot be imported); also with OpenBLAS when the
//               system's libblas.so.3 is another BLAS and Debian's OpenBLAS is installed, through
//               LD_LIBRARY_PATH for that process only
// Every implementation trains `warmup` seconds, then whole chunks of 10 steps (PyTorch: whole
// steps) until `seconds` have passed. Rounds are interleaved; a cell is the median over rounds.
// Our induction batches are 31 tokens long (BOS + 2 × 15, context 32); PyTorch's are 32 (random
// tokens, the speed only).
// Then: how long the induction preset takes, from its seed, in the Chromium Worker (and natively)
// to have a layer-2 head with an induction score above 0.4 (chunks of 50 steps, headScores()
// between chunks; seconds of training only), and whether training memory stays flat: 100,000
// steps of the `previous` preset in a fresh Node process through the package's model wrapper,
// the wasm memory and the process's RSS before and after.
//
// Usage: node bench/train.mjs [--rounds 3] [--seconds 3] [--warmup 1] [--memory-steps 100000]
//                             [--no-native] [--no-node] [--no-browser] [--no-torch] [--json FILE]
// Times on a shared machine move with its load (printed); compare columns of one run.
import { execFileSync, spawnSync } from 'node:child_process';
import { createReadStream, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, extname, join, normalize, resolve, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

import { median } from './inputs.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const DIST = process.env.ATTN_BENCH_DIST ? resolve(process.env.ATTN_BENCH_DIST) : join(ROOT, 'dist');
const argv = process.argv.slice(2);
const option = (name, fallback) => {
  const i = argv.indexOf(name);
  return i >= 0 && i + 1 < argv.length ? argv[i + 1] : fallback;
};
const CHUNK = 10;

// ---- the memory check, run in a child process (node bench/train.mjs --memory-child STEPS) -------
if (argv[0] === '--memory-child') {
  const steps = Number(argv[1]);
  // The package's own pieces, as its Worker entry assembles them, to read the module's memory.
  const { loadModule } = await import(pathToFileURL(join(DIST, 'load.js')).href);
  const { createModel, modelCatalogue } = await import(pathToFileURL(join(DIST, 'model.js')).href);
  const createModelModule = (await import(pathToFileURL(join(DIST, 'attention-model.js')).href)).default;
  const [module] = await loadModule(createModelModule, () => readFileSync(join(DIST, 'attention-model.wasm')), 'attention-model.wasm');
  const config = modelCatalogue(module).presets.find((p) => p.name === 'previous').config;
  const model = createModel(module, config);
  const sample = () => ({ step: model.step, wasm_bytes: module.HEAP8.buffer.byteLength, rss_bytes: process.memoryUsage().rss });
  const samples = [sample()];
  const t0 = performance.now();
  let last = NaN;
  while (model.step < steps) {
    last = model.train(Math.min(1000, steps - model.step)).at(-1);
    if (model.step === 1000 || model.step % 10000 === 0 || model.step === steps) samples.push(sample());
  }
  console.log(JSON.stringify({ preset: 'previous', steps, seconds: (performance.now() - t0) / 1000, last_loss: last, samples }));
  process.exit(0);
}

const opts = {
  rounds: Number(option('--rounds', 3)),
  seconds: Number(option('--seconds', 3)),
  warmup: Number(option('--warmup', 1)),
  memorySteps: Number(option('--memory-steps', 100000)),
  native: !argv.includes('--no-native'),
  node: !argv.includes('--no-node'),
  browser: !argv.includes('--no-browser'),
  torch: !argv.includes('--no-torch'),
  json: option('--json', join(ROOT, 'build-bench', 'train-results.json')),
};
if (!existsSync(join(DIST, 'model-worker.js')) || !existsSync(join(DIST, 'attention-model.wasm'))) {
  console.error(`bench: no built package with the model in ${DIST}: run \`npm run build\` first`);
  process.exit(1);
}
const log = (s) => console.error(`bench: ${s}`);
const uptime = () => execFileSync('uptime', { encoding: 'utf8' }).trim();
const cpuModel = (() => {
  const m = /^model name\s*:\s*(.*)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'));
  return m ? m[1] : cpus()[0]?.model;
})();
const machine = { cpu: cpuModel, cores: cpus().length, node: process.version, date: new Date().toISOString(), uptimeStart: uptime() };

// ---- the two models ---------------------------------------------------------------------------
const { loadAttention } = await import(pathToFileURL(join(DIST, 'node.js')).href);
const engine = await loadAttention();
const induction = engine.modelCatalogue().presets.find((p) => p.name === 'induction').config;
const MODELS = {
  induction,
  'mlp+norm': { ...induction, model: { ...induction.model, mlp: 128, norm: 'layernorm' } },
};
const work = mkdtempSync(join(tmpdir(), 'attention-bench-train-'));
const configFile = {};
for (const [name, config] of Object.entries(MODELS)) {
  configFile[name] = join(work, `${name.replace(/\W/g, '-')}.json`);
  writeFileSync(configFile[name], JSON.stringify(config));
}

// ---- native -------------------------------------------------------------------------------------
let nativeExe = null;
if (opts.native) {
  log('building bench_train in build/ (cmake --preset native; --target bench_train)');
  execFileSync('cmake', ['--preset', 'native'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
  execFileSync('cmake', ['--build', '--preset', 'native', '--target', 'bench_train'], {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  nativeExe = join(ROOT, 'build', 'bench_train');
}
function runNative(args) {
  const out = spawnSync(nativeExe, args, { encoding: 'utf8' });
  if (out.status !== 0) throw new Error(`bench_train failed: ${out.stderr}`);
  return JSON.parse(out.stdout.trim().split('\n').at(-1));
}

// ---- wasm in Node (the package API) -------------------------------------------------------------
function nodeSpeed(config) {
  const model = engine.model(config);
  try {
    const w0 = performance.now();
    while (performance.now() - w0 < opts.warmup * 1000) model.train(CHUNK);
    let steps = 0;
    let last = NaN;
    let elapsed = 0;
    const t0 = performance.now();
    do {
      last = model.train(CHUNK).at(-1);
      steps += CHUNK;
      elapsed = performance.now() - t0;
    } while (elapsed < opts.seconds * 1000);
    return { steps_per_second: steps / (elapsed / 1000), steps, seconds: elapsed / 1000, last_loss: last };
  } finally {
    model.dispose();
  }
}

// ---- PyTorch ----------------------------------------------------------------------------------------
const PYTHON = '/usr/bin/python3';
const OPENBLAS_DIR = '/usr/lib/x86_64-linux-gnu/openblas-pthread';
const torchVariants = [];
let torchNote = null;
if (opts.torch) {
  const probe = spawnSync(PYTHON, ['-c', 'import torch; print(torch.__version__)'], { encoding: 'utf8' });
  if (probe.status !== 0) {
    torchNote = `PyTorch skipped: ${PYTHON} cannot import torch (${(probe.stderr || probe.error?.message || '').trim().split('\n').at(-1)}); apt-get install python3-torch`;
  } else {
    torchVariants.push({ column: 'PyTorch', env: {} });
  }
}
function runTorch(name, env) {
  const out = spawnSync(
    PYTHON,
    [join(ROOT, 'bench', 'train_torch.py'), configFile[name], '--seconds', String(opts.seconds), '--warmup', String(opts.warmup)],
    { encoding: 'utf8', env: { ...process.env, ...env } },
  );
  if (out.status !== 0) throw new Error(`train_torch.py failed: ${out.stderr}`);
  return JSON.parse(out.stdout.trim().split('\n').at(-1));
}

// ---- Chromium: a static server for the page and the package ---------------------------------------
let browser = null;
let page = null;
let server = null;
const pageProblems = [];
if (opts.browser) {
  const routes = [
    ['/dist/', DIST],
    ['/bench/', join(ROOT, 'bench')],
  ];
  const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.mjs': 'text/javascript', '.wasm': 'application/wasm' };
  server = createServer((req, res) => {
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
  const { launchBrowser } = await import('../tests/browser/server.mjs');
  browser = await launchBrowser();
  machine.browser = browser.version();
  page = await browser.newPage();
  page.on('pageerror', (e) => pageProblems.push(e.message));
  page.on('console', (m) => {
    if (m.type() === 'error') pageProblems.push(m.text());
  });
  page.setDefaultTimeout(600000);
  await page.goto(`http://127.0.0.1:${server.address().port}/bench/train-page.html`);
  await page.waitForFunction(() => window.benchReady === true);
  machine.workerLoadMs = await page.evaluate(() => window.trainBench.load());
  log(`${machine.browser}: the model module loaded in the Worker in ${machine.workerLoadMs.toFixed(0)} ms`);
}
const browserSpeed = (config) =>
  page.evaluate(([c, o]) => window.trainBench.speed(c, o), [config, { warmup: opts.warmup, seconds: opts.seconds, chunk: CHUNK }]);

// ---- speed: interleaved rounds ------------------------------------------------------------------------
const COLUMNS = ['native', 'wasm, Node', 'wasm, Chromium Worker'];
const perRound = {};
const detail = {};
const record = (column, name, r) => {
  (perRound[`${column}/${name}`] ??= []).push(r.steps_per_second);
  (detail[`${column}/${name}`] ??= []).push(r);
};
const torchBlas = {};
const toInduction = {};
try {
  for (let round = 0; round < opts.rounds; round++) {
    for (const name of Object.keys(MODELS)) {
      if (nativeExe)
        record(
          'native',
          name,
          runNative([configFile[name], '--seconds', String(opts.seconds), '--warmup', String(opts.warmup), '--chunk', String(CHUNK)]),
        );
      if (opts.node) record('wasm, Node', name, nodeSpeed(MODELS[name]));
      if (page) record('wasm, Chromium Worker', name, await browserSpeed(MODELS[name]));
      for (const v of torchVariants) {
        const r = runTorch(name, v.env);
        torchBlas[v.column] = r.blas;
        machine.torch = r.torch;
        record(v.column, name, r);
      }
    }
    log(`round ${round + 1}/${opts.rounds} done (${uptime()})`);
    // After the first round: PyTorch with OpenBLAS too, when the system's BLAS is another one.
    if (
      round === 0 &&
      torchVariants.length === 1 &&
      !/openblas/i.test(torchBlas.PyTorch ?? '') &&
      existsSync(join(OPENBLAS_DIR, 'libblas.so.3'))
    ) {
      torchVariants.push({ column: 'PyTorch (OpenBLAS)', env: { LD_LIBRARY_PATH: OPENBLAS_DIR } });
      for (const name of Object.keys(MODELS)) {
        const r = runTorch(name, torchVariants[1].env);
        torchBlas['PyTorch (OpenBLAS)'] = r.blas;
        record('PyTorch (OpenBLAS)', name, r);
      }
    }
  }

  // ---- time to an induction head ------------------------------------------------------------------
  const goal = { score: 0.4, chunk: 50, maxSteps: 2000 };
  if (page) {
    log('the induction preset in the Chromium Worker until a layer-2 head scores > 0.4');
    toInduction['wasm, Chromium Worker'] = await page.evaluate(([c, o]) => window.trainBench.untilInduction(c, o), [induction, goal]);
  }
  if (nativeExe) {
    toInduction.native = runNative([
      configFile.induction,
      '--until-induction',
      String(goal.score),
      '--chunk',
      String(goal.chunk),
      '--max-steps',
      String(goal.maxSteps),
    ]);
  }
} finally {
  await browser?.close();
  server?.close();
}
if (pageProblems.length) log(`the page reported: ${pageProblems.join(' | ')}`);

// ---- memory over many steps, in a fresh process ------------------------------------------------------
let memory = null;
if (opts.memorySteps > 0) {
  log(`memory: ${opts.memorySteps} steps of the previous preset in a fresh Node process`);
  const out = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--memory-child', String(opts.memorySteps)], {
    encoding: 'utf8',
    maxBuffer: 1 << 24,
  });
  if (out.status !== 0) throw new Error(`the memory run failed: ${out.stderr}`);
  memory = JSON.parse(out.stdout.trim().split('\n').at(-1));
}
machine.uptimeEnd = uptime();
rmSync(work, { recursive: true, force: true });

// ---- report ------------------------------------------------------------------------------------------
const columns = [...COLUMNS.filter((c) => perRound[`${c}/induction`]), ...torchVariants.map((v) => v.column)];
const results = Object.fromEntries(Object.entries(perRound).map(([k, v]) => [k, median(v)]));
const fmt = (x) => (x === undefined ? '—' : x >= 100 ? x.toFixed(0) : x.toFixed(1));
const lines = [];
const say = (s = '') => lines.push(s);
say(`Machine: ${machine.cpu}, ${machine.cores} cores; Node ${machine.node}; ${machine.browser ?? 'no browser'}; ${machine.date}`);
say(`uptime at start: ${machine.uptimeStart}`);
say(`uptime at end:   ${machine.uptimeEnd}`);
if (torchVariants.length)
  say(
    `PyTorch ${machine.torch}, one thread, eager; BLAS loaded: ${torchVariants.map((v) => `${v.column} ${torchBlas[v.column]}`).join('; ')}`,
  );
if (torchNote) say(torchNote);
say(
  `Steps per second (batch 16), median of ${opts.rounds} interleaved rounds of ${opts.warmup} s warm-up + ≥ ${opts.seconds} s; ratio = Chromium Worker / PyTorch:`,
);
say();
const torchColumns = torchVariants.map((v) => v.column);
say(`| model | ${columns.join(' | ')} |${torchColumns.map((c) => ` Chromium / ${c} |`).join('')}`);
say(`| --- | ${columns.map(() => '---:').join(' | ')} |${torchColumns.map(() => ' ---: |').join('')}`);
for (const name of Object.keys(MODELS)) {
  const ratios = torchColumns.map((c) => {
    const w = results[`wasm, Chromium Worker/${name}`];
    const t = results[`${c}/${name}`];
    return w && t ? `${(w / t).toFixed(2)}x` : '—';
  });
  say(`| ${name} | ${columns.map((c) => fmt(results[`${c}/${name}`])).join(' | ')} |${ratios.map((r) => ` ${r} |`).join('')}`);
}
say();
say(
  `Per round: ${Object.entries(perRound)
    .map(([k, v]) => `${k} ${v.map(fmt).join(' / ')}`)
    .join('; ')}`,
);
say();
for (const [where, r] of Object.entries(toInduction)) {
  say(
    `Induction preset to a layer-2 head with induction score > 0.4, ${where}: ${
      r.reached
        ? `step ${r.step}, ${r.seconds.toFixed(2)} s of training${r.wall ? ` (${r.wall.toFixed(2)} s with the head scores between chunks)` : ''}, layer ${r.layer} head ${r.head} scores ${r.induction.toFixed(3)}`
        : `not reached in ${r.step} steps (${r.seconds.toFixed(2)} s; best ${r.induction?.toFixed(3)})`
    }`,
  );
}
if (memory) {
  const [first, ...rest] = memory.samples;
  const at1k = rest.find((s) => s.step === 1000) ?? first;
  const lastSample = memory.samples.at(-1);
  const mb = (b) => `${(b / 1048576).toFixed(1)} MB`;
  say(
    `Memory, ${memory.steps} steps of the previous preset in Node (${memory.seconds.toFixed(0)} s, last loss ${memory.last_loss.toExponential(2)}): ` +
      `wasm memory ${mb(first.wasm_bytes)} after create, ${mb(at1k.wasm_bytes)} after 1,000 steps, ${mb(lastSample.wasm_bytes)} after ${lastSample.step}; ` +
      `process RSS ${mb(first.rss_bytes)}, ${mb(at1k.rss_bytes)}, ${mb(lastSample.rss_bytes)}` +
      ` (${lastSample.wasm_bytes === at1k.wasm_bytes ? 'wasm memory flat' : 'wasm memory GREW'})`,
  );
}
console.log(lines.join('\n'));
const summary = {
  machine,
  opts,
  chunk: CHUNK,
  torch_blas: torchBlas,
  torch_note: torchNote,
  steps_per_second: results,
  per_round: perRound,
  to_induction: toInduction,
  memory,
  detail,
};
console.log(
  JSON.stringify({
    machine,
    steps_per_second: results,
    torch_blas: torchBlas,
    to_induction: toInduction,
    memory: memory && { steps: memory.steps, samples: memory.samples },
  }),
);
mkdirSync(dirname(opts.json), { recursive: true });
writeFileSync(opts.json, JSON.stringify(summary, null, 2));
log(`results in ${opts.json}`);
