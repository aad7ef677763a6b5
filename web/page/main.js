// The explorer page: state -> problem -> engine.run -> views. Holds no attention maths: every
// number shown comes from engine.run / engine.explain; this file wires input, state and drawing.
import { loadAttention } from './lib/index.js';
import { presets, findPreset, presetProblem } from './lib/presets.js';
import {
  defaultState, activeInputs, splitTokens, VECTOR_INPUTS,
} from './state.js';
import { MatrixEditor } from './editor.js';
import { renderSteps, stepKey, headOf, axisLabels, metaOf } from './steps.js';
import { explanationHtml } from './explain.js';
import { renderWhy } from './why.js';
import { loadMath } from './math.js';
import { escapeHtml, fmt } from './format.js';
import { installShare, afterRender, readLink, writeLink, applyFlags, exerciseHiddenSteps } from './share.js';

const $ = (id) => document.getElementById(id);

let engine = null;
let state = defaultState();
const editors = new Map();
let lastGood = null;        // { trace, problem, steps }
let sweep = null;
let hashTimer = 0;
let whyTimer = 0;
let errorTimer = 0;
let lastHash = '';
const parseCache = new Map();

const INPUT_TITLES = {
  Q: 'Q', K: 'K', V: 'V', X: 'X', X_kv: 'X<sub>kv</sub>',
  W_Q: 'W<sub>Q</sub>', W_K: 'W<sub>K</sub>', W_V: 'W<sub>V</sub>', W_O: 'W<sub>O</sub>',
  b_Q: 'b<sub>Q</sub>', b_K: 'b<sub>K</sub>', b_V: 'b<sub>V</sub>', b_O: 'b<sub>O</sub>',
  mask: 'Mask M (additive)',
};
const COLUMN_TITLES = {
  W_Q: 'Ω<sub>Q</sub>', W_K: 'Ω<sub>K</sub>', W_V: 'Ω<sub>V</sub>', W_O: 'Ω<sub>O</sub>',
  b_Q: 'β<sub>Q</sub>', b_K: 'β<sub>K</sub>', b_V: 'β<sub>V</sub>', b_O: 'β<sub>O</sub>',
};

function describeInput(name) {
  const cols = state.options.layout === 'columns';
  const tok = cols ? 'one column per token' : 'one row per token';
  switch (name) {
    case 'X': return state.mode === 'cross' ? `the query tokens, ${tok}` : `the tokens, ${tok}`;
    case 'X_kv': return `the tokens keys and values come from, ${tok}`;
    case 'Q': return `queries, ${tok}`;
    case 'K': return `keys, ${tok}`;
    case 'V': return `values, ${tok}`;
    case 'W_Q': case 'W_K': case 'W_V':
      return cols ? `d × D: ${name[2]} = Ω<sub>${name[2]}</sub>X + β` : `d<sub>model</sub> × d: ${name[2]} = X·W<sub>${name[2]}</sub> + b`;
    case 'W_O': return cols ? 'output × (heads·d<sub>v</sub>)' : '(heads·d<sub>v</sub>) × output';
    case 'b_O': return 'one per output feature';
    default: return `one per ${cols ? 'row' : 'column'} of W<sub>${name[2]}</sub>`;
  }
}

// ---- text <-> matrices -------------------------------------------------------------------------

function numberText(v) {
  return v === Infinity ? 'inf' : v === -Infinity ? '-inf' : String(v);
}

function matrixToText(value) {
  if (!Array.isArray(value[0])) return value.map(numberText).join(' ');
  return value.map((row) => row.map(numberText).join(' ')).join('\n');
}

/** engine.parseMatrix with a small cache: { matrix } or { error }. */
function parse(text, name) {
  const key = `${name}\u0000${text}`;
  let r = parseCache.get(key);
  if (!r) {
    try {
      r = { matrix: engine.parseMatrix(text, name) };
    } catch (err) {
      r = { error: err.message };
    }
    if (parseCache.size > 200) parseCache.clear();
    parseCache.set(key, r);
  }
  return r;
}

function asVector(m, name) {
  if (m.length === 1) return m[0];
  if (m.every((row) => row.length === 1)) return m.map((row) => row[0]);
  throw new Error(`${name} is ${m.length}×${m[0].length}: a bias is one row or one column of numbers`);
}

function tokenLists(shapes) {
  const q = splitTokens(state.tokens.q);
  const kOwn = splitTokens(state.tokens.k);
  const k = state.mode === 'self' || kOwn.length === 0 ? q : kOwn;
  const fill = (list, n) => Array.from({ length: Math.max(n ?? 0, list.length) }, (_, i) => list[i] ?? `t${i + 1}`);
  return { q: fill(q, shapes?.L), k: fill(k, shapes?.S) };
}

// ---- building the problem ----------------------------------------------------------------------

/** Query and key counts read off the parsed inputs (for sizing the mask), or null. */
function tokenCounts(parsed) {
  const cols = state.options.layout === 'columns';
  const count = (m) => (m ? (cols ? m[0].length : m.length) : undefined);
  if (state.mode === 'qkv') return { L: count(parsed.Q), S: count(parsed.K) };
  return { L: count(parsed.X), S: count(state.mode === 'cross' ? parsed.X_kv : parsed.X) };
}

function buildProblem() {
  const problem = {};
  const parsed = {};
  const errors = {};
  for (const name of activeInputs(state)) {
    const ed = editors.get(name);
    const text = state.inputs[name]?.text ?? '';
    if (ed?.localError) { errors[name] = ed.localError; continue; }
    if (!text.trim()) { errors[name] = `${name} is empty: type or paste a matrix`; continue; }
    const r = parse(text, name);
    if (r.error) { errors[name] = r.error; continue; }
    parsed[name] = r.matrix;
    try {
      problem[name] = VECTOR_INPUTS.has(name) ? asVector(r.matrix, name) : r.matrix;
    } catch (err) {
      errors[name] = err.message;
    }
  }
  const o = state.options;
  const options = { layout: o.layout, precision: o.precision, causal: o.causal };
  if (o.scale === 'custom') {
    const t = String(o.scaleCustom).trim();
    options.scale = t !== '' && Number.isFinite(Number(t)) ? Number(t) : t;
  } else options.scale = o.scale;
  if (o.softcap) options.softcap = Number(o.softcap);
  options.heads = Number(o.heads) || 1;
  options.kv_heads = Number(o.kv_heads) || options.heads;
  const counts = tokenCounts(parsed);
  if (o.mask === 'keep' && counts.L && counts.S) {
    const [r, c] = o.layout === 'columns' ? [counts.S, counts.L] : [counts.L, counts.S];
    const keep = Array.from({ length: r }, (_, i) => Array.from({ length: c }, (_, j) => (o.keepMask?.[i]?.[j] ?? 1) === 1));
    state.options.keepMask = keep.map((row) => row.map((v) => (v ? 1 : 0)));
    options.mask = keep;
  } else if (o.mask === 'additive') {
    const text = o.additiveMask ?? '';
    const r = text.trim() ? parse(text, 'mask') : { error: 'the mask is empty: type an additive mask (0 keeps, -inf hides)' };
    if (r.error) errors.mask = r.error;
    else options.mask = r.matrix;
  }
  problem.options = options;
  return { problem, errors, counts };
}

// ---- errors next to their input ------------------------------------------------------------------

const INPUT_NAME_RE = /\b(X_kv|W_Q|W_K|W_V|W_O|b_Q|b_K|b_V|b_O|mask|X|Q|K|V)\b/;

function placeRunError(err) {
  const active = new Set([...activeInputs(state), ...(state.options.mask === 'additive' ? ['mask'] : [])]);
  const field = String(err.field ?? '');
  if (field.startsWith('options.') && field !== 'options.mask') return { where: 'options', message: err.message };
  const named = field === 'options.mask' ? 'mask' : field.split('.')[0];
  if (active.has(named)) return { where: named, message: err.message };
  const m = INPUT_NAME_RE.exec(err.message);
  if (m && active.has(m[1])) return { where: m[1], message: err.message };
  if (m && m[1] === 'mask') return { where: 'options', message: err.message };
  if (/heads|scale|softcap|precision|layout/.test(err.message)) return { where: 'options', message: err.message };
  return { where: 'general', message: err.message };
}

function showErrors(errors) {
  for (const [name, ed] of editors) ed.setError(errors[name] ?? null);
  const opt = $('options-error');
  opt.hidden = !errors.options;
  opt.textContent = errors.options ?? '';
  const general = Object.entries(errors).filter(([k]) => !editors.has(k) && k !== 'options').map(([, v]) => v);
  const banner = $('run-error');
  const any = Object.keys(errors).length > 0;
  banner.hidden = !any;
  if (any) {
    const first = Object.entries(errors)[0];
    const where = general.length ? '' : first[0] === 'options' ? ' (see Options)' : ` (see ${first[0]} above)`;
    banner.innerHTML = `<strong>Not computed:</strong> ${escapeHtml(general[0] ?? first[1])}${where}.` +
      (lastGood ? ' <span class="hint">Showing the last good result, dimmed.</span>' : '');
  }
}

// ---- rendering --------------------------------------------------------------------------------

function stepContext(trace) {
  const meta = metaOf(trace);
  const tokens = tokenLists({ L: meta.queries, S: meta.keys });
  const o = state.options;
  return {
    meta,
    layout: o.layout,
    mode: state.mode,
    tokensQ: tokens.q,
    tokensK: tokens.k,
    decimals: clampDecimals(state.decimals),
    scaleMode: o.scale,
    scaleText: o.scale === 'custom' ? String(o.scaleCustom) : '',
    hasBias: state.mode !== 'qkv' && state.use.bias,
    hasWO: state.use.W_O,
    hasBO: state.use.W_O && state.use.b_O,
    causal: o.causal,
    maskKind: o.mask,
    softcap: o.softcap,
    hiddenSteps: [...(state.hide.steps ?? []), ...exerciseHiddenSteps(state)],
    collapsed: state.collapsed,
  };
}

function clampDecimals(d) {
  const n = Math.round(Number(d));
  return Number.isFinite(n) ? Math.min(12, Math.max(0, n)) : 4;
}

function renderResults() {
  const list = $('step-list');
  // Keep the drill-down panel out of the list while it is redrawn.
  const drill = $('drill');
  if (drill.parentElement !== $('results')) $('results').appendChild(drill);
  if (!lastGood) { list.innerHTML = ''; return; }
  const ctx = stepContext(lastGood.trace);
  lastGood.ctx = ctx;
  lastGood.steps = renderSteps(list, lastGood.trace, ctx);
  const warnings = lastGood.trace.warnings ?? [];
  $('warnings').innerHTML = warnings.map((w) => `<p class="warning">⚠ ${escapeHtml(w)}</p>`).join('');
  renderSelection(false);
  afterRender();
}

function renderSelection(focus) {
  const body = $('drill-body');
  for (const el of document.querySelectorAll('#step-list .selected')) el.classList.remove('selected');
  const open = state.open;
  if (!open || !lastGood) {
    body.innerHTML = '<p class="hint">Click a number in any step, or move to it with the arrow keys and press Enter, to see how it was computed.</p>';
    return;
  }
  const step = lastGood.steps.find((s) => s.id === open.step && headOf(s) === (open.head ?? -1));
  const [nr, nc] = step ? step.shape : [0, 0];
  if (!step || open.row >= nr || open.col >= nc) {
    state.open = null;
    renderSelection(false);
    return;
  }
  const key = stepKey(step);
  const card = document.querySelector(`#step-list article[data-key="${key}"]`);
  const td = card?.querySelector(`td[data-r="${open.row}"][data-c="${open.col}"]`);
  if (td) {
    td.classList.add('selected');
    const table = td.closest('table');
    for (const c of table.querySelectorAll('td[tabindex="0"]')) c.tabIndex = -1;
    td.tabIndex = 0;
    if (focus) td.focus();
  }
  const canvas = card?.querySelector('canvas');
  if (canvas) moveCursor(canvas, open.row, open.col, focus);
  let e;
  try {
    e = engine.explain(lastGood.problem, { step: open.step, head: open.head < 0 ? null : open.head, row: open.row, col: open.col });
  } catch (err) {
    body.innerHTML = `<p class="error">${escapeHtml(err.message)}</p>`;
    return;
  }
  const labels = axisLabels(step, lastGood.ctx);
  const columns = state.options.layout === 'columns';
  const scoreLike = ['scores', 'scaled', 'softcapped', 'masked', 'weights'].includes(step.id);
  const queryIdx = columns ? open.col : open.row;
  const keyIdx = columns ? open.row : open.col;
  body.innerHTML = explanationHtml(e, {
    rowLabel: labels.rows[open.row], colLabel: labels.cols[open.col],
    queryLabel: lastGood.ctx.tokensQ[queryIdx] ?? '', keyLabel: scoreLike ? (lastGood.ctx.tokensK[keyIdx] ?? '') : '',
    keyLabels: lastGood.ctx.tokensK, layout: state.options.layout, heads: lastGood.ctx.meta.heads,
    mode: state.mode, decimals: lastGood.ctx.decimals, scaleMode: state.options.scale, d_k: lastGood.ctx.meta.d_k,
  });
  // On narrow screens the panel follows the step it explains.
  if (card && window.matchMedia('(max-width: 959px)').matches) card.after($('drill'));
}

const SCROLLERS = '.formula, .drill-eq, .recipe pre, .grid-wrap, .matrix-wrap, .table-scroll, #drill';
const FOCUSABLE = 'a[href], button, input, select, textarea, [tabindex]';

/** A region that scrolls sideways (narrow screens) must be reachable from the keyboard. */
function markScrollables() {
  for (const el of document.querySelectorAll(SCROLLERS)) {
    const labelled = el.id === 'drill'; // an <aside> with its own heading, which scrolls down
    const scrolls = el.scrollWidth > el.clientWidth + 1 || (labelled && el.scrollHeight > el.clientHeight + 1);
    const reachable = el.querySelector(FOCUSABLE) !== null;
    if (scrolls && !reachable && !el.hasAttribute('tabindex')) {
      el.tabIndex = 0;
      if (!labelled) {
        el.setAttribute('role', 'region');
        el.setAttribute('aria-label', el.matches('pre') ? 'numpy lines (scrolls sideways)' : 'formula (scrolls sideways)');
      }
      el.dataset.scrollMark = '1';
    } else if ((!scrolls || reachable) && el.dataset.scrollMark) {
      el.removeAttribute('tabindex');
      if (!labelled) {
        el.removeAttribute('role');
        el.removeAttribute('aria-label');
      }
      delete el.dataset.scrollMark;
    }
  }
}

function moveCursor(canvas, r, c, focus) {
  const box = canvas.parentElement;
  const cursor = box.querySelector('.cursor');
  const nc = canvas.width, nr = canvas.height;
  const w = canvas.clientWidth / nc, h = canvas.clientHeight / nr;
  cursor.hidden = false;
  Object.assign(cursor.style, { left: `${c * w}px`, top: `${r * h}px`, width: `${Math.max(w, 3)}px`, height: `${Math.max(h, 3)}px` });
  canvas.dataset.r = r;
  canvas.dataset.c = c;
  const key = canvas.closest('.heatmap').dataset.key;
  const step = lastGood?.steps.find((s) => stepKey(s) === key);
  if (step) {
    const labels = axisLabels(step, lastGood.ctx);
    canvas.closest('.heatmap').querySelector('.heatmap-readout').textContent =
      `row ${r + 1} (${labels.rows[r]}), column ${c + 1} (${labels.cols[c]}): ${fmt(step.data[r][c], lastGood.ctx.decimals)}`;
  }
  if (focus) canvas.focus();
}

function renderWhyView() {
  if (!lastGood) return;
  let scaled = null, unscaled = null;
  const base = lastGood.problem;
  try {
    scaled = engine.run({ ...base, options: { ...base.options, scale: 'sqrt_dk' } });
    unscaled = engine.run({ ...base, options: { ...base.options, scale: 'none' } });
  } catch { /* the main run succeeded, so these do too; keep the view empty otherwise */ }
  renderWhy($('why-body'), {
    scaled, unscaled, sweep, tokensQ: lastGood.ctx.tokensQ, decimals: lastGood.ctx.decimals, layout: state.options.layout,
  });
}

function computeSweep() {
  const tokens = 16;
  const rows = [];
  for (const d of [2, 8, 32, 128, 512]) {
    const [Q, K, V] = engine.random(0, [
      { kind: 'randn', shape: [tokens, d] }, { kind: 'randn', shape: [tokens, d] }, { kind: 'randn', shape: [tokens, 1] },
    ]);
    const a = engine.run({ Q, K, V, options: { scale: 'none' } }).facts[0];
    const b = engine.run({ Q, K, V, options: { scale: 'sqrt_dk' } }).facts[0];
    const mean = (xs) => xs.reduce((s, x) => s + x, 0) / xs.length;
    rows.push({ d_k: d, before: a.scores_variance, after: b.scaled_variance, maxUnscaled: mean(a.max_weight), maxScaled: mean(b.max_weight) });
  }
  return { tokens, rows, numpy: `np.random.seed(0); Q = np.random.randn(${tokens}, d_k); K = np.random.randn(${tokens}, d_k)` };
}

// ---- the update loop ------------------------------------------------------------------------------

function update() {
  const t0 = performance.now();
  const { problem, errors } = buildProblem();
  let trace = null;
  if (Object.keys(errors).length === 0) {
    try {
      trace = engine.run(problem);
    } catch (err) {
      const { where, message } = placeRunError(err);
      errors[where] = message;
    }
  }
  // Grids follow text that parsed (text-mode edits, pastes).
  for (const name of activeInputs(state)) {
    const ed = editors.get(name);
    const text = state.inputs[name]?.text;
    if (ed && ed.mode === 'text' && text && !errors[name]) {
      const r = parse(text, name);
      if (r.matrix) ed.setMatrix(r.matrix);
    }
  }
  const t1 = performance.now();
  if (trace) lastGood = { trace, problem };
  // While someone types into a grid cell ("-", "1e"...), the half-typed number is not an error
  // yet: its message (and the dimming) wait for a short pause in typing.
  clearTimeout(errorTimer);
  const showProblems = () => {
    showErrors(errors);
    $('results').classList.toggle('stale', !trace && Boolean(lastGood));
    $('why').classList.toggle('stale', !trace && Boolean(lastGood));
    if (!trace) $('status').textContent = 'Input has a problem (see the message next to it); showing the last good result.';
  };
  const typingIn = document.activeElement?.matches?.('input.cell') ? document.activeElement.closest('.editor')?.dataset.input : null;
  const names = Object.keys(errors);
  if (!trace && lastGood && typingIn && names.length === 1 && names[0] === typingIn) errorTimer = setTimeout(showProblems, 700);
  else showProblems();
  if (trace) {
    renderResults();
    renderKeepMask();
    // The "why" view runs the problem twice more: right away for hand-sized problems, after
    // this frame for large ones so the steps show first.
    clearTimeout(whyTimer);
    const meta = metaOf(trace);
    if (meta.queries * meta.keys <= 4096) renderWhyView();
    else whyTimer = setTimeout(renderWhyView, 30);
  }
  void $('step-list').offsetHeight; // include layout in the measured time
  markScrollables();
  const t2 = performance.now();
  const status = $('status');
  if (trace) {
    const meta = metaOf(trace);
    status.textContent = `${trace.steps.length} steps for ${meta.queries} ${meta.queries === 1 ? 'query' : 'queries'} × ${meta.keys} keys, ` +
      `d_k = ${meta.d_k}, ${meta.heads} head${meta.heads > 1 ? 's' : ''}, ${meta.precision}: computed in ${(t1 - t0).toFixed(1)} ms, drawn in ${(t2 - t1).toFixed(1)} ms`;
    status.dataset.ms = String(t2 - t0);
  }
  scheduleHash();
}

function scheduleHash() {
  clearTimeout(hashTimer);
  hashTimer = setTimeout(async () => {
    const h = await writeLink(state);
    if (h !== lastHash) {
      lastHash = h;
      history.replaceState(null, '', `#${h}`);
    }
  }, 250);
}

// ---- editors ------------------------------------------------------------------------------------

function editorLabels(name) {
  const cols = state.options.layout === 'columns';
  const tk = tokenLists();
  const tokens = ['X', 'Q'].includes(name) ? tk.q : ['X_kv', 'K', 'V'].includes(name) ? tk.k : null;
  if (tokens) return cols ? { cols: tokens } : { rows: tokens };
  // With several heads, the projection's features are labelled by head: h1·1, h1·2, h2·1, ...
  const heads = name === 'W_Q' ? Number(state.options.heads) : ['W_K', 'W_V'].includes(name) ? Number(state.options.kv_heads) : 0;
  const ed = editors.get(name);
  const width = ed ? (cols ? ed.cells.length : ed.cells[0]?.length ?? 0) : 0;
  if (!(heads > 1) || !width || width % heads !== 0) return {};
  const d = width / heads;
  const features = Array.from({ length: width }, (_, j) => `h${Math.floor(j / d) + 1}·${(j % d) + 1}`);
  return cols ? { rows: features } : { cols: features };
}

function getEditor(name) {
  let ed = editors.get(name);
  if (!ed) {
    ed = new MatrixEditor({
      name,
      title: INPUT_TITLES[name],
      description: name === 'mask' ? '' : describeInput(name),
      vector: VECTOR_INPUTS.has(name),
      engine,
      decimals: () => clampDecimals(state.decimals),
      labels: () => editorLabels(name),
      onChange: (n, value) => {
        if (n === 'mask') state.options.additiveMask = value.text;
        else state.inputs[n] = value.numpy ? { text: value.text, numpy: value.numpy } : { text: value.text };
        markEdited();
        update();
      },
    });
    editors.set(name, ed);
  }
  return ed;
}

function markEdited() {
  if (!state.edited) {
    state.edited = true;
    showPresetSource();
  }
}

function setEditorValue(ed, text, numpy) {
  const r = text ? parse(text, ed.name) : { error: 'empty' };
  ed.setValue(text ?? '', r.matrix ? (ed.vector ? [r.matrix.flat()] : r.matrix) : null, numpy);
}

/** Rebuild the inputs panel for the current mode (keeps editors and their values). */
function layoutEditors() {
  const box = $('editors');
  const hidden = new Set(state.hide.inputs ?? []);
  box.replaceChildren();
  const cols = state.options.layout === 'columns';
  for (const name of activeInputs(state)) {
    const ed = getEditor(name);
    ed.el.querySelector('h3').innerHTML = (cols && COLUMN_TITLES[name]) || INPUT_TITLES[name];
    const desc = ed.el.querySelector('.editor-desc');
    if (desc) desc.innerHTML = describeInput(name);
    ed.el.hidden = hidden.has(name);
    box.appendChild(ed.el);
    if (!state.inputs[name]) state.inputs[name] = { text: defaultText(name) };
    setEditorValue(ed, state.inputs[name].text, state.inputs[name].numpy);
  }
  const optional = document.createElement('div');
  optional.className = 'optional-inputs';
  optional.innerHTML = `
    ${state.mode !== 'qkv' ? `<label><input type="checkbox" id="use-bias" ${state.use.bias ? 'checked' : ''}> biases b<sub>Q</sub>, b<sub>K</sub>, b<sub>V</sub></label>` : ''}
    <label><input type="checkbox" id="use-wo" ${state.use.W_O ? 'checked' : ''}> output projection W<sub>O</sub></label>
    ${state.use.W_O ? `<label><input type="checkbox" id="use-bo" ${state.use.b_O ? 'checked' : ''}> bias b<sub>O</sub></label>` : ''}`;
  box.appendChild(optional);
  optional.addEventListener('change', (ev) => {
    if (ev.target.id === 'use-bias') state.use.bias = ev.target.checked;
    if (ev.target.id === 'use-wo') state.use.W_O = ev.target.checked;
    if (ev.target.id === 'use-bo') state.use.b_O = ev.target.checked;
    markEdited();
    layoutEditors();
    update();
    document.getElementById(ev.target.id)?.focus();
  });
}

/** Sensible starting values for an input the user just switched on, sized from the last trace. */
function defaultText(name) {
  const meta = lastGood ? metaOf(lastGood.trace) : null;
  const cols = state.options.layout === 'columns';
  const step = (id) => lastGood?.trace.steps.find((s) => s.id === id && headOf(s) === 0);
  const zeros = (r, c) => Array.from({ length: r }, () => Array(c).fill(0));
  const eye = (n) => Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => (i === j ? 1 : 0)));
  const T = (m) => (cols ? m[0].map((_, j) => m.map((row) => row[j])) : m);
  switch (name) {
    case 'Q': case 'K': case 'V':
      if (meta && meta.heads === 1 && step(name)) return matrixToText(step(name).data);
      return matrixToText(T(name === 'V' ? [[1, 2], [3, 4]] : eye(2)));
    case 'X': return matrixToText(T([[1, 0, 1, 0], [0, 2, 0, 2], [1, 1, 1, 1]]));
    case 'X_kv': return state.inputs.X?.text ?? matrixToText(T([[1, 0, 0, 1], [0, 1, 1, 0]]));
    case 'W_Q': return matrixToText(T([[1, 0, 1], [1, 0, 0], [0, 0, 1], [0, 1, 1]]));
    case 'W_K': return matrixToText(T([[0, 0, 1], [1, 1, 0], [0, 1, 0], [1, 1, 0]]));
    case 'W_V': return matrixToText(T([[0, 2, 0], [0, 3, 0], [1, 0, 3], [1, 1, 0]]));
    case 'W_O': return matrixToText(eye(meta ? meta.d_v * meta.heads : 3));
    case 'b_Q': case 'b_K': return Array(meta ? meta.d_k * meta.heads : 3).fill(0).join(' ');
    case 'b_V': return Array(meta ? meta.d_v * meta.kv_heads : 3).fill(0).join(' ');
    case 'b_O': {
      const wo = parse(state.inputs.W_O?.text ?? '', 'W_O').matrix;
      return Array(wo ? (cols ? wo.length : wo[0].length) : 3).fill(0).join(' ');
    }
    default: return matrixToText(zeros(2, 2));
  }
}

// ---- masks --------------------------------------------------------------------------------------

function renderKeepMask() {
  const box = $('extras');
  const mode = state.options.mask;
  if (mode === 'additive') {
    const ed = getEditor('mask');
    if (ed.el.parentElement !== box) {
      box.replaceChildren(ed.el);
      if (!state.options.additiveMask && lastGood) {
        const m = lastGood.trace.steps.find((s) => s.id === 'scores');
        state.options.additiveMask = matrixToText(m.data.map((row) => row.map(() => 0)));
      }
      setEditorValue(ed, state.options.additiveMask);
      ed.el.querySelector('.editor-desc')?.remove();
    }
    return;
  }
  if (mode !== 'keep') { box.replaceChildren(); return; }
  const keep = state.options.keepMask;
  if (!keep || !lastGood) return;
  const ctx = stepContext(lastGood.trace);
  const scoresStep = lastGood.trace.steps.find((s) => s.id === 'scores');
  const labels = axisLabels(scoresStep, ctx);
  let html = `<div class="mask-editor"><h3>Mask: which keys each query may see</h3>
    <p class="hint">Click (or Enter/Space) a cell to hide that key from that query; hidden cells get −∞ before the softmax.</p>
    <table class="mask-grid"><caption class="visually-hidden">Keep-mask, ${labels.rowTitle}s by ${labels.colTitle}s</caption><thead><tr><th class="corner">${labels.rowTitle} ↓ ${labels.colTitle} →</th>`;
  html += labels.cols.map((c) => `<th scope="col">${escapeHtml(c)}</th>`).join('') + '</tr></thead><tbody>';
  keep.forEach((row, i) => {
    html += `<tr><th scope="row">${escapeHtml(labels.rows[i])}</th>`;
    row.forEach((v, j) => {
      html += `<td><button type="button" class="mask-cell${v ? '' : ' hidden-key'}" data-r="${i}" data-c="${j}" aria-pressed="${!v}"
        aria-label="${labels.rowTitle} ${escapeHtml(labels.rows[i])}, ${labels.colTitle} ${escapeHtml(labels.cols[j])}: ${v ? 'visible' : 'hidden'}">${v ? '✓' : '−∞'}</button></td>`;
    });
    html += '</tr>';
  });
  html += '</tbody></table></div>';
  const focused = document.activeElement?.closest?.('.mask-cell');
  const fr = focused?.dataset.r, fc = focused?.dataset.c;
  box.innerHTML = html;
  if (focused) box.querySelector(`.mask-cell[data-r="${fr}"][data-c="${fc}"]`)?.focus();
}

// ---- controls -------------------------------------------------------------------------------------

function fillPresetSelect() {
  const sel = $('preset');
  sel.innerHTML = presets.map((p) => `<option value="${p.id}">${escapeHtml(p.title)}</option>`).join('') +
    '<option value="">(your own: keep the current inputs)</option>';
}

function showPresetSource() {
  const p = state.preset ? findPreset(state.preset) : null;
  const el = $('preset-source');
  if (!p) { el.innerHTML = ''; return; }
  const src = p.url ? `<a href="${escapeHtml(p.url)}" rel="noopener">${escapeHtml(p.source)}</a>` : escapeHtml(p.source);
  el.innerHTML = `From: ${src}.${p.note ? ` ${escapeHtml(p.note)}` : ''}${state.edited ? ' <strong>(edited)</strong>' : ''}`;
}

function syncControls() {
  const o = state.options;
  $('preset').value = state.preset ?? '';
  for (const r of document.querySelectorAll('input[name="mode"]')) r.checked = r.value === state.mode;
  $('opt-layout').value = o.layout;
  $('opt-scale').value = o.scale;
  $('opt-scale-custom').hidden = o.scale !== 'custom';
  $('opt-scale-custom').value = o.scaleCustom;
  $('opt-causal').checked = o.causal;
  $('opt-mask').value = o.mask;
  $('opt-softcap').value = o.softcap || '';
  $('opt-heads').value = o.heads;
  $('opt-kvheads').value = o.kv_heads;
  $('opt-precision').value = o.precision;
  $('opt-decimals').value = state.decimals;
  $('tokens-q').value = state.tokens.q;
  $('tokens-k').value = state.tokens.k;
  $('tokens-k-wrap').hidden = state.mode === 'self';
  document.body.classList.toggle('no-chrome', Boolean(state.hide.chrome));
  $('recipe').hidden = !state.recipe;
  $('recipe').querySelector('code').textContent = state.recipe;
  showPresetSource();
}

function loadPreset(id) {
  const preset = findPreset(id);
  if (!preset) return;
  const { problem, numpy } = presetProblem(preset, engine);
  const s = defaultState();
  s.preset = id;
  s.mode = preset.mode;
  s.hide = state.hide;
  for (const [name, value] of Object.entries(problem)) {
    if (name === 'options') continue;
    s.inputs[name] = { text: matrixToText(value) };
  }
  s.recipe = [...new Set(Object.values(numpy))].join('\n');
  s.use.bias = ['b_Q', 'b_K', 'b_V'].some((n) => n in problem);
  s.use.W_O = 'W_O' in problem;
  s.use.b_O = 'b_O' in problem;
  const o = problem.options;
  for (const k of ['layout', 'causal', 'softcap', 'heads', 'precision']) if (o[k] !== undefined) s.options[k] = o[k];
  s.options.kv_heads = o.kv_heads ?? s.options.heads;
  if (o.scale === undefined || o.scale === 'sqrt_dk' || o.scale === 'none') s.options.scale = o.scale ?? 'sqrt_dk';
  else { s.options.scale = 'custom'; s.options.scaleCustom = String(o.scale); }
  s.tokens.q = (preset.tokens ?? []).join(' ');
  s.tokens.k = (preset.kvTokens ?? []).join(' ');
  s.decimals = state.decimals;
  state = s;
  lastGood = null;
  applyState();
}

function applyState() {
  syncControls();
  layoutEditors();
  $('extras').replaceChildren();
  update();
  renderKeepMask();
}

function bindControls() {
  $('preset').addEventListener('change', (e) => {
    if (e.target.value) loadPreset(e.target.value);
    else { state.preset = null; showPresetSource(); scheduleHash(); }
  });
  for (const r of document.querySelectorAll('input[name="mode"]')) {
    r.addEventListener('change', () => {
      if (!r.checked) return;
      state.mode = r.value;
      markEdited();
      $('tokens-k-wrap').hidden = state.mode === 'self';
      if (state.mode !== 'self' && !state.tokens.k) state.tokens.k = state.tokens.q;
      $('tokens-k').value = state.tokens.k;
      layoutEditors();
      update();
    });
  }
  const opt = (id, key, read = (el) => el.value, relayout = false) => {
    $(id).addEventListener(id === 'opt-causal' ? 'change' : 'input', (e) => {
      state.options[key] = read(e.target);
      markEdited();
      if (relayout) layoutEditors();
      if (key === 'scale') $('opt-scale-custom').hidden = state.options.scale !== 'custom';
      if (key === 'mask') $('extras').replaceChildren();
      update();
      if (key === 'mask') renderKeepMask();
    });
  };
  // Switching the layout keeps the problem: every matrix moves to the other convention (transposed).
  $('opt-layout').addEventListener('input', (e) => {
    if (e.target.value === state.options.layout) return;
    const T = (m) => m[0].map((_, j) => m.map((row) => row[j]));
    for (const [name, input] of Object.entries(state.inputs)) {
      if (VECTOR_INPUTS.has(name)) continue;
      const r = parse(input.text, name);
      if (r.matrix) state.inputs[name] = { text: matrixToText(T(r.matrix)) };
    }
    const o = state.options;
    if (o.keepMask) o.keepMask = T(o.keepMask);
    const m = o.additiveMask ? parse(o.additiveMask, 'mask') : {};
    if (m.matrix) {
      o.additiveMask = matrixToText(T(m.matrix));
      if (editors.has('mask')) setEditorValue(editors.get('mask'), o.additiveMask);
    }
  });
  opt('opt-layout', 'layout', (el) => el.value, true);
  opt('opt-scale', 'scale');
  opt('opt-scale-custom', 'scaleCustom');
  opt('opt-causal', 'causal', (el) => el.checked);
  opt('opt-mask', 'mask');
  opt('opt-softcap', 'softcap', (el) => (el.value === '' ? 0 : Number(el.value)));
  // KV heads follow heads while they are equal (plain multi-head); set them apart for GQA/MQA.
  $('opt-heads').addEventListener('input', () => {
    if (state.options.kv_heads === state.options.heads) {
      const h = Math.max(1, Math.round(Number($('opt-heads').value)) || 1);
      state.options.kv_heads = h;
      $('opt-kvheads').value = h;
    }
  });
  opt('opt-heads', 'heads', (el) => Math.max(1, Math.round(Number(el.value)) || 1));
  opt('opt-kvheads', 'kv_heads', (el) => Math.max(1, Math.round(Number(el.value)) || 1));
  // The W grids label their features by head: relabel when the head counts change.
  for (const id of ['opt-heads', 'opt-kvheads']) {
    $(id).addEventListener('input', () => {
      for (const n of ['W_Q', 'W_K', 'W_V']) if (editors.get(n)?.mode === 'grid') editors.get(n).renderGrid();
    });
  }
  opt('opt-precision', 'precision');
  $('opt-decimals').addEventListener('input', (e) => {
    state.decimals = clampDecimals(e.target.value);
    for (const ed of editors.values()) ed.renderGrid();
    update();
  });
  for (const [id, key] of [['tokens-q', 'q'], ['tokens-k', 'k']]) {
    $(id).addEventListener('input', (e) => {
      state.tokens[key] = e.target.value;
      for (const ed of editors.values()) if (ed.mode === 'grid' && !ed.el.contains(document.activeElement)) ed.renderGrid();
      update();
    });
  }
  $('extras').addEventListener('click', (e) => {
    const b = e.target.closest('.mask-cell');
    if (!b) return;
    const { r, c } = b.dataset;
    state.options.keepMask[r][c] = state.options.keepMask[r][c] ? 0 : 1;
    markEdited();
    update();
  });

  // Steps: click or Enter on a number opens its worked calculation; arrows move in a table.
  const list = $('step-list');
  list.addEventListener('click', (e) => {
    const fold = e.target.closest('button.fold');
    if (fold) {
      const key = fold.closest('article').dataset.key;
      state.collapsed = state.collapsed.includes(key) ? state.collapsed.filter((k) => k !== key) : [...state.collapsed, key];
      renderResults();
      list.querySelector(`article[data-key="${key}"] button.fold`)?.focus();
      scheduleHash();
      return;
    }
    const td = e.target.closest('td[data-r]');
    if (td) { select(td.closest('article'), Number(td.dataset.r), Number(td.dataset.c), true); return; }
    const canvas = e.target.closest('canvas');
    if (canvas) {
      const rect = canvas.getBoundingClientRect();
      const c = Math.min(canvas.width - 1, Math.floor(((e.clientX - rect.left) / rect.width) * canvas.width));
      const r = Math.min(canvas.height - 1, Math.floor(((e.clientY - rect.top) / rect.height) * canvas.height));
      select(canvas.closest('article'), r, c, true);
    }
  });
  list.addEventListener('keydown', (e) => {
    const td = e.target.closest?.('td[data-r]');
    const canvas = e.target.closest?.('canvas');
    if (!td && !canvas) return;
    let r = Number((td ?? canvas).dataset.r ?? 0), c = Number((td ?? canvas).dataset.c ?? 0);
    const card = e.target.closest('article');
    const [nr, nc] = td ? [td.closest('tbody').rows.length, td.parentElement.cells.length - 1] : [canvas.height, canvas.width];
    switch (e.key) {
      case 'ArrowUp': r = Math.max(0, r - 1); break;
      case 'ArrowDown': r = Math.min(nr - 1, r + 1); break;
      case 'ArrowLeft': c = Math.max(0, c - 1); break;
      case 'ArrowRight': c = Math.min(nc - 1, c + 1); break;
      case 'Home': c = 0; break;
      case 'End': c = nc - 1; break;
      case 'Enter': case ' ':
        e.preventDefault();
        select(card, r, c, true);
        return;
      default: return;
    }
    e.preventDefault();
    if (td) {
      const next = card.querySelector(`td[data-r="${r}"][data-c="${c}"]`);
      if (next) { td.tabIndex = -1; next.tabIndex = 0; next.focus(); }
    } else moveCursor(canvas, r, c, true);
  });

  // Token names can also be renamed where they are shown: double-click a row or column label.
  list.addEventListener('dblclick', (e) => {
    const th = e.target.closest('th[data-token]');
    if (!th || th.querySelector('input')) return;
    const [kind, index] = th.dataset.token.split(':');
    const input = document.createElement('input');
    input.type = 'text';
    input.className = 'token-edit';
    input.value = th.textContent;
    input.setAttribute('aria-label', `Rename ${kind === 'k' ? 'key' : 'query'} token ${Number(index) + 1}`);
    th.replaceChildren(input);
    input.focus();
    input.select();
    let done = false;
    const finish = (commit) => {
      if (done) return;
      done = true;
      const name = input.value.trim().replace(/[\s,]+/g, '_');
      if (commit && name) renameToken(kind, Number(index), name);
      else renderResults();
    };
    input.addEventListener('keydown', (ev) => {
      if (ev.key === 'Enter') { ev.preventDefault(); finish(true); }
      if (ev.key === 'Escape') { ev.preventDefault(); finish(false); }
    });
    input.addEventListener('blur', () => finish(true));
  });

  window.addEventListener('hashchange', async () => {
    const h = location.hash.replace(/^#/, '');
    if (h === lastHash) return;
    const { state: s, error } = await readLink(location.hash, engine);
    if (s) { state = s; lastHash = h; lastGood = null; applyState(); }
    else if (error) $('status').textContent = error;
  });
  let resizeTimer = 0;
  window.addEventListener('resize', () => {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(() => { renderSelection(false); markScrollables(); }, 150);
  });
}

function renameToken(kind, index, name) {
  const meta = lastGood ? metaOf(lastGood.trace) : { queries: 0, keys: 0 };
  const lists = tokenLists({ L: meta.queries, S: meta.keys });
  const ownKeys = state.mode !== 'self';
  const key = kind === 'k' && ownKeys ? 'k' : 'q';
  const names = (key === 'k' ? lists.k : lists.q).slice();
  names[index] = name;
  state.tokens[key] = names.join(' ');
  $(key === 'k' ? 'tokens-k' : 'tokens-q').value = state.tokens[key];
  for (const ed of editors.values()) if (ed.mode === 'grid') ed.renderGrid();
  update();
}

function select(card, row, col, focus) {
  if (!card) return;
  const head = Number(card.dataset.head);
  state.open = { step: card.dataset.step, head, row, col };
  renderSelection(focus);
  markScrollables();
  scheduleHash();
}

// ---- boot -----------------------------------------------------------------------------------------

async function boot() {
  const loading = $('loading');
  try {
    [engine] = await Promise.all([loadAttention(), loadMath()]);
  } catch (err) {
    loading.textContent = `The attention engine could not be loaded: ${err.message}`;
    loading.classList.add('error');
    return;
  }
  try {
    sweep = computeSweep();
  } catch { sweep = null; }
  fillPresetSelect();
  bindControls();
  installShare({
    engine, getState: () => state, getResult: () => lastGood, rerender: renderResults,
    setState: (s) => { state = s; lastGood = null; applyState(); },
  });
  const { state: fromHash, error } = await readLink(location.hash, engine);
  for (const id of ['setup', 'inputs', 'results', 'why']) $(id).hidden = false;
  loading.remove();
  $('app').setAttribute('aria-busy', 'false');
  if (fromHash) {
    state = fromHash;
    lastHash = location.hash.replace(/^#/, '');
    applyState();
    // A link with an open cell shows that cell: scroll it into view.
    document.querySelector('#step-list td.selected, #step-list .heatmap .cursor:not([hidden])')?.scrollIntoView({ block: 'center' });
  } else {
    applyFlags(state);
    loadPreset('000');
  }
  if (error) $('status').textContent = error;
  document.body.dataset.ready = 'true';
}

window.addEventListener('error', (e) => {
  $('status').textContent = `Something went wrong: ${e.message}`;
});
boot();
