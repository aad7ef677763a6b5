// LaTeX exports: one step, the whole worked solution, one cell's worked calculation. Pure string
// building: numbers come from the trace or the engine's explain(), and each step's symbol,
// title and formula from the step itself (the core writes them).

import { BIAS_KEYS, exportError, headOf, problemContext, stepCaption } from './context.js';
import { formatNumber, texNumber, texText } from './format.js';
import { english, explanationWords, stepFormula, warningsIn } from './i18n.js';

/**
 * A matrix as a TeX bmatrix with `decimals` places.
 * @type {typeof import('./index.js').matrixLatex}
 */
export function matrixLatex(data, { decimals = 4, max = 16 } = {}) {
  // Larger than max × max: the first rows/columns, \vdots/\cdots/\ddots, and the last one (as on
  // a slide; LaTeX's bmatrix also stops at MaxMatrixCols).
  const keep = (n) => (n <= max ? [...Array(n).keys()] : [...[...Array(max - 2).keys()], -1, n - 1]);
  const nr = data.length,
    nc = data[0]?.length ?? 0;
  const cols = keep(nc);
  const rows = keep(nr).map((i) =>
    i < 0
      ? cols.map((j) => (j < 0 ? '\\ddots' : '\\vdots')).join(' & ')
      : cols.map((j) => (j < 0 ? '\\cdots' : texNumber(data[i][j], decimals))).join(' & '),
  );
  return `\\begin{bmatrix}\n${rows.join(' \\\\\n')}\n\\end{bmatrix}`;
}

/**
 * One step as "symbol = bmatrix" (TeX math, no delimiters).
 * @type {typeof import('./index.js').stepLatex}
 */
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

/** The standalone document of the LaTeX exports (`standalone: true`): amsmath, `body`, `title`. */
function latexDocument(body, title) {
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
 * The whole worked solution as LaTeX: each step's formula and matrix in display math
 * (`\[ ... \]`). With `standalone`, a complete document (amsmath) that pdflatex compiles.
 * @type {typeof import('./index.js').solutionLatex}
 */
export function solutionLatex(problem, trace, { decimals = 4, max = 16, standalone = false, title, t = english } = {}) {
  const ctx = problemContext(problem, trace);
  const parts = [];
  const m = trace.meta;
  const summary = { queries: m.queries, keys: m.keys, d_k: m.d_k, d_v: m.d_v, heads: m.heads, layout: m.layout, precision: m.precision };
  parts.push(`% ${t('export.solution.summary', summary)}`);
  const given = Object.entries(ctx.inputs);
  if (given.length) {
    parts.push(`\\paragraph{${texText(t('export.solution.given'))}}`);
    for (const [name, value] of given) {
      const isVector = BIAS_KEYS.includes(name);
      parts.push(
        `\\[ ${inputSymbol(name, m.layout)} = ${matrixLatex(/** @type {number[][]} */ (isVector ? [value] : value), { decimals, max })} \\]`,
      );
    }
    if (ctx.maskKind === 'additive') parts.push(`\\[ M = ${matrixLatex(ctx.mask, { decimals, max })} \\]`);
  }
  trace.steps.forEach((step, i) => {
    parts.push(`\\paragraph{${i + 1}. ${texText(stepCaption(step, m.heads, t))}}`);
    parts.push(`\\[ ${stepFormula(step, t).tex} \\]`);
    parts.push(`\\[ ${stepLatex(step, { decimals, max })} \\]`);
  });
  for (const w of warningsIn(trace, t)) parts.push(`\\paragraph{${texText(t('export.note'))}} ${texText(w)}.`);
  const body = parts.join('\n\n');
  return standalone ? latexDocument(body, title ?? t('export.solution.title')) : body + '\n';
}

/**
 * One of explain()'s templates (a TeX line, its text or its terms' caption) with its
 * placeholders filled: `@N` by `number(numbers[N])`, `@terms(a,b)` by the sum "(x)(y) + ..." of the
 * terms table's columns a and b and `@terms(a)` by column a's entries joined with "+" (more than
 * `maxTerms` terms: the first ones, \cdots, the last), `@query`, `@key`, `@token` by `label(name)`.
 * One pass, so a filled-in label is never read as a placeholder.
 * @type {typeof import('./index.js').fillExplanation}
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
  if (!step)
    throw exportError(
      `the trace has no step ${e.step}${headOf(e) === null ? '' : ` of head ${e.head}`}: explain a cell of the same problem`,
    );
  return step;
}

/**
 * The worked calculation of one cell (an engine.explain() result) as a TeX `aligned` block:
 * explain()'s own lines (the cell, the definition, the numbers filled in, the value). `trace`
 * (of the same problem) checks that the cell is one of its steps.
 * @type {typeof import('./index.js').cellLatex}
 */
export function cellLatex(e, trace, { decimals = 4, maxTerms = 8, t = english } = {}) {
  explainedStep(e, trace);
  const [cell, ...rhs] = explanationWords(e, t).lines.map((line) =>
    fillExplanation(line, e, { number: (x) => texNumber(x, decimals), maxTerms }),
  );
  return `\\begin{aligned}\n${cell} &= ${rhs.join(' \\\\\n  &= ')}\n\\end{aligned}`;
}

/**
 * The sentences of one cell's worked calculation (explain()'s text) as plain text, tokens named by
 * their place: "The query of query 2 dotted with the key of key 3 ...".
 * @type {typeof import('./index.js').cellText}
 */
export function cellText(e, trace, { decimals = 4, t = english } = {}) {
  const step = explainedStep(e, trace);
  const index = { queries: null, keys: null };
  step.axes.forEach((axis, k) => {
    if (axis in index) index[axis] = (k === 0 ? e.row : e.col) + 1;
  });
  const names = {
    query: /** @type {string} */ (t('narrate.name.query', { n: index.queries })),
    key: /** @type {string} */ (t('narrate.name.key', { n: index.keys })),
    token: /** @type {string} */ (t('narrate.name.token', { n: index.queries ?? index.keys })),
  };
  return fillExplanation(explanationWords(e, t).text, e, { number: (x) => formatNumber(x, decimals), label: (name) => names[name] });
}

// ---- attention in practice: engine.decode's and engine.tiles' results ---------------------------

/** A vector as a one-row bmatrix (one entry per query of a tile, a token's output). */
const rowLatex = (values, options) => matrixLatex([values], options);

/** "Token 2 (sat)": a token by its place (message `id`: its word), with its name when the caller gave one. */
function tokenName(i, names, id, t) {
  const name = names?.[i];
  return t(id, { n: String(i + 1), named: name ? 'yes' : 'no', name: name ? texText(name) : '' });
}

function checkResult(result, fn, keys, what) {
  if (!result || typeof result !== 'object' || !keys.every((k) => k in result)) {
    throw exportError(`${fn} takes ${what}: an object with ${keys.join(', ')}`);
  }
}

/**
 * engine.decode's result as LaTeX: per token t, the cache it reads, the new row of scores (before
 * scaling) and of weights of each head, its output row, the multiply-adds with and without the
 * cache and the check against row t of causal attention; then the totals. `labels`: token names
 * ({ tokensQ }), as narrate's. With `standalone`, a complete document.
 * @type {typeof import('./index.js').decodeLatex}
 */
export function decodeLatex(decoding, { decimals = 4, max = 16, standalone = false, title, labels = {}, t = english } = {}) {
  checkResult(decoding, 'decodeLatex', ['steps', 'output', 'flops_cached', 'flops_full'], "engine.decode()'s result");
  const opts = { decimals, max };
  const heads = decoding.steps[0]?.weights.length ?? 1;
  const sup = (h) => (heads > 1 ? `^{(${h + 1})}` : '');
  const parts = [
    `% ${t('export.decode.summary', { tokens: String(decoding.steps.length), heads: String(heads), cached: String(decoding.flops_cached), full: String(decoding.flops_full) })}`,
  ];
  for (const s of decoding.steps) {
    const n = s.t + 1;
    const reads = t('export.decode.reads', {
      rows: s.cache_rows,
      rowsText: String(s.cache_rows),
      cached: String(s.t),
      scores: '$S = QK^\\top$',
      weights: '$A$',
      multi: heads > 1 ? 'yes' : 'no',
    });
    parts.push(`\\paragraph{${tokenName(s.t, labels.tokensQ, 'export.decode.token', t)}} ${reads}`);
    // Row t of each head's scores (QKᵀ, before scaling) and weights: the one new row.
    const rows = [];
    for (let h = 0; h < heads; h++) {
      rows.push(`S${sup(h)}_{${n},:} &= ${rowLatex(s.scores[h], opts)}`);
      rows.push(`A${sup(h)}_{${n},:} &= ${rowLatex(s.weights[h], opts)}`);
    }
    rows.push(`O_{${n},:} &= ${rowLatex(s.output, opts)}`);
    parts.push(`\\[ \\begin{aligned}\n${rows.join(' \\\\\n')}\n\\end{aligned} \\]`);
    parts.push(
      t('export.decode.work', {
        cached: String(s.flops_cached),
        full: String(s.flops_full),
        first: n === 1 ? 'yes' : 'no',
        last: String(n),
        difference: `$${texNumber(s.difference, decimals)}$`,
      }),
    );
  }
  parts.push(`\\paragraph{${t('export.decode.every')}} ${t('export.decode.outputs')}`);
  parts.push(`\\[ O = ${matrixLatex(decoding.output, opts)} \\]`);
  parts.push(t('export.decode.total', { cached: String(decoding.flops_cached), full: String(decoding.flops_full) }));
  for (const w of warningsIn(decoding, t)) parts.push(`\\paragraph{${texText(t('export.note'))}} ${texText(w)}.`);
  const body = parts.join('\n\n');
  return standalone ? latexDocument(body, title ?? t('export.decode.title')) : body + '\n';
}

/**
 * engine.tiles' result as LaTeX: the recurrence, then per tile in the order visited its scores
 * block T, the running max m and sum ℓ before and after, the rescale factor e^(m − m′) and the
 * partial output Õ before and after (a skipped tile says so); then the output Õ / ℓ, how close it
 * is to run()'s, and the bytes moved, standard against flash. Matrices are as the result holds
 * them (transposed in the columns layout, as the trace's steps are). `labels`: { tokensQ, tokensK }.
 * @type {typeof import('./index.js').tilesLatex}
 */
export function tilesLatex(tiles, { decimals = 4, max = 16, standalone = false, title, labels = {}, t = english } = {}) {
  checkResult(tiles, 'tilesLatex', ['tiles', 'output', 'block_q', 'block_k', 'bytes_flash'], "engine.tiles()'s result");
  const opts = { decimals, max };
  const heads = new Set(tiles.tiles.map((x) => x.head)).size;
  const range = ([a, b], names, one, many) =>
    b - a === 1 ? tokenName(a, names, one, t) : t(many, { first: String(a + 1), last: String(b) });
  const precision = tiles.element_bytes === 4 ? 'float32' : 'float64';
  const summary = {
    blockQ: String(tiles.block_q),
    blockK: String(tiles.block_k),
    tiles: String(tiles.tiles.length),
    visited: String(tiles.visited),
    skipped: String(tiles.skipped),
    precision,
  };
  const recurrence = t('export.tiles.recurrenceText', {
    T: '$T$',
    m: '$m$',
    l: '$\\ell$',
    O: '$\\tilde O$',
    start: '$m = -\\infty$, $\\ell = 0$, $\\tilde O = 0$',
  });
  const parts = [
    `% ${t('export.tiles.summary', summary)}`,
    `\\paragraph{${t('export.tiles.recurrence')}} ${recurrence}`,
    "\\[ m' = \\max(m, \\operatorname{rowmax}(T)), \\quad \\ell' = e^{m - m'}\\ell + \\operatorname{rowsum}(e^{T - m'}), \\quad \\tilde O' = e^{m - m'}\\tilde O + e^{T - m'} V_j \\]",
  ];
  tiles.tiles.forEach((tile, i) => {
    const where = t('export.tiles.where', {
      multi: heads > 1 ? 'yes' : 'no',
      head: String(tile.head + 1),
      queries: range(tile.queries, labels.tokensQ, 'export.tiles.query', 'export.tiles.queries'),
      keys: range(tile.keys, labels.tokensK, 'export.tiles.key', 'export.tiles.keys'),
    });
    const heading = t('export.tiles.tile', { n: String(i + 1), count: String(tiles.tiles.length) });
    const blocks = t('export.tiles.blocks', { q: String(tile.q_block + 1), k: String(tile.k_block + 1), where });
    parts.push(`\\paragraph{${heading}} ${blocks}`);
    if (tile.skipped) {
      parts.push(t('export.tiles.skipped', { inf: '$-\\infty$' }));
      return;
    }
    parts.push(`\\[ T = ${matrixLatex(tile.scores, opts)} \\]`);
    parts.push(t('export.tiles.perQuery'));
    parts.push(
      `\\[ \\begin{aligned}\nm &= ${rowLatex(tile.m_before, opts)} & m' &= ${rowLatex(tile.m_after, opts)} \\\\\n` +
        `e^{m - m'} &= ${rowLatex(tile.rescale, opts)} \\\\\n` +
        `\\ell &= ${rowLatex(tile.l_before, opts)} & \\ell' &= ${rowLatex(tile.l_after, opts)}\n\\end{aligned} \\]`,
    );
    parts.push(
      `\\[ \\tilde O = ${matrixLatex(tile.partial_before, opts)} \\qquad \\tilde O' = ${matrixLatex(tile.partial_after, opts)} \\]`,
    );
  });
  parts.push(`\\paragraph{${t('export.tiles.output')}} ${t('export.tiles.outputText', { formula: '$\\tilde O / \\ell$' })}`);
  parts.push(`\\[ O = ${matrixLatex(tiles.output, opts)} \\]`);
  parts.push(
    t('export.tiles.check', {
      run: '\\texttt{run()}',
      difference: `$${texNumber(tiles.max_difference, decimals)}$`,
      bytes: String(tiles.element_bytes),
      standard: String(tiles.bytes_standard),
      blocks: `${tiles.block_q} $\\times$ ${tiles.block_k}`,
      flash: String(tiles.bytes_flash),
    }),
  );
  for (const w of warningsIn(tiles, t)) parts.push(`\\paragraph{${texText(t('export.note'))}} ${texText(w)}.`);
  const body = parts.join('\n\n');
  return standalone ? latexDocument(body, title ?? t('export.tiles.title')) : body + '\n';
}
