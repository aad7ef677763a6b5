// The trace's numbers as data files: CSV (exact: every number reads back to the same double) and
// JSON. Pure string building.

import { stringify } from './json.js';
import { exportError, headOf } from './context.js';
import { exactNumber, numberWord } from './format.js';

function csvField(s) {
  const text = String(s);
  return /[",\n\r]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/**
 * One matrix as CSV, every number exact (shortest round-trip form; "-inf" for masked).
 * `rowLabels`/`colLabels` add a label column and a header row.
 * @type {typeof import('./index.js').matrixCsv}
 */
export function matrixCsv(data, { rowLabels, colLabels } = {}) {
  const lines = [];
  if (colLabels)
    lines.push(
      [rowLabels ? '' : null, ...colLabels]
        .filter((x) => x !== null)
        .map(csvField)
        .join(','),
    );
  data.forEach((row, i) => {
    const cells = row.map(exactNumber);
    if (rowLabels) cells.unshift(csvField(rowLabels[i] ?? ''));
    lines.push(cells.join(','));
  });
  return lines.join('\n') + '\n';
}

/**
 * One step as CSV (see matrixCsv).
 * @type {typeof import('./index.js').stepCsv}
 */
export function stepCsv(step, options = {}) {
  return matrixCsv(step.data, options);
}

/**
 * The whole trace as one long CSV: step,head,row,col,value (indices from 0, head empty for none).
 * @type {typeof import('./index.js').traceCsv}
 */
export function traceCsv(trace) {
  const lines = ['step,head,row,col,value'];
  for (const s of trace.steps) {
    const h = headOf(s);
    s.data.forEach((row, i) => row.forEach((v, j) => lines.push(`${s.id},${h ?? ''},${i},${j},${exactNumber(v)}`)));
  }
  return lines.join('\n') + '\n';
}

/** CSV lines of tidy rows: `key` (the columns before quantity) and a quantity's numbers. */
function tidyRows(lines, key, quantity, values) {
  const push = (row, col, v) => lines.push(`${key}${quantity},${row},${col},${exactNumber(v)}`);
  if (!Array.isArray(values)) push('', '', values);
  else values.forEach((x, i) => (Array.isArray(x) ? x.forEach((v, j) => push(i, j, v)) : push(i, '', x)));
}

/**
 * engine.decode's result as one long CSV, a row per number: t,head,quantity,row,col,value.
 * `scores` and `weights` (per head) and `output` (head empty) of token t are row t of the whole
 * matrix (col: the key, or the output's feature), so pivoting a quantity gives causal attention's
 * matrix, queries down; `cache_rows`, `flops_cached`, `flops_full` and `difference` are one number
 * per token (head, row and col empty). Numbers exact, as traceCsv writes them.
 * @type {typeof import('./index.js').decodeCsv}
 */
export function decodeCsv(decoding) {
  if (!Array.isArray(decoding?.steps) || !decoding.steps.every((s) => 'cache_rows' in s)) {
    throw exportError("decodeCsv takes engine.decode()'s result: an object whose steps have t, cache_rows, scores, weights, output");
  }
  const lines = ['t,head,quantity,row,col,value'];
  for (const s of decoding.steps) {
    for (const quantity of ['scores', 'weights']) {
      s[quantity].forEach((row, h) => row.forEach((v, j) => lines.push(`${s.t},${h},${quantity},${s.t},${j},${exactNumber(v)}`)));
    }
    s.output.forEach((v, c) => lines.push(`${s.t},,output,${s.t},${c},${exactNumber(v)}`));
    for (const quantity of ['cache_rows', 'flops_cached', 'flops_full', 'difference']) tidyRows(lines, `${s.t},,`, quantity, s[quantity]);
  }
  return lines.join('\n') + '\n';
}

/** A tile's quantities, in the order the algorithm computes them. */
const TILE_QUANTITIES = ['scores', 'm_before', 'm_after', 'rescale', 'l_before', 'l_after', 'partial_before', 'partial_after'];

/**
 * engine.tiles' result as one long CSV, a row per number: tile,head,q_block,k_block,quantity,row,col,value
 * (tile: its place in the order visited, from 0). Per tile `skipped` (1 or 0), then its numbers
 * with row and col as the tile's arrays hold them (from 0 within the tile; in the columns layout
 * `scores` and the partial outputs are transposed, as in the result): `scores`, `partial_before`,
 * `partial_after` a row and a column, `m_before`, `m_after`, `rescale`, `l_before`, `l_after` a
 * row (the tile's query i). Then, with the tile columns empty, `output` (row and col of the
 * output, in the problem's layout), `max_difference`, `bytes_standard`, `bytes_flash` and
 * `element_bytes`.
 * @type {typeof import('./index.js').tilesCsv}
 */
export function tilesCsv(tiles) {
  if (!Array.isArray(tiles?.tiles) || !Array.isArray(tiles.output)) {
    throw exportError("tilesCsv takes engine.tiles()'s result: an object with tiles and output");
  }
  const lines = ['tile,head,q_block,k_block,quantity,row,col,value'];
  tiles.tiles.forEach((t, i) => {
    const key = `${i},${t.head},${t.q_block},${t.k_block},`;
    tidyRows(lines, key, 'skipped', t.skipped ? 1 : 0);
    for (const quantity of TILE_QUANTITIES) tidyRows(lines, key, quantity, t[quantity]);
  });
  tidyRows(lines, ',,,,', 'output', tiles.output);
  for (const quantity of ['max_difference', 'bytes_standard', 'bytes_flash', 'element_bytes'])
    tidyRows(lines, ',,,,', quantity, tiles[quantity]);
  return lines.join('\n') + '\n';
}

/**
 * Reads CSV written by matrixCsv (no labels) or traceCsv back into numbers.
 * @type {typeof import('./index.js').parseCsv}
 */
export function parseCsv(text) {
  const lines = String(text).trim().split(/\r?\n/);
  const num = (s) => numberWord(s) ?? Number(s);
  if (lines[0] === 'step,head,row,col,value') {
    const steps = [];
    const index = new Map();
    for (const line of lines.slice(1)) {
      const [id, head, r, c, value] = line.split(',');
      const key = `${id}:${head}`;
      let s = index.get(key);
      if (!s) {
        s = { id, head: head === '' ? null : Number(head), data: [] };
        index.set(key, s);
        steps.push(s);
      }
      (s.data[Number(r)] ??= [])[Number(c)] = num(value);
    }
    for (const s of steps) s.shape = [s.data.length, s.data[0].length];
    return { steps };
  }
  return lines.map((line) => line.split(',').map(num));
}

/**
 * The trace as JSON text (non-finite numbers as "inf", "-inf", "nan", as the CLI writes).
 * @type {typeof import('./index.js').traceJson}
 */
export function traceJson(trace, indent = 2) {
  return stringify(trace, indent);
}
