#!/usr/bin/env node
// Where a keystroke's frame goes in the explorer page: a Chromium trace (CDP Tracing, categories
// devtools.timeline, blink and cc) of keystrokes typed into the Q grid's first cell, each as bench/page.mjs types
// it (the cell's text selected, one digit typed over it, the next frame), summed over the renderer's
// main thread by phase: style and layout, pre-paint, paint, layerize (PaintArtifactCompositor), the
// input event (the page's update runs inside it). Times are the thread's CPU time (the trace's
// `tdur`), which the load of other processes stretches less than wall time: on a shared machine,
// compare pages with this rather than with frame times alone. bench/page-profile.mjs says which of
// the page's functions an edit calls; this says what the browser does after them.
//
//   node bench/page-trace.mjs [--site DIR] [--tokens 256] [--edits 8] [--preset 000] [--css TEXT] [--out FILE]
//
// --site: a built site (scripts/build-site.mjs --out DIR), else site/. --css: a style sheet added to
// the page before typing (to try a CSS change without a rebuild). --out: the trace as JSON (opens in
// Chromium's devtools, Performance panel).
import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { CHROMIUM_ARGS, chromiumPath, startServer } from '../scripts/chromium.mjs';
import { optionValue, setTokenCount } from './page-driver.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const argv = process.argv.slice(2);
const value = (name, fallback) => optionValue(name, fallback, argv);
const siteDir = resolve(value('--site', join(root, 'site')));
const tokens = Number(value('--tokens', 256));
const edits = Number(value('--edits', 8));
const preset = value('--preset', '000');
const css = value('--css', null);
const outFile = value('--out', null);

const loadStart = loadavg();
const { child: server, url: base } = await startServer(siteDir);
const browser = await chromium.launch({ headless: true, executablePath: chromiumPath(), args: CHROMIUM_ARGS });
const page = await (await browser.newContext({ viewport: { width: 1440, height: 900 } })).newPage();
await page.goto(base);
await page.waitForSelector('body[data-ready="true"]', { timeout: 120000 });
await page.evaluate((id) => {
  const select = /** @type {HTMLSelectElement} */ (document.getElementById('preset'));
  select.value = id;
  select.dispatchEvent(new Event('change', { bubbles: true }));
}, preset);
await page.waitForFunction((id) => /** @type {HTMLSelectElement} */ (document.getElementById('preset')).value === id, preset);
await setTokenCount(page, tokens);
if (css) await page.addStyleTag({ content: css });
const cell = page.locator('.editor[data-input="Q"] input.cell[data-r="0"][data-c="0"]');
if (!(await cell.count())) {
  console.error(`page-trace: Q has no grid at ${tokens} tokens`);
  process.exit(2);
}
const type = async (round) => {
  await cell.evaluate((c) => {
    /** @type {HTMLInputElement} */ (c).focus();
    /** @type {HTMLInputElement} */ (c).select();
  });
  await page.keyboard.press(String(1 + (round % 9)));
  // the frame after the input, then the idle work the page leaves for after it
  await page.evaluate(() => new Promise((done) => requestAnimationFrame(() => setTimeout(done, 50))));
};
for (let r = 0; r < 2; r++) await type(r); // warm the code paths up
await page.waitForTimeout(500);
await browser.startTracing(page, { categories: ['devtools.timeline', 'disabled-by-default-devtools.timeline', 'blink', 'cc'] });
for (let r = 2; r < 2 + edits; r++) await type(r);
const trace = await browser.stopTracing();
await browser.close();
server.kill();
if (outFile) writeFileSync(outFile, trace);

const events = JSON.parse(trace.toString()).traceEvents;
const thread = events.find((e) => e.name === 'thread_name' && e.args?.name === 'CrRendererMain');
const main = events.filter((e) => e.pid === thread.pid && e.tid === thread.tid && e.ph === 'X');
/** CPU ms per keystroke of the events named `name` (their wall time where the trace has no `tdur`). */
const cpu = (name) => main.filter((e) => e.name === name).reduce((sum, e) => sum + (e.tdur ?? e.dur ?? 0) / 1000, 0) / edits;
const rows = [
  ["the frames' rendering (style, layout, paint, layerize and the rest)", 'WebFrameWidgetImpl::UpdateLifecycle'],
  ['layout (in the frames, or asked for by a script)', 'Layout'],
  ['pre-paint', 'PrePaint'],
  ['compositing inputs', 'LocalFrameView::RunCompositingInputsLifecyclePhase'],
  ['paint', 'Blink.Paint.UpdateTime'],
  ['layerize', 'Layerize'],
  ["the input event (the page's update inside it)", 'TypingCommand::InsertText'],
  ['all tasks', 'RunTask'],
];
const load = (l) => l.map((x) => x.toFixed(2)).join(' ');
console.log(`Load average at start / end: ${load(loadStart)} / ${load(loadavg())}`);
console.log(
  `Example ${preset}, ${tokens} tokens, ${edits} keystrokes (each: the cell's text selected, a digit typed)${css ? `; with the CSS ${css}` : ''}\n`,
);
console.log('| main thread, CPU ms per keystroke | ms |\n| --- | ---: |');
for (const [label, name] of rows) console.log(`| ${label} | ${cpu(name).toFixed(1)} |`);
