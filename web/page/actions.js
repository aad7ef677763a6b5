// The explorer page's state changes: pure functions (page, ...) -> page over the page store's value
// (store.js), tested in Node (tests/js/page-actions.test.mjs). Each copies what it changes, so a
// view that subscribed to a part redraws exactly when that part is new. The page state inside is
// frozen: a change written into it in place (which no view would see) throws instead.
import { defaultState } from './state.js';

/** Freezes a plain state object and everything in it (arrays and objects; strings are immutable). */
function freeze(value) {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) freeze(v);
  }
  return value;
}

/**
 * The walkthrough open in "In practice" (`id`, null for none) and where in it (`index`), with its
 * settings: the softmax's typed row (null: the problem's first row of scores), the switch and the
 * precision, FlashAttention's blocks, the recurrent walk's chunk (null: token by token), dO as
 * typed (null: all ones).
 */
const WALK = freeze({
  id: null,
  index: 0,
  row: null,
  subtractMax: true,
  precision: null,
  blocks: { block_q: 2, block_k: 2 },
  chunk: null,
  dO: null,
});

/**
 * The page store's value:
 *  - state:  the serialisable page state (state.js): what a link holds;
 *  - loaded: how many whole states were loaded (a link, an example, an exercise): the controls and
 *            editors re-read the state when it changes, not at every edit;
 *  - ui:     what is on screen but not in the link: the exercise's answers shown, the teacher
 *            choosing cells, whether the open cell takes the focus when it is drawn, the stepper
 *            (stepper.js: on, its step, the lesson's questions revealed and answers checked) and the
 *            walkthrough open (practice.js: WALK);
 *  - result: the last problem that computed, { trace, problem } (kept, dimmed, while the input has
 *            an error), or null;
 *  - errors: where each problem of the current state is shown: an input's name, "mask", "options"
 *            or "general" -> message.
 */
export function initialPage(state = defaultState()) {
  return {
    state: freeze(state),
    loaded: 0,
    ui: { revealed: false, choosing: false, focusOpen: false, stepper: STEPPER, walk: WALK },
    result: null,
    errors: {},
  };
}

/** `page` with its state changed by `fn(copy)`, a shallow copy of the state the action fills in. */
function withState(page, fn) {
  const state = { ...page.state };
  fn(state);
  return { ...page, state: freeze(state) };
}

/** The stepper before it is used: off, at the first step, nothing revealed or answered (verdicts: step key -> { right, reason }). */
const STEPPER = Object.freeze({ on: false, index: 0, key: null, revealed: Object.freeze([]), verdicts: Object.freeze({}) });

/** A whole new state (a link, an example, an exercise, a lesson): drawn afresh, no trace reused. */
export function load(page, state) {
  return { ...page, state: freeze(state), loaded: page.loaded + 1, result: null, errors: {} };
}

/** An input's text typed or pasted: the example is now edited, its numpy recipe no longer draws it. */
export function editInput(page, name, { text, numpy }) {
  return withState(page, (s) => {
    s.inputs = { ...s.inputs, [name]: typeof numpy === 'string' ? { text, numpy } : { text } };
    s.recipe = '';
    s.edited = true;
  });
}

/**
 * Several inputs at once (`texts`: name -> text): a token count, KV heads or layout change that
 * rewrote them. `recipe`: whether the recipe still draws them (a transposition keeps the numbers).
 */
export function setInputs(page, texts, { keepRecipe = false } = {}) {
  if (!Object.keys(texts).length) return page;
  return withState(page, (s) => {
    s.inputs = { ...s.inputs, ...Object.fromEntries(Object.entries(texts).map(([n, text]) => [n, { text }])) };
    if (!keepRecipe) s.recipe = '';
    s.edited = true;
  });
}

/** Inputs that just appeared (a mode or an optional input switched on) filled with starting values. */
export function fillInputs(page, texts) {
  const missing = Object.entries(texts).filter(([n]) => !page.state.inputs[n]);
  if (!missing.length) return page;
  return withState(page, (s) => {
    s.inputs = { ...s.inputs, ...Object.fromEntries(missing.map(([n, text]) => [n, { text }])) };
  });
}

/** Inputs that no longer fit (a gate of another width drops its bias): removed. */
export function removeInputs(page, names) {
  if (!names.some((n) => page.state.inputs[n])) return page;
  return withState(page, (s) => {
    const inputs = { ...s.inputs };
    for (const n of names) delete inputs[n];
    s.inputs = inputs;
  });
}

/**
 * Options changed (`patch`: key -> value; undefined removes the key, so links of problems without
 * it stay as they were) and `use` flags (name -> true, false, or undefined to remove). `edit`:
 * whether this is the reader's edit (not a starting value the page filled in).
 */
export function setOptions(page, patch, use = {}, { edit = true } = {}) {
  const drop = (o, p) => {
    const out = { ...o };
    for (const [k, v] of Object.entries(p)) {
      if (v === undefined) delete out[k];
      else out[k] = v;
    }
    return out;
  };
  return withState(page, (s) => {
    s.options = drop(s.options, patch);
    if (Object.keys(use).length) s.use = drop(s.use, use);
    if (edit) s.edited = true;
  });
}

/** Another mode: its own inputs, so no recipe; cross-attention starts with the queries' token names. */
export function setMode(page, mode) {
  return withState(page, (s) => {
    s.mode = mode;
    s.recipe = '';
    s.edited = true;
    if (mode !== 'self' && !s.tokens.k) s.tokens = { ...s.tokens, k: s.tokens.q };
  });
}

/** The queries' (q) or keys' (k) token names, as typed. */
export function setTokens(page, key, text) {
  return withState(page, (s) => {
    s.tokens = { ...s.tokens, [key]: text };
  });
}

export function setDecimals(page, decimals) {
  return withState(page, (s) => {
    s.decimals = decimals;
  });
}

/** "(your own: keep the current inputs)": no example named any more. */
export function clearPreset(page) {
  return page.state.preset === null
    ? page
    : withState(page, (s) => {
        s.preset = null;
      });
}

/** Opens a cell ({ step, head, row, col }) or closes it (null); `focus`: the cell takes the focus. */
export function openCell(page, open, focus = false) {
  const next = withState(page, (s) => {
    s.open = open;
  });
  return { ...next, ui: { ...page.ui, focusOpen: focus } };
}

/** A keep-mask cell clicked: that key hidden from that query, or shown again. */
export function toggleKeep(page, row, col) {
  const keep = page.state.options.keepMask;
  if (!keep?.[row] || keep[row][col] === undefined) return page;
  const rows = keep.map((r, i) => (i === row ? r.map((v, j) => (j === col ? (v ? 0 : 1) : v)) : r));
  return setOptions(page, { keepMask: rows });
}

/** Folds a step card away, or unfolds it (`key`: "scores:0"). */
export function toggleFolded(page, key) {
  return withState(page, (s) => {
    s.collapsed = s.collapsed.includes(key) ? s.collapsed.filter((k) => k !== key) : [...s.collapsed, key];
  });
}

/** A teacher's notes, { "weights:0": { say?, ask?, answer? } }, or null for none. */
export function setLesson(page, lesson) {
  return withState(page, (s) => {
    s.lesson = lesson && Object.keys(lesson).length ? lesson : null;
  });
}

/** The lesson's title, as its teacher wrote it ('' for none). */
export function setTitle(page, title) {
  return withState(page, (s) => {
    s.title = title.trim();
  });
}

/** The exercise's answers shown or hidden (the student's "Show answers"). */
export function setRevealed(page, revealed) {
  return { ...page, ui: { ...page.ui, revealed } };
}

/** The teacher choosing which numbers of the exercise to hide, or done. */
export function setChoosing(page, choosing) {
  return { ...page, ui: { ...page.ui, choosing } };
}

const withStepper = (page, patch) => ({ ...page, ui: { ...page.ui, stepper: { ...page.ui.stepper, ...patch } } });

/** Step-through on or off. */
export const stepThrough = (page, on) => withStepper(page, { on });

/** The stepper shows step `index` of those drawn, whose key is `key` (kept across a redraw that moves it). */
export const stepTo = (page, index, key) => withStepper(page, { index, key });

/** A step's question answered or its numbers revealed; `verdict`, the checked answer ({ right, reason }), if any. */
export function revealStep(page, key, verdict = null) {
  const { revealed, verdicts } = page.ui.stepper;
  return withStepper(page, {
    revealed: revealed.includes(key) ? revealed : [...revealed, key],
    ...(verdict ? { verdicts: { ...verdicts, [key]: verdict } } : {}),
  });
}

/** A new lesson was opened: back to its first step, no answers given. */
export const restartLesson = (page) => withStepper(page, { index: 0, key: null, revealed: STEPPER.revealed, verdicts: STEPPER.verdicts });

/** Which of the drawn steps (`keys`) the stepper shows: its step while that is drawn, else the nearest place. */
export function stepperIndex(stepper, keys) {
  const kept = stepper.key ? keys.indexOf(stepper.key) : -1;
  return kept >= 0 ? kept : Math.min(stepper.index, keys.length - 1);
}

/**
 * What computing the state gave: the trace and problem (kept as the last good result) or none, the
 * errors, and the keep-mask sized to the scores (null: unchanged).
 */
export function computed(page, { trace, problem, errors, keepMask = null }) {
  let next = { ...page, errors, result: trace ? { trace, problem } : page.result };
  const old = page.state.options.keepMask;
  if (keepMask && JSON.stringify(keepMask) !== JSON.stringify(old)) {
    next = withState(next, (s) => {
      s.options = { ...s.options, keepMask };
    });
  }
  return next;
}

/** Walkthrough `id` opened, from its start (null: the panel closed, where it was kept). */
export function chooseWalk(page, id) {
  return setWalk(page, id ? { id, index: 0 } : { id: null });
}

/** The walkthrough at position `index`. */
export function walkTo(page, index) {
  return page.ui.walk.index === index ? page : setWalk(page, { index });
}

/** The walkthrough's settings changed (`patch`; with index: 0 it starts over). */
export function setWalk(page, patch) {
  return { ...page, ui: { ...page.ui, walk: freeze({ ...page.ui.walk, ...patch }) } };
}
