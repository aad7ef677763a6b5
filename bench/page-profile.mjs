#!/usr/bin/env node
// Where an edit's time goes in the explorer page: a CPU profile (Chromium's CDP Profiler) of a few
// edits of a Q cell at N tokens, summed by function (self time) and by what the page's update
// calls (total time under each), printed as a table. bench/page.mjs times the same edit; this
// says what is inside it.
//
//   node bench/page-profile.mjs [--site DIR] [--sizes 64,1024] [--edits 5] [--top 25] [--out DIR] [--preset ID]
//
// --site: a built site (scripts/build-site.mjs --out DIR), else site/. --out: also writes each
// profile as DIR/edit-N.cpuprofile (opens in Chromium's devtools, Performance panel).
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { CHROMIUM_ARGS, chromiumPath, startServer } from '../scripts/chromium.mjs';
import { optionValue, setTokenCount } from './page-driver.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const argv = process.argv.slice(2);
const value = (name, fallback) => optionValue(name, fallback, argv);
if (argv.includes('--help')) {
  console.log('node bench/page-profile.mjs [--site DIR] [--sizes 64,1024] [--edits 5] [--top 25] [--out DIR]');
  process.exit(0);
}
const siteDir = resolve(value('--site', join(root, 'site')));
const sizes = value('--sizes', '64,1024').split(',').map(Number);
const edits = Number(value('--edits', 5));
const top = Number(value('--top', 25));
const outDir = value('--out', null);
if (outDir) mkdirSync(outDir, { recursive: true });

const { child: server, url: base } = await startServer(siteDir);
const browser = await chromium.launch({ headless: true, executablePath: chromiumPath(), args: CHROMIUM_ARGS });
const page = await (await browser.newContext({ viewport: { width: 1440, height: 900 } })).newPage();
await page.goto(base);
await page.waitForSelector('body[data-ready="true"]', { timeout: 120000 });
// --preset ID: the edits on that example (bench/page.mjs takes the same flag)
const preset = value('--preset', null);
if (preset) {
  await page.selectOption('#preset', preset);
  await page.waitForFunction((id) => document.getElementById('preset').value === id, preset);
}
const cdp = await page.context().newCDPSession(page);
await cdp.send('Profiler.enable');
await cdp.send('Profiler.setSamplingInterval', { interval: 100 });

// One edit as bench/page.mjs makes it: a Q cell (or Q's text box), then the next frame.
const edit = (round) =>
  page.evaluate(
    (r) =>
      new Promise((done) => {
        const v = String((r % 2 ? 0.5 : 1.5) + r / 100);
        const cell = document.querySelector('.editor[data-input="Q"] input.cell[data-r="0"][data-c="0"]');
        const t0 = performance.now();
        if (cell) {
          cell.focus();
          cell.value = v;
          cell.dispatchEvent(new Event('input', { bubbles: true }));
        } else {
          const ta = document.querySelector('.editor[data-input="Q"] textarea');
          ta.value = ta.value.replace(/^\s*[-\d.e+]+/, v);
          ta.dispatchEvent(new Event('input', { bubbles: true }));
        }
        requestAnimationFrame(() => {
          const ch = new MessageChannel();
          ch.port1.onmessage = () => done(performance.now() - t0);
          ch.port2.postMessage(0);
        });
      }),
    round,
  );

const name = (f) =>
  `${f.functionName || '(anonymous)'} ${f.url ? `${f.url.replace(base, '').replace(/^.*\//, '')}:${f.lineNumber + 1}` : ''}`.trim();

for (const n of sizes) {
  await setTokenCount(page, n);
  await edit(0); // warm-up
  await page.waitForTimeout(300);
  await cdp.send('Profiler.start');
  const frames = [];
  for (let r = 1; r <= edits; r++) frames.push(await edit(r));
  const { profile } = await cdp.send('Profiler.stop');
  if (outDir) writeFileSync(join(outDir, `edit-${n}.cpuprofile`), JSON.stringify(profile));
  await page.waitForTimeout(300); // the idle work after the last edit stays out of the next size

  // Self time per node from the samples, then per function; total time = self of the subtree.
  const dt = new Map();
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i];
    dt.set(id, (dt.get(id) ?? 0) + (profile.timeDeltas[i + 1] ?? 0) / 1000);
  }
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map();
  for (const node of profile.nodes) for (const c of node.children ?? []) parent.set(c, node.id);
  const self = new Map();
  const total = new Map();
  for (const [id, t] of dt) {
    const node = byId.get(id);
    const key = name(node.callFrame);
    self.set(key, (self.get(key) ?? 0) + t);
    // Each function on the stack once (recursion counted once).
    const onStack = new Set();
    for (let p = id; p !== undefined; p = parent.get(p)) onStack.add(name(byId.get(p).callFrame));
    for (const k of onStack) total.set(k, (total.get(k) ?? 0) + t);
  }
  const busy = [...dt.entries()]
    .filter(([id]) => !['(idle)', '(program)'].includes(byId.get(id).callFrame.functionName))
    .reduce((a, [, t]) => a + t, 0);
  frames.sort((a, b) => a - b);
  console.log(
    `\n## ${n} tokens: ${edits} edits, frames ${frames.map((f) => f.toFixed(0)).join(', ')} ms; JS+GC busy ${busy.toFixed(0)} ms in the profile; load ${loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}`,
  );
  const rows = (m) => [...m.entries()].sort((a, b) => b[1] - a[1]).slice(0, top);
  console.log('\n| self ms / edit | function |\n| ---: | --- |');
  for (const [k, t] of rows(self)) console.log(`| ${(t / edits).toFixed(1)} | ${k} |`);
  console.log('\n| total ms / edit | function |\n| ---: | --- |');
  for (const [k, t] of rows(total)) console.log(`| ${(t / edits).toFixed(1)} | ${k} |`);
}
await browser.close();
server.kill();
