// LaTeX exports: one step, the whole worked solution, one cell's worked calculation. Pure string
// building: numbers come from the trace or the engine's explain(), and each step's symbol,
// title and formula from the step itself (the core writes them).

import { BIAS_KEYS, exportError, headOf, problemContext, stepCaption } from './context.js';
import { texNumber } from './format.js';

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

/** `symbol` with the subscript `sub`, in parentheses when it has a subscript already. */
function indexed(symbol, sub) {
  return symbol.includes('_') ? `(${symbol})_{${sub}}` : `${symbol}_{${sub}}`;
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
 * the definition, the numbers filled in, the value. `trace` (of the same problem) names the
 * step and the steps it is computed from.
 */
export function cellLatex(e, trace, { decimals = 4, maxTerms = 8 } = {}) {
  const d = decimals;
  const cols = trace.meta.layout === 'columns';
  const step = trace.steps.find((s) => s.id === e.step && headOf(s) === headOf(e));
  if (!step) throw exportError(`the trace has no step ${e.step}${headOf(e) === null ? '' : ` of head ${e.head}`}: explain a cell of the same problem`);
  const from = (k) => trace.steps[step.inputs[k]].symbol;
  const i = e.row + 1, j = e.col + 1;
  const ij = `${i},${j}`;
  const cell = indexed(step.symbol, ij);
  const v = texNumber(e.value, d);
  // Positions are whole numbers unless the problem gives its own; no trailing zeros for them.
  const position = (p) => (Number.isInteger(p) ? String(p) : texNumber(p, d));
  const lines = [];
  switch (e.kind) {
    case 'input':
      return `\\begin{aligned} ${cell} &= ${v} \\quad\\text{(given)} \\end{aligned}`;
    case 'projection': {
      // Q, K, V from X (or X_kv), or the output from the heads; W and b per head when there are several.
      const sup = trace.meta.heads > 1 && headOf(step) !== null ? `^{(${step.head + 1})}` : '';
      const given = (prefix) => step.given.find((n) => n.startsWith(prefix));
      // The output reads the heads; Q, K, V read X_pos (a step) when positions are added to X.
      const input = e.step === 'output' || !given('X') ? from(0) : inputSymbol(given('X'), trace.meta.layout);
      const W = inputSymbol(given('W_'), trace.meta.layout) + sup;
      const b = e.has_bias ? inputSymbol(given('b_'), trace.meta.layout) + sup : '';
      // Rows: token i times column j of W. Columns: row i of Ω times token j.
      const def = cols ? `\\sum_m ${indexed(W, `${i},m`)}\\,${indexed(input, `m,${j}`)}${b ? ` + ${indexed(b, i)}` : ''}`
        : `\\sum_m ${indexed(input, `${i},m`)}\\,${indexed(W, `m,${j}`)}${b ? ` + ${indexed(b, j)}` : ''}`;
      const numbers = cols ? termsTex(e.right, e.left, d, maxTerms) : termsTex(e.left, e.right, d, maxTerms);
      lines.push(def, `${numbers}${e.has_bias ? ` + ${texNumber(e.bias, d)}` : ''}`, v);
      break;
    }
    case 'dot': {
      const q = cols ? j : i, k = cols ? i : j;
      lines.push(`\\sum_m ${indexed(from(0), `${q},m`)}\\,${indexed(from(1), `${k},m`)}`, termsTex(e.left, e.right, d, maxTerms), v);
      break;
    }
    case 'scale':
      if (e.divisor) {
        lines.push(`\\frac{${indexed(from(0), ij)}}{${texNumber(e.divisor, d)}}`, `\\frac{${texNumber(e.input, d)}}{${texNumber(e.divisor, d)}}`, v);
      } else {
        lines.push(`${texNumber(e.factor, d)} \\cdot ${indexed(from(0), ij)}`, `${texNumber(e.factor, d)} \\cdot ${texNumber(e.input, d)}`, v);
      }
      break;
    case 'softcap':
      lines.push(`c\\,\\tanh\\!\\left(${indexed(from(0), ij)} / c\\right)`, `${texNumber(e.factor, d)}\\,\\tanh\\!\\left(${texNumber(e.input, d)} / ${texNumber(e.factor, d)}\\right)`, v);
      break;
    case 'mask':
      // A finite mask_fill replaces a hidden score; otherwise the mask adds (−∞ where hidden).
      if (e.hidden && Number.isFinite(e.fill)) lines.push(`${texNumber(e.fill, d)} \\quad\\text{(hidden by ${e.components.join(', ')}: the fill)}`);
      else lines.push(`${indexed(from(0), ij)} + M_{${ij}}`, `${texNumber(e.input, d)} + (${texNumber(e.additive, d)})`, v);
      break;
    case 'mask_entry': {
      const why = e.hidden ? `hidden by ${e.components.join(', ')}` : e.kept_by_sink ? 'kept: a sink token' : 'visible';
      lines.push(`${v} \\quad\\text{(${why})}`);
      break;
    }
    case 'alibi':
      lines.push(`-m\\,\\lvert p_i - p_j \\rvert`, `-${texNumber(e.slope, d)} \\cdot \\lvert ${position(e.query_pos)} - ${position(e.key_pos)} \\rvert`, v);
      break;
    case 'add':
    case 'bias':
      // X + P (positions), or the scores plus the ALiBi bias.
      lines.push(`${texNumber(e.input, d)} + (${texNumber(e.additive, d)})`, v);
      break;
    case 'sinusoid': {
      const fn = e.value === e.cos ? '\\cos' : '\\sin';
      lines.push(`${fn}(${texNumber(e.angle, d)}) \\quad\\text{(position ${e.position})}`, v);
      break;
    }
    case 'rotation': {
      // The pair (a, b) of features turned by the angle θ of this position.
      const theta = Number.isNaN(e.angle) ? '' : ` \\quad (\\theta = ${texNumber(e.angle, d)})`;
      lines.push(`${termsTex(e.left, e.right, d, maxTerms)}${theta}`, v);
      break;
    }
    case 'unrotated':
      lines.push(`${indexed(from(0), ij)} \\quad\\text{(not rotated)}`, v);
      break;
    case 'cache': {
      const source = e.source === 'past_K' || e.source === 'past_V' ? `${e.source[5]}_{\\text{past}}`
        : trace.steps.find((s) => s.id === e.source && headOf(s) === headOf(e))?.symbol ?? e.source;
      const [r, c] = [e.source_row + 1, e.source_col + 1];
      lines.push(indexed(source, cols ? `${c},${r}` : `${r},${c}`), v);
      break;
    }
    case 'softmax': {
      // Along the row (rows layout) or down the column (columns layout) of the step the softmax reads.
      const along = cols ? 'i\'' : 'j\'';
      const pos = cols ? e.row : e.col;
      if (e.max === -Infinity) {
        lines.push('0 \\quad\\text{(every key of this query is masked)}');
        break;
      }
      const x = from(0);
      const shifted = e.shifted[pos];
      // A sink logit s joins the denominator as one more exponential (its share is 1 − Σ weights).
      const sink = e.has_sink ? ` + ${texNumber(e.sink_exp, d)}` : '';
      const sumTerms = (e.exps.length <= maxTerms ? e.exps.map((t) => texNumber(t, d)).join(' + ')
        : `${e.exps.slice(0, maxTerms - 1).map((t) => texNumber(t, d)).join(' + ')} + \\cdots + ${texNumber(e.exps[e.exps.length - 1], d)}`) + sink;
      lines.push(
        `\\frac{e^{${indexed(x, ij)} - m}}{\\sum_{${along}} e^{${indexed(x, cols ? `${along},${j}` : `${i},${along}`)} - m}${e.has_sink ? ' + e^{s - m}' : ''}},\\quad m = \\max = ${texNumber(e.max, d)}${e.has_sink ? `,\\ s = ${texNumber(e.sink_logit, d)}` : ''}`,
        `\\frac{e^{${texNumber(shifted, d)}}}{${sumTerms}}`,
        `\\frac{${texNumber(e.exps[pos], d)}}{${texNumber(e.exp_sum, d)}}`,
        v,
      );
      break;
    }
    case 'weighted_sum': {
      const [A, V] = [from(0), from(1)];
      const def = cols ? `\\sum_k ${indexed(V, `${i},k`)}\\,${indexed(A, `k,${j}`)}` : `\\sum_k ${indexed(A, `${i},k`)}\\,${indexed(V, `k,${j}`)}`;
      lines.push(def, cols ? termsTex(e.right, e.left, d, maxTerms) : termsTex(e.left, e.right, d, maxTerms), v);
      break;
    }
    case 'concat': {
      const c = e.source_col + 1;
      lines.push(indexed(from(e.source_head ?? 0), cols ? `${c},${j}` : `${i},${c}`), v);
      break;
    }
    default:
      lines.push(v);
  }
  return `\\begin{aligned}\n${cell} &= ${lines.join(' \\\\\n  &= ')}\n\\end{aligned}`;
}
