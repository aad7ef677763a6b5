// Causal linear attention token by token (or chunk by chunk): the state S and z, each output row
// beside the parallel form's, and each form's cost (a Walkthrough, walk.js).
import { $, app } from '../app.js';
import { html } from 'attention-explorer/html';
import { warningsIn } from 'attention-explorer/i18n';
import { fmt } from '../format.js';
import { features, grid, matrixBox, names, plain, restart, walkState } from './walk.js';
import { rich, t } from '../language.js';

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
    return t('explorer.practice.recurrent.kept', { softmax: String(softmax.state), form: form.form, state: String(form.state) });
  }
  const [first, end] = s.tokens;
  return t('explorer.practice.recurrent.sentence', {
    many: end - first > 1 ? 'yes' : 'no',
    first: String(first + 1),
    last: String(end),
    token: labels.tokensQ[first] ?? `t${first + 1}`,
    multi: recurrent.steps.some((x) => x.head > 0) ? 'yes' : 'no',
    head: String(s.head + 1),
    exact: s.difference === 0 ? 'yes' : 'no',
  });
}

/** A list of numbers as one row of a step-like object. */
const rowOf = (id, values) => plain(id, [values]);

export function body(view) {
  const { recurrent } = view;
  const { ctx } = app.result;
  const n = recurrent.steps.length;
  const sup = (chunks) => html`<sup>${chunks}</sup>`;
  const difference = { strong: (chunks) => html`<strong id="pr-difference">${chunks}</strong>` };
  const [token, dim] = ['token', 'dim'].map((axis) => t(`explorer.axis.${axis}`));
  const featureK = t('explorer.practice.recurrent.featureK');
  let position;
  if (walkState().index < n) {
    const s = recurrent.steps[walkState().index];
    const [first, end] = s.tokens;
    const many = end - first > 1 ? 'yes' : 'no';
    const tokens = names(ctx.tokensQ, first, end, 't');
    const S = plain('recurrent-state', s.state);
    const stateCaption = t('explorer.practice.recurrent.state', {
      many,
      first: String(first + 1),
      last: String(end),
      multi: recurrent.steps.some((x) => x.head > 0) ? 'yes' : 'no',
      head: String(s.head + 1),
      sup,
    });
    position = html`<div class="pr-row">
      ${matrixBox(S, grid(features(s.state.length), features(s.state[0]?.length ?? 0), featureK, t('explorer.practice.recurrent.featureV')), ctx, stateCaption, 'pr-state')}
      ${s.z.length > 0 && matrixBox(rowOf('recurrent-z', s.z), grid(['z'], features(s.z.length), '', featureK), ctx, t('explorer.practice.recurrent.z', { sup }))}
    </div><div class="pr-row">
      ${s.intra.length > 0 && matrixBox(plain('recurrent-intra', s.intra), grid(tokens, features(s.intra[0].length), token, dim), ctx, t('explorer.practice.recurrent.intra'))}
      ${s.inter.length > 0 && matrixBox(plain('recurrent-inter', s.inter), grid(tokens, features(s.inter[0].length), token, dim), ctx, t('explorer.practice.recurrent.inter'))}
      ${matrixBox(plain('recurrent-output', s.output), grid(tokens, features(s.output[0]?.length ?? 0), token, dim), ctx, t('explorer.practice.recurrent.output', { many }))}
    </div>
    <p class="pr-check">${rich('explorer.practice.recurrent.check', { many, difference: fmt(s.difference, ctx.decimals), ...difference })}</p>`;
  } else {
    position = html`<p class="pr-check">${rich('explorer.practice.recurrent.checkAll', {
      chunked: recurrent.chunk ? 'yes' : 'no',
      chunk: String(recurrent.chunk),
      difference: fmt(recurrent.max_difference, ctx.decimals),
      ...difference,
    })}</p>`;
  }
  const costs = recurrent.costs.map(
    (c) =>
      html`<tr data-form="${c.form}"><th scope="row">${t('explorer.practice.recurrent.form', { form: c.form })}</th><td>${c.multiply_adds}</td><td>${c.state}</td></tr>`,
  );
  const warning = recurrent.warnings.length > 0 && html`<p class="warning">⚠ ${warningsIn(recurrent, t).join(' ')}</p>`;
  return html`${position}<table class="pr-work" id="pr-costs"><caption>${t('explorer.practice.recurrent.costs')}</caption><thead><tr><th></th><th scope="col">${t('explorer.practice.recurrent.multiplyAdds')}</th><th scope="col">${t('explorer.practice.recurrent.numbersKept')}</th></tr></thead><tbody>${costs}</tbody></table>${warning}`;
}

export function controls(view) {
  return html`<label for="pr-chunk">${t('explorer.practice.recurrent.chunk')}</label> <input id="pr-chunk" type="number" min="1" step="1" size="3" placeholder="1" value="${walkState().chunk ?? ''}">
      <p class="hint">${t('explorer.practice.recurrent.hint')}</p>`;
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
