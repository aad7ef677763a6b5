#!/usr/bin/env node
// Assembles the static explorer site in site/ (or --out DIR):
//   site/            the page (web/page/*), and main.bundle.js: main.js and the modules it imports
//                    as one, which index.html loads (see "The explorer page's first screen" below);
//                    index.html holds the default example's first screen, prerendered in headless
//                    Chromium when it is installed ("prerendered" below)
//   site/lib/        the built package (dist/, or --lib DIR): attention.js + .wasm + JS API
//   site/vendor/katex/  KaTeX's stylesheet, script, ES module and fonts, so the page needs no network
//   site/vendor/noble-hashes/  the modules of @noble/hashes the page imports (the student view's
//                      answer hashes), and the modules they import
// The page's modules import the package by its public names (`attention-explorer`, ...), which
// the page's import map (web/page/importmap.json) maps to the site's files; `npm run dev` (vite)
// resolves them with the same map. A strict Content-Security-Policy (script-src 'self', as
// learning platforms use) blocks inline import maps, so the site applies the map here instead:
// those names become relative paths in the copied modules, and no HTML holds a map.
// The result is plain static files: any web server (or scripts/serve.mjs) can serve it.
// The site is built in a folder beside the target and moved into place only once it is whole and
// checked: a server serving the target never hands out a half-built page (a first-screen.js whose
// placeholders are not filled in yet, say). The check: no placeholder (`__LAYOUT_RULES__`: two
// underscores, capitals, two underscores) of the page's sources is left in any file written.
// --page DIR builds another copy of web/page (the tests use it).
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, posix, relative, resolve, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createRequire } from 'node:module';
import { CHROMIUM_ARGS, chromiumPath, startServer } from './chromium.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

function arg(name, fallback) {
  const i = process.argv.indexOf(name);
  return i > 0 && process.argv[i + 1] ? resolve(process.argv[i + 1]) : fallback;
}

const destination = arg('--out', join(root, 'site'));
const lib = arg('--lib', join(root, 'dist'));
const page = arg('--page', join(root, 'web', 'page'));
// Built here, beside the target, then moved into place (see the top).
const out = `${destination}.building-${process.pid}`;
let moved = false;
process.on('exit', () => {
  if (!moved) rmSync(out, { recursive: true, force: true });
});

function fail(message) {
  console.error(`build-site: ${message}`);
  process.exit(1);
}

// ---- placeholders: what build-site writes into the page's files ---------------------------------
// Every `__NAME__` in the page's sources must be one build-site fills in (PLACEHOLDERS: name ->
// the file it is in), and none may be left in any file the site holds (checkPlaceholders, last).
const PLACEHOLDERS = { __LAYOUT_RULES__: 'first-screen.js', __PAGE_START__: 'first-screen.js' };
const PLACEHOLDER = /__[A-Z][A-Z0-9_]*__/g;
const TEXT_FILE = /\.(html|js|mjs|css|json|map|svg|txt)$/;

/** Fails unless every placeholder of the page's sources is one build-site fills in, in its own file. */
function checkPageSources() {
  for (const name of readdirSync(page, { recursive: true }).filter((f) => TEXT_FILE.test(f))) {
    const found = new Set(readFileSync(join(page, name), 'utf8').match(PLACEHOLDER) ?? []);
    for (const token of found) {
      if (PLACEHOLDERS[token] !== name.split(sep).join(posix.sep)) {
        fail(
          `web/page/${name} holds the placeholder ${token}, which build-site does not fill in there ` +
            `(it fills in ${Object.entries(PLACEHOLDERS)
              .map(([t, f]) => `${t} in ${f}`)
              .join(', ')})`,
        );
      }
    }
  }
}

/** Writes `value` for every `token` in the site's `file` (each placeholder's one file); fails if there is none. */
function fillPlaceholder(file, token, value) {
  const path = join(out, file);
  const source = readFileSync(path, 'utf8');
  if (!source.includes(token)) fail(`web/page/${file} has no ${token} for build-site to fill in`);
  writeFileSync(
    path,
    source.replaceAll(token, () => value),
  );
}

/** Fails if any file of the site still holds a placeholder of the page's, naming the files and the placeholders. */
function checkPlaceholders() {
  const tokens = new Set(Object.keys(PLACEHOLDERS));
  const left = [];
  for (const name of readdirSync(out, { recursive: true })) {
    const file = join(out, name);
    if (!TEXT_FILE.test(name) || !statSync(file).isFile()) continue;
    const found = [...new Set(readFileSync(file, 'utf8').match(PLACEHOLDER) ?? [])].filter((t) => tokens.has(t));
    if (found.length) left.push(`${name.split(sep).join(posix.sep)} (${found.join(', ')})`);
  }
  if (left.length) fail(`placeholders left unfilled in what build-site wrote: ${left.join('; ')}`);
}

if (!existsSync(join(lib, 'index.js')) || !existsSync(join(lib, 'attention.wasm'))) {
  fail(`no built package in ${lib} (index.js and attention.wasm): run \`npm run build\` first`);
}

let katexDist;
try {
  const require = createRequire(join(root, 'package.json'));
  katexDist = join(dirname(require.resolve('katex/package.json')), 'dist');
} catch {
  fail('KaTeX is not installed: run `npm install` (it is a dependency in package.json)');
}

let nobleDist;
try {
  const require = createRequire(join(root, 'package.json'));
  nobleDist = dirname(require.resolve('@noble/hashes'));
} catch {
  fail('@noble/hashes is not installed: run `npm install` (it is a dependency in package.json)');
}

let vite;
try {
  vite = await import('vite');
} catch {
  fail('vite is not installed: run `npm install` (it is a devDependency in package.json)');
}

/**
 * The modules that `source` (the file `name`) imports by a string: `{ value, start, end }`, the
 * string's place in the source, quotes included; static imports and re-exports, and import('...')
 * unless `dynamic` is false. From vite's parser (Oxc).
 */
function moduleRequests(source, name, { dynamic = true } = {}) {
  const { module, errors } = vite.parseSync(name, source);
  if (errors.length) fail(`${name} does not parse: ${errors[0].message}`);
  const requests = new Map();
  const add = (r) => requests.set(r.start, r);
  for (const i of module.staticImports) add(i.moduleRequest);
  for (const e of module.staticExports) for (const entry of e.entries) if (entry.moduleRequest) add(entry.moduleRequest);
  if (dynamic) {
    for (const {
      moduleRequest: { start, end },
    } of module.dynamicImports) {
      const literal = /^(['"])([^'"]*)\1$/.exec(source.slice(start, end));
      if (literal) add({ value: literal[2], start, end });
    }
  }
  return [...requests.values()];
}

checkPageSources();
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });

// The page: every file of web/page (html, css, ES modules), but its import map.
const importMap = join(page, 'importmap.json');
cpSync(page, out, { recursive: true, filter: (from) => from !== importMap });

// The import map, applied.
const pageImports = JSON.parse(readFileSync(importMap, 'utf8')).imports;
const imports = new Map(Object.entries(pageImports).map(([specifier, target]) => [specifier, resolve(out, target)]));
for (const name of readdirSync(out, { recursive: true }).filter((f) => f.endsWith('.js'))) {
  const file = join(out, name);
  let source = readFileSync(file, 'utf8');
  const named = moduleRequests(source, name).filter((r) => !/^(\.{0,2}\/|[a-z]+:)/.test(r.value));
  // From the end, so that the places of those before stay right.
  for (const { value, start, end } of named.sort((a, b) => b.start - a.start)) {
    const target = imports.get(value);
    if (!target) fail(`web/page/${name} imports '${value}', which web/page/importmap.json does not name`);
    const path = relative(dirname(file), target).split(sep).join(posix.sep);
    source = `${source.slice(0, start + 1)}${path.startsWith('.') ? path : `./${path}`}${source.slice(end - 1)}`;
  }
  if (named.length) writeFileSync(file, source);
}

// The package, as a user's page would load it.
mkdirSync(join(out, 'lib'), { recursive: true });
for (const name of readdirSync(lib)) {
  const from = join(lib, name);
  if (statSync(from).isFile() && /\.(js|mjs|wasm|d\.ts|map)$/.test(name)) cpSync(from, join(out, 'lib', name));
}
// The message catalogues (web/lib/i18n.js loads the learner's language from lib/locales/).
if (existsSync(join(lib, 'locales'))) cpSync(join(lib, 'locales'), join(out, 'lib', 'locales'), { recursive: true });

// The explorer page's first screen as one module (main.bundle.js, made by vite's build from main.js
// and every module it imports statically, the package's included): one request instead of ~50,
// which a server speaking HTTP/1.1 answers six at a time. The modules stay in the site as they are
// (the bundle's source map points at them; embedding.html and the package's users load them). What
// the page imports later (import('...'): the walkthroughs' glue, the student view's hashes) stays a
// separate file, and `new URL('./x', import.meta.url)` is rewritten to name the same file from the
// bundle's folder (the package's .wasm files are in lib/) and marked for vite to leave alone (the
// site has these files; vite would copy them into assets/ under other names).
// Minified (Oxc, vite's minifier): half the bytes to fetch and for V8 to parse before the page can
// start (BENCHMARKS.md, twelfth session); the source map leads back to the modules.
const BUNDLED = { html: 'index.html', entry: 'main.js', bundle: 'main.bundle.js' };
const URL_OF_FILE = /new URL\((['"])([^'"]+)\1,\s*import\.meta\.url\)/g;
const JSON_IMPORT = /\bimport\((['"])(\.{1,2}\/[^'"]+\.json)\1/g;
const sitePaths = {
  name: 'site-paths',
  enforce: 'pre',
  resolveDynamicImport(specifier, importer) {
    if (typeof specifier !== 'string') fail(`${relative(out, importer)} imports a computed module name, which the bundle cannot keep`);
    return { id: resolve(dirname(importer), specifier), external: 'relative' };
  },
  transform(code, id) {
    if (!id.startsWith(out)) return null;
    const fromBundle = (specifier) => {
      const path = relative(out, resolve(dirname(id), specifier))
        .split(sep)
        .join(posix.sep);
      return path.startsWith('.') ? path : `./${path}`;
    };
    const rewritten = code
      .replace(
        URL_OF_FILE,
        (all, quote, specifier) => `new URL(/* @vite-ignore */ ${quote}${fromBundle(specifier)}${quote}, import.meta.url)`,
      )
      // A catalogue imported later (i18n.js: import('./locales/fr.json', { with: { type: 'json' } })):
      // vite leaves a JSON module's specifier as written, so it is made to name the file from the bundle's folder.
      .replace(JSON_IMPORT, (all, quote, specifier) => `import(${quote}${fromBundle(specifier)}${quote}`);
    // Emscripten's glue keeps its own URL for locateFile(), which the package never calls (it
    // hands the glue the compiled module); any other import.meta would now name the bundle.
    const left = rewritten
      .replace(/new URL\(\/\* @vite-ignore \*\/ (['"])[^'"]+\1, import\.meta\.url\)/g, '')
      .replace(/\b_scriptDir = import\.meta\.url;/, '');
    if (/import\.meta(?!\.url\))/.test(left)) {
      fail(`${relative(out, id)} uses import.meta in a way the bundle cannot keep pointing at the same files`);
    }
    return { code: rewritten, map: null };
  },
};
{
  const quiet = vite.createLogger('error');
  await vite.build({
    configFile: false,
    // Not the site's folder, which is also where the bundle goes (vite warns of overwriting sources).
    root,
    publicDir: false,
    logLevel: 'warn',
    // vite's own warnings (an asset it cannot find, say) are faults too.
    customLogger: { ...quiet, warn: (message) => fail(`vite build: ${message}`), warnOnce: (message) => fail(`vite build: ${message}`) },
    plugins: [sitePaths],
    build: {
      outDir: out,
      emptyOutDir: false,
      // The code as written (the page targets browsers with WebAssembly SIMD): nothing to lower.
      target: 'esnext',
      sourcemap: true,
      reportCompressedSize: false,
      // A library build: one entry, one file, no preload helper around import() (what the bundle
      // imports later preloads nothing).
      lib: { entry: join(out, BUNDLED.entry), formats: ['es'], fileName: () => BUNDLED.bundle },
      rolldownOptions: {
        // vite keeps a library's whitespace and annotations (for its users' tree-shaking); this is
        // a page's script. Licence comments stay, as terser kept them.
        output: { minify: true, comments: { legal: true, annotation: false, jsdoc: false } },
        onwarn(w) {
          // Import cycles are kept in the order the browser would run them; anything else is a fault.
          if (w.code !== 'CIRCULAR_DEPENDENCY') fail(`vite build: ${w.message}`);
        },
      },
    },
  });
  const htmlFile = join(out, BUNDLED.html);
  const html = readFileSync(htmlFile, 'utf8');
  const tag = `<script type="module" src="${BUNDLED.entry}"></script>`;
  if (!html.includes(tag)) fail(`${BUNDLED.html} has no ${tag}`);
  writeFileSync(htmlFile, html.replace(tag, `<script type="module" src="${BUNDLED.bundle}"></script>`));
}

// Each page's static module graph, preloaded from its HTML (<link rel="modulepreload">): without
// it the browser finds the modules one level of imports at a time (main.js, then update.js, then
// steps.js, ...), a round trip per level before the engine can even start loading.
function staticGraph(entry) {
  const seen = new Set();
  const walk = (file) => {
    if (seen.has(file) || !existsSync(file)) return;
    seen.add(file);
    for (const { value } of moduleRequests(readFileSync(file, 'utf8'), file, { dynamic: false })) {
      // Modules of JS only: a JSON module (a message catalogue) is not preloaded as a script.
      if (/^\.{1,2}\/.*\.m?js$/.test(value)) walk(resolve(dirname(file), value));
    }
  };
  walk(entry);
  seen.delete(entry);
  return [...seen];
}
for (const name of readdirSync(out).filter((f) => f.endsWith('.html'))) {
  const html = readFileSync(join(out, name), 'utf8');
  const withPreloads = html.replace(/^(\s*)<script type="module" src="([^"]+)"><\/script>$/m, (tag, indent, src) => {
    const links = staticGraph(join(out, src)).map(
      (file) => `${indent}<link rel="modulepreload" href="${relative(out, file).split(sep).join(posix.sep)}">`,
    );
    return [tag, ...links].join('\n');
  });
  if (withPreloads !== html) writeFileSync(join(out, name), withPreloads);
}

// KaTeX, vendored.
const vendor = join(out, 'vendor', 'katex');
mkdirSync(vendor, { recursive: true });
// katex.min.js is what the page loads (after its first paint); katex.mjs is for embedding.html.
for (const name of ['katex.min.css', 'katex.min.js', 'katex.mjs']) cpSync(join(katexDist, name), join(vendor, name));
mkdirSync(join(vendor, 'fonts'), { recursive: true });
for (const name of readdirSync(join(katexDist, 'fonts'))) {
  // woff2 is enough for every browser that runs WebAssembly.
  if (name.endsWith('.woff2')) cpSync(join(katexDist, 'fonts', name), join(vendor, 'fonts', name));
}

// @noble/hashes, vendored: the modules the import map names and, following their relative imports
// (`from "./x.js"`), the ones they need.
const noble = join(out, 'vendor', 'noble-hashes');
mkdirSync(noble, { recursive: true });
cpSync(join(nobleDist, 'LICENSE'), join(noble, 'LICENSE')); // MIT: its notice goes with it
const nobleWanted = Object.values(pageImports)
  .filter((t) => t.startsWith('./vendor/noble-hashes/'))
  .map((t) => posix.basename(t));
for (const seen = new Set(); nobleWanted.length;) {
  const name = nobleWanted.pop();
  if (seen.has(name)) continue;
  seen.add(name);
  const source = readFileSync(join(nobleDist, name), 'utf8');
  writeFileSync(join(noble, name), source);
  for (const m of source.matchAll(/\bfrom\s*["']\.\/([\w.-]+\.js)["']/g)) nobleWanted.push(m[1]);
}

// The explorer's first screen, prerendered: the default example as the page first draws it (numbers,
// formulas still their TeX source) at 1440 × 900, by the same engine in headless Chromium, written
// into index.html's #app, so a reader sees real numbers at the first paint; the page's own markup
// goes beside it in <template id="app-pristine">. first-screen.js (a classic script in <head> and
// again right after them) keeps the snapshot only where the live page shows the same example (no
// link, no query, not in a frame), folds its problem panel where the live page starts with it folded,
// and main.js swaps the pristine markup back in when the engine is ready. Without Chromium the
// page is written as it is (it works the same). The fold's rules live in web/page/layout.js, which
// setup-fold.js imports; first-screen.js is a classic script (it must run before the first paint,
// and cannot import), so layout.js's values and functions are written into it here.
const FIRST_SCREEN = { script: 'first-screen.js', template: 'app-pristine', viewport: { width: 1440, height: 900 } };
{
  const { PHONE, PANEL_KEY, startsFolded, showSetup } = await import(pathToFileURL(join(page, 'layout.js')).href);
  const rules =
    `{ phone: ${JSON.stringify(PHONE)}, panelKey: ${JSON.stringify(PANEL_KEY)}, ` +
    `startsFolded: ${startsFolded}, showSetup: ${showSetup} }`;
  fillPlaceholder(FIRST_SCREEN.script, '__LAYOUT_RULES__', rules);
}

/** The first screen as the page paints it, from Chromium: { html, steps, canvases }, or null without Chromium. */
async function firstScreen(siteDir) {
  let chromium;
  let executablePath;
  try {
    ({ chromium } = await import('playwright-core'));
    executablePath = chromiumPath();
    if (!existsSync(executablePath)) throw new Error(`Chromium not found at ${executablePath}`);
  } catch (err) {
    console.log(
      `build-site: no prerendered first screen (${err.message.split('\n')[0]}); index.html is written without it and works the same`,
    );
    return null;
  }
  let browser;
  try {
    browser = await chromium.launch({ headless: true, executablePath, args: CHROMIUM_ARGS });
  } catch (err) {
    console.log(
      `build-site: no prerendered first screen (Chromium did not start: ${err.message.split('\n')[0]}); index.html is written without it and works the same`,
    );
    return null;
  }
  const server = await startServer(siteDir);
  try {
    const context = await browser.newContext({ viewport: FIRST_SCREEN.viewport });
    const tab = await context.newPage();
    const problems = [];
    tab.on('pageerror', (e) => problems.push(e.message));
    tab.on('console', (m) => {
      if (m.type() === 'error') problems.push(m.text());
    });
    // Taken in the task that marks the first steps painted (main.js's drawn()): exactly what that
    // frame showed, before KaTeX is even fetched and before anything drawn after it.
    await tab.addInitScript(() => {
      const mark = performance.mark.bind(performance);
      performance.mark = (name, ...rest) => {
        const entry = mark(name, ...rest);
        if (name === 'ae:first-steps-painted' && !window.__aeFirstScreen) window.__aeFirstScreen = take();
        return entry;
      };
      function take() {
        const app = document.getElementById('app');
        // What the page set as properties goes into attributes, which is what the HTML keeps.
        for (const el of app.querySelectorAll('input, textarea, select')) {
          if (el.matches('textarea')) el.textContent = el.value;
          else if (el.matches('select')) for (const o of el.options) o.toggleAttribute('selected', o.selected);
          else if (el.type === 'checkbox' || el.type === 'radio') el.toggleAttribute('checked', el.checked);
          else if (el.type !== 'file') el.setAttribute('value', el.value);
        }
        const copy = app.cloneNode(true);
        // Signatures say "these cards are drawn already": the page redraws from its own markup anyway.
        for (const el of copy.querySelectorAll('[data-sig]')) el.removeAttribute('data-sig');
        for (const el of copy.querySelectorAll('[data-signature]')) el.removeAttribute('data-signature');
        // A canvas's pixels are not in its HTML (the default example has none: its maps are tables).
        // When it is painted is when the first steps are on screen (first-screen.js, Element Timing).
        copy.querySelector('#step-list article.step td')?.setAttribute('elementtiming', 'ae:first-steps');
        const canvases = copy.querySelectorAll('canvas');
        for (const el of canvases) el.remove();
        return {
          html: copy.innerHTML.trim(),
          steps: copy.querySelectorAll('#step-list article.step').length,
          canvases: canvases.length,
          typeset: copy.querySelectorAll('.katex').length,
          busy: app.getAttribute('aria-busy'),
        };
      }
    });
    await tab.goto(server.url);
    const shot = await (await tab.waitForFunction(() => window.__aeFirstScreen, null, { timeout: 120000 })).jsonValue();
    await context.close();
    if (problems.length) fail(`the page reported, while its first screen was prerendered: ${problems.join(' | ')}`);
    if (!shot.steps) fail('the prerendered first screen has no step cards');
    if (shot.typeset) fail('the prerendered first screen has typeset formulas: the live page paints their TeX source first');
    return shot;
  } finally {
    await browser.close();
    server.child.kill();
  }
}

// With the snapshot, first-screen.js also starts the live page: the page's module and the engine's
// preload move from <head> into it (its `start`), so that they load after the snapshot's first
// frame rather than competing with it. Each becomes [tag, { attribute: value }].
const PAGE_START = /^[ \t]*<(script) (type="module" [^>]*)><\/script>\n|^[ \t]*<(link) (rel="(?:module)?preload" [^>]*)>\n/gm;
function takePageStart(head) {
  const start = [];
  const rest = head.replace(PAGE_START, (all, script, scriptAttrs, link, linkAttrs) => {
    const attrs = {};
    for (const [, name, value] of (scriptAttrs ?? linkAttrs).matchAll(/([\w-]+)="([^"]*)"/g)) attrs[name] = value;
    start.push([script ?? link, attrs]);
    return '';
  });
  if (!start.some(([tag]) => tag === 'script')) fail('index.html has no <script type="module" …> in <head> for first-screen.js to start');
  return { start, rest };
}
function writePageStart(start) {
  fillPlaceholder(FIRST_SCREEN.script, '__PAGE_START__', JSON.stringify(start));
}

{
  const shot = await firstScreen(out);
  if (!shot) writePageStart([]); // index.html does not load it
  if (shot) {
    const htmlFile = join(out, 'index.html');
    const html = readFileSync(htmlFile, 'utf8');
    const open = /<main id="app"([^>]*)>/.exec(html);
    const close = html.indexOf('</main>');
    if (!open || close < open.index || html.indexOf('</main>', close + 1) >= 0) fail('index.html has no single <main id="app">…</main>');
    const attrs = open[1].replace(/\s+(inert|data-snapshot(="[^"]*")?)\b/g, '');
    const pristine = html.slice(open.index + open[0].length, close);
    const head = html.indexOf('</head>');
    if (head < 0 || head > open.index) fail('index.html has no </head> before <main id="app">');
    const { start, rest: headRest } = takePageStart(html.slice(0, head));
    writePageStart(start);
    // The script's two runs (first-screen.js): in <head> it decides, after the template it acts.
    writeFileSync(
      htmlFile,
      headRest +
        `  <script src="${FIRST_SCREEN.script}"></script>\n` +
        html.slice(head, open.index) +
        `<main id="app"${attrs} inert data-snapshot="pending">\n${shot.html}\n  </main>\n` +
        `  <template id="${FIRST_SCREEN.template}">${pristine}</template>\n` +
        `  <script src="${FIRST_SCREEN.script}"></script>` +
        html.slice(close + '</main>'.length),
    );
    console.log(
      `build-site: first screen prerendered into index.html (${shot.steps} step cards, ${(shot.html.length / 1024).toFixed(0)} KB of HTML${shot.canvases ? `, ${shot.canvases} canvases left out` : ''})`,
    );
  }
}

checkPlaceholders();

// Whole and checked: into place.
const count = (dir) => readdirSync(dir, { recursive: true }).filter((f) => statSync(join(dir, f)).isFile()).length;
const files = count(out);
rmSync(destination, { recursive: true, force: true });
renameSync(out, destination);
moved = true;
console.log(`build-site: ${destination} ready (${files} files; package from ${lib})`);
