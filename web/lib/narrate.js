// One sentence per step of a trace: what the step does and what to notice in these numbers
// ("sweet? puts 80% of its weight on banana because their score is largest"). Read from the
// trace's own description (ids, axes, inputs, given, facts, meta) and numbers; no attention maths
// is redone here, only the numbers are compared. Pure: the page's step-through mode and the
// component use it alike.
import { formatNumber } from './format.js';

const MINUS = '\u2212';

/** Two significant digits ("6.8", "0.85"): enough to see a change, short enough to read. */
function sig(x) {
  return String(Number(x.toPrecision(2))).replace('-', MINUS);
}
const pct = (x) => `${Math.round(100 * x)}%`;
const num = (x) => formatNumber(x, 2);
const plural = (n, one, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** The step's entry for query q and key k, whichever way its axes run. */
function entry(step, q, k) {
  return step.axes[0] === 'queries' ? step.data[q][k] : step.data[k][q];
}
function count(step, axis) {
  return step.shape[step.axes.indexOf(axis)];
}

/** Names of the queries and keys: the given ones, else "query 1", "key 1", ... */
function namer(list, word) {
  return (i) => list?.[i] ?? `${word} ${i + 1}`;
}

function headPhrase(step, meta) {
  return meta.heads > 1 && step.head != null && step.head >= 0 ? ` (head ${step.head + 1})` : '';
}

function projection(step, trace, names) {
  const { meta } = trace;
  const role = { Q: 'what each token looks for', K: 'what each token offers, to be matched against the queries', V: 'what each token hands over when it is attended to' }[step.id];
  const projected = step.given.some((g) => g.startsWith('W_'));
  const tokens = step.id === 'Q' ? count(step, 'queries') : count(step, 'keys');
  const width = step.shape[step.axes.indexOf('features')];
  let text = projected
    ? `${step.text}: ${role}, ${plural(width, 'number')} per token.`
    : `${step.id} is given: one row per ${step.id === 'Q' ? 'query' : 'key'} (${tokens}), ${role}, ${plural(width, 'number')} each.`;
  if (meta.heads > 1 && step.features) {
    text += ` Head ${step.head + 1} takes features ${step.features[0] + 1}–${step.features[1]}`;
    if (step.id !== 'Q' && meta.kv_heads < meta.heads) {
      const sharing = trace.steps.filter((s) => s.id === step.id && s.kv_group === step.kv_group).map((s) => s.head + 1);
      text += `, the key/value head ${step.kv_group + 1} that heads ${sharing.join(' and ')} share`;
    }
    text += '.';
  }
  return text;
}

/** The query and key of the largest finite entry of a queries × keys step. */
function largest(step) {
  let best = null;
  const nq = count(step, 'queries');
  const nk = count(step, 'keys');
  for (let q = 0; q < nq; q++) {
    for (let k = 0; k < nk; k++) {
      const v = entry(step, q, k);
      if (Number.isFinite(v) && (best === null || v > best.v)) best = { q, k, v };
    }
  }
  return best;
}

function scaledText(step, trace, f) {
  const { meta } = trace;
  const change = f && f.scores_variance !== undefined && f.scaled_variance !== undefined
    ? ` shrinks the scores' variance from ${sig(f.scores_variance)} to ${sig(f.scaled_variance)}` : '';
  switch (meta.scale_kind) {
    case 'none':
      return 'No scaling: the scaled scores are the scores.';
    case 'sqrt_dk':
      return `Scaling by 1/√${meta.d_k}${change || ' shrinks every score'}, so the softmax that follows is less peaked.`;
    case 'divide_sqrt': {
      const n = 1 / (meta.scale * meta.scale);
      const by = Math.abs(n - Math.round(n)) < 1e-4 ? `√${Math.round(n)}` : num(1 / meta.scale);
      return `Dividing by ${by}${change || ' shrinks every score'}, so the softmax that follows is less peaked.`;
    }
    default:
      return meta.scale < 1
        ? `Multiplying by ${num(meta.scale)}${change || ' shrinks every score'}, so the softmax that follows is less peaked.`
        : `Multiplying by ${num(meta.scale)} stretches the scores, so the softmax that follows is more peaked.`;
  }
}

const COMPONENT_WORDS = [
  [1, 'causal: each query sees only itself and earlier keys'],
  [2, 'a window: each query sees only nearby keys'],
  [4, 'the mask you gave'],
];

function maskText(step, f) {
  const nq = count(step, 'queries');
  const nk = count(step, 'keys');
  let hidden = 0;
  let bits = 0;
  for (let q = 0; q < nq; q++) {
    for (let k = 0; k < nk; k++) {
      const b = f?.hidden_by?.[step.axes[0] === 'queries' ? q : k]?.[step.axes[0] === 'queries' ? k : q] ?? 0;
      if (b & 7) { hidden++; bits |= b; }
    }
  }
  const why = COMPONENT_WORDS.filter(([bit]) => bits & bit).map(([, w]) => w);
  return `The mask hides ${hidden} of ${nq * nk} query–key pairs${why.length ? ` (${why.join('; ')})` : ''}.` +
    ((bits & 8) ? ' Sink tokens stay visible to every query.' : '');
}

function weightsText(step, trace, names, f) {
  const nq = count(step, 'queries');
  const nk = count(step, 'keys');
  const scoresStep = trace.steps[step.inputs[0]];
  const rows = Array.from({ length: nq }, (_, q) => Array.from({ length: nk }, (_, k) => entry(step, q, k)));
  const top = rows.map((row) => row.reduce((b, v, k) => (v > row[b] ? k : b), 0));
  // Keys a query sees: those whose softmax input is not −∞. A query that sees one key has no choice.
  const seen = (q) => Array.from({ length: nk }, (_, k) => entry(scoresStep, q, k)).filter((v) => v !== -Infinity).length;
  const visible = rows.map((_, q) => q).filter((q) => !f?.fully_masked?.includes(q));
  const choosing = visible.filter((q) => seen(q) > 1);
  const live = choosing.length ? choosing : visible;
  let text = 'Softmax turns each query\'s scores into weights that sum to 1.';
  if (live.length) {
    const sharpest = live.reduce((b, q) => (rows[q][top[q]] > rows[b][top[b]] ? q : b), live[0]);
    const k = top[sharpest];
    const scoreRow = Array.from({ length: nk }, (_, j) => entry(scoresStep, sharpest, j));
    const becauseLargest = scoreRow.every((v, j) => j === k || !(v > scoreRow[k]));
    text += seen(sharpest) > 1
      ? ` ${names.q(sharpest)} puts ${pct(rows[sharpest][k])} of its weight on ${names.k(k)}` + (becauseLargest ? ' because their score is largest.' : '.')
      : ` ${names.q(sharpest)} sees only ${names.k(k)}: all its weight goes there.`;
    if (live.length > 1) {
      const flattest = live.reduce((b, q) => (rows[q][top[q]] < rows[b][top[b]] ? q : b), live[0]);
      if (flattest !== sharpest && pct(rows[flattest][top[flattest]]) !== pct(rows[sharpest][k])) {
        text += ` ${names.q(flattest)} spreads its weight most: its largest weight is ${pct(rows[flattest][top[flattest]])}, on ${names.k(top[flattest])}.`;
      }
    }
  }
  if (f?.fully_masked?.length) {
    text += ` ${f.fully_masked.map((q) => names.q(q)).join(', ')} see${f.fully_masked.length === 1 ? 's' : ''} no key: ${f.fully_masked.length === 1 ? 'its' : 'their'} weights are all 0.`;
  }
  if (f?.sink_share?.length) {
    const most = f.sink_share.reduce((b, v, q) => (v > f.sink_share[b] ? q : b), 0);
    text += ` The sink takes ${pct(f.sink_share[most])} of ${names.q(most)}'s weight, so its weights sum to ${pct(1 - f.sink_share[most])}.`;
  }
  return text;
}

/** "sweet?'s output is 80% banana's value + 19% apple's" for the query with the sharpest weights. */
function mixText(weights, names) {
  const nq = count(weights, 'queries');
  const nk = count(weights, 'keys');
  // The sharpest query that mixes at least two values (one that sees a single key copies it).
  let best = null;
  for (const mixing of [true, false]) {
    for (let q = 0; q < nq; q++) {
      const row = Array.from({ length: nk }, (_, k) => ({ k, w: entry(weights, q, k) })).sort((x, y) => y.w - x.w);
      if (mixing && !(row[1]?.w >= 0.005)) continue;
      if (row[0].w > 0 && (best === null || row[0].w > best.row[0].w)) best = { q, row };
    }
    if (best) break;
  }
  if (!best) return '';
  const [first, second] = best.row.slice(0, 2).filter((p) => p.w >= 0.005);
  const rest = best.row.slice(second ? 2 : 1).reduce((sum, p) => sum + p.w, 0);
  return ` ${names.q(best.q)}'s output is ${pct(first.w)} ${names.k(first.k)}'s value` +
    (second ? ` + ${pct(second.w)} ${names.k(second.k)}'s` : '') + (rest >= 0.005 ? ' + the rest.' : '.');
}

function outputText(step, trace, names) {
  const { meta } = trace;
  const inputs = step.inputs.map((i) => trace.steps[i]);
  const weights = inputs.find((s) => s.kind === 'probability');
  if (weights) {
    const line = meta.layout === 'columns' ? 'column' : 'row';
    const one = meta.heads > 1 ? `Each ${line} of head ${step.head + 1}'s output` : `Each output ${line}`;
    return `${one} is a weighted average of the value ${line}s, with the weights as mixing shares.` + mixText(weights, names);
  }
  if (step.id === 'concat') {
    return `H puts the ${meta.heads} heads' outputs side by side: ${meta.heads} × ${meta.d_v} = ${step.shape[step.axes.indexOf('features')]} numbers per token.`;
  }
  const w = step.given.find((g) => g.startsWith('W_'));
  if (w) {
    const from = inputs[0]?.id === 'concat' ? 'the heads\' features' : 'the head\'s features';
    return `${step.text}: ${w} mixes ${from} into ${plural(step.shape[step.axes.indexOf('features')], 'number')} per token.`;
  }
  return 'The output.';
}

/**
 * The sentence for step `index` of `trace`. `labels`: { tokensQ, tokensK } (token names, as the
 * page shows them; missing names read "query 1", "key 1", ...).
 */
export function narrateStep(trace, index, labels = {}) {
  const step = trace.steps[index];
  const names = { q: namer(labels.tokensQ, 'query'), k: namer(labels.tokensK, 'key') };
  const head = step.head != null && step.head >= 0 ? step.head : 0;
  const f = trace.facts.find((x) => x.head === head);
  switch (step.id) {
    case 'positional':
      return step.given.includes('P')
        ? 'P holds a learned vector per position, added to each token of X.'
        : 'PE holds the original Transformer\'s sinusoids at each token\'s position: slow and fast waves, one pair per two features.';
    case 'X_pos':
      return 'X + positions: the tokens now carry where they are; the projections read this, not X.';
    case 'Q': case 'K': case 'V':
      return projection(step, trace, names);
    case 'Q_rot': case 'K_rot':
      return `RoPE rotates each pair of ${step.id === 'Q_rot' ? 'query' : 'key'} features by an angle that grows with the position, so a query·key product depends on how far apart they are.`;
    case 'K_cache': case 'V_cache': {
      const fresh = trace.steps[step.inputs.find((i) => trace.steps[i].axes.includes('keys'))];
      const all = count(step, 'keys');
      const n = fresh ? count(fresh, 'keys') : all;
      return `The cache holds ${plural(all - n, 'earlier key')}${step.id === 'V_cache' ? ' (their values)' : ''}, then the ${n} new: the queries attend to all ${all}.`;
    }
    case 'scores': {
      const b = largest(step);
      const variance = f?.scores_variance !== undefined ? ` Their variance is ${sig(f.scores_variance)}.` : '';
      return `Each score is a query's dot product with a key: the larger, the better the key matches.${b ? ` The largest${headPhrase(step, trace.meta)} is ${names.q(b.q)} with ${names.k(b.k)}: ${num(b.v)}.` : ''}${variance}`;
    }
    case 'scaled':
      return scaledText(step, trace, f);
    case 'softcapped': {
      const before = trace.steps[step.inputs[0]];
      const peak = (s) => Math.max(...s.data.flat().filter(Number.isFinite).map(Math.abs));
      return `Soft-capping squashes large scores with tanh, keeping small ones: the largest magnitude goes from ${num(peak(before))} to ${num(peak(step))}.`;
    }
    case 'alibi':
      return `ALiBi penalises distance: a key d positions away loses ${num(f?.alibi_slope ?? 0)}·d (this head's slope).`;
    case 'biased':
      return 'The scores plus the ALiBi bias: nearer keys now score higher than before.';
    case 'mask':
      return maskText(step, f);
    case 'masked':
      return step.data.flat().some((v) => v === -Infinity)
        ? 'Hidden scores become −∞, so the softmax gives them weight 0.'
        : 'Hidden scores become the fill number, not −∞: hidden keys keep a little weight.';
    case 'weights':
      return weightsText(step, trace, names, f);
    case 'head_output': case 'output': case 'concat':
      return outputText(step, trace, names);
    default:
      return step.title;
  }
}

/** One sentence per step of `trace`, in the trace's order (see narrateStep). */
export function narrate(trace, labels = {}) {
  return trace.steps.map((_, i) => narrateStep(trace, i, labels));
}
