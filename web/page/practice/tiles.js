// FlashAttention's tiles over the score matrix it never stores, and the bytes moved (a Walkthrough,
// walk.js).
import { narrateTile, stringify, tilesCsv, tilesLatex } from 'attention-explorer';
import { $, app } from '../app.js';
import { html } from 'attention-explorer/html';
import { cellFmt, fmt } from '../format.js';
import { axisLabels } from '../steps.js';
import { features, grid, matrixBox, matrixHtml, names, plain, recordTable, restart, walkState } from './walk.js';
import { rich, t } from '../language.js';
import { stepTitle } from 'attention-explorer/i18n';

export const title = 'explorer.practice.tiles.title';

const MAX_TILES = 4096;

export function compute(engine, result) {
  const walk = walkState();
  const { trace, problem } = result;
  // One position per tile: past a few thousand, stepping through them teaches nothing.
  const { queries, keys, heads } = trace.meta;
  const count = heads * Math.ceil(queries / walk.blocks.block_q) * Math.ceil(keys / walk.blocks.block_k);
  if (walk.blocks.block_q >= 1 && walk.blocks.block_k >= 1 && count > MAX_TILES)
    throw new Error(t('explorer.practice.tiles.tooMany', { count: String(count), max: String(MAX_TILES) }));
  const tiles = engine.tiles(problem, walk.blocks);
  return { tiles, positions: tiles.tiles.length + 1 };
}

export function where(view, i) {
  const count = view.tiles.tiles.length;
  return i < count ? t('explorer.practice.tiles.tile', { n: String(i + 1), count: String(count) }) : t('explorer.practice.tiles.output');
}

export function sentence(view, index, labels) {
  return narrateTile(view.tiles, index, labels, t);
}

/** The softmax's input of a head: the score matrix the tiles never store. */
function scoreStep(trace, head) {
  const weights = trace.steps.find((s) => s.id === 'weights' && (s.head ?? 0) === head);
  return trace.steps[weights.inputs[0]];
}

export function body(view) {
  const { tiles } = view;
  const { trace, ctx } = app.result;
  const final = walkState().index >= tiles.tiles.length;
  const tile = final ? null : tiles.tiles[walkState().index];
  const head = tile?.head ?? 0;
  const scores = scoreStep(trace, head);
  const bytes = html`<p class="pr-bytes">${t('explorer.practice.tiles.bytes', {
    size: String(tiles.element_bytes),
    blockQ: String(tiles.block_q),
    blockK: String(tiles.block_k),
    flashBytes: String(tiles.bytes_flash),
    standardBytes: String(tiles.bytes_standard),
    flash: (chunks) => html`<strong id="pr-bytes-flash">${chunks}</strong>`,
    standard: (chunks) => html`<strong id="pr-bytes-standard">${chunks}</strong>`,
  })}</p>`;
  const caption = t('explorer.practice.tiles.scores', {
    step: stepTitle(scores, t),
    multi: trace.meta.heads > 1 ? 'yes' : 'no',
    head: String(head + 1),
    final: final ? 'yes' : 'no',
    never: (chunks) => html`<span class="never-stored-note">${chunks}</span>`,
  });
  const top = html`<figure class="pr-matrix pr-scores" data-head="${head}"><figcaption>${caption}</figcaption>
    <div class="matrix-wrap">${matrixHtml(scores, axisLabels(scores, ctx), ctx)}</div></figure>${bytes}`;
  const [token, query, dim] = ['token', 'query', 'dim'].map((axis) => t(`explorer.axis.${axis}`));
  if (final) {
    const out = plain('output', tiles.output, 'signed', t('explorer.practice.tiles.outputTitle'));
    const box = matrixBox(
      out,
      grid(names(ctx.tokensQ, 0, tiles.output.length, 't'), features(tiles.output[0].length), token, dim),
      ctx,
      rich('explorer.practice.tiles.outputCaption', {
        difference: fmt(tiles.max_difference, ctx.decimals),
        strong: (chunks) => html`<strong id="pr-tiles-difference">${chunks}</strong>`,
      }),
    );
    return html`${top}${box}`;
  }
  if (tile.skipped) return top;
  const [q0, q1] = tile.queries;
  const qs = names(ctx.tokensQ, q0, q1, 't');
  const record = recordTable(
    t('explorer.practice.tiles.perQuery'),
    ['mBefore', 'mAfter', 'rescale', 'lBefore', 'lAfter'].map((column) => t(`explorer.practice.tiles.${column}`)),
    qs.map((name, i) => ({
      name,
      id: `q${q0 + i}`,
      values: [tile.m_before[i], tile.m_after[i], tile.rescale[i], tile.l_before[i], tile.l_after[i]],
    })),
  );
  const columns = trace.meta.layout === 'columns';
  const partial = (data, which) => {
    const labels = columns ? grid(features(data.length), qs, dim, query) : grid(qs, features(data[0].length), query, dim);
    const caption = t(`explorer.practice.tiles.partial`, { when: which });
    return matrixBox(plain(`tiles-partial-${which}`, data, 'signed', caption), labels, ctx, caption);
  };
  return html`${top}${record}<div class="pr-row">${partial(tile.partial_before, 'before')}${partial(tile.partial_after, 'after')}</div>`;
}

/** Greys the score matrix but for the current tile; marks the tiles already visited. */
export function drawn(view) {
  const table = document.querySelector('#practice-body .pr-scores table');
  if (!table) return;
  const { tiles } = view;
  const tile = tiles.tiles[walkState().index];
  const columns = app.result.trace.meta.layout === 'columns';
  const inside = (t, q, k) => t && q >= t.queries[0] && q < t.queries[1] && k >= t.keys[0] && k < t.keys[1];
  const head = tile?.head ?? 0;
  const done = tiles.tiles.slice(0, walkState().index).filter((t) => t.head === head && !t.skipped);
  for (const td of table.querySelectorAll('td[data-r]')) {
    const [r, c] = [Number(td.dataset.r), Number(td.dataset.c)];
    const [q, k] = columns ? [c, r] : [r, c];
    td.classList.toggle('pr-block-top', q > 0 && q % tiles.block_q === 0);
    td.classList.toggle('pr-block-left', k > 0 && k % tiles.block_k === 0);
    if (inside(tile, q, k) && !tile.skipped) {
      // The tile's own numbers, as the algorithm computes them.
      const v = tile.scores[columns ? k - tile.keys[0] : q - tile.queries[0]][columns ? q - tile.queries[0] : k - tile.keys[0]];
      td.textContent = cellFmt(v, app.result.ctx.decimals);
      td.classList.add('tile-now');
    } else {
      td.classList.add('never-stored');
      td.classList.toggle(
        'tile-done',
        done.some((t) => inside(t, q, k)),
      );
      td.classList.toggle('tile-skipped', Boolean(tile?.skipped && inside(tile, q, k)));
    }
  }
}

export function controls(view) {
  const walk = walkState();
  return html`<label for="pr-block-q">${rich('explorer.practice.tiles.blockQ')}</label> <input id="pr-block-q" type="number" min="1" step="1" size="3" value="${walk.blocks.block_q}">
      <label for="pr-block-k">${rich('explorer.practice.tiles.blockK')}</label> <input id="pr-block-k" type="number" min="1" step="1" size="3" value="${walk.blocks.block_k}">`;
}

export function bind() {
  for (const [input, key] of [
    ['pr-block-q', 'block_q'],
    ['pr-block-k', 'block_k'],
  ]) {
    $(input).addEventListener('change', (e) =>
      restart({ blocks: { ...walkState().blocks, [key]: Number(/** @type {HTMLInputElement | HTMLSelectElement} */ (e.target).value) } }),
    );
  }
}

export const exporters = {
  file: 'attention-tiles',
  latex: (view, opts) => tilesLatex(view.tiles, opts),
  csv: (view) => tilesCsv(view.tiles),
  json: (view) => stringify(view.tiles),
};
