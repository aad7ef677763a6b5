// Everything a student or teacher can be handed fails safe (issue 34), in Chromium:
//   node --test --test-concurrency=1 tests/browser/fail-safe.test.mjs      (needs dist/)
// - a students' link whose steps are well formed but for the type of their cells: a message in
//   the exercise's place naming the field, a page that becomes ready, no uncaught error (it was a
//   blank page with a TypeError);
// - ?lesson=URL at a server that never answers: the default example drawn at once under a note
//   naming the URL, then, after fetchLesson's timeout (the page's clock moved on), a message naming
//   the URL (it was a page with no steps and no message, waiting forever);
// - a sample of links, students' links and lesson files generated from the schemas and damaged
//   (tests/js/arbitraries.mjs, a fixed seed): each leaves a working page with the message the
//   package's decoder gives for it (computed here), and nothing injected runs.
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join, resolve } from 'node:path';

import fc from 'fast-check';

import { damaged, damagedText, lessonFileArb, linkStateArb, linkText, studentStateArb } from '../js/arbitraries.mjs';
import { browserSuite } from './server.mjs';

const root = resolve(import.meta.dirname, '..', '..');
const share = await import(join(root, 'dist', 'share.js'));
const pkg = await import(join(root, 'dist', 'node.js'));
const engine = await pkg.loadAttention();

const test = browserSuite('fail-safe', {
  lib: join(root, 'dist'),
  contextPerTest: true,
  contextOptions: { viewport: { width: 1280, height: 900 } },
  screenshots: 'fail-safe-',
  consoleTypes: ['error'],
});

const json = (v) => JSON.parse(JSON.stringify(v));
const DEFAULT_PRESET = 'lookup';

async function open(page, url, timeout = 20000) {
  await page.goto(url);
  await page.waitForSelector('body[data-ready="true"]', { timeout });
}

/** What a page shows: its messages, the example chosen, step cards, an exercise, a payload that ran. */
const seen = (page) =>
  page.evaluate(() => ({
    status: document.getElementById('status')?.textContent ?? '',
    linkError: document.getElementById('link-error')?.textContent ?? '',
    lessonError: document.querySelector('#lesson-error p')?.textContent ?? '',
    exerciseError: document.querySelector('#exercise .error')?.textContent ?? '',
    exercise: Boolean(document.querySelector('#exercise.student-exercise')),
    preset: document.getElementById('preset')?.value ?? null,
    steps: document.querySelectorAll('#step-list article.step').length,
    pwned: window.__pwned,
  }));

const PAPER = {
  v: 2,
  salt: '0123456789abcdef',
  tolerance: 0.01,
  kdf: { N: 2, r: 1, p: 1 },
  decimals: 4,
  about: 'd_k = 2',
  given: [],
  steps: [
    {
      key: 'weights:0',
      title: 'Attention weights',
      tex: '',
      rows: ['a'],
      cols: ['b', 'c'],
      rowTitle: 'query',
      colTitle: 'key',
      cells: [[null, null]],
      answers: [{ r: 0, c: [0, 1], at: [0, 0], hash: '00' }],
    },
  ],
};

test("a students' link whose cells are of the wrong type: the exercise says which field, the page is ready, nothing throws", async ({
  page,
  base,
}) => {
  // The well-formed paper opens as an exercise.
  await open(page, `${base}#${await linkText({ student: PAPER }, 2)}`);
  assert.equal(await page.locator('#exercise input.answer').count(), 2);
  for (const [cells, reason] of [
    ['ab', 'student.steps[0].cells is "ab"; expected a list of rows'],
    [[[null, { x: 1 }]], 'student.steps[0].cells[0][1] is an object; expected a number or "inf", "-inf", "nan" or null'],
    [[[null]], 'student.steps[0].cells[0] is a row of 1; expected one number per label of "cols" (2)'],
  ]) {
    await page.goto('about:blank');
    await open(page, `${base}#${await linkText({ student: { ...PAPER, steps: [{ ...PAPER.steps[0], cells }] } }, 2)}`);
    const view = await seen(page);
    assert.equal(view.exerciseError, `This exercise link is damaged (${reason}): ask your teacher for the link again.`);
    assert.equal(await page.locator('#exercise input.answer').count(), 0);
    // The student's page draws nothing of the teacher's: no steps, no editors.
    assert.equal(view.steps, 0);
    assert.equal(await page.locator('#inputs').count(), 0);
  }
});

test('?lesson=URL that never answers: the default example at once under a note naming the URL; after the timeout, a message naming it', async ({
  page,
  base,
}) => {
  const sockets = new Set();
  const requests = [];
  const hang = createServer((req) => {
    requests.push(req.url); /* never answers */
  });
  hang.on('connection', (s) => sockets.add(s));
  await new Promise((done) => hang.listen(0, '127.0.0.1', done));
  const url = `http://127.0.0.1:${hang.address().port}/lesson.json`;
  try {
    await page.clock.install(); // time runs as usual; fastForward below jumps to the timeout
    await page.goto(`${base}?lesson=${encodeURIComponent(url)}`);
    await page.waitForSelector('#lesson-loading');
    assert.equal(
      await page.$eval('#lesson-loading', (e) => e.textContent),
      `Loading the lesson from ${url}… Until it comes, the page shows the default example.`,
    );
    assert.equal(await page.$eval('#lesson-loading', (e) => e.getAttribute('role')), 'status');
    // Drawn underneath while the lesson loads: the default example's steps and numbers.
    await page.waitForFunction(() => document.querySelectorAll('#step-list article.step td').length > 0);
    assert.equal(await page.$eval('#preset', (s) => s.value), DEFAULT_PRESET);
    assert.deepEqual(requests, ['/lesson.json']);
    assert.equal(await page.$eval('body', (b) => b.dataset.ready ?? null), null, 'ready before the lesson settled');
    await page.clock.fastForward(share.LESSON_TIMEOUT_MS + 1000);
    await page.waitForSelector('body[data-ready="true"]');
    const view = await seen(page);
    assert.equal(
      view.lessonError,
      `The lesson at ${url} could not be fetched: no answer within 15 seconds. The page shows the default example instead.`,
    );
    assert.equal(await page.locator('#lesson-loading').count(), 0);
    assert.equal(view.preset, DEFAULT_PRESET);
    assert.ok(view.steps >= 5, `${view.steps} step cards`);
    // The page works: another example is drawn when chosen.
    await page.selectOption('#preset', '000');
    await page.waitForFunction(() => document.querySelector('#step-list article[data-key="scores:0"] td') !== null);
  } finally {
    for (const s of sockets) s.destroy();
    hang.close();
  }
});

// ---- a sample of generated, damaged inputs ---------------------------------------------------------

const SEED = 34;
const sample = (arb, n) => fc.sample(arb, { numRuns: n, seed: SEED });

/** What the page must show for a link text: the package's decoding of it, done here. */
async function expectLink(text) {
  const r = await share.decodeStateString(text);
  return { r, text };
}

test("a sample of damaged links and students' links: each a working page with the decoder's message; nothing injected runs", async ({
  page,
  base,
}) => {
  const texts = [];
  for (const obj of sample(damaged(linkStateArb.map(json)), 5)) texts.push(await linkText(obj, 2));
  for (const obj of sample(damaged(studentStateArb.map(json)), 5)) texts.push(await linkText(obj, 2));
  const v1 = `v1=${Buffer.from(JSON.stringify({ preset: '000', student: PAPER })).toString('base64url')}`;
  texts.push(...sample(damagedText(fc.constant(v1)), 3), await linkText({ ...json(PAPER), v: 3 }, 2), 'v2=not-deflate', 'v9=e30');
  let messages = 0;
  for (const text of texts) {
    const { r } = await expectLink(text);
    await page.goto('about:blank');
    await open(page, `${base}#${text}`);
    const view = await seen(page);
    const where = `link ${text.slice(0, 60)}…`;
    assert.equal(view.pwned, undefined, `${where}: a payload ran`);
    if (r.state === null && r.student) {
      messages++;
      assert.equal(view.exerciseError, `This exercise link is damaged (${r.reason}): ask your teacher for the link again.`, where);
    } else if (r.state === null) {
      messages++;
      assert.equal(view.status, r.error, where);
      assert.equal(view.preset, DEFAULT_PRESET, where);
      assert.ok(view.steps > 0, `${where}: no steps drawn`);
    } else {
      // A state that fits: the page draws it (its problem may still be refused by the engine,
      // with the engine's message at the input or option).
      assert.ok(
        view.exercise || view.steps > 0 || (await page.locator('.error:not([hidden])').count()) > 0,
        `${where}: nothing drawn, no message`,
      );
    }
  }
  assert.ok(messages >= 5, `only ${messages} of ${texts.length} gave a message: the sample is too gentle`);
});

test('a sample of damaged lesson files at ?lesson=URL: the lesson, or the default example with a message naming the file', async ({
  page,
  base,
  siteDir,
}) => {
  mkdirSync(join(siteDir, 'lessons'), { recursive: true });
  const files = [
    ...sample(damaged(lessonFileArb.map(json)), 5).map((obj) => JSON.stringify(obj)),
    ...sample(damagedText(lessonFileArb.map((f) => JSON.stringify(json(f)))), 3),
  ];
  let messages = 0;
  for (const [i, text] of files.entries()) {
    const name = `damaged-${i}.json`;
    writeFileSync(join(siteDir, 'lessons', name), text);
    const url = `${base}lessons/${name}`;
    let problem = null;
    try {
      const lesson = share.readLesson(text, url);
      const misfit = share.lessonTraceError(lesson.lesson, engine.run(lesson.problem), url);
      if (misfit) throw new Error(misfit);
    } catch (e) {
      problem = e.message;
    }
    await page.goto('about:blank');
    await open(page, `${base}?lesson=lessons/${name}`);
    const view = await seen(page);
    assert.equal(view.pwned, undefined, `${name}: a payload ran`);
    if (problem) {
      messages++;
      assert.ok(
        view.lessonError.startsWith('The lesson could not be opened. ') && view.lessonError.includes(url),
        `${name}: ${view.lessonError}`,
      );
      assert.equal(view.preset, DEFAULT_PRESET, name);
    } else {
      assert.equal(view.lessonError, '', name);
    }
    assert.ok(view.steps > 0, `${name}: no steps drawn`);
  }
  assert.ok(messages >= 3, `only ${messages} of ${files.length} gave a message`);
});
