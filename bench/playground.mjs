#!/usr/bin/env node
// The playground's speed (issue 32, "Speed, measured"), in headless Chromium (playwright-core +
// the system's Chromium) against a built site served on 127.0.0.1. `npm run bench:page` runs it
// after the explorer page's measurements (bench/page.mjs; `--no-playground` there skips it); alone:
//
//   node bench/playground.mjs [--rounds 3] [--bare-seconds 8] [--site DIR] [--json FILE] [--trace]
//
// Each round, in this order: the playground on a desktop (1440×900), the bare Worker, the
// playground on a phone (390×844, deviceScaleFactor 2, isMobile, hasTouch), the bare Worker; with
// one bare run before the first round. Each playground run is compared with the mean of the bare
// runs just before and after it (the machine's load drifts).
// - Bare Worker: bench/train-page.html (what `npm run bench:train` runs), served beside the site
//   with `/dist/` = the site's own lib/ (the same model-worker.js and wasm as the playground):
//   a warm-up call (1 s of steps), then the `induction` preset from its seed, train(10) calls back
//   to back for `--bare-seconds`.
// - The playground: a fresh context, `playground.html#p=induction`; once the model is made and
//   measured, Play (`.pg-primary`) is clicked (tapped on the phone) and the run goes to its end
//   (1,500 steps, status `done`). A script injected before the page's own records, in the page:
//   each change of `#playground-status` (data-step, data-status) with its time; every animation
//   frame (a requestAnimationFrame loop: the intervals between frames); long animation frames
//   (PerformanceObserver 'long-animation-frame': frames over 50 ms from their first task to their
//   rendering's end, with the scripts they ran) and long tasks; the Worker's messages (each call's
//   method, when it was sent and when its reply was handled). From these:
//     steps/s in the page = the steps from 1 s after the click on Play (the bare run's warm-up)
//       to the end, over that time; its ratio to the bare Worker's is the drawing's cost (goal
//       ≥ 90%);
//     frames while training = the intervals between animation frames from Play to the end
//       (goal: none over 50 ms), and the long animation frames in that time;
//     the Worker's time = the share of that window in which a train() call was outstanding, a
//       measurement (evaluate, headScores, predict: what the heads, badges and predictions are
//       drawn from) or nothing (the Worker idle, waiting for the page's next call);
//     click → next frame = while training, clicks (taps on the phone) on the "Model and training"
//       fold (4) and a head's "Switch off" / "Switch on" (2): from the click event's timeStamp to
//       the task after the next animation frame (its style, layout and paint included), as
//       bench/page.mjs times an edit; and of that, the input delay (timeStamp to the handler);
//     Play → induction head = when the live region first announces an induction head.
// - CPU time (Linux: /proc, every thread of the Chromium processes started by this process), from
//   the click on Play to the end: by thread (the Worker, the renderer's main, compositor and pool
//   threads, the GPU process that composites the frames in software here, the browser process),
//   as a share of one core; and steps per CPU-second of the Worker thread, in the page and bare.
//   That ratio does not move with other processes' load, which takes CPU time from the Worker (the
//   wall-clock ratio moves with it): it says what the page itself costs the Worker.
// The machine's `uptime` is printed before and after: on a shared machine, treat the figures as rough.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import { CHROMIUM_ARGS, chromiumPath, startServer } from '../scripts/chromium.mjs';
import { median } from './inputs.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

export const VIEWPORTS = {
  desktop: { label: 'desktop 1440×900', context: { viewport: { width: 1440, height: 900 } } },
  phone: {
    label: 'phone 390×844 (×2, touch)',
    context: { viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true },
  },
};
const CHUNK = 10;
const WARMUP_S = 1;
const uptime = () => execFileSync('uptime', { encoding: 'utf8' }).trim();

/** Injected before the playground's own scripts: records what the run is measured by (window.__pg). */
function probe() {
  const rec = { frames: [], loafs: [], longtasks: [], status: [], live: null, calls: [], clicks: [], events: [] };
  window.__pg = rec;
  const frame = (t) => {
    rec.frames.push(t);
    requestAnimationFrame(frame);
  };
  requestAnimationFrame(frame);
  const observe = (type, keep, options = {}) => {
    try {
      new PerformanceObserver((list) => {
        for (const e of list.getEntries()) keep(e);
      }).observe({ type, buffered: true, ...options });
    } catch {
      /* an entry type this Chromium does not have */
    }
  };
  observe('long-animation-frame', (e) =>
    rec.loafs.push({
      start: e.startTime,
      duration: e.duration,
      blocking: e.blockingDuration,
      renderStart: e.renderStart,
      styleAndLayoutStart: e.styleAndLayoutStart,
      scripts: e.scripts.map((s) => ({
        invoker: s.invoker,
        type: s.invokerType,
        fn: s.sourceFunctionName,
        url: s.sourceURL,
        duration: s.duration,
        layout: s.forcedStyleAndLayoutDuration,
      })),
    }),
  );
  observe('longtask', (e) => rec.longtasks.push({ start: e.startTime, duration: e.duration }));
  // The Worker's calls: { id, method, steps, sent, answered }.
  const Native = window.Worker;
  window.Worker = class extends Native {
    constructor(...args) {
      super(...args);
      this.waiting = new Map();
      this.addEventListener('message', (e) => {
        const call = this.waiting.get(e.data?.id);
        if (call) call.answered = performance.now();
        this.waiting.delete(e.data?.id);
      });
    }

    postMessage(message, ...rest) {
      if (message && typeof message === 'object' && 'method' in message) {
        const call = {
          id: message.id,
          method: message.method,
          steps: message.method === 'train' ? message.args?.[0] : undefined,
          sent: performance.now(),
        };
        rec.calls.push(call);
        this.waiting.set(message.id, call);
      }
      return super.postMessage(message, ...rest);
    }
  };
  // Click -> the task after the next animation frame (style, layout and paint of that frame done).
  addEventListener(
    'click',
    (e) => {
      const t0 = e.timeStamp;
      const handled = performance.now() - t0;
      const what = e.target.closest?.('summary, button')?.textContent ?? e.target.tagName;
      requestAnimationFrame(() => {
        const ch = new MessageChannel();
        ch.port1.onmessage = () => rec.clicks.push({ what, at: t0, handled, ms: performance.now() - t0 });
        ch.port2.postMessage(0);
      });
    },
    true,
  );
  observe(
    'event',
    (e) =>
      rec.events.push({
        name: e.name,
        start: e.startTime,
        delay: e.processingStart - e.startTime,
        processing: e.processingEnd - e.processingStart,
        duration: e.duration,
      }),
    { durationThreshold: 16 },
  );
  const watch = () => {
    const line = document.getElementById('playground-status');
    if (!line) return false;
    const read = () => {
      const now = performance.now();
      const step = Number(line.dataset.step);
      const last = rec.status[rec.status.length - 1];
      if (!last || last.step !== step || last.status !== line.dataset.status)
        rec.status.push({ t: now, step, status: line.dataset.status });
      if (!rec.live && /induction head/.test(document.querySelector('.pg-live')?.textContent ?? '')) {
        rec.live = { t: now, text: document.querySelector('.pg-live').textContent };
      }
    };
    new MutationObserver(read).observe(line, { attributes: true });
    read();
    return true;
  };
  const wait = new MutationObserver(() => {
    if (watch()) wait.disconnect();
  });
  addEventListener('DOMContentLoaded', () => {
    if (!watch()) wait.observe(document.body, { childList: true, subtree: true });
  });
}

/**
 * CPU time so far of every thread of the Chromium processes under this process (Linux /proc; an
 * empty map elsewhere): id -> { kind, ms }. Kinds: the Worker, the renderer's main thread, its
 * compositor thread, its thread pool (raster, GC), the GPU process (Viz: the display compositor,
 * drawing in software here), the browser process.
 */
function threadCpu() {
  const out = new Map();
  if (!existsSync('/proc/self/stat')) return out;
  const parent = new Map();
  const stat = (path) => {
    const text = readFileSync(path, 'utf8');
    return { name: text.slice(text.indexOf('(') + 1, text.lastIndexOf(')')), fields: text.slice(text.lastIndexOf(')') + 2).split(' ') };
  };
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      parent.set(Number(pid), Number(stat(`/proc/${pid}/stat`).fields[1]));
    } catch {
      /* gone */
    }
  }
  const under = (pid) => {
    for (let p = parent.get(pid); p > 1; p = parent.get(p)) if (p === process.pid) return true;
    return false;
  };
  for (const pid of parent.keys()) {
    if (!under(pid)) continue;
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      if (!/chrom/i.test(cmd)) continue;
      const type = /--type=([\w-]+)/.exec(cmd)?.[1] ?? 'browser';
      for (const tid of readdirSync(`/proc/${pid}/task`)) {
        const { name, fields } = stat(`/proc/${pid}/task/${tid}/stat`);
        let kind = `${type} process`;
        if (type === 'renderer') {
          if (/^DedicatedWorker/.test(name)) kind = 'the Worker';
          else if (tid === String(pid)) kind = 'renderer main thread';
          else if (/^Compositor$/.test(name)) kind = 'renderer compositor thread';
          else if (/^ThreadPool|^CompositorTile/.test(name)) kind = 'renderer thread pool (raster, GC)';
          else kind = 'renderer, other threads';
        } else if (type === 'gpu-process') kind = 'GPU process (display compositor)';
        out.set(`${pid}/${tid}`, { kind, ms: (Number(fields[11]) + Number(fields[12])) * 10 }); // utime + stime, clock ticks of 10 ms
      }
    } catch {
      /* a process or thread that ended meanwhile */
    }
  }
  return out;
}

/** CPU ms by kind between two threadCpu() snapshots. */
function cpuBetween(a, b) {
  const by = {};
  for (const [id, t] of b) {
    const ms = t.ms - (a.get(id)?.ms ?? 0);
    if (ms > 0) by[t.kind] = (by[t.kind] ?? 0) + ms;
  }
  return by;
}

/** Sum of the lengths of `intervals` ([a, b]) merged, within [lo, hi]. */
function covered(intervals, lo, hi) {
  const xs = intervals
    .map(([a, b]) => [Math.max(a, lo), Math.min(b, hi)])
    .filter(([a, b]) => b > a)
    .sort((p, q) => p[0] - q[0]);
  let total = 0;
  let end = -Infinity;
  for (const [a, b] of xs) {
    if (b <= end) continue;
    total += b - Math.max(a, end);
    end = b;
  }
  return total;
}

const quantile = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor(q * s.length))] : NaN;
};

/** One playground run of the induction preset to its end, on `viewport`. */
async function playgroundRun(browser, base, viewport) {
  const context = await browser.newContext(VIEWPORTS[viewport].context);
  const problems = [];
  try {
    await context.addInitScript(probe);
    const page = await context.newPage();
    page.on('pageerror', (e) => problems.push(e.message));
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(m.text());
    });
    page.setDefaultTimeout(300000);
    await page.goto(`${base}playground.html#p=induction`);
    // The model made and measured once (the first evaluation's accuracy shown): ready to play.
    await page.waitForSelector('#playground-status[data-status="idle"][data-accuracy]:not([data-accuracy=""])');
    await page.evaluate(() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done))));
    const touch = Boolean(VIEWPORTS[viewport].context.hasTouch);
    const press = (selector) => (touch ? page.tap(selector) : page.click(selector));
    const cpu0 = threadCpu();
    const wall0 = Date.now();
    await press('.pg-primary');
    await page.waitForFunction(() => document.getElementById('playground-status').dataset.status !== 'idle', null, { polling: 20 });
    // Clicks while training, at these steps (skipped if the run ended first).
    const fold = '.pg-fields > summary';
    const off = '.pg-head[data-layer="2"][data-head="1"] .pg-off';
    for (const [step, selector] of [
      [250, fold],
      [450, fold],
      [700, off],
      [800, off],
      [1000, fold],
      [1200, fold],
    ]) {
      await page.waitForFunction(
        (n) => {
          const s = document.getElementById('playground-status').dataset;
          return Number(s.step) >= n || s.status !== 'playing';
        },
        step,
        { polling: 50 },
      );
      if ((await page.$eval('#playground-status', (e) => e.dataset.status)) !== 'playing') break;
      await press(selector);
    }
    await page.waitForSelector('#playground-status[data-status="done"]');
    const cpu = { wall: Date.now() - wall0, ms: cpuBetween(cpu0, threadCpu()) };
    await page.evaluate(() => new Promise((done) => setTimeout(done, 300)));
    const rec = await page.evaluate(() => window.__pg);
    const end = await page.$eval('#playground-status', (e) => ({ ...e.dataset }));
    const result = { ...summarise(rec, end, problems), cpu };
    // Steps per CPU-second of the Worker thread, Play to the end (measurements included).
    result.perCpuSecond = cpu.ms['the Worker'] ? result.steps / (cpu.ms['the Worker'] / 1000) : NaN;
    return result;
  } finally {
    await context.close();
  }
}

function summarise(rec, end, problems) {
  const play = rec.status.find((s) => s.status === 'playing');
  const done = rec.status.find((s) => s.status === 'done');
  if (!play || !done)
    throw new Error(`the playground did not train to its end: ${JSON.stringify(rec.status.slice(-3))} ${problems.join(' | ')}`);
  // Play's own click is when training was asked for; the clicks after it are the ones timed.
  const playClick = rec.clicks.find((c) => c.what.trim() === 'Play');
  const t0 = playClick ? Math.min(playClick.at, play.t) : play.t;
  const clicks = rec.clicks.filter((c) => c !== playClick && c.at >= t0);
  const from = rec.status.find((s) => s.t >= t0 + WARMUP_S * 1000) ?? play;
  const stepsPerSecond = (done.step - from.step) / ((done.t - from.t) / 1000);
  const frames = rec.frames.filter((t) => t >= t0 && t <= done.t);
  const gaps = frames.slice(1).map((t, i) => t - frames[i]);
  const loafs = rec.loafs.filter((l) => l.start >= t0 && l.start <= done.t);
  const longtasks = rec.longtasks.filter((l) => l.start >= t0 && l.start <= done.t);
  // The Worker's time in the steps/s window.
  const within = (c) => c.answered !== undefined;
  const calls = rec.calls.filter(within);
  const span = done.t - from.t;
  const train = covered(
    calls.filter((c) => c.method === 'train').map((c) => [c.sent, c.answered]),
    from.t,
    done.t,
  );
  const measuring = covered(
    calls.filter((c) => c.method !== 'train').map((c) => [c.sent, c.answered]),
    from.t,
    done.t,
  );
  const any = covered(
    calls.map((c) => [c.sent, c.answered]),
    from.t,
    done.t,
  );
  const trainCalls = calls.filter((c) => c.method === 'train' && c.sent >= from.t && c.answered <= done.t);
  const count = (method) => calls.filter((c) => c.method === method && c.sent >= from.t && c.answered <= done.t).length;
  // Long animation frames: which scripts took their time.
  const scripts = new Map();
  for (const l of loafs) {
    for (const s of l.scripts) {
      const key = `${s.type} ${s.invoker}${s.fn ? ` ${s.fn}` : ''} (${(s.url ?? '').replace(/^.*\//, '')})`;
      scripts.set(key, (scripts.get(key) ?? 0) + s.duration);
    }
  }
  const clickMs = clicks.map((c) => c.ms);
  return {
    steps: done.step,
    stepsPerSecond,
    window: { fromStep: from.step, seconds: span / 1000 },
    playToDone: (done.t - t0) / 1000,
    inductionHead: rec.live ? { seconds: (rec.live.t - t0) / 1000, step: Number(/at step (\d+)/.exec(rec.live.text)?.[1]) } : null,
    frames: {
      count: frames.length,
      longest: Math.max(...gaps),
      p99: quantile(gaps, 0.99),
      median: median(gaps),
      over50: gaps.filter((g) => g > 50).length,
      over50List: gaps.filter((g) => g > 50).map((g) => Math.round(g)),
    },
    loafs: {
      count: loafs.length,
      over50: loafs.filter((l) => l.duration > 50).length,
      longest: loafs.length ? Math.max(...loafs.map((l) => l.duration)) : 0,
      list: loafs.map((l) => ({
        at: Math.round(l.start - t0),
        duration: Math.round(l.duration),
        blocking: Math.round(l.blocking),
        render: Math.round(l.start + l.duration - l.renderStart),
      })),
      scripts: [...scripts]
        .sort((a, b) => b[1] - a[1])
        .slice(0, 6)
        .map(([k, v]) => `${k} ${Math.round(v)} ms`),
    },
    longtasks: { count: longtasks.length, longest: longtasks.length ? Math.max(...longtasks.map((l) => l.duration)) : 0 },
    worker: {
      train: train / span,
      measuring: measuring / span,
      idle: 1 - any / span,
      trainCalls: trainCalls.length,
      // Per second: evaluations (the accuracy curve's points), predictions (the heads' maps), head scores (badges).
      evaluations: count('evaluate') / (span / 1000),
      predictions: count('predict') / (span / 1000),
      headScores: count('headScores') / (span / 1000),
      stepsPerTrainCall: trainCalls.length ? median(trainCalls.map((c) => c.steps)) : NaN,
      trainMsPerCall: trainCalls.length ? median(trainCalls.map((c) => c.answered - c.sent)) : NaN,
      // Steps over the time a train() call was outstanding: the Worker's own training speed in the page.
      trainingSpeed: trainCalls.reduce((a, c) => a + c.steps, 0) / (trainCalls.reduce((a, c) => a + c.answered - c.sent, 0) / 1000),
    },
    clicks: {
      count: clickMs.length,
      ms: clickMs,
      median: median(clickMs),
      longest: clickMs.length ? Math.max(...clickMs) : NaN,
      all: clicks.map((c) => `${c.what.trim()} ${Math.round(c.ms)}`),
      handled: clicks.map((c) => Math.round(c.handled)),
      // Event Timing's clicks of 16 ms or more: input delay + handlers → the next paint (in 8 ms steps).
      events: rec.events
        .filter((e) => e.name === 'click' && e.start > t0)
        .map((e) => `${Math.round(e.delay)}+${Math.round(e.processing)}→${Math.round(e.duration)}`),
    },
    final: { loss: Number(end.loss), accuracy: Number(end.accuracy) },
    problems,
  };
}

/**
 * `--trace`: one more run per viewport under Chromium's performance trace (not timed: tracing has
 * its own cost), read back as where each thread's time went: the CPU and wall time of the page's
 * threads, the renderer main thread's time by trace event (self time), and its longest tasks by
 * wall and by CPU time (a task much longer on the wall than on the CPU waited for a core).
 */
async function traceRun(browser, base, viewport) {
  const context = await browser.newContext(VIEWPORTS[viewport].context);
  try {
    const page = await context.newPage();
    page.setDefaultTimeout(300000);
    await page.goto(`${base}playground.html#p=induction`);
    await page.waitForSelector('#playground-status[data-status="idle"][data-accuracy]:not([data-accuracy=""])');
    await browser.startTracing(page, {
      categories: ['devtools.timeline', 'disabled-by-default-devtools.timeline', 'toplevel', 'v8', 'blink', 'cc', 'viz', 'gpu'],
    });
    await (VIEWPORTS[viewport].context.hasTouch ? page.tap('.pg-primary') : page.click('.pg-primary'));
    await page.waitForSelector('#playground-status[data-status="done"]');
    const events = JSON.parse((await browser.stopTracing()).toString()).traceEvents;
    return readTrace(events);
  } finally {
    await context.close();
  }
}

function readTrace(events) {
  const names = new Map();
  for (const e of events) if (e.ph === 'M' && e.name === 'thread_name') names.set(`${e.pid}:${e.tid}`, e.args.name);
  const byThread = new Map();
  for (const e of events) {
    if (e.ph !== 'X' || e.dur === undefined) continue;
    const key = `${e.pid}:${e.tid}`;
    if (!byThread.has(key)) byThread.set(key, []);
    byThread.get(key).push(e);
  }
  // The playground's renderer: the one whose Worker was busy (the bare page's sits idle).
  const workers = [...names].filter(([, n]) => n.startsWith('DedicatedWorker')).map(([k]) => k);
  const pid = workers.sort((x, y) => (byThread.get(y)?.length ?? 0) - (byThread.get(x)?.length ?? 0))[0]?.split(':')[0];
  const threads = {};
  let main = null;
  for (const [key, list] of byThread) {
    const name = names.get(key) ?? key;
    const ours = key.startsWith(`${pid}:`);
    const kind =
      ours && name === 'CrRendererMain'
        ? 'renderer main'
        : ours && name.startsWith('DedicatedWorker')
          ? 'the Worker'
          : ours && name === 'Compositor'
            ? 'renderer compositor'
            : ours && /^ThreadPool|^CompositorTile/.test(name)
              ? 'renderer pool (raster)'
              : name === 'VizCompositorThread'
                ? 'GPU process: display compositor'
                : null;
    if (!kind) continue;
    list.sort((x, y) => x.ts - y.ts || y.dur - x.dur);
    // Top-level events (not inside another on the thread), and each event's self time.
    const top = [];
    const stack = [];
    for (const e of list) {
      while (stack.length && stack[stack.length - 1].ts + stack[stack.length - 1].dur <= e.ts) stack.pop();
      if (stack.length) stack[stack.length - 1].child = (stack[stack.length - 1].child ?? 0) + e.dur;
      else top.push(e);
      stack.push(e);
    }
    const t = (threads[kind] ??= { wall: 0, cpu: 0 });
    t.wall += top.reduce((a, e) => a + e.dur, 0) / 1000;
    t.cpu += top.reduce((a, e) => a + (e.tdur ?? 0), 0) / 1000;
    if (kind === 'renderer main') main = { list, top };
  }
  const self = new Map();
  for (const e of main?.list ?? []) self.set(e.name, (self.get(e.name) ?? 0) + (e.dur - (e.child ?? 0)) / 1000);
  const tasks = main?.top ?? [];
  const longest = (k) =>
    [...tasks]
      .sort((x, y) => (y[k] ?? 0) - (x[k] ?? 0))
      .slice(0, 3)
      .map((e) => ({ wall: e.dur / 1000, cpu: (e.tdur ?? 0) / 1000 }));
  return {
    threads,
    mainSelf: [...self].sort((x, y) => y[1] - x[1]).slice(0, 10),
    tasks: tasks.length,
    longestByWall: longest('dur'),
    longestByCpu: longest('tdur'),
  };
}

/**
 * The playground's measurements (see the top of this file) with `browser`, on the site in
 * `siteDir`. `log(line)` reports progress. Returns { uptimeStart, uptimeEnd, rounds: [{ desktop, phone }],
 * bares, summary: { desktop, phone } }.
 */
export async function benchPlayground({ browser, siteDir, rounds = 3, bareSeconds = 8, trace = false, log = () => {} }) {
  // The site as it is, with /dist/ = its lib/ and /bench/ beside it (bench/train-page.html's paths).
  const view = mkdtempSync(join(tmpdir(), 'attention-bench-playground-'));
  for (const name of readdirSync(siteDir)) symlinkSync(join(resolve(siteDir), name), join(view, name));
  symlinkSync(join(resolve(siteDir), 'lib'), join(view, 'dist'));
  symlinkSync(join(root, 'bench'), join(view, 'bench'));
  const { child: server, url: base } = await startServer(view);
  const bareContext = await browser.newContext();
  const out = { uptimeStart: uptime(), rounds: [] };
  try {
    const bare = await bareContext.newPage();
    bare.setDefaultTimeout(600000);
    await bare.goto(`${base}bench/train-page.html`);
    await bare.waitForFunction(() => window.benchReady === true);
    await bare.evaluate(() => window.trainBench.load());
    const config = await bare.evaluate(async () => {
      const { connectModelWorker } = await import('/dist/model-client.js');
      const remote = connectModelWorker(new Worker('/dist/model-worker.js', { type: 'module' }));
      try {
        return (await remote.catalogue()).presets.find((p) => p.name === 'induction').config;
      } finally {
        remote.terminate();
      }
    });
    // A bare run: a warm-up call (create, 1 s of steps), then a fresh model timed, with the
    // Worker thread's CPU time around the timed call.
    const bareRun = async () => {
      await bare.evaluate(([c, o]) => window.trainBench.speed(c, o), [config, { warmup: WARMUP_S, seconds: 0.01, chunk: CHUNK }]);
      const cpu0 = threadCpu();
      const r = await bare.evaluate(([c, o]) => window.trainBench.speed(c, o), [config, { warmup: 0, seconds: bareSeconds, chunk: CHUNK }]);
      const worker = cpuBetween(cpu0, threadCpu())['the Worker'];
      return {
        stepsPerSecond: r.steps_per_second,
        perCpuSecond: worker ? r.steps / (worker / 1000) : NaN,
        workerShare: worker / 1000 / r.seconds,
      };
    };
    // bare, desktop, bare, phone, bare, ...: each playground run against the bare runs either side of it.
    const bares = [await bareRun()];
    for (let r = 0; r < rounds; r++) {
      const round = {};
      for (const viewport of Object.keys(VIEWPORTS)) {
        const p = await playgroundRun(browser, base, viewport);
        bares.push(await bareRun());
        const [before, after] = bares.slice(-2);
        p.bare = (before.stepsPerSecond + after.stepsPerSecond) / 2;
        p.barePerCpuSecond = (before.perCpuSecond + after.perCpuSecond) / 2;
        p.bareWorkerShare = (before.workerShare + after.workerShare) / 2;
        round[viewport] = p;
        log(
          `round ${r + 1}/${rounds} ${viewport}: bare ${before.stepsPerSecond.toFixed(1)} / ${after.stepsPerSecond.toFixed(1)} steps/s, page ${p.stepsPerSecond.toFixed(1)} (${((100 * p.stepsPerSecond) / p.bare).toFixed(0)}%); per Worker CPU-second ${p.perCpuSecond.toFixed(1)} against ${p.barePerCpuSecond.toFixed(1)}; longest frame interval ${Math.round(p.frames.longest)} ms; clicks ${p.clicks.all.join(', ')}`,
        );
      }
      out.rounds.push(round);
      log(`  ${uptime()}`);
    }
    out.bares = bares;
    if (trace) {
      out.traces = {};
      for (const viewport of Object.keys(VIEWPORTS)) out.traces[viewport] = await traceRun(browser, base, viewport);
    }
  } finally {
    await bareContext.close();
    server.kill();
    rmSync(view, { recursive: true, force: true });
  }
  out.uptimeEnd = uptime();
  out.summary = Object.fromEntries(
    Object.keys(VIEWPORTS).map((v) => {
      const runs = out.rounds.map((r) => r[v]);
      const clicks = runs.flatMap((x) => x.clicks.ms);
      return [
        v,
        {
          bare: median(runs.map((x) => x.bare)),
          page: median(runs.map((x) => x.stepsPerSecond)),
          ratios: runs.map((x) => x.stepsPerSecond / x.bare),
          ratio: median(runs.map((x) => x.stepsPerSecond / x.bare)),
          barePerCpuSecond: median(runs.map((x) => x.barePerCpuSecond)),
          perCpuSecond: median(runs.map((x) => x.perCpuSecond)),
          cpuRatios: runs.map((x) => x.perCpuSecond / x.barePerCpuSecond),
          cpuRatio: median(runs.map((x) => x.perCpuSecond / x.barePerCpuSecond)),
          bareWorkerShare: median(runs.map((x) => x.bareWorkerShare)),
          workerShare: median(runs.map((x) => (x.cpu.ms['the Worker'] ?? NaN) / x.cpu.wall)),
          playToDone: median(runs.map((x) => x.playToDone)),
          inductionHead: runs.every((x) => x.inductionHead)
            ? { seconds: median(runs.map((x) => x.inductionHead.seconds)), step: median(runs.map((x) => x.inductionHead.step)) }
            : null,
          longestFrame: Math.max(...runs.map((x) => x.frames.longest)),
          longestFrames: runs.map((x) => x.frames.longest),
          p99: median(runs.map((x) => x.frames.p99)),
          framesOver50: runs.map((x) => x.frames.over50),
          frames: runs.map((x) => x.frames.count),
          loafsOver50: runs.map((x) => x.loafs.over50),
          longestLoaf: Math.max(...runs.map((x) => x.loafs.longest)),
          clickMedian: median(clicks),
          clickLongest: Math.max(...clicks),
          clickInputDelay: median(runs.flatMap((x) => x.clicks.handled)),
          workerTrain: median(runs.map((x) => x.worker.train)),
          workerMeasuring: median(runs.map((x) => x.worker.measuring)),
          workerIdle: median(runs.map((x) => x.worker.idle)),
          trainingSpeed: median(runs.map((x) => x.worker.trainingSpeed)),
          stepsPerTrainCall: median(runs.map((x) => x.worker.stepsPerTrainCall)),
          predictions: median(runs.map((x) => x.worker.predictions)),
          headScores: median(runs.map((x) => x.worker.headScores)),
          // Each kind of thread's CPU time over the run's wall time (1 = one core all the time).
          cpu: Object.fromEntries(
            [...new Set(runs.flatMap((x) => Object.keys(x.cpu.ms)))].map((k) => [
              k,
              median(runs.map((x) => (x.cpu.ms[k] ?? 0) / x.cpu.wall)),
            ]),
          ),
        },
      ];
    }),
  );
  return out;
}

/** The result as Markdown lines, for the console and BENCHMARKS.md. */
export function playgroundReport(res) {
  const v = Object.keys(VIEWPORTS);
  const s = (k) => v.map((x) => res.summary[x][k]);
  const f1 = (x) => (Number.isFinite(x) ? x.toFixed(1) : '—');
  const ms = (x) => (Number.isFinite(x) ? `${Math.round(x)} ms` : '—');
  const pc = (x) => `${Math.round(100 * x)}%`;
  const row = (label, cells) => `| ${label} | ${cells.join(' | ')} |`;
  const lines = [
    `uptime at start: ${res.uptimeStart}`,
    `uptime at end:   ${res.uptimeEnd}`,
    `Rounds: ${res.rounds.length} (medians; per round in brackets); the induction preset, 1,500 steps; bare Worker = bench/train-page.html, train(${CHUNK}) back to back, the mean of the bare runs before and after each page run`,
    '',
    row(
      'playground, `induction`',
      v.map((x) => VIEWPORTS[x].label),
    ),
    row(
      '---',
      v.map(() => '---:'),
    ),
    row('bare Worker, steps/s', s('bare').map(f1)),
    row('the page while it draws, steps/s (from 1 s after Play)', s('page').map(f1)),
    row(
      'page / bare (goal ≥ 90%)',
      v.map((x) => `**${pc(res.summary[x].ratio)}** (${res.summary[x].ratios.map(pc).join(' / ')})`),
    ),
    row(
      'steps per CPU-second of the Worker thread: bare; page',
      v.map((x) => `${f1(res.summary[x].barePerCpuSecond)}; ${f1(res.summary[x].perCpuSecond)}`),
    ),
    row(
      'the same, page / bare (what the load of other processes does not change)',
      v.map((x) => `**${pc(res.summary[x].cpuRatio)}** (${res.summary[x].cpuRatios.map(pc).join(' / ')})`),
    ),
    row(
      "the Worker thread's share of one core: bare; page",
      v.map((x) => `${pc(res.summary[x].bareWorkerShare)}; ${pc(res.summary[x].workerShare)}`),
    ),
    row(
      'Play → step 1,500',
      s('playToDone').map((x) => `${f1(x)} s`),
    ),
    row(
      'Play → an induction head announced',
      s('inductionHead').map((x) => (x ? `${f1(x.seconds)} s (step ${x.step})` : 'not in every run')),
    ),
    row(
      'frame intervals while training: longest (goal ≤ 50 ms)',
      v.map((x) => `**${ms(res.summary[x].longestFrame)}** (${res.summary[x].longestFrames.map(ms).join(' / ')})`),
    ),
    row(
      'frame intervals: 99th percentile; over 50 ms of all',
      v.map(
        (x) => `${ms(res.summary[x].p99)}; ${res.summary[x].framesOver50.map((n, i) => `${n} of ${res.summary[x].frames[i]}`).join(' / ')}`,
      ),
    ),
    row(
      'long animation frames over 50 ms; longest',
      v.map((x) => `${res.summary[x].loafsOver50.join(' / ')}; ${ms(res.summary[x].longestLoaf)}`),
    ),
    row(
      'click on a control → next frame: median, longest (input delay, median)',
      v.map((x) => `${ms(res.summary[x].clickMedian)}, ${ms(res.summary[x].clickLongest)} (${ms(res.summary[x].clickInputDelay)})`),
    ),
    row(
      "the Worker's time: training / measuring / idle",
      v.map((x) => `${pc(res.summary[x].workerTrain)} / ${pc(res.summary[x].workerMeasuring)} / ${pc(res.summary[x].workerIdle)}`),
    ),
    row(
      "measurements per second: the heads' maps and the curves (predict, evaluate); the badges (headScores)",
      v.map((x) => `${f1(res.summary[x].predictions)}; ${f1(res.summary[x].headScores)}`),
    ),
    row(
      'steps per train() call; steps/s while a train() call ran',
      v.map((x) => `${f1(res.summary[x].stepsPerTrainCall)}; ${f1(res.summary[x].trainingSpeed)}`),
    ),
  ];
  const kinds = [
    'the Worker',
    'renderer main thread',
    'renderer compositor thread',
    'renderer thread pool (raster, GC)',
    'GPU process (display compositor)',
    'browser process',
  ];
  if (kinds.some((k) => res.summary[v[0]].cpu[k] !== undefined)) {
    lines.push(
      row(
        'CPU while training, % of one core: the Worker / renderer main / compositor / raster, GC / GPU process / browser',
        v.map((x) => kinds.map((k) => pc(res.summary[x].cpu[k] ?? 0)).join(' / ')),
      ),
    );
  }
  for (const [x, t] of Object.entries(res.traces ?? {})) {
    const ms1 = (n) => `${Math.round(n)} ms`;
    lines.push(
      '',
      `Trace, ${VIEWPORTS[x].label}, Play to the end: CPU (wall) by thread: ${Object.entries(t.threads)
        .map(([k, c]) => `${k} ${ms1(c.cpu)} (${ms1(c.wall)})`)
        .join(', ')}. ` +
        `Renderer main thread by event (self time, wall): ${t.mainSelf.map(([k, d]) => `${k} ${ms1(d)}`).join(', ')}. ` +
        `Its ${t.tasks} tasks: longest on the wall ${t.longestByWall.map((e) => `${e.wall.toFixed(1)} ms (CPU ${e.cpu.toFixed(1)})`).join(', ')}; longest on the CPU ${t.longestByCpu.map((e) => `${e.cpu.toFixed(1)} ms (wall ${e.wall.toFixed(1)})`).join(', ')}.`,
    );
  }
  for (const [i, r] of res.rounds.entries()) {
    for (const x of v) {
      const p = r[x];
      const extra = [
        p.frames.over50List.length ? `frame intervals over 50 ms: ${p.frames.over50List.join(', ')}` : null,
        p.loafs.scripts.length ? `long frames' scripts: ${p.loafs.scripts.join('; ')}` : null,
        p.problems.length ? `page errors: ${p.problems.join(' | ')}` : null,
      ].filter(Boolean);
      if (extra.length) lines.push('', `Round ${i + 1}, ${x}: ${extra.join('. ')}`);
    }
  }
  return lines;
}

// ---- alone: node bench/playground.mjs --------------------------------------------------------------
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const argv = process.argv.slice(2);
  const value = (name, fallback) => {
    const i = argv.indexOf(name);
    return i >= 0 && argv[i + 1] !== undefined ? argv[i + 1] : fallback;
  };
  let siteDir = value('--site', null);
  const ownSite = !siteDir;
  if (ownSite) {
    siteDir = mkdtempSync(join(tmpdir(), 'attention-bench-site-'));
    const b = spawnSync(process.execPath, [join(root, 'scripts', 'build-site.mjs'), '--out', siteDir], { encoding: 'utf8' });
    if (b.status !== 0) {
      console.error(b.stderr || b.stdout);
      process.exit(1);
    }
  }
  const browser = await chromium.launch({ headless: true, executablePath: chromiumPath(), args: CHROMIUM_ARGS });
  try {
    const res = await benchPlayground({
      browser,
      siteDir,
      rounds: Number(value('--rounds', 3)),
      bareSeconds: Number(value('--bare-seconds', 8)),
      trace: argv.includes('--trace'),
      log: (l) => console.error(`bench: ${l}`),
    });
    console.log(
      `Machine: ${cpus()[0]?.model}, ${cpus().length} cores; Node ${process.version}; Chromium ${browser.version()}; ${new Date().toISOString()}`,
    );
    console.log(playgroundReport(res).join('\n'));
    const json = value('--json', null);
    if (json) writeFileSync(json, JSON.stringify(res, null, 2));
  } finally {
    await browser.close();
    if (ownSite) rmSync(siteDir, { recursive: true, force: true });
  }
}
