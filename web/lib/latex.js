// LaTeX exports: one step, the whole worked solution, one cell's worked calculation. Pure string
// building; every number comes from the trace or the engine's explain().

import { BIAS_KEYS, headOf, problemContext } from './context.js';
import { texNumber } from './format.js';

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
  return `${step.title}${ctx.heads > 1 && h !== null ? `, head ${h + 1}` : ''}`;
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
