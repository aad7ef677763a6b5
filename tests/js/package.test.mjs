// The packed artifact, not the work tree: `npm pack`, install the tarball into an empty folder with
// only node and npm on PATH, then use it from Node, from the CLI, from TypeScript, and from a Vite
// app whose build output loads the wasm in headless Chromium.
import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { extname, join, sep } from 'node:path';
import { before, describe, test } from 'node:test';

import { assertPrinted, repo } from './helpers.mjs';
import { launchBrowser } from '../browser/server.mjs';

const work = mkdtempSync(join(tmpdir(), 'attention-pack-'));
const app = join(work, 'app');
const bin = join(work, 'bin');
// Only node and npm: no compiler, no emcc, no cmake can be used by what follows.
const env = { ...process.env, PATH: bin, npm_config_update_notifier: 'false' };

const WEIGHTS_ROW_1 = '0.08431243 0.25513027 0.51521078 0.14534652';
const { version } = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8'));

let packed;

before(() => {
  mkdirSync(bin);
  symlinkSync(process.execPath, join(bin, 'node'));
  symlinkSync(realpathSync(execFileSync('sh', ['-c', 'command -v npm'], { encoding: 'utf8' }).trim()), join(bin, 'npm'));
  // The tests run after `npm run build`; pack what was built (prepack would rebuild with emcc).
  const out = execFileSync('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', work], { cwd: repo, encoding: 'utf8' });
  packed = JSON.parse(out)[0];
  mkdirSync(app);
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  const install = spawnSync('npm', ['install', '--offline', '--no-audit', '--no-fund', join(work, packed.filename)], {
    cwd: app,
    env,
    encoding: 'utf8',
  });
  assert.equal(install.status, 0, install.stderr);
});

function node(args, options = {}) {
  const r = spawnSync('node', args, { cwd: app, env, encoding: 'utf8', ...options });
  assert.equal(r.status, 0, `node ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

describe('the packed tarball', () => {
  test('holds the built package and nothing else', () => {
    assert.equal(packed.name, 'attention-explorer');
    assert.equal(packed.version, version);
    // Only the package.json "files" allow-list (npm adds package.json and README.md itself): the
    // docs named there and dist/ exactly as the build wrote it.
    const allowed = ['package.json', 'README.md', ...JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')).files];
    const files = packed.files.map((f) => f.path).sort();
    for (const f of files)
      assert.ok(
        allowed.some((a) => f === a || f.startsWith(`${a}/`)),
        `unexpected file ${f}`,
      );
    // Every file of dist/, its folders' too (the message catalogues in dist/locales/).
    const distFiles = readdirSync(join(repo, 'dist'), { recursive: true }).filter((f) => statSync(join(repo, 'dist', f)).isFile());
    assert.deepEqual(
      files.filter((f) => f.startsWith('dist/')),
      distFiles.map((f) => `dist/${f.split(sep).join('/')}`).sort(),
    );
    for (const f of [
      'dist/attention.js',
      'dist/attention.wasm',
      'dist/engine.js',
      'dist/index.js',
      'dist/node.js',
      'dist/cli.js',
      'dist/index.d.ts',
      'dist/presets.js',
      'package.json',
    ]) {
      assert.ok(files.includes(f), `${f} is missing from the tarball`);
    }
    assert.ok(!files.some((f) => /\.(cpp|h|sh)$|^tests\//.test(f)), files.join(' '));
  });

  test('imports and runs from Node in an empty folder', () => {
    writeFileSync(
      join(app, 'seed000.mjs'),
      `
      import { loadAttention, stringify } from 'attention-explorer';
      const engine = await loadAttention();
      const [Q, K, V] = engine.random(42, [1, 2, 3].map(() => ({ kind: 'randn', shape: [4, 8] })));
      const trace = engine.run({ Q, K, V, options: { causal: true } });
      console.log(stringify({ weights: trace.steps.find((s) => s.id === 'weights').data, output: trace.output }, 0));
      try { engine.run({ Q, K, V, options: { casual: true } }); } catch (e) { console.log(e.message); }
    `,
    );
    const [json, message] = node(['seed000.mjs']).trim().split('\n');
    const result = JSON.parse(json);
    assertPrinted(result.output[1].slice(0, 2), '0.66641301  1.39213367', 'masked output row 2');
    assert.equal(result.weights[0][1], 0);
    assert.equal(message, "unknown option 'casual' (did you mean 'causal'?)");
  });

  test('attention-explorer/fast imports and runs from Node in an empty folder', () => {
    writeFileSync(
      join(app, 'fast.mjs'),
      `
      import { loadFastAttention } from 'attention-explorer/fast';
      const fast = await loadFastAttention();
      const r = fast.attention({ Q: [[1, 0], [0, 1]], K: [[1, 0], [0, 1]], V: [[1, 2], [3, 4]] });
      console.log(JSON.stringify([Array.from(r.output), r.shape, fast.fastKernels(), Object.keys(fast).sort()]));
    `,
    );
    const [output, shape, kernels, keys] = JSON.parse(node(['fast.mjs']));
    [1.6604769, 2.6604769, 2.3395231, 3.3395231].forEach((x, i) => assert.ok(Math.abs(output[i] - x) <= 5e-8, `${output[i]}`));
    assert.deepEqual(shape, [2, 2]);
    assert.equal(kernels, 'wasm-simd128');
    assert.deepEqual(keys, ['attention', 'fastKernels', 'heapStats', 'version']);
  });

  test("every entry and the CLI report package.json's version", () => {
    writeFileSync(
      join(app, 'version.mjs'),
      `
      import { version } from 'attention-explorer';
      import { version as fast } from 'attention-explorer/fast';
      console.log(JSON.stringify([version, fast]));
    `,
    );
    assert.deepEqual(JSON.parse(node(['version.mjs'])), [version, version]);
    const cli = join(app, 'node_modules', '.bin', 'attention-explorer');
    assert.equal(spawnSync(cli, ['--version'], { env, encoding: 'utf8' }).stdout, `${version}\n`);
  });

  test('the CLI runs from node_modules/.bin', () => {
    const cli = join(app, 'node_modules', '.bin', 'attention-explorer');
    const problem = node([cli, 'preset', '000']);
    const r = spawnSync(cli, ['run', '--table', '--digits', '8'], { cwd: app, env, input: problem, encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.ok(r.stdout.includes(`  ${WEIGHTS_ROW_1.replace(/ /g, '  ')}\n`), r.stdout);
    const bad = spawnSync(cli, ['run', '--nope'], { cwd: app, env, encoding: 'utf8' });
    assert.equal(bad.status, 2);
  });

  test('the runtime exports are exactly the ones index.d.ts declares, in both entries', async () => {
    const declared = [
      ...readFileSync(join(app, 'node_modules/attention-explorer/dist/index.d.ts'), 'utf8').matchAll(
        /^export (?:declare )?(?:function|const) (\w+)/gm,
      ),
    ]
      .map((m) => m[1])
      .sort();
    const script = `
      const node = await import('attention-explorer');
      const browser = await import('./node_modules/attention-explorer/dist/index.js');
      console.log(JSON.stringify([Object.keys(node).sort(), Object.keys(browser).sort()]));`;
    writeFileSync(join(app, 'exports.mjs'), script);
    const [fromNode, fromBrowser] = JSON.parse(node(['exports.mjs']));
    assert.deepEqual(fromNode, declared);
    assert.deepEqual(fromBrowser, declared);
    // Engine methods: the d.ts Engine interface against a live engine.
    const methods = [
      ...readFileSync(join(app, 'node_modules/attention-explorer/dist/index.d.ts'), 'utf8')
        .match(/export interface Engine \{([\s\S]*?)\n\}/)[1]
        .matchAll(/^\s+(?:readonly )?(\w+)[(:]/gm),
    ]
      .map((m) => m[1])
      .sort();
    writeFileSync(
      join(app, 'engine-keys.mjs'),
      "const { loadAttention } = await import('attention-explorer'); console.log(JSON.stringify(Object.keys(await loadAttention()).sort()));",
    );
    assert.deepEqual(JSON.parse(node(['engine-keys.mjs'])), methods);
  });

  test('the TypeScript types compile against real usage, and reject misuse', () => {
    const tsc = join(repo, 'node_modules', 'typescript', 'bin', 'tsc');
    writeFileSync(
      join(app, 'usage.ts'),
      `
      import { loadAttention, stringify, toJSON, presets, presetProblem, numpyLines, version, decodeCsv, decodeLatex, tilesCsv, tilesLatex, connectModelWorker } from 'attention-explorer';
      import type { Engine, Problem, Trace, Step, Explanation, Draw, HeadFacts, Decoding, Tiles, OnlineSoftmax, TrainConfig, Model, HeadScore, ModelWeights, ModelCatalogue, ModelWorker, InputErrorPlace } from 'attention-explorer';

      import { loadFastAttention } from 'attention-explorer/fast';
      import type { FastEngine, FastResult } from 'attention-explorer/fast';
      import { loadTranslator, errorWords, stepFormula, stepTitle, explanationWords, warningsIn } from 'attention-explorer/i18n';
      import type { Translator } from 'attention-explorer/i18n';

      async function main(): Promise<void> {
        const fast: FastEngine = await loadFastAttention();
        const r: FastResult = fast.attention({ Q: new Float32Array(4), K: new Float32Array(4), V: new Float32Array(4), L: 2, S: 2, causal: true });
        const k: 'wasm-relaxed-simd' | 'wasm-simd128' | 'eigen' = fast.fastKernels();
        console.log(r.output[0], r.shape[1], k, fast.version);
        const engine: Engine = await loadAttention({ wasmUrl: new URL('./attention.wasm', 'file:///tmp/') });
        const draws: Draw[] = [{ kind: 'randn', shape: [4, 8] }, { kind: 'normal', shape: [4, 1], loc: 0, scale: 2 }];
        const [Q, K, V] = engine.random(42, draws);
        const problem: Problem = {
          Q, K, V: 'array([[1, 2], [3, 4]])', b_Q: [1, 2],
          options: { layout: 'rows', scale: '1/sqrt(3)', causal: true, mask: [[true, false]], softcap: 30, heads: 1, kv_heads: 1, precision: 'float32' },
        };
        const trace: Trace = engine.run(problem);
        const traces: Trace[] = engine.runAll([problem, { X: [[1]], W_Q: [[1]], W_K: [[1]], W_V: [[1]], options: { scale: 0.5 } }]);
        const step: Step = trace.steps[0];
        const head: number | null = step.head;
        const rows: number = step.shape[0] + trace.meta.d_k + traces.length;
        const facts: HeadFacts = trace.facts[0];
        const e: Explanation = engine.explain(problem, { step: 'weights', row: 0, col: 1 });
        const m: number[][] = engine.parseMatrix('[1 2; 3 4]', 'W');
        try {
          engine.run({ Q: [[1]], K: [[1, 2]], V: [[1]] });
        } catch (error: unknown) {
          const place = error as Error & InputErrorPlace;
          const where: string = [place.field ?? 'general', place.fields?.join(','), place.row ?? 0, place.column ?? 0].join(' ');
          const fr: Translator = await loadTranslator('fr');
          console.log(where, errorWords(place, fr));
        }
        const decoded: Decoding = engine.decode({ Q: [[1], [2]], K: [[1], [2]], V: [[1], [2]] });
        const tiled: Tiles = engine.tiles(problem, { block_q: 2, block_k: 1 });
        const online: OnlineSoftmax = engine.onlineSoftmax([100, 1], { subtractMax: false, precision: 'float32' });
        console.log(decoded.steps[0].flops_cached, tiled.tiles[0].skipped, tiled.bytes_flash, online.weights[0]);
        const notes: string = decodeLatex(decoded, { decimals: 3, standalone: true, labels: { tokensQ: ['a', 'b'] } }) + tilesLatex(tiled, { max: 8 }) + decodeCsv(decoded) + tilesCsv(tiled);
        const ja: Translator = await loadTranslator('ja');
        const words: string = [stepTitle(step, ja) ?? '', stepFormula(step, ja).tex, explanationWords(e, ja).text, ...warningsIn(trace, ja)].join(' ');
        const text: string = words + stringify(toJSON(trace)) + step.title + version + numpyLines(presets[0].random![0]).join('');
        const { problem: p2 } = presetProblem(presets[0], engine);
        console.log(head, rows, facts.scores_variance, e.kind, m, text, engine.heapStats().inUse, p2, notes);
        // The model that trains (docs/model.md).
        const config: TrainConfig = { model: { vocab: 8, context: 8, d_model: 8, positions: 'rope', norm: 'rmsnorm' }, task: 'previous', optimizer: { lr: 0.01, schedule: 'cosine' } };
        const model: Model = engine.model(config);
        const losses: number[] = model.train(3);
        const scores: HeadScore[] = model.headScores();
        const trained: Problem = model.headProblem(1, 1, [1, 2, 3]);
        const w: ModelWeights = model.weights();
        const attention: number[][] = model.predict([1, 2], { ablate: [[1, 1]] }).attention[0][0];
        const catalogue: ModelCatalogue = engine.modelCatalogue();
        const remote: ModelWorker = connectModelWorker(new Worker('w.js', { type: 'module' }));
        console.log(losses, scores[0].induction, engine.run(trained).output, w.layers[0].W_Q, attention, catalogue.presets[0].question, model.config.model.d_head, remote);
        model.dispose();
      }
      void main();
    `,
    );
    writeFileSync(
      join(app, 'misuse.ts'),
      `
      import { loadAttention, decodeCsv } from 'attention-explorer';
      const engine = await loadAttention();
      decodeCsv(engine.run({ Q: [[1]], K: [[1]], V: [[1]] }));
      engine.run({ Q: [[1]], K: [[1]], V: [[1]], options: { casual: true } });
      engine.run({ Q: [[1]], K: [[1]], V: [[1]], options: { layout: 'diagonal' } });
      const n: string = engine.run({ Q: [[1]] }).output;
      import { loadFastAttention } from 'attention-explorer/fast';
      (await loadFastAttention()).attention({ Q: [[1]], K: [[1]], V: [[1]], causal: 'yes' });
      engine.model({ model: { vocab: 8, context: 8, d_model: 8, norm: 'batchnorm' } });
      import { loadTranslator } from 'attention-explorer/i18n';
      const lang: number = (await loadTranslator('fr')).lang;
    `,
    );
    for (const [module, resolution] of [
      ['nodenext', 'nodenext'],
      ['esnext', 'bundler'],
    ]) {
      const args = [
        tsc,
        '--noEmit',
        '--strict',
        '--target',
        'es2022',
        '--module',
        module,
        '--moduleResolution',
        resolution,
        '--types',
        '',
        '--lib',
        'es2022,dom',
      ];
      const good = spawnSync('node', [...args, 'usage.ts'], { cwd: app, env, encoding: 'utf8' });
      assert.equal(good.status, 0, `${resolution}: ${good.stdout}${good.stderr}`);
      const bad = spawnSync('node', [...args, 'misuse.ts'], { cwd: app, env, encoding: 'utf8' });
      assert.notEqual(bad.status, 0, `${resolution}: misuse compiled`);
      assert.match(bad.stdout, /casual/);
      assert.match(bad.stdout, /diagonal/);
      assert.match(bad.stdout, /Type 'Trace' is missing the following properties from type 'Decoding'/);
      assert.match(bad.stdout, /number\[\]\[\]' is not assignable to type 'string'/);
      assert.match(bad.stdout, /Type 'string' is not assignable to type 'boolean \| undefined'/);
      assert.match(bad.stdout, /"batchnorm"' is not assignable to type '[^']*"rmsnorm"[^']*'/);
      assert.match(bad.stdout, /misuse\.ts\(\d+,\d+\): error TS2322: Type 'string' is not assignable to type 'number'/);
    }
  });
});

async function freePort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('a Vite app consuming the tarball', () => {
  test('builds, and its output loads the wasm and runs seed 000 in headless Chromium', async () => {
    writeFileSync(
      join(app, 'index.html'),
      `<!doctype html>
<html><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>vite consumer</title></head>
<body><pre id="out">loading</pre><pre id="fast">loading</pre><script type="module" src="./main.js"></script></body></html>`,
    );
    writeFileSync(
      join(app, 'main.js'),
      `
import { loadAttention } from 'attention-explorer';
const engine = await loadAttention();
const [Q, K, V] = engine.random(42, [1, 2, 3].map(() => ({ kind: 'randn', shape: [4, 8] })));
const trace = engine.run({ Q, K, V });
document.getElementById('out').textContent = JSON.stringify(trace.steps.find((s) => s.id === 'weights').data[0]);
// The lean entry in the same app: its own .wasm, the same numbers as the trace's output.
const { loadFastAttention } = await import('attention-explorer/fast');
const fast = await loadFastAttention();
const output = fast.attention({ Q, K, V }).output;
document.getElementById('fast').textContent = JSON.stringify(Array.from(output.slice(0, 8)).map((x, i) => x - trace.output[0][i]));
`,
    );
    const vite = join(repo, 'node_modules', 'vite', 'bin', 'vite.js');
    const build = spawnSync('node', [vite, 'build', '--logLevel', 'warn'], { cwd: app, env, encoding: 'utf8' });
    assert.equal(build.status, 0, build.stdout + build.stderr);

    const out = join(app, 'dist');
    const types = { '.html': 'text/html', '.js': 'text/javascript', '.wasm': 'application/wasm' };
    const served = [];
    const server = createServer(async (req, res) => {
      const path = new URL(req.url, 'http://x').pathname;
      served.push(path);
      try {
        const body = await readFile(join(out, path === '/' ? 'index.html' : path));
        res.writeHead(200, { 'content-type': types[extname(path) || '.html'] ?? 'application/octet-stream' }).end(body);
      } catch {
        res.writeHead(404).end();
      }
    });
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    const browser = await launchBrowser();
    try {
      const page = await browser.newPage();
      const problems = [];
      page.on('console', (m) => m.type() === 'error' && problems.push(m.text()));
      page.on('pageerror', (e) => problems.push(e.message));
      await page.goto(`http://127.0.0.1:${server.address().port}/`);
      await page.waitForFunction(() => document.getElementById('out').textContent !== 'loading', null, { timeout: 20000 });
      const row = JSON.parse(await page.textContent('#out'));
      assertPrinted(row, WEIGHTS_ROW_1, 'weights row 1 in Chromium');
      assert.deepEqual(problems, []);
      assert.ok(
        served.some((p) => p.endsWith('.wasm')),
        `no .wasm fetched: ${served.join(' ')}`,
      );
      await page.waitForFunction(() => document.getElementById('fast').textContent !== 'loading', null, { timeout: 20000 });
      const differences = JSON.parse(await page.textContent('#fast'));
      assert.equal(differences.length, 8);
      differences.forEach((d) => assert.ok(Math.abs(d) < 1e-12, `fast path vs trace output differ by ${d}`));
      assert.equal(served.filter((p) => p.endsWith('.wasm')).length, 2, `two modules fetched: ${served.join(' ')}`);
    } finally {
      await browser.close();
      server.close();
    }
  });
  test('its dev server serves the package and the wasm loads in headless Chromium', async () => {
    const port = await freePort();
    const vite = join(repo, 'node_modules', 'vite', 'bin', 'vite.js');
    const server = spawn('node', [vite, '--host', '127.0.0.1', '--port', String(port), '--strictPort'], {
      cwd: app,
      env: { ...env, NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let log = '';
    // Without colour codes, which some environments (CI=true) still get around the port.
    const append = (d) => {
      log += String(d).replace(/\x1b\[[0-9;]*m/g, '');
    };
    server.stdout.on('data', append);
    server.stderr.on('data', append);
    const browser = await launchBrowser();
    try {
      for (let i = 0; i < 100 && !log.includes(`:${port}`); i++) await new Promise((r) => setTimeout(r, 200));
      assert.ok(log.includes(`:${port}`), `vite dev did not start: ${log}`);
      const page = await browser.newPage();
      const problems = [];
      page.on('pageerror', (e) => problems.push(e.message));
      await page.goto(`http://127.0.0.1:${port}/`);
      await page.waitForFunction(() => document.getElementById('out').textContent !== 'loading', null, { timeout: 30000 });
      assertPrinted(JSON.parse(await page.textContent('#out')), WEIGHTS_ROW_1, 'weights row 1 from vite dev');
      assert.deepEqual(problems, []);
    } finally {
      await browser.close();
      server.kill();
    }
  });
});
