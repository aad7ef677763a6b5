// <attention-explorer>'s state and the actions that change it: pure functions (state, ...) ->
// state, tested in Node (tests/js/component-state.test.mjs). The element (component.js) keeps it
// in a store (store.js) and its views subscribe to the parts they draw, as the page and the
// playground do. The trace comes from the engine, which the element runs; nothing here computes.

/** An element before anything is loaded. */
export function initialComponent() {
  return {
    problem: null,
    tokens: null, // token names: { q, k }, or null for t1, t2, ...
    title: '', // the example's title: a lesson's or a JSON child's text, or a preset's message ({ id })
    lesson: null, // a lesson's notes by step key ("weights:0"), or null
    verdicts: {}, // step key -> the reader's checked answer ({ right, reason }), or { right: null } when only revealed
    loaded: 0, // how many problems were loaded whole (a source, the problem property): each redraws the inputs
    trace: null, // the trace of `problem`, or null when it has none
    error: null, // { message, keep }: keep, the steps stay drawn under it (a reader's edit)
    status: 'Loading the attention engine…',
    lang: 'en', // the language of the element's words (a catalogue's code)
    attributes: {}, // the display attributes' text as set (steps, inputs, editable, decimals, heads)
  };
}

/** A problem and what came with it (a preset, a link, a lesson, a JSON child), with its trace. */
export function loaded(state, { problem, tokens = null, title = '', lesson = null }, trace) {
  return { ...state, problem, tokens, title, lesson, verdicts: {}, loaded: state.loaded + 1, trace, error: null };
}

/** A problem set from script (the problem property): a lesson's notes and the token names belong to the old one. */
export function problemSet(state, problem, trace) {
  return { ...state, problem, tokens: null, lesson: null, loaded: state.loaded + 1, trace, error: null };
}

/** A problem that computed after the reader changed a number: the inputs as they are, the steps redrawn. */
export function edited(state, problem, trace) {
  return { ...state, problem, trace, error: null };
}

/**
 * Something failed: the message (English for the core's errors); `keep`, the steps stay (a bad edit:
 * the problem and trace are the last good ones); `said`, the core's message id and values.
 */
export function failed(state, message, keep = false, said = null) {
  return { ...state, error: { message, keep, ...said }, ...(keep ? {} : { trace: null }) };
}

/** What the element says while it loads. */
export const status = (state, text) => ({ ...state, status: text });

/** The element's words are now in `lang` (its translator loaded): every view redraws. */
export const languageSet = (state, lang) => (state.lang === lang ? state : { ...state, lang });

/** A display attribute's text (null: removed). */
export const attributeSet = (state, name, text) =>
  state.attributes[name] === text ? state : { ...state, attributes: { ...state.attributes, [name]: text } };

/** The reader answered the question of step `key` (or revealed its numbers). */
export const answered = (state, key, verdict) => ({ ...state, verdicts: { ...state.verdicts, [key]: verdict } });

/** `problem` with input `name`'s row r, column c set to `value` (a copy; a vector input is one row). */
export function withCell(problem, name, r, c, value) {
  const old = problem[name];
  const rows = (Array.isArray(old[0]) ? old : [old]).map((row, i) => (i === r ? row.map((v, j) => (j === c ? value : v)) : row));
  return { ...problem, [name]: Array.isArray(old[0]) ? rows : rows[0] };
}
