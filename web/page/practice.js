// "In practice": five walkthroughs on the learner's current problem, one position at a time
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
//
// This file drives them: the tabs, Next/Previous and the keys, the position line and the
// sentence, the fields, the heatmaps, the exports. Each walkthrough is a module of
// web/page/practice/ with the interface practice/walk.js describes (`Walkthrough`).
import { html, setHtml } from 'attention-explorer/html';
import { $, app } from './app.js';
import { toClipboard } from './copy-latex.js';
import { download } from './export-panel.js';
import { flags } from './embed.js';
import { setStepping } from './stepper.js';
import { drawHeatmap } from './steps.js';
import { resultParts, store } from './store.js';
import { chooseWalk, walkTo } from './actions.js';
import * as decode from './practice/decode.js';
import * as gradients from './practice/gradients.js';
import * as recurrent from './practice/recurrent.js';
import * as softmax from './practice/softmax.js';
import * as tiles from './practice/tiles.js';
import { current, heatmapSteps, practiceEngine, walkState } from './practice/walk.js';
import { t } from './language.js';
import { errorWords } from 'attention-explorer/i18n';

/** @type {Record<string, import('./practice/walk.js').Walkthrough>} The walkthroughs, in the tabs' order. */
const WALKTHROUGHS = { softmax, decode, tiles, gradients, recurrent };

/** Each walkthrough's name: the message id of its tab. */
export const WALKS = Object.fromEntries(Object.entries(WALKTHROUGHS).map(([id, w]) => [id, w.title]));

// ---- exports of the open walkthrough -----------------------------------------------------------

// The export buttons' words: explorer.practice.export.<format>.

/** The export buttons of walkthrough `id` (drawn again only when the walkthrough changes). */
function renderExportRow(id, view) {
  const row = $('practice-export');
  const exports = WALKTHROUGHS[id].exporters;
  row.hidden = !exports || Boolean(view.error);
  if (row.dataset.walk === id) return;
  row.dataset.walk = id;
  if (!exports) {
    row.replaceChildren();
    return;
  }
  const formats = ['copy-latex', 'latex', 'csv', 'json', ...(exports.numpy ? ['numpy'] : [])];
  const buttons = formats.map(
    (f, i) => html`${i > 0 && ' '}<button type="button" data-walk-export="${f}">${t(`explorer.practice.export.${f}`)}</button>`,
  );
  setHtml(
    row,
    html`<span class="pr-export-label">${t('explorer.practice-export.label')}</span> ${buttons} <span id="practice-export-status" class="pr-export-status" role="status" aria-live="polite"></span>`,
  );
}

/** Makes one export of the open walkthrough: { name, type, text }. */
function walkExport(format) {
  const exports = WALKTHROUGHS[walkState().id]?.exporters;
  const view = current.view;
  if (!exports || !view || view.error) throw new Error(t('explorer.practice.nothingToExport'));
  const { ctx } = app.result;
  const latex = (standalone) =>
    exports.latex(view, { decimals: ctx.decimals, standalone, labels: { tokensQ: ctx.tokensQ, tokensK: ctx.tokensK }, t });
  switch (format) {
    case 'copy-latex':
      return { text: latex(false) };
    case 'latex':
      return { name: `${exports.file}.tex`, type: 'text/x-tex', text: latex(true) };
    case 'csv':
      return { name: `${exports.file}.csv`, type: 'text/csv', text: exports.csv(view) };
    case 'json':
      return { name: `${exports.file}.json`, type: 'application/json', text: `${exports.json(view)}\n` };
    case 'numpy':
      return { name: `${exports.file.replace(/-/g, '_')}.py`, type: 'text/x-python', text: exports.numpy(view) };
    default:
      throw new Error(`unknown export ${format}`);
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
      status.textContent = t('explorer.practice.copied');
    } else {
      download(out.name, out.text, out.type);
      status.textContent = t('explorer.practice.downloaded', { name: out.name });
    }
  } catch (err) {
    status.textContent = t('explorer.practice.notExported', { error: errorWords(err, t) });
  }
}

// ---- the walk ----------------------------------------------------------------------------------

/** Recomputes the open walkthrough on the current problem and draws it (nothing when closed). */
export async function renderPractice() {
  const panel = $('practice');
  if (!panel || panel.hidden || !walkState().id || !app.result) return;
  const run = ++current.run;
  const engine = await practiceEngine();
  if (run !== current.run) return;
  const { id } = walkState();
  const walkthrough = WALKTHROUGHS[id];
  for (const tab of panel.querySelectorAll('[role="tab"]')) tab.setAttribute('aria-selected', String(tab.dataset.walk === id));
  let view;
  try {
    view = walkthrough.compute(engine, app.result);
  } catch (err) {
    view = { error: errorWords(err, t), failure: err, positions: 0 };
  }
  current.view = view;
  renderExportRow(id, view);
  // The fields are drawn again only when what they show changes (another walkthrough, dO's
  // shape): an edit keeps its field, and the focus, in place.
  const controls = $('practice-controls');
  const key = walkthrough.controlsKey?.() ?? id;
  if (controls.dataset.key !== key) {
    setHtml(controls, walkthrough.controls?.(view) ?? html``);
    controls.dataset.key = key;
    walkthrough.bind?.();
  }
  // The fields mark what an error names (gradients: dO's cell), or clear the mark.
  walkthrough.showError?.(view.failure ?? null);
  if (view.error) {
    $('practice-pos').textContent = t(walkthrough.title);
    $('practice-text').textContent = t('explorer.practice.notComputed', { error: view.error });
    $('practice-body').replaceChildren();
    $('pr-prev').disabled = true;
    $('pr-next').disabled = true;
    return;
  }
  // Fewer positions than before (an edit): the last one. Read below from the store.
  store.dispatch(walkTo, Math.max(0, Math.min(walkState().index, view.positions - 1)));
  const { index } = walkState();
  $('practice-pos').textContent = t('explorer.practice.position', { walk: t(walkthrough.title), where: walkthrough.where(view, index) });
  const { ctx } = app.result;
  $('practice-text').textContent = walkthrough.sentence(view, index, { tokensQ: ctx.tokensQ, tokensK: ctx.tokensK, options: ctx.options });
  heatmapSteps.length = 0;
  setHtml($('practice-body'), walkthrough.body(view));
  walkthrough.drawn?.(view);
  $('practice-body')
    .querySelectorAll('.heatmap canvas')
    .forEach((canvas, i) => drawHeatmap(canvas, heatmapSteps[i]));
  $('pr-prev').disabled = index === 0;
  $('pr-next').disabled = index >= view.positions - 1;
}

function go(index) {
  if (!current.view || current.view.error) return;
  store.dispatch(walkTo, Math.max(0, Math.min(current.view.positions - 1, index)));
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

/** ← → (PageUp/PageDown, Home, End) move while the panel is open; fields keep their keys. */
function onKey(e) {
  const walk = walkState();
  if (!walk.id || $('practice').hidden || e.altKey || e.ctrlKey || e.metaKey) return;
  if (document.body.classList.contains('stepping') && !$('practice').contains(e.target)) return;
  if (/** @type {HTMLElement} */ (e.target).closest?.('input, textarea, select, [contenteditable="true"], #step-list td[data-r], canvas'))
    return;
  const n = current.view?.positions ?? 0;
  const moves = {
    ArrowRight: walk.index + 1,
    PageDown: walk.index + 1,
    ArrowLeft: walk.index - 1,
    PageUp: walk.index - 1,
    Home: 0,
    End: n - 1,
  };
  if (!(e.key in moves)) return;
  e.preventDefault();
  go(moves[e.key]);
}

export function bindPractice() {
  const tabs = $('practice-tabs');
  setHtml(
    tabs,
    html`${Object.entries(WALKS).map(
      ([id, name]) =>
        html`<button type="button" role="tab" id="pr-tab-${id}" data-walk="${id}" aria-selected="false" aria-controls="practice-body">${t(name)}</button>`,
    )}`,
  );
  tabs.addEventListener('click', (e) => {
    const tab = /** @type {HTMLElement} */ (e.target).closest('[role="tab"]');
    if (tab) openWalk(tab.dataset.walk);
  });
  $('practice-open').addEventListener('click', () => {
    openWalk(walkState().id ? null : 'softmax');
    if (walkState().id) $('practice').scrollIntoView({ block: 'start' });
  });
  $('practice-close').addEventListener('click', () => {
    openWalk(null);
    $('practice-open').focus();
  });
  $('pr-prev').addEventListener('click', () => go(walkState().index - 1));
  $('pr-next').addEventListener('click', () => go(walkState().index + 1));
  $('practice-body').addEventListener('click', (e) => WALKTHROUGHS[walkState().id]?.onClick?.(e));
  $('practice-body').addEventListener('keydown', (e) => WALKTHROUGHS[walkState().id]?.onKey?.(e));
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
    $('practice-text').textContent = t('explorer.practice.unknown', { asked, walks: Object.keys(WALKS).join(', ') });
  }
}

/** The walkthroughs follow the results (they start from the problem that computed) and their own state. */
export function mountPractice() {
  store.subscribe(
    (page) => [...resultParts(page), page.ui.walk],
    ([result]) => {
      if (result) renderPractice();
    },
  );
}
