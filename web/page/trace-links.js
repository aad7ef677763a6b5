// Every number traced: hovering a number, moving to it with the keys, or opening it lights the
// numbers it was computed from (class trace-pre, a solid ring) and the numbers it feeds (trace-dep,
// a dashed ring) in the step tables, the input grids and the diagram, as a spreadsheet traces
// precedents. Direct ones also get trace-near; a heatmap gets its lit cells painted over it.
// Which cells: the package's lineage rules.
import { dependents, precedents } from 'attention-explorer';
import { $, app } from './app.js';
import { html, setHtml } from 'attention-explorer/html';
import { stepKey } from './steps.js';
import { stepLabel } from './exercise.js';
import { t } from './language.js';

const CLASSES = ['trace-pre', 'trace-dep', 'trace-near'];

/** The cell being traced: { key, row, col } (hover or focus first, else the open cell), or null. */
let pointed = null;

function clear() {
  for (const el of document.querySelectorAll('.trace-pre, .trace-dep')) el.classList.remove(...CLASSES);
  for (const overlay of document.querySelectorAll('#step-list canvas.trace-overlay'))
    overlay.getContext('2d').clearRect(0, 0, overlay.width, overlay.height);
}

/**
 * A step drawn as a heatmap (too large for numbers): its lit cells are painted on a canvas laid
 * over the heatmap, one pixel per cell as the heatmap is (violet: computed from; green: feeds).
 */
function paint(card, cells, cls, near) {
  const canvas = card.querySelector('.heatmap canvas:not(.trace-overlay)');
  if (!canvas) return false;
  let overlay = canvas.parentElement.querySelector('canvas.trace-overlay');
  if (!overlay) {
    overlay = document.createElement('canvas');
    overlay.className = 'trace-overlay';
    overlay.setAttribute('aria-hidden', 'true');
    canvas.after(overlay);
  }
  if (overlay.width !== canvas.width || overlay.height !== canvas.height) {
    overlay.width = canvas.width;
    overlay.height = canvas.height;
  }
  Object.assign(overlay.style, {
    left: `${canvas.clientLeft}px`,
    top: `${canvas.clientTop}px`,
    width: canvas.style.width,
    height: canvas.style.height,
  });
  const ctx = overlay.getContext('2d');
  ctx.fillStyle = cls === 'trace-pre' ? `rgba(94, 60, 153, ${near ? 0.8 : 0.5})` : `rgba(27, 120, 55, ${near ? 0.8 : 0.5})`;
  for (const [r, c] of cells) ctx.fillRect(c, r, 1, 1);
  return true;
}

function mark(list, cls, multi) {
  const named = [];
  for (const e of list) {
    const near = e.level <= 1;
    let els = [];
    if (e.input != null) {
      const editor = document.querySelector(`#editors .editor[data-input="${CSS.escape(e.input)}"]`);
      if (editor) els = e.cells.map(([r, c]) => editor.querySelector(`input.cell[data-r="${r}"][data-c="${c}"]`));
      els.push(document.querySelector(`#pipeline .pl-node[data-key="${CSS.escape(`in:${e.input}`)}"]`));
      if (near) named.push(e.input);
    } else {
      const step = app.result.trace.steps[e.step];
      const key = stepKey(step);
      const card = document.querySelector(`#step-list article[data-key="${CSS.escape(key)}"]`);
      if (card && !paint(card, e.cells, cls, near)) els = e.cells.map(([r, c]) => card.querySelector(`td[data-r="${r}"][data-c="${c}"]`));
      els.push(document.querySelector(`#pipeline .pl-node[data-key="${CSS.escape(key)}"]`));
      if (near) named.push(stepLabel(step, multi));
    }
    for (const el of els) {
      if (!el) continue;
      el.classList.add(cls);
      if (near) el.classList.add('trace-near');
    }
  }
  return named;
}

/** Lights the precedents and dependents of `cell` ({ key, row, col }); a summary in #trace-note. */
function light(cell) {
  clear();
  const note = $('trace-note');
  const result = app.result;
  const index = cell && result ? result.trace.steps.findIndex((s) => stepKey(s) === cell.key) : -1;
  if (index < 0) {
    if (note) note.textContent = '';
    return;
  }
  const { trace, problem } = result;
  const multi = trace.meta.heads > 1;
  const from = mark(precedents(trace, index, cell.row, cell.col, { problem }), 'trace-pre', multi);
  const to = mark(dependents(trace, index, cell.row, cell.col), 'trace-dep', multi);
  if (note) {
    const list = (names) => [...new Set(names)].join(', ');
    const fromHtml = from.length
      ? html`<span class="trace-key trace-key-pre"></span> ${t('explorer.trace.from', { steps: list(from) })} `
      : html`${t('explorer.trace.given')} `;
    const toHtml = to.length
      ? html`<span class="trace-key trace-key-dep"></span> ${t('explorer.trace.feeds', { steps: list(to) })}`
      : t('explorer.trace.feedsNone');
    setHtml(note, html`${fromHtml}${toHtml}`);
  }
}

/** The open cell's place, or null. */
function openCell() {
  const open = app.state.open;
  return open ? { key: `${open.step}:${open.head ?? -1}`, row: open.row, col: open.col } : null;
}

/** Redraws the lights: the cell under the pointer or focus, else the open cell (after each render). */
export function renderTraceLinks() {
  light(pointed ?? openCell());
}

const cellOf = (td) => ({ key: td.closest('article').dataset.key, row: Number(td.dataset.r), col: Number(td.dataset.c) });

/** Hover and keyboard focus on a number light its lineage; leaving it goes back to the open cell. */
export function bindTraceLinks(list) {
  const drill = $('drill');
  if (drill && !$('trace-note')) {
    const note = document.createElement('p');
    note.id = 'trace-note';
    note.className = 'trace-note hint';
    drill.append(note);
  }
  const point = (cell) => {
    if (cell?.key === pointed?.key && cell?.row === pointed?.row && cell?.col === pointed?.col) return;
    pointed = cell;
    renderTraceLinks();
  };
  const focused = () => {
    const td = document.activeElement?.closest?.('#step-list td[data-r]');
    return td ? cellOf(td) : null;
  };
  list.addEventListener('mouseover', (e) => {
    const td = /** @type {HTMLElement} */ (e.target).closest('td[data-r]');
    if (td) point(cellOf(td));
    else if (!(/** @type {HTMLElement} */ (e.target).closest('.heatmap canvas'))) point(focused());
  });
  // A heatmap: the cell under the pointer (one canvas pixel per number).
  list.addEventListener('mousemove', (e) => {
    const canvas = /** @type {HTMLElement} */ (e.target).closest('.heatmap canvas');
    if (!canvas) return;
    const rect = canvas.getBoundingClientRect();
    const col = Math.min(canvas.width - 1, Math.floor(((e.clientX - rect.left) / rect.width) * canvas.width));
    const row = Math.min(canvas.height - 1, Math.floor(((e.clientY - rect.top) / rect.height) * canvas.height));
    point({ key: canvas.closest('article').dataset.key, row: Math.max(0, row), col: Math.max(0, col) });
  });
  list.addEventListener('mouseleave', () => point(focused()));
  list.addEventListener('focusin', (e) => {
    const td = /** @type {HTMLElement} */ (e.target).closest('td[data-r]');
    if (td) point(cellOf(td));
  });
  list.addEventListener('focusout', (e) => {
    if (!e.relatedTarget?.closest?.('#step-list td[data-r]')) point(null);
  });
}
