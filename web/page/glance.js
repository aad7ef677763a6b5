// The weights at a glance, beside the diagram on the first screen: the attention weights of the
// first heads (as many as the diagram draws lanes for), as a small table of their numbers (up to
// 8 × 8) or a small heatmap, on the weights' one 0–1 colour scale, oriented as their step card
// is. The numbers are the trace's (the same formatting as the cards); choosing one opens its
// worked calculation in the weights card. Hidden with the weights (an exercise, ?hide=) and while
// stepping through (a question may ask for them first).
import { colourLut, weightSums } from 'attention-explorer';
import { maskedPositions, stepTableHtml } from 'attention-explorer/step-table';
import { $, app, writeHtml } from './app.js';
import { html } from 'attention-explorer/html';
import { axisLabels, headOf, stepKey } from './steps.js';
import { resultParts, store } from './store.js';
import { rich, t } from './language.js';

/** Heads shown (the diagram's lanes). */
const MAX_HEADS = 2;
/** Up to this many rows and columns the weights are numbers; beyond, a heatmap. */
const NUMBERS_MAX = 8;
/** A heatmap's longer side, in CSS pixels. */
const MAP_SIZE = 132;

function tableHtml(step, ctx, masked) {
  return stepTableHtml(step, axisLabels(step, ctx), {
    attrs: html`class="glance-table" data-key="${stepKey(step)}"`,
    corner: html`<td></td>`,
    decimals: ctx.decimals,
    fixedZero: true,
    masked,
  });
}

function mapHtml(step) {
  const [nr, nc] = step.shape;
  const size = Math.max(1, Math.floor(MAP_SIZE / Math.max(nr, nc)));
  return html`<canvas class="glance-map" data-key="${stepKey(step)}" width="${nc}" height="${nr}" style="width:${nc * size}px;height:${nr * size}px" aria-hidden="true"></canvas>`;
}

function drawMap(canvas, step, masked) {
  const [nr, nc] = step.shape;
  const { lut, index } = colourLut(step.data, step.kind);
  const g = canvas.getContext('2d');
  const img = g.createImageData(nc, nr);
  const px = img.data;
  for (let i = 0, at = 0; i < nr; i++) {
    const row = step.data[i];
    const hid = masked?.[i];
    for (let j = 0; j < nc; j++, at += 4) {
      const t = hid && hid[j] === -Infinity ? -1 : index(row[j]);
      if (t < 0) {
        px[at] = px[at + 1] = px[at + 2] = 200;
      } else {
        px[at] = lut[t * 3];
        px[at + 1] = lut[t * 3 + 1];
        px[at + 2] = lut[t * 3 + 2];
      }
      px[at + 3] = 255;
    }
  }
  g.putImageData(img, 0, 0);
}

/** Draws #glance for the current result (or hides it). */
export function renderGlance() {
  const box = $('glance');
  const result = app.result;
  if (!box) return;
  const ctx = result?.ctx;
  const weights = result ? result.trace.steps.filter((s) => s.id === 'weights') : [];
  if (!weights.length || ctx.hiddenSteps.includes('weights')) {
    box.hidden = true;
    return;
  }
  const multi = result.trace.meta.heads > 1;
  const shown = weights.slice(0, multi ? MAX_HEADS : 1);
  const numbers = shown[0].shape[0] <= NUMBERS_MAX && shown[0].shape[1] <= NUMBERS_MAX;
  const labels = axisLabels(shown[0], ctx);
  const what = `${labels.rowTitle} ↓ ${labels.colTitle} →`;
  const f = result.trace.facts[0];
  const rule = weightSums(ctx.options, f);
  const heads = shown.map((step) => {
    const masked = maskedPositions(result.trace, step);
    return html`<div class="glance-head">${multi && html`<p class="glance-name">${t('explorer.card.head', { head: String(headOf(step) + 1) })}</p>`}${numbers ? tableHtml(step, ctx, masked) : mapHtml(step)}</div>`;
  });
  writeHtml(
    box,
    html`<figcaption>${rich('explorer.glance.caption', {
      step: t(shown[0].title_id),
      more: multi && result.trace.meta.heads > shown.length ? 'yes' : 'no',
      shown: String(shown.length),
      heads: String(result.trace.meta.heads),
      sums: t('explorer.glance.sums', { kind: rule.kind }),
      what,
      numbers: numbers ? 'yes' : 'no',
      hint: (/** @type {unknown[]} */ chunks) => html`<span class="hint">${chunks}</span>`,
    })}</figcaption><div class="glance-heads">${heads}</div>`,
  );
  box.hidden = false;
  if (!numbers)
    for (const step of shown)
      drawMap(box.querySelector(`canvas[data-key="${CSS.escape(stepKey(step))}"]`), step, maskedPositions(result.trace, step));
}

/** A weight chosen at a glance: its cell in the weights card, opened (its worked calculation). */
export function bindGlance(onStep) {
  $('glance')?.addEventListener('click', (e) => {
    const holder = /** @type {HTMLElement} */ (e.target).closest('[data-key]');
    if (!holder) return;
    const key = holder.dataset.key;
    const td = /** @type {HTMLElement} */ (e.target).closest('td[data-r]');
    const cell =
      td &&
      document.querySelector(`#step-list article[data-key="${CSS.escape(key)}"] td[data-r="${td.dataset.r}"][data-c="${td.dataset.c}"]`);
    if (!cell) {
      onStep(key);
      return;
    }
    cell.scrollIntoView({ block: 'center' });
    cell.click();
    cell.focus({ preventScroll: true });
  });
}

/** The weights at a glance follow the results (store.js resultParts). */
export function mountGlance() {
  store.subscribe(resultParts, ([result]) => {
    if (result) renderGlance();
  });
}
