// Number formatting and colour scales: presentation only, no attention maths.

const MINUS = '\u2212';

/** Format a number for display with `decimals` places; −∞, ∞, NaN spelled out. */
export function fmt(x, decimals = 4) {
  if (x === -Infinity) return MINUS + '∞';
  if (x === Infinity) return '∞';
  if (Number.isNaN(x)) return 'NaN';
  if (x === 0) return (0).toFixed(decimals);
  const ax = Math.abs(x);
  let s;
  if (ax !== 0 && (ax < Math.pow(10, -decimals) / 2 || ax >= 1e7)) {
    s = x.toExponential(Math.max(1, Math.min(decimals, 6) - 1));
    s = s.replace(/e([+-])(\d+)/, (_, sign, d) => `e${sign === '-' ? MINUS : ''}${d}`);
  } else {
    s = x.toFixed(decimals);
  }
  return s.startsWith('-') ? MINUS + s.slice(1) : s;
}

/** Plain ASCII form for inputs and LaTeX (no typographic minus). */
export function fmtPlain(x, decimals = 4) {
  return fmt(x, decimals).replace(/\u2212/g, '-').replace('∞', '\\infty');
}

/** A number inside KaTeX source. */
export function tex(x, decimals = 4) {
  if (x === -Infinity) return '-\\infty';
  if (x === Infinity) return '\\infty';
  if (Number.isNaN(x)) return '\\text{NaN}';
  let s = fmt(x, decimals).replace(/\u2212/g, '-');
  const m = /^(-?[\d.]+)e(-?)(\d+)$/.exec(s.replace('\u2212', '-'));
  if (m) s = `${m[1]}\\times 10^{${m[2]}${m[3]}}`;
  return s;
}

// Colour scales live in the package (lib/colours.js) so the page, the component and the SVG/PNG
// exports colour a matrix identically.
export { scaleMax, colourScale, colourLut } from './lib/colours.js';

export function escapeHtml(s) {
  return String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);
}
