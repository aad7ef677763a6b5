// "In practice": the open walkthrough's exports (Copy LaTeX, LaTeX, CSV, JSON; for gradients the
// NumPy script). In each walkthrough the files downloaded (playwright's download event) hold the
// numbers on screen: read back from the CSV and the JSON, from the LaTeX's bmatrix, and for the
// gradients from the NumPy script run under Debian's python3 + numpy.
//   node --test --test-concurrency=1 tests/browser/practice-exports.test.mjs
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

import { browserSuite } from './server.mjs';

const root = resolve(import.meta.dirname, '..', '..');
const pkg = await import(join(root, 'dist', 'node.js'));
const engine = await pkg.loadAttention();

const test = browserSuite('practice-exports', {
  lib: join(root, 'dist'),
  contextPerTest: true,
  screenshots: 'practice-exports-',
  timeout: 30000,
  contextOptions: { viewport: { width: 1440, height: 900 }, acceptDownloads: true, permissions: ['clipboard-read', 'clipboard-write'] },
});

const PYTHON = '/usr/bin/python3'; // Debian's, with python3-numpy
const hasNumpy =
  existsSync(PYTHON) &&
  (() => {
    try {
      execFileSync(PYTHON, ['-c', 'import numpy']);
      return true;
    } catch {
      return false;
    }
  })();

// The page's first example, and how the page writes a table's number.
const problem = pkg.presetProblem(pkg.findPreset('lookup'), engine).problem;
const cell = (x) => pkg.formatNumber(x, 4, { fixedZero: true, tinyAsZero: true });
/** A number as the page's tables and the LaTeX write it, read back: −0.1234 → -0.1234, −∞ → -Infinity. */
const read = (text) =>
  Number(
    text
      .replace(/\u2212/g, '-')
      .replace('-\\infty', '-Infinity')
      .replace('∞', 'Infinity'),
  );

async function open(page, url) {
  await page.goto(url);
  await page.waitForSelector('body[data-ready="true"]');
  await page.waitForSelector('#practice-body :is(table, article)');
}
const texts = (page, selector) => page.$$eval(selector, (els) => els.map((e) => e.textContent.trim()));
const at = (page, pos) => page.waitForFunction((p) => document.getElementById('practice-pos').textContent.endsWith(p), pos);

/** Clicks an export button; the download's file name and text. */
async function download(page, format) {
  const [dl] = await Promise.all([page.waitForEvent('download'), page.click(`#practice-export button[data-walk-export="${format}"]`)]);
  return { name: dl.suggestedFilename(), text: readFileSync(await dl.path(), 'utf8'), path: await dl.path() };
}

/** The long CSVs as objects of text. */
function readCsv(text) {
  const [header, ...lines] = text.trimEnd().split('\n');
  const keys = header.split(',');
  return lines.map((line) => Object.fromEntries(line.split(',').map((v, i) => [keys[i], v])));
}
const csvNumber = (s) => ({ inf: Infinity, '-inf': -Infinity, nan: NaN })[s] ?? Number(s);
const jsonNumber = (v) => ({ inf: Infinity, '-inf': -Infinity, nan: NaN })[v] ?? v;

/** The numbers of the bmatrix that follows `lead` in `tex`. */
function bmatrixAfter(tex, lead) {
  const at = tex.indexOf(lead);
  assert.ok(at >= 0, `${lead} in the LaTeX`);
  const m = /\\begin\{bmatrix\}\n([^]*?)\n\\end\{bmatrix\}/.exec(tex.slice(at));
  return m[1].split(/ \\\\\n| & /);
}

/** On screen and in a file: the same numbers at the page's 4 decimals. */
function assertSame(screen, numbers, what) {
  assert.deepEqual(screen, numbers.map(cell), what);
}
/** LaTeX numbers (texNumber at 4 decimals) against the screen's: the same values. */
function assertSameLatex(screen, tex, what) {
  assert.deepEqual(tex.map(read), screen.map(read), what);
}

/** Copy LaTeX puts the fragment of the .tex document on the clipboard. */
async function assertCopied(page, doc) {
  await page.click('#practice-export button[data-walk-export="copy-latex"]');
  await page.waitForFunction(() => document.getElementById('practice-export-status').textContent === 'LaTeX copied.');
  const copied = await page.evaluate(() => navigator.clipboard.readText());
  assert.ok(copied.length > 100 && doc.includes(copied.trim()), "the copied LaTeX is the document's body");
  assert.ok(!copied.includes('\\documentclass'));
}

test('decoding: the downloads hold the numbers of the token on screen', async ({ page, base }) => {
  await open(page, `${base}?walk=decode`);
  const d = engine.decode(problem);
  assert.deepEqual(await texts(page, '#practice-export button'), ['Copy LaTeX', 'LaTeX (.tex)', 'CSV', 'JSON']);
  await page.focus('#pr-next');
  await page.keyboard.press('End');
  const t = d.steps.length - 1;
  await at(page, `Token ${t + 1} of ${d.steps.length}`);
  const [scores, weights, output] = await page.$$eval('#practice-body .pr-row:nth-of-type(2) table.matrix', (tables) =>
    tables.map((x) => [...x.querySelectorAll('tbody td')].map((td) => td.textContent)),
  );
  const flops = await texts(page, '#pr-flops-cached, #pr-flops-full');

  const csv = await download(page, 'csv');
  assert.equal(csv.name, 'attention-decode.csv');
  const rows = readCsv(csv.text).filter((r) => Number(r.t) === t);
  const of = (q) => rows.filter((r) => r.quantity === q && (r.head === '' || r.head === '0')).map((r) => csvNumber(r.value));
  assertSame(scores, of('scores'), 'CSV scores');
  assertSame(weights, of('weights'), 'CSV weights');
  assertSame(output, of('output'), 'CSV output');
  assert.deepEqual([...of('flops_cached'), ...of('flops_full')].map(String), flops);

  const json = await download(page, 'json');
  assert.equal(json.name, 'attention-decode.json');
  const step = JSON.parse(json.text).steps[t];
  assertSame(weights, step.weights[0], 'JSON weights');
  assertSame(output, step.output, 'JSON output');

  const tex = await download(page, 'latex');
  assert.equal(tex.name, 'attention-decode.tex');
  assert.ok(tex.text.startsWith('\\documentclass{article}') && tex.text.endsWith('\\end{document}\n'));
  assertSameLatex(weights, bmatrixAfter(tex.text, `A_{${t + 1},:} &= `), 'LaTeX weights');
  assertSameLatex(output, bmatrixAfter(tex.text, `O_{${t + 1},:} &= `), 'LaTeX output');
  assert.ok(tex.text.includes(`Multiply-adds: ${flops[0]} with the cache, ${flops[1]} recomputing`));
  await assertCopied(page, tex.text);
  // The softmax walkthrough exports nothing: no buttons.
  await page.click('#pr-tab-softmax');
  await page.waitForFunction(() => document.getElementById('practice-export').hidden);
});

test('tiles: the downloads hold the numbers of the tile on screen', async ({ page, base }) => {
  await open(page, `${base}?walk=tiles`);
  const t = engine.tiles(problem, { block_q: 2, block_k: 2 });
  const i = t.tiles.findIndex((x, k) => k > 0 && !x.skipped && x.m_before.some((m) => m > -Infinity));
  await page.focus('#pr-next');
  for (let k = 0; k < i; k++) await page.keyboard.press('ArrowRight');
  await at(page, `Tile ${i + 1} of ${t.tiles.length}`);
  const now = await texts(page, '#practice-body .pr-scores td.tile-now');
  const stats = await page.$$eval('#practice-body table.pr-record tbody tr', (trs) =>
    trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)),
  );
  const [, after] = await page.$$eval('#practice-body .pr-row table.matrix', (tables) =>
    tables.map((x) => [...x.querySelectorAll('tbody td')].map((td) => td.textContent)),
  );

  const csv = await download(page, 'csv');
  assert.equal(csv.name, 'attention-tiles.csv');
  const rows = readCsv(csv.text).filter((r) => r.tile === String(i));
  const of = (q) => rows.filter((r) => r.quantity === q).map((r) => csvNumber(r.value));
  assertSame(now, of('scores'), 'CSV scores');
  assertSame(
    stats.map((r) => r[1]),
    of('m_after'),
    'CSV m after',
  );
  assertSame(
    stats.map((r) => r[2]),
    of('rescale'),
    'CSV rescale',
  );
  assertSame(
    stats.map((r) => r[4]),
    of('l_after'),
    'CSV ℓ after',
  );
  assertSame(after, of('partial_after'), 'CSV partial output after');

  const json = await download(page, 'json');
  const tile = JSON.parse(json.text).tiles[i];
  assertSame(now, tile.scores.flat().map(jsonNumber), 'JSON scores');
  assertSame(
    stats.map((r) => r[0]),
    tile.m_before.map(jsonNumber),
    'JSON m before',
  );

  const tex = await download(page, 'latex');
  assert.equal(tex.name, 'attention-tiles.tex');
  const chunk = tex.text.split('\\paragraph{')[i + 2]; // after the recurrence's paragraph
  assert.ok(chunk.startsWith(`Tile ${i + 1} of ${t.tiles.length}}`), chunk.slice(0, 40));
  assertSameLatex(now, bmatrixAfter(chunk, 'T = '), 'LaTeX scores');
  assertSameLatex(
    stats.map((r) => r[3]),
    bmatrixAfter(chunk, '\\ell &= '),
    'LaTeX ℓ before',
  );
  assertSameLatex(after, bmatrixAfter(chunk, "\\tilde O' = "), 'LaTeX partial output after');
  assert.ok(tex.text.includes(`the standard algorithm ${t.bytes_standard}, these 2 $\\times$ 2 tiles ${t.bytes_flash}.`));
  await assertCopied(page, tex.text);
});

test('gradients: the downloads, the NumPy script too, hold the numbers of the gradient on screen', async ({ page, base }) => {
  await open(page, `${base}?walk=gradients`);
  // dO edited first: the exports follow it.
  await page.fill('.pr-do-cell[data-r="0"][data-c="0"]', '2');
  await page.press('.pr-do-cell[data-r="0"][data-c="0"]', 'Tab');
  const dO = problem.Q.map(() => [1, 1]);
  dO[0][0] = 2;
  const g = engine.gradients(problem, { dO });
  const order = g.steps.map((s, i) => [s, i]).filter(([s]) => s.id.startsWith('d'));
  const [step, index] = order.find(([s]) => s.id === 'dQ' && s.head === null);
  // The walkthrough leaves out, with one head, the whole dQ, dK, dV that repeat head 1's
  // (practice.js): its dQ is head 1's, the same numbers as the whole dQ the exports hold.
  const shown = order.filter(
    ([s]) => !(g.meta.heads === 1 && s.head === null && s.inputs.length === 1 && g.steps[s.inputs[0]].id === s.id),
  );
  const n = shown.findIndex(([s]) => s.id === 'dQ');
  await page.focus('#pr-next');
  await page.keyboard.press('Home');
  for (let k = 0; k < n; k++) await page.keyboard.press('ArrowRight');
  await at(page, `Gradient step ${n + 1} of ${shown.length}`);
  assert.equal(await page.$eval('#practice-body .pr-gradient', (a) => a.dataset.step), 'dQ');
  const screen = await texts(page, '#practice-body .pr-gradient tbody td');
  assertSame(screen, step.data.flat(), 'the screen');
  assert.deepEqual(await texts(page, '#practice-export button'), ['Copy LaTeX', 'LaTeX (.tex)', 'CSV', 'JSON', 'NumPy script (.py)']);

  const csv = await download(page, 'csv');
  assert.equal(csv.name, 'attention-gradients.csv');
  assertSame(
    screen,
    readCsv(csv.text)
      .filter((r) => r.step === 'dQ' && r.head === '')
      .map((r) => csvNumber(r.value)),
    'CSV dQ',
  );
  const json = JSON.parse((await download(page, 'json')).text);
  assert.equal(json.loss, g.loss);
  assertSame(screen, json.steps[index].data.flat(), 'JSON dQ');
  const tex = await download(page, 'latex');
  assert.equal(tex.name, 'attention-gradients.tex');
  assert.ok(tex.text.includes('\\title{The backward pass, step by step}'));
  const chunk = tex.text.split('\\paragraph{').find((p) => p.startsWith(`${index + 1}. `));
  assertSameLatex(screen, bmatrixAfter(chunk, `${step.symbol} = `), 'LaTeX dQ');
  await assertCopied(page, tex.text);

  const py = await download(page, 'numpy');
  assert.equal(py.name, 'attention_gradients.py');
  if (!hasNumpy) return; // the script's numbers are checked where python3-numpy is installed
  const steps = JSON.parse(execFileSync(PYTHON, [py.path, '--json'], { encoding: 'utf8' }));
  const rebuilt = steps.find((s) => s.id === 'dQ' && s.head === null);
  assertSame(screen, rebuilt.data.flat().map(jsonNumber), "the NumPy script's dQ");
});
