// Numbers as the page shows them (and as text the parser reads back): presentation only.

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

/** A matrix (or a vector) as text the engine's parser reads back: rows on lines, ±inf as "inf". */
export function matrixToText(value) {
  const number = (v) => (v === Infinity ? 'inf' : v === -Infinity ? '-inf' : String(v));
  if (!Array.isArray(value[0])) return value.map(number).join(' ');
  return value.map((row) => row.map(number).join(' ')).join('\n');
}

export function escapeHtml(s) {
  return String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);
}
