// Decoding with a KV cache, token by token, checked against causal attention (a Walkthrough, walk.js).
import { decodeCsv, decodeLatex, narrateDecodeStep, stringify } from 'attention-explorer';
import { app } from '../app.js';
import { html } from 'attention-explorer/html';
import { fmt, quoteToken } from '../format.js';
import { axisLabels } from '../steps.js';
import { features, grid, matrixBox, names, plain, walkState } from './walk.js';
import { rich, t } from '../language.js';
import { stepTitle } from 'attention-explorer/i18n';

export const title = 'explorer.practice.decode.title';

export function compute(engine, result) {
  const { problem } = result;
  const decoding = engine.decode(problem);
  return { decoding, positions: decoding.steps.length };
}

export function where(view, i) {
  return t('explorer.practice.decode.token', { n: String(i + 1), count: String(view.positions) });
}

export function sentence(view, index, labels) {
  return narrateDecodeStep(view.decoding, index, labels, t);
}

/** The new token's view of a step of the trace (K or V, head 1): rows 0..t, keys axis first. */
function cacheSlice(step, t) {
  const keysFirst = step.axes[0] === 'keys';
  const data = keysFirst ? step.data.slice(0, t + 1) : step.data.map((r) => r.slice(0, t + 1));
  return { ...step, data, shape: [data.length, data[0].length] };
}

export function body(view) {
  const walk = walkState();
  const { decoding } = view;
  const { trace, ctx } = app.result;
  const s = decoding.steps[walk.index];
  const heads = s.weights.length;
  const pick = (id) => trace.steps.find((x) => x.id === id && x.head === 0);
  const K = cacheSlice(pick('K_rot') ?? pick('K'), s.t);
  const V = cacheSlice(pick('V'), s.t);
  const headNames = Array.from({ length: heads }, (_, h) => t('explorer.card.head', { head: String(h + 1) }));
  const keys = names(ctx.tokensK, 0, s.cache_rows, 't');
  const upTo = decoding.steps.slice(0, walk.index + 1);
  const sum = (key) => upTo.reduce((a, x) => a + x[key], 0);
  const shared = heads > 1 ? 'yes' : 'no';
  // Decoding assumes one sequence attending to itself, causally: say so where the page's problem
  // differs (not causal, or keys named apart from the queries), so its numbers are not a surprise.
  const problem = app.result.problem ?? {};
  const causal = Boolean(problem.options?.causal);
  const ownKey = (ctx.tokensK ?? []).some((k, i) => k !== ctx.tokensQ?.[i]);
  const query = ctx.tokensQ[s.t] === undefined ? `t${s.t + 1}` : quoteToken(ctx.tokensQ[s.t]);
  const note = html`<p class="pr-note" id="pr-decode-note">${t('explorer.practice.decode.note', {
    own: ownKey ? 'yes' : 'no',
    key: quoteToken(keys[s.t] ?? ''),
    query,
    causal: causal ? 'yes' : 'no',
  })}</p>`;
  const head = t('explorer.practice.axis.head');
  const key = t('explorer.axis.key');
  const difference = { strong: (chunks) => html`<strong id="pr-difference">${chunks}</strong>` };
  return html`${note}<div class="pr-row">
    ${matrixBox(K, axisLabels(K, ctx), ctx, t('explorer.practice.decode.cacheK', { step: stepTitle(K, t), shared, cached: String(s.t) }), 'pr-cache')}
    ${matrixBox(V, axisLabels(V, ctx), ctx, t('explorer.practice.decode.cacheV', { step: stepTitle(V, t), shared }), 'pr-cache')}
  </div><div class="pr-row">
    ${matrixBox(plain('decode-scores', s.scores, 'signed', t('explorer.practice.decode.scoresTitle')), grid(headNames, keys, head, key), ctx, t('explorer.practice.decode.scores'))}
    ${matrixBox(plain('decode-weights', s.weights, 'probability', t('explorer.practice.decode.weightsTitle')), grid(headNames, keys, head, key), ctx, t('explorer.practice.decode.weights'))}
    ${matrixBox(plain('decode-output', [s.output], 'signed', t('explorer.practice.decode.output')), grid([ctx.tokensQ[s.t] ?? `t${s.t + 1}`], features(s.output.length), t('explorer.axis.token'), t('explorer.axis.dim')), ctx, t('explorer.practice.decode.output'))}
  </div>
  <table class="pr-work"><caption>${t('explorer.practice.decode.work')}</caption><thead><tr><th></th><th scope="col">${t('explorer.practice.decode.cached')}</th><th scope="col">${t('explorer.practice.decode.full')}</th></tr></thead><tbody>
    <tr><th scope="row">${t('explorer.practice.decode.thisToken')}</th><td id="pr-flops-cached">${s.flops_cached}</td><td id="pr-flops-full">${s.flops_full}</td></tr>
    <tr><th scope="row">${t('explorer.practice.decode.soFar', { last: String(s.t + 1) })}</th><td id="pr-flops-cached-sum">${sum('flops_cached')}</td><td id="pr-flops-full-sum">${sum('flops_full')}</td></tr>
  </tbody></table>
  <p class="pr-check">${rich('explorer.practice.decode.check', { row: String(s.t + 1), difference: fmt(s.difference, ctx.decimals), ...difference })}</p>`;
}

export const exporters = {
  file: 'attention-decode',
  latex: (view, opts) => decodeLatex(view.decoding, opts),
  csv: (view) => decodeCsv(view.decoding),
  json: (view) => stringify(view.decoding),
};
