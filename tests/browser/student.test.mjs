// A student's exercise view and the keyboard (issue 15), in Chromium via playwright-core:
//   node --test --test-concurrency=1 tests/browser/student.test.mjs      (needs dist/)
// - a teacher's exercise, opened by a student from the students' link: the exercise on the first
//   screen, no control, export, copy or link that reveals a hidden number (the DOM, the clipboard
//   and the link searched for them), a row's hidden numbers checked as one answer against a slow
//   hash (scrypt, recomputed here), a wrong and a right answer marked; an old exercise link (the
//   whole problem in it) and a students' link of the first format (a SHA-256 per cell) open and
//   check the same way; a link asking for an excessive hash cost is damaged; the teacher's own link
//   keeps the teacher's view
// - the skip link moves the focus and keeps the state in the URL across a reload
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { join, resolve } from 'node:path';

import { scrypt } from '@noble/hashes/scrypt.js';

import { WCAG_AA, axeFindings, browserSuite } from './server.mjs';

const root = resolve(import.meta.dirname, '..', '..');
const pkg = await import(join(root, 'dist', 'node.js'));
const share = await import(join(root, 'dist', 'share.js'));
const engine = await pkg.loadAttention();

const test = browserSuite('student', {
  lib: join(root, 'dist'),
  contextPerTest: true,
  screenshots: 'student-',
  contextOptions: { viewport: { width: 1280, height: 900 }, permissions: ['clipboard-read', 'clipboard-write'], acceptDownloads: true },
});

/** axe-core's WCAG 2.x A/AA rules on the whole page: no violation at all. */
async function axe(page, what) {
  const found = await axeFindings(page, { tags: [...WCAG_AA, 'wcag22aa'] });
  assert.deepEqual(
    found.map((v) => `${v.id} (${v.targets[0]})`),
    [],
    `axe (${what})`,
  );
}

async function open(page, url) {
  await page.goto(url);
  await page.waitForSelector('body[data-ready="true"]');
}

/** The weights of example 004 after "New problem" from seed 3, one decimal (X, W_Q, W_K, W_V: 2 × 2). */
function seededWeights() {
  const drawn = engine
    .random(
      3,
      [0, 1, 2, 3].map(() => ({ kind: 'randn', shape: [2, 2] })),
    )
    .map((m) => m.map((row) => row.map((x) => Math.round(x * 10) / 10 || 0)));
  const [X, W_Q, W_K, W_V] = drawn;
  const trace = engine.run({ X, W_Q, W_K, W_V, options: {} });
  return trace.steps.find((s) => s.id === 'weights').data;
}

/** Ways a hidden number could be written down: 4 to 6 decimals, and its first digits. */
const spellings = (x) => [4, 5, 6].map((d) => x.toFixed(d)).concat(String(x).slice(0, 9));

/** The teacher's page with an exercise on the weights of seed 3's problem. */
async function teacherExercise(page, base) {
  await open(page, `${base}index.html`);
  await page.selectOption('#preset', '004');
  await page.click('#exercise-setup summary');
  await page.fill('#ex-seed', '3');
  await page.click('#ex-new');
  await page.waitForFunction(() => /seed\(3\)/.test(document.querySelector('#recipe code')?.textContent ?? ''));
  await page.check('#ex-steps input[value="weights:0"]');
  await page.fill('#ex-tol', '0.01');
  await page.click('#ex-start');
  await page.waitForSelector('#exercise:not([hidden]) input.answer');
}

test("a student's link shows the exercise first, reveals no hidden number, and marks right and wrong answers", async ({
  page,
  base,
  context,
}) => {
  const weights = seededWeights();
  // The weights are not round numbers (they could not be told from other numbers on the page).
  for (const w of weights.flat()) assert.ok(Math.abs(w * 100 - Math.round(w * 100)) > 1e-3, `weight ${w}`);
  await teacherExercise(page, base);
  await page.click('#ex-student-link');
  await page.waitForFunction(() => /copied/.test(document.querySelector('#ex-result')?.textContent ?? ''));
  const link = await page.evaluate(() => navigator.clipboard.readText());
  assert.match(link, /#v\d=/);
  // The link holds the paper only: no problem, no exercise to switch, no hidden number.
  const { state } = await share.decodeStateString(link.split('#')[1]);
  assert.deepEqual(Object.keys(state), ['student']);
  const linkText = JSON.stringify(state);
  for (const w of weights.flat()) for (const s of spellings(w)) assert.ok(!linkText.includes(s), `the link holds ${s}`);
  assert.equal(state.student.steps.length, 1);
  assert.equal(state.student.steps[0].cells.flat().filter((c) => c === null).length, 4);
  // Each row's two hidden weights are one answer, hashed with scrypt at the paper's cost: the
  // hash of the row's grid points (2 × tolerance wide, centred by `at` on the exact weights).
  const paper = state.student;
  assert.equal(paper.v, 2);
  assert.deepEqual(paper.kdf, { N: 8192, r: 8, p: 1 });
  assert.equal('hashes' in paper.steps[0], false);
  const answers = paper.steps[0].answers;
  assert.deepEqual(
    answers.map((a) => [a.r, a.c]),
    [
      [0, [0, 1]],
      [1, [0, 1]],
    ],
  );
  const answerHash = (r, points) =>
    Buffer.from(scrypt(`weights:0|${r}|${points.join(',')}`, `${paper.salt}|weights:0|${r}`, { ...paper.kdf, dkLen: 8 })).toString('hex');
  for (const a of answers) {
    const points = a.c.map((c, i) => Math.round(weights[a.r][c] / (2 * paper.tolerance) - a.at[i]));
    assert.equal(answerHash(a.r, points), a.hash, `row ${a.r + 1}'s hash`);
    assert.notEqual(answerHash(a.r, [points[0] + 1, points[1]]), a.hash);
  }

  const student = await context.newPage();
  await open(student, link);
  // The first screen: the exercise's task and its boxes.
  const title = await student.locator('#exercise-title').boundingBox();
  assert.ok(title && title.y < 300, `the exercise starts at y=${title?.y}`);
  const firstBox = await student.locator('#exercise input.answer').first().boundingBox();
  assert.ok(firstBox && firstBox.y + firstBox.height < 900, `the first answer box is at y=${firstBox?.y}, below the first screen`);
  assert.match(
    await student.locator('#exercise .task').textContent(),
    /missing numbers of Attention weights.*A row's missing numbers are checked together/s,
  );
  // The line about the problem: the paper's English as written, and in the student's language.
  assert.match(paper.about, /^d_k = 2, scale 0\.7\d*$/);
  assert.equal(await student.locator('#exercise .task + .hint').textContent(), paper.about);
  const french = await context.newPage();
  await open(french, link.replace('#', '?lang=fr#'));
  assert.equal(await french.locator('#exercise .task + .hint').textContent(), paper.about.replace('scale', 'échelle'));
  await french.close();
  // Nothing but the exercise: no editors, options, steps, share/export panel or teacher's buttons.
  assert.equal(
    await student
      .locator(
        '#setup, #inputs, #results, #lesson, #why, #share, #ex-reveal, #ex-choose, #ex-leave, #ex-student-link, [data-export], a[download]',
      )
      .count(),
    0,
  );
  assert.deepEqual(await student.$$eval('button', (b) => b.map((e) => e.textContent.trim())), ['Check']);
  assert.deepEqual(await student.$$eval('a', (a) => a.map((e) => e.getAttribute('href'))), ['#exercise']);
  // The given numbers: the inputs, the scores and scaled scores; not the output (made from the weights).
  const given = await student.$$eval('.ex-given h4', (h) => h.map((e) => e.firstChild.textContent.trim()));
  assert.deepEqual(given, ['X', 'W_Q', 'W_K', 'W_V', 'Queries', 'Keys', 'Values', 'Scores', 'Scaled scores']);
  // The DOM, and everything the clipboard gets from "select all, copy", hold no hidden number.
  const html = await student.evaluate(() => document.documentElement.outerHTML);
  await student.locator('body').click({ position: { x: 5, y: 5 } });
  await student.keyboard.press('Control+A');
  await student.keyboard.press('Control+C');
  const copied = await student.evaluate(() => navigator.clipboard.readText());
  for (const w of weights.flat()) {
    for (const s of spellings(w)) {
      assert.ok(!html.includes(s), `the DOM holds ${s}`);
      assert.ok(!copied.includes(s), `the copied page holds ${s}`);
    }
  }
  // Answers: one wrong by 0.05, the others right to 3 decimals (within ±0.01).
  const box = (r, c) => student.locator(`#exercise input[data-id="weights:0/${r}/${c}"]`);
  for (let r = 0; r < 2; r++)
    for (let c = 0; c < 2; c++) await box(r, c).fill((weights[r][c] + (r === 1 && c === 0 ? 0.05 : 0.003)).toFixed(3));
  await student.click('#ex-check');
  await student.waitForFunction(() => /right/.test(document.querySelector('#ex-result').textContent)); // after 'Checking…'
  assert.match(
    await student.locator('#ex-result').textContent(),
    /^1 of 2 answers right \(an answer is a row's missing numbers, checked together\)\. First to fix: Attention weights, row 2 \(.+\), columns 1, 2 \(.+, .+\): at least one is off — you wrote [\d.]+, [\d.]+\. Hint: this row sums to 1\.05\d\d; a row of weights sums to 1\.$/,
  );
  assert.ok(await box(1, 0).evaluate((i) => i.classList.contains('wrong') && document.activeElement === i));
  assert.ok(await box(1, 1).evaluate((i) => i.classList.contains('wrong')), "the wrong number's row is marked as a whole");
  assert.ok(await box(0, 0).evaluate((i) => i.classList.contains('right')));
  assert.ok(await box(0, 1).evaluate((i) => i.classList.contains('right')));
  await student.screenshot({ path: join(root, 'test-artifacts', 'student-01-wrong.png') });
  await box(1, 0).fill(weights[1][0].toFixed(4).replace('.', ',')); // a decimal comma reads too
  await student.keyboard.press('Enter');
  await student.waitForFunction(() => /Well done/.test(document.querySelector('#ex-result').textContent));
  assert.equal(await student.locator('#ex-result').textContent(), 'All 2 answers right (4 numbers). Well done!');
  assert.ok(await box(1, 0).evaluate((i) => i.classList.contains('right')));
  await axe(student, 'the student view, desktop');
  // On a phone: the task and the first box on the first screen, no sideways scroll of the page.
  await student.setViewportSize({ width: 390, height: 844 });
  await student.reload();
  await student.waitForSelector('body[data-ready="true"]');
  const phoneBox = await student.locator('#exercise input.answer').first().boundingBox();
  assert.ok(phoneBox.y + phoneBox.height < 844 - 40, `on a phone the first answer box is at y=${phoneBox.y}`);
  assert.ok(
    await student.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth),
    'the page scrolls sideways on a phone',
  );
  await axe(student, 'the student view, phone');
  await student.screenshot({ path: join(root, 'test-artifacts', 'student-03-phone.png') });
  await student.close();

  // During the exercise "Copy link" hands out the students' link; the teacher's own link (its
  // own button) opens the teacher's view again, answers and all.
  assert.equal(await page.$eval('#copy-link', (b) => b.textContent), "Copy the students' link");
  await page.click('#copy-teacher-link');
  await page.waitForFunction(() => /#v\d+=/.test(document.querySelector('#export-preview')?.value ?? ''));
  const teacherLink = await page.$eval('#export-preview', (t) => t.value);
  const teacher = await context.newPage();
  await open(teacher, teacherLink);
  await teacher.waitForSelector('#ex-reveal');
  assert.ok(await teacher.locator('#share').isVisible());
  await teacher.close();
});

test("during an exercise the address bar holds the students' link; the teacher's view is kept in its tab", async ({
  page,
  base,
  context,
}) => {
  await teacherExercise(page, base);
  // The address bar: the students' paper only (what a teacher would naturally copy and hand out).
  const keysOf = async (url) => Object.keys((await share.decodeStateString(url.split('#')[1] ?? '')).state ?? {});
  for (let t = 0; t < 40 && (await keysOf(page.url())).join() !== 'student'; t++) await page.waitForTimeout(250);
  const address = page.url();
  assert.deepEqual(await keysOf(address), ['student'], "the address bar holds the teacher's view");
  // Share's "Copy link" and the panel's button give that same link.
  await page.click('#copy-link');
  await page.waitForFunction(() => /students' link copied/.test(document.querySelector('#share-status')?.textContent ?? ''), null, {
    timeout: 20000,
  });
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), address);
  // Opened anywhere else (a new tab, another browser): the students' exercise, only Check.
  const other = await context.newPage();
  await open(other, address);
  assert.deepEqual(await other.$$eval('button', (b) => b.map((e) => e.textContent.trim())), ['Check']);
  await other.close();
  // The teacher's own tab, reloaded: the teacher's view again, the address unchanged.
  await page.reload();
  await page.waitForSelector('body[data-ready="true"]');
  await page.waitForSelector('#ex-reveal');
  await page.waitForTimeout(600);
  assert.equal(page.url(), address);
  // Leaving the exercise gives the address the problem's own link again.
  await page.click('#ex-leave');
  await page.waitForFunction((a) => location.href !== a, address);
  assert.equal((await share.decodeStateString(page.url().split('#')[1])).state.student, undefined);
});

test("a 4-token exercise (weights and output) fits a phone; the teacher's view says it is not for the students", async ({
  page,
  base,
  context,
}) => {
  await open(page, `${base}index.html`);
  await page.selectOption('#preset', '000');
  await page.check('#opt-causal');
  await page.click('#exercise-setup summary');
  await page.fill('#ex-seed', '7');
  await page.click('#ex-new');
  await page.waitForFunction(() => /seed\(7\)/.test(document.querySelector('#recipe code')?.textContent ?? ''));
  await page.check('#ex-steps input[value="weights:0"]');
  await page.check('#ex-steps input[value="output:-1"]');
  await page.click('#ex-start');
  await page.waitForSelector('#exercise:not([hidden]) input.answer');
  // The teacher's view: said first, with the students' link beside it; Share's "Copy link" gives the students' link.
  assert.equal(await page.$eval('#exercise-title', (h) => h.textContent), "Exercise: your teacher's view");
  assert.match(await page.$eval('#exercise .ex-handout', (e) => e.textContent), /Not for the students/);
  await page.click('#copy-link');
  await page.waitForFunction(() => /students' link copied/.test(document.querySelector('#share-status')?.textContent ?? ''), null, {
    timeout: 20000,
  });
  const link = await page.evaluate(() => navigator.clipboard.readText());
  assert.deepEqual(
    Object.keys((await share.decodeStateString(link.split('#')[1])).state),
    ['student'],
    "Copy link during an exercise did not copy the students' link",
  );
  // The students' link on a 390 px phone: no sideways page scroll, every answer box inside its panel.
  const student = await context.newPage();
  await student.setViewportSize({ width: 390, height: 844 });
  await open(student, link);
  const fit = await student.evaluate(() => {
    const panel = document.getElementById('exercise').getBoundingClientRect();
    const boxes = [...document.querySelectorAll('#exercise input.answer')].map(
      (i) => i.closest('.table-scroll').getBoundingClientRect().right,
    );
    return {
      overflow: document.documentElement.scrollWidth - window.innerWidth,
      panel: panel.right,
      boxes: Math.max(...boxes),
      n: boxes.length,
    };
  });
  assert.ok(fit.overflow <= 1, `the students' page is ${fit.overflow}px wider than the phone`);
  // The given Q, K and V name their rows by token, as the answers' rows do (not "1 2 3 4").
  const rowNames = await student.evaluate(() => {
    const heads = (table) => [...table.querySelectorAll('tbody th[scope="row"]')].map((t) => t.textContent);
    const given = Object.fromEntries(
      [...document.querySelectorAll('.ex-given .ex-step')].map((d) => [
        d.querySelector('h4').firstChild.textContent.trim(),
        heads(d.querySelector('table')),
      ]),
    );
    return { answers: heads(document.querySelector('#exercise .ex-step table')), Q: given.Q, K: given.K, V: given.V };
  });
  assert.ok(rowNames.answers.length === 4 && !/^\d+$/.test(rowNames.answers[0]), JSON.stringify(rowNames));
  assert.deepEqual([rowNames.Q, rowNames.K, rowNames.V], [rowNames.answers, rowNames.answers, rowNames.answers]);
  assert.ok(fit.n > 0 && fit.boxes <= fit.panel, `answer boxes past the panel: ${JSON.stringify(fit)}`);
  await axe(student, 'a 4-token exercise, phone');
  await student.screenshot({ path: join(root, 'test-artifacts', 'student-04-phone-4-tokens.png'), fullPage: true });
  await student.close();
});

test("no walkthrough export in an exercise: none in the student's view (even with ?walk=), none while the teacher's exercise is on", async ({
  page,
  base,
  context,
}) => {
  const weights = seededWeights();
  await teacherExercise(page, base);
  // The teacher's page with the exercise on: the walkthroughs open, their export row stays hidden.
  await page.click('#practice-open');
  await page.click('#pr-tab-decode');
  await page.waitForSelector('#practice-body table');
  assert.equal(await page.locator('#practice-export button[data-walk-export]').count(), 4);
  assert.equal(await page.locator('#practice-export').isVisible(), false);
  let downloads = 0;
  page.on('download', () => {
    downloads++;
  });
  await page.$eval('#practice-export button[data-walk-export="csv"]', (b) => b.click()); // a script's click too
  await page.click('#ex-student-link');
  await page.waitForFunction(() => /copied/.test(document.querySelector('#ex-result')?.textContent ?? ''));
  const link = await page.evaluate(() => navigator.clipboard.readText());
  // The student's link asked to open a walkthrough: the panel is not there at all.
  const url = new URL(link);
  url.search = '?walk=decode';
  const student = await context.newPage();
  student.on('download', () => {
    downloads++;
  });
  await open(student, url.href);
  await student.waitForSelector('#exercise input.answer');
  assert.equal(await student.locator('#practice, #practice-export, #practice-open, [data-walk-export], [data-export]').count(), 0);
  assert.deepEqual(await student.$$eval('button', (b) => b.map((e) => e.textContent.trim())), ['Check']);
  const html = await student.evaluate(() => document.documentElement.outerHTML);
  for (const w of weights.flat()) for (const sp of spellings(w)) assert.ok(!html.includes(sp), `the DOM holds ${sp}`);
  await student.keyboard.press('ArrowRight'); // the walkthroughs' key does nothing here
  await student.waitForTimeout(300);
  assert.equal(downloads, 0);
  await student.close();
});

test("an old exercise link (the whole problem in it) opens as the student's view, with no way to reveal", async ({ page, base }) => {
  // Before the students' link, "Copy link" gave this: the problem and which steps are hidden.
  const old = { preset: '004', exercise: { steps: ['weights:0', 'output:-1'], tolerance: 0.001 } };
  await open(page, `${base}#v1=${Buffer.from(JSON.stringify(old)).toString('base64url')}`);
  await page.waitForSelector('#exercise input.answer');
  const trace = engine.run(pkg.presetProblem(pkg.findPreset('004'), engine).problem);
  const weights = trace.steps.find((s) => s.id === 'weights').data;
  const output = trace.steps.find((s) => s.id === 'output').data;
  assert.equal(await page.locator('#exercise input.answer').count(), weights.flat().length + output.flat().length);
  assert.deepEqual(await page.$$eval('button', (b) => b.map((e) => e.textContent.trim())), ['Check']);
  assert.equal(await page.locator('#share, #setup, #results').count(), 0);
  const html = await page.evaluate(() => document.documentElement.outerHTML);
  for (const x of [...weights.flat(), ...output.flat()]) assert.ok(!html.includes(x.toFixed(4)), `the DOM holds ${x.toFixed(4)}`);
  // Checked within ±0.001, a row at a time: the exact weights are right; one 0.002 off makes its row wrong.
  const weightBox = (r, c) => `#exercise input[data-id="weights:0/${r}/${c}"]`;
  for (const [c, w] of weights[0].entries()) await page.fill(weightBox(0, c), w.toFixed(4));
  await page.click('#ex-check');
  await page.waitForFunction(() => !/Checking/.test(document.querySelector('#ex-result').textContent));
  for (const c of weights[0].keys())
    assert.ok(await page.$eval(weightBox(0, c), (i) => i.classList.contains('right')), `weight 1, ${c + 1}`);
  assert.ok(await page.$eval(weightBox(1, 0), (i) => i.classList.contains('wrong')), 'an empty row is wrong');
  await page.fill(weightBox(0, 1), String(weights[0][1] + 0.002));
  await page.click('#ex-check');
  await page.waitForFunction(() => !/Checking/.test(document.querySelector('#ex-result').textContent));
  for (const c of weights[0].keys())
    assert.ok(await page.$eval(weightBox(0, c), (i) => i.classList.contains('wrong')), `weight 1, ${c + 1}`);
  // Only some numbers hidden: the others are given, at the page's decimals.
  const some = { preset: '004', exercise: { steps: ['output:-1'], cells: { 'output:-1': [[1, 0]] }, tolerance: 0.01 } };
  await page.goto('about:blank');
  await open(page, `${base}#v1=${Buffer.from(JSON.stringify(some)).toString('base64url')}`);
  assert.deepEqual(
    await page.$$eval('#exercise .ex-step[data-key="output:-1"] td.given', (t) => t.map((e) => e.textContent)),
    [output[0][0], output[0][1], output[1][1]].map((x) => x.toFixed(4)),
  );
  assert.equal(await page.locator('#exercise input.answer').count(), 1);
  assert.ok(!(await page.evaluate(() => document.documentElement.outerHTML)).includes(output[1][0].toFixed(4)));
  await page.fill('#exercise input.answer', output[1][0].toFixed(2));
  await page.click('#ex-check');
  await page.waitForFunction(() => /Well done/.test(document.querySelector('#ex-result').textContent));
  assert.equal(await page.locator('#ex-result').textContent(), 'All 1 right. Well done!');
});

test("a students' link of the first format (a SHA-256 per hidden cell) still opens and checks; an excessive hash cost is refused", async ({
  page,
  base,
}) => {
  // Made as the page made it before: per hidden cell, the first 16 hex digits of SHA-256 of
  // `salt|key|row|col|round(answer / s)`, s = tolerance / 10.
  const salt = '0123456789abcdef';
  const tolerance = 0.01;
  const exact = [0.2871, 0.7129];
  const hash = (c, x) =>
    createHash('sha256')
      .update(`${salt}|weights:0|0|${c}|${Math.round(x / (tolerance / 10))}`)
      .digest('hex')
      .slice(0, 16);
  const v1 = {
    v: 1,
    salt,
    tolerance,
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
        hashes: [[hash(0, exact[0]), hash(1, exact[1])]],
      },
    ],
  };
  const link = async (paper) => `${base}#${await share.encodeStateString({ student: paper })}`;
  await open(page, await link(v1));
  const box = (c) => `#exercise input[data-id="weights:0/0/${c}"]`;
  await page.fill(box(0), '0.29');
  await page.fill(box(1), '0.75');
  await page.click('#ex-check');
  await page.waitForFunction(() => /right/.test(document.querySelector('#ex-result').textContent));
  assert.equal(
    await page.locator('#ex-result').textContent(),
    '1 of 2 right. First to fix: Attention weights, row 1 (a), column 2 (c) — you wrote 0.75.',
  );
  await page.fill(box(1), '0.713');
  await page.click('#ex-check');
  await page.waitForFunction(() => /Well done/.test(document.querySelector('#ex-result').textContent));
  assert.equal(await page.locator('#ex-result').textContent(), 'All 2 right. Well done!');
  // A version-2 paper asking for scrypt's N = 2^20 (1 GB, seconds a check) would stall the page.
  const greedy = {
    ...v1,
    v: 2,
    kdf: { N: 2 ** 20, r: 8, p: 1 },
    steps: [{ ...v1.steps[0], hashes: undefined, answers: [{ r: 0, c: [0, 1], at: [0, 0], hash: '00' }] }],
  };
  await page.goto('about:blank');
  await open(page, await link(greedy));
  assert.equal(
    await page.locator('#exercise .error').textContent(),
    'This exercise link is damaged (student.kdf.N is 1048576; expected a power of 2 from 2 to 65,536): ask your teacher for the link again.',
  );
  assert.equal(await page.locator('#exercise input.answer').count(), 0);
});

test('the skip link moves the focus to the steps and keeps the state in the URL across a reload', async ({ page, base }) => {
  await open(page, base);
  await page.selectOption('#preset', '004');
  await page.fill('#tokens-q', 'the cat sat');
  await page.waitForFunction(() => /^#v\d=/.test(location.hash));
  await page.waitForTimeout(400); // the hash is written after a pause in typing
  const hash = await page.evaluate(() => location.hash);
  await page.focus('a.skip');
  assert.equal(await page.evaluate(() => document.activeElement.textContent), 'Skip to the steps');
  await page.keyboard.press('Enter');
  assert.equal(await page.evaluate(() => document.activeElement.id), 'steps');
  assert.equal(await page.evaluate(() => location.hash), hash);
  await page.reload();
  await page.waitForSelector('body[data-ready="true"]');
  assert.equal(await page.$eval('#tokens-q', (e) => e.value), 'the cat sat');
  assert.equal(await page.$eval('#status', (e) => /does not hold an explorer state/.test(e.textContent)), false);
});

test('the keyboard: the first step table in a few Tabs, one tab stop per input grid, never under the status line', async ({
  page,
  base,
}) => {
  await open(page, base);
  const statusTop = await page.$eval('.status-bar', (e) => e.getBoundingClientRect().top);
  let tabs = 0;
  let at = '';
  while (tabs < 40 && !at.startsWith('step')) {
    await page.keyboard.press('Tab');
    tabs++;
    at = await page.evaluate(() => (document.activeElement.closest('#step-list table') ? 'step' : document.activeElement.tagName));
    const top = await page.evaluate(() => document.activeElement.getBoundingClientRect().top);
    assert.ok(top < statusTop - 10, `Tab ${tabs}: the focused ${at} (top ${top}) is under the status line (top ${statusTop})`);
  }
  assert.ok(tabs <= 15, `${tabs} Tabs to the first step table`);
  // Each input grid is one tab stop: Tab from its cell goes to the next control, not the next cell.
  const grids = await page.$$eval('.editor .grid', (g) => g.map((t) => t.querySelectorAll('input.cell[tabindex="0"]').length));
  assert.ok(grids.length >= 3);
  assert.deepEqual(
    grids,
    grids.map(() => 1),
  );
  const cell = (r, c) => `.editor[data-input="Q"] input.cell[data-r="${r}"][data-c="${c}"]`;
  await page.focus(cell(0, 0));
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => document.activeElement.closest('.grid') !== null), false, 'Tab went to another cell of the grid');
  // Arrow keys move inside; the moved-to cell becomes the grid's tab stop.
  await page.focus(cell(0, 0));
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('ArrowDown');
  assert.deepEqual(await page.evaluate(() => [document.activeElement.dataset.r, document.activeElement.dataset.c]), ['1', '1']);
  assert.equal(await page.$eval(cell(1, 1), (i) => i.tabIndex), 0);
  assert.equal(await page.$eval(cell(0, 0), (i) => i.tabIndex), -1);
  await page.keyboard.press('Shift+Tab');
  await page.keyboard.press('Tab');
  assert.deepEqual(
    await page.evaluate(() => [document.activeElement.dataset.r, document.activeElement.dataset.c]),
    ['1', '1'],
    'Tab back into the grid lands elsewhere than its last cell',
  );
});

test('a focused cell shows its shown number; Enter, F2 or a second click edits the full number, shown in full first', async ({
  page,
  base,
}) => {
  await open(page, base);
  await page.selectOption('#preset', '000');
  const q = page.locator('.editor[data-input="Q"] input.cell[data-r="0"][data-c="0"]');
  await q.click();
  assert.equal(await q.inputValue(), '0.4967');
  // A second click: the full number, the caret at its end (never inside a number not shown).
  await q.click();
  assert.equal(await q.inputValue(), '0.4967141530112327');
  assert.deepEqual(await q.evaluate((i) => [i.selectionStart, i.selectionEnd]), [18, 18]);
  await page.keyboard.press('Escape');
  assert.equal(await q.inputValue(), '0.4967');
  await page.keyboard.press('F2');
  assert.equal(await q.inputValue(), '0.4967141530112327');
  await page.keyboard.press('Escape');
  await page.keyboard.press('Enter');
  assert.equal(await q.inputValue(), '0.4967141530112327');
  await page.keyboard.press('Backspace');
  await page.keyboard.press('Enter'); // edited: Enter goes down, as before
  assert.deepEqual(await page.evaluate(() => [document.activeElement.dataset.r, document.activeElement.dataset.c]), ['1', '0']);
  assert.equal(await q.inputValue(), '0.4967');
  await q.focus();
  await page.keyboard.press('F2');
  assert.equal(await q.inputValue(), '0.496714153011232');
  await page.keyboard.press('Escape');
  // Typing into a focused cell replaces its number.
  const k = page.locator('.editor[data-input="K"] input.cell[data-r="0"][data-c="0"]');
  await k.click();
  await page.keyboard.type('2');
  await page.keyboard.press('Tab');
  assert.equal(await k.inputValue(), '2');
});

test('no stale labels after edits: the recipe, the shape badge, the bias in the caption, the error at the input changed', async ({
  page,
  base,
}) => {
  await open(page, base);
  // (a) The example's numpy recipe goes once an input is edited, or the mode changes.
  await page.selectOption('#preset', '000');
  assert.ok(await page.locator('#recipe').isVisible());
  await page.locator('.editor[data-input="Q"] input.cell[data-r="0"][data-c="0"]').fill('1');
  await page.waitForFunction(() => document.querySelector('#recipe').hidden);
  await page.selectOption('#preset', '000');
  assert.ok(await page.locator('#recipe').isVisible());
  await page.check('input[name="mode"][value="self"]');
  assert.ok(await page.locator('#recipe').isHidden());
  // (b) A 3 × 3 pasted as text: the badge and the rows/cols fields say so.
  await page.selectOption('#preset', '000');
  const q = page.locator('.editor[data-input="Q"]');
  await q.locator('button.tab[data-tab="text"]').click();
  await q.locator('textarea').fill('1 2 3\n4 5 6\n7 8 9');
  await page.waitForFunction(() => document.querySelector('.editor[data-input="Q"] .shape').textContent === '3 × 3');
  assert.deepEqual([await q.locator('.dim-rows').inputValue(), await q.locator('.dim-cols').inputValue()], ['3', '3']);
  // (c) Self-attention without biases: no "+ b" in W_Q's caption; with them, there is.
  await page.selectOption('#preset', '004');
  const caption = () => page.$eval('.editor[data-input="W_Q"] .editor-desc', (e) => e.textContent);
  assert.equal(await caption(), 'dmodel × d: Q = X·WQ');
  await page.check('#use-bias');
  assert.equal(await caption(), 'dmodel × d: Q = X·WQ + b');
  // (d) V's rows changed: the error is shown at V, not at K.
  await page.selectOption('#preset', 'lookup');
  const v = page.locator('.editor[data-input="V"]');
  await v.locator('.dim-rows').fill(String(Number(await v.locator('.dim-rows').inputValue()) + 1));
  await v.locator('.dim-rows').press('Enter');
  await page.waitForFunction(() => !document.querySelector('.editor[data-input="V"] .error').hidden);
  assert.match(await v.locator('.error').textContent(), /K has \d rows but V has \d/);
  assert.ok(await page.locator('.editor[data-input="K"] .error').isHidden());
});

test('one action changes the number of tokens of every input', async ({ page, base }) => {
  await open(page, base);
  await page.selectOption('#preset', 'lookup');
  assert.equal(await page.inputValue('#tokens-n'), '3');
  await page.fill('#tokens-n', '6');
  await page.press('#tokens-n', 'Enter');
  await page.waitForFunction(() => document.querySelectorAll('#step-list article[data-key="weights:0"] tbody tr').length === 6);
  for (const name of ['Q', 'K', 'V']) {
    assert.match(await page.$eval(`.editor[data-input="${name}"] .shape`, (e) => e.textContent), /^6 × /, name);
  }
  // The new tokens are not zeros: their scores differ, so their weights are not all equal.
  const row = await page.$$eval('#step-list article[data-key="weights:0"] tbody tr:last-child td', (t) => t.map((e) => e.textContent));
  assert.ok(new Set(row).size > 1, `the new token's weights: ${row}`);
  assert.equal(await page.locator('#run-error').isHidden(), true);
  // And back down to 2: the first two tokens kept.
  const before = await page.$eval('.editor[data-input="Q"] input.cell[data-r="1"][data-c="0"]', (i) => i.value);
  await page.fill('#tokens-n', '2');
  await page.press('#tokens-n', 'Enter');
  await page.waitForFunction(() => document.querySelectorAll('#step-list article[data-key="weights:0"] tbody tr').length === 2);
  assert.equal(await page.$eval('.editor[data-input="Q"] input.cell[data-r="1"][data-c="0"]', (i) => i.value), before);
});

test('a heatmap over 48 rows has token tick labels on both axes', async ({ page, base }) => {
  await open(page, base);
  await page.selectOption('#preset', 'lookup');
  await page.fill('#tokens-n', '64');
  await page.press('#tokens-n', 'Enter');
  const map = page.locator('#step-list .heatmap[data-key="weights:0"]');
  await map.waitFor();
  const rows = await map.locator('.ticks.rows span').allTextContents();
  const cols = await map.locator('.ticks.cols span').allTextContents();
  // Every 4th of 64 tokens (the example names its first tokens; the new ones are t5, t6, ...).
  assert.equal(rows.length, 16);
  assert.equal(cols.length, 16);
  assert.deepEqual(
    rows.slice(1),
    Array.from({ length: 15 }, (_, i) => `t${4 * i + 5}`),
  );
  assert.deepEqual(cols.slice(1), rows.slice(1));
  // The labels sit beside their rows: w1 at the top, w61 near the bottom, inside the map's height.
  const box = await map.locator('canvas').boundingBox();
  const first = await map.locator('.ticks.rows span').first().boundingBox();
  const last = await map.locator('.ticks.rows span').last().boundingBox();
  assert.ok(
    first.x + first.width <= box.x && first.y < box.y + box.height / 16 && last.y > box.y + box.height * 0.9,
    JSON.stringify({ box, first, last }),
  );
  await page.screenshot({ path: join(root, 'test-artifacts', 'student-02-heatmap-ticks.png') });
});
