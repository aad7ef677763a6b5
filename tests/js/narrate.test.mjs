// The step-through sentences (dist/narrate.js, exported by the package): what each step does and
// what to notice in these numbers, for the seed presets and the page's first example.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { TYPE, parse } from '@formatjs/icu-messageformat-parser';

import { dist, repo } from './helpers.mjs';

const {
  loadAttention,
  presetProblem,
  presets,
  findPreset,
  narrate,
  narrateStep,
  narrateOnlineSoftmax,
  narrateDecodeStep,
  narrateTile,
  narrateGradientStep,
  weightSums,
} = await import(`${dist}node.js`);
const { loadTranslator } = await import(`${dist}i18n.js`);
const engine = await loadAttention();

/** The preset's trace and its sentences, keyed "id:head" (head -1 for head-less steps). */
function told(id, edit = (p) => p) {
  const preset = findPreset(id);
  const trace = engine.run(edit(presetProblem(preset, engine).problem));
  const sentences = narrate(trace, { tokensQ: preset.tokens, tokensK: preset.kvTokens ?? preset.tokens });
  const byKey = Object.fromEntries(trace.steps.map((s, i) => [`${s.id}:${s.head ?? -1}`, sentences[i]]));
  return { trace, sentences, byKey };
}

/** X (3 × 4), W_Q (4 × 4), W_K and W_V (4 × 2) and learned positions P (3 × 4), drawn from `seed`. */
const smallInputs = (seed) =>
  engine.random(
    seed,
    [
      [3, 4],
      [4, 4],
      [4, 2],
      [4, 2],
      [3, 4],
    ].map((shape) => ({ kind: 'randn', shape })),
  );

test('the first example: a soft dictionary lookup, told in its own words and numbers', () => {
  const { byKey, trace, sentences } = told('lookup');
  assert.equal(sentences.length, trace.steps.length);
  assert.equal(
    byKey['scores:0'],
    "Each score is a query's dot product with a key: the larger, the better the key matches. " +
      'The largest is “sweet?” with “banana”: 6.00. Their variance is 4.2.',
  );
  assert.equal(
    byKey['scaled:0'],
    "Scaling by 1/√2 shrinks the scores' variance from 4.2 to 2.1, so the softmax that follows is less peaked.",
  );
  assert.equal(
    byKey['weights:0'],
    "Softmax turns each query's scores into weights that sum to 1. " +
      '“sweet?” puts 80% of its weight on “banana” because their score is largest. “both?” spreads its weight most: its largest weight is 50%, on “apple”.',
  );
  assert.equal(
    byKey['output:-1'],
    'Each output row is a weighted average of the value rows, with the weights as mixing shares. ' +
      "“sweet?”'s output is 80% “banana”'s value + 19% “apple”'s + the rest.",
  );
  assert.equal(byKey['Q:0'], 'Q is given: one row per query (3), what each token looks for, 2 numbers each.');
  // The percentages are the trace's weights, rounded: sweet? → banana 0.795, both? → apple 0.503.
  const A = trace.steps.find((s) => s.id === 'weights').data;
  assert.equal(Math.round(100 * A[0][0]), 80);
  assert.equal(Math.round(100 * A[2][2]), 50);
});

test('seed 000: the variance the scale shrinks (6.8 to 0.85) and the sharpest query', () => {
  const { byKey, trace } = told('000');
  const f = trace.facts[0];
  assert.equal(Number(f.scores_variance.toPrecision(2)), 6.8);
  assert.equal(Number(f.scaled_variance.toPrecision(2)), 0.85);
  assert.equal(
    byKey['scaled:0'],
    "Scaling by 1/√8 shrinks the scores' variance from 6.8 to 0.85, so the softmax that follows is less peaked.",
  );
  assert.equal(
    byKey['scores:0'],
    "Each score is a query's dot product with a key: the larger, the better the key matches. " +
      'The largest is w2 with w1: 5.60. Their variance is 6.8.',
  );
  assert.equal(
    byKey['weights:0'],
    "Softmax turns each query's scores into weights that sum to 1. " +
      'w2 puts 64% of its weight on w1 because their score is largest. w3 spreads its weight most: its largest weight is 47%, on w1.',
  );
  assert.equal(
    byKey['output:-1'],
    'Each output row is a weighted average of the value rows, with the weights as mixing shares. ' +
      "w2's output is 64% w1's value + 21% w4's + the rest.",
  );
});

test('seed 000 causal: the mask in words, and a query that sees one key is not the example', () => {
  const { byKey } = told('000-causal');
  assert.equal(byKey['mask:0'], 'The mask hides 6 of 16 query–key pairs (causal: each query sees only itself and earlier keys).');
  assert.equal(byKey['masked:0'], 'Hidden scores become −∞, so the softmax gives them weight 0.');
  assert.equal(
    byKey['weights:0'],
    "Softmax turns each query's scores into weights that sum to 1. " +
      'w2 puts 83% of its weight on w1 because their score is largest. w4 spreads its weight most: its largest weight is 49%, on w2.',
  );
  assert.equal(
    byKey['output:-1'],
    'Each output row is a weighted average of the value rows, with the weights as mixing shares. ' +
      "w2's output is 83% w1's value + 17% w2's.",
  );
});

test('a causal sliding window with a sink: the pairs it hides, and the sink it keeps', () => {
  const tokens = [
    [1, 0],
    [0, 1],
    [1, 1],
    [0.5, -1],
    [2, 0],
  ];
  const trace = engine.run({ Q: tokens, K: tokens, V: tokens, options: { causal: true, window: [1, 0], sink_tokens: 1 } });
  // hidden_by 8 alone: kept as a sink (docs/api.md); 10 causal pairs + 3 outside the window.
  assert.deepEqual(trace.facts[0].hidden_by[3], [8, 2, 0, 0, 3]);
  assert.equal(
    narrateStep(
      trace,
      trace.steps.findIndex((s) => s.id === 'mask'),
    ),
    'The mask hides 13 of 25 query–key pairs (causal: each query sees only itself and earlier keys; a window: each query sees only nearby keys). ' +
      'Sink tokens stay visible to every query.',
  );
});

test('seed 003: projections from X, a divisor of √3, 91% on input_2; seed 002 reads columns', () => {
  const { byKey } = told('003');
  assert.equal(byKey['Q:0'], 'Q = X·W_Q: what each token looks for, 3 numbers per token.');
  assert.equal(
    byKey['scaled:0'],
    "Dividing by √3 shrinks the scores' variance from 22 to 7.3, so the softmax that follows is less peaked.",
  );
  assert.equal(
    byKey['weights:0'],
    "Softmax turns each query's scores into weights that sum to 1. " +
      'input_2 puts 91% of its weight on input_2 because their score is largest. input_1 spreads its weight most: its largest weight is 43%, on input_2.',
  );
  const udl = told('002').byKey;
  assert.equal(udl['scaled:0'], 'No scaling: the scaled scores are the scores.');
  assert.equal(
    udl['output:-1'],
    'Each output column is a weighted average of the value columns, with the weights as mixing shares. ' +
      "x_1's output is 99% x_2's value + 1% x_1's.",
  );
});

test('two heads sharing one key/value head (GQA), the concatenation and W_O', () => {
  const { byKey } = told('multihead', (p) => ({
    ...p,
    W_K: p.W_K.map((r) => r.slice(0, 2)),
    W_V: p.W_V.map((r) => r.slice(0, 2)),
    options: { ...p.options, kv_heads: 1 },
  }));
  assert.equal(
    byKey['K:1'],
    'K⁽²⁾ = X·W_K⁽²⁾: what each token offers, to be matched against the queries, 2 numbers per token. ' +
      'Head 2 takes features 1–2, the key/value head 1 that heads 1 and 2 share.',
  );
  assert.equal(byKey['Q:1'], 'Q⁽²⁾ = X·W_Q⁽²⁾: what each token looks for, 2 numbers per token. Head 2 takes features 3–4.');
  assert.equal(byKey['concat:-1'], "H puts the 2 heads' outputs side by side: 2 × 2 = 4 numbers per token.");
  assert.equal(byKey['output:-1'], "O = H·W_O: W_O mixes the heads' features into 4 numbers per token.");
  assert.match(byKey['head_output:1'], /^Each row of head 2's output is a weighted average of the value rows/);
});

test('narrateStep is narrate of one step; missing token names read "query 1", "key 1"', () => {
  const trace = engine.run({
    Q: [
      [1, 0],
      [0, 1],
    ],
    K: [
      [4, 0],
      [0, 0],
    ],
    V: [
      [1, 0],
      [0, 1],
    ],
    options: { scale: 'none' },
  });
  const i = trace.steps.findIndex((s) => s.id === 'weights');
  assert.equal(narrateStep(trace, i), narrate(trace)[i]);
  // e^4 / (e^4 + 1) = 0.982: query 1 puts 98% on key 1; query 2's scores are equal (50%).
  assert.equal(
    narrateStep(trace, i),
    "Softmax turns each query's scores into weights that sum to 1. " +
      'query 1 puts 98% of its weight on key 1 because their score is largest. query 2 spreads its weight most: its largest weight is 50%, on key 1.',
  );
});

// ---- the "In practice" walkthroughs: one sentence per position, from the engine's results ----

test('online softmax: the running max, the rescale, the sum; the float32 overflow without the max', () => {
  const row = [1, 100, 3];
  const r = engine.onlineSoftmax(row);
  const told = [0, 1, 2, 3].map((i) => narrateOnlineSoftmax(r, i));
  assert.equal(told[0], 'Entry 1 (x = 1.00) starts the running max at m = 1.00 and the running sum at ℓ = e^(x − m) = 1.00.');
  // e^(1 − 100) = 1.01e−43: the new max shrinks the sum so far to almost nothing.
  assert.ok(Math.abs(r.steps[1].rescale - Math.exp(-99)) < 1e-55);
  assert.equal(
    told[1],
    'Entry 2 (x = 100.00) is a new max (m: 1.00 → 100.00), so the sum so far is rescaled by e^(1.00 − 100.00) = 1.0e−43 ' +
      'before e^(x − m) is added: ℓ = 1.00 · 1.0e−43 + e^(x − m) = 1.00.',
  );
  assert.equal(
    told[2],
    'Entry 3 (x = 3.00) is not above the max m = 100.00: the rescale factor is 1 and ℓ grows by e^(x − m) from 1.00 to 1.00.',
  );
  assert.equal(
    told[3],
    'Each weight is e^(x − m) / ℓ with m = 100.00 and ℓ = 1.00: entry 2 gets the most, 100%, and the 3 weights sum to 1.',
  );

  const settings = { subtractMax: false, precision: 'float32' };
  const off = engine.onlineSoftmax(row, settings);
  assert.equal(off.sum, Infinity);
  assert.equal(
    narrateOnlineSoftmax(off, 0, settings),
    'Entry 1 (x = 1.00): without subtracting the max, e^x is added as it is: ℓ = 0 + e^1.00 = 2.72.',
  );
  assert.equal(
    narrateOnlineSoftmax(off, 1, settings),
    'Entry 2 (x = 100.00): without subtracting the max, e^100.00 is too large for float32 and overflows: ℓ = ∞.',
  );
  assert.equal(
    narrateOnlineSoftmax(off, 2, settings),
    'Entry 3 (x = 3.00): ℓ is already ∞, and stays ∞: once the sum overflows, nothing brings it back.',
  );
  assert.deepEqual(off.weights.map(Number.isNaN), [false, true, false]);
  assert.equal(
    narrateOnlineSoftmax(off, 3, settings),
    'ℓ is ∞, so each weight e^x / ℓ is 0 or NaN (∞ / ∞): 1 of 3 weights is NaN and none is usable. ' +
      'Subtracting the running max keeps every exponent at most 0, so the sum cannot overflow.',
  );
  // Small scores survive without the max: said, with where float32 would break.
  const small = engine.onlineSoftmax([0, Math.log(3)], settings);
  assert.match(
    narrateOnlineSoftmax(small, 2, settings),
    /entry 2 gets the most, 75%.* no e\^x overflowed float32 \(there, x > 88\.7 would\)\.$/,
  );
  // A hidden entry adds nothing.
  assert.equal(
    narrateOnlineSoftmax(engine.onlineSoftmax([2, -Infinity]), 1),
    'Entry 2 (x = −∞) is hidden: e^(−∞) = 0 adds nothing and the running max stays 2.00.',
  );
});

test('decoding: the cache, the weight, multiply-adds with and without the cache, the check', () => {
  const preset = findPreset('000-causal');
  const problem = presetProblem(preset, engine).problem;
  const d = engine.decode(problem);
  const labels = { tokensQ: preset.tokens, tokensK: preset.tokens };
  assert.equal(
    narrateDecodeStep(d, 0, labels),
    'w1 comes first: the cache is empty, so its query reads only its own key and value. ' +
      'With the cache this token costs 16 multiply-adds, recomputing it from scratch 16; so far 16 against 16. ' +
      'The row equals row 1 of full causal attention: largest difference 0 (exactly equal).',
  );
  // 83% is w2's weight on w1 in causal attention (the step-through's sentence says the same).
  assert.equal(Math.round(100 * d.steps[1].weights[0][0]), 83);
  assert.equal(
    narrateDecodeStep(d, 3, labels),
    "w4's query reads the cache of 3 earlier keys and values plus its own: 4 rows. It puts 49% of its weight on w2. " +
      'With the cache this token costs 64 multiply-adds, recomputing tokens 1–4 from scratch 256; so far 160 against 480 (3× less). ' +
      'The row equals row 4 of full causal attention: largest difference 0 (exactly equal).',
  );
  assert.equal(d.flops_cached, 160);
  assert.equal(d.flops_full, 480);
  assert.match(narrateDecodeStep(d, 1), /^token 2's query .* It puts 83% of its weight on token 1\./);
});

test('tiles: the first visit, a skipped tile, the rescale when a max rises, the output and the bytes', () => {
  const preset = findPreset('000-causal');
  const problem = presetProblem(preset, engine).problem;
  const labels = { tokensQ: preset.tokens, tokensK: preset.tokens };
  const t = engine.tiles(problem, { block_q: 2, block_k: 2 });
  assert.deepEqual(
    t.tiles.map((x) => x.skipped),
    [false, true, false, false],
  );
  assert.equal(
    narrateTile(t, 1, labels),
    'Tile 2 of 4: queries w1–w2 with keys w3–w4: every score is hidden (−∞), so the algorithm skips it: no work and no memory traffic.',
  );
  assert.match(
    narrateTile(t, 0, labels),
    /^Tile 1 of 4: queries w1–w2 with keys w1–w2, their first visited keys: .* \(w1: m = −0\.96, ℓ = 1\.00\)/,
  );
  assert.match(narrateTile(t, 3, labels), /That was these queries' last key block: their output is Õ \/ ℓ\.$/);
  assert.equal(
    narrateTile(t, 4, labels),
    `All 3 tiles computed, 1 tile skipped: each query's output is Õ / ℓ, equal to the trace's output (largest difference ${t.max_difference === 0 ? '0 (exactly equal)' : '2.2e−16'}). ` +
      'With 2 × 2 blocks these tiles move 1280 bytes between HBM and SRAM, the standard algorithm 1536 (1.2× less): it writes the whole score and weight matrices out and reads them back; the tiles never store them.',
  );
  assert.equal(t.bytes_flash, 1280);
  assert.equal(t.bytes_standard, 1536);
  // A max that rises: the tile says by how much the sum so far is rescaled (the docs' example).
  const tokens = [
    [1, 0],
    [0, 1],
    [1, 1],
  ];
  const small = engine.tiles(
    {
      Q: tokens,
      K: tokens,
      V: [
        [1, 0],
        [0, 1],
        [2, 2],
      ],
      options: { causal: true },
    },
    { block_q: 2, block_k: 2 },
  );
  const s = small.tiles[3];
  assert.equal(
    narrateTile(small, 3),
    `Tile 4 of 4: query 3 with key 3: the new keys raise query 3's running max from 0.71 to 1.41, so its sum and partial output are first rescaled by e^(0.71 − 1.41) = ${s.rescale[0].toFixed(2)}; ` +
      "then the new keys are added: ℓ 2.00 → 1.99. That was these queries' last key block: their output is Õ / ℓ.",
  );
});

test('gradients: each step in words, its largest entry, and what heads sharing a key/value head add', () => {
  const preset = findPreset('lookup');
  const problem = presetProblem(preset, engine).problem;
  const g = engine.gradients(problem);
  const labels = { tokensQ: preset.tokens, tokensK: preset.kvTokens };
  const at = (id, head = 0) => g.steps.findIndex((s) => s.id === id && s.head === head);
  assert.equal(
    narrateGradientStep(g, at('dO', null), labels),
    "dO, the loss's gradient with respect to the output: where the backward pass starts: " +
      `all ones, so the loss L is the sum of every output number; L = ${g.loss.toFixed(2)}.`,
  );
  // dA = dO·Vᵀ with dO all ones: each key's value row summed, the same for every query (banana 0.3 + 0.9).
  assert.equal(
    narrateGradientStep(g, at('dA'), labels),
    "dA = dO·Vᵀ: how the loss changes with each weight: a query's dO row dotted with a key's value row. " +
      'The largest in size is 1.20, at “sweet?”, “banana”.',
  );
  assert.match(narrateGradientStep(g, at('dS'), labels), /through the softmax: .* every row sums to 0\./);
  assert.match(narrateGradientStep(g, at('dQ', null), labels), /^dQ.*: the gradient of the loss with respect to Q as given\./);

  const [X, W_Q, W_K, W_V] = engine.random(
    3,
    [
      [3, 4],
      [4, 4],
      [4, 2],
      [4, 2],
    ].map((shape) => ({ kind: 'randn', shape })),
  );
  const gqa = engine.gradients({ X, W_Q, W_K, W_V, options: { heads: 2, kv_heads: 1 } });
  const dK1 = gqa.steps.findIndex((s) => s.id === 'dK' && s.head === 1);
  assert.match(
    narrateGradientStep(gqa, dK1),
    /\(head 2\): each key row: .* Heads 1 and 2 read the same key\/value head 1: their dK are summed into it\./,
  );
});

test('sigmoid and differential attention: their weights are not said to sum to 1', () => {
  const preset = findPreset('lookup');
  const problem = presetProblem(preset, engine).problem;
  const labels = { tokensQ: preset.tokens, tokensK: preset.kvTokens };
  const sentences = (options) => {
    const trace = engine.run({ ...problem, options });
    const told = narrate(trace, { ...labels, options });
    return { trace, byId: Object.fromEntries(trace.steps.map((s, i) => [s.id, told[i]])) };
  };
  // σ(S̃ − ln 3): banana's weight for “sweet?” is σ(6/√2 − ln 3) = 0.96; its row sums to 2.06, “both?”'s to 2.32.
  const sigmoid = sentences({ score_fn: 'sigmoid' });
  const A = sigmoid.trace.steps.find((s) => s.id === 'weights').data;
  assert.equal(A[0][0].toFixed(2), '0.96');
  assert.equal(
    sigmoid.byId.weights,
    "A sigmoid turns each score into a weight between 0 and 1 on its own, so a query's weights need not sum to 1: " +
      "here they sum to 2.06 to 2.32. The largest weight is “sweet?”'s on “banana”: 0.96.",
  );
  assert.equal(
    sigmoid.byId.scaled,
    "Scaling by 1/√2 shrinks the scores' variance from 4.2 to 2.1, so the sigmoids that follow saturate less.",
  );
  assert.match(
    sigmoid.byId.output,
    /^Each output row is a weighted sum of the value rows: sigmoid weights need not sum to 1, so it is not an average\./,
  );
  for (const s of Object.values(sigmoid.byId)) assert.doesNotMatch(s, /(?<!need not )sum to 1\b|softmax|average of/);
  // Through the sigmoids dS = dA ∘ A ∘ (1 − A): no row sum of 0 is claimed.
  const g = engine.gradients({ ...problem, options: { score_fn: 'sigmoid' } });
  const dS = g.steps.findIndex((s) => s.id === 'dS');
  assert.match(
    narrateGradientStep(g, dS, { ...labels, options: { score_fn: 'sigmoid' } }),
    /: through the sigmoids: each dA times its own sigmoid's slope, so unlike the softmax's a row need not sum to 0\. The largest in size is /,
  );
  assert.notEqual(g.steps[dS].data[0].reduce((a, x) => a + x, 0).toFixed(6), '0.000000');
  // A₁ − λA₂ with λ = 0.5: every row sums to 1 − 0.5.
  const differential = sentences({ differential: { lambda: 0.5 } });
  assert.deepEqual(
    differential.trace.facts[0].weight_sums.map((x) => x.toFixed(2)),
    ['0.50', '0.50', '0.50'],
  );
  assert.equal(
    differential.byId.weights,
    "The weights are the first halves' softmax less λ = 0.50 times the second halves': what both maps give a key alike cancels, " +
      "a weight can be negative, and each query's weights sum to 1 − λ (0.50).",
  );
});

test('what a row of weights sums to, asked in one place: softmax, a sink logit, differential, sigmoid', () => {
  const kind = (id, options) => {
    const problem = { ...presetProblem(findPreset(id), engine).problem, ...(options ? { options } : {}) };
    return weightSums(problem.options, engine.run(problem).facts[0]).kind;
  };
  assert.equal(kind('lookup'), 'one');
  assert.equal(kind('lookup', { sink_logit: 0.5 }), 'sink');
  assert.equal(kind('differential'), 'lambda');
  assert.equal(kind('sigmoid'), 'free');
  // With a sink logit the narration no longer says the weights sum to 1: they sum to 0.98 here.
  const { trace } = told('lookup', (p) => ({ ...p, options: { ...p.options, sink_logit: 0.5 } }));
  const sentence = narrateStep(
    trace,
    trace.steps.findIndex((s) => s.id === 'weights'),
    { options: { sink_logit: 0.5 } },
  );
  assert.ok(
    trace.facts[0].weight_sums.every((x) => x < 0.99),
    trace.facts[0].weight_sums.join(),
  );
  assert.match(
    sentence,
    /^Softmax turns each query's scores, and the sink logit beside them, into weights; the sink's is dropped, so a query's weights sum to less than 1: the sink logit takes the rest\. /,
  );
});

// ---- the learner's language: the same sentences from another catalogue ---------------------------

/** The words of English's narration (the literal text of its narrate.* messages, lower case). */
function englishNarrationWords() {
  const en = JSON.parse(readFileSync(join(repo, 'web/lib/locales/en.json'), 'utf8'));
  const words = new Set();
  const walk = (elements) => {
    for (const e of elements) {
      if (e.type === TYPE.literal) for (const w of e.value.match(/[A-Za-z]{2,}/g) ?? []) words.add(w.toLowerCase());
      if (e.type === TYPE.plural || e.type === TYPE.select) for (const option of Object.values(e.options)) walk(option.value);
    }
  };
  for (const [id, message] of Object.entries(en)) if (id.startsWith('narrate.')) walk(parse(message));
  return words;
}

// Names every language writes as English does: functions and methods, and the model's name.
const SYMBOLS = ['softmax', 'tanh', 'rope', 'alibi', 'pe', 'transformer'];
// French words spelled as English ones (the same word in both languages).
const SAME_WORDS = {
  fr: [
    'score',
    'scores',
    'variance',
    'positions',
    'position',
    'cache',
    'causal',
    'angle',
    'plus',
    'logit',
    'projections',
    'original',
    'attention',
  ],
  ar: [],
};

/** Traces that reach every sentence narrate has: the presets, and options that change the words. */
function traces() {
  const out = [];
  const variants = [
    {},
    { causal: true },
    { causal: true, window: [1, 0], sink_tokens: 1 },
    { score_fn: 'sigmoid' },
    { alibi: true, softcap: 2 },
    { rope: true, scale: 0.5 },
    { scale: 3 },
    { sink_logit: 0.5 },
  ];
  for (const preset of presets) {
    const base = presetProblem(preset, engine).problem;
    for (const v of variants) {
      const problem = { ...base, options: { ...base.options, ...v } };
      let trace;
      try {
        trace = engine.run(problem);
      } catch {
        continue; // an option this preset refuses (the columns layout and sigmoid, linear attention and ALiBi, ...)
      }
      out.push({ trace, labels: { tokensQ: preset.tokens, tokensK: preset.kvTokens ?? preset.tokens, options: problem.options } });
    }
  }
  // A KV cache (one key and two), a mask of your own that hides a whole row (with −∞ and with a
  // fill number), two heads sharing one key/value head, learned positions; sigmoid weights of one query.
  const [X, W_Q, W_K, W_V, P] = smallInputs(5);
  const tokens = [
    [1, 0],
    [0, 1],
    [1, 1],
  ];
  // true keeps the key: query 3 sees none.
  const keep = [
    [true, false, true],
    [true, true, false],
    [false, false, false],
  ];
  const cache = { Q: [[1, 0, 0.5, -1]], K: [[0.5, 1, -1, 0]], V: [[2, 1]], past_K: [[1, 0, 0, 1]], past_V: [[1, 0]] };
  for (const problem of [
    { ...cache, options: { causal: true } },
    { ...cache, past_K: [...cache.past_K, [0, 1, 0, 1]], past_V: [...cache.past_V, [0, 1]], options: { score_fn: 'sigmoid' } },
    { Q: tokens, K: tokens, V: tokens, options: { mask: keep, causal: true } },
    { Q: tokens, K: tokens, V: tokens, options: { mask: keep, mask_fill: -5, scale: '1/sqrt(3)' } },
    { X, W_Q, W_K, W_V, P, options: { heads: 2, kv_heads: 1 } },
    { X, W_Q: W_Q.map((r) => r.slice(0, 2)), W_K, W_V, options: { positional: 'sinusoidal' } },
    // One query, one key: no query has a choice.
    { Q: [[1, 0]], K: [[0, 1]], V: [[1, 1]] },
  ])
    out.push({ trace: engine.run(problem), labels: { options: problem.options } });
  // Traces without the facts the sentences of sigmoid and differential weights read their row sums
  // from (a trace file written before them), and one whose weights disagree with its scores (edited):
  // the sentences that say less.
  const sigmoid = out.find((x) => x.labels.options?.score_fn === 'sigmoid' && x.trace.facts[0].weight_sums);
  const differential = out.find((x) => Number.isFinite(x.trace.facts[0].lambda));
  for (const { trace, labels } of [sigmoid, differential])
    out.push({ trace: { ...trace, facts: trace.facts.map(({ weight_sums, ...f }) => f) }, labels });
  const edited = engine.run({ Q: tokens, K: tokens, V: tokens });
  const scores = edited.steps[edited.steps.find((s) => s.id === 'weights').inputs[0]];
  scores.data = scores.data.map((row) => row.map((v, k) => (k === 0 ? v + 10 : v)));
  out.push({ trace: edited, labels: {} });
  return out;
}

const numbersIn = (text) => (text.match(/\d+(?:\.\d+)?(?:e[−-]?\d+)?/g) ?? []).sort();

/** The translator `t`, noting the id of every message it formats in `ids`. */
function noting(t, ids) {
  return Object.assign((id, values) => (ids.add(id), t(id, values)), {
    lang: t.lang,
    dir: t.dir,
    has: t.has,
    message: t.message,
    list: t.list,
  });
}

for (const lang of ['fr', 'ar']) {
  test(`${lang}: every told step in the catalogue's words, every placeholder filled, the same numbers as English's`, async () => {
    const used = new Set();
    const t = noting(await loadTranslator(lang), used);
    assert.equal(t.lang, lang);
    const english = englishNarrationWords();
    const allowed = new Set([...SYMBOLS, ...SAME_WORDS[lang]]);
    let told = 0;
    for (const { trace, labels } of traces()) {
      // Token names are the learner's own words: "banana" stays "banana" in French.
      const names = new Set(
        [...(labels.tokensQ ?? []), ...(labels.tokensK ?? [])].flatMap(
          (n) =>
            String(n)
              .toLowerCase()
              .match(/[a-z]{2,}/g) ?? [],
        ),
      );
      const theirs = narrate(trace, labels, t);
      const ours = narrate(trace, labels);
      trace.steps.forEach((step, i) => {
        if (ours[i] === step.title) {
          // A step narration has no words for: its caption, the catalogue's.
          assert.equal(theirs[i], t(step.title_id), `${lang} ${step.id}`);
          return;
        }
        told++;
        const where = `${lang} ${step.id}: ${theirs[i]}`;
        assert.ok(theirs[i].length > 0 && !/[{}]/.test(theirs[i]), where);
        assert.notEqual(theirs[i], ours[i], where);
        const leaked = (theirs[i].match(/[A-Za-z]{2,}/g) ?? [])
          .map((w) => w.toLowerCase())
          .filter((w) => english.has(w) && !allowed.has(w) && !names.has(w));
        assert.deepEqual(leaked, [], where);
        assert.deepEqual(numbersIn(theirs[i]), numbersIn(ours[i]), `${where}\n  en: ${ours[i]}`);
      });
    }
    assert.ok(told > 300, `${told} sentences`);
    // The traces reach every message of the step-through's narration (the rest are the walkthroughs', below).
    const en = JSON.parse(readFileSync(join(repo, 'web/lib/locales/en.json'), 'utf8'));
    const unused = Object.keys(en).filter((id) => id.startsWith('narrate.') && !used.has(id) && !WALKTHROUGH_IDS.test(id));
    assert.deepEqual(unused, []);
  });
}

// The walkthroughs' own messages ("In practice": online softmax, decoding, tiles, gradients).
const WALKTHROUGH_IDS =
  /^narrate\.(online|decode|tiles|gradient)\.|^narrate\.(times|exactlyEqual|name\.(token|feature|position|row|column))$/;
// Symbols the walkthroughs write in every language: NaN, the GPU's memories, the gradients' names.
const WALK_SYMBOLS = ['nan', 'hbm', 'sram', 'do', 'da', 'ds', 'dq', 'dk', 'dv'];
const WALK_SAME_WORDS = { fr: ['gradient', 'gradients', 'trace', 'matrices'], ar: [] };

/**
 * Every position of the walkthroughs, on problems that reach each of their sentences: [{ ours, theirs
 * (a function of the translator), words (the learner's or the core's words a sentence may hold) }].
 */
function walkthroughSentences() {
  const out = [];
  const add = (tell, words = []) => out.push({ ours: tell(undefined), tell, words });
  // Online softmax: with and without the max, in float32 and float64, an overflow and a hidden entry.
  for (const [row, settings] of [
    [[1, 100, 3], {}],
    [[1, 100, 3], { subtractMax: false, precision: 'float32' }],
    [[0, Math.log(3)], { subtractMax: false, precision: 'float32' }],
    [[0, Math.log(3)], { subtractMax: false }],
    [[2, -Infinity], {}],
  ]) {
    const r = engine.onlineSoftmax(row, settings);
    for (let i = 0; i <= r.steps.length; i++) add((t) => narrateOnlineSoftmax(r, i, settings, t));
  }
  // Decoding and tiles: one head and two, named tokens and numbered ones.
  const preset = findPreset('000-causal');
  const causal = presetProblem(preset, engine).problem;
  const [X, W_Q, W_K, W_V, P] = smallInputs(9);
  const gqa = { X, W_Q, W_K, W_V, options: { heads: 2, kv_heads: 1 } };
  for (const [problem, labels] of [
    [causal, { tokensQ: preset.tokens, tokensK: preset.tokens }],
    [causal, {}],
    [{ ...gqa, options: { ...gqa.options, causal: true } }, {}],
  ]) {
    const d = engine.decode(problem);
    d.steps.forEach((_, i) => add((t) => narrateDecodeStep(d, i, labels, t), preset.tokens));
    for (const blocks of [
      { block_q: 2, block_k: 2 },
      { block_q: 1, block_k: 1 },
    ]) {
      const tiles = engine.tiles(problem, blocks);
      for (let i = 0; i <= tiles.tiles.length; i++) add((t) => narrateTile(tiles, i, labels, t), preset.tokens);
    }
  }
  // Gradients: every step of problems with a mask and a softcap, RoPE and learned positions, heads
  // sharing a key/value head and not, a cache, sigmoid weights, dO of your own.
  const lookup = findPreset('lookup');
  const lookupLabels = { tokensQ: lookup.tokens, tokensK: lookup.kvTokens };
  const base = presetProblem(lookup, engine).problem;
  const cache = { Q: [[1, 0]], K: [[0, 1]], V: [[1, 1]], past_K: [[1, 0]], past_V: [[0, 1]] };
  for (const [problem, labels] of [
    [base, lookupLabels],
    [{ ...base, options: { causal: true, softcap: 2 } }, lookupLabels],
    [
      { ...base, options: { score_fn: 'sigmoid' } },
      { ...lookupLabels, options: { score_fn: 'sigmoid' } },
    ],
    [{ ...base, dO: base.Q.map((row) => row.map((_, j) => j)) }, lookupLabels],
    [gqa, {}],
    [{ X, W_Q, W_K: W_Q, W_V: W_Q, P, options: { heads: 2, rope: true, positional: 'learned' } }, {}],
    [cache, {}],
  ]) {
    const g = engine.gradients(problem);
    // The core's formula text (still English: the core's explanations) is not the walkthrough's words.
    const words = g.steps.flatMap((s) => String(s.text).match(/[A-Za-z]{2,}/g) ?? []);
    g.steps.forEach((s, i) => {
      if (s.id.startsWith('d')) add((t) => narrateGradientStep(g, i, labels, t), [...words, ...lookup.tokens, ...lookup.kvTokens]);
    });
  }
  // A gradient step on axes narration has no names for (positions; others by row and column).
  const step = {
    id: 'dP',
    head: -1,
    axes: ['positions', 'other'],
    data: [[0, -2]],
    text: 'dP',
    title: 'Gradient of P',
    title_id: 'step.dP',
  };
  const odd = { meta: { heads: 1, kv_heads: 1 }, loss: 0, steps: [step, { ...step, axes: ['other', 'features'] }] };
  for (const i of [0, 1]) add((t) => narrateGradientStep(odd, i, {}, t));
  return out;
}

test('the walkthroughs speak the catalogue too: English unchanged by default, every sentence in French and Arabic', async () => {
  const sentences = walkthroughSentences();
  // English's translator is the default: passing it changes nothing.
  const { english } = await import(`${dist}i18n.js`);
  for (const { ours, tell } of sentences) assert.equal(tell(english), ours);
  const en = JSON.parse(readFileSync(join(repo, 'web/lib/locales/en.json'), 'utf8'));
  const englishWords = englishNarrationWords();
  for (const lang of ['fr', 'ar']) {
    const used = new Set();
    const t = noting(await loadTranslator(lang), used);
    const allowed = new Set([...SYMBOLS, ...WALK_SYMBOLS, ...SAME_WORDS[lang], ...WALK_SAME_WORDS[lang]]);
    for (const { ours, tell, words } of sentences) {
      const theirs = tell(t);
      const where = `${lang}: ${theirs}\n  en: ${ours}`;
      assert.ok(theirs.length > 0 && !/[{}]/.test(theirs), where);
      assert.notEqual(theirs, ours, where);
      const own = new Set(
        words.flatMap(
          (w) =>
            String(w)
              .toLowerCase()
              .match(/[a-z]{2,}/g) ?? [],
        ),
      );
      const leaked = (theirs.match(/[A-Za-z]{2,}/g) ?? [])
        .map((w) => w.toLowerCase())
        .filter((w) => englishWords.has(w) && !allowed.has(w) && !own.has(w));
      assert.deepEqual(leaked, [], where);
      assert.deepEqual(numbersIn(theirs), numbersIn(ours), where);
    }
    const unused = Object.keys(en).filter((id) => WALKTHROUGH_IDS.test(id) && !used.has(id));
    assert.deepEqual(unused, [], `${lang}: walkthrough messages no sentence reached`);
  }
});

test('the sentences of other languages: quotes, names, plurals and lists are the catalogue’s', async () => {
  const fr = await loadTranslator('fr');
  const ar = await loadTranslator('ar');
  const { trace } = told('lookup');
  const i = trace.steps.findIndex((s) => s.id === 'weights');
  const labels = { tokensQ: findPreset('lookup').tokens, tokensK: findPreset('lookup').kvTokens };
  assert.equal(
    narrateStep(trace, i, labels, fr),
    'Le softmax transforme les scores de chaque requête en poids dont la somme vaut 1. ' +
      '«\u00a0sweet?\u00a0» met 80 % de son poids sur «\u00a0banana\u00a0», car leur score est le plus grand. ' +
      '«\u00a0both?\u00a0» répartit le plus son poids : son plus grand poids est de 50 %, sur «\u00a0apple\u00a0».',
  );
  assert.match(narrateStep(trace, i, labels, ar), /^تحوّل softmax درجات كل استعلام إلى أوزان مجموعها 1\. يضع «sweet\?» نسبة 80% /);
  // A missing name is the language's "query 1"; Japanese joins sentences without a space.
  const ja = await loadTranslator('ja');
  const bare = narrate(trace, {}, ja)[i];
  assert.match(bare, /^softmax は各クエリのスコアを、和が 1 になる重みに変えます。クエリ 1 は重みの 80% を キー 1 に置きます。/);
  // Plurals: one earlier key in the cache; the list of heads sharing a key/value head.
  const cached = engine.run({ Q: [[1, 0]], K: [[0, 1]], V: [[1, 1]], past_K: [[1, 0]], past_V: [[0, 1]] });
  const k = cached.steps.findIndex((s) => s.id === 'K_cache');
  assert.equal(narrateStep(cached, k), 'The cache holds 1 earlier key, then the 1 new: the queries attend to all 2.');
  assert.equal(
    narrateStep(cached, k, {}, fr),
    'Le cache contient 1 clé antérieure, puis la 1 nouvelle : les requêtes regardent les 2 clés.',
  );
});
