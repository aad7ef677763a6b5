// Heatmap colour scales shared by the page, the <attention-explorer> component and the SVG
// export: presentation only, no attention maths.

// Diverging for signed values: ColorBrewer RdBu (colour-blind safe), blue negative, red positive.
const DIVERGING = [
  [33, 102, 172], [67, 147, 195], [146, 197, 222], [209, 229, 240], [247, 247, 247],
  [253, 219, 199], [244, 165, 130], [214, 96, 77], [178, 24, 43],
];
// Sequential for weights in [0, 1]: ColorBrewer Blues-like, white to deep blue-purple.
const SEQUENTIAL = [
  [255, 255, 255], [222, 235, 247], [198, 219, 239], [158, 202, 225], [107, 174, 214],
  [66, 146, 198], [33, 113, 181], [8, 81, 156], [8, 48, 107],
];

function lerpStops(stops, t) {
  const x = Math.min(1, Math.max(0, t)) * (stops.length - 1);
  const i = Math.min(stops.length - 2, Math.floor(x));
  const f = x - i;
  const a = stops[i], b = stops[i + 1];
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

/** The largest finite |value| of a matrix: the end of its colour scale. */
export function scaleMax(data) {
  let max = 0;
  for (const row of data) for (const v of row) if (Number.isFinite(v) && Math.abs(v) > max) max = Math.abs(v);
  return max;
}

/**
 * A colour scale for one matrix: `kind` 'weights' (sequential, 0..max) or 'signed' (diverging,
 * symmetric around 0 up to the largest finite |value|).
 */
export function colourScale(data, kind) {
  const max = scaleMax(data);
  if (kind === 'weights') {
    // 0 .. the largest weight shown, so 256 keys of ~1/256 still show their pattern.
    return (v) => {
      if (!Number.isFinite(v)) return null;
      const { rgb, fg } = withText(lerpStops(SEQUENTIAL, max > 0 ? v / max : 0));
      return { bg: `rgb(${rgb})`, fg, rgb };
    };
  }
  return (v) => {
    if (!Number.isFinite(v)) return null;
    const { rgb, fg } = withText(lerpStops(DIVERGING, max === 0 ? 0.5 : 0.5 + v / (2 * max)));
    return { bg: `rgb(${rgb})`, fg, rgb };
  };
}

/**
 * The same scale as a 256-entry lookup table for canvases: returns (v) => index into `lut`
 * (RGB triples), or -1 for non-finite values.
 */
export function colourLut(data, kind) {
  const max = scaleMax(data);
  const lut = new Uint8ClampedArray(256 * 3);
  for (let i = 0; i < 256; i++) {
    const rgb = lerpStops(kind === 'weights' ? SEQUENTIAL : DIVERGING, i / 255);
    lut.set(rgb, i * 3);
  }
  const index = kind === 'weights'
    ? (v) => (Number.isFinite(v) ? Math.round(255 * Math.min(1, Math.max(0, max > 0 ? v / max : 0))) : -1)
    : (v) => (Number.isFinite(v) ? Math.round(255 * Math.min(1, Math.max(0, max === 0 ? 0.5 : 0.5 + v / (2 * max)))) : -1);
  return { lut, index };
}

/**
 * A colour function for a matrix: weights on a sequential scale from 0 to the largest weight,
 * anything else on a diverging scale symmetric around 0 (the scales above).
 * Returns (v) => { fill, text } (CSS colours) or null for non-finite values.
 */
export function heatColours(data, kind = 'signed') {
  const scale = colourScale(data, kind);
  return (v) => {
    const c = scale(v);
    return c && { fill: `rgb(${c.rgb.join(',')})`, text: c.fg };
  };
}
