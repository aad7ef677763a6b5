// The loop, as subscriptions to the page store (store.js) that main.js mounts between the views:
// the state computed (state -> problem -> engine.run -> the store's result and errors, the status
// line), after controls.js re-read a whole new state and before the views draw the result (cards.js
// the step cards); the effects (the link hash, the mark that a result was drawn). Views change the
// state by dispatching actions (actions.js), never by calling this module. Holds no attention maths: every number
// shown comes from engine.run / engine.explain.
import { stateInputs } from 'attention-explorer/share';
import { $, afterFrame, app, latestOnly } from './app.js';
import { hiddenStepIds, store } from './store.js';
import { computed } from './actions.js';
import { buildProblem, errorPlace, parse } from './problem.js';
import { editors } from './editors.js';
import { markScrollables } from './scrollables.js';
import { addressHash, keepTeacherView, saveFrameHash, studentsHash, writeLink } from './link.js';
import { flags } from './embed.js';
import { readAs } from './format.js';
import { html, setHtml } from 'attention-explorer/html';
import { rich, t } from './language.js';
import { errorWords } from 'attention-explorer/i18n';

let hashTimer = 0;
const hashWrite = latestOnly();
let errorTimer = 0;

/** The hash the page last wrote or read (a hashchange to it is the page's own). */
export const link = { hash: '' };

function showErrors(errors) {
  for (const [name, ed] of editors) ed.setError(errors[name] ?? null);
  const opt = $('options-error');
  opt.hidden = !errors.options;
  opt.textContent = errors.options ?? '';
  const general = Object.entries(errors)
    .filter(([k]) => !editors.has(k) && k !== 'options')
    .map(([, v]) => v);
  const banner = $('run-error');
  const any = Object.keys(errors).length > 0;
  banner.hidden = !any;
  if (any) {
    const first = Object.entries(errors)[0];
    const where = general.length ? 'none' : first[0];
    setHtml(
      banner,
      html`${rich('explorer.error.notComputed', { message: general[0] ?? first[1], where })}${app.result && html` <span class="hint">${t('explorer.error.dimmed')}</span>`}`,
    );
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
      errors[errorPlace(err, state)] = errorWords(err, t);
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
    if (!trace) $('status').textContent = t('explorer.status.inputProblem');
  };
  const typingIn = document.activeElement?.matches?.('input.cell') ? document.activeElement.closest('.editor')?.dataset.input : null;
  const names = Object.keys(errors);
  if (!trace && app.result && typingIn && names.length === 1 && names[0] === typingIn) errorTimer = setTimeout(showProblems, 700);
  else showProblems();
  if (trace) {
    const meta = trace.meta;
    // One line on a phone (the step count and precision only where there is room); the timings
    // on demand (the status bar's "timings" button, or the title), not as permanent telemetry.
    const hidden = hiddenStepIds(store.get());
    const shown = trace.steps.filter((s) => !hidden.includes(s.id)).length;
    showStatusLine(
      html`${rich('explorer.status.line', {
        stepCount: shown,
        steps: String(shown),
        queryCount: meta.queries,
        queries: String(meta.queries),
        keys: String(meta.keys),
        dk: String(meta.d_k),
        headCount: meta.heads,
        heads: String(meta.heads),
        precision: meta.precision,
        wide: (/** @type {unknown[]} */ chunks) => html`<span class="wide">${chunks}</span>`,
      })}`,
    );
  }
  afterUpdateFrame(trace ? { t0, t1 } : null);
}

let statusLine = '';
/** The status bar's line, rewritten only when it changed (a number-only edit keeps it, and its layout). */
function showStatusLine(line) {
  const status = $('status');
  const timings = status.querySelector('.timings'); // gone when an error message replaced the line
  if (String(line) === statusLine && timings) return;
  statusLine = String(line);
  // The timings' nodes move into the new line.
  const kept = [...(timings?.childNodes ?? [])];
  setHtml(status, html`${line}<span class="timings"></span>`);
  status.querySelector('.timings').append(...kept);
}

let frame = null; // the pass after the next frame, while one is pending: { times }
/**
 * Nothing in an update waits for layout (issue 18: the page is laid out once, in the frame). The
 * scrolling regions are marked at the start of the frame that shows it: what they read is the
 * layout that frame makes anyway, and a region's new cue is drawn in that same frame. Once that
 * frame was presented, the timings say how long computing took and drawing.
 */
function afterUpdateFrame(times) {
  if (frame) {
    // several updates before one frame: one pass, the last good one's times
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
    const timings = t('explorer.status.timings', { computed: (t1 - t0).toFixed(1), drawn: (t2 - t1).toFixed(1) });
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

/**
 * The loop's subscriptions, in the order they must run within a redraw (main.js mounts the views
 * drawn from the result between `mountLoop` and `mountEffects`): a new state's controls and
 * editors before it is computed, the computation before the step cards drawn from it.
 */
export function mountLoop() {
  store.subscribe(problemParts, update);
}

/** The effects of a new state: the link hash, the mark that a result was drawn. */
export function mountEffects() {
  store.subscribe((page) => page.state, scheduleHash);
  // Last: a new result was computed and everything drawn from it (npm run bench:page reads it).
  store.subscribe(
    (page) => page.result,
    () => performance.mark('ae:update-end'),
  );
}
