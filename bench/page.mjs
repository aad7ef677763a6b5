#!/usr/bin/env node
// The explorer page's speed as a person feels it, in headless Chromium (playwright-core + the
// system's Chromium, as the browser tests run it) against the built site/ served on 127.0.0.1.
//
//   npm run bench:page [-- --rounds N] [--quick] [--sizes 4,16,64,256,1024] [--viewport 1440x900] [--site DIR] [--json FILE]
//                         [--playground-rounds N] [--no-playground] [--preset ID]
//
// --viewport WxH: the browser's size in CSS pixels (a phone: 390x844; the problem panel starts folded).
// Then the playground (bench/playground.mjs, described there): steps per second while it draws
// against a bare Worker, frame times and clicks while it trains, on a desktop and a phone;
// --playground-rounds N of them (default 3, 1 with --quick), --no-playground to skip it.
//
// What is measured, each a median over rounds:
// - Cold load of the default example, each round in a fresh browser context (empty cache):
//   first contentful paint, and "first steps drawn" = the page's own mark `ae:first-steps-painted`:
//   the task after the first frame that had step cards in the DOM (main.js). With the site's
//   prerendered first screen (scripts/build-site.mjs) it is first-screen.js's: the time the first
//   step's first number was painted (Element Timing: its renderTime; when Chromium does not
//   report it, which happens, the task after the next frame, an upper bound). Not the first
//   contentful paint, which can come before the parser reached the steps. "Page interactive" =
//   `ae:interactive-painted`, the same for the live page's own first drawing (the engine loaded,
//   the controls bound), and when the page is ready (`ae:ready`, formulas typeset and
//   body[data-ready]).
// - Bytes: every response's body as received (response.body()), gzipped here with zlib level 6
//   (what a static server with compression sends; the local server sends them uncompressed).
//   "First screen" = the responses the page's Resource Timing says ended before the first steps
//   were drawn, plus the document; "ready" = those ended before `ae:ready`; "all" = everything
//   after the page went idle.
// - Edit -> next frame: the default example at N tokens (the page's token count), a Q grid cell
//   (or Q's text box, when the grid is not shown) changed and its `input` event dispatched in the
//   page; the time from just before the event to the first animation frame after the page's
//   synchronous update, plus the message after it (so style, layout and paint of that frame are
//   included). The page's marks `ae:update-start` / `ae:update-end` give its own share. That time
//   includes the wait for the display's next frame (up to 16.7 ms at 60 Hz, wherever the edit
//   fell in the interval), so "main-thread work" is reported too: the update plus the frame's own
//   work (from its first animation-frame callback to the task after it: the page's callbacks,
//   style, layout, paint). An edit fits in a frame when that work is under the frame's 16.7 ms.
// - Keystroke in the grid cell -> next frame: the same cell typed into with the keyboard (a digit
//   over its selected text), from the keydown's time stamp to the task after the frame that
//   follows the input event (keystrokeTimes): what a person typing feels.
// - Step-through: "Step by step", then Next -> next frame, the same way.
// The machine's load average is printed: on a shared machine, treat the figures as rough.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { chromium } from 'playwright-core';
import { CHROMIUM_ARGS, chromiumPath, startServer } from '../scripts/chromium.mjs';
import { optionValue, setTokenCount } from './page-driver.mjs';
import { benchPlayground, playgroundReport } from './playground.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const argv = process.argv.slice(2);
const flag = (name) => argv.includes(name);
const value = (name, fallback) => optionValue(name, fallback, argv);
const quick = flag('--quick');
const rounds = Number(value('--rounds', quick ? 3 : 7));
const sizes = value('--sizes', quick ? '4,16,256' : '4,16,64,256,1024')
  .split(',')
  .map(Number);
const jsonOut = value('--json', null);
const VIEWPORT = (() => {
  const text = value('--viewport', '1440x900');
  const m = /^(\d+)x(\d+)$/.exec(text);
  if (!m) {
    console.error(`--viewport ${text}: expected WIDTHxHEIGHT in CSS pixels, like 390x844`);
    process.exit(2);
  }
  return { width: Number(m[1]), height: Number(m[2]) };
})();

// The site: --site DIR as it is, else a fresh build of web/page + dist/ in a temporary folder.
let siteDir = value('--site', null);
let ownSite = false;
if (!siteDir) {
  siteDir = mkdtempSync(join(tmpdir(), 'attention-bench-site-'));
  ownSite = true;
  const b = spawnSync(process.execPath, [join(root, 'scripts', 'build-site.mjs'), '--out', siteDir], { encoding: 'utf8' });
  if (b.status !== 0) {
    console.error(b.stderr || b.stdout);
    process.exit(1);
  }
}

const { child: server, url: base } = await startServer(resolve(siteDir));

const browser = await chromium.launch({
  headless: true,
  executablePath: chromiumPath(),
  args: CHROMIUM_ARGS,
});

const median = (xs) => {
  const s = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (!s.length) return NaN;
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const ms = (x) => (Number.isFinite(x) ? `${x < 10 ? x.toFixed(1) : Math.round(x)} ms` : '—');
const kb = (x) => `${(x / 1024).toFixed(1)} KB`;

async function ready(page) {
  await page.waitForSelector('body[data-ready="true"]', { timeout: 120000 });
}

/**
 * The same wait for a cold load, from inside the page: playwright's selector engine is a script it
 * injects on first use, and evaluating it (~60 ms under load, traced) landed in the middle of the
 * load being measured, between the first steps' frame and the mark after it.
 */
async function readyUnprobed(page) {
  await page.evaluate(
    () =>
      new Promise((done) => {
        const isReady = () => document.body?.dataset.ready === 'true';
        if (isReady()) {
          done();
          return;
        }
        const watch = new MutationObserver(() => {
          if (isReady()) {
            watch.disconnect();
            done();
          }
        });
        watch.observe(document.documentElement, { attributes: true, subtree: true, attributeFilter: ['data-ready'] });
      }),
  );
}

/** One cold load: timings from the page's marks, and the bytes it fetched. */
async function coldLoad() {
  const context = await browser.newContext({ viewport: VIEWPORT });
  const page = await context.newPage();
  const bodies = new Map();
  const pending = [];
  page.on('response', (r) => {
    pending.push(
      r
        .body()
        .then((b) => bodies.set(r.url(), b))
        .catch(() => {}),
    );
  });
  await page.goto(base);
  await readyUnprobed(page);
  await page.waitForLoadState('networkidle');
  await Promise.all(pending);
  const t = await page.evaluate(() => {
    const mark = (name) => performance.getEntriesByName(name, 'mark')[0]?.startTime ?? NaN;
    const fcp = performance.getEntriesByType('paint').find((p) => p.name === 'first-contentful-paint')?.startTime ?? NaN;
    const resources = performance.getEntriesByType('resource').map((r) => ({ url: r.name, end: r.responseEnd }));
    return { fcp, steps: mark('ae:first-steps-painted'), interactive: mark('ae:interactive-painted'), ready: mark('ae:ready'), resources };
  });
  await context.close();
  const size = (url) => {
    const b = bodies.get(url);
    return b ? { raw: b.length, gz: gzipSync(b, { level: 6 }).length } : { raw: 0, gz: 0 };
  };
  const sum = (urls) => urls.map(size).reduce((a, s) => ({ raw: a.raw + s.raw, gz: a.gz + s.gz, n: a.n + 1 }), { raw: 0, gz: 0, n: 0 });
  const doc = [...bodies.keys()].filter((u) => !t.resources.some((r) => r.url === u));
  const before = (limit) => [...doc, ...t.resources.filter((r) => r.end <= limit).map((r) => r.url)];
  return {
    fcp: t.fcp,
    steps: t.steps,
    interactive: t.interactive,
    ready: t.ready,
    firstScreen: sum(before(t.steps)),
    atReady: sum(before(t.ready)),
    all: sum([...bodies.keys()]),
    largest: [...bodies.keys()]
      .map((u) => ({ url: u.replace(base, '') || '/ (the HTML)', ...size(u) }))
      .sort((a, b) => b.gz - a.gz)
      .slice(0, 6),
  };
}

/**
 * In the page: runs `act`, resolves with { frame, render }: the ms until the frame after it was
 * presented, and of those the ms from that frame's start (its first animation-frame callback,
 * requested before `act`) to the task after it: the frame's own main-thread work (the page's
 * animation-frame callbacks, style, layout, paint), without the wait for the display's next frame.
 */
const FRAME = `(act) => new Promise((done) => {
  const t0 = performance.now();
  requestAnimationFrame(() => {
    const t1 = performance.now();
    const ch = new MessageChannel();
    ch.port1.onmessage = () => { const t2 = performance.now(); done({ frame: t2 - t0, render: t2 - t1 }); };
    ch.port2.postMessage(0);
  });
  act();
})`;

async function editTimes(page, n) {
  await setTokenCount(page, n);
  const times = [];
  const own = [];
  const work = [];
  for (let r = 0; r < rounds + 1; r++) {
    const res = await page.evaluate(
      async ([frameSrc, round]) => {
        const frameFn = eval(frameSrc);
        const cell = document.querySelector('.editor[data-input="Q"] input.cell[data-r="0"][data-c="0"]');
        performance.clearMarks('ae:update-start');
        performance.clearMarks('ae:update-end');
        let how;
        const t = await frameFn(() => {
          const v = String((round % 2 ? 0.5 : 1.5) + round / 100);
          if (cell) {
            how = 'grid cell';
            cell.focus();
            cell.value = v;
            cell.dispatchEvent(new Event('input', { bubbles: true }));
          } else {
            how = 'text box';
            const ta = document.querySelector('.editor[data-input="Q"] textarea');
            ta.value = ta.value.replace(/^\s*[-\d.e+]+/, v);
            ta.dispatchEvent(new Event('input', { bubbles: true }));
          }
        });
        const s = performance.getEntriesByName('ae:update-start', 'mark')[0]?.startTime;
        const e = performance.getEntriesByName('ae:update-end', 'mark')[0]?.startTime;
        return { t: t.frame, update: e - s, work: e - s + t.render, how };
      },
      [FRAME, r],
    );
    if (r === 0) continue; // the first edit at a size warms the code paths up
    times.push(res.t);
    own.push(res.update);
    work.push(res.work);
    times.how = res.how;
  }
  const queries = await page.evaluate(() => document.getElementById('status').textContent);
  const keystroke = await keystrokeTimes(page, n);
  return {
    n,
    frame: median(times),
    update: median(own),
    work: median(work),
    keystroke,
    how: times.how,
    status: queries.replace(/:.*$/, ''),
  };
}

/**
 * A keystroke typed into the Q grid's first cell as a person types it (the keyboard: keydown,
 * beforeinput, input, keyup), from the keydown event's time stamp to the task after the next frame
 * that follows the input event: the edit's whole cost as felt. Each round selects the cell's text
 * and types one digit over it. Null when Q has no grid at this size.
 */
async function keystrokeTimes(page, n) {
  const cell = page.locator('.editor[data-input="Q"] input.cell[data-r="0"][data-c="0"]');
  if (!(await cell.count())) return null;
  const times = [];
  for (let r = 0; r < rounds + 1; r++) {
    await cell.evaluate((c) => {
      c.focus();
      c.select();
      window.__keystroke = new Promise((done) => {
        let t0 = NaN;
        c.addEventListener(
          'keydown',
          (e) => {
            t0 = e.timeStamp;
          },
          { once: true },
        );
        c.addEventListener(
          'input',
          () =>
            requestAnimationFrame(() => {
              const ch = new MessageChannel();
              ch.port1.onmessage = () => done(performance.now() - t0);
              ch.port2.postMessage(0);
            }),
          { once: true },
        );
      });
    });
    await page.keyboard.press(String(1 + (r % 9)));
    const t = await page.evaluate(() => window.__keystroke);
    if (r) times.push(t); // the first keystroke at a size warms the code paths up
  }
  return median(times);
}

async function stepTimes(page) {
  await page.click('#step-mode');
  const times = [];
  for (let r = 0; r < rounds + 1; r++) {
    const t = await page.evaluate(async (frameSrc) => eval(frameSrc)(() => document.getElementById('step-next').click()), FRAME);
    if (r) times.push(t.frame);
  }
  await page.click('#step-all');
  return median(times);
}

const started = new Date();
const loadStart = loadavg();
const loads = [];
for (let r = 0; r < rounds; r++) loads.push(await coldLoad());

const context = await browser.newContext({ viewport: VIEWPORT });
const page = await context.newPage();
await page.goto(base);
await ready(page);
// --preset ID: the edits on that example (page-ux's "Seed 000 -> 256 tokens -> type in a Q cell": 000)
const preset = value('--preset', null);
if (preset) {
  await page.selectOption('#preset', preset);
  await page.waitForFunction((id) => document.getElementById('preset').value === id, preset);
}
const step = await stepTimes(page);
const edits = [];
for (const n of sizes) edits.push(await editTimes(page, n));
await context.close();
const loadEnd = loadavg();
const playground = flag('--no-playground')
  ? null
  : await benchPlayground({
      browser,
      siteDir,
      rounds: Number(value('--playground-rounds', quick ? 1 : 3)),
      log: (line) => console.error(`bench: playground ${line}`),
    });
await browser.close();
server.kill();
if (ownSite) rmSync(siteDir, { recursive: true, force: true });

const pick = (k) => median(loads.map((l) => l[k]));
const bytes = (k) => ({
  gz: median(loads.map((l) => l[k].gz)),
  raw: median(loads.map((l) => l[k].raw)),
  n: median(loads.map((l) => l[k].n)),
});
const result = {
  date: started.toISOString(),
  cpu: cpus()[0]?.model,
  cores: cpus().length,
  node: process.version,
  chromium: browser.version?.() ?? '',
  rounds,
  loadavg: { start: loadStart, end: loadEnd },
  cold: {
    fcp: pick('fcp'),
    firstSteps: pick('steps'),
    interactive: pick('interactive'),
    ready: pick('ready'),
    firstScreen: bytes('firstScreen'),
    atReady: bytes('atReady'),
    all: bytes('all'),
  },
  largest: loads[0].largest,
  step,
  edits,
  playground,
};

console.log(`Machine: ${result.cpu}, ${result.cores} cores; Node ${result.node}; ${result.date}`);
console.log(`Load average at start / end: ${loadStart.map((x) => x.toFixed(2)).join(' ')} / ${loadEnd.map((x) => x.toFixed(2)).join(' ')}`);
console.log(
  `Rounds: ${rounds} (medians); viewport ${VIEWPORT.width}×${VIEWPORT.height}; site ${ownSite ? 'built from web/page + dist/' : siteDir}; edits on ${preset ? `the example ${preset}` : 'the default example'}\n`,
);
console.log('| cold load (default example) | median |\n| --- | ---: |');
console.log(`| first contentful paint | ${ms(result.cold.fcp)} |`);
console.log(`| first steps drawn (ae:first-steps-painted) | ${ms(result.cold.firstSteps)} |`);
console.log(`| page interactive (ae:interactive-painted) | ${ms(result.cold.interactive)} |`);
console.log(`| formulas typeset, page ready (ae:ready) | ${ms(result.cold.ready)} |`);
for (const [label, b] of [
  ['first screen', result.cold.firstScreen],
  ['by ready', result.cold.atReady],
  ['all, once idle', result.cold.all],
]) {
  console.log(`| bytes, ${label} | ${kb(b.gz)} gzipped (${kb(b.raw)} raw), ${b.n} responses |`);
}
console.log(`\nLargest responses (gzipped): ${result.largest.map((l) => `${l.url} ${kb(l.gz)}`).join(', ')}\n`);
console.log(
  "| edit a Q cell -> next frame | tokens | frame | page's update() | main-thread work | keystroke in the grid cell -> next frame | problem |\n| --- | ---: | ---: | ---: | ---: | ---: | --- |",
);
for (const e of edits)
  console.log(
    `| ${e.how} | ${e.n} | ${ms(e.frame)} | ${ms(e.update)} | ${ms(e.work)} | ${e.keystroke === null ? 'no grid' : ms(e.keystroke)} | ${e.status} |`,
  );
console.log(`\nStep-through, Next -> next frame: ${ms(step)}`);
if (playground) console.log(`\n## The playground\n${playgroundReport(playground).join('\n')}`);
if (jsonOut) writeFileSync(jsonOut, JSON.stringify(result, null, 2));
