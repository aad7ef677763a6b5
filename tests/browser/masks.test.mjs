// The mask step's components on the explorer page, in Chromium via playwright-core, on node:test:
//   node --test tests/browser/masks.test.mjs [--lib DIR]
// Causal + window [1, 0] + one sink token on 5 tokens: the mask card shows a keep-map for each
// component and "= combined", each entry in the state the rules give (checked against the rules
// written out here and against engine.run's facts.hidden_by), the sink-kept entries marked on the
// window's map; pointing at or clicking a combined entry names its components. A user's keep and
// additive mask get their own map; a single component gets none. Screenshots at 1280 and 390 px
// go to test-artifacts/masks-*.png; axe-core checks the card at 390 px.
import { join, resolve } from 'node:path';

import { artifacts, assert, axeFindings, browserSuite, isSerious } from './server.mjs';

const root = resolve(import.meta.dirname, '..', '..');
const libArg = process.argv.indexOf('--lib');
const lib = resolve(libArg > 0 ? process.argv[libArg + 1] : join(root, 'dist'));
const { loadAttention } = await import(join(lib, 'node.js'));
const { encodeStateString, problemToState } = await import(join(lib, 'share.js'));
const engine = await loadAttention();

const N = 5;
const tokens = Array.from({ length: N }, (_, i) => [i + 1, (i % 2) - 0.5]);
const problem = (options) => ({ Q: tokens, K: tokens, V: tokens, options });
const SLIDING = { causal: true, window: [1, 0], sink_tokens: 1 };

/** The page opened at a link holding `p`. */
async function open(page, base, p, width = 1280) {
  await page.setViewportSize({ width, height: 900 });
  const hash = await encodeStateString(problemToState(p));
  await page.goto(`${base}index.html#${hash}`);
  await page.waitForSelector('body[data-ready="true"]');
  await page.waitForSelector('#step-list article[data-key="mask:0"]');
}

/** Each component map of the mask card: { title, states[i][j], sinks: ["i,j", ...] }. */
function readMaps(page) {
  return page.$$eval('#step-list article[data-key="mask:0"] figure.mask-part', (figures) =>
    figures.map((f) => ({
      part: f.dataset.part,
      title: f.querySelector('figcaption').textContent,
      states: [...f.querySelectorAll('tbody tr')].map((tr) => [...tr.querySelectorAll('td')].map((td) => td.dataset.state)),
      sinks: [...f.querySelectorAll('td[data-sink]')].map((td) => `${td.dataset.i},${td.dataset.j}`),
    })),
  );
}

const grid = (rule) => Array.from({ length: N }, (_, i) => Array.from({ length: N }, (_, j) => rule(i, j)));
const keep = (kept) => (kept ? 'kept' : 'hidden');

function assertGrid(actual, expected, what) {
  expected.forEach((row, i) =>
    row.forEach((e, j) => {
      assert(actual[i]?.[j] === e, `${what} [${i + 1}, ${j + 1}]: the page shows ${actual[i]?.[j]}, expected ${e}`);
    }),
  );
}

const test = browserSuite('masks', {
  lib,
  contextPerTest: true,
  contextOptions: { viewport: { width: 1280, height: 900 } },
  screenshots: 'masks-',
});

test('causal + window [1, 0] + a sink token: three component maps and the combined one', async ({ page, base }) => {
  await open(page, base, problem(SLIDING));
  const maps = await readMaps(page);
  assert(maps.map((m) => m.part).join() === 'causal,window,sink,combined', `maps: ${maps.map((m) => m.part).join()}`);
  assert(
    maps.map((m) => m.title).join('|') === 'Causal|Window [1, 0]|Sink tokens 1|= combined',
    `titles: ${maps.map((m) => m.title).join('|')}`,
  );
  const [causal, window, sink, combined] = maps;
  // The rules at positions 0..4: causal keeps j <= i; the window keeps i - 1 <= j <= i; the sink
  // keeps key 0 where the window would hide it (queries 3, 4 and 5).
  const sinkKept = (i, j) => j === 0 && j < i - 1;
  assertGrid(
    causal.states,
    grid((i, j) => keep(j <= i)),
    'causal',
  );
  assertGrid(
    window.states,
    grid((i, j) => keep(j >= i - 1 && j <= i)),
    'window',
  );
  assertGrid(
    sink.states,
    grid((i, j) => (sinkKept(i, j) ? 'kept' : 'none')),
    'sink tokens',
  );
  assertGrid(
    combined.states,
    grid((i, j) => keep(j <= i && (j >= i - 1 || sinkKept(i, j)))),
    'combined',
  );
  assert(window.sinks.join(' ') === '2,0 3,0 4,0', `sink-kept entries marked on the window's map: ${window.sinks.join(' ')}`);
  assert(combined.sinks.length === 0 && causal.sinks.length === 0, 'only the window and sink maps mark the sink');
  // The same as the core's facts, bit by bit.
  const hiddenBy = engine.run(problem(SLIDING)).facts[0].hidden_by;
  assertGrid(
    combined.states,
    hiddenBy.map((r) => r.map((b) => keep((b & ~8) === 0))),
    'combined vs hidden_by',
  );
  assertGrid(
    causal.states,
    hiddenBy.map((r) => r.map((b) => keep((b & 1) === 0))),
    'causal vs hidden_by',
  );
  // Legends in plain words.
  const legends = await page.$$eval('#step-list article[data-key="mask:0"] .mask-part-legend', (l) => l.map((e) => e.textContent));
  assert(legends[1].startsWith('a query sees keys at most 1 position before and none after it'), `window legend: ${legends[1]}`);
  assert(/first key stays visible/.test(legends[2]), `sink legend: ${legends[2]}`);
  await page.$eval('#step-list article[data-key="mask:0"]', (a) => a.scrollIntoView());
  await page.screenshot({ path: join(artifacts, 'masks-1280.png') });
});

test('pointing at a combined entry names its components; clicking opens its worked calculation', async ({ page, base }) => {
  await open(page, base, problem(SLIDING));
  const card = '#step-list article[data-key="mask:0"]';
  const readout = () => page.$eval(`${card} .mask-parts-readout`, (p) => p.textContent);
  await page.hover(`${card} figure[data-part="combined"] td[data-i="3"][data-j="0"]`);
  assert(/kept: a sink token kept it from the window/.test(await readout()), `query 4, key 1: ${await readout()}`);
  await page.hover(`${card} figure[data-part="combined"] td[data-i="0"][data-j="4"]`);
  assert(/hidden by causal and the window$/.test(await readout()), `query 1, key 5: ${await readout()}`);
  const title = await page.$eval(`${card} figure[data-part="combined"] td[data-i="4"][data-j="1"]`, (td) => td.title);
  assert(title === 'query t5, key t2: hidden by the window', `title of query 5, key 2: ${title}`);
  await page.click(`${card} figure[data-part="combined"] td[data-i="3"][data-j="1"]`);
  await page.waitForSelector(`${card} table.matrix td.selected[data-r="3"][data-c="1"]`);
  const body = await page.$eval('#drill-body', (e) => e.textContent);
  assert(/window/i.test(body), `the worked calculation of mask[4, 2] does not name the window: ${body.slice(0, 300)}`);
});

test('your keep and additive masks have their own map; tokens as columns transpose the maps; one component has none', async ({
  page,
  base,
}) => {
  const yours = grid((i, j) => !(i === 4 && j === 4)); // hides query 5's own key
  await open(page, base, problem({ causal: true, mask: yours }));
  let maps = await readMaps(page);
  assert(maps.map((m) => m.part).join() === 'causal,mask,combined', `maps with a keep mask: ${maps.map((m) => m.part).join()}`);
  assertGrid(
    maps[1].states,
    grid((i, j) => keep(!(i === 4 && j === 4))),
    'your mask',
  );
  assertGrid(
    maps[2].states,
    grid((i, j) => keep(j <= i && !(i === 4 && j === 4))),
    'combined with your mask',
  );

  const additive = grid((i, j) => (i === 4 && j === 4 ? '-inf' : i === j ? 0.5 : 0));
  await open(page, base, problem({ causal: true, mask: additive }));
  maps = await readMaps(page);
  assertGrid(
    maps[1].states,
    grid((i, j) => keep(!(i === 4 && j === 4))),
    'your additive mask',
  );
  const legend = await page.$eval('#step-list article[data-key="mask:0"] figure[data-part="mask"] .mask-part-legend', (e) => e.textContent);
  assert(/numbers are added to the scores: they are in the mask table below/.test(legend), `additive legend: ${legend}`);

  // Tokens as columns: the maps follow the mask step's layout (keys down, queries across).
  const columns = tokens[0].map((_, f) => tokens.map((t) => t[f]));
  await open(page, base, { Q: columns, K: columns, V: columns, options: { ...SLIDING, layout: 'columns' } });
  maps = await readMaps(page);
  assertGrid(
    maps[3].states,
    grid((j, i) => keep(j <= i && (j >= i - 1 || j === 0))),
    'combined, tokens as columns',
  );
  assert(maps[1].sinks.join(' ') === '0,2 0,3 0,4', `sink marks, tokens as columns: ${maps[1].sinks.join(' ')}`);

  await open(page, base, problem({ causal: true }));
  assert((await page.$$eval('#step-list figure.mask-part', (f) => f.length)) === 0, 'causal alone drew component maps');
});

test('at 390 px the maps wrap inside the card; axe finds nothing serious in it', async ({ page, base }) => {
  await open(page, base, problem({ ...SLIDING, mask: grid(() => true) }), 390);
  const { card, maps } = await page.$eval('#step-list article[data-key="mask:0"]', (a) => ({
    card: a.getBoundingClientRect().toJSON(),
    maps: [...a.querySelectorAll('figure.mask-part')].map((f) => f.getBoundingClientRect().toJSON()),
  }));
  assert(maps.length === 5, `${maps.length} maps with causal, window, sinks and a mask`);
  assert(card.right <= 390, `the mask card reaches ${card.right} px in a 390 px viewport`);
  for (const m of maps)
    assert(m.right <= card.right && m.left >= card.left, `a map (${m.left}–${m.right}) leaves the card (${card.left}–${card.right})`);
  assert(new Set(maps.map((m) => Math.round(m.top))).size > 1, 'the five maps did not wrap onto more than one line');
  await page.$eval('#step-list article[data-key="mask:0"]', (a) => a.scrollIntoView());
  await page.screenshot({ path: join(artifacts, 'masks-390.png') });
  // axe-core's WCAG 2 A/AA rules (colour contrast included) on the mask card: nothing serious.
  const serious = (await axeFindings(page, { include: [['#step-list article[data-key="mask:0"]']] }))
    .filter(isSerious)
    .map((v) => `${v.impact}: ${v.id} (${v.targets.length}×, e.g. ${v.targets[0]})`);
  assert(serious.length === 0, `axe on the mask card: ${serious.join('; ')}`);
});
