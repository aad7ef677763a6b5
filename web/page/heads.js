// Heads side by side: every head's attention weights as small heatmaps next to each other, on the
// weights' one fixed 0–1 colour scale (so heads compare by colour), and the weights of one head
// (chosen per head) as lines between tokens, as bertviz draws them: queries on the left, keys on
// the right, each line as opaque as its weight. Numbers come from the trace's weights steps.
import { colourLut, colourScale } from 'attention-explorer';
import { $, app, drawWhenSeen, writeHtml } from './app.js';
import { fmt } from './format.js';
import { html, setHtml } from 'attention-explorer/html';
import { resultParts, store } from './store.js';
import { openCell } from './actions.js';
import { t } from './language.js';

/** The lines view draws up to this many tokens a side (beyond, lines are too dense to read). */
const LINES_MAX = 64;
/** Each small heatmap fits in about this many pixels. */
const MAP_SIZE = 150;
/** Beyond this many weights a map is a canvas (one pixel per weight) instead of one SVG rect each. */
const RECTS_MAX = 48 * 48;

/** The head whose lines are drawn (kept across updates). */
let shownHead = 0;

/** A weights step as [query][key] whatever the layout (the columns layout has keys as rows). */
function byQuery(step) {
  if (step.axes[0] === 'queries') return step.data;
  return step.data[0].map((_, q) => step.data.map((row) => row[q]));
}

function heatmapSvg(step, w, tokensQ, tokensK, decimals) {
  const L = w.length,
    S = w[0].length;
  const head = step.head + 1;
  const label = t('explorer.heads.mapLabel', { head: String(head), queries: String(L), keys: String(S) });
  const caption = t('explorer.card.head', { head: String(head) });
  if (L * S > RECTS_MAX) {
    const size = Math.max(1, Math.floor(MAP_SIZE / Math.max(L, S)));
    return html`<figure class="head-map" data-head="${step.head}"><figcaption>${caption}</figcaption><canvas width="${S}" height="${L}" style="width:${S * size}px;height:${L * size}px" role="img" aria-label="${label}"></canvas></figure>`;
  }
  const cell = Math.max(3, Math.min(28, Math.floor(MAP_SIZE / Math.max(L, S))));
  const colour = colourScale(step.data, step.kind);
  const rects = w.map((row, q) =>
    row.map((v, k) => {
      const c = colour(v);
      const title = `${tokensQ[q] ?? t('narrate.name.query', { n: String(q + 1) })} → ${tokensK[k] ?? t('narrate.name.key', { n: String(k + 1) })}: ${fmt(v, decimals)}`;
      return html`<rect x="${k * cell}" y="${q * cell}" width="${cell}" height="${cell}" fill="${c ? c.bg : '#999'}" data-q="${q}" data-k="${k}" data-value="${v}"><title>${title}</title></rect>`;
    }),
  );
  return html`<figure class="head-map" data-head="${step.head}"><figcaption>${caption}</figcaption><svg width="${S * cell}" height="${L * cell}" viewBox="0 0 ${S * cell} ${L * cell}" role="img" aria-label="${label}">${rects}</svg></figure>`;
}

/** A large map: the weights as canvas pixels on the same 0–1 scale. */
function drawMap(canvas, step, w) {
  const { lut, index } = colourLut(step.data, step.kind);
  const g = canvas.getContext('2d');
  const img = g.createImageData(canvas.width, canvas.height);
  w.forEach((row, q) =>
    row.forEach((v, k) => {
      const t = index(v);
      const at = (q * canvas.width + k) * 4;
      img.data.set(t < 0 ? [150, 150, 150] : lut.subarray(t * 3, t * 3 + 3), at);
      img.data[at + 3] = 255;
    }),
  );
  g.putImageData(img, 0, 0);
}

/** A line is as opaque as its weight. */
const lineOpacity = (v) => (Number.isFinite(v) ? Math.max(0, Math.min(1, v)) : 0);

function linesSvg(step, w, tokensQ, tokensK) {
  const L = w.length,
    S = w[0].length;
  const gap = 22,
    pad = 12,
    textW = 90,
    span = 150;
  const height = pad * 2 + gap * (Math.max(L, S) - 1);
  const yQ = (q) => pad + gap * q + (gap * (Math.max(L, S) - L)) / 2;
  const yK = (k) => pad + gap * k + (gap * (Math.max(L, S) - S)) / 2;
  const x1 = textW,
    x2 = textW + span;
  const lines = w.map((row, q) =>
    row.map(
      (v, k) =>
        html`<line x1="${x1}" y1="${yQ(q)}" x2="${x2}" y2="${yK(k)}" stroke-opacity="${lineOpacity(v)}" data-q="${q}" data-k="${k}" data-weight="${v}"/>`,
    ),
  );
  const label = (x, y, text, anchor, attrs) =>
    html`<text x="${x}" y="${y}" text-anchor="${anchor}" dominant-baseline="middle" ${attrs}>${text}</text>`;
  const left = tokensQ.slice(0, L).map((t, q) => label(x1 - 6, yQ(q), t, 'end', html`data-q="${q}"`));
  const right = tokensK.slice(0, S).map((t, k) => label(x2 + 6, yK(k), t, 'start', html`data-k="${k}"`));
  const title = t('explorer.heads.linesLabel', { head: String(step.head + 1) });
  return html`<svg class="head-lines-svg" width="${x2 + textW}" height="${height}" viewBox="0 0 ${x2 + textW} ${height}" role="img" aria-label="${title}"><g class="lines">${lines}</g>${left}${right}</svg>`;
}

/** The button under the diagram that leads to the panel. */
function diagramLink(box) {
  let link = /** @type {HTMLButtonElement} */ ($('heads-link'));
  const pipeline = $('pipeline');
  if (!link && pipeline) {
    link = document.createElement('button');
    link.type = 'button';
    link.id = 'heads-link';
    link.className = 'heads-link';
    pipeline.after(link);
    link.addEventListener('click', () => {
      const title = $('heads-title');
      title?.scrollIntoView({ block: 'start' });
      title?.focus({ preventScroll: true });
    });
  }
  if (!link) return;
  link.hidden = box.hidden;
  const text = t('explorer.heads.link', { multi: app.result?.trace.meta.heads > 1 ? 'yes' : 'no' });
  if (link.textContent !== text) link.textContent = text;
}

/** Draws the heads panel (#heads-view, made after the step list on first use) for the current result. */
export function renderHeads() {
  const result = app.result;
  const list = $('step-list');
  if (!list) return;
  /** @type {HTMLElement & { headsHtml?: string | null }} the panel, and the HTML last written to it */
  let box = $('heads-view');
  const weights = result ? result.trace.steps.filter((s) => s.id === 'weights' && s.head != null && s.head >= 0) : [];
  const hidden = result?.ctx?.hiddenSteps ?? [];
  if (!weights.length || hidden.includes('weights')) {
    if (box) {
      box.hidden = true;
      diagramLink(box);
    }
    return;
  }
  if (!box) {
    box = document.createElement('section');
    box.id = 'heads-view';
    box.className = 'heads-view';
    box.setAttribute('aria-labelledby', 'heads-title');
    list.after(box);
    box.addEventListener('change', (e) => {
      if (/** @type {HTMLInputElement | HTMLSelectElement} */ (e.target).name !== 'lines-head') return;
      shownHead = Number(/** @type {HTMLInputElement | HTMLSelectElement} */ (e.target).value);
      renderHeads();
      box.querySelector('input[name="lines-head"]:checked')?.focus();
    });
    // A weight in a small map opens it in its step (its worked calculation and its traced numbers).
    box.addEventListener('click', (e) => {
      const rect = /** @type {HTMLElement} */ (e.target).closest('rect[data-q]');
      const step =
        rect && app.result?.trace.steps.find((s) => s.id === 'weights' && s.head === Number(rect.closest('.head-map').dataset.head));
      if (!step) return;
      const q = Number(rect.dataset.q),
        k = Number(rect.dataset.k);
      const [row, col] = step.axes[0] === 'queries' ? [q, k] : [k, q];
      store.dispatch(openCell, { step: 'weights', head: step.head, row, col }, true);
      store.flush();
    });
  }
  box.hidden = false;
  diagramLink(box);
  const { tokensQ, tokensK, decimals } = result.ctx;
  if (shownHead >= weights.length) shownHead = 0;
  const multi = weights.length > 1;
  // The small maps are shown for several heads only (one head's weights are the step's table).
  const maps = html`${multi && weights.map((s) => heatmapSvg(s, byQuery(s), tokensQ, tokensK, decimals))}`;
  const step = weights[shownHead];
  const w = byQuery(step);
  const tooMany = Math.max(w.length, w[0].length) > LINES_MAX;
  // Only the numbers changed (an edit): the lines (up to 64 × 64) get their new opacities in place,
  // which costs a fraction of making them again.
  const signature = [
    weights.length,
    step.head,
    w.length,
    w[0].length,
    tokensQ.slice(0, w.length).join('\n'),
    tokensK.slice(0, w[0].length).join('\n'),
  ].join('|');
  if (!tooMany && box.dataset.signature === signature && patchLines(box, w)) {
    box.headsHtml = null; // the panel is no longer the HTML last written
    const mapsBox = box.querySelector('.head-maps');
    if (mapsBox) writeHtml(mapsBox, maps);
    drawMaps(box, weights);
    return;
  }
  box.dataset.signature = signature;
  const choose =
    multi &&
    html`<fieldset class="lines-head"><legend>${t('explorer.heads.linesOf')}</legend>${weights.map((s) => html`<label><input type="radio" name="lines-head" value="${s.head}"${s.head === shownHead && ' checked'}> ${t('explorer.card.head', { head: String(s.head + 1) })}</label>`)}</fieldset>`;
  const panel = html`<h3 id="heads-title" tabindex="-1">${t('explorer.heads.title', { multi: multi ? 'yes' : 'no' })}</h3>
    ${multi && html`<div class="head-maps">${maps}</div><p class="hint">${t('explorer.heads.mapsHint')}</p>`}
    ${choose}
    <div class="head-lines" data-head="${step.head}">${
      tooMany
        ? html`<p class="hint">${t('explorer.heads.tooMany', { rows: String(w.length), cols: String(w[0].length), max: String(LINES_MAX) })}</p>`
        : linesSvg(step, w, tokensQ, tokensK)
    }</div>
    <p class="hint">${t('explorer.heads.linesHint')}</p>`;
  // Beyond 64 tokens with one head the panel holds no numbers: an edit leaves it as it is.
  const markup = String(panel);
  if (box.headsHtml !== markup) {
    setHtml(box, panel);
    box.headsHtml = markup;
  }
  drawMaps(box, weights);
}

function drawMaps(box, weights) {
  for (const canvas of box.querySelectorAll('.head-map canvas')) {
    const s = weights.find((x) => x.head === Number(canvas.closest('.head-map').dataset.head));
    drawMap(canvas, s, byQuery(s));
  }
}

/** The lines drawn by linesSvg, given the weights `w` of the same shape; false if they are not there. */
function patchLines(box, w) {
  const lines = box.querySelectorAll('.head-lines-svg .lines line');
  if (lines.length !== w.length * w[0].length) return false;
  let i = 0;
  for (const row of w) {
    for (const v of row) {
      const line = lines[i++];
      const weight = String(v);
      if (line.getAttribute('data-weight') === weight) continue;
      line.setAttribute('stroke-opacity', String(lineOpacity(v)));
      line.setAttribute('data-weight', weight);
    }
  }
  return true;
}

/**
 * The heads panel follows the results. When only the numbers changed (an edit: the step cards'
 * signature is the one it last saw), the panel below the steps (up to 64 × 64 lines) is redrawn
 * once it is seen; a new problem draws it at once.
 */
export function mountHeads() {
  let cards = null;
  store.subscribe(resultParts, ([result]) => {
    if (!result) return;
    const sig = $('step-list').dataset.sig;
    if (cards !== null && sig === cards) drawWhenSeen($('heads-view'), renderHeads);
    else renderHeads();
    cards = sig;
  });
}
