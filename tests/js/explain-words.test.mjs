// The worked calculations' words (and the trace's warnings') come from the catalogues: the core names messages (text_id,
// params; the terms' caption_id, caption_params and header ids) and never writes a sentence. Here
// every step of the presets and of problems with each option that changes a sentence (forward and
// gradient steps, first, middle and last cell) is explained, and its messages are checked to exist
// in English's catalogue, to fill every placeholder, and to read in every language with the same
// placeholders a view fills (@N, @query, @key, @token, @terms) as English's.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { join } from 'node:path';
import { dist } from './helpers.mjs';

const { loadAttention, presets, presetProblem, fillExplanation, cellText } = await import(join(dist, 'node.js'));
const { LANGUAGES, english, explanationWords, fillFormula, loadTranslator, stepFormula } = await import(join(dist, 'i18n.js'));
const { default: katex } = await import('katex');
const engine = await loadAttention();

const grid = (rows, cols, f) => Array.from({ length: rows }, (_, i) => Array.from({ length: cols }, (_, j) => f(i, j)));
const X = grid(4, 4, (i, j) => Math.sin(1 + i * 4 + j));
const W = (cols, k) => grid(4, cols, (i, j) => Math.cos(k + i * cols + j) / 2);
const projected = { X, W_Q: W(4, 1), W_K: W(4, 2), W_V: W(4, 3) };
const qkv = { Q: grid(4, 2, (i, j) => i - j / 2), K: grid(4, 2, (i, j) => (i * j) / 3 - 0.5), V: grid(4, 2, (i, j) => i + j) };

// Problems whose sentences differ from the presets': each option with words of its own.
const variants = [
  { ...qkv, options: { causal: true, window: [1, 0], sink_tokens: 1 } },
  { ...qkv, options: { causal: true, mask_fill: -1e4 } },
  { ...qkv, options: { mask: grid(4, 4, (i, j) => i !== j + 1), causal: true, window: [2, 0] } },
  { ...qkv, options: { sink_logit: 0.5, scale: 0.5 } },
  { ...qkv, options: { softcap: 1, scale: 'none' } },
  { ...qkv, options: { scale: '1/sqrt(3)', layout: 'columns' } },
  { ...projected, options: { heads: 2, alibi: true, causal: true } },
  { ...projected, W_K: W(2, 2), W_V: W(2, 3), options: { heads: 2, kv_heads: 1, rope: true, causal: true } },
  { ...projected, options: { rope: { dims: 2 } } },
  { ...projected, options: { positional: 'sinusoidal' } },
  { ...projected, options: { score_fn: 'sigmoid', causal: true, window: [1, 0], sink_tokens: 1 } },
];

const problems = [
  ...presets.map((p) => ({ name: p.id, problem: presetProblem(p, engine).problem })),
  ...variants.map((problem, i) => ({ name: `variant ${i + 1}`, problem })),
];

/** Every explanation of the problems' steps (forward and gradients, three cells each), and the steps. */
const stepsSeen = [];
function explanations() {
  const out = [];
  for (const { name, problem } of problems) {
    let steps;
    try {
      steps = engine.gradients(problem).steps;
    } catch (error) {
      // A problem the backward pass does not take (a decode preset): its forward steps.
      steps = engine.run(problem).steps;
      assert.ok(steps.length > 0, `${name}: ${error.message}`);
    }
    for (const s of steps) {
      stepsSeen.push({ where: `${name} ${s.id}:${s.head}`, step: s });
      const [rows, cols] = s.shape;
      const cells = [
        [0, 0],
        [rows >> 1, cols >> 1],
        [rows - 1, cols - 1],
      ];
      for (const [row, col] of cells) {
        const e = engine.explain(problem, { step: s.id, head: s.head, row, col });
        out.push({ where: `${name} ${s.id}:${s.head} (${row + 1}, ${col + 1})`, e });
      }
    }
  }
  return out;
}
const all = explanations();
const placeholders = (text) => (text.match(/@(?:query|key|token|terms\([0-9,]*\)|[0-9]+)/g) ?? []).sort();

describe('worked calculations in words', () => {
  test('the core names its messages: every sentence, caption and header in words is an id of the catalogue', () => {
    const ids = new Set();
    for (const { where, e } of all) {
      assert.ok(english.has(e.text_id), `${where}: ${e.text_id} is in en.json`);
      ids.add(e.text_id);
      assert.doesNotMatch(e.text, /[{}]|undefined/, `${where}: ${e.text}`);
      if (!e.terms) continue;
      assert.ok(english.has(e.terms.caption_id), `${where}: ${e.terms.caption_id}`);
      ids.add(e.terms.caption_id);
      for (const h of e.terms.header_ids) {
        if (h.startsWith('explain.')) {
          assert.ok(english.has(h), `${where}: header ${h}`);
          ids.add(h);
        } else assert.doesNotMatch(h, /^(?!exp$)[a-z]{2,}( [a-z]+)*$/, `${where}: a header in words is a message id, not "${h}"`);
      }
      assert.equal(e.terms.headers.length, e.terms.header_ids.length);
    }
    // The sample reaches most of the core's messages (a guard against a sample that explains nothing).
    assert.ok(ids.size >= 110, `${ids.size} messages reached`);
  });

  test("English is the API's text: the scores' sentence and its terms, word for word", () => {
    const problem = {
      Q: [
        [1, 0],
        [0.5, 1],
      ],
      K: [
        [2, 0],
        [0, 1],
        [1, 1],
      ],
      V: [
        [1, 0],
        [0, 1],
        [2, 2],
      ],
    };
    const e = engine.explain(problem, { step: 'scores', row: 1, col: 2 });
    assert.equal(e.text_id, 'explain.scores.dot');
    assert.deepEqual(e.params, { d_k: '2', value: '@0' });
    assert.equal(
      cellText(e, engine.run(problem)),
      'The query of query 2 dotted with the key of key 3, over the d_k = 2 features: the sum of the products is 1.5000.',
    );
    assert.equal(e.terms.caption, 'Term by term');
    assert.deepEqual(e.terms.headers, ['feature', 'q', 'k', 'q × k']);
    assert.deepEqual(e.terms.header_ids, ['explain.term.feature', 'q', 'k', 'q × k']);
  });

  test("the trace's warnings are messages too: English's text is en.json's, another language formats the same message", async () => {
    const hidden = { ...qkv, options: { mask: grid(4, 4, (i) => i !== 1), mask_fill: -1e4 } };
    const trace = engine.run(hidden);
    assert.deepEqual(trace.warning_messages, [{ id: 'warning.fully_masked.fill', values: { axis: 'row', row: '2', fill: '-10000' } }]);
    assert.equal(trace.warnings[0], english.message(trace.warning_messages[0]));
    assert.match(trace.warnings[0], /^row 2 of the mask hides every key, but mask_fill = -10000 is a number/);
    for (const code of Object.keys(LANGUAGES).filter((c) => c !== 'en')) {
      const said = (await loadTranslator(code)).message(trace.warning_messages[0]);
      assert.ok(said !== trace.warnings[0] && said.includes('-10000') && said.includes('mask_fill'), `${code}: ${said}`);
    }
  });

  for (const code of Object.keys(LANGUAGES).filter((c) => c !== 'en')) {
    test(`${code}: every sentence, caption and header reads in the language, with English's placeholders`, async () => {
      const t = await loadTranslator(code);
      for (const { where, e } of all) {
        const said = explanationWords(e, t);
        assert.deepEqual(placeholders(said.text), placeholders(e.text), `${where}: ${said.text}`);
        assert.doesNotMatch(said.text, /[{}]|undefined/, `${where}: ${said.text}`);
        assert.notEqual(said.text, e.text, `${where}: not English's`);
        if (e.terms) {
          assert.deepEqual(placeholders(said.terms.caption), placeholders(e.terms.caption), `${where}: ${said.terms.caption}`);
          e.terms.header_ids.forEach((h, k) => {
            if (!h.startsWith('explain.')) assert.equal(said.terms.headers[k], h, `${where}: a symbol stays as it is`);
          });
        }
        const filled = fillExplanation(said.text, e, { number: (x) => x.toFixed(4), label: (n) => `<${n}>` });
        assert.doesNotMatch(filled, /@|NaN/, `${where}: ${filled}`);
      }
    });
  }
});

// The formulas' words ("(given)", " where ", " otherwise"): the core writes them as @{formula.<id>}
// in a step's formula and a worked calculation's lines; the API's tex/text/lines are English filled
// in, and stepFormula/explanationWords fill any language.
const MIN_FORMULA_WORDS = 48;
const FORMULA_WORD = /@\{(formula\.[a-z0-9_]+)\}/g;
// The formulas the sample has, once each (many steps share one).
const templates = [
  ...new Map(stepsSeen.map(({ where, step }) => [step.formula_ids.tex + step.formula_ids.text, { where, step }])).values(),
];

describe("formulas' words", () => {
  test("every word of a formula is a message id of the catalogue, and English fills the API's tex, text and lines", () => {
    const ids = new Set();
    for (const { where, step } of stepsSeen) {
      for (const kind of /** @type {const} */ (['tex', 'text'])) {
        const template = step.formula_ids[kind];
        for (const [, id] of template.matchAll(FORMULA_WORD)) {
          assert.ok(english.has(id), `${where}: ${id} is in en.json`);
          ids.add(id);
        }
        assert.equal(step[kind], fillFormula(template, english, kind === 'tex'), `${where}: ${kind}`);
        assert.doesNotMatch(step[kind], /@\{/, `${where}: ${step[kind]}`);
      }
    }
    for (const { where, e } of all) {
      e.line_ids.forEach((template, k) => {
        for (const [, id] of template.matchAll(FORMULA_WORD)) {
          assert.ok(english.has(id), `${where}: ${id}`);
          ids.add(id);
        }
        assert.equal(e.lines[k], fillFormula(template, english, true), `${where}: line ${k + 1}`);
      });
    }
    // Every formula typesets (KaTeX as the page runs it).
    for (const { where, step } of templates) {
      assert.doesNotThrow(() => katex.renderToString(step.tex, { throwOnError: true, strict: 'ignore' }), `${where}: ${step.tex}`);
    }
    // The sample reaches most of the formulas' words (a guard against a sample without words).
    assert.ok(ids.size >= MIN_FORMULA_WORDS, `${ids.size} formula words reached`);
  });

  test('English in words: the mask step of a causal window with a mask of your own', () => {
    const step = engine
      .run({ ...qkv, options: { mask: grid(4, 4, (i, j) => i !== j + 1), causal: true, window: [2, 0] } })
      .steps.find((s) => s.id === 'mask');
    assert.equal(
      step.formula_ids.text,
      'M_ij = 1 @{formula.if} j ≤ i (@{formula.causal}), i − 2 ≤ j ≤ i (@{formula.window}), @{formula.your_mask_keeps_it}; @{formula.else} 0',
    );
    assert.equal(step.text, 'M_ij = 1 if j ≤ i (causal), i − 2 ≤ j ≤ i (window), your mask keeps it; else 0');
  });

  for (const code of Object.keys(LANGUAGES).filter((c) => c !== 'en')) {
    test(`${code}: every formula reads in the language and KaTeX typesets it`, async () => {
      const t = await loadTranslator(code);
      for (const { where, step } of templates) {
        const said = stepFormula(step, t);
        for (const kind of /** @type {const} */ (['tex', 'text'])) {
          assert.doesNotMatch(said[kind], /@\{|undefined/, `${where}: ${said[kind]}`);
          if (step.formula_ids[kind].includes('@{formula.')) assert.notEqual(said[kind], step[kind], `${where}: not English's ${kind}`);
        }
        assert.doesNotThrow(() => katex.renderToString(said.tex, { throwOnError: true, strict: 'ignore' }), `${where}: ${said.tex}`);
      }
      for (const { where, e } of all) {
        for (const line of explanationWords(e, t).lines) assert.doesNotMatch(line, /@\{|undefined/, `${where}: ${line}`);
      }
    });
  }
});
