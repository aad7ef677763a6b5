// The "why √d_k" view: variance of the scores with and without scaling, and how saturated the
// softmax is (max weight and entropy per query), all read from engine traces (trace.facts).
import { $, app, drawWhenSeen, whenIdle } from './app.js';
import { fmt } from './format.js';
import { html, setHtml } from 'attention-explorer/html';
import { mathHtml } from './math.js';
import { markScrollables } from './scrollables.js';
import { resultParts, store } from './store.js';
import { rich, t } from './language.js';

let sweep;

/** Random queries and keys for growing d_k, computed once: how the effect grows. */
function computeSweep() {
  const tokens = 16;
  const rows = [];
  for (const d of [2, 8, 32, 128, 512]) {
    const [Q, K, V] = app.engine.random(0, [
      { kind: 'randn', shape: [tokens, d] },
      { kind: 'randn', shape: [tokens, d] },
      { kind: 'randn', shape: [tokens, 1] },
    ]);
    const a = app.engine.run({ Q, K, V, options: { scale: 'none' } }).facts[0];
    const b = app.engine.run({ Q, K, V, options: { scale: 'sqrt_dk' } }).facts[0];
    const mean = (xs) => xs.reduce((s, x) => s + x, 0) / xs.length;
    rows.push({
      d_k: d,
      before: a.scores_variance,
      after: b.scaled_variance,
      maxUnscaled: mean(a.max_weight),
      maxScaled: mean(b.max_weight),
    });
  }
  return { tokens, rows, numpy: `np.random.seed(0); Q = np.random.randn(${tokens}, d_k); K = np.random.randn(${tokens}, d_k)` };
}

/** Draws the view for the last good result: its problem run with and without 1/√d_k. */
export function renderWhyView() {
  const { state, result } = app;
  if (!result) return;
  if (sweep === undefined) {
    try {
      sweep = computeSweep();
    } catch {
      sweep = null;
    }
  }
  let scaled = null,
    unscaled = null;
  const base = result.problem;
  try {
    scaled = app.engine.run({ ...base, options: { ...base.options, scale: 'sqrt_dk' } });
    unscaled = app.engine.run({ ...base, options: { ...base.options, scale: 'none' } });
  } catch {
    /* the main run succeeded, so these do too; keep the view empty otherwise */
  }
  renderWhy($('why-body'), {
    scaled,
    unscaled,
    sweep,
    tokensQ: result.ctx.tokensQ,
    decimals: result.ctx.decimals,
    layout: state.options.layout,
  });
}

/** The first head's facts of a trace. */
const firstHead = (trace) => trace.facts.find((f) => f.head === 0);

function bar(value, max, cls) {
  const pct = max > 0 && Number.isFinite(value) ? Math.max(0, Math.min(100, (100 * value) / max)) : 0;
  return html`<span class="bar ${cls}" aria-hidden="true"><span style="width:${pct.toFixed(1)}%"></span></span>`;
}

/**
 * @param {HTMLElement} el
 * @param {object} o
 * @param {import('attention-explorer').Trace | null} o.scaled the problem with 1/√d_k
 * @param {import('attention-explorer').Trace | null} o.unscaled the same problem with no scaling
 * @param {{ tokens: number, rows: { d_k: number, before: number, after: number, maxUnscaled: number, maxScaled: number }[], numpy: string } | null} o.sweep
 * @param {string[]} o.tokensQ
 * @param {number} o.decimals
 * @param {string} o.layout
 */
function renderWhy(el, o) {
  const d = o.decimals;
  if (!o.scaled || !o.unscaled) {
    setHtml(el, html`<p class="hint">${t('explorer.why.waiting')}</p>`);
    return;
  }
  const meta = o.scaled.meta;
  const fs = firstHead(o.scaled);
  const fu = firstHead(o.unscaled);
  const S = meta.keys;
  const columns = o.layout === 'columns';
  const intro = html`<div class="why-intro">
    <p>${rich('explorer.why.intro')}</p>
    <div class="formula">${mathHtml('\\operatorname{Var}(q\\cdot k) = \\sum_{m=1}^{d_k} \\operatorname{Var}(q_m k_m) \\approx d_k \\quad\\Rightarrow\\quad \\operatorname{Var}\\!\\left(\\frac{q\\cdot k}{\\sqrt{d_k}}\\right) \\approx 1', true)}</div>
  </div>`;
  const Hmax = Math.log(S);
  const n = Math.min(fs.max_weight.length, 64);
  const rows = Array.from(
    { length: n },
    (_, i) => html`<tr><th scope="row">${o.tokensQ[i] ?? `t${i + 1}`}</th>
      <td>${bar(fu.max_weight[i], 1, 'u')}${fmt(fu.max_weight[i], d)}</td>
      <td>${bar(fs.max_weight[i], 1, 's')}${fmt(fs.max_weight[i], d)}</td>
      <td>${bar(fu.entropy[i], Hmax, 'u')}${fmt(fu.entropy[i], d)}</td>
      <td>${bar(fs.entropy[i], Hmax, 's')}${fmt(fs.entropy[i], d)}</td></tr>`,
  );
  const more =
    fs.max_weight.length > n &&
    html`<tr><td colspan="5" class="hint">${t('explorer.why.moreQueries', { n: String(fs.max_weight.length - n) })}</td></tr>`;
  const stats = html`<div class="why-stats">
    <div class="stat"><span class="stat-label">${t('explorer.why.variance')}</span><span class="stat-value" data-fact="scores_variance">${fmt(fs.scores_variance, d)}</span></div>
    <div class="stat"><span class="stat-label">${rich('explorer.why.after', { dk: String(meta.d_k) })}</span><span class="stat-value" data-fact="scaled_variance">${fmt(fs.scaled_variance, d)}</span></div>
    <div class="stat"><span class="stat-label">d<sub>k</sub></span><span class="stat-value">${meta.d_k}</span></div>
  </div><p>${t('explorer.why.peaked', { multi: meta.heads > 1 ? 'yes' : 'no', keys: String(S), ln: fmt(Math.log(S), 3) })}</p><div class="table-scroll"><table class="why-table"><caption class="visually-hidden">${t('explorer.why.tableCaption')}</caption>
    <thead><tr><th scope="col">${t('explorer.why.queryAxis', { layout: columns ? 'columns' : 'rows' })}</th><th scope="col">${t('explorer.why.maxUnscaled')}</th><th scope="col">${rich('explorer.why.maxScaled')}</th>
    <th scope="col">${t('explorer.why.entropyUnscaled')}</th><th scope="col">${rich('explorer.why.entropyScaled')}</th></tr></thead><tbody>${rows}${more}</tbody></table></div>`;
  let sweepHtml = html``;
  if (o.sweep) {
    const vmax = Math.max(...o.sweep.rows.map((r) => r.before));
    const sweepRow = (r) =>
      html`<tr><th scope="row">${r.d_k}</th><td>${bar(r.before, vmax, 'u')}${fmt(r.before, 2)}</td><td>${bar(r.after, vmax, 's')}${fmt(r.after, 2)}</td>
        <td>${bar(r.maxUnscaled, 1, 'u')}${fmt(r.maxUnscaled, 3)}</td><td>${bar(r.maxScaled, 1, 's')}${fmt(r.maxScaled, 3)}</td></tr>`;
    const sweepRows = o.sweep.rows.map(sweepRow);
    sweepHtml = html`<h3>${rich('explorer.why.sweepTitle', { tokens: String(o.sweep.tokens) })}</h3>
      <div class="table-scroll"><table class="why-table sweep"><caption class="visually-hidden">${t('explorer.why.sweepCaption')}</caption>
      <thead><tr><th scope="col">d<sub>k</sub></th><th scope="col">${t('explorer.why.sweepVariance')}</th><th scope="col">${rich('explorer.why.sweepScaled')}</th>
      <th scope="col">${t('explorer.why.sweepMax')}</th><th scope="col">${rich('explorer.why.sweepMaxScaled')}</th></tr></thead><tbody>${sweepRows}</tbody></table></div><p class="source">${rich('explorer.why.source', { numpy: o.sweep.numpy })}</p>`;
  }
  // Three parts, each replaced only when it changed: the formula and the sweep rarely do.
  if (!el.querySelector(':scope > .why-part'))
    setHtml(el, html`<div class="why-part"></div><div class="why-part"></div><div class="why-part"></div>`);
  /** @type {NodeListOf<HTMLElement & { whySource?: string }>} the HTML each part was drawn from */
  const parts = el.querySelectorAll(':scope > .why-part');
  [intro, stats, sweepHtml].forEach((h, i) => {
    const markup = String(h);
    if (parts[i].whySource !== markup) {
      setHtml(parts[i], h);
      parts[i].whySource = markup;
    }
  });
}

// The "why" view runs the problem twice more and sits below the steps: it is drawn after the frame
// that shows an update, once the browser is idle (issue 18: in the update it was a fifth of an
// edit at 16 tokens, and its rewritten table a large part of the frame's layout and paint). Up to
// 32 × 32 wherever the view is; beyond, only once it is on screen or near it (at 64 tokens,
// drawing it also forced the layout of the panel the browser was skipping). While a drawing is
// pending, #why is aria-busy. On the page's first drawing main.js draws a pending one before the
// page says it is ready (drawWhyLater).
const why = { cancel: null, whenSeen: false }; // cancel: the pending drawing's, while there is one

function drawWhy() {
  const el = $('why');
  if (!el) return;
  el.removeAttribute('aria-busy');
  renderWhyView();
  // Drawn after the update's own pass over the scrolling regions: its formula (typeset once KaTeX
  // is there) and tables may be new elements, which need their tab stops.
  markScrollables({ within: el });
}

function scheduleWhy(trace) {
  why.cancel?.();
  why.whenSeen = trace.meta.queries * trace.meta.keys > 1024;
  $('why')?.setAttribute('aria-busy', 'true');
  why.cancel = whenIdle(() => {
    why.cancel = null;
    if (why.whenSeen) drawWhenSeen($('why'), drawWhy);
    else drawWhy();
  }, 250);
}

/** The why view left for the browser's idle time, drawn now (main.js, before the page is ready). */
export function drawWhyLater() {
  if (!why.cancel || why.whenSeen) return;
  why.cancel();
  why.cancel = null;
  drawWhy();
}

/** The why view follows the result, drawn with the steps' names and decimals (in idle time). */
export function mountWhy() {
  store.subscribe(resultParts, ([result]) => {
    if (result) scheduleWhy(result.trace);
  });
}
