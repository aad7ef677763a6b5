// The NumPy and PyTorch scripts (web/lib/python.js through the package entry) rebuild every step
// of the trace, in both layouts, for every option. The NumPy script runs with Debian's python3 +
// python3-numpy. torch is not installed here: the PyTorch script runs on tests/fixtures/torch_double,
// a test double of the part of torch it calls, written on NumPy (its scaled_dot_product_attention
// is PyTorch's documented reference implementation), and is read for its structure too.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import { exportProblems } from './export-problems.mjs';
import { dist, repo } from './helpers.mjs';

const pkg = await import(`${dist}node.js`);
const { loadAttention, presetProblem, findPreset, numpyScript, pytorchScript } = pkg;
const engine = await loadAttention();
const { PROBLEMS, POSITION_PROBLEMS, COLUMNS_POSITION_PROBLEMS } = exportProblems(engine, pkg);

const PYTHON = '/usr/bin/python3'; // Debian's, with python3-numpy (not a pyenv python on PATH)
const hasNumpy =
  existsSync(PYTHON) &&
  (() => {
    try {
      execFileSync(PYTHON, ['-c', 'import numpy']);
      return true;
    } catch {
      return false;
    }
  })();
const noNumpy = !hasNumpy && 'no /usr/bin/python3 with numpy';
const TORCH_DOUBLE = join(repo, 'tests/fixtures/torch_double');
const work = mkdtempSync(join(tmpdir(), 'attn-python-'));

function preset(id) {
  return presetProblem(findPreset(id), engine).problem;
}

/** Runs a script (PyTorch ones on the torch double); `{ status, stdout, stderr }`. */
function runPython(script, name, args = ['--json']) {
  const file = join(work, `${name.replace(/[^a-z0-9]+/gi, '_')}.py`);
  writeFileSync(file, script);
  return spawnSync(PYTHON, [file, ...args], { encoding: 'utf8', env: { ...process.env, PYTHONPATH: TORCH_DOUBLE } });
}

const fromJson = (v) => (v === '-inf' ? -Infinity : v === 'inf' ? Infinity : v === 'nan' ? NaN : v);

const MAGNITUDES = new WeakMap(); // trace -> Map(step index -> magnitude)

/** The largest finite |entry| of step k and of every step it was computed from (memoised). */
function magnitude(trace, k) {
  if (!MAGNITUDES.has(trace)) MAGNITUDES.set(trace, new Map());
  const memo = MAGNITUDES.get(trace);
  if (!memo.has(k)) {
    const own = trace.steps[k].data.flat().filter(Number.isFinite).map(Math.abs);
    memo.set(k, Math.max(1e-300, ...own, ...trace.steps[k].inputs.map((i) => magnitude(trace, i))));
  }
  return memo.get(k);
}

/**
 * Every step the script printed (--json) equals the trace's, in the trace's order. `scaled`: the
 * absolute tolerance is relative to the largest entry of each step and of the steps it comes from
 * (a gradient summed with cancellation is as exact as its terms, not as its small result).
 */
function assertReproduces(script, trace, name, { scaled = false } = {}) {
  const r = runPython(script, name);
  assert.equal(r.status, 0, r.stderr);
  const steps = JSON.parse(r.stdout);
  assert.deepEqual(
    steps.map((s) => `${s.id}:${s.head}`),
    trace.steps.map((s) => `${s.id}:${s.head}`),
  );
  const f32 = trace.meta.precision === 'float32';
  const [rtol, atol] = f32 ? [2e-6, scaled ? 2e-5 : 2e-7] : [1e-12, scaled ? 1e-12 : 1e-13];
  steps.forEach((s, k) => {
    const want = trace.steps[k];
    const largest = scaled ? magnitude(trace, k) : 1;
    assert.deepEqual(s.shape, want.shape, `${s.id} shape`);
    s.data.forEach((row, i) =>
      row.forEach((v, j) => {
        const got = fromJson(v);
        const w = want.data[i][j];
        if (!Number.isFinite(w)) assert.equal(got, w, `${s.id}:${s.head} [${i}][${j}]`);
        else assert.ok(Math.abs(got - w) <= atol * largest + rtol * Math.abs(w), `${s.id}:${s.head} [${i}][${j}] = ${got}, trace ${w}`);
      }),
    );
  });
}

const ALL = { ...PROBLEMS, ...POSITION_PROBLEMS, ...COLUMNS_POSITION_PROBLEMS };
for (const [dialect, script] of [
  ['NumPy', numpyScript],
  ['PyTorch', pytorchScript],
]) {
  for (const [name, problem] of Object.entries(ALL)) {
    test(`the ${dialect} script reproduces the trace: ${name}`, { skip: noNumpy }, () => {
      assertReproduces(script(problem, engine.run(problem)), engine.run(problem), `${dialect} ${name}`);
    });
  }
}

test('the columns-layout problems are the rows-layout ones transposed (so both layouts are checked on the same numbers)', () => {
  for (const [name, problem] of Object.entries(POSITION_PROBLEMS)) {
    const rows = engine.run(problem);
    const cols = engine.run(COLUMNS_POSITION_PROBLEMS[`${name}, columns layout`]);
    assert.equal(cols.meta.layout, 'columns');
    const T = (m) => m[0].map((_, j) => m.map((row) => row[j]));
    assert.deepEqual(
      cols.steps.map((s) => s.data),
      rows.steps.map((s) => T(s.data)),
      name,
    );
  }
});

test('the PyTorch script checks itself against scaled_dot_product_attention, and the check bites', { skip: noNumpy }, () => {
  const problem = POSITION_PROBLEMS['RoPE (half) with a KV cache, causal, GQA'];
  const script = pytorchScript(problem, engine.run(problem));
  const r = runPython(script, 'torch check', []);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /^Q_rot \(head 1\) 2x2:\ntensor\(\[\[-0\.8708, {2}0\.7012\],/m);
  assert.match(r.stdout, /\nmatches torch\.nn\.functional\.scaled_dot_product_attention\n$/);
  // A head output off by 1e-4 no longer matches scaled_dot_product_attention.
  const broken = script.replace('head_outputs.append(weights @ Vh)', 'head_outputs.append(weights @ Vh * 1.0001)');
  assert.notEqual(broken, script);
  const b = runPython(broken, 'torch check broken');
  assert.equal(b.status, 1);
  assert.match(b.stderr, /AssertionError: Tensor-likes are not close!/);
});

test('the torch double keeps the torch semantics the scripts rely on', { skip: noNumpy }, () => {
  const probe = [
    'import math, torch',
    'x = torch.tensor([[1.0, 2.0], [-math.inf, -math.inf]], dtype=torch.float32)',
    'w = torch.softmax(x, dim=1)',
    'print(w.dtype, math.isnan(w[1, 0].item()), (x * torch.tensor(2.0, dtype=torch.float64)).dtype)',
    'print(torch.arange(0, 6).reshape(2, 3).transpose(0, 1).tolist(), torch.tensor([1.5]).dtype)',
    'print(torch.ones(2, 3, dtype=torch.bool).triu(1).tolist())',
    'try:',
    '    x @ torch.ones(2, 2, dtype=torch.float64)',
    'except RuntimeError as e:',
    '    print("RuntimeError:", e)',
  ].join('\n');
  const r = spawnSync(PYTHON, ['-c', probe], { encoding: 'utf8', env: { ...process.env, PYTHONPATH: TORCH_DOUBLE } });
  assert.equal(r.stderr, '');
  assert.equal(
    r.stdout,
    [
      'float32 True float32', // a 0-dim float64 does not promote a float32 matrix
      '[[0, 3], [1, 4], [2, 5]] float32', // transpose swaps two dims; Python floats default to float32
      '[[False, True, True], [False, False, True]]',
      'RuntimeError: expected m1 and m2 to have the same dtype, but got: float32 != float64',
      '',
    ].join('\n'),
  );
});

test('the NumPy script prints readable steps without --json, and quotes the recipe', { skip: noNumpy }, () => {
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

test('the PyTorch script has every step and checks scaled_dot_product_attention where it can (they run above)', () => {
  const seed = preset('000-causal');
  const s = pytorchScript(seed, engine.run(seed));
  assert.match(s, /^import torch$/m);
  assert.match(s, /^dt = torch\.float64$/m);
  assert.match(s, /F\.scaled_dot_product_attention\(q, k, v, is_causal=True, scale=1\.0 \/ float\(divisor\)\)/);
  assert.match(s, /torch\.testing\.assert_close\(ours, sdpa/);
  for (const id of ['Q', 'K', 'V', 'scores', 'scaled', 'masked', 'weights', 'output']) assert.ok(s.includes(`"${id}"`), id);

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
});

test('the PyTorch script writes the options as PyTorch code does', () => {
  const script = (problem) => pytorchScript(problem, engine.run(problem));
  const cached = script(POSITION_PROBLEMS['RoPE (half) with a KV cache, causal, GQA']);
  // Positions as Hugging Face's cache_position; RoPE with rotate_half; the cache concatenated.
  assert.match(cached, /^q_pos = torch\.arange\(past, past \+ 2, dtype=torch\.float64\) {2}# query positions$/m);
  assert.match(cached, /^def rotate_half\(x\):$/m);
  assert.match(cached, /^ {4}return torch\.cat\(\(turned \* cos \+ rotate_half\(turned\) \* sin, rest\), dim=1\)$/m);
  assert.match(
    cached,
    /^ {4}Kh = torch\.cat\(\[past_K\[:, g \* d_k:\(g \+ 1\) \* d_k\], Kh\], dim=0\) {2}# the cache, then the new rows$/m,
  );
  // The causal mask on positions (the cache's queries sit after it), applied with masked_fill.
  assert.match(cached, /^hidden \|= q > p {2}# causal: the key comes after the query$/m);
  assert.match(cached, /^ {4}logits = logits\.masked_fill\(hidden, -math\.inf\)$/m);
  // scaled_dot_product_attention gets the rotated heads and an explicit mask, not is_causal.
  assert.match(cached, /^sdpa = F\.scaled_dot_product_attention\(q, k, v, attn_mask=attn_mask, scale=1\.0 \/ float\(divisor\)\)$/m);
  assert.doesNotMatch(cached, /is_causal/);

  const interleaved = script(POSITION_PROBLEMS['RoPE interleaved, partial dims, base 100, float32, explicit positions']);
  assert.match(interleaved, /^def rotate_every_two\(x\):$/m);
  assert.match(interleaved, /cos\.repeat_interleave\(2, dim=1\)\.to\(dt\)/);
  assert.match(interleaved, /^q_pos = torch\.tensor\(\[5\.0, 9\.0\], dtype=torch\.float64\)/m);
  assert.match(interleaved, /^sdpa = F\.scaled_dot_product_attention\(q, k, v, scale=1\.0 \/ float\(divisor\)\)$/m);

  const sinks = script(POSITION_PROBLEMS['window with a sink token, causal, sink logits per head']);
  // gpt-oss's sink: one more column for the softmax, then dropped.
  assert.match(sinks, /^ {4}return torch\.softmax\(torch\.cat\(\[x, sink_column\], dim=1\), dim=1\)\[:, :-1\]$/m);
  assert.match(sinks, /^sink_logit = \[0\.0, -1\.0\] {2}# one per head$/m);
  assert.match(sinks, /^# Skipped: scaled_dot_product_attention has no sink logit\.$/m);

  const fill = script(POSITION_PROBLEMS['finite mask_fill with a fully masked row']);
  assert.match(fill, /^ {4}logits = logits\.masked_fill\(hidden, -1000000000\.0\)/m);
  assert.match(fill, /^ {4}weights = softmax\(logits, dim=1\) {2}# along each row$/m);
  const nan = script(POSITION_PROBLEMS['fully_masked nan, window [null, 0] with an additive mask']);
  assert.match(nan, /^ {4}weights = torch\.softmax\(logits, dim=1\) {2}# along each row; fully_masked nan: a plain softmax$/m);
  assert.match(nan, /^M = user_mask\.masked_fill\(hidden, -math\.inf\)/m);

  // The columns layout: keys x queries, the softmax down each column, the sink as one more row.
  const cols = script(COLUMNS_POSITION_PROBLEMS['window with a sink token, causal, sink logits per head, columns layout']);
  assert.match(cols, /^ {4}scores = Kh\.T @ Qh {2}# keys x queries$/m);
  assert.match(cols, /^hidden = torch\.zeros\(S, L, dtype=torch\.bool\)$/m);
  assert.match(cols, /^ {4}return torch\.softmax\(torch\.cat\(\[x, sink_row\], dim=0\), dim=0\)\[:-1, :\]$/m);
  const colsNumpy = numpyScript(
    COLUMNS_POSITION_PROBLEMS['RoPE (half) with a KV cache, causal, GQA, columns layout'],
    engine.run(COLUMNS_POSITION_PROBLEMS['RoPE (half) with a KV cache, causal, GQA, columns layout']),
  );
  assert.match(colsNumpy, /^ {8}out\[a, :\] = x\[a, :\] \* c - x\[b, :\] \* s$/m);
  assert.match(colsNumpy, /^ {4}Kh = np\.hstack\(\[past_K\[g \* d_k:\(g \+ 1\) \* d_k, :\], Kh\]\) {2}# the cache, then the new columns$/m);
  assert.match(colsNumpy, /^ {4}weights = softmax\(logits, axis=0\) {2}# down each column$/m);
  for (const text of [cached, interleaved, sinks, fill, nan, cols]) assert.doesNotMatch(text, /sys\.exit|does not reproduce/);
});

test('the scripts read a cache given as { shape, data } and refuse one given as text, naming it', { skip: noNumpy }, () => {
  const problem = POSITION_PROBLEMS['RoPE (half) with a KV cache, causal, GQA'];
  const trace = engine.run(problem);
  const flat = { ...problem, past_K: { shape: [2, 2], data: problem.past_K.flat() } };
  assert.equal(numpyScript(flat, engine.run(flat)), numpyScript(problem, trace));
  const text = { ...problem, past_V: '[[3, 1], [-1, 0.5]]' };
  assert.throws(() => pytorchScript(text, engine.run(text)), {
    message: 'export: past_V is text: parse it first (engine.parseMatrix) so the export has numbers',
  });
});

// The backward pass: numpyScript(problem, engine.gradients(problem), { gradients: true }) rebuilds
// every gradient step too, for every problem above (Q/K/V, X rows and columns, heads and GQA,
// W_O and biases, masks, softcap, RoPE with a cache and tables, positions, sinks, mask_fill).
for (const [name, problem] of Object.entries(ALL)) {
  test(`the NumPy script reproduces the gradients: ${name}`, { skip: noNumpy }, () => {
    const gradients = engine.gradients(problem);
    assertReproduces(numpyScript(problem, gradients, { gradients: true }), gradients, `NumPy gradients ${name}`, { scaled: true });
  });
}

test('the NumPy gradients script takes a given dO, and refuses a forward trace', { skip: noNumpy }, () => {
  const problem = PROBLEMS['GQA 2 heads / 1 kv head, biases, W_O + b_O, causal'];
  const dO = engine.run(problem).output.map((row, i) => row.map((_, j) => (i + 1) * (j % 2 ? -0.5 : 1)));
  const gradients = engine.gradients(problem, { dO });
  const script = numpyScript(problem, gradients, { gradients: true });
  assert.match(script, /dO = np\.array\(/);
  assert.doesNotMatch(script, /np\.ones_like\(output\)/);
  assertReproduces(script, gradients, 'NumPy gradients with dO', { scaled: true });
  assert.throws(() => numpyScript(problem, engine.run(problem), { gradients: true }), /takes the result of engine\.gradients\(problem\)/);
});
