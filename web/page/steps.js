// Drawing the trace: one card per step with its name, formula, facts and matrix (a real table
// with row/column labels and heatmap colours, or a canvas heatmap when numbers no longer fit).
// Every number drawn comes from the trace; this module only lays it out.
// The colour scales are the package's, so the page, the component and the SVG/PNG exports colour
// a matrix identically.
import { colourLut, colourScale, scaleMax } from 'attention-explorer';
import { fmt, escapeHtml } from './format.js';
import { mathHtml } from './math.js';

/** Numbers are drawn as a table up to this size; beyond, as a canvas heatmap. */
export const TABLE_MAX_ROWS = 48;
export const TABLE_MAX_COLS = 24;

export const STEP_NAMES = {
  Q: 'Queries',
  K: 'Keys',
  V: 'Values',
  scores: 'Scores',
  scaled: 'Scaled scores',
  softcapped: 'Soft-capped scores',
  masked: 'Masked scores',
  weights: 'Attention weights',
  head_output: 'Head output',
  concat: 'Concatenated heads',
  output: 'Output',
};

export function headOf(step) {
  return step.head == null || step.head < 0 ? -1 : step.head;
}
export function stepKey(step) {
  return `${step.id}:${headOf(step)}`;
}

// ---- labels -----------------------------------------------------------------------------------

/**
 * Row and column labels of a step, in the step's own layout. ctx: { layout, tokensQ, tokensK,
 * meta, names }.
 */
export function axisLabels(step, ctx) {
  const { meta } = ctx;
  const h = headOf(step);
  const group = meta.heads / meta.kv_heads;
  const [nr, nc] = step.shape ?? [step.data.length, step.data[0]?.length ?? 0];
  const columns = ctx.layout === 'columns';
  const tokens = (list, n) => Array.from({ length: n }, (_, i) => list[i] ?? `t${i + 1}`);
  const features = (n, offset) => Array.from({ length: n }, (_, i) => String(offset + i + 1));
  let tokenAxis, otherAxis, tokenTitle = 'token', otherTitle = 'feature';
  const L = columns ? nc : nr;
  const F = columns ? nr : nc;
  switch (step.id) {
    case 'Q':
      tokenAxis = tokens(ctx.tokensQ, L); otherAxis = features(F, meta.heads > 1 ? h * meta.d_k : 0); otherTitle = 'dim';
      break;
    case 'K':
      tokenAxis = tokens(ctx.tokensK, L); otherAxis = features(F, meta.heads > 1 ? Math.floor(h / group) * meta.d_k : 0); otherTitle = 'dim';
      break;
    case 'V':
      tokenAxis = tokens(ctx.tokensK, L); otherAxis = features(F, meta.heads > 1 ? Math.floor(h / group) * meta.d_v : 0); otherTitle = 'dim';
      break;
    case 'scores': case 'scaled': case 'softcapped': case 'masked': case 'weights': {
      const q = tokens(ctx.tokensQ, columns ? nc : nr);
      const k = tokens(ctx.tokensK, columns ? nr : nc);
      return columns
        ? { rows: k, cols: q, rowTitle: 'key', colTitle: 'query', rowKind: 'k', colKind: 'q' }
        : { rows: q, cols: k, rowTitle: 'query', colTitle: 'key', rowKind: 'q', colKind: 'k' };
    }
    case 'head_output':
      tokenAxis = tokens(ctx.tokensQ, L); otherAxis = features(F, meta.heads > 1 ? h * meta.d_v : 0); otherTitle = 'dim';
      break;
    case 'concat':
      tokenAxis = tokens(ctx.tokensQ, L);
      otherAxis = Array.from({ length: F }, (_, i) => `h${Math.floor(i / meta.d_v) + 1}·${(i % meta.d_v) + 1}`);
      otherTitle = 'head·dim';
      break;
    default:
      tokenAxis = tokens(ctx.tokensQ, L); otherAxis = features(F, 0); otherTitle = 'dim';
  }
  const kind = ['K', 'V'].includes(step.id) ? 'k' : 'q';
  return columns
    ? { rows: otherAxis, cols: tokenAxis, rowTitle: otherTitle, colTitle: tokenTitle, colKind: kind }
    : { rows: tokenAxis, cols: otherAxis, rowTitle: tokenTitle, colTitle: otherTitle, rowKind: kind };
}

// ---- formulas ---------------------------------------------------------------------------------

/** TeX for a step; ctx: { layout, mode, meta, scaleMode, hasBias, hasWO, causal, maskKind, softcap }. */
export function formulaTex(step, ctx) {
  const cols = ctx.layout === 'columns';
  const { meta } = ctx;
  const h = headOf(step);
  const multi = meta.heads > 1;
  const sup = multi ? `^{(${h + 1})}` : '';
  const X = ctx.mode === 'cross' ? 'X_{kv}' : 'X';
  const proj = (name, input, b) => {
    if (ctx.mode === 'qkv') {
      if (!multi) return `${name} \\;\\text{(given)}`;
      const w = name === 'V' ? meta.d_v : meta.d_k;
      const g = name === 'Q' ? h : Math.floor(h / (meta.heads / meta.kv_heads));
      const range = `${g * w + 1}..${(g + 1) * w}`;
      return cols ? `${name}${sup} = ${name}_{[${range},\\,:]}` : `${name}${sup} = ${name}_{[:,\\,${range}]}`;
    }
    const W = cols ? `\\Omega_${name}${sup}` : `W_${name}${sup}`;
    const bias = ctx.hasBias ? (cols ? ` + \\beta_${name}` : ` + b_${name}`) : '';
    return cols ? `${name}${sup} = ${W}\\,${input}${bias}` : `${name}${sup} = ${input}\\,${W}${bias}`;
  };
  const QK = cols ? 'K^\\top Q' : 'QK^\\top';
  const S = 'S';
  switch (step.id) {
    case 'Q': return proj('Q', 'X');
    case 'K': return proj('K', X);
    case 'V': return proj('V', X);
    case 'scores': return `${S} = ${QK}`;
    case 'scaled':
      if (ctx.scaleMode === 'sqrt_dk') return `\\tilde S = \\frac{${QK}}{\\sqrt{d_k}} = \\frac{${QK}}{\\sqrt{${meta.d_k}}}`;
      if (ctx.scaleMode === 'none') return `\\tilde S = ${QK} \\quad\\text{(not scaled)}`;
      return `\\tilde S = s\\,${QK},\\quad s = ${scaleTex(ctx.scaleText)}`;
    case 'softcapped': return `\\tilde S \\leftarrow c\\,\\tanh\\!\\left(\\tilde S / c\\right),\\quad c = ${ctx.softcap}`;
    case 'masked': {
      const causal = ctx.causal ? (cols ? `M_{ij} = -\\infty \\text{ for key } i > \\text{query } j` : `M_{ij} = -\\infty \\text{ for } j > i`) : '';
      const kind = ctx.maskKind === 'keep' ? '\\text{hidden keys: } -\\infty' : ctx.maskKind === 'additive' ? '\\text{your } M' : '';
      return `\\tilde S + M,\\quad ${[causal, kind].filter(Boolean).join(',\\; ') || 'M'}`;
    }
    case 'weights':
      return cols
        ? 'A_{ij} = \\frac{e^{\\tilde S_{ij}}}{\\sum_{i\'} e^{\\tilde S_{i\'j}}} \\quad\\text{(softmax down each column)}'
        : 'A_{ij} = \\frac{e^{\\tilde S_{ij}}}{\\sum_{j\'} e^{\\tilde S_{ij\'}}} \\quad\\text{(softmax along each row)}';
    case 'head_output': return cols ? `\\text{head}_{${h + 1}} = V A` : `\\text{head}_{${h + 1}} = A V`;
    case 'concat': {
      const heads = meta.heads > 3 ? `\\text{head}_1, \\ldots, \\text{head}_{${meta.heads}}` : Array.from({ length: meta.heads }, (_, i) => `\\text{head}_{${i + 1}}`).join(',\\, ');
      return cols ? `H = \\begin{bmatrix} ${heads.replace(/,\\, |, /g, ' \\\\ ')} \\end{bmatrix}` : `H = \\left[\\, ${heads.replace(/,\\, /g, ' \\mid ')} \\,\\right]`;
    }
    case 'output': {
      if (!ctx.hasWO) return cols ? 'O = V A' : 'O = A V';
      const input = meta.heads > 1 ? 'H' : '\\text{head}_1';
      const b = ctx.hasBO ? (cols ? ' + \\beta_O' : ' + b_O') : '';
      return cols ? `O = \\Omega_O\\, ${input}${b}` : `O = ${input}\\, W_O${b}`;
    }
    default: return step.id;
  }
}

/** "1/sqrt(3)" -> \frac{1}{\sqrt{3}}, "1/8" -> \frac{1}{8}, numbers as they are. */
function scaleTex(text) {
  const t = String(text).replace(/\s+/g, '');
  let m = /^1\/sqrt\(([0-9.eE+-]+)\)$/.exec(t);
  if (m) return `\\frac{1}{\\sqrt{${m[1]}}}`;
  m = /^1\/([0-9.eE+-]+)$/.exec(t);
  if (m) return `\\frac{1}{${m[1]}}`;
  return /^[0-9.eE+-]+$/.test(t) ? t : `\\text{${t.replace(/[\\{}$&#^_%~]/g, '')}}`;
}

// ---- facts ------------------------------------------------------------------------------------

function factsHtml(step, trace, ctx) {
  const h = headOf(step);
  const d = ctx.decimals;
  const f = trace.facts.find((x) => x.head === (h < 0 ? 0 : h));
  const items = [];
  const { meta } = ctx;
  const columns = ctx.layout === 'columns';
  const qAxis = columns ? 'column' : 'row';
  switch (step.id) {
    case 'Q':
      items.push(`d<sub>k</sub> = ${meta.d_k}` + (meta.heads > 1 ? ` per head; head ${h + 1} takes features ${h * meta.d_k + 1}–${(h + 1) * meta.d_k}` : ''));
      break;
    case 'K': case 'V': {
      if (meta.heads > 1) {
        const g = Math.floor(h / (meta.heads / meta.kv_heads));
        const w = step.id === 'K' ? meta.d_k : meta.d_v;
        items.push(`${meta.kv_heads < meta.heads ? `shared key/value head ${g + 1}: ` : ''}features ${g * w + 1}–${(g + 1) * w}`);
      } else if (step.id === 'V') items.push(`d<sub>v</sub> = ${meta.d_v}`);
      break;
    }
    case 'scores':
      if (f.scores_variance !== undefined) items.push(`variance of all scores: <strong>${fmt(f.scores_variance, d)}</strong>`);
      break;
    case 'scaled':
      items.push(`multiplied by <strong>${fmt(meta.scale, Math.max(d, 4))}</strong>`);
      if (f.scaled_variance !== undefined) items.push(`variance: <strong>${fmt(f.scaled_variance, d)}</strong> (was ${fmt(f.scores_variance, d)})`);
      break;
    case 'masked': {
      let hidden = 0;
      for (const row of step.data) for (const v of row) if (v === -Infinity) hidden++;
      items.push(`${hidden} ${hidden === 1 ? 'entry is' : 'entries are'} hidden (−∞): ${hidden === 1 ? 'its weight becomes' : 'their weights become'} 0`);
      break;
    }
    case 'weights': {
      const sums = f.weight_sums.map((s) => fmt(s, d));
      const shown = sums.length > 8 ? sums.slice(0, 8).join(', ') + ', …' : sums.join(', ');
      items.push(`each ${qAxis} sums to 1: ${shown}`);
      if (f.fully_masked.length) items.push(`<span class="warn">fully masked ${qAxis}${f.fully_masked.length > 1 ? 's' : ''} ${f.fully_masked.map((i) => i + 1).join(', ')}: weights all 0</span>`);
      break;
    }
    case 'concat':
      items.push(`${meta.heads} heads × d<sub>v</sub> = ${meta.d_v}`);
      break;
    default:
      break;
  }
  return items.length ? `<ul class="facts">${items.map((i) => `<li>${i}</li>`).join('')}</ul>` : '';
}

// ---- matrices ---------------------------------------------------------------------------------

function shapeOf(step) {
  return step.shape ?? [step.data.length, step.data[0]?.length ?? 0];
}

function maskedPositions(trace, step) {
  if (step.id !== 'weights') return null;
  const masked = trace.steps.find((s) => s.id === 'masked' && headOf(s) === headOf(step));
  return masked ? masked.data : null;
}

function tableHtml(step, labels, ctx, masked) {
  const d = ctx.decimals;
  const scale = colourScale(step.data, step.id === 'weights' ? 'weights' : 'signed');
  const key = stepKey(step);
  const [nr, nc] = shapeOf(step);
  const name = STEP_NAMES[step.id] ?? step.id;
  let html = `<table class="matrix" data-key="${key}"><caption class="visually-hidden">${escapeHtml(name)}${headOf(step) >= 0 && ctx.meta.heads > 1 ? `, head ${headOf(step) + 1}` : ''}: ${nr} ${labels.rowTitle} rows by ${nc} ${labels.colTitle} columns. Press Enter on a number to see how it was computed.</caption><thead>`;
  if (step.id === 'concat' && ctx.layout !== 'columns' && ctx.meta.heads > 1) {
    html += '<tr><td></td>';
    for (let g = 0; g < ctx.meta.heads; g++) html += `<th scope="colgroup" colspan="${ctx.meta.d_v}" class="head-band hb${g % 2}">head ${g + 1}</th>`;
    html += '</tr>';
  }
  const scoreLike = labels.rowKind && labels.colKind;
  html += `<tr><th scope="col" class="corner">${scoreLike ? `<span aria-hidden="true">${labels.rowTitle} ↓ ${labels.colTitle} →</span>` : ''}<span class="visually-hidden">${labels.rowTitle} \\ ${labels.colTitle}</span></th>`;
  const tok = (kind, i) => (kind ? ` data-token="${kind}:${i}" title="Double-click to rename"` : '');
  for (let j = 0; j < nc; j++) html += `<th scope="col"${tok(labels.colKind, j)}>${escapeHtml(labels.cols[j])}</th>`;
  html += '</tr></thead><tbody>';
  for (let i = 0; i < nr; i++) {
    html += `<tr><th scope="row"${tok(labels.rowKind, i)}>${escapeHtml(labels.rows[i])}</th>`;
    const row = step.data[i];
    for (let j = 0; j < nc; j++) {
      const v = row[j];
      const c = scale(v);
      const hiddenHere = masked && masked[i][j] === -Infinity;
      const cls = v === -Infinity ? 'neg-inf' : hiddenHere ? 'was-masked' : '';
      const style = c && !hiddenHere ? ` style="background:${c.bg};color:${c.fg}" data-bg="${c.bg}"` : ' data-bg=""';
      html += `<td tabindex="-1" data-r="${i}" data-c="${j}"${cls ? ` class="${cls}"` : ''}${style}>${fmt(v, d)}</td>`;
    }
    html += '</tr>';
  }
  return html + '</tbody></table>';
}

function heatmapHtml(step, labels) {
  const [nr, nc] = shapeOf(step);
  const name = STEP_NAMES[step.id] ?? step.id;
  return `<div class="heatmap" data-key="${stepKey(step)}">
    <p class="hint">${nr} × ${nc}: too large for numbers, drawn as a heatmap. Click a cell, or focus the map and use the arrow keys and Enter.</p>
    <div class="heatmap-box"><canvas tabindex="0" width="${nc}" height="${nr}" role="img"
      aria-label="${escapeHtml(name)} heatmap, ${nr} ${labels.rowTitle} rows by ${nc} ${labels.colTitle} columns. Arrow keys move, Enter explains the cell."></canvas><div class="cursor" hidden></div></div>
    <p class="heatmap-readout" aria-live="polite"></p></div>`;
}

/** Draw a heatmap canvas: one pixel per value, scaled up by CSS. */
export function drawHeatmap(canvas, step) {
  const [nr, nc] = shapeOf(step);
  const { lut, index } = colourLut(step.data, step.id === 'weights' ? 'weights' : 'signed');
  const ctx2d = canvas.getContext('2d');
  const img = ctx2d.createImageData(nc, nr);
  const px = img.data;
  for (let i = 0; i < nr; i++) {
    const row = step.data[i];
    for (let j = 0; j < nc; j++) {
      const t = index(row[j]);
      const k = (i * nc + j) * 4;
      if (t < 0) { px[k] = 150; px[k + 1] = 150; px[k + 2] = 150; } else { px[k] = lut[t * 3]; px[k + 1] = lut[t * 3 + 1]; px[k + 2] = lut[t * 3 + 2]; }
      px[k + 3] = 255;
    }
  }
  ctx2d.putImageData(img, 0, 0);
  const size = Math.max(1, Math.min(24, Math.floor(560 / Math.max(nr, nc))));
  canvas.style.width = `${nc * size}px`;
  canvas.style.height = `${nr * size}px`;
}

function legendHtml(step) {
  const max = scaleMax(step.data);
  if (step.id === 'weights') {
    return `<div class="legend" aria-hidden="true"><span>0</span><span class="ramp seq"></span><span>${fmt(max, 2)}</span></div>`;
  }
  return `<div class="legend" aria-hidden="true"><span>−${fmt(max, 2).replace('−', '')}</span><span class="ramp div"></span><span>+${fmt(max, 2).replace('−', '')}</span></div>`;
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
  let html = '';
  let currentGroup = null;
  let n = 0;
  const hTag = multi ? 'h4' : 'h3';
  for (const { step } of cards) {
    const h = headOf(step);
    const group = h >= 0 ? `head${h}` : 'combine';
    if (multi && group !== currentGroup) {
      if (currentGroup !== null) html += '</div></section>';
      currentGroup = group;
      n = 0;
      const title = h >= 0 ? `Head ${h + 1} of ${ctx.meta.heads}` : 'Combining the heads';
      html += `<section class="head-group" aria-label="${title}"><h3 class="group-title">${title}</h3><div class="step-cards">`;
    } else if (!multi && currentGroup === null) {
      currentGroup = 'single';
      html += '<div class="step-cards">';
    }
    n++;
    const key = stepKey(step);
    const labels = axisLabels(step, ctx);
    const [nr, nc] = shapeOf(step);
    const collapsed = ctx.collapsed.includes(key);
    const name = STEP_NAMES[step.id] ?? step.id;
    const big = nr > TABLE_MAX_ROWS || nc > TABLE_MAX_COLS;
    const titleId = `t-${key.replace(/[^a-z0-9]/gi, '-')}`;
    html += `<article class="step${collapsed ? ' collapsed' : ''}${step.id === 'output' ? ' final' : ''}" data-key="${key}" data-step="${step.id}" data-head="${h}" aria-labelledby="${titleId}">
      <header class="step-head">
        <${hTag} id="${titleId}"><span class="step-num">${n}</span> ${escapeHtml(name)}${multi && h >= 0 ? ` <span class="head-tag">head ${h + 1}</span>` : ''}</${hTag}>
        <span class="shape" title="shape">${nr} × ${nc}</span>
        <button type="button" class="fold" aria-expanded="${!collapsed}" aria-controls="${titleId}-body" aria-label="${collapsed ? 'Show' : 'Hide'} ${escapeHtml(name)}">${collapsed ? '▸' : '▾'}</button>
      </header>
      <div class="step-body" id="${titleId}-body"${collapsed ? ' hidden' : ''}>
        <div class="formula">${mathHtml(formulaTex(step, ctx), true)}</div>
        <div class="facts-box">${factsHtml(step, trace, ctx)}</div>
        <div class="matrix-wrap">${big ? heatmapHtml(step, labels) : tableHtml(step, labels, ctx, maskedPositions(trace, step))}</div>
        <div class="legend-box">${legendHtml(step)}</div>
      </div>
    </article>`;
  }
  if (currentGroup !== null) html += multi ? '</div></section>' : '</div>';
  container.innerHTML = html;
  container.dataset.sig = signature;
  for (const canvas of container.querySelectorAll('.heatmap canvas')) {
    const key = canvas.closest('.heatmap').dataset.key;
    const step = steps.find((s) => stepKey(s) === key);
    if (step) drawHeatmap(canvas, step);
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
  return [key, shapeOf(step).join('x'), ctx.collapsed.includes(key), ctx.decimals, formulaTex(step, ctx),
    labels.rows.join(','), labels.cols.join(',')].join('|');
}

function setHtml(el, html) {
  if (el && el.innerHTML !== html) el.innerHTML = html;
}

/** Update numbers, colours, facts and legends in place; false if the DOM is not as expected. */
function patchSteps(container, trace, ctx, cards) {
  const d = ctx.decimals;
  for (const { step } of cards) {
    const card = container.querySelector(`article[data-key="${stepKey(step)}"]`);
    if (!card) return false;
    setHtml(card.querySelector('.facts-box'), factsHtml(step, trace, ctx));
    setHtml(card.querySelector('.legend-box'), legendHtml(step));
    const canvas = card.querySelector('.heatmap canvas');
    if (canvas) { drawHeatmap(canvas, step); continue; }
    const tbody = card.querySelector('table.matrix tbody');
    if (!tbody) continue;
    const scale = colourScale(step.data, step.id === 'weights' ? 'weights' : 'signed');
    const masked = maskedPositions(trace, step);
    const rows = tbody.rows;
    for (let i = 0; i < step.data.length; i++) {
      const tr = rows[i];
      if (!tr) return false;
      const row = step.data[i];
      for (let j = 0; j < row.length; j++) {
        const td = tr.cells[j + 1];
        const v = row[j];
        const hiddenHere = masked && masked[i][j] === -Infinity;
        const c = scale(v);
        const text = fmt(v, d);
        if (td.textContent !== text) td.textContent = text;
        td.classList.toggle('neg-inf', v === -Infinity);
        td.classList.toggle('was-masked', Boolean(hiddenHere) && v !== -Infinity);
        const bg = c && !hiddenHere ? c.bg : '';
        if (td.dataset.bg !== bg) {
          td.dataset.bg = bg;
          td.style.background = bg;
          td.style.color = c && !hiddenHere ? c.fg : '';
        }
      }
    }
  }
  return true;
}
