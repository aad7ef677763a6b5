// The inputs panel: one matrix editor per input the mode uses, titled and described for the
// layout, with the optional biases and W_O switched on below them.
import { stateInputs } from 'attention-explorer/share';
import { $, app } from './app.js';
import { VECTOR_INPUTS, decimalsOf, tokenLists } from './state.js';
import { MatrixEditor } from './editor.js';
import { editors } from './editors.js';
import { lastEdited, parse } from './problem.js';
import { store } from './store.js';
import { editInput, fillInputs, setOptions } from './actions.js';
import { matrixToText } from './format.js';
import { html, setHtml } from 'attention-explorer/html';
import { headOf } from './steps.js';
import { rich, t } from './language.js';

const INPUT_TITLES = {
  Q: html`Q`,
  K: html`K`,
  V: html`V`,
  X: html`X`,
  X_kv: html`X<sub>kv</sub>`,
  W_Q: html`W<sub>Q</sub>`,
  W_K: html`W<sub>K</sub>`,
  W_V: html`W<sub>V</sub>`,
  W_O: html`W<sub>O</sub>`,
  b_Q: html`b<sub>Q</sub>`,
  b_K: html`b<sub>K</sub>`,
  b_V: html`b<sub>V</sub>`,
  b_O: html`b<sub>O</sub>`,
  b_G: html`b<sub>G</sub>`,
};
/** An input's title: in words when the catalogue has explorer.input.title.<name>, else its symbol. */
const inputTitle = (name) => (t.has(`explorer.input.title.${name}`) ? html`${rich(`explorer.input.title.${name}`)}` : INPUT_TITLES[name]);
const COLUMN_TITLES = {
  W_Q: html`Ω<sub>Q</sub>`,
  W_K: html`Ω<sub>K</sub>`,
  W_V: html`Ω<sub>V</sub>`,
  W_O: html`Ω<sub>O</sub>`,
  b_Q: html`β<sub>Q</sub>`,
  b_K: html`β<sub>K</sub>`,
  b_V: html`β<sub>V</sub>`,
  b_O: html`β<sub>O</sub>`,
};

/** Whether the state computes multi-head latent attention (its inputs in place of W_K and W_V). */
const isLatent = (state) => stateInputs(state).includes('W_DKV');

/** The line under an input's title: what it is and its shape. */
const describeInput = (name) => html`${describeWords(name)}`;

function describeWords(name) {
  const { state } = app;
  const cols = state.options.layout === 'columns';
  const layout = cols ? 'columns' : 'rows';
  // An input with a message of its own (explorer.input.<name>) gets every value a message may use.
  const own = `explorer.input.${name}`;
  const values = { tok: t('explorer.input.tok', { layout }), cross: state.mode === 'cross' ? 'yes' : 'no', layout };
  if (t.has(own)) return rich(own, values);
  if (name === 'W_Q' && isLatent(state)) return rich('explorer.input.W_Q-latent');
  if (['W_Q', 'W_K', 'W_V'].includes(name)) {
    const bias = state.use.bias ? (cols ? ' + β' : ' + b') : '';
    return cols
      ? html`d × D: ${name[2]} = Ω<sub>${name[2]}</sub>X${bias}`
      : html`d<sub>model</sub> × d: ${name[2]} = X·W<sub>${name[2]}</sub>${bias}`;
  }
  return rich('explorer.input.bias', { layout, name: name[2] }); // b_Q, b_K, b_V
}

/** The weights whose columns are the query heads' features side by side (latent attention's too). */
export const HEAD_WEIGHTS = ['W_Q', 'W_UK', 'W_UV', 'W_QR', 'W_UQ'];

function editorLabels(name) {
  const { state } = app;
  const cols = state.options.layout === 'columns';
  const tk = tokenLists(state);
  const tokens = ['X', 'Q'].includes(name) ? tk.q : ['X_kv', 'K', 'V'].includes(name) ? tk.k : null;
  if (tokens) return cols ? { cols: tokens } : { rows: tokens };
  // With several heads, the projection's features are labelled by head: h1·1, h1·2, h2·1, ...
  const heads = HEAD_WEIGHTS.includes(name)
    ? Number(state.options.heads)
    : ['W_K', 'W_V'].includes(name)
      ? Number(state.options.kv_heads)
      : 0;
  const ed = editors.get(name);
  const width = ed ? (cols ? ed.cells.length : (ed.cells[0]?.length ?? 0)) : 0;
  if (!(heads > 1) || !width || width % heads !== 0) return {};
  const d = width / heads;
  const features = Array.from({ length: width }, (_, j) => `h${Math.floor(j / d) + 1}·${(j % d) + 1}`);
  return cols ? { rows: features } : { cols: features };
}

/** The editor of an input (or of the additive mask), made on first use. */
export function getEditor(name) {
  let ed = editors.get(name);
  if (!ed) {
    ed = new MatrixEditor({
      name,
      title: inputTitle(name),
      description: name === 'mask' ? null : describeInput(name),
      vector: VECTOR_INPUTS.has(name),
      engine: app.engine,
      decimals: () => decimalsOf(app.state),
      labels: () => editorLabels(name),
      onChange: (n, value) => {
        if (n === 'mask') store.dispatch(setOptions, { additiveMask: value.text });
        else {
          lastEdited.name = n;
          store.dispatch(editInput, n, value);
        }
      },
    });
    editors.set(name, ed);
  }
  return ed;
}

export function setEditorValue(ed, text, numpy) {
  const r = text ? parse(text, ed.name) : {}; // empty: no matrix
  ed.setValue(text ?? '', r.matrix ? (ed.vector ? [r.matrix.flat()] : r.matrix) : null, numpy);
}

/**
 * Redraws the editors `which` picks (their decimals or token or head labels changed).
 * @param {(ed: import('./editor.js').MatrixEditor, name: string) => boolean} [which]
 */
export function renderGrids(which = () => true) {
  for (const [name, ed] of editors) if (which(ed, name)) ed.renderGrid();
}

/** Rebuild the inputs panel for the current mode (keeps editors and their values). */
export function layoutEditors() {
  const { state } = app;
  const box = $('editors');
  const hidden = new Set(state.hide.inputs ?? []);
  box.replaceChildren();
  const cols = state.options.layout === 'columns';
  for (const name of stateInputs(state)) {
    const ed = getEditor(name);
    setHtml(ed.el.querySelector('h3'), (cols && COLUMN_TITLES[name]) || inputTitle(name));
    const desc = ed.el.querySelector('.editor-desc');
    if (desc) setHtml(desc, describeInput(name));
    ed.el.hidden = hidden.has(name);
    box.appendChild(ed.el);
    const input = state.inputs[name] ?? { text: defaultText(name) };
    if (!state.inputs[name]) store.dispatch(fillInputs, { [name]: input.text });
    setEditorValue(ed, input.text, input.numpy);
  }
  const optional = document.createElement('div');
  optional.className = 'optional-inputs';
  setHtml(
    optional,
    html`
    ${state.mode !== 'qkv' && !isLatent(state) && html`<label><input type="checkbox" id="use-bias" ${state.use.bias && 'checked'}> ${rich('explorer.use-bias')}</label>`}
    <label><input type="checkbox" id="use-wo" ${state.use.W_O && 'checked'}> ${rich('explorer.use-wo')}</label>
    ${state.use.W_O && html`<label><input type="checkbox" id="use-bo" ${state.use.b_O && 'checked'}> ${rich('explorer.use-bo')}</label>`}`,
  );
  box.appendChild(optional);
  optional.addEventListener('change', (ev) => {
    const flag = { 'use-bias': 'bias', 'use-wo': 'W_O', 'use-bo': 'b_O' }[/** @type {HTMLElement} */ (ev.target).id];
    if (!flag) return;
    store.dispatch(setOptions, {}, { [flag]: /** @type {HTMLInputElement} */ (ev.target).checked });
    layoutEditors();
    document.getElementById(/** @type {HTMLElement} */ (ev.target).id)?.focus();
  });
}

/**
 * A rows × cols matrix of np.random.randn(rows, cols) after np.random.seed(seed), to one decimal:
 * starting numbers that differ from one another (zeros would make every score equal).
 */
export function randomMatrix(seed, rows, cols) {
  const [drawn] = app.engine.random(seed, [{ kind: 'randn', shape: [rows, cols] }]);
  return drawn.map((row) => row.map((v) => Math.round(v * 10) / 10 || 0));
}

// Latent attention's weights, in the order their starting values are drawn (seeds 1, 2, ...).
const LATENT_WEIGHTS = ['W_DKV', 'W_UK', 'W_UV', 'W_KR', 'W_QR', 'W_DQ', 'W_UQ', 'W_Q'];

/**
 * The shape of a latent attention input: d_model from X, heads from the options, d_h and d_v from
 * W_UK, W_UV (else W_Q's width, the last trace's d_v), and the latents' widths d_c, d_r, d_cq from
 * W_DKV, W_KR, W_DQ (2 each when not given: a latent smaller than the keys it stands for).
 */
function latentShape(name) {
  const { state, result } = app;
  const heads = Number(state.options.heads) || 1;
  const width = (input) => parse(state.inputs[input]?.text ?? '', input).matrix?.[0].length;
  const perHead = (n) => (n && n % heads === 0 ? n / heads : undefined);
  const d_model = width('X') ?? 4;
  const d_h = perHead(width('W_UK')) ?? perHead(width('W_Q')) ?? 2;
  const d_v = perHead(width('W_UV')) ?? result?.trace.meta.d_v ?? d_h;
  const d_c = width('W_DKV') ?? 2;
  const d_r = width('W_KR') ?? 2;
  const d_cq = width('W_DQ') ?? 2;
  return {
    W_DKV: [d_model, d_c],
    W_UK: [d_c, heads * d_h],
    W_UV: [d_c, heads * d_v],
    W_KR: [d_model, d_r],
    W_QR: [d_model, heads * d_r],
    W_DQ: [d_model, d_cq],
    W_UQ: [d_cq, heads * d_h],
    W_Q: [d_model, heads * d_h],
    past_c_KV: [2, d_c],
    past_k_R: [2, d_r],
  }[name];
}

/** Sensible starting values for an input the user just switched on, sized from the last trace. */
function defaultText(name) {
  const { state, result } = app;
  const meta = result ? result.trace.meta : null;
  const cols = state.options.layout === 'columns';
  const step = (id) => result?.trace.steps.find((s) => s.id === id && headOf(s) === 0);
  const zeros = (r, c) => Array.from({ length: r }, () => Array(c).fill(0));
  const latent = isLatent(state) && latentShape(name);
  if (latent) {
    // A cache of two earlier tokens, zeros as past_K's; the weights drawn, each from its own seed.
    return matrixToText(name.startsWith('past_') ? zeros(...latent) : randomMatrix(LATENT_WEIGHTS.indexOf(name) + 1, ...latent));
  }
  const eye = (n) => Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => (i === j ? 1 : 0)));
  const T = (m) => (cols ? m[0].map((_, j) => m.map((row) => row[j])) : m);
  switch (name) {
    case 'Q':
    case 'K':
    case 'V':
      if (meta && meta.heads === 1 && step(name)) return matrixToText(step(name).data);
      return matrixToText(
        T(
          name === 'V'
            ? [
                [1, 2],
                [3, 4],
              ]
            : eye(2),
        ),
      );
    case 'X':
      return matrixToText(
        T([
          [1, 0, 1, 0],
          [0, 2, 0, 2],
          [1, 1, 1, 1],
        ]),
      );
    case 'X_kv':
      return (
        state.inputs.X?.text ??
        matrixToText(
          T([
            [1, 0, 0, 1],
            [0, 1, 1, 0],
          ]),
        )
      );
    case 'W_Q':
      return matrixToText(
        T([
          [1, 0, 1],
          [1, 0, 0],
          [0, 0, 1],
          [0, 1, 1],
        ]),
      );
    case 'W_K':
      return matrixToText(
        T([
          [0, 0, 1],
          [1, 1, 0],
          [0, 1, 0],
          [1, 1, 0],
        ]),
      );
    case 'W_V':
      return matrixToText(
        T([
          [0, 2, 0],
          [0, 3, 0],
          [1, 0, 3],
          [1, 1, 0],
        ]),
      );
    case 'W_O':
      return matrixToText(eye(meta ? meta.d_v * meta.heads : 3));
    case 'b_Q':
    case 'b_K':
      return Array(meta ? meta.d_k * meta.heads : 3)
        .fill(0)
        .join(' ');
    case 'b_V':
      return Array(meta ? meta.d_v * meta.kv_heads : 3)
        .fill(0)
        .join(' ');
    case 'b_O':
    case 'b_G': {
      const w = parse(state.inputs[name === 'b_O' ? 'W_O' : 'W_G']?.text ?? '', name === 'b_O' ? 'W_O' : 'W_G').matrix;
      return Array(w ? (cols ? w.length : w[0].length) : 3)
        .fill(0)
        .join(' ');
    }
    case 'P': {
      const x = parse(state.inputs.X?.text ?? '', 'X').matrix;
      return matrixToText(x ? x.map((row) => row.map(() => 0)) : zeros(3, 4));
    }
    // A cache of two earlier tokens, as wide as the keys (values) of every key/value head.
    case 'past_K':
      return matrixToText(T(zeros(2, meta ? meta.d_k * meta.kv_heads : 2)));
    case 'past_V':
      return matrixToText(T(zeros(2, meta ? meta.d_v * meta.kv_heads : 2)));
    default:
      return matrixToText(zeros(2, 2));
  }
}
