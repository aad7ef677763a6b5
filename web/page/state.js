// The page's whole state as one plain, serialisable object. Everything a link must reproduce
// lives here: inputs (as text), options, token names, the open cell, folded steps, which
// inputs/steps are hidden (embedding) and the exercise. The link format (v1/v2 strings) and the
// state <-> problem mapping are the package's (attention-explorer/share); this module holds the
// page's defaults.

export const MODES = ['qkv', 'self', 'cross'];
/** Inputs edited as one row of numbers. */
export const VECTOR_INPUTS = new Set(['b_Q', 'b_K', 'b_V', 'b_O', 'b_G']);

export function defaultState() {
  return {
    preset: null,
    edited: false,
    recipe: '', // numpy lines that made the example's random inputs
    mode: 'self',
    inputs: {}, // name -> { text, numpy? }
    use: { bias: false, W_O: false, b_O: false },
    options: {
      layout: 'rows',
      scale: 'sqrt_dk', // 'sqrt_dk' | 'none' | 'custom'
      scaleCustom: '', // a number, "1/sqrt(n)" or "1/n"
      causal: false,
      mask: 'none', // 'none' | 'keep' | 'additive'
      keepMask: null, // 0/1 rows, the shape of the scores step
      additiveMask: '', // text, e.g. "0 -inf\n0 0"
      softcap: 0,
      heads: 1,
      kv_heads: 1,
      precision: 'float64',
    },
    decimals: 4,
    tokens: { q: '', k: '' },
    open: null, // { step, head, row, col }
    collapsed: [], // step keys ("scores:0") folded away
    hide: { inputs: [], steps: [], chrome: false },
    exercise: null, // { steps: ["weights:0"], cells?, tolerance, seed? } (exercise.js)
    student: null, // a student's exercise paper (student.js): the link holds only it
    lesson: null, // { "weights:0": { say?, ask? } }: a teacher's sentence and question per step (stepper.js)
    title: '', // the lesson's title, as its teacher wrote it (lesson-file.js)
  };
}

/** A copy of the state without what equals the defaults, so links stay short. */
export function withoutDefaults(state) {
  const d = defaultState();
  const out = {};
  for (const [k, v] of Object.entries(state)) {
    if (k === 'options') {
      const o = {};
      for (const [ok, ov] of Object.entries(v)) {
        if (JSON.stringify(ov) !== JSON.stringify(d.options[ok])) o[ok] = ov;
      }
      if (Object.keys(o).length) out.options = o;
    } else if (JSON.stringify(v) !== JSON.stringify(d[k])) {
      out[k] = v;
    }
  }
  return JSON.parse(JSON.stringify(out));
}

function isPlainObject(v) {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/**
 * Merge a decoded object over the defaults, keeping only known keys of the right type. The core's
 * own options (rope, window, sink_logit, ...) pass through `options` as written, for the core to
 * check, and `use` keeps any flag (P, cache) that is true.
 */
/** @param {string | false} [passthrough] the key being merged ('options', 'use', ...); false at the top */
function mergeKnown(base, extra, passthrough = false) {
  for (const [k, v] of Object.entries(extra ?? {})) {
    if (!(k in base)) {
      if (passthrough === 'options' && v !== undefined && v !== null) base[k] = v;
      else if (passthrough === 'use' && v === true) base[k] = true;
      continue;
    }
    const b = base[k];
    if (isPlainObject(b) && isPlainObject(v) && k !== 'inputs') mergeKnown(b, v, k);
    else if (k === 'inputs' && isPlainObject(v)) {
      for (const [name, inp] of Object.entries(v)) {
        if (isPlainObject(inp) && typeof inp.text === 'string') {
          base.inputs[name] = { text: inp.text, ...(typeof inp.numpy === 'string' ? { numpy: inp.numpy } : {}) };
        }
      }
    } else if (b === null || typeof b === typeof v) base[k] = v;
  }
  return base;
}

/** The state a link's object stands for: the defaults, with its known keys of the right type. */
export function stateFromObject(obj) {
  const state = mergeKnown(defaultState(), JSON.parse(JSON.stringify(obj)));
  if (!MODES.includes(state.mode)) state.mode = 'self';
  return state;
}

/** Digits after the point, 0..12 (4 for anything unreadable). */
export function decimalsOf(state) {
  const n = Math.round(Number(state.decimals));
  return Number.isFinite(n) ? Math.min(12, Math.max(0, n)) : 4;
}

/** Split "a, b c" into token names. */
export function splitTokens(text) {
  return String(text ?? '')
    .split(/[\s,]+/)
    .filter(Boolean);
}

/**
 * Token names of the queries (q) and keys (k): the typed ones (keys share the queries' in
 * self-attention or when none are typed), then t1, t2, ... up to `counts` { L, S } if given.
 * With `counts.cached` keys from a KV cache, those come first as "past 1", "past 2", ... and
 * the names go to the new keys after them.
 */
export function tokenLists(state, counts) {
  const q = splitTokens(state.tokens.q);
  const kOwn = splitTokens(state.tokens.k);
  const k = state.mode === 'self' || kOwn.length === 0 ? q : kOwn;
  const fill = (list, n) => Array.from({ length: Math.max(n ?? 0, list.length) }, (_, i) => list[i] ?? `t${i + 1}`);
  const cached = counts?.cached ?? 0;
  const past = Array.from({ length: cached }, (_, i) => `past ${i + 1}`);
  return { q: fill(q, counts?.L), k: [...past, ...fill(k, counts?.S === undefined ? undefined : counts.S - cached)] };
}

/** Query, key and cached-key counts { L, S, cached } of a trace, for tokenLists. */
export function traceCounts(trace) {
  const { meta, steps } = trace;
  const cache = steps.find((s) => s.id === 'K_cache');
  const fresh = cache && steps[cache.inputs.find((i) => steps[i].axes.includes('keys'))];
  const keysOf = (step) => step.shape[step.axes.indexOf('keys')];
  return { L: meta.queries, S: meta.keys, cached: cache && fresh ? keysOf(cache) - keysOf(fresh) : 0 };
}

/** Step ids the step list leaves out while an exercise is running (`revealed`: its answers shown). */
export function exerciseHiddenSteps(state, revealed) {
  const ex = state.exercise;
  if (!ex || revealed || !Array.isArray(ex.steps)) return [];
  return [...new Set(ex.steps.map((k) => String(k).split(':')[0]))];
}
