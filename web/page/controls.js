// The problem panel: the example picker, mode, options and token names, kept in step with the state.
import { findPreset, formatNumber, presets } from 'attention-explorer';
import { stateInputs } from 'attention-explorer/share';
import { exampleWords } from 'attention-explorer/i18n';
import { $, app } from './app.js';
import { VECTOR_INPUTS, decimalsOf, defaultState } from './state.js';
import { HEAD_WEIGHTS, layoutEditors, randomMatrix, renderGrids, setEditorValue } from './inputs.js';
import { editors } from './editors.js';
import { parse } from './problem.js';
import { presetState } from './link.js';
import { applyFlags } from './embed.js';
import { loadState, store } from './store.js';
import { clearPreset, removeInputs, setDecimals, setInputs, setMode, setOptions, setTokens } from './actions.js';
import { matrixToText } from './format.js';
import { html, setHtml } from 'attention-explorer/html';
import { rich, t } from './language.js';

/** The example a page without a link opens on (one whose pattern a sentence explains): first in the list. */
export const DEFAULT_PRESET = 'lookup';

export function fillPresetSelect() {
  const ordered = [findPreset(DEFAULT_PRESET), ...presets.filter((p) => p.id !== DEFAULT_PRESET)];
  setHtml(
    $('preset'),
    html`${ordered.map((p) => html`<option value="${p.id}">${exampleWords(p, t).title}</option>`)}<option value="">${t('explorer.preset.own')}</option>`,
  );
}

function showPresetSource() {
  const { state } = app;
  const p = state.preset ? findPreset(state.preset) : null;
  const el = $('preset-source');
  if (!p) {
    el.replaceChildren();
    showLessonExample(null, false, state.title);
    return;
  }
  const words = exampleWords(p, t);
  const src = p.url ? html`<a href="${p.url}" rel="noopener">${words.source}</a>` : words.source;
  setHtml(
    el,
    html`${rich('explorer.preset.from', { source: src, note: p.note ? ` ${words.note}` : '', edited: state.edited ? 'yes' : 'no' })}`,
  );
  showLessonExample(p, state.edited, state.title);
}

/**
 * Above the diagram: the lesson's title when its teacher gave one, else the example's title and,
 * for an example that tells a story, its note.
 */
function showLessonExample(p, edited, title) {
  const el = $('lesson-example');
  if (title) {
    setHtml(el, html`<strong>${title}</strong>`);
    return;
  }
  if (!p) {
    el.textContent = t('explorer.preset.yourOwn');
    return;
  }
  const words = exampleWords(p, t);
  setHtml(
    el,
    html`${rich('explorer.preset.example', {
      title: words.title,
      edited: edited ? 'yes' : 'no',
      note: p.id === DEFAULT_PRESET && words.note ? `. ${words.note}` : '',
    })}`,
  );
}

/** The example's numpy recipe: gone once the inputs are no longer what it draws (an edit, another mode). */
function showRecipe(recipe) {
  $('recipe').hidden = !recipe;
  $('recipe').querySelector('code').textContent = recipe;
}

/** The sigmoid bias field, when empty, shows the default's number: −ln S for this problem's S keys. */
function showSigmoidDefault(trace) {
  $('opt-sigmoid-bias').placeholder = trace ? `−ln ${trace.meta.keys} = ${formatNumber(-Math.log(trace.meta.keys), 4)}` : '−ln S';
}

/**
 * A whole new state (a link, an example, an exercise): every control and editor shows it. Mounted
 * before the loop computes it (main.js): the editors it lays out give the problem their errors.
 */
export function mountLoaded() {
  store.subscribe(
    (page) => page.loaded,
    () => {
      syncControls();
      layoutEditors();
      $('extras').replaceChildren();
    },
  );
}

/**
 * The example's source line and title (marked edited once changed by hand) and its recipe follow
 * the state; the controls themselves are set from a whole new state (mountLoaded).
 */
export function mountControls() {
  store.subscribe((page) => [page.state.preset, page.state.edited, page.state.title], showPresetSource);
  store.subscribe(
    (page) => [page.result?.trace?.meta.keys],
    (_, page) => showSigmoidDefault(page.result?.trace),
  );
  store.subscribe((page) => page.state.recipe, showRecipe);
}

/** Every control shows the state. */
function syncControls() {
  const { state } = app;
  const o = state.options;
  $('preset').value = state.preset ?? '';
  $('lesson-name').value = state.title;
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
  syncModernOptions(state);
  $('opt-decimals').value = state.decimals;
  $('tokens-q').value = state.tokens.q;
  $('tokens-k').value = state.tokens.k;
  $('tokens-k-wrap').hidden = state.mode === 'self';
  document.body.classList.toggle('no-chrome', Boolean(state.hide.chrome));
  showRecipe(state.recipe);
  showPresetSource();
}

// ---- positions, windows, sinks, KV cache: kept in the state as the problem JSON writes them --

const rope = (o) => (o.rope === true ? { style: 'half' } : o.rope && typeof o.rope === 'object' ? o.rope : null);
const text = (v) => (v === undefined || v === null ? '' : Array.isArray(v) ? v.join(' ') : String(v));

function syncModernOptions(state) {
  const o = state.options;
  const r = rope(o);
  $('opt-positional').value = state.use?.P ? 'learned' : o.positional === 'sinusoidal' ? 'sinusoidal' : 'none';
  $('opt-positional').disabled = state.mode === 'qkv';
  $('opt-rope').value = r ? (r.style ?? 'half') : 'off';
  $('opt-rope-base').value = text(r?.base);
  $('opt-rope-dims').value = text(r?.dims);
  $('opt-rope-base').disabled = $('opt-rope-dims').disabled = !r;
  $('opt-alibi').checked = Boolean(o.alibi);
  const [left, right] = Array.isArray(o.window) ? o.window : [null, null];
  $('opt-window-left').value = text(left);
  $('opt-window-right').value = text(right);
  $('opt-sink-tokens').value = o.sink_tokens ? String(o.sink_tokens) : '';
  $('opt-sink-logit').value = text(o.sink_logit);
  $('opt-mask-fill').value = o.mask_fill === undefined || o.mask_fill === '-inf' ? '' : text(o.mask_fill);
  $('opt-fully-masked').value = o.fully_masked === 'nan' ? 'nan' : 'zero';
  $('opt-cache').checked = Boolean(state.use?.cache);
  syncVariants(state);
  // Folded unless one of them is on, so a plain example opens on the plain options.
  if (
    r ||
    o.positional ||
    state.use?.P ||
    o.alibi ||
    o.window ||
    o.sink_tokens ||
    o.sink_logit !== undefined ||
    o.mask_fill !== undefined ||
    o.fully_masked ||
    state.use?.cache
  )
    $('opt-modern').open = true;
}

/** A typed number, a list of numbers, or the text as typed (the engine then says what is wrong). */
function numbersOf(value) {
  const t = value.trim();
  if (t === '') return undefined;
  const words = t.split(/[\s,]+/);
  const numbers = words.map((w) => (/^[-+]?inf(inity)?$/i.test(w) ? (w.startsWith('-') ? '-inf' : 'inf') : Number(w)));
  if (numbers.some((n) => typeof n === 'number' && !Number.isFinite(n))) return t;
  return numbers.length === 1 ? numbers[0] : numbers;
}

/** The modern options as the controls show them: { options, use } for setOptions. */
function readModernOptions() {
  const options = {};
  const use = {};
  const setOption = (key, value) => {
    options[key] = value;
  };
  // Set only when on, so links of problems without them stay as they were.
  const flag = (name, on) => {
    use[name] = on ? true : undefined;
  };
  const style = $('opt-rope').value;
  const base = numbersOf($('opt-rope-base').value);
  const dims = numbersOf($('opt-rope-dims').value);
  setOption(
    'rope',
    style === 'off' ? undefined : { style, ...(base !== undefined ? { base } : {}), ...(dims !== undefined ? { dims } : {}) },
  );
  const positional = $('opt-positional').value;
  setOption('positional', positional === 'sinusoidal' ? 'sinusoidal' : undefined);
  flag('P', positional === 'learned');
  setOption('alibi', $('opt-alibi').checked ? true : undefined);
  const left = numbersOf($('opt-window-left').value);
  const right = numbersOf($('opt-window-right').value);
  setOption('window', left === undefined && right === undefined ? undefined : [left ?? null, right ?? null]);
  const sinks = numbersOf($('opt-sink-tokens').value);
  setOption('sink_tokens', sinks === 0 ? undefined : sinks);
  setOption('sink_logit', numbersOf($('opt-sink-logit').value));
  setOption('mask_fill', numbersOf($('opt-mask-fill').value));
  setOption('fully_masked', $('opt-fully-masked').value === 'nan' ? 'nan' : undefined);
  flag('cache', $('opt-cache').checked);
  readVariants(setOption, flag);
  return { options, use };
}

function bindModernOptions() {
  const inputs = [
    'opt-positional',
    'opt-rope',
    'opt-rope-base',
    'opt-rope-dims',
    'opt-alibi',
    'opt-window-left',
    'opt-window-right',
    'opt-sink-tokens',
    'opt-sink-logit',
    'opt-mask-fill',
    'opt-fully-masked',
    'opt-cache',
    ...VARIANT_CONTROLS,
  ];
  // P, the cache, the gate and latent attention's matrices are inputs: their editors come and go with the choice.
  const inputsInUse = () => `${stateInputs(app.state)}${app.state.inputs.W_G?.text}`;
  // A gate chosen: W_G of its kind's width first (before the options are read).
  $('opt-gate').addEventListener('change', (e) => {
    if (/** @type {HTMLInputElement | HTMLSelectElement} */ (e.target).value !== 'off')
      fitGateWeights(/** @type {HTMLInputElement | HTMLSelectElement} */ (e.target).value);
  });
  // Differential chosen: λ is required, and starts at λ_init (as the paper's λ does) unless typed.
  $('opt-attention').addEventListener('change', (e) => {
    if (/** @type {HTMLInputElement | HTMLSelectElement} */ (e.target).value === 'differential' && !$('opt-lambda').value.trim())
      $('opt-lambda').value = $('opt-lambda-init').value.trim() || '0.8';
  });
  for (const id of inputs) {
    const el = /** @type {HTMLInputElement | HTMLSelectElement} */ ($(id));
    el.addEventListener(el.type === 'checkbox' || el.tagName === 'SELECT' ? 'change' : 'input', () => {
      const inputsBefore = inputsInUse();
      const { options, use } = readModernOptions();
      store.dispatch(setOptions, options, use);
      $('opt-rope-base').disabled = $('opt-rope-dims').disabled = $('opt-rope').value === 'off';
      if (inputsInUse() !== inputsBefore) layoutEditors();
    });
  }
}

// ---- attention variants: one choice of where the weights come from (sigmoid, differential,
// linear and latent attention exclude one another), QK-norm and the output gate; kept in the state
// as the problem JSON writes them (the gate's W_G and b_G, latent attention's matrices as inputs) --

const VARIANT_CONTROLS = [
  'opt-attention',
  'opt-sigmoid-bias',
  'opt-lambda',
  'opt-lambda-init',
  'opt-diff-norm',
  'opt-feature-map',
  'opt-normalize',
  'opt-decay',
  'opt-latent-queries',
  'opt-latent-rope',
  'opt-qk-norm',
  'opt-qk-eps',
  'opt-qk-gq',
  'opt-qk-gk',
  'opt-gate',
  'opt-gate-bias',
];

const given = (v) => v !== undefined && v !== null && v !== false;
const objectOf = (v) => (v && typeof v === 'object' && !Array.isArray(v) ? v : {});
/** One number typed where a list is expected is a list of one. */
const listOf = (v) => (typeof v === 'number' ? [v] : v);
/** `fields` without the ones left empty. */
const typed = (fields) => Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined));

/** Where a state's weights come from; of two that exclude one another (a link), the first here (the core's message names both). */
function weightsFrom(state) {
  const o = state.options;
  if (o.attention === 'linear') return 'linear';
  if (state.use?.W_DKV) return 'latent';
  if (given(o.differential)) return 'differential';
  if (o.score_fn === 'sigmoid') return 'sigmoid';
  return 'softmax';
}

/** The gate's kind, from W_G's width: one gate per head (heads columns) or per feature. */
function gateKind(state) {
  if (!state.use?.W_G) return 'off';
  const w = parse(state.inputs.W_G?.text ?? '', 'W_G').matrix;
  return w && w[0].length === Number(state.options.heads) ? 'headwise' : 'elementwise';
}

/**
 * Gives W_G the kind's shape (d_model × heads·d_v, or d_model × heads, sized from the last result)
 * unless it has it: numbers from numpy's randn (seed 1, one decimal), so that the gates differ,
 * and b_G anew (zeros) to match.
 */
function fitGateWeights(kind) {
  const { state } = app;
  const meta = app.result?.trace.meta;
  const x = parse(state.inputs.X?.text ?? '', 'X').matrix;
  if (!meta || !x) return;
  const rows = x[0].length;
  const cols = kind === 'headwise' ? meta.heads : meta.heads * meta.d_v;
  const w = parse(state.inputs.W_G?.text ?? '', 'W_G').matrix;
  if (w && w.length === rows && w[0].length === cols) return;
  store.dispatch(setInputs, { W_G: matrixToText(randomMatrix(1, rows, cols)) });
  store.dispatch(removeInputs, ['b_G']);
}

/**
 * Each variant's own controls only with it (shown and enabled); QK-norm and the gate not with
 * linear or latent attention (the core refuses them), the gate only with X, latent attention only
 * in self-attention (it reads X alone).
 */
function enableVariantControls() {
  const from = $('opt-attention').value;
  const ownScores = from === 'linear' || from === 'latent';
  const enable = (ids, on) => {
    for (const id of ids) $(id).disabled = !on;
  };
  // Only the chosen way's settings are shown.
  for (const row of $('opt-variants').querySelectorAll('[data-variant]')) row.hidden = row.dataset.variant !== from;
  $('opt-attention').querySelector('option[value="latent"]').disabled = app.state.mode !== 'self';
  enable(['opt-sigmoid-bias'], from === 'sigmoid');
  enable(['opt-lambda', 'opt-lambda-init', 'opt-diff-norm'], from === 'differential');
  enable(['opt-feature-map', 'opt-normalize', 'opt-decay'], from === 'linear');
  enable(['opt-latent-queries', 'opt-latent-rope'], from === 'latent' && app.state.mode === 'self');
  enable(['opt-qk-norm'], !ownScores);
  enable(['opt-qk-eps', 'opt-qk-gq', 'opt-qk-gk'], !ownScores && $('opt-qk-norm').value !== 'off');
  enable(['opt-gate'], !ownScores && app.state.mode !== 'qkv');
  enable(['opt-gate-bias'], !$('opt-gate').disabled && $('opt-gate').value !== 'off');
}

function syncVariants(state) {
  const o = state.options;
  const from = weightsFrom(state);
  $('opt-attention').value = from;
  $('opt-sigmoid-bias').value = text(o.sigmoid_bias);
  const d = objectOf(o.differential);
  $('opt-lambda').value = text(d.lambda);
  $('opt-lambda-init').value = text(d.lambda_init);
  $('opt-diff-norm').checked = d.norm !== false;
  $('opt-feature-map').value = o.feature_map ?? 'elu+1';
  $('opt-normalize').checked = o.normalize !== false;
  $('opt-decay').value = text(o.decay);
  $('opt-latent-queries').value = state.use?.W_DQ ? 'W_DQ' : 'W_Q';
  // The rotary part is on unless a latent problem goes without it.
  $('opt-latent-rope').checked = !state.use?.W_DKV || Boolean(state.use.W_KR);
  const q = objectOf(o.qk_norm);
  $('opt-qk-norm').value = ['rms', 'layer'].includes(q.type) ? q.type : 'off';
  $('opt-qk-eps').value = text(q.eps);
  $('opt-qk-gq').value = text(q.g_q);
  $('opt-qk-gk').value = text(q.g_k);
  $('opt-gate').value = gateKind(state);
  $('opt-gate-bias').checked = Boolean(state.use?.b_G);
  enableVariantControls();
  // Folded unless one of them is on, so a plain example opens on the plain options.
  if (from !== 'softmax' || given(o.qk_norm) || state.use?.W_G) $('opt-variants').open = true;
}

/** The variants' options and input flags, written with readModernOptions' `setOption` and `flag`. */
function readVariants(setOption, flag) {
  const from = $('opt-attention').value;
  const linear = from === 'linear';
  const latent = from === 'latent';
  // Each variant's own options only with it (the core refuses them otherwise).
  setOption('score_fn', from === 'sigmoid' ? 'sigmoid' : undefined);
  setOption('sigmoid_bias', from === 'sigmoid' ? numbersOf($('opt-sigmoid-bias').value) : undefined);
  setOption(
    'differential',
    from === 'differential'
      ? typed({
          lambda: numbersOf($('opt-lambda').value),
          lambda_init: numbersOf($('opt-lambda-init').value),
          norm: $('opt-diff-norm').checked ? undefined : false,
        })
      : undefined,
  );
  setOption('attention', linear ? 'linear' : undefined);
  setOption('feature_map', linear && $('opt-feature-map').value !== 'elu+1' ? $('opt-feature-map').value : undefined);
  setOption('normalize', linear && !$('opt-normalize').checked ? false : undefined);
  setOption('decay', linear ? numbersOf($('opt-decay').value) : undefined);
  // Latent attention is its inputs: W_DKV, W_UK, W_UV; W_KR, W_QR; W_DQ, W_UQ (share.js stateInputs).
  flag('W_DKV', latent);
  flag('W_KR', latent && $('opt-latent-rope').checked);
  flag('W_DQ', latent && $('opt-latent-queries').value === 'W_DQ');
  const norm = $('opt-qk-norm').value;
  setOption(
    'qk_norm',
    !linear && !latent && norm !== 'off'
      ? typed({
          type: norm,
          eps: numbersOf($('opt-qk-eps').value),
          g_q: listOf(numbersOf($('opt-qk-gq').value)),
          g_k: listOf(numbersOf($('opt-qk-gk').value)),
        })
      : undefined,
  );
  const gate = !linear && !latent && app.state.mode !== 'qkv' ? $('opt-gate').value : 'off';
  flag('W_G', gate !== 'off');
  flag('b_G', gate !== 'off' && $('opt-gate-bias').checked);
  enableVariantControls();
}

/** Example `id`'s state with `base`'s decimals and hidden parts (which a change of example keeps), or null. */
function exampleOver(id, base) {
  const s = presetState(id);
  if (!s) return null;
  s.decimals = base.decimals;
  s.hide = base.hide;
  return s;
}

/** Shows an example; the decimals and what the embedding hides stay as they are. */
export function loadPreset(id) {
  const s = exampleOver(id, app.state);
  if (s) loadState(s);
}

/** What an address without a link opens: the default example, with the address's ?embed/hide flags. */
export function defaultExampleState() {
  return exampleOver(DEFAULT_PRESET, applyFlags(defaultState()));
}

/** Inputs with one row (column, in the columns layout) per token. */
const TOKEN_INPUTS = ['Q', 'K', 'V', 'X', 'X_kv', 'P'];

/**
 * Every input's tokens at once: n rows (columns) each, cut or grown. New tokens get numbers drawn
 * from numpy's randn (seed n, one decimal), not zeros, whose scores would all be equal.
 */
export function setTokenCount(n) {
  if (!(Number.isInteger(n) && n >= 1 && n <= 4096)) return;
  const { state } = app;
  const cols = state.options.layout === 'columns';
  const T = (m) => m[0].map((_, j) => m.map((row) => row[j]));
  const texts = {};
  for (const name of stateInputs(state).filter((x) => TOKEN_INPUTS.includes(x))) {
    const r = parse(state.inputs[name]?.text ?? '', name);
    if (!r.matrix) continue;
    const m = cols ? T(r.matrix) : r.matrix;
    if (m.length === n) continue;
    const width = m[0].length;
    const rows = [...m.slice(0, n), ...(n > m.length ? randomMatrix(n, n - m.length, width) : [])];
    texts[name] = matrixToText(cols ? T(rows) : rows);
  }
  if (!Object.keys(texts).length) return;
  store.dispatch(setInputs, texts);
  layoutEditors();
}

/** What resizeKvGroups narrowed, to give it back when the KV heads go back up: name -> { kv, from, to }. */
const kvStash = new Map();

/**
 * Resizes the inputs that hold the keys' and values' features (K, V given; else W_K, W_V, b_K,
 * b_V) from the current KV heads' count of feature groups to `kv`: the first groups are kept when
 * there are fewer; when there are more, what was narrowed is given back if untouched since, else
 * the groups are repeated. An input whose features are not a whole number of groups is left as it
 * is (the error then names it).
 */
function resizeKvGroups(kv) {
  const { state } = app;
  const old = state.options.kv_heads;
  if (kv === old || !(old >= 1)) return;
  const cols = state.options.layout === 'columns';
  const T = (m) => m[0].map((_, j) => m.map((row) => row[j]));
  const names = state.mode === 'qkv' ? ['K', 'V'] : ['W_K', 'W_V', 'b_K', 'b_V'];
  const texts = {};
  for (const name of names.filter((n) => stateInputs(state).includes(n))) {
    const text = state.inputs[name]?.text ?? '';
    const stash = kvStash.get(name);
    let next;
    if (stash && stash.kv === kv && stash.to === text) next = stash.from;
    else {
      const r = parse(text, name);
      if (!r.matrix) continue;
      const vector = VECTOR_INPUTS.has(name);
      const m = vector ? [r.matrix.flat()] : cols ? T(r.matrix) : r.matrix; // features as columns
      const width = m[0].length;
      if (width % old !== 0) continue;
      const d = width / old;
      const rows = m.map((row) => Array.from({ length: d * kv }, (_, j) => row[(Math.floor(j / d) % old) * d + (j % d)]));
      next = matrixToText(vector ? rows : cols ? T(rows) : rows);
      if (kv < old) kvStash.set(name, { kv: old, from: text, to: next });
    }
    texts[name] = next;
    if (editors.has(name)) setEditorValue(editors.get(name), next);
  }
  store.dispatch(setInputs, texts);
}

export function bindControls() {
  $('preset').addEventListener('change', (e) => {
    if (/** @type {HTMLInputElement | HTMLSelectElement} */ (e.target).value)
      loadPreset(/** @type {HTMLInputElement | HTMLSelectElement} */ (e.target).value);
    else store.dispatch(clearPreset);
  });
  for (const r of document.querySelectorAll('input[name="mode"]')) {
    r.addEventListener('change', () => {
      if (!r.checked) return;
      store.dispatch(setMode, r.value);
      const { state } = app;
      $('tokens-k-wrap').hidden = state.mode === 'self';
      $('tokens-k').value = state.tokens.k;
      enableVariantControls();
      layoutEditors();
    });
  }
  const opt = (id, key, read = (el) => el.value, relayout = false) => {
    $(id).addEventListener(id === 'opt-causal' ? 'change' : 'input', (e) => {
      store.dispatch(setOptions, { [key]: read(e.target) });
      if (relayout) layoutEditors();
      if (key === 'scale') $('opt-scale-custom').hidden = app.state.options.scale !== 'custom';
      if (key === 'mask') $('extras').replaceChildren(); // the mask editor (mask-editor.js) draws the new one
    });
  };
  // Switching the layout keeps the problem: every matrix moves to the other convention (transposed).
  $('opt-layout').addEventListener('input', (e) => {
    const { state } = app;
    if (/** @type {HTMLInputElement | HTMLSelectElement} */ (e.target).value === state.options.layout) return;
    const T = (m) => m[0].map((_, j) => m.map((row) => row[j]));
    const texts = {};
    for (const [name, input] of Object.entries(state.inputs)) {
      if (VECTOR_INPUTS.has(name)) continue;
      const r = parse(input.text, name);
      if (r.matrix) texts[name] = matrixToText(T(r.matrix));
    }
    store.dispatch(setInputs, texts, { keepRecipe: true });
    const o = state.options;
    const masks = {};
    if (o.keepMask) masks.keepMask = T(o.keepMask);
    const m = o.additiveMask ? parse(o.additiveMask, 'mask') : {};
    if (m.matrix) {
      masks.additiveMask = matrixToText(T(m.matrix));
      if (editors.has('mask')) setEditorValue(editors.get('mask'), masks.additiveMask);
    }
    if (Object.keys(masks).length) store.dispatch(setOptions, masks);
  });
  opt('opt-layout', 'layout', (el) => el.value, true);
  opt('opt-scale', 'scale');
  opt('opt-scale-custom', 'scaleCustom');
  opt('opt-causal', 'causal', (el) => el.checked);
  opt('opt-mask', 'mask');
  opt('opt-softcap', 'softcap', (el) => (el.value === '' ? 0 : Number(el.value)));
  // KV heads follow heads while they are equal (plain multi-head); set them apart for GQA/MQA.
  $('opt-heads').addEventListener('input', () => {
    const o = app.state.options;
    if (o.kv_heads === o.heads) {
      const h = Math.max(1, Math.round(Number($('opt-heads').value)) || 1);
      store.dispatch(setOptions, { kv_heads: h });
      $('opt-kvheads').value = String(h);
    }
  });
  opt('opt-heads', 'heads', (el) => Math.max(1, Math.round(Number(el.value)) || 1));
  // Fewer (or more) KV heads: K and V (or W_K, W_V and their biases) keep one group of features per
  // KV head, so the problem stays computable (before the option is set and the problem run).
  $('opt-kvheads').addEventListener('input', () => resizeKvGroups(Math.max(1, Math.round(Number($('opt-kvheads').value)) || 1)));
  opt('opt-kvheads', 'kv_heads', (el) => Math.max(1, Math.round(Number(el.value)) || 1));
  // The W grids label their features by head: relabel when the head counts change.
  for (const id of ['opt-heads', 'opt-kvheads']) {
    $(id).addEventListener('input', () => renderGrids((ed, name) => ed.mode === 'grid' && [...HEAD_WEIGHTS, 'W_K', 'W_V'].includes(name)));
  }
  opt('opt-precision', 'precision');
  bindModernOptions();
  $('opt-decimals').addEventListener('input', (e) => {
    store.dispatch(setDecimals, decimalsOf({ decimals: /** @type {HTMLInputElement | HTMLSelectElement} */ (e.target).value }));
    renderGrids();
  });
  $('tokens-n').addEventListener('change', (e) =>
    setTokenCount(Number(/** @type {HTMLInputElement | HTMLSelectElement} */ (e.target).value)),
  );
  for (const [id, key] of [
    ['tokens-q', 'q'],
    ['tokens-k', 'k'],
  ]) {
    $(id).addEventListener('input', (e) => {
      store.dispatch(setTokens, key, /** @type {HTMLInputElement | HTMLSelectElement} */ (e.target).value);
      renderGrids((ed) => ed.mode === 'grid' && !ed.el.contains(document.activeElement));
    });
  }
}
