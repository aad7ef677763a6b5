// A step's numbers as an HTML table, and its colour legend: the one renderer that the explorer
// page's step cards, its weights at a glance and <attention-explorer> draw with, so a number, its
// colour and a hidden key's grey read the same in each. Each brings its own stylesheet and
// attributes (the page's cells take the focus, its token names can be renamed).
import { colourLegend, colourScale, legendScale } from './colours.js';
import { english } from './i18n.js';
import { formatNumber } from './format.js';
import { html } from './html.js';

/** @typedef {import('./html.js').Html} Html */

// Still exported here, where the page and the component first took it from.
export { escapeHtml } from './html.js';

/** For probabilities: the softmax's input, whose −∞ entries (keys hidden from it) show as masked; else null. */
export function maskedPositions(trace, step) {
  if (step.kind !== 'probability') return null;
  return trace.steps[step.inputs[0]]?.data ?? null;
}

/**
 * How one number is drawn: its text, its class ('neg-inf', 'masked' for a weight of a key the
 * softmax's input hid, or ''), and its colours (`bg` '' when uncoloured). `scale`: colourScale's.
 * The page patches cells in place with this, so a patched cell equals a drawn one.
 */
export function cellLook(v, hiddenHere, scale, decimals, fixedZero) {
  const c = hiddenHere ? null : scale(v);
  return {
    text: formatNumber(v, decimals, { fixedZero, tinyAsZero: true }),
    cls: v === -Infinity ? 'neg-inf' : hiddenHere ? 'masked' : '',
    bg: c ? c.bg : '',
    fg: c ? c.fg : '',
  };
}

/**
 * A step's matrix as a <table>: a row of column labels, then each row's label and its numbers on
 * the step's colour scale (each cell carries data-r, data-c and data-bg, its colour as written).
 * labels: { rows, cols } (text). Options: `attrs`, the table's own attributes (an html``);
 * `caption` (text; none if empty); `above`, header rows before the labels' (html``); `corner`, the
 * top-left cell (html``); `labelAttrs(axis, i)`, a label's extra attributes (html``; axis 'row' or
 * 'col'); `focusable`, every number focusable (tabindex -1); `decimals`; `fixedZero` (0 as 0.0000);
 * `masked`, maskedPositions'.
 * @param {{ data: number[][], kind?: import('./index.js').ValueKind, shape: number[] }} step
 * @param {{ rows: string[], cols: string[] }} labels
 * @param {{ attrs?: Html, caption?: string, above?: Html, corner?: Html, labelAttrs?: (axis: 'row' | 'col', i: number) => Html | null,
 *   focusable?: boolean, decimals?: number, fixedZero?: boolean, masked?: number[][] | null }} [options]
 * @returns {Html}
 */
export function stepTableHtml(
  step,
  labels,
  {
    attrs = html``,
    caption = '',
    above = html``,
    corner = html`<th></th>`,
    labelAttrs = () => null,
    focusable = false,
    decimals = 4,
    fixedZero = false,
    masked = null,
  } = {},
) {
  const scale = colourScale(step.data, step.kind);
  const [nr, nc] = step.shape;
  const tab = focusable && html` tabindex="-1"`;
  const cols = Array.from({ length: nc }, (_, j) => html`<th scope="col"${labelAttrs('col', j)}>${labels.cols[j]}</th>`);
  const rows = step.data.slice(0, nr).map((row, i) => {
    const cells = row.slice(0, nc).map((v, j) => {
      const look = cellLook(v, masked?.[i][j] === -Infinity, scale, decimals, fixedZero);
      const style = look.bg && html` style="background:${look.bg};color:${look.fg}"`;
      return html`<td${tab} data-r="${i}" data-c="${j}"${look.cls && html` class="${look.cls}"`}${style} data-bg="${look.bg}">${look.text}</td>`;
    });
    return html`<tr><th scope="row"${labelAttrs('row', i)}>${labels.rows[i]}</th>${cells}</tr>`;
  });
  const captionHtml = caption && html`<caption class="visually-hidden">${caption}</caption>`;
  return html`<table ${attrs}>${captionHtml}<thead>${above}<tr>${corner}${cols}</tr></thead><tbody>${rows}</tbody></table>`;
}

/**
 * A step's colour bar: its meaning in words ("weight, 0 to 1", "signed, ±max": the catalogue's
 * export.legend.<scale>, in `t`'s language, English by default), its two ends.
 * @param {{ data: number[][], kind?: import('./index.js').ValueKind }} step
 * @param {import('./playground.js').Translator} [t]
 * @returns {Html}
 */
export function legendHtml(step, t = english) {
  const { lo, hi, colours } = colourLegend(step.data, step.kind);
  const meaning = t(`export.legend.${legendScale(step.kind)}`);
  const end = (v) => (lo < 0 && v > 0 ? '+' : '') + formatNumber(v, 2, { fixedZero: true });
  return html`<div class="legend" aria-hidden="true"><span class="scale-meaning">${meaning}:</span> <span>${end(lo)}</span> <span class="ramp" style="background:linear-gradient(90deg, ${colours.join(', ')})"></span> <span>${end(hi)}</span></div>`;
}
