// Exports of a problem and its trace: LaTeX, CSV, JSON, a NumPy and a PyTorch script that
// rebuild the same numbers, and heatmaps as SVG. Pure string building: no DOM, no wasm, no
// dependencies. Every number written comes from the trace (or, for the scripts, from the
// problem's inputs); the scripts redo the maths in Python so a reader can check the page.

import { stringify } from './json.js';
import { colourScale } from './colours.js';

const MATRIX_KEYS = ['Q', 'K', 'V', 'X', 'X_kv', 'W_Q', 'W_K', 'W_V', 'W_O'];
const BIAS_KEYS = ['b_Q', 'b_K', 'b_V', 'b_O'];
const NON_FINITE = { inf: Infinity, '+inf': Infinity, infinity: Infinity, '-inf': -Infinity, '-infinity': -Infinity, nan: NaN };

// ---- reading a problem ---------------------------------------------------------------------

function exportError(message) {
  return new Error(`export: ${message}`);
}

function numberOf(v, name) {
  if (typeof v === 'number') return v;
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'string' && NON_FINITE[v.trim().toLowerCase()] !== undefined) return NON_FINITE[v.trim().toLowerCase()];
  throw exportError(`${name} holds ${JSON.stringify(v)}: expected numbers`);
}

/** A matrix input as number[][] (nested arrays, a flat list, or { shape, data }). */
function matrixOf(value, name) {
  if (typeof value === 'string') {
    throw exportError(`${name} is text: parse it first (engine.parseMatrix) so the export has numbers`);
  }
  if (value && !Array.isArray(value) && 'shape' in value && 'data' in value) {
    const [r, c] = value.shape;
    const flat = Array.from(value.data, (v) => numberOf(v, name));
    return Array.from({ length: r }, (_, i) => flat.slice(i * c, (i + 1) * c));
  }
  if (!Array.isArray(value) || value.length === 0) throw exportError(`${name} is not a matrix`);
  const rows = value.every(Array.isArray) ? value : [value];
  return rows.map((row) => Array.from(row, (v) => numberOf(v, name)));
}

function vectorOf(value, name) {
  if (typeof value === 'string') throw exportError(`${name} is text: parse it first so the export has numbers`);
  const m = Array.isArray(value) && value.length > 0 && value.every(Array.isArray) ? value.flat() : Array.from(value);
  return m.map((v) => numberOf(v, name));
}

function isBooleanMatrix(value) {
  return Array.isArray(value) && value.length > 0 && [value].flat(2).every((v) => typeof v === 'boolean');
}

function scaleOf(scale) {
  if (scale === undefined || scale === 'sqrt_dk') return { kind: 'sqrt_dk' };
  if (scale === 'none') return { kind: 'none' };
  if (typeof scale === 'number') return { kind: 'multiply', value: scale, text: String(scale) };
  const text = String(scale).replace(/\s+/g, '');
  const root = /^1\/sqrt\(([0-9.eE+-]+)\)$/.exec(text);
  if (root) return { kind: 'divide', root: Number(root[1]), value: Math.sqrt(Number(root[1])), text };
  const plain = /^1\/([0-9.eE+-]+)$/.exec(text);
  if (plain) return { kind: 'divide', value: Number(plain[1]), text };
  throw exportError(`options.scale ${JSON.stringify(scale)} is not understood`);
}

/**
 * What the exports need to know about a problem (and its trace, when given): layout, mode,
 * options, sizes. Inputs become number arrays.
 */
export function problemContext(problem, trace) {
  if (!problem || typeof problem !== 'object') throw exportError('the problem must be an object');
  const o = problem.options ?? {};
  const inputs = {};
  for (const k of MATRIX_KEYS) if (problem[k] != null) inputs[k] = matrixOf(problem[k], k);
  for (const k of BIAS_KEYS) if (problem[k] != null) inputs[k] = vectorOf(problem[k], k);
  const direct = inputs.Q !== undefined;
  const mode = direct ? 'qkv' : inputs.X_kv ? 'cross' : 'self';
  let maskKind = 'none';
  let mask = null;
  if (o.mask != null) {
    maskKind = isBooleanMatrix(o.mask) ? 'keep' : 'additive';
    mask = matrixOf(o.mask, 'options.mask');
  }
  const heads = o.heads ?? 1;
  const ctx = {
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
    heads,
    kvHeads: o.kv_heads ?? heads,
    precision: o.precision === 'float32' ? 'float32' : 'float64',
  };
  if (trace?.meta) Object.assign(ctx, { d_k: trace.meta.d_k, d_v: trace.meta.d_v, queries: trace.meta.queries, keys: trace.meta.keys });
  return ctx;
}

// ---- numbers as text -----------------------------------------------------------------------

/** A number in TeX with `decimals` places (−∞ as -\infty). */
export function texNumber(x, decimals = 4) {
  if (x === -Infinity) return '-\\infty';
  if (x === Infinity) return '\\infty';
  if (Number.isNaN(x)) return '\\text{NaN}';
  if (x === 0) return '0';
  const ax = Math.abs(x);
  if (ax < 10 ** -decimals / 2 || ax >= 1e7) {
    const [m, e] = x.toExponential(Math.max(1, Math.min(decimals, 6) - 1)).split('e');
    return `${m} \\times 10^{${Number(e)}}`;
  }
  const s = x.toFixed(decimals);
  return /^-0\.?0*$/.test(s) ? s.slice(1) : s;
}

/** Shortest text that reads back to the same double; "inf", "-inf", "nan" otherwise. */
function exact(x) {
  if (Number.isFinite(x)) return String(x);
  return Number.isNaN(x) ? 'nan' : x > 0 ? 'inf' : '-inf';
}

// ---- step names and formulas ---------------------------------------------------------------

function headOf(step) {
  return step.head === null || step.head === undefined || step.head < 0 ? null : step.head;
}

/** The symbol of a step in TeX, e.g. "\tilde S^{(2)}" for head 2's scaled scores. */
export function stepSymbol(step, ctx) {
  const h = headOf(step);
  const sup = ctx.heads > 1 && h !== null ? `^{(${h + 1})}` : '';
  switch (step.id) {
    case 'Q': case 'K': case 'V': return `${step.id}${sup}`;
    case 'scores': return `S${sup}`;
    case 'scaled': return `\\tilde S${sup}`;
    case 'softcapped': return `\\hat S${sup}`;
    case 'masked': return `\\bar S${sup}`;
    case 'weights': return `A${sup}`;
    case 'head_output': return `\\text{head}_{${(h ?? 0) + 1}}`;
    case 'concat': return 'H';
    case 'output': return 'O';
    default: return `\\text{${step.id}}`;
  }
}

/** The formula of a step in TeX (format 'tex') or as plain Unicode text (format 'text'). */
export function stepFormula(step, ctx, format = 'tex') {
  const cols = ctx.layout === 'columns';
  const T = format === 'tex';
  const h = headOf(step) ?? 0;
  const group = ctx.heads / ctx.kvHeads;
  const sup = ctx.heads > 1 ? (T ? `^{(${h + 1})}` : `⁽${String(h + 1).replace(/\d/g, (d) => '⁰¹²³⁴⁵⁶⁷⁸⁹'[d])}⁾`) : '';
  const sub = (base, s) => (T ? `${base}_{${s}}` : `${base}_${s}`);
  const Kt = ctx.heads > 1 ? (T ? `K^{(${h + 1})\\top}` : `K${sup}ᵀ`) : (T ? 'K^\\top' : 'Kᵀ');
  const QK = cols ? (T ? `${Kt} Q${sup}` : `${Kt}·Q${sup}`) : (T ? `Q${sup}${Kt}` : `Q${sup}·${Kt}`);
  const Stilde = T ? '\\tilde S' : 'S̃';
  const dk = ctx.d_k ?? '?';
  const proj = (name) => {
    if (ctx.mode === 'qkv') {
      if (ctx.heads === 1) return T ? `${name} \\;\\text{(given)}` : `${name} (given)`;
      const w = name === 'V' ? ctx.d_v : ctx.d_k;
      const g = name === 'Q' ? h : Math.floor(h / group);
      const range = `${g * w + 1}..${(g + 1) * w}`;
      if (T) return cols ? `${name}${sup} = ${name}_{[${range},\\,:]}` : `${name}${sup} = ${name}_{[:,\\,${range}]}`;
      return cols ? `${name}${sup} = ${name}[${range}, :]` : `${name}${sup} = ${name}[:, ${range}]`;
    }
    const input = name === 'Q' || ctx.mode === 'self' ? 'X' : sub('X', 'kv');
    const W = (cols ? sub(T ? '\\Omega' : 'Ω', name) : sub('W', name)) + sup;
    const b = ctx.bias[name] ? ` + ${cols ? sub(T ? '\\beta' : 'β', name) : sub('b', name)}${sup}` : '';
    const dot = T ? '\\,' : '·';
    return cols ? `${name}${sup} = ${W}${dot}${input}${b}` : `${name}${sup} = ${input}${dot}${W}${b}`;
  };
  const prev = () => {
    // What the softmax reads: the last of scaled, softcapped, masked that exists.
    if (ctx.causal || ctx.maskKind !== 'none') return T ? '\\bar S' : 'S̄';
    if (ctx.softcap > 0) return T ? '\\hat S' : 'Ŝ';
    return Stilde;
  };
  switch (step.id) {
    case 'Q': case 'K': case 'V': return proj(step.id);
    case 'scores': return `S${sup} = ${QK}`;
    case 'scaled': {
      const s = ctx.scale;
      const S = `S${sup}`, St = `${Stilde}${sup}`;
      if (s.kind === 'sqrt_dk') return T ? `${St} = \\frac{${S}}{\\sqrt{d_k}} = \\frac{${S}}{\\sqrt{${dk}}}` : `${St} = ${S} / √d_k = ${S} / √${dk}`;
      if (s.kind === 'none') return T ? `${St} = ${S} \\quad\\text{(not scaled)}` : `${St} = ${S} (not scaled)`;
      if (s.kind === 'divide') {
        const by = s.root !== undefined ? (T ? `\\sqrt{${s.root}}` : `√${s.root}`) : String(s.value);
        return T ? `${St} = \\frac{${S}}{${by}}` : `${St} = ${S} / ${by}`;
      }
      return T ? `${St} = ${s.value}\\,${S}` : `${St} = ${s.value}·${S}`;
    }
    case 'softcapped':
      return T ? `\\hat S${sup} = c\\,\\tanh(\\tilde S${sup} / c),\\quad c = ${ctx.softcap}` : `Ŝ${sup} = c·tanh(S̃${sup} / c), c = ${ctx.softcap}`;
    case 'masked': {
      const input = ctx.softcap > 0 ? (T ? '\\hat S' : 'Ŝ') : Stilde;
      const parts = [];
      if (ctx.causal) parts.push(T ? (cols ? 'M_{ij} = -\\infty \\text{ for key } i > \\text{query } j' : 'M_{ij} = -\\infty \\text{ for } j > i') : (cols ? 'M_ij = −∞ for key i > query j' : 'M_ij = −∞ for j > i'));
      if (ctx.maskKind === 'keep') parts.push(T ? '\\text{hidden keys: } -\\infty' : 'hidden keys: −∞');
      if (ctx.maskKind === 'additive') parts.push(T ? '\\text{your } M' : 'your M');
      return T ? `\\bar S${sup} = ${input}${sup} + M,\\quad ${parts.join(',\\; ')}` : `S̄${sup} = ${input}${sup} + M, ${parts.join(', ')}`;
    }
    case 'weights': {
      const x = prev();
      if (T) return `A${sup} = \\operatorname{softmax}(${x}${sup}) \\quad\\text{(${cols ? 'down each column' : 'along each row'})}`;
      return `A${sup} = softmax(${x}${sup}) (${cols ? 'down each column' : 'along each row'})`;
    }
    case 'head_output': return T ? `\\text{head}_{${h + 1}} = ${cols ? `V${sup} A${sup}` : `A${sup} V${sup}`}` : `head${h + 1} = ${cols ? `V${sup}·A${sup}` : `A${sup}·V${sup}`}`;
    case 'concat': {
      const list = Array.from({ length: ctx.heads }, (_, i) => (T ? `\\text{head}_{${i + 1}}` : `head${i + 1}`));
      if (T) return cols ? `H = \\begin{bmatrix} ${list.join(' \\\\ ')} \\end{bmatrix}` : `H = \\left[\\, ${list.join(' \\mid ')} \\,\\right]`;
      return `H = [${list.join(cols ? ' ; ' : ' | ')}]`;
    }
    case 'output': {
      if (!ctx.hasWO) return T ? `O = ${cols ? 'V A' : 'A V'}` : `O = ${cols ? 'V·A' : 'A·V'}`;
      const input = ctx.heads > 1 ? 'H' : (T ? '\\text{head}_1' : 'head1');
      const b = ctx.hasBO ? ` + ${cols ? sub(T ? '\\beta' : 'β', 'O') : sub('b', 'O')}` : '';
      const W = cols ? sub(T ? '\\Omega' : 'Ω', 'O') : sub('W', 'O');
      return cols ? `O = ${W}${T ? '\\,' : '·'}${input}${b}` : `O = ${input}${T ? '\\,' : '·'}${W}${b}`;
    }
    default: return step.id;
  }
}

// ---- LaTeX ---------------------------------------------------------------------------------

/** A matrix as a TeX bmatrix with `decimals` places. */
export function matrixLatex(data, { decimals = 4, max = 16 } = {}) {
  // Larger than max × max: the first rows/columns, \vdots/\cdots/\ddots, and the last one (as on
  // a slide; LaTeX's bmatrix also stops at MaxMatrixCols).
  const keep = (n) => (n <= max ? [...Array(n).keys()] : [...[...Array(max - 2).keys()], -1, n - 1]);
  const nr = data.length, nc = data[0]?.length ?? 0;
  const cols = keep(nc);
  const rows = keep(nr).map((i) => (i < 0
    ? cols.map((j) => (j < 0 ? '\\ddots' : '\\vdots')).join(' & ')
    : cols.map((j) => (j < 0 ? '\\cdots' : texNumber(data[i][j], decimals))).join(' & ')));
  return `\\begin{bmatrix}\n${rows.join(' \\\\\n')}\n\\end{bmatrix}`;
}

/** One step as "symbol = bmatrix" (TeX math, no delimiters). */
export function stepLatex(step, ctx, { decimals = 4, max = 16 } = {}) {
  return `${stepSymbol(step, ctx)} = ${matrixLatex(step.data, { decimals, max })}`;
}

function stepTitle(step, ctx) {
  const h = headOf(step);
  return `${step.title || step.id}${ctx.heads > 1 && h !== null ? `, head ${h + 1}` : ''}`;
}

const TEXT_ESCAPES = { '\\': '\\textbackslash{}', '{': '\\{', '}': '\\}', $: '\\$', '&': '\\&', '#': '\\#', '^': '\\^{}', _: '\\_', '%': '\\%', '~': '\\~{}' };
function texText(s) {
  return String(s)
    .replace(/[\\{}$&#^_%~]/g, (c) => TEXT_ESCAPES[c])
    .replace(/·/g, '$\\cdot$').replace(/ᵀ/g, '$^\\top$').replace(/√/g, '$\\surd$');
}

/**
 * The whole worked solution as LaTeX: each step's formula and matrix in display math
 * (`\[ ... \]`). With `standalone`, a complete document (amsmath) that pdflatex compiles.
 */
export function solutionLatex(problem, trace, { decimals = 4, max = 16, standalone = false, title = 'Scaled dot-product attention, step by step' } = {}) {
  const ctx = problemContext(problem, trace);
  const parts = [];
  const m = trace.meta;
  parts.push(`% ${m.queries} queries, ${m.keys} keys, d_k = ${m.d_k}, d_v = ${m.d_v}, ${m.heads} head(s), ${ctx.layout} layout, ${m.precision}`);
  const given = Object.entries(ctx.inputs);
  if (given.length) {
    parts.push('\\paragraph{Given}');
    for (const [name, value] of given) {
      const isVector = BIAS_KEYS.includes(name);
      const sym = name === 'X_kv' ? 'X_{kv}' : /^[Wb]_/.test(name) ? `${ctx.layout === 'columns' ? (name[0] === 'W' ? '\\Omega' : '\\beta') : name[0]}_${name.slice(2)}` : name;
      parts.push(`\\[ ${sym} = ${matrixLatex(isVector ? [value] : value, { decimals, max })} \\]`);
    }
    if (ctx.maskKind === 'additive') parts.push(`\\[ M = ${matrixLatex(ctx.mask, { decimals, max })} \\]`);
  }
  trace.steps.forEach((step, i) => {
    parts.push(`\\paragraph{${i + 1}. ${texText(stepTitle(step, ctx))}}`);
    parts.push(`\\[ ${stepFormula(step, ctx, 'tex')} \\]`);
    parts.push(`\\[ ${stepLatex(step, ctx, { decimals, max })} \\]`);
  });
  for (const w of trace.warnings ?? []) parts.push(`\\paragraph{Note} ${texText(w)}.`);
  const body = parts.join('\n\n');
  if (!standalone) return body + '\n';
  return [
    '\\documentclass{article}',
    '\\usepackage{amsmath}',
    '\\usepackage[margin=2cm]{geometry}',
    '\\setcounter{MaxMatrixCols}{64}',
    `\\title{${texText(title)}}`,
    '\\date{}',
    '\\begin{document}',
    '\\maketitle',
    body,
    '\\end{document}',
    '',
  ].join('\n');
}

/** "t1 + t2 + ... " with at most `max` terms written out (the rest as \cdots). */
function termsTex(left, right, d, max) {
  const term = (k) => `(${texNumber(left[k], d)})(${texNumber(right[k], d)})`;
  const n = left.length;
  if (n <= max) return left.map((_, k) => term(k)).join(' + ');
  const head = Array.from({ length: max - 1 }, (_, k) => term(k));
  return `${head.join(' + ')} + \\cdots + ${term(n - 1)}`;
}

/**
 * The worked calculation of one cell (an engine.explain() result) as a TeX `aligned` block:
 * the definition, the numbers filled in, the value. `problem` gives the layout and names.
 */
export function cellLatex(e, problem, { decimals = 4, maxTerms = 8 } = {}) {
  const ctx = problemContext(problem);
  const d = decimals;
  const cols = ctx.layout === 'columns';
  const i = e.row + 1, j = e.col + 1;
  const headStep = { id: e.step, head: e.head };
  const sym = stepSymbol(headStep, ctx);
  const cell = `${/[}]$|^\\text/.test(sym) || sym.includes('^') ? `(${sym})` : sym}_{${i},${j}}`;
  const v = texNumber(e.value, d);
  const lines = [];
  const sup = ctx.heads > 1 && e.head !== null && e.head >= 0 ? `^{(${e.head + 1})}` : '';
  switch (e.kind) {
    case 'input':
      return `\\begin{aligned} ${cell} &= ${v} \\quad\\text{(given)} \\end{aligned}`;
    case 'projection': {
      const isOut = e.step === 'output';
      const inName = isOut ? (ctx.heads > 1 ? 'H' : '\\text{head}_1') : e.step === 'Q' || ctx.mode === 'self' ? 'X' : 'X_{kv}';
      const W = isOut ? (cols ? '\\Omega_O' : 'W_O') : `${cols ? `\\Omega_${e.step}` : `W_${e.step}`}${sup}`;
      const b = isOut ? (cols ? '\\beta_O' : 'b_O') : `${cols ? `\\beta_${e.step}` : `b_${e.step}`}${sup}`;
      const bias = e.has_bias ? ` + ${b}` : '';
      // Rows: token i times column j of W. Columns: row i of Ω times token j.
      const X = /[_^]/.test(inName) ? `{${inName}}` : inName;
      const def = cols ? `\\sum_m (${W})_{${i},m}\\,${X}_{m,${j}}${bias ? ` + (${b})_{${i}}` : ''}`
        : `\\sum_m ${X}_{${i},m}\\,(${W})_{m,${j}}${bias ? ` + (${b})_{${j}}` : ''}`;
      const numbers = cols ? termsTex(e.right, e.left, d, maxTerms) : termsTex(e.left, e.right, d, maxTerms);
      lines.push(def, `${numbers}${e.has_bias ? ` + ${texNumber(e.bias, d)}` : ''}`, v);
      break;
    }
    case 'dot': {
      const q = cols ? j : i, k = cols ? i : j;
      lines.push(`\\sum_m Q${sup}_{${q},m}\\,K${sup}_{${k},m}`, termsTex(e.left, e.right, d, maxTerms), v);
      break;
    }
    case 'scale':
      if (e.divisor) {
        const by = ctx.scale.kind === 'sqrt_dk' ? `\\sqrt{${ctx.d_k ?? Math.round(e.divisor * e.divisor)}}` : ctx.scale.root !== undefined ? `\\sqrt{${ctx.scale.root}}` : texNumber(e.divisor, d);
        lines.push(`\\frac{S${sup}_{${i},${j}}}{${by}}`, `\\frac{${texNumber(e.input, d)}}{${texNumber(e.divisor, d)}}`, v);
      } else {
        lines.push(`${texNumber(e.factor, d)} \\cdot S${sup}_{${i},${j}}`, `${texNumber(e.factor, d)} \\cdot ${texNumber(e.input, d)}`, v);
      }
      break;
    case 'softcap':
      lines.push(`c\\,\\tanh\\!\\left(\\tilde S${sup}_{${i},${j}} / c\\right)`, `${texNumber(e.factor, d)}\\,\\tanh\\!\\left(${texNumber(e.input, d)} / ${texNumber(e.factor, d)}\\right)`, v);
      break;
    case 'mask':
      lines.push(`x_{${i},${j}} + M_{${i},${j}}`, `${texNumber(e.input, d)} + (${texNumber(e.additive, d)})`, v);
      break;
    case 'softmax': {
      const along = cols ? 'i\'' : 'j\'';
      const pos = cols ? e.row : e.col;
      if (e.max === -Infinity) {
        lines.push('0 \\quad\\text{(every key of this query is masked)}');
        break;
      }
      const shifted = e.shifted[pos];
      const sumTerms = e.exps.length <= maxTerms ? e.exps.map((x) => texNumber(x, d)).join(' + ')
        : `${e.exps.slice(0, maxTerms - 1).map((x) => texNumber(x, d)).join(' + ')} + \\cdots + ${texNumber(e.exps[e.exps.length - 1], d)}`;
      lines.push(
        `\\frac{e^{x_{${i},${j}} - m}}{\\sum_{${along}} e^{x_{${cols ? `${along},${j}` : `${i},${along}`}} - m}},\\quad m = \\max = ${texNumber(e.max, d)}`,
        `\\frac{e^{${texNumber(shifted, d)}}}{${sumTerms}}`,
        `\\frac{${texNumber(e.exps[pos], d)}}{${texNumber(e.exp_sum, d)}}`,
        v,
      );
      break;
    }
    case 'weighted_sum': {
      const def = cols ? `\\sum_k V${sup}_{${i},k}\\,A${sup}_{k,${j}}` : `\\sum_k A${sup}_{${i},k}\\,V${sup}_{k,${j}}`;
      lines.push(def, cols ? termsTex(e.right, e.left, d, maxTerms) : termsTex(e.left, e.right, d, maxTerms), v);
      break;
    }
    case 'concat': {
      const h = (e.source_head ?? 0) + 1;
      const c = e.source_col + 1;
      lines.push(cols ? `(\\text{head}_{${h}})_{${c},${j}}` : `(\\text{head}_{${h}})_{${i},${c}}`, v);
      break;
    }
    default:
      lines.push(v);
  }
  return `\\begin{aligned}\n${cell} &= ${lines.join(' \\\\\n  &= ')}\n\\end{aligned}`;
}

// ---- CSV -----------------------------------------------------------------------------------

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
    const cells = row.map(exact);
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
    s.data.forEach((row, i) => row.forEach((v, j) => lines.push(`${s.id},${h ?? ''},${i},${j},${exact(v)}`)));
  }
  return lines.join('\n') + '\n';
}

/** Reads CSV written by matrixCsv (no labels) or traceCsv back into numbers. */
export function parseCsv(text) {
  const lines = String(text).trim().split(/\r?\n/);
  const num = (s) => {
    const t = s.trim().toLowerCase();
    return NON_FINITE[t] ?? Number(t);
  };
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

// ---- JSON ----------------------------------------------------------------------------------

/** The trace as JSON text (non-finite numbers as "inf", "-inf", "nan", as the CLI writes). */
export function traceJson(trace, indent = 2) {
  return stringify(trace, indent);
}

// ---- Python scripts ------------------------------------------------------------------------

function pyNumber(x) {
  if (Number.isNaN(x)) return 'np.nan';
  if (x === Infinity) return 'np.inf';
  if (x === -Infinity) return '-np.inf';
  const s = String(x);
  return /^-?\d+$/.test(s) ? `${s}.0` : s;
}

function pyMatrix(m, indent = '    ') {
  if (!Array.isArray(m[0])) return `[${m.map(pyNumber).join(', ')}]`;
  return `[\n${m.map((row) => `${indent}[${row.map(pyNumber).join(', ')}],`).join('\n')}\n]`;
}

function pyBool(m, indent = '    ') {
  return `[\n${m.map((row) => `${indent}[${row.map((v) => (v ? 'True' : 'False')).join(', ')}],`).join('\n')}\n]`;
}

/** Shared Python: the inputs as arrays, in the working precision. */
function pythonInputs(ctx, lib) {
  const lines = [];
  const arr = lib === 'torch' ? (m) => `torch.tensor(${pyMatrix(m).replace(/np\.inf/g, 'math.inf').replace(/np\.nan/g, 'math.nan')}, dtype=dt)` : (m) => `np.array(${pyMatrix(m)}, dtype=dt)`;
  for (const [name, value] of Object.entries(ctx.inputs)) lines.push(`${name} = ${arr(value)}`);
  return lines;
}

function scaleLines(ctx, lib) {
  const s = ctx.scale;
  const sqrt = lib === 'torch' ? 'math.sqrt' : 'np.sqrt';
  switch (s.kind) {
    case 'sqrt_dk': return lib === 'torch'
      ? ['divisor = torch.sqrt(torch.tensor(d_k, dtype=dt))  # sqrt(d_k) in the working precision']
      : ['divisor = np.sqrt(dt(d_k))  # sqrt(d_k) in the working precision'];
    case 'none': return ['factor = 1.0  # not scaled'];
    case 'divide': return s.root !== undefined
      ? [`divisor = ${lib === 'torch' ? `torch.tensor(${sqrt}(${pyNumber(s.root)}), dtype=dt)` : `dt(${sqrt}(${pyNumber(s.root)}))`}  # scale ${s.text}`]
      : [`divisor = ${lib === 'torch' ? `torch.tensor(${pyNumber(s.value)}, dtype=dt)` : `dt(${pyNumber(s.value)})`}  # scale ${s.text}`];
    default: return [`factor = ${lib === 'torch' ? `torch.tensor(${pyNumber(s.value)}, dtype=dt)` : `dt(${pyNumber(s.value)})`}  # scale ${s.text}`];
  }
}

function maskLines(ctx, lib) {
  const lines = [];
  const cols = ctx.layout === 'columns';
  const np = lib !== 'torch';
  const shape = cols ? '(S, L)' : '(L, S)';
  if (!ctx.causal && ctx.maskKind === 'none') return lines;
  lines.push(`# Additive mask, ${cols ? 'keys x queries' : 'queries x keys'}: 0 keeps a score, -inf hides it.`);
  lines.push(np ? `M = np.zeros(${shape}, dtype=dt)` : `M = torch.zeros(${shape}, dtype=dt)`);
  if (ctx.maskKind === 'keep') {
    lines.push(`keep = ${np ? 'np.array' : 'torch.tensor'}(${pyBool(ctx.mask)})  # True: the query sees the key`);
    lines.push(np ? 'M[~keep] = -np.inf' : 'M[~keep] = -math.inf');
  } else if (ctx.maskKind === 'additive') {
    lines.push(`M = M + ${np ? 'np.array' : 'torch.tensor'}(${pyMatrix(ctx.mask).replace(/np\./g, np ? 'np.' : 'math.')}, dtype=dt)`);
  }
  if (ctx.causal) {
    if (np) lines.push(cols ? 'M[np.tril(np.ones((S, L), dtype=bool), k=-1)] = -np.inf  # causal: key i > query j' : 'M[np.triu(np.ones((L, S), dtype=bool), k=1)] = -np.inf  # causal: key j > query i');
    else lines.push(cols ? 'M[torch.ones(S, L, dtype=torch.bool).tril(-1)] = -math.inf  # causal: key i > query j' : 'M[torch.ones(L, S, dtype=torch.bool).triu(1)] = -math.inf  # causal: key j > query i');
  }
  return lines;
}

function headerComment(ctx, trace, lib, recipe) {
  const m = trace?.meta;
  const lines = [
    `# Scaled dot-product attention, every step, in ${lib === 'torch' ? 'PyTorch' : 'NumPy'}.`,
    '# Generated by attention-explorer: it rebuilds the numbers the explorer shows.',
    `# Layout: ${ctx.layout === 'columns' ? 'tokens are columns (Q = Omega_Q X + beta_Q)' : 'tokens are rows (Q = X W_Q + b_Q)'}; precision: ${ctx.precision}.`,
  ];
  if (m) lines.push(`# ${m.queries} queries, ${m.keys} keys, d_k = ${m.d_k}, d_v = ${m.d_v}, heads = ${m.heads}, kv_heads = ${m.kv_heads}.`);
  if (recipe) {
    lines.push('# The inputs below were drawn with:');
    for (const l of String(recipe).split('\n')) lines.push(`#   ${l}`);
  }
  lines.push(`# Run: python3 ${lib === 'torch' ? 'attention_torch.py' : 'attention_numpy.py'}    (--json prints every step as JSON)`);
  return lines;
}

/**
 * The start of the per-head loop, the same in the NumPy and PyTorch scripts: slice the head's
 * Q, K, V (contiguous blocks; GQA reads key/value head g), the scores and their scaling.
 */
function headLoopStart(ctx, cols) {
  const sl = (name, w, idx) => (cols ? `${name}[${idx} * ${w}:(${idx} + 1) * ${w}, :]` : `${name}[:, ${idx} * ${w}:(${idx} + 1) * ${w}]`);
  return [
    'for h in range(heads):',
    '    g = h // (heads // kv_heads)  # the key/value head this query head reads',
    `    Qh = ${sl('Q', 'd_k', 'h')}`,
    `    Kh = ${sl('K', 'd_k', 'g')}`,
    `    Vh = ${sl('V', 'd_v', 'g')}`,
    cols ? '    scores = Kh.T @ Qh  # keys x queries' : '    scores = Qh @ Kh.T  # queries x keys',
    ctx.scale.kind === 'none' || ctx.scale.kind === 'multiply' ? '    scaled = scores * factor' : '    scaled = scores / divisor',
    '    steps += [("Q", h, Qh), ("K", h, Kh), ("V", h, Vh), ("scores", h, scores), ("scaled", h, scaled)]',
    '    logits = scaled',
  ];
}

/**
 * A NumPy script that recomputes every step of the trace from the problem's inputs and prints
 * them (`--json`: the steps as JSON in the trace's order, non-finite as "inf"/"-inf"/"nan").
 * `recipe`: numpy lines that drew the inputs, quoted in a comment.
 */
export function numpyScript(problem, trace, { recipe } = {}) {
  const ctx = problemContext(problem, trace);
  const cols = ctx.layout === 'columns';
  const L = [];
  L.push(...headerComment(ctx, trace, 'numpy', recipe));
  L.push('import json', 'import sys', '', 'import numpy as np', '');
  L.push(`dt = np.${ctx.precision}`);
  L.push(`layout = "${ctx.layout}"`, '');
  L.push('# ---- inputs');
  L.push(...pythonInputs(ctx, 'numpy'), '');
  L.push(
    '',
    'def softmax(x, axis):',
    '    """exp(x - logsumexp(x)) along axis, as scipy.special.softmax; all -inf gives 0."""',
    '    m = np.max(x, axis=axis, keepdims=True)',
    '    m = np.where(np.isneginf(m), 0, m)',
    '    with np.errstate(divide="ignore", invalid="ignore"):',
    '        lse = np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True)) + m',
    '        w = np.exp(x - lse)',
    '    return np.where(np.isneginf(lse), dt(0), w).astype(dt)',
    '',
    '',
  );
  L.push('# ---- projections');
  if (ctx.mode === 'qkv') {
    L.push('# Q, K, V are given.');
  } else {
    const Xkv = ctx.mode === 'cross' ? 'X_kv' : 'X';
    for (const [n, x] of [['Q', 'X'], ['K', Xkv], ['V', Xkv]]) {
      const b = ctx.bias[n] ? (cols ? ` + b_${n}[:, None]` : ` + b_${n}`) : '';
      L.push(cols ? `${n} = W_${n} @ ${x}${b}` : `${n} = ${x} @ W_${n}${b}`);
    }
  }
  const heads = ctx.heads, kv = ctx.kvHeads;
  L.push('');
  L.push(`heads, kv_heads = ${heads}, ${kv}`);
  L.push(cols ? 'L, S = Q.shape[1], K.shape[1]  # queries, keys' : 'L, S = Q.shape[0], K.shape[0]  # queries, keys');
  L.push(cols ? 'd_k = Q.shape[0] // heads' : 'd_k = Q.shape[1] // heads');
  L.push(cols ? 'd_v = V.shape[0] // kv_heads' : 'd_v = V.shape[1] // kv_heads');
  L.push(...scaleLines(ctx, 'numpy'));
  if (ctx.softcap > 0) L.push(`softcap = dt(${pyNumber(ctx.softcap)})`);
  L.push(...maskLines(ctx, 'numpy'));
  L.push('', 'steps = []  # (id, head, matrix) in the explorer\'s order', 'head_outputs = []');
  L.push(...headLoopStart(ctx, cols));
  if (ctx.softcap > 0) {
    L.push('    logits = softcap * np.tanh(logits / softcap)');
    L.push('    steps.append(("softcapped", h, logits))');
  }
  if (ctx.causal || ctx.maskKind !== 'none') {
    L.push('    logits = logits + M');
    L.push('    steps.append(("masked", h, logits))');
  }
  L.push(`    weights = softmax(logits, axis=${cols ? 0 : 1})  # ${cols ? 'down each column' : 'along each row'}`);
  L.push('    steps.append(("weights", h, weights))');
  L.push(cols ? '    head_outputs.append(Vh @ weights)' : '    head_outputs.append(weights @ Vh)');
  if (heads > 1 || ctx.hasWO) L.push('    steps.append(("head_output", h, head_outputs[-1]))');
  L.push('');
  L.push(cols ? 'concat = np.vstack(head_outputs)' : 'concat = np.hstack(head_outputs)');
  if (heads > 1) L.push('steps.append(("concat", None, concat))');
  if (ctx.hasWO) {
    const b = ctx.hasBO ? (cols ? ' + b_O[:, None]' : ' + b_O') : '';
    L.push(cols ? `output = W_O @ concat${b}` : `output = concat @ W_O${b}`);
  } else L.push('output = concat');
  L.push('steps.append(("output", None, output))');
  L.push(
    '',
    '',
    'def as_json(m):',
    '    return [[v if np.isfinite(v) else ("nan" if np.isnan(v) else ("inf" if v > 0 else "-inf")) for v in map(float, row)] for row in np.atleast_2d(m)]',
    '',
    '',
    'if "--json" in sys.argv:',
    '    print(json.dumps([{"id": i, "head": h, "shape": list(m.shape), "data": as_json(m)} for i, h, m in steps]))',
    'else:',
    '    np.set_printoptions(precision=4, suppress=True, linewidth=120)',
    '    for i, h, m in steps:',
    '        print(f"{i}" + ("" if h is None or heads == 1 else f" (head {h + 1})") + f" {m.shape[0]}x{m.shape[1]}:")',
    '        print(m)',
    '',
  );
  return L.join('\n');
}

/**
 * A PyTorch script: the same steps with torch tensors, then (when the options allow: no softcap)
 * a check of the head outputs against torch.nn.functional.scaled_dot_product_attention.
 */
export function pytorchScript(problem, trace, { recipe } = {}) {
  const ctx = problemContext(problem, trace);
  const cols = ctx.layout === 'columns';
  const L = [];
  L.push(...headerComment(ctx, trace, 'torch', recipe));
  L.push('import json', 'import math', 'import sys', '', 'import torch', 'import torch.nn.functional as F', '');
  L.push(`dt = torch.${ctx.precision}`, '');
  L.push('# ---- inputs');
  L.push(...pythonInputs(ctx, 'torch'), '');
  L.push(
    '',
    'def softmax(x, dim):',
    '    """exp(x - logsumexp(x)) along dim; a query whose keys are all masked gets weights 0."""',
    '    w = torch.softmax(x, dim=dim)',
    '    return torch.nan_to_num(w, nan=0.0)',
    '',
    '',
  );
  L.push('# ---- projections');
  if (ctx.mode === 'qkv') L.push('# Q, K, V are given.');
  else {
    const Xkv = ctx.mode === 'cross' ? 'X_kv' : 'X';
    for (const [n, x] of [['Q', 'X'], ['K', Xkv], ['V', Xkv]]) {
      const b = ctx.bias[n] ? (cols ? ` + b_${n}[:, None]` : ` + b_${n}`) : '';
      L.push(cols ? `${n} = W_${n} @ ${x}${b}` : `${n} = ${x} @ W_${n}${b}`);
    }
  }
  L.push('');
  L.push(`heads, kv_heads = ${ctx.heads}, ${ctx.kvHeads}`);
  L.push(cols ? 'L, S = Q.shape[1], K.shape[1]  # queries, keys' : 'L, S = Q.shape[0], K.shape[0]  # queries, keys');
  L.push(cols ? 'd_k = Q.shape[0] // heads' : 'd_k = Q.shape[1] // heads');
  L.push(cols ? 'd_v = V.shape[0] // kv_heads' : 'd_v = V.shape[1] // kv_heads');
  L.push(...scaleLines(ctx, 'torch'));
  if (ctx.softcap > 0) L.push(`softcap = ${pyNumber(ctx.softcap)}`);
  L.push(...maskLines(ctx, 'torch'));
  L.push('', 'steps = []  # (id, head, tensor) in the explorer\'s order', 'head_outputs = []');
  L.push(...headLoopStart(ctx, cols));
  if (ctx.softcap > 0) L.push('    logits = softcap * torch.tanh(logits / softcap)', '    steps.append(("softcapped", h, logits))');
  if (ctx.causal || ctx.maskKind !== 'none') L.push('    logits = logits + M', '    steps.append(("masked", h, logits))');
  L.push(`    weights = softmax(logits, dim=${cols ? 0 : 1})`);
  L.push('    steps.append(("weights", h, weights))');
  L.push(cols ? '    head_outputs.append(Vh @ weights)' : '    head_outputs.append(weights @ Vh)');
  if (ctx.heads > 1 || ctx.hasWO) L.push('    steps.append(("head_output", h, head_outputs[-1]))');
  L.push('');
  L.push(cols ? 'concat = torch.cat(head_outputs, dim=0)' : 'concat = torch.cat(head_outputs, dim=1)');
  if (ctx.heads > 1) L.push('steps.append(("concat", None, concat))');
  if (ctx.hasWO) {
    const b = ctx.hasBO ? (cols ? ' + b_O[:, None]' : ' + b_O') : '';
    L.push(cols ? `output = W_O @ concat${b}` : `output = concat @ W_O${b}`);
  } else L.push('output = concat');
  L.push('steps.append(("output", None, output))', '');

  // The check against PyTorch's fused attention.
  L.push('# ---- check against torch.nn.functional.scaled_dot_product_attention (PyTorch >= 2.1)');
  if (ctx.softcap > 0) {
    L.push('# Skipped: scaled_dot_product_attention has no softcap.', 'sdpa_checked = False');
  } else {
    L.push('# It takes (heads, tokens, d) in the rows layout and a scale that multiplies Q K^T.');
    const toRows = (n) => (cols ? `${n}.T` : n);
    L.push(`q = ${toRows('Q')}.reshape(L, heads, d_k).transpose(0, 1)`);
    L.push(`k = ${toRows('K')}.reshape(S, kv_heads, d_k).transpose(0, 1).repeat_interleave(heads // kv_heads, dim=0)`);
    L.push(`v = ${toRows('V')}.reshape(S, kv_heads, d_v).transpose(0, 1).repeat_interleave(heads // kv_heads, dim=0)`);
    const scale = ctx.scale.kind === 'none' || ctx.scale.kind === 'multiply' ? 'float(factor)' : '1.0 / float(divisor)';
    let maskArg = '';
    if (ctx.causal && ctx.maskKind === 'none') maskArg = ', is_causal=True';
    else if (ctx.causal || ctx.maskKind !== 'none') maskArg = `, attn_mask=${cols ? 'M.T' : 'M'}`;
    L.push(`sdpa = F.scaled_dot_product_attention(q, k, v${maskArg}, scale=${scale})`);
    L.push('sdpa = torch.nan_to_num(sdpa, nan=0.0)  # a fully masked query gives NaN there, 0 here');
    L.push(`ours = ${cols ? 'concat.T' : 'concat'}.reshape(L, heads, d_v).transpose(0, 1)`);
    L.push(`tol = dict(rtol=${ctx.precision === 'float32' ? '1e-5, atol=1e-6' : '1e-10, atol=1e-12'})`);
    L.push('torch.testing.assert_close(ours, sdpa, **tol)', 'sdpa_checked = True');
  }
  L.push(
    '',
    '',
    'def as_json(m):',
    '    m = torch.atleast_2d(m).double().tolist()',
    '    return [[v if math.isfinite(v) else ("nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")) for v in row] for row in m]',
    '',
    '',
    'if "--json" in sys.argv:',
    '    print(json.dumps([{"id": i, "head": h, "shape": list(m.shape), "data": as_json(m)} for i, h, m in steps]))',
    'else:',
    '    torch.set_printoptions(precision=4, sci_mode=False, linewidth=120)',
    '    for i, h, m in steps:',
    '        print(f"{i}" + ("" if h is None or heads == 1 else f" (head {h + 1})") + f" {tuple(m.shape)}:")',
    '        print(m)',
    '    print("matches torch.nn.functional.scaled_dot_product_attention" if sdpa_checked else "(no scaled_dot_product_attention check for these options)")',
    '',
  );
  return L.join('\n');
}

// ---- heatmap SVG ---------------------------------------------------------------------------

/**
 * A colour function for a matrix: weights on a sequential scale from 0 to the largest weight,
 * anything else on a diverging scale symmetric around 0 (the page's scales, lib/colours.js).
 * Returns (v) => { fill, text } (CSS colours) or null for non-finite values.
 */
export function heatColours(data, kind = 'signed') {
  const scale = colourScale(data, kind);
  return (v) => {
    const c = scale(v);
    return c && { fill: `rgb(${c.rgb.join(',')})`, text: c.fg };
  };
}

const xml = (s) => String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c]);

/**
 * A step (or any matrix) as an SVG heatmap (a string; standalone, with its own xmlns).
 * Options: title, rowLabels, colLabels, kind ('weights' | 'signed', default from step.id),
 * cell (px), numbers (draw the values; default when cells are large enough), decimals.
 */
export function heatmapSvg(step, { title, rowLabels, colLabels, kind, cell, numbers, decimals = 2 } = {}) {
  const data = step.data;
  const nr = data.length, nc = data[0]?.length ?? 0;
  const k = kind ?? (step.id === 'weights' ? 'weights' : 'signed');
  const size = cell ?? Math.max(4, Math.min(48, Math.floor(640 / Math.max(nr, nc))));
  const showNumbers = numbers ?? size >= 36;
  const labelW = rowLabels ? 8 + 7 * Math.max(...rowLabels.map((l) => String(l).length)) : 0;
  const titleH = title ? 24 : 0;
  const labelH = colLabels ? 18 : 0;
  const width = labelW + nc * size + 2;
  const height = titleH + labelH + nr * size + 2;
  const colour = heatColours(data, k);
  const fontSize = Math.max(8, Math.min(13, Math.floor(size / 3.6)));
  const out = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="system-ui, sans-serif" role="img">`);
  out.push(`<title>${xml(title ?? `${step.title || (step.id ?? 'matrix')} ${nr}x${nc}`)}</title>`);
  out.push(`<rect width="${width}" height="${height}" fill="#fff"/>`);
  if (title) out.push(`<text x="${labelW}" y="16" font-size="14" font-weight="600" fill="#111">${xml(title)}</text>`);
  const y0 = titleH + labelH, x0 = labelW;
  if (colLabels) colLabels.forEach((l, j) => out.push(`<text x="${x0 + j * size + size / 2}" y="${titleH + 13}" font-size="11" text-anchor="middle" fill="#333">${xml(l)}</text>`));
  if (rowLabels) rowLabels.forEach((l, i) => out.push(`<text x="${labelW - 6}" y="${y0 + i * size + size / 2 + 4}" font-size="11" text-anchor="end" fill="#333">${xml(l)}</text>`));
  for (let i = 0; i < nr; i++) {
    for (let j = 0; j < nc; j++) {
      const v = data[i][j];
      const c = colour(v);
      const x = x0 + j * size, y = y0 + i * size;
      // Per-cell tooltips only while the file stays small (256 × 256 cells would be megabytes).
      const tip = nr * nc <= 4096 ? `<title>${i + 1},${j + 1}: ${exact(v)}</title></rect>` : '';
      out.push(`<rect x="${x}" y="${y}" width="${size}" height="${size}" fill="${c ? c.fill : '#999'}"${c ? '' : ' fill-opacity="0.5"'}${tip ? `>${tip}` : '/>'}`);
      if (showNumbers) {
        const text = v === -Infinity ? '−∞' : Number.isFinite(v) ? v.toFixed(decimals).replace(/^-/, '−') : exact(v);
        out.push(`<text x="${x + size / 2}" y="${y + size / 2 + fontSize / 3}" font-size="${fontSize}" text-anchor="middle" fill="${c ? c.text : '#111'}">${text}</text>`);
      }
    }
  }
  out.push('</svg>');
  return out.join('\n') + '\n';
}

/** File name for a step export, e.g. "weights.csv", or "weights-head2.csv" when `heads` > 1. */
export function stepFileName(step, ext, heads = 1) {
  const h = headOf(step);
  return `${step.id}${h !== null && heads > 1 ? `-head${h + 1}` : ''}.${ext}`;
}
