// The mask step's components side by side: one small keep-map per component that is on (causal,
// the window, its sink tokens, your mask) and "= combined", so a reader sees which component hid
// an entry (a key outside the window but kept as a sink, say). Every map is read off the core's
// facts.hidden_by (same layout as the mask step): this view recomputes no mask.
import { colourScale } from 'attention-explorer';
import { html } from 'attention-explorer/html';
import { t } from './language.js';

/** The bits of facts.hidden_by: what hid an entry, or that a sink token kept it from the window. */
export const HIDDEN_BY = { causal: 1, window: 2, mask: 4, keptBySink: 8 };

/** Hidden in the combined mask: some component hid it (a sink only ever keeps). */
export const isHidden = (bits) => (bits & ~HIDDEN_BY.keptBySink) !== 0;

/** Component maps are tables of small squares up to this many entries; beyond, a note. */
const MAX_ENTRIES = 24 * 24;

// The keep_mask colour scale: 1 (kept) and 0 (hidden).
const keepColour = colourScale([[0, 1]], 'keep_mask');
const COLOUR = { kept: keepColour(1), hidden: keepColour(0) };

/** "at most 1 position before", "none after", "any number before": side is before or after. */
function reach(by, side) {
  return t(`explorer.mask.reach.${side}`, { any: by == null ? 'yes' : 'no', count: by ?? 0, n: String(by ?? 0) });
}

/**
 * The components that are on, in the core's order, each with its title, its one-line legend and
 * its state per entry from the entry's hidden_by bits: 'kept', 'hidden' or 'none' (a sink has no
 * say there), and `sink` where a sink token kept the entry from the window.
 * options: the problem's options; additive: the user's mask is additive (meta.mask_kind).
 */
function components(step, options, additive) {
  const list = [];
  const windowed = Array.isArray(options.window) && (options.window[0] != null || options.window[1] != null);
  const sinks = windowed && options.sink_tokens > 0 ? options.sink_tokens : 0;
  const sinkMark = (bits) => (bits & HIDDEN_BY.keptBySink) !== 0;
  if (options.causal) {
    list.push({
      id: 'causal',
      title: t('explorer.mask.title.causal'),
      legend: t('explorer.mask.legend.causal'),
      state: (bits) => (bits & HIDDEN_BY.causal ? 'hidden' : 'kept'),
    });
  }
  if (windowed) {
    const [left, right] = options.window;
    const bound = (b) => (b == null ? '∞' : String(b));
    list.push({
      id: 'window',
      title: t('explorer.mask.title.window', { left: bound(left), right: bound(right) }),
      legend: t('explorer.mask.legend.window', {
        before: reach(left, 'before'),
        after: reach(right, 'after'),
        sinks: sinks ? 'yes' : 'no',
      }),
      // The window alone hides what a sink token keeps: that is the sink's doing.
      state: (bits) => (bits & (HIDDEN_BY.window | HIDDEN_BY.keptBySink) ? 'hidden' : 'kept'),
      sink: sinkMark,
    });
  }
  if (sinks) {
    list.push({
      id: 'sink',
      title: t('explorer.mask.title.sink', { n: String(sinks) }),
      legend: t('explorer.mask.legend.sink', { count: sinks, n: String(sinks) }),
      state: (bits) => (sinkMark(bits) ? 'kept' : 'none'),
      sink: sinkMark,
    });
  }
  if (step.given.includes('mask')) {
    list.push({
      id: 'mask',
      title: t('explorer.mask.title.mask'),
      legend: t(additive ? 'explorer.mask.legend.additive' : 'explorer.mask.legend.mask'),
      state: (bits) => (bits & HIDDEN_BY.mask ? 'hidden' : 'kept'),
    });
  }
  return list;
}

/** What the combined mask did with an entry, naming its components. */
export function entryComponents(bits) {
  const by = ['causal', 'window', 'mask'].filter((c) => bits & HIDDEN_BY[c]).map((c) => t(`explorer.mask.by.${c}`));
  const sink = bits & HIDDEN_BY.keptBySink ? 'yes' : 'no';
  if (!by.length) return t(sink === 'yes' ? 'explorer.mask.keptBySink' : 'explorer.mask.keptByAll');
  const [a, b, c] = by;
  const names = by.length === 1 ? a : t(by.length === 2 ? 'explorer.mask.two' : 'explorer.mask.three', { a, b, c });
  return t('explorer.mask.hiddenBy', { names, sink });
}

/** The mark of an entry a sink token kept from the window, as the maps draw it. */
const sinkDot = () => html`<span class="sink-dot" role="img" aria-label="${t('explorer.mask.dot')}"></span>`;

function mapHtml(part, hiddenBy, labels, shape) {
  const [nr, nc] = shape;
  const caption = t('explorer.mask.caption', {
    title: part.title,
    rows: String(nr),
    rowTitle: labels.rowTitle,
    cols: String(nc),
    colTitle: labels.colTitle,
    legend: part.legend,
  });
  // Row headers and each entry's words are for screen readers; the squares show the states.
  const rows = [];
  for (let i = 0; i < nr; i++) {
    const cells = [];
    for (let j = 0; j < nc; j++) {
      const bits = hiddenBy[i][j];
      const state = part.state(bits);
      const sink = part.sink?.(bits) ?? false;
      const colour = COLOUR[state];
      const style = colour && html` style="background:${colour.bg}"`;
      const words = part.id === 'combined' ? entryComponents(bits) : t('explorer.mask.state', { state, sink: sink ? 'yes' : 'no' });
      const key = `${labels.colTitle} ${labels.cols[j]}`;
      cells.push(
        html`<td data-i="${i}" data-j="${j}" data-state="${state}"${sink && html` data-sink="kept"`}${style} title="${labels.rowTitle} ${labels.rows[i]}, ${key}: ${words}"><span class="visually-hidden">${key}: ${words}</span></td>`,
      );
    }
    rows.push(html`<tr><th scope="row" class="visually-hidden">${labels.rowTitle} ${labels.rows[i]}</th>${cells}</tr>`);
  }
  // The legend's first ● is the mark itself.
  const dot = part.legend.indexOf('●');
  const legend = dot < 0 ? part.legend : html`${part.legend.slice(0, dot)}${sinkDot()}${part.legend.slice(dot + 1)}`;
  return html`<figure class="mask-part" data-part="${part.id}"><figcaption>${part.title}</figcaption><table class="mask-map"><caption class="visually-hidden">${caption}</caption><tbody>${rows}</tbody></table><p class="mask-part-legend">${legend}</p></figure>`;
}

/**
 * The row of component maps for the mask step (empty for other steps, and when only one component
 * is on: the mask table is then that component). facts: the step's head's facts; options: the
 * problem's options; labels: the step's axis labels (steps.js axisLabels).
 */
export function maskComponentsHtml(step, facts, options, meta, labels) {
  if (step.id !== 'mask' || !facts?.hidden_by) return html``;
  const parts = components(step, options ?? {}, meta.mask_kind === 'additive');
  if (parts.length < 2) return html``;
  const [nr, nc] = step.shape;
  if (nr * nc > MAX_ENTRIES) {
    const titles = parts.map((p) => p.title).join(', ');
    return html`<p class="hint">${t('explorer.mask.tooLarge', { titles, rows: String(nr), cols: String(nc) })}</p>`;
  }
  parts.push({
    id: 'combined',
    title: t('explorer.mask.title.combined'),
    legend: t('explorer.mask.legend.combined', { sink: parts.some((p) => p.id === 'sink') ? 'yes' : 'no' }),
    state: (bits) => (isHidden(bits) ? 'hidden' : 'kept'),
  });
  const maps = parts.map((p) => mapHtml(p, facts.hidden_by, labels, step.shape));
  return html`<div class="mask-parts" role="group" aria-label="${t('explorer.mask.group')}">${maps}</div><p class="mask-parts-readout" aria-live="polite">${t('explorer.mask.readout')}</p>`;
}

const bound = new WeakSet();

/**
 * Pointing at an entry of a component map writes what it says under the maps; clicking one of
 * the combined map opens the worked calculation of that mask entry (it lists the components).
 */
export function bindMaskComponents(container) {
  if (bound.has(container)) return;
  bound.add(container);
  const readout = (td) => {
    const out = td.closest('.step-body')?.querySelector('.mask-parts-readout');
    if (out) out.textContent = td.title;
  };
  container.addEventListener('mouseover', (e) => {
    const td = /** @type {HTMLElement} */ (e.target).closest?.('table.mask-map td[data-i]');
    if (td) readout(td);
  });
  container.addEventListener('click', (e) => {
    const td = /** @type {HTMLElement} */ (e.target).closest?.('table.mask-map td[data-i]');
    if (!td) return;
    readout(td);
    if (td.closest('.mask-part')?.dataset.part !== 'combined') return;
    td.closest('article')?.querySelector(`table.matrix td[data-r="${td.dataset.i}"][data-c="${td.dataset.j}"]`)?.click();
  });
}
