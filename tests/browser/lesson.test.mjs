// The page as a lesson: computed numbers on the first screen (desktop and phone), the diagram of
// the problem's own steps (it matches the trace, for one head, two heads sharing one key/value
// head, cross-attention and X with W_O) and jumps to a step, step by step and the presenter view
// (?present), by keyboard only; a lesson as a file (saved, opened, dropped, ?lesson=URL, the
// component's lesson attribute and inline child) and questions the page checks against the trace.
//   node --test --test-concurrency=1 tests/browser/lesson.test.mjs
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

import { artifacts, axeFindings, browserSuite, isSerious } from './server.mjs';

const root = resolve(import.meta.dirname, '..', '..');
const pkg = await import(join(root, 'dist', 'node.js'));
const share = await import(join(root, 'dist', 'share.js'));
const engine = await pkg.loadAttention();

const test = browserSuite('lesson', {
  lib: join(root, 'dist'),
  contextPerTest: true,
  contextOptions: { viewport: { width: 1440, height: 900 } },
  screenshots: 'lesson-',
});

async function open(page, url) {
  await page.goto(url);
  await page.waitForSelector('body[data-ready="true"]');
}

/** The page's link for a problem (the package's link format), to open it directly. */
async function linkTo(problem, tokens = {}) {
  return share.encodeStateString(share.problemToState(problem, { tokens }));
}

/** The diagram's nodes: step keys "id:head" (head -1 without one) and inputs "in:X". */
const diagramKeys = (page) => page.$$eval('#pipeline .pl-node', (nodes) => nodes.map((n) => n.dataset.key));

/** What the diagram must hold for a trace: every step, and the data inputs (not the weights). */
function expectedKeys(trace) {
  const sources = new Set();
  for (const s of trace.steps) for (const g of s.given) if (!/^(W_|b_)/.test(g) && g !== 'mask' && g !== s.id) sources.add(`in:${g}`);
  return [...sources, ...trace.steps.map((s) => `${s.id}:${s.head ?? -1}`)].sort();
}

/** axe-core's WCAG 2 A/AA rules on the page as it is: no serious or critical violation. */
async function axe(page, what) {
  const serious = (await axeFindings(page)).filter(isSerious).map((v) => `${v.id} (${v.targets[0]})`);
  assert.deepEqual(serious, [], `axe (${what})`);
}

async function checkDiagram(page, problem, what) {
  const trace = engine.run(problem);
  assert.deepEqual((await diagramKeys(page)).sort(), expectedKeys(trace), `${what}: the diagram's nodes are not the trace's steps`);
  // Each node shows its step's shape.
  for (const s of trace.steps) {
    const shape = await page.$eval(`#pipeline .pl-node[data-key="${s.id}:${s.head ?? -1}"] .pl-shape`, (e) => e.textContent);
    assert.ok(
      shape.startsWith(`${s.shape[0]}×${s.shape[1]}`),
      `${what}: ${s.id} (head ${s.head}) shows ${shape}, the trace says ${s.shape.join('×')}`,
    );
  }
  // An arrow for every input of every step (and from each data input).
  const edges = await page.$$eval('#pipeline svg.pl-edges path[marker-end]', (p) => p.length);
  const want =
    trace.steps.reduce((n, s) => n + s.inputs.length, 0) +
    expectedKeys(trace)
      .filter((k) => k.startsWith('in:'))
      .reduce((n, k) => n + trace.steps.filter((s) => s.given.includes(k.slice(3)) && s.id !== k.slice(3)).length, 0);
  assert.equal(edges, want, `${what}: ${edges} arrows, the step graph has ${want}`);
  return trace;
}

/**
 * Where the first computed number (of a step computed from other steps, not a given input) ends,
 * in page coordinates: a number in a step card, or in the weights beside the diagram.
 */
async function firstComputedNumber(page) {
  const trace = engine.run(pkg.presetProblem(pkg.findPreset('lookup'), engine).problem);
  const computed = trace.steps.filter((s) => s.inputs.length).map((s) => `${s.id}:${s.head ?? -1}`);
  return page.evaluate((keys) => {
    let best = null;
    for (const el of document.querySelectorAll('[data-key]')) {
      if (!keys.includes(el.dataset.key)) continue;
      for (const td of el.querySelectorAll('td[data-r]')) {
        const r = td.getBoundingClientRect();
        if (!r.width || getComputedStyle(td).visibility !== 'visible' || !/\d/.test(td.textContent)) continue;
        if (!best || r.bottom + window.scrollY < best.bottom)
          best = { key: el.dataset.key, text: td.textContent, top: r.top + window.scrollY, bottom: r.bottom + window.scrollY };
      }
    }
    return best;
  }, computed);
}

test('first screen: the example, the diagram and computed numbers above the fold at 1440×900', async ({ page, base }) => {
  await open(page, base);
  assert.equal(await page.$eval('#preset', (s) => s.value), 'lookup', 'the first example is not the dictionary lookup');
  assert.match(await page.$eval('#lesson-example', (e) => e.textContent), /sweet\?” gets mostly banana/);
  // A computed number (a step other than the given inputs), without scrolling.
  const computed = await firstComputedNumber(page);
  assert.ok(
    computed && computed.top >= 0 && computed.bottom <= 900,
    `the first computed number is ${JSON.stringify(computed)}, not above the 900 px fold`,
  );
  // The weights beside the diagram: the trace's, as the weights card shows them, and one opens its worked calculation.
  assert.deepEqual(await page.$$eval('#glance tbody tr:first-child td', (tds) => tds.map((td) => td.textContent)), [
    '0.7952',
    '0.0114',
    '0.1933',
  ]);
  assert.ok(
    await page.$eval('#glance', (g) => g.getBoundingClientRect().bottom <= 900),
    'the weights beside the diagram are not on the first screen',
  );
  await page.click('#glance td[data-r="0"][data-c="0"]');
  await page.waitForFunction(() => /Attention weights/.test(document.querySelector('#drill-body')?.textContent ?? ''));
  assert.ok(
    await page.$eval('article[data-key="weights:0"] td[data-r="0"][data-c="0"]', (td) => td.classList.contains('selected')),
    'the weight chosen beside the diagram is not the open cell',
  );
  await page.evaluate(() => window.scrollTo(0, 0));
  // The weights of the lookup, as the trace has them: sweet? → banana 0.7952.
  const weights = await page.$$eval('article[data-key="weights:0"] tbody tr:first-child td', (tds) => tds.map((td) => td.textContent));
  assert.deepEqual(weights, ['0.7952', '0.0114', '0.1933']);
  assert.ok(await page.$eval('#pipeline', (p) => p.getBoundingClientRect().bottom <= 900), 'the diagram is not on the first screen');
  await page.screenshot({ path: join(artifacts, 'lesson-first-screen-1440.png') });
});

test('first screen on a 390×844 phone: numbers within two screens, no sideways page scroll', async ({ page, base }) => {
  await page.setViewportSize({ width: 390, height: 844 });
  await open(page, base);
  const computed = await firstComputedNumber(page);
  assert.ok(
    computed && computed.bottom <= 2 * 844,
    `the first computed number is ${JSON.stringify(computed)}, beyond two phone screens (${2 * 844})`,
  );
  // The diagram fits the phone's width: its last node is not cut off.
  const diagram = await page.$eval('#pipeline', (p) => p.scrollWidth - p.clientWidth);
  assert.ok(diagram <= 1, `the diagram scrolls ${diagram}px sideways on a phone`);
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 1, `the page is ${overflow}px wider than the phone`);
  await page.screenshot({ path: join(artifacts, 'lesson-first-screen-390.png') });
  // Stepping through on the phone keeps the page narrow too, and each step's numbers and Next on one screen.
  await page.click('#step-mode');
  const stepping = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(stepping <= 1, `step by step, the page is ${stepping}px wider than the phone`);
  for (let i = 2; i <= 7; i++) {
    await page.click('#step-next');
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    const at = await page.evaluate(() => ({
      where: document.getElementById('stepper-pos').textContent,
      numbers: document.querySelector('article.step.is-current td[data-r]').getBoundingClientRect().top,
      next: document.getElementById('step-next').getBoundingClientRect(),
    }));
    assert.ok(
      at.numbers >= 0 && at.numbers + 30 <= at.next.top,
      `${at.where}: its first number is at y = ${at.numbers}, Next at ${at.next.top} (844)`,
    );
    assert.ok(at.next.bottom <= 844 - 30, `${at.where}: Next is at y = ${at.next.top}, under the status line`);
    if (i === 6) await page.screenshot({ path: join(artifacts, 'lesson-step-390.png') });
  }
});

test("the diagram is the trace's step graph: one head, 2 heads sharing a KV head, cross-attention, X with W_O", async ({ page, base }) => {
  // One head, Q, K, V given (the first example).
  await open(page, base);
  await checkDiagram(page, pkg.presetProblem(pkg.findPreset('lookup'), engine).problem, 'one head');
  assert.equal(await page.$$eval('#pipeline .pl-lane', (l) => l.length), 0, 'one head has no lane labels');

  // Two heads reading one key/value head (GQA): a lane per head, K and V marked with their group.
  const multi = pkg.presetProblem(pkg.findPreset('multihead'), engine).problem;
  const gqa = {
    ...multi,
    W_K: multi.W_K.map((r) => r.slice(0, 2)),
    W_V: multi.W_V.map((r) => r.slice(0, 2)),
    options: { ...multi.options, kv_heads: 1 },
  };
  await open(page, `${base}#${await linkTo(gqa, { q: ['the', 'cat', 'sat', 'down'] })}`);
  await checkDiagram(page, gqa, '2 heads, kv_heads 1');
  assert.deepEqual(await page.$$eval('#pipeline .pl-lane', (l) => l.map((e) => e.textContent)), [
    'head 1 · K, V group 1',
    'head 2 · K, V group 1',
  ]);
  assert.deepEqual(
    await page.$$eval('#pipeline .pl-shared', (n) => n.map((e) => `${e.dataset.key} ${e.querySelector('.pl-group').textContent}`)),
    ['K:0 kv 1', 'V:0 kv 1', 'K:1 kv 1', 'V:1 kv 1'],
  );
  // The concatenation reads both heads and W_O reads it: one column each, after the heads.
  const col = (key) => page.$eval(`#pipeline .pl-node[data-key="${key}"]`, (n) => n.getBoundingClientRect().left);
  assert.ok(
    (await col('concat:-1')) > (await col('head_output:1')) && (await col('output:-1')) > (await col('concat:-1')),
    'H and O do not follow the heads',
  );
  assert.match(await page.$eval('#pipeline .pl-node[data-key="output:-1"]', (n) => n.textContent), /W_O/);
  await page.locator('#lesson').screenshot({ path: join(artifacts, 'lesson-diagram-gqa.png') });

  // Two heads with RoPE: the angle table Θ, which every head shares, has a column of its own
  // (it covered V⁽¹⁾ and Q⁽²⁾) and its card is under "Shared by every head", not "Combining the heads".
  const rope = { ...multi, options: { ...multi.options, rope: true } };
  await open(page, `${base}#${await linkTo(rope)}`);
  await checkDiagram(page, rope, '2 heads, RoPE');
  const boxes = await page.$$eval('#pipeline .pl-node', (nodes) =>
    nodes.map((n) => {
      const r = n.getBoundingClientRect();
      return { key: n.dataset.key, left: r.left, right: r.right, top: r.top, bottom: r.bottom };
    }),
  );
  for (const a of boxes) {
    for (const b of boxes) {
      const overlap = a.key < b.key && a.left < b.right - 1 && b.left < a.right - 1 && a.top < b.bottom - 1 && b.top < a.bottom - 1;
      assert.ok(!overlap, `diagram nodes ${a.key} and ${b.key} overlap`);
    }
  }
  assert.ok((await col('Q:0')) > (await col('rope_angles:-1')), 'Θ is not before the queries');
  assert.equal(
    await page.$eval(
      '#step-list article[data-key="rope_angles:-1"]',
      (a) => a.closest('section').querySelector('.group-title').textContent,
    ),
    'Shared by every head',
  );

  // Cross-attention: two data inputs, X for the queries and X_kv for the keys and values.
  await open(page, base);
  await page.selectOption('#preset', 'cross');
  await page.waitForSelector('#pipeline .pl-node[data-key="in:X_kv"]');
  await checkDiagram(page, pkg.presetProblem(pkg.findPreset('cross'), engine).problem, 'cross-attention');

  // Self-attention from X with W_O (one head): X → Q, K, V → … → head → O.
  const three = pkg.presetProblem(pkg.findPreset('003'), engine).problem;
  const withWO = {
    ...three,
    W_O: [
      [1, 0, 0, 1],
      [0, 1, 0, 1],
      [0, 0, 1, 1],
    ],
    options: { scale: '1/sqrt(3)' },
  };
  await open(page, `${base}#${await linkTo(withWO)}`);
  const trace = await checkDiagram(page, withWO, 'X with W_O');
  assert.deepEqual(
    trace.steps.map((s) => s.id),
    ['Q', 'K', 'V', 'scores', 'scaled', 'weights', 'head_output', 'output'],
  );
});

test('GQA without an error: fewer KV heads narrow K and V to their groups (and back); an invalid problem dims the diagram', async ({
  page,
  base,
}) => {
  await open(page, base);
  await page.selectOption('#preset', '000');
  await page.waitForSelector('#pipeline .pl-node[data-key="K:0"]');
  await page.fill('#opt-heads', '2');
  await page.waitForSelector('#pipeline .pl-node[data-key="K:1"]');
  const kText = () => page.evaluate(() => document.querySelector('#editors .editor[data-input="K"] textarea')?.value ?? '');
  const before = await kText();
  await page.fill('#opt-kvheads', '1');
  await page.waitForSelector('#pipeline .pl-shared');
  assert.ok(
    await page.$eval('#run-error', (e) => e.hidden),
    `KV heads 1 gives an error: ${await page.$eval('#run-error', (e) => e.textContent)}`,
  );
  // The numbers are the engine's for K and V narrowed to their first group (d_k = 4 columns).
  const { problem } = pkg.presetProblem(pkg.findPreset('000'), engine);
  const narrowed = {
    ...problem,
    K: problem.K.map((r) => r.slice(0, 4)),
    V: problem.V.map((r) => r.slice(0, 4)),
    options: { ...problem.options, heads: 2, kv_heads: 1 },
  };
  const want = engine.run(narrowed).output[0].map((x) => x.toFixed(4).replace('-', '−'));
  const shown = await page.$$eval('article[data-key="output:-1"] tbody tr:first-child td', (tds) => tds.map((td) => td.textContent));
  assert.deepEqual(shown, want, "the output is not the narrowed problem's");
  assert.deepEqual(await page.$$eval('#pipeline .pl-shared .pl-group', (g) => g.map((e) => e.textContent)), [
    'kv 1',
    'kv 1',
    'kv 1',
    'kv 1',
  ]);
  // Back to 2 KV heads: K as it was.
  await page.fill('#opt-kvheads', '2');
  await page.waitForFunction(() => !document.querySelector('#pipeline .pl-shared'));
  assert.equal(await kText(), before, 'K did not come back as it was');
  // A KV head count that does not divide the heads: an error, the diagram and the weights dimmed.
  await page.fill('#opt-kvheads', '3');
  await page.waitForFunction(() => !document.getElementById('run-error').hidden);
  const dim = await page.$eval('#lesson .lesson-body', (e) => Number(getComputedStyle(e).opacity));
  assert.ok(dim < 0.6, `the diagram is not dimmed while the problem is invalid (opacity ${dim})`);
});

test("a node jumps to its step's card and is marked while the card is in view", async ({ page, base }) => {
  await open(page, base);
  await page.click('#pipeline .pl-node[data-key="weights:0"]');
  const card = await page.$eval('article[data-key="weights:0"]', (a) => ({
    top: a.getBoundingClientRect().top,
    focused: a.contains(document.activeElement),
  }));
  assert.ok(card.top >= -1 && card.top < 100, `the weights card is at y = ${card.top} after the jump`);
  assert.ok(card.focused, 'the focus did not move to the weights card');
  await page.waitForFunction(() => document.querySelector('#pipeline .pl-node[data-key="weights:0"]').classList.contains('in-view'));
  // The open cell's step is marked too.
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => document.querySelector('#pipeline .pl-node[data-key="weights:0"]').classList.contains('selected'));
});

test('step by step, keyboard only: one card at a time with its sentence, ← → Home End, Esc shows all', async ({ page, base }) => {
  await open(page, base);
  // Tab from the top: the skip link, the language menu, the playground's link, then "Step by step".
  for (let i = 0; i < 4; i++) await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => document.activeElement.id), 'step-mode');
  await page.keyboard.press('Enter');
  const visibleCards = () =>
    page.$$eval('#step-list article.step', (a) => a.filter((e) => e.offsetParent !== null).map((e) => e.dataset.key));
  const where = () => page.$eval('#stepper-pos', (e) => e.textContent);
  assert.equal(await where(), 'Step 1 of 7: Queries');
  assert.deepEqual(await visibleCards(), ['Q:0']);
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('ArrowRight');
  assert.equal(await where(), 'Step 4 of 7: Scores');
  assert.equal(
    await page.$eval('#stepper-text', (e) => e.textContent),
    "Each score is a query's dot product with a key: the larger, the better the key matches. The largest is “sweet?” with “banana”: 6.00. Their variance is 4.2.",
  );
  assert.equal(await page.$eval('#pipeline .pl-node.current', (n) => n.dataset.key), 'scores:0');
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('ArrowRight');
  // The weights, and beside them the scaled scores they are computed from.
  assert.deepEqual(await visibleCards(), ['scaled:0', 'weights:0']);
  assert.equal(await page.$eval('article[data-key="scaled:0"]', (a) => a.classList.contains('is-input')), true);
  assert.equal(
    await page.$eval('#stepper-text', (e) => e.textContent),
    "Softmax turns each query's scores into weights that sum to 1. " +
      '“sweet?” puts 80% of its weight on “banana” because their score is largest. “both?” spreads its weight most: its largest weight is 50%, on “apple”.',
  );
  await page.keyboard.press('End');
  assert.equal(await where(), 'Step 7 of 7: Output');
  assert.ok(await page.$eval('#step-next', (b) => b.disabled), 'Next is enabled on the last step');
  await page.keyboard.press('ArrowLeft');
  assert.equal(await where(), 'Step 6 of 7: Attention weights');
  await page.keyboard.press('Home');
  assert.equal(await where(), 'Step 1 of 7: Queries');
  await page.keyboard.press('Escape');
  assert.equal((await visibleCards()).length, 7, 'Esc did not show every step again');
  assert.ok(await page.$eval('#stepper', (e) => e.hidden), 'the step-by-step bar stays after Esc');
});

test('presenter view (?present): large type, one step per screen, Space / PageDown / ← by keyboard, the state in the hash', async ({
  page,
  base,
}) => {
  const hash = await linkTo(pkg.presetProblem(pkg.findPreset('000-causal'), engine).problem, { q: ['w1', 'w2', 'w3', 'w4'] });
  await open(page, `${base}?present#${hash}`);
  for (const id of ['setup', 'inputs', 'why', 'drill'])
    assert.ok(await page.$eval(`#${id}`, (e) => e.offsetParent === null), `#${id} shows in the presenter view`);
  assert.ok(await page.$eval('.site-header', (e) => e.offsetParent === null), 'the site header shows in the presenter view');
  const where = () => page.$eval('#stepper-pos', (e) => e.textContent);
  assert.equal(await where(), 'Step 1 of 9: Queries');
  await page.keyboard.press('Space');
  await page.keyboard.press('PageDown');
  assert.equal(await where(), 'Step 3 of 9: Values');
  await page.keyboard.press('ArrowLeft');
  assert.equal(await where(), 'Step 2 of 9: Keys');
  await page.keyboard.press('End');
  await page.keyboard.press('ArrowLeft');
  await page.keyboard.press('ArrowLeft');
  assert.equal(await where(), 'Step 7 of 9: Masked scores');
  await page.keyboard.press('ArrowLeft');
  assert.equal(
    await page.$eval('#stepper-text', (e) => e.textContent),
    'The mask hides 6 of 16 query–key pairs (causal: each query sees only itself and earlier keys).',
  );
  // Esc does not leave the presenter view.
  await page.keyboard.press('Escape');
  assert.equal(await where(), 'Step 6 of 9: Mask');
  // Large type: the sentence and the numbers are projector-sized; the card fits one screen.
  const sizes = await page.evaluate(() => ({
    text: parseFloat(getComputedStyle(document.getElementById('stepper-text')).fontSize),
    number: parseFloat(getComputedStyle(document.querySelector('article.step.is-current td[data-r]')).fontSize),
    bottom: document.querySelector('article.step.is-current').getBoundingClientRect().bottom,
  }));
  assert.ok(sizes.text >= 28, `the sentence is ${sizes.text}px`);
  assert.ok(sizes.number >= 26, `the numbers are ${sizes.number}px`);
  assert.ok(sizes.bottom <= 900, `the step ends at y = ${sizes.bottom}, below one screen`);
  assert.ok((await page.evaluate(() => location.hash)).startsWith('#v2='), 'the presenter view lost the state in the hash');
  await axe(page, 'presenter view');
  await page.screenshot({ path: join(artifacts, 'lesson-present-1440.png') });
  // On a 1280 × 720 projector: every step's numbers and Next on one screen, and the numbers a
  // step reads (the weights' masked scores) beside it.
  await page.setViewportSize({ width: 1280, height: 720 });
  await page.keyboard.press('Home');
  for (let i = 1; i <= 9; i++) {
    const at = await page.evaluate(() => {
      const box = (el) => {
        const r = el.getBoundingClientRect();
        return { top: r.top, bottom: r.bottom };
      };
      const input = document.querySelector('article.step.is-input td[data-r]');
      return {
        where: document.getElementById('stepper-pos').textContent,
        numbers: box(document.querySelector('article.step.is-current td[data-r]')),
        next: box(document.getElementById('step-next')),
        input: input ? box(input) : null,
      };
    });
    assert.ok(
      at.numbers.top >= 0 && at.numbers.bottom <= 720,
      `${at.where}: its first number is at y = ${at.numbers.top}–${at.numbers.bottom} of 720`,
    );
    assert.ok(at.next.top >= 0 && at.next.bottom <= 720, `${at.where}: Next is at y = ${at.next.top}`);
    if (i === 8)
      assert.ok(
        at.input && at.input.bottom <= 720,
        `${at.where}: the masked scores it reads are not beside it: ${JSON.stringify(at.input)}`,
      );
    if (i === 8) await page.screenshot({ path: join(artifacts, 'lesson-present-1280x720.png') });
    await page.keyboard.press('Space');
  }
});

test("a teacher's walk-through: a sentence and a question round-trip through the link; predict, then reveal", async ({
  page,
  base,
  context,
}) => {
  await open(page, base);
  await page.click('#step-mode');
  for (let i = 0; i < 5; i++) await page.keyboard.press('ArrowRight');
  assert.equal(await page.$eval('#stepper-pos', (e) => e.textContent), 'Step 6 of 7: Attention weights');
  const ask = 'Which key will sweet? attend to most?';
  const say = 'sweet? looks for sweetness, and banana is the sweetest key: it gets 80% of the weight.';
  await page.click('#teacher summary');
  await page.fill('#teacher-ask', ask);
  await page.fill('#teacher-say', say);
  // The note is in the page state, so in the link (the package's format).
  let state = null;
  for (let i = 0; i < 50 && !state?.lesson; i++) {
    await page.waitForTimeout(100);
    state = (await share.decodeStateString(await page.evaluate(() => location.hash))).state;
  }
  assert.deepEqual(state?.lesson, { 'weights:0': { ask, say } });
  assert.equal(state.preset, 'lookup', "the lesson's link no longer names its example");
  const link = page.url();
  await axe(page, "step by step, the teacher's fields open");

  // A student opens the link: it opens as the lesson, step by step from its first step, with no
  // step's numbers (nor the weights beside the diagram) but the first one's on screen.
  const student = await context.newPage();
  await open(student, link);
  assert.equal(
    await student.$eval('#stepper-pos', (e) => e.textContent),
    'Step 1 of 7: Queries',
    "the lesson's link did not open step by step",
  );
  // The class's view: no "Write this step for your class" (it shows the teacher's answers).
  assert.equal(await student.locator('#teacher').isVisible(), false, "the class view offers the teacher's fields");
  const shown = await student.evaluate(() => ({
    cards: [...document.querySelectorAll('#step-list article.step')].filter((a) => a.offsetParent !== null).map((a) => a.dataset.key),
    glance: document.getElementById('glance').offsetParent !== null,
    heads: document.getElementById('heads-view')?.offsetParent != null,
  }));
  assert.deepEqual(shown, { cards: ['Q:0'], glance: false, heads: false }, "a lesson's link shows more than its first step");
  // Steps through by keyboard: the question first, the numbers hidden.
  for (let i = 0; i < 5; i++) await student.keyboard.press('ArrowRight');
  const view = () =>
    student.evaluate(() => ({
      where: document.getElementById('stepper-pos').textContent,
      question: document.getElementById('stepper-ask').hidden ? null : document.getElementById('stepper-question').textContent,
      sentence: document.getElementById('stepper-text').hidden ? null : document.getElementById('stepper-text').textContent,
      numbers: getComputedStyle(document.querySelector('article.step.is-current .matrix-wrap')).visibility,
    }));
  assert.deepEqual(await view(), { where: 'Step 6 of 7: Attention weights', question: ask, sentence: null, numbers: 'hidden' });
  await student.keyboard.press('ArrowRight');
  assert.deepEqual(await view(), { where: 'Step 6 of 7: Attention weights', question: null, sentence: say, numbers: 'visible' });
  await student.keyboard.press('ArrowRight');
  const last = await view();
  assert.equal(last.where, 'Step 7 of 7: Output');
  assert.match(last.sentence, /^Each output row is a weighted average of the value rows/, 'a step without a note keeps its own sentence');
  await student.close();

  // Ordinary words as token names are quoted in the sentences and the key question's legend.
  await page.fill('#teacher-say', '');
  await page.fill('#tokens-q', 'the cat sat');
  await page.fill('#tokens-k', 'the cat sat');
  await page.waitForFunction(() => /“the”|“cat”|“sat”/.test(document.getElementById('stepper-text').textContent));
  assert.match(
    await page.$eval('#stepper-text', (e) => e.textContent),
    /^Softmax turns each query's scores into weights that sum to 1\. “\w+” puts \d+% of its weight on “\w+” because their score is largest\. “\w+” spreads its weight most: its largest weight is \d+%, on “\w+”\.$/,
  );
  await page.selectOption('#teacher-kind', 'key');
  await page.fill('#teacher-row', '3');
  const quoted = await context.newPage();
  await page.waitForTimeout(600); // the link is written after a pause
  await open(quoted, page.url());
  for (let i = 0; i < 5; i++) await quoted.keyboard.press('ArrowRight');
  assert.equal(await quoted.$eval('#answer-keys-legend', (e) => e.textContent), 'The key that “sat” gives the most weight:');
  await quoted.close();
});

test('with steps hidden (an exercise, ?hide=), step by step tells formulas, not the hidden numbers; ?hide=lesson hides the panel', async ({
  page,
  base,
}) => {
  await open(page, `${base}?hide=weights`);
  assert.equal(await page.$$eval('#pipeline .pl-node[data-key="weights:0"]', (n) => n.length), 0, 'the hidden step is in the diagram');
  await page.click('#step-mode');
  await page.keyboard.press('End');
  assert.equal(await page.$eval('#stepper-pos', (e) => e.textContent), 'Step 6 of 6: Output');
  assert.equal(await page.$eval('#stepper-text', (e) => e.textContent), 'Output: O = A·V.');
  await open(page, `${base}?hide=lesson`);
  assert.ok(await page.$eval('#lesson', (e) => e.hidden), '?hide=lesson leaves the diagram');
});

// ---- a lesson as a file, and questions checked against the trace ----

const lookup = pkg.presetProblem(pkg.findPreset('lookup'), engine).problem;
const lookupTrace = engine.run(lookup);
const LOOKUP_TOKENS = { q: ['sweet?', 'sour?', 'both?'], k: ['banana', 'lemon', 'apple'] };
const f4 = (v) => pkg.formatNumber(v, 4);
const cell = (id, r, c) => lookupTrace.steps.find((s) => s.id === id).data[r][c];
const ASK_KEY = 'Which key will sweet? attend to most?';
const ASK_NUMBER = 'What is the scaled score of sour? with apple?';
/** A lesson on the lookup: a key question on the weights, a number question on the scaled scores, a free-text one on the output. */
const LOOKUP_LESSON = {
  format: 'attention-explorer lesson',
  version: 1,
  title: 'A soft dictionary lookup',
  problem: lookup,
  tokens: LOOKUP_TOKENS,
  lesson: {
    'scaled:0': { ask: ASK_NUMBER, answer: { kind: 'number', row: 2, col: 3, tolerance: 0.01 } },
    'weights:0': { say: 'banana is the sweetest key.', ask: ASK_KEY, answer: { kind: 'key', row: 1 } },
    'output:-1': { ask: 'What does sweet? get back?', answer: { kind: 'text', text: "Mostly banana's value." } },
  },
};

/** Writes a lesson file into the served site and returns its path relative to the site. */
function serveLesson(siteDir, name, lesson) {
  mkdirSync(join(siteDir, 'lessons'), { recursive: true });
  writeFileSync(join(siteDir, 'lessons', name), typeof lesson === 'string' ? lesson : JSON.stringify(lesson));
  return `lessons/${name}`;
}

const stepperView = (page) =>
  page.evaluate(() => ({
    where: document.getElementById('stepper-pos').textContent,
    question: document.getElementById('stepper-ask').hidden ? null : document.getElementById('stepper-question').textContent,
    verdict: document.getElementById('stepper-verdict').hidden ? null : document.getElementById('stepper-verdict').textContent,
    numbers: getComputedStyle(document.querySelector('article.step.is-current .matrix-wrap')).visibility,
  }));

test('a lesson file: Save lesson writes the problem and the notes; Open lesson and a dropped file bring them back', async ({
  page,
  base,
  context,
}) => {
  await open(page, base);
  await page.click('#step-mode');
  for (let i = 0; i < 5; i++) await page.keyboard.press('ArrowRight');
  await page.click('#teacher summary');
  await page.fill('#teacher-ask', ASK_KEY);
  await page.selectOption('#teacher-kind', 'key');
  await page.fill('#teacher-row', '1');
  await page.fill('#teacher-say', 'banana is the sweetest key.');
  // The lesson's own title (review #11: the file had the example's title and opened as "Your own problem.").
  await page.fill('#lesson-name', 'Which fruit is sweet?');
  await page.press('#lesson-name', 'Tab');
  await page.waitForFunction(() => document.getElementById('lesson-example').textContent === 'Which fruit is sweet?');
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#lesson-save')]);
  assert.equal(download.suggestedFilename(), 'lookup-lesson.json');
  const text = readFileSync(await download.path(), 'utf8');
  const saved = share.readLesson(text, 'the saved file');
  assert.deepEqual(saved.lesson, { 'weights:0': { say: 'banana is the sweetest key.', ask: ASK_KEY, answer: { kind: 'key', row: 1 } } });
  assert.deepEqual(saved.tokens, LOOKUP_TOKENS);
  assert.deepEqual(
    engine.run(saved.problem).steps.map((s) => s.data),
    lookupTrace.steps.map((s) => s.data),
    'the saved problem computes other numbers',
  );
  assert.equal(JSON.parse(text).format, 'attention-explorer lesson');
  assert.equal(saved.title, 'Which fruit is sweet?');

  // A student opens the file with the picker: step by step from the first step, the question on the weights.
  const student = await context.newPage();
  await open(student, base);
  await student.setInputFiles('#lesson-file', { name: 'lookup-lesson.json', mimeType: 'application/json', buffer: Buffer.from(text) });
  await student.waitForFunction(() => !document.getElementById('stepper').hidden);
  assert.equal(await student.$eval('#stepper-pos', (e) => e.textContent), 'Step 1 of 7: Queries');
  assert.equal(await student.$eval('#lesson-example', (e) => e.textContent), 'Which fruit is sweet?');
  await student.keyboard.press('End');
  await student.keyboard.press('ArrowLeft');
  assert.deepEqual(await stepperView(student), {
    where: 'Step 6 of 7: Attention weights',
    question: ASK_KEY,
    verdict: null,
    numbers: 'hidden',
  });
  // The opened lesson is the page state, so it is in the link too.
  await student.waitForFunction(() => location.hash.startsWith('#v2='));
  let state = null;
  for (let i = 0; i < 50 && !state?.lesson; i++) {
    await student.waitForTimeout(100);
    state = (await share.decodeStateString(await student.evaluate(() => location.hash))).state;
  }
  assert.deepEqual(state?.lesson, saved.lesson);

  // Dropped on the page, another lesson replaces it.
  const dropped = JSON.stringify(LOOKUP_LESSON);
  await student.evaluate((json) => {
    const data = new DataTransfer();
    data.items.add(new File([json], 'dropped.json', { type: 'application/json' }));
    document.getElementById('steps').dispatchEvent(new DragEvent('drop', { dataTransfer: data, bubbles: true, cancelable: true }));
  }, dropped);
  await student.waitForFunction(() => document.getElementById('stepper-pos').textContent === 'Step 1 of 7: Queries');
  await student.keyboard.press('End');
  assert.equal((await stepperView(student)).question, 'What does sweet? get back?');

  // A file that is not a lesson says what is wrong, and the page keeps what it showed.
  await student.setInputFiles('#lesson-file', {
    name: 'bad.json',
    mimeType: 'application/json',
    buffer: Buffer.from(JSON.stringify({ problem: lookup, lesson: { 'weights:0': { ask: 'Which?', answer: { kind: 'key', row: 0 } } } })),
  });
  await student.waitForSelector('#lesson-error');
  assert.equal(
    await student.$eval('#lesson-error p', (e) => e.textContent),
    'The lesson could not be opened. bad.json: step "weights:0": answer.row is 0; expected a whole number from 1 (the first query row)',
  );
  assert.equal((await stepperView(student)).question, 'What does sweet? get back?');
  await student.close();
});

test('predict, then reveal, keyboard only (?lesson=URL): a wrong and a right key, a number within its tolerance, free text', async ({
  page,
  base,
  siteDir,
  context,
}) => {
  const url = serveLesson(siteDir, 'lookup.json', LOOKUP_LESSON);
  await open(page, `${base}?lesson=${url}`);
  assert.equal(await page.$eval('#stepper-pos', (e) => e.textContent), 'Step 1 of 7: Queries');
  await page.focus('#step-next');
  // Next (Enter) up to the scaled scores: a number question, the numbers hidden.
  for (let i = 0; i < 4; i++) await page.keyboard.press('Enter');
  assert.deepEqual(await stepperView(page), {
    where: 'Step 5 of 7: Scaled scores',
    question: ASK_NUMBER,
    verdict: null,
    numbers: 'hidden',
  });
  // Back from Next: Previous, Reveal, Check, the number field. A number off by more than the tolerance is wrong.
  for (let i = 0; i < 4; i++) await page.keyboard.press('Shift+Tab');
  assert.equal(await page.evaluate(() => document.activeElement.id), 'answer-number');
  const scaled = cell('scaled', 1, 2); // sour? with apple: 4/√2
  await page.keyboard.type('2.85');
  await page.keyboard.press('Enter');
  assert.deepEqual(await stepperView(page), {
    where: 'Step 5 of 7: Scaled scores',
    question: null,
    numbers: 'visible',
    verdict: `Not quite: Scaled scores at row sour?, column apple is ${f4(scaled)}; you said 2.85, ${f4(Math.abs(2.85 - scaled))} away, more than ± 0.01.`,
  });
  assert.equal(await page.evaluate(() => document.activeElement.id), 'step-next', 'the focus did not go back to Next');
  assert.ok(await page.$eval('#stepper-verdict', (e) => e.classList.contains('wrong')));

  // The weights: pick a key with the arrow keys. apple (the last key) is wrong.
  await page.keyboard.press('Enter');
  assert.deepEqual(await stepperView(page), {
    where: 'Step 6 of 7: Attention weights',
    question: ASK_KEY,
    verdict: null,
    numbers: 'hidden',
  });
  for (let i = 0; i < 4; i++) await page.keyboard.press('Shift+Tab');
  assert.equal(await page.evaluate(() => document.activeElement.value), '2', 'Shift+Tab did not reach the last key');
  await page.keyboard.press('Space');
  await page.keyboard.press('Tab');
  await page.keyboard.press('Enter');
  assert.deepEqual(await stepperView(page), {
    where: 'Step 6 of 7: Attention weights',
    question: null,
    numbers: 'visible',
    verdict: `Not quite: apple gets ${f4(cell('weights', 0, 2))}; banana gets ${f4(cell('weights', 0, 0))} of sweet?'s weight, the most of any key.`,
  });
  assert.equal(await page.$eval('#stepper-text', (e) => e.textContent), 'banana is the sweetest key.');

  // Free text is not checked: the teacher's answer shows, with the student's.
  await page.keyboard.press('Enter');
  for (let i = 0; i < 4; i++) await page.keyboard.press('Shift+Tab');
  await page.keyboard.type('banana');
  await page.keyboard.press('Tab');
  await page.keyboard.press('Enter');
  assert.deepEqual(await stepperView(page), {
    where: 'Step 7 of 7: Output',
    question: null,
    numbers: 'visible',
    verdict: "The answer: Mostly banana's value. (You said: banana)",
  });

  // Another student gets them right: banana (up from apple), and the number within ± 0.01.
  const other = await context.newPage();
  await open(other, `${base}?lesson=${url}`);
  await other.focus('#step-next');
  for (let i = 0; i < 4; i++) await other.keyboard.press('Enter');
  for (let i = 0; i < 4; i++) await other.keyboard.press('Shift+Tab');
  await other.keyboard.type('2.825');
  await other.keyboard.press('Enter');
  assert.equal(
    (await stepperView(other)).verdict,
    `Right: Scaled scores at row sour?, column apple is ${f4(scaled)}; you said 2.825 (within ± 0.01).`,
  );
  await other.keyboard.press('Enter');
  for (let i = 0; i < 4; i++) await other.keyboard.press('Shift+Tab');
  await other.keyboard.press('ArrowUp');
  await other.keyboard.press('ArrowUp');
  assert.equal(await other.evaluate(() => document.activeElement.value), '0');
  await other.keyboard.press('Tab');
  await other.keyboard.press('Enter');
  assert.equal(
    (await stepperView(other)).verdict,
    `Right: banana gets ${f4(cell('weights', 0, 0))} of sweet?'s weight, the most of any key.`,
  );
  assert.ok(await other.$eval('#stepper-verdict', (e) => e.classList.contains('right')));
  await axe(other, 'a checked answer');
  await other.close();
});

test('?lesson=URL that cannot be used: the message names the URL and what is wrong; the default example shows', async ({
  page,
  base,
  siteDir,
}) => {
  const misfit = serveLesson(siteDir, 'misfit.json', { ...LOOKUP_LESSON, lesson: { 'weights:1': { ask: 'Which?' } } });
  await open(page, `${base}?lesson=${misfit}`);
  assert.equal(
    await page.$eval('#lesson-error p', (e) => e.textContent),
    `The lesson could not be opened. ${base}${misfit}: step "weights:1": ` +
      'this problem has no such step (its steps: Q:0, K:0, V:0, scores:0, scaled:0, weights:0, output:-1)',
  );
  assert.equal(await page.$eval('#preset', (s) => s.value), 'lookup');
  const notJson = serveLesson(siteDir, 'not.json', '{ "problem": ');
  await open(page, `${base}?lesson=${notJson}`);
  assert.match(
    await page.$eval('#lesson-error p', (e) => e.textContent),
    new RegExp(`^The lesson could not be opened\\. ${base.replace(/[.]/g, '\\.')}lessons/not\\.json is not JSON: `),
  );
});

test('the component takes a lesson: lesson="…json" (relative to the page) and an inline <script slot="lesson">; its questions by keyboard', async ({
  page,
  base,
  siteDir,
}) => {
  const url = serveLesson(siteDir, 'component.json', LOOKUP_LESSON);
  const inline = { ...LOOKUP_LESSON, lesson: { 'scaled:0': LOOKUP_LESSON.lesson['scaled:0'] } };
  const bad = { ...LOOKUP_LESSON, lesson: { 'weights:0': { ask: 'Which?', answer: { kind: 'number', row: 1, col: 1 } } } };
  writeFileSync(
    join(siteDir, 'lessons', 'host.html'),
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>lesson host</title>
    <link rel="icon" href="data:,"><script type="module" src="../lib/component.js"></script></head><body>
    <attention-explorer id="from-file" lesson="component.json" steps="weights"></attention-explorer>
    <attention-explorer id="inline" steps="scaled"><script type="application/json" slot="lesson">${JSON.stringify(inline)}</script></attention-explorer>
    <attention-explorer id="bad"><script type="application/json" slot="lesson">${JSON.stringify(bad)}</script></attention-explorer>
    </body></html>`,
  );
  await page.goto(`${base}${url.replace('component.json', 'host.html')}`);
  const inShadow = (id, sel, fn = (e) => e.textContent) =>
    page.$eval(
      `#${id}`,
      (el, [s, f]) => {
        const e = el.shadowRoot.querySelector(s);
        return e ? new Function(`return (${f})`)()(e) : null;
      },
      [sel, fn.toString()],
    );
  await page.waitForFunction(() =>
    ['from-file', 'inline'].every((id) => document.getElementById(id).shadowRoot.querySelector('section.step')),
  );
  // From the file: the teacher's sentence and question, no numbers until answered.
  assert.equal(await inShadow('from-file', '.say'), 'banana is the sweetest key.');
  assert.match(await inShadow('from-file', 'form.ask p'), new RegExp(ASK_KEY.replace('?', '\\?')));
  assert.equal(await inShadow('from-file', 'section.step table'), null, 'the weights show before the answer');
  // Keyboard: Tab into the keys (banana first), Space, Tab to Check, Enter.
  await page.keyboard.press('Tab');
  await page.keyboard.press('Space');
  await page.keyboard.press('Tab');
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => document.getElementById('from-file').shadowRoot.querySelector('.verdict'));
  assert.equal(
    await inShadow('from-file', '.verdict'),
    `Right: banana gets ${f4(cell('weights', 0, 0))} of sweet?'s weight, the most of any key.`,
  );
  assert.deepEqual(
    await page.$eval('#from-file', (el) =>
      [...el.shadowRoot.querySelectorAll('section.step tbody tr:first-child td')].map((td) => td.textContent),
    ),
    ['0.7952', '0.0114', '0.1933'],
  );
  // Inline: a number question on the scaled scores, answered wrong.
  await page.keyboard.press('Tab');
  await page.keyboard.type('3');
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => document.getElementById('inline').shadowRoot.querySelector('.verdict'));
  const scaled = cell('scaled', 1, 2);
  assert.equal(
    await inShadow('inline', '.verdict'),
    `Not quite: Scaled scores at row sour?, column apple is ${f4(scaled)}; you said 3, ${f4(3 - scaled)} away, more than ± 0.01.`,
  );
  // A lesson with a wrong field says which step and which field.
  assert.equal(
    await inShadow('bad', '.error'),
    'the <script slot="lesson">: step "weights:0": answer.tolerance is missing; expected a number ≥ 0 (how far a student\'s number may be from the cell)',
  );
});
