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

export const LESSON_FORMAT = 'attention-explorer lesson';
export const LESSON_VERSION = 1;
export const ANSWER_KINDS = ['key', 'number', 'text'];

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
const STEP_KEY = /^[A-Za-z_][A-Za-z0-9_]*:-?\d+$/;
const wholeFrom1 = (v) => Number.isInteger(v) && v >= 1;

/** Why a note's answer is not one the page can check, or null. `at` names the note. */
function answerError(answer, at) {
  if (!isObject(answer)) return `${at}: "answer" must be an object like { "kind": "key", "row": 1 }`;
  if (!ANSWER_KINDS.includes(answer.kind)) {
    return `${at}: answer.kind is ${JSON.stringify(answer.kind)}; expected one of ${ANSWER_KINDS.map((k) => `"${k}"`).join(', ')}`;
  }
  if (answer.kind !== 'text' && !wholeFrom1(answer.row)) return `${at}: answer.row is ${JSON.stringify(answer.row)}; expected a whole number from 1 (the first query row)`;
  if (answer.kind === 'number') {
    if (!wholeFrom1(answer.col)) return `${at}: answer.col is ${JSON.stringify(answer.col)}; expected a whole number from 1 (the first column)`;
    if (typeof answer.tolerance !== 'number' || !(answer.tolerance >= 0)) {
      return `${at}: answer.tolerance is ${JSON.stringify(answer.tolerance)}; expected a number ≥ 0 (how far a student's number may be from the cell)`;
    }
  }
  if (answer.kind === 'text' && typeof answer.text !== 'string') return `${at}: answer.text must be a string (the answer shown on reveal)`;
  return null;
}

/**
 * The notes of a lesson, checked: { "weights:0": { say?, ask?, answer? } }. Throws an Error naming
 * the step and the field on anything else. `where` starts the message (e.g. the file's name).
 */
export function checkNotes(notes, where = 'lesson') {
  if (!isObject(notes)) throw new Error(`${where}: "lesson" must be an object of notes keyed by step ("weights:0": { "say": ..., "ask": ... })`);
  const out = {};
  for (const [key, note] of Object.entries(notes)) {
    const at = `${where}: step "${key}"`;
    if (!STEP_KEY.test(key)) throw new Error(`${at}: not a step key; expected "id:head" like "weights:0" (head -1 for a step without heads)`);
    if (!isObject(note)) throw new Error(`${at}: the note must be an object with "say", "ask" or "answer"`);
    for (const field of Object.keys(note)) {
      if (!['say', 'ask', 'answer'].includes(field)) throw new Error(`${at}: unknown field "${field}"; a note has "say", "ask" and "answer"`);
    }
    for (const field of ['say', 'ask']) {
      if (field in note && typeof note[field] !== 'string') throw new Error(`${at}: "${field}" must be a string`);
    }
    if ('answer' in note) {
      if (!note.ask) throw new Error(`${at}: an "answer" needs the question it answers ("ask")`);
      const error = answerError(note.answer, at);
      if (error) throw new Error(error);
    }
    out[key] = structuredClone(note);
  }
  return out;
}

/** A note's answer if it is one the page can check (links are read leniently), else null. */
export function usableAnswer(answer) {
  return answerError(answer, '') ? null : answer;
}

/**
 * Reads a lesson file's JSON (text or parsed): { title, problem, tokens: { q, k } | null, lesson }.
 * Throws an Error saying which field is wrong. The problem's numbers are the engine's to check.
 */
export function readLesson(json, where = 'lesson') {
  let obj = json;
  if (typeof json === 'string') {
    try {
      obj = JSON.parse(json);
    } catch (error) {
      throw new Error(`${where} is not JSON: ${error.message}`);
    }
  }
  if (!isObject(obj)) throw new Error(`${where}: a lesson is a JSON object with "problem" and "lesson"`);
  if ('format' in obj && obj.format !== LESSON_FORMAT) throw new Error(`${where}: "format" is ${JSON.stringify(obj.format)}; expected "${LESSON_FORMAT}"`);
  if ('version' in obj && !(Number.isInteger(obj.version) && obj.version >= 1 && obj.version <= LESSON_VERSION)) {
    throw new Error(`${where}: "version" is ${JSON.stringify(obj.version)}; this explorer reads lesson version ${LESSON_VERSION}`);
  }
  if (!isObject(obj.problem)) throw new Error(`${where}: "problem" is missing; expected the problem's inputs ({ "Q": [[...]], "K": ..., "V": ..., "options": {...} })`);
  let tokens = null;
  if (obj.tokens !== undefined) {
    const names = (v, which) => {
      if (v === undefined) return undefined;
      if (!Array.isArray(v) || !v.every((t) => typeof t === 'string')) throw new Error(`${where}: tokens.${which} must be a list of names (strings)`);
      return v;
    };
    if (!isObject(obj.tokens)) throw new Error(`${where}: "tokens" must be { "q": [names], "k": [names] }`);
    const q = names(obj.tokens.q, 'q');
    tokens = { q: q ?? [], k: names(obj.tokens.k, 'k') ?? q ?? [] };
  }
  if (obj.title !== undefined && typeof obj.title !== 'string') throw new Error(`${where}: "title" must be a string`);
  return { title: obj.title ?? '', problem: obj.problem, tokens, lesson: checkNotes(obj.lesson ?? {}, where) };
}

/** A lesson file's text from its address; the Error says which address and what went wrong. */
export async function fetchLesson(url) {
  try {
    const response = await fetch(url);
    if (!response.ok) throw new Error(`the server answered ${response.status}${response.statusText ? ` ${response.statusText}` : ''}`);
    return await response.text();
  } catch (error) {
    throw new Error(`the lesson at ${url} could not be fetched: ${error.message}`);
  }
}

/** The JSON text of a lesson file. */
export function writeLesson({ title, problem, tokens, lesson }) {
  const out = { format: LESSON_FORMAT, version: LESSON_VERSION };
  if (title) out.title = title;
  out.problem = problem;
  if (tokens) out.tokens = tokens;
  out.lesson = lesson ?? {};
  return `${JSON.stringify(out, null, 2)}\n`;
}

const stepKeyOf = (step) => `${step.id}:${step.head ?? -1}`;

/** The step of a trace a note's key names, or undefined. */
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
 */
export function lessonTraceError(lesson, trace, where = 'lesson') {
  for (const [key, note] of Object.entries(lesson ?? {})) {
    const step = stepOfKey(trace, key);
    const at = `${where}: step "${key}"`;
    if (!step) return `${at}: this problem has no such step (its steps: ${trace.steps.map(stepKeyOf).join(', ')})`;
    const answer = note?.answer;
    if (!answer || answer.kind === 'text') continue;
    const target = answer.kind === 'key' ? weightsFor(trace, step) : step;
    const [rows, cols] = target.shape;
    if (answer.row > rows) return `${at}: answer.row is ${answer.row}, but ${target.title} has ${rows} rows`;
    if (answer.kind === 'number' && answer.col > cols) return `${at}: answer.col is ${answer.col}, but ${target.title} has ${cols} columns`;
  }
  return null;
}

/**
 * Checks a student's answer to a note against the trace: { right, reason } with the reason in the
 * trace's numbers ("banana gets 0.7952 of sweet?'s weight"), or for free text { right: null,
 * reason: the teacher's answer }. `response` is a key index (kind "key") or a number (kind "number").
 */
export function checkAnswer(trace, key, answer, response, { tokensQ = [], tokensK = [], decimals = 4 } = {}) {
  const step = stepOfKey(trace, key);
  const f = (v) => formatNumber(v, decimals);
  const q = (r) => tokensQ[r] ?? `t${r + 1}`;
  const k = (c) => tokensK[c] ?? `t${c + 1}`;
  if (answer.kind === 'text') return { right: null, reason: answer.text };
  const r = answer.row - 1;
  if (answer.kind === 'key') {
    const row = weightsFor(trace, step).data[r];
    const best = row.reduce((b, v, j) => (v > row[b] ? j : b), 0);
    const most = `${k(best)} gets ${f(row[best])} of ${q(r)}'s weight, the most of any key`;
    if (response === best) return { right: true, reason: `Right: ${most}.` };
    const picked = Number.isInteger(response) && response >= 0 && response < row.length ? `${k(response)} gets ${f(row[response])}; ` : '';
    return { right: false, reason: `Not quite: ${picked}${most}.` };
  }
  const c = answer.col - 1;
  const value = step.data[r][c];
  const cell = `${step.title} at row ${q(r)}, column ${step.axes[1] === 'keys' ? k(c) : c + 1} is ${f(value)}`;
  const guess = Number(response);
  if (!Number.isFinite(guess)) return { right: false, reason: `That is not a number. ${cell}.` };
  const off = Math.abs(guess - value);
  const within = answer.tolerance > 0 ? ` (within ± ${answer.tolerance})` : '';
  return off <= answer.tolerance
    ? { right: true, reason: `Right: ${cell}; you said ${guess}${within}.` }
    : { right: false, reason: `Not quite: ${cell}; you said ${guess}, ${f(off)} away${within ? `, more than ± ${answer.tolerance}` : ''}.` };
}
