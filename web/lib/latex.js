// LaTeX exports: one step, the whole worked solution, one cell's worked calculation. Pure string
// building: numbers come from the trace or the engine's explain(), and each step's symbol,
// title and formula from the step itself (the core writes them).

import { BIAS_KEYS, exportError, headOf, problemContext, stepCaption } from './context.js';
import { formatNumber, texNumber } from './format.js';

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
export function stepLatex(step, { decimals = 4, max = 16 } = {}) {
  return `${step.symbol} = ${matrixLatex(step.data, { decimals, max })}`;
}

/** A problem input's name in TeX: X_{kv}; W_Q, b_Q in the rows layout, \Omega_Q, \beta_Q in the columns layout. */
function inputSymbol(name, layout) {
  if (name === 'X_kv') return 'X_{kv}';
  if (!/^[Wb]_/.test(name)) return name;
  const letter = layout === 'columns' ? (name[0] === 'W' ? '\\Omega' : '\\beta') : name[0];
  return `${letter}_${name.slice(2)}`;
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
  parts.push(`% ${m.queries} queries, ${m.keys} keys, d_k = ${m.d_k}, d_v = ${m.d_v}, ${m.heads} head(s), ${m.layout} layout, ${m.precision}`);
  const given = Object.entries(ctx.inputs);
  if (given.length) {
    parts.push('\\paragraph{Given}');
    for (const [name, value] of given) {
      const isVector = BIAS_KEYS.includes(name);
      parts.push(`\\[ ${inputSymbol(name, m.layout)} = ${matrixLatex(isVector ? [value] : value, { decimals, max })} \\]`);
    }
    if (ctx.maskKind === 'additive') parts.push(`\\[ M = ${matrixLatex(ctx.mask, { decimals, max })} \\]`);
  }
  trace.steps.forEach((step, i) => {
    parts.push(`\\paragraph{${i + 1}. ${texText(stepCaption(step, m.heads))}}`);
    parts.push(`\\[ ${step.tex} \\]`);
    parts.push(`\\[ ${stepLatex(step, { decimals, max })} \\]`);
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

/**
 * One of explain()'s templates (a TeX line, its text or its terms' caption) with its
 * placeholders filled: `@N` by `number(numbers[N])`, `@terms(a,b)` by the sum "(x)(y) + ..." of the
 * terms table's columns a and b and `@terms(a)` by column a's entries joined with "+" (more than
 * `maxTerms` terms: the first ones, \cdots, the last), `@query`, `@key`, `@token` by `label(name)`.
 * One pass, so a filled-in label is never read as a placeholder.
 */
export function fillExplanation(template, e, { number, maxTerms = 8, label = (name) => name }) {
  const sum = (n, term) => {
    const shown = n <= maxTerms ? [...Array(n).keys()] : [...Array(Math.max(maxTerms - 1, 1)).keys(), -1, n - 1];
    return shown.map((k) => (k < 0 ? '\\cdots' : term(k))).join(' + ');
  };
  return template.replace(/@terms\((\d+)(?:,(\d+))?\)|@(query|key|token)\b|@(\d+)/g, (_, a, b, name, index) => {
    if (name) return label(name);
    if (index !== undefined) return number(e.numbers[Number(index)]);
    const [x, y] = [e.terms.columns[Number(a)], b === undefined ? null : e.terms.columns[Number(b)]];
    return sum(x.length, y ? (k) => `(${number(x[k])})(${number(y[k])})` : (k) => number(x[k]));
  });
}

/** The step a cell explanation belongs to, from a trace of the same problem. */
function explainedStep(e, trace) {
  const step = trace.steps.find((s) => s.id === e.step && headOf(s) === headOf(e));
  if (!step) throw exportError(`the trace has no step ${e.step}${headOf(e) === null ? '' : ` of head ${e.head}`}: explain a cell of the same problem`);
  return step;
}

/**
 * The worked calculation of one cell (an engine.explain() result) as a TeX `aligned` block:
 * explain()'s own lines (the cell, the definition, the numbers filled in, the value). `trace`
 * (of the same problem) checks that the cell is one of its steps.
 */
export function cellLatex(e, trace, { decimals = 4, maxTerms = 8 } = {}) {
  explainedStep(e, trace);
  const [cell, ...rhs] = e.lines.map((line) => fillExplanation(line, e, { number: (x) => texNumber(x, decimals), maxTerms }));
  return `\\begin{aligned}\n${cell} &= ${rhs.join(' \\\\\n  &= ')}\n\\end{aligned}`;
}

/**
 * The sentences of one cell's worked calculation (explain()'s text) as plain text, tokens named by
 * their place: "The query of query 2 dotted with the key of key 3 ...".
 */
export function cellText(e, trace, { decimals = 4 } = {}) {
  const step = explainedStep(e, trace);
  const index = { queries: null, keys: null };
  step.axes.forEach((axis, k) => { if (axis in index) index[axis] = (k === 0 ? e.row : e.col) + 1; });
  const names = { query: `query ${index.queries}`, key: `key ${index.keys}`, token: `token ${index.queries ?? index.keys}` };
  return fillExplanation(e.text, e, { number: (x) => formatNumber(x, decimals), label: (name) => names[name] });
}
