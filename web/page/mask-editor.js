// The mask under the options: a grid of buttons for a keep-mask (click a cell to hide that key
// from that query), or the additive mask's matrix editor.
import { $, app } from './app.js';
import { getEditor, setEditorValue } from './inputs.js';
import { store } from './store.js';
import { setOptions, toggleKeep } from './actions.js';
import { axisLabels } from './steps.js';
import { t } from './language.js';
import { matrixToText } from './format.js';
import { html, setHtml } from 'attention-explorer/html';

/** Draws the mask editor the state's mask option asks for (nothing for "none"). */
export function renderMask() {
  const { state, result } = app;
  const box = $('extras');
  const mode = state.options.mask;
  if (mode === 'additive') {
    const ed = getEditor('mask');
    if (ed.el.parentElement !== box) {
      box.replaceChildren(ed.el);
      let text = state.options.additiveMask;
      if (!text && result) {
        // a mask of zeros (everything kept), the scores' shape, to start from
        const m = result.trace.steps.find((s) => s.id === 'scores');
        text = matrixToText(m.data.map((row) => row.map(() => 0)));
        store.dispatch(setOptions, { additiveMask: text }, {}, { edit: false });
      }
      setEditorValue(ed, text);
      ed.el.querySelector('.editor-desc')?.remove();
    }
    return;
  }
  if (mode !== 'keep') {
    box.replaceChildren();
    return;
  }
  const keep = state.options.keepMask;
  if (!keep || !result?.ctx) return;
  const scoresStep = result.trace.steps.find((s) => s.id === 'scores');
  const labels = axisLabels(scoresStep, result.ctx);
  const rows = keep.map(
    (row, i) =>
      html`<tr><th scope="row">${labels.rows[i]}</th>${row.map(
        (
          v,
          j,
        ) => html`<td><button type="button" class="mask-cell${!v && ' hidden-key'}" data-r="${i}" data-c="${j}" aria-pressed="${String(!v)}"
        aria-label="${labels.rowTitle} ${labels.rows[i]}, ${labels.colTitle} ${labels.cols[j]}: ${t(v ? 'explorer.maskEditor.visible' : 'explorer.maskEditor.hidden')}">${v ? '✓' : '−∞'}</button></td>`,
      )}</tr>`,
  );
  const editor = html`<div class="mask-editor"><h3>${t('explorer.maskEditor.title')}</h3>
    <p class="hint">${t('explorer.maskEditor.hint')}</p>
    <table class="mask-grid"><caption class="visually-hidden">${t('explorer.maskEditor.caption', { rowTitle: labels.rowTitle, colTitle: labels.colTitle })}</caption><thead><tr><th class="corner">${labels.rowTitle} ↓ ${labels.colTitle} →</th>${labels.cols.map((c) => html`<th scope="col">${c}</th>`)}</tr></thead><tbody>${rows}</tbody></table></div>`;
  const focused = document.activeElement?.closest?.('.mask-cell');
  const fr = focused?.dataset.r,
    fc = focused?.dataset.c;
  setHtml(box, editor);
  if (focused) box.querySelector(`.mask-cell[data-r="${fr}"][data-c="${fc}"]`)?.focus();
}

/** The mask editor follows the mask option, the keep-mask and the result (its labels, its size). */
export function mountMaskEditor() {
  store.subscribe((page) => [page.state.options.mask, page.state.options.keepMask, page.result, page.loaded], renderMask);
  $('extras').addEventListener('click', (e) => {
    const b = /** @type {HTMLElement} */ (e.target).closest('.mask-cell');
    if (b) store.dispatch(toggleKeep, Number(b.dataset.r), Number(b.dataset.c));
  });
}
