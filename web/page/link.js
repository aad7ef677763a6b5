// The page state in the URL hash, in the package's link format (attention-explorer/share: v2 is
// deflated, older v1 links still read). An example that was not edited is stored by name only.
import { findPreset, presetProblem } from 'attention-explorer';
import { decodeStateString, encodeStateString, problemToState } from 'attention-explorer/share';
import { isMessage } from 'attention-explorer/i18n';
import { app } from './app.js';
import { stateFromObject, withoutDefaults } from './state.js';
import { applyFlags, flags } from './embed.js';
import { makePaper } from './student.js';
import { t } from './language.js';

let linkError = null; // why the link could not be read (shown once, at the top)

// The link of the state this address shows without a hash (main.js sets it once: the default
// example, or ?lesson's lesson); null when not known (a ?lesson address opened with a link).
let defaultLink = Promise.resolve(null);

/** Sets (a promise of) the link of what this address shows without a hash: see addressHash. */
export function setDefaultLink(link) {
  defaultLink = link;
}

/**
 * The hash the address bar shows for a state whose link is `hash`: none for the untouched default.
 * The prerendered first screen (first-screen.js) is kept only for an address without a hash, so a
 * reload or a bookmark of the untouched page gets it. Links are compared, not states. What the page
 * hands out (copy link, embed code, exports) is the state's own link, written in full.
 */
export async function addressHash(hash) {
  return hash === (await defaultLink) ? '' : hash;
}

// A framed explorer (an iframe embed) also keeps its hash for the rest of the tab's session, under
// the address the frame was opened with: a host that unloads the frame and later sets that same
// address again (reveal.js leaving and coming back to a slide, a course page visited again) gets
// the reader's edits back. A page of its own needs nothing more: a reload keeps its hash.
const openedAt = location.href;
const openedHash = location.hash.replace(/^#/, '');
const framed = window.parent !== window;
const frameKey = `attention-explorer:${openedAt}`;

/** The hash this frame last wrote in this tab (to reopen with), or null (not framed, none, no storage). */
export function savedFrameHash() {
  if (!framed) return null;
  try {
    return sessionStorage.getItem(frameKey);
  } catch {
    return null; // storage refused (a sandboxed frame): the edits last as long as the frame
  }
}

/**
 * Remembers a framed explorer's state (its link `hash`) for its opening address (nothing for a page
 * of its own). A state that address opens with anyway (its own hash, or without one the untouched
 * default) is forgotten: a host's reload then shows that, like a reload of a page of its own.
 */
export async function saveFrameHash(hash) {
  if (!framed) return;
  const reopens = hash === openedHash || (!openedHash && !(await addressHash(hash)));
  try {
    if (reopens) sessionStorage.removeItem(frameKey);
    else sessionStorage.setItem(frameKey, hash);
  } catch {
    /* storage refused: see savedFrameHash */
  }
}

// A teacher's exercise: the address bar holds the students' link (the natural thing to copy and
// hand out), and the teacher's view, which holds the answers, is kept for this tab only, under
// that students' link: a reload of the teacher's tab reopens the teacher's view, the same address
// in another browser (or a new tab) opens the students' exercise. Share's "Copy your teacher's view"
// is the way to take the teacher's view elsewhere.
const teacherKey = (students) => `attention-explorer:teacher:${students}`;

/** Keeps the teacher's view (its link `teacher`) in this tab for the students' hash the address shows. */
export function keepTeacherView(students, teacher) {
  try {
    sessionStorage.setItem(teacherKey(students), teacher);
  } catch {
    /* storage refused: a reload of this tab opens the students' exercise */
  }
}

/** The teacher's view this tab kept for the students' hash `students` (keepTeacherView), or null. */
export function keptTeacherView(students) {
  if (!students) return null;
  try {
    return sessionStorage.getItem(teacherKey(students));
  } catch {
    return null;
  }
}

/** The page state of an example (its numbers drawn by the engine), or null for an unknown id. */
export function presetState(id) {
  const preset = findPreset(id);
  if (!preset) return null;
  const { problem, numpy } = presetProblem(preset, app.engine);
  const state = stateFromObject(problemToState(problem, { tokens: { q: preset.tokens, k: preset.kvTokens }, preset: id }));
  state.recipe = [...new Set(Object.values(numpy))].join('\n');
  return state;
}

/** "v2=..." for the page state. */
export async function writeLink(state) {
  const obj = withoutDefaults(state);
  // What the ?embed/hide flags hid belongs to the flags, not to the state: the "Open in the
  // explorer" link must show everything.
  if (obj.hide) {
    const fromFlags = new Set([...flags.hideInputs, ...flags.hideSteps]);
    const hide = { ...obj.hide };
    if (flags.embed) delete hide.chrome;
    for (const k of ['inputs', 'steps']) {
      if (Array.isArray(hide[k])) hide[k] = hide[k].filter((w) => !fromFlags.has(w));
      if (Array.isArray(hide[k]) && hide[k].length === 0) delete hide[k];
    }
    if (Object.keys(hide).length) obj.hide = hide;
    else delete obj.hide;
  }
  if (state.preset && !state.edited && findPreset(state.preset)) {
    for (const k of ['inputs', 'recipe', 'use', 'mode', 'options']) delete obj[k];
  }
  return encodeStateString(obj);
}

/**
 * Reads a v1 or v2 hash into a page state (with this address's flags): { state } | { state: null,
 * error?, studentError? }. The state was checked against the link's schema (formats.js) when
 * decoded; `studentError` says which field of a students' exercise link does not fit. The error is
 * in the page's language (decodeStateString's message, the schema's reason inside it a message too).
 */
export async function readLink(hash) {
  const { state: raw, message, student, reason } = await decodeStateString(hash);
  const error = message ? t.message(message) : undefined;
  linkError = error ?? null;
  const why = message?.values?.reason;
  if (!raw) return { state: null, error, studentError: student ? (isMessage(why) ? t.message(/** @type {any} */ (why)) : reason) : null };
  let obj = raw;
  if (typeof raw.preset === 'string' && !raw.edited && !raw.inputs) {
    const base = presetState(raw.preset);
    if (!base) {
      linkError = t('explorer.share.no-example', { preset: raw.preset });
      return { state: null, error: linkError };
    }
    obj = { ...base, ...raw, options: { ...base.options, ...(raw.options ?? {}) }, tokens: raw.tokens ?? base.tokens };
  }
  return { state: applyFlags(stateFromObject(obj)) };
}

/** Why the last link could not be read, once (null if it could). */
export function takeLinkError() {
  const error = linkError;
  linkError = null;
  return error;
}

// The students' hash of the last teacher's state it was made for: the address bar, "Copy the
// students' link" and Share's "Copy link" hand out the same paper (each paper has its own salt).
// Here, beside the link it is made from, so that the loop's link effect (update.js) and the
// exercise panel (exercise.js) share it without the loop importing a view.
const paper = { teacher: null, students: null };

/** Takes (teacher's link, students' hash) as already made: the teacher's tab reopened (main.js). */
export function knownStudentsHash(teacher, students) {
  paper.teacher = teacher;
  paper.students = students;
}

/**
 * The students' hash ("v2=...": only the exercise's paper, student.js) of the teacher's exercise
 * on the page now, made once per teacher's state (a paper costs a slow hash per answer).
 */
export async function studentsHash() {
  const { state, result } = app;
  const teacher = await writeLink(state);
  if (paper.teacher === teacher) return paper.students;
  const { problem, trace, ctx } = result;
  const students = await encodeStateString({ student: await makePaper(state, problem, trace, ctx) });
  paper.teacher = teacher;
  paper.students = students;
  return students;
}
