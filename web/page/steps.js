// Drawing the trace: one card per step with its name, formula, facts and matrix (a real table
// with row/column labels and heatmap colours, or a canvas heatmap when numbers no longer fit).
// Every number drawn comes from the trace; this module only lays it out.
// The colour scales are the package's, so the page, the component and the SVG/PNG exports colour
// a matrix identically.
import { colourLut, colourRange, colourScale, formatNumber, positionsAxisLabels, weightSums } from 'attention-explorer';
import { cellLook, legendHtml, maskedPositions, stepTableHtml } from 'attention-explorer/step-table';
import { afterFrame, writeHtml } from './app.js';
import { fmt } from './format.js';
import { html, setHtml } from 'attention-explorer/html';
import { stepFormula, stepTitle } from 'attention-explorer/i18n';
import { mathHtml } from './math.js';
import { rich, t } from './language.js';
import { bindMaskComponents, isHidden, maskComponentsHtml } from './mask-components.js';

/** Numbers are drawn as a table up to this size; beyond, as a canvas heatmap. */
export const TABLE_MAX_ROWS = 48;
export const TABLE_MAX_COLS = 24;

export function headOf(step) {
  return step.head == null || step.head < 0 ? -1 : step.head;
}
export function stepKey(step) {
  return `${step.id}:${headOf(step)}`;
}

// ---- labels -----------------------------------------------------------------------------------

/** The per-head slices a concatenation puts side by side (its inputs), or null for other steps. */
export function concatenated(step, steps) {
  if (step.head != null || step.given.length || !step.inputs.length) return null;
  const parts = step.inputs.map((i) => steps[i]);
  return parts.every((s) => s.head != null && s.features) ? parts : null;
}

/**
 * Row and column labels of a step, read off its own axes: token names for queries and keys
 * (rowKind/colKind "q" or "k": renamable), feature numbers counted in the full projection a
 * per-head slice comes from, h1·1, h1·2, h2·1, ... across a concatenation of heads, and RoPE's
 * positions and pairs (p = 0, i = 0) on its angle table.
 * ctx: { tokensQ, tokensK, steps, meta } (steps: the trace's, for a concatenation's parts).
 */
export function axisLabels(step, ctx) {
  const tokens = (list, n) => Array.from({ length: n }, (_, i) => list[i] ?? `t${i + 1}`);
  const parts = concatenated(step, ctx.steps);
  const scoreLike = step.axes.includes('queries') && step.axes.includes('keys');
  const axis = (name, n) => {
    if (name === 'queries')
      return { labels: tokens(ctx.tokensQ, n), title: t(scoreLike ? 'explorer.axis.query' : 'explorer.axis.token'), kind: 'q' };
    if (name === 'keys')
      return { labels: tokens(ctx.tokensK, n), title: t(scoreLike ? 'explorer.axis.key' : 'explorer.axis.token'), kind: 'k' };
    const turned = positionsAxisLabels(step, name, ctx.meta);
    if (turned) return turned;
    if (parts) {
      const labels = parts.flatMap((p) => Array.from({ length: p.features[1] - p.features[0] }, (_, i) => `h${p.head + 1}·${i + 1}`));
      return { labels, title: t('explorer.axis.headDim') };
    }
    const first = step.features?.[0] ?? 0;
    return { labels: Array.from({ length: n }, (_, i) => String(first + i + 1)), title: t('explorer.axis.dim') };
  };
  const forms = cacheForms(step);
  const rows = forms ? { labels: [t('explorer.axis.perToken')], title: t('explorer.axis.cached') } : axis(step.axes[0], step.shape[0]);
  const cols = forms ? { labels: forms, title: t('explorer.axis.form') } : axis(step.axes[1], step.shape[1]);
  return {
    rows: rows.labels,
    cols: cols.labels,
    rowTitle: rows.title,
    colTitle: cols.title,
    ...(rows.kind ? { rowKind: rows.kind } : {}),
    ...(cols.kind ? { colKind: cols.kind } : {}),
  };
}

/**
 * Latent attention's cache-size step (one row, no axis of its own): its columns are the forms its
 * formula names in order ("N_cache = per token: MHA 2·2·2, GQA(g=2) …, MQA 2·2, MLA 2 + 2"), or null.
 */
function cacheForms(step) {
  if (step.id !== 'cache_sizes') return null;
  const forms = (/per token: (.*)$/.exec(step.text ?? '')?.[1] ?? '').split(', ').map((f) => f.split(' ')[0]);
  return forms.length === step.shape[1] ? forms : null;
}

/** Which query and key a cell of a step belongs to (null where the step has no such axis). */
export function cellTokens(step, row, col) {
  const at = (name) => (step.axes[0] === name ? row : step.axes[1] === name ? col : null);
  return { query: at('queries'), key: at('keys') };
}

// ---- facts ------------------------------------------------------------------------------------

/** One fact in the page's language: a message of the catalogue's explorer.facts.* (its tags as elements). */
const fact = (name, values = {}) => rich(`explorer.facts.${name}`, values);

/** A query's axis as the catalogue's select word: a row, or a column in the columns layout. */
const axisOf = (ctx) => (ctx.layout === 'columns' ? 'column' : 'row');

/** The features a per-head slice takes, counted from 1. */
const featureRange = (step) => ({ first: String(step.features[0] + 1), last: String(step.features[1]) });

/** The K and V steps' fact: the slice of features a head takes, and its shared key/value head. */
function sliceFacts(step, f, { meta }) {
  if (meta.heads <= 1) return step.id === 'V' ? [fact('d-v', { d_v: String(meta.d_v) })] : [];
  const range = featureRange(step);
  return [meta.kv_heads < meta.heads ? fact('features-shared', { group: String(step.kv_group + 1), ...range }) : fact('features', range)];
}

/**
 * The facts under each step's card, keyed by step id: step, its head's facts (f), ctx -> the
 * items, each a formatted message (words in the catalogue, numbers formatted here).
 * @type {Record<string, (step: any, f: any, ctx: any) => unknown[]>}
 */
const STEP_FACTS = {
  Q: (step, f, { meta }) => [
    meta.heads > 1
      ? fact('d-k-per-head', { d_k: String(meta.d_k), head: String(headOf(step) + 1), ...featureRange(step) })
      : fact('d-k', { d_k: String(meta.d_k) }),
  ],
  K: sliceFacts,
  V: sliceFacts,
  scores: (step, f, { decimals: d }) => [
    f.scores_variance !== undefined && fact('scores-variance', { variance: fmt(f.scores_variance, d) }),
    f.rope_shift > 0 &&
      fact('rope-shift', {
        shift: String(f.rope_shift),
        change: f.rope_shift_change === 0 ? 'none' : 'rounding',
        by: formatNumber(f.rope_shift_change, d),
      }),
  ],
  scaled: (step, f, { meta, decimals: d }) => [
    fact('scale', { scale: fmt(meta.scale, Math.max(d, 4)) }),
    f.scaled_variance !== undefined && fact('scaled-variance', { variance: fmt(f.scaled_variance, d), before: fmt(f.scores_variance, d) }),
  ],
  masked: (step, f, ctx) => {
    // The mask step's facts say what is hidden; with a finite mask_fill the entries are not −∞.
    let hidden = 0;
    let fill = -Infinity;
    step.data.forEach((row, i) =>
      row.forEach((v, j) => {
        const bits = f.hidden_by?.[i]?.[j];
        if (bits === undefined ? v === -Infinity : isHidden(bits)) {
          hidden++;
          fill = v;
        }
      }),
    );
    // count chooses the plural; hidden is the number as the code writes it (no grouping).
    const counted = { count: hidden, hidden: String(hidden) };
    if (!Number.isFinite(fill)) return [fact('hidden', counted)];
    const weight = f.hidden_weight?.length ? Math.max(...f.hidden_weight) : 0;
    return [fact('hidden-fill', { ...counted, weight: fmt(weight, ctx.decimals), axis: axisOf(ctx) })];
  },
  weights: (step, f, ctx) => {
    const sums = f.weight_sums.map((s) => fmt(s, ctx.decimals));
    const shown = sums.length > 8 ? sums.slice(0, 8).join(', ') + ', …' : sums.join(', ');
    const axis = axisOf(ctx);
    // rule.kind: free | lambda | sink | one (narrate.js weightSums), one message each.
    const rule = weightSums(ctx.options, f);
    return [
      fact(`sums-${rule.kind}`, { axis, sums: shown }),
      f.fully_masked.length > 0 &&
        html`<span class="warn">${fact('fully-masked', { axis, count: f.fully_masked.length, rows: f.fully_masked.map((i) => i + 1).join(', ') })}</span>`,
    ];
  },
  concat: (step, f, { meta }) => [fact('concat', { heads: String(meta.heads), d_v: String(meta.d_v) })],
};

function factsHtml(step, trace, ctx) {
  const h = headOf(step);
  const f = trace.facts.find((x) => x.head === (h < 0 ? 0 : h));
  const items = (STEP_FACTS[step.id]?.(step, f, ctx) ?? []).filter((i) => i !== false);
  // Messages are text (escaped) with their tags' html`` inside; the warning is html``.
  return html`${items.length > 0 && html`<ul class="facts">${items.map((i) => html`<li>${i}</li>`)}</ul>`}`;
}

/** The mask step's components and their combination, from its head's facts. */
function maskPartsHtml(step, trace, ctx, labels) {
  const h = headOf(step);
  const facts = trace.facts.find((x) => x.head === (h < 0 ? 0 : h));
  return maskComponentsHtml(step, facts, ctx.options, ctx.meta, labels);
}

// ---- matrices ---------------------------------------------------------------------------------

export function tableHtml(step, labels, ctx, masked) {
  const key = stepKey(step);
  const [nr, nc] = step.shape;
  const head = headOf(step) >= 0 && ctx.meta.heads > 1 ? String(headOf(step) + 1) : 'none';
  // A concatenation's columns banded by the head each came from.
  const parts = step.axes[1] === 'features' ? concatenated(step, ctx.steps) : null;
  const above = html`${parts && html`<tr><td></td>${parts.map((p, g) => html`<th scope="colgroup" colspan="${p.features[1] - p.features[0]}" class="head-band hb${g % 2}">${t('explorer.card.head', { head: String(p.head + 1) })}</th>`)}</tr>`}`;
  const scoreLike = labels.rowKind && labels.colKind;
  const corner = html`<th scope="col" class="corner">${scoreLike && html`<span aria-hidden="true">${labels.rowTitle} ↓ ${labels.colTitle} →</span>`}<span class="visually-hidden">${labels.rowTitle} \\ ${labels.colTitle}</span></th>`;
  const kinds = { row: labels.rowKind, col: labels.colKind };
  return stepTableHtml(step, labels, {
    attrs: html`class="matrix" data-key="${key}"`,
    caption: t('explorer.table.caption', {
      step: stepTitle(step, t),
      head,
      rows: String(nr),
      rowTitle: labels.rowTitle,
      cols: String(nc),
      colTitle: labels.colTitle,
    }),
    above,
    corner,
    focusable: true,
    decimals: ctx.decimals,
    fixedZero: true,
    masked,
    labelAttrs: (axis, i) => kinds[axis] && html` data-token="${kinds[axis]}:${i}" title="${t('explorer.table.rename')}"`,
  });
}

/** A heatmap axis's labels: every k-th, at most 16, placed at their cells' centres. */
function ticksHtml(names, axis) {
  const every = Math.ceil(names.length / 16);
  const at = (i) => `${(((i + 0.5) / names.length) * 100).toFixed(3)}%`;
  const spans = names.map((n, i) => !(i % every) && html`<span style="${axis === 'rows' ? 'top' : 'left'}:${at(i)}">${n}</span>`);
  return html`<div class="ticks ${axis}" aria-hidden="true">${spans}</div>`;
}

export function heatmapHtml(step, labels) {
  const [nr, nc] = step.shape;
  const values = { step: stepTitle(step, t), rows: String(nr), rowTitle: labels.rowTitle, cols: String(nc), colTitle: labels.colTitle };
  return html`<div class="heatmap" data-key="${stepKey(step)}">
    <p class="hint">${t('explorer.heatmap.hint', values)}</p>
    <div class="heatmap-box"><canvas tabindex="0" width="${nc}" height="${nr}" role="img"
      aria-label="${t('explorer.heatmap.label', values)}"></canvas><div class="cursor" hidden></div>${ticksHtml(labels.rows, 'rows')}${ticksHtml(labels.cols, 'cols')}</div>
    <p class="heatmap-readout" aria-live="polite"></p></div>`;
}

/** A heatmap canvas's CSS size: each value a square of 1 to 24 pixels, the map at most ~560 wide. */
function sizeHeatmap(canvas, step) {
  const [nr, nc] = step.shape;
  const size = Math.max(1, Math.min(24, Math.floor(560 / Math.max(nr, nc))));
  const width = `${nc * size}px`;
  const height = `${nr * size}px`;
  if (canvas.style.width !== width) canvas.style.width = width;
  if (canvas.style.height !== height) canvas.style.height = height;
}

/** Draw a heatmap canvas: one pixel per value, scaled up by CSS. */
export function drawHeatmap(canvas, step) {
  const [nr, nc] = step.shape;
  const { lut, index } = colourLut(step.data, step.kind);
  const ctx2d = canvas.getContext('2d');
  const img = ctx2d.createImageData(nc, nr);
  const px = img.data;
  for (let i = 0; i < nr; i++) {
    const row = step.data[i];
    for (let j = 0; j < nc; j++) {
      const t = index(row[j]);
      const k = (i * nc + j) * 4;
      if (t < 0) {
        px[k] = 150;
        px[k + 1] = 150;
        px[k + 2] = 150;
      } else {
        px[k] = lut[t * 3];
        px[k + 1] = lut[t * 3 + 1];
        px[k + 2] = lut[t * 3 + 2];
      }
      px[k + 3] = 255;
    }
  }
  ctx2d.putImageData(img, 0, 0);
  sizeHeatmap(canvas, step);
}

// A heatmap's pixels are drawn when it is on screen or comes near it: at 1,024 tokens a trace has
// several maps of a million values each, and a redraw need only paint the one or two in view.
const heatmaps = { observer: null, unpainted: new WeakMap(), near: new WeakSet() };

function observeHeatmaps() {
  heatmaps.observer ??= new IntersectionObserver(
    (entries) => {
      for (const e of entries) {
        if (!e.isIntersecting) {
          heatmaps.near.delete(e.target);
          continue;
        }
        heatmaps.near.add(e.target);
        const step = heatmaps.unpainted.get(e.target);
        if (step) {
          heatmaps.unpainted.delete(e.target);
          drawHeatmap(e.target, step);
        }
      }
    },
    { rootMargin: '300px 0px' },
  );
  return heatmaps.observer;
}

/** Draws `step` on `canvas` now if it is near the screen, else once it comes near. */
function drawWhenSeen(canvas, step) {
  sizeHeatmap(canvas, step); // the layout (and the tracing overlay) need its size now
  if (typeof IntersectionObserver === 'undefined' || heatmaps.near.has(canvas)) {
    heatmaps.unpainted.delete(canvas);
    drawHeatmap(canvas, step);
    return;
  }
  heatmaps.unpainted.set(canvas, step);
  observeHeatmaps().observe(canvas);
}

/**
 * Lets the step cards skip their style, layout and paint while off screen (style.css: `.laid-out`
 * has `content-visibility: auto`; issue 18, an edit made below the steps relaid and repainted
 * them all) once the frame after this one laid them out whole, so that each one's size is
 * remembered exactly and nothing jumps when it comes into view. `again`: every card is laid out
 * once more first (main.js, after the first formulas were typeset: they changed the cards' heights).
 */
export function skipCardsOffScreen({ again = false } = {}) {
  const cards = () => document.querySelectorAll('#step-list article.step');
  if (again) for (const card of cards()) card.classList.remove('laid-out');
  afterFrame(() => {
    for (const card of cards()) card.classList.add('laid-out');
  });
}

/**
 * Render all steps of `trace` into `container`. ctx also carries `hiddenSteps` (ids) and
 * `collapsed` (step keys). Returns the list of rendered steps (for keyboard/selection lookups).
 */
export function renderSteps(container, trace, ctx) {
  const steps = trace.steps.filter((s) => !ctx.hiddenSteps.includes(s.id));
  const multi = ctx.meta.heads > 1;
  // Same steps, shapes, labels and formulas as last time: only the numbers changed, so patch the
  // cells in place (much less layout than rebuilding every card and formula).
  const cards = steps.map((step) => ({ step, sig: cardSignature(step, ctx) }));
  const signature = cards.map((c) => c.sig).join('\n');
  if (container.dataset.sig === signature && patchSteps(container, trace, ctx, cards)) return steps;
  // The cards, in groups: one per head (with the steps of no one head before and after) when
  // there are several, else one.
  const groups = [];
  const hTag = multi ? 'h4' : 'h3';
  let headsSeen = false;
  for (const { step } of cards) {
    const h = headOf(step);
    // Steps of no one head come before the heads (positions, RoPE's angles) or after (H, O).
    const group = h >= 0 ? `head${h}` : headsSeen ? 'combine' : 'shared';
    if (h >= 0) headsSeen = true;
    if (!groups.length || (multi && group !== groups.at(-1).group)) {
      const title =
        h >= 0
          ? t('explorer.group.head', { head: String(h + 1), heads: String(ctx.meta.heads) })
          : t(group === 'shared' ? 'explorer.group.shared' : 'explorer.group.combine');
      groups.push({ group, title, cards: [] });
    }
    const n = groups.at(-1).cards.length + 1;
    const key = stepKey(step);
    const labels = axisLabels(step, ctx);
    const [nr, nc] = step.shape;
    const collapsed = ctx.collapsed.includes(key);
    const name = t(step.title_id);
    const big = nr > TABLE_MAX_ROWS || nc > TABLE_MAX_COLS;
    const titleId = `t-${key.replace(/[^a-z0-9]/gi, '-')}`;
    const card = html`<article class="step${collapsed && ' collapsed'}${step.id === 'output' && ' final'}" data-key="${key}" data-step="${step.id}" data-head="${h}" aria-labelledby="${titleId}">
      <header class="step-head">
        <${hTag} id="${titleId}"><span class="step-num">${n}</span> ${name}${multi && h >= 0 && html` <span class="head-tag">${t('explorer.card.head', { head: h + 1 })}</span>`}</${hTag}>
        <span class="shape" title="${t('explorer.card.shape')}">${nr} × ${nc}</span>
        <span class="copy-done" role="status"></span>
        <button type="button" class="copy-tex" aria-label="${t('explorer.card.copyLabel', { step: name, head: multi && h >= 0 ? String(h + 1) : 'none' })}">${t('explorer.card.copy')}</button>
        <button type="button" class="fold" aria-expanded="${String(!collapsed)}" aria-controls="${titleId}-body" aria-label="${t('explorer.card.fold', { step: name, collapsed: collapsed ? 'yes' : 'no' })}">${collapsed ? '▸' : '▾'}</button>
      </header>
      <div class="step-body" id="${titleId}-body"${collapsed && ' hidden'}>
        <div class="formula">${mathHtml(stepFormula(step, t).tex, true)}</div>
        <div class="facts-box">${factsHtml(step, trace, ctx)}</div>
        ${step.id === 'mask' && html`<div class="mask-parts-box">${maskPartsHtml(step, trace, ctx, labels)}</div>`}
        <div class="matrix-wrap">${big ? heatmapHtml(step, labels) : tableHtml(step, labels, ctx, maskedPositions(trace, step))}</div>
        <div class="legend-box">${legendHtml(step, t)}</div>
      </div>
    </article>`;
    groups.at(-1).cards.push(card);
  }
  const markup = groups.map((g) =>
    multi
      ? html`<section class="head-group" aria-label="${g.title}"><h3 class="group-title">${g.title}</h3><div class="step-cards">${g.cards}</div></section>`
      : html`<div class="step-cards">${g.cards}</div>`,
  );
  heatmaps.observer?.disconnect(); // the old cards' canvases are gone
  setHtml(container, html`${markup}`);
  container.dataset.sig = signature;
  skipCardsOffScreen();
  bindMaskComponents(container);
  for (const canvas of container.querySelectorAll('.heatmap canvas')) {
    const key = canvas.closest('.heatmap').dataset.key;
    const step = steps.find((s) => stepKey(s) === key);
    if (step) drawWhenSeen(canvas, step);
  }
  // One tab stop per table: its first number (roving tabindex).
  for (const table of container.querySelectorAll('table.matrix')) {
    const first = table.querySelector('td[data-r]');
    if (first) first.tabIndex = 0;
  }
  return steps;
}

function cardSignature(step, ctx) {
  const labels = axisLabels(step, ctx);
  const key = stepKey(step);
  return [
    key,
    step.shape.join('x'),
    ctx.collapsed.includes(key),
    ctx.decimals,
    step.tex,
    labels.rows.join(','),
    labels.cols.join(','),
  ].join('|');
}

/** writeHtml where the card has the box (the step's card was drawn by renderSteps). */
function writeInCard(el, markup) {
  // Not el.innerHTML !== html: reading innerHTML serializes the box on every edit, and the
  // browser's serialization need not equal the HTML written (then it was rewritten every time).
  if (el) writeHtml(el, markup);
}

/** Update numbers, colours, facts and legends in place; false if the DOM is not as expected. */
function patchSteps(container, trace, ctx, cards) {
  const d = ctx.decimals;
  for (const { step } of cards) {
    const card = container.querySelector(`article[data-key="${stepKey(step)}"]`);
    if (!card) return false;
    writeInCard(card.querySelector('.facts-box'), factsHtml(step, trace, ctx));
    writeInCard(card.querySelector('.legend-box'), legendHtml(step, t));
    if (step.id === 'mask') writeInCard(card.querySelector('.mask-parts-box'), maskPartsHtml(step, trace, ctx, axisLabels(step, ctx)));
    const canvas = card.querySelector('.heatmap canvas');
    if (canvas) {
      drawWhenSeen(canvas, step);
      continue;
    }
    const tbody = card.querySelector('table.matrix tbody');
    if (!tbody) continue;
    const scale = colourScale(step.data, step.kind);
    const masked = maskedPositions(trace, step);
    // What this last wrote into the table: a cell whose number, masking and colour scale are as
    // they were is left alone (an edit changes a row or two of most steps).
    const [lo, hi] = colourRange(step.data, step.kind);
    const last = tbody.shown?.lo === lo && tbody.shown.hi === hi ? tbody.shown : null;
    const nc = step.shape[1];
    const shown = { lo, hi, values: new Float64Array(step.shape[0] * nc), hidden: new Uint8Array(step.shape[0] * nc) };
    tbody.shown = null; // until every cell is written (a return false below leaves it unknown)
    const rows = tbody.rows;
    for (let i = 0; i < step.data.length; i++) {
      const tr = rows[i];
      if (!tr) return false;
      const row = step.data[i];
      for (let j = 0; j < row.length; j++) {
        const td = tr.cells[j + 1];
        const v = row[j];
        const hiddenHere = masked && masked[i][j] === -Infinity;
        const at = i * nc + j;
        shown.values[at] = v;
        shown.hidden[at] = hiddenHere ? 1 : 0;
        if (last && Object.is(last.values[at], v) && last.hidden[at] === shown.hidden[at]) continue;
        const { text, cls, bg, fg } = cellLook(v, Boolean(hiddenHere), scale, d, true);
        // The cell's text node keeps its place (a new one is a new layout object to style and place).
        const t = td.firstChild;
        if (t?.nodeType === Node.TEXT_NODE && !t.nextSibling) {
          if (t.data !== text) t.data = text;
        } else if (td.textContent !== text) td.textContent = text;
        td.classList.toggle('neg-inf', cls === 'neg-inf');
        td.classList.toggle('masked', cls === 'masked');
        if (td.dataset.bg !== bg) {
          td.dataset.bg = bg;
          td.style.background = bg;
          td.style.color = fg;
        }
      }
    }
    tbody.shown = shown;
  }
  return true;
}
