// A lesson: a problem plus a teacher's note for some of its steps, as one JSON file.
//
//   { "format": "attention-explorer lesson", "version": 1, "title": "A soft dictionary lookup",
//     "problem": { "Q": [[...]], "K": [[...]], "V": [[...]], "options": { ... } },
//     "tokens": { "q": ["sweet?", ...], "k": ["banana", ...] },
//     "lesson": { "weights:0": { "say": "...", "ask": "Which key will sweet? attend to most?",
//                                "answer": { "kind": "key", "row": 1 } } } }
//
// "lesson" is the explorer page's link state `lesson` as it is (notes keyed by "step id:head",
// head -1 for a step without one); the page, the <attention-explorer> element and the iframe
// (?lesson=URL) all read a file with readLesson. An answer says how the page checks a student's
// prediction against the trace:
//   { "kind": "key", "row": r }              the key with the most weight in query row r
//   { "kind": "number", "row": r, "col": c, "tolerance": t }   the step's cell, within ± t
//   { "kind": "text", "text": "..." }         free text: not checked, shown on reveal
// Rows and columns count from 1, as the page labels them.
import { formatNumber } from './format.js';
import { english, stepTitle } from './i18n.js';
import { ANSWER_KINDS, LESSON_FORMAT, LESSON_VERSION, check, lessonFileSchema, notesSchema } from './formats.js';

// The format's schema (the notes, the file) is formats.js's; docs/formats.md describes it.
export { ANSWER_KINDS, LESSON_FORMAT, LESSON_VERSION };

const NOTES = notesSchema();

/** An Error in English (`message`) that carries its message id and values for any language (i18n.js errorWords). */
const lessonError = (id, values) => Object.assign(new Error(english(id, values)), { message_id: id, values });

/**
 * The notes of a lesson, checked: { "weights:0": { say?, ask?, answer? } }. Throws an Error naming
 * the step and the field on anything else. `where` starts the message (e.g. the file's name).
 * @type {typeof import('./share.js').checkNotes}
 */
export function checkNotes(notes, where = 'lesson') {
  const { value, error, message } = check(NOTES, notes);
  if (error) throw lessonError('lesson.invalid', { where, reason: message });
  return value;
}

/**
 * A note's answer if it is one the page can check, else null.
 * @type {typeof import('./share.js').usableAnswer}
 */
export function usableAnswer(answer) {
  // Checked against the notes' schema: an answer of one of the kinds.
  return answer === undefined || check(NOTES, { 'x:0': { ask: '?', answer } }).error
    ? null
    : /** @type {import('./share.js').LessonNote['answer']} */ (answer);
}

/**
 * Reads a lesson file's JSON (text or parsed): { title, problem, tokens: { q, k } | null, lesson }.
 * Throws an Error saying which field is wrong. The problem's numbers are the engine's to check.
 * @type {typeof import('./share.js').readLesson}
 */
export function readLesson(json, where = 'lesson') {
  let obj = json;
  if (typeof json === 'string') {
    try {
      obj = JSON.parse(json);
    } catch (error) {
      throw lessonError('lesson.not-json', { where, error: error.message });
    }
  }
  const { value, error, message } = check(lessonFileSchema, obj);
  if (error) throw lessonError('lesson.invalid', { where, reason: message });
  const tokens = value.tokens ? { q: value.tokens.q ?? [], k: value.tokens.k ?? value.tokens.q ?? [] } : null;
  return {
    title: value.title ?? '',
    problem: value.problem,
    tokens,
    lesson: value.lesson ?? {},
    ...(value.lang ? { lang: value.lang } : {}),
  };
}

/**
 * How long a lesson's address may take to answer, in ms, before fetchLesson gives up.
 * @type {typeof import('./share.js').LESSON_TIMEOUT_MS}
 */
export const LESSON_TIMEOUT_MS = 15_000;

/**
 * A lesson file's text from its address; the Error says which address and what went wrong,
 * including a server that does not answer within `timeout` ms (LESSON_TIMEOUT_MS).
 * @type {typeof import('./share.js').fetchLesson}
 */
export async function fetchLesson(url, { timeout = LESSON_TIMEOUT_MS } = {}) {
  const controller = new AbortController();
  let timedOut = false;
  // setTimeout, not AbortSignal.timeout: a test's clock (and a paused tab's) governs it the same way.
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, timeout);
  try {
    const response = await fetch(url, { signal: controller.signal });
    if (!response.ok) throw new Error(`the server answered ${response.status}${response.statusText ? ` ${response.statusText}` : ''}`);
    return await response.text();
  } catch (error) {
    const why = timedOut ? `no answer within ${timeout / 1000} seconds` : error.message;
    throw new Error(`the lesson at ${url} could not be fetched: ${why}`);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The JSON text of a lesson file.
 * @type {typeof import('./share.js').writeLesson}
 */
export function writeLesson({ title, problem, tokens, lesson, lang }) {
  const out = { format: LESSON_FORMAT, version: LESSON_VERSION };
  if (title) out.title = title;
  if (lang) out.lang = lang;
  out.problem = problem;
  if (tokens) out.tokens = tokens;
  out.lesson = lesson ?? {};
  return `${JSON.stringify(out, null, 2)}\n`;
}

const stepKeyOf = (step) => `${step.id}:${step.head ?? -1}`;

/**
 * The step of a trace a note's key names, or undefined.
 * @type {typeof import('./share.js').stepOfKey}
 */
export function stepOfKey(trace, key) {
  return trace.steps.find((s) => stepKeyOf(s) === key);
}

/** The attention weights a "key" answer is checked against: the note's step if it is the weights, else its head's. */
function weightsFor(trace, step) {
  if (step.id === 'weights') return step;
  return trace.steps.find((s) => s.id === 'weights' && (s.head ?? -1) === (step.head ?? -1)) ?? trace.steps.find((s) => s.id === 'weights');
}

/**
 * Why a lesson's notes do not fit a trace (a step it does not have, a row or column beyond the
 * step's), or null. Checked once the problem has run.
 * @type {typeof import('./share.js').lessonTraceError}
 */
export function lessonTraceError(lesson, trace, where = 'lesson') {
  const misfit = lessonTraceMessage(lesson, trace, where);
  return misfit && english.message(misfit);
}

/**
 * The same as a message ({ id: 'lesson.trace.<...>', values }) for any language, or null.
 * @type {typeof import('./share.js').lessonTraceMessage}
 */
export function lessonTraceMessage(lesson, trace, where = 'lesson') {
  for (const [key, note] of Object.entries(lesson ?? {})) {
    const step = stepOfKey(trace, key);
    const at = { where, key: `"${key}"` };
    if (!step) return { id: 'lesson.trace.no-step', values: { ...at, steps: trace.steps.map(stepKeyOf).join(', ') } };
    const answer = note?.answer;
    if (!answer || answer.kind === 'text') continue;
    const target = answer.kind === 'key' ? weightsFor(trace, step) : step;
    const [rows, cols] = target.shape;
    // The step's title in the language when its catalogue id says the same in English.
    const title =
      target.title_id && english.has(target.title_id) && english(target.title_id) === target.title ? { id: target.title_id } : target.title;
    if (answer.row > rows) return { id: 'lesson.trace.row', values: { ...at, row: String(answer.row), title, rows: String(rows) } };
    if (answer.kind === 'number' && answer.col > cols)
      return { id: 'lesson.trace.col', values: { ...at, col: String(answer.col), title, cols: String(cols) } };
  }
  return null;
}

/**
 * Checks a student's answer to a note against the trace: { right, reason } with the reason in the
 * trace's numbers ("banana gets 0.7952 of sweet?'s weight"), or for free text { right: null,
 * reason: the teacher's answer }. `response` is a key index (kind "key") or a number (kind "number").
 * The reason is in `t`'s language (English by default); its numbers are the code's, passed in as text.
 * @type {typeof import('./share.js').checkAnswer}
 */
export function checkAnswer(trace, key, answer, response, { tokensQ = [], tokensK = [], decimals = 4, t = english } = {}) {
  const step = stepOfKey(trace, key);
  const f = (v) => formatNumber(v, decimals);
  const q = (r) => tokensQ[r] ?? `t${r + 1}`;
  const k = (c) => tokensK[c] ?? `t${c + 1}`;
  if (answer.kind === 'text') return { right: null, reason: answer.text };
  const r = answer.row - 1;
  if (answer.kind === 'key') {
    const row = weightsFor(trace, step).data[r];
    const best = row.reduce((b, v, j) => (v > row[b] ? j : b), 0);
    const most = { key: k(best), value: f(row[best]), query: q(r) };
    if (response === best) return { right: true, reason: t('lesson.verdict.key-right', most) };
    const picked =
      Number.isInteger(response) && /** @type {number} */ (response) >= 0 && /** @type {number} */ (response) < row.length
        ? { picked: k(/** @type {number} */ (response)), pickedValue: f(row[/** @type {number} */ (response)]) }
        : { picked: '', pickedValue: '' };
    return {
      right: false,
      reason: t(picked.picked ? 'lesson.verdict.key-wrong' : 'lesson.verdict.key-wrong-none', { ...most, ...picked }),
    };
  }
  const c = answer.col - 1;
  const value = step.data[r][c];
  const cell = { title: stepTitle(step, t), row: q(r), column: step.axes[1] === 'keys' ? k(c) : String(c + 1), value: f(value) };
  const guess = Number(response);
  if (!Number.isFinite(guess)) return { right: false, reason: t('lesson.verdict.not-number', cell) };
  const off = Math.abs(guess - value);
  const said = { ...cell, guess: String(guess), tolerance: answer.tolerance > 0 ? String(answer.tolerance) : 'none' };
  return off <= answer.tolerance
    ? { right: true, reason: t('lesson.verdict.number-right', said) }
    : { right: false, reason: t('lesson.verdict.number-wrong', { ...said, off: f(off) }) };
}
