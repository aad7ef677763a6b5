// Pasting into the explorer page (issue 12), in Chromium via playwright-core, on node:test:
//   node --test tests/browser/paste.test.mjs        (needs dist/: `npm run build`)
// A PyTorch tensor and a LaTeX bmatrix pasted into text boxes, a table copied from the page
// pasted back into a text box and a grid, `1,5` and `1/3` typed into a grid cell, a tensor with a
// batch axis of 1 pasted: the numbers the steps show and the "read as" line under each text box.
// The tests run in order on one page.
import assert from 'node:assert/strict';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { browserSuite } from './server.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

const test = browserSuite('paste', {
  lib: join(root, 'dist'),
  contextOptions: { viewport: { width: 1280, height: 900 }, permissions: ['clipboard-read', 'clipboard-write'] },
  screenshots: 'paste-',
});

const editor = (page, name) => page.locator(`.editor[data-input="${name}"]`);
/** The numbers of one row of a step's table, as the page shows them. */
const stepRow = (page, key, row) => page.locator(`article[data-key="${key}"] tbody tr:nth-child(${row}) td`).allTextContents();

/** Puts `text` on the clipboard and pastes it (Ctrl+V) into `target`, replacing its text. */
async function paste(page, target, text) {
  await page.evaluate((t) => navigator.clipboard.writeText(t), text);
  await target.click();
  await page.keyboard.press('Control+A');
  await page.keyboard.press('Control+V');
}

async function textTab(page, name) {
  await editor(page, name).locator('button.tab[data-tab="text"]').click();
  return editor(page, name).locator('textarea');
}

test('a PyTorch tensor pasted into a text box: its numbers, and "read as a PyTorch tensor"', async ({ page }) => {
  // The suite edits seed 000's Q, K, V (4 × 8 each).
  await page.selectOption('#preset', '000');
  const tensor =
    'tensor([[ 0.1000, -0.2000,  0.3000, -0.4000,  0.5000, -0.6000,  0.7000, -0.8000],\n' +
    '        [ 1.0000,  2.0000, -3.0000,  4.0000, -5.0000,  6.0000, -7.0000,  8.0000]],\n' +
    '       requires_grad=True)';
  await paste(page, await textTab(page, 'Q'), tensor);
  await page.waitForFunction(() => document.querySelectorAll('article[data-key="Q:0"] tbody tr').length === 2);
  assert.equal(await editor(page, 'Q').locator('.read-as').textContent(), 'read as a PyTorch tensor, 2 × 8');
  assert.deepEqual(await stepRow(page, 'Q:0', 2), ['1.0000', '2.0000', '−3.0000', '4.0000', '−5.0000', '6.0000', '−7.0000', '8.0000']);
  assert.equal(await editor(page, 'Q').locator('.error').isVisible(), false);
});

test('a LaTeX bmatrix pasted into a text box: its numbers, and "read as a LaTeX bmatrix"', async ({ page }) => {
  const latex = '\\begin{bmatrix}\n  1 & -2 \\\\\n  0.5 & 3 \\\\\n  -1 & 0 \\\\\n  2 & 2.5\n\\end{bmatrix}';
  await paste(page, await textTab(page, 'V'), latex);
  await page.waitForFunction(() => document.querySelectorAll('article[data-key="V:0"] tbody tr:first-child td').length === 2);
  assert.equal(await editor(page, 'V').locator('.read-as').textContent(), 'read as a LaTeX bmatrix, 4 × 2');
  assert.deepEqual(await stepRow(page, 'V:0', 1), ['1.0000', '−2.0000']);
  assert.deepEqual(await stepRow(page, 'V:0', 4), ['2.0000', '2.5000']);
});

test('a table copied from the page pastes back into a text box and a grid as the same numbers', async ({ page }) => {
  const shown = await Promise.all([1, 2, 3, 4].map((r) => stepRow(page, 'K:0', r)));
  assert.ok(
    shown.flat().some((t) => t.startsWith('−')),
    'K shows no negative number to copy',
  );
  // Select K's numbers as a mouse drag would (from the first number to the last) and copy.
  await page.evaluate(() => {
    const cells = document.querySelectorAll('article[data-key="K:0"] tbody td');
    const range = document.createRange();
    range.setStartBefore(cells[0]);
    range.setEndAfter(cells[cells.length - 1]);
    getSelection().removeAllRanges();
    getSelection().addRange(range);
  });
  await page.keyboard.press('Control+C');
  const copied = await page.evaluate(() => navigator.clipboard.readText());
  // ASCII minus (Python reads it), no row labels, tab-separated rows on lines.
  assert.equal(copied, shown.map((row) => row.join('\t').replaceAll('−', '-')).join('\n'));

  await paste(page, await textTab(page, 'K'), copied);
  await page.waitForFunction((text) => document.querySelector('.editor[data-input="K"] textarea').value === text, copied);
  assert.equal(await editor(page, 'K').locator('.read-as').textContent(), 'read as TSV, 4 × 8');
  assert.deepEqual(await Promise.all([1, 2, 3, 4].map((r) => stepRow(page, 'K:0', r))), shown);

  // One row of it into Q's grid, at row 1, column 1: the row fills the grid's first row.
  await editor(page, 'Q').locator('button.tab[data-tab="grid"]').click();
  await paste(page, editor(page, 'Q').locator('input.cell[data-r="0"][data-c="0"]'), copied.split('\n')[0]);
  await page.waitForFunction((first) => document.querySelector('article[data-key="Q:0"] tbody td')?.textContent === first, shown[0][0]);
  assert.deepEqual(await stepRow(page, 'Q:0', 1), shown[0]);
  assert.equal(await editor(page, 'Q').locator('.shape').textContent(), '2 × 8');
});

test('1,5 typed into a grid cell is 1.5; two numbers in a cell mark that cell', async ({ page }) => {
  const cell = editor(page, 'Q').locator('input.cell[data-r="1"][data-c="0"]');
  await cell.fill('1,5');
  await page.waitForFunction(() => document.querySelector('article[data-key="Q:0"] tbody tr:nth-child(2) td')?.textContent === '1.5000');
  assert.equal(await editor(page, 'Q').locator('.shape').textContent(), '2 × 8');
  assert.equal(await cell.getAttribute('aria-invalid'), null);

  await cell.fill('1 5');
  const error = editor(page, 'Q').locator('.error');
  await error.waitFor({ state: 'visible' });
  assert.equal(await error.textContent(), "Q: row 2, column 1: a cell holds one number but found '1 5'");
  assert.equal(await cell.getAttribute('aria-invalid'), 'true');
  assert.equal(await editor(page, 'Q').locator('.shape').textContent(), '2 × 8');

  await cell.fill('1,234');
  await page.waitForFunction(() => /is ambiguous/.test(document.querySelector('.editor[data-input="Q"] .error').textContent));
  assert.equal(
    await error.textContent(),
    "Q: row 2, column 1: '1,234' is ambiguous: 1.234 with a decimal comma, or 1234 with a thousands separator; use a dot for the decimal point",
  );

  await cell.fill('-0,25');
  await page.waitForFunction(() => document.querySelector('article[data-key="Q:0"] tbody tr:nth-child(2) td')?.textContent === '−0.2500');
  await error.waitFor({ state: 'hidden' });
  assert.equal(await cell.getAttribute('aria-invalid'), null);
});

test('1/3 typed into a grid cell is a third; a batch of one pasted is its slice, and the line under the box says so', async ({ page }) => {
  const cell = editor(page, 'Q').locator('input.cell[data-r="1"][data-c="1"]');
  await cell.fill('1/3');
  await page.waitForFunction(
    () => document.querySelector('article[data-key="Q:0"] tbody tr:nth-child(2) td:nth-child(3)')?.textContent === '0.3333',
  );
  assert.equal(await cell.getAttribute('aria-invalid'), null);
  assert.equal(await editor(page, 'Q').locator('.error').isVisible(), false);
  // PyTorch's print of a tensor of shape (1, 2, 8): the 2 × 8 slice, its batch axis dropped.
  const batch =
    'tensor([[[ 0.1000, -0.2000,  0.3000, -0.4000,  0.5000, -0.6000,  0.7000, -0.8000],\n' +
    '         [ 1.5000,  2.0000, -3.0000,  4.0000, -5.0000,  6.0000, -7.0000,  8.0000]]])';
  await paste(page, await textTab(page, 'Q'), batch);
  await page.waitForFunction(() => document.querySelector('article[data-key="Q:0"] tbody tr:nth-child(2) td')?.textContent === '1.5000');
  assert.equal(
    await editor(page, 'Q').locator('.read-as').textContent(),
    'read as a PyTorch tensor with its batch axis of 1 dropped, 2 × 8',
  );
  assert.deepEqual(await stepRow(page, 'Q:0', 1), ['0.1000', '−0.2000', '0.3000', '−0.4000', '0.5000', '−0.6000', '0.7000', '−0.8000']);
  assert.equal(await editor(page, 'Q').locator('.error').isVisible(), false);
});
