// The pipeline diagram on the first screen: the problem's own steps, drawn from the trace's step
// graph (each step's id, symbol, shape, inputs, given, head, kv_group), not a fixed picture.
// Columns are the steps' depth in the graph (a step sits one column after its last input); each
// head gets a lane; steps every head shares (X + positions, the concatenation, W_O) span the lanes.
// A node jumps to its step's card; the step in view, the open cell's step and the step-through
// step are marked.
import { $, app } from './app.js';
import { html, setHtml } from 'attention-explorer/html';
import { mathHtml } from './math.js';
import { stepKey } from './steps.js';
import { resultParts, store } from './store.js';
import { t } from './language.js';
import { stepFormula } from 'attention-explorer/i18n';

/** Heads drawn as lanes; the rest are summarised in one line (they have the same steps). */
const MAX_LANES = 2;

/** Weights and biases a step reads: written on its node (the data inputs get nodes of their own). */
const isWeight = (name) => /^(W_|b_)/.test(name);

function shapeOf(value) {
  if (!Array.isArray(value)) return null;
  return Array.isArray(value[0]) ? [value.length, value[0].length] : [1, value.length];
}

/**
 * The diagram's graph: nodes { key, step?, input?, col, lane, symbol, shape, tags, label } and
 * edges [fromKey, toKey]; lanes [{ head, label }] (one lane, head null, for a single head).
 */
export function pipelineGraph(trace, problem = {}) {
  const { steps, meta } = trace;
  const multi = meta.heads > 1;
  const shownHeads = multi ? Math.min(meta.heads, MAX_LANES) : 1;
  const shown = (s) => !multi || s.head == null || s.head < 0 || s.head < shownHeads;
  // Depth: 0 for a step read from nothing, else one more than its deepest input (sources count).
  const sourcesOf = (s) => s.given.filter((g) => !isWeight(g) && g !== 'mask' && g !== s.id);
  const depth = [];
  steps.forEach((s, i) => {
    depth[i] = Math.max(0, ...s.inputs.map((j) => depth[j] + 1), sourcesOf(s).length ? 1 : 0);
  });
  // A step made from nothing (the mask, ALiBi's bias, the sinusoids; not a given Q, K or V) sits
  // just before the first step that reads it.
  steps.forEach((s, i) => {
    if (s.inputs.length || s.given.some((g) => g !== 'mask')) return;
    const readers = steps.map((t, j) => (t.inputs.includes(i) ? depth[j] : Infinity));
    const first = Math.min(...readers);
    if (Number.isFinite(first) && first - 1 > depth[i]) depth[i] = first - 1;
  });
  const laneOf = (s) => (!multi ? 0 : s.head == null || s.head < 0 ? null : s.head);
  const nodes = [];
  const edges = [];
  const sources = new Map();
  steps.forEach((s, i) => {
    if (!shown(s)) return;
    const key = stepKey(s);
    for (const name of sourcesOf(s)) {
      if (!sources.has(name)) {
        sources.set(name, {
          key: `in:${name}`,
          input: name,
          col: 0,
          lane: multi ? null : 0,
          symbol: name.replace(/^X_kv$/, 'X_{kv}'),
          shape: shapeOf(problem[name]),
          tags: [],
          label: t('explorer.pipeline.input', { name }),
        });
      }
      edges.push([`in:${name}`, key]);
    }
    const tags = s.given.filter(isWeight);
    // With fewer key/value heads than heads, a head's keys and values (keys × features) are its group's.
    const shared =
      multi && s.head != null && s.head >= 0 && meta.kv_heads < meta.heads && s.axes.includes('keys') && s.axes.includes('features');
    nodes.push({
      key,
      step: s,
      col: depth[i],
      lane: laneOf(s),
      symbol: s.symbol,
      shape: s.shape,
      tags,
      group: shared ? s.kv_group : null,
      label: t('explorer.pipeline.node', {
        step: t(s.title_id),
        head: multi && s.head != null && s.head >= 0 ? String(s.head + 1) : 'none',
        rows: String(s.shape[0]),
        cols: String(s.shape[1]),
      }),
    });
    for (const j of s.inputs) if (shown(steps[j])) edges.push([stepKey(steps[j]), key]);
  });
  const lanes = multi
    ? Array.from({ length: shownHeads }, (_, h) => {
        const group = steps.find((s) => s.head === h && s.kv_group != null)?.kv_group ?? h;
        const gqa = meta.kv_heads < meta.heads;
        return { head: h, label: t('explorer.pipeline.lane', { head: String(h + 1), gqa: gqa ? 'yes' : 'no', group: String(group + 1) }) };
      })
    : [{ head: null, label: '' }];
  const more =
    multi && meta.heads > shownHeads ? t('explorer.pipeline.more', { from: String(shownHeads + 1), to: String(meta.heads) }) : '';
  const all = [...sources.values(), ...nodes];
  // A node every head shares spans the lanes, so it gets a column of its own: in a column with the
  // heads' nodes it covered them (RoPE's angle table Θ sat on V⁽¹⁾ and Q⁽²⁾, review #8).
  if (multi) {
    const crowded = new Set(all.filter((n) => n.lane === null && all.some((m) => m.lane !== null && m.col === n.col)).map((n) => n.col));
    for (const c of [...crowded].sort((a, b) => b - a)) {
      for (const n of all) if (n.col > c || (n.col === c && n.lane !== null)) n.col += 1;
    }
  }
  return { nodes: all, edges, lanes, more, columns: Math.max(...all.map((n) => n.col)) + 1 };
}

/** Grid rows of each node: a lane is as tall as its tallest column; a node alone in a column spans it. */
function placeRows(graph) {
  const { nodes, lanes } = graph;
  const laneRows = [];
  const laneStart = [];
  let row = 1;
  lanes.forEach((lane, l) => {
    const perCol = new Map();
    for (const n of nodes) if (n.lane === (lanes.length > 1 ? lane.head : 0)) perCol.set(n.col, (perCol.get(n.col) ?? 0) + 1);
    laneRows[l] = Math.max(1, ...perCol.values());
    laneStart[l] = row;
    row += laneRows[l];
  });
  const total = row - 1;
  const used = new Map();
  for (const n of nodes) {
    const l = n.lane === null ? -1 : lanes.length > 1 ? lanes.findIndex((x) => x.head === n.lane) : 0;
    if (l < 0) {
      // Shared nodes of one column (X and X_kv) split the lanes' height between them.
      const column = nodes.filter((m) => m.lane === null && m.col === n.col);
      const k = column.indexOf(n);
      const from = 1 + Math.floor((k * total) / column.length);
      const to = 1 + Math.floor(((k + 1) * total) / column.length);
      n.rows = `${from} / ${Math.max(to, from + 1)}`;
      continue;
    }
    const same = nodes.filter((m) => m.lane === n.lane && m.col === n.col);
    if (same.length === 1) {
      n.rows = `${laneStart[l]} / span ${laneRows[l]}`;
      continue;
    }
    const k = used.get(`${l}:${n.col}`) ?? 0;
    used.set(`${l}:${n.col}`, k + 1);
    n.rows = `${laneStart[l] + k} / span 1`;
  }
  return { laneStart, laneRows, total };
}

function nodeHtml(n, labelCol, first) {
  const tags = n.tags.length > 0 && html` <span class="pl-tags">· ${n.tags.join(' ')}</span>`;
  const shape = n.shape && html`<span class="pl-shape">${n.shape[0]}×${n.shape[1]}${tags}</span>`;
  const group =
    n.group != null &&
    html`<span class="pl-group" title="${t('explorer.pipeline.group', { group: String(n.group + 1) })}">kv ${n.group + 1}</span>`;
  const style = `grid-column:${n.col + 1 + labelCol};grid-row:${n.rows}`;
  const cls = `pl-node${n.input ? ' pl-source' : ''}${n.step?.id === 'output' ? ' pl-final' : ''}${n.group != null ? ' pl-shared' : ''}`;
  const title = n.step ? `${n.label}: ${stepFormula(n.step, t).text}` : n.label;
  // The name read out is the sentence; what is drawn (KaTeX, the shape) is for the eye.
  const name = n.input ? t('explorer.pipeline.goInput', { name: n.input }) : t('explorer.pipeline.goStep', { label: n.label });
  // One Tab stop for the whole diagram (the first node; arrow keys move between nodes).
  return html`<button type="button" class="${cls}" style="${style}" data-key="${n.key}" title="${title}" tabindex="${first ? 0 : -1}"><span class="visually-hidden">${name}</span><span aria-hidden="true" class="pl-face"><span class="pl-sym">${mathHtml(n.symbol)}</span>${shape}${group}</span></button>`;
}

let observer = null;
let resizeObserver = null;
/** Steps whose card is in view (step keys), kept by the IntersectionObserver. */
const inView = new Set();

/** Draws the diagram for the current result into #pipeline. */
export function renderPipeline() {
  /** @type {HTMLElement & { _edges?: [string, string][] }} the diagram, and the edges it was drawn with */
  const box = $('pipeline');
  const { result } = app;
  if (!box || !result) return;
  const hidden = result.ctx?.hiddenSteps ?? [];
  const graph = pipelineGraph(result.trace, result.problem);
  const visible = graph.nodes.filter((n) => !n.step || !hidden.includes(n.step.id));
  const multi = graph.lanes.length > 1;
  const labelCol = multi ? 1 : 0;
  const { laneStart, laneRows, total } = placeRows({ ...graph, nodes: visible });
  const sig =
    visible.map((n) => `${n.key}@${n.col}/${n.rows}/${n.shape}/${n.symbol}/${n.tags}/${n.group}`).join('|') +
    graph.lanes.map((l) => l.label).join('|') +
    graph.more;
  if (box.dataset.sig !== sig) {
    const lanes =
      multi &&
      graph.lanes.map(
        (lane, l) => html`<span class="pl-lane" style="grid-column:1;grid-row:${laneStart[l]} / span ${laneRows[l]}">${lane.label}</span>`,
      );
    const nodes = visible.map((n, i) => nodeHtml(n, labelCol, i === 0));
    setHtml(
      box,
      html`<div class="pl-grid" style="grid-template-columns:${multi && 'auto '}repeat(${graph.columns}, auto);grid-template-rows:repeat(${total}, auto)">${lanes}${nodes}<svg class="pl-edges" aria-hidden="true"></svg></div>${graph.more && html`<p class="pl-more hint">${graph.more}</p>`}`,
    );
    box.dataset.sig = sig;
    box._edges = graph.edges;
    scheduleEdges();
  }
  watchCards();
  markPipeline();
}

let edgesFrame = 0;
/**
 * The arrows are drawn in the next animation frame, where the page is laid out once for that frame
 * anyway: measuring the nodes during the update forced a layout of the whole page there, which
 * the rest of the update then made stale (issue 18).
 */
function scheduleEdges() {
  if (edgesFrame) return;
  edgesFrame = requestAnimationFrame(() => {
    edgesFrame = 0;
    drawEdges();
  });
}

/** Arrows from each node to the nodes that read it (measured after layout). */
function drawEdges() {
  /** @type {HTMLElement & { _edges?: [string, string][] }} */
  const box = $('pipeline');
  const grid = box?.querySelector('.pl-grid');
  const svg = grid?.querySelector('svg.pl-edges');
  if (!svg) return;
  const origin = grid.getBoundingClientRect();
  const at = (key) => grid.querySelector(`.pl-node[data-key="${CSS.escape(key)}"]`)?.getBoundingClientRect();
  // The grid's own size: its scroll size would count this (absolutely placed) SVG as it was last
  // drawn, so a diagram that got narrower (a phone, a smaller problem) kept scrolling sideways.
  svg.setAttribute('width', String(grid.offsetWidth));
  svg.setAttribute('height', String(grid.offsetHeight));
  const paths = [];
  for (const [from, to] of box._edges ?? []) {
    const a = at(from);
    const b = at(to);
    if (!a || !b) continue;
    const x1 = a.right - origin.left;
    const y1 = a.top + a.height / 2 - origin.top;
    const x2 = b.left - origin.left - 1;
    const y2 = b.top + b.height / 2 - origin.top;
    const dx = Math.max(8, (x2 - x1) / 2);
    paths.push(
      html`<path d="M${x1.toFixed(1)},${y1.toFixed(1)} C${(x1 + dx).toFixed(1)},${y1.toFixed(1)} ${(x2 - dx).toFixed(1)},${y2.toFixed(1)} ${x2.toFixed(1)},${y2.toFixed(1)}" marker-end="url(#pl-arrow)"/>`,
    );
  }
  setHtml(
    svg,
    html`<defs><marker id="pl-arrow" viewBox="0 0 6 6" refX="5.5" refY="3" markerWidth="6" markerHeight="6" orient="auto"><path d="M0,0 L6,3 L0,6 z"/></marker></defs>${paths}`,
  );
}

/** Watches which step cards are on screen, to mark them in the diagram. */
function watchCards() {
  if (!observer) {
    observer = new IntersectionObserver(
      (entries) => {
        for (const e of entries) {
          const key = /** @type {HTMLElement} */ (e.target).dataset.key;
          if (e.isIntersecting) inView.add(key);
          else inView.delete(key);
        }
        markPipeline();
      },
      { rootMargin: '0px 0px -30% 0px' },
    );
    resizeObserver = new ResizeObserver(() => drawEdges());
    resizeObserver.observe($('pipeline'));
  }
  observer.disconnect();
  inView.clear();
  for (const card of document.querySelectorAll('#step-list article.step')) observer.observe(card);
}

/** Marks the steps in view, the open cell's step and the step-through step. */
export function markPipeline() {
  const box = $('pipeline');
  if (!box) return;
  const open = app.state.open;
  const openKey = open ? `${open.step}:${open.head ?? -1}` : null;
  const current = document.querySelector('#step-list article.step.is-current')?.dataset.key ?? null;
  for (const node of box.querySelectorAll('.pl-node')) {
    const key = node.dataset.key;
    node.classList.toggle('in-view', !current && inView.has(key));
    node.classList.toggle('selected', key === openKey);
    const here = current ? key === current : false;
    node.classList.toggle('current', here);
    if (here) {
      node.setAttribute('aria-current', 'step');
      // A narrow screen scrolls the diagram: keep the current step in its view.
      const left = node.getBoundingClientRect().left - box.getBoundingClientRect().left;
      if (left < 0 || left + node.offsetWidth > box.clientWidth) box.scrollLeft += left - (box.clientWidth - node.offsetWidth) / 2;
    } else node.removeAttribute('aria-current');
  }
}

/** Clicking a node: `onStep(key)` for a step (the page jumps to its card), or the input's editor. */
export function bindPipeline(onStep) {
  $('pipeline').addEventListener('click', (e) => {
    const node = /** @type {HTMLElement} */ (e.target).closest('.pl-node');
    if (!node) return;
    const key = node.dataset.key;
    if (key.startsWith('in:')) {
      const editor = document.querySelector(`#editors .editor[data-input="${CSS.escape(key.slice(3))}"]`);
      editor?.scrollIntoView({ block: 'start' });
      editor?.querySelector('input, textarea')?.focus({ preventScroll: true });
      return;
    }
    onStep(key);
  });
  // Arrow keys, Home and End move between the nodes (in the order they are drawn); the node left
  // is the diagram's Tab stop, as in a toolbar.
  $('pipeline').addEventListener('keydown', (e) => {
    const nodes = [...$('pipeline').querySelectorAll('.pl-node')];
    const at = nodes.indexOf(/** @type {HTMLElement} */ (e.target).closest('.pl-node'));
    if (at < 0) return;
    const moves = { ArrowRight: at + 1, ArrowDown: at + 1, ArrowLeft: at - 1, ArrowUp: at - 1, Home: 0, End: nodes.length - 1 };
    if (!(e.key in moves) || e.altKey || e.ctrlKey || e.metaKey) return;
    e.preventDefault();
    e.stopPropagation(); // not also a step-through move
    const to = nodes[Math.max(0, Math.min(nodes.length - 1, moves[e.key]))];
    for (const n of nodes) n.tabIndex = n === to ? 0 : -1;
    to.focus();
  });
}

/** The diagram follows the results (store.js resultParts). */
export function mountPipeline() {
  store.subscribe(resultParts, ([result]) => {
    if (result) renderPipeline();
  });
}
