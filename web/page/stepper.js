// One step at a time: the step-through mode shows one step card with a sentence on what the step
// does and what to notice in these numbers (the package's narrateStep, from the trace), moved with
// Next / Previous or the arrow keys. ?present makes it the presenter view: large type, one step
// per screen, keyboard only. The problem stays in the hash; where you are is not part of it.
import { narrateStep } from 'attention-explorer';
import { $, app } from './app.js';
import { flags } from './embed.js';
import { markPipeline } from './pipeline.js';
import { stepKey } from './steps.js';
import { escapeHtml } from './format.js';

const stepper = { on: false, index: 0, key: null };

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
  for (const c of cards) c.classList.toggle('is-current', c.dataset.key === stepper.key);
  const { trace, ctx } = app.result;
  const head = app.result.trace.meta.heads > 1 && step.head != null && step.head >= 0 ? `, head ${step.head + 1}` : '';
  $('stepper-pos').textContent = `Step ${stepper.index + 1} of ${steps.length}: ${step.title}${head}`;
  $('stepper-text').innerHTML = escapeHtml(narrateStep(trace, trace.steps.indexOf(step), { tokensQ: ctx.tokensQ, tokensK: ctx.tokensK }));
  $('step-prev').disabled = stepper.index === 0;
  $('step-next').disabled = stepper.index === steps.length - 1;
  markPipeline();
}

/** Step-through on or off (the presenter view stays on). */
export function setStepping(on) {
  stepper.on = on || flags.present;
  syncStepper();
  if (stepper.on) $('lesson').scrollIntoView({ block: 'start' });
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
  if (e.key in moves) go(stepper.index + moves[e.key]);
  else if (e.key === ' ' && flags.present && !onButton) go(stepper.index + (e.shiftKey ? -1 : 1));
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
  $('step-next').addEventListener('click', () => go(stepper.index + 1));
  document.addEventListener('keydown', onKey);
  if (flags.present) {
    document.body.classList.add('present');
    $('step-all').hidden = true;
    stepper.on = true;
  }
}
