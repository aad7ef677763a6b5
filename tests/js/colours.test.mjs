// Colour scales (colours.js), SVG heatmaps (svg.js) and table numbers that round to 0 (format.js):
//   node --test tests/js/colours.test.mjs        (needs dist/)
// Probabilities on a fixed 0–1 scale (a uniform row of 0.25 at 0.25's colour, not 1's), signed
// values symmetric about 0, keep-masks and additive biases on palettes of their own, every cell's
// text readable (WCAG AA, 4.5:1) on every colour of every scale; an exported heatmap with its whole
// title, its axes' names, a colour bar with the scale's meaning and grey masked cells.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { dist } from './helpers.mjs';

const pkg = await import(`${dist}node.js`);
const { colourLegend, colourRange, colourScale, formatNumber, heatmapSvg, loadAttention } = pkg;
const engine = await loadAttention();

const rgb = (css) => css.match(/\d+/g).map(Number);
/** WCAG 2 contrast ratio of two sRGB colours, written out here independently of colours.js. */
function contrast(a, b) {
  const lum = (c) => {
    const [r, g, bl] = c.map((v) => {
      const s = v / 255;
      return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * bl;
  };
  const [hi, lo] = [lum(a), lum(b)].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
}
const textRgb = (fg) => (fg === '#fff' ? [255, 255, 255] : [0, 0, 0]);

test('probabilities: a fixed 0–1 scale, so a uniform row of 0.25 is drawn at 0.25, not at the maximum', () => {
  const uniform = [[0.25, 0.25, 0.25, 0.25]];
  const onScale = colourScale(uniform, 'probability');
  const peaked = colourScale([[1, 0, 0, 0]], 'probability');
  assert.deepEqual(colourRange(uniform, 'probability'), [0, 1]);
  assert.equal(onScale(0.25).bg, peaked(0.25).bg, 'the same weight, the same colour in any matrix');
  assert.notEqual(onScale(0.25).bg, peaked(1).bg, '0.25 is not drawn as full attention');
  assert.equal(onScale(0.25).bg, 'rgb(92,200,99)'); // viridis at 0.75 (the scale runs yellow → purple)
  assert.equal(peaked(1).bg, 'rgb(68,1,84)'); // viridis' first entry
  assert.equal(peaked(0).bg, 'rgb(253,231,37)'); // viridis' last entry
});

test('signed values: symmetric about 0 up to the largest |value|, 0 in the neutral middle', () => {
  const data = [
    [-1, 3],
    [0.5, -Infinity],
  ];
  const scale = colourScale(data, 'signed');
  assert.deepEqual(colourRange(data, 'signed'), [-3, 3]);
  assert.equal(scale(0).bg, 'rgb(247,247,247)');
  assert.equal(scale(3).bg, 'rgb(178,24,43)');
  assert.equal(scale(-3).bg, 'rgb(33,102,172)', '−3 at the blue end although no entry is −3');
  assert.equal(scale(-Infinity), null, '−∞ is drawn as masked, not coloured');
});

test('keep-masks and additive biases have scales of their own', () => {
  const keep = colourScale([[1, 0]], 'keep_mask');
  assert.deepEqual(colourRange([[1, 1]], 'keep_mask'), [0, 1], 'an all-kept mask still reads as kept');
  assert.equal(keep(0).bg, 'rgb(150,150,150)', 'hidden: grey, as masked cells everywhere');
  assert.equal(keep(1).bg, 'rgb(254,227,145)');
  const bias = [
    [0, -2, -Infinity],
    [-1, 0, 0.5],
  ];
  const b = colourScale(bias, 'additive_bias');
  assert.deepEqual(colourRange(bias, 'additive_bias'), [-2, 2]);
  assert.equal(b(-2).bg, 'rgb(84,39,136)', 'a bias is purple–orange, never a score’s blue–red');
  assert.notEqual(b(-2).bg, colourScale(bias, 'signed')(-2).bg);
  assert.equal(b(-Infinity), null);
  const meanings = ['probability', 'signed', 'keep_mask', 'additive_bias'].map((k) => colourLegend([[0.5, -1]], k).meaning);
  assert.deepEqual(meanings, ['weight, 0 to 1', 'signed, ±max', 'mask, 1 kept, 0 hidden', 'bias, ±max (−∞ hides)']);
  const legend = colourLegend([[0.5, -1]], 'signed');
  assert.deepEqual([legend.lo, legend.hi], [-1, 1]);
  assert.equal(legend.colours[0], 'rgb(33,102,172)');
});

test('every colour of every scale carries its text at WCAG AA (4.5:1)', () => {
  const texts = new Set();
  for (const kind of ['probability', 'signed', 'keep_mask', 'additive_bias']) {
    const scale = colourScale([[-1, 1]], kind);
    for (let i = 0; i <= 400; i++) {
      const v = -1 + (2 * i) / 400;
      const c = scale(v);
      const ratio = contrast(rgb(c.bg), textRgb(c.fg));
      assert.ok(ratio >= 4.5, `${kind} at ${v}: ${c.fg} on ${c.bg} is ${ratio.toFixed(2)}:1`);
      texts.add(c.fg);
    }
  }
  assert.deepEqual([...texts].sort(), ['#000', '#fff'], 'both black and white text were checked');
});

test('numbers that round to 0 at the chosen decimals: 0 in tables, full digits elsewhere', () => {
  const noise = -3.469446951953614e-17;
  assert.equal(formatNumber(noise, 4, { fixedZero: true, tinyAsZero: true }), '0.0000');
  assert.equal(formatNumber(2.7755575615628914e-17, 1, { fixedZero: true, tinyAsZero: true }), '0.0');
  assert.equal(formatNumber(-0.00004, 4, { tinyAsZero: true }), '0');
  assert.equal(formatNumber(-0.00006, 4, { tinyAsZero: true }), '\u22120.0001');
  assert.equal(formatNumber(noise, 4), '\u22123.469e\u221217', 'without tinyAsZero every digit stays');
});

test('an SVG heatmap: the whole title, the axes, a colour bar with its meaning, masked cells grey', () => {
  const Q = [
    [0, 0],
    [0, 0],
    [0, 0],
    [0, 0],
  ];
  const trace = engine.run({
    Q,
    K: [
      [1, 0],
      [0, 1],
      [1, 1],
      [2, 1],
    ],
    V: [
      [1, 2],
      [3, 4],
      [5, 6],
      [7, 8],
    ],
    options: { causal: true },
  });
  const weights = trace.steps.find((s) => s.id === 'weights');
  const masked = trace.steps[weights.inputs[0]].data.map((row) => row.map((v) => v === -Infinity));
  const title = 'Attention weights, head 1 (4 × 4)';
  const tokens = ['w1', 'w2', 'w3', 'w4'];
  const svg = heatmapSvg(weights, {
    title,
    rowLabels: tokens,
    colLabels: tokens,
    axisTitles: { rows: 'query', cols: 'key' },
    masked,
    decimals: 3,
  });
  const width = Number(/<svg [^>]*width="(\d+)"/.exec(svg)[1]);
  const titleText = /<text [^>]*font-size="14"[^>]*>([^<]*)<\/text>/.exec(svg);
  assert.equal(titleText[1], title, 'the title is written whole');
  // Wide enough for the title at 14 px bold (0.6 em a character is generous for system-ui).
  assert.ok(width >= 8 + title.length * 14 * 0.6, `the SVG is ${width} px wide for a ${title.length}-character title`);
  assert.ok(svg.includes('>query ↓  key →</text>'), 'axis names');
  for (const t of tokens) assert.ok(svg.includes(`>${t}</text>`), `label ${t}`);
  assert.match(
    svg,
    /<linearGradient id="bar-weights0"><stop offset="0.000" stop-color="rgb\(253,231,37\)"\/>.*stop-color="rgb\(68,1,84\)"\/><\/linearGradient>/,
  );
  assert.ok(svg.includes('fill="url(#bar-weights0)"'), 'the colour bar is drawn with its ramp');
  assert.ok(
    svg.includes('>weight, 0 to 1</text>') && svg.includes('>0.00</text>') && svg.includes('>1.00</text>'),
    'the bar names its meaning and ends',
  );
  // Row 2 of causal attention over uniform (zero) queries: 0.5, 0.5, then two hidden keys.
  const cell = (i, j) =>
    new RegExp(`<rect x="\\d+" y="\\d+" width="48" height="48" fill="([^"]+)"><title>${i},${j}: ([^<]+)</title>`).exec(svg);
  assert.equal(cell(2, 1)[2], '0.5');
  assert.equal(cell(2, 1)[1], colourScale([[0]], 'probability')(0.5).bg, '0.5 at its own colour');
  assert.equal(cell(4, 1)[2], '0.25');
  assert.equal(cell(4, 1)[1], 'rgb(92,200,99)', 'a uniform row of 0.25 at 0.25’s colour');
  assert.equal(cell(2, 3)[1], '#eceef1', 'a hidden key’s weight is grey, as on the page');
  assert.ok(svg.includes('<title>2,3: 0 (masked)</title>'));
});

test('weights: perceptually ordered, no washed-out low end, never the grey of a masked cell', () => {
  const scale = colourScale([[0]], 'probability');
  /** CIE L* (lightness, 0 black to 100 white) of an sRGB colour. */
  const lightness = (c) => {
    const [r, g, b] = c.map((v) => {
      const s = v / 255;
      return s <= 0.04045 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
    });
    const Y = 0.2126 * r + 0.7152 * g + 0.0722 * b;
    return Y > 216 / 24389 ? 116 * Math.cbrt(Y) - 16 : (24389 / 27) * Y;
  };
  const L = Array.from({ length: 11 }, (_, i) => lightness(scale(i / 10).rgb));
  // More weight is darker, in steps of about equal lightness (each tenth 4 to 12 L* darker).
  for (let i = 1; i <= 10; i++) {
    const dL = L[i - 1] - L[i];
    assert.ok(dL >= 4 && dL <= 12, `weight ${(i - 1) / 10} → ${i / 10}: ${dL.toFixed(1)} L* darker`);
  }
  // The low end is a saturated colour, not white or grey: a weight of 0.05 is plainly tinted, and
  // even 0 is far from a masked cell's grey (#eceef1).
  const [r, g, b] = scale(0).rgb;
  assert.ok(Math.max(r, g, b) - Math.min(r, g, b) >= 150, `weight 0 is drawn rgb(${r},${g},${b}), near grey`);
  const distance = (x, y) => Math.hypot(...x.map((v, k) => v - y[k]));
  assert.ok(distance(scale(0).rgb, [236, 238, 241]) >= 150, 'weight 0 looks like a masked cell');
  assert.ok(distance(scale(0.05).rgb, [255, 255, 255]) >= 150, 'a weight of 0.05 is washed out');
  assert.ok(distance(scale(0.05).rgb, scale(0).rgb) >= 25, 'a weight of 0.05 looks like 0');
});
