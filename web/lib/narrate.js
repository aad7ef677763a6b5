// One sentence per step of a trace: what the step does and what to notice in these numbers
// ("sweet? puts 80% of its weight on banana because their score is largest"). Read from the
// trace's own description (ids, axes, inputs, given, facts, meta) and numbers; no attention maths
// is redone here, only the numbers are compared. Pure: the page's step-through mode and the
// component use it alike.
// The words are the catalogue's (web/lib/locales, ids narrate.*, formatted by a translator `t` of
// i18n.js; English by default): STEP_TELLERS below says, per step id, which messages a step's
// sentence is made of and with which values; numbers arrive formatted here (formatNumber's decimal
// point and minus), counts as numbers for the catalogue's plurals.
import { formatNumber } from './format.js';
import { english, stepFormula, stepTitle } from './i18n.js';

const MINUS = '\u2212';

/** Two significant digits ("6.8", "0.85"): enough to see a change, short enough to read. */
function sig(x) {
  return String(Number(x.toPrecision(2))).replace('-', MINUS);
}
/** A weight as a whole percentage, the number alone ("80"): the catalogue writes the % sign. */
const percent = (x) => String(Math.round(100 * x));
const num = (x) => formatNumber(x, 2);

/** The step's entry for query q and key k, whichever way its axes run. */
function entry(step, q, k) {
  return step.axes[0] === 'queries' ? step.data[q][k] : step.data[k][q];
}
function count(step, axis) {
  return step.shape[step.axes.indexOf(axis)];
}

/** Names of the queries and keys: the given ones, else "query 1", "key 1", "token 1", ... (`word`). */
function namer(list, word, t = english) {
  return (i) => (list?.[i] === undefined ? t(`narrate.name.${word}`, { n: i + 1 }) : quoteToken(list[i], t));
}

/**
 * A token's name as a sentence writes it: in quotes when it reads as a word ("the", "banana",
 * "sweet?": letters and no digit), so that "“the” spreads its weight most" parses; names such as
 * w1, input_2 or x₃ read as names already and stay bare. The quotes are the language's (`t`).
 */
export function quoteToken(name, t = english) {
  const s = String(name);
  return /\p{L}/u.test(s) && !/[\p{N}_]/u.test(s) ? t('narrate.quoted', { name: s }) : s;
}

/** A message not yet formatted. */
const say = (id, values = {}) => ({ id, values });

/** Sentences (messages; null for one left out) formatted and joined as the language joins them. */
function sentences(t, said) {
  const texts = said.filter(Boolean).map((m) => t(m.id, m.values));
  return texts.reduce((before, after) => t('narrate.then', { before, after }));
}

function projection(step, { trace, t }) {
  const { meta } = trace;
  const projected = step.given.some((g) => g.startsWith('W_'));
  const width = step.shape[step.axes.indexOf('features')];
  const said = [
    projected
      ? say(`narrate.${step.id}.projected`, { text: stepFormula(step, t).text, width })
      : say(`narrate.${step.id}.given`, { tokens: step.id === 'Q' ? count(step, 'queries') : count(step, 'keys'), width }),
  ];
  if (meta.heads > 1 && step.features) {
    const head = { head: step.head + 1, first: step.features[0] + 1, last: step.features[1] };
    if (step.id !== 'Q' && meta.kv_heads < meta.heads) {
      const sharing = trace.steps.filter((s) => s.id === step.id && s.kv_group === step.kv_group).map((s) => String(s.head + 1));
      said.push(say('narrate.projection.shared', { ...head, group: step.kv_group + 1, heads: t.list(sharing) }));
    } else said.push(say('narrate.projection.head', head));
  }
  return said;
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

function scores(step, { trace, f, names }) {
  const b = largest(step);
  const inHead = trace.meta.heads > 1 && step.head != null && step.head >= 0;
  return [
    say('narrate.scores'),
    b &&
      say(inHead ? 'narrate.scores.largestInHead' : 'narrate.scores.largest', {
        head: inHead ? step.head + 1 : 0,
        query: names.q(b.q),
        key: names.k(b.k),
        value: num(b.v),
      }),
    f?.scores_variance !== undefined && say('narrate.scores.variance', { variance: sig(f.scores_variance) }),
  ];
}

function scaled(step, { trace, f, options }) {
  const { meta } = trace;
  // What the scale does to what follows: a softmax's peak, or how far each sigmoid saturates.
  const fn = options?.score_fn === 'sigmoid' ? 'sigmoid' : 'softmax';
  const variance = f && f.scores_variance !== undefined && f.scaled_variance !== undefined;
  const values = {
    score_fn: fn,
    change: variance ? 'variance' : 'none',
    before: variance ? sig(f.scores_variance) : '',
    after: variance ? sig(f.scaled_variance) : '',
  };
  switch (meta.scale_kind) {
    case 'none':
      return [say('narrate.scaled.none')];
    case 'sqrt_dk':
      return [say('narrate.scaled.sqrt_dk', { ...values, d_k: meta.d_k })];
    case 'divide_sqrt': {
      const n = 1 / (meta.scale * meta.scale);
      const by = Math.abs(n - Math.round(n)) < 1e-4 ? `√${Math.round(n)}` : num(1 / meta.scale);
      return [say('narrate.scaled.divide', { ...values, by })];
    }
    default:
      return [say(meta.scale < 1 ? 'narrate.scaled.multiply' : 'narrate.scaled.stretch', { ...values, by: num(meta.scale) })];
  }
}

/**
 * The mask's components by their bit in facts.hidden_by (bit 8: sink tokens, which it keeps).
 * @type {[number, string][]}
 */
const MASK_COMPONENTS = [
  [1, 'narrate.mask.causal'],
  [2, 'narrate.mask.window'],
  [4, 'narrate.mask.given'],
];

function mask(step, { f, t }) {
  const nq = count(step, 'queries');
  const nk = count(step, 'keys');
  let hidden = 0;
  let bits = 0;
  for (let q = 0; q < nq; q++) {
    for (let k = 0; k < nk; k++) {
      const b = f?.hidden_by?.[step.axes[0] === 'queries' ? q : k]?.[step.axes[0] === 'queries' ? k : q] ?? 0;
      // Bits 1, 2, 4 hide the pair; bit 8 alone keeps it (a sink the window would hide).
      if (b & 7) hidden++;
      bits |= b;
    }
  }
  const why = MASK_COMPONENTS.filter(([bit]) => bits & bit).map(([, id]) => t(id));
  const values = { hidden, total: nq * nk };
  return [
    why.length
      ? say('narrate.mask.why', { ...values, why: why.reduce((first, second) => t('narrate.mask.also', { first, second })) })
      : say('narrate.mask', values),
    bits & 8 && say('narrate.mask.sinks'),
  ];
}

/**
 * What each query's attention weights sum to, read from the problem's options and a head's facts:
 * `kind` 'one' (softmax), 'lambda' (differential attention: 1 − λ), 'sink' (a sink logit takes a
 * share: less than 1) or 'free' (sigmoid attention: each weight on its own), and `phrase`, which
 * completes "each query's weights …". The one place the page, the glance and narration ask.
 */
export function weightSums(options = {}, facts = {}) {
  if (options?.score_fn === 'sigmoid') return { kind: 'free', phrase: 'need not sum to 1 (sigmoid weights, each on its own)' };
  if (Number.isFinite(facts?.lambda)) return { kind: 'lambda', phrase: 'sum to 1 − λ' };
  if (Number.isFinite(facts?.sink_logit)) return { kind: 'sink', phrase: 'sum to less than 1: the sink logit takes the rest' };
  return { kind: 'one', phrase: 'sum to 1' };
}

/** Sigmoid attention's weights: each on its own, so a query's need not sum to 1. */
function sigmoidWeights(step, names, f) {
  const nq = count(step, 'queries');
  const nk = count(step, 'keys');
  const sums = f?.weight_sums ?? [];
  let best = null;
  for (let q = 0; q < nq; q++) for (let k = 0; k < nk; k++) if (!best || entry(step, q, k) > best.w) best = { q, k, w: entry(step, q, k) };
  return [
    sums.length > 1
      ? say('narrate.weights.sigmoid.range', { min: num(Math.min(...sums)), max: num(Math.max(...sums)) })
      : sums.length
        ? say('narrate.weights.sigmoid.sum', { sum: num(sums[0]) })
        : say('narrate.weights.sigmoid'),
    best && say('narrate.weights.sigmoid.largest', { query: names.q(best.q), key: names.k(best.k), value: num(best.w) }),
  ];
}

function weights(step, { trace, names, f, options, t }) {
  const sums = weightSums(options, f);
  if (sums.kind === 'free') return sigmoidWeights(step, names, f);
  if (sums.kind === 'lambda') {
    // Differential attention's weights: the first map less λ times the second.
    const rowSums = f.weight_sums ?? [];
    return [
      rowSums.length
        ? say('narrate.weights.differential.sum', { lambda: num(f.lambda), sum: num(rowSums[0]) })
        : say('narrate.weights.differential', { lambda: num(f.lambda) }),
    ];
  }
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
  const said = [say(sums.kind === 'sink' ? 'narrate.weights.sink' : 'narrate.weights')];
  if (live.length) {
    const sharpest = live.reduce((b, q) => (rows[q][top[q]] > rows[b][top[b]] ? q : b), live[0]);
    const k = top[sharpest];
    const scoreRow = Array.from({ length: nk }, (_, j) => entry(scoresStep, sharpest, j));
    const becauseLargest = scoreRow.every((v, j) => j === k || !(v > scoreRow[k]));
    const values = { query: names.q(sharpest), key: names.k(k), share: percent(rows[sharpest][k]) };
    said.push(
      seen(sharpest) > 1
        ? say(becauseLargest ? 'narrate.weights.largest' : 'narrate.weights.share', values)
        : say('narrate.weights.only', values),
    );
    if (live.length > 1) {
      const flattest = live.reduce((b, q) => (rows[q][top[q]] < rows[b][top[b]] ? q : b), live[0]);
      if (flattest !== sharpest && percent(rows[flattest][top[flattest]]) !== percent(rows[sharpest][k])) {
        said.push(
          say('narrate.weights.flattest', {
            query: names.q(flattest),
            key: names.k(top[flattest]),
            share: percent(rows[flattest][top[flattest]]),
          }),
        );
      }
    }
  }
  if (f?.fully_masked?.length) {
    said.push(say('narrate.weights.noKey', { count: f.fully_masked.length, queries: t.list(f.fully_masked.map((q) => names.q(q))) }));
  }
  if (f?.sink_share?.length) {
    const most = f.sink_share.reduce((b, v, q) => (v > f.sink_share[b] ? q : b), 0);
    said.push(
      say('narrate.weights.sinkShare', { query: names.q(most), share: percent(f.sink_share[most]), sum: percent(1 - f.sink_share[most]) }),
    );
  }
  return said;
}

/** "sweet?'s output is 80% banana's value + 19% apple's" for the query with the sharpest weights. */
function mix(weights, names) {
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
  if (!best) return null;
  const [first, second] = best.row.slice(0, 2).filter((p) => p.w >= 0.005);
  // Every weight under half a percent (sigmoid weights can all be tiny): no share worth saying.
  if (!first) return null;
  const rest = best.row.slice(second ? 2 : 1).reduce((sum, p) => sum + p.w, 0);
  const values = { query: names.q(best.q), key: names.k(first.k), share: percent(first.w), rest: rest >= 0.005 ? 'yes' : 'no' };
  return second
    ? say('narrate.output.mixTwo', { ...values, key2: names.k(second.k), share2: percent(second.w) })
    : say('narrate.output.mixOne', values);
}

function output(step, { trace, names, options, t }) {
  const { meta } = trace;
  const inputs = step.inputs.map((i) => trace.steps[i]);
  const probabilities = inputs.find((s) => s.kind === 'probability');
  if (probabilities) {
    const values = { line: meta.layout === 'columns' ? 'column' : 'row', head: step.head != null && step.head >= 0 ? step.head + 1 : 0 };
    // Sigmoid weights need not sum to 1: a weighted sum, not an average.
    const id = `narrate.output.${options?.score_fn === 'sigmoid' ? 'sum' : 'average'}${meta.heads > 1 ? 'InHead' : ''}`;
    return [say(id, values), mix(probabilities, names)];
  }
  if (step.id === 'concat') {
    return [say('narrate.concat', { heads: meta.heads, d_v: meta.d_v, width: step.shape[step.axes.indexOf('features')] })];
  }
  const matrix = step.given.find((g) => g.startsWith('W_'));
  if (matrix) {
    const from = inputs[0]?.id === 'concat' ? 'heads' : 'head';
    return [
      say('narrate.output.projected', { text: stepFormula(step, t).text, matrix, from, width: step.shape[step.axes.indexOf('features')] }),
    ];
  }
  return [say('narrate.output')];
}

function cache(step, { trace }) {
  const fresh = trace.steps[step.inputs.find((i) => trace.steps[i].axes.includes('keys'))];
  const all = count(step, 'keys');
  const n = fresh ? count(fresh, 'keys') : all;
  return [say(`narrate.${step.id}`, { earlier: all - n, fresh: n, all })];
}

function softcapped(step, { trace }) {
  const before = trace.steps[step.inputs[0]];
  const peak = (s) => Math.max(...s.data.flat().filter(Number.isFinite).map(Math.abs));
  return [say('narrate.softcapped', { before: num(peak(before)), after: num(peak(step)) })];
}

/**
 * What narration knows per step id: a function of (step, context) giving the messages the step's
 * sentence is made of (null for one left out), with their values. A step without an entry is told
 * by its caption (title_id). Context: { trace, f (the head's facts), names { q, k }, options, t }.
 */
const STEP_TELLERS = {
  positional: (step) => [say(step.given.includes('P') ? 'narrate.positional.learned' : 'narrate.positional.sinusoidal')],
  X_pos: () => [say('narrate.X_pos')],
  Q: projection,
  K: projection,
  V: projection,
  Q_rot: () => [say('narrate.Q_rot')],
  K_rot: () => [say('narrate.K_rot')],
  K_cache: cache,
  V_cache: cache,
  scores,
  scaled,
  softcapped,
  alibi: (step, { f }) => [say('narrate.alibi', { slope: num(f?.alibi_slope ?? 0) })],
  biased: () => [say('narrate.biased')],
  mask,
  masked: (step) => [say(step.data.flat().some((v) => v === -Infinity) ? 'narrate.masked' : 'narrate.masked.fill')],
  weights,
  head_output: output,
  output,
  concat: output,
};

/**
 * The sentence for step `index` of `trace`. `labels`: { tokensQ, tokensK } (token names, as the
 * page shows them; missing names read "query 1", "key 1", ...) and `options`, the problem's (its
 * score_fn: sigmoid weights need not sum to 1). `t`: the language's translator (i18n.js
 * loadTranslator); English by default.
 * @type {typeof import('./index.js').narrateStep}
 */
export function narrateStep(trace, index, labels = {}, t = english) {
  const step = trace.steps[index];
  // A step narration has no words for: its caption, in the language (title: English's).
  if (!Object.hasOwn(STEP_TELLERS, step.id)) return stepTitle(step, t);
  const head = step.head != null && step.head >= 0 ? step.head : 0;
  const context = {
    trace,
    f: trace.facts.find((x) => x.head === head),
    names: { q: namer(labels.tokensQ, 'query', t), k: namer(labels.tokensK, 'key', t) },
    options: labels.options,
    t,
  };
  return sentences(t, STEP_TELLERS[step.id](step, context));
}

/**
 * One sentence per step of `trace`, in the trace's order (see narrateStep).
 * @type {typeof import('./index.js').narrate}
 */
export function narrate(trace, labels = {}, t = english) {
  return trace.steps.map((_, i) => narrateStep(trace, i, labels, t));
}

// ---- attention in practice: one sentence per position of the page's walkthroughs --------------
// (engine.onlineSoftmax, engine.decode, engine.tiles, engine.gradients), read off their results.
// Their words are the catalogue's too (narrate.online.*, narrate.decode.*, narrate.tiles.*,
// narrate.gradient.*); counts that may run past 999 (multiply-adds, bytes, tiles) arrive as text,
// so no language groups their digits, and beside them a number for the plural.

/** "keys w3–w4" or "key w3": the tokens [first, end) of a range, by name (`side`: queries or keys). */
function span(range, name, side, t) {
  const [a, b] = range;
  return t(`narrate.tiles.${side}`, { single: b - a === 1 ? 'yes' : 'no', first: name(a), last: name(b - 1) });
}
/** How much smaller b is than a, as "4.0× less", or "1.5× more" when it is larger. */
function times(a, b, t) {
  if (!(a > 0) || !(b > 0) || a === b) return a === b ? t('narrate.times', { change: 'same', ratio: '' }) : '';
  return a > b ? t('narrate.times', { change: 'less', ratio: sig(a / b) }) : t('narrate.times', { change: 'more', ratio: sig(b / a) });
}
/** A difference as "0 (exactly equal)" or "2.2e−16". */
function difference(x, t) {
  return x === 0 ? t('narrate.exactlyEqual') : num(x);
}
/** A count as the catalogue takes it: `n` for its plural, `text` its digits as they are. */
const counted = (n) => ({ n, text: String(n) });

/**
 * The sentence of position `index` of the online softmax of one row (engine.onlineSoftmax's
 * result): positions 0 … n − 1 are the entries, position n the weights. `settings`: the call's
 * { subtractMax, precision }. `t`: the language's translator (English by default).
 * @type {typeof import('./index.js').narrateOnlineSoftmax}
 */
export function narrateOnlineSoftmax(result, index, settings = {}, t = english) {
  const subtract = settings.subtractMax !== false;
  const precision = settings.precision ?? 'float64';
  const { steps } = result;
  if (index >= steps.length) {
    const n = result.weights.length;
    const bad = result.weights.filter((w) => Number.isNaN(w)).length;
    const weights = { count: n, countText: String(n) };
    if (!Number.isFinite(result.sum) || bad) {
      return sentences(t, [
        say('narrate.online.overflow', { sum: num(result.sum), bad, badText: String(bad), ...weights }),
        say('narrate.online.overflow.fix'),
      ]);
    }
    const top = result.weights.reduce((b, w, j) => (w > result.weights[b] ? j : b), 0);
    return sentences(t, [
      say('narrate.online.weights', {
        max: num(result.max),
        sum: num(result.sum),
        entry: String(top + 1),
        share: percent(result.weights[top]),
        ...weights,
      }),
      !subtract && say('narrate.online.weights.unsafe', { precision, limit: precision === 'float32' ? '88.7' : '709.8' }),
    ]);
  }
  const s = steps[index];
  const at = { entry: String(s.j + 1), x: num(s.x) };
  if (s.x === -Infinity) return t('narrate.online.hidden', { ...at, max: num(s.m_after) });
  if (!subtract) {
    if (!Number.isFinite(s.l_before)) return t('narrate.online.overflowed', { ...at, before: num(s.l_before), after: num(s.l_after) });
    return Number.isFinite(s.l_after)
      ? t('narrate.online.add', { ...at, before: num(s.l_before), after: num(s.l_after) })
      : t('narrate.online.overflows', { ...at, precision, after: num(s.l_after) });
  }
  if (s.m_before === -Infinity) return t('narrate.online.start', { ...at, max: num(s.m_after), sum: num(s.l_after) });
  if (s.m_after > s.m_before) {
    return t('narrate.online.newMax', {
      ...at,
      before: num(s.m_before),
      after: num(s.m_after),
      rescale: num(s.rescale),
      sumBefore: num(s.l_before),
      sum: num(s.l_after),
    });
  }
  return t('narrate.online.notMax', { ...at, max: num(s.m_after), sumBefore: num(s.l_before), sum: num(s.l_after) });
}

/**
 * The sentence of step `index` of engine.decode's result: the cache, where the new query's weight
 * goes (head 1), the work with and without the cache (this token and so far) and the check
 * against full causal attention. `labels`: { tokensQ, tokensK } as for narrateStep; `t` as there.
 * @type {typeof import('./index.js').narrateDecodeStep}
 */
export function narrateDecodeStep(decoding, index, labels = {}, t = english) {
  const s = decoding.steps[index];
  const q = namer(labels.tokensQ, 'token', t);
  const k = namer(labels.tokensK ?? labels.tokensQ, 'token', t);
  const heads = s.weights.length;
  const said = [
    s.t === 0
      ? say('narrate.decode.first', { query: q(0) })
      : say('narrate.decode.reads', { query: q(s.t), earlier: s.t, earlierText: String(s.t), rows: String(s.cache_rows) }),
  ];
  if (s.t > 0) {
    const w = s.weights[0];
    const top = w.reduce((b, v, j) => (v > w[b] ? j : b), 0);
    said.push(say('narrate.decode.weight', { multi: heads > 1 ? 'yes' : 'no', share: percent(w[top]), key: k(top) }));
  }
  const upTo = decoding.steps.slice(0, index + 1);
  const cached = upTo.reduce((a, x) => a + x.flops_cached, 0);
  const full = upTo.reduce((a, x) => a + x.flops_full, 0);
  said.push(
    say('narrate.decode.cost', {
      cached: String(s.flops_cached),
      full: String(s.flops_full),
      first: s.t === 0 ? 'yes' : 'no',
      last: String(s.t + 1),
      cachedSoFar: String(cached),
      fullSoFar: String(full),
      saved: full > cached ? 'yes' : 'no',
      saving: full > cached ? times(full, cached, t) : '',
    }),
    say('narrate.decode.check', { row: String(s.t + 1), difference: difference(s.difference, t) }),
  );
  return sentences(t, said);
}

/**
 * The sentence of position `index` of engine.tiles' result: positions 0 … n − 1 are the tiles in
 * the order visited, position n the final output and the memory traffic. `t` as narrateStep's.
 * @type {typeof import('./index.js').narrateTile}
 */
export function narrateTile(tiles, index, labels = {}, t = english) {
  const q = namer(labels.tokensQ, 'query', t);
  // In "queries 1–2 with keys 3–4" a missing name is its number alone.
  const bareQ = (i) => labels.tokensQ?.[i] ?? String(i + 1);
  const bareK = (i) => labels.tokensK?.[i] ?? String(i + 1);
  const all = tiles.tiles;
  if (index >= all.length) {
    const visited = counted(tiles.visited);
    const skipped = counted(tiles.skipped ?? 0);
    return sentences(t, [
      say('narrate.tiles.done', {
        visited: visited.n,
        visitedText: visited.text,
        skipped: skipped.n,
        skippedText: skipped.text,
        difference: difference(tiles.max_difference, t),
      }),
      say('narrate.tiles.bytes', {
        blockQ: String(tiles.block_q),
        blockK: String(tiles.block_k),
        flash: String(tiles.bytes_flash),
        standard: String(tiles.bytes_standard),
        ratio: times(tiles.bytes_standard, tiles.bytes_flash, t),
      }),
    ]);
  }
  const tile = all[index];
  const where = t('narrate.tiles.where', {
    tile: String(index + 1),
    tiles: String(all.length),
    multi: tiles.blocks.some((b) => b.head > 0) ? 'yes' : 'no',
    head: String(tile.head + 1),
    queries: span(tile.queries, bareQ, 'queries', t),
    keys: span(tile.keys, bareK, 'keys', t),
  });
  if (tile.skipped) return t('narrate.tiles.skipped', { where });
  const next = all[index + 1];
  const last = !next || next.head !== tile.head || next.q_block !== tile.q_block;
  const done = last && say('narrate.tiles.last');
  const first = tile.queries[0];
  if (tile.m_before.every((m) => m === -Infinity)) {
    return sentences(t, [
      say('narrate.tiles.first', { where, query: q(first), max: num(tile.m_after[0]), sum: num(tile.l_after[0]) }),
      done,
    ]);
  }
  const raised = tile.m_after.findIndex((m, i) => m > tile.m_before[i]);
  if (raised >= 0) {
    return sentences(t, [
      say('narrate.tiles.raise', {
        where,
        query: q(first + raised),
        before: num(tile.m_before[raised]),
        after: num(tile.m_after[raised]),
        rescale: num(tile.rescale[raised]),
        sumBefore: num(tile.l_before[raised]),
        sum: num(tile.l_after[raised]),
      }),
      done,
    ]);
  }
  return sentences(t, [
    say('narrate.tiles.add', { where, query: q(first), sumBefore: num(tile.l_before[0]), sum: num(tile.l_after[0]) }),
    done,
  ]);
}

/**
 * The sentence of gradient step `index` (an index into gradients.steps, a step whose id starts
 * with "d") of engine.gradients' result: what it is, its largest entry, and what heads share.
 * `labels`: narrateStep's (token names, and the problem's options: sigmoid attention's dS); `t` too.
 * @type {typeof import('./index.js').narrateGradientStep}
 */
export function narrateGradientStep(gradients, index, labels = {}, t = english) {
  const step = gradients.steps[index];
  const { meta } = gradients;
  const names = {
    queries: namer(labels.tokensQ, 'query', t),
    keys: namer(labels.tokensK, 'key', t),
    features: (i) => t('narrate.name.feature', { n: String(i + 1) }),
    positions: (i) => t('narrate.name.position', { n: String(i + 1) }),
  };
  const whole = step.head == null || step.head < 0;
  // Sigmoid attention's dS (labels.options.score_fn "sigmoid"): each weight on its own.
  const meaningId = step.id === 'dS' && labels.options?.score_fn === 'sigmoid' ? 'dS_sigmoid' : step.id;
  // A gradient step with a sentence of its own has narrate.gradient.meaning.<id> in the catalogue
  // (English's has every id another has: i18n.test); the others read as their caption.
  const meaning = t.has(`narrate.gradient.meaning.${step.id}`) ? t(`narrate.gradient.meaning.${meaningId}`) : null;
  const said = [];
  if (step.id === 'dO') {
    const ones = step.data.every((r) => r.every((v) => v === 1));
    said.push(say('narrate.gradient.dO', { meaning, ones: ones ? 'yes' : 'no', loss: num(gradients.loss) }));
  } else if (whole) {
    said.push(say('narrate.gradient.input', { text: stepFormula(step, t).text, input: step.id.slice(1) }));
    if (meta.heads > 1 && ['dQ', 'dK', 'dV'].includes(step.id)) {
      said.push(
        step.id !== 'dQ' && meta.kv_heads < meta.heads
          ? say('narrate.gradient.shared', { heads: String(meta.heads), kvHeads: meta.kv_heads, kvHeadsText: String(meta.kv_heads) })
          : say('narrate.gradient.ownColumns'),
      );
    }
  } else {
    const caption = () => stepTitle(step, t).toLocaleLowerCase(t.lang);
    said.push(
      say('narrate.gradient.step', {
        text: stepFormula(step, t).text,
        multi: meta.heads > 1 ? 'yes' : 'no',
        head: String(step.head + 1),
        meaning: meaning ?? caption(),
      }),
    );
    if (['dK', 'dV', 'dK_cache', 'dV_cache'].includes(step.id) && meta.kv_heads < meta.heads) {
      const sharing = gradients.steps
        .filter((s) => s.id === step.id && s.kv_group === step.kv_group && s.head != null)
        .map((s) => String(s.head + 1));
      if (sharing.length > 1) {
        const heads = sharing.reduce((first, second) => t('narrate.gradient.and', { first, second }));
        said.push(say('narrate.gradient.summed', { heads, group: String(step.kv_group + 1), id: step.id }));
      }
    }
  }
  let best = null;
  step.data.forEach((row, r) =>
    row.forEach((v, c) => {
      if (Number.isFinite(v) && (best === null || Math.abs(v) > Math.abs(best.v))) best = { v, r, c };
    }),
  );
  if (best && step.id !== 'dO' && best.v !== 0) {
    const [ra, ca] = step.axes;
    said.push(
      say('narrate.gradient.largest', {
        value: num(best.v),
        row: names[ra]?.(best.r) ?? t('narrate.name.row', { n: String(best.r + 1) }),
        column: names[ca]?.(best.c) ?? t('narrate.name.column', { n: String(best.c + 1) }),
      }),
    );
  }
  return sentences(t, said);
}
