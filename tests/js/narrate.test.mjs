// The step-through sentences (dist/narrate.js, exported by the package): what each step does and
// what to notice in these numbers, for the seed presets and the page's first example.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { dist } from './helpers.mjs';

const { loadAttention, presetProblem, findPreset, narrate, narrateStep } = await import(`${dist}node.js`);
const engine = await loadAttention();

/** The preset's trace and its sentences, keyed "id:head" (head -1 for head-less steps). */
function told(id, edit = (p) => p) {
  const preset = findPreset(id);
  const trace = engine.run(edit(presetProblem(preset, engine).problem));
  const sentences = narrate(trace, { tokensQ: preset.tokens, tokensK: preset.kvTokens ?? preset.tokens });
  const byKey = Object.fromEntries(trace.steps.map((s, i) => [`${s.id}:${s.head ?? -1}`, sentences[i]]));
  return { trace, sentences, byKey };
}

test('the first example: a soft dictionary lookup, told in its own words and numbers', () => {
  const { byKey, trace, sentences } = told('lookup');
  assert.equal(sentences.length, trace.steps.length);
  assert.equal(byKey['scores:0'], 'Each score is a query\'s dot product with a key: the larger, the better the key matches. ' +
    'The largest is sweet? with banana: 6.00. Their variance is 4.2.');
  assert.equal(byKey['scaled:0'], 'Scaling by 1/√2 shrinks the scores\' variance from 4.2 to 2.1, so the softmax that follows is less peaked.');
  assert.equal(byKey['weights:0'], 'Softmax turns each query\'s scores into weights that sum to 1. ' +
    'sweet? puts 80% of its weight on banana because their score is largest. both? spreads its weight most: its largest weight is 50%, on apple.');
  assert.equal(byKey['output:-1'], 'Each output row is a weighted average of the value rows, with the weights as mixing shares. ' +
    'sweet?\'s output is 80% banana\'s value + 19% apple\'s + the rest.');
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
  assert.equal(byKey['scaled:0'], 'Scaling by 1/√8 shrinks the scores\' variance from 6.8 to 0.85, so the softmax that follows is less peaked.');
  assert.equal(byKey['scores:0'], 'Each score is a query\'s dot product with a key: the larger, the better the key matches. ' +
    'The largest is w2 with w1: 5.60. Their variance is 6.8.');
  assert.equal(byKey['weights:0'], 'Softmax turns each query\'s scores into weights that sum to 1. ' +
    'w2 puts 64% of its weight on w1 because their score is largest. w3 spreads its weight most: its largest weight is 47%, on w1.');
  assert.equal(byKey['output:-1'], 'Each output row is a weighted average of the value rows, with the weights as mixing shares. ' +
    'w2\'s output is 64% w1\'s value + 21% w4\'s + the rest.');
});

test('seed 000 causal: the mask in words, and a query that sees one key is not the example', () => {
  const { byKey } = told('000-causal');
  assert.equal(byKey['mask:0'], 'The mask hides 6 of 16 query–key pairs (causal: each query sees only itself and earlier keys).');
  assert.equal(byKey['masked:0'], 'Hidden scores become −∞, so the softmax gives them weight 0.');
  assert.equal(byKey['weights:0'], 'Softmax turns each query\'s scores into weights that sum to 1. ' +
    'w2 puts 83% of its weight on w1 because their score is largest. w4 spreads its weight most: its largest weight is 49%, on w2.');
  assert.equal(byKey['output:-1'], 'Each output row is a weighted average of the value rows, with the weights as mixing shares. ' +
    'w2\'s output is 83% w1\'s value + 17% w2\'s.');
});

test('seed 003: projections from X, a divisor of √3, 91% on input_2; seed 002 reads columns', () => {
  const { byKey } = told('003');
  assert.equal(byKey['Q:0'], 'Q = X·W_Q: what each token looks for, 3 numbers per token.');
  assert.equal(byKey['scaled:0'], 'Dividing by √3 shrinks the scores\' variance from 22 to 7.3, so the softmax that follows is less peaked.');
  assert.equal(byKey['weights:0'], 'Softmax turns each query\'s scores into weights that sum to 1. ' +
    'input_2 puts 91% of its weight on input_2 because their score is largest. input_1 spreads its weight most: its largest weight is 43%, on input_2.');
  const udl = told('002').byKey;
  assert.equal(udl['scaled:0'], 'No scaling: the scaled scores are the scores.');
  assert.equal(udl['output:-1'], 'Each output column is a weighted average of the value columns, with the weights as mixing shares. ' +
    'x_1\'s output is 99% x_2\'s value + 1% x_1\'s.');
});

test('two heads sharing one key/value head (GQA), the concatenation and W_O', () => {
  const { byKey } = told('multihead', (p) => ({
    ...p, W_K: p.W_K.map((r) => r.slice(0, 2)), W_V: p.W_V.map((r) => r.slice(0, 2)), options: { ...p.options, kv_heads: 1 },
  }));
  assert.equal(byKey['K:1'], 'K⁽²⁾ = X·W_K⁽²⁾: what each token offers, to be matched against the queries, 2 numbers per token. ' +
    'Head 2 takes features 1–2, the key/value head 1 that heads 1 and 2 share.');
  assert.equal(byKey['Q:1'], 'Q⁽²⁾ = X·W_Q⁽²⁾: what each token looks for, 2 numbers per token. Head 2 takes features 3–4.');
  assert.equal(byKey['concat:-1'], 'H puts the 2 heads\' outputs side by side: 2 × 2 = 4 numbers per token.');
  assert.equal(byKey['output:-1'], 'O = H·W_O: W_O mixes the heads\' features into 4 numbers per token.');
  assert.match(byKey['head_output:1'], /^Each row of head 2's output is a weighted average of the value rows/);
});

test('narrateStep is narrate of one step; missing token names read "query 1", "key 1"', () => {
  const trace = engine.run({ Q: [[1, 0], [0, 1]], K: [[4, 0], [0, 0]], V: [[1, 0], [0, 1]], options: { scale: 'none' } });
  const i = trace.steps.findIndex((s) => s.id === 'weights');
  assert.equal(narrateStep(trace, i), narrate(trace)[i]);
  // e^4 / (e^4 + 1) = 0.982: query 1 puts 98% on key 1; query 2's scores are equal (50%).
  assert.equal(narrateStep(trace, i), 'Softmax turns each query\'s scores into weights that sum to 1. ' +
    'query 1 puts 98% of its weight on key 1 because their score is largest. query 2 spreads its weight most: its largest weight is 50%, on key 1.');
});
