// From the page state to the engine's problem. Each input's text is checked on its own first, so
// every bad input shows its message next to it at once; the problem itself is the package's
// stateToProblem, the mapping every link and <attention-explorer state> uses.
import { stateInputs, stateToProblem } from 'attention-explorer/share';
import { errorWords } from 'attention-explorer/i18n';
import { app } from './app.js';
import { t } from './language.js';

const parseCache = new Map();
/** The input the user changed last: an error naming it and another input is shown at it. */
export const lastEdited = { name: null };

/**
 * engine.parseMatrixDetailed with a small cache: { matrix, format } or { error }, the engine's
 * error (its message_id and values: a view says it with errorWords(error, t), in the page's
 * language when it is shown, so the cache holds no language).
 */
export function parse(text, name) {
  const key = `${name}\u0000${text}`;
  let r = parseCache.get(key);
  if (!r) {
    try {
      const { values, format } = app.engine.parseMatrixDetailed(text, name);
      r = { matrix: values, format };
    } catch (err) {
      r = { error: err };
    }
    if (parseCache.size > 200) parseCache.clear();
    parseCache.set(key, r);
  }
  return r;
}

/** The engine as stateToProblem sees it: parsing through the cache. */
const cachedParser = {
  parseMatrix(text, name) {
    const r = parse(text, name);
    if (r.error) throw Object.assign(r.error, { field: name });
    return r.matrix;
  },
};

/** Query and key counts { L, S } read off the parsed inputs (for sizing the mask). */
function tokenCounts(state, parsed) {
  const cols = state.options.layout === 'columns';
  const count = (m) => (m ? (cols ? m[0].length : m.length) : undefined);
  if (state.mode === 'qkv') return { L: count(parsed.Q), S: count(parsed.K) };
  return { L: count(parsed.X), S: count(state.mode === 'cross' ? parsed.X_kv : parsed.X) };
}

/**
 * { problem, errors, keepMask }: the problem for `state`, or errors by where they belong (an
 * input's name, "mask", "options" or "general"). `editorError(name)` is an editor's own complaint
 * about its text (a cell that is not a number). `keepMask`: with a keep-mask, that mask sized to
 * the scores (cut, or grown with 1s), which the problem uses and the caller stores.
 */
export function buildProblem(state, editorError) {
  const errors = {};
  const parsed = {};
  for (const name of stateInputs(state)) {
    const text = state.inputs[name]?.text ?? '';
    const local = editorError(name);
    if (local) {
      errors[name] = local;
      continue;
    }
    if (!text.trim()) {
      errors[name] = t('explorer.input.empty', { name });
      continue;
    }
    const r = parse(text, name);
    if (r.error) errors[name] = errorWords(r.error, t);
    else parsed[name] = r.matrix;
  }
  const o = state.options;
  const { L, S } = tokenCounts(state, parsed);
  let keepMask = null;
  if (o.mask === 'keep' && L && S) {
    const [r, c] = o.layout === 'columns' ? [S, L] : [L, S];
    keepMask = Array.from({ length: r }, (_, i) => Array.from({ length: c }, (_, j) => ((o.keepMask?.[i]?.[j] ?? 1) === 1 ? 1 : 0)));
    state = { ...state, options: { ...o, keepMask } };
  } else if (o.mask === 'additive') {
    const r = o.additiveMask?.trim() ? parse(o.additiveMask, 'mask') : { error: t('explorer.mask.empty-additive') };
    if (r.error) errors.mask = errorWords(r.error, t);
  }
  if (Object.keys(errors).length) return { problem: null, errors, keepMask };
  try {
    return { problem: stateToProblem(state, cachedParser), errors, keepMask };
  } catch (err) {
    errors[errorPlace(err, state)] = errorWords(err, t);
    return { problem: null, errors, keepMask };
  }
}

/**
 * Where an error from the package or the engine is shown: next to its input, under the options, or
 * in the general banner. Both the package's errors and the core's name what they concern in
 * `field` (and the core's in `fields`, when two inputs disagree: "K has 2 rows but V has 3").
 */
export function errorPlace(err, state) {
  const active = new Set([...stateInputs(state), ...(state.options.mask === 'additive' ? ['mask'] : [])]);
  const fields = (err.fields ?? (err.field === undefined ? [] : [err.field])).map(String);
  // Two inputs that disagree: at the one just changed, if it is one of them.
  if (fields.length > 1 && fields.includes(lastEdited.name) && active.has(lastEdited.name)) return lastEdited.name;
  for (const field of fields) {
    if (field === 'options.mask') return active.has('mask') ? 'mask' : 'options';
    if (field.startsWith('options.')) return 'options';
    const input = field.split('.')[0];
    if (active.has(input)) return input;
  }
  return 'general';
}
