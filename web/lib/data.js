// The trace's numbers as data files: CSV (exact: every number reads back to the same double) and
// JSON. Pure string building.

import { stringify } from './json.js';
import { headOf } from './context.js';
import { exactNumber, numberWord } from './format.js';

function csvField(s) {
  const text = String(s);
  return /[",\n\r]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/**
 * One matrix as CSV, every number exact (shortest round-trip form; "-inf" for masked).
 * `rowLabels`/`colLabels` add a label column and a header row.
 */
export function matrixCsv(data, { rowLabels, colLabels } = {}) {
  const lines = [];
  if (colLabels) lines.push([rowLabels ? '' : null, ...colLabels].filter((x) => x !== null).map(csvField).join(','));
  data.forEach((row, i) => {
    const cells = row.map(exactNumber);
    if (rowLabels) cells.unshift(csvField(rowLabels[i] ?? ''));
    lines.push(cells.join(','));
  });
  return lines.join('\n') + '\n';
}

/** One step as CSV (see matrixCsv). */
export function stepCsv(step, options = {}) {
  return matrixCsv(step.data, options);
}

/** The whole trace as one long CSV: step,head,row,col,value (indices from 0, head empty for none). */
export function traceCsv(trace) {
  const lines = ['step,head,row,col,value'];
  for (const s of trace.steps) {
    const h = headOf(s);
    s.data.forEach((row, i) => row.forEach((v, j) => lines.push(`${s.id},${h ?? ''},${i},${j},${exactNumber(v)}`)));
  }
  return lines.join('\n') + '\n';
}

/** Reads CSV written by matrixCsv (no labels) or traceCsv back into numbers. */
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

/** The trace as JSON text (non-finite numbers as "inf", "-inf", "nan", as the CLI writes). */
export function traceJson(trace, indent = 2) {
  return stringify(trace, indent);
}
