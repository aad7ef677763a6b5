// Exports (dist/export.js through the package entry): CSV and JSON round-trip exactly; every
// LaTeX export renders in KaTeX; SVG heatmaps; numbers as text. (The NumPy and PyTorch scripts:
// python.test.mjs.)
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { createRequire } from 'node:module';

import { exportProblems } from './export-problems.mjs';
import { dist, repo } from './helpers.mjs';

const pkg = await import(`${dist}node.js`);
const {
  loadAttention,
  presetProblem,
  findPreset,
  solutionLatex,
  stepLatex,
  cellLatex,
  stepCsv,
  traceCsv,
  parseCsv,
  traceJson,
  heatmapSvg,
  matrixCsv,
  formatNumber,
  texNumber,
  matrixToText,
  stepCaption,
  numpyScript,
  pytorchScript,
} = pkg;
const { createTranslator, english, loadCatalogue, stepFormula } = await import(`${dist}i18n.js`);
const engine = await loadAttention();
const katex = createRequire(join(repo, 'package.json'))('katex');

function preset(id) {
  return presetProblem(findPreset(id), engine).problem;
}

const { PROBLEMS, POSITION_PROBLEMS, COLUMNS_POSITION_PROBLEMS } = exportProblems(engine, pkg);
const fromJson = (v) => (v === '-inf' ? -Infinity : v === 'inf' ? Infinity : v === 'nan' ? NaN : v);

test('CSV round-trips every step exactly, -inf included, and the whole trace as a long table', () => {
  for (const problem of Object.values({ ...PROBLEMS, ...POSITION_PROBLEMS })) {
    const trace = engine.run(problem);
    for (const step of trace.steps) {
      assert.deepEqual(parseCsv(stepCsv(step)), step.data);
      // The core's own parser reads it too.
      assert.deepEqual(engine.parseMatrix(stepCsv(step), step.id), step.data);
    }
    const long = parseCsv(traceCsv(trace));
    assert.deepEqual(
      long.steps.map(({ id, head, shape, data }) => ({ id, head, shape, data })),
      trace.steps.map(({ id, head, shape, data }) => ({ id, head, shape, data })),
    );
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
  assert.match(
    c,
    new RegExp(
      `^\\\\begin\\{aligned\\}\\nH_\\{1,${last + 1}\\} &= \\(\\\\text\\{head\\}_\\{${htrace.meta.heads}\\}\\)_\\{1,${htrace.meta.d_v}\\}`,
    ),
  );
});

test('SVG heatmap: one rect per cell, colours from the values, labels, numbers', () => {
  const problem = preset('000');
  const trace = engine.run(problem);
  const weights = trace.steps.find((s) => s.id === 'weights');
  const svg = heatmapSvg(weights, { title: 'Attention weights', rowLabels: ['w1', 'w2', 'w3', 'w4'], colLabels: ['w1', 'w2', 'w3', 'w4'] });
  assert.match(svg, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
  const cells = [...svg.matchAll(/<rect x="[\d.]+" y="[\d.]+" width="(\d+)" height="\d+" fill="(rgb\([\d,]+\))"/g)];
  assert.equal(cells.length, 16);
  // Weights are probabilities: a fixed scale from 0 (viridis' yellow) to 1 (its dark purple), so
  // 0.6406 (row 2, column 1) sits between its stops 10 and 11 (of 0 to 16).
  assert.equal(cells[4][2], 'rgb(46,110,142)');
  assert.ok(svg.includes('>0.64<'));
  assert.ok(svg.includes('<title>1,3: 0.5152107'));
  const causal = engine.run(preset('000-causal'));
  const cw = [...heatmapSvg(causal.steps.find((s) => s.id === 'weights')).matchAll(/fill="(rgb\([\d,]+\))"/g)].map((m) => m[1]);
  assert.deepEqual(cw.slice(0, 4), ['rgb(68,1,84)', 'rgb(253,231,37)', 'rgb(253,231,37)', 'rgb(253,231,37)']);
  // Scores are signed: a diverging scale symmetric about 0 up to the largest |score| (5.6001, row 2, column 1).
  const scores = [...heatmapSvg(trace.steps.find((s) => s.id === 'scores')).matchAll(/fill="(rgb\([\d,]+\))"/g)].map((m) => m[1]);
  assert.equal(scores[4], 'rgb(178,24,43)');
  const masked = causal.steps.find((s) => s.id === 'masked');
  const msvg = heatmapSvg(masked);
  assert.ok(msvg.includes('>−∞<'));
  assert.ok(msvg.includes('<title>Masked scores 4x4</title>'));
});

test('large problems: LaTeX elides to 16 × 16 with dots and still renders; SVG stays small', () => {
  const [Q, K, V] = engine.random(3, [
    { kind: 'randn', shape: [100, 8] },
    { kind: 'randn', shape: [100, 8] },
    { kind: 'randn', shape: [100, 8] },
  ]);
  const problem = { Q, K, V, options: { causal: true } };
  const trace = engine.run(problem);
  const weights = trace.steps.find((s) => s.id === 'weights');
  const tex = stepLatex(weights);
  const rows = tex.split(' \\\\\n');
  assert.equal(rows.length, 16);
  assert.equal(rows[14], [...Array(14).fill('\\vdots'), '\\ddots', '\\vdots'].join(' & '));
  assert.ok(
    rows[15].startsWith(
      weights.data[99]
        .slice(0, 1)
        .map((v) => v.toFixed(4))
        .join(''),
    ),
  );
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
  assert.deepEqual(
    [-Infinity, Infinity, NaN].map((x) => formatNumber(x)),
    ['\u2212∞', '∞', 'NaN'],
  );
  assert.equal(texNumber(-1.5e-7), '-1.500 \\times 10^{-7}');
  assert.equal(texNumber(2.5e8, 4), '2.500 \\times 10^{8}');
  assert.equal(texNumber(-0.5, 1), '-0.5');
  assert.deepEqual(
    [-Infinity, NaN].map((x) => texNumber(x)),
    ['-\\infty', '\\text{NaN}'],
  );
  const m = [
    [0.1, -Infinity, 1e-300],
    [Infinity, NaN, -2],
  ];
  assert.equal(matrixToText(m), '0.1 -inf 1e-300\ninf nan -2');
  assert.equal(matrixToText([1.5, '-inf']), '1.5 -inf');
  const back = engine.parseMatrix(matrixToText(m), 'M');
  assert.deepEqual(back, m);
});

test("an export in French: the headings, captions and the heatmap's words are French's, every number English's", async () => {
  const fr = createTranslator('fr', await loadCatalogue('fr'));
  const displays = (tex) => tex.match(/\\\[[\s\S]*?\\\]/g) ?? [];
  for (const [name, problem] of Object.entries(PROBLEMS)) {
    const trace = engine.run(problem);
    const en = solutionLatex(problem, trace, { decimals: 3, standalone: true });
    // English by default, and English's words are the catalogue's (the same text with t: english).
    assert.equal(solutionLatex(problem, trace, { decimals: 3, standalone: true, t: english }), en, name);
    const french = solutionLatex(problem, trace, { decimals: 3, standalone: true, t: fr });
    assert.ok(french.includes(`\\title{${fr('export.solution.title')}}`) && !french.includes('step by step'), `${name}: the title`);
    assert.ok(french.includes(`\\paragraph{${fr('export.solution.given')}}`) && !french.includes('{Given}'), `${name}: "Given"`);
    assert.ok(!/ queries, | keys, |, head \d/.test(french), `${name}: English in the French export`);
    // Every formula and matrix, every number, as in English; only the formulas' words (in \\text{}) are French.
    const symbols = (tex) => displays(tex).map((d) => d.replace(/\\text\{[^}]*\}/g, '\\text{}'));
    assert.ok(displays(en).length > trace.steps.length, name);
    assert.deepEqual(symbols(french), symbols(en), name);
    trace.steps.forEach((step) =>
      assert.ok(french.includes(`\\[ ${stepFormula(step, fr).tex} \\]`), `${name}: ${step.id}'s formula in French`),
    );
    if (trace.steps.some((s) => s.formula_ids.tex.includes('@{formula.given}')))
      assert.ok(french.includes('\\text{(donné)}') && !french.includes('(given)'), name);
    trace.steps.forEach((step, i) => {
      const caption = stepCaption(step, trace.meta.heads, fr);
      assert.ok(french.includes(`\\paragraph{${i + 1}. ${caption}}`), `${name}: step ${i + 1} is captioned "${caption}"`);
      if (trace.meta.heads > 1 && typeof step.head === 'number' && step.head >= 0)
        assert.equal(caption, `${fr(step.title_id)}, tête ${step.head + 1}`);
    });
  }
  // The scripts: their opening comment and their sections' comments in French, their code (every
  // line without its comment) English's.
  const multihead = PROBLEMS['multi-head with W_O'];
  const multiTrace = engine.run(multihead);
  const code = (script) =>
    script
      .split('\n')
      .filter((l) => !l.trimStart().startsWith('#'))
      .map((l) => l.replace(/ {2}# .*$/, ''));
  for (const script of [numpyScript, pytorchScript]) {
    const en = script(multihead, multiTrace, { recipe: 'np.random.seed(0)' });
    assert.equal(script(multihead, multiTrace, { recipe: 'np.random.seed(0)', t: english }), en);
    const french = script(multihead, multiTrace, { recipe: 'np.random.seed(0)', t: fr });
    assert.ok(en.startsWith('# Scaled dot-product attention, every step, in '), en.slice(0, 80));
    assert.ok(
      french.startsWith(`# ${fr('export.script.title', { library: script === numpyScript ? 'NumPy' : 'PyTorch' })}\n`),
      french.slice(0, 80),
    );
    assert.ok(
      french.includes(`# ${fr('export.script.recipe')}\n#   np.random.seed(0)`) && !french.includes('The inputs below'),
      'the recipe',
    );
    assert.ok(french.includes(`  ${fr('step.scores')}: `) && !french.includes('(head 1 stands for every head)'), 'the steps');
    for (const id of ['inputs', 'projections']) assert.ok(french.includes(`\n# ---- ${fr(`export.script.comment.${id}`)}\n`), id);
    for (const id of ['steps', 'sizes', 'sqrt-dk']) assert.ok(french.includes(`  # ${fr(`export.script.comment.${id}`)}\n`), id);
    assert.ok(!/# ---- inputs\n|# queries, keys\n|in the explorer's order/.test(french), 'English section comments');
    assert.ok(code(en).length > 50);
    assert.deepEqual(code(french), code(en));
  }
  // PyTorch's check and the backward pass's heading, a mask's comments, in French; English's code.
  const causal = { ...multihead, options: { ...multihead.options, causal: true, scale: 0.5 } };
  const torchFr = pytorchScript(causal, engine.run(causal), { t: fr });
  assert.ok(torchFr.includes(`# ---- ${fr('export.script.comment.check')}\n`), 'the check');
  assert.ok(torchFr.includes(`# ${fr('export.script.comment.mask', { cols: 'no' })}\n`), 'the mask');
  assert.ok(
    torchFr.includes(`  # ${fr('export.script.comment.causal', { cols: 'no' })}\n`) && torchFr.includes('  # échelle 0.5\n'),
    'causal, the scale',
  );
  assert.deepEqual(code(torchFr), code(pytorchScript(causal, engine.run(causal))));
  const backward = numpyScript(causal, engine.gradients(causal), { gradients: true, t: fr });
  assert.ok(
    backward.includes(`# ---- ${fr('export.script.comment.backward')}\n`) &&
      backward.includes(`  # ${fr('export.script.comment.no-dO')}\n`),
    'the backward pass',
  );
  assert.deepEqual(code(backward), code(numpyScript(causal, engine.gradients(causal), { gradients: true })));
  assert.equal(stepCaption({ title: 'Scores', title_id: 'step.scores', head: 1 }, 2), 'Scores, head 2');
  assert.equal(stepCaption({ title: 'Scores', title_id: 'step.scores', head: 1 }, 2, fr), 'Scores, tête 2');

  // A heatmap: the scale's meaning and a masked cell's tooltip in French, its cells English's.
  const trace = engine.run(PROBLEMS['keep-mask with a fully masked row']);
  const weights = trace.steps.find((s) => s.id === 'weights');
  const masked = weights.data.map((row) => row.map((v, j) => j === 0));
  const cells = (svg) =>
    svg
      .split('\n')
      .filter((l) => l.startsWith('<rect x=') || /text-anchor="middle" fill/.test(l))
      .map((l) => l.replace(/<title>[^<]*<\/title>/, ''));
  const enSvg = heatmapSvg(weights, { masked, numbers: true });
  const frSvg = heatmapSvg(weights, { masked, numbers: true, t: fr });
  assert.ok(enSvg.includes('>weight, 0 to 1<') && enSvg.includes(' (masked)</title>'), 'English heatmap');
  assert.ok(frSvg.includes(`>${fr('export.legend.probability')}<`) && !frSvg.includes('weight, 0 to 1'), 'the French scale');
  assert.ok(frSvg.includes(' (masqué)</title>') && !frSvg.includes('(masked)'), 'the French tooltip');
  assert.ok(frSvg.includes(`<title>${fr('step.weights')} `), 'the French default title');
  assert.ok(cells(enSvg).length >= 2 * weights.data.length * weights.data[0].length);
  assert.deepEqual(cells(frSvg), cells(enSvg));
});

// The scripts in French and Japanese: no English comment left (every comment text against en.json's
// English comment messages, and line by line against the English script), every line's code English's.
test("the NumPy and PyTorch scripts in French and Japanese: every comment in the language, every line's code English's", async () => {
  const en = JSON.parse(readFileSync(join(dist, 'locales/en.json'), 'utf8'));
  const R = (r, c, s) => Array.from({ length: r }, (_, i) => Array.from({ length: c }, (_, j) => Math.sin(s * (i * c + j + 1))));
  const wide = { X: R(4, 5, 7), W_Q: R(5, 8, 1), W_K: R(5, 8, 2), W_V: R(5, 4, 3), W_O: R(4, 3, 4) };
  const latent = {
    X: R(4, 6, 1),
    W_DKV: R(6, 3, 2),
    W_UK: R(3, 4, 3),
    W_UV: R(3, 4, 4),
    W_KR: R(6, 2, 5),
    W_Q: R(6, 4, 6),
    W_QR: R(6, 4, 7),
  };
  const problems = {
    ...PROBLEMS,
    ...POSITION_PROBLEMS,
    ...COLUMNS_POSITION_PROBLEMS,
    'QK-norm, RoPE, causal, a gate': {
      ...wide,
      W_G: R(5, 2, 5),
      options: { heads: 2, qk_norm: { type: 'layer' }, rope: true, causal: true },
    },
    'sigmoid, QK-norm, causal': { ...wide, options: { heads: 2, score_fn: 'sigmoid', qk_norm: { type: 'rms' }, causal: true } },
    'differential, RoPE, causal': { ...wide, options: { differential: { lambda: 0.5 }, rope: true, causal: true, softcap: 1.5 } },
    'linear, causal, decay': { ...wide, options: { attention: 'linear', feature_map: 'elu+1', causal: true, decay: 0.8, heads: 2 } },
    'latent, rotary, causal': { ...latent, W_O: R(4, 3, 8), options: { heads: 2, causal: true } },
  };
  // Every English comment message, with each value its selects take.
  const combos = [
    { cols: 'yes', user: 'yes', bias: 'alibi', multi: 'yes', layout: 'columns', library: 'NumPy', file: 'attention_numpy.py' },
    { cols: 'no', user: 'no', bias: 'mask', multi: 'no', layout: 'rows', library: 'PyTorch', file: 'attention_torch.py' },
    { cols: 'no', user: 'no', bias: 'both', multi: 'no', layout: 'rows', library: 'NumPy', file: 'attention_numpy.py' },
  ];
  const fill = { map: 'elu', scale: '0.5', names: 'QK-norm', reason: 'softcap', a: 'A', b: 'B', library: 'NumPy', file: 'attention.py' };
  const ids = Object.keys(en).filter((id) => id.startsWith('export.script.'));
  const texts = (t, id) =>
    combos.map((c) => t(id, { ...fill, queries: 1, keys: 1, d_k: 1, d_v: 1, heads: 1, kv_heads: 1, precision: 'x', ...c }));
  const comment = (line) =>
    /^\s*#/.test(line) ? line.replace(/^\s*# (---- )?/, '') : / {2}# /.test(line) ? line.replace(/^.*? {2}# /, '') : null;
  const code = (line) => (/^\s*#/.test(line) ? line.replace(/#.*$/, '#') : line.replace(/ {2}# .*$/, ''));
  for (const lang of ['fr', 'ja']) {
    const t = createTranslator(lang, await loadCatalogue(lang));
    // The English texts of the messages the language words differently (code such as `b` or `QK-norm` may stay).
    const english_ = new Set(ids.flatMap((id) => texts(english, id).filter((text, i) => text !== texts(t, id)[i])));
    let scripts = 0;
    for (const [name, problem] of Object.entries(problems)) {
      const runs = [
        [numpyScript, engine.run(problem), {}],
        [pytorchScript, engine.run(problem), {}],
      ];
      if (!problem.W_DKV) runs.push([numpyScript, engine.gradients(problem), { gradients: true }]);
      for (const [script, trace, options] of runs) {
        const inEnglish = script(problem, trace, options).split('\n');
        const inLang = script(problem, trace, { ...options, t }).split('\n');
        scripts++;
        assert.equal(inLang.length, inEnglish.length, `${lang} ${name}`);
        inLang.forEach((line, i) => {
          assert.equal(code(line), code(inEnglish[i]), `${lang} ${name}: line ${i + 1}'s code`);
          const said = comment(line);
          if (said == null) return;
          assert.ok(!english_.has(said), `${lang} ${name}: line ${i + 1}'s comment is English's: ${line}`);
          // Line by line: a comment as English's is code (a formula, a name), never an English phrase.
          if (said === comment(inEnglish[i]) && !said.startsWith('  '))
            assert.doesNotMatch(
              said.replace(/\b\w*[_\d]\w*\b/g, ''),
              /\b(the|a|an|in|of|to|by|with|its|each|every|per|for|from|and|as|is|are|no|not|The|It|Each|Skipped|Run|Layout|Generated|Scaled)\b/,
              `${lang} ${name}: ${line}`,
            );
        });
      }
    }
    assert.ok(scripts > 100, `${lang}: ${scripts} scripts`);
  }
});
