// What decoding a text handed around a class must give, whatever the text: shared by the property
// tests (tests/js/formats.test.mjs) and the link decoder's fuzz target (tests/fuzz/fuzz_link.mjs).
// A failure is an AssertionError naming what came out.
import assert from 'node:assert/strict';

import { dist } from './helpers.mjs';

const share = await import(`${dist}share.js`);
const formats = await import(`${dist}formats.js`);
const { loadAttention } = await import(`${dist}node.js`);
const engine = await loadAttention();

/** An error the package wrote (a message for people), not a fault (TypeError, RangeError, ...). */
export const isMessage = (e) => e instanceof Error && e.constructor === Error && e.message.length > 0;

/**
 * A link's text (#v1=, #v2=, anything): a state that fits the schema (and then the package's reader
 * gives a problem or a message), or no state and a message. Never a rejection. Resolves to what
 * decodeStateString gave.
 */
export async function decodesSafely(text) {
  const r = await share.decodeStateString(text);
  if (r.state === null) {
    if (String(text).replace(/^#/, '') === '') return r;
    assert.equal(typeof r.error, 'string', `no message for ${String(text).slice(0, 80)}`);
    return r;
  }
  assert.equal(formats.check(formats.linkStateSchema, r.state).error, undefined);
  if (r.state.student) assert.equal(formats.checkPaper(r.state.student).error, undefined);
  try {
    const problem = share.stateToProblem(r.state, engine);
    engine.run(problem);
  } catch (e) {
    assert.ok(isMessage(e), `stateToProblem/run threw ${e?.constructor?.name}: ${e?.message}`);
  }
  return r;
}

/**
 * A lesson file (its text or its parsed object) read as from `where`: the lesson, whose notes fit
 * their schema and whose problem runs or gives a message; or an Error whose message starts with
 * `where` (then null). Never a fault.
 */
export function readsLessonSafely(input, where = 'l.json') {
  let lesson;
  try {
    lesson = share.readLesson(input, where);
  } catch (e) {
    assert.ok(isMessage(e) && e.message.startsWith(where), `readLesson threw ${e?.constructor?.name}: ${e?.message}`);
    return null;
  }
  assert.equal(formats.check(formats.notesSchema(), lesson.lesson).error, undefined);
  assert.ok(lesson.tokens === null || (Array.isArray(lesson.tokens.q) && Array.isArray(lesson.tokens.k)));
  try {
    share.lessonTraceError(lesson.lesson, engine.run(lesson.problem), where);
  } catch (e) {
    assert.ok(isMessage(e), `the lesson's problem gave ${e?.constructor?.name}: ${e?.message}`);
  }
  return lesson;
}
