// What the walkthroughs of the "In practice" panel share (web/page/practice.js drives them): the
// open walk's state (read from the store), the engine they call and the helpers that draw their numbers.
//
// A walkthrough is one module of web/page/practice/ (softmax.js, decode.js, tiles.js,
// gradients.js, recurrent.js) exporting the same interface, `Walkthrough` below; practice.js
// lists them (their order is the tabs') and does the rest: the tabs, Next/Previous and the keys,
// the position line and the sentence, the fields redrawn only when their key changes, the
// heatmaps painted, the export buttons.
import { setWalk } from '../actions.js';
import { app } from '../app.js';
import { html } from 'attention-explorer/html';
import { cellFmt } from '../format.js';
import { TABLE_MAX_COLS, TABLE_MAX_ROWS, heatmapHtml, tableHtml } from '../steps.js';
import { store } from '../store.js';

/** @typedef {import('attention-explorer/html').Html} Html */

/**
 * @typedef {object} Walkthrough
 * @property {string} title  the tab's name: its message id (web/lib/locales)
 * @property {(engine: any, result: any) => any} compute  what the engine gives for the current
 *   problem (`result`: the page's): `{ positions, ... }` (how many positions Next steps through),
 *   the view the other members read; it throws to say why it cannot
 * @property {(view: any, index: number) => string} where  position `index`, for the position line (in the page's language)
 * @property {(view: any, index: number, labels: any) => string} sentence  what happens there (the
 *   package's narrate.js in the page's language; `labels`: the tokens and options)
 * @property {(view: any) => Html} body  the position's HTML (heatmaps pushed on heatmapSteps)
 * @property {(view: any) => void} [drawn]  after the body is in the page
 * @property {(view: any) => Html} [controls]  the walkthrough's fields
 * @property {() => string} [controlsKey]  what the fields show besides what was typed (default:
 *   the walkthrough's id): they are drawn again only when it changes
 * @property {(error: (Error & import('attention-explorer').InputErrorPlace) | null) => void} [showError]  after
 *   each computation: the fields mark what its error names (null: it computed)
 * @property {() => void} [bind]  the fields' listeners: they dispatch the walk's new settings
 *   (actions.js setWalk, or `restart` below); the panel redraws from the store
 * @property {{ file: string, latex: Function, csv: Function, json: Function, numpy?: Function }} [exporters]
 *   what the walkthrough exports, by the package's builders
 * @property {(e: MouseEvent) => void} [onClick]  a click in the body
 * @property {(e: KeyboardEvent) => void} [onKey]  a key in the body
 */

/**
 * The walkthrough as the store holds it (`ui.walk`: which is open, where, its settings), changed by
 * actions.js's chooseWalk, walkTo and setWalk: the panel redraws when it changes.
 */
export const walkState = () => store.get().ui.walk;

/**
 * What the engine gave for the open walkthrough ({ positions, ... } or { error }) and the drawing's
 * ticket: the view's own, recomputed from the results and the store.
 */
export const current = { view: null, run: 0 };

/** A field changed what the walkthrough computes: its settings (`patch`), from the first position. */
export function restart(patch) {
  store.dispatch(setWalk, { ...patch, index: 0 });
}

/**
 * The engine the walkthroughs call (onlineSoftmax, decode, tiles, gradients, explain of a gradient
 * cell): the page's own, once its walkthroughs module is loaded (on the first walkthrough opened;
 * the first screen does not download it).
 */
export function practiceEngine() {
  return app.engine.loadWalkthroughs();
}

// ---- drawing -----------------------------------------------------------------------------------

const tooLarge = (step) => step.shape[0] > TABLE_MAX_ROWS || step.shape[1] > TABLE_MAX_COLS;

/** A step's numbers as the step cards draw them (steps.js): a table, or a heatmap when too large. */
export function matrixHtml(step, labels, ctx) {
  if (!tooLarge(step)) return tableHtml(step, labels, ctx, null);
  heatmapSteps.push(step);
  return heatmapHtml(step, labels);
}
/** The steps drawn as heatmaps in the HTML being built, in order: painted once it is in the page. */
export const heatmapSteps = [];

/** A matrix in its own scroll box, with a caption (text, or an html``). */
export function matrixBox(step, labels, ctx, caption, cls = '') {
  return html`<figure class="pr-matrix${cls && ` ${cls}`}" data-layout="${ctx.layout}"><figcaption>${caption}</figcaption><div class="matrix-wrap">${matrixHtml(step, labels, ctx)}</div></figure>`;
}

/**
 * A small table of named rows of numbers over labelled columns; `now`: the column to mark. The
 * caption, the column labels and a row's name are text, or html`` (a name with <sup>).
 */
export function recordTable(caption, colLabels, rows, now = -1) {
  const head = colLabels.map((c, j) => html`<th scope="col"${j === now && html` class="pr-now"`}>${c}</th>`);
  const body = rows.map(({ name, id, values }) => {
    const cells = values.map((v, j) => {
      const cls = [j === now ? 'pr-now' : '', v === undefined ? 'pr-later' : ''].filter(Boolean).join(' ');
      return html`<td${cls && html` class="${cls}"`}>${v !== undefined && cellFmt(v, app.result.ctx.decimals)}</td>`;
    });
    return html`<tr data-row="${id}"><th scope="row">${name}</th>${cells}</tr>`;
  });
  return html`<div class="matrix-wrap"><table class="matrix pr-record"><caption>${caption}</caption><thead><tr><th scope="col"></th>${head}</tr></thead><tbody>${body}</tbody></table></div>`;
}

export const names = (list, from, to, word) => Array.from({ length: to - from }, (_, i) => list[from + i] ?? `${word}${from + i + 1}`);
export const features = (n) => Array.from({ length: n }, (_, i) => String(i + 1));
/** A plain matrix as a step-like object for tableHtml. */
export const plain = (id, data, kind = 'signed', title = id) => ({
  id,
  head: 0,
  title,
  kind,
  data,
  shape: [data.length, data[0]?.length ?? 0],
  axes: ['queries', 'features'],
  given: [],
  inputs: [],
});
export const grid = (rows, cols, rowTitle, colTitle) => ({ rows, cols, rowTitle, colTitle });
