#!/usr/bin/env node
// A tiny static server for the built site (`npm start`, the browser tests), on 127.0.0.1 only.
//   node scripts/serve.mjs [DIR] [--build | --no-build]
// DIR defaults to site/, which is rebuilt first (scripts/build-site.mjs) unless --no-build;
// with an explicit DIR, --build rebuilds it. (`npm run dev`, the page from its sources, is vite's
// dev server: vite.config.js.)
// The port is $PORT, or the first free one from 8080. Prints the URL when ready.
import { createServer } from 'node:http';
import { createReadStream, existsSync, statSync } from 'node:fs';
import { dirname, extname, join, normalize, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnSync } from 'node:child_process';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const positional = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const dir = resolve(positional[0] ?? join(root, 'site'));

function fail(message) {
  console.error(`serve: ${message}`);
  process.exit(1);
}

const build = positional[0] ? process.argv.includes('--build') : !process.argv.includes('--no-build');
if (build) {
  const r = spawnSync(process.execPath, [join(root, 'scripts', 'build-site.mjs'), '--out', dir], { stdio: 'inherit' });
  if (r.status !== 0) process.exit(r.status ?? 1);
}
if (!existsSync(join(dir, 'index.html'))) fail(`${dir} has no index.html`);
const FORBIDDEN = Symbol('outside the served folder');

/** The file a URL path names, null if there is none, or FORBIDDEN for a path out of the folder. */
function fileFor(path) {
  let file = normalize(join(dir, path));
  if (file !== dir && !file.startsWith(dir + sep)) return FORBIDDEN;
  if (existsSync(file) && statSync(file).isDirectory()) file = join(file, 'index.html');
  return existsSync(file) && statSync(file).isFile() ? file : null;
}

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.wasm': 'application/wasm',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.woff': 'font/woff',
  '.ttf': 'font/ttf',
  '.md': 'text/markdown; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.ts': 'text/plain; charset=utf-8',
};

// Extra response headers, e.g. a Content-Security-Policy for tests: SERVE_HEADERS='{"k":"v"}'.
let extraHeaders = {};
try {
  extraHeaders = process.env.SERVE_HEADERS ? JSON.parse(process.env.SERVE_HEADERS) : {};
} catch {
  console.error('serve: SERVE_HEADERS is not JSON; ignored');
}

const server = createServer((req, res) => {
  let path;
  try {
    path = decodeURIComponent(new URL(req.url, 'http://localhost').pathname);
  } catch {
    res.writeHead(400).end('bad request');
    return;
  }
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.writeHead(405, { Allow: 'GET, HEAD' }).end();
    return;
  }
  const file = fileFor(path);
  if (file === FORBIDDEN) {
    res.writeHead(403).end('forbidden');
    return;
  }
  if (!file) {
    res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' }).end(`not found: ${path}\n`);
    return;
  }
  const type = extname(file).toLowerCase();
  const headers = {
    'Content-Type': TYPES[type] ?? 'application/octet-stream',
    'Content-Length': statSync(file).size,
    'Cache-Control': 'no-cache',
    'X-Content-Type-Options': 'nosniff',
    ...extraHeaders,
  };
  res.writeHead(200, headers);
  if (req.method === 'HEAD') res.end();
  else createReadStream(file).pipe(res);
});

function listen(port, tries) {
  server.once('error', (err) => {
    if (err.code === 'EADDRINUSE' && !process.env.PORT && tries > 0) listen(port + 1, tries - 1);
    else fail(`cannot listen on 127.0.0.1:${port}: ${err.message}`);
  });
  server.listen(port, '127.0.0.1', () => {
    console.log(`Attention explorer: http://127.0.0.1:${server.address().port}/`);
    console.log(`(serving ${dir}; Ctrl+C stops)`);
  });
}

listen(process.env.PORT ? Number(process.env.PORT) : 8080, 100);
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => server.close(() => process.exit(0)));
