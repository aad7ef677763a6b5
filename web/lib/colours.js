// Heatmap colour scales shared by the page, the <attention-explorer> component and the SVG
// export: presentation only, no attention maths.
import { english } from './i18n.js';

// Every palette is colour-blind safe and its ends are saturated enough to read on a projector;
// text on each cell is black or white, whichever passes WCAG AA (withText).
// Diverging for signed values: ColorBrewer RdBu, blue negative, red positive, 0 neutral light grey.
const DIVERGING = [
  [33, 102, 172],
  [67, 147, 195],
  [146, 197, 222],
  [209, 229, 240],
  [247, 247, 247],
  [253, 219, 199],
  [244, 165, 130],
  [214, 96, 77],
  [178, 24, 43],
];
// Sequential for probabilities in [0, 1]: viridis, reversed, so that more weight is darker on the
// white page: yellow (0) through green and teal to dark purple (1). Viridis is perceptually uniform
// (equal steps of weight look equal) and reads the same to the common colour blindnesses; its
// light end is a saturated yellow, so a small weight is still visibly tinted (a white-based ramp
// washes it out, on a projector most). Control points: every 16th of the 256 entries of
// matplotlib's viridis (_viridis_data in lib/matplotlib/_cm_listed.py; van der Walt and Smith,
// CC0), times 255 and rounded, from entry 255 down to entry 0.
const SEQUENTIAL = [
  [253, 231, 37],
  [213, 226, 26],
  [170, 220, 50],
  [129, 211, 77],
  [92, 200, 99],
  [61, 188, 116],
  [39, 173, 129],
  [31, 159, 136],
  [33, 145, 140],
  [38, 130, 142],
  [44, 114, 142],
  [51, 99, 141],
  [59, 82, 139],
  [66, 64, 134],
  [71, 45, 123],
  [72, 24, 106],
  [68, 1, 84],
];
// A keep-mask's two values: hidden (0) grey, as masked cells are everywhere; kept (1) light gold.
const KEEP = [
  [150, 150, 150],
  [254, 227, 145],
];
// An additive bias: ColorBrewer PuOr (purple negative, orange positive), so that a bias never
// reads as a score; its -inf entries (hidden keys) are drawn as masked, not coloured.
const BIAS = [
  [84, 39, 136],
  [128, 115, 172],
  [178, 171, 210],
  [216, 218, 235],
  [247, 247, 247],
  [254, 224, 182],
  [253, 184, 99],
  [224, 130, 20],
  [179, 88, 6],
];

function lerpStops(stops, t) {
  const x = Math.min(1, Math.max(0, t)) * (stops.length - 1);
  const i = Math.min(stops.length - 2, Math.floor(x));
  const f = x - i;
  const a = stops[i],
    b = stops[i + 1];
  return [0, 1, 2].map((k) => Math.round(a[k] + (b[k] - a[k]) * f));
}

function luminance(rgb) {
  const [r, g, b] = rgb.map((v) => {
    const c = v / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

/**
 * Black or white text, whichever contrasts more; a cell colour in the narrow band where neither
 * reaches 4.5:1 (WCAG AA) is darkened just enough for white text.
 */
function withText(rgb) {
  let c = rgb;
  let L = luminance(c);
  if (L >= 0.18) return { rgb: c, fg: '#000' };
  while (L > 0.174) {
    c = c.map((v) => Math.round(v * 0.98));
    L = luminance(c);
  }
  return { rgb: c, fg: '#fff' };
}

/** The largest finite |value| of a matrix: the end of a signed colour scale. */
export function scaleMax(data) {
  let max = 0;
  for (const row of data) for (const v of row) if (Number.isFinite(v) && Math.abs(v) > max) max = Math.abs(v);
  return max;
}

// A step's `kind` picks its scale: probabilities on 0 to 1 fixed, so that a uniform row of 0.25
// is drawn at 0.25's colour and heads compare; a keep-mask on 0 (hidden) to 1 (kept); signed values
// and an additive bias each on their own palette, symmetric about 0 up to the largest finite
// |value|. 'weights' is the name the page used before steps carried their kind.
// Each scale's meaning in words is the catalogue's export.legend.<name> (English here; legendHtml
// and the SVG export take a translator).
const SCALES = {
  probability: { stops: SEQUENTIAL, fixed: true },
  keep_mask: { stops: KEEP, fixed: true },
  signed: { stops: DIVERGING, fixed: false },
  additive_bias: { stops: BIAS, fixed: false },
};
SCALES.weights = SCALES.probability;
const scaleOf = (kind) => SCALES[kind] ?? SCALES.signed;
/** The name of `kind`'s scale (probability, keep_mask, signed, additive_bias): a legend's message is `export.legend.<name>`. */
export const legendScale = (kind) => (kind === 'weights' ? 'probability' : Object.hasOwn(SCALES, kind) ? kind : 'signed');

/**
 * The values at the two ends of a matrix's colour scale: [0, 1] or [-max, max].
 * @type {typeof import('./index.js').colourRange}
 */
export function colourRange(data, kind) {
  if (scaleOf(kind).fixed) return [0, 1];
  const max = scaleMax(data);
  return [-max, max];
}

/** (v) => where v lies on the scale, 0 to 1 (clamped); null for non-finite values. */
function position(data, kind) {
  const [lo, hi] = colourRange(data, kind);
  return (v) => (Number.isFinite(v) ? (hi === lo ? 0.5 : Math.min(1, Math.max(0, (v - lo) / (hi - lo)))) : null);
}

const stopsOf = (kind) => scaleOf(kind).stops;

/**
 * What a legend shows for a matrix of `kind`: the scale's meaning in words ("weight, 0 to 1",
 * "signed, ±max", ...), its two ends (numbers) and its colours from the low end to the high end
 * (CSS rgb() strings, evenly spaced: a gradient's stops).
 * @type {typeof import('./index.js').colourLegend}
 */
export function colourLegend(data, kind) {
  const { stops } = scaleOf(kind);
  const [lo, hi] = colourRange(data, kind);
  return { meaning: english(`export.legend.${legendScale(kind)}`), lo, hi, colours: stops.map((c) => `rgb(${c.join(',')})`) };
}

/**
 * A colour scale for one matrix of `kind` (a step's kind): (v) => { bg, fg, rgb }, or null for non-finite v.
 * @type {typeof import('./index.js').colourScale}
 */
export function colourScale(data, kind) {
  const at = position(data, kind);
  const stops = stopsOf(kind);
  return (v) => {
    const t = at(v);
    if (t === null) return null;
    const { rgb, fg } = withText(lerpStops(stops, t));
    return { bg: `rgb(${rgb})`, fg, rgb };
  };
}

/**
 * The same scale as a 256-entry lookup table for canvases: returns (v) => index into `lut`
 * (RGB triples), or -1 for non-finite values.
 * @type {typeof import('./index.js').colourLut}
 */
export function colourLut(data, kind) {
  const lut = new Uint8ClampedArray(256 * 3);
  const stops = stopsOf(kind);
  for (let i = 0; i < 256; i++) lut.set(lerpStops(stops, i / 255), i * 3);
  const at = position(data, kind);
  const index = (v) => {
    const t = at(v);
    return t === null ? -1 : Math.round(255 * t);
  };
  return { lut, index };
}

/**
 * colourScale as CSS colours: (v) => { fill, text }, or null for non-finite v.
 * @type {typeof import('./index.js').heatColours}
 */
export function heatColours(data, /** @type {import('./index.js').ValueKind} */ kind = 'signed') {
  const scale = colourScale(data, kind);
  return (v) => {
    const c = scale(v);
    return c && { fill: `rgb(${c.rgb.join(',')})`, text: c.fg };
  };
}
