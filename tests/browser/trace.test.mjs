// Every number traced, on the explorer page in Chromium via playwright-core, on node:test:
//   node --test tests/browser/trace.test.mjs [--lib DIR]
// A 2-head GQA problem (X, W_Q, W_K, W_V, W_O, causal): pointing at a score, a weight, a concat
// cell and an output cell lights the cells it was computed from (trace-pre) and the cells it feeds
// (trace-dep) in the step tables, the input grids and the diagram; moving to a cell with the keys
// and opening it lights the same cells as hovering it. Screenshots go to test-artifacts/trace-*.png.
import { join, resolve } from 'node:path';

import { artifacts, assert, axeFindings, browserSuite, isSerious, settled } from './server.mjs';

const root = resolve(import.meta.dirname, '..', '..');
const libArg = process.argv.indexOf('--lib');
const lib = resolve(libArg > 0 ? process.argv[libArg + 1] : join(root, 'dist'));
const { loadAttention } = await import(join(lib, 'node.js'));
const { encodeStateString, problemToState } = await import(join(lib, 'share.js'));
const engine = await loadAttention();

const GQA = {
  X: [
    [1, 0, 2, -1],
    [0, 1, -1, 1],
    [2, 1, 0, 0],
  ],
  W_Q: [
    [1, 0, 0, 1],
    [0, 1, 1, 0],
    [1, 1, 0, 0],
    [0, 0, 1, 1],
  ],
  W_K: [
    [1, 0],
    [0, 1],
    [1, 1],
    [0, -1],
  ],
  W_V: [
    [1, 2],
    [0, 1],
    [-1, 0],
    [1, 1],
  ],
  W_O: [
    [1, 0, 0, 1],
    [0, 1, 0, 0],
    [0, 0, 1, 0],
    [1, 0, 0, 1],
  ],
  options: { heads: 2, kv_heads: 1, causal: true },
};
const trace = engine.run(GQA);

async function open(page, base, p, width = 1280) {
  await page.setViewportSize({ width, height: 900 });
  const hash = await encodeStateString(problemToState(p));
  await page.goto('about:blank'); // a fresh page: only a hash change would keep the last test's page
  await page.goto(`${base}index.html#${hash}`);
  await page.waitForSelector('body[data-ready="true"]');
  await page.waitForSelector('#step-list article[data-key="output:-1"]');
}

/**
 * What is lit: { pre: { "key": ["r,c", ...] }, near: {...}, dep: {...}, nodes: { pre: [...], dep: [...] } },
 * keys being step cards ("scores:1") or input grids ("in:X").
 */
function lit(page) {
  return page.evaluate(() => {
    const out = { pre: {}, near: {}, dep: {}, depNear: {}, nodes: { pre: [], dep: [] } };
    const add = (where, key, el) => {
      (where[key] ??= []).push(`${el.dataset.r},${el.dataset.c}`);
    };
    for (const el of document.querySelectorAll('#step-list td.trace-pre, #step-list td.trace-dep, #editors input.cell.trace-pre')) {
      const key = el.closest('article')?.dataset.key ?? `in:${el.closest('.editor').dataset.input}`;
      if (el.classList.contains('trace-pre')) add(out.pre, key, el);
      if (el.classList.contains('trace-pre') && el.classList.contains('trace-near')) add(out.near, key, el);
      if (el.classList.contains('trace-dep')) add(out.dep, key, el);
      if (el.classList.contains('trace-dep') && el.classList.contains('trace-near')) add(out.depNear, key, el);
    }
    for (const n of document.querySelectorAll('#pipeline .pl-node.trace-pre')) out.nodes.pre.push(n.dataset.key);
    for (const n of document.querySelectorAll('#pipeline .pl-node.trace-dep')) out.nodes.dep.push(n.dataset.key);
    out.note = document.getElementById('trace-note')?.textContent ?? '';
    return out;
  });
}

const cell = (page, key, r, c) => page.locator(`#step-list article[data-key="${key}"] td[data-r="${r}"][data-c="${c}"]`);
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
const list = (cells) => cells.map(([r, c]) => `${r},${c}`);
const row = (r, n) => Array.from({ length: n }, (_, c) => `${r},${c}`);
const column = (c, n) => Array.from({ length: n }, (_, r) => `${r},${c}`);
function expect(actual, expected, what) {
  assert(same(actual ?? [], expected), `${what}: lit ${JSON.stringify(actual ?? [])}, expected ${JSON.stringify(expected)}`);
}

const test = browserSuite('trace', { lib, contextOptions: { viewport: { width: 1280, height: 900 } }, screenshots: 'trace-' });

test('a score lights its query row and key row, then X and W, and the cells it feeds', async ({ page, base }) => {
  await open(page, base, GQA);
  await cell(page, 'scores:1', 2, 1).hover();
  const l = await lit(page);
  // Head 2's score [3, 2]: query 3 of Q^(2) and key 2 of the K both heads share (GQA).
  expect(l.near['Q:1'], row(2, 2), 'Q of head 2');
  expect(l.near['K:1'], row(1, 2), 'K of head 2');
  expect(l.near['K:0'], row(1, 2), "head 1's K (the same key/value group)");
  // Further back: rows 2 and 3 of X (query 3 and key 2), head 2's columns of W_Q.
  expect(l.pre['in:X'], [...row(1, 4), ...row(2, 4)], 'X');
  expect(l.near['in:X'], [], 'X is not read directly');
  expect(l.pre['in:W_Q'], [...column(2, 4), ...column(3, 4)].sort(), 'W_Q');
  // It feeds its own cell of the scaled and masked scores, then the weights row of query 3.
  expect(l.depNear['scaled:1'], ['2,1'], 'scaled');
  expect(l.dep['masked:1'], ['2,1'], 'masked');
  expect(l.dep['weights:1'], row(2, 3), 'weights');
  expect(l.dep['output:-1'], row(2, 4), 'output');
  expect(l.pre['scores:0'], [], "head 1's scores");
  assert(
    ['Q:1', 'K:1', 'K:0', 'in:X'].every((k) => l.nodes.pre.includes(k)),
    `diagram precedents: ${l.nodes.pre}`,
  );
  assert(
    ['scaled:1', 'weights:1', 'concat:-1', 'output:-1'].every((k) => l.nodes.dep.includes(k)) && !l.nodes.dep.includes('scores:0'),
    `diagram dependents: ${l.nodes.dep}`,
  );
  assert(
    l.note.trim() === 'Computed from: Keys (head 1), Queries (head 2), Keys (head 2).  Feeds: Scaled scores (head 2).',
    `note: ${l.note}`,
  );
  await page.screenshot({ path: join(artifacts, 'trace-score.png') });
});

test('a weight lights its row of masked scores; a concat cell its head; an output its row and W_O column', async ({ page, base }) => {
  await open(page, base, GQA);
  await cell(page, 'weights:0', 1, 0).hover();
  let l = await lit(page);
  expect(l.near['masked:0'], row(1, 3), 'masked scores row read by the softmax');
  expect(l.pre['scores:0'], row(1, 3), 'scores');
  expect(l.pre['mask:0'], row(1, 3), 'mask');
  expect(l.depNear['head_output:0'], row(1, 2), "head 1's output");
  expect(l.dep['concat:-1'], ['1,0', '1,1'], "the concat's head-1 slice");
  expect(l.pre['weights:0'], [], 'no other weight');

  await cell(page, 'concat:-1', 2, 3).hover();
  l = await lit(page);
  // Concat column 4 is head 2's column 2.
  expect(l.near['head_output:1'], ['2,1'], "head 2's output");
  expect(l.pre['head_output:0'], [], "head 1's output");
  expect(l.pre['weights:1'], row(2, 3), "head 2's weights");
  expect(l.pre['V:1'], column(1, 3), "head 2's V column");
  expect(l.depNear['output:-1'], row(2, 4), 'output row');
  const concat = trace.steps.find((s) => s.id === 'concat').data[2][3];
  const head = trace.steps.find((s) => s.id === 'head_output' && s.head === 1).data[2][1];
  assert(concat === head, `concat [3, 4] = ${concat} is head 2's [3, 2] = ${head}`);

  await cell(page, 'output:-1', 0, 2).hover();
  l = await lit(page);
  expect(l.near['concat:-1'], row(0, 4), 'concat row');
  expect(l.near['in:W_O'], column(2, 4), 'W_O column');
  expect(l.pre['head_output:1'], row(0, 2), "head 2's output row");
  assert(Object.keys(l.dep).length === 0 && l.nodes.dep.length === 0, `the output feeds nothing: ${JSON.stringify(l.dep)}`);
  assert(l.note.includes('Feeds no later step'), `note: ${l.note}`);
});

test('moving to a cell with the keys and opening it lights the same cells as hovering it', async ({ page, base }) => {
  await open(page, base, GQA);
  await cell(page, 'scores:1', 2, 1).hover();
  const hovered = await lit(page);
  await page.mouse.move(5, 5);
  await page.locator('#step-list').evaluate((el) => el.dispatchEvent(new MouseEvent('mouseleave')));
  const none = await lit(page);
  assert(
    Object.keys(none.pre).length === 0 && Object.keys(none.dep).length === 0,
    `nothing lit after the pointer left: ${JSON.stringify(none.pre)}`,
  );
  // Tab into the table (its one tab stop is [1, 1]) and walk with the arrows to [3, 2].
  await cell(page, 'scores:1', 0, 0).focus();
  for (const key of ['ArrowDown', 'ArrowDown', 'ArrowRight']) await page.keyboard.press(key);
  assert(await cell(page, 'scores:1', 2, 1).evaluate((td) => td === document.activeElement), 'focus on [3, 2]');
  const focused = await lit(page);
  for (const part of ['pre', 'near', 'dep', 'depNear']) expect(focused[part], hovered[part], `focused vs hovered: ${part}`);
  await page.keyboard.press('Enter');
  await page.waitForSelector('#step-list article[data-key="scores:1"] td.selected');
  // Opened, then focus and pointer leave: the open cell keeps its lights.
  await page.locator('#tokens-q').focus();
  const opened = await lit(page);
  for (const part of ['pre', 'near', 'dep', 'depNear']) expect(opened[part], hovered[part], `opened vs hovered: ${part}`);
  expect(opened.nodes.pre.sort(), hovered.nodes.pre.sort(), 'diagram precedents');
  // The worked calculation is still there, unchanged in kind: a dot product.
  const drill = await page.locator('#drill-body').textContent();
  assert(drill.length > 20, `worked calculation: ${drill}`);
});

/** The weights of head `h` as [query][key], from the core. */
const weightsOf = (t, h) => t.steps.find((s) => s.id === 'weights' && s.head === h).data;

test("heads side by side: every head's weights on one 0–1 scale, and one head's weights as lines", async ({ page, base }) => {
  await open(page, base, GQA);
  const { colourScale } = await import(join(lib, 'index.js'));
  const maps = await page.$$eval('#heads-view .head-map', (figs) =>
    figs.map((f) => ({
      head: Number(f.dataset.head),
      caption: f.querySelector('figcaption').textContent,
      cells: [...f.querySelectorAll('rect')].map((r) => ({
        q: Number(r.dataset.q),
        k: Number(r.dataset.k),
        value: Number(r.dataset.value),
        fill: r.getAttribute('fill'),
      })),
    })),
  );
  assert(maps.map((m) => m.caption).join() === 'head 1,head 2', `maps: ${maps.map((m) => m.caption)}`);
  // The same colour for the same weight in every head: the scale is 0–1, not each head's maximum.
  const fixed = colourScale([[0, 1]], 'probability');
  for (const m of maps) {
    const w = weightsOf(trace, m.head);
    assert(m.cells.length === 9, `head ${m.head + 1}: ${m.cells.length} cells`);
    for (const c of m.cells) {
      assert(c.value === w[c.q][c.k], `head ${m.head + 1} [${c.q + 1}, ${c.k + 1}]: ${c.value} vs ${w[c.q][c.k]}`);
      assert(
        c.fill === fixed(c.value).bg,
        `head ${m.head + 1} [${c.q + 1}, ${c.k + 1}]: ${c.fill}, expected ${fixed(c.value).bg} for ${c.value}`,
      );
    }
  }
  // Causal: query 1 sees only key 1 (weight 1, the darkest); head 2's largest weight in row 3 is
  // below 1, and is not drawn as 1.
  const top = fixed(1).bg;
  assert(maps[0].cells.find((c) => c.q === 0 && c.k === 0).fill === top, 'weight 1 drawn at the top of the scale');
  const row3 = maps[1].cells.filter((c) => c.q === 2);
  const max = row3.reduce((a, c) => (c.value > a.value ? c : a));
  assert(max.value < 0.99 && max.fill !== top, `head 2 row 3 max ${max.value} drawn ${max.fill}`);

  // Lines: head 1 first, one line per query and key, as opaque as its weight.
  const lines = () =>
    page.$$eval('#heads-view .head-lines line', (ls) =>
      ls.map((l) => ({
        q: Number(l.dataset.q),
        k: Number(l.dataset.k),
        opacity: Number(l.getAttribute('stroke-opacity')),
      })),
    );
  const check = async (h) => {
    const ls = await lines();
    const w = weightsOf(trace, h);
    assert(ls.length === 9, `${ls.length} lines`);
    for (const l of ls)
      assert(
        Math.abs(l.opacity - w[l.q][l.k]) < 1e-12,
        `head ${h + 1} line ${l.q + 1}→${l.k + 1}: opacity ${l.opacity}, weight ${w[l.q][l.k]}`,
      );
    assert((await page.locator('#heads-view .head-lines').getAttribute('data-head')) === String(h), 'lines of the chosen head');
  };
  await check(0);
  const labels = await page.$$eval('#heads-view .head-lines text', (ts) => ts.map((t) => t.textContent));
  assert(labels.join(' ') === 't1 t2 t3 t1 t2 t3', `token labels: ${labels.join(' ')}`);
  // Switch to head 2 with the keyboard: its radio, then the arrow key.
  await page.locator('#heads-view input[name="lines-head"][value="0"]').focus();
  await page.keyboard.press('ArrowRight');
  await check(1);
  assert((await page.evaluate(() => document.activeElement?.value)) === '1', 'focus stays on the chosen radio');
  assert(JSON.stringify(weightsOf(trace, 0)) !== JSON.stringify(weightsOf(trace, 1)), 'the heads differ');
  // The diagram leads to the panel.
  await page.locator('#heads-link').click();
  assert((await page.evaluate(() => document.activeElement?.id)) === 'heads-title', 'the link moves focus to the panel');
  await page.locator('#heads-view').screenshot({ path: join(artifacts, 'trace-heads.png') });
  // A weight in a map opens in its step: head 2, query 3, key 2.
  await page.locator('#heads-view .head-map[data-head="1"] rect[data-q="2"][data-k="1"]').click();
  await page.waitForSelector('#step-list article[data-key="weights:1"] td.selected[data-r="2"][data-c="1"]');
  // (Scrolling to the step moved the cells under the pointer: let the pointer go.)
  await page.locator('#step-list').evaluate((el) => el.dispatchEvent(new MouseEvent('mouseleave')));
  const l = await lit(page);
  expect(l.near['masked:1'], row(2, 3), 'the opened weight lights its row of masked scores');
});

test('the columns layout draws the heads by query too; step-through hides the panel', async ({ page, base }) => {
  const p = {
    Q: [
      [1, 0],
      [0, 1],
      [1, 1],
    ],
    K: [
      [1, 0, 2],
      [0, 1, 1],
      [1, 1, 0],
    ],
    V: [
      [1, 2, 3],
      [0, 1, 0],
    ],
    options: { layout: 'columns' },
  };
  await open(page, base, p);
  const t = engine.run(p);
  const w = t.steps.find((s) => s.id === 'weights').data; // keys × queries
  const ls = await page.$$eval('#heads-view .head-lines line', (l) =>
    l.map((x) => [Number(x.dataset.q), Number(x.dataset.k), Number(x.getAttribute('stroke-opacity'))]),
  );
  assert(ls.length === 6, `${ls.length} lines for 2 queries × 3 keys`);
  for (const [q, k, o] of ls) assert(Math.abs(o - w[k][q]) < 1e-12, `line ${q + 1}→${k + 1}: ${o} vs ${w[k][q]}`);
  assert((await page.locator('#heads-view .head-map').count()) === 0, 'one head: no side-by-side maps');
  // An edit changes only numbers: the same lines take the new weights' opacities.
  await page.locator('#heads-view .head-lines line[data-q="0"][data-k="0"]').evaluate((x) => {
    x.dataset.probe = 'kept';
  });
  await page.locator('.editor[data-input="Q"] input.cell[data-r="0"][data-c="0"]').fill('3');
  const w2 = engine
    .run({
      ...p,
      Q: [
        [3, 0],
        [0, 1],
        [1, 1],
      ],
    })
    .steps.find((s) => s.id === 'weights').data;
  assert(Math.abs(w2[0][0] - w[0][0]) > 0.01, `the edit changes weight 1→1: ${w[0][0]} to ${w2[0][0]}`);
  await page.locator('#heads-view').scrollIntoViewIfNeeded();
  await page.waitForFunction(
    (o) => Number(document.querySelector('#heads-view .head-lines line[data-q="0"][data-k="0"]').getAttribute('stroke-opacity')) === o,
    w2[0][0],
  );
  const edited = await page.$$eval('#heads-view .head-lines line', (l) =>
    l.map((x) => [
      Number(x.dataset.q),
      Number(x.dataset.k),
      Number(x.getAttribute('stroke-opacity')),
      Number(x.dataset.weight),
      x.dataset.probe,
    ]),
  );
  assert(edited.length === 6 && edited[0][4] === 'kept', `${edited.length} lines, the first ${edited[0][4] ? 'kept' : 'made again'}`);
  for (const [q, k, o, weight] of edited)
    assert(o === w2[k][q] && weight === w2[k][q], `after the edit, line ${q + 1}→${k + 1}: ${o} (${weight}) vs ${w2[k][q]}`);
  await page.locator('#step-mode').click();
  assert(!(await page.locator('#heads-view').isVisible()), 'the panel is hidden while stepping through');
});

test('axe: the lit cells, the note and the heads panel on desktop and on a phone', async ({ page, base }) => {
  for (const width of [1280, 390]) {
    await open(page, base, GQA, width);
    await cell(page, 'weights:1', 2, 1).click();
    await page.waitForSelector('#step-list td.trace-pre.trace-near');
    const found = await axeFindings(page);
    const serious = found.filter(isSerious);
    const mine = found.filter((v) => v.targets.some((t) => /heads-|trace-|head-map|head-lines/.test(t)));
    assert(serious.length === 0 && mine.length === 0, `axe at ${width} px: ${JSON.stringify(found)}`);
    // The panel fits the phone: no sideways page scroll.
    assert(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), `page scrolls sideways at ${width} px`);
  }
  await page.locator('#heads-view').screenshot({ path: join(artifacts, 'trace-heads-phone.png') });
});

test('a step drawn as a heatmap gets its lit cells painted over it, and pointing at it traces too', async ({ page, base }) => {
  const n = 30; // 30 keys: too many columns for numbers, so the scores and weights are heatmaps
  const tokens = Array.from({ length: n }, (_, i) => [Math.sin(i + 1), Math.cos(2 * i)]);
  await open(page, base, { Q: tokens, K: tokens, V: tokens });
  assert((await page.locator('#step-list article[data-key="scores:0"] .heatmap canvas').count()) === 1, 'scores drawn as a heatmap');
  await cell(page, 'Q:0', 4, 1).hover();
  // Query 5 feeds row 5 of the scores: only that row is painted.
  const painted = (key) =>
    page.locator(`#step-list article[data-key="${key}"] canvas.trace-overlay`).evaluate((c) => {
      // Read a copy (reading the page's own canvas back would make Chromium warn).
      const copy = document.createElement('canvas');
      copy.width = c.width;
      copy.height = c.height;
      const g = copy.getContext('2d', { willReadFrequently: true });
      g.drawImage(c, 0, 0);
      const px = g.getImageData(0, 0, c.width, c.height).data;
      const rows = [];
      for (let r = 0; r < c.height; r++) {
        let count = 0;
        for (let col = 0; col < c.width; col++) if (px[(r * c.width + col) * 4 + 3] > 0) count++;
        if (count) rows.push(`${r}:${count}`);
      }
      return rows.join(' ');
    });
  // The overlay is painted in a frame after the pointer moves: under load that frame can come late.
  const paintedAs = async (key, want) => {
    let got = null;
    for (let i = 0; i < 40 && got !== want; i++) {
      if (i) await page.waitForTimeout(100);
      got = await painted(key);
    }
    assert(got === want, `${key} painted: ${got}, expected ${want}`);
  };
  await paintedAs('scores:0', `4:${n}`);
  await paintedAs('weights:0', `4:${n}`);
  // Pointing at weight [3, 4] of the heatmap lights query 3's row of Q and every key.
  const map = page.locator('#step-list article[data-key="weights:0"] .heatmap canvas').first();
  await map.scrollIntoViewIfNeeded();
  await settled(page); // a card that was off screen is drawn in the frame after it comes into view
  const box = await map.boundingBox();
  await page.mouse.move(box.x + (3.5 * box.width) / n, box.y + (2.5 * box.height) / n);
  // The pointer's cell is traced in a frame after it moves: under load that frame can come late.
  let l = await lit(page);
  for (let i = 0; i < 40 && !l.pre['Q:0']?.length; i++) {
    await page.waitForTimeout(100);
    l = await lit(page);
  }
  expect(l.pre['Q:0'], row(2, 2), "Q's row of query 3");
  expect(l.pre['K:0'], Array.from({ length: n }, (_, r) => row(r, 2)).flat(), 'every key');
  await paintedAs('scores:0', `2:${n}`);
});

test('many tokens: the heads maps are canvases on the same 0–1 scale', async ({ page, base }) => {
  const n = 60;
  const m = Array.from({ length: n }, (_, i) => [Math.sin(i), Math.cos(3 * i), Math.sin(5 * i), 1]);
  const p = { Q: m, K: m, V: m, options: { heads: 2 } };
  await open(page, base, p);
  const { colourLut } = await import(join(lib, 'index.js'));
  const t = engine.run(p);
  for (const h of [0, 1]) {
    const w = weightsOf(t, h);
    const { lut, index } = colourLut(w, 'probability');
    const spots = [
      [0, 0],
      [7, 3],
      [59, 58],
    ];
    const px = await page.locator(`#heads-view .head-map[data-head="${h}"] canvas`).evaluate((c, at) => {
      const copy = document.createElement('canvas');
      copy.width = c.width;
      copy.height = c.height;
      const g = copy.getContext('2d', { willReadFrequently: true });
      g.drawImage(c, 0, 0);
      return at.map(([q, k]) => [...g.getImageData(k, q, 1, 1).data.slice(0, 3)]);
    }, spots);
    spots.forEach(([q, k], i) => {
      const want = [...lut.slice(index(w[q][k]) * 3, index(w[q][k]) * 3 + 3)];
      assert(JSON.stringify(px[i]) === JSON.stringify(want), `head ${h + 1} [${q + 1}, ${k + 1}] = ${w[q][k]}: ${px[i]} vs ${want}`);
    });
  }
  assert((await page.locator('#heads-view .head-lines line').count()) === n * n, 'lines up to 64 tokens');
});
