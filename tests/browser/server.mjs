// What the browser suites share: building the site into a temporary folder, serving it with
// scripts/serve.mjs on a free port, launching Chromium through playwright-core, and
// browserSuite(), which runs a suite's tests on node:test against them.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { TYPE, parse } from '@formatjs/icu-messageformat-parser';
import { CHROMIUM_ARGS, chromiumPath, startServer } from '../../scripts/chromium.mjs';

export { startServer };

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const artifacts = join(root, 'test-artifacts');

/**
 * Builds the static site (the page + the package in `lib`, or dist/) into a fresh temporary
 * folder and returns it; throws, naming the suite, when the build fails.
 */
export function buildSite(suite, lib) {
  const siteDir = mkdtempSync(join(tmpdir(), `attention-site-${suite}-`));
  const args = [join(root, 'scripts', 'build-site.mjs'), '--out', siteDir, ...(lib ? ['--lib', lib] : [])];
  const build = spawnSync(process.execPath, args, { encoding: 'utf8' });
  if (build.status !== 0) {
    rmSync(siteDir, { recursive: true, force: true });
    throw new Error(`${suite} browser tests: could not build the site (run \`npm run build\` first):\n${build.stderr || build.stdout}`);
  }
  return siteDir;
}

const CHROMIUM = { headless: true, args: CHROMIUM_ARGS };

/** Chromium with a fresh profile folder: `{ context, userDataDir }` (remove the folder after). */
export async function launchContext(suite, options = {}) {
  const userDataDir = mkdtempSync(join(tmpdir(), `attention-chromium-${suite}-`));
  const context = await chromium.launchPersistentContext(userDataDir, { ...CHROMIUM, executablePath: chromiumPath(), ...options });
  return { context, userDataDir };
}

/** Chromium without a persistent profile, for suites that open a context per test. */
export function launchBrowser() {
  return chromium.launch({ ...CHROMIUM, executablePath: chromiumPath() });
}

/**
 * Declares a browser suite on node:test. Before its first test: builds the site (the page +
 * `lib`, default dist/), serves it (and a second time with `strictHeaders`, if given) and starts
 * Chromium; after its last test, closes and removes all of it. Returns `test(name, fn)`: fn gets
 * `{ page, context, base, requests, siteDir, strictBase, ...setup's result }` and the test fails on
 * what the page reported meanwhile: a console message of a `consoleTypes` type, an uncaught
 * exception, a dialog, and with `httpErrors` a response of status 400 or more. A failing test
 * leaves a screenshot test-artifacts/<screenshots>FAIL-<n>.png unless `screenshots` is null.
 *
 *   contextPerTest  a fresh browser context and page per test; otherwise one profile and page for
 *                   the whole suite, opened at the site first (tests run in order and see what
 *                   earlier ones left: the page, `requests` since the start)
 *   contextOptions  for the context (viewport, acceptDownloads)
 *   setup           async ({ context, page }) => fields for fn, once per context (init scripts, CDP)
 *   timeout         playwright's per-action timeout, in ms
 */
export function browserSuite(
  suite,
  {
    lib,
    strictHeaders,
    contextPerTest = false,
    contextOptions = {},
    setup,
    timeout = 10000,
    consoleTypes = ['error', 'warning'],
    httpErrors = false,
    screenshots = '',
  } = {},
) {
  const s = { problems: [], failures: 0 };

  const watch = (page, requests) => {
    page.on('console', (m) => {
      if (consoleTypes.includes(m.type())) s.problems.push(`${m.type()}: ${m.text()}`);
    });
    page.on('pageerror', (e) => s.problems.push(`uncaught: ${e.message}`));
    page.on('request', (r) => requests.push(r.url()));
    page.on('dialog', (d) => {
      s.problems.push(`a dialog opened: ${d.message()}`);
      d.dismiss().catch(() => {});
    });
    if (httpErrors)
      page.on('response', (r) => {
        if (r.status() >= 400) s.problems.push(`HTTP ${r.status()} ${r.url()}`);
      });
  };

  /** A context with one watched page: `{ context, page, requests, ...setup's fields }`. */
  const open = async (context) => {
    const requests = [];
    const page = context.pages()[0] ?? (await context.newPage());
    const extra = setup ? await setup({ context, page }) : {};
    watch(page, requests);
    context.on('page', (p) => watch(p, requests));
    page.setDefaultTimeout(timeout);
    return { context, page, requests, ...extra };
  };

  before(async () => {
    if (screenshots !== null) {
      mkdirSync(artifacts, { recursive: true });
      // Failure screenshots of earlier runs would only mislead.
      const stale = new RegExp(`^${screenshots}FAIL-\\d+\\.png$`);
      for (const f of readdirSync(artifacts)) if (stale.test(f)) rmSync(join(artifacts, f));
    }
    s.siteDir = buildSite(suite, lib);
    s.server = await startServer(s.siteDir);
    if (strictHeaders) s.strict = await startServer(s.siteDir, strictHeaders);
    if (contextPerTest) {
      s.browser = await launchBrowser();
    } else {
      const launched = await launchContext(suite, contextOptions);
      s.userDataDir = launched.userDataDir;
      s.shared = await open(launched.context);
      await s.shared.page.goto(s.server.url);
      await s.shared.page.waitForSelector('body[data-ready="true"]');
    }
  });

  after(async () => {
    await s.shared?.context.close().catch(() => {});
    await s.browser?.close().catch(() => {});
    s.server?.child.kill();
    s.strict?.child.kill();
    for (const dir of [s.userDataDir, s.siteDir]) if (dir) rmSync(dir, { recursive: true, force: true });
  });

  return (name, fn) =>
    test(name, async () => {
      const fixture = s.shared ?? (await open(await s.browser.newContext(contextOptions)));
      const seen = s.problems.length;
      try {
        await fn({ ...fixture, base: s.server.url, strictBase: s.strict?.url, siteDir: s.siteDir });
        if (s.problems.length > seen) throw new Error(`the page reported: ${s.problems.slice(seen).join(' | ')}`);
      } catch (error) {
        s.failures += 1;
        if (screenshots !== null) {
          await fixture.page.screenshot({ path: join(artifacts, `${screenshots}FAIL-${s.failures}.png`), fullPage: true }).catch(() => {});
        }
        throw error;
      } finally {
        if (!s.shared) await fixture.context.close();
      }
    });
}

// Checks the suites share: a number as the page shows it (U+2212 minus), and matrices to a tolerance.
export function assert(cond, message) {
  if (!cond) throw new Error(message);
}
/** The rule sets every suite checks: WCAG 2.0 and 2.1, levels A and AA (colour contrast included). */
export const WCAG_AA = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'];

/**
 * Resolves once the page drew its last update and did what it leaves for after the frame and for
 * its idle time (web/page/scrollables.js: the marks and tab stops of regions that scroll sideways,
 * in step cards and panels the browser skips while they are off screen), as a reader would see it.
 */
export function settled(page) {
  return page.evaluate(() => new Promise((done) => requestAnimationFrame(() => requestIdleCallback(done, { timeout: 2000 }))));
}

/**
 * axe-core's findings on the page as it is, each { id, impact, help, targets }: on `include` (axe
 * selectors) or the whole document, less `exclude`, with the rule sets `tags`. The page is
 * `settled` first, as it is before anyone could tab through it.
 */
export async function axeFindings(page, { include = null, exclude = null, tags = WCAG_AA } = {}) {
  if (!(await page.evaluate(() => Boolean(window.axe)))) {
    await page.addScriptTag({ path: join(root, 'node_modules', 'axe-core', 'axe.min.js') });
  }
  await settled(page);
  return page.evaluate(
    async ([include, exclude, tags]) => {
      const context = include || exclude ? { ...(include && { include }), ...(exclude && { exclude }) } : document;
      const r = await window.axe.run(context, { runOnly: { type: 'tag', values: tags } });
      return r.violations.map((v) => ({
        id: v.id,
        impact: v.impact,
        help: v.help,
        targets: v.nodes.map((n) => [].concat(n.target).join(' ')),
      }));
    },
    [include, exclude, tags],
  );
}

/** A finding that fails a page: serious or critical. */
export const isSerious = (v) => v.impact === 'serious' || v.impact === 'critical';

export const shown = (t) =>
  Number(
    String(t)
      .trim()
      .replace(/\u2212/g, '-'),
  );
export function assertMatrix(actual, expected, what, tol) {
  assert(actual.length === expected.length, `${what}: ${actual.length} rows, expected ${expected.length}`);
  actual.forEach((row, i) => {
    assert(row.length === expected[i].length, `${what} row ${i + 1}: ${row.length} values, expected ${expected[i].length}`);
    row.forEach((v, j) => assert(Math.abs(v - expected[i][j]) <= tol, `${what}[${i}][${j}] = ${v}, expected ${expected[i][j]}`));
  });
}

// ---- the learner's language (issue 33): what the i18n suites check on screen --------------------
const locales = join(root, 'web', 'lib', 'locales');
/** A language's catalogue, web/lib/locales/<code>.json. */
export const catalogue = (code) => JSON.parse(readFileSync(join(locales, `${code}.json`), 'utf8'));

/** A message's literal text (placeholders and plural forms left out), as pieces. */
function literals(message) {
  const out = [];
  const walk = (elements) => {
    for (const e of elements) {
      if (e.type === TYPE.literal) out.push(e.value);
      else if (e.type === TYPE.plural || e.type === TYPE.select) for (const o of Object.values(e.options)) walk(o.value);
      else if (e.type === TYPE.tag) walk(e.children);
    }
  };
  walk(parse(message));
  return out.map((s) => s.trim()).filter((s) => /\p{L}{2,}/u.test(s));
}

/**
 * The English the screen must not show in `code`: whole messages without placeholders (matched
 * against an element's whole text: "Play", "Seed") and pieces of a dozen characters or more of the
 * others (matched anywhere), each only where the translation does not say the same (RoPE, MLP).
 * `only`: the ids to take (a test of one page's words), all by default.
 */
export function englishFor(code, only = () => true) {
  const en = catalogue('en');
  const own = catalogue(code);
  const whole = [];
  const pieces = [];
  for (const [id, message] of Object.entries(en)) {
    if (id === '@metadata' || own[id] === message || !only(id)) continue;
    const translated = literals(own[id]).join(' ');
    const parts = literals(message);
    if (parts.length === 1 && parts[0] === message.trim()) {
      if (!translated.includes(message)) whole.push(message);
    } else for (const p of parts) if (p.length >= 12 && !translated.includes(p)) pieces.push(p);
  }
  return { whole, pieces };
}

/**
 * The English of `words` (englishFor) that the elements of `regions` (a selector) show: an element
 * whose whole text is a whole message, or a piece anywhere in their text; `skip` (a selector):
 * elements whose words are not the interface's (a user's text, the core's sentences). `host` (a
 * selector): the regions are looked for in that element's shadow root (<attention-explorer>).
 */
export function englishShown(page, words, regions, skip = null, host = null) {
  return page.evaluate(
    ([{ whole, pieces }, regions, skip, host]) => {
      const root = host ? document.querySelector(host).shadowRoot : document;
      const visible = (e) => e.checkVisibility?.() ?? e.offsetParent !== null;
      const wholeSet = new Set(whole);
      const english = [];
      let text = '';
      for (const region of root.querySelectorAll(regions)) {
        if (!visible(region)) continue;
        const walker = document.createTreeWalker(region, NodeFilter.SHOW_TEXT);
        for (let n = walker.nextNode(); n; n = walker.nextNode()) {
          const parent = n.parentElement;
          if (parent && visible(parent) && !(skip && parent.closest(skip))) text += n.textContent;
        }
        text += '\n';
        for (const e of [region, ...region.querySelectorAll('*')]) {
          if (!visible(e) || (skip && e.closest(skip))) continue;
          const own = [...e.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim());
          if (own && wholeSet.has(e.textContent.trim())) english.push(e.textContent.trim());
        }
      }
      text = text.replace(/\s+/g, ' ');
      for (const p of pieces) if (text.includes(p.replace(/\s+/g, ' '))) english.push(p);
      return [...new Set(english)];
    },
    [words, regions, skip, host],
  );
}

/**
 * Text clipped in the elements of `regions` (a selector): an element with text of its own that is
 * wider than its box (text cut off or spilling out; inline boxes have no width of their own),
 * leaving out `skip` (controls, drawings) and marks drawn by CSS. As "tag#id.class: text (widths)".
 */
export function clippedText(page, regions, skip = 'input, select, option, svg, svg *, canvas, progress') {
  return page.evaluate(
    ([regions, skip]) => {
      const visible = (e) => e.checkVisibility?.() ?? e.offsetParent !== null;
      const clipped = [];
      for (const region of document.querySelectorAll(regions)) {
        for (const e of [region, ...region.querySelectorAll('*')]) {
          if (!visible(e) || e.matches(skip)) continue;
          const own = [...e.childNodes]
            .filter((n) => n.nodeType === 3)
            .map((n) => n.textContent)
            .join('')
            .trim();
          if (!own) continue;
          if (e.clientWidth > 0 && e.scrollWidth > e.clientWidth + 1)
            clipped.push(`${e.tagName.toLowerCase()}#${e.id}.${e.className}: ${own.slice(0, 60)} (${e.scrollWidth} > ${e.clientWidth})`);
        }
      }
      return clipped;
    },
    [regions, skip],
  );
}
