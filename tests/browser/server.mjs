// Starts scripts/serve.mjs on a free port for a browser test and resolves with its URL.
import { spawn } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

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
