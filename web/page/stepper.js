// One step at a time: the step-through mode shows one step card with a sentence on what the step
// does and what to notice in these numbers (the package's narrateStep, from the trace), moved with
// Next / Previous or the arrow keys. ?present makes it the presenter view: large type, one step
// per screen, keyboard only. A teacher may replace a step's sentence and add a question that is
// asked before the step's numbers show (predict, then reveal); both are part of the page state
// (`lesson`), so they travel in the link. The problem stays in the hash; where you are is not.
import { narrateStep } from 'attention-explorer';
import { $, app } from './app.js';
import { flags } from './embed.js';
import { markPipeline } from './pipeline.js';
import { stepKey } from './steps.js';
import { escapeHtml } from './format.js';
import { scheduleHash } from './update.js';

const stepper = { on: false, index: 0, key: null };
/** Steps whose question was answered (revealed) since the page opened. */
const revealed = new Set();

/** The teacher's note of a step: { say, ask } (strings only, whatever a link held). */
function noteOf(key) {
  const lesson = app.state.lesson;
  const note = lesson && typeof lesson === 'object' && !Array.isArray(lesson) ? lesson[key] : null;
  const text = (v) => (typeof v === 'string' && v.trim() ? v.trim() : '');
  return { say: text(note?.say), ask: text(note?.ask) };
}

/** The steps as drawn (hidden ones left out), in order. */
const shownSteps = () => app.result?.steps ?? [];

/** Shows the current step's card alone, its place, and its sentence. */
export function syncStepper() {
  const cards = document.querySelectorAll('#step-list article.step');
  document.body.classList.toggle('stepping', stepper.on);
  $('stepper').hidden = !stepper.on;
  $('step-mode').hidden = stepper.on;
  const steps = shownSteps();
  if (!stepper.on || !steps.length) {
    for (const c of cards) c.classList.remove('is-current');
    markPipeline();
    return;
  }
  // Keep the same step across a redraw when it is still there (an edit, a renamed token).
  const kept = stepper.key ? steps.findIndex((s) => stepKey(s) === stepper.key) : -1;
  stepper.index = kept >= 0 ? kept : Math.min(stepper.index, steps.length - 1);
  const step = steps[stepper.index];
  stepper.key = stepKey(step);
  const note = noteOf(stepper.key);
  const predicting = Boolean(note.ask) && !revealed.has(stepper.key);
  for (const c of cards) {
    c.classList.toggle('is-current', c.dataset.key === stepper.key);
    c.classList.toggle('predicting', predicting && c.dataset.key === stepper.key);
  }
  const { trace, ctx } = app.result;
  const head = app.result.trace.meta.heads > 1 && step.head != null && step.head >= 0 ? `, head ${step.head + 1}` : '';
  $('stepper-pos').textContent = `Step ${stepper.index + 1} of ${steps.length}: ${step.title}${head}`;
  // While a question waits, the sentence (which would give the answer away) waits too.
  $('stepper-ask').hidden = !predicting;
  $('stepper-question').textContent = note.ask;
  $('stepper-text').hidden = predicting;
  // With steps hidden (an exercise's answers), a generated sentence could tell them ("80% of
  // its weight"): the step's formula stands in for it.
  const told = ctx.hiddenSteps.length ? `${step.title}: ${step.text}.` : narrateStep(trace, trace.steps.indexOf(step), { tokensQ: ctx.tokensQ, tokensK: ctx.tokensK });
  $('stepper-text').innerHTML = escapeHtml(note.say || told);
  if (document.activeElement !== $('teacher-say')) $('teacher-say').value = note.say;
  if (document.activeElement !== $('teacher-ask')) $('teacher-ask').value = note.ask;
  $('step-prev').disabled = stepper.index === 0;
  $('step-next').disabled = stepper.index === steps.length - 1 && !predicting;
  markPipeline();
}

/** Step-through on or off (the presenter view stays on). */
export function setStepping(on) {
  stepper.on = on || flags.present;
  syncStepper();
  if (stepper.on) $('lesson').scrollIntoView({ block: 'start' });
}

/** Shows the numbers of a step that asked first. */
function reveal() {
  revealed.add(stepper.key);
  syncStepper();
}

/** Next: a step still asking its question reveals first, then moves on. */
function next() {
  if (stepper.key && noteOf(stepper.key).ask && !revealed.has(stepper.key)) reveal();
  else go(stepper.index + 1);
}

/** The teacher's fields write the current step's note into the state (and so into the link). */
function writeNote() {
  const say = $('teacher-say').value;
  const ask = $('teacher-ask').value;
  const lesson = { ...(app.state.lesson && typeof app.state.lesson === 'object' ? app.state.lesson : {}) };
  if (say.trim() || ask.trim()) lesson[stepper.key] = { ...(say.trim() ? { say } : {}), ...(ask.trim() ? { ask } : {}) };
  else delete lesson[stepper.key];
  app.state.lesson = Object.keys(lesson).length ? lesson : null;
  revealed.add(stepper.key); // the teacher writing the question sees the numbers
  syncStepper();
  scheduleHash();
}

function go(index) {
  const steps = shownSteps();
  if (!steps.length) return;
  stepper.index = Math.max(0, Math.min(steps.length - 1, index));
  stepper.key = stepKey(steps[stepper.index]);
  syncStepper();
}

/** The diagram's nodes: in step-through, that step; otherwise scroll to its card. */
export function showStep(key) {
  if (stepper.on) {
    const i = shownSteps().findIndex((s) => stepKey(s) === key);
    if (i >= 0) go(i);
    return;
  }
  const card = document.querySelector(`#step-list article[data-key="${CSS.escape(key)}"]`);
  if (!card) return;
  card.scrollIntoView({ block: 'start' });
  const target = card.querySelector('td[tabindex="0"]') ?? card.querySelector('canvas') ?? card.querySelector('.fold');
  target?.focus({ preventScroll: true });
}

/** Keys that move: → / PageDown / Space (presenter) next, ← / PageUp back, Home, End; Esc leaves. */
function onKey(e) {
  if (!stepper.on || e.altKey || e.ctrlKey || e.metaKey) return;
  // Typing, moving in a table or a heatmap keeps its own arrow keys.
  if (e.target.closest?.('input, textarea, select, [contenteditable="true"], td[data-r], canvas')) return;
  const onButton = e.target.closest?.('button');
  const moves = { ArrowRight: 1, PageDown: 1, ArrowLeft: -1, PageUp: -1 };
  if (e.key in moves) { if (moves[e.key] > 0) next(); else go(stepper.index - 1); }
  else if (e.key === ' ' && flags.present && !onButton) { if (e.shiftKey) go(stepper.index - 1); else next(); }
  else if (e.key === 'Home') go(0);
  else if (e.key === 'End') go(shownSteps().length - 1);
  else if (e.key === 'Escape' && !flags.present) setStepping(false);
  else return;
  e.preventDefault();
}

export function bindStepper() {
  $('step-mode').addEventListener('click', () => { setStepping(true); $('step-next').focus(); });
  $('step-all').addEventListener('click', () => { setStepping(false); $('step-mode').focus(); });
  $('step-prev').addEventListener('click', () => go(stepper.index - 1));
  $('step-next').addEventListener('click', next);
  $('step-reveal').addEventListener('click', () => { reveal(); $('step-next').focus(); });
  $('teacher-say').addEventListener('input', writeNote);
  $('teacher-ask').addEventListener('input', writeNote);
  document.addEventListener('keydown', onKey);
  if (flags.present) {
    document.body.classList.add('present');
    $('step-all').hidden = true;
    stepper.on = true;
  }
}
