// Exports (dist/export.js through the package entry): the generated NumPy script, run with
// Debian's python3 + python3-numpy, reproduces the trace; CSV and JSON round-trip exactly; every
// LaTeX export renders in KaTeX; the PyTorch script has the structure that checks against
// scaled_dot_product_attention (torch is not installed here, so it is read, not run).
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { createRequire } from 'node:module';

import { dist, repo } from './helpers.mjs';

const pkg = await import(`${dist}node.js`);
const {
  loadAttention, presetProblem, findPreset, numpyScript, pytorchScript, solutionLatex, stepLatex, cellLatex,
  stepCsv, traceCsv, parseCsv, traceJson, heatmapSvg, matrixCsv, formatNumber, texNumber, matrixToText,
} = pkg;
const engine = await loadAttention();
const katex = createRequire(join(repo, 'package.json'))('katex');

const PYTHON = '/usr/bin/python3'; // Debian's, with python3-numpy (not a pyenv python on PATH)
const hasNumpy = existsSync(PYTHON) && (() => {
  try { execFileSync(PYTHON, ['-c', 'import numpy']); return true; } catch { return false; }
})();
const work = mkdtempSync(join(tmpdir(), 'attn-export-'));

function preset(id) {
  return presetProblem(findPreset(id), engine).problem;
}

// Problems covering every branch of the scripts.
const [Xm, Wq, Wk, Wv, Wo] = engine.random(7, [
  { kind: 'randn', shape: [5, 6] }, { kind: 'randn', shape: [6, 4] }, { kind: 'randn', shape: [6, 2] },
  { kind: 'randn', shape: [6, 2] }, { kind: 'randn', shape: [4, 3] },
]);
const T = (m) => m[0].map((_, j) => m.map((row) => row[j]));
const PROBLEMS = {
  'seed 000': preset('000'),
  'seed 000 causal': preset('000-causal'),
  'seed 002 columns, no scale': preset('002'),
  'seed 002 columns, scaled': preset('002-scaled'),
  'seed 003 float32, 1/sqrt(3)': preset('003'),
  'seed 004': preset('004'),
  'multi-head with W_O': preset('multihead'),
  'cross-attention': preset('cross'),
  'keep-mask with a fully masked row': {
    Q: [[1, 0], [0, 1], [1, 1]], K: [[1, 2], [0, 1], [2, 0]], V: [[1, 0], [0, 1], [3, 3]],
    options: { mask: [[true, false, true], [false, false, false], [true, true, true]] },
  },
  'additive mask, softcap, multiply scale': {
    Q: [[1, 0.5], [0, 2]], K: [[1, 2], [0.5, 1], [2, 0]], V: [[1, 0], [0, 1], [3, 3]],
    options: { mask: [[0, '-inf', -1], [0, 0, 0.5]], softcap: 2, scale: 0.7 },
  },
  'GQA 2 heads / 1 kv head, biases, W_O + b_O, causal': {
    X: Xm, W_Q: Wq, W_K: Wk, W_V: Wv, b_Q: [0.1, -0.2, 0.3, 0], b_K: [0.5, -0.5], b_V: [1, 2],
    W_O: Wo, b_O: [0.1, 0.2, 0.3], options: { heads: 2, kv_heads: 1, causal: true },
  },
  'columns layout, causal, biases, float32, 1/4': {
    X: T(Xm), W_Q: T(Wq), W_K: T(Wq), W_V: T(Wv), b_Q: [0, 1, 0, 1], b_K: [1, 0, 1, 0], b_V: [0, 1],
    options: { layout: 'columns', causal: true, precision: 'float32', scale: '1/4' },
  },
};

// Positions, RoPE, the KV cache, position encodings, ALiBi, windows, sinks and mask fills: only
// the NumPy script is checked on these.
const POSITION_PROBLEMS = {
  'RoPE (half) with a KV cache, causal, GQA': {
    Q: [[1, 0.5, -1, 2], [0.3, -0.2, 1, 0.1]], K: [[0.5, 1], [1, -1]], V: [[1, 2], [0, 1]],
    past_K: [[0.2, -0.4], [1, 0.3]], past_V: [[3, 1], [-1, 0.5]],
    options: { heads: 2, kv_heads: 1, causal: true, rope: true },
  },
  'RoPE interleaved, partial dims, base 100, float32, explicit positions': {
    Q: [[1, 0.5, -1, 2, 1, 1], [0.3, -0.2, 1, 0.1, 2, -2]], K: [[0.5, 1, 2, -1, 1, 0], [1, -1, 0, 3, 0, 1], [0.1, 0.2, 0.3, 0.4, 0.5, 0.6]], V: [[1], [2], [3]],
    options: { rope: { style: 'interleaved', dims: 4, base: 100 }, precision: 'float32', positions: { queries: [5, 9], keys: [0, 3, 7] } },
  },
  'RoPE cos/sin tables': {
    Q: [[1, 0.5], [0.3, -0.2]], K: [[0.5, 1], [1, -1]], V: [[1, 2], [0, 1]],
    options: { rope: { cos: [[1], [0.6], [0]], sin: [[0], [0.8], [1]] }, positions: { queries: [1, 2], keys: [0, 2] } },
  },
  'sinusoidal positions, ALiBi paper slopes for 3 heads': {
    X: Xm, W_Q: Wq.map((r) => [...r, r[0], r[1]]), W_K: Wq.map((r) => [...r, r[2], r[3]]), W_V: Wq.map((r) => [...r, r[0], r[3]]),
    options: { heads: 3, positional: 'sinusoidal', alibi: true },
  },
  'learned positions P, ALiBi slopes given': {
    X: Xm, W_Q: Wq, W_K: Wk, W_V: Wv, P: Xm.map((r) => r.map((v) => v / 10)),
    options: { heads: 2, kv_heads: 1, alibi: [0.5, 0.25] },
  },
  'window with a sink token, causal, sink logits per head': {
    X: Xm, W_Q: Wq, W_K: Wq, W_V: Wv,
    options: { heads: 2, causal: true, window: [1, 0], sink_tokens: 1, sink_logit: [0, -1] },
  },
  'finite mask_fill with a fully masked row': {
    Q: [[1, 0], [0, 1], [1, 1]], K: [[1, 2], [0, 1], [2, 0]], V: [[1, 0], [0, 1], [3, 3]],
    options: { mask: [[true, false, true], [false, false, false], [true, true, true]], mask_fill: -1e9 },
  },
  'fully_masked nan, window [null, 0] with an additive mask': {
    Q: [[1, 0], [0, 1], [1, 1]], K: [[1, 2], [0, 1], [2, 0]], V: [[1, 0], [0, 1], [3, 3]],
    options: { mask: [[0, 0, 0], ['-inf', '-inf', 0], [0, -1, 0.5]], window: [null, 0], fully_masked: 'nan' },
  },
};

test('the scripts refuse what they do not reproduce: PyTorch and the columns layout with positions', { skip: !hasNumpy && 'no /usr/bin/python3 with numpy' }, () => {
  const cached = POSITION_PROBLEMS['RoPE (half) with a KV cache, causal, GQA'];
  const torch = pytorchScript(cached, engine.run(cached));
  assert.match(torch, /^sys\.exit\("this script does not reproduce past_K \(a KV cache\), options\.rope in PyTorch yet"\)$/m);
  const columns = { Q: [[1, 0], [0, 1]], K: [[1, 2], [0, 1]], V: [[1, 0], [0, 1]], options: { layout: 'columns', window: [0, 0] } };
  const r = spawnSync(PYTHON, ['-c', numpyScript(columns, engine.run(columns))], { encoding: 'utf8' });
  assert.equal(r.status, 1);
  assert.equal(r.stdout, '');
  assert.equal(r.stderr, 'this script does not reproduce options.window in the columns layout yet\n');
});

function runPython(script, name) {
  const file = join(work, `${name.replace(/[^a-z0-9]+/gi, '_')}.py`);
  writeFileSync(file, script);
  return execFileSync(PYTHON, [file, '--json'], { encoding: 'utf8' });
}

const fromJson = (v) => (v === '-inf' ? -Infinity : v === 'inf' ? Infinity : v === 'nan' ? NaN : v);

for (const [name, problem] of Object.entries({ ...PROBLEMS, ...POSITION_PROBLEMS })) {
  test(`the NumPy script reproduces the trace: ${name}`, { skip: !hasNumpy && 'no /usr/bin/python3 with numpy' }, () => {
    const trace = engine.run(problem);
    const steps = JSON.parse(runPython(numpyScript(problem, trace), name));
    assert.deepEqual(steps.map((s) => `${s.id}:${s.head}`), trace.steps.map((s) => `${s.id}:${s.head}`));
    const f32 = trace.meta.precision === 'float32';
    const [rtol, atol] = f32 ? [2e-6, 2e-7] : [1e-12, 1e-13];
    steps.forEach((s, k) => {
      const want = trace.steps[k];
      assert.deepEqual(s.shape, want.shape, `${s.id} shape`);
      s.data.forEach((row, i) => row.forEach((v, j) => {
        const got = fromJson(v);
        const w = want.data[i][j];
        if (!Number.isFinite(w)) assert.equal(got, w, `${s.id}:${s.head} [${i}][${j}]`);
        else assert.ok(Math.abs(got - w) <= atol + rtol * Math.abs(w), `${s.id}:${s.head} [${i}][${j}] = ${got}, trace ${w}`);
      }));
    });
  });
}

test('the NumPy script prints readable steps without --json, and quotes the recipe', { skip: !hasNumpy }, () => {
  const { problem, numpy } = presetProblem(findPreset('000'), engine);
  const trace = engine.run(problem);
  const script = numpyScript(problem, trace, { recipe: numpy.Q });
  assert.match(script, /^# {3}np\.random\.seed\(42\)$/m);
  // Each step's name and formula, as the trace gives them.
  assert.match(script, /^# {3}scores {3}Scores: S = Q·Kᵀ$/m);
  assert.match(script, /^# {3}scaled {3}Scaled scores: S̃ = S \/ √d_k = S \/ √8$/m);
  const file = join(work, 'plain.py');
  writeFileSync(file, script);
  const out = execFileSync(PYTHON, [file], { encoding: 'utf8' });
  assert.match(out, /^weights 4x4:\n\[\[0\.0843 0\.2551 0\.5152 0\.1453\]/m);
});

test('the PyTorch script has every step and checks scaled_dot_product_attention where it can', () => {
  const seed = preset('000-causal');
  const s = pytorchScript(seed, engine.run(seed));
  assert.match(s, /^import torch$/m);
  assert.match(s, /^dt = torch\.float64$/m);
  assert.match(s, /F\.scaled_dot_product_attention\(q, k, v, is_causal=True, scale=1\.0 \/ float\(divisor\)\)/);
  assert.match(s, /torch\.testing\.assert_close\(ours, sdpa/);
  for (const id of ['Q', 'K', 'V', 'scores', 'scaled', 'masked', 'weights', 'output']) assert.ok(s.includes(`"${id}"`), id);
  // Python syntax: compile it (no torch needed to compile).
  if (hasNumpy) {
    const file = join(work, 'torch_000.py');
    writeFileSync(file, s);
    execFileSync(PYTHON, ['-m', 'py_compile', file]);
  }

  const masked = PROBLEMS['additive mask, softcap, multiply scale'];
  const capped = pytorchScript(masked, engine.run(masked));
  assert.match(capped, /Skipped: scaled_dot_product_attention has no softcap/);
  assert.doesNotMatch(capped, /F\.scaled_dot_product_attention\(/);

  const gqa = PROBLEMS['GQA 2 heads / 1 kv head, biases, W_O + b_O, causal'];
  const g = pytorchScript(gqa, engine.run(gqa));
  assert.match(g, /repeat_interleave\(heads \/\/ kv_heads, dim=0\)/);
  // The key/value head of each query head comes from the trace's steps.
  assert.match(g, /^kv_group = \[0, 0\] {2}# the key\/value head each query head reads$/m);
  assert.match(g, /^ {4}g = kv_group\[h\]$/m);
  assert.match(g, /^output = concat @ W_O \+ b_O$/m);

  const cols = PROBLEMS['columns layout, causal, biases, float32, 1/4'];
  const c = pytorchScript(cols, engine.run(cols));
  assert.match(c, /^dt = torch\.float32$/m);
  assert.match(c, /q = Q\.T\.reshape\(L, heads, d_k\)/);
  assert.match(c, /rtol=1e-5, atol=1e-6/);
  const keep = PROBLEMS['keep-mask with a fully masked row'];
  const k = pytorchScript(keep, engine.run(keep));
  assert.match(k, /attn_mask=M,/);
  assert.match(k, /M\[~keep\] = -math\.inf/);
  if (hasNumpy) {
    for (const [n, text] of [['torch_gqa', g], ['torch_cols', c], ['torch_keep', k], ['torch_cap', capped]]) {
      writeFileSync(join(work, `${n}.py`), text);
      execFileSync(PYTHON, ['-m', 'py_compile', join(work, `${n}.py`)]);
    }
  }
});

test('CSV round-trips every step exactly, -inf included, and the whole trace as a long table', () => {
  for (const problem of Object.values({ ...PROBLEMS, ...POSITION_PROBLEMS })) {
    const trace = engine.run(problem);
    for (const step of trace.steps) {
      assert.deepEqual(parseCsv(stepCsv(step)), step.data);
      // The core's own parser reads it too.
      assert.deepEqual(engine.parseMatrix(stepCsv(step), step.id), step.data);
    }
    const long = parseCsv(traceCsv(trace));
    assert.deepEqual(long.steps.map(({ id, head, shape, data }) => ({ id, head, shape, data })),
      trace.steps.map(({ id, head, shape, data }) => ({ id, head, shape, data })));
  }
  const weights = engine.run(preset('000')).steps.find((s) => s.id === 'weights');
  const labelled = stepCsv(weights, { rowLabels: ['w1', 'w2', 'w3', 'w4'], colLabels: ['w1', 'w2', 'w3', 'w4'] });
  assert.equal(labelled.split('\n')[0], ',w1,w2,w3,w4');
  assert.match(labelled.split('\n')[1], /^w1,0\.0843124/);
  assert.equal(matrixCsv([[1, 'x'.length]], { colLabels: ['a,b', 'c"d'] }), '"a,b","c""d"\n1,1\n');
});

test('JSON round-trips the trace (non-finite numbers as "-inf")', () => {
  for (const problem of Object.values({ ...PROBLEMS, ...POSITION_PROBLEMS })) {
    const trace = engine.run(problem);
    const text = traceJson(trace);
    const back = JSON.parse(text, (k, v) => fromJson(v));
    assert.deepEqual(back, trace);
  }
  const causal = traceJson(engine.run(preset('000-causal')));
  assert.ok(causal.includes('"-inf"'));
});

function renderAllMath(latex, where) {
  const blocks = [...latex.matchAll(/\\\[([\s\S]*?)\\\]/g)].map((m) => m[1]);
  assert.ok(blocks.length > 0, `${where}: no display math`);
  for (const b of blocks) {
    assert.doesNotThrow(() => katex.renderToString(b, { throwOnError: true, displayMode: true }), `${where}: ${b.slice(0, 200)}`);
  }
  return blocks.length;
}

test('LaTeX: every step, the whole solution and worked cells render in KaTeX', () => {
  for (const [name, problem] of Object.entries({ ...PROBLEMS, ...POSITION_PROBLEMS })) {
    const trace = engine.run(problem);
    for (const step of trace.steps) {
      const tex = stepLatex(step, { decimals: 3 });
      assert.match(tex, /\\begin\{bmatrix\}/);
      katex.renderToString(tex, { throwOnError: true, displayMode: true });
      katex.renderToString(step.tex, { throwOnError: true, displayMode: true });
      // One cell of every step, worked.
      const e = engine.explain(problem, { step: step.id, head: step.head, row: step.shape[0] - 1, col: 0 });
      const cell = cellLatex(e, trace);
      assert.match(cell, /^\\begin\{aligned\}/);
      assert.doesNotThrow(() => katex.renderToString(cell, { throwOnError: true, displayMode: true }), `${name} ${step.id}: ${cell}`);
    }
    const n = renderAllMath(solutionLatex(problem, trace), name);
    assert.ok(n >= 2 * trace.steps.length);
    const doc = solutionLatex(problem, trace, { standalone: true });
    assert.match(doc, /^\\documentclass\{article\}/);
    assert.match(doc, /\\end\{document\}\n$/);
  }
});

test('LaTeX carries the trace numbers: seed 000 weights and a worked softmax', () => {
  const problem = preset('000');
  const trace = engine.run(problem);
  const weights = trace.steps.find((s) => s.id === 'weights');
  const tex = stepLatex(weights, { decimals: 4 });
  assert.ok(tex.startsWith('A = \\begin{bmatrix}\n0.0843 & 0.2551 & 0.5152 & 0.1453 \\\\\n0.6406'), tex);
  const e = engine.explain(problem, { step: 'weights', row: 0, col: 2 });
  const cell = cellLatex(e, trace, { decimals: 4 });
  // The softmax reads the scaled scores here (no softcap, no mask): the trace says so.
  assert.match(cell, /^\\begin\{aligned\}\nA_\{1,3\} &= \\frac\{e\^\{\\tilde S_\{1,3\} - m\}\}/);
  assert.match(cell, /&= 0\.5152\n\\end\{aligned\}$/);
  const dot = cellLatex(engine.explain(problem, { step: 'scores', row: 1, col: 0 }), trace);
  assert.match(dot, /S_\{2,1\} &= \\sum_m Q_\{2,m\}\\,K_\{1,m\}/);
  const masked = preset('000-causal');
  const mtrace = engine.run(masked);
  const mtex = stepLatex(mtrace.steps.find((s) => s.id === 'masked'));
  assert.match(mtex, /^\\bar S = .*-\\infty/s);
  const soft = cellLatex(engine.explain(masked, { step: 'weights', row: 1, col: 0 }), mtrace);
  assert.match(soft, /\\frac\{e\^\{\\bar S_\{2,1\} - m\}\}/);
  // Several heads: symbols carry the head, the concatenation names the head it copies.
  const multi = preset('multihead');
  const htrace = engine.run(multi);
  const scaled = cellLatex(engine.explain(multi, { step: 'scaled', head: 1, row: 0, col: 0 }), htrace);
  assert.match(scaled, /^\\begin\{aligned\}\n\\tilde S\^\{\(2\)\}_\{1,1\} &= \\frac\{S\^\{\(2\)\}_\{1,1\}\}/);
  const concat = htrace.steps.find((s) => s.id === 'concat');
  const last = concat.shape[1] - 1;
  const c = cellLatex(engine.explain(multi, { step: 'concat', head: null, row: 0, col: last }), htrace);
  assert.match(c, new RegExp(`^\\\\begin\\{aligned\\}\\nH_\\{1,${last + 1}\\} &= \\(\\\\text\\{head\\}_\\{${htrace.meta.heads}\\}\\)_\\{1,${htrace.meta.d_v}\\}`));
});

test('SVG heatmap: one rect per cell, colours from the values, labels, numbers', () => {
  const problem = preset('000');
  const trace = engine.run(problem);
  const weights = trace.steps.find((s) => s.id === 'weights');
  const svg = heatmapSvg(weights, { title: 'Attention weights', rowLabels: ['w1', 'w2', 'w3', 'w4'], colLabels: ['w1', 'w2', 'w3', 'w4'] });
  assert.match(svg, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
  const cells = [...svg.matchAll(/<rect x="[\d.]+" y="[\d.]+" width="(\d+)" height="\d+" fill="(rgb\([\d,]+\))"/g)];
  assert.equal(cells.length, 16);
  // Weights are probabilities: a fixed scale from 0 (white) to 1 (the darkest blue), so 0.6406
  // (row 2, column 1) sits between its stops 5 and 6.
  assert.equal(cells[4][2], 'rgb(62,142,196)');
  assert.ok(svg.includes('>0.64<'));
  assert.ok(svg.includes('<title>1,3: 0.5152107'));
  const causal = engine.run(preset('000-causal'));
  const cw = [...heatmapSvg(causal.steps.find((s) => s.id === 'weights')).matchAll(/fill="(rgb\([\d,]+\))"/g)].map((m) => m[1]);
  assert.deepEqual(cw.slice(0, 4), ['rgb(8,48,107)', 'rgb(255,255,255)', 'rgb(255,255,255)', 'rgb(255,255,255)']);
  // Scores are signed: a diverging scale symmetric about 0 up to the largest |score| (5.6001, row 2, column 1).
  const scores = [...heatmapSvg(trace.steps.find((s) => s.id === 'scores')).matchAll(/fill="(rgb\([\d,]+\))"/g)].map((m) => m[1]);
  assert.equal(scores[4], 'rgb(178,24,43)');
  const masked = causal.steps.find((s) => s.id === 'masked');
  const msvg = heatmapSvg(masked);
  assert.ok(msvg.includes('>−∞<'));
  assert.ok(msvg.includes('<title>Masked scores 4x4</title>'));
});

test('large problems: LaTeX elides to 16 × 16 with dots and still renders; SVG stays small', () => {
  const [Q, K, V] = engine.random(3, [{ kind: 'randn', shape: [100, 8] }, { kind: 'randn', shape: [100, 8] }, { kind: 'randn', shape: [100, 8] }]);
  const problem = { Q, K, V, options: { causal: true } };
  const trace = engine.run(problem);
  const weights = trace.steps.find((s) => s.id === 'weights');
  const tex = stepLatex(weights);
  const rows = tex.split(' \\\\\n');
  assert.equal(rows.length, 16);
  assert.equal(rows[14], [...Array(14).fill('\\vdots'), '\\ddots', '\\vdots'].join(' & '));
  assert.ok(rows[15].startsWith(weights.data[99].slice(0, 1).map((v) => v.toFixed(4)).join('')));
  assert.ok(rows[0].split(' & ')[14] === '\\cdots');
  katex.renderToString(tex, { throwOnError: true });
  assert.equal(stepLatex(weights, { max: 200 }).split(' \\\\\n').length, 100);
  const svg = heatmapSvg(weights);
  assert.equal([...svg.matchAll(/<rect x=/g)].length, 10000);
  assert.ok(!svg.includes('<title>1,1:'), 'no per-cell tooltips for 10,000 cells');
  assert.ok(svg.length < 1_200_000, `SVG is ${svg.length} characters`);
});

test('numbers as text: one rule for the views (places, scientific, infinities) and text that parses back', () => {
  assert.equal(formatNumber(-0.123456), '\u22120.1235');
  assert.equal(formatNumber(0.123456, 2), '0.12');
  assert.equal(formatNumber(-1.5e-7), '\u22121.500e\u22127');
  assert.equal(formatNumber(12345678, 2), '1.2e+7');
  assert.equal(formatNumber(0), '0');
  assert.equal(formatNumber(0, 3, { fixedZero: true }), '0.000');
  assert.deepEqual([-Infinity, Infinity, NaN].map((x) => formatNumber(x)), ['\u2212∞', '∞', 'NaN']);
  assert.equal(texNumber(-1.5e-7), '-1.500 \\times 10^{-7}');
  assert.equal(texNumber(2.5e8, 4), '2.500 \\times 10^{8}');
  assert.equal(texNumber(-0.5, 1), '-0.5');
  assert.deepEqual([-Infinity, NaN].map((x) => texNumber(x)), ['-\\infty', '\\text{NaN}']);
  const m = [[0.1, -Infinity, 1e-300], [Infinity, NaN, -2]];
  assert.equal(matrixToText(m), '0.1 -inf 1e-300\ninf nan -2');
  assert.equal(matrixToText([1.5, '-inf']), '1.5 -inf');
  const back = engine.parseMatrix(matrixToText(m), 'M');
  assert.deepEqual(back, m);
});
