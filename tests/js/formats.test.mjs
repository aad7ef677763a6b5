// The formats handed around a class (dist/formats.js): links (#v1=, #v2=), students' papers, lesson
// files and the web component's attributes are checked against their schemas before anything reads
// them. Property-based (fast-check): values generated from the schemas decode to themselves, and
// damaged or random ones decode to a valid object or to a message naming the field, never a throw.
// Also: the issue-34 cases themselves, fetchLesson's timeout, and docs/formats.md against the schemas.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { test } from 'node:test';

import fc from 'fast-check';

import { dist, repo } from './helpers.mjs';
import { damaged, damagedText, lessonFileArb, linkStateArb, linkText, paperArb, studentStateArb } from './arbitraries.mjs';
import { decodesSafely, readsLessonSafely } from './decoding.mjs';

const share = await import(`${dist}share.js`);
const formats = await import(`${dist}formats.js`);
const { readAttribute } = await import(`${dist}component.js`);
const { loadAttention, findPreset, presetProblem } = await import(`${dist}node.js`);
const engine = await loadAttention();

const RUNS = Number(process.env.FC_RUNS ?? 150);
const json = (v) => JSON.parse(JSON.stringify(v));

test("valid link states, students' papers and lesson files from the schemas pass their own check and round-trip", async () => {
  await fc.assert(
    fc.asyncProperty(linkStateArb, fc.constantFrom(1, 2), async (state, version) => {
      const plain = json(state);
      assert.equal(formats.check(formats.linkStateSchema, plain).error, undefined);
      const back = await share.decodeStateString(await linkText(plain, version));
      assert.deepEqual(back.state, plain);
    }),
    { numRuns: RUNS },
  );
  await fc.assert(
    fc.asyncProperty(studentStateArb, async (state) => {
      const plain = json(state);
      assert.deepEqual(share.checkPaper(plain.student), { paper: plain.student });
      assert.deepEqual((await share.decodeStateString(await linkText(plain, 2))).state, plain);
    }),
    { numRuns: RUNS },
  );
  fc.assert(
    fc.property(lessonFileArb, (file) => {
      const plain = json(file);
      const lesson = share.readLesson(JSON.stringify(plain), 'l.json');
      assert.deepEqual(lesson.problem, plain.problem);
      assert.deepEqual(lesson.lesson, plain.lesson ?? {});
    }),
    { numRuns: RUNS },
  );
});

test('damaged link states decode to a state that fits or a message naming the field, never a throw', async () => {
  await fc.assert(
    fc.asyncProperty(damaged(linkStateArb.map(json)), fc.constantFrom(1, 2), async (obj, version) => {
      const r = await decodesSafely(await linkText(obj, version));
      if (r.state === null) assert.match(r.error, /^This link is damaged \(.+\); showing the default example instead\.$/s);
    }),
    { numRuns: RUNS },
  );
});

test("damaged students' links: a message naming the student. field, marked as a students' link", async () => {
  await fc.assert(
    fc.asyncProperty(damaged(studentStateArb.map(json)), async (obj) => {
      const r = await decodesSafely(await linkText(obj, 2));
      if (r.state === null) {
        assert.equal(r.student, share.isStudentObject(obj));
        if (r.student && obj.student) assert.match(r.reason, /^(student\b|the state)|\bstudent/);
      } else if (r.state.student) {
        assert.equal(share.checkPaper(r.state.student).error, undefined);
      }
    }),
    { numRuns: RUNS },
  );
  // Papers alone, damaged: checkPaper gives the paper or a message, never a throw.
  fc.assert(
    fc.property(damaged(paperArb.map(json)), (paper) => {
      const r = share.checkPaper(paper);
      assert.ok(r.paper || /^student\b/.test(r.error), JSON.stringify(r));
    }),
    { numRuns: RUNS },
  );
});

test('damaged and random link texts: a state that fits or a message, never a throw', async () => {
  const texts = fc.oneof(
    damagedText(
      linkStateArb
        .chain((s) => fc.constantFrom(1, 2).map((v) => [json(s), v]))
        .map(([s, v]) => (v === 1 ? `v1=${Buffer.from(JSON.stringify(s)).toString('base64url')}` : null))
        .filter(Boolean),
    ),
    fc.string({ maxLength: 40, unit: 'binary' }),
    fc.string({ maxLength: 40 }).map((t) => `v2=${t}`),
    fc.base64String({ maxLength: 60 }).map((t) => `#v2=${t.replace(/=+$/, '')}`),
    fc.base64String({ maxLength: 60 }).map((t) => `v1=${t}`),
    fc.integer({ min: -5, max: 99 }).map((v) => `v${v}=e30`),
  );
  await fc.assert(
    fc.asyncProperty(texts, async (text) => {
      await decodesSafely(text);
    }),
    { numRuns: RUNS * 2 },
  );
  // v2 texts damaged after compression (deflate's own bytes changed or cut).
  const v2 = await linkText(json(share.problemToState(presetProblem(findPreset('lookup'), engine).problem)), 2);
  await fc.assert(
    fc.asyncProperty(damagedText(fc.constant(v2)), async (text) => {
      await decodesSafely(text);
    }),
    { numRuns: RUNS },
  );
});

test('damaged and random lesson files: the lesson, or an Error whose message names the file, never a fault', () => {
  const where = 'l.json';
  const reads = (input) => {
    readsLessonSafely(input, where);
  };
  fc.assert(
    fc.property(damaged(lessonFileArb.map(json)), (obj) => {
      reads(obj);
      reads(JSON.stringify(obj));
    }),
    { numRuns: RUNS },
  );
  fc.assert(fc.property(damagedText(lessonFileArb.map((f) => JSON.stringify(json(f)))), reads), { numRuns: RUNS });
  fc.assert(fc.property(fc.jsonValue({ maxDepth: 3 }), reads), { numRuns: RUNS });
});

test("the component's attributes: whatever their text, a value the schema takes (or the default) and a note naming the attribute", async () => {
  const names = Object.keys(formats.componentAttributesSchema.fields);
  fc.assert(
    fc.property(
      fc.constantFrom(...names),
      fc.oneof(fc.string({ maxLength: 30 }), fc.constantFrom('scores, weights', '0', '13', '2 x', 'all Q', 'Q,,K', '')),
      (name, text) => {
        const { value, note } = readAttribute(name, text);
        if (value !== null) assert.equal(formats.check(formats.componentAttributesSchema, { [name]: value }).error, undefined);
        if (note !== null) assert.ok(note.startsWith(`${name}="`), note);
      },
    ),
    { numRuns: RUNS * 2 },
  );
  assert.deepEqual(readAttribute('decimals', 'abc'), { value: null, note: 'decimals="abc": expected a whole number from 0 to 12' });
  assert.deepEqual(readAttribute('steps', 'scores scroes'), {
    value: ['scores'],
    note: 'steps="scores scroes": "scroes" is not a step id (Q, K, V, scores, scaled, weights, output, …); left out',
  });
  assert.deepEqual(readAttribute('heads', '1 0 x'), {
    value: [1],
    note: 'heads="1 0 x": 0, "x" are not a head number from 1; left out',
  });
  // The notes in the component's language: the values and symbols as written, the words translated.
  const { createTranslator, english, loadCatalogue } = await import(`${dist}i18n.js`);
  const fr = createTranslator('fr', await loadCatalogue('fr'));
  assert.equal(
    readAttribute('steps', 'scores scroes', fr).note,
    'steps="scores scroes" : "scroes" n’est pas un id d’étape (Q, K, V, scores, scaled, weights, output, …) ; ignoré',
  );
  assert.equal(
    readAttribute('editable', 'Q Z Y', fr).note,
    'editable="Q Z Y" : "Z", "Y" ne sont pas un nom d’entrée (Q, X, W_Q, …) ou all ; ignorés',
  );
  assert.equal(readAttribute('decimals', 'abc', fr).note, 'decimals="abc" : un nombre entier de 0 à 12 est attendu');
  // English's words for what a list takes are the schema's (formats.js), one concept in one place.
  for (const name of ['steps', 'inputs', 'editable', 'heads'])
    assert.equal(
      english(`component.attribute.expected.${name === 'editable' ? 'inputs' : name}`),
      formats.componentAttributesSchema.fields[name].item.expected,
      name,
    );
});

// ---- the cases, exactly ----------------------------------------------------------------------

test("a students' link whose steps are well formed but for the type of their cells: a message naming the cells", async () => {
  const step = {
    key: 'weights:0',
    title: 'Attention weights',
    tex: '',
    rows: ['a'],
    cols: ['b', 'c'],
    cells: [[null, null]],
    answers: [{ r: 0, c: [0, 1], at: [0, 0], hash: '00' }],
  };
  const paper = { v: 2, salt: '0123456789abcdef', tolerance: 0.01, kdf: { N: 2, r: 1, p: 1 }, decimals: 4, given: [], steps: [step] };
  assert.deepEqual(share.checkPaper(paper), { paper });
  for (const [cells, reason] of [
    ['ab', 'student.steps[0].cells is "ab"; expected a list of rows'],
    [5, 'student.steps[0].cells is 5; expected a list of rows'],
    [[[null, {}]], 'student.steps[0].cells[0][1] is an object; expected a number or "inf", "-inf", "nan" or null'],
    [[null], 'student.steps[0].cells[0] is null; expected a list, each a number or "inf", "-inf", "nan" or null'],
    [[[null]], 'student.steps[0].cells[0] is a row of 1; expected one number per label of "cols" (2)'],
  ]) {
    const r = await share.decodeStateString(await linkText({ student: { ...paper, steps: [{ ...step, cells }] } }, 2));
    assert.equal(r.state, null);
    assert.equal(r.student, true);
    assert.equal(r.reason, reason);
    assert.equal(r.error, `This link is damaged (${reason}); showing the default example instead.`);
  }
});

test('fetchLesson gives up on a server that never answers, naming the address', async () => {
  const sockets = new Set();
  const server = createServer(() => {
    /* never answers */
  });
  server.on('connection', (s) => sockets.add(s));
  await new Promise((done) => server.listen(0, '127.0.0.1', done));
  const url = `http://127.0.0.1:${server.address().port}/lesson.json`;
  try {
    const started = Date.now();
    await assert.rejects(share.fetchLesson(url, { timeout: 300 }), {
      message: `the lesson at ${url} could not be fetched: no answer within 0.3 seconds`,
    });
    assert.ok(Date.now() - started < 5000);
    assert.equal(share.LESSON_TIMEOUT_MS, 15000);
  } finally {
    for (const s of sockets) s.destroy();
    server.close();
  }
});

test("old links keep decoding: every preset's state, a teacher's exercise, notes with answers", async () => {
  for (const id of ['000', '002', '003', 'multihead', 'cross', 'lookup']) {
    const state = json(
      share.problemToState(presetProblem(findPreset(id), engine).problem, { tokens: { q: ['a', 'b'] }, decimals: 3, preset: id }),
    );
    assert.deepEqual((await share.decodeStateString(await linkText(state, 1))).state, state, id);
  }
  const state = {
    preset: '004',
    exercise: { steps: ['weights:0', 'output:-1'], tolerance: 0.001, cells: { 'weights:0': [[0, 1]] }, seed: 3, teacher: true },
    lesson: {
      'weights:0': { say: 'Look.', ask: 'Which?', answer: { kind: 'key', row: 1 } },
      'output:-1': { ask: 'What?', answer: { kind: 'number', row: 1, col: 1, tolerance: 0.1 } },
    },
    open: { step: 'weights', head: 0, row: 1, col: 0 },
    collapsed: ['scores:0'],
    hide: { inputs: ['W_Q'], steps: ['scaled'], chrome: true },
    options: {
      keepMask: [
        [1, 0],
        [1, 1],
      ],
      mask: 'keep',
      rope: { base: 100, style: 'half' },
      window: [2, null],
    },
  };
  assert.deepEqual((await share.decodeStateString(await linkText(state, 2))).state, state);
  // Keys this version does not know are dropped, not refused.
  assert.deepEqual((await share.decodeStateString(await linkText({ ...state, later: { x: 1 } }, 2))).state, state);
});

// ---- docs/formats.md describes every field --------------------------------------------------------

test('docs/formats.md names every field of every schema', () => {
  const doc = readFileSync(`${repo}docs/formats.md`, 'utf8');
  const fields = new Set();
  const walk = (s, seen = new Set()) => {
    if (!s || typeof s !== 'object' || seen.has(s)) return;
    seen.add(s);
    if (s.type === 'object')
      for (const [k, f] of Object.entries(s.fields)) {
        fields.add(k);
        walk(f, seen);
      }
    for (const k of ['item', 'value', 'unknown']) walk(s[k], seen);
    for (const c of s.items ?? s.options ?? []) walk(c, seen);
    for (const [, c] of s.cases ?? []) walk(c, seen);
  };
  for (const s of [
    formats.linkStateSchema,
    formats.paperSchema,
    formats.lessonFileSchema,
    formats.embedFlagsSchema,
    formats.componentAttributesSchema,
    formats.componentScriptSchema,
    formats.playgroundChangesSchema,
    formats.playgroundWeightsSchema,
    formats.playgroundLessonSchema,
  ])
    walk(s);
  const missing = [...fields].filter((f) => !doc.includes(`\`${f}\``));
  assert.deepEqual(missing, [], 'fields docs/formats.md does not name (in backticks)');
});
