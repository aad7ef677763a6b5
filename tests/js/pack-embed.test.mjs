// The packed tarball's embedding entry points: attention-explorer/component and
// attention-explorer/share resolve and load in Node (the component module is safe to import
// server-side), the exports are in the main entry, and the types compile against real usage.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { before, test } from 'node:test';

import { repo } from './helpers.mjs';

const work = mkdtempSync(join(tmpdir(), 'attention-pack-embed-'));
const app = join(work, 'app');
const bin = join(work, 'bin');
const env = { ...process.env, PATH: bin, npm_config_update_notifier: 'false' };

before(() => {
  mkdirSync(bin);
  symlinkSync(process.execPath, join(bin, 'node'));
  symlinkSync(realpathSync(execFileSync('sh', ['-c', 'command -v npm'], { encoding: 'utf8' }).trim()), join(bin, 'npm'));
  const out = execFileSync('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', work], { cwd: repo, encoding: 'utf8' });
  const packed = JSON.parse(out)[0];
  for (const f of [
    'dist/export.js',
    'dist/share.js',
    'dist/share.d.ts',
    'dist/component.js',
    'dist/component.d.ts',
    'dist/widget.js',
    'dist/widget.d.ts',
  ]) {
    assert.ok(
      packed.files.some((p) => p.path === f),
      `${f} is missing from the tarball`,
    );
  }
  mkdirSync(app);
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  const install = spawnSync('npm', ['install', '--offline', '--no-audit', '--no-fund', join(work, packed.filename)], {
    cwd: app,
    env,
    encoding: 'utf8',
  });
  assert.equal(install.status, 0, install.stderr);
});

function node(script) {
  writeFileSync(join(app, 'run.mjs'), script);
  const r = spawnSync('node', ['run.mjs'], { cwd: app, env, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout.trim();
}

test('share and component subpaths load in Node; exports come from the main entry', () => {
  const out = node(`
    import { loadAttention, presetProblem, findPreset, numpyScript, stepLatex } from 'attention-explorer';
    import { encodeStateString, decodeStateString, problemToState, stateToProblem } from 'attention-explorer/share';
    import * as component from 'attention-explorer/component';
    import widget from 'attention-explorer/widget';
    const engine = await loadAttention();
    const { problem } = presetProblem(findPreset('000'), engine);
    const link = await encodeStateString(problemToState(problem));
    const again = stateToProblem((await decodeStateString(link)).state, engine);
    const w = engine.run(again).steps.find((s) => s.id === 'weights');
    console.log(JSON.stringify({
      link: link.slice(0, 3), w: w.data[0][0], component: Object.keys(component).sort(), widget: Object.keys(widget).sort(),
      script: numpyScript(problem, engine.run(problem)).includes('np.random.seed(42)') ? 'recipe' : 'ok',
      tex: stepLatex(w).slice(0, 26),
    }));
  `);
  const r = JSON.parse(out);
  assert.equal(r.link, 'v2=');
  assert.equal(r.w, 0.08431243246451131); // seed 000 prints 0.08431243
  assert.deepEqual(r.component, ['AttentionExplorerElement', 'readAttribute', 'sharedEngine']);
  assert.deepEqual(r.widget, ['initialize', 'render']); // the anywidget contract
  assert.equal(r.tex, 'A = \\begin{bmatrix}\n0.0843');
});

test('types of the component, share and export functions compile against real usage', () => {
  writeFileSync(
    join(app, 'embed.ts'),
    `
    import { AttentionExplorerElement, sharedEngine } from 'attention-explorer/component';
    import { encodeStateString, decodeStateString, stateToProblem, type ExplorerState } from 'attention-explorer/share';
    import { numpyScript, pytorchScript, solutionLatex, cellLatex, heatmapSvg, traceCsv, parseCsv, problemContext, type Trace } from 'attention-explorer';
    import widget, { type AttentionWidgetModel } from 'attention-explorer/widget';

    function view(model: AttentionWidgetModel, el: HTMLElement): () => void {
      widget.initialize({ model });
      model.set('problem', { Q: [[1]], K: [[1]], V: [[2]] });
      model.save_changes();
      return widget.render({ model, el });
    }

    async function main(): Promise<void> {
      const el = document.createElement('attention-explorer');
      const typed: AttentionExplorerElement = el;
      typed.addEventListener('change', (e) => { const t: Trace = e.detail.trace; console.log(t.output, e.detail.problem.options); });
      AttentionExplorerElement.katex = { renderToString: (tex: string) => tex };
      const engine = await sharedEngine({ wasmUrl: '/attention.wasm' });
      const state: ExplorerState = { preset: '000', exercise: { steps: ['weights:0'], tolerance: 0.01 } };
      const link: string = await encodeStateString(state);
      const { state: back, error } = await decodeStateString(link);
      if (back) {
        const problem = stateToProblem(back, engine);
        const trace = engine.run(problem);
        const texts: string[] = [numpyScript(problem, trace), pytorchScript(problem, trace, { recipe: 'np.random.seed(0)' }),
          solutionLatex(problem, trace, { standalone: true }), cellLatex(engine.explain(problem, { step: 'scores', row: 0, col: 0 }), trace),
          heatmapSvg(trace.steps[0], { title: 'Q', numbers: true }), traceCsv(trace)];
        console.log(texts, parseCsv(texts[5]), problemContext(problem).layout, error);
      }
    }
    void main();
    void view;
  `,
  );
  const tsc = join(repo, 'node_modules', 'typescript', 'bin', 'tsc');
  for (const [module, resolution] of [
    ['nodenext', 'nodenext'],
    ['esnext', 'bundler'],
  ]) {
    const r = spawnSync(
      'node',
      [
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
        'embed.ts',
      ],
      { cwd: app, env, encoding: 'utf8' },
    );
    assert.equal(r.status, 0, `${resolution}: ${r.stdout}${r.stderr}`);
  }
});
