// What every export reads off a problem and its trace: the inputs as numbers, the layout, the
// options; a step's head and file name. No DOM, no wasm.

import { numberWord } from './format.js';
import { english, stepTitle } from './i18n.js';

/** A problem's inputs, in the order views show them (each bias after its weights). */
export const INPUT_KEYS = ['Q', 'K', 'V', 'X', 'X_kv', 'W_Q', 'W_K', 'W_V', 'b_Q', 'b_K', 'b_V', 'W_O', 'b_O'];
/** The inputs that are vectors. */
export const BIAS_KEYS = ['b_Q', 'b_K', 'b_V', 'b_O', 'b_G'];

export function exportError(message) {
  return new Error(`export: ${message}`);
}

// An export's error named by a message id of the catalogues ("error.export-*"), English from en.json.
function exportSaid(id, values) {
  const full = `error.${id}`;
  return Object.assign(new Error(String(english(full, values))), { message_id: full, values });
}

function numberOf(v, name) {
  if (typeof v === 'number') return v;
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'string' && numberWord(v) !== undefined) return numberWord(v);
  throw exportSaid('export-not-number', { name, value: String(JSON.stringify(v)) });
}

/** A matrix input as number[][] (nested arrays, a flat list, or { shape, data }); text is refused. */
export function matrixOf(value, name) {
  if (typeof value === 'string') {
    throw exportSaid('export-text', { name });
  }
  if (value && !Array.isArray(value) && 'shape' in value && 'data' in value) {
    const [r, c] = value.shape;
    const flat = Array.from(value.data, (v) => numberOf(v, name));
    return Array.from({ length: r }, (_, i) => flat.slice(i * c, (i + 1) * c));
  }
  if (!Array.isArray(value) || value.length === 0) throw exportSaid('export-not-matrix', { name });
  const rows = value.every(Array.isArray) ? value : [value];
  return rows.map((row) => Array.from(row, (v) => numberOf(v, name)));
}

function vectorOf(value, name) {
  if (typeof value === 'string') throw exportSaid('export-vector-text', { name });
  const m = Array.isArray(value) && value.length > 0 && value.every(Array.isArray) ? value.flat() : Array.from(value);
  return m.map((v) => numberOf(v, name));
}

/**
 * How the scores are scaled: 'sqrt_dk', 'none', 'multiply' (a number) or 'divide' (text such as
 * "1/sqrt(3)", which the core has read); `text` quotes the option. The factor itself is
 * trace.meta.scale.
 * @returns {import('./index.js').ProblemContext['scale']}
 */
function scaleOf(scale) {
  if (scale === undefined || scale === 'sqrt_dk') return { kind: 'sqrt_dk', text: 'sqrt_dk' };
  if (scale === 'none') return { kind: 'none', text: 'none' };
  return { kind: typeof scale === 'number' ? 'multiply' : 'divide', text: String(scale) };
}

/**
 * What the exports read off a problem: its inputs as number arrays, the layout, which inputs
 * it has and its options. Everything the core computes comes from its trace instead (the mask
 * kind too: a problem with a mask needs its trace).
 * @type {typeof import('./index.js').problemContext}
 */
export function problemContext(problem, trace) {
  if (!problem || typeof problem !== 'object') throw exportSaid('export-problem', {});
  const o = problem.options ?? {};
  const inputs = {};
  for (const k of INPUT_KEYS) {
    if (problem[k] != null) inputs[k] = BIAS_KEYS.includes(k) ? vectorOf(problem[k], k) : matrixOf(problem[k], k);
  }
  const direct = inputs.Q !== undefined;
  const mode = direct ? 'qkv' : inputs.X_kv ? 'cross' : 'self';
  /** @type {import('./index.js').ProblemContext['maskKind']} */
  let maskKind = 'none';
  let mask = null;
  if (o.mask != null) {
    if (!trace?.meta) throw exportSaid('export-mask-trace', {});
    maskKind = trace.meta.mask_kind;
    mask = matrixOf(o.mask, 'options.mask');
  }
  return {
    layout: o.layout === 'columns' ? 'columns' : 'rows',
    mode,
    inputs,
    bias: { Q: 'b_Q' in inputs, K: 'b_K' in inputs, V: 'b_V' in inputs },
    hasWO: 'W_O' in inputs,
    hasBO: 'b_O' in inputs,
    causal: Boolean(o.causal),
    maskKind,
    mask,
    scale: scaleOf(o.scale),
    softcap: Number(o.softcap ?? 0),
  };
}

/** A step's head, or null for steps of no head (concat, output). */
export function headOf(step) {
  return step.head === null || step.head === undefined || step.head < 0 ? null : step.head;
}

/**
 * A step's caption: its title, and its head (from 1) when there are several, e.g. "Scores, head 2",
 * in the language of `t` (the title is the catalogue's for the step's `title_id`).
 * @type {typeof import('./index.js').stepCaption}
 */
export function stepCaption(step, heads, t = english) {
  const h = headOf(step);
  const title = stepTitle(step, t);
  return heads > 1 && h !== null ? t('export.caption.head', { title, head: h + 1 }) : title;
}

/**
 * Labels along `axis` of RoPE's angle table (the step with a "positions" axis): its rows are the
 * positions themselves (meta.rope_positions), "p = 0", ...; its columns the rotated pairs i of θ_i,
 * "i = 0", .... null for any other step.
 * @type {typeof import('./index.js').positionsAxisLabels}
 */
export function positionsAxisLabels(step, axis, meta) {
  if (!step.axes.includes('positions')) return null;
  const n = step.shape[step.axes.indexOf(axis)];
  if (axis === 'positions') return { labels: meta.rope_positions.slice(0, n).map((p) => `p = ${p}`), title: 'position' };
  return { labels: Array.from({ length: n }, (_, i) => `i = ${i}`), title: 'pair' };
}

/**
 * File name for a step export, e.g. "weights.csv", or "weights-head2.csv" when `heads` > 1.
 * @type {typeof import('./index.js').stepFileName}
 */
export function stepFileName(step, ext, heads = 1) {
  const h = headOf(step);
  return `${step.id}${h !== null && heads > 1 ? `-head${h + 1}` : ''}.${ext}`;
}
