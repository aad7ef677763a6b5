// The open cell: clicking a number (or moving to it with the keys) selects it and shows its worked
// calculation from engine.explain; folding steps and renaming tokens where they are shown.
import { $, app, writeHtml } from './app.js';
import { tokenLists, traceCounts } from './state.js';
import { renderGrids } from './inputs.js';
import { store } from './store.js';
import { openCell, setTokens, toggleFolded } from './actions.js';
import { markScrollables } from './scrollables.js';
import { axisLabels, cellTokens, headOf, stepKey } from './steps.js';
import { explanationHtml } from './explain.js';
import { fmt } from './format.js';
import { html } from 'attention-explorer/html';
import { markPipeline } from './pipeline.js';
import { t } from './language.js';
import { errorWords } from 'attention-explorer/i18n';
import { bindTraceLinks, renderTraceLinks } from './trace-links.js';

/** What the panel says while no cell is open (a function: the language is chosen after this module loads). */
const prompt = () => html`<p class="hint">${t('explorer.drill.prompt')}</p>`;

/** Marks the open cell in its step and writes its worked calculation in the drill panel. */
export function renderSelection(focus) {
  const { state, result } = app;
  const body = $('drill-body');
  queueMicrotask(markPipeline);
  queueMicrotask(renderTraceLinks);
  for (const el of document.querySelectorAll('#step-list .selected')) el.classList.remove('selected');
  const open = state.open;
  if (!open || !result) {
    writeHtml(body, prompt()); // after most edits, as it was
    return;
  }
  const step = result.steps.find((s) => s.id === open.step && headOf(s) === (open.head ?? -1));
  const [nr, nc] = step ? step.shape : [0, 0];
  if (!step || open.row >= nr || open.col >= nc) {
    // the cell is gone (fewer tokens, another problem)
    store.dispatch(openCell, null);
    writeHtml(body, prompt());
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
    // open.head is -1 for a step without a head (X_pos, output): explain() reads -1 as that.
    e = app.engine.explain(result.problem, { step: open.step, head: open.head, row: open.row, col: open.col });
  } catch (err) {
    writeHtml(body, html`<p class="error">${errorWords(err, t)}</p>`);
    return;
  }
  const labels = axisLabels(step, result.ctx);
  const { query, key: keyIndex } = cellTokens(step, open.row, open.col);
  writeHtml(
    body,
    explanationHtml(e, {
      step,
      steps: result.trace.steps,
      rowLabel: labels.rows[open.row],
      colLabel: labels.cols[open.col],
      queryLabel: result.ctx.tokensQ[query] ?? '',
      keyLabel: result.ctx.tokensK[keyIndex] ?? '',
      keyLabels: result.ctx.tokensK,
      queryLabels: result.ctx.tokensQ,
      layout: state.options.layout,
      heads: result.ctx.meta.heads,
      decimals: result.ctx.decimals,
      scaleMode: state.options.scale,
      d_k: result.ctx.meta.d_k,
    }),
  );
  // On narrow screens the panel follows the step it explains.
  if (card && window.matchMedia('(max-width: 959px)').matches) card.after($('drill'));
}

function moveCursor(canvas, r, c, focus) {
  const { result } = app;
  const box = canvas.parentElement;
  const cursor = box.querySelector('.cursor');
  const nc = canvas.width,
    nr = canvas.height;
  const w = canvas.clientWidth / nc,
    h = canvas.clientHeight / nr;
  cursor.hidden = false;
  Object.assign(cursor.style, { left: `${c * w}px`, top: `${r * h}px`, width: `${Math.max(w, 3)}px`, height: `${Math.max(h, 3)}px` });
  canvas.dataset.r = r;
  canvas.dataset.c = c;
  const key = canvas.closest('.heatmap').dataset.key;
  const step = result?.steps.find((s) => stepKey(s) === key);
  if (step) {
    const labels = axisLabels(step, result.ctx);
    canvas.closest('.heatmap').querySelector('.heatmap-readout').textContent = t('explorer.heatmap.readout', {
      row: String(r + 1),
      rowLabel: labels.rows[r],
      col: String(c + 1),
      colLabel: labels.cols[c],
      value: fmt(step.data[r][c], result.ctx.decimals),
    });
  }
  if (focus) canvas.focus();
}

function select(card, row, col, focus) {
  if (!card) return;
  const head = Number(card.dataset.head);
  store.dispatch(openCell, { step: card.dataset.step, head, row, col }, focus);
  store.flush();
  markScrollables();
}

function renameToken(kind, index, name) {
  const { state, result } = app;
  const counts = result ? traceCounts(result.trace) : { L: 0, S: 0, cached: 0 };
  const lists = tokenLists(state, counts);
  // Cached keys are named "past n" by the page: only the new keys' names are the user's.
  const at = kind === 'k' ? index - counts.cached : index;
  if (at < 0) return;
  const ownKeys = state.mode !== 'self';
  const key = kind === 'k' && ownKeys ? 'k' : 'q';
  const names = (key === 'k' ? lists.k.slice(counts.cached) : lists.q).slice();
  names[at] = name;
  store.dispatch(setTokens, key, names.join(' '));
  $(key === 'k' ? 'tokens-k' : 'tokens-q').value = app.state.tokens[key];
  renderGrids((ed) => ed.mode === 'grid');
}

/**
 * The open cell follows the store: drawn after the results' views (`parts`: theirs and the open
 * cell, update.js's selectionParts), taking the focus when the action that opened it asked so.
 */
export function mountSelection(parts) {
  let lastOpen = null;
  store.subscribe(parts, (_, page) => {
    const moved = page.state.open !== lastOpen;
    lastOpen = page.state.open;
    renderSelection(moved && page.ui.focusOpen);
  });
  bindSteps();
}

function bindSteps() {
  // Steps: click or Enter on a number opens its worked calculation; arrows move in a table.
  const list = $('step-list');
  bindTraceLinks(list);
  list.addEventListener('click', (e) => {
    const fold = /** @type {HTMLElement} */ (e.target).closest('button.fold');
    if (fold) {
      const key = fold.closest('article').dataset.key;
      store.dispatch(toggleFolded, key);
      store.flush();
      list.querySelector(`article[data-key="${key}"] button.fold`)?.focus();
      return;
    }
    const td = /** @type {HTMLElement} */ (e.target).closest('td[data-r]');
    if (td) {
      select(td.closest('article'), Number(td.dataset.r), Number(td.dataset.c), true);
      return;
    }
    const canvas = /** @type {HTMLElement} */ (e.target).closest('canvas');
    if (canvas) {
      const rect = canvas.getBoundingClientRect();
      const c = Math.min(canvas.width - 1, Math.floor(((e.clientX - rect.left) / rect.width) * canvas.width));
      const r = Math.min(canvas.height - 1, Math.floor(((e.clientY - rect.top) / rect.height) * canvas.height));
      select(canvas.closest('article'), r, c, true);
    }
  });
  list.addEventListener('keydown', (e) => {
    const td = /** @type {HTMLElement} */ (e.target).closest?.('td[data-r]');
    const canvas = /** @type {HTMLElement} */ (e.target).closest?.('canvas');
    if (!td && !canvas) return;
    let r = Number((td ?? canvas).dataset.r ?? 0),
      c = Number((td ?? canvas).dataset.c ?? 0);
    const card = /** @type {HTMLElement} */ (e.target).closest('article');
    const [nr, nc] = td
      ? [td.closest('tbody').rows.length, /** @type {HTMLTableRowElement} */ (td.parentElement).cells.length - 1]
      : [canvas.height, canvas.width];
    switch (e.key) {
      case 'ArrowUp':
        r = Math.max(0, r - 1);
        break;
      case 'ArrowDown':
        r = Math.min(nr - 1, r + 1);
        break;
      case 'ArrowLeft':
        c = Math.max(0, c - 1);
        break;
      case 'ArrowRight':
        c = Math.min(nc - 1, c + 1);
        break;
      case 'Home':
        c = 0;
        break;
      case 'End':
        c = nc - 1;
        break;
      case 'Enter':
      case ' ':
        e.preventDefault();
        select(card, r, c, true);
        return;
      default:
        return;
    }
    e.preventDefault();
    if (td) {
      const next = card.querySelector(`td[data-r="${r}"][data-c="${c}"]`);
      if (next) {
        td.tabIndex = -1;
        next.tabIndex = 0;
        next.focus();
      }
    } else moveCursor(canvas, r, c, true);
  });

  // Token names can also be renamed where they are shown: double-click a row or column label.
  list.addEventListener('dblclick', (e) => {
    const th = /** @type {HTMLElement} */ (e.target).closest('th[data-token]');
    if (!th || th.querySelector('input')) return;
    const [kind, index] = th.dataset.token.split(':');
    const input = document.createElement('input');
    input.type = 'text';
    input.className = 'token-edit';
    const before = th.textContent;
    input.value = before;
    input.setAttribute('aria-label', t('explorer.token.rename', { kind: kind === 'k' ? 'key' : 'query', n: String(Number(index) + 1) }));
    th.replaceChildren(input);
    input.focus();
    input.select();
    let done = false;
    const finish = (commit) => {
      if (done) return;
      done = true;
      const name = input.value.trim().replace(/[\s,]+/g, '_');
      if (commit && name) renameToken(kind, Number(index), name);
      else th.replaceChildren(before); // as it was
    };
    input.addEventListener('keydown', (ev) => {
      if (ev.key === 'Enter') {
        ev.preventDefault();
        finish(true);
      }
      if (ev.key === 'Escape') {
        ev.preventDefault();
        finish(false);
      }
    });
    input.addEventListener('blur', () => finish(true));
  });

  let resizeTimer = 0;
  window.addEventListener('resize', () => {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(() => {
      renderSelection(false);
      markScrollables();
    }, 150);
  });
}
