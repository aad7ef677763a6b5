// The loop, as subscriptions to the page store (store.js) that main.js mounts in this order: a
// whole new state re-read by the controls and editors; the state computed (state -> problem ->
// engine.run -> the store's result and errors); the results drawn from it; the effects (the "why"
// view in idle time, the status line, the link hash). Views change the state by dispatching
// actions (actions.js), never by calling this module. Holds no attention maths: every number
// shown comes from engine.run / engine.explain.
import { stateInputs } from 'attention-explorer/share';
import { $, afterFrame, app, drawWhenSeen, latestOnly, whenIdle, writeHtml } from './app.js';
import { resultParts, store } from './store.js';
import { computed } from './actions.js';
import { decimalsOf, tokenLists, traceCounts } from './state.js';
import { buildProblem, errorPlace, parse } from './problem.js';
import { editors, layoutEditors } from './inputs.js';
import { syncControls } from './controls.js';
import { markScrollables } from './scrollables.js';
import { renderWhyView } from './why.js';
import { renderSteps } from './steps.js';
import { addressHash, keepTeacherView, saveFrameHash, writeLink } from './link.js';
import { exerciseHiddenSteps, studentsHash } from './exercise.js';
import { flags } from './embed.js';
import { escapeHtml, readAs } from './format.js';

let hashTimer = 0;
const hashWrite = latestOnly();
let errorTimer = 0;

// The "why" view runs the problem twice more and sits below the steps: it is drawn after the frame
// that shows an update, once the browser is idle (issue 18: in the update it was a fifth of an
// edit at 16 tokens, and its rewritten table a large part of the frame's layout and paint). Up to
// 32 × 32 wherever the view is; beyond, only once it is on screen or near it (at 64 tokens,
// drawing it also forced the layout of the panel the browser was skipping). While a drawing is
// pending, #why is aria-busy. On the page's first drawing main.js draws a pending one before the
// page says it is ready (drawWhyLater).
const why = { cancel: null, whenSeen: false }; // cancel: the pending drawing's, while there is one

function drawWhy() {
  const el = $('why');
  if (!el) return;
  el.removeAttribute('aria-busy');
  renderWhyView();
  // Drawn after the update's own pass over the scrolling regions: its formula (typeset once KaTeX
  // is there) and tables may be new elements, which need their tab stops.
  markScrollables({ within: el });
}

function scheduleWhy(trace) {
  why.cancel?.();
  why.whenSeen = trace.meta.queries * trace.meta.keys > 1024;
  $('why')?.setAttribute('aria-busy', 'true');
  why.cancel = whenIdle(() => {
    why.cancel = null;
    if (why.whenSeen) drawWhenSeen($('why'), drawWhy);
    else drawWhy();
  }, 250);
}

/** The why view left for the browser's idle time, drawn now (main.js, before the page is ready). */
export function drawWhyLater() {
  if (!why.cancel || why.whenSeen) return;
  why.cancel();
  why.cancel = null;
  drawWhy();
}
/** The hash the page last wrote or read (a hashchange to it is the page's own). */
export const link = { hash: '' };

/** Ids of the steps not shown: hidden by the link (?hide=step:...) or by an exercise. */
function hiddenStepIds(state) {
  return [...(state.hide.steps ?? []), ...exerciseHiddenSteps(state, store.get().ui.revealed)];
}

/** What the step views need besides the trace: token names, decimals, what is hidden or folded. */
function stepContext(trace) {
  const { state } = app;
  const meta = trace.meta;
  const tokens = tokenLists(state, traceCounts(trace));
  return {
    meta,
    options: app.result?.problem?.options ?? {}, // the problem's, e.g. for the mask's components
    steps: trace.steps,
    layout: state.options.layout,
    scaleMode: state.options.scale,
    tokensQ: tokens.q,
    tokensK: tokens.k,
    decimals: decimalsOf(state),
    hiddenSteps: hiddenStepIds(state),
    collapsed: state.collapsed,
  };
}

/** Redraws the step cards and the trace's warnings from the last good result. */
function renderStepCards() {
  const list = $('step-list');
  // Keep the drill-down panel out of the list while it is redrawn.
  const drill = $('drill');
  if (drill.parentElement !== $('results')) $('results').appendChild(drill);
  const result = app.result;
  if (!result) { list.innerHTML = ''; return; }
  result.ctx = stepContext(result.trace);
  result.steps = renderSteps(list, result.trace, result.ctx);
  const warnings = result.trace.warnings ?? [];
  writeHtml($('warnings'), warnings.map((w) => `<p class="warning">⚠ ${escapeHtml(w)}</p>`).join(''));
}

function showErrors(errors) {
  for (const [name, ed] of editors) ed.setError(errors[name] ?? null);
  const opt = $('options-error');
  opt.hidden = !errors.options;
  opt.textContent = errors.options ?? '';
  const general = Object.entries(errors).filter(([k]) => !editors.has(k) && k !== 'options').map(([, v]) => v);
  const banner = $('run-error');
  const any = Object.keys(errors).length > 0;
  banner.hidden = !any;
  if (any) {
    const first = Object.entries(errors)[0];
    const where = general.length ? '' : first[0] === 'options' ? ' (see Options)' : ` (see ${first[0]} above)`;
    banner.innerHTML = `<strong>Not computed:</strong> ${escapeHtml(general[0] ?? first[1])}${where}.` +
      (app.result ? ' <span class="hint">Showing the last good result, dimmed.</span>' : '');
  }
}

/** What the problem is made of: a change to any of them computes the state again. */
function problemParts(page) {
  const { state } = page;
  return [state.mode, state.inputs, state.use, state.options, page.loaded];
}

/** Computes the current state into the store; on bad input keeps the last good result, dimmed. */
function update() {
  const { state } = app;
  const t0 = performance.mark('ae:update-start').startTime;
  const { problem, errors, keepMask } = buildProblem(state, (name) => editors.get(name)?.localError);
  let trace = null;
  if (problem) {
    try {
      // The last trace is replaced by this one: its matrices are refilled rather than new ones
      // made (at 1,024 tokens, making them and collecting the old ones was most of an edit).
      trace = app.engine.run(problem, { reuse: app.result?.trace });
    } catch (err) {
      errors[errorPlace(err, state)] = err.message;
    }
  }
  // Under each text box, the format its text was read as; grids follow text that parsed
  // (text-mode edits, pastes).
  const additive = state.options.mask === 'additive';
  for (const name of [...stateInputs(state), ...(additive ? ['mask'] : [])]) {
    const ed = editors.get(name);
    if (!ed) continue;
    const text = name === 'mask' ? state.options.additiveMask : state.inputs[name]?.text;
    // A text that parsed shows its shape even when the problem has an error (Q 3 × 3 against K 4 × 8).
    const r = text ? parse(text, name) : {};
    ed.showReadAs(r.matrix ? readAs(r.format, r.matrix) : '');
    if (name !== 'mask' && ed.mode === 'text' && r.matrix) ed.setMatrix(r.matrix);
  }
  const t1 = performance.now();
  store.dispatch(computed, { trace, problem, errors, keepMask });
  if (trace && document.activeElement !== $('tokens-n')) $('tokens-n').value = trace.meta.queries;
  // While someone types into a grid cell ("-", "1e"...), the half-typed number is not an error
  // yet: its message (and the dimming) wait for a short pause in typing.
  clearTimeout(errorTimer);
  const showProblems = () => {
    showErrors(errors);
    $('results').classList.toggle('stale', !trace && Boolean(app.result));
    $('why').classList.toggle('stale', !trace && Boolean(app.result));
    $('lesson').classList.toggle('stale', !trace && Boolean(app.result));
    if (!trace) $('status').textContent = 'Input has a problem (see the message next to it); showing the last good result.';
  };
  const typingIn = document.activeElement?.matches?.('input.cell') ? document.activeElement.closest('.editor')?.dataset.input : null;
  const names = Object.keys(errors);
  if (!trace && app.result && typingIn && names.length === 1 && names[0] === typingIn) errorTimer = setTimeout(showProblems, 700);
  else showProblems();
  if (trace) {
    const meta = trace.meta;
    // One line on a phone (the step count and precision only where there is room); the timings
    // on demand (the status bar's "timings" button, or the title), not as permanent telemetry.
    const hidden = hiddenStepIds(state);
    const shown = trace.steps.filter((s) => !hidden.includes(s.id)).length;
    showStatusLine(`<span class="wide">${shown} step${shown === 1 ? '' : 's'} for </span>${meta.queries} ${meta.queries === 1 ? 'query' : 'queries'} × ${meta.keys} keys, ` +
      `d<sub>k</sub> = ${meta.d_k}, ${meta.heads} head${meta.heads > 1 ? 's' : ''}<span class="wide">, ${meta.precision}</span>`);
  }
  afterUpdateFrame(trace ? { t0, t1 } : null);
}

let statusLine = '';
/** The status bar's line, rewritten only when it changed (a number-only edit keeps it, and its layout). */
function showStatusLine(line) {
  const status = $('status');
  const timings = status.querySelector('.timings'); // gone when an error message replaced the line
  if (line === statusLine && timings) return;
  statusLine = line;
  status.innerHTML = `${line}<span class="timings">${timings?.innerHTML ?? ''}</span>`;
}

let frame = null; // the pass after the next frame, while one is pending: { times }
/**
 * Nothing in an update waits for layout (issue 18: the page is laid out once, in the frame). The
 * scrolling regions are marked at the start of the frame that shows it: what they read is the
 * layout that frame makes anyway, and a region's new cue is drawn in that same frame. Once that
 * frame was presented, the timings say how long computing took and drawing.
 */
function afterUpdateFrame(times) {
  if (frame) { // several updates before one frame: one pass, the last good one's times
    frame.times = times ?? frame.times;
    return;
  }
  frame = { times };
  requestAnimationFrame(() => markScrollables());
  afterFrame(() => {
    const t2 = performance.now();
    const { times } = frame;
    frame = null;
    if (!times) return;
    const { t0, t1 } = times;
    const status = $('status');
    const timings = `computed in ${(t1 - t0).toFixed(1)} ms, drawn in ${(t2 - t1).toFixed(1)} ms`;
    const span = status.querySelector('.timings');
    if (span) span.textContent = `: ${timings}`;
    status.title = timings;
    status.dataset.ms = String(t2 - t0);
  });
}

/**
 * Writes the state into the URL hash after a short pause: its link, or no hash at all for the
 * untouched default (link.js, addressHash).
 */
function scheduleHash() {
  clearTimeout(hashTimer);
  hashTimer = setTimeout(async () => {
    const current = hashWrite();
    const h = await writeLink(app.state);
    // A teacher's exercise: the address shows the students' link, the teacher's view is kept in
    // this tab (link.js, keepTeacherView). No students' link while the problem has an error: the
    // address stays as it was.
    const teacher = app.state.exercise?.teacher && !flags.embed;
    let shown;
    if (teacher) {
      if (!app.result?.trace) return;
      shown = await studentsHash();
      keepTeacherView(shown, h);
    } else shown = await addressHash(h);
    if (!current()) return; // a later state's link is being written (a large one can take longer)
    if (shown !== link.hash) {
      link.hash = shown;
      history.replaceState(null, '', shown ? `#${shown}` : location.pathname + location.search);
      saveFrameHash(h);
    }
  }, 250);
}

/** A whole new state (a link, an example, an exercise): every control and editor shows it. */
function applyState() {
  syncControls();
  layoutEditors();
  $('extras').replaceChildren();
}

/**
 * The loop's subscriptions, in the order they must run within a redraw (main.js mounts the views
 * drawn from the result between `mountLoop` and `mountEffects`): a new state's controls and
 * editors before it is computed, the computation before the step cards drawn from it.
 */
export function mountLoop() {
  store.subscribe((page) => page.loaded, applyState);
  store.subscribe(problemParts, update);
  store.subscribe(resultParts, renderStepCards);
}

/** The effects of a new result and a new state: the "why" view, the link hash. */
export function mountEffects() {
  // The why view is drawn from the result with the steps' names and decimals.
  store.subscribe(resultParts, ([result]) => { if (result) scheduleWhy(result.trace); });
  store.subscribe((page) => page.state, scheduleHash);
  // Last: a new result was computed and everything drawn from it (npm run bench:page reads it).
  store.subscribe((page) => page.result, () => performance.mark('ae:update-end'));
}
