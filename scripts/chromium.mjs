// What the browser tests and the page benchmarks share: where Chromium is, and the site served by
// scripts/serve.mjs on a free port.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

/**
 * Headless Chromium's flags here. Without the networking ones Chromium keeps trying to reach
 * Google's services, flooding a machine without internet access with failing requests.
 */
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** $CHROMIUM, else the first chromium on PATH (Debian's package installs /usr/bin/chromium). */
export function chromiumPath() {
  if (process.env.CHROMIUM) return process.env.CHROMIUM;
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    for (const name of ['chromium', 'chromium-browser']) {
      if (dir && existsSync(join(dir, name))) return join(dir, name);
    }
  }
  throw new Error("Chromium not found: install Debian's chromium or set CHROMIUM to its path");
}

/**
 * Serves `siteDir` (as built, no rebuild), with extra response `headers` (e.g. a
 * Content-Security-Policy) if given; resolves `{ child, url }` once the server prints its URL.
 */
export async function startServer(siteDir, headers) {
  const env = { ...process.env, PORT: '0' };
  if (headers) env.SERVE_HEADERS = JSON.stringify(headers);
  const child = spawn(process.execPath, [join(here, 'serve.mjs'), siteDir, '--no-build'], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const url = await new Promise((resolveUrl, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`server did not start: ${out}`)), 10000);
    child.stdout.on('data', (d) => {
      out += d;
      const m = /(http:\/\/127\.0\.0\.1:\d+\/)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolveUrl(m[1]);
      }
    });
    child.stderr.on('data', (d) => {
      out += d;
    });
    child.on('exit', (code) => reject(new Error(`server exited (${code}): ${out}`)));
  });
  return { child, url };
}
