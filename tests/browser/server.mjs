// What the three browser suites share: building the site into a temporary folder, serving it
// with scripts/serve.mjs on a free port, and launching Debian's Chromium (TOOLCHAIN.md flags).
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/**
 * Serves `siteDir` (as built, no rebuild), with extra response `headers` (e.g. a
 * Content-Security-Policy) if given; resolves `{ child, url }` once the server prints its URL.
 */
export async function startServer(siteDir, headers) {
  const env = { ...process.env, PORT: '0' };
  if (headers) env.SERVE_HEADERS = JSON.stringify(headers);
  const child = spawn(process.execPath, [join(root, 'scripts', 'serve.mjs'), siteDir, '--no-build'], {
    env, stdio: ['ignore', 'pipe', 'pipe'],
  });
  const url = await new Promise((resolveUrl, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`server did not start: ${out}`)), 10000);
    child.stdout.on('data', (d) => {
      out += d;
      const m = /(http:\/\/127\.0\.0\.1:\d+\/)/.exec(out);
      if (m) { clearTimeout(timer); resolveUrl(m[1]); }
    });
    child.stderr.on('data', (d) => { out += d; });
    child.on('exit', (code) => reject(new Error(`server exited (${code}): ${out}`)));
  });
  return { child, url };
}

/**
 * Builds the static site (the page + the package in `lib`, or dist/) into a fresh temporary
 * folder and returns it; on failure prints why and exits, naming the suite.
 */
export function buildSite(suite, lib) {
  const siteDir = mkdtempSync(join(tmpdir(), `attention-site-${suite}-`));
  const args = [join(root, 'scripts', 'build-site.mjs'), '--out', siteDir, ...(lib ? ['--lib', lib] : [])];
  const build = spawnSync(process.execPath, args, { encoding: 'utf8' });
  if (build.status !== 0) {
    console.error(build.stderr || build.stdout);
    console.error(`${suite} browser tests: could not build the site (run \`npm run build\` first)`);
    process.exit(1);
  }
  return siteDir;
}

const CHROMIUM = {
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  headless: true,
  // Without the networking flags Chromium floods the closed network (TOOLCHAIN.md).
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync'],
};

/** Chromium with a fresh profile folder: `{ context, userDataDir }` (remove the folder after). */
export async function launchContext(suite, options = {}) {
  const userDataDir = mkdtempSync(join(tmpdir(), `attention-chromium-${suite}-`));
  const context = await chromium.launchPersistentContext(userDataDir, { ...CHROMIUM, ...options });
  return { context, userDataDir };
}

/** Chromium without a persistent profile, for suites that open a context per test. */
export function launchBrowser() {
  return chromium.launch(CHROMIUM);
}
