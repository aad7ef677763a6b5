// Lesson files (dist/lesson.js, exported from dist/share.js): the format round-trips, bad fields give
// errors naming the step and the field, and answers are checked against the trace's numbers.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { dist } from './helpers.mjs';

const { readLesson, writeLesson, lessonTraceError, checkAnswer } = await import(`${dist}share.js`);
const { loadAttention, presetProblem, findPreset, formatNumber } = await import(`${dist}node.js`);
const engine = await loadAttention();
const { problem } = presetProblem(findPreset('lookup'), engine);
const trace = engine.run(problem);
const names = { tokensQ: ['sweet?', 'sour?', 'both?'], tokensK: ['banana', 'lemon', 'apple'] };
const fr = await (await import(`${dist}i18n.js`)).loadTranslator('fr');
const weights = trace.steps.find((s) => s.id === 'weights').data;
const scaled = trace.steps.find((s) => s.id === 'scaled').data;

test('a lesson round-trips through writeLesson and readLesson', () => {
  const lesson = { 'weights:0': { say: 'Look at banana.', ask: 'Which key?', answer: { kind: 'key', row: 1 } } };
  const text = writeLesson({ title: 'Lookup', problem, tokens: { q: names.tokensQ, k: names.tokensK }, lesson });
  const back = readLesson(text, 'l.json');
  assert.deepEqual(back, { title: 'Lookup', problem, tokens: { q: names.tokensQ, k: names.tokensK }, lesson });
  assert.equal(lessonTraceError(back.lesson, trace), null);
  // Keys default to the queries' names.
  assert.deepEqual(readLesson({ problem, tokens: { q: ['a', 'b', 'c'] } }).tokens, { q: ['a', 'b', 'c'], k: ['a', 'b', 'c'] });
});

test("a lesson's language: lang round-trips; a code without a catalogue is an error naming the key", () => {
  const text = writeLesson({ title: 'Recherche', problem, lang: 'fr' });
  assert.equal(JSON.parse(text).lang, 'fr');
  assert.equal(readLesson(text, 'l.json').lang, 'fr');
  assert.equal(readLesson({ problem }).lang, undefined, "no lang: the reader's language");
  assert.throws(() => readLesson({ problem, lang: 'xx' }, 'l.json'), {
    message: 'l.json: "lang" is "xx"; expected a language code: en, zh-CN, es, pt-BR, fr, ja, ko, ar',
  });
  assert.throws(() => readLesson({ problem, lang: 'french' }, 'l.json'), {
    message: /^l\.json: "lang" is "french"; expected a language code/,
  });
});

test('bad lessons: the message names the file, the step and the field', () => {
  const bad = (json, message) => assert.throws(() => readLesson(json, 'l.json'), { message });
  bad('{ "problem": ', /^l\.json is not JSON: /);
  bad([], 'l.json: a lesson is a JSON object with "problem" and "lesson"');
  bad({ lesson: {} }, /^l\.json: "problem" is missing/);
  bad({ problem, version: 2 }, 'l.json: "version" is 2; this explorer reads lesson version 1');
  bad({ problem, format: 'slides' }, 'l.json: "format" is "slides"; expected "attention-explorer lesson"');
  bad({ problem, tokens: { q: [1, 2] } }, 'l.json: tokens.q must be a list of names (strings)');
  bad(
    { problem, lesson: { weights: {} } },
    'l.json: step "weights": not a step key; expected "id:head" like "weights:0" (head -1 for a step without heads)',
  );
  bad(
    { problem, lesson: { 'weights:0': { sya: 'x' } } },
    'l.json: step "weights:0": unknown field "sya"; a note has "say", "ask" and "answer"',
  );
  bad(
    { problem, lesson: { 'weights:0': { answer: { kind: 'key', row: 1 } } } },
    'l.json: step "weights:0": an "answer" needs the question it answers ("ask")',
  );
  bad(
    { problem, lesson: { 'weights:0': { ask: 'q', answer: { kind: 'guess' } } } },
    'l.json: step "weights:0": answer.kind is "guess"; expected one of "key", "number", "text"',
  );
  bad(
    { problem, lesson: { 'scaled:0': { ask: 'q', answer: { kind: 'number', row: 1, col: 1.5, tolerance: 0 } } } },
    'l.json: step "scaled:0": answer.col is 1.5; expected a whole number from 1 (the first column)',
  );
  bad(
    { problem, lesson: { 'scaled:0': { ask: 'q', answer: { kind: 'number', row: 1, col: 1, tolerance: -1 } } } },
    'l.json: step "scaled:0": answer.tolerance is -1; expected a number ≥ 0 (how far a student\'s number may be from the cell)',
  );
  assert.equal(
    lessonTraceError({ 'scaled:0': { ask: 'q', answer: { kind: 'number', row: 1, col: 4, tolerance: 0 } } }, trace, 'l.json'),
    'l.json: step "scaled:0": answer.col is 4, but Scaled scores has 3 columns',
  );
  assert.equal(
    lessonTraceError({ 'concat:-1': {} }, trace, 'l.json'),
    'l.json: step "concat:-1": this problem has no such step (its steps: Q:0, K:0, V:0, scores:0, scaled:0, weights:0, output:-1)',
  );
});

test('answers are checked against the trace: the largest weight of a row, a cell within the tolerance', () => {
  const f = (v) => formatNumber(v, 4);
  // sweet?'s largest weight is banana's; a key question on another step of the head reads the weights too.
  assert.ok(weights[0][0] > weights[0][1] && weights[0][0] > weights[0][2]);
  for (const key of ['weights:0', 'scores:0']) {
    assert.deepEqual(checkAnswer(trace, key, { kind: 'key', row: 1 }, 0, names), {
      right: true,
      reason: `Right: banana gets ${f(weights[0][0])} of sweet?'s weight, the most of any key.`,
    });
  }
  assert.deepEqual(checkAnswer(trace, 'weights:0', { kind: 'key', row: 2 }, 0, names), {
    right: false,
    reason: `Not quite: banana gets ${f(weights[1][0])}; lemon gets ${f(weights[1][1])} of sour?'s weight, the most of any key.`,
  });
  const number = { kind: 'number', row: 2, col: 3, tolerance: 0.01 };
  // In a language: the catalogue's sentence, the same numbers and names (lesson.verdict.*).
  assert.deepEqual(checkAnswer(trace, 'weights:0', { kind: 'key', row: 2 }, 0, { ...names, t: fr }), {
    right: false,
    reason: `Pas tout à fait : banana reçoit ${f(weights[1][0])} ; lemon reçoit ${f(weights[1][1])} du poids de sour?, plus que toute autre clé.`,
  });
  assert.equal(
    checkAnswer(trace, 'scaled:0', number, '4', { ...names, t: fr }).reason,
    `Pas tout à fait : ${fr('step.scaled')} à la ligne sour?, colonne apple vaut ${f(scaled[1][2])} ; vous avez dit 4, à ${f(4 - scaled[1][2])} d’écart, plus de ± 0.01.`,
  );
  assert.equal(checkAnswer(trace, 'scaled:0', number, '2.83', names).right, true);
  assert.deepEqual(checkAnswer(trace, 'scaled:0', number, '4', names), {
    right: false,
    reason: `Not quite: Scaled scores at row sour?, column apple is ${f(scaled[1][2])}; you said 4, ${f(4 - scaled[1][2])} away, more than ± 0.01.`,
  });
  assert.equal(
    checkAnswer(trace, 'scaled:0', number, 'four', names).reason,
    `That is not a number. Scaled scores at row sour?, column apple is ${f(scaled[1][2])}.`,
  );
  assert.deepEqual(checkAnswer(trace, 'output:-1', { kind: 'text', text: 'Mostly banana.' }, null, names), {
    right: null,
    reason: 'Mostly banana.',
  });
});
