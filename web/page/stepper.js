// One step at a time: the step-through mode shows one step card with a sentence on what the step
// does and what to notice in these numbers (the package's narrateStep, from the trace), moved with
// Next / Previous or the arrow keys. ?present makes it the presenter view: large type, one step
// per screen, keyboard only. A teacher may replace a step's sentence and add a question that is
// asked before the step's numbers show (predict, then reveal), with an answer the page checks
// from the trace (the key with the most weight in a row, a number within a tolerance) or free
// text shown on reveal; all of it is the page state's `lesson`, so it travels in the link and in
// a lesson file (lesson-file.js). The problem stays in the hash; where you are is not.
import { narrateStep } from 'attention-explorer';
import { t } from './language.js';
import { stepFormula } from 'attention-explorer/i18n';
import { checkAnswer, lessonTraceError, usableAnswer } from 'attention-explorer/share';
import { $, app } from './app.js';
import { flags } from './embed.js';
import { markPipeline } from './pipeline.js';
import { stepKey } from './steps.js';
import { quoteToken } from './format.js';
import { html, setHtml } from 'attention-explorer/html';
import { resultParts, store } from './store.js';
import { restartLesson as restart, revealStep, setLesson, stepThrough, stepTo, stepperIndex } from './actions.js';

// Whether it is on, its step, the questions revealed and the answers checked are the store's
// (ui.stepper, actions.js); this module draws them and dispatches.
const stepperState = () => store.get().ui.stepper;
/** The step key the answer form was drawn for (what the DOM shows: kept while the student types). */
let formFor = null;

/**
 * The teacher's note of a step: { say, ask, answer, written } (strings, the answer the page can
 * check here, and the answer as written, whatever a link held).
 */
function noteOf(key) {
  const lesson = app.state.lesson;
  const note = lesson && typeof lesson === 'object' && !Array.isArray(lesson) ? lesson[key] : null;
  const text = (v) => (typeof v === 'string' && v.trim() ? v.trim() : '');
  const ask = text(note?.ask);
  // A link's answer is used only if it fits this problem (a row of the step, say); else Reveal alone.
  const answer = ask ? usableAnswer(note?.answer) : null;
  const fits = answer && app.result && !lessonTraceError({ [key]: { answer } }, app.result.trace);
  return { say: text(note?.say), ask, answer: fits ? answer : null, written: answer };
}

/** A new lesson was opened: back to its first step, no answers given. */
/**
 * The class's view of a lesson (opened from its link or ?lesson=URL): "Write this step for your
 * class" is not drawn, since it holds the teacher's answers (a free-text answer in plain words).
 * A teacher edits a lesson from its file ("Open lesson…") or the page before sharing.
 */
export function setClassView() {
  $('teacher').open = false;
  $('teacher').hidden = true;
}

export function restartLesson() {
  store.dispatch(restart);
  formFor = null;
}

/** The steps as drawn (hidden ones left out), in order. */
const shownSteps = () => app.result?.steps ?? [];

/** The step shown: its index among those drawn and its key (null while none is drawn). */
function current() {
  const steps = shownSteps();
  if (!steps.length) return { index: 0, key: null };
  const index = stepperIndex(stepperState(), steps.map(stepKey));
  return { index, key: stepKey(steps[index]) };
}

/** Shows the current step's card alone, its place, and its sentence. */
export function syncStepper() {
  const cards = document.querySelectorAll('#step-list article.step');
  const stepper = stepperState();
  document.body.classList.toggle('stepping', stepper.on);
  $('stepper').hidden = !stepper.on;
  $('step-mode').hidden = stepper.on;
  const steps = shownSteps();
  if (!stepper.on || !steps.length) {
    for (const c of cards) c.classList.remove('is-current', 'is-input', 'predicting');
    markPipeline();
    return;
  }
  // The same step across a redraw when it is still there (an edit, a renamed token); else the
  // nearest, which becomes the stepper's step (one more redraw, which changes nothing on screen).
  const { index, key } = current();
  if (index !== stepper.index || key !== stepper.key) store.dispatch(stepTo, index, key);
  const step = steps[index];
  const revealed = stepper.revealed;
  const note = noteOf(key);
  const predicting = Boolean(note.ask) && !revealed.includes(key);
  const { trace, ctx } = app.result;
  // The steps this one reads stay beside it (the scores beside the weights), so their numbers can
  // be compared; one still asking its question keeps its numbers hidden there too.
  const inputs = new Set(step.inputs.map((j) => stepKey(trace.steps[j])));
  for (const c of cards) {
    const here = c.dataset.key;
    c.classList.toggle('is-current', here === key);
    c.classList.toggle('is-input', inputs.has(here));
    const asks = here === key ? predicting : inputs.has(here) && Boolean(noteOf(here).ask) && !revealed.includes(here);
    c.classList.toggle('predicting', asks);
  }
  const title = t(step.title_id);
  const where = { n: index + 1, count: steps.length, title };
  const headed = app.result.trace.meta.heads > 1 && step.head != null && step.head >= 0;
  $('stepper-pos').textContent = headed
    ? t('explorer.stepper.positionHead', { ...where, head: step.head + 1 })
    : t('explorer.stepper.position', where);
  // While a question waits, the sentence (which would give the answer away) waits too.
  $('stepper-ask').hidden = !predicting;
  $('stepper-question').textContent = note.ask;
  if (predicting) showAnswerForm(note.answer, ctx);
  const verdict = stepper.verdicts[key];
  $('stepper-verdict').hidden = predicting || !verdict;
  $('stepper-verdict').textContent = verdict?.reason ?? '';
  $('stepper-verdict').className = `stepper-verdict ${verdict?.right === true ? 'right' : verdict?.right === false ? 'wrong' : ''}`;
  $('stepper-text').hidden = predicting;
  // With steps hidden (an exercise's answers), a generated sentence could tell them ("80% of
  // its weight"): the step's formula stands in for it.
  const told = ctx.hiddenSteps.length
    ? t('explorer.stepper.formula', { title, formula: stepFormula(step, t).text })
    : narrateStep(trace, trace.steps.indexOf(step), { tokensQ: ctx.tokensQ, tokensK: ctx.tokensK, options: ctx.options }, t);
  $('stepper-text').textContent = note.say || told;
  if (document.activeElement !== $('teacher-say')) $('teacher-say').value = note.say;
  if (document.activeElement !== $('teacher-ask')) $('teacher-ask').value = note.ask;
  if (!$('teacher').contains(document.activeElement)) fillTeacherAnswer(note.written);
  showTeacherFields();
  $('step-prev').disabled = index === 0;
  $('step-next').disabled = index === steps.length - 1 && !predicting;
  markPipeline();
}

/** Step-through on or off (the presenter view stays on). */
export function setStepping(on) {
  store.dispatch(stepThrough, on || flags.present);
  store.flush(); // drawn before the scroll
  if (stepperState().on) $('lesson').scrollIntoView({ block: 'start' });
}

/** Shows the numbers of a step that asked first; `verdict`, the student's checked answer. */
function reveal(verdict = null) {
  store.dispatch(revealStep, current().key, verdict);
  store.flush(); // drawn before the caller moves the focus (Next may be disabled now)
  keepInView();
}

/**
 * After a move: the step's numbers on screen with its sentence (Next is fixed at the bottom). On a
 * screen too short for the diagram, the sentence and the numbers, the page scrolls to the sentence.
 */
function keepInView() {
  requestAnimationFrame(() => {
    const card = document.querySelector('#step-list article.step.is-current');
    const numbers = card?.querySelector('td[data-r], .heatmap canvas') ?? card;
    if (!numbers) return;
    const nav = $('step-next').getBoundingClientRect();
    const r = numbers.getBoundingClientRect();
    const bottom = Math.min(window.innerHeight, nav.top > window.innerHeight / 2 ? nav.top : window.innerHeight);
    // At least the first rows of numbers above Next.
    if (r.top >= 0 && r.top + 2.5 * r.height < bottom) return;
    $('stepper').scrollIntoView({ block: 'start' });
  });
}

/** The student's answer form for a question: keys to pick from, a number, or free text. */
function showAnswerForm(answer, ctx) {
  $('stepper-answer').hidden = !answer;
  $('step-reveal').classList.toggle('primary', !answer);
  const { key } = current();
  if (!answer || formFor === key) return;
  formFor = key;
  $('answer-keys').hidden = answer.kind !== 'key';
  $('answer-number-wrap').hidden = answer.kind !== 'number';
  $('answer-text-wrap').hidden = answer.kind !== 'text';
  $('answer-number').value = '';
  $('answer-text').value = '';
  $('step-check').textContent = t(answer.kind === 'text' ? 'explorer.stepper.showAnswer' : 'explorer.step-check');
  if (answer.kind === 'key') {
    const query = ctx.tokensQ[answer.row - 1];
    $('answer-keys-legend').textContent = t('explorer.stepper.whichKey', {
      query: query === undefined ? t('explorer.stepper.row', { row: String(answer.row) }) : quoteToken(query),
    });
    $('answer-key-list').replaceChildren(
      ...ctx.tokensK.map((name, j) => {
        const label = document.createElement('label');
        setHtml(label, html`<input type="radio" name="answer-key" value="${j}"> <span></span>`);
        label.querySelector('span').textContent = name;
        return label;
      }),
    );
  }
}

/** Checks the student's answer against the trace, then reveals the numbers with the reason. */
function checkStudent(e) {
  e.preventDefault();
  const { key } = current();
  const { answer } = noteOf(key);
  if (!answer) return;
  const { trace, ctx } = app.result;
  let response = null;
  if (answer.kind === 'key') {
    const picked = document.querySelector('#answer-key-list input:checked');
    if (!picked) {
      $('answer-key-list').querySelector('input')?.focus();
      return;
    }
    response = Number(picked.value);
  } else if (answer.kind === 'number') {
    response = $('answer-number').value.trim().replace(/^−/, '-');
    // Not a number yet: say so at the field, and keep the numbers hidden.
    $('answer-number').setCustomValidity(response && Number.isFinite(Number(response)) ? '' : t('explorer.stepper.typeNumber'));
    if (!$('answer-number').reportValidity()) return;
  }
  const verdict = checkAnswer(trace, key, answer, response, { tokensQ: ctx.tokensQ, tokensK: ctx.tokensK, decimals: ctx.decimals, t });
  if (answer.kind === 'text') {
    const theirs = $('answer-text').value.trim();
    verdict.reason = t('explorer.stepper.theAnswer', { reason: verdict.reason, said: theirs ? 'yes' : 'no', theirs });
  }
  formFor = null;
  reveal(verdict);
  $('step-next').focus();
}

const TEACHER_FIELDS = { key: ['row'], number: ['row', 'col', 'tol'], text: ['text'] };

/** The teacher's answer fields show what the chosen kind needs. */
function showTeacherFields() {
  const kind = $('teacher-kind').value;
  $('teacher-kind').disabled = !$('teacher-ask').value.trim();
  for (const f of ['row', 'col', 'tol', 'text']) $(`teacher-${f}-wrap`).hidden = !(TEACHER_FIELDS[kind] ?? []).includes(f);
}

function fillTeacherAnswer(answer) {
  $('teacher-kind').value = answer?.kind ?? '';
  if (answer?.row) $('teacher-row').value = answer.row;
  if (answer?.col) $('teacher-col').value = answer.col;
  if (answer?.tolerance !== undefined) $('teacher-tol').value = answer.tolerance;
  $('teacher-text').value = answer?.text ?? '';
}

/** The answer the teacher's fields describe, or undefined (none, or a field not yet a number). */
function teacherAnswer() {
  const kind = $('teacher-kind').value;
  const whole = (id) => Math.max(1, Math.round(Number($(id).value) || 1));
  if (kind === 'key') return { kind, row: whole('teacher-row') };
  if (kind === 'number') {
    const tolerance = Number($('teacher-tol').value);
    return {
      kind,
      row: whole('teacher-row'),
      col: whole('teacher-col'),
      tolerance: Number.isFinite(tolerance) && tolerance >= 0 ? tolerance : 0,
    };
  }
  if (kind === 'text') return { kind, text: $('teacher-text').value };
  return undefined;
}

/** Next: a step still asking its question reveals first, then moves on. */
function next() {
  const { index, key } = current();
  if (key && noteOf(key).ask && !stepperState().revealed.includes(key)) reveal();
  else go(index + 1);
}

/** The teacher's fields write the current step's note into the state (and so into the link). */
function writeNote() {
  const say = $('teacher-say').value;
  const ask = $('teacher-ask').value;
  const answer = ask.trim() ? teacherAnswer() : undefined;
  const lesson = { ...(app.state.lesson && typeof app.state.lesson === 'object' ? app.state.lesson : {}) };
  const { key } = current();
  if (say.trim() || ask.trim())
    lesson[key] = { ...(say.trim() ? { say } : {}), ...(ask.trim() ? { ask } : {}), ...(answer ? { answer } : {}) };
  else delete lesson[key];
  store.dispatch(setLesson, lesson);
  store.dispatch(revealStep, key); // the teacher writing the question sees the numbers
  store.flush();
}

function go(index) {
  const steps = shownSteps();
  if (!steps.length) return;
  const at = Math.max(0, Math.min(steps.length - 1, index));
  store.dispatch(stepTo, at, stepKey(steps[at]));
  store.flush();
  keepInView();
}

/** The diagram's nodes: in step-through, that step; otherwise scroll to its card. */
export function showStep(key) {
  if (stepperState().on) {
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
  if (!stepperState().on || e.altKey || e.ctrlKey || e.metaKey) return;
  // Typing, moving in a table or a heatmap keeps its own arrow keys.
  if (/** @type {HTMLElement} */ (e.target).closest?.('input, textarea, select, [contenteditable="true"], td[data-r], canvas')) return;
  const onButton = /** @type {HTMLElement} */ (e.target).closest?.('button');
  const moves = { ArrowRight: 1, PageDown: 1, ArrowLeft: -1, PageUp: -1 };
  if (e.key in moves) {
    if (moves[e.key] > 0) next();
    else go(current().index - 1);
  } else if (e.key === ' ' && flags.present && !onButton) {
    if (e.shiftKey) go(current().index - 1);
    else next();
  } else if (e.key === 'Home') go(0);
  else if (e.key === 'End') go(shownSteps().length - 1);
  else if (e.key === 'Escape' && !flags.present) setStepping(false);
  else return;
  e.preventDefault();
}

export function bindStepper() {
  $('step-mode').addEventListener('click', () => {
    setStepping(true);
    $('step-next').focus();
  });
  $('step-all').addEventListener('click', () => {
    setStepping(false);
    $('step-mode').focus();
  });
  $('step-prev').addEventListener('click', () => go(current().index - 1));
  $('step-next').addEventListener('click', next);
  $('step-reveal').addEventListener('click', () => {
    reveal();
    $('step-next').focus();
  });
  $('teacher-say').addEventListener('input', writeNote);
  $('teacher-ask').addEventListener('input', writeNote);
  for (const id of ['teacher-kind', 'teacher-row', 'teacher-col', 'teacher-tol', 'teacher-text'])
    $(id).addEventListener('input', writeNote);
  $('stepper-answer').addEventListener('submit', checkStudent);
  $('answer-number').addEventListener('input', () => $('answer-number').setCustomValidity(''));
  document.addEventListener('keydown', onKey);
  if (flags.present) {
    document.body.classList.add('present');
    $('step-all').hidden = true;
    store.dispatch(stepThrough, true);
  }
}

/** The stepper follows the results: the step shown alone is one of the cards drawn. */
export function mountStepper() {
  store.subscribe(
    (page) => [...resultParts(page), page.ui.stepper, page.state.lesson],
    ([result]) => {
      if (result) syncStepper();
    },
  );
}
