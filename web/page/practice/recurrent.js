// Causal linear attention token by token (or chunk by chunk): the state S and z, each output row
// beside the parallel form's, and each form's cost (a Walkthrough, walk.js).
import { $, app } from '../app.js';
import { html } from 'attention-explorer/html';
import { fmt } from '../format.js';
import { features, grid, matrixBox, names, plain, restart, walkState } from './walk.js';
import { t } from '../language.js';

export const title = 'explorer.practice.recurrent.title';

export function compute(engine, result) {
  const { problem } = result;
  const { chunk } = walkState();
  const recurrent = engine.recurrent(problem, chunk ? { chunk } : {});
  return { recurrent, positions: recurrent.steps.length + 1 };
}

export function where(view, i) {
  const count = view.recurrent.steps.length;
  return i < count
    ? t('explorer.practice.recurrent.step', { chunk: view.recurrent.chunk ? 'yes' : 'no', n: String(i + 1), count: String(count) })
    : t('explorer.practice.recurrent.cost');
}

export function sentence(view, index, labels) {
  return recurrentSentence(view.recurrent, index, labels);
}

/** One sentence from the recurrent walk's numbers (what changed in the state, how far from the parallel form). */
function recurrentSentence(recurrent, index, labels) {
  const s = recurrent.steps[index];
  if (!s) {
    const softmax = recurrent.costs.find((c) => c.form === 'softmax');
    const form = recurrent.costs.find((c) => c.form === (recurrent.chunk ? 'chunked' : 'recurrent'));
    return `Softmax attention keeps ${softmax.state} numbers (its KV cache grows with every token); the ${form.form} form keeps ${form.state}, whatever the length.`;
  }
  const [first, end] = s.tokens;
  const who = end - first > 1 ? `Tokens ${first + 1}–${end}` : `${labels.tokensQ[first] ?? `t${first + 1}`}`;
  const head = recurrent.steps.some((x) => x.head > 0) ? ` (head ${s.head + 1})` : '';
  return (
    `${who}${head}: the state S, faded by γ, adds φ(k)vᵀ${end - first > 1 ? ' for each token of the chunk' : ''}, and φ(q) reads the output from it, ` +
    `${s.difference === 0 ? 'exactly' : 'up to rounding'} the parallel form’s row.`
  );
}

/** A list of numbers as one row of a step-like object. */
const rowOf = (id, values) => plain(id, [values]);

export function body(view) {
  const { recurrent } = view;
  const { ctx } = app.result;
  const n = recurrent.steps.length;
  let position;
  if (walkState().index < n) {
    const s = recurrent.steps[walkState().index];
    const [first, end] = s.tokens;
    const tokens = names(ctx.tokensQ, first, end, 't');
    const S = plain('recurrent-state', s.state);
    const stateCaption = html`The state S after ${end - first > 1 ? `tokens ${first + 1}–${end}` : `token ${first + 1}`}${recurrent.steps.some((x) => x.head > 0) && `, head ${s.head + 1}`}: Σ γ<sup>distance</sup> φ(k) vᵀ`;
    position = html`<div class="pr-row">
      ${matrixBox(S, grid(features(s.state.length), features(s.state[0]?.length ?? 0), 'φ(k) feature', 'value feature'), ctx, stateCaption, 'pr-state')}
      ${s.z.length > 0 && matrixBox(rowOf('recurrent-z', s.z), grid(['z'], features(s.z.length), '', 'φ(k) feature'), ctx, html`z: Σ γ<sup>distance</sup> φ(k), the normalizer’s state`)}
    </div><div class="pr-row">
      ${s.intra.length > 0 && matrixBox(plain('recurrent-intra', s.intra), grid(tokens, features(s.intra[0].length), 'token', 'dim'), ctx, 'From inside the chunk (its own causal linear attention)')}
      ${s.inter.length > 0 && matrixBox(plain('recurrent-inter', s.inter), grid(tokens, features(s.inter[0].length), 'token', 'dim'), ctx, 'From the state carried in')}
      ${matrixBox(plain('recurrent-output', s.output), grid(tokens, features(s.output[0]?.length ?? 0), 'token', 'dim'), ctx, 'Output row' + (end - first > 1 ? 's' : '') + ': φ(q)ᵀS / φ(q)ᵀz')}
    </div>
    <p class="pr-check">The parallel form’s row${end - first > 1 && 's'} (engine.run): largest difference <strong id="pr-difference">${fmt(s.difference, ctx.decimals)}</strong>.</p>`;
  } else {
    position = html`<p class="pr-check">Every token: the ${recurrent.chunk ? `chunked form (chunks of ${recurrent.chunk})` : 'recurrent form'} against the parallel form, largest difference <strong id="pr-difference">${fmt(recurrent.max_difference, ctx.decimals)}</strong>.</p>`;
  }
  const costs = recurrent.costs.map(
    (c) =>
      html`<tr data-form="${c.form}"><th scope="row">${c.form === 'softmax' ? 'softmax attention (KV cache)' : c.form}</th><td>${c.multiply_adds}</td><td>${c.state}</td></tr>`,
  );
  const warning = recurrent.warnings.length > 0 && html`<p class="warning">⚠ ${recurrent.warnings.join(' ')}</p>`;
  return html`${position}<table class="pr-work" id="pr-costs"><caption>Each form’s cost on this problem</caption><thead><tr><th></th><th scope="col">multiply-adds</th><th scope="col">numbers kept</th></tr></thead><tbody>${costs}</tbody></table>${warning}`;
}

export function controls(view) {
  return html`<label for="pr-chunk">Chunk size</label> <input id="pr-chunk" type="number" min="1" step="1" size="3" placeholder="1" value="${walkState().chunk ?? ''}">
      <p class="hint">Empty: token by token (the recurrent form). A size C: the chunked form, C tokens at a time in parallel plus the state carried from the chunks before. It needs causal linear attention (Options, “Attention variants”).</p>`;
}

export function bind() {
  $('pr-chunk').addEventListener('change', (e) =>
    restart({
      chunk:
        /** @type {HTMLInputElement | HTMLSelectElement} */ (e.target).value.trim() === ''
          ? null
          : Number(/** @type {HTMLInputElement | HTMLSelectElement} */ (e.target).value),
    }),
  );
}
