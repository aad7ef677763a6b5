// A lesson as a file: "Save lesson" writes the problem and the teacher's notes (the state's
// `lesson`) as JSON, "Open lesson" (a file picker, or a file dropped on the page) and ?lesson=URL
// read one back. The format and its checks are the package's (attention-explorer/share: readLesson).
import { findPreset } from 'attention-explorer';
import { fetchLesson, lessonTraceMessage, problemToState, readLesson, writeLesson } from 'attention-explorer/share';
import { $, app } from './app.js';
import { applyFlags } from './embed.js';
import { html, setHtml } from 'attention-explorer/html';
import { errorWords } from 'attention-explorer/i18n';
import { stateFromObject, tokenLists } from './state.js';
import { restartLesson, setStepping } from './stepper.js';
import { setTitle } from './actions.js';
import { loadState, store } from './store.js';
import { t } from './language.js';

/**
 * The lesson file of the page as it is: its title (the teacher's; else the example's while it is
 * not edited: a the/cat/sat lesson is not "three questions about fruit"), problem, token names, notes.
 */
export function currentLesson() {
  const { state } = app;
  const tokens = tokenLists(state);
  return writeLesson({
    title: state.title || (state.edited ? '' : (findPreset(state.preset ?? '')?.title ?? '')),
    problem: app.result.problem,
    tokens: tokens.q.length ? tokens : null,
    lesson: app.state.lesson ?? {},
  });
}

/** A message at the top of the page (replacing the last one), e.g. why a lesson did not open. */
function showLessonError(message) {
  $('lesson-error')?.remove();
  if (!message) return;
  const box = document.createElement('div');
  box.id = 'lesson-error';
  box.className = 'link-error';
  box.setAttribute('role', 'alert');
  setHtml(box, html`<p>${message}</p><button type="button">${t('explorer.share.dismiss')}</button>`);
  box.querySelector('button').addEventListener('click', () => box.remove());
  $('app').prepend(box);
}

/**
 * Opens a lesson (its JSON text) in the page, step by step from its first step. `where` names it
 * in messages. Returns true, or false after showing why it could not be opened (the schema's
 * reason in the page's language, the core's details inside it).
 */
export function openLesson(text, where) {
  let lesson;
  try {
    lesson = readLesson(text, where);
    let trace;
    try {
      trace = app.engine.run(lesson.problem);
    } catch (error) {
      throw new Error(t('explorer.lesson.problem-error', { where, error: error.message }));
    }
    const misfit = lessonTraceMessage(lesson.lesson, trace, where);
    if (misfit) throw Object.assign(new Error(t.message(misfit)), { message_id: misfit.id, values: misfit.values });
  } catch (error) {
    showLessonError(t('explorer.lesson.not-opened', { error: errorWords(error, t) }));
    return false;
  }
  const state = stateFromObject(problemToState(lesson.problem, { tokens: lesson.tokens ?? undefined }));
  state.lesson = Object.keys(lesson.lesson).length ? lesson.lesson : null;
  state.title = lesson.title ?? '';
  showLessonError(null);
  restartLesson();
  loadState(applyFlags(state));
  setStepping(true);
  return true;
}

/** While ?lesson=URL is fetched: a note at the top naming the address (null: remove it). */
function showLessonLoading(url) {
  $('lesson-loading')?.remove();
  if (!url) return;
  const box = document.createElement('div');
  box.id = 'lesson-loading';
  box.className = 'lesson-loading';
  box.setAttribute('role', 'status');
  // The address inside the sentence, in a span of its own (escaped by html``).
  const address = (/** @type {unknown[]} */ chunks) => html`<span class="url">${chunks}</span>`;
  setHtml(box, html`<p>${t('explorer.lesson.loading', { url, address })}</p>`);
  $('app').prepend(box);
}

/**
 * Fetches and opens ?lesson=URL (relative to the page), with a note saying so while it loads; the
 * page draws the default example meanwhile (main.js). The message says which URL and what went
 * wrong, a server that never answers included (fetchLesson's timeout).
 */
export async function openLessonUrl(address) {
  let url;
  try {
    url = new URL(address, location.href);
  } catch {
    showLessonError(t('explorer.lesson.not-address', { address }));
    return false;
  }
  let text;
  showLessonLoading(url.href);
  try {
    text = await fetchLesson(url.href);
  } catch (error) {
    // fetchLesson's message is English ("the lesson at … could not be fetched: …"): a sentence of its own.
    showLessonError(t('explorer.lesson.not-fetched', { error: error.message.replace(/^t/, 'T') }));
    return false;
  } finally {
    showLessonLoading(null);
  }
  // A lesson written in a language ("lang") opens in it when the reader chose none (?lang=): the
  // page reloads in that language, as the language menu does (?lesson= and the hash are kept).
  const lang = lessonLanguage(text);
  if (lang && lang !== t.lang && !new URLSearchParams(location.search).has('lang')) {
    const next = new URL(location.href);
    next.searchParams.set('lang', lang);
    location.replace(next.href);
    return new Promise(() => {}); // the page is replaced
  }
  return openLesson(text, url.href);
}

/** The language a lesson's text says it is written in, or null (one that does not read: openLesson says why). */
function lessonLanguage(text) {
  try {
    return readLesson(text).lang ?? null;
  } catch {
    return null;
  }
}

async function openFile(file) {
  if (!file) return;
  openLesson(await file.text(), file.name);
}

function save() {
  if (!app.result) return;
  const blob = new Blob([currentLesson()], { type: 'application/json' });
  const a = document.createElement('a');
  a.href = URL.createObjectURL(blob);
  a.download = `${app.state.preset && !app.state.edited ? app.state.preset : 'attention'}-lesson.json`;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 0);
}

export function bindLessonFile() {
  $('lesson-save').addEventListener('click', save);
  $('lesson-name').addEventListener('change', (e) => store.dispatch(setTitle, /** @type {HTMLInputElement} */ (e.target).value));
  $('lesson-open').addEventListener('click', () => $('lesson-file').click());
  $('lesson-file').addEventListener('change', async (e) => {
    await openFile(/** @type {HTMLInputElement} */ (e.target).files[0]);
    /** @type {HTMLInputElement | HTMLSelectElement} */ (e.target).value = '';
  });
  // A .json file dropped anywhere on the page opens as a lesson (text dropped into a field stays text).
  const isFile = (e) => [...(e.dataTransfer?.types ?? [])].includes('Files');
  document.addEventListener('dragover', (e) => {
    if (isFile(e)) e.preventDefault();
  });
  document.addEventListener('drop', (e) => {
    if (!isFile(e)) return;
    e.preventDefault();
    openFile(e.dataTransfer.files[0]);
  });
}
