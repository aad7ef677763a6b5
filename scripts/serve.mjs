#!/usr/bin/env node
// A tiny static server for the explorer, on 127.0.0.1 only.
//   node scripts/serve.mjs [DIR] [--build | --no-build]   the built site
//   node scripts/serve.mjs --dev                          the page from its sources
// DIR defaults to site/, which is rebuilt first (scripts/build-site.mjs) unless --no-build;
// with an explicit DIR, --build rebuilds it.
// --dev (`npm run dev`) builds nothing: it serves web/page/ as the site root, the package's
// sources from web/lib/ under lib/ (the compiled attention*.js/.wasm, which exist only in dist/,
// come from there), KaTeX and @noble/hashes from node_modules, so an edit to web/ needs only a
// refresh. Its HTML gets the page's import map inline (scripts/importmap.mjs).
// The port is $PORT, or the first free one from 8080. Prints the URL when ready.
import { createServer } from 'node:http';
import { createReadStream, existsSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, extname, join, normalize, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnSync } from 'node:child_process';
import { withImportMap } from './importmap.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const positional = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const dev = process.argv.includes('--dev');
const dir = resolve(positional[0] ?? join(root, 'site'));

function fail(message) {
  console.error(`serve: ${message}`);
  process.exit(1);
}

/** URL path prefix -> folders to look in, first match wins. */
let routes;
if (dev) {
  const dist = join(root, 'dist');
  if (!existsSync(join(dist, 'attention.js')) || !existsSync(join(dist, 'attention.wasm'))) {
    fail('--dev needs the compiled module in dist/ (attention.js and attention.wasm): run `npm run build` once');
  }
  const katex = join(dirname(createRequire(join(root, 'package.json')).resolve('katex/package.json')), 'dist');
  const noble = dirname(createRequire(join(root, 'package.json')).resolve('@noble/hashes'));
  routes = [
    ['/lib/', [join(root, 'web', 'lib'), dist]],
    ['/vendor/katex/', [katex]],
    ['/vendor/noble-hashes/', [noble]],
    ['/', [join(root, 'web', 'page')]],
  ];
} else {
  const build = positional[0] ? process.argv.includes('--build') : !process.argv.includes('--no-build');
  if (build) {
    const r = spawnSync(process.execPath, [join(root, 'scripts', 'build-site.mjs'), '--out', dir], { stdio: 'inherit' });
    if (r.status !== 0) process.exit(r.status ?? 1);
  }
  if (!existsSync(join(dir, 'index.html'))) fail(`${dir} has no index.html`);
  routes = [['/', [dir]]];
}

const FORBIDDEN = Symbol('outside the served folders');

/** The file a URL path names, null if there is none, or FORBIDDEN for a path out of its folder. */
function fileFor(path) {
  const [prefix, folders] = routes.find(([p]) => path.startsWith(p)) ?? [];
  if (!prefix) return null;
  for (const folder of folders) {
    let file = normalize(join(folder, path.slice(prefix.length)));
    if (file !== folder && !file.startsWith(folder + sep)) return FORBIDDEN;
    if (existsSync(file) && statSync(file).isDirectory()) file = join(file, 'index.html');
    if (existsSync(file) && statSync(file).isFile()) return file;
  }
  return null;
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
  const body = dev && type === '.html' ? Buffer.from(withImportMap(readFileSync(file, 'utf8'))) : null;
  const headers = {
    'Content-Type': TYPES[type] ?? 'application/octet-stream',
    'Content-Length': body ? body.length : statSync(file).size,
    'Cache-Control': 'no-cache',
    'X-Content-Type-Options': 'nosniff',
    ...extraHeaders,
  };
  res.writeHead(200, headers);
  if (req.method === 'HEAD') res.end();
  else if (body) res.end(body);
  else createReadStream(file).pipe(res);
});

function listen(port, tries) {
  server.once('error', (err) => {
    if (err.code === 'EADDRINUSE' && !process.env.PORT && tries > 0) listen(port + 1, tries - 1);
    else fail(`cannot listen on 127.0.0.1:${port}: ${err.message}`);
  });
  server.listen(port, '127.0.0.1', () => {
    console.log(`Attention explorer: http://127.0.0.1:${server.address().port}/`);
    console.log(dev
      ? '(dev: web/page and web/lib as they are, the compiled module from dist/; edit, then refresh; Ctrl+C stops)'
      : `(serving ${dir}; Ctrl+C stops)`);
  });
}

listen(process.env.PORT ? Number(process.env.PORT) : 8080, 100);
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => server.close(() => process.exit(0)));
