// The explorer page: loads the engine, mounts the views on the store, and opens the link's state
// or the default example. The modules, by job:
//   store.js        the page's one store (state, ui, result)   actions.js  every change to it
//   update.js       the loop's subscriptions: state -> problem -> engine.run -> result -> the views
//   problem.js      the page state's problem (the package's stateToProblem) and where errors go
//   controls.js     example, mode, options, token names      inputs.js    the input editors
//   editors.js      the editors' registry (name -> MatrixEditor), read and written by the loop
//   mask-editor.js  the keep-mask grid / additive mask        selection.js the open cell, drill-down
//   cards.js        the step cards' view (steps.js draws them)
//   steps.js        step cards    explain.js worked cells    why.js       "why divide by √d_k"
//   link.js         the URL hash  embed.js   ?embed/hide/lock/present
//   pipeline.js     the diagram of the steps  stepper.js  one step at a time, the presenter view
//   lesson-file.js  a lesson as a JSON file: save, open, drop, ?lesson=URL
//   practice.js     "In practice": online softmax, KV-cache decoding, FlashAttention's tiles, gradients
//   share-panel.js  copy link / embed code, exports (export-panel.js), exercises (exercise.js)
//   student.js      a student's exercise link: the exercise alone, answers checked by hash
//   copy.js         numbers copied from the page's tables in ASCII
//   first-screen.js the prerendered first screen (scripts/build-site.mjs) kept or put back while
//                   the HTML is parsed (a classic script); takeOver() below replaces it
//   layout.js       the fold rules setup-fold.js shares with first-screen.js: phone query, storage key, markup
import { loadAttention } from 'attention-explorer';
import { $, afterFrame, app, latestOnly } from './app.js';
import { bindControls, defaultExampleState, fillPresetSelect, mountControls, mountLoaded } from './controls.js';
import { mountCards } from './cards.js';
import { mountMaskEditor } from './mask-editor.js';
import { mountSelection } from './selection.js';
import { installShare, mountSharePanel } from './share-panel.js';
import { flags } from './embed.js';
import { keptTeacherView, knownStudentsHash, readLink, savedFrameHash, setDefaultLink, writeLink } from './link.js';
import { link, mountEffects, mountLoop } from './update.js';
import { drawWhyLater, mountWhy } from './why.js';
import { loadState, selectionParts, store } from './store.js';
import { load } from './actions.js';
import { typesetPending } from './math.js';
import { markScrollables } from './scrollables.js';
import { skipCardsOffScreen } from './steps.js';
import { installCopy } from './copy.js';
import { installCopyLatex } from './copy-latex.js';
import { bindPipeline, mountPipeline } from './pipeline.js';
import { bindGlance, mountGlance } from './glance.js';
import { mountHeads } from './heads.js';
import { bindStepper, mountStepper, restartLesson, setClassView, setStepping, showStep } from './stepper.js';
import { bindLessonFile, openLessonUrl } from './lesson-file.js';
import { bindSetupFold, setSetupOpen } from './setup-fold.js';
import { bindPractice, mountPractice } from './practice.js';
import { isStudentState, paperFromState, renderStudent } from './student.js';
import { showBackLink } from './back-link.js';
import { chooseLanguage, showLanguage, t } from './language.js';

const hashRead = latestOnly();
/** Another link pasted into the address bar (not one the page wrote itself) is opened. */
async function onHashChange() {
  const h = location.hash.replace(/^#/, '');
  if (h === link.hash) return;
  const current = hashRead();
  const { state, error } = await readLink(location.hash);
  if (!current()) return; // the address changed again while this link was read
  if (state) {
    link.hash = h;
    loadState(state);
  } else if (error) $('status').textContent = error;
}

async function boot() {
  const language = chooseLanguage(); // fetched while the engine loads
  // The link back to the playground, in the page's language (English's is there at once).
  language.then(() => showBackLink(document.querySelector('.site-header')));
  try {
    app.engine = await loadAttention();
  } catch (err) {
    takeOver();
    await language.then(showLanguage, () => {});
    const loading = $('loading');
    loading.textContent = t('explorer.error.engine', { message: err.message });
    loading.classList.add('error');
    return;
  }
  // A frame reloaded by its host (a reveal.js slide) reopens with the reader's edits.
  const saved = savedFrameHash();
  if (saved && saved !== location.hash.replace(/^#/, '')) history.replaceState(null, '', `#${saved}`);
  // The teacher's tab of an exercise reopens the teacher's view it kept for the students' link in
  // its address (link.js, keepTeacherView); any other tab opens that link as the students'.
  const addressed = location.hash.replace(/^#/, '');
  const teacherView = keptTeacherView(addressed);
  await language; // before the link is read: its error is in the page's language
  const { state: fromHash, error, studentError } = await readLink(teacherView ? `#${teacherView}` : location.hash);
  if (teacherView && fromHash) knownStudentsHash(teacherView, addressed);
  // From here to the first drawing nothing is awaited: the prerendered first screen, if shown, is
  // replaced by the page's markup, which is bound and drawn in this same task (no frame between).
  const prerendered = takeOver();
  showLanguage();
  const loading = $('loading');
  if (isStudentState(fromHash) || studentError) {
    // A student's exercise: only the exercise is drawn, from its paper. The page's other panels
    // are removed before anything is computed, so none can show, export or copy a hidden number.
    loading.remove();
    // The status bar's timings toggle too: a student's page computes nothing to time.
    for (const id of ['lesson', 'practice', 'desk', 'inputs', 'why', 'status-timings']) $(id).remove();
    // A students' link that does not fit its schema says so there (not the teacher's page).
    renderStudent(studentError ? null : (fromHash.student ?? (await paperFromState(fromHash))), studentError);
    bindSkipLink();
    window.addEventListener('hashchange', () => location.reload());
    $('app').setAttribute('aria-busy', 'false');
    await drawn(['ae:first-steps', 'ae:interactive']);
    await typesetPending();
    ready();
    return;
  }
  fillPresetSelect();
  bindControls();
  window.addEventListener('hashchange', onHashChange);
  installShare();
  installCopy();
  installCopyLatex($('step-list'));
  $('status-timings').addEventListener('click', (e) => {
    const button = /** @type {HTMLElement} */ (e.currentTarget);
    const on = button.getAttribute('aria-pressed') !== 'true';
    button.setAttribute('aria-pressed', String(on));
    button.closest('.status-bar').classList.toggle('timings-on', on);
  });
  bindPipeline(showStep);
  bindGlance(showStep);
  bindStepper();
  bindLessonFile();
  bindSetupFold();
  bindPractice();
  $('to-problem').addEventListener('click', () => {
    setSetupOpen(true);
    $('setup').scrollIntoView({ block: 'start' });
    $('preset').focus({ preventScroll: true });
  });
  bindSkipLink();
  for (const id of ['lesson', 'setup', 'inputs', 'results', 'why']) $(id).hidden = false;
  loading.remove();
  $('app').setAttribute('aria-busy', 'false');
  let lessonOpening = null;
  if (fromHash) {
    // What this address shows without its hash, for a reader who edits back to it (addressHash).
    // Not known for a ?lesson address: that would mean fetching the lesson; the hash stays.
    setDefaultLink(flags.lesson ? Promise.resolve(null) : writeLink(defaultExampleState()));
    link.hash = location.hash.replace(/^#/, '');
    mount(fromHash);
    // A lesson's link (a teacher's notes in it) opens as the lesson: step by step from its first
    // step, each question asked before its numbers show, as a lesson file opens.
    if (hasLessonNotes(fromHash)) {
      restartLesson();
      setStepping(true);
      setClassView();
    }
    // A link with an open cell shows that cell: scroll it into view. Not inside a frame: there
    // scrolling would also move the host page, and an embed starts at its top.
    if (window.parent === window)
      document.querySelector('#step-list td.selected, #step-list .heatmap .cursor:not([hidden])')?.scrollIntoView({ block: 'center' });
  } else {
    // ?lesson=URL: the default example is drawn at once, under a note that the lesson is loading
    // (openLessonUrl), and the lesson replaces it when it comes; a lesson that fails or never
    // answers (fetchLesson's timeout) leaves the example with a message naming the URL.
    mount(defaultExampleState());
    lessonOpening = flags.lesson ? openLessonUrl(flags.lesson) : null;
    if (flags.lesson) setClassView();
    // Its link, read once the lesson settled (before any edit): the address bar shows no hash
    // while the state is this.
    setDefaultLink(lessonOpening ? lessonOpening.then(() => writeLink(app.state)) : writeLink(app.state));
  }
  if (error) $('status').textContent = error;
  // The numbers first; KaTeX is fetched and the formulas typeset once they are on screen. The
  // first steps were on screen before the engine was, when the prerendered ones were shown.
  await drawn(prerendered ? ['ae:interactive'] : ['ae:first-steps', 'ae:interactive']);
  drawWhyLater(); // if the browser was not idle until now
  await typesetPending();
  // Ready means what the address asks for is drawn: the lesson, or the example and why not.
  if (lessonOpening && (await lessonOpening)) await typesetPending();
  skipCardsOffScreen({ again: true }); // typeset formulas are taller than their TeX source
  markScrollables({ skippedToo: true }); // and wider, or narrower
  ready();
}

/**
 * The first state loaded, then the views and effects subscribed to the store, in the order they
 * draw within a frame: each draws it at once as it subscribes (in this task: no frame between).
 */
function mount(state) {
  store.dispatch(load, state);
  mountLoaded();
  mountLoop();
  mountCards();
  mountPipeline();
  mountGlance();
  mountHeads();
  mountStepper();
  mountPractice();
  mountSelection(selectionParts);
  mountSharePanel();
  mountMaskEditor();
  mountControls();
  mountWhy();
  mountEffects();
}

/** Whether a state holds a teacher's notes to step through (not an exercise, which has its own view). */
function hasLessonNotes(state) {
  const notes = state.lesson;
  if (!notes || typeof notes !== 'object' || state.exercise || state.student) return false;
  return Object.values(notes).some(
    (n) => n && typeof n === 'object' && ['say', 'ask'].some((k) => typeof n[k] === 'string' && n[k].trim()),
  );
}

/**
 * The prerendered first screen (scripts/build-site.mjs, kept by first-screen.js), if it is in
 * #app, replaced by the page's own markup from <template id="app-pristine">. Returns whether it
 * was on screen (a snapshot still "pending" was hidden: its script did not run).
 */
function takeOver() {
  const root = $('app');
  const pristine = $('app-pristine');
  const state = root.getAttribute('data-snapshot');
  if (!state || !pristine) return false;
  root.replaceChildren(pristine.content.cloneNode(true));
  root.removeAttribute('data-snapshot');
  root.removeAttribute('inert');
  return state === 'shown';
}

/**
 * Resolves once the frame showing what is in the DOM now was presented (the task after the next
 * animation frame), with performance marks `name` (now) and `name-painted` (then) for each of
 * `names`, which `npm run bench:page` reads: `ae:first-steps` (the first steps on screen, unless
 * the prerendered ones were) and `ae:interactive` (the live page's first drawing).
 * @param {string[]} names
 * @returns {Promise<void>}
 */
function drawn(names) {
  // One time for all of them: they are one drawing, even if the thread is preempted in between.
  const now = performance.now();
  for (const name of names) performance.mark(name, { startTime: now });
  return new Promise((resolve) =>
    afterFrame(() => {
      const painted = performance.now();
      for (const name of names) performance.mark(`${name}-painted`, { startTime: painted });
      resolve();
    }),
  );
}

/** Everything drawn, formulas included: the mark and the attribute tests and embeds wait for. */
function ready() {
  performance.mark('ae:ready');
  document.body.dataset.ready = 'true';
}

/**
 * "Skip to the steps" moves the focus (to the steps, or a student's exercise) without following its
 * href: the URL's hash holds the page's state, and "#steps" there would lose it.
 */
function bindSkipLink() {
  document.querySelector('a.skip')?.addEventListener('click', (e) => {
    e.preventDefault();
    const target = document.querySelector('#exercise.student-exercise') ?? $('steps');
    target.focus({ preventScroll: true });
    target.scrollIntoView({ block: 'start' });
  });
}

window.addEventListener('error', (e) => {
  $('status').textContent = t('explorer.error.unexpected', { message: e.message });
});
boot();
