// Decoding with a KV cache, token by token, checked against causal attention (a Walkthrough, walk.js).
import { decodeCsv, decodeLatex, narrateDecodeStep, stringify } from 'attention-explorer';
import { app } from '../app.js';
import { html } from 'attention-explorer/html';
import { fmt, quoteToken } from '../format.js';
import { axisLabels } from '../steps.js';
import { features, grid, matrixBox, names, plain, walkState } from './walk.js';
import { t } from '../language.js';

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
  const headNames = Array.from({ length: heads }, (_, h) => `head ${h + 1}`);
  const keys = names(ctx.tokensK, 0, s.cache_rows, 't');
  const upTo = decoding.steps.slice(0, walk.index + 1);
  const sum = (key) => upTo.reduce((a, x) => a + x[key], 0);
  const kvNote = heads > 1 ? ' (head 1’s key/value head)' : '';
  // Decoding assumes one sequence attending to itself, causally: say so where the page's problem
  // differs (not causal, or keys named apart from the queries), so its numbers are not a surprise.
  const problem = app.result.problem ?? {};
  const causal = Boolean(problem.options?.causal);
  const ownKey = (ctx.tokensK ?? []).some((k, i) => k !== ctx.tokensQ?.[i]);
  const query = ctx.tokensQ[s.t] === undefined ? `t${s.t + 1}` : quoteToken(ctx.tokensQ[s.t]);
  const own = ownKey && ` (here key t is token t’s own key: ${quoteToken(keys[s.t] ?? '')} for ${query})`;
  const note = html`<p class="pr-note" id="pr-decode-note">Decoding generates one sequence token by token, so it is always causal self-attention: token t’s query reads the keys and values of tokens 1 to t, its own included${own}.${
    !causal && ' Your problem is not causal: its weights let every query read every key, so they differ from these.'
  }</p>`;
  return html`${note}<div class="pr-row">
    ${matrixBox(K, axisLabels(K, ctx), ctx, `The cache: ${K.title}${kvNote}, ${s.t} cached + 1 new`, 'pr-cache')}
    ${matrixBox(V, axisLabels(V, ctx), ctx, `The cache: ${V.title}${kvNote}`, 'pr-cache')}
  </div><div class="pr-row">
    ${matrixBox(plain('decode-scores', s.scores, 'signed', 'New scores'), grid(headNames, keys, 'head', 'key'), ctx, 'The new row of scores QKᵀ (before scaling)')}
    ${matrixBox(plain('decode-weights', s.weights, 'probability', 'New weights'), grid(headNames, keys, 'head', 'key'), ctx, 'The new row of weights')}
    ${matrixBox(plain('decode-output', [s.output], 'signed', 'Its output'), grid([ctx.tokensQ[s.t] ?? `t${s.t + 1}`], features(s.output.length), 'token', 'dim'), ctx, 'Its output')}
  </div>
  <table class="pr-work"><caption>Multiply-adds</caption><thead><tr><th></th><th scope="col">with the cache</th><th scope="col">without (recomputed)</th></tr></thead><tbody>
    <tr><th scope="row">this token</th><td id="pr-flops-cached">${s.flops_cached}</td><td id="pr-flops-full">${s.flops_full}</td></tr>
    <tr><th scope="row">tokens 1–${s.t + 1}</th><td id="pr-flops-cached-sum">${sum('flops_cached')}</td><td id="pr-flops-full-sum">${sum('flops_full')}</td></tr>
  </tbody></table>
  <p class="pr-check">Row ${s.t + 1} of full causal attention (engine.run with causal): largest difference <strong id="pr-difference">${fmt(s.difference, ctx.decimals)}</strong>.</p>`;
}

export const exporters = {
  file: 'attention-decode',
  latex: (view, opts) => decodeLatex(view.decoding, opts),
  csv: (view) => decodeCsv(view.decoding),
  json: (view) => stringify(view.decoding),
};
