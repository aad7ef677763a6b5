// "In practice": four walkthroughs on the learner's current problem, one position at a time
// (Next / Previous, ← →), each with a sentence from the package's narrate.js:
//   softmax    one row's online softmax, entry by entry; "subtract the max" off shows overflow
//   decode     decoding with a KV cache, token by token, checked against causal attention
//   tiles      FlashAttention's tiles over the score matrix it never stores, and the bytes moved
//   gradients  the backward pass, step by step, from dO (editable, default all ones)
//   recurrent  causal linear attention token by token (or chunk by chunk): the state S and z,
//              each output row beside the parallel form's, and each form's cost
// ?walk=softmax|decode|tiles|gradients|recurrent opens one. Every number comes from the engine
// (onlineSoftmax, decode, tiles, gradients, explain); the tables are steps.js's. The open
// walkthrough's result exports as the package writes it (LaTeX, CSV, JSON, for gradients NumPy).
import {
  decodeCsv, decodeLatex, narrateDecodeStep, narrateGradientStep, narrateOnlineSoftmax, narrateTile, numpyScript,
  solutionLatex, stringify, tilesCsv, tilesLatex, traceCsv, traceJson,
} from 'attention-explorer';
import { $, app } from './app.js';
import { toClipboard } from './copy-latex.js';
import { download } from './export-panel.js';
import { flags } from './embed.js';
import { explanationHtml } from './explain.js';
import { cellFmt, escapeHtml, fmt, quoteToken } from './format.js';
import { mathHtml } from './math.js';
import { setStepping } from './stepper.js';
import { TABLE_MAX_COLS, TABLE_MAX_ROWS, axisLabels, drawHeatmap, heatmapHtml, tableHtml } from './steps.js';
import { resultParts, store } from './store.js';
import { chooseWalk, setWalk, walkTo } from './actions.js';

export const WALKS = {
  softmax: 'Online softmax',
  decode: 'Decoding with a KV cache',
  tiles: 'FlashAttention’s tiles',
  gradients: 'Gradients',
  recurrent: 'Linear attention, recurrent',
};

const MAX_TILES = 4096;

/** The walkthrough as the store holds it (actions.js chooseWalk, walkTo, setWalk). */
const walkState = () => store.get().ui.walk;
/** What the engine gave for the current walk ({ positions, ... } or { error }), and the drawing's ticket. */
const drawn = { view: null, run: 0 };

/**
 * The engine the walkthroughs call (onlineSoftmax, decode, tiles, gradients, explain of a gradient
 * cell): the page's own, once its walkthroughs module is loaded (on the first walkthrough opened;
 * the first screen does not download it).
 */
export function practiceEngine() {
  return app.engine.loadWalkthroughs();
}

// ---- what each walkthrough computes --------------------------------------------------------

/** The softmax's input for head 1, first query: the row the forward softmax reads. */
function firstScoresRow(trace) {
  const weights = trace.steps.find((s) => s.id === 'weights' && (s.head ?? 0) === 0);
  const input = trace.steps[weights.inputs[0]];
  return input.axes[0] === 'queries' ? input.data[0] : input.data.map((r) => r[0]);
}

function compute(engine, id, result) {
  const walk = walkState();
  const { trace, problem } = result;
  switch (id) {
    case 'softmax': {
      const row = walk.row === null ? firstScoresRow(trace) : engine.parseMatrix(walk.row, 'row');
      const values = walk.row === null ? row : row.length === 1 ? row[0] : null;
      if (!values) throw new Error(`row: one row of numbers expected, got ${row.length} rows`);
      const settings = { subtractMax: walk.subtractMax, precision: walk.precision ?? trace.meta.precision };
      const softmax = engine.onlineSoftmax(values, settings);
      return { softmax, settings, positions: softmax.steps.length + 1 };
    }
    case 'decode': {
      const decoding = engine.decode(problem);
      return { decoding, positions: decoding.steps.length };
    }
    case 'tiles': {
      // One position per tile: past a few thousand, stepping through them teaches nothing.
      const { queries, keys, heads } = trace.meta;
      const count = heads * Math.ceil(queries / walk.blocks.block_q) * Math.ceil(keys / walk.blocks.block_k);
      if (walk.blocks.block_q >= 1 && walk.blocks.block_k >= 1 && count > MAX_TILES) throw new Error(`${count} tiles to step through: choose larger blocks (at most ${MAX_TILES} tiles)`);
      const tiles = engine.tiles(problem, walk.blocks);
      return { tiles, positions: tiles.tiles.length + 1 };
    }
    case 'gradients': {
      const shape = [trace.output.length, trace.output[0].length];
      // A dO of another shape than the output (an edit changed it) is dropped for good.
      if (walk.dO && (walk.dO.length !== shape[0] || walk.dO[0].length !== shape[1])) store.dispatch(setWalk, { dO: null });
      const { dO } = walkState();
      const gradients = engine.gradients(problem, dO ? { dO } : {});
      // With one head, the heads' dQ, dK, dV put side by side are head 1's again: left out (they
      // would repeat three steps, each number "dV₁,₁ = dV₁,₁").
      const steps = gradients.steps;
      const sameAsHead = (x) => gradients.meta.heads === 1 && (x.head === null || x.head === undefined) && x.inputs.length === 1 &&
        steps[x.inputs[0]]?.id === x.id && String(steps[x.inputs[0]].shape) === String(x.shape);
      const order = steps.map((s, i) => (s.id.startsWith('d') && !sameAsHead(s) ? i : -1)).filter((i) => i >= 0);
      return { gradients, order, positions: order.length };
    }
    case 'recurrent': {
      const recurrent = engine.recurrent(problem, walk.chunk ? { chunk: walk.chunk } : {});
      return { recurrent, positions: recurrent.steps.length + 1 };
    }
    default:
      return { positions: 0 };
  }
}

// ---- drawing -----------------------------------------------------------------------------------

const tooLarge = (step) => step.shape[0] > TABLE_MAX_ROWS || step.shape[1] > TABLE_MAX_COLS;

/** A step's numbers as the step cards draw them (steps.js): a table, or a heatmap when too large. */
function matrixHtml(step, labels, ctx) {
  if (!tooLarge(step)) return tableHtml(step, labels, ctx, null);
  heatmapSteps.push(step);
  return heatmapHtml(step, labels);
}
/** The steps drawn as heatmaps in the HTML being built, in order: painted once it is in the page. */
const heatmapSteps = [];

/** A matrix in its own scroll box, with a caption. */
function matrixBox(step, labels, ctx, caption, cls = '') {
  return `<figure class="pr-matrix${cls ? ` ${cls}` : ''}" data-layout="${ctx.layout}"><figcaption>${caption}</figcaption><div class="matrix-wrap">${matrixHtml(step, labels, ctx)}</div></figure>`;
}

/** A small table of named rows of numbers over labelled columns; `now`: the column to mark. */
function recordTable(caption, colLabels, rows, now = -1) {
  let html = `<table class="matrix pr-record"><caption>${caption}</caption><thead><tr><th scope="col"></th>`;
  colLabels.forEach((c, j) => { html += `<th scope="col"${j === now ? ' class="pr-now"' : ''}>${escapeHtml(c)}</th>`; });
  html += '</tr></thead><tbody>';
  for (const { name, id, values } of rows) {
    html += `<tr data-row="${id}"><th scope="row">${name}</th>`;
    values.forEach((v, j) => {
      const cls = [j === now ? 'pr-now' : '', v === undefined ? 'pr-later' : ''].filter(Boolean).join(' ');
      html += `<td${cls ? ` class="${cls}"` : ''}>${v === undefined ? '' : cellFmt(v, app.result.ctx.decimals)}</td>`;
    });
    html += '</tr>';
  }
  return `<div class="matrix-wrap">${html}</tbody></table></div>`;
}

const names = (list, from, to, word) => Array.from({ length: to - from }, (_, i) => list[from + i] ?? `${word}${from + i + 1}`);
const features = (n) => Array.from({ length: n }, (_, i) => String(i + 1));
/** A plain matrix as a step-like object for tableHtml. */
const plain = (id, data, kind = 'signed', title = id) => ({ id, head: 0, title, kind, data, shape: [data.length, data[0]?.length ?? 0], axes: ['queries', 'features'], given: [], inputs: [] });
const grid = (rows, cols, rowTitle, colTitle) => ({ rows, cols, rowTitle, colTitle });

function softmaxBody(view) {
  const { softmax } = view;
  const i = walkState().index;
  const n = softmax.steps.length;
  const shown = (key) => softmax.steps.map((s, j) => (j <= i ? s[key] : undefined));
  const rows = [
    { name: 'x', id: 'x', values: softmax.steps.map((s) => s.x) },
    { name: 'running max m', id: 'm', values: shown('m_after') },
    { name: 'rescale e<sup>m − m′</sup>', id: 'rescale', values: shown('rescale') },
    { name: 'running sum ℓ', id: 'l', values: shown('l_after') },
  ];
  if (i >= n) rows.push({ name: 'weight e<sup>x − m</sup> / ℓ', id: 'weight', values: softmax.weights });
  const warn = i >= n && softmax.warnings.length ? `<p class="warning" id="pr-overflow">⚠ ${escapeHtml(softmax.warnings.join(' '))}</p>` : '';
  return recordTable(`Entry by entry, ${view.settings.subtractMax ? 'subtracting' : 'not subtracting'} the running max, in ${view.settings.precision}`,
    softmax.steps.map((s) => `entry ${s.j + 1}`), rows, i < n ? i : -1) + warn;
}

/** The new token's view of a step of the trace (K or V, head 1): rows 0..t, keys axis first. */
function cacheSlice(step, t) {
  const keysFirst = step.axes[0] === 'keys';
  const data = keysFirst ? step.data.slice(0, t + 1) : step.data.map((r) => r.slice(0, t + 1));
  return { ...step, data, shape: [data.length, data[0].length] };
}

function decodeBody(view) {
  const walk = walkState();
  const { decoding } = view;
  const { trace, ctx } = app.result;
  const s = decoding.steps[walk.index];
  const heads = s.weights.length;
  const pick = (id) => trace.steps.find((x) => x.id === id && x.head === 0);
  const K = cacheSlice(pick('K_rot') ?? pick('K'), s.t);
  const V = cacheSlice(pick('V'), s.t);
  const headNames = Array.from({ length: heads }, (_, h) => `head ${h + 1}`);
  const keys = names(ctx.tokensK, 0, s.cache_rows, 't');
  const upTo = decoding.steps.slice(0, walk.index + 1);
  const sum = (key) => upTo.reduce((a, x) => a + x[key], 0);
  const kvNote = heads > 1 ? ' (head 1’s key/value head)' : '';
  // Decoding assumes one sequence attending to itself, causally: say so where the page's problem
  // differs (not causal, or keys named apart from the queries), so its numbers are not a surprise.
  const problem = app.result.problem ?? {};
  const causal = Boolean(problem.options?.causal);
  const ownKey = (ctx.tokensK ?? []).some((k, i) => k !== ctx.tokensQ?.[i]);
  const note = `<p class="pr-note" id="pr-decode-note">Decoding generates one sequence token by token, so it is always causal self-attention: token t’s query reads the keys and values of tokens 1 to t, its own included${
    ownKey ? ` (here key t is token t’s own key: ${escapeHtml(quoteToken(keys[s.t] ?? ''))} for ${escapeHtml(ctx.tokensQ[s.t] === undefined ? `t${s.t + 1}` : quoteToken(ctx.tokensQ[s.t]))})` : ''}.${
    causal ? '' : ' Your problem is not causal: its weights let every query read every key, so they differ from these.'}</p>`;
  return `${note}<div class="pr-row">
    ${matrixBox(K, axisLabels(K, ctx), ctx, `The cache: ${K.title}${kvNote}, ${s.t} cached + 1 new`, 'pr-cache')}
    ${matrixBox(V, axisLabels(V, ctx), ctx, `The cache: ${V.title}${kvNote}`, 'pr-cache')}
  </div><div class="pr-row">
    ${matrixBox(plain('decode-scores', s.scores, 'signed', 'New scores'), grid(headNames, keys, 'head', 'key'), ctx, 'The new row of scores QKᵀ (before scaling)')}
    ${matrixBox(plain('decode-weights', s.weights, 'probability', 'New weights'), grid(headNames, keys, 'head', 'key'), ctx, 'The new row of weights')}
    ${matrixBox(plain('decode-output', [s.output], 'signed', 'Its output'), grid([ctx.tokensQ[s.t] ?? `t${s.t + 1}`], features(s.output.length), 'token', 'dim'), ctx, 'Its output')}
  </div>
  <table class="pr-work"><caption>Multiply-adds</caption><thead><tr><th></th><th scope="col">with the cache</th><th scope="col">without (recomputed)</th></tr></thead><tbody>
    <tr><th scope="row">this token</th><td id="pr-flops-cached">${s.flops_cached}</td><td id="pr-flops-full">${s.flops_full}</td></tr>
    <tr><th scope="row">tokens 1–${s.t + 1}</th><td id="pr-flops-cached-sum">${sum('flops_cached')}</td><td id="pr-flops-full-sum">${sum('flops_full')}</td></tr>
  </tbody></table>
  <p class="pr-check">Row ${s.t + 1} of full causal attention (engine.run with causal): largest difference <strong id="pr-difference">${fmt(s.difference, ctx.decimals)}</strong>.</p>`;
}

/** A list of numbers as one row of a step-like object. */
const rowOf = (id, values) => plain(id, [values]);

function recurrentBody(view) {
  const { recurrent } = view;
  const { ctx } = app.result;
  const n = recurrent.steps.length;
  let html = '';
  if (walkState().index < n) {
    const s = recurrent.steps[walkState().index];
    const [first, end] = s.tokens;
    const tokens = names(ctx.tokensQ, first, end, 't');
    const S = plain('recurrent-state', s.state);
    html += `<div class="pr-row">
      ${matrixBox(S, grid(features(s.state.length), features(s.state[0]?.length ?? 0), 'φ(k) feature', 'value feature'), ctx, `The state S after ${end - first > 1 ? `tokens ${first + 1}–${end}` : `token ${first + 1}`}${recurrent.steps.some((x) => x.head > 0) ? `, head ${s.head + 1}` : ''}: Σ γ<sup>distance</sup> φ(k) vᵀ`, 'pr-state')}
      ${s.z.length ? matrixBox(rowOf('recurrent-z', s.z), grid(['z'], features(s.z.length), '', 'φ(k) feature'), ctx, 'z: Σ γ<sup>distance</sup> φ(k), the normalizer’s state') : ''}
    </div><div class="pr-row">
      ${s.intra.length ? matrixBox(plain('recurrent-intra', s.intra), grid(tokens, features(s.intra[0].length), 'token', 'dim'), ctx, 'From inside the chunk (its own causal linear attention)') : ''}
      ${s.inter.length ? matrixBox(plain('recurrent-inter', s.inter), grid(tokens, features(s.inter[0].length), 'token', 'dim'), ctx, 'From the state carried in') : ''}
      ${matrixBox(plain('recurrent-output', s.output), grid(tokens, features(s.output[0]?.length ?? 0), 'token', 'dim'), ctx, 'Output row' + (end - first > 1 ? 's' : '') + ': φ(q)ᵀS / φ(q)ᵀz')}
    </div>
    <p class="pr-check">The parallel form’s row${end - first > 1 ? 's' : ''} (engine.run): largest difference <strong id="pr-difference">${fmt(s.difference, ctx.decimals)}</strong>.</p>`;
  } else {
    html += `<p class="pr-check">Every token: the ${recurrent.chunk ? `chunked form (chunks of ${recurrent.chunk})` : 'recurrent form'} against the parallel form, largest difference <strong id="pr-difference">${fmt(recurrent.max_difference, ctx.decimals)}</strong>.</p>`;
  }
  html += '<table class="pr-work" id="pr-costs"><caption>Each form’s cost on this problem</caption><thead><tr><th></th><th scope="col">multiply-adds</th><th scope="col">numbers kept</th></tr></thead><tbody>';
  for (const c of recurrent.costs) html += `<tr data-form="${c.form}"><th scope="row">${c.form === 'softmax' ? 'softmax attention (KV cache)' : c.form}</th><td>${c.multiply_adds}</td><td>${c.state}</td></tr>`;
  html += '</tbody></table>';
  if (recurrent.warnings.length) html += `<p class="warning">⚠ ${escapeHtml(recurrent.warnings.join(' '))}</p>`;
  return html;
}

/** The softmax's input of a head: the score matrix the tiles never store. */
function scoreStep(trace, head) {
  const weights = trace.steps.find((s) => s.id === 'weights' && (s.head ?? 0) === head);
  return trace.steps[weights.inputs[0]];
}

function tilesBody(view) {
  const { tiles } = view;
  const { trace, ctx } = app.result;
  const final = walkState().index >= tiles.tiles.length;
  const tile = final ? null : tiles.tiles[walkState().index];
  const head = tile?.head ?? 0;
  const scores = scoreStep(trace, head);
  const bytes = `<p class="pr-bytes">Bytes between HBM and SRAM (${tiles.element_bytes} per number): these ${tiles.block_q} × ${tiles.block_k} tiles <strong id="pr-bytes-flash">${tiles.bytes_flash}</strong>, the standard algorithm <strong id="pr-bytes-standard">${tiles.bytes_standard}</strong>.</p>`;
  let html = `<figure class="pr-matrix pr-scores" data-head="${head}"><figcaption>${escapeHtml(scores.title)}${trace.meta.heads > 1 ? `, head ${head + 1}` : ''}: <span class="never-stored-note">never stored</span>; the algorithm holds one tile at a time${final ? '' : ' (the coloured one)'}</figcaption>
    <div class="matrix-wrap">${matrixHtml(scores, axisLabels(scores, ctx), ctx)}</div></figure>${bytes}`;
  if (final) {
    const out = plain('output', tiles.output, 'signed', 'Output');
    html += matrixBox(out, grid(names(ctx.tokensQ, 0, tiles.output.length, 't'), features(tiles.output[0].length), 'token', 'dim'), ctx, `The output, Õ / ℓ: largest difference from the trace’s <strong id="pr-tiles-difference">${fmt(tiles.max_difference, ctx.decimals)}</strong>`);
    return html;
  }
  if (tile.skipped) return html;
  const [q0, q1] = tile.queries;
  const qs = names(ctx.tokensQ, q0, q1, 't');
  html += recordTable('Per query of the tile', ['m before', 'm after', 'rescale e^(m − m′)', 'ℓ before', 'ℓ after'],
    qs.map((name, i) => ({ name: escapeHtml(name), id: `q${q0 + i}`, values: [tile.m_before[i], tile.m_after[i], tile.rescale[i], tile.l_before[i], tile.l_after[i]] })));
  const columns = trace.meta.layout === 'columns';
  const partial = (data, caption) => {
    const labels = columns ? grid(features(data.length), qs, 'dim', 'query') : grid(qs, features(data[0].length), 'query', 'dim');
    return matrixBox(plain(caption, data), labels, ctx, caption);
  };
  html += `<div class="pr-row">${partial(tile.partial_before, 'Partial output Õ before')}${partial(tile.partial_after, 'Partial output Õ after')}</div>`;
  return html;
}

/** Greys the score matrix but for the current tile; marks the tiles already visited. */
function markTiles(view) {
  const table = document.querySelector('#practice-body .pr-scores table');
  if (!table) return;
  const { tiles } = view;
  const tile = tiles.tiles[walkState().index];
  const columns = app.result.trace.meta.layout === 'columns';
  const inside = (t, q, k) => t && q >= t.queries[0] && q < t.queries[1] && k >= t.keys[0] && k < t.keys[1];
  const head = tile?.head ?? 0;
  const done = tiles.tiles.slice(0, walkState().index).filter((t) => t.head === head && !t.skipped);
  for (const td of table.querySelectorAll('td[data-r]')) {
    const [r, c] = [Number(td.dataset.r), Number(td.dataset.c)];
    const [q, k] = columns ? [c, r] : [r, c];
    td.classList.toggle('pr-block-top', q > 0 && q % tiles.block_q === 0);
    td.classList.toggle('pr-block-left', k > 0 && k % tiles.block_k === 0);
    if (inside(tile, q, k) && !tile.skipped) {
      // The tile's own numbers, as the algorithm computes them.
      const v = tile.scores[columns ? k - tile.keys[0] : q - tile.queries[0]][columns ? q - tile.queries[0] : k - tile.keys[0]];
      td.textContent = cellFmt(v, app.result.ctx.decimals);
      td.classList.add('tile-now');
    } else {
      td.classList.add('never-stored');
      td.classList.toggle('tile-done', done.some((t) => inside(t, q, k)));
      td.classList.toggle('tile-skipped', Boolean(tile?.skipped && inside(tile, q, k)));
    }
  }
}

function gradientsBody(view) {
  const { gradients, order } = view;
  const { ctx } = app.result;
  const index = order[walkState().index];
  const step = gradients.steps[index];
  const gctx = { ...ctx, steps: gradients.steps };
  const head = step.head != null && step.head >= 0 && gradients.meta.heads > 1 ? ` <span class="head-tag">head ${step.head + 1}</span>` : '';
  return `<article class="step pr-gradient" data-step="${step.id}" data-head="${step.head ?? -1}" data-index="${index}">
    <header class="step-head"><h3>${escapeHtml(step.title)}${head}</h3><span class="shape">${step.shape[0]} × ${step.shape[1]}</span></header>
    <div class="formula">${mathHtml(step.tex, true)}</div>
    <div class="matrix-wrap">${matrixHtml(step, axisLabels(step, gctx), gctx)}</div>
  </article><div id="pr-drill" class="pr-drill" aria-live="polite"></div>`;
}

// ---- controls of each walkthrough --------------------------------------------------------------

function controlsHtml(id, view) {
  const walk = walkState();
  const { trace } = app.result;
  if (id === 'softmax') {
    const precision = walk.precision ?? trace.meta.precision;
    return `<label for="pr-row">Row</label> <input id="pr-row" type="text" size="28" spellcheck="false" placeholder="the problem’s first row of scores" value="${escapeHtml(walk.row ?? '')}">
      <button type="button" id="pr-row-reset">The problem’s row</button>
      <label><input type="checkbox" id="pr-subtract"${walk.subtractMax ? ' checked' : ''}> Subtract the running max</label>
      <label for="pr-precision">in</label> <select id="pr-precision"><option value="float64"${precision === 'float64' ? ' selected' : ''}>float64</option><option value="float32"${precision === 'float32' ? ' selected' : ''}>float32</option></select>
      <p class="hint">Type your own row (e.g. <code>1 100 3</code>); switch the max off in float32 and a score above 88.7 overflows.</p>`;
  }
  if (id === 'tiles') {
    return `<label for="pr-block-q">Block of queries B<sub>r</sub></label> <input id="pr-block-q" type="number" min="1" step="1" size="3" value="${walk.blocks.block_q}">
      <label for="pr-block-k">block of keys B<sub>c</sub></label> <input id="pr-block-k" type="number" min="1" step="1" size="3" value="${walk.blocks.block_k}">`;
  }
  if (id === 'recurrent') {
    return `<label for="pr-chunk">Chunk size</label> <input id="pr-chunk" type="number" min="1" step="1" size="3" placeholder="1" value="${walk.chunk ?? ''}">
      <p class="hint">Empty: token by token (the recurrent form). A size C: the chunked form, C tokens at a time in parallel plus the state carried from the chunks before. It needs causal linear attention (Options, “Attention variants”).</p>`;
  }
  if (id === 'gradients') {
    const out = trace.output;
    const dO = walk.dO ?? out.map((r) => r.map(() => 1));
    let html = '<p class="pr-do-caption" id="pr-do-caption">dO, the loss’s gradient at the output (default all ones): type to change it</p><table class="pr-do" aria-labelledby="pr-do-caption"><tbody>';
    dO.forEach((row, r) => {
      html += '<tr>';
      row.forEach((v, c) => { html += `<td><input class="pr-do-cell" id="pr-do-${r}-${c}" data-r="${r}" data-c="${c}" size="4" value="${v}" aria-label="dO row ${r + 1}, column ${c + 1}"></td>`; });
      html += '</tr>';
    });
    return `${html}</tbody></table><button type="button" id="pr-do-ones">All ones</button><p id="pr-do-error" class="error" role="alert" hidden></p>`;
  }
  return '';
}

/** What the fields of walkthrough `id` show besides what was typed into them. */
function controlsKey(id) {
  const { trace } = app.result;
  if (id === 'softmax') return `softmax ${trace.meta.precision}`;
  if (id === 'gradients') return `gradients ${trace.output.length}x${trace.output[0].length}`;
  return id;
}

function bindControls(id) {
  const redo = (patch) => store.dispatch(setWalk, { ...patch, index: 0 });
  if (id === 'softmax') {
    $('pr-row').addEventListener('change', (e) => redo({ row: /** @type {HTMLInputElement | HTMLSelectElement} */ (e.target).value.trim() || null }));
    $('pr-row-reset').addEventListener('click', () => { $('pr-row').value = ''; redo({ row: null }); });
    $('pr-subtract').addEventListener('change', (e) => store.dispatch(setWalk, { subtractMax: /** @type {HTMLInputElement} */ (e.target).checked }));
    $('pr-precision').addEventListener('change', (e) => store.dispatch(setWalk, { precision: /** @type {HTMLInputElement | HTMLSelectElement} */ (e.target).value }));
  } else if (id === 'tiles') {
    for (const [input, key] of [['pr-block-q', 'block_q'], ['pr-block-k', 'block_k']]) {
      $(input).addEventListener('change', (e) => redo({ blocks: { ...walkState().blocks, [key]: Number(/** @type {HTMLInputElement | HTMLSelectElement} */ (e.target).value) } }));
    }
  } else if (id === 'recurrent') {
    $('pr-chunk').addEventListener('change', (e) => redo({ chunk: /** @type {HTMLInputElement | HTMLSelectElement} */ (e.target).value.trim() === '' ? null : Number(/** @type {HTMLInputElement | HTMLSelectElement} */ (e.target).value) }));
  } else if (id === 'gradients') {
    for (const input of /** @type {NodeListOf<HTMLInputElement>} */ (document.querySelectorAll('.pr-do-cell'))) input.addEventListener('change', readDO);
    $('pr-do-ones').addEventListener('click', () => {
      for (const input of /** @type {NodeListOf<HTMLInputElement>} */ (document.querySelectorAll('.pr-do-cell'))) input.value = '1';
      $('pr-do-error').hidden = true;
      redo({ dO: null });
    });
  }
}

/** dO from its grid, each cell read as the page's grids read a number (engine.parseCell). */
async function readDO() {
  const engine = await practiceEngine();
  const error = $('pr-do-error');
  try {
    const dO = app.result.trace.output.map((r) => r.map(() => 1));
    for (const input of /** @type {NodeListOf<HTMLInputElement>} */ (document.querySelectorAll('.pr-do-cell'))) {
      const [r, c] = [Number(input.dataset.r), Number(input.dataset.c)];
      dO[r][c] = engine.parseCell(input.value, 'dO', r + 1, c + 1);
    }
    error.hidden = true;
    store.dispatch(setWalk, { dO, index: 0 });
  } catch (err) {
    error.hidden = false;
    error.textContent = err.message;
  }
}

// ---- exports of the open walkthrough -----------------------------------------------------------

const EXPORT_LABELS = { 'copy-latex': 'Copy LaTeX', latex: 'LaTeX (.tex)', csv: 'CSV', json: 'JSON', numpy: 'NumPy script (.py)' };

/**
 * What each walkthrough exports, by the package's builders: its result, LaTeX (`standalone` for
 * the .tex file, a fragment for the clipboard), CSV and JSON, and for gradients the NumPy script
 * that rebuilds them. The online softmax has none.
 */
const WALK_EXPORTS = {
  decode: {
    file: 'attention-decode',
    latex: (view, opts) => decodeLatex(view.decoding, opts),
    csv: (view) => decodeCsv(view.decoding),
    json: (view) => stringify(view.decoding),
  },
  tiles: {
    file: 'attention-tiles',
    latex: (view, opts) => tilesLatex(view.tiles, opts),
    csv: (view) => tilesCsv(view.tiles),
    json: (view) => stringify(view.tiles),
  },
  gradients: {
    file: 'attention-gradients',
    latex: (view, opts) => solutionLatex(app.result.problem, view.gradients, { ...opts, title: 'The backward pass, step by step' }),
    csv: (view) => traceCsv(view.gradients),
    json: (view) => traceJson(view.gradients),
    numpy: (view) => numpyScript(app.result.problem, view.gradients, { gradients: true, recipe: app.state.recipe || undefined }),
  },
};

/** The export buttons of walkthrough `id` (drawn again only when the walkthrough changes). */
function renderExportRow(id, view) {
  const row = $('practice-export');
  const exports = WALK_EXPORTS[id];
  row.hidden = !exports || Boolean(view.error);
  if (row.dataset.walk === id) return;
  row.dataset.walk = id;
  if (!exports) { row.replaceChildren(); return; }
  const formats = ['copy-latex', 'latex', 'csv', 'json', ...(exports.numpy ? ['numpy'] : [])];
  row.innerHTML = '<span class="pr-export-label">Export this walkthrough</span> ' +
    formats.map((f) => `<button type="button" data-walk-export="${f}">${EXPORT_LABELS[f]}</button>`).join(' ') +
    ' <span id="practice-export-status" class="pr-export-status" role="status" aria-live="polite"></span>';
}

/** Makes one export of the open walkthrough: { name, type, text }. */
function walkExport(format) {
  const exports = WALK_EXPORTS[walkState().id];
  const view = drawn.view;
  if (!exports || !view || view.error) throw new Error('nothing to export: the walkthrough was not computed');
  const { ctx } = app.result;
  const latex = (standalone) => exports.latex(view, { decimals: ctx.decimals, standalone, labels: { tokensQ: ctx.tokensQ, tokensK: ctx.tokensK } });
  switch (format) {
    case 'copy-latex': return { text: latex(false) };
    case 'latex': return { name: `${exports.file}.tex`, type: 'text/x-tex', text: latex(true) };
    case 'csv': return { name: `${exports.file}.csv`, type: 'text/csv', text: exports.csv(view) };
    case 'json': return { name: `${exports.file}.json`, type: 'application/json', text: `${exports.json(view)}\n` };
    case 'numpy': return { name: `${exports.file.replace(/-/g, '_')}.py`, type: 'text/x-python', text: exports.numpy(view) };
    default: throw new Error(`unknown export ${format}`);
  }
}

async function onWalkExport(button) {
  // An exercise's numbers stay hidden: no export while one is on (as the step cards' Copy LaTeX).
  if (document.body.classList.contains('exercise-on')) return;
  const status = $('practice-export-status');
  const format = button.dataset.walkExport;
  try {
    const out = walkExport(format);
    if (format === 'copy-latex') {
      await toClipboard(out.text);
      status.textContent = 'LaTeX copied.';
    } else {
      download(out.name, out.text, out.type);
      status.textContent = `Downloaded ${out.name}.`;
    }
  } catch (err) {
    status.textContent = `Not exported: ${err.message}`;
  }
}

// ---- the walk ----------------------------------------------------------------------------------

function sentence(id, view) {
  const walk = walkState();
  const { ctx } = app.result;
  const labels = { tokensQ: ctx.tokensQ, tokensK: ctx.tokensK, options: ctx.options };
  switch (id) {
    case 'softmax': return narrateOnlineSoftmax(view.softmax, walk.index, view.settings);
    case 'decode': return narrateDecodeStep(view.decoding, walk.index, labels);
    case 'tiles': return narrateTile(view.tiles, walk.index, labels);
    case 'recurrent': return recurrentSentence(view.recurrent, walk.index, labels);
    default: return narrateGradientStep(view.gradients, view.order[walk.index], labels);
  }
}

/** One sentence from the recurrent walk's numbers (what changed in the state, how far from the parallel form). */
function recurrentSentence(recurrent, index, labels) {
  const s = recurrent.steps[index];
  if (!s) {
    const softmax = recurrent.costs.find((c) => c.form === 'softmax');
    const form = recurrent.costs.find((c) => c.form === (recurrent.chunk ? 'chunked' : 'recurrent'));
    return `Softmax attention keeps ${softmax.state} numbers (its KV cache grows with every token); the ${form.form} form keeps ${form.state}, whatever the length.`;
  }
  const [first, end] = s.tokens;
  const who = end - first > 1 ? `Tokens ${first + 1}–${end}` : `${labels.tokensQ[first] ?? `t${first + 1}`}`;
  const head = recurrent.steps.some((x) => x.head > 0) ? ` (head ${s.head + 1})` : '';
  return `${who}${head}: the state S, faded by γ, adds φ(k)vᵀ${end - first > 1 ? ' for each token of the chunk' : ''}, and φ(q) reads the output from it, ` +
    `${s.difference === 0 ? 'exactly' : 'up to rounding'} the parallel form’s row.`;
}

function where(id, view) {
  const i = walkState().index;
  switch (id) {
    case 'softmax': return i < view.softmax.steps.length ? `Entry ${i + 1} of ${view.softmax.steps.length}` : 'The weights';
    case 'decode': return `Token ${i + 1} of ${view.positions}`;
    case 'tiles': return i < view.tiles.tiles.length ? `Tile ${i + 1} of ${view.tiles.tiles.length}` : 'The output';
    case 'recurrent': return i < view.recurrent.steps.length ? `${view.recurrent.chunk ? 'Chunk' : 'Token'} step ${i + 1} of ${view.recurrent.steps.length}` : 'Every form’s cost';
    default: return `Gradient step ${i + 1} of ${view.positions}`;
  }
}

/** Recomputes the open walkthrough on the current problem and draws it (nothing when closed). */
export async function renderPractice() {
  const panel = $('practice');
  if (!panel || panel.hidden || !walkState().id || !app.result) return;
  const run = ++drawn.run;
  const engine = await practiceEngine();
  if (run !== drawn.run) return;
  const { id } = walkState();
  for (const tab of panel.querySelectorAll('[role="tab"]')) tab.setAttribute('aria-selected', String(tab.dataset.walk === id));
  let view;
  try {
    view = compute(engine, id, app.result);
  } catch (err) {
    view = { error: err.message, positions: 0 };
  }
  drawn.view = view;
  renderExportRow(id, view);
  // The fields are drawn again only when what they show changes (another walkthrough, dO's
  // shape): an edit keeps its field, and the focus, in place.
  const controls = $('practice-controls');
  const key = controlsKey(id);
  if (controls.dataset.key !== key) {
    controls.innerHTML = controlsHtml(id, view);
    controls.dataset.key = key;
    bindControls(id);
  }
  if (view.error) {
    $('practice-pos').textContent = WALKS[id];
    $('practice-text').textContent = `Not computed: ${view.error}`;
    $('practice-body').innerHTML = '';
    $('pr-prev').disabled = true;
    $('pr-next').disabled = true;
    return;
  }
  // Fewer positions than before (an edit): the last one. Read below from the store.
  store.dispatch(walkTo, Math.max(0, Math.min(walkState().index, view.positions - 1)));
  $('practice-pos').textContent = `${WALKS[id]}: ${where(id, view)}`;
  $('practice-text').textContent = sentence(id, view);
  heatmapSteps.length = 0;
  const body = { softmax: softmaxBody, decode: decodeBody, tiles: tilesBody, gradients: gradientsBody, recurrent: recurrentBody }[id](view);
  $('practice-body').innerHTML = body;
  if (id === 'tiles') markTiles(view);
  $('practice-body').querySelectorAll('.heatmap canvas').forEach((canvas, i) => drawHeatmap(canvas, heatmapSteps[i]));
  // One tab stop in a gradient's table: its first number.
  const first = $('practice-body').querySelector('.pr-gradient td[data-r]');
  if (first) first.tabIndex = 0;
  $('pr-prev').disabled = walkState().index === 0;
  $('pr-next').disabled = walkState().index >= view.positions - 1;
}

function go(index) {
  if (!drawn.view || drawn.view.error) return;
  store.dispatch(walkTo, Math.max(0, Math.min(drawn.view.positions - 1, index)));
}

/** Opens walkthrough `id` (or closes the panel with null). */
export function openWalk(id) {
  const panel = $('practice');
  store.dispatch(chooseWalk, id);
  panel.hidden = !id;
  $('practice-open').setAttribute('aria-expanded', String(Boolean(id)));
  if (!id) return;
  if (!flags.present) setStepping(false);
  store.flush();
}

/** Worked calculation of a gradient cell (the walkthroughs module explains gradient steps). */
async function explainCell(td) {
  const card = td.closest('.pr-gradient');
  const drill = $('pr-drill');
  if (!card || !drill) return;
  const engine = await practiceEngine();
  const { gradients } = drawn.view;
  const step = gradients.steps[Number(card.dataset.index)];
  const [row, col] = [Number(td.dataset.r), Number(td.dataset.c)];
  const problem = walkState().dO ? { ...app.result.problem, dO: walkState().dO } : app.result.problem;
  let e;
  try {
    e = engine.explain(problem, { step: step.id, head: step.head, row, col });
  } catch (err) {
    drill.innerHTML = `<p class="hint">${escapeHtml(err.message)}</p>`;
    return;
  }
  const labels = axisLabels(step, { ...app.result.ctx, steps: gradients.steps });
  drill.innerHTML = explanationHtml(e, {
    step, rowLabel: labels.rows[row], colLabel: labels.cols[col], queryLabel: app.result.ctx.tokensQ[row],
    keyLabel: app.result.ctx.tokensK[col], keyLabels: app.result.ctx.tokensK, queryLabels: app.result.ctx.tokensQ, heads: gradients.meta.heads, decimals: app.result.ctx.decimals,
  });
}

/** In a gradient's table the arrow keys move between numbers and Enter explains one. */
function onCellKey(e) {
  const td = /** @type {HTMLElement} */ (e.target).closest?.('.pr-gradient td[data-r]');
  if (!td) return;
  if (e.key === 'Enter' || e.key === ' ') {
    e.preventDefault();
    explainCell(td);
    return;
  }
  const move = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] }[e.key];
  if (!move) return;
  e.preventDefault();
  e.stopPropagation(); // the walk's own arrow keys wait until the focus leaves the table
  const next = td.closest('table').querySelector(`td[data-r="${Number(td.dataset.r) + move[0]}"][data-c="${Number(td.dataset.c) + move[1]}"]`);
  if (!next) return;
  td.tabIndex = -1;
  next.tabIndex = 0;
  next.focus();
}

/** ← → (PageUp/PageDown, Home, End) move while the panel is open; fields keep their keys. */
function onKey(e) {
  const walk = walkState();
  if (!walk.id || $('practice').hidden || e.altKey || e.ctrlKey || e.metaKey) return;
  if (document.body.classList.contains('stepping') && !$('practice').contains(e.target)) return;
  if (/** @type {HTMLElement} */ (e.target).closest?.('input, textarea, select, [contenteditable="true"], #step-list td[data-r], canvas')) return;
  const n = drawn.view?.positions ?? 0;
  const moves = { ArrowRight: walk.index + 1, PageDown: walk.index + 1, ArrowLeft: walk.index - 1, PageUp: walk.index - 1, Home: 0, End: n - 1 };
  if (!(e.key in moves)) return;
  e.preventDefault();
  go(moves[e.key]);
}

export function bindPractice() {
  const tabs = $('practice-tabs');
  tabs.innerHTML = Object.entries(WALKS).map(([id, name]) => `<button type="button" role="tab" id="pr-tab-${id}" data-walk="${id}" aria-selected="false" aria-controls="practice-body">${name}</button>`).join('');
  tabs.addEventListener('click', (e) => {
    const tab = /** @type {HTMLElement} */ (e.target).closest('[role="tab"]');
    if (tab) openWalk(tab.dataset.walk);
  });
  $('practice-open').addEventListener('click', () => { openWalk(walkState().id ? null : 'softmax'); if (walkState().id) $('practice').scrollIntoView({ block: 'start' }); });
  $('practice-close').addEventListener('click', () => { openWalk(null); $('practice-open').focus(); });
  $('pr-prev').addEventListener('click', () => go(walkState().index - 1));
  $('pr-next').addEventListener('click', () => go(walkState().index + 1));
  $('practice-body').addEventListener('click', (e) => {
    const td = /** @type {HTMLElement} */ (e.target).closest('.pr-gradient td[data-r]');
    if (td) explainCell(td);
  });
  $('practice-body').addEventListener('keydown', onCellKey);
  $('practice-export').addEventListener('click', (e) => {
    const button = /** @type {HTMLElement} */ (e.target).closest('button[data-walk-export]');
    if (button) onWalkExport(button);
  });
  document.addEventListener('keydown', onKey);
  const asked = new URLSearchParams(location.search).get('walk');
  if (asked === null) return;
  if (asked in WALKS) {
    openWalk(asked);
    $('practice').scrollIntoView({ block: 'start' });
  } else {
    $('practice').hidden = false;
    $('practice-text').textContent = `walk=${asked}: not a walkthrough (${Object.keys(WALKS).join(', ')}). Choose one above.`;
  }
}

/** The walkthroughs follow the results (they start from the problem that computed) and their own state. */
export function mountPractice() {
  store.subscribe((page) => [...resultParts(page), page.ui.walk], ([result]) => { if (result) renderPractice(); });
}
