// The problem panel: the example picker, mode, options and token names, kept in step with the state.
import { findPreset, presets } from 'attention-explorer';
import { $, app } from './app.js';
import { VECTOR_INPUTS, decimalsOf } from './state.js';
import { editors, layoutEditors, renderGrids, setEditorValue } from './inputs.js';
import { renderMask } from './mask-editor.js';
import { parse } from './problem.js';
import { presetState } from './link.js';
import { scheduleHash, setState, update } from './update.js';
import { escapeHtml, matrixToText } from './format.js';

export function fillPresetSelect() {
  $('preset').innerHTML = presets.map((p) => `<option value="${p.id}">${escapeHtml(p.title)}</option>`).join('') +
    '<option value="">(your own: keep the current inputs)</option>';
}

function showPresetSource() {
  const { state } = app;
  const p = state.preset ? findPreset(state.preset) : null;
  const el = $('preset-source');
  if (!p) { el.innerHTML = ''; return; }
  const src = p.url ? `<a href="${escapeHtml(p.url)}" rel="noopener">${escapeHtml(p.source)}</a>` : escapeHtml(p.source);
  el.innerHTML = `From: ${src}.${p.note ? ` ${escapeHtml(p.note)}` : ''}${state.edited ? ' <strong>(edited)</strong>' : ''}`;
}

/** The example was changed by hand: its source line says so. */
export function markEdited() {
  if (!app.state.edited) {
    app.state.edited = true;
    showPresetSource();
  }
}

/** Every control shows the state. */
export function syncControls() {
  const { state } = app;
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

/** Shows an example; the decimals and what the embedding hides stay as they are. */
export function loadPreset(id) {
  const s = presetState(id);
  if (!s) return;
  s.decimals = app.state.decimals;
  s.hide = app.state.hide;
  setState(s);
}

export function bindControls() {
  $('preset').addEventListener('change', (e) => {
    if (e.target.value) loadPreset(e.target.value);
    else { app.state.preset = null; showPresetSource(); scheduleHash(); }
  });
  for (const r of document.querySelectorAll('input[name="mode"]')) {
    r.addEventListener('change', () => {
      if (!r.checked) return;
      const { state } = app;
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
      app.state.options[key] = read(e.target);
      markEdited();
      if (relayout) layoutEditors();
      if (key === 'scale') $('opt-scale-custom').hidden = app.state.options.scale !== 'custom';
      if (key === 'mask') $('extras').replaceChildren();
      update();
      if (key === 'mask') renderMask();
    });
  };
  // Switching the layout keeps the problem: every matrix moves to the other convention (transposed).
  $('opt-layout').addEventListener('input', (e) => {
    const { state } = app;
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
    const o = app.state.options;
    if (o.kv_heads === o.heads) {
      const h = Math.max(1, Math.round(Number($('opt-heads').value)) || 1);
      o.kv_heads = h;
      $('opt-kvheads').value = h;
    }
  });
  opt('opt-heads', 'heads', (el) => Math.max(1, Math.round(Number(el.value)) || 1));
  opt('opt-kvheads', 'kv_heads', (el) => Math.max(1, Math.round(Number(el.value)) || 1));
  // The W grids label their features by head: relabel when the head counts change.
  for (const id of ['opt-heads', 'opt-kvheads']) {
    $(id).addEventListener('input', () => renderGrids((ed, name) => ed.mode === 'grid' && ['W_Q', 'W_K', 'W_V'].includes(name)));
  }
  opt('opt-precision', 'precision');
  $('opt-decimals').addEventListener('input', (e) => {
    app.state.decimals = decimalsOf({ decimals: e.target.value });
    renderGrids();
    update();
  });
  for (const [id, key] of [['tokens-q', 'q'], ['tokens-k', 'k']]) {
    $(id).addEventListener('input', (e) => {
      app.state.tokens[key] = e.target.value;
      renderGrids((ed) => ed.mode === 'grid' && !ed.el.contains(document.activeElement));
      update();
    });
  }
}
