// Numbers and matrices as text: the one rule every view uses (the page, the component, the
// exports, the CLI). Presentation only, no attention maths.

const MINUS = '\u2212';
const WORDS = { inf: Infinity, '+inf': Infinity, infinity: Infinity, '-inf': -Infinity, '-infinity': -Infinity, nan: NaN };

/**
 * `decimals` places, or scientific notation where fixed places would show no digit (|x| below
 * half the last place) or too many (|x| ≥ 1e7). ASCII; finite x only.
 */
function rounded(x, decimals, fixedZero, tinyAsZero) {
  const ax = Math.abs(x);
  if (x === 0 || (tinyAsZero && ax < 10 ** -decimals / 2)) return fixedZero ? (0).toFixed(decimals) : '0';
  if (ax < 10 ** -decimals / 2 || ax >= 1e7) return x.toExponential(Math.max(1, Math.min(decimals, 6) - 1));
  return noNegativeZero(x.toFixed(decimals));
}

/** "-0.00" (a tiny negative number rounded away) reads as "0.00". */
function noNegativeZero(text) {
  return /^-0\.?0*$/.test(text) ? text.slice(1) : text;
}

/**
 * A number for people: `decimals` places (or 1.500e−7, see above), −∞, ∞, NaN, with a
 * typographic minus. `fixedZero`: 0 as "0.0000" (tables whose columns line up) instead of "0".
 * `tinyAsZero`: a number that rounds to 0 at `decimals` is shown as 0, not 1.500e−7 (tables
 * where −3.469e−17 is floating-point noise; the worked calculation keeps every digit).
 * @type {typeof import('./index.js').formatNumber}
 */
export function formatNumber(x, decimals = 4, { fixedZero = false, tinyAsZero = false } = {}) {
  if (x === -Infinity) return `${MINUS}∞`;
  if (x === Infinity) return '∞';
  if (Number.isNaN(x)) return 'NaN';
  return rounded(x, decimals, fixedZero, tinyAsZero).replace(/-/g, MINUS);
}

/**
 * The same number in TeX: -\infty, \text{NaN}, 1.500 \times 10^{-7}.
 * @type {typeof import('./index.js').texNumber}
 */
export function texNumber(x, decimals = 4, { fixedZero = false } = {}) {
  if (x === -Infinity) return '-\\infty';
  if (x === Infinity) return '\\infty';
  if (Number.isNaN(x)) return '\\text{NaN}';
  const [m, e] = rounded(x, decimals, fixedZero, false).split('e');
  return e === undefined ? m : `${m} \\times 10^{${Number(e)}}`;
}

/** Exactly `digits` places, never scientific (terminal tables); "inf", "-inf", "nan"; no "-0.00". */
export function fixedNumber(x, digits) {
  if (!Number.isFinite(x)) return exactNumber(x);
  return noNegativeZero(x.toFixed(digits));
}

/** The shortest text that reads back to the same double; "inf", "-inf", "nan" otherwise. */
export function exactNumber(x) {
  if (Number.isFinite(x)) return String(x);
  return Number.isNaN(x) ? 'nan' : x > 0 ? 'inf' : '-inf';
}

/** "inf", "-Infinity", "NaN", ... (any case, surrounding spaces) as a number; undefined for other text. */
export function numberWord(text) {
  return WORDS[String(text).trim().toLowerCase()];
}

/**
 * A matrix (rows) or a vector as text the parser reads back exactly: numbers separated by
 * spaces, one row a line; text entries (e.g. "-inf") as they are.
 * @type {typeof import('./index.js').matrixToText}
 */
export function matrixToText(value) {
  const cell = (v) => (typeof v === 'number' ? exactNumber(v) : String(v));
  if (!Array.isArray(value[0])) return Array.from(value, cell).join(' ');
  return value.map((row) => Array.from(row, cell).join(' ')).join('\n');
}

const TEXT_ESCAPES = {
  '\\': '\\textbackslash{}',
  '{': '\\{',
  '}': '\\}',
  $: '\\$',
  '&': '\\&',
  '#': '\\#',
  '^': '\\^{}',
  _: '\\_',
  '%': '\\%',
  '~': '\\~{}',
};
/** Words as TeX text (inside \\text{} or a paragraph): TeX's special characters escaped. */
export function texText(s) {
  return String(s)
    .replace(/[\\{}$&#^_%~]/g, (c) => TEXT_ESCAPES[c])
    .replace(/·/g, '$\\cdot$')
    .replace(/ᵀ/g, '$^\\top$')
    .replace(/√/g, '$\\surd$');
}
