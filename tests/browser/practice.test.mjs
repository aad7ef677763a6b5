// "In practice": the four walkthroughs (online softmax, decoding with a KV cache, FlashAttention's
// tiles, gradients) stepped through by keyboard only, the numbers on screen checked against
// engine.onlineSoftmax / decode / tiles / gradients run in Node on the same problem; the float32
// overflow with "subtract the max" off; ?walk= opening a walkthrough.
//   node --test --test-concurrency=1 tests/browser/practice.test.mjs
import assert from 'node:assert/strict';
import { join, resolve } from 'node:path';

import { artifacts, browserSuite } from './server.mjs';

const root = resolve(import.meta.dirname, '..', '..');
const pkg = await import(join(root, 'dist', 'node.js'));
const share = await import(join(root, 'dist', 'share.js'));
const engine = await pkg.loadAttention();

const test = browserSuite('practice', {
  lib: join(root, 'dist'),
  contextPerTest: true,
  contextOptions: { viewport: { width: 1440, height: 900 } },
  screenshots: 'practice-',
  timeout: 30000,
});

// The page's first example (the soft dictionary lookup) and how the page writes a table's number.
const lookup = pkg.findPreset('lookup');
const problem = pkg.presetProblem(lookup, engine).problem;
const cell = (x) => pkg.formatNumber(x, 4, { fixedZero: true, tinyAsZero: true });
/** A difference, never rounded to 0: 5.551e−17. */
const small = (x) => pkg.formatNumber(x, 4, { fixedZero: true });

async function open(page, url) {
  await page.goto(url);
  await page.waitForSelector('body[data-ready="true"]');
  await page.waitForSelector('#practice-body :is(table, article)');
}
const texts = (page, selector) => page.$$eval(selector, (els) => els.map((e) => e.textContent.trim()));
const text = (page, selector) => page.$eval(selector, (e) => e.textContent.trim());
/** Waits until the walkthrough shows `pos` (its "Entry 2 of 3" line). */
const at = (page, pos) => page.waitForFunction((p) => document.getElementById('practice-pos').textContent.endsWith(p), pos);

/** The softmax's input row the walkthrough starts from: head 1's first row of (scaled) scores. */
function firstScoresRow(trace) {
  const weights = trace.steps.find((s) => s.id === 'weights' && s.head === 0);
  return trace.steps[weights.inputs[0]].data[0];
}

test('online softmax: entry by entry, then "subtract the max" off in float32 overflows', async ({ page, base }) => {
  await open(page, `${base}?walk=softmax`);
  const row = firstScoresRow(engine.run(problem));
  const want = engine.onlineSoftmax(row, { precision: 'float64' });
  assert.deepEqual(await texts(page, '#practice-body tr[data-row="x"] td'), row.map(cell));
  for (let j = 0; j < row.length; j++) {
    await at(page, `Entry ${j + 1} of ${row.length}`);
    const s = want.steps[j];
    assert.equal(await text(page, '#practice-body tr[data-row="m"] td.pr-now'), cell(s.m_after));
    assert.equal(await text(page, '#practice-body tr[data-row="l"] td.pr-now'), cell(s.l_after));
    assert.equal(await text(page, '#practice-body tr[data-row="rescale"] td.pr-now'), cell(s.rescale));
    assert.equal(await text(page, '#practice-text'), pkg.narrateOnlineSoftmax(want, j, { precision: 'float64' }));
    await page.keyboard.press('ArrowRight');
  }
  await at(page, 'The weights');
  assert.deepEqual(await texts(page, '#practice-body tr[data-row="weight"] td'), want.weights.map(cell));
  assert.match(await text(page, '#practice-text'), /sum to 1/);
  await page.keyboard.press('ArrowLeft');
  await at(page, `Entry ${row.length} of ${row.length}`);

  // A row of my own, the max switched off, float32: all by keyboard.
  await page.focus('#pr-row');
  await page.keyboard.type('1 100 3');
  await page.keyboard.press('Tab'); // leaves the field (the row is read) for "The problem's row"
  await page.waitForFunction(() => document.querySelectorAll('#practice-body tr[data-row="x"] td')[1]?.textContent === '100.0000');
  await page.keyboard.press('Tab'); // the switch
  await page.keyboard.press('Space');
  await page.waitForFunction(() => document.getElementById('pr-subtract').checked === false);
  await page.keyboard.press('Tab'); // the precision
  await page.keyboard.press('ArrowDown');
  await page.waitForFunction(() => /in float32/.test(document.querySelector('#practice-body caption')?.textContent));
  await page.focus('#pr-next');
  await page.keyboard.press('End');
  await at(page, 'The weights');
  const settings = { subtractMax: false, precision: 'float32' };
  const overflow = engine.onlineSoftmax([1, 100, 3], settings);
  assert.equal(overflow.sum, Infinity);
  assert.deepEqual(
    await texts(page, '#practice-body tr[data-row="l"] td'),
    overflow.steps.map((s) => cell(s.l_after)),
  );
  assert.deepEqual(await texts(page, '#practice-body tr[data-row="weight"] td'), ['0.0000', 'NaN', '0.0000']);
  assert.equal(await text(page, '#practice-text'), pkg.narrateOnlineSoftmax(overflow, 3, settings));
  assert.match(await text(page, '#practice-text'), /^ℓ is ∞, so each weight .* 1 of 3 weights is NaN/);
  assert.match(await text(page, '#pr-overflow'), /overflows float32 at entry 2 \(x = 100\)/);
  await page.keyboard.press('Home');
  await page.keyboard.press('ArrowRight');
  await at(page, 'Entry 2 of 3');
  assert.match(await text(page, '#practice-text'), /e\^100\.00 is too large for float32 and overflows: ℓ = ∞/);
  await page.screenshot({ path: join(artifacts, 'practice-softmax-overflow.png'), fullPage: false });
});

test("decoding with a KV cache: the cache grows a row a step, each row is causal attention's", async ({ page, base }) => {
  await open(page, `${base}?walk=decode`);
  const d = engine.decode(problem);
  // Decoding is causal self-attention, said where the first example differs (named keys, not causal);
  // a screen reader hears the tables' names, not the page's internal ids.
  assert.equal(
    await text(page, '#pr-decode-note'),
    'Decoding generates one sequence token by token, so it is always causal self-attention: token t’s query reads the keys and values of tokens 1 to t, its own included (here key t is token t’s own key: “banana” for “sweet?”). Your problem is not causal: its weights let every query read every key, so they differ from these.',
  );
  assert.deepEqual(
    (await texts(page, '#practice-body caption')).filter((c) => /decode-/.test(c)),
    [],
  );
  let cached = 0;
  let full = 0;
  for (const s of d.steps) {
    await at(page, `Token ${s.t + 1} of ${d.steps.length}`);
    cached += s.flops_cached;
    full += s.flops_full;
    // The cache: t earlier keys and values plus the new token's, named by the keys.
    assert.deepEqual(await texts(page, '#practice-body .pr-cache:first-child tbody th'), lookup.kvTokens.slice(0, s.cache_rows));
    const [scores, weights, output] = await page.$$eval('#practice-body .pr-row:nth-of-type(2) table.matrix', (tables) =>
      tables.map((t) => [...t.querySelectorAll('tbody td')].map((td) => td.textContent)),
    );
    assert.deepEqual(scores, s.scores[0].map(cell));
    assert.deepEqual(weights, s.weights[0].map(cell));
    assert.deepEqual(output, s.output.map(cell));
    assert.equal(await text(page, '#pr-flops-cached'), String(s.flops_cached));
    assert.equal(await text(page, '#pr-flops-full'), String(s.flops_full));
    assert.equal(await text(page, '#pr-flops-cached-sum'), String(cached));
    assert.equal(await text(page, '#pr-flops-full-sum'), String(full));
    assert.equal(await text(page, '#pr-difference'), small(s.difference));
    assert.equal(await text(page, '#practice-text'), pkg.narrateDecodeStep(d, s.t, { tokensQ: lookup.tokens, tokensK: lookup.kvTokens }));
    await page.keyboard.press('ArrowRight');
  }
  assert.equal(cached, d.flops_cached);
  assert.equal(full, d.flops_full);
  // Row t of full causal attention is the decoded row.
  const causal = engine.run({ ...problem, options: { ...problem.options, causal: true } });
  const last = d.steps.at(-1);
  assert.deepEqual(last.weights[0].map(cell), causal.steps.find((s) => s.id === 'weights').data[last.t].map(cell));
});

test("FlashAttention's tiles: visited in order over the never-stored scores, the bytes, the output", async ({ page, base }) => {
  await open(page, `${base}?walk=tiles`);
  const check = async (blocks) => {
    const t = engine.tiles(problem, blocks);
    for (let i = 0; i < t.tiles.length; i++) {
      const tile = t.tiles[i];
      await at(page, `Tile ${i + 1} of ${t.tiles.length}`);
      // The current tile in colour with its own scores; every other score greyed, never stored.
      const now = await texts(page, '#practice-body .pr-scores td.tile-now');
      assert.deepEqual(now, tile.scores.flat().map(cell));
      const cells = await page.$$eval('#practice-body .pr-scores td', (tds) => tds.length);
      assert.equal(await page.$$eval('#practice-body .pr-scores td.never-stored', (tds) => tds.length), cells - now.length);
      assert.equal(await text(page, '.pr-scores .never-stored-note'), 'never stored');
      const stats = await page.$$eval('#practice-body table.pr-record tbody tr', (trs) =>
        trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)),
      );
      assert.deepEqual(
        stats,
        tile.m_before.map((_, q) => [tile.m_before[q], tile.m_after[q], tile.rescale[q], tile.l_before[q], tile.l_after[q]].map(cell)),
      );
      const [before, after] = await page.$$eval('#practice-body .pr-row table.matrix', (tables) =>
        tables.map((x) => [...x.querySelectorAll('tbody td')].map((td) => td.textContent)),
      );
      assert.deepEqual(before, tile.partial_before.flat().map(cell));
      assert.deepEqual(after, tile.partial_after.flat().map(cell));
      assert.equal(await text(page, '#pr-bytes-flash'), String(t.bytes_flash));
      assert.equal(await text(page, '#pr-bytes-standard'), String(t.bytes_standard));
      assert.equal(await text(page, '#practice-text'), pkg.narrateTile(t, i, { tokensQ: lookup.tokens, tokensK: lookup.kvTokens }));
      await page.keyboard.press('ArrowRight');
    }
    await at(page, 'The output');
    assert.deepEqual(await texts(page, '#practice-body .pr-matrix:not(.pr-scores) tbody td'), t.output.flat().map(cell));
    assert.deepEqual(t.output.flat().map(cell), engine.run(problem).output.flat().map(cell));
    assert.equal(await text(page, '#pr-tiles-difference'), small(t.max_difference));
    assert.match(
      await text(page, '#practice-text'),
      new RegExp(`move ${t.bytes_flash} bytes .* the standard algorithm ${t.bytes_standard}`),
    );
    return t;
  };
  const two = await check({ block_q: 2, block_k: 2 });
  assert.equal(two.tiles.length, 4);
  // Blocks of one query and three keys, typed.
  await page.focus('#pr-block-q');
  await page.keyboard.press('Control+A');
  await page.keyboard.type('1');
  await page.keyboard.press('Tab');
  await page.keyboard.press('Control+A');
  await page.keyboard.type('3');
  await page.focus('#pr-next'); // out of the fields: the arrows move the walk again
  const one = await check({ block_q: 1, block_k: 3 });
  assert.equal(one.tiles.length, 3);
});

test('gradients: dO (all ones, then edited), every gradient step in backward order with its numbers', async ({ page, base }) => {
  await open(page, `${base}?walk=gradients`);
  const walkThrough = async (g) => {
    // With one head, the heads' dQ, dK, dV side by side (head null, read from head 1's) are not repeated.
    const order = g.steps
      .map((s, i) => [s, i])
      .filter(([s]) => s.id.startsWith('d') && !(g.meta.heads === 1 && s.head === null && ['dQ', 'dK', 'dV'].includes(s.id)));
    for (let n = 0; n < order.length; n++) {
      const [step, index] = order[n];
      await at(page, `Gradient step ${n + 1} of ${order.length}`);
      assert.equal(await page.$eval('#practice-body .pr-gradient', (a) => a.dataset.step), step.id);
      assert.deepEqual(
        await texts(page, '#practice-body .pr-gradient tbody td'),
        step.data.flat().map(cell),
        `${step.id} head ${step.head}`,
      );
      assert.ok(await page.$('#practice-body .pr-gradient .formula .katex'), `${step.id}: its formula is drawn`);
      assert.equal(
        await text(page, '#practice-text'),
        pkg.narrateGradientStep(g, index, { tokensQ: lookup.tokens, tokensK: lookup.kvTokens }),
      );
      await page.keyboard.press('ArrowRight');
    }
    return order.map(([s]) => s.id);
  };
  const ones = engine.gradients(problem);
  const ids = await walkThrough(ones);
  assert.equal(ids[0], 'dO');
  assert.deepEqual(
    ['dQ', 'dK', 'dV'].map((id) => ids.filter((x) => x === id).length),
    [1, 1, 1],
    `one head repeats a gradient: ${ids}`,
  );
  assert.ok(ids.indexOf('dA') < ids.indexOf('dS') && ids.indexOf('dS') < ids.indexOf('dQ'), `backward order: ${ids}`);

  // dO edited in its grid: 2 in the first cell.
  await page.focus('.pr-do-cell[data-r="0"][data-c="0"]');
  await page.keyboard.press('Control+A');
  await page.keyboard.type('2');
  await page.keyboard.press('Tab');
  await at(page, `Gradient step 1 of ${ids.length}`);
  await page.focus('#pr-next');
  const dO = problem.Q.map(() => [1, 1]);
  dO[0][0] = 2;
  const edited = engine.gradients(problem, { dO });
  assert.notEqual(edited.loss, ones.loss);
  await walkThrough(edited);
  // A gradient's number by keyboard: the arrows move in its table, Enter asks for its worked
  // calculation, shown when the engine explains gradient steps and left empty while it does not.
  await page.keyboard.press('Home');
  await at(page, `Gradient step 1 of ${ids.length}`);
  const dA = edited.steps.findIndex((s) => s.id === 'dA');
  await page.keyboard.press('ArrowRight');
  await at(page, `Gradient step 2 of ${ids.length}`);
  await page.focus('#practice-body .pr-gradient td[tabindex="0"]');
  await page.keyboard.press('ArrowRight');
  assert.equal(await page.evaluate(() => [document.activeElement.dataset.r, document.activeElement.dataset.c].join()), '0,1');
  await page.keyboard.press('Enter');
  let explained = null;
  try {
    explained = engine.explain({ ...problem, dO }, { step: 'dA', head: 0, row: 0, col: 1 });
  } catch {
    /* not explained yet: nothing shown */
  }
  if (explained) {
    await page.waitForSelector('#pr-drill .drill-value');
    assert.match(await text(page, '#pr-drill .drill-value'), new RegExp(cell(edited.steps[dA].data[0][1]).replace('.', '\\.')));
  } else {
    await page.waitForTimeout(200);
    assert.equal(await page.$eval('#pr-drill', (d) => d.innerHTML), '');
  }
  await page.focus('#pr-next');

  // A cell that is not a number says so, naming dO's cell, and the cell is marked as an input
  // editor's bad cell is (aria-invalid, the message as its description).
  const invalid = () =>
    page.$$eval('.pr-do-cell[aria-invalid="true"]', (els) =>
      els.map((e) => `${e.dataset.r},${e.dataset.c} ${e.getAttribute('aria-describedby')}`),
    );
  const typeDO = async (r, c, value) => {
    await page.focus(`.pr-do-cell[data-r="${r}"][data-c="${c}"]`);
    await page.keyboard.press('Control+A');
    await page.keyboard.type(value);
    await page.keyboard.press('Tab');
  };
  await typeDO(1, 1, 'x');
  await page.waitForSelector('#pr-do-error:not([hidden])');
  assert.equal(await text(page, '#pr-do-error'), `dO: row 2, column 2: expected a number but found 'x'`);
  assert.deepEqual(await invalid(), ['1,1 pr-do-error']);
  // A number again; a number the core refuses (inf) is marked from the core's error, which
  // names dO's row and column.
  await typeDO(1, 1, '0.25');
  await typeDO(0, 1, 'inf');
  await page.waitForFunction(() => document.getElementById('pr-do-error').textContent.includes('row 1, column 2'));
  assert.equal(await text(page, '#pr-do-error'), 'dO: row 1, column 2 is inf, not a finite number');
  assert.match(await text(page, '#practice-text'), /^Not computed: dO: row 1, column 2 is inf/);
  assert.deepEqual(await invalid(), ['0,1 pr-do-error']);
  // A finite number again: computed, nothing marked.
  await typeDO(0, 1, '3');
  await at(page, `Gradient step 1 of ${ids.length}`);
  assert.equal(await page.$eval('#pr-do-error', (e) => e.hidden), true);
  assert.deepEqual(await invalid(), []);
  const fixed = problem.Q.map(() => [1, 1]);
  Object.assign(fixed[0], [2, 3]);
  fixed[1][1] = 0.25;
  assert.deepEqual(
    await texts(page, '#practice-body .pr-gradient tbody td'),
    engine
      .gradients(problem, { dO: fixed })
      .steps.find((s) => s.id === 'dO')
      .data.flat()
      .map(cell),
  );
});

test('gradients of two heads sharing a key/value head say that their dK and dV are summed', async ({ page, base }) => {
  const [X, W_Q, W_K, W_V] = engine.random(
    3,
    [
      [3, 4],
      [4, 4],
      [4, 2],
      [4, 2],
    ].map((shape) => ({ kind: 'randn', shape })),
  );
  const gqa = { X, W_Q, W_K, W_V, options: { heads: 2, kv_heads: 1 } };
  await open(page, `${base}?walk=gradients#${await share.encodeStateString(share.problemToState(gqa))}`);
  const g = engine.gradients(gqa);
  const order = g.steps.map((s, i) => [s, i]).filter(([s]) => s.id.startsWith('d'));
  const n = order.findIndex(([s]) => s.id === 'dK' && s.head === 1);
  await page.focus('#pr-next');
  for (let i = 0; i < n; i++) await page.keyboard.press('ArrowRight');
  await at(page, `Gradient step ${n + 1} of ${order.length}`);
  assert.deepEqual(await texts(page, '#practice-body .pr-gradient tbody td'), order[n][0].data.flat().map(cell));
  assert.match(await text(page, '#practice-text'), /Heads 1 and 2 read the same key\/value head 1: their dK are summed into it\./);
  assert.match(await text(page, '#practice-body .pr-gradient .head-tag'), /head 2/);
});

test('the URL flag opens a walkthrough; the tabs and "In practice" by keyboard; a bad flag is said', async ({ page, base }) => {
  await open(page, `${base}?walk=tiles`);
  assert.equal(await page.$eval('#pr-tab-tiles', (t) => t.getAttribute('aria-selected')), 'true');
  assert.equal(await page.$eval('#practice', (p) => p.getBoundingClientRect().top < innerHeight), true, 'the walkthrough is not in view');
  await page.focus('#pr-tab-decode');
  await page.keyboard.press('Enter');
  await at(page, 'Token 1 of 3');
  await page.focus('#practice-close');
  await page.keyboard.press('Enter');
  assert.equal(await page.$eval('#practice', (p) => p.hidden), true);
  assert.equal(await page.evaluate(() => document.activeElement.id), 'practice-open');
  await page.keyboard.press('Enter');
  await at(page, 'Entry 1 of 3');

  await page.goto(`${base}?walk=nope`);
  await page.waitForSelector('body[data-ready="true"]');
  assert.equal(
    await text(page, '#practice-text'),
    'walk=nope: not a walkthrough (softmax, decode, tiles, gradients, recurrent). Choose one above.',
  );
});

test('screenshots: each walkthrough on a desktop, the tiles on a phone without sideways scroll', async ({ page, base }) => {
  for (const walk of ['softmax', 'decode', 'tiles', 'gradients']) {
    await open(page, `${base}?walk=${walk}`);
    await page.focus('#pr-next');
    await page.keyboard.press('ArrowRight');
    await (await page.$('#practice')).screenshot({ path: join(artifacts, `practice-${walk}-1440.png`) });
  }
  await page.setViewportSize({ width: 390, height: 844 });
  for (const walk of ['tiles', 'decode']) {
    await open(page, `${base}?walk=${walk}`);
    await page.focus('#pr-next');
    await page.keyboard.press('ArrowRight');
    const wide = await page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(wide <= 390, `${walk}: the page scrolls sideways on a phone (${wide} px wide)`);
    await (await page.$('#practice')).screenshot({ path: join(artifacts, `practice-${walk}-390.png`) });
  }
});
