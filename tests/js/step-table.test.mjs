// The one step-table renderer (web/lib/step-table.js) that the page's cards, its glance and
// <attention-explorer> draw with:   node --test tests/js/step-table.test.mjs        (needs dist/)
// A causal problem's weights: hidden keys grey ('masked', no colour), each number on the 0–1 scale,
// floating-point noise as 0, the caller's attributes and labels escaped; the legend's words and ends.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';

import { dist } from './helpers.mjs';

const { colourScale, loadAttention } = await import(`${dist}node.js`);
const { cellLook, escapeHtml, legendHtml, maskedPositions, stepTableHtml } = await import(`${dist}step-table.js`);
const { html: tag } = await import(`${dist}html.js`);
const { loadTranslator } = await import(`${dist}i18n.js`);
const engine = await loadAttention();

const problem = {
  Q: [
    [1, 0],
    [0, 1],
    [1, 1],
  ],
  K: [
    [1, 0],
    [0, 1],
    [1, 1],
  ],
  V: [
    [1, 2],
    [3, 4],
    [5, 6],
  ],
  options: { causal: true },
};
const trace = engine.run(problem);
const weights = trace.steps.find((s) => s.id === 'weights');
/** The cells of a rendered table: [{ attrs, text }] per row. */
const cells = (html) =>
  [...html.matchAll(/<tr><th scope="row"[^>]*>[^<]*<\/th>(.*?)<\/tr>/g)].map(([, row]) =>
    [...row.matchAll(/<td([^>]*)>([^<]*)<\/td>/g)].map(([, attrs, text]) => ({ attrs, text })),
  );

test("weights of a causal problem: hidden keys grey, numbers on the 0–1 scale, the caller's attributes", () => {
  const masked = maskedPositions(trace, weights);
  assert.equal(masked, trace.steps[weights.inputs[0]].data, "the softmax's input");
  const table = stepTableHtml(
    weights,
    { rows: ['a', 'b', '<c>'], cols: ['x', 'y', 'z'] },
    {
      attrs: tag`class="matrix" data-key="${'weights:0'}"`,
      caption: 'Weights & co',
      decimals: 4,
      fixedZero: true,
      masked,
      focusable: true,
    },
  );
  const html = String(table);
  assert.match(
    html,
    /^<table class="matrix" data-key="weights:0"><caption class="visually-hidden">Weights &amp; co<\/caption><thead><tr><th><\/th><th scope="col">x<\/th>/,
  );
  assert.match(html, /<th scope="row">&lt;c&gt;<\/th>/);
  const rows = cells(html);
  assert.deepEqual(
    rows.map((r) => r.map((c) => c.text)),
    [
      ['1.0000', '0.0000', '0.0000'],
      ['0.3302', '0.6698', '0.0000'],
      ['0.2483', '0.2483', '0.5035'],
    ],
  );
  // Row 1's keys 2 and 3 are hidden: grey, not coloured as a weight of 0.
  assert.equal(rows[0][1].attrs, ' tabindex="-1" data-r="0" data-c="1" class="masked" data-bg=""');
  const one = colourScale([[0]], 'probability')(1);
  assert.equal(rows[0][0].attrs, ` tabindex="-1" data-r="0" data-c="0" style="background:${one.bg};color:${one.fg}" data-bg="${one.bg}"`);
});

test('a cell: −∞ is "neg-inf", noise rounds to 0 (0.0000 with fixedZero), hidden cells take no colour', () => {
  const scale = colourScale([[-2, 2]], 'signed');
  assert.deepEqual(cellLook(-Infinity, true, scale, 4, true), { text: '−∞', cls: 'neg-inf', bg: '', fg: '' });
  assert.equal(cellLook(-3.5e-17, false, scale, 4, false).text, '0');
  assert.equal(cellLook(-3.5e-17, false, scale, 4, true).text, '0.0000');
  assert.deepEqual(cellLook(2, true, scale, 2, true), { text: '2.00', cls: 'masked', bg: '', fg: '' });
  const { bg, fg } = scale(-2);
  assert.deepEqual(cellLook(-2, false, scale, 2, false), { text: '−2.00', cls: '', bg, fg });
});

test('the legend: the scale in words (in a language) and its two ends', async () => {
  const text = String(legendHtml(weights)).replace(/<[^>]*>/g, '');
  assert.equal(text, 'weight, 0 to 1: 0.00  1.00');
  const scores = trace.steps.find((s) => s.id === 'scores');
  assert.equal(
    String(legendHtml(scores))
      .replace(/<[^>]*>/g, '')
      .replace(/\s+/g, ' '),
    'signed, ±max: −2.00 +2.00',
  );
  // In a language: the catalogue's words for the scale (export.legend.<scale>), the same ends.
  const fr = await loadTranslator('fr');
  const { 'export.legend.probability': weightFr, 'export.legend.signed': signedFr } = JSON.parse(
    readFileSync(`${dist}locales/fr.json`, 'utf8'),
  );
  assert.notEqual(weightFr, 'weight, 0 to 1');
  assert.equal(String(legendHtml(weights, fr)).replace(/<[^>]*>/g, ''), `${weightFr}: 0.00  1.00`);
  assert.equal(
    String(legendHtml(scores, fr))
      .replace(/<[^>]*>/g, '')
      .replace(/\s+/g, ' '),
    `${signedFr}: −2.00 +2.00`,
  );
  assert.equal(escapeHtml('<a href="x">\'&'), '&lt;a href=&quot;x&quot;&gt;&#39;&amp;');
});

test("the caller's markup (attrs, above, corner, labelAttrs) goes in as html``; a plain string is escaped", () => {
  const table = String(
    stepTableHtml(
      { data: [[1, 2]], kind: 'signed', shape: [1, 2] },
      { rows: ['q"1'], cols: ['a', 'b'] },
      {
        attrs: tag`class="m"`,
        above: tag`<tr><td></td><th colspan="2">${'head <1>'}</th></tr>`,
        corner: tag`<th class="corner"></th>`,
        labelAttrs: (axis, i) => axis === 'col' && tag` data-token="k:${i}"`,
      },
    ),
  );
  assert.match(
    table,
    /^<table class="m"><thead><tr><td><\/td><th colspan="2">head &lt;1&gt;<\/th><\/tr><tr><th class="corner"><\/th><th scope="col" data-token="k:0">a<\/th><th scope="col" data-token="k:1">b<\/th><\/tr><\/thead><tbody><tr><th scope="row">q&quot;1<\/th><td data-r="0" data-c="0"/,
  );
  assert.match(
    String(stepTableHtml({ data: [[1]], shape: [1, 1] }, { rows: ['r'], cols: ['c'] }, { attrs: 'x="<y>"' })),
    /^<table x=&quot;&lt;y&gt;&quot;>/,
  );
});
