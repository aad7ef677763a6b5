// `npm run dev`: vite's dev server on the page's sources, nothing built. web/page/ is the site's
// root; under lib/ the page finds the package as the built site has it (web/lib's sources, and the
// compiled attention*.js/.wasm, which exist only in dist/); vendor/katex/ is KaTeX from
// node_modules. The page imports the package by its public names, which web/page/importmap.json
// maps to lib/ (build-site.mjs applies the same map to the site); @noble/hashes vite resolves
// itself. An edit to web/ shows after a refresh (vite reloads an open page by itself).
// The port is $PORT, or the first free one from 8080; 127.0.0.1 only.
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const repo = dirname(fileURLToPath(import.meta.url));
const page = join(repo, 'web', 'page');
// No such folder: the ids of the package's modules live here, so vite serves them at /lib/…
const lib = join(page, 'lib');
const dist = join(repo, 'dist');
const katex = join(dirname(createRequire(join(repo, 'package.json')).resolve('katex/package.json')), 'dist');
const pageImports = JSON.parse(readFileSync(join(page, 'importmap.json'), 'utf8')).imports;

/** The file behind a module id under lib/: web/lib's source, else dist/'s (the compiled glue). */
function libFile(id) {
  const name = id.slice(lib.length + 1);
  return [join(repo, 'web', 'lib', name), join(dist, name)].find((f) => existsSync(f));
}

const inside = (dir, path) => path.startsWith(dir + sep);

/** Serves the package's modules under lib/ (ids there, read from web/lib or dist) and the non-module files beside them. */
const packageUnderLib = {
  name: 'attention-explorer:lib',
  enforce: 'pre',
  resolveId(source, importer, options) {
    let path = null;
    const mapped = pageImports[source];
    if (mapped?.startsWith('./lib/')) path = join(page, mapped);
    else if (source.startsWith('/lib/')) path = join(page, source);
    else if (source.startsWith('.') && importer && inside(lib, importer)) path = resolve(dirname(importer), source);
    if (!path || !inside(lib, path) || !libFile(path)) return null;
    // vite's scan for dependencies to pre-bundle reads files itself; the package has none.
    return options?.scan ? { id: path, external: true } : path;
  },
  load(id) {
    if (!inside(lib, id)) return null;
    const file = libFile(id);
    // So that an edit to the file invalidates the module.
    this.addWatchFile(file);
    return readFileSync(file, 'utf8');
  },
  configureServer(server) {
    // The .wasm files and KaTeX's (a classic script, its stylesheet and fonts, which math.js loads
    // by URL): the same URLs as in the site, handed to vite's own file serving (/@fs/).
    server.middlewares.use((req, res, next) => {
      const [path, query] = req.url.split(/(?=\?)/);
      if (/^\/lib\/attention[\w-]*\.wasm$/.test(path)) req.url = `/@fs${join(dist, path.slice('/lib/'.length))}${query ?? ''}`;
      else if (path.startsWith('/vendor/katex/')) req.url = `/@fs${join(katex, path.slice('/vendor/katex/'.length))}${query ?? ''}`;
      next();
    });
    // The URL as `npm start` prints it, which the tests read.
    const printUrls = server.printUrls.bind(server);
    server.printUrls = () => {
      printUrls();
      console.log(`Attention explorer: ${server.resolvedUrls.local[0]}`);
      console.log('(dev: web/page and web/lib as they are, the compiled module from dist/; an edit reloads the page; Ctrl+C stops)');
    };
  },
};

/** embedding.js imports KaTeX's ES module from the site (./vendor/katex/katex.mjs): node_modules' here. */
const katexUnderVendor = {
  name: 'attention-explorer:katex',
  enforce: 'pre',
  resolveId(source, importer) {
    if (!source.startsWith('.') || !importer || !inside(page, importer)) return null;
    const path = resolve(dirname(importer), source);
    return inside(join(page, 'vendor', 'katex'), path) ? join(katex, path.slice(join(page, 'vendor', 'katex').length)) : null;
  },
};

if (!existsSync(join(dist, 'attention.js')) || !existsSync(join(dist, 'attention.wasm'))) {
  throw new Error('npm run dev needs the compiled module in dist/ (attention.js and attention.wasm): run `npm run build` once');
}

export default defineConfig({
  root: page,
  publicDir: false,
  // Several pages, and a 404 for a file that is not there (not index.html).
  appType: 'mpa',
  clearScreen: false,
  plugins: [packageUnderLib, katexUnderVendor],
  server: {
    host: '127.0.0.1',
    port: process.env.PORT ? Number(process.env.PORT) : 8080,
    // $PORT is taken as asked; without it, the next free port after 8080.
    strictPort: Boolean(process.env.PORT),
    // KaTeX's real folder too (node_modules may be a link to another checkout's).
    fs: { allow: [repo, katex] },
  },
});
